/* SPDX-License-Identifier: MIT
 * nbsim — the stepper's policy (sim/step/stepper.h), tested once, on the CPU, with a fake
 * backend: primitives that record their calls, advance a fake clock by scripted costs (so the
 * marks' times are known exactly) and answer scripted counters. What every real backend then
 * does is decided here: the phase order of a step and of a force computation, when a culled
 * step sorts (every N steps, on demand, when a swept list regrew, never on regrowth for ranks),
 * when and how much each list grows (and what a list that cannot grow reports), when the
 * neighbour lists (the contacts' and the ATM cut-off's) are rebuilt whatever they say (set-up, a
 * sort, a request, their growth, a rollback), when the cut-off sweeps its lists rather than tile
 * triples (a skin, one rank), the settling of counts that were lower bounds, when a step is
 * long (saved, sliced, the slices sized from the measured rate), rollback when the flag rises in a
 * slice, the flag read between steps, the window of steps in flight, where each phase's time
 * goes, and which steps a backend may launch as one unit (CUDA: a graph). */
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "step/backend_impl.h"
#include "nlist/nlist.h"
#include "nlist/atm_list.h"

#define MAX_SLICES 4096

typedef struct {
    uint64_t begin, end;
    unsigned flags;
    sim_sweep sweep;
} slice_rec;

typedef struct {
    sim_backend base; /* first */
    char log[1 << 16];
    /* the fake clock [ms] and what each primitive costs on it */
    double now;
    double cost[SIM_PHASE_COUNT]; /* FIRST, SORT, CULL, NEIGHBOURS, TRIPLET_CULL, REDUCE, SECOND */
    double ms_per_block[SIM_SWEEP_COUNT];
    double mark_ms[1 << 16];
    /* scripted answers */
    sim_step_counts counts; /* end_frame's */
    sim_step_counts measured[8];
    int measures; /* measure calls so far */
    uint64_t list_len[SIM_SWEEP_COUNT];
    int lists_on_device;
    double guess; /* interactions / ms */
    int can_save, grow_fails;
    int has_grow, has_measure;
    int atm_lists; /* the ATM cut-off over its lists when the backend allows (lists_triplets) */
    /* the stop flag, raised when the clock passes raise_at */
    volatile sig_atomic_t flag;
    double raise_at;
    /* what was called */
    int saves, restores, waits, wait_id[1 << 14];
    int marks_made; /* mark calls since the frame began */
    int decline_units, fail_sweep; /* step_begin answers no unit; the sweep fails */
    int grows;
    sim_list grow_list[64];
    uint64_t grow_cap[64];
    int slices;
    slice_rec slice[MAX_SLICES];
    /* a phase whose cost the host does not know (the device decides): NEIGHBOURS costs spike_ms
     * more at every spike_every-th step (a rebuild), SECOND last_ms more at a frame's last step */
    double spike_ms, last_ms;
    int spike_every;
    uint64_t steps_done;
} fake;

static fake *as_fake(sim_backend *b) {
    return (fake *)b;
}

static void say(fake *f, const char *word) {
    const size_t len = strlen(f->log);
    snprintf(f->log + len, sizeof f->log - len, "%s%s", len ? " " : "", word);
}

static void advance(fake *f, double ms) {
    f->now += ms;
    if (f->raise_at > 0.0 && f->now >= f->raise_at) {
        f->flag = 1;
    }
}

static sim_status fake_begin(sim_backend *b, const sim_step_shape *s, int marks, sim_error *e) {
    ENSURE(marks <= (int)(sizeof as_fake(b)->mark_ms / sizeof(double)));
    say(as_fake(b), "begin");
    as_fake(b)->marks_made = 0;
    return SIM_OK;
}

static sim_status fake_mark(sim_backend *b, int id, sim_error *e) {
    as_fake(b)->mark_ms[id] = as_fake(b)->now;
    as_fake(b)->marks_made++;
    return SIM_OK;
}

static sim_status fake_wait(sim_backend *b, int id, sim_error *e) {
    fake *f = as_fake(b);
    if (id >= SIM_MARK_FRAME && f->waits < (int)(sizeof f->wait_id / sizeof f->wait_id[0])) {
        f->wait_id[f->waits++] = id; /* the window's waits (a sweep's slices wait too) */
    }
    return SIM_OK;
}

static sim_status fake_elapsed(sim_backend *b, int from, int to, double *ms, sim_error *e) {
    *ms = as_fake(b)->mark_ms[to] - as_fake(b)->mark_ms[from];
    return SIM_OK;
}

#define FAKE_PHASE(fn, word, phase)                                                                \
    static sim_status fn(sim_backend *b, sim_error *e) {                                           \
        say(as_fake(b), word);                                                                     \
        advance(as_fake(b), as_fake(b)->cost[phase]);                                              \
        return SIM_OK;                                                                             \
    }
static sim_status fake_first(sim_backend *b, sim_error *e) {
    say(as_fake(b), "first");
    as_fake(b)->steps_done++;
    advance(as_fake(b), as_fake(b)->cost[SIM_PHASE_FIRST]);
    return SIM_OK;
}

FAKE_PHASE(fake_sort, "sort", SIM_PHASE_SORT)
FAKE_PHASE(fake_wrap, "wrap", SIM_PHASE_WRAP)
FAKE_PHASE(fake_reduce, "reduce", SIM_PHASE_REDUCE)
FAKE_PHASE(fake_body, "body", SIM_PHASE_SECOND)
#undef FAKE_PHASE

static sim_status fake_cull(sim_backend *b, unsigned flags, sim_error *e) {
    say(as_fake(b), flags & SIM_STEP_SORTED ? "cull/sorted" : "cull");
    advance(as_fake(b), as_fake(b)->cost[SIM_PHASE_CULL]);
    return SIM_OK;
}

static sim_status fake_neighbours(sim_backend *b, unsigned flags, sim_error *e) {
    fake *f = as_fake(b);
    say(f, flags & SIM_STEP_REBUILD ? "nlist/rebuild" : "nlist");
    const int spike = f->spike_every > 0 && f->steps_done % (uint64_t)f->spike_every == 3;
    advance(f, f->cost[SIM_PHASE_NEIGHBOURS] + (spike ? f->spike_ms : 0.0));
    return SIM_OK;
}

static sim_status fake_tcull(sim_backend *b, unsigned flags, sim_error *e) {
    const int lists = as_fake(b)->atm_lists && sim_backend_atm_listing(b);
    say(as_fake(b), lists && (flags & SIM_STEP_REBUILD) ? "tcull/rebuild" : "tcull");
    advance(as_fake(b), as_fake(b)->cost[SIM_PHASE_TRIPLET_CULL]);
    return SIM_OK;
}

static sim_status fake_sweep(sim_backend *b, sim_sweep w, uint64_t begin, uint64_t end,
                             unsigned flags, sim_error *e) {
    fake *f = as_fake(b);
    static const char *const names[SIM_SWEEP_COUNT] = {
        "pairs", "pair-list", "triplets", "triplet-list", "nlist-sweep", "triplet-nlist"};
    if (flags & SIM_SLICE_FIRST) {
        say(f, names[w]);
    }
    if (f->fail_sweep) {
        return sim_fail(e, SIM_CUDA, "the fake sweep failed");
    }
    if (f->slices < MAX_SLICES) {
        f->slice[f->slices++] = (slice_rec){begin, end, flags, w};
    }
    const uint64_t blocks = end == SIM_STEP_ON_DEVICE ? f->list_len[w] : end - begin;
    advance(f, (double)blocks * f->ms_per_block[w]);
    return SIM_OK;
}

