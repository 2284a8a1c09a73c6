/* SPDX-License-Identifier: MIT
 * nbsim — private to the viewer module: its state, shared by the loop (viewer.c), the input
 * handlers (viewer_input.c), the actions they trigger (viewer_actions.c), the overlay
 * (viewer_overlay.c) and the files it writes (viewer_files.c). */
#ifndef VIEWER_INTERNAL_H
#define VIEWER_INTERNAL_H

#include "autorange.h"
#include "background.h"
#include "bodies.h"
#include "box_lines.h"
#include "camera.h"
#include "draw2d.h"
#include "gpu_timer.h"
#include "graph.h"
#include "image.h"
#include "nbsim/map_compare.h"
#include "nbsim/map_cover.h"
#include "nbsim/run_loop.h"
#include "nbsim/size_limits.h"
#include "spheres.h"
#include "viewer.h"
#include "window.h"

typedef enum {
    VIEWER_COLOR_SPEED,
    VIEWER_COLOR_RADIUS,
    VIEWER_COLOR_INDEX,
    VIEWER_COLOR_SPIN, /* angular speed |w| */
    VIEWER_COLOR_COUNT
} viewer_color_mode;

/* Bodies sampled for the automatic colour range. */
#define VIEWER_RANGE_SAMPLES 4096

/* Exponential moving averages of what the overlay prints, so numbers are readable. */
typedef struct {
    double pair_ms, triplet_ms, integrate_ms, step_ms; /* per step */
    double sort_ms, cull_ms;                           /* per step; 0 when not culled */
    double nlist_ms; /* per step: the neighbour lists' checks and rebuilds; 0: no lists */
    double triplet_cull_ms; /* per step: the ATM cut-off's lists or tile triples; 0: none */
    double phase_ms[SIM_FRAME_PHASE_COUNT]; /* per step, each phase (they add up to step_ms) */
    double render_ms;
    int valid;
} viewer_smoothed;

/* viewer_pace.c: steps per frame chosen so a frame fits the target rate (or set by hand). */
#define VIEWER_PACE_HISTORY 7
typedef struct {
    int automatic;
    const char *manual_why; /* who set them by hand: "+/-", "--steps-per-frame", ... */
    double target_fps;
    double step_ms;  /* host time per step: kernels, synchronisation, energies [ms] */
    double other_ms; /* time per frame outside the simulation [ms] */
    double sim_rate; /* simulated seconds per wall-clock second (smoothed) */
    /* The last frames' costs: their medians are step_ms and other_ms, so one slow frame (an
     * energy pass, a busy machine) does not swing the steps. */
    double step_hist[VIEWER_PACE_HISTORY], other_hist[VIEWER_PACE_HISTORY];
    int hist_count, hist_next;
    int frames_since_change;
    int valid;
} viewer_pace;

/* One drawn frame's host clock, for the pacing. */
typedef struct {
    int steps;       /* steps the frame ran (0: none, or a single step while paused) */
    double sim_ms;   /* the simulation's part */
    double other_ms; /* export, drawing, overlay, + the GL timer's render time */
    double swap_ms;  /* the buffer swap */
    double frame_ms; /* the whole frame */
    int vsync;
} viewer_frame_clock;

/* viewer_compare.c: the live map comparison and the sweep (S). */
#define VIEWER_SWEEP_MAX (SIM_PAIR_CHOICE_COUNT + SIM_TRIPLET_MAP_COUNT)
typedef struct {
    sim_map_compare table;
    int show;
    int opened_once; /* the panel opens itself on the first M, T or S */
    int warm;        /* frames since the maps last changed (the first are warm-up) */
    int last_pair, last_triplet, last_triplets_on;
    int paper_exact[2][SIM_PAIR_CHOICE_COUNT]; /* paper float maps at this key: 1 exact, 0
                                                  wrong, -1 not checked yet */
    /* the sweep */
    int sweeping;
    int exit_when_done;
    int list_dim[VIEWER_SWEEP_MAX], list_map[VIEWER_SWEEP_MAX];
    int list_count, list_pos;
    int round;           /* the sweep visits the list SWEEP_ROUNDS times */
    int measured_on_map; /* frames measured on the current sweep map */
    int frames_on_map;   /* frames run on it, warm-up included */
    double map_started_s;
    sim_pair_choice saved_pair;
    sim_triplet_map saved_triplet;
    int done_once; /* a sweep finished in this session */
} viewer_compare;

