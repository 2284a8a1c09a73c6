/* SPDX-License-Identifier: MIT
 * nbsim — thread maps: every map exhaustively for every small n (each tile exactly once, nothing
 * else, waste as planned), every row / layer boundary of the root-based maps up to the largest n,
 * full checks at a few large n, the first failing n of the papers' float variants, rm's waste,
 * plan limits and errors. */
#include "nbsim/maps_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "nbsim/size_limits.h"

#if defined(_OPENMP)
#define PARALLEL_FOR _Pragma("omp parallel for schedule(dynamic, 1)")
#else
#define PARALLEL_FOR
#endif

enum {
    PAIR_EXHAUSTIVE_MAX = 600, /* every n from 1: all blocks of every map */
    TRIPLET_EXHAUSTIVE_MAX = 100,
    BOUNDARY_WINDOW = 48 /* lambdas checked on each side of a row start */
};

static uint64_t t2(uint64_t k) {
    return k * (k + 1u) / 2u;
}
static uint64_t t3(uint64_t k) {
    return k * (k + 1u) * (k + 2u) / 6u;
}

static sim_map_plan make_plan(int dim, int map, uint32_t n) {
    sim_map_plan plan;
    sim_error err;
    sim_status st = dim == 2 ? sim_pair_map_plan((sim_pair_map)map, n, &plan, &err)
                             : sim_triplet_map_plan((sim_triplet_map)map, n, &plan, &err);
    ENSURE_MSG(st == SIM_OK, "plan dim %d map %d n %u: %s", dim, map, n, err.message);
    return plan;
}

static const char *map_name(int dim, int map) {
    return dim == 2 ? sim_pair_map_name((sim_pair_map)map)
                    : sim_triplet_map_name((sim_triplet_map)map);
}

static int is_paper(int dim, int map) {
    return dim == 2 ? sim_pair_map_is_paper_float((sim_pair_map)map)
                    : sim_triplet_map_is_paper_float((sim_triplet_map)map);
}

static int map_count(int dim) {
    return dim == 2 ? SIM_PAIR_MAP_COUNT : SIM_TRIPLET_MAP_COUNT;
}

/* Runs block `lambda` of a one-launch plan (the root-based maps enumerate blocks in lambda order).
 */
static int block_of_lambda(const sim_map_plan *plan, uint64_t lambda, uint32_t tile[3]) {
    int launch;
    uint32_t b[3];
    if (!sim_map_plan_block_at(plan, lambda, &launch, &b[0], &b[1], &b[2])) {
        return -1;
    }
    return sim_map_run_block(plan, launch, b[0], b[1], b[2], tile);
}

/* ---- first failing n of the papers' float variants ----
 * A float variant's block lambda is either the exact map's tile or wasted (maps_pair.h), and
 * which lambdas fail does not depend on n, so the first failing n is 1 + the row (layer) of the
 * smallest failing lambda. Found by scanning lambda upward against the exact sibling. Returns 0
 * if no lambda below T(max n) fails. */
static uint32_t first_failing_n(int dim, int map) {
    sim_map_plan paper = make_plan(dim, map, dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D);
    sim_map_plan exact = paper;
    exact.map = dim == 2 ? (int)SIM_PAIR_MAP_LTM : (int)SIM_TRIPLET_MAP_TETRA;
    for (uint64_t lambda = 0; lambda < paper.useful; ++lambda) {
        uint32_t a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
        int ra = block_of_lambda(&exact, lambda, a), rb = block_of_lambda(&paper, lambda, b);
        if (ra != rb || memcmp(a, b, sizeof a) != 0) {
            ENSURE_MSG(ra == 1 && rb == 0, "%s lambda %" PRIu64 ": a wrong row must be wasted",
                       map_name(dim, map), lambda);
            return a[0] + 1u;
        }
    }
    return 0;
}

static uint32_t first_failing[2][SIM_PAIR_MAP_COUNT]; /* [dim - 2][map], 0 = never fails */

