/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend: owns the device arrays, streams and events, plans the maps and
 * drives the kernels step by step. One host sync per frame (the instability flag and timings).
 *
 * A step: verlet_first(F_n) | F = 0, pair kernel(s) | triplet kernel(s) | body force +
 * verlet_second (F_{n+1} stored as the last total force). Each `|` is a timing event on the
 * main stream; pair_ms, triplet_ms and integrate_ms (both Verlet halves) are the sums of these
 * intervals over the frame, and step_ms is the sum of one event pair around each whole step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_impl.h"
#include "cuda_check.h"
#include "device_state.h"
#include "integrate.h"
#include "pair_kernels.h"
#include "physics.h"
#include "triplet_kernels.h"

namespace {

/* Events recorded per step (the step's first event is the previous step's last). */
constexpr int kEventsPerStep = 4;

struct cuda_backend {
    sim_backend base; /* first: sim_backend * points here */
    int device;
    sim_gpu_bodies bodies;
    sim_gpu_streams streams;
    int streams_made;
    cudaEvent_t *events; /* kEventsPerStep * steps_per_frame + 1, created once, grown */
    int event_count;
    uint64_t *d_flag; /* instability flag, SIM_GPU_STABLE when all is well */
    uint64_t *h_flag; /* pinned */
    double *d_energy; /* kinetic, body potential, contact, ATM */
    float *d_speed;   /* scratch for host exports of speeds */
    sim_physics_f ph;
    float dt;
};

cuda_backend *as_cuda(sim_backend *b) {
    return reinterpret_cast<cuda_backend *>(b);
}

void cuda_destroy(sim_backend *base) {
    cuda_backend *b = as_cuda(base);
    /* Errors are ignored here: destroy must free what it can, also after a device fault. */
    if (b->streams.main != nullptr) {
        (void)cudaStreamSynchronize(b->streams.main);
    }
    for (int e = 0; e < b->event_count; ++e) {
        (void)cudaEventDestroy(b->events[e]);
    }
    free(b->events);
    if (b->streams_made) {
        (void)cudaEventDestroy(b->streams.fork);
        for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
            (void)cudaEventDestroy(b->streams.join[k]);
            (void)cudaStreamDestroy(b->streams.side[k]);
        }
        (void)cudaStreamDestroy(b->streams.main);
    }
    (void)cudaFree(b->bodies.pos);
    (void)cudaFree(b->bodies.vel);
    (void)cudaFree(b->bodies.force);
    (void)cudaFree(b->d_flag);
    (void)cudaFree(b->d_energy);
    (void)cudaFree(b->d_speed);
    (void)cudaFreeHost(b->h_flag);
    free(b);
}

/* Refuses before allocating anything when N bodies cannot fit (state, scratch, and the few
 * hundred bytes of flags and energies). */
sim_status check_memory(uint32_t n, const char *gpu, sim_error *err) {
    size_t free_bytes = 0, total_bytes = 0;
    SIM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    const uint64_t need = (uint64_t)n * SIM_GPU_BYTES_PER_BODY + 4096u;
    if (need > (uint64_t)free_bytes) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies need %llu bytes (%.1f MiB) of GPU memory, but %s has only "
                        "%llu bytes (%.1f MiB) free",
                        n, (unsigned long long)need, (double)need / 1048576.0, gpu,
                        (unsigned long long)free_bytes, (double)free_bytes / 1048576.0);
    }
    return SIM_OK;
}

sim_status make_streams(cuda_backend *b, sim_error *err) {
    sim_gpu_streams *st = &b->streams;
    /* Non-blocking: no implicit sync with the legacy default stream (GL interop, other libs). */
    SIM_CUDA_TRY(cudaStreamCreateWithFlags(&st->main, cudaStreamNonBlocking));
    for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
        SIM_CUDA_TRY(cudaStreamCreateWithFlags(&st->side[k], cudaStreamNonBlocking));
        SIM_CUDA_TRY(cudaEventCreateWithFlags(&st->join[k], cudaEventDisableTiming));
    }
    SIM_CUDA_TRY(cudaEventCreateWithFlags(&st->fork, cudaEventDisableTiming));
    b->streams_made = 1;
    return SIM_OK;
}

