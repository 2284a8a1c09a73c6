/* SPDX-License-Identifier: MIT
 * nbsim — culling on the CUDA backend: the culled pipeline (Morton sort, tile boxes, map-placed
 * culling pass, list-driven contact sweep) against the full sweep on the same GPU and against
 * the CPU reference.
 *
 * Acceptance: the set of touching pairs (sim_backend_contacts, user indices) of a culled backend
 * is identical to the full sweep's at the same positions, for every scene, map, tile size, one
 * and two passes, partial last tiles, bodies on and past the walls, after re-sorts and with a
 * stale order, culling toggled, lists that overflow. Forces: culled vs full sweep on the GPU
 * differ only by float reassociation (the same pairs, summed in another order): the tolerances
 * of test_gpu_backend.c, ||dF|| / ||F|| <= 1e-5 and per body 1e-4 (|F_i| + 0.1 F_rms); against
 * the CPU reference the same. Everything the user sees stays in the user's order: read_state,
 * both exports, the body named by an instability. Skipped (77) without a device. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "test_cull_scenes.h"
#include "test_gpu_util.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
/* GPU (float) against the CPU reference (double) where bodies rest on each other: positions in
 * float carry ulp(x) ~ 6e-8 |x| into the overlap d = r_i + r_j - |x_i - x_j|, which is ~1e-3 of
 * a radius in a pile, so a contact force is only good to ~|x| 6e-8 / d ~ 1e-4..1e-3 of itself
 * (measured on an H100: 4.2e-4 for the 70,001-body pile). Culled against unculled on the GPU
 * (the same floats, other summation order) keeps TOL_F_BODY. */
#define TOL_F_BODY_CPU 2e-3
#define FLOOR 0.1

static sim_backend_config config(sim_backend_kind kind, int cull, int map, uint32_t tile,
                                 int levels, int sort_every) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = kind;
    c.pair_map = map;
    c.tile = tile;
    c.cull = cull;
    c.cull_levels = levels;
    c.sort_every = sort_every;
    /* the culling pass each map places is what is tested: the lists built from its tile pairs
     * (built from the cell grid no map places anything; test_gpu_nlist.c runs both) */
    static sim_backend_tuning tiles;
    tiles = sim_backend_tuning_default();
    tiles.nlist_build = SIM_NLIST_BUILD_TILES;
    c.tuning = &tiles;
    return c;
}

static sim_backend *make(const sim_backend_config *c, const scene *sc) {
    sim_error err = {SIM_OK, ""};
    sim_backend *b = NULL;
    const sim_status st = sim_backend_create(c, &sc->p, &sc->s, &b, &err);
    ENSURE_MSG(st == SIM_OK, "%s: create (%s, map %s, tile %u): %s", sc->name,
               c->kind == SIM_BACKEND_CPU ? "cpu" : "gpu", sim_pair_choice_name(c->pair_map),
               c->tile, err.message);
    return st == SIM_OK ? b : NULL;
}

static gpu_snapshot snapshot(sim_backend *b, uint32_t n) {
    gpu_snapshot s;
    sim_error err = {SIM_OK, ""};
    memset(&s, 0, sizeof s);
    ENSURE_MSG(gpu_snapshot_take(b, n, &s, &err) == SIM_OK, "%s", err.message);
    return s;
}

/* F of `a` against `ref`: 1 when within the tolerances (per body: tol_body). */
static int forces_agree(const char *what, const gpu_snapshot *a, const gpu_snapshot *ref,
                        uint32_t n, double tol_body) {
    if (a->force == NULL || ref->force == NULL) {
        return 0;
    }
    const gpu_err e = gpu_compare3(a->force, ref->force, n, FLOOR);
    ENSURE_MSG(e.rel_l2 <= TOL_F_L2 && e.worst <= tol_body,
               "%s: F rel %.3g (tol %.1g), body %u rel %.3g (tol %.1g)", what, e.rel_l2, TOL_F_L2,
               e.worst_body, e.worst, tol_body);
    return e.rel_l2 <= TOL_F_L2 && e.worst <= tol_body;
}

/* ---- the same pairs and forces on every scene and configuration ---- */

