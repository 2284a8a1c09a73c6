/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend against the CPU reference (double precision, same model).
 *
 * Scenes are dense jittered lattices (neighbours overlap by ~5 % of the diameter, so about six
 * contacts per body, in every kind of tile pair since the body order is shuffled) whose values
 * are all exact floats: both backends start from identical numbers and differ by arithmetic
 * alone. Tolerances (float epsilon 6e-8), each with the largest error seen on an H200 (all
 * maps, tiles and sizes below):
 *  - forces: ||F_gpu - F_cpu|| / ||F_cpu|| <= 1e-5 over all bodies (seen 7.4e-7), and per body
 *    |dF_i| <= 1e-4 (|F_i| + 0.1 F_rms) (seen 1.8e-6 with contacts, 1.1e-5 with ATM alone).
 *    A contact force k delta loses ~eps * d / delta ~ 1e-6 relative (delta ~ d / 20) and a body
 *    sums ~6-12 of them; ATM sums ~N^2 / 2 triples of both signs per body. The per-body floor
 *    of 0.1 F_rms covers bodies whose forces nearly cancel.
 *  - positions: max |dx| <= 1e-6 box_half per step (seen 5.5e-8 box_half: an ulp of box_half
 *    is 1.2e-7 box_half, the drift rounds once per step); velocities per body 1e-5 relative
 *    (floor 0.1 v_rms) per step (seen 6.7e-7).
 *  - energies: kinetic and contact (positive terms) 1e-5 relative; ATM 1e-4 relative; the
 *    body potential (gravity terms of both signs, walls) 1e-5 of sum m |g| box_half + |E|.
 *    Per term float rounding is ~1e-7 of its size, contact terms ~4e-6 (delta squared).
 * Trajectories over 20 steps use 4x the per-step tolerances (contacts amplify differences). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "test_gpu_util.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
#define TOL_POS_PER_STEP 1e-6 /* times box_half */
#define TOL_VEL_PER_STEP 1e-5
#define TOL_ENERGY 1e-5
#define FLOOR 0.1

static const double kG = 9.81;

static sim_params dense_params(double box_half) {
    sim_params p = sim_params_default();
    p.box_half = box_half;
    p.gravity = (sim_vec3d){0.0, 0.0, -kG};
    p.steps_per_frame = 1;
    return p;
}

/* The maps place the contact blocks themselves here (no culling: every tile pair is swept, so
 * block counts are the plans'); test_gpu_cull.c tests the culled pipeline. */
static sim_backend_config config_of(sim_backend_kind kind, sim_pair_map pm, sim_triplet_map tm,
                                    uint32_t tile, int full) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = kind;
    c.pair_map = full ? SIM_PAIR_FULL : (sim_pair_choice)pm;
    c.triplet_map = tm;
    c.tile = tile;
    c.cull = 0;
    return c;
}

/* A run: create (snapshot of F_0 in f0), `frames` frames (snapshot in s1). */
typedef struct {
    gpu_snapshot f0, s1;
    sim_frame_timing t;
    int ok;
} run_result;

static run_result run(const sim_backend_config *c, const sim_params *p, const sim_state *s0,
                      int frames) {
    run_result r;
    memset(&r, 0, sizeof r);
    sim_error err = {SIM_OK, ""};
    sim_backend *b = NULL;
    sim_status st = sim_backend_create(c, p, s0, &b, &err);
    ENSURE_MSG(st == SIM_OK, "create (%s): %s", c->kind == SIM_BACKEND_CPU ? "cpu" : "gpu",
               err.message);
    if (st != SIM_OK) {
        return r;
    }
    st = gpu_snapshot_take(b, s0->n, &r.f0, &err);
    for (int f = 0; st == SIM_OK && f < frames; ++f) {
        st = sim_backend_run_frame(b, &r.t, &err);
    }
    if (st == SIM_OK) {
        st = gpu_snapshot_take(b, s0->n, &r.s1, &err);
    }
    ENSURE_MSG(st == SIM_OK, "run: %s", err.message);
    r.ok = st == SIM_OK;
    sim_backend_destroy(b);
    return r;
}

static void run_free(run_result *r) {
    gpu_snapshot_free(&r->f0);
    gpu_snapshot_free(&r->s1);
}

