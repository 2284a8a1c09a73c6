/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the triplet (ATM) kernels. */
#ifndef SIM_TRIPLET_KERNELS_H
#define SIM_TRIPLET_KERNELS_H

#include "device_state.h"
#include "maps.h"
#include "physics.h"

/* Bodies per triplet tile, whatever the pair tile: a block of 32^3 = 32768 triples is already
 * ~2.5M instructions of work, one tile per warp width lets the k-forces rotate through the
 * lanes with shuffles (see triplet_kernels.cu), and small tiles keep the coinciding-tile waste
 * (blocks with I == J or J == K do about half or a sixth of the work) at ~3/n of the blocks.
 * Triplet plans are built with n = ceil(N / SIM_TRIPLET_TILE). */
#define SIM_TRIPLET_TILE 32u

/* Adds the ATM force of every unordered triple to b->force, one block per tile triple of
 * `plan`. */
sim_status sim_gpu_triplet_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_map_plan *plan, const sim_gpu_streams *st,
                                  sim_error *err);

/* Adds the ATM energy of all triples to *d_energy (device, double). Not timed; bounding box. */
sim_status sim_gpu_triplet_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  double *d_energy, cudaStream_t stream, sim_error *err);

#endif /* SIM_TRIPLET_KERNELS_H */
