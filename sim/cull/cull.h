/* SPDX-License-Identifier: MIT
 * nbsim — culling of tile pairs, the parts the CPU reference and the CUDA kernels share (host +
 * device, C11 and CUDA): the space-filling-curve key that orders bodies, the tile bounding box
 * and its overlap test, and which tile pair each thread of a culling block owns.
 *
 * Why it is exact (shared/DESIGN.md §7). Bodies sorted along a Morton curve make each tile of
 * rho consecutive bodies a compact blob. A tile's box spans [min(x - r), max(x + r)] per axis
 * over its bodies, so two bodies i, j can touch (|x_i - x_j| < r_i + r_j) only if the boxes of
 * their tiles overlap on every axis. Culling drops the tile pairs whose boxes do not overlap and
 * sweeps the rest with the unchanged contact test: the set of touching pairs is the full
 * sweep's. The sort only makes the boxes small (speed); correctness never depends on it being
 * fresh, because the boxes are recomputed from the current positions at every step.
 *
 * Float rounding. The kernels test `dx*dx + dy*dy + dz*dz < rs*rs` in float (dx = fl(x_j - x_i),
 * rs = fl(r_i + r_j)); the box test must never reject a pair this accepts. It cannot, because
 * IEEE rounding is monotone: every partial sum of the squares (FMA-contracted or not) is at
 * least fl(dx^2), so acceptance gives fl(dx^2) < fl(rs^2), hence dx^2 < rs^2, |fl(D)| < fl(R)
 * and |D| < R for the exact D = x_j - x_i, R = r_i + r_j (each step: if not, monotone rounding
 * would give >=). With D >= 0, x_j - r_j < x_i + r_i exactly, so the rounded corners keep
 * fl(x_j - r_j) <= fl(x_i + r_i): tile J's lower corner is at most tile I's upper one, and
 * x_j + r_j >= x_i - r_i gives the other side. The boxes are nevertheless inflated outwards by
 * 2^-19 of their largest |corner| (sim_cull_margin_f: 2 ppm, 0.4 mm at 200 m from the origin, far
 * below any gap culling relies on) as insurance should a later change compute the test from
 * differently rounded inputs (a skin distance, a cut-off); tests/test_cpu_cull.c checks, on
 * pairs at the edge of contact with radii down to 1e-3 of their coordinates, that neither the
 * inflated nor the bare boxes ever reject a touching pair. NaN bodies are ignored by
 * fminf/fmaxf and touch nothing (comparisons with NaN are false); infinite ones make their box
 * infinite. The CPU reference does the same in double (margin 2^-48).
 *
 * Periodic axes. Bodies are wrapped into the box every step but re-sorted only now and then, so a
 * tile whose bodies sit at a face keeps, after some of them crossed it, bodies on both sides:
 * a box of their wrapped coordinates would span the whole period and meet every tile of its slab
 * (and its super-tile every super-tile). So on a periodic axis a tile's box is made of the images
 * of its bodies nearest its anchor, its first body (x - L k, k = sim_period_count: the tile stays
 * a compact blob), and a super-tile's box of its tiles' boxes moved by whole periods to the images
 * nearest its first tile's anchor. Such a box may reach past the faces; it holds every body's
 * interval up to a whole number of periods, and every test of boxes on a periodic axis goes
 * through their centres' minimum image (sim_period_meets: which image a box is kept at does not
 * matter), so the exactness argument above holds, with the rounding of the images (a few ulp of
 * L) inside SIM_PERIOD_SLACK. A tile box with some body at another image than its own coordinate
 * has w = 1 in lo (else 0): the culled sweep then takes each pair's own image
 * (pair_kernels.cu's pair_shift). */
#ifndef SIM_CULL_H
#define SIM_CULL_H

#include "nbsim/maps.h"
#include "physics/physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per side of a culling block: a block of 16 x 16 = 256 threads covers 16 x 16 items
 * (tile pairs, or super-tile pairs in the top pass of the two-level cull), one per thread. */
#define SIM_CULL_GROUP 16u
/* Tiles per super-tile in the two-level cull (so a surviving super-tile pair is one block of
 * SIM_CULL_GROUP^2 tile-pair tests). */
#define SIM_CULL_SUPER 16u
/* Above this many pair tiles the cull is hierarchical by default (config cull_levels = 0): the
 * one-level pass tests T2(tiles) tile pairs, T2(1024) / 256 = 2k blocks of 256 threads (a few
 * microseconds); the two-level pass tests T2(tiles / 16) super pairs, then 256 tile pairs per
 * surviving super pair, ~O(N). scripts/gpu_cull.sh measures the crossover. */
#define SIM_CULL_FLAT_MAX_TILES 1024u
/* Re-sort every this many steps by default (config sort_every = 0), and earlier when the number
 * of interacting tile pairs (or the cut-off's tile triples) has grown by SIM_CULL_REGROW since
 * the last sort (checked once per frame; the stepper decides, sim/step/stepper.h). A gas at
 * 1 m/s moves 0.2 mm per default step, so boxes grow by ~1 cm in 50 steps against tiles ~8 m
 * wide; scripts/gpu_cull.sh measures K = 1, 5, 20, 100. */
#define SIM_CULL_SORT_EVERY 50
#define SIM_CULL_REGROW 1.25
/* Morton key: 10 bits per axis of the cell of each centre in [-box_half, box_half]^3. */
#define SIM_MORTON_BITS 10u
#define SIM_MORTON_CELLS (1u << SIM_MORTON_BITS)
#define SIM_MORTON_KEY_BITS (3u * SIM_MORTON_BITS)

