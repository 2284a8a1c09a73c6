/* SPDX-License-Identifier: MIT
 * nbsim — private: the stepper, the one orchestrator of a step for every backend. It owns the
 * phase order of a step, the timing of each phase, and every decision a step takes: when to
 * re-sort, when and how much a list grows, when a step is long enough to be saved and cut into
 * slices, how big the slices are, when the stop flag is read, rollback, and how many steps are
 * in flight. A backend (the CPU reference, the CUDA backend) supplies only primitives
 * (sim_step_ops): "enqueue this phase", "mark here", "how long between two marks", "grow this
 * list to that", "save", "restore"; the multi backend is a composite of members each stepped
 * by its own stepper, and holds no policy.
 *
 * A step (one row of SIM_PHASE_LIST per phase, a mark at the end of each phase that runs):
 *
 *   FIRST          save the step's start (long steps only), first half kick and drift (with
 *                  neighbour lists: each body's displacement since the lists' build checked)
 *   WRAP           periodic axes (sim_params.periodic): centres back into the box, before the
 *                  boxes of SORT and CULL are made (the neighbour lists' displacement check
 *                  takes minimum images: a wrapped body has not moved a period); a backend
 *                  without the primitive wraps in FIRST (CUDA: the drift's own pass)
 *   SORT           culled, when due: the bodies re-sorted along the Morton curve
 *   CULL           culled: tile boxes and culling passes -> the tile-pair list (with neighbour
 *                  lists only when they are rebuilt: boxes inflated by half the skin)
 *   NEIGHBOURS     neighbour lists: rebuilt from that list when a body moved more than half the
 *                  skin (decided where the bodies are: on the device for CUDA), or always
 *                  (SIM_STEP_REBUILD: a sort, new bodies or model, a list grown, a rollback)
 *   CONTACTS       F = the contact forces: over the neighbour lists (or, when one overflowed,
 *                  the tile pairs of their build), over the tile-pair list, or over the pair
 *                  map's plan
 *   TRIPLET_CULL   the ATM cut-off, culled: by default (a skin > 0, one rank, walls) its
 *                  neighbour lists of the cut-off plus the skin (nlist/atm_list.h), rebuilt when
 *                  a body moved more than half the skin since their build (decided by the
 *                  backend, where the bodies are) or always on SIM_STEP_REBUILD, as NEIGHBOURS;
 *                  else (skin 0, several ranks) the tile-triple list
 *   TRIPLETS       ATM forces on: over those lists, that tile-triple list, or the triplet map's
 *                  plan
 *   REDUCE         several ranks: the forces summed over them
 *   SECOND         body forces (walls, gravity) and the second half kick; with friction the
 *                  step's contact histories then become the last step's (commit_history)
 *
 * The forces alone (set-up, a new state, a new model) are the same rows without FIRST, and
 * body forces without a kick in place of SECOND.
 *
 * Friction (shape.friction, docs/friction.md): bodies spin (their half kicks are FIRST's and
 * SECOND's) and every touching pair and wall contact keeps a history from step to step. A
 * backend keeps two tables of them: the last completed step's, only read during a step, and
 * this step's, written by the contact sweep (SIM_STEP_ADVANCE: the springs advance by dt) and
 * the walls; when the step completes, commit_history makes this step's the last step's. So a
 * step cut short and restored has changed no history, slices sweep against the same table, and
 * the forces alone (no SIM_STEP_ADVANCE, no commit) evaluate the histories as they are and
 * change none (a resumed run goes on from the histories it saved).
 *
 * A short step may be one unit of work (step_begin / step_end: CUDA launches it as one graph,
 * which saves the host its launches one by one); a long one never is, since the host reads the
 * stop flag between its slices. Either way the same phases run in the same order.
 *
 * Where a new phase goes: a row in SIM_PHASE_LIST (its name and the sim_frame_timing field its
 * time adds to), a primitive in sim_step_ops, its call in stepper.c where the row sits in the
 * order, and its state in the backend's save / restore (NEIGHBOURS is one: sim/nlist/nlist.h;
 * WRAP, periodic boundaries' positions back into the box, another). */