static sim_status fake_second(sim_backend *b, int step, sim_error *e) {
    fake *f = as_fake(b);
    say(f, "second");
    const int last = step == f->base.params.steps_per_frame - 1;
    advance(f, f->cost[SIM_PHASE_SECOND] + (last ? f->last_ms : 0.0));
    return SIM_OK;
}

/* The scripted counts, the lists of the shape active. */
static void fill_counts(const sim_step_shape *s, sim_step_counts *c) {
    for (int l = 0; l < SIM_LIST_COUNT; ++l) {
        c->list[l].active = l <= SIM_LIST_SUPER_PAIRS ? s->culled : s->tculled && !s->tlisted;
    }
    c->list[SIM_LIST_NEIGHBOURS].active = s->listed;
    c->list[SIM_LIST_ATM_NEIGHBOURS].active = s->tlisted;
}

static sim_status fake_end(sim_backend *b, const sim_step_shape *s, sim_step_counts *c,
                           sim_error *e) {
    say(as_fake(b), "end");
    *c = as_fake(b)->counts;
    fill_counts(s, c);
    return SIM_OK;
}

static sim_status fake_measure(sim_backend *b, const sim_step_shape *s, sim_step_counts *c,
                               sim_error *e) {
    fake *f = as_fake(b);
    say(f, "measure");
    *c = f->measured[f->measures < 8 ? f->measures : 7];
    f->measures++;
    fill_counts(s, c);
    return SIM_OK;
}

static sim_status fake_grow(sim_backend *b, sim_list list, uint64_t cap, int *grown, sim_error *e) {
    fake *f = as_fake(b);
    say(f, "grow");
    if (f->grows < 64) {
        f->grow_list[f->grows] = list;
        f->grow_cap[f->grows] = cap;
    }
    f->grows++;
    *grown = !f->grow_fails;
    if (*grown) { /* what a backend's next counts would say */
        f->counts.list[list].cap = cap;
        for (int k = 0; k < 8; ++k) {
            f->measured[k].list[list].cap =
                cap > f->measured[k].list[list].cap ? cap : f->measured[k].list[list].cap;
        }
    }
    return SIM_OK;
}

static sim_status fake_save(sim_backend *b, int *saved, sim_error *e) {
    say(as_fake(b), "save");
    as_fake(b)->saves++;
    *saved = as_fake(b)->can_save;
    return SIM_OK;
}

static sim_status fake_restore(sim_backend *b, sim_error *e) {
    say(as_fake(b), "restore");
    as_fake(b)->restores++;
    return SIM_OK;
}

static uint64_t fake_list_blocks(const sim_backend *b, sim_sweep w) {
    const fake *f = (const fake *)b;
    return f->lists_on_device ? SIM_STEP_ON_DEVICE : f->list_len[w];
}

static double fake_guess(const sim_backend *b, sim_sweep w) {
    return ((const fake *)b)->guess;
}

static int fake_culls_triplets(const sim_backend *b) {
    return sim_backend_triplet_culling(b);
}

static int fake_lists_triplets(const sim_backend *b) {
    return ((const fake *)b)->atm_lists && sim_backend_atm_listing(b);
}

static sim_step_ops fake_ops = {
    fake_begin,          fake_mark,           fake_wait, fake_elapsed,    fake_first,
    fake_wrap,           fake_sort,           fake_cull, fake_neighbours, fake_sweep,
    fake_tcull,          fake_reduce,         fake_body, fake_second,     fake_end,
    fake_measure,        fake_grow,           fake_save, fake_restore,    fake_list_blocks,
    fake_guess,          fake_culls_triplets, NULL, /* no friction */
    fake_lists_triplets, NULL,                NULL, /* no units (test_step_units: some) */
    0, /* a mark costs time, as a GPU's: steps are sampled */
};

/* A fake of N = 2560 bodies (40 pair tiles of 64, 80 triplet tiles), the ltm and tetra maps;
 * skin > 0: culled contacts over neighbour lists. */
typedef struct {
    int cull, triplets, ranks, watched, sort_every, steps;
    double atm_cutoff, skin;
} setup;

static fake *make(const setup *u) {
    fake *f = calloc(1, sizeof *f);
    ENSURE(f != NULL);
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.tile = 64;
    c.cull = u->cull;
    c.sort_every = u->sort_every;
    c.stop = u->watched ? &f->flag : NULL;
    sim_params p = sim_params_default();
    p.triplets = u->triplets;
    p.atm_cutoff = u->atm_cutoff;
    p.steps_per_frame = u->steps > 0 ? u->steps : 1;
    f->base.config = c;
    f->base.params = p;
    f->base.n = 2560;
    f->base.rank = (sim_rank){0, u->ranks > 1 ? u->ranks : 1, -1, NULL};
    f->base.nlist_skin = u->skin;
    sim_error err;
    ENSURE(sim_backend_plan_maps(&f->base, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, &p, &err) ==
           SIM_OK);
    fake_ops.grow = fake_grow;
    fake_ops.measure = fake_measure;
    sim_stepper_init(&f->base.stepper, &fake_ops);
    for (int k = 0; k < SIM_PHASE_COUNT; ++k) {
        f->cost[k] = 1.0;
    }
    for (int w = 0; w < SIM_SWEEP_COUNT; ++w) {
        f->ms_per_block[w] = 1e-4;
        f->list_len[w] = 100;
    }
    f->guess = 1e9; /* fast: nothing is long unless a test says so */
    f->can_save = 1;
    for (int l = 0; l < SIM_LIST_COUNT; ++l) { /* lists far from full */
        f->counts.list[l] = (sim_list_count){100, 100, 100, 1000, 1u << 30, 0};
        for (int k = 0; k < 8; ++k) {
            f->measured[k].list[l] = f->counts.list[l];
        }
    }
    return f;
}

static void drop(fake *f) {
    sim_stepper_free(&f->base.stepper);
    free(f);
}

static void clear_log(fake *f) {
    f->log[0] = '\0';
    f->slices = 0;
    f->waits = 0;
    f->grows = 0;
}

static sim_status frame(fake *f, sim_frame_timing *t) {
    sim_error err = {SIM_OK, ""};
    clear_log(f);
    return sim_step_frame(&f->base, t, &err);
}

static int count_words(const char *log, const char *word) {
    int n = 0;
    const size_t len = strlen(word);
    for (const char *p = log; (p = strstr(p, word)) != NULL; p += len) {
        n += (p == log || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0');
    }
    return n;
}

/* ---- phase order ---- */

static void test_phase_order(void) {
    sim_frame_timing t;
    sim_error err;
    /* unculled, contacts only, alone */
    setup u = {0, 0, 0, 0, 0, 2, 0.0, 0.0};
    fake *f = make(&u);
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 2);
    ENSURE_MSG(strcmp(f->log, "begin first pairs second first pairs second end") == 0, "%s",
               f->log);
    drop(f);
    /* everything: culled contacts, the cut-off's list, two ranks; the first step sorts */
    setup all = {1, 1, 2, 0, 0, 2, 1.0, 0.0};
    f = make(&all);
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 2 && t.sorts == 1 && t.ranks == 2);
    ENSURE_MSG(strcmp(f->log,
                      "begin first sort cull/sorted pair-list tcull triplet-list reduce second "
                      "first cull pair-list tcull triplet-list reduce second end") == 0,
               "%s", f->log);
    drop(f);
    /* the triplet map's plan with culled contacts */
    setup tri = {1, 1, 0, 0, 0, 1, 0.0, 0.0};
    f = make(&tri);
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin first sort cull/sorted pair-list triplets second end") == 0,
               "%s", f->log);
    /* the forces alone: no kick, body forces last */
    clear_log(f);
    ENSURE(sim_step_forces(&f->base, 0, &err) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin cull pair-list triplets body end") == 0, "%s", f->log);
    drop(f);
    /* periodic axes: WRAP right after the drift, before the sort makes its boxes; none in the
     * forces alone (nothing moved) */
    setup per = {1, 0, 0, 0, 0, 2, 0.0, 0.0};
    f = make(&per);
    f->base.params.periodic = 5;
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin first wrap sort cull/sorted pair-list second first wrap cull "
                              "pair-list second end") == 0,
               "%s", f->log);
    clear_log(f);
    ENSURE(sim_step_forces(&f->base, 0, &err) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin cull pair-list body end") == 0, "%s", f->log);
    drop(f);
    /* a backend whose drift wraps too (CUDA: no wrap primitive): no WRAP phase, no mark */
    fake_ops.wrap = NULL;
    f = make(&per);
    f->base.params.periodic = 5;
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin first sort cull/sorted pair-list second first cull "
                              "pair-list second end") == 0,
               "%s", f->log);
    drop(f);
    fake_ops.wrap = fake_wrap;
}

