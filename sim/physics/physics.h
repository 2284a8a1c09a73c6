/* SPDX-License-Identifier: MIT
 * nbsim — the physics of one interaction, written once for host and device.
 *
 * Compiles as C11 and under nvcc. Every formula lives in physics_impl.h's parts (a file a
 * sub-model), included twice below: once in float (suffix _f, the GPU hot loops) and once in
 * double (suffix _d, the CPU reference), so the two precisions cannot drift apart.
 *
 * Bodies are pos = (x, y, z, radius) [m] and vel = (vx, vy, vz, mass) [m/s, kg].
 *
 * Conventions (the CPU reference and the CUDA kernels must agree on these):
 *  - Contact, linear: F_i = (k d - eta v_n) n, n = (x_i - x_j)/|x_i - x_j| (from j to i),
 *    d = r_i + r_j - |x_i - x_j| > 0, v_n = (v_i - v_j).n (< 0 when approaching),
 *    eta = 2 zeta sqrt(k m_eff), m_eff = m_i m_j / (m_i + m_j). j receives -F_i.
 *  - Contact, Hertz: F_i = (k d^1.5 - eta d^0.25 v_n) n with the same eta. Scaling the dashpot by
 *    d^(1/4) makes the restitution independent of the impact speed (Tsuji et al. 1992); zeta is
 *    then not the linear formula but solved numerically for e (sim_hertz_damping_ratio).
 *  - The normal force is NOT clamped at zero: near the end of a contact the dashpot may pull
 *    (at most a fraction ~zeta of the peak force, and only while separating). Clamping would
 *    end contacts early and raise the restitution above e (by ~1-5 % for e = 0.9-0.5); without
 *    the clamp the closed-form zeta gives exactly e (test_physics checks 1 %).
 *  - Discrete time: a sampled dashpot force jumps at the first and last step of a contact, which
 *    biases the restitution by up to ~2 % (e = 0.5) at t_c/50. For the linear law the step in
 *    which a contact starts or ends is weighted by the part of the surrounding time window the
 *    contact actually spans, f + 1/2 with f = d / (|v_n| dt) < 1 (inv_dt = 1/dt; 0 turns this
 *    off). Strongly damped contacts also need a finer step (sim_default_dt): together the
 *    measured restitution stays within 1 % of e for every e and impact speed (test_physics).
 *    lammps_dashpot = 1 (sim_params) samples the dashpot as LAMMPS does, unweighted: the
 *    restitution then depends more on where in a step a contact begins (docs/physics.md).
 *  - Walls: the six planes +-box_half, same law with the wall as an infinite mass (m_eff = m).
 *  - Periodic axes (sim_params.periodic): no walls there; every separation of a pair is its
 *    minimum image (sim_min_image: side L = 2 box_half), so a pair interacts once, through its
 *    nearest image: a contact needs r_i + r_j < L / 2 and an ATM cut-off <= L / 2 (the session
 *    refuses the rest). ATM edges: a and b minimum images, c = -(a + b), so a triple is the one
 *    LAMMPS's ghost atoms give (all three sides within the cut-off in one image); the GPU's
 *    independent pair images drop a triple whose images disagree (a + b + c != 0).
 *  - Friction (friction or rolling_friction > 0; docs/friction.md): bodies are solid spheres
 *    that spin (I = 2/5 m r^2); a contact adds a tangential spring-dashpot with a Coulomb limit
 *    mu |F_n| (linear history for the linear law, Mindlin's k_t ~ d^(1/2) for Hertz) and a
 *    rolling spring-dashpot-slider with the limit mu_r |F_n| (LAMMPS's rolling sds), each with
 *    a displacement kept per contact (sim_contact_history). LAMMPS's pair_style granular and fix
 *    wall/gran, operation for operation; a wall is a sphere of infinite mass and radius.
 *  - Coincident centres (|x_i - x_j| = 0) have no normal: no contact force (never NaN).
 *  - ATM: E = nu (1 + 3 cos g1 cos g2 cos g3) / (r12^3 r23^3 r31^3), forces its exact negative
 *    gradient. With atm_cutoff > 0 a triple counts only if all three distances are <= cutoff
 *    (a hard cut: the energy jumps there). Coincident bodies give zero (never NaN); the float
 *    version also drops triples whose r12^2 r23^2 r31^2 is outside [1e-30, 1e30] (distances
 *    outside ~1e-5 .. 1e5 m), where float would overflow.
 *  - ATM on the GPU: the same forces through pair terms (sim_atm_pair, sim_atm_triple;
 *    physics_impl.h derives them): a pair's difference vector, squared distance and term are
 *    computed once per pair, a triple costs products only. Its float guard is per pair: a
 *    triple is dropped when one of its pairs has (3 nu)^(1/3) r^-5 > 1e18 (nu = 1 J m^9:
 *    r < 0.11 mm) or r > 1e5 m; coincident bodies give zero, never NaN.
 */
