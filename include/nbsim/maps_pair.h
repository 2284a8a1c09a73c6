/* SPDX-License-Identifier: MIT
 * nbsim — 2-simplex thread maps: block coordinates -> tile pair (I, J), 0 <= J <= I < n.
 *
 * Host + device (SIM_HD), C11 and CUDA. One function per map; sim_pair_map_block() switches on
 * the map (one case per row of SIM_PAIR_MAP_TABLE, maps.h), which kernels make a compile-time
 * constant so the switch folds away. Every function
 * returns 1 and fills *tile when the block owns a tile pair, 0 when the block is wasted. The
 * launch parameters (grid, p[]) come from sim_pair_map_plan() in maps.c; the comment above each
 * map says what its grid and p[] are. Formulas and sources: docs/maps.md. */
#ifndef SIM_MAPS_H /* maps.h includes this file at its end, after the types it uses */
#error "include nbsim/maps.h, not nbsim/maps_pair.h"
#endif

#ifndef SIM_MAPS_PAIR_H
#define SIM_MAPS_PAIR_H

#include <math.h>
#include <stdint.h>

/* ---- helpers shared with maps_triplet.h ---- */

/* floor(log2 x) for x > 0, with bit operations only (the recursive maps' level). */
SIM_HD uint32_t sim_map_log2(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return 31u - (uint32_t)__clz((int)x);
#elif defined(__GNUC__)
    return 31u - (uint32_t)__builtin_clz(x);
#else
    uint32_t r = 0;
    while (x >>= 1) {
        ++r;
    }
    return r;
#endif
}

/* T2(k) = k(k+1)/2. 32-bit is exact for k <= 65535: 65535 * 65536 < 2^32. */
SIM_HD uint32_t sim_map_t2(uint32_t k) {
    return (k * (k + 1u)) >> 1;
}

/* 1/sqrt(x) for the row estimates below, x >= 1: on the device one MUFU.RSQ (approximate, relative
 * error < 2^-22). rsqrtf() would add a denormal fix-up (4 instructions per thread) that x >= 1
 * never needs, and sqrtf() a correctly rounded refinement with a slow-path call; the estimate only
 * has to land within a row or two, the integer steps do the rest. The host takes 1/sqrtf. */
SIM_HD float sim_map_rsqrt_estimate(float x) {
#if defined(__CUDA_ARCH__)
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return 1.0f / sqrtf(x);
#endif
}

/* Row I of g(lambda): the largest I with T2(I) <= lambda, for lambda < T2(65535); *first = T2(I),
 * so the caller's column is lambda - *first without a second product. The float estimate
 * (sqrt(8 lambda + 1) - 1) / 2, its root taken as x * rsqrt(x), is within 0.03 of the real value
 * (relative error ~2^-22 of a root < 2^17): at most one row off, so each loop below runs at most
 * once. The integer steps (T2(I - 1) = T2(I) - I, T2(I + 1) = T2(I) + I + 1) make the result exact
 * whatever the estimate, so host and device agree bit for bit although their roots differ. */
SIM_HD uint32_t sim_map_ltm_row(uint32_t lambda, uint32_t *first) {
    float x = fmaf(8.0f, (float)lambda, 1.0f);
    float est = fmaf(x, sim_map_rsqrt_estimate(x), -1.0f) * 0.5f;
    /* est > -1 (x >= 1); the signed conversion truncates a slightly negative estimate to 0. */
    uint32_t i = est < 65535.0f ? (uint32_t)(int32_t)est : 65535u;
    uint32_t t = sim_map_t2(i);
    while (t > lambda) {
        t -= i;
        --i;
    }
    while (lambda - t > i) { /* T2(i + 1) = t + i + 1 <= lambda */
        ++i;
        t += i;
    }
    *first = t;
    return i;
}

