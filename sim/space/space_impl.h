/* SPDX-License-Identifier: MIT
 * nbsim — private to sim/space/ (a build with MPI): the spatial split's state and what its two
 * files share. space_backend.c: the backend (frames, energies, gathers, refusals); space_cut.c:
 * the cuts, migration and halos. */
#ifndef SIM_SPACE_IMPL_H
#define SIM_SPACE_IMPL_H

#include <mpi.h>
#include <stddef.h>
#include <string.h>

#include "cpu/cpu_backend_impl.h"
#include "space/space.h"

/* A body on the move (migration, ghosts, gathers) [m, m/s, kg, N, rad/s, N m]. Migration and
 * ghosts send records of s->rec_size bytes: without friction the first SPACE_REC_LEAN (spin and
 * torque are friction's), a lean rank holding 96 bytes a body in transit rather than 152; read
 * and written through rec_get and rec_put. Gathers send whole ones. */
typedef struct {
    sim_vec4d pos, vel;
    sim_vec3d force;
    uint64_t gid; /* index in the user's order */
    sim_vec4d spin;
    sim_vec3d torque;
} body_rec;

#define SPACE_REC_LEAN offsetof(body_rec, spin)

/* Record i of an array of records of size bytes (spin and torque zero in a lean one). */
static inline body_rec rec_get(const void *base, size_t size, uint64_t i) {
    body_rec r;
    memset(&r, 0, sizeof r);
    memcpy(&r, (const char *)base + i * size, size);
    return r;
}

static inline void rec_put(void *base, size_t size, uint64_t i, const body_rec *r) {
    memcpy((char *)base + i * size, r, size);
}

/* A ghost's state after a step, from its owner (spin and torque: friction's). */
typedef struct {
    sim_vec4d pos, vel, spin;
    sim_vec3d force, torque;
} halo_rec;

/* A frictional contact's history on the move: body gi's (the larger user index, its owner) with
 * body gj < gi or a wall (SPACE_WALL(k)), as sim_state_contact holds it. */
typedef struct {
    uint64_t gi, gj;
    sim_vec3d xi, roll;
} contact_rec;

#define SPACE_WALL(k) (UINT64_MAX - 5u + (uint64_t)(k))
#define SPACE_IS_WALL(gj) ((gj) >= SPACE_WALL(0))

enum { MAX_NBR = 2 };

typedef struct {
    sim_backend base;
    sim_backend *loc; /* own bodies [0, n_own), then ghosts */
    MPI_Comm comm;
    MPI_Datatype rec_type, full_type, halo_type, contact_type; /* rec_type: rec_size bytes */
    size_t rec_size; /* a record in migration and ghosts: sizeof(body_rec) or SPACE_REC_LEAN */
    int rank, world;
    sim_params lp;            /* the local backends' parameters: dt and skin made explicit */
    sim_backend_config lc;    /* one rank, no stop flag (ranks stop together: internal/backend.h) */
    double reach, skin, halo; /* halo: the larger of reach and atm_reach, plus the skin */
    double atm_reach;         /* the ATM cut-off with triplets on, else 0 [m] */
    int axis, periodic_axis;
    double *cuts; /* world + 1 slab bounds along axis */
    uint32_t n_own, n_ghost;
    /* The local backend's bodies are own bodies and ghosts together in the user's order, so
     * that it meets every pair in the roles one rank gives it (the larger user index owns a
     * contact's history and is its body i: the same spring bit for bit). */
    uint64_t *gid;         /* n_own + n_ghost: each local body's user index, ascending */
    uint32_t *own;         /* n_own: own bodies' local indices, ascending */
    uint32_t *ghost;       /* n_ghost: the local index of each ghost as received */
    unsigned char *is_own; /* n_own + n_ghost: 1 for an own body */
    sim_vec4d *ref;        /* own positions at the last cut (as own[]) */
    int nbr[MAX_NBR], nnbr;
    uint32_t *send_idx[MAX_NBR], send_n[MAX_NBR]; /* local indices of own bodies */
    uint32_t recv_off[MAX_NBR], recv_n[MAX_NBR];
    halo_rec *sbuf[MAX_NBR], *rbuf[MAX_NBR];
    /* The first cut's bodies, waiting for the first use to build the backend (sim_space_ready):
     * the session lets the whole initial state go in between. */
    void *pend_own, *pend_ghosts; /* records of rec_size bytes */
    contact_rec *pend_cont;
    uint32_t pend_n_own, pend_n_ghost;
    uint64_t pend_n_cont;
    int pending;
    double centre[3]; /* the bodies' mean position at the last energies */
    uint64_t cuts_made;
    uint64_t steps_done; /* steps since set-up (the local backends count since their cut) */
    /* own min, own max, ghosts min, ghosts max over the ranks; the largest peak resident
     * memory [bytes] and the largest per own body */
    double bal[6];
} space_backend;

static inline space_backend *space_of(sim_backend *b) {
    return (space_backend *)b;
}

static inline sim_status mpi_check(int rc, const char *what, sim_error *err) {
    return rc == MPI_SUCCESS ? SIM_OK : sim_fail(err, SIM_IO, "MPI: %s failed", what);
}

/* "x", "y" or "z". */
const char *sim_space_axis_name(int axis);
/* Every rank learns whether any failed: the first failed rank's status, and a message on the
 * others naming it (its own says why). Collective. */
sim_status sim_space_agree(space_backend *s, sim_status st, sim_error *err);
/* Each ghost takes its owner's (x, v, F; with friction the spin and torque) of now. Collective
 * between neighbours. */
sim_status sim_space_halo_update(space_backend *s, sim_error *err);
/* A new cut: own bodies (initial != NULL: a block of the initial state) to their slabs' owners
 * with their contacts' histories, ghosts sent with theirs, the CPU backend rebuilt (the first
 * cut's: left to sim_space_ready). Collective;
 * every rank returns the same status. */
sim_status sim_space_recut(space_backend *s, const sim_state *initial, sim_error *err);
/* The backend built from the first cut's bodies if it waits (and the ghosts' forces sent), else
 * nothing. Collective: every rank's first use of the backend is the same op. */
sim_status sim_space_ready(space_backend *s, sim_error *err);
/* The largest displacement an own body may have after the next drift since the last cut [m]. */
double sim_space_displacement_bound(const space_backend *s);

/* The backend built if it waits (sim_space_ready); SIM_IO, alike on every rank, when a failed
 * cut left none. Collective when it builds. */
sim_status sim_space_usable(space_backend *s, sim_error *err);
/* This rank's histories (its own bodies' rows) as records, sorted by (gi, gj); NULL: no memory. */
contact_rec *sim_space_own_histories(const space_backend *s, uint64_t *count);
/* qsort's order of contact_rec: by gi, then gj. */
int sim_space_by_pair(const void *a, const void *b);

/* The history of local body i (the larger user index) with local partner j or wall code j, from
 * the last completed step's table; zero when there is none (sim_cpu_friction's lookup). */
sim_contact_history_d sim_space_history(const cpu_backend *L, uint32_t i, uint32_t j);

#endif /* SIM_SPACE_IMPL_H */
