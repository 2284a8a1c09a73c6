/* SPDX-License-Identifier: MIT
 * nbsim — neighbour lists on the CUDA backend (sim/nlist/), against the GPU's unculled sweep and
 * the CPU reference, half and full lists, tiles of 32 and 64.
 *
 * Acceptance: after every step the touching pairs the lists hold (sim_backend_contacts, user
 * indices) are the unculled sweep's at the same positions; forces against the unculled GPU sweep
 * within the tolerances of test_gpu_backend.c (||dF|| / ||F|| <= 1e-5, per body 1e-4 of
 * |F_i| + 0.1 F_rms: the same pairs summed in another order) and against the CPU reference
 * within TOL_F_BODY_CPU (test_gpu_cull.c says why); trajectories against the unculled GPU sweep
 * within 4e-6 box_half per step. Scenes: dense scenes of 20,001 bodies; the colliding blocks
 * over 40 steps with the skin auto, thin (rebuilt every step: bodies cross half of it in one
 * step) and thick; lists that overflow (a capacity of 2, then a skin three times wider): exact
 * fallback steps, then grown lists; the frame's counts (rebuilds, tests, touching pairs, bytes).
 * The culled tiles (--skin 0) run beside them. Every case runs with the lists built from the cell
 * grid (the default) and again, the tests named *_tiles, from the culled tile pairs. Skipped
 * (77) without a device. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "nlist/nlist.h"
#include "test_cull_scenes.h"
#include "test_gpu_util.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
#define TOL_F_BODY_CPU 2e-3
#define FLOOR 0.1

/* What the lists are built from in the cases under way. */
static sim_nlist_build g_build = SIM_NLIST_BUILD_DEFAULT;

static sim_backend_config config(sim_backend_kind kind, int cull, uint32_t tile,
                                 sim_nlist_kind nlist) {
    sim_backend_config c = sim_backend_config_default();
    static sim_backend_tuning built;
    built = sim_backend_tuning_default();
    built.nlist_build = g_build;
    c.tuning = &built;
    c.kind = kind;
    c.pair_map = SIM_PAIR_MAP_LTM;
    c.tile = tile;
    c.cull = cull;
    c.nlist = nlist;
    return c;
}

static void set_skin(sim_params *p, double skin) { /* < 0: auto */
    p->skin.value = skin < 0.0 ? 0.0 : skin;
    p->skin.set = skin >= 0.0;
}

static sim_backend *make(const sim_backend_config *c, const scene *sc, const char *what) {
    sim_error err = {SIM_OK, ""};
    sim_backend *b = NULL;
    const sim_status st = sim_backend_create(c, &sc->p, &sc->s, &b, &err);
    ENSURE_MSG(st == SIM_OK, "%s: create: %s", what, err.message);
    return st == SIM_OK ? b : NULL;
}

static gpu_snapshot snapshot(sim_backend *b, uint32_t n) {
    gpu_snapshot s;
    sim_error err = {SIM_OK, ""};
    memset(&s, 0, sizeof s);
    ENSURE_MSG(gpu_snapshot_take(b, n, &s, &err) == SIM_OK, "%s", err.message);
    return s;
}

static int forces_agree(const char *what, const gpu_snapshot *a, const gpu_snapshot *ref,
                        uint32_t n, double tol_body) {
    const gpu_err e = gpu_compare3(a->force, ref->force, n, FLOOR);
    ENSURE_MSG(e.rel_l2 <= TOL_F_L2 && e.worst <= tol_body,
               "%s: F rel %.3g (tol %.1g), body %u rel %.3g (tol %.1g)", what, e.rel_l2, TOL_F_L2,
               e.worst_body, e.worst, tol_body);
    return e.rel_l2 <= TOL_F_L2 && e.worst <= tol_body;
}

/* b's touching pairs against the unculled probe's at b's state; 1 when the same. */
static int exact_now(sim_backend *b, sim_backend *probe, uint32_t n, const char *what) {
    sim_state s;
    sim_error err = {SIM_OK, ""};
    (void)sim_state_alloc(&s, n, &err);
    ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
    ENSURE(sim_backend_set_state(probe, &s, &err) == SIM_OK);
    uint64_t na, nb;
    sim_body_pair *pa = contacts_of(b, &na), *pb = contacts_of(probe, &nb);
    const int same = same_pairs(pa, na, pb, nb);
    ENSURE_MSG(same, "%s: the lists hold %llu touching pairs, the full sweep finds %llu", what,
               (unsigned long long)na, (unsigned long long)nb);
    free(pa);
    free(pb);
    sim_state_free(&s);
    return same;
}

