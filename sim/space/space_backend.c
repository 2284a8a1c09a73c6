/* SPDX-License-Identifier: MIT
 * nbsim — the spatial split of the CPU reference over MPI (space.h): slabs, migration, halos.
 *
 * Why the ghosts need only their owners' state after each step. A rank's CPU backend steps its
 * own bodies and its ghosts with the same code. Velocity Verlet's first half kick and drift of a
 * body read only that body's position, velocity and last force, so when a ghost starts a step
 * with its owner's (x, v, F), bit for bit, its drifted position is the owner's, bit for bit
 * (the periodic wrap too). The contact sweep then sees every body within reach of an own body
 * (the halo's guarantee below) and gives own bodies their whole force; the ghosts' forces, and
 * so their kicks, are wrong, and are overwritten by the owners' (x, v, F) when the step ends:
 * one message per neighbour and step, 88 bytes per ghost.
 *
 * Full lists over own + ghosts, no reverse exchange: a pair across a cut is computed on both of
 * its ranks, each keeping the force on its own body. Half lists would compute it once and send
 * the ghost's share back, a second message per step for half the pair work; a contact costs a
 * few dozen operations, a message a latency, so the cheaper exchange wins (as in LAMMPS's
 * `newton off` for short-ranged pairs across processes). The forces equal one rank's up to the
 * order of their sums.
 *
 * The halo's guarantee. At a cut, rank r owns the bodies in its slab [lo_r, hi_r) along the cut
 * axis and receives every body within halo = reach + skin of it along that axis (reach: twice
 * the largest radius), from the neighbouring slabs (each slab is at least a halo thick, so no
 * other slab is that close). While no body has moved more than skin / 2 since the cut, two
 * bodies that touch were within reach + skin of each other at the cut, so an own body's partner
 * is own or a ghost. Each step bounds every own body's displacement after the next drift (its
 * distance from its place at the cut, plus |v + F dt / 2m| dt, what the drift will move it);
 * one all-reduce of the largest bound (and of a failure, so that every rank stops at the same
 * step with the same status) tells all ranks together to cut again before that step.
 *
 * A cut gathers nothing: each rank histograms its own bodies along the axis of the bodies' widest
 * spread, the histograms are summed over the ranks, and every rank places the same cuts where the
 * counts split evenly. Bodies then migrate to their owners (an all-to-all), the ghosts are sent,
 * and the rank's CPU backend is built anew for its bodies, keeping their last forces (a new
 * backend computes the forces at its state's velocities, and Verlet's are those of the last half
 * step). Its time, and every step's exchange, is the frame's comm phase. */
#include "space/space.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu_backend_impl.h"

#ifdef NBSIM_HAVE_MPI
#include <mpi.h>

/* Histogram bins along the cut axis: cuts are placed at bin edges, so a rank's share is within
 * one bin's bodies (1/4096 of the spread) of N / R. */
#define SPACE_BINS 4096
/* Bodies per message when the state is gathered to rank 0 (128 bytes each: 8 MiB). */
#define SPACE_GATHER_CHUNK 65536u

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
    sim_backend_config lc; /* one rank, no stop flag (the ranks stop together, backend.h) */
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

static space_backend *space_of(sim_backend *b) {
    return (space_backend *)b;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static sim_status mpi_check(int rc, const char *what, sim_error *err) {
    return rc == MPI_SUCCESS ? SIM_OK : sim_fail(err, SIM_IO, "MPI: %s failed", what);
}

static double coord(sim_vec4d p, int axis) {
    return axis == 0 ? p.x : axis == 1 ? p.y : p.z;
}

static const char *axis_name(int axis) {
    return axis == 0 ? "x" : axis == 1 ? "y" : "z";
}

/* Every rank learns whether any failed: the first failed rank's status, and a message on the
 * others naming it (its own says why). Collective. */
static sim_status agree(space_backend *s, sim_status st, sim_error *err) {
    double v[2] = {st != SIM_OK ? (double)st : 0.0, st != SIM_OK ? -(double)s->rank : -1e9};
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, s->comm) != MPI_SUCCESS) {
        return sim_fail(err, SIM_IO, "MPI: agreeing on the ranks' status failed");
    }
    if (v[0] == 0.0 || st != SIM_OK) {
        return st;
    }
    return sim_fail(err, (sim_status)v[0], "rank %d failed (its message says why)", (int)-v[1]);
}

/* Distance along the cut axis from x to slab r (0 inside it), through the period when the axis
 * is periodic. */
static double slab_distance(const space_backend *s, double x, int r) {
    const double lo = s->cuts[r], hi = s->cuts[r + 1];
    if (x >= lo && x < hi) {
        return 0.0;
    }
    double d = x < lo ? lo - x : x - hi;
    if (s->periodic_axis) {
        const double period = 2.0 * s->lp.box_half;
        const double d_lo = fabs(remainder(x - lo, period)), d_hi = fabs(remainder(x - hi, period));
        d = fmin(d_lo, d_hi);
    }
    return d;
}

