/* SPDX-License-Identifier: MIT
 * nbsim tests — what the device programs of the ATM cut-off lists share (test_gpu_atm_list.cu,
 * atm_list_timing.cu): a built-in scene's bodies as the CUDA backend sweeps them (float, sorted
 * along the Morton curve, cull.h's key) and the same numbers in double for the CPU reference.
 * Header-only (static functions), C++. */
#ifndef NBSIM_TEST_ATM_LIST_UTIL_H
#define NBSIM_TEST_ATM_LIST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "cull/cull.h"
#include "nbsim/scene.h"

struct atm_bodies {
    std::vector<sim_vec4f> pos; /* slot order: sorted along the Morton curve */
    std::vector<sim_vec4d> pos_d;
    sim_params p;
    sim_state s; /* the scene as built (user order) */
};

/* The built-in scene `kind` of n bodies with triplets on and the cut-off R [m]; exits 1 when the
 * scene cannot be built. */
static atm_bodies atm_bodies_builtin(const char *kind, uint32_t n, double cutoff, uint64_t seed) {
    atm_bodies b;
    b.p = sim_params_default();
    sim_error err;
    if (sim_scene_builtin(kind, n, seed, &b.p, &b.s, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    b.p.triplets = 1;
    b.p.atm_cutoff = cutoff;
    b.p.atm_nu = b.p.atm_nu != 0.0 ? b.p.atm_nu : 0.5;
    const float half = (float)b.p.box_half, scale = (float)SIM_MORTON_CELLS / (2.0f * half);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) {
        order[i] = i;
    }
    std::vector<uint32_t> key(n);
    for (uint32_t i = 0; i < n; ++i) {
        key[i] = sim_morton_key((float)b.s.pos[i].x, (float)b.s.pos[i].y, (float)b.s.pos[i].z,
                                half, scale);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t c) { return key[a] < key[c]; });
    for (uint32_t k : order) {
        const sim_vec4d &q = b.s.pos[k];
        const sim_vec4f f = {(float)q.x, (float)q.y, (float)q.z, (float)q.w};
        b.pos.push_back(f);
        b.pos_d.push_back(sim_vec4d{f.x, f.y, f.z, f.w});
    }
    return b;
}

#endif /* NBSIM_TEST_ATM_LIST_UTIL_H */
