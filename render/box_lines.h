/* SPDX-License-Identifier: MIT
 * nbsim — the simulation box as its twelve edges. */
#ifndef RENDER_BOX_LINES_H
#define RENDER_BOX_LINES_H

#include "gl.h"
#include "nbsim/base.h"

typedef struct {
    GLuint program, vao, vbo;
    GLint u_view_proj, u_color;
    float half; /* half-width the vertex buffer holds */
} render_box_lines;

sim_status render_box_lines_create(render_box_lines *b, sim_error *err);
void render_box_lines_destroy(render_box_lines *b);
/* Draws the cube [-half, half]^3; view_proj is a column-major 4x4 matrix. */
void render_box_lines_draw(render_box_lines *b, float half, const float view_proj[16],
                           const float rgba[4]);

#endif /* RENDER_BOX_LINES_H */
