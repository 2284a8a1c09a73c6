/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line, parsed into one struct shared by the headless loop and
 * the viewer. Physics flags override the scene's parameters only when given. */
#ifndef APP_OPTIONS_H
#define APP_OPTIONS_H

#include "backend.h"
#include "output_file.h"


/* Which physics parameters were given on the command line (they override the scene's). */
enum {
    APP_SET_DT = 1u << 0,
    APP_SET_STIFFNESS = 1u << 1,
    APP_SET_RESTITUTION = 1u << 2,
    APP_SET_HERTZ = 1u << 3,
    APP_SET_GRAVITY = 1u << 4,
    APP_SET_BOX = 1u << 5,
    APP_SET_ATM_NU = 1u << 6,
    APP_SET_ATM_CUTOFF = 1u << 7,
    APP_SET_STEPS = 1u << 8
};

#define APP_ENERGY_AUTO (-1)
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
    /* physics: applied over the scene's parameters where params_set says so */
    sim_params params;
    unsigned params_set;
    app_triplets_mode triplets;
    /* backend and maps */
    app_backend_choice backend;
    sim_backend_config config; /* kind is resolved at session start */
    unsigned autotune;         /* APP_AUTOTUNE_* (autotune.h): maps/tile chosen by calibration */
    int tile_set;              /* --tile given: autotune keeps it */
    /* run */
    long frames; /* > 0: headless run of that many frames; 0: viewer */
    char log_path[SIM_PATH_MAX];
    char summary_path[SIM_PATH_MAX];
    char save_state_path[SIM_PATH_MAX];
    int energy_every; /* energies in the log every K frames; 0 = never; APP_ENERGY_AUTO: every
                         frame headless, every APP_VIEWER_ENERGY_EVERY-th in the viewer (an
                         energy pass costs about a pair step) */
    int quiet;        /* no progress bar, no notices */
    /* viewer */
    long exit_after; /* > 0: quit after rendering that many frames */
    char screenshot_path[SIM_PATH_MAX];
    int vsync;
    int width, height;
} app_options;

void app_options_default(app_options *o);

/* Parses argv (argv[0] is the program). Returns 0 to run, 1 when --help/--version printed and
 * the program should exit 0, 2 on a bad argument (one line already printed to stderr). */
int app_options_parse(int argc, char **argv, app_options *o);

void app_print_sim_help(const char *prog);

#endif /* APP_OPTIONS_H */
