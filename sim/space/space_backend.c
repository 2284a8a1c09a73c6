/* SPDX-License-Identifier: MIT
 * nbsim — the spatial split of the CPU reference over MPI (space.h): the backend's frames,
 * energies, gathers and refusals; the cuts, migration and halos are space_cut.c's.
 *
 * Why the ghosts need only their owners' state after each step. A rank's CPU backend steps its
 * own bodies and its ghosts with the same code. Velocity Verlet's first half kick and drift of a
 * body read only that body's position, velocity and last force, so when a ghost starts a step
 * with its owner's (x, v, F), bit for bit, its drifted position is the owner's, bit for bit
 * (the periodic wrap too). The contact sweep then sees every body within reach of an own body
 * (the halo's guarantee, space_cut.c) and gives own bodies their whole force; the ghosts'
 * forces, and so their kicks, are wrong, and are overwritten by the owners' (x, v, F) when the
 * step ends: one message per neighbour and step, 144 bytes per ghost (with friction the spin
 * and torque too: the spin's half kicks read them as the drift reads x, v and F).
 *
 * Full lists over own + ghosts, no reverse exchange: a pair across a cut is computed on both of
 * its ranks, each keeping the force on its own body. Half lists would compute it once and send
 * the ghost's share back, a second message per step for half the pair work. Not measured yet:
 * a contact costs a few dozen operations and a message a latency, so one message per step is
 * expected to win (LAMMPS's `newton off` across processes makes the same trade). The forces
 * equal one rank's up to the order of their sums. */
#include "space/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef NBSIM_HAVE_MPI
#include "space/space_impl.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Bodies (or histories) per message when the state is gathered to rank 0 (body_rec: 152 bytes,
 * 10 MiB). */
#define SPACE_GATHER_CHUNK 65536u

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* This process's peak resident memory [bytes] (Linux's VmHWM), 0 where it cannot be read. */
static double peak_resident(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return 1024.0 * (double)kib;
}

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

/* The backend built if it waits (collective); after a failed cut every rank has dropped its
 * backend (sim_space_recut): the same refusal everywhere, no collective. */
sim_status sim_space_usable(space_backend *s, sim_error *err) {
    if (s->pending) {
        SIM_TRY(sim_space_ready(s, err));
        snprintf(s->base.device_name, sizeof s->base.device_name, "%.80s: rank %d of %d in space",
                 sim_backend_device_name(s->loc), s->rank, s->world);
    }
    return s->loc != NULL ? SIM_OK
                          : sim_fail(err, SIM_IO,
                                     "the split in space lost its bodies at a failed "
                                     "cut (its message said why)");
}

/* Body k of the local backend NaN or past the escape limit (its check_blowup's test). */
static int blown(const cpu_backend *L, uint32_t i) {
    const double limit = SIM_ESCAPE_FACTOR * L->base.params.box_half;
    const sim_vec4d p = L->st.pos[i];
    return !(fabs(p.x) <= limit && fabs(p.y) <= limit && fabs(p.z) <= limit);
}

/* A local step stopped SIM_UNSTABLE (st): the local backend names its own index and step
 * count, so an own body that blew up is named again as one rank names it (user index, steps
 * since set-up; cpu_backend.c's check_blowup's words); a ghost that did is its owner's to report
 * (its state is the owner's: the owner stops at the same step), so this rank goes on to the
 * step's agreement. Anything else (a friction row overflowing) stands as it is. */
static sim_status name_blowup(space_backend *s, sim_status st, int frame_step, sim_error *err) {
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    if (st != SIM_UNSTABLE) {
        return st;
    }
    int ghost = 0;
    for (uint32_t i = 0; i < s->n_own + s->n_ghost; ++i) {
        if (!blown(L, i)) {
            continue;
        }
        if (!s->is_own[i]) {
            ghost = 1;
            continue;
        }
        const sim_vec4d p = L->st.pos[i];
        const unsigned long long step = s->steps_done + 1, body = s->gid[i];
        if (isnan(p.x) || isnan(p.y) || isnan(p.z)) {
            return sim_fail(err, SIM_UNSTABLE,
                            "frame step %d (step %llu): body %llu has NaN position", frame_step,
                            step, body);
        }
        return sim_fail(err, SIM_UNSTABLE,
                        "frame step %d (step %llu): body %llu left the box (x=%g, y=%g, z=%g; "
                        "walls at +-%g): the time step %g s is too large for these speeds",
                        frame_step, step, body, p.x, p.y, p.z, L->base.params.box_half, L->dt);
    }
    return ghost ? SIM_OK : st;
}

