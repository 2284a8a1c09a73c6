/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference backend: the same model as the CUDA backend, in double, and the same
 * tiling. Pair and triplet work is enumerated block by block through the configured thread map
 * (sim_*_map_plan, then sim_*_map_block for every block of every launch), exactly as the kernels
 * see it, so a map that loses or repeats a tile changes the CPU forces too and the map tests can
 * compare against a plain O(N^2)/O(N^3) loop. Each unique pair/triple is evaluated once and its
 * force applied to all its bodies (Newton's third law). OpenMP threads (when available) each
 * accumulate into their own force buffer; the buffers are summed when a sweep ends, so no races
 * and the result does not depend on the schedule beyond rounding order (one thread: on nothing).
 *
 * It is stepped by the stepper (step/stepper.h), which decides everything a step does; this
 * file gives it the primitives (cpu_step_ops): the phases done at once, the host clock as
 * marks, saving and restoring a step's start. A sweep comes as slices of blocks [begin, end) of
 * a plan or of a culled list: the first clears the per-thread buffers, the last sums them into
 * the forces, so a step cut into slices sums exactly as a whole one, and a stop between slices
 * (read by the stepper) leaves the forces to be restored.
 *
 * SIM_PAIR_FULL (the nbody-style full sweep) is a CUDA kernel variant: sim_backend refuses it
 * for this backend (the symmetric sweep already gives the same forces).
 *
 * Culling (config.cull, cpu_cull.c): the state stays in the user's order; `cull.order` sorts the
 * bodies along the Morton curve (when the stepper says), the cull phase gathers sorted copies,
 * boxes their tiles and culls through the map's blocks like the kernels, and the contact sweep
 * takes only the surviving tile pairs, with the same pair_tile; the per-thread forces (slot
 * order) are scattered back to the bodies. The same pairs are evaluated, so forces agree with
 * the full sweep up to summation order. Its lists grow as they fill: no capacity to manage.
 *
 * The ATM cut-off (config.cull, atm_cutoff > 0): cpu_atm.c's phase over the same sorted copies
 * (its neighbour lists, or the tile triples with skin 0); the sweep's forces go back through
 * the body order like the pairs'; the same triples count (up to summation order).
 *
 * Energies: `contact` = pair springs, `atm` = ATM triples (0 while triplets are off), `gravity`
 * = the per-body potential, gravity -m g.x plus the walls' elastic energy (what sim_body_force
 * reports; the CUDA backend splits it the same way). They are computed with the forces at the
 * current positions, so energy() costs nothing extra. */
#define _POSIX_C_SOURCE 200809L

#include "cpu/cpu_backend_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/omp.h"

/* Below this much work (pair checks, triples or bodies) a phase runs on one thread: a parallel
 * region costs microseconds on an idle machine and a scheduler time slice (milliseconds) when the
 * cores are oversubscribed, as on a CI runner executing tests in parallel. */
#define CPU_MIN_PARALLEL_WORK 32768.0

/* The rates one thread is assumed to sweep at before a sweep has been timed [interactions / ms]
 * (the stepper's guess_rate): about a third of what one x86 core of the CI machines does in
 * double (test_interrupt: ~3e5 pair checks and ~6e4 ATM triples per ms), so that a sweep that
 * might be long is sliced; the slices are sized from the measured rate after that. */
#define CPU_GUESS_PAIR_CHECKS_PER_MS 1.0e5
#define CPU_GUESS_TRIPLES_PER_MS 2.0e4

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

/* Tile pair (I, J) of the bodies in pos/vel (the state, or the culled phase's sorted copies; f
 * indexed alike; order: their user indices, NULL when they are the same): all i in I, j in J; on
 * the diagonal only j < i. touching (culled sweeps; NULL for the plan's) counts the pairs that
 * touch. */
