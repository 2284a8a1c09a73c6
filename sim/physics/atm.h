/* SPDX-License-Identifier: MIT
 * nbsim — the ATM sub-model: Axilrod-Teller-Muto triple forces, directly and in the pair terms
 * the GPU's triplet kernel sums (physics.h's conventions). Read twice, like every part (normal.h
 * says how). */
#ifndef SIM_PHYSICS_ATM_H
#define SIM_PHYSICS_ATM_H
/* X(type, member); R: double or float. SIM_ATM_MEMBERS: the members converted as they are
 * (sim_physics_to_float); then the cut-off, which the float ATM holds squared so that the hot loop
 * compares squares. */
#define SIM_ATM_MEMBERS(X, R) X(R, atm_nu) /* ATM strength nu [J m^9] */
#define SIM_ATM_MEMBERS_D(X)                                                                       \
    SIM_ATM_MEMBERS(X, double)                                                                     \
    X(double, atm_cutoff) /* [m]; 0 = no cut-off */
#define SIM_ATM_MEMBERS_F(X)                                                                       \
    SIM_ATM_MEMBERS(X, float)                                                                      \
    X(float, atm_cutoff2) /* cutoff^2 [m^2]; 0 = no cut-off */
typedef struct {
    SIM_ATM_MEMBERS_D(SIM_MEMBER)
} sim_atm_d;
typedef struct {
    SIM_ATM_MEMBERS_F(SIM_MEMBER)
} sim_atm_f;
#endif /* SIM_PHYSICS_ATM_H */

#ifdef SIM_FN
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
    const SIM_R K = ph->atm.atm_nu * rs * inv_s * inv_s; /* nu S^-5/2, nu first against overflow */
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
#endif /* SIM_FN */
