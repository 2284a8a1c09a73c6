/* SPDX-License-Identifier: MIT
 * nbsim — the ATM cut-off lists' kernels (sim/nlist/atm_list_kernels.cu), compiled from their own
 * source for the CPU and run under tests/cuda_emulation.h in the order a listed evaluation
 * launches them (boxes, build, sweep). Checked without a GPU, half and full lists, skins 0 and
 * 0.4 m, a jittered lattice (tiles compact) and a shuffled cloud (tiles spread, every box near):
 *  - the lists, as sets per body, against every pair within reach by the same float test
 *    (sim_atm_list_near_f): half lists j < i, full lists j != i; the most entries counted;
 *  - the sweep's forces and energy against the double reference over all triples; the triples it
 *    counts against a brute-force count with the kernel's own float pair rule (full lists: three
 *    times);
 *  - after every body moved by up to half the skin: the old lists still give the reference;
 *  - lists too short: every count exact, nothing written past the capacity, and the sweep's
 *    forces still the reference (the overflowed bodies' triples found from the build's tiles),
 *    also after every body moved by up to half the skin;
 *  - the step's rebuild decision: the check, the gated boxes and build, the sweep lowering it.
 * What it cannot see: the GPU's scheduling, atomics under contention, timing;
 * tests/test_gpu_atm_list.cu runs the kernels on a device. */
#include <cuda_runtime.h>

#include "cuda_emulation.h"

#define SIM_ATM_LIST_KERNELS_ONLY
#include "nlist/atm_list_kernels.cu"

#include <algorithm>
#include <set>
#include <vector>

#include "ensure.h"
#include "test_atm_emu.h"

static uint64_t schedule_seed = 7;

static bool launch(dim3 grid, dim3 block, const std::function<void()> &f) {
    return emu_launch(grid, block, &schedule_seed, f);
}

constexpr uint32_t kGuard = 64;
constexpr uint32_t kSentinel = 0xdeadbeefu;

/* The lists' device state as host vectors; nbr has kGuard sentinels past its end. */
struct lists {
    uint32_t n, n_tiles, stride, cap;
    bool half;
    std::vector<uint32_t> nbr, count;
    std::vector<sim_vec4f> ref;
    std::vector<sim_cull_box> boxes;
    sim_gpu_atm_list_counts counts;

    lists(uint32_t bodies, uint32_t capacity, bool half_lists) {
        n = bodies;
        n_tiles = (n + 31u) / 32u;
        stride = sim_nlist_stride(n);
        cap = capacity;
        half = half_lists;
        nbr.assign((size_t)cap * stride + kGuard, kSentinel);
        count.assign(n, 12345u);
        ref.assign(n, sim_vec4f{0, 0, 0, 0});
        boxes.resize(n_tiles);
        memset(&counts, 0xff, sizeof counts);
    }
    bool guards_intact() const {
        for (uint32_t g = 0; g < kGuard; ++g) {
            if (nbr[(size_t)cap * stride + g] != kSentinel) {
                return false;
            }
        }
        return true;
    }
};

static void build(lists &l, const std::vector<sim_vec4f> &pos, float a2_max, float skin) {
    const float reach2 = sim_atm_list_reach2_f(a2_max, skin);
    const dim3 grid((l.n_tiles + atml::kWarps - 1) / atml::kWarps), block(atml::kThreads);
    launch(grid, block, [&] {
        atml::atm_list_boxes_kernel(pos.data(), l.n, l.n_tiles, l.boxes.data(), l.ref.data(),
                                    &l.counts, reach2, sim_tcull_limit_f(reach2),
                                    SIM_GPU_ATM_LIST_REBUILD);
    });
    ENSURE(l.counts.most == 0u && l.counts.entries == 0u && l.counts.rebuild == 1u);
    launch(grid, block, [&] {
        if (l.half) {
            atml::atm_list_build_kernel<true>(pos.data(), l.n, l.n_tiles, l.boxes.data(), reach2,
                                              sim_tcull_limit_f(reach2), l.nbr.data(),
                                              l.count.data(), l.stride, l.cap, &l.counts);
        } else {
            atml::atm_list_build_kernel<false>(pos.data(), l.n, l.n_tiles, l.boxes.data(), reach2,
                                               sim_tcull_limit_f(reach2), l.nbr.data(),
                                               l.count.data(), l.stride, l.cap, &l.counts);
        }
    });
}

