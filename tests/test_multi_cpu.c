/* SPDX-License-Identifier: MIT
 * nbsim — the multi-GPU path without a GPU: the CPU reference split over G ranks that are threads
 * of one process (the multi backend, work_split.h shares, the host group's all-reduce) gives the
 * forces, trajectory and energies of the CPU reference alone, up to the order of the double
 * sums; its ranks stay bit-identical; culled lists split by rows add up to the whole list. */
#include "step/backend_impl.h"
#include "physics/physics.h"

#include "ensure.h"
#include "test_backend_util.h"
#include "test_rng.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 7;

static sim_params params_for(double half, int triplets) {
    sim_params p = sim_params_default();
    p.box_half = half;
    p.gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p.triplets = triplets;
    p.atm_nu = triplets ? 1e-3 : 0.0;
    p.steps_per_frame = 3;
    return p;
}

static sim_backend_config config_for(int pair_map, int triplet_map, int cull, int levels, int g) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.pair_map = pair_map;
    c.triplet_map = (sim_triplet_map)triplet_map;
    c.tile = 32;
    c.cpu_threads = 1;
    c.cull = cull;
    c.cull_levels = levels;
    c.sort_every = 2;
    if (g > 1) {
        c.multi.world = g;
        c.multi.local = g;
    }
    return c;
}

typedef struct {
    sim_state st;
    sim_vec3d *f;
} snapshot;

static snapshot take(sim_backend *b, uint32_t n) {
    snapshot s;
    sim_error err;
    ENSURE(sim_state_alloc(&s.st, n, &err) == SIM_OK);
    s.f = calloc(n, sizeof *s.f);
    ENSURE(sim_backend_read_state(b, &s.st, s.f, &err) == SIM_OK);
    return s;
}

static void drop(snapshot *s) {
    sim_state_free(&s->st);
    free(s->f);
}

/* Largest difference of positions and forces, relative to the largest force / extent. */
static double worst(const snapshot *a, const snapshot *b) {
    double fmax = 1e-300, d = 0.0;
    for (uint32_t i = 0; i < a->st.n; ++i) {
        fmax = fmax > fabs(a->f[i].x) ? fmax : fabs(a->f[i].x);
        fmax = fmax > fabs(a->f[i].y) ? fmax : fabs(a->f[i].y);
    }
    for (uint32_t i = 0; i < a->st.n; ++i) {
        const double df =
            fabs(a->f[i].x - b->f[i].x) + fabs(a->f[i].y - b->f[i].y) + fabs(a->f[i].z - b->f[i].z);
        const double dp = fabs(a->st.pos[i].x - b->st.pos[i].x) +
                          fabs(a->st.pos[i].y - b->st.pos[i].y) +
                          fabs(a->st.pos[i].z - b->st.pos[i].z);
        d = d > df / fmax ? d : df / fmax;
        d = d > dp ? d : dp;
    }
    return d;
}

