/* SPDX-License-Identifier: MIT
 * nbsim — the neighbour lists on the CPU reference (sim/nlist/), exact over thousands of steps:
 * after every step the touching pairs the lists hold (sim_backend_contacts: the lists as the step
 * swept them, or the tile pairs of their build when one overflowed) are those of an O(N^2) sweep
 * of the same state, for both kinds of list, in
 *  - a dense pile settling under gravity, and a fast dense gas;
 *  - steps in which every body moves more than half the skin (rebuilt each step), and two bodies
 *    that jump from farther than their reach plus the skin into contact in one step;
 *  - lists that overflow (a tiny capacity, a skin grown by set_params): exact fallback steps,
 *    then grown lists and no more fallbacks;
 * and the forces: lists against the culled tiles (--skin 0) and the unculled sweep, half against
 * full, up to the order of the sums; the grid build against the tile build, bit for bit. The
 * policy itself (when to rebuild, grow) is test_stepper's; the GPU's kernels are test_nlist_emu's
 * and test_gpu_nlist's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "nlist/nlist.h"
#include "test_backend_util.h"
#include "test_cull_scenes.h"

/* The backend's contacts against the brute force of its current state; 1 when equal. */
static int exact_now(sim_backend *b, uint32_t n, const char *what, int step) {
    sim_state s;
    sim_error err;
    ENSURE(sim_state_alloc(&s, n, &err) == SIM_OK);
    ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
    uint64_t na = 0, nb = 0;
    sim_body_pair *a = contacts_of(b, &na), *w = brute_contacts(NULL, &s, &nb);
    const int same = same_pairs(a, na, w, nb);
    ENSURE_MSG(same, "%s, step %d: %llu contacts from the lists, %llu touching", what, step,
               (unsigned long long)na, (unsigned long long)nb);
    free(a);
    free(w);
    sim_state_free(&s);
    return same;
}

static sim_backend_config config_of(sim_nlist_kind kind) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.tile = 32;
    c.cpu_threads = 2;
    c.nlist = kind;
    return c;
}

typedef struct {
    int steps, rebuilds, fallbacks, contacts_seen;
    uint64_t tests;
    double skin;
} run_totals;

/* `steps` frames of one step, each checked; stops at the first mismatch. */
static run_totals run_checked(sim_backend *b, uint32_t n, int steps, const char *what) {
    run_totals r = {0, 0, 0, 0, 0, 0.0};
    sim_error err = {SIM_OK, ""};
    for (int k = 0; k < steps; ++k) {
        sim_frame_timing t;
        if (sim_backend_run_frame(b, &t, &err) != SIM_OK) {
            ENSURE_MSG(0, "%s, step %d: %s", what, k, err.message);
            break;
        }
        ENSURE_MSG(t.nlist == 1 && t.skin > 0.0, "%s: the lists are off", what);
        r.steps += t.steps;
        r.rebuilds += t.nlist_rebuilds;
        r.fallbacks += t.nlist_fallback_steps;
        r.contacts_seen += t.contacts > 0;
        r.tests += t.candidate_tests;
        r.skin = t.skin;
        if (!exact_now(b, n, what, k)) {
            break;
        }
    }
    return r;
}

static double max_force_diff(const sim_vec3d *a, const sim_vec3d *b, uint32_t n, double *scale) {
    double d = 0.0, m = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        d = fmax(d, fabs(a[i].x - b[i].x) + fabs(a[i].y - b[i].y) + fabs(a[i].z - b[i].z));
        m = fmax(m, fabs(b[i].x) + fabs(b[i].y) + fabs(b[i].z));
    }
    *scale = m;
    return d;
}

/* ---- exactness over time ---- */

static void test_dense_pile(void) {
    const sim_nlist_kind kinds[2] = {SIM_NLIST_FULL, SIM_NLIST_HALF};
    for (int k = 0; k < 2; ++k) {
        scene sc = make_scene("pile", 1200, 3);
        const sim_backend_config c = config_of(kinds[k]);
        sim_backend *b = test_backend_make(&c, &sc.p, &sc.s, "pile");
        const run_totals r =
            run_checked(b, sc.s.n, 2000, kinds[k] == SIM_NLIST_HALF ? "pile, half" : "pile, full");
        printf("  pile %s: %d steps, %d rebuilds, %d fallbacks, %.1f tests per step\n",
               sim_nlist_kind_name(kinds[k]), r.steps, r.rebuilds, r.fallbacks,
               (double)r.tests / r.steps);
        ENSURE(r.steps == 2000 && r.rebuilds > 0 && r.rebuilds < r.steps && r.contacts_seen > 0);
        sim_backend_destroy(b);
        scene_free(&sc);
    }
}

