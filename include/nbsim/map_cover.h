/* SPDX-License-Identifier: MIT
 * nbsim — which launch and block of a map's plan covers each part of its domain, summarised on
 * a grid of at most SIM_MAP_COVER_SIDE x SIM_MAP_COVER_SIDE cells: the tile-pair triangle (2-D),
 * or one layer I of the tetrahedron of tile triples (3-D). Per cell: the launch most of its
 * blocks come from, the mean position of its blocks in their launch's order (0 first .. 1 last),
 * and the first block that reached it, so the walk of the map can be shown at every size. The
 * viewer's map inset paints it (render/map_palette.h: one hue per launch, as `nbsim maps --png`),
 * a binding returns it as arrays.
 *
 * Small plans are run block by block; large ones on a low-discrepancy sample of their blocks
 * (SIM_MAP_COVER_SAMPLES), which leaves every cell dozens of samples. */
#ifndef SIM_MAP_COVER_H
#define SIM_MAP_COVER_H

#include "nbsim/maps.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_MAP_COVER_SIDE 128u          /* cells per side, at most */
#define SIM_MAP_COVER_BLOCK_TILES 32u    /* up to this n a cell is one tile, shown per block */
#define SIM_MAP_COVER_EXACT (1u << 20)   /* plans with at most this many blocks: every block */
#define SIM_MAP_COVER_SAMPLES (1u << 19) /* blocks sampled from larger plans */

/* One cell. Cells above the diagonal (column > row) are never covered: there the bounding box
 * launches its wasted blocks (sim_map_cover.waste). */
typedef struct {
    int32_t launch; /* the launch most of the cell's blocks come from; -1: no block reached it */
    uint32_t hits;  /* blocks run (or sampled) that cover the cell */
    float order;    /* mean position of those blocks in their launches' order, 0 .. 1 */
    uint64_t block; /* the first block that reached it, numbered from its launch's first block */
} sim_map_cover_cell;

typedef struct {
    int dim, map;      /* the plan's */
    uint32_t n;        /* tiles per side of the picture */
    uint32_t span;     /* tiles per side of one item of the plan (1: the plan's items are tiles) */
    uint32_t layer;    /* 3-D: the layer I drawn (n - 1, the largest) */
    uint32_t side;     /* cells per side */
    uint32_t per_cell; /* tiles per cell side */
    int exact;         /* every block was run (else a sample) */
    int per_block;     /* cells are single tiles, each shown by its block */
    int waste;         /* the bounding box: blocks above the diagonal are launched for nothing */
    int launches;
    uint64_t blocks, useful; /* of the plan */
    /* side x side cells, row by row (row I of the triangle, or J of the layer, first) */
    sim_map_cover_cell cell[SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE];
} sim_map_cover;

/* Summarises plan into *c. SIM_OUT_OF_MEMORY when the scratch cannot be allocated. */
sim_status sim_map_cover_build(sim_map_cover *c, const sim_map_plan *plan, sim_error *err);
/* The same for a plan over groups of span x span tiles (2-D; the culling pass: one block per
 * group pair of 16 x 16 tiles, or of super-tiles), drawn over the tile-pair triangle of `tiles`
 * tiles, so that its cells line up with the tile pairs the pass tested. */
sim_status sim_map_cover_build_grouped(sim_map_cover *c, const sim_map_plan *plan, uint32_t tiles,
                                       uint32_t span, sim_error *err);

/* The cell (row, column) of tile pair (i, j) of a 2-D cover. */
static inline uint32_t sim_map_cover_index(const sim_map_cover *c, uint32_t i, uint32_t j) {
    return (i / c->per_cell) * c->side + j / c->per_cell;
}

/* The share of each cell's tile pairs (2-D) that the list holds, into share (side x side): 0 for
 * cells with none of them. Returns the number of cells with some. */
uint32_t sim_map_cover_light(const sim_map_cover *c, const sim_tile2 *pairs, uint64_t count,
                             double *share);

#ifdef __cplusplus
}
#endif

#endif /* SIM_MAP_COVER_H */
