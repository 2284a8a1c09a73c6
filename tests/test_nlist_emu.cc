/* SPDX-License-Identifier: MIT
 * nbsim — the neighbour lists' kernels (sim/nlist/nlist_kernels.cu), compiled from their own
 * source for the CPU and run under tests/cuda_emulation.h in the order a listed step launches them
 * (the culling passes, cull_kernels.cu's, replaced by the set of tile pairs whose boxes overlap:
 * what they produce, as tests/test_cpu_cull.c checks). Checked without a GPU, tiles of 32 and 64
 * (sub-tile pairs), half and full lists:
 *  - the boxes: each body's interval r + s/2 inside its tile's box; the build positions;
 *  - the lists, as sets per body, against every pair within reach by the same float test
 *    (sim_nlist_near_f): half lists j < i, full lists both ways; several ranks' rows add up;
 *  - the sweep's forces and energy against the double reference over all pairs, its contacts
 *    against every touching pair, its counts (tests, touching pairs, the most entries);
 *  - after every body moved by up to half the skin: the old lists still exact (forces, contacts);
 *  - lists too short (overflow): every count exact, nothing written past the capacity, and the
 *    sweep's fallback over the tile pairs (and over the simplex's rows when that list overflowed
 *    too) exact;
 *  - the drift's check: the flag raised by a body that moved more than half the skin, and only
 *    then; the forces cleared.
 * What it cannot see: the GPU's scheduling and atomics under contention, timing;
 * tests/test_gpu_nlist.c runs the whole backend on a device. */
#include <cuda_runtime.h>

#include "cuda_emulation.h"

#define SIM_NLIST_KERNELS_ONLY
#include "nlist/nlist_kernels.cu"

#include <algorithm>
#include <set>
#include <type_traits>
#include <vector>

#include "ensure.h"
#include "test_atm_emu.h"

static uint64_t schedule_seed = 5;

static bool launch(dim3 grid, dim3 block, const std::function<void()> &f) {
    return emu_launch(grid, block, &schedule_seed, f);
}

static const float kNaN = __builtin_nanf("");

/* Bodies of radii 0.35-0.5 m in a cube of half-width h (dense: many contacts), sorted along the
 * Morton curve so tiles are compact; exact floats, velocities ~1 m/s, masses 0.5-2 kg. */
struct bodies {
    std::vector<sim_vec4f> pos, vel;
};

/* b in Morton order (as the backend keeps its bodies between sorts), within a box of half side
 * h + 1. */
static bodies morton_sorted(const bodies &b, float h) {
    const uint32_t n = (uint32_t)b.pos.size();
    const float half = h + 1.0f, scale = (float)SIM_MORTON_CELLS / (2.0f * half);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t c) {
        const sim_vec4f &p = b.pos[a], &q = b.pos[c];
        return sim_morton_key(p.x, p.y, p.z, half, scale) <
               sim_morton_key(q.x, q.y, q.z, half, scale);
    });
    bodies s;
    for (uint32_t k : order) {
        s.pos.push_back(b.pos[k]);
        s.vel.push_back(b.vel[k]);
    }
    return s;
}

static bodies make_bodies(uint32_t n, float h, uint64_t seed) {
    bodies b;
    for (uint32_t i = 0; i < n; ++i) {
        b.pos.push_back(sim_vec4f{(float)test_rnd(&seed, -h, h), (float)test_rnd(&seed, -h, h),
                                  (float)test_rnd(&seed, -h, h),
                                  (float)test_rnd(&seed, 0.35, 0.5)});
        b.vel.push_back(sim_vec4f{(float)test_rnd(&seed, -1, 1), (float)test_rnd(&seed, -1, 1),
                                  (float)test_rnd(&seed, -1, 1), (float)test_rnd(&seed, 0.5, 2)});
    }
    return morton_sorted(b, h);
}

/* n / 2 pairs at rest, each pair barely touching (centres (r_a + r_b)(1 - 2^-18) apart), half of
 * them along a near-diagonal (the corners of the cells around a body: what a walk that skips
 * cells must still reach), radii 0.35 to 0.5, the first body anywhere in [-h, h]^3. */
static bodies make_touching_pairs(uint32_t n, float h, uint64_t seed) {
    bodies b;
    for (uint32_t k = 0; k + 1 < n; k += 2) {
        const double ra = test_rnd(&seed, 0.35, 0.5), rb = test_rnd(&seed, 0.35, 0.5);
        double d[3], norm = 0.0;
        for (int a = 0; a < 3; ++a) {
            const double corner = (test_rnd(&seed, -1, 1) < 0 ? -1.0 : 1.0) +
                                  test_rnd(&seed, -0.1, 0.1);
            d[a] = k % 4 == 0 ? corner : test_rnd(&seed, -1, 1);
            norm += d[a] * d[a];
        }
        const double scale = (ra + rb) * (1.0 - 0x1p-18) / sqrt(norm);
        const double x = test_rnd(&seed, -h, h), y = test_rnd(&seed, -h, h),
                     z = test_rnd(&seed, -h, h);
        b.pos.push_back(sim_vec4f{(float)x, (float)y, (float)z, (float)ra});
        b.pos.push_back(sim_vec4f{(float)(x + d[0] * scale), (float)(y + d[1] * scale),
                                  (float)(z + d[2] * scale), (float)rb});
        for (int q = 0; q < 2; ++q) {
            b.vel.push_back(sim_vec4f{0.0f, 0.0f, 0.0f, (float)test_rnd(&seed, 0.5, 2)});
        }
    }
    return morton_sorted(b, h);
}

constexpr uint32_t kGuard = 64;
constexpr uint32_t kSentinel = 0xdeadbeefu;

/* The device state of a listed step (sim_gpu_cull's parts the kernels use, and sim_gpu_nlist),
 * as host vectors; the entries have kGuard sentinels past their end. */
struct state {
    uint32_t n, tile, n_tiles, n_supers, cap, stride, tile_cap;
    bool half;
    float skin;
    std::vector<sim_cull_box> boxes, supers;
    std::vector<sim_tile2> tiles;
    sim_gpu_cull_counts cc;
    std::vector<uint32_t> nbr, count;
    std::vector<sim_vec4f> ref;
    sim_gpu_nlist_counts nc;
    /* a grid build's cells (grid.cells 0: built from the tile pairs) */
    sim_cell_grid grid;
    std::vector<sim_cell_range> cell;
    std::vector<uint32_t> cell_body, body_cell, body_rank, fill;
    std::vector<sim_vec4f> cell_pos, cell_vel;
    bool direct = false; /* swept from the cells: the scatter writes cell_vel */

    nl::cell_view cells() {
        nl::cell_view v;
        v.g = grid;
        v.cell = cell.data();
        v.cell_body = cell_body.data();
        v.body_cell = body_cell.data();
        v.body_rank = body_rank.data();
        v.cell_pos = cell_pos.data();
        v.fill = fill.data();
        v.cell_vel = direct ? cell_vel.data() : nullptr;
        return v;
    }