static sim_status space_run_frame(sim_backend *b, sim_frame_timing *t, sim_error *err) {
    space_backend *s = space_of(b);
    SIM_TRY(sim_space_usable(s, err));
    const int steps = s->base.params.steps_per_frame;
    memset(t, 0, sizeof *t);
    for (int k = 0; k < steps; ++k) {
        sim_frame_timing one;
        memset(&one, 0, sizeof one);
        sim_status st = name_blowup(s, sim_backend_run_frame(s->loc, &one, err), k + 1, err);
        s->steps_done++;
        const double t0 = now_ms();
        /* always exchanged, so that a rank that failed still meets its neighbours' messages */
        const sim_status hs = sim_space_halo_update(s, err);
        st = st == SIM_OK ? hs : st;
        double v[3] = {st == SIM_OK ? sim_space_displacement_bound(s) : 0.0,
                       st != SIM_OK ? (double)st : 0.0, st != SIM_OK ? -(double)s->rank : -1e9};
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
            SIM_TRY(sim_space_recut(s, NULL, err));
        }
        const double comm = now_ms() - t0;
        one.comm_ms += comm;
        one.step_ms += comm;
        add_timing(t, &one, k == 0);
    }
    t->ranks = s->world;
    const double peak = peak_resident();
    double bal[6] = {-(double)s->n_own,
                     (double)s->n_own,
                     -(double)s->n_ghost,
                     (double)s->n_ghost,
                     peak,
                     peak / (s->n_own ? s->n_own : 1)};
    SIM_TRY(mpi_check(MPI_Allreduce(MPI_IN_PLACE, bal, 6, MPI_DOUBLE, MPI_MAX, s->comm),
                      "the ranks' balance", err));
    s->bal[4] = bal[4];
    s->bal[5] = bal[5];
    s->bal[0] = -bal[0];
    s->bal[1] = bal[1];
    s->bal[2] = -bal[2];
    s->bal[3] = bal[3];
    return SIM_OK;
}

/* The springs' energy of a history at overlap d, as sim_friction_apply counts it after a step.
 * Not the contact law again at dt = 0: at today's velocities a sliding contact may pass the
 * Coulomb limit and have its spring cut, an energy the step never had. */
static double spring_energy(const sim_physics *ph, double d, sim_contact_history_d h) {
    const double kt = sim_tangential_spring_d(d, ph->normal.hertz, &ph->tangential);
    const double roll = ph->rolling.rolling_friction > 0.0
                            ? h.roll.x * h.roll.x + h.roll.y * h.roll.y + h.roll.z * h.roll.z
                            : 0.0;
    return 0.5 * kt * (h.xi.x * h.xi.x + h.xi.y * h.xi.y + h.xi.z * h.xi.z + roll);
}

/* Body i's walls (with friction their springs, from the last step's histories) and gravity. */
static double body_energy(const cpu_backend *L, uint32_t i) {
    const sim_vec4d p = L->st.pos[i];
    double e = 0.0;
    (void)sim_body_force_d(p, L->st.vel[i], &L->ph, &e);
    const double x[3] = {p.x, p.y, p.z};
    for (int k = 0; k < 6 && L->fric != NULL; ++k) {
        const double half = L->ph.box.box_half;
        const double overlap = (k & 1) ? x[k >> 1] + p.w - half : p.w - half - x[k >> 1];
        if (overlap > 0.0 && !((L->ph.box.periodic >> (k >> 1)) & 1)) {
            e += spring_energy(&L->ph, overlap, sim_space_history(L, i, SIM_CONTACT_WALL(k)));
        }
    }
    return e;
}

