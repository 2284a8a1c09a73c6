/* SPDX-License-Identifier: MIT
 * nbsim — the spatial split's cuts, migration and halos (space_impl.h).
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
#ifdef NBSIM_HAVE_MPI
#include "space/space_impl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Histogram bins along the cut axis: cuts are placed at bin edges, so a rank's share is within
 * one bin's bodies (1/4096 of the spread) of N / R. */
#define SPACE_BINS 4096

static double coord(sim_vec4d p, int axis) {
    return axis == 0 ? p.x : axis == 1 ? p.y : p.z;
}

const char *sim_space_axis_name(int axis) {
    return axis == 0 ? "x" : axis == 1 ? "y" : "z";
}

sim_status sim_space_agree(space_backend *s, sim_status st, sim_error *err) {
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
                          R, k, sim_space_axis_name(axis), thick, s->halo, s->reach, s->skin,
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

sim_status sim_space_halo_update(space_backend *s, sim_error *err) {
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

sim_status sim_space_recut(space_backend *s, const sim_state *initial, sim_error *err) {
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
    SIM_TRY(sim_space_agree(s, st, err));
    st = place_cuts(s, mine, n, err); /* the same verdict on every rank */
    body_rec *own = NULL, *ghosts = NULL;
    uint32_t n_own = 0, n_ghost = 0;
    if (st == SIM_OK) {
        st = sim_space_agree(s, migrate(s, mine, n, &own, &n_own, err), err);
    }
    free(mine);
    if (st == SIM_OK) {
        st = sim_space_agree(s, exchange_ghosts(s, own, n_own, &ghosts, &n_ghost, err), err);
    }
    if (st == SIM_OK) {
        st = sim_space_agree(s, build_local(s, own, n_own, ghosts, n_ghost, initial == NULL, err),
                             err);
    }
    if (st == SIM_OK && initial != NULL) { /* own forces are right, the ghosts' not yet */
        st = sim_space_agree(s, sim_space_halo_update(s, err), err);
    }
    free(own);
    free(ghosts);
    return st;
}

double sim_space_displacement_bound(const space_backend *s) {
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

#endif