static void compute_first_failing(void) {
    static int done;
    if (done) {
        return;
    }
    done = 1;
    for (int dim = 2; dim <= 3; ++dim) {
        for (int m = 0; m < map_count(dim); ++m) {
            if (is_paper(dim, m)) {
                first_failing[dim - 2][m] = first_failing_n(dim, m);
            }
        }
    }
}

/* 1 if map m must be exact at n. */
static int expect_exact(int dim, int m, uint32_t n) {
    if (!is_paper(dim, m)) {
        return 1;
    }
    compute_first_failing();
    uint32_t nf = first_failing[dim - 2][m];
    return nf == 0u || n < nf;
}

/* Full checks of maps x [lo, hi], in parallel over n; ENSUREs on the calling thread. */
static void check_range(int dim, uint32_t lo, uint32_t hi) {
    compute_first_failing();
    int maps = map_count(dim);
    uint32_t count = hi - lo + 1u;
    sim_map_check_result *res = calloc((size_t)count * (size_t)maps, sizeof *res);
    sim_map_plan *plans = calloc((size_t)count * (size_t)maps, sizeof *plans);
    ENSURE(res != NULL && plans != NULL);
    if (res == NULL || plans == NULL) {
        free(res);
        free(plans);
        return;
    }
    int64_t jobs = (int64_t)count * maps;
    PARALLEL_FOR
    for (int64_t job = jobs - 1; job >= 0; --job) { /* large n first: better balance */
        int m = (int)(job % maps);
        uint32_t n = lo + (uint32_t)(job / maps);
        sim_error err;
        sim_status st = dim == 2 ? sim_pair_map_plan((sim_pair_map)m, n, &plans[job], &err)
                                 : sim_triplet_map_plan((sim_triplet_map)m, n, &plans[job], &err);
        if (st == SIM_OK) {
            st = sim_map_check(&plans[job], UINT64_MAX, &res[job], &err);
        }
        if (st != SIM_OK) {
            res[job].exact = -1;
        }
    }
    for (int64_t job = 0; job < jobs; ++job) {
        int m = (int)(job % maps);
        uint32_t n = lo + (uint32_t)(job / maps);
        const sim_map_check_result *r = &res[job];
        const sim_map_plan *p = &plans[job];
        char text[512] = "";
        if (r->exact >= 0) {
            sim_map_check_describe(p, r, text, sizeof text);
        }
        ENSURE_MSG(r->exact == expect_exact(dim, m, n), "%s n=%u: %s", map_name(dim, m), n, text);
        ENSURE_MSG(r->full == 1 && r->checked == p->blocks, "%s n=%u", map_name(dim, m), n);
        if (r->exact == 1) { /* waste counted by running the blocks == the plan's waste */
            ENSURE_MSG(r->wasted == p->blocks - p->useful && r->produced == p->useful,
                       "%s n=%u: %" PRIu64 " wasted, plan says %" PRIu64, map_name(dim, m), n,
                       r->wasted, p->blocks - p->useful);
        }
    }
    free(res);
    free(plans);
}

static void test_pair_exhaustive(void) {
    check_range(2, 1, PAIR_EXHAUSTIVE_MAX);
}
static void test_triplet_exhaustive(void) {
    check_range(3, 1, TRIPLET_EXHAUSTIVE_MAX);
}

/* Full checks at a larger size: 2^k + 1, the worst case for the maps that pad (rec) or cut n
 * into power-of-two parts (rm). The GPU test (test_maps_gpu.cu) covers every map in full at the
 * largest sizes. */
static void test_pair_full_large(void) {
    check_range(2, 2049, 2049);
}

static void test_triplet_full_large(void) {
    check_range(3, 257, 257);
}

/* Expected row of lambda near a row start, by stepping from a known row (no roots). */
static uint32_t row_near(uint64_t lambda, uint32_t k) {
    while (t2(k) > lambda) {
        --k;
    }
    while (t2(k + 1u) <= lambda) {
        ++k;
    }
    return k;
}

