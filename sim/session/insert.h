/* SPDX-License-Identifier: MIT
 * nbsim — private to sim/session/: where inserted bodies go (nbsim/insert.h says what an
 * insertion is). Everything here runs on the host, in double, from the seed and the bodies'
 * numbers, so every backend gets the same bodies. */
#ifndef SIM_SESSION_INSERT_H
#define SIM_SESSION_INSERT_H

#include "nbsim/insert.h"

/* Attempts at a free place per body before it is given up (LAMMPS's fix pour tries 50 too). */
#define SIM_INSERT_ATTEMPTS 50
/* Bodies in a row that found no place before a batch counts its region full and drops the rest
 * of its bodies untried: a rate far above what the region holds costs no more than filling it. */
#define SIM_INSERT_FULL_MISSES 100

/* The time between batches [s]: as fix pour does, the time a body inserted at the region's top
 * takes to leave its bottom, falling from the insertion velocity under gravity (without gravity,
 * crossing it at that velocity), so each batch finds the region left by the one before; rounded
 * up to whole frames, since batches are placed between frames. Neither gravity nor a velocity
 * moves the bodies out: one frame (the region fills, and the session says so). */
double sim_insert_interval(const sim_insert_def *d, const sim_params *p);

/* Whether a batch falls due at the progress's clock (within half a step of its time), and the
 * insertion has not stopped. */
int sim_insert_due(const sim_insert_def *d, const sim_insert_progress *pr, const sim_params *p);
/* Whether the insertion has stopped (its stop time or count reached). */
int sim_insert_done(const sim_insert_def *d, const sim_insert_progress *pr);

/* Places every batch due: its bodies appended to *state (grown; contacts kept), each at a place
 * where it overlaps no body (minimum images across periodic faces: a cell grid over the box, O(N)
 * per batch), else given up after SIM_INSERT_ATTEMPTS (and untried once SIM_INSERT_FULL_MISSES in
 * a row failed, or the region's volume is spent). *wanted: bodies drawn, *placed: bodies placed
 * (the rest did not fit). max_n: the most bodies the run takes (beyond: dropped too). */
sim_status sim_insert_place(const sim_insert_def *d, sim_insert_progress *pr, const sim_params *p,
                            uint32_t max_n, sim_state *state, uint64_t *wanted, uint64_t *placed,
                            sim_error *err);

/* Two of the lightest bodies the insertion can make, at its velocity, for the step's choice
 * (sim_default_dt) before any is made: pos and vel of 2. */
void sim_insert_lightest(const sim_insert_def *d, sim_vec4d pos[2], sim_vec4d vel[2]);

#endif /* SIM_SESSION_INSERT_H */
