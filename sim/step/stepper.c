/* SPDX-License-Identifier: MIT
 * nbsim — the stepper (stepper.h): a frame's steps, phase by phase, through a backend's
 * primitives; the decisions every backend shares, taken here once:
 *  - sort: a culled step re-sorts when asked (culling turned on, a new state, new buffers), when
 *    sort_every steps ran since the last sort, or - alone - when a swept list (tile pairs, tile
 *    triples) grew by SIM_CULL_REGROW since the first step after that sort (the boxes spread as
 *    bodies move; checked at the frame's end, when the counts are read). Ranks of several hold
 *    different rows of the lists and must keep one body order: they sort on the clock alone;
 *  - lists: at a frame's end every list whose peak passed SIM_LIST_GROW_AT of its capacity grows
 *    to twice the peak; counts that were lower bounds are measured again and grown (settled);
 *  - neighbour lists (the contacts' in NEIGHBOURS, the ATM cut-off's in TRIPLET_CULL): rebuilt
 *    whatever the displacements after a sort, a new state or model (sim_step_request_rebuild),
 *    their growth and a rollback; otherwise the backend rebuilds them when a body moved more
 *    than half the skin (where the bodies are: on the device);
 *  - stopping: the flag is read before each step; a step whose sweeps are expected to take
 *    longer than one slice (SIM_STEP_SLICE_MS, from their measured rates, else the backend's
 *    cautious guess) is saved first and its sweeps run in slices of about that much work, the
 *    flag read before each; cut short, it is restored and the frame ends with the steps before;
 *    about one slice of short steps is kept in flight (the host waits for the step that far
 *    back).
 * Times come from marks at the end of each phase that runs (no mark, no time: an empty phase
 * costs nothing) and are read once, after the frame's sync. With config.phase_timing SAMPLED
 * (the default) on a backend whose marks cost time (CUDA) only the sampled steps (about one in
 * ten: sim_step_sampled), a sorting step and a long one mark every phase; the others mark their
 * end, and their time is spread over the phases in the sampled steps' proportions (phase_times). */
#include "step/stepper.h"
#include "step/backend_impl.h"
#include "physics/physics.h"
#include "nlist/nlist.h"
#include "nlist/atm_list.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const phase_names[SIM_PHASE_COUNT] = {
#define SIM_PHASE_NAME(id, name, field) name,
    SIM_PHASE_LIST(SIM_PHASE_NAME)
#undef SIM_PHASE_NAME
};

/* Where each phase's time goes in sim_frame_timing. */
static const size_t phase_field[SIM_PHASE_COUNT] = {
#define SIM_PHASE_FIELD(id, name, field) offsetof(sim_frame_timing, field),
    SIM_PHASE_LIST(SIM_PHASE_FIELD)
#undef SIM_PHASE_FIELD
};

const char *sim_phase_name(sim_phase phase) {
    return phase >= 0 && phase < SIM_PHASE_COUNT ? phase_names[phase] : "?";
}

const char *sim_list_name(sim_list list) {
    static const char *const names[SIM_LIST_COUNT] = {
        "the tile-pair list",           "the super-pair list",  "the cut-off's super-pair list",
        "the neighbour tile-pair list", "the tile-triple list", "the neighbour lists",
        "the cut-off's neighbour lists"};
    return list >= 0 && list < SIM_LIST_COUNT ? names[list] : "?";
}

void sim_stepper_init(sim_stepper *s, const sim_step_ops *ops) {
    memset(s, 0, sizeof *s);
    s->ops = ops;
    s->clock.sort_due = 1;
    s->rebuild_due = 1;
}

void sim_stepper_free(sim_stepper *s) {
    free(s->mark_phase);
    free(s->mark_sweep);
    free(s->mark_blocks);
    free(s->step_end);
    free(s->step_sorted);
    free(s->step_split);
    s->mark_phase = s->mark_sweep = s->step_sorted = s->step_split = NULL;
    s->mark_blocks = NULL;
    s->step_end = NULL;
    s->mark_cap = s->step_cap = s->marks = 0;
}

void sim_step_request_sort(sim_stepper *s) {
    s->clock.sort_due = 1;
}

void sim_step_request_rebuild(sim_stepper *s) {
    s->rebuild_due = 1;
}

/* ---- facts ---- */

/* The flag this backend reads: its config's alone, none as a rank of several (nbsim/config.h). */
static const volatile sig_atomic_t *stop_flag(const sim_backend *b) {
    return b->rank.world <= 1 ? b->config.stop : NULL;
}

static sim_step_shape shape_of(const sim_backend *b) {
    sim_step_shape f;
    f.culled = sim_backend_culling(b);
    f.listed = sim_backend_listing(b);
    f.tculled = b->stepper.ops->culls_triplets(b);
    f.tlisted =
        f.tculled && b->stepper.ops->lists_triplets != NULL && b->stepper.ops->lists_triplets(b);
    f.triplets = b->params.triplets != 0;
    f.ranks = b->rank.world > 1;
    f.friction = sim_params_have_friction(&b->params);
    f.wrapped = b->params.periodic != 0 && b->stepper.ops->wrap != NULL;
    return f;
}

/* Phases a step of this shape marks. */
static int phases_of(const sim_step_shape *f) {
    return 3 + f->wrapped + 2 * f->culled + f->listed + f->tculled + f->triplets + f->ranks;
}