static void ensure_tile(const char *map, uint64_t lambda, int got, const uint32_t tile[3],
                        uint32_t i, uint32_t j, uint32_t k) {
    ENSURE_MSG(got == 1 && tile[0] == i && tile[1] == j && tile[2] == k,
               "%s lambda %" PRIu64 ": got %d (%u, %u, %u), expected (%u, %u, %u)", map, lambda,
               got, tile[0], tile[1], tile[2], i, j, k);
}

/* ltm at n = 65535: every row start T2(k) for k <= 65535, BOUNDARY_WINDOW lambdas each side. */
static void test_ltm_row_boundaries(void) {
    sim_map_plan plan = make_plan(2, SIM_PAIR_MAP_LTM, SIM_MAX_TILES_2D);
    uint64_t bad = 0;
    for (uint32_t k = 1; k <= SIM_MAX_TILES_2D; ++k) {
        uint64_t lo = t2(k) >= BOUNDARY_WINDOW ? t2(k) - BOUNDARY_WINDOW : 0;
        for (uint64_t lambda = lo; lambda <= t2(k) + BOUNDARY_WINDOW; ++lambda) {
            uint32_t tile[3] = {0, 0, 0};
            int got = block_of_lambda(&plan, lambda, tile);
            if (lambda >= plan.useful) {
                bad += got == 1;
                continue;
            }
            uint32_t i = row_near(lambda, k);
            if (got != 1 || tile[0] != i || tile[1] != lambda - t2(i)) {
                if (bad++ == 0) {
                    ensure_tile("ltm", lambda, got, tile, i, (uint32_t)(lambda - t2(i)), 0);
                }
            }
        }
    }
    ENSURE_MSG(bad == 0, "ltm: %" PRIu64 " wrong blocks at row boundaries", bad);
}

/* utm at n = 65535: every column start S(a) = a (2n + 1 - a) / 2, each side. */
static void test_utm_column_boundaries(void) {
    const uint32_t n = SIM_MAX_TILES_2D;
    sim_map_plan plan = make_plan(2, SIM_PAIR_MAP_UTM, n);
    uint64_t bad = 0;
    for (uint32_t a = 0; a < n; ++a) {
        uint64_t start = (uint64_t)a * (2u * (uint64_t)n + 1u - a) / 2u;
        for (int64_t off = -BOUNDARY_WINDOW; off <= BOUNDARY_WINDOW; ++off) {
            if ((int64_t)start + off < 0 || (uint64_t)((int64_t)start + off) >= plan.useful) {
                continue;
            }
            uint64_t k = (uint64_t)((int64_t)start + off);
            uint32_t col = a; /* step to the column holding k */
            while ((uint64_t)col * (2u * (uint64_t)n + 1u - col) / 2u > k) {
                --col;
            }
            while ((uint64_t)(col + 1u) * (2u * (uint64_t)n - col) / 2u <= k) {
                ++col;
            }
            uint64_t first = (uint64_t)col * (2u * (uint64_t)n + 1u - col) / 2u;
            uint32_t tile[3] = {0, 0, 0};
            int got = block_of_lambda(&plan, k, tile);
            if (got != 1 || tile[1] != col || tile[0] != col + (uint32_t)(k - first)) {
                if (bad++ == 0) {
                    ensure_tile("utm", k, got, tile, col + (uint32_t)(k - first), col, 0);
                }
            }
        }
    }
    ENSURE_MSG(bad == 0, "utm: %" PRIu64 " wrong blocks at column boundaries", bad);
}

/* tetra at n = 4096: every layer start T3(k) (window each side) and, in every layer, every row
 * start T3(I) + T2(j) - 1 and T3(I) + T2(j). */