static int owner_of(const space_backend *s, double x) {
    int lo = 0, hi = s->world - 1; /* the last slab whose lower bound is <= x */
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (s->cuts[mid] <= x) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

/* The cut axis and the slabs' bounds, the same on every rank (from sums over the ranks);
 * SIM_BAD_ARGUMENT, alike on every rank, when a slab would be thinner than one halo. */
static sim_status place_cuts(space_backend *s, const body_rec *own, uint32_t n, sim_error *err) {
    double ext[6] = {-DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (uint32_t i = 0; i < n; ++i) {
        for (int a = 0; a < 3; ++a) {
            const double x = coord(own[i].pos, a);
            ext[a] = fmax(ext[a], x);
            ext[3 + a] = fmax(ext[3 + a], -x);
        }
    }
    SIM_TRY(mpi_check(MPI_Allreduce(MPI_IN_PLACE, ext, 6, MPI_DOUBLE, MPI_MAX, s->comm),
                      "the bodies' extent", err));
    int axis = 0;
    for (int a = 1; a < 3; ++a) {
        if (ext[a] + ext[3 + a] > ext[axis] + ext[3 + axis]) {
            axis = a;
        }
    }
    s->axis = axis;
    s->periodic_axis = (s->lp.periodic >> axis) & 1;
    const double lo = -ext[3 + axis], width = fmax(ext[axis] - lo, DBL_MIN);
    uint64_t *bins = calloc(SPACE_BINS, sizeof *bins);
    if (bins == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the slabs' histogram");
    }
    for (uint32_t i = 0; i < n; ++i) {
        long b = (long)((coord(own[i].pos, axis) - lo) / width * SPACE_BINS);
        bins[b < 0 ? 0 : b >= SPACE_BINS ? SPACE_BINS - 1 : b]++;
    }
    sim_status st =
        mpi_check(MPI_Allreduce(MPI_IN_PLACE, bins, SPACE_BINS, MPI_UINT64_T, MPI_SUM, s->comm),
                  "the slabs' histogram", err);
    const int R = s->world;
    const double box = s->lp.box_half;
    s->cuts[0] = s->periodic_axis ? -box : -INFINITY;
    s->cuts[R] = s->periodic_axis ? box : INFINITY;
    uint64_t total = 0;
    for (int b = 0; b < SPACE_BINS; ++b) {
        total += bins[b];
    }
    uint64_t cum = 0;
    int b = 0;
    for (int k = 1; k < R && st == SIM_OK; ++k) {
        const uint64_t target = (total * (uint64_t)k + (uint64_t)R - 1u) / (uint64_t)R;
        while (b < SPACE_BINS && cum < target) {
            cum += bins[b++];
        }
        s->cuts[k] = lo + width * (double)b / SPACE_BINS;
    }
    free(bins);
    for (int k = 0; k < R && st == SIM_OK && R > 1; ++k) {
        const double thick = s->cuts[k + 1] - s->cuts[k];
        if (thick < s->halo) {
            const double spread = s->periodic_axis ? 2.0 * box : width;
            st = sim_fail(err, SIM_BAD_ARGUMENT,
                          "%d ranks: rank %d's slab along %s would be %.3g m thick, less than "
                          "one halo of %.3g m (contact reach %.3g m + skin %.3g m); run on at "
                          "most %d ranks",
                          R, k, axis_name(axis), thick, s->halo, s->reach, s->skin,
                          (int)fmax(1.0, floor(spread / s->halo / 1.5)));
        }
    }
    s->cuts_made++;
    return st;
}

static int by_gid(const void *a, const void *b) {
    const uint64_t x = ((const body_rec *)a)->gid, y = ((const body_rec *)b)->gid;
    return x < y ? -1 : x > y;
}

/* Bodies to their owners (all-to-all); *own: this rank's, in the user's order. */
static sim_status migrate(space_backend *s, body_rec *mine, uint32_t n, body_rec **own,
                          uint32_t *n_own, sim_error *err) {
    const int R = s->world;
    int *cnt = calloc((size_t)4 * R, sizeof *cnt);
    int *dest = malloc((n ? n : 1) * sizeof *dest);
    body_rec *sorted = malloc((n ? n : 1) * sizeof *sorted);
    sim_status st =
        cnt && dest && sorted ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot migrate");
    int *rcnt = cnt + R, *soff = cnt + 2 * R, *roff = cnt + 3 * R;
    for (uint32_t i = 0; i < n && st == SIM_OK; ++i) {
        dest[i] = owner_of(s, coord(mine[i].pos, s->axis));
        cnt[dest[i]]++;
    }
    if (st == SIM_OK) {
        st = mpi_check(MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, s->comm), "migration counts",
                       err);
    }
    uint64_t total = 0;
    for (int r = 0; r < R && st == SIM_OK; ++r) {
        soff[r] = r ? soff[r - 1] + cnt[r - 1] : 0;
        roff[r] = r ? roff[r - 1] + rcnt[r - 1] : 0;
        total += (uint64_t)rcnt[r];
    }
    body_rec *in = NULL;
    if (st == SIM_OK) {
        int *fill = calloc((size_t)R, sizeof *fill);
        in = malloc((total ? total : 1) * sizeof *in);
        st = fill && in ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot migrate");
        for (uint32_t i = 0; i < n && st == SIM_OK; ++i) {
            sorted[soff[dest[i]] + fill[dest[i]]++] = mine[i];
        }
        free(fill);
    }
    if (st == SIM_OK) {
        st = mpi_check(
            MPI_Alltoallv(sorted, cnt, soff, s->rec_type, in, rcnt, roff, s->rec_type, s->comm),
            "migration", err);
    }
    free(cnt);
    free(dest);
    free(sorted);
    if (st != SIM_OK) {
        free(in);
        return st;
    }
    qsort(in, total, sizeof *in, by_gid);
    *own = in;
    *n_own = (uint32_t)total;
    return SIM_OK;
}

/* The neighbouring slabs' ranks (one where they coincide: two ranks around a period). */
static void find_neighbours(space_backend *s) {
    const int R = s->world, r = s->rank;
    int cand[2] = {r - 1, r + 1};
    if (s->periodic_axis) {
        cand[0] = (r + R - 1) % R;
        cand[1] = (r + 1) % R;
    }
    s->nnbr = 0;
    for (int k = 0; k < 2; ++k) {
        const int q = cand[k];
        if (q >= 0 && q < R && q != r && (s->nnbr == 0 || s->nbr[0] != q)) {
            s->nbr[s->nnbr++] = q;
        }
    }
}

/* Sends each neighbour its ghosts from own (within one halo of its slab); *ghosts: those
 * received, neighbour by neighbour. */
static sim_status exchange_ghosts(space_backend *s, const body_rec *own, uint32_t n_own,
                                  body_rec **ghosts, uint32_t *n_ghost, sim_error *err) {
    find_neighbours(s);
    body_rec *out[MAX_NBR] = {NULL, NULL};
    sim_status st = SIM_OK;
    for (int k = 0; k < s->nnbr && st == SIM_OK; ++k) {
        free(s->send_idx[k]);
        s->send_idx[k] = malloc((n_own ? n_own : 1) * sizeof *s->send_idx[k]);
        out[k] = malloc((n_own ? n_own : 1) * sizeof *out[k]);
        st = s->send_idx[k] && out[k] ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no ghosts");
        uint32_t m = 0;
        for (uint32_t i = 0; i < n_own && st == SIM_OK; ++i) {
            if (slab_distance(s, coord(own[i].pos, s->axis), s->nbr[k]) < s->halo) {
                s->send_idx[k][m] = i;
                out[k][m++] = own[i];
            }
        }
        s->send_n[k] = m;
    }
    MPI_Request req[2 * MAX_NBR];
    int nreq = 0;
    for (int k = 0; k < s->nnbr && st == SIM_OK; ++k) {
        MPI_Irecv(&s->recv_n[k], 1, MPI_UINT32_T, s->nbr[k], 1, s->comm, &req[nreq++]);
        MPI_Isend(&s->send_n[k], 1, MPI_UINT32_T, s->nbr[k], 1, s->comm, &req[nreq++]);
    }
    if (st == SIM_OK) {
        st = mpi_check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "ghost counts", err);
    }
    uint32_t total = 0;
    for (int k = 0; k < s->nnbr; ++k) {
        s->recv_off[k] = total;
        total += s->recv_n[k];
    }
    body_rec *in = malloc((total ? total : 1) * sizeof *in);
    st = st == SIM_OK && in == NULL ? sim_fail(err, SIM_OUT_OF_MEMORY, "no ghosts") : st;
    nreq = 0;
    for (int k = 0; k < s->nnbr && st == SIM_OK; ++k) {
        MPI_Irecv(in + s->recv_off[k], (int)s->recv_n[k], s->rec_type, s->nbr[k], 2, s->comm,
                  &req[nreq++]);
        MPI_Isend(out[k], (int)s->send_n[k], s->rec_type, s->nbr[k], 2, s->comm, &req[nreq++]);
    }
    if (st == SIM_OK) {
        st = mpi_check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "ghosts", err);
    }
    for (int k = 0; k < MAX_NBR; ++k) {
        free(out[k]);
    }
    for (int k = 0; k < s->nnbr && st == SIM_OK; ++k) {
        free(s->sbuf[k]);
        free(s->rbuf[k]);
        s->sbuf[k] = malloc((s->send_n[k] ? s->send_n[k] : 1) * sizeof *s->sbuf[k]);
        s->rbuf[k] = malloc((s->recv_n[k] ? s->recv_n[k] : 1) * sizeof *s->rbuf[k]);
        if (s->sbuf[k] == NULL || s->rbuf[k] == NULL) {
            st = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the halo's buffers");
        }
    }
    if (st != SIM_OK) {
        free(in);
        return st;
    }
    *ghosts = in;
    *n_ghost = total;
    return SIM_OK;
}

