/* SPDX-License-Identifier: MIT
 * nbsim — host-side physics set-up: model constants from the parameters (and whether two sets of
 * parameters are one model), damping ratios for a restitution coefficient, contact times and the
 * default time step. */
#include "physics/physics.h"

#include "nbsim/params.h"

#include <string.h>

static const double pi_ = 3.14159265358979323846;

/* Undamped Hertz contact time in the units of sim_hertz_restitution below (t_c v^(1/5)
 * (k/m)^(2/5)); computed by integrating u'' = -u^1.5 to the end of the contact. */
static const double hertz_tc_dimensionless = 3.2180654597;

double sim_damping_ratio(double restitution) {
    if (!(restitution > 0.0) || restitution >= 1.0) {
        return 0.0;
    }
    const double l = log(restitution);
    return -l / sqrt(pi_ * pi_ + l * l);
}

/* Restitution of the Hertz law with damping ratio zeta, from the dimensionless contact
 * (overlap u in units of (m v^2/k)^(2/5), time in (m/k)^(2/5) v^(-1/5)):
 *     u'' = -u^1.5 - 2 zeta u^0.25 u',  u(0) = 0, u'(0) = 1,
 * integrated with RK4 until u returns to 0; e = -u'(end). 0 if it never returns (overdamped). */
static double hertz_rhs(double u, double v, double zeta) {
    const double up = u > 0.0 ? u : 0.0;
    const double s = sqrt(up);
    return -up * s - 2.0 * zeta * sqrt(s) * v;
}

static double hertz_restitution(double zeta) {
    const double h = 1.0 / 1024.0;
    const double t_max = 64.0; /* ~20 undamped contact times */
    double u = 0.0, v = 1.0;
    for (double t = 0.0; t < t_max; t += h) {
        const double k1u = v, k1v = hertz_rhs(u, v, zeta);
        const double k2u = v + 0.5 * h * k1v, k2v = hertz_rhs(u + 0.5 * h * k1u, k2u, zeta);
        const double k3u = v + 0.5 * h * k2v, k3v = hertz_rhs(u + 0.5 * h * k2u, k3u, zeta);
        const double k4u = v + h * k3v, k4v = hertz_rhs(u + h * k3u, k4u, zeta);
        const double un = u + h / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        const double vn = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        if (un < 0.0 && t > 0.0) {
            const double frac = u / (u - un); /* linear interpolation to u = 0 */
            return -(v + frac * (vn - v));
        }
        u = un;
        v = vn;
    }
    return 0.0;
}

double sim_hertz_damping_ratio(double restitution) {
    if (!(restitution > 0.0) || restitution >= 1.0) {
        return 0.0;
    }
    /* e(zeta) falls monotonically from 1 (zeta = 0) to 0 (zeta ~ 1.1). The answer is close to
     * 1.118 x the linear ratio for every e, so bracket around that and refine by regula falsi
     * (Illinois variant): ~5 integrations instead of ~30 for bisection. */
    const double guess = 1.118 * sim_damping_ratio(restitution);
    double lo = 0.98 * guess, hi = 1.02 * guess;
    double f_lo = hertz_restitution(lo) - restitution, f_hi = hertz_restitution(hi) - restitution;
    if (!(f_lo > 0.0 && f_hi < 0.0)) { /* not bracketed: the whole range */
        lo = 0.0;
        hi = 2.0;
        f_lo = 1.0 - restitution;
        f_hi = hertz_restitution(hi) - restitution;
    }
    int side = 0;
    for (int it = 0; it < 60 && hi - lo > 1e-12; ++it) {
        double z = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        if (!(z > lo && z < hi)) {
            z = 0.5 * (lo + hi);
        }
        const double f = hertz_restitution(z) - restitution;
        if (fabs(f) < 1e-12) {
            return z;
        }
        if (f > 0.0) {
            lo = z;
            f_lo = f;
            f_hi = side == 1 ? 0.5 * f_hi : f_hi; /* Illinois: halve the stale end */
            side = 1;
        } else {
            hi = z;
            f_hi = f;
            f_lo = side == -1 ? 0.5 * f_lo : f_lo;
            side = -1;
        }
    }
    return 0.5 * (lo + hi);
}

double sim_contact_time(double stiffness, double m_eff) {
    return pi_ / sqrt(stiffness / m_eff);
}

double sim_contact_time_hertz(double stiffness, double m_eff, double speed) {
    return hertz_tc_dimensionless * pow(m_eff / stiffness, 0.4) * pow(speed, -0.2);
}