/* ---- sorting ---- */

static void test_sort_every(void) {
    setup u = {1, 0, 0, 0, 3, 7, 0.0, 0.0};
    fake *f = make(&u);
    sim_error err;
    sim_frame_timing t;
    ENSURE(sim_step_forces(&f->base, 0, &err) == SIM_OK); /* set-up sorts (due at first) */
    ENSURE(strstr(f->log, "sort") != NULL);
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 2); /* steps 3 and 6 */
    ENSURE_MSG(strcmp(f->log, "begin first cull pair-list second first cull pair-list second "
                              "first sort cull/sorted pair-list second first cull pair-list "
                              "second first cull pair-list second first sort cull/sorted "
                              "pair-list second first cull pair-list second end") == 0,
               "%s", f->log);
    /* on demand: the next step */
    sim_step_request_sort(&f->base.stepper);
    f->base.params.steps_per_frame = 1;
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 1);
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 0);
    /* unculled steps never sort; a request waits for culling */
    f->base.config.cull = 0;
    sim_step_request_sort(&f->base.stepper);
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 0 && count_words(f->log, "sort") == 0);
    f->base.config.cull = 1;
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 1);
    drop(f);
}

/* A swept list that grew by SIM_CULL_REGROW since the first step after the last sort makes the
 * next step sort (alone); ranks sort on the clock alone. */
static void test_sort_regrow(void) {
    const sim_list swept[2] = {SIM_LIST_TILE_PAIRS, SIM_LIST_TCULL_TRIPLES};
    for (int ranks = 1; ranks <= 2; ++ranks) {
        for (int k = 0; k < 2; ++k) {
            setup u = {1, 1, ranks, 0, 1000, 1, 1.0, 0.0};
            fake *f = make(&u);
            sim_frame_timing t;
            ENSURE(frame(f, &t) == SIM_OK && t.sorts == 1); /* the first */
            sim_list_count *x = &f->counts.list[swept[k]];
            x->sorted = 100;
            x->count = x->peak = 141; /* 1.25 x 100 + 16: not more */
            ENSURE(frame(f, &t) == SIM_OK && t.sorts == 0);
            ENSURE(frame(f, &t) == SIM_OK && t.sorts == 0);
            x->count = x->peak = 142;
            ENSURE(frame(f, &t) == SIM_OK && t.sorts == 0); /* decided at this frame's end */
            ENSURE_MSG(frame(f, &t) == SIM_OK && t.sorts == (ranks == 1),
                       "list %d, %d ranks: %d sorts", k, ranks, t.sorts);
            drop(f);
        }
    }
}

/* ---- lists ---- */

static void test_growth(void) {
    for (int l = 0; l < SIM_LIST_COUNT; ++l) {
        setup u = {1, 1, 0, 0, 0, 1, 1.0, 0.1};
        fake *f = make(&u);
        f->atm_lists = l == SIM_LIST_ATM_NEIGHBOURS; /* else the cut-off's tile-triple lists */
        sim_frame_timing t;
        sim_list_count *x = &f->counts.list[l];
        x->cap = 1000;
        x->peak = 800; /* at SIM_LIST_GROW_AT: not yet */
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 0);
        x->peak = 801;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 1);
        ENSURE(f->grow_list[0] == (sim_list)l && f->grow_cap[0] == 1602);
        ENSURE(x->cap == 1602 && !t.cull_capped && !t.triplet_cull_capped && !t.nlist_capped);
        /* at most the whole simplex; a list that holds it never grows */
        x->peak = 1500;
        x->all = 2000;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 1 && f->grow_cap[0] == 2000);
        x->peak = 2000;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 0);
        /* at most SIM_LIST_MAX entries */
        x->cap = 0x70000000u;
        x->all = UINT64_C(1) << 40;
        x->peak = 0x6fffffffu;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 1 && f->grow_cap[0] == SIM_LIST_MAX);
        /* no memory: kept, capped (sticky), reported for the list's pipeline */
        x->cap = 1000;
        x->all = 1u << 30;
        x->peak = 900;
        f->grow_fails = 1;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 1 && x->cap == 1000);
        const int contacts = l <= SIM_LIST_SUPER_PAIRS, nlist = l == SIM_LIST_NEIGHBOURS;
        ENSURE_MSG(t.cull_capped == contacts && t.nlist_capped == nlist &&
                       t.triplet_cull_capped == (!contacts && !nlist),
                   "list %d", l);
        x->peak = 100;
        f->grow_fails = 0;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 0 &&
               t.cull_capped + t.triplet_cull_capped + t.nlist_capped == 1);
        /* an inactive list is left alone */
        f->base.config.cull = 0;
        x->peak = 5000;
        ENSURE(frame(f, &t) == SIM_OK && f->grows == 0);
        drop(f);
    }
    /* lists that grow themselves: no calls */
    setup u = {1, 0, 0, 0, 0, 1, 0.0, 0.0};
    fake *f = make(&u);
    sim_frame_timing t;
    sim_step_ops self = fake_ops;
    self.grow = NULL;
    self.measure = NULL;
    f->base.stepper.ops = &self;
    f->counts.list[SIM_LIST_TILE_PAIRS].peak = 5000;
    f->counts.inexact = 1;
    ENSURE(frame(f, &t) == SIM_OK && f->grows == 0 && f->measures == 0);
    drop(f);
}

/* Counts that were lower bounds: measured at the current positions and grown until the lists
 * hold them, at most SIM_LIST_SETTLE_ROUNDS times. */
static void test_settle(void) {
    setup u = {1, 1, 0, 0, 0, 1, 1.0, 0.0};
    fake *f = make(&u);
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_OK && f->measures == 0); /* exact counts: no measure */
    f->counts.inexact = 1;
    f->counts.triplet_fallback_steps = 1;
    f->counts.list[SIM_LIST_TCULL_PAIRS].peak = 1200;         /* overflowed: grows to 2400 */
    f->measured[0].list[SIM_LIST_TCULL_TRIPLES].count = 3000; /* then the triples show */
    f->measured[1].list[SIM_LIST_TCULL_TRIPLES].count = 3000;
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin first cull pair-list tcull triplet-list second end grow "
                              "measure grow measure") == 0,
               "%s", f->log);
    ENSURE(f->measures == 2 && f->grows == 2);
    ENSURE(f->grow_list[0] == SIM_LIST_TCULL_PAIRS && f->grow_cap[0] == 2400);
    ENSURE(f->grow_list[1] == SIM_LIST_TCULL_TRIPLES && f->grow_cap[1] == 6000);
    ENSURE(t.triplet_fallback_steps == 1 && t.tile_triples == 100);
    /* never enough (no memory): SIM_LIST_SETTLE_ROUNDS measures, then the fallback covers it */
    f->measures = 0;
    f->grow_fails = 1;
    for (int k = 0; k < 8; ++k) {
        f->measured[k].list[SIM_LIST_TCULL_TRIPLES].count = 1u << 20;
    }
    ENSURE(frame(f, &t) == SIM_OK && f->measures == SIM_LIST_SETTLE_ROUNDS);
    ENSURE(t.triplet_cull_capped);
    drop(f);
}