static sim_sweep pair_sweep(const sim_step_shape *f) {
    return f->listed ? SIM_SWEEP_PAIR_NLIST : f->culled ? SIM_SWEEP_PAIR_LIST : SIM_SWEEP_PAIR_PLAN;
}

static sim_sweep triplet_sweep(const sim_step_shape *f) {
    return f->tlisted   ? SIM_SWEEP_TRIPLET_NLIST
           : f->tculled ? SIM_SWEEP_TRIPLET_LIST
                        : SIM_SWEEP_TRIPLET_PLAN;
}

static int sweep_is_pairs(sim_sweep w) {
    return w == SIM_SWEEP_PAIR_PLAN || w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_PAIR_NLIST;
}

static int sweep_is_list(sim_sweep w) {
    return w == SIM_SWEEP_PAIR_LIST || w == SIM_SWEEP_TRIPLET_LIST || w == SIM_SWEEP_PAIR_NLIST ||
           w == SIM_SWEEP_TRIPLET_NLIST;
}

/* The blocks a sweep covers, as the host knows them now (a list: the backend says). */
static uint64_t sweep_blocks(const sim_backend *b, sim_sweep w) {
    if (w == SIM_SWEEP_PAIR_PLAN) {
        return b->config.pair_map == SIM_PAIR_FULL ? (uint64_t)sim_ceil_div(b->n, b->config.tile)
                                                   : b->pair_plan.blocks;
    }
    if (w == SIM_SWEEP_TRIPLET_PLAN) {
        return b->triplet_plan.blocks;
    }
    return b->stepper.ops->list_blocks(b, w);
}

/* Interactions per block: a tile pair's checks (the full sweep: a tile against all N; a
 * neighbour list: a body's entries, guessed), or a tile triple's triples. */
static double work_per_block(const sim_backend *b, sim_sweep w) {
    const double tile = b->config.tile, t3 = SIM_TRIPLET_TILE;
    if (w == SIM_SWEEP_PAIR_PLAN && b->config.pair_map == SIM_PAIR_FULL) {
        return tile * (double)b->n;
    }
    if (w == SIM_SWEEP_PAIR_NLIST) {
        return SIM_NLIST_GUESS_ENTRIES;
    }
    if (w == SIM_SWEEP_TRIPLET_NLIST) {
        return SIM_ATM_LIST_GUESS_TRIPLES;
    }
    return sweep_is_pairs(w) ? tile * tile : t3 * t3 * t3;
}

/* What a rate was measured on: the map, the tile and (a plan's) blocks. */
static sim_sweep_rate rate_key(const sim_backend *b, sim_sweep w) {
    sim_sweep_rate k;
    k.map = sweep_is_pairs(w) ? b->config.pair_map : (int)b->config.triplet_map;
    k.tile = sweep_is_pairs(w) ? b->config.tile : SIM_TRIPLET_TILE;
    k.blocks = sweep_is_list(w) ? 0u : sweep_blocks(b, w);
    k.blocks_per_ms = 0.0;
    return k;
}

/* The sweep's rate [blocks / ms]: as measured on this plan, else the backend's guess (0: none). */
static double blocks_per_ms(const sim_backend *b, sim_sweep w) {
    const sim_sweep_rate *r = &b->stepper.rate[w];
    const sim_sweep_rate k = rate_key(b, w);
    if (r->blocks_per_ms > 0.0 && r->map == k.map && r->tile == k.tile && r->blocks == k.blocks) {
        return r->blocks_per_ms;
    }
    const double guess = b->stepper.ops->guess_rate(b, w) / work_per_block(b, w);
    return guess > 0.0 ? guess : 0.0;
}

static void set_rate(sim_backend *b, sim_sweep w, double per_ms) {
    sim_sweep_rate k = rate_key(b, w);
    k.blocks_per_ms = per_ms;
    b->stepper.rate[w] = k;
}

/* A sweep may be sliced: its blocks are counted on the host, and the backend is alone (ranks
 * never read the flag). */
static int sliceable(const sim_backend *b, sim_sweep w) {
    return b->rank.world <= 1 && sweep_blocks(b, w) != SIM_STEP_ON_DEVICE;
}

/* Whether forces of this shape are long: their sliceable sweeps expected to take more than one
 * slice (a list's length: the last one built). */
static int forces_are_long(const sim_backend *b, const sim_step_shape *f) {
    sim_sweep w[2];
    int count = 0;
    w[count++] = pair_sweep(f);
    if (f->triplets) {
        w[count++] = triplet_sweep(f);
    }
    double ms = 0.0;
    for (int k = 0; k < count; ++k) {
        if (sliceable(b, w[k])) {
            const double per_ms = blocks_per_ms(b, w[k]);
            ms += per_ms > 0.0 ? (double)sweep_blocks(b, w[k]) / per_ms : INFINITY;
        }
    }
    return ms > SIM_STEP_SLICE_MS;
}

static int sort_due(const sim_backend *b) {
    const int every = b->config.sort_every > 0 ? b->config.sort_every : SIM_CULL_SORT_EVERY;
    return b->stepper.clock.sort_due || b->stepper.clock.steps_since_sort >= every;
}