static void test_tetra_boundaries(void) {
    const uint32_t n = SIM_MAX_TILES_3D;
    sim_map_plan plan = make_plan(3, SIM_TRIPLET_MAP_TETRA, n);
    uint64_t bad = 0, checked = 0;
    for (uint32_t layer = 0; layer < n; ++layer) {
        for (int64_t off = -BOUNDARY_WINDOW; off <= BOUNDARY_WINDOW; ++off) {
            int64_t l = (int64_t)t3(layer + 1u) + off;
            uint32_t i = off < 0 ? layer : layer + 1u;
            if (l < 0 || (uint64_t)l >= plan.useful || (uint64_t)l < t3(i) ||
                (uint64_t)l >= t3(i + 1u)) {
                continue;
            }
            uint64_t rest = (uint64_t)l - t3(i);
            uint32_t j = row_near(rest, i), tile[3] = {0, 0, 0};
            int got = block_of_lambda(&plan, (uint64_t)l, tile);
            ++checked;
            if (got != 1 || tile[0] != i || tile[1] != j || tile[2] != rest - t2(j)) {
                if (bad++ == 0) {
                    ensure_tile("tetra", (uint64_t)l, got, tile, i, j, (uint32_t)(rest - t2(j)));
                }
            }
        }
        for (uint32_t j = 1; j <= layer; ++j) {
            for (int side = 0; side < 2; ++side) {
                uint64_t rest = t2(j) - 1u + (uint64_t)side, l = t3(layer) + rest;
                uint32_t row = j - 1u + (uint32_t)side, tile[3] = {0, 0, 0};
                int got = block_of_lambda(&plan, l, tile);
                ++checked;
                if (got != 1 || tile[0] != layer || tile[1] != row || tile[2] != rest - t2(row)) {
                    if (bad++ == 0) {
                        ensure_tile("tetra", l, got, tile, layer, row, (uint32_t)(rest - t2(row)));
                    }
                }
            }
        }
    }
    printf("  tetra n=4096: %" PRIu64 " boundary blocks checked\n", checked);
    ENSURE_MSG(bad == 0, "tetra: %" PRIu64 " wrong blocks at layer / row boundaries", bad);
}

/* The largest n of each dimension, by the sampled check (row boundaries, edges, random blocks,
 * each against the integer reference where the map has one). */
static void test_sampled_largest(void) {
    compute_first_failing();
    for (int dim = 2; dim <= 3; ++dim) {
        uint32_t n = dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D;
        for (int m = 0; m < map_count(dim); ++m) {
            sim_map_plan plan = make_plan(dim, m, n);
            sim_map_check_result res;
            sim_error err;
            ENSURE(sim_map_check(&plan, 0, &res, &err) == SIM_OK);
            char text[512];
            sim_map_check_describe(&plan, &res, text, sizeof text);
            ENSURE_MSG(!res.full && res.exact == expect_exact(dim, m, n), "%s n=%u: %s",
                       map_name(dim, m), n, text);
        }
    }
}

/* The papers' float variants: where they first fail, printed; the checker agrees. */
static void test_paper_first_failing(void) {
    compute_first_failing();
    for (int dim = 2; dim <= 3; ++dim) {
        for (int m = 0; m < map_count(dim); ++m) {
            if (!is_paper(dim, m)) {
                continue;
            }
            uint32_t nf = first_failing[dim - 2][m];
            printf("  %-12s first failing n = %u (host float arithmetic)\n", map_name(dim, m), nf);
            /* They hold for hundreds of tiles (the papers' claim) but not up to the maximum. */
            ENSURE_MSG(nf > (dim == 2 ? 1000u : 100u), "%s fails at n = %u", map_name(dim, m), nf);
            ENSURE_MSG(nf != 0u, "%s never fails", map_name(dim, m));
            if (nf < 2u) {
                continue;
            }
            for (uint32_t n = nf - 1u; n <= nf; ++n) {
                sim_map_plan plan = make_plan(dim, m, n);
                sim_map_check_result res;
                sim_error err;
                ENSURE(sim_map_check(&plan, UINT64_MAX, &res, &err) == SIM_OK);
                ENSURE_MSG(res.exact == (n < nf), "%s n = %u", map_name(dim, m), n);
                if (n == nf) { /* the first wrong block is in the last row / layer */
                    ENSURE(res.has_wrong && !res.wrong_got && res.missing > 0);
                    ENSURE_MSG(res.has_missing && res.missing_tile[0] == nf - 1u,
                               "%s: first missing tile in row %u", map_name(dim, m),
                               res.missing_tile[0]);
                }
            }
        }
    }
}