/* Full and half lists, and no lists: the contacts swept straight from the cells (CELLS). */
static const sim_nlist_kind kinds[3] = {SIM_NLIST_FULL, SIM_NLIST_HALF, SIM_NLIST_CELLS};

/* ---- the same pairs and forces at set-up and after a step ---- */

static void scene_case(const char *kind, uint32_t n) {
    scene sc = make_scene(kind, n, 31u + n);
    const sim_backend_config cf = config(SIM_BACKEND_CUDA, 0, 64, SIM_NLIST_DEFAULT);
    const sim_backend_config cc = config(SIM_BACKEND_CPU, 1, 64, SIM_NLIST_DEFAULT);
    sim_backend *full = make(&cf, &sc, "unculled"), *cpu = make(&cc, &sc, "cpu");
    sim_backend *probe = make(&cf, &sc, "probe");
    if (full == NULL || cpu == NULL || probe == NULL) {
        sim_backend_destroy(full);
        sim_backend_destroy(cpu);
        sim_backend_destroy(probe);
        scene_free(&sc);
        return;
    }
    gpu_snapshot f_full = snapshot(full, n), f_cpu = snapshot(cpu, n);
    int agree = 0, cases = 0;
    for (int k = 0; k < 3; ++k) {
        for (uint32_t tile = 32; tile <= 64; tile *= 2) {
            for (int tiles_only = 0; tiles_only <= 1; ++tiles_only) {
                char what[128];
                snprintf(what, sizeof what, "%s N=%u tile %u %s", kind, n, tile,
                         tiles_only ? "tiles (skin 0)" : sim_nlist_kind_name(kinds[k]));
                if (tiles_only && k > 0) {
                    continue;
                }
                scene run = sc;
                set_skin(&run.p, tiles_only ? 0.0 : -1.0);
                const sim_backend_config c = config(SIM_BACKEND_CUDA, 1, tile, kinds[k]);
                sim_backend *b = make(&c, &run, what);
                if (b == NULL) {
                    continue;
                }
                ++cases;
                gpu_snapshot f = snapshot(b, n);
                int ok = forces_agree(what, &f, &f_full, n, TOL_F_BODY) &&
                         forces_agree(what, &f, &f_cpu, n, TOL_F_BODY_CPU);
                ok &= exact_now(b, probe, n, what);
                sim_frame_timing t;
                sim_error err = {SIM_OK, ""};
                ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s: %s", what,
                           err.message);
                ENSURE(t.culled && t.nlist == !tiles_only && t.nlist_fallback_steps == 0);
                ENSURE(t.nlist_direct == (kinds[k] == SIM_NLIST_CELLS && !tiles_only &&
                                          g_build != SIM_NLIST_BUILD_TILES));
                ENSURE(t.candidate_tests > 0 && t.contacts > n / 8);
                if (!tiles_only) {
                    ENSURE(t.skin > 0.0 && t.nlist_bytes >= (uint64_t)n * 20u &&
                           t.nlist_peak <= t.nlist_cap);
                }
                ok &= exact_now(b, probe, n, what);
                uint64_t na;
                sim_body_pair *pa = contacts_of(b, &na);
                ENSURE_MSG(t.contacts == na,
                           "%s: the sweep counted %llu touching pairs, %llu touch", what,
                           (unsigned long long)t.contacts, (unsigned long long)na);
                free(pa);
                agree += ok;
                gpu_snapshot_free(&f);
                sim_backend_destroy(b);
            }
        }
    }
    printf("  %-8s N=%-6u %d/%d list and tile configurations give the full sweep's pairs and "
           "forces\n",
           kind, n, agree, cases);
    ENSURE(agree == cases && cases == 8);
    gpu_snapshot_free(&f_full);
    gpu_snapshot_free(&f_cpu);
    sim_backend_destroy(full);
    sim_backend_destroy(cpu);
    sim_backend_destroy(probe);
    scene_free(&sc);
}