/* The sweep's forces (from zero), energy and counted triples. */
static double sweep(const lists &l, const std::vector<sim_vec4f> &pos, const scene &sc,
                    std::vector<sim_vec4f> &force, unsigned long long *triples) {
    const float a2_max = sim_atm_a2_max_f((float)(sc.cutoff * sc.cutoff));
    const float nu3 = sim_atm_nu3_f((float)sc.nu);
    force.assign(l.n, sim_vec4f{0, 0, 0, 0});
    double energy = 0.0;
    *triples = 0;
    lists &w = const_cast<lists &>(l); /* the sweep lowers the rebuild flag, records the frame */
    const atml::atm_list_build_view bv = {l.ref.data(), l.boxes.data(), l.n_tiles, &w.counts,
                                          SIM_GPU_ATM_LIST_RECORD};
    const dim3 grid((l.n + atml::kThreads - 1) / atml::kThreads), block(atml::kThreads);
    launch(grid, block, [&] {
        if (l.half) {
            atml::atm_list_sweep_kernel<true>(pos.data(), force.data(), l.n, l.nbr.data(),
                                              l.count.data(), l.stride, l.cap, nu3, a2_max,
                                              &energy, triples, bv);
        } else {
            atml::atm_list_sweep_kernel<false>(pos.data(), force.data(), l.n, l.nbr.data(),
                                               l.count.data(), l.stride, l.cap, nu3, a2_max,
                                               &energy, triples, bv);
        }
    });
    launch(grid, block, [&] { /* the overflowed lists' bodies (none: returns at once) */
        if (l.half) {
            atml::atm_list_overflow_kernel<true>(pos.data(), force.data(), l.n, l.count.data(),
                                                 l.cap, nu3, a2_max, &energy, triples, bv);
        } else {
            atml::atm_list_overflow_kernel<false>(pos.data(), force.data(), l.n, l.count.data(),
                                                  l.cap, nu3, a2_max, &energy, triples, bv);
        }
    });
    ENSURE(l.counts.rebuild == 0u && l.counts.frame.peak >= l.counts.most);
    return energy;
}

/* Triples whose three pairs the float kernel counts (sim_atm_pair_f's rule). */
static unsigned long long brute_triples(const std::vector<sim_vec4f> &pos, const scene &sc) {
    const float a2_max = sim_atm_a2_max_f((float)(sc.cutoff * sc.cutoff));
    const float nu3 = sim_atm_nu3_f((float)sc.nu);
    const uint32_t n = (uint32_t)pos.size();
    std::vector<char> in((size_t)n * n, 0);
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            sim_vec3f d;
            float a2, h;
            sim_atm_pair_f(pos[i], pos[j], i != j, nu3, a2_max, nullptr, &d, &a2, &h);
            in[(size_t)i * n + j] = h != 0.0f;
        }
    }
    unsigned long long c = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            for (uint32_t k = 0; k < j && in[(size_t)i * n + j]; ++k) {
                c += in[(size_t)i * n + k] && in[(size_t)j * n + k];
            }
        }
    }
    return c;
}

/* Every body moved, each coordinate by up to 0.499 skin / sqrt 3 (uniform, from seed). */
static std::vector<sim_vec4f> moved_by(const std::vector<sim_vec4f> &pos, float skin,
                                       uint64_t seed) {
    std::vector<sim_vec4f> moved = pos;
    const float step = 0.499f * skin / sqrtf(3.0f);
    for (sim_vec4f &p : moved) {
        p.x += (float)test_rnd(&seed, -step, step);
        p.y += (float)test_rnd(&seed, -step, step);
        p.z += (float)test_rnd(&seed, -step, step);
    }
    return moved;
}

/* Every list is exactly its body's set; returns the most neighbours of one body. */
static uint32_t check_lists(const lists &l, const std::vector<sim_vec4f> &pos, float reach2,
                            const char *name) {
    uint32_t bad = 0, most = 0;
    for (uint32_t i = 0; i < l.n; ++i) {
        std::set<uint32_t> want, got;
        for (uint32_t j = 0; j < l.n; ++j) {
            if ((l.half ? j < i : j != i) && sim_atm_list_near_f(pos[i], pos[j], reach2)) {
                want.insert(j);
            }
        }
        most = std::max(most, (uint32_t)want.size());
        const uint32_t stored = std::min(l.count[i], l.cap);
        for (uint32_t a = 0; a < stored; ++a) {
            got.insert(l.nbr[(size_t)a * l.stride + i]);
        }
        bad += l.count[i] != want.size() || got.size() != stored ||
               (l.count[i] <= l.cap ? got != want
                                    : !std::includes(want.begin(), want.end(), got.begin(),
                                                     got.end()));
    }
    ENSURE_MSG(bad == 0, "%s: %u bodies with wrong lists", name, bad);
    ENSURE_MSG(l.counts.most == most, "%s: most %u, want %u", name, l.counts.most, most);
    ENSURE(l.guards_intact());
    return most;
}