/* Each ghost takes its owner's (x, v, F) of now. Collective between neighbours. */
static sim_status halo_update(space_backend *s, sim_error *err) {
    cpu_backend *L = sim_cpu_of(s->loc);
    MPI_Request req[2 * MAX_NBR];
    int nreq = 0;
    for (int k = 0; k < s->nnbr; ++k) {
        for (uint32_t m = 0; m < s->send_n[k]; ++m) {
            const uint32_t i = s->send_idx[k][m];
            s->sbuf[k][m] = (halo_rec){L->st.pos[i], L->st.vel[i], L->force[i]};
        }
        MPI_Irecv(s->rbuf[k], (int)s->recv_n[k], s->halo_type, s->nbr[k], 3, s->comm, &req[nreq++]);
        MPI_Isend(s->sbuf[k], (int)s->send_n[k], s->halo_type, s->nbr[k], 3, s->comm, &req[nreq++]);
    }
    SIM_TRY(mpi_check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "the halo exchange", err));
    for (int k = 0; k < s->nnbr; ++k) {
        for (uint32_t m = 0; m < s->recv_n[k]; ++m) {
            const uint32_t g = s->n_own + s->recv_off[k] + m;
            L->st.pos[g] = s->rbuf[k][m].pos;
            L->st.vel[g] = s->rbuf[k][m].vel;
            L->force[g] = s->rbuf[k][m].force;
        }
    }
    return SIM_OK;
}

