/* SPDX-License-Identifier: MIT
 * nbsim — private to the GPU code: friction on the device (docs/friction.md), the CPU
 * reference's model and layout (sim/cpu/cpu_friction.h) in float: the layout, and the views the
 * contact kernels receive (the CUDA backend's state and drivers: cuda/friction_kernels.h).
 *
 * Spin and torque are kept in the bodies' slots, as positions and velocities: a sweep reads a
 * contact's spins as it reads the positions (its own coalesced, the partner's gathered near it)
 * and the per-body kernels are coalesced. A re-sort permutes the spin with the bodies
 * (sim_cuda_friction_permute, through the user order and the two body orders; the torque is the
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
#ifndef SIM_GPU_FRICTION_H
#define SIM_GPU_FRICTION_H

#include "gpu/device_state.h"
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
 * (sim_cuda_friction_list_prepare): per entry its spring in both buffers (a, b: 2 x 24), its stamp
 * and a carry's partner and entry (12), 60; per body owned, carry_n and carry_gen, 12. */
#define SIM_GPU_FRIC_LIST_BYTES_PER_ENTRY                                                          \
    (2u * (sizeof(sim_vec4f) + sizeof(sim_fric_roll2)) + 3u * sizeof(uint32_t))
#define SIM_GPU_FRIC_LIST_BYTES_PER_BODY (3u * sizeof(uint32_t))

#endif /* SIM_GPU_FRICTION_H */
