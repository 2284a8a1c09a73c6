/* SPDX-License-Identifier: MIT
 * nbsim — a split run's state saved (space.h, sim_space_save_state): the file one rank's
 * sim_state_save writes, in the user's order, without any process holding all N. Rank 0 writes;
 * the bodies come to it a range of user indices at a time (SPACE_SAVE_CHUNK of them: every rank
 * sends its own bodies of the range, which its user-ordered bodies give from a cursor, and rank
 * 0 places them by index), then the contacts' histories a range of their bodies i at a time
 * (sorted by (i, j) there, as one rank's backend reads them). Each range costs two collectives. */
#ifdef NBSIM_HAVE_MPI
#include "space/space_impl.h"

#include <stdlib.h>

#include "io/state_write.h"
#include "nbsim/output_file.h"

/* User indices per range: a rank sends at most this many bodies (152 bytes each: 10 MiB) and
 * rank 0 holds one range's. */
#define SPACE_SAVE_CHUNK 65536u

/* Rank 0 gathers the m items of size bytes (type) each rank sends: counts first, then them,
 * rank by rank, into *in (grown as needed; *got on rank 0: how many). Collective. */
static sim_status gather_range(space_backend *s, const void *items, int m, size_t size,
                               MPI_Datatype type, void **in, size_t *cap, int *counts, int *displs,
                               uint64_t *got, sim_error *err) {
    SIM_TRY(mpi_check(MPI_Gather(&m, 1, MPI_INT, counts, 1, MPI_INT, 0, s->comm), "a save", err));
    int total = 0;
    for (int r = 0; s->rank == 0 && r < s->world; ++r) {
        displs[r] = total;
        total += counts[r];
    }
    sim_status st = SIM_OK;
    if (s->rank == 0 && (size_t)total > *cap) {
        void *grown = realloc(*in, (size_t)total * size);
        st =
            grown ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "a save: no room for %d rows", total);
        if (grown != NULL) {
            *in = grown;
            *cap = (size_t)total;
        }
    }
    SIM_TRY(sim_space_agree(s, st, err));
    *got = (uint64_t)total;
    return mpi_check(MPI_Gatherv(items, m, type, *in, counts, displs, type, 0, s->comm), "a save",
                     err);
}

/* The bodies, range by range, written by rank 0 (a write error shows at the commit). */
static sim_status save_bodies(space_backend *s, FILE *f, sim_error *err) {
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    const uint32_t n = s->base.n, chunk = SPACE_SAVE_CHUNK;
    const sim_vec3d zero = {0.0, 0.0, 0.0};
    body_rec *mine = malloc(chunk * sizeof *mine);
    void *in = NULL;
    size_t cap = 0;
    int *counts = calloc(2 * (size_t)s->world, sizeof *counts);
    sim_state rows = {0};
    sim_vec3d *forces = NULL;
    sim_status st = mine && counts ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "a save: no memory");
    if (st == SIM_OK && s->rank == 0) {
        st = sim_state_alloc(&rows, chunk, err);
        forces = st == SIM_OK ? malloc(chunk * sizeof *forces) : NULL;
        st = st == SIM_OK && forces == NULL ? sim_fail(err, SIM_OUT_OF_MEMORY, "a save") : st;
    }
    st = sim_space_agree(s, st, err);
    uint32_t k = 0; /* the next own body (own[] follows the user's order) */
    for (uint32_t g0 = 0; g0 < n && st == SIM_OK; g0 += chunk) {
        const uint32_t g1 = n - g0 < chunk ? n : g0 + chunk;
        int m = 0;
        for (; k < s->n_own && s->gid[s->own[k]] < g1; ++k) {
            const uint32_t i = s->own[k];
            mine[m++] = (body_rec){.pos = L->st.pos[i],
                                   .vel = L->st.vel[i],
                                   .force = L->force[i],
                                   .gid = s->gid[i],
                                   .spin = L->st.spin[i],
                                   .torque = L->fric ? L->fric->torque[i] : zero};
        }
        uint64_t got = 0;
        st = gather_range(s, mine, m, sizeof *mine, s->full_type, &in, &cap, counts,
                          counts + s->world, &got, err);
        if (st == SIM_OK && s->rank == 0) {
            const body_rec *r = in;
            for (uint64_t q = 0; q < got; ++q) {
                const uint32_t at = (uint32_t)(r[q].gid - g0);
                rows.pos[at] = r[q].pos;
                rows.vel[at] = r[q].vel;
                rows.spin[at] = r[q].spin;
                forces[at] = r[q].force;
            }
            rows.n = g1 - g0;
            if (got != rows.n) {
                st = sim_fail(err, SIM_IO, "a save: %llu of bodies %u..%u came",
                              (unsigned long long)got, g0, g1 - 1);
            } else {
                (void)sim_state_write_bodies(f, &rows, forces); /* errors: the commit's */
            }
        }
        st = sim_space_agree(s, st, err);
    }
    rows.n = chunk;
    sim_state_free(&rows);
    free(forces);
    free(mine);
    free(in);
    free(counts);
    return st;
}