/* The squeezed gas at ten times its speeds (up to ~40 m/s): many rebuilds. */
static void test_fast_gas(void) {
    const sim_nlist_kind kinds[2] = {SIM_NLIST_FULL, SIM_NLIST_HALF};
    for (int k = 0; k < 2; ++k) {
        scene sc = make_scene("gas", 1500, 5);
        for (uint32_t i = 0; i < sc.s.n; ++i) {
            sc.s.vel[i].x *= 10.0;
            sc.s.vel[i].y *= 10.0;
            sc.s.vel[i].z *= 10.0;
        }
        const sim_backend_config c = config_of(kinds[k]);
        sim_backend *b = test_backend_make(&c, &sc.p, &sc.s, "gas");
        const run_totals r = run_checked(b, sc.s.n, 1500, "fast gas");
        printf("  fast gas %s: %d steps, %d rebuilds, skin %g m\n", sim_nlist_kind_name(kinds[k]),
               r.steps, r.rebuilds, r.skin);
        ENSURE(r.steps == 1500 && r.rebuilds > 10 && r.contacts_seen > 0);
        sim_backend_destroy(b);
        scene_free(&sc);
    }
}

/* A skin so thin that bodies cross half of it every step: rebuilt at every step, still exact. */
static void test_crossing_every_step(void) {
    scene sc = make_scene("gas", 800, 9);
    for (uint32_t i = 0; i < sc.s.n; ++i) {
        sc.s.vel[i].x *= 10.0;
    }
    sc.p.skin.value = 1e-6;
    sc.p.skin.set = 1;
    sim_backend_config c = config_of(SIM_NLIST_DEFAULT);
    sim_backend *b = test_backend_make(&c, &sc.p, &sc.s, "thin skin");
    const run_totals r = run_checked(b, sc.s.n, 300, "thin skin");
    ENSURE_MSG(r.rebuilds == r.steps && r.steps == 300, "%d rebuilds in %d steps", r.rebuilds,
               r.steps);
    sim_backend_destroy(b);
    scene_free(&sc);
}

/* Two bodies 1.6 m apart (reach 1 m, skin 0.1 m) closing at 0.8 m per step: the step that
 * brings them to 0.8 m must see them touch (its drift moved each 0.4 m, four times half the
 * skin: the lists are rebuilt in that step, not the next). */
static void test_jump_into_contact(void) {
    const sim_nlist_kind kinds[2] = {SIM_NLIST_FULL, SIM_NLIST_HALF};
    for (int k = 0; k < 2; ++k) {
        sim_state s;
        sim_error err;
        ENSURE(sim_state_alloc(&s, 2, &err) == SIM_OK);
        s.pos[0] = (sim_vec4d){-0.8, 0.0, 0.0, 0.5};
        s.pos[1] = (sim_vec4d){0.8, 0.0, 0.0, 0.5};
        s.vel[0] = (sim_vec4d){400.0, 0.0, 0.0, 1.0};
        s.vel[1] = (sim_vec4d){-400.0, 0.0, 0.0, 1.0};
        sim_params p = sim_params_default();
        p.dt = 1e-3;
        p.box_half = 4.0;
        p.restitution = 1.0;
        p.stiffness = 1e8;
        p.skin.value = 0.1;
        p.skin.set = 1;
        const sim_backend_config c = config_of(kinds[k]);
        sim_backend *b = test_backend_make(&c, &p, &s, "jump");
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(t.nlist_rebuilds == 1 && t.contacts == 1);
        uint64_t count = 0;
        sim_body_pair *v = contacts_of(b, &count);
        ENSURE_MSG(count == 1 && v[0].i == 1 && v[0].j == 0, "%s: %llu contacts",
                   sim_nlist_kind_name(kinds[k]), (unsigned long long)count);
        sim_vec3d *f = test_backend_forces(b, 2);
        ENSURE(f[0].x < 0.0 && f[1].x > 0.0 && f[0].x == -f[1].x); /* pushed apart */
        free(f);
        free(v);
        sim_backend_destroy(b);
        sim_state_free(&s);
    }
}

/* ---- overflow ---- */

/* Lists of one entry per body: the set-up overflows and grows them; a skin three times as wide
 * (set_params: rebuilt at the next step) overflows again: that frame's steps sweep the tile pairs
 * (exact), the lists grow, the next frame's do not fall back. */