/* This rank's CPU backend for own + ghosts; with_forces: the records' forces replace the ones it
 * computes (mid-run: Verlet's, of the last half step). */
static sim_status build_local(space_backend *s, const body_rec *own, uint32_t n_own,
                              const body_rec *ghosts, uint32_t n_ghost, int with_forces,
                              sim_error *err) {
    const uint32_t n = n_own + n_ghost;
    sim_state st;
    SIM_TRY(sim_state_alloc(&st, n, err));
    free(s->gid);
    free(s->ref);
    s->gid = malloc((n ? n : 1) * sizeof *s->gid);
    s->ref = malloc((n_own ? n_own : 1) * sizeof *s->ref);
    if (s->gid == NULL || s->ref == NULL) {
        sim_state_free(&st);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold %u bodies' indices", n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const body_rec *r = i < n_own ? &own[i] : &ghosts[i - n_own];
        st.pos[i] = r->pos;
        st.vel[i] = r->vel;
        st.spin[i] = r->spin;
        s->gid[i] = r->gid;
        if (i < n_own) {
            s->ref[i] = r->pos;
        }
    }
    sim_backend_destroy(s->loc);
    s->loc = NULL;
    s->n_own = n_own;
    s->n_ghost = n_ghost;
    sim_status status = SIM_OK;
    if (n > 0) { /* a rank may own nothing for a moment (all its bodies left): no backend */
        status = sim_cpu_backend_create(&s->lc, &s->lp, &st, NULL, &s->loc, err);
    } else {
        status =
            sim_fail(err, SIM_BAD_ARGUMENT, "rank %d owns no body: run on fewer ranks", s->rank);
    }
    sim_state_free(&st);
    if (status == SIM_OK && with_forces) {
        cpu_backend *L = sim_cpu_of(s->loc);
        for (uint32_t i = 0; i < n; ++i) {
            L->force[i] = i < n_own ? own[i].force : ghosts[i - n_own].force;
        }
    }
    return status;
}

/* A new cut: own bodies (first: a block of the initial state) to their slabs' owners, ghosts
 * sent, the CPU backend rebuilt. Collective; every rank returns the same status. */