sim_status ensure_events(cuda_backend *b, int steps, sim_error *err) {
    const int need = kEventsPerStep * steps + 1;
    if (need <= b->event_count) {
        return SIM_OK;
    }
    cudaEvent_t *ev = (cudaEvent_t *)realloc(b->events, (size_t)need * sizeof *ev);
    if (ev == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d timing events", need);
    }
    b->events = ev;
    while (b->event_count < need) {
        SIM_CUDA_TRY(cudaEventCreate(&b->events[b->event_count]));
        ++b->event_count;
    }
    return SIM_OK;
}

/* The step's force phases on the main stream: pairs (F = 0 first, except for the full sweep,
 * which stores), then triplets. */
sim_status pair_phase(cuda_backend *b, sim_error *err) {
    const sim_gpu_bodies *bd = &b->bodies;
    if (b->base.config.pair_map == SIM_PAIR_FULL) {
        return sim_gpu_pair_forces_full(bd, &b->ph, b->base.config.tile, b->streams.main, err);
    }
    SIM_CUDA_TRY(cudaMemsetAsync(bd->force, 0, (size_t)bd->n * sizeof *bd->force, b->streams.main));
    return sim_gpu_pair_forces(bd, &b->ph, &b->base.pair_plan, b->base.config.tile, &b->streams,
                               err);
}

sim_status triplet_phase(cuda_backend *b, sim_error *err) {
    if (!b->base.params.triplets) {
        return SIM_OK;
    }
    return sim_gpu_triplet_forces(&b->bodies, &b->ph, &b->base.triplet_plan, &b->streams, err);
}

/* F = pairs + triplets + body force for the current positions, without a kick: the force the
 * next step's first half kick uses, after set-up or a change of state or parameters. */
sim_status compute_forces(cuda_backend *b, sim_error *err) {
    SIM_TRY(pair_phase(b, err));
    SIM_TRY(triplet_phase(b, err));
    SIM_TRY(sim_gpu_body_forces(&b->bodies, &b->ph, b->streams.main, err));
    SIM_CUDA_TRY(cudaStreamSynchronize(b->streams.main));
    return SIM_OK;
}

sim_status upload_state(cuda_backend *b, const sim_state *s, sim_error *err) {
    SIM_TRY(sim_state_check_bodies(s, err));
    const uint32_t n = s->n;
    sim_vec4f *h = (sim_vec4f *)malloc((size_t)n * 2 * sizeof *h);
    if (h == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate host staging for %u bodies", n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4d p = s->pos[i], v = s->vel[i];
        h[i] = sim_vec4f{(float)p.x, (float)p.y, (float)p.z, (float)p.w};
        h[n + i] = sim_vec4f{(float)v.x, (float)v.y, (float)v.z, (float)v.w};
    }
    const size_t bytes = (size_t)n * sizeof *h;
    cudaError_t e1 =
        cudaMemcpyAsync(b->bodies.pos, h, bytes, cudaMemcpyHostToDevice, b->streams.main);
    cudaError_t e2 =
        cudaMemcpyAsync(b->bodies.vel, h + n, bytes, cudaMemcpyHostToDevice, b->streams.main);
    cudaError_t e3 = cudaStreamSynchronize(b->streams.main);
    free(h);
    SIM_CUDA_TRY(e1);
    SIM_CUDA_TRY(e2);
    SIM_CUDA_TRY(e3);
    return SIM_OK;
}

sim_status set_physics(cuda_backend *b, const sim_params *p, const sim_state *s, sim_error *err) {
    sim_physics ph = sim_physics_from_params(p);
    const double dt = p->dt > 0.0 ? p->dt : sim_default_dt(p, s);
    if (!(dt > 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "cannot derive a time step (got %g)", dt);
    }
    ph.inv_dt = 1.0 / dt;
    b->ph = sim_physics_to_float(&ph);
    b->dt = (float)dt;
    return SIM_OK;
}