static void test_scenes(void) {
    static const char *const kinds_s[] = {"gas", "pile", "collide", "walls"};
    for (int s = 0; s < 4; ++s) {
        scene_case(kinds_s[s], 20001);
    }
}

/* ---- over time ---- */

/* The blocks of `collide` crash (5 m/s each) for 40 steps, frames of one step: after every step
 * the lists' touching pairs are the full sweep's at that state, with the skin auto, thin (1 um:
 * every body crosses half of it in a step, rebuilt at every step) and thick (0.3 m); the
 * trajectories stay within test_gpu_backend's tolerance of the unculled sweep's. Full and half
 * lists, the cells swept (as the size picks: each pair once at 4 threads a body; both directions
 * at 4; each pair once at 1 and at 2), and
 * DEFAULT: rebuilt at every step it takes the cells after SIM_NLIST_CADENCE_STEPS steps (nlist.h),
 * and keeps the lists with the thick skin. Each pair once also in frames of 10 steps, the second
 * half kicks then folded into the next drifts (cuda_verlet_second), checked after each frame. */
static void test_over_time(void) {
    const uint32_t n = 30000;
    const double skins[3] = {-1.0, 1e-6, 0.3};
    /* the cells swept as their size picks (each pair once, 4 threads a body here), both
     * directions, and each pair once at 1 and 2 threads (NBSIM_CELL_THREADS, NBSIM_CELL_ONCE,
     * nlist_kernels.cu: the forms a larger N takes) */
    enum { kForms = 8 };
    const sim_nlist_kind over[kForms] = {SIM_NLIST_FULL,  SIM_NLIST_HALF,  SIM_NLIST_CELLS,
                                         SIM_NLIST_CELLS, SIM_NLIST_CELLS, SIM_NLIST_CELLS,
                                         SIM_NLIST_CELLS, SIM_NLIST_DEFAULT};
    const char *threads[kForms] = {NULL, NULL, NULL, "4", "1", "2", "2", NULL};
    const char *once[kForms] = {NULL, NULL, NULL, "0", "1", "1", "1", NULL};
    const int per_frame[kForms] = {1, 1, 1, 1, 1, 1, 10, 1};
    for (int k = 0; k < kForms; ++k) {
        for (int s = 0; s < 3; ++s) {
            scene sc = make_scene("collide", n, 3u);
            sc.p.steps_per_frame = per_frame[k];
            const sim_backend_config cf = config(SIM_BACKEND_CUDA, 0, 64, SIM_NLIST_DEFAULT);
            sim_backend *ref = make(&cf, &sc, "unculled"), *probe = make(&cf, &sc, "probe");
            set_skin(&sc.p, skins[s]);
            const sim_backend_config c = config(SIM_BACKEND_CUDA, 1, 32, over[k]);
            if (threads[k] != NULL) {
                setenv("NBSIM_CELL_THREADS", threads[k], 1);
                setenv("NBSIM_CELL_ONCE", once[k], 1);
            }
            sim_backend *b = make(&c, &sc, "listed");
            unsetenv("NBSIM_CELL_THREADS");
            unsetenv("NBSIM_CELL_ONCE");
            int mismatches = 0, rebuilds = 0, steps = 0, direct = 0;
            sim_error err = {SIM_OK, ""};
            for (int f = 0; b != NULL && ref != NULL && probe != NULL && f < 40 / per_frame[k];
                 ++f) {
                sim_frame_timing t, tr;
                ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s", err.message);
                ENSURE(sim_backend_run_frame(ref, &tr, &err) == SIM_OK);
                ENSURE(t.nlist && t.nlist_fallback_steps == 0);
                rebuilds += t.nlist_rebuilds;
                steps += t.steps;
                direct += t.nlist_direct ? t.steps : 0;
                mismatches += !exact_now(b, probe, n, "collide");
            }
            double drift = 0.0;
            if (b != NULL && ref != NULL) {
                gpu_snapshot a = snapshot(b, n), r = snapshot(ref, n);
                drift = gpu_compare_pos(&a.state, &r.state, FLOOR).max_abs / sc.p.box_half;
                gpu_snapshot_free(&a);
                gpu_snapshot_free(&r);
            }
            printf("  collide N=%u, %s lists%s%s%s, %d a frame, skin %s: %d rebuilds in %d steps "
                   "(%d swept from the cells), %d mismatches, positions within %.1e box_half of "
                   "the unculled sweep\n",
                   n, sim_nlist_kind_name(over[k]), threads[k] != NULL ? ", cell threads " : "",
                   threads[k] != NULL ? threads[k] : "",
                   once[k] != NULL && once[k][0] == '1' ? ", each pair once" : "", per_frame[k],
                   s == 0   ? "auto"
                   : s == 1 ? "1 um"
                            : "0.3 m",
                   rebuilds, steps, direct, mismatches, drift);
            ENSURE(mismatches == 0 && steps == 40);
            ENSURE(s != 1 || rebuilds == steps);
            /* the cells only on a grid (not with the tile pairs asked for) */
            const int cells = g_build != SIM_NLIST_BUILD_TILES;
            ENSURE(over[k] != SIM_NLIST_CELLS || direct == (cells ? steps : 0));
            ENSURE(over[k] == SIM_NLIST_CELLS || over[k] == SIM_NLIST_DEFAULT || direct == 0);
            if (over[k] == SIM_NLIST_DEFAULT) { /* the cells after the first decision, or never */
                /* (the set-up's forces count as a sweep of the first frame) */
                const int after = steps - (int)SIM_NLIST_CADENCE_STEPS;
                ENSURE_MSG(!cells || s == 0 ||
                               (s == 1 ? direct >= after && direct <= after + 1 : direct == 0),
                           "DEFAULT, skin %g: %d of %d steps swept from the cells", skins[s],
                           direct, steps);
            }
            ENSURE(drift <= 4.0 * 1e-6 * 40);
            sim_backend_destroy(b);
            sim_backend_destroy(ref);
            sim_backend_destroy(probe);
            scene_free(&sc);
        }
    }
}