static sim_status recut(space_backend *s, const sim_state *initial, sim_error *err) {
    uint32_t n = 0;
    body_rec *mine = NULL;
    sim_status st = SIM_OK;
    if (initial != NULL) {
        const uint64_t N = initial->n;
        const uint32_t a = (uint32_t)(N * (uint64_t)s->rank / (uint64_t)s->world);
        const uint32_t b = (uint32_t)(N * (uint64_t)(s->rank + 1) / (uint64_t)s->world);
        n = b - a;
        mine = malloc((n ? n : 1) * sizeof *mine);
        st = mine ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold %u bodies", n);
        for (uint32_t i = 0; i < n && st == SIM_OK; ++i) {
            const sim_vec4d none = {0.0, 0.0, 0.0, 0.0};
            mine[i] = (body_rec){initial->pos[a + i], initial->vel[a + i],
                                 initial->spin ? initial->spin[a + i] : none,
                                 (sim_vec3d){0.0, 0.0, 0.0}, a + i};
        }
    } else {
        const cpu_backend *L = sim_cpu_of(s->loc);
        n = s->n_own;
        mine = malloc((n ? n : 1) * sizeof *mine);
        st = mine ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold %u bodies", n);
        for (uint32_t i = 0; i < n && st == SIM_OK; ++i) {
            mine[i] = (body_rec){L->st.pos[i], L->st.vel[i], L->st.spin[i], L->force[i], s->gid[i]};
        }
    }
    SIM_TRY(agree(s, st, err));
    st = place_cuts(s, mine, n, err); /* the same verdict on every rank */
    body_rec *own = NULL, *ghosts = NULL;
    uint32_t n_own = 0, n_ghost = 0;
    if (st == SIM_OK) {
        st = agree(s, migrate(s, mine, n, &own, &n_own, err), err);
    }
    free(mine);
    if (st == SIM_OK) {
        st = agree(s, exchange_ghosts(s, own, n_own, &ghosts, &n_ghost, err), err);
    }
    if (st == SIM_OK) {
        st = agree(s, build_local(s, own, n_own, ghosts, n_ghost, initial == NULL, err), err);
    }
    if (st == SIM_OK && initial != NULL) { /* own forces are right, the ghosts' not yet */
        st = agree(s, halo_update(s, err), err);
    }
    free(own);
    free(ghosts);
    return st;
}

/* The largest displacement an own body may have after the next drift since the last cut [m]. */
static double displacement_bound(const space_backend *s) {
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    const double dt = L->dt;
    double most = 0.0;
    for (uint32_t i = 0; i < s->n_own; ++i) {
        const sim_vec4d p = L->st.pos[i], v = L->st.vel[i];
        const sim_vec3d f = L->force[i];
        double dx = p.x - s->ref[i].x, dy = p.y - s->ref[i].y, dz = p.z - s->ref[i].z;
        sim_min_image_d(&dx, &dy, &dz, &L->ph);
        const double h = 0.5 * dt / v.w;
        const double ux = v.x + f.x * h, uy = v.y + f.y * h, uz = v.z + f.z * h;
        const double d = sqrt(dx * dx + dy * dy + dz * dz) + sqrt(ux * ux + uy * uy + uz * uz) * dt;
        most = d > most || isnan(d) ? d : most;
    }
    return most;
}

/* The frame's sums of the steps' times and counts (the rest: the last step's). */
static void add_timing(sim_frame_timing *t, const sim_frame_timing *s, int first) {
    if (first) {
        *t = *s;
        return;
    }
    const sim_frame_timing sum = *t;
    *t = *s;
#define SPACE_SUM(f) t->f = sum.f + s->f
    SPACE_SUM(pair_ms);
    SPACE_SUM(triplet_ms);
    SPACE_SUM(integrate_ms);
    SPACE_SUM(step_ms);
    SPACE_SUM(sort_ms);
    SPACE_SUM(cull_ms);
    SPACE_SUM(drift_ms);
    SPACE_SUM(kick_ms);
    SPACE_SUM(cells_ms);
    SPACE_SUM(atm_list_ms);
    SPACE_SUM(contact_ms);
    SPACE_SUM(comm_ms);
    SPACE_SUM(triplet_cull_ms);
    SPACE_SUM(nlist_ms);
    SPACE_SUM(steps);
    SPACE_SUM(sorts);
    SPACE_SUM(phase_steps);
    SPACE_SUM(nlist_rebuilds);
    SPACE_SUM(cull_fallback_steps);
    SPACE_SUM(nlist_fallback_steps);
    SPACE_SUM(candidate_tests);
    SPACE_SUM(contacts);
#undef SPACE_SUM
}

static sim_status space_run_frame(sim_backend *b, sim_frame_timing *t, sim_error *err) {
    space_backend *s = space_of(b);
    const int steps = s->base.params.steps_per_frame;
    memset(t, 0, sizeof *t);
    for (int k = 0; k < steps; ++k) {
        sim_frame_timing one;
        memset(&one, 0, sizeof one);
        sim_status st = sim_backend_run_frame(s->loc, &one, err);
        const double t0 = now_ms();
        /* always exchanged, so that a rank that failed still meets its neighbours' messages */
        const sim_status hs = halo_update(s, err);
        st = st == SIM_OK ? hs : st;
        double v[3] = {st == SIM_OK ? displacement_bound(s) : 0.0, st != SIM_OK ? (double)st : 0.0,
                       st != SIM_OK ? -(double)s->rank : -1e9};
        if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, s->comm) != MPI_SUCCESS) {
            return sim_fail(err, SIM_IO, "MPI: the step's agreement failed");
        }
        if (st != SIM_OK) {
            return st;
        }
        if (v[1] != 0.0) {
            return sim_fail(err, (sim_status)v[1],
                            "rank %d failed at step %d of the frame (its "
                            "message says why)",
                            (int)-v[2], k + 1);
        }
        if (!(v[0] < 0.5 * s->skin)) { /* NaN too: recut finds it and says where */
            SIM_TRY(recut(s, NULL, err));
        }
        const double comm = now_ms() - t0;
        one.comm_ms += comm;
        one.step_ms += comm;
        add_timing(t, &one, k == 0);
    }
    t->ranks = s->world;
    double bal[4] = {-(double)s->n_own, (double)s->n_own, -(double)s->n_ghost, (double)s->n_ghost};
    SIM_TRY(mpi_check(MPI_Allreduce(MPI_IN_PLACE, bal, 4, MPI_DOUBLE, MPI_MAX, s->comm),
                      "the ranks' balance", err));
    s->bal[0] = -bal[0];
    s->bal[1] = bal[1];
    s->bal[2] = -bal[2];
    s->bal[3] = bal[3];
    return SIM_OK;
}

