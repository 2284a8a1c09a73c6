/* SPDX-License-Identifier: MIT
 * nbsim — private to the GPU code: the culling's state on the device, and the host drivers of the
 * culling kernels (sort along the Morton curve, tile boxes, the culling passes) and of the
 * body-order helpers. The kernels are reached only through these functions. A culled step runs,
 * on the main stream:
 *   [sim_gpu_sort_bodies, every K steps]  sim_gpu_cull_boxes  sim_gpu_cull_top
 *   [sim_gpu_cull_second, two levels]     sim_cuda_pair_forces_list (pair_kernels.h)
 * with no host sync: list lengths stay on the device (sim_gpu_cull_counts). */
#ifndef SIM_CULL_KERNELS_H
#define SIM_CULL_KERNELS_H

#include "cull/cull.h"
#include "gpu/device_state.h"
#include "nbsim/maps.h"

/* Culling state on the device (cull.h, cull_kernels.cu). Counters a step's passes write and the
 * host reads once per frame. The box kernel zeroes `supers` and `tiles` at each step; every pass
 * counts all its survivors, also those past the list's capacity, so a consumer that finds
 * count > capacity knows the list is incomplete and sweeps the whole simplex instead. */
typedef struct {
    uint32_t supers_peak, tiles_peak; /* max over the frame */
    uint32_t fallback_steps;          /* steps whose sweep covered a whole simplex */
    uint32_t pad;
    /* the recorded contact sweeps' pair tests and touching pairs (tuning.count_contacts) */
    unsigned long long tests[SIM_GPU_COUNT_SLOTS], contacts[SIM_GPU_COUNT_SLOTS];
} sim_gpu_cull_frame;

typedef struct {
    /* per step (zeroed by the box kernel) */
    uint32_t supers, tiles;  /* survivors of this step's passes */
    uint32_t super_overflow; /* this step's super-pair list overflowed */
    /* per frame: zeroed as a whole before a frame's steps; recording sweeps only */
    sim_gpu_cull_frame frame;
    /* kept */
    uint32_t tiles_sorted; /* tiles at the first recorded sweep after the last sort */
    uint32_t contacts;     /* the contacts hook's count */
} sim_gpu_cull_counts;

/* Allocated when culling is first turned on; 56 bytes per body plus the lists. perm is the body
 * order: slot s of pos/vel/force holds user body perm[s]. */
typedef struct {
    uint32_t *perm, *perm_alt;   /* d_: slot -> user index, and the gather's target */
    uint32_t *keys[2], *vals[2]; /* d_: radix sort double buffers (key, old slot) */
    void *sort_temp;             /* d_: CUB's temporary storage, sized once for n */
    size_t sort_temp_bytes;
    sim_vec4f *pos_alt, *vel_alt;      /* d_: gather targets; pos_alt doubles as export scratch */
    sim_cull_box *boxes, *supers;      /* d_: per tile, per super-tile */
    sim_tile2 *tile_list, *super_list; /* d_: interacting tile pairs, surviving super pairs */
    uint32_t tile_cap, super_cap;      /* entries allocated */
    sim_gpu_cull_counts *counts;       /* d_ */
    uint32_t tile, n_tiles, n_supers;
    /* Tile rows [row0, row1) this rank culls and sweeps (a multi-GPU run; alone all of them):
     * the lists hold only the pairs (I, J) with I in them, the super list only super pairs whose
     * super row meets them (work_split.h says why rows). Multiples of SIM_CULL_SUPER. */
    uint32_t row0, row1;
    int list_grid;  /* blocks of the persistent contact sweep (SMs x resident blocks) */
    int super_grid; /* blocks of the persistent second culling pass */
    /* The box's periods (physics.h; all 0: walls), the backend's, copied in before each cull:
     * boxes meet through their images on a periodic axis. */
    sim_period_f period;
} sim_gpu_cull;

#define SIM_GPU_CULL_BYTES_PER_BODY (2u * 16u + 6u * 4u)

/* Flags of a list-driven pass: record its counts into the frame's peaks and fallbacks (the
 * step's own passes; not the untimed energy and contacts passes), and whether the step sorted. */
enum { SIM_GPU_CULL_RECORD = 1u, SIM_GPU_CULL_SORTED = 2u };

/* Bytes of CUB temporary storage the sort of n bodies needs (query, no work). */
sim_status sim_gpu_sort_temp_bytes(uint32_t n, size_t *bytes, sim_error *err);

/* Blocks of the persistent second culling pass for this device (SMs x resident blocks). */
sim_status sim_gpu_cull_second_grid(int sm_count, int *grid, sim_error *err);

/* d[i] = i for i < n. */
sim_status sim_gpu_iota(uint32_t *d, uint32_t n, cudaStream_t s, sim_error *err);

/* Sorts the bodies by the Morton key of their centres in [-box_half, box_half]^3: keys, CUB's
 * DeviceRadixSort::SortPairs over 30 bits, then a gather of pos, vel and perm into the _alt
 * buffers, which are swapped in (b->pos, b->vel, c->perm change). Forces are not moved: the
 * backend sorts between the first half kick and the force computation, which rewrites them. */
sim_status sim_gpu_sort_bodies(sim_gpu_bodies *b, sim_gpu_cull *c, float box_half, cudaStream_t s,
                               sim_error *err);

/* Boxes of every tile and super-tile from the current positions; zeroes the step's counters. */
sim_status sim_gpu_cull_boxes(const sim_gpu_bodies *b, const sim_gpu_cull *c, cudaStream_t s,
                              sim_error *err);

/* The map-placed pass: every block of `plan` (over groups of 16 items per side) tests its
 * 16 x 16 item pairs, one per thread; survivors go to the tile list (levels 1: items are tiles)
 * or the super-pair list (levels 2). Multi-launch plans run concurrently on the side streams.
 * gate (a device flag; NULL: none): the blocks return at once while it is 0 (neighbour lists:
 * the passes run only when the lists are rebuilt, nlist_kernels.h). */
sim_status sim_gpu_cull_top(const sim_gpu_cull *c, const sim_map_plan *plan, int levels,
                            const uint32_t *gate, const sim_gpu_streams *st, sim_error *err);

/* Levels 2: the tile pairs inside each surviving super pair (a persistent grid over the list,
 * or over every super pair when the list overflowed), into the tile list. flags: SIM_GPU_CULL_*. */
sim_status sim_gpu_cull_second(const sim_gpu_cull *c, unsigned flags, const uint32_t *gate,
                               cudaStream_t s, sim_error *err);

#endif /* SIM_CULL_KERNELS_H */