/* ---- stopping ---- */

/* A step whose sweep takes 1 s at the rate measured at set-up: saved, cut into slices of about
 * SIM_STEP_SLICE_MS, the flag read before each; raised in the 4th slice of the first step, the
 * frame ends with no step and the step rolled back. */
static void test_slices_and_rollback(void) {
    setup u = {0, 0, 0, 1, 0, 3, 0.0, 0.0};
    fake *f = make(&u);
    sim_error err = {SIM_OK, ""};
    const uint64_t blocks = f->base.pair_plan.blocks;
    f->ms_per_block[SIM_SWEEP_PAIR_PLAN] = 1000.0 / (double)blocks;
    f->guess = 64.0 * 64.0 * (double)blocks / 4000.0;     /* four times too slow: 4 s expected */
    ENSURE(sim_step_forces(&f->base, 1, &err) == SIM_OK); /* sliced: long by the guess */
    ENSURE(f->slices > 10 && f->saves == 0);
    /* the first three slices by the guess (25 ms each), then by the measured rate (100 ms) */
    ENSURE_NEAR((double)(f->slice[0].end - f->slice[0].begin), (double)blocks / 40.0, 2.0);
    ENSURE_NEAR((double)(f->slice[3].end - f->slice[3].begin), (double)blocks / 10.0, 2.0);
    uint64_t next = 0;
    for (int k = 0; k < f->slices; ++k) { /* consecutive, the first starts, the last ends */
        ENSURE(f->slice[k].begin == next && f->slice[k].end > next);
        ENSURE(!!(f->slice[k].flags & SIM_SLICE_FIRST) == (k == 0));
        ENSURE(!!(f->slice[k].flags & SIM_SLICE_LAST) == (k == f->slices - 1));
        next = f->slice[k].end;
    }
    ENSURE(next == blocks);

    f->now = 0.0;
    f->raise_at = 350.0;
    const sim_stepper before = f->base.stepper;
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_INTERRUPTED && t.steps == 0);
    ENSURE_MSG(strncmp(f->log, "begin save first pairs restore end", 34) == 0, "%s", f->log);
    ENSURE(f->slices == 4 && f->restores == 1); /* the flag rose in the 4th: no 5th */
    ENSURE(f->base.stepper.clock.steps_since_sort == before.clock.steps_since_sort);
    ENSURE(!(f->slice[3].flags & SIM_SLICE_LAST));

    /* raised in the second step: the first kept */
    f->flag = 0;
    f->now = 0.0;
    f->raise_at = 1000.0 + 3.0 + 350.0;
    ENSURE(frame(f, &t) == SIM_INTERRUPTED && t.steps == 1 && f->restores == 2);
    sim_error e2 = {SIM_OK, ""};
    f->flag = 0;
    f->now = 0.0;
    f->raise_at = 2.0 * 1003.0 + 500.0;
    clear_log(f);
    ENSURE(sim_step_frame(&f->base, &t, &e2) == SIM_INTERRUPTED && t.steps == 2);
    ENSURE(strstr(e2.message, "stopped after 2 of the frame's 3 steps") != NULL);
    ENSURE_NEAR(t.pair_ms, 2000.0, 1e-6); /* the completed steps' time only */

    /* no memory to save: whole steps, the flag read between them */
    f->flag = 0;
    f->now = 0.0;
    f->raise_at = 350.0;
    f->can_save = 0;
    ENSURE(frame(f, &t) == SIM_INTERRUPTED && t.steps == 1 && f->restores == 3);
    ENSURE(f->slices == 1 && (f->slice[0].flags & SIM_SLICE_LAST));
    drop(f);
}

/* Short steps are never saved or sliced; lists whose length stays on the device never are; a
 * raised flag stops between steps; without a flag nothing is ever saved. */
static void test_short_steps(void) {
    setup u = {1, 0, 0, 1, 0, 50, 0.0, 0.0};
    fake *f = make(&u);
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 50 && f->saves == 0);
    ENSURE(f->slices == 50);     /* one call per sweep */
    f->raise_at = f->now + 16.0; /* ~3 ms a step */
    ENSURE(frame(f, &t) == SIM_INTERRUPTED && t.steps >= 4 && t.steps <= 6);
    ENSURE(f->restores == 0 && f->saves == 0);
    f->flag = 0;
    f->raise_at = 0.0;
    /* a long list the host counts: sliced; on the device: whole */
    f->list_len[SIM_SWEEP_PAIR_LIST] = 100000;
    f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 0.01; /* 1 s */
    memset(f->base.stepper.rate, 0, sizeof f->base.stepper.rate);
    f->guess = 64.0 * 64.0 * 100.0; /* 100 entries / ms: as slow as it is */
    f->base.params.steps_per_frame = 1;
    ENSURE(frame(f, &t) == SIM_OK && f->saves == 1 && f->slices > 5);
    f->lists_on_device = 1;
    ENSURE(frame(f, &t) == SIM_OK && f->saves == 1 && f->slices == 1);
    f->base.config.stop = NULL;
    f->lists_on_device = 0;
    ENSURE(frame(f, &t) == SIM_OK && f->saves == 1 && f->slices == 1);
    drop(f);
}

/* The mark ids a frame's window waits for, as the stepper's policy says (stepper.c): step k marks
 * each of its `phases` phases when split (EVERY, or sampled: sim_step_sampled), after closing an
 * open step before it (one mark, that step's end); else only its end, where that end is read: the frame's last,
 * and with the flag every window / 2 steps; after step k >= window the host waits for step
 * k - window's last mark. Fills want[] (at most cap) and returns the number of waits. */
static int expected_waits(const fake *f, int every, int phases, int window, int *want, int cap) {
    const int steps = f->base.params.steps_per_frame;
    const int mark_every = window / 2 > 1 ? window / 2 : 1;
    const int pool_empty = !(f->base.stepper.phase_pool_sum > 0.0);
    uint64_t count = f->base.stepper.steps_run;
    int last = SIM_MARK_FRAME, open = 0, waits = 0;
    int end[4096];
    for (int k = 0; k < steps && k < 4096; ++k) {
        const int split = every || sim_step_sampled(++count, k, steps, pool_empty);
        const int end_mark = k == steps - 1 || (k + 1) % mark_every == 0;
        if (split) {
            if (open) { /* the close: the step before ends there */
                end[k - 1] = ++last;
            }
            last += phases;
            open = 0;
        } else if (end_mark) {
            last += 1;
        } else {
            open = 1;
        }
        end[k] = last;
        if (k >= window && waits < cap) {
            want[waits++] = end[k - window];
        }
    }
    return waits;
}

/* About one slice of steps in flight: after step k the host waits for the end of step
 * k - window (window = SIM_STEP_SLICE_MS / the last frame's time per step; 1 before any). A
 * step's end is its last mark: one mark per step not split while the window is 1, then one every
 * window / 2 steps (the host waits for the last mark at or before step k - window's end), and a
 * split step's 3 phases (first, contacts, second): every step with EVERY, the sampled ones else. */
