/* SPDX-License-Identifier: MIT
 * nbsim — the spatial split's cuts, migration and halos (space_impl.h).
 *
 * The halo's guarantee. At a cut, rank r owns the bodies in its slab [lo_r, hi_r) along the cut
 * axis and receives every body within halo = reach + skin of it along that axis (reach: twice
 * the largest radius, or the ATM cut-off where that is larger), from the neighbouring slabs
 * (each slab is at least a halo thick, so no other slab is that close). While no body has moved
 * more than skin / 2 since the cut, two bodies that touch (or are within the cut-off) were
 * within reach + skin of each other at the cut, so an own body's partner is own or a ghost, and
 * so are the other two bodies of its triples (a triple within the cut-off has all three sides
 * within it). Each step bounds every own body's displacement after the next drift (its
 * distance from its place at the cut, plus |v + F dt / 2m| dt, what the drift will move it);
 * one all-reduce of the largest bound (and of a failure, so that every rank stops at the same
 * step with the same status) tells all ranks together to cut again before that step.
 *
 * Friction: a contact's history lives in the row of its body with the larger user index (cpu/
 * cpu_friction.h), and the local backend holds its bodies in the user's order, so every rank
 * that sees a pair gives it the roles one rank gives it. The history migrates with its row's
 * body; a ghost arrives with its rows, so a contact across a cut starts each cut with the same
 * spring on both its ranks, and as a ghost's state is its owner's bit for bit, both ranks evolve
 * it alike. Only own rows leave a rank (a ghost's may miss contacts beyond the halo).
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

/* Position and user index of record i (of s->rec_size bytes) of recs. */
static sim_vec4d pos_of(const space_backend *s, const void *recs, uint64_t i) {
    sim_vec4d p;
    memcpy(&p, (const char *)recs + i * s->rec_size + offsetof(body_rec, pos), sizeof p);
    return p;
}

static uint64_t gid_of(const space_backend *s, const void *recs, uint64_t i) {
    uint64_t g;
    memcpy(&g, (const char *)recs + i * s->rec_size + offsetof(body_rec, gid), sizeof g);
    return g;
}

/* The cut axis and the slabs' bounds, the same on every rank (from sums over the ranks);
 * SIM_BAD_ARGUMENT, alike on every rank, when a slab would be thinner than one halo. */
