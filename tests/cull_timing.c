/* SPDX-License-Identifier: MIT
 * nbsim — times the contact pipeline through the backend API (the headless program does not
 * have --cull yet): per-step medians of sort, cull, pair (contact sweep), integrate and the
 * whole step, the interacting tile pairs, re-sorts and fallbacks; and, as the peers time
 * themselves (NVIDIA's particles sample: a host clock around its loop, synchronised at both
 * ends), the whole step's mean over every timed step, re-sorts included: from the events
 * (mean_step_ms) and from a host clock around the timed frames (wall_step_ms; each frame ends in
 * one host sync, so --frames 1 --steps 300 --warmup 0 is the sample's -i=300). One line to
 * stdout, and one CSV row appended to --csv (header written when the file is new).
 * scripts/gpu_cull.sh and scripts/gpu_peers.sh drive it; ctest runs it once, tiny, on the CPU
 * (label cpu) so it keeps building and working.
 *
 *   cull_timing [--backend cpu|cuda] [--scene gas|pile|collide|lattice|dense|FILE] [--n N]
 *               [--tile T] [--threads T]
 *               [--map NAME] [--cull 0|1] [--levels 0|1|2] [--sort-every K] [--frames F]
 *               [--steps S] [--warmup W] [--seed S] [--csv FILE] [--label TEXT]
 *               [--skin S|auto] [--nlist half|full|cells|default] [--build cells|tiles|default]
 *               [--count 0|1] [--graphs 0|1] [--phase-times sampled|every]
 *               [--friction MU] [--rolling-friction MU_R] [--periodic AXES] [--dt S]
 *
 * --skin: the neighbour lists' skin [m] (0: culled tile pairs, no lists; default auto, as nbsim);
 * --nlist: their kind (sim_nlist_kind); --build: what they are built from (sim_nlist_build);
 * --count 0: the sweeps do not count their tests and
 * touching pairs (to time what counting costs); --graphs 0: every kernel of a step launched on
 * the stream as it comes (config.stream_launches; default 1: short steps as CUDA graphs, to time
 * what that saves); --phase-times: which steps mark each phase (config.phase_timing; default
 * sampled, as nbsim: every marks every step's, to time what the marks cost); --friction,
 * --rolling-friction: the
 * coefficients (default: the scene's own; scripts/gpu_friction.sh times friction on and off);
 * --periodic: the scene's box periodic on those axes (xz, xyz: as nbsim's flag;
 * scripts/gpu_periodic.sh times it against the walls); --dt: the step [s] (default: nbsim's,
 * t_c / 50; the scripts pass the particles sample's 0.5 s with the lattice). The CSV adds what the
 * lists did over the timed frames (rebuilds, the skin, bytes per body, tests and touching pairs per
 * step) before its last three columns, which stay timed_steps, mean_step_ms and wall_step_ms.
 *
 * --threads: the CPU backend's threads (default: all). A --scene that is not a built-in name is a
 * scene file (a saved state: its parameters and springs; --n is then ignored).
 * Scenes are the built-in ones, except `dense`: a resting simple-cubic pack (pitch 1.2 m, radii
 * 0.60-0.61 m, so every face neighbour touches with an overlap of at most 2 cm: ~6 contacts per
 * body) under gravity, a stand-in for a settled pile that would take ~10^5 steps to form.
 * Exit status: 0 done, 1 runtime failure, 2 bad option, 77 --backend cuda without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "nbsim/params.h"
#include "nbsim/scene.h"

#include "test_rng.h"

#define MAX_FRAMES 4096

typedef struct {
    sim_backend_kind kind;
    const char *scene;
    uint32_t n, tile;
    int map, cull, levels, sort_every, frames, steps, warmup;
    uint64_t seed;
    const char *csv, *label;
    double skin; /* < 0: auto */
    sim_nlist_kind nlist;
    sim_nlist_build build;
    int count, graphs;
    sim_phase_timing phases;
    double friction, rolling; /* < 0: the scene's */
    double dt;                /* 0: the scene's, or the default step */
    const char *periodic;     /* NULL: walls on every axis */
    int threads;              /* CPU backend threads, 0: all */
} options;

static int usage(const char *why) {
    fprintf(stderr, "cull_timing: %s\n", why);
    return 2;
}

