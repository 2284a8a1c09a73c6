/* SPDX-License-Identifier: MIT
 * nbsim — private to the CPU reference: the neighbour lists in double (nlist.h), the twin of the
 * CUDA ones: the same layout (slot-major, a count per body, the positions of the build), built
 * over the same sorted copies (cpu_cull.h) from a grid of cells (cell_grid.h) or from the culled
 * tile pairs, with the same capacity per body, overflow and growth, so that the reference
 * exercises the policy the GPU runs. The grid build lists a body's neighbours in ascending slot
 * order, the tile build's order under the default map (test_cpu_nlist: the same bits). */
#ifndef SIM_CPU_NLIST_H
#define SIM_CPU_NLIST_H

#include "nlist/cell_grid.h"
#include "nlist/nlist.h"
#include "physics/physics.h"

typedef struct {
    uint32_t n, stride, cap; /* slots, entries between neighbour k and k + 1, entries per body */
    int half;                /* each pair in its larger slot's list only */
    uint32_t *nbr;           /* slot-major: nbr[k * stride + s], slots */
    uint32_t *count;         /* per slot: neighbours found at the last build (> cap: overflowed) */
    sim_vec4d *ref;          /* slot positions at the last build */
    double skin;             /* of the last build [m] */
    int built;               /* the lists hold a build for the current slots */
    int overflow;            /* some body had more than cap neighbours at the last build */
    uint32_t most;           /* the most neighbours of one body at the last build */
    uint64_t entries;        /* entries the lists hold (sum of min(count, cap)) */
    /* The box's periods (NULL: walls on every axis), the owner's, set after init: builds,
     * sweeps and the displacement check take minimum images through them. */
    const sim_period_d *per;
    /* The grid build's cells (allocated on first use, grown as needed): per slot its cell, the
     * slots binned by cell (ascending within a cell), each cell's first bin (cells + 1), and one
     * body's candidates while they are sorted. */
    uint32_t *cell_of, *binned, *cell_start, *found;
    uint32_t cell_cap, found_cap;
} sim_cpu_nlist;

/* Lists for n slots with cap entries each (nothing built); SIM_OUT_OF_MEMORY names them. */
sim_status sim_cpu_nlist_init(sim_cpu_nlist *l, uint32_t n, uint32_t cap, int half, sim_error *err);
void sim_cpu_nlist_free(sim_cpu_nlist *l);
/* cap entries per body from now on (the contents are lost: the next step rebuilds). */
sim_status sim_cpu_nlist_resize(sim_cpu_nlist *l, uint32_t cap, sim_error *err);
/* Bytes the lists hold: entries, counts, the positions of the build and the grid's cells. */
uint64_t sim_cpu_nlist_bytes(const sim_cpu_nlist *l);

/* Whether the lists must be rebuilt for slots at pos with this skin: never built, another skin,
 * or a body moved more than half the skin since the build. */
int sim_cpu_nlist_stale(const sim_cpu_nlist *l, const sim_vec4d *pos, double skin);
/* Builds the lists from tile pairs (I >= J, tiles of `tile` slots, the last one partial) over
 * slot positions pos, with this skin: body i's list gets j when |x_i - x_j| < r_i + r_j + skin
 * (sim_nlist_near_d): half lists only into the larger slot's, full lists into both. ref = pos. */
void sim_cpu_nlist_build(sim_cpu_nlist *l, const sim_tile2 *pairs, size_t pair_count, uint32_t tile,
                         const sim_vec4d *pos, double skin);
/* The same lists from a grid of cells one reach wide in p's box (sim_cell_grid_shape): O(N), ~30
 * tests per body where the tile pairs test hundreds. 0, nothing built, where no grid fits or its
 * cells cannot be allocated: the caller builds from the tile pairs. */
int sim_cpu_nlist_build_grid(sim_cpu_nlist *l, const sim_params *p, const sim_vec4d *pos,
                             double skin);

/* What a sweep of slots found: touching pairs (each pair once) and the entries tested. */
typedef struct {
    uint64_t contacts, tests;
} sim_cpu_nlist_tally;

/* The contact forces of slots [begin, end) over their lists, added into f (slot order; half
 * lists add the reaction to the neighbour too); returns the contact energy of the pairs swept
 * (each pair once); counts into *tally. */
double sim_cpu_nlist_sweep(const sim_cpu_nlist *l, uint32_t begin, uint32_t end,
                           const sim_vec4d *pos, const sim_vec4d *vel, const sim_physics *ph,
                           sim_vec3d *f, sim_cpu_nlist_tally *tally);

/* The touching pairs the lists hold (each pair once), as slot pairs (i > j) to `emit`. */
void sim_cpu_nlist_contacts(const sim_cpu_nlist *l, const sim_vec4d *pos,
                            void (*emit)(void *ctx, uint32_t i, uint32_t j), void *ctx);

#endif /* SIM_CPU_NLIST_H */
