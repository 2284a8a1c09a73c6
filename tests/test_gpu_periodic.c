/* SPDX-License-Identifier: MIT
 * nbsim — periodic boundaries (issue 22) on the CUDA backend, against the CPU reference.
 *
 * Acceptance (the tolerances of test_gpu_nlist.c: float against double, the same pairs):
 *  - forces at the start of a dense state crowded against the faces, edges and corners, periodic
 *    on all axes and on x and z: every pair map's plan, the culled tiles (one and two levels) and
 *    full and half neighbour lists against the CPU reference's plan, ||dF|| / ||F|| <= 1e-5 and
 *    per body 2e-3 of |F_i| + 0.1 F_rms;
 *  - the touching pairs at every step of a fast periodic gas (bodies crossing faces every step):
 *    the culled tiles and both kinds of list against the unculled GPU sweep at the same state;
 *  - trajectories: 50 steps of a fast periodic gas, each from a state both backends are given,
 *    within 4e-6 box_half of the CPU's (positions modulo the period);
 *  - ATM with a cut-off in a periodic box: the triplet map's plan and the culled tile triples
 *    against the CPU reference, cut-offs below and above a third of the period (where triples
 *    whose pair images wrap round the box must be dropped).
 * Skipped (77) without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "physics/physics.h"
#include "test_backend_util.h"
#include "test_cull_scenes.h"
#include "test_gpu_util.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY_CPU 2e-3
#define FLOOR 0.1

static sim_backend_config config(sim_backend_kind kind, int map, int cull, sim_nlist_kind nlist) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = kind;
    c.pair_map = map;
    c.tile = 32;
    c.cull = cull;
    c.nlist = nlist;
    return c;
}

/* n bodies crowded against the faces of the box of half-width h (as test_periodic.c), rounded
 * to float so that the GPU and the CPU start from the same numbers. */
static sim_state crowded(uint64_t seed, uint32_t n, double h, double v) {
    uint64_t rng = seed;
    sim_state s = test_random_state(&rng, n, h, v);
    for (uint32_t i = 0; i < n; ++i) {
        double *x[3] = {&s.pos[i].x, &s.pos[i].y, &s.pos[i].z};
        for (int a = 0; a < 3; ++a) {
            const double u = test_rnd(&rng, 0.0, 3.0);
            if (u < 2.0) {
                *x[a] = (u < 1.0 ? -1.0 : 1.0) * (h - test_rnd(&rng, 0.0, 0.8));
            }
        }
        double *all[8] = {&s.pos[i].x, &s.pos[i].y, &s.pos[i].z, &s.pos[i].w,
                          &s.vel[i].x, &s.vel[i].y, &s.vel[i].z, &s.vel[i].w};
        for (int k = 0; k < 8; ++k) {
            *all[k] = (double)(float)*all[k];
        }
    }
    return s;
}

/* Component k (0 x, 1 y, 2 z) of a vector. */
static double test_axis(const sim_vec4d *v, int k) {
    return k == 0 ? v->x : k == 1 ? v->y : v->z;
}

static sim_params periodic(double h, int axes) {
    sim_params p = sim_params_default();
    p.box_half = h;
    p.periodic = axes;
    p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    p.skin.value = 0.0;
    p.skin.set = 1;
    return p;
}

static sim_backend *make(const sim_backend_config *c, const sim_params *p, const sim_state *s,
                         const char *what) {
    sim_error err = {SIM_OK, ""};
    sim_backend *b = NULL;
    const sim_status st = sim_backend_create(c, p, s, &b, &err);
    ENSURE_MSG(st == SIM_OK, "%s: create: %s", what, err.message);
    return st == SIM_OK ? b : NULL;
}