/* Steps kept in flight while the flag is read: about one slice of them by the last frame's time
 * per step (one before any was timed). After enqueuing step k the host waits for the end of step
 * k - window, so the device always has work queued and a raised flag is seen within about a
 * slice. A frame shorter than that never waits. */
static int step_window(const sim_stepper *s) {
    if (s->step_ms_est <= 0.0) {
        return 1;
    }
    const double w = SIM_STEP_SLICE_MS / s->step_ms_est;
    return w < 1.0 ? 1 : w > 1.0e6 ? 1000000 : (int)w;
}

/* ---- marks ---- */

static sim_status reserve(sim_stepper *s, int marks, int steps, sim_error *err) {
    if (marks > s->mark_cap) {
        unsigned char *ph = realloc(s->mark_phase, (size_t)marks);
        if (ph != NULL) {
            s->mark_phase = ph;
        }
        unsigned char *sw = realloc(s->mark_sweep, (size_t)marks);
        if (sw != NULL) {
            s->mark_sweep = sw;
        }
        uint64_t *bl = realloc(s->mark_blocks, (size_t)marks * sizeof *bl);
        if (bl != NULL) {
            s->mark_blocks = bl;
        }
        if (ph == NULL || sw == NULL || bl == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d timing marks", marks);
        }
        s->mark_cap = marks;
    }
    if (steps > s->step_cap) {
        int *end = realloc(s->step_end, (size_t)steps * sizeof *end);
        if (end != NULL) {
            s->step_end = end;
        }
        unsigned char *sorted = realloc(s->step_sorted, (size_t)steps);
        if (sorted != NULL) {
            s->step_sorted = sorted;
        }
        unsigned char *split = realloc(s->step_split, (size_t)steps);
        if (split != NULL) {
            s->step_split = split;
        }
        if (end == NULL || sorted == NULL || split == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d step records", steps);
        }
        s->step_cap = steps;
    }
    return SIM_OK;
}

/* The end of a phase: the next mark of the frame; `sweep` (or -1) swept `blocks` in it. None
 * inside a step that is not split (only its end is marked, run_step's last mark). Phase
 * SIM_PHASE_COUNT is the frame's first mark, or the end of a step not split (account starts
 * after the first, so it tells them apart). */
static sim_status mark(sim_backend *b, sim_phase phase, int sweep, uint64_t blocks,
                       sim_error *err) {
    sim_stepper *s = &b->stepper;
    if (!s->split && phase != SIM_PHASE_COUNT) {
        return SIM_OK;
    }
    SIM_ASSERT(s->marks < s->mark_cap);
    const int id = s->marks++;
    s->mark_phase[id] = (unsigned char)phase;
    s->mark_sweep[id] = (unsigned char)(sweep + 1);
    s->mark_blocks[id] = blocks;
    return s->ops->mark(b, id, err);
}

/* Marks for `steps` steps of this shape, the backend's frame begun, the frame's first mark. */
static sim_status begin(sim_backend *b, const sim_step_shape *f, int steps, sim_error *err) {
    sim_stepper *s = &b->stepper;
    const int marks = SIM_MARK_FRAME + 1 + steps * phases_of(f);
    SIM_TRY(reserve(s, marks, steps, err));
    SIM_TRY(s->ops->begin_frame(b, f, marks, err));
    s->marks = SIM_MARK_FRAME;
    s->split = 1; /* a force computation's phases are all marked; a frame decides per step */
    return mark(b, SIM_PHASE_COUNT, -1, 0, err);
}

/* Whether step k of the frame marks each phase (config.phase_timing, nbsim/config.h): every step
 * (EVERY, or a backend whose marks cost nothing: the CPU's clock), or a sampled step, a step that
 * sorts and a long one (watched: its sweeps are sliced, their rates measured).
 * Sampled: about one step in SIM_STEP_SAMPLE_EVERY, chosen by a hash of its count since set-up, so
 * that no period of rebuilds or re-sorts aliases with the choice; never a frame's first step (its
 * first interval also holds the frame's start, the host's launch after the last frame's sync,
 * which would make the drift look twice its time: bench/results/nvidia-h100/phase_marks.md), nor
 * the last of a frame of three or more (it runs the second half kick that a next step's drift
 * would run, in a pass of its own); a frame of one or two steps samples its last, and while no
 * step was sampled yet the one before the last is (sim_step_sampled, stepper.h). Called after the
 * step's sort clock advanced, as force_phases reads it. */
int sim_step_sampled(uint64_t count, int k, int steps, int pool_empty) {
    if (steps <= 2) {
        return k == steps - 1;
    }
    if (k == 0 || k == steps - 1) {
        return 0;
    }
    uint64_t h = count * 0x9e3779b97f4a7c15ull; /* splitmix64's finaliser */
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h % SIM_STEP_SAMPLE_EVERY == 0 || (k == steps - 2 && pool_empty);
}

static int split_step(const sim_backend *b, const sim_step_shape *f, int k, int watched) {
    const sim_stepper *s = &b->stepper;
    return b->config.phase_timing == SIM_PHASE_TIMING_EVERY || s->ops->marks_free || watched ||
           (f->culled && sort_due(b)) ||
           sim_step_sampled(s->steps_run, k, b->params.steps_per_frame,
                            !(s->phase_pool_sum > 0.0));
}

