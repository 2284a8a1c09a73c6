/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: culling tile triples by the ATM cut-off (triplet_cull.h
 * says what survives and why it is exact), its state on the device and the host drivers of its
 * kernels. A culled triplet step runs, on the main stream, after the contacts (the bodies are
 * already sorted and the contact phase does not move them):
 *   sim_gpu_tcull_build: boxes of centres | neighbour pairs (map-placed pass [, second pass]) |
 *                        rows (count, prefix sum, scatter) | tile triples
 *   sim_cuda_triplet_forces_culled (triplet_kernels.h): the ATM kernel over the tile triples
 * with no host sync: every length stays on the device (sim_gpu_tcull_counts). */
#ifndef SIM_TRIPLET_CULL_KERNELS_H
#define SIM_TRIPLET_CULL_KERNELS_H

#include "gpu/device_state.h"
#include "nbsim/maps.h"
#include "physics/physics.h"
#include "cull/triplet_cull.h"

/* The per-frame part of the counters below (zeroed as a whole before a frame's steps; recording
 * launches only). */
typedef struct {
    uint32_t supers_peak, pairs_peak, triples_peak;
    uint32_t fallback_steps; /* steps whose list was incomplete: swept from the boxes instead */
} sim_gpu_tcull_frame;

/* Counters on the device; the host reads them once per frame. Every pass counts all its
 * survivors, also those past a list's capacity, so a consumer that finds a count above the
 * capacity knows that list is incomplete. */
typedef struct {
    /* per step (zeroed by the box kernel) */
    uint32_t supers;  /* surviving super-tile pairs (two levels) */
    uint32_t pairs;   /* neighbour tile pairs I >= J */
    uint32_t triples; /* surviving tile triples I >= J >= K */
    /* per launch of the ATM kernel (zeroed by its driver): the next list entry a block takes */
    uint32_t cursor;
    /* per frame */
    sim_gpu_tcull_frame frame;
    /* kept: the triples at the first recorded step after the last sort (the re-sort test) */
    uint32_t triples_sorted;
} sim_gpu_tcull_counts;

/* The state, allocated when the cut-off is first culled (sim_gpu_tcull_alloc). Tiles are
 * SIM_TRIPLET_TILE bodies of the sorted order (device_state.h's slots). */
typedef struct {
    uint32_t n_tiles, n_supers;   /* triplet tiles, super-tiles of SIM_CULL_SUPER tiles */
    sim_cull_box *boxes, *supers; /* d_: boxes of centres, inflated by the margin */
    sim_tile2 *super_list;        /* d_: super pairs whose boxes are within the cut-off */
    sim_tile2 *pair_list;         /* d_: neighbour tile pairs I >= J */
    uint32_t super_cap, pair_cap; /* entries allocated (nbr has pair_cap too) */
    uint32_t *row_count;          /* d_: n_tiles + 1 entries: pairs per first tile, then 0 */
    uint32_t *row_start;          /* d_: n_tiles + 1: exclusive prefix sum of row_count */
    uint32_t *nbr;                /* d_: row T = nbr[row_start[T] .. row_start[T + 1]): K <= T */
    void *scan_temp;              /* d_: CUB's temporary storage for the prefix sum */
    size_t scan_temp_bytes;
    sim_tile3 *triple_list; /* d_: surviving tile triples, in no particular order */
    uint32_t triple_cap;
    sim_gpu_tcull_counts *counts; /* d_ */
    int sm_count;
    int second_grid; /* blocks of the persistent second pass */
    int sweep_grid;  /* blocks of the persistent ATM kernel (sim_cuda_triplet_culled_grid) */
} sim_gpu_tcull;

/* Which tile triples this device lists and sweeps: part `part` of `parts`, the rows I that are
 * `part` modulo `parts` (triplet_cull.h, sim_tcull_mine); {0, 1} = all. */
typedef struct {
    uint32_t part, parts;
} sim_gpu_tcull_share;

/* Allocates for n bodies with the given first capacities (each >= 1), on stream s.
 * SIM_OUT_OF_MEMORY names what failed; nothing is kept then (sim_gpu_tcull_free is safe). */
sim_status sim_gpu_tcull_alloc(sim_gpu_tcull *c, uint32_t n, uint64_t super_cap, uint64_t pair_cap,
                               uint64_t triple_cap, int sm_count, cudaStream_t s, sim_error *err);
void sim_gpu_tcull_free(sim_gpu_tcull *c);

/* Reallocates one list (SIM_TCULL_LIST_*) with `cap` entries (the contents are rebuilt every
 * step); SIM_OUT_OF_MEMORY leaves that list unallocated with capacity 0 (the caller retries the
 * old size). */
enum { SIM_TCULL_LIST_SUPERS, SIM_TCULL_LIST_PAIRS, SIM_TCULL_LIST_TRIPLES };
sim_status sim_gpu_tcull_realloc(sim_gpu_tcull *c, int list, uint64_t cap, sim_error *err);

/* Boxes, the neighbour pairs (levels 1: the pair map's plan `plan` over groups of 16 tiles;
 * levels 2: over groups of 16 super-tiles, then the persistent second pass), rows, and the
 * tile-triple list of `share`, for box distances within sim_tcull_limit_f of ph's cut-off (> 0).
 * Every device builds the whole neighbour list (O(N)), each lists its own triples only. */
sim_status sim_gpu_tcull_build(const sim_gpu_bodies *b, const sim_gpu_tcull *c,
                               const sim_physics_f *ph, const sim_map_plan *plan, int levels,
                               sim_gpu_tcull_share share, const sim_gpu_streams *st,
                               sim_error *err);

#endif /* SIM_TRIPLET_CULL_KERNELS_H */
