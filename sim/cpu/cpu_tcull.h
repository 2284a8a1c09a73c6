/* SPDX-License-Identifier: MIT
 * nbsim — private to the CPU reference: culling tile triples by the ATM cut-off in double, built
 * like the CUDA pipeline (triplet_cull.h): boxes of centres of the triplet tiles of the sorted
 * copies (cpu_cull.h), a neighbour-pair pass through the pair map's blocks and threads (one or
 * two levels), rows of the neighbour list, and the tile triples. */
#ifndef SIM_CPU_TCULL_H
#define SIM_CPU_TCULL_H

#include "cpu/cpu_cull.h"

/* A growable list of tile triples. */
typedef struct {
    sim_tile3 *v;
    size_t count, cap;
} sim_triple_list;

typedef struct {
    uint32_t n, n_tiles, n_supers;    /* bodies, triplet tiles, super-tiles */
    sim_cull_boxd *boxes, *supers;    /* boxes of centres */
    sim_pair_list pairs, super_pairs; /* neighbour tile pairs I >= J; surviving super pairs */
    uint32_t *row_start, *row_fill;   /* n_tiles + 1 and n_tiles entries */
    uint32_t *nbr;                    /* row T = nbr[row_start[T] .. row_start[T + 1]) */
    size_t nbr_cap;
    sim_triple_list triples; /* surviving tile triples, I >= J >= K */
} sim_cpu_tcull;

/* Allocates for n bodies; SIM_OUT_OF_MEMORY names what failed (nothing kept). */
sim_status sim_cpu_tcull_init(sim_cpu_tcull *c, uint32_t n, sim_error *err);
void sim_cpu_tcull_free(sim_cpu_tcull *c);

/* Boxes the triplet tiles of pos (the sorted copies, slot order), runs b's neighbour passes
 * (b->tcull_plan, b->tcull_levels) for the cut-off R [m] and extends the pairs to triples: after
 * it, c->triples holds every tile triple whose three tile pairs have boxes within R, of the rows
 * of b's rank (all of them for one rank; triplet_cull.h, sim_tcull_mine). */
sim_status sim_cpu_tcull_build(sim_cpu_tcull *c, const sim_backend *b, const sim_vec4d *pos,
                               double cutoff, sim_error *err);

#endif /* SIM_CPU_TCULL_H */