    state(uint32_t bodies_n, uint32_t tile_size, uint32_t capacity, bool half_lists, float s) {
        n = bodies_n;
        tile = tile_size;
        n_tiles = (n + tile - 1) / tile;
        n_supers = (n_tiles + SIM_CULL_SUPER - 1) / SIM_CULL_SUPER;
        cap = capacity;
        stride = sim_nlist_stride(n);
        half = half_lists;
        skin = s;
        boxes.resize(n_tiles);
        supers.resize(n_supers);
        memset(&cc, 0, sizeof cc);
        memset(&nc, 0, sizeof nc);
        nbr.assign((size_t)cap * stride + kGuard, kSentinel);
        count.assign(n, 12345u);
        ref.assign(n, sim_vec4f{kNaN, kNaN, kNaN, kNaN});
        tile_cap = 1u << 30;
        memset(&grid, 0, sizeof grid);
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

/* A rebuild as the step launches it: boxes (forced), the culling passes' result (every tile pair
 * whose boxes overlap, of rows [row0, row1)), the build. tile_cap < the pairs: the list holds only
 * that many, the count all of them (the build then walks the rows). */
static void rebuild(state &st, const bodies &b, uint32_t row0 = 0, uint32_t row1 = UINT32_MAX) {
    row1 = row1 < st.n_tiles ? row1 : st.n_tiles;
    launch(dim3(st.n_supers), dim3(nl::kBoxWarps * 32), [&] {
        nl::boxes_kernel(b.pos.data(), st.n, st.tile, st.n_tiles, 0.5f * st.skin, st.boxes.data(),
                         st.supers.data(), &st.cc, st.ref.data(), st.count.data(), &st.nc,
                         SIM_GPU_NLIST_REBUILD | SIM_GPU_CULL_RECORD);
    });
    ENSURE(st.nc.rebuild == 1u && st.cc.tiles == 0u);
    std::vector<sim_tile2> all;
    for (uint32_t i = row0; i < row1; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            if (sim_cull_overlap(&st.boxes[i], &st.boxes[j])) {
                all.push_back(sim_tile2{i, j});
            }
        }
    }
    st.cc.tiles = (uint32_t)all.size();
    st.tiles.assign(all.begin(), all.begin() + std::min<size_t>(all.size(), st.tile_cap));
    st.tiles.resize(st.tiles.size() + kGuard, sim_tile2{kSentinel, kSentinel});
    launch(dim3(3), dim3(nl::kBuildWarps * 32), [&] {
        nl::build_kernel(b.pos.data(), st.n, st.tile, st.boxes.data(), st.tiles.data(), st.tile_cap,
                         &st.cc, row0, row1, st.skin, st.nbr.data(), st.count.data(), st.stride,
                         st.cap, !st.half, &st.nc, SIM_GPU_CULL_RECORD);
    });
}

/* Every pair within reach by the kernels' float test, as the lists must hold them: half lists
 * j < i in i's, full lists j != i; only pairs whose larger slot's tile is in [row0, row1) (rows
 * of a rank: half lists i's tile, full lists the pair's larger one). */
static std::vector<std::set<uint32_t>>
expected_lists(const state &st, const bodies &b, uint32_t row0 = 0, uint32_t row1 = UINT32_MAX) {
    std::vector<std::set<uint32_t>> want(st.n);
    for (uint32_t i = 0; i < st.n; ++i) {
        const uint32_t ti = i / st.tile;
        if (ti < row0 || ti >= row1) {
            continue;
        }
        for (uint32_t j = 0; j < i; ++j) {
            if (sim_nlist_near_f(b.pos[i], b.pos[j], st.skin)) {
                want[i].insert(j);
                if (!st.half) {
                    want[j].insert(i);
                }
            }
        }
    }
    return want;
}

static void check_lists(const state &st, const bodies &b, const char *what, uint32_t row0 = 0,
                        uint32_t row1 = UINT32_MAX) {
    const std::vector<std::set<uint32_t>> want = expected_lists(st, b, row0, row1);
    uint32_t most = 0, wrong = 0;
    for (uint32_t i = 0; i < st.n; ++i) {
        most = std::max(most, st.count[i]);
        std::set<uint32_t> got;
        for (uint32_t k = 0; k < std::min(st.count[i], st.cap); ++k) {
            got.insert(st.nbr[(size_t)k * st.stride + i]);
        }
        const bool complete = st.count[i] <= st.cap;
        const bool ok =
            st.count[i] == want[i].size() &&
            (complete ? got == want[i]
                      : std::includes(want[i].begin(), want[i].end(), got.begin(), got.end()) &&
                            got.size() == st.cap);
        wrong += !ok;
    }
    ENSURE_MSG(wrong == 0, "%s: %u bodies' lists wrong", what, wrong);
    ENSURE_MSG(st.guards_intact(), "%s: written past the entries", what);
    ENSURE_MSG((st.nc.overflow != 0u) == (most > st.cap), "%s: overflow %u, most %u, cap %u", what,
               st.nc.overflow, most, st.cap);
}

/* ---- the sweep ---- */

static nl::tile_pairs fallback_of(state &st, uint32_t row0 = 0, uint32_t row1 = UINT32_MAX) {
    nl::tile_pairs fb;
    fb.boxes = st.boxes.data();
    fb.list = st.tiles.data();
    fb.cap = st.tile_cap;
    fb.cc = &st.cc;
    fb.row0 = row0;
    fb.row1 = row1 < st.n_tiles ? row1 : st.n_tiles;
    fb.tile = st.tile;
    return fb;
}

static sim_physics_f physics() {
    sim_params p = sim_params_default();
    p.restitution = 0.7;
    sim_physics ph = sim_physics_from_params(&p);
    ph.normal.inv_dt = 1.0 / 1e-4;
    return sim_physics_to_float(&ph);
}

static sim_physics physics_d() {
    sim_params p = sim_params_default();
    p.restitution = 0.7;
    sim_physics ph = sim_physics_from_params(&p);
    ph.normal.inv_dt = 1.0 / 1e-4;
    return ph;
}

/* The forces the sweep adds to cleared forces (its MODE kForce), grids of 256. */
template <bool HALF>
static std::vector<sim_vec4f> sweep_forces(state &st, const bodies &b, uint32_t row0 = 0,
                                           uint32_t row1 = UINT32_MAX) {
    std::vector<sim_vec4f> f(st.n, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
    const sim_physics_f ph = physics();
    const nl::sweep_sink sink = {};
    st.nc.rebuild = 1u;
    launch(dim3((st.n + 255) / 256), dim3(256), [&] {
        nl::sweep_kernel<nl::kForce, HALF>(
            b.pos.data(), b.vel.data(), f.data(), st.n, st.nbr.data(), st.count.data(), st.stride,
            st.cap, &st.nc, fallback_of(st, row0, row1), st.cells(), ph, sink, SIM_GPU_CULL_RECORD, 1);
    });
    ENSURE(st.nc.rebuild == 0u); /* the sweep lowers the flag */
    return f;
}

static std::vector<sim_vec4f> sweep(state &st, const bodies &b, uint32_t row0 = 0,
                                    uint32_t row1 = UINT32_MAX) {
    return st.half ? sweep_forces<true>(st, b, row0, row1) : sweep_forces<false>(st, b, row0, row1);
}

/* Contact forces and energy over all pairs, double. */
static double reference(const bodies &b, std::vector<sim_vec3d> &f, uint64_t *touching) {
    const sim_physics ph = physics_d();
    f.assign(b.pos.size(), sim_vec3d{0.0, 0.0, 0.0});
    double e = 0.0;
    *touching = 0;
    for (size_t i = 0; i < b.pos.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            const sim_vec3d fij = sim_contact_force_d(to_d(b.pos[i]), to_d(b.vel[i]),
                                                      to_d(b.pos[j]), to_d(b.vel[j]), &ph, &e);
            f[i].x += fij.x, f[i].y += fij.y, f[i].z += fij.z;
            f[j].x -= fij.x, f[j].y -= fij.y, f[j].z -= fij.z;
            *touching += nl::touching(b.pos[i], b.pos[j]);
        }
    }
    return e;
}

static void check_forces(const std::vector<sim_vec4f> &g, const bodies &b, const char *what) {
    std::vector<sim_vec3d> ref;
    uint64_t touching = 0;
    (void)reference(b, ref, &touching);
    const force_error e = force_error_of(g, ref);
    printf("  %-52s F rel %.1e, worst body %.1e\n", what, e.rel, e.worst);
    ENSURE_MSG(e.ref_l2 > 0.0 && touching > 0, "%s: nothing touches", what);
    ENSURE_MSG(e.rel <= 1e-5 && e.worst <= 1e-4, "%s: rel %.3g, worst body %.3g", what, e.rel,
               e.worst);
}

static uint64_t slots(const unsigned long long *v) {
    uint64_t s = 0;
    for (int k = 0; k < SIM_GPU_COUNT_SLOTS; ++k) {
        s += v[k];
    }
    return s;
}

/* Contacts and energy modes, against the reference. */
/* What a kContacts sweep emits: room for 65,536 pairs, their count, and the pairs as a set. */
struct contacts_out {
    std::vector<sim_body_pair> out = std::vector<sim_body_pair>(1u << 16);
    uint32_t found = 0;
    nl::sweep_sink sink() {
        nl::sweep_sink s = {};
        s.out = out.data();
        s.out_cap = (uint32_t)out.size();
        s.out_count = &found;
        return s;
    }
    std::set<std::pair<uint32_t, uint32_t>> pairs() const {
        std::set<std::pair<uint32_t, uint32_t>> got;
        for (uint32_t k = 0; k < found && k < out.size(); ++k) {
            got.insert({out[k].i, out[k].j});
        }
        return got;
    }
};

template <bool HALF> static void check_hooks(state &st, const bodies &b, const char *what) {
    contacts_out c;
    const nl::sweep_sink sink = c.sink();
    const uint32_t &found = c.found;
    const sim_physics_f ph = physics();
    launch(dim3((st.n + 255) / 256), dim3(256), [&] {
        nl::sweep_kernel<nl::kContacts, HALF>(b.pos.data(), b.vel.data(), nullptr, st.n,
                                              st.nbr.data(), st.count.data(), st.stride, st.cap,
                                              &st.nc, fallback_of(st), st.cells(), ph, sink, 0u, 0);
    });
    const std::set<std::pair<uint32_t, uint32_t>> got = c.pairs();
    std::set<std::pair<uint32_t, uint32_t>> want;
    for (uint32_t i = 0; i < st.n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            if (nl::touching(b.pos[i], b.pos[j])) {
                want.insert({i, j});
            }
        }
    }
    ENSURE_MSG(found == want.size() && got == want, "%s: %u contacts, %zu touching", what, found,
               want.size());
    double e = 0.0;
    nl::sweep_sink energy = {};
    energy.energy = &e;
    launch(dim3((st.n + 255) / 256), dim3(256), [&] {
        nl::sweep_kernel<nl::kEnergy, HALF>(b.pos.data(), b.vel.data(), nullptr, st.n,
                                            st.nbr.data(), st.count.data(), st.stride, st.cap,
                                            &st.nc, fallback_of(st), st.cells(), ph, energy, 0u,
                                            0);
    });
    std::vector<sim_vec3d> ref;
    uint64_t touching = 0;
    const double er = reference(b, ref, &touching);
    ENSURE_MSG(fabs(e - er) <= 1e-4 * fabs(er) && er > 0.0, "%s: energy %.9g, reference %.9g", what,
               e, er);
}