/* Alone vs G ranks: frames, forces, energies; ranks identical bit for bit. */
static void compare_run(const sim_state *s, const sim_params *p, int pair_map, int triplet_map,
                        int cull, int levels, int g) {
    sim_error err;
    sim_backend *one = NULL, *many = NULL;
    sim_backend_config c1 = config_for(pair_map, triplet_map, cull, levels, 1);
    sim_backend_config cg = config_for(pair_map, triplet_map, cull, levels, g);
    ENSURE_MSG(sim_backend_create(&c1, p, s, &one, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_create(&cg, p, s, &many, &err) == SIM_OK, "%s", err.message);
    if (one == NULL || many == NULL) {
        sim_backend_destroy(one);
        sim_backend_destroy(many);
        return;
    }
    for (int f = 0; f < 3; ++f) {
        sim_frame_timing t1, tg;
        ENSURE(sim_backend_run_frame(one, &t1, &err) == SIM_OK);
        ENSURE_MSG(sim_backend_run_frame(many, &tg, &err) == SIM_OK, "%s", err.message);
        ENSURE(tg.ranks == g && t1.ranks == 1);
        /* the ranks' shares of the contact sweep add up to the whole sweep's counts (each a
         * frame's mean per step, rounded down: within one per rank) */
        const uint64_t dt_ = tg.candidate_tests > t1.candidate_tests
                                 ? tg.candidate_tests - t1.candidate_tests
                                 : t1.candidate_tests - tg.candidate_tests;
        const uint64_t dc_ =
            tg.contacts > t1.contacts ? tg.contacts - t1.contacts : t1.contacts - tg.contacts;
        ENSURE_MSG(dt_ <= (uint64_t)g && dc_ <= (uint64_t)g,
                   "G %d: %llu tests, %llu contacts vs %llu, %llu alone", g,
                   (unsigned long long)tg.candidate_tests, (unsigned long long)tg.contacts,
                   (unsigned long long)t1.candidate_tests, (unsigned long long)t1.contacts);
        if (!cull) { /* the plan's tile pairs, tile x tile each, the same on every rank */
            const uint64_t tiles = (s->n + c1.tile - 1u) / c1.tile;
            ENSURE(t1.candidate_tests == tiles * (tiles + 1u) / 2u * c1.tile * c1.tile);
        }
        if (cull) { /* the rows of the ranks add up to the whole list */
            ENSURE_MSG(tg.tile_pairs == t1.tile_pairs, "%llu vs %llu",
                       (unsigned long long)tg.tile_pairs, (unsigned long long)t1.tile_pairs);
        }
        ENSURE(tg.triplet_culled == t1.triplet_culled);
        if (t1.triplet_culled && !t1.atm_lists) { /* so do the tile triples of their rows */
            ENSURE_MSG(tg.tile_triples == t1.tile_triples && t1.tile_triples > 0,
                       "tile triples %llu vs %llu", (unsigned long long)tg.tile_triples,
                       (unsigned long long)t1.tile_triples);
        }
        if (t1.atm_lists) { /* one rank sweeps the cut-off's lists; ranks their tile triples */
            ENSURE(!tg.atm_lists && tg.tile_triples > 0);
        }
    }
    snapshot a = take(one, s->n), b = take(many, s->n);
    const double d = worst(&a, &b);
    ENSURE_MSG(d < 1e-9, "%s/%s cull %d levels %d G %d: differs by %g",
               sim_pair_choice_name(pair_map), sim_triplet_map_name((sim_triplet_map)triplet_map),
               cull, levels, g, d);
    for (int k = 1; k < g; ++k) { /* every rank integrated the same sums the same way */
        snapshot r;
        ENSURE(sim_state_alloc(&r.st, s->n, &err) == SIM_OK);
        r.f = calloc(s->n, sizeof *r.f);
        ENSURE(sim_multi_read_rank(many, k, &r.st, r.f, &err) == SIM_OK);
        ENSURE_MSG(memcmp(r.st.pos, b.st.pos, s->n * sizeof *r.st.pos) == 0 &&
                       memcmp(r.st.vel, b.st.vel, s->n * sizeof *r.st.vel) == 0 &&
                       memcmp(r.f, b.f, s->n * sizeof *r.f) == 0,
                   "rank %d of %d is not bit-identical to rank 0", k, g);
        drop(&r);
    }
    sim_energy e1, eg;
    ENSURE(sim_backend_energy(one, &e1, &err) == SIM_OK);
    ENSURE(sim_backend_energy(many, &eg, &err) == SIM_OK);
    ENSURE_NEAR(eg.contact, e1.contact, 1e-9 * (fabs(e1.contact) + 1e-12));
    ENSURE_NEAR(eg.atm, e1.atm, 1e-9 * (fabs(e1.atm) + 1e-12));
    ENSURE_NEAR(eg.total, e1.total, 1e-9 * fabs(e1.total));
    drop(&a);
    drop(&b);
    sim_backend_destroy(one);
    sim_backend_destroy(many);
}

static void test_pairs_split(void) {
    sim_state s = test_random_state(&rng_state, 700, 7.0, 1.0);
    const sim_params p = params_for(7.5, 0);
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        if (sim_pair_map_is_paper_float((sim_pair_map)m)) {
            continue;
        }
        const int gs[] = {2, 3, 5};
        for (size_t k = 0; k < sizeof gs / sizeof gs[0]; ++k) {
            compare_run(&s, &p, m, SIM_TRIPLET_MAP_TETRA, 0, 0, gs[k]);
        }
    }
    sim_state_free(&s);
}

static void test_culled_split(void) {
    /* 2000 bodies, tile 32: 63 tiles, so the two-level cull has 4 super-tiles, ranks up to 4 own
     * whole super rows; 7 ranks leave some with nothing. */
    sim_state s = test_random_state(&rng_state, 2000, 10.0, 1.0);
    const sim_params p = params_for(10.5, 0);
    const int gs[] = {2, 4, 7};
    for (size_t k = 0; k < sizeof gs / sizeof gs[0]; ++k) {
        compare_run(&s, &p, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1, 1, gs[k]);
        compare_run(&s, &p, SIM_PAIR_MAP_RM, SIM_TRIPLET_MAP_TETRA, 1, 2, gs[k]);
    }
    sim_state_free(&s);
}

