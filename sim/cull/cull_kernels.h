/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the culling kernels (sort along the Morton
 * curve, tile boxes, the culling passes) and of the body-order helpers. The kernels are reached
 * only through these functions. A culled step runs, on the main stream:
 *   [sim_gpu_sort_bodies, every K steps]  sim_gpu_cull_boxes  sim_gpu_cull_top
 *   [sim_gpu_cull_second, two levels]     sim_gpu_pair_forces_list (pair_kernels.h)
 * with no host sync: list lengths stay on the device (sim_gpu_cull_counts). */
#ifndef SIM_CULL_KERNELS_H
#define SIM_CULL_KERNELS_H

#include "gpu/device_state.h"
#include "nbsim/maps.h"

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
