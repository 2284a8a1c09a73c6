/* SPDX-License-Identifier: MIT
 * nbsim tests — what the tests of the ATM kernels run under tests/cuda_emulation.h share
 * (test_triplet_kernel_emu.cc, test_tcull_emu.cc): a launch over every block of a grid, scenes of
 * float bodies, the double reference over all triples and the error of float forces against it.
 * Header-only (static functions), C++17; include after the kernels' sources and ensure.h. */
#ifndef NBSIM_TEST_ATM_EMU_H
#define NBSIM_TEST_ATM_EMU_H

#include <math.h>
#include <string.h>

#include <functional>
#include <vector>

#include "test_rng.h"

/* Every block of a grid, in order, each running f() with the next schedule from *seed; false on
 * a deadlock. */
static bool emu_launch(dim3 grid, dim3 block, uint64_t *seed, const std::function<void()> &f) {
    struct holder {
        const std::function<void()> *f;
        static void body(void *p) {
            (*((holder *)p)->f)();
        }
    } h = {&f};
    for (uint32_t bz = 0; bz < grid.z; ++bz) {
        for (uint32_t by = 0; by < grid.y; ++by) {
            for (uint32_t bx = 0; bx < grid.x; ++bx) {
                if (!emu::run_block(make_uint3(bx, by, bz), grid, block, holder::body, &h,
                                    ++*seed)) {
                    ENSURE_MSG(0, "deadlock in block (%u, %u, %u)", bx, by, bz);
                    return false;
                }
            }
        }
    }
    return true;
}

/* Bodies as the kernels see them (float), with the ATM strength and cut-off (0: none), and a
 * periodic box (periodic: the axes' bits, 0: none; half: its half-width [m]). */
struct scene {
    std::vector<sim_vec4f> pos;
    double nu, cutoff;
    int periodic = 0;
    double half = 0.0;
};

/* The periods of s's box (physics.h). */
static sim_period_d scene_period(const scene &s) {
    sim_period_d per;
    for (int a = 0; a < 3; ++a) {
        const bool on = (s.periodic >> a) & 1;
        per.len[a] = on ? 2.0 * s.half : 0.0;
        per.inv[a] = on ? 1.0 / (2.0 * s.half) : 0.0;
    }
    return per;
}

/* n bodies of radius 0.5 m on a cubic lattice of pitch `spacing` [m], jittered by +-0.1 m
 * (drawn from *seed), in lattice order; exact floats. */
static std::vector<sim_vec4f> jittered_lattice(uint32_t n, double spacing, uint64_t *seed) {
    std::vector<sim_vec4f> pos;
    uint32_t m = 1;
    while (m * m * m < n) {
        ++m;
    }
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t x = i % m, y = i / m % m, z = i / (m * m);
        pos.push_back(sim_vec4f{(float)(x * spacing + test_rnd(seed, -0.1, 0.1)),
                                (float)(y * spacing + test_rnd(seed, -0.1, 0.1)),
                                (float)(z * spacing + test_rnd(seed, -0.1, 0.1)), 0.5f});
    }
    return pos;
}

static sim_vec4d to_d(sim_vec4f v) {
    return sim_vec4d{v.x, v.y, v.z, v.w};
}

/* Forces and energy over all triples i > j > k (or, with `block` > 0, only inside consecutive
 * blocks of that many bodies), double. */
static double atm_reference(const scene &s, std::vector<sim_vec3d> &f, uint32_t block = 0) {
    sim_physics ph;
    memset(&ph, 0, sizeof ph);
    ph.atm.atm_nu = s.nu;
    ph.atm.atm_cutoff = s.cutoff;
    ph.box.periodic = s.periodic;
    ph.box.box_half = s.half;
    ph.box.period = scene_period(s);
    const uint32_t n = (uint32_t)s.pos.size();
    f.assign(n, sim_vec3d{0.0, 0.0, 0.0});
    double e = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t lo = block ? i / block * block : 0;
        for (uint32_t j = lo; j < i; ++j) {
            for (uint32_t k = lo; k < j; ++k) {
                sim_vec3d a, b, c;
                sim_atm_forces_d(to_d(s.pos[i]), to_d(s.pos[j]), to_d(s.pos[k]), &ph, &a, &b, &c,
                                 &e);
                f[i].x += a.x, f[i].y += a.y, f[i].z += a.z;
                f[j].x += b.x, f[j].y += b.y, f[j].z += b.z;
                f[k].x += c.x, f[k].y += c.y, f[k].z += c.z;
            }
        }
    }
    return e;
}

/* Float forces g against the reference, as test_gpu_backend.c measures them: rel = ||g - ref|| /
 * ||ref||; worst = max_i |g_i - ref_i| / (|ref_i| + 0.1 rms(ref)), infinite when a force is not
 * finite; ref_l2 = ||ref||. */
struct force_error {
    double rel, worst, ref_l2;
};

static force_error force_error_of(const std::vector<sim_vec4f> &g,
                                  const std::vector<sim_vec3d> &ref) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double dx = g[i].x - ref[i].x, dy = g[i].y - ref[i].y, dz = g[i].z - ref[i].z;
        num += dx * dx + dy * dy + dz * dz;
        den += ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z;
    }
    const double rms = sqrt(den / (double)(ref.empty() ? 1 : ref.size()));
    double worst = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double dx = g[i].x - ref[i].x, dy = g[i].y - ref[i].y, dz = g[i].z - ref[i].z;
        const double r = sqrt(ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z);
        const double e = sqrt(dx * dx + dy * dy + dz * dz) / (r + 0.1 * rms + 1e-300);
        worst = isfinite(g[i].x + g[i].y + g[i].z) ? fmax(worst, e) : INFINITY;
    }
    return force_error{den > 0.0 ? sqrt(num / den) : sqrt(num), worst, sqrt(den)};
}

#endif /* NBSIM_TEST_ATM_EMU_H */