static void scene_case(const char *kind, uint32_t n) {
    scene sc = make_scene(kind, n, 17u + n);
    const sim_backend_config full = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_BB, 64, 0, 0);
    const sim_backend_config cpu = config(SIM_BACKEND_CPU, 1, SIM_PAIR_MAP_LTM, 64, 0, 0);
    sim_backend *ref = make(&full, &sc), *cref = make(&cpu, &sc);
    if (ref == NULL || cref == NULL) {
        sim_backend_destroy(ref);
        sim_backend_destroy(cref);
        scene_free(&sc);
        return;
    }
    uint64_t n_ref, n_cpu;
    sim_body_pair *want = contacts_of(ref, &n_ref), *cpu_pairs = contacts_of(cref, &n_cpu);
    gpu_snapshot f_ref = snapshot(ref, n), f_cpu = snapshot(cref, n);
    ENSURE_MSG(n_ref > n / 4, "%s N=%u: only %llu contacts", kind, n, (unsigned long long)n_ref);
    /* float (GPU) and double (CPU) may disagree on pairs within an ulp of touching */
    uint64_t diff = 0;
    for (uint64_t a = 0, b = 0; a < n_ref || b < n_cpu;) {
        const int c = a == n_ref ? 1 : b == n_cpu ? -1 : cmp_pair(&want[a], &cpu_pairs[b]);
        diff += c != 0;
        a += c <= 0;
        b += c >= 0;
    }
    forces_agree("full sweep vs CPU", &f_ref, &f_cpu, n, TOL_F_BODY_CPU);

    sim_backend_config c[SIM_PAIR_MAP_COUNT + 8];
    int count = 0;
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        c[count++] = config(SIM_BACKEND_CUDA, 1, m, 64, 0, 0);
    }
    c[count++] = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_BB, 32, 2, 0);
    c[count++] = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_LTM, 32, 2, 0);
    c[count++] = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_RM, 64, 2, 0);
    c[count++] = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_REC, 128, 1, 0);
    c[count++] = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_RB, 128, 2, 0);
    c[count++] = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_UTM, 32, 1, 0);
    int agree = 0;
    double swept = 0.0;
    for (int k = 0; k < count; ++k) {
        char what[128];
        snprintf(what, sizeof what, "%s N=%u map %s tile %u levels %d", kind, n,
                 sim_pair_choice_name(c[k].pair_map), c[k].tile, c[k].cull_levels);
        sim_backend *b = make(&c[k], &sc);
        if (b == NULL) {
            continue;
        }
        uint64_t got;
        sim_body_pair *have = contacts_of(b, &got);
        const int same = same_pairs(want, n_ref, have, got);
        ENSURE_MSG(same, "%s: culled %llu pairs, full sweep %llu", what, (unsigned long long)got,
                   (unsigned long long)n_ref);
        gpu_snapshot f = snapshot(b, n);
        const int fs = forces_agree(what, &f, &f_ref, n, TOL_F_BODY) &&
                       forces_agree(what, &f, &f_cpu, n, TOL_F_BODY_CPU);
        agree += same && fs;
        sim_frame_timing t;
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s: %s", what, err.message);
        ENSURE(t.culled && t.cull_levels == (c[k].cull_levels ? c[k].cull_levels : t.cull_levels));
        ENSURE(t.tile_pairs > 0 && t.tile_pairs <= t.tile_pairs_total && t.pair_ms > 0.0);
        ENSURE(t.cull_ms > 0.0 && t.cull_fallback_steps == 0);
        swept += (double)t.tile_pairs / (double)t.tile_pairs_total;
        gpu_snapshot_free(&f);
        free(have);
        sim_backend_destroy(b);
    }
    printf("  %-8s N=%-6u %7llu touching pairs; %d/%d culled configurations give the same set "
           "and forces; tile pairs swept %.1f %%; GPU vs CPU sets differ in %llu pairs\n",
           kind, n, (unsigned long long)n_ref, agree, count, 100.0 * swept / count,
           (unsigned long long)diff);
    ENSURE(agree == count);
    ENSURE(diff <= n_ref / 10000 + 2);
    gpu_snapshot_free(&f_ref);
    gpu_snapshot_free(&f_cpu);
    free(want);
    free(cpu_pairs);
    sim_backend_destroy(ref);
    sim_backend_destroy(cref);
    scene_free(&sc);
}

