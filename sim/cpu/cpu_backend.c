/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference backend: the same model as the CUDA backend, in double, and the same
 * tiling. Pair and triplet work is enumerated block by block through the configured thread map
 * (sim_*_map_plan, then sim_*_map_block for every block of every launch), exactly as the kernels
 * see it, so a map that loses or repeats a tile changes the CPU forces too and the map tests can
 * compare against a plain O(N^2)/O(N^3) loop. Each unique pair/triple is evaluated once and its
 * force applied to all its bodies (Newton's third law). OpenMP threads (when available) each
 * accumulate into their own force buffer; the buffers are summed afterwards, so no races and
 * the result does not depend on the schedule beyond rounding order.
 *
 * SIM_PAIR_FULL (the nbody-style full sweep) is a CUDA kernel variant: sim_backend refuses it
 * for this backend (the symmetric sweep already gives the same forces).
 *
 * Culling (config.cull, cpu_cull.c): the state stays in the user's order; `cull.order` sorts the
 * bodies along the Morton curve (re-sorted every sort_every steps, or when the interacting tile
 * pairs grew by SIM_CULL_REGROW), the pair phase gathers sorted copies, boxes their tiles, culls
 * through the map's blocks like the kernels and sweeps only the surviving tile pairs, with the
 * same pair_tile; the per-thread forces (slot order) are scattered back to the bodies. The same
 * pairs are evaluated, so forces agree with the full sweep up to summation order.
 *
 * The ATM cut-off (config.cull, atm_cutoff > 0, cpu_tcull.c): the triplet phase boxes the
 * triplet tiles of the same sorted copies, finds the tile triples whose three tile pairs have
 * boxes within the cut-off (the kernels' passes, in double) and evaluates only those; the
 * forces go back through the body order like the pairs'. The same triples count, so forces agree
 * with the map's sweep up to summation order.
 *
 * Stopping (config.stop, backend.h): the flag is read before each step, and inside a step that
 * may be long (the first, or after one that took CPU_LONG_STEP_MS) once per block of the pair
 * and triplet sweeps; when it is raised the remaining blocks are skipped, the step is rolled back
 * to the copy taken at its start (step_save), and the frame ends with the steps before it. The
 * initial forces of sim_backend_create stop the same way (nothing to roll back: no backend).
 *
 * Energies: `contact` = pair springs, `atm` = ATM triples (0 while triplets are off), `gravity`
 * = the per-body potential, gravity -m g.x plus the walls' elastic energy (what sim_body_force
 * reports; the CUDA backend splits it the same way). They are computed with the forces at the
 * current positions, so energy() costs nothing extra. */
#define _POSIX_C_SOURCE 200809L

#include "step/backend_impl.h"
#include "cull/cpu_cull.h"
#include "cull/cpu_tcull.h"
#include "physics/physics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#define SIM_OMP(directive) _Pragma(#directive)
#else
#define SIM_OMP(directive)
#endif

/* Below this much work (pair checks, triples or bodies) a phase runs on one thread: a parallel
 * region costs microseconds on an idle machine and a scheduler time slice (milliseconds) when the
 * cores are oversubscribed, as on a CI runner executing tests in parallel. */
#define CPU_MIN_PARALLEL_WORK 32768.0

/* A step that took this long [ms] makes the next one stoppable mid-way: then its start is saved
 * (88 bytes per body, copied in ~1 % of such a step's time) and the flag read per block. */
#define CPU_LONG_STEP_MS 100.0

/* What a step changes, saved at the start of a step that may be cut short, so that the backend
 * can be put back exactly as the last completed step left it. The culled order is not saved: any
 * order is a valid one, and with the sort counters restored the step, run again, re-sorts exactly
 * when the uninterrupted run would, from the same positions, to the same order. The lists are
 * rebuilt by every step. */
typedef struct {
    sim_vec4d *pos, *vel;
    sim_vec3d *force;
    double e_contact, e_atm, e_body;
    uint64_t steps_done;
    int sort_due, sorted, steps_since_sort, fresh_sort;
    size_t tiles_after_sort, tiles_built;
    sim_frame_timing timing;
    int have; /* 1: buffers allocated; -1: they could not be (steps are then never cut) */
} step_save;

typedef struct {
    sim_backend base; /* first: the interface header */
    sim_state st;     /* positions/velocities now (velocities at full steps between frames) */
    sim_vec3d *force; /* total force per body at the current positions [N] */
    sim_vec3d *tbuf;  /* per-thread partial forces, threads x n */
    int threads;      /* OpenMP threads available */
    int team;         /* threads the current phase uses (<= threads); buffers 0 .. team-1 */
    sim_physics ph;
    double dt;                       /* [s] */
    uint32_t tiles;                  /* ceil(n / tile): pair tiles */
    uint32_t ttiles;                 /* ceil(n / SIM_TRIPLET_TILE): triplet tiles */
    double e_contact, e_atm, e_body; /* potential energies at the current positions [J] */
    uint64_t steps_done;
    sim_cpu_cull cull; /* allocated when culling is first turned on (cull_ready) */
    int cull_ready;
    int sort_due;        /* sort before the next culled pair phase */
    sim_cpu_tcull tcull; /* the ATM cut-off's culling, allocated on first use (tcull_ready) */
    int tcull_ready;
    /* stopping (config.stop): the flag while the work under way may stop between blocks, else
     * NULL; whether a block was skipped since; the last step's time (< 0: none yet) */
    const volatile sig_atomic_t *watch;
    int cut;
    double last_step_ms;
    step_save save;
} cpu_backend;

static int thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static void add3(sim_vec3d *a, sim_vec3d f) {
    a->x += f.x;
    a->y += f.y;
    a->z += f.z;
}

static void sub3(sim_vec3d *a, sim_vec3d f) {
    a->x -= f.x;
    a->y -= f.y;
    a->z -= f.z;
}

/* ---- one tile pair / tile triple, as one CUDA block would do it ---- */

static void tile_range(const cpu_backend *b, uint32_t t, uint32_t rho, uint32_t *lo, uint32_t *hi) {
    *lo = t * rho;
    *hi = *lo + rho < b->st.n ? *lo + rho : b->st.n; /* the last tile may be partial */
}

/* Tile pair (I, J) of the bodies in pos/vel (the state, or the culled phase's sorted copies; f
 * indexed alike): all i in I, j in J; on the diagonal only j < i. */
static void pair_tile(const cpu_backend *b, sim_tile2 t, const sim_vec4d *pos, const sim_vec4d *vel,
                      sim_vec3d *f, double *energy) {
    uint32_t i0, i1, j0, j1;
    const uint32_t rho = b->base.config.tile;
    tile_range(b, t.i, rho, &i0, &i1);
    tile_range(b, t.j, rho, &j0, &j1);
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t j_end = t.i == t.j ? i : j1;
        for (uint32_t j = j0; j < j_end; ++j) {
            const sim_vec3d fij =
                sim_contact_force_d(pos[i], vel[i], pos[j], vel[j], &b->ph, energy);
            add3(&f[i], fij);
            sub3(&f[j], fij);
        }
    }
}

