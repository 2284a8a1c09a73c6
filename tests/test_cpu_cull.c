/* SPDX-License-Identifier: MIT
 * nbsim — culling on the CPU reference (sim/cull/cull.h, sim/cpu/cpu_cull.c): the Morton key,
 * the float box margin against the kernels' own contact test, and the culled pipeline against
 * the full sweep: the same set of touching pairs (exactly) and the same forces (summation order
 * only) on gas, pile and collide scenes made dense, with bodies on and past the walls, partial
 * last tiles, every map, every tile size, one and two passes, after re-sorts, culling toggled. */
#include "nbsim/internal/backend.h"
#include "cull/cull.h"
#include "physics/physics.h"
#include "nbsim/scene.h"

#include "ensure.h"
#include "test_backend_util.h"
#include "test_cull_scenes.h"
#include "test_rng.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 7;
static double rnd(double lo, double hi) {
    return test_rnd(&rng_state, lo, hi);
}

/* ---- the key ---- */

static void test_morton(void) {
    ENSURE(sim_morton_spread(0x3ffu) == 0x09249249u);
    ENSURE(sim_morton_spread(1u) == 1u && sim_morton_spread(2u) == 8u);
    const float bh = 10.0f, scale = (float)SIM_MORTON_CELLS / (2.0f * bh);
    ENSURE(sim_morton_key(-bh, -bh, -bh, bh, scale) == 0u);
    ENSURE(sim_morton_key(bh, bh, bh, bh, scale) == (1u << SIM_MORTON_KEY_BITS) - 1u);
    /* outside the box and NaN clamp to the grid */
    ENSURE(sim_morton_key(-1e30f, 0.0f, 0.0f, bh, scale) ==
           sim_morton_key(-bh, 0.0f, 0.0f, bh, scale));
    ENSURE(sim_morton_key(1e30f, 1e30f, 1e30f, bh, scale) == (1u << SIM_MORTON_KEY_BITS) - 1u);
    ENSURE(sim_morton_cell(NAN, bh, scale) == 0u);
    /* monotone along each axis with the others fixed */
    int ok = 1;
    for (int a = 0; a < 3; ++a) {
        uint32_t prev = 0;
        for (int k = 0; k < 1000; ++k) {
            float x[3] = {1.0f, -2.0f, 3.0f};
            x[a] = -bh + 2.0f * bh * (float)k / 1000.0f;
            const uint32_t key = sim_morton_key(x[0], x[1], x[2], bh, scale);
            ok &= k == 0 || key >= prev;
            prev = key;
        }
    }
    ENSURE(ok);
}

/* ---- the margin: the box test never rejects a pair the float contact test accepts ---- */

/* The kernels' test, as nvcc compiles it (FMA: d2 = fma(dz, dz, fma(dx, dx, dy * dy))) and
 * without contraction; the argument in cull.h covers any association. */
static int touching_f(const float pi[4], const float pj[4], int fma_order) {
    const float dx = pj[0] - pi[0], dy = pj[1] - pi[1], dz = pj[2] - pi[2], rs = pi[3] + pj[3];
    const float d2 = fma_order ? fmaf(dz, dz, fmaf(dx, dx, dy * dy)) : dx * dx + dy * dy + dz * dz;
    return d2 < rs * rs;
}

/* A one-body tile's box as tile_boxes_kernel computes it, with or without the margin. */
static sim_cull_box body_box(const float p[4], int margin) {
    sim_cull_box b;
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = p[a] - p[3];
        hi[a] = p[a] + p[3];
        if (margin) {
            const float m = sim_cull_margin_f(lo[a], hi[a]);
            lo[a] -= m;
            hi[a] += m;
        }
    }
    b.lo = (sim_vec4f){lo[0], lo[1], lo[2], 0.0f};
    b.hi = (sim_vec4f){hi[0], hi[1], hi[2], 0.0f};
    return b;
}