static void test_scenes(void) {
    static const char *const kinds[] = {"gas", "pile", "collide", "walls"};
    for (int s = 0; s < 4; ++s) {
        scene_case(kinds[s], 20001);
    }
    scene_case("pile", 70001); /* 1094 tiles of 64: two passes by default */
}

/* ---- over time: re-sorts, a stale order, culling toggled ---- */

/* The blocks of `collide` crash (5 m/s each). Culled backends that sort every step, every 7,
 * or never again, and one that toggles culling every frame: at every frame the touching set
 * equals the full sweep's at that backend's own state, and the trajectories agree with the full
 * sweep's within test_gpu_backend's trajectory tolerance. */
static void test_over_time(void) {
    const uint32_t n = 30000;
    scene sc = make_scene("collide", n, 3u);
    sc.p.steps_per_frame = 5;
    sim_backend_config cfg[5] = {
        config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_LTM, 64, 0, 0),
        config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_LTM, 64, 0, 1),
        config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_RM, 32, 2, 7),
        config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_BB, 128, 1, 1000000),
        config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_REC, 64, 0, 0),
    };
    sim_backend *b[5];
    int ok = 1;
    for (int k = 0; k < 5; ++k) {
        b[k] = make(&cfg[k], &sc);
        ok &= b[k] != NULL;
    }
    const sim_backend_config probe_cfg = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_BB, 64, 0, 0);
    sim_backend *probe = make(&probe_cfg, &sc);
    ok &= probe != NULL;
    sim_state s;
    sim_error err = {SIM_OK, ""};
    (void)sim_state_alloc(&s, n, &err);
    int sorts[5] = {0}, mismatches = 0, frames = 8;
    double drift = 0.0;
    uint64_t contacts = 0;
    for (int f = 0; ok && f < frames; ++f) {
        for (int k = 0; k < 5; ++k) {
            sim_frame_timing t;
            if (k == 4) {
                ENSURE(sim_backend_set_cull(b[k], f % 2 == 0, &err) == SIM_OK);
            }
            ENSURE_MSG(sim_backend_run_frame(b[k], &t, &err) == SIM_OK, "%s", err.message);
            sorts[k] += t.sorts;
            ENSURE(t.culled == (k == 4 ? f % 2 == 0 : cfg[k].cull));
            if (k == 0) {
                continue;
            }
            ENSURE(sim_backend_read_state(b[k], &s, NULL, &err) == SIM_OK);
            ENSURE(sim_backend_set_state(probe, &s, &err) == SIM_OK);
            uint64_t na, nb;
            sim_body_pair *pa = contacts_of(b[k], &na), *pb = contacts_of(probe, &nb);
            mismatches += !same_pairs(pa, na, pb, nb);
            contacts = nb;
            free(pa);
            free(pb);
        }
    }
    /* trajectories: the culled runs against the full sweep, after 40 steps */
    gpu_snapshot s0 = snapshot(b[0], n);
    for (int k = 1; ok && k < 5; ++k) {
        gpu_snapshot sk = snapshot(b[k], n);
        const gpu_err x = gpu_compare_pos(&sk.state, &s0.state, FLOOR);
        drift = fmax(drift, x.max_abs / sc.p.box_half);
        gpu_snapshot_free(&sk);
    }
    gpu_snapshot_free(&s0);
    printf("  40 steps of collide N=%u: touching sets equal the full sweep's (%d mismatches, %llu "
           "contacts at the end); re-sorts %d / %d / %d; positions vs the full sweep within "
           "%.1e box_half\n",
           n, mismatches, (unsigned long long)contacts, sorts[1], sorts[2], sorts[3], drift);
    ENSURE(mismatches == 0);
    ENSURE(contacts > n / 4);
    /* Sorted at creation, then before every step after the first (39), every 7th, never. */
    ENSURE(sorts[1] >= 39 && sorts[2] >= 40 / 7 && sorts[3] <= 2);
    ENSURE(drift <= 4.0 * 1e-6 * 40); /* test_gpu_backend: 4 x 1e-6 box_half per step */
    sim_state_free(&s);
    for (int k = 0; k < 5; ++k) {
        sim_backend_destroy(b[k]);
    }
    sim_backend_destroy(probe);
    scene_free(&sc);
}

/* ---- a periodic box: tiles whose bodies crossed a face since the last sort ---- */