/* Lower triangle of a power-of-two size s = 2^d, the O(1) recursive map (docs/maps.md, [REC] §III-A,
 * table row `rm`), with the grid transposed: wy in [0, s] (s + 1 values) is the
 * long side and wx in [0, s/2) the short one, so grids stay within CUDA's y limit. Row wy = 0
 * and wy = s are the diagonal; rows wy in [b, 2b) hold the squares of size b = 2^floor(log2 wy):
 * square q = wx / b covers rows [2qb + b, 2qb + 2b), columns [2qb, 2qb + b).
 * For s = 1 only (wy, wx) = (0, 0) exists. Output (u, v), u >= v, relative to the triangle. */
SIM_HD void sim_map_rm_triangle(uint32_t wy, uint32_t wx, uint32_t d, uint32_t *u, uint32_t *v) {
    uint32_t s = 1u << d;
    if (wy == 0u || wy == s) {
        *u = *v = 2u * wx + (wy != 0u);
        return;
    }
    uint32_t lb = sim_map_log2(wy);
    uint32_t q = wx >> lb;
    *u = wy + (q << (lb + 1u));
    *v = wx + (q << lb);
}

/* One part of the rm map: the triangle of size s = 2^d at offset o on the diagonal, and below
 * it the rectangle rows [o + s, n) x columns [o, o + s), folded into the same s/2-wide grid
 * (two grid rows per tile row) so it costs no launch of its own.
 * Grid: x = s + 1 + 2h (h = rows below the part; 1 when s = 1), y = max(s/2, 1).
 * Tiles with I >= n (only in the padded last part) are wasted. */
SIM_HD int sim_map_rm_part(uint32_t o, uint32_t d, uint32_t n, uint32_t bx, uint32_t by,
                           sim_tile2 *tile) {
    uint32_t s = 1u << d, u, v;
    if (bx <= s) {
        sim_map_rm_triangle(bx, by, d, &u, &v);
    } else {
        uint32_t r = bx - (s + 1u);
        u = s + (r >> 1);
        v = by + (r & 1u) * (s >> 1);
    }
    if (o + u >= n) {
        return 0;
    }
    tile->i = o + u;
    tile->j = o + v;
    return 1;
}

/* ---- the maps ---- */

/* bb: grid n x n, (I, J) = (by, bx); blocks above the diagonal are wasted. */
SIM_HD int sim_pair_map_bb(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                           sim_tile2 *tile) {
    (void)launch;
    (void)bz;
    if (bx > by) {
        return 0;
    }
    tile->i = by;
    tile->j = bx;
    return 1;
}

/* Linear block index of the balanced 2-D grids: < gx * gy <= T2(n) + gx < 2^32. */
SIM_HD uint32_t sim_map_lambda2(const sim_map_launch *launch, uint32_t bx, uint32_t by) {
    return bx + by * launch->grid[0];
}

/* ltm (exact): the balanced grid gx = ceil(sqrt(T2)) wide, only as many rows as needed,
 * gy = ceil(T2 / gx) (waste < gx); p[0] = T2(n).
 * lambda = bx + by * gx; I = row of lambda (exact), J = lambda - T2(I). */
SIM_HD int sim_pair_map_ltm(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                            sim_tile2 *tile) {
    (void)bz;
    uint32_t lambda = sim_map_lambda2(launch, bx, by);
    if (lambda >= launch->p[0]) {
        return 0;
    }
    uint32_t first;
    tile->i = sim_map_ltm_row(lambda, &first);
    tile->j = lambda - first;
    return 1;
}

/* The papers' float variants share ltm's grid. Their row estimate is used as is (that is the
 * point: they go wrong for large n). A wrong row gives J < 0 or J > I; such a block is reported
 * as wasted rather than handed to a kernel, so the error shows as a missing tile pair and never
 * as an out-of-bounds access. */
SIM_HD int sim_map_ltm_paper_tile(uint32_t lambda, uint32_t i, uint32_t n, sim_tile2 *tile) {
    if (i >= n) {
        return 0;
    }
    uint32_t first = sim_map_t2(i);
    if (lambda < first || lambda - first > i) {
        return 0;
    }
    tile->i = i;
    tile->j = lambda - first;
    return 1;
}

/* Float to row index; NaN and negatives (never produced for lambda >= 0) become row 0. */
SIM_HD uint32_t sim_map_float_row(float x) {
    return x > 0.0f ? (x < 4.0e9f ? (uint32_t)x : 4000000000u) : 0u;
}