/* The intervals between marks (from, to] added to phase_ms by phase (index SIM_PHASE_COUNT: the
 * whole of a step that was not split), and the whole sweeps' blocks and times into the rate
 * sums. */
static sim_status account(sim_backend *b, int from, int to, double *phase_ms, double *blocks,
                          double *ms_sum, sim_error *err) {
    const sim_stepper *s = &b->stepper;
    for (int m = from + 1; m <= to; ++m) {
        double ms = 0.0;
        SIM_TRY(s->ops->elapsed(b, m - 1, m, &ms, err));
        phase_ms[s->mark_phase[m]] += ms;
        const int w = s->mark_sweep[m] - 1;
        if (w >= 0 && s->mark_blocks[m] != SIM_STEP_ON_DEVICE) {
            blocks[w] += (double)s->mark_blocks[m];
            ms_sum[w] += ms;
        }
    }
    return SIM_OK;
}

/* The rates of the sweeps just timed (alone: a rank sweeps its share, not the plan). */
static void update_rates(sim_backend *b, const double *blocks, const double *ms) {
    for (int w = 0; w < SIM_SWEEP_COUNT && b->rank.world <= 1; ++w) {
        if (ms[w] > 0.0 && blocks[w] > 0.0) {
            set_rate(b, (sim_sweep)w, blocks[w] / ms[w]);
        }
    }
}

/* ---- phases ---- */

/* A sweep: whole (one call), or - watched, and its blocks known on the host - in slices of
 * about SIM_STEP_SLICE_MS at the rate measured so far, the flag read before each. Slices
 * j - 1 and j stay queued while the host waits for j - 2 (a no-op on a synchronous backend)
 * and sizes the next from the blocks done by then. SIM_INTERRUPTED when the flag rose (slices
 * may still be running). */
static sim_status run_sweep(sim_backend *b, sim_sweep w, unsigned flags,
                            const volatile sig_atomic_t *watch, sim_phase phase, sim_error *err) {
    const sim_step_ops *o = b->stepper.ops;
    const uint64_t blocks = sweep_blocks(b, w);
    if (watch == NULL || !sliceable(b, w)) {
        SIM_TRY(o->sweep(b, w, 0, blocks, flags | SIM_SLICE_FIRST | SIM_SLICE_LAST, err));
        return mark(b, phase, (int)w, blocks, err);
    }
    double per_ms = blocks_per_ms(b, w);
    uint64_t ends[3] = {0, 0, 0}; /* blocks done at the end of each slice in the ring */
    SIM_TRY(o->mark(b, SIM_MARK_SWEEP, err));
    uint64_t begin = 0;
    for (int j = 0;; ++j) {
        if (sim_stop_raised(watch)) {
            return sim_fail(err, SIM_INTERRUPTED, "stopped in the middle of a step");
        }
        const double want = per_ms * SIM_STEP_SLICE_MS, left = (double)(blocks - begin);
        const uint64_t end = want >= left ? blocks : begin + (want < 1.0 ? 1u : (uint64_t)want);
        const unsigned slice =
            (j == 0 ? SIM_SLICE_FIRST : 0u) | (end == blocks ? SIM_SLICE_LAST : 0u);
        SIM_TRY(o->sweep(b, w, begin, end, flags | slice, err));
        SIM_TRY(o->mark(b, SIM_MARK_SLICE + j % 3, err));
        ends[j % 3] = end;
        begin = end;
        if (j >= SIM_STEP_SLICES_IN_FLIGHT) {
            const int q = (j - SIM_STEP_SLICES_IN_FLIGHT) % 3;
            double ms = 0.0;
            SIM_TRY(o->wait_mark(b, SIM_MARK_SLICE + q, err));
            SIM_TRY(o->elapsed(b, SIM_MARK_SWEEP, SIM_MARK_SLICE + q, &ms, err));
            if (ms > 0.0) {
                per_ms = (double)ends[q] / ms;
                set_rate(b, w, per_ms);
            }
        }
        if (begin >= blocks) {
            break;
        }
    }
    return mark(b, phase, (int)w, blocks, err);
}

/* The force phases of a step (SORT .. REDUCE); *sorted: whether it sorted. advance: a step's
 * (friction's histories advance), not the forces alone. */