static void check_hooks(state &st, const bodies &b, const char *what) {
    if (st.half) {
        check_hooks<true>(st, b, what);
    } else {
        check_hooks<false>(st, b, what);
    }
}

/* ---- the tests ---- */

static const uint32_t kN = 700;

/* Lists, forces, counts, contacts and energy after a build: tiles 32 and 64, half and full. */
static void test_build_and_sweep(void) {
    const bodies b = make_bodies(kN, 7.0f, 3);
    for (uint32_t tile : {32u, 64u}) {
        for (bool half : {false, true}) {
            char what[96];
            snprintf(what, sizeof what, "tile %u, %s lists", tile, half ? "half" : "full");
            state st(kN, tile, 64, half, 0.3f);
            rebuild(st, b);
            for (uint32_t i = 0; i < kN; ++i) { /* the build positions, each body in its box */
                const sim_cull_box &box = st.boxes[i / tile];
                const sim_vec4f p = b.pos[i];
                ENSURE(memcmp(&st.ref[i], &p, sizeof p) == 0);
                ENSURE(nl::meets(p, sim_nlist_width_f(p.w, 0.5f * st.skin), box));
                ENSURE(box.lo.x <= p.x - p.w - 0.15f && p.x + p.w + 0.15f <= box.hi.x);
            }
            ENSURE(st.nc.frame.rebuilds == 1u && st.cc.frame.tiles_peak == st.cc.tiles);
            check_lists(st, b, what);
            uint64_t entries = 0;
            uint32_t most = 0;
            for (uint32_t i = 0; i < kN; ++i) {
                entries += st.count[i];
                most = std::max(most, st.count[i]);
            }
            const std::vector<sim_vec4f> f = sweep(st, b);
            check_forces(f, b, what);
            std::vector<sim_vec3d> ref;
            uint64_t touching = 0;
            (void)reference(b, ref, &touching);
            ENSURE_MSG(
                slots(st.nc.frame.tests) == entries && slots(st.nc.frame.contacts) == touching,
                "%s: tests %llu of %llu, contacts %llu of %llu", what,
                (unsigned long long)slots(st.nc.frame.tests), (unsigned long long)entries,
                (unsigned long long)slots(st.nc.frame.contacts), (unsigned long long)touching);
            ENSURE(st.nc.most == most && st.nc.frame.peak == most &&
                   st.nc.frame.fallback_steps == 0);
            check_hooks(st, b, what);
        }
    }
}

/* b with each body moved in a random direction by up to 0.999 h. */
static bodies moved_within(const bodies &b, float h, uint64_t seed) {
    bodies moved = b;
    for (sim_vec4f &p : moved.pos) {
        double d[3], len = 0.0;
        for (double &c : d) {
            c = test_rnd(&seed, -1.0, 1.0);
            len += c * c;
        }
        const double scale = test_rnd(&seed, 0.0, 0.999) * h / sqrt(len);
        p.x = (float)(p.x + d[0] * scale);
        p.y = (float)(p.y + d[1] * scale);
        p.z = (float)(p.z + d[2] * scale);
    }
    return moved;
}

/* Bodies moved by up to half the skin since the build: the lists still hold every contact. */
static void test_moved_within_half_skin(void) {
    bodies b = make_bodies(kN, 7.0f, 4);
    for (bool half : {false, true}) {
        state st(kN, 32, 64, half, 0.2f);
        rebuild(st, b);
        const float h = 0.5f * st.skin;
        bodies moved = moved_within(b, h, 99);
        uint32_t flag = 0;
        launch(dim3((kN + 255) / 256), dim3(256),
               [&] { nl::check_kernel(moved.pos.data(), kN, st.ref.data(), h * h, &flag); });
        ENSURE(flag == 0u);
        check_forces(sweep(st, moved), moved, half ? "moved < s/2, half" : "moved < s/2, full");
        check_hooks(st, moved, "moved < s/2");
        /* one body past half the skin: the check raises the flag */
        moved.pos[kN / 3].y += 1.01f * h;
        launch(dim3((kN + 255) / 256), dim3(256),
               [&] { nl::check_kernel(moved.pos.data(), kN, st.ref.data(), h * h, &flag); });
        ENSURE(flag == 1u);
    }
}

/* Lists of 3 entries: counts exact, nothing past them, the overflow raised; the sweep falls back
 * to the tile pairs (and, their list too short as well, to the simplex's rows): exact. */
static void test_overflow(void) {
    const bodies b = make_bodies(kN, 6.0f, 5);
    for (uint32_t tile : {32u, 64u}) {
        for (bool half : {false, true}) {
            for (uint32_t tile_cap : {1u << 30, 5u}) {
                char what[96];
                snprintf(what, sizeof what, "overflow: tile %u, %s, tile list %s", tile,
                         half ? "half" : "full", tile_cap == 5u ? "short" : "whole");
                state st(kN, tile, 3, half, 0.25f);
                st.tile_cap = tile_cap;
                rebuild(st, b);
                ENSURE(st.nc.overflow == 1u);
                check_lists(st, b, what);
                ENSURE((st.cc.frame.fallback_steps == 1u) == (tile_cap == 5u));
                const std::vector<sim_vec4f> f = sweep(st, b);
                check_forces(f, b, what);
                uint32_t most = 0;
                for (uint32_t i = 0; i < kN; ++i) {
                    most = std::max(most, st.count[i]);
                }
                ENSURE_MSG(st.nc.frame.fallback_steps == 1u && st.nc.most == most &&
                               st.nc.frame.peak == most && most > st.cap,
                           "%s: most %u (%u counted), peak %u", what, st.nc.most, most,
                           st.nc.frame.peak);
                ENSURE(slots(st.nc.frame.tests) ==
                       (uint64_t)(tile_cap == 5u ? sim_map_t2(st.n_tiles) : st.cc.tiles) * tile *
                           tile);
                check_hooks(st, b, what);
            }
        }
    }
}