/* ---- lists that overflow ---- */

/* Lists of two entries: the set-up overflows (F_0 through the fallback, exact) and grows them;
 * then a skin three times wider (set_params: rebuilt at the next step) overflows again: that
 * frame's steps sweep the tile pairs (exact, counted), the lists grow, the next frame's do not. */
static void test_overflow(void) {
    const uint32_t n = 20001;
    for (int k = 0; k < 2; ++k) {
        scene sc = make_scene("pile", n, 21u);
        sc.p.steps_per_frame = 3;
        set_skin(&sc.p, 0.05);
        sim_backend_config c = config(SIM_BACKEND_CUDA, 1, 32, kinds[k]);
        sim_backend_tuning small = *c.tuning;
        small.nlist_capacity = 2;
        c.tuning = &small;
        const sim_backend_config cf = config(SIM_BACKEND_CUDA, 0, 64, SIM_NLIST_DEFAULT);
        sim_backend *b = make(&c, &sc, "overflow"), *full = make(&cf, &sc, "unculled");
        sim_backend *probe = make(&cf, &sc, "probe");
        if (b == NULL || full == NULL || probe == NULL) {
            sim_backend_destroy(b);
            sim_backend_destroy(full);
            sim_backend_destroy(probe);
            scene_free(&sc);
            continue;
        }
        gpu_snapshot a0 = snapshot(b, n), r0 = snapshot(full, n);
        forces_agree("overflowed lists at set-up", &a0, &r0, n, TOL_F_BODY);
        gpu_snapshot_free(&a0);
        gpu_snapshot_free(&r0);
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE_MSG(t.nlist_cap > 2 && t.nlist_fallback_steps == 0, "cap %u, %d fallbacks",
                   t.nlist_cap, t.nlist_fallback_steps);
        const uint32_t cap = t.nlist_cap;
        sim_params p = *sim_backend_get_params(b);
        set_skin(&p, 0.6);
        ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        printf("  %s lists of %u entries, skin 0.6 m: %d of 3 steps swept the tile pairs, a body "
               "needed %u\n",
               sim_nlist_kind_name(kinds[k]), cap, t.nlist_fallback_steps, t.nlist_peak);
        ENSURE(t.nlist_fallback_steps == 3 && t.nlist_peak > cap && !t.nlist_capped);
        ENSURE(exact_now(b, probe, n, "overflowed"));
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(t.nlist_fallback_steps == 0 && t.nlist_cap >= 2 * cap);
        ENSURE(exact_now(b, probe, n, "grown"));
        sim_backend_destroy(b);
        sim_backend_destroy(full);
        sim_backend_destroy(probe);
        scene_free(&sc);
    }
}

