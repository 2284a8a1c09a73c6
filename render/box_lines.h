/* SPDX-License-Identifier: MIT
 * nbsim — the simulation box as its twelve edges, and the faces of its periodic axes outlined a
 * second time just inside the box in another colour (bodies leaving such a face enter at the
 * opposite one; the plain edges are walls' or shared). */
#ifndef RENDER_BOX_LINES_H
#define RENDER_BOX_LINES_H

#include "gl.h"
#include "nbsim/base.h"

typedef struct {
    GLuint program, vao, vbo;
    GLint u_view_proj, u_color;
    float half;   /* half-width the vertex buffer holds */
    int periodic; /* the periodic axes it holds (bit 0 x, 1 y, 2 z) */
    int periodic_vertices;
} render_box_lines;

sim_status render_box_lines_create(render_box_lines *b, sim_error *err);
void render_box_lines_destroy(render_box_lines *b);
/* Draws the cube [-half, half]^3 in rgba, and the faces of the axes in `periodic` (bit 0 x, 1 y,
 * 2 z) outlined inset in periodic_rgba; view_proj is a column-major 4x4 matrix. */
void render_box_lines_draw(render_box_lines *b, float half, int periodic, const float view_proj[16],
                           const float rgba[4], const float periodic_rgba[4]);

#endif /* RENDER_BOX_LINES_H */