#ifndef SIM_PHYSICS_H
#define SIM_PHYSICS_H

#include "nbsim/base.h"
#include "nbsim/state.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float x, y, z;
} sim_vec3f;

/* The constants of a model, a part a sub-model (LAMMPS's GRANULAR builds a contact the same way,
 * from normal, tangential and rolling sub-models): each part's file (box.h, normal.h,
 * tangential.h, rolling.h, atm.h) declares its members once, for double (the CPU reference) and
 * float (the GPU), beside its formulas; sim_physics_from_params fills them, and
 * sim_physics_to_float converts them member by member. */
#define SIM_MEMBER(type, name) type name;
#include "physics/atm.h"
#include "physics/box.h"
#include "physics/contact.h"
#include "physics/normal.h"
#include "physics/rolling.h"
#include "physics/tangential.h"

/* Model constants in double (CPU reference), a part each: ph->normal.stiffness; ph->normal is
 * what the normal law's functions take. */
typedef struct {
    sim_normal_d normal;
    sim_tangential_d tangential;
    sim_rolling_d rolling;
    sim_atm_d atm;
    sim_box_d box;
} sim_physics;

/* The same in float for the GPU. */
typedef struct {
    sim_normal_f normal;
    sim_tangential_f tangential;
    sim_rolling_f rolling;
    sim_atm_f atm;
    sim_box_f box;
} sim_physics_f;

/* Contacts are resolved with at least this many steps per contact time (default dt = t_c / 50),
 * and with SIM_DAMPED_STEPS_PER_ZETA2 * zeta^2 steps when that is more: the dashpot's
 * discretisation error grows like zeta^2 dt / t_c, and this keeps the restitution within 1 %
 * (e >= 0.7 keeps t_c / 50; e = 0.5 takes t_c / 186, e = 0.1 t_c / 1398). */
#define SIM_STEPS_PER_CONTACT 50
#define SIM_DAMPED_STEPS_PER_ZETA2 4000.0
/* A body whose centre is farther than this many box_half from the origin on any axis has
 * escaped the walls (the step was too large): backends report SIM_UNSTABLE. */
#define SIM_ESCAPE_FACTOR 1.5

/* Moment of inertia of a body: solid sphere, I = SIM_INERTIA_FACTOR m r^2. */
#define SIM_INERTIA_FACTOR 0.4

/* Friction's contact histories keep a row of slots per body (sim/cpu/cpu_friction.h says why):
 * room for the spheres of the smallest radius r_min that can touch a body of radius r without
 * overlapping one another by more than SIM_FRICTION_OVERLAP of r_min (at most n - 1), plus its
 * 3 walls. The one count the CPU reference and the CUDA backend share, so that both refuse the
 * same pile. */
#define SIM_FRICTION_OVERLAP 0.1
uint64_t sim_friction_slots(double r, double r_min, uint32_t n);

sim_physics sim_physics_from_params(const sim_params *p);
/* The periodic box's refusals, before any work (physics.h: one image per pair and triple):
 * ATM triplets without a cut-off (the sum over images is not defined), a cut-off above half the
 * box, and a contact diameter 2 max_radius [m] of at least half the box (a pair would touch
 * through two images). SIM_BAD_ARGUMENT with a one-line message; SIM_OK without periodic axes. */
sim_status sim_periodic_check(const sim_params *p, double max_radius, sim_error *err);
/* The largest radius of s [m] (0 when empty). */
double sim_state_max_radius(const sim_state *s);
/* The periods of p's box (sim_period_d above): 2 box_half on p's periodic axes. */
sim_period_d sim_period_of(const sim_params *p);
sim_period_f sim_period_to_float(sim_period_d p);
/* Whether the model has friction (sliding or rolling): bodies then rotate, and contacts keep a
 * history (sim_friction_contact instead of sim_contact_force). */
