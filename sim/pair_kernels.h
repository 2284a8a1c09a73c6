/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the pair (contact) kernels. The kernels
 * are reached only through these functions (plain device pointers + a params struct). */
#ifndef SIM_PAIR_KERNELS_H
#define SIM_PAIR_KERNELS_H

#include "backend.h"
#include "device_state.h"
#include "maps.h"
#include "physics.h"

/* Adds the contact force of every unordered pair to b->force (which the caller zeroes), one
 * block per tile pair of `plan` (built with n = ceil(N / tile)), tile in {32, 64, 128}. */
sim_status sim_gpu_pair_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                               const sim_map_plan *plan, uint32_t tile, const sim_gpu_streams *st,
                               sim_error *err);

/* nbody-style baseline without symmetry: each body sums over all others, every pair is
 * evaluated twice, b->force is overwritten (no atomics, no zeroing needed). */
sim_status sim_gpu_pair_forces_full(const sim_gpu_bodies *b, const sim_physics_f *ph, uint32_t tile,
                                    cudaStream_t stream, sim_error *err);

/* Adds the contact potential energy of all pairs to *d_energy (device, double). Not timed;
 * uses the bounding-box map with tile 128 whatever the configuration. */
sim_status sim_gpu_pair_energy(const sim_gpu_bodies *b, const sim_physics_f *ph, double *d_energy,
                               cudaStream_t stream, sim_error *err);

#endif /* SIM_PAIR_KERNELS_H */
