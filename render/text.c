/* SPDX-License-Identifier: MIT
 * nbsim — overlay text with stb_easy_font. */
#include "text.h"

#include <stdlib.h>
#include <string.h>

#include <stb_easy_font.h>

/* stb_easy_font's vertex: position (z unused) and a colour we replace with our own. */
typedef struct {
    float x, y, z;
    unsigned char rgba[4];
} easy_vertex;

/* Glyph scratch shared by all calls (the viewer draws from one thread); grows as needed. */
static easy_vertex *scratch;
static size_t scratch_bytes;

float render_text_draw(render_draw2d *d, float x, float y, float scale, const float rgba[4],
                       const char *text) {
    size_t len = strlen(text);
    if (len == 0) {
        return 0.0f;
    }
    /* stb documents ~270 bytes per character on average; worst glyphs take more. */
    size_t need = len * 400 + 4096;
    if (need > scratch_bytes) {
        easy_vertex *grown = realloc(scratch, need);
        if (grown == NULL) {
            return 0.0f;
        }
        scratch = grown;
        scratch_bytes = need;
    }
    int quads = stb_easy_font_print(0.0f, 0.0f, (char *)text, NULL, scratch, (int)scratch_bytes);
    float c[4][4];
    for (int i = 0; i < 4; ++i) {
        memcpy(c[i], rgba, sizeof c[i]);
    }
    for (int q = 0; q < quads; ++q) {
        const easy_vertex *v = &scratch[4 * q];
        float xy[4][2];
        for (int i = 0; i < 4; ++i) {
            xy[i][0] = x + v[i].x * scale;
            xy[i][1] = y + v[i].y * scale;
        }
        render_draw2d_quad(d, (const float(*)[2])xy, (const float(*)[4])c);
    }
    return render_text_width(text, scale);
}

float render_text_width(const char *text, float scale) {
    return (float)stb_easy_font_width((char *)text) * scale;
}

float render_text_height(const char *text, float scale) {
    return (float)stb_easy_font_height((char *)text) * scale;
}

#define TABLE_MAX_COLUMNS 8
#define TABLE_GAP 3.0f /* [glyph px] between columns, on top of the two spaces' width */

/* Walks the cells of one line: next_cell() copies the next one into `cell` (NUL-terminated),
 * sets `start` to its first character's offset in the line and returns 1, or returns 0 at the
 * end of the line. */
typedef struct {
    const char *line;
    size_t len;
    size_t pos;
    size_t start; /* the last cell's offset [characters] */
} line_cursor;

static int next_cell(line_cursor *c, char *cell, size_t cap) {
    while (c->pos < c->len && c->line[c->pos] == ' ') {
        c->pos++;
    }
    if (c->pos >= c->len) {
        return 0;
    }
    size_t start = c->pos, end = c->pos;
    while (end < c->len && !(c->line[end] == ' ' && end + 1 < c->len && c->line[end + 1] == ' ')) {
        end++;
    }
    size_t n = end - start < cap - 1 ? end - start : cap - 1;
    memcpy(cell, c->line + start, n);
    cell[n] = '\0';
    c->start = start;
    c->pos = end;
    return 1;
}

/* The columns of the line before: where its cells start [characters] and where its column 0
 * is [glyph px]. */
typedef struct {
    size_t at[TABLE_MAX_COLUMNS];
    int cells;
    float origin;
} table_prev;

/* The first column of a line with `indent` leading spaces, and its column 0's x [glyph px]. A
 * line whose spaces reach the line before's second or a later cell continues that cell (the
 * help's wrapped descriptions, lined up with spaces for a fixed-width terminal): its cells go
 * into the columns from there on, not from the key column. Any other line starts at its
 * indent, in column 0. */
static int first_column(const table_prev *prev, size_t indent, float space, float *origin) {
    for (int k = prev->cells - 1; k >= 1; --k) {
        if (indent >= prev->at[k]) {
            *origin = prev->origin;
            return k;
        }
    }
    *origin = (float)indent * space;
    return 0;
}

