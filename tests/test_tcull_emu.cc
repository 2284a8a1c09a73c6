/* SPDX-License-Identifier: MIT
 * nbsim — the ATM cut-off's culling kernels (sim/cull/triplet_cull_kernels.cu) and the persistent
 * culled ATM kernel (sim/cuda/triplet_kernels.cu), compiled from their own sources for the CPU and run
 * under tests/cuda_emulation.h in the order sim_gpu_tcull_build launches them (the prefix sum,
 * CUB's on the GPU, done on the host). Checked without a GPU:
 *  - the boxes of centres, bit for bit against the host's;
 *  - the neighbour pairs and the tile-triple list, as sets, against a brute-force enumeration of
 *    every tile pair and triple with the same float test (triplet_cull.h), one and two levels,
 *    every pair map placing the top pass;
 *  - lists too short: every count still exact, nothing written past a capacity;
 *  - the culled kernel's forces and energy against the double reference over all triples
 *    (tolerances of test_triplet_kernel_emu), from the list, from the boxes (the fallback,
 *    several chunks of tile pairs and batches of K), and split into shares of the list;
 *  - triples exactly on the cut-off (integer coordinates, equilateral sides sqrt(2), sqrt(8)).
 * What it cannot see: the GPU's scheduling and atomics under contention, CUB, timing;
 * tests/test_gpu_tcull.c runs the same on a device. */
#include <cuda_runtime.h>

#include "cuda_emulation.h"

#define SIM_TRIPLET_KERNEL_ONLY
#include "cuda/triplet_kernels.cu"
#define SIM_TCULL_KERNELS_ONLY
#include "cull/triplet_cull_kernels.cu"

#include <algorithm>
#include <vector>

#include "ensure.h"
#include "test_atm_emu.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
#define TOL_E 1e-4

static uint64_t schedule_seed = 3;

/* Every block of a grid, in order, each running f(); false on a deadlock. */
static bool launch(dim3 grid, dim3 block, const std::function<void()> &f) {
    return emu_launch(grid, block, &schedule_seed, f);
}

/* Sorts the bodies by their Morton key (as the backends do), so tiles are compact. */
static void morton_sort(scene &s) {
    float half = 1.0f;
    for (const sim_vec4f &p : s.pos) {
        half = fmaxf(half, fmaxf(fabsf(p.x), fmaxf(fabsf(p.y), fabsf(p.z))) + 1.0f);
    }
    const float scale = (float)SIM_MORTON_CELLS / (2.0f * half);
    std::stable_sort(s.pos.begin(), s.pos.end(), [&](const sim_vec4f &a, const sim_vec4f &b) {
        return sim_morton_key(a.x, a.y, a.z, half, scale) <
               sim_morton_key(b.x, b.y, b.z, half, scale);
    });
}

/* A jittered lattice of n bodies (pitch `spacing`, jitter +-0.1 m), exact floats. */
static scene lattice(uint32_t n, double spacing, double cutoff, uint64_t seed) {
    scene s;
    s.nu = 1.0;
    s.cutoff = cutoff;
    s.pos = jittered_lattice(n, spacing, &seed);
    morton_sort(s);
    return s;
}

/* n bodies on the integer grid (distances squared are integers, exact in float and double). */
static scene integer_grid(uint32_t n, uint32_t side, double cutoff) {
    scene s;
    s.nu = 1.0;
    s.cutoff = cutoff;
    for (uint32_t i = 0; i < n; ++i) {
        s.pos.push_back(sim_vec4f{(float)(i % side), (float)(i / side % side),
                                  (float)(i / (side * side)), 0.5f});
    }
    morton_sort(s);
    return s;
}

/* `clusters` clusters of 32 bodies (a 4 x 4 x 2 block, pitch 1 m), 10 m apart on a line: with a
 * cut-off of 3 m only triples inside a cluster count. */
