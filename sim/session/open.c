/* SPDX-License-Identifier: MIT
 * nbsim — opening a session: the scene (built-in, a file, or the caller's arrays) checked against
 * what the run can take, and the settings resolved for it from the config and the machine (the
 * backend and the ranks' devices, triplets for auto, the step, the tile and where the maps come
 * from, the settings check of a run over processes); then the backend, and closing; and a new
 * scene for a running session (sim_session_set_scene, reset). */
#include "session/session_impl.h"
#include "session/insert.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nbsim/autotune.h"
#include "nbsim/dist.h"
#include "nbsim/memory_plan.h"
#include "nbsim/scene.h"
#include "nbsim/size_limits.h"
#include "nlist/cell_grid.h"
#include "nlist/nlist.h"
#include "step/backend_impl.h"
#include "step/stepper.h"
#include "physics/physics.h"

/* Rough ATM triples per second (sim_session_triples_per_s): a current GPU, one CPU core. */
#define TRIPLES_PER_S_CUDA 2e11
#define TRIPLES_PER_S_CPU 2e7
/* Triplets (auto) stay on while a step's unique triples fit a budget per step: 10 [ms] on a
 * GPU (2e9 triples), 0.1 [s] on a CPU core (2e6), well under a second per frame. A scene built
 * around triplets keeps them in the viewer up to this factor more (seconds per frame). */
#define AUTO_TRIPLES_CUDA (TRIPLES_PER_S_CUDA / 100.0)
#define AUTO_TRIPLES_CPU (TRIPLES_PER_S_CPU / 10.0)
#define AUTO_TRIPLES_VIEWER_FACTOR 100.0
/* With an ATM cut-off and culling the triplet work grows like N (sim/cull/triplet_cull.h): they
 * stay on up to this many bodies (the `triplets` scene at a 3 m cut-off, its GPU step against N:
 * bench/results/nvidia-h100/triplets_cutoff.csv; a CPU: seconds a step at 4,096 on two cores). */
#define AUTO_CULLED_TRIPLETS_N_CUDA 131072u
#define AUTO_CULLED_TRIPLETS_N_CPU 4096u
/* ... and while the triples within the cut-off (estimated from the bodies) fit this many budgets
 * of a full sweep's: a triple of the lists costs a few times one of the tiled maps'. */
#define AUTO_CULLED_TRIPLES_FACTOR 10.0

/* A user's dt beyond this multiple of the default step (t_c / 50 or finer) gets a warning. */
#define DT_WARN_FACTOR 2.5

/* The caller's "given" bits are what the scene loader keeps fixed. */
_Static_assert(SIM_GIVEN_HERTZ == SIM_SCENE_FIXED_HERTZ, "one set of fixed bits");

static void choose_maps_source(sim_session *s);

/* The caller's values where given: the same setter rules as the file's (triplets are the
 * session's to choose, from o->triplets). */
static void apply_overrides(const sim_session_config *o, sim_params *params) {
    sim_params_take(params, &o->params, o->params_given & ~SIM_PARAM_BIT_TRIPLETS);
}

/* v with thousands separators: "4,194,240". */
static const char *grouped(uint64_t v, char *buf, size_t cap) {
    char digits[32];
    const int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < cap; ++i) {
        if (i > 0 && (len - i) % 3 == 0) {
            buf[k++] = ',';
        }
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

/* The largest N this session's configuration runs (size_limits.h), and in `why` what limits it
 * and what would allow more: for the refusals of --n and of scene files, before anything is
 * built. The autotuner tries every tile size, so it is held to the smallest (32); with no --tile
 * the default grows with N (default_tile), so the largest tile sets the limit. */
static uint32_t body_limit(const sim_session *s, char *why, size_t cap) {
    sim_backend_config c = s->config;
    if (s->cfg.autotune & SIM_AUTOTUNE_TILE) {
        c.tile = 32;
    } else if (!s->cfg.tile_set) {
        c.tile = sim_pair_tile_max();
    }
    const int triplets = s->cfg.triplets == SIM_TRIPLETS_ON;
    /* Triplets culled by the command line's cut-off need no triplet map (sim/step/backend.c). */
    sim_params asked = s->cfg.params; /* the command line's cut-off, with its triplets */
    asked.triplets = triplets;
    const int cutoff_culled =
        (s->cfg.params_given & SIM_GIVEN(ATM_CUTOFF)) && sim_config_culls_triplets(&c, &asked);
    char a[32], b[32];
    if (sim_config_runs_on_grid(&c, &asked)) { /* no pair map is launched: memory decides */
        const uint32_t max = sim_run_max_bodies(&c, &asked);
        if (max < SIM_GRID_MAX_BODIES) {
            snprintf(why, cap,
                     "triplets culled by the ATM cut-off cover at most %s tiles of %u bodies",
                     grouped(SIM_TCULL_MAX_TILES, a, sizeof a), SIM_TRIPLET_TILE);
        } else {
            snprintf(why, cap, "the cell grid's sort counts its bodies in an int");
        }
        return max;
    }
    uint32_t max = sim_backend_max_bodies(&c, triplets && !cutoff_culled);
    const uint32_t tile_max = sim_pair_tile_max();
    if (cutoff_culled && sim_triplet_culled_max_bodies() < max) {
        max = sim_triplet_culled_max_bodies();
        snprintf(why, cap,
                 "triplets culled by the ATM cut-off cover at most %s tiles of %u bodies; "
                 "without --triplets on up to %s",
                 grouped(SIM_TCULL_MAX_TILES, a, sizeof a), SIM_TRIPLET_TILE,
                 grouped(sim_pair_max_bodies(c.tile), b, sizeof b));
    } else if (triplets && !cutoff_culled && max < sim_pair_max_bodies(c.tile)) {
        snprintf(why, cap,
                 "the triplet maps cover at most %s tiles of %u bodies per side; without "
                 "--triplets on up to %s",
                 grouped(SIM_MAX_TILES_3D, a, sizeof a), SIM_TRIPLET_TILE,
                 grouped(sim_pair_max_bodies(c.tile), b, sizeof b));
    } else if (c.tile < tile_max) {
        snprintf(why, cap,
                 "the pair maps cover at most %s tiles of %u bodies per side; --tile %u allows "
                 "up to %s",
                 grouped(SIM_MAX_TILES_2D, a, sizeof a), c.tile, tile_max,
                 grouped(sim_pair_max_bodies(tile_max), b, sizeof b));
    } else {
        snprintf(why, cap, "the pair maps cover at most %s tiles of %u bodies per side",
                 grouped(SIM_MAX_TILES_2D, a, sizeof a), c.tile);
    }
    return max;
}

static uint32_t builtin_default_n(const char *scene) {
    for (int i = 0; i < sim_scene_builtin_count(); ++i) {
        if (strcmp(sim_scene_builtin_name(i), scene) == 0) {
            return sim_scene_builtin_default_n(i);
        }
    }
    return 0;
}

/* A user's --box must hold the built-in scene: the scenes are laid out for their own box, and
 * spheres outside the walls would be thrown back at once (and blamed on the step). */
static sim_status check_builtin_box(const sim_session_config *o, const char *scene,
                                    const sim_params *params, const sim_state *state,
                                    sim_error *err) {
    if (!(o->params_given & SIM_GIVEN(BOX))) {
        return SIM_OK;
    }
    double reach = 0.0; /* how far the spheres reach from the centre along an axis [m] */
    for (uint32_t i = 0; i < state->n; ++i) {
        const sim_vec4d p = state->pos[i];
        reach = fmax(reach, fmax(fabs(p.x), fmax(fabs(p.y), fabs(p.z))) + p.w);
    }
    if (params->box_half >= reach) {
        return SIM_OK;
    }
    return sim_fail(err, SIM_BAD_ARGUMENT,
                    "--box %g is too small for the scene %s with %u bodies: its spheres reach %.4g "
                    "m from the centre; use --box %g or more, or fewer bodies (--n)",
                    params->box_half, scene, state->n, reach, ceil(reach * 10.0) / 10.0);
}

/* A warning for spheres that share a centre (such a pair feels no contact force). */
static void coincident_notice(sim_session *s, const char *scene, const sim_state *state) {
    uint32_t i = 0, j = 0;
    const uint64_t pairs = sim_state_coincident_pairs(state, &i, &j);
    if (pairs > 0) {
        char text[512];
        snprintf(text, sizeof text,
                 "%s: warning: %llu pair%s of spheres share a centre (first: bodies %u and %u), "
                 "and such a pair feels no contact force",
                 scene, (unsigned long long)pairs, pairs == 1 ? "" : "s", i + 1, j + 1);
        sim_session_warning(s, text);
    }
}

/* Notices for a scene file: the parser's warnings, coincident spheres, an unused --seed. */
static void scene_file_notices(sim_session *s, const char *scene, const char *warnings,
                               const sim_state *state) {
    char text[512];
    for (const char *w = warnings; *w != '\0';) {
        const size_t len = strcspn(w, "\n");
        snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), w);
        sim_session_warning(s, text);
        w += len + (w[len] == '\n');
    }
    coincident_notice(s, scene, state);
    if (s->cfg.seed_set) {
        snprintf(text, sizeof text,
                 "--seed applies to built-in scenes; the scene file %s does not use it", scene);
        sim_session_warning(s, text);
    }
}

