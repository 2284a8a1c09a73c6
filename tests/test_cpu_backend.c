/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference backend: every pair and triplet map gives the forces of a plain
 * O(N^2) / O(N^3) loop (so the tiling and the maps lose and repeat nothing; pairs also culled),
 * conservation of momentum and energy, switching maps/params/state mid-run, instability
 * reports, timings. Culling itself: test_cpu_cull.c. */
#include "nbsim/internal/backend.h"
#include "physics/physics.h"

#include "ensure.h"
#include "test_backend_util.h"
#include "test_rng.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- helpers ---- */

static uint64_t rng_state = 99;
static double rnd(double lo, double hi) {
    return test_rnd(&rng_state, lo, hi);
}

/* n spheres (radius 0.4-0.5 m, mass 0.5-2 kg) on a cubic grid of spacing 1.5 m centred on the
 * origin, jitter +-0.2 m: no overlaps. Random velocities of scale v. Returns the grid's half-width
 * plus a margin of 0.7 m in *half (a box that touches nobody). */
static sim_state grid_state(uint32_t n, double v, double *half) {
    sim_state s = test_random_state(&rng_state, n, 1.0, v);
    uint32_t m = 1;
    while (m * m * m < n) {
        ++m;
    }
    const double c = 0.5 * (m - 1) * 1.5;
    for (uint32_t i = 0; i < n; ++i) {
        s.pos[i].x = (double)(i % m) * 1.5 - c + rnd(-0.2, 0.2);
        s.pos[i].y = (double)(i / m % m) * 1.5 - c + rnd(-0.2, 0.2);
        s.pos[i].z = (double)(i / m / m) * 1.5 - c + rnd(-0.2, 0.2);
    }
    *half = c + 0.2 + 0.5 + 0.05;
    return s;
}

static sim_backend_config cpu_config(sim_pair_map pm, sim_triplet_map tm, uint32_t tile,
                                     int threads) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.pair_map = pm;
    c.triplet_map = tm;
    c.tile = tile;
    c.cpu_threads = threads;
    return c;
}

/* Total force per body [N] from a plain double loop over all pairs and triples (each once), with
 * a per-body scale: the sum of the magnitudes of its contributions (the rounding yardstick). */
static void reference_forces(const sim_state *s, const sim_params *p, sim_vec3d *f, double *scale) {
    sim_physics ph = sim_physics_from_params(p);
    ph.normal.inv_dt = 1.0 / (p->dt > 0.0 ? p->dt : sim_default_dt(p, s)); /* the backend's step */
    for (uint32_t i = 0; i < s->n; ++i) {
        f[i] = sim_body_force_d(s->pos[i], s->vel[i], &ph, NULL);
        scale[i] = fabs(f[i].x) + fabs(f[i].y) + fabs(f[i].z);
    }
    for (uint32_t i = 0; i < s->n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            const sim_vec3d g =
                sim_contact_force_d(s->pos[i], s->vel[i], s->pos[j], s->vel[j], &ph, NULL);
            const double a = fabs(g.x) + fabs(g.y) + fabs(g.z);
            f[i].x += g.x, f[i].y += g.y, f[i].z += g.z;
            f[j].x -= g.x, f[j].y -= g.y, f[j].z -= g.z;
            scale[i] += a;
            scale[j] += a;
        }
    }
    if (!p->triplets) {
        return;
    }
    for (uint32_t i = 0; i < s->n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            for (uint32_t k = 0; k < j; ++k) {
                sim_vec3d g[3];
                sim_atm_forces_d(s->pos[i], s->pos[j], s->pos[k], &ph, &g[0], &g[1], &g[2], NULL);
                const uint32_t idx[3] = {i, j, k};
                for (int b = 0; b < 3; ++b) {
                    sim_vec3d *t = &f[idx[b]];
                    t->x += g[b].x, t->y += g[b].y, t->z += g[b].z;
                    scale[idx[b]] += fabs(g[b].x) + fabs(g[b].y) + fabs(g[b].z);
                }
            }
        }
    }
}