/* Contact energy of local bodies i > j (the larger user index first: the history's owner). */
static double pair_energy(const cpu_backend *L, uint32_t i, uint32_t j) {
    double pe = 0.0;
    const sim_vec4d a = L->st.pos[i], b = L->st.pos[j];
    (void)sim_contact_force_d(a, L->st.vel[i], b, L->st.vel[j], &L->ph, &pe);
    if (L->fric != NULL) {
        double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
        sim_min_image_d(&dx, &dy, &dz, &L->ph);
        const double overlap = a.w + b.w - sqrt(dx * dx + dy * dy + dz * dz);
        if (overlap > 0.0) {
            pe += spring_energy(&L->ph, overlap, sim_space_history(L, i, j));
        }
    }
    return pe;
}

/* The ATM cut-off's energy of the local triples, each weighted by its own bodies / 3, so that
 * the sum over the ranks counts every triple once (a triple of an own body is complete here:
 * the halo). The triples from half lists of the cut-off built for this (the step's lists are
 * its backend's, in its sorted order), through sim_atm_forces_d as the sweep. */
static sim_status atm_energy(const space_backend *s, double *e, sim_error *err) {
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    if (!(s->atm_reach > 0.0)) {
        return SIM_OK;
    }
    const uint32_t n = s->n_own + s->n_ghost;
    sim_cpu_atm_list l;
    SIM_TRY(sim_cpu_atm_list_init(&l, n, err));
    l.per = L->ph.box.periodic ? &L->ph.box.period : NULL;
    const sim_status st = sim_cpu_atm_list_build(&l, L->st.pos, L->ph.atm.atm_cutoff, 0.0, err);
    for (uint32_t i = 0; i < n && st == SIM_OK; ++i) {
        const uint32_t m = l.count[i];
        for (uint32_t a = 0; a < m; ++a) {
            const uint32_t ja = l.nbr[(size_t)a * l.stride + i];
            for (uint32_t b = a + 1u; b < m; ++b) {
                const uint32_t kb = l.nbr[(size_t)b * l.stride + i];
                const uint32_t j = ja > kb ? ja : kb, k = ja > kb ? kb : ja;
                const int own = s->is_own[i] + s->is_own[j] + s->is_own[k];
                if (own > 0) {
                    double pe = 0.0;
                    sim_vec3d fi, fj, fk;
                    sim_atm_forces_d(L->st.pos[i], L->st.pos[j], L->st.pos[k], &L->ph, &fi, &fj,
                                     &fk, &pe);
                    *e += (double)own / 3.0 * pe;
                }
            }
        }
    }
    sim_cpu_atm_list_free(&l);
    return st;
}

/* Own bodies' energies, summed over the ranks: a contact between two own bodies counts once, one
 * across a cut half on each of its ranks, one between two ghosts not at all. */
static sim_status space_energy(sim_backend *b, sim_energy *e, sim_error *err) {
    space_backend *s = space_of(b);
    SIM_TRY(sim_space_usable(s, err));
    cpu_backend *L = sim_cpu_of(s->loc);
    double v[7] = {0.0};
    for (uint32_t k = 0; k < s->n_own; ++k) {
        const uint32_t i = s->own[k];
        const sim_vec4d p = L->st.pos[i], u = L->st.vel[i], w = L->st.spin[i];
        v[0] += 0.5 * u.w * (u.x * u.x + u.y * u.y + u.z * u.z);
        v[1] += 0.5 * 0.4 * u.w * p.w * p.w * (w.x * w.x + w.y * w.y + w.z * w.z);
        v[3] += body_energy(L, i);
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
        const double weight = 0.5 * (s->is_own[i] + s->is_own[j]);
        if (weight > 0.0) {
            v[2] += weight * (i > j ? pair_energy(L, i, j) : pair_energy(L, j, i));
        }
    }
    free(pairs);
    double atm = 0.0;
    if (st == SIM_OK) {
        st = atm_energy(s, &atm, err);
    }
    SIM_TRY(sim_space_agree(s, st, err));
    double v8[8] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], atm};
    SIM_TRY(mpi_check(MPI_Allreduce(MPI_IN_PLACE, v8, 8, MPI_DOUBLE, MPI_SUM, s->comm),
                      "the energies", err));
    memcpy(v, v8, sizeof v);
    atm = v8[7];
    e->kinetic = v[0];
    e->rotational = v[1];
    e->contact = v[2];
    e->gravity = v[3];
    e->atm = atm;
    e->total = v[0] + v[1] + v[2] + v[3] + atm;
    for (int a = 0; a < 3; ++a) {
        s->centre[a] = v[4 + a] / (double)s->base.n;
    }
    return SIM_OK;
}

