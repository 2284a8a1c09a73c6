/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA side: the ATM cut-off's neighbour lists on the device (atm_list.h:
 * what they hold and why the triples swept from them are the tile sweep's) and the host drivers
 * of their kernels. A listed ATM evaluation runs, on one stream, over bodies in slot order (sorted
 * along the Morton curve, so a triplet tile of 32 slots is compact):
 *   sim_gpu_atm_list_build    tile boxes of centres | per body, the bodies within R + s, from the
 *                             tiles whose boxes are within R + s (half or full lists)
 *   sim_gpu_atm_list_forces   the ATM forces of every triple within R, from the lists
 * The build is asynchronous and counts what it could not store (counts->most > cap);
 * sim_gpu_atm_list_build_complete syncs once and grows the lists until they hold every neighbour.
 *
 * In a step (the CUDA backend's TRIPLET_CULL and TRIPLETS phases, no host sync):
 *   sim_gpu_atm_list_check    each body's displacement since the build: more than half the skin
 *                             (or NaN) raises counts->rebuild
 *   sim_gpu_atm_list_update   boxes and build, returning at once unless counts->rebuild is up or
 *                             the rebuild is forced (SIM_GPU_ATM_LIST_REBUILD)
 *   sim_gpu_atm_list_step_forces  the sweep; lowers counts->rebuild and records the frame's
 *                             counters. A body whose list overflowed at the build (count > cap)
 *                             has its triples found again from the build's tile boxes and
 *                             positions (the very test the build made): exact, in a second launch
 *                             that returns at once unless some list overflowed, paid only by the
 *                             warps that hold such a body; the stepper grows the lists at the
 *                             frame's end (frame.peak) and the next step rebuilds them.
 * A step that does not rebuild so costs, besides the sweep, four launches of which three return at
 * once on the device and the check reads 32 B per body.
 *
 * Walls only: the build (body test and tile-box distance) and the sweep form separations raw,
 * x_j - x_i, never through the minimum image (physics.h), so in a box with periodic axes every
 * triple across a face would be missing. The CUDA backend does not take these kernels when
 * params.periodic != 0 (cuda_step.cu's lists_triplets): it keeps the tile triples there
 * (triplet_cull.h, triplet_kernels.cu: minimum images, tested periodic). Making them periodic:
 * sim_min_image_in_f in the body test, sim_tcull_near_pf's periodic box distance, and the sweep's
 * sides as the tile sweep's (a and b imaged, a triple whose pair images disagree dropped). */
#ifndef SIM_ATM_LIST_KERNELS_H
#define SIM_ATM_LIST_KERNELS_H

#include "cull/cull.h"
#include "gpu/device_state.h"
#include "nlist/atm_list.h"
#include "physics/physics.h"

/* Per frame: zeroed as a whole before a frame's steps; recording launches only. */
typedef struct {
    uint32_t rebuilds;       /* steps that rebuilt the lists */
    uint32_t fallback_steps; /* steps whose lists had overflowed (some triples found from tiles) */
    uint32_t peak;           /* the most neighbours of one body over the frame's steps */
    uint32_t pad;
} sim_gpu_atm_list_frame;

typedef struct {
    uint32_t most;    /* the most neighbours of one body at the last build (> cap: incomplete) */
    uint32_t rebuild; /* a step rebuilds: raised by the check, or forced; the step's sweep lowers it */
    float reach2;     /* the last build's squared reach [m^2] (sim_atm_list_reach2_f) */
    float box_limit;  /* and its tile-box limit (sim_tcull_limit_f of reach2) */
    unsigned long long triples; /* triples within the cut-off the last counting sweep found */
    unsigned long long entries; /* neighbours of all bodies at the last build (also past cap) */
    sim_gpu_atm_list_frame frame;
} sim_gpu_atm_list_counts;

typedef struct {
    uint32_t *nbr;                   /* d_: slot-major, nbr[k * stride + i] (atm_list.h) */
    uint32_t *count;                 /* d_: neighbours of each slot at the last build */
    sim_vec4f *ref;                  /* d_: positions at the last build */
    sim_cull_box *boxes;             /* d_: boxes of centres of the triplet tiles */
    sim_gpu_atm_list_counts *counts; /* d_ */
    uint32_t n, n_tiles, stride, cap;
    int half; /* j < i only: each triple once, atomics on j and k; else full lists, no atomics */
} sim_gpu_atm_list;

/* Flags of the step's list kernels: the culling's RECORD (cull_kernels.h: a step's own launch,
 * its counts go into the frame's) and a forced rebuild (the stepper's SIM_STEP_REBUILD). */
enum { SIM_GPU_ATM_LIST_RECORD = 1u, SIM_GPU_ATM_LIST_REBUILD = 16u };

/* Allocates lists for n slots, cap entries each (build positions NaN: a step's check finds every
 * body moved, so the first step rebuilds whatever it is told); SIM_OUT_OF_MEMORY names them (nothing kept).
 * Free releases all of it (safe on a zeroed struct). */
sim_status sim_gpu_atm_list_alloc(sim_gpu_atm_list *l, uint32_t n, uint32_t cap, int half,
                                  cudaStream_t s, sim_error *err);
void sim_gpu_atm_list_free(sim_gpu_atm_list *l);
/* cap entries per body from now on (contents lost: the rebuild flag is raised on stream s);
 * SIM_OUT_OF_MEMORY keeps the old lists. */
sim_status sim_gpu_atm_list_realloc(sim_gpu_atm_list *l, uint32_t cap, cudaStream_t s,
                                   sim_error *err);
/* Bytes the lists hold: entries, counts, build positions, tile boxes. */
uint64_t sim_gpu_atm_list_bytes(const sim_gpu_atm_list *l);

/* Builds the lists of b's slots for the cut-off a2_max = sim_atm_a2_max_f(R^2) and skin [m]
 * (sim_atm_list_reach2_f), on stream s, without a sync. */
sim_status sim_gpu_atm_list_build(const sim_gpu_bodies *b, const sim_gpu_atm_list *l, float a2_max,
                                  float skin, cudaStream_t s, sim_error *err);
/* The same, then one sync: while some body had more neighbours than cap, the lists grow to that
 * many (and an eighth more) and are rebuilt. *most (may be NULL) gets the most neighbours. */
sim_status sim_gpu_atm_list_build_complete(const sim_gpu_bodies *b, sim_gpu_atm_list *l,
                                           float a2_max, float skin, cudaStream_t s,
                                           uint32_t *most, sim_error *err);

/* Adds the ATM forces of every triple within ph's cut-off (> 0) into b->force, from lists built
 * for that cut-off (complete, or overflowed: as sim_gpu_atm_list_step_forces); energy (d_, may
 * be NULL) gets the ATM energy added; count_triples
 * counts the triples within the cut-off into counts->triples (zeroed first; an atomic per warp;
 * full lists count each triple three times, once from each body). */
sim_status sim_gpu_atm_list_forces(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                   const sim_physics_f *ph, double *energy, int count_triples,
                                   cudaStream_t s, sim_error *err);

/* ---- a step's (no host sync; atm_list.h: why the triples are the tile sweep's) ---- */

/* Raises counts->rebuild when some body moved more than half the skin [m] since the build (NaN
 * counts as moved; the flag is never lowered here). */
sim_status sim_gpu_atm_list_check(const sim_gpu_bodies *b, const sim_gpu_atm_list *l, float skin,
                                  cudaStream_t s, sim_error *err);
/* The build of sim_gpu_atm_list_build when counts->rebuild is up or flags hold
 * SIM_GPU_ATM_LIST_REBUILD; otherwise its two launches return at once. RECORD: a rebuild counts
 * into counts->frame.rebuilds. */
sim_status sim_gpu_atm_list_update(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                   float a2_max, float skin, unsigned flags, cudaStream_t s,
                                   sim_error *err);
/* Adds the ATM forces of every triple within ph's cut-off into b->force, from the lists of the
 * last build for that cut-off, also when some overflowed (their bodies' triples from the build's
 * tiles and reach: exact). Lowers counts->rebuild; RECORD: the lists' most entries into
 * frame.peak and, when some overflowed, a fallback step. */
sim_status sim_gpu_atm_list_step_forces(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                        const sim_physics_f *ph, unsigned flags, cudaStream_t s,
                                        sim_error *err);

#endif /* SIM_ATM_LIST_KERNELS_H */
