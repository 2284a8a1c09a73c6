/* SPDX-License-Identifier: MIT
 * nbsim — a frame copied off a backend without stalling it, for trajectory dumps.
 *
 * The simulation thread calls sim_backend_capture (nbsim/internal/backend.h), which enqueues device->host
 * copies of positions, velocities and last forces into this capture's host buffers on the
 * backend's stream and records an event: it returns at once, and the copies run in stream order
 * after the frame's kernels (so they see the finished frame) and before the next frame's (so the
 * next frame cannot overwrite what is being copied). Another thread (the recorder's writer)
 * then calls sim_capture_wait, which blocks until the copies have landed, and
 * sim_capture_user_order, which puts the bodies back into the user's order.
 *
 * CUDA: the buffers are pinned (page-locked) host memory, so the copies are true asynchronous
 * DMA at full bus speed (pageable memory would make cudaMemcpyAsync synchronous). CPU backend:
 * the capture converts the double state to floats at once (there is no device to wait for).
 *
 * Body order: a backend may keep bodies in its own order on the device (sorted along a
 * space-filling curve, say). It then also copies its slot -> user index array into `order` and
 * sets has_order; sim_capture_user_order applies it. */
#ifndef SIM_CAPTURE_H
#define SIM_CAPTURE_H

#include "nbsim/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_capture {
    uint32_t n;
    sim_vec4f *pos;   /* (x, y, z, radius) [m], in device slot order */
    sim_vec4f *vel;   /* (vx, vy, vz, mass) [m/s, kg] */
    sim_vec4f *force; /* (fx, fy, fz, unused) [N]: the last total force */
    sim_vec4f *spin;  /* (wx, wy, wz, unused) [rad/s]: slot order too, unless spin_user_order */
    int spin_user_order; /* spin is in the user's order already (a backend that keeps the spin
                            on the host: backend.c writes it) */
    uint32_t *order;  /* slot -> user index (n entries) when has_order */
    int has_order;
    int pinned;  /* buffers from cudaHostAlloc (else malloc) */
    void *event; /* cudaEvent_t recorded after the copies; NULL when a capture is synchronous */
    int pending; /* copies enqueued and not yet waited for */
} sim_capture;

/* Host buffers for n bodies: pinned with an event when `pinned` (CUDA backend; needs a device),
 * else plain memory. SIM_OUT_OF_MEMORY / SIM_CUDA name what failed. */
sim_status sim_capture_alloc(sim_capture *c, uint32_t n, int pinned, sim_error *err);
void sim_capture_free(sim_capture *c);

/* Blocks until the copies of the last sim_backend_capture into c have landed (returns at once
 * when none is pending). Any thread. */
sim_status sim_capture_wait(sim_capture *c, sim_error *err);

/* After sim_capture_wait: the bodies in the user's order. Without an order the capture's own
 * buffers are already in it and are returned (no copy); with one, the bodies are scattered into
 * pos/vel/force (n entries each, caller's) and those are returned. */
void sim_capture_user_order(const sim_capture *c, sim_vec4f *pos, sim_vec4f *vel, sim_vec4f *force,
                            const sim_vec4f **out_pos, const sim_vec4f **out_vel,
                            const sim_vec4f **out_force);

/* After sim_capture_wait: the spins in the user's order: the capture's own buffer when it is in
 * that order already, else scattered into spin (n entries, caller's), which is returned. */
const sim_vec4f *sim_capture_user_spin(const sim_capture *c, sim_vec4f *spin);

#ifdef __cplusplus
}
#endif

#endif /* SIM_CAPTURE_H */