/* Tile triple (I, J, K) of the bodies in pos (the state, or the culled phase's sorted copies; f
 * indexed alike): strictly ordered bodies where tiles coincide (i > j if I == J, j > k if
 * J == K), so each unordered triple is seen once. */
static void triplet_tile(const cpu_backend *b, sim_tile3 t, const sim_vec4d *pos, sim_vec3d *f,
                         double *energy) {
    uint32_t i0, i1, j0, j1, k0, k1;
    tile_range(b, t.i, SIM_TRIPLET_TILE, &i0, &i1);
    tile_range(b, t.j, SIM_TRIPLET_TILE, &j0, &j1);
    tile_range(b, t.k, SIM_TRIPLET_TILE, &k0, &k1);
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t j_end = t.i == t.j ? i : j1;
        for (uint32_t j = j0; j < j_end; ++j) {
            const uint32_t k_end = t.j == t.k ? j : k1;
            for (uint32_t k = k0; k < k_end; ++k) {
                sim_vec3d fi, fj, fk;
                sim_atm_forces_d(pos[i], pos[j], pos[k], &b->ph, &fi, &fj, &fk, energy);
                add3(&f[i], fi);
                add3(&f[j], fj);
                add3(&f[k], fk);
            }
        }
    }
}

/* ---- whole phases ---- */

static int team_for(const cpu_backend *b, double work) {
    return work >= CPU_MIN_PARALLEL_WORK ? b->threads : 1;
}

/* Chooses the phase's team and clears its buffers. */
static void start_phase(cpu_backend *b, double work) {
    b->team = team_for(b, work);
    memset(b->tbuf, 0, (size_t)b->team * b->st.n * sizeof *b->tbuf);
}

/* force[order[i]] (=, or += when add) the sum of the per-thread buffers' entry i; order NULL:
 * the buffers are in body order. */
static void reduce_buffers(cpu_backend *b, int add, const uint32_t *order) {
    const int64_t n = b->st.n;
    const int team = team_for(b, (double)n);
    (void)team; /* unused without OpenMP */
    SIM_OMP(omp parallel for num_threads(team) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        const size_t dst = order != NULL ? order[i] : (size_t)i;
        sim_vec3d s = add ? b->force[dst] : (sim_vec3d){0.0, 0.0, 0.0};
        for (int t = 0; t < b->team; ++t) {
            add3(&s, b->tbuf[(size_t)t * (size_t)n + (size_t)i]);
        }
        b->force[dst] = s;
    }
}

/* The sweeps read b->watch before each block; once it is raised they skip the blocks left (an
 * OpenMP loop cannot break) and note it in b->cut.
 *
 * The end of a sweep: the buffers summed into force (see reduce_buffers), unless a block was
 * skipped, which leaves the step to be rolled back and force to the save. */
static void finish_sweep(cpu_backend *b, int cut, int add, const uint32_t *order) {
    b->cut |= cut;
    if (!b->cut) {
        reduce_buffers(b, add, order);
    }
}

/* Blocks whose tile lies outside the domain (only a broken map gives them) are skipped, as a
 * guarded kernel would skip them. The blocks are this rank's share of the plan (all of it when
 * alone), piece by piece in the plan's order. */
