/* SPDX-License-Identifier: MIT
 * nbsim — rolling timing graph. */
#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

void render_graph_init(render_graph *g, int series, const char *const names[],
                       const float colors[][4]) {
    memset(g, 0, sizeof *g);
    SIM_ASSERT(series >= 1 && series <= RENDER_GRAPH_MAX_SERIES);
    g->series = series;
    for (int s = 0; s < series; ++s) {
        snprintf(g->names[s], sizeof g->names[s], "%s", names[s]);
        memcpy(g->colors[s], colors[s], sizeof g->colors[s]);
    }
}

void render_graph_clear(render_graph *g) {
    g->head = 0;
    g->count = 0;
    g->y_max = 0.0f;
    g->pending_mark[0] = '\0';
    memset(g->marks, 0, sizeof g->marks);
}

void render_graph_mark(render_graph *g, const char *label) {
    snprintf(g->pending_mark, sizeof g->pending_mark, "%s", label);
}

void render_graph_push(render_graph *g, const float values[]) {
    for (int s = 0; s < g->series; ++s) {
        g->values[g->head][s] = isfinite(values[s]) && values[s] > 0.0f ? values[s] : 0.0f;
    }
    memcpy(g->marks[g->head], g->pending_mark, sizeof g->marks[g->head]);
    g->pending_mark[0] = '\0';
    g->head = (g->head + 1) % RENDER_GRAPH_CAPACITY;
    if (g->count < RENDER_GRAPH_CAPACITY) {
        g->count++;
    }
}

/* Smallest 1, 2 or 5 times a power of ten that is >= v. */
static float nice_ceil(float v) {
    if (!(v > 0.0f)) {
        return 1.0f;
    }
    float p = powf(10.0f, floorf(log10f(v)));
    for (int k = 0; k < 3; ++k) {
        static const float steps[3] = {1.0f, 2.0f, 5.0f};
        if (steps[k] * p >= v * 0.9999f) {
            return steps[k] * p;
        }
    }
    return 10.0f * p;
}

/* The i-th oldest sample held. */
static const float *sample(const render_graph *g, int i) {
    int start = (g->head - g->count + RENDER_GRAPH_CAPACITY) % RENDER_GRAPH_CAPACITY;
    return g->values[(start + i) % RENDER_GRAPH_CAPACITY];
}

static const char *mark(const render_graph *g, int i) {
    int start = (g->head - g->count + RENDER_GRAPH_CAPACITY) % RENDER_GRAPH_CAPACITY;
    return g->marks[(start + i) % RENDER_GRAPH_CAPACITY];
}

static float total(const render_graph *g, const float *v) {
    float t = 0.0f;
    for (int s = 0; s < g->series; ++s) {
        t += v[s];
    }
    return t;
}

static void update_scale(render_graph *g) {
    float peak = 0.0f;
    for (int i = 0; i < g->count; ++i) {
        float t = total(g, sample(g, i));
        peak = t > peak ? t : peak;
    }
    float target = nice_ceil(peak * 1.05f);
    /* Grow at once so nothing is clipped; shrink only when the peak has fallen well below, so
     * the axis does not flicker between two values. */
    if (target > g->y_max || peak < 0.4f * g->y_max) {
        g->y_max = target;
    }
}

/* Log axis: whole decades from below the smallest positive sample to above the largest, at most
 * LOG_DECADES_MAX; it moves only by decades, so it does not flicker. */
#define LOG_DECADES_MAX 5
static void update_log_scale(render_graph *g) {
    float lo = 0.0f, hi = 0.0f;
    for (int i = 0; i < g->count; ++i) {
        const float *v = sample(g, i);
        for (int s = 0; s < g->series; ++s) {
            if (v[s] > 0.0f) {
                lo = lo > 0.0f && lo < v[s] ? lo : v[s];
                hi = hi > v[s] ? hi : v[s];
            }
        }
    }
    if (!(hi > 0.0f)) {
        g->y_max = 1.0f;
        g->log_lo = 0.01f;
        return;
    }
    float top = powf(10.0f, ceilf(log10f(hi * 1.0001f)));
    float bottom = powf(10.0f, floorf(log10f(lo)));
    bottom = top / bottom < 10.0f ? top / 10.0f : bottom;
    bottom =
        top / bottom > powf(10.0f, LOG_DECADES_MAX) ? top / powf(10.0f, LOG_DECADES_MAX) : bottom;
    g->y_max = top;
    g->log_lo = bottom;
}

void render_graph_set_log(render_graph *g, int on) {
    g->log_scale = on != 0;
    g->y_max = 0.0f; /* rescale from scratch */
}

