/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line: one table row per flag, its defaults, its checks. */
#include "options.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "autotune.h"
#include "option_table.h"
#include "parse.h"
#include "scene.h"
#include "viewer_keys.h"

void app_options_default(app_options *o) {
    memset(o, 0, sizeof *o);
    strcpy(o->scene, "gas");
    o->seed = 1;
    o->params = sim_params_default();
    o->triplets = APP_TRIPLETS_AUTO;
    o->backend = APP_BACKEND_AUTO;
    o->config = sim_backend_config_default();
    o->energy_every = APP_ENERGY_AUTO;
    o->vsync = 1;
    o->width = 1280;
    o->height = 800;
}

/* ---- setters: each checks one value and names the rule it breaks ---- */

#define WHY(...) (snprintf(why, cap, __VA_ARGS__), -1)

static int set_scene(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    return app_copy_string(o->scene, sizeof o->scene, v) == 0 ? 0 : WHY("is too long");
}

static int set_n(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 100000000L, &l) != 0) {
        return WHY("must be a body count in 1..100000000");
    }
    ((app_options *)t)->n = (uint32_t)l;
    return 0;
}

static int set_seed(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (app_parse_u64(v, &o->seed) != 0) {
        return WHY("must be a non-negative integer");
    }
    o->seed_set = 1;
    return 0;
}

/* The path rows: arg is the offset of the field in app_options. */
static int set_path(void *t, int arg, const char *v, char *why, size_t cap) {
    char *dst = (char *)t + arg;
    if (v[0] == '\0') {
        return WHY("is empty");
    }
    return app_copy_string(dst, SIM_PATH_MAX, v) == 0 ? 0 : WHY("is too long");
}

/* The physics rows of params.h: arg is the sim_param_id. Same rules as scene files. */
static int set_param(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    sim_error err;
    if (sim_param_set(&o->params, (sim_param_id)arg, v, &err) != SIM_OK) {
        /* err says "'v' must be ..."; the parser quotes the value itself. */
        const char *rule = strstr(err.message, "' must be ");
        return WHY("%s", rule != NULL ? rule + 2 : err.message);
    }
    o->params_set |= 1u << arg;
    return 0;
}

static int set_contact(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "linear") != 0 && strcmp(v, "hertz") != 0) {
        return WHY("must be linear or hertz");
    }
    o->params.hertz = strcmp(v, "hertz") == 0;
    o->params_set |= APP_SET_HERTZ;
    return 0;
}

static int set_triplets(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "auto") == 0) {
        o->triplets = APP_TRIPLETS_AUTO;
    } else if (strcmp(v, "on") == 0) {
        o->triplets = APP_TRIPLETS_ON;
    } else if (strcmp(v, "off") == 0) {
        o->triplets = APP_TRIPLETS_OFF;
    } else {
        return WHY("must be on, off or auto");
    }
    return 0;
}

static int set_backend(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "auto") == 0) {
        o->backend = APP_BACKEND_AUTO;
    } else if (strcmp(v, "cpu") == 0) {
        o->backend = APP_BACKEND_CPU;
    } else if (strcmp(v, "cuda") == 0) {
        o->backend = APP_BACKEND_CUDA;
    } else {
        return WHY("must be auto, cpu or cuda");
    }
    return 0;
}

static int set_pair_map(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "auto") == 0) {
        o->autotune |= APP_AUTOTUNE_PAIR;
        return 0;
    }
    const int m = sim_pair_choice_from_name(v);
    if (m < 0) {
        char names[512];
        return WHY("is not a pair map; valid: auto, full, %s",
                   sim_map_names(2, names, sizeof names));
    }
    o->autotune &= ~(unsigned)APP_AUTOTUNE_PAIR;
    o->config.pair_map = m;
    return 0;
}

static int set_triplet_map(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "auto") == 0) {
        o->autotune |= APP_AUTOTUNE_TRIPLET;
        return 0;
    }
    const int m = sim_triplet_map_from_name(v);
    if (m < 0) {
        char names[512];
        return WHY("is not a triplet map; valid: auto, %s", sim_map_names(3, names, sizeof names));
    }
    o->autotune &= ~(unsigned)APP_AUTOTUNE_TRIPLET;
    o->config.triplet_map = (sim_triplet_map)m;
    return 0;
}