/* Compares a GPU run with the CPU reference run; prints one line. */
static void compare_runs(const char *what, const run_result *g, const run_result *c, int steps,
                         double box_half, double tol_f) {
    if (!g->ok || !c->ok) {
        return;
    }
    const uint32_t n = c->f0.state.n;
    const gpu_err f0 = gpu_compare3(g->f0.force, c->f0.force, n, FLOOR);
    const gpu_err f1 = gpu_compare3(g->s1.force, c->s1.force, n, FLOOR);
    const gpu_err x1 = gpu_compare_pos(&g->s1.state, &c->s1.state, FLOOR);
    const gpu_err v1 = gpu_compare_vel(&g->s1.state, &c->s1.state, FLOOR);
    const double slack = steps > 1 ? 4.0 : 1.0;
    const double tol_x = slack * TOL_POS_PER_STEP * box_half * steps;
    const double tol_v = slack * TOL_VEL_PER_STEP * steps;
    const double tol_fs = slack * tol_f, tol_fb = slack * TOL_F_BODY;
    printf("  %-34s F0 %.1e/%.1e  F%d %.1e/%.1e  x %.1e  v %.1e\n", what, f0.rel_l2, f0.worst,
           steps, f1.rel_l2, f1.worst, x1.max_abs, v1.worst);
    ENSURE_MSG(f0.rel_l2 <= tol_f && f0.worst <= TOL_F_BODY,
               "%s: F_0 rel %.3g (tol %.1g), body %u rel %.3g (tol %.1g)", what, f0.rel_l2, tol_f,
               f0.worst_body, f0.worst, TOL_F_BODY);
    ENSURE_MSG(f1.rel_l2 <= tol_fs && f1.worst <= tol_fb,
               "%s: F after %d steps rel %.3g (tol %.1g), body %u rel %.3g (tol %.1g)", what, steps,
               f1.rel_l2, tol_fs, f1.worst_body, f1.worst, tol_fb);
    ENSURE_MSG(x1.max_abs <= tol_x, "%s: positions after %d steps differ by %.3g m (tol %.3g)",
               what, steps, x1.max_abs, tol_x);
    ENSURE_MSG(v1.worst <= tol_v, "%s: velocity of body %u after %d steps rel %.3g (tol %.3g)",
               what, v1.worst_body, steps, v1.worst, tol_v);
}

static uint64_t t2(uint64_t n) {
    return n * (n + 1) / 2;
}

static uint64_t t3(uint64_t n) {
    return n * (n + 1) * (n + 2) / 6;
}

/* ---- pairs: every map and the full sweep, three tile sizes, partial tiles ---- */

static void test_pair_maps_vs_cpu(void) {
    static const uint32_t sizes[] = {1000, 1537, 3000};
    static const uint32_t tiles[] = {32, 64, 128};
    for (int si = 0; si < 3; ++si) {
        sim_state s0;
        double box_half;
        sim_error err;
        const gpu_scene def = {sizes[si], 0.5, 0.95, 0.5, 1234u + si};
        ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
        const sim_params p = dense_params(box_half);
        sim_backend_config cc =
            config_of(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
        run_result ref = run(&cc, &p, &s0, 1);
        for (int ti = 0; ti < 3; ++ti) {
            for (int m = 0; m <= SIM_PAIR_MAP_COUNT; ++m) { /* COUNT = the full sweep */
                const int full = m == SIM_PAIR_MAP_COUNT;
                const sim_pair_map pm = full ? SIM_PAIR_MAP_LTM : (sim_pair_map)m;
                sim_backend_config gc =
                    config_of(SIM_BACKEND_CUDA, pm, SIM_TRIPLET_MAP_TETRA, tiles[ti], full);
                run_result g = run(&gc, &p, &s0, 1);
                char what[96];
                snprintf(what, sizeof what, "N=%u tile=%u %s", sizes[si], tiles[ti],
                         full ? "full" : sim_pair_map_name(pm));
                compare_runs(what, &g, &ref, 1, box_half, TOL_F_L2);
                if (g.ok) {
                    const uint64_t n = (sizes[si] + tiles[ti] - 1) / tiles[ti];
                    ENSURE(g.t.steps == 1 && g.t.pair_ms > 0.0 && g.t.step_ms >= g.t.pair_ms);
                    ENSURE(g.t.triplet_blocks == 0);
                    if (full) {
                        ENSURE(g.t.pair_blocks == n && g.t.pair_blocks_wasted == 0);
                    } else {
                        ENSURE_MSG(g.t.pair_blocks - g.t.pair_blocks_wasted == t2(n),
                                   "%s: %llu blocks, %llu wasted, T2(%llu) = %llu", what,
                                   (unsigned long long)g.t.pair_blocks,
                                   (unsigned long long)g.t.pair_blocks_wasted,
                                   (unsigned long long)n, (unsigned long long)t2(n));
                    }
                }
                run_free(&g);
            }
        }
        run_free(&ref);
        sim_state_free(&s0);
    }
}

/* ---- triplets: every map, partial tiles, with and without cut-off, with contacts ---- */

static void triplet_case(uint32_t n, double spacing, double cutoff, double gravity,
                         const char *label) {
    sim_state s0;
    double box_half;
    sim_error err;
    const gpu_scene def = {n, 0.5, spacing, 0.1, 77u + n};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = dense_params(box_half);
    p.gravity = (sim_vec3d){0.0, 0.0, -gravity};
    p.triplets = 1;
    p.atm_nu = spacing > 1.0 ? 1.0 : 0.01; /* sparse: ATM is the only force */
    p.atm_cutoff = cutoff;
    sim_backend_config cc =
        config_of(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
    run_result ref = run(&cc, &p, &s0, 1);
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        sim_backend_config gc =
            config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, (sim_triplet_map)m, 64, 0);
        run_result g = run(&gc, &p, &s0, 1);
        char what[96];
        snprintf(what, sizeof what, "N=%u %s %s", n, label,
                 sim_triplet_map_name((sim_triplet_map)m));
        compare_runs(what, &g, &ref, 1, box_half, TOL_F_L2);
        if (g.ok) {
            const uint64_t nt = (n + 31) / 32;
            ENSURE(g.t.triplet_ms > 0.0);
            ENSURE_MSG(g.t.triplet_blocks - g.t.triplet_blocks_wasted == t3(nt),
                       "%s: %llu blocks, %llu wasted, T3(%llu) = %llu", what,
                       (unsigned long long)g.t.triplet_blocks,
                       (unsigned long long)g.t.triplet_blocks_wasted, (unsigned long long)nt,
                       (unsigned long long)t3(nt));
        }
        run_free(&g);
    }
    run_free(&ref);
    sim_state_free(&s0);
}