static int forces_agree(const char *what, sim_backend *g, sim_backend *c, uint32_t n) {
    gpu_snapshot a, r;
    sim_error err = {SIM_OK, ""};
    memset(&a, 0, sizeof a);
    memset(&r, 0, sizeof r);
    ENSURE(gpu_snapshot_take(g, n, &a, &err) == SIM_OK);
    ENSURE(gpu_snapshot_take(c, n, &r, &err) == SIM_OK);
    const gpu_err e = gpu_compare3(a.force, r.force, n, FLOOR);
    const int ok = e.rel_l2 <= TOL_F_L2 && e.worst <= TOL_F_BODY_CPU;
    ENSURE_MSG(ok, "%s: F rel %.3g (tol %.1g), body %u rel %.3g (tol %.1g)", what, e.rel_l2,
               TOL_F_L2, e.worst_body, e.worst, TOL_F_BODY_CPU);
    gpu_snapshot_free(&a);
    gpu_snapshot_free(&r);
    return ok;
}

static void test_forces(void) {
    static const int axes_list[2] = {7, 5};
    const uint32_t n = 6000;
    const double h = 9.0;
    for (int ai = 0; ai < 2; ++ai) {
        sim_state s = crowded(3u + (uint64_t)ai, n, h, 1.0);
        sim_params p = periodic(h, axes_list[ai]);
        for (uint32_t i = 0; i < n && p.periodic != 7; ++i) { /* y walled: clear of the walls */
            s.pos[i].y = fmax(-h + 0.55, fmin(h - 0.55, s.pos[i].y));
        }
        const sim_backend_config cc = config(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, 0, SIM_NLIST_FULL);
        sim_backend *cpu = make(&cc, &p, &s, "cpu");
        for (int m = 0; m < SIM_PAIR_MAP_COUNT && cpu != NULL; ++m) {
            const sim_backend_config c = config(SIM_BACKEND_CUDA, m, 0, SIM_NLIST_FULL);
            sim_backend *g = make(&c, &p, &s, "plan");
            char what[128];
            snprintf(what, sizeof what, "axes %d, map %s", p.periodic, sim_pair_choice_name(m));
            if (g != NULL) {
                forces_agree(what, g, cpu, n);
            }
            sim_backend_destroy(g);
        }
        for (int mode = 0; mode < 4 && cpu != NULL; ++mode) { /* tiles 1, 2 levels; lists */
            sim_backend_config c = config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, 1,
                                          mode == 3 ? SIM_NLIST_HALF : SIM_NLIST_FULL);
            c.cull_levels = mode == 1 ? 2 : 1;
            sim_params q = p;
            q.skin.value = mode >= 2 ? 0.2 : 0.0;
            sim_backend *g = make(&c, &q, &s, "culled");
            char what[128];
            snprintf(what, sizeof what, "axes %d, culled mode %d", p.periodic, mode);
            if (g != NULL) {
                forces_agree(what, g, cpu, n);
            }
            sim_backend_destroy(g);
        }
        sim_backend_destroy(cpu);
        sim_state_free(&s);
    }
}

static void test_contacts_over_time(void) {
    const uint32_t n = 6000; /* test_periodic.c's density and speed, in a larger box */
    const double h = 10.0;
    static const struct {
        double skin;
        sim_nlist_kind kind;
        const char *name;
    } paths[] = {{0.0, SIM_NLIST_FULL, "tiles"},
                 {0.15, SIM_NLIST_FULL, "full lists"},
                 {0.15, SIM_NLIST_HALF, "half lists"}};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; ++k) {
        sim_state s = crowded(40u + k, n, h, 12.0);
        sim_params p = periodic(h, 7);
        p.restitution = 1.0;
        p.skin.value = paths[k].skin;
        const sim_backend_config c = config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, 1, paths[k].kind);
        const sim_backend_config cp = config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, 0, SIM_NLIST_FULL);
        sim_backend *b = make(&c, &p, &s, paths[k].name), *probe = make(&cp, &p, &s, "probe");
        sim_error err = {SIM_OK, ""};
        int steps = 0;
        for (int step = 0; step < 1000 && b != NULL && probe != NULL; ++step) {
            sim_frame_timing t;
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
            sim_state now;
            (void)sim_state_alloc(&now, n, &err);
            ENSURE(sim_backend_read_state(b, &now, NULL, &err) == SIM_OK);
            int inside = 1;
            for (uint32_t i = 0; i < n; ++i) {
                inside &=
                    fabs(now.pos[i].x) <= h && fabs(now.pos[i].y) <= h && fabs(now.pos[i].z) <= h;
            }
            ENSURE(sim_backend_set_state(probe, &now, &err) == SIM_OK);
            uint64_t na, nb;
            sim_body_pair *pa = contacts_of(b, &na), *pb = contacts_of(probe, &nb);
            const int same = same_pairs(pa, na, pb, nb);
            ENSURE_MSG(same && inside, "%s, step %d: %llu touching pairs, the full sweep %llu%s",
                       paths[k].name, step, (unsigned long long)na, (unsigned long long)nb,
                       inside ? "" : ", a body outside the box");
            free(pa);
            free(pb);
            sim_state_free(&now);
            ++steps;
            if (!same || !inside) {
                break;
            }
        }
        printf("  %s: %d steps exact\n", paths[k].name, steps);
        sim_backend_destroy(b);
        sim_backend_destroy(probe);
        sim_state_free(&s);
    }
}

