/* SPDX-License-Identifier: MIT
 * nbsim — a run's choices of backend, maps, tile, culling and lists (sim_backend_config, what
 * the session takes and reports), and what a frame reports back: its timing by phase and the
 * energies. The backends behind them are private (nbsim/internal/backend.h: the session's and
 * `nbsim bench`'s interface). */
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#include <signal.h>

#include "nbsim/maps.h"
#include "nbsim/multi.h"
#include "nbsim/state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SIM_BACKEND_CPU, SIM_BACKEND_CUDA } sim_backend_kind;

/* Bodies per triplet tile in every backend, whatever the pair tile (config.tile): a block of
 * 32^3 = 32768 triples is already ~1.3M instructions of work, one tile per warp width lets the
 * per-pair sums rotate through the lanes with shuffles (triplet_kernels.cu), and small tiles
 * keep the coinciding-tile waste (blocks with I == J or J == K do about half or a sixth of the
 * work) at ~3/n of the blocks. */
#define SIM_TRIPLET_TILE 32u

/* Instructions the CUDA triplet kernel issues per triple of its blocks (32^3 per block), from
 * its sm_90 SASS: the loop's 34.1 per triple plus the pair terms, the reductions and the map
 * per block (triplet_kernels.cu and bench/README.md say how it was counted). `nbsim bench
 * triplets` reports it and divides the GPU's issue rate by it for the triplets' ceiling. */
#define SIM_TRIPLET_KERNEL_INSTR 39.0

/* Bodies per pair tile (rho) the pair kernels are built for: one list for the kernels' dispatch,
 * every check and every message. */
#define SIM_PAIR_TILE_LIST(X) X(32) X(64) X(128)
#define SIM_PAIR_TILE_NAMES "32, 64 or 128"
int sim_pair_tile_valid(uint32_t tile);

/* What runs the pair phase: one of the pair thread maps (a sim_pair_map value), or
 * SIM_PAIR_FULL, the nbody-style sweep over all N^2 ordered pairs without symmetry (CUDA only;
 * the baseline that shows what symmetry buys). One value with one name wherever it is shown. */
typedef int sim_pair_choice;
#define SIM_PAIR_FULL ((sim_pair_choice)SIM_PAIR_MAP_COUNT)
#define SIM_PAIR_CHOICE_COUNT (SIM_PAIR_MAP_COUNT + 1)
const char *sim_pair_choice_name(sim_pair_choice choice);  /* the map's name, or "full" */
const char *sim_pair_choice_label(sim_pair_choice choice); /* the map's label, or the sweep's */
int sim_pair_choice_from_name(const char *name);           /* -1 when unknown */

/* Culling (contacts in O(N), exact; sim/cull/cull.h says why): the backend keeps the bodies sorted
 * along a space-filling curve, so each tile of `tile` consecutive bodies is a compact blob; each
 * step it boxes every tile, a pass placed by the pair map keeps only the tile pairs whose boxes
 * overlap, and the contact kernel sweeps that list. The touching pairs are exactly the full
 * sweep's. Off, every tile pair is swept (what the maps are studied under). SIM_PAIR_FULL is a
 * brute-force sweep by nature: with it nothing is culled (timing.culled says so), whatever
 * `cull` says; switching back to a map culls again. Everything the user sees (read_state,
 * export_positions, energies, forces, body indices in messages) stays in the user's order. */
/* How the neighbour lists hold a pair (sim/nlist/nlist.h): in one body's list only, each pair
 * swept once with atomics on the other body ("half"), or in both, each body summing its own force
 * without atomics ("full"). DEFAULT is SIM_NLIST_DEFAULT_KIND, chosen by measurement
 * (scripts/gpu_nlist.sh: bench/results/nvidia-h100/nlist.md, "Half against full lists"): full
 * is clearly faster on a resting dense pack, whose lists are kept for many steps; elsewhere the
 * two are within a few per cent. On the falling lattice, rebuilt at every step, half lists won
 * while lists were built from the culled tile pairs (half the writes; the table's -tiles rows);
 * built from the cell grid, as now, their cheaper build is paid back by a slower sweep. Full:
 * the resting and slow scenes granular users run for long. */