/* Own bodies' energies, summed over the ranks: a contact between two own bodies counts once, one
 * across a cut half on each of its ranks, one between two ghosts not at all. */
static sim_status space_energy(sim_backend *b, sim_energy *e, sim_error *err) {
    space_backend *s = space_of(b);
    cpu_backend *L = sim_cpu_of(s->loc);
    double v[7] = {0.0};
    for (uint32_t i = 0; i < s->n_own; ++i) {
        const sim_vec4d p = L->st.pos[i], u = L->st.vel[i], w = L->st.spin[i];
        v[0] += 0.5 * u.w * (u.x * u.x + u.y * u.y + u.z * u.z);
        v[1] += 0.5 * 0.4 * u.w * p.w * p.w * (w.x * w.x + w.y * w.y + w.z * w.z);
        (void)sim_body_force_d(p, u, &L->ph, &v[3]);
        v[4] += p.x;
        v[5] += p.y;
        v[6] += p.z;
    }
    uint64_t count = 0;
    sim_status st = sim_cpu_contacts(s->loc, NULL, 0, &count, err);
    sim_body_pair *pairs = NULL;
    if (st == SIM_OK && count > 0) {
        pairs = malloc(count * sizeof *pairs);
        st = pairs ? sim_cpu_contacts(s->loc, pairs, count, &count, err)
                   : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot list %llu contacts",
                              (unsigned long long)count);
    }
    for (uint64_t k = 0; k < count && st == SIM_OK; ++k) {
        const uint32_t i = pairs[k].i, j = pairs[k].j;
        const double weight = 0.5 * ((i < s->n_own) + (j < s->n_own));
        double pe = 0.0;
        (void)sim_contact_force_d(L->st.pos[i], L->st.vel[i], L->st.pos[j], L->st.vel[j], &L->ph,
                                  &pe);
        v[2] += weight * pe;
    }
    free(pairs);
    SIM_TRY(agree(s, st, err));
    SIM_TRY(mpi_check(MPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_DOUBLE, MPI_SUM, s->comm),
                      "the energies", err));
    e->kinetic = v[0];
    e->rotational = v[1];
    e->contact = v[2];
    e->gravity = v[3];
    e->atm = 0.0;
    e->total = v[0] + v[1] + v[2] + v[3];
    for (int a = 0; a < 3; ++a) {
        s->centre[a] = v[4 + a] / (double)s->base.n;
    }
    return SIM_OK;
}

/* The state gathered to rank 0 in chunks of SPACE_GATHER_CHUNK bodies: no other rank holds more
 * than its own. Collective: every rank calls it (out is written on rank 0 only). */
