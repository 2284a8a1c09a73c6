/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend's primitives for the stepper (step/stepper.h says what a step does
 * and when; this file only how, on the GPU). Every primitive enqueues on the main stream and
 * returns at once: the phases' kernels, a CUDA event per mark (a phase's time is the GPU time
 * between two events, never a host clock around asynchronous launches), and the frame's one
 * host sync in end_frame, where the instability flag and the lists' counters are read. The host
 * waits otherwise only where the stepper asks (wait_mark: the stop flag's slices and window) and
 * in restore. List lengths stay on the device: a culled sweep is one launch over its list (a
 * persistent grid), never sliced; a list that overflowed makes its sweep cover everything
 * (exact), and the stepper grows it after the frame.
 *
 * Launches per step: the same kernels as ever, one event per phase that runs (3 to 9), nothing
 * else; per frame: up to four memsets (flag, the three counters' frame parts), four copies and a
 * sync. With neighbour lists (nlist_kernels.h) the drift checks the displacements, the culling and
 * the build return at once on the device unless the lists are rebuilt, and the contacts sweep
 * the lists (the forces cleared by the drift: no memset). The ATM cut-off's lists
 * (atm_list_kernels.h, where sim_cuda_atm_listed) likewise: TRIPLET_CULL checks the displacements
 * since their build and builds only when one passed half the skin (or the stepper forces it),
 * TRIPLETS sweeps them; a list that overflowed is swept exactly all the same and grows after the
 * frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend_impl.h"
#include "cuda/friction_kernels.h"
#include "cuda/integrate.h"
#include "cuda/pair_kernels.h"
#include "cuda/triplet_kernels.h"

namespace {

/* The rates a sweep is assumed to run at before it has been timed, per SM [interactions / ms]:
 * about a quarter of a Hopper SM's (a pair check ~10.5 instructions, a triple ~39, at 128 lanes and
 * 1.755 GHz: 2.1e7 and 5.8e6), so a sweep is sliced when it might be long and its first slices
 * are short; slices are sized from the measured rate after that. */
constexpr double kGuessPairChecksPerMsPerSm = 5.0e6;
constexpr double kGuessTriplesPerMsPerSm = 1.5e6;

static_assert((unsigned)SIM_STEP_RECORD == (unsigned)SIM_GPU_CULL_RECORD &&
                  (unsigned)SIM_STEP_SORTED == (unsigned)SIM_GPU_CULL_SORTED,
              "the stepper's flags are passed to the culling kernels as they are");

static_assert((unsigned)SIM_STEP_REBUILD == (unsigned)SIM_GPU_NLIST_REBUILD &&
                  (unsigned)SIM_STEP_REBUILD == (unsigned)SIM_GPU_ATM_LIST_REBUILD &&
                  (unsigned)SIM_STEP_RECORD == (unsigned)SIM_GPU_ATM_LIST_RECORD,
              "the stepper's forced rebuild is passed to the list kernels as it is");

unsigned gpu_flags(unsigned flags) {
    return flags & (SIM_STEP_RECORD | SIM_STEP_SORTED | SIM_STEP_REBUILD);
}

sim_status ensure_events(cuda_backend *b, int count, sim_error *err) {
    if (count <= b->event_count) {
        return SIM_OK;
    }
    cudaEvent_t *ev = (cudaEvent_t *)realloc(b->events, (size_t)count * sizeof *ev);
    if (ev == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d timing events", count);
    }
    b->events = ev;
    while (b->event_count < count) {
        SIM_CUDA_TRY(cudaEventCreate(&b->events[b->event_count]));
        ++b->event_count;
    }
    return SIM_OK;
}

/* ---- frame, marks ---- */

/* The second half kick of the frame's step `step`, as the cells' sweep or the next drift takes
 * it. */
static sim_gpu_kick kick_of(const cuda_backend *b, int step) {
    return sim_gpu_kick{b->dt, b->d_flag, (uint32_t)step, sim_cuda_body_order(b)};
}

/* The deferred second half kick, if any, in a pass of its own (verlet_second_kernel). */
static sim_status kick_flush(cuda_backend *b, sim_error *err) {
    if (b->deferred_kick < 0) {
        return SIM_OK;
    }
    const uint32_t step = (uint32_t)b->deferred_kick;
    b->deferred_kick = -1;
    return sim_cuda_verlet_second(&b->bodies, sim_cuda_body_order(b), &b->ph, b->dt, b->d_flag,
                                  step, b->streams.main, err);
}

/* The plan of the frame's step `step` (cuda_step_plan). Over the lists the drift checks the
 * displacements and clears the forces; swept straight from the cells it bins the bodies too, and
 * a step whose contacts are its whole force (no ATM, one rank) ends in that sweep, its second
 * half kick fused in (sim_gpu_kick), unless each pair is taken once: a body's force is then whole
 * only when every thread is done, so the kick goes into the next drift where one follows in the
 * frame (drift_bin_kernel: the same bits, one pass over the bodies a step less). The stepper
 * sweeps the lists exactly when it listed the frame (stepper.c: pair_sweep), as the drift asks. */
static cuda_step_plan plan_step(const cuda_backend *b, int step) {
    const sim_backend *base = &b->base;
    cuda_step_plan p = {};
    p.step = step;
    p.lists_drift = sim_backend_listing(base) && b->nlist_ready;
    p.cells = p.lists_drift && b->nlist.direct;
    const bool whole = p.cells && !base->params.triplets && base->rank.world <= 1;
    p.sweep_kicks = whole && !b->nlist.pairs_once;
    p.kick_later = whole && b->nlist.pairs_once && !b->nlist.kick_apart &&
                   step < base->params.steps_per_frame - 1;
    return p;
}

/* Buffers for what the frame runs, events for its marks, and its counters cleared: the
 * instability flag and the frame parts of the lists' counters (peaks, fallbacks). */
sim_status cuda_begin_frame(sim_backend *base, const sim_step_shape *f, int marks, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    SIM_TRY(ensure_events(b, marks, err));
    SIM_TRY(kick_flush(b, err)); /* none, unless the last frame failed */
    b->frame_step = -1; /* FIRST counts the frame's steps from 0 */
    b->plan = cuda_step_plan{};
    if (f->culled) {
        SIM_TRY(sim_cuda_cull_prepare(b, err));
    }
    if (f->tculled && !f->tlisted) {
        SIM_TRY(sim_cuda_tcull_prepare(b, err));
    }
    if (f->tlisted) {
        SIM_TRY(sim_cuda_atm_prepare(b, err));
        SIM_CUDA_TRY(cudaMemsetAsync(&b->atm.counts->frame, 0, sizeof b->atm.counts->frame, s));
    }
    if (f->listed) {
        SIM_TRY(sim_cuda_nlist_prepare(b, err));
        SIM_CUDA_TRY(cudaMemsetAsync(&b->nlist.counts->frame, 0, sizeof b->nlist.counts->frame, s));
    }
    SIM_CUDA_TRY(cudaMemsetAsync(b->d_flag, 0xff, sizeof *b->d_flag, s));
    /* friction: the springs beside the entries for the lists' size now (a growth changes it
     * between frames), allocated here, never inside a step that may be captured into a graph */
    SIM_TRY(sim_cuda_friction_prepare(&b->fric, f->listed && b->nlist_ready ? &b->nlist : nullptr,
                                      s, err));
    if (f->culled) {
        SIM_CUDA_TRY(cudaMemsetAsync(&b->cull.counts->frame, 0, sizeof b->cull.counts->frame, s));
    }
    if (f->tculled && !f->tlisted) {
        SIM_CUDA_TRY(cudaMemsetAsync(&b->tcull.counts->frame, 0, sizeof b->tcull.counts->frame, s));
    }
    return SIM_OK;
}

/* In a step captured into a graph (step_graph.cu) the mark is an external event node: the
 * event is recorded when the graph runs there, and times the phases as on the stream. */
sim_status cuda_mark(sim_backend *base, int id, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    SIM_CUDA_TRY(cudaEventRecordWithFlags(b->events[id], b->streams.main,
                                          b->graphs.capturing ? cudaEventRecordExternal
                                                              : cudaEventRecordDefault));
    return SIM_OK;
}

sim_status cuda_wait_mark(sim_backend *base, int id, sim_error *err) {
    SIM_CUDA_TRY(cudaEventSynchronize(sim_cuda_of(base)->events[id]));
    return SIM_OK;
}

sim_status cuda_elapsed(sim_backend *base, int from, int to, double *ms, sim_error *err) {
    const cuda_backend *b = sim_cuda_of(base);
    float f = 0.0f;
    SIM_CUDA_TRY(cudaEventElapsedTime(&f, b->events[from], b->events[to]));
    *ms = (double)f;
    return SIM_OK;
}

/* ---- the phases ---- */

/* With neighbour lists: each body's displacement since their build checked too, and the forces
 * cleared for the contacts sweep. With periodic axes the centres go back into the box in the same
 * pass (the stepper's WRAP: no wrap primitive here, one pass over the bodies less). With
 * friction the spin's half kick (the last torques): in the lists' drift, else after. */
sim_status cuda_verlet_first(sim_backend *base, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    ++b->frame_step;
    b->plan = plan_step(b, b->frame_step);
    sim_gpu_kick last = {}; /* the step before's second half, deferred (cuda_verlet_second) */
    if (b->deferred_kick >= 0) {
        if (b->plan.cells) { /* folded into the cells' drift */
            last = kick_of(b, b->deferred_kick);
            b->deferred_kick = -1;
        } else {
            SIM_TRY(kick_flush(b, err));
        }
    }
    if (b->plan.lists_drift) {
        b->nlist.period = b->ph.box.period; /* the physics may have changed since the last cull */
        const bool spin = b->fric.on != 0;
        return sim_gpu_nlist_drift(&b->bodies, &b->nlist, b->dt, spin ? b->fric.spin : nullptr,
                                   spin ? b->fric.torque : nullptr, &last, &b->ph,
                                   b->streams.main, err);
    }
    SIM_TRY(sim_cuda_verlet_first(&b->bodies, b->dt, b->ph.box.periodic ? &b->ph.box.period : nullptr,
                                  b->streams.main, err));
    if (b->fric.on) {
        return sim_cuda_friction_kick(&b->bodies, &b->fric, b->dt, b->streams.main, err);
    }
    return SIM_OK;
}

/* Keys, radix sort and gather (the pointers swap with the gather's buffers); friction's springs
 * beside the lists' entries into the table first, the spin after into the new slots (friction.h:
 * slot order; the old order's buffer is the gather's spare, untouched by the gather). */
sim_status cuda_sort(sim_backend *base, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    SIM_TRY(sim_cuda_fric_flush(b, err));
    const uint32_t *old_order = sim_cuda_body_order(b);
    SIM_TRY(sim_gpu_sort_bodies(&b->bodies, &b->cull, b->ph.box.box_half, b->streams.main, err));
    return sim_cuda_friction_permute(&b->fric, old_order, sim_cuda_body_order(b), b->streams.main,
                                     err);
}

sim_status cuda_cull(sim_backend *base, unsigned flags, sim_error *err) {
    return sim_cuda_cull_phase(sim_cuda_of(base), gpu_flags(flags), err);
}

/* The lists from the tile list the cull phase left (the kernel returns at once unless they are
 * rebuilt this step). */
sim_status cuda_neighbours(sim_backend *base, unsigned flags, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    const unsigned binned = b->plan.cells ? (unsigned)SIM_GPU_NLIST_BINNED : 0u;
    SIM_TRY(sim_gpu_nlist_build(&b->bodies, &b->cull, &b->nlist, gpu_flags(flags) | binned,
                                b->streams.main, err));
    return sim_cuda_fric_built(b, err); /* friction: an overflow's fallback reads the tables */
}

/* The blocks of a plan a launch covers: [begin, end) alone (a slice, or all of them); a rank of
 * several, its share (ranks do not read the flag: never sliced). */
void plan_share(const cuda_backend *b, const sim_map_plan *plan, uint64_t begin, uint64_t end,
                sim_map_share *share) {
    if (b->base.rank.world > 1) {
        sim_backend_share(&b->base, plan, share);
    } else {
        sim_work_range_share(plan, begin, end, share);
    }
}

/* The contact sweeps with friction (friction.h): the first slice empties this step's table and
 * zeroes the torques; the histories advance by dt in a step's sweep (SIM_STEP_ADVANCE), not in
 * the forces alone. The lists keep the pairs' springs beside their entries; the other sweeps
 * keep them in the tables, so the springs are flushed there before those. One rank only
 * (backend.c refuses several). */
sim_status friction_sweep(cuda_backend *b, sim_sweep w, uint64_t begin, uint64_t end,
                          unsigned flags, sim_error *err) {
    const sim_backend *base = &b->base;
    const sim_gpu_bodies *bd = &b->bodies;
    cudaStream_t s = b->streams.main;
    const uint32_t tile = base->config.tile;
    if (flags & SIM_SLICE_FIRST) {
        SIM_TRY(sim_cuda_friction_begin(&b->fric, s, err));
    }
    const sim_gpu_fric fr = sim_cuda_friction_view(&b->fric, sim_cuda_body_order(b),
                                                   (flags & SIM_STEP_ADVANCE) ? b->dt : 0.0f);
    if (w == SIM_SWEEP_PAIR_NLIST) { /* the springs beside the entries (friction.h) */
        sim_gpu_fric_list springs;
        SIM_TRY(sim_cuda_friction_sweep_lists(&b->fric, &b->nlist, (flags & SIM_STEP_ADVANCE) != 0,
                                              &springs, s, err));
        if (!b->plan.lists_drift) { /* the forces alone: not cleared by a drift */
            SIM_CUDA_TRY(cudaMemsetAsync(bd->force, 0, (size_t)bd->n * sizeof *bd->force, s));
        }
        return sim_gpu_nlist_friction(bd, &b->ph, &b->cull, &b->nlist, &fr, &springs,
                                      gpu_flags(flags), base->tuning.count_contacts, s, err);
    }
    /* the tables are these sweeps' truth: the springs beside the lists go there first */
    SIM_TRY(sim_cuda_friction_sweep_tables(&b->fric, sim_cuda_fric_lists(b), sim_cuda_body_order(b),
                                           s, err));
    if (w == SIM_SWEEP_PAIR_PLAN && base->config.pair_map == SIM_PAIR_FULL) {
        return sim_cuda_pair_friction_full_range(bd, &b->ph, tile, begin, end, &fr, s, err);
    }
    if (flags & SIM_SLICE_FIRST) {
        SIM_CUDA_TRY(cudaMemsetAsync(bd->force, 0, (size_t)bd->n * sizeof *bd->force, s));
    }
    if (w == SIM_SWEEP_PAIR_LIST) {
        return sim_cuda_pair_friction_list(bd, &b->ph, &b->cull, gpu_flags(flags),
                                           base->tuning.count_contacts, &fr, s, err);
    }
    sim_map_share share;
    plan_share(b, &base->pair_plan, begin, end, &share);
    return sim_cuda_pair_friction(bd, &b->ph, &base->pair_plan, &share, tile, &fr, &b->streams,
                                  err);
}

/* A slice of a sweep. Contacts: the full sweep stores F (nothing to clear; a rank sweeps its
 * tiles of bodies); otherwise the first slice zeroes F and the kernels add. The culled sweeps
 * are one persistent launch over their list, whose length stays on the device. */
sim_status cuda_sweep(sim_backend *base, sim_sweep w, uint64_t begin, uint64_t end, unsigned flags,
                      sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    if (b->fric.on &&
        (w == SIM_SWEEP_PAIR_PLAN || w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_PAIR_NLIST)) {
        return friction_sweep(b, w, begin, end, flags, err);
    }
    const sim_gpu_bodies *bd = &b->bodies;
    cudaStream_t s = b->streams.main;
    const uint32_t tile = base->config.tile;
    sim_map_share share;
    if (w == SIM_SWEEP_PAIR_PLAN && base->config.pair_map == SIM_PAIR_FULL) {
        return base->rank.world <= 1
                   ? sim_cuda_pair_forces_full_range(bd, &b->ph, tile, begin, end, s, err)
                   : sim_cuda_pair_forces_full(bd, &b->ph, tile, base->rank.rank, base->rank.world,
                                               s, err);
    }
    if (w == SIM_SWEEP_PAIR_NLIST) {
        /* the drift cleared the forces (not so for the forces alone); swept from the cells,
         * every force is stored, unless each pair is taken once (added into cleared forces) */
        if (!b->plan.lists_drift && (!b->nlist.direct || b->nlist.pairs_once)) {
            SIM_CUDA_TRY(cudaMemsetAsync(bd->force, 0, (size_t)bd->n * sizeof *bd->force, s));
        }
        const bool finish = b->plan.sweep_kicks && (flags & SIM_STEP_ADVANCE);
        const sim_gpu_kick kick = kick_of(b, b->plan.step);
        return sim_gpu_nlist_forces(bd, &b->ph, &b->cull, &b->nlist, gpu_flags(flags),
                                    base->tuning.count_contacts, finish ? &kick : nullptr, s, err);
    }
    if ((flags & SIM_SLICE_FIRST) && (w == SIM_SWEEP_PAIR_PLAN || w == SIM_SWEEP_PAIR_LIST)) {
        SIM_CUDA_TRY(cudaMemsetAsync(bd->force, 0, (size_t)bd->n * sizeof *bd->force, s));
    }
    switch (w) {
    case SIM_SWEEP_PAIR_PLAN:
        plan_share(b, &base->pair_plan, begin, end, &share);
        return sim_cuda_pair_forces(bd, &b->ph, &base->pair_plan, &share, tile, &b->streams, err);
    case SIM_SWEEP_PAIR_LIST:
        return sim_cuda_pair_forces_list(bd, &b->ph, &b->cull, gpu_flags(flags),
                                         base->tuning.count_contacts, s, err);
    case SIM_SWEEP_TRIPLET_PLAN:
        plan_share(b, &base->triplet_plan, begin, end, &share);
        return sim_cuda_triplet_forces(bd, &b->ph, &base->triplet_plan, &share, &b->streams, err);
    case SIM_SWEEP_TRIPLET_NLIST: /* the ATM cut-off's lists (one rank: sim_cuda_atm_listed) */
        return sim_gpu_atm_list_step_forces(bd, &b->atm, &b->ph, gpu_flags(flags), s, err);
    default: /* several GPUs: each listed and sweeps its rows' triples (triplet_cull.h) */
        return sim_cuda_triplet_forces_culled(bd, &b->ph, &b->tcull, gpu_flags(flags),
                                              sim_cuda_tcull_share(b), s, err);
    }
}

/* Boxes of centres, neighbour pairs, rows, the tile-triple list; or, over the cut-off's neighbour
 * lists, their displacement check and (when due) their build (after the contacts: the bodies are
 * sorted and the contact phase does not move them). */
sim_status cuda_triplet_cull(sim_backend *base, unsigned flags, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    if (sim_cuda_atm_listed(b)) {
        return sim_cuda_atm_update(b, gpu_flags(flags), err);
    }
    return sim_cuda_tcull_build(b, err);
}

/* Several GPUs: every rank holds its share's forces; NCCL sums them on the stream (every rank gets
 * the same bits), before the body forces and the second half kick, which every rank then applies
 * to all bodies alike. The w components (unused, 0) travel too: 16 B per body. */
sim_status cuda_reduce(sim_backend *base, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    return sim_comm_allreduce_sum(base->rank.comm, b->bodies.force, 4u * (size_t)base->n,
                                  SIM_COMM_FLOAT, b->streams.main, err);
}

/* The forces alone: with friction the walls' springs are evaluated as they are (dt 0). */
sim_status cuda_body_forces(sim_backend *base, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    if (b->fric.on) {
        return sim_cuda_friction_body_forces(&b->bodies, &b->fric, sim_cuda_body_order(b), &b->ph,
                                             0.0f, b->streams.main, err);
    }
    return sim_cuda_body_forces(&b->bodies, &b->ph, b->streams.main, err);
}

/* Body force + second half kick, F_{n+1} stored as the last total force; a blow-up is flagged on
 * the device with its step and body, read at the frame's sync. Swept from the cells each pair
 * once, where another step of the frame follows, deferred into its drift (drift_bin_kernel): the
 * same bits, one pass over the bodies a step less (nothing reads the bodies between the two; the
 * frame's end, a save and a drift of another kind flush it, kick_flush). */
sim_status cuda_verlet_second(sim_backend *base, int step, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    const cuda_step_plan plan = b->plan;
    b->plan = cuda_step_plan{}; /* the step ends here */
    if (plan.sweep_kicks) { /* the cells' sweep finished the step (cuda_sweep) */
        return SIM_OK;
    }
    if (plan.kick_later) {
        b->deferred_kick = step;
        return SIM_OK;
    }
    if (b->fric.on) { /* the walls' springs advance, the spin's second half kick */
        return sim_cuda_friction_verlet_second(&b->bodies, &b->fric, sim_cuda_body_order(b), &b->ph,
                                               b->dt, b->d_flag, (uint32_t)step, b->streams.main,
                                               err);
    }
    return sim_cuda_verlet_second(&b->bodies, sim_cuda_body_order(b), &b->ph, b->dt, b->d_flag,
                                  (uint32_t)step, b->streams.main, err);
}

/* The frame's one host sync: the instability flag and the lists' counters come back with it. */
sim_status cuda_end_frame(sim_backend *base, const sim_step_shape *f, sim_step_counts *c,
                          sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    SIM_TRY(kick_flush(b, err)); /* a frame cut short: its last step's second half */
    SIM_CUDA_TRY(
        cudaMemcpyAsync(b->h_flag, b->d_flag, sizeof *b->d_flag, cudaMemcpyDeviceToHost, s));
    if (f->culled) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_counts, b->cull.counts, sizeof *b->h_counts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (f->tculled && !f->tlisted) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_tcounts, b->tcull.counts, sizeof *b->h_tcounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (f->tlisted) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_acounts, b->atm.counts, sizeof *b->h_acounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (f->listed) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_ncounts, b->nlist.counts, sizeof *b->h_ncounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (b->fric.on) {
        SIM_TRY(sim_cuda_friction_enqueue_read(&b->fric, s, err));
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    sim_cuda_counts(b, f, c);
    if (f->listed && b->nlist_ready) { /* lists or cells for the next frame (nlist.h) */
        (void)sim_nlist_cadence_next(&b->nlist_cadence, b->h_ncounts->frame.rebuilds,
                                     b->h_ncounts->frame.steps);
    }
    if (b->fric.on) { /* a body with more contacts than slots, as the CPU's check */
        SIM_TRY(sim_cuda_friction_check(&b->fric, err));
    }
    if (*b->h_flag == SIM_GPU_STABLE) {
        return SIM_OK;
    }
    uint32_t step, body;
    int cause;
    sim_gpu_unstable_decode(*b->h_flag, &step, &body, &cause);
    sim_vec4f p = {0.0f, 0.0f, 0.0f, 0.0f};
    SIM_TRY(sim_cuda_body_position(b, body, &p, err));
    const double lim = SIM_ESCAPE_FACTOR * base->params.box_half;
    if (cause == SIM_GPU_BAD_POSITION || cause == SIM_GPU_BAD_VELOCITY) {
        return sim_fail(err, SIM_UNSTABLE,
                        "body %u: %s is NaN or infinite after step %u of the frame (the time "
                        "step %g s is probably too large)",
                        body, cause == SIM_GPU_BAD_POSITION ? "position" : "velocity", step + 1,
                        (double)b->dt);
    }
    return sim_fail(err, SIM_UNSTABLE,
                    "body %u left the box after step %u of the frame: a coordinate is beyond "
                    "%g m (%g x box_half); at the end of the frame it is at (%g, %g, %g)",
                    body, step + 1, lim, SIM_ESCAPE_FACTOR, (double)p.x, (double)p.y, (double)p.z);
}

/* ---- save and restore ---- */

/* The device memory to save a step's start in, once (a failure is remembered: such steps then
 * run whole, and the flag is read between them); the body order too once culling has one. */
bool save_ready(cuda_backend *b) {
    const uint32_t n = b->base.n;
    const size_t v4 = (size_t)n * sizeof(sim_vec4f);
    sim_error ignored; /* not worth a word: the flag is then read between steps */
    if (b->save_ready == 0) {
        const bool ok = sim_cuda_alloc((void **)&b->save_pos, v4, "", n, &ignored) == SIM_OK &&
                        sim_cuda_alloc((void **)&b->save_vel, v4, "", n, &ignored) == SIM_OK &&
                        sim_cuda_alloc((void **)&b->save_force, v4, "", n, &ignored) == SIM_OK;
        b->save_ready = ok ? 1 : -1;
    }
    if (b->save_ready == 1 && b->cull_ready && b->save_perm == nullptr) {
        const size_t u4 = (size_t)n * sizeof(uint32_t);
        const bool ok = sim_cuda_alloc((void **)&b->save_perm, u4, "", n, &ignored) == SIM_OK &&
                        sim_cuda_alloc((void **)&b->save_counts, sizeof *b->save_counts, "", n,
                                       &ignored) == SIM_OK;
        b->save_ready = ok ? 1 : -1;
    }
    return b->save_ready == 1;
}

/* Enqueues copies of what a step changes: the bodies and, while culling keeps them sorted, their
 * order and the culling counters (a step may sort, the pointers then swap with the gather's
 * buffers: the copies go back into whichever buffer is current). 48 bytes per body D2D (less
 * than a step's own traffic per body), in the step's first interval. */
sim_status cuda_save(sim_backend *base, int *saved, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    SIM_TRY(kick_flush(b, err)); /* the saved state is a whole step's */
    *saved = save_ready(b);
    if (!*saved) {
        return SIM_OK;
    }
    cudaStream_t s = b->streams.main;
    const size_t v4 = (size_t)b->base.n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(b->save_pos, b->bodies.pos, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->save_vel, b->bodies.vel, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->save_force, b->bodies.force, v4, cudaMemcpyDeviceToDevice, s));
    /* spin and torques (the spin follows a re-sort: saved whenever it may be nonzero); the
     * tables need nothing (commit_history) */
    if (b->fric.on || b->fric.spin_live) {
        SIM_TRY(sim_cuda_friction_save(&b->fric, saved, s, err));
        if (!*saved) {
            return SIM_OK;
        }
        /* the springs beside the lists' entries are written in place: the table keeps the
         * step's start (restore makes them stale) */
        SIM_TRY(sim_cuda_fric_flush(b, err));
    }
    if (b->cull_ready) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->save_perm, b->cull.perm,
                                     (size_t)b->base.n * sizeof(uint32_t), cudaMemcpyDeviceToDevice,
                                     s));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->save_counts, b->cull.counts, sizeof *b->save_counts,
                                     cudaMemcpyDeviceToDevice, s));
    }
    return SIM_OK;
}

