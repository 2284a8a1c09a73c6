/* SPDX-License-Identifier: MIT
 * nbsim — 3-simplex thread maps: block coordinates -> tile triple (I, J, K), 0 <= K <= J <= I < n.
 *
 * Host + device (SIM_HD), C11 and CUDA; same conventions as maps_pair.h (whose helpers this file
 * uses): one function per map, sim_triplet_map_block() switches on the map, 1 = the block owns
 * *tile, 0 = wasted. Grids and p[] come from sim_triplet_map_plan() in maps.c. */
#ifndef SIM_MAPS_H /* maps.h includes this file at its end, after the types it uses */
#error "include nbsim/maps.h, not nbsim/maps_triplet.h"
#endif

#ifndef SIM_MAPS_TRIPLET_H
#define SIM_MAPS_TRIPLET_H

#include <math.h>
#include <stdint.h>

#include "nbsim/maps_pair.h"

/* T3(k) = k(k+1)(k+2)/6 in 64-bit (T3(4096) ~ 1.15e10). T2(k)(k+2) is a multiple of 3, and a
 * division by the constant 3 compiles to a multiply. */
SIM_HD uint64_t sim_map_t3(uint32_t k) {
    return (uint64_t)sim_map_t2(k) * (k + 2u) / 3u;
}

/* Layer I of the tetrahedral g(lambda): the largest I with T3(I) <= lambda, lambda < T3(4096).
 * cbrtf(6 lambda) is within one layer of I + 1 (I(I+1)(I+2) = (I+1)^3 - (I+1)); the integer
 * steps make the result exact. */
SIM_HD uint32_t sim_map_tetra_layer(uint64_t lambda) {
    float est = cbrtf(6.0f * (float)lambda);
    uint32_t i = est >= 1.0f ? (est < 4097.0f ? (uint32_t)est - 1u : 4096u) : 0u;
    while (sim_map_t3(i) > lambda) {
        --i;
    }
    while (sim_map_t3(i + 1u) <= lambda) {
        ++i;
    }
    return i;
}

/* bb: grid n x n x n, (I, J, K) = (bz, by, bx); none unless K <= J <= I. */
SIM_HD int sim_triplet_map_bb(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                              sim_tile3 *tile) {
    (void)launch;
    if (bx > by || by > bz) {
        return 0;
    }
    tile->i = bz;
    tile->j = by;
    tile->k = bx;
    return 1;
}

/* Linear index of the balanced cube grid gx x gy x gz: by + gy bz < 2^32, the product 64-bit. */
SIM_HD uint64_t sim_map_lambda3(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                                uint32_t bz) {
    return (uint64_t)(by + launch->grid[1] * bz) * launch->grid[0] + bx;
}

SIM_HD uint64_t sim_map_launch_total(const sim_map_launch *launch) {
    return ((uint64_t)launch->p[1] << 32) | launch->p[0];
}

/* tetra (exact): balanced grid m x m x ceil(T3/m^2), m = ceil(cbrt(T3)) (<= 2256, so every n
 * fits CUDA's limits; waste < m^2); p[0], p[1] = low and high 32 bits of T3(n). I = layer of
 * lambda, then the exact 2-D g on lambda2 = lambda - T3(I) gives (J, K). */
SIM_HD int sim_triplet_map_tetra(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                                 uint32_t bz, sim_tile3 *tile) {
    uint64_t lambda = sim_map_lambda3(launch, bx, by, bz);
    if (lambda >= sim_map_launch_total(launch)) {
        return 0;
    }
    uint32_t i = sim_map_tetra_layer(lambda);
    uint32_t lambda2 = (uint32_t)(lambda - sim_map_t3(i));
    uint32_t first;
    tile->i = i;
    tile->j = sim_map_ltm_row(lambda2, &first);
    tile->k = lambda2 - first;
    return 1;
}

/* tetra-float (the papers' float version, kept wrong): same grid as tetra. I + 1 is the real
 * root t of t^3 - t = 6 lambda by Cardano's formula, taken in Vieta's form t = u + 1/(3u),
 * u = cbrt(3 lambda + sqrt(9 lambda^2 - 1/27)) (the literal two-cube-root form cancels to zero
 * in float and fails already at n = 2), all in float, plus the papers' epsilon = 1e-4; (J, K)
 * by the float 2-D g (LTM-X). fmaf is written where nvcc would contract, so the host computes
 * what the device does up to cbrtf's last bit. Wrong rows are reported as wasted blocks, as in
 * maps_pair.h. */
