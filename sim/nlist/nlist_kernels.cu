/* SPDX-License-Identifier: MIT
 * nbsim — the neighbour lists' kernels (nlist_kernels.h): the drift with the displacement check,
 * the inflated tile boxes, the build from the culled tile pairs, and the sweeps over the lists
 * (forces, energy, contacts) with their fallback over the tile pairs. Why the result is exact:
 * nlist.h. tests/test_nlist_emu.cc compiles the kernels alone on the CPU (SIM_NLIST_KERNELS_ONLY:
 * no drivers) and runs them under tests/cuda_emulation.h. */
#include "nlist/nlist_kernels.h"

#include <string.h>
#include <stdlib.h>

#include "nbsim/internal/backend.h"
#include "cull/cull_device.cuh"
#include "cull/cull_kernels.h"
#include "gpu/friction.cuh"
#include "gpu/second_half.cuh"
#include "gpu/arch.cuh"

namespace nl {

constexpr int kThreads = 256; /* per-body kernels: the drift, the check, the sweeps */
/* The sweep is latency-bound (a gather per entry): 6 resident blocks of 256 (75 % of an sm_90
 * SM) at up to 42 registers, where it needs 40 without spilling (8 blocks, 32 registers: ~70 B
 * spilled in the contact's slow path). */
constexpr int kSweepBlocksPerSm = 6;
constexpr int kBoxWarps = (int)SIM_CULL_SUPER; /* the box kernel: a warp per tile */
constexpr int kBuildWarps = 4;                 /* the build: a warp per (sub-)tile pair */
constexpr uint32_t kSub = 32u;                 /* bodies of a sub-tile: one warp's lanes */

static __device__ __forceinline__ sim_vec3f xyz3(const sim_vec4f &v) {
    sim_vec3f r;
    r.x = v.x;
    r.y = v.y;
    r.z = v.z;
    return r;
}

static __device__ __forceinline__ uint32_t lane_id() {
    return threadIdx.x & 31u;
}

/* Whether a body's interval of half-width w (nlist.h) meets a box on every axis; per (NULL:
 * walls only) the box's periods, through whose images it may meet (sim_period_meets_f). */
static __device__ __forceinline__ bool meets(const sim_vec4f &p, float w, const sim_cull_box &b,
                                             const sim_period_f *per = nullptr) {
    if (per != nullptr) {
        return sim_period_meets_f(p.x - w, p.x + w, b.lo.x, b.hi.x, per->len[0], per->inv[0]) &&
               sim_period_meets_f(p.y - w, p.y + w, b.lo.y, b.hi.y, per->len[1], per->inv[1]) &&
               sim_period_meets_f(p.z - w, p.z + w, b.lo.z, b.hi.z, per->len[2], per->inv[2]);
    }
    return p.x - w <= b.hi.x && b.lo.x <= p.x + w && p.y - w <= b.hi.y && b.lo.y <= p.y + w &&
           p.z - w <= b.hi.z && b.lo.z <= p.z + w;
}

/* The kernels' contact test (pair_kernels.cu's touching()): strict, NaN and padding never;
 * through the minimum image under per (NULL: walls only). */
static __device__ __forceinline__ bool touching(const sim_vec4f &a, const sim_vec4f &b,
                                                const sim_period_f *per = nullptr) {
    float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    if (per != nullptr) {
        sim_min_image_in_f(&dx, &dy, &dz, per);
    }
    return sim_touch_f(dx, dy, dz, a.w + b.w) != 0;
}

/* Appends `other` to `owner`'s list: counted always, stored while it fits; an entry that does not
 * fit raises the overflow (the sweeps then fall back: nlist.h). */
static __device__ __forceinline__ void append(uint32_t owner, uint32_t other, uint32_t *nbr,
                                              uint32_t *count, uint32_t stride, uint32_t cap,
                                              sim_gpu_nlist_counts *nc) {
    const uint32_t k = atomicAdd(&count[owner], 1u);
    if (k < cap) {
        nbr[(size_t)k * stride + owner] = other;
    } else {
        nc->overflow = 1u;
    }
}

/* The tile pairs a pass walks: the culled list, or (it overflowed) every pair of rows
 * [row0, row1) of the simplex in row order; each split into (tile / 32)^2 sub-tile pairs of one
 * warp (a diagonal tile pair only a >= b). */
struct pair_walk {
    const sim_tile2 *list;
    uint32_t first; /* T2(row0): the simplex's first pair of the rows, when overflowed */
    uint32_t items;
    bool overflow;
    uint32_t subs; /* sub-tiles per tile */

