/* SPDX-License-Identifier: MIT
 * nbsim — an automatic colour range that follows a changing distribution smoothly: robust
 * percentiles of a sample, eased over time so colours do not flicker frame to frame. */
#ifndef RENDER_AUTORANGE_H
#define RENDER_AUTORANGE_H

#include <stdint.h>

typedef struct {
    float lo, hi; /* current range */
    int valid;
    int from_zero; /* lo pinned at 0 (magnitudes such as speed) */
} render_autorange;

void render_autorange_init(render_autorange *r, int from_zero);
/* Feeds a sample of the values (reordered in place). dt_s: time since the last update [s];
 * the range moves a fraction of the way per call, all the way on the first. */
void render_autorange_update(render_autorange *r, float *samples, uint32_t count, float dt_s);

#endif /* RENDER_AUTORANGE_H */
