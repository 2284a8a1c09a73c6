/* SPDX-License-Identifier: MIT
 * nbsim — a contact composed of its sub-models, as LAMMPS's GranularModel composes its own:
 * the normal law (normal.h) for pairs and walls, then, with friction, the tangential
 * (tangential.h) and rolling (rolling.h) parts on the contact's history. No constants of its
 * own; its history type (sim_contact_history_*) is what a contact keeps from step to step.
 * Read twice, like every part (normal.h says how). */
#ifndef SIM_PHYSICS_CONTACT_H
#define SIM_PHYSICS_CONTACT_H
/* What one contact remembers from step to step (friction only): the tangential spring's
 * displacement xi and the rolling spring's roll [m], both in the contact's tangent plane, zero
 * when the contact begins. A sphere-wall contact has one too. */
typedef struct {
    sim_vec3f xi, roll;
} sim_contact_history_f;
typedef struct {
    sim_vec3d xi, roll;
} sim_contact_history_d;
#endif /* SIM_PHYSICS_CONTACT_H */

#ifdef SIM_FN
/* Contact force on body i from body j [N]; j receives the negative. Hot path on the GPU: the
 * non-touching case is 3 sub + 3 mul/fma + add + mul + compare (~10 instructions, no sqrt). */
SIM_HD SIM_V3 SIM_FN(sim_contact_force)(SIM_V4 pi, SIM_V4 vi, SIM_V4 pj, SIM_V4 vj,
                                        const SIM_PH *ph, SIM_R *energy) {
    SIM_V3 f;
    f.x = SIM_K(0.0);
    f.y = SIM_K(0.0);
    f.z = SIM_K(0.0);
    SIM_R dx = pi.x - pj.x;
    SIM_R dy = pi.y - pj.y;
    SIM_R dz = pi.z - pj.z;
    SIM_FN(sim_min_image)(&dx, &dy, &dz, ph);
    const SIM_R d2 = dx * dx + dy * dy + dz * dz;
    const SIM_R reach = pi.w + pj.w;
    if (d2 >= reach * reach) {
        return f;
    }
    if (!(d2 > SIM_K(0.0))) { /* coincident centres (or NaN): no normal, no force */
        return f;
    }
    const SIM_R inv = SIM_RSQRT(d2); /* 1 / |x_i - x_j| */
    const SIM_R nx = dx * inv, ny = dy * inv, nz = dz * inv;
    const SIM_R overlap = reach - d2 * inv;
    const SIM_R vn = (vi.x - vj.x) * nx + (vi.y - vj.y) * ny + (vi.z - vj.z) * nz;
    const SIM_R m_eff = vi.w * vj.w / (vi.w + vj.w);
    const SIM_R fn = SIM_FN(sim_normal_force)(overlap, vn, m_eff, ph, energy);
    f.x = fn * nx;
    f.y = fn * ny;
    f.z = fn * nz;
    return f;
}

/* Force of the two walls at -+box_half along one axis on a body at x [m] with speed v [m/s]
 * along it, radius r, mass m (the wall is an infinite mass, so m_eff = m). */
SIM_HD SIM_R SIM_FN(sim_wall_axis)(SIM_R x, SIM_R v, SIM_R r, SIM_R m, const SIM_PH *ph,
                                   SIM_R *energy) {
    SIM_R f = SIM_K(0.0);
    const SIM_R lo = r - ph->box.box_half - x; /* overlap with the wall at -L; normal +axis */
    if (lo > SIM_K(0.0)) {
        f += SIM_FN(sim_normal_force)(lo, v, m, ph, energy);
    }
    const SIM_R hi = x + r - ph->box.box_half; /* wall at +L; normal -axis, so v_n = -v */
    if (hi > SIM_K(0.0)) {
        f -= SIM_FN(sim_normal_force)(hi, -v, m, ph, energy);
    }
    return f;
}