/* After a step cut short: waits for its slices in flight, and puts back what cuda_save saved. */
sim_status cuda_restore(sim_backend *base, sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    const size_t v4 = (size_t)b->base.n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    b->deferred_kick = -1; /* the saved state's steps are whole (cuda_save) */
    b->plan = cuda_step_plan{};
    SIM_CUDA_TRY(cudaMemcpyAsync(b->bodies.pos, b->save_pos, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->bodies.vel, b->save_vel, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->bodies.force, b->save_force, v4, cudaMemcpyDeviceToDevice, s));
    if (b->fric.on || b->fric.spin_live) {
        /* the spin and torques saved; the cut step's springs beside the entries not current */
        SIM_TRY(sim_cuda_friction_restore(&b->fric, s, err));
        SIM_TRY(sim_cuda_friction_list_invalidate(&b->fric, s, err));
    }
    if (b->cull_ready) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->cull.perm, b->save_perm,
                                     (size_t)b->base.n * sizeof(uint32_t), cudaMemcpyDeviceToDevice,
                                     s));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->cull.counts, b->save_counts, sizeof *b->save_counts,
                                     cudaMemcpyDeviceToDevice, s));
    }
    if (b->nlist_ready) { /* the tile list's count is the saved one, its contents maybe not */
        SIM_TRY(sim_cuda_nlist_stale(b, err));
    }
    if (b->atm_ready) { /* maybe built where the cut step drifted to */
        SIM_TRY(sim_cuda_atm_stale(b, err));
    }
    return SIM_OK;
}

