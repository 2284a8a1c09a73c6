/* SPDX-License-Identifier: MIT
 * nbsim — a small RGB canvas for the map pictures: filled rectangles, stb_easy_font text
 * rasterised from its quads, and a PNG writer that never leaves a partial file. */
#ifndef APP_MAP_CANVAS_H
#define APP_MAP_CANVAS_H

#include <stdint.h>

#include "map_palette.h"
#include "nbsim/base.h"

typedef struct {
    int w, h;
    uint8_t *px; /* w * h * 3 bytes, rows top to bottom */
} app_canvas;

/* A white canvas; SIM_OUT_OF_MEMORY when it cannot be allocated. */
sim_status app_canvas_init(app_canvas *c, int w, int h, sim_error *err);
void app_canvas_free(app_canvas *c);

/* Fills [x, x + w) x [y, y + h), clipped to the canvas. */
void app_canvas_fill(app_canvas *c, int x, int y, int w, int h, render_rgb col);

/* Text with its top-left corner at (x, y), each font pixel scale x scale canvas pixels
 * (glyphs are about 6 x 7 font pixels). Returns the width drawn. */
int app_canvas_text(app_canvas *c, int x, int y, int scale, render_rgb col, const char *text);
int app_canvas_text_width(const char *text, int scale);
enum { APP_CANVAS_TEXT_HEIGHT = 7 }; /* font pixels per line, before scaling */

/* Writes the canvas as PNG: to a temporary file beside path, renamed onto path only when
 * complete, so a failure leaves neither a partial file nor a clobbered old one.
 * SIM_IO with a message naming path and the cause. */
sim_status app_canvas_write_png(const app_canvas *c, const char *path, sim_error *err);

#endif /* APP_MAP_CANVAS_H */