    __device__ __forceinline__ uint64_t tasks() const {
        return (uint64_t)items * subs * subs;
    }
    /* Task k's tile pair and sub-tiles; false: nothing to do (the upper half of a diagonal). */
    __device__ __forceinline__ bool task(uint64_t k, sim_tile2 *t, uint32_t *a, uint32_t *b) const {
        const uint32_t item = (uint32_t)(k / (subs * subs)), q = (uint32_t)(k % (subs * subs));
        *t = overflow ? sim_cull_simplex_pair(first + item) : list[item];
        *a = q / subs;
        *b = q % subs;
        return t->i != t->j || *a >= *b;
    }
};

static __device__ __forceinline__ pair_walk walk_of(const sim_tile2 *list, uint32_t found,
                                                    uint32_t cap, uint32_t row0, uint32_t row1,
                                                    uint32_t tile) {
    pair_walk w;
    w.list = list;
    w.overflow = found > cap;
    w.first = sim_map_t2(row0);
    w.items = w.overflow ? sim_map_t2(row1) - w.first : found;
    w.subs = tile / kSub;
    return w;
}

/* One sub-tile pair (a of tile I, b of tile J) by one warp: each lane holds a body of one side,
 * the other side's bodies are broadcast from shared memory (sh: this warp's 32 slots), and
 * on_pair(mine, p_mine, other, p_other) runs for every pair of bodies whose intervals of
 * half-width r + pad (nlist.h) meet the other tile's box, each unordered pair once (the diagonal:
 * other < mine). Only the bodies that meet the other tile's box take part: the lanes hold the
 * side with more of them and the loop runs over the other side's, so a pair of tiles that touch
 * at a face costs a few iterations, not 32. All 32 lanes must call it. */
template <class OnPair>
static __device__ __forceinline__ void
warp_pairs(sim_tile2 t, uint32_t a, uint32_t b, uint32_t tile, const sim_vec4f *__restrict__ pos,
           uint32_t n, const sim_cull_box *__restrict__ boxes, float pad, const sim_period_f *per,
           sim_vec4f *sh, OnPair &&on_pair) {
    const uint32_t lane = lane_id();
    const uint32_t base_a = t.i * tile + a * kSub, base_b = t.j * tile + b * kSub;
    const uint32_t ia = base_a + lane, ib = base_b + lane;
    const sim_vec4f pa = ia < n ? sim_ld4(pos + ia) : sim_pad_body();
    const sim_vec4f pb = ib < n ? sim_ld4(pos + ib) : sim_pad_body();
    const sim_cull_box box_i = sim_cull_load_box(boxes, t.i), box_j = sim_cull_load_box(boxes, t.j);
    const bool diag = t.i == t.j && a == b;
    const bool in_a = ia < n && meets(pa, sim_nlist_width_f(pa.w, pad), box_j, per);
    const bool in_b = ib < n && meets(pb, sim_nlist_width_f(pb.w, pad), box_i, per);
    const unsigned ma = __ballot_sync(SIM_FULL_MASK, in_a);
    const unsigned mb = diag ? ma : __ballot_sync(SIM_FULL_MASK, in_b);
    if (ma == 0u || mb == 0u) {
        return;
    }
    const bool swap = !diag && __popc(mb) > __popc(ma);
    const sim_vec4f mine = swap ? pb : pa;
    const uint32_t body = swap ? ib : ia, other_base = swap ? base_a : base_b;
    const bool active = swap ? in_b : in_a;
    unsigned todo = swap ? ma : mb;
    __syncwarp(); /* the warp's last task has read sh */
    sh[lane] = swap ? pa : pb;
    __syncwarp();
    while (todo != 0u) {
        const uint32_t q = (uint32_t)(__ffs((int)todo) - 1);
        todo &= todo - 1u;
        const sim_vec4f po = sh[q];
        if (active && (!diag || q < lane)) {
            on_pair(body, mine, other_base + q, po);
        }
    }
}

/* A sweep's tests and touching pairs, summed over the warp into one of the frame's counter slots
 * (spread over SIM_GPU_COUNT_SLOTS: fewer atomics on one address). All 32 lanes call it. */
static __device__ __forceinline__ void count_sweep(sim_gpu_nlist_counts *nc, uint32_t tests,
                                                   uint32_t touched) {
    const uint32_t wt = sim_warp_sum_u32(tests);
    const uint32_t wc = sim_warp_sum_u32(touched);
    const uint32_t slot =
        (blockIdx.x * (kThreads / 32) + (threadIdx.x >> 5)) % (uint32_t)SIM_GPU_COUNT_SLOTS;
    if (lane_id() == 0u) {
        if (wt != 0u) {
            atomicAdd(&nc->frame.tests[slot], (unsigned long long)wt);
        }
        if (wc != 0u) {
            atomicAdd(&nc->frame.contacts[slot], (unsigned long long)wc);
        }
    }
}

/* ---- the drift and the check ---- */

/* drift_kernel's work on body i (i < n) but the force's clearing: the drifted centre returned
 * (also stored), *moved: past half the skin from ref. last (else NULL, or its flag NULL): the
 * step before's second half first (drift_bin_kernel), by the force it left and ph's body force. */
static __device__ __forceinline__ sim_vec4f drift_body(uint32_t i, sim_vec4f *__restrict__ pos,
                                                       sim_vec4f *__restrict__ vel,
                                                       const sim_vec4f *__restrict__ force,
                                                       float dt, const sim_vec4f *__restrict__ ref,
                                                       float h2, const sim_period_f &per,
                                                       sim_vec4f *__restrict__ spin,
                                                       const sim_vec4f *__restrict__ torque,
                                                       bool *moved,
                                                       const sim_gpu_kick *last = nullptr,
                                                       const sim_physics_f *ph = nullptr) {
    sim_vec4f p = pos[i], v = vel[i];
    sim_vec4f f = force[i];
    if (last != nullptr && last->flag != nullptr) { /* verlet_second_kernel's, to the bit */
        sim_second_half_f(p, &v, &f, last->dt, *ph, last->flag, last->step,
                          last->perm != nullptr ? last->perm[i] : i);
    }
    sim_verlet_first_f(&p, &v, xyz3(f), dt);
    const bool periodic = sim_period_any_f(&per); /* a flag, not a pointer (cull.h) */
    const sim_vec4f r = sim_ld4(ref + i);
    *moved = (periodic ? sim_nlist_moved_pf(p, r, h2, &per)
                       : sim_nlist_moved_pf(p, r, h2, nullptr)) != 0;
    if (periodic) {
        sim_wrap_in_f(&p, &per); /* the stepper's WRAP, in this pass (integrate.h) */
    }
    pos[i] = p;
    vel[i] = v;
    if (spin != nullptr) {
        sim_vec4f w4 = spin[i]; /* slot order, as the positions */
        sim_vec3f w = sim_fric_xyz(w4);
        sim_verlet_spin_f(&w, sim_fric_xyz(torque[i]), p, v.w, dt);
        w4.x = w.x;
        w4.y = w.y;
        w4.z = w.z;
        spin[i] = w4;
    }
    return p;
}

/* The first half kick and drift of integrate.cu's verlet_first_kernel, then each body's
 * displacement from the lists' build (more than half the skin, or NaN: the flag goes up, one
 * store per block that saw it) and its force cleared for the sweep's atomics. per (all 0: walls):
 * the box's periods, through whose images the displacement is taken, and on whose axes the
 * centre then goes back into the box (the WRAP phase, as verlet_first_kernel<true>). spin (with
 * friction; NULL without): the spin's first half kick by the last torques in the same pass, as
 * friction_kernels.cu's kick_kernel (radius and mass alone: the same bits before or after the
 * drift), one pass over the bodies less.
 *
 * Launch contract: ceil(N / 256) blocks of 256 threads, thread i body i (guard i < n; every
 * thread reaches the block vote). Cost per body: 48 B read + 16 B (the build position), 48 B
 * written; ~25 flops; with the spin 32 B read and 16 B written more. */
__global__ void __launch_bounds__(kThreads)
    drift_kernel(sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ vel,
                 sim_vec4f *__restrict__ force, uint32_t n, float dt,
                 const sim_vec4f *__restrict__ ref, float h2, uint32_t *__restrict__ rebuild,
                 sim_period_f per = sim_period_f(), sim_vec4f *__restrict__ spin = nullptr,
                 const sim_vec4f *__restrict__ torque = nullptr) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    bool moved = false;
    if (i < n) {
        (void)drift_body(i, pos, vel, force, dt, ref, h2, per, spin, torque, &moved);
        sim_vec4f zero;
        zero.x = zero.y = zero.z = zero.w = 0.0f;
        force[i] = zero;
    }
    sim_block_raise(moved, rebuild);
}

/* The check alone (test hooks). Launch contract and guard as drift_kernel; 32 B read per body. */
__global__ void __launch_bounds__(kThreads)
    check_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, const sim_vec4f *__restrict__ ref,
                 float h2, uint32_t *__restrict__ rebuild, sim_period_f per = sim_period_f()) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    const bool moved = i < n && sim_nlist_moved_pf(sim_ld4(pos + i), sim_ld4(ref + i), h2,
                                                   sim_period_or_null(&per));
    sim_block_raise(moved, rebuild);
}

/* ---- the build ---- */

/* A rebuild's start, by one thread of the first kernel of either build (boxes_kernel,
 * grid_bin_kernel): the flag raised (forced: the later kernels see it), the overflow, the most
 * entries and the grid's cursor cleared, the rebuild counted (RECORD). */
static __device__ __forceinline__ void begin_rebuild(sim_gpu_nlist_counts *nc, unsigned flags) {
    nc->rebuild = 1u;
    nc->overflow = 0u;
    nc->most = 0u;
    nc->cells_placed = 0u;
    if (flags & SIM_GPU_CULL_RECORD) {
        nc->frame.rebuilds++;
    }
}

/* Tile and super-tile boxes for a rebuild, as cull_kernels.cu's tile_boxes_kernel but with each
 * body's interval widened to r + s/2 (nlist.h); it also stores the build positions and clears the
 * bodies' counts. Returns at once (every block) when the lists are not rebuilt this step.
 *
 * Launch contract: grid = ceil(tiles / 16) blocks (one per super-tile) of 16 warps; warp w owns
 * tile t = blockIdx.x * 16 + w, its lanes tile / 32 bodies each (guard body < n, tile < tiles).
 * Block 0 zeroes the step's culling counters and the lists' overflow and most, and counts the
 * rebuild. Cost per body: 16 B read, 20 B written, 6 FMNMX; per tile 30 shuffles + 32 B. Periodic
 * axes (per: a kernel-uniform branch) as tile_boxes_kernel: boxes of the images nearest the
 * tiles' and super-tiles' first bodies (cull.h). */
