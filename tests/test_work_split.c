/* SPDX-License-Identifier: MIT
 * nbsim — the multi-GPU work split (work_split.h): for every exact map and the bounding box,
 * pair and triplet plans, G = 1..8 ranks and a range of n, every tile pair / triple lies in
 * exactly one rank's share, the shares' pieces are the plan's blocks in the plan's order, shares
 * are within one block (bb: one row) of equal; row and list ranges cover their items once; a plan
 * cut into slices (a long step's sweep, launched a part at a time) covers them once too. */
#include "nbsim/maps_check.h"
#include "multi/work_split.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"

enum { MAX_G = 8 };

static uint64_t t2(uint64_t k) {
    return k * (k + 1u) / 2u;
}
static uint64_t t3(uint64_t k) {
    return k * (k + 1u) * (k + 2u) / 6u;
}

static int is_bb(int dim, int map) {
    return dim == 2 ? map == SIM_PAIR_MAP_BB : map == SIM_TRIPLET_MAP_BB;
}

static int exact_or_bb(int dim, int map) {
    return dim == 2 ? !sim_pair_map_is_paper_float((sim_pair_map)map)
                    : !sim_triplet_map_is_paper_float((sim_triplet_map)map);
}

/* Index of a tile pair / triple in row order, or UINT64_MAX outside the domain. */
static uint64_t tile_index(int dim, uint32_t n, const uint32_t t[3]) {
    if (dim == 2) {
        return t[0] < n && t[1] <= t[0] ? t2(t[0]) + t[1] : UINT64_MAX;
    }
    return t[0] < n && t[1] <= t[0] && t[2] <= t[1] ? t3(t[0]) + t2(t[1]) + t[2] : UINT64_MAX;
}

/* Linear index of a block of launch l (the plan's enumeration order). */
static uint64_t linear_index(const sim_map_plan *plan, int l, uint32_t bx, uint32_t by,
                             uint32_t bz) {
    uint64_t first = 0;
    for (int k = 0; k < l; ++k) {
        first +=
            (uint64_t)plan->launch[k].grid[0] * plan->launch[k].grid[1] * plan->launch[k].grid[2];
    }
    const uint32_t *g = plan->launch[l].grid;
    return first + bx + (uint64_t)g[0] * (by + (uint64_t)g[1] * bz);
}

/* Alone, the share is the whole plan, one piece per launch. */
static int share_count_one(const sim_map_plan *plan) {
    sim_map_share share;
    sim_work_share(plan, 0, 1, &share);
    int ok = share.begin == 0 && share.end == plan->blocks;
    for (int l = 0, p = 0; l < plan->launch_count; ++l) {
        const uint32_t *g = plan->launch[l].grid;
        if ((uint64_t)g[0] * g[1] * g[2] == 0) {
            continue;
        }
        ok &= p < share.piece_count && share.piece[p].launch == l &&
              memcmp(share.piece[p].grid, g, sizeof share.piece[p].grid) == 0;
        ++p;
    }
    return ok;
}

