/* SPDX-License-Identifier: MIT
 * nbsim — how the tile pairs and tile triples of a step are shared out over the ranks (GPUs) of
 * a multi-GPU run. Pure host arithmetic, tested exhaustively on the CPU (tests/test_work_split.c).
 *
 * A map plan enumerates its blocks in one linear order (maps.h: launch 0 first, inside a launch
 * x fastest). Rank k of G takes the blocks [floor(k B / G), floor((k + 1) B / G)) of the B the
 * plan launches: every block in exactly one share, shares within one block of equal. For the
 * λ maps (ltm, utm, tetra) the linear index is λ and B = T2(n) or T3(n): the shares are λ ranges
 * of the simplex with the same work each; the other exact maps waste few blocks, spread thin. The
 * bounding box gets its natural split instead: rows (2-D: by; 3-D: slabs of bz) in ranges of
 * equal height. Its shares launch the same number of blocks, but the useful ones grow with the
 * row (I + 1 tile pairs in row I, T2(I + 1) tile triples in slab I), so the last rank holds
 * three quarters of the pairs at G = 2 and seven eighths of the triples: the imbalance the
 * bounding box cannot avoid (sim_work_share_useful measures it).
 *
 * A share of a plan is launched as a few rectangular pieces of the plan's grids, each with the
 * origin of its first block, so a kernel computes the same (bx, by, bz) — and the same tile —
 * as in the whole launch, with three additions and no division, in the plan's own block order.
 *
 * Culled steps share their list of interacting tile pairs by its rows: rank k sweeps the pairs
 * (I, J) with I in [r_k, r_k+1), rows in ranges of equal height. Every rank culls the same boxes
 * (same positions, same deterministic sort), so the set of pairs is the same everywhere, but the
 * order of the list is not (survivors are appended with atomics): a range of list indices would
 * not partition the set, a range of rows does, with no extra pass, and it splits the culling's
 * second pass too. */
#ifndef SIM_WORK_SPLIT_H
#define SIM_WORK_SPLIT_H

#include "nbsim/maps.h"
#include "nbsim/multi.h" /* SIM_MAX_RANKS */

#ifdef __cplusplus
extern "C" {
#endif

/* A rectangular part of one launch of a plan: blocks origin + [0, grid) per axis. */
typedef struct {
    int launch;         /* index into plan->launch */
    uint32_t origin[3]; /* coordinates of the piece's first block in the launch's grid */
    uint32_t grid[3];   /* blocks in x, y, z */
} sim_map_piece;

/* A linear range of a plan's blocks is at most 3 pieces in its first launch, 3 in its last,
 * one per launch between. */
#define SIM_SHARE_MAX_PIECES (SIM_MAX_LAUNCHES + 6)

typedef struct {
    uint64_t begin, end; /* linear block indices of the plan, [begin, end) */
    int piece_count;
    sim_map_piece piece[SIM_SHARE_MAX_PIECES];
} sim_map_share;

/* Rank `rank` of `world`'s share of the plan (the split above); world 1: every block of the plan,
 * one piece per launch, exactly what the plan launches alone. */
void sim_work_share(const sim_map_plan *plan, int rank, int world, sim_map_share *share);

/* The blocks the shares cover: [0, T2(n)) or [0, T3(n)) for the λ maps (ltm and its paper
 * variants, utm, tetra, tetra-float: one launch, λ = the linear index, the wasted blocks all
 * past the simplex), every block of the plan for the others. */
uint64_t sim_work_split_extent(const sim_map_plan *plan);

/* The linear range alone. */
void sim_work_share_range(const sim_map_plan *plan, int rank, int world, uint64_t *begin,
                          uint64_t *end);

/* Cuts the linear range [begin, end) of the plan into pieces (in block order); returns how many
 * (at most cap; the range must fit, SIM_SHARE_MAX_PIECES always does). */
int sim_map_range_pieces(const sim_map_plan *plan, uint64_t begin, uint64_t end,
                         sim_map_piece *pieces, int cap);

/* The blocks [begin, end) of the plan as a share: a rank's share, or a slice of a sweep that is
 * launched a part at a time (the CUDA backend's long steps, which stop between slices). */
void sim_work_range_share(const sim_map_plan *plan, uint64_t begin, uint64_t end,
                          sim_map_share *share);

/* Blocks of the share that own a tile pair / triple (evaluates the map for every block: for
 * tests, `nbsim maps` and reports, not for steps). */
uint64_t sim_work_share_useful(const sim_map_plan *plan, const sim_map_share *share);

/* Rows [*r0, *r1) of `rows` for rank `rank` of `world`, in ranges of equal height, the bounds
 * multiples of `align` (1: none) except the last. */
void sim_work_rows(uint32_t rows, uint32_t align, int rank, int world, uint32_t *r0, uint32_t *r1);

/* Entries [*begin, *end) of a list of `count` for rank `rank` of `world`: floor(k count / G). */
void sim_work_list_range(uint64_t count, int rank, int world, uint64_t *begin, uint64_t *end);

#ifdef __cplusplus
}
#endif

#endif /* SIM_WORK_SPLIT_H */
