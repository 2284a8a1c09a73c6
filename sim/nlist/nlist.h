/* SPDX-License-Identifier: MIT
 * nbsim — per-body neighbour lists with a skin, the parts the CPU reference and the CUDA kernels
 * share (host + device, C11 and CUDA): the layout, the list and rebuild tests with their rounding
 * margins, and the skin chosen when the user leaves it to us.
 *
 * What a list is. With skin s > 0 (params.skin, --skin) the culled contacts keep, per body i,
 * the bodies j with |x_i - x_j| < r_i + r_j + s at the last build, and each step tests only
 * those. The lists are built from the culled tile pairs (cull.h), the tile boxes inflated by s/2
 * per body, so the map still places the culling pass; it runs only when the lists are rebuilt.
 * On one rank both backends build them from a grid of cells one reach wide instead
 * (cell_grid.h: ~30 tests per body against ~900; the same lists as sets).
 *
 * Why it is exact. A rebuild happens when some body has moved more than s/2 since the last
 * build (tested after the drift, before the forces), and always after a re-sort, new bodies, new
 * parameters, a list grown or a step rolled back (the stepper's SIM_STEP_REBUILD). Between
 * rebuilds every body is within s/2 of where it was built, so for two bodies touching now,
 *     |x_i^b - x_j^b| <= |x_i - x_j| + |x_i - x_i^b| + |x_j - x_j^b| < r_i + r_j + s:
 * the pair was listed. The same bound keeps the build's tile pairs a superset of the touching
 * tile pairs until the next rebuild: a box spans [x^b - r - s/2, x^b + r + s/2] of its bodies,
 * which holds [x - r, x + r] while they move less than s/2. That is the fallback: a body with
 * more neighbours than its list holds makes every step until the next rebuild sweep those tile
 * pairs instead (exact, as a culled list that overflowed does today), and the list grows by the
 * stepper's one rule at the frame's end (a grown list is rebuilt). Built from the grid, the
 * fallback walks the build's cells around each body: a pair touching now was within reach at
 * the build, so in adjacent cells.
 *
 * Float rounding (the GPU; the CPU does the same in double with 2^-40). Positions and radii are
 * exact floats; each test rounds: a touching test fl(|dx|^2) < fl((r_i + r_j)^2) passed means
 * |x_i - x_j| < (r_i + r_j)(1 + c u) for u = 2^-24 and a small c (< 4: a correctly rounded
 * subtraction per axis, three products, two sums), and a displacement test passed means
 * |x - x^b| <= (s/2)(1 + c u). So the build must keep every pair with exact distance below
 * (r_i + r_j + s)(1 + 4u): it compares fl(d^2) with fl(R^2)(1 + 2^-18), 2^-18 = 64 u, far above
 * the few u of both roundings; box half-widths and the sweep's tile masks use (r + s/2)(1 + 2^-17)
 * and r (1 + 2^-17), and the boxes keep cull.h's outward margin of 2^-19 of their corners. A list
 * may so hold a pair a few ppm farther than r_i + r_j + s: harmless, it is tested anyway.
 *
 * Layout (GPU): slot-major, nbr[k * stride + i] is the k-th neighbour of body slot i, stride = N
 * rounded up to 32, so a warp reading the k-th neighbour of 32 consecutive bodies reads 128
 * adjacent bytes; count[i] the neighbours found at the last build (more than cap: overflowed).
 * Indices are slots, never distances: periodic boundaries only change the sweep's difference.
 * Half lists keep for each pair only j < i in i's list (each pair once: atomics on j); full lists
 * both directions (each body sums its own force, no atomics). With several ranks each rank lists
 * the pairs of its tile rows (a half list: the bodies of its rows; a full one: both ends of the
 * pairs it owns), so the forces of all ranks add up to every pair once. */
#ifndef SIM_NLIST_H
#define SIM_NLIST_H

#include "nbsim/maps.h"
#include "nbsim/state.h"
#include "physics/physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entries per body a list starts with (tuning.nlist_capacity overrides it; it then grows by the
 * stepper's rule): 16 holds a dense pack's ~12 neighbours within a skin of 0.1 diameter. */
#define SIM_NLIST_INITIAL_CAP 16u
/* The automatic skin (sim_nlist_auto_skin): what the fastest body covers in this many steps
 * (twice: it may move half the skin), under gravity too, at least SIM_NLIST_SKIN_MIN and at
 * most SIM_NLIST_SKIN_MAX of the smallest diameter. 20 steps amortise a rebuild (about a
 * culled tile sweep) to a few per cent of a step; the cap keeps a dense pack's lists short (a
 * skin of 0.25 d holds ~13 neighbours, 0.05 d ~7). Where even the cap would be crossed within
 * SIM_NLIST_FAST_STEPS steps, the lists are rebuilt at (nearly) every step whatever the skin,
 * and the thinnest skin makes those rebuilds cheapest (fewer tile pairs, shorter lists): the
 * lattice scene at its step of 0.5 s is such a case. */
