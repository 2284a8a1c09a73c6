/* SPDX-License-Identifier: MIT
 * nbsim — the ATM triplet kernel of sim/cuda/triplet_kernels.cu, compiled from its own source for the
 * CPU and run under tests/cuda_emulation.h (fibers for threads, barriers and shuffles with a
 * random schedule), against the double reference over all triples: every thread map and the
 * list source, partial tiles, triples exactly on the cut-off, coincident bodies, needle
 * triangles, the energy pass. What it cannot see: the GPU's arithmetic (MUFU, FMA contraction)
 * and its timing; test_triplet_kernels_gpu and test_gpu_backend run the same cases on a device.
 * Tolerances as on the GPU (test_gpu_backend.c): forces L2 1e-5, per body 1e-4 (floor 0.1 of
 * the rms), ATM energy 1e-4; seen here: L2 <= 5e-7 (4e-6 with the needles). */
#include <cuda_runtime.h>

#include "cuda_emulation.h"

#define SIM_TRIPLET_KERNEL_ONLY
#include "cuda/triplet_kernels.cu"

#include <algorithm>
#include <vector>

#include "ensure.h"
#include "test_atm_emu.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
#define TOL_E 1e-4

/* A jittered lattice (pitch `spacing`, jitter +-0.1 m) in shuffled order, exact floats. */
static scene lattice(uint32_t n, double spacing, uint64_t seed) {
    scene s;
    s.nu = 1.0;
    s.cutoff = 0.0;
    s.pos = jittered_lattice(n, spacing, &seed);
    for (uint32_t i = n; i > 1; --i) {
        std::swap(s.pos[i - 1], s.pos[(uint32_t)test_rnd(&seed, 0.0, (double)i)]);
    }
    return s;
}

/* 70 bodies on a unit grid (integer squared distances: exact in float and double, many at
 * exactly 2 m), bodies 40 and 69 on bodies 3 and 33 (coincident). */
static scene grid(double cutoff) {
    scene s;
    s.nu = 1.0;
    s.cutoff = cutoff;
    for (uint32_t i = 0; i < 70; ++i) {
        s.pos.push_back(sim_vec4f{(float)(i % 4), (float)(i / 4 % 4), (float)(i / 16), 0.5f});
    }
    s.pos[40] = s.pos[3];
    s.pos[69] = s.pos[33];
    return s;
}

static uint64_t schedule_seed = 1;

/* Every block of a grid, in order; false on a deadlock. */
template <class TILES, bool ENERGY, bool CUT>
static bool run_grid(const TILES &tiles, dim3 grid, const scene &s, sim_vec4f *force,
                     double *energy) {
    const float nu3 = sim_atm_nu3_f((float)s.nu);
    const float a2_max = sim_atm_a2_max_f((float)(s.cutoff * s.cutoff));
    atm_box box = {sim_period_to_float(scene_period(s)), s.periodic != 0, 0};
    for (int a = 0; a < 3; ++a) { /* as atm_box_of: the wrap check above a third of a period */
        box.check |= box.per.len[a] > 0.0f && 3.0 * s.cutoff >= box.per.len[a];
    }
    return emu_launch(grid, dim3(kThreads), &schedule_seed, [&] {
        triplet_kernel<TILES, ENERGY, CUT>(tiles, s.pos.data(), force, energy,
                                           (uint32_t)s.pos.size(), nu3, a2_max, box);
    });
}