static sim_status place_cuts(space_backend *s, const void *own, uint32_t n, sim_error *err) {
    double ext[6] = {-DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (uint32_t i = 0; i < n; ++i) {
        for (int a = 0; a < 3; ++a) {
            const double x = coord(pos_of(s, own, i), a);
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
        long b = (long)((coord(pos_of(s, own, i), axis) - lo) / width * SPACE_BINS);
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
            char why[96];
            snprintf(why, sizeof why,
                     s->atm_reach > s->reach ? "ATM cut-off %.3g m" : "contact reach %.3g m",
                     fmax(s->reach, s->atm_reach));
            st = sim_fail(err, SIM_BAD_ARGUMENT,
                          "%d ranks: rank %d's slab along %s would be %.3g m thick, less than "
                          "one halo of %.3g m (%s + skin %.3g m); run on at most %d ranks",
                          R, k, sim_space_axis_name(axis), thick, s->halo, why, s->skin,
                          (int)fmax(1.0, floor(spread / s->halo / 1.5)));
        }
    }
    s->cuts_made++;
    return st;
}

static int by_gid(const void *a, const void *b) {
    uint64_t x, y;
    memcpy(&x, (const char *)a + offsetof(body_rec, gid), sizeof x);
    memcpy(&y, (const char *)b + offsetof(body_rec, gid), sizeof y);
    return x < y ? -1 : x > y;
}

int sim_space_by_pair(const void *a, const void *b) {
    const contact_rec *x = a, *y = b;
    return x->gi != y->gi ? (x->gi < y->gi ? -1 : 1) : (x->gj < y->gj ? -1 : x->gj > y->gj);
}

/* n items of size bytes to the ranks dest[] names (an all-to-all); *in: those this rank
 * receives, rank by rank. *items is freed (NULL) once packed by destination: a rank holds two
 * copies of its share at most. */
static sim_status route(space_backend *s, void **items, size_t size, MPI_Datatype type,
                        const int *dest, uint64_t n, void **in, uint64_t *n_in, sim_error *err) {
    const int R = s->world;
    int *cnt = calloc((size_t)5 * R, sizeof *cnt);
    char *sorted = malloc((n ? n : 1) * size);
    sim_status st = cnt && sorted ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot migrate");
    int *rcnt = cnt + R, *soff = cnt + 2 * R, *roff = cnt + 3 * R, *fill = cnt + 4 * R;
    for (uint64_t i = 0; i < n && st == SIM_OK; ++i) {
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
    for (uint64_t i = 0; i < n && st == SIM_OK; ++i) {
        memcpy(sorted + (size_t)(soff[dest[i]] + fill[dest[i]]++) * size,
               (const char *)*items + (size_t)i * size, size);
    }
    free(*items);
    *items = NULL;
    char *got = NULL;
    if (st == SIM_OK) {
        got = malloc((total ? total : 1) * size);
        st = got ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot migrate");
    }
    if (st == SIM_OK) {
        st = mpi_check(MPI_Alltoallv(sorted, cnt, soff, type, got, rcnt, roff, type, s->comm),
                       "migration", err);
    }
    free(cnt);
    free(sorted);
    if (st != SIM_OK) {
        free(got);
        return st;
    }
    *in = got;
    *n_in = total;
    return SIM_OK;
}

/* Bodies to their owners, each contact's history with its body (cbody[k]: the index in mine of
 * contact k's); *own and *cown: this rank's, in the user's order. *mine and *cmine are freed. */
static sim_status migrate(space_backend *s, void **mine, uint32_t n, contact_rec **cmine,
                          const uint32_t *cbody, uint64_t cn, void **own, uint32_t *n_own,
                          contact_rec **cown, uint64_t *cn_own, sim_error *err) {
    int *dest = malloc((n ? n : 1) * sizeof *dest);
    int *cdest = malloc((cn ? cn : 1) * sizeof *cdest);
    sim_status st = dest && cdest ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot migrate");
    for (uint32_t i = 0; i < n && st == SIM_OK; ++i) {
        dest[i] = owner_of(s, coord(pos_of(s, *mine, i), s->axis));
    }
    for (uint64_t k = 0; k < cn && st == SIM_OK; ++k) {
        cdest[k] = dest[cbody[k]];
    }
    void *in = NULL, *cin = NULL;
    uint64_t total = 0, ctotal = 0;
    if (st == SIM_OK) {
        st = route(s, mine, s->rec_size, s->rec_type, dest, n, &in, &total, err);
    }
    if (st == SIM_OK) {
        st = route(s, (void **)cmine, sizeof **cmine, s->contact_type, cdest, cn, &cin, &ctotal,
                   err);
    }
    free(dest);
    free(cdest);
    if (st != SIM_OK) {
        free(in);
        free(cin);
        return st;
    }
    qsort(in, total, s->rec_size, by_gid);
    qsort(cin, ctotal, sizeof(contact_rec), sim_space_by_pair);
    *own = in;
    *n_own = (uint32_t)total;
    *cown = cin;
    *cn_own = ctotal;
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

/* out[k] (nout[k] items of size bytes) to neighbour k, and theirs into *in, neighbour by
 * neighbour: cnt[k] items from neighbour k at off[k], *total in all. */
static sim_status swap(space_backend *s, void *const *out, const uint32_t *nout, size_t size,
                       MPI_Datatype type, int tag, void **in, uint32_t *cnt, uint32_t *off,
                       uint32_t *total, sim_error *err) {
    MPI_Request req[2 * MAX_NBR];
    int nreq = 0;
    for (int k = 0; k < s->nnbr; ++k) {
        MPI_Irecv(&cnt[k], 1, MPI_UINT32_T, s->nbr[k], tag, s->comm, &req[nreq++]);
        MPI_Isend(&nout[k], 1, MPI_UINT32_T, s->nbr[k], tag, s->comm, &req[nreq++]);
    }
    SIM_TRY(mpi_check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "ghost counts", err));
    *total = 0;
    for (int k = 0; k < s->nnbr; ++k) {
        off[k] = *total;
        *total += cnt[k];
    }
    char *got = malloc((*total ? *total : 1) * size);
    if (got == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot receive %u ghosts", *total);
    }
    nreq = 0;
    for (int k = 0; k < s->nnbr; ++k) {
        MPI_Irecv(got + (size_t)off[k] * size, (int)cnt[k], type, s->nbr[k], tag + 1, s->comm,
                  &req[nreq++]);
        MPI_Isend(out[k], (int)nout[k], type, s->nbr[k], tag + 1, s->comm, &req[nreq++]);
    }
    const sim_status st = mpi_check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "ghosts", err);
    if (st != SIM_OK) {
        free(got);
        return st;
    }
    *in = got;
    return SIM_OK;
}

/* Sends each neighbour its ghosts from own (within one halo of its slab) with their contacts'
 * histories (cown, sorted by body as own is); *ghosts and *cghosts: those received. send_idx
 * holds indices into own until build_local makes them local. */
static sim_status exchange_ghosts(space_backend *s, const void *own, uint32_t n_own,
                                  const contact_rec *cown, uint64_t cn_own, void **ghosts,
                                  uint32_t *n_ghost, contact_rec **cghosts, uint64_t *cn_ghost,
                                  sim_error *err) {
    find_neighbours(s);
    void *out[MAX_NBR] = {NULL, NULL}, *cout[MAX_NBR] = {NULL, NULL};
    uint32_t cnout[MAX_NBR] = {0, 0}, ccnt[MAX_NBR], coff[MAX_NBR], ctotal = 0;
    uint64_t *first = malloc(((size_t)n_own + 1) * sizeof *first); /* own i's contacts' start */
    sim_status st = first ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no ghosts");
    for (uint32_t i = 0, c = 0; i <= n_own && st == SIM_OK; ++i) {
        while (c < cn_own && (i == n_own || cown[c].gi < gid_of(s, own, i))) {
            ++c;
        }
        first[i] = c;
    }
    for (int k = 0; k < s->nnbr && st == SIM_OK; ++k) {
        free(s->send_idx[k]);
        s->send_idx[k] = malloc((n_own ? n_own : 1) * sizeof *s->send_idx[k]);
        char *bo = malloc((n_own ? n_own : 1) * s->rec_size);
        out[k] = bo;
        st = s->send_idx[k] && bo ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no ghosts");
        uint32_t m = 0;
        uint64_t cm = 0;
        for (uint32_t i = 0; i < n_own && st == SIM_OK; ++i) {
            if (slab_distance(s, coord(pos_of(s, own, i), s->axis), s->nbr[k]) < s->halo) {
                s->send_idx[k][m] = i;
                memcpy(bo + (size_t)m++ * s->rec_size, (const char *)own + (size_t)i * s->rec_size,
                       s->rec_size);
                cm += first[i + 1] - first[i];
            }
        }
        s->send_n[k] = m;
        contact_rec *co = malloc((cm ? cm : 1) * sizeof *co);
        cout[k] = co;
        st = st == SIM_OK && co == NULL ? sim_fail(err, SIM_OUT_OF_MEMORY, "no ghosts") : st;
        for (uint32_t q = 0; q < m && st == SIM_OK; ++q) {
            const uint32_t i = s->send_idx[k][q];
            for (uint64_t c = first[i]; c < first[i + 1]; ++c) {
                co[cnout[k]++] = cown[c];
            }
        }
    }
    free(first);
    void *in = NULL, *cin = NULL;
    uint32_t total = 0;
    if (st == SIM_OK) {
        st = swap(s, out, s->send_n, s->rec_size, s->rec_type, 1, &in, s->recv_n, s->recv_off,
                  &total, err);
    }
    if (st == SIM_OK) {
        st = swap(s, cout, cnout, sizeof(contact_rec), s->contact_type, 6, &cin, ccnt, coff,
                  &ctotal, err);
    }
    for (int k = 0; k < MAX_NBR; ++k) {
        free(out[k]);
        free(cout[k]);
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
        free(cin);
        return st;
    }
    *ghosts = in;
    *n_ghost = total;
    *cghosts = cin;
    *cn_ghost = ctotal;
    return SIM_OK;
}

sim_status sim_space_halo_update(space_backend *s, sim_error *err) {
    cpu_backend *L = sim_cpu_of(s->loc);
    const sim_vec3d none = {0.0, 0.0, 0.0};
    MPI_Request req[2 * MAX_NBR];
    int nreq = 0;
    for (int k = 0; k < s->nnbr; ++k) {
        for (uint32_t m = 0; m < s->send_n[k]; ++m) {
            const uint32_t i = s->send_idx[k][m];
            s->sbuf[k][m] = (halo_rec){L->st.pos[i], L->st.vel[i], L->st.spin[i], L->force[i],
                                       L->fric ? L->fric->torque[i] : none};
        }
        MPI_Irecv(s->rbuf[k], (int)s->recv_n[k], s->halo_type, s->nbr[k], 3, s->comm, &req[nreq++]);
        MPI_Isend(s->sbuf[k], (int)s->send_n[k], s->halo_type, s->nbr[k], 3, s->comm, &req[nreq++]);
    }
    SIM_TRY(mpi_check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "the halo exchange", err));
    for (int k = 0; k < s->nnbr; ++k) {
        for (uint32_t m = 0; m < s->recv_n[k]; ++m) {
            const uint32_t g = s->ghost[s->recv_off[k] + m];
            const halo_rec *h = &s->rbuf[k][m];
            L->st.pos[g] = h->pos;
            L->st.vel[g] = h->vel;
            L->st.spin[g] = h->spin;
            L->force[g] = h->force;
            if (L->fric != NULL) {
                L->fric->torque[g] = h->torque;
            }
        }
    }
    return SIM_OK;
}

