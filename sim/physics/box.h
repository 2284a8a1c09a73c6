/* SPDX-License-Identifier: MIT
 * nbsim — the box sub-model: its walls' place, gravity and the periodic axes (minimum images,
 * wrapping, and the box tests of culling). The walls' forces are the normal law's (contact.h).
 * Read twice, like every part (normal.h says how). */
#ifndef SIM_PHYSICS_BOX_H
#define SIM_PHYSICS_BOX_H
/* The box's periods, for minimum images: len = 2 box_half [m] on a periodic axis and inv = 1/len
 * [1/m]; both 0 on an axis with walls, where an image is the separation itself. */
typedef struct {
    float len[3], inv[3];
} sim_period_f;
typedef struct {
    double len[3], inv[3];
} sim_period_d;

/* X(type, member); R: double or float. SIM_BOX_MEMBERS: the members converted as they are
 * (sim_physics_to_float); then each precision's own: gravity as a vector in double and as gx, gy,
 * gz in float, and the periods. */
#define SIM_BOX_MEMBERS(X, R)                                                                      \
    X(R, box_half)   /* walls at +-box_half [m] */                                                 \
    X(int, periodic) /* sim_params.periodic: periodic axes (no walls there) */
#define SIM_BOX_MEMBERS_D(X)                                                                       \
    SIM_BOX_MEMBERS(X, double)                                                                     \
    X(sim_vec3d, gravity) /* [m/s^2] */                                                            \
    X(sim_period_d, period)
#define SIM_BOX_MEMBERS_F(X)                                                                       \
    SIM_BOX_MEMBERS(X, float)                                                                      \
    X(float, gx)                                                                                   \
    X(float, gy)                                                                                   \
    X(float, gz)                                                                                   \
    X(sim_period_f, period)
typedef struct {
    SIM_BOX_MEMBERS_D(SIM_MEMBER)
} sim_box_d;
typedef struct {
    SIM_BOX_MEMBERS_F(SIM_MEMBER)
} sim_box_f;
#endif /* SIM_PHYSICS_BOX_H */

#ifdef SIM_FN
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
    if (ph->box.periodic) {
        SIM_FN(sim_min_image_in)(dx, dy, dz, &ph->box.period);
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
    if (ph->box.periodic) {
        SIM_FN(sim_wrap_in)(pos, &ph->box.period);
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
#endif /* SIM_FN */