static void check_forces(const lists &l, const std::vector<sim_vec4f> &pos, const scene &sc,
                         const char *name) {
    scene moved_sc = sc;
    moved_sc.pos = pos;
    std::vector<sim_vec3d> ref;
    const double e_ref = atm_reference(moved_sc, ref);
    std::vector<sim_vec4f> f;
    unsigned long long triples = 0;
    const double e = sweep(l, pos, sc, f, &triples);
    const force_error fe = force_error_of(f, ref);
    const unsigned long long want = brute_triples(pos, sc) * (l.half ? 1u : 3u);
    ENSURE_MSG(fe.rel <= 1e-5 && fe.worst <= 1e-4 && fabs(e - e_ref) <= 1e-5 * fabs(e_ref) &&
                   triples == want && want > 0,
               "%s (%s lists): F %.3g / %.3g, E %.9g vs %.9g, %llu triples (want %llu)", name,
               l.half ? "half" : "full", fe.rel, fe.worst, e, e_ref, triples, want);
}

static void scene_case(const scene &sc, const char *name) {
    const float a2_max = sim_atm_a2_max_f((float)(sc.cutoff * sc.cutoff));
    const uint32_t n = (uint32_t)sc.pos.size();
    for (int half = 0; half < 2; ++half) {
        for (float skin : {0.0f, 0.4f}) {
            lists l(n, 512, half != 0);
            build(l, sc.pos, a2_max, skin);
            check_lists(l, sc.pos, sim_atm_list_reach2_f(a2_max, skin), name);
            ENSURE(memcmp(l.ref.data(), sc.pos.data(), n * sizeof(sim_vec4f)) == 0);
            check_forces(l, sc.pos, sc, name);
            if (skin > 0.0f) { /* every body moved by up to half the skin: the lists still hold */
                check_forces(l, moved_by(sc.pos, skin, 3), sc, name);
            }
            /* too short: counts exact, nothing past cap; the sweep finds the triples of the
             * overflowed lists from the build's tiles (atm_list_kernels.h): the same forces, at
             * the build's positions and after every body moved by up to half the skin */
            for (uint32_t cap : {3u, 20u}) {
                lists s(n, cap, half != 0);
                build(s, sc.pos, a2_max, skin);
                const uint32_t most =
                    check_lists(s, sc.pos, sim_atm_list_reach2_f(a2_max, skin), name);
                ENSURE(most > s.cap && s.counts.most > s.cap);
                uint64_t entries = 0;
                for (uint32_t i = 0; i < n; ++i) {
                    entries += s.count[i];
                }
                ENSURE(s.counts.entries == entries);
                if (cap < 20u || skin == 0.0f) {
                    continue; /* the forces at 20 entries (some lanes of a warp stored, some not)
                               * and a skin (moved too): the emulated scan is slow */
                }
                memset(&s.counts.frame, 0, sizeof s.counts.frame);
                check_forces(s, sc.pos, sc, name);
                ENSURE(s.counts.frame.fallback_steps == 1u && s.counts.frame.peak == most);
                if (skin > 0.0f) {
                    check_forces(s, moved_by(sc.pos, skin, 5), sc, name);
                }
                ENSURE(s.guards_intact());
            }
        }
    }
}

/* The step's rebuild decision: the check raises the flag only for a body moved past half the
 * skin (or NaN), the gated boxes and build return at once while it is down (the lists, counts and
 * build positions untouched) and rebuild when it is up or the rebuild is forced; the sweep lowers
 * it. */
