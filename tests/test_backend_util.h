/* SPDX-License-Identifier: MIT
 * nbsim tests — driving a sim_backend in a test: a random state, make one or stop, read back its
 * forces, compare two backends' states. Header-only (static functions); include after ensure.h. */
#ifndef NBSIM_TEST_BACKEND_UTIL_H
#define NBSIM_TEST_BACKEND_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nbsim/internal/backend.h"
#include "test_rng.h"

/* n spheres (radius 0.4-0.5 m, mass 0.5-2 kg) uniformly in a cube of half-width h, random
 * velocities of scale v, drawn from *rng (test_rng.h): dense h gives many overlaps (and some
 * with the walls at +-h). Exits 1 when the state cannot be allocated. */
static inline sim_state test_random_state(uint64_t *rng, uint32_t n, double h, double v) {
    sim_state s;
    sim_error err;
    if (sim_state_alloc(&s, n, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    /* drawn in this order: position x, y, z, radius, velocity x, y, z, mass */
    const double lo[8] = {-h, -h, -h, 0.4, -v, -v, -v, 0.5};
    const double hi[8] = {h, h, h, 0.5, v, v, v, 2.0};
    for (uint32_t i = 0; i < n; ++i) {
        double r[8];
        for (int k = 0; k < 8; ++k) {
            r[k] = test_rnd(rng, lo[k], hi[k]);
        }
        s.pos[i] = (sim_vec4d){r[0], r[1], r[2], r[3]};
        s.vel[i] = (sim_vec4d){r[4], r[5], r[6], r[7]};
    }
    return s;
}

/* A backend of config c over (p, s); when it cannot be made, the executable stops (exit 1) with
 * the scene's name and the reason. */
static inline sim_backend *test_backend_make(const sim_backend_config *c, const sim_params *p,
                                             const sim_state *s, const char *name) {
    sim_error err = {SIM_OK, ""};
    sim_backend *b = NULL;
    const sim_status st = sim_backend_create(c, p, s, &b, &err);
    ENSURE_MSG(st == SIM_OK, "%s: create: %s", name, err.message);
    if (st != SIM_OK) {
        exit(1);
    }
    return b;
}

/* A backend's F_0, the total force on each of its n bodies (caller frees). */
static inline sim_vec3d *test_backend_forces(sim_backend *b, uint32_t n) {
    sim_state s;
    sim_error err;
    (void)sim_state_alloc(&s, n, &err);
    sim_vec3d *f = malloc(n * sizeof *f);
    ENSURE(sim_backend_read_state(b, &s, f, &err) == SIM_OK);
    sim_state_free(&s);
    return f;
}

/* The largest difference of two backends' states over their n bodies: per body, the sum of
 * |dx| + |dv| over the components [m and m/s]. */
static inline double test_backend_state_diff(sim_backend *a, sim_backend *b, uint32_t n) {
    sim_state sa, sb;
    sim_error err;
    (void)sim_state_alloc(&sa, n, &err);
    (void)sim_state_alloc(&sb, n, &err);
    (void)sim_backend_read_state(a, &sa, NULL, &err);
    (void)sim_backend_read_state(b, &sb, NULL, &err);
    double d = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        d = fmax(d, fabs(sa.pos[i].x - sb.pos[i].x) + fabs(sa.pos[i].y - sb.pos[i].y) +
                        fabs(sa.pos[i].z - sb.pos[i].z) + fabs(sa.vel[i].x - sb.vel[i].x) +
                        fabs(sa.vel[i].y - sb.vel[i].y) + fabs(sa.vel[i].z - sb.vel[i].z));
    }
    sim_state_free(&sa);
    sim_state_free(&sb);
    return d;
}

#endif /* NBSIM_TEST_BACKEND_UTIL_H */