/* ---- facts ---- */

uint64_t cuda_list_blocks(const sim_backend *base, sim_sweep w) {
    return SIM_STEP_ON_DEVICE;
}

double cuda_guess_rate(const sim_backend *base, sim_sweep w) {
    const cuda_backend *b = sim_cuda_of(base);
    const int pairs =
        w == SIM_SWEEP_PAIR_PLAN || w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_PAIR_NLIST;
    return (pairs ? kGuessPairChecksPerMsPerSm : kGuessTriplesPerMsPerSm) *
           (double)(b->sm_count > 0 ? b->sm_count : 1);
}

int cuda_culls_triplets(const sim_backend *base) {
    return sim_cuda_tculled(sim_cuda_of(base));
}

int cuda_lists_triplets(const sim_backend *base) {
    return sim_cuda_atm_listed(sim_cuda_of(base));
}

/* The step is done: its histories become the last step's (a pointer swap on the host). */
sim_status cuda_commit_history(sim_backend *base, sim_error *err) {
    sim_cuda_friction_commit(&sim_cuda_of(base)->fric);
    return SIM_OK;
}

} // namespace

/* In sim_step_ops' order (no designated initializers before C++20). */
const sim_step_ops sim_cuda_step_ops = {
    cuda_begin_frame,   cuda_mark,          cuda_wait_mark,   cuda_elapsed,     cuda_verlet_first,
    nullptr,            cuda_sort,          cuda_cull,        cuda_neighbours,  cuda_sweep,
    cuda_triplet_cull,  cuda_reduce,        cuda_body_forces, cuda_verlet_second, cuda_end_frame,
    sim_cuda_measure,   sim_cuda_grow_list, cuda_save,        cuda_restore,     cuda_list_blocks,
    cuda_guess_rate,    cuda_culls_triplets, cuda_commit_history, cuda_lists_triplets,
    sim_cuda_step_begin, sim_cuda_step_end,
};

void sim_cuda_events_free(cuda_backend *b) {
    for (int e = 0; e < b->event_count; ++e) {
        (void)cudaEventDestroy(b->events[e]);
    }
    free(b->events);
    b->events = nullptr;
    b->event_count = 0;
}

void sim_cuda_save_free(cuda_backend *b) {
    (void)cudaFree(b->save_pos);
    (void)cudaFree(b->save_vel);
    (void)cudaFree(b->save_force);
    (void)cudaFree(b->save_perm);
    (void)cudaFree(b->save_counts);
    b->save_pos = b->save_vel = b->save_force = nullptr;
    b->save_perm = nullptr;
    b->save_counts = nullptr;
    b->save_ready = 0;
}
