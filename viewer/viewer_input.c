/* SPDX-License-Identifier: MIT
 * nbsim — keyboard and mouse: GLFW callbacks mapped onto viewer actions. The key list is
 * VIEWER_KEYS_HELP (viewer_keys.h), shared with --help and the help panel. */
#include "viewer_internal.h"

#include "nbsim/scene.h"

static viewer_state *viewer_of(GLFWwindow *w) {
    return glfwGetWindowUserPointer(w);
}

/* Keys that act once per press; auto-repeat is ignored so a held key does not flicker. */
static void on_press(viewer_state *v, int key, int shift) {
    switch (key) {
    case GLFW_KEY_ESCAPE: /* first ends a sweep, then quits */
        if (!viewer_sweep_cancel(v, "Esc")) {
            v->quit = 1;
        }
        break;
    case GLFW_KEY_Q:
        v->quit = 1;
        break;
    case GLFW_KEY_M: /* from the user's own maps, not the sweep's */
        viewer_sweep_cancel(v, "M");
        viewer_cycle_pair_map(v, shift ? -1 : 1);
        break;
    case GLFW_KEY_T:
        viewer_sweep_cancel(v, "T");
        viewer_cycle_triplet_map(v, shift ? -1 : 1);
        break;
    case GLFW_KEY_S:
        viewer_sweep_start(v);
        break;
    case GLFW_KEY_B:
        viewer_compare_toggle(v);
        break;
    case GLFW_KEY_I:
        viewer_inset_toggle(v);
        break;
    case GLFW_KEY_K:
        viewer_toggle_cull(v);
        break;
    case GLFW_KEY_Y:
        viewer_toggle_graph_log(v);
        break;
    case GLFW_KEY_0:
    case GLFW_KEY_KP_0:
        viewer_pace_auto(v);
        break;
    case GLFW_KEY_A:
        viewer_toggle_triplets(v);
        break;
    case GLFW_KEY_X:
        viewer_toggle_friction(v);
        break;
    case GLFW_KEY_SPACE:
        v->paused = !v->paused;
        break;
    case GLFW_KEY_R:
        viewer_reset(v);
        break;
    case GLFW_KEY_1:
    case GLFW_KEY_2:
    case GLFW_KEY_3:
    case GLFW_KEY_4:
    case GLFW_KEY_5:
    case GLFW_KEY_6:
    case GLFW_KEY_7:
    case GLFW_KEY_8:
    case GLFW_KEY_9:
        if (key - GLFW_KEY_1 < sim_scene_builtin_count()) { /* the built-in scenes, in order */
            viewer_set_scene(v, sim_scene_builtin_name(key - GLFW_KEY_1));
        }
        break;
    case GLFW_KEY_C:
        viewer_cycle_color(v);
        break;
    case GLFW_KEY_O:
        v->show_overlay = !v->show_overlay;
        break;
    case GLFW_KEY_G:
        v->show_graph = !v->show_graph;
        break;
    case GLFW_KEY_L:
        viewer_log_toggle(v);
        break;
    case GLFW_KEY_D:
        viewer_dump_toggle(v);
        break;
    case GLFW_KEY_P:
    case GLFW_KEY_F12:
        v->screenshot_requested = 1;
        break;
    case GLFW_KEY_V:
        viewer_toggle_vsync(v);
        break;
    case GLFW_KEY_H:
    case GLFW_KEY_F1:
        v->show_help = !v->show_help;
        break;
    case GLFW_KEY_HOME:
    case GLFW_KEY_F:
        viewer_fit_camera(v, 0);
        break;
    default:
        break;
    }
}

/* Keys that may repeat while held: stepping and steps per frame. */
static int on_repeatable(viewer_state *v, int key) {
    switch (key) {
    case GLFW_KEY_N:
    case GLFW_KEY_RIGHT:
        if (v->paused) {
            v->step_requested = 1;
        }
        return 1;
    case GLFW_KEY_EQUAL: /* '+' is Shift+'=' on most layouts; '=' alone counts too */
    case GLFW_KEY_KP_ADD:
        viewer_pace_manual(v, 1);
        return 1;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT:
        viewer_pace_manual(v, 0);
        return 1;
    default:
        return 0;
    }
}

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods) {
    (void)scancode;
    viewer_state *v = viewer_of(w);
    if (action == GLFW_RELEASE) {
        return;
    }
    if (on_repeatable(v, key) || action == GLFW_REPEAT) {
        return;
    }
    on_press(v, key, (mods & GLFW_MOD_SHIFT) != 0);
}

static void on_mouse_button(GLFWwindow *w, int button, int action, int mods) {
    (void)mods;
    viewer_state *v = viewer_of(w);
    int down = action == GLFW_PRESS;
    if (button == GLFW_MOUSE_BUTTON_LEFT) {
        v->orbiting = down;
    } else if (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) {
        v->panning = down;
    }
    glfwGetCursorPos(w, &v->cursor_x, &v->cursor_y);
}

static void on_cursor(GLFWwindow *w, double x, double y) {
    viewer_state *v = viewer_of(w);
    float dx = (float)(x - v->cursor_x), dy = (float)(y - v->cursor_y);
    v->cursor_x = x;
    v->cursor_y = y;
    if (v->orbiting) {
        render_camera_orbit(&v->camera, dx, dy);
    } else if (v->panning) {
        render_camera_pan(&v->camera, dx, dy, (float)v->window.win_height);
    }
}

static void on_scroll(GLFWwindow *w, double dx, double dy) {
    (void)dx;
    render_camera_zoom(&viewer_of(w)->camera, (float)dy);
}

void viewer_install_input(viewer_state *v) {
    GLFWwindow *w = v->window.handle;
    glfwSetWindowUserPointer(w, v);
    glfwSetKeyCallback(w, on_key);
    glfwSetMouseButtonCallback(w, on_mouse_button);
    glfwSetCursorPosCallback(w, on_cursor);
    glfwSetScrollCallback(w, on_scroll);
}