/* The walls of the non-periodic axes [N]; energy gets their elastic energy. */
SIM_HD SIM_V3 SIM_FN(sim_wall_force)(SIM_V4 pos, SIM_V4 vel, const SIM_PH *ph, SIM_R *energy) {
    SIM_V3 f;
    f.x = f.y = f.z = SIM_K(0.0);
    if (!(ph->box.periodic & 1)) {
        f.x = SIM_FN(sim_wall_axis)(pos.x, vel.x, pos.w, vel.w, ph, energy);
    }
    if (!(ph->box.periodic & 2)) {
        f.y = SIM_FN(sim_wall_axis)(pos.y, vel.y, pos.w, vel.w, ph, energy);
    }
    if (!(ph->box.periodic & 4)) {
        f.z = SIM_FN(sim_wall_axis)(pos.z, vel.z, pos.w, vel.w, ph, energy);
    }
    return f;
}

/* Walls + gravity m g [N]; energy gets wall elastic + gravity potential -m g.x [J]. */
SIM_HD SIM_V3 SIM_FN(sim_body_force)(SIM_V4 pos, SIM_V4 vel, const SIM_PH *ph, SIM_R *energy) {
    SIM_V3 f = SIM_FN(sim_wall_force)(pos, vel, ph, energy);
    const SIM_R m = vel.w;
    f.x += m * SIM_PH_GX(ph);
    f.y += m * SIM_PH_GY(ph);
    f.z += m * SIM_PH_GZ(ph);
    if (energy != NULL) {
        *energy -= m * (SIM_PH_GX(ph) * pos.x + SIM_PH_GY(ph) * pos.y + SIM_PH_GZ(ph) * pos.z);
    }
    return f;
}

/* ---- Friction: tangential spring-dashpot-slider, rolling resistance, rotation ----
 * The sequence of LAMMPS's pair_style granular and fix wall/gran granular (stable 29Sep2021,
 * docs/friction.md), operation for operation, so that forces and torques agree to rounding
 * (tests/test_friction.c runs LAMMPS). Per contact, with n from j to i, overlap d, the normal
 * force F_n from sim_normal_force (positive = repulsive, not clamped) and dt the step:
 *   v_t  = (v_i - v_j) - ((v_i - v_j).n) n - (r_i w_i + r_j w_j) x n   slip velocity
 *   k_t  = ratio k (linear) or ratio 3/2 k d^(1/2) (Hertz-Mindlin)
 *   g_t  = x eta_n, eta_n = 2 zeta sqrt(k m_eff) (Hertz: times d^(1/4)): the normal dashpot
 *   xi   : rotated into the tangent plane keeping its length, then xi += v_t dt
 *   F_t  = -k_t xi - g_t v_t, and where |F_t| > mu |F_n|: F_t scaled to mu |F_n| and
 *          xi = -(F_t + g_t v_t) / k_t (the spring that gives the limit force)
 *   roll : the same with v_r = R_eff (w_i - w_j) x n, the same spring and dashpot, the limit
 *          mu_r |F_n|, torque R_eff n x F_r
 *   F_i  = F_n n + F_t,  T_i = -(r_i - d/2) n x F_t + R_eff n x F_r,
 *   T_j  = -(r_j - d/2) n x F_t - R_eff n x F_r,   F_j = -F_i.
 * A wall is a sphere of infinite mass and radius: m_eff = m, R_eff = r, lever r. */

/* The friction part of one contact, given its geometry: unit normal n (from j to i), overlap
 * d > 0, the normal force fn (sim_normal_force) and dashpot coefficient eta_n, the relative
 * velocity vr = v_i - v_j, the contact-point rotation wr = r_i w_i + r_j w_j, the relative spin
 * dw = w_i - w_j, R_eff and the levers li, lj (r - d/2; walls: r). Updates h; adds the tangential
 * force to *f and the torques to *ti, *tj (tj may be NULL: a wall); energy gets the springs'. */