/* CELLS: no lists at all: every step bins the bodies into a grid of cells one touch wide and
 * finds each body's contacts in those of the 27 cells around it that can hold one
 * (sim/nlist/grid_build.cuh), each touching pair once, the way to go where lists would be rebuilt
 * at (nearly) every step: on the falling lattice its whole step is a little over half of full
 * lists' at 65,536 and at 262,144 (bench/results/nvidia-h100/cells_once.md). The CUDA backend on
 * one rank without friction, where the grid
 * fits; elsewhere (the CPU reference, several ranks, friction: its histories live beside the
 * lists' entries) CELLS means DEFAULT's lists. DEFAULT on that CUDA path starts with full lists
 * and takes the cells, and back, by the rebuilds it counts (sim/nlist/nlist.h:
 * sim_nlist_cadence). */
typedef enum { SIM_NLIST_DEFAULT, SIM_NLIST_HALF, SIM_NLIST_FULL, SIM_NLIST_CELLS } sim_nlist_kind;
#define SIM_NLIST_DEFAULT_KIND SIM_NLIST_FULL
/* With friction DEFAULT is half lists, also chosen by measurement (both kinds alternating,
 * bench/results/nvidia-h100/friction_half_lists.md): a frictional contact costs far more than a
 * test, and a half list computes each once (one spring read and written) where a full list
 * computes it at both ends: a quarter off the falling lattice's step at 262,144, a fifth at
 * 65,536, and no slower on the resting pack of 1,048,576. */
#define SIM_NLIST_DEFAULT_FRICTION_KIND SIM_NLIST_HALF
/* The kind lists take under these parameters: kind itself, or DEFAULT's choice for them (CELLS
 * with friction too). */
sim_nlist_kind sim_nlist_kind_for(sim_nlist_kind kind, const sim_params *p);
const char *sim_nlist_kind_name(sim_nlist_kind kind); /* "half", "full", "cells", "default" */
int sim_nlist_kind_from_name(const char *name);       /* the enum's value; -1 when unknown */


/* How a frame's time is split into its phases (sim_frame_timing's per-phase fields). On the GPU a
 * mark at the end of each phase is an event between two kernels (the work drains first), which
 * costs a short step a measurable share of its time (bench/results/nvidia-h100/phase_marks.md).
 * SAMPLED (the default) marks each phase of about one step in ten (sim/step/stepper.h:
 * SIM_STEP_SAMPLE_EVERY, a hashed choice) and of every step that re-sorts, and only the end of
 * the others; their whole time (measured, as every step's is) is spread over the phases in the
 * proportions of the sampled steps. EVERY marks each phase of every step. The CPU reference's
 * marks (its clock) cost nothing: it marks every phase of every step either way. Steps and frames
 * are timed exactly either way, and the phases add up to the step. */
typedef enum { SIM_PHASE_TIMING_SAMPLED, SIM_PHASE_TIMING_EVERY } sim_phase_timing;
const char *sim_phase_timing_name(sim_phase_timing t); /* "sampled", "every" */
int sim_phase_timing_from_name(const char *name);      /* the enum's value; -1 when unknown */

typedef struct {
    sim_backend_kind kind;
    sim_pair_choice pair_map;    /* how pair tiles are placed (CPU emulates the tiling), or full */
    sim_triplet_map triplet_map; /* how triplet tiles are placed */
    uint32_t tile;               /* bodies per pair tile (rho): SIM_PAIR_TILE_NAMES */
    int cpu_threads;             /* CPU backend: OpenMP threads, 0 = default */
    int cull;                    /* 1 (default): cull tile pairs by their boxes; 0: full sweep */
    int cull_levels;        /* 0 auto (two above SIM_CULL_FLAT_MAX_TILES tiles), 1 or 2 passes */
    int sort_every;         /* re-sort every this many steps; 0: sim_cull_sort_every_default() */
    /* Neighbour lists (params.skin > 0 or auto, culled: sim/nlist/nlist.h): their kind. */
    sim_nlist_kind nlist;
    sim_phase_timing phase_timing; /* which steps' phases are marked one by one (above) */
    sim_multi_config multi; /* several GPUs or processes (multi.h); zeros: alone */
    /* A flag another party raises to stop the work under way (a signal handler's), read with a
     * plain volatile load; NULL: none. sim_backend_create and sim_backend_run_frame say what
     * it stops. */
    const volatile sig_atomic_t *stop;
    /* Tests' and nbsim bench's hooks (nbsim/internal/backend.h: sim_backend_tuning), never a
     * user's choice; NULL: none. A backend copies them when it is created. */
    const struct sim_backend_tuning *tuning;
} sim_backend_config;