/* The caller's arrays as the scene: their parameters whole (there is no scene to override), a
 * copy of their bodies, checked against what this run can take. */
static sim_status load_bodies(sim_session *s, const char *scene, uint32_t max, const char *why,
                              sim_params *params, sim_state *state, sim_error *err) {
    char max_text[32];
    if (s->bodies.n > max) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: %u bodies are above %s, the most bodies this run can take (%s)", scene,
                        s->bodies.n, grouped(max, max_text, sizeof max_text), why);
    }
    *params = s->cfg.params;
    SIM_TRY(sim_params_check(params, err));
    SIM_TRY(sim_state_check_bodies(&s->bodies, err));
    SIM_TRY(sim_state_copy(state, &s->bodies, err));
    coincident_notice(s, scene, state);
    return SIM_OK;
}

static uint32_t default_tile(const sim_backend_config *c, const sim_params *p, uint32_t n);
static uint32_t largest_fitting(const sim_session *s, sim_backend_config *c, const sim_params *p,
                                uint32_t limit, uint64_t bytes);
static sim_status resolve_backend(sim_session *s, sim_error *err);

/* The GPU memory n bodies need under the session's settings (memory_plan.h), from the settings
 * alone (the bodies' radii assumed), with the device's free memory and the largest N that fits:
 * what --dry-run prints and what is checked before a scene is built. The CPU reference plans
 * nothing (plan->free_bytes stays 0). */
static void plan_memory(const sim_session *s, uint32_t n, const sim_params *p,
                        sim_memory_plan *plan) {
    sim_backend_config c = s->config;
    const int device = c.kind == SIM_BACKEND_CUDA;
    c.kind = SIM_BACKEND_CUDA; /* the plan is a GPU's, also where none is found */
    if (!s->cfg.tile_set) {
        c.tile = default_tile(&c, p, n);
    }
    sim_memory_plan_cuda(n, &c, p, 0.0, 0.0, 0, plan);
    plan->limit = sim_run_max_bodies(&c, p);
    sim_device_info dev;
    sim_error ignored;
    if (device && sim_cuda_device_query(&dev, &ignored) == SIM_OK) {
        plan->free_bytes = dev.free_mem_bytes;
        plan->total_bytes = dev.global_mem_bytes;
        plan->largest_n = largest_fitting(s, &c, p, plan->limit, dev.free_mem_bytes);
    }
}

/* The largest N whose plan fits `bytes`. The default tile grows with N and a larger tile plans
 * smaller culling lists, so the answer is sought at the tile that N itself would get: at 10^9
 * bodies the tile is larger than at the 2*10^8 that fit, and the largest found at 10^9's tile
 * was refused when run. The tile only grows with N, so this settles in a step or two; if it
 * swings, the smaller answer is kept. */
static uint32_t largest_fitting(const sim_session *s, sim_backend_config *c, const sim_params *p,
                                uint32_t limit, uint64_t bytes) {
    uint32_t largest = sim_memory_plan_largest(c, p, 0.0, 0.0, limit, bytes);
    for (int round = 0; round < 4 && !s->cfg.tile_set; ++round) {
        const uint32_t tile = default_tile(c, p, largest > 0 ? largest : 1u);
        if (tile == c->tile) {
            return largest;
        }
        c->tile = tile;
        const uint32_t next = sim_memory_plan_largest(c, p, 0.0, 0.0, limit, bytes);
        largest = round == 3 && next > largest ? largest : next;
    }
    return largest;
}