/* Neighbour lists split by rows, both kinds: forces as one backend's, the ranks' tests and
 * touching pairs adding up to one backend's; the contacts every rank's rows hold are the whole
 * set (a multi backend gathers them). A thin skin rebuilds often, 2 and 3 ranks. */
static void test_nlist_split(void) {
    uint64_t rng = 11; /* its own: the other tests' states stay what they were */
    sim_state s = test_random_state(&rng, 2000, 10.0, 3.0);
    sim_params p = params_for(10.5, 0);
    p.skin.value = 0.02;
    p.skin.set = 1;
    p.steps_per_frame = 20;
    const sim_nlist_kind kinds[2] = {SIM_NLIST_HALF, SIM_NLIST_FULL};
    for (int k = 0; k < 2; ++k) {
        for (int g = 2; g <= 3; ++g) {
            sim_error err;
            sim_backend_config c1 = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1, 2, 1);
            sim_backend_config cg = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1, 2, g);
            c1.nlist = cg.nlist = kinds[k];
            c1.sort_every = cg.sort_every = 7;
            sim_backend *one = NULL, *many = NULL;
            ENSURE(sim_backend_create(&c1, &p, &s, &one, &err) == SIM_OK);
            ENSURE_MSG(sim_backend_create(&cg, &p, &s, &many, &err) == SIM_OK, "%s", err.message);
            if (one == NULL || many == NULL) {
                sim_backend_destroy(one);
                sim_backend_destroy(many);
                continue;
            }
            for (int f = 0; f < 5; ++f) {
                sim_frame_timing t1, tg;
                ENSURE(sim_backend_run_frame(one, &t1, &err) == SIM_OK);
                ENSURE(sim_backend_run_frame(many, &tg, &err) == SIM_OK);
                ENSURE(t1.nlist && tg.nlist && t1.nlist_rebuilds > 0);
                /* means per step, each rank's rounded down: within a count per rank */
                const uint64_t dt = tg.candidate_tests > t1.candidate_tests
                                        ? tg.candidate_tests - t1.candidate_tests
                                        : t1.candidate_tests - tg.candidate_tests;
                const uint64_t dc = tg.contacts > t1.contacts ? tg.contacts - t1.contacts
                                                              : t1.contacts - tg.contacts;
                ENSURE_MSG(dt <= (uint64_t)g && dc <= (uint64_t)g && t1.contacts > 0,
                           "%s, %d ranks: tests %llu vs %llu, contacts %llu vs %llu",
                           sim_nlist_kind_name(kinds[k]), g, (unsigned long long)tg.candidate_tests,
                           (unsigned long long)t1.candidate_tests, (unsigned long long)tg.contacts,
                           (unsigned long long)t1.contacts);
            }
            uint64_t n1 = 0, ng = 0;
            sim_body_pair *a = malloc((1u << 16) * sizeof *a), *b = malloc((1u << 16) * sizeof *b);
            ENSURE(sim_backend_contacts(one, a, 1u << 16, &n1, &err) == SIM_OK);
            ENSURE(sim_backend_contacts(many, b, 1u << 16, &ng, &err) == SIM_OK);
            ENSURE(n1 == ng && n1 > 0);
            free(a);
            free(b);
            snapshot x = take(one, s.n), y = take(many, s.n);
            const double d = worst(&x, &y);
            ENSURE_MSG(d < 1e-9, "%s, %d ranks: differs by %g", sim_nlist_kind_name(kinds[k]), g,
                       d);
            drop(&x);
            drop(&y);
            sim_backend_destroy(one);
            sim_backend_destroy(many);
        }
    }
    sim_state_free(&s);
}

static void test_triplets_split(void) {
    sim_state s = test_random_state(&rng_state, 150, 6.0, 0.5);
    const sim_params p = params_for(6.5, 1);
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        if (sim_triplet_map_is_paper_float((sim_triplet_map)m)) {
            continue;
        }
        compare_run(&s, &p, SIM_PAIR_MAP_BB, m, 0, 0, 2);
        compare_run(&s, &p, SIM_PAIR_MAP_RB, m, 1, 0, 3);
    }
    sim_state_free(&s);
}

/* The ATM cut-off culled: each rank lists and sweeps the tile triples of its rows (I modulo the
 * ranks, triplet_cull.h); forces, energies and the count of tile triples are one rank's. */