/* F_0 of a fresh backend against the reference; returns 1 compared, 0 skipped, -1 failed. */
static int compare_forces(const sim_backend_config *c, const sim_params *p, const sim_state *s,
                          const sim_vec3d *ref, const double *scale, const char *what) {
    sim_error err = {SIM_OK, ""};
    sim_backend *b = NULL;
    const sim_status st = sim_backend_create(c, p, s, &b, &err);
    if (st == SIM_UNSUPPORTED) {
        printf("  %s: skipped (%s)\n", what, err.message);
        return 0;
    }
    ENSURE_MSG(st == SIM_OK, "%s: %s", what, err.message);
    if (st != SIM_OK) {
        return -1;
    }
    sim_state out;
    (void)sim_state_alloc(&out, s->n, &err);
    sim_vec3d *f = malloc(s->n * sizeof *f);
    ENSURE(sim_backend_read_state(b, &out, f, &err) == SIM_OK);
    double worst = 0.0;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        const double d =
            fabs(f[i].x - ref[i].x) + fabs(f[i].y - ref[i].y) + fabs(f[i].z - ref[i].z);
        const double rel = d / (scale[i] + 1e-300);
        if (rel > worst) {
            worst = rel;
            bad = i;
        }
    }
    ENSURE_MSG(worst <= 1e-12, "%s: body %u differs by %.3g of its force scale", what, bad, worst);
    sim_state_free(&out);
    free(f);
    sim_backend_destroy(b);
    return worst <= 1e-12 ? 1 : -1;
}

static sim_params dense_params(double h, int triplets) {
    sim_params p = sim_params_default();
    p.box_half = h;
    p.restitution = 0.6;
    p.gravity = (sim_vec3d){0.3, -9.81, 0.0};
    p.atm_nu = 0.05;
    p.triplets = triplets;
    return p;
}

/* ---- the tiling through every map ---- */

/* N covers one partial tile, exact multiples and partial last tiles, 1 .. 7 tiles per side (odd
 * and non-power-of-two n for rb, rec and rm). Half-width h for a volume fraction ~0.3. */
static const uint32_t kPairSizes32[] = {1, 2, 31, 32, 33, 64, 97, 160, 223};
static const uint32_t kPairSizes64[] = {1, 63, 65, 200, 327, 448};
static const uint32_t kTripletSizes32[] = {3, 33, 97, 130, 161};
static const uint32_t kTripletSizes64[] = {65, 129, 200};

static double dense_half(uint32_t n) {
    return 0.5 * cbrt((double)n * 0.4 / 0.3) + 0.5;
}

/* Every map, with the full sweep (the map places the contact blocks) and culled (the map
 * places the culling pass). */
static void pair_maps_case(uint32_t tile, uint32_t n, int *ran, int *skipped) {
    sim_state s = test_random_state(&rng_state, n, dense_half(n), 1.0);
    const sim_params p = dense_params(dense_half(n), 0);
    sim_vec3d *ref = malloc(n * sizeof *ref);
    double *scale = malloc(n * sizeof *scale);
    reference_forces(&s, &p, ref, scale);
    for (int m = 0; m < 2 * SIM_PAIR_MAP_COUNT; ++m) {
        const int cull = m >= SIM_PAIR_MAP_COUNT;
        const sim_pair_map pm = (sim_pair_map)(m % SIM_PAIR_MAP_COUNT);
        char what[96];
        snprintf(what, sizeof what, "pair map %s%s, tile %u, N %u", sim_pair_map_name(pm),
                 cull ? " culled" : "", tile, n);
        sim_backend_config c = cpu_config(pm, SIM_TRIPLET_MAP_TETRA, tile, 2);
        c.cull = cull;
        const int r = compare_forces(&c, &p, &s, ref, scale, what);
        *ran += r != 0;
        *skipped += r == 0;
    }
    free(ref);
    free(scale);
    sim_state_free(&s);
}

static void test_pair_maps(void) {
    rng_state = 100; /* each test sees the same bodies however it is run */
    int ran = 0, skipped = 0;
    for (size_t i = 0; i < sizeof kPairSizes32 / sizeof kPairSizes32[0]; ++i) {
        pair_maps_case(32, kPairSizes32[i], &ran, &skipped);
    }
    for (size_t i = 0; i < sizeof kPairSizes64 / sizeof kPairSizes64[0]; ++i) {
        pair_maps_case(64, kPairSizes64[i], &ran, &skipped);
    }
    printf("  %d map/size combinations match the O(N^2) loop to 1e-12, %d skipped\n", ran, skipped);
    ENSURE(ran > 0);
}