#define SIM_NLIST_AUTO_STEPS 20.0
#define SIM_NLIST_FAST_STEPS 4.0
#define SIM_NLIST_SKIN_MIN 0.05
#define SIM_NLIST_SKIN_MAX 0.25
/* Pair checks a list entry costs, for the stepper's first guess of a list sweep's rate. */
#define SIM_NLIST_GUESS_ENTRIES 16.0

/* The rounding factors above (float, double). */
#define SIM_NLIST_REACH2_F (1.0f + 0x1p-18f)
#define SIM_NLIST_WIDTH_F (1.0f + 0x1p-17f)
#define SIM_NLIST_REACH2_D (1.0 + 0x1p-40)
#define SIM_NLIST_WIDTH_D (1.0 + 0x1p-39)
/* On a periodic axis a separation's image is rounded at the magnitude of the period: x_j - x_i
 * is up to L across a face (half an ulp of L, ~L 2^-24 per axis, where nearby bodies between
 * walls subtract exactly), and so is a displacement across a face (p - ref ~ L). The build's
 * separation, both displacements and the sweep's separation each carry it (4 x sqrt(3) x L 2^-23
 * at most, the unwrapped drift included): a periodic build reaches SIM_NLIST_IMAGE_SLACK_F L (the
 * longest period) further, 3.5 times that, or a pair that touches could be missing from the lists
 * (the first GPU run: one pair in 1000 steps of a fast gas crowded on the faces). In double the
 * same errors are ~1e-16 L, well inside SIM_NLIST_REACH2_D. */
#ifndef SIM_NLIST_IMAGE_SLACK_F /* a test may take it away to see what it covers */
#define SIM_NLIST_IMAGE_SLACK_F 0x1p-19f
#endif

/* Entries between neighbour k and k + 1 of one body: N rounded up to whole warps. */
SIM_HD uint32_t sim_nlist_stride(uint32_t n) {
    return (n + 31u) / 32u * 32u;
}

/* Entries per body the lists are first allocated with: tuning.nlist_capacity, or 0 for
 * SIM_NLIST_INITIAL_CAP. */
SIM_HD uint32_t sim_nlist_first_cap(uint32_t nlist_capacity) {
    return nlist_capacity ? nlist_capacity : SIM_NLIST_INITIAL_CAP;
}

/* Whether j belongs in i's list: |x_i - x_j| < r_i + r_j + skin, with the build's margin. */
SIM_HD int sim_nlist_near_f(sim_vec4f a, sim_vec4f b, float skin) {
    const float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    const float reach = a.w + b.w + skin;
    return dx * dx + dy * dy + dz * dz < reach * reach * SIM_NLIST_REACH2_F;
}

SIM_HD int sim_nlist_near_d(sim_vec4d a, sim_vec4d b, double skin) {
    const double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    const double reach = a.w + b.w + skin;
    return dx * dx + dy * dy + dz * dz < reach * reach * SIM_NLIST_REACH2_D;
}

/* Half the width of a body's interval in the boxes and masks: radius + pad (s/2 at a build, 0
 * when a sweep tests touching), widened by the rounding factor. */
SIM_HD float sim_nlist_width_f(float radius, float pad) {
    return (radius + pad) * SIM_NLIST_WIDTH_F;
}

SIM_HD double sim_nlist_width_d(double radius, double pad) {
    return (radius + pad) * SIM_NLIST_WIDTH_D;
}

/* Whether a body at p has moved more than half the skin (h2 = (s/2)^2) from ref: NaN counts as
 * moved (a rebuild is never wrong). */
SIM_HD int sim_nlist_moved_f(sim_vec4f p, sim_vec4f ref, float h2) {
    const float dx = p.x - ref.x, dy = p.y - ref.y, dz = p.z - ref.z;
    return !(dx * dx + dy * dy + dz * dz <= h2);
}

SIM_HD int sim_nlist_moved_d(sim_vec4d p, sim_vec4d ref, double h2) {
    const double dx = p.x - ref.x, dy = p.y - ref.y, dz = p.z - ref.z;
    return !(dx * dx + dy * dy + dz * dz <= h2);
}

/* The same in a box with periodic axes (per: its periods; NULL, none): separations and
 * displacements are minimum images, so a body wrapped across a face has not moved a period. */
SIM_HD int sim_nlist_near_pf(sim_vec4f a, sim_vec4f b, float skin, const sim_period_f *per) {
    float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    float reach = a.w + b.w + skin;
    if (per != NULL) {
        sim_min_image_in_f(&dx, &dy, &dz, per);
        reach += SIM_NLIST_IMAGE_SLACK_F * fmaxf(per->len[0], fmaxf(per->len[1], per->len[2]));
    }
    return dx * dx + dy * dy + dz * dz < reach * reach * SIM_NLIST_REACH2_F;
}