sim_status read_state_impl(cuda_backend *b, sim_state *out, sim_vec3d *forces, sim_error *err) {
    const uint32_t n = b->base.n;
    sim_vec4f *h = (sim_vec4f *)malloc((size_t)n * 3 * sizeof *h);
    if (h == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate host staging for %u bodies", n);
    }
    const size_t bytes = (size_t)n * sizeof *h;
    cudaStream_t s = b->streams.main;
    cudaError_t e1 = cudaMemcpyAsync(h, b->bodies.pos, bytes, cudaMemcpyDeviceToHost, s);
    cudaError_t e2 = cudaMemcpyAsync(h + n, b->bodies.vel, bytes, cudaMemcpyDeviceToHost, s);
    cudaError_t e3 = forces != nullptr ? cudaMemcpyAsync(h + 2 * (size_t)n, b->bodies.force, bytes,
                                                         cudaMemcpyDeviceToHost, s)
                                       : cudaSuccess;
    cudaError_t e4 = cudaStreamSynchronize(s);
    if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess || e4 != cudaSuccess) {
        free(h);
        SIM_CUDA_TRY(e1);
        SIM_CUDA_TRY(e2);
        SIM_CUDA_TRY(e3);
        SIM_CUDA_TRY(e4);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4f p = h[i], v = h[n + i];
        out->pos[i] = sim_vec4d{p.x, p.y, p.z, p.w};
        out->vel[i] = sim_vec4d{v.x, v.y, v.z, v.w};
        if (forces != nullptr) {
            const sim_vec4f f = h[2 * (size_t)n + i];
            forces[i] = sim_vec3d{f.x, f.y, f.z};
        }
    }
    free(h);
    return SIM_OK;
}

/* ---- the ops ---- */

sim_status cuda_run_frame(sim_backend *base, sim_frame_timing *t, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    const int steps = base->params.steps_per_frame;
    SIM_TRY(ensure_events(b, steps, err));
    cudaStream_t s = b->streams.main;
    SIM_CUDA_TRY(cudaMemsetAsync(b->d_flag, 0xff, sizeof *b->d_flag, s));
    SIM_CUDA_TRY(cudaEventRecord(b->events[0], s));
    for (int k = 0; k < steps; ++k) {
        cudaEvent_t *ev = b->events + kEventsPerStep * k;
        SIM_TRY(sim_gpu_verlet_first(&b->bodies, b->dt, s, err));
        SIM_CUDA_TRY(cudaEventRecord(ev[1], s));
        SIM_TRY(pair_phase(b, err));
        SIM_CUDA_TRY(cudaEventRecord(ev[2], s));
        SIM_TRY(triplet_phase(b, err));
        SIM_CUDA_TRY(cudaEventRecord(ev[3], s));
        SIM_TRY(sim_gpu_verlet_second(&b->bodies, &b->ph, b->dt, b->d_flag, (uint32_t)k, s, err));
        SIM_CUDA_TRY(cudaEventRecord(ev[4], s));
    }
    SIM_CUDA_TRY(
        cudaMemcpyAsync(b->h_flag, b->d_flag, sizeof *b->d_flag, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s)); /* the frame's only host sync */

    memset(t, 0, sizeof *t);
    for (int k = 0; k < steps; ++k) {
        cudaEvent_t *ev = b->events + kEventsPerStep * k;
        float ms[kEventsPerStep], step_ms;
        for (int q = 0; q < kEventsPerStep; ++q) {
            SIM_CUDA_TRY(cudaEventElapsedTime(&ms[q], ev[q], ev[q + 1]));
        }
        SIM_CUDA_TRY(cudaEventElapsedTime(&step_ms, ev[0], ev[kEventsPerStep]));
        t->integrate_ms += (double)ms[0] + (double)ms[3];
        t->pair_ms += ms[1];
        t->triplet_ms += ms[2];
        t->step_ms += step_ms;
    }
    t->steps = steps;
    sim_backend_count_blocks(base, t);

    if (*b->h_flag != SIM_GPU_STABLE) {
        uint32_t step, body;
        int cause;
        sim_gpu_unstable_decode(*b->h_flag, &step, &body, &cause);
        sim_vec4f p = {0.0f, 0.0f, 0.0f, 0.0f};
        SIM_CUDA_TRY(cudaMemcpy(&p, b->bodies.pos + body, sizeof p, cudaMemcpyDeviceToHost));
        const double lim = SIM_ESCAPE_FACTOR * base->params.box_half;
        if (cause == SIM_GPU_BAD_POSITION || cause == SIM_GPU_BAD_VELOCITY) {
            return sim_fail(err, SIM_UNSTABLE,
                            "body %u: %s is NaN or infinite after step %u of the frame (the time "
                            "step %g s is probably too large)",
                            body, cause == SIM_GPU_BAD_POSITION ? "position" : "velocity", step + 1,
                            (double)b->dt);
        }
        return sim_fail(err, SIM_UNSTABLE,
                        "body %u left the box after step %u of the frame: a coordinate is beyond "
                        "%g m (%g x box_half); at the end of the frame it is at (%g, %g, %g)",
                        body, step + 1, lim, SIM_ESCAPE_FACTOR, (double)p.x, (double)p.y,
                        (double)p.z);
    }
    return SIM_OK;
}