static double pair_phase(cpu_backend *b) {
    const sim_pair_map map = (sim_pair_map)b->base.config.pair_map;
    const uint32_t tiles = b->tiles;
    const double n = b->st.n;
    const volatile sig_atomic_t *watch = b->watch;
    double energy = 0.0;
    int cut = 0;
    sim_map_share share;
    sim_backend_share(&b->base, &b->base.pair_plan, &share);
    start_phase(b, 0.5 * n * n);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy) reduction(| : cut)) {
        sim_vec3d *f = b->tbuf + (size_t)thread_id() * b->st.n;
        for (int p = 0; p < share.piece_count; ++p) {
            const sim_map_piece *pc = &share.piece[p];
            const sim_map_launch *launch = &b->base.pair_plan.launch[pc->launch];
            const int64_t gx = pc->grid[0], gy = pc->grid[1];
            const int64_t blocks = gx * gy * (int64_t)pc->grid[2];
            SIM_OMP(omp for schedule(dynamic, 8))
            for (int64_t blk = 0; blk < blocks; ++blk) {
                sim_tile2 t;
                if (sim_stop_raised(watch)) {
                    cut = 1;
                } else if (sim_pair_map_block(map, launch, pc->origin[0] + (uint32_t)(blk % gx),
                                              pc->origin[1] + (uint32_t)(blk / gx % gy),
                                              pc->origin[2] + (uint32_t)(blk / gx / gy), &t) &&
                           t.i < tiles && t.j < tiles) {
                    pair_tile(b, t, b->st.pos, b->st.vel, f, &energy);
                }
            }
        }
    }
    finish_sweep(b, cut, 0, NULL);
    return energy;
}

/* Culling buffers on first use; the first culled phase sorts. */
static sim_status cull_prepare(cpu_backend *b, sim_error *err) {
    if (!b->cull_ready) {
        SIM_TRY(sim_cpu_cull_init(&b->cull, b->st.n, b->base.config.tile, err));
        b->cull_ready = 1;
    }
    b->sort_due = 1;
    return SIM_OK;
}

/* Whether the culled pair phase re-sorts first: never sorted, sort_every steps since the last
 * sort, or the list grew by SIM_CULL_REGROW since then (boxes spread as bodies move). */
static int cull_sort_due(const cpu_backend *b) {
    const sim_cpu_cull *c = &b->cull;
    const int every =
        b->base.config.sort_every > 0 ? b->base.config.sort_every : SIM_CULL_SORT_EVERY;
    /* Ranks of a multi-GPU run hold different parts of the list, and must sort together: they
     * sort on the clock alone. */
    const int regrown =
        b->base.rank.world <= 1 &&
        (double)c->tiles_built > SIM_CULL_REGROW * (double)c->tiles_after_sort + 16.0;
    return b->sort_due || !c->sorted || c->steps_since_sort >= every || regrown;
}

/* Sweeps the culled list (sorted copies, slot-order buffers) and scatters the forces back. */
static double pair_sweep_list(cpu_backend *b) {
    const sim_cpu_cull *c = &b->cull;
    const sim_tile2 *list = c->tiles.v;
    const int64_t count = (int64_t)c->tiles.count;
    const double rho = b->base.config.tile;
    const volatile sig_atomic_t *watch = b->watch;
    double energy = 0.0;
    int cut = 0;
    start_phase(b, (double)count * rho * rho);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy) reduction(| : cut)) {
        sim_vec3d *f = b->tbuf + (size_t)thread_id() * b->st.n;
        SIM_OMP(omp for schedule(dynamic, 8))
        for (int64_t k = 0; k < count; ++k) {
            if (sim_stop_raised(watch)) {
                cut = 1;
            } else {
                pair_tile(b, list[k], c->pos, c->vel, f, &energy);
            }
        }
    }
    finish_sweep(b, cut, 0, c->order);
    return energy;
}

/* The culled pair phase: re-sort if due, build the list, sweep it. Sort and cull times go to
 * t (when given); the caller times the whole phase. */
static sim_status pair_phase_culled(cpu_backend *b, sim_frame_timing *t, double *energy,
                                    sim_error *err) {
    sim_cpu_cull *c = &b->cull;
    const double t0 = sim_now_ms();
    if (cull_sort_due(b)) {
        sim_cpu_cull_sort(c, b->st.pos, b->base.params.box_half);
        b->sort_due = 0;
        if (t != NULL) {
            t->sorts++;
        }
    }
    const double t1 = sim_now_ms();
    SIM_TRY(sim_cpu_cull_build(c, &b->base, b->st.pos, b->st.vel, err));
    const double t2 = sim_now_ms();
    *energy = pair_sweep_list(b);
    if (t != NULL) {
        t->sort_ms += t1 - t0;
        t->cull_ms += t2 - t1;
    }
    return SIM_OK;
}