/* ltm-sqrt (paper LTM-X): I = floor(sqrtf(1/4 + 2 lambda) - 1/2), all in float. */
SIM_HD int sim_pair_map_ltm_sqrt(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                                 uint32_t bz, sim_tile2 *tile) {
    (void)bz;
    uint32_t lambda = sim_map_lambda2(launch, bx, by);
    if (lambda >= launch->p[0]) {
        return 0;
    }
    float x = fmaf(2.0f, (float)lambda, 0.25f);
    return sim_map_ltm_paper_tile(lambda, sim_map_float_row(sqrtf(x) - 0.5f), launch->n, tile);
}

/* 1/sqrt(x) as the papers' LTM-R takes it: the hardware rsqrtf on the device (approximate,
 * <= 2 ulp), a correctly rounded 1/sqrtf on the host. So this one variant can fail at a
 * slightly different n on a GPU than on the CPU; tests/test_maps.c reports the host's value. */
SIM_HD float sim_map_rsqrtf(float x) {
#if defined(__CUDA_ARCH__)
    return rsqrtf(x);
#else
    return 1.0f / sqrtf(x);
#endif
}

/* ltm-rsqrt (paper LTM-R): sqrt(x) = x * rsqrtf(x), plus the papers' epsilon = 1e-4.
 * fmaf is written out because nvcc contracts x * r - 0.5f into one; the host then matches. */
SIM_HD int sim_pair_map_ltm_rsqrt(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                                  uint32_t bz, sim_tile2 *tile) {
    (void)bz;
    uint32_t lambda = sim_map_lambda2(launch, bx, by);
    if (lambda >= launch->p[0]) {
        return 0;
    }
    float x = fmaf(2.0f, (float)lambda, 0.25f);
    float row = fmaf(x, sim_map_rsqrtf(x), -0.5f) + 1.0e-4f;
    return sim_map_ltm_paper_tile(lambda, sim_map_float_row(row), launch->n, tile);
}

/* Carmack/Lomont inverse square root: the 0x5f3759df guess and three Newton steps, each
 * y (1.5 - x/2 y^2) with its multiply-add fused explicitly so host and device round alike. */
SIM_HD float sim_map_q_rsqrtf(float x) {
#if defined(__CUDA_ARCH__)
    float y = __uint_as_float(0x5f3759dfu - (__float_as_uint(x) >> 1));
#else
    union {
        float f;
        uint32_t u;
    } bits;
    bits.f = x;
    bits.u = 0x5f3759dfu - (bits.u >> 1);
    float y = bits.f;
#endif
    float half = 0.5f * x;
    for (int step = 0; step < 3; ++step) {
        y = y * fmaf(-(half * y), y, 1.5f);
    }
    return y;
}

/* ltm-newton (paper LTM-N): sqrt(x) = x * q_rsqrt(x), plus epsilon = 1e-4. */
SIM_HD int sim_pair_map_ltm_newton(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                                   uint32_t bz, sim_tile2 *tile) {
    (void)bz;
    uint32_t lambda = sim_map_lambda2(launch, bx, by);
    if (lambda >= launch->p[0]) {
        return 0;
    }
    float x = fmaf(2.0f, (float)lambda, 0.25f);
    float row = fmaf(x, sim_map_q_rsqrtf(x), -0.5f) + 1.0e-4f;
    return sim_map_ltm_paper_tile(lambda, sim_map_float_row(row), launch->n, tile);
}

/* rb: grid (n' + 1) x (n'/2), n' = n rounded up to even, p[0] = n'. The grid of docs/maps.md is
 * (n'/2) x (n' + 1); it is transposed here (v = bx, u = by) so y <= 32768 for every n.
 * u < v: (v - 1, u); else the rotated corner (n' - 1 - v, n' - 1 - u). Odd n drops I = n. */
SIM_HD int sim_pair_map_rb(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                           sim_tile2 *tile) {
    (void)bz;
    uint32_t v = bx, u = by, np = launch->p[0];
    uint32_t i = u < v ? v - 1u : np - 1u - v;
    uint32_t j = u < v ? u : np - 1u - u;
    if (i >= launch->n) {
        return 0;
    }
    tile->i = i;
    tile->j = j;
    return 1;
}

