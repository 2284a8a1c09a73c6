/* SPDX-License-Identifier: MIT
 * nbsim — a text panel of the viewer (the map comparison, the map inset): one layout function
 * both measures it (no draw target) and draws it, so the box always fits its lines. The panels'
 * shared colours live here. */
#ifndef VIEWER_PANEL_H
#define VIEWER_PANEL_H

#include "draw2d.h"

extern const float viewer_panel_fill[4];  /* the panel's background */
extern const float viewer_panel_head[4];  /* headings */
extern const float viewer_panel_text[4];  /* values */
extern const float viewer_panel_faint[4]; /* captions, key hints */

typedef struct {
    render_draw2d *d; /* NULL: measure only */
    float x, y;       /* where the next line starts (inside the padding) */
    float scale;      /* text scale */
    float line;       /* line height */
    float width;      /* the widest line so far, from x */
} viewer_panel;

/* A layout that measures (d NULL; from the origin) or draws at (x, y), the padding inside. */
void viewer_panel_begin(viewer_panel *p, render_draw2d *d, float x, float y, float scale);
/* Text at (x, y) in the panel's scale: drawn when the panel draws; its width either way. */
float viewer_panel_put(const viewer_panel *p, float x, float y, const float *color,
                       const char *text);
/* A line of text at the panel's current line; widens the panel and moves to the next line. */
void viewer_panel_line(viewer_panel *p, const float *color, const char *text);
/* The size a measured layout needs, padding included. */
void viewer_panel_size(const viewer_panel *p, float *w, float *h);
/* The background of a panel of that size at (x, y). */
void viewer_panel_background(render_draw2d *d, float x, float y, float w, float h);

#endif /* VIEWER_PANEL_H */