/* Screen y of value v in a plot whose top is py and height ph. */
static float y_of(const render_graph *g, float v, float py, float ph) {
    float t;
    if (g->log_scale) {
        const float l0 = log10f(g->log_lo), l1 = log10f(g->y_max);
        t = v > g->log_lo ? (log10f(v) - l0) / (l1 - l0) : 0.0f;
    } else {
        t = v / g->y_max;
    }
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    return py + ph * (1.0f - t);
}

/* "pair: rm" -> "p:rm"; labels without a "kind: " prefix have no shorter form (NULL). */
static const char *short_label(const char *label, char *buf, size_t cap) {
    const char *colon = strstr(label, ": ");
    if (colon == NULL || colon == label) {
        return NULL;
    }
    snprintf(buf, cap, "%c:%s", label[0], colon + 2);
    return buf;
}

/* Stacked areas: the series' sum is the frame's total. */
static void draw_areas(const render_graph *g, render_draw2d *d, float x0, float dx, float py,
                       float ph) {
    for (int i = 0; i + 1 < g->count; ++i) {
        const float *a = sample(g, i), *b = sample(g, i + 1);
        float base_a = 0.0f, base_b = 0.0f;
        float xa = x0 + dx * (float)i, xb = xa + dx;
        for (int s = 0; s < g->series; ++s) {
            float top_a = base_a + a[s], top_b = base_b + b[s];
            const float xy[4][2] = {{xa, y_of(g, top_a, py, ph)},
                                    {xb, y_of(g, top_b, py, ph)},
                                    {xb, y_of(g, base_b, py, ph)},
                                    {xa, y_of(g, base_a, py, ph)}};
            float c[4][4];
            for (int k = 0; k < 4; ++k) {
                memcpy(c[k], g->colors[s], sizeof c[k]);
            }
            render_draw2d_quad(d, xy, (const float(*)[4])c);
            base_a = top_a;
            base_b = top_b;
        }
    }
}

/* One line per series (log axis); samples of 0 (a phase that did not run) break the line. */
static void draw_lines(const render_graph *g, render_draw2d *d, float x0, float dx, float py,
                       float ph, float width) {
    for (int s = 0; s < g->series; ++s) {
        float c[4];
        memcpy(c, g->colors[s], sizeof c);
        c[3] = 1.0f;
        for (int i = 0; i + 1 < g->count; ++i) {
            float a = sample(g, i)[s], b = sample(g, i + 1)[s];
            if (!(a > 0.0f) || !(b > 0.0f)) {
                continue;
            }
            float xa = x0 + dx * (float)i, ya = y_of(g, a, py, ph), yb = y_of(g, b, py, ph);
            for (float o = 0.0f; o < width; o += 1.0f) { /* thickened inwards: inside the plot */
                const float oa = ya + o > py + ph ? -o : o, ob = yb + o > py + ph ? -o : o;
                render_draw2d_line(d, xa, ya + oa, xa + dx, yb + ob, c);
            }
        }
    }
}

/* The y axis's ticks: 0, half and the top (linear), or each decade (log); returns how many. */
#define GRAPH_MAX_TICKS (LOG_DECADES_MAX + 2)
static int axis_ticks(const render_graph *g, float v[GRAPH_MAX_TICKS]) {
    if (!g->log_scale) {
        v[0] = 0.0f;
        v[1] = 0.5f * g->y_max;
        v[2] = g->y_max;
        return 3;
    }
    int n = 0;
    for (float t = g->log_lo; t <= g->y_max * 1.001f && n < GRAPH_MAX_TICKS; t *= 10.0f) {
        v[n++] = t;
    }
    return n;
}

#define GRAPH_PAD 6.0f      /* [px at text scale 1] around the parts */
#define GRAPH_GAP 4.0f      /* [px at text scale 1] between a tick's value and the plot */
#define GRAPH_DIGIT_H 7.0f  /* [px at text scale 1] the glyphs' height, for centring on a line */
#define LEGEND_SWATCH 11.0f /* [px at text scale 1] a series' colour box and its gap */
#define LEGEND_SEP 12.0f    /* [px at text scale 1] between the legend's items */

/* The legend's title: the axis's unit, and the kind of axis. */
static void legend_title(const render_graph *g, const char *unit, char *out, size_t cap) {
    snprintf(out, cap, "%s%s", unit, g->log_scale ? " (log)" : "");
}

/* "last N frames": the least the legend keeps room for on its first line. */
static void frame_count(const render_graph *g, int unlabelled, char *out, size_t cap) {
    const int len = snprintf(out, cap, "last %d frames", g->count);
    if (unlabelled > 0 && len > 0 && (size_t)len < cap) {
        snprintf(out + len, cap - (size_t)len, ", %d mark%s without room for a label", unlabelled,
                 unlabelled == 1 ? "" : "s");
    }
}