/* A touching lattice filling the period on x and z (32 x 32 sites 1 m apart, radius 0.52 m: every
 * site touches its neighbours, across the faces too; 16 layers 1.2 m apart, which do not touch,
 * so nothing expands) slides along +x at 5 m/s,
 * sorted once and never again, so the tiles at the face at +x take turns holding bodies on both
 * sides of it (cull.h: their boxes are of the images nearest each tile's first body, marked, and
 * swept with per-pair images; pair_kernels.cu's pair_shift). Culled tiles in one and two passes
 * and full lists give, at every frame, the touching pairs of the unculled sweep at the same
 * state; the tile pairs stay those of the first frame and nothing re-sorts. */
static void test_periodic_wrapped(void) {
    const double h = 16.0;
    const uint32_t side = 32, layers = 16, n = side * side * layers;
    sim_state st;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&st, n, &err) == SIM_OK);
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t ix = i % side, iz = i / side % side, iy = i / side / side;
        st.pos[i] = (sim_vec4d){-h + 0.5 + ix, 1.2 * (iy - 7.5), -h + 0.5 + iz, 0.52};
        st.vel[i] = (sim_vec4d){5.0, 0.0, 0.0, 1.0};
    }
    sim_params p = sim_params_default();
    p.box_half = h;
    p.periodic = 5;
    p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    p.dt = 1e-3;
    p.steps_per_frame = 10;
    const cull_path *paths = cull_paths;
    sim_backend_config pc = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_LTM, 32, 0, 0);
    sim_params pp = p;
    pp.skin.value = 0.0;
    pp.skin.set = 1;
    sim_backend *probe = NULL;
    ENSURE_MSG(sim_backend_create(&pc, &pp, &st, &probe, &err) == SIM_OK, "%s", err.message);
    sim_state now;
    ENSURE(sim_state_alloc(&now, n, &err) == SIM_OK);
    for (size_t k = 0; probe != NULL && k < sizeof cull_paths / sizeof cull_paths[0]; ++k) {
        sim_params q = p;
        q.skin.value = paths[k].skin;
        q.skin.set = 1;
        sim_backend_config c =
            config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_LTM, 32, paths[k].levels, 1000000);
        sim_backend *b = NULL;
        ENSURE_MSG(sim_backend_create(&c, &q, &st, &b, &err) == SIM_OK, "%s", err.message);
        if (b == NULL) {
            continue;
        }
        uint64_t contacts = 0;
        int mismatches = 0;
        tile_pair_watch w = {0, 0, 0};
        const int frames = 36; /* 1.8 m along x: every tile at the face has straddled it */
        for (int f = 0; f < frames; ++f) {
            sim_frame_timing t;
            ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s", err.message);
            tile_pair_watch_frame(&w, &t, f, &paths[k]);
            ENSURE(sim_backend_read_state(b, &now, NULL, &err) == SIM_OK);
            ENSURE(sim_backend_set_state(probe, &now, &err) == SIM_OK);
            uint64_t na, nb;
            sim_body_pair *pa = contacts_of(b, &na), *pb = contacts_of(probe, &nb);
            mismatches += !same_pairs(pa, na, pb, nb);
            contacts = nb;
            free(pa);
            free(pb);
        }
        printf("  periodic lattice N=%u, %s: %d frames, %d mismatches (%llu contacts); tile pairs "
               "%llu at the sort, at most %llu after; %d re-sorts\n",
               n, paths[k].name, frames, mismatches, (unsigned long long)contacts,
               (unsigned long long)w.first, (unsigned long long)w.most, w.sorts);
        ENSURE(mismatches == 0 && contacts >= n); /* 2n while the lattice holds */
        tile_pair_watch_check(&w, &paths[k]);
        sim_backend_destroy(b);
    }
    sim_backend_destroy(probe);
    sim_state_free(&now);
    sim_state_free(&st);
}

/* ---- lists that overflow ---- */

/* Culling turned on at run time with lists of 16 entries: the first culled step finds far more
 * tile (and super) pairs, sweeps the whole simplex instead, says so, and the lists grow; the
 * forces are the full sweep's all along. Same at set-up (F_0 through the fallback). */
