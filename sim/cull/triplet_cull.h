/* SPDX-License-Identifier: MIT
 * nbsim — culling tile triples by the ATM cut-off, the parts the CPU reference and the CUDA
 * kernels share (host + device, C11 and CUDA): the distance between two boxes of centres, the
 * limit it is compared with, and the sub-range of the list one of several devices takes.
 *
 * What survives. With a cut-off R a triple counts only when each of its three distances is <= R
 * (physics.h). Triplet tiles (SIM_TRIPLET_TILE consecutive bodies of the sorted order, cull.h)
 * get a box of their centres (radii play no part: the cut-off is on centre distances). Two
 * tiles are neighbours when the distance between their boxes (per axis the gap
 * max(0, lo_b - hi_a, lo_a - hi_b), the three gaps combined in the Euclidean norm) is <= R; a tile
 * triple (I >= J >= K) survives when all three of its tile pairs are neighbours. Every pair of
 * bodies in two tiles is at least as far apart as their boxes, so a triple within the cut-off
 * lies in a surviving tile triple: the culled sweep evaluates every triple the full sweep would
 * count, and each once.
 *
 * How they are found (bench/README.md, "Culling tile triples", measured the alternative): a
 * tile-pair neighbour list first, built like the contacts' list (super-tiles of SIM_CULL_SUPER
 * triplet tiles above SIM_CULL_FLAT_MAX_TILES tiles, a pass placed by the pair map, then the tile
 * pairs inside each surviving super pair), so O(N) tests; then rows (row T: the neighbours
 * K <= T of tile T, from the list by counting, a prefix sum and a scatter), and for each listed
 * pair (I, J) the K of row J whose box is also within R of tile I's box, appended to the
 * tile-triple list with one atomic per warp: O(N k) tests for k neighbours per tile. The triples
 * come in no particular order, in tile indices of the sorted bodies (slot tiles), like the
 * contacts' tile pairs.
 *
 * Float rounding (the CUDA kernel). It counts a pair (u, v) when fl(d.d) <= a2_max (the cut-off
 * squared in float, sim_atm_a2_max_f), d = fl(x_v - x_u) per axis, the sum of squares rounded in
 * whatever order nvcc chose (fused or not). The box corners are min / max of the same float
 * centres (then moved outwards by cull.h's margin), so lo_b <= x_v and hi_a >= x_u exactly and,
 * IEEE rounding being monotone, fl(lo_b - hi_a) <= fl(x_v - x_u) <= |d|; the other side alike:
 * the box gap g <= |d| on every axis, exactly. So G = g.g <= D = d.d as real numbers. A sum of
 * three non-negative products rounded in any order (with or without FMA) is within a factor
 * 1 +- gamma_3 of its exact value, gamma_3 = 3u / (1 - 3u), u = 2^-24; so the kernel's acceptance
 * fl(D) <= a2_max gives G <= a2_max / (1 - gamma_3), and the box test's own rounding
 * fl(G) <= a2_max (1 + gamma_3) / (1 - gamma_3) < a2_max (1 + 2^-21). The box test compares with
 * sim_tcull_limit_f = a2_max (1 + 2^-19) (rounded: still > a2_max (1 + 2^-20)), so it never culls
 * a triple the kernel counts; the 2^-19 (2 ppm of R^2, 1 ppm of R) costs nothing measurable. An
 * absolute 1e-36 m^2 covers sums that underflow (cut-offs below 1e-18 m). The box distance is
 * written with explicit FMAs (sim_tcull_dist2_f), so the same two boxes give the same bits on the
 * host and the device, and a box inside another never gets a smaller distance (every operation
 * is monotone in its inputs): the super-tile pass rejects nothing its tile pairs would keep, and
 * a test on the host can count the survivors exactly as the kernels do.
 *
 * Double (the CPU reference). sim_atm_forces_d computes a = x2 - x1 and b = x3 - x2 and the third
 * edge as c = -(a + b), not as x1 - x3: per axis |c| >= |x3 - x1| - 3u R for a triple whose other
 * two sides are within R (u = 2^-53), so G <= R^2 (1 + 17u) for every triple it counts. The
 * limit is R^2 (1 + 2^-40) (sim_tcull_limit_d): again far beyond the rounding, far below any
 * physical distance.
 *
 * Several devices (a share). Part `part` of `parts` takes the tile triples (I, J, K) whose I is
 * `part` modulo `parts` (sim_tcull_mine): rows dealt round-robin, so the triples of any region
 * (the tiles follow a Morton curve) spread evenly over the parts. Each part lists only its own
 * triples; a list's order (warp atomics, different on every device) never decides who sweeps
 * what, and the fallback sweep keeps the same rule. */
#ifndef SIM_TRIPLET_CULL_H
#define SIM_TRIPLET_CULL_H

#include <math.h>

#include "cull/cull.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Initial list capacities per triplet tile (tuning.cull_capacity overrides both): the backends
 * size the lists for the real counts at set-up (one synchronous build), and grow them at a
 * frame's end like the contacts' lists, so these only keep the first allocation small. A tile of
 * the `triplets` scene has ~14 neighbours J <= I within 3 m and ~57 tile triples. */