typedef struct {
    uint64_t gid;
    uint32_t src; /* < n_own: own[src]; else ghosts[src - n_own] */
} slot_src;

static int by_slot_gid(const void *a, const void *b) {
    const uint64_t x = ((const slot_src *)a)->gid, y = ((const slot_src *)b)->gid;
    return x < y ? -1 : x > y;
}

/* The local index of user index g, or UINT32_MAX when it is not here. */
static uint32_t local_of(const space_backend *s, uint64_t g) {
    uint32_t lo = 0, hi = s->n_own + s->n_ghost;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (s->gid[mid] < g) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < s->n_own + s->n_ghost && s->gid[lo] == g ? lo : UINT32_MAX;
}

/* This rank's CPU backend for own + ghosts in the user's order, with the histories of cont
 * whose bodies are both here (a ghost's contact with a body beyond the halo cannot reach an own
 * body); with_forces: the records' forces and torques replace the ones it computes (mid-run:
 * Verlet's, of the last half step). The records are freed (*ownp, *ghostsp NULL) before the
 * backend is built: they and its bodies are never held together. */
static sim_status build_local(space_backend *s, void **ownp, uint32_t n_own, void **ghostsp,
                              uint32_t n_ghost, const contact_rec *cont, uint64_t n_cont,
                              int with_forces, sim_error *err) {
    const void *own = *ownp, *ghosts = *ghostsp;
    const size_t size = s->rec_size;
    const uint32_t n = n_own + n_ghost;
    if (n == 0) { /* a rank may own nothing for a moment (all its bodies left): no backend */
        return sim_fail(err, SIM_BAD_ARGUMENT, "rank %d owns no body: run on fewer ranks", s->rank);
    }
    sim_state st;
    SIM_TRY(sim_state_alloc(&st, n, err));
    free(s->gid);
    free(s->own);
    free(s->ghost);
    free(s->is_own);
    free(s->ref);
    s->gid = malloc(n * sizeof *s->gid);
    s->own = malloc((n_own ? n_own : 1) * sizeof *s->own);
    s->ghost = malloc((n_ghost ? n_ghost : 1) * sizeof *s->ghost);
    s->is_own = malloc(n);
    s->ref = malloc((n_own ? n_own : 1) * sizeof *s->ref);
    slot_src *order = malloc(n * sizeof *order);
    sim_vec3d *ft = with_forces ? malloc((size_t)2 * n * sizeof *ft) : NULL; /* F, T by slot */
    if (s->gid == NULL || s->own == NULL || s->ghost == NULL || s->is_own == NULL ||
        s->ref == NULL || order == NULL || (with_forces && ft == NULL)) {
        free(order);
        free(ft);
        sim_state_free(&st);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold %u bodies' indices", n);
    }
    for (uint32_t k = 0; k < n; ++k) {
        order[k] = (slot_src){k < n_own ? gid_of(s, own, k) : gid_of(s, ghosts, k - n_own), k};
    }
    qsort(order, n, sizeof *order, by_slot_gid);
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t k = order[i].src;
        const body_rec r = k < n_own ? rec_get(own, size, k) : rec_get(ghosts, size, k - n_own);
        st.pos[i] = r.pos;
        st.vel[i] = r.vel;
        st.spin[i] = r.spin;
        s->gid[i] = r.gid;
        s->is_own[i] = k < n_own;
        if (ft != NULL) {
            ft[2 * (size_t)i] = r.force;
            ft[2 * (size_t)i + 1] = r.torque;
        }
        if (k < n_own) {
            s->own[k] = i;
            s->ref[k] = r.pos;
        } else {
            s->ghost[k - n_own] = i;
        }
    }
    free(order);
    free(*ownp);
    free(*ghostsp);
    *ownp = *ghostsp = NULL;
    s->n_own = n_own;
    s->n_ghost = n_ghost;
    for (int k = 0; k < s->nnbr; ++k) { /* indices into own become local ones */
        for (uint32_t m = 0; m < s->send_n[k]; ++m) {
            s->send_idx[k][m] = s->own[s->send_idx[k][m]];
        }
    }
    uint64_t kept = 0;
    for (uint64_t c = 0; c < n_cont; ++c) {
        kept += local_of(s, cont[c].gi) != UINT32_MAX &&
                (SPACE_IS_WALL(cont[c].gj) || local_of(s, cont[c].gj) != UINT32_MAX);
    }
    sim_status status = sim_state_set_contact_count(&st, kept, err);
    for (uint64_t c = 0, k = 0; c < n_cont && status == SIM_OK; ++c) {
        const uint32_t i = local_of(s, cont[c].gi);
        const uint64_t gj = cont[c].gj;
        const uint32_t j =
            SPACE_IS_WALL(gj) ? SIM_CONTACT_WALL((uint32_t)(gj - SPACE_WALL(0))) : local_of(s, gj);
        /* the wall test first: wall 5's code is UINT32_MAX, local_of's "not here" */
        if (i != UINT32_MAX && (SPACE_IS_WALL(gj) || j != UINT32_MAX)) {
            st.contacts[k++] = (sim_state_contact){i, j, cont[c].xi, cont[c].roll};
        }
    }
    if (status == SIM_OK) {
        status = sim_cpu_backend_create(&s->lc, &s->lp, &st, NULL, &s->loc, err);
    }
    sim_state_free(&st);
    if (status == SIM_OK && with_forces) {
        cpu_backend *L = sim_cpu_of(s->loc);
        for (uint32_t i = 0; i < n; ++i) {
            L->force[i] = ft[2 * (size_t)i];
            if (L->fric != NULL) {
                L->fric->torque[i] = ft[2 * (size_t)i + 1];
            }
        }
    }
    free(ft);
    return status;
}