/* rm: exact and wasteless for n = 2^k, in one launch (2-D) or two (3-D: the top level has its
 * own); a few launches and small waste otherwise (the bounds are the worst cases measured in
 * maps.c). */
static void test_rm_waste(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        uint32_t max = dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D, worst_n = 0;
        int map = dim == 2 ? (int)SIM_PAIR_MAP_RM : (int)SIM_TRIPLET_MAP_RM, launches = 0;
        double worst = 0.0;
        for (uint32_t n = 1; n <= max; ++n) {
            sim_map_plan plan = make_plan(dim, map, n);
            double waste = (double)(plan.blocks - plan.useful) / (double)plan.blocks;
            if (waste > worst) {
                worst = waste;
                worst_n = n;
            }
            launches = plan.launch_count > launches ? plan.launch_count : launches;
            if ((n & (n - 1u)) == 0u) {
                int want = dim == 2 || n < 4u ? 1 : 2;
                ENSURE_MSG(plan.launch_count == want && plan.blocks == plan.useful, "rm n=%u", n);
            }
        }
        printf("  rm %d-D: worst waste %.3f %% of blocks (n = %u), at most %d launches\n", dim,
               100.0 * worst, worst_n, launches);
        ENSURE(worst < (dim == 2 ? 0.014 : 0.038));
        ENSURE(launches <= (dim == 2 ? SIM_RM_PARTS : 4 * SIM_RM_PARTS - 2));
    }
}

/* rm for n = 2^k is the table formula of docs/maps.md, on the transposed grid (wx = by, wy = bx).
 */
static void test_rm_table_formula(void) {
    for (uint32_t n = 2; n <= 512; n *= 2) {
        sim_map_plan plan = make_plan(2, SIM_PAIR_MAP_RM, n);
        ENSURE(plan.launch[0].grid[0] == n + 1u && plan.launch[0].grid[1] == n / 2u);
        for (uint32_t wx = 0; wx < n / 2u; ++wx) {
            for (uint32_t wy = 0; wy <= n; ++wy) {
                uint32_t i, j;
                if (wy == 0u) {
                    i = j = 2u * wx;
                } else if (wy == n) {
                    i = j = 2u * wx + 1u;
                } else {
                    uint32_t b = 1u;
                    while (2u * b <= wy) {
                        b *= 2u;
                    }
                    uint32_t q = wx / b;
                    i = wy + 2u * q * b;
                    j = wx + q * b;
                }
                sim_tile2 tile = {0, 0};
                ENSURE(sim_pair_map_block(SIM_PAIR_MAP_RM, &plan.launch[0], wy, wx, 0, &tile));
                ENSURE_MSG(tile.i == i && tile.j == j, "n=%u wx=%u wy=%u", n, wx, wy);
            }
        }
    }
}

/* Every plan for every n: CUDA grid limits, launch count, block totals. */
static void test_plans_every_n(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        uint32_t max = dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D;
        for (int m = 0; m < map_count(dim); ++m) {
            uint64_t bad = 0;
            for (uint32_t n = 1; n <= max; ++n) {
                sim_map_plan plan = make_plan(dim, m, n);
                uint64_t blocks = 0;
                int ok = plan.launch_count >= 1 && plan.launch_count <= SIM_MAX_LAUNCHES &&
                         plan.n == n && plan.dim == dim && plan.map == m &&
                         plan.useful == (dim == 2 ? t2(n) : t3(n));
                for (int l = 0; l < plan.launch_count; ++l) {
                    const uint32_t *g = plan.launch[l].grid;
                    ok = ok && g[0] >= 1u && g[0] <= 2147483647u && g[1] >= 1u && g[1] <= 65535u &&
                         g[2] >= 1u && g[2] <= 65535u && plan.launch[l].n == n;
                    blocks += (uint64_t)g[0] * g[1] * g[2];
                }
                ok = ok && blocks == plan.blocks && plan.blocks >= plan.useful;
                if (!ok && bad++ == 0) {
                    ENSURE_MSG(ok, "%s n=%u: bad plan", map_name(dim, m), n);
                }
            }
            ENSURE_MSG(bad == 0, "%s: %" PRIu64 " bad plans", map_name(dim, m), bad);
        }
    }
}

