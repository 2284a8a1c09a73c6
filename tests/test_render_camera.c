/* SPDX-License-Identifier: MIT
 * nbsim — the viewer's first framing (render/camera.h: render_camera_fit_bounds): the camera
 * frames the bodies' bounds, not the box. Each case projects the bounds' eight corners with the
 * camera's own matrices: every corner on screen (inside the view and the clip planes), and the
 * bounds fill the view (their picture spans most of its width or height). The whole box stays
 * within the clip planes, so orbiting shows it all. No GL: the matrices are arithmetic. */
#include "camera.h"

#include <math.h>
#include <stdio.h>

#include "ensure.h"

/* The corners' picture in normalised device coordinates: [-1, 1] is the view. */
typedef struct {
    float x0, x1, y0, y1, z0, z1;
} ndc_box;

static void mul(const float m[16], const float v[4], float out[4]) {
    for (int r = 0; r < 4; ++r) {
        out[r] = m[r] * v[0] + m[4 + r] * v[1] + m[8 + r] * v[2] + m[12 + r] * v[3];
    }
}

/* behind: NULL where every corner must be in front of the eye, else counts those that are not. */
static ndc_box project(const render_camera *c, float aspect, const float lo[3], const float hi[3],
                       int *behind) {
    float view[16], proj[16];
    render_camera_matrices(c, aspect, view, proj);
    ndc_box b = {1e30f, -1e30f, 1e30f, -1e30f, 1e30f, -1e30f};
    for (int corner = 0; corner < 8; ++corner) {
        const float p[4] = {corner & 1 ? hi[0] : lo[0], corner & 2 ? hi[1] : lo[1],
                            corner & 4 ? hi[2] : lo[2], 1.0f};
        float e[4], q[4];
        mul(view, p, e);
        mul(proj, e, q);
        if (behind != NULL && q[3] <= 0.0f) { /* not drawn: nothing to clip */
            ++*behind;
            continue;
        }
        ENSURE_MSG(q[3] > 0.0f, "a corner behind the eye (w %g)", q[3]);
        const float x = q[0] / q[3], y = q[1] / q[3], z = q[2] / q[3];
        b.x0 = fminf(b.x0, x);
        b.x1 = fmaxf(b.x1, x);
        b.y0 = fminf(b.y0, y);
        b.y1 = fmaxf(b.y1, y);
        b.z0 = fminf(b.z0, z);
        b.z1 = fmaxf(b.z1, z);
    }
    return b;
}

/* Bodies in [lo, hi] inside the box [-half, half]^3 seen in a viewport of this aspect, gravity
 * along -y. */
static void check_framing(const char *what, const float lo[3], const float hi[3], float half,
                          float aspect) {
    render_camera c;
    render_camera_init(&c, (const float[3]){0.0f, 1.0f, 0.0f});
    render_camera_fit_bounds(&c, lo, hi, half, aspect, 1);
    const ndc_box b = project(&c, aspect, lo, hi, NULL);
    const float fill = fmaxf(0.5f * (b.x1 - b.x0), 0.5f * (b.y1 - b.y0));
    printf("  %-28s aspect %.2f: the bodies span x %.2f..%.2f, y %.2f..%.2f of the view, depth "
           "%.3f..%.3f\n",
           what, aspect, b.x0, b.x1, b.y0, b.y1, b.z0, b.z1);
    ENSURE_MSG(b.x0 >= -1.0f && b.x1 <= 1.0f && b.y0 >= -1.0f && b.y1 <= 1.0f,
               "%s: corners off screen", what);
    ENSURE_MSG(b.z0 >= -1.0f && b.z1 <= 1.0f, "%s: corners clipped by depth", what);
    ENSURE_MSG(fill >= 0.85f, "%s: the bodies span only %.0f %% of the view", what, 100.0f * fill);
    /* the box's corners in front of the eye within the clip planes (on screen or not) */
    const float box_lo[3] = {-half, -half, -half}, box_hi[3] = {half, half, half};
    int behind = 0;
    const ndc_box whole = project(&c, aspect, box_lo, box_hi, &behind);
    ENSURE_MSG(behind == 8 || (whole.z0 >= -1.0f && whole.z1 <= 1.0f),
               "%s: the box reaches depth %.3f..%.3f", what, whole.z0, whole.z1);
}

/* A heap (a quarter cone 40 m across and 15 m high) in the corner of a box 117 m wide: it fills
 * the view, where the box's fit showed it across a sixth of it (and, in a portrait window, partly
 * off screen: that fit ignored the aspect). */
static void test_heap_in_a_big_box(void) {
    const float half = 58.3f;
    const float lo[3] = {-half, -half, -half},
                hi[3] = {-half + 40.0f, -half + 15.0f, -half + 40.0f};
    check_framing("heap in a corner", lo, hi, half, 1280.0f / 800.0f);
    check_framing("heap in a corner", lo, hi, half, 0.6f); /* a portrait window */
}

/* Bodies that fill the box frame as tightly as the box itself, and still fit. */
static void test_full_box(void) {
    const float lo[3] = {-10.0f, -10.0f, -10.0f}, hi[3] = {10.0f, 10.0f, 10.0f};
    check_framing("gas filling its box", lo, hi, 10.0f, 1.6f);
}

/* Thin and tall shapes, off centre, and one body. */
static void test_shapes(void) {
    const float slab_lo[3] = {-32.0f, -32.0f, -32.0f}, slab_hi[3] = {32.0f, -28.0f, 32.0f};
    check_framing("a layer on the floor", slab_lo, slab_hi, 32.0f, 1.6f);
    const float col_lo[3] = {5.0f, -50.0f, 5.0f}, col_hi[3] = {9.0f, 50.0f, 9.0f};
    check_framing("a column", col_lo, col_hi, 50.0f, 1.6f);
    const float one_lo[3] = {2.5f, -0.5f, 0.5f}, one_hi[3] = {3.5f, 0.5f, 1.5f};
    check_framing("one body", one_lo, one_hi, 40.0f, 1.6f);
}

/* The box fit (Home / F) still shows the whole box. */
static void test_box_fit(void) {
    render_camera c;
    render_camera_init(&c, (const float[3]){0.0f, 1.0f, 0.0f});
    render_camera_fit(&c, 20.0f, 1);
    const float lo[3] = {-20.0f, -20.0f, -20.0f}, hi[3] = {20.0f, 20.0f, 20.0f};
    const ndc_box b = project(&c, 1.6f, lo, hi, NULL);
    ENSURE(b.x0 >= -1.0f && b.x1 <= 1.0f && b.y0 >= -1.0f && b.y1 <= 1.0f);
    ENSURE(b.z0 >= -1.0f && b.z1 <= 1.0f);
}

static const ensure_test tests[] = {
    {"heap_in_a_big_box", test_heap_in_a_big_box},
    {"full_box", test_full_box},
    {"shapes", test_shapes},
    {"box_fit", test_box_fit},
};

ENSURE_MAIN(tests)