sim_contact_history_d sim_space_history(const cpu_backend *L, uint32_t i, uint32_t j) {
    const sim_cpu_friction *fr = L->fric;
    const sim_cpu_slot *row = fr->table[fr->last] + fr->row[i];
    for (uint32_t k = 0; k < fr->count[fr->last][i]; ++k) {
        if (row[k].partner == j) {
            return row[k].h;
        }
    }
    const sim_contact_history_d none = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
    return none;
}

/* The user index of local partner j of a history (or a wall's code). */
static uint64_t partner_gid(const space_backend *s, uint32_t j) {
    return SIM_CONTACT_IS_WALL(j) ? SPACE_WALL(SIM_CONTACT_WALL_INDEX(j)) : s->gid[j];
}

/* This rank's share before a cut: *mine its bodies (initial != NULL: block [a, b) of the
 * initial state), *cmine their contacts' histories (friction only), cbody[k] the body in mine
 * of contact k. */
static sim_status collect(space_backend *s, const sim_state *initial, void **mine, uint32_t *n,
                          contact_rec **cmine, uint32_t **cbody, uint64_t *cn, sim_error *err) {
    const int friction = sim_params_have_friction(&s->lp);
    const sim_vec3d zero = {0.0, 0.0, 0.0};
    uint32_t a = 0;
    uint64_t count = 0;
    if (initial != NULL) {
        const uint64_t N = initial->n;
        a = (uint32_t)(N * (uint64_t)s->rank / (uint64_t)s->world);
        *n = (uint32_t)(N * (uint64_t)(s->rank + 1) / (uint64_t)s->world) - a;
        for (uint64_t c = 0; c < initial->contact_count && friction; ++c) {
            count += initial->contacts[c].i >= a && initial->contacts[c].i - a < *n;
        }
    } else {
        *n = s->n_own;
        const sim_cpu_friction *fr = sim_cpu_of(s->loc)->fric;
        for (uint32_t k = 0; k < *n && fr != NULL; ++k) {
            count += fr->count[fr->last][s->own[k]];
        }
    }
    *mine = malloc((*n ? *n : 1) * s->rec_size);
    *cmine = malloc((count ? count : 1) * sizeof **cmine);
    *cbody = malloc((count ? count : 1) * sizeof **cbody);
    *cn = count;
    if (*mine == NULL || *cmine == NULL || *cbody == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold %u bodies", *n);
    }
    uint64_t c = 0;
    if (initial != NULL) {
        const sim_vec4d none = {0.0, 0.0, 0.0, 0.0};
        for (uint32_t i = 0; i < *n; ++i) {
            const body_rec r = {.pos = initial->pos[a + i],
                                .vel = initial->vel[a + i],
                                .force = zero,
                                .gid = a + i,
                                .spin = initial->spin ? initial->spin[a + i] : none,
                                .torque = zero};
            rec_put(*mine, s->rec_size, i, &r);
        }
        for (uint64_t k = 0; k < initial->contact_count && friction; ++k) {
            const sim_state_contact *x = &initial->contacts[k];
            if (x->i >= a && x->i - a < *n) {
                const uint64_t gj = SIM_CONTACT_IS_WALL(x->j)
                                        ? SPACE_WALL(SIM_CONTACT_WALL_INDEX(x->j))
                                        : (uint64_t)x->j;
                (*cbody)[c] = x->i - a;
                (*cmine)[c++] = (contact_rec){x->i, gj, x->xi, x->roll};
            }
        }
        return SIM_OK;
    }
    const cpu_backend *L = sim_cpu_of(s->loc);
    const sim_cpu_friction *fr = L->fric;
    for (uint32_t k = 0; k < *n; ++k) {
        const uint32_t i = s->own[k];
        const body_rec r = {.pos = L->st.pos[i],
                            .vel = L->st.vel[i],
                            .force = L->force[i],
                            .gid = s->gid[i],
                            .spin = L->st.spin[i],
                            .torque = fr ? fr->torque[i] : zero};
        rec_put(*mine, s->rec_size, k, &r);
        for (uint32_t q = 0; fr != NULL && q < fr->count[fr->last][i]; ++q) {
            const sim_cpu_slot *slot = &fr->table[fr->last][fr->row[i] + q];
            (*cbody)[c] = k;
            (*cmine)[c++] =
                (contact_rec){s->gid[i], partner_gid(s, slot->partner), slot->h.xi, slot->h.roll};
        }
    }
    return SIM_OK;
}