static void pair_tile(const cpu_backend *b, sim_tile2 t, const sim_vec4d *pos, const sim_vec4d *vel,
                      const uint32_t *order, sim_vec3d *f, double *energy, uint64_t *touching) {
    uint32_t i0, i1, j0, j1;
    const uint32_t rho = b->base.config.tile;
    sim_cpu_tile_range(b, t.i, rho, &i0, &i1);
    sim_cpu_tile_range(b, t.j, rho, &j0, &j1);
    if (b->fric != NULL) { /* friction: its pair visit, the one every enumeration calls */
        sim_cpu_friction_tile(b->fric, &b->ph, i0, i1, j0, j1, t.i == t.j, pos, vel, order, f,
                              energy, touching);
        return;
    }
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t j_end = t.i == t.j ? i : j1;
        for (uint32_t j = j0; j < j_end; ++j) {
            const sim_vec3d fij =
                sim_contact_force_d(pos[i], vel[i], pos[j], vel[j], &b->ph, energy);
            add3(&f[i], fij);
            sub3(&f[j], fij);
            if (touching != NULL) {
                *touching += (uint64_t)sim_cpu_touching(pos[i], pos[j], &b->ph);
            }
        }
    }
}

/* Tile triple (I, J, K) of the bodies in pos (the state, or the culled phase's sorted copies; f
 * indexed alike): strictly ordered bodies where tiles coincide (i > j if I == J, j > k if
 * J == K), so each unordered triple is seen once. */
static void triplet_tile(const cpu_backend *b, sim_tile3 t, const sim_vec4d *pos, sim_vec3d *f,
                         double *energy) {
    uint32_t i0, i1, j0, j1, k0, k1;
    sim_cpu_tile_range(b, t.i, SIM_TRIPLET_TILE, &i0, &i1);
    sim_cpu_tile_range(b, t.j, SIM_TRIPLET_TILE, &j0, &j1);
    sim_cpu_tile_range(b, t.k, SIM_TRIPLET_TILE, &k0, &k1);
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

/* ---- sweeps, a slice at a time ---- */

static int team_for(const cpu_backend *b, double work) {
    return work >= CPU_MIN_PARALLEL_WORK ? b->threads : 1;
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

/* The blocks of a plan this slice covers: [begin, end) alone; a rank of several, its share (it
 * is never sliced). Pieces in the plan's order, so slices sweep the blocks as one launch would. */
static void plan_slice(const cpu_backend *b, const sim_map_plan *plan, uint64_t begin, uint64_t end,
                       sim_map_share *share) {
    if (b->base.rank.world > 1) {
        sim_backend_share(&b->base, plan, share);
    } else {
        sim_work_range_share(plan, begin, end, share);
    }
}

/* Blocks whose tile lies outside the domain (only a broken map gives them) are skipped, as a
 * guarded kernel would skip them. */
static double pair_plan_slice(cpu_backend *b, uint64_t begin, uint64_t end) {
    const sim_pair_map map = (sim_pair_map)b->base.config.pair_map;
    const uint32_t tiles = b->tiles;
    double energy = 0.0;
    sim_map_share share;
    plan_slice(b, &b->base.pair_plan, begin, end, &share);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy)) {
        sim_vec3d *f = b->tbuf + (size_t)sim_cpu_thread_id() * b->st.n;
        for (int p = 0; p < share.piece_count; ++p) {
            const sim_map_piece *pc = &share.piece[p];
            const sim_map_launch *launch = &b->base.pair_plan.launch[pc->launch];
            const int64_t gx = pc->grid[0], gy = pc->grid[1];
            const int64_t blocks = gx * gy * (int64_t)pc->grid[2];
            SIM_OMP(omp for schedule(dynamic, 8))
            for (int64_t blk = 0; blk < blocks; ++blk) {
                sim_tile2 t;
                if (sim_pair_map_block(map, launch, pc->origin[0] + (uint32_t)(blk % gx),
                                       pc->origin[1] + (uint32_t)(blk / gx % gy),
                                       pc->origin[2] + (uint32_t)(blk / gx / gy), &t) &&
                    t.i < tiles && t.j < tiles) {
                    pair_tile(b, t, b->st.pos, b->st.vel, NULL, f, &energy, NULL);
                }
            }
        }
    }
    return energy;
}

/* Entries [begin, end) of the culled list, over the sorted copies (slot-order buffers); the
 * touching pairs counted into *contacts. */
static double pair_list_slice(cpu_backend *b, uint64_t begin, uint64_t end, uint64_t *contacts) {
    const sim_cpu_cull *c = &b->cull;
    const sim_tile2 *list = c->tiles.v;
    double energy = 0.0;
    uint64_t touching = 0;
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy, touching)) {
        sim_vec3d *f = b->tbuf + (size_t)sim_cpu_thread_id() * b->st.n;
        SIM_OMP(omp for schedule(dynamic, 8))
        for (int64_t k = (int64_t)begin; k < (int64_t)end; ++k) {
            pair_tile(b, list[k], c->pos, c->vel, c->order, f, &energy, &touching);
        }
    }
    *contacts += touching;
    return energy;
}

