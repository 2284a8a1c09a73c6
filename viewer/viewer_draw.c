/* SPDX-License-Identifier: MIT
 * nbsim — drawing the scene: background, spheres, box; GPU-timed. */
#include "colormap.h"
#include "viewer_internal.h"

void viewer_draw_scene(viewer_state *v) {
    static const float top[3] = {0.30f, 0.34f, 0.40f};
    static const float bottom[3] = {0.10f, 0.11f, 0.14f};
    static const float box_color[4] = {0.85f, 0.88f, 0.95f, 0.55f};
    /* the faces of periodic axes: warm, where the walls are cool grey */
    static const float periodic_color[4] = {1.0f, 0.62f, 0.18f, 0.85f};
    render_window *w = &v->window;
    glViewport(0, 0, w->fb_width, w->fb_height);
    glClearColor(bottom[0], bottom[1], bottom[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

    double host_start = viewer_now();
    render_gpu_timer_begin(&v->gpu_timer);
    render_background_draw(&v->background, top, bottom);

    float view[16], proj[16], view_proj[16];
    float aspect = w->fb_height > 0 ? (float)w->fb_width / (float)w->fb_height : 1.0f;
    render_camera_matrices(&v->camera, aspect, view, proj);
    for (int c = 0; c < 4; ++c) { /* column-major product proj * view */
        for (int r = 0; r < 4; ++r) {
            float s = 0.0f;
            for (int k = 0; k < 4; ++k) {
                s += proj[k * 4 + r] * view[c * 4 + k];
            }
            view_proj[c * 4 + r] = s;
        }
    }
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    render_sphere_style style;
    style.source = v->color_mode == VIEWER_COLOR_SPEED || v->color_mode == VIEWER_COLOR_SPIN
                       ? RENDER_COLOR_SCALAR
                   : v->color_mode == VIEWER_COLOR_RADIUS ? RENDER_COLOR_RADIUS
                                                          : RENDER_COLOR_INDEX;
    style.range[0] = v->range[v->color_mode].lo;
    style.range[1] = v->range[v->color_mode].hi;
    style.colormap =
        v->color_mode == VIEWER_COLOR_INDEX ? RENDER_COLORMAP_TURBO : RENDER_COLORMAP_VIRIDIS;
    render_spheres_draw(&v->spheres, &v->bodies, view, proj, v->colormap_tex, &style);
    /* Box edges after the spheres, depth-tested but not depth-writing, blended: spheres hide
     * the edges behind them and the edges never hide a sphere. */
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_FALSE);
    render_box_lines_draw(&v->box, (float)viewer_info(v)->params.box_half,
                          viewer_info(v)->params.periodic, view_proj, box_color, periodic_color);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    render_gpu_timer_end(&v->gpu_timer);
    v->render_host_ms = (viewer_now() - host_start) * 1e3;

    double gpu_ms = render_gpu_timer_poll(&v->gpu_timer);
    double render_ms = gpu_ms >= 0.0 ? gpu_ms : v->render_host_ms;
    viewer_smooth(&v->smooth.render_ms, render_ms, v->frames_drawn == 0);
}
