/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line: one table row per flag, its defaults, its checks. */
#define _POSIX_C_SOURCE 200809L /* stat, strcasecmp */
#include "options.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "nbsim/autotune.h"
#include "nbsim/dist.h"
#include "nbsim/mesh.h"
#include "nbsim/run_stats.h"
#include "nbsim/scene.h"
#include "nbsim/trajectory.h"
#include "option_table.h"
#include "parse.h"
#include "viewer.h"
#include "viewer_keys.h"

void app_options_default(app_options *o) {
    memset(o, 0, sizeof *o);
    o->session = sim_session_config_default();
    o->energy_every = APP_ENERGY_AUTO;
    o->dump_every = 10;
    o->vsync = 1;
    o->width = 1280;
    o->height = 800;
}

/* ---- setters: each checks one value and names the rule it breaks ---- */

#define WHY(...) (snprintf(why, cap, __VA_ARGS__), -1)
#define VIEWER_TEXT_(x) #x
#define VIEWER_TEXT(x) VIEWER_TEXT_(x) /* a number of viewer.h in a help text */

/* What the session runs: most flags fill the options' session config. */
static sim_session_config *session_of(void *t) {
    return &((app_options *)t)->session;
}

static int set_scene(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    return app_copy_string(o->scene, sizeof o->scene, v) == 0 ? 0 : WHY("is too long");
}

static int set_n(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 2147483647L, &l) != 0) {
        return WHY("must be a body count in 1..2147483647");
    }
    session_of(t)->n = (uint32_t)l;
    return 0;
}

static int set_seed(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
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
    sim_session_config *o = session_of(t);
    sim_error err;
    if (sim_param_set(&o->params, (sim_param_id)arg, v, &err) != SIM_OK) {
        /* err says "'v' must be ..."; the parser quotes the value itself. */
        const char *rule = strstr(err.message, "' must be ");
        return WHY("%s", rule != NULL ? rule + 2 : err.message);
    }
    o->params_given |= 1u << arg;
    return 0;
}

/* The insertion rows of insert.h: arg is the sim_insert_key. Same rules as scene files. */
static int set_insert(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    sim_error err;
    if (sim_insert_set(&o->insert, (sim_insert_key)arg, v, &err) != SIM_OK) {
        const char *rule = strstr(err.message, "' must be ");
        return WHY("%s", rule != NULL ? rule + 2 : err.message);
    }
    o->insert_given |= 1u << arg;
    return 0;
}

static int set_contact(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "linear") != 0 && strcmp(v, "hertz") != 0) {
        return WHY("must be linear or hertz");
    }
    o->params.hertz = strcmp(v, "hertz") == 0;
    o->params_given |= SIM_GIVEN_HERTZ;
    return 0;
}

static int set_triplets(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "auto") == 0) {
        o->triplets = SIM_TRIPLETS_AUTO;
    } else if (strcmp(v, "on") == 0) {
        o->triplets = SIM_TRIPLETS_ON;
    } else if (strcmp(v, "off") == 0) {
        o->triplets = SIM_TRIPLETS_OFF;
    } else {
        return WHY("must be on, off or auto");
    }
    return 0;
}

static int set_backend(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "auto") == 0) {
        o->backend = SIM_BACKEND_CHOICE_AUTO;
    } else if (strcmp(v, "cpu") == 0) {
        o->backend = SIM_BACKEND_CHOICE_CPU;
    } else if (strcmp(v, "cuda") == 0) {
        o->backend = SIM_BACKEND_CHOICE_CUDA;
    } else {
        return WHY("must be auto, cpu or cuda");
    }
    return 0;
}

static int set_pair_map(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "auto") == 0) {
        o->autotune |= SIM_AUTOTUNE_PAIR;
        return 0;
    }
    const int m = sim_pair_choice_from_name(v);
    if (m < 0) {
        char names[512];
        return WHY("is not a pair map; valid: auto, full, %s",
                   sim_map_names(2, names, sizeof names));
    }
    o->autotune &= ~(unsigned)SIM_AUTOTUNE_PAIR;
    o->config.pair_map = m;
    o->pair_map_set = 1;
    return 0;
}

