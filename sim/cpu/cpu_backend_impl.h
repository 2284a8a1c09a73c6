/* SPDX-License-Identifier: MIT
 * nbsim — private to the CPU reference backend: its state and what its files share. Three
 * files, one role each (as the CUDA backend's):
 *   cpu_backend.c  set-up, the stepper's primitives (the phases done at once, the host clock as
 *                  marks, save and restore) and the sim_backend table;
 *   cpu_atm.c      the ATM cut-off's TRIPLET_CULL phase (its neighbour lists or tile triples)
 *                  and the sweep of its lists;
 *   cpu_export.c   what leaves the backend: state, positions, captures, energies, and the test
 *                  hooks' tile pairs, tile triples and contacts. */
#ifndef SIM_CPU_BACKEND_IMPL_H
#define SIM_CPU_BACKEND_IMPL_H

#include "step/backend_impl.h"
#include "cpu/cpu_friction.h"
#include "cpu/cpu_mesh.h"
#include "cpu/cpu_cull.h"
#include "cpu/cpu_tcull.h"
#include "nlist/cpu_nlist.h"
#include "nlist/cpu_atm_list.h"
#include "physics/physics.h"

/* What a step changes, saved at the start of a long step so that it can be put back exactly as
 * the last completed step left it. The culled order is not saved: any order is a valid one, and
 * with the stepper's sort clock restored the step, run again, re-sorts exactly when the
 * uninterrupted run would, from the same positions, to the same order. The lists are rebuilt by
 * every step (the neighbour lists by the next, the stepper says); their recorded counts come
 * back. */
typedef struct {
    sim_vec4d *pos, *vel;
    sim_vec3d *force;
    double e_contact, e_atm, e_body;
    uint64_t steps_done;
    double mesh_time; /* the mesh walls' clock (cpu_mesh.h) */
    sim_step_counts rec;
    int have; /* 1: buffers allocated; -1: they could not be (steps are then never cut) */
} step_save;

typedef struct {
    sim_backend base; /* first: the interface header */
    sim_state st;     /* positions/velocities now (velocities at full steps between frames) */
    sim_vec3d *force; /* total force per body at the current positions [N] */
    sim_vec3d *tbuf;  /* per-thread partial forces, threads x n */
    int threads;      /* OpenMP threads available */
    int team;         /* threads the current sweep uses (<= threads); buffers 0 .. team-1 */
    sim_physics ph;
    double dt;                       /* [s] */
    uint32_t tiles;                  /* ceil(n / tile): pair tiles */
    uint32_t ttiles;                 /* ceil(n / SIM_TRIPLET_TILE): triplet tiles */
    double e_contact, e_atm, e_body; /* potential energies at the current positions [J] */
    uint64_t steps_done;
    sim_cpu_cull cull; /* allocated when culling is first turned on (cull_ready) */
    int cull_ready;
    sim_cpu_tcull tcull; /* the ATM cut-off's culling, allocated on first use (tcull_ready) */
    int tcull_ready;
    sim_cpu_nlist nlist; /* the neighbour lists, allocated on first use (nlist_ready) */
    int nlist_ready;
    int nlist_rebuild;    /* this step's cull rebuilt the tile pairs: the lists follow */
    sim_cpu_atm_list atm; /* the ATM cut-off's lists, allocated on first use (atm_ready) */
    int atm_ready;
    sim_step_counts rec; /* the lists' lengths as the steps' builds recorded them */
    double *mark_ms;     /* the stepper's marks: host clock [ms] */
    int mark_cap;
    step_save save;
    sim_cpu_friction *fric; /* friction on: histories, torques, spin (cpu_friction.c); else NULL */
    sim_cpu_mesh *mesh;     /* mesh walls (cpu_mesh.c); NULL: none */
} cpu_backend;

static inline cpu_backend *sim_cpu_of(sim_backend *base) {
    return (cpu_backend *)base;
}

static inline const cpu_backend *sim_cpu_of_const(const sim_backend *base) {
    return (const cpu_backend *)base;
}

/* Bodies [*lo, *hi) of tile t of rho bodies (the last tile may be partial). */
static inline void sim_cpu_tile_range(const cpu_backend *b, uint32_t t, uint32_t rho, uint32_t *lo,
                                      uint32_t *hi) {
    *lo = t * rho;
    *hi = *lo + rho < b->st.n ? *lo + rho : b->st.n;
}

/* The kernels' contact test in double: |x_i - x_j| < r_i + r_j (NaN: no), through the minimum
 * image on ph's periodic axes. */
static inline int sim_cpu_touching(sim_vec4d a, sim_vec4d b, const sim_physics *ph) {
    double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    const double reach = a.w + b.w;
    sim_min_image_d(&dx, &dy, &dz, ph);
    return dx * dx + dy * dy + dz * dz < reach * reach;
}

/* cpu_lists.c (each function's contract above it there): the culling's buffers and the
 * neighbour lists made ready, the tile pairs culled and the lists built from them. */
sim_status sim_cpu_cull_ready(cpu_backend *b, sim_error *err);
sim_status sim_cpu_nlist_ready(cpu_backend *b, sim_error *err);
sim_status sim_cpu_cull_pairs(cpu_backend *b, unsigned flags, sim_error *err);
void sim_cpu_build_nlist(cpu_backend *b, unsigned flags);
/* The culled pairs for the current positions, as a step finds them (the sorted copies gathered,
 * the tile pairs culled; with neighbour lists those rebuilt only when a body moved more than half
 * the skin), untimed and unrecorded: for the test hooks. */
sim_status sim_cpu_pairs_current(cpu_backend *b, sim_error *err);

/* A list's count as a recorded build found it (flags: SIM_STEP_*); all: what it may need. */
static inline void sim_cpu_record(sim_list_count *x, uint64_t count, uint64_t all, unsigned flags) {
    if (!(flags & SIM_STEP_RECORD)) {
        return;
    }
    x->count = count;
    x->peak = count > x->peak ? count : x->peak;
    x->sorted = flags & SIM_STEP_SORTED ? count : x->sorted;
    x->cap = x->all = all;
}

/* The mesh walls from the next step on (sim_backend_set_meshes, nbsim/internal/backend.h), the
 * forces at the current positions recomputed with them. */
sim_status sim_cpu_set_meshes(sim_backend *base, sim_mesh *const *meshes, int count,
                              sim_error *err);

/* cpu_atm.c: the ATM cut-off's phase and its lists */
sim_status sim_cpu_triplet_cull(sim_backend *base, unsigned flags, sim_error *err);
/* The cut-off's lists of slots [begin, end) swept into the per-thread buffers (slot order);
 * returns their ATM energy. */
double sim_cpu_atm_list_slice(cpu_backend *b, uint64_t begin, uint64_t end);
/* The triples the lists' sweep evaluates, about: its team's work. */
double sim_cpu_atm_list_work(const cpu_backend *b);

/* cpu_export.c: the sim_backend ops that read */
sim_status sim_cpu_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces, sim_error *err);
sim_status sim_cpu_energy(sim_backend *base, sim_energy *e, sim_error *err);
sim_status sim_cpu_export_positions(sim_backend *base, uint32_t every, sim_vec4f *pos, float *speed,
                                    int on_device, sim_error *err);
sim_status sim_cpu_capture(sim_backend *base, sim_capture *c, sim_error *err);
sim_status sim_cpu_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                              sim_error *err);
sim_status sim_cpu_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                sim_error *err);
sim_status sim_cpu_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap, uint64_t *count,
                            sim_error *err);

#endif /* SIM_CPU_BACKEND_IMPL_H */