#ifndef SIM_STEPPER_H
#define SIM_STEPPER_H

#include <signal.h>
#include <stdint.h>

#include "nbsim/internal/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stepper's thresholds: one per concept.
 *
 * SIM_STEP_SLICE_MS [ms] is the work between two reads of the stop flag, and so the one
 * threshold for every stopping decision: a step whose sweeps are expected to take longer than
 * one slice is long (its start is saved, its sweeps are cut into slices of about this much
 * measured work, the flag read before each); a frame of short steps keeps about one slice of
 * them in flight. The CUDA backend keeps SIM_STEP_SLICES_IN_FLIGHT slices queued while the host
 * waits for the one before, so the GPU never waits for the host and a raised flag is answered
 * within about three slices, ~0.3 s; a short step is under one slice, and about one slice of
 * them is in flight, so it is answered as fast. 100 [ms]: far above the few microseconds a slice
 * costs (a launch, an event, a host wait), far below what a person notices after Ctrl-C. */
#define SIM_STEP_SLICE_MS 100.0
#define SIM_STEP_SLICES_IN_FLIGHT 2
/* A list (tile pairs, super pairs, the cut-off's lists, the neighbour lists' entries per body)
 * grows at a frame's end when its peak over the frame passed this fraction of its capacity, to
 * twice that peak (at most the whole simplex, at most SIM_LIST_MAX entries): a list that keeps
 * growing is reallocated about once per doubling and never overflows in steady state, and the
 * slack costs 8 or 12 bytes per entry of O(N) lists (4 bytes per body per neighbour). A list
 * that overflowed anyway made its step sweep everything (exact, slower); grown neighbour lists
 * are rebuilt by the next step. */
#define SIM_LIST_GROW_AT 0.8
#define SIM_LIST_MAX 0x7fffffffu
/* Rounds of rebuilding and growing at a frame's end when counts were lower bounds (a list built
 * from one that overflowed: sim_step_counts.inexact); each round at least doubles what was short,
 * and a pair list too short undercounts the triples built from it, hence more than one. */
#define SIM_LIST_SETTLE_ROUNDS 3
/* Phase timing sampled (sim_backend_config.phase_timing): about one step in
 * SIM_STEP_SAMPLE_EVERY marks each phase (a mark costs a GPU a few microseconds), and the other
 * steps' time is spread over the phases in the sampled steps' proportions, each older sample's
 * weight decayed by SIM_STEP_SAMPLE_DECAY per newer one: a memory of about 32 samples, enough to
 * see a phase that costs one step in twenty (a rebuild), short enough to follow a run that
 * changes (a heap settling). */
#define SIM_STEP_SAMPLE_EVERY 10u
#define SIM_STEP_SAMPLE_DECAY (1.0 - 1.0 / 32.0)

/* The phases of a step, in order: id, name, the sim_frame_timing field its time is added to (at
 * the frame's end NEIGHBOURS' time is cells_ms in a frame swept from the cells, TRIPLET_CULL's
 * atm_list_ms over the ATM cut-off's lists, and integrate_ms is drift_ms + kick_ms). */
#define SIM_PHASE_LIST(X)                                                                          \
    X(FIRST, "verlet_first", drift_ms)                                                             \
    X(WRAP, "wrap", drift_ms)                                                                      \
    X(SORT, "sort", sort_ms)                                                                       \
    X(CULL, "cull", cull_ms)                                                                       \
    X(NEIGHBOURS, "neighbours", nlist_ms)                                                          \
    X(CONTACTS, "contacts", pair_ms)                                                               \
    X(TRIPLET_CULL, "triplet_cull", triplet_cull_ms)                                               \
    X(TRIPLETS, "triplets", triplet_ms)                                                            \
    X(REDUCE, "reduce", comm_ms)                                                                   \
    X(SECOND, "body_verlet_second", kick_ms)