/* Checks the shares of one plan for G ranks; returns 0 on failure (already reported). */
static int check_plan(const sim_map_plan *plan, int g, uint8_t *seen, uint64_t useful_out[MAX_G]) {
    const int dim = plan->dim, map = plan->map;
    const uint32_t n = plan->n;
    const uint64_t tiles = dim == 2 ? t2(n) : t3(n);
    memset(seen, 0, (size_t)tiles);
    uint64_t expect_begin = 0, lo = UINT64_MAX, hi = 0;
    int ok = 1;
    for (int k = 0; k < g; ++k) {
        sim_map_share share;
        sim_work_share(plan, k, g, &share);
        ok &= share.begin == expect_begin;
        expect_begin = share.end;
        const uint64_t size = share.end - share.begin;
        lo = size < lo ? size : lo;
        hi = size > hi ? size : hi;
        uint64_t next = share.begin, useful = 0;
        for (int p = 0; p < share.piece_count; ++p) {
            const sim_map_piece *pc = &share.piece[p];
            for (uint32_t z = 0; z < pc->grid[2]; ++z) {
                for (uint32_t y = 0; y < pc->grid[1]; ++y) {
                    for (uint32_t x = 0; x < pc->grid[0]; ++x) {
                        const uint32_t bx = pc->origin[0] + x, by = pc->origin[1] + y,
                                       bz = pc->origin[2] + z;
                        /* z slowest, then y, then x: the plan's order inside a piece */
                        ok &= linear_index(plan, pc->launch, bx, by, bz) == next;
                        ++next;
                        uint32_t t[3];
                        if (sim_map_run_block(plan, pc->launch, bx, by, bz, t) == 1) {
                            const uint64_t idx = tile_index(dim, n, t);
                            ok &= idx != UINT64_MAX;
                            if (idx != UINT64_MAX) {
                                ok &= seen[idx] == 0;
                                seen[idx] = 1;
                                ++useful;
                            }
                        }
                    }
                }
            }
        }
        ok &= next == share.end;
        ENSURE_MSG(useful == sim_work_share_useful(plan, &share), "%s n %u", sim_map_name(dim, map),
                   n);
        useful_out[k] = useful;
    }
    ok &= expect_begin == (g == 1 ? plan->blocks : sim_work_split_extent(plan));
    for (uint64_t i = 0; i < tiles; ++i) {
        ok &= seen[i] == 1;
    }
    if (g == 1) {
        ok &= share_count_one(plan);
    } else if (is_bb(dim,
                     map)) { /* rows of equal height: blocks differ by at most one row (slab) */
        const uint32_t *gr = plan->launch[0].grid;
        const uint64_t row = dim == 2 ? gr[0] : (uint64_t)gr[0] * gr[1];
        ok &= hi - lo <= row && lo % row == 0;
    } else {
        ok &= hi - lo <= 1;
    }
    ENSURE_MSG(ok, "%s (dim %d) n %u G %d: shares do not cover the simplex once, in order, evenly",
               sim_map_name(dim, map), dim, n, g);
    return ok;
}

static void run_dim(int dim, const uint32_t *ns, int count) {
    uint64_t max_tiles = 0;
    for (int i = 0; i < count; ++i) {
        const uint64_t t = dim == 2 ? t2(ns[i]) : t3(ns[i]);
        max_tiles = t > max_tiles ? t : max_tiles;
    }
    uint8_t *seen = malloc((size_t)max_tiles);
    ENSURE(seen != NULL);
    if (seen == NULL) {
        return;
    }
    for (int map = 0; map < sim_map_count(dim); ++map) {
        if (!exact_or_bb(dim, map)) {
            continue;
        }
        int failures = 0;
        for (int i = 0; i < count && failures < 3; ++i) {
            sim_map_plan plan;
            sim_error err;
            const sim_status st =
                dim == 2 ? sim_pair_map_plan((sim_pair_map)map, ns[i], &plan, &err)
                         : sim_triplet_map_plan((sim_triplet_map)map, ns[i], &plan, &err);
            ENSURE_MSG(st == SIM_OK, "%s", err.message);
            for (int g = 1; g <= MAX_G && st == SIM_OK; ++g) {
                uint64_t useful[MAX_G];
                failures += !check_plan(&plan, g, seen, useful);
            }
        }
    }
    free(seen);
}

static void test_pair_shares(void) {
    uint32_t ns[160];
    int count = 0;
    for (uint32_t n = 1; n <= 130; ++n) {
        ns[count++] = n;
    }
    const uint32_t big[] = {255, 256, 257, 511, 600, 1000, 1023, 1024, 1025};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i) {
        ns[count++] = big[i];
    }
    run_dim(2, ns, count);
}

static void test_triplet_shares(void) {
    uint32_t ns[64];
    int count = 0;
    for (uint32_t n = 1; n <= 40; ++n) {
        ns[count++] = n;
    }
    const uint32_t big[] = {63, 64, 65, 100};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i) {
        ns[count++] = big[i];
    }
    run_dim(3, ns, count);
}

/* What the bounding box's row split does to the useful work (printed for the report), and the
 * exact maps' balance of useful blocks (within the few wasted blocks of a share). */
