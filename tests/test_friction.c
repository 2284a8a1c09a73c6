/* SPDX-License-Identifier: MIT
 * nbsim — the friction model (physics_impl.h: sim_friction_contact, sim_friction_wall) on its own:
 * its parameters, the frictionless limit bit for bit, momentum and angular momentum, sticking and
 * sliding against closed forms, friction that only dissipates, float against double, a ball that
 * slides into rolling at 5/7 of its speed.
 *
 * `test_friction --lammps DIR [NAME]` instead compares the functions with LAMMPS (DIR is
 * tests/lammps: its in.friction deck and run_lammps.sh): each case writes a configuration and
 * nbsim's parameters mapped to LAMMPS's keywords (docs/friction.md), runs LAMMPS, and evaluates
 * the same steps with the functions in double, driven by a small loop that is LAMMPS's fix
 * nve/sphere; forces and torques must agree to rounding. Exit status 77 (skipped) when LAMMPS or
 * its GRANULAR package is missing, or its version is not the one the mapping was written for. */
#define _POSIX_C_SOURCE 200809L

#include "physics/physics.h"

#include "nbsim/params.h"

#include "ensure.h"
#include "test_rng.h"
#include "test_tmp.h"

#include <stdint.h>
#include <stdlib.h>

static const double kPi = 3.14159265358979323846;

static sim_vec4d v4(double x, double y, double z, double w) {
    sim_vec4d v = {x, y, z, w};
    return v;
}

static sim_vec3d v3(double x, double y, double z) {
    sim_vec3d v = {x, y, z};
    return v;
}

static sim_vec3d add3(sim_vec3d a, sim_vec3d b) {
    return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}

static sim_vec3d sub3(sim_vec3d a, sim_vec3d b) {
    return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}

static sim_vec3d scale3(double s, sim_vec3d a) {
    return v3(s * a.x, s * a.y, s * a.z);
}

static double dot3(sim_vec3d a, sim_vec3d b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static sim_vec3d cross3(sim_vec3d a, sim_vec3d b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

static double norm3(sim_vec3d a) {
    return sqrt(dot3(a, a));
}

static sim_vec3d xyz(sim_vec4d a) {
    return v3(a.x, a.y, a.z);
}

static uint64_t rng_state = 2718281828u;
static double rnd(double lo, double hi) {
    return test_rnd(&rng_state, lo, hi);
}

static sim_params friction_params(int hertz, double mu, double mu_r) {
    sim_params p = sim_params_default();
    p.stiffness = hertz ? 1e6 : 1e4;
    p.restitution = 0.7;
    p.hertz = hertz;
    p.box_half = 5.0;
    p.friction = mu;
    p.rolling_friction = mu_r;
    return p;
}

static const sim_contact_history_d no_history = {{0, 0, 0}, {0, 0, 0}};

/* ---- parameters ---- */

static void test_params(void) {
    sim_error err;
    sim_params p = sim_params_default();
    ENSURE(sim_params_check(&p, &err) == SIM_OK); /* zero-initialised fields are the defaults */
    ENSURE(p.friction == 0.0 && p.rolling_friction == 0.0);
    sim_physics ph = sim_physics_from_params(&p);
    ENSURE(!sim_physics_has_friction(&ph));
    ENSURE_NEAR(ph.tangential_stiffness, 2.0 / 7.0 * p.stiffness, 1e-9);
    ENSURE_NEAR(ph.tangential_damping, sqrt(2.0 / 7.0), 1e-15);
    /* Each row is a scene key and a flag. */
    ENSURE(sim_param_from_key("friction") == SIM_PARAM_FRICTION);
    ENSURE(sim_param_from_flag("--friction") == SIM_PARAM_FRICTION);
    ENSURE(sim_param_from_flag("--rolling-friction") == SIM_PARAM_ROLLING_FRICTION);
    ENSURE(sim_param_from_key("stiffness_ratio") == SIM_PARAM_STIFFNESS_RATIO);
    ENSURE(sim_param_from_flag("--tangential-damping") == SIM_PARAM_TANGENTIAL_DAMPING);
    /* Ranges: mu, mu_r in [0, 10], ratio in (0, 10], damping in [0, 10] or auto. */
    ENSURE(sim_param_set(&p, SIM_PARAM_FRICTION, "0.5", &err) == SIM_OK && p.friction == 0.5);
    ENSURE(sim_param_set(&p, SIM_PARAM_FRICTION, "10", &err) == SIM_OK);
    ENSURE(sim_param_set(&p, SIM_PARAM_FRICTION, "10.5", &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "'10.5' must be a friction coefficient in [0, 10]") != NULL);
    ENSURE(sim_param_set(&p, SIM_PARAM_FRICTION, "-0.1", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_param_set(&p, SIM_PARAM_FRICTION, "auto", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_param_set(&p, SIM_PARAM_ROLLING_FRICTION, "0.1", &err) == SIM_OK &&
           p.rolling_friction == 0.1);
    ENSURE(sim_param_set(&p, SIM_PARAM_ROLLING_FRICTION, "1e3", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_param_set(&p, SIM_PARAM_STIFFNESS_RATIO, "0", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_param_set(&p, SIM_PARAM_STIFFNESS_RATIO, "0.8", &err) == SIM_OK &&
           p.stiffness_ratio == 0.8);
    ENSURE(sim_param_set(&p, SIM_PARAM_STIFFNESS_RATIO, "11", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_param_set(&p, SIM_PARAM_TANGENTIAL_DAMPING, "0", &err) == SIM_OK &&
           p.tangential_damping.value == 0.0 && p.tangential_damping.set == 1);
    ENSURE(sim_param_set(&p, SIM_PARAM_TANGENTIAL_DAMPING, "nan", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_param_set(&p, SIM_PARAM_TANGENTIAL_DAMPING, "10.01", &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "must be a factor in [0, 10] or auto") != NULL);
    ENSURE(sim_params_check(&p, &err) == SIM_OK);
    ph = sim_physics_from_params(&p);
    ENSURE(sim_physics_has_friction(&ph) && ph.tangential_damping == 0.0);
    ENSURE_NEAR(ph.tangential_stiffness, 0.8 * p.stiffness, 1e-9);
    ENSURE(sim_param_set(&p, SIM_PARAM_TANGENTIAL_DAMPING, "auto", &err) == SIM_OK &&
           p.tangential_damping.set == 0);
    ph = sim_physics_from_params(&p);
    ENSURE_NEAR(ph.tangential_damping, sqrt(0.8), 1e-15);
    p.hertz = 1; /* Hertz: the ratio is to dF/dd = 3/2 k d^(1/2) */
    ph = sim_physics_from_params(&p);
    ENSURE_NEAR(ph.tangential_stiffness, 1.5 * 0.8 * p.stiffness, 1e-9);
    /* The checks catch what a program could put in the struct. */
    sim_params q = sim_params_default();
    q.friction = 11.0;
    ENSURE(sim_params_check(&q, &err) == SIM_BAD_ARGUMENT && strstr(err.message, "friction = 11"));
    q = sim_params_default();
    q.stiffness_ratio = -1.0;
    ENSURE(sim_params_check(&q, &err) == SIM_BAD_ARGUMENT);
    q = sim_params_default();
    q.tangential_damping.set = 2;
    ENSURE(sim_params_check(&q, &err) == SIM_BAD_ARGUMENT);
    /* Floats carry the same constants. */
    const sim_physics_f f = sim_physics_to_float(&ph);
    ENSURE(f.friction == (float)ph.friction && f.rolling_friction == (float)ph.rolling_friction &&
           f.tangential_stiffness == (float)ph.tangential_stiffness &&
           f.tangential_damping == (float)ph.tangential_damping);
}

/* With friction the default step resolves the tangential spring too: no change at ratio <= 2/7,
 * sqrt(7 ratio / 2) times finer above. */
static void test_default_dt(void) {
    sim_vec4d x[2] = {v4(-1, 0, 0, 0.5), v4(1, 0, 0, 0.5)};
    sim_vec4d v[2] = {v4(0, 0, 0, 1.0), v4(0, 0, 0, 1.0)};
    const sim_state s = {.n = 2, .pos = x, .vel = v};
    sim_params p = friction_params(0, 0.0, 0.0);
    const double plain = sim_default_dt(&p, &s);
    p.friction = 0.5;
    ENSURE(sim_default_dt(&p, &s) == plain);
    p.stiffness_ratio = 2.0;
    ENSURE_NEAR(sim_default_dt(&p, &s), plain / sqrt(7.0), 1e-15 * plain);
    p.friction = 0.0;
    p.rolling_friction = 0.1;
    ENSURE_NEAR(sim_default_dt(&p, &s), plain / sqrt(7.0), 1e-15 * plain);
}

/* ---- the functions against the frictionless law and conservation laws ---- */

/* mu = mu_r = 0: the force is sim_contact_force's bit for bit, no torque; the walls'
 * sim_wall_force's. */
static void test_frictionless_bit_identical(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        sim_params p = friction_params(hertz, 0.0, 0.0);
        p.dt = 1e-4; /* the linear law's contact-onset weighting on */
        const sim_physics ph = sim_physics_from_params(&p);
        const sim_physics_f phf = sim_physics_to_float(&ph);
        int touching = 0;
        for (int t = 0; t < 2000; ++t) {
            const sim_vec4d pi = v4(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(0.2, 0.6));
            const sim_vec4d pj = v4(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(0.2, 0.6));
            const sim_vec4d vi = v4(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2), rnd(0.5, 2));
            const sim_vec4d vj = v4(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2), rnd(0.5, 2));
            const sim_vec3d wi = v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9));
            const sim_vec3d wj = v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9));
            sim_contact_history_d h = {{1, 2, 3}, {4, 5, 6}}; /* ignored, zeroed if apart */
            sim_vec3d f, ti, tj;
            double e1 = 0.0, e2 = 0.0;
            const int touch =
                sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &h, &ph, 1e-4, &f, &ti, &tj, &e1);
            const sim_vec3d g = sim_contact_force_d(pi, vi, pj, vj, &ph, &e2);
            touching += touch;
            ENSURE(memcmp(&f, &g, sizeof f) == 0 && e1 == e2);
            ENSURE(norm3(ti) == 0.0 && norm3(tj) == 0.0);
            ENSURE(touch || (h.xi.x == 0.0 && h.roll.z == 0.0));
            /* The float twin likewise. */
            sim_contact_history_f hf = {{0, 0, 0}, {0, 0, 0}};
            sim_vec3f ff, tif, tjf;
            const sim_vec4f fi = {(float)pi.x, (float)pi.y, (float)pi.z, (float)pi.w};
            const sim_vec4f fj = {(float)pj.x, (float)pj.y, (float)pj.z, (float)pj.w};
            const sim_vec4f ui = {(float)vi.x, (float)vi.y, (float)vi.z, (float)vi.w};
            const sim_vec4f uj = {(float)vj.x, (float)vj.y, (float)vj.z, (float)vj.w};
            const sim_vec3f zero = {0, 0, 0};
            sim_friction_contact_f(fi, ui, zero, fj, uj, zero, &hf, &phf, 1e-4f, &ff, &tif, &tjf,
                                   NULL);
            const sim_vec3f gf = sim_contact_force_f(fi, ui, fj, uj, &phf, NULL);
            ENSURE(memcmp(&ff, &gf, sizeof ff) == 0);
            /* Walls. */
            const sim_vec4d pw = v4(rnd(-5.5, 5.5), rnd(-5.5, 5.5), rnd(-5.5, 5.5), rnd(0.2, 0.6));
            sim_contact_history_d walls[6];
            sim_vec3d fw = {0, 0, 0}, tw = {0, 0, 0};
            double ew1 = 0.0, ew2 = 0.0;
            sim_friction_walls_d(pw, vi, wi, walls, &ph, 1e-4, &fw, &tw, &ew1);
            const sim_vec3d gw = sim_wall_force_d(pw, vi, &ph, &ew2);
            ENSURE(memcmp(&fw, &gw, sizeof fw) == 0 && ew1 == ew2 && norm3(tw) == 0.0);
        }
        ENSURE(touching > 100); /* the draws do touch */
    }
}

