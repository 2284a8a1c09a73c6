/* SPDX-License-Identifier: MIT
 * nbsim — the map pictures' colours. */
#include "map_palette.h"

#include <string.h>

/* Paul Tol's bright and vibrant schemes, no grey: grey means waste. */
static const render_rgb hues[RENDER_MAP_HUES] = {
    {0x44, 0x77, 0xAA}, {0xEE, 0x66, 0x77}, {0x22, 0x88, 0x33}, {0xCC, 0xBB, 0x44},
    {0x66, 0xCC, 0xEE}, {0xAA, 0x33, 0x77}, {0xEE, 0x77, 0x33}, {0x00, 0x99, 0x88},
    {0x99, 0x99, 0x33}, {0xEE, 0x33, 0x77}};

/* The shades a launch runs through, darkest to lightest. */
#define SHADE_DARK (-0.45f)
#define SHADE_LIGHT 0.52f

render_rgb render_map_hue(int launch, float s) {
    render_rgb h = hues[(launch % RENDER_MAP_HUES + RENDER_MAP_HUES) % RENDER_MAP_HUES];
    float r = h.r, g = h.g, b = h.b;
    if (s < 0.0f) {
        r *= 1.0f + s, g *= 1.0f + s, b *= 1.0f + s;
    } else {
        r += (255.0f - r) * s, g += (255.0f - g) * s, b += (255.0f - b) * s;
    }
    render_rgb out = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    return out;
}

render_rgb render_map_block_colour(int launch, uint64_t local) {
    static const float shade[6] = {SHADE_DARK, -0.27f, -0.09f, 0.12f, 0.32f, SHADE_LIGHT};
    return render_map_hue(launch, shade[local % 6u]);
}

render_rgb render_map_order_colour(int launch, double order) {
    order = order < 0.0 ? 0.0 : order > 1.0 ? 1.0 : order;
    return render_map_hue(launch, SHADE_DARK + (SHADE_LIGHT - SHADE_DARK) * (float)order);
}

/* Grey for the bounding box's idle blocks, in two tones so the stripes read as "not work". */
static const render_rgb waste_dark = {0x58, 0x5C, 0x64}, waste_light = {0x74, 0x78, 0x80};
/* A tile of the domain no sampled block produced: only a broken map leaves one when exact. */
static const render_rgb hole = {0x10, 0x10, 0x10};

static void put(uint8_t *px, render_rgb c, uint8_t alpha) {
    px[0] = c.r;
    px[1] = c.g;
    px[2] = c.b;
    px[3] = alpha;
}

void render_map_cover_rgba(const sim_map_cover *c, uint8_t *rgba) {
    for (uint32_t row = 0; row < c->side; ++row) {
        for (uint32_t col = 0; col < c->side; ++col) {
            const sim_map_cover_cell *a = &c->cell[row * c->side + col];
            uint8_t *px = &rgba[(row * c->side + col) * 4u];
            if (col > row) {
                const render_rgb w = (row + col) % 4u < 2u ? waste_dark : waste_light;
                put(px, w, c->waste ? 255 : 0);
            } else if (a->launch < 0) {
                put(px, hole, c->exact ? 255 : 0); /* sampled: a cell the sample missed */
            } else if (c->per_block) {
                put(px, render_map_block_colour(a->launch, a->block), 255);
            } else {
                put(px, render_map_order_colour(a->launch, a->order), 255);
            }
        }
    }
}

void render_map_lit_rgba(const sim_map_cover *c, const double *share, uint8_t *rgba) {
    const uint32_t cells = c->side * c->side;
    memset(rgba, 0, (size_t)cells * 4u);
    const render_rgb white = {0xFF, 0xFF, 0xF0};
    for (uint32_t k = 0; k < cells; ++k) {
        if (share[k] > 0.0) {
            put(&rgba[k * 4u], white, (uint8_t)(90.0 + 165.0 * (share[k] > 1.0 ? 1.0 : share[k])));
        }
    }
}