static void test_balance_report(void) {
    const struct {
        int dim;
        uint32_t n;
    } cases[] = {{2, 1024}, {3, 96}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const int dim = cases[c].dim;
        const uint32_t n = cases[c].n;
        const uint64_t tiles = dim == 2 ? t2(n) : t3(n);
        uint8_t *seen = malloc((size_t)tiles);
        ENSURE(seen != NULL);
        for (int map = 0; seen != NULL && map < sim_map_count(dim); ++map) {
            if (!exact_or_bb(dim, map)) {
                continue;
            }
            sim_map_plan plan;
            sim_error err;
            ENSURE(dim == 2 ? sim_pair_map_plan((sim_pair_map)map, n, &plan, &err) == SIM_OK
                            : sim_triplet_map_plan((sim_triplet_map)map, n, &plan, &err) == SIM_OK);
            for (int g = 2; g <= 4; g += 2) {
                uint64_t useful[MAX_G];
                check_plan(&plan, g, seen, useful);
                uint64_t max = 0;
                for (int k = 0; k < g; ++k) {
                    max = useful[k] > max ? useful[k] : max;
                }
                const double ideal = (double)tiles / g;
                printf("  %d-D %-6s n %5u G %d: useful blocks per rank max / ideal = %.3f "
                       "(speed-up bound %.2f)\n",
                       dim, sim_map_name(dim, map), n, g, (double)max / ideal,
                       (double)tiles / (double)max);
                if (!is_bb(dim, map)) { /* exact maps: waste is a few blocks, spread thin */
                    ENSURE_MSG((double)max / ideal < 1.001, "%s G %d", sim_map_name(dim, map), g);
                } else if (g == 2) { /* the last rows hold 3/4 (2-D) or 7/8 (3-D) of the work */
                    ENSURE_NEAR((double)max / tiles, dim == 2 ? 0.75 : 0.875, 0.01);
                }
            }
        }
        free(seen);
    }
}

static void test_rows_and_lists(void) {
    for (uint32_t rows = 0; rows <= 300; rows += rows < 40 ? 1 : 37) {
        for (uint32_t align = 1; align <= 16; align *= 4) {
            for (int g = 1; g <= MAX_G; ++g) {
                uint32_t expect = 0, lo = UINT32_MAX, hi = 0;
                int ok = 1;
                for (int k = 0; k < g; ++k) {
                    uint32_t r0, r1;
                    sim_work_rows(rows, align, k, g, &r0, &r1);
                    ok &= r0 == expect && r1 >= r0 && r1 <= rows;
                    ok &= r0 % align == 0 || r0 == rows;
                    expect = r1;
                    if (k + 1 < g) {
                        lo = r1 - r0 < lo ? r1 - r0 : lo;
                        hi = r1 - r0 > hi ? r1 - r0 : hi;
                    }
                }
                ok &= expect == rows;
                ok &= g == 1 || hi - lo <= align;
                ENSURE_MSG(ok, "rows %u align %u G %d", rows, align, g);
            }
        }
    }
    const uint64_t counts[] = {0, 1, 2, 7, 1000, 123456789, (uint64_t)1 << 40};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        for (int g = 1; g <= MAX_G; ++g) {
            uint64_t expect = 0, lo = UINT64_MAX, hi = 0;
            for (int k = 0; k < g; ++k) {
                uint64_t b, e;
                sim_work_list_range(counts[c], k, g, &b, &e);
                ENSURE(b == expect && e >= b);
                expect = e;
                lo = e - b < lo ? e - b : lo;
                hi = e - b > hi ? e - b : hi;
            }
            ENSURE(expect == counts[c] && hi - lo <= 1);
        }
    }
}

/* Ranges spanning launches and grids at the limits: the pieces stay few and in order. */
static void test_pieces_limits(void) {
    sim_map_plan plan;
    sim_error err;
    ENSURE(sim_triplet_map_plan(SIM_TRIPLET_MAP_RM, 4096, &plan, &err) == SIM_OK);
    for (int g = 1; g <= 64; g *= 4) {
        for (int k = 0; k < g; ++k) {
            sim_map_share share;
            sim_work_share(&plan, k, g, &share);
            uint64_t blocks = 0;
            for (int p = 0; p < share.piece_count; ++p) {
                const sim_map_piece *pc = &share.piece[p];
                blocks += (uint64_t)pc->grid[0] * pc->grid[1] * pc->grid[2];
                const uint32_t *lg = plan.launch[pc->launch].grid;
                ENSURE(pc->origin[0] + pc->grid[0] <= lg[0] &&
                       pc->origin[1] + pc->grid[1] <= lg[1] &&
                       pc->origin[2] + pc->grid[2] <= lg[2]);
            }
            ENSURE(blocks == share.end - share.begin);
            ENSURE(share.piece_count <= plan.launch_count + 4);
        }
    }
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_BB, SIM_MAX_TILES_2D, &plan, &err) == SIM_OK);
    sim_map_share share;
    sim_work_share(&plan, 2, 3, &share);
    ENSURE(share.piece_count == 1 && share.piece[0].grid[0] == SIM_MAX_TILES_2D &&
           share.piece[0].origin[1] == 2u * SIM_MAX_TILES_2D / 3u);
}