/* Momentum and angular momentum: F_j = -F_i, and the torques balance the moment of the pair of
 * forces, (x_i - x_j) x F_i + T_i + T_j = 0 (the contact point is one point for both bodies). */
static void test_conservation(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        const sim_params p = friction_params(hertz, 0.4, 0.2);
        const sim_physics ph = sim_physics_from_params(&p);
        for (int t = 0; t < 500; ++t) {
            const double ri = rnd(0.2, 0.6), rj = rnd(0.2, 0.6);
            const sim_vec3d dir = v3(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1));
            const double gap = (ri + rj) * rnd(0.95, 0.999);
            const sim_vec3d xi = v3(rnd(-1, 1), rnd(-1, 1), rnd(-1, 1));
            const sim_vec3d xj = add3(xi, scale3(gap / norm3(dir), dir));
            const sim_vec4d pi = v4(xi.x, xi.y, xi.z, ri), pj = v4(xj.x, xj.y, xj.z, rj);
            const sim_vec4d vi = v4(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2), rnd(0.5, 2));
            const sim_vec4d vj = v4(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2), rnd(0.5, 2));
            const sim_vec3d wi = v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9));
            const sim_vec3d wj = v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9));
            sim_contact_history_d h = {{rnd(-1e-3, 1e-3), rnd(-1e-3, 1e-3), rnd(-1e-3, 1e-3)},
                                       {rnd(-1e-3, 1e-3), rnd(-1e-3, 1e-3), rnd(-1e-3, 1e-3)}};
            sim_vec3d f, ti, tj, f2, ti2, tj2;
            ENSURE(
                sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &h, &ph, 1e-4, &f, &ti, &tj, NULL));
            const sim_vec3d moment = add3(cross3(sub3(xi, xj), f), add3(ti, tj));
            const double scale = norm3(f) * (ri + rj) + norm3(ti) + norm3(tj);
            ENSURE_MSG(norm3(moment) <= 1e-13 * scale, "angular momentum: %g of %g", norm3(moment),
                       scale);
            /* The same contact seen from j: the negative force, the same torques. The sliding
             * spring turns over with the pair (xi_ji = -xi_ij); the rolling one does not
             * (v_r = R_eff (w_i - w_j) x n keeps its sign: roll_ji = roll_ij). */
            sim_contact_history_d hj = {scale3(-1.0, h.xi), h.roll};
            sim_contact_history_d hi = h;
            sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &hi, &ph, 1e-4, &f, &ti, &tj, NULL);
            sim_friction_contact_d(pj, vj, wj, pi, vi, wi, &hj, &ph, 1e-4, &f2, &tj2, &ti2, NULL);
            const double tol = 1e-12 * (norm3(f) + norm3(ti) + norm3(tj));
            ENSURE(norm3(add3(f, f2)) <= tol && norm3(sub3(ti, ti2)) <= tol &&
                   norm3(sub3(tj, tj2)) <= tol);
            ENSURE(norm3(add3(hi.xi, hj.xi)) <= 1e-12 * norm3(hi.xi) &&
                   norm3(sub3(hi.roll, hj.roll)) <= 1e-12 * norm3(hi.roll));
        }
    }
}

/* A sphere resting on the floor (z wall) with overlap d, driven at a constant slip velocity u
 * (no spin): the spring loads as F_t = -(k_t n u dt + g_t u) while below mu F_n, then slides at
 * exactly mu F_n, with the torque -r n x F_t. */