sim_status sim_space_recut(space_backend *s, const sim_state *initial, sim_error *err) {
    uint32_t n = 0;
    uint64_t cn = 0;
    void *mine = NULL;
    contact_rec *cmine = NULL;
    uint32_t *cbody = NULL;
    sim_status st = collect(s, initial, &mine, &n, &cmine, &cbody, &cn, err);
    st = sim_space_agree(s, st, err);
    if (st == SIM_OK) { /* all it holds is in mine now; every rank drops it here (space_ops) */
        sim_backend_destroy(s->loc);
        s->loc = NULL;
    }
    if (st == SIM_OK) {
        st = place_cuts(s, mine, n, err); /* the same verdict on every rank */
    }
    void *own = NULL, *ghosts = NULL;
    contact_rec *cown = NULL, *cghosts = NULL;
    uint32_t n_own = 0, n_ghost = 0;
    uint64_t cn_own = 0, cn_ghost = 0;
    if (st == SIM_OK) {
        st = sim_space_agree(
            s, migrate(s, &mine, n, &cmine, cbody, cn, &own, &n_own, &cown, &cn_own, err), err);
    }
    free(mine);
    free(cmine);
    free(cbody);
    if (st == SIM_OK) {
        st = sim_space_agree(s,
                             exchange_ghosts(s, own, n_own, cown, cn_own, &ghosts, &n_ghost,
                                             &cghosts, &cn_ghost, err),
                             err);
    }
    contact_rec *cont = NULL;
    if (st == SIM_OK) { /* own bodies' histories, then the ghosts' */
        cont = realloc(cown, (cn_own + cn_ghost ? cn_own + cn_ghost : 1) * sizeof *cont);
        st = cont ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold the histories");
        if (cont != NULL) {
            cown = NULL;
            memcpy(cont + cn_own, cghosts, cn_ghost * sizeof *cont);
        }
        st = sim_space_agree(s, st, err);
    }
    if (st == SIM_OK && initial != NULL) { /* built at the first use: sim_space_ready */
        s->pend_own = own;
        s->pend_ghosts = ghosts;
        s->pend_cont = cont;
        s->pend_n_own = n_own;
        s->pend_n_ghost = n_ghost;
        s->pend_n_cont = cn_own + cn_ghost;
        s->pending = 1;
        own = ghosts = NULL;
        cont = NULL;
    } else if (st == SIM_OK) {
        st = sim_space_agree(
            s, build_local(s, &own, n_own, &ghosts, n_ghost, cont, cn_own + cn_ghost, 1, err), err);
    }
    free(own);
    free(ghosts);
    free(cown);
    free(cghosts);
    free(cont);
    return st;
}