static void test_window(void) {
    for (int every = 0; every <= 1; ++every) {
        setup u = {0, 0, 0, 1, 0, 5, 0.0, 0.0};
        fake *f = make(&u);
        f->base.config.phase_timing = every ? SIM_PHASE_TIMING_EVERY : SIM_PHASE_TIMING_SAMPLED;
        sim_frame_timing t;
        int want[256];
        /* 2 ms per step (first 1, sweep ~0, second 1) */
        f->ms_per_block[SIM_SWEEP_PAIR_PLAN] = 0.0;
        f->base.stepper.step_ms_est = 0.0;
        int n = expected_waits(f, every, 3, 1, want, 256);
        ENSURE(frame(f, &t) == SIM_OK && f->waits == 4 && n == 4); /* window 1: after 1..4 */
        for (int k = 0; k < 4; ++k) {
            ENSURE_MSG(f->wait_id[k] == want[k], "wait %d: mark %d, not %d", k, f->wait_id[k],
                       want[k]);
        }
        ENSURE_NEAR(f->base.stepper.step_ms_est, 2.0, 1e-9);
        f->base.params.steps_per_frame = 120; /* window 50 */
        n = expected_waits(f, every, 3, 50, want, 256);
        ENSURE(frame(f, &t) == SIM_OK && f->waits == 70 && n == 70);
        for (int k = 0; k < 70; ++k) {
            ENSURE_MSG(f->wait_id[k] == want[k], "wait %d: mark %d, not %d", k, f->wait_id[k],
                       want[k]);
        }
        /* step 0 is never sampled, and its end not marked: the first wait is for the frame's
         * own mark */
        ENSURE(f->wait_id[0] == SIM_MARK_FRAME + (every ? 3 : 0));
        f->base.config.stop = NULL; /* no flag: no waits */
        ENSURE(frame(f, &t) == SIM_OK && f->waits == 0);
        drop(f);
    }
}

/* ---- timing ---- */

static void test_timing(void) {
    setup u = {1, 1, 2, 0, 2, 4, 1.0, 0.0};
    fake *f = make(&u);
    const double c[SIM_PHASE_COUNT] = {
        [SIM_PHASE_FIRST] = 1.0,        [SIM_PHASE_WRAP] = 0.5,       [SIM_PHASE_SORT] = 2.0,
        [SIM_PHASE_CULL] = 3.0,         [SIM_PHASE_NEIGHBOURS] = 4.0, [SIM_PHASE_CONTACTS] = 0.0,
        [SIM_PHASE_TRIPLET_CULL] = 5.0, [SIM_PHASE_TRIPLETS] = 0.0,   [SIM_PHASE_REDUCE] = 7.0,
        [SIM_PHASE_SECOND] = 8.0};
    memcpy(f->cost, c, sizeof c);
    f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 0.25; /* 100 entries: 25 ms */
    f->ms_per_block[SIM_SWEEP_TRIPLET_LIST] = 0.5;
    sim_frame_timing t;
    /* sorts: due at first (step 1), then 2 steps after it (step 3) */
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 4 && t.sorts == 2);
    ENSURE_NEAR(t.integrate_ms, 4.0 * (1.0 + 8.0), 1e-9);
    ENSURE_NEAR(t.drift_ms, 4.0 * 1.0, 1e-9);
    ENSURE_NEAR(t.kick_ms, 4.0 * 8.0, 1e-9);
    ENSURE_NEAR(t.sort_ms, 2.0 * t.sorts, 1e-9);
    ENSURE_NEAR(t.cull_ms, 4.0 * 3.0, 1e-9);
    ENSURE_NEAR(t.pair_ms, 4.0 * 25.0, 1e-9);
    ENSURE_NEAR(t.triplet_cull_ms, 4.0 * 5.0, 1e-9);
    ENSURE_NEAR(t.triplet_ms, 4.0 * 50.0, 1e-9);
    ENSURE_NEAR(t.comm_ms, 4.0 * 7.0, 1e-9);
    ENSURE_NEAR(t.step_ms, 4.0 * (1 + 3 + 25 + 5 + 50 + 7 + 8) + 2.0 * t.sorts, 1e-9);
    double phases = 0.0; /* each phase in one field: they add up to the step */
#define ADD_PHASE(id, field, name, what) phases += t.field;
    SIM_FRAME_PHASE_LIST(ADD_PHASE)
#undef ADD_PHASE
    ENSURE_NEAR(phases, t.step_ms, 1e-9);
    ENSURE(t.culled && t.triplet_culled && t.tile_pairs == 100 && t.tile_triples == 100);
    ENSURE(t.pair_blocks == 100 && t.triplet_blocks == 100 && t.ranks == 2);
    /* a rank sweeps its share, not the plan: no rate is measured */
    ENSURE(f->base.stepper.rate[SIM_SWEEP_PAIR_LIST].blocks_per_ms == 0.0);
    drop(f);
    /* periodic axes: the WRAP phase's time goes to integrate_ms, with the drift's and kick's */
    f = make(&u);
    memcpy(f->cost, c, sizeof c);
    f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 0.25;
    f->ms_per_block[SIM_SWEEP_TRIPLET_LIST] = 0.5;
    f->base.params.periodic = 7;
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 4);
    ENSURE_NEAR(t.integrate_ms, 4.0 * (1.0 + 0.5 + 8.0), 1e-9);
    ENSURE_NEAR(t.step_ms, 4.0 * (1 + 0.5 + 3 + 25 + 5 + 50 + 7 + 8) + 2.0 * t.sorts, 1e-9);
    drop(f);
    /* alone: whole sweeps give their plan's rate, the reduce phase neither runs nor counts */
    setup a = {0, 1, 0, 0, 0, 2, 0.0, 0.0};
    f = make(&a);
    f->ms_per_block[SIM_SWEEP_PAIR_PLAN] = 0.5;
    ENSURE(frame(f, &t) == SIM_OK && t.comm_ms == 0.0 && t.sort_ms == 0.0 && t.cull_ms == 0.0);
    ENSURE_NEAR(f->base.stepper.rate[SIM_SWEEP_PAIR_PLAN].blocks_per_ms, 2.0, 1e-12);
    ENSURE(f->base.stepper.rate[SIM_SWEEP_PAIR_PLAN].blocks == f->base.pair_plan.blocks);
    ENSURE(!t.culled && t.pair_blocks == f->base.pair_plan.blocks);
    drop(f);
    /* a list's rate is per entry, whatever its length */
    setup l = {1, 0, 0, 0, 0, 2, 0.0, 0.0};
    f = make(&l);
    f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 0.25;
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_NEAR(f->base.stepper.rate[SIM_SWEEP_PAIR_LIST].blocks_per_ms, 4.0, 1e-12);
    ENSURE(f->base.stepper.rate[SIM_SWEEP_PAIR_LIST].blocks == 0);
    drop(f);
}

/* Sampled phases against every step's, where a phase's cost varies in a way the host does not
 * see (issue 37): the lists' rebuild one step in seven (decided on the device), a frame's last
 * step's kick pass. At 1, 10, 100 and 1,000 steps a frame, over 10,000 steps, every phase that
 * holds 5 % of the step or more is within 10 % of its time marked at every step (the fake's marks
 * cost nothing: every step's marks are the truth), and the phases add up to the step. */