static void test_overflow(void) {
    const sim_nlist_kind kinds[2] = {SIM_NLIST_FULL, SIM_NLIST_HALF};
    for (int k = 0; k < 2; ++k) {
        scene sc = make_scene("pile", 1000, 4);
        sc.p.skin.value = 0.05;
        sc.p.skin.set = 1;
        sc.p.steps_per_frame = 4;
        sim_backend_config c = config_of(kinds[k]);
        sim_backend_tuning small = sim_backend_tuning_default();
        small.nlist_capacity = 1;
        c.tuning = &small;
        sim_backend *b = test_backend_make(&c, &sc.p, &sc.s, "overflow");
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE_MSG(t.nlist_cap > 1 && t.nlist_fallback_steps == 0 && t.nlist_peak <= t.nlist_cap,
                   "cap %u, peak %u, %d fallbacks", t.nlist_cap, t.nlist_peak,
                   t.nlist_fallback_steps);
        ENSURE(exact_now(b, sc.s.n, "grown at set-up", 0));
        const uint32_t cap = t.nlist_cap;
        sim_params p = *sim_backend_get_params(b);
        p.skin.value = 0.6;
        ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE_MSG(t.nlist_fallback_steps == 4 && t.nlist_peak > cap && t.nlist_cap == cap,
                   "%d fallbacks, peak %u, cap %u", t.nlist_fallback_steps, t.nlist_peak,
                   t.nlist_cap);
        ENSURE(t.candidate_tests == t.tile_pairs * 32u * 32u); /* the tile pairs were swept */
        ENSURE(exact_now(b, sc.s.n, "overflowed", 1));
        const uint32_t peak = t.nlist_peak;
        p.steps_per_frame = 1;
        ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE_MSG(t.nlist_cap >= 2 * peak && t.nlist_fallback_steps == 0, "cap %u, peak %u",
                   t.nlist_cap, peak);
        const run_totals r = run_checked(b, sc.s.n, 200, "after growth");
        ENSURE(r.fallbacks == 0);
        sim_backend_destroy(b);
        scene_free(&sc);
    }
}

/* ---- forces ---- */

/* F_0 over lists (both kinds) against culled tiles (skin 0) and the unculled sweep; then 100
 * steps side by side. */
static void test_forces(void) {
    scene sc = make_scene("pile", 1500, 8);
    sim_backend_config c = config_of(SIM_NLIST_FULL);
    sim_backend *full = test_backend_make(&c, &sc.p, &sc.s, "full");
    c.nlist = SIM_NLIST_HALF;
    sim_backend *half = test_backend_make(&c, &sc.p, &sc.s, "half");
    sim_params tiles_p = sc.p;
    tiles_p.skin.value = 0.0;
    tiles_p.skin.set = 1;
    sim_backend *tiles = test_backend_make(&c, &tiles_p, &sc.s, "tiles");
    c.cull = 0;
    sim_backend *all = test_backend_make(&c, &sc.p, &sc.s, "unculled");
    sim_backend *b[4] = {full, half, tiles, all};
    for (int round = 0; round < 2; ++round) {
        sim_vec3d *f[4];
        for (int k = 0; k < 4; ++k) {
            f[k] = test_backend_forces(b[k], sc.s.n);
        }
        for (int k = 0; k < 3; ++k) {
            double scale = 0.0;
            const double d = max_force_diff(f[k], f[3], sc.s.n, &scale);
            ENSURE_MSG(d <= 1e-10 * scale && scale > 0.0, "round %d, backend %d: %g of %g", round,
                       k, d, scale);
        }
        for (int k = 0; k < 4; ++k) {
            free(f[k]);
        }
        sim_params p = sc.p;
        p.steps_per_frame = 100;
        sim_error err;
        for (int k = 0; k < 4; ++k) {
            sim_frame_timing t;
            ENSURE(sim_backend_set_params(b[k], k == 2 ? &tiles_p : &p, &err) == SIM_OK);
            if (k == 2) {
                tiles_p.steps_per_frame = 100;
                ENSURE(sim_backend_set_params(b[k], &tiles_p, &err) == SIM_OK);
            }
            ENSURE(sim_backend_run_frame(b[k], &t, &err) == SIM_OK);
            ENSURE(t.nlist == (k < 2) && t.culled == (k < 3));
        }
        const double d = fmax(test_backend_state_diff(b[0], b[3], sc.s.n),
                              fmax(test_backend_state_diff(b[1], b[3], sc.s.n),
                                   test_backend_state_diff(b[2], b[3], sc.s.n)));
        ENSURE_MSG(d < 1e-9, "after %d steps the states differ by %g", 100 * (round + 1), d);
    }
    for (int k = 0; k < 4; ++k) {
        sim_backend_destroy(b[k]);
    }
    scene_free(&sc);
}

