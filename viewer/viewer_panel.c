/* SPDX-License-Identifier: MIT
 * nbsim — a text panel of the viewer, measured and drawn by one layout (viewer_panel.h). */
#include "viewer_panel.h"

#include "text.h"

const float viewer_panel_fill[4] = {0.03f, 0.04f, 0.06f, 0.86f};
const float viewer_panel_head[4] = {1.0f, 1.0f, 1.0f, 1.0f};
const float viewer_panel_text[4] = {0.90f, 0.92f, 0.96f, 1.0f};
const float viewer_panel_faint[4] = {0.66f, 0.70f, 0.78f, 1.0f};

#define PAD_PX 8.0f     /* padding around the lines at text scale 1 */
#define LEADING_PX 3.0f /* between lines at text scale 1 */

void viewer_panel_begin(viewer_panel *p, render_draw2d *d, float x, float y, float scale) {
    const float pad = d != NULL ? PAD_PX * scale : 0.0f;
    p->d = d;
    p->x = x + pad;
    p->y = y + pad;
    p->scale = scale;
    p->line = (RENDER_TEXT_LINE + LEADING_PX) * scale;
    p->width = 0.0f;
}

float viewer_panel_put(const viewer_panel *p, float x, float y, const float *color,
                       const char *text) {
    return p->d != NULL ? render_text_draw(p->d, x, y, p->scale, color, text)
                        : render_text_width(text, p->scale);
}

void viewer_panel_line(viewer_panel *p, const float *color, const char *text) {
    const float w = viewer_panel_put(p, p->x, p->y, color, text);
    p->width = w > p->width ? w : p->width;
    p->y += p->line;
}

void viewer_panel_size(const viewer_panel *p, float *w, float *h) {
    const float pad = PAD_PX * p->scale;
    *w = p->width + 2.0f * pad;
    *h = p->y + 2.0f * pad;
}

void viewer_panel_background(render_draw2d *d, float x, float y, float w, float h) {
    render_draw2d_rect(d, x, y, w, h, viewer_panel_fill);
}