/* Items of this rank (pack(s, src, first, m, buf) writes items [first, first + m) into buf) to
 * rank 0 in chunks of SPACE_GATHER_CHUNK: rank 0 hands each chunk, its own first, to take (ctx).
 * No rank holds more than its own and one chunk. Collective. */
typedef void (*pack_fn)(const space_backend *s, const void *src, uint64_t first, uint32_t m,
                        void *buf);
typedef sim_status (*take_fn)(void *ctx, const void *buf, uint32_t m, sim_error *err);

static sim_status gather(space_backend *s, uint64_t n, size_t size, MPI_Datatype type, pack_fn pack,
                         const void *src, take_fn take, void *ctx, sim_error *err) {
    const uint32_t chunk = SPACE_GATHER_CHUNK;
    void *buf = malloc((size_t)chunk * size);
    SIM_TRY(sim_space_agree(s, buf ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no gather buffer"),
                            err));
    sim_status st = SIM_OK;
    if (s->rank != 0) {
        for (uint64_t i0 = 0; i0 < n && st == SIM_OK; i0 += chunk) {
            const uint32_t m = n - i0 < chunk ? (uint32_t)(n - i0) : chunk;
            pack(s, src, i0, m, buf);
            st = mpi_check(MPI_Send(buf, (int)m, type, 0, 4, s->comm), "a gather", err);
        }
        uint32_t end = UINT32_MAX; /* says this rank is done */
        if (st == SIM_OK) {
            st = mpi_check(MPI_Send(&end, 1, MPI_UINT32_T, 0, 5, s->comm), "a gather", err);
        }
    } else {
        for (uint64_t i0 = 0; i0 < n && st == SIM_OK; i0 += chunk) {
            const uint32_t m = n - i0 < chunk ? (uint32_t)(n - i0) : chunk;
            pack(s, src, i0, m, buf);
            st = take(ctx, buf, m, err);
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
                st =
                    mpi_check(MPI_Recv(buf, (int)chunk, type, r, 4, s->comm, &ms), "a gather", err);
                MPI_Get_count(&ms, type, &m);
                if (st == SIM_OK) {
                    st = take(ctx, buf, (uint32_t)m, err);
                }
            }
        }
    }
    free(buf);
    return sim_space_agree(s, st, err);
}

static void pack_bodies(const space_backend *s, const void *src, uint64_t first, uint32_t m,
                        void *buf) {
    (void)src;
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    const sim_vec3d zero = {0.0, 0.0, 0.0};
    body_rec *out = buf;
    for (uint32_t k = 0; k < m; ++k) {
        const uint32_t i = s->own[first + k];
        out[k] = (body_rec){.pos = L->st.pos[i],
                            .vel = L->st.vel[i],
                            .force = L->force[i],
                            .gid = s->gid[i],
                            .spin = L->st.spin[i],
                            .torque = L->fric ? L->fric->torque[i] : zero};
    }
}

typedef struct {
    sim_state *out;
    sim_vec3d *forces;
    contact_rec *contacts; /* rank 0: the histories gathered so far */
    uint64_t count, cap;
} gathered;

static sim_status take_bodies(void *ctx, const void *buf, uint32_t m, sim_error *err) {
    gathered *g = ctx;
    const body_rec *in = buf;
    for (uint32_t k = 0; k < m; ++k) {
        const uint64_t i = in[k].gid;
        g->out->pos[i] = in[k].pos;
        g->out->vel[i] = in[k].vel;
        if (g->out->spin != NULL) {
            g->out->spin[i] = in[k].spin;
        }
        if (g->forces != NULL) {
            g->forces[i] = in[k].force;
        }
    }
    return SIM_OK;
}