__global__ void __launch_bounds__(kBoxWarps * 32)
    boxes_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t tile, uint32_t n_tiles,
                 float pad, sim_cull_box *__restrict__ boxes, sim_cull_box *__restrict__ supers,
                 sim_gpu_cull_counts *__restrict__ cc, sim_vec4f *__restrict__ ref,
                 uint32_t *__restrict__ count, sim_gpu_nlist_counts *__restrict__ nc,
                 unsigned flags, sim_period_f per = sim_period_f()) {
    const bool forced = (flags & SIM_GPU_NLIST_REBUILD) != 0u;
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        begin_rebuild(nc, flags);
        cc->supers = 0u;
        cc->tiles = 0u;
        cc->super_overflow = 0u;
    }
    const uint32_t w = threadIdx.x >> 5, lane = lane_id();
    const uint32_t t = blockIdx.x * kBoxWarps + w;
    const bool periodic = sim_period_or_null(&per) != nullptr;
    sim_cull_box box = sim_cull_empty_box();
    bool far = false;
    if (t < n_tiles) {
        const sim_vec4f a = periodic ? sim_ld4(pos + t * tile) : sim_vec4f();
        for (uint32_t k = 0; k < tile / kSub; ++k) {
            const uint32_t i = t * tile + k * kSub + lane;
            if (i < n) {
                const sim_vec4f p = sim_ld4(pos + i);
                const float r = sim_nlist_width_f(p.w, pad);
                if (periodic) {
                    sim_cull_box_add_near(&box, p, r, a, per, &far);
                } else {
                    sim_cull_box_add(&box, p, r);
                }
                ref[i] = p;
                count[i] = 0u;
            }
        }
    }
    box = sim_cull_warp_box(box);
    sim_cull_inflate(&box);
    if (periodic) {
        box.lo.w = __any_sync(SIM_FULL_MASK, far) ? 1.0f : 0.0f;
    }
    __shared__ sim_cull_box sh_box[kBoxWarps];
    if (lane == 0u) {
        sh_box[w] = box;
        if (t < n_tiles) {
            boxes[t] = box;
            if (periodic) {
                sim_cull_box_near(&sh_box[w], sim_ld4(pos + t * tile),
                                  sim_ld4(pos + blockIdx.x * kBoxWarps * tile), per);
            }
        }
    }
    __syncthreads();
    if (w == 0u) {
        const sim_cull_box mine = lane < (uint32_t)kBoxWarps ? sh_box[lane] : sim_cull_empty_box();
        sim_cull_box all = sim_cull_warp_box(mine);
        if (lane == 0u) {
            all.lo.w = 0.0f;
            supers[blockIdx.x] = all;
        }
    }
}

/* The lists from the tile pairs the culling passes kept (boxes of r + s/2: every pair within
 * r_i + r_j + s is in one of them). Returns at once when the lists are not rebuilt this step.
 *
 * Launch contract: a persistent grid (l->build_grid blocks) of 4 warps; global warp w takes the
 * sub-tile pair tasks w, w + warps, ... of the walk (pair_walk: the culled list, or every pair
 * of the rows when it overflowed; the task count is uniform per warp, so every lane runs the same
 * iterations). Each pair within reach (sim_nlist_near_f) goes to its larger slot's list, and with
 * full lists to the other's too (append: an atomic on the body's count). Block 0 records the
 * tile list's counts (RECORD: peak, fallback; SORTED: the regrow base) as the culled sweep does.
 * Cost per task: 2 x 16 B per lane, two box tests, two votes, then per broadcast body an LDS.128
 * and the 9-instruction test; per entry an atomic and a 4 B store. */
__global__ void __launch_bounds__(kBuildWarps * 32)
    build_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t tile,
                 const sim_cull_box *__restrict__ boxes, const sim_tile2 *__restrict__ list,
                 uint32_t list_cap, sim_gpu_cull_counts *__restrict__ cc, uint32_t row0,
                 uint32_t row1, float skin, uint32_t *__restrict__ nbr,
                 uint32_t *__restrict__ count, uint32_t stride, uint32_t cap, int full,
                 sim_gpu_nlist_counts *__restrict__ nc, unsigned flags,
                 sim_period_f period = sim_period_f()) {
    if (nc->rebuild == 0u) {
        return;
    }
    const uint32_t found = cc->tiles;
    const pair_walk walk = walk_of(list, found, list_cap, row0, row1, tile);
    if ((flags & SIM_GPU_CULL_RECORD) && blockIdx.x == 0 && threadIdx.x == 0) {
        atomicMax(&cc->frame.tiles_peak, found);
        if (walk.overflow || cc->super_overflow) {
            atomicAdd(&cc->frame.fallback_steps, 1u);
        }
        if (flags & SIM_GPU_CULL_SORTED) {
            cc->tiles_sorted = found;
        }
    }
    __shared__ sim_vec4f sh[kBuildWarps][kSub];
    const uint32_t warp = threadIdx.x >> 5;
    const uint64_t warps = (uint64_t)gridDim.x * kBuildWarps;
    const float pad = 0.5f * skin;
    const sim_period_f *per = sim_period_or_null(&period);
    for (uint64_t k = (uint64_t)blockIdx.x * kBuildWarps + warp; k < walk.tasks(); k += warps) {
        sim_tile2 t;
        uint32_t a, b;
        if (!walk.task(k, &t, &a, &b)) {
            continue;
        }
        warp_pairs(t, a, b, tile, pos, n, boxes, pad, per, sh[warp],
                   [&](uint32_t i, const sim_vec4f &pi, uint32_t j, const sim_vec4f &pj) {
                       if (sim_nlist_near_pf(pi, pj, skin, per)) {
                           const uint32_t hi = i > j ? i : j, lo = i > j ? j : i;
                           append(hi, lo, nbr, count, stride, cap, nc);
                           if (full) {
                               append(lo, hi, nbr, count, stride, cap, nc);
                           }
                       }
                   });
    }
}

/* ---- the build from a cell grid ---- */

#include "nlist/grid_build.cuh"

/* ---- the sweeps ---- */

/* What a sweep produces: forces (the step), the contact potential (energy, not timed), the
 * touching pairs (the contacts hook), or forces with friction (gpu/friction.h: the springs beside
 * the entries; a half list's pair by its row's thread, the other body's force and torque by
 * atomics; a full list's pair by both rows' threads alike, each its own body's, no atomics).
 * kFriction is its own instantiation: the frictionless sweeps are the code they were. */
enum sweep_mode { kForce, kEnergy, kContacts, kFriction };
/* Resident blocks the sweeps are compiled for: kSweepBlocksPerSm caps a thread at 42 registers,
 * and the frictional visit (history lookup and store, spin, the springs' rotation and limit)
 * spilled 324 bytes under that cap in its inner loop (ptxas -v, sm_90); half the blocks allow
 * 85 registers: it takes 72, and spills nothing. */
constexpr int sweep_blocks_per_sm(int mode) {
    return sim_min_blocks(kThreads, mode == kFriction ? kSweepBlocksPerSm / 2 : kSweepBlocksPerSm);
}

/* Where a sweep's results go besides the forces. */
struct sweep_sink {
    double *energy;
    const uint32_t *perm; /* slot -> user index; NULL: identity */
    sim_body_pair *out;
    uint32_t out_cap;
    uint32_t *out_count;
    sim_gpu_fric fric;           /* kFriction: the tables, spin, torques */
    sim_gpu_fric_list fric_list; /* kFriction: the springs beside the entries */
};

/* The tile pairs of the last build, for the fallback (nlist.h). */
struct tile_pairs {
    const sim_cull_box *boxes;
    const sim_tile2 *list;
    uint32_t cap;
    const sim_gpu_cull_counts *cc;
    uint32_t row0, row1, tile;
};

static __device__ __forceinline__ void emit_pair(const sweep_sink &sink, uint32_t i, uint32_t j) {
    const uint32_t a = sink.perm != nullptr ? sink.perm[i] : i;
    const uint32_t b = sink.perm != nullptr ? sink.perm[j] : j;
    const uint32_t k = atomicAdd(sink.out_count, 1u);
    if (k < sink.out_cap) {
        sink.out[k].i = a > b ? a : b;
        sink.out[k].j = a > b ? b : a;
    }
}

/* The contact sweep over the lists.
 *
 * Launch contract: ceil(N / 256) blocks of 256 threads; every thread runs to the end (the warp
 * sums). Lists complete (no overflow at the last build): thread i sweeps body i's count[i]
 * entries, entry k at nbr[k * stride + i] (a warp reads 128 adjacent bytes per k), the neighbour's
 * position gathered (16 B, from L1/L2: Morton-sorted neighbours are near), the 9-instruction
 * test; a touching pair adds its force (pair_kernels.cu's ~60 instructions, both velocities
 * loaded): full lists to body i alone, stored once at the end (no atomics, every force written);
 * half lists also -f to the neighbour and the sum to i, each a 16-byte vector atomic into forces
 * the drift cleared. A list overflowed: every warp of the grid sweeps sub-tile pairs of the
 * build's tile pairs instead (warp_pairs with the touching test, both bodies' forces by atomics).
 * Either way block 0 lowers the rebuild flag, and each warp sums its tests and touching pairs into
 * a counter slot (count != 0) and the most entries of a body into the lists' most (an atomic only
 * where it is larger than seen). */
