/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: the bodies on the device and the streams the kernel
 * drivers launch on. Plain structs of device pointers so drivers keep a C-style argument list. */
#ifndef SIM_DEVICE_STATE_H
#define SIM_DEVICE_STATE_H

#include <cuda_runtime.h>

#include "sim_base.h"

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