static void test_phase_sampling_accuracy(void) {
    static const int frames_of[] = {1, 10, 100, 1000};
    for (size_t i = 0; i < sizeof frames_of / sizeof frames_of[0]; ++i) {
        const int steps = frames_of[i];
        sim_frame_timing sum[2];
        for (int every = 0; every <= 1; ++every) {
            setup u = {1, 0, 0, 0, 0, steps, 0.0, 0.1}; /* culled, neighbour lists */
            fake *f = make(&u);
            f->base.config.phase_timing = every ? SIM_PHASE_TIMING_EVERY : SIM_PHASE_TIMING_SAMPLED;
            const double c[SIM_PHASE_COUNT] = {[SIM_PHASE_FIRST] = 2.0,
                                               [SIM_PHASE_SORT] = 6.0,
                                               [SIM_PHASE_CULL] = 1.0,
                                               [SIM_PHASE_NEIGHBOURS] = 1.0,
                                               [SIM_PHASE_SECOND] = 1.0};
            memcpy(f->cost, c, sizeof c);
            f->ms_per_block[SIM_SWEEP_PAIR_NLIST] = 0.05; /* 100 entries: 5 ms */
            f->spike_every = 7;
            f->spike_ms = 9.0;
            f->last_ms = 1.0;
            memset(&sum[every], 0, sizeof sum[every]);
            for (int fr = 0; fr < 10000 / steps; ++fr) {
                sim_frame_timing t;
                ENSURE(frame(f, &t) == SIM_OK && t.steps == steps);
                double phases = 0.0;
#define ADD_PHASE(id, field, name, what)                                                           \
    sum[every].field += t.field;                                                                   \
    phases += t.field;
                SIM_FRAME_PHASE_LIST(ADD_PHASE)
#undef ADD_PHASE
                sum[every].step_ms += t.step_ms;
                ENSURE_NEAR(phases, t.step_ms, 1e-9 * t.step_ms);
            }
            drop(f);
        }
        printf("  phases sampled against every step, %4d steps a frame [ms a step]:", steps);
#define CHECK_PHASE(id, field, name, what)                                                         \
    do {                                                                                           \
        const double truth = sum[1].field, got = sum[0].field;                                     \
        printf(" %s %.3f/%.3f", name, got / 10000.0, truth / 10000.0);                             \
        if (truth >= 0.05 * sum[1].step_ms) {                                                      \
            ENSURE_MSG(fabs(got - truth) <= 0.10 * truth, "%d steps a frame: %s %.4g, every %.4g", \
                       steps, name, got, truth);                                                   \
        }                                                                                          \
    } while (0);
        SIM_FRAME_PHASE_LIST(CHECK_PHASE)
#undef CHECK_PHASE
        printf("\n");
        ENSURE_NEAR(sum[0].step_ms, sum[1].step_ms, 1e-9 * sum[1].step_ms);
    }
}

/* ---- neighbour lists ---- */

/* A listed step's phases, and when the lists are rebuilt whatever the displacements say: for the
 * forces alone (set-up, a new state or model), at a sort, when asked, after they or the tile-pair
 * list grew (not when growing failed), after a rollback; otherwise the backend decides. */
/* Phases sampled (config.phase_timing, nbsim/config.h): the sampled steps (sim_step_sampled: about
 * one in ten, never a frame's first or last) and every step that sorts mark each phase, the others
 * only their end; the others' time is spread over the phases in the proportions of the sampled
 * steps that did not sort (kept from frame to frame; before the first, the marked steps without
 * their sorts), so that the phases add up to the whole steps, and a sort's time stays the sorts'.
 * Every: each phase of every step. The fake's phases cost the same at every step, so the spread
 * times are exact. */
static void test_phase_sampling(void) {
    for (int every = 0; every <= 1; ++every) {
        setup u = {1, 0, 0, 0, 4, 6, 0.0, 0.0}; /* culled, a sort every 4 steps, 6 a frame */
        fake *f = make(&u);
        f->base.config.phase_timing = every ? SIM_PHASE_TIMING_EVERY : SIM_PHASE_TIMING_SAMPLED;
        const double c[SIM_PHASE_COUNT] = {[SIM_PHASE_FIRST] = 1.0, [SIM_PHASE_SORT] = 2.0,
                                           [SIM_PHASE_CULL] = 3.0, [SIM_PHASE_SECOND] = 8.0};
        memcpy(f->cost, c, sizeof c);
        f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 0.25; /* 100 entries: 25 ms */
        sim_frame_timing t;
        uint64_t count = 0; /* steps since set-up */
        int sampled_any = 0;
        /* 40 frames, the sorts at every 4th step; in the last the stop flag rises in its step 4
         * and ends it before step 5 */
        for (int fr = 0; fr < 40; ++fr) {
            const int stopped = fr == 39;
            if (stopped) { /* in step 4's drift: its first 4 steps held one sort */
                f->base.config.stop = &f->flag;
                f->raise_at = f->now + 4.0 * (1.0 + 3.0 + 25.0 + 8.0) + 2.0 + 0.5;
            }
            const sim_status st = frame(f, &t);
            ENSURE(stopped ? st == SIM_INTERRUPTED : st == SIM_OK);
            const int steps = t.steps;
            ENSURE_MSG(steps == (stopped ? 5 : 6), "frame %d: %d steps", fr, steps);
            /* which steps marked each phase, and the marks: the frame's, 4 per marked step
             * (first, cull, contacts, second), 5 per sorting one; a step not marked marks its
             * end only when it is the frame's last or with the stop flag (a window of 2: every
             * step's end), else the next marked step marks its start first */
            int split = 0, sorted = 0, marks = 1, open = 0, pooled = 0;
            for (int k = 0; k < steps; ++k) {
                const int sorts = (int)(count % 4 == 0);
                ++count;
                const int mine = every || sorts || sim_step_sampled(count, k, 6, !sampled_any);
                pooled |= mine && !sorts; /* the pool takes the frame's samples at its end */
                split += mine;
                sorted += sorts;
                if (mine) {
                    marks += (open ? 1 : 0) + 4 + sorts;
                    open = 0;
                } else if (k == 5 || stopped) {
                    marks += 1;
                } else {
                    open = 1;
                }
            }
            sampled_any |= pooled;
            ENSURE_MSG(t.sorts == sorted && t.phase_steps == split, "frame %d: %d sorts, %d split",
                       fr, t.sorts, t.phase_steps);
            ENSURE_MSG(f->marks_made == marks, "frame %d: %d marks, not %d", fr, f->marks_made,
                       marks);
            ENSURE_NEAR(t.sort_ms, 2.0 * t.sorts, 1e-9);
            ENSURE_NEAR(t.integrate_ms, steps * (1.0 + 8.0), 1e-9);
            ENSURE_NEAR(t.cull_ms, steps * 3.0, 1e-9);
            ENSURE_NEAR(t.pair_ms, steps * 25.0, 1e-9);
            ENSURE_NEAR(t.step_ms, steps * (1.0 + 3.0 + 25.0 + 8.0) + 2.0 * t.sorts, 1e-9);
            ENSURE_NEAR(t.step_ms, t.sort_ms + t.integrate_ms + t.cull_ms + t.pair_ms, 1e-9);
        }
        ENSURE(every || count > 0);
        /* the sweep's rate: measured on the marked steps alone */
        ENSURE_NEAR(f->base.stepper.rate[SIM_SWEEP_PAIR_LIST].blocks_per_ms, 4.0, 1e-9);
        drop(f);
    }
}