template <int MODE, bool HALF>
__global__ void __launch_bounds__(kThreads, sweep_blocks_per_sm(MODE))
    sweep_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                 sim_vec4f *__restrict__ force, uint32_t n, const uint32_t *__restrict__ nbr,
                 const uint32_t *__restrict__ count, uint32_t stride, uint32_t cap,
                 sim_gpu_nlist_counts *__restrict__ nc, tile_pairs fb, cell_view cells,
                 sim_physics_f ph, sweep_sink sink, unsigned flags, int count_on) {
    const bool record = (flags & SIM_GPU_CULL_RECORD) != 0u;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        nc->rebuild = 0u; /* no later kernel of this step reads it; the next drift raises it */
        if (record && (MODE == kForce || MODE == kFriction)) {
            nc->frame.steps++;
        }
    }
    /* swept from the cells (no lists): the energy's and contacts' sweeps walk them */
    const bool fallback = nc->overflow != 0u || (flags & SIM_GPU_NLIST_CELLS) != 0u;
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    uint32_t touched = 0, tests = 0;
    const sim_period_f period = ph.box.period;
    const sim_period_f *per = ph.box.periodic ? &period : nullptr;
    /* the neighbours body i needed at the build (also when they overflowed: the growth) */
    const uint32_t most = i < n ? count[i] : 0u;
    double e = 0.0;
    if (!fallback) {
        float fx = 0.0f, fy = 0.0f, fz = 0.0f;
        if (i < n) {
            const uint32_t c = most < cap ? most : cap;
            tests = c;
            const sim_vec4f pi = sim_ld4(pos + i);
            sim_vec4f vi;
            vi.x = vi.y = vi.z = vi.w = 0.0f;
            bool have_vi = false;
            /* kFriction: body i's user index (who owns a pair) and torque */
            uint32_t ui = 0u;
            sim_vec3f ti;
            ti.x = ti.y = ti.z = 0.0f;
            for (uint32_t k = 0; k < c; ++k) {
                const uint32_t j = nbr[(size_t)k * stride + i];
                const sim_vec4f pj = sim_ld4(pos + j);
                if (!touching(pi, pj, per)) {
                    continue;
                }
                const bool once = HALF || i > j; /* a full list holds the pair twice */
                touched += once ? 1u : 0u;
                if constexpr (MODE == kContacts) {
                    if (once) {
                        emit_pair(sink, i, j);
                    }
                    continue;
                }
                if (!have_vi) {
                    if constexpr (MODE != kFriction) {
                        vi = sim_ld4(vel + i);
                    } else {
                        ui = sink.fric.perm != nullptr ? sink.fric.perm[i] : i;
                    }
                    have_vi = true;
                }
                if constexpr (MODE == kFriction) {
                    /* body i's velocity and spin again per contact (L1): registers the
                     * frictional visit needs not to spill, across the loop */
                    const sim_vec4f vi = sim_ld4(vel + i);
                    const sim_gpu_fric &fr = sink.fric;
                    const sim_gpu_fric_list &ls = sink.fric_list;
                    const uint32_t uj = fr.perm != nullptr ? fr.perm[j] : j;
                    const bool i_owns = ui > uj; /* the owner is sim_friction_contact_f's i */
                    const size_t at = (size_t)k * stride + i;
                    sim_contact_history_f h;
                    if (ls.stamp[at] == ls.gen) { /* this entry's, written by the last step */
                        const sim_vec4f sa = ls.a[at]; /* whole words: vector loads */
                        const sim_fric_roll2 sb = ls.b[at];
                        h = sim_fric_unpack(sa, sb);
                    } else { /* carried over this step's rebuild, new, or in the table */
                        bool carried = false;
                        if (ls.carry_gen[i] == ls.gen) { /* row i before the rebuild */
                            const uint32_t m = ls.carry_n[i];
                            for (uint32_t q = 0; q < m; ++q) {
                                const size_t cq = (size_t)q * stride + i;
                                if (ls.carry_partner[cq] == j) {
                                    /* its spring where the last step left it */
                                    const size_t was = (size_t)ls.carry_k[cq] * stride + i;
                                    const sim_vec4f sa = ls.a[was];
                                    const sim_fric_roll2 sb = ls.b[was];
                                    h = sim_fric_unpack(sa, sb);
                                    carried = true;
                                    break;
                                }
                            }
                        }
                        if (!carried) { /* new, or flushed into the table (a re-sort, upload) */
                            h = sim_fric_find(fr, i_owns ? ui : uj, i_owns ? uj : ui);
                        }
                    }
                    const sim_vec4f vj = sim_ld4(vel + j);
                    const sim_vec3f wi = sim_fric_xyz(fr.spin[i]); /* slot order */
                    const sim_vec3f wj = sim_fric_xyz(fr.spin[j]);
                    sim_vec3f f, t_own, t_other;
                    if (!sim_friction_contact_f(i_owns ? pi : pj, i_owns ? vi : vj,
                                                i_owns ? wi : wj, i_owns ? pj : pi,
                                                i_owns ? vj : vi, i_owns ? wj : wi, &h, &ph, fr.dt,
                                                &f, &t_own, &t_other, nullptr)) {
                        continue; /* no contact: the entry is not written, so not current */
                    }
                    if (fr.dt != 0.0f) { /* a step's sweep: the spring advances (this step's) */
                        sim_vec4f sa;
                        sim_fric_roll2 sb;
                        sim_fric_pack(h, &sa, &sb);
                        ls.a_next[at] = sa; /* whole words: vector stores */
                        ls.b_next[at] = sb;
                        ls.stamp[at] = ls.next;
                    }
                    const float sg = i_owns ? 1.0f : -1.0f; /* f is the owner's */
                    fx += sg * f.x;
                    fy += sg * f.y;
                    fz += sg * f.z;
                    const sim_vec3f tm = i_owns ? t_own : t_other;
                    ti.x += tm.x;
                    ti.y += tm.y;
                    ti.z += tm.z;
                    /* the owner's count (a register less than a sum across the loop); a full
                     * list's other end has it too, and leaves it to the owner's row */
                    if (HALF || i_owns) {
                        atomicAdd(ls.owned + (i_owns ? i : j), 1u);
                    }
                    if constexpr (HALF) { /* the pair is in this row only */
                        const sim_vec3f tj = i_owns ? t_other : t_own;
                        sim_atomic_add3(force + j, -sg * f.x, -sg * f.y, -sg * f.z);
                        sim_atomic_add3(fr.torque + j, tj.x, tj.y, tj.z);
                    }
                    continue;
                }
                float eij = 0.0f;
                const sim_vec3f f = sim_contact_force_f(pi, vi, pj, sim_ld4(vel + j), &ph,
                                                        MODE == kEnergy ? &eij : nullptr);
                if constexpr (MODE == kEnergy) {
                    e += HALF ? (double)eij : 0.5 * (double)eij;
                } else {
                    fx += f.x;
                    fy += f.y;
                    fz += f.z;
                    if (HALF) {
                        sim_atomic_add3(force + j, -f.x, -f.y, -f.z);
                    }
                }
            }
            if constexpr (MODE == kFriction) {
                if (HALF) { /* other threads add to body i too */
                    sim_atomic_add3(force + i, fx, fy, fz);
                    if (have_vi) {
                        sim_atomic_add3(sink.fric.torque + i, ti.x, ti.y, ti.z);
                    }
                } else { /* body i's alone: stored (the torques zeroed before the sweep) */
                    sim_vec4f f4;
                    f4.x = fx;
                    f4.y = fy;
                    f4.z = fz;
                    f4.w = 0.0f;
                    force[i] = f4;
                    if (have_vi) {
                        sim_vec4f t4;
                        t4.x = ti.x;
                        t4.y = ti.y;
                        t4.z = ti.z;
                        t4.w = 0.0f;
                        sink.fric.torque[i] = t4;
                    }
                }
            }
            if constexpr (MODE == kForce) {
                if (HALF) {
                    sim_atomic_add3(force + i, fx, fy, fz);
                } else {
                    sim_vec4f f4;
                    f4.x = fx;
                    f4.y = fy;
                    f4.z = fz;
                    f4.w = 0.0f;
                    force[i] = f4;
                }
            }
        }
    } else {
        /* a touching pair of the fallback, found once: both bodies' forces by atomics */
        auto on_candidate = [&](uint32_t p, const sim_vec4f &pp, uint32_t q, const sim_vec4f &pq) {
            if (!touching(pp, pq, per)) {
                return;
            }
            ++touched;
            if constexpr (MODE == kContacts) {
                emit_pair(sink, p, q);
            } else if constexpr (MODE == kFriction) {
                const sim_vec3f f = sim_fric_pair(sink.fric, ph, p, q, pp, sim_ld4(vel + p), pq,
                                                  sim_ld4(vel + q), nullptr);
                sim_atomic_add3(force + p, f.x, f.y, f.z);
                sim_atomic_add3(force + q, -f.x, -f.y, -f.z);
            } else {
                float eij = 0.0f;
                const sim_vec3f f = sim_contact_force_f(pp, sim_ld4(vel + p), pq, sim_ld4(vel + q),
                                                        &ph, MODE == kEnergy ? &eij : nullptr);
                if constexpr (MODE == kEnergy) {
                    e += (double)eij;
                } else {
                    sim_atomic_add3(force + p, f.x, f.y, f.z);
                    sim_atomic_add3(force + q, -f.x, -f.y, -f.z);
                }
            }
        };
        if (record && blockIdx.x == 0 && threadIdx.x == 0) {
            nc->frame.fallback_steps++;
        }
        if (cells.g.cells != 0u) { /* built from the grid: body i's cells, each pair once */
            if (i < n) {
                const sim_vec4f pi = sim_ld4(pos + i);
                grid_walk(cells, cells.body_cell[i], pos, [&](uint32_t j, const sim_vec4f &pj) {
                    if (j < i) {
                        ++tests;
                        on_candidate(i, pi, j, pj);
                    }
                });
            }
        } else {
            const pair_walk walk =
                walk_of(fb.list, fb.cc->tiles, fb.cap, fb.row0, fb.row1, fb.tile);
            if (record && count_on && blockIdx.x == 0 && threadIdx.x == 0) {
                atomicAdd(&nc->frame.tests[0], (unsigned long long)walk.items * fb.tile * fb.tile);
            }
            __shared__ sim_vec4f sh[kThreads / 32][kSub];
            const uint32_t warp = threadIdx.x >> 5;
            const uint64_t warps = (uint64_t)gridDim.x * (kThreads / 32);
            for (uint64_t k = (uint64_t)blockIdx.x * (kThreads / 32) + warp; k < walk.tasks();
                 k += warps) {
                sim_tile2 t;
                uint32_t a, b;
                if (walk.task(k, &t, &a, &b)) {
                    warp_pairs(t, a, b, fb.tile, pos, n, fb.boxes, 0.0f, per, sh[warp],
                               on_candidate);
                }
            }
        }
    }
    if constexpr (MODE == kEnergy) {
        sim_block_sum_add<kThreads>(e, sink.energy);
    }
    if constexpr (MODE == kForce || MODE == kFriction) {
        /* The most entries of one body (the stepper grows the lists by it): always. */
        const uint32_t wmost = sim_warp_max_u32(most);
        if (lane_id() == 0u && record) {
            if (wmost > nc->most) {
                atomicMax(&nc->most, wmost);
            }
            if (wmost > nc->frame.peak) {
                atomicMax(&nc->frame.peak, wmost);
            }
        }
        if (count_on && record) {
            count_sweep(nc, tests, touched);
        }
    }
}