int sim_physics_has_friction(const sim_physics *ph);
/* The same of parameters: friction or rolling_friction above 0. */
int sim_params_have_friction(const sim_params *p);
sim_physics_f sim_physics_to_float(const sim_physics *ph);
/* Whether a and b give the same forces at the same positions: the same contact law, ATM terms
 * (on or off, strength, cut-off), friction, walls and gravity. dt and steps per frame do not
 * change them (the contact-onset weight uses 1/dt, but a new dt keeps F_n: the next step
 * computes its own). */
int sim_params_same_model(const sim_params *a, const sim_params *b);

/* zeta = -ln e / sqrt(pi^2 + ln^2 e): the linear spring-dashpot with this ratio leaves a head-on
 * contact with exactly e times the approach speed. e = 1 gives 0. */
double sim_damping_ratio(double restitution);
/* The same for the Hertz law with the d^(1/4) dashpot: solved numerically (dimensionless
 * u'' = -u^1.5 - 2 zeta u^0.25 u'), accurate to ~1e-6 in e. ~5 RK4 solves: cache the result. */
double sim_hertz_damping_ratio(double restitution);
/* Contact duration [s], undamped: linear t_c = pi / sqrt(k / m_eff); Hertz depends on the impact
 * speed: t_c = 3.2181 (m_eff / k)^(2/5) v^(-1/5). */
double sim_contact_time(double stiffness, double m_eff);
double sim_contact_time_hertz(double stiffness, double m_eff, double speed);
/* Safe step [s]: t_c / max(SIM_STEPS_PER_CONTACT, SIM_DAMPED_STEPS_PER_ZETA2 zeta^2) at the
 * smallest pair m_eff (the two lightest bodies). Hertz uses a reference impact speed: max(2 max|v|,
 * sqrt(4 |g| box_half), 1 m/s). With friction and a stiffness ratio above 2/7 the tangential
 * spring is the faster one (its effective mass is 2/7 m_eff): t_c shrinks by sqrt(7 ratio / 2).
 * Ignores ATM stiffness. Returns 0 for an empty state. */
double sim_default_dt(const sim_params *p, const sim_state *s);

#ifdef __cplusplus
}
#endif

/* ---- The host+device functions, float then double. ----
 * SIM_HD sim_vec3f sim_contact_force_f(pi, vi, pj, vj, ph, energy)   force on i from j
 * SIM_HD void      sim_atm_forces_f(p1, p2, p3, ph, f1, f2, f3, energy)
 * SIM_HD float     sim_atm_pair_term_f(a2, nu3, a2_max)                ATM in pair terms (GPU):
 * SIM_HD float     sim_atm_triple_f(A, B, C, hA, hB, hC, ya, yb, yc, energy)   see
 * SIM_HD void      sim_atm_forces_pairwise_f(p1, p2, p3, nu3, a2_max, f1, f2, f3, energy)
 *                  (and sim_atm_nu3_f, sim_atm_a2_max_f, sim_atm_pair_f,      physics_impl.h
 *                  sim_atm_pair_coefficient_f)
 * SIM_HD sim_vec3f sim_wall_force_f(pos, vel, ph, energy)           the six walls only
 * SIM_HD sim_vec3f sim_body_force_f(pos, vel, ph, energy)           walls + m g
 * SIM_HD float     sim_normal_force_f(d, v_n, m_eff, ph, energy)    scalar contact law
 * SIM_HD int       sim_friction_contact_f(pi, vi, wi, pj, vj, wj, hist, ph, dt, force, ti, tj,
 *                                         energy)                 contact with friction, torques
 * SIM_HD int       sim_friction_wall_f(pos, vel, w, wall, hist, ph, dt, force, torque, energy)
 * SIM_HD void      sim_friction_walls_f(pos, vel, w, hist[6], ph, dt, force, torque, energy)
 * SIM_HD void      sim_verlet_spin_f(w, torque, pos, mass, dt)       half kick of the spin
 * SIM_HD void      sim_verlet_first_f(pos, vel, force, dt)          half kick + drift
 * SIM_HD void      sim_verlet_second_f(vel, force, dt)              half kick
 * and the _d twins on sim_vec3d / sim_vec4d / sim_physics. energy pointers may be NULL; when
 * given, the elastic (and gravity, ATM) energy [J] is added to *energy. */