SIM_HD void SIM_FN(sim_friction_apply)(SIM_V3 n, SIM_R d, SIM_R fn, SIM_R eta_n, SIM_V3 vr,
                                       SIM_V3 wr, SIM_V3 dw, SIM_R r_eff, SIM_R li, SIM_R lj,
                                       SIM_HIST *h, const SIM_PH *ph, SIM_R dt, SIM_V3 *f,
                                       SIM_V3 *ti, SIM_V3 *tj, SIM_R *energy) {
    const SIM_R vn = vr.x * n.x + vr.y * n.y + vr.z * n.z;
    const SIM_R fncrit = SIM_FABS(fn);
    const SIM_R kt = SIM_FN(sim_tangential_spring)(d, ph->normal.hertz, &ph->tangential);
    const SIM_R gt = ph->tangential.tangential_damping * eta_n;
    SIM_FN(sim_tangential_apply)
    (n, vn, vr, wr, kt, gt, fncrit, li, lj, &h->xi, &ph->tangential, dt, f, ti, tj);
    const SIM_R rolled =
        SIM_FN(sim_rolling_apply)(n, dw, r_eff, kt, gt, fncrit, &h->roll, &ph->rolling, dt, ti, tj);
    if (energy != NULL) {
        const SIM_R xi2 = h->xi.x * h->xi.x + h->xi.y * h->xi.y + h->xi.z * h->xi.z;
        *energy += SIM_K(0.5) * kt * (xi2 + rolled);
    }
}

/* Zeroes a contact's history: the contact has ended (or never began). */
SIM_HD void SIM_FN(sim_contact_history_clear)(SIM_HIST *h) {
    h->xi.x = h->xi.y = h->xi.z = SIM_K(0.0);
    h->roll.x = h->roll.y = h->roll.z = SIM_K(0.0);
}

/* Contact of bodies i and j with friction: positions (x, y, z, r), velocities (vx, vy, vz, m),
 * angular velocities w [rad/s], the contact's history h (updated in place: zeroed when they do
 * not touch) and the step dt [s]. Writes the force on i (j gets the negative) and the torques on
 * i and j [N m]; returns 1 when they touch. The normal force is sim_contact_force's, with its
 * geometry; an overlap that rounds to <= 0 is no contact. With friction = rolling_friction = 0
 * the force is sim_contact_force's bit for bit (positive overlaps) and the torques are zero, but
 * sim_contact_force stays the path to take then: no history, no spin. */
SIM_HD int SIM_FN(sim_friction_contact)(SIM_V4 pi, SIM_V4 vi, SIM_V3 wi, SIM_V4 pj, SIM_V4 vj,
                                        SIM_V3 wj, SIM_HIST *h, const SIM_PH *ph, SIM_R dt,
                                        SIM_V3 *force, SIM_V3 *torque_i, SIM_V3 *torque_j,
                                        SIM_R *energy) {
    force->x = force->y = force->z = SIM_K(0.0);
    torque_i->x = torque_i->y = torque_i->z = SIM_K(0.0);
    torque_j->x = torque_j->y = torque_j->z = SIM_K(0.0);
    SIM_R dx = pi.x - pj.x;
    SIM_R dy = pi.y - pj.y;
    SIM_R dz = pi.z - pj.z;
    SIM_FN(sim_min_image)(&dx, &dy, &dz, ph);
    const SIM_R d2 = dx * dx + dy * dy + dz * dz;
    const SIM_R reach = pi.w + pj.w;
    if (d2 >= reach * reach || !(d2 > SIM_K(0.0))) {
        SIM_FN(sim_contact_history_clear)(h);
        return 0;
    }
    const SIM_R inv = SIM_RSQRT(d2);
    const SIM_R overlap = reach - d2 * inv;
    if (!(overlap > SIM_K(0.0))) { /* rounding at the edge of contact: not touching */
        SIM_FN(sim_contact_history_clear)(h);
        return 0;
    }
    SIM_V3 n, vr, wr, dw;
    n.x = dx * inv;
    n.y = dy * inv;
    n.z = dz * inv;
    vr.x = vi.x - vj.x;
    vr.y = vi.y - vj.y;
    vr.z = vi.z - vj.z;
    const SIM_R vn = vr.x * n.x + vr.y * n.y + vr.z * n.z;
    const SIM_R m_eff = vi.w * vj.w / (vi.w + vj.w);
    const SIM_R fn = SIM_FN(sim_normal_force)(overlap, vn, m_eff, ph, energy);
    force->x = fn * n.x;
    force->y = fn * n.y;
    force->z = fn * n.z;
    if (!(ph->tangential.friction > SIM_K(0.0)) && !(ph->rolling.rolling_friction > SIM_K(0.0))) {
        return 1;
    }
    const SIM_R eta_n = SIM_FN(sim_normal_dashpot)(overlap, m_eff, &ph->normal);
    wr.x = pi.w * wi.x + pj.w * wj.x;
    wr.y = pi.w * wi.y + pj.w * wj.y;
    wr.z = pi.w * wi.z + pj.w * wj.z;
    dw.x = wi.x - wj.x;
    dw.y = wi.y - wj.y;
    dw.z = wi.z - wj.z;
    const SIM_R r_eff = pi.w * pj.w / reach;
    const SIM_R half = SIM_K(0.5) * overlap;
    SIM_FN(sim_friction_apply)
    (n, overlap, fn, eta_n, vr, wr, dw, r_eff, pi.w - half, pj.w - half, h, ph, dt, force, torque_i,
     torque_j, energy);
    return 1;
}