/* Friction's springs beside the entries that are current, and a rebuild's carry (gpu/friction.h),
 * into the last step's table, by owner and partner (a full list's pair from its owner's row: both
 * rows hold the same spring), each made stale where it was. Returns at once (every block) unless
 * forced or the lists are rebuilt this step (on_overflow: unless they overflowed, after the build:
 * the sweep then walks the tile pairs with the tables, and the carry goes there).
 *
 * Launch contract: ceil(N / 256) blocks of 256 threads, thread i slot i (guard i < n). Cost per
 * body: its count and perm, 4 B per entry (the stamps, coalesced as nbr); per current entry its
 * partner and perm, 24 B of spring, a slot claim (an atomic) and 28 B into the owner's row. */
__global__ void __launch_bounds__(kThreads)
    fric_flush_kernel(const uint32_t *__restrict__ nbr, const uint32_t *__restrict__ count,
                      uint32_t stride, uint32_t cap, uint32_t n,
                      const sim_gpu_nlist_counts *__restrict__ nc, int forced, int on_overflow,
                      int full, sim_gpu_fric into, sim_gpu_fric_list ls) {
    if (on_overflow ? nc->overflow == 0u : !forced && nc->rebuild == 0u) {
        return;
    }
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    const uint32_t ui = into.perm != nullptr ? into.perm[i] : i;
    /* source 0: the entries; 1: the carry of a rebuild whose sweep has not run */
    const uint32_t most = count[i];
    const uint32_t c = most < cap ? most : cap;
    const bool carried = ls.carry_gen[i] == ls.gen;
    const uint32_t m = carried ? ls.carry_n[i] : 0u;
    for (uint32_t k = 0; k < c + m; ++k) {
        const bool entry = k < c;
        const size_t at = (size_t)(entry ? k : k - c) * stride + i;
        uint32_t j;
        sim_vec4f sa;
        sim_fric_roll2 sb;
        if (entry) {
            if (ls.stamp[at] != ls.gen) {
                continue;
            }
            ls.stamp[at] = 0u;
            j = nbr[at];
            sa = ls.a[at];
            sb = ls.b[at];
        } else {
            j = ls.carry_partner[at];
            const size_t was = (size_t)ls.carry_k[at] * stride + i; /* in the last step's */
            sa = ls.a[was];
            sb = ls.b[was];
        }
        const uint32_t uj = into.perm != nullptr ? into.perm[j] : j;
        if (full && ui < uj) {
            continue; /* the owner's row flushes it */
        }
        const sim_contact_history_f h = sim_fric_unpack(sa, sb);
        sim_fric_store(into, ui > uj ? ui : uj, ui > uj ? uj : ui, h);
    }
    if (carried) {
        ls.carry_gen[i] = 0u;
    }
}

/* A rebuild's carry (gpu/friction.h): slot i's current entries, compacted as (partner slot,
 * entry) beside the old lists, before the build overwrites them; the sweep that follows finds a
 * pair there, in the row of the same slot (the slots do not change between: a re-sort flushes
 * first), and its spring in the last step's buffer at that entry, with no table and no atomics.
 * Entries carried are made stale. A row carried already at this generation (a second rebuild
 * before the step's sweep: its entries cannot be current since) keeps its carry. Gated as the
 * flush.
 *
 * Launch contract: ceil(N / 256) blocks of 256 threads, thread i slot i (guard i < n). Cost per
 * body: its count and carry generation, 4 B per entry (the stamps), per current entry its
 * partner read and 8 B written in the same slot-major layout; 8 B per body written. */
__global__ void __launch_bounds__(kThreads)
    fric_carry_kernel(const uint32_t *__restrict__ nbr, const uint32_t *__restrict__ count,
                      uint32_t stride, uint32_t cap, uint32_t n,
                      const sim_gpu_nlist_counts *__restrict__ nc, int forced,
                      sim_gpu_fric_list ls) {
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n || ls.carry_gen[i] == ls.gen) {
        return;
    }
    const uint32_t most = count[i];
    const uint32_t c = most < cap ? most : cap;
    uint32_t q = 0;
    for (uint32_t k = 0; k < c; ++k) {
        const size_t at = (size_t)k * stride + i;
        if (ls.stamp[at] != ls.gen) {
            continue;
        }
        ls.stamp[at] = 0u;
        const size_t cq = (size_t)q * stride + i;
        ls.carry_partner[cq] = nbr[at];
        ls.carry_k[cq] = k;
        ++q;
    }
    ls.carry_n[i] = q;
    ls.carry_gen[i] = ls.gen;
}

} // namespace nl

