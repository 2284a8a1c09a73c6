/* SPDX-License-Identifier: MIT
 * nbsim — the ATM triplet kernel driven directly, without a backend: its two tile sources, a
 * thread map and a list of tile triples in device memory (sim_cuda_triplet_forces_list, what a
 * culled cut-off will launch; shuffled, with entries that must be skipped), both against the
 * double reference over all triples, with and without a cut-off, and the energy pass. Exits 77
 * (skipped) without a CUDA device. */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "ensure.h"
#include "cuda/triplet_kernels.h"
extern "C" {
#include "test_gpu_util.h"
}

#define CUDA_OK(expr)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (expr);                                                                   \
        ENSURE_MSG(e_ == cudaSuccess, "%s: %s", #expr, cudaGetErrorString(e_));                    \
    } while (0)

/* Tolerances as in test_gpu_backend.c (forces: L2 1e-5, per body 1e-4 with a 0.1 rms floor;
 * ATM energy 1e-4). */
#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
#define TOL_E 1e-4

struct streams {
    sim_gpu_streams s;
    streams() {
        CUDA_OK(cudaStreamCreate(&s.main));
        CUDA_OK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
        for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
            CUDA_OK(cudaStreamCreate(&s.side[k]));
            CUDA_OK(cudaEventCreateWithFlags(&s.join[k], cudaEventDisableTiming));
        }
    }
    ~streams() {
        for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
            cudaStreamDestroy(s.side[k]);
            cudaEventDestroy(s.join[k]);
        }
        cudaEventDestroy(s.fork);
        cudaStreamDestroy(s.main);
    }
};

/* Forces on every body and the energy of all triples, double, i > j > k. */
static double reference(const sim_state *s, const sim_physics *ph, std::vector<sim_vec3d> &f) {
    f.assign(s->n, sim_vec3d{0.0, 0.0, 0.0});
    double e = 0.0;
    for (uint32_t i = 0; i < s->n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            for (uint32_t k = 0; k < j; ++k) {
                sim_vec3d a, b, c;
                sim_atm_forces_d(s->pos[i], s->pos[j], s->pos[k], ph, &a, &b, &c, &e);
                f[i].x += a.x, f[i].y += a.y, f[i].z += a.z;
                f[j].x += b.x, f[j].y += b.y, f[j].z += b.z;
                f[k].x += c.x, f[k].y += c.y, f[k].z += c.z;
            }
        }
    }
    return e;
}

static void check(const char *what, sim_vec4f *d_force, const std::vector<sim_vec3d> &ref) {
    const uint32_t n = (uint32_t)ref.size();
    std::vector<sim_vec4f> h(n);
    CUDA_OK(cudaMemcpy(h.data(), d_force, n * sizeof(sim_vec4f), cudaMemcpyDeviceToHost));
    std::vector<sim_vec3d> g(n);
    for (uint32_t i = 0; i < n; ++i) {
        g[i] = sim_vec3d{h[i].x, h[i].y, h[i].z};
    }
    const gpu_err e = gpu_compare3(g.data(), ref.data(), n, 0.1);
    printf("  %-36s F rel %.1e, worst body %.1e\n", what, e.rel_l2, e.worst);
    ENSURE_MSG(e.rel_l2 <= TOL_F_L2 && e.worst <= TOL_F_BODY, "%s: rel %.3g, body %u rel %.3g",
               what, e.rel_l2, e.worst_body, e.worst);
}