typedef enum {
#define SIM_PHASE_ENUM(id, name, field) SIM_PHASE_##id,
    SIM_PHASE_LIST(SIM_PHASE_ENUM)
#undef SIM_PHASE_ENUM
        SIM_PHASE_COUNT
} sim_phase;

const char *sim_phase_name(sim_phase phase);

/* The sweeps a step runs: what (contacts, ATM triples) over what (a map's plan, a culled list).
 * A plan's blocks are counted on the host; a list's, by the backend (on the device for CUDA). */
typedef enum {
    SIM_SWEEP_PAIR_PLAN,     /* contacts, every block of the pair map's plan (or the full sweep) */
    SIM_SWEEP_PAIR_LIST,     /* contacts, the culled tile-pair list */
    SIM_SWEEP_TRIPLET_PLAN,  /* ATM, every block of the triplet map's plan */
    SIM_SWEEP_TRIPLET_LIST,  /* ATM, the cut-off's tile-triple list */
    SIM_SWEEP_PAIR_NLIST,    /* contacts, the bodies' neighbour lists (a block: one body) */
    SIM_SWEEP_TRIPLET_NLIST, /* ATM, the cut-off's neighbour lists (a block: one body, the
                              * triples whose largest slot it is) */
    SIM_SWEEP_COUNT
} sim_sweep;

/* The lists the culled phases build, each with a capacity the stepper grows. */
typedef enum {
    SIM_LIST_TILE_PAIRS,     /* contacts: interacting tile pairs */
    SIM_LIST_SUPER_PAIRS,    /* contacts, two levels: surviving super-tile pairs */
    SIM_LIST_TCULL_SUPERS,   /* the ATM cut-off: super-tile pairs within it */
    SIM_LIST_TCULL_PAIRS,    /* the ATM cut-off: neighbour tile pairs */
    SIM_LIST_TCULL_TRIPLES,  /* the ATM cut-off: surviving tile triples */
    SIM_LIST_NEIGHBOURS,     /* neighbour lists: entries per body (count, peak: the most of one) */
    SIM_LIST_ATM_NEIGHBOURS, /* the ATM cut-off's lists: entries per body, as above */
    SIM_LIST_COUNT
} sim_list;

const char *sim_list_name(sim_list list); /* "the tile-pair list", ... */

/* A list length the host does not know (it stays on the device): such a sweep is never sliced. */
#define SIM_STEP_ON_DEVICE UINT64_MAX

/* Flags of a primitive's call. */
enum {
    SIM_STEP_RECORD = 1u, /* a step's own (or set-up's) pass: its counts go into the frame's */
    SIM_STEP_SORTED = 2u, /* the step sorted: the first recorded list after it is the regrow base */
    SIM_SLICE_FIRST = 4u, /* a sweep's first slice: it starts the sweep (clears what it sums) */
    SIM_SLICE_LAST = 8u,  /* its last slice: it finishes the sweep (its forces are complete) */
    SIM_STEP_REBUILD = 16u, /* the neighbour lists (contacts' and the ATM cut-off's) are rebuilt
                             * whatever the displacements */
    SIM_STEP_ADVANCE = 32u  /* a step's contact sweep: friction's histories advance by dt (the
                             * forces alone evaluate them as they are) */
};

/* One list as a backend counted it; `active` 0: the list is not built this frame. */
typedef struct {
    uint64_t count;  /* entries the last recorded build found (also those past the capacity) */
    uint64_t peak;   /* the most over the frame's recorded builds */
    uint64_t sorted; /* count at the first recorded build after the last sort (regrow base) */
    uint64_t cap;    /* entries it holds */
    uint64_t all;    /* the whole simplex: it never needs more */
    int active;
} sim_list_count;