/* Ranks: each builds the lists of its tile rows and sweeps them; the forces add up. */
static void test_rows(void) {
    const bodies b = make_bodies(kN, 7.0f, 6);
    for (bool half : {false, true}) {
        std::vector<sim_vec4f> total(kN, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
        const uint32_t cuts[3] = {0, 9, 1u << 30};
        for (int r = 0; r < 2; ++r) {
            state st(kN, 32, 64, half, 0.3f);
            rebuild(st, b, cuts[r], cuts[r + 1]);
            check_lists(st, b, half ? "rows, half" : "rows, full", cuts[r], cuts[r + 1]);
            const std::vector<sim_vec4f> f = sweep(st, b, cuts[r], cuts[r + 1]);
            for (uint32_t i = 0; i < kN; ++i) {
                total[i].x += f[i].x, total[i].y += f[i].y, total[i].z += f[i].z;
            }
        }
        check_forces(total, b, half ? "two ranks' rows, half" : "two ranks' rows, full");
    }
}

/* The drift: the first half kick and drift of verlet_first, the flag raised only by a body that
 * moved more than half the skin, the forces cleared. */
static void test_drift(void) {
    bodies b = make_bodies(300, 6.0f, 7);
    std::vector<sim_vec4f> ref = b.pos, force(300, sim_vec4f{1.0f, -2.0f, 0.5f, 0.0f});
    const float dt = 1e-3f, h = 0.05f;
    uint32_t flag = 0;
    std::vector<sim_vec4f> pos = b.pos, vel = b.vel;
    launch(dim3(2), dim3(256), [&] {
        nl::drift_kernel(pos.data(), vel.data(), force.data(), 300, dt, ref.data(), h * h, &flag);
    });
    ENSURE(flag == 0u);
    for (uint32_t i = 0; i < 300; ++i) {
        sim_vec4f p = b.pos[i], v = b.vel[i];
        sim_verlet_first_f(&p, &v, sim_vec3f{1.0f, -2.0f, 0.5f}, dt);
        ENSURE(memcmp(&p, &pos[i], sizeof p) == 0 && memcmp(&v, &vel[i], sizeof v) == 0);
        ENSURE(force[i].x == 0.0f && force[i].y == 0.0f && force[i].z == 0.0f);
    }
    ref[123].x -= 2.0f * h;
    launch(dim3(2), dim3(256), [&] {
        nl::drift_kernel(pos.data(), vel.data(), force.data(), 300, dt, ref.data(), h * h, &flag);
    });
    ENSURE(flag == 1u);
    /* periodic x and z: the drift wraps the centres into the box in its pass (the WRAP phase),
     * the bits of the walls' drift then sim_wrap_in_f, the check on the drifted centre */
    sim_period_f per = sim_period_f();
    per.len[0] = per.len[2] = 12.0f;
    per.inv[0] = per.inv[2] = 1.0f / 12.0f;
    std::vector<sim_vec4f> pw = b.pos, vw = b.vel, fw(300, sim_vec4f{1.0f, -2.0f, 0.5f, 0.0f});
    for (uint32_t i = 0; i < 300; i += 3) {
        pw[i].x = 6.0f - 1e-4f; /* at the face, moving out through it */
        vw[i].x = 2.0f;
        pw[i + 1].z = -6.0f + 1e-4f;
        vw[i + 1].z = -2.0f;
    }
    std::vector<sim_vec4f> pw0 = pw, vw0 = vw, rw = pw;
    flag = 0;
    launch(dim3(2), dim3(256), [&] {
        nl::drift_kernel(pw.data(), vw.data(), fw.data(), 300, dt, rw.data(), h * h, &flag, per);
    });
    ENSURE(flag == 0u);
    uint32_t wrapped = 0;
    for (uint32_t i = 0; i < 300; ++i) {
        sim_vec4f p = pw0[i], v = vw0[i];
        sim_verlet_first_f(&p, &v, sim_vec3f{1.0f, -2.0f, 0.5f}, dt);
        wrapped += fabsf(p.x) > 6.0f || fabsf(p.z) > 6.0f;
        sim_wrap_in_f(&p, &per);
        ENSURE(memcmp(&p, &pw[i], sizeof p) == 0 && memcmp(&v, &vw[i], sizeof v) == 0);
        ENSURE(fabsf(pw[i].x) <= 6.0f && fabsf(pw[i].z) <= 6.0f);
    }
    ENSURE(wrapped >= 150);
    /* with friction the spin's first half kick in the same pass, the bits of friction_kernels.cu's
     * kick_kernel (sim_verlet_spin_f by the body's radius and mass) */
    std::vector<sim_vec4f> ps = b.pos, vs = b.vel, fs(300, sim_vec4f{1.0f, -2.0f, 0.5f, 0.0f});
    std::vector<sim_vec4f> spin(300), torque(300);
    for (uint32_t i = 0; i < 300; ++i) {
        spin[i] = sim_vec4f{0.1f * (float)i, -0.2f, 0.3f, 0.0f};
        torque[i] = sim_vec4f{0.5f, 0.01f * (float)i, -0.25f, 0.0f};
    }
    const std::vector<sim_vec4f> spin0 = spin;
    std::vector<sim_vec4f> rs = ps;
    flag = 0;
    launch(dim3(2), dim3(256), [&] {
        nl::drift_kernel(ps.data(), vs.data(), fs.data(), 300, dt, rs.data(), h * h, &flag,
                         sim_period_f(), spin.data(), torque.data());
    });
    for (uint32_t i = 0; i < 300; ++i) {
        sim_vec3f w = {spin0[i].x, spin0[i].y, spin0[i].z};
        sim_verlet_spin_f(&w, sim_vec3f{torque[i].x, torque[i].y, torque[i].z}, b.pos[i],
                          b.vel[i].w, dt);
        ENSURE(w.x == spin[i].x && w.y == spin[i].y && w.z == spin[i].z && spin[i].w == 0.0f);
    }
    ENSURE(spin[7].x != spin0[7].x); /* it moved */
}

/* Contact forces over all pairs in double under physics ph (walls or periodic axes). */
static std::vector<sim_vec3d> reference_in(const bodies &b, const sim_physics &ph) {
    const size_t n = b.pos.size();
    std::vector<sim_vec3d> f(n, sim_vec3d{0.0, 0.0, 0.0});
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < i; ++j) {
            const sim_vec3d fij = sim_contact_force_d(to_d(b.pos[i]), to_d(b.vel[i]),
                                                      to_d(b.pos[j]), to_d(b.vel[j]), &ph, nullptr);
            f[i].x += fij.x, f[i].y += fij.y, f[i].z += fij.z;
            f[j].x -= fij.x, f[j].y -= fij.y, f[j].z -= fij.z;
        }
    }
    return f;
}

/* A periodic box (issue 22), all axes and x and z: bodies dense against every face (the box of
 * half-width 5 m filled edge to edge), tile pairs culled through images (sim_cull_overlap_p), the
 * lists built through them, each holding exactly the pairs near through their minimum image; the
 * sweep's forces are the double reference's through minimum images; a body wrapped across a face
 * by less than half the skin is not "moved", one moved past it is. Then the same with every body
 * moved 0.7 m along +x and wrapped, in the sorted order (the tiles at the face have bodies on both
 * sides of it, as between two sorts): the boxes of images nearest each tile's first body stay as
 * narrow as the sorted ones (cull.h), some marked (lo.w: a body at another image). */
