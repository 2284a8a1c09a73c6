/* SPDX-License-Identifier: MIT
 * nbsim — private to the pair kernels: the drivers of the kFriction instantiations of
 * pair_sweep.cuh's kernels for one tile size (map-placed, full sweep, culled list). Friction's
 * visit makes these the heaviest kernels to compile, so each tile size is compiled in a file of
 * its own (pair_friction_32.cu, _64, _128: SIM_PAIR_FRICTION_TILE), side by side with the rest of
 * a build; pair_friction.cu picks one by the tile. */
#ifndef SIM_PAIR_FRICTION_TILE_CUH
#define SIM_PAIR_FRICTION_TILE_CUH

#include "cuda/pair_kernels.h"

template <int TILE>
sim_status sim_cuda_pair_friction_tile(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                       const sim_map_plan *plan, const sim_map_share *share,
                                       const sim_gpu_fric *fric, const sim_gpu_streams *st,
                                       sim_error *err);
template <int TILE>
sim_status sim_cuda_pair_friction_full_tile(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                            uint64_t begin, uint64_t end, const sim_gpu_fric *fric,
                                            cudaStream_t stream, sim_error *err);
template <int TILE>
sim_status sim_cuda_pair_friction_list_tile(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                            const sim_gpu_cull *c, unsigned flags,
                                            int count_contacts, const sim_gpu_fric *fric,
                                            cudaStream_t stream, sim_error *err);

#ifdef SIM_PAIR_FRICTION_TILE /* a tile's own file: the definitions, instantiated for it */
#include "cuda/pair_sweep.cuh"

template <int TILE>
sim_status sim_cuda_pair_friction_tile(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                       const sim_map_plan *plan, const sim_map_share *share,
                                       const sim_gpu_fric *fric, const sim_gpu_streams *st,
                                       sim_error *err) {
    pair_sink sink = {};
    sink.force = b->force;
    sink.fric = *fric;
    return launch_sym<TILE, kFriction>(b, ph, plan, share, sink, st, err);
}

template <int TILE>
sim_status sim_cuda_pair_friction_full_tile(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                            uint64_t begin, uint64_t end, const sim_gpu_fric *fric,
                                            cudaStream_t stream, sim_error *err) {
    return launch_full<TILE>(b, ph, begin, end, fric, stream, err);
}

template <int TILE>
sim_status sim_cuda_pair_friction_list_tile(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                            const sim_gpu_cull *c, unsigned flags,
                                            int count_contacts, const sim_gpu_fric *fric,
                                            cudaStream_t stream, sim_error *err) {
    pair_sink sink = {};
    sink.force = b->force;
    sink.fric = *fric;
    return launch_list<TILE, kFriction>(b, ph, c, flags, sink, stream, err, count_contacts);
}

template sim_status sim_cuda_pair_friction_tile<SIM_PAIR_FRICTION_TILE>(
    const sim_gpu_bodies *, const sim_physics_f *, const sim_map_plan *, const sim_map_share *,
    const sim_gpu_fric *, const sim_gpu_streams *, sim_error *);
template sim_status sim_cuda_pair_friction_full_tile<SIM_PAIR_FRICTION_TILE>(
    const sim_gpu_bodies *, const sim_physics_f *, uint64_t, uint64_t, const sim_gpu_fric *,
    cudaStream_t, sim_error *);
template sim_status sim_cuda_pair_friction_list_tile<SIM_PAIR_FRICTION_TILE>(
    const sim_gpu_bodies *, const sim_physics_f *, const sim_gpu_cull *, unsigned, int,
    const sim_gpu_fric *, cudaStream_t, sim_error *);
#endif

#endif
