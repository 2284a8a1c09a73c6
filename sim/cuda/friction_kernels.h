/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: the drivers of friction's per-body kernels
 * (friction_kernels.cu), on friction's state (friction_state.h). */
#ifndef SIM_FRICTION_KERNELS_H
#define SIM_FRICTION_KERNELS_H

#include "cuda/friction_state.h"

/* A re-sort: the spin from the slots of old_order into those of new_order (device arrays, slot ->
 * user; NULL: identity). Nothing to do while no spin can be nonzero. */
sim_status sim_cuda_friction_permute(sim_cuda_friction *fr, const uint32_t *old_order,
                                     const uint32_t *new_order, cudaStream_t s, sim_error *err);
/* The walls with friction and gravity, added to the forces (and torques), for the forces alone
 * (no kick). */
sim_status sim_cuda_friction_body_forces(const sim_gpu_bodies *b, const sim_cuda_friction *fr,
                                         const uint32_t *perm, const sim_physics_f *ph, float dt,
                                         cudaStream_t s, sim_error *err);
/* integrate.h's verlet_second with friction: walls with friction + gravity, the velocity's and
 * the spin's half kicks, the instability flag (device_state.h's encoding). */
sim_status sim_cuda_friction_verlet_second(const sim_gpu_bodies *b, const sim_cuda_friction *fr,
                                           const uint32_t *perm, const sim_physics_f *ph, float dt,
                                           uint64_t *d_flag, uint32_t step, cudaStream_t s,
                                           sim_error *err);
/* The spin's half kick alone (the first half of the step, after the velocity's), where the
 * neighbour lists' drift does not do it in its pass (nlist_kernels.h: steps without lists). */
sim_status sim_cuda_friction_kick(const sim_gpu_bodies *b, const sim_cuda_friction *fr, float dt,
                                  cudaStream_t s, sim_error *err);
/* Adds the rotational energy to d_energy[0] and the springs' energy of the last step's
 * histories (walls too, 1/2 k_t s^2 at the current overlaps, as sim_friction_apply counts it) to
 * d_energy[1] (device doubles). b and perm: the bodies in their slots; pos_user: the positions
 * by user index. */
sim_status sim_cuda_friction_energy(const sim_cuda_friction *fr, const sim_gpu_bodies *b,
                                    const uint32_t *perm, const sim_vec4f *pos_user,
                                    const sim_physics_f *ph, double *d_energy, cudaStream_t s,
                                    sim_error *err);
/* The tables' upload and read-back (friction_state.cu): m staged contacts (slot at[k], partner,
 * history) scattered into a table; the n rows' contacts gathered into staging at off[u]. They
 * return the launch's error. */
cudaError_t sim_cuda_friction_scatter(uint64_t m, const unsigned long long *at,
                                      const uint32_t *partner, const sim_contact_history_f *h,
                                      uint32_t *table_partner, sim_contact_history_f *table_hist,
                                      cudaStream_t s);
cudaError_t sim_cuda_friction_gather(uint32_t n, const unsigned long long *row,
                                     const uint32_t *count, const uint32_t *table_partner,
                                     const sim_contact_history_f *table_hist,
                                     const unsigned long long *off, uint32_t *partner,
                                     sim_contact_history_f *h, cudaStream_t s);

#endif /* SIM_FRICTION_KERNELS_H */
