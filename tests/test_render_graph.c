/* SPDX-License-Identifier: MIT
 * nbsim — the timing graph's layout (render/graph.h): the axis's values and the legend are never
 * drawn over by the curves. The graph is drawn into a draw2d batch that is never flushed (no GL)
 * and its geometry read back by colour: text, the series' areas and lines, the grid. On a linear
 * and a log axis, at text scales 1 and 2, in the viewer's widest and narrowest graphs:
 *  - no glyph of the axis or the legend overlaps a series' area or line;
 *  - the layout's plot holds every area, line and grid line, the gutter every value, which sit
 *    on their grid lines, and the plot fills the rectangle but for the gutter and legend. */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "text.h"

static const float series_colors[4][4] = {{0.98f, 0.60f, 0.20f, 0.90f},
                                          {0.35f, 0.62f, 0.98f, 0.90f},
                                          {0.45f, 0.85f, 0.45f, 0.90f},
                                          {0.80f, 0.50f, 0.95f, 0.90f}};
static const float label_color[4] = {0.85f, 0.87f, 0.92f, 1.0f}; /* graph.c's */

typedef struct {
    float x0, y0, x1, y1;
} box;

static int same_rgb(const float *a, const float *b) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static int series_of(const float *rgba) {
    for (int s = 0; s < 4; ++s) {
        if (same_rgb(rgba, series_colors[s])) {
            return s;
        }
    }
    return -1;
}

static box bounds(const render_vertex2d *v, int count) {
    box b = {v[0].x, v[0].y, v[0].x, v[0].y};
    for (int k = 1; k < count; ++k) {
        b.x0 = v[k].x < b.x0 ? v[k].x : b.x0;
        b.x1 = v[k].x > b.x1 ? v[k].x : b.x1;
        b.y0 = v[k].y < b.y0 ? v[k].y : b.y0;
        b.y1 = v[k].y > b.y1 ? v[k].y : b.y1;
    }
    return b;
}

