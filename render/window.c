/* SPDX-License-Identifier: MIT
 * nbsim — window and GL context. */
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GLFW reports errors through a callback; keep the latest so the caller can print one line. */
static char glfw_last_error[256];

static void on_glfw_error(int code, const char *text) {
    snprintf(glfw_last_error, sizeof glfw_last_error, "%s (GLFW error 0x%x)", text, code);
}

static const char *last_error(void) {
    return glfw_last_error[0] ? glfw_last_error : "unknown GLFW error";
}

sim_status render_window_open(render_window *w, const render_window_desc *desc, sim_error *err) {
    memset(w, 0, sizeof *w);
    glfw_last_error[0] = '\0';
    /* GLFW on Linux is built for X11 here; checking first avoids its "Failed to open display"
     * noise and gives the user the actionable message. */
    const char *display = getenv("DISPLAY");
    if (display == NULL || display[0] == '\0') {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "cannot open a window (no display: DISPLAY is not set); use --frames N "
                        "for a headless run");
    }
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "cannot open a window (%s); use --frames N for a headless run",
                        last_error());
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
    glfwWindowHint(GLFW_DEPTH_BITS, 24);
    w->handle = glfwCreateWindow(desc->width, desc->height, desc->title, NULL, NULL);
    if (w->handle == NULL) {
        sim_status st = sim_fail(err, SIM_UNSUPPORTED,
                                 "cannot create an OpenGL 3.3 core context (%s); the viewer "
                                 "needs OpenGL 3.3 — use --frames N for a headless run",
                                 last_error());
        glfwTerminate();
        return st;
    }
    glfwMakeContextCurrent(w->handle);
    glewExperimental = GL_TRUE; /* core profiles need it for GLEW to load all entry points */
    GLenum glew = glewInit();
    (void)glGetError(); /* glewInit leaves a harmless GL_INVALID_ENUM in core profiles */
    if (glew != GLEW_OK || !GLEW_VERSION_3_3) {
        const char *version = (const char *)glGetString(GL_VERSION);
        sim_status st =
            sim_fail(err, SIM_UNSUPPORTED, "OpenGL 3.3 is not available (%s; the driver offers %s)",
                     glew != GLEW_OK ? (const char *)glewGetErrorString(glew) : "GLEW finds no 3.3",
                     version ? version : "nothing");
        render_window_close(w);
        return st;
    }
    const char *renderer = (const char *)glGetString(GL_RENDERER);
    const char *version = (const char *)glGetString(GL_VERSION);
    snprintf(w->gl_renderer, sizeof w->gl_renderer, "%s", renderer ? renderer : "?");
    snprintf(w->gl_version, sizeof w->gl_version, "%s", version ? version : "?");
    w->software = strstr(w->gl_renderer, "llvmpipe") != NULL ||
                  strstr(w->gl_renderer, "softpipe") != NULL ||
                  strstr(w->gl_renderer, "Software") != NULL;
    render_window_set_vsync(w, desc->vsync);
    render_window_update_size(w);
    return SIM_OK;
}

void render_window_close(render_window *w) {
    if (w->handle != NULL) {
        glfwDestroyWindow(w->handle);
        w->handle = NULL;
        glfwTerminate();
    }
}

void render_window_update_size(render_window *w) {
    glfwGetFramebufferSize(w->handle, &w->fb_width, &w->fb_height);
    glfwGetWindowSize(w->handle, &w->win_width, &w->win_height);
}

void render_window_set_vsync(render_window *w, int on) {
    (void)w;
    glfwSwapInterval(on ? 1 : 0);
}