contact_rec *sim_space_own_histories(const space_backend *s, uint64_t *count) {
    const cpu_backend *L = sim_cpu_of_const(s->loc);
    const sim_cpu_friction *fr = L->fric;
    uint64_t n = 0;
    for (uint32_t k = 0; fr != NULL && k < s->n_own; ++k) {
        n += fr->count[fr->last][s->own[k]];
    }
    contact_rec *c = malloc((n ? n : 1) * sizeof *c);
    for (uint32_t k = 0, at = 0; c != NULL && fr != NULL && k < s->n_own; ++k) {
        const uint32_t i = s->own[k];
        for (uint32_t q = 0; q < fr->count[fr->last][i]; ++q) {
            const sim_cpu_slot *slot = &fr->table[fr->last][fr->row[i] + q];
            const uint32_t j = slot->partner;
            c[at++] = (contact_rec){s->gid[i],
                                    SIM_CONTACT_IS_WALL(j) ? SPACE_WALL(SIM_CONTACT_WALL_INDEX(j))
                                                           : s->gid[j],
                                    slot->h.xi, slot->h.roll};
        }
    }
    if (c != NULL) {
        qsort(c, n, sizeof *c, sim_space_by_pair);
    }
    *count = n;
    return c;
}

static void pack_contacts(const space_backend *s, const void *src, uint64_t first, uint32_t m,
                          void *buf) {
    (void)s;
    memcpy(buf, (const contact_rec *)src + first, (size_t)m * sizeof(contact_rec));
}

static sim_status take_contacts(void *ctx, const void *buf, uint32_t m, sim_error *err) {
    gathered *g = ctx;
    if (g->count + m > g->cap) {
        const uint64_t cap = 2 * (g->count + m);
        contact_rec *c = realloc(g->contacts, cap * sizeof *c);
        if (c == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot gather %llu contact histories",
                            (unsigned long long)cap);
        }
        g->contacts = c;
        g->cap = cap;
    }
    memcpy(g->contacts + g->count, buf, (size_t)m * sizeof *g->contacts);
    g->count += m;
    return SIM_OK;
}

/* The state gathered to rank 0, bodies then (friction) the histories in the user's order, as
 * one rank's backend reads them (by body, then partner). Collective: every rank calls it (out
 * is written on rank 0 only). */
static sim_status space_read_state(sim_backend *b, sim_state *out, sim_vec3d *forces,
                                   sim_error *err) {
    space_backend *s = space_of(b);
    SIM_TRY(sim_space_usable(s, err));
    gathered g = {out, forces, NULL, 0, 0};
    SIM_TRY(gather(s, s->n_own, sizeof(body_rec), s->full_type, pack_bodies, NULL, take_bodies, &g,
                   err));
    if (sim_cpu_of(s->loc)->fric == NULL) {
        if (s->rank == 0) {
            out->contact_count = 0;
        }
        return SIM_OK;
    }
    uint64_t n = 0;
    contact_rec *mine = sim_space_own_histories(s, &n);
    SIM_TRY(sim_space_agree(
        s, mine ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "cannot pack the histories"), err));
    sim_status st = gather(s, n, sizeof(contact_rec), s->contact_type, pack_contacts, mine,
                           take_contacts, &g, err);
    free(mine);
    if (st == SIM_OK && s->rank == 0) {
        qsort(g.contacts, g.count, sizeof *g.contacts, sim_space_by_pair);
        st = sim_state_set_contact_count(out, g.count, err);
        for (uint64_t k = 0; k < g.count && st == SIM_OK; ++k) {
            const contact_rec *c = &g.contacts[k];
            const uint32_t j = SPACE_IS_WALL(c->gj)
                                   ? SIM_CONTACT_WALL((uint32_t)(c->gj - SPACE_WALL(0)))
                                   : (uint32_t)c->gj;
            out->contacts[k] = (sim_state_contact){(uint32_t)c->gi, j, c->xi, c->roll};
        }
    }
    free(g.contacts);
    return sim_space_agree(s, st, err);
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

