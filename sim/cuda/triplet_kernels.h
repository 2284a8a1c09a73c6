/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the triplet (ATM) kernels. */
#ifndef SIM_TRIPLET_KERNELS_H
#define SIM_TRIPLET_KERNELS_H

#include "nbsim/internal/backend.h"
#include "gpu/device_state.h"
#include "nbsim/maps.h"
#include "physics/physics.h"
#include "multi/work_split.h"
#include "cull/triplet_cull_kernels.h"

/* Triplet plans are built with n = ceil(N / SIM_TRIPLET_TILE) (nbsim/config.h: why 32). */

/* Adds the ATM force of every unordered triple to b->force, one block per tile triple of
 * `plan`; only the blocks of `share` (a rank's share, work_split.h) when given. */
sim_status sim_cuda_triplet_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                   const sim_map_plan *plan, const sim_map_share *share,
                                   const sim_gpu_streams *st, sim_error *err);

/* The same for a list of `count` tile triples (I >= J >= K) in device memory, one block each
 * (e.g. the tile triples a cut-off culling pass kept); entries that are not ordered tiles of the
 * domain are skipped. Each unordered triple is counted once per entry that holds it. */
sim_status sim_cuda_triplet_forces_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                        const sim_tile3 *d_tiles, uint32_t count,
                                        cudaStream_t stream, sim_error *err);

/* ---- culled by the cut-off (triplet_cull.h; ph->atm.atm_cutoff2 > 0): a persistent grid over the
 * tile triples of sim_gpu_tcull_build, whose lengths stay on the device. When a list overflowed
 * the kernel tests the simplex's tile pairs and triples from the boxes instead (exact, slower;
 * counted in c->counts->frame.fallback_steps). ---- */

/* Blocks of the persistent culled kernel for this device (SMs x resident blocks). */
sim_status sim_cuda_triplet_culled_grid(int sm_count, int *grid, sim_error *err);

/* Adds the ATM force of every triple within the cut-off to b->force (slot order, the tiles of
 * the sorted bodies), those of `share` (triplet_cull.h; {0, 1}: all; c's list must have been
 * built for the same share). flags:
 * SIM_GPU_CULL_* (cull_kernels.h), RECORD for a step's own launch. */
sim_status sim_cuda_triplet_forces_culled(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                          const sim_gpu_tcull *c, unsigned flags,
                                          sim_gpu_tcull_share share, cudaStream_t stream,
                                          sim_error *err);

/* Adds the ATM energy of the same triples (those of `share`) to *d_energy (device, double).
 * Not timed. */
sim_status sim_cuda_triplet_energy_culled(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                          const sim_gpu_tcull *c, sim_gpu_tcull_share share,
                                          double *d_energy, cudaStream_t stream, sim_error *err);

/* Adds the ATM energy of all triples to *d_energy (device, double). Not timed; bounding box
 * (rank of world: its slabs of it). */
sim_status sim_cuda_triplet_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                   double *d_energy, int rank, int world, cudaStream_t stream,
                                   sim_error *err);

#endif /* SIM_TRIPLET_KERNELS_H */
