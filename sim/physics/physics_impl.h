/* SPDX-License-Identifier: MIT
 * nbsim — the physics formulas, written once. Included by physics.h twice (float, then double)
 * with these macros defined: SIM_R (real type), SIM_V3 / SIM_V4 (vectors), SIM_PH (constants),
 * SIM_FN(name) (adds _f / _d), SIM_K(c) (a literal in SIM_R: never let a bare double literal
 * promote the float path to FP64), SIM_SQRT, SIM_RSQRT, SIM_PH_CUTOFF2, SIM_PH_GX/GY/GZ,
 * SIM_ATM_S_MIN / SIM_ATM_S_MAX, which it undefines at its end. No include guard on purpose.
 *
 * Written for C and C++ (nvcc): no compound literals, no designated initialisers. */

/* ---- Periodic axes (physics.h): minimum images, wrapping, and the box tests of culling ----
 * An image is d - L rint(d / L): exact for the |d| < 2L of two wrapped bodies, since L k is
 * exact for k in {-1, 0, 1} (the float and double paths, fused or not, give the same bits). On a
 * walled axis L = 1/L = 0 leaves d as it is; a box with no periodic axis skips it all. */

/* The minimum image of separation d [m] along an axis of period len (inv = 1/len; 0: walls). */
SIM_HD SIM_R SIM_FN(sim_image)(SIM_R d, SIM_R len, SIM_R inv) {
    return d - len * SIM_RINT(d * inv);
}

/* The minimum image of the separation (dx, dy, dz) under the periods *per, in place. */
SIM_HD void SIM_FN(sim_min_image_in)(SIM_R *dx, SIM_R *dy, SIM_R *dz, const SIM_PER *per) {
    *dx = SIM_FN(sim_image)(*dx, per->len[0], per->inv[0]);
    *dy = SIM_FN(sim_image)(*dy, per->len[1], per->inv[1]);
    *dz = SIM_FN(sim_image)(*dz, per->len[2], per->inv[2]);
}

/* The same on the periodic axes of ph (none: untouched): the one helper every pair and triple
 * separation goes through. */
SIM_HD void SIM_FN(sim_min_image)(SIM_R *dx, SIM_R *dy, SIM_R *dz, const SIM_PH *ph) {
    if (ph->periodic) {
        SIM_FN(sim_min_image_in)(dx, dy, dz, &ph->period);
    }
}

/* How many periods x [m] lies beyond the box's lower face (-L/2): floor(x / L + 1/2). */
SIM_HD SIM_R SIM_FN(sim_floor_shift)(SIM_R x, SIM_R inv) {
    return SIM_FLOOR(x * inv + SIM_K(0.5));
}

/* Coordinate x [m] wrapped into [-L/2, L/2] on an axis of period len (0: x as it is). */
SIM_HD SIM_R SIM_FN(sim_wrap_coord)(SIM_R x, SIM_R len, SIM_R inv) {
    return len > SIM_K(0.0) ? x - len * SIM_FN(sim_floor_shift)(x, inv) : x;
}

/* The centre of *pos wrapped into the box on the periodic axes of *per. */
SIM_HD void SIM_FN(sim_wrap_in)(SIM_V4 *pos, const SIM_PER *per) {
    pos->x = SIM_FN(sim_wrap_coord)(pos->x, per->len[0], per->inv[0]);
    pos->y = SIM_FN(sim_wrap_coord)(pos->y, per->len[1], per->inv[1]);
    pos->z = SIM_FN(sim_wrap_coord)(pos->z, per->len[2], per->inv[2]);
}

/* The same on the periodic axes of ph (none: untouched): the WRAP phase. */
SIM_HD void SIM_FN(sim_wrap)(SIM_V4 *pos, const SIM_PH *ph) {
    if (ph->periodic) {
        SIM_FN(sim_wrap_in)(pos, &ph->period);
    }
}

/* How many periods coordinate x [m] lies from a [m] (a tile's anchor: cull/cull.h) along an axis
 * of period 1/inv (inv 0: walls, 0): rint((x - a) inv), and 0 where that is not finite (a NaN or
 * infinite body or anchor keeps its coordinate). x - len k is then the image of x nearest a. */
SIM_HD SIM_R SIM_FN(sim_period_count)(SIM_R x, SIM_R a, SIM_R inv) {
    const SIM_R k = SIM_RINT((x - a) * inv);
    return SIM_FABS(k) <= SIM_K(1048576.0) ? k : SIM_K(0.0);
}