static void test_plan_refusals(void) {
    sim_map_plan plan;
    sim_error err;
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_LTM, 0, &plan, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "n = 0") != NULL);
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_BB, SIM_MAX_TILES_2D + 1u, &plan, &err) ==
           SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "65536") != NULL && strstr(err.message, "65535") != NULL);
    ENSURE(sim_triplet_map_plan(SIM_TRIPLET_MAP_RM, 0, &plan, &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_triplet_map_plan(SIM_TRIPLET_MAP_TETRA, SIM_MAX_TILES_3D + 1u, &plan, &err) ==
           SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "4097") != NULL && strstr(err.message, "4096") != NULL);
    ENSURE(sim_pair_map_plan((sim_pair_map)SIM_PAIR_MAP_COUNT, 5, &plan, &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_triplet_map_plan((sim_triplet_map)-1, 5, &plan, &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_REC, 1, &plan, NULL) == SIM_OK);
}

/* The largest N of size_limits.h is exactly what every map plans: N tiles cover it, N + 1 do
 * not fit (for every pair tile and for the triplet tile). */
static uint32_t tiles_for(uint64_t bodies, uint32_t tile) {
    return (uint32_t)((bodies + tile - 1u) / tile);
}

static void test_size_limits(void) {
    sim_map_plan plan;
    sim_error err;
    const uint32_t tiles[3] = {32, 64, 128};
    sim_backend_config c = sim_backend_config_default();
    for (int t = 0; t < 3; ++t) {
        c.tile = tiles[t];
        const uint32_t max = sim_backend_max_bodies(&c, 0);
        ENSURE(max == sim_pair_max_bodies(tiles[t]) && max == SIM_MAX_TILES_2D * tiles[t]);
        for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
            ENSURE(sim_pair_map_plan((sim_pair_map)m, tiles_for(max, tiles[t]), &plan, &err) ==
                   SIM_OK);
            ENSURE(sim_pair_map_plan((sim_pair_map)m, tiles_for(max + 1ull, tiles[t]), &plan,
                                     &err) == SIM_BAD_ARGUMENT);
        }
        ENSURE(sim_backend_max_bodies(&c, 1) == sim_triplet_max_bodies());
    }
    ENSURE(sim_pair_tile_max() == 128);
    const uint32_t max3 = sim_triplet_max_bodies();
    ENSURE(max3 == 131072);
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        ENSURE(sim_triplet_map_plan((sim_triplet_map)m, tiles_for(max3, SIM_TRIPLET_TILE), &plan,
                                    &err) == SIM_OK);
        ENSURE(sim_triplet_map_plan((sim_triplet_map)m, tiles_for(max3 + 1ull, SIM_TRIPLET_TILE),
                                    &plan, &err) == SIM_BAD_ARGUMENT);
    }
}

static void test_names(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        int papers = 0;
        for (int m = 0; m < map_count(dim); ++m) {
            const char *name = map_name(dim, m);
            int back = dim == 2 ? sim_pair_map_from_name(name) : sim_triplet_map_from_name(name);
            ENSURE_MSG(back == m, "%s", name);
            const char *label = dim == 2 ? sim_pair_map_label((sim_pair_map)m)
                                         : sim_triplet_map_label((sim_triplet_map)m);
            ENSURE(label != NULL && strlen(label) > 3);
            papers += is_paper(dim, m);
        }
        ENSURE(papers == (dim == 2 ? 3 : 1));
    }
    ENSURE(sim_pair_map_from_name("tetra") == -1);
    ENSURE(sim_pair_map_from_name("") == -1);
    ENSURE(sim_pair_map_from_name(NULL) == -1);
    ENSURE(sim_triplet_map_from_name("ltm") == -1);
    ENSURE(strcmp(sim_pair_map_name(SIM_PAIR_MAP_LTM_NEWTON), "ltm-newton") == 0);
    ENSURE(strcmp(sim_triplet_map_name(SIM_TRIPLET_MAP_TETRA_FLOAT), "tetra-float") == 0);
    ENSURE(strcmp(sim_pair_map_name((sim_pair_map)99), "unknown") == 0);
}