double sim_default_dt(const sim_params *p, const sim_state *s) {
    if (s == NULL || s->n == 0) {
        return 0.0;
    }
    /* The two lightest bodies give the smallest pair m_eff; a single body meets only walls
     * (m_eff = m). */
    double m1 = INFINITY, m2 = INFINITY, vmax2 = 0.0;
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d v = s->vel[i];
        if (v.w < m1) {
            m2 = m1;
            m1 = v.w;
        } else if (v.w < m2) {
            m2 = v.w;
        }
        const double v2 = v.x * v.x + v.y * v.y + v.z * v.z;
        vmax2 = v2 > vmax2 ? v2 : vmax2;
    }
    const double m_eff = s->n >= 2 ? m1 * m2 / (m1 + m2) : m1;
    double tc;
    if (p->hertz) {
        const sim_vec3d g = p->gravity;
        const double g_abs = sqrt(g.x * g.x + g.y * g.y + g.z * g.z);
        double v_ref = 2.0 * sqrt(vmax2);                      /* head-on, both at the top speed */
        const double v_fall = sqrt(4.0 * g_abs * p->box_half); /* dropped across the box */
        v_ref = v_fall > v_ref ? v_fall : v_ref;
        v_ref = v_ref > 1.0 ? v_ref : 1.0; /* [m/s]: floor for scenes at rest */
        tc = sim_contact_time_hertz(p->stiffness, m_eff, v_ref);
    } else {
        tc = sim_contact_time(p->stiffness, m_eff);
    }
    const double zeta =
        p->hertz ? sim_hertz_damping_ratio(p->restitution) : sim_damping_ratio(p->restitution);
    const double damped = SIM_DAMPED_STEPS_PER_ZETA2 * zeta * zeta;
    if (p->friction > 0.0 || p->rolling_friction > 0.0) {
        /* The tangential oscillation of two solid spheres: spring ratio k, mass 2/7 m_eff, so its
         * period is t_c sqrt(2 / (7 ratio)); the rolling spring (the same) is slower still. */
        const double ratio =
            p->stiffness_ratio > 0.0 ? p->stiffness_ratio : SIM_DEFAULT_STIFFNESS_RATIO;
        const double speedup = sqrt(3.5 * ratio);
        tc = speedup > 1.0 ? tc / speedup : tc;
    }
    return tc / (damped > SIM_STEPS_PER_CONTACT ? damped : SIM_STEPS_PER_CONTACT);
}

sim_physics sim_physics_from_params(const sim_params *p) {
    sim_physics ph;
    memset(&ph, 0, sizeof ph);
    /* The rows whose use is COPY(part, member) (params.h), as they are. */
#define SIM_FROM_ROW(id, field, kind, dflt, bounds, saved, use) SIM_FROM_##use(p->field)
#define SIM_FROM_RUN(value)
#define SIM_FROM_MODEL(value)
#define SIM_FROM_COPY(part, member) ph.part.member = SIM_FROM_VALUE
#define SIM_FROM_VALUE(value) value;
    SIM_PARAM_SPECS(SIM_FROM_ROW)
#undef SIM_FROM_ROW
    /* The rest, derived. */
    ph.normal.damping_ratio =
        p->hertz ? sim_hertz_damping_ratio(p->restitution) : sim_damping_ratio(p->restitution);
    ph.box.period = sim_period_of(p);
    ph.normal.hertz = p->hertz ? 1 : 0;
    ph.normal.inv_dt = p->dt > 0.0 ? 1.0 / p->dt : 0.0; /* backends set it once dt is derived */
    const double ratio =
        p->stiffness_ratio > 0.0 ? p->stiffness_ratio : SIM_DEFAULT_STIFFNESS_RATIO;
    /* Hertz: the ratio is to the normal law's tangent stiffness dF/dd = 3/2 k d^(1/2), so
     * k_t = ratio 3/2 k d^(1/2), Mindlin's 8 G_eff a for ratio = 2 (1 - nu) / (2 - nu). */
    ph.tangential.tangential_stiffness = p->hertz ? 1.5 * ratio * p->stiffness : ratio * p->stiffness;
    /* auto: gamma_t = 2 zeta sqrt(k_t m_eff), the normal damping ratio on the tangential spring. */
    ph.tangential.tangential_damping = p->tangential_damping.set ? p->tangential_damping.value : sqrt(ratio);
    return ph;
}

int sim_physics_has_friction(const sim_physics *ph) {
    return ph->tangential.friction > 0.0 || ph->rolling.rolling_friction > 0.0;
}

uint64_t sim_friction_slots(double r, double r_min, uint32_t n) {
    /* non-overlapping caps on the sphere of centres: K = floor(2 / (1 - cos theta)),
     * sin theta = (1 - overlap) r_min / (r + r_min); 18 for equal spheres */
    const double s = (1.0 - SIM_FRICTION_OVERLAP) * r_min / (r + r_min);
    const double c = sqrt(1.0 - s * s);
    double k = floor(2.0 / (1.0 - c));
    k = k < (double)n - 1.0 ? k : (double)n - 1.0;
    return (uint64_t)k + 3u;
}

int sim_params_have_friction(const sim_params *p) {
    return p->friction > 0.0 || p->rolling_friction > 0.0;
}