/* A plan cut into consecutive slices of `slice` blocks (sim_work_range_share, as the CUDA
 * backend launches a long step's sweep to stop between slices) visits every block once, in the
 * plan's order, and so every tile pair / triple once. */
static int check_slices(const sim_map_plan *plan, uint64_t slice, uint8_t *seen) {
    const uint32_t n = plan->n;
    const uint64_t tiles = plan->dim == 2 ? t2(n) : t3(n);
    memset(seen, 0, (size_t)tiles);
    uint64_t next = 0;
    int ok = 1;
    for (uint64_t begin = 0; begin < plan->blocks; begin += slice) {
        const uint64_t end = begin + slice < plan->blocks ? begin + slice : plan->blocks;
        sim_map_share share;
        sim_work_range_share(plan, begin, end, &share);
        ok &= share.begin == begin && share.end == end && share.piece_count <= SIM_SHARE_MAX_PIECES;
        for (int p = 0; p < share.piece_count; ++p) {
            const sim_map_piece *pc = &share.piece[p];
            for (uint32_t z = 0; z < pc->grid[2]; ++z) {
                for (uint32_t y = 0; y < pc->grid[1]; ++y) {
                    for (uint32_t x = 0; x < pc->grid[0]; ++x) {
                        const uint32_t bx = pc->origin[0] + x, by = pc->origin[1] + y,
                                       bz = pc->origin[2] + z;
                        ok &= linear_index(plan, pc->launch, bx, by, bz) == next++;
                        uint32_t t[3];
                        if (sim_map_run_block(plan, pc->launch, bx, by, bz, t) == 1) {
                            const uint64_t idx = tile_index(plan->dim, n, t);
                            ok &= idx != UINT64_MAX && seen[idx] == 0;
                            if (idx != UINT64_MAX) {
                                seen[idx] = 1;
                            }
                        }
                    }
                }
            }
        }
        ok &= next == end;
    }
    for (uint64_t i = 0; i < tiles; ++i) {
        ok &= seen[i] == 1;
    }
    ENSURE_MSG(ok, "%s (dim %d) n %u, slices of %llu: not every tile once, in order",
               sim_map_name(plan->dim, plan->map), plan->dim, n, (unsigned long long)slice);
    return ok;
}

static void test_slices(void) {
    static const uint32_t ns[2][3] = {{1, 77, 300}, {1, 17, 40}};
    static const uint64_t slices[] = {1, 7, 64, 1000, 100000};
    uint8_t *seen = malloc((size_t)t2(300) + (size_t)t3(40));
    ENSURE(seen != NULL);
    for (int dim = 2; dim <= 3 && seen != NULL; ++dim) {
        for (int map = 0; map < sim_map_count(dim); ++map) {
            if (!exact_or_bb(dim, map)) {
                continue;
            }
            for (int i = 0; i < 3; ++i) {
                sim_map_plan plan;
                sim_error err;
                const uint32_t n = ns[dim - 2][i];
                const sim_status st =
                    dim == 2 ? sim_pair_map_plan((sim_pair_map)map, n, &plan, &err)
                             : sim_triplet_map_plan((sim_triplet_map)map, n, &plan, &err);
                ENSURE_MSG(st == SIM_OK, "%s", err.message);
                for (size_t k = 0; st == SIM_OK && k < sizeof slices / sizeof slices[0]; ++k) {
                    (void)check_slices(&plan, slices[k], seen);
                }
            }
        }
    }
    free(seen);
}

static const ensure_test tests[] = {
    {"split_pair_shares", test_pair_shares},       {"split_triplet_shares", test_triplet_shares},
    {"split_balance_report", test_balance_report}, {"split_rows_and_lists", test_rows_and_lists},
    {"split_pieces_limits", test_pieces_limits},   {"split_slices", test_slices},
};

ENSURE_MAIN(tests)