static sim_status force_phases(sim_backend *b, const sim_step_shape *f, int advance,
                               const volatile sig_atomic_t *watch, int *sorted, sim_error *err) {
    sim_stepper *s = &b->stepper;
    const sim_step_ops *o = s->ops;
    *sorted = 0;
    if (f->culled && sort_due(b)) {
        SIM_TRY(o->sort(b, err));
        s->clock.sort_due = 0;
        s->clock.steps_since_sort = 0;
        *sorted = 1;
        SIM_TRY(mark(b, SIM_PHASE_SORT, -1, 0, err));
    }
    /* Neighbour lists (both kinds): rebuilt whatever they say after a sort (their indices are
     * the old order's) and when asked (a new state or model, their growth, a rollback). */
    const unsigned rebuild =
        (f->listed || f->tlisted) && (*sorted || s->rebuild_due) ? SIM_STEP_REBUILD : 0u;
    const unsigned flags = SIM_STEP_RECORD | (*sorted ? SIM_STEP_SORTED : 0u) | rebuild;
    if (f->culled) {
        SIM_TRY(o->cull(b, flags, err));
        SIM_TRY(mark(b, SIM_PHASE_CULL, -1, 0, err));
    }
    if (f->listed) {
        SIM_TRY(o->neighbours(b, flags, err));
        s->rebuild_due = 0;
        SIM_TRY(mark(b, SIM_PHASE_NEIGHBOURS, -1, 0, err));
    }
    SIM_TRY(run_sweep(b, pair_sweep(f), flags | (advance ? SIM_STEP_ADVANCE : 0u), watch,
                      SIM_PHASE_CONTACTS, err));
    if (f->tculled) {
        SIM_TRY(o->triplet_cull(b, flags, err));
        if (f->tlisted) {
            s->rebuild_due = 0;
        }
        SIM_TRY(mark(b, SIM_PHASE_TRIPLET_CULL, -1, 0, err));
    }
    if (f->triplets) {
        if (!f->tculled && !b->triplet_planned) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "no triplet map plan for N = %u", b->n);
        }
        SIM_TRY(run_sweep(b, triplet_sweep(f), flags, watch, SIM_PHASE_TRIPLETS, err));
    }
    if (f->ranks) {
        SIM_TRY(o->reduce(b, err));
        SIM_TRY(mark(b, SIM_PHASE_REDUCE, -1, 0, err));
    }
    return SIM_OK;
}

/* The end of step k, whose end was not marked (a step not split, before a split one or the
 * frame's end): marked now, so that its time closes before what follows. */
static sim_status close_step(sim_backend *b, int k, sim_error *err) {
    sim_stepper *s = &b->stepper;
    SIM_TRY(mark(b, SIM_PHASE_COUNT, -1, 0, err));
    s->step_end[k] = s->marks - 1;
    return SIM_OK;
}

/* Step k of the frame; watch: the flag its sweeps read (a long step), or NULL; end_mark: a step
 * that is not split marks its end (else the next mark closes it: its time is counted with the
 * next marked step's, as a step not split is, phase_times). *open: the last step's end is not
 * marked yet; a split step closes it first (its first phase's time is its own). SIM_UNSTABLE
 * from the second half kick still completes the step. */
static sim_status run_step(sim_backend *b, int k, const sim_step_shape *f,
                           const volatile sig_atomic_t *watch, int end_mark, int *open,
                           sim_error *err) {
    sim_stepper *s = &b->stepper;
    const sim_step_ops *o = s->ops;
    s->clock.steps_since_sort++;
    s->steps_run++;
    s->split = split_step(b, f, k, watch != NULL);
    s->step_split[k] = (unsigned char)s->split;
    if (s->split && *open) {
        SIM_TRY(close_step(b, k - 1, err));
        *open = 0;
    }
    SIM_TRY(o->verlet_first(b, err));
    SIM_TRY(mark(b, SIM_PHASE_FIRST, -1, 0, err));
    if (f->wrapped) {
        SIM_TRY(o->wrap(b, err));
        SIM_TRY(mark(b, SIM_PHASE_WRAP, -1, 0, err));
    }
    int sorted = 0;
    SIM_TRY(force_phases(b, f, 1, watch, &sorted, err));
    s->step_sorted[k] = (unsigned char)sorted;
    const sim_status st = o->verlet_second(b, k, err);
    if (st != SIM_OK && st != SIM_UNSTABLE) {
        return st;
    }
    if (f->friction && o->commit_history != NULL) { /* the step is done: its histories count */
        SIM_TRY(o->commit_history(b, err));
    }
    *open = !s->split && !end_mark;
    if (!*open) {
        SIM_TRY(mark(b, s->split ? SIM_PHASE_SECOND : SIM_PHASE_COUNT, -1, 0, err));
    }
    s->step_end[k] = s->marks - 1; /* where it is not marked, the last mark, until one closes it */
    return st;
}

/* The frame's phase times into t: the split steps' as marked, plus the whole time of the steps
 * that were not split (total[SIM_PHASE_COUNT]) spread over the phases in the proportions of the
 * sampled steps (s->phase_pool: the split steps that did not sort, a sort not being every step's,
 * older ones decayed), else of this frame's split steps without their sorts, else into FIRST. */
static void phase_times(const sim_stepper *s, const double *total, sim_frame_timing *t) {
    double w[SIM_PHASE_COUNT], sum = 0.0;
    for (int p = 0; p < SIM_PHASE_COUNT; ++p) {
        sum += w[p] = s->phase_pool[p];
    }
    if (!(sum > 0.0)) {
        sum = 0.0;
        for (int p = 0; p < SIM_PHASE_COUNT; ++p) {
            sum += w[p] = p == SIM_PHASE_SORT ? 0.0 : total[p];
        }
    }
    const double spread = total[SIM_PHASE_COUNT];
    for (int p = 0; p < SIM_PHASE_COUNT; ++p) {
        const double share = sum > 0.0 ? w[p] / sum : p == SIM_PHASE_FIRST;
        *(double *)(void *)((char *)t + phase_field[p]) += total[p] + spread * share;
    }
}

/* A sampled step's phase times into the pool the others are spread by: each older sample's
 * weight decays by SIM_STEP_SAMPLE_DECAY. */