/* Axis-aligned box of a tile (or super-tile), radii included, inflated by the rounding margin.
 * xyz are the corners [m]; lo.w: 1 for a tile box of images on a periodic axis (see the top), else
 * 0; hi.w unused (16-byte vectors: two LDG.128 per box). An empty box has lo = +inf, hi = -inf
 * and overlaps nothing. */
typedef struct {
    sim_vec4f lo, hi;
} sim_cull_box;

/* The insurance margin of a float box corner pair (lo, hi) on one axis (see the top of this
 * file): 2^-19 max(|lo|, |hi|), plus a floor far below any physical length. */
SIM_HD float sim_cull_margin_f(float lo, float hi) {
    const float m = fmaxf(fabsf(lo), fabsf(hi));
    return m * 0x1p-19f + 1e-30f;
}

/* The two boxes overlap on every axis (closed intervals; NaN compares false). */
SIM_HD int sim_cull_overlap(const sim_cull_box *a, const sim_cull_box *b) {
    return a->lo.x <= b->hi.x && b->lo.x <= a->hi.x && a->lo.y <= b->hi.y && b->lo.y <= a->hi.y &&
           a->lo.z <= b->hi.z && b->lo.z <= a->hi.z;
}

/* Whether some axis is periodic (kernels get the periods by value, all 0 in a box with walls
 * only). A kernel that keeps this flag and passes &periods or NULL by it, rather than the pointer
 * below, keeps the periods in registers: the pointer made them a stack frame, 6 loads per
 * candidate (the lists' build and drift). */
SIM_HD int sim_period_any_f(const sim_period_f *per) {
    return per->len[0] > 0.0f || per->len[1] > 0.0f || per->len[2] > 0.0f;
}

/* per when some axis is periodic, else NULL: what the _p tests below take. */
SIM_HD const sim_period_f *sim_period_or_null(const sim_period_f *per) {
    return sim_period_any_f(per) ? per : NULL;
}

/* The same in a box with periodic axes (per: its periods; NULL, none): on a periodic axis the
 * boxes meet through any image, across a face, an edge or a corner (sim_period_meets_f). */
SIM_HD int sim_cull_overlap_p(const sim_cull_box *a, const sim_cull_box *b,
                              const sim_period_f *per) {
    if (per == NULL) {
        return sim_cull_overlap(a, b);
    }
    return sim_period_meets_f(a->lo.x, a->hi.x, b->lo.x, b->hi.x, per->len[0], per->inv[0]) &&
           sim_period_meets_f(a->lo.y, a->hi.y, b->lo.y, b->hi.y, per->len[1], per->inv[1]) &&
           sim_period_meets_f(a->lo.z, a->hi.z, b->lo.z, b->hi.z, per->len[2], per->inv[2]);
}

/* 10 bits spread to every third bit (bit k -> bit 3k). */
SIM_HD uint32_t sim_morton_spread(uint32_t v) {
    v &= 0x3ffu;
    v = (v | (v << 16)) & 0x030000ffu;
    v = (v | (v << 8)) & 0x0300f00fu;
    v = (v | (v << 4)) & 0x030c30c3u;
    v = (v | (v << 2)) & 0x09249249u;
    return v;
}

/* Cell index of coordinate x [m] along one axis: (x + box_half) * scale, clamped to the grid
 * (bodies outside the box, NaN -> cell 0). scale = SIM_MORTON_CELLS / (2 box_half) [1/m]. */
SIM_HD uint32_t sim_morton_cell(float x, float box_half, float scale) {
    const float c = (x + box_half) * scale;
    return c >= 0.0f ? (c < (float)(SIM_MORTON_CELLS - 1u) ? (uint32_t)c : SIM_MORTON_CELLS - 1u)
                     : 0u;
}

/* 30-bit Morton key of a centre: x in bits 0, 3, ..., y in 1, 4, ..., z in 2, 5, .... */
SIM_HD uint32_t sim_morton_key(float x, float y, float z, float box_half, float scale) {
    return sim_morton_spread(sim_morton_cell(x, box_half, scale)) |
           (sim_morton_spread(sim_morton_cell(y, box_half, scale)) << 1) |
           (sim_morton_spread(sim_morton_cell(z, box_half, scale)) << 2);
}

/* The item pair (tiles, or super-tiles in a top pass) that thread (tx, ty) of a culling block
 * owns when the block covers `group` = (G_I, G_J): (I, J) = (G_I * 16 + ty, G_J * 16 + tx).
 * Returns 0 outside the simplex (J > I: the upper half of a diagonal block) or past `count`
 * items. Every culling pass, map-placed or list-driven, CPU or GPU, assigns threads this way. */
SIM_HD int sim_cull_thread_pair(sim_tile2 group, uint32_t tx, uint32_t ty, uint32_t count,
                                sim_tile2 *out) {
    const uint32_t i = group.i * SIM_CULL_GROUP + ty, j = group.j * SIM_CULL_GROUP + tx;
    if (j > i || i >= count) {
        return 0;
    }
    out->i = i;
    out->j = j;
    return 1;
}

/* Pair number k of the whole simplex in row order (I = the exact ltm row of k): what a
 * list-driven pass sweeps instead of its list when the list overflowed. k < T2(65535). */
SIM_HD sim_tile2 sim_cull_simplex_pair(uint32_t k) {
    sim_tile2 t;
    uint32_t first;
    t.i = sim_map_ltm_row(k, &first);
    t.j = k - first;
    return t;
}

#ifdef __cplusplus
}
#endif

#endif /* SIM_CULL_H */