/* Slots [begin, end) over their neighbour lists (sorted copies, slot-order buffers), in chunks
 * of 256 slots; tests and touching pairs counted into *tally. */
static double pair_nlist_slice(cpu_backend *b, uint64_t begin, uint64_t end,
                               sim_cpu_nlist_tally *tally) {
    const sim_cpu_cull *c = &b->cull;
    double energy = 0.0;
    uint64_t contacts = 0, tests = 0;
    const int64_t chunks = (int64_t)((end - begin + 255u) / 256u);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy, contacts, tests)) {
        sim_vec3d *f = b->tbuf + (size_t)sim_cpu_thread_id() * b->st.n;
        sim_cpu_nlist_tally mine = {0, 0};
        SIM_OMP(omp for schedule(dynamic, 1))
        for (int64_t k = 0; k < chunks; ++k) {
            const uint64_t lo = begin + 256u * (uint64_t)k, hi = lo + 256u < end ? lo + 256u : end;
            energy += b->fric != NULL
                          ? sim_cpu_friction_nlist(b->fric, &b->ph, &b->nlist, (uint32_t)lo,
                                                   (uint32_t)hi, c->pos, c->vel, c->order, f, &mine)
                          : sim_cpu_nlist_sweep(&b->nlist, (uint32_t)lo, (uint32_t)hi, c->pos,
                                                c->vel, &b->ph, f, &mine);
        }
        contacts += mine.contacts;
        tests += mine.tests;
    }
    tally->contacts += contacts;
    tally->tests += tests;
    return energy;
}

static double triplet_plan_slice(cpu_backend *b, uint64_t begin, uint64_t end) {
    const sim_triplet_map map = b->base.config.triplet_map;
    const uint32_t tiles = b->ttiles;
    double energy = 0.0;
    sim_map_share share;
    plan_slice(b, &b->base.triplet_plan, begin, end, &share);
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy)) {
        sim_vec3d *f = b->tbuf + (size_t)sim_cpu_thread_id() * b->st.n;
        for (int p = 0; p < share.piece_count; ++p) {
            const sim_map_piece *pc = &share.piece[p];
            const sim_map_launch *launch = &b->base.triplet_plan.launch[pc->launch];
            const int64_t gx = pc->grid[0], gy = pc->grid[1];
            const int64_t blocks = gx * gy * (int64_t)pc->grid[2];
            SIM_OMP(omp for schedule(dynamic, 4))
            for (int64_t blk = 0; blk < blocks; ++blk) {
                sim_tile3 t;
                if (sim_triplet_map_block(map, launch, pc->origin[0] + (uint32_t)(blk % gx),
                                          pc->origin[1] + (uint32_t)(blk / gx % gy),
                                          pc->origin[2] + (uint32_t)(blk / gx / gy), &t) &&
                    t.i < tiles && t.j < tiles && t.k < tiles) {
                    triplet_tile(b, t, b->st.pos, f, &energy);
                }
            }
        }
    }
    return energy;
}

/* Entries [begin, end) of the cut-off's tile-triple list (several ranks: each listed its rows'
 * triples, triplet_cull.h). */
static double triplet_list_slice(cpu_backend *b, uint64_t begin, uint64_t end) {
    const sim_tile3 *list = b->tcull.triples.v;
    double energy = 0.0;
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy)) {
        sim_vec3d *f = b->tbuf + (size_t)sim_cpu_thread_id() * b->st.n;
        SIM_OMP(omp for schedule(dynamic, 4))
        for (int64_t k = (int64_t)begin; k < (int64_t)end; ++k) {
            triplet_tile(b, list[k], b->cull.pos, f, &energy);
        }
    }
    return energy;
}

/* A whole sweep's work [pair checks or triples], which decides its team. */
static double sweep_work(const cpu_backend *b, sim_sweep w) {
    const double n = b->st.n, rho = b->base.config.tile, t3 = SIM_TRIPLET_TILE;
    switch (w) {
    case SIM_SWEEP_PAIR_PLAN:
        return 0.5 * n * n;
    case SIM_SWEEP_PAIR_LIST:
        return (double)b->cull.tiles.count * rho * rho;
    case SIM_SWEEP_PAIR_NLIST:
        return b->nlist.overflow ? (double)b->cull.tiles.count * rho * rho
                                 : (double)b->nlist.entries;
    case SIM_SWEEP_TRIPLET_PLAN:
        return n * n * n / 6.0;
    case SIM_SWEEP_TRIPLET_NLIST:
        return sim_cpu_atm_list_work(b);
    default:
        return (double)b->tcull.triples.count * t3 * t3 * t3;
    }
}