static int set_triplet_map(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "auto") == 0) {
        o->autotune |= SIM_AUTOTUNE_TRIPLET;
        return 0;
    }
    const int m = sim_triplet_map_from_name(v);
    if (m < 0) {
        char names[512];
        return WHY("is not a triplet map; valid: auto, %s", sim_map_names(3, names, sizeof names));
    }
    o->autotune &= ~(unsigned)SIM_AUTOTUNE_TRIPLET;
    o->config.triplet_map = (sim_triplet_map)m;
    o->triplet_map_set = 1;
    return 0;
}

static int set_tile(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    long l = 0;
    if (app_parse_long(v, 1, 1024, &l) != 0 || !sim_pair_tile_valid((uint32_t)l)) {
        return WHY("must be " SIM_PAIR_TILE_NAMES);
    }
    o->config.tile = (uint32_t)l;
    o->tile_set = 1;
    return 0;
}

static int set_cull(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
        return WHY("must be on or off");
    }
    o->config.cull = strcmp(v, "on") == 0;
    return 0;
}

static int set_phase_times(void *t, int arg, const char *v, char *why, size_t cap) {
    const int timing = sim_phase_timing_from_name(v);
    if (timing < 0) {
        return WHY("must be sampled or every");
    }
    session_of(t)->config.phase_timing = (sim_phase_timing)timing;
    return 0;
}

static int set_threads(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 4096, &l) != 0) {
        return WHY("must be a thread count in 1..4096");
    }
    session_of(t)->config.cpu_threads = (int)l;
    return 0;
}

static int set_gpus(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    long l = 0;
    if (strcmp(v, "all") == 0) {
        o->gpus = SIM_GPUS_ALL;
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
    const int world = arg == (int)offsetof(app_options, session.world);
    if (app_parse_long(v, world ? 1 : 0, SIM_MAX_RANKS - (world ? 0 : 1), &l) != 0) {
        return WHY("must be a %s in %d..%d", world ? "rank count" : "rank", world ? 1 : 0,
                   SIM_MAX_RANKS - (world ? 0 : 1));
    }
    *(int *)(void *)((char *)t + arg) = (int)l;
    if (!world) {
        session_of(t)->rank_given = 1;
    }
    return 0;
}

static int set_nccl_wait(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 86400, &l) != 0) {
        return WHY("must be seconds in 1..86400");
    }
    session_of(t)->nccl_id_wait = (double)l;
    return 0;
}

static int set_decompose(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (strcmp(v, "replicate") == 0) {
        o->decompose = SIM_DECOMPOSE_REPLICATE;
    } else if (strcmp(v, "space") == 0) {
        o->decompose = SIM_DECOMPOSE_SPACE;
    } else if (strcmp(v, "auto") == 0) {
        o->decompose = SIM_DECOMPOSE_AUTO;
    } else {
        return WHY("must be replicate, space or auto");
    }
    return 0;
}

/* Frame counts: arg is the offset of the long field. */
static int set_frames(void *t, int arg, const char *v, char *why, size_t cap) {
    if (app_parse_long(v, 1, 1000000000L, (long *)(void *)((char *)t + arg)) != 0) {
        return WHY("must be a frame count in 1..1000000000");
    }
    return 0;
}

