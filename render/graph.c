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
            for (float o = 0.0f; o < width; o += 1.0f) {
                render_draw2d_line(d, xa, ya + o, xa + dx, yb + o, c);
            }
        }
    }
}

/* Grid lines and their values: three lines (0, half, top) or one per decade. */
static void draw_axis(const render_graph *g, render_draw2d *d, float px, float py, float pw,
                      float ph, float text_scale, const char *unit) {
    static const float grid[4] = {1.0f, 1.0f, 1.0f, 0.18f};
    static const float label[4] = {0.85f, 0.87f, 0.92f, 1.0f};
    char text[64];
    if (!g->log_scale) {
        for (int k = 0; k <= 2; ++k) {
            float gy = py + ph * (1.0f - 0.5f * (float)k);
            render_draw2d_line(d, px, gy, px + pw, gy, grid);
        }
        snprintf(text, sizeof text, "%g %s", g->y_max, unit);
        render_text_draw(d, px + 2.0f, py + 2.0f, text_scale, label, text);
        return;
    }
    for (float v = g->log_lo; v <= g->y_max * 1.001f; v *= 10.0f) {
        float gy = y_of(g, v, py, ph);
        render_draw2d_line(d, px, gy, px + pw, gy, grid);
        snprintf(text, sizeof text, v >= g->y_max * 0.999f ? "%g %s (log)" : "%g", v, unit);
        /* Above its line, but the top one below it: decades never share a label's room. */
        const float ty = v >= g->y_max * 0.999f ? gy + 2.0f : gy - RENDER_TEXT_LINE * text_scale;
        render_text_draw(d, px + 2.0f, ty, text_scale, label, text);
    }
}

void render_graph_draw(render_graph *g, render_draw2d *d, float x, float y, float w, float h,
                       float text_scale, const char *unit) {
    static const float panel[4] = {0.05f, 0.06f, 0.08f, 0.72f};
    static const float label[4] = {0.85f, 0.87f, 0.92f, 1.0f};
    static const float mark_color[4] = {1.0f, 0.95f, 0.35f, 0.95f};
    static const float label_back[4] = {0.05f, 0.06f, 0.08f, 0.90f};
    float pad = 6.0f * text_scale;
    float line_h = RENDER_TEXT_LINE * text_scale;
    render_draw2d_rect(d, x, y, w, h, panel);
    if (g->log_scale) {
        update_log_scale(g);
    } else {
        update_scale(g);
    }

    /* Plot area below a legend line, left of nothing: labels sit inside the plot. */
    float px = x + pad, py = y + pad + line_h, pw = w - 2.0f * pad, ph = h - 2.0f * pad - line_h;
    float lx = px;
    for (int s = 0; s < g->series; ++s) {
        render_draw2d_rect(d, lx, y + pad + 1.0f * text_scale, 8.0f * text_scale, 7.0f * text_scale,
                           g->colors[s]);
        lx += 11.0f * text_scale;
        lx += render_text_draw(d, lx, y + pad, text_scale, label, g->names[s]) + 12.0f * text_scale;
    }
    draw_axis(g, d, px, py, pw, ph, text_scale, unit);
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
    char text[96];
    int len = snprintf(text, sizeof text, "last %d frames", g->count);
    if (unlabelled > 0) {
        snprintf(text + len, sizeof text - (size_t)len, ", %d mark%s without room for a label",
                 unlabelled, unlabelled == 1 ? "" : "s");
    }
    render_text_draw(d, x + w - pad - render_text_width(text, text_scale), y + pad, text_scale,
                     label, text);
}