static void test_nlist_rebuilds(void) {
    setup u = {1, 0, 0, 0, 3, 4, 0.0, 0.25};
    fake *f = make(&u);
    sim_error err;
    sim_frame_timing t;
    clear_log(f);
    ENSURE(sim_step_forces(&f->base, 0, &err) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin sort cull/sorted nlist/rebuild nlist-sweep body end") == 0,
               "%s", f->log);
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 1 && t.nlist == 1 && t.skin == 0.25);
    ENSURE_MSG(strcmp(f->log, "begin first cull nlist nlist-sweep second first cull nlist "
                              "nlist-sweep second first sort cull/sorted nlist/rebuild "
                              "nlist-sweep second first cull nlist nlist-sweep second end") == 0,
               "%s", f->log);
    f->base.config.sort_every = 1000;
    f->base.params.steps_per_frame = 1;
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") == NULL);
    /* asked (backend.c: new parameters): the next step, once */
    sim_step_request_rebuild(&f->base.stepper);
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin first cull nlist/rebuild nlist-sweep second end") == 0, "%s",
               f->log);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") == NULL);
    /* grown (a reallocated list holds nothing): the next step; a failed growth keeps the lists */
    sim_list_count *x = &f->counts.list[SIM_LIST_NEIGHBOURS];
    x->cap = 16;
    x->peak = x->count = 14;
    ENSURE(frame(f, &t) == SIM_OK && f->grows == 1);
    ENSURE(f->grow_list[0] == SIM_LIST_NEIGHBOURS && f->grow_cap[0] == 28 && x->cap == 28);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") != NULL && f->grows == 0);
    x->peak = x->count = 25;
    f->grow_fails = 1;
    ENSURE(frame(f, &t) == SIM_OK && f->grows == 1 && t.nlist_capped);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") == NULL);
    /* the tile-pair list grown: the lists' fallback needs it, rebuilt with them */
    f->grow_fails = 0;
    x->peak = x->count = 10;
    sim_list_count *tiles = &f->counts.list[SIM_LIST_TILE_PAIRS];
    tiles->peak = tiles->count = 900;
    ENSURE(frame(f, &t) == SIM_OK && f->grows == 1 && f->grow_list[0] == SIM_LIST_TILE_PAIRS);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") != NULL);
    drop(f);
}

/* A long listed step (its lists' length known on the host, as on the CPU) cut short: rolled back,
 * and the next step rebuilds the lists (they may be the cut step's, built where it drifted). */
static void test_nlist_rollback(void) {
    setup u = {1, 0, 0, 1, 1000, 1, 0.0, 0.25};
    fake *f = make(&u);
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") != NULL); /* the first */
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") == NULL);
    f->list_len[SIM_SWEEP_PAIR_NLIST] = 100000;
    f->ms_per_block[SIM_SWEEP_PAIR_NLIST] = 0.01; /* 1 s */
    memset(f->base.stepper.rate, 0, sizeof f->base.stepper.rate);
    f->guess = SIM_NLIST_GUESS_ENTRIES * 100.0; /* 100 bodies / ms: as slow as it is */
    f->raise_at = f->now + 350.0;
    ENSURE(frame(f, &t) == SIM_INTERRUPTED && t.steps == 0 && f->restores == 1);
    ENSURE(f->slices > 1 && f->slices < 10);
    f->flag = 0;
    f->raise_at = 0.0;
    f->list_len[SIM_SWEEP_PAIR_NLIST] = 100;
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "nlist/rebuild") != NULL);
    drop(f);
}

/* Where a listed frame's numbers go: NEIGHBOURS' time, the lists' counts, and per step the
 * sweeps' tests and touching pairs (the frame's mean); unculled, the plan's tests. */
static void test_nlist_report(void) {
    setup u = {1, 0, 0, 0, 1000, 4, 0.0, 0.5};
    fake *f = make(&u);
    f->cost[SIM_PHASE_NEIGHBOURS] = 2.5;
    f->counts.nlist_rebuilds = 3;
    f->counts.nlist_fallback_steps = 1;
    f->counts.nlist_bytes = 12345;
    f->counts.candidates = 4000;
    f->counts.contacts = 401;
    f->counts.list[SIM_LIST_NEIGHBOURS] = (sim_list_count){9, 11, 0, 16, 2559, 0};
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 4);
    ENSURE_NEAR(t.nlist_ms, 4.0 * 2.5, 1e-9);
    ENSURE(t.nlist && t.skin == 0.5 && t.nlist_rebuilds == 3 && t.nlist_fallback_steps == 1);
    ENSURE(t.nlist_bytes == 12345 && t.nlist_cap == 16 && t.nlist_peak == 11 && !t.nlist_capped);
    ENSURE(t.candidate_tests == 1000 && t.contacts == 100);
    /* no skin: tiles, no lists, nothing of theirs reported */
    f->base.nlist_skin = 0.0;
    ENSURE(frame(f, &t) == SIM_OK && !t.nlist && t.nlist_ms == 0.0 && t.skin == 0.0);
    ENSURE(strstr(f->log, "nlist") == NULL && strstr(f->log, "pair-list") != NULL);
    ENSURE(t.candidate_tests == 1000 && t.contacts == 100);
    /* unculled: the plan's tile pairs x tile^2, touching pairs not counted */
    f->base.config.cull = 0;
    ENSURE(frame(f, &t) == SIM_OK && t.contacts == 0);
    ENSURE(t.candidate_tests == f->base.pair_plan.useful * 64u * 64u);
    drop(f);
}

/* The ATM cut-off over its neighbour lists: TRIPLET_CULL gets SIM_STEP_REBUILD exactly when the
 * contacts' lists do (set-up, a sort, a request, a rollback) and when its own lists grew; the
 * sweep is the lists' (periodic axes too); tile triples with skin 0, on several ranks and where
 * the backend has no list sweep; the report carries the lists' counts. */
static void test_atm_lists(void) {
    setup u = {1, 1, 0, 0, 3, 4, 3.0, 0.25};
    fake *f = make(&u);
    f->atm_lists = 1;
    sim_error err;
    sim_frame_timing t;
    clear_log(f);
    ENSURE(sim_step_forces(&f->base, 0, &err) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin sort cull/sorted nlist/rebuild nlist-sweep tcull/rebuild "
                              "triplet-nlist body end") == 0,
               "%s", f->log);
    f->counts.atm_rebuilds = 2;
    f->counts.atm_entries = 4321;
    f->counts.atm_bytes = 99999;
    f->counts.list[SIM_LIST_ATM_NEIGHBOURS] = (sim_list_count){40, 43, 0, 64, 2559, 0};
    f->cost[SIM_PHASE_TRIPLET_CULL] = 1.5;
    ENSURE(frame(f, &t) == SIM_OK && t.sorts == 1);
    ENSURE_MSG(strcmp(f->log,
                      "begin first cull nlist nlist-sweep tcull triplet-nlist second "
                      "first cull nlist nlist-sweep tcull triplet-nlist second "
                      "first sort cull/sorted nlist/rebuild nlist-sweep tcull/rebuild "
                      "triplet-nlist second first cull nlist nlist-sweep tcull triplet-nlist "
                      "second end") == 0,
               "%s", f->log);
    ENSURE(t.triplet_culled && t.atm_lists && t.atm_list_rebuilds == 2);
    ENSURE(t.atm_list_entries == 4321 && t.atm_list_bytes == 99999 && t.atm_list_cap == 64 &&
           t.atm_list_peak == 43 && t.skin == 0.25);
    ENSURE(t.tile_triples == 0 && t.triplet_blocks == f->base.n);
    ENSURE_NEAR(t.atm_list_ms, 4.0 * 1.5, 1e-9); /* the TRIPLET_CULL phase, over the lists */
    ENSURE(t.triplet_cull_ms == 0.0);
    f->base.config.sort_every = 1000;
    f->base.params.steps_per_frame = 1;
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "rebuild") == NULL);
    /* asked (new parameters: the skin or the cut-off may change): both kinds, once */
    sim_step_request_rebuild(&f->base.stepper);
    ENSURE(frame(f, &t) == SIM_OK);
    ENSURE_MSG(strcmp(f->log, "begin first cull nlist/rebuild nlist-sweep tcull/rebuild "
                              "triplet-nlist second end") == 0,
               "%s", f->log);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "rebuild") == NULL);
    /* its lists grown (the GPU's have a capacity): rebuilt by the next step */
    sim_list_count *x = &f->counts.list[SIM_LIST_ATM_NEIGHBOURS];
    x->peak = x->count = 60;
    ENSURE(frame(f, &t) == SIM_OK && f->grows == 1);
    ENSURE(f->grow_list[0] == SIM_LIST_ATM_NEIGHBOURS && f->grow_cap[0] == 120);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "tcull/rebuild") != NULL);
    x->peak = x->count = 40;
    /* skin 0: the tile triples, nothing of the lists reported */
    f->base.nlist_skin = 0.0;
    ENSURE(frame(f, &t) == SIM_OK && !t.atm_lists && t.atm_list_entries == 0);
    ENSURE_MSG(strcmp(f->log, "begin first cull pair-list tcull triplet-list second end") == 0,
               "%s", f->log);
    f->base.nlist_skin = 0.25;
    /* periodic axes: the lists too (minimum images), after WRAP */
    f->base.params.periodic = 1;
    ENSURE(frame(f, &t) == SIM_OK && t.atm_lists && strstr(f->log, "wrap") != NULL &&
           strstr(f->log, "triplet-nlist") != NULL);
    f->base.params.periodic = 0;
    /* a backend without a list sweep: the tile triples */
    f->atm_lists = 0;
    ENSURE(frame(f, &t) == SIM_OK && !t.atm_lists && strstr(f->log, "triplet-list") != NULL);
    drop(f);
    /* several ranks: the tile triples of each rank's rows */
    setup r = {1, 1, 2, 0, 0, 1, 3.0, 0.25};
    f = make(&r);
    f->atm_lists = 1;
    ENSURE(frame(f, &t) == SIM_OK && !t.atm_lists && strstr(f->log, "triplet-list") != NULL);
    drop(f);
}

