/* SPDX-License-Identifier: MIT
 * nbsim — private: the spatial split of the CPU reference over MPI processes (issue 40). Each
 * rank owns the bodies of one slab of the box, cut along the axis where the bodies spread
 * furthest at places that give every rank as many bodies (a histogram summed over the ranks),
 * and keeps ghost copies of the bodies of its neighbours within one halo of its faces (the
 * contact reach or the ATM cut-off, the larger, plus a skin; across periodic faces too). A CPU
 * backend of its own (sim/cpu/) steps own bodies and ghosts alike; space_backend.c says why the
 * ghosts then need only be overwritten with their owners' state after each step. The slabs are cut
 * again, and bodies migrate to their new owners, when some body may have moved half the halo's skin
 * since the last cut: the ranks agree on that with one all-reduce of two numbers per step.
 *
 * Runs: `mpirun -np R nbsim --backend cpu --decompose space` (a build with MPI). Contacts with
 * and without friction (the springs migrate with their bodies: space_cut.c), walls, gravity and
 * periodic axes, and the ATM cut-off (ghosts as deep as the cut-off); triplet forces without a
 * cut-off are refused (sim_space_check). */
#ifndef SIM_SPACE_H
#define SIM_SPACE_H

#include "step/backend_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build can split space (it found MPI). */
int sim_space_available(void);

/* What the spatial split cannot run yet, as one line naming it (SIM_BAD_ARGUMENT: the user's
 * settings, exit 2), or SIM_OK. */
sim_status sim_space_check(const sim_backend_config *c, const sim_params *p, sim_error *err);

/* config->multi.space: this process's rank of config->multi.world, every rank holding the whole
 * initial state (it keeps its own bodies and ghosts). Collective over MPI_COMM_WORLD; every rank
 * refuses alike (the same message and status) when the box cannot be cut into that many slabs
 * at least one halo thick. */
sim_status sim_space_backend_create(const sim_backend_config *c, const sim_params *p,
                                    const sim_state *s, sim_backend **out, sim_error *err);

/* The state saved to path as one rank's sim_state_save would (the user's order, forces and
 * histories), rank 0 writing it as the others send it a range of bodies at a time: no process
 * holds all N. Collective; every rank returns the same status. */
sim_status sim_space_save_state(sim_backend *b, const char *path, const sim_params *p,
                                sim_error *err);

/* sim_backend_sum_over_processes of a spatial split: an all-reduce over the ranks. */
sim_status sim_space_sum_over_processes(sim_backend *b, double *v, size_t count, sim_error *err);

/* The bodies' mean position along unit vector up, as of the last energies (sim_backend_energy,
 * which every rank calls at the same frames): the log's height without gathering positions. */
double sim_space_mean_height(const sim_backend *b, double ux, double uy, double uz);

/* One line on the ranks' balance (own bodies and ghosts, least and most over the ranks, the
 * slab cuts so far, the largest peak resident memory and per own body), as of the last frame;
 * "" for another backend. */
void sim_space_balance(const sim_backend *b, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SIM_SPACE_H */
