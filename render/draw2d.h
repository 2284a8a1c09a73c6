/* SPDX-License-Identifier: MIT
 * nbsim — a batch of 2-D overlay geometry in pixels (origin top left): filled triangles and
 * lines with per-vertex colour, collected during a frame and drawn in two calls by flush(). */
#ifndef RENDER_DRAW2D_H
#define RENDER_DRAW2D_H

#include "gl.h"
#include "nbsim/base.h"

typedef struct {
    float x, y;
    float rgba[4];
} render_vertex2d;

typedef struct {
    render_vertex2d *v;
    size_t count, capacity;
} render_vertex2d_list;

typedef struct {
    GLuint program, vao, vbo;
    GLint u_viewport;
    size_t vbo_capacity;        /* vertices */
    render_vertex2d_list tris;  /* GL_TRIANGLES */
    render_vertex2d_list lines; /* GL_LINES, drawn after the triangles */
    int out_of_memory;
} render_draw2d;

sim_status render_draw2d_create(render_draw2d *d, sim_error *err);
void render_draw2d_destroy(render_draw2d *d);

void render_draw2d_rect(render_draw2d *d, float x, float y, float w, float h, const float rgba[4]);
/* A quad with its own colour per corner (top left, top right, bottom right, bottom left). */
void render_draw2d_quad(render_draw2d *d, const float xy[4][2], const float rgba[4][4]);
void render_draw2d_line(render_draw2d *d, float x0, float y0, float x1, float y1,
                        const float rgba[4]);
/* Draws everything collected (blended, no depth test) on a width x height framebuffer, then
 * empties the batch. */
void render_draw2d_flush(render_draw2d *d, int width, int height);

#endif /* RENDER_DRAW2D_H */