/* A long step over the cut-off's lists cut short: rolled back, and the next step rebuilds them. */
static void test_atm_lists_rollback(void) {
    setup u = {1, 1, 0, 1, 1000, 1, 3.0, 0.25};
    fake *f = make(&u);
    f->atm_lists = 1;
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "tcull/rebuild") != NULL);
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "rebuild") == NULL);
    f->list_len[SIM_SWEEP_TRIPLET_NLIST] = 100000;
    f->ms_per_block[SIM_SWEEP_TRIPLET_NLIST] = 0.01; /* 1 s */
    memset(f->base.stepper.rate, 0, sizeof f->base.stepper.rate);
    f->guess = SIM_ATM_LIST_GUESS_TRIPLES * 100.0; /* 100 bodies / ms: as slow as it is */
    f->raise_at = f->now + 350.0;
    ENSURE(frame(f, &t) == SIM_INTERRUPTED && t.steps == 0 && f->restores == 1);
    ENSURE(f->slices > 1 && f->slices < 10);
    f->flag = 0;
    f->raise_at = 0.0;
    f->list_len[SIM_SWEEP_TRIPLET_NLIST] = 100;
    ENSURE(frame(f, &t) == SIM_OK && strstr(f->log, "tcull/rebuild") != NULL);
    drop(f);
}

/* A short step as one unit (step_begin / step_end: CUDA's graphs): "[" and "]" around each step
 * the backend takes, never around a long step (saved and sliced: the host reads the flag inside
 * it), nothing when it declines; a step that failed is dropped ("]drop") with the step's error,
 * and only launched steps count in graph_steps. */
static sim_status fake_step_begin(sim_backend *b, const sim_step_shape *s, int *unit,
                                  sim_error *e) {
    *unit = !as_fake(b)->decline_units;
    say(as_fake(b), *unit ? "[" : "-");
    return SIM_OK;
}

static sim_status fake_step_end(sim_backend *b, int keep, sim_error *e) {
    say(as_fake(b), keep ? "]" : "]drop");
    return SIM_OK;
}

static void test_step_units(void) {
    setup u = {1, 0, 0, 1, 1000, 2, 0.0, 0.0};
    fake *f = make(&u);
    static sim_step_ops with_units;
    with_units = fake_ops;
    with_units.step_begin = fake_step_begin;
    with_units.step_end = fake_step_end;
    f->base.stepper.ops = &with_units;
    sim_frame_timing t;
    ENSURE(frame(f, &t) == SIM_OK && t.steps == 2 && t.graph_steps == 2);
    ENSURE_MSG(strcmp(f->log, "begin [ first sort cull/sorted pair-list second ] [ first cull "
                              "pair-list second ] end") == 0,
               "%s", f->log);
    /* the forces alone are no step */
    sim_error err;
    clear_log(f);
    ENSURE(sim_step_forces(&f->base, 0, &err) == SIM_OK && strchr(f->log, '[') == NULL);
    /* declined: the phases as they come */
    f->decline_units = 1;
    ENSURE(frame(f, &t) == SIM_OK && t.graph_steps == 0);
    ENSURE_MSG(strcmp(f->log, "begin - first cull pair-list second - first cull pair-list second "
                              "end") == 0,
               "%s", f->log);
    f->decline_units = 0;
    /* a long step (its list counted on the host, slow): saved and sliced, never one unit */
    f->list_len[SIM_SWEEP_PAIR_LIST] = 100000;
    f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 0.01; /* 1 s */
    memset(f->base.stepper.rate, 0, sizeof f->base.stepper.rate);
    f->guess = 64.0 * 64.0 * 100.0;
    f->base.params.steps_per_frame = 1;
    ENSURE(frame(f, &t) == SIM_OK && f->saves == 1 && f->slices > 5 && t.graph_steps == 0);
    ENSURE_MSG(strncmp(f->log, "begin save first cull pair-list", 31) == 0 &&
                   strchr(f->log, '[') == NULL,
               "%s", f->log);
    /* a failed step: dropped, its own error returned, nothing after it */
    f->list_len[SIM_SWEEP_PAIR_LIST] = 100;
    f->ms_per_block[SIM_SWEEP_PAIR_LIST] = 1e-4;
    memset(f->base.stepper.rate, 0, sizeof f->base.stepper.rate);
    f->guess = 1e9;
    f->fail_sweep = 1;
    clear_log(f);
    err.status = SIM_OK;
    ENSURE(sim_step_frame(&f->base, &t, &err) == SIM_CUDA);
    ENSURE_MSG(strcmp(err.message, "the fake sweep failed") == 0, "%s", err.message);
    ENSURE_MSG(strcmp(f->log, "begin [ first cull pair-list ]drop") == 0, "%s", f->log);
    drop(f);
}

static const ensure_test tests[] = {
    {"phase_order", test_phase_order},
    {"sort_every", test_sort_every},
    {"sort_regrow", test_sort_regrow},
    {"growth", test_growth},
    {"settle", test_settle},
    {"slices_and_rollback", test_slices_and_rollback},
    {"short_steps", test_short_steps},
    {"window", test_window},
    {"timing", test_timing},
    {"phase_sampling", test_phase_sampling},
    {"phase_sampling_accuracy", test_phase_sampling_accuracy},
    {"nlist_rebuilds", test_nlist_rebuilds},
    {"nlist_rollback", test_nlist_rollback},
    {"nlist_report", test_nlist_report},
    {"atm_lists", test_atm_lists},
    {"atm_lists_rollback", test_atm_lists_rollback},
    {"step_units", test_step_units},
};

ENSURE_MAIN(tests)