static void test_overflow(void) {
    const uint32_t n = 40000;
    scene sc = make_scene("pile", n, 21u);
    sc.p.steps_per_frame = 3;
    for (int levels = 1; levels <= 2; ++levels) {
        sim_backend_config c = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_LTM, 64, levels, 0);
        sim_backend_tuning small = *c.tuning;
        small.cull_capacity = 16;
        c.tuning = &small;
        sim_backend_config cf = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_LTM, 64, 0, 0);
        sim_backend *b = make(&c, &sc), *full = make(&cf, &sc);
        if (b == NULL || full == NULL) {
            sim_backend_destroy(b);
            sim_backend_destroy(full);
            continue;
        }
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t, tf;
        ENSURE(sim_backend_set_cull(b, 1, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(full, &tf, &err) == SIM_OK);
        printf("  levels %d, lists of 16: %d of 3 steps swept the whole simplex, then %llu tile "
               "pairs\n",
               levels, t.cull_fallback_steps, (unsigned long long)t.tile_pairs);
        ENSURE(t.culled && t.cull_fallback_steps >= 1 && t.tile_pairs > 16 && !t.cull_capped);
        gpu_snapshot a = snapshot(b, n), r = snapshot(full, n);
        forces_agree("overflowed list", &a, &r, n, TOL_F_BODY);
        gpu_snapshot_free(&a);
        gpu_snapshot_free(&r);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(t.cull_fallback_steps == 0); /* grown */
        uint64_t na, nb;
        sim_body_pair *pa = contacts_of(b, &na);
        sim_state s;
        (void)sim_state_alloc(&s, n, &err);
        ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
        ENSURE(sim_backend_set_state(full, &s, &err) == SIM_OK);
        sim_body_pair *pb = contacts_of(full, &nb);
        ENSURE(same_pairs(pa, na, pb, nb));
        free(pa);
        free(pb);
        sim_state_free(&s);
        sim_backend_destroy(b);
        /* at set-up: F_0 through the fallback */
        c.cull = 1;
        b = make(&c, &sc);
        if (b != NULL) {
            ENSURE(sim_backend_set_state(full, &sc.s, &err) == SIM_OK);
            gpu_snapshot a0 = snapshot(b, n), r0 = snapshot(full, n);
            forces_agree("overflowed list at set-up", &a0, &r0, n, TOL_F_BODY);
            gpu_snapshot_free(&a0);
            gpu_snapshot_free(&r0);
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.cull_fallback_steps == 0);
        }
        sim_backend_destroy(b);
        sim_backend_destroy(full);
    }
    scene_free(&sc);
}

/* ---- the user's order ---- */

/* After sorted steps: read_state, the host export and the device export agree body by body,
 * and the culled run's bodies are the full sweep's (same index, same place within tolerance). */