bool same_physics(const sim_physics_f &a, const sim_physics_f &b) {
    return a.stiffness == b.stiffness && a.damping_ratio == b.damping_ratio &&
           a.atm_nu == b.atm_nu && a.atm_cutoff2 == b.atm_cutoff2 && a.box_half == b.box_half &&
           a.hertz == b.hertz && a.gx == b.gx && a.gy == b.gy && a.gz == b.gz;
}

sim_status cuda_set_params(sim_backend *base, const sim_params *p, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    sim_state tmp = {0, nullptr, nullptr};
    if (!(p->dt > 0.0)) { /* the default step depends on masses, radii, speeds: read them back */
        SIM_TRY(sim_state_alloc(&tmp, base->n, err));
        sim_status s = read_state_impl(b, &tmp, nullptr, err);
        if (s != SIM_OK) {
            sim_state_free(&tmp);
            return s;
        }
    }
    const sim_physics_f old = b->ph;
    const int old_triplets = base->params.triplets;
    sim_status s = set_physics(b, p, &tmp, err);
    sim_state_free(&tmp);
    SIM_TRY(s);
    base->params = *p;
    /* As the CPU reference: a new model needs the force the next half kick uses recomputed;
     * a new dt or frame length keeps F_n as it is. */
    if (!same_physics(old, b->ph) || old_triplets != p->triplets) {
        return compute_forces(b, err);
    }
    return SIM_OK;
}

sim_status cuda_set_state(sim_backend *base, const sim_state *st, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    SIM_TRY(upload_state(b, st, err));
    SIM_TRY(set_physics(b, &base->params, st, err)); /* the default dt depends on the state */
    return compute_forces(b, err);
}

sim_status cuda_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces, sim_error *err) {
    return read_state_impl(as_cuda(base), out, forces, err);
}

