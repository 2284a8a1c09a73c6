/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line, parsed into what the user asked for. The options are
 * never changed after parsing: the session resolves them (backend kind, autotuned maps,
 * triplets for `auto`, the default step) into its own settings. Physics flags override the
 * scene's parameters only when given. */
#ifndef APP_OPTIONS_H
#define APP_OPTIONS_H

#include "nbsim/backend.h"
#include "nbsim/output_file.h"
#include "nbsim/params.h"

/* Which physics parameters were given on the command line: bit 1 << sim_param_id per parameter
 * (they override the scene's), plus the contact law. */
#define APP_SET(id) (1u << SIM_PARAM_##id)
#define APP_SET_HERTZ (1u << SIM_PARAM_COUNT)

#define APP_ENERGY_AUTO (-1)
#define APP_GPUS_ALL (-1)
#define APP_VIEWER_ENERGY_EVERY 30

typedef enum {
    APP_TRIPLETS_AUTO = -1,
    APP_TRIPLETS_OFF = 0,
    APP_TRIPLETS_ON = 1
} app_triplets_mode;
typedef enum { APP_BACKEND_AUTO, APP_BACKEND_CPU, APP_BACKEND_CUDA } app_backend_choice;

typedef struct {
    /* scene */
    char scene[SIM_PATH_MAX]; /* built-in name or path of a scene file */
    uint32_t n;               /* bodies for built-in scenes; 0 = the scene's default */
    uint64_t seed;
    int seed_set;
    /* physics: applied over the scene's parameters where params_set says so */
    sim_params params;
    unsigned params_set;
    app_triplets_mode triplets;
    /* backend and maps */
    app_backend_choice backend;
    sim_backend_config config; /* maps, tile and threads as asked; the kind comes from backend */
    unsigned autotune;         /* APP_AUTOTUNE_* (autotune.h): maps/tile chosen by calibration */
    int tile_set;              /* --tile given: autotune keeps it */
    int pair_map_set, triplet_map_set; /* --pair-map / --triplet-map named a map */
    int cached_defaults; /* set by the viewer: without --pair-map/--tile, the autotuner's cached
                            choice for this GPU and N, else the backend's fastest tile */
    /* several GPUs (include/nbsim/multi.h): --gpus N in one process, or one process per GPU */
    int gpus;                        /* --gpus: GPUs of this process; 0: one; APP_GPUS_ALL */
    int rank, world;                 /* this process's rank of world (world 0: one process);
                                        from --rank/--world or the launcher's variables */
    int rank_given;                  /* --rank given */
    int local_rank;                  /* rank among this host's (picks the device); -1: unknown */
    char nccl_id_path[SIM_PATH_MAX]; /* --nccl-id: where rank 0 leaves the NCCL id */
    double nccl_id_wait;             /* seconds ranks > 0 wait for it */
    int nccl_id_mpi;                 /* started by mpirun without --nccl-id: the id through MPI */
    /* run */
    long frames; /* > 0: headless run of that many frames; 0: viewer */
    char log_path[SIM_PATH_MAX];
    char summary_path[SIM_PATH_MAX];
    char save_state_path[SIM_PATH_MAX];
    char dump_path[SIM_PATH_MAX]; /* trajectory (.xyz, .lammpstrj, .nc), "" = none */
    int dump_every;               /* frames between dumped frames (>= 1) */
    char plot_path[SIM_PATH_MAX]; /* PNG of the timing log at the end of a headless run */
    int energy_every; /* energies in the log every K frames; 0 = never; APP_ENERGY_AUTO: every
                         frame headless, every APP_VIEWER_ENERGY_EVERY-th in the viewer (an
                         energy pass costs about a pair step) */
    int quiet;        /* no progress bar, no notices */
    /* viewer */
    long exit_after; /* > 0: quit after rendering that many frames */
    char screenshot_path[SIM_PATH_MAX];
    int vsync;
    int width, height;
    int sweep; /* --sweep: APP_SWEEP_* */
} app_options;

/* --sweep: time every map in the viewer at start (and quit when done). */
enum { APP_SWEEP_NONE, APP_SWEEP_START, APP_SWEEP_EXIT };

void app_options_default(app_options *o);

/* Parses argv (argv[0] is the program). Returns 0 to run, 1 when --help/--version printed and
 * the program should exit 0, 2 on a bad argument (one line already printed to stderr). */
int app_options_parse(int argc, char **argv, app_options *o);

/* Whether this process writes the run's outputs (logs, summaries, states, dumps, plots,
 * notices): one process alone, or rank 0 of a run over processes. The one place that rule
 * lives; app_options_parse clears the outputs of the other ranks with it. */
int app_options_writes_outputs(const app_options *o);

/* Resolves --energy-every for the headless loop (auto: every frame) or the viewer (auto: every
 * APP_VIEWER_ENERGY_EVERY-th). */
int app_energy_every(const app_options *o, int viewer);

/* Every output the options name, before any work: each must be writable (no directory, no
 * missing or unwritable folder) and no two may be the same file. SIM_BAD_ARGUMENT names the
 * flag and the reason. */
sim_status app_options_check_outputs(const app_options *o, sim_error *err);

#endif /* APP_OPTIONS_H */