sim_status sim_space_ready(space_backend *s, sim_error *err) {
    if (!s->pending) {
        return SIM_OK;
    }
    s->pending = 0;
    sim_status st =
        sim_space_agree(s,
                        build_local(s, &s->pend_own, s->pend_n_own, &s->pend_ghosts,
                                    s->pend_n_ghost, s->pend_cont, s->pend_n_cont, 0, err),
                        err);
    free(s->pend_own); /* build_local's, unless it failed first */
    free(s->pend_ghosts);
    free(s->pend_cont);
    s->pend_own = s->pend_ghosts = NULL;
    s->pend_cont = NULL;
    if (st == SIM_OK) { /* own forces are right, the ghosts' not yet */
        st = sim_space_agree(s, sim_space_halo_update(s, err), err);
    }
    return st;
}

double sim_space_displacement_bound(const space_backend *s) {
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    const double dt = L->dt;
    double most = 0.0;
    for (uint32_t k = 0; k < s->n_own; ++k) {
        const uint32_t i = s->own[k];
        const sim_vec4d p = L->st.pos[i], v = L->st.vel[i];
        const sim_vec3d f = L->force[i];
        double dx = p.x - s->ref[k].x, dy = p.y - s->ref[k].y, dz = p.z - s->ref[k].z;
        sim_min_image_d(&dx, &dy, &dz, &L->ph);
        const double h = 0.5 * dt / v.w;
        const double ux = v.x + f.x * h, uy = v.y + f.y * h, uz = v.z + f.z * h;
        const double d = sqrt(dx * dx + dy * dy + dz * dz) + sqrt(ux * ux + uy * uy + uz * uz) * dt;
        most = d > most || isnan(d) ? d : most;
    }
    return most;
}

#endif
