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

void render_graph_draw(render_graph *g, render_draw2d *d, float x, float y, float w, float h,
                       float text_scale, const char *unit) {
    static const float panel[4] = {0.05f, 0.06f, 0.08f, 0.72f};
    static const float grid[4] = {1.0f, 1.0f, 1.0f, 0.18f};
    static const float label[4] = {0.85f, 0.87f, 0.92f, 1.0f};
    static const float mark_color[4] = {1.0f, 0.95f, 0.35f, 0.95f};
    float pad = 6.0f * text_scale;
    float line_h = RENDER_TEXT_LINE * text_scale;
    render_draw2d_rect(d, x, y, w, h, panel);
    update_scale(g);

    /* Plot area below a legend line, left of nothing: labels sit inside the plot. */
    float px = x + pad, py = y + pad + line_h, pw = w - 2.0f * pad, ph = h - 2.0f * pad - line_h;
    char text[64];
    float lx = px;
    for (int s = 0; s < g->series; ++s) {
        render_draw2d_rect(d, lx, y + pad + 1.0f * text_scale, 8.0f * text_scale, 7.0f * text_scale,
                           g->colors[s]);
        lx += 11.0f * text_scale;
        lx += render_text_draw(d, lx, y + pad, text_scale, label, g->names[s]) + 12.0f * text_scale;
    }
    snprintf(text, sizeof text, "last %d frames", g->count);
    render_text_draw(d, x + w - pad - render_text_width(text, text_scale), y + pad, text_scale,
                     label, text);

    for (int k = 0; k <= 2; ++k) {
        float gy = py + ph * (1.0f - 0.5f * (float)k);
        render_draw2d_line(d, px, gy, px + pw, gy, grid);
    }
    snprintf(text, sizeof text, "%g %s", g->y_max, unit);
    render_text_draw(d, px + 2.0f, py + 2.0f, text_scale, label, text);
    if (g->count < 2 || !(g->y_max > 0.0f)) {
        return;
    }

    float dx = pw / (float)(RENDER_GRAPH_CAPACITY - 1);
    float x0 = px + pw - dx * (float)(g->count - 1); /* newest sample at the right edge */
    for (int i = 0; i + 1 < g->count; ++i) {
        const float *a = sample(g, i), *b = sample(g, i + 1);
        float base_a = 0.0f, base_b = 0.0f;
        float xa = x0 + dx * (float)i, xb = xa + dx;
        for (int s = 0; s < g->series; ++s) {
            float top_a = base_a + a[s], top_b = base_b + b[s];
            float ya0 = py + ph * (1.0f - fminf(base_a / g->y_max, 1.0f));
            float yb0 = py + ph * (1.0f - fminf(base_b / g->y_max, 1.0f));
            float ya1 = py + ph * (1.0f - fminf(top_a / g->y_max, 1.0f));
            float yb1 = py + ph * (1.0f - fminf(top_b / g->y_max, 1.0f));
            const float xy[4][2] = {{xa, ya1}, {xb, yb1}, {xb, yb0}, {xa, ya0}};
            float c[4][4];
            for (int k = 0; k < 4; ++k) {
                memcpy(c[k], g->colors[s], sizeof c[k]);
            }
            render_draw2d_quad(d, xy, (const float(*)[4])c);
            base_a = top_a;
            base_b = top_b;
        }
    }
    /* Marks last, over the areas. Each label takes the first text row where it does not run
     * into an earlier label; when all rows are taken only the line is drawn. */
    enum { ROWS = 4 };
    float row_end[ROWS];
    for (int r = 0; r < ROWS; ++r) {
        row_end[r] = -1e30f;
    }
    for (int i = 0; i < g->count; ++i) {
        const char *m = mark(g, i);
        if (m[0] == '\0') {
            continue;
        }
        float mx = x0 + dx * (float)i;
        render_draw2d_line(d, mx, py, mx, py + ph, mark_color);
        float tw = render_text_width(m, text_scale);
        float tx = mx + 3.0f + tw > px + pw ? mx - 3.0f - tw : mx + 3.0f;
        for (int r = 0; r < ROWS; ++r) {
            if (tx > row_end[r] + 4.0f * text_scale) {
                render_text_draw(d, tx, py + line_h * (1.2f + (float)r), text_scale, mark_color, m);
                row_end[r] = tx + tw;
                break;
            }
        }
    }
}