static void test_triplet_maps_vs_cpu(void) {
    static const uint32_t sizes[] = {100, 257, 500};
    for (int si = 0; si < 3; ++si) {
        triplet_case(sizes[si], 1.6, 0.0, 0.0, "atm");
    }
    triplet_case(257, 1.6, 2.5, 0.0, "atm cutoff 2.5");
    triplet_case(257, 0.95, 0.0, kG, "atm+contacts");
}

/* Bodies on a unit grid (6 x 6 x 6 sites, shuffled): every squared distance is an integer, exact
 * in float and double, so pairs at exactly the cut-off (2 m: the grid has many) count in both
 * backends. n = 200 leaves the last tile partial; bodies 198 and 199 sit on bodies 77 and 5
 * (coincident: no contact force, and every triple with them is dropped, never NaN). Radius
 * 0.4 m: no other contacts, ATM alone moves the bodies. */
static void grid_scene(sim_state *s, uint32_t n, uint64_t seed) {
    sim_error err;
    ENSURE(sim_state_alloc(s, n, &err) == SIM_OK);
    uint32_t site[216];
    for (uint32_t i = 0; i < 216; ++i) {
        site[i] = i;
    }
    uint64_t r = seed;
    for (uint32_t i = 216; i > 1; --i) { /* Fisher-Yates, splitmix-style steps */
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t j = (uint32_t)((r >> 33) % i), tmp = site[i - 1];
        site[i - 1] = site[j];
        site[j] = tmp;
    }
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t c = site[i];
        s->pos[i] = (sim_vec4d){(double)(c % 6) - 2.5, (double)(c / 6 % 6) - 2.5,
                                (double)(c / 36) - 2.5, 0.4};
        s->vel[i] = (sim_vec4d){0.0, 0.0, 0.0, 268.0};
    }
    s->pos[n - 2] = s->pos[77];
    s->pos[n - 1] = s->pos[5];
}

/* Triples exactly on the cut-off, a partial tile and coincident bodies: every map against the
 * CPU reference, forces and ATM energy. */