int sim_params_same_model(const sim_params *a, const sim_params *b) {
    /* The rows whose use is MODEL or COPY (params.h), compared by their kind. */
#define SIM_SAME_ROW(id, field, kind, dflt, bounds, saved, use) SIM_SAME_##use(kind, field)
#define SIM_SAME_RUN(kind, field)
#define SIM_SAME_MODEL(kind, field) SIM_SAME_##kind(a->field, b->field)
#define SIM_SAME_COPY(part, member) SIM_SAME_MODEL
#define SIM_SAME_REAL(x, y) same = same && x == y;
#define SIM_SAME_DEFAULTED(x, y) same = same && x == y;
#define SIM_SAME_WHOLE(x, y) same = same && x == y;
#define SIM_SAME_AXES(x, y) same = same && x == y;
#define SIM_SAME_VEC3(u, w) same = same && u.x == w.x && u.y == w.y && u.z == w.z;
#define SIM_SAME_AUTO(x, y) same = same && x.set == y.set && (!x.set || x.value == y.value);
    int same = (a->hertz != 0) == (b->hertz != 0) && (a->triplets != 0) == (b->triplets != 0);
    SIM_PARAM_SPECS(SIM_SAME_ROW)
#undef SIM_SAME_ROW
    return same;
}

sim_status sim_periodic_check(const sim_params *p, double max_radius, sim_error *err) {
    if (p->periodic == 0) {
        return SIM_OK;
    }
    char axes[8];
    sim_periodic_text(p->periodic, "", axes, sizeof axes);
    const double half_side = p->box_half; /* half the box's side 2 box_half */
    if (p->triplets && p->atm_cutoff <= 0.0) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "periodic %s: ATM triplets need a cut-off (atm_cutoff, at most %g m): "
                        "without one the sum over images is not defined",
                        axes, half_side);
    }
    if (p->triplets && p->atm_cutoff > half_side) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "periodic %s: atm_cutoff %g m is more than half the box (%g m): a triple "
                        "would be counted through several images",
                        axes, p->atm_cutoff, half_side);
    }
    if (2.0 * max_radius >= half_side) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "periodic %s: a contact diameter of %g m is not below half the box (%g m): "
                        "a pair would touch through two images (use a larger box_half)",
                        axes, 2.0 * max_radius, half_side);
    }
    return SIM_OK;
}

double sim_state_max_radius(const sim_state *s) {
    double r = 0.0;
    for (uint32_t i = 0; i < s->n; ++i) {
        r = s->pos[i].w > r ? s->pos[i].w : r;
    }
    return r;
}

sim_period_d sim_period_of(const sim_params *p) {
    sim_period_d per;
    for (int a = 0; a < 3; ++a) {
        const int on = (p->periodic >> a) & 1;
        per.len[a] = on ? 2.0 * p->box_half : 0.0;
        per.inv[a] = on ? 1.0 / (2.0 * p->box_half) : 0.0;
    }
    return per;
}

sim_period_f sim_period_to_float(sim_period_d p) {
    sim_period_f f;
    for (int a = 0; a < 3; ++a) {
        f.len[a] = (float)p.len[a];
        f.inv[a] = (float)p.inv[a];
    }
    return f;
}

sim_physics_f sim_physics_to_float(const sim_physics *ph) {
    sim_physics_f f;
    memset(&f, 0, sizeof f);
#define SIM_TO_FLOAT_NORMAL(type, member) f.normal.member = (type)ph->normal.member;
#define SIM_TO_FLOAT_TANGENTIAL(type, member) f.tangential.member = (type)ph->tangential.member;
#define SIM_TO_FLOAT_ROLLING(type, member) f.rolling.member = (type)ph->rolling.member;
#define SIM_TO_FLOAT_ATM(type, member) f.atm.member = (type)ph->atm.member;
#define SIM_TO_FLOAT_BOX(type, member) f.box.member = (type)ph->box.member;
    SIM_NORMAL_MEMBERS(SIM_TO_FLOAT_NORMAL, float)
    SIM_TANGENTIAL_MEMBERS(SIM_TO_FLOAT_TANGENTIAL, float)
    SIM_ROLLING_MEMBERS(SIM_TO_FLOAT_ROLLING, float)
    SIM_ATM_MEMBERS(SIM_TO_FLOAT_ATM, float)
    SIM_BOX_MEMBERS(SIM_TO_FLOAT_BOX, float)
#undef SIM_TO_FLOAT_NORMAL
#undef SIM_TO_FLOAT_TANGENTIAL
#undef SIM_TO_FLOAT_ROLLING
#undef SIM_TO_FLOAT_ATM
#undef SIM_TO_FLOAT_BOX
    /* The members each precision holds its own way. */
    f.atm.atm_cutoff2 = (float)(ph->atm.atm_cutoff * ph->atm.atm_cutoff);
    f.box.gx = (float)ph->box.gravity.x;
    f.box.gy = (float)ph->box.gravity.y;
    f.box.gz = (float)ph->box.gravity.z;
    f.box.period = sim_period_to_float(ph->box.period);
    return f;
}
