/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the pair (contact) kernels. The kernels
 * are reached only through these functions (plain device pointers + a params struct). */
#ifndef SIM_PAIR_KERNELS_H
#define SIM_PAIR_KERNELS_H

#include "nbsim/internal/backend.h"
#include "gpu/device_state.h"
#include "cull/cull_kernels.h"
#include "gpu/friction.h"
#include "nbsim/maps.h"
#include "physics/physics.h"
#include "multi/work_split.h"

/* SIM_BAD_ARGUMENT naming a tile size no kernel is built for (SIM_PAIR_TILE_LIST). */
sim_status sim_cuda_bad_tile(uint32_t tile, sim_error *err);

/* Adds the contact force of every unordered pair to b->force (which the caller zeroes), one
 * block per tile pair of `plan` (built with n = ceil(N / tile)), tile in {32, 64, 128}; only the
 * blocks of `share` (a rank's share, work_split.h) when given, every block when NULL. */
sim_status sim_cuda_pair_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                const sim_map_plan *plan, const sim_map_share *share, uint32_t tile,
                                const sim_gpu_streams *st, sim_error *err);

/* nbody-style baseline without symmetry: each body sums over all others, every pair is
 * evaluated twice, b->force is overwritten (no atomics, no zeroing needed). Rank `rank` of
 * `world` > 1: its range of the tiles of bodies, the others' forces set to 0. */
sim_status sim_cuda_pair_forces_full(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                     uint32_t tile, int rank, int world, cudaStream_t stream,
                                     sim_error *err);
/* The same sweep for the bodies of tiles [begin, end) alone (ceil(N / tile) tiles in all; their
 * forces are stored, the others' left as they are): a slice of a sweep launched a part at a
 * time. */
sim_status sim_cuda_pair_forces_full_range(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                           uint32_t tile, uint64_t begin, uint64_t end,
                                           cudaStream_t stream, sim_error *err);

/* Adds the contact potential energy of all pairs to *d_energy (device, double). Not timed;
 * uses the bounding-box map with tile 128 whatever the configuration (rank of world: its rows
 * of it). */
sim_status sim_cuda_pair_energy(const sim_gpu_bodies *b, const sim_physics_f *ph, double *d_energy,
                                int rank, int world, cudaStream_t stream, sim_error *err);

/* ---- culled: the persistent sweep over the list of interacting tile pairs (cull_kernels.h) ----
 * The list's length stays on the device (c->counts->tiles); when it exceeds c->tile_cap the list
 * is incomplete and the sweep covers every tile pair instead (exact; the frame reports it). */

/* Blocks of the persistent sweep for this tile: SMs x resident blocks per SM. */
sim_status sim_cuda_pair_list_grid(uint32_t tile, int sm_count, int *grid, sim_error *err);

/* Adds the contact force of every touching pair to b->force (which the caller zeroes), one
 * block-sized sweep per listed tile pair; c->tile is the tile size. flags: SIM_GPU_CULL_*;
 * count_contacts: a recorded sweep adds its pair tests and touching pairs to the frame's. */
sim_status sim_cuda_pair_forces_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                     const sim_gpu_cull *c, unsigned flags, int count_contacts,
                                     cudaStream_t stream, sim_error *err);

/* Adds the contact potential over the listed tile pairs to *d_energy (not timed). */
sim_status sim_cuda_pair_energy_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                     const sim_gpu_cull *c, double *d_energy, cudaStream_t stream,
                                     sim_error *err);

/* The contacts hook: appends every touching pair (user indices through perm, NULL = identity;
 * i > j) to d_out while fewer than cap, counts all into *d_count (the caller zeroes it). With c:
 * over c's tile list (the culled pipeline); without: over every tile pair (bounding-box plan).
 * ph: only its periodic axes are read (pairs across a face touch through their minimum image). */
sim_status sim_cuda_pair_contacts(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_gpu_cull *c, uint32_t tile, const uint32_t *perm,
                                  sim_body_pair *d_out, uint32_t cap, uint32_t *d_count,
                                  const sim_gpu_streams *st, sim_error *err);

/* ---- with friction (friction.h): the sweeps above, each pair's history found and stored, the
 * torques added into fric->torque (zeroed by the caller, sim_cuda_friction_begin) ---- */

/* sim_cuda_pair_forces with friction (each unordered pair once). */
sim_status sim_cuda_pair_friction(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_map_plan *plan, const sim_map_share *share,
                                  uint32_t tile, const sim_gpu_fric *fric,
                                  const sim_gpu_streams *st, sim_error *err);
/* sim_cuda_pair_forces_full_range with friction: both ends evaluate a pair in its owner's roles,
 * the owner stores the history; forces and torques of the range's bodies stored, not added. */
sim_status sim_cuda_pair_friction_full_range(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                             uint32_t tile, uint64_t begin, uint64_t end,
                                             const sim_gpu_fric *fric, cudaStream_t stream,
                                             sim_error *err);
/* sim_cuda_pair_forces_list with friction. */
sim_status sim_cuda_pair_friction_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                       const sim_gpu_cull *c, unsigned flags, int count_contacts,
                                       const sim_gpu_fric *fric, cudaStream_t stream,
                                       sim_error *err);

#endif /* SIM_PAIR_KERNELS_H */