static void test_margin(void) {
    rng_state = 11;
    static const double scales[] = {1.0, 37.0, 1e3, 3e4, 1e6};
    long touching = 0, missed = 0, missed_unmargined = 0;
    for (int trial = 0; trial < 400000; ++trial) {
        const double s = scales[trial % 5];
        /* radii from 1e-3 to 1 of the coordinate scale: tiny radii far out are the hard case */
        const double r0 = s * pow(10.0, rnd(-3.0, 0.0));
        float pi[4], pj[4];
        pi[3] = (float)(r0 * rnd(0.5, 1.0));
        pj[3] = (float)(r0 * rnd(0.5, 1.0));
        double dir[3], len = 0.0;
        for (int a = 0; a < 3; ++a) {
            /* often axis-aligned: the overlap test is per axis */
            dir[a] = trial % 3 == 0 && a != trial % 7 % 3 ? 0.0 : rnd(-1.0, 1.0);
            len += dir[a] * dir[a];
        }
        len = len > 0.0 ? sqrt(len) : 1.0;
        const double d = ((double)pi[3] + (double)pj[3]) * (1.0 + rnd(-3e-7, 3e-7));
        for (int a = 0; a < 3; ++a) {
            pi[a] = (float)(s * rnd(-1.0, 1.0));
            pj[a] = (float)((double)pi[a] + d * dir[a] / len);
        }
        for (int fma_order = 0; fma_order <= 1; ++fma_order) {
            if (!touching_f(pi, pj, fma_order)) {
                continue;
            }
            ++touching;
            sim_cull_box a = body_box(pi, 1), b = body_box(pj, 1);
            missed += !sim_cull_overlap(&a, &b);
            a = body_box(pi, 0);
            b = body_box(pj, 0);
            missed_unmargined += !sim_cull_overlap(&a, &b);
        }
    }
    printf("  %ld touching float pairs at the edge of contact: %ld rejected by the boxes "
           "(without the margin: %ld)\n",
           touching, missed, missed_unmargined);
    ENSURE(touching > 100000);
    ENSURE(missed == 0);
    ENSURE(missed_unmargined == 0); /* monotone rounding: the margin is only insurance */
}

static sim_backend_config config(int cull, int map, uint32_t tile, int levels, int sort_every) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.pair_map = map;
    c.tile = tile;
    c.cull = cull;
    c.cull_levels = levels;
    c.sort_every = sort_every;
    c.cpu_threads = 1; /* CI runs tests side by side on few cores (test_cpu_backend: two) */
    return c;
}

static sim_backend *make(const sim_backend_config *c, const scene *sc) {
    return test_backend_make(c, &sc->p, &sc->s, sc->name);
}

/* Per body: the sum of |F| of its contacts, walls and gravity (the rounding yardstick). */
static double *force_scale(const scene *sc) {
    const uint32_t n = sc->s.n;
    const sim_vec4d *pos = sc->s.pos, *vel = sc->s.vel;
    double *scale = calloc(n, sizeof *scale);
    const sim_physics ph = sim_physics_from_params(&sc->p);
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec3d w = sim_body_force_d(pos[i], vel[i], &ph, NULL);
        scale[i] += fabs(w.x) + fabs(w.y) + fabs(w.z);
        for (uint32_t j = 0; j < i; ++j) {
            const sim_vec3d g = sim_contact_force_d(pos[i], vel[i], pos[j], vel[j], &ph, NULL);
            const double m = fabs(g.x) + fabs(g.y) + fabs(g.z);
            scale[i] += m;
            scale[j] += m;
        }
    }
    return scale;
}

/* Largest per-body difference relative to the body's force scale. */
static double force_diff(const sim_vec3d *a, const sim_vec3d *b, const double *scale, uint32_t n) {
    double worst = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double d = fabs(a[i].x - b[i].x) + fabs(a[i].y - b[i].y) + fabs(a[i].z - b[i].z);
        worst = fmax(worst, d / (scale[i] + 1e-300));
    }
    return worst;
}

/* One scene: the unculled backend and a brute-force loop give the reference set; each culled
 * configuration must give the same set and F_0 within 1e-12 of the force scale. */