static void pool_sample(sim_stepper *s, const double *phase_ms) {
    s->phase_pool_sum = 0.0;
    for (int p = 0; p < SIM_PHASE_COUNT; ++p) {
        s->phase_pool[p] = s->phase_pool[p] * SIM_STEP_SAMPLE_DECAY + phase_ms[p];
        s->phase_pool_sum += s->phase_pool[p];
    }
}

/* ---- the frame's end: counts, decisions ---- */

/* Lists whose need (the frame's peak, or a measured count) passed SIM_LIST_GROW_AT of their
 * capacity grow to twice it. No memory: the old size stays, the list is capped. */
static sim_status grow_lists(sim_backend *b, const sim_step_counts *c, int measured,
                             sim_error *err) {
    sim_stepper *s = &b->stepper;
    if (s->ops->grow == NULL) {
        return SIM_OK;
    }
    for (int l = 0; l < SIM_LIST_COUNT; ++l) {
        const sim_list_count *x = &c->list[l];
        const uint64_t need = measured ? x->count : x->peak;
        if (!x->active || (double)need <= SIM_LIST_GROW_AT * (double)x->cap || x->cap >= x->all) {
            continue;
        }
        uint64_t want = 2u * need;
        want = want < x->all ? want : x->all;
        want = want < SIM_LIST_MAX ? want : SIM_LIST_MAX;
        int grown = 0;
        SIM_TRY(s->ops->grow(b, (sim_list)l, want, &grown, err));
        s->capped[l] |= !grown;
        /* A reallocated list holds nothing: the neighbour lists, and the tile pairs their
         * fallback sweeps until the next rebuild, are rebuilt by the next step. */
        if (grown && (l == SIM_LIST_NEIGHBOURS || l == SIM_LIST_TILE_PAIRS ||
                      l == SIM_LIST_ATM_NEIGHBOURS)) {
            s->rebuild_due = 1;
        }
    }
    return SIM_OK;
}

/* The decisions a frame's counts lead to: a re-sort when a swept list regrew (alone), lists
 * grown, and counts that were lower bounds measured again until the lists hold them. */
static sim_status after_counts(sim_backend *b, const sim_step_shape *f, const sim_step_counts *c,
                               sim_error *err) {
    sim_stepper *s = &b->stepper;
    static const sim_list swept[2] = {SIM_LIST_TILE_PAIRS, SIM_LIST_TCULL_TRIPLES};
    for (int k = 0; k < 2 && b->rank.world <= 1; ++k) {
        const sim_list_count *x = &c->list[swept[k]];
        if (x->active && (double)x->count > SIM_CULL_REGROW * (double)x->sorted + 16.0) {
            s->clock.sort_due = 1;
        }
    }
    SIM_TRY(grow_lists(b, c, 0, err));
    if (!c->inexact || s->ops->measure == NULL) {
        return SIM_OK;
    }
    for (int round = 0; round < SIM_LIST_SETTLE_ROUNDS; ++round) {
        sim_step_counts m;
        SIM_TRY(s->ops->measure(b, f, &m, err));
        int short_lists = 0;
        for (int l = 0; l < SIM_LIST_COUNT; ++l) {
            short_lists |= m.list[l].active && m.list[l].count > m.list[l].cap;
        }
        if (!short_lists) {
            break;
        }
        SIM_TRY(grow_lists(b, &m, 1, err));
    }
    return SIM_OK; /* still short (memory): the fallback sweeps cover it, exactly */
}