sim_backend_config sim_backend_config_default(void);

/* Facts about a configuration, each written once (every caller asks these, none re-derives):
 * - culls: culling on and a pair map (the full sweep never culls);
 * - culls triplets: culls, and params p have triplets on with an ATM cut-off (tile triples are
 *   then culled by the cut-off, and no triplet map's plan is needed);
 * - needs CUDA: the pair choice is a CUDA kernel variant with no CPU twin (full). */
int sim_config_culls(const sim_backend_config *c);
int sim_config_culls_triplets(const sim_backend_config *c, const sim_params *p);
int sim_pair_choice_needs_cuda(sim_pair_choice choice);

/* The phases of a step as a frame's timing reports them, in step order: id, the sim_frame_timing
 * field, its name (the log's column is NAME_ms but for the older pair_ms and nlist_ms, the
 * summary's row, the JSON's key) and what it holds. Each phase's time is in one field, and they
 * add up to step_ms, the whole step (the marks between them are contiguous). */
#define SIM_FRAME_PHASE_LIST(X)                                                                    \
    X(DRIFT, drift_ms, "drift", "first half kick and drift (cells: the binning, the last kick)")   \
    X(SORT, sort_ms, "sort", "re-sorting the bodies (culled, when due)")                           \
    X(CULL, cull_ms, "cull", "tile boxes and culling passes (culled)")                             \
    X(LISTS, nlist_ms, "lists", "neighbour lists: displacement checks and rebuilds")               \
    X(CELLS, cells_ms, "cells", "the cells placed and filled (contacts swept from them)")          \
    X(PAIR, pair_ms, "pair", "the contact sweep alone")                                            \
    X(ATM_LISTS, atm_list_ms, "atm_lists", "the ATM cut-off's neighbour lists: checks, rebuilds")  \
    X(TRIPLET_CULL, triplet_cull_ms, "triplet_cull", "the ATM cut-off's tile triples (--skin 0)")  \
    X(TRIPLET, triplet_ms, "triplet", "the ATM sweep")                                             \
    X(COMM, comm_ms, "comm", "exchange: forces summed over ranks, or halos and migration (space)") \
    X(KICK, kick_ms, "kick", "walls, gravity and the second half kick")

typedef enum {
#define SIM_FRAME_PHASE_ENUM(id, field, name, what) SIM_FRAME_PHASE_##id,
    SIM_FRAME_PHASE_LIST(SIM_FRAME_PHASE_ENUM)
#undef SIM_FRAME_PHASE_ENUM
        SIM_FRAME_PHASE_COUNT
} sim_frame_phase;

/* Timings of one frame (steps_per_frame steps), each summed over the frame's steps.
 * CUDA: events around each kernel on the main stream; CPU: monotonic host clock.
 * The phases (SIM_FRAME_PHASE_LIST) and two sums of them: integrate_ms = drift_ms + kick_ms, and
 * contact_ms = sort_ms + cull_ms + nlist_ms + cells_ms + pair_ms (what culling is measured by). */