static void test_triplet_exact_cutoff_vs_cpu(void) {
    const double cutoffs[] = {2.0, 0.0};
    for (int ci = 0; ci < 2; ++ci) {
        sim_state s0;
        grid_scene(&s0, 200, 99u);
        const double box_half = 8.0;
        sim_params p = dense_params(box_half);
        p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
        p.triplets = 1;
        p.atm_nu = 1.0;
        p.atm_cutoff = cutoffs[ci];
        sim_backend_config cc =
            config_of(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
        run_result ref = run(&cc, &p, &s0, 1);
        sim_energy eref = {0};
        sim_error err = {SIM_OK, ""};
        sim_backend *b = NULL;
        ENSURE(sim_backend_create(&cc, &p, &s0, &b, &err) == SIM_OK);
        ENSURE(b != NULL && sim_backend_energy(b, &eref, &err) == SIM_OK);
        sim_backend_destroy(b);
        for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
            sim_backend_config gc =
                config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_RM, (sim_triplet_map)m, 32, 0);
            run_result g = run(&gc, &p, &s0, 1);
            char what[96];
            snprintf(what, sizeof what, "N=200 grid %s %s",
                     ci == 0 ? "cutoff=2 exact" : "no cutoff",
                     sim_triplet_map_name((sim_triplet_map)m));
            if (ci == 0 && g.ok && ref.ok) {
                /* Only F_0: after a step the distances leave the exact grid, and the hard
                 * cut-off is discontinuous there (float and double may put a pair at 2 +- 1e-7 m
                 * on either side, and the triple's force jumps). */
                const gpu_err f0 = gpu_compare3(g.f0.force, ref.f0.force, 200, FLOOR);
                printf("  %-34s F0 %.1e/%.1e\n", what, f0.rel_l2, f0.worst);
                ENSURE_MSG(f0.rel_l2 <= TOL_F_L2 && f0.worst <= TOL_F_BODY,
                           "%s: F_0 rel %.3g, body %u rel %.3g", what, f0.rel_l2, f0.worst_body,
                           f0.worst);
            } else {
                compare_runs(what, &g, &ref, 1, box_half, TOL_F_L2);
            }
            run_free(&g);
        }
        sim_backend_config gc =
            config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_RM, SIM_TRIPLET_MAP_RM, 32, 0);
        sim_energy eg = {0};
        b = NULL;
        ENSURE(sim_backend_create(&gc, &p, &s0, &b, &err) == SIM_OK);
        ENSURE(b != NULL && sim_backend_energy(b, &eg, &err) == SIM_OK);
        sim_backend_destroy(b);
        printf("  ATM energy N=200 grid %s: gpu %.9g cpu %.9g\n",
               ci == 0 ? "cutoff=2" : "no cutoff", eg.atm, eref.atm);
        ENSURE(eref.atm != 0.0 && isfinite(eg.atm));
        ENSURE_NEAR(eg.atm, eref.atm, 10.0 * TOL_ENERGY * fabs(eref.atm));
        run_free(&ref);
        sim_state_free(&s0);
    }
}

/* ---- edge sizes (one partial tile, a single body) and the Hertz law ---- */

static void test_tiny_and_hertz_vs_cpu(void) {
    static const uint32_t sizes[] = {1, 2, 3, 5, 33, 1537};
    for (int si = 0; si < 6; ++si) {
        const uint32_t n = sizes[si];
        sim_state s0;
        double box_half;
        sim_error err;
        const gpu_scene def = {n, 0.5, 0.95, 0.5, 500u + n};
        ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
        sim_params p = dense_params(box_half);
        p.triplets = n < 1000;
        p.atm_nu = 0.01;
        p.hertz = n >= 5;
        p.steps_per_frame = 3;
        sim_backend_config cc =
            config_of(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
        sim_backend_config gc =
            config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_RM, SIM_TRIPLET_MAP_RM, n < 100 ? 32 : 128, 0);
        run_result ref = run(&cc, &p, &s0, 1);
        run_result g = run(&gc, &p, &s0, 1);
        char what[96];
        snprintf(what, sizeof what, "N=%u%s%s", n, p.triplets ? " atm" : "",
                 p.hertz ? " hertz" : "");
        compare_runs(what, &g, &ref, 3, box_half, TOL_F_L2);
        run_free(&g);
        run_free(&ref);
        sim_state_free(&s0);
    }
}

/* ---- trajectories over 20 steps, several maps, maps switched mid-run ---- */