/* Refuses n bodies whose plan does not fit the GPU's free memory, with both figures and the
 * largest N that would: before the scene is built (a billion-body scene takes the host's memory
 * and time). The backend checks again with the bodies' radii, before it allocates. */
static sim_status check_memory(const sim_session *s, uint32_t n, const sim_params *p,
                               sim_error *err) {
    sim_memory_plan plan;
    plan_memory(s, n, p, &plan);
    return sim_memory_plan_check(&plan, "the GPU", err);
}

sim_status sim_session_memory_plan(const sim_session_config *c, sim_memory_plan *plan,
                                   sim_error *err) {
    memset(plan, 0, sizeof *plan);
    sim_session s;
    memset(&s, 0, sizeof s);
    s.cfg = *c;
    SIM_TRY(resolve_backend(&s, err));
    uint32_t n = c->n;
    if (c->bodies != NULL) {
        n = c->bodies->n;
    } else if (n == 0 && sim_scene_is_builtin(c->scene)) {
        n = builtin_default_n(c->scene);
    } else if (n == 0) { /* a file: its bodies counted (as it starts: an insertion adds more) */
        sim_params p = c->params;
        sim_state st = {0};
        sim_inserter ins;
        memset(&ins, 0, sizeof ins);
        const sim_scene_load_options load = {.insert = &ins};
        SIM_TRY(sim_scene_load_with(c->scene, &load, &p, &st, err));
        n = st.n;
        sim_state_free(&st);
    }
    sim_params p = c->params;
    p.triplets = c->triplets == SIM_TRIPLETS_ON;
    plan_memory(&s, n, &p, plan);
    return SIM_OK;
}

/* Loads the scene into *state with its parameters and the command line's overrides, after
 * checking that its size can run. */
static sim_status load_scene(sim_session *s, const char *scene, sim_params *params,
                             sim_state *state, sim_inserter *ins, sim_error *err) {
    const sim_session_config *o = &s->cfg;
    *params = sim_params_default();
    char why[256], max_text[32];
    const uint32_t max = body_limit(s, why, sizeof why);
    if (s->bodies.n > 0 && strcmp(scene, s->cfg.scene) == 0) {
        return load_bodies(s, scene, max, why, params, state, err);
    }
    if (sim_scene_is_builtin(scene)) {
        const uint32_t n = o->n ? o->n : builtin_default_n(scene);
        if (n > max) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "--n %u is above %s, the most bodies this run can take (%s)", n,
                            grouped(max, max_text, sizeof max_text), why);
        }
        sim_params planned = o->params;
        planned.triplets = o->triplets == SIM_TRIPLETS_ON;
        SIM_TRY(check_memory(s, n, &planned, err));
        SIM_TRY(sim_scene_builtin_with(scene, o->n, o->seed, o->config.stop, params, state, err));
        apply_overrides(o, params);
        return check_builtin_box(o, scene, params, state, err);
    }
    struct stat info;
    if (stat(scene, &info) != 0 && errno == ENOENT) {
        char names[256] = "";
        for (int i = 0; i < sim_scene_builtin_count(); ++i) {
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     sim_scene_builtin_name(i));
        }
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--scene: '%s': no such file, and not a built-in scene (%s)", scene, names);
    }
    if (o->n != 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "--n applies to built-in scenes; '%s' is a file",
                        scene);
    }
    /* The command line's values first: the file cannot change them, and its bodies are checked
     * against the box they will run in. */
    apply_overrides(o, params);
    char warnings[1024] = "";
    const sim_scene_load_options load = {max, why, o->params_given, warnings, sizeof warnings, ins};
    SIM_TRY(sim_scene_load_with(scene, &load, params, state, err));
    scene_file_notices(s, scene, warnings, state);
    return SIM_OK;
}

/* The ranks' devices. --gpus N: N ranks in this process (CUDA: devices 0..N-1; CPU: threads). A
 * run over processes (sim_session_resolve_launch found rank and world): this process runs
 * --gpus G ranks (1 by default), global ranks rank * G .. rank * G + G - 1 of world * G, on G
 * devices from local rank * G (one GPU: local rank mod the devices; a launcher that shows each
 * process its own G GPUs: from 0), and the processes agree on an NCCL id through the --nccl-id
 * file (rank 0 writes it) or MPI. */
static sim_status resolve_devices(sim_session *s, sim_error *err) {
    const sim_session_config *o = &s->cfg;
    sim_multi_config *m = &s->config.multi;
    memset(m, 0, sizeof *m);
    const int cuda = s->config.kind == SIM_BACKEND_CUDA;
    const int devices = cuda ? sim_cuda_device_count() : 0;
    if (o->world > 1) {
        /* --backend cpu was refused with the flags (sim_session_resolve_launch); auto found no
         * device, and the CPU reference cannot span processes: said now, before rank 0 waits for
         * the others and the others for the id. */
        if (!cuda && s->cfg.backend == SIM_BACKEND_CHOICE_CPU) { /* split in space over MPI */
            m->world = o->world;
            m->rank = o->rank;
            m->local = 1;
            m->space = 1;
            return SIM_OK; /* what it cannot run yet: refused by every rank as it is built */
        }
        if (!cuda) {
            return sim_fail(err, SIM_NO_DEVICE,
                            "a run over %d processes needs a CUDA device in each, and none was "
                            "found here (the CPU reference splits over threads of one process: "
                            "--gpus N --backend cpu)",
                            o->world);
        }
        const int per = o->gpus > 1 ? o->gpus : 1; /* --gpus all was refused with the flags */
        m->world = o->world * per;
        m->rank = o->rank * per;
        m->local = per;
        /* mpirun / srun may show each process its own GPUs alone (CUDA_VISIBLE_DEVICES) */
        const int local = o->local_rank >= 0 ? o->local_rank : o->rank;
        m->device = devices <= per ? 0 : per == 1 ? local % devices : local * per;
        if (devices > 0 && (long)m->device + per > devices) { /* G > 1: no wrapping round */
            return sim_fail(err, SIM_NO_DEVICE,
                            "--gpus %d: process %d (local rank %d) would take devices %d..%d, "
                            "and %d %s visible",
                            per, o->rank, local, m->device, m->device + per - 1, devices,
                            devices == 1 ? "is" : "are");
        }
        return SIM_OK; /* the NCCL id: exchange_nccl_id, once the run's settings are known */
    }
    int gpus = o->gpus;
    if (gpus == SIM_GPUS_ALL) {
        gpus = cuda ? devices : 1;
        if (gpus > 1 && !sim_multi_have_nccl()) {
            sim_session_notice(s, "--gpus all: this build has no NCCL, so it runs on one GPU");
            gpus = 1;
        }
    }
    if (gpus > 1) {
        if (!cuda && o->backend != SIM_BACKEND_CHOICE_CPU) { /* asked for GPUs, would get threads */
            return sim_fail(err, SIM_NO_DEVICE,
                            "--gpus %d: no CUDA device found (--backend cpu splits the step over "
                            "CPU threads instead)",
                            gpus);
        }
        if (cuda && gpus > devices) {
            return sim_fail(err, SIM_NO_DEVICE, "--gpus %d: %d CUDA device%s visible", gpus,
                            devices, devices == 1 ? " is" : "s are");
        }
        m->world = gpus;
        m->local = gpus;
    }
    return SIM_OK;
}