/* What a backend counted over a frame, read at its one sync. */
typedef struct {
    sim_list_count list[SIM_LIST_COUNT];
    int pair_fallback_steps;    /* steps whose contact list was incomplete: swept everything */
    int triplet_fallback_steps; /* the same for the cut-off's lists */
    int inexact; /* some count is a lower bound (built from a list that overflowed) */
    /* neighbour lists */
    int nlist_rebuilds;       /* recorded steps that rebuilt them */
    int nlist_fallback_steps; /* steps whose lists had overflowed: the tile pairs were swept */
    uint64_t nlist_bytes;     /* the lists' memory now (entries, counts, build positions) */
    /* the ATM cut-off's neighbour lists: recorded steps that rebuilt them, their entries at the
     * last recorded build (the sum over bodies), their memory now */
    int atm_rebuilds;
    uint64_t atm_entries, atm_bytes;
    /* Summed over the frame's recorded sweeps of culled contacts (tiles or lists): the pair tests
     * they made and the touching pairs they found (each pair once). */
    uint64_t candidates, contacts;
} sim_step_counts;

/* What a frame (or a force computation) runs, decided once at its start. */
typedef struct {
    int culled;   /* contacts over the culled list: the SORT and CULL phases run */
    int listed;   /* culled over neighbour lists: the NEIGHBOURS phase runs */
    int tculled;  /* ATM over the cut-off's list: the TRIPLET_CULL phase runs */
    int tlisted;  /* ... over its neighbour lists (tculled too), not its tile triples */
    int triplets; /* ATM forces on */
    int ranks;    /* several ranks: the REDUCE phase runs */
    int friction; /* friction on: bodies spin, contacts keep histories (commit_history) */
    int wrapped;  /* periodic axes and a wrap primitive: the WRAP phase runs */
} sim_step_shape;

/* The primitives a backend gives the stepper. Every one enqueues work and returns at once on
 * an asynchronous backend (CUDA: on one stream, in call order); on a synchronous one (the CPU)
 * it does the work. Marks are ids in [0, marks) of the last begin_frame. All return SIM_OK or
 * an error whose message names the call. */