/* Whether intervals [alo, ahi] and [blo, bhi] (a tile box's sides, radii included) meet along
 * an axis of period len (0: walls, the plain test), through any image: their centres' minimum
 * image within their half-widths summed (true for every separation once those reach L/2).
 * SIM_PERIOD_SLACK len covers the rounding of the images a kernel takes (a few ulp of L): the
 * test never drops a pair a sweep would count. Empty boxes (lo = +inf) give NaN: no. */
SIM_HD int SIM_FN(sim_period_meets)(SIM_R alo, SIM_R ahi, SIM_R blo, SIM_R bhi, SIM_R len,
                                    SIM_R inv) {
    if (!(len > SIM_K(0.0))) {
        return alo <= bhi && blo <= ahi;
    }
    const SIM_R d2 = SIM_FN(sim_image)((blo + bhi) - (alo + ahi), len + len, SIM_K(0.5) * inv);
    const SIM_R w2 = (ahi - alo) + (bhi - blo); /* twice the half-widths */
    return SIM_FABS(d2) <= w2 + len * SIM_PERIOD_SLACK;
}

/* The gap [m] between intervals along an axis of period len through the nearest images (0 when
 * they meet), less the rounding slack; +inf for an empty interval. The ATM cut-off's box
 * distance (triplet_cull.h). */
SIM_HD SIM_R SIM_FN(sim_period_gap)(SIM_R alo, SIM_R ahi, SIM_R blo, SIM_R bhi, SIM_R len,
                                    SIM_R inv) {
    if (!(len > SIM_K(0.0))) { /* walls: the plain gap, monotone in the corners */
        const SIM_R g = blo - ahi > alo - bhi ? blo - ahi : alo - bhi;
        return g > SIM_K(0.0) ? g : SIM_K(0.0);
    }
    if (!(ahi >= alo) || !(bhi >= blo)) {
        return SIM_K(1.0) / SIM_K(0.0);
    }
    const SIM_R d2 = SIM_FN(sim_image)((blo + bhi) - (alo + ahi), len + len, SIM_K(0.5) * inv);
    const SIM_R w2 = (ahi - alo) + (bhi - blo);
    const SIM_R g = SIM_K(0.5) * (SIM_FABS(d2) - w2) - len * SIM_PERIOD_SLACK;
    return g > SIM_K(0.0) ? g : SIM_K(0.0);
}

/* Magnitude of the normal contact force [N] for overlap d > 0 [m], normal relative speed vn
 * [m/s] (< 0 approaching) and effective mass m_eff [kg]; positive = repulsive. Adds the elastic
 * energy (linear k d^2/2, Hertz 2/5 k d^2.5) to *energy if given. Not clamped (see physics.h). */
SIM_HD SIM_R SIM_FN(sim_normal_force)(SIM_R d, SIM_R vn, SIM_R m_eff, const SIM_PH *ph,
                                      SIM_R *energy) {
    const SIM_R k = ph->stiffness;
    const SIM_R eta = SIM_K(2.0) * ph->damping_ratio * SIM_SQRT(k * m_eff);
    if (ph->hertz) {
        const SIM_R sd = SIM_SQRT(d); /* d^(1/2) */
        if (energy != NULL) {
            *energy += SIM_K(0.4) * k * d * d * sd;
        }
        return k * d * sd - eta * SIM_SQRT(sd) * vn;
    }
    if (energy != NULL) {
        *energy += SIM_K(0.5) * k * d * d;
    }
    /* First or last step of a contact (overlap d smaller than one step of normal motion): weight
     * the dashpot by the time the contact spans, (f + 1/2) with f = d / (|vn| dt) (physics.h). */
    const SIM_R reach = d * ph->inv_dt;
    const SIM_R avn = vn < SIM_K(0.0) ? -vn : vn;
    const int onset = reach < avn && ph->inv_dt > SIM_K(0.0);
    const SIM_R damp = onset ? SIM_K(0.5) * vn + (vn < SIM_K(0.0) ? -reach : reach) : vn;
    return k * d - eta * damp;
}

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
    const SIM_R lo = r - ph->box_half - x; /* overlap with the wall at -L; normal +axis */
    if (lo > SIM_K(0.0)) {
        f += SIM_FN(sim_normal_force)(lo, v, m, ph, energy);
    }
    const SIM_R hi = x + r - ph->box_half; /* wall at +L; normal -axis, so v_n = -v */
    if (hi > SIM_K(0.0)) {
        f -= SIM_FN(sim_normal_force)(hi, -v, m, ph, energy);
    }
    return f;
}