static void test_trajectory_vs_cpu(void) {
    sim_state s0;
    double box_half;
    sim_error err;
    const gpu_scene def = {1537, 0.5, 0.95, 0.5, 99u};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = dense_params(box_half);
    p.steps_per_frame = 5;
    sim_backend_config cc =
        config_of(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
    run_result ref = run(&cc, &p, &s0, 4);
    static const sim_pair_map maps[] = {SIM_PAIR_MAP_LTM, SIM_PAIR_MAP_RM, SIM_PAIR_MAP_REC,
                                        SIM_PAIR_MAP_LTM, SIM_PAIR_MAP_LTM};
    for (int m = 0; m < 5; ++m) {
        const int full = m == 3, culled = m == 4;
        sim_backend_config gc = config_of(SIM_BACKEND_CUDA, full ? SIM_PAIR_MAP_LTM : maps[m],
                                          SIM_TRIPLET_MAP_TETRA, 64, full);
        gc.cull = culled;
        run_result g = run(&gc, &p, &s0, 4);
        char what[96];
        snprintf(what, sizeof what, "20 steps %s%s", full ? "full" : sim_pair_map_name(maps[m]),
                 culled ? " culled" : "");
        compare_runs(what, &g, &ref, 20, box_half, TOL_F_L2);
        ENSURE(!g.ok || g.t.steps == 5);
        run_free(&g);
    }
    run_free(&ref);
    sim_state_free(&s0);
}

static void test_set_maps_and_params_mid_run(void) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {700, 0.5, 0.95, 0.5, 5u};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = dense_params(box_half);
    p.steps_per_frame = 2;
    p.atm_nu = 0.01;
    sim_backend *b[2] = {NULL, NULL};
    for (int k = 0; k < 2; ++k) {
        sim_backend_config c = config_of(k == 0 ? SIM_BACKEND_CPU : SIM_BACKEND_CUDA,
                                         SIM_PAIR_MAP_BB, SIM_TRIPLET_MAP_BB, 32, 0);
        ENSURE_MSG(sim_backend_create(&c, &p, &s0, &b[k], &err) == SIM_OK, "%s", err.message);
    }
    if (b[0] != NULL && b[1] != NULL) {
        static const sim_pair_map pms[] = {SIM_PAIR_MAP_BB, SIM_PAIR_MAP_RM, SIM_PAIR_MAP_UTM,
                                           SIM_PAIR_MAP_REC};
        static const sim_triplet_map tms[] = {SIM_TRIPLET_MAP_BB, SIM_TRIPLET_MAP_RM,
                                              SIM_TRIPLET_MAP_TETRA, SIM_TRIPLET_MAP_RM};
        sim_frame_timing t;
        for (int f = 0; f < 4; ++f) {
            if (f == 2) { /* triplets on, three steps per frame, from now on */
                sim_params q = p;
                q.triplets = 1;
                q.steps_per_frame = 3;
                for (int k = 0; k < 2; ++k) {
                    ENSURE_MSG(sim_backend_set_params(b[k], &q, &err) == SIM_OK, "%s", err.message);
                }
            }
            ENSURE_MSG(sim_backend_set_maps(b[1], pms[f], tms[f], &err) == SIM_OK, "%s",
                       err.message);
            ENSURE(sim_backend_get_config(b[1])->pair_map == (sim_pair_choice)pms[f]);
            for (int k = 0; k < 2; ++k) {
                ENSURE_MSG(sim_backend_run_frame(b[k], &t, &err) == SIM_OK, "%s", err.message);
            }
            ENSURE(t.steps == (f < 2 ? 2 : 3) &&
                   (f < 2 ? t.triplet_blocks == 0 : t.triplet_blocks > 0));
        }
        /* A new state mid-run (bodies moved, velocities reversed): both recompute F. */
        sim_state s1;
        ENSURE(sim_state_copy(&s1, &s0, &err) == SIM_OK);
        for (uint32_t i = 0; i < s1.n; ++i) {
            s1.pos[i].z += 0.25;
            s1.vel[i].x = -s1.vel[i].x;
        }
        for (int k = 0; k < 2; ++k) {
            ENSURE_MSG(sim_backend_set_state(b[k], &s1, &err) == SIM_OK, "%s", err.message);
            ENSURE_MSG(sim_backend_run_frame(b[k], &t, &err) == SIM_OK, "%s", err.message);
        }
        sim_state_free(&s1);
        gpu_snapshot sc, sg;
        if (gpu_snapshot_take(b[0], s0.n, &sc, &err) == SIM_OK) {
            if (gpu_snapshot_take(b[1], s0.n, &sg, &err) == SIM_OK) {
                const gpu_err x = gpu_compare_pos(&sg.state, &sc.state, FLOOR);
                const gpu_err f = gpu_compare3(sg.force, sc.force, s0.n, FLOOR);
                printf("  maps switched, triplets on, new state: x %.1e  F %.1e/%.1e\n", x.max_abs,
                       f.rel_l2, f.worst);
                ENSURE(x.max_abs <= 4.0 * TOL_POS_PER_STEP * box_half * 10);
                ENSURE(f.rel_l2 <= 4.0 * TOL_F_L2 && f.worst <= 4.0 * TOL_F_BODY);
                gpu_snapshot_free(&sg);
            }
            gpu_snapshot_free(&sc);
        }
    }
    sim_backend_destroy(b[0]);
    sim_backend_destroy(b[1]);
    sim_state_free(&s0);
}

