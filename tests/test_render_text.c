/* SPDX-License-Identifier: MIT
 * nbsim — the overlay's text wrapping (render/text.h: render_text_wrap, the viewer's messages):
 * lines no wider than asked unless one word is, every word kept in order, breaks only at spaces,
 * the line count returned, given line breaks kept, a short buffer cut and terminated. And its
 * tables (render_text_columns, the help panel): cells in columns, a description wrapped under
 * itself stays in its column (not in the key column, which it must not widen either), the size
 * measured holds every glyph drawn. No GL: the widths come from stb_easy_font alone, the glyphs
 * are read back from a draw2d batch that is never flushed. */
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "viewer_keys.h"

/* The wrapped text with its breaks turned back into spaces equals the input; each line fits in
 * max_w or is one word; the count is right. */
static void check_wrap(const char *text, float scale, float max_w) {
    char out[1024];
    const int lines = render_text_wrap(text, scale, max_w, out, sizeof out);
    int breaks = 0;
    char joined[1024];
    strcpy(joined, out);
    for (char *p = joined; *p; ++p) {
        if (*p == '\n') {
            ++breaks;
            *p = text[p - joined] == '\n' ? '\n' : ' '; /* a given break, or a space's */
        }
    }
    ENSURE_MSG(strcmp(joined, text) == 0, "words changed: '%s'", out);
    ENSURE_MSG(lines == breaks + 1, "%d lines for %d breaks", lines, breaks);
    for (char *line = out; line != NULL;) {
        char *nl = strchr(line, '\n');
        char one[1024];
        const size_t len = nl ? (size_t)(nl - line) : strlen(line);
        memcpy(one, line, len);
        one[len] = '\0';
        const int single_word = strchr(one, ' ') == NULL;
        ENSURE_MSG(render_text_width(one, scale) <= max_w || single_word,
                   "line '%s' is %.1f px wide, max %.1f", one, render_text_width(one, scale),
                   max_w);
        line = nl ? nl + 1 : NULL;
    }
}

static void test_fits(void) {
    char out[64];
    ENSURE(render_text_wrap("friction off", 2.0f, 1000.0f, out, sizeof out) == 1);
    ENSURE(strcmp(out, "friction off") == 0);
    ENSURE(render_text_wrap("", 1.0f, 10.0f, out, sizeof out) == 1 && out[0] == '\0');
}

static void test_long_warning(void) {
    const char *w = "warning: dt = 0.5 in lattice is more than 2.5 times the default step "
                    "0.0444288 (resolving a contact in enough steps): contacts may be unstable "
                    "or lose energy wrongly";
    const float full = render_text_width(w, 2.0f);
    for (float frac = 0.15f; frac < 1.2f; frac += 0.05f) {
        check_wrap(w, 2.0f, frac * full);
    }
    char out[512];
    ENSURE(render_text_wrap(w, 2.0f, full, out, sizeof out) == 1); /* exactly its width: fits */
    ENSURE(render_text_wrap(w, 2.0f, 0.5f * full, out, sizeof out) >= 2);
}

static void test_long_word_alone(void) {
    char out[128];
    const float w = render_text_width("abc", 1.0f);
    ENSURE(render_text_wrap("abc supercalifragilistic def", 1.0f, w, out, sizeof out) == 3);
    ENSURE_MSG(strcmp(out, "abc\nsupercalifragilistic\ndef") == 0, "got '%s'", out);
    check_wrap("supercalifragilistic", 1.0f, w);
}

static void test_given_breaks(void) {
    check_wrap("first line here\nsecond line, a little longer than the first", 1.0f,
               render_text_width("second line, a", 1.0f));
    char out[128];
    ENSURE(render_text_wrap("a\nb", 1.0f, 1000.0f, out, sizeof out) == 2);
}

static void test_short_buffer(void) {
    char out[8];
    memset(out, 'x', sizeof out);
    render_text_wrap("a long message that does not fit", 1.0f, 1000.0f, out, sizeof out);
    ENSURE(out[7] == '\0' && strcmp(out, "a long ") == 0);
    ENSURE(render_text_wrap("abc", 1.0f, 10.0f, out, 0) == 0);
}

/* ---- tables ---- */

#define TABLE_LINES 64
#define TABLE_CELLS 8

/* The cells of a table as drawn: per text line, the left edge of each run of glyphs [px] (runs
 * part where the ink leaves a gap wider than a space and a half: cells are two spaces and more
 * apart, words in a cell one), and the ink's right and bottom ends. */
typedef struct {
    int cells[TABLE_LINES];
    float left[TABLE_LINES][TABLE_CELLS];
    float right, bottom;
} drawn_table;

typedef struct {
    float x0, x1;
} ink;

