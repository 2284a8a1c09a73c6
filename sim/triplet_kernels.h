/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the triplet (ATM) kernels. */
#ifndef SIM_TRIPLET_KERNELS_H
#define SIM_TRIPLET_KERNELS_H

#include "backend.h"
#include "device_state.h"
#include "maps.h"
#include "physics.h"
#include "work_split.h"

/* Triplet plans are built with n = ceil(N / SIM_TRIPLET_TILE) (backend.h: why 32). */

/* Adds the ATM force of every unordered triple to b->force, one block per tile triple of
 * `plan`; only the blocks of `share` (a rank's share, work_split.h) when given. */
sim_status sim_gpu_triplet_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_map_plan *plan, const sim_map_share *share,
                                  const sim_gpu_streams *st, sim_error *err);

/* The same for a list of `count` tile triples (I >= J >= K) in device memory, one block each
 * (e.g. the tile triples a cut-off culling pass kept); entries that are not ordered tiles of the
 * domain are skipped. Each unordered triple is counted once per entry that holds it. */
sim_status sim_gpu_triplet_forces_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                       const sim_tile3 *d_tiles, uint32_t count,
                                       cudaStream_t stream, sim_error *err);

/* Adds the ATM energy of all triples to *d_energy (device, double). Not timed; bounding box
 * (rank of world: its slabs of it). */
sim_status sim_gpu_triplet_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  double *d_energy, int rank, int world, cudaStream_t stream,
                                  sim_error *err);

#endif /* SIM_TRIPLET_KERNELS_H */