static sim_status resolve_backend(sim_session *s, sim_error *err) {
    const sim_session_config *o = &s->cfg;
    s->config = o->config;
    if (o->backend == SIM_BACKEND_CHOICE_CPU) {
        s->config.kind = SIM_BACKEND_CPU;
    } else if (sim_cuda_device_count() > 0) {
        s->config.kind = SIM_BACKEND_CUDA;
    } else if (o->backend == SIM_BACKEND_CHOICE_CUDA) {
        return sim_fail(err, SIM_NO_DEVICE,
                        "--backend cuda: no CUDA device found; "
                        "use --backend cpu");
    } else {
        s->config.kind = SIM_BACKEND_CPU;
        sim_session_notice(s, "no CUDA device found: using the CPU reference backend");
    }
    if (s->config.kind == SIM_BACKEND_CPU && sim_pair_choice_needs_cuda(s->config.pair_map)) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "--pair-map full needs the CUDA backend, and no CUDA device was found");
    }
    return resolve_devices(s, err);
}

/* Unique triples per step within the ATM cut-off among the state's bodies, estimated from the
 * neighbours each has within it (k, sim_atm_list_neighbours: the cloud's density): a body's
 * triples are at most C(k, 2), each counted by its three bodies; at most every triple, C(N, 3),
 * which a cut-off as wide as the scene gives. */
static double culled_triples(const sim_state *st, const sim_params *p) {
    const double k = sim_atm_list_neighbours(p, st, 0.0);
    const double estimate = (double)st->n * k * (k - 1.0) / 6.0, all = (double)sim_choose(st->n, 3);
    return estimate < all ? estimate : all;
}

/* Triplets for --triplets auto. A scene built around them (the triplets scene, a file with
 * `triplets = 1`) keeps them, since without them it shows nothing: always in a headless run
 * (speed is not the point there), and in the viewer up to AUTO_TRIPLES_VIEWER_FACTOR x the budget
 * per step; above that the viewer asks for --triplets on or off instead of guessing. A scene that
 * only sets an ATM strength gets them where they stay interactive. Every choice that is not the
 * obvious one is said, with why. */
static sim_status choose_triplets(sim_session *s, const char *scene, const sim_state *state,
                                  sim_params *p, sim_error *err) {
    const uint32_t n = state->n;
    const sim_session_config *o = &s->cfg;
    if (o->triplets != SIM_TRIPLETS_AUTO) {
        p->triplets = o->triplets == SIM_TRIPLETS_ON;
        return SIM_OK;
    }
    const int built_around = p->triplets, mild = !p->triplets && p->atm_nu != 0.0;
    const int headless = !o->interactive, cuda = s->config.kind == SIM_BACKEND_CUDA;
    const double budget = cuda ? AUTO_TRIPLES_CUDA : AUTO_TRIPLES_CPU;
    /* Culled by a cut-off, the work grows like N (sim/cull/triplet_cull.h) while the cut-off holds
     * a few neighbours, and no triplet map's grid limits N; a cut-off as wide as the scene culls
     * nothing, and is judged by the triples it keeps, as the full sweep is. */
    sim_params on = *p; /* as they would run with triplets on */
    on.triplets = 1;
    const int culled = sim_config_culls_triplets(&s->config, &on);
    const double triples = culled && (built_around || mild) ? culled_triples(state, p)
                                                            : (double)sim_choose(n, 3);
    const uint32_t culled_n = cuda ? AUTO_CULLED_TRIPLETS_N_CUDA : AUTO_CULLED_TRIPLETS_N_CPU;
    const uint32_t max_n = culled ? sim_triplet_culled_max_bodies() : sim_triplet_max_bodies();
    const double limit = culled ? AUTO_CULLED_TRIPLES_FACTOR * budget : budget;
    const int cheap = (!culled || n <= culled_n) && triples <= limit;
    const char *where = cuda ? "on this GPU" : "on the CPU";
    char text[512];
    p->triplets = 0;
    if (!built_around && !mild) {
        return SIM_OK;
    }
    if (mild && p->periodic != 0 && !(p->atm_cutoff > 0.0)) {
        /* the scene merely sets a strength: a periodic box is no reason to refuse the run, but
         * without a cut-off ATM is not defined there (sim_periodic_check refuses asking for it) */
        snprintf(text, sizeof text,
                 "triplet forces off: %s sets atm_nu, but in a periodic box ATM needs a cut-off "
                 "(--atm-cutoff, at most half the box)",
                 scene);
        sim_session_notice(s, text);
        return SIM_OK;
    }
    if (n > max_n) {
        snprintf(text, sizeof text,
                 "triplet forces off: N = %u is above %u, the most bodies the triplet %s take", n,
                 max_n, culled ? "tiles" : "maps");
        sim_session_notice(s, text);
        return SIM_OK;
    }
    if (cheap) {
        p->triplets = 1;
        return SIM_OK;
    }
    if (mild) {
        snprintf(text, sizeof text,
                 "triplet forces off: %s sets atm_nu but does not ask for triplets, and N = %u "
                 "gives %.3g triples per step%s, more than the %.3g that run at interactive speed "
                 "%s (--triplets on runs them)",
                 scene, n, triples, culled ? " within the cut-off" : "", limit, where);
        sim_session_notice(s, text);
        return SIM_OK;
    }
    if (!headless && triples > AUTO_TRIPLES_VIEWER_FACTOR * limit) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s is built around triplet forces, and N = %u gives %.3g triples per "
                        "step, far too many to watch %s: pass --triplets on to run them anyway, "
                        "or --triplets off to run without them",
                        scene, n, triples, where);
    }
    p->triplets = 1;
    snprintf(text, sizeof text,
             "triplet forces on, as %s is built around them: N = %u gives %.3g triples per step, "
             "slow %s (--triplets off runs without them)",
             scene, n, triples, where);
    sim_session_notice(s, text);
    return SIM_OK;
}