/* ---- energies ---- */

static void energy_case(uint32_t n, double spacing, int triplets) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {n, 0.5, spacing, 0.5, 31u + n};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = dense_params(box_half);
    p.triplets = triplets;
    p.atm_nu = triplets ? 0.01 : 0.0;
    sim_energy e[2];
    for (int k = 0; k < 2; ++k) {
        sim_backend_config c = config_of(k == 0 ? SIM_BACKEND_CPU : SIM_BACKEND_CUDA,
                                         SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
        sim_backend *b = NULL;
        memset(&e[k], 0, sizeof e[k]);
        ENSURE_MSG(sim_backend_create(&c, &p, &s0, &b, &err) == SIM_OK, "%s", err.message);
        if (b != NULL) {
            ENSURE_MSG(sim_backend_energy(b, &e[k], &err) == SIM_OK, "%s", err.message);
        }
        sim_backend_destroy(b);
    }
    double mass = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        mass += s0.vel[i].w;
    }
    /* Kinetic and contact terms are all positive: relative to their sums. ATM and gravity terms
     * have both signs: ATM relative to its sum with 10x more room, gravity relative to the sum
     * of the sizes of its terms (m |g| |z| <= m |g| box_half). */
    const double tol_kin = TOL_ENERGY * fabs(e[0].kinetic);
    const double tol_contact = TOL_ENERGY * fabs(e[0].contact);
    const double tol_atm = 10.0 * TOL_ENERGY * fabs(e[0].atm);
    const double tol_body = TOL_ENERGY * (fabs(e[0].gravity) + mass * kG * box_half);
    printf("  energy N=%u%s, gpu (relative difference): kin %.6g (%.1e)  contact %.6g (%.1e)  "
           "atm %.6g (%.1e)  body %.6g (%.1e of its scale)\n",
           n, triplets ? " atm" : "", e[1].kinetic,
           fabs(e[1].kinetic - e[0].kinetic) / fabs(e[0].kinetic), e[1].contact,
           fabs(e[1].contact - e[0].contact) / fabs(e[0].contact), e[1].atm,
           e[0].atm != 0.0 ? fabs(e[1].atm - e[0].atm) / fabs(e[0].atm) : 0.0, e[1].gravity,
           fabs(e[1].gravity - e[0].gravity) * TOL_ENERGY / tol_body);
    ENSURE(e[0].contact > 0.0); /* the scene really is dense */
    ENSURE_NEAR(e[1].kinetic, e[0].kinetic, tol_kin);
    ENSURE_NEAR(e[1].contact, e[0].contact, tol_contact);
    ENSURE_NEAR(e[1].atm, e[0].atm, tol_atm);
    ENSURE_NEAR(e[1].gravity, e[0].gravity, tol_body);
    ENSURE_NEAR(e[1].total, e[0].total, tol_kin + tol_contact + tol_atm + tol_body);
    ENSURE_NEAR(
        e[1].total, e[1].kinetic + e[1].contact + e[1].atm + e[1].gravity,
        1e-12 * (fabs(e[1].kinetic) + fabs(e[1].contact) + fabs(e[1].atm) + fabs(e[1].gravity)));
    sim_state_free(&s0);
}

static void test_energy_vs_cpu(void) {
    energy_case(1537, 0.95, 0);
    energy_case(257, 0.95, 1);
}

/* ---- failures: instability, memory, and the sanitizer's small case ---- */