/* The squeezed gas (test_cull_scenes.h: contacts everywhere, no blast) five times as fast and
 * translated so that bodies cross the faces from the first step: 50 single steps, each from one state given to both
 * backends, the GPU's step within 4e-6 box_half (test_gpu_nlist's bound for a step) of the CPU's,
 * positions compared modulo the period (a body wrapped by one backend and not by the other, at a
 * face to within rounding, is a period away).
 * Why not one 100-step run, as the first version: that ran a crowded random state (overlaps
 * from the start, restitution 0.8) and drifted 2.3e-3 box_half from the CPU by its end on the
 * first H100 run. A collision amplifies a difference of positions, and float against double
 * diverges exponentially in a dense gas (test_gpu_nlist caps its runs at 50 steps for this);
 * an error of the images would instead show in one step (a force across a face missing or
 * doubled: ~1e-2 box_half here), which this check sees and chaos cannot feign. */
static void test_trajectory(void) {
    const uint32_t n = 4000;
    scene sc = make_scene("gas", n, 77u);
    const double h = sc.p.box_half;
    for (uint32_t i = 0; i < n; ++i) {
        sc.s.vel[i].x = (double)(float)(5.0 * sc.s.vel[i].x);
        sc.s.vel[i].y = (double)(float)(5.0 * sc.s.vel[i].y);
        sc.s.vel[i].z = (double)(float)(5.0 * sc.s.vel[i].z);
    }
    const double dt = sc.p.dt > 0.0 ? sc.p.dt : sim_default_dt(&sc.p, &sc.s);
    for (int k = 0; k < 3; ++k) {
        /* A translation (a symmetry of the periodic box) per axis that puts the body fastest
         * along it half a step's travel short of the face it heads for: it crosses in the first
         * step, and its neighbours straddle the face (the scene keeps bodies a radius inside
         * the walls, so unshifted no body reached a face in 50 steps). */
        uint32_t fast = 0;
        for (uint32_t i = 1; i < n; ++i) {
            fast = fabs(test_axis(&sc.s.vel[i], k)) > fabs(test_axis(&sc.s.vel[fast], k)) ? i : fast;
        }
        const double v = test_axis(&sc.s.vel[fast], k);
        const double shift = copysign(h - 0.5 * fabs(v) * dt, v) - test_axis(&sc.s.pos[fast], k);
        for (uint32_t i = 0; i < n; ++i) {
            double *x = k == 0 ? &sc.s.pos[i].x : k == 1 ? &sc.s.pos[i].y : &sc.s.pos[i].z;
            double moved = *x + shift;
            moved -= moved >= h ? 2.0 * h : moved < -h ? -2.0 * h : 0.0;
            *x = (double)(float)moved;
        }
    }
    sim_params p = sc.p;
    p.periodic = 7;
    p.skin.set = 0; /* auto: the default lists */
    p.steps_per_frame = 1;
    const sim_backend_config cg = config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, 1, SIM_NLIST_FULL);
    const sim_backend_config cc = config(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, 1, SIM_NLIST_FULL);
    sim_backend *g = make(&cg, &p, &sc.s, "gpu"), *c = make(&cc, &p, &sc.s, "cpu");
    sim_error err = {SIM_OK, ""};
    sim_state now;
    (void)sim_state_alloc(&now, n, &err);
    double worst = 0.0;
    uint32_t crossed = 0;
    for (int step = 0; step < 50 && g != NULL && c != NULL; ++step) {
        sim_frame_timing t;
        ENSURE(sim_backend_read_state(g, &now, NULL, &err) == SIM_OK);
        ENSURE(sim_backend_set_state(g, &now, &err) == SIM_OK);
        ENSURE(sim_backend_set_state(c, &now, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(g, &t, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(c, &t, &err) == SIM_OK);
        gpu_snapshot a, r;
        memset(&a, 0, sizeof a);
        memset(&r, 0, sizeof r);
        ENSURE(gpu_snapshot_take(g, n, &a, &err) == SIM_OK);
        ENSURE(gpu_snapshot_take(c, n, &r, &err) == SIM_OK);
        double step_worst = 0.0;
        for (uint32_t i = 0; i < n; ++i) {
            const double d[3] = {a.state.pos[i].x - r.state.pos[i].x,
                                 a.state.pos[i].y - r.state.pos[i].y,
                                 a.state.pos[i].z - r.state.pos[i].z};
            const double x0[3] = {now.pos[i].x, now.pos[i].y, now.pos[i].z};
            const double x1[3] = {r.state.pos[i].x, r.state.pos[i].y, r.state.pos[i].z};
            for (int k = 0; k < 3; ++k) {
                step_worst = fmax(step_worst, fabs(d[k] - 2.0 * h * rint(d[k] / (2.0 * h))));
                crossed += fabs(x1[k] - x0[k]) > h ? 1u : 0u;
            }
        }
        ENSURE_MSG(step_worst / h <= 4e-6, "step %d: GPU %.2e box_half from the CPU", step,
                   step_worst / h);
        worst = fmax(worst, step_worst);
        gpu_snapshot_free(&a);
        gpu_snapshot_free(&r);
    }
    printf("  periodic gas N=%u, 50 steps from common states: GPU within %.1e box_half of the "
           "CPU per step; %u crossings of a face\n",
           n, worst / h, crossed);
    ENSURE(crossed > 0);
    sim_state_free(&now);
    sim_backend_destroy(g);
    sim_backend_destroy(c);
    scene_free(&sc);
}

static void test_atm(void) {
    const double h = 6.0;
    for (int big = 0; big < 2; ++big) {
        const uint32_t n = big ? 600 : 3000; /* the CPU sums every triple within the cut-off */
        sim_state s = crowded(9u + (uint64_t)big, n, h, 0.0);
        for (uint32_t i = 0; i < n; ++i) {
            s.pos[i].w = 0.05;
        }
        sim_params p = periodic(h, big ? 5 : 7);
        for (uint32_t i = 0; i < n && big; ++i) { /* y walled */
            s.pos[i].y = fmax(-h + 0.1, fmin(h - 0.1, s.pos[i].y));
        }
        p.triplets = 1;
        p.atm_nu = 1e-3;
        p.atm_cutoff = big ? 5.5 : 1.5; /* above a third of the period 12 m, and below */
        const sim_backend_config cc = config(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, 1, SIM_NLIST_FULL);
        sim_backend *cpu = make(&cc, &p, &s, "cpu atm");
        for (int culled = 0; culled < 2 && cpu != NULL; ++culled) {
            const sim_backend_config c =
                config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, culled, SIM_NLIST_FULL);
            sim_backend *g = make(&c, &p, &s, "gpu atm");
            char what[128];
            snprintf(what, sizeof what, "ATM cut-off %g, %s", p.atm_cutoff,
                     culled ? "culled tile triples" : "triplet map");
            if (g != NULL) {
                forces_agree(what, g, cpu, n);
            }
            sim_backend_destroy(g);
        }
        sim_backend_destroy(cpu);
        sim_state_free(&s);
    }
}

static const ensure_test tests[] = {
    {"forces", test_forces},
    {"contacts_over_time", test_contacts_over_time},
    {"trajectory", test_trajectory},
    {"atm", test_atm},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