/* The lists' part of a frame's report, from its counts (the lists' state after its growth). */
static void report(const sim_backend *b, const sim_step_shape *f, const sim_step_counts *c,
                   sim_frame_timing *t) {
    const sim_stepper *s = &b->stepper;
    if (f->culled) {
        t->culled = 1;
        t->cull_levels = b->cull_levels;
        t->tile_pairs = c->list[SIM_LIST_TILE_PAIRS].count;
        t->tile_pairs_total = sim_t2_u64(b->tiles);
        t->super_pairs = b->cull_levels == 2 ? c->list[SIM_LIST_SUPER_PAIRS].count : 0u;
        t->cull_fallback_steps = c->pair_fallback_steps;
        t->cull_capped = s->capped[SIM_LIST_TILE_PAIRS] || s->capped[SIM_LIST_SUPER_PAIRS];
    }
    if (f->tculled) {
        t->triplet_culled = 1;
        if (!f->tlisted) { /* over its lists no tile triple is built: their counts stay 0 */
            t->tile_triples = c->list[SIM_LIST_TCULL_TRIPLES].count;
            t->tile_triples_total = sim_t3_u64(b->ttiles);
            t->triplet_tile_pairs = c->list[SIM_LIST_TCULL_PAIRS].count;
        }
        t->triplet_fallback_steps = c->triplet_fallback_steps;
        t->triplet_cull_capped =
            s->capped[SIM_LIST_TCULL_SUPERS] || s->capped[SIM_LIST_TCULL_PAIRS] ||
            s->capped[SIM_LIST_TCULL_TRIPLES] || s->capped[SIM_LIST_ATM_NEIGHBOURS];
    }
    if (f->tlisted) {
        const sim_list_count *x = &c->list[SIM_LIST_ATM_NEIGHBOURS];
        t->atm_lists = 1;
        t->skin = b->nlist_skin;
        t->atm_list_rebuilds = c->atm_rebuilds;
        t->atm_list_entries = c->atm_entries;
        t->atm_list_bytes = c->atm_bytes;
        t->atm_list_cap = (uint32_t)x->cap;
        t->atm_list_peak = (uint32_t)x->peak;
    }
    if (f->listed) {
        const sim_list_count *x = &c->list[SIM_LIST_NEIGHBOURS];
        t->nlist = 1;
        t->skin = b->nlist_skin;
        t->nlist_rebuilds = c->nlist_rebuilds;
        t->nlist_fallback_steps = c->nlist_fallback_steps;
        t->nlist_bytes = c->nlist_bytes;
        t->nlist_cap = x->cap;
        t->nlist_peak = x->peak;
        t->nlist_capped = s->capped[SIM_LIST_NEIGHBOURS];
        t->nlist_cells = b->nlist_cells;
        t->nlist_direct = b->nlist_direct;
    }
    /* The phases whose one row of SIM_PHASE_LIST holds two kinds of work, named by the kind */
    if (t->nlist_direct) {
        t->cells_ms += t->nlist_ms;
        t->nlist_ms = 0.0;
    }
    if (t->atm_lists) {
        t->atm_list_ms += t->triplet_cull_ms;
        t->triplet_cull_ms = 0.0;
    }
    t->integrate_ms = t->drift_ms + t->kick_ms;
    t->contact_ms = t->sort_ms + t->cull_ms + t->nlist_ms + t->cells_ms + t->pair_ms;
    sim_backend_count_blocks(b, t, t->tile_pairs);
    /* Per step: culled, what the sweeps counted (the frame's mean); unculled, the plan's tile
     * pairs (or the full sweep's N^2 ordered pairs), touching pairs not counted (the brute-force
     * sweep stays as it is). */
    const uint64_t steps = t->steps > 0 ? (uint64_t)t->steps : 1u;
    const uint64_t tile = b->config.tile;
    if (f->culled) {
        t->candidate_tests = c->candidates / steps;
        t->contacts = c->contacts / steps;
    } else {
        t->candidate_tests = b->config.pair_map == SIM_PAIR_FULL
                                 ? (uint64_t)b->n * b->n
                                 : (t->pair_blocks - t->pair_blocks_wasted) * tile * tile;
        t->contacts = 0;
    }
    t->ranks = b->rank.world;
}

/* ---- the entry points ---- */

sim_status sim_step_frame(sim_backend *b, sim_frame_timing *t, sim_error *err) {
    sim_stepper *s = &b->stepper;
    const sim_step_ops *o = s->ops;
    memset(t, 0, sizeof *t);
    const int steps = b->params.steps_per_frame;
    const sim_step_shape f = shape_of(b);
    if (memcmp(&f, &s->pool_shape, sizeof f) != 0) { /* other phases run: other proportions */
        memset(s->phase_pool, 0, sizeof s->phase_pool);
        s->phase_pool_sum = 0.0;
        s->pool_shape = f;
    }
    SIM_TRY(begin(b, &f, steps, err));
    const volatile sig_atomic_t *stop = stop_flag(b);
    const int window = step_window(s);
    /* Steps that are not split mark their ends only where something reads them: the frame's last,
     * and with a stop flag every window / 2 steps (the host waits for the mark at or before the
     * step `window` back: at most 1.5 windows in flight). An event costs the GPU a few
     * microseconds between two short steps' kernels: marking every end made the lattice of 65,536
     * swept from the cells a few per cent slower a step (in one run,
     * bench/results/nvidia-h100/cells_pruned.md). */
    const int mark_every = window / 2 > 1 ? window / 2 : 1;
    int open = 0; /* the last step run did not mark its end */
    sim_status st = SIM_OK;
    int done = 0;
    for (int k = 0; k < steps; ++k) {
        if (sim_stop_raised(stop)) {
            st = SIM_INTERRUPTED;
            break;
        }
        int cut = 0; /* a long step, saved: its sweeps read the flag */
        if (stop != NULL && forces_are_long(b, &f)) {
            SIM_TRY(o->save(b, &cut, err));
        }
        if (cut) {
            s->saved_clock = s->clock;
        }
        int unit = 0; /* a short step as one unit of work (CUDA: one graph) */
        if (!cut && o->step_begin != NULL) {
            SIM_TRY(o->step_begin(b, &f, &unit, err));
        }
        const int end_mark = k == steps - 1 || (stop != NULL && (k + 1) % mark_every == 0);
        st = run_step(b, k, &f, cut ? stop : NULL, end_mark, &open, err);
        if (unit) {
            const int keep = st == SIM_OK || st == SIM_UNSTABLE;
            sim_error dropped; /* a failed step's error is the step's own */
            const sim_status launched = o->step_end(b, keep, keep ? err : &dropped);
            if (keep && launched != SIM_OK) {
                return launched;
            }
            t->graph_steps += keep;
        }
        if (st == SIM_INTERRUPTED) {
            SIM_ASSERT(cut);
            SIM_TRY(o->restore(b, err));
            s->clock = s->saved_clock;
            s->rebuild_due = 1; /* the lists may be the cut step's, built where it drifted to */
            break;
        }
        if (st == SIM_UNSTABLE) {
            done = k + 1;
            break;
        }
        SIM_TRY(st);
        done = k + 1;
        if (stop != NULL && k >= window) { /* the end of step k - window */
            SIM_TRY(o->wait_mark(b, s->step_end[k - window], err));
        }
    }

    if (open && done > 0) { /* stopped, or unstable, after steps whose end was not marked */
        SIM_TRY(close_step(b, done - 1, err));
    }
    sim_step_counts c;
    memset(&c, 0, sizeof c);
    const sim_status end = o->end_frame(b, &f, &c, err); /* the frame's one sync */
    if (end != SIM_OK && end != SIM_UNSTABLE) {
        return end;
    }
    double blocks[SIM_SWEEP_COUNT] = {0}, ms[SIM_SWEEP_COUNT] = {0};
    double total[SIM_PHASE_COUNT + 1] = {0};
    int prev = SIM_MARK_FRAME;
    for (int k = 0; k < done; ++k) {
        double step_ms = 0.0, phase_ms[SIM_PHASE_COUNT + 1] = {0};
        SIM_TRY(account(b, prev, s->step_end[k], phase_ms, blocks, ms, err));
        SIM_TRY(o->elapsed(b, prev, s->step_end[k], &step_ms, err));
        for (int p = 0; p <= SIM_PHASE_COUNT; ++p) {
            total[p] += phase_ms[p];
        }
        if (s->step_split[k] && !s->step_sorted[k]) {
            pool_sample(s, phase_ms);
        }
        t->step_ms += step_ms;
        t->sorts += s->step_sorted[k];
        t->phase_steps += s->step_split[k];
        prev = s->step_end[k];
    }
    phase_times(s, total, t);
    update_rates(b, blocks, ms);
    t->steps = done;
    if (done > 0) {
        s->step_ms_est = t->step_ms / done;
    }
    SIM_TRY(after_counts(b, &f, &c, err));
    report(b, &f, &c, t);
    if (st == SIM_UNSTABLE || end == SIM_UNSTABLE) {
        return SIM_UNSTABLE; /* err holds the message */
    }
    if (st == SIM_INTERRUPTED) {
        return sim_fail(err, SIM_INTERRUPTED, "stopped after %d of the frame's %d steps", done,
                        steps);
    }
    return SIM_OK;
}