static void test_stick_then_slide(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        sim_params p = friction_params(hertz, 0.3, 0.0);
        p.box_half = 1.0;
        const sim_physics ph = sim_physics_from_params(&p);
        const double r = 0.25, m = 2.0, d = 1e-3, dt = 1e-4;
        const sim_vec4d pos = v4(0.1, -0.2, -1.0 + r - d, r);
        const sim_vec4d vel = v4(0.03, -0.04, 0.0, m); /* |u| = 0.05 m/s */
        const double fn = hertz ? p.stiffness * d * sqrt(d) : p.stiffness * d;
        const double kt = hertz ? ph.tangential_stiffness * sqrt(d) : ph.tangential_stiffness;
        double eta = 2.0 * ph.damping_ratio * sqrt(p.stiffness * m);
        eta *= hertz ? sqrt(sqrt(d)) : 1.0;
        const double gt = ph.tangential_damping * eta;
        sim_contact_history_d h = no_history;
        int slid = 0;
        for (int step = 1; step <= 4000; ++step) {
            sim_vec3d f = {0, 0, 0}, tq = {0, 0, 0};
            ENSURE(sim_friction_wall_d(pos, vel, v3(0, 0, 0), 4, &h, &ph, dt, &f, &tq, NULL));
            const double stick = kt * step * 0.05 * dt + gt * 0.05;
            const double ft = hypot(f.x, f.y);
            ENSURE_NEAR(f.z, fn, 1e-12 * fn);
            if (stick <= 0.3 * fn * (1.0 - 1e-12)) {
                ENSURE_NEAR(ft, stick, 1e-10 * stick);
            } else if (stick > 0.3 * fn * (1.0 + 1e-12)) {
                ENSURE_NEAR(ft, 0.3 * fn, 1e-12 * fn);
                slid = 1;
            }
            ENSURE_NEAR(f.x * 0.04 + f.y * 0.03, 0.0, 1e-12 * fn); /* against u */
            ENSURE(f.x < 0.0);
            ENSURE_NEAR(tq.x, -r * (0.0 * f.z - 1.0 * f.y), 1e-12 * fn);
            ENSURE_NEAR(tq.y, -r * (1.0 * f.x - 0.0 * f.z), 1e-12 * fn);
            ENSURE(tq.z == 0.0);
        }
        ENSURE(slid);
        /* Lifted off: the history is gone. */
        sim_vec3d f = {0, 0, 0}, tq = {0, 0, 0};
        ENSURE(
            !sim_friction_wall_d(v4(0, 0, 0, r), vel, v3(0, 0, 0), 4, &h, &ph, dt, &f, &tq, NULL));
        ENSURE(h.xi.x == 0.0 && h.xi.y == 0.0 && h.xi.z == 0.0);
    }
}

/* A spinning sphere on the floor, held in place: rolling resistance opposes the spin, up to the
 * torque mu_r R F_n (a wall is a sphere of infinite radius: R_eff = r). */
static void test_rolling_limit(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        sim_params p = friction_params(hertz, 0.5, 0.05);
        p.box_half = 1.0;
        const sim_physics ph = sim_physics_from_params(&p);
        const double r = 0.25, m = 2.0, d = 1e-3;
        const double fn = hertz ? p.stiffness * d * sqrt(d) : p.stiffness * d;
        const sim_vec4d pos = v4(0.0, 0.0, -1.0 + r - d, r);
        /* Rolling without slip along +x: v = w x (r n) ... w = (0, v/r, 0) for n = +z. */
        const sim_vec4d vel = v4(0.2, 0.0, 0.0, m);
        const sim_vec3d w = v3(0.0, 0.2 / r, 0.0);
        sim_contact_history_d h = no_history;
        double last = 0.0;
        for (int step = 1; step <= 20000; ++step) {
            sim_vec3d f = {0, 0, 0}, tq = {0, 0, 0};
            sim_friction_wall_d(pos, vel, w, 4, &h, &ph, 1e-4, &f, &tq, NULL);
            ENSURE_NEAR(hypot(f.x, f.y), 0.0, 1e-12 * fn); /* no slip: no sliding force */
            ENSURE(tq.y <= 0.0 && tq.x == 0.0);
            ENSURE(-tq.y <= 0.05 * r * fn * (1.0 + 1e-12));
            last = -tq.y;
        }
        ENSURE_NEAR(last, 0.05 * r * fn, 1e-12 * fn);
    }
}

/* Friction only dissipates: a contact driven at constant slip and rolling velocities (bodies in
 * place, as LAMMPS's static runs) does work <= 0 on the bodies at every step, sticking or
 * sliding, whatever the dashpot. */
static void test_dissipation_constant_drive(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        for (int variant = 0; variant < 3; ++variant) {
            sim_params p = friction_params(hertz, variant == 2 ? 0.05 : 0.4, 0.1);
            p.tangential_damping.value = variant == 0 ? 0.0 : 3.0;
            p.tangential_damping.set = variant != 1; /* 1: auto */
            const sim_physics ph = sim_physics_from_params(&p);
            const sim_vec4d pi = v4(0.3, 0.5, 0.2, 0.3), pj = v4(0.1, 0.0, -0.2, 0.4);
            const sim_vec4d vi = v4(0.3, -0.2, 0.1, 1.0), vj = v4(-0.1, 0.0, 0.4, 3.0);
            const sim_vec3d wi = v3(2.0, -1.0, 0.5), wj = v3(0.0, 1.5, -2.0);
            const double ri = pi.w, rj = pj.w;
            const sim_vec3d n = scale3(1.0 / norm3(sub3(xyz(pi), xyz(pj))), sub3(xyz(pi), xyz(pj)));
            const double d = ri + rj - norm3(sub3(xyz(pi), xyz(pj)));
            const sim_vec3d vr = sub3(xyz(vi), xyz(vj));
            const sim_vec3d vt = sub3(sub3(vr, scale3(dot3(vr, n), n)),
                                      cross3(add3(scale3(ri, wi), scale3(rj, wj)), n));
            const double r_eff = ri * rj / (ri + rj);
            const sim_vec3d vl = scale3(r_eff, cross3(sub3(wi, wj), n));
            sim_contact_history_d h = no_history;
            int slid = 0;
            for (int step = 0; step < 5000; ++step) {
                sim_vec3d f, ti, tj;
                sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &h, &ph, 1e-4, &f, &ti, &tj, NULL);
                const sim_vec3d ft = sub3(f, scale3(dot3(f, n), n));
                /* The rolling force from the torque: T_i = -(r_i - d/2) n x F_t + R_eff n x F_r. */
                const sim_vec3d troll = add3(ti, scale3(ri - 0.5 * d, cross3(n, ft)));
                const sim_vec3d fr = scale3(1.0 / r_eff, cross3(troll, n));
                ENSURE(dot3(ft, vt) <= 0.0 && dot3(fr, vl) <= 0.0);
                slid |= norm3(ft) >= p.friction * fabs(dot3(f, n)) * (1.0 - 1e-12);
            }
            ENSURE(slid);
        }
    }
}

/* The same over a varying drive (reversals, a turning normal) while the dashpot alone stays
 * below the limit (g_t |v_t| < mu |F_n|): per step, the work of friction on the slip plus the
 * change of the springs' energy is <= 0 (the contact never gives back more than it stored). */
