/* SPDX-License-Identifier: MIT
 * nbsim tests — for each of the 26 directions of a periodic box (6 faces, 12 edges, 8 corners),
 * a pair of bodies overlapping along it in the middle of the box, and the same pair straddling
 * the faces of that direction: what test_periodic.c and test_periodic_friction.c compare. */
#ifndef NBSIM_PERIODIC_PAIRS_H
#define NBSIM_PERIODIC_PAIRS_H

#include "nbsim/base.h"

#define PERIODIC_PAIR_DIRECTIONS 26

/* Bodies a (radius 0.45 m) and b (0.5 m) 0.83 m apart along the unit vector of dir: an overlap
 * of 0.12 m. */
typedef struct {
    int dir[3];          /* -1, 0 or 1 per axis, not all 0 */
    sim_vec4d in[2];     /* a and b in the middle of the box */
    sim_vec4d across[2]; /* a just inside the faces of dir, b beyond them, wrapped into the box */
    sim_vec4d vel[2];    /* a's and b's (mass in w; the same in both places): they slide */
} periodic_pair;

/* The pairs of a box of half-width h periodic on every axis (h well above 1 m), dx slowest,
 * then dy, then dz, each from -1 to 1. */
void periodic_pairs_make(double h, periodic_pair out[PERIODIC_PAIR_DIRECTIONS]);

#endif /* NBSIM_PERIODIC_PAIRS_H */
