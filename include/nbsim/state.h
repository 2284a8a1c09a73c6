/* SPDX-License-Identifier: MIT
 * nbsim — host-side body state and simulation parameters (double precision; the CPU reference
 * works on these directly, the CUDA backend converts them to float4 arrays on the device). */
#ifndef SIM_STATE_H
#define SIM_STATE_H

#include "nbsim/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bodies as two arrays of 4-vectors (structure of arrays of 16/32-byte vectors, never an array
 * of structs mixing hot and cold fields): pos = (x, y, z, radius) [m], vel = (vx, vy, vz, mass)
 * [m/s, kg]. */
typedef struct sim_state {
    uint32_t n;
    sim_vec4d *pos;
    sim_vec4d *vel;
} sim_state;

sim_status sim_state_alloc(sim_state *state, uint32_t n, sim_error *err);
void sim_state_free(sim_state *state);
sim_status sim_state_copy(sim_state *dst, const sim_state *src, sim_error *err);
/* Radius and mass must be positive and finite (the integrator divides by the mass, contacts
 * need a radius). Non-finite positions or velocities pass: the next frame reports them as
 * SIM_UNSTABLE, like a blow-up. Backends call it after their cheaper checks (memory). */
sim_status sim_state_check_bodies(const sim_state *state, sim_error *err);

/* Pairs of bodies whose centres coincide exactly: the contact between them has no direction, so
 * they feel no force from each other (a scene file's mistake, usually a line pasted twice).
 * O(N log N) by sorting hashes of the positions. Returns the number of pairs and, when there is
 * one, the first such pair in *i, *j (i < j); 0 also when there is no memory to sort. */
uint64_t sim_state_coincident_pairs(const sim_state *state, uint32_t *i, uint32_t *j);

/* Model and integration parameters. Units are SI-like but arbitrary as long as consistent. */
/* A number that may be left to a default ("auto"): value counts only when set is 1. */
typedef struct {
    double value;
    int set;
} sim_optional_value;

typedef struct sim_params {
    double dt;            /* time step [s]; 0 = derive from the contact time (t_c / 50) */
    double stiffness;     /* contact stiffness k [N/m] (linear) or [N/m^1.5] (Hertz) */
    double restitution;   /* normal restitution coefficient e in (0, 1] */
    int hertz;            /* 0: linear spring-dashpot, 1: Hertzian k*delta^1.5 */
    sim_vec3d gravity;    /* [m/s^2] */
    double box_half;      /* half-width of the cubic box [m]; walls at +-box_half */
    double atm_nu;        /* ATM strength nu [J m^9] */
    double atm_cutoff;    /* ATM cut-off on each of the three distances [m]; 0 = none */
    int triplets;         /* evaluate ATM triplet forces */
    int steps_per_frame;  /* integration steps per frame (per log row) */

    /* Friction (docs/friction.md); zero-initialised, the frictionless model. */
    double friction;            /* sliding friction coefficient mu; 0 = none (no rotation) */
    double rolling_friction;    /* rolling resistance coefficient mu_r; 0 = none */
    double stiffness_ratio;     /* tangential / normal stiffness; 0 = SIM_DEFAULT_STIFFNESS_RATIO */
    /* tangential / normal dashpot factor when .set; .set 0: auto, sqrt(stiffness ratio) (the
     * normal damping ratio). One field, so that copying the parameter copies whether it is set. */
    sim_optional_value tangential_damping;
    /* Neighbour lists (sim/nlist/nlist.h): the skin [m] when .set (0: no lists, the culled tile
     * pairs are swept as before); .set 0: auto, chosen by the backend from the speeds and the
     * step. It changes no force, only how contacts are found. */
    sim_optional_value skin;
    /* Periodic axes, bit 0 x, 1 y, 2 z (SIM_PERIODIC_ALL: all three); 0: walls on every axis.
     * A periodic axis has no walls: bodies leaving one face enter at the other, and pairs and
     * triples interact through their minimum image (box side 2 box_half). */
    int periodic;
} sim_params;

sim_params sim_params_default(void);

#ifdef __cplusplus
}
#endif

#endif /* SIM_STATE_H */