SIM_HD int sim_nlist_near_pd(sim_vec4d a, sim_vec4d b, double skin, const sim_period_d *per) {
    double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    if (per != NULL) {
        sim_min_image_in_d(&dx, &dy, &dz, per);
    }
    const double reach = a.w + b.w + skin;
    return dx * dx + dy * dy + dz * dz < reach * reach * SIM_NLIST_REACH2_D;
}

SIM_HD int sim_nlist_moved_pf(sim_vec4f p, sim_vec4f ref, float h2, const sim_period_f *per) {
    float dx = p.x - ref.x, dy = p.y - ref.y, dz = p.z - ref.z;
    if (per != NULL) {
        sim_min_image_in_f(&dx, &dy, &dz, per);
    }
    return !(dx * dx + dy * dy + dz * dz <= h2);
}

SIM_HD int sim_nlist_moved_pd(sim_vec4d p, sim_vec4d ref, double h2, const sim_period_d *per) {
    double dx = p.x - ref.x, dy = p.y - ref.y, dz = p.z - ref.z;
    if (per != NULL) {
        sim_min_image_in_d(&dx, &dy, &dz, per);
    }
    return !(dx * dx + dy * dy + dz * dz <= h2);
}

/* The skin [m] for these bodies and step dt [s]: params.skin when set (0: no lists), else
 * sim_nlist_auto_skin. */
double sim_nlist_skin(const sim_params *p, const sim_state *s, double dt);
/* The bodies within the ATM cut-off's list reach (params.atm_cutoff + skin) of a body, at the
 * density of the bodies' bounding box (each side at least the reach, at most the box): what
 * decides whether that cut-off sweeps lists (SIM_ATM_LIST_MAX_NEIGHBOURS, nlist/atm_list.h);
 * 0 without a cut-off. The mean density of the walls' box would miss a cluster in a large box
 * (the `triplets` lattice fills an eighth of its box). */
double sim_atm_list_neighbours(const sim_params *p, const sim_state *s, double skin);
/* The automatic skin: 2 K v dt with K = SIM_NLIST_AUTO_STEPS and v the fastest body's speed plus
 * what gravity adds in K steps, clamped to [SIM_NLIST_SKIN_MIN, SIM_NLIST_SKIN_MAX] x the smallest
 * diameter; the minimum when the maximum would last fewer than SIM_NLIST_FAST_STEPS steps; 0
 * without bodies. */
double sim_nlist_auto_skin(const sim_params *p, const sim_state *s, double dt);

/* Lists, or the contacts swept straight from the cells (the CUDA backend on one rank, frictionless,
 * where the grid fits: grid_build.cuh). Lists rebuilt at (nearly) every step cost a rebuild and a
 * sweep over the lists each step; the cells cost the binning and one walk a step that finds the
 * contacts and sums their forces, and no lists (four kernels a step against seven: each pair
 * once, the step's second half kick runs in the next step's drift). With the cells the drift still
 * checks the displacements against the positions a build would have kept, so the frame's rebuild
 * count is what the lists would have had. Under SIM_NLIST_DEFAULT the counts decide, over at
 * least SIM_NLIST_CADENCE_STEPS steps: the lists give way to the cells when at least
 * SIM_NLIST_DIRECT_AT of the steps rebuilt, and come back when fewer than SIM_NLIST_LISTS_BELOW
 * did. Measured (falling lattice of 262,144, whole step,
 * bench/results/nvidia-h100/cells_swept.md): full lists rebuilt at every step took ~10 % longer
 * than the cells, the rebuild ~60 % of their step. Lists at a rebuild rate r cost about
 * t_lists - (1 - r) t_rebuild, the cells' cost does not depend on r: the two meet near r = 0.85,
 * and the band around it keeps a scene there from switching back and forth (a switch to the
 * lists costs a build). The cells have since got faster (a little over half the lists' step,
 * bench/results/nvidia-h100/cells_once.md), which moves the meeting point down to r ~ 0.3; the
 * thresholds stay where they were, as no scene between was timed. */
#define SIM_NLIST_DIRECT_AT 0.9
#define SIM_NLIST_LISTS_BELOW 0.8
/* 10: one frame of nbsim's default 10 steps; a scene that settles goes back to the lists
 * within a frame of it. */
#define SIM_NLIST_CADENCE_STEPS 10u

typedef struct {
    uint32_t rebuilds, steps; /* since the last decision */
    int direct;               /* the cells now */
} sim_nlist_cadence;

/* Adds a frame's rebuilds and steps; returns the mode of the next frame (1: the cells) and keeps
 * it in c->direct. Starts (zeroed) with the lists. */
int sim_nlist_cadence_next(sim_nlist_cadence *c, uint32_t rebuilds, uint32_t steps);

#ifdef __cplusplus
}
#endif

#endif /* SIM_NLIST_H */