static void test_user_order(void) {
    const uint32_t n = 10007;
    scene sc = make_scene("gas", n, 8u);
    sc.p.steps_per_frame = 2;
    const sim_backend_config c = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_RM, 64, 0, 1);
    const sim_backend_config cf = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_RM, 64, 0, 0);
    sim_backend *b = make(&c, &sc), *full = make(&cf, &sc);
    sim_vec4f *h_pos = malloc(n * sizeof *h_pos), *h_pos2 = malloc(n * sizeof *h_pos2);
    float *h_speed = malloc(n * sizeof *h_speed), *h_speed2 = malloc(n * sizeof *h_speed2);
    sim_vec4f *d_pos = NULL;
    float *d_speed = NULL;
    ENSURE(cudaMalloc((void **)&d_pos, n * sizeof *d_pos) == cudaSuccess);
    ENSURE(cudaMalloc((void **)&d_speed, n * sizeof *d_speed) == cudaSuccess);
    if (b != NULL && full != NULL && d_pos != NULL && d_speed != NULL) {
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        for (int f = 0; f < 3; ++f) {
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(full, &t, &err) == SIM_OK);
        }
        gpu_snapshot s = snapshot(b, n), r = snapshot(full, n);
        ENSURE(sim_backend_export_positions(b, h_pos, h_speed, 0, &err) == SIM_OK);
        ENSURE(sim_backend_export_positions(b, d_pos, d_speed, 1, &err) == SIM_OK);
        ENSURE(cudaMemcpy(h_pos2, d_pos, n * sizeof *d_pos, cudaMemcpyDeviceToHost) == cudaSuccess);
        ENSURE(cudaMemcpy(h_speed2, d_speed, n * sizeof *d_speed, cudaMemcpyDeviceToHost) ==
               cudaSuccess);
        int bad = 0;
        for (uint32_t i = 0; i < n && s.force != NULL; ++i) {
            const sim_vec4d q = s.state.pos[i], v = s.state.vel[i];
            const double sp = sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
            bad += h_pos[i].x != (float)q.x || h_pos[i].y != (float)q.y ||
                   h_pos[i].z != (float)q.z || h_pos[i].w != (float)q.w;
            bad += memcmp(&h_pos[i], &h_pos2[i], sizeof h_pos[i]) != 0;
            bad += fabs(h_speed[i] - sp) > 1e-6 * (sp + 1e-3) || h_speed2[i] != h_speed[i];
            bad += q.w != sc.s.pos[i].w || v.w != sc.s.vel[i].w; /* radius, mass: the same body */
        }
        ENSURE_MSG(bad == 0, "%d mismatches between read_state and the exports", bad);
        const gpu_err x = gpu_compare_pos(&s.state, &r.state, FLOOR);
        ENSURE_MSG(x.max_abs <= 4.0 * 1e-6 * sc.p.box_half * 6, "positions differ by %.3g m",
                   x.max_abs);
        forces_agree("after 6 sorted steps", &s, &r, n, TOL_F_BODY);
        printf("  sorted every step: read_state, host and device exports in the user's order "
               "(%d mismatches); positions vs the full sweep within %.1e m\n",
               bad, x.max_abs);
        gpu_snapshot_free(&s);
        gpu_snapshot_free(&r);
    }
    cudaFree(d_pos);
    cudaFree(d_speed);
    free(h_pos);
    free(h_pos2);
    free(h_speed);
    free(h_speed2);
    sim_backend_destroy(b);
    sim_backend_destroy(full);
    scene_free(&sc);
}

/* A body blown up in a sorted backend is named by the user's index. */
static void test_unstable_index(void) {
    const uint32_t n = 5000, victim = 4321;
    scene sc = make_scene("gas", n, 4u);
    sc.s.vel[victim].x = 1e5; /* 20 m per step: out of the box in the first step */
    sc.p.dt = 2e-4;
    const sim_backend_config c = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_LTM, 64, 0, 0);
    sim_backend *b = make(&c, &sc);
    if (b != NULL) {
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        const sim_status st = sim_backend_run_frame(b, &t, &err);
        char body[32];
        snprintf(body, sizeof body, "body %u ", victim);
        printf("  %s\n", err.message);
        ENSURE(st == SIM_UNSTABLE && strstr(err.message, body) != NULL);
    }
    sim_backend_destroy(b);
    scene_free(&sc);
}

/* ---- the full sweep with culling asked for; energies; the report ---- */