static sim_status space_export(sim_backend *b, uint32_t every, sim_vec4f *pos, float *speed,
                               int on_device, sim_error *err) {
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
    free(s->pend_own);
    free(s->pend_ghosts);
    free(s->pend_cont);
    free(s->cuts);
    free(s->gid);
    free(s->own);
    free(s->ghost);
    free(s->is_own);
    free(s->ref);
    if (s->rec_type != MPI_DATATYPE_NULL) {
        MPI_Type_free(&s->rec_type);
        MPI_Type_free(&s->full_type);
        MPI_Type_free(&s->halo_type);
        MPI_Type_free(&s->contact_type);
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
#if defined(__GLIBC__)
    /* Every cut frees and allocates arrays of a rank's bodies; glibc raises its mmap threshold to
     * the largest block freed, and later ones then come from the heap, where they fragment (a
     * rank's peak 13 % higher over a run of cuts, scripts/space_memory.sh). A fixed threshold
     * gives blocks of 1 MiB and more back to the system when they are freed. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    space_backend *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the spatial split");
    }
    s->comm = MPI_COMM_NULL;
    s->rec_type = s->full_type = s->halo_type = s->contact_type = MPI_DATATYPE_NULL;
    s->rec_size = sim_params_have_friction(p) ? sizeof(body_rec) : SPACE_REC_LEAN;
    s->base.ops = &space_ops;
    sim_backend_take_config(&s->base, c);
    s->base.params = *p;
    s->base.n = s0->n;
    s->base.rank = (sim_rank){rank, world, 0, NULL};
    s->rank = rank;
    s->world = world;
    sim_status st = mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &s->comm), "MPI_Comm_dup", err);
    if (st == SIM_OK) {
        MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
        MPI_Type_contiguous((int)s->rec_size, MPI_BYTE, &s->rec_type);
        MPI_Type_commit(&s->rec_type);
        MPI_Type_contiguous((int)sizeof(body_rec), MPI_BYTE, &s->full_type);
        MPI_Type_commit(&s->full_type);
        MPI_Type_contiguous((int)sizeof(halo_rec), MPI_BYTE, &s->halo_type);
        MPI_Type_commit(&s->halo_type);
        MPI_Type_contiguous((int)sizeof(contact_rec), MPI_BYTE, &s->contact_type);
        MPI_Type_commit(&s->contact_type);
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
        /* a triple within the cut-off has all three sides within it: ghosts one cut-off deep
         * complete every triple of an own body (its other two are within R of it) */
        s->atm_reach = p->triplets ? p->atm_cutoff : 0.0;
        s->halo = fmax(s->reach, s->atm_reach) + s->skin;
        s->base.nlist_skin = s->lp.skin.value;
        s->lc = *c;
        memset(&s->lc.multi, 0, sizeof s->lc.multi);
        s->lc.stop = NULL;
        st = sim_space_recut(s, s0, err);
    }
    if (st != SIM_OK) {
        space_destroy(&s->base);
        return st;
    }
    snprintf(s->base.device_name, sizeof s->base.device_name, "CPU: rank %d of %d in space", rank,
             world); /* the threads named once the backend is built (sim_space_usable) */
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
             "rank; cut %llu time%s; peak resident memory %.0f MiB on the largest rank, %.0f "
             "bytes per own body at most",
             s->world, sim_space_axis_name(s->axis), s->bal[0], s->bal[1], s->bal[2], s->bal[3],
             (unsigned long long)s->cuts_made, s->cuts_made == 1 ? "" : "s", s->bal[4] / 1048576.0,
             s->bal[5]);
}

#else /* no MPI */

sim_status sim_space_save_state(sim_backend *b, const char *path, const sim_params *p,
                                sim_error *err) {
    return sim_fail(err, SIM_UNSUPPORTED, "no MPI in this build");
}

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
    if (p->triplets && !(p->atm_cutoff > 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--decompose space: triplet (ATM) forces without a cut-off reach every "
                        "body, which no slab holds (--atm-cutoff R, or --decompose replicate)");
    }
    return SIM_OK;
}
