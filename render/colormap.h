/* SPDX-License-Identifier: MIT
 * nbsim — perceptual colormaps as a small texture (one row each) and as host-side lookups
 * (the overlay's colour bar uses the same table as the spheres). */
#ifndef RENDER_COLORMAP_H
#define RENDER_COLORMAP_H

#include "gl.h"

typedef enum {
    RENDER_COLORMAP_VIRIDIS = 0, /* perceptually uniform, monotone lightness: magnitudes */
    RENDER_COLORMAP_TURBO = 1,   /* high contrast rainbow: telling neighbours apart (index) */
    RENDER_COLORMAP_COUNT
} render_colormap;

#define RENDER_COLORMAP_SIZE 256

/* rgb in [0, 1] for t in [0, 1] (clamped). */
void render_colormap_eval(render_colormap map, float t, float rgb[3]);
/* RENDER_COLORMAP_SIZE x RENDER_COLORMAP_COUNT RGB texture, linear filtering. */
GLuint render_colormap_texture(void);
/* Texture v coordinate of a map's row centre. */
float render_colormap_row_coord(int map);

#endif /* RENDER_COLORMAP_H */