sim_status cuda_energy(sim_backend *base, sim_energy *e, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    double h[4];
    SIM_CUDA_TRY(cudaMemsetAsync(b->d_energy, 0, sizeof h, s));
    SIM_TRY(sim_gpu_body_energy(&b->bodies, &b->ph, b->d_energy, s, err));
    SIM_TRY(sim_gpu_pair_energy(&b->bodies, &b->ph, b->d_energy + 2, s, err));
    if (base->params.triplets) {
        SIM_TRY(sim_gpu_triplet_energy(&b->bodies, &b->ph, b->d_energy + 3, s, err));
    }
    SIM_CUDA_TRY(cudaMemcpyAsync(h, b->d_energy, sizeof h, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    e->kinetic = h[0];
    e->gravity = h[1];
    e->contact = h[2];
    e->atm = h[3];
    e->total = h[0] + h[1] + h[2] + h[3];
    return SIM_OK;
}

sim_status cuda_export_positions(sim_backend *base, sim_vec4f *pos, float *speed, int on_device,
                                 sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    const size_t n = base->n;
    if (on_device) {
        SIM_TRY(sim_gpu_export(&b->bodies, pos, speed, s, err));
    } else {
        SIM_CUDA_TRY(
            cudaMemcpyAsync(pos, b->bodies.pos, n * sizeof *pos, cudaMemcpyDeviceToHost, s));
        if (speed != nullptr) {
            SIM_TRY(sim_gpu_export(&b->bodies, nullptr, b->d_speed, s, err));
            SIM_CUDA_TRY(
                cudaMemcpyAsync(speed, b->d_speed, n * sizeof *speed, cudaMemcpyDeviceToHost, s));
        }
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    return SIM_OK;
}

/* Trajectory capture (capture.h): device -> pinned host copies on the main stream, then an event
 * the recorder's writer thread waits on. Stream order puts them after the frame's kernels and
 * before the next frame's, so the simulation thread never waits; the GPU spends 48 bytes per
 * body of copy time (about 2 ms per million bodies over PCIe 5). Bodies are in the user's order
 * today; once they are kept sorted on the device, also copy the slot -> user index array into
 * c->order here and set c->has_order = 1. */
sim_status cuda_capture(sim_backend *base, sim_capture *c, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    const size_t bytes = (size_t)base->n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(c->pos, b->bodies.pos, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->vel, b->bodies.vel, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->force, b->bodies.force, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaEventRecord((cudaEvent_t)c->event, s));
    c->has_order = 0;
    c->pending = 1;
    return SIM_OK;
}

const sim_backend_ops cuda_ops = {
    cuda_destroy,    cuda_run_frame, cuda_set_params,       cuda_set_state,
    cuda_read_state, cuda_energy,    cuda_export_positions, cuda_capture,
};

/* The memory check can race with other processes: a failed allocation is still an
 * out-of-memory refusal, not a CUDA error. */
sim_status device_alloc(void **p, size_t bytes, const char *what, uint32_t n, sim_error *err) {
    const cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu bytes of GPU memory for %s", n,
                        (unsigned long long)bytes, what);
    }
    SIM_CUDA_TRY(e);
    return SIM_OK;
}

sim_status create_impl(cuda_backend *b, const sim_state *s, sim_error *err) {
    const uint32_t n = s->n;
    const size_t v4 = (size_t)n * sizeof(sim_vec4f);
    b->bodies.n = n;
    SIM_TRY(device_alloc((void **)&b->bodies.pos, v4, "positions", n, err));
    SIM_TRY(device_alloc((void **)&b->bodies.vel, v4, "velocities", n, err));
    SIM_TRY(device_alloc((void **)&b->bodies.force, v4, "forces", n, err));
    SIM_TRY(device_alloc((void **)&b->d_speed, (size_t)n * sizeof(float), "speeds", n, err));
    SIM_TRY(device_alloc((void **)&b->d_flag, sizeof *b->d_flag, "flag", n, err));
    SIM_TRY(device_alloc((void **)&b->d_energy, 4 * sizeof *b->d_energy, "energies", n, err));
    SIM_CUDA_TRY(cudaMallocHost((void **)&b->h_flag, sizeof *b->h_flag));
    SIM_TRY(make_streams(b, err));
    SIM_TRY(ensure_events(b, b->base.params.steps_per_frame, err));
    SIM_TRY(sim_backend_plan_maps(&b->base, b->base.config.pair_map, b->base.config.triplet_map,
                                  b->base.params.triplets, err));
    SIM_TRY(set_physics(b, &b->base.params, s, err));
    SIM_TRY(upload_state(b, s, err));
    return compute_forces(b, err);
}

} // namespace

sim_status sim_cuda_backend_create(const sim_backend_config *c, const sim_params *p,
                                   const sim_state *s, sim_backend **out, sim_error *err) {
    *out = nullptr;
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_NO_DEVICE, "no CUDA device found (%s)",
                        ce != cudaSuccess ? cudaGetErrorString(ce)
                                          : "the driver reports 0 devices");
    }
    const int device = 0;
    cudaDeviceProp prop;
    SIM_CUDA_TRY(cudaSetDevice(device));
    SIM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    /* Before anything is allocated or the state is read: an impossible N fails fast. */
    SIM_TRY(check_memory(s->n, prop.name, err));

    cuda_backend *b = (cuda_backend *)calloc(1, sizeof *b);
    if (b == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the CUDA backend");
    }
    b->base.ops = &cuda_ops;
    b->base.config = *c;
    b->base.params = *p;
    b->base.n = s->n;
    /* Truncating a long product name is fine. */
    const size_t len = strnlen(prop.name, sizeof b->base.device_name - 1);
    memcpy(b->base.device_name, prop.name, len);
    b->base.device_name[len] = '\0';
    b->device = device;
    const sim_status st = create_impl(b, s, err);
    if (st != SIM_OK) {
        cuda_destroy(&b->base);
        return st;
    }
    *out = &b->base;
    return SIM_OK;
}