static void test_dissipation_varying_drive(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        for (int variant = 0; variant < 2; ++variant) {
            sim_params p = friction_params(hertz, 0.4, 0.1);
            p.tangential_damping.value = variant == 0 ? 0.3 : 0.0; /* 0: a pure spring-slider */
            p.tangential_damping.set = 1;
            const sim_physics ph = sim_physics_from_params(&p);
            const double ri = 0.3, rj = 0.4, gap = 0.69, dt = 1e-4;
            const double mi = 1.0, mj = 3.0;
            sim_contact_history_d h = no_history;
            double worst = -INFINITY, scale = 0.0, dashpot = 0.0;
            for (int step = 0; step < 20000; ++step) {
                /* The pair turns about the z axis (the normal rotates) at a varying rate. */
                const double phase = 1e-3 * step + 0.3 * sin(2e-3 * step);
                const sim_vec3d n = v3(cos(phase), sin(phase), 0.0);
                const sim_vec4d pi = v4(gap * n.x, gap * n.y, 0.0, ri), pj = v4(0, 0, 0, rj);
                const double s = sin(7e-4 * step), c = cos(3e-4 * step);
                const sim_vec4d vi = v4(0.5 * s - 0.2 * n.y, 0.3 * c + 0.2 * n.x, 0.4 * s * c, mi);
                const sim_vec4d vj = v4(0.0, 0.0, -0.1 * c, mj);
                const sim_vec3d wi = v3(2.0 * c, -1.0 * s, 0.5), wj = v3(0.0, 1.5 * s, -2.0 * c);
                /* Slip and rolling velocities as the model defines them. */
                const sim_vec3d vr = sub3(xyz(vi), xyz(vj));
                const sim_vec3d vt = sub3(sub3(vr, scale3(dot3(vr, n), n)),
                                          cross3(add3(scale3(ri, wi), scale3(rj, wj)), n));
                const double r_eff = ri * rj / (ri + rj);
                const sim_vec3d vl = scale3(r_eff, cross3(sub3(wi, wj), n));
                const double d = ri + rj - gap;
                const double kt =
                    hertz ? ph.tangential_stiffness * sqrt(d) : ph.tangential_stiffness;
                const double before = 0.5 * kt * (dot3(h.xi, h.xi) + dot3(h.roll, h.roll));
                sim_vec3d f, ti, tj;
                sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &h, &ph, dt, &f, &ti, &tj, NULL);
                const double after = 0.5 * kt * (dot3(h.xi, h.xi) + dot3(h.roll, h.roll));
                const sim_vec3d ft = sub3(f, scale3(dot3(f, n), n));
                const sim_vec3d troll = add3(ti, scale3(ri - 0.5 * d, cross3(n, ft)));
                const sim_vec3d fr = scale3(1.0 / r_eff, cross3(troll, n));
                const double work = (dot3(ft, vt) + dot3(fr, vl)) * dt;
                const double balance = work + (after - before);
                worst = balance > worst ? balance : worst;
                const double sc = (norm3(ft) * norm3(vt) + norm3(fr) * norm3(vl)) * dt;
                scale = sc > scale ? sc : scale;
                /* The regime: the dashpot alone below the rolling (the smaller) limit. */
                double eta = 2.0 * ph.damping_ratio * sqrt(p.stiffness * mi * mj / (mi + mj));
                eta *= hertz ? sqrt(sqrt(d)) : 1.0;
                const double g = ph.tangential_damping * eta * fmax(norm3(vt), norm3(vl));
                const double ratio = g / (p.rolling_friction * fabs(dot3(f, n)));
                dashpot = ratio > dashpot ? ratio : dashpot;
            }
            ENSURE_MSG(dashpot < 1.0, "hertz %d variant %d: dashpot %g of the limit", hertz,
                       variant, dashpot);
            ENSURE_MSG(worst <= 1e-12 * scale, "hertz %d variant %d: a step gains %g J (scale %g)",
                       hertz, variant, worst, scale);
        }
    }
}

/* LAMMPS's truncation, kept: above the limit the spring is reset to the length that, with the
 * dashpot, gives the limit force, xi = -(mu F_n t + g_t v_t) / k_t. Where the dashpot alone
 * exceeds the limit (g_t |v_t| > mu |F_n|) the spring is left pulling along the slip, and when
 * the slip stops the contact pushes the body on with the full limit force for a while: energy
 * the truncation stored, given back. Pinned here (docs/friction.md, "Departures"). */
static void test_dashpot_above_limit(void) {
    sim_params p = friction_params(0, 0.1, 0.0);
    p.tangential_damping.value = 5.0;
    p.tangential_damping.set = 1;
    p.box_half = 1.0;
    const sim_physics ph = sim_physics_from_params(&p);
    const double r = 0.25, m = 2.0, d = 1e-3;
    const sim_vec4d pos = v4(0.0, 0.0, -1.0 + r - d, r);
    sim_contact_history_d h = no_history;
    sim_vec3d f = {0, 0, 0}, tq = {0, 0, 0};
    for (int step = 0; step < 10; ++step) { /* slide along +x */
        f = v3(0, 0, 0);
        sim_friction_wall_d(pos, v4(0.5, 0, 0, m), v3(0, 0, 0), 4, &h, &ph, 1e-4, &f, &tq, NULL);
    }
    const double limit = 0.1 * p.stiffness * d;
    ENSURE_NEAR(f.x, -limit, 1e-12 * limit);
    ENSURE(h.xi.x < 0.0); /* the spring pulls along +x */
    f = v3(0, 0, 0);
    sim_friction_wall_d(pos, v4(0.0, 0, 0, m), v3(0, 0, 0), 4, &h, &ph, 1e-4, &f, &tq, NULL);
    ENSURE_NEAR(f.x, +limit, 1e-12 * limit); /* stopped: pushed on along +x */
}

/* The float functions (the GPU's) follow the double ones over a sliding, rolling history. */
static void test_float_matches_double(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        const sim_params p = friction_params(hertz, 0.4, 0.1);
        const sim_physics ph = sim_physics_from_params(&p);
        const sim_physics_f phf = sim_physics_to_float(&ph);
        sim_contact_history_d h = no_history;
        sim_contact_history_f hf = {{0, 0, 0}, {0, 0, 0}};
        double worst_f = 0.0, worst_t = 0.0;
        for (int step = 0; step < 3000; ++step) {
            const double a = 1e-3 * step;
            const sim_vec4d pi = v4(0.69 * cos(a), 0.69 * sin(a), 0.01, 0.3), pj = v4(0, 0, 0, 0.4);
            const sim_vec4d vi = v4(0.1 * sin(3 * a), 0.2, -0.05, 1.0), vj = v4(0, 0.1, 0, 2.0);
            const sim_vec3d wi = v3(1.0, -2.0 * cos(a), 0.3), wj = v3(0.5, 0.0, -1.0);
            sim_vec3d f, ti, tj;
            sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &h, &ph, 1e-4, &f, &ti, &tj, NULL);
            const sim_vec4f fi = {(float)pi.x, (float)pi.y, (float)pi.z, (float)pi.w};
            const sim_vec4f fj = {(float)pj.x, (float)pj.y, (float)pj.z, (float)pj.w};
            const sim_vec4f ui = {(float)vi.x, (float)vi.y, (float)vi.z, (float)vi.w};
            const sim_vec4f uj = {(float)vj.x, (float)vj.y, (float)vj.z, (float)vj.w};
            const sim_vec3f oi = {(float)wi.x, (float)wi.y, (float)wi.z};
            const sim_vec3f oj = {(float)wj.x, (float)wj.y, (float)wj.z};
            sim_vec3f ff, tif, tjf;
            sim_friction_contact_f(fi, ui, oi, fj, uj, oj, &hf, &phf, 1e-4f, &ff, &tif, &tjf, NULL);
            const double df = norm3(sub3(f, v3(ff.x, ff.y, ff.z))) / norm3(f);
            const double dtq = norm3(sub3(ti, v3(tif.x, tif.y, tif.z))) / norm3(ti);
            worst_f = df > worst_f ? df : worst_f;
            worst_t = dtq > worst_t ? dtq : worst_t;
        }
        /* The overlap (1e-2 of the radii) loses ~2 digits to cancellation in float. */
        ENSURE_MSG(worst_f < 1e-3 && worst_t < 1e-3, "float: force %g, torque %g", worst_f,
                   worst_t);
    }
}

/* A ball thrown flat along the floor without spin slides, friction turns its slip into spin,
 * and it rolls on at 5/7 of its speed (a solid sphere: I = 2/5 m r^2), whatever mu; rolling
 * resistance then slows it. Integrated here with the Verlet halves and sim_verlet_spin. */
static double ball_on_floor(int hertz, double mu, double mu_r, double *spin_ratio) {
    sim_params p = friction_params(hertz, mu, mu_r);
    p.box_half = 1.0;
    p.gravity = v3(0.0, 0.0, -9.81);
    p.restitution = 0.5;
    const double r = 0.05, m = 0.5, v0 = 0.5;
    if (hertz) {
        p.stiffness = 1e8;
    }
    const double sink = hertz ? pow(m * 9.81 / p.stiffness, 2.0 / 3.0) : m * 9.81 / p.stiffness;
    sim_vec4d pos = v4(-0.9, 0.0, -1.0 + r - sink, r); /* resting on the floor */
    sim_vec4d vel = v4(v0, 0.0, 0.0, m);
    const sim_state s = {.n = 1, .pos = &pos, .vel = &vel};
    p.dt = sim_default_dt(&p, &s);
    const sim_physics ph = sim_physics_from_params(&p);
    sim_vec3d w = v3(0, 0, 0), f = v3(0, 0, 0), tq = v3(0, 0, 0);
    sim_contact_history_d walls[6];
    memset(walls, 0, sizeof walls);
    const double t_end = 2.0 * v0 / (mu * 9.81) + 0.05; /* slipping lasts 2 v0 / (7 mu g) */
    for (double t = 0.0; t < t_end; t += p.dt) {
        sim_verlet_first_d(&pos, &vel, f, p.dt);
        sim_verlet_spin_d(&w, tq, pos, m, p.dt);
        f = v3(0, 0, m * -9.81);
        tq = v3(0, 0, 0);
        sim_friction_walls_d(pos, vel, w, walls, &ph, p.dt, &f, &tq, NULL);
        sim_verlet_second_d(&vel, f, p.dt);
        sim_verlet_spin_d(&w, tq, pos, m, p.dt);
    }
    *spin_ratio = w.y * r / vel.x; /* 1 when rolling without slip */
    return vel.x / v0;
}

