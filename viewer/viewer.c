/* SPDX-License-Identifier: MIT
 * nbsim — the viewer loop: poll input, run a frame of the simulation, hand its positions to GL
 * (through CUDA-GL interop when it can, else through the host), draw, overlay, swap. */
#define _POSIX_C_SOURCE 200809L
#include "viewer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "nbsim/scene.h"
#include "text.h"
#include "viewer_internal.h"

#define MESSAGE_SECONDS 6.0

double viewer_now(void) {
    return glfwGetTime();
}

const sim_run_info *viewer_info(const viewer_state *v) {
    return sim_session_info(v->run.session);
}

/* The run pipeline's notices, on screen and on stderr. */
static void show_notice(void *ctx, const char *line) {
    viewer_message(ctx, "%s", line);
}

void viewer_message(viewer_state *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->message, sizeof v->message, fmt, ap);
    va_end(ap);
    v->message_until = viewer_now() + MESSAGE_SECONDS;
    fprintf(stderr, "nbsim: %s\n", v->message);
}

static void tick_clock(viewer_state *v, double now) {
    v->fps_window_frames++;
    if (now - v->fps_window_s >= 0.5) {
        v->fps = (double)v->fps_window_frames / (now - v->fps_window_s);
        v->fps_window_s = now;
        v->fps_window_frames = 0;
    }
    if (now - v->title_updated_s >= 0.25) {
        viewer_update_title(v);
        v->title_updated_s = now;
    }
}

static sim_status create_renderers(viewer_state *v, sim_error *err) {
    sim_status st = render_spheres_create(&v->spheres, err);
    if (st == SIM_OK) {
        st = render_box_lines_create(&v->box, err);
    }
    if (st == SIM_OK) {
        st = render_background_create(&v->background, err);
    }
    if (st == SIM_OK) {
        st = render_draw2d_create(&v->d2, err);
    }
    if (st != SIM_OK) {
        return st;
    }
    v->colormap_tex = render_colormap_texture();
    render_gpu_timer_create(&v->gpu_timer);
    SIM_TRY(viewer_inset_create(v, err));
    static const char *const names[4] = {"pair", "triplet", "integrate", "sort, cull, lists"};
    static const float colors[4][4] = {{0.98f, 0.60f, 0.20f, 0.90f},
                                       {0.35f, 0.62f, 0.98f, 0.90f},
                                       {0.45f, 0.85f, 0.45f, 0.90f},
                                       {0.80f, 0.50f, 0.95f, 0.90f}};
    render_graph_init(&v->graph, 4, names, colors);
    render_autorange_init(&v->range[VIEWER_COLOR_SPEED], 1);
    render_autorange_init(&v->range[VIEWER_COLOR_RADIUS], 0);
    render_autorange_init(&v->range[VIEWER_COLOR_INDEX], 0);
    render_autorange_init(&v->range[VIEWER_COLOR_SPIN], 1);
    static const float no_up[3] = {0.0f, 0.0f, 0.0f};
    render_camera_init(&v->camera, no_up);
    return viewer_rebuild_bodies(v, err);
}

static void destroy_all(viewer_state *v) {
    if (v->window.handle != NULL) {
        render_bodies_destroy(&v->bodies);
        render_spheres_destroy(&v->spheres);
        render_box_lines_destroy(&v->box);
        render_background_destroy(&v->background);
        render_draw2d_destroy(&v->d2);
        render_gpu_timer_destroy(&v->gpu_timer);
        viewer_inset_destroy(v);
        if (v->colormap_tex) {
            glDeleteTextures(1, &v->colormap_tex);
        }
        render_window_close(&v->window);
    }
    render_text_release();
    sim_run_stats_free(&v->run.stats);
    sim_session_close(v->run.session);
    v->run.session = NULL;
}