static double triplet_phase(cpu_backend *b) {
    const sim_triplet_map map = b->base.config.triplet_map;
    const uint32_t tiles = b->ttiles;
    const double n = b->st.n;
    const volatile sig_atomic_t *watch = b->watch;
    double energy = 0.0;
    int cut = 0;
    sim_map_share share;
    sim_backend_share(&b->base, &b->base.triplet_plan, &share);
    start_phase(b, n * n * n / 6.0);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy) reduction(| : cut)) {
        sim_vec3d *f = b->tbuf + (size_t)thread_id() * b->st.n;
        for (int p = 0; p < share.piece_count; ++p) {
            const sim_map_piece *pc = &share.piece[p];
            const sim_map_launch *launch = &b->base.triplet_plan.launch[pc->launch];
            const int64_t gx = pc->grid[0], gy = pc->grid[1];
            const int64_t blocks = gx * gy * (int64_t)pc->grid[2];
            SIM_OMP(omp for schedule(dynamic, 4))
            for (int64_t blk = 0; blk < blocks; ++blk) {
                sim_tile3 t;
                if (sim_stop_raised(watch)) {
                    cut = 1;
                } else if (sim_triplet_map_block(map, launch, pc->origin[0] + (uint32_t)(blk % gx),
                                                 pc->origin[1] + (uint32_t)(blk / gx % gy),
                                                 pc->origin[2] + (uint32_t)(blk / gx / gy), &t) &&
                           t.i < tiles && t.j < tiles && t.k < tiles) {
                    triplet_tile(b, t, b->st.pos, f, &energy);
                }
            }
        }
    }
    finish_sweep(b, cut, 1, NULL);
    return energy;
}

/* A multi-rank run: every rank holds its share's forces and energies; sums them over the ranks
 * (the host group adds in rank order, so every rank gets the same bits). */
static sim_status reduce_ranks(cpu_backend *b, sim_error *err) {
    if (b->base.rank.world <= 1) {
        return SIM_OK;
    }
    double e[2] = {b->e_contact, b->e_atm};
    SIM_TRY(sim_comm_allreduce_sum(b->base.rank.comm, b->force, 3u * (size_t)b->st.n,
                                   SIM_COMM_DOUBLE, NULL, err));
    SIM_TRY(sim_comm_allreduce_sum(b->base.rank.comm, e, 2, SIM_COMM_DOUBLE, NULL, err));
    b->e_contact = e[0];
    b->e_atm = e[1];
    return SIM_OK;
}

/* The culled triplet phase (the pair phase has just gathered the sorted copies): the surviving
 * tile triples, swept; forces scattered back through the body order. The culling time goes to
 * *cull_ms. */
static sim_status triplet_phase_culled(cpu_backend *b, double *energy, double *cull_ms,
                                       sim_error *err) {
    if (!b->tcull_ready) {
        SIM_TRY(sim_cpu_tcull_init(&b->tcull, b->st.n, err));
        b->tcull_ready = 1;
    }
    const double t0 = sim_now_ms();
    SIM_TRY(sim_cpu_tcull_build(&b->tcull, &b->base, b->cull.pos, b->base.params.atm_cutoff, err));
    *cull_ms = sim_now_ms() - t0;
    const sim_tile3 *list = b->tcull.triples.v;
    const int64_t count = (int64_t)b->tcull.triples.count;
    const double rho = SIM_TRIPLET_TILE;
    const volatile sig_atomic_t *watch = b->watch;
    double e = 0.0;
    int cut = 0;
    start_phase(b, (double)count * rho * rho * rho);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : e) reduction(| : cut)) {
        sim_vec3d *f = b->tbuf + (size_t)thread_id() * b->st.n;
        SIM_OMP(omp for schedule(dynamic, 4))
        for (int64_t k = 0; k < count; ++k) {
            if (sim_stop_raised(watch)) {
                cut = 1;
            } else {
                triplet_tile(b, list[k], b->cull.pos, f, &e);
            }
        }
    }
    finish_sweep(b, cut, 1, b->cull.order);
    *energy = e;
    return SIM_OK;
}

/* Walls + gravity, added to force[]; returns their potential energy. */
static double body_phase(cpu_backend *b) {
    const int64_t n = b->st.n;
    double energy = 0.0;
    const int team = team_for(b, (double)n);
    (void)team; /* unused without OpenMP */
    SIM_OMP(omp parallel for num_threads(team) schedule(static) reduction(+ : energy))
    for (int64_t i = 0; i < n; ++i) {
        add3(&b->force[i], sim_body_force_d(b->st.pos[i], b->st.vel[i], &b->ph, &energy));
    }
    return energy;
}

/* A sweep skipped blocks (b->watch was raised): the forces are incomplete. */
static sim_status cut_short(const cpu_backend *b, sim_error *err) {
    return b->cut ? sim_fail(err, SIM_INTERRUPTED, "stopped in the middle of a step") : SIM_OK;
}

/* F at the current positions (and velocities); accumulates phase times when t != NULL.
 * SIM_INTERRUPTED when b->watch stopped a sweep (force and energies are then incomplete). */