static void test_ball_rolls_at_five_sevenths(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        for (double mu = 0.2; mu < 0.7; mu += 0.4) {
            double spin = 0.0;
            const double ratio = ball_on_floor(hertz, mu, 0.0, &spin);
            ENSURE_MSG(fabs(ratio - 5.0 / 7.0) < 0.01, "hertz %d mu %g: v/v0 = %g", hertz, mu,
                       ratio);
            ENSURE_MSG(fabs(spin - 1.0) < 1e-3, "hertz %d mu %g: w r / v = %g", hertz, mu, spin);
            const double slowed = ball_on_floor(hertz, mu, 0.01, &spin);
            ENSURE_MSG(slowed < ratio - 0.02, "rolling resistance: %g, not below %g", slowed,
                       ratio);
        }
    }
}

/* ======================== against LAMMPS (--lammps DIR) ======================== */

/* One body of a case: radius, density (LAMMPS's data file takes a density), position, velocity,
 * angular velocity. */
typedef struct {
    double r, rho;
    sim_vec3d x, v, w;
} lbody;

#define LMAX 12

/* One case: nbsim's parameters, how to map them, the bodies, the run. */
typedef struct {
    const char *name;
    sim_params p;  /* stiffness, restitution, hertz, friction, ratio, damping, box, gravity */
    double nu;     /* > 0: hertz/material E nu with mindlin NULL (ratio = 2(1-nu)/(2-nu)) */
    int integrate; /* 0: bodies stay put (the histories grow at constant velocities) */
    int steps;
    double dt;
    int n;
    lbody b[LMAX];
} lcase;

/* What LAMMPS dumped: per step, per body (sorted by id) mass radius x v w f t. */
typedef struct {
    double m, r;
    sim_vec3d x, v, w, f, t;
} lrow;

/* LAMMPS's MathSpecial::powint, for the Tsuji damping polynomial of pair_style granular. */
static double powint(double x, int n) {
    double yy, ww;
    if (n == 0) {
        return 1.0;
    }
    if (x == 0.0) {
        return 0.0;
    }
    int nn = n > 0 ? n : -n;
    ww = x;
    for (yy = 1.0; nn != 0; nn >>= 1, ww *= ww) {
        if (nn & 1) {
            yy *= ww;
        }
    }
    return n > 0 ? yy : 1.0 / yy;
}

/* `damping tsuji` takes a restitution-like number c and damps with alpha(c) sqrt(m_eff k_n a):
 * the pair (PairGranular::coeff) and the wall (FixWallGran::init, with pow) evaluate the same
 * polynomial in two ways. */
static double tsuji_pair(double c) {
    return 1.2728 - 4.2783 * c + 11.087 * (c * c) - 22.348 * (c * c * c) + 27.467 * powint(c, 4) -
           18.022 * powint(c, 5) + 4.8218 * powint(c, 6);
}

static double tsuji_wall(double c) {
    return 1.2728 - 4.2783 * c + 11.087 * pow(c, 2) - 22.348 * pow(c, 3) + 27.467 * pow(c, 4) -
           18.022 * pow(c, 5) + 4.8218 * pow(c, 6);
}

/* The c whose alpha(c) is the given dashpot factor 2 zeta (alpha falls monotonically from 1.27
 * at c = 0 to 3e-4 at c = 1): bisection to the last bit. */
static double tsuji_input(double alpha) {
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 200; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) {
            break;
        }
        if (tsuji_pair(mid) > alpha) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return fabs(tsuji_pair(lo) - alpha) < fabs(tsuji_pair(hi) - alpha) ? lo : hi;
}

/* LAMMPS's mass of a sphere from its density (AtomVecSphere::data_atom_post). */
static double lmp_mass(const lbody *b) {
    return b->rho * (4.0 * kPi / 3.0 * b->r * b->r * b->r);
}

/* The physics for a case's pairs and walls: nbsim's, with the damping ratio LAMMPS will use
 * (alpha of the c written to the deck, / 2), which differs from nbsim's by rounding (checked). */
typedef struct {
    sim_physics pair, wall;
    double c;     /* the tsuji input written to the deck */
    double ratio; /* k_t / k_n of nbsim */
    double x;     /* x_gamma_t */
} lmodel;

static lmodel lmodel_of(const lcase *k) {
    lmodel m;
    sim_params p = k->p;
    if (k->nu > 0.0) { /* hertz/material with mindlin NULL fixes the ratio by Poisson's ratio */
        p.stiffness_ratio = 2.0 * (1.0 - k->nu) / (2.0 - k->nu);
    }
    m.pair = sim_physics_from_params(&p);
    m.pair.inv_dt = 0.0; /* LAMMPS has no contact-onset weighting of the dashpot */
    m.ratio = p.stiffness_ratio > 0.0 ? p.stiffness_ratio : SIM_DEFAULT_STIFFNESS_RATIO;
    m.x = m.pair.tangential_damping;
    const double alpha = 2.0 * m.pair.damping_ratio;
    m.c = tsuji_input(alpha);
    const double a_pair = tsuji_pair(m.c), a_wall = tsuji_wall(m.c);
    ENSURE_MSG(fabs(a_pair - alpha) <= 1e-13 * alpha && fabs(a_wall - alpha) <= 1e-13 * alpha,
               "%s: tsuji %.17g gives %.17g / %.17g for %.17g", k->name, m.c, a_pair, a_wall,
               alpha);
    m.wall = m.pair;
    m.pair.damping_ratio = 0.5 * a_pair;
    m.wall.damping_ratio = 0.5 * a_wall;
    return m;
}

static double overlap_of(const lbody *a, const lbody *b) {
    return a->r + b->r - norm3(sub3(a->x, b->x));
}

/* Writes the case's data file. */
static void write_data(const lcase *k, const char *path) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f == NULL) {
        return;
    }
    const double L = k->p.box_half + 2.0;
    fprintf(f, "nbsim tests/test_friction.c case %s\n\n%d atoms\n%d atom types\n\n", k->name, k->n,
            k->n);
    fprintf(f, "%.17g %.17g xlo xhi\n%.17g %.17g ylo yhi\n%.17g %.17g zlo zhi\n\n", -L, L, -L, L,
            -L, L);
    fprintf(f, "Atoms # sphere\n\n");
    for (int i = 0; i < k->n; ++i) {
        const lbody *b = &k->b[i];
        fprintf(f, "%d %d %.17g %.17g %.17g %.17g %.17g\n", i + 1, i + 1, 2.0 * b->r, b->rho,
                b->x.x, b->x.y, b->x.z);
    }
    fprintf(f, "\nVelocities\n\n");
    for (int i = 0; i < k->n; ++i) {
        const lbody *b = &k->b[i];
        fprintf(f, "%d %.17g %.17g %.17g %.17g %.17g %.17g\n", i + 1, b->v.x, b->v.y, b->v.z,
                b->w.x, b->w.y, b->w.z);
    }
    fclose(f);
}

/* Writes the model file: nbsim's parameters in LAMMPS's keywords (docs/friction.md), per pair of
 * bodies (types) and per body and wall axis. Hertz: k = k_n sqrt(R_eff) (hertz k_n: F = k_n a d,
 * a = sqrt(R_eff d)), Mindlin k_t = k_t' a with k_t' = 3/2 ratio k / sqrt(R_eff); rolling sds
 * takes constants, so a Hertz case's rolling spring (nbsim's is the tangential one, ~ a) is
 * written for the overlap of the bodies as they are (static cases only). */
