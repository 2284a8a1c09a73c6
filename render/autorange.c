/* SPDX-License-Identifier: MIT
 * nbsim — smooth automatic colour range. */
#include "autorange.h"

#include <math.h>
#include <stdlib.h>

#define RANGE_EASE_RATE 3.0f /* [1/s]: settles in about a second */

void render_autorange_init(render_autorange *r, int from_zero) {
    r->lo = 0.0f;
    r->hi = 1.0f;
    r->valid = 0;
    r->from_zero = from_zero;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void render_autorange_update(render_autorange *r, float *samples, uint32_t count, float dt_s) {
    uint32_t finite = 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (isfinite(samples[i])) {
            samples[finite++] = samples[i];
        }
    }
    if (finite == 0) {
        return;
    }
    qsort(samples, finite, sizeof *samples, cmp_float);
    /* 1st and 99th percentiles: a few very fast bodies must not wash out everyone else. */
    float lo = r->from_zero ? 0.0f : samples[(size_t)(0.01 * (finite - 1))];
    float hi = samples[(size_t)(0.99 * (finite - 1))];
    if (!(hi > lo)) {
        /* One value (monodisperse radii, bodies at rest): centre it in a small range. */
        float pad = fabsf(hi) * 0.05f + 1e-6f;
        lo = r->from_zero ? 0.0f : hi - pad;
        hi = hi + pad;
    }
    if (!r->valid) {
        r->lo = lo;
        r->hi = hi;
        r->valid = 1;
        return;
    }
    float a = 1.0f - expf(-RANGE_EASE_RATE * (dt_s > 0.0f ? dt_s : 0.0f));
    r->lo += (lo - r->lo) * a;
    r->hi += (hi - r->hi) * a;
}