static void test_rebuild_decision(void) {
    uint64_t seed = 23;
    scene sc;
    sc.pos = jittered_lattice(200, 1.1, &seed);
    sc.nu = 0.5;
    sc.cutoff = 2.5;
    const float a2_max = sim_atm_a2_max_f((float)(sc.cutoff * sc.cutoff));
    const float skin = 0.4f, reach2 = sim_atm_list_reach2_f(a2_max, skin);
    const uint32_t n = (uint32_t)sc.pos.size();
    lists l(n, 512, true);
    build(l, sc.pos, a2_max, skin);
    std::vector<sim_vec4f> f;
    unsigned long long triples = 0;
    (void)sweep(l, sc.pos, sc, f, &triples); /* lowers the flag */
    const dim3 grid((l.n_tiles + atml::kWarps - 1) / atml::kWarps), block(atml::kThreads);
    const dim3 body_grid((n + atml::kThreads - 1) / atml::kThreads);
    auto check = [&](const std::vector<sim_vec4f> &pos) {
        launch(body_grid, block, [&] {
            atml::atm_list_check_kernel(pos.data(), n, l.ref.data(), 0.25f * skin * skin,
                                        &l.counts);
        });
        return l.counts.rebuild;
    };
    auto update = [&](const std::vector<sim_vec4f> &pos, unsigned flags) {
        launch(grid, block, [&] {
            atml::atm_list_boxes_kernel(pos.data(), n, l.n_tiles, l.boxes.data(), l.ref.data(),
                                        &l.counts, reach2, sim_tcull_limit_f(reach2), flags);
        });
        launch(grid, block, [&] {
            atml::atm_list_build_kernel<true>(pos.data(), n, l.n_tiles, l.boxes.data(), reach2,
                                              sim_tcull_limit_f(reach2), l.nbr.data(),
                                              l.count.data(), l.stride, l.cap, &l.counts);
        });
    };
    std::vector<sim_vec4f> moved = sc.pos;
    for (sim_vec4f &p : moved) {
        p.x += 0.49f * 0.5f * skin;
    }
    ENSURE(check(moved) == 0u);
    const std::vector<uint32_t> count0 = l.count;
    memset(&l.counts.frame, 0, sizeof l.counts.frame);
    update(moved, SIM_GPU_ATM_LIST_RECORD); /* nothing to do */
    ENSURE(l.counts.frame.rebuilds == 0u && l.count == count0);
    ENSURE(memcmp(l.ref.data(), sc.pos.data(), n * sizeof(sim_vec4f)) == 0);
    check_forces(l, moved, sc, "within half the skin");
    moved[n / 2].y += 0.51f * 0.5f * skin + 0.49f * 0.5f * skin;
    ENSURE(check(moved) == 1u);
    update(moved, SIM_GPU_ATM_LIST_RECORD);
    ENSURE(l.counts.frame.rebuilds == 1u);
    ENSURE(memcmp(l.ref.data(), moved.data(), n * sizeof(sim_vec4f)) == 0);
    check_lists(l, moved, reach2, "rebuilt after a move");
    check_forces(l, moved, sc, "rebuilt after a move");
    ENSURE(l.counts.rebuild == 0u);
    update(sc.pos, SIM_GPU_ATM_LIST_RECORD | SIM_GPU_ATM_LIST_REBUILD); /* forced */
    ENSURE(l.counts.frame.rebuilds == 2u);
    check_lists(l, sc.pos, reach2, "forced");
    std::vector<sim_vec4f> nan = sc.pos;
    nan[7].z = NAN;
    (void)sweep(l, sc.pos, sc, f, &triples);
    ENSURE(check(nan) == 1u);
}

static void test_lattice(void) {
    uint64_t seed = 21;
    scene sc;
    sc.pos = jittered_lattice(300, 1.1, &seed);
    sc.nu = 0.5;
    sc.cutoff = 2.5;
    scene_case(sc, "jittered lattice 300, R 2.5");
}

static void test_shuffled_cloud(void) {
    uint64_t seed = 22;
    scene sc;
    for (uint32_t i = 0; i < 170; ++i) {
        sc.pos.push_back(sim_vec4f{(float)test_rnd(&seed, -3, 3), (float)test_rnd(&seed, -3, 3),
                                   (float)test_rnd(&seed, -3, 3), 0.1f});
    }
    sc.nu = 1.0;
    sc.cutoff = 2.0;
    scene_case(sc, "shuffled cloud 170, R 2");
}

int main(int argc, char **argv) {
    static const ensure_test tests[] = {
        {"lattice", test_lattice},
        {"shuffled_cloud", test_shuffled_cloud},
        {"rebuild_decision", test_rebuild_decision},
    };
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