static sim_status space_read_state(sim_backend *b, sim_state *out, sim_vec3d *forces,
                                   sim_error *err) {
    space_backend *s = space_of(b);
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    const uint32_t chunk = SPACE_GATHER_CHUNK;
    body_rec *buf = malloc((size_t)chunk * sizeof *buf);
    SIM_TRY(agree(s, buf ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no gather buffer"), err));
    sim_status st = SIM_OK;
    if (s->rank != 0) {
        for (uint32_t i0 = 0; i0 < s->n_own && st == SIM_OK; i0 += chunk) {
            const uint32_t m = s->n_own - i0 < chunk ? s->n_own - i0 : chunk;
            for (uint32_t k = 0; k < m; ++k) {
                const uint32_t i = i0 + k;
                buf[k] =
                    (body_rec){L->st.pos[i], L->st.vel[i], L->st.spin[i], L->force[i], s->gid[i]};
            }
            st = mpi_check(MPI_Send(buf, (int)m, s->rec_type, 0, 4, s->comm), "a gather", err);
        }
        uint32_t end = UINT32_MAX; /* says this rank is done */
        if (st == SIM_OK) {
            st = mpi_check(MPI_Send(&end, 1, MPI_UINT32_T, 0, 5, s->comm), "a gather", err);
        }
    } else {
        for (uint32_t i = 0; i < s->n_own; ++i) {
            const uint64_t g = s->gid[i];
            out->pos[g] = L->st.pos[i];
            out->vel[g] = L->st.vel[i];
            if (out->spin != NULL) {
                out->spin[g] = L->st.spin[i];
            }
            if (forces != NULL) {
                forces[g] = L->force[i];
            }
        }
        for (int r = 1; r < s->world && st == SIM_OK; ++r) {
            for (;;) {
                MPI_Status ms;
                st = mpi_check(MPI_Probe(r, MPI_ANY_TAG, s->comm, &ms), "a gather", err);
                if (st != SIM_OK || ms.MPI_TAG == 5) {
                    uint32_t end = 0;
                    if (st == SIM_OK) {
                        st = mpi_check(
                            MPI_Recv(&end, 1, MPI_UINT32_T, r, 5, s->comm, MPI_STATUS_IGNORE),
                            "a gather", err);
                    }
                    break;
                }
                int m = 0;
                st = mpi_check(MPI_Recv(buf, (int)chunk, s->rec_type, r, 4, s->comm, &ms),
                               "a gather", err);
                MPI_Get_count(&ms, s->rec_type, &m);
                for (int k = 0; k < m && st == SIM_OK; ++k) {
                    const uint64_t g = buf[k].gid;
                    out->pos[g] = buf[k].pos;
                    out->vel[g] = buf[k].vel;
                    if (out->spin != NULL) {
                        out->spin[g] = buf[k].spin;
                    }
                    if (forces != NULL) {
                        forces[g] = buf[k].force;
                    }
                }
            }
        }
        out->contact_count = 0;
    }
    free(buf);
    return agree(s, st, err);
}

static sim_status refuse(const char *what, sim_error *err) {
    return sim_fail(err, SIM_UNSUPPORTED, "a run split in space (--decompose space) cannot %s yet",
                    what);
}

static sim_status space_set_params(sim_backend *b, const sim_params *p, sim_error *err) {
    return refuse("change its parameters", err);
}

static sim_status space_set_state(sim_backend *b, const sim_state *st, sim_error *err) {
    return refuse("take a new state", err);
}

static sim_status space_export(sim_backend *b, sim_vec4f *pos, float *speed, int on_device,
                               sim_error *err) {
    return refuse("export positions (the viewer)", err);
}

static sim_status space_capture(sim_backend *b, sim_capture *c, sim_error *err) {
    return refuse("record trajectories", err);
}

static sim_status space_set_cull(sim_backend *b, sim_error *err) {
    return refuse("turn culling off", err);
}

static sim_status space_tile_pairs(sim_backend *b, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                   sim_error *err) {
    *count = 0;
    return refuse("list its tile pairs", err);
}

static sim_status space_contacts(sim_backend *b, sim_body_pair *out, uint64_t cap, uint64_t *count,
                                 sim_error *err) {
    *count = 0;
    return refuse("list its contacts", err);
}

static sim_status space_tile_triples(sim_backend *b, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                     sim_error *err) {
    *count = 0;
    return refuse("list its tile triples", err);
}

static void space_destroy(sim_backend *b) {
    space_backend *s = space_of(b);
    sim_backend_destroy(s->loc);
    for (int k = 0; k < MAX_NBR; ++k) {
        free(s->send_idx[k]);
        free(s->sbuf[k]);
        free(s->rbuf[k]);
    }
    free(s->cuts);
    free(s->gid);
    free(s->ref);
    if (s->rec_type != MPI_DATATYPE_NULL) {
        MPI_Type_free(&s->rec_type);
        MPI_Type_free(&s->halo_type);
    }
    if (s->comm != MPI_COMM_NULL) {
        MPI_Comm_free(&s->comm);
    }
    free(s);
}

static const sim_backend_ops space_ops = {
    space_destroy,    space_run_frame,  space_set_params, space_set_state,
    space_read_state, space_energy,     space_export,     space_capture,
    space_set_cull,   space_tile_pairs, space_contacts,   space_tile_triples,
};

int sim_space_available(void) {
    return 1;
}

sim_status sim_space_backend_create(const sim_backend_config *c, const sim_params *p,
                                    const sim_state *s0, sim_backend **out, sim_error *err) {
    *out = NULL;
    SIM_TRY(sim_space_check(c, p, err));
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
        return sim_fail(err, SIM_IO, "the spatial split needs MPI: start the ranks with mpirun");
    }
    int rank = -1, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (rank != c->multi.rank || world != c->multi.world) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "MPI says rank %d of %d, the run rank %d of %d",
                        rank, world, c->multi.rank, c->multi.world);
    }
    space_backend *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the spatial split");
    }
    s->comm = MPI_COMM_NULL;
    s->rec_type = s->halo_type = MPI_DATATYPE_NULL;
    s->base.ops = &space_ops;
    s->base.config = *c;
    s->base.params = *p;
    s->base.n = s0->n;
    s->base.rank = (sim_rank){rank, world, 0, NULL};
    s->rank = rank;
    s->world = world;
    sim_status st = mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &s->comm), "MPI_Comm_dup", err);
    if (st == SIM_OK) {
        MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
        MPI_Type_contiguous((int)sizeof(body_rec), MPI_BYTE, &s->rec_type);
        MPI_Type_commit(&s->rec_type);
        MPI_Type_contiguous((int)sizeof(halo_rec), MPI_BYTE, &s->halo_type);
        MPI_Type_commit(&s->halo_type);
        s->cuts = calloc((size_t)world + 1, sizeof *s->cuts);
        st = s->cuts ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold the cuts");
    }
    if (st == SIM_OK) {
        st = sim_backend_plan_maps(&s->base, c->pair_map, c->triplet_map, p, err);
    }
    if (st == SIM_OK) {
        /* what one rank would take from the whole state, fixed for every rank's backend */
        s->lp = *p;
        s->lp.dt = p->dt > 0.0 ? p->dt : sim_default_dt(p, s0);
        s->lp.steps_per_frame = 1;
        s->skin = sim_nlist_skin(p, s0, s->lp.dt);
        s->lp.skin.set = 1;
        s->lp.skin.value = s->skin;
        s->reach = 2.0 * sim_state_max_radius(s0);
        /* no lists (skin 0): the halo keeps a skin of its own, a quarter of the reach, so that
         * bodies are cut again about as often as lists of that skin would be rebuilt */
        if (!(s->skin > 0.0)) {
            s->skin = 0.25 * s->reach;
        }
        s->halo = s->reach + s->skin;
        s->base.nlist_skin = s->lp.skin.value;
        s->lc = *c;
        memset(&s->lc.multi, 0, sizeof s->lc.multi);
        s->lc.stop = NULL;
        st = recut(s, s0, err);
    }
    if (st != SIM_OK) {
        space_destroy(&s->base);
        return st;
    }
    snprintf(s->base.device_name, sizeof s->base.device_name, "%.80s: rank %d of %d in space",
             sim_backend_device_name(s->loc), rank, world);
    *out = &s->base;
    return SIM_OK;
}