#ifndef SIM_NLIST_KERNELS_ONLY
using namespace nl;

namespace {

unsigned body_blocks(uint32_t n) {
    return (n + kThreads - 1) / kThreads;
}

/* A grid build kernel's blocks for `items` cells or bodies: one per 256, at most the resident
 * blocks of the device (l->grid_blocks; the kernels stride over the rest). */
unsigned grid_blocks(const sim_gpu_nlist *l, uint32_t items) {
    const unsigned need = (items + kThreads - 1) / kThreads;
    const unsigned most = (unsigned)(l->grid_blocks > 0 ? l->grid_blocks : 1);
    return need < most ? (need > 0 ? need : 1u) : most;
}

/* The flags of a sweep that is not the step's (energy, contacts): swept from the cells, it walks
 * them (there are no lists). */
unsigned cells_only(const sim_gpu_nlist *l) {
    return l->direct && l->grid.cells > 0 ? (unsigned)SIM_GPU_NLIST_CELLS : 0u;
}

float half_skin2(const sim_gpu_nlist *l) {
    const float h = 0.5f * l->skin;
    return h * h;
}

/* kernel<<<blocks, 256, 0, s>>>(args...), as a programmatic dependent of the kernel before it
 * where the device has them (l->chained; the kernel calls sim_chain_enter first). */
template <typename... Params, typename... Args>
sim_status launch_chained(const sim_gpu_nlist *l, const char *name, void (*kernel)(Params...),
                          unsigned blocks, cudaStream_t s, sim_error *err, Args... args) {
    if (!l->chained) {
        kernel<<<blocks, kThreads, 0, s>>>(args...);
    } else {
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(kThreads);
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        SIM_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, args...));
    }
    SIM_CUDA_CHECK_LAUNCH(name);
    return SIM_OK;
}

nl::cell_view cells_of(const sim_gpu_nlist *l) {
    return nl::cell_view{l->grid,     l->cell_range, l->cell_body,
                         l->body_cell, l->body_rank, l->cell_pos,
                         l->cell_fill, l->direct ? l->cell_vel : nullptr};
}

nl::tile_pairs fallback_of(const sim_gpu_cull *c) {
    return nl::tile_pairs{c->boxes, c->tile_list, c->tile_cap, c->counts,
                          c->row0,  c->row1,      c->tile};
}

template <int MODE>
sim_status launch_sweep(const sim_gpu_bodies *b, const sim_physics_f *ph, const sim_gpu_cull *c,
                        const sim_gpu_nlist *l, const sweep_sink &sink, unsigned flags,
                        int count_on, cudaStream_t s, sim_error *err) {
    const unsigned grid = body_blocks(b->n);
    if (l->half) {
        sweep_kernel<MODE, true><<<grid, kThreads, 0, s>>>(
            b->pos, b->vel, b->force, b->n, l->nbr, l->count, l->stride, l->cap, l->counts,
            fallback_of(c), cells_of(l), *ph, sink, flags, count_on);
    } else {
        sweep_kernel<MODE, false><<<grid, kThreads, 0, s>>>(
            b->pos, b->vel, b->force, b->n, l->nbr, l->count, l->stride, l->cap, l->counts,
            fallback_of(c), cells_of(l), *ph, sink, flags, count_on);
    }
    SIM_CUDA_CHECK_LAUNCH("nlist sweep_kernel");
    return SIM_OK;
}

/* The cells' sweep at LANES threads per body, its walls' or its periodic instantiation. */
template <int LANES>
sim_status launch_cell_sweep(const sim_gpu_bodies *b, const sim_physics_f *ph,
                             const sim_gpu_nlist *l, sim_vec4f *vel, const sim_gpu_kick &k,
                             bool periodic, unsigned blocks, unsigned flags, int count_contacts,
                             cudaStream_t s, sim_error *err) {
    if (periodic) {
        return launch_chained(l, "nlist cell_sweep_kernel", cell_sweep_kernel<true, LANES>, blocks,
                              s, err, b->n, cells_of(l), b->force, vel, k, *ph, l->counts, flags,
                              count_contacts);
    }
    return launch_chained(l, "nlist cell_sweep_kernel", cell_sweep_kernel<false, LANES>, blocks, s,
                          err, b->n, cells_of(l), b->force, vel, k, *ph, l->counts, flags,
                          count_contacts);
}

/* The cells' sweep each pair once at LANES threads per body, walls' or periodic. */
template <int LANES>
sim_status launch_cell_pairs(const sim_gpu_bodies *b, const sim_physics_f *ph,
                             const sim_gpu_nlist *l, bool periodic, unsigned blocks, unsigned flags,
                             int count_contacts, cudaStream_t s, sim_error *err) {
    if (periodic) {
        return launch_chained(l, "nlist cell_pairs_kernel", cell_pairs_kernel<true, LANES>, blocks,
                              s, err, b->n, cells_of(l), b->force, *ph, l->counts, flags,
                              count_contacts);
    }
    return launch_chained(l, "nlist cell_pairs_kernel", cell_pairs_kernel<false, LANES>, blocks, s,
                          err, b->n, cells_of(l), b->force, *ph, l->counts, flags, count_contacts);
}

} // namespace

sim_status sim_gpu_nlist_alloc(sim_gpu_nlist *l, uint32_t n, uint32_t cap, int half, int sm_count,
                               cudaStream_t s, sim_error *err) {
    memset(l, 0, sizeof *l);
    l->n = n;
    l->stride = sim_nlist_stride(n);
    l->half = half;
    const cudaError_t e1 = cudaMalloc((void **)&l->count, (size_t)n * sizeof *l->count);
    const cudaError_t e2 = cudaMalloc((void **)&l->ref, (size_t)n * sizeof *l->ref);
    const cudaError_t e3 = cudaMalloc((void **)&l->counts, sizeof *l->counts);
    if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess) {
        (void)cudaGetLastError();
        sim_gpu_nlist_free(l);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate the neighbour lists' counts and positions",
                        n);
    }
    SIM_TRY(sim_gpu_nlist_realloc(l, cap, err));
    int per_sm = 0;
    SIM_CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, build_kernel, kBuildWarps * 32, 0));
    l->build_grid = (per_sm > 0 ? per_sm : 1) * (sm_count > 0 ? sm_count : 1);
    /* the persistent grid: kGridBlocksPerSm blocks an SM, or as many as the device's SM holds */
    SIM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_bin_kernel, kThreads, 0));
    per_sm = per_sm < 1 ? 1 : per_sm < kGridBlocksPerSm ? per_sm : kGridBlocksPerSm;
    l->grid_blocks = per_sm * (sm_count > 0 ? sm_count : 1);
    /* The cells' sweep: each pair once, at 1, 2 or 4 threads a body as the size fills the GPU
     * (grid_build.cuh: cell_sweep_lanes, cell_pairs_kernel). For the GPU tests (every form at
     * their small sizes) and for timing one against another, NBSIM_CELL_THREADS=1|2|4 picks the
     * threads a body and NBSIM_CELL_ONCE=0|1 whether each pair is taken once (0: both directions,
     * cell_sweep_kernel), whatever the size. */
    l->sweep_lanes = cell_sweep_lanes(n, sm_count);
    l->pairs_once = 1;
    const char *threads = getenv("NBSIM_CELL_THREADS"), *once = getenv("NBSIM_CELL_ONCE");
    if (threads != nullptr && strlen(threads) == 1 && strchr("124", threads[0]) != nullptr) {
        l->sweep_lanes = threads[0] - '0';
    }
    if (once != nullptr && strlen(once) == 1 && strchr("01", once[0]) != nullptr) {
        l->pairs_once = once[0] == '1';
    }
    /* NBSIM_KICK_APART=1: each pair once's second half kicks in a pass of its own, not in the next
     * drift (cuda_verlet_second), to time what folding it saves (2 to 5 % of the lattice's
     * whole step: bench/results/nvidia-h100/cells_once.md) */
    const char *apart = getenv("NBSIM_KICK_APART");
    l->kick_apart = apart != nullptr && strcmp(apart, "1") == 0;
    int device = 0, major = 0;
    SIM_CUDA_TRY(cudaGetDevice(&device));
    SIM_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    /* NBSIM_UNCHAINED=1: plain launches, for scripts/gpu_nlist.sh to measure what chaining saves */
    const char *unchained = getenv("NBSIM_UNCHAINED");
    l->chained = major >= 9 && !(unchained != nullptr && strcmp(unchained, "1") == 0);
    /* NaN positions: every body has moved, whatever asks first rebuilds */
    SIM_CUDA_TRY(cudaMemsetAsync(l->ref, 0xff, (size_t)n * sizeof *l->ref, s));
    SIM_CUDA_TRY(cudaMemsetAsync(l->count, 0, (size_t)n * sizeof *l->count, s));
    SIM_CUDA_TRY(cudaMemsetAsync(l->counts, 0, sizeof *l->counts, s));
    return SIM_OK;
}