static sim_status compute_forces(cpu_backend *b, sim_frame_timing *t, sim_error *err) {
    const double sort0 = t != NULL ? t->sort_ms : 0.0, cull0 = t != NULL ? t->cull_ms : 0.0;
    double t0 = sim_now_ms();
    b->cut = 0;
    if (sim_backend_culling(&b->base)) {
        if (!b->cull_ready) {
            SIM_TRY(cull_prepare(b, err));
        }
        SIM_TRY(pair_phase_culled(b, t, &b->e_contact, err));
    } else {
        b->e_contact = pair_phase(b);
    }
    SIM_TRY(cut_short(b, err));
    double t1 = sim_now_ms(), tcull_ms = 0.0;
    b->e_atm = 0.0;
    if (sim_backend_triplet_culling(&b->base)) {
        /* Several ranks: each lists and sweeps its rows' tile triples (triplet_cull.h) */
        SIM_TRY(triplet_phase_culled(b, &b->e_atm, &tcull_ms, err));
    } else if (b->base.params.triplets) {
        b->e_atm = triplet_phase(b);
    }
    SIM_TRY(cut_short(b, err));
    const double t2 = sim_now_ms();
    SIM_TRY(reduce_ranks(b, err));
    const double t3 = sim_now_ms();
    b->e_body = body_phase(b);
    const double t4 = sim_now_ms();
    if (t != NULL) { /* pair_ms: the sweep alone, as on the GPU */
        t->pair_ms += (t1 - t0) - (t->sort_ms - sort0) - (t->cull_ms - cull0);
        t->triplet_ms += b->base.params.triplets ? t2 - t1 - tcull_ms : 0.0;
        t->triplet_cull_ms += tcull_ms;
        t->comm_ms += t3 - t2;
        t->integrate_ms += t4 - t3;
    }
    return SIM_OK;
}

/* ---- stopping mid-step (config.stop) ---- */

/* The flag this backend reads: config.stop alone, none as a rank of several (backend.h). */
static const volatile sig_atomic_t *stop_flag(const cpu_backend *b) {
    return b->base.rank.world <= 1 ? b->base.config.stop : NULL;
}

static void step_save_free(step_save *sv) {
    free(sv->pos);
    free(sv->vel);
    free(sv->force);
    sv->pos = sv->vel = NULL;
    sv->force = NULL;
    sv->have = 0;
}

/* Whether the next step may be cut short: a flag to read, a step that may be long, and the
 * memory to save its start in (allocated on first use; without it, steps run whole). */
static int step_may_stop(cpu_backend *b) {
    if (stop_flag(b) == NULL || (b->last_step_ms >= 0.0 && b->last_step_ms < CPU_LONG_STEP_MS)) {
        return 0;
    }
    step_save *sv = &b->save;
    if (sv->have == 0) {
        const size_t n = b->st.n;
        sv->pos = malloc(n * sizeof *sv->pos);
        sv->vel = malloc(n * sizeof *sv->vel);
        sv->force = malloc(n * sizeof *sv->force);
        sv->have = sv->pos != NULL && sv->vel != NULL && sv->force != NULL;
        if (!sv->have) {
            step_save_free(sv);
            sv->have = -1;
        }
    }
    return sv->have == 1;
}

static void save_step(cpu_backend *b, const sim_frame_timing *t) {
    step_save *sv = &b->save;
    const size_t n = b->st.n;
    memcpy(sv->pos, b->st.pos, n * sizeof *sv->pos);
    memcpy(sv->vel, b->st.vel, n * sizeof *sv->vel);
    memcpy(sv->force, b->force, n * sizeof *sv->force);
    sv->e_contact = b->e_contact;
    sv->e_atm = b->e_atm;
    sv->e_body = b->e_body;
    sv->steps_done = b->steps_done;
    sv->sort_due = b->sort_due;
    sv->sorted = b->cull.sorted;
    sv->steps_since_sort = b->cull.steps_since_sort;
    sv->fresh_sort = b->cull.fresh_sort;
    sv->tiles_after_sort = b->cull.tiles_after_sort;
    sv->tiles_built = b->cull.tiles_built;
    sv->timing = *t;
}

static void restore_step(cpu_backend *b, sim_frame_timing *t) {
    const step_save *sv = &b->save;
    const size_t n = b->st.n;
    memcpy(b->st.pos, sv->pos, n * sizeof *sv->pos);
    memcpy(b->st.vel, sv->vel, n * sizeof *sv->vel);
    memcpy(b->force, sv->force, n * sizeof *sv->force);
    b->e_contact = sv->e_contact;
    b->e_atm = sv->e_atm;
    b->e_body = sv->e_body;
    b->steps_done = sv->steps_done;
    b->sort_due = sv->sort_due;
    b->cull.sorted = sv->sorted;
    b->cull.steps_since_sort = sv->steps_since_sort;
    b->cull.fresh_sort = sv->fresh_sort;
    b->cull.tiles_after_sort = sv->tiles_after_sort;
    b->cull.tiles_built = sv->tiles_built;
    *t = sv->timing;
}

/* ---- set-up ---- */

static void apply_params(cpu_backend *b, const sim_params *p) {
    b->base.params = *p;
    b->ph = sim_physics_from_params(p);
    b->dt = p->dt > 0.0 ? p->dt : sim_default_dt(p, &b->st);
    b->ph.inv_dt = b->dt > 0.0 ? 1.0 / b->dt : 0.0;
}

/* ---- the interface ---- */