static void test_periodic(void) {
    const float h = 5.0f;
    std::vector<float> sorted_width[2]; /* per tile on x, axes 5, full and half lists */
    for (int axes : {7, 5, -5}) {
        bodies b = make_bodies(kN, h, 8u + (uint64_t)(axes < 0 ? -axes : axes));
        const bool slid = axes < 0;
        axes = axes < 0 ? -axes : axes;
        if (slid) {
            for (sim_vec4f &q : b.pos) {
                q.x += 0.7f;
                q.x = q.x > h ? q.x - 2.0f * h : q.x;
            }
        }
        sim_params p = sim_params_default();
        p.restitution = 0.7;
        p.box_half = h;
        p.periodic = axes;
        sim_physics phd = sim_physics_from_params(&p);
        phd.normal.inv_dt = 1.0 / 1e-4;
        const sim_physics_f ph = sim_physics_to_float(&phd);
        const sim_period_f per = ph.box.period;
        for (bool half : {false, true}) {
            char what[96];
            snprintf(what, sizeof what, "periodic %d, %s lists", axes, half ? "half" : "full");
            state st(kN, 32, 96, half, 0.3f);
            launch(dim3(st.n_supers), dim3(nl::kBoxWarps * 32), [&] {
                nl::boxes_kernel(b.pos.data(), st.n, st.tile, st.n_tiles, 0.5f * st.skin,
                                 st.boxes.data(), st.supers.data(), &st.cc, st.ref.data(),
                                 st.count.data(), &st.nc,
                                 SIM_GPU_NLIST_REBUILD | SIM_GPU_CULL_RECORD, per);
            });
            /* a tile whose centres span less than half the period when sorted (its box less
             * than that plus twice the least interval half-width, 0.35 m + the pad 0.15 m: its
             * images nearest any of its bodies are the sorted blob) is as narrow after the
             * slide */
            std::vector<float> &sw = sorted_width[half];
            uint32_t marked = 0, wider = 0, compact = 0;
            for (uint32_t t = 0; t < st.n_tiles; ++t) {
                const float w = st.boxes[t].hi.x - st.boxes[t].lo.x;
                marked += st.boxes[t].lo.w != 0.0f;
                if (axes == 5 && !slid) {
                    sw.push_back(w);
                } else if (slid && sw[t] < h + 1.0f) {
                    ++compact;
                    wider += w > sw[t] + 1e-3f;
                }
            }
            ENSURE_MSG(!slid || (marked > 0u && compact > 0u && wider == 0u),
                       "%s%s: %u boxes marked, %u of %u compact tiles wider", what,
                       slid ? " slid" : "", marked, wider, compact);
            std::vector<sim_tile2> all;
            uint32_t across = 0; /* tile pairs that meet only through an image */
            for (uint32_t i = 0; i < st.n_tiles; ++i) {
                for (uint32_t j = 0; j <= i; ++j) {
                    if (sim_cull_overlap_p(&st.boxes[i], &st.boxes[j], &per)) {
                        all.push_back(sim_tile2{i, j});
                        across += !sim_cull_overlap(&st.boxes[i], &st.boxes[j]);
                    }
                }
            }
            ENSURE(across > 0);
            st.cc.tiles = (uint32_t)all.size();
            st.tiles.assign(all.begin(), all.end());
            st.tiles.resize(st.tiles.size() + kGuard, sim_tile2{kSentinel, kSentinel});
            launch(dim3(3), dim3(nl::kBuildWarps * 32), [&] {
                nl::build_kernel(b.pos.data(), st.n, st.tile, st.boxes.data(), st.tiles.data(),
                                 st.tile_cap, &st.cc, 0, st.n_tiles, st.skin, st.nbr.data(),
                                 st.count.data(), st.stride, st.cap, !st.half, &st.nc,
                                 SIM_GPU_CULL_RECORD, per);
            });
            uint32_t wrong = 0, images = 0;
            for (uint32_t i = 0; i < st.n; ++i) {
                std::set<uint32_t> want, got;
                for (uint32_t j = 0; j < st.n; ++j) {
                    if (j != i && (half ? j < i : true) &&
                        sim_nlist_near_pf(b.pos[i], b.pos[j], st.skin, &per)) {
                        want.insert(j);
                        images += !sim_nlist_near_f(b.pos[i], b.pos[j], st.skin);
                    }
                }
                for (uint32_t k = 0; k < std::min(st.count[i], st.cap); ++k) {
                    got.insert(st.nbr[(size_t)k * st.stride + i]);
                }
                wrong += got != want || st.count[i] != want.size();
            }
            ENSURE_MSG(wrong == 0 && images > 0 && st.nc.overflow == 0u,
                       "%s: %u bodies' lists wrong (%u neighbours through images)", what, wrong,
                       images);
            /* the sweep (and its fallback over the tile pairs) against minimum-image forces */
            for (int fallback = 0; fallback < 2; ++fallback) {
                std::vector<sim_vec4f> f(st.n, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
                st.nc.overflow = (uint32_t)fallback;
                launch(dim3((st.n + 255) / 256), dim3(256), [&] {
                    if (half) {
                        nl::sweep_kernel<nl::kForce, true>(
                            b.pos.data(), b.vel.data(), f.data(), st.n, st.nbr.data(),
                            st.count.data(), st.stride, st.cap, &st.nc, fallback_of(st), st.cells(),
                            ph, nl::sweep_sink{}, 0u, 0);
                    } else {
                        nl::sweep_kernel<nl::kForce, false>(
                            b.pos.data(), b.vel.data(), f.data(), st.n, st.nbr.data(),
                            st.count.data(), st.stride, st.cap, &st.nc, fallback_of(st), st.cells(),
                            ph, nl::sweep_sink{}, 0u, 0);
                    }
                });
                const std::vector<sim_vec3d> ref = reference_in(b, phd);
                const force_error e = force_error_of(f, ref);
                printf("  %-52s F rel %.1e, worst body %.1e%s\n", what, e.rel, e.worst,
                       fallback ? " (fallback)" : "");
                ENSURE_MSG(e.ref_l2 > 0.0 && e.rel <= 1e-5 && e.worst <= 1e-4,
                           "%s%s: rel %.3g, worst body %.3g", what, fallback ? " fallback" : "",
                           e.rel, e.worst);
            }
            st.nc.overflow = 0u;
            /* wrapped across a face: not moved; moved past half the skin: moved */
            bodies moved = b;
            const float hs = 0.5f * st.skin;
            uint32_t wrapped = 0;
            for (sim_vec4f &q : moved.pos) {
                if (q.x > h - 0.05f) {
                    q.x = q.x + 0.1f - 2.0f * h; /* 0.1 m on, through the face at +h */
                    ++wrapped;
                }
            }
            uint32_t flag = 0;
            launch(dim3((kN + 255) / 256), dim3(256), [&] {
                nl::check_kernel(moved.pos.data(), kN, st.ref.data(), hs * hs, &flag, per);
            });
            ENSURE(wrapped > 0 && flag == 0u);
            moved.pos[kN / 2].z += 1.01f * hs;
            launch(dim3((kN + 255) / 256), dim3(256), [&] {
                nl::check_kernel(moved.pos.data(), kN, st.ref.data(), hs * hs, &flag, per);
            });
            ENSURE(flag == 1u);
        }
    }
}

/* The lists' guarantee across the faces of a periodic box, by adversarial search: a pair the
 * build left out (sim_nlist_near_pf false) whose bodies then each moved no more than half the
 * skin as the drift's check sees it (sim_nlist_moved_pf false), each wrapped back into the box,
 * must not touch by the sweep's test (nl::touching). Pairs are placed across a face, an edge or
 * a corner of a box of period 20 m, at the build's reach to within a few ulp of the period, and
 * moved by half the skin to within as much straight at each other. Near the faces every image is
 * rounded at the period's magnitude (~1e-6 m here), which the bare reach factor (relative
 * 2^-19 of ~0.5 m) does not cover: without nlist.h's image slack this finds pairs that touch
 * unlisted (the first GPU run's missing pair in 1000 steps of a fast gas on the faces). */
static void test_periodic_margin(void) {
    const float h = 10.0f, skin = 0.15f, hs = 0.5f * skin;
    sim_period_f per;
    for (int k = 0; k < 3; ++k) {
        per.len[k] = 2.0f * h;
        per.inv[k] = 1.0f / per.len[k];
    }
    uint64_t rng = 99;
    auto rnd = [&rng](double lo, double hi) { return test_rnd(&rng, lo, hi); };
    auto wrap = [&](double x) { return x > h ? x - 2.0 * h : x < -h ? x + 2.0 * h : x; };
    long tried = 0, bad = 0;
    for (int trial = 0; trial < 2000000; ++trial) {
        const double ri = rnd(0.1, 0.5), rj = rnd(0.1, 0.5);
        double u[3] = {rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)};
        const double nu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        double a0[3], b0[3], a1[3], b1[3];
        const double gap = (ri + rj + skin) + rnd(-4e-6, 6e-5); /* the slack: 3.8e-5 */
        const double step = hs * (1.0 + rnd(-4e-5, 1e-5));
        for (int k = 0; k < 3; ++k) {
            u[k] /= nu;
            /* a just inside the face its direction points at (or anywhere: an axis it runs along)
             */
            a0[k] = fabs(u[k]) > 0.3 ? (u[k] > 0 ? 1.0 : -1.0) * (h - rnd(0.0, 0.3)) : rnd(-h, h);
            b0[k] = wrap(a0[k] + gap * u[k]);
            a1[k] = wrap(a0[k] + step * u[k]);
            b1[k] = wrap(b0[k] - step * u[k]);
        }
        const sim_vec4f fa0 = {(float)a0[0], (float)a0[1], (float)a0[2], (float)ri};
        const sim_vec4f fb0 = {(float)b0[0], (float)b0[1], (float)b0[2], (float)rj};
        const sim_vec4f fa1 = {(float)a1[0], (float)a1[1], (float)a1[2], (float)ri};
        const sim_vec4f fb1 = {(float)b1[0], (float)b1[1], (float)b1[2], (float)rj};
        if (sim_nlist_near_pf(fa0, fb0, skin, &per) ||
            sim_nlist_moved_pf(fa1, fa0, hs * hs, &per) ||
            sim_nlist_moved_pf(fb1, fb0, hs * hs, &per)) {
            continue; /* listed, or the check would rebuild: nothing to miss */
        }
        ++tried;
        bad += nl::touching(fa1, fb1, &per) ? 1 : 0;
    }
    printf("  %ld unlisted pairs within the check, %ld touching\n", tried, bad);
    ENSURE(tried > 1000);
    ENSURE_MSG(bad == 0, "%ld pairs touch that the lists left out", bad);
}