static int parse(int argc, char **argv, options *o) {
    *o = (options){.kind = SIM_BACKEND_CUDA,
                   .scene = "gas",
                   .n = 65536,
                   .tile = 64,
                   .map = SIM_PAIR_MAP_LTM,
                   .cull = 1,
                   .frames = 20,
                   .steps = 1,
                   .warmup = 3,
                   .seed = 1,
                   .label = "",
                   .skin = -1.0,
                   .nlist = SIM_NLIST_DEFAULT,
                   .build = SIM_NLIST_BUILD_DEFAULT,
                   .count = 1,
                   .graphs = 1,
                   .phases = SIM_PHASE_TIMING_SAMPLED,
                   .friction = -1.0,
                   .rolling = -1.0};
    for (int a = 1; a < argc; ++a) {
        const char *f = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (v == NULL) {
            return usage("every option takes a value");
        }
        ++a;
        if (strcmp(f, "--backend") == 0) {
            o->kind = strcmp(v, "cpu") == 0 ? SIM_BACKEND_CPU : SIM_BACKEND_CUDA;
        } else if (strcmp(f, "--scene") == 0) {
            o->scene = v;
        } else if (strcmp(f, "--n") == 0) {
            o->n = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(f, "--tile") == 0) {
            o->tile = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(f, "--map") == 0) {
            o->map = sim_pair_choice_from_name(v);
            if (o->map < 0) {
                return usage("unknown map");
            }
        } else if (strcmp(f, "--cull") == 0) {
            o->cull = atoi(v);
        } else if (strcmp(f, "--levels") == 0) {
            o->levels = atoi(v);
        } else if (strcmp(f, "--sort-every") == 0) {
            o->sort_every = atoi(v);
        } else if (strcmp(f, "--frames") == 0) {
            o->frames = atoi(v);
        } else if (strcmp(f, "--steps") == 0) {
            o->steps = atoi(v);
        } else if (strcmp(f, "--warmup") == 0) {
            o->warmup = atoi(v);
        } else if (strcmp(f, "--seed") == 0) {
            o->seed = strtoull(v, NULL, 10);
        } else if (strcmp(f, "--csv") == 0) {
            o->csv = v;
        } else if (strcmp(f, "--label") == 0) {
            o->label = v;
        } else if (strcmp(f, "--skin") == 0) {
            o->skin = strcmp(v, "auto") == 0 ? -1.0 : strtod(v, NULL);
            if (!(o->skin >= 0.0) && strcmp(v, "auto") != 0) {
                return usage("--skin S: a distance >= 0 [m] or auto");
            }
        } else if (strcmp(f, "--nlist") == 0) {
            const int kind = sim_nlist_kind_from_name(v);
            if (kind < 0) {
                return usage("--nlist default|half|full|cells");
            }
            o->nlist = (sim_nlist_kind)kind;
        } else if (strcmp(f, "--build") == 0) {
            o->build = strcmp(v, "cells") == 0   ? SIM_NLIST_BUILD_CELLS
                       : strcmp(v, "tiles") == 0 ? SIM_NLIST_BUILD_TILES
                                                 : SIM_NLIST_BUILD_DEFAULT;
            if (o->build == SIM_NLIST_BUILD_DEFAULT && strcmp(v, "default") != 0) {
                return usage("--build cells|tiles|default");
            }
        } else if (strcmp(f, "--count") == 0) {
            o->count = atoi(v);
        } else if (strcmp(f, "--graphs") == 0) {
            o->graphs = atoi(v);
        } else if (strcmp(f, "--phase-times") == 0) {
            const int timing = sim_phase_timing_from_name(v);
            if (timing < 0) {
                return usage("--phase-times sampled|every");
            }
            o->phases = (sim_phase_timing)timing;
        } else if (strcmp(f, "--friction") == 0) {
            o->friction = strtod(v, NULL);
        } else if (strcmp(f, "--rolling-friction") == 0) {
            o->rolling = strtod(v, NULL);
        } else if (strcmp(f, "--periodic") == 0) {
            o->periodic = v;
        } else if (strcmp(f, "--dt") == 0) {
            o->dt = strtod(v, NULL);
            if (!(o->dt > 0.0)) {
                return usage("--dt S: a step > 0 [s]");
            }
        } else if (strcmp(f, "--threads") == 0) {
            o->threads = atoi(v);
        } else {
            return usage("unknown option");
        }
    }
    if (o->n < 1 || o->frames < 1 || o->frames > MAX_FRAMES || o->steps < 1 || o->warmup < 0) {
        return usage("--n, --frames (1..4096) and --steps must be >= 1, --warmup >= 0");
    }
    return 0;
}

/* The resting pack of `dense` (see the top of the file). */
static sim_status dense_scene(uint32_t n, uint64_t seed, sim_params *p, sim_state *s,
                              sim_error *err) {
    SIM_TRY(sim_state_alloc(s, n, err));
    uint32_t m = 1;
    while ((uint64_t)m * m * m < n) {
        ++m;
    }
    const double pitch = 1.2, half = 0.5 * m * pitch + 0.6;
    uint64_t rng = seed;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t ix = i % m, iz = i / m % m, iy = i / m / m;
        const double r = 0.6 + 0.01 * test_rnd(&rng, 0.0, 1.0);
        s->pos[i] = (sim_vec4d){(ix + 0.5) * pitch - half + 0.6, (iy + 0.5) * pitch - half + 0.6,
                                (iz + 0.5) * pitch - half + 0.6, r};
        s->vel[i] = (sim_vec4d){0.0, 0.0, 0.0, sim_sphere_mass(r, 1.0)};
    }
    p->box_half = half;
    p->gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p->restitution = 0.5;
    return SIM_OK;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { kSort, kCull, kPair, kIntegrate, kTriplet, kStep, kContact, kColumns };

