/* SPDX-License-Identifier: MIT
 * nbsim — private: friction in the CPU reference (docs/friction.md): the contact histories, the
 * pair visit every enumeration of pairs calls, the walls, torques and spin.
 *
 * The histories: one table of slots per body, owned by the body with the larger user index
 * (the scene's order, which never changes: a re-sort of the culled pipeline, a rebuilt tile or
 * neighbour list, moves nothing). A slot holds the partner's user index (or a wall's code,
 * SIM_CONTACT_WALL(k)), the sliding spring xi as seen from the owner and the rolling spring.
 * Two tables: `last`, the last completed step's, only read during a step, looked up by the
 * partner's index (so a value never depends on slot order, enumeration order or thread
 * schedule), and the step's own, written as contacts are found (slots claimed with an atomic
 * counter per row: any order, the same values); the stepper commits the step's table after
 * SECOND (stepper.h). Why this layout, over one keyed by (tile, slot) or a global hash:
 *  - exact for every enumeration: the brute-force sweep under any map, culled tiles, neighbour
 *    lists each visit a pair once and find its history by user indices alone;
 *  - a re-sort or a list rebuild costs the tables nothing: no history travels with the bodies;
 *  - O(N K) memory with K from geometry, no hashing, a linear scan of a short row per contact,
 *    the layout a GPU kernel can use as it is (rows of fixed capacity, one counter each).
 * K per body is the number of spheres of the smallest radius that can touch it without
 * overlapping one another by more than CPU_FRICTION_OVERLAP of their radius (non-overlapping
 * caps on the sphere of centres: K = floor(2 / (1 - cos theta)), sin theta = (1 - overlap)
 * r_min / (r_i + r_min); 18 for equal spheres), plus its 3 walls (a body touches at most one
 * wall per axis: its radius is at most box_half). A body with more contacts than that stops the
 * run (SIM_UNSTABLE naming it) instead of losing a history.
 *
 * On the neighbour lists' sweep the pairs' histories leave the tables (as LAMMPS's fix
 * neigh/history): each list entry has a spring beside it, laid out in the sweep's order (slot by
 * slot, each slot's entries in list order), so a step streams them instead of looking up rows by
 * user index far apart. Two arrays again, the last step's and this step's. A spring names its
 * owner and partner, so it goes back into its owner's row without the list it was laid for:
 * a rebuild carries them from the old lists to the new ones (a pair sits at one of its two
 * slots in each); they are flushed into the last step's table when the slots are re-sorted,
 * before another enumeration, and at a frame's end (saves, the split in space and the test
 * hooks read the tables), and laid out again from it by the next sweep. The walls stay in the
 * tables. The values are the table's, looked up by the same user indices: the same bits.
 *
 * Several ranks: replicas refuse friction before any work (backend.c): the histories live in
 * one process's tables. The split in space (sim/space/) gives each rank a backend of its own
 * bodies and ghosts in the user's order and moves the rows between them. */
#ifndef SIM_CPU_FRICTION_H
#define SIM_CPU_FRICTION_H

#include "nbsim/state.h"
#include "nlist/cpu_nlist.h"
#include "physics/physics.h"

/* The overlap between a body's neighbours the slot count allows for, as a fraction of the
 * smallest radius: ten times what a stiff granular contact reaches. */
#define CPU_FRICTION_OVERLAP SIM_FRICTION_OVERLAP

typedef struct {
    uint32_t partner; /* user index of the other body (< the row's), or SIM_CONTACT_WALL(k) */
    uint32_t unused;
    sim_contact_history_d h;
} sim_cpu_slot;

/* A contact's springs beside its neighbour-list entry: owner (the larger user index,
 * CPU_SPRING_NONE: the entry is no contact) and partner, as a table's slot. */
typedef struct {
    uint32_t owner;
    uint32_t partner;
    sim_contact_history_d h;
} sim_cpu_spring;

#define CPU_SPRING_NONE UINT32_MAX