/* The legend's items, the title and then each series, placed from the left and wrapped onto
 * another line where the next would pass the right edge (on the first line, the frame count's
 * room). Writes each item's x and line (item 0 the title, 1 + s series s); returns the lines. */
static int legend_flow(const render_graph *g, const char *unit, float x, float w, float scale,
                       float item_x[1 + RENDER_GRAPH_MAX_SERIES],
                       int item_line[1 + RENDER_GRAPH_MAX_SERIES]) {
    const float pad = GRAPH_PAD * scale, sep = LEGEND_SEP * scale;
    char text[96];
    frame_count(g, 0, text, sizeof text);
    const float left = x + pad, right = x + w - pad;
    float end = right - render_text_width(text, scale) - sep, lx = left;
    int line = 0;
    for (int k = 0; k <= g->series; ++k) {
        if (k == 0) {
            legend_title(g, unit, text, sizeof text);
        }
        const float iw = k == 0 ? render_text_width(text, scale)
                                : LEGEND_SWATCH * scale + render_text_width(g->names[k - 1], scale);
        if (lx > left && lx + iw > end) { /* a new line (a lone item too wide stays) */
            ++line;
            lx = left;
            end = right;
        }
        item_x[k] = lx;
        item_line[k] = line;
        lx += iw + sep;
    }
    return line + 1;
}

void render_graph_layout_of(const render_graph *g, float x, float y, float w, float h,
                            float text_scale, const char *unit, render_graph_layout *l) {
    const float pad = GRAPH_PAD * text_scale, line_h = RENDER_TEXT_LINE * text_scale;
    float v[GRAPH_MAX_TICKS];
    const int n = axis_ticks(g, v);
    float label_w = 0.0f;
    for (int k = 0; k < n; ++k) {
        char text[32];
        snprintf(text, sizeof text, "%g", v[k]);
        const float tw = render_text_width(text, text_scale);
        label_w = tw > label_w ? tw : label_w;
    }
    float item_x[1 + RENDER_GRAPH_MAX_SERIES];
    int item_line[1 + RENDER_GRAPH_MAX_SERIES];
    l->legend_y = y + pad;
    l->legend_lines = legend_flow(g, unit, x, w, text_scale, item_x, item_line);
    l->gutter_x = x + pad;
    l->gutter_w = label_w;
    l->px = l->gutter_x + label_w + GRAPH_GAP * text_scale;
    /* half a line above and below: the top and bottom ticks' values are centred on their lines */
    l->py = l->legend_y + (float)l->legend_lines * line_h + 0.5f * line_h;
    l->pw = x + w - pad - l->px;
    l->ph = y + h - pad - 0.5f * line_h - l->py;
    l->pw = l->pw > 1.0f ? l->pw : 1.0f;
    l->ph = l->ph > 1.0f ? l->ph : 1.0f;
}

/* Grid lines across the plot, and their values in the gutter beside it, right-aligned and
 * centred on their lines: the curves never cross them. */
static void draw_axis(const render_graph *g, render_draw2d *d, const render_graph_layout *l,
                      float text_scale) {
    static const float grid[4] = {1.0f, 1.0f, 1.0f, 0.18f};
    static const float label[4] = {0.85f, 0.87f, 0.92f, 1.0f};
    float v[GRAPH_MAX_TICKS];
    const int n = axis_ticks(g, v);
    for (int k = 0; k < n; ++k) {
        const float gy = y_of(g, v[k], l->py, l->ph);
        render_draw2d_line(d, l->px, gy, l->px + l->pw, gy, grid);
        char text[32];
        snprintf(text, sizeof text, "%g", v[k]);
        const float tx = l->gutter_x + l->gutter_w - render_text_width(text, text_scale);
        render_text_draw(d, tx, gy - 0.5f * GRAPH_DIGIT_H * text_scale, text_scale, label, text);
    }
}