/* The grid build (the default on one rank) against the tile build: the same entries in the same
 * order (ascending slots; the tile build's order under the default map), so the same bits after
 * 300 steps, on a pile with friction and a periodic gas, for both kinds. The grid's cells count
 * in the lists' bytes: they show which build ran. */
static void test_grid_as_tiles(void) {
    const sim_nlist_kind kinds[2] = {SIM_NLIST_FULL, SIM_NLIST_HALF};
    for (int g = 0; g < 2; ++g) {
        for (int k = 0; k < 2; ++k) {
            scene sc = make_scene(g == 0 ? "pile" : "gas", 1200, 4);
            sim_error err;
            if (g == 0) {
                sc.p.friction = 0.5;
                sc.p.rolling_friction = 0.1;
            } else {
                sc.p.periodic = SIM_PERIODIC_ALL;
            }
            sc.p.steps_per_frame = 100;
            sim_backend_config c = config_of(kinds[k]);
            c.cpu_threads = 1; /* one order of the sums */
            sim_backend_tuning built = sim_backend_tuning_default();
            c.tuning = &built;
            built.nlist_build = SIM_NLIST_BUILD_TILES;
            sim_backend *tiles = test_backend_make(&c, &sc.p, &sc.s, "tiles");
            built.nlist_build = SIM_NLIST_BUILD_DEFAULT;
            sim_backend *grid = test_backend_make(&c, &sc.p, &sc.s, "grid");
            int rebuilds = 0;
            for (int f = 0; f < 3; ++f) {
                sim_frame_timing tt, tg;
                ENSURE(sim_backend_run_frame(tiles, &tt, &err) == SIM_OK);
                ENSURE(sim_backend_run_frame(grid, &tg, &err) == SIM_OK);
                ENSURE(tt.nlist && tg.nlist && tg.nlist_rebuilds == tt.nlist_rebuilds);
                ENSURE(tg.nlist_bytes > tt.nlist_bytes && tg.contacts == tt.contacts);
                rebuilds += tg.nlist_rebuilds;
            }
            const double d = test_backend_state_diff(tiles, grid, sc.s.n);
            printf("  %s %s: %d rebuilds, states differ by %g\n", sc.name,
                   sim_nlist_kind_name(kinds[k]), rebuilds, d);
            ENSURE(rebuilds > 1 && d == 0.0);
            sim_backend_destroy(tiles);
            sim_backend_destroy(grid);
            scene_free(&sc);
        }
    }
}

/* The automatic skin: what the fastest body covers in 20 steps, within 0.05 and 0.25 of the
 * smallest diameter; the lists off at 0, and the choice stated in the frame's timing. */
static void test_auto_skin(void) {
    scene sc = make_scene("gas", 500, 2);
    sim_backend_config c = config_of(SIM_NLIST_DEFAULT);
    sim_backend *b = test_backend_make(&c, &sc.p, &sc.s, "auto");
    sim_frame_timing t;
    sim_error err;
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    double rmin = 1e300;
    for (uint32_t i = 0; i < sc.s.n; ++i) {
        rmin = fmin(rmin, sc.s.pos[i].w);
    }
    ENSURE_MSG(t.nlist && t.skin >= 0.05 * 2.0 * rmin * (1 - 1e-12) &&
                   t.skin <= 0.25 * 2.0 * rmin * (1 + 1e-12),
               "skin %g, smallest radius %g", t.skin, rmin);
    /* DEFAULT's kind (nbsim/config.h): full lists without friction, half lists with it; a kind
     * asked for stays */
    sim_params q = sc.p;
    q.friction = 0.0;
    ENSURE(sim_nlist_kind_for(SIM_NLIST_DEFAULT, &q) == SIM_NLIST_DEFAULT_KIND);
    ENSURE(SIM_NLIST_DEFAULT_KIND == SIM_NLIST_FULL);
    q.friction = 0.5;
    ENSURE(sim_nlist_kind_for(SIM_NLIST_DEFAULT, &q) == SIM_NLIST_DEFAULT_FRICTION_KIND);
    ENSURE(SIM_NLIST_DEFAULT_FRICTION_KIND == SIM_NLIST_HALF);
    ENSURE(sim_nlist_kind_for(SIM_NLIST_FULL, &q) == SIM_NLIST_FULL);
    q.friction = 0.0;
    q.rolling_friction = 0.1; /* rolling resistance alone is friction too */
    ENSURE(sim_nlist_kind_for(SIM_NLIST_DEFAULT, &q) == SIM_NLIST_HALF);
    q.rolling_friction = 0.0;
    ENSURE(sim_nlist_kind_for(SIM_NLIST_HALF, &q) == SIM_NLIST_HALF);
    ENSURE(strcmp(sim_nlist_kind_name(SIM_NLIST_DEFAULT), "default") == 0);
    ENSURE(strcmp(sim_nlist_kind_name(SIM_NLIST_HALF), "half") == 0);
    sim_params p = *sim_backend_get_params(b);
    p.skin.value = 0.0;
    p.skin.set = 1;
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(!t.nlist && t.culled && t.skin == 0.0 && t.nlist_ms == 0.0);
    ENSURE(exact_now(b, sc.s.n, "skin 0", 0));
    sim_backend_destroy(b);
    scene_free(&sc);
}