void sim_gpu_nlist_free(sim_gpu_nlist *l) {
    (void)cudaFree(l->nbr);
    (void)cudaFree(l->count);
    (void)cudaFree(l->ref);
    (void)cudaFree(l->counts);
    (void)cudaFree(l->cell_range);
    (void)cudaFree(l->cell_body);
    (void)cudaFree(l->body_cell);
    (void)cudaFree(l->body_rank);
    (void)cudaFree(l->cell_pos);
    (void)cudaFree(l->cell_fill);
    (void)cudaFree(l->cell_vel);
    memset(l, 0, sizeof *l);
}

sim_status sim_gpu_nlist_realloc(sim_gpu_nlist *l, uint32_t cap, sim_error *err) {
    cap = cap > 0 ? cap : 1;
    uint32_t *nbr = nullptr;
    const size_t bytes = (size_t)cap * l->stride * sizeof *nbr;
    const cudaError_t e = cudaMalloc((void **)&nbr, bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu bytes of GPU memory for neighbour "
                        "lists of %u entries",
                        l->n, (unsigned long long)bytes, cap);
    }
    (void)cudaFree(l->nbr);
    l->nbr = nbr;
    l->cap = cap;
    return SIM_OK;
}

sim_status sim_gpu_nlist_use_grid(sim_gpu_nlist *l, const sim_cell_grid *g, int *changed,
                                  sim_error *err) {
    sim_cell_grid none;
    memset(&none, 0, sizeof none);
    const sim_cell_grid *want = g != nullptr && g->cells > 0 ? g : &none;
    *changed = !sim_cell_grid_same(want, &l->grid);
    if (!*changed) {
        return SIM_OK;
    }
    l->grid = none; /* the tiles until the cells are had */
    if (want->cells == 0) {
        return SIM_OK;
    }
    const size_t body_bytes = (size_t)l->n * sizeof(uint32_t);
    if (l->body_cell == nullptr) {
        const cudaError_t e1 = cudaMalloc((void **)&l->cell_body, body_bytes);
        const cudaError_t e2 = cudaMalloc((void **)&l->body_cell, body_bytes);
        const cudaError_t e3 = cudaMalloc((void **)&l->body_rank, body_bytes);
        const cudaError_t e4 = cudaMalloc((void **)&l->cell_pos, (size_t)l->n * sizeof(sim_vec4f));
        const cudaError_t e5 = cudaMalloc((void **)&l->cell_vel, (size_t)l->n * sizeof(sim_vec4f));
        if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess || e4 != cudaSuccess ||
            e5 != cudaSuccess) {
            (void)cudaGetLastError();
            /* all or none: body_cell says they are there */
            (void)cudaFree(l->cell_body);
            (void)cudaFree(l->body_cell);
            (void)cudaFree(l->body_rank);
            (void)cudaFree(l->cell_pos);
            (void)cudaFree(l->cell_vel);
            l->cell_body = l->body_cell = l->body_rank = nullptr;
            l->cell_pos = l->cell_vel = nullptr;
            return sim_fail(err, SIM_OUT_OF_MEMORY,
                            "N = %u bodies: cannot allocate the neighbour lists' cell grid", l->n);
        }
    }
    if (want->cells > l->grid_cap) {
        (void)cudaFree(l->cell_range);
        (void)cudaFree(l->cell_fill);
        l->cell_range = nullptr;
        l->cell_fill = nullptr;
        l->grid_cap = 0;
        const size_t bytes = (size_t)want->cells * sizeof *l->cell_range;
        const cudaError_t e1 = cudaMalloc((void **)&l->cell_range, bytes);
        const cudaError_t e2 =
            cudaMalloc((void **)&l->cell_fill, (size_t)want->cells * sizeof *l->cell_fill);
        if (e1 != cudaSuccess || e2 != cudaSuccess) {
            (void)cudaGetLastError();
            (void)cudaFree(l->cell_range);
            (void)cudaFree(l->cell_fill);
            l->cell_range = nullptr;
            l->cell_fill = nullptr;
            return sim_fail(err, SIM_OUT_OF_MEMORY,
                            "N = %u bodies: cannot allocate the %u cells of the neighbour lists' "
                            "grid",
                            l->n, want->cells);
        }
        l->grid_cap = want->cells;
    }
    /* every fill count 0 (the place zeroes those it reads: only a new shape needs this) */
    SIM_CUDA_TRY(cudaMemset(l->cell_fill, 0, (size_t)l->grid_cap * sizeof *l->cell_fill));
    l->grid = *want;
    return SIM_OK;
}

uint64_t sim_gpu_nlist_bytes(const sim_gpu_nlist *l) {
    const uint64_t grid = l->body_cell != nullptr
                              ? (uint64_t)l->n * SIM_GPU_NLIST_GRID_BYTES_PER_BODY +
                                    (uint64_t)l->grid_cap * SIM_GPU_NLIST_GRID_BYTES_PER_CELL
                              : 0u;
    return (uint64_t)l->cap * l->stride * sizeof(uint32_t) +
           (uint64_t)l->n * SIM_GPU_NLIST_BYTES_PER_BODY + grid;
}