typedef struct sim_step_ops {
    /* Before a frame's steps or a force computation: buffers for what `shape` runs, marks
     * [0, marks) usable, the frame's counters (peaks, fallbacks, instability) cleared. */
    sim_status (*begin_frame)(sim_backend *b, const sim_step_shape *shape, int marks,
                              sim_error *err);
    /* A mark where the work enqueued so far ends (CUDA: an event; CPU: the host clock); the
     * host waits for one; the time between two, once both are reached [ms]. */
    sim_status (*mark)(sim_backend *b, int id, sim_error *err);
    sim_status (*wait_mark)(sim_backend *b, int id, sim_error *err);
    sim_status (*elapsed)(sim_backend *b, int from, int to, double *ms, sim_error *err);
    /* The phases. */
    sim_status (*verlet_first)(sim_backend *b, sim_error *err);
    /* Centres back into the box on the periodic axes; called only when some axis is. NULL: the
     * backend's verlet_first wraps them itself (CUDA: in the drift's pass), and WRAP is not
     * marked (its time is FIRST's). */
    sim_status (*wrap)(sim_backend *b, sim_error *err);
    sim_status (*sort)(sim_backend *b, sim_error *err);
    sim_status (*cull)(sim_backend *b, unsigned flags, sim_error *err);
    /* The neighbour lists from the tile-pair list: rebuilt when a body moved more than half the
     * skin since their build, or when flags hold SIM_STEP_REBUILD (then cull had it too). */
    sim_status (*neighbours)(sim_backend *b, unsigned flags, sim_error *err);
    /* Blocks [begin, end) of the sweep, with SIM_SLICE_* flags; a list the host does not know
     * is swept whole (begin 0, end SIM_STEP_ON_DEVICE); a rank of several sweeps its share of
     * a plan (begin 0, end the plan's blocks: ranks are never sliced). */
    sim_status (*sweep)(sim_backend *b, sim_sweep sweep, uint64_t begin, uint64_t end,
                        unsigned flags, sim_error *err);
    sim_status (*triplet_cull)(sim_backend *b, unsigned flags, sim_error *err);
    sim_status (*reduce)(sim_backend *b, sim_error *err);
    sim_status (*body_forces)(sim_backend *b, sim_error *err);
    /* Body forces and the second half kick of step `step` of the frame (0-based). A backend
     * that checks the state on the host may answer SIM_UNSTABLE (the step is then done). */
    sim_status (*verlet_second)(sim_backend *b, int step, sim_error *err);
    /* The frame's one sync: the work done, the counters read. SIM_UNSTABLE with a message
     * naming the body when the state blew up (counts filled all the same). */
    sim_status (*end_frame)(sim_backend *b, const sim_step_shape *shape, sim_step_counts *counts,
                            sim_error *err);
    /* The lists rebuilt at the current positions, untimed and unrecorded, and their counts
     * (count only) read with a sync. NULL: counts are never inexact. */
    sim_status (*measure)(sim_backend *b, const sim_step_shape *shape, sim_step_counts *counts,
                          sim_error *err);
    /* A list reallocated with `cap` entries (its contents are rebuilt every step); *grown 0:
     * no memory for it, the old size kept (the frame then says capped). NULL: lists that grow
     * themselves as they fill (no capacity to manage). */
    sim_status (*grow)(sim_backend *b, sim_list list, uint64_t cap, int *grown, sim_error *err);
    /* Save what a step changes before a long step (*saved 0: no memory for it; the step then
     * runs whole); put it back after the step was cut short. */
    sim_status (*save)(sim_backend *b, int *saved, sim_error *err);
    sim_status (*restore)(sim_backend *b, sim_error *err);
    /* Facts: a list sweep's blocks as the host knows them now (SIM_STEP_ON_DEVICE: it does
     * not); the rate the machine is assumed to sweep at before it has been timed [pair checks
     * or triples per ms], cautiously low, so that a sweep is sliced when it might be long;
     * whether this backend culls tile triples now. */
    uint64_t (*list_blocks)(const sim_backend *b, sim_sweep sweep);
    double (*guess_rate)(const sim_backend *b, sim_sweep sweep);
    int (*culls_triplets)(const sim_backend *b);
    /* Friction: the contact histories this step wrote (its contact sweep and its walls)
     * become the last step's, which the next step reads. Called at the end of every step that
     * completed, with friction on; never for the forces alone or a step rolled back. NULL: a
     * backend without friction (last in the table, so that tables written before it say so). */
    sim_status (*commit_history)(sim_backend *b, sim_error *err);
    /* Whether the ATM cut-off sweeps its neighbour lists now (sim_backend_atm_listing and the
     * backend's support): triplet_cull then builds them when stale, sweep takes
     * SIM_SWEEP_TRIPLET_NLIST. NULL: tile triples (a table written before it). */
    int (*lists_triplets)(const sim_backend *b);
    /* A short step (not saved: never sliced, the flag not read inside it) as one unit of work:
     * step_begin before its first phase says whether this backend gathers the step (*unit 1;
     * CUDA: captures its work into a graph, where the step's shape allows); step_end after the
     * step's last mark, only when *unit was 1, launches it whole (keep 1) or drops it (keep 0:
     * the step failed; the error is the step's). NULL (both): phases are enqueued as they come. */
    sim_status (*step_begin)(sim_backend *b, const sim_step_shape *shape, int *unit,
                             sim_error *err);
    sim_status (*step_end)(sim_backend *b, int keep, sim_error *err);
    /* 1: a mark costs the step nothing (the CPU's host clock), so every step marks each phase and
     * the phases are measured, never spread (SIM_PHASE_TIMING_SAMPLED is then EVERY); 0: a mark
     * costs the device time (a CUDA event), and steps are sampled. */
    int marks_free;
} sim_step_ops;

/* A sweep's measured rate [blocks / ms], valid for the plan it was measured on. */
typedef struct {
    int map;
    uint32_t tile;
    uint64_t blocks; /* a plan's; 0 for a list (its length changes every step) */
    double blocks_per_ms;
} sim_sweep_rate;