/* The step: the default one, or the user's with a warning when it is too long. */
static void choose_dt(sim_session *s, const char *scene, const sim_state *state,
                      const sim_insert_def *ins, sim_params *p) {
    double safe = sim_default_dt(p, state);
    if (ins->shape != SIM_INSERT_OFF) { /* the lightest bodies it will bring, too */
        sim_vec4d pos[2], vel[2];
        sim_insert_lightest(ins, pos, vel);
        const sim_state light = {.n = 2, .pos = pos, .vel = vel};
        const double t = sim_default_dt(p, &light);
        safe = state->n == 0 || t < safe ? t : safe;
    }
    if (p->dt <= 0.0) {
        p->dt = safe;
    } else if (p->dt > DT_WARN_FACTOR * safe) {
        char from[SIM_PATH_MAX + 32], text[SIM_PATH_MAX + 512];
        if (s->cfg.params_given & SIM_GIVEN(DT)) {
            snprintf(from, sizeof from, "--dt %g", p->dt);
        } else {
            snprintf(from, sizeof from, "dt = %g in %s", p->dt, scene);
        }
        snprintf(text, sizeof text,
                 "warning: %s is more than %.1f times the default step %g (resolving a contact "
                 "in enough steps): contacts may be unstable or lose energy wrongly",
                 from, DT_WARN_FACTOR, safe);
        sim_session_warning(s, text);
    }
}

/* The insertion: the command line's settings over the scene file's, checked against the run. */
static sim_status resolve_insert(sim_session *s, sim_inserter *ins, const sim_params *p,
                                 sim_error *err) {
    const sim_session_config *o = &s->cfg;
    sim_insert_take(&ins->def, &o->insert, o->insert_given);
    if (ins->def.shape == SIM_INSERT_OFF) {
        for (int k = 0; k < SIM_INSERT_KEY_COUNT; ++k) {
            if (o->insert_given & (1u << k)) {
                return sim_fail(err, SIM_BAD_ARGUMENT,
                                "%s: no insertion region (%s, or `%s =` in a scene file)",
                                sim_insert_flag((sim_insert_key)k),
                                sim_insert_flag(SIM_INSERT_REGION),
                                sim_insert_key_name(SIM_INSERT_REGION));
            }
        }
        return SIM_OK;
    }
    if (o->decompose == SIM_DECOMPOSE_SPACE || s->config.multi.world > 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: insertion runs on one rank for now (every rank would have to place "
                        "the same bodies at the same step); drop --gpus / --rank / --world / "
                        "--decompose space",
                        sim_insert_flag(SIM_INSERT_REGION));
    }
    return sim_insert_check(&ins->def, p, err);
}

sim_status sim_session_load(sim_session *s, const char *scene, sim_error *err) {
    sim_state state = {0};
    sim_params params;
    sim_inserter ins;
    memset(&ins, 0, sizeof ins);
    ins.def = sim_insert_def_default();
    char why[256];
    const uint32_t max = body_limit(s, why, sizeof why);
    const sim_inserter old_ins = s->ins; /* a failed load keeps them */
    const sim_params old_params = s->params;
    const int old_said = s->insert_full_said;
    sim_status st = load_scene(s, scene, &params, &state, &ins, err);
    if (st == SIM_OK) {
        st = resolve_insert(s, &ins, &params, err);
    }
    if (st == SIM_OK) {
        choose_dt(s, scene, &state, &ins.def, &params);
        /* the insertion's first batch (or the batches a resumed run has due) before the backend
         * is made: a run may start with no bodies */
        s->ins = ins;
        s->insert_max = max;
        s->insert_full_said = 0;
        s->params = params;
        if (ins.def.shape != SIM_INSERT_OFF && s->ins.progress.interval <= 0.0) {
            s->ins.progress.interval = sim_insert_interval(&ins.def, &params);
        }
        st = sim_session_insert_into(s, &state, err);
        ins = s->ins;
    }
    if (st == SIM_OK && state.n == 0) {
        st = sim_fail(err, SIM_BAD_ARGUMENT, "%s: no bodies%s", scene,
                      ins.def.shape != SIM_INSERT_OFF
                          ? ", and the insertion's first batch placed none (--insert-rate)"
                          : " (nothing after the column header, and no insertion: --insert)");
    }
    if (st == SIM_OK) {
        st = choose_triplets(s, scene, &state, &params, err);
    }
    if (st == SIM_OK) {
        double r_min = 0.0, r_max = 0.0;
        if (ins.def.shape != SIM_INSERT_OFF) {
            sim_insert_radius_range(&ins.def, &r_min, &r_max);
        }
        st = sim_periodic_check(&params, fmax(r_max, sim_state_max_radius(&state)), err);
    }
    if (st != SIM_OK) {
        s->ins = old_ins;
        s->params = old_params;
        s->insert_full_said = old_said;
        sim_state_free(&state);
        return st;
    }
    sim_state_free(&s->initial);
    s->initial = state;
    s->params = params;
    s->ins = ins;
    snprintf(s->scene, sizeof s->scene, "%s", scene);
    s->info.frame = 0;
    s->info.steps = 0;
    s->info.sim_time = 0.0;
    return SIM_OK;
}

