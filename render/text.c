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

/* Walks the cells of one line: next_cell() copies the next one into `cell` (NUL-terminated)
 * and returns 1, or returns 0 at the end of the line. */
typedef struct {
    const char *line;
    size_t len;
    size_t pos;
    int indent; /* leading spaces */
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
    c->pos = end;
    return 1;
}

/* Lays out (draw == 0: only measures) every line; col_w holds the column widths [glyph px]. */
static void table_pass(render_draw2d *d, float x, float y, float scale, const float rgba[4],
                       const char *text, float col_w[TABLE_MAX_COLUMNS], int draw, float *w,
                       float *h) {
    float space = (float)stb_easy_font_width(" ");
    float max_w = 0.0f;
    int lines = 0;
    const char *line = text;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        line_cursor c = {line, len, 0, 0};
        while (c.indent < (int)len && line[c.indent] == ' ') {
            c.indent++;
        }
        char cell[256];
        float cx = (float)c.indent * space;
        int count = 0;
        int cells = 0;
        for (line_cursor probe = c; next_cell(&probe, cell, sizeof cell);) {
            cells++;
        }
        while (next_cell(&c, cell, sizeof cell)) {
            float cw = (float)stb_easy_font_width(cell);
            int last = count == cells - 1;
            if (!draw && !last && count < TABLE_MAX_COLUMNS && cw > col_w[count]) {
                col_w[count] = cw;
            }
            if (draw) {
                render_text_draw(d, x + cx * scale, y + (float)lines * RENDER_TEXT_LINE * scale,
                                 scale, rgba, cell);
            }
            float advance = count < TABLE_MAX_COLUMNS && !last ? col_w[count] : cw;
            cx += advance + 2.0f * space + TABLE_GAP;
            ++count;
        }
        float line_w = cx - (count > 0 ? 2.0f * space + TABLE_GAP : 0.0f);
        max_w = line_w > max_w ? line_w : max_w;
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
    table_pass(d, x, y, scale, rgba, text, col_w, 0, w, h);
    if (d != NULL) {
        table_pass(d, x, y, scale, rgba, text, col_w, 1, w, h);
    }
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
