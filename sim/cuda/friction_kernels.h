/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: friction's state on the device (the spin, the history
 * tables and the springs beside the neighbour lists, laid out as gpu/friction.h says) and the
 * host drivers of friction_kernels.cu. */
#ifndef SIM_FRICTION_KERNELS_H
#define SIM_FRICTION_KERNELS_H

#include "gpu/friction.h"
#include "nbsim/state.h"

typedef struct {
    uint32_t n;
    sim_vec4f *spin, *torque; /* d_, slot order: always (spin is carried without friction too) */
    sim_vec4f *spin_alt;      /* d_: the spin by user index during a re-sort */
    int spin_live;            /* some spin may be nonzero (uploaded so, or friction was on) */
    int on;                   /* the tables below exist (friction on) */
    unsigned long long *row;  /* d_ */
    uint64_t *h_row;          /* the same on the host */
    uint64_t slots;
    uint32_t *partner[2], *count[2];
    sim_contact_history_f *hist[2];
    int last;            /* which table is the last step's */
    uint32_t *overflow;  /* d_ */
    uint32_t *h_overflow; /* pinned, read at the frame's sync */
    sim_vec4f *save_spin, *save_torque; /* a long step's start */
    uint32_t min_cap;                   /* the smallest row */
    /* The springs beside the neighbour-list entries (sim_gpu_fric_list), ls_entries of them
     * (cap x stride of the lists; 0: none yet), and the completed steps' generation. */
    sim_vec4f *ls_a[2];
    sim_fric_roll2 *ls_b[2];
    int ls_last; /* which of ls_a / ls_b is the last completed step's (commit swaps) */
    uint32_t *ls_stamp, *ls_owned;
    uint32_t *carry_partner, *carry_k, *carry_n, *carry_gen; /* sim_gpu_fric_list's carry */
    uint64_t ls_entries;
    uint32_t gen;
    int ls_dirty;   /* some entry may be current: flush before the tables are read */
    int owned_step; /* this step's pair sweep counted the owned pairs into ls_owned (the walls'
                     * kernel checks the rows; otherwise the tables' claims did) */
} sim_gpu_friction;

/* Device bytes per body besides the tables (spin, torque, and spin_alt for a re-sort). */
#define SIM_GPU_FRICTION_BYTES_PER_BODY (3u * 16u)

/* Spin and torque for n bodies (zero), no tables. */
sim_status sim_gpu_friction_alloc(sim_gpu_friction *fr, uint32_t n, sim_error *err);
void sim_gpu_friction_free(sim_gpu_friction *fr);
/* Friction on (ph has it): tables for st's bodies (rows sized from its radii) holding st's
 * contacts as the last step's, built before the old ones go (a failure changes nothing); off:
 * tables freed. keep: friction stays on and st has no new histories: the tables go on. */
sim_status sim_gpu_friction_ready(sim_gpu_friction *fr, int on, const sim_state *st, int keep,
                                  cudaStream_t s, sim_error *err);
/* st's spin (0 where it has none) onto the device, in the user's order: the caller has the body
 * order the identity (creation, set_state). */
sim_status sim_gpu_friction_upload_spin(sim_gpu_friction *fr, const sim_state *st, cudaStream_t s,
                                        sim_error *err);
/* The device's spin into out->spin (order: the host's copy of slot -> user, NULL: identity) and
 * the last step's histories into out->contacts (by body, then partner, as
 * sim_cpu_friction_read); syncs. */
sim_status sim_gpu_friction_read(const sim_gpu_friction *fr, const uint32_t *order, sim_state *out,
                                 cudaStream_t s, sim_error *err);
/* A re-sort: the spin from the slots of old_order into those of new_order (device arrays, slot ->
 * user; NULL: identity). Nothing to do while no spin can be nonzero. */
sim_status sim_gpu_friction_permute(sim_gpu_friction *fr, const uint32_t *old_order,
                                    const uint32_t *new_order, cudaStream_t s, sim_error *err);