sim_status sim_space_sum_over_processes(sim_backend *b, double *v, size_t count, sim_error *err) {
    return mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, v, (int)count, MPI_DOUBLE, MPI_SUM, space_of(b)->comm),
        "a sum over the processes", err);
}

double sim_space_mean_height(const sim_backend *b, double ux, double uy, double uz) {
    const space_backend *s = (const space_backend *)b;
    return ux * s->centre[0] + uy * s->centre[1] + uz * s->centre[2];
}

void sim_space_balance(const sim_backend *b, char *out, size_t cap) {
    const space_backend *s = (const space_backend *)b;
    snprintf(out, cap,
             "space split over %d ranks along %s: own bodies %.0f..%.0f, ghosts %.0f..%.0f per "
             "rank; %llu cuts",
             s->world, axis_name(s->axis), s->bal[0], s->bal[1], s->bal[2], s->bal[3],
             (unsigned long long)s->cuts_made);
}

#else /* no MPI */

int sim_space_available(void) {
    return 0;
}

sim_status sim_space_backend_create(const sim_backend_config *c, const sim_params *p,
                                    const sim_state *s0, sim_backend **out, sim_error *err) {
    *out = NULL;
    return sim_fail(err, SIM_UNSUPPORTED,
                    "--decompose space runs over MPI, and this build has none (Debian: "
                    "libopenmpi-dev)");
}

sim_status sim_space_sum_over_processes(sim_backend *b, double *v, size_t count, sim_error *err) {
    return sim_fail(err, SIM_UNSUPPORTED, "no MPI in this build");
}

double sim_space_mean_height(const sim_backend *b, double ux, double uy, double uz) {
    return 0.0;
}

void sim_space_balance(const sim_backend *b, char *out, size_t cap) {
    if (cap > 0) {
        out[0] = '\0';
    }
}

#endif

sim_status sim_space_check(const sim_backend_config *c, const sim_params *p, sim_error *err) {
    if (c->kind != SIM_BACKEND_CPU) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--decompose space: the spatial split runs the CPU backend only so far "
                        "(--backend cpu)");
    }
    if (!sim_config_culls(c)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--decompose space needs culled contacts (--cull on): a brute-force sweep "
                        "touches every pair, which no slab holds");
    }
    if (sim_params_have_friction(p)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--decompose space: friction (friction %g, rolling_friction %g) is not "
                        "split in space yet (its springs do not migrate)",
                        p->friction, p->rolling_friction);
    }
    if (p->triplets) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--decompose space: triplet (ATM) forces are not split in space yet "
                        "(--triplets off)");
    }
    return SIM_OK;
}
