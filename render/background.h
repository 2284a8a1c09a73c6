/* SPDX-License-Identifier: MIT
 * nbsim — the background gradient, drawn first without touching depth. */
#ifndef RENDER_BACKGROUND_H
#define RENDER_BACKGROUND_H

#include "gl.h"
#include "nbsim/base.h"

typedef struct {
    GLuint program, vao;
    GLint u_top, u_bottom;
} render_background;

sim_status render_background_create(render_background *bg, sim_error *err);
void render_background_destroy(render_background *bg);
void render_background_draw(render_background *bg, const float top[3], const float bottom[3]);

#endif /* RENDER_BACKGROUND_H */
