/* SPDX-License-Identifier: MIT
 * nbsim — capture buffers for trajectory dumps: pinned host memory, the completion event, and
 * the permutation back to the user's order. The copies themselves are enqueued by each backend
 * (cuda_export.cu, cpu_backend.c). */
#include <stdlib.h>
#include <string.h>

#include "nbsim/capture.h"
#include "nbsim/cuda_check.h"

sim_status sim_capture_alloc(sim_capture *c, uint32_t n, int pinned, sim_error *err) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->pinned = pinned;
    const size_t v4 = (size_t)n * sizeof(sim_vec4f), idx = (size_t)n * sizeof(uint32_t);
    if (pinned) {
        /* Portable: usable whatever device is current on the thread that enqueues the copy. */
        const unsigned flags = cudaHostAllocPortable;
        cudaError_t e = cudaHostAlloc((void **)&c->pos, v4, flags);
        e = e == cudaSuccess ? cudaHostAlloc((void **)&c->vel, v4, flags) : e;
        e = e == cudaSuccess ? cudaHostAlloc((void **)&c->force, v4, flags) : e;
        e = e == cudaSuccess ? cudaHostAlloc((void **)&c->spin, v4, flags) : e;
        e = e == cudaSuccess ? cudaHostAlloc((void **)&c->order, idx, flags) : e;
        cudaEvent_t ev = nullptr;
        e = e == cudaSuccess ? cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) : e;
        c->event = ev;
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            sim_capture_free(c);
            return sim_fail(err, e == cudaErrorMemoryAllocation ? SIM_OUT_OF_MEMORY : SIM_CUDA,
                            "cannot allocate %.1f MiB of pinned host memory for trajectory "
                            "frames of %u bodies: %s",
                            (4.0 * (double)v4 + (double)idx) / 1048576.0, n, cudaGetErrorString(e));
        }
        return SIM_OK;
    }
    c->pos = (sim_vec4f *)malloc(v4);
    c->vel = (sim_vec4f *)malloc(v4);
    c->force = (sim_vec4f *)malloc(v4);
    c->spin = (sim_vec4f *)calloc(n ? n : 1, sizeof(sim_vec4f));
    c->order = (uint32_t *)malloc(idx);
    if (c->pos == nullptr || c->vel == nullptr || c->force == nullptr || c->spin == nullptr ||
        c->order == nullptr) {
        sim_capture_free(c);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate host memory for trajectory frames of %u bodies", n);
    }
    return SIM_OK;
}

void sim_capture_free(sim_capture *c) {
    if (c == nullptr) {
        return;
    }
    if (c->pinned) {
        /* Errors ignored: free what can be freed, also after a device fault. */
        if (c->event != nullptr) {
            (void)cudaEventSynchronize((cudaEvent_t)c->event);
            (void)cudaEventDestroy((cudaEvent_t)c->event);
        }
        (void)cudaFreeHost(c->pos);
        (void)cudaFreeHost(c->vel);
        (void)cudaFreeHost(c->force);
        (void)cudaFreeHost(c->spin);
        (void)cudaFreeHost(c->order);
    } else {
        free(c->pos);
        free(c->vel);
        free(c->force);
        free(c->spin);
        free(c->order);
    }
    memset(c, 0, sizeof *c);
}

sim_status sim_capture_wait(sim_capture *c, sim_error *err) {
    if (c->pending && c->event != nullptr) {
        c->pending = 0;
        SIM_CUDA_TRY(cudaEventSynchronize((cudaEvent_t)c->event));
    }
    c->pending = 0;
    return SIM_OK;
}

void sim_capture_user_order(const sim_capture *c, sim_vec4f *pos, sim_vec4f *vel, sim_vec4f *force,
                            const sim_vec4f **out_pos, const sim_vec4f **out_vel,
                            const sim_vec4f **out_force) {
    if (!c->has_order) {
        *out_pos = c->pos;
        *out_vel = c->vel;
        *out_force = c->force;
        return;
    }
    for (uint32_t slot = 0; slot < c->n; ++slot) {
        const uint32_t user = c->order[slot];
        SIM_ASSERT(user < c->n);
        pos[user] = c->pos[slot];
        vel[user] = c->vel[slot];
        force[user] = c->force[slot];
    }
    *out_pos = pos;
    *out_vel = vel;
    *out_force = force;
}

const sim_vec4f *sim_capture_user_spin(const sim_capture *c, sim_vec4f *spin) {
    if (!c->has_order || c->spin_user_order) {
        return c->spin;
    }
    for (uint32_t slot = 0; slot < c->n; ++slot) {
        spin[c->order[slot]] = c->spin[slot];
    }
    return spin;
}