/* One body of a sparse scene flies out of the box (escape) or has a NaN velocity. */
static void instability_case(int nan) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {64, 0.5, 1.5, 0.0, 8u};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    const uint32_t victim = 37;
    if (nan) {
        s0.vel[victim].y = NAN;
    } else {
        s0.vel[victim].x = 1.0e4; /* 100 m in the first step: far past 1.5 box_half */
    }
    sim_params p = dense_params(box_half);
    p.dt = 1e-2;
    p.steps_per_frame = 3;
    for (int k = 0; k < 2; ++k) {
        sim_backend_config c = config_of(k == 0 ? SIM_BACKEND_CPU : SIM_BACKEND_CUDA,
                                         SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 32, 0);
        sim_backend *b = NULL;
        ENSURE_MSG(sim_backend_create(&c, &p, &s0, &b, &err) == SIM_OK, "%s", err.message);
        if (b == NULL) {
            continue;
        }
        sim_frame_timing t;
        const sim_status st = sim_backend_run_frame(b, &t, &err);
        char body[32];
        snprintf(body, sizeof body, "body %u", victim);
        printf("  %s %s: %s\n", k == 0 ? "cpu" : "gpu", nan ? "NaN" : "escape", err.message);
        ENSURE_MSG(st == SIM_UNSTABLE, "%s: got status %d", k == 0 ? "cpu" : "gpu", (int)st);
        if (k == 1) {
            ENSURE_MSG(strstr(err.message, body) != NULL, "message does not name %s: %s", body,
                       err.message);
            ENSURE(strstr(err.message, nan ? "NaN" : "left the box") != NULL);
        }
        sim_backend_destroy(b);
    }
    sim_state_free(&s0);
}

static void test_instability(void) {
    instability_case(0);
    instability_case(1);
}

static void test_out_of_memory(void) {
    /* 4e9 bodies need ~208 GB. The backend must refuse before it reads the state, so the
     * state's arrays can be tiny: the refusal is about n alone. */
    sim_vec4d pos[1] = {{0.0, 0.0, 0.0, 0.5}}, vel[1] = {{0.0, 0.0, 0.0, 1.0}};
    sim_state huge = {.n = 4000000000u, .pos = pos, .vel = vel};
    sim_params p = sim_params_default();
    p.dt = 1e-3;
    sim_backend_config c =
        config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 128, 0);
    sim_backend *b = NULL;
    sim_error err = {SIM_OK, ""};
    const sim_status st = sim_backend_create(&c, &p, &huge, &b, &err);
    printf("  %s\n", err.message);
    ENSURE(st == SIM_OUT_OF_MEMORY && b == NULL);
    ENSURE(strstr(err.message, "4,000,000,000") != NULL && strstr(err.message, "free") != NULL);
    sim_backend_destroy(b);
    /* Friction with culling (so neighbour lists) keeps a spring and its carry beside each list
     * entry (friction.h): ~0.9 kB per body at the lists' first size, beside ~1.4 kB of the rest.
     * At 1.8 kB per body of the free memory, the rest alone would fit: refused all the same. */
    size_t free_bytes = 0, total_bytes = 0;
    ENSURE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    sim_state springs = huge;
    springs.n = (uint32_t)(free_bytes / 1800u);
    p.friction = 0.5;
    c.cull = 1;
    const sim_status fs = sim_backend_create(&c, &p, &springs, &b, &err);
    printf("  %s\n", err.message);
    ENSURE(fs == SIM_OUT_OF_MEMORY && b == NULL);
    sim_backend_destroy(b);
}