static void test_culled_triplets_split(void) {
    /* 800 bodies: 25 triplet tiles, so 2, 3 and 4 ranks own rows of several lengths */
    sim_state s = test_random_state(&rng_state, 800, 6.0, 0.5);
    sim_params p = params_for(6.5, 1);
    p.atm_cutoff = 2.5;
    const int gs[] = {2, 3, 4};
    for (size_t k = 0; k < sizeof gs / sizeof gs[0]; ++k) {
        compare_run(&s, &p, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1, 1, gs[k]);
    }
    sim_state_free(&s);
}

/* Switching maps and culling mid-run reaches every rank; the culled contacts are the whole set. */
static void test_switches(void) {
    sim_state s = test_random_state(&rng_state, 900, 7.0, 1.0);
    const sim_params p = params_for(7.5, 0);
    sim_error err;
    sim_backend *one = NULL, *many = NULL;
    sim_backend_config c1 = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0, 0, 1);
    sim_backend_config cg = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0, 0, 3);
    ENSURE(sim_backend_create(&c1, &p, &s, &one, &err) == SIM_OK);
    ENSURE(sim_backend_create(&cg, &p, &s, &many, &err) == SIM_OK);
    sim_frame_timing t;
    for (int step = 0; step < 4 && one != NULL && many != NULL; ++step) {
        const int map = step % 2 ? SIM_PAIR_MAP_RM : SIM_PAIR_MAP_BB;
        ENSURE(sim_backend_set_maps(one, map, SIM_TRIPLET_MAP_RM, &err) == SIM_OK);
        ENSURE(sim_backend_set_maps(many, map, SIM_TRIPLET_MAP_RM, &err) == SIM_OK);
        ENSURE(sim_backend_set_cull(one, step >= 2, &err) == SIM_OK);
        ENSURE(sim_backend_set_cull(many, step >= 2, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(one, &t, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(many, &t, &err) == SIM_OK);
    }
    snapshot a = take(one, s.n), b = take(many, s.n);
    ENSURE_MSG(worst(&a, &b) < 1e-9, "after switches: %g", worst(&a, &b));
    uint64_t n1 = 0, ng = 0;
    sim_body_pair *c1p = calloc(20000, sizeof *c1p), *cgp = calloc(20000, sizeof *cgp);
    ENSURE(sim_backend_contacts(one, c1p, 20000, &n1, &err) == SIM_OK);
    ENSURE(sim_backend_contacts(many, cgp, 20000, &ng, &err) == SIM_OK);
    ENSURE_MSG(n1 == ng && n1 > 0, "contacts %llu vs %llu", (unsigned long long)n1,
               (unsigned long long)ng);
    uint64_t sum1 = 0, sumg = 0; /* the same set: order-free fingerprints */
    for (uint64_t k = 0; k < n1 && k < 20000; ++k) {
        sum1 += (uint64_t)c1p[k].i * 1000003u + c1p[k].j;
        sumg += (uint64_t)cgp[k].i * 1000003u + cgp[k].j;
    }
    ENSURE(sum1 == sumg);
    free(c1p);
    free(cgp);
    drop(&a);
    drop(&b);
    sim_backend_destroy(one);
    sim_backend_destroy(many);
    sim_state_free(&s);
}

static void test_refusals(void) {
    sim_state s = test_random_state(&rng_state, 50, 5.0, 1.0);
    const sim_params p = params_for(5.5, 0);
    sim_error err;
    sim_backend *b = NULL;
    sim_backend_config c = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0, 0, 2);
    c.multi.local = 1; /* CPU ranks in other processes */
    ENSURE(sim_backend_create(&c, &p, &s, &b, &err) == SIM_UNSUPPORTED && b == NULL);
    c.multi.local = 3; /* more ranks than the world */
    ENSURE(sim_backend_create(&c, &p, &s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    c = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0, 0, 2);
    c.kind = SIM_BACKEND_CUDA;
    c.multi.local = 1;
    c.multi.rank = 1; /* a CUDA rank of a two-process run without the id */
    const sim_status st = sim_backend_create(&c, &p, &s, &b, &err);
    ENSURE_MSG(b == NULL &&
                   (sim_multi_have_nccl() ? st == SIM_BAD_ARGUMENT : st == SIM_UNSUPPORTED),
               "%s", err.message);
    sim_state_free(&s);
}

static const ensure_test tests[] = {
    {"multi_cpu_pairs", test_pairs_split},
    {"multi_cpu_culled", test_culled_split},
    {"multi_cpu_nlist", test_nlist_split},
    {"multi_cpu_triplets", test_triplets_split},
    {"multi_cpu_switches", test_switches},
    {"multi_cpu_culled_triplets", test_culled_triplets_split},
    {"multi_cpu_refusals", test_refusals},
};

ENSURE_MAIN(tests)
