/* SPDX-License-Identifier: MIT
 * nbsim tests — the scenes the ATM cut-off culling tests share (CPU and GPU), and the body
 * triples within a cut-off. Header-only (static functions); include after ensure.h. */
#ifndef NBSIM_TEST_TCULL_SCENES_H
#define NBSIM_TEST_TCULL_SCENES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "nbsim/scene.h"

#include "test_rng.h"

typedef struct {
    char name[96];
    sim_state s;
    sim_params p;
} tscene;

/* Every value rounded to float, so the GPU (float) and the CPU (double) start from the same
 * numbers. */
static inline void tscene_round(tscene *sc) {
    for (uint32_t i = 0; i < sc->s.n; ++i) {
        double *v[8] = {&sc->s.pos[i].x, &sc->s.pos[i].y, &sc->s.pos[i].z, &sc->s.pos[i].w,
                        &sc->s.vel[i].x, &sc->s.vel[i].y, &sc->s.vel[i].z, &sc->s.vel[i].w};
        for (int k = 0; k < 8; ++k) {
            *v[k] = (double)(float)*v[k];
        }
    }
}

/* A built-in scene (`triplets`: the cluster of 0.5 m spheres at pitch 1.1 m; `gas`: pitch 2 m)
 * with triplets on and the cut-off R [m]. */
static inline tscene tscene_builtin(const char *kind, uint32_t n, double cutoff, uint64_t seed) {
    tscene sc;
    memset(&sc, 0, sizeof sc);
    sc.p = sim_params_default();
    sim_error err;
    if (sim_scene_builtin(kind, n, seed, &sc.p, &sc.s, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    sc.p.triplets = 1;
    sc.p.atm_cutoff = cutoff;
    sc.p.atm_nu = sc.p.atm_nu != 0.0 ? sc.p.atm_nu : 0.5;
    snprintf(sc.name, sizeof sc.name, "%s cut-off %.6g", kind, cutoff);
    tscene_round(&sc);
    return sc;
}

/* n bodies at rest on the integer grid of `side` per row (spacing `scale` m, radius 0.3 m: no
 * contacts), in shuffled order. Squared distances are integers (times scale^2), exact in float
 * and double: many triples sit exactly on a cut-off of 2 or sqrt(8), among them equilateral
 * triangles of side sqrt(2) ((0,0,0), (1,1,0), (1,0,1)) and sqrt(8) (the same doubled). */
static inline tscene tscene_grid(uint32_t n, uint32_t side, double scale, double cutoff,
                                 uint64_t seed) {
    tscene sc;
    memset(&sc, 0, sizeof sc);
    sc.p = sim_params_default();
    sim_error err;
    if (sim_state_alloc(&sc.s, n, &err) != SIM_OK) {
        exit(1);
    }
    for (uint32_t i = 0; i < n; ++i) {
        sc.s.pos[i] = (sim_vec4d){scale * (double)(i % side), scale * (double)(i / side % side),
                                  scale * (double)(i / (side * side)), 0.3};
        sc.s.vel[i] = (sim_vec4d){0.0, 0.0, 0.0, sim_sphere_mass(0.3, 1000.0)};
    }
    for (uint32_t i = n; i > 1; --i) {
        const uint32_t j = (uint32_t)test_rnd(&seed, 0.0, (double)i);
        const sim_vec4d t = sc.s.pos[i - 1];
        sc.s.pos[i - 1] = sc.s.pos[j];
        sc.s.pos[j] = t;
    }
    sc.p.box_half = scale * (double)side + 2.0;
    sc.p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    sc.p.triplets = 1;
    sc.p.atm_nu = 0.5;
    sc.p.atm_cutoff = cutoff;
    snprintf(sc.name, sizeof sc.name, "grid x%.9g cut-off %.17g", scale, cutoff);
    tscene_round(&sc);
    return sc;
}

static inline void tscene_free(tscene *sc) {
    sim_state_free(&sc->s);
}

/* Whether the CPU reference counts body triple (i, j, k): sim_atm_forces_d's own cut-off test
 * (edges a = x_j - x_i, b = x_k - x_j, c = -(a + b)). */
static inline int tscene_triple_counts(const sim_vec4d *pos, uint32_t i, uint32_t j, uint32_t k,
                                       double cutoff) {
    const double ax = pos[j].x - pos[i].x, ay = pos[j].y - pos[i].y, az = pos[j].z - pos[i].z;
    const double bx = pos[k].x - pos[j].x, by = pos[k].y - pos[j].y, bz = pos[k].z - pos[j].z;
    const double cx = -(ax + bx), cy = -(ay + by), cz = -(az + bz);
    const double c2 = cutoff * cutoff;
    return ax * ax + ay * ay + az * az <= c2 && bx * bx + by * by + bz * bz <= c2 &&
           cx * cx + cy * cy + cz * cz <= c2;
}

/* A jittered cubic lattice of side^3 spheres of radius 0.2 m (pitch 1 m) moving at up to v m/s,
 * no walls or gravity, elastic contacts (so that the forces are functions of the positions alone,
 * as the comparison at a state needs) and a weak ATM strength (no triple collapses), skin 0.2 m,
 * the default step, in shuffled order. */
static inline tscene tscene_moving_lattice(uint32_t side, double v, double cutoff, uint64_t seed) {
    tscene sc;
    memset(&sc, 0, sizeof sc);
    sc.p = sim_params_default();
    const uint32_t n = side * side * side;
    sim_error err;
    if (sim_state_alloc(&sc.s, n, &err) != SIM_OK) {
        exit(1);
    }
    for (uint32_t i = 0; i < n; ++i) {
        sc.s.vel[i] = (sim_vec4d){test_rnd(&seed, -v, v), test_rnd(&seed, -v, v),
                                  test_rnd(&seed, -v, v), test_rnd(&seed, 0.5, 2.0)};
        const uint32_t c = (uint32_t)((uint64_t)i * 2654435761u % n); /* a prime: a permutation */
        /* sites at -side/2 + 1/2 + k: inside a periodic box of half-width side / 2 */
        sc.s.pos[i].x = (double)(c % side) + 0.5 - 0.5 * side + test_rnd(&seed, -0.15, 0.15);
        sc.s.pos[i].y = (double)(c / side % side) + 0.5 - 0.5 * side + test_rnd(&seed, -0.15, 0.15);
        sc.s.pos[i].z = (double)(c / side / side) + 0.5 - 0.5 * side + test_rnd(&seed, -0.15, 0.15);
        sc.s.pos[i].w = 0.2;
    }
    sc.p.triplets = 1;
    sc.p.atm_nu = 0.0005;
    sc.p.restitution = 1.0; /* no damping: contacts are functions of the positions alone */
    sc.p.atm_cutoff = cutoff;
    sc.p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    sc.p.box_half = 1e6;
    sc.p.steps_per_frame = 40;
    sc.p.skin.value = 0.2;
    sc.p.skin.set = 1;
    snprintf(sc.name, sizeof sc.name, "moving lattice v %g cut-off %g", v, cutoff);
    tscene_round(&sc);
    return sc;
}

#endif /* NBSIM_TEST_TCULL_SCENES_H */