/* CELLS (no lists) and the cadence that lets DEFAULT take the cells on the CUDA path (nlist.h):
 * the names round trip; CELLS with friction is DEFAULT's half lists (histories live beside the
 * lists' entries); on the CPU reference CELLS runs full lists, the same pairs; the cadence takes
 * the cells once at least 90 % of >= 10 steps rebuilt, keeps them while at least 80 % do, and
 * waits for 10 steps between decisions. */
static void test_cells_and_cadence(void) {
    for (int k = SIM_NLIST_DEFAULT; k <= SIM_NLIST_CELLS; ++k) {
        ENSURE(sim_nlist_kind_from_name(sim_nlist_kind_name((sim_nlist_kind)k)) == k);
    }
    ENSURE(sim_nlist_kind_from_name("quarter") == -1);
    sim_params q = sim_params_default();
    q.friction = 0.0;
    ENSURE(sim_nlist_kind_for(SIM_NLIST_CELLS, &q) == SIM_NLIST_CELLS);
    q.friction = 0.5;
    ENSURE(sim_nlist_kind_for(SIM_NLIST_CELLS, &q) == SIM_NLIST_HALF);
    scene sc = make_scene("pile", 600, 5);
    sim_backend_config c = config_of(SIM_NLIST_CELLS);
    sim_backend *b = test_backend_make(&c, &sc.p, &sc.s, "cells on the CPU");
    sim_frame_timing t;
    sim_error err;
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(t.nlist && !t.nlist_direct);
    ENSURE(exact_now(b, sc.s.n, "cells on the CPU", 0));
    sim_backend_destroy(b);
    scene_free(&sc);

    sim_nlist_cadence cad;
    memset(&cad, 0, sizeof cad);
    ENSURE(sim_nlist_cadence_next(&cad, 5, 5) == 0); /* 5 steps: too few to decide */
    ENSURE(sim_nlist_cadence_next(&cad, 4, 5) == 1); /* 9 of 10 */
    ENSURE(sim_nlist_cadence_next(&cad, 3, 5) == 1);
    ENSURE(sim_nlist_cadence_next(&cad, 5, 5) == 1); /* 8 of 10: the cells stay */
    ENSURE(sim_nlist_cadence_next(&cad, 4, 5) == 1);
    ENSURE(sim_nlist_cadence_next(&cad, 3, 5) == 0); /* 7 of 10 */
    ENSURE(sim_nlist_cadence_next(&cad, 17, 20) == 0); /* 85 %: the lists stay */
    ENSURE(sim_nlist_cadence_next(&cad, 30, 20) == 1); /* more rebuilds than steps: all */
    ENSURE(cad.direct == 1 && cad.steps == 0u);
}

static const ensure_test tests[] = {
    {"dense_pile", test_dense_pile},
    {"fast_gas", test_fast_gas},
    {"crossing_every_step", test_crossing_every_step},
    {"jump_into_contact", test_jump_into_contact},
    {"overflow", test_overflow},
    {"forces", test_forces},
    {"grid_as_tiles", test_grid_as_tiles},
    {"auto_skin", test_auto_skin},
    {"cells_and_cadence", test_cells_and_cadence},
};

ENSURE_MAIN(tests)
