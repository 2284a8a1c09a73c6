/* SPDX-License-Identifier: MIT
 * nbsim — what leaves the CUDA backend's device (cuda_backend_impl.h): the state and the last
 * forces, positions for the viewer, trajectory captures, energies, and the test hooks' lists and
 * contacts. The bodies sit in sorted slots while culling keeps them sorted; everything here puts
 * them back in the user's order (on the host, in scratch, or straight into the caller's device
 * buffer). Each of these syncs, outside the frames' steps, except the capture, which only
 * enqueues its copies. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend_impl.h"
#include "cuda/friction_kernels.h"
#include "cuda/integrate.h"
#include "cuda/pair_kernels.h"
#include "cuda/triplet_kernels.h"

/* Bodies read_state stages on the host at a time: 48 MB, where a whole state took 52 bytes a body
 * beside the caller's copy. */
#define READ_CHUNK (1u << 20)

/* The state a chunk of slots at a time: the slots' positions, velocities and forces into a host
 * staging buffer, then into the user's order through the body order (copied whole: 4 bytes a
 * body). */
static sim_status read_state_impl(cuda_backend *b, sim_state *out, sim_vec3d *forces,
                                  sim_error *err) {
    const uint32_t n = b->base.n;
    const uint32_t *d_perm = sim_cuda_body_order(b);
    const size_t chunk = n < READ_CHUNK ? n : READ_CHUNK;
    sim_vec4f *h = (sim_vec4f *)malloc(3 * (chunk ? chunk : 1) * sizeof(sim_vec4f));
    uint32_t *perm = d_perm != nullptr ? (uint32_t *)malloc((n ? n : 1) * sizeof *perm) : nullptr;
    if (h == nullptr || (d_perm != nullptr && perm == nullptr)) {
        free(h);
        free(perm);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate host staging for %u bodies", n);
    }
    cudaStream_t s = b->streams.main;
    cudaError_t e = d_perm != nullptr ? cudaMemcpyAsync(perm, d_perm, (size_t)n * sizeof *perm,
                                                        cudaMemcpyDeviceToHost, s)
                                      : cudaSuccess;
    for (size_t first = 0; e == cudaSuccess && first < n; first += chunk) {
        const size_t count = n - first < chunk ? n - first : chunk, bytes = count * sizeof *h;
        e = cudaMemcpyAsync(h, b->bodies.pos + first, bytes, cudaMemcpyDeviceToHost, s);
        e = e == cudaSuccess ? cudaMemcpyAsync(h + chunk, b->bodies.vel + first, bytes,
                                               cudaMemcpyDeviceToHost, s)
                             : e;
        e = e == cudaSuccess && forces != nullptr
                ? cudaMemcpyAsync(h + 2 * chunk, b->bodies.force + first, bytes,
                                  cudaMemcpyDeviceToHost, s)
                : e;
        e = e == cudaSuccess ? cudaStreamSynchronize(s) : e;
        for (size_t k = 0; e == cudaSuccess && k < count; ++k) { /* slot first + k: body i */
            const uint32_t i = perm != nullptr ? perm[first + k] : (uint32_t)(first + k);
            const sim_vec4f p = h[k], v = h[chunk + k];
            out->pos[i] = sim_vec4d{p.x, p.y, p.z, p.w};
            out->vel[i] = sim_vec4d{v.x, v.y, v.z, v.w};
            if (forces != nullptr) {
                const sim_vec4f f = h[2 * chunk + k];
                forces[i] = sim_vec3d{f.x, f.y, f.z};
            }
        }
    }
    free(h);
    if (e != cudaSuccess) {
        free(perm);
        SIM_CUDA_TRY(e);
    }
    /* spin (slot order, as the positions) and, with friction, the last step's histories (the
     * springs beside the lists' entries moved into the table first) */
    sim_status st = sim_cuda_fric_flush(b, err);
    if (st == SIM_OK) {
        st = sim_cuda_friction_read(&b->fric, perm, out, s, err);
    }
    free(perm);
    return st;
}

