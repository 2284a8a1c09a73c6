/* SPDX-License-Identifier: MIT
 * nbsim — GLSL programs from embedded sources; a compile or link failure returns the driver's
 * info log in the error message. */
#ifndef RENDER_SHADER_H
#define RENDER_SHADER_H

#include "gl.h"
#include "nbsim/base.h"

/* Compiles and links; `name` labels messages (e.g. "spheres"). *out is 0 on failure. */
sim_status render_program_create(const char *name, const char *vertex_src, const char *fragment_src,
                                 GLuint *out, sim_error *err);

#endif /* RENDER_SHADER_H */
