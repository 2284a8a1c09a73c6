/* SPDX-License-Identifier: MIT
 * nbsim — the tangential sub-model: the sliding friction's spring-dashpot-slider on each
 * contact's history (linear history for the linear law, Mindlin's k_t ~ d^(1/2) for Hertz), with
 * the Coulomb limit mu |F_n|; its spring-dashpot-slider step serves the rolling part too.
 * Read twice, like every part (normal.h says how). */
#ifndef SIM_PHYSICS_TANGENTIAL_H
#define SIM_PHYSICS_TANGENTIAL_H
/* X(type, member); R: double or float. */
#define SIM_TANGENTIAL_MEMBERS(X, R)                                                               \
    X(R, friction)             /* sliding friction coefficient mu (0: none) */                     \
    X(R, tangential_stiffness) /* k_t = this [N/m] (linear) or this sqrt(d) (Hertz-Mindlin,        \
                                * [N/m^1.5]): ratio k (linear), ratio 3/2 k (Hertz) */             \
    X(R, tangential_damping)   /* gamma_t = this eta_n: eta_n the normal dashpot's coefficient */
typedef struct {
    SIM_TANGENTIAL_MEMBERS(SIM_MEMBER, double)
} sim_tangential_d;
typedef struct {
    SIM_TANGENTIAL_MEMBERS(SIM_MEMBER, float)
} sim_tangential_f;
#endif /* SIM_PHYSICS_TANGENTIAL_H */

#ifdef SIM_FN
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

/* The tangential spring k_t [N/m] at overlap d [m] (hertz: Mindlin's, ~ d^(1/2)). */
SIM_HD SIM_R SIM_FN(sim_tangential_spring)(SIM_R d, int hertz, const SIM_FN(sim_tangential) * tg) {
    return hertz ? tg->tangential_stiffness * SIM_SQRT(d) : tg->tangential_stiffness;
}

/* The sliding part of a contact (contact.h's sim_friction_apply): slip velocity of the contact
 * points from the relative velocity vr (its normal part vn) and the contact-point rotation wr,
 * one spring-dashpot-slider step of the history xi with spring kt and dashpot gt up to
 * mu fncrit; adds the force to *f and the torques -l n x F_t to *ti, *tj (tj may be NULL). */
SIM_HD void SIM_FN(sim_tangential_apply)(SIM_V3 n, SIM_R vn, SIM_V3 vr, SIM_V3 wr, SIM_R kt,
                                         SIM_R gt, SIM_R fncrit, SIM_R li, SIM_R lj, SIM_V3 *xi,
                                         const SIM_FN(sim_tangential) * tg, SIM_R dt, SIM_V3 *f,
                                         SIM_V3 *ti, SIM_V3 *tj) {
    SIM_V3 vt; /* slip velocity of the contact points */
    vt.x = vr.x - n.x * vn - (n.z * wr.y - n.y * wr.z);
    vt.y = vr.y - n.y * vn - (n.x * wr.z - n.z * wr.x);
    vt.z = vr.z - n.z * vn - (n.y * wr.x - n.x * wr.y);
    const SIM_V3 fs = SIM_FN(sim_sds_step)(xi, n, vt, kt, gt, tg->friction * fncrit, dt);
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
}
#endif /* SIM_FN */