/* ---- the build from a cell grid ---- */

/* The grid's arrays for grid g: sentinels, the fill counts 0 (as allocated). */
static void grid_alloc(state &st, const sim_cell_grid &g) {
    st.grid = g;
    st.cell.assign(g.cells + kGuard, sim_cell_range{kSentinel, kSentinel});
    st.fill.assign(g.cells, 0u);
    st.cell_body.assign(st.n, kSentinel);
    st.body_cell.assign(st.n, kSentinel);
    st.body_rank.assign(st.n, kSentinel);
    st.cell_pos.assign(st.n, sim_vec4f{kNaN, kNaN, kNaN, kNaN});
    st.cell_vel.assign(st.n, sim_vec4f{kNaN, kNaN, kNaN, kNaN});
}

/* A rebuild from grid g as the step launches it (forced): bin, place, scatter, build. */
static void grid_rebuild(state &st, const bodies &b, const sim_cell_grid &g, sim_period_f per) {
    grid_alloc(st, g);
    const unsigned flags = SIM_GPU_NLIST_REBUILD | SIM_GPU_CULL_RECORD;
    const dim3 cells((g.cells + 255) / 256), body_blocks((st.n + 255) / 256), threads(256);
    launch(body_blocks, threads, [&] {
        nl::grid_bin_kernel(b.pos.data(), st.n, st.cells(), st.ref.data(), st.count.data(), &st.nc,
                            flags);
    });
    ENSURE(st.nc.rebuild == 1u && st.nc.frame.rebuilds >= 1u);
    launch(cells, threads, [&] { nl::grid_place_kernel(st.cells(), &st.nc, 1); });
    launch(body_blocks, threads, [&] {
        nl::grid_scatter_kernel(b.pos.data(), b.vel.data(), st.n, st.cells(), st.ref.data(), &st.nc,
                                SIM_GPU_NLIST_REBUILD);
    });
    launch(body_blocks, threads, [&] {
        nl::grid_build_kernel(st.n, st.cells(), st.skin, st.nbr.data(), st.count.data(),
                              st.stride, st.cap, !st.half, &st.nc, per);
    });
}

/* The cells after grid_rebuild: each body once, in its position's cell, its position beside it
 * bit for bit, the cells' ranges within the bodies, nothing cleared past them. */
static void check_cells(const state &st, const bodies &b, const char *what) {
    std::vector<uint32_t> seen(st.n, 0u);
    uint32_t wrong = 0;
    for (uint32_t c = 0; c < st.grid.cells; ++c) {
        const sim_cell_range r = st.cell[c];
        wrong += r.start + r.n > st.n;
        for (uint32_t m = r.start; m < r.start + r.n && m < st.n; ++m) {
            const uint32_t i = st.cell_body[m];
            wrong += i >= st.n || sim_cell_of(&st.grid, b.pos[i]) != c || st.body_cell[i] != c ||
                     memcmp(&st.cell_pos[m], &b.pos[i < st.n ? i : 0], sizeof b.pos[0]) != 0;
            seen[i < st.n ? i : 0]++;
        }
    }
    for (uint32_t i = 0; i < st.n; ++i) {
        wrong += seen[i] != 1u || memcmp(&st.ref[i], &b.pos[i], sizeof b.pos[i]) != 0;
    }
    for (uint32_t g = 0; g < kGuard; ++g) {
        const sim_cell_range r = st.cell[st.grid.cells + g];
        wrong += r.start != kSentinel || r.n != kSentinel;
    }
    for (uint32_t c = 0; c < st.grid.cells; ++c) {
        wrong += st.fill[c] != 0u; /* back to 0 for the next binning */
    }
    ENSURE_MSG(wrong == 0 && st.nc.cells_placed == st.n, "%s: %u wrong in the cells", what, wrong);
}

/* The grid tests' model: restitution 0.7, a box of half-width box_half, periodic on `axes`; its
 * physics in double (the reference's, an inv_dt of 1e4) and in float (the kernels'). */
struct grid_model {
    sim_params p;
    sim_physics phd;
    sim_physics_f ph;
};

static grid_model grid_model_of(int axes, float box_half) {
    grid_model m;
    m.p = sim_params_default();
    m.p.restitution = 0.7;
    m.p.box_half = box_half;
    m.p.periodic = axes;
    m.phd = sim_physics_from_params(&m.p);
    m.phd.normal.inv_dt = 1.0 / 1e-4;
    m.ph = sim_physics_to_float(&m.phd);
    return m;
}

/* Lists from the grid (walls; periodic x y z and x z; bodies outside the walls' box; a sparse
 * gas whose grid is coarsened; lists too short), as sets against every pair within reach; the
 * sweep's forces and contacts, after every body moved by up to half the skin, against the double
 * reference and every touching pair, through the lists and through the fallback's walk over the
 * cells. */