/* When the next culled step sorts: due (asked for), or after `every` steps since the last. */
typedef struct {
    int sort_due;
    int steps_since_sort;
} sim_sort_clock;

/* The stepper's state, in every backend's header (backend_impl.h). */
typedef struct {
    const sim_step_ops *ops;
    sim_sort_clock clock, saved_clock;
    int rebuild_due; /* the next listed step rebuilds its neighbour lists (both kinds) whatever
                      * they say */
    int capped[SIM_LIST_COUNT];           /* a list could not grow (memory): sticky */
    sim_sweep_rate rate[SIM_SWEEP_COUNT]; /* measured rates */
    double step_ms_est;                   /* the last frame's time per step; <= 0: none yet */
    /* the current frame's marks: for each mark id, the phase it ends, the sweep and the blocks
     * it swept (for rates), the steps' last marks and whether each sorted */
    int mark_cap, marks;
    unsigned char *mark_phase, *mark_sweep;
    uint64_t *mark_blocks;
    int step_cap;
    int *step_end;
    unsigned char *step_sorted, *step_split;
    /* the step under way marks each phase's end (split); else only its own end, and its time is
     * spread over the phases at the frame's end (sim_backend_config.phase_timing), in the
     * proportions of the sampled steps, kept here (split steps that did not sort, older ones
     * decayed: SIM_STEP_SAMPLE_DECAY) with their sum; steps_run: steps since set-up (the sample's
     * hash) */
    int split;
    double phase_pool[SIM_PHASE_COUNT], phase_pool_sum;
    sim_step_shape pool_shape; /* the shape the pool's samples ran (another empties it) */
    uint64_t steps_run;
    double forces_ms[SIM_PHASE_COUNT]; /* the last forces alone, phase by phase (every list built) */
} sim_stepper;

/* Mark ids: a sliced sweep's start and its ring of slice ends, then the frame's marks. */
enum { SIM_MARK_SWEEP = 0, SIM_MARK_SLICE = 1, SIM_MARK_FRAME = SIM_MARK_SLICE + 3 };

/* A step's time expected before any was run [ms], from the last forces alone (set-up's: a step's
 * sweeps with every list built): their sweeps and body forces as measured, the drift as long as
 * the body forces' pass, a re-sort every sort_every steps, and the lists' builds once every
 * rebuild_every steps where lists keep them (every step where nothing does). 0: no forces yet. */
double sim_step_estimate_ms(const sim_backend *b, double rebuild_every);

/* Whether step k of a frame of `steps` is a sampled one (SIM_PHASE_TIMING_SAMPLED: its phases
 * marked one by one; stepper.c's split_step says which and why): count is the step's number since
 * set-up (1 for the first), pool_empty whether no step was sampled yet. */
int sim_step_sampled(uint64_t count, int k, int steps, int pool_empty);

/* A backend's stepper, before its first force computation: no sort yet (the first culled step
 * sorts), nothing timed. */
void sim_stepper_init(sim_stepper *s, const sim_step_ops *ops);
void sim_stepper_free(sim_stepper *s);

/* Advances params.steps_per_frame steps (sim_backend_run_frame's contract, nbsim/internal/backend.h): the
 * run_frame of every stepped backend. */
sim_status sim_step_frame(sim_backend *b, sim_frame_timing *t, sim_error *err);
/* The forces at the current positions (set-up, a new state, a new model), sorting first when
 * due; the lists grown for them. watched: the backend's stop flag stops it (SIM_INTERRUPTED;
 * nothing is restored: set-up then makes no backend), read as in a frame's first step. */
sim_status sim_step_forces(sim_backend *b, int watched, sim_error *err);
/* The next culled force computation sorts first (culling turned on, a new state, new buffers). */
void sim_step_request_sort(sim_stepper *s);
/* The next listed step rebuilds the neighbour lists (new parameters: the skin may change). */
void sim_step_request_rebuild(sim_stepper *s);

#ifdef __cplusplus
}
#endif

#endif /* SIM_STEPPER_H */
