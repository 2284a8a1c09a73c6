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
 * step ends: one message per neighbour and step, 88 bytes per ghost.
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

/* Bodies per message when the state is gathered to rank 0 (128 bytes each: 8 MiB). */
#define SPACE_GATHER_CHUNK 65536u

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
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
    SIM_TRY(sim_space_agree(s, st, err));
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
    SIM_TRY(sim_space_agree(s, buf ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no gather buffer"),
                            err));
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
    sim_backend_take_config(&s->base, c);
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
        st = sim_space_recut(s, s0, err);
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
             "rank; cut %llu time%s",
             s->world, sim_space_axis_name(s->axis), s->bal[0], s->bal[1], s->bal[2], s->bal[3],
             (unsigned long long)s->cuts_made, s->cuts_made == 1 ? "" : "s");
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
