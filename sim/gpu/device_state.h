/* SPDX-License-Identifier: MIT
 * nbsim — private to the GPU code (the CUDA backend, the kernels of cull/ and nlist/): the bodies
 * on the device, their instability flag and the streams the kernel drivers launch on. Plain
 * structs of device pointers so drivers keep a C-style argument list. */
#ifndef SIM_DEVICE_STATE_H
#define SIM_DEVICE_STATE_H

#include <cuda_runtime.h>

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

/* The instability flag is one uint64 on the device, all bits set = stable. A bad body writes
 * (step << 36) | (body << 4) | cause with atomicMin, so the first step, then the lowest body
 * wins. sim_gpu_unstable_decode splits it. */
#define SIM_GPU_STABLE UINT64_MAX
enum { SIM_GPU_BAD_POSITION = 1, SIM_GPU_BAD_VELOCITY = 2, SIM_GPU_ESCAPED = 3 };

static inline void sim_gpu_unstable_decode(uint64_t key, uint32_t *step, uint32_t *body,
                                           int *cause) {
    *step = (uint32_t)(key >> 36);
    *body = (uint32_t)(key >> 4);
    *cause = (int)(key & 15u);
}

/* Counters the kernels of a step sum into several slots (by warp or block) so that their
 * atomics do not all meet at one address; the host adds the slots. */
#define SIM_GPU_COUNT_SLOTS 16

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