static cpu_backend *as_cpu(sim_backend *base) {
    return (cpu_backend *)base;
}

static void cpu_destroy(sim_backend *base) {
    cpu_backend *b = as_cpu(base);
    sim_state_free(&b->st);
    free(b->force);
    free(b->tbuf);
    if (b->cull_ready) {
        sim_cpu_cull_free(&b->cull);
    }
    if (b->tcull_ready) {
        sim_cpu_tcull_free(&b->tcull);
    }
    step_save_free(&b->save);
    free(b);
}

/* NaN or escape: the first offending body, named in the message. */
static sim_status check_blowup(const cpu_backend *b, int frame_step, sim_error *err) {
    const double limit = SIM_ESCAPE_FACTOR * b->base.params.box_half;
    for (uint32_t i = 0; i < b->st.n; ++i) {
        const sim_vec4d p = b->st.pos[i];
        if (isnan(p.x) || isnan(p.y) || isnan(p.z)) {
            return sim_fail(err, SIM_UNSTABLE,
                            "frame step %d (step %llu): body %u has NaN position", frame_step,
                            (unsigned long long)b->steps_done, i);
        }
        if (!(fabs(p.x) <= limit && fabs(p.y) <= limit && fabs(p.z) <= limit)) {
            return sim_fail(err, SIM_UNSTABLE,
                            "frame step %d (step %llu): body %u left the box (x=%g, y=%g, z=%g; "
                            "walls at +-%g): the time step %g s is too large for these speeds",
                            frame_step, (unsigned long long)b->steps_done, i, p.x, p.y, p.z,
                            b->base.params.box_half, b->dt);
        }
    }
    return SIM_OK;
}

/* The culling fields of a frame's timing (the rest of them are counted as the frame runs). */
static void report_cull(const cpu_backend *b, sim_frame_timing *t) {
    if (sim_backend_triplet_culling(&b->base) && b->tcull_ready) {
        t->triplet_culled = 1;
        t->tile_triples = b->tcull.triples.count;
        t->tile_triples_total = sim_t3_u64(b->tcull.n_tiles);
        t->triplet_tile_pairs = b->tcull.pairs.count;
    }
    const int culled = sim_backend_culling(&b->base);
    sim_backend_count_blocks(&b->base, t, culled ? b->cull.tiles.count : 0u);
    if (!culled) {
        return;
    }
    t->culled = 1;
    t->cull_levels = b->base.cull_levels;
    t->tile_pairs = b->cull.tiles.count;
    t->tile_pairs_total = sim_t2_u64(b->base.tiles);
    t->super_pairs = b->base.cull_levels == 2 ? b->cull.super_pairs.count : 0u;
}

/* Step s of the frame (1-based), its times added to t. A step that may be long reads the stop
 * flag between blocks: cut short, it is rolled back and SIM_INTERRUPTED returned. */
static sim_status cpu_step(cpu_backend *b, int s, sim_frame_timing *t, sim_error *err) {
    const int64_t n = b->st.n;
    const int team = team_for(b, (double)n);
    (void)team; /* unused without OpenMP */
    const double dt = b->dt;
    const double t0 = sim_now_ms();
    const int may_stop = step_may_stop(b);
    if (may_stop) {
        save_step(b, t);
    }
    SIM_OMP(omp parallel for num_threads(team) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        sim_verlet_first_d(&b->st.pos[i], &b->st.vel[i], b->force[i], dt);
    }
    const double t1 = sim_now_ms();
    b->cull.steps_since_sort++; /* (unused unless culling) */
    /* at x_{n+1} with the half-step velocities */
    b->watch = may_stop ? stop_flag(b) : NULL;
    const sim_status st = compute_forces(b, t, err);
    b->watch = NULL;
    if (st == SIM_INTERRUPTED) {
        restore_step(b, t);
    }
    SIM_TRY(st);
    const double t2 = sim_now_ms();
    SIM_OMP(omp parallel for num_threads(team) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        sim_verlet_second_d(&b->st.vel[i], b->force[i], dt);
    }
    const double t3 = sim_now_ms();
    t->integrate_ms += (t1 - t0) + (t3 - t2);
    t->step_ms += t3 - t0;
    t->steps = s;
    b->steps_done++;
    b->last_step_ms = t3 - t0;
    return check_blowup(b, s, err);
}

static sim_status cpu_run_frame(sim_backend *base, sim_frame_timing *t, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    memset(t, 0, sizeof *t);
    const int steps = b->base.params.steps_per_frame;
    sim_status st = SIM_OK;
    for (int s = 1; s <= steps && st == SIM_OK; ++s) {
        st = sim_stop_raised(stop_flag(b)) ? SIM_INTERRUPTED : cpu_step(b, s, t, err);
    }
    if (st == SIM_INTERRUPTED) {
        (void)sim_fail(err, SIM_INTERRUPTED, "stopped after %d of the frame's %d steps", t->steps,
                       steps);
    }
    report_cull(b, t);
    t->ranks = b->base.rank.world;
    return st;
}