static scene clusters_on_a_line(uint32_t clusters, double cutoff) {
    scene s;
    s.nu = 1.0;
    s.cutoff = cutoff;
    for (uint32_t c = 0; c < clusters; ++c) {
        for (uint32_t i = 0; i < 32; ++i) {
            s.pos.push_back(
                sim_vec4f{(float)(10.0 * c + i % 4), (float)(i / 4 % 4), (float)(i / 16), 0.5f});
        }
    }
    return s; /* already in tile order: tile c is cluster c */
}

static void compare(const char *what, const std::vector<sim_vec4f> &g,
                    const std::vector<sim_vec3d> &ref) {
    const force_error e = force_error_of(g, ref);
    printf("  %-44s F rel %.1e, worst body %.1e\n", what, e.rel, e.worst);
    ENSURE_MSG(e.ref_l2 > 0.0, "%s: the reference forces are all zero", what);
    ENSURE_MSG(e.rel <= TOL_F_L2 && e.worst <= TOL_F_BODY, "%s: rel %.3g, worst body %.3g", what,
               e.rel, e.worst);
}

/* The device state of sim_gpu_tcull as host vectors; every list has kGuard sentinel entries past
 * its capacity that nothing may touch. */
constexpr uint32_t kGuard = 64;
constexpr uint32_t kSentinel = 0xdeadbeefu;

struct tcull_state {
    uint32_t n, n_tiles, n_supers;
    std::vector<sim_cull_box> boxes, supers;
    std::vector<sim_tile2> super_list, pair_list;
    std::vector<sim_tile3> triple_list;
    uint32_t super_cap, pair_cap, triple_cap;
    std::vector<uint32_t> row_count, row_start, nbr;
    sim_gpu_tcull_counts counts;
    float limit;

    tcull_state(uint32_t bodies, uint32_t caps[3], float cutoff) {
        n = bodies;
        n_tiles = (n + 31) / 32;
        n_supers = (n_tiles + SIM_CULL_SUPER - 1) / SIM_CULL_SUPER;
        boxes.resize(n_tiles);
        supers.resize(n_supers);
        super_cap = caps[0];
        pair_cap = caps[1];
        triple_cap = caps[2];
        super_list.assign(super_cap + kGuard, sim_tile2{kSentinel, kSentinel});
        pair_list.assign(pair_cap + kGuard, sim_tile2{kSentinel, kSentinel});
        nbr.assign(pair_cap + kGuard, kSentinel);
        triple_list.assign(triple_cap + kGuard, sim_tile3{kSentinel, kSentinel, kSentinel});
        row_count.assign(n_tiles + 1, 12345u); /* the box kernel zeroes it */
        row_start.assign(n_tiles + 1, 0u);
        memset(&counts, 0xff, sizeof counts);
        counts.frame = sim_gpu_tcull_frame{};
        limit = sim_tcull_limit_f(sim_atm_a2_max_f((float)(cutoff * cutoff)));
    }

    bool guards_intact() const {
        bool ok = true;
        for (uint32_t g = 0; g < kGuard; ++g) {
            ok &=
                super_list[super_cap + g].i == kSentinel && pair_list[pair_cap + g].i == kSentinel;
            ok &= nbr[pair_cap + g] == kSentinel && triple_list[triple_cap + g].i == kSentinel;
        }
        return ok;
    }
};

/* The triplet kernels' view of s's box (triplet_kernels.cu's atm_box_of). */
static atm_box box_of(const scene &s) {
    atm_box box = {sim_period_to_float(scene_period(s)), s.periodic != 0, 0};
    for (int a = 0; a < 3; ++a) {
        box.check |= box.per.len[a] > 0.0f && 3.0 * s.cutoff >= box.per.len[a];
    }
    return box;
}

