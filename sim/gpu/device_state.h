/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: the bodies on the device and the streams the kernel
 * drivers launch on. Plain structs of device pointers so drivers keep a C-style argument list. */
#ifndef SIM_DEVICE_STATE_H
#define SIM_DEVICE_STATE_H

#include <cuda_runtime.h>

#include "cull/cull.h"
#include "nbsim/base.h"

/* Structure of arrays of 16-byte vectors: a warp's loads are coalesced 16-byte accesses.
 * O(N) memory only: SIM_GPU_BYTES_PER_BODY bytes per body in all. */
typedef struct {
    sim_vec4f *pos;   /* d_: (x, y, z, radius) [m] */
    sim_vec4f *vel;   /* d_: (vx, vy, vz, mass) [m/s, kg] */
    sim_vec4f *force; /* d_: (fx, fy, fz, unused) [N]; pair/triplet kernels add with atomics */
    uint32_t n;
} sim_gpu_bodies;

/* pos + vel + force, plus one float of scratch (speeds for the viewer's host export). */
#define SIM_GPU_BYTES_PER_BODY (3u * 16u + 4u)

/* Culling state on the device (cull.h, cull_kernels.cu). Counters a step's passes write and the
 * host reads once per frame. The box kernel zeroes `supers` and `tiles` at each step; every pass
 * counts all its survivors, also those past the list's capacity, so a consumer that finds
 * count > capacity knows the list is incomplete and sweeps the whole simplex instead. */
/* Counters the kernels of a step sum into several slots (by warp or block) so that their
 * atomics do not all meet at one address; the host adds the slots. */
#define SIM_GPU_COUNT_SLOTS 16

typedef struct {
    uint32_t supers_peak, tiles_peak; /* max over the frame */
    uint32_t fallback_steps;          /* steps whose sweep covered a whole simplex */
    uint32_t pad;
    /* the recorded contact sweeps' pair tests and touching pairs (config.count_contacts) */
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

/* Launches of a multi-launch map plan marked `concurrent` go round-robin on the side streams,
 * forked from and joined back into `main` with events, so the events timing a phase on `main`
 * enclose every launch of it. */
#define SIM_GPU_SIDE_STREAMS 4
typedef struct {
    cudaStream_t main;
    cudaStream_t side[SIM_GPU_SIDE_STREAMS];
    cudaEvent_t fork;
    cudaEvent_t join[SIM_GPU_SIDE_STREAMS];
} sim_gpu_streams;

#endif /* SIM_DEVICE_STATE_H */