SIM_HD int sim_triplet_map_tetra_float(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                                       uint32_t bz, sim_tile3 *tile) {
    uint64_t lambda = sim_map_lambda3(launch, bx, by, bz);
    if (lambda >= sim_map_launch_total(launch)) {
        return 0;
    }
    float lf = (float)lambda;
    float u = cbrtf(fmaf(3.0f, lf, sqrtf(fmaf(9.0f * lf, lf, -1.0f / 27.0f))));
    uint32_t i = sim_map_float_row(u + 1.0f / (3.0f * u) - 1.0f + 1.0e-4f);
    if (i >= launch->n || sim_map_t3(i) > lambda || lambda - sim_map_t3(i) >= sim_map_t2(i + 1u)) {
        return 0;
    }
    uint32_t lambda2 = (uint32_t)(lambda - sim_map_t3(i));
    float x = fmaf(2.0f, (float)lambda2, 0.25f);
    uint32_t j = sim_map_float_row(sqrtf(x) - 0.5f);
    if (j > i || sim_map_t2(j) > lambda2 || lambda2 - sim_map_t2(j) > j) {
        return 0;
    }
    tile->i = i;
    tile->j = j;
    tile->k = lambda2 - sim_map_t2(j);
    return 1;
}

/* ---- rm (recursive, O(1), no roots) ----
 * A simplex of size s = 2^d splits into halves L, H: (L,L,L) and (H,H,H) are simplices of size
 * s/2, (H,H,L) and (H,L,L) are prisms triangle(s/2) x line(s/2). Unrolled, level t = 2^l
 * (t < s) holds s/(2t) copies of both prisms; per copy the two prisms make t lines of two
 * size-t triangles, so the whole level is the size-t triangle (rm_triangle) times s blocks
 * along z: z = copy * 2t + prism * t + line. The levels' triangles are concatenated along x
 * (T2(2^l) blocks each, level l starting at B_l = sum_{j<l} T2(2^j) = (2^l (2^l + 3) - 4) / 6)
 * and the diagonal (I, I, I) is one more x column, x = B_d: grid (B_d + 1) x s, exactly T3(s)
 * = s (B_d + 1) blocks. The level of x is floor(log2(6x + 4)) / 2, corrected by one compare.
 * The top level (t = s/2, three quarters of the blocks) has a launch of its own when s >= 4
 * (sim_map_rm3_top): there the level search and the row trade below are not needed, which
 * halves the map's instructions for most blocks; the concatenated launch then stops at
 * x = B_{d-1}, its diagonal column.
 *
 * Block order is memory order: the hardware dispatches x fastest, and K is the fastest index of
 * a row-major N^3 array, so consecutive blocks should step along K (a block's row segment is only
 * rho elements, part of a cache line whose rest the K-neighbour blocks read). In (H,L,L) the
 * triangle gives (J, K), so x already steps along K; in (H,H,L) K is the line, constant along a
 * grid row, so there the t grid rows of a prism trade blocks: (e, line) -> the pair (e', line')
 * with e' t + line' = e + T2(t) line, a bijection of the prism's T2(t) x t blocks under which a
 * grid row steps along K. */

SIM_HD uint32_t sim_map_rm_level_start(uint32_t l) {
    uint32_t t = 1u << l;
    return (t * (t + 3u) - 4u) / 6u;
}

/* Part of a simplex of size 2^d at offset o, levels below B_top (p[1] = o, p[2] = d, p[3] = B_top
 * with top = d, or d - 1 when the top level has its own launch): x = bx, z = by. */
SIM_HD int sim_map_rm3_simplex(const sim_map_launch *launch, uint32_t bx, uint32_t by,
                               sim_tile3 *tile) {
    uint32_t o = launch->p[1], i, j, k;
    if (bx == launch->p[3]) {
        i = j = k = o + by;
    } else {
        uint32_t v = 6u * bx + 4u, l = sim_map_log2(v) >> 1;
        if ((1u << l) * ((1u << l) + 3u) > v) {
            --l;
        }
        uint32_t e = bx - sim_map_rm_level_start(l), t = 1u << l, u = 0, w = 0;
        uint32_t base = o + (by & ~(2u * t - 1u)), line = by & (t - 1u), hll = (by >> l) & 1u;
        if (!hll) {
            /* (H, H, L): e t + line from e + T2(t) line, without its 33-bit product:
             * T2(t) = (t / 2)(t + 1), so with m = line (t + 1) the sum is e + m t / 2. */
            uint32_t m = line * (t + 1u), a = e + (m & 1u) * (t >> 1);
            line = a & (t - 1u);
            e = (m >> 1) + (a >> l);
        }
        if (l > 0u) {
            sim_map_rm_triangle(e >> (l - 1u), e & ((t >> 1) - 1u), l, &u, &w);
        }
        if (hll) { /* (H, L, L): I on the line, (J, K) the triangle in L */
            i = base + t + line;
            j = base + u;
            k = base + w;
        } else { /* (H, H, L): (I, J) the triangle in H, K on the line */
            i = base + t + u;
            j = base + t + w;
            k = base + line;
        }
    }
    if (i >= launch->n) {
        return 0;
    }
    tile->i = i;
    tile->j = j;
    tile->k = k;
    return 1;
}