typedef struct {
    double pair_ms, triplet_ms, integrate_ms, step_ms;
    double sort_ms, cull_ms;
    double drift_ms, kick_ms, cells_ms, atm_list_ms; /* phases (above) */
    double contact_ms;                               /* a sum (above) */
    /* Per step. Not culled: all launches of the pair map. Culled: pair_blocks = tile pairs swept
     * (one block's work each) in the last step, none wasted; the map places the culling pass. */
    uint64_t pair_blocks, pair_blocks_wasted;
    uint64_t triplet_blocks, triplet_blocks_wasted; /* per step; 0 when triplets are off */
    int steps;
    /* Culling; all 0 when the frame was not culled. */
    int culled;                               /* 1: the frame's steps ran the culled pipeline */
    int cull_levels;                          /* 1 or 2 passes */
    uint64_t cull_blocks, cull_blocks_wasted; /* per step: the map-placed (top) culling pass */
    uint64_t tile_pairs;                      /* interacting tile pairs, last step of the frame */
    uint64_t tile_pairs_total;                /* T2(tiles): what the full sweep covers */
    uint64_t super_pairs;                     /* levels 2: surviving super-tile pairs, last step */
    int sorts;                                /* re-sorts during the frame */
    /* Steps whose tile-pair (or super-pair) list overflowed: they swept the whole simplex
     * instead (exact, slow); the list has been grown for the next frame. cull_capped: the list
     * could not grow (GPU memory), so such steps will recur. A notice, never lost pairs. */
    int cull_fallback_steps;
    int cull_capped;
    /* Multi-GPU (multi.h): the all-reduces of the force sums, events around them on the stream
     * (the rank that arrives last waits least: the multi backend reports the least over its
     * ranks, the transfer; step_ms is the slowest rank's). 0 alone. */
    double comm_ms;
    int ranks; /* ranks (GPUs) the frame ran on, 1 alone */
    int graph_steps; /* steps launched as one unit (CUDA: a graph; tuning.stream_launches) */
    int phase_steps; /* steps whose phases were marked one by one (config.phase_timing); the
                      * others' time is spread over the phases in the marked steps' proportions */
    /* The ATM cut-off, culled (sim/cull/triplet_cull.h: with config.cull, a pair map, triplets on
     * and atm_cutoff > 0, only the tile triples whose three tile pairs have boxes of centres within
     * the cut-off are swept); all 0 when the frame's triplets were not culled. triplet_ms is then
     * the ATM kernel over those tile triples alone, as pair_ms is the contact sweep alone;
     * triplet_blocks is tile_triples, none wasted. */
    int triplet_culled;
    double triplet_cull_ms; /* boxes of centres, neighbour pairs, rows, tile-triple list (over
                             * its neighbour lists: 0, their checks and builds are atm_list_ms) */
    uint64_t tile_triples;       /* surviving tile triples (I >= J >= K), last step */
    uint64_t tile_triples_total; /* T3(triplet tiles): what the full sweep covers */
    uint64_t triplet_tile_pairs; /* neighbour tile pairs (I >= J, boxes within the cut-off) */
    /* Steps whose tile-pair or tile-triple list overflowed: they tested the simplex's tile pairs
     * and triples from the boxes instead (exact, slower); the lists have been grown. */
    int triplet_fallback_steps;
    int triplet_cull_capped; /* a triplet list could not grow (GPU memory) */
    /* Pair tests and touching pairs per step (the frame's mean): culled, what the sweeps tested
     * (tile pairs x tile^2, or neighbour-list entries) and found (each pair once); unculled, the
     * plan's tile pairs x tile^2 (full: N^2), touching pairs not counted (0). */
    uint64_t candidate_tests;
    uint64_t contacts;
    /* Neighbour lists (sim/nlist/nlist.h); all 0 when the frame's contacts did not use them.
     * nlist_ms: the NEIGHBOURS phase (list builds, or the launches that found nothing to do;
     * swept from the cells it is cells_ms, and nlist_ms 0); the CULL phase then boxes and culls
     * only when the lists are rebuilt. */
    int nlist;                /* 1: contacts swept per-body neighbour lists */
    int nlist_cells;          /* 1: built from a cell grid (no culling pass: no map places it) */
    int nlist_direct;         /* 1: no lists, the contacts swept straight from the cells */
    double skin;              /* [m] */
    double nlist_ms;          /* summed over the frame's steps */
    int nlist_rebuilds;       /* steps of the frame that rebuilt the lists */
    int nlist_fallback_steps; /* steps that swept the tile pairs (or cells): a list overflowed */
    int nlist_capped;         /* the lists could not grow (memory): such steps will recur */
    uint32_t nlist_cap;       /* entries a body's list holds */
    uint32_t nlist_peak;      /* the most entries one body needed this frame */
    uint64_t nlist_bytes;     /* the lists' memory (entries, counts, build positions) */
    /* The ATM cut-off over its neighbour lists (sim/nlist/atm_list.h: the default with a skin
     * > 0 and one rank, on the CPU reference and on one GPU in a box of walls; --skin 0, several
     * ranks and a periodic GPU keep the tile triples): triplet_culled is 1, the
     * tile-triple counts above 0; atm_list_ms is the lists' displacement checks and builds,
     * triplet_ms the sweep of the lists, triplet_blocks the bodies (a block: one body's list).
     * All 0 when the frame did not use them. */
    int atm_lists;
    int atm_list_rebuilds;     /* steps of the frame that rebuilt them */
    uint32_t atm_list_cap;     /* entries a body's list holds */
    uint32_t atm_list_peak;    /* the most entries one body needed this frame */
    uint64_t atm_list_entries; /* entries at the last build: neighbours within R + skin, j < i */
    uint64_t atm_list_bytes;   /* the lists' memory (entries, counts, build positions) */
} sim_frame_timing;