/* One pass over every line. measure: widens col_w (glyph px) to the cells that are not a line's
 * last; else places the cells by col_w, draws them when d != NULL, and writes the size [px]. */
static void table_pass(render_draw2d *d, float x, float y, float scale, const float rgba[4],
                       const char *text, float col_w[TABLE_MAX_COLUMNS], int measure, float *w,
                       float *h) {
    const float space = (float)stb_easy_font_width(" ");
    const float sep = 2.0f * space + TABLE_GAP; /* from one column's end to the next's start */
    float max_w = 0.0f;
    int lines = 0;
    table_prev prev = {{0}, 0, 0.0f};
    const char *line = text;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        size_t indent = 0;
        while (indent < len && line[indent] == ' ') {
            indent++;
        }
        char cell[256];
        int cells = 0;
        for (line_cursor probe = {line, len, 0, 0}; next_cell(&probe, cell, sizeof cell);) {
            cells++;
        }
        float origin = 0.0f;
        const int first = first_column(&prev, indent, space, &origin);
        float cx = origin;
        for (int k = 0; k < first; ++k) {
            cx += col_w[k] + sep;
        }
        table_prev here = {{0}, first, origin}; /* a continued line keeps the cells before */
        for (int k = 0; k < first; ++k) {
            here.at[k] = prev.at[k];
        }
        line_cursor c = {line, len, 0, 0};
        for (int count = first; next_cell(&c, cell, sizeof cell); ++count) {
            const float cw = (float)stb_easy_font_width(cell);
            const int last = count == first + cells - 1, ruled = count < TABLE_MAX_COLUMNS;
            if (measure && !last && ruled && cw > col_w[count]) {
                col_w[count] = cw;
            }
            if (ruled) {
                here.at[count] = c.start;
                here.cells = count + 1;
            }
            if (d != NULL && !measure) {
                render_text_draw(d, x + cx * scale, y + (float)lines * RENDER_TEXT_LINE * scale,
                                 scale, rgba, cell);
            }
            if (last) {
                max_w = cx + cw > max_w ? cx + cw : max_w;
            }
            cx += (ruled && !last ? col_w[count] : cw) + sep;
        }
        prev = here;
        lines++;
        line = nl ? nl + 1 : line + len;
    }
    if (w != NULL) {
        *w = max_w * scale;
    }
    if (h != NULL) {
        *h = (float)lines * RENDER_TEXT_LINE * scale;
    }
}

void render_text_columns(render_draw2d *d, float x, float y, float scale, const float rgba[4],
                         const char *text, float *w, float *h) {
    float col_w[TABLE_MAX_COLUMNS] = {0};
    table_pass(NULL, x, y, scale, rgba, text, col_w, 1, NULL, NULL);
    /* placed with the final widths: the size measured is the size drawn */
    table_pass(d, x, y, scale, rgba, text, col_w, 0, w, h);
}

int render_text_wrap(const char *text, float scale, float max_w, char *out, size_t cap) {
    if (cap == 0) {
        return 0;
    }
    size_t len = strlen(text);
    len = len < cap - 1 ? len : cap - 1;
    memcpy(out, text, len);
    out[len] = '\0';
    int lines = 1;
    char *line = out, *space = NULL; /* the current line, and its last space that may break */
    for (char *p = out;; ++p) {
        const char c = *p;
        if (c != ' ' && c != '\n' && c != '\0') {
            continue;
        }
        *p = '\0'; /* the line up to this word's end */
        const int over = render_text_width(line, scale) > max_w;
        *p = c;
        if (over && space != NULL) { /* this word starts the next line */
            *space = '\n';
            line = space + 1;
            ++lines;
        }
        space = c == ' ' ? p : NULL;
        if (c == '\n') {
            line = p + 1;
            ++lines;
        } else if (c == '\0') {
            return lines;
        }
    }
}

void render_text_release(void) {
    free(scratch);
    scratch = NULL;
    scratch_bytes = 0;
}