/* The top pass of one pair map, every launch of its plan over the groups. */
static void top_pass(tcull_state &c, sim_pair_map map, int levels, const sim_period_f &per) {
    const bool two = levels == 2;
    const uint32_t items = two ? c.n_supers : c.n_tiles;
    sim_map_plan plan;
    sim_error err;
    ENSURE(sim_pair_map_plan(map, (items + 15) / 16, &plan, &err) == SIM_OK);
    const sim_cull_box *boxes = two ? c.supers.data() : c.boxes.data();
    sim_tile2 *out = two ? c.super_list.data() : c.pair_list.data();
    const uint32_t cap = two ? c.super_cap : c.pair_cap;
    uint32_t *count = two ? &c.counts.supers : &c.counts.pairs;
    for (int l = 0; l < plan.launch_count; ++l) {
        const sim_map_launch L = plan.launch[l];
        const dim3 grid(L.grid[0], L.grid[1], L.grid[2]);
        switch (map) {
#define EMU_PAIR_CASE(id, name, label, paper)                                                      \
    case SIM_PAIR_MAP_##id:                                                                        \
        launch(grid, dim3(16, 16), [&] {                                                           \
            tcull::tcull_map_kernel<SIM_PAIR_MAP_##id>(boxes, items, L, c.limit, out, cap, count,  \
                                                       per);                                       \
        });                                                                                        \
        break;
            SIM_PAIR_MAP_LIST(EMU_PAIR_CASE)
#undef EMU_PAIR_CASE
        default:
            ENSURE(0);
        }
    }
}

/* sim_gpu_tcull_build, kernel by kernel (small grids: the kernels stride over their work), the
 * tile triples of part `part` of `parts` (triplet_cull.h). */
static void build(tcull_state &c, const scene &s, sim_pair_map map, int levels, uint32_t part = 0,
                  uint32_t parts = 1) {
    const sim_vec4f *pos = s.pos.data();
    const sim_period_f per = sim_period_to_float(scene_period(s));
    launch(dim3(c.n_supers), dim3(128), [&] {
        tcull::tcull_boxes_kernel(pos, c.n, c.n_tiles, c.boxes.data(), c.supers.data(),
                                  c.row_count.data(), &c.counts);
    });
    top_pass(c, map, levels, per);
    if (levels == 2) {
        launch(dim3(3), dim3(16, 16), [&] {
            tcull::tcull_second_kernel(c.boxes.data(), c.n_tiles, c.n_supers, c.super_list.data(),
                                       c.super_cap, c.limit, &c.counts, c.pair_list.data(),
                                       c.pair_cap, per);
        });
    }
    launch(dim3(2), dim3(128), [&] {
        tcull::tcull_rows_kernel(c.pair_list.data(), c.pair_cap, &c.counts, c.row_count.data());
    });
    uint32_t sum = 0; /* cub::DeviceScan::ExclusiveSum */
    for (uint32_t t = 0; t <= c.n_tiles; ++t) {
        c.row_start[t] = sum;
        sum += c.row_count[t];
    }
    launch(dim3(2), dim3(128), [&] {
        tcull::tcull_scatter_kernel(c.pair_list.data(), c.pair_cap, &c.counts, c.row_start.data(),
                                    c.row_count.data(), c.nbr.data());
    });
    launch(dim3(3), dim3(128), [&] {
        tcull::tcull_extend_kernel(c.boxes.data(), c.pair_list.data(), c.pair_cap,
                                   c.row_start.data(), c.nbr.data(), c.limit, part, parts,
                                   &c.counts, c.triple_list.data(), c.triple_cap, per);
    });
}

/* The boxes as the kernel must compute them: min / max of the centres, then (margin) cull.h's
 * margin. */
static std::vector<sim_cull_box> host_boxes(const scene &s, uint32_t n_tiles, bool margin) {
    std::vector<sim_cull_box> v(n_tiles);
    for (uint32_t t = 0; t < n_tiles; ++t) {
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (uint32_t i = t * 32; i < t * 32 + 32 && i < s.pos.size(); ++i) {
            const float x[3] = {s.pos[i].x, s.pos[i].y, s.pos[i].z};
            for (int a = 0; a < 3; ++a) {
                lo[a] = fminf(lo[a], x[a]);
                hi[a] = fmaxf(hi[a], x[a]);
            }
        }
        for (int a = 0; a < 3; ++a) {
            if (margin && lo[a] <= hi[a]) {
                const float m = sim_cull_margin_f(lo[a], hi[a]);
                lo[a] -= m;
                hi[a] += m;
            }
        }
        v[t].lo = sim_vec4f{lo[0], lo[1], lo[2], 0.0f};
        v[t].hi = sim_vec4f{hi[0], hi[1], hi[2], 0.0f};
    }
    return v;
}