static void triplet_maps_case(uint32_t tile, uint32_t n, int *ran, int *skipped) {
    sim_state s = test_random_state(&rng_state, n, dense_half(n), 1.0);
    const sim_params p = dense_params(dense_half(n), 1);
    sim_vec3d *ref = malloc(n * sizeof *ref);
    double *scale = malloc(n * sizeof *scale);
    reference_forces(&s, &p, ref, scale);
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        char what[96];
        snprintf(what, sizeof what, "triplet map %s, tile %u, N %u", sim_triplet_map_name(m), tile,
                 n);
        const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, (sim_triplet_map)m, tile, 2);
        const int r = compare_forces(&c, &p, &s, ref, scale, what);
        *ran += r != 0;
        *skipped += r == 0;
    }
    free(ref);
    free(scale);
    sim_state_free(&s);
}

static void test_triplet_maps(void) {
    rng_state = 101;
    int ran = 0, skipped = 0;
    for (size_t i = 0; i < sizeof kTripletSizes32 / sizeof kTripletSizes32[0]; ++i) {
        triplet_maps_case(32, kTripletSizes32[i], &ran, &skipped);
    }
    for (size_t i = 0; i < sizeof kTripletSizes64 / sizeof kTripletSizes64[0]; ++i) {
        triplet_maps_case(64, kTripletSizes64[i], &ran, &skipped);
    }
    printf("  %d map/size combinations match the O(N^3) loop to 1e-12, %d skipped\n", ran, skipped);
    ENSURE(ran > 0);
}

/* ---- conservation ---- */

static void momentum(sim_backend *b, uint32_t n, double out[4]) {
    sim_state s;
    sim_error err;
    (void)sim_state_alloc(&s, n, &err);
    (void)sim_backend_read_state(b, &s, NULL, &err);
    out[0] = out[1] = out[2] = out[3] = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4d v = s.vel[i];
        out[0] += v.w * v.x;
        out[1] += v.w * v.y;
        out[2] += v.w * v.z;
        out[3] += v.w * sqrt(v.x * v.x + v.y * v.y + v.z * v.z); /* yardstick */
    }
    sim_state_free(&s);
}

/* A dense, dissipative cluster with ATM in the middle of a big box, no gravity: contacts and
 * triples exchange momentum but never create it (Newton's third law in every interaction). */
static void test_momentum(void) {
    rng_state = 102;
    const uint32_t n = 70;
    sim_state s = test_random_state(&rng_state, n, 3.0, 2.0);
    sim_params p = dense_params(50.0, 1);
    p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    p.steps_per_frame = 100;
    const sim_backend_config c = cpu_config(SIM_PAIR_MAP_RB, SIM_TRIPLET_MAP_BB, 32, 1);
    sim_backend *b = test_backend_make(&c, &p, &s, "backend");
    double p0[4], p1[4];
    momentum(b, n, p0);
    sim_error err;
    sim_frame_timing t;
    for (int f = 0; f < 3; ++f) {
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    }
    momentum(b, n, p1);
    const double drift = fabs(p1[0] - p0[0]) + fabs(p1[1] - p0[1]) + fabs(p1[2] - p0[2]);
    printf("  momentum drift over 300 steps: %.2e of sum m|v| (tol 1e-12)\n", drift / p0[3]);
    ENSURE(drift <= 1e-12 * p0[3]);
    sim_backend_destroy(b);
    sim_state_free(&s);
}

/* Elastic runs (e = 1): velocity Verlet keeps the total energy within a bounded oscillation.
 * Over 4000 steps at the default dt (t_c / 50), tolerance 5e-4:
 *  - a gas with walls and ATM, no gravity: |E - E0| relative to |E0|;
 *  - the same gas falling under gravity onto the floor (no ATM), relative to the peak kinetic
 *    energy (E0 itself can be near 0: the potential is measured from y = 0).
 * Measured over 8 seeds: 2e-5 .. 1.1e-4 (ATM) and 4e-5 .. 1.3e-4 (gravity). */
