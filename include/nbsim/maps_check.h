/* SPDX-License-Identifier: MIT
 * nbsim — host-side verification of a thread-map plan: runs the map on every block (or, for very
 * large plans, on a sample) and checks that every tile pair / triple is produced exactly once and
 * nothing else. Used by tests/test_maps*.c and by `nbsim maps`. */
#ifndef SIM_MAPS_CHECK_H
#define SIM_MAPS_CHECK_H

#include "nbsim/maps.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plans with at most this many blocks are checked in full by default (about a second). */
#define SIM_MAP_CHECK_FULL_DEFAULT (1ull << 28)

typedef struct {
    int full;            /* 1: every block was run; 0: a sample (see below) */
    int exact;           /* full: every tile exactly once, nothing else, waste == plan's;
                            sampled: every sampled block gave the expected tile */
    uint64_t checked;    /* blocks run */
    uint64_t produced;   /* blocks that owned a tile */
    uint64_t wasted;     /* blocks that owned none */
    uint64_t duplicates; /* tiles produced more than once (full) */
    uint64_t outside;    /* tiles outside the domain */
    uint64_t missing;    /* tiles never produced (full) */
    uint64_t mismatched; /* blocks whose tile differs from the reference */
    int reference;       /* 1: blocks were compared with a reference: the integer one when
                            sampled, the exact sibling for a float variant that failed */

    /* The first wrong block in enumeration order (has_wrong), and what was wrong with it. */
    int has_wrong;
    uint64_t wrong_index;
    int wrong_launch;
    uint32_t wrong_block[3];
    int wrong_got;          /* the block returned a tile (wrong_tile) */
    uint32_t wrong_tile[3]; /* (I, J) or (I, J, K) */
    char wrong_what[96];    /* e.g. "duplicate tile", "outside the domain", "expected (3, 1)" */

    /* The first tile (in I, J, K order) that no block produced (has_missing). */
    int has_missing;
    uint32_t missing_tile[3];
} sim_map_check_result;

/* Checks plan in full when plan->blocks <= full_limit (a coverage bitmap), else on a sample: the
 * first and last 2^14 blocks, 2^18 pseudo-random ones and, for the root-based maps, every row /
 * layer start (lambda = T(k) - 1 and T(k); tetra: the rows of some layers too), each against an
 * integer-only reference. Maps without a reference (bb, rb, rec, rm) are then only checked to
 * stay inside the domain.
 * Returns SIM_OUT_OF_MEMORY if the coverage bitmap cannot be allocated. */
sim_status sim_map_check(const sim_map_plan *plan, uint64_t full_limit, sim_map_check_result *res,
                         sim_error *err);

/* Runs one block of a plan's map (pair or triplet by plan->dim): 1 and tile[] when it owns one. */
int sim_map_run_block(const sim_map_plan *plan, int launch, uint32_t bx, uint32_t by, uint32_t bz,
                      uint32_t tile[3]);

/* One line describing the check, e.g. "exact: yes (full, 1000000 blocks)" or
 * "exact: NO, first wrong block 1234 (launch 0, block 10,3,0) -> (5, 7): outside the domain". */
void sim_map_check_describe(const sim_map_plan *plan, const sim_map_check_result *res, char *buf,
                            size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SIM_MAPS_CHECK_H */