/* Walls + gravity, added to force[] (with friction: the walls' too, and torques); returns their
 * potential energy. */
static double body_phase(cpu_backend *b) {
    const int64_t n = b->st.n;
    double energy = 0.0;
    const int team = team_for(b, (double)n);
    (void)team; /* unused without OpenMP */
    if (b->mesh != NULL) {
        sim_cpu_mesh_begin(b->mesh);
    }
    SIM_OMP(omp parallel for num_threads(team) schedule(static) reduction(+ : energy))
    for (int64_t i = 0; i < n; ++i) {
        const sim_vec4d x = b->st.pos[i], v = b->st.vel[i];
        add3(&b->force[i], b->fric
                               ? sim_cpu_friction_body(b->fric, &b->ph, (uint32_t)i, x, v, &energy)
                               : sim_body_force_d(x, v, &b->ph, &energy));
        if (b->mesh != NULL) { /* the histories advance with friction's (its dt) */
            add3(&b->force[i],
                 sim_cpu_mesh_body(b->mesh, &b->ph, (uint32_t)i, x, v,
                                   sim_state_spin(&b->st, (uint32_t)i), b->fric ? b->fric->dt : 0.0,
                                   b->fric ? &b->fric->torque[i] : NULL, &energy));
        }
    }
    return energy;
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

/* ---- the primitives (sim_step_ops) ---- */

static sim_status cpu_begin_frame(sim_backend *base, const sim_step_shape *f, int marks,
                                  sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    if (marks > b->mark_cap) {
        double *m = realloc(b->mark_ms, (size_t)marks * sizeof *m);
        if (m == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d timing marks", marks);
        }
        b->mark_ms = m;
        b->mark_cap = marks;
    }
    if (f->culled) {
        SIM_TRY(sim_cpu_cull_ready(b, err));
    }
    if (f->tculled && !b->tcull_ready) {
        SIM_TRY(sim_cpu_tcull_init(&b->tcull, b->st.n, err));
        b->tcull_ready = 1;
    }
    if (f->listed) {
        SIM_TRY(sim_cpu_nlist_ready(b, err));
    }
    for (int l = 0; l < SIM_LIST_COUNT; ++l) {
        b->rec.list[l].peak = 0;
    }
    b->rec.nlist_rebuilds = b->rec.nlist_fallback_steps = b->rec.atm_rebuilds = 0;
    b->rec.candidates = b->rec.contacts = 0;
    return SIM_OK;
}

static sim_status cpu_mark(sim_backend *base, int id, sim_error *err) {
    sim_cpu_of(base)->mark_ms[id] = sim_now_ms();
    return SIM_OK;
}

static sim_status cpu_wait_mark(sim_backend *base, int id, sim_error *err) {
    return SIM_OK; /* the work is done when the call returns */
}

static sim_status cpu_elapsed(sim_backend *base, int from, int to, double *ms, sim_error *err) {
    const cpu_backend *b = sim_cpu_of(base);
    *ms = b->mark_ms[to] - b->mark_ms[from];
    return SIM_OK;
}

static sim_status cpu_verlet_first(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const int64_t n = b->st.n;
    const int team = team_for(b, (double)n);
    (void)team; /* unused without OpenMP */
    const double dt = b->dt;
    SIM_OMP(omp parallel for num_threads(team) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        sim_verlet_first_d(&b->st.pos[i], &b->st.vel[i], b->force[i], dt);
    }
    if (b->fric != NULL) {
        sim_cpu_friction_kick(b->fric, b->st.pos, b->st.vel, dt, team);
    }
    if (b->mesh != NULL) { /* the positions' new time: the meshes' too */
        b->mesh->time += dt;
    }
    return SIM_OK;
}

/* Centres back into the box on its periodic axes (the stepper calls it only for those). */
static sim_status cpu_wrap(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const int64_t n = b->st.n;
    for (int64_t i = 0; i < n; ++i) {
        sim_wrap_d(&b->st.pos[i], &b->ph);
    }
    return SIM_OK;
}

static sim_status cpu_sort(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    sim_cpu_cull_sort(&b->cull, b->st.pos, b->base.params.box_half);
    sim_cpu_friction_relist(b->fric); /* the springs are laid out by slot */
    return SIM_OK;
}

/* Sorted copies, tile boxes, the culling passes: the tile-pair list for these positions (with
 * neighbour lists only when they are rebuilt). */
static sim_status cpu_cull(sim_backend *base, unsigned flags, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    sim_cpu_cull_gather(&b->cull, b->st.pos, b->st.vel);
    return sim_cpu_cull_pairs(b, flags, err);
}

static sim_status cpu_neighbours(sim_backend *base, unsigned flags, sim_error *err) {
    sim_cpu_build_nlist(sim_cpu_of(base), flags);
    return SIM_OK;
}

/* Slice [begin, end) of a sweep. The first starts it (the team for the whole sweep, cleared
 * buffers, the energy from 0: a step's forces begin with the contacts, so the ATM energy too),
 * the last sums the buffers into force: = for contacts, += for triplets, through the body order
 * for the culled lists. */
static sim_status cpu_sweep(sim_backend *base, sim_sweep w, uint64_t begin, uint64_t end,
                            unsigned flags, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const int pairs =
        w == SIM_SWEEP_PAIR_PLAN || w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_PAIR_NLIST;
    /* lists that overflowed: the tile pairs of their build (exact: nlist.h) */
    const int fallback = w == SIM_SWEEP_PAIR_NLIST && b->nlist.overflow;
    const int record = (flags & SIM_STEP_RECORD) != 0;
    sim_cpu_nlist_tally tally = {0, 0};
    if (flags & SIM_SLICE_FIRST) {
        b->team = team_for(b, sweep_work(b, w));
        memset(b->tbuf, 0, (size_t)b->team * b->st.n * sizeof *b->tbuf);
        b->e_atm = 0.0;
        if (pairs) {
            b->e_contact = 0.0;
        }
        if (pairs && b->fric != NULL) {
            sim_cpu_friction_begin(b->fric, b->team, flags & SIM_STEP_ADVANCE ? b->dt : 0.0);
            if (w == SIM_SWEEP_PAIR_NLIST && !fallback) { /* the springs beside the entries */
                SIM_TRY(sim_cpu_friction_lay(b->fric, &b->ph, &b->nlist, b->cull.pos, b->cull.order,
                                             err));
            } else {
                sim_cpu_friction_flush(b->fric);
            }
        }
    }
    switch (w) {
    case SIM_SWEEP_PAIR_PLAN:
        b->e_contact += pair_plan_slice(b, begin, end);
        break;
    case SIM_SWEEP_PAIR_LIST:
        b->e_contact += pair_list_slice(b, begin, end, &tally.contacts);
        tally.tests = (end - begin) * b->base.config.tile * b->base.config.tile;
        break;
    case SIM_SWEEP_PAIR_NLIST:
        if (fallback) {
            b->e_contact += pair_list_slice(b, begin, end, &tally.contacts);
            tally.tests = (end - begin) * b->base.config.tile * b->base.config.tile;
        } else {
            b->e_contact += pair_nlist_slice(b, begin, end, &tally);
        }
        b->rec.nlist_fallback_steps += fallback && record && (flags & SIM_SLICE_FIRST);
        break;
    case SIM_SWEEP_TRIPLET_PLAN:
        b->e_atm += triplet_plan_slice(b, begin, end);
        break;
    case SIM_SWEEP_TRIPLET_NLIST:
        b->e_atm += sim_cpu_atm_list_slice(b, begin, end);
        break;
    default:
        b->e_atm += triplet_list_slice(b, begin, end);
        break;
    }
    if (record) {
        b->rec.candidates += tally.tests;
        b->rec.contacts += tally.contacts;
    }
    if (flags & SIM_SLICE_LAST) {
        const int list = w != SIM_SWEEP_PAIR_PLAN && w != SIM_SWEEP_TRIPLET_PLAN;
        reduce_buffers(b, !pairs, list ? b->cull.order : NULL);
        if (pairs && b->fric != NULL) {
            sim_cpu_friction_end(b->fric, b->team);
        }
    }
    return SIM_OK;
}

/* Several ranks: every rank holds its share's forces and energies; sums them over the ranks
 * (the host group adds in rank order, so every rank gets the same bits). */
static sim_status cpu_reduce(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    double e[2] = {b->e_contact, b->e_atm};
    SIM_TRY(sim_comm_allreduce_sum(b->base.rank.comm, b->force, 3u * (size_t)b->st.n,
                                   SIM_COMM_DOUBLE, NULL, err));
    SIM_TRY(sim_comm_allreduce_sum(b->base.rank.comm, e, 2, SIM_COMM_DOUBLE, NULL, err));
    b->e_contact = e[0];
    b->e_atm = e[1];
    return SIM_OK;
}

static sim_status cpu_body_forces(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    b->e_body = body_phase(b);
    SIM_TRY(sim_cpu_mesh_check(b->mesh, err));
    return b->fric != NULL ? sim_cpu_friction_check(b->fric, err) : SIM_OK;
}

/* Body forces, the second half kick, and the state checked: SIM_UNSTABLE names the body. */
static sim_status cpu_verlet_second(sim_backend *base, int step, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const int64_t n = b->st.n;
    const int team = team_for(b, (double)n);
    (void)team; /* unused without OpenMP */
    const double dt = b->dt;
    b->e_body = body_phase(b);
    SIM_OMP(omp parallel for num_threads(team) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        sim_verlet_second_d(&b->st.vel[i], b->force[i], dt);
    }
    b->steps_done++;
    SIM_TRY(sim_cpu_mesh_check(b->mesh, err));
    if (b->fric != NULL) { /* SIM_UNSTABLE from the check: the step is done all the same */
        sim_cpu_friction_kick(b->fric, b->st.pos, b->st.vel, dt, team);
        SIM_TRY(sim_cpu_friction_check(b->fric, err));
    }
    return check_blowup(b, step + 1, err);
}

static sim_status cpu_commit_history(sim_backend *base, sim_error *err) {
    sim_cpu_friction_commit(sim_cpu_of(base)->fric);
    sim_cpu_mesh_commit(sim_cpu_of(base)->mesh);
    return SIM_OK;
}

/* The lists' counts as recorded (no device: nothing to wait for). */
static sim_status cpu_end_frame(sim_backend *base, const sim_step_shape *f, sim_step_counts *c,
                                sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    *c = b->rec;
    if (b->fric != NULL) { /* what reads the histories between frames reads the tables */
        sim_cpu_friction_flush(b->fric);
    }
    for (int l = 0; l < SIM_LIST_COUNT; ++l) {
        c->list[l].active = l <= SIM_LIST_SUPER_PAIRS ? f->culled : f->tculled && !f->tlisted;
    }
    c->list[SIM_LIST_NEIGHBOURS].active = f->listed;
    c->list[SIM_LIST_ATM_NEIGHBOURS].active = f->tlisted;
    c->nlist_bytes = b->nlist_ready ? sim_cpu_nlist_bytes(&b->nlist) : 0u;
    c->atm_bytes = b->atm_ready ? sim_cpu_atm_list_bytes(&b->atm) : 0u;
    return SIM_OK;
}

static void step_save_free(step_save *sv) {
    free(sv->pos);
    free(sv->vel);
    free(sv->force);
    sv->pos = sv->vel = NULL;
    sv->force = NULL;
    sv->have = 0;
}

/* The start of a long step (88 bytes per body, copied in ~1 % of such a step's time), in
 * memory allocated on first use; without it the step is not saved (*saved 0). */
static sim_status cpu_save(sim_backend *base, int *saved, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    step_save *sv = &b->save;
    const size_t n = b->st.n;
    if (sv->have == 0) {
        sv->pos = malloc(n * sizeof *sv->pos);
        sv->vel = malloc(n * sizeof *sv->vel);
        sv->force = malloc(n * sizeof *sv->force);
        sv->have = sv->pos != NULL && sv->vel != NULL && sv->force != NULL;
        if (!sv->have) {
            step_save_free(sv);
            sv->have = -1;
        }
    }
    *saved = sv->have == 1;
    if (*saved && b->fric != NULL) {
        sim_cpu_friction_save(b->fric, saved);
    }
    if (!*saved) {
        return SIM_OK;
    }
    memcpy(sv->pos, b->st.pos, n * sizeof *sv->pos);
    memcpy(sv->vel, b->st.vel, n * sizeof *sv->vel);
    memcpy(sv->force, b->force, n * sizeof *sv->force);
    sv->e_contact = b->e_contact;
    sv->e_atm = b->e_atm;
    sv->e_body = b->e_body;
    sv->steps_done = b->steps_done;
    sv->mesh_time = b->mesh != NULL ? b->mesh->time : 0.0;
    sv->rec = b->rec;
    return SIM_OK;
}

static sim_status cpu_restore(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const step_save *sv = &b->save;
    const size_t n = b->st.n;
    memcpy(b->st.pos, sv->pos, n * sizeof *sv->pos);
    memcpy(b->st.vel, sv->vel, n * sizeof *sv->vel);
    memcpy(b->force, sv->force, n * sizeof *sv->force);
    b->e_contact = sv->e_contact;
    b->e_atm = sv->e_atm;
    b->e_body = sv->e_body;
    b->steps_done = sv->steps_done;
    if (b->mesh != NULL) {
        b->mesh->time = sv->mesh_time;
        b->mesh->overflow = UINT32_MAX;
    }
    b->rec = sv->rec;
    if (b->fric != NULL) {
        sim_cpu_friction_restore(b->fric);
    }
    return SIM_OK;
}

/* The culled lists' lengths as last built (the host knows them: they can be sliced); the
 * neighbour lists' sweep covers the slots, or the tile pairs when a list overflowed. */
static uint64_t cpu_list_blocks(const sim_backend *base, sim_sweep w) {
    const cpu_backend *b = sim_cpu_of_const(base);
    if ((w == SIM_SWEEP_PAIR_NLIST && !b->nlist.overflow) || w == SIM_SWEEP_TRIPLET_NLIST) {
        return b->st.n;
    }
    if (w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_PAIR_NLIST) {
        return b->cull_ready ? b->cull.tiles.count : 0u;
    }
    return b->tcull_ready ? b->tcull.triples.count : 0u;
}

static double cpu_guess_rate(const sim_backend *base, sim_sweep w) {
    const cpu_backend *b = sim_cpu_of_const(base);
    const int pairs =
        w == SIM_SWEEP_PAIR_PLAN || w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_PAIR_NLIST;
    return (pairs ? CPU_GUESS_PAIR_CHECKS_PER_MS : CPU_GUESS_TRIPLES_PER_MS) * b->threads;
}

/* The neighbour lists' entries per body (the other lists grow as they fill: never asked). The
 * contents are lost: the stepper has the next step rebuild them. */
static sim_status cpu_grow(sim_backend *base, sim_list list, uint64_t cap, int *grown,
                           sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    sim_error ignored;
    *grown = list != SIM_LIST_NEIGHBOURS ||
             sim_cpu_nlist_resize(&b->nlist, (uint32_t)cap, &ignored) == SIM_OK;
    return SIM_OK;
}

static const sim_step_ops cpu_step_ops = {
    .begin_frame = cpu_begin_frame,
    .mark = cpu_mark,
    .wait_mark = cpu_wait_mark,
    .elapsed = cpu_elapsed,
    .verlet_first = cpu_verlet_first,
    .wrap = cpu_wrap,
    .sort = cpu_sort,
    .cull = cpu_cull,
    .neighbours = cpu_neighbours,
    .sweep = cpu_sweep,
    .triplet_cull = sim_cpu_triplet_cull,
    .reduce = cpu_reduce,
    .body_forces = cpu_body_forces,
    .verlet_second = cpu_verlet_second,
    .end_frame = cpu_end_frame,
    .measure = NULL,  /* counts are exact: the lists grow as they fill */
    .grow = cpu_grow, /* but for the neighbour lists, sized as the GPU's */
    .save = cpu_save,
    .restore = cpu_restore,
    .list_blocks = cpu_list_blocks,
    .guess_rate = cpu_guess_rate,
    .culls_triplets = sim_backend_triplet_culling,
    .commit_history = cpu_commit_history,
    .lists_triplets = sim_backend_atm_listing,
    .marks_free = 1, /* the host clock */
};

/* ---- the interface ---- */

static void apply_params(cpu_backend *b, const sim_params *p) {
    b->base.params = *p;
    b->ph = sim_physics_from_params(p);
    b->dt = p->dt > 0.0 ? p->dt : sim_default_dt(p, &b->st);
    b->ph.normal.inv_dt = b->dt > 0.0 ? 1.0 / b->dt : 0.0;
    b->base.nlist_skin = sim_nlist_skin(p, &b->st, b->dt);
    b->base.atm_reach_bodies = sim_atm_list_neighbours(p, &b->st, b->base.nlist_skin);
}

static void cpu_destroy(sim_backend *base) {
    cpu_backend *b = sim_cpu_of(base);
    sim_cpu_friction_destroy(&b->fric);
    sim_cpu_mesh_destroy(&b->mesh);
    sim_state_free(&b->st);
    free(b->force);
    free(b->tbuf);
    if (b->cull_ready) {
        sim_cpu_cull_free(&b->cull);
    }
    if (b->tcull_ready) {
        sim_cpu_tcull_free(&b->tcull);
    }
    if (b->nlist_ready) {
        sim_cpu_nlist_free(&b->nlist);
    }
    if (b->atm_ready) {
        sim_cpu_atm_list_free(&b->atm);
    }
    step_save_free(&b->save);
    free(b->mark_ms);
    sim_stepper_free(&b->base.stepper);
    free(b);
}

/* The physics and dt of p (the forces are the stepper's: backend.c asks it); friction turned on
 * starts with no histories, turned off drops them. */
static sim_status cpu_set_params(sim_backend *base, const sim_params *p, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const sim_params old = b->base.params;
    apply_params(b, p);
    const sim_status st = sim_cpu_friction_ready(&b->fric, p, NULL, &b->st, b->threads, err);
    if (st != SIM_OK) {
        apply_params(b, &old);
        return st;
    }
    if (!sim_params_have_friction(&old)) { /* friction turned on starts with no histories */
        sim_cpu_mesh_clear_history(b->mesh);
    }
    b->nlist.built = 0; /* built for another skin */
    b->atm.built = 0;   /* for another skin or cut-off */
    return SIM_OK;
}

/* The bodies of s, in the user's order as always (culling sorts copies); then backend.c has the
 * stepper sort and compute their forces. */
static sim_status cpu_set_state(sim_backend *base, const sim_state *s, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    SIM_TRY(sim_state_check_bodies(s, err));
    if (b->mesh != NULL) { /* the mesh contacts' histories are not in a state: they start over */
        SIM_TRY(sim_cpu_mesh_resize(b->mesh, s->n, err));
        sim_cpu_mesh_clear_history(b->mesh);
    }
    SIM_TRY(sim_cpu_friction_ready(&b->fric, &b->base.params, s, &b->st, b->threads, err));
    sim_state_copy_bodies(&b->st, s);
    apply_params(b, &b->base.params); /* the default dt depends on masses and speeds */
    b->nlist.built = 0;               /* built for other bodies (radii) */
    b->atm.built = 0;                 /* for other bodies */
    return SIM_OK;
}

static sim_status cpu_set_cull(sim_backend *base, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    return b->base.config.cull ? sim_cpu_cull_ready(b, err) : SIM_OK;
}

static const sim_backend_ops cpu_ops = {
    cpu_destroy,        sim_step_frame,     cpu_set_params,           cpu_set_state,
    sim_cpu_read_state, sim_cpu_energy,     sim_cpu_export_positions, sim_cpu_capture,
    cpu_set_cull,       sim_cpu_tile_pairs, sim_cpu_contacts,         sim_cpu_tile_triples,
};

sim_status sim_cpu_set_meshes(sim_backend *base, sim_mesh *const *meshes, int count,
                              sim_error *err) {
    if (base->ops != &cpu_ops || base->rank.world > 1) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "mesh walls run on the CPU reference of one rank only for now (not on "
                        "several ranks or GPUs, nor split in space)");
    }
    cpu_backend *b = sim_cpu_of(base);
    SIM_TRY(sim_cpu_mesh_set(&b->mesh, meshes, count, b->st.n, err));
    return sim_step_forces(base, 0, err);
}

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
    sim_backend_take_config(&b->base, c);
    b->base.n = s->n;
    b->base.rank = rank != NULL ? *rank : (sim_rank){0, 1, -1, NULL};
    sim_stepper_init(&b->base.stepper, &cpu_step_ops);
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
        st = sim_cpu_cull_ready(b, err);
    }
    if (st == SIM_OK) {
        apply_params(b, p);
        st = sim_cpu_friction_ready(&b->fric, p, s, &b->st, b->threads, err);
    }
    if (st == SIM_OK) {
        /* F_0 for the first half kick: a step's work, stopped like one, and its times are the
         * sweeps' first measured rates. */
        st = sim_step_forces(&b->base, 1, err);
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
