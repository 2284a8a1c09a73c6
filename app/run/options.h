/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line, parsed into what the user asked for: the session's
 * config (nbsim/session.h: scene, physics, backend, maps, GPUs, the run's length) and what only
 * the program does with it (outputs, progress, the viewer's window). The options are never
 * changed after parsing: the session resolves them (backend kind, autotuned maps, triplets for
 * `auto`, the default step) into its own settings. Physics flags override the scene's
 * parameters only when given. */
#ifndef APP_OPTIONS_H
#define APP_OPTIONS_H

#include <stdio.h>

#include "nbsim/output_file.h"
#include "nbsim/session.h"

#define APP_ENERGY_AUTO (-1)
#define APP_VIEWER_ENERGY_EVERY 30

typedef struct {
    /* What the session runs: --scene, --n, --seed, the physics flags, --triplets, --backend,
     * --pair-map, --triplet-map, --tile, --cull, --threads, --gpus, --rank, --world, --nccl-id,
     * and --frames (session.frames > 0: a headless run of that many frames; 0: the viewer). */
    sim_session_config session;
    /* outputs */
    char log_path[SIM_PATH_MAX];
    char summary_path[SIM_PATH_MAX];
    char save_state_path[SIM_PATH_MAX];
    char dump_path[SIM_PATH_MAX]; /* trajectory (.xyz, .lammpstrj, .nc), "" = none */
    int dump_every;               /* frames between dumped frames (>= 1) */
    char plot_path[SIM_PATH_MAX]; /* PNG of the timing log at the end of a headless run */
    int energy_every; /* energies in the log every K frames; 0 = never; APP_ENERGY_AUTO: every
                         frame headless, every APP_VIEWER_ENERGY_EVERY-th in the viewer (an
                         energy pass costs about a pair step); resolved into session */
    int quiet;        /* no progress bar, no notices; warnings and errors still show */
    int dry_run;      /* --dry-run: plan the GPU memory, print it, build nothing */
    /* viewer */
    long exit_after; /* > 0: quit after rendering that many frames */
    long draw_max;   /* the most bodies the viewer draws; 0: VIEWER_DRAW_MAX */
    char screenshot_path[SIM_PATH_MAX];
    int vsync;
    int width, height;
    int sweep; /* --sweep: VIEWER_SWEEP_* (viewer.h) */
    const char *viewer_flag; /* the last flag given that only the viewer reads ("--vsync"), or
                              * NULL: a headless run refuses it */
} app_options;

void app_options_default(app_options *o);

/* Parses argv (argv[0] is the program). Returns 0 to run, 1 when --help/--version printed and
 * the program should exit 0, 2 on a bad argument (one line already printed to stderr). The
 * session's part is complete: interactive and energy_every resolved for the headless loop or
 * the viewer, the ranks of a run over processes (sim_session_resolve_launch), and every rank
 * but 0 without outputs (sim_session_config_writes_outputs). */
int app_options_parse(int argc, char **argv, app_options *o);

/* Every output the options name, before any work: each must be writable (no directory, no path
 * ending in '/', no missing or unwritable folder), no two may be the same file, and a trajectory
 * needs an extension this build writes. SIM_BAD_ARGUMENT names the flag and the reason (exit 2);
 * SIM_UNSUPPORTED what this build or machine lacks (.nc without NetCDF: exit 1). */
sim_status app_options_check_outputs(const app_options *o, sim_error *err);

/* docs/reference.md as Markdown: every flag, map, built-in scene and scene-file key, from the
 * tables the parsers and --help use (`nbsim --help-reference`, scripts/gen_reference.sh). */
void app_options_print_reference(FILE *out);

#endif /* APP_OPTIONS_H */