static void write_model(const lcase *k, const lmodel *m, const char *path) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f == NULL) {
        return;
    }
    const sim_params *p = &k->p;
    const double mu_r = p->rolling_friction;
    ENSURE_MSG(!(p->hertz && mu_r > 0.0 && k->integrate), "%s: Hertz rolling is static only",
               k->name);
    for (int i = 0; i < k->n; ++i) {
        for (int j = i; j < k->n; ++j) {
            const lbody *a = &k->b[i], *b = &k->b[j];
            const double r_eff = a->r * b->r / (a->r + b->r);
            const double ma = lmp_mass(a), mb = lmp_mass(b), m_eff = ma * mb / (ma + mb);
            const double d = i != j ? overlap_of(a, b) : 0.0;
            double kr = 0.0, gr = 0.0;
            fprintf(f, "pair_coeff %d %d ", i + 1, j + 1);
            if (!p->hertz) {
                kr = m->ratio * p->stiffness;
                gr = m->x * 2.0 * m->pair.damping_ratio * sqrt(m_eff * p->stiffness);
                fprintf(f, "hooke %.17g %.17g tangential linear_history %.17g %.17g %.17g",
                        p->stiffness, m->c, kr, m->x, p->friction);
            } else {
                const double kn = p->stiffness / sqrt(r_eff);
                const double ktl = 1.5 * m->ratio * p->stiffness / sqrt(r_eff);
                const double ar = d > 0.0 ? sqrt(d * r_eff) : 1.0;
                kr = ktl * ar;
                gr = m->x * 2.0 * m->pair.damping_ratio * sqrt(m_eff * (kn * ar));
                if (k->nu > 0.0) {
                    const double e_mod = 1.5 * p->stiffness * (1.0 - k->nu * k->nu) / sqrt(r_eff);
                    fprintf(f,
                            "hertz/material %.17g %.17g %.17g tangential mindlin NULL %.17g %.17g",
                            e_mod, m->c, k->nu, m->x, p->friction);
                } else {
                    fprintf(f, "hertz %.17g %.17g tangential mindlin %.17g %.17g %.17g", kn, m->c,
                            ktl, m->x, p->friction);
                }
            }
            if (mu_r > 0.0) {
                fprintf(f, " rolling sds %.17g %.17g %.17g", kr, gr, mu_r);
            }
            fprintf(f, " damping tsuji\n");
        }
    }
    /* Walls: per body (its own R_eff = r and mass) and axis; fix wall/gran converts the tsuji
     * input itself (FixWallGran::init). */
    static const char *const planes[3] = {"xplane", "yplane", "zplane"};
    for (int i = 0; i < k->n; ++i) {
        const lbody *b = &k->b[i];
        const double mb = lmp_mass(b);
        fprintf(f, "group body%d type %d\n", i + 1, i + 1);
        for (int axis = 0; axis < 3; ++axis) {
            const double x = axis == 0 ? b->x.x : axis == 1 ? b->x.y : b->x.z;
            const double d = b->r - (p->box_half - fabs(x)); /* the nearer wall */
            double kr = 0.0, gr = 0.0;
            fprintf(f, "fix wall%d%c body%d wall/gran granular ", i + 1, 'x' + axis, i + 1);
            if (!p->hertz) {
                kr = m->ratio * p->stiffness;
                gr = m->x * 2.0 * m->wall.damping_ratio * sqrt(mb * p->stiffness);
                fprintf(f, "hooke %.17g %.17g tangential linear_history %.17g %.17g %.17g",
                        p->stiffness, m->c, kr, m->x, p->friction);
            } else {
                /* Not hertz/material: this LAMMPS's wall maps E and nu unlike its pair style. */
                const double kn = p->stiffness / sqrt(b->r);
                const double ktl = 1.5 * m->ratio * p->stiffness / sqrt(b->r);
                const double ar = d > 0.0 ? sqrt(d * b->r) : 1.0;
                kr = ktl * ar;
                gr = m->x * 2.0 * m->wall.damping_ratio * sqrt(mb * (kn * ar));
                fprintf(f, "hertz %.17g %.17g tangential mindlin %.17g %.17g %.17g", kn, m->c, ktl,
                        m->x, p->friction);
            }
            if (mu_r > 0.0) {
                fprintf(f, " rolling sds %.17g %.17g %.17g", kr, gr, mu_r);
            }
            fprintf(f, " damping tsuji %s %.17g %.17g\n", planes[axis], -p->box_half, p->box_half);
        }
    }
    const sim_vec3d g = p->gravity;
    if (norm3(g) > 0.0) {
        fprintf(f, "fix gravity all gravity %.17g vector %.17g %.17g %.17g\n", norm3(g),
                g.x / norm3(g), g.y / norm3(g), g.z / norm3(g));
    }
    fclose(f);
}

/* Reads a dump of n bodies: rows[step * n + body] for steps 0..steps; returns the steps read. */
static int read_dump(const char *path, int n, int steps, lrow *rows) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    char line[1024];
    int step = -1, got = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "ITEM: TIMESTEP", 14) == 0) {
            if (fgets(line, sizeof line, f) == NULL) {
                break;
            }
            step = atoi(line);
        } else if (strncmp(line, "ITEM: ATOMS", 11) == 0 && step >= 0 && step <= steps) {
            for (int i = 0; i < n; ++i) {
                lrow r;
                int id = 0;
                if (fgets(line, sizeof line, f) == NULL ||
                    sscanf(line,
                           "%d %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf",
                           &id, &r.m, &r.r, &r.x.x, &r.x.y, &r.x.z, &r.v.x, &r.v.y, &r.v.z, &r.w.x,
                           &r.w.y, &r.w.z, &r.f.x, &r.f.y, &r.f.z, &r.t.x, &r.t.y, &r.t.z) != 18 ||
                    id < 1 || id > n) {
                    fclose(f);
                    return -1;
                }
                rows[step * n + id - 1] = r;
            }
            got = step + 1;
        }
    }
    fclose(f);
    return got;
}

/* The largest difference between us and LAMMPS, relative to the largest magnitude in the run. */
typedef struct {
    double diff, scale;
} lerr;

static void lerr_add(lerr *e, sim_vec3d ours, sim_vec3d theirs) {
    const double d = norm3(sub3(ours, theirs)), s = norm3(theirs);
    e->diff = d > e->diff ? d : e->diff;
    e->scale = s > e->scale ? s : e->scale;
}

static double lerr_rel(const lerr *e) {
    return e->scale > 0.0 ? e->diff / e->scale : e->diff;
}

static const char *lammps_dir;
static int lammps_ran, lammps_skipped;

/* Runs case k in LAMMPS and the same steps with the functions; tol: the largest relative
 * difference allowed for forces and torques (and, moving, positions, velocities and spins). */
