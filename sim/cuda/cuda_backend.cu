/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend (cuda_backend_impl.h says how its files share the work): set-up,
 * tear-down, the changes of parameters, state and culling, and its sim_backend table. A frame
 * is the stepper's (run_frame = sim_step_frame, step/stepper.h) through the primitives of
 * cuda_step.cu: kernels on one stream, CUDA events between the phases, one host sync per frame
 * (and, while a stop flag is watched, the waits the stepper asks for). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend_impl.h"
#include "nbsim/memory_plan.h"
#include "nbsim/size_limits.h"

namespace {

/* Refuses before allocating anything when N bodies cannot fit: the memory plan (memory_plan.h:
 * each allocation this backend makes at its start) with the bodies' own radii and CUB's own
 * scratch for the sort, against the device's free memory. */
sim_status check_memory(const sim_state *s, const sim_backend_config *c, const sim_params *p,
                        const char *gpu, sim_error *err) {
    size_t free_bytes = 0, total_bytes = 0;
    SIM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    /* N alone first, before the state is read: the least any radii and grid take */
    sim_memory_plan least;
    sim_memory_plan_cuda(s->n, c, p, 1.0, 1.0, 1u, &least);
    least.free_bytes = free_bytes;
    least.total_bytes = total_bytes;
    least.limit = sim_run_max_bodies(c, p);
    least.largest_n = sim_memory_plan_largest(c, p, 1.0, 1.0, least.limit, free_bytes);
    SIM_TRY(sim_memory_plan_check(&least, gpu, err));
    double r_min = INFINITY, r_max = 0.0;
    for (uint32_t i = 0; i < s->n; ++i) {
        r_min = fmin(r_min, s->pos[i].w);
        r_max = fmax(r_max, s->pos[i].w);
    }
    /* the grid the lists will take (cuda_lists.cu: the skin and step the backend derives) */
    const double dt = p->dt > 0.0 ? p->dt : sim_default_dt(p, s);
    sim_cell_grid g;
    const uint64_t cells =
        sim_cell_grid_shape(p, r_max, sim_nlist_skin(p, s, dt), s->n, &g) ? g.cells : 0u;
    sim_memory_plan plan;
    sim_memory_plan_cuda(s->n, c, p, r_min, r_max, cells, &plan);
    if (c->cull) { /* CUB's figure in place of the plan's bound */
        size_t sort = 0;
        SIM_TRY(sim_gpu_sort_temp_bytes(s->n, &sort, err));
        plan.need = plan.need - (uint64_t)(SIM_MEMORY_SORT_PER_BODY * s->n) -
                    SIM_MEMORY_SORT_FIXED + sort;
    }
    plan.free_bytes = free_bytes;
    plan.total_bytes = total_bytes;
    plan.limit = sim_run_max_bodies(c, p);
    plan.largest_n = sim_memory_plan_largest(c, p, r_min, r_max, plan.limit, free_bytes);
    return sim_memory_plan_check(&plan, gpu, err);
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

void cuda_destroy(sim_backend *base) {
    cuda_backend *b = sim_cuda_of(base);
    /* Errors are ignored here: destroy must free what it can, also after a device fault. */
    if (b->streams.main != nullptr) {
        (void)cudaStreamSynchronize(b->streams.main);
    }
    sim_cuda_graphs_free(b);
    sim_cuda_events_free(b);
    if (b->streams_made) {
        (void)cudaEventDestroy(b->streams.fork);
        for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
            (void)cudaEventDestroy(b->streams.join[k]);
            (void)cudaStreamDestroy(b->streams.side[k]);
        }
        (void)cudaStreamDestroy(b->streams.main);
    }
    sim_cuda_save_free(b);
    sim_cuda_friction_free(&b->fric);
    (void)cudaFree(b->bodies.pos);
    (void)cudaFree(b->bodies.vel);
    (void)cudaFree(b->bodies.force);
    (void)cudaFree(b->d_flag);
    (void)cudaFree(b->d_energy);
    (void)cudaFree(b->d_speed);
    (void)cudaFreeHost(b->h_flag);
    sim_cuda_cull_free(b);
    sim_cuda_tcull_free(b);
    sim_cuda_atm_free(b);
    sim_cuda_nlist_free(b);
    sim_stepper_free(&b->base.stepper);
    free(b);
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
    ph.normal.inv_dt = 1.0 / dt;
    b->ph = sim_physics_to_float(&ph);
    b->cull.period = b->ph.box.period; /* and again before each cull: allocations clear these */
    b->nlist.period = b->ph.box.period;
    b->dt = (float)dt;
    b->base.nlist_skin = sim_nlist_skin(p, s, dt);
    if (s->n > 0) { /* else the radii are the ones held */
        b->max_radius = sim_state_max_radius(s);
    }
    b->base.atm_reach_bodies = sim_atm_list_neighbours(p, s, b->base.nlist_skin);
    return SIM_OK;
}

/* The physics and dt of p; the forces are the stepper's (backend.c asks it when the model
 * changed). Friction turned on starts with no histories (tables sized from the radii), turned
 * off drops them; the spin stays. */
sim_status cuda_set_params(sim_backend *base, const sim_params *p, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    sim_state tmp = {0, nullptr, nullptr, nullptr, nullptr, 0};
    const int friction = sim_params_have_friction(p);
    const int atm_estimate = p->atm_cutoff > 0.0 && base->n >= 2;
    if (!(p->dt > 0.0) || !p->skin.set || (friction && !b->fric.on) || atm_estimate) {
        /* the default step and skin depend on masses, radii, speeds, the tables' rows on the
         * radii, the ATM lists' choice (bodies within reach) on the positions: read them back */
        SIM_TRY(sim_state_alloc(&tmp, base->n, err));
        sim_status s = sim_cuda_read_state(base, &tmp, nullptr, err);
        if (s != SIM_OK) {
            sim_state_free(&tmp);
            return s;
        }
    }
    sim_status s = SIM_OK;
    const int made = friction && !b->fric.on;
    if (made) { /* before anything changes: a table that cannot be had changes nothing */
        tmp.contact_count = 0; /* friction turned on: no histories */
        s = sim_cuda_friction_ready(&b->fric, 1, &tmp, 1, b->streams.main, err);
    }
    if (s == SIM_OK) {
        s = set_physics(b, p, &tmp, err);
    }
    if (made ? s != SIM_OK : !friction) { /* off, or on and the step refused: no tables */
        (void)sim_cuda_friction_ready(&b->fric, 0, &tmp, 0, b->streams.main, nullptr);
    }
    sim_state_free(&tmp);
    SIM_TRY(s);
    base->params = *p;
    if (b->nlist_ready) { /* built for another skin: rebuilt before anything reads them */
        SIM_TRY(sim_cuda_nlist_stale(b, err));
    }
    if (b->atm_ready) { /* the ATM lists too (another skin or cut-off) */
        SIM_TRY(sim_cuda_atm_stale(b, err));
    }
    return SIM_OK;
}

/* The bodies of st, uploaded in the user's order (the body order back to the identity); then
 * backend.c has the stepper sort and compute their forces. */
sim_status cuda_set_state(sim_backend *base, const sim_state *st, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    SIM_TRY(sim_state_check_bodies(st, err));
    /* the tables first: a refused history changes nothing */
    SIM_TRY(sim_cuda_friction_ready(&b->fric, sim_params_have_friction(&base->params), st, 0,
                                    b->streams.main, err));
    SIM_TRY(sim_cuda_friction_upload_spin(&b->fric, st, b->streams.main, err));
    SIM_TRY(upload_state(b, st, err));
    SIM_TRY(set_physics(b, &base->params, st, err)); /* the default dt depends on the state */
    if (b->cull_ready) {
        SIM_TRY(sim_gpu_iota(b->cull.perm, base->n, b->streams.main, err));
    }
    if (b->nlist_ready) { /* other bodies (radii): rebuilt before anything reads them */
        SIM_TRY(sim_cuda_nlist_stale(b, err));
    }
    if (b->atm_ready) {
        SIM_TRY(sim_cuda_atm_stale(b, err));
    }
    return SIM_OK;
}

/* Culling on: its buffers (backend.c has the stepper sort first); off: the order stays as it
 * is, nothing sorts it any more. */
sim_status cuda_set_cull(sim_backend *base, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    return base->config.cull ? sim_cuda_cull_prepare(b, err) : SIM_OK;
}

const sim_backend_ops cuda_ops = {
    cuda_destroy,        sim_step_frame,      cuda_set_params,           cuda_set_state,
    sim_cuda_read_state, sim_cuda_energy,     sim_cuda_export_positions, sim_cuda_capture,
    cuda_set_cull,       sim_cuda_tile_pairs, sim_cuda_contacts,         sim_cuda_tile_triples,
};

sim_status create_impl(cuda_backend *b, const sim_state *s, sim_error *err) {
    const uint32_t n = s->n;
    const size_t v4 = (size_t)n * sizeof(sim_vec4f);
    b->bodies.n = n;
    SIM_TRY(sim_cuda_alloc((void **)&b->bodies.pos, v4, "positions", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&b->bodies.vel, v4, "velocities", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&b->bodies.force, v4, "forces", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&b->d_speed, (size_t)n * sizeof(float), "speeds", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&b->d_flag, sizeof *b->d_flag, "flag", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&b->d_energy, 6 * sizeof *b->d_energy, "energies", n, err));
    SIM_TRY(sim_cuda_friction_alloc(&b->fric, n, err));
    SIM_CUDA_TRY(cudaMallocHost((void **)&b->h_flag, sizeof *b->h_flag));
    SIM_TRY(make_streams(b, err));
    SIM_TRY(sim_backend_plan_maps(&b->base, b->base.config.pair_map, b->base.config.triplet_map,
                                  &b->base.params, err));
    SIM_TRY(set_physics(b, &b->base.params, s, err));
    SIM_TRY(upload_state(b, s, err));
    SIM_TRY(sim_cuda_friction_upload_spin(&b->fric, s, b->streams.main, err));
    SIM_TRY(sim_cuda_friction_ready(&b->fric, sim_params_have_friction(&b->base.params), s, 0,
                                    b->streams.main, err));
    if (b->base.config.cull) {
        SIM_TRY(sim_cuda_cull_prepare(b, err));
    }
    /* F_0: a step's work, stopped like one (nothing to restore: the backend is not made); its
     * times are the sweeps' first measured rates. */
    const sim_status st = sim_step_forces(&b->base, 1, err);
    if (st == SIM_INTERRUPTED) {
        return sim_fail(err, SIM_INTERRUPTED, "stopped while computing the initial forces");
    }
    return st;
}

} // namespace