static void scene_case(const char *kind, uint32_t n, const sim_backend_config *configs, int count) {
    scene sc = make_scene(kind, n, 5u + n);
    const sim_backend_config full = config(0, SIM_PAIR_MAP_BB, 64, 0, 0);
    sim_backend *ref = make(&full, &sc);
    uint64_t n_ref, n_brute;
    sim_body_pair *want = contacts_of(ref, &n_ref);
    sim_body_pair *brute = brute_contacts(NULL, &sc.s, &n_brute);
    ENSURE_MSG(same_pairs(want, n_ref, brute, n_brute),
               "%s N=%u: full sweep %llu pairs, brute %llu", kind, n, (unsigned long long)n_ref,
               (unsigned long long)n_brute);
    ENSURE_MSG(n_ref > n / 4, "%s N=%u: only %llu contacts", kind, n, (unsigned long long)n_ref);
    sim_vec3d *f_ref = test_backend_forces(ref, n);
    double *scale = force_scale(&sc);
    double worst = 0.0;
    uint64_t tiles_sum = 0, tiles_all = 0;
    for (int k = 0; k < count; ++k) {
        sim_backend *b = make(&configs[k], &sc);
        uint64_t got;
        sim_body_pair *have = contacts_of(b, &got);
        ENSURE_MSG(same_pairs(want, n_ref, have, got),
                   "%s N=%u map %s tile %u levels %d: culled %llu pairs, full sweep %llu", kind, n,
                   sim_pair_choice_name(configs[k].pair_map), configs[k].tile,
                   configs[k].cull_levels, (unsigned long long)got, (unsigned long long)n_ref);
        sim_vec3d *f = test_backend_forces(b, n);
        const double d = force_diff(f, f_ref, scale, n);
        free(f);
        ENSURE_MSG(d <= 1e-12, "%s N=%u map %s tile %u: F_0 differs by %.3g of its scale", kind, n,
                   sim_pair_choice_name(configs[k].pair_map), configs[k].tile, d);
        worst = fmax(worst, d);
        sim_frame_timing t;
        sim_error err;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(t.culled == 1 && t.tile_pairs > 0 && t.tile_pairs <= t.tile_pairs_total);
        tiles_sum += t.tile_pairs;
        tiles_all += t.tile_pairs_total;
        free(have);
        sim_backend_destroy(b);
    }
    printf("  %-8s N=%-5u %6llu touching pairs: %d culled configurations agree (F_0 within "
           "%.1e); tile pairs swept %.1f %%\n",
           kind, n, (unsigned long long)n_ref, count, worst,
           tiles_all ? 100.0 * (double)tiles_sum / (double)tiles_all : 0.0);
    free(want);
    free(brute);
    free(f_ref);
    free(scale);
    sim_backend_destroy(ref);
    sim_state_free(&sc.s);
}

/* Every map (paper variants too: at these sizes they are right), levels 1 and 2, tiles 32, 64,
 * 128, on every scene; N not a multiple of any tile. */
static void test_scenes(void) {
    sim_backend_config c[SIM_PAIR_MAP_COUNT + 8];
    int k = 0;
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        c[k++] = config(1, m, 64, 0, 0);
    }
    c[k++] = config(1, SIM_PAIR_MAP_BB, 32, 2, 0);
    c[k++] = config(1, SIM_PAIR_MAP_LTM, 32, 2, 0);
    c[k++] = config(1, SIM_PAIR_MAP_RM, 32, 2, 0);
    c[k++] = config(1, SIM_PAIR_MAP_REC, 64, 2, 0);
    c[k++] = config(1, SIM_PAIR_MAP_LTM, 128, 1, 0);
    c[k++] = config(1, SIM_PAIR_MAP_RB, 128, 2, 0);
    c[k++] = config(1, SIM_PAIR_MAP_UTM, 32, 1, 0);
    static const char *const kinds[] = {"gas", "pile", "collide", "walls"};
    static const uint32_t sizes[] = {1537, 3001};
    for (int s = 0; s < 4; ++s) {
        for (int z = 0; z < 2; ++z) {
            scene_case(kinds[s], sizes[z], c, k);
        }
    }
}

/* ---- over time: re-sorts, a stale order, culling toggled ---- */

/* The two blocks of `collide` crash into each other (5 m/s each, 1 mm per step): culled runs
 * that sort every step, every 7 steps, or never again, follow the full sweep's trajectory, and
 * at every frame their touching set equals the full sweep's at their own state. One toggles
 * culling every frame. */