/* Wall w of the six (w = 2 axis + side; side 0: the wall at -box_half, normal +axis; side 1: at
 * +box_half, normal -axis) on a body with friction, with that wall's history h (zeroed when the
 * body does not touch it). Adds the force and torque on the body; returns 1 when it touches. */
SIM_HD int SIM_FN(sim_friction_wall)(SIM_V4 pos, SIM_V4 vel, SIM_V3 w, int wall, SIM_HIST *h,
                                     const SIM_PH *ph, SIM_R dt, SIM_V3 *force, SIM_V3 *torque,
                                     SIM_R *energy) {
    const int axis = wall >> 1;
    const SIM_R sign = (wall & 1) ? SIM_K(-1.0) : SIM_K(1.0); /* the normal along the axis */
    const SIM_R x = axis == 0 ? pos.x : axis == 1 ? pos.y : pos.z;
    const SIM_R v = axis == 0 ? vel.x : axis == 1 ? vel.y : vel.z;
    /* Overlap as sim_wall_axis writes it, so that the normal force is the frictionless one. */
    const SIM_R overlap = (wall & 1) ? x + pos.w - ph->box.box_half : pos.w - ph->box.box_half - x;
    if (!(overlap > SIM_K(0.0)) || ((ph->box.periodic >> axis) & 1)) { /* a periodic axis: no wall */
        SIM_FN(sim_contact_history_clear)(h);
        return 0;
    }
    const SIM_R fn = SIM_FN(sim_normal_force)(overlap, sign * v, vel.w, ph, energy);
    SIM_V3 n, vr, wr;
    n.x = axis == 0 ? sign : SIM_K(0.0);
    n.y = axis == 1 ? sign : SIM_K(0.0);
    n.z = axis == 2 ? sign : SIM_K(0.0);
    force->x += fn * n.x;
    force->y += fn * n.y;
    force->z += fn * n.z;
    if (!(ph->tangential.friction > SIM_K(0.0)) && !(ph->rolling.rolling_friction > SIM_K(0.0))) {
        return 1;
    }
    const SIM_R eta_n = SIM_FN(sim_normal_dashpot)(overlap, vel.w, &ph->normal);
    vr.x = vel.x;
    vr.y = vel.y;
    vr.z = vel.z;
    wr.x = pos.w * w.x;
    wr.y = pos.w * w.y;
    wr.z = pos.w * w.z;
    SIM_FN(sim_friction_apply)
    (n, overlap, fn, eta_n, vr, wr, w, pos.w, pos.w, pos.w, h, ph, dt, force, torque, NULL, energy);
    return 1;
}

/* The six walls with friction (walls[6]: their histories, as sim_friction_wall numbers them):
 * adds their forces and torques on the body. */
SIM_HD void SIM_FN(sim_friction_walls)(SIM_V4 pos, SIM_V4 vel, SIM_V3 w, SIM_HIST *walls,
                                       const SIM_PH *ph, SIM_R dt, SIM_V3 *force, SIM_V3 *torque,
                                       SIM_R *energy) {
    for (int k = 0; k < 6; ++k) {
        SIM_FN(sim_friction_wall)(pos, vel, w, k, &walls[k], ph, dt, force, torque, energy);
    }
}
#endif /* SIM_FN */
