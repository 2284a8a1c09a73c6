/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: host drivers of the per-body kernels (velocity Verlet,
 * body forces, the instability flag, energies of the bodies, export for the viewer). */
#ifndef SIM_INTEGRATE_H
#define SIM_INTEGRATE_H

#include "gpu/device_state.h"
#include "physics/physics.h"

/* Half kick with the last total force + drift; per (NULL: walls only): the box's periods, on
 * whose periodic axes the centres then go back into the box (the stepper's WRAP, in the same
 * pass: the CUDA backend has no wrap primitive). */
sim_status sim_cuda_verlet_first(const sim_gpu_bodies *b, float dt, const sim_period_f *per,
                                 cudaStream_t s, sim_error *err);

/* Adds the body force (walls + m g) to the pair + triplet force, stores that total as the
 * last total force, half kick; flags NaN/inf or a body beyond SIM_ESCAPE_FACTOR * box_half
 * on any axis into *d_flag (step = the step's index inside the frame; the body by its user
 * index: slot i holds user body perm[i], perm NULL: i). */
sim_status sim_cuda_verlet_second(const sim_gpu_bodies *b, const uint32_t *perm,
                                  const sim_physics_f *ph, float dt, uint64_t *d_flag,
                                  uint32_t step, cudaStream_t s, sim_error *err);

/* Adds the body force to b->force without a kick (the force at set-up time). */
sim_status sim_cuda_body_forces(const sim_gpu_bodies *b, const sim_physics_f *ph, cudaStream_t s,
                                sim_error *err);

/* Adds sum(m v^2 / 2) to d_energy[0] and the body potential (gravity + walls) to d_energy[1]. */
sim_status sim_cuda_body_energy(const sim_gpu_bodies *b, const sim_physics_f *ph, double *d_energy,
                                cudaStream_t s, sim_error *err);

/* dst_pos[u] = (x, y, z, r) and dst_speed[u] = |v| of user body u, each when not NULL (device
 * pointers); slot i of b holds user body perm[i] (perm NULL: i). */
sim_status sim_cuda_export(const sim_gpu_bodies *b, const uint32_t *perm, sim_vec4f *dst_pos,
                           float *dst_speed, cudaStream_t s, sim_error *err);

#endif /* SIM_INTEGRATE_H */
