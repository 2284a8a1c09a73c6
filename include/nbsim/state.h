/* SPDX-License-Identifier: MIT
 * nbsim — host-side body state and simulation parameters (double precision; the CPU reference
 * works on these directly, the CUDA backend converts them to float4 arrays on the device). */
#ifndef SIM_STATE_H
#define SIM_STATE_H

#include "nbsim/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one frictional contact remembers (docs/friction.md): the tangential spring xi and the
 * rolling spring roll [m] of the contact of body i with body j < i, as seen from i (seen from j
 * the sliding spring changes sign, the rolling one does not), or of body i with wall j =
 * SIM_CONTACT_WALL(k), k = 2 axis + side (0: the wall at -box_half on x, 1: at +box_half on x;
 * 2, 3 on y; 4, 5 on z). Bodies are numbered as in the state (the scene's order). */
typedef struct {
    uint32_t i, j;
    sim_vec3d xi, roll;
} sim_state_contact;

#define SIM_CONTACT_WALL(k) (UINT32_MAX - 5u + (uint32_t)(k))
#define SIM_CONTACT_IS_WALL(j) ((j) >= SIM_CONTACT_WALL(0))
#define SIM_CONTACT_WALL_INDEX(j) ((int)((j) - SIM_CONTACT_WALL(0)))

/* Bodies as arrays of 4-vectors (structure of arrays of 16/32-byte vectors, never an array of
 * structs mixing hot and cold fields): pos = (x, y, z, radius) [m], vel = (vx, vy, vz, mass)
 * [m/s, kg], spin = (wx, wy, wz, unused) [rad/s], the angular velocity (the moment of inertia is
 * a solid sphere's, 2/5 m r^2). spin may be NULL in a state a caller fills by hand: no spin.
 * Friction's contact histories travel with the state: contact_count of them in `contacts`
 * (owned by the state, NULL when none; any order), so that a saved state resumes a frictional
 * run with its springs. Without friction bodies do not rotate: spin is carried unchanged and
 * there are no contacts. */
typedef struct sim_state {
    uint32_t n;
    sim_vec4d *pos;
    sim_vec4d *vel;
    sim_vec4d *spin;
    sim_state_contact *contacts;
    uint64_t contact_count;
} sim_state;

/* pos, vel and spin for n bodies (zeroed), no contacts. */
sim_status sim_state_alloc(sim_state *state, uint32_t n, sim_error *err);
void sim_state_free(sim_state *state);
/* dst allocated here: src's bodies (its spin, 0 where it has none) and contacts. */
sim_status sim_state_copy(sim_state *dst, const sim_state *src, sim_error *err);
/* The bodies of src (positions, velocities, spin: 0 where src has none, nothing where dst has
 * none) into dst's arrays of the same n; contacts are not copied. */
void sim_state_copy_bodies(sim_state *dst, const sim_state *src);
/* Room for `count` contacts in state->contacts (contents kept up to the old count); sets
 * contact_count to count. */
sim_status sim_state_set_contact_count(sim_state *state, uint64_t count, sim_error *err);
/* Radius and mass must be positive and finite (the integrator divides by the mass, contacts
 * need a radius), and every contact must name a body i of the state and a body j < i or a wall.
 * Non-finite positions, velocities or spins pass: the next frame reports them as SIM_UNSTABLE,
 * like a blow-up. Backends call it after their cheaper checks (memory). */
sim_status sim_state_check_bodies(const sim_state *state, sim_error *err);
/* Kinetic energy of translation, sum m v^2 / 2, and of rotation, sum I w^2 / 2 with
 * I = 2/5 m r^2 [J] (0 without spin). */
double sim_state_kinetic_energy(const sim_state *state);
double sim_state_rotational_energy(const sim_state *state);
/* The state in floats, for the viewer and trajectory captures: every output may be NULL; pos
 * (x, y, z, radius), vel (vx, vy, vz, mass), force (fx, fy, fz, 0) from forces[] (NULL: zeros),
 * spin (wx, wy, wz, 0), speed |v|. */
void sim_state_to_floats(const sim_state *state, const sim_vec3d *forces, sim_vec4f *pos,
                         sim_vec4f *vel, sim_vec4f *force, sim_vec4f *spin, float *speed);
/* Angular velocity of body i [rad/s] (0 when the state has no spin). */
static inline sim_vec3d sim_state_spin(const sim_state *state, uint32_t i) {
    sim_vec3d w = {0.0, 0.0, 0.0};
    if (state->spin != NULL) {
        w.x = state->spin[i].x;
        w.y = state->spin[i].y;
        w.z = state->spin[i].z;
    }
    return w;
}

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
    /* The linear law's normal dashpot at a contact's first and last step: 0 weighted by the part
     * of the step the contact spans (physics.h; the default), 1 sampled as LAMMPS does. */
    int lammps_dashpot;
} sim_params;

sim_params sim_params_default(void);

#ifdef __cplusplus
}
#endif

#endif /* SIM_STATE_H */
