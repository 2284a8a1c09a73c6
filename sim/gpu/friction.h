/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: friction on the device (docs/friction.md), the CPU
 * reference's model and layout (sim/cpu/cpu_friction.h) in float.
 *
 * Spin and torque are kept in the bodies' slots, as positions and velocities: a sweep reads a
 * contact's spins as it reads the positions (its own coalesced, the partner's gathered near it)
 * and the per-body kernels are coalesced. A re-sort permutes the spin with the bodies
 * (sim_gpu_friction_permute, through the user order and the two body orders; the torque is the
 * last step's, already used by the first half kick, and each sweep zeroes it); read-back puts
 * it back in the user's order, captures carry the body order, save / restore copy it with the
 * order it was saved with. The history tables stay keyed by user index (the pair's owner is the
 * larger user index, so a sweep still reads both bodies' user indices for a touching pair).
 *
 * The histories: one row of slots per body, owned by the body with the larger user index, rows
 * sized by sim_friction_slots exactly as the CPU's (the same bodies overflow on both), in two
 * tables: `last` (the last completed step's, only read during a step, looked up by the partner's
 * user index) and `next` (this step's, slots claimed with one atomicAdd on the row's counter).
 * Partners and springs are separate arrays, so a lookup scans a row of 4-byte partners (21
 * of them for equal spheres: 84 bytes) and loads one 24-byte spring. commit_history swaps the
 * tables (pointers on the host). A row that overflows keeps counting; the lowest such body is
 * kept with atomicMin and read at the frame's sync (SIM_UNSTABLE naming it); lookups read at
 * most a row's capacity.
 *
 * Beside the neighbour lists (the default enumeration) the pairs' springs do not live in those
 * tables: they live in the lists' own layout (sim_gpu_fric_list, slot-major like nbr: entry k of
 * slot i at k * stride + i), read and written by the list sweep's thread of slot i with no
 * lookup, in two buffers: the last completed step's (read) and this step's (written), swapped by
 * commit with the tables. An entry holds a spring when its stamp equals the generation of the
 * last completed step (gen, counted by commit): a step writes the touching pairs' entries with
 * the next generation, so a contact that ended, an entry of an older list, or one a cut step
 * wrote is simply not current, and nothing is ever cleared in the sweep. A rebuild carries them
 * (on the device's flag, gated like the build, before the boxes): each slot's current entries
 * are compacted as (partner slot, old entry k) into a carry of the same layout, their springs
 * left where they are in the last step's buffer (which no one writes until the commit), and the
 * sweep after the build finds a pair in the carry of its row's slot (half lists: the larger
 * slot's row before and after; full lists: both rows), no table, no atomics. The springs
 * themselves are not copied: 8 bytes per carried entry written, not 28 (the copy took over a
 * quarter of a step that rebuilt: bench/results/nvidia-h100/friction_carry.md). The user tables
 * stay the interchange: a flush (nlist_kernels.h) moves the current entries and a pending carry
 * into the last step's table (by owner and partner, as the tile sweeps store them) and makes them
 * stale, before anything changes the slots (a re-sort) or drops the entries (lists grown or
 * freed) and before anything reads the table as the truth (the tile and brute-force sweeps,
 * read-back, the energy, a long step's save). The list sweep takes a touching pair's spring from
 * its entry when current, else from the carry, else from the last table (so the first step after
 * a flush or an upload finds them there), and stores it only into its entry: after the commit
 * the last table holds the walls alone. Full lists hold a pair in both bodies' rows: both threads
 * compute the contact with the same arguments in the same roles (owner = larger user index =
 * sim_friction_contact_f's i) from the same spring, so both copies stay bit-identical, and each
 * adds only its own body's force and torque (no atomics); the owner's copy is the one flushed. */
#ifndef SIM_CUDA_FRICTION_H
#define SIM_CUDA_FRICTION_H

#include "gpu/device_state.h"
#include "nbsim/state.h"
#include "physics/physics.h"

/* What the contact kernels receive by value: the step's tables and the bodies' spin. */
typedef struct {
    const uint32_t *perm;          /* slot -> user index; NULL: identity */
    const sim_vec4f *spin;         /* (wx, wy, wz, 0), slot order */
    sim_vec4f *torque;             /* slot order; the sweeps add (atomics) or store */
    const unsigned long long *row; /* n + 1: body u's slots are [row[u], row[u + 1]) */
    const uint32_t *last_partner, *last_count;
    const sim_contact_history_f *last_hist;
    uint32_t *next_partner, *next_count;
    sim_contact_history_f *next_hist;
    uint32_t *overflow; /* the lowest body whose row overflowed, or UINT32_MAX */
    float dt;           /* the springs advance by dt; 0: the forces alone */
} sim_gpu_fric;

/* A spring beside a list entry: (xi, roll.x) and (roll.y, roll.z). */
typedef struct {
    float y, z;
} sim_fric_roll2;

/* The list sweep's view of the springs beside the list entries (see above). */
typedef struct {
    const sim_vec4f *a;      /* the last step's (xi.x, xi.y, xi.z, roll.x), entry k * stride + i */
    const sim_fric_roll2 *b; /* (roll.y, roll.z) */
    sim_vec4f *a_next;       /* this step's, written by the sweep (a step's, dt > 0) */
    sim_fric_roll2 *b_next;
    uint32_t *stamp;   /* the generation that wrote it (0: never current) */
    uint32_t *owned;   /* per slot: the touching pairs its body owns, counted by the list
                        * sweep (zeroed before it); the walls' kernel adds its walls and
                        * checks the row, as the claims of the tables do */
    uint32_t gen;      /* the last completed step's generation: entries current at it */
    uint32_t next;     /* this step's */
    /* A rebuild's carry (same slots): slot i's entries current before it, compacted (partner
     * slot, the entry k that holds its spring in a / b) at q * stride + i, q < carry_n[i],
     * current while carry_gen[i] == gen. */
    uint32_t *carry_partner, *carry_k;
    uint32_t *carry_n, *carry_gen;
} sim_gpu_fric_list;

/* Device bytes of the springs beside the lists, allocated for the lists' cap x stride entries
 * (sim_gpu_friction_list_prepare): per entry its spring in both buffers (a, b: 2 x 24), its stamp
 * and a carry's partner and entry (12), 60; per body owned, carry_n and carry_gen, 12. */
#define SIM_GPU_FRIC_LIST_BYTES_PER_ENTRY                                                          \
    (2u * (sizeof(sim_vec4f) + sizeof(sim_fric_roll2)) + 3u * sizeof(uint32_t))
#define SIM_GPU_FRIC_LIST_BYTES_PER_BODY (3u * sizeof(uint32_t))

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
 * the spin's half kicks, the instability flag (integrate.h's encoding). */
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

#endif /* SIM_CUDA_FRICTION_H */
