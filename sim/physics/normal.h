/* SPDX-License-Identifier: MIT
 * nbsim — the normal sub-model: the contact law along the line of centres (linear or Hertz
 * spring with its dashpot, physics.h's conventions), for pairs and walls alike.
 *
 * Like every part (box.h, normal.h, tangential.h, rolling.h, atm.h), read twice: physics.h
 * includes it first for its constants (sim_normal_d, sim_normal_f: the members of
 * sim_physics.normal), physics_impl.h then once a precision for its functions (SIM_FN set). */
#ifndef SIM_PHYSICS_NORMAL_H
#define SIM_PHYSICS_NORMAL_H
/* X(type, member); R: double or float. */
#define SIM_NORMAL_MEMBERS(X, R)                                                                   \
    X(R, stiffness)        /* k [N/m] (linear) or [N/m^1.5] (Hertz) */                             \
    X(R, damping_ratio)    /* zeta: dashpot eta = 2 zeta sqrt(k m_eff) (Hertz: times d^(1/4)) */   \
    X(int, hertz)          /* 0 linear, 1 Hertz */                                                 \
    X(R, inv_dt)           /* 1/dt [1/s] for the contact-onset weighting (physics.h); 0: off */    \
    X(int, lammps_dashpot) /* 1: no contact-onset weighting, LAMMPS's dashpot */
typedef struct {
    SIM_NORMAL_MEMBERS(SIM_MEMBER, double)
} sim_normal_d;
typedef struct {
    SIM_NORMAL_MEMBERS(SIM_MEMBER, float)
} sim_normal_f;
#endif /* SIM_PHYSICS_NORMAL_H */

#ifdef SIM_FN
/* Magnitude of the normal contact force [N] for overlap d > 0 [m], normal relative speed vn
 * [m/s] (< 0 approaching) and effective mass m_eff [kg]; positive = repulsive. Adds the elastic
 * energy (linear k d^2/2, Hertz 2/5 k d^2.5) to *energy if given. Not clamped (see physics.h). */
SIM_HD SIM_R SIM_FN(sim_normal_law)(SIM_R d, SIM_R vn, SIM_R m_eff, const SIM_FN(sim_normal) * nm,
                                    SIM_R *energy) {
    const SIM_R k = nm->stiffness;
    const SIM_R eta = SIM_K(2.0) * nm->damping_ratio * SIM_SQRT(k * m_eff);
    if (nm->hertz) {
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
    const SIM_R reach = d * nm->inv_dt;
    const SIM_R avn = vn < SIM_K(0.0) ? -vn : vn;
    const int onset = reach < avn && nm->inv_dt > SIM_K(0.0) && !nm->lammps_dashpot;
    const SIM_R damp = onset ? SIM_K(0.5) * vn + (vn < SIM_K(0.0) ? -reach : reach) : vn;
    return k * d - eta * damp;
}

/* The same with the model's constants. */
SIM_HD SIM_R SIM_FN(sim_normal_force)(SIM_R d, SIM_R vn, SIM_R m_eff, const SIM_PH *ph,
                                      SIM_R *energy) {
    return SIM_FN(sim_normal_law)(d, vn, m_eff, &ph->normal, energy);
}

/* The normal dashpot's coefficient eta_n at overlap d [m] and effective mass m_eff [kg]: what the
 * tangential and rolling dashpots are scaled from (their g = x eta_n). */
SIM_HD SIM_R SIM_FN(sim_normal_dashpot)(SIM_R d, SIM_R m_eff, const SIM_FN(sim_normal) * nm) {
    SIM_R eta_n = SIM_K(2.0) * nm->damping_ratio * SIM_SQRT(nm->stiffness * m_eff);
    if (nm->hertz) {
        eta_n *= SIM_SQRT(SIM_SQRT(d));
    }
    return eta_n;
}
#endif /* SIM_FN */
