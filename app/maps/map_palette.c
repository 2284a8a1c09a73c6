/* SPDX-License-Identifier: MIT
 * nbsim — the map pictures' colours. */
#include "map_palette.h"

/* Paul Tol's bright and vibrant schemes, no grey: grey means waste. */
static const app_rgb hues[APP_MAP_HUES] = {
    {0x44, 0x77, 0xAA}, {0xEE, 0x66, 0x77}, {0x22, 0x88, 0x33}, {0xCC, 0xBB, 0x44},
    {0x66, 0xCC, 0xEE}, {0xAA, 0x33, 0x77}, {0xEE, 0x77, 0x33}, {0x00, 0x99, 0x88},
    {0x99, 0x99, 0x33}, {0xEE, 0x33, 0x77}};

/* The shades a launch runs through, darkest to lightest. */
#define SHADE_DARK (-0.45f)
#define SHADE_LIGHT 0.52f

app_rgb app_map_hue(int launch, float s) {
    app_rgb h = hues[(launch % APP_MAP_HUES + APP_MAP_HUES) % APP_MAP_HUES];
    float r = h.r, g = h.g, b = h.b;
    if (s < 0.0f) {
        r *= 1.0f + s, g *= 1.0f + s, b *= 1.0f + s;
    } else {
        r += (255.0f - r) * s, g += (255.0f - g) * s, b += (255.0f - b) * s;
    }
    app_rgb out = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    return out;
}

app_rgb app_map_block_colour(int launch, uint64_t local) {
    static const float shade[6] = {SHADE_DARK, -0.27f, -0.09f, 0.12f, 0.32f, SHADE_LIGHT};
    return app_map_hue(launch, shade[local % 6u]);
}

app_rgb app_map_order_colour(int launch, double order) {
    order = order < 0.0 ? 0.0 : order > 1.0 ? 1.0 : order;
    return app_map_hue(launch, SHADE_DARK + (SHADE_LIGHT - SHADE_DARK) * (float)order);
}