static int by_left(const void *a, const void *b) {
    const float d = ((const ink *)a)->x0 - ((const ink *)b)->x0;
    return d < 0.0f ? -1 : d > 0.0f;
}

static void draw_table(const char *text, float scale, drawn_table *t, float *w, float *h) {
    render_draw2d d;
    memset(&d, 0, sizeof d); /* no GL: the batch only collects */
    memset(t, 0, sizeof *t);
    render_text_columns(&d, 0.0f, 0.0f, scale, (const float[4]){1, 1, 1, 1}, text, w, h);
    const size_t quads = d.tris.count / 6;
    ink *row = malloc(quads * sizeof *row);
    const float line_h = RENDER_TEXT_LINE * scale, gap = 1.5f * render_text_width(" ", scale);
    for (int line = 0; line < TABLE_LINES && row != NULL; ++line) {
        size_t n = 0;
        for (size_t q = 0; q < quads; ++q) {
            const render_vertex2d *v = &d.tris.v[6 * q];
            float x0 = v[0].x, x1 = v[0].x, y0 = v[0].y, y1 = v[0].y;
            for (int k = 1; k < 6; ++k) {
                x0 = v[k].x < x0 ? v[k].x : x0;
                x1 = v[k].x > x1 ? v[k].x : x1;
                y0 = v[k].y < y0 ? v[k].y : y0;
                y1 = v[k].y > y1 ? v[k].y : y1;
            }
            t->right = x1 > t->right ? x1 : t->right;
            t->bottom = y1 > t->bottom ? y1 : t->bottom;
            if ((int)(0.5f * (y0 + y1) / line_h) == line) {
                row[n++] = (ink){x0, x1};
            }
        }
        qsort(row, n, sizeof *row, by_left);
        float end = -1e30f;
        for (size_t i = 0; i < n; ++i) {
            if (row[i].x0 > end + gap && t->cells[line] < TABLE_CELLS) {
                t->left[line][t->cells[line]++] = row[i].x0;
            }
            end = row[i].x1 > end ? row[i].x1 : end;
        }
    }
    free(row);
    free(d.tris.v);
    free(d.lines.v);
}

/* The n-th line of text (its first n_len characters), and its leading spaces. */
static const char *nth_line(const char *text, int n, size_t *len, size_t *indent) {
    for (int i = 0; i < n && text != NULL; ++i) {
        text = strchr(text, '\n');
        text = text != NULL ? text + 1 : NULL;
    }
    if (text == NULL || *text == '\0') {
        return NULL;
    }
    const char *nl = strchr(text, '\n');
    *len = nl ? (size_t)(nl - text) : strlen(text);
    *indent = strspn(text, " ");
    *indent = *indent < *len ? *indent : *len;
    return text;
}

/* Where the cells of a line start [characters], as a fixed-width terminal shows them: after a
 * run of two spaces or more (or the leading ones). */
static int cell_starts(const char *line, size_t len, size_t at[TABLE_CELLS]) {
    const size_t indent = strspn(line, " ");
    int cells = 0;
    for (size_t i = indent; i < len && cells < TABLE_CELLS; ++i) {
        if (line[i] != ' ' && (i == indent || (line[i - 1] == ' ' && line[i - 2] == ' '))) {
            at[cells++] = i;
        }
    }
    return cells;
}

/* Checks a table as the help panel shows it: every line's cells drawn where a terminal would
 * put them relative to the others, which in the proportional font means: a line continued under
 * the line before (its spaces reach that line's cell k >= 1) has its cells at the x of that
 * line's cells k, k+1, ...; the table without its continued lines has the same columns (a
 * continuation widens no column before its own); the size measured (no draw target) equals the
 * size drawn and holds every glyph. Returns the continued lines found. */
