/* SPDX-License-Identifier: MIT
 * nbsim — contact forces with friction (friction.cuh) over all unordered pairs: the host drivers,
 * each picking the tile size's instantiation (pair_friction_tile.cuh: compiled a file a tile). */
#include "cuda/pair_friction_tile.cuh"

sim_status sim_cuda_pair_friction(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_map_plan *plan, const sim_map_share *share,
                                  uint32_t tile, const sim_gpu_fric *fric,
                                  const sim_gpu_streams *st, sim_error *err) {
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return sim_cuda_pair_friction_tile<t>(b, ph, plan, share, fric, st, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(tile, err);
    }
}

sim_status sim_cuda_pair_friction_full_range(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                             uint32_t tile, uint64_t begin, uint64_t end,
                                             const sim_gpu_fric *fric, cudaStream_t stream,
                                             sim_error *err) {
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return sim_cuda_pair_friction_full_tile<t>(b, ph, begin, end, fric, stream, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(tile, err);
    }
}

sim_status sim_cuda_pair_friction_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                       const sim_gpu_cull *c, unsigned flags, int count_contacts,
                                       const sim_gpu_fric *fric, cudaStream_t stream,
                                       sim_error *err) {
    switch (c->tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return sim_cuda_pair_friction_list_tile<t>(b, ph, c, flags, count_contacts, fric, stream,  \
                                                   err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_cuda_bad_tile(c->tile, err);
    }
}