/* What every process of a run over several must share, in one line for the --nccl-id exchange
 * (dist.h): what sizes and orders their collectives (bodies, frames, steps, the energies'
 * cadence, maps, tile, culling) and a digest of the bodies and the physics (FNV-1a). */
static uint64_t fnv1a(uint64_t h, const void *data, size_t bytes) {
    for (size_t k = 0; k < bytes; ++k) {
        h = (h ^ ((const unsigned char *)data)[k]) * 1099511628211ull;
    }
    return h;
}

static void run_settings(const sim_session *s, char *buf, size_t cap) {
    const size_t state_bytes = (size_t)s->initial.n * sizeof(sim_vec4d);
    uint64_t h = fnv1a(1469598103934665603ull, s->initial.pos, state_bytes);
    h = fnv1a(h, s->initial.vel, state_bytes);
    const sim_params *p = &s->params;
    char physics[256];
    snprintf(physics, sizeof physics, "%.17g %.17g %.17g %d %.17g %.17g %.17g %.17g %.17g %.17g %d",
             p->dt, p->stiffness, p->restitution, p->hertz, p->gravity.x, p->gravity.y,
             p->gravity.z, p->box_half, p->atm_nu, p->atm_cutoff, p->periodic);
    h = fnv1a(h, physics, strlen(physics));
    const sim_backend_config *c = &s->config;
    snprintf(buf, cap,
             "N %u, %ld frames of %d steps, energies every %d, %d GPUs a process, pair map %s "
             "tile %u cull %d, triplets %s, bodies and physics %016llx",
             s->initial.n, s->cfg.frames, p->steps_per_frame, s->cfg.energy_every,
             s->config.multi.local,
             sim_pair_choice_label(c->pair_map), c->tile, c->cull,
             p->triplets ? sim_triplet_map_label(c->triplet_map) : "off", (unsigned long long)h);
}

/* A run over processes: the ranks agree on one NCCL id through the --nccl-id file, and rank 0
 * hands it out only when every rank's settings equal its own (so none waits in NCCL for ever). */
static sim_status exchange_nccl_id(sim_session *s, sim_error *err) {
    const sim_session_config *o = &s->cfg;
    sim_multi_config *m = &s->config.multi;
    char run[SIM_DIST_RUN_MAX];
    run_settings(s, run, sizeof run);
    const sim_dist_exchange x = {o->nccl_id_path, o->rank,       o->world, run,
                                 o->nccl_id_wait, o->config.stop};
    if (o->nccl_id_mpi) {
        if (o->rank == 0 && !m->space) { /* the split in space runs no NCCL: only the check */
            SIM_TRY(sim_multi_nccl_id(m->nccl_id, err));
        }
        SIM_TRY(sim_dist_exchange_mpi(&x, m->nccl_id, err));
    } else if (o->rank == 0) {
        SIM_TRY(sim_multi_nccl_id(m->nccl_id, err));
        SIM_TRY(sim_dist_write_id(&x, m->nccl_id, err));
        s->id_written = 1;
    } else {
        SIM_TRY(sim_dist_read_id(&x, m->nccl_id, err));
    }
    m->id_set = 1;
    return SIM_OK;
}

/* Friction (docs/friction.md) runs on one rank, the CPU reference or one GPU: several GPUs or
 * ranks are refused in one line naming where the friction came from, before anything is built
 * (exit 2). */
static sim_status settle_friction(sim_session *s, sim_error *err) {
    const sim_params *p = &s->params;
    const sim_session_config *o = &s->cfg;
    if (!sim_params_have_friction(p)) {
        /* inputs that only friction reads: said once, as for other ignored inputs */
        const int ratio = (o->params_given & SIM_GIVEN(STIFFNESS_RATIO)) != 0;
        const int damping = (o->params_given & SIM_GIVEN(TANGENTIAL_DAMPING)) != 0;
        if (ratio || damping) {
            char text[256];
            snprintf(text, sizeof text,
                     "%s%s%s %s friction's tangential spring and dashpot: with friction 0 and "
                     "rolling friction 0 %s no effect (--friction, --rolling-friction)",
                     ratio ? "--stiffness-ratio" : "", ratio && damping ? " and " : "",
                     damping ? "--tangential-damping" : "", ratio && damping ? "shape" : "shapes",
                     ratio && damping ? "they have" : "it has");
            sim_session_notice(s, text);
        }
        return SIM_OK;
    }
    char from[SIM_PATH_MAX + 96];
    const unsigned flags = SIM_GIVEN(FRICTION) | SIM_GIVEN(ROLLING_FRICTION);
    if (o->params_given & flags) {
        char mu[48] = "", mu_r[48] = "";
        if (p->friction > 0.0) {
            snprintf(mu, sizeof mu, "--friction %g", p->friction);
        }
        if (p->rolling_friction > 0.0) {
            snprintf(mu_r, sizeof mu_r, "--rolling-friction %g", p->rolling_friction);
        }
        snprintf(from, sizeof from, "%s%s%s", mu, mu[0] && mu_r[0] ? " " : "", mu_r);
    } else {
        snprintf(from, sizeof from, "friction %g, rolling friction %g in %s", p->friction,
                 p->rolling_friction, s->scene[0] ? s->scene : o->scene);
    }
    if (s->config.multi.world > 1 && !s->config.multi.space) { /* space moves the histories */
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: friction runs on one rank (its contact histories live in one "
                        "process); drop --gpus / --rank / --world",
                        from);
    }
    return SIM_OK;
}

/* config.bodies: a copy, under a name that is no built-in scene (which it would hide). */
static sim_status take_bodies(sim_session *s, sim_error *err) {
    const char *name = s->cfg.scene;
    if (name[0] == '\0' || sim_scene_is_builtin(name)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "bodies given as arrays need a name of their own in config.scene, not "
                        "'%s'",
                        name);
    }
    if (s->cfg.bodies->n == 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "%s: no bodies", name);
    }
    return sim_state_copy(&s->bodies, s->cfg.bodies, err);
}

/* Several GPUs split the sweeps, but each keeps every body and the forces are summed over all of
 * them at every step (sim/backends/multi_backend.c): culled contacts without triplets sweep too
 * little for that to pay, and a user asking for GPUs would expect the opposite. Rank 0 says so. */