static int check_table(const char *text, float scale) {
    drawn_table t, plain;
    float w = 0.0f, h = 0.0f, mw = 0.0f, mh = 0.0f;
    draw_table(text, scale, &t, &w, &h);
    render_text_columns(NULL, 0.0f, 0.0f, scale, (const float[4]){1, 1, 1, 1}, text, &mw, &mh);
    ENSURE_MSG(mw == w && mh == h, "measured %.1f x %.1f, drawn %.1f x %.1f", mw, mh, w, h);
    ENSURE_MSG(t.right <= w + 0.5f && t.bottom <= h + 0.5f,
               "glyphs reach %.1f x %.1f past the size %.1f x %.1f", t.right, t.bottom, w, h);
    /* the same table without its continued lines */
    char rest[4096] = "";
    int kept[TABLE_LINES], continued = 0, lines = 0;
    size_t len = 0, indent = 0;
    size_t prev_at[TABLE_CELLS];
    int prev_cells = 0;
    for (const char *line; (line = nth_line(text, lines, &len, &indent)) != NULL; ++lines) {
        size_t at[TABLE_CELLS];
        const int cells = cell_starts(line, len, at);
        int k = 0;
        for (int j = prev_cells - 1; j >= 1 && k == 0; --j) {
            k = indent >= prev_at[j] ? j : 0;
        }
        kept[lines] = k == 0;
        if (k > 0) {
            ++continued;
            for (int c = 0; c < t.cells[lines] && k + c < t.cells[lines - 1]; ++c) {
                ENSURE_MSG(fabsf(t.left[lines][c] - t.left[lines - 1][k + c]) <= scale,
                           "line %d '%.*s': its cell %d at x %.1f px, the column it continues at "
                           "%.1f px",
                           lines, (int)len, line, c, t.left[lines][c], t.left[lines - 1][k + c]);
            }
            ENSURE_MSG(t.cells[lines] <= t.cells[lines - 1] - k, "line %d: %d cells drawn", lines,
                       t.cells[lines]);
            for (int j = k; j < cells + k && j < TABLE_CELLS; ++j) { /* what it continues */
                prev_at[j] = at[j - k];
            }
            prev_cells = cells + k > prev_cells ? cells + k : prev_cells;
        } else {
            strncat(rest, line, len);
            strcat(rest, "\n");
            memcpy(prev_at, at, sizeof at);
            prev_cells = cells;
        }
    }
    draw_table(rest, scale, &plain, NULL, NULL);
    for (int i = 0, j = 0; i < lines && i < TABLE_LINES; ++i) {
        if (!kept[i]) {
            continue;
        }
        ENSURE_MSG(t.cells[i] == plain.cells[j], "line %d: %d cells, %d without continuations", i,
                   t.cells[i], plain.cells[j]);
        for (int c = 0; c < t.cells[i] && c < plain.cells[j]; ++c) {
            ENSURE_MSG(fabsf(t.left[i][c] - plain.left[j][c]) <= 0.01f,
                       "line %d: cell %d at %.1f px, at %.1f px without the continued lines", i, c,
                       t.left[i][c], plain.left[j][c]);
        }
        ++j;
    }
    return continued;
}

static void test_columns(void) {
    drawn_table t;
    const char *text = "head\n  a  one  bb  two\n  ccc  three  d  four\n";
    draw_table(text, 1.0f, &t, NULL, NULL);
    ENSURE(t.cells[0] == 1 && t.cells[1] == 4 && t.cells[2] == 4);
    for (int c = 0; c < 4; ++c) { /* a proportional font, yet the columns line up */
        ENSURE_MSG(fabsf(t.left[1][c] - t.left[2][c]) <= 1.0f, "cell %d: %.1f against %.1f", c,
                   t.left[1][c], t.left[2][c]);
    }
    ENSURE(fabsf(t.left[1][0] - 2.0f * render_text_width(" ", 1.0f)) <= 1.0f); /* the indent */
    ENSURE(check_table(text, 1.0f) == 0);
}

/* A description wrapped under itself: in its own column, the key column as narrow as without it
 * (the help panel drew "angular speed" in the key column, and widened it). */
static void test_continued_cell(void) {
    const char *text = "  k  colour: speed, radius,  O  overlay\n"
                       "     angular speed           X  friction\n"
                       "  G  graph                   Y  axis\n";
    drawn_table t;
    draw_table(text, 1.0f, &t, NULL, NULL);
    ENSURE_MSG(t.cells[1] == 3 && fabsf(t.left[1][0] - t.left[0][1]) <= 1.0f &&
                   fabsf(t.left[1][1] - t.left[0][2]) <= 1.0f,
               "the continuation's cells at %.1f, %.1f; the description's column at %.1f",
               t.left[1][0], t.left[1][1], t.left[0][1]);
    ENSURE(check_table(text, 1.0f) == 1);
    ENSURE(check_table(text, 2.0f) == 1);
}

/* The viewer's help panel itself, at both text scales. */
static void test_help_panel(void) {
    ENSURE(check_table(VIEWER_KEYS_HELP, 1.0f) >= 1); /* "angular speed" */
    ENSURE(check_table(VIEWER_KEYS_HELP, 2.0f) >= 1);
}

static const ensure_test tests[] = {
    {"fits", test_fits},
    {"long_warning", test_long_warning},
    {"long_word_alone", test_long_word_alone},
    {"given_breaks", test_given_breaks},
    {"short_buffer", test_short_buffer},
    {"columns", test_columns},
    {"continued_cell", test_continued_cell},
    {"help_panel", test_help_panel},
};

ENSURE_MAIN(tests)
