/* SPDX-License-Identifier: MIT
 * nbsim — the window and its OpenGL 3.3 core context (GLFW + GLEW). Every failure becomes one
 * sim_error message; GLFW's own error output is captured, never printed. */
#ifndef RENDER_WINDOW_H
#define RENDER_WINDOW_H

#include "gl.h"
#include "nbsim/base.h"

typedef struct {
    const char *title;
    int width, height; /* window size [screen coordinates] */
    int vsync;
} render_window_desc;

typedef struct {
    GLFWwindow *handle;
    int fb_width, fb_height;   /* framebuffer [px]; differs from the window size on HiDPI */
    int win_width, win_height; /* [screen coordinates], what cursor positions are in */
    char gl_renderer[128];
    char gl_version[128];
    int software; /* Mesa's llvmpipe/softpipe: no CUDA-GL interop possible */
} render_window;

sim_status render_window_open(render_window *w, const render_window_desc *desc, sim_error *err);
void render_window_close(render_window *w);
/* Refreshes the framebuffer and window sizes (after polling events). */
void render_window_update_size(render_window *w);
void render_window_set_vsync(render_window *w, int on);

#endif /* RENDER_WINDOW_H */
