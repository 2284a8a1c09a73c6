/* SPDX-License-Identifier: MIT
 * nbsim — the papers' micro-benchmark kernels for `nbsim bench maps`: map only, accumulate and
 * the Euclidean distance matrix (EDM), over N elements per side with rho threads per block side,
 * under any 2-D or 3-D map. Host drivers only; the kernels live in bench_map_kernels.cu. */
#ifndef SIM_BENCH_MAP_KERNELS_H
#define SIM_BENCH_MAP_KERNELS_H

#include "nbsim/internal/backend.h"
#include "nbsim/maps.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The three kernels of the papers. Each thread owns one element pair (i, j), i > j, of the
 * N x N domain (2-D) or one triple (i, j, k), i > j > k, of the N^3 domain (3-D); a block of
 * rho x rho (x rho) threads owns the element tile the map gives it. */
typedef enum {
    SIM_BENCH_MAP,   /* map only: coordinates kept alive by a store that never happens */
    SIM_BENCH_ACCUM, /* read-modify-write of the element's own counter (element granularity) */
    SIM_BENCH_EDM    /* distance over `features` floats per element, written to the element */
} sim_bench_kernel;

typedef struct {
    int dim; /* 2 or 3 */
    int map; /* sim_pair_map (dim 2) or sim_triplet_map (dim 3) */
    sim_bench_kernel kernel;
    int features;   /* EDM: 1..4; ignored otherwise */
    uint32_t rho;   /* threads per block side: 2-D 8/16/32, 3-D 4/8 */
    int per_block;  /* 0: every thread evaluates the map (as the papers' code);
                       1: one thread does, the block reads it from shared memory */
    int transposed; /* 0: the plan's grids as they are; 1: x and y swapped at launch, so the
                       hardware dispatches the plan's blocks column by column (same blocks,
                       same tiles, another order); per-thread evaluation only */
} sim_bench_case;

/* Device buffers for one domain size: the N^dim counters/distances (4 bytes each, only when
 * `with_matrix`), N x 4 feature floats, events and side streams. */
typedef struct sim_bench_domain sim_bench_domain;

#define SIM_BENCH_MAX_SLOTS 256 /* timed regions in flight between two collects */

/* Largest N each dimension accepts: 32-bit element indices (N^dim < 2^32). */
#define SIM_BENCH_MAX_N_2D 65535u
#define SIM_BENCH_MAX_N_3D 1625u

/* 1 if every launch of the plan can be transposed: its x extent fits CUDA's y limit (65535). */
int sim_bench_can_transpose(const sim_map_plan *plan);

sim_status sim_bench_domain_create(int dim, uint32_t n_elems, int with_matrix,
                                   sim_bench_domain **out, sim_error *err);
void sim_bench_domain_destroy(sim_bench_domain *d);

/* Enqueues `inner` back-to-back executions of `plan` (all its launches; concurrent plans fork
 * onto side streams and join back) between the start and stop events of `slot`. Returns at
 * once; sim_bench_collect waits and gives the milliseconds per execution. */
sim_status sim_bench_enqueue(sim_bench_domain *d, const sim_bench_case *c, const sim_map_plan *plan,
                             int inner, int slot, sim_error *err);
sim_status sim_bench_collect(sim_bench_domain *d, int slot, int inner, double *ms, sim_error *err);

/* Runs the case once on a cleared domain and counts elements that are wrong afterwards:
 * ACCUM: count != 1 inside the simplex or != 0 outside (exactly once); EDM: a distance missing
 * or wrong inside, or anything written outside. MAP writes nothing: *wrong = 0. */
sim_status sim_bench_verify(sim_bench_domain *d, const sim_bench_case *c, const sim_map_plan *plan,
                            uint64_t *wrong, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_BENCH_MAP_KERNELS_H */