double sim_step_estimate_ms(const sim_backend *b, double rebuild_every) {
    if (b->stepper.ops == NULL) { /* a composite (several ranks): its members are stepped */
        return 0.0;
    }
    const double *m = b->stepper.forces_ms;
    const sim_step_shape f = shape_of(b);
    const double every = rebuild_every > 1.0 ? rebuild_every : 1.0;
    const int sort_every = b->config.sort_every > 0 ? b->config.sort_every : SIM_CULL_SORT_EVERY;
    const double builds = m[SIM_PHASE_CULL] + m[SIM_PHASE_NEIGHBOURS];
    return m[SIM_PHASE_CONTACTS] + m[SIM_PHASE_TRIPLETS] + m[SIM_PHASE_REDUCE] +
           2.0 * m[SIM_PHASE_SECOND] + m[SIM_PHASE_SORT] / sort_every +
           (f.listed && !b->nlist_direct ? builds / every : builds) +
           (f.tlisted ? m[SIM_PHASE_TRIPLET_CULL] / every : m[SIM_PHASE_TRIPLET_CULL]);
}

sim_status sim_step_forces(sim_backend *b, int watched, sim_error *err) {
    sim_stepper *s = &b->stepper;
    const sim_step_ops *o = s->ops;
    const sim_step_shape f = shape_of(b);
    const volatile sig_atomic_t *watch = watched ? stop_flag(b) : NULL;
    SIM_TRY(begin(b, &f, 1, err));
    if (sim_stop_raised(watch)) {
        return sim_fail(err, SIM_INTERRUPTED, "stopped before the forces");
    }
    int sorted = 0;
    s->rebuild_due = 1; /* new bodies or a new model (set-up too): lists are built for them */
    /* Watched whatever the rates say: the forces alone keep nothing to roll back (a stop ends
     * them, and the caller's set-up), and a list they build (the cut-off's tile triples) is
     * measured only when built, after the decision a step takes at its start. */
    SIM_TRY(force_phases(b, &f, 0, watch, &sorted, err));
    SIM_TRY(o->body_forces(b, err));
    SIM_TRY(mark(b, SIM_PHASE_SECOND, -1, 0, err));
    sim_step_counts c;
    memset(&c, 0, sizeof c);
    const sim_status end = o->end_frame(b, &f, &c, err);
    if (end != SIM_OK && end != SIM_UNSTABLE) {
        return end;
    }
    double blocks[SIM_SWEEP_COUNT] = {0}, ms[SIM_SWEEP_COUNT] = {0};
    double phase_ms[SIM_PHASE_COUNT + 1] = {0}; /* not reported: a force computation's */
    SIM_TRY(account(b, SIM_MARK_FRAME, s->marks - 1, phase_ms, blocks, ms, err));
    memcpy(s->forces_ms, phase_ms, sizeof s->forces_ms); /* a step's estimate */
    update_rates(b, blocks, ms);
    return after_counts(b, &f, &c, err);
}