static bool tile3_less(const sim_tile3 &a, const sim_tile3 &b) {
    return a.i != b.i ? a.i < b.i : a.j != b.j ? a.j < b.j : a.k < b.k;
}

/* Builds with every map (and `levels`), checks boxes, counts and the lists; returns the counts
 * of the last build. */
static void check_lists(const char *label, const scene &s, int levels, bool every_map) {
    const uint32_t n = (uint32_t)s.pos.size(), n_tiles = (n + 31) / 32;
    const float limit = sim_tcull_limit_f(sim_atm_a2_max_f((float)(s.cutoff * s.cutoff)));
    const std::vector<sim_cull_box> hb = host_boxes(s, n_tiles, true);
    const std::vector<sim_cull_box> bare = host_boxes(s, n_tiles, false);
    /* brute force, same float test */
    uint32_t want_pairs = 0;
    std::vector<sim_tile3> want;
    uint64_t ties = 0; /* tile pairs whose bare boxes are exactly at the cut-off */
    for (uint32_t i = 0; i < n_tiles; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            const bool ij = sim_tcull_near_f(&hb[i], &hb[j], limit);
            want_pairs += ij;
            ties += sim_tcull_dist2_f(&bare[i], &bare[j]) == (float)(s.cutoff * s.cutoff);
            for (uint32_t k = 0; ij && k <= j; ++k) {
                if (sim_tcull_near_f(&hb[j], &hb[k], limit) &&
                    sim_tcull_near_f(&hb[i], &hb[k], limit)) {
                    want.push_back(sim_tile3{i, j, k});
                }
            }
        }
    }
    int maps_ok = 0, maps = 0;
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        if (!every_map && m != SIM_PAIR_MAP_LTM) {
            continue;
        }
        uint32_t caps[3] = {4096, 4096, (uint32_t)want.size() + 8};
        tcull_state c(n, caps, s.cutoff);
        build(c, s, (sim_pair_map)m, levels);
        bool ok = memcmp(c.boxes.data(), hb.data(), hb.size() * sizeof hb[0]) == 0;
        ok &= c.counts.pairs == want_pairs && c.counts.triples == want.size();
        std::vector<sim_tile3> got(c.triple_list.begin(), c.triple_list.begin() + c.counts.triples);
        std::sort(got.begin(), got.end(), tile3_less);
        ok &= got.size() == want.size() &&
              std::equal(got.begin(), got.end(), want.begin(), [](sim_tile3 a, sim_tile3 b) {
                  return a.i == b.i && a.j == b.j && a.k == b.k;
              });
        ok &= c.guards_intact();
        ENSURE_MSG(ok, "%s map %s levels %d: pairs %u (want %u), triples %u (want %zu)", label,
                   sim_pair_map_name((sim_pair_map)m), levels, c.counts.pairs, want_pairs,
                   c.counts.triples, want.size());
        /* three parts: each lists its rows only, together the list, none twice */
        std::vector<sim_tile3> parts;
        bool rows_ok = true;
        for (uint32_t part = 0; part < 3u; ++part) {
            build(c, s, (sim_pair_map)m, levels, part, 3u);
            for (uint32_t e = 0; e < c.counts.triples; ++e) {
                rows_ok &= c.triple_list[e].i % 3u == part;
                parts.push_back(c.triple_list[e]);
            }
        }
        std::sort(parts.begin(), parts.end(), tile3_less);
        rows_ok &=
            parts.size() == want.size() &&
            std::equal(parts.begin(), parts.end(), want.begin(), [](sim_tile3 a, sim_tile3 b) {
                return a.i == b.i && a.j == b.j && a.k == b.k;
            });
        ENSURE_MSG(rows_ok, "%s map %s levels %d: 3 parts list %zu tile triples (want %zu)", label,
                   sim_pair_map_name((sim_pair_map)m), levels, parts.size(), want.size());
        ok &= rows_ok;
        maps_ok += ok;
        ++maps;
    }
    printf("  %-30s N=%-5u %3u tiles, levels %d: %u neighbour pairs, %zu of %llu tile triples "
           "(%llu tile pairs exactly at the cut-off); %d/%d maps give the brute force's lists\n",
           label, n, n_tiles, levels, want_pairs, want.size(),
           (unsigned long long)sim_map_t3(n_tiles), (unsigned long long)ties, maps_ok, maps);
}

