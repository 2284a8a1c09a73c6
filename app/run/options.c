/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line: one table row per flag, its defaults, its checks. */
#include "options.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "autotune.h"
#include "nbsim/dist.h"
#include "option_table.h"
#include "parse.h"
#include "nbsim/scene.h"
#include "nbsim/trajectory.h"
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
    o->dump_every = 10;
    o->vsync = 1;
    o->width = 1280;
    o->height = 800;
    o->local_rank = -1;
    o->nccl_id_wait = SIM_DIST_ID_WAIT_S;
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
    o->pair_map_set = 1;
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
    o->triplet_map_set = 1;
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

static int set_cull(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
        return WHY("must be on or off");
    }
    o->config.cull = strcmp(v, "on") == 0;
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

static int set_gpus(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    long l = 0;
    if (strcmp(v, "all") == 0) {
        o->gpus = APP_GPUS_ALL;
        return 0;
    }
    if (app_parse_long(v, 1, SIM_MAX_LOCAL_RANKS, &l) != 0) {
        return WHY("must be a GPU count in 1..%d or all", SIM_MAX_LOCAL_RANKS);
    }
    o->gpus = (int)l;
    return 0;
}

/* --rank and --world: arg is the offset of the int field. */
static int set_rank_field(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    const int world = arg == (int)offsetof(app_options, world);
    if (app_parse_long(v, world ? 1 : 0, SIM_MAX_RANKS - (world ? 0 : 1), &l) != 0) {
        return WHY("must be a %s in %d..%d", world ? "rank count" : "rank", world ? 1 : 0,
                   SIM_MAX_RANKS - (world ? 0 : 1));
    }
    *(int *)(void *)((char *)t + arg) = (int)l;
    if (!world) {
        ((app_options *)t)->rank_given = 1;
    }
    return 0;
}

static int set_nccl_wait(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 86400, &l) != 0) {
        return WHY("must be seconds in 1..86400");
    }
    ((app_options *)t)->nccl_id_wait = (double)l;
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

static int set_dump_every(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 1000000000L, &l) != 0) {
        return WHY("must be a frame count in 1..1000000000");
    }
    ((app_options *)t)->dump_every = (int)l;
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

static int set_sweep(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "start") == 0) {
        o->sweep = APP_SWEEP_START;
    } else if (strcmp(v, "exit") == 0) {
        o->sweep = APP_SWEEP_EXIT;
    } else {
        return WHY("must be start or exit");
    }
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
    {"--tile", "32|64|128",
     "bodies per pair tile (default: the fastest measured, 32 with culling,\n"
     "128 without, 64 on the CPU, the next larger where N needs more than\n"
     "65,535 tiles per side; the viewer first takes a cached autotune)",
     set_tile, 0},
    {"--cull", "on|off",
     "culling (default on): bodies are kept sorted so each tile is a small clump;\n"
     "tiles whose bounding boxes don't touch can't hold a contact, so only the\n"
     "touching tile pairs are checked: the same contacts, far less work. off:\n"
     "every pair (brute force, where the maps are studied as in the papers; K in\n"
     "the viewer)",
     set_cull, 0},
    {"--threads", "T", "CPU backend threads (default: all)", set_threads, 0},
    {NULL, NULL, "Several GPUs (headless runs; NCCL):", NULL, 0},
    {"--gpus", "N|all",
     "split each step over N GPUs of this machine (equal shares of the tile\n"
     "pairs / triples, forces summed with NCCL); with --backend cpu, over N\n"
     "threads (the same split, for testing)",
     set_gpus, 0},
    {"--rank", "R",
     "this process's rank of a run over processes, one GPU each\n"
     "(default: from mpirun / srun: OMPI_*, PMI_*, SLURM_* variables)",
     set_rank_field, (int)offsetof(app_options, rank)},
    {"--world", "W", "processes in that run (default: from mpirun / srun)", set_rank_field,
     (int)offsetof(app_options, world)},
    PATH_ROW("--nccl-id", "FILE",
             "where rank 0 leaves the NCCL id for the others: a new file on a\n"
             "path every host sees (removed once all have joined)",
             nccl_id_path),
    {"--nccl-id-wait", "S", "seconds the other ranks wait for it (default 120)", set_nccl_wait, 0},
    {NULL, NULL, "Runs and their outputs:", NULL, 0},
    {"--frames", "F", "run F frames (1..1000000000) without a window, then exit", set_frames,
     (int)offsetof(app_options, frames)},
    PATH_ROW("--log", "FILE", "per-frame CSV timing log (headless and viewer)", log_path),
    PATH_ROW("--summary", "FILE.json", "medians / p95 per kernel and interactions/s", summary_path),
    {"--energy-every", "K",
     "energies in the log every K frames (0: never; default: every frame\n"
     "headless, every 30th in the viewer)",
     set_energy_every, 0},
    PATH_ROW("--dump", "FILE",
             "record a trajectory for OVITO, VMD, ASE: .xyz (extended XYZ),\n"
             ".lammpstrj (LAMMPS dump) or .nc (AMBER NetCDF), by extension",
             dump_path),
    {"--dump-every", "K", "frames between recorded frames (default 10)", set_dump_every, 0},
    PATH_ROW("--plot", "FILE.png", "a picture of the timing log at the end of a headless run",
             plot_path),
    {"--quiet", NULL, "no progress bar or notices", set_quiet, 0},
    {NULL, NULL, "Viewer:", NULL, 0},
    {"--exit-after", "F", "quit after rendering F frames (1..1000000000)", set_frames,
     (int)offsetof(app_options, exit_after)},
    PATH_ROW("--screenshot", "FILE", "write a PNG screenshot at exit", screenshot_path),
    {"--vsync", "on|off", "(default on)", set_vsync, 0},
    {"--size", "WxH", "window size (default 1280x800)", set_size, 0},
    {"--sweep", "start|exit",
     "time every map at start, as the S key does (the comparison panel and\n"
     "the map inset show); exit: quit when it is done (scripted benchmarks)",
     set_sweep, 0},
    {NULL, NULL, "Other:", NULL, 0},
};