static void lammps_case(const lcase *k, double tol, sim_vec3d *v_end, sim_vec3d *w_end) {
    if (lammps_skipped) {
        return;
    }
    const lmodel m = lmodel_of(k);
    char data[512], model[512], dump[512], cmd[4096];
    snprintf(data, sizeof data, "%s", test_tmp_path("case.data"));
    snprintf(model, sizeof model, "%s", test_tmp_path("case.model"));
    snprintf(dump, sizeof dump, "%s", test_tmp_path("case.dump"));
    write_data(k, data);
    write_model(k, &m, model);
    snprintf(cmd, sizeof cmd,
             "bash '%s/run_lammps.sh' '%s' -var data case.data -var model case.model -var dump "
             "case.dump -var steps %d -var dt %.17g -var integrate %d -var skin 0.1",
             lammps_dir, test_tmp_dir, k->steps, k->dt, k->integrate);
    remove(dump);
    const int rc = system(cmd);
    if (rc != 0) {
        ENSURE_MSG(0, "%s: LAMMPS failed (%s), see %s/lammps.log", k->name, cmd, test_tmp_dir);
        return;
    }
    const int n = k->n;
    lrow *rows = calloc((size_t)(k->steps + 1) * (size_t)n, sizeof *rows);
    const int got = read_dump(dump, n, k->steps, rows);
    ENSURE_MSG(got == k->steps + 1, "%s: %d steps in the dump, expected %d", k->name, got,
               k->steps + 1);
    if (got != k->steps + 1) {
        free(rows);
        return;
    }
    /* The bodies as LAMMPS holds them (its masses to the last bit). */
    sim_vec4d pos[LMAX], vel[LMAX];
    sim_vec3d w[LMAX], f[LMAX], t[LMAX];
    for (int i = 0; i < n; ++i) {
        const lrow *r = &rows[i];
        pos[i] = v4(r->x.x, r->x.y, r->x.z, r->r);
        vel[i] = v4(r->v.x, r->v.y, r->v.z, r->m);
        w[i] = r->w;
        f[i] = r->f; /* the set-up forces: LAMMPS evaluates them without advancing histories */
        t[i] = r->t;
    }
    static sim_contact_history_d pair[LMAX][LMAX], walls[LMAX][6];
    memset(pair, 0, sizeof pair);
    memset(walls, 0, sizeof walls);
    if (k->integrate) { /* so the set-up forces are the frictionless ones: no contact at step 0 */
        for (int i = 0; i < n; ++i) {
            for (int j = i + 1; j < n; ++j) {
                ENSURE_MSG(overlap_of(&k->b[i], &k->b[j]) < 0.0, "%s: %d, %d touch at step 0",
                           k->name, i, j);
            }
        }
    }
    const double dt = k->dt, dtf = 0.5 * dt; /* fix nve/sphere */
    lerr ef = {0, 0}, et = {0, 0}, ex = {0, 0}, ev = {0, 0}, ew = {0, 0};
    int sticking = 0, sliding = 0; /* contact-steps of the pairs */
    for (int step = 1; step <= k->steps; ++step) {
        if (k->integrate) { /* FixNVESphere::initial_integrate */
            for (int i = 0; i < n; ++i) {
                const double dtfm = dtf / vel[i].w;
                vel[i].x += dtfm * f[i].x;
                vel[i].y += dtfm * f[i].y;
                vel[i].z += dtfm * f[i].z;
                pos[i].x += dt * vel[i].x;
                pos[i].y += dt * vel[i].y;
                pos[i].z += dt * vel[i].z;
                const double dtirotate = dtf / 0.4 / (pos[i].w * pos[i].w * vel[i].w);
                w[i] = add3(w[i], scale3(dtirotate, t[i]));
            }
        }
        for (int i = 0; i < n; ++i) {
            f[i] = scale3(vel[i].w, k->p.gravity);
            t[i] = v3(0, 0, 0);
        }
        for (int i = 0; i < n; ++i) {
            for (int j = i + 1; j < n; ++j) {
                sim_vec3d fc, ti, tj;
                if (sim_friction_contact_d(pos[i], vel[i], w[i], pos[j], vel[j], w[j], &pair[i][j],
                                           &m.pair, dt, &fc, &ti, &tj, NULL)) {
                    const sim_vec3d d = sub3(xyz(pos[i]), xyz(pos[j]));
                    const sim_vec3d nn = scale3(1.0 / norm3(d), d);
                    const double fn = dot3(fc, nn);
                    const double ft = norm3(sub3(fc, scale3(fn, nn)));
                    if (ft >= k->p.friction * fabs(fn) * (1.0 - 1e-12)) {
                        ++sliding;
                    } else {
                        ++sticking;
                    }
                    f[i] = add3(f[i], fc);
                    f[j] = sub3(f[j], fc);
                    t[i] = add3(t[i], ti);
                    t[j] = add3(t[j], tj);
                }
            }
            sim_friction_walls_d(pos[i], vel[i], w[i], walls[i], &m.wall, dt, &f[i], &t[i], NULL);
        }
        if (k->integrate) { /* FixNVESphere::final_integrate */
            for (int i = 0; i < n; ++i) {
                const double dtfm = dtf / vel[i].w;
                vel[i].x += dtfm * f[i].x;
                vel[i].y += dtfm * f[i].y;
                vel[i].z += dtfm * f[i].z;
                const double dtirotate = dtf / 0.4 / (pos[i].w * pos[i].w * vel[i].w);
                w[i] = add3(w[i], scale3(dtirotate, t[i]));
            }
        }
        for (int i = 0; i < n; ++i) {
            const lrow *r = &rows[step * n + i];
            lerr_add(&ef, f[i], r->f);
            lerr_add(&et, t[i], r->t);
            lerr_add(&ex, xyz(pos[i]), r->x);
            lerr_add(&ev, xyz(vel[i]), r->v);
            lerr_add(&ew, w[i], r->w);
        }
    }
    printf("  %-26s %4d steps: max |d| / max |.|  force %.1e  torque %.1e", k->name, k->steps,
           lerr_rel(&ef), lerr_rel(&et));
    if (k->integrate) {
        printf("  x %.1e  v %.1e  w %.1e", lerr_rel(&ex), lerr_rel(&ev), lerr_rel(&ew));
    }
    printf("  (pair contact-steps: %d sticking, %d sliding)\n", sticking, sliding);
    ENSURE(k->integrate || (sticking > 0 && sliding > 0)); /* static: both regimes */
    ENSURE_MSG(lerr_rel(&ef) <= tol && lerr_rel(&et) <= tol, "%s: force %g, torque %g (tol %g)",
               k->name, lerr_rel(&ef), lerr_rel(&et), tol);
    ENSURE(et.scale > 0.0); /* friction did act */
    if (k->integrate) {
        ENSURE_MSG(lerr_rel(&ex) <= tol && lerr_rel(&ev) <= tol && lerr_rel(&ew) <= tol,
                   "%s: x %g, v %g, w %g (tol %g)", k->name, lerr_rel(&ex), lerr_rel(&ev),
                   lerr_rel(&ew), tol);
    }
    if (v_end != NULL) {
        const lrow *r = &rows[k->steps * n];
        *v_end = r->v;
        *w_end = r->w;
    }
    ++lammps_ran;
    free(rows);
}

/* The static configuration: four pairs in contact (one body in two), one body in two walls at
 * a corner, one in the floor, all moving and spinning, bodies in place (no integration), so
 * every step drives the histories on at constant velocities: sticking first, sliding later. */
static void static_bodies(lcase *k) {
    const lbody b[] = {
        /* r, rho, x, v, w */
        {0.5, 1000.0, {0.0, 0.0, 0.0}, {0.10, 0.20, -0.05}, {0.0, 0.0, 1.0}},
        {0.5, 1000.0, {0.9, 0.1, 0.05}, {-0.05, 0.0, 0.02}, {0.3, -0.2, 0.0}},
        {0.3, 2500.0, {0.0, 0.78, 0.1}, {0.0, -0.3, 0.1}, {-2.0, 0.5, 0.7}},
        {0.4, 800.0, {1.45, 0.75, -0.15}, {0.02, -0.01, 0.0}, {0.0, 0.0, 0.0}},
        {0.35, 1200.0, {1.9, 1.15, -0.45}, {-0.1, 0.0, 0.3}, {1.0, 1.0, -1.0}},
        {0.45, 1000.0, {-2.6, -2.6, 1.0}, {-0.02, 0.03, 0.0}, {0.5, -0.5, 0.2}},
        {0.3, 1500.0, {-1.5, 1.8, -2.75}, {0.2, -0.1, 0.0}, {0.0, 3.0, 0.0}},
    };
    k->n = (int)(sizeof b / sizeof b[0]);
    memcpy(k->b, b, sizeof b);
    k->p.box_half = 3.0;
    k->integrate = 0;
    k->steps = 60;
    k->dt = 2e-4;
}

static lcase lcase_static(const char *name, int hertz, double mu, double mu_r) {
    lcase k;
    memset(&k, 0, sizeof k);
    k.name = name;
    k.p = sim_params_default();
    k.p.hertz = hertz;
    k.p.stiffness = hertz ? 1e7 : 1e5;
    k.p.restitution = 0.6;
    k.p.friction = mu;
    k.p.rolling_friction = mu_r;
    static_bodies(&k);
    return k;
}

