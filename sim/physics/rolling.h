/* SPDX-License-Identifier: MIT
 * nbsim — the rolling sub-model: rolling resistance as LAMMPS's rolling sds, a
 * spring-dashpot-slider on the contact's roll with the tangential spring and dashpot
 * (tangential.h) and the limit mu_r |F_n|, acting as a torque R_eff n x F_r.
 * Read twice, like every part (normal.h says how). */
#ifndef SIM_PHYSICS_ROLLING_H
#define SIM_PHYSICS_ROLLING_H
/* X(type, member); R: double or float. */
#define SIM_ROLLING_MEMBERS(X, R)                                                                  \
    X(R, rolling_friction) /* rolling resistance coefficient mu_r (0: none) */
typedef struct {
    SIM_ROLLING_MEMBERS(SIM_MEMBER, double)
} sim_rolling_d;
typedef struct {
    SIM_ROLLING_MEMBERS(SIM_MEMBER, float)
} sim_rolling_f;
#endif /* SIM_PHYSICS_ROLLING_H */

#ifdef SIM_FN
/* The rolling part of a contact (contact.h's sim_friction_apply), when mu_r > 0: rolling
 * velocity from the relative spin dw, one spring-dashpot-slider step of the history roll with
 * spring kt and dashpot gt up to mu_r fncrit, torques R_eff n x F_r added to *ti and taken from
 * *tj (tj may be NULL). Returns |roll|^2 [m^2] for the springs' energy (0 without rolling). */
SIM_HD SIM_R SIM_FN(sim_rolling_apply)(SIM_V3 n, SIM_V3 dw, SIM_R r_eff, SIM_R kt, SIM_R gt,
                                       SIM_R fncrit, SIM_V3 *roll, const SIM_FN(sim_rolling) * rl,
                                       SIM_R dt, SIM_V3 *ti, SIM_V3 *tj) {
    if (!(rl->rolling_friction > SIM_K(0.0))) {
        return SIM_K(0.0);
    }
    SIM_V3 vl; /* rolling velocity R_eff (w_i - w_j) x n (Wang et al. 2015, eq. 31) */
    vl.x = r_eff * (dw.y * n.z - dw.z * n.y);
    vl.y = r_eff * (dw.z * n.x - dw.x * n.z);
    vl.z = r_eff * (dw.x * n.y - dw.y * n.x);
    const SIM_V3 fr = SIM_FN(sim_sds_step)(roll, n, vl, kt, gt, rl->rolling_friction * fncrit, dt);
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
    return roll->x * roll->x + roll->y * roll->y + roll->z * roll->z;
}
#endif /* SIM_FN */