static int set_draw_max(void *t, int arg, const char *v, char *why, size_t cap) {
    if (app_parse_long(v, 1, UINT32_MAX, &((app_options *)t)->draw_max) != 0) {
        return WHY("must be a body count in 1..4294967295");
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

static int set_dry_run(void *t, int arg, const char *v, char *why, size_t cap) {
    ((app_options *)t)->dry_run = 1;
    return 0;
}

static int set_vsync(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
        return WHY("must be on or off");
    }
    o->vsync = strcmp(v, "on") == 0;
    o->viewer_flag = "--vsync";
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
    o->viewer_flag = "--size";
    return 0;
}

static int set_sweep(void *t, int arg, const char *v, char *why, size_t cap) {
    app_options *o = t;
    if (strcmp(v, "start") == 0) {
        o->sweep = VIEWER_SWEEP_START;
    } else if (strcmp(v, "exit") == 0) {
        o->sweep = VIEWER_SWEEP_EXIT;
    } else {
        return WHY("must be start or exit");
    }
    o->viewer_flag = "--sweep";
    return 0;
}

/* --mesh FILE: one more mesh wall; the --mesh-* flags after it place and move it. */
static int set_mesh(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_session_config *o = session_of(t);
    if (o->mesh_count >= SIM_MESHES_MAX) {
        return WHY("is one mesh too many (at most %d)", SIM_MESHES_MAX);
    }
    if (v[0] == '\0') {
        return WHY("is empty");
    }
    sim_mesh_spec m = sim_mesh_spec_default();
    if (app_copy_string(m.path, sizeof m.path, v) != 0) {
        return WHY("is too long");
    }
    o->meshes[o->mesh_count++] = m;
    return 0;
}

/* The mesh the --mesh-* flags place: the last --mesh given. */
static sim_mesh_spec *last_mesh(void *t) {
    sim_session_config *o = session_of(t);
    return o->mesh_count > 0 ? &o->meshes[o->mesh_count - 1] : NULL;
}

static int set_mesh_scale(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_mesh_spec *m = last_mesh(t);
    if (m == NULL) {
        return WHY("places the last --mesh: give --mesh FILE before it");
    }
    if (app_parse_double(v, 1e-12, 1e12, &m->scale) != 0) {
        return WHY("must be a scale in [1e-12, 1e12]");
    }
    return 0;
}

/* arg 0: --mesh-offset, 1: --mesh-velocity */
static int set_mesh_vec(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_mesh_spec *m = last_mesh(t);
    double x[3];
    if (m == NULL) {
        return WHY("places the last --mesh: give --mesh FILE before it");
    }
    if (app_parse_vec3(v, x) != 0) {
        return WHY("must be three numbers x,y,z");
    }
    sim_vec3d *dst = arg == 0 ? &m->offset : &m->velocity;
    *dst = (sim_vec3d){x[0], x[1], x[2]};
    return 0;
}

static int set_mesh_rotate(void *t, int arg, const char *v, char *why, size_t cap) {
    sim_mesh_spec *m = last_mesh(t);
    if (m == NULL) {
        return WHY("places the last --mesh: give --mesh FILE before it");
    }
    char buf[512];
    double x[7];
    int k = 0;
    if (app_copy_string(buf, sizeof buf, v) == 0) {
        char *p = buf;
        for (; k < 7 && p != NULL; ++k) {
            char *comma = strchr(p, ',');
            if (comma != NULL) {
                *comma = '\0';
            }
            if ((comma == NULL) != (k == 6) || app_parse_double(p, -1e30, 1e30, &x[k]) != 0) {
                break;
            }
            p = comma != NULL ? comma + 1 : NULL;
        }
    }
    if (k != 7 || (x[3] == 0.0 && x[4] == 0.0 && x[5] == 0.0)) {
        return WHY("must be seven numbers px,py,pz,ax,ay,az,omega: a point of the axis [m], its "
                   "direction (not zero) and the angular speed [rad/s]");
    }
    m->axis_point = (sim_vec3d){x[0], x[1], x[2]};
    m->axis = (sim_vec3d){x[3], x[4], x[5]};
    m->omega = x[6];
    return 0;
}

#undef WHY

/* ---- the table ---- */

#define PATH_ROW(flag, value, help, field)                                                         \
    { flag, value, help, set_path, (int)offsetof(app_options, field) }
#define PARAM_ROW(id, key, flag, value, rule, help) {flag, value, help, set_param, SIM_PARAM_##id},
#define INSERT_ROW(id, key, flag, value, rule, help)                                               \
    {flag, value, help, set_insert, SIM_INSERT_##id},

static const app_option_row rows[] = {
    {NULL, NULL, "Scene:", NULL, 0},
    {"--scene", "NAME|FILE",
     "a built-in scene (below; default gas), or a scene file\n"
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
    {NULL, NULL, "Insertion during the run (LAMMPS's fix pour; scene-file keys alike):", NULL, 0},
    SIM_INSERT_LIST(INSERT_ROW)
    {NULL, NULL, "Mesh walls (CPU backend; the --mesh-* flags apply to the last --mesh):", NULL, 0},
    {"--mesh", "FILE",
     "a wall of triangles from an STL file, ASCII or binary\n(repeatable, up to 8)", set_mesh, 0},
    {"--mesh-scale", "S", "the file's units in m (default 1)", set_mesh_scale, 0},
    {"--mesh-offset", "X,Y,Z", "moves the mesh by this, after scaling [m]", set_mesh_vec, 0},
    {"--mesh-velocity", "VX,VY,VZ", "the mesh moves at this constant velocity [m/s]",
     set_mesh_vec, 1},
    {"--mesh-rotate", "PX,PY,PZ,AX,AY,AZ,W",
     "the mesh turns at W rad/s about the axis through P along A\n(right-handed; a drum)",
     set_mesh_rotate, 0},
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
     "threads (the same split, for testing); with --rank/--world, the GPUs\n"
     "of each process (the same N in every one)",
     set_gpus, 0},
    {"--rank", "R",
     "this process's rank of a run over processes, one GPU each (or --gpus N)\n"
     "(default: from mpirun / srun: OMPI_*, PMI_*, SLURM_* variables)",
     set_rank_field, (int)offsetof(app_options, session.rank)},
    {"--world", "W", "processes in that run (default: from mpirun / srun)", set_rank_field,
     (int)offsetof(app_options, session.world)},
    PATH_ROW("--nccl-id", "FILE",
             "where rank 0 leaves the NCCL id for the others: a new file on a\n"
             "path every host sees (removed once all have joined)",
             session.nccl_id_path),
    {"--nccl-id-wait", "S", "seconds the other ranks wait for it (default 120)", set_nccl_wait, 0},
    {"--decompose", "replicate|space|auto",
     "how ranks share the bodies. replicate: each holds all N and sweeps its\n"
     "share of the tile pairs / triples (pays for --cull off and all triples,\n"
     "whose work is N^2 or N^3); space: each owns one slab of the box and\n"
     "its neighbours' bodies within reach (pays for culled contacts, whose\n"
     "work and memory then split; the CPU backend over mpirun -np R, with\n"
     "or without friction, triplets with --atm-cutoff). auto (default): space for\n"
     "--backend cpu over processes, replicate for GPUs",
     set_decompose, 0},
    {NULL, NULL, "Runs and their outputs:", NULL, 0},
    {"--frames", "F", "run F frames (1..1000000000) without a window, then exit", set_frames,
     (int)offsetof(app_options, session.frames)},
    PATH_ROW("--log", "FILE", "per-frame CSV timing log (headless and viewer)", log_path),
    PATH_ROW("--summary", "FILE.json",
             "medians / p95 per kernel, particle steps/s, pair tests and contacts\n"
             "per step (below)",
             summary_path),
    {"--energy-every", "K",
     "energies in the log every K frames (0: never; default: every frame\n"
     "headless, every 30th in the viewer)",
     set_energy_every, 0},
    PATH_ROW("--dump", "FILE",
             "record a trajectory for OVITO, VMD, ASE, ParaView: .xyz (extended\n"
             "XYZ), .lammpstrj (LAMMPS dump), .nc (AMBER NetCDF) or .pvd (ParaView:\n"
             "one .vtu a frame in the folder FILE less .pvd, with the contact\n"
             "network's forces), by extension",
             dump_path),
    {"--dump-every", "K", "frames between recorded frames (default 10)", set_dump_every, 0},
    {"--phase-times", "sampled|every",
     "how the log, summary and overlay split a frame's time into phases\n"
     "(drift, lists, pair, kick, ...). sampled (default): on the GPU each\n"
     "phase of about one step in ten and of every re-sorting step is timed,\n"
     "the other steps whole and spread in those proportions (a timing mark\n"
     "between two kernels costs a short step a few per cent). every: every\n"
     "step's phases. The CPU times every phase of every step either way.\n"
     "Steps and frames are timed exactly, and the phases add up to the step",
     set_phase_times, 0},
    PATH_ROW("--plot", "FILE.png",
             "a picture of the timing log at the end of a headless run (bench/plot.py,\n"
             "matplotlib: checked before the run)",
             plot_path),
    {"--quiet", NULL, "no progress bar, banner or notices (warnings and errors still show)",
     set_quiet, 0},
    {"--dry-run", NULL,
     "plan the run's GPU memory and exit, building nothing: bytes per body by\n"
     "part, what the GPU has free, the most bodies that fit (exit 2 if N does not)",
     set_dry_run, 0},
    {NULL, NULL, "Viewer:", NULL, 0},
    {"--exit-after", "F", "quit after rendering F frames (1..1000000000)", set_frames,
     (int)offsetof(app_options, exit_after)},
    PATH_ROW("--screenshot", "FILE", "write a PNG screenshot at exit", screenshot_path),
    {"--vsync", "on|off", "(default on)", set_vsync, 0},
    {"--draw-max", "B",
     "the most bodies drawn (default " VIEWER_TEXT(VIEWER_DRAW_MAX) "); above it an even\n"
     "sample, every k-th body, which the overlay names (\"drawing X of N bodies\")",
     set_draw_max, 0},
    {"--size", "WxH", "window size (default 1280x800)", set_size, 0},
    {"--sweep", "start|exit",
     "time every map at start, as the S key does (the comparison panel and\n"
     "the map inset show); exit: quit when it is done (scripted benchmarks)",
     set_sweep, 0},
    {NULL, NULL, "Other:", NULL, 0},
};

#undef PATH_ROW
#undef PARAM_ROW
#undef INSERT_ROW

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

/* Texts --help and the reference (docs/reference.md) share. */
static const char usage_text[] =
    "Usage:\n"
    "  nbsim [options]                 open the viewer\n"
    "  nbsim --frames F [options]      headless batch run of F frames (no window, no GL)\n"
    "  nbsim maps --help               the map inspector (launch plans, dumps, pictures)\n"
    "  nbsim bench --help              benchmarks of the maps and kernels on this GPU\n";
static const char counts_text[] =
    "  particle steps/s  N x steps per second of the whole step, as HOOMD-blue and\n"
    "                    LAMMPS report it (log: particle_steps_per_s)\n"
    "  pair tests        the candidate pairs the contact sweep tested, per step and per\n"
    "                    body: the neighbour-list entries, or the pairs of the\n"
    "                    interacting tile pairs (culled); every tile pair of the map's\n"
    "                    plan, tile x tile each (--cull off) (log: candidate_tests)\n"
    "  contacts          the pairs among them that touch, per step; culled runs only\n"
    "                    (log: contacts)\n"
    "  unique pairs/s    N(N-1)/2 per second of the contact sweep, for --cull off only:\n"
    "                    a culled sweep tests far fewer pairs (log: pairs_per_s)\n"
    "Counts are the frame's mean per step; contacts of the brute-force sweep read n/a.\n";
static const char exit_text[] =
    "Exit status: 0 done; 2 bad input, refused before any work (a flag, a scene file, an N\n"
    "too large for the maps or for memory); 1 what this machine lacks or a failure while\n"
    "running (no display, no CUDA device, a write error, a blow-up); 128+S stopped by\n"
    "signal S with every output complete (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).\n";

static void print_help(FILE *out) {
    fprintf(out,
            "nbsim %s — N spheres, contact forces over every pair and Axilrod-Teller-Muto forces\n"
            "over every triple, in CUDA kernels whose blocks are placed by a selectable thread "
            "map.\n\n%s\n",
            NBSIM_VERSION, usage_text);
    app_option_help(&table, out);
    char names[512];
    fprintf(out, "\nPair maps:    %s, full\n", sim_map_names(2, names, sizeof names));
    fprintf(out, "Triplet maps: %s\n\n", sim_map_names(3, names, sizeof names));
    fprintf(out, "Built-in scenes (--scene NAME; the viewer's keys 1-%d in this order):\n",
            sim_scene_builtin_count());
    for (int i = 0; i < sim_scene_builtin_count(); ++i) {
        fprintf(out, "  %-9s %s (default N %u)\n", sim_scene_builtin_name(i),
                sim_scene_builtin_description(i), sim_scene_builtin_default_n(i));
    }
    fputc('\n', out);
    fprintf(out, "The summary (stdout, --summary) and the log (--log), per step [ms]:\n");
#define HELP_PHASE(id, field, name, includes) fprintf(out, "  %-17s %s\n", name, includes);
    SIM_RUN_KERNEL_LIST(HELP_PHASE)
#undef HELP_PHASE
    fprintf(out, "%s\n%s\n%s", counts_text, VIEWER_KEYS_HELP, exit_text);
}

/* docs/reference.md (scripts/gen_reference.sh runs `nbsim --help-reference`): the flags from the
 * rows above, the maps, the scenes and the scene files' keys from the tables the parsers read,
 * so the page cannot drift from what the program takes. */
void app_options_print_reference(FILE *out) {
    fprintf(out,
            "# nbsim reference\n\n"
            "<!-- Generated from nbsim's own tables by scripts/gen_reference.sh (nbsim "
            "--help-reference): do not edit; change the tables and regenerate. -->\n\n"
            "Every flag of `nbsim` (and, at the end, of `nbsim maps` and `nbsim bench`) and "
            "every key of a scene\nfile, as the program takes them: the same rows drive the "
            "parsers and `--help`. How to use them:\n[the user guide](guide.md).\n\n"
            "## The command line\n\n```\n%s```\n\n",
            usage_text);
    app_option_reference(&table, out);
    char names[512];
    fprintf(out, "\n### Maps\n\n* pair maps (`--pair-map`): %s, full (no symmetry); auto\n",
            sim_map_names(2, names, sizeof names));
    fprintf(out, "* triplet maps (`--triplet-map`): %s; auto\n\n",
            sim_map_names(3, names, sizeof names));
    fprintf(out,
            "## Built-in scenes\n\n`--scene NAME`; the viewer's keys 1-%d in this order.\n\n"
            "| key | scene | default N | what |\n|---|---|---|---|\n",
            sim_scene_builtin_count());
    for (int i = 0; i < sim_scene_builtin_count(); ++i) {
        char key[16], n[16];
        snprintf(key, sizeof key, "%d", i + 1);
        snprintf(n, sizeof n, "%u", sim_scene_builtin_default_n(i));
        const char *const cells[4] = {key, sim_scene_builtin_name(i), n,
                                      sim_scene_builtin_description(i)};
        app_option_markdown_row(out, cells, 4, 2u);
    }
    fprintf(out, "\n## Scene-file keys\n\n"
                 "`key = value` lines before the column header `x y z vx vy vz radius density` "
                 "(the format:\n[assets/README.md](../assets/README.md)). A flag on the command "
                 "line wins over its key.\n\n"
                 "| key | value | must be | what it sets | flag |\n|---|---|---|---|---|\n");
    for (int id = 0; id < SIM_PARAM_COUNT; ++id) {
        const sim_param_info *p = sim_param_info_of((sim_param_id)id);
        const char *const cells[5] = {p->key, p->value, p->rule, p->help, p->flag};
        app_option_markdown_row(out, cells, 5, 0x13u);
    }
    /* The two keys of sim_params without a row (sim/io/scene_io.c's parse_param). */
    const char *const hertz[5] = {"hertz", "0|1", "0 or 1",
                                  "contact law: 1 Hertz, 0 linear (default)",
                                  "--contact linear|hertz"};
    const char *const triplets[5] = {"triplets", "0|1", "0 or 1",
                                     "ATM triplet forces on (1) or off (0, default)",
                                     "--triplets on|off|auto"};
    app_option_markdown_row(out, hertz, 5, 0x13u);
    app_option_markdown_row(out, triplets, 5, 0x13u);
    for (int k = 0; k < SIM_INSERT_KEY_COUNT; ++k) {
        const sim_insert_key id = (sim_insert_key)k;
        const char *const cells[5] = {sim_insert_key_name(id), sim_insert_value(id),
                                      sim_insert_rule(id), sim_insert_help(id),
                                      sim_insert_flag(id)};
        app_option_markdown_row(out, cells, 5, 0x13u);
    }
    const char *const progress[5] = {
        SIM_INSERT_STATE_KEY, "B, D, I, M, T, S", "six numbers >= 0, the first three whole",
        "where an insertion stands, as saves write it: batches, bodies drawn, bodies inserted, "
        "mass drawn [kg], its clock [s], the time between batches [s]",
        "(none: saves write it)"};
    app_option_markdown_row(out, progress, 5, 0x13u);
    fprintf(out, "\n`box` is taken for `box_half`.\n\n");
    fprintf(out, "## The summary, the JSON and the log, per step [ms]\n\n"
                 "The phases (the rows down to `kick`) add up to the step; `contact` and "
                 "`integrate` are sums of some of them.\n\n```\n"
                 "  %-13s %-16s %s\n", "summary, JSON", "log column", "what it holds");
#define REFERENCE_PHASE(id, field, name, includes)                                                 \
    fprintf(out, "  %-13s %-16s %s\n", name,                                                   \
            SIM_RUN_KERNEL_##id == SIM_RUN_KERNEL_CONTACT ? "(none: a sum)" : #field, includes);
    SIM_RUN_KERNEL_LIST(REFERENCE_PHASE)
#undef REFERENCE_PHASE
    fprintf(out, "%s```\n\n## The viewer's keys\n\n```\n%s```\n\n## Exit status\n\n%s", counts_text,
            VIEWER_KEYS_HELP, exit_text);
}

/* --energy-every for the headless loop (auto: every frame) or the viewer (auto: every
 * APP_VIEWER_ENERGY_EVERY-th). */
static int energy_every(const app_options *o, int viewer) {
    if (o->energy_every != APP_ENERGY_AUTO) {
        return o->energy_every;
    }
    return viewer ? APP_VIEWER_ENERGY_EVERY : 1;
}

/* The session's part beyond the flags: a run or the viewer, its energies, the ranks of a run
 * over processes; every rank but 0 loses its outputs and notices. 2 (one line printed) when the
 * multi-GPU flags can never work. */
static int resolve_session(app_options *o) {
    sim_session_config *s = &o->session;
    s->interactive = s->frames == 0;
    s->energy_every = energy_every(o, s->interactive);
    sim_error err;
    if (sim_session_resolve_launch(s, &err) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return 2;
    }
    /* the CPU reference over processes splits space: its saves are gathered by every rank */
    const int space = s->world > 1 && s->backend == SIM_BACKEND_CHOICE_CPU;
    if (space && o->dump_path[0]) {
        fprintf(stderr, "nbsim: --dump: trajectories of a run split in space are not gathered "
                        "yet; save the end state (--save-state)\n");
        return 2;
    }
    if (!sim_session_config_writes_outputs(s)) { /* rank 0 writes the run's outputs */
        o->log_path[0] = '\0';
        o->summary_path[0] = '\0';
        if (!space) {
            o->save_state_path[0] = '\0';
        }
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
    const sim_session_config *c = &o->session;
    if (r == 0 && c->backend == SIM_BACKEND_CHOICE_CPU &&
        sim_pair_choice_needs_cuda(c->config.pair_map)) {
        clash = "--pair-map full is a CUDA kernel; --backend cpu runs the symmetric tiled sweep "
                "only";
    } else if (r == 0 && c->frames > 0 && o->screenshot_path[0]) {
        clash = "--screenshot is taken by the viewer; a headless run (--frames) draws nothing";
    } else if (r == 0 && c->frames > 0 && o->exit_after > 0) {
        clash = "--exit-after ends the viewer; a headless run ends after --frames";
    }
    if (clash != NULL) {
        fprintf(stderr, "nbsim: %s (see nbsim --help)\n", clash);
        return 2;
    }
    if (r == 0 && c->frames > 0 && o->viewer_flag != NULL) {
        fprintf(stderr,
                "nbsim: %s is the viewer's; a headless run (--frames) opens no window (see "
                "nbsim --help)\n",
                o->viewer_flag);
        return 2;
    }
    if (r == 0 && c->autotune != 0 && !c->tile_set) {
        o->session.autotune |= SIM_AUTOTUNE_TILE;
    }
    if (r == 0) {
        r = resolve_session(o);
    }
    return r;
}

/* Is `path` written directly, as sim_output writes it: "-" (standard output), a FIFO, a device
 * or a socket (after links)? Such a path cannot be read back, nor given a temporary. */
static int output_is_direct(const char *path) {
    struct stat st;
    return strcmp(path, "-") == 0 ||
           (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
                                     S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)));
}

/* A name --plot can write a PNG to: a direct output (any name), or a name ending in .png (any
 * case); never another name with .png added to it. */
static int plot_path_ok(const char *path) {
    if (output_is_direct(path)) {
        return 1;
    }
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    return dot != NULL && (slash == NULL || dot > slash) && strcasecmp(dot, ".png") == 0;
}

/* A ParaView series' frames go to the folder of its name (run.pvd: run/, trajectory.h): one
 * that exists must be a folder nbsim can write in (a missing one is made beside the .pvd, whose
 * folder the caller has checked). */
static sim_status check_vtk_folder(const char *path, sim_error *err) {
    char folder[SIM_PATH_MAX], frame[SIM_PATH_MAX + 32];
    const size_t len = strlen(path) - strlen(".pvd");
    const char *slash = strrchr(path, '/');
    if (len == 0 || (slash != NULL && (size_t)(slash - path) + 1 == len)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--dump: '%s': name the series NAME.pvd (its frames go to the folder NAME)",
                        path);
    }
    snprintf(folder, sizeof folder, "%.*s", (int)len, path);
    struct stat st;
    if (stat(folder, &st) != 0) {
        return SIM_OK;
    }
    if (!S_ISDIR(st.st_mode)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--dump: '%s': its frames go to the folder '%s', and that is not a folder",
                        path, folder);
    }
    const char *base = slash != NULL ? slash + 1 : path;
    snprintf(frame, sizeof frame, "%s/%.*s_000000.vtu", folder,
             (int)(strlen(base) - strlen(".pvd")), base);
    sim_error why;
    if (sim_output_check(frame, &why) != SIM_OK) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "--dump: '%s': its frames' folder: %s", path,
                        why.message);
    }
    return SIM_OK;
}