#undef PATH_ROW
#undef PARAM_ROW

static void print_help(FILE *out);

/* The optional parts this build found (CMake's summary says the same at configure time). */
static void print_build(FILE *out) {
    fprintf(out,
            "built with: NCCL (several GPUs) %s; MPI (NCCL id under mpirun) %s; NetCDF (.nc) %s\n",
            sim_multi_have_nccl() ? "yes" : "no", sim_dist_have_mpi() ? "yes" : "no",
            sim_traj_netcdf_available() ? "yes" : "no");
}

static const app_option_table table = {
    "nbsim",
    rows,
    (int)(sizeof rows / sizeof rows[0]),
    NULL,
    NULL,
    print_help,
    "nbsim " NBSIM_VERSION,
    print_build,
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

int app_energy_every(const app_options *o, int viewer) {
    if (o->energy_every != APP_ENERGY_AUTO) {
        return o->energy_every;
    }
    return viewer ? APP_VIEWER_ENERGY_EVERY : 1;
}

int app_options_writes_outputs(const app_options *o) {
    return o->world <= 1 || o->rank == 0;
}

/* One line on stderr and 2: the checks of the multi-GPU flags that need no device. */
static int bad_multi(const char *fmt, const char *detail) {
    fputs("nbsim: ", stderr);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    return 2;
}

/* The multi-GPU flags: a run over processes gets its rank and world (flags first, then the
 * launcher's variables), and every rank but 0 loses its outputs and notices. */
static int resolve_ranks(app_options *o) {
    sim_dist_env env;
    int found = 0;
    sim_error err;
    const sim_status env_status = sim_dist_from_env(&env, &found, &err);
    /* Started by mpirun (not srun: its MPI start-up depends on how Slurm was built) as one of
     * several ranks, in a build with MPI and without --nccl-id: the id goes through MPI. */
    const int mpi_launch = env_status == SIM_OK && found && env.world > 1 &&
                           strcmp(env.source, "SLURM") != 0 && sim_dist_have_mpi() &&
                           o->nccl_id_path[0] == '\0';
    const int multi_process =
        o->world > 0 || o->rank_given || o->nccl_id_path[0] != '\0' || mpi_launch;
    const int gpus = o->gpus;
    if ((gpus > 1 || gpus == APP_GPUS_ALL || multi_process) && o->autotune != 0) {
        return bad_multi("%s: the maps are timed on one GPU; run --pair-map auto there and name "
                         "the maps for a multi-GPU run",
                         "--pair-map/--triplet-map auto");
    }
    if ((gpus > 1 || gpus == APP_GPUS_ALL || multi_process) && o->frames == 0) {
        return bad_multi("%s: the viewer runs on one GPU; several GPUs are for headless runs "
                         "(--frames F)",
                         multi_process ? "--rank/--world/--nccl-id" : "--gpus");
    }
    if (!multi_process) {
        if (gpus > 1 && o->backend != APP_BACKEND_CPU && !sim_multi_have_nccl()) {
            return bad_multi("%s: this build has no NCCL, so it runs on one GPU only (rebuild "
                             "with NCCL: NCCL_ROOT=... or pip install nvidia-nccl-cu13)",
                             "--gpus");
        }
        return 0;
    }
    if (gpus > 1 || gpus == APP_GPUS_ALL) {
        return bad_multi("%s: a run over processes has one GPU per process (start one process "
                         "per GPU)",
                         "--gpus");
    }
    if (o->backend == APP_BACKEND_CPU) {
        return bad_multi("%s: the CPU reference splits over threads of one process (--gpus N "
                         "--backend cpu)",
                         "--world");
    }
    if (!sim_multi_have_nccl()) {
        return bad_multi("%s: this build has no NCCL, so it runs on one GPU only (rebuild with "
                         "NCCL: NCCL_ROOT=... or pip install nvidia-nccl-cu13)",
                         "--world");
    }
    if (env_status != SIM_OK) {
        return bad_multi("%s", err.message);
    }
    if (o->world == 0) {
        if (!found) {
            return bad_multi("%s: cannot tell this process's rank: give --rank R --world W, or "
                             "start it with mpirun or srun",
                             "--nccl-id");
        }
        o->world = env.world;
    }
    if (!o->rank_given) {
        if (!found) {
            return bad_multi("%s: give --rank R too (or start with mpirun or srun)", "--world");
        }
        o->rank = env.rank;
    }
    o->local_rank = found ? env.local_rank : -1;
    if (o->rank >= o->world) {
        char text[64];
        snprintf(text, sizeof text, "%d is not below --world %d", o->rank, o->world);
        return bad_multi("--rank: %s", text);
    }
    o->nccl_id_mpi = mpi_launch && o->world > 1;
    if (o->nccl_id_path[0] == '\0' && o->world > 1 && !o->nccl_id_mpi) {
        return bad_multi(sim_dist_have_mpi() ? "%s: a run over processes needs --nccl-id FILE, a "
                                               "new file on a path every rank sees, or mpirun"
                                             : "%s: a run over processes needs --nccl-id FILE, a "
                                               "new file on a path every rank sees",
                         "--world");
    }
    if (!app_options_writes_outputs(o)) { /* rank 0 writes the run's outputs, the others run */
        o->log_path[0] = '\0';
        o->summary_path[0] = '\0';
        o->save_state_path[0] = '\0';
        o->dump_path[0] = '\0';
        o->plot_path[0] = '\0';
        o->quiet = 1;
    }
    return 0;
}

int app_options_parse(int argc, char **argv, app_options *o) {
    app_options_default(o);
    app_option_table t = table;
    t.target = o;
    int r = app_option_parse(&t, argc, argv);
    /* Flags that can never work together, on any machine. */
    const char *clash = NULL;
    if (r == 0 && o->backend == APP_BACKEND_CPU &&
        sim_pair_choice_needs_cuda(o->config.pair_map)) {
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
    if (r == 0) {
        r = resolve_ranks(o);
    }
    return r;
}

sim_status app_options_check_outputs(const app_options *o, sim_error *err) {
    const struct {
        const char *flag, *path;
    } outputs[] = {{"--log", o->log_path},
                   {"--summary", o->summary_path},
                   {"--save-state", o->save_state_path},
                   {"--dump", o->dump_path},
                   {"--plot", o->plot_path},
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
