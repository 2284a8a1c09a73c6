/* SPDX-License-Identifier: MIT
 * nbsim — private to sim/space/ (a build with MPI): the spatial split's state and what its two
 * files share. space_backend.c: the backend (frames, energies, gathers, refusals); space_cut.c:
 * the cuts, migration and halos. */
#ifndef SIM_SPACE_IMPL_H
#define SIM_SPACE_IMPL_H

#include <mpi.h>

#include "cpu/cpu_backend_impl.h"
#include "space/space.h"

/* A body on the move (migration, ghosts, gathers) [m, m/s, kg, rad/s, N]. */
typedef struct {
    sim_vec4d pos, vel, spin;
    sim_vec3d force;
    uint64_t gid; /* index in the user's order */
} body_rec;

/* A ghost's state after a step, from its owner. */
typedef struct {
    sim_vec4d pos, vel;
    sim_vec3d force;
} halo_rec;

enum { MAX_NBR = 2 };

typedef struct {
    sim_backend base;
    sim_backend *loc; /* own bodies [0, n_own), then ghosts */
    MPI_Comm comm;
    MPI_Datatype rec_type, halo_type;
    int rank, world;
    sim_params lp;         /* the local backends' parameters: dt and skin made explicit */
    sim_backend_config lc; /* one rank, no stop flag (the ranks stop together, nbsim/internal/backend.h) */
    double reach, skin, halo;
    int axis, periodic_axis;
    double *cuts; /* world + 1 slab bounds along axis */
    uint32_t n_own, n_ghost;
    uint64_t *gid;  /* n_own + n_ghost: each local body's user index */
    sim_vec4d *ref; /* own positions at the last cut */
    int nbr[MAX_NBR], nnbr;
    uint32_t *send_idx[MAX_NBR], send_n[MAX_NBR];
    uint32_t recv_off[MAX_NBR], recv_n[MAX_NBR];
    halo_rec *sbuf[MAX_NBR], *rbuf[MAX_NBR];
    double centre[3]; /* the bodies' mean position at the last energies */
    uint64_t cuts_made;
    double bal[4]; /* own min, own max, ghosts min, ghosts max over the ranks */
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
/* Each ghost takes its owner's (x, v, F) of now. Collective between neighbours. */
sim_status sim_space_halo_update(space_backend *s, sim_error *err);
/* A new cut: own bodies (initial != NULL: a block of the initial state) to their slabs' owners,
 * ghosts sent, the CPU backend rebuilt. Collective; every rank returns the same status. */
sim_status sim_space_recut(space_backend *s, const sim_state *initial, sim_error *err);
/* The largest displacement an own body may have after the next drift since the last cut [m]. */
double sim_space_displacement_bound(const space_backend *s);

#endif /* SIM_SPACE_IMPL_H */