/* Lists far too short: counts exact, lists partial, nothing written past a capacity. */
static void check_overflow(const scene &s, int levels) {
    const uint32_t n = (uint32_t)s.pos.size();
    uint32_t big[3] = {4096, 4096, 1u << 16};
    tcull_state full(n, big, s.cutoff);
    build(full, s, SIM_PAIR_MAP_RM, levels);
    uint32_t small[3] = {2, 5, 7};
    tcull_state c(n, small, s.cutoff);
    build(c, s, SIM_PAIR_MAP_RM, levels);
    printf("  lists of 2 / 5 / 7 entries, levels %d: counts %u / %u / %u (complete lists: %u / %u "
           "/ %u), guards intact %d\n",
           levels, c.counts.supers, c.counts.pairs, c.counts.triples, full.counts.supers,
           full.counts.pairs, full.counts.triples, (int)c.guards_intact());
    ENSURE(c.guards_intact());
    ENSURE(levels == 1 || c.counts.supers == full.counts.supers);
    ENSURE(c.counts.pairs == full.counts.pairs && c.counts.pairs > c.pair_cap);
    ENSURE(c.counts.triples <= full.counts.triples); /* from the stored pairs only */
}

/* The culled kernel: forces through the list, the fallback, the list in 3 parts (each built for
 * its rows) and the fallback in 3 parts (modes: bits 0..3); energy. */
