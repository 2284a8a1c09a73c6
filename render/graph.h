/* SPDX-License-Identifier: MIT
 * nbsim — a rolling graph of the last frames' timings: up to four series stacked as areas
 * (their sum is the frame's total), a y axis that rescales smoothly to "nice" values, and
 * labelled vertical marks at chosen frames (e.g. where the thread map changed). On a log axis
 * the series are drawn as separate lines, so one that is a thousand times smaller still shows.
 * Mark labels never overlap: they are staggered into rows, shortened ("pair: rm" -> "rm") when a
 * row has no room, and counted in the corner when neither fits. The axis's values sit in a
 * gutter left of the plot and its unit on the legend line, so no curve is drawn over them. */
#ifndef RENDER_GRAPH_H
#define RENDER_GRAPH_H

#include "draw2d.h"

#define RENDER_GRAPH_CAPACITY 300 /* frames shown */
#define RENDER_GRAPH_MAX_SERIES 4
#define RENDER_GRAPH_LABEL 48

typedef struct {
    int series;
    char names[RENDER_GRAPH_MAX_SERIES][24];
    float colors[RENDER_GRAPH_MAX_SERIES][4];
    float values[RENDER_GRAPH_CAPACITY][RENDER_GRAPH_MAX_SERIES];
    char marks[RENDER_GRAPH_CAPACITY][RENDER_GRAPH_LABEL]; /* "" = no mark at that frame */
    char pending_mark[RENDER_GRAPH_LABEL];
    int head;      /* slot the next sample goes to */
    int count;     /* samples held, up to RENDER_GRAPH_CAPACITY */
    float y_max;   /* current top of the y axis, in the samples' unit */
    int log_scale; /* y axis in decades, series as lines */
    float log_lo;  /* log axis: bottom decade (a power of ten) */
} render_graph;

void render_graph_init(render_graph *g, int series, const char *const names[],
                       const float colors[][4]);
void render_graph_clear(render_graph *g);
/* Labels the next pushed sample with a vertical mark. A later call before the push replaces
 * the label (only the newest change matters). */
void render_graph_mark(render_graph *g, const char *label);
void render_graph_push(render_graph *g, const float values[]);
/* Linear stacked areas (0) or a log axis with one line per series (1). */
void render_graph_set_log(render_graph *g, int on);
/* Where a graph drawn into (x, y, w, h) puts its parts [px]: the legend line (the axis's unit,
 * the series, the frame count) on top; below it the gutter, a column of the y axis's values
 * (right-aligned, each centred on its grid line), and right of the gutter the plot, which holds
 * the curves, the grid and the marks. Half a line above and below the plot keeps the top and
 * bottom values inside the rectangle. The gutter is as wide as the widest value of the axis's
 * current scale (set by the last draw); the legend takes as many lines as its items need. */
typedef struct {
    float legend_y;           /* top of the legend's first line */
    int legend_lines;         /* its lines: the series wrap onto more in a narrow graph */
    float gutter_x, gutter_w; /* the values' column */
    float px, py, pw, ph;     /* the plot */
} render_graph_layout;

void render_graph_layout_of(const render_graph *g, float x, float y, float w, float h,
                            float text_scale, const char *unit, render_graph_layout *out);
/* Draws the graph into the rectangle (x, y, w, h) [px]; `unit` names the y axis ("ms"). */
void render_graph_draw(render_graph *g, render_draw2d *d, float x, float y, float w, float h,
                       float text_scale, const char *unit);

#endif /* RENDER_GRAPH_H */
