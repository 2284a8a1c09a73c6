/* SPDX-License-Identifier: MIT
 * nbsim — the colours of map pictures, shared by `nbsim maps --png` and the viewer's map inset:
 * one hue per launch, shaded by where a block comes in its launch's order. Grey is kept for
 * waste. */
#ifndef APP_MAP_PALETTE_H
#define APP_MAP_PALETTE_H

#include <stdint.h>

typedef struct {
    uint8_t r, g, b;
} app_rgb;

/* Hues before they repeat (launch % APP_MAP_HUES). */
#define APP_MAP_HUES 10

/* Launch `launch`'s hue at shade s: s < 0 darkens (s = -1: black), s > 0 lightens toward white
 * (s = 1: white). */
app_rgb app_map_hue(int launch, float s);
/* Block number `local` of a launch (counted from its first block): six shades, dark to light,
 * cycling in launch order, so neighbouring blocks differ and the order of the walk shows. */
app_rgb app_map_block_colour(int launch, uint64_t local);
/* A position in a launch's order, 0 (its first block) .. 1 (its last): one continuous ramp over
 * the same range of shades, for pictures whose cells hold many blocks. */
app_rgb app_map_order_colour(int launch, double order);

#endif /* APP_MAP_PALETTE_H */