static void test_over_time(void) {
    const uint32_t n = 2000;
    scene sc = make_scene("collide", n, 3u);
    sc.p.steps_per_frame = 10;
    sim_backend_config cfg[5] = {
        config(0, SIM_PAIR_MAP_LTM, 64, 0, 0), config(1, SIM_PAIR_MAP_LTM, 64, 0, 1),
        config(1, SIM_PAIR_MAP_RM, 32, 2, 7),  config(1, SIM_PAIR_MAP_BB, 64, 1, 1000000),
        config(1, SIM_PAIR_MAP_REC, 64, 0, 0),
    };
    sim_backend *b[5];
    for (int k = 0; k < 5; ++k) {
        b[k] = make(&cfg[k], &sc);
    }
    const sim_backend_config probe_cfg = config(0, SIM_PAIR_MAP_BB, 64, 0, 0);
    sim_backend *probe = make(&probe_cfg, &sc);
    sim_state s;
    sim_error err = {SIM_OK, ""};
    (void)sim_state_alloc(&s, n, &err);
    int sorts[5] = {0}, mismatches = 0;
    double drift = 0.0;
    uint64_t last_contacts = 0;
    for (int f = 0; f < 8; ++f) {
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
            drift = fmax(drift, test_backend_state_diff(b[0], b[k], n));
            /* the full sweep at exactly this backend's state */
            ENSURE(sim_backend_read_state(b[k], &s, NULL, &err) == SIM_OK);
            ENSURE(sim_backend_set_state(probe, &s, &err) == SIM_OK);
            uint64_t na, nb;
            sim_body_pair *pa = contacts_of(b[k], &na), *pb = contacts_of(probe, &nb);
            mismatches += !same_pairs(pa, na, pb, nb);
            last_contacts = nb;
            free(pa);
            free(pb);
        }
    }
    printf("  80 steps of collide: touching sets equal the full sweep's (%d mismatches; %llu "
           "contacts at the end); re-sorts %d / %d / %d; state drift vs the full sweep %.1e\n",
           mismatches, (unsigned long long)last_contacts, sorts[1], sorts[2], sorts[3], drift);
    ENSURE(mismatches == 0);
    ENSURE(last_contacts > n / 4);
    ENSURE(sorts[1] == 80 && sorts[2] >= 80 / 7 && sorts[3] <= 2);
    ENSURE(drift <= 1e-9);
    sim_state_free(&s);
    for (int k = 0; k < 5; ++k) {
        sim_backend_destroy(b[k]);
    }
    sim_backend_destroy(probe);
    sim_state_free(&sc.s);
}

/* ---- what the backend reports ---- */

