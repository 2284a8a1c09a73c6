/* SPDX-License-Identifier: MIT
 * nbsim — the colours of map pictures, shared by `nbsim maps --png` and the viewer's map inset:
 * one hue per launch, shaded by where a block comes in its launch's order; grey is kept for
 * waste. Plain C, no GL: the map inspector (app/maps) links it without the viewer. */
#ifndef RENDER_MAP_PALETTE_H
#define RENDER_MAP_PALETTE_H

#include <stdint.h>

#include "nbsim/map_cover.h"

typedef struct {
    uint8_t r, g, b;
} render_rgb;

/* Hues before they repeat (launch % RENDER_MAP_HUES). */
#define RENDER_MAP_HUES 10

/* Launch `launch`'s hue at shade s: s < 0 darkens (s = -1: black), s > 0 lightens toward white
 * (s = 1: white). */
render_rgb render_map_hue(int launch, float s);
/* Block number `local` of a launch (counted from its first block): six shades, dark to light,
 * cycling in launch order, so neighbouring blocks differ and the order of the walk shows. */
render_rgb render_map_block_colour(int launch, uint64_t local);
/* A position in a launch's order, 0 (its first block) .. 1 (its last): one continuous ramp over
 * the same range of shades, for pictures whose cells hold many blocks. */
render_rgb render_map_order_colour(int launch, double order);

/* A cover (nbsim/map_cover.h) as RGBA pixels, side x side x 4 bytes, row I top down: each cell
 * in its launch's hue (per block when the cells are single tiles, else by the mean order of its
 * blocks); above the diagonal the bounding box's idle blocks in grey stripes (transparent for
 * maps without them); a cell no block reached near-black when every block was run (only a
 * broken map leaves one), transparent when the blocks were sampled. */
void render_map_cover_rgba(const sim_map_cover *c, uint8_t *rgba);
/* sim_map_cover_light's shares as RGBA: white, more opaque the larger the share of the cell's
 * tile pairs listed; cells with none transparent. */
void render_map_lit_rgba(const sim_map_cover *c, const double *share, uint8_t *rgba);

#endif /* RENDER_MAP_PALETTE_H */