static void culled_ranks_notice(sim_session *s) {
    const sim_backend_config *c = &s->config;
    if (c->multi.world <= 1 || c->multi.rank != 0 || c->kind != SIM_BACKEND_CUDA ||
        !sim_config_culls(c) || s->params.triplets) {
        return;
    }
    char text[512];
    snprintf(text, sizeof text,
             "%d GPUs with culled contacts and no triplet forces: each GPU keeps every body and "
             "their forces are summed over all of them at every step, which costs more than the "
             "contact sweep they share (a gas of 4,194,304 bodies stepped ~1.6x slower on 4 GPUs "
             "than on one: bench/results/nvidia-h100/issue24_four_gpu_run.txt); several GPUs "
             "pay off for --cull off and for triplet forces",
             c->multi.world);
    sim_session_notice(s, text);
}

sim_status sim_session_prepare(sim_session **out, const sim_session_config *o, sim_error *err) {
    *out = NULL;
    sim_session *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the session");
    }
    s->cfg = *o;
    /* config.stop (Ctrl-C) stops the backend's work, also the autotuner's and the initial
     * forces: resolve_backend starts from the caller's config. */
    sim_status st = resolve_backend(s, err);
    if (st == SIM_OK && o->bodies != NULL) {
        st = take_bodies(s, err);
    }
    if (st == SIM_OK) {
        st = sim_session_load(s, o->scene, err);
    }
    if (st == SIM_OK) {
        st = settle_friction(s, err);
    }
    if (st == SIM_OK) {
        st = sim_session_load_meshes(s, err);
    }
    if (st == SIM_OK && s->params.hertz && (o->params_given & SIM_GIVEN(LAMMPS_DASHPOT))) {
        /* the Hertz law has no contact-onset weighting: said once, as for other ignored inputs */
        sim_session_notice(s, "--lammps-dashpot shapes the linear law's dashpot: with the Hertz "
                              "law it has no effect (--contact)");
    }
    if (st == SIM_OK) {
        choose_maps_source(s);
    }
    if (st == SIM_OK && o->autotune != 0) {
        char report[512];
        st = sim_autotune(&s->config, o->autotune, &s->params, &s->initial, report, sizeof report,
                          err);
        if (st == SIM_OK) {
            sim_session_notice(s, report);
        }
    }
    if (st == SIM_OK) {
        culled_ranks_notice(s);
    }
    if (st == SIM_OK && s->config.multi.world > 1 &&
        s->config.multi.local < s->config.multi.world) {
        st = exchange_nccl_id(s, err);
    }
    if (st != SIM_OK) {
        sim_session_close(s);
        return st;
    }
    sim_session_refresh(s);
    *out = s;
    return SIM_OK;
}

/* Steps between two rebuilds of the neighbour lists expected from the initial state: until the
 * fastest body, at its speed and gravity's acceleration, has moved half the skin (collisions
 * change speeds, but not their scale); at least 1, at most 10,000. */
static double rebuild_every(const sim_state *st, const sim_params *p, double skin) {
    double v2 = 0.0;
    for (uint32_t i = 0; i < st->n; ++i) {
        const sim_vec4d *v = &st->vel[i];
        v2 = fmax(v2, v->x * v->x + v->y * v->y + v->z * v->z);
    }
    const sim_vec3d g = p->gravity;
    const double v = sqrt(v2), a = sqrt(g.x * g.x + g.y * g.y + g.z * g.z), half = 0.5 * skin;
    /* v t + a t^2 / 2 = half */
    const double t = a > 0.0   ? (sqrt(v * v + 2.0 * a * half) - v) / a
                     : v > 0.0 ? half / v
                               : INFINITY;
    const double steps = p->dt > 0.0 ? t / p->dt : 1.0;
    return steps < 1.0 ? 1.0 : steps > 1e4 || !(steps == steps) ? 1e4 : steps;
}

/* The backend's memory by part for the summary (memory_plan.h): the bodies' radii and the cells
 * its grid takes at its skin, as the backend checked them before it allocated. */
static void plan_backend_memory(sim_session *s) {
    sim_memory_plan *plan = &s->info.memory;
    memset(plan, 0, sizeof *plan);
    const sim_backend_config *c = sim_backend_get_config(s->backend);
    if (c->kind != SIM_BACKEND_CUDA) {
        return;
    }
    const sim_state *st = &s->initial;
    double r_min = INFINITY, r_max = 0.0;
    for (uint32_t i = 0; i < st->n; ++i) {
        r_min = fmin(r_min, st->pos[i].w);
        r_max = fmax(r_max, st->pos[i].w);
    }
    sim_cell_grid g;
    const uint64_t cells =
        sim_cell_grid_shape(&s->params, r_max, s->backend->nlist_skin, st->n, &g) ? g.cells : 0u;
    sim_memory_plan_cuda(st->n, c, &s->params, r_min, r_max, cells, plan);
}

/* The initial state's bodies freed, its n kept: a run split in space has each rank keep its own
 * bodies, so that no rank holds all N past set-up (a reset loads the scene again). */
static void drop_initial_bodies(sim_state *st) {
    const uint32_t n = st->n;
    sim_state_free(st);
    st->n = n;
}

sim_status sim_session_start(sim_session *s, sim_error *err) {
    SIM_ASSERT(s->backend == NULL);
    sim_status st = sim_backend_create(&s->config, &s->params, &s->initial, &s->backend, err);
    if (st == SIM_OK) {
        st = sim_session_apply_meshes(s, err);
    }
    if (s->id_written) { /* every rank has joined (or the run failed): the id is spent */
        (void)remove(s->cfg.nccl_id_path);
        s->id_written = 0;
    }
    if (st == SIM_OK) {
        s->info.step_estimate_ms = sim_step_estimate_ms(
            s->backend, rebuild_every(&s->initial, &s->params, s->backend->nlist_skin));
        plan_backend_memory(s);
        if (s->config.multi.space) { /* each rank holds its own bodies now (issue 40: memory) */
            drop_initial_bodies(&s->initial);
        }
    }
    sim_session_refresh(s);
    return st;
}

