/* SPDX-License-Identifier: MIT
 * nbsim — private to the CPU reference: the culled pair pipeline in double, built like the CUDA
 * one (sim/cull/cull.h): Morton order, tile boxes, culling passes that enumerate the map's blocks and
 * threads exactly as the kernels do, and the resulting list of interacting tile pairs. The CPU
 * backend keeps its state in the user's order; the culled pair phase works on copies sorted by
 * `order` (slot -> body), gathered each step. */
#ifndef SIM_CPU_CULL_H
#define SIM_CPU_CULL_H

#include "step/backend_impl.h"

typedef struct {
    double lo[3], hi[3];
} sim_cull_boxd;

/* A growable list of tile (or super-tile) pairs. */
typedef struct {
    sim_tile2 *v;
    size_t count, cap;
} sim_pair_list;

typedef struct {
    uint32_t n, tile;
    uint32_t *order;       /* slot -> body, sorted by Morton key (identity before the first sort) */
    uint32_t *keys, *tmp;  /* radix sort scratch, 2n entries each */
    sim_vec4d *pos, *vel;  /* sorted copies (slot order) for the pair sweep */
    sim_cull_boxd *boxes;  /* per tile */
    sim_cull_boxd *supers; /* per super-tile (two-level cull) */
    sim_pair_list tiles, super_pairs;
} sim_cpu_cull;

/* Appends p; SIM_OUT_OF_MEMORY names the list (`what`: "tile-pair", ...). */
sim_status sim_pair_list_push(sim_pair_list *l, sim_tile2 p, const char *what, sim_error *err);

/* The blocks of a pair map's plan as the kernels launch them (launch by launch, x fastest),
 * yielding the group pair of each block that holds one:
 *     sim_plan_walk w = sim_plan_walk_begin(plan, map);
 *     sim_tile2 group;
 *     while (sim_plan_walk_next(&w, &group)) { ... } */
typedef struct {
    const sim_map_plan *plan;
    sim_pair_map map;
    int launch;     /* the launch being walked */
    uint64_t block; /* its next block, x fastest */
} sim_plan_walk;

sim_plan_walk sim_plan_walk_begin(const sim_map_plan *plan, sim_pair_map map);
/* The next block's group pair into *group; 0 when every block has been visited. */
int sim_plan_walk_next(sim_plan_walk *w, sim_tile2 *group);

/* Allocates for n bodies (order = identity); SIM_OUT_OF_MEMORY names what failed. */
sim_status sim_cpu_cull_init(sim_cpu_cull *c, uint32_t n, uint32_t tile, sim_error *err);
void sim_cpu_cull_free(sim_cpu_cull *c);

/* Sorts the bodies along the Morton curve of [-box_half, box_half]^3 (stable LSD radix sort of
 * the 30-bit keys of the float centres, the keys the GPU computes). When is the stepper's
 * decision (sim/step/stepper.h). */
void sim_cpu_cull_sort(sim_cpu_cull *c, const sim_vec4d *pos, double box_half);

/* Gathers the sorted copies, boxes the tiles and runs the culling pass(es) of b's plan: after it,
 * c->tiles holds every tile pair (slot tiles, I >= J) whose boxes overlap. */
sim_status sim_cpu_cull_build(sim_cpu_cull *c, const sim_backend *b, const sim_vec4d *pos,
                              const sim_vec4d *vel, sim_error *err);
/* Its two halves: the sorted copies of pos and vel; the boxes of the copies (each body's interval
 * widened by pad, the neighbour lists' half skin: sim/nlist/nlist.h; 0: the radius alone) and the
 * culling passes. */
void sim_cpu_cull_gather(sim_cpu_cull *c, const sim_vec4d *pos, const sim_vec4d *vel);
sim_status sim_cpu_cull_passes(sim_cpu_cull *c, const sim_backend *b, double pad, sim_error *err);

#endif /* SIM_CPU_CULL_H */