static void check_kernel(const char *label, const scene &s, uint32_t ref_block, int levels,
                         unsigned modes, bool energy) {
    const uint32_t n = (uint32_t)s.pos.size();
    std::vector<sim_vec3d> ref;
    const double e_ref = atm_reference(s, ref, ref_block);
    uint32_t caps[3] = {4096, 4096, 1u << 16};
    tcull_state c(n, caps, s.cutoff);
    build(c, s, SIM_PAIR_MAP_LTM, levels);
    const float a2 = sim_atm_a2_max_f((float)(s.cutoff * s.cutoff));
    const float nu3 = sim_atm_nu3_f((float)s.nu);
    /* mode 0: list; 1: fallback (the pair list said too short); 2: list in 3 parts; 3: fallback
     * in 3 parts */
    for (int mode = 0; mode < 4; ++mode) {
        if (!((modes >> mode) & 1u)) {
            continue;
        }
        std::vector<sim_vec4f> f(n, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
        const uint32_t parts = mode >= 2 ? 3u : 1u;
        const bool fallback = mode == 1 || mode == 3;
        const uint32_t fallback_before = c.counts.frame.fallback_steps;
        for (uint32_t part = 0; part < parts; ++part) {
            build(c, s, SIM_PAIR_MAP_LTM, levels, part, parts);
            culled_args a = {c.triple_list.data(),
                             c.triple_cap,
                             fallback ? 0u : c.pair_cap,
                             c.boxes.data(),
                             c.n_tiles,
                             c.limit,
                             &c.counts,
                             part,
                             parts,
                             SIM_GPU_CULL_RECORD,
                             sim_period_to_float(scene_period(s))};
            c.counts.cursor = 0;
            launch(dim3(3), dim3(128), [&] {
                triplet_culled_kernel<false>(a, s.pos.data(), f.data(), nullptr, n, nu3, a2,
                                             box_of(s));
            });
        }
        char what[96];
        static const char *const names[] = {"list", "fallback", "list in 3 parts",
                                            "fallback in 3 parts"};
        snprintf(what, sizeof what, "%s, %s", label, names[mode]);
        compare(what, f, ref);
        ENSURE(c.counts.frame.fallback_steps == fallback_before + (fallback ? parts : 0u));
    }
    build(c, s, SIM_PAIR_MAP_LTM, levels); /* the whole list again, for the checks below */
    ENSURE(c.counts.frame.triples_peak == c.counts.triples &&
           c.counts.frame.pairs_peak == c.counts.pairs);
    if (!energy) {
        return;
    }
    double e = 0.0;
    culled_args a = {c.triple_list.data(),
                     c.triple_cap,
                     c.pair_cap,
                     c.boxes.data(),
                     c.n_tiles,
                     c.limit,
                     &c.counts,
                     0u,
                     1u,
                     0u,
                     sim_period_to_float(scene_period(s))};
    c.counts.cursor = 0;
    launch(dim3(2), dim3(128), [&] {
        triplet_culled_kernel<true>(a, s.pos.data(), nullptr, &e, n, nu3, a2, box_of(s));
    });
    printf("  %-44s E %.9g, reference %.9g (%u tile triples)\n", "", e, e_ref, c.counts.triples);
    ENSURE_NEAR(e, e_ref, TOL_E * fabs(e_ref) + 1e-300);
}

static void test_lists(void) {
    check_lists("lattice cut-off 1.6", lattice(300, 1.0, 1.6, 5u), 1, true);
    check_lists("lattice cut-off 1.6", lattice(1601, 1.0, 1.6, 6u), 2, true);
    check_lists("lattice cut-off 4.5 (keeps many)", lattice(1601, 1.0, 4.5, 7u), 2, false);
    check_lists("lattice cut-off 0.5 (keeps few)", lattice(1601, 1.0, 0.5, 8u), 1, false);
    check_lists("integer grid cut-off 2", integer_grid(700, 9, 2.0), 1, true);
    check_lists("integer grid cut-off sqrt(8)", integer_grid(700, 9, sqrt(8.0)), 2, false);
}

static void test_overflow(void) {
    check_overflow(lattice(1601, 1.0, 1.6, 6u), 1);
    check_overflow(lattice(1601, 1.0, 1.6, 6u), 2);
}

static void test_kernel(void) {
    check_kernel("lattice N=170 cut-off 1.6", lattice(170, 1.0, 1.6, 9u), 0, 1, 15u, true);
    /* ties: sides exactly 2 and sqrt(8), equilateral (0,0,0) (2,2,0) (2,0,2) among them */
    check_kernel("integer grid N=150 cut-off 2", integer_grid(150, 6, 2.0), 0, 1, 3u, false);
    check_kernel("integer grid N=150 cut-off sqrt(8)", integer_grid(150, 6, sqrt(8.0)), 0, 2, 1u,
                 true);
    /* 130 tiles: the fallback's chunks of 128 tile pairs and batches of 128 K */
    check_kernel("130 clusters cut-off 3", clusters_on_a_line(130, 3.0), 32, 1, 10u, false);
}

/* A periodic box (issue 22): a 6 x 6 x 6 lattice of pitch 1 m centred in a box of side 6 m, so
 * that it continues across every face; cut-offs below and above a third of the period. The tile
 * triples found through images, and the culled kernel's forces (list, fallback, 3 parts) against
 * the double reference over all triples through minimum images. */
static void test_periodic(void) {
    static const int axes[2] = {7, 5};
    static const double cuts[2] = {1.6, 2.6};
    for (int k = 0; k < 2; ++k) {
        scene s = lattice(216, 1.0, cuts[k], 31u + (uint64_t)k);
        s.periodic = axes[k];
        s.half = 3.0;
        s.nu = 0.05;
        for (sim_vec4f &p : s.pos) {
            p.x -= 2.5f;
            p.y -= 2.5f;
            p.z -= 2.5f;
        }
        char label[64];
        snprintf(label, sizeof label, "periodic %d lattice cut-off %g", axes[k], cuts[k]);
        check_kernel(label, s, 0, k == 0 ? 1 : 2, 15u, true);
    }
}

static const ensure_test tests[] = {
    {"periodic", test_periodic},
    {"lists", test_lists},
    {"overflow", test_overflow},
    {"kernel", test_kernel},
};

ENSURE_MAIN(tests)