#define SIM_TCULL_PAIRS_PER_TILE 32u
#define SIM_TCULL_TRIPLES_PER_TILE 64u
#define SIM_TCULL_MIN_CAPACITY 4096u

/* The box test's limit for a float cut-off a2_max = sim_atm_a2_max_f(cutoff^2) [m^2] (above);
 * one explicit FMA, so every compiler gives the same bits. */
SIM_HD float sim_tcull_limit_f(float a2_max) {
    return fmaf(a2_max, 1.0f + 0x1p-19f, 1e-36f);
}

/* The same for the double reference and its cut-off R [m]. */
SIM_HD double sim_tcull_limit_d(double cutoff) {
    return cutoff * cutoff * (1.0 + 0x1p-40) + 1e-300;
}

/* Gap between intervals [alo, ahi] and [blo, bhi] on one axis: 0 when they overlap, +inf when
 * one is empty (lo = +inf, hi = -inf); NaN differences are ignored by fmaxf (never a larger gap
 * than the body pairs have). */
SIM_HD float sim_tcull_gap_f(float alo, float ahi, float blo, float bhi) {
    return fmaxf(0.0f, fmaxf(blo - ahi, alo - bhi));
}

/* Squared distance between two boxes [m^2], explicit FMAs (see above). */
SIM_HD float sim_tcull_dist2_f(const sim_cull_box *a, const sim_cull_box *b) {
    const float gx = sim_tcull_gap_f(a->lo.x, a->hi.x, b->lo.x, b->hi.x);
    const float gy = sim_tcull_gap_f(a->lo.y, a->hi.y, b->lo.y, b->hi.y);
    const float gz = sim_tcull_gap_f(a->lo.z, a->hi.z, b->lo.z, b->hi.z);
    return fmaf(gz, gz, fmaf(gy, gy, gx * gx));
}

/* Whether two tiles are neighbours: box distance within the limit (NaN: no). */
SIM_HD int sim_tcull_near_f(const sim_cull_box *a, const sim_cull_box *b, float limit) {
    return sim_tcull_dist2_f(a, b) <= limit;
}

/* The same in a box with periodic axes (per: its periods; NULL, none): the gap on a periodic
 * axis is through the nearest images (sim_period_gap_f, less a rounding slack: never larger than
 * the pairs' minimum-image separations). */
SIM_HD int sim_tcull_near_pf(const sim_cull_box *a, const sim_cull_box *b, float limit,
                             const sim_period_f *per) {
    if (per == NULL) {
        return sim_tcull_near_f(a, b, limit);
    }
    const float gx = sim_period_gap_f(a->lo.x, a->hi.x, b->lo.x, b->hi.x, per->len[0], per->inv[0]);
    const float gy = sim_period_gap_f(a->lo.y, a->hi.y, b->lo.y, b->hi.y, per->len[1], per->inv[1]);
    const float gz = sim_period_gap_f(a->lo.z, a->hi.z, b->lo.z, b->hi.z, per->len[2], per->inv[2]);
    return fmaf(gz, gz, fmaf(gy, gy, gx * gx)) <= limit;
}

/* The double twins, on corners lo[3], hi[3]. */
SIM_HD double sim_tcull_gap_d(double alo, double ahi, double blo, double bhi) {
    return fmax(0.0, fmax(blo - ahi, alo - bhi));
}

SIM_HD int sim_tcull_near_d(const double alo[3], const double ahi[3], const double blo[3],
                            const double bhi[3], double limit) {
    const double gx = sim_tcull_gap_d(alo[0], ahi[0], blo[0], bhi[0]);
    const double gy = sim_tcull_gap_d(alo[1], ahi[1], blo[1], bhi[1]);
    const double gz = sim_tcull_gap_d(alo[2], ahi[2], blo[2], bhi[2]);
    return fma(gz, gz, fma(gy, gy, gx * gx)) <= limit;
}

SIM_HD int sim_tcull_near_pd(const double alo[3], const double ahi[3], const double blo[3],
                             const double bhi[3], double limit, const sim_period_d *per) {
    if (per == NULL) {
        return sim_tcull_near_d(alo, ahi, blo, bhi, limit);
    }
    double g2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        const double g = sim_period_gap_d(alo[k], ahi[k], blo[k], bhi[k], per->len[k], per->inv[k]);
        g2 += g * g;
    }
    return g2 <= limit;
}

/* Whether part `part` of `parts` (parts >= 1, part < parts) takes the tile triples of row I:
 * every row exactly one part's. */
SIM_HD int sim_tcull_mine(uint32_t i, uint32_t part, uint32_t parts) {
    return i % parts == part;
}

/* Body triples a tile triple (I >= J >= K) of full tiles holds: 32^3 when the tiles differ,
 * fewer where they coincide (strictly ordered bodies only). For rates per evaluated triple. */
SIM_HD uint64_t sim_tcull_body_triples(uint32_t i, uint32_t j, uint32_t k, uint32_t rho) {
    const uint64_t r = rho;
    if (i == j && j == k) {
        return r * (r - 1u) * (r - 2u) / 6u;
    }
    if (i == j || j == k) {
        return r * r * (r - 1u) / 2u;
    }
    return r * r * r;
}

#ifdef __cplusplus
}
#endif

#endif /* SIM_TRIPLET_CULL_H */
