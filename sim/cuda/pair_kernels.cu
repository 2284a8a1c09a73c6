/* SPDX-License-Identifier: MIT
 * nbsim — contact forces over all unordered pairs: the host drivers of the symmetric tiled kernel
 * placed by a pair thread map, the culled list's sweep and the nbody-style full sweep (baseline),
 * for forces, energy and the touching pairs (pair_sweep.cuh: the kernels; with friction:
 * pair_friction.cu). */
#include "cuda/pair_sweep.cuh"

namespace {
constexpr int kEnergyTile = 128; /* the energy pass's tile: one launch of the bounding box */
} // namespace

sim_status sim_cuda_bad_tile(uint32_t tile, sim_error *err) {
    return sim_fail(err, SIM_BAD_ARGUMENT, "tile size %u must be " SIM_PAIR_TILE_NAMES, tile);
}

sim_status sim_cuda_pair_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                const sim_map_plan *plan, const sim_map_share *share, uint32_t tile,
                                const sim_gpu_streams *st, sim_error *err) {
    pair_sink sink = {};
    sink.force = b->force;
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return launch_sym<t, kForce>(b, ph, plan, share, sink, st, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(tile, err);
    }
}

sim_status sim_cuda_pair_forces_full(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                     uint32_t tile, int rank, int world, cudaStream_t stream,
                                     sim_error *err) {
    if (!sim_pair_tile_valid(tile)) {
        return sim_cuda_bad_tile(tile, err);
    }
    uint64_t begin = 0, end = 0;
    sim_work_list_range((b->n + tile - 1) / tile, rank, world, &begin, &end);
    if (world > 1) { /* the other ranks' bodies: 0 here, their sums come with the all-reduce */
        SIM_CUDA_TRY(cudaMemsetAsync(b->force, 0, (size_t)b->n * sizeof *b->force, stream));
    }
    return sim_cuda_pair_forces_full_range(b, ph, tile, begin, end, stream, err);
}

sim_status sim_cuda_pair_forces_full_range(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                           uint32_t tile, uint64_t begin, uint64_t end,
                                           cudaStream_t stream, sim_error *err) {
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return launch_full<t>(b, ph, begin, end, nullptr, stream, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(tile, err);
    }
}

sim_status sim_cuda_pair_energy(const sim_gpu_bodies *b, const sim_physics_f *ph, double *d_energy,
                                int rank, int world, cudaStream_t stream, sim_error *err) {
    /* One launch of the bounding box: the simplest plan, valid for every N a map supports (a
     * rank of a multi-GPU run: its rows of it). */
    sim_map_plan plan;
    const uint32_t n_tiles = (b->n + kEnergyTile - 1) / kEnergyTile;
    SIM_TRY(sim_pair_map_plan(SIM_PAIR_MAP_BB, n_tiles, &plan, err));
    sim_map_share share;
    sim_work_share(&plan, rank, world, &share);
    pair_sink sink = {};
    sink.energy = d_energy;
    for (int p = 0; p < share.piece_count; ++p) {
        const sim_map_piece *pc = &share.piece[p];
        const dim3 grid(pc->grid[0], pc->grid[1], pc->grid[2]);
        const uint3 origin = make_uint3(pc->origin[0], pc->origin[1], pc->origin[2]);
        pair_sym_kernel<SIM_PAIR_MAP_BB, kEnergyTile, kEnergy><<<grid, kEnergyTile, 0, stream>>>(
            b->pos, b->vel, b->n, plan.launch[pc->launch], origin, *ph, sink);
        SIM_CUDA_CHECK_LAUNCH("pair_sym_kernel<energy>");
    }
    return SIM_OK;
}

sim_status sim_cuda_pair_list_grid(uint32_t tile, int sm_count, int *grid, sim_error *err) {
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return list_grid<t>(sm_count, grid, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(tile, err);
    }
}

sim_status sim_cuda_pair_forces_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                     const sim_gpu_cull *c, unsigned flags, int count_contacts,
                                     cudaStream_t stream, sim_error *err) {
    pair_sink sink = {};
    sink.force = b->force;
    switch (c->tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return launch_list<t, kForce>(b, ph, c, flags, sink, stream, err, count_contacts);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(c->tile, err);
    }
}

sim_status sim_cuda_pair_energy_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                     const sim_gpu_cull *c, double *d_energy, cudaStream_t stream,
                                     sim_error *err) {
    pair_sink sink = {};
    sink.energy = d_energy;
    switch (c->tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return launch_list<t, kEnergy>(b, ph, c, 0u, sink, stream, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(c->tile, err);
    }
}

sim_status sim_cuda_pair_contacts(const sim_gpu_bodies *b, const sim_physics_f *phys,
                                  const sim_gpu_cull *c, uint32_t tile, const uint32_t *perm,
                                  sim_body_pair *d_out, uint32_t cap, uint32_t *d_count,
                                  const sim_gpu_streams *st, sim_error *err) {
    pair_sink sink = {};
    sink.perm = perm;
    sink.contacts = d_out;
    sink.contacts_cap = cap;
    sink.contacts_count = d_count;
    sim_physics_f ph = {}; /* the touching test alone: only the periodic axes matter */
    ph.box.periodic = phys->box.periodic;
    ph.box.period = phys->box.period;
    sim_map_plan plan;
    if (c == nullptr) { /* one launch of the bounding box: every tile pair */
        SIM_TRY(sim_pair_map_plan(SIM_PAIR_MAP_BB, (b->n + tile - 1) / tile, &plan, err));
    }
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        if (c != nullptr) {                                                                        \
            return launch_list<t, kContacts>(b, &ph, c, 0u, sink, st->main, err);                  \
        }                                                                                          \
        pair_sym_kernel<SIM_PAIR_MAP_BB, t, kContacts>                                             \
            <<<dim3(plan.launch[0].grid[0], plan.launch[0].grid[1]), t, 0, st->main>>>(            \
                b->pos, b->vel, b->n, plan.launch[0], make_uint3(0, 0, 0), ph, sink);              \
        break;
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(tile, err);
    }
    SIM_CUDA_CHECK_LAUNCH("pair_sym_kernel<contacts>");
    return SIM_OK;
}