typedef struct sim_cpu_friction {
    uint32_t n;
    int threads;
    uint64_t *row;          /* n + 1: body i's slots are [row[i], row[i + 1]) in each table */
    sim_cpu_slot *table[2]; /* [last]: the last completed step's; [1 - last]: this step's */
    uint32_t *count[2];     /* slots used per body */
    int last;
    int team;          /* threads of the current contact sweep (> 1: rows claimed atomically) */
    double dt;         /* the step the histories advance by in the current force phases; 0: the
                          forces alone */
    sim_vec4d *spin;   /* the backend's spin (user order), integrated here */
    sim_vec3d *torque; /* total torque per body at the current positions [N m] */
    sim_vec3d *tbuf;   /* per-thread partial torques, threads x n, user order */
    uint32_t overflow; /* the lowest body whose contacts outnumbered its slots, or UINT32_MAX */
    uint32_t overflow_had;
    /* The springs beside the list entries: [last] and [1 - last] as the tables. */
    sim_cpu_spring *spring[2];
    uint64_t spring_cap;     /* entries each array holds */
    uint64_t spring_used[2]; /* entries laid out in each */
    uint64_t *first;         /* n + 1: slot s's springs are [first[s], first[s + 1]) */
    uint32_t *npair;         /* this step's contacts per owner in springs (the rows' check) */
    int in_table;            /* the last step's pairs are in table[last] */
    int in_springs;          /* ... in spring[last], laid out for the current lists */
    int carry;               /* ... in spring[last], laid out by old_first for the lists before
                                a rebuild on the same slots */
    uint64_t *old_first;     /* n + 1: first, for the lists before the rebuild */
    int out_springs;         /* this step's pairs go to spring[1 - last], not the table */
    sim_vec4d *save_spin;    /* a long step's start (sim_cpu_friction_save) */
    sim_vec3d *save_torque;
} sim_cpu_friction;

/* *fric for parameters p (NULL: none): tables while p has friction, none without (freed). from:
 * a state whose contacts become the last step's histories (its radii size the rows); NULL: the
 * tables there are go on, or new ones start empty, sized from st. spin: st's, which the kicks
 * integrate. Built before the old ones go: a failure changes nothing. */
sim_status sim_cpu_friction_ready(sim_cpu_friction **fric, const sim_params *p,
                                  const sim_state *from, sim_state *st, int threads,
                                  sim_error *err);
void sim_cpu_friction_destroy(sim_cpu_friction **fric);
/* Tables for the bodies of st (sized from their radii) holding st's contacts, torques zero; spin
 * is the backend's array the kicks integrate. SIM_UNSTABLE names a body with more contacts than
 * its slots; SIM_OUT_OF_MEMORY what could not be allocated. */
sim_status sim_cpu_friction_init(sim_cpu_friction *fr, const sim_state *st, sim_vec4d *spin,
                                 int threads, sim_error *err);
void sim_cpu_friction_free(sim_cpu_friction *fr);

/* The start of a contact sweep with `team` threads: this step's table emptied, torques from 0;
 * dt: the step the histories advance by (0: the forces alone). */
void sim_cpu_friction_begin(sim_cpu_friction *fr, int team, double dt);
/* The pair visit, the one every enumeration calls (plan, culled tiles, neighbour lists): bodies
 * with user indices ua != ub at pa, va and pb, vb (copies in any order); their forces are added
 * to *fa and *fb, their torques to this thread's torque buffer, energy (when given) gets the
 * elastic and the springs' energy. Nothing happens when they do not touch. */
void sim_cpu_friction_pair(sim_cpu_friction *fr, const sim_physics *ph, uint32_t ua, uint32_t ub,
                           sim_vec4d pa, sim_vec4d va, sim_vec4d pb, sim_vec4d vb, sim_vec3d *fa,
                           sim_vec3d *fb, double *energy);