/* Overlap with a positive area (touching edges do not count). */
static int overlap(box a, box b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

static int inside(box a, box r, float tol) {
    return a.x0 >= r.x0 - tol && a.x1 <= r.x1 + tol && a.y0 >= r.y0 - tol && a.y1 <= r.y1 + tol;
}

/* Timings that fill the plot to near its top (linear: their sum peaks at 1.9 ms on an axis up to
 * 2 ms, so the areas reach the top value's corner; log: the lines run through three decades,
 * just above the 0.01 and 1 ms lines, where those values were written). */
static void fill(render_graph *g, int log_axis) {
    static const char *const names[4] = {"pair", "triplet", "integrate", "sort, cull, lists"};
    render_graph_init(g, 4, names, series_colors);
    render_graph_set_log(g, log_axis);
    for (int i = 0; i < RENDER_GRAPH_CAPACITY; ++i) {
        const float wobble = 1.0f + 0.05f * (float)(i % 7);
        const float lin[4] = {0.9f, 0.01f, 0.25f, 0.3015f}, log[4] = {1.2f, 0.01f, 0.3f, 0.35f};
        const float *at = log_axis ? log : lin;
        const float v[4] = {at[0] * wobble, at[1] * wobble, at[2] * wobble, at[3] * wobble};
        if (i == 150) {
            render_graph_mark(g, "pair: rm");
        }
        render_graph_push(g, v);
    }
}

static void check_graph(int log_axis, float scale, float w, float h) {
    render_graph g;
    fill(&g, log_axis);
    render_draw2d d;
    memset(&d, 0, sizeof d);
    const float x = 10.0f, y = 600.0f;
    render_graph_draw(&g, &d, x, y, w, h, scale, "ms/step");
    render_graph_draw(&g, &d, x, y, w, h, scale, "ms/step"); /* the scale settled */
    render_graph_layout l;
    render_graph_layout_of(&g, x, y, w, h, scale, "ms/step", &l);
    const box plot = {l.px, l.py, l.px + l.pw, l.py + l.ph};
    const box gutter = {l.gutter_x, y, l.gutter_x + l.gutter_w, y + h};
    const box whole = {x, y, x + w, y + h};
    const float legend_end = l.legend_y + (float)l.legend_lines * RENDER_TEXT_LINE * scale;
    const size_t tris = d.tris.count / 6, lines = d.lines.count / 2;
    box *text = malloc(tris * sizeof *text), *data = malloc((tris + lines) * sizeof *data);
    size_t nt = 0, nd = 0;
    int areas = 0, curves = 0, grid = 0, values = 0;
    /* the first quad of each draw is the panel, then the second draw's */
    for (size_t q = 0; q < tris && text != NULL && data != NULL; ++q) {
        const render_vertex2d *v = &d.tris.v[6 * q];
        const box b = bounds(v, 6);
        ENSURE_MSG(inside(b, whole, 0.01f), "a quad at (%.1f, %.1f)-(%.1f, %.1f) leaves the graph",
                   b.x0, b.y0, b.x1, b.y1);
        if (same_rgb(v[0].rgba, label_color)) {
            text[nt++] = b;
            values += b.x1 <= l.px; /* the gutter's glyphs */
        } else if (series_of(v[0].rgba) >= 0 && b.y1 > legend_end) {
            data[nd++] = b; /* an area's quad (the legend's swatches are above) */
            ENSURE_MSG(inside(b, plot, 0.01f),
                       "an area at (%.1f, %.1f)-(%.1f, %.1f) leaves the "
                       "plot (%.1f, %.1f)-(%.1f, %.1f)",
                       b.x0, b.y0, b.x1, b.y1, plot.x0, plot.y0, plot.x1, plot.y1);
            ++areas;
        }
    }
    for (size_t k = 0; k < lines && data != NULL; ++k) {
        const render_vertex2d *v = &d.lines.v[2 * k];
        box b = bounds(v, 2);
        b.x0 -= 0.5f; /* draw2d puts a line through pixel centres: +0.5 */
        b.x1 -= 0.5f;
        b.y0 -= 0.5f;
        b.y1 -= 0.5f;
        ENSURE_MSG(inside(b, plot, 0.01f),
                   "a line at (%.1f, %.1f)-(%.1f, %.1f) leaves the plot "
                   "(%.1f, %.1f)-(%.1f, %.1f)",
                   b.x0, b.y0, b.x1, b.y1, plot.x0, plot.y0, plot.x1, plot.y1);
        if (series_of(v[0].rgba) >= 0) {
            data[nd++] = b;
            ++curves;
        } else {
            ++grid;
        }
    }
    ENSURE_MSG(log_axis ? curves > 0 && areas == 0 : areas > 0 && curves == 0,
               "%d areas, %d curves", areas, curves);
    ENSURE(grid >= 2 * 3 && values > 0 && nt > 0);
    int crossed = 0;
    for (size_t i = 0; i < nt; ++i) {
        for (size_t j = 0; j < nd; ++j) {
            if (overlap(text[i], data[j])) {
                if (crossed++ == 0) {
                    fprintf(stderr,
                            "  %s axis, scale %g, %gx%g: a glyph at (%.1f, %.1f)-(%.1f, "
                            "%.1f) under a curve at (%.1f, %.1f)-(%.1f, %.1f)\n",
                            log_axis ? "log" : "linear", scale, w, h, text[i].x0, text[i].y0,
                            text[i].x1, text[i].y1, data[j].x0, data[j].y0, data[j].x1, data[j].y1);
                }
            }
        }
        /* every glyph in the legend line, or in the gutter */
        ENSURE_MSG(text[i].y1 <= legend_end || inside(text[i], gutter, 0.01f),
                   "a glyph at (%.1f, %.1f)-(%.1f, %.1f) is neither in the legend nor the gutter",
                   text[i].x0, text[i].y0, text[i].x1, text[i].y1);
    }
    ENSURE_MSG(crossed == 0, "%d glyphs of the axis or legend under the curves", crossed);
    /* the plot: right of the gutter, below the legend, the rest of the rectangle */
    ENSURE(l.px > l.gutter_x + l.gutter_w && l.gutter_x >= x);
    ENSURE(l.py >= legend_end);
    ENSURE(l.px + l.pw <= x + w && l.py + l.ph <= y + h);
    ENSURE_MSG(l.legend_lines == (w >= 400.0f * scale ? 1 : 3), "%d legend lines in %g px",
               l.legend_lines, w);
    ENSURE_MSG(l.pw >= w - l.gutter_w - 20.0f * scale &&
                   l.ph >= h - (2.0f + (float)l.legend_lines) * RENDER_TEXT_LINE * scale,
               "plot %.1f x %.1f in a graph of %.1f x %.1f", l.pw, l.ph, w, h);
    free(text);
    free(data);
    free(d.tris.v);
    free(d.lines.v);
}

static void test_linear(void) {
    check_graph(0, 1.0f, 900.0f, 150.0f);
    check_graph(0, 2.0f, 1800.0f, 300.0f);
    check_graph(0, 1.0f, 200.0f, 150.0f); /* beside the map panels: the narrowest */
}

static void test_log(void) {
    check_graph(1, 1.0f, 900.0f, 150.0f);
    check_graph(1, 2.0f, 1800.0f, 300.0f);
    check_graph(1, 2.0f, 400.0f, 300.0f);
}

/* The values' column is as wide as the widest value: wider for a log axis reaching 1e-4 ms than
 * for a linear one up to 2 ms. */
static float gutter_of(float small, int log_axis) {
    render_graph g;
    static const char *const names[1] = {"step"};
    render_graph_init(&g, 1, names, series_colors);
    render_graph_set_log(&g, log_axis);
    for (int i = 0; i < 10; ++i) {
        render_graph_push(&g, (const float[1]){i % 2 ? small : 1.5f});
    }
    render_draw2d d;
    memset(&d, 0, sizeof d);
    render_graph_draw(&g, &d, 0.0f, 0.0f, 900.0f, 150.0f, 1.0f, "ms/step");
    render_graph_layout l;
    render_graph_layout_of(&g, 0.0f, 0.0f, 900.0f, 150.0f, 1.0f, "ms/step", &l);
    free(d.tris.v);
    free(d.lines.v);
    return l.gutter_w;
}

static void test_gutter_fits_values(void) {
    const float lin = gutter_of(1.0f, 0), log = gutter_of(2e-4f, 1);
    const float one = render_text_width("1", 1.0f), two = render_text_width("2", 1.0f);
    ENSURE_MSG(lin == (one > two ? one : two), "linear (0, 1, 2): %.1f px", lin);
    ENSURE_MSG(log == render_text_width("0.0001", 1.0f), "log: %.1f px", log);
}

static const ensure_test tests[] = {
    {"linear", test_linear},
    {"log", test_log},
    {"gutter_fits_values", test_gutter_fits_values},
};

ENSURE_MAIN(tests)