#if defined(__CUDA_ARCH__)
#define SIM_RSQRT_F(x) rsqrtf(x)
#else
#define SIM_RSQRT_F(x) (1.0f / sqrtf(x))
#endif

/* The ATM pair terms' 1/sqrt: on the device without the denormal fix-up (one MUFU.RSQ instead of
 * four instructions). A denormal squared distance gives infinity there, and the pair is dropped,
 * as it is with the fix-up (its term would overflow float anyway). */
#if defined(__CUDA_ARCH__)
static __device__ __forceinline__ float sim_rsqrt_ftz_f(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
#define SIM_ATM_RSQRT_F(x) sim_rsqrt_ftz_f(x)
#else
#define SIM_ATM_RSQRT_F(x) (1.0f / sqrtf(x))
#endif

#define SIM_R float
#define SIM_V3 sim_vec3f
#define SIM_V4 sim_vec4f
#define SIM_PH sim_physics_f
#define SIM_HIST sim_contact_history_f
#define SIM_FN(name) name##_f
#define SIM_K(c) ((float)(c))
#define SIM_SQRT(x) sqrtf(x)
#define SIM_RSQRT(x) SIM_RSQRT_F(x)
#define SIM_CBRT(x) cbrtf(x)
#define SIM_ATM_RSQRT(x) SIM_ATM_RSQRT_F(x)
#define SIM_FABS(x) fabsf(x)
#define SIM_PH_CUTOFF2(ph) ((ph)->atm.atm_cutoff2)
#define SIM_PH_GX(ph) ((ph)->box.gx)
#define SIM_PH_GY(ph) ((ph)->box.gy)
#define SIM_PH_GZ(ph) ((ph)->box.gz)
#define SIM_ATM_S_MIN 1e-30f
#define SIM_ATM_S_MAX 1e30f
#define SIM_ATM_H_MAX 1e18f
#define SIM_ATM_A2_MAX 1e10f
#define SIM_PER sim_period_f
#define SIM_RINT(x) rintf(x)
#define SIM_FLOOR(x) floorf(x)
#define SIM_PERIOD_SLACK 0x1p-17f
#include "physics/physics_impl.h"

#define SIM_R double
#define SIM_V3 sim_vec3d
#define SIM_V4 sim_vec4d
#define SIM_PH sim_physics
#define SIM_HIST sim_contact_history_d
#define SIM_FN(name) name##_d
#define SIM_K(c) ((double)(c))
#define SIM_SQRT(x) sqrt(x)
#define SIM_RSQRT(x) (1.0 / sqrt(x))
#define SIM_CBRT(x) cbrt(x)
#define SIM_ATM_RSQRT(x) (1.0 / sqrt(x))
#define SIM_FABS(x) fabs(x)
#define SIM_PH_CUTOFF2(ph) ((ph)->atm.atm_cutoff * (ph)->atm.atm_cutoff)
#define SIM_PH_GX(ph) ((ph)->box.gravity.x)
#define SIM_PH_GY(ph) ((ph)->box.gravity.y)
#define SIM_PH_GZ(ph) ((ph)->box.gravity.z)
#define SIM_ATM_S_MIN 1e-200
#define SIM_ATM_S_MAX 1e200
#define SIM_ATM_H_MAX 1e90
#define SIM_ATM_A2_MAX 1e60
#define SIM_PER sim_period_d
#define SIM_RINT(x) rint(x)
#define SIM_FLOOR(x) floor(x)
#define SIM_PERIOD_SLACK 0x1p-40
#include "physics/physics_impl.h"

/* The GPU's contact test on a separation (dx, dy, dz) [m] already imaged and the radii's sum rs
 * [m]: strict, NaN never. Every kernel that decides touching (the tile sweeps, the lists, the
 * friction visit) takes this one shape with its FMAs written out: a contracted
 * dx*dx + dy*dy + dz*dz may be fused in another order in another kernel, and then a pair within
 * an ulp of touching is counted by one enumeration and not by another. */
SIM_HD int sim_touch_f(float dx, float dy, float dz, float rs) {
    return fmaf(dz, dz, fmaf(dy, dy, dx * dx)) < rs * rs;
}

#endif /* SIM_PHYSICS_H */
