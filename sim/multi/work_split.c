/* SPDX-License-Identifier: MIT
 * nbsim — the work split of a multi-GPU step (work_split.h): shares of a plan's blocks, their
 * pieces, row ranges of a culled list. */
#include "multi/work_split.h"

static uint64_t launch_blocks(const sim_map_launch *l) {
    return (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* floor(k * count / world) without overflow for count < 2^53 and world <= SIM_MAX_RANKS. */
static uint64_t part_bound(uint64_t count, int k, int world) {
    return (uint64_t)(((unsigned __int128)count * (unsigned)k) / (unsigned)world);
}

void sim_work_list_range(uint64_t count, int rank, int world, uint64_t *begin, uint64_t *end) {
    SIM_ASSERT(world >= 1 && rank >= 0 && rank < world);
    *begin = part_bound(count, rank, world);
    *end = part_bound(count, rank + 1, world);
}

void sim_work_rows(uint32_t rows, uint32_t align, int rank, int world, uint32_t *r0, uint32_t *r1) {
    SIM_ASSERT(world >= 1 && rank >= 0 && rank < world && align >= 1);
    const uint64_t units = ((uint64_t)rows + align - 1u) / align;
    const uint64_t u0 = part_bound(units, rank, world), u1 = part_bound(units, rank + 1, world);
    *r0 = (uint32_t)min_u64(u0 * align, rows);
    *r1 = rank + 1 == world ? rows : (uint32_t)min_u64(u1 * align, rows);
}

/* The λ maps (g(λ) and its tetrahedral extension, utm) launch λ = 0, 1, ... in one launch, the
 * blocks past T2(n) or T3(n) wasted: their shares are λ ranges of the simplex alone. */
uint64_t sim_work_split_extent(const sim_map_plan *plan) {
    int lambda = 0;
    if (plan->dim == 2) {
        lambda = plan->map == SIM_PAIR_MAP_LTM || plan->map == SIM_PAIR_MAP_LTM_SQRT ||
                 plan->map == SIM_PAIR_MAP_LTM_RSQRT || plan->map == SIM_PAIR_MAP_LTM_NEWTON ||
                 plan->map == SIM_PAIR_MAP_UTM;
    } else {
        lambda = plan->map == SIM_TRIPLET_MAP_TETRA || plan->map == SIM_TRIPLET_MAP_TETRA_FLOAT;
    }
    return lambda && plan->launch_count == 1 && plan->useful <= plan->blocks ? plan->useful
                                                                             : plan->blocks;
}

void sim_work_share_range(const sim_map_plan *plan, int rank, int world, uint64_t *begin,
                          uint64_t *end) {
    SIM_ASSERT(plan != NULL && world >= 1 && rank >= 0 && rank < world);
    if (world == 1) { /* alone: the plan as it is studied, wasted blocks and all */
        *begin = 0;
        *end = plan->blocks;
        return;
    }
    const int bb = plan->dim == 2 ? plan->map == SIM_PAIR_MAP_BB : plan->map == SIM_TRIPLET_MAP_BB;
    if (bb && plan->launch_count == 1) {
        /* The natural split of the bounding box: rows (2-D) or slabs (3-D) of equal height. */
        const uint64_t rows = plan->launch[0].grid[plan->dim == 2 ? 1 : 2];
        const uint64_t per_row = rows > 0 ? launch_blocks(&plan->launch[0]) / rows : 0;
        *begin = part_bound(rows, rank, world) * per_row;
        *end = part_bound(rows, rank + 1, world) * per_row;
        return;
    }
    sim_work_list_range(sim_work_split_extent(plan), rank, world, begin, end);
}

/* Pieces of the range [b, e) of one launch's blocks (0 <= b <= e <= its blocks): a partial row,
 * the rest of a slab, whole slabs, rows, a partial row, as the range needs them. */
static int launch_pieces(int l, const uint32_t g[3], uint64_t b, uint64_t e, sim_map_piece *out,
                         int cap) {
    const uint64_t gx = g[0], gy = g[1], slab = gx * gy;
    int count = 0;
    while (b < e) {
        SIM_ASSERT(count < cap);
        const uint64_t x = b % gx, y = b / gx % gy, z = b / slab;
        sim_map_piece *p = &out[count++];
        p->launch = l;
        p->origin[0] = (uint32_t)x;
        p->origin[1] = (uint32_t)y;
        p->origin[2] = (uint32_t)z;
        if (x != 0 || e - b < gx) { /* within one row */
            const uint64_t len = min_u64(gx - x, e - b);
            p->grid[0] = (uint32_t)len;
            p->grid[1] = 1;
            p->grid[2] = 1;
            b += len;
        } else if (y != 0 || e - b < slab) { /* whole rows within one slab */
            const uint64_t rows = min_u64(gy - y, (e - b) / gx);
            p->grid[0] = (uint32_t)gx;
            p->grid[1] = (uint32_t)rows;
            p->grid[2] = 1;
            b += rows * gx;
        } else { /* whole slabs */
            const uint64_t slabs = (e - b) / slab;
            p->grid[0] = (uint32_t)gx;
            p->grid[1] = (uint32_t)gy;
            p->grid[2] = (uint32_t)slabs;
            b += slabs * slab;
        }
    }
    return count;
}

int sim_map_range_pieces(const sim_map_plan *plan, uint64_t begin, uint64_t end,
                         sim_map_piece *pieces, int cap) {
    SIM_ASSERT(plan != NULL && begin <= end && end <= plan->blocks);
    int count = 0;
    uint64_t first = 0; /* linear index of launch l's first block */
    for (int l = 0; l < plan->launch_count && first < end; ++l) {
        const uint64_t blocks = launch_blocks(&plan->launch[l]);
        const uint64_t b = begin > first ? begin - first : 0;
        const uint64_t e = min_u64(end - first, blocks);
        if (b < e) {
            count += launch_pieces(l, plan->launch[l].grid, b, e, pieces + count, cap - count);
        }
        first += blocks;
    }
    return count;
}

void sim_work_range_share(const sim_map_plan *plan, uint64_t begin, uint64_t end,
                          sim_map_share *share) {
    share->begin = begin;
    share->end = end;
    share->piece_count = sim_map_range_pieces(plan, begin, end, share->piece, SIM_SHARE_MAX_PIECES);
}

void sim_work_share(const sim_map_plan *plan, int rank, int world, sim_map_share *share) {
    uint64_t begin = 0, end = 0;
    sim_work_share_range(plan, rank, world, &begin, &end);
    sim_work_range_share(plan, begin, end, share);
}

uint64_t sim_work_share_useful(const sim_map_plan *plan, const sim_map_share *share) {
    uint64_t useful = 0;
    const uint32_t n = plan->n;
    for (int k = 0; k < share->piece_count; ++k) {
        const sim_map_piece *p = &share->piece[k];
        const sim_map_launch *l = &plan->launch[p->launch];
        for (uint32_t z = 0; z < p->grid[2]; ++z) {
            for (uint32_t y = 0; y < p->grid[1]; ++y) {
                for (uint32_t x = 0; x < p->grid[0]; ++x) {
                    const uint32_t bx = p->origin[0] + x, by = p->origin[1] + y,
                                   bz = p->origin[2] + z;
                    if (plan->dim == 2) {
                        sim_tile2 t;
                        useful += sim_pair_map_block((sim_pair_map)plan->map, l, bx, by, bz, &t) &&
                                  t.i < n && t.j <= t.i;
                    } else {
                        sim_tile3 t;
                        useful +=
                            sim_triplet_map_block((sim_triplet_map)plan->map, l, bx, by, bz, &t) &&
                            t.i < n && t.j <= t.i && t.k <= t.j;
                    }
                }
            }
        }
    }
    return useful;
}
