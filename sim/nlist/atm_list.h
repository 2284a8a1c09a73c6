/* SPDX-License-Identifier: MIT
 * nbsim — neighbour lists for the ATM cut-off, the parts the CPU reference (cpu_atm_list.c) and
 * the CUDA kernels (atm_list_kernels.cu) share (host + device, C11 and CUDA): what a list holds,
 * why the triples swept from it are exactly those the tile-triple sweep counts, the rounding
 * margins of the build test.
 *
 * What a list is. With the cut-off R (params.atm_cutoff) and a skin s >= 0, the list of body i
 * holds, at the last build, the bodies j with |x_i - x_j| < R + s (radii play no part: the
 * cut-off is on centre distances). A half list keeps only j < i (slots), a full list every j != i.
 * Layout: nlist.h's, slot-major nbr[k * stride + i], stride = N rounded up to 32, count[i] the
 * neighbours found (more than cap: the list is incomplete and must be grown before a sweep).
 *
 * Which triples. A triple counts when each of its three distances is within R (physics.h), as
 * sim_atm_forces_d (CPU) and the pair terms of sim_atm_pair_f (GPU) decide it. The sweep takes
 * from body i's half list every unordered pair {j, k} (j != k, both < i): each triple once, as
 * (i, max(j, k), min(j, k)), the slot order the tile-triple sweep evaluates it in (its tiles
 * I >= J >= K and bodies i > j > k where tiles coincide), so the CPU reference evaluates every
 * triple with the very same arguments as cpu_backend.c's tile sweep when both sweep the same
 * (sorted) positions; then the cut-off rule itself, unchanged, decides. A full list instead
 * evaluates each triple from each of its three bodies, adding only that body's force (no
 * atomics; three times the work).
 *
 * Why it is exact. A counted triple has its two sides at i within R (up to rounding: below).
 * Between rebuilds every body stays within s/2 of its build position (the contacts' displacement
 * check, nlist.h), so |x_i^b - x_j^b| <= |x_i - x_j| + s <= R + s: j was listed. With s = 0 the
 * lists are exact only at the positions they were built from. Periodic axes (the CPU reference,
 * cpu_atm_list.c): every distance above is a minimum image - a metric on the torus, so the same
 * inequality holds - and a triple counted by sim_atm_forces_d (a and b minimum images, c closing
 * the triangle: |c| is an image of x_i - x_k, so its minimum image is no longer) has both of
 * its bodies j, k within R of i by minimum image; a body wrapped across a face has not moved.
 *
 * Rounding. Double: sim_atm_forces_d takes its third side as c = -(a + b), within 3u R per axis
 * of x1 - x3 (triplet_cull.h), so a counted triple's sides are at most R (1 + 17u) apart in
 * exact arithmetic; the build keeps fl(d.d) < (R + s)^2 (1 + 2^-40), far beyond. Float: the GPU
 * counts a pair when fl(d.d) <= a2_max (sim_atm_a2_max_f of the float R^2), so |d| <= sqrt(a2_max)
 * (1 + 2u); the build compares fl(d.d) with fl(sqrt(a2_max) + s)^2 (1 + 2^-18) (nlist.h's factor,
 * 64 u, far above the few u of both roundings and of the displacement test). The tile boxes that
 * prune the GPU build (atm_list_kernels.cu) compare their distance (triplet_cull.h's FMAs; never
 * more than the distance of any two of their bodies) with sim_tcull_limit_f of that reach:
 * triplet_cull.h's argument, unchanged, makes the box test keep every pair the body test keeps.
 *
 * What the lists cost: 4 B per entry; the `triplets` scene (pitch 1.1 m) at R = 3 m holds ~85
 * bodies within R of each body, ~43 in a half list (more with the skin). */
#ifndef SIM_ATM_LIST_H
#define SIM_ATM_LIST_H

#include <math.h>

#include "nlist/nlist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The build's rounding factors on the squared reach (float, double): above. */
#define SIM_ATM_LIST_REACH2_F (1.0f + 0x1p-18f)
#define SIM_ATM_LIST_REACH2_D (1.0 + 0x1p-40)

/* Entries per body a GPU list starts with: the `triplets` scene's ~43 half-list neighbours within
 * 3 m plus a skin; the drivers grow it to what a build needs. */
#define SIM_ATM_LIST_INITIAL_CAP 64u

/* Triples a body's half list yields, for the stepper's first guess of a list sweep's rate: the
 * `triplets` scene's ~43 neighbours make ~900 pairs of them (a gas far fewer). */
#define SIM_ATM_LIST_GUESS_TRIPLES 1000.0

/* Bodies within the reach R + s of a body (sim_atm_list_neighbours: at the density of the
 * bodies' bounding box), above which the cut-off keeps its tile triples
 * (sim_backend_atm_listing): a half list of k/2 entries makes
 * k^2/8 pairs of entries to visit per body, so the lists' lead shrinks as k grows - on a GPU,
 * the `triplets` scene at R = 3 m: 3.3x at k ~ 74 (skin 0.1), 2.0x at ~94, 1.25x at ~124
 * (bench/results/nvidia-h100/atm_list.md), so they cross near 150 - and a float sum of a body's
 * k^2/2 triples loses what the tile triples' blocked sums keep (R = 100 m over 1,500 bodies:
 * 2e-4 of the force on a GPU, against 1e-5). */
#define SIM_ATM_LIST_MAX_NEIGHBOURS 150.0

/* The squared reach [m^2] of a float build for a2_max (the GPU's squared cut-off) and skin s. */
SIM_HD float sim_atm_list_reach2_f(float a2_max, float skin) {
    const float reach = sqrtf(a2_max) + skin;
    return reach * reach * SIM_ATM_LIST_REACH2_F;
}

/* The same for the double reference, cut-off R and skin s [m]. */
SIM_HD double sim_atm_list_reach2_d(double cutoff, double skin) {
    const double reach = cutoff + skin;
    return reach * reach * SIM_ATM_LIST_REACH2_D;
}

/* Whether b belongs in a's list: fl(d.d) < reach2 (NaN: no). */
SIM_HD int sim_atm_list_near_f(sim_vec4f a, sim_vec4f b, float reach2) {
    const float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    return dx * dx + dy * dy + dz * dz < reach2;
}

SIM_HD int sim_atm_list_near_d(sim_vec4d a, sim_vec4d b, double reach2) {
    const double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    return dx * dx + dy * dy + dz * dz < reach2;
}

/* Whether the triple (p1, p2, p3) is within the cut-off (cut2 = R^2 > 0) as sim_atm_forces_d
 * decides it, operation for operation (a = x2 - x1, b = x3 - x2, c = -(a + b)): the counts of
 * the tests and of the reference sweep. The forces themselves always come from sim_atm_forces_d. */
SIM_HD int sim_atm_list_inside_d(sim_vec4d p1, sim_vec4d p2, sim_vec4d p3, double cut2) {
    const double ax = p2.x - p1.x, ay = p2.y - p1.y, az = p2.z - p1.z;
    const double bx = p3.x - p2.x, by = p3.y - p2.y, bz = p3.z - p2.z;
    const double cx = -(ax + bx), cy = -(ay + by), cz = -(az + bz);
    const double A = ax * ax + ay * ay + az * az;
    const double B = bx * bx + by * by + bz * bz;
    const double C = cx * cx + cy * cy + cz * cz;
    return A <= cut2 && B <= cut2 && C <= cut2;
}

#ifdef __cplusplus
}
#endif

#endif /* SIM_ATM_LIST_H */
