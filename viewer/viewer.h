/* SPDX-License-Identifier: MIT
 * nbsim — the viewer module's entry point. The module (nbsim-viewer.so, beside the program) is
 * loaded with dlopen only when a window is wanted; app/run/viewer_loader.c finds this symbol and
 * hands it what it needs from the program as plain settings: the session to open (the library's
 * public face, nbsim/session.h), the window, the outputs, and the program's stop signals. The
 * viewer includes nothing of app/. */
#ifndef VIEWER_H
#define VIEWER_H

#include "nbsim/session.h"

#define VIEWER_MODULE "nbsim-viewer.so"
#define VIEWER_ENTRY "viewer_run"

#if defined(__GNUC__)
#define VIEWER_EXPORT __attribute__((visibility("default")))
#else
#define VIEWER_EXPORT
#endif

/* --sweep: time every map at start, as the S key does (and quit when done). */
enum { VIEWER_SWEEP_NONE, VIEWER_SWEEP_START, VIEWER_SWEEP_EXIT };

typedef struct {
    /* The simulation: the viewer opens it with cached_defaults and interactive set (without a
     * named pair map or tile, the autotuner's cached choice for this GPU and N). config.stop is
     * the stop flag below. */
    const sim_session_config *session;
    /* the window */
    int width, height;
    int vsync;
    long exit_after; /* > 0: quit after rendering that many frames */
    int sweep;       /* VIEWER_SWEEP_* */
    /* outputs: "" for none */
    const char *log_path;        /* the timing log from the start (L records later ones) */
    const char *summary_path;    /* the run summary at exit, with the map comparison */
    const char *save_state_path; /* the state shown last, at exit */
    const char *dump_path;       /* a trajectory from the start (D records later ones) */
    int dump_every;              /* frames between recorded frames */
    const char *screenshot_path; /* a PNG of the last frame, at exit */
    int quiet;                   /* no summary on stdout, no confirmations */
    /* The program's stop signals (SIGINT, SIGTERM, SIGHUP): installed around the window loop,
     * the signal that asked to stop (0: none), and its name for the summary. */
    void (*signals_begin)(void);
    void (*signals_end)(void);
    int (*stop_signal)(void);
    const char *(*signal_name)(int sig);
    /* The most bodies drawn (0: VIEWER_DRAW_MAX); above it, an even sample of them. */
    long draw_max;
} viewer_settings;

/* The bodies the viewer draws by default: GL buffers of 20 bytes a body (320 MB) beside the
 * simulation's own memory on the GPU, and as many spheres as it draws at an interactive rate.
 * Above it the viewer draws every k-th body and the overlay says so. */
#define VIEWER_DRAW_MAX 16777216

/* How the viewer ended, for the program's exit code. */
typedef struct {
    sim_status open_status; /* != SIM_OK: the session could not be opened (nothing ran) */
    int failed;             /* a runtime failure: no display or OpenGL 3.3, a shader, the log,
                               a trajectory, the summary, the state or the --screenshot at exit */
    int signal;             /* a stop signal closed the window (the run was otherwise fine) */
} viewer_outcome;

/* Opens the window on the settings' session and runs until the user quits, exit_after frames
 * were drawn, or a stop signal. Says what went wrong on stderr, in one line each. */
VIEWER_EXPORT void viewer_run(const viewer_settings *settings, viewer_outcome *outcome);

typedef void (*viewer_run_fn)(const viewer_settings *settings, viewer_outcome *outcome);

#endif /* VIEWER_H */