/* [J]: kinetic = translation, rotational = spin (I = 2/5 m r^2), contact = the contacts' springs
 * (normal, and with friction the tangential and rolling ones), atm, gravity = gravity's
 * potential and the walls' springs; total = their sum. */
typedef struct {
    double kinetic, contact, atm, gravity, total;
    double rotational;
} sim_energy;

/* Bodies in an even sample of n, every `every`-th: ceil(n / every). */
static inline uint32_t sim_sample_count(uint32_t n, uint32_t every) {
    return (uint32_t)(((uint64_t)n + every - 1u) / every);
}
/* The smallest `every` whose sample of n bodies holds at most max (>= 1) of them. */
static inline uint32_t sim_sample_every(uint32_t n, uint32_t max) {
    return n <= max ? 1u : (uint32_t)(((uint64_t)n + max - 1u) / max);
}

/* The culling pass as planned for the current map and N, for the viewer's map inset: the top
 * pass's map plan covers ceil(items / SIM_CULL_GROUP) groups per side, each block one group pair
 * (G_I, G_J) of 16 x 16 items, one thread each (sim_cull_thread_pair). levels 1: items are
 * tiles, so tile pair (I, J) was tested by the block of group (I / 16, J / 16); levels 2: items
 * are super-tiles of SIM_CULL_SUPER tiles, so (I, J) was tested as part of super pair
 * (I / 16, J / 16), itself tested by the block of group (I / 256, J / 256). SIM_CULL_GROUP and
 * SIM_CULL_SUPER are private: programs ask sim_cull_group_size() and sim_cull_super_size()
 * (size_limits.h). */
typedef struct {
    int active;               /* the next step culls (config.cull and a pair map, not full) */
    int levels;               /* 1 or 2 */
    uint32_t tiles;           /* ceil(N / tile) */
    uint32_t super_tiles;     /* levels 2: ceil(tiles / SIM_CULL_SUPER); else 0 */
    uint32_t items;           /* what the top pass pairs: tiles (levels 1) or super-tiles */
    const sim_map_plan *plan; /* the top pass's plan (NULL when not active); valid until the
                               * maps change */
} sim_cull_info;

/* Number of usable CUDA devices; 0 without a device or driver (never fails). */
int sim_cuda_device_count(void);

/* What the current CUDA device is: for the benchmarks' header and meta.txt, the issue ceiling,
 * and the autotuner's cache key. */
typedef struct {
    char name[256];
    int device;             /* CUDA ordinal */
    int cc_major, cc_minor; /* compute capability */
    int sm_count;
    int fp32_lanes_per_sm; /* FP32 lanes per SM by architecture (128 on Hopper), 0 = unknown */
    int clock_khz;         /* peak SM clock [kHz] */
    int mem_clock_khz;     /* peak memory clock [kHz] */
    int bus_width_bits;
    int l2_bytes;
    uint64_t global_mem_bytes;
    uint64_t free_mem_bytes; /* when queried */
    int driver_version;      /* e.g. 13000 = 13.0 */
    int runtime_version;
} sim_device_info;

/* Fills *dev for the current CUDA device. SIM_NO_DEVICE without a device or driver. */
sim_status sim_cuda_device_query(sim_device_info *dev, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_CONFIG_H */