/* Every pair of a tile pair: bodies [i0, i1) x [j0, j1) of pos / vel (slot order; order maps a
 * slot to its user index, NULL: they are the same), on the diagonal only j < i; forces into f
 * (indexed like pos); touching (NULL: not counted) gets the pairs that touch. */
void sim_cpu_friction_tile(sim_cpu_friction *fr, const sim_physics *ph, uint32_t i0, uint32_t i1,
                           uint32_t j0, uint32_t j1, int diagonal, const sim_vec4d *pos,
                           const sim_vec4d *vel, const uint32_t *order, sim_vec3d *f,
                           double *energy, uint64_t *touching);
/* Before a sweep of the neighbour lists l (sorted copies pos, order: their user indices): the
 * springs laid out for l when they are not, carried from the old lists after a rebuild on the
 * same slots, else from the last step's table (a re-sort, another enumeration in between); this
 * step's pairs then go to the springs. SIM_OUT_OF_MEMORY when the springs cannot grow. */
sim_status sim_cpu_friction_lay(sim_cpu_friction *fr, const sim_physics *ph, const sim_cpu_nlist *l,
                                const sim_vec4d *pos, const uint32_t *order, sim_error *err);
/* The last step's springs into its table (nothing when they are there already): before any
 * other enumeration and anything that reads the tables. */
void sim_cpu_friction_flush(sim_cpu_friction *fr);
/* The slots were re-sorted: the springs flushed, to be laid out again from the table. */
void sim_cpu_friction_relist(sim_cpu_friction *fr);
/* The lists were rebuilt on the same slots: the next sweep carries the springs over from the
 * old lists, as LAMMPS does, looking each pair up among its slots' old entries. */
void sim_cpu_friction_rebuilt(sim_cpu_friction *fr);
/* The pairs of slots [begin, end)'s neighbour lists (sorted copies pos / vel, order: their user
 * indices), each pair once (a full list's from its larger slot), forces into f (slot order);
 * returns their energy, tests and touching pairs counted into *tally. After
 * sim_cpu_friction_lay for these lists. */
double sim_cpu_friction_nlist(sim_cpu_friction *fr, const sim_physics *ph, const sim_cpu_nlist *l,
                              uint32_t begin, uint32_t end, const sim_vec4d *pos,
                              const sim_vec4d *vel, const uint32_t *order, sim_vec3d *f,
                              sim_cpu_nlist_tally *tally);
/* The end of a contact sweep: the threads' torques summed into torque. */
void sim_cpu_friction_end(sim_cpu_friction *fr, int team);
/* Body i's six walls with friction and gravity (sim_body_force with friction): returns their
 * force, adds their torque to body i's and their energy (the walls' elastic and springs',
 * gravity's -m g.x) to *energy. */
sim_vec3d sim_cpu_friction_body(sim_cpu_friction *fr, const sim_physics *ph, uint32_t i,
                                sim_vec4d pos, sim_vec4d vel, double *energy);
/* The spin's half kick of every body, dt / 2 T / I (sim_verlet_spin), with `team` threads. */
void sim_cpu_friction_kick(sim_cpu_friction *fr, const sim_vec4d *pos, const sim_vec4d *vel,
                           double dt, int team);
/* After the walls: SIM_UNSTABLE naming a body that had more contacts than slots. */
sim_status sim_cpu_friction_check(sim_cpu_friction *fr, sim_error *err);
/* The step's table becomes the last step's. */
void sim_cpu_friction_commit(sim_cpu_friction *fr);
/* A long step's start (spin, torques; the tables need nothing: a step only reads the last one)
 * and putting it back. *saved 0: no memory (the step then runs whole). */
void sim_cpu_friction_save(sim_cpu_friction *fr, int *saved);
void sim_cpu_friction_restore(sim_cpu_friction *fr);
/* The last step's histories into out->contacts (by body, then partner), flushed first; fr
 * NULL: none. */
sim_status sim_cpu_friction_read(sim_cpu_friction *fr, sim_state *out, sim_error *err);

#endif /* SIM_CPU_FRICTION_H */