static void test_energy_conservation(void) {
    rng_state = 103;
    double half;
    sim_state s = grid_state(40, 3.0, &half);
    for (int grav = 0; grav <= 1; ++grav) {
        sim_params p = dense_params(half, !grav);
        p.restitution = 1.0;
        p.atm_nu = 0.2;
        p.gravity = grav ? (sim_vec3d){0.0, -9.81, 0.0} : (sim_vec3d){0.0, 0.0, 0.0};
        p.steps_per_frame = 400;
        const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 32, 1);
        sim_backend *b = test_backend_make(&c, &p, &s, "backend");
        sim_energy e0, e;
        sim_error err;
        sim_frame_timing t;
        ENSURE(sim_backend_energy(b, &e0, &err) == SIM_OK);
        double worst = 0.0, min_kin = e0.kinetic, max_kin = e0.kinetic;
        for (int f = 0; f < 10; ++f) {
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
            ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
            worst = fmax(worst, fabs(e.total - e0.total));
            min_kin = fmin(min_kin, e.kinetic);
            max_kin = fmax(max_kin, e.kinetic);
        }
        const double scale = grav ? max_kin : fabs(e0.total), tol = 5e-4;
        printf("  %s: |E - E0| <= %.2e of %s over 4000 steps (tol %.0e); kinetic %.4g .. %.4g J\n",
               grav ? "gravity, no ATM" : "ATM, no gravity", worst / scale,
               grav ? "peak kinetic" : "|E0|", tol, min_kin, max_kin);
        ENSURE(worst <= tol * scale);
        ENSURE(grav ? e.gravity != 0.0 : e.atm != 0.0);
        ENSURE(max_kin > min_kin); /* energy was exchanged */
        ENSURE_NEAR(e.total, e.kinetic + e.contact + e.atm + e.gravity, 1e-12 * fabs(e.total));
        sim_backend_destroy(b);
    }
    sim_state_free(&s);
}