static void test_lammps_static(void) {
    lcase k = lcase_static("hooke static", 0, 0.5, 0.1);
    int pairs = 0, walls = 0;
    for (int i = 0; i < k.n; ++i) {
        for (int j = i + 1; j < k.n; ++j) {
            pairs += overlap_of(&k.b[i], &k.b[j]) > 0.0;
        }
        const double x[3] = {k.b[i].x.x, k.b[i].x.y, k.b[i].x.z};
        for (int a = 0; a < 3; ++a) {
            walls += k.b[i].r - (k.p.box_half - fabs(x[a])) > 0.0;
        }
    }
    ENSURE(pairs == 4 && walls == 3); /* bodies 1-2, 1-3, 2-4, 4-5; body 6 at x and y, 7 at z */
    lammps_case(&k, 1e-12, NULL, NULL);
    k = lcase_static("hooke static, mu 0.05", 0, 0.05, 0.02);
    k.p.stiffness_ratio = 0.8;
    k.p.tangential_damping.value = 1.0;
    k.p.tangential_damping.set = 1;
    lammps_case(&k, 1e-12, NULL, NULL);
    k = lcase_static("hertz static", 1, 0.15, 0.1);
    lammps_case(&k, 1e-12, NULL, NULL);
    k = lcase_static("hertz/material static", 1, 0.3, 0.05);
    k.nu = 0.3; /* mindlin NULL: k_t = 8 G_eff a, ratio 2 (1 - nu) / (2 - nu) */
    lammps_case(&k, 1e-12, NULL, NULL);
}

/* Two equal spheres meet at relative speed 1 m/s and impact angle theta (between the relative
 * velocity and the line of centres), integrated by LAMMPS's fix nve/sphere and by the same steps
 * here; returns the rebound angle and spin LAMMPS gives. Small angles stick, large ones slide
 * through the whole contact. */
static lcase lcase_impact(int hertz, double theta, double mu, double mu_r) {
    lcase k;
    memset(&k, 0, sizeof k);
    k.name = hertz ? "hertz impact" : "hooke impact";
    k.p = sim_params_default();
    k.p.hertz = hertz;
    k.p.stiffness = hertz ? 1e7 : 1e5;
    k.p.restitution = 0.8;
    k.p.friction = mu;
    k.p.rolling_friction = mu_r;
    k.p.box_half = 3.0;
    k.n = 2;
    /* Body 1 moves at u / 2, body 2 at -u / 2; they touch `lead` seconds in, at -+r on x. */
    const double r = 0.1, rho = 2500.0, lead = 0.02;
    const sim_vec3d u = v3(cos(theta), sin(theta), 0.0); /* velocity of 1 relative to 2 */
    k.b[0] =
        (lbody){r, rho, sub3(v3(-r, 0, 0), scale3(0.5 * lead, u)), scale3(0.5, u), v3(0, 0, 0)};
    k.b[1] =
        (lbody){r, rho, add3(v3(r, 0, 0), scale3(0.5 * lead, u)), scale3(-0.5, u), v3(0, 0, 0)};
    const double m = rho * 4.0 / 3.0 * kPi * r * r * r, m_eff = 0.5 * m;
    const double tc = hertz ? sim_contact_time_hertz(k.p.stiffness, m_eff, 1.0)
                            : sim_contact_time(k.p.stiffness, m_eff);
    const double tc_n = hertz ? sim_contact_time_hertz(k.p.stiffness, m_eff, u.x) : tc;
    k.dt = tc / 80.0;
    k.integrate = 1;
    k.steps = (int)((lead + 1.5 * tc_n) / k.dt);
    return k;
}

static void test_lammps_impacts(void) {
    printf("  oblique impacts (equal spheres, e = 0.8, mu = 0.3): angle -> rebound angle, spin\n");
    for (int hertz = 0; hertz <= 1; ++hertz) {
        for (int deg = 5; deg <= 85; deg += 20) {
            lcase k = lcase_impact(hertz, deg * kPi / 180.0, 0.3, hertz ? 0.0 : 0.05);
            sim_vec3d v = {0}, w = {0};
            lammps_case(&k, 1e-9, &v, &w);
            if (lammps_skipped) {
                return;
            }
            /* Body 1 leaves with v; its rebound angle against the line of centres. */
            printf("    %s %2d deg: rebound %6.2f deg, w_z %8.4f rad/s\n",
                   hertz ? "hertz" : "hooke", deg, atan2(v.y, -v.x) * 180.0 / kPi, w.z);
        }
    }
}

/* A ball thrown along the floor under gravity (the wall with friction and rolling resistance). */
static void test_lammps_wall_roll(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        lcase k;
        memset(&k, 0, sizeof k);
        k.name = hertz ? "hertz ball on floor" : "hooke ball on floor";
        k.p = sim_params_default();
        k.p.hertz = hertz;
        k.p.stiffness = hertz ? 1e8 : 1e5;
        k.p.restitution = 0.5;
        k.p.friction = 0.4;
        k.p.rolling_friction = hertz ? 0.0 : 0.02;
        k.p.box_half = 1.0;
        k.p.gravity = v3(0.0, 0.0, -9.81);
        k.n = 1;
        k.b[0] = (lbody){0.05, 2500.0, v3(-0.8, 0.1, -0.945), v3(0.6, 0.1, -0.2), v3(0, 0, 3.0)};
        const double m = lmp_mass(&k.b[0]);
        const double tc = hertz ? sim_contact_time_hertz(k.p.stiffness, m, 1.0)
                                : sim_contact_time(k.p.stiffness, m);
        k.dt = tc / 60.0;
        k.integrate = 1;
        k.steps = (int)(0.25 / k.dt);
        sim_vec3d v, w;
        lammps_case(&k, 1e-9, &v, &w);
    }
}

/* The mapping's own claim: Debian's LAMMPS is the version it was written for. */
static int lammps_version_ok(void) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash '%s/run_lammps.sh' --version", lammps_dir);
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    if (p == NULL || fgets(line, sizeof line, p) == NULL) {
        line[0] = '\0';
    }
    const int rc = p != NULL ? pclose(p) : -1;
    if (rc != 0 || line[0] == '\0') {
        printf("LAMMPS with the GRANULAR package not found (run_lammps.sh): skipped\n");
        return 0;
    }
    line[strcspn(line, "\n")] = '\0';
    printf("LAMMPS %s\n", line);
    if (strstr(line, "29 Sep 2021") == NULL) {
        printf("the mapping (docs/friction.md) is for LAMMPS 29 Sep 2021: skipped\n");
        return 0;
    }
    return 1;
}

static const ensure_test tests[] = {
    {"params", test_params},
    {"default_dt", test_default_dt},
    {"frictionless_bit_identical", test_frictionless_bit_identical},
    {"conservation", test_conservation},
    {"stick_then_slide", test_stick_then_slide},
    {"rolling_limit", test_rolling_limit},
    {"dissipation_constant_drive", test_dissipation_constant_drive},
    {"dissipation_varying_drive", test_dissipation_varying_drive},
    {"dashpot_above_limit", test_dashpot_above_limit},
    {"float_matches_double", test_float_matches_double},
    {"ball_rolls_at_five_sevenths", test_ball_rolls_at_five_sevenths},
};

static const ensure_test lammps_tests[] = {
    {"lammps_static", test_lammps_static},
    {"lammps_impacts", test_lammps_impacts},
    {"lammps_wall_roll", test_lammps_wall_roll},
};

int main(int argc, char **argv) {
    test_tmp_name = "test_friction";
    if (argc > 2 && strcmp(argv[1], "--lammps") == 0) {
        lammps_dir = argv[2];
        if (!lammps_version_ok()) {
            return ENSURE_SKIP_CODE;
        }
        const int rc = ensure_run(lammps_tests, (int)(sizeof lammps_tests / sizeof lammps_tests[0]),
                                  argc > 3 ? argv[3] : NULL);
        if (rc == 0 && getenv("NBSIM_KEEP_LAMMPS") == NULL) {
            test_tmp_remove();
        } else if (test_tmp_dir[0] != '\0') {
            printf("LAMMPS's files: %s\n", test_tmp_dir);
        }
        return rc;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