static int set_tile(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    long l = 0;
    if (app_parse_long(v, 1, 1024, &l) != 0 || !sim_pair_tile_valid((uint32_t)l)) {
        return WHY("must be " SIM_PAIR_TILE_NAMES);
    }
    o->config.tile = (uint32_t)l;
    o->tile_set = 1;
    return 0;
}

static int set_threads(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 4096, &l) != 0) {
        return WHY("must be a thread count in 1..4096");
    }
    ((app_options *)t)->config.cpu_threads = (int)l;
    return 0;
}

/* Frame counts: arg is the offset of the long field. */
static int set_frames(void *t, int arg, const char *v, char *why, size_t cap) {
    if (app_parse_long(v, 1, 1000000000L, (long *)(void *)((char *)t + arg)) != 0) {
        return WHY("must be a frame count in 1..1000000000");
    }
    return 0;
}

static int set_energy_every(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 0, 1000000000L, &l) != 0) {
        return WHY("must be a whole number in 0..1000000000 (0: never)");
    }
    ((app_options *)t)->energy_every = (int)l;
    return 0;
}

static int set_quiet(void *t, int arg, const char *v, char *why, size_t cap) {
    ((app_options *)t)->quiet = 1;
    return 0;
}

static int set_vsync(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
        return WHY("must be on or off");
    }
    o->vsync = strcmp(v, "on") == 0;
    return 0;
}

static int set_size(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    int w = 0, h = 0;
    char tail = 0;
    if (sscanf(v, "%dx%d%c", &w, &h, &tail) != 2 || w < 64 || h < 64 || w > 16384 || h > 16384) {
        return WHY("must be WxH, each 64..16384");
    }
    o->width = w;
    o->height = h;
    return 0;
}

#undef WHY

/* ---- the table ---- */

#define PATH_ROW(flag, value, help, field)                                                         \
    { flag, value, help, set_path, (int)offsetof(app_options, field) }
#define PARAM_ROW(id, key, flag, value, rule, help) {flag, value, help, set_param, SIM_PARAM_##id},

static const app_option_row rows[] = {
    {NULL, NULL, "Scene:", NULL, 0},
    {"--scene", "NAME|FILE",
     "built-in gas, pile, collide, triplets (default gas), or a scene file\n"
     "(format: assets/README.md)",
     set_scene, 0},
    {"--n", "N", "bodies in a built-in scene (default: the scene's)", set_n, 0},
    {"--seed", "S", "random seed of built-in scenes (default 1)", set_seed, 0},
    PATH_ROW("--save-state", "FILE",
             "write the final state (+ last force per body) as a scene file", save_state_path),
    {NULL, NULL, "Physics (override the scene's values):", NULL, 0},
    SIM_PARAM_LIST(PARAM_ROW){"--contact", "linear|hertz", "contact law", set_contact, 0},
    {"--triplets", "on|off|auto", "triplet forces (auto: on where they run at interactive speed)",
     set_triplets, 0},
    {NULL, NULL, "Backend and maps:", NULL, 0},
    {"--backend", "auto|cpu|cuda", "(auto: CUDA when a device is present)", set_backend, 0},
    {"--pair-map", "NAME",
     "pair thread map, 'full' (no symmetry, nbody-style), or 'auto' (time\n"
     "the maps on this GPU and N, pick the fastest, cache the choice; also\n"
     "picks --tile unless given)",
     set_pair_map, 0},
    {"--triplet-map", "NAME", "triplet thread map, or 'auto'", set_triplet_map, 0},
    {"--tile", "32|64|128", "bodies per pair tile (default 64)", set_tile, 0},
    {"--threads", "T", "CPU backend threads (default: all)", set_threads, 0},
    {NULL, NULL, "Headless runs:", NULL, 0},
    {"--frames", "F", "run F frames (1..1000000000) without a window, then exit", set_frames,
     (int)offsetof(app_options, frames)},
    PATH_ROW("--log", "FILE", "per-frame CSV timing log (headless and viewer)", log_path),
    PATH_ROW("--summary", "FILE.json", "medians / p95 per kernel and interactions/s", summary_path),
    {"--energy-every", "K",
     "energies in the log every K frames (0: never; default: every frame\n"
     "headless, every 30th in the viewer)",
     set_energy_every, 0},
    {"--quiet", NULL, "no progress bar or notices", set_quiet, 0},
    {NULL, NULL, "Viewer:", NULL, 0},
    {"--exit-after", "F", "quit after rendering F frames (1..1000000000)", set_frames,
     (int)offsetof(app_options, exit_after)},
    PATH_ROW("--screenshot", "FILE", "write a PNG screenshot at exit", screenshot_path),
    {"--vsync", "on|off", "(default on)", set_vsync, 0},
    {"--size", "WxH", "window size (default 1280x800)", set_size, 0},
    {NULL, NULL, "Other:", NULL, 0},
};