/* The top level of a part's simplex (s = 2^d >= 4 at offset o, t = s/2, one copy of each prism),
 * grid t x t/2 x 2(t + 1), x stepping along K in both prisms:
 *   bz <= t     (H, H, L): (I, J) the triangle in H on (wy, wx) = (bz, by), K = o + bx;
 *   bz >  t     (H, L, L): (J, K) the triangle in L on (wy, wx) = (bz - t - 1, bx mod t/2),
 *               I = o + t + line, line = (bx div t/2) + 2 by (a bijection onto [0, t)). */
SIM_HD int sim_map_rm3_top(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                           sim_tile3 *tile) {
    uint32_t o = launch->p[1], l = launch->p[2] - 1u, t = 1u << l, u, w, i, j, k;
    if (bz <= t) {
        sim_map_rm_triangle(bz, by, l, &u, &w);
        i = o + t + u;
        j = o + t + w;
        k = o + bx;
    } else {
        sim_map_rm_triangle(bz - t - 1u, bx & ((t >> 1) - 1u), l, &u, &w);
        i = o + t + ((bx >> (l - 1u)) | (by << 1));
        j = o + u;
        k = o + w;
    }
    if (i >= launch->n) {
        return 0;
    }
    tile->i = i;
    tile->j = j;
    tile->k = k;
    return 1;
}

/* rm: for n not a power of two the plan cuts [0, n) along the diagonal into at most
 * SIM_RM_PARTS power-of-two parts [o_a, o_a + s_a), the last possibly reaching past n (maps.c);
 * one part (n = 2^k) is the single launch of kind 0. Every triple is of one of three kinds
 * (p[0]), one launch each per part:
 *   0  all three tiles in one part: that part's simplex (above), without its top level when
 *      kind 3 has it;
 *   3  the top level of that simplex (s >= 4; sim_map_rm3_top);
 *   1  J in part a, K before it (K < o_a): K = bx in [0, o_a), times the 2-D rm part a (triangle
 *      + rectangle below, sim_map_rm_part) for (I, J) on (bz, by) = its (long, short) sides;
 *   2  J, K in part a, I after it: the triangle of part a for (J, K) on (by, bx) = its (long,
 *      short) sides, times I = o_a + s_a + bz.
 * In all, x steps along K (memory order, see above). */
SIM_HD int sim_triplet_map_rm(const sim_map_launch *launch, uint32_t bx, uint32_t by, uint32_t bz,
                              sim_tile3 *tile) {
    uint32_t o = launch->p[1], d = launch->p[2];
    if (launch->p[0] == 0u) {
        return sim_map_rm3_simplex(launch, bx, by, tile);
    }
    if (launch->p[0] == 3u) {
        return sim_map_rm3_top(launch, bx, by, bz, tile);
    }
    if (launch->p[0] == 1u) {
        sim_tile2 pair;
        if (!sim_map_rm_part(o, d, launch->n, bz, by, &pair)) {
            return 0;
        }
        tile->i = pair.i;
        tile->j = pair.j;
        tile->k = bx;
        return 1;
    }
    uint32_t u, w;
    sim_map_rm_triangle(by, bx, d, &u, &w);
    tile->i = o + (1u << d) + bz;
    tile->j = o + u;
    tile->k = o + w;
    return 1;
}

SIM_HD int sim_triplet_map_block(sim_triplet_map map, const sim_map_launch *launch, uint32_t bx,
                                 uint32_t by, uint32_t bz, sim_tile3 *tile) {
    switch (map) {
#define SIM_TRIPLET_MAP_CASE(id, fn)                                                               \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        return sim_triplet_map_##fn(launch, bx, by, bz, tile);
        SIM_TRIPLET_MAP_FUNCS(SIM_TRIPLET_MAP_CASE)
#undef SIM_TRIPLET_MAP_CASE
    default:
        return 0;
    }
}

#endif /* SIM_MAPS_TRIPLET_H */