static void test_full_energy_report(void) {
    const uint32_t n = 20001;
    scene sc = make_scene("pile", n, 5u);
    sc.p.steps_per_frame = 4;
    sim_backend_config c = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_FULL, 64, 0, 2);
    sim_backend *b = make(&c, &sc);
    const sim_backend_config cf = config(SIM_BACKEND_CUDA, 0, SIM_PAIR_MAP_LTM, 64, 0, 0);
    sim_backend *full = make(&cf, &sc);
    if (b == NULL || full == NULL) {
        sim_backend_destroy(b);
        sim_backend_destroy(full);
        scene_free(&sc);
        return;
    }
    sim_error err = {SIM_OK, ""};
    sim_frame_timing t;
    sim_cull_info info;
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    sim_backend_cull_info(b, &info);
    ENSURE(!t.culled && t.sorts == 0 && t.sort_ms == 0.0 && !info.active && info.plan == NULL);
    uint64_t na, nb;
    sim_body_pair *pa = contacts_of(b, &na);
    sim_state s;
    (void)sim_state_alloc(&s, n, &err);
    ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
    ENSURE(sim_backend_set_state(full, &s, &err) == SIM_OK);
    sim_body_pair *pb = contacts_of(full, &nb);
    ENSURE(same_pairs(pa, na, pb, nb));
    free(pa);
    free(pb);
    /* a map again: culled, sorted every second step */
    ENSURE(sim_backend_set_maps(b, SIM_PAIR_MAP_UTM, SIM_TRIPLET_MAP_TETRA, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    sim_backend_cull_info(b, &info);
    const uint64_t tiles = (n + 63) / 64;
    ENSURE(t.culled && t.sorts == 2 && t.sort_ms > 0.0 && t.cull_ms > 0.0 && info.active);
    ENSURE(t.tile_pairs_total == tiles * (tiles + 1) / 2 && t.pair_blocks == t.tile_pairs);
    ENSURE(info.plan != NULL && t.cull_blocks == info.plan->blocks);
    sim_tile2 *pairs = malloc(t.tile_pairs * sizeof *pairs);
    uint64_t count = 0;
    ENSURE(sim_backend_tile_pairs(b, pairs, t.tile_pairs, &count, &err) == SIM_OK);
    int bad = 0, diagonal = 0;
    for (uint64_t k = 0; k < count && k < t.tile_pairs; ++k) {
        bad += pairs[k].j > pairs[k].i || pairs[k].i >= tiles;
        diagonal += pairs[k].i == pairs[k].j;
    }
    ENSURE(count == t.tile_pairs && bad == 0 && diagonal == (int)tiles);
    printf("  pile N=%u: %llu of %llu tile pairs interact; culling %llu blocks (%llu wasted); "
           "sort %.3f cull %.3f pairs %.3f ms per step\n",
           n, (unsigned long long)count, (unsigned long long)t.tile_pairs_total,
           (unsigned long long)t.cull_blocks, (unsigned long long)t.cull_blocks_wasted,
           t.sort_ms / t.steps, t.cull_ms / t.steps, t.pair_ms / t.steps);
    free(pairs);
    /* energies at the same state: culled list vs the full sweep */
    ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
    ENSURE(sim_backend_set_state(full, &s, &err) == SIM_OK);
    sim_energy e, e0;
    ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
    ENSURE(sim_backend_energy(full, &e0, &err) == SIM_OK);
    ENSURE_MSG(fabs(e.contact - e0.contact) <= 1e-5 * e0.contact && e0.contact > 0.0,
               "contact energy culled %.9g, full %.9g", e.contact, e0.contact);
    ENSURE(fabs(e.kinetic - e0.kinetic) <= 1e-5 * e0.kinetic);
    sim_state_free(&s);
    sim_backend_destroy(b);
    sim_backend_destroy(full);
    scene_free(&sc);
}

/* Small, for compute-sanitizer (memcheck, racecheck, synccheck): one and two passes, a sort per
 * step, an overflowing list, energies, contacts, both exports, a toggle. */
static void test_sanitizer_small(void) {
    const uint32_t n = 3001;
    scene sc = make_scene("collide", n, 2u);
    sc.p.steps_per_frame = 2;
    for (int levels = 1; levels <= 2; ++levels) {
        sim_backend_config c = config(SIM_BACKEND_CUDA, 1, SIM_PAIR_MAP_REC, 32, levels, 1);
        sim_backend_tuning small = *c.tuning;
        small.cull_capacity = levels == 2 ? 8 : 0;
        c.tuning = &small;
        sim_backend *b = make(&c, &sc);
        if (b == NULL) {
            continue;
        }
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        sim_energy e;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
        uint64_t count;
        sim_body_pair *p = contacts_of(b, &count);
        free(p);
        sim_vec4f *h_pos = malloc(n * sizeof *h_pos);
        float *h_speed = malloc(n * sizeof *h_speed);
        ENSURE(sim_backend_export_positions(b, h_pos, h_speed, 0, &err) == SIM_OK);
        ENSURE(sim_backend_set_cull(b, 0, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && !t.culled);
        ENSURE(sim_backend_set_cull(b, 1, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.culled);
        free(h_pos);
        free(h_speed);
        sim_backend_destroy(b);
    }
    scene_free(&sc);
}

static const ensure_test tests[] = {
    {"sanitizer_small", test_sanitizer_small},
    {"scenes", test_scenes},
    {"over_time", test_over_time},
    {"overflow", test_overflow},
    {"user_order", test_user_order},
    {"unstable_index", test_unstable_index},
    {"full_energy_report", test_full_energy_report},
    {"periodic_wrapped", test_periodic_wrapped},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