/* The kernels' view for a sweep (perm: the body order, dt: 0 for the forces alone). */
sim_gpu_fric sim_gpu_friction_view(const sim_gpu_friction *fr, const uint32_t *perm, float dt);
/* A contact sweep's start: this step's counters and the torques zeroed. */
sim_status sim_gpu_friction_begin(sim_gpu_friction *fr, cudaStream_t s, sim_error *err);
/* The walls with friction and gravity, added to the forces (and torques), for the forces alone
 * (no kick). */
sim_status sim_gpu_friction_body_forces(const sim_gpu_bodies *b, const sim_gpu_friction *fr,
                                        const uint32_t *perm, const sim_physics_f *ph, float dt,
                                        cudaStream_t s, sim_error *err);
/* integrate.h's verlet_second with friction: walls with friction + gravity, the velocity's and
 * the spin's half kicks, the instability flag (device_state.h's encoding). */
sim_status sim_gpu_friction_verlet_second(const sim_gpu_bodies *b, const sim_gpu_friction *fr,
                                          const uint32_t *perm, const sim_physics_f *ph, float dt,
                                          uint64_t *d_flag, uint32_t step, cudaStream_t s,
                                          sim_error *err);
/* The spin's half kick alone (the first half of the step, after the velocity's), where the
 * neighbour lists' drift does not do it in its pass (nlist_kernels.h: steps without lists). */
sim_status sim_gpu_friction_kick(const sim_gpu_bodies *b, const sim_gpu_friction *fr, float dt,
                                 cudaStream_t s, sim_error *err);
/* The step's table becomes the last step's, and its list entries (their buffer) current. */
void sim_gpu_friction_commit(sim_gpu_friction *fr);
/* Springs beside `entries` list entries (the lists' cap x stride), none current; kept when they
 * are that many already. The caller flushes first (ls_dirty): their contents go. */
sim_status sim_gpu_friction_list_prepare(sim_gpu_friction *fr, uint64_t entries, cudaStream_t s,
                                         sim_error *err);
void sim_gpu_friction_list_free(sim_gpu_friction *fr);
/* No entry current (the tables were replaced, or a cut step wrote some: restore). */
sim_status sim_gpu_friction_list_invalidate(sim_gpu_friction *fr, cudaStream_t s, sim_error *err);
sim_gpu_fric_list sim_gpu_friction_list_view(const sim_gpu_friction *fr);
/* The view a flush stores through: its store table (next_*) is the last step's. */
sim_gpu_fric sim_gpu_friction_flush_view(const sim_gpu_friction *fr, const uint32_t *perm);
/* The overflow flag back to none (a frame's start), and read after the frame's sync:
 * SIM_UNSTABLE naming the lowest body that had more contacts than slots. */
sim_status sim_gpu_friction_frame_start(sim_gpu_friction *fr, cudaStream_t s, sim_error *err);
sim_status sim_gpu_friction_enqueue_read(sim_gpu_friction *fr, cudaStream_t s, sim_error *err);
sim_status sim_gpu_friction_check(sim_gpu_friction *fr, sim_error *err);
/* A long step's start (spin, torque: the tables need nothing, a step only reads the last one)
 * and putting it back; *saved 0: no memory. */
sim_status sim_gpu_friction_save(sim_gpu_friction *fr, int *saved, cudaStream_t s,
                                 sim_error *err);
sim_status sim_gpu_friction_restore(sim_gpu_friction *fr, cudaStream_t s, sim_error *err);
/* Adds the rotational energy to d_energy[0] and the springs' energy of the last step's
 * histories (walls too, 1/2 k_t s^2 at the current overlaps, as sim_friction_apply counts it) to
 * d_energy[1] (device doubles). b and perm: the bodies in their slots; pos_user: the positions
 * by user index. */
sim_status sim_gpu_friction_energy(const sim_gpu_friction *fr, const sim_gpu_bodies *b,
                                   const uint32_t *perm, const sim_vec4f *pos_user,
                                   const sim_physics_f *ph, double *d_energy, cudaStream_t s,
                                   sim_error *err);

#endif /* SIM_FRICTION_KERNELS_H */