/* ---- GPU against the CPU reference over time ---- */

/* The squeezed gas for 50 steps on both backends with lists: positions within the unculled
 * GPU's tolerance of the CPU's. */
static void test_against_cpu(void) {
    const uint32_t n = 8001;
    for (int k = 0; k < 2; ++k) {
        scene sc = make_scene("gas", n, 12u);
        sc.p.steps_per_frame = 50;
        const sim_backend_config cg = config(SIM_BACKEND_CUDA, 1, 32, kinds[k]);
        const sim_backend_config cc = config(SIM_BACKEND_CPU, 1, 32, kinds[k]);
        sim_backend *g = make(&cg, &sc, "gpu"), *c = make(&cc, &sc, "cpu");
        if (g != NULL && c != NULL) {
            sim_frame_timing tg, tc;
            sim_error err = {SIM_OK, ""};
            ENSURE(sim_backend_run_frame(g, &tg, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(c, &tc, &err) == SIM_OK);
            ENSURE(tg.nlist && tc.nlist && fabs(tg.skin - tc.skin) <= 1e-12 * tc.skin);
            gpu_snapshot a = snapshot(g, n), r = snapshot(c, n);
            const double d = gpu_compare_pos(&a.state, &r.state, FLOOR).max_abs / sc.p.box_half;
            printf("  gas N=%u, %s lists, 50 steps: GPU within %.1e box_half of the CPU; "
                   "rebuilds %d (GPU) %d (CPU)\n",
                   n, sim_nlist_kind_name(kinds[k]), d, tg.nlist_rebuilds, tc.nlist_rebuilds);
            ENSURE(d <= 4.0 * 1e-6 * 50);
            gpu_snapshot_free(&a);
            gpu_snapshot_free(&r);
        }
        sim_backend_destroy(g);
        sim_backend_destroy(c);
        scene_free(&sc);
    }
}

/* Small, for compute-sanitizer (memcheck, racecheck, synccheck): both kinds, one and two levels,
 * lists that overflow, energies, contacts, a toggle of culling, a new skin. */
static void test_sanitizer_small(void) {
    const uint32_t n = 3001;
    for (int k = 0; k < 2; ++k) {
        for (int levels = 1; levels <= 2; ++levels) {
            scene sc = make_scene("collide", n, 2u);
            sc.p.steps_per_frame = 2;
            sim_backend_config c = config(SIM_BACKEND_CUDA, 1, 32, kinds[k]);
            c.cull_levels = levels;
            sim_backend_tuning small = *c.tuning;
            small.nlist_capacity = levels == 2 ? 2 : 0;
            c.tuning = &small;
            sim_backend *b = make(&c, &sc, "small");
            if (b == NULL) {
                scene_free(&sc);
                continue;
            }
            sim_error err = {SIM_OK, ""};
            sim_frame_timing t;
            sim_energy e;
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.nlist);
            ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
            uint64_t count;
            free(contacts_of(b, &count));
            ENSURE(sim_backend_set_cull(b, 0, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && !t.culled && !t.nlist);
            ENSURE(sim_backend_set_cull(b, 1, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.nlist);
            sim_params p = *sim_backend_get_params(b);
            set_skin(&p, 0.5);
            ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.skin == 0.5);
            sim_backend_destroy(b);
            scene_free(&sc);
        }
    }
}

/* The cases again with the lists built from the culled tile pairs. */
#define FROM_TILES(name)                                                                           \
    static void name##_tiles(void) {                                                              \
        g_build = SIM_NLIST_BUILD_TILES;                                                          \
        name();                                                                                    \
        g_build = SIM_NLIST_BUILD_DEFAULT;                                                        \
    }
FROM_TILES(test_scenes)
FROM_TILES(test_over_time)
FROM_TILES(test_overflow)

static const ensure_test tests[] = {
    {"sanitizer_small", test_sanitizer_small},
    {"scenes", test_scenes},
    {"over_time", test_over_time},
    {"overflow", test_overflow},
    {"against_cpu", test_against_cpu},
    {"scenes_tiles", test_scenes_tiles},
    {"over_time_tiles", test_over_time_tiles},
    {"overflow_tiles", test_overflow_tiles},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