int main(int argc, char **argv) {
    options o;
    const int bad = parse(argc, argv, &o);
    if (bad) {
        return bad;
    }
    if (o.kind == SIM_BACKEND_CUDA && sim_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    sim_error err = {SIM_OK, ""};
    sim_params p = sim_params_default();
    p.steps_per_frame = o.steps;
    sim_state s = {0};
    sim_status st = strcmp(o.scene, "dense") == 0 ? dense_scene(o.n, o.seed, &p, &s, &err)
                    : sim_scene_is_builtin(o.scene)
                        ? sim_scene_builtin(o.scene, o.n, o.seed, &p, &s, &err)
                        : sim_scene_load(o.scene, &p, &s, &err);
    if (st == SIM_OK) {
        o.n = s.n;
    }
    p.triplets = 0;
    if (o.friction >= 0.0) {
        p.friction = o.friction;
    }
    if (o.rolling >= 0.0) {
        p.rolling_friction = o.rolling;
    }
    if (o.dt > 0.0) {
        p.dt = o.dt;
    }
    if (st == SIM_OK && o.periodic != NULL &&
        sim_param_set(&p, SIM_PARAM_PERIODIC, o.periodic, &err) != SIM_OK) {
        sim_state_free(&s);
        return usage(err.message);
    }
    p.skin.value = o.skin > 0.0 ? o.skin : 0.0;
    p.skin.set = o.skin >= 0.0;
    sim_backend_config c = sim_backend_config_default();
    c.nlist = o.nlist;
    sim_backend_tuning tuning = sim_backend_tuning_default();
    tuning.nlist_build = o.build;
    tuning.count_contacts = o.count;
    tuning.stream_launches = !o.graphs;
    c.tuning = &tuning;
    c.phase_timing = o.phases;
    c.kind = o.kind;
    c.tile = o.tile;
    c.pair_map = o.map;
    c.cull = o.cull;
    c.cull_levels = o.levels;
    c.sort_every = o.sort_every;
    c.cpu_threads = o.threads;
    sim_backend *b = NULL;
    if (st == SIM_OK) {
        st = sim_backend_create(&c, &p, &s, &b, &err);
    }
    static double col[kColumns][MAX_FRAMES];
    sim_frame_timing t;
    memset(&t, 0, sizeof t);
    int sorts = 0, fallbacks = 0, rebuilds = 0, nlist_fallbacks = 0, graph_steps = 0;
    double nlist_ms = 0.0, skin = 0.0;
    uint64_t tests = 0, contacts = 0, nlist_bytes = 0;
    double event_ms = 0.0, wall0 = 0.0, wall_ms = 0.0;
    long timed_steps = 0, direct_steps = 0;
    for (int f = 0; st == SIM_OK && f < o.warmup + o.frames; ++f) {
        if (f == o.warmup) {
            wall0 = sim_now_ms();
        }
        st = sim_backend_run_frame(b, &t, &err);
        wall_ms = sim_now_ms() - wall0;
        if (st != SIM_OK || f < o.warmup) {
            continue;
        }
        event_ms += t.step_ms;
        timed_steps += t.steps;
        const int k = f - o.warmup;
        const double steps = t.steps;
        col[kSort][k] = t.sort_ms / steps;
        col[kCull][k] = t.cull_ms / steps;
        col[kPair][k] = t.pair_ms / steps;
        col[kIntegrate][k] = t.integrate_ms / steps;
        col[kTriplet][k] = t.triplet_ms / steps;
        col[kStep][k] = t.step_ms / steps;
        col[kContact][k] = (t.sort_ms + t.cull_ms + t.pair_ms) / steps;
        sorts += t.sorts;
        fallbacks += t.cull_fallback_steps;
        rebuilds += t.nlist_rebuilds;
        nlist_fallbacks += t.nlist_fallback_steps;
        direct_steps += t.nlist_direct ? t.steps : 0;
        graph_steps += t.graph_steps;
        nlist_ms += t.nlist_ms;
        tests += t.candidate_tests * (uint64_t)t.steps;
        contacts += t.contacts * (uint64_t)t.steps;
        skin = t.skin;
        nlist_bytes = t.nlist_bytes > nlist_bytes ? t.nlist_bytes : nlist_bytes;
    }
    if (st != SIM_OK) {
        fprintf(stderr, "cull_timing: %s\n", err.message);
        sim_backend_destroy(b);
        sim_state_free(&s);
        return 1;
    }
    double med[kColumns];
    for (int q = 0; q < kColumns; ++q) {
        med[q] = median(col[q], o.frames);
    }
    const double mean_step = event_ms / (double)timed_steps,
                 wall_step = wall_ms / (double)timed_steps;
    const char *map = sim_pair_choice_name(o.map);
    printf("%-10s %-4s %-7s N=%-8u tile=%-3u %-10s cull=%d levels=%d K=%-3d | sort %.4f cull %.4f "
           "pair %.4f integrate %.4f step %.4f contact-step %.4f ms | mean over %ld steps: step "
           "%.4f ms (events), %.4f ms (host clock) | tile pairs %llu of %llu, sorts %d, fallbacks "
           "%d, graphs %d, phases %s\n",
           o.label, o.kind == SIM_BACKEND_CPU ? "cpu" : "cuda", o.scene, o.n, o.tile, map, t.culled,
           t.cull_levels, o.sort_every, med[kSort], med[kCull], med[kPair], med[kIntegrate],
           med[kStep], med[kContact], timed_steps, mean_step, wall_step,
           (unsigned long long)t.tile_pairs, (unsigned long long)t.tile_pairs_total, sorts,
           fallbacks, graph_steps, sim_phase_timing_name(o.phases));
    const double per_step = timed_steps > 0 ? 1.0 / (double)timed_steps : 0.0;
    /* as the lists ran: DEFAULT may have swept the cells on some steps (direct_steps) */
    const char *kind = direct_steps == timed_steps
                           ? "cells"
                           : sim_nlist_kind_name(sim_nlist_kind_for(
                                 o.nlist == SIM_NLIST_CELLS ? SIM_NLIST_DEFAULT : o.nlist, &p));
    printf("%-10s lists: %s (cells swept on %ld of the steps), skin %g m, %d rebuilds in %ld "
           "steps, %d fallback steps, neighbours %.4f ms/step, %.1f bytes per body | %.1f tests "
           "and %.2f touching pairs per body and step\n",
           o.label, t.nlist ? kind : "off (tiles)", direct_steps, skin, rebuilds, timed_steps,
           nlist_fallbacks,
           nlist_ms * per_step, (double)nlist_bytes / o.n, (double)tests * per_step / o.n,
           (double)contacts * per_step / o.n);
    if (o.csv != NULL) {
        FILE *probe = fopen(o.csv, "r");
        const int fresh = probe == NULL;
        if (probe != NULL) {
            fclose(probe);
        }
        FILE *out = fopen(o.csv, "a");
        if (out == NULL) {
            fprintf(stderr, "cull_timing: cannot append to '%s'\n", o.csv);
        } else {
            if (fresh) {
                fprintf(out, "label,backend,device,scene,n,tile,map,culled,levels,sort_every,"
                             "steps_per_frame,frames,sort_ms,cull_ms,pair_ms,integrate_ms,"
                             "triplet_ms,step_ms,contact_step_ms,tile_pairs,tile_pairs_total,"
                             "super_pairs,sorts,fallback_steps,nlist,skin,rebuilds,"
                             "nlist_fallback_steps,nlist_ms,nlist_bytes,tests_per_step,"
                             "contacts_per_step,count,graph_steps,timed_steps,mean_step_ms,"
                             "wall_step_ms,direct_steps\n");
            }
            fprintf(out,
                    "%s,%s,%s,%s,%u,%u,%s,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,"
                    "%llu,%llu,%llu,%d,%d,%s,%.6g,%d,%d,%.6f,%llu,%.1f,%.1f,%d,%d,%ld,%.6f,%.6f,%ld\n",
                    o.label, o.kind == SIM_BACKEND_CPU ? "cpu" : "cuda", sim_backend_device_name(b),
                    o.scene, o.n, o.tile, map, t.culled, t.cull_levels, o.sort_every, o.steps,
                    o.frames, med[kSort], med[kCull], med[kPair], med[kIntegrate], med[kTriplet],
                    med[kStep], med[kContact], (unsigned long long)t.tile_pairs,
                    (unsigned long long)t.tile_pairs_total, (unsigned long long)t.super_pairs,
                    sorts, fallbacks, t.nlist ? kind : "off", skin,
                    rebuilds, nlist_fallbacks, nlist_ms * per_step, (unsigned long long)nlist_bytes,
                    (double)tests * per_step, (double)contacts * per_step, o.count, graph_steps,
                    timed_steps, mean_step, wall_step, direct_steps);
            fclose(out);
        }
    }
    sim_backend_destroy(b);
    sim_state_free(&s);
    return 0;
}
