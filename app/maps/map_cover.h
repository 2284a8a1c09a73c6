/* SPDX-License-Identifier: MIT
 * nbsim — a small picture of which launch and block covers each part of a map's domain, for
 * the viewer's map inset: the tile-pair triangle (2-D), or one layer I of the tetrahedron of
 * tile triples (3-D), drawn in at most APP_MAP_COVER_SIDE x APP_MAP_COVER_SIDE cells. Colours
 * as `nbsim maps --png` (map_palette.h): one hue per launch; when a cell is one tile (n <= 32),
 * the six shades of its block; when a cell holds many tiles, the mean position of their blocks
 * in the launch's order, dark (first) to light (last), so the walk of the map shows at every
 * size. The bounding box's wasted blocks (the upper triangle of its square grid) are grey.
 *
 * Small plans are run block by block; large ones on a low-discrepancy sample of their blocks
 * (APP_MAP_COVER_SAMPLES), which leaves every cell dozens of samples. No GL: the viewer uploads
 * the pixels, the tests read them. */
#ifndef APP_MAP_COVER_H
#define APP_MAP_COVER_H

#include "nbsim/maps.h"

#define APP_MAP_COVER_SIDE 128u          /* cells per side, at most */
#define APP_MAP_COVER_BLOCK_TILES 32u    /* up to this n a cell is a tile coloured per block */
#define APP_MAP_COVER_EXACT (1u << 20)   /* plans with at most this many blocks: every block */
#define APP_MAP_COVER_SAMPLES (1u << 19) /* blocks sampled from larger plans */

typedef struct {
    int dim, map;      /* the plan's */
    uint32_t n;        /* tiles per side of the picture */
    uint32_t span;     /* tiles per side of one item of the plan (1: the plan's items are tiles) */
    uint32_t layer;    /* 3-D: the layer I drawn (n - 1, the largest) */
    uint32_t side;     /* cells per side drawn */
    uint32_t per_cell; /* tiles per cell side */
    int exact;         /* every block was run (else a sample) */
    int per_block;     /* cells are single tiles in their block's shade */
    int waste;         /* the upper triangle shows the bounding box's wasted blocks */
    int launches;
    uint64_t blocks, useful;                                   /* of the plan */
    uint8_t rgba[APP_MAP_COVER_SIDE * APP_MAP_COVER_SIDE * 4]; /* side x side, row I top down */
} app_map_cover;

/* Draws plan into *c. SIM_OUT_OF_MEMORY when the scratch cannot be allocated. */
sim_status app_map_cover_build(app_map_cover *c, const sim_map_plan *plan, sim_error *err);
/* The same for a plan over groups of span x span tiles (2-D; the culling pass: one block per
 * group pair of 16 x 16 tiles, or of super-tiles), drawn over the tile-pair triangle of `tiles`
 * tiles, so that its cells line up with the tile pairs the pass tested. */
sim_status app_map_cover_build_grouped(app_map_cover *c, const sim_map_plan *plan, uint32_t tiles,
                                       uint32_t span, sim_error *err);

/* The cell (row, column) of tile pair (i, j) of a 2-D cover. */
static inline uint32_t app_map_cover_cell(const app_map_cover *c, uint32_t i, uint32_t j) {
    return (i / c->per_cell) * c->side + j / c->per_cell;
}

/* Marks the cells holding the listed tile pairs (2-D) in rgba (side x side x 4 bytes): white,
 * more opaque the larger the share of the cell's tile pairs listed; other cells transparent.
 * Returns the number of cells lit. */
uint32_t app_map_cover_light(const app_map_cover *c, const sim_tile2 *pairs, uint64_t count,
                             uint8_t *rgba);

#endif /* APP_MAP_COVER_H */