static void test_export_and_name(void) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {300, 0.5, 0.95, 0.5, 3u};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    const sim_params p = dense_params(box_half);
    sim_backend_config c =
        config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 64, 0);
    sim_backend *b = NULL;
    ENSURE_MSG(sim_backend_create(&c, &p, &s0, &b, &err) == SIM_OK, "%s", err.message);
    if (b == NULL) {
        sim_state_free(&s0);
        return;
    }
    printf("  device: %s\n", sim_backend_device_name(b));
    ENSURE(strlen(sim_backend_device_name(b)) > 0);
    sim_frame_timing t;
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    gpu_snapshot snap;
    const uint32_t n = s0.n;
    sim_vec4f *h_pos = malloc(n * sizeof *h_pos), *h_pos2 = malloc(n * sizeof *h_pos2);
    float *h_speed = malloc(n * sizeof *h_speed), *h_speed2 = malloc(n * sizeof *h_speed2);
    sim_vec4f *d_pos = NULL;
    float *d_speed = NULL;
    ENSURE(cudaMalloc((void **)&d_pos, n * sizeof *d_pos) == cudaSuccess);
    ENSURE(cudaMalloc((void **)&d_speed, n * sizeof *d_speed) == cudaSuccess);
    if (gpu_snapshot_take(b, n, &snap, &err) == SIM_OK && h_pos && h_pos2 && h_speed && h_speed2 &&
        d_pos && d_speed) {
        ENSURE(sim_backend_export_positions(b, h_pos, h_speed, 0, &err) == SIM_OK);
        ENSURE(sim_backend_export_positions(b, d_pos, d_speed, 1, &err) == SIM_OK);
        ENSURE(cudaMemcpy(h_pos2, d_pos, n * sizeof *d_pos, cudaMemcpyDeviceToHost) == cudaSuccess);
        ENSURE(cudaMemcpy(h_speed2, d_speed, n * sizeof *d_speed, cudaMemcpyDeviceToHost) ==
               cudaSuccess);
        int bad = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const sim_vec4d q = snap.state.pos[i], v = snap.state.vel[i];
            const double sp = sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
            bad += h_pos[i].x != (float)q.x || h_pos[i].y != (float)q.y ||
                   h_pos[i].z != (float)q.z || h_pos[i].w != (float)q.w;
            bad += memcmp(&h_pos[i], &h_pos2[i], sizeof h_pos[i]) != 0;
            bad += fabs(h_speed[i] - sp) > 1e-6 * (sp + 1e-3) || h_speed2[i] != h_speed[i];
        }
        ENSURE_MSG(bad == 0, "%d export mismatches", bad);
        gpu_snapshot_free(&snap);
    }
    cudaFree(d_pos);
    cudaFree(d_speed);
    free(h_pos);
    free(h_pos2);
    free(h_speed);
    free(h_speed2);
    sim_backend_destroy(b);
    sim_state_free(&s0);
}

/* Small, for compute-sanitizer (memcheck, racecheck): partial tiles in both dimensions, a
 * concurrent multi-launch pair map and every triplet map, energies, exports, a map switch, the
 * triplet kernels with a cut-off. */
static void test_sanitizer_small(void) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {200, 0.5, 0.95, 0.5, 11u};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = dense_params(box_half);
    p.triplets = 1;
    p.atm_nu = 0.01;
    p.steps_per_frame = 2;
    sim_backend_config cc = config_of(SIM_BACKEND_CPU, SIM_PAIR_MAP_REC, SIM_TRIPLET_MAP_RM, 32, 0);
    run_result ref = run(&cc, &p, &s0, 2);
    sim_backend_config gc =
        config_of(SIM_BACKEND_CUDA, SIM_PAIR_MAP_REC, SIM_TRIPLET_MAP_RM, 32, 0);
    run_result g = run(&gc, &p, &s0, 2);
    compare_runs("N=200 rec+rm, 4 steps", &g, &ref, 4, box_half, TOL_F_L2);
    run_free(&g);
    run_free(&ref);
    sim_backend *b = NULL;
    gc.pair_map = SIM_PAIR_FULL;
    ENSURE_MSG(sim_backend_create(&gc, &p, &s0, &b, &err) == SIM_OK, "%s", err.message);
    if (b != NULL) {
        sim_frame_timing t;
        sim_energy e;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
            ENSURE(sim_backend_set_maps(b, SIM_PAIR_MAP_RB, (sim_triplet_map)m, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        }
        ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
        sim_params q = p; /* the cut-off variant of the triplet kernels too */
        q.atm_cutoff = 2.0;
        ENSURE(sim_backend_set_params(b, &q, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
        sim_vec4f *h_pos = malloc(s0.n * sizeof *h_pos);
        float *h_speed = malloc(s0.n * sizeof *h_speed);
        ENSURE(sim_backend_export_positions(b, h_pos, h_speed, 0, &err) == SIM_OK);
        free(h_pos);
        free(h_speed);
        sim_backend_destroy(b);
    }
    sim_state_free(&s0);
}

static const ensure_test tests[] = {
    {"sanitizer_small", test_sanitizer_small},
    {"pair_maps_vs_cpu", test_pair_maps_vs_cpu},
    {"triplet_maps_vs_cpu", test_triplet_maps_vs_cpu},
    {"triplet_exact_cutoff_vs_cpu", test_triplet_exact_cutoff_vs_cpu},
    {"tiny_and_hertz_vs_cpu", test_tiny_and_hertz_vs_cpu},
    {"trajectory_vs_cpu", test_trajectory_vs_cpu},
    {"set_maps_and_params_mid_run", test_set_maps_and_params_mid_run},
    {"energy_vs_cpu", test_energy_vs_cpu},
    {"instability", test_instability},
    {"out_of_memory", test_out_of_memory},
    {"export_and_name", test_export_and_name},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