template <bool CUT>
static void forces_by_map(sim_triplet_map map, const scene &s, std::vector<sim_vec4f> &f) {
    const uint32_t n = (uint32_t)s.pos.size(), tiles = (n + kT - 1) / kT;
    f.assign(n, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
    sim_map_plan plan;
    sim_error err;
    ENSURE(sim_triplet_map_plan(map, tiles, &plan, &err) == SIM_OK);
    for (int l = 0; l < plan.launch_count; ++l) {
        const sim_map_launch &L = plan.launch[l];
        const dim3 grid(L.grid[0], L.grid[1], L.grid[2]);
        switch (map) {
#define EMU_MAP_CASE(id, name, label, paper)                                                       \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        run_grid<map_tiles<SIM_TRIPLET_MAP_##id>, false, CUT>({L}, grid, s, f.data(), nullptr);    \
        break;
            SIM_TRIPLET_MAP_LIST(EMU_MAP_CASE)
#undef EMU_MAP_CASE
        default:
            ENSURE(0);
        }
    }
}

/* Every tile triple once, shuffled, plus an unordered and an outside entry (skipped). */
template <bool CUT> static void forces_by_list(const scene &s, std::vector<sim_vec4f> &f) {
    const uint32_t n = (uint32_t)s.pos.size(), tiles = (n + kT - 1) / kT;
    std::vector<sim_tile3> list;
    for (uint32_t i = 0; i < tiles; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            for (uint32_t k = 0; k <= j; ++k) {
                list.push_back(sim_tile3{i, j, k});
            }
        }
    }
    uint64_t seed = 99;
    for (size_t i = list.size(); i > 1; --i) {
        std::swap(list[i - 1], list[(size_t)test_rnd(&seed, 0.0, (double)i)]);
    }
    list.push_back(sim_tile3{0u, 1u, 0u});
    list.push_back(sim_tile3{tiles, 0u, 0u});
    f.assign(n, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
    const list_tiles src = {list.data(), (uint32_t)list.size(), tiles};
    run_grid<list_tiles, false, CUT>(src, dim3((uint32_t)list.size()), s, f.data(), nullptr);
}

template <bool CUT> static double energy_by_bb(const scene &s) {
    const uint32_t n = (uint32_t)s.pos.size(), tiles = (n + kT - 1) / kT;
    sim_map_plan plan;
    sim_error err;
    ENSURE(sim_triplet_map_plan(SIM_TRIPLET_MAP_BB, tiles, &plan, &err) == SIM_OK);
    double e = 0.0;
    for (int l = 0; l < plan.launch_count; ++l) {
        const sim_map_launch &L = plan.launch[l];
        run_grid<map_tiles<SIM_TRIPLET_MAP_BB>, true, CUT>(
            {L}, dim3(L.grid[0], L.grid[1], L.grid[2]), s, nullptr, &e);
    }
    return e;
}

static void compare(const char *what, const std::vector<sim_vec4f> &g,
                    const std::vector<sim_vec3d> &ref) {
    const force_error e = force_error_of(g, ref);
    printf("  %-36s F rel %.1e, worst body %.1e\n", what, e.rel, e.worst);
    ENSURE_MSG(e.rel <= TOL_F_L2 && e.worst <= TOL_F_BODY, "%s: rel %.3g, worst body %.3g", what,
               e.rel, e.worst);
}

/* The maps and the list on one scene, then the energy. */
template <bool CUT>
static void scene_case(const char *label, const scene &s, bool every_map, bool list) {
    std::vector<sim_vec3d> ref;
    const double e_ref = atm_reference(s, ref);
    std::vector<sim_vec4f> g;
    char what[96];
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        if (!every_map && m != SIM_TRIPLET_MAP_RM) {
            continue;
        }
        forces_by_map<CUT>((sim_triplet_map)m, s, g);
        snprintf(what, sizeof what, "N=%zu %s %s", s.pos.size(), label,
                 sim_triplet_map_name((sim_triplet_map)m));
        compare(what, g, ref);
    }
    if (list) {
        forces_by_list<CUT>(s, g);
        snprintf(what, sizeof what, "N=%zu %s list", s.pos.size(), label);
        compare(what, g, ref);
    }
    const double e = energy_by_bb<CUT>(s);
    printf("  %-36s E %.9g, reference %.9g\n", "", e, e_ref);
    ENSURE(isfinite(e));
    ENSURE_NEAR(e, e_ref, TOL_E * fabs(e_ref) + 1e-300);
}

static void test_small_sizes(void) {
    static const uint32_t sizes[] = {1, 2, 3, 33};
    for (uint32_t n : sizes) {
        scene_case<false>("lattice", lattice(n, 1.6, 7u + n), n == 33, n == 33);
    }
}

static void test_cutoff(void) {
    scene s = lattice(100, 1.6, 5u);
    s.cutoff = 2.5;
    scene_case<true>("lattice cutoff 2.5", s, false, true);
    scene_case<true>("grid cutoff=2 exact", grid(2.0), true, true);
}

static void test_coincident_and_needles(void) {
    scene_case<false>("grid coincident", grid(0.0), false, true);
    /* Needle triangles: body 1 at 1 cm from body 0, body 7 at 2 mm from body 5. */
    scene s = lattice(45, 1.6, 11u);
    s.nu = 0.01;
    s.pos[1] = sim_vec4f{s.pos[0].x + 0.006f, s.pos[0].y - 0.008f, s.pos[0].z, 0.5f};
    s.pos[7] = sim_vec4f{s.pos[5].x, s.pos[5].y + 0.002f, s.pos[5].z, 0.5f};
    scene_case<false>("needles", s, false, false);
}

/* A periodic box (issue 22): the lattice wrapped into a box of side 8 m, cut-offs below and above
 * a third of the period (above it triples whose pair images wrap round the box are dropped). */
static void test_periodic(void) {
    static const int axes[2] = {7, 5};
    static const double cuts[2] = {2.5, 3.9};
    for (int k = 0; k < 2; ++k) {
        scene s = lattice(100, 1.6, 21u + (uint64_t)k);
        s.cutoff = cuts[k];
        s.periodic = axes[k];
        s.half = 4.0;
        for (sim_vec4f &p : s.pos) {
            float *x[3] = {&p.x, &p.y, &p.z};
            for (int a = 0; a < 3; ++a) {
                *x[a] -= 3.5f; /* the lattice spans 0 .. 7.3 m: now -3.5 .. 3.8 */
                if ((s.periodic >> a) & 1) {
                    *x[a] = *x[a] >= 4.0f ? *x[a] - 8.0f : *x[a];
                }
            }
        }
        char label[64];
        snprintf(label, sizeof label, "periodic %d cutoff %g", axes[k], cuts[k]);
        scene_case<true>(label, s, k == 0, true);
    }
}

static const ensure_test tests[] = {
    {"periodic", test_periodic},
    {"small_sizes", test_small_sizes},
    {"cutoff", test_cutoff},
    {"coincident_and_needles", test_coincident_and_needles},
};

ENSURE_MAIN(tests)