/* viewer_inset.c: the active maps' coverage of their domains, drawn as textures: [0] the pair
 * map's tile-pair triangle, [1] the triplet map's largest layer (while triplets run). */
typedef struct {
    int show;
    int ready; /* images created */
    render_image image[2], lit;
    sim_map_cover cover[2];
    uint8_t rgba[2][SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE * 4]; /* the covers as painted */
    int cover_valid[2], cover_map[2];
    uint32_t cover_n[2];
    int cover_levels[2]; /* the picture is the culling pass (1 or 2 levels), or 0: the map's */
    double lit_s;        /* when the lit tile pairs were last read [s] */
    int lit_cells;       /* cells lit this frame; -1: no list (culling off, or not available) */
    double lit_share[SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE]; /* sim_map_cover_light's */
    uint8_t lit_rgba[SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE * 4];
    sim_tile2 *pairs; /* this frame's interacting tile pairs (sim_session_tile_pairs) */
    uint64_t pairs_cap, pairs_count;
    char note[160];         /* what the lit cells mean, or why there are none */
    float image_rect[2][4]; /* where the last draw put each picture [px]; w = 0: not drawn */
} viewer_inset;

typedef struct viewer_state {
    const viewer_settings *settings; /* what the program asked */
    sim_session_config session;      /* what was opened: the settings' with the viewer's defaults */
    sim_run run; /* the session, the timing log (L), the statistics; the per-frame pipeline */

    /* rendering */
    render_window window;
    render_bodies bodies;
    int bodies_ready;
    uint32_t draw_every;   /* the bodies drawn: every draw_every-th (1: all; settings' draw_max) */
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
    int show_overlay, show_graph, show_help, graph_log;
    viewer_color_mode color_mode;
    int screenshot_requested;
    double friction_off[2]; /* friction and rolling friction the X key turned off (0: none) */

    /* simulation results */
    int dirty;      /* the bodies moved since they were last exported for drawing */
    int sim_failed; /* the last frame failed (e.g. unstable): paused until reset */
    sim_frame_timing timing;
    int have_timing;
    int frame_steps; /* steps the last frame ran for the pacing (0: none or a single step) */
    viewer_smoothed smooth;

    viewer_pace pace;
    viewer_compare compare;
    viewer_inset inset;

    /* timing log (L key, or --log from the start): recording while run.log.file != NULL */
    int log_path_used;  /* settings->log_path was written once: later recordings get new names */
    int dump_path_used; /* the same for settings->dump_path (D) */

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

    int failed; /* something the run depends on failed: the program exits 1 */
} viewer_state;

/* viewer_sim.c: one frame (or one step while paused) and where its timings go; returns 1 when
 * the simulation advanced. */
int viewer_simulate(viewer_state *v);
/* Exponential moving average; first: start at x. */
void viewer_smooth(double *avg, double x, int first);
void viewer_smooth_weight(double *avg, double x, int first, double weight);

/* viewer_bodies.c: the session's positions into the GL buffers (when they changed). */
void viewer_export_bodies(viewer_state *v);

/* viewer_draw.c: background, spheres and box, GPU-timed. */
void viewer_draw_scene(viewer_state *v);

/* viewer_actions.c: what the hotkeys do. */
void viewer_cycle_pair_map(viewer_state *v, int dir);
void viewer_cycle_triplet_map(viewer_state *v, int dir);
void viewer_toggle_triplets(viewer_state *v);
void viewer_toggle_friction(viewer_state *v);
void viewer_set_scene(viewer_state *v, const char *scene);
void viewer_reset(viewer_state *v);
void viewer_cycle_color(viewer_state *v);
void viewer_toggle_vsync(viewer_state *v);
void viewer_toggle_graph_log(viewer_state *v);
void viewer_toggle_cull(viewer_state *v);
/* (Re)creates the GL body buffers for the session's N; interop when the backend is CUDA. */
sim_status viewer_rebuild_bodies(viewer_state *v, sim_error *err);
/* Points the camera's up axis against gravity; fit and frame also aim it (immediate: no
 * easing). The camera on the whole box (Home, F): */