/* The walls of the non-periodic axes [N]; energy gets their elastic energy. */
SIM_HD SIM_V3 SIM_FN(sim_wall_force)(SIM_V4 pos, SIM_V4 vel, const SIM_PH *ph, SIM_R *energy) {
    SIM_V3 f;
    f.x = f.y = f.z = SIM_K(0.0);
    if (!(ph->periodic & 1)) {
        f.x = SIM_FN(sim_wall_axis)(pos.x, vel.x, pos.w, vel.w, ph, energy);
    }
    if (!(ph->periodic & 2)) {
        f.y = SIM_FN(sim_wall_axis)(pos.y, vel.y, pos.w, vel.w, ph, energy);
    }
    if (!(ph->periodic & 4)) {
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

/* One spring-dashpot-slider step on history s (in place) for the relative velocity u at a
 * contact with normal n: rotate s into the plane normal to n keeping its length (LAMMPS skips
 * it while |s.n| k <= 1e-10 limit), add u dt, F = -k s - g u, and where |F| > limit: F scaled
 * to the limit and s the spring length that gives it. Returns F [N]. dt = 0: the force of the
 * history as it is, neither rotated nor stretched (LAMMPS's set-up pass, historyupdate 0; the
 * limit still applies): what the backends evaluate for the forces alone. */
SIM_HD SIM_V3 SIM_FN(sim_sds_step)(SIM_V3 *s, SIM_V3 n, SIM_V3 u, SIM_R k, SIM_R g, SIM_R limit,
                                   SIM_R dt) {
    const SIM_R sn = s->x * n.x + s->y * n.y + s->z * n.z;
    if (dt > SIM_K(0.0) && SIM_FABS(sn) * k > SIM_K(1e-10) * limit) {
        const SIM_R mag = SIM_SQRT(s->x * s->x + s->y * s->y + s->z * s->z);
        s->x -= sn * n.x;
        s->y -= sn * n.y;
        s->z -= sn * n.z;
        const SIM_R prj = SIM_SQRT(s->x * s->x + s->y * s->y + s->z * s->z);
        const SIM_R scale = prj > SIM_K(0.0) ? mag / prj : SIM_K(0.0);
        s->x *= scale;
        s->y *= scale;
        s->z *= scale;
    }
    s->x += u.x * dt;
    s->y += u.y * dt;
    s->z += u.z * dt;
    SIM_V3 f;
    f.x = -k * s->x - g * u.x;
    f.y = -k * s->y - g * u.y;
    f.z = -k * s->z - g * u.z;
    const SIM_R fm = SIM_SQRT(f.x * f.x + f.y * f.y + f.z * f.z);
    if (fm > limit) {
        const SIM_R sm = SIM_SQRT(s->x * s->x + s->y * s->y + s->z * s->z);
        if (sm != SIM_K(0.0)) { /* LAMMPS: no spring, no force (a dashpot above the limit) */
            const SIM_R lk = -SIM_K(1.0) / k;
            s->x = lk * (limit * f.x / fm + g * u.x);
            s->y = lk * (limit * f.y / fm + g * u.y);
            s->z = lk * (limit * f.z / fm + g * u.z);
            f.x *= limit / fm;
            f.y *= limit / fm;
            f.z *= limit / fm;
        } else {
            f.x = f.y = f.z = SIM_K(0.0);
        }
    }
    return f;
}

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
    SIM_V3 vt; /* slip velocity of the contact points */
    vt.x = vr.x - n.x * vn - (n.z * wr.y - n.y * wr.z);
    vt.y = vr.y - n.y * vn - (n.x * wr.z - n.z * wr.x);
    vt.z = vr.z - n.z * vn - (n.y * wr.x - n.x * wr.y);
    const SIM_R fncrit = SIM_FABS(fn);
    const SIM_R kt = ph->hertz ? ph->tangential_stiffness * SIM_SQRT(d) : ph->tangential_stiffness;
    const SIM_R gt = ph->tangential_damping * eta_n;
    const SIM_V3 fs = SIM_FN(sim_sds_step)(&h->xi, n, vt, kt, gt, ph->friction * fncrit, dt);
    f->x += fs.x;
    f->y += fs.y;
    f->z += fs.z;
    const SIM_R tx = n.y * fs.z - n.z * fs.y, ty = n.z * fs.x - n.x * fs.z,
                tz = n.x * fs.y - n.y * fs.x; /* n x F_t */
    ti->x -= li * tx;
    ti->y -= li * ty;
    ti->z -= li * tz;
    if (tj != NULL) {
        tj->x -= lj * tx;
        tj->y -= lj * ty;
        tj->z -= lj * tz;
    }
    SIM_R rolled = SIM_K(0.0);
    if (ph->rolling_friction > SIM_K(0.0)) {
        SIM_V3 vl; /* rolling velocity R_eff (w_i - w_j) x n (Wang et al. 2015, eq. 31) */
        vl.x = r_eff * (dw.y * n.z - dw.z * n.y);
        vl.y = r_eff * (dw.z * n.x - dw.x * n.z);
        vl.z = r_eff * (dw.x * n.y - dw.y * n.x);
        const SIM_V3 fr =
            SIM_FN(sim_sds_step)(&h->roll, n, vl, kt, gt, ph->rolling_friction * fncrit, dt);
        const SIM_R rx = r_eff * (n.y * fr.z - n.z * fr.y), ry = r_eff * (n.z * fr.x - n.x * fr.z),
                    rz = r_eff * (n.x * fr.y - n.y * fr.x); /* R_eff n x F_r */
        ti->x += rx;
        ti->y += ry;
        ti->z += rz;
        if (tj != NULL) {
            tj->x -= rx;
            tj->y -= ry;
            tj->z -= rz;
        }
        rolled = h->roll.x * h->roll.x + h->roll.y * h->roll.y + h->roll.z * h->roll.z;
    }
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
    if (!(ph->friction > SIM_K(0.0)) && !(ph->rolling_friction > SIM_K(0.0))) {
        return 1;
    }
    SIM_R eta_n = SIM_K(2.0) * ph->damping_ratio * SIM_SQRT(ph->stiffness * m_eff);
    if (ph->hertz) {
        eta_n *= SIM_SQRT(SIM_SQRT(overlap));
    }
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
    const SIM_R overlap = (wall & 1) ? x + pos.w - ph->box_half : pos.w - ph->box_half - x;
    if (!(overlap > SIM_K(0.0)) || ((ph->periodic >> axis) & 1)) { /* a periodic axis: no wall */
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
    if (!(ph->friction > SIM_K(0.0)) && !(ph->rolling_friction > SIM_K(0.0))) {
        return 1;
    }
    SIM_R eta_n = SIM_K(2.0) * ph->damping_ratio * SIM_SQRT(ph->stiffness * vel.w);
    if (ph->hertz) {
        eta_n *= SIM_SQRT(SIM_SQRT(overlap));
    }
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

/* Rotation in the velocity-Verlet halves (with sim_verlet_first / _second): w += dt/2 T / I,
 * I = SIM_INERTIA_FACTOR m r^2, as LAMMPS's fix nve/sphere. No orientation is kept. */
SIM_HD void SIM_FN(sim_verlet_spin)(SIM_V3 *w, SIM_V3 torque, SIM_V4 pos, SIM_R mass, SIM_R dt) {
    const SIM_R h = SIM_K(0.5) * dt / SIM_K(SIM_INERTIA_FACTOR) / (pos.w * pos.w * mass);
    w->x += h * torque.x;
    w->y += h * torque.y;
    w->z += h * torque.z;
}

/* Axilrod-Teller-Muto forces on bodies 1, 2, 3 [N] (written, not added). Derivation, with edge
 * vectors a = x2 - x1, b = x3 - x2, c = x1 - x3 (a + b + c = 0), A = a.a, B = b.b, C = c.c,
 * S = ABC, P = (a.b)(b.c)(c.a): the product of the three cosines is -P/S, so
 *     E = nu (S - 3P) / S^(5/2) = K (S - 3P),  K = nu S^(-5/2).
 * Differentiating with a, b, c as free variables and Q = 15P - 3S:
 *     dE/da = K [(Q/A) a - 3(b.c)(c.a) b - 3(b.c)(a.b) c]   (and cyclically),
 * and F1 = dE/da - dE/dc, F2 = dE/db - dE/da, F3 = dE/dc - dE/db. Eliminating the third edge
 * each time leaves one scalar per edge, like a pair force along it:
 *     F1 = K(alpha a - gamma c), F2 = K(beta b - alpha a), F3 = K(gamma c - beta b),
 *     alpha = Q/A + 3(t1 + t3 - t2), beta = Q/B + 3(t1 + t2 - t3), gamma = Q/C + 3(t2 + t3 - t1),
 *     t1 = (b.c)(c.a), t2 = (c.a)(a.b), t3 = (a.b)(b.c).
 * The forces sum to zero by construction. Cost ~75 flops incl. one rsqrt (no division). */
SIM_HD void SIM_FN(sim_atm_forces)(SIM_V4 p1, SIM_V4 p2, SIM_V4 p3, const SIM_PH *ph, SIM_V3 *f1,
                                   SIM_V3 *f2, SIM_V3 *f3, SIM_R *energy) {
    SIM_R ax = p2.x - p1.x, ay = p2.y - p1.y, az = p2.z - p1.z;
    SIM_R bx = p3.x - p2.x, by = p3.y - p2.y, bz = p3.z - p2.z;
    /* Periodic: a and b minimum images, c closes the triangle: the images of one triple (a
     * triple whose third side is then beyond the cut-off is not within it in any one image). */
    SIM_FN(sim_min_image)(&ax, &ay, &az, ph);
    SIM_FN(sim_min_image)(&bx, &by, &bz, ph);
    const SIM_R cx = -(ax + bx), cy = -(ay + by), cz = -(az + bz);
    const SIM_R A = ax * ax + ay * ay + az * az;
    const SIM_R B = bx * bx + by * by + bz * bz;
    const SIM_R C = cx * cx + cy * cy + cz * cz;
    const SIM_R BC = B * C, CA = C * A, AB = A * B;
    const SIM_R S = A * BC;
    const SIM_R cut2 = SIM_PH_CUTOFF2(ph);
    const int cut = cut2 > SIM_K(0.0) && (A > cut2 || B > cut2 || C > cut2);
    if (cut || !(S > SIM_ATM_S_MIN && S < SIM_ATM_S_MAX)) {
        f1->x = f1->y = f1->z = SIM_K(0.0);
        f2->x = f2->y = f2->z = SIM_K(0.0);
        f3->x = f3->y = f3->z = SIM_K(0.0);
        return;
    }
    const SIM_R ab = ax * bx + ay * by + az * bz;
    const SIM_R bc = bx * cx + by * cy + bz * cz;
    const SIM_R ca = cx * ax + cy * ay + cz * az;
    const SIM_R t1 = bc * ca, t2 = ca * ab, t3 = ab * bc;
    const SIM_R P = ab * t1; /* (a.b)(b.c)(c.a) */
    const SIM_R rs = SIM_RSQRT(S);
    const SIM_R inv_s = rs * rs;
    const SIM_R K = ph->atm_nu * rs * inv_s * inv_s; /* nu S^-5/2, nu first against overflow */
    const SIM_R Q = SIM_K(15.0) * P - SIM_K(3.0) * S;
    const SIM_R q = Q * inv_s; /* Q/A = q BC, and cyclically */
    const SIM_R u = SIM_K(3.0) * (t1 + t2 + t3);
    const SIM_R ka = K * (q * BC + u - SIM_K(6.0) * t2); /* K alpha */
    const SIM_R kb = K * (q * CA + u - SIM_K(6.0) * t3); /* K beta */
    const SIM_R kc = K * (q * AB + u - SIM_K(6.0) * t1); /* K gamma */
    f1->x = ka * ax - kc * cx;
    f1->y = ka * ay - kc * cy;
    f1->z = ka * az - kc * cz;
    f2->x = kb * bx - ka * ax;
    f2->y = kb * by - ka * ay;
    f2->z = kb * bz - ka * az;
    f3->x = kc * cx - kb * bx;
    f3->y = kc * cy - kb * by;
    f3->z = kc * cz - kb * bz;
    if (energy != NULL) {
        *energy += K * (S - SIM_K(3.0) * P);
    }
}

/* ---- ATM in pair terms: the form the GPU triplet kernel evaluates (triplet_kernels.cu) ----
 * E depends on the three squared distances alone, so every force is a pair force along an edge:
 * F_1 = K_A a - K_C c, F_2 = K_B b - K_A a, F_3 = K_C c - K_B b (edges a, b, c and A, B, C as in
 * sim_atm_forces), K_A = 2 dE/dA (sim_atm_forces's K alpha). With p = a.b, q = b.c, r = c.a,
 * P = pqr, S = ABC, X = 5P - S and W3 = 3 nu S^(-5/2):
 *     K_A = W3 y_A / A,  y_A = X - A (q A + p r),
 *     K_B = W3 y_B / B,  y_B = X - B (r B + p q),
 *     K_C = W3 y_C / C,  y_C = X - C (p C + q r),     E = W3 (S - 3P) / 3
 * (W3 y_A / A is sim_atm_forces's K alpha: t1 + t3 - t2 = q (p + r) - p r = -(q A + p r), as
 * p + r = -A). W3 is the product of three pair terms h = (3 nu)^(1/3) A^(-5/2): what depends on
 * one pair (its difference vector, A, h, the square root) is computed once per pair, and a
 * triple costs 27 multiplies and adds. The kernel sums W3 y_A over all third bodies of a pair
 * and divides by A once.
 *
 * The dot products come from the difference vectors, not from A, B, C (p = (C - A - B) / 2 would
 * lose log10(longest / shortest side) digits on a needle triangle: 4e-4 of the force at a ratio
 * of 100 in float).
 *
 * Guards, per pair (sim_atm_pair_in_range): a pair whose h is outside [-SIM_ATM_H_MAX,
 * SIM_ATM_H_MAX] or whose A exceeds SIM_ATM_A2_MAX or the cut-off is dropped: its vector, A and h
 * are 0, and every triple containing it gives exactly zero. The bounds keep that exact: a product
 * of two pair terms stays finite (SIM_ATM_H_MAX^2), and |p|, |q|, |r|, A, B, C <= SIM_ATM_A2_MAX,
 * so 0 * finite stays 0, never NaN. In float: |h| <= 1e18 (nu = 1 J m^9: a distance >= 0.11 mm)
 * and A <= 1e10 m^2 (100 km). Coincident bodies (A = 0: h infinite) and NaN positions fail the
 * same test. A triple whose three pairs all count can still overflow where its W3 does (float,
 * nu = 1: sides below ~3 mm), as sim_atm_forces_f overflows there. */

/* (3 nu)^(1/3) [J^(1/3) m^3]: the pair terms' share of nu. */
SIM_HD SIM_R SIM_FN(sim_atm_nu3)(SIM_R nu) {
    return SIM_CBRT(SIM_K(3.0) * nu);
}

/* The largest squared distance [m^2] a pair may have: the cut-off^2 (cutoff2 > 0) or the
 * overflow bound. */
SIM_HD SIM_R SIM_FN(sim_atm_a2_max)(SIM_R cutoff2) {
    return cutoff2 > SIM_K(0.0) && cutoff2 < SIM_ATM_A2_MAX ? cutoff2 : SIM_ATM_A2_MAX;
}

/* Pair term h = nu3 a2^(-5/2) of a pair at squared distance a2 [m^2]: infinite or NaN for a2 = 0,
 * which sim_atm_pair_in_range then rejects. */
SIM_HD SIM_R SIM_FN(sim_atm_pair_h)(SIM_R a2, SIM_R nu3) {
    const SIM_R rs = SIM_ATM_RSQRT(a2); /* 1/r */
    const SIM_R rs2 = rs * rs;
    return nu3 * rs * (rs2 * rs2);
}

/* Whether a pair with squared distance a2 and pair term h counts: within a2_max and the overflow
 * bound on h (false for NaN). */
SIM_HD int SIM_FN(sim_atm_pair_in_range)(SIM_R a2, SIM_R h, SIM_R a2_max) {
    return a2 <= a2_max && SIM_FABS(h) <= SIM_ATM_H_MAX;
}

/* Pair term of a pair at squared distance a2, or 0 when it is dropped (beyond a2_max, outside the
 * overflow bound, coincident, NaN). */
SIM_HD SIM_R SIM_FN(sim_atm_pair_term)(SIM_R a2, SIM_R nu3, SIM_R a2_max) {
    const SIM_R h = SIM_FN(sim_atm_pair_h)(a2, nu3);
    return SIM_FN(sim_atm_pair_in_range)(a2, h, a2_max) ? h : SIM_K(0.0);
}

/* The pair (u, v) as the kernel holds it: difference d = v - u [m] (its minimum image under *per
 * when per is not NULL: a periodic box), squared distance a2 [m^2], pair term h; all 0 when the
 * pair is dropped or not `valid` (ordering, masked bodies). */
SIM_HD void SIM_FN(sim_atm_pair)(SIM_V4 u, SIM_V4 v, int valid, SIM_R nu3, SIM_R a2_max,
                                 const SIM_PER *per, SIM_V3 *d, SIM_R *a2, SIM_R *h) {
    SIM_R dx = v.x - u.x, dy = v.y - u.y, dz = v.z - u.z;
    if (per != NULL) {
        SIM_FN(sim_min_image_in)(&dx, &dy, &dz, per);
    }
    const SIM_R d2 = dx * dx + dy * dy + dz * dz;
    const SIM_R hh = SIM_FN(sim_atm_pair_h)(d2, nu3);
    const int ok = valid && SIM_FN(sim_atm_pair_in_range)(d2, hh, a2_max);
    d->x = ok ? dx : SIM_K(0.0);
    d->y = ok ? dy : SIM_K(0.0);
    d->z = ok ? dz : SIM_K(0.0);
    *a2 = ok ? d2 : SIM_K(0.0);
    *h = ok ? hh : SIM_K(0.0);
}

/* Whether a triple's independent pair images a, b, c close (a + b + c = 0 up to rounding: one
 * image of the triple) rather than wrap around a periodic axis (a + b + c a lattice vector, at
 * least a period long). Only a cut-off above a third of the period lets three sides within it
 * wrap (|a| + |b| + |c| >= L), so the kernels ask only then (sim_atm_images_checked). */
SIM_HD int SIM_FN(sim_atm_images_agree)(SIM_V3 a, SIM_V3 b, SIM_V3 c, const SIM_PER *per) {
    const SIM_R sx = SIM_FABS(a.x + b.x + c.x), sy = SIM_FABS(a.y + b.y + c.y),
                sz = SIM_FABS(a.z + b.z + c.z);
    return (sx <= SIM_K(0.5) * per->len[0] || per->len[0] == SIM_K(0.0)) &&
           (sy <= SIM_K(0.5) * per->len[1] || per->len[1] == SIM_K(0.0)) &&
           (sz <= SIM_K(0.5) * per->len[2] || per->len[2] == SIM_K(0.0));
}

/* One triple from its pairs: A, B, C the squared distances of pairs (1,2), (2,3), (3,1), p = a.b,
 * q = b.c, r = c.a, hA, hB, hC the pair terms (all 0 for a dropped pair). Returns W3 and writes
 * y_A, y_B, y_C (the pair coefficients are K_A = W3 y_A / A, ...); adds the energy [J] to *energy
 * if given. */
SIM_HD SIM_R SIM_FN(sim_atm_triple)(SIM_R A, SIM_R B, SIM_R C, SIM_R p, SIM_R q, SIM_R r, SIM_R hA,
                                    SIM_R hB, SIM_R hC, SIM_R *ya, SIM_R *yb, SIM_R *yc,
                                    SIM_R *energy) {
    const SIM_R pq = p * q, qr = q * r, pr = p * r;
    const SIM_R P = p * qr;
    const SIM_R S = A * C * B;
    const SIM_R X = SIM_K(5.0) * P - S;
    const SIM_R w3 = hA * hC * hB;
    *ya = X - A * (q * A + pr);
    *yb = X - B * (r * B + pq);
    *yc = X - C * (p * C + qr);
    if (energy != NULL) {
        *energy += w3 * (S - SIM_K(3.0) * P) * SIM_K(1.0 / 3.0);
    }
    return w3;
}

/* Pair coefficient K = sum of W3 y / A [N/m] from a pair's sum of W3 y (0 for dropped pairs).
 * 1/A as the square of the pair terms' 1/sqrt: one instruction on the device, not a division. */
SIM_HD SIM_R SIM_FN(sim_atm_pair_coefficient)(SIM_R w3y_sum, SIM_R a2) {
    const SIM_R rs = SIM_ATM_RSQRT(a2);
    return a2 > SIM_K(0.0) ? w3y_sum * (rs * rs) : SIM_K(0.0);
}

/* The same forces as sim_atm_forces (written, not added) through the pair terms, one triple at
 * a time exactly as the kernel combines them; nu3 = sim_atm_nu3(nu), a2_max = sim_atm_a2_max
 * (cut-off^2). The CPU tests check the float version against sim_atm_forces_d. */
SIM_HD void SIM_FN(sim_atm_forces_pairwise)(SIM_V4 p1, SIM_V4 p2, SIM_V4 p3, SIM_R nu3,
                                            SIM_R a2_max, const SIM_PER *per, SIM_V3 *f1,
                                            SIM_V3 *f2, SIM_V3 *f3, SIM_R *energy) {
    SIM_V3 a, b, c;
    SIM_R A, B, C, hA, hB, hC, ya, yb, yc;
    SIM_FN(sim_atm_pair)(p1, p2, 1, nu3, a2_max, per, &a, &A, &hA);
    SIM_FN(sim_atm_pair)(p2, p3, 1, nu3, a2_max, per, &b, &B, &hB);
    SIM_FN(sim_atm_pair)(p3, p1, 1, nu3, a2_max, per, &c, &C, &hC);
    if (per != NULL && !SIM_FN(sim_atm_images_agree)(a, b, c, per)) {
        hA = SIM_K(0.0); /* the images wrap around the box: no one image of the triple */
    }
    const SIM_R p = a.x * b.x + a.y * b.y + a.z * b.z;
    const SIM_R q = b.x * c.x + b.y * c.y + b.z * c.z;
    const SIM_R r = c.x * a.x + c.y * a.y + c.z * a.z;
    const SIM_R w3 = SIM_FN(sim_atm_triple)(A, B, C, p, q, r, hA, hB, hC, &ya, &yb, &yc, energy);
    const SIM_R ka = SIM_FN(sim_atm_pair_coefficient)(w3 * ya, A);
    const SIM_R kb = SIM_FN(sim_atm_pair_coefficient)(w3 * yb, B);
    const SIM_R kc = SIM_FN(sim_atm_pair_coefficient)(w3 * yc, C);
    f1->x = ka * a.x - kc * c.x;
    f1->y = ka * a.y - kc * c.y;
    f1->z = ka * a.z - kc * c.z;
    f2->x = kb * b.x - ka * a.x;
    f2->y = kb * b.y - ka * a.y;
    f2->z = kb * b.z - ka * a.z;
    f3->x = kc * c.x - kb * b.x;
    f3->y = kc * c.y - kb * b.y;
    f3->z = kc * c.z - kb * b.z;
}

/* Velocity Verlet, kick-drift-kick: first = half kick with F_n, then drift [m]. */
SIM_HD void SIM_FN(sim_verlet_first)(SIM_V4 *pos, SIM_V4 *vel, SIM_V3 force, SIM_R dt) {
    const SIM_R h = SIM_K(0.5) * dt / vel->w; /* dt / 2m [s/kg] */
    vel->x += h * force.x;
    vel->y += h * force.y;
    vel->z += h * force.z;
    pos->x += dt * vel->x;
    pos->y += dt * vel->y;
    pos->z += dt * vel->z;
}

/* ... then, with F_{n+1} from the new positions and the half-step velocities, the second half
 * kick. */
SIM_HD void SIM_FN(sim_verlet_second)(SIM_V4 *vel, SIM_V3 force, SIM_R dt) {
    const SIM_R h = SIM_K(0.5) * dt / vel->w;
    vel->x += h * force.x;
    vel->y += h * force.y;
    vel->z += h * force.z;
}

/* Leave the macros free for the next instantiation. */
#undef SIM_R
#undef SIM_V3
#undef SIM_V4
#undef SIM_PH
#undef SIM_HIST
#undef SIM_FN
#undef SIM_K
#undef SIM_SQRT
#undef SIM_RSQRT
#undef SIM_CBRT
#undef SIM_ATM_RSQRT
#undef SIM_FABS
#undef SIM_PH_CUTOFF2
#undef SIM_PH_GX
#undef SIM_PH_GY
#undef SIM_PH_GZ
#undef SIM_ATM_S_MIN
#undef SIM_ATM_S_MAX
#undef SIM_ATM_H_MAX
#undef SIM_ATM_A2_MAX
#undef SIM_PER
#undef SIM_RINT
#undef SIM_FLOOR
#undef SIM_PERIOD_SLACK