/* The histories, a range of their bodies i at a time, written by rank 0 after their count. */
static sim_status save_contacts(space_backend *s, FILE *f, sim_error *err) {
    uint64_t n = 0;
    contact_rec *mine = sim_space_own_histories(s, &n);
    SIM_TRY(sim_space_agree(
        s, mine ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "a save: no memory"), err));
    uint64_t total = n;
    sim_status st = mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, s->comm), "a save", err);
    if (st == SIM_OK && total > 0 && s->rank == 0) {
        sim_state_write_contacts_head(f, total);
    }
    int *counts = calloc(2 * (size_t)s->world, sizeof *counts);
    st = sim_space_agree(
        s, st == SIM_OK && counts == NULL ? sim_fail(err, SIM_OUT_OF_MEMORY, "a save") : st, err);
    void *in = NULL;
    size_t cap = 0;
    sim_state_contact *rows = NULL;
    uint64_t k = 0;
    for (uint64_t g0 = 0; total > 0 && g0 < s->base.n && st == SIM_OK; g0 += SPACE_SAVE_CHUNK) {
        const uint64_t g1 = g0 + SPACE_SAVE_CHUNK;
        const uint64_t first = k;
        while (k < n && mine[k].gi < g1) {
            ++k;
        }
        uint64_t got = 0;
        st = gather_range(s, mine + first, (int)(k - first), sizeof *mine, s->contact_type, &in,
                          &cap, counts, counts + s->world, &got, err);
        if (st == SIM_OK && s->rank == 0 && got > 0) {
            contact_rec *r = in;
            qsort(r, got, sizeof *r, sim_space_by_pair);
            sim_state_contact *grown = realloc(rows, got * sizeof *rows);
            st = grown ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "a save");
            rows = grown ? grown : rows;
            for (uint64_t q = 0; q < got && st == SIM_OK; ++q) {
                const uint32_t j = SPACE_IS_WALL(r[q].gj)
                                       ? SIM_CONTACT_WALL((uint32_t)(r[q].gj - SPACE_WALL(0)))
                                       : (uint32_t)r[q].gj;
                rows[q] = (sim_state_contact){(uint32_t)r[q].gi, j, r[q].xi, r[q].roll};
            }
            if (st == SIM_OK) {
                (void)sim_state_write_contacts(f, rows, got); /* errors: the commit's */
            }
        }
        st = sim_space_agree(s, st, err);
    }
    free(rows);
    free(in);
    free(counts);
    free(mine);
    return st;
}

sim_status sim_space_save_state(sim_backend *b, const char *path, const sim_params *p,
                                sim_error *err) {
    space_backend *s = space_of(b);
    SIM_TRY(sim_space_usable(s, err));
    sim_output out;
    sim_status st = SIM_OK;
    if (s->rank == 0) {
        st = sim_output_open(&out, path, err);
        if (st == SIM_OK) {
            sim_state_write_head(out.file, p, s->base.n, 1, NULL);
        }
    }
    const int opened = st == SIM_OK;
    st = sim_space_agree(s, st, err);
    if (st == SIM_OK) {
        st = save_bodies(s, s->rank == 0 ? out.file : NULL, err);
    }
    if (st == SIM_OK) {
        st = save_contacts(s, s->rank == 0 ? out.file : NULL, err);
    }
    if (s->rank == 0 && opened) {
        if (st == SIM_OK) {
            st = sim_output_commit(&out, err);
        } else {
            sim_output_abort(&out);
        }
    }
    return sim_space_agree(s, st, err);
}

#endif