static void kernel_case(uint32_t n, double cutoff) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {n, 0.5, 1.6, 0.1, 501u + n};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_physics ph;
    memset(&ph, 0, sizeof ph);
    ph.atm.atm_nu = 1.0;
    ph.atm.atm_cutoff = cutoff;
    const sim_physics_f phf = sim_physics_to_float(&ph);
    std::vector<sim_vec3d> ref;
    const double e_ref = reference(&s0, &ph, ref);

    std::vector<sim_vec4f> h_pos(n);
    for (uint32_t i = 0; i < n; ++i) {
        h_pos[i] = sim_vec4f{(float)s0.pos[i].x, (float)s0.pos[i].y, (float)s0.pos[i].z,
                             (float)s0.pos[i].w};
    }
    sim_gpu_bodies b = {nullptr, nullptr, nullptr, n};
    double *d_energy = nullptr;
    sim_tile3 *d_list = nullptr;
    CUDA_OK(cudaMalloc(&b.pos, n * sizeof(sim_vec4f)));
    CUDA_OK(cudaMalloc(&b.force, n * sizeof(sim_vec4f)));
    CUDA_OK(cudaMalloc(&d_energy, sizeof(double)));
    CUDA_OK(cudaMemcpy(b.pos, h_pos.data(), n * sizeof(sim_vec4f), cudaMemcpyHostToDevice));
    streams st;
    char what[96];

    /* Under the rm map. */
    const uint32_t tiles = (n + SIM_TRIPLET_TILE - 1) / SIM_TRIPLET_TILE;
    sim_map_plan plan;
    ENSURE(sim_triplet_map_plan(SIM_TRIPLET_MAP_RM, tiles, &plan, &err) == SIM_OK);
    CUDA_OK(cudaMemset(b.force, 0, n * sizeof(sim_vec4f)));
    ENSURE_MSG(sim_cuda_triplet_forces(&b, &phf, &plan, nullptr, &st.s, &err) == SIM_OK, "%s",
               err.message);
    CUDA_OK(cudaStreamSynchronize(st.s.main));
    snprintf(what, sizeof what, "N=%u cutoff %g, map rm", n, cutoff);
    check(what, b.force, ref);

    /* From a list: every tile triple once, shuffled, plus two entries to skip. */
    std::vector<sim_tile3> list;
    for (uint32_t i = 0; i < tiles; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            for (uint32_t k = 0; k <= j; ++k) {
                list.push_back(sim_tile3{i, j, k});
            }
        }
    }
    uint64_t r = 12345u + n;
    for (size_t i = list.size(); i > 1; --i) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const size_t j = (size_t)((r >> 33) % i);
        const sim_tile3 t = list[i - 1];
        list[i - 1] = list[j];
        list[j] = t;
    }
    list.push_back(sim_tile3{0u, 1u, 0u});    /* not ordered */
    list.push_back(sim_tile3{tiles, 0u, 0u}); /* outside the domain */
    CUDA_OK(cudaMalloc(&d_list, list.size() * sizeof(sim_tile3)));
    CUDA_OK(
        cudaMemcpy(d_list, list.data(), list.size() * sizeof(sim_tile3), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(b.force, 0, n * sizeof(sim_vec4f)));
    ENSURE_MSG(sim_cuda_triplet_forces_list(&b, &phf, d_list, (uint32_t)list.size(), st.s.main,
                                            &err) == SIM_OK,
               "%s", err.message);
    CUDA_OK(cudaStreamSynchronize(st.s.main));
    snprintf(what, sizeof what, "N=%u cutoff %g, list of %zu", n, cutoff, list.size());
    check(what, b.force, ref);

    /* The energy pass. */
    double e_gpu = 0.0;
    CUDA_OK(cudaMemset(d_energy, 0, sizeof(double)));
    ENSURE(sim_cuda_triplet_energy(&b, &phf, d_energy, 0, 1, st.s.main, &err) == SIM_OK);
    CUDA_OK(cudaMemcpy(&e_gpu, d_energy, sizeof(double), cudaMemcpyDeviceToHost));
    printf("  %-36s E %.9g, reference %.9g\n", "", e_gpu, e_ref);
    ENSURE_NEAR(e_gpu, e_ref, TOL_E * fabs(e_ref));

    cudaFree(d_list);
    cudaFree(d_energy);
    cudaFree(b.force);
    cudaFree(b.pos);
    sim_state_free(&s0);
}

static void test_map_and_list_vs_reference(void) {
    kernel_case(100, 0.0);
    kernel_case(257, 0.0);
    kernel_case(257, 2.9);
}

static const ensure_test tests[] = {
    {"map_and_list_vs_reference", test_map_and_list_vs_reference},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