static void print_summary(viewer_state *v) {
    double seconds = v->last_frame_s - v->started_s;
    printf("nbsim viewer: %ld frame%s drawn in %.2f s (%.1f frames/s), %ld simulated; N = %u; "
           "positions: %s; render %.3f ms/frame (%s); GL: %s\n",
           v->frames_drawn, v->frames_drawn == 1 ? "" : "s", seconds,
           seconds > 0.0 ? (double)v->frames_drawn / seconds : 0.0, v->frames_simulated,
           viewer_info(v)->n, v->bodies.mode, v->smooth.render_ms,
           v->gpu_timer.last_ms >= 0.0 ? "GPU timer" : "host clock", v->window.gl_renderer);
    if (v->render_only_frames > 0 && v->render_only_s > 0.0) {
        printf("nbsim viewer: %ld frame%s drawn without a step (paused) at %.1f frames/s\n",
               v->render_only_frames, v->render_only_frames == 1 ? "" : "s",
               (double)v->render_only_frames / v->render_only_s);
    }
    if (v->run.stats.count > 0) {
        sim_run_stats_print(&v->run.stats, viewer_info(v), stdout);
    }
    viewer_compare_print(v, stdout);
    fflush(stdout);
}

static void finish(viewer_state *v, viewer_outcome *outcome) {
    const viewer_settings *o = v->settings;
    sim_error err;
    sim_error_clear(&err);
    if (v->run.log.file != NULL && viewer_log_stop(v, &err) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        v->failed = 1;
    }
    if (v->frames_drawn > 0 && !o->quiet) {
        print_summary(v);
    }
    if (v->run.stats.count > 0 && o->summary_path[0]) {
        const int stop_signal = o->stop_signal();
        const sim_run_end end = {0,
                                 v->session.seed,
                                 sim_scene_is_builtin(viewer_info(v)->scene),
                                 stop_signal     ? "interrupted"
                                 : v->sim_failed ? "unstable"
                                                 : "done",
                                 0,
                                 stop_signal ? o->signal_name(stop_signal) : "",
                                 v->last_frame_s - v->started_s};
        if (sim_run_stats_write_json_maps(&v->run.stats, viewer_info(v), &end,
                                          viewer_compare_table(v), o->summary_path,
                                          &err) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", err.message);
            v->failed = 1;
        }
    }
    /* --save-state: the state the window showed last, unless it had blown up. */
    if (o->save_state_path[0] && v->sim_failed) {
        fprintf(stderr, "nbsim: --save-state %s not written: the simulation had stopped (%s)\n",
                o->save_state_path, "a blow-up is not worth resuming");
    } else if (o->save_state_path[0]) {
        if (sim_session_save_state(v->run.session, o->save_state_path, &err) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", err.message);
            v->failed = 1;
        } else if (!o->quiet) {
            fprintf(stderr, "nbsim: state written to %s\n", o->save_state_path);
        }
    }
    outcome->failed = v->failed;
    outcome->signal = o->stop_signal();
    destroy_all(v);
}

/* Writes the screenshots due this frame (after drawing, before the swap). */
static void take_screenshots(viewer_state *v, int last) {
    const viewer_settings *o = v->settings;
    sim_error err;
    sim_error_clear(&err);
    if (v->screenshot_requested) {
        v->screenshot_requested = 0;
        if (viewer_screenshot(v, NULL, &err) != SIM_OK) {
            viewer_message(v, "%s", err.message); /* interactive: say so and keep running */
        }
    }
    if (last && o->screenshot_path[0]) {
        if (viewer_screenshot(v, o->screenshot_path, &err) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", err.message);
            v->failed = 1; /* a scripted run depends on it */
        } else if (!o->quiet) {
            fprintf(stderr, "nbsim: screenshot written to %s\n", o->screenshot_path);
        }
    }
}