sim_status sim_cuda_body_position(cuda_backend *b, uint32_t body, sim_vec4f *p, sim_error *err) {
    const uint32_t n = b->base.n, *d_perm = sim_cuda_body_order(b);
    uint32_t slot = body;
    if (d_perm != nullptr) {
        uint32_t *perm = (uint32_t *)malloc((size_t)n * sizeof *perm);
        if (perm == nullptr) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the body order on the host");
        }
        const cudaError_t e =
            cudaMemcpy(perm, d_perm, (size_t)n * sizeof *perm, cudaMemcpyDeviceToHost);
        for (uint32_t s = 0; e == cudaSuccess && s < n; ++s) {
            slot = perm[s] == body ? s : slot;
        }
        free(perm);
        SIM_CUDA_TRY(e);
    }
    SIM_CUDA_TRY(cudaMemcpy(p, b->bodies.pos + slot, sizeof *p, cudaMemcpyDeviceToHost));
    return SIM_OK;
}

sim_status sim_cuda_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces,
                               sim_error *err) {
    return read_state_impl(sim_cuda_of(base), out, forces, err);
}

sim_status sim_cuda_energy(sim_backend *base, sim_energy *e, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    double h[6];
    const int rank = base->rank.rank, world = base->rank.world;
    SIM_TRY(sim_cuda_fric_flush(b, err)); /* the springs' energy reads the table */
    SIM_CUDA_TRY(cudaMemsetAsync(b->d_energy, 0, sizeof h, s));
    if (world <= 1 || rank == 0) { /* per body: once over the ranks */
        SIM_TRY(sim_cuda_body_energy(&b->bodies, &b->ph, b->d_energy, s, err));
    }
    if (sim_backend_listing(base) && b->cull_ready) { /* the lists for these positions */
        SIM_TRY(sim_cuda_pairs_current(b, err));
        SIM_TRY(
            sim_gpu_nlist_energy(&b->bodies, &b->ph, &b->cull, &b->nlist, b->d_energy + 2, s, err));
    } else if (sim_backend_culling(base) && b->cull_ready) { /* the list for these positions */
        SIM_TRY(sim_cuda_cull_phase(b, 0u, err));
        SIM_TRY(sim_cuda_pair_energy_list(&b->bodies, &b->ph, &b->cull, b->d_energy + 2, s, err));
    } else {
        SIM_TRY(sim_cuda_pair_energy(&b->bodies, &b->ph, b->d_energy + 2, rank, world, s, err));
    }
    if (base->params.triplets && sim_cuda_tculled(b)) { /* the list for these positions, untimed */
        SIM_TRY(sim_cuda_tcull_build(b, err));
        SIM_TRY(sim_cuda_triplet_energy_culled(&b->bodies, &b->ph, &b->tcull,
                                               sim_cuda_tcull_share(b), b->d_energy + 3, s, err));
    } else if (base->params.triplets) {
        SIM_TRY(sim_cuda_triplet_energy(&b->bodies, &b->ph, b->d_energy + 3, rank, world, s, err));
    }
    if (world <= 1 || rank == 0) { /* rotation, and the springs of friction's histories */
        const uint32_t *perm = sim_cuda_body_order(b);
        const sim_vec4f *pos_user = b->bodies.pos;
        if (b->fric.on && perm != nullptr) { /* pos_alt is scratch between steps */
            SIM_TRY(sim_cuda_export(&b->bodies, perm, b->cull.pos_alt, nullptr, s, err));
            pos_user = b->cull.pos_alt;
        }
        SIM_TRY(sim_cuda_friction_energy(&b->fric, &b->bodies, perm, pos_user, &b->ph,
                                         b->d_energy + 4, s, err));
    }
    if (world > 1) { /* each rank holds its share's energies */
        SIM_TRY(sim_comm_allreduce_sum(base->rank.comm, b->d_energy, 6, SIM_COMM_DOUBLE, s, err));
    }
    SIM_CUDA_TRY(cudaMemcpyAsync(h, b->d_energy, sizeof h, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    e->kinetic = h[0];
    e->gravity = h[1];
    e->contact = h[2] + h[5];
    e->atm = h[3];
    e->rotational = h[4];
    e->total = h[0] + h[1] + e->contact + h[3] + h[4];
    return SIM_OK;
}

/* An even sample (every > 1) is a strided copy of the bodies in the user's order: the 2-D copy's
 * rows are the sampled bodies, its source pitch `every` bodies. */
static sim_status copy_sample(void *dst, const void *src, size_t size, uint32_t every, size_t count,
                              cudaMemcpyKind kind, cudaStream_t s, sim_error *err) {
    if (every == 1) {
        SIM_CUDA_TRY(cudaMemcpyAsync(dst, src, count * size, kind, s));
    } else {
        SIM_CUDA_TRY(cudaMemcpy2DAsync(dst, size, src, (size_t)every * size, size, count, kind, s));
    }
    return SIM_OK;
}

sim_status sim_cuda_export_positions(sim_backend *base, uint32_t every, sim_vec4f *pos,
                                     float *speed, int on_device, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    const size_t count = sim_sample_count(base->n, every);
    const uint32_t *perm = sim_cuda_body_order(b);
    if (on_device && every == 1) {
        SIM_TRY(sim_cuda_export(&b->bodies, perm, pos, speed, s, err));
    } else {
        /* Bodies in user order on the device first when they are sorted: pos_alt is scratch
         * between steps. */
        const cudaMemcpyKind kind = on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
        const sim_vec4f *src = b->bodies.pos;
        if (perm != nullptr) {
            SIM_TRY(sim_cuda_export(&b->bodies, perm, b->cull.pos_alt, nullptr, s, err));
            src = b->cull.pos_alt;
        }
        SIM_TRY(copy_sample(pos, src, sizeof *pos, every, count, kind, s, err));
        if (speed != nullptr) {
            SIM_TRY(sim_cuda_export(&b->bodies, perm, nullptr, b->d_speed, s, err));
            SIM_TRY(copy_sample(speed, b->d_speed, sizeof *speed, every, count, kind, s, err));
        }
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    return SIM_OK;
}

sim_status sim_cuda_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                               sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    if (!b->cull_ready) {
        return SIM_OK;
    }
    cudaStream_t s = b->streams.main;
    /* The list for the current positions again: a list grown at the end of the last frame holds
     * nothing yet (with neighbour lists: the tile pairs of their build, rebuilt if due). */
    SIM_TRY(sim_cuda_pairs_current(b, err));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->h_counts, b->cull.counts, sizeof *b->h_counts,
                                 cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    *count = b->h_counts->tiles;
    uint64_t have = *count < b->cull.tile_cap ? *count : b->cull.tile_cap;
    have = have < cap ? have : cap;
    if (have > 0) {
        SIM_CUDA_TRY(
            cudaMemcpy(out, b->cull.tile_list, (size_t)have * sizeof *out, cudaMemcpyDeviceToHost));
    }
    return SIM_OK;
}

sim_status sim_cuda_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                 sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    if (!sim_cuda_tculled(b)) {
        return SIM_OK;
    }
    cudaStream_t s = b->streams.main;
    SIM_TRY(sim_cuda_tcull_build(b, err)); /* the list for the current positions again */
    SIM_CUDA_TRY(cudaMemcpyAsync(b->h_tcounts, b->tcull.counts, sizeof *b->h_tcounts,
                                 cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    *count = b->h_tcounts->triples;
    uint64_t have = *count < b->tcull.triple_cap ? *count : b->tcull.triple_cap;
    have = have < cap ? have : cap;
    if (have > 0) {
        SIM_CUDA_TRY(cudaMemcpy(out, b->tcull.triple_list, (size_t)have * sizeof *out,
                                cudaMemcpyDeviceToHost));
    }
    return SIM_OK;
}

sim_status sim_cuda_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap, uint64_t *count,
                             sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    const uint32_t dcap = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
    sim_body_pair *d_out = nullptr;
    uint32_t *d_count = nullptr;
    SIM_TRY(sim_cuda_alloc((void **)&d_out, ((size_t)dcap + 1u) * sizeof *d_out, "contacts",
                           base->n, err));
    sim_status st = sim_cuda_alloc((void **)&d_count, sizeof *d_count, "contacts", base->n, err);
    const int culled = sim_backend_culling(base) && b->cull_ready;
    const int listed = culled && sim_backend_listing(base);
    uint32_t found = 0;
    if (st == SIM_OK && culled) {
        st = sim_cuda_pairs_current(b, err);
    }
    if (st == SIM_OK && cudaMemsetAsync(d_count, 0, sizeof *d_count, s) != cudaSuccess) {
        st = sim_fail(err, SIM_CUDA, "cannot clear the contact count");
    }
    if (st == SIM_OK && listed) { /* the lists as a step would sweep them */
        st = sim_gpu_nlist_contacts(&b->bodies, &b->ph, &b->cull, &b->nlist, sim_cuda_body_order(b),
                                    d_out, dcap, d_count, s, err);
    } else if (st == SIM_OK) {
        st = sim_cuda_pair_contacts(&b->bodies, &b->ph, culled ? &b->cull : nullptr,
                                    base->config.tile, sim_cuda_body_order(b), d_out, dcap, d_count,
                                    &b->streams, err);
    }
    if (st == SIM_OK) {
        const cudaError_t e1 =
            cudaMemcpyAsync(&found, d_count, sizeof found, cudaMemcpyDeviceToHost, s);
        const cudaError_t e2 = cudaStreamSynchronize(s);
        const uint64_t have = found < dcap ? found : dcap;
        const cudaError_t e3 =
            e1 == cudaSuccess && e2 == cudaSuccess && have > 0
                ? cudaMemcpy(out, d_out, (size_t)have * sizeof *out, cudaMemcpyDeviceToHost)
                : cudaSuccess;
        if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess) {
            st = sim_fail(err, SIM_CUDA, "reading the contacts back: %s",
                          cudaGetErrorString(e1 != cudaSuccess   ? e1
                                             : e2 != cudaSuccess ? e2
                                                                 : e3));
        }
    }
    (void)cudaFree(d_out);
    (void)cudaFree(d_count);
    *count = found;
    return st;
}

/* Trajectory capture (capture.h): device -> pinned host copies on the main stream, then an event
 * the recorder's writer thread waits on. Stream order puts them after the frame's kernels and
 * before the next frame's, so the simulation thread never waits; the GPU spends 48 bytes per
 * body (52 with the body order) of copy time over the host link (PCIe), once a dumped frame. While
 * culling keeps the bodies sorted, the slot -> user index array travels too and the writer puts
 * the bodies back in the user's order. */
sim_status sim_cuda_capture(sim_backend *base, sim_capture *c, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    const size_t bytes = (size_t)base->n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(c->pos, b->bodies.pos, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->vel, b->bodies.vel, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->force, b->bodies.force, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->spin, b->fric.spin, bytes, cudaMemcpyDeviceToHost, s));
    c->spin_user_order = 0; /* friction.h: spin is kept in the bodies' slots, as positions */
    const uint32_t *perm = sim_cuda_body_order(b);
    if (perm != nullptr) {
        SIM_CUDA_TRY(cudaMemcpyAsync(c->order, perm, (size_t)base->n * sizeof *c->order,
                                     cudaMemcpyDeviceToHost, s));
    }
    SIM_CUDA_TRY(cudaEventRecord((cudaEvent_t)c->event, s));
    c->has_order = perm != nullptr;
    c->pending = 1;
    return SIM_OK;
}