/* Column a of the upper-triangle enumeration (start S(a) = a (2s - a - 1) / 2, s = n + 1):
 * largest a with S(a) <= k. 64-bit products: a (2s - a - 1) reaches 2^32 at n = 65535. */
SIM_HD uint64_t sim_map_utm_start(uint32_t a, uint32_t two_s_minus_1) {
    return ((uint64_t)a * (two_s_minus_1 - a)) >> 1;
}

SIM_HD uint32_t sim_map_utm_column(uint32_t k, uint32_t n) {
    uint32_t w = 2u * n + 1u; /* 2s - 1 */
    uint64_t disc = (uint64_t)w * w - 8u * (uint64_t)k;
    float est = ((float)w - sqrtf((float)disc)) * 0.5f;
    uint32_t a = est > 0.0f ? (est < (float)n ? (uint32_t)est : n - 1u) : 0u;
    while (sim_map_utm_start(a, w) > k) {
        --a;
    }
    while (a + 1u < n && sim_map_utm_start(a + 1u, w) <= k) {
        ++a;
    }
    return a;
}

/* utm (exact): 1-D grid of T2(n) blocks (T2(65535) < 2^31 fits CUDA's x limit), p[0] = T2(n).
 * Avril et al.'s upper-triangle pair (a, b), a < b <= n, of thread k, moved to the lower
 * triangle as (I, J) = (b - 1, a): consecutive blocks walk down a column. */
SIM_HD int sim_pair_map_utm(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                            sim_tile2 *tile) {
    (void)by;
    (void)bz;
    uint32_t k = bx;
    if (k >= launch->p[0]) {
        return 0;
    }
    uint32_t a = sim_map_utm_column(k, launch->n);
    tile->i = a + (uint32_t)(k - sim_map_utm_start(a, 2u * launch->n + 1u));
    tile->j = a;
    return 1;
}

/* rec: p[0] = 1 for a level launch, 0 for the diagonal launch; p[1] = level l (s = 2^l).
 * Level grid: x = s * (squares that start inside the domain), y = s; square q = bx >> l covers
 * rows [2qs + s, 2qs + 2s), columns [2qs, 2qs + s). Diagonal grid: x = n, (I, I).
 * Rows >= n (n padded to 2^k) are wasted. */
SIM_HD int sim_pair_map_rec(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                            sim_tile2 *tile) {
    (void)bz;
    if (launch->p[0] == 0u) {
        tile->i = tile->j = bx;
        return 1;
    }
    uint32_t l = launch->p[1], s = 1u << l;
    uint32_t base = (bx >> l) << (l + 1u);
    uint32_t i = base + s + by;
    if (i >= launch->n) {
        return 0;
    }
    tile->i = i;
    tile->j = base + (bx & (s - 1u));
    return 1;
}

/* rm: one launch per power-of-two part along the diagonal (a single part for n = 2^k; at most
 * SIM_RM_PARTS, the last possibly reaching past n; see maps.c); p[0] = part offset o,
 * p[1] = log2 of the part size. O(1), bit operations only, no roots. */
SIM_HD int sim_pair_map_rm(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                           sim_tile2 *tile) {
    (void)bz;
    return sim_map_rm_part(launch->p[0], launch->p[1], launch->n, bx, by, tile);
}

SIM_HD int sim_pair_map_block(sim_pair_map map, const sim_map_launch *launch, uint32_t bx,
                              uint32_t by, uint32_t bz, sim_tile2 *tile) {
    switch (map) {
#define SIM_PAIR_MAP_CASE(id, fn)                                                                  \
    case SIM_PAIR_MAP_##id:                                                                        \
        return sim_pair_map_##fn(launch, bx, by, bz, tile);
        SIM_PAIR_MAP_FUNCS(SIM_PAIR_MAP_CASE)
#undef SIM_PAIR_MAP_CASE
    default:
        return 0;
    }
}

#endif /* SIM_MAPS_PAIR_H */
