/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: friction's state on the device and its one owner
 * (friction_state.cu). The springs live in three forms, laid out as gpu/friction.h says: the
 * history tables (the last step's and this step's), the springs beside the neighbour lists'
 * entries, and the carry of a rebuild. The step asks; it never edits the fields itself:
 *   sim_cuda_friction_prepare       a frame's start: the overflow flag, the springs beside the
 *                                  lists sized to them (never inside a step a graph captures)
 *   sim_cuda_friction_carry         the cull phase, before a rebuild: the springs carried
 *   sim_cuda_friction_built         after a build: an overflow's fallback reads the tables
 *   sim_cuda_friction_sweep_lists   a sweep over the lists: the springs beside their entries
 *   sim_cuda_friction_sweep_tables  any other sweep: the tables are its truth (flushed first)
 *   sim_cuda_friction_flush         the springs beside the entries into the table, before the
 *                                  table is read (a re-sort, a read-back, a save, a growth)
 *   sim_cuda_friction_commit        the step's end: its table and entries become the last ones
 * The per-body kernels' drivers are friction_kernels.h. */
#ifndef SIM_FRICTION_STATE_H
#define SIM_FRICTION_STATE_H

#include <string.h>

#include "gpu/friction.h"
#include "nbsim/state.h"
#include "nlist/nlist_kernels.h"

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
} sim_cuda_friction;

/* Device bytes per body besides the tables (spin, torque, and spin_alt for a re-sort). */
#define SIM_GPU_FRICTION_BYTES_PER_BODY (3u * 16u)

/* Spin and torque for n bodies (zero), no tables. */
sim_status sim_cuda_friction_alloc(sim_cuda_friction *fr, uint32_t n, sim_error *err);
void sim_cuda_friction_free(sim_cuda_friction *fr);
/* Friction on (ph has it): tables for st's bodies (rows sized from its radii) holding st's
 * contacts as the last step's, built before the old ones go (a failure changes nothing); off:
 * tables freed. keep: friction stays on and st has no new histories: the tables go on. */
sim_status sim_cuda_friction_ready(sim_cuda_friction *fr, int on, const sim_state *st, int keep,
                                   cudaStream_t s, sim_error *err);
/* st's spin (0 where it has none) onto the device, in the user's order: the caller has the body
 * order the identity (creation, set_state). */
sim_status sim_cuda_friction_upload_spin(sim_cuda_friction *fr, const sim_state *st, cudaStream_t s,
                                         sim_error *err);
/* The device's spin into out->spin (order: the host's copy of slot -> user, NULL: identity) and
 * the last step's histories into out->contacts (by body, then partner, as
 * sim_cpu_friction_read); syncs. */
sim_status sim_cuda_friction_read(const sim_cuda_friction *fr, const uint32_t *order,
                                  sim_state *out, cudaStream_t s, sim_error *err);
/* The kernels' view for a sweep (perm: the body order, dt: 0 for the forces alone); inline, as
 * the kernels' drivers (friction_kernels.cu) take it too. */
static inline sim_gpu_fric sim_cuda_friction_view(const sim_cuda_friction *fr, const uint32_t *perm,
                                                  float dt) {
    sim_gpu_fric v;
    memset(&v, 0, sizeof v);
    v.perm = perm;
    v.spin = fr->spin;
    v.torque = fr->torque;
    v.row = fr->row;
    v.last_partner = fr->partner[fr->last];
    v.last_count = fr->count[fr->last];
    v.last_hist = fr->hist[fr->last];
    v.next_partner = fr->partner[1 - fr->last];
    v.next_count = fr->count[1 - fr->last];
    v.next_hist = fr->hist[1 - fr->last];
    v.overflow = fr->overflow;
    v.dt = dt;
    return v;
}

/* A contact sweep's start: this step's counters and the torques zeroed. */
sim_status sim_cuda_friction_begin(sim_cuda_friction *fr, cudaStream_t s, sim_error *err);
/* The step's table becomes the last step's, and its list entries (their buffer) current. */
void sim_cuda_friction_commit(sim_cuda_friction *fr);
/* Springs beside `entries` list entries (the lists' cap x stride), none current; kept when they
 * are that many already. The caller flushes first (ls_dirty): their contents go. */
sim_status sim_cuda_friction_list_prepare(sim_cuda_friction *fr, uint64_t entries, cudaStream_t s,
                                          sim_error *err);
void sim_cuda_friction_list_free(sim_cuda_friction *fr);
/* No entry current (the tables were replaced, or a cut step wrote some: restore). */
sim_status sim_cuda_friction_list_invalidate(sim_cuda_friction *fr, cudaStream_t s, sim_error *err);
sim_gpu_fric_list sim_cuda_friction_list_view(const sim_cuda_friction *fr);
/* The view a flush stores through: its store table (next_*) is the last step's. */
sim_gpu_fric sim_cuda_friction_flush_view(const sim_cuda_friction *fr, const uint32_t *perm);
/* The overflow flag back to none (a frame's start), and read after the frame's sync:
 * SIM_UNSTABLE naming the lowest body that had more contacts than slots. */
sim_status sim_cuda_friction_frame_start(sim_cuda_friction *fr, cudaStream_t s, sim_error *err);
sim_status sim_cuda_friction_enqueue_read(sim_cuda_friction *fr, cudaStream_t s, sim_error *err);
sim_status sim_cuda_friction_check(sim_cuda_friction *fr, sim_error *err);
/* A long step's start (spin, torque: the tables need nothing, a step only reads the last one)
 * and putting it back; *saved 0: no memory. */
sim_status sim_cuda_friction_save(sim_cuda_friction *fr, int *saved, cudaStream_t s,
                                  sim_error *err);
sim_status sim_cuda_friction_restore(sim_cuda_friction *fr, cudaStream_t s, sim_error *err);

/* The step's calls (above). lists: the neighbour lists, NULL while there are none to use (a
 * frame without lists, or none built yet); perm: the body order. */
sim_status sim_cuda_friction_prepare(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                     cudaStream_t s, sim_error *err);
/* rebuild: the lists are rebuilt whatever the device's flag says. */
sim_status sim_cuda_friction_carry(const sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                   int rebuild, cudaStream_t s, sim_error *err);
sim_status sim_cuda_friction_built(const sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                   const uint32_t *perm, cudaStream_t s, sim_error *err);
/* advance: the step's sweep (its springs then current beside the entries), not the forces
 * alone; *springs: what the sweep gets. */
sim_status sim_cuda_friction_sweep_lists(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                         int advance, sim_gpu_fric_list *springs, cudaStream_t s,
                                         sim_error *err);
sim_status sim_cuda_friction_sweep_tables(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                          const uint32_t *perm, cudaStream_t s, sim_error *err);
sim_status sim_cuda_friction_flush(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                   const uint32_t *perm, cudaStream_t s, sim_error *err);

#endif /* SIM_FRICTION_STATE_H */
