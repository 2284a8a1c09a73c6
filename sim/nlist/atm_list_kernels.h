/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA side: the ATM cut-off's neighbour lists on the device (atm_list.h:
 * what they hold and why the triples swept from them are the tile sweep's) and the host drivers
 * of their kernels. A listed ATM evaluation runs, on one stream, over bodies in slot order (sorted
 * along the Morton curve, so a triplet tile of 32 slots is compact):
 *   sim_gpu_atm_list_build    tile boxes of centres | per body, the bodies within R + s, from the
 *                             tiles whose boxes are within R + s (half or full lists)
 *   sim_gpu_atm_list_forces   the ATM forces of every triple within R, from the lists
 * The build is asynchronous and counts what it could not store (counts->most > cap);
 * sim_gpu_atm_list_build_complete syncs once and grows the lists until they hold every neighbour:
 * a sweep needs complete lists (it has no fallback).
 *
 * Walls only: the build (body test and tile-box distance) and the sweep form separations raw,
 * x_j - x_i, never through the minimum image (physics.h), so in a box with periodic axes every
 * triple across a face would be missing. The CUDA stepper must not take these kernels when
 * params.periodic != 0: it keeps the tile triples there (triplet_cull.h, triplet_kernels.cu:
 * minimum images, tested periodic). Making them periodic: sim_min_image_in_f in the body test,
 * sim_tcull_near_pf's periodic box distance, and the sweep's sides as the tile sweep's (a and b
 * imaged, a triple whose pair images disagree dropped). */
#ifndef SIM_ATM_LIST_KERNELS_H
#define SIM_ATM_LIST_KERNELS_H

#include "cuda/device_state.h"
#include "nlist/atm_list.h"
#include "physics/physics.h"

typedef struct {
    uint32_t most;      /* the most neighbours of one body at the last build (> cap: incomplete) */
    uint32_t pad[3];
    unsigned long long triples; /* triples within the cut-off the last counting sweep found */
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

/* Allocates lists for n slots, cap entries each; SIM_OUT_OF_MEMORY names them (nothing kept).
 * Free releases all of it (safe on a zeroed struct). */
sim_status sim_gpu_atm_list_alloc(sim_gpu_atm_list *l, uint32_t n, uint32_t cap, int half,
                                  cudaStream_t s, sim_error *err);
void sim_gpu_atm_list_free(sim_gpu_atm_list *l);
/* cap entries per body from now on (contents lost); SIM_OUT_OF_MEMORY keeps the old lists. */
sim_status sim_gpu_atm_list_realloc(sim_gpu_atm_list *l, uint32_t cap, sim_error *err);
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

/* Adds the ATM forces of every triple within ph's cut-off (> 0) into b->force, from complete
 * lists built for that cut-off; energy (d_, may be NULL) gets the ATM energy added; count_triples
 * counts the triples within the cut-off into counts->triples (zeroed first; an atomic per warp;
 * full lists count each triple three times, once from each body). */
sim_status sim_gpu_atm_list_forces(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                   const sim_physics_f *ph, double *energy, int count_triples,
                                   cudaStream_t s, sim_error *err);

#endif /* SIM_ATM_LIST_KERNELS_H */