#undef PATH_ROW
#undef PARAM_ROW

static void print_help(FILE *out);

static const app_option_table table = {
    "nbsim",
    rows,
    (int)(sizeof rows / sizeof rows[0]),
    NULL,
    NULL,
    print_help,
    "nbsim " NBSIM_VERSION,
};

static void print_help(FILE *out) {
    fprintf(out,
            "nbsim %s — N spheres, contact forces over every pair and Axilrod-Teller-Muto forces\n"
            "over every triple, in CUDA kernels whose blocks are placed by a selectable thread "
            "map.\n\n"
            "Usage:\n"
            "  nbsim [options]                 open the viewer\n"
            "  nbsim --frames F [options]      headless batch run of F frames (no window, no GL)\n"
            "  nbsim maps --help               the map inspector (launch plans, dumps, pictures)\n"
            "  nbsim bench --help              benchmarks of the maps and kernels on this GPU\n\n",
            NBSIM_VERSION);
    app_option_help(&table, out);
    char names[512];
    fprintf(out, "\nPair maps:    %s, full\n", sim_map_names(2, names, sizeof names));
    fprintf(out, "Triplet maps: %s\n\n%s\n", sim_map_names(3, names, sizeof names),
            APP_VIEWER_KEYS_HELP);
    fprintf(out,
            "Exit status: 0 done; 2 bad input, refused before any work (a flag, a scene file, an "
            "N\ntoo large for the maps or for memory); 1 what this machine lacks or a failure "
            "while\nrunning (no display, no CUDA device, a write error, a blow-up); 128+S stopped "
            "by\nsignal S with every output complete (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).\n");
}

int app_options_parse(int argc, char **argv, app_options *o) {
    app_options_default(o);
    app_option_table t = table;
    t.target = o;
    const int r = app_option_parse(&t, argc, argv);
    /* Flags that can never work together, on any machine. */
    const char *clash = NULL;
    if (r == 0 && o->backend == APP_BACKEND_CPU && o->config.pair_map == SIM_PAIR_FULL) {
        clash = "--pair-map full is a CUDA kernel; --backend cpu runs the symmetric tiled sweep "
                "only";
    } else if (r == 0 && o->frames > 0 && o->screenshot_path[0]) {
        clash = "--screenshot is taken by the viewer; a headless run (--frames) draws nothing";
    } else if (r == 0 && o->frames > 0 && o->exit_after > 0) {
        clash = "--exit-after ends the viewer; a headless run ends after --frames";
    }
    if (clash != NULL) {
        fprintf(stderr, "nbsim: %s (see nbsim --help)\n", clash);
        return 2;
    }
    if (r == 0 && o->autotune != 0 && !o->tile_set) {
        o->autotune |= APP_AUTOTUNE_TILE;
    }
    return r;
}

sim_status app_options_check_outputs(const app_options *o, sim_error *err) {
    const struct {
        const char *flag, *path;
    } outputs[] = {{"--log", o->log_path},
                   {"--summary", o->summary_path},
                   {"--save-state", o->save_state_path},
                   {"--screenshot", o->screenshot_path}};
    const int count = (int)(sizeof outputs / sizeof outputs[0]);
    for (int i = 0; i < count; ++i) {
        if (outputs[i].path[0] == '\0') {
            continue;
        }
        sim_error why;
        if (sim_output_check(outputs[i].path, &why) != SIM_OK) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "%s: %s", outputs[i].flag, why.message);
        }
        for (int j = 0; j < i; ++j) {
            if (outputs[j].path[0] != '\0' &&
                sim_output_same_target(outputs[i].path, outputs[j].path)) {
                return sim_fail(err, SIM_BAD_ARGUMENT, "%s and %s name the same file '%s'",
                                outputs[j].flag, outputs[i].flag, outputs[i].path);
            }
        }
    }
    return SIM_OK;
}