void viewer_aim_up(viewer_state *v);
void viewer_fit_camera(viewer_state *v, int immediate);
/* The camera on the bodies' bounds (a scene's start): a heap at the bottom of a big box fills the
 * view; on the box when the positions cannot be read. */
void viewer_frame_bodies(viewer_state *v, int immediate);

/* viewer_pace.c: automatic steps per frame. */
void viewer_pace_init(viewer_state *v);
/* Forget the costs (a new scene or triplets on: the step costs something else now); in
 * automatic mode, start again from one step per frame. */
void viewer_pace_restart(viewer_state *v);
void viewer_pace_frame(viewer_state *v, const viewer_frame_clock *c);
void viewer_pace_manual(viewer_state *v, int up); /* + / -: by hand, doubling or halving */
void viewer_pace_auto(viewer_state *v);           /* 0: automatic again */
void viewer_pace_describe(const viewer_state *v, char *out, size_t cap);

/* viewer_compare.c: the map comparison panel (B) and the sweep (S). */
void viewer_compare_init(viewer_state *v);
/* A simulated frame's kernel times, for the map that ran it; advances a sweep. */
void viewer_compare_frame(viewer_state *v, const sim_frame_timing *t);
void viewer_compare_toggle(viewer_state *v);
void viewer_compare_open(viewer_state *v); /* shows the panel the first time maps are switched */
void viewer_sweep_start(viewer_state *v);
/* Stops a running sweep and restores the user's maps; returns 0 when none was running. */
int viewer_sweep_cancel(viewer_state *v, const char *why);
/* The panel's size at text scale `scale` (measure) and drawing it at (x, y). */
void viewer_compare_measure(viewer_state *v, float scale, float *w, float *h);
void viewer_compare_draw(viewer_state *v, float x, float y, float scale);
/* The table for the summary JSON, or NULL when nothing was measured; and as text. */
const sim_map_compare *viewer_compare_table(const viewer_state *v);
void viewer_compare_print(const viewer_state *v, FILE *out);

/* viewer_inset.c: the map inset (I). */
sim_status viewer_inset_create(viewer_state *v, sim_error *err);
void viewer_inset_destroy(viewer_state *v);
void viewer_inset_toggle(viewer_state *v);
/* Rebuilds the picture when the map or n changed, and this frame's lit tile pairs. */
void viewer_inset_update(viewer_state *v);
void viewer_inset_measure(viewer_state *v, float scale, float max_h, float *w, float *h);
/* The panel and captions (draw2d), then, after the batch is flushed, the images. */
void viewer_inset_draw(viewer_state *v, float x, float y, float scale, float max_h);
void viewer_inset_draw_images(viewer_state *v);

/* Tiles of rho bodies that hold n bodies (the last one may be partial). */
static inline uint32_t viewer_tiles(uint32_t n, uint32_t rho) {
    return (uint32_t)(((uint64_t)n + rho - 1u) / rho);
}

/* The culling mode of the contact kernel, for the comparison key and the inset: 0 until the
 * backend culls (issue 10). */
int viewer_cull(const viewer_state *v);

/* viewer_input.c */
void viewer_install_input(viewer_state *v);

/* viewer_overlay.c */
void viewer_draw_overlay(viewer_state *v);
void viewer_update_title(viewer_state *v);

/* viewer_files.c */
void viewer_log_toggle(viewer_state *v);
/* D: starts recording a trajectory (--dump the first time, else a timestamped .xyz), or stops
 * and says how many frames the file holds. */
void viewer_dump_toggle(viewer_state *v);
/* Starts recording to path, or to a fresh timestamped name when path is NULL or "". */
sim_status viewer_log_start(viewer_state *v, const char *path, sim_error *err);
/* Closes the log (renamed into place); returns its status. */
sim_status viewer_log_stop(viewer_state *v, sim_error *err);
/* Screenshot of the frame just drawn: to path, or a timestamped name when NULL. */
sim_status viewer_screenshot(viewer_state *v, const char *path, sim_error *err);

/* viewer.c: a message on screen for a few seconds, also printed on stderr. */
void viewer_message(viewer_state *v, const char *fmt, ...) SIM_PRINTF(2, 3);
/* What the session runs now (see sim_run_info). */
const sim_run_info *viewer_info(const viewer_state *v);
double viewer_now(void);

#endif /* VIEWER_INTERNAL_H */