/* With e < 1 collisions dissipate: the energy falls. */
static void test_dissipation(void) {
    rng_state = 104;
    const uint32_t n = 64;
    sim_state s = test_random_state(&rng_state, n, 2.5, 3.0);
    sim_params p = dense_params(2.5, 0);
    p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    p.restitution = 0.5;
    p.steps_per_frame = 500;
    const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 32, 2);
    sim_backend *b = test_backend_make(&c, &p, &s, "backend");
    sim_energy e0, e1;
    sim_error err;
    sim_frame_timing t;
    ENSURE(sim_backend_energy(b, &e0, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(sim_backend_energy(b, &e1, &err) == SIM_OK);
    ENSURE_MSG(e1.total < 0.8 * e0.total, "E %g -> %g", e0.total, e1.total);
    sim_backend_destroy(b);
    sim_state_free(&s);
}

/* ---- mid-run switches and state handling ---- */

/* Switching maps mid-run leaves the trajectory unchanged (up to rounding order); one thread and
 * the same maps give bit-identical runs; set_state restarts exactly; 1 vs 2 threads agree. */
static void test_switches(void) {
    rng_state = 105;
    const uint32_t n = 64;
    double half;
    sim_state s = grid_state(n, 5.0, &half);
    sim_params p = dense_params(half, 1);
    p.steps_per_frame = 10;
    sim_error err;
    sim_frame_timing t;
    const sim_backend_config c1 = cpu_config(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 32, 1);
    const sim_backend_config c2 = cpu_config(SIM_PAIR_MAP_BB, SIM_TRIPLET_MAP_BB, 32, 2);
    sim_backend *a = test_backend_make(&c1, &p, &s, "backend"),
                *b = test_backend_make(&c2, &p, &s, "backend");
    for (int f = 0; f < 4; ++f) {
        ENSURE(sim_backend_run_frame(a, &t, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        const sim_pair_map pm = (sim_pair_map)((f + 3) % SIM_PAIR_MAP_COUNT);
        const sim_triplet_map tm = (sim_triplet_map)((f + 1) % SIM_TRIPLET_MAP_COUNT);
        const sim_status st = sim_backend_set_maps(b, pm, tm, &err);
        ENSURE_MSG(st == SIM_OK || st == SIM_UNSUPPORTED, "set_maps: %s", err.message);
    }
    const double d = test_backend_state_diff(a, b, n);
    printf("  maps switched mid-run, 2 threads vs 1: max state difference %.2e (tol 1e-9)\n", d);
    ENSURE(d <= 1e-9);
    /* set_state back to the start, then the same frames: bit-identical with one thread. */
    sim_backend *fresh = test_backend_make(&c1, &p, &s, "backend");
    ENSURE(sim_backend_set_state(a, &s, &err) == SIM_OK);
    for (int f = 0; f < 4; ++f) {
        ENSURE(sim_backend_run_frame(a, &t, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(fresh, &t, &err) == SIM_OK);
    }
    ENSURE(test_backend_state_diff(a, fresh, n) == 0.0);
    /* Params mid-run: steps_per_frame only -> same trajectory; triplets off -> F recomputed. */
    sim_params q = p;
    q.steps_per_frame = 20;
    ENSURE(sim_backend_set_params(a, &q, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(a, &t, &err) == SIM_OK && t.steps == 20);
    ENSURE(sim_backend_run_frame(fresh, &t, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(fresh, &t, &err) == SIM_OK);
    ENSURE(test_backend_state_diff(a, fresh, n) == 0.0);
    q.triplets = 0;
    ENSURE(sim_backend_set_params(a, &q, &err) == SIM_OK);
    sim_energy e;
    ENSURE(sim_backend_energy(a, &e, &err) == SIM_OK && e.atm == 0.0);
    q.triplets = 1;
    ENSURE(sim_backend_set_params(a, &q, &err) == SIM_OK);
    ENSURE(sim_backend_energy(a, &e, &err) == SIM_OK && e.atm != 0.0);
    ENSURE(sim_backend_get_params(a)->steps_per_frame == 20);
    sim_backend_destroy(a);
    sim_backend_destroy(b);
    sim_backend_destroy(fresh);
    sim_state_free(&s);
}

static void test_frame_report(void) {
    rng_state = 106;
    const uint32_t n = 150; /* 5 tiles of 32 */
    sim_state s = test_random_state(&rng_state, n, 3.0, 1.0);
    sim_params p = dense_params(3.0, 0);
    p.steps_per_frame = 3;
    sim_error err;
    sim_frame_timing t;
    sim_backend_config c = cpu_config(SIM_PAIR_MAP_BB, SIM_TRIPLET_MAP_BB, 32, 2);
    c.cull = 0; /* the map's own blocks; test_cpu_cull reports the culled pipeline */
    sim_backend *b = test_backend_make(&c, &p, &s, "backend");
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(t.steps == 3);
    ENSURE(t.pair_blocks == 25 && t.pair_blocks_wasted == 10); /* 5 x 5 grid, 15 useful */
    ENSURE(!t.culled && t.sort_ms == 0.0 && t.cull_ms == 0.0 && t.tile_pairs == 0);
    ENSURE(t.triplet_blocks == 0 && t.triplet_blocks_wasted == 0 && t.triplet_ms == 0.0);
    ENSURE(t.pair_ms > 0.0 && t.integrate_ms > 0.0 && t.step_ms >= t.pair_ms);
    p.triplets = 1;
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(t.triplet_blocks == 125 && t.triplet_blocks_wasted == 125 - 35 && t.triplet_ms > 0.0);
    /* export: float positions and speeds */
    sim_vec4f *pos = malloc(n * sizeof *pos);
    float *speed = malloc(n * sizeof *speed);
    sim_state st;
    (void)sim_state_alloc(&st, n, &err);
    ENSURE(sim_backend_export_positions(b, pos, speed, 0, &err) == SIM_OK);
    ENSURE(sim_backend_export_positions(b, pos, speed, 1, &err) == SIM_UNSUPPORTED);
    ENSURE(sim_backend_read_state(b, &st, NULL, &err) == SIM_OK);
    const sim_vec4d v = st.vel[7];
    ENSURE_NEAR(pos[7].x, st.pos[7].x, 1e-6 * fabs(st.pos[7].x) + 1e-30);
    ENSURE(pos[7].w == (float)st.pos[7].w);
    ENSURE_NEAR(speed[7], sqrt(v.x * v.x + v.y * v.y + v.z * v.z), 1e-5);
    /* an even sample (the viewer's above its limit): bodies 0, 3, 6, ..., the same floats */
    const uint32_t every = 3, count = sim_sample_count(n, every);
    sim_vec4f *some = calloc(count + 1, sizeof *some);
    float *some_speed = calloc(count + 1, sizeof *some_speed);
    ENSURE(count == (n + 2) / 3 && some != NULL && some_speed != NULL);
    ENSURE(sim_backend_export_sample(b, every, some, some_speed, 0, &err) == SIM_OK);
    for (uint32_t k = 0; k < count; ++k) {
        ENSURE(memcmp(&some[k], &pos[k * every], sizeof *some) == 0 &&
               some_speed[k] == speed[k * every]);
    }
    ENSURE(some[count].w == 0.0f && some_speed[count] == 0.0f); /* nothing past the sample */
    free(some);
    free(some_speed);
    ENSURE(strncmp(sim_backend_device_name(b), "CPU (", 5) == 0);
    printf("  device: %s\n", sim_backend_device_name(b));
    free(pos);
    free(speed);
    sim_state_free(&st);
    sim_backend_destroy(b);
    sim_state_free(&s);
}

static void test_refusals(void) {
    rng_state = 107;
    sim_state s = test_random_state(&rng_state, 10, 3.0, 1.0);
    sim_params p = dense_params(3.0, 0);
    sim_error err;
    sim_backend *b = NULL;
    sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 32, 1);
    c.pair_map = SIM_PAIR_FULL;
    ENSURE(sim_backend_create(&c, &p, &s, &b, &err) == SIM_UNSUPPORTED && b == NULL);
    c.pair_map = SIM_PAIR_MAP_LTM;
    s.vel[3].w = 0.0;
    ENSURE(sim_backend_create(&c, &p, &s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    ENSURE(strstr(err.message, "body 3") != NULL);
    sim_state_free(&s);
}

/* A NaN velocity becomes a NaN position; a body too fast for the step leaves the box. Both are
 * reported with the step and the body. */
static void test_unstable(void) {
    rng_state = 108;
    for (int nan = 0; nan <= 1; ++nan) {
        double half;
        sim_state s = grid_state(40, 0.0, &half);
        if (nan) {
            s.vel[17].y = NAN;
        } else {
            s.vel[17].x = 1e4; /* 10 m per step */
        }
        sim_params p = dense_params(half, 0);
        p.dt = 1e-3;
        p.steps_per_frame = 5;
        const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 32, 2);
        sim_backend *b = test_backend_make(&c, &p, &s, "backend");
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_UNSTABLE);
        printf("  %s\n", err.message);
        ENSURE(strstr(err.message, "body 17") != NULL);
        ENSURE(strstr(err.message, nan ? "has NaN position" : "left the box") != NULL);
        ENSURE(strstr(err.message, "frame step 1 ") != NULL);
        sim_backend_destroy(b);
        sim_state_free(&s);
    }
}

/* The viewer's sample of n bodies under a limit: at most max bodies, every as small as that
 * allows, in 64 bits up to 2^32 - 1 bodies. */
static void test_sample_sizes(void) {
    const uint32_t ns[] = {1, 2, 1000, 16777216, 16777217, 200000000, UINT32_MAX - 1, UINT32_MAX};
    const uint32_t maxes[] = {1, 3, 16777216, UINT32_MAX};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; ++i) {
        for (size_t j = 0; j < sizeof maxes / sizeof maxes[0]; ++j) {
            const uint32_t n = ns[i], max = maxes[j], every = sim_sample_every(n, max);
            const uint32_t count = sim_sample_count(n, every);
            ENSURE_MSG(every >= 1 && count <= max && count >= 1 &&
                           (every == 1 || sim_sample_count(n, every - 1) > max) &&
                           (uint64_t)(count - 1) * every < n && (uint64_t)count * every >= n,
                       "n %u, max %u: every %u, count %u", n, max, every, count);
        }
    }
    ENSURE(sim_sample_every(200000000, 16777216) == 12 &&
           sim_sample_count(200000000, 12) == 16666667);
    ENSURE(sim_sample_count(UINT32_MAX, 1) == UINT32_MAX &&
           sim_sample_every(UINT32_MAX, 1) == UINT32_MAX);
}

static const ensure_test tests[] = {
    {"pair_maps", test_pair_maps},       {"triplet_maps", test_triplet_maps},
    {"momentum", test_momentum},         {"energy_conservation", test_energy_conservation},
    {"dissipation", test_dissipation},   {"switches", test_switches},
    {"frame_report", test_frame_report}, {"refusals", test_refusals},
    {"unstable", test_unstable},         {"sample_sizes", test_sample_sizes},
};

ENSURE_MAIN(tests)