static sim_status cpu_set_params(sim_backend *base, const sim_params *p, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    const sim_params old = b->base.params;
    apply_params(b, p);
    /* Forces change only with the model (not with dt or steps per frame): recompute then, so
     * the next half kick uses forces of the new model; otherwise keep F_n bit for bit. */
    if (!sim_params_same_model(&old, p)) {
        b->last_step_ms = -1.0; /* the work per step may have changed */
        SIM_TRY(compute_forces(b, NULL, err));
    }
    return SIM_OK;
}

static sim_status cpu_set_state(sim_backend *base, const sim_state *s, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    SIM_TRY(sim_state_check_bodies(s, err));
    memcpy(b->st.pos, s->pos, (size_t)s->n * sizeof *s->pos);
    memcpy(b->st.vel, s->vel, (size_t)s->n * sizeof *s->vel);
    apply_params(b, &b->base.params); /* the default dt depends on masses and speeds */
    b->sort_due = 1;                  /* the new bodies' order says nothing about their places */
    b->last_step_ms = -1.0;           /* and the culled work may differ */
    return compute_forces(b, NULL, err);
}

static sim_status cpu_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces,
                                 sim_error *err) {
    cpu_backend *b = as_cpu(base);
    memcpy(out->pos, b->st.pos, (size_t)b->st.n * sizeof *out->pos);
    memcpy(out->vel, b->st.vel, (size_t)b->st.n * sizeof *out->vel);
    if (forces != NULL) {
        memcpy(forces, b->force, (size_t)b->st.n * sizeof *forces);
    }
    return SIM_OK;
}

static sim_status cpu_energy(sim_backend *base, sim_energy *e, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    double kinetic = 0.0;
    for (uint32_t i = 0; i < b->st.n; ++i) {
        const sim_vec4d v = b->st.vel[i];
        kinetic += 0.5 * v.w * (v.x * v.x + v.y * v.y + v.z * v.z);
    }
    e->kinetic = kinetic;
    e->contact = b->e_contact;
    e->atm = b->e_atm;
    e->gravity = b->e_body;
    e->total = kinetic + b->e_contact + b->e_atm + b->e_body;
    return SIM_OK;
}

static sim_status cpu_export_positions(sim_backend *base, sim_vec4f *pos, float *speed,
                                       int on_device, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    for (uint32_t i = 0; i < b->st.n; ++i) {
        const sim_vec4d p = b->st.pos[i], v = b->st.vel[i];
        pos[i].x = (float)p.x;
        pos[i].y = (float)p.y;
        pos[i].z = (float)p.z;
        pos[i].w = (float)p.w;
        if (speed != NULL) {
            speed[i] = (float)sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        }
    }
    return SIM_OK;
}

static sim_status cpu_set_cull(sim_backend *base, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    b->last_step_ms = -1.0; /* culled and unculled steps differ by orders of magnitude */
    return b->base.config.cull ? cull_prepare(b, err) : SIM_OK;
}

/* A cull list into the caller's array: its length in *count, at most cap entries copied. */
static void copy_list(const void *list, size_t have, size_t size, void *out, uint64_t cap,
                      uint64_t *count) {
    *count = have;
    if (have > 0 && cap > 0) {
        memcpy(out, list, (size_t)(have < cap ? have : cap) * size);
    }
}

static sim_status cpu_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                   sim_error *err) {
    const cpu_backend *b = as_cpu(base);
    copy_list(b->tcull.triples.v, b->tcull_ready ? b->tcull.triples.count : 0u, sizeof *out, out,
              cap, count);
    return SIM_OK;
}

static sim_status cpu_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                 sim_error *err) {
    const cpu_backend *b = as_cpu(base);
    copy_list(b->cull.tiles.v, b->cull_ready ? b->cull.tiles.count : 0u, sizeof *out, out, cap,
              count);
    return SIM_OK;
}

/* The kernels' contact test in double: |x_i - x_j| < r_i + r_j (NaN: no). */
static int touching_d(sim_vec4d a, sim_vec4d b) {
    const double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z, reach = a.w + b.w;
    return dx * dx + dy * dy + dz * dz < reach * reach;
}

typedef struct {
    sim_body_pair *out;
    uint64_t cap, count;
} contact_sink;

/* The touching pairs of tile pair t over pos (slot order; order maps slots to bodies, or NULL). */
static void contacts_tile(const cpu_backend *b, sim_tile2 t, const sim_vec4d *pos,
                          const uint32_t *order, contact_sink *sink) {
    uint32_t i0, i1, j0, j1;
    const uint32_t rho = b->base.config.tile;
    tile_range(b, t.i, rho, &i0, &i1);
    tile_range(b, t.j, rho, &j0, &j1);
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t j_end = t.i == t.j ? i : j1;
        for (uint32_t j = j0; j < j_end; ++j) {
            if (touching_d(pos[i], pos[j])) {
                const uint32_t bi = order ? order[i] : i, bj = order ? order[j] : j;
                if (sink->count < sink->cap) {
                    sink->out[sink->count] = (sim_body_pair){bi > bj ? bi : bj, bi > bj ? bj : bi};
                }
                sink->count++;
            }
        }
    }
}