/* A trajectory's format from its extension, or why not (the formats this build writes). */
static sim_status check_dump_format(const char *path, sim_error *err) {
    const sim_traj_format format = sim_traj_format_from_path(path);
    if (format == SIM_TRAJ_NETCDF && !sim_traj_netcdf_available()) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "--dump: '%s': this build of nbsim has no NetCDF (rebuild with Debian's "
                        "libnetcdf-dev), so .nc cannot be written; .xyz and .lammpstrj can",
                        path);
    }
    if (format == SIM_TRAJ_VTK) {
        return check_vtk_folder(path, err);
    }
    if (format != SIM_TRAJ_NONE) {
        return SIM_OK;
    }
    char list[256] = "";
    for (int f = 0; f < SIM_TRAJ_FORMAT_COUNT; ++f) {
        const size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s (%s)",
                 f == 0                           ? ""
                 : f + 1 == SIM_TRAJ_FORMAT_COUNT ? " or "
                                                  : ", ",
                 sim_traj_format_extension((sim_traj_format)f),
                 sim_traj_format_label((sim_traj_format)f));
    }
    return sim_fail(err, SIM_BAD_ARGUMENT, "--dump: '%s': unknown trajectory extension; use %s",
                    path, list);
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
        /* A name ending in '/' is a folder's (one that exists, one to be made, or a file used
         * as one), never a file to write: found only at the rename, it would lose the run. */
        const size_t len = strlen(outputs[i].path);
        if (len > 1 && outputs[i].path[len - 1] == '/') {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "%s: cannot write '%s': a path ending in '/' names a folder; name a "
                            "file in it",
                            outputs[i].flag, outputs[i].path);
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
    if (o->plot_path[0] && !plot_path_ok(o->plot_path)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--plot: '%s': the plot is a PNG: name it FILE.png (or give a FIFO, a "
                        "device, or - for standard output)",
                        o->plot_path);
    }
    if (o->plot_path[0] && o->log_path[0] && output_is_direct(o->log_path)) {
        /* "-", a FIFO or a device: what went there cannot be read back for the picture */
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--plot draws the log from its file, and --log '%s' is no file to read "
                        "back: log to a file, or leave --log out (--plot then logs to a "
                        "temporary of its own)",
                        o->log_path);
    }
    return o->dump_path[0] ? check_dump_format(o->dump_path, err) : SIM_OK;
}
