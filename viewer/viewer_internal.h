/* SPDX-License-Identifier: MIT
 * nbsim — private to the viewer module: its state, shared by the loop (viewer.c), the input
 * handlers (viewer_input.c), the actions they trigger (viewer_actions.c), the overlay
 * (viewer_overlay.c) and the files it writes (viewer_files.c). */
#ifndef APP_VIEWER_INTERNAL_H
#define APP_VIEWER_INTERNAL_H

#include "autorange.h"
#include "background.h"
#include "bodies.h"
#include "box_lines.h"
#include "camera.h"
#include "draw2d.h"
#include "gpu_timer.h"
#include "graph.h"
#include "run_loop.h"
#include "spheres.h"
#include "window.h"

typedef enum {
    VIEWER_COLOR_SPEED,
    VIEWER_COLOR_RADIUS,
    VIEWER_COLOR_INDEX,
    VIEWER_COLOR_COUNT
} viewer_color_mode;

/* Bodies sampled for the automatic colour range. */
#define VIEWER_RANGE_SAMPLES 4096

/* Exponential moving averages of what the overlay prints, so numbers are readable. */
typedef struct {
    double pair_ms, triplet_ms, integrate_ms, step_ms; /* per step */
    double render_ms;
    int valid;
} viewer_smoothed;

typedef struct app_viewer {
    const app_options *opt;
    app_run run; /* the session, the timing log (L), the statistics; the per-frame pipeline */

    /* rendering */
    render_window window;
    render_bodies bodies;
    int bodies_ready;
    char interop_off[256]; /* why interop is not used; "" while it may be tried */
    render_spheres spheres;
    render_box_lines box;
    render_background background;
    render_draw2d d2;
    render_graph graph;
    render_camera camera;
    render_gpu_timer gpu_timer;
    render_autorange range[VIEWER_COLOR_COUNT];
    float range_samples[VIEWER_RANGE_SAMPLES];
    double range_sampled_s; /* when the range was last sampled */
    GLuint colormap_tex;
    double render_host_ms; /* host clock around the draw calls, when GL timers are missing */

    /* what the user toggles */
    int paused, step_requested, quit, vsync;
    int show_overlay, show_graph, show_help;
    viewer_color_mode color_mode;
    int screenshot_requested;

    /* simulation results */
    int dirty;      /* the bodies moved since they were last exported for drawing */
    int sim_failed; /* the last frame failed (e.g. unstable): paused until reset */
    sim_frame_timing timing;
    int have_timing;
    viewer_smoothed smooth;

    /* timing log (L key, or --log from the start): recording while run.log.file != NULL */
    int log_path_used; /* opt->log_path was written once: later recordings get new names */

    /* mouse */
    int orbiting, panning;
    double cursor_x, cursor_y;

    /* on-screen message (errors, confirmations) */
    char message[512];
    double message_until; /* [s] glfwGetTime() */

    /* frame clock */
    long frames_drawn;
    long frames_simulated;   /* over all scenes (the session's counter restarts with each) */
    long render_only_frames; /* frames drawn without a step (paused): the viewer's own rate */
    double render_only_s;
    double started_s, last_frame_s, fps, fps_window_s, title_updated_s;
    long fps_window_frames;

    int exit_code;
} app_viewer;

/* viewer_sim.c: one frame (or one step while paused) and where its timings go; returns 1 when
 * the simulation advanced. */
int viewer_simulate(app_viewer *v);
/* Exponential moving average; first: start at x. */
void viewer_smooth(double *avg, double x, int first);

/* viewer_bodies.c: the session's positions into the GL buffers (when they changed). */
void viewer_export_bodies(app_viewer *v);

/* viewer_draw.c: background, spheres and box, GPU-timed. */
void viewer_draw_scene(app_viewer *v);

/* viewer_actions.c: what the hotkeys do. */
void viewer_cycle_pair_map(app_viewer *v, int dir);
void viewer_cycle_triplet_map(app_viewer *v, int dir);
void viewer_toggle_triplets(app_viewer *v);
void viewer_set_scene(app_viewer *v, const char *scene);
void viewer_reset(app_viewer *v);
void viewer_scale_steps(app_viewer *v, int up);
void viewer_cycle_color(app_viewer *v);
void viewer_toggle_vsync(app_viewer *v);
/* (Re)creates the GL body buffers for the session's N; interop when the backend is CUDA. */
sim_status viewer_rebuild_bodies(app_viewer *v, sim_error *err);
/* Points the camera's up axis against gravity; fit also frames the box (immediate: no easing). */
void viewer_aim_up(app_viewer *v);
void viewer_fit_camera(app_viewer *v, int immediate);

/* viewer_input.c */
void viewer_install_input(app_viewer *v);

/* viewer_overlay.c */
void viewer_draw_overlay(app_viewer *v);
void viewer_update_title(app_viewer *v);

/* viewer_files.c */
void viewer_log_toggle(app_viewer *v);
/* Starts recording to path, or to a fresh timestamped name when path is NULL or "". */
sim_status viewer_log_start(app_viewer *v, const char *path, sim_error *err);
/* Closes the log (renamed into place); returns its status. */
sim_status viewer_log_stop(app_viewer *v, sim_error *err);
/* Screenshot of the frame just drawn: to path, or a timestamped name when NULL. */
sim_status viewer_screenshot(app_viewer *v, const char *path, sim_error *err);

/* viewer.c: a message on screen for a few seconds, also printed on stderr. */
void viewer_message(app_viewer *v, const char *fmt, ...) SIM_PRINTF(2, 3);
/* What the session runs now (see app_run_info). */
const app_run_info *viewer_info(const app_viewer *v);
double viewer_now(void);

#endif /* APP_VIEWER_INTERNAL_H */