static sim_status cpu_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap, uint64_t *count,
                               sim_error *err) {
    cpu_backend *b = as_cpu(base);
    contact_sink sink = {out, cap, 0};
    if (sim_backend_culling(base)) {
        sim_cpu_cull *c = &b->cull;
        SIM_TRY(sim_cpu_cull_build(c, base, b->st.pos, b->st.vel, err));
        for (size_t k = 0; k < c->tiles.count; ++k) {
            contacts_tile(b, c->tiles.v[k], c->pos, c->order, &sink);
        }
    } else {
        const sim_map_plan *plan = &base->pair_plan;
        for (int l = 0; l < plan->launch_count; ++l) {
            const sim_map_launch *launch = &plan->launch[l];
            const uint64_t gx = launch->grid[0], gy = launch->grid[1];
            const uint64_t blocks = gx * gy * launch->grid[2];
            for (uint64_t blk = 0; blk < blocks; ++blk) {
                sim_tile2 t;
                if (sim_pair_map_block((sim_pair_map)base->config.pair_map, launch,
                                       (uint32_t)(blk % gx), (uint32_t)(blk / gx % gy),
                                       (uint32_t)(blk / gx / gy), &t) &&
                    t.i < b->tiles && t.j < b->tiles) {
                    contacts_tile(b, t, b->st.pos, NULL, &sink);
                }
            }
        }
    }
    *count = sink.count;
    return SIM_OK;
}

/* Trajectory capture: there is no device to overlap with, so the state is converted to the
 * capture's floats at once (O(n), ~1 ms per million bodies). The state stays in the user's order
 * (culling sorts a copy), so no order travels. */
static sim_status cpu_capture(sim_backend *base, sim_capture *c, sim_error *err) {
    cpu_backend *b = as_cpu(base);
    for (uint32_t i = 0; i < b->st.n; ++i) {
        const sim_vec4d p = b->st.pos[i], v = b->st.vel[i];
        const sim_vec3d f = b->force[i];
        c->pos[i] = (sim_vec4f){(float)p.x, (float)p.y, (float)p.z, (float)p.w};
        c->vel[i] = (sim_vec4f){(float)v.x, (float)v.y, (float)v.z, (float)v.w};
        c->force[i] = (sim_vec4f){(float)f.x, (float)f.y, (float)f.z, 0.0f};
    }
    c->has_order = 0;
    c->pending = 0;
    return SIM_OK;
}

static const sim_backend_ops cpu_ops = {
    cpu_destroy,    cpu_run_frame,  cpu_set_params,       cpu_set_state,
    cpu_read_state, cpu_energy,     cpu_export_positions, cpu_capture,
    cpu_set_cull,   cpu_tile_pairs, cpu_contacts,         cpu_tile_triples,
};

sim_status sim_cpu_backend_create(const sim_backend_config *c, const sim_params *p,
                                  const sim_state *s, const sim_rank *rank, sim_backend **out,
                                  sim_error *err) {
    *out = NULL;
    SIM_TRY(sim_state_check_bodies(s, err));
    cpu_backend *b = calloc(1, sizeof *b);
    if (b == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the CPU backend");
    }
    b->base.ops = &cpu_ops;
    b->base.config = *c;
    b->base.n = s->n;
    b->base.rank = rank != NULL ? *rank : (sim_rank){0, 1, -1, NULL};
#ifdef _OPENMP
    b->threads = c->cpu_threads > 0 ? c->cpu_threads : omp_get_max_threads();
#else
    b->threads = 1;
#endif
    snprintf(b->base.device_name, sizeof b->base.device_name, "CPU (%d thread%s)", b->threads,
             b->threads == 1 ? "" : "s");
    b->tiles = sim_ceil_div(s->n, c->tile);
    b->ttiles = sim_ceil_div(s->n, SIM_TRIPLET_TILE);
    sim_status st = sim_state_copy(&b->st, s, err);
    if (st == SIM_OK) {
        b->force = calloc(s->n, sizeof *b->force);
        b->tbuf = calloc((size_t)b->threads * s->n, sizeof *b->tbuf);
        if (b->force == NULL || b->tbuf == NULL) {
            st = sim_fail(err, SIM_OUT_OF_MEMORY,
                          "cannot allocate CPU force buffers for %u bodies x %d threads", s->n,
                          b->threads);
        }
    }
    if (st == SIM_OK) {
        st = sim_backend_plan_maps(&b->base, c->pair_map, c->triplet_map, p, err);
    }
    if (st == SIM_OK && c->cull) {
        st = cull_prepare(b, err);
    }
    if (st == SIM_OK) {
        /* F_0 for the first half kick: a step's work, stoppable like one, and its time tells
         * whether the first step may be long. */
        apply_params(b, p);
        const double t0 = sim_now_ms();
        b->watch = stop_flag(b);
        st = compute_forces(b, NULL, err);
        b->watch = NULL;
        b->last_step_ms = sim_now_ms() - t0;
        if (st == SIM_INTERRUPTED) {
            (void)sim_fail(err, SIM_INTERRUPTED, "stopped while computing the initial forces");
        }
    }
    if (st != SIM_OK) {
        cpu_destroy(&b->base);
        return st;
    }
    *out = &b->base;
    return SIM_OK;
}