sim_status sim_session_open(sim_session **out, const sim_session_config *o, sim_error *err) {
    sim_session *s = NULL;
    SIM_TRY(sim_session_prepare(&s, o, err));
    /* Ctrl-C while the scene was made ready (its last copies): no backend is built for it. */
    const sim_status st = o->config.stop != NULL && *o->config.stop != 0
                              ? sim_fail(err, SIM_INTERRUPTED, "stopped while opening %s", o->scene)
                              : sim_session_start(s, err);
    if (st != SIM_OK) {
        sim_session_close(s);
        return st;
    }
    *out = s;
    return SIM_OK;
}

void sim_session_close(sim_session *s) {
    if (s == NULL) {
        return;
    }
    (void)sim_session_dump_stop(s, NULL, NULL);
    if (s->id_written) { /* prepared, never started */
        (void)remove(s->cfg.nccl_id_path);
    }
    sim_backend_destroy(s->backend);
    sim_session_free_meshes(s);
    sim_state_free(&s->initial);
    sim_state_free(&s->bodies);
    free(s->height_pos);
    free(s->spin);
    free(s);
}

/* The pair tile when nobody chose one. CUDA, culled: 32 (the smallest tiles are the tightest
 * boxes: a gas and a resting pack of 1,048,576 take the shortest contact step at 32, then 64,
 * then 128: bench/results/nvidia-h100/cull_timing.csv). CUDA, brute force: 128 (the fastest
 * from 16,384 to 131,072 bodies, within 1 % of 64 at 4,096: bench/results/nvidia-h200/pairs.csv).
 * CPU: 32, 64 and 128 are within 5 % of each other on one thread at N = 2,000, and 64
 * gives OpenMP twice the tile pairs of 128 to share. */
static uint32_t default_tile(const sim_backend_config *c, const sim_params *p, uint32_t n) {
    uint32_t tile = c->kind != SIM_BACKEND_CUDA ? 64u : sim_config_culls(c) ? 32u : 128u;
    /* The maps cover SIM_MAX_TILES_2D tiles per side, so past that many tiles of `tile` bodies
     * the next larger tile takes over (body_limit allowed N for the largest). On the cell grid
     * no pair map is launched, but the culling's plans place its super-tiles by groups: the tile
     * grows past SIM_MAX_TILES_2D groups of them. */
    const uint64_t grid_tiles =
        (uint64_t)SIM_MAX_TILES_2D * sim_cull_group_size() * sim_cull_super_size();
    const int grid = sim_config_runs_on_grid(c, p);
    while (tile < sim_pair_tile_max() &&
           (grid ? (uint64_t)n > grid_tiles * tile : n > sim_pair_max_bodies(tile))) {
        tile *= 2u;
    }
    return tile;
}

/* Says where the maps and the tile come from and, for the viewer (cached_defaults) when the
 * command line names neither a pair map nor a tile, takes the autotuner's cached choice for
 * this GPU and N, else the backend's fastest tile. */
static void choose_maps_source(sim_session *s) {
    const sim_session_config *o = &s->cfg;
    const size_t cap = sizeof s->maps_source;
    if (o->autotune != 0) {
        snprintf(s->maps_source, cap, "autotune (--pair-map/--triplet-map auto)");
        return;
    }
    if (!o->tile_set) {
        s->config.tile = default_tile(&s->config, &s->params, s->initial.n);
    }
    if (o->pair_map_set || o->tile_set || !o->cached_defaults) {
        snprintf(s->maps_source, cap, "%s (tile %u)",
                 o->pair_map_set || o->tile_set || o->triplet_map_set ? "command line" : "default",
                 s->config.tile);
        return;
    }
    sim_autotune_entry hit;
    sim_backend_config c = s->config;
    if (sim_autotune_cached(&c, s->params.triplets, 0, s->initial.n, &hit)) {
        if (o->triplet_map_set) {
            c.triplet_map = s->config.triplet_map;
        }
        s->config = c;
        snprintf(s->maps_source, cap, "cached autotune%s%s (pair map %s, tile %u)",
                 hit.date[0] && hit.date[0] != '-' ? " of " : "",
                 hit.date[0] != '-' ? hit.date : "", hit.pair, hit.tile);
        return;
    }
    const int cuda = s->config.kind == SIM_BACKEND_CUDA;
    snprintf(s->maps_source, cap, "default (tile %u: the fastest on %s%s; no autotune cached)",
             s->config.tile, cuda ? "CUDA" : "the CPU",
             !cuda                   ? ""
             : s->config.tile == 32u ? " with culling"
                                     : " without culling");
}

double sim_session_triples_per_s(sim_backend_kind kind) {
    return kind == SIM_BACKEND_CUDA ? TRIPLES_PER_S_CUDA : TRIPLES_PER_S_CPU;
}

sim_status sim_session_reset(sim_session *s, sim_error *err) {
    return sim_session_set_scene(s, s->scene, err);
}

sim_status sim_session_set_scene(sim_session *s, const char *scene, sim_error *err) {
    char name[SIM_PATH_MAX];
    snprintf(name, sizeof name, "%s", scene);
    const uint32_t old_n = s->initial.n;
    SIM_TRY(sim_session_load(s, name, err));
    sim_status st = SIM_OK;
    if (s->initial.n == old_n) {
        st = sim_backend_set_params(s->backend, &s->params, err);
        st = st == SIM_OK ? sim_backend_set_state(s->backend, &s->initial, err) : st;
    } else {
        /* A different N: a new backend sized for it, with the maps the user has active now. A
         * trajectory file holds one N: its recording ends here. */
        if (s->dump != NULL) {
            char text[SIM_PATH_MAX + 96];
            snprintf(text, sizeof text, "trajectory %s ended: the new scene has %u bodies",
                     s->dump_path, s->initial.n);
            (void)sim_session_dump_stop(s, NULL, NULL);
            sim_session_notice(s, text);
        }
        sim_backend_config config = *sim_backend_get_config(s->backend);
        sim_backend *fresh = NULL;
        st = sim_backend_create(&config, &s->params, &s->initial, &fresh, err);
        if (st == SIM_OK) {
            sim_backend_destroy(s->backend);
            s->backend = fresh;
        }
    }
    if (st == SIM_OK) { /* a scene (re)loaded: the meshes start from their place at t = 0 */
        st = sim_session_apply_meshes(s, err);
    }
    sim_session_refresh(s);
    return st;
}