static void test_grid(void) {
    struct scene {
        int axes;
        float h, box_half;
        uint32_t n, cap;
        bool outside;
        const char *name;
    } scenes[] = {
        {0, 7.0f, 8.0f, kN, 64, false, "walls"},
        {7, 5.0f, 5.0f, kN, 96, false, "periodic xyz"},
        {5, 5.0f, 5.0f, kN, 96, false, "periodic xz"},
        {0, 7.0f, 6.5f, kN, 64, true, "bodies beyond the walls"},
        {0, 12.0f, 40.0f, 300, 64, false, "sparse, coarse cells"},
        {5, 5.0f, 5.0f, kN, 3, false, "periodic xz, lists of 3"},
        {0, 7.0f, 8.0f, kN, 3, false, "walls, lists of 3"},
    };
    for (const scene &sc : scenes) {
        const bodies b = make_bodies(sc.n, sc.h, 21u + (uint64_t)sc.axes + sc.n);
        const grid_model m = grid_model_of(sc.axes, sc.box_half);
        const sim_params &p = m.p;
        const sim_physics &phd = m.phd;
        const sim_physics_f &ph = m.ph;
        const sim_period_f per = ph.box.period, *pp = sc.axes ? &per : nullptr;
        const float skin = 0.3f;
        sim_cell_grid g;
        ENSURE(sim_cell_grid_shape(&p, 0.5, skin, sc.n, &g) == 1);
        ENSURE_MSG(g.cells <= (uint32_t)SIM_CELL_GRID_CELLS_PER_BODY * sc.n && g.cells >= 27u, "%s: %u cells", sc.name, g.cells);
        uint32_t beyond = 0;
        for (const sim_vec4f &q : b.pos) {
            beyond += fabsf(q.x) > sc.box_half || fabsf(q.y) > sc.box_half;
        }
        ENSURE(sc.outside == (beyond > 0u));
        for (bool half : {false, true}) {
            char what[96];
            snprintf(what, sizeof what, "grid, %s, %s", sc.name, half ? "half" : "full");
            state st(sc.n, 32, sc.cap, half, skin);
            grid_rebuild(st, b, g, per);
            check_cells(st, b, what);
            uint32_t wrong = 0, most = 0;
            for (uint32_t i = 0; i < st.n; ++i) {
                std::set<uint32_t> want, got;
                for (uint32_t j = 0; j < st.n; ++j) {
                    if (j != i && (!half || j < i) &&
                        sim_nlist_near_pf(b.pos[i], b.pos[j], st.skin, pp)) {
                        want.insert(j);
                    }
                }
                for (uint32_t k = 0; k < std::min(st.count[i], st.cap); ++k) {
                    got.insert(st.nbr[(size_t)k * st.stride + i]);
                }
                const bool complete = st.count[i] <= st.cap;
                wrong += st.count[i] != want.size() ||
                         (complete ? got != want
                                   : got.size() != st.cap ||
                                         !std::includes(want.begin(), want.end(), got.begin(),
                                                        got.end()));
                most = std::max(most, st.count[i]);
            }
            ENSURE_MSG(wrong == 0 && st.guards_intact(), "%s: %u bodies' lists wrong", what,
                       wrong);
            ENSURE_MSG((st.nc.overflow != 0u) == (most > st.cap), "%s: overflow %u, most %u", what,
                       st.nc.overflow, most);
            /* the sweeps where the bodies are a little later: the fallback must read those
             * positions, not the build's beside the slots */
            const bodies at = moved_within(b, 0.5f * skin, 31u + sc.n);
            const std::vector<sim_vec3d> ref = reference_in(at, phd);
            std::set<std::pair<uint32_t, uint32_t>> touching;
            for (uint32_t i = 0; i < st.n; ++i) {
                for (uint32_t j = 0; j < i; ++j) {
                    if (nl::touching(at.pos[i], at.pos[j], pp)) {
                        touching.insert({i, j});
                    }
                }
            }
            ENSURE(!touching.empty());
            const bool overflowed = st.nc.overflow != 0u;
            for (int fallback = overflowed ? 1 : 0; fallback < 2; ++fallback) {
                st.nc.overflow = (uint32_t)fallback;
                st.nc.frame.fallback_steps = 0;
                std::vector<sim_vec4f> f(st.n, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
                contacts_out c;
                const nl::sweep_sink sink = c.sink();
                const uint32_t &found = c.found;
                /* the forces, then the touching pairs, of half (HALF) or full lists */
                auto sweeps = [&](auto half_lists) {
                    constexpr bool HALF = decltype(half_lists)::value;
                    nl::sweep_kernel<nl::kForce, HALF>(
                        at.pos.data(), at.vel.data(), f.data(), st.n, st.nbr.data(),
                        st.count.data(), st.stride, st.cap, &st.nc, fallback_of(st), st.cells(),
                        ph, nl::sweep_sink{}, SIM_GPU_CULL_RECORD, 1);
                    nl::sweep_kernel<nl::kContacts, HALF>(
                        at.pos.data(), at.vel.data(), nullptr, st.n, st.nbr.data(),
                        st.count.data(), st.stride, st.cap, &st.nc, fallback_of(st), st.cells(),
                        ph, sink, 0u, 0);
                };
                launch(dim3((st.n + 255) / 256), dim3(256), [&] {
                    if (half) {
                        sweeps(std::true_type{});
                    } else {
                        sweeps(std::false_type{});
                    }
                });
                const std::set<std::pair<uint32_t, uint32_t>> got = c.pairs();
                const force_error e = force_error_of(f, ref);
                printf("  %-52s F rel %.1e, worst body %.1e, %zu contacts%s\n", what, e.rel,
                       e.worst, touching.size(), fallback ? " (fallback: the cells)" : "");
                ENSURE_MSG(e.ref_l2 > 0.0 && e.rel <= 1e-5 && e.worst <= 1e-4,
                           "%s%s: rel %.3g, worst body %.3g", what, fallback ? " fallback" : "",
                           e.rel, e.worst);
                ENSURE_MSG(found == touching.size() && got == touching,
                           "%s%s: %u contacts of %zu", what, fallback ? " fallback" : "", found,
                           touching.size());
                ENSURE(st.nc.frame.fallback_steps == (uint32_t)fallback);
                ENSURE(st.nc.most == most);
            }
        }
    }
}

/* Swept straight from the cells (no lists), as a step of sim_gpu_nlist.direct launches it:
 * drift_bin_kernel (the drift, its check, the binning), place, scatter (velocities, and the
 * check's positions where a list would rebuild), cell_sweep_kernel; for several steps in a row
 * (the fill counts must come back to 0 between), walls and periodic boxes, on the grid the backend
 * takes for it (cells one touch wide: skin 0): the cells as a build's, every force against the
 * double reference where the bodies are after the drift, the touching pairs and tests counted,
 * the would-be rebuilds counted and their positions kept; on the last step the sweep also
 * finishes it (sim_gpu_kick): body forces added, the second half kick by them, nothing flagged. */
static void test_direct(void) {
    struct scene {
        int axes;
        float h, box_half;
        bool pairs; /* barely touching pairs at rest (make_touching_pairs), else a random gas */
        const char *name;
    } scenes[] = {{0, 7.0f, 8.0f, false, "walls"},
                  {7, 5.0f, 5.0f, false, "periodic xyz"},
                  {5, 5.0f, 5.0f, false, "periodic xz"},
                  {0, 8.5f, 8.0f, true, "pairs, walls"},
                  {7, 5.0f, 5.0f, true, "pairs, periodic"}};
    for (const scene &sc : scenes) {
        bodies b = sc.pairs ? make_touching_pairs(kN, sc.h, 43u + (uint64_t)sc.axes)
                            : make_bodies(kN, sc.h, 41u + (uint64_t)sc.axes);
        const grid_model m = grid_model_of(sc.axes, sc.box_half);
        const sim_params &p = m.p;
        const sim_physics &phd = m.phd;
        const sim_physics_f &ph = m.ph;
        const sim_period_f per = ph.box.period, *pp = sc.axes ? &per : nullptr;
        const float skin = 0.1f, dt = 0.02f;
        sim_cell_grid g;
        ENSURE(sim_cell_grid_shape(&p, 0.5, 0.0, kN, &g) == 1);
        state st(kN, 32, 16, false, skin);
        st.direct = true;
        grid_alloc(st, g);
        st.ref = b.pos; /* as if built where the bodies start */
        std::vector<sim_vec4f> force(kN, sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f});
        uint32_t rebuilt = 0;
        bool last_once = false; /* the step before took each pair once: its kick is deferred */
        for (int step = 0; step < 4; ++step) {
            const std::vector<sim_vec4f> ref_before = st.ref;
            st.nc.rebuild = 0u;
            st.nc.cells_placed = 12345u; /* the drift zeroes it */
            const dim3 body_blocks((kN + 255) / 256), cells((g.cells + 255) / 256), threads(256);
            /* threads per body 1, 2, 4, both directions or each pair once (the drift clears the
             * forces), from the scene's own start (every mode somewhere); the last step kicks in
             * the sweep (not each pair once: its kick is the next drift's) */
            static const struct {
                int lanes;
                bool once;
            } modes[6] = {{1, false}, {2, true}, {1, true}, {4, false}, {4, true}, {2, false}};
            const int at = (step + 2 * (int)(&sc - scenes)) % 6;
            const int lanes = modes[at].lanes;
            const bool once = modes[at].once && step != 3;
            /* after a step each pair once, its second half is this drift's: the same bits as
             * verlet_second_kernel's pass (sim_second_half_f) before a plain drift */
            uint64_t flag_fused = SIM_GPU_STABLE, flag_apart = SIM_GPU_STABLE;
            const sim_gpu_kick last = {dt, &flag_fused, (uint32_t)step - 1u, nullptr};
            const bool fused = step > 0 && last_once;
            std::vector<sim_vec4f> apart_pos = b.pos, apart_vel = b.vel;
            if (fused) {
                for (uint32_t i = 0; i < kN; ++i) {
                    sim_vec4f f = force[i];
                    sim_second_half_f(apart_pos[i], &apart_vel[i], &f, dt, ph, &flag_apart,
                                      (uint32_t)step - 1u, i);
                    sim_verlet_first_f(&apart_pos[i], &apart_vel[i], sim_vec3f{f.x, f.y, f.z},
                                       dt);
                    if (pp != nullptr) {
                        sim_wrap_in_f(&apart_pos[i], pp);
                    }
                }
            }
            launch(body_blocks, threads, [&] {
                nl::drift_bin_kernel(b.pos.data(), b.vel.data(), force.data(), kN, dt,
                                     st.ref.data(), 0.25f * skin * skin, &st.nc, st.cells(), per,
                                     once, fused ? last : sim_gpu_kick{}, ph);
            });
            if (fused) {
                ENSURE_MSG(memcmp(apart_pos.data(), b.pos.data(), kN * sizeof(sim_vec4f)) == 0 &&
                               memcmp(apart_vel.data(), b.vel.data(), kN * sizeof(sim_vec4f)) ==
                                   0 &&
                               flag_fused == flag_apart,
                           "%s step %d: the kick in the drift is not verlet_second's", sc.name,
                           step);
            }
            last_once = once;
            if (once) {
                uint32_t kept = 0;
                for (const sim_vec4f &f : force) {
                    kept += f.x != 0.0f || f.y != 0.0f || f.z != 0.0f || f.w != 0.0f;
                }
                ENSURE_MSG(kept == 0, "%s: %u forces not cleared", sc.name, kept);
            }
            /* the drift's check, on the host: past half the skin from the kept positions */
            bool moved = false;
            for (uint32_t i = 0; i < kN; ++i) {
                moved |= sim_nlist_moved_pf(b.pos[i], ref_before[i], 0.25f * skin * skin, pp) != 0;
            }
            ENSURE_MSG((st.nc.rebuild != 0u) == moved, "%s step %d: the check's flag", sc.name,
                       step);
            rebuilt += moved ? 1u : 0u;
            launch(cells, threads, [&] { nl::grid_place_kernel(st.cells(), &st.nc, 1); });
            launch(body_blocks, threads, [&] {
                nl::grid_scatter_kernel(b.pos.data(), b.vel.data(), kN, st.cells(), st.ref.data(),
                                        &st.nc, SIM_GPU_CULL_RECORD);
            });
            for (uint32_t i = 0; i < kN; ++i) { /* kept where a list would have been rebuilt */
                const sim_vec4f want = moved ? b.pos[i] : ref_before[i];
                ENSURE(memcmp(&st.ref[i], &want, sizeof want) == 0);
            }
            uint32_t wrong = 0;
            for (uint32_t c = 0; c < g.cells; ++c) {
                const sim_cell_range r = st.cell[c];
                for (uint32_t m = r.start; m < r.start + r.n; ++m) {
                    const uint32_t i = st.cell_body[m];
                    wrong += sim_cell_of(&g, b.pos[i]) != c ||
                             memcmp(&st.cell_pos[m], &b.pos[i], sizeof b.pos[i]) != 0 ||
                             memcmp(&st.cell_vel[m], &b.vel[i], sizeof b.vel[i]) != 0;
                }
                wrong += st.fill[c] != 0u;
            }
            ENSURE_MSG(wrong == 0 && st.nc.cells_placed == kN, "%s step %d: %u wrong in the cells",
                       sc.name, step, wrong);
            memset(&st.nc.frame, 0, sizeof st.nc.frame);
            if (!once) { /* every force stored; each pair once adds into the cleared ones */
                std::fill(force.begin(), force.end(), sim_vec4f{kNaN, kNaN, kNaN, kNaN});
            }
            st.nc.rebuild = 1u;
            const bool finish = step == 3;
            const std::vector<sim_vec4f> vel_before = b.vel;
            uint64_t flag = SIM_GPU_STABLE;
            const sim_gpu_kick kick = {dt, &flag, 3u, nullptr};
            const dim3 sweep_blocks((kN * lanes + 255) / 256);
            launch(sweep_blocks, threads, [&] {
                sim_vec4f *kicked = finish ? b.vel.data() : nullptr;
#define SWEEP(P, L)                                                                                \
    nl::cell_sweep_kernel<P, L>(kN, st.cells(), force.data(), kicked, kick, ph, &st.nc,            \
                                SIM_GPU_CULL_RECORD, 1)
#define PAIRS(P, L)                                                                                \
    nl::cell_pairs_kernel<P, L>(kN, st.cells(), force.data(), ph, &st.nc, SIM_GPU_CULL_RECORD, 1)
#define FORM(P)                                                                                    \
    (once ? (lanes == 4 ? PAIRS(P, 4) : lanes == 2 ? PAIRS(P, 2) : PAIRS(P, 1))                   \
          : (lanes == 4 ? SWEEP(P, 4) : lanes == 2 ? SWEEP(P, 2) : SWEEP(P, 1)))
                if (sc.axes) {
                    FORM(true);
                } else {
                    FORM(false);
                }
#undef FORM
#undef PAIRS
#undef SWEEP
            });
            ENSURE(st.nc.rebuild == 0u && st.nc.frame.steps == 1u);
            if (finish) { /* F includes the body forces, v kicked by F: take them back out */
                if (flag != SIM_GPU_STABLE) { /* only a body flung out of the walls' box */
                    uint32_t at_step, body;
                    int cause;
                    sim_gpu_unstable_decode(flag, &at_step, &body, &cause);
                    const float lim = (float)SIM_ESCAPE_FACTOR * ph.box.box_half;
                    ENSURE_MSG(cause == SIM_GPU_ESCAPED && at_step == 3u && body < kN &&
                                   (fabsf(b.pos[body].x) > lim || fabsf(b.pos[body].y) > lim ||
                                    fabsf(b.pos[body].z) > lim),
                               "%s: flag cause %d, body %u", sc.name, cause, body);
                }
                uint32_t bad = 0;
                for (uint32_t i = 0; i < kN; ++i) {
                    sim_vec4f v = vel_before[i];
                    sim_verlet_second_f(&v, sim_vec3f{force[i].x, force[i].y, force[i].z}, dt);
                    bad += memcmp(&v, &b.vel[i], sizeof v) != 0;
                    const sim_vec3f fb = sim_body_force_f(b.pos[i], vel_before[i], &ph, nullptr);
                    force[i].x -= fb.x;
                    force[i].y -= fb.y;
                    force[i].z -= fb.z;
                }
                ENSURE_MSG(bad == 0, "%s: %u bodies kicked otherwise", sc.name, bad);
                b.vel = vel_before; /* the reference below is at the sweep's velocities */
            }
            const std::vector<sim_vec3d> ref = reference_in(b, phd);
            const force_error e = force_error_of(force, ref);
            uint64_t touching = 0;
            for (uint32_t i = 0; i < kN; ++i) {
                for (uint32_t j = 0; j < i; ++j) {
                    touching += nl::touching(b.pos[i], b.pos[j], pp) ? 1u : 0u;
                }
            }
            uint64_t found = 0, tests = 0;
            for (int k = 0; k < SIM_GPU_COUNT_SLOTS; ++k) {
                found += st.nc.frame.contacts[k];
                tests += st.nc.frame.tests[k];
            }
            printf("  direct, %-14s step %d, %d threads a body%s%s: F rel %.1e, worst body "
                   "%.1e, %llu contacts, %.1f tests per body\n",
                   sc.name, step, lanes, once ? ", each pair once" : "",
                   fused ? ", kicked in the drift" : "", e.rel, e.worst,
                   (unsigned long long)touching, (double)tests / kN);
            ENSURE_MSG(e.ref_l2 > 0.0 && e.rel <= 1e-5 && e.worst <= 1e-4,
                       "%s step %d: rel %.3g, worst body %.3g", sc.name, step, e.rel, e.worst);
            ENSURE_MSG(touching > 0 && found == touching, "%s step %d: %llu contacts of %llu",
                       sc.name, step, (unsigned long long)found, (unsigned long long)touching);
            uint64_t whole = 0; /* the candidates of the 27 cells whole: the walk skips some */
            for (uint32_t i = 0; i < kN; ++i) {
                SIM_CELL_GRID_FOR_NEAR(&g, sim_cell_of(&g, b.pos[i]), cell,
                                       { whole += st.cell[cell].n; });
            }
            whole -= kN;
            ENSURE_MSG(tests >= (once ? 1u : 2u) * touching && tests < whole,
                       "%s step %d: %llu tests of %llu", sc.name, step, (unsigned long long)tests,
                       (unsigned long long)whole);
        }
        ENSURE_MSG(sc.pairs || rebuilt >= 1u, "%s: no step crossed half the skin", sc.name);
    }
}

static const ensure_test tests[] = {
    {"build_and_sweep", test_build_and_sweep},
    {"periodic", test_periodic},
    {"periodic_margin", test_periodic_margin},
    {"moved_within_half_skin", test_moved_within_half_skin},
    {"overflow", test_overflow},
    {"grid", test_grid},
    {"direct", test_direct},
    {"rows", test_rows},
    {"drift", test_drift},
};

ENSURE_MAIN(tests)