/* The memory check can race with other processes: a failed allocation is still an
 * out-of-memory refusal, not a CUDA error. */
sim_status sim_cuda_backend_create(const sim_backend_config *c, const sim_params *p,
                                   const sim_state *s, const sim_rank *rank, sim_backend **out,
                                   sim_error *err) {
    *out = nullptr;
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_NO_DEVICE, "no CUDA device found (%s)",
                        ce != cudaSuccess ? cudaGetErrorString(ce)
                                          : "the driver reports 0 devices");
    }
    const int device = rank != nullptr ? rank->device : 0;
    if (device >= count) {
        return sim_fail(err, SIM_NO_DEVICE, "rank %d needs CUDA device %d, but %d %s visible",
                        rank != nullptr ? rank->rank : 0, device, count, count == 1 ? "is" : "are");
    }
    cudaDeviceProp prop;
    SIM_CUDA_TRY(cudaSetDevice(device));
    SIM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    /* Before anything is allocated or the state is read: an impossible N fails fast. */
    SIM_TRY(check_memory(s, c, p, prop.name, err));

    cuda_backend *b = (cuda_backend *)calloc(1, sizeof *b);
    if (b == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the CUDA backend");
    }
    b->base.ops = &cuda_ops;
    sim_stepper_init(&b->base.stepper, &sim_cuda_step_ops);
    sim_backend_take_config(&b->base, c);
    b->base.params = *p;
    b->base.n = s->n;
    b->base.rank = rank != nullptr ? *rank : sim_rank{0, 1, device, nullptr};
    /* Truncating a long product name is fine. */
    const size_t len = strnlen(prop.name, sizeof b->base.device_name - 1);
    memcpy(b->base.device_name, prop.name, len);
    b->base.device_name[len] = '\0';
    b->device = device;
    b->deferred_kick = -1; /* none */
    b->sm_count = prop.multiProcessorCount;
    const sim_status st = create_impl(b, s, err);
    if (st != SIM_OK) {
        cuda_destroy(&b->base);
        return st;
    }
    *out = &b->base;
    return SIM_OK;
}