static void test_report(void) {
    const uint32_t n = 5000; /* 79 tiles of 64 */
    scene sc = make_scene("pile", n, 9u);
    sc.p.steps_per_frame = 4;
    sc.p.skin.value = 0.0; /* the culled tile sweep, whose counts this test adds up */
    sc.p.skin.set = 1;
    sim_backend_config c = config(1, SIM_PAIR_MAP_RB, 64, 0, 2);
    sim_backend *b = make(&c, &sc);
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    const uint64_t tiles = (n + 63) / 64;
    ENSURE(t.culled == 1 && t.cull_levels == 1 && t.sorts == 2);
    ENSURE(t.tile_pairs_total == tiles * (tiles + 1) / 2);
    ENSURE(t.pair_blocks == t.tile_pairs && t.pair_blocks_wasted == 0);
    ENSURE(t.cull_blocks > 0 && t.cull_blocks >= t.cull_blocks_wasted);
    ENSURE(t.cull_fallback_steps == 0 && t.cull_capped == 0 && t.super_pairs == 0);
    ENSURE(t.sort_ms >= 0.0 && t.cull_ms > 0.0 && t.pair_ms > 0.0 && t.step_ms >= t.pair_ms);
    sim_cull_info info;
    sim_backend_cull_info(b, &info);
    ENSURE(info.active && info.levels == 1 && info.tiles == tiles && info.items == tiles);
    ENSURE(info.plan != NULL && info.plan->n == (tiles + 15) / 16 &&
           info.plan->blocks == t.cull_blocks);
    sim_tile2 *pairs = malloc(t.tile_pairs * sizeof *pairs);
    uint64_t count = 0;
    ENSURE(sim_backend_tile_pairs(b, pairs, t.tile_pairs, &count, &err) == SIM_OK);
    ENSURE(count == t.tile_pairs);
    int bad = 0, diagonal = 0;
    for (uint64_t k = 0; k < count; ++k) {
        bad += pairs[k].j > pairs[k].i || pairs[k].i >= tiles;
        diagonal += pairs[k].i == pairs[k].j;
    }
    ENSURE(bad == 0 && diagonal == (int)tiles); /* every tile overlaps itself */
    /* the contact sweep's counts, per step (the frame's mean; here a frame of one step): tile x
     * tile tests per swept tile pair, and of those the touching pairs, as the contacts hook
     * finds them at the positions the step ended with */
    sim_params one = sc.p;
    one.steps_per_frame = 1;
    sim_frame_timing t1;
    uint64_t touching = 0;
    ENSURE(sim_backend_set_params(b, &one, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t1, &err) == SIM_OK);
    ENSURE(sim_backend_contacts(b, NULL, 0, &touching, &err) == SIM_OK);
    ENSURE_MSG(t1.candidate_tests == t1.tile_pairs * 64u * 64u && t1.contacts == touching &&
                   touching > 0,
               "culled: %llu tests, %llu contacts; want %llu, %llu",
               (unsigned long long)t1.candidate_tests, (unsigned long long)t1.contacts,
               (unsigned long long)t1.tile_pairs * 64u * 64u, (unsigned long long)touching);
    printf("  pile N=%u: %llu of %llu tile pairs interact, %llu culling blocks (%llu wasted)\n", n,
           (unsigned long long)count, (unsigned long long)t.tile_pairs_total,
           (unsigned long long)t.cull_blocks, (unsigned long long)t.cull_blocks_wasted);
    /* energies: the culled contact potential is the full sweep's */
    sim_backend_config c0 = config(0, SIM_PAIR_MAP_RB, 64, 0, 0);
    sim_backend *b0 = make(&c0, &sc);
    ENSURE(sim_backend_run_frame(b0, &t, &err) == SIM_OK); /* the same steps as b: 4, then 1 */
    ENSURE(sim_backend_set_params(b0, &one, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b0, &t, &err) == SIM_OK);
    sim_energy e, e0;
    ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK &&
           sim_backend_energy(b0, &e0, &err) == SIM_OK);
    ENSURE_NEAR(e.contact, e0.contact, 1e-9 * e0.contact);
    ENSURE(e0.contact > 0.0);
    ENSURE(sim_backend_set_cull(b, 0, &err) == SIM_OK);
    sim_backend_cull_info(b, &info);
    ENSURE(!info.active && info.plan == NULL);
    ENSURE(sim_backend_tile_pairs(b, pairs, t.tile_pairs, &count, &err) == SIM_OK && count == 0);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && !t.culled && t.sort_ms == 0.0);
    /* unculled: the plan's tile pairs, tile x tile each; the brute-force sweep counts no
     * contacts */
    ENSURE_MSG(t.candidate_tests == tiles * (tiles + 1) / 2 * 64u * 64u && t.contacts == 0,
               "unculled: %llu tests, %llu contacts; want %llu, 0",
               (unsigned long long)t.candidate_tests, (unsigned long long)t.contacts,
               (unsigned long long)(tiles * (tiles + 1) / 2 * 64u * 64u));
    /* two passes when asked: super-tiles of 16 tiles */
    c.cull_levels = 2;
    sim_backend *b2 = make(&c, &sc);
    ENSURE(sim_backend_run_frame(b2, &t, &err) == SIM_OK);
    sim_backend_cull_info(b2, &info);
    ENSURE(t.cull_levels == 2 && t.super_pairs > 0 && info.super_tiles == (tiles + 15) / 16);
    ENSURE(info.items == info.super_tiles && info.plan->n == 1);
    free(pairs);
    sim_backend_destroy(b);
    sim_backend_destroy(b0);
    sim_backend_destroy(b2);
    sim_state_free(&sc.s);
}

static void test_refusals(void) {
    scene sc = make_scene("gas", 100, 1u);
    sim_backend *b = NULL;
    sim_error err = {SIM_OK, ""};
    sim_backend_config c = config(2, SIM_PAIR_MAP_LTM, 64, 0, 0);
    ENSURE(sim_backend_create(&c, &sc.p, &sc.s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    c = config(1, SIM_PAIR_MAP_LTM, 64, 3, 0);
    ENSURE(sim_backend_create(&c, &sc.p, &sc.s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    ENSURE(strstr(err.message, "levels") != NULL);
    c = config(1, SIM_PAIR_MAP_LTM, 64, 0, -1);
    ENSURE(sim_backend_create(&c, &sc.p, &sc.s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    ENSURE(sim_backend_config_default().cull == 1);
    sim_state_free(&sc.s);
}

static const ensure_test tests[] = {
    {"morton", test_morton},       {"margin", test_margin}, {"scenes", test_scenes},
    {"over_time", test_over_time}, {"report", test_report}, {"refusals", test_refusals},
};

ENSURE_MAIN(tests)
