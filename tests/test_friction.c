/* SPDX-License-Identifier: MIT
 * nbsim — the friction model (physics_impl.h: sim_friction_contact, sim_friction_wall) on its own:
 * its parameters, the frictionless limit bit for bit, momentum and angular momentum, sticking and
 * sliding against closed forms, friction that only dissipates, float against double, a ball that
 * slides into rolling at 5/7 of its speed. test_friction_lammps compares them with LAMMPS, and
 * test_friction_run the CPU backend that runs them. */
#define _POSIX_C_SOURCE 200809L

#include "physics/physics.h"

#include "nbsim/params.h"

#include "ensure.h"
#include "friction_util.h"
#include "test_rng.h"
#include "test_tmp.h"

#include <stdint.h>
#include <stdlib.h>

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
    ENSURE_NEAR(ph.tangential.tangential_stiffness, 2.0 / 7.0 * p.stiffness, 1e-9);
    ENSURE_NEAR(ph.tangential.tangential_damping, sqrt(2.0 / 7.0), 1e-15);
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
    ENSURE(sim_physics_has_friction(&ph) && ph.tangential.tangential_damping == 0.0);
    ENSURE_NEAR(ph.tangential.tangential_stiffness, 0.8 * p.stiffness, 1e-9);
    ENSURE(sim_param_set(&p, SIM_PARAM_TANGENTIAL_DAMPING, "auto", &err) == SIM_OK &&
           p.tangential_damping.set == 0);
    ph = sim_physics_from_params(&p);
    ENSURE_NEAR(ph.tangential.tangential_damping, sqrt(0.8), 1e-15);
    p.hertz = 1; /* Hertz: the ratio is to dF/dd = 3/2 k d^(1/2) */
    ph = sim_physics_from_params(&p);
    ENSURE_NEAR(ph.tangential.tangential_stiffness, 1.5 * 0.8 * p.stiffness, 1e-9);
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
    ENSURE(f.tangential.friction == (float)ph.tangential.friction && f.rolling.rolling_friction == (float)ph.rolling.rolling_friction &&
           f.tangential.tangential_stiffness == (float)ph.tangential.tangential_stiffness &&
           f.tangential.tangential_damping == (float)ph.tangential.tangential_damping);
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
        const double kt = hertz ? ph.tangential.tangential_stiffness * sqrt(d) : ph.tangential.tangential_stiffness;
        double eta = 2.0 * ph.normal.damping_ratio * sqrt(p.stiffness * m);
        eta *= hertz ? sqrt(sqrt(d)) : 1.0;
        const double gt = ph.tangential.tangential_damping * eta;
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
                    hertz ? ph.tangential.tangential_stiffness * sqrt(d) : ph.tangential.tangential_stiffness;
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
                double eta = 2.0 * ph.normal.damping_ratio * sqrt(p.stiffness * mi * mj / (mi + mj));
                eta *= hertz ? sqrt(sqrt(d)) : 1.0;
                const double g = ph.tangential.tangential_damping * eta * fmax(norm3(vt), norm3(vl));
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

int main(int argc, char **argv) {
    test_tmp_name = "test_friction";
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