void render_graph_draw(render_graph *g, render_draw2d *d, float x, float y, float w, float h,
                       float text_scale, const char *unit) {
    static const float panel[4] = {0.05f, 0.06f, 0.08f, 0.72f};
    static const float label[4] = {0.85f, 0.87f, 0.92f, 1.0f};
    static const float mark_color[4] = {1.0f, 0.95f, 0.35f, 0.95f};
    static const float label_back[4] = {0.05f, 0.06f, 0.08f, 0.90f};
    const float pad = GRAPH_PAD * text_scale;
    const float line_h = RENDER_TEXT_LINE * text_scale;
    render_draw2d_rect(d, x, y, w, h, panel);
    if (g->log_scale) {
        update_log_scale(g);
    } else {
        update_scale(g);
    }
    render_graph_layout l;
    render_graph_layout_of(g, x, y, w, h, text_scale, unit, &l);
    const float px = l.px, py = l.py, pw = l.pw, ph = l.ph;

    /* The legend: the axis's unit, then the series (their colour and name). */
    float item_x[1 + RENDER_GRAPH_MAX_SERIES];
    int item_line[1 + RENDER_GRAPH_MAX_SERIES];
    legend_flow(g, unit, x, w, text_scale, item_x, item_line);
    char title[48];
    legend_title(g, unit, title, sizeof title);
    render_text_draw(d, item_x[0], l.legend_y + line_h * (float)item_line[0], text_scale, label,
                     title);
    for (int s = 0; s < g->series; ++s) {
        const float ly = l.legend_y + line_h * (float)item_line[1 + s];
        render_draw2d_rect(d, item_x[1 + s], ly + 1.0f * text_scale, 8.0f * text_scale,
                           7.0f * text_scale, g->colors[s]);
        render_text_draw(d, item_x[1 + s] + LEGEND_SWATCH * text_scale, ly, text_scale, label,
                         g->names[s]);
    }
    draw_axis(g, d, &l, text_scale);
    int unlabelled = 0;
    if (g->count >= 2 && g->y_max > 0.0f) {
        float dx = pw / (float)(RENDER_GRAPH_CAPACITY - 1);
        float x0 = px + pw - dx * (float)(g->count - 1); /* newest sample at the right edge */
        if (g->log_scale) {
            draw_lines(g, d, x0, dx, py, ph, text_scale >= 2.0f ? 2.0f : 1.0f);
        } else {
            draw_areas(g, d, x0, dx, py, ph);
        }
        /* Marks last, over the data: first every line (thin quads, so that the labels'
         * backing, drawn after them in the same batch, hides the lines they cross), then the
         * labels, newest first so the newest always gets one. Each label takes the first text
         * row where it stays clear of the labels already placed; then its short form; when
         * neither fits only the line is drawn (and counted). */
        const float line_w = text_scale >= 2.0f ? 2.0f : 1.0f;
        for (int i = 0; i < g->count; ++i) {
            if (mark(g, i)[0] != '\0') {
                render_draw2d_rect(d, x0 + dx * (float)i, py, line_w, ph, mark_color);
            }
        }
        enum { ROWS = 3 };
        float row_start[ROWS]; /* left edge of the leftmost label placed in the row */
        for (int r = 0; r < ROWS; ++r) {
            row_start[r] = 1e30f;
        }
        const float gap = 4.0f * text_scale;
        for (int i = g->count - 1; i >= 0; --i) {
            const char *m = mark(g, i);
            if (m[0] == '\0') {
                continue;
            }
            float mx = x0 + dx * (float)i;
            char buf[RENDER_GRAPH_LABEL + 4];
            const char *forms[2] = {m, short_label(m, buf, sizeof buf)};
            int placed = 0;
            for (int f = 0; f < 2 && !placed; ++f) {
                if (forms[f] == NULL) {
                    continue;
                }
                float tw = render_text_width(forms[f], text_scale);
                float tx = mx + 3.0f + tw > px + pw ? mx - 3.0f - tw : mx + 3.0f;
                for (int r = 0; r < ROWS && !placed; ++r) {
                    if (tx + tw + gap < row_start[r] && tx >= px) {
                        const float ty = py + line_h * (1.2f + (float)r);
                        render_draw2d_rect(d, tx - 2.0f, ty - 1.0f * text_scale, tw + 4.0f,
                                           line_h - 1.0f * text_scale, label_back);
                        render_text_draw(d, tx, ty, text_scale, mark_color, forms[f]);
                        row_start[r] = tx;
                        placed = 1;
                    }
                }
            }
            unlabelled += !placed;
        }
    }
    /* The frame count at the right of the legend's first line; the marks without a label too
     * where that leaves room. */
    const int first_line_items = g->series + 1;
    float first_end = x + pad;
    for (int k = 0; k < first_line_items && item_line[k] == 0; ++k) {
        first_end = item_x[k] + (k == 0 ? render_text_width(title, text_scale)
                                        : LEGEND_SWATCH * text_scale +
                                              render_text_width(g->names[k - 1], text_scale));
    }
    char text[96];
    frame_count(g, unlabelled, text, sizeof text);
    if (first_end + LEGEND_SEP * text_scale + render_text_width(text, text_scale) > x + w - pad) {
        frame_count(g, 0, text, sizeof text);
    }
    render_text_draw(d, x + w - pad - render_text_width(text, text_scale), l.legend_y, text_scale,
                     label, text);
}