/* block_at walks the plan in the documented order: launch, then bz, by, bx (bx fastest). */
static void test_block_at(void) {
    sim_map_plan plan = make_plan(2, SIM_PAIR_MAP_REC, 13);
    uint64_t index = 0;
    for (int l = 0; l < plan.launch_count; ++l) {
        const uint32_t *g = plan.launch[l].grid;
        for (uint32_t z = 0; z < g[2]; ++z) {
            for (uint32_t y = 0; y < g[1]; ++y) {
                for (uint32_t x = 0; x < g[0]; ++x) {
                    int launch;
                    uint32_t b[3];
                    ENSURE(sim_map_plan_block_at(&plan, index++, &launch, &b[0], &b[1], &b[2]));
                    ENSURE(launch == l && b[0] == x && b[1] == y && b[2] == z);
                }
            }
        }
    }
    int launch;
    uint32_t b[3];
    ENSURE(index == plan.blocks);
    ENSURE(!sim_map_plan_block_at(&plan, plan.blocks, &launch, &b[0], &b[1], &b[2]));
}

/* The checker itself catches a broken map: a plan with one launch dropped, and bb's grid run
 * as if it were ltm's (blocks outside the domain / duplicates). */
static void test_checker_catches_errors(void) {
    sim_map_plan plan = make_plan(2, SIM_PAIR_MAP_REC, 16);
    plan.blocks -= (uint64_t)plan.launch[0].grid[0] * plan.launch[0].grid[1];
    memmove(&plan.launch[0], &plan.launch[1],
            sizeof plan.launch[0] * (size_t)(plan.launch_count - 1));
    --plan.launch_count;
    sim_map_check_result res;
    sim_error err;
    ENSURE(sim_map_check(&plan, UINT64_MAX, &res, &err) == SIM_OK);
    ENSURE(!res.exact && res.missing == 8u && res.has_missing && res.missing_tile[0] == 1u &&
           res.missing_tile[1] == 0u);

    sim_map_plan dup = make_plan(2, SIM_PAIR_MAP_BB, 8);
    dup.launch[1] = dup.launch[0]; /* the same launch twice: every tile twice */
    dup.launch_count = 2;
    dup.blocks *= 2u;
    ENSURE(sim_map_check(&dup, UINT64_MAX, &res, &err) == SIM_OK);
    ENSURE(!res.exact && res.duplicates == t2(8) && res.has_wrong && res.wrong_index == 64u);
    ENSURE(strcmp(res.wrong_what, "duplicate tile") == 0);
}

static const ensure_test tests[] = {
    {"maps_names", test_names},
    {"maps_plan_refusals", test_plan_refusals},
    {"maps_size_limits", test_size_limits},
    {"maps_plans_every_n", test_plans_every_n},
    {"maps_block_at", test_block_at},
    {"maps_checker_catches_errors", test_checker_catches_errors},
    {"maps_pair_exhaustive", test_pair_exhaustive},
    {"maps_triplet_exhaustive", test_triplet_exhaustive},
    {"maps_pair_full_large", test_pair_full_large},
    {"maps_triplet_full_large", test_triplet_full_large},
    {"maps_ltm_row_boundaries", test_ltm_row_boundaries},
    {"maps_utm_column_boundaries", test_utm_column_boundaries},
    {"maps_tetra_boundaries", test_tetra_boundaries},
    {"maps_sampled_largest", test_sampled_largest},
    {"maps_paper_first_failing", test_paper_first_failing},
    {"maps_rm_table_formula", test_rm_table_formula},
    {"maps_rm_waste", test_rm_waste},
};

ENSURE_MAIN(tests)
