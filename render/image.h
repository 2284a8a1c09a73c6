/* SPDX-License-Identifier: MIT
 * nbsim — a small RGBA image drawn as one textured quad in overlay pixels (origin top left):
 * uploaded when its content changes, drawn every frame, texels kept sharp (nearest), so a
 * 128 x 128 picture scaled to 400 px shows its cells as squares. */
#ifndef RENDER_IMAGE_H
#define RENDER_IMAGE_H

#include <stdint.h>

#include "gl.h"
#include "nbsim/base.h"

typedef struct {
    GLuint program, vao, tex;
    GLint u_rect, u_viewport, u_image;
    int width, height; /* texels; 0 before the first upload */
} render_image;

sim_status render_image_create(render_image *im, sim_error *err);
void render_image_destroy(render_image *im);
/* Replaces the image: width x height RGBA8 texels, rows top to bottom. */
void render_image_upload(render_image *im, int width, int height, const uint8_t *rgba);
/* Draws it into (x, y, w, h) [px] of a fb_width x fb_height framebuffer, alpha-blended. */
void render_image_draw(const render_image *im, float x, float y, float w, float h, int fb_width,
                       int fb_height);

#endif /* RENDER_IMAGE_H */