static void run_loop(viewer_state *v) {
    const viewer_settings *o = v->settings;
    v->started_s = v->last_frame_s = v->fps_window_s = viewer_now();
    int stepped = 1; /* whether the previous frame advanced the simulation */
    for (;;) {
        glfwPollEvents();
        if (glfwWindowShouldClose(v->window.handle) || o->stop_signal()) {
            v->quit = 1;
        }
        if (v->quit) {
            viewer_sweep_cancel(v, "quit"); /* the summary names the user's maps */
        }
        double now = viewer_now();
        float dt = (float)(now - v->last_frame_s);
        v->last_frame_s = now;
        if (!stepped && v->frames_drawn > 0) {
            v->render_only_frames++;
            v->render_only_s += dt;
        }
        /* On a quit request one more frame is drawn, without a step, so that --screenshot
         * captures what the user last saw. --exit-after F simulates and draws F frames. */
        int last = v->quit || (o->exit_after > 0 && v->frames_drawn + 1 >= o->exit_after);
        stepped = !v->quit && viewer_simulate(v);
        const double simulated_s = viewer_now();
        render_window_update_size(&v->window);
        if (v->window.fb_width <= 0 || v->window.fb_height <= 0) {
            /* Minimised: nothing to draw; do not spin, but keep counting frames so that a
             * scripted run still ends. */
            if (last && o->screenshot_path[0]) {
                fprintf(stderr, "nbsim: no screenshot: the window is minimised\n");
                v->failed = 1;
            }
            v->frames_drawn++;
            if (last) {
                break;
            }
            glfwWaitEventsTimeout(0.05);
            continue;
        }
        viewer_export_bodies(v);
        viewer_inset_update(v);
        render_camera_update(&v->camera, dt);
        viewer_draw_scene(v);
        viewer_draw_overlay(v);
        take_screenshots(v, last);
        const double drawn_s = viewer_now();
        glfwSwapBuffers(v->window.handle);
        const double swapped_s = viewer_now();
        const double gl_ms = v->gpu_timer.last_ms >= 0.0 ? v->gpu_timer.last_ms : 0.0;
        const viewer_frame_clock clock = {v->frame_steps,
                                          (simulated_s - now) * 1e3,
                                          (drawn_s - simulated_s) * 1e3 + gl_ms,
                                          (swapped_s - drawn_s) * 1e3,
                                          (swapped_s - now) * 1e3,
                                          v->vsync};
        viewer_pace_frame(v, &clock);
        v->frames_drawn++;
        tick_clock(v, viewer_now());
        if (last) {
            break;
        }
    }
}

VIEWER_EXPORT void viewer_run(const viewer_settings *settings, viewer_outcome *outcome) {
    static viewer_state viewer; /* large (graph history); one viewer per process */
    viewer_state *v = &viewer;
    memset(v, 0, sizeof *v);
    outcome->open_status = SIM_OK;
    outcome->failed = 0;
    outcome->signal = 0;
    const viewer_settings *o = v->settings = settings;
    /* The viewer's own defaults: without --pair-map / --tile, the autotuner's cached choice for
     * this GPU and N, else the backend's fastest tile (the session says which it took). */
    v->session = *settings->session;
    v->session.cached_defaults = 1;
    v->session.interactive = 1;
    v->vsync = o->vsync;
    v->show_overlay = 1;
    v->show_graph = 1;
    v->color_mode = VIEWER_COLOR_SPEED;
    v->run.energy_every = v->session.energy_every;
    v->run.notice = o->quiet ? NULL : show_notice;
    v->run.warning = show_notice; /* --quiet hides notices, never warnings */
    v->run.notice_ctx = v;

    sim_error err;
    sim_error_clear(&err);
    /* The window first: a missing display should fail at once, not after building a scene. */
    render_window_desc desc = {"nbsim", o->width, o->height, o->vsync};
    if (render_window_open(&v->window, &desc, &err) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        outcome->failed = 1;
        return;
    }
    sim_status st = sim_session_open(&v->run.session, &v->session, &err);
    if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        destroy_all(v);
        outcome->open_status = st;
        return;
    }
    sim_run_notices(&v->run);
    if ((st = create_renderers(v, &err)) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        destroy_all(v);
        outcome->failed = 1;
        return;
    }
    if (o->log_path[0]) {
        if (viewer_log_start(v, o->log_path, &err) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", err.message);
            destroy_all(v);
            outcome->failed = 1;
            return;
        }
        v->log_path_used = 1;
    }
    if (o->dump_path[0]) {
        viewer_dump_toggle(v);
        if (viewer_info(v)->dump_path[0] == '\0') { /* could not start: said why */
            destroy_all(v);
            outcome->failed = 1;
            return;
        }
    }
    viewer_frame_bodies(v, 1);
    viewer_install_input(v);
    viewer_pace_init(v);
    viewer_compare_init(v);
    if (o->sweep != VIEWER_SWEEP_NONE) {
        v->compare.exit_when_done = o->sweep == VIEWER_SWEEP_EXIT;
        viewer_sweep_start(v);
    }
    v->dirty = 1;

    /* SIGINT, SIGTERM and SIGHUP close the window like Esc: log and summary complete. */
    o->signals_begin();
    run_loop(v);
    o->signals_end();
    finish(v, outcome);
}