sim_status sim_gpu_nlist_drift(const sim_gpu_bodies *b, const sim_gpu_nlist *l, float dt,
                               sim_vec4f *spin, const sim_vec4f *torque, const sim_gpu_kick *last,
                               const sim_physics_f *ph, cudaStream_t s, sim_error *err) {
    if (l->direct && l->grid.cells > 0) {
        const sim_gpu_kick none = {};
        drift_bin_kernel<<<body_blocks(b->n), kThreads, 0, s>>>(
            b->pos, b->vel, b->force, b->n, dt, l->ref, half_skin2(l), l->counts, cells_of(l),
            l->period, l->pairs_once, last != nullptr ? *last : none, *ph);
        SIM_CUDA_CHECK_LAUNCH("nlist drift_bin_kernel");
        return SIM_OK;
    }
    drift_kernel<<<body_blocks(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->force, b->n, dt, l->ref,
                                                        half_skin2(l), &l->counts->rebuild,
                                                        l->period, spin, torque);
    SIM_CUDA_CHECK_LAUNCH("nlist drift_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_check(const sim_gpu_bodies *b, const sim_gpu_nlist *l, cudaStream_t s,
                               sim_error *err) {
    check_kernel<<<body_blocks(b->n), kThreads, 0, s>>>(b->pos, b->n, l->ref, half_skin2(l),
                                                        &l->counts->rebuild, l->period);
    SIM_CUDA_CHECK_LAUNCH("nlist check_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_boxes(const sim_gpu_bodies *b, const sim_gpu_cull *c,
                               const sim_gpu_nlist *l, unsigned flags, cudaStream_t s,
                               sim_error *err) {
    boxes_kernel<<<c->n_supers, kBoxWarps * 32, 0, s>>>(
        b->pos, b->n, c->tile, c->n_tiles, 0.5f * l->skin, c->boxes, c->supers, c->counts, l->ref,
        l->count, l->counts, flags, c->period);
    SIM_CUDA_CHECK_LAUNCH("nlist boxes_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_build(const sim_gpu_bodies *b, const sim_gpu_cull *c,
                               const sim_gpu_nlist *l, unsigned flags, cudaStream_t s,
                               sim_error *err) {
    if (l->grid.cells > 0) {
        const nl::cell_view v = cells_of(l);
        const unsigned cells = grid_blocks(l, l->grid.cells), bodies = grid_blocks(l, b->n);
        const bool binned = l->direct && (flags & SIM_GPU_NLIST_BINNED) &&
                            !(flags & SIM_GPU_CULL_SORTED); /* a sort moved the drift's slots */
        /* the scatter's flags: the bin's rebuild is counted once (by the bin) */
        unsigned scatter_flags = flags;
        if (!binned) {
            if (flags & SIM_GPU_NLIST_BINNED) { /* the drift's counts were for the old slots */
                SIM_CUDA_TRY(cudaMemsetAsync(l->cell_fill, 0,
                                             (size_t)l->grid.cells * sizeof *l->cell_fill, s));
            }
            const unsigned bin_flags = flags | (l->direct ? (unsigned)SIM_GPU_NLIST_REBUILD : 0u);
            SIM_TRY(launch_chained(l, "nlist grid_bin_kernel", grid_bin_kernel, bodies, s, err,
                                   (const sim_vec4f *)b->pos, b->n, v, l->ref, l->count,
                                   l->counts, bin_flags));
            if (l->direct) {
                scatter_flags = (flags & ~(unsigned)SIM_GPU_CULL_RECORD) | SIM_GPU_NLIST_REBUILD;
            }
        }
        const int forced = l->direct || (flags & SIM_GPU_NLIST_REBUILD) != 0u;
        SIM_TRY(launch_chained(l, "nlist grid_place_kernel", grid_place_kernel, cells, s, err, v,
                               l->counts, forced));
        SIM_TRY(launch_chained(l, "nlist grid_scatter_kernel", grid_scatter_kernel, bodies, s, err,
                               (const sim_vec4f *)b->pos, (const sim_vec4f *)b->vel, b->n, v,
                               l->ref, l->counts, scatter_flags));
        if (l->direct) {
            return SIM_OK; /* no lists: the contacts are swept from the cells */
        }
        return launch_chained(l, "nlist grid_build_kernel", grid_build_kernel, bodies, s, err,
                              b->n, v, l->skin, l->nbr, l->count, l->stride, l->cap, !l->half,
                              l->counts, l->period);
    }
    build_kernel<<<l->build_grid, kBuildWarps * 32, 0, s>>>(
        b->pos, b->n, c->tile, c->boxes, c->tile_list, c->tile_cap, c->counts, c->row0, c->row1,
        l->skin, l->nbr, l->count, l->stride, l->cap, !l->half, l->counts, flags, l->period);
    SIM_CUDA_CHECK_LAUNCH("nlist build_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                const sim_gpu_cull *c, const sim_gpu_nlist *l, unsigned flags,
                                int count_contacts, const sim_gpu_kick *kick, cudaStream_t s,
                                sim_error *err) {
    if (l->direct && l->grid.cells > 0) {
        sim_gpu_kick none = {};
        const sim_gpu_kick k = kick != nullptr ? *kick : none;
        sim_vec4f *vel = kick != nullptr ? b->vel : nullptr; /* NULL: no kick */
        const unsigned blocks =
            (unsigned)(((uint64_t)b->n * (unsigned)l->sweep_lanes + kThreads - 1) / kThreads);
        const bool periodic = ph->box.periodic != 0;
        if (l->pairs_once) {
            switch (l->sweep_lanes) {
            case 4:
                return launch_cell_pairs<4>(b, ph, l, periodic, blocks, flags, count_contacts, s,
                                            err);
            case 2:
                return launch_cell_pairs<2>(b, ph, l, periodic, blocks, flags, count_contacts, s,
                                            err);
            default:
                return launch_cell_pairs<1>(b, ph, l, periodic, blocks, flags, count_contacts, s,
                                            err);
            }
        }
        switch (l->sweep_lanes) {
        case 4:
            return launch_cell_sweep<4>(b, ph, l, vel, k, periodic, blocks, flags, count_contacts,
                                        s, err);
        case 2:
            return launch_cell_sweep<2>(b, ph, l, vel, k, periodic, blocks, flags, count_contacts,
                                        s, err);
        default:
            return launch_cell_sweep<1>(b, ph, l, vel, k, periodic, blocks, flags, count_contacts,
                                        s, err);
        }
    }
    const sweep_sink sink = {};
    return launch_sweep<kForce>(b, ph, c, l, sink, flags, count_contacts, s, err);
}

sim_status sim_gpu_nlist_friction(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_gpu_cull *c, const sim_gpu_nlist *l,
                                  const sim_gpu_fric *fric, const sim_gpu_fric_list *springs,
                                  unsigned flags, int count_contacts, cudaStream_t s,
                                  sim_error *err) {
    sweep_sink sink = {};
    sink.fric = *fric;
    sink.fric_list = *springs;
    return launch_sweep<kFriction>(b, ph, c, l, sink, flags, count_contacts, s, err);
}

sim_status sim_gpu_nlist_friction_flush(const sim_gpu_nlist *l, const sim_gpu_fric *into,
                                        const sim_gpu_fric_list *springs, int forced,
                                        cudaStream_t s, sim_error *err) {
    fric_flush_kernel<<<body_blocks(l->n), kThreads, 0, s>>>(
        l->nbr, l->count, l->stride, l->cap, l->n, l->counts, forced, 0, !l->half, *into, *springs);
    SIM_CUDA_CHECK_LAUNCH("nlist fric_flush_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_friction_overflowed(const sim_gpu_nlist *l, const sim_gpu_fric *into,
                                             const sim_gpu_fric_list *springs, cudaStream_t s,
                                             sim_error *err) {
    fric_flush_kernel<<<body_blocks(l->n), kThreads, 0, s>>>(
        l->nbr, l->count, l->stride, l->cap, l->n, l->counts, 0, 1, !l->half, *into, *springs);
    SIM_CUDA_CHECK_LAUNCH("nlist fric_flush_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_friction_carry(const sim_gpu_nlist *l, const sim_gpu_fric_list *springs,
                                        int forced, cudaStream_t s, sim_error *err) {
    fric_carry_kernel<<<body_blocks(l->n), kThreads, 0, s>>>(l->nbr, l->count, l->stride, l->cap,
                                                             l->n, l->counts, forced, *springs);
    SIM_CUDA_CHECK_LAUNCH("nlist fric_carry_kernel");
    return SIM_OK;
}

sim_status sim_gpu_nlist_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                const sim_gpu_cull *c, const sim_gpu_nlist *l, double *d_energy,
                                cudaStream_t s, sim_error *err) {
    sweep_sink sink = {};
    sink.energy = d_energy;
    return launch_sweep<kEnergy>(b, ph, c, l, sink, cells_only(l), 0, s, err);
}

sim_status sim_gpu_nlist_contacts(const sim_gpu_bodies *b, const sim_physics_f *phys,
                                  const sim_gpu_cull *c,
                                  const sim_gpu_nlist *l, const uint32_t *perm,
                                  sim_body_pair *d_out, uint32_t cap, uint32_t *d_count,
                                  cudaStream_t s, sim_error *err) {
    sweep_sink sink = {};
    sink.perm = perm;
    sink.out = d_out;
    sink.out_cap = cap;
    sink.out_count = d_count;
    sim_physics_f ph = {}; /* the touching test alone: only the periodic axes matter */
    ph.box.periodic = phys->box.periodic;
    ph.box.period = phys->box.period;
    return launch_sweep<kContacts>(b, &ph, c, l, sink, cells_only(l), 0, s, err);
}

#endif /* SIM_NLIST_KERNELS_ONLY */
