/* SPDX-License-Identifier: MIT
 * nbsim — the kernels of the ATM cut-off's neighbour lists (atm_list_kernels.h): tile boxes, the
 * build, the triple sweep (half lists with atomics, full lists without). Why the triples are the
 * tile sweep's: atm_list.h. tests/test_atm_list_emu.cc compiles the kernels alone on the CPU
 * (SIM_ATM_LIST_KERNELS_ONLY: no drivers) and runs them under tests/cuda_emulation.h. */
#include "nlist/atm_list_kernels.h"

#include <string.h>

#include "nbsim/internal/backend.h"

#include "cull/cull_device.cuh"
#include "cull/triplet_cull.h"
#include "gpu/arch.cuh"

namespace atml {

constexpr int kT = (int)SIM_TRIPLET_TILE;
static_assert(kT == 32, "a triplet tile is one warp's lanes");
constexpr int kWarps = 4; /* boxes and build: a warp per tile */
constexpr int kThreads = kWarps * 32;

/* Boxes of centres of the triplet tiles (inflated by cull.h's margin) and the build positions,
 * when the lists are rebuilt: counts->rebuild up (the check) or the rebuild forced
 * (SIM_GPU_ATM_LIST_REBUILD); otherwise every block returns at once.
 *
 * Launch contract: grid = ceil(n_tiles / 4) blocks of 4 warps; warp w of block g owns tile
 * t = 4 g + w, lane l body 32 t + l (guard: body < n; a tile past n_tiles returns). Block 0 raises
 * counts->rebuild (the build reads it), zeroes counts->most and entries, stores the build's reach
 * (the sweep finds an overflowed list's triples with it) and, RECORD, counts the rebuild. Cost per
 * body: 16 B read, 16 B written, 6 FMNMX; per tile 30 shuffles, 32 B written. */
__global__ void __launch_bounds__(kThreads)
    atm_list_boxes_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t n_tiles,
                          sim_cull_box *__restrict__ boxes, sim_vec4f *__restrict__ ref,
                          sim_gpu_atm_list_counts *__restrict__ counts, float reach2,
                          float box_limit, unsigned flags) {
    const bool forced = (flags & SIM_GPU_ATM_LIST_REBUILD) != 0u;
    if (!forced && counts->rebuild == 0u) {
        return; /* uniform: the flag was written by earlier launches only */
    }
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t t = blockIdx.x * (uint32_t)kWarps + (threadIdx.x >> 5);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        counts->rebuild = 1u;
        counts->most = 0;
        counts->entries = 0;
        counts->reach2 = reach2;
        counts->box_limit = box_limit;
        if (flags & SIM_GPU_ATM_LIST_RECORD) {
            counts->frame.rebuilds++;
        }
    }
    if (t >= n_tiles) {
        return;
    }
    const uint32_t i = t * (uint32_t)kT + lane;
    sim_cull_box box = sim_cull_empty_box();
    if (i < n) {
        const sim_vec4f p = sim_ld4(pos + i);
        /* fminf / fmaxf with the empty box skip a NaN centre, as the culling's boxes do */
        box.lo.x = fminf(box.lo.x, p.x);
        box.lo.y = fminf(box.lo.y, p.y);
        box.lo.z = fminf(box.lo.z, p.z);
        box.hi.x = fmaxf(box.hi.x, p.x);
        box.hi.y = fmaxf(box.hi.y, p.y);
        box.hi.z = fmaxf(box.hi.z, p.z);
        ref[i] = p;
    }
    box = sim_cull_warp_box(box);
    sim_cull_inflate(&box);
    if (lane == 0) {
        boxes[t] = box;
    }
}

/* Each body's displacement since the build: more than half the skin (h2 = (s/2)^2), or NaN,
 * raises counts->rebuild (one store per block that saw it: sim_block_raise; never lowered here).
 *
 * Launch contract: ceil(n / 128) blocks of 128 threads, thread i body i (guard i < n; every
 * thread reaches the vote). Cost per body: 32 B read, ~9 FP32. */
__global__ void __launch_bounds__(kThreads)
    atm_list_check_kernel(const sim_vec4f *__restrict__ pos, uint32_t n,
                          const sim_vec4f *__restrict__ ref, float h2,
                          sim_gpu_atm_list_counts *__restrict__ counts) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    const bool moved = i < n && sim_nlist_moved_f(sim_ld4(pos + i), sim_ld4(ref + i), h2) != 0;
    sim_block_raise(moved, &counts->rebuild);
}

/* The lists: body i gets every j (HALF: j < i; else j != i) with
 * sim_atm_list_near_f(x_i, x_j, reach2), from the tiles J whose box is within box_limit of its
 * own tile's (sim_tcull_limit_f(reach2): never a pair the body test keeps, triplet_cull.h), in
 * ascending j. Returns at once unless counts->rebuild is up (the boxes kernel raised it when
 * forced).
 *
 * Launch contract: grid = ceil(n_tiles / 4) blocks of 4 warps; warp w of block g owns tile
 * I = 4 g + w, lane l body i = 32 I + l (bodies past n take part in the shuffles and store
 * nothing). The warp tests 32 tiles J at a time (a lane each, one ballot), and for each near tile
 * broadcasts its 32 bodies by shuffles; entries past cap are counted, not stored. Each body
 * writes count[i]; the warp's largest count goes to counts->most (atomicMax), its sum to
 * counts->entries. Cost per tile pair tested: 2 LDG.128 + ~20 FP32 per lane-tile; per near tile
 * and lane: 16 B read, 32 x (4 SHFL + 8 FP32 + a compare), a 4 B store per entry (adjacent across
 * the warp when the lanes' counts agree, scattered otherwise). O(n_tiles^2 / 2) box tests for
 * HALF: fine up to ~10^6 bodies at a rebuild every ~10 steps (the bench measures it); tile-pair
 * lists would make it O(N). */
template <bool HALF>
__global__ void __launch_bounds__(kThreads)
    atm_list_build_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t n_tiles,
                          const sim_cull_box *__restrict__ boxes, float reach2, float box_limit,
                          uint32_t *__restrict__ nbr, uint32_t *__restrict__ count,
                          uint32_t stride, uint32_t cap,
                          sim_gpu_atm_list_counts *__restrict__ counts) {
    if (counts->rebuild == 0u) {
        return; /* uniform */
    }
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t tile_i = blockIdx.x * kWarps + (threadIdx.x >> 5);
    if (tile_i >= n_tiles) {
        return; /* whole warps: n_tiles is per warp */
    }
    const uint32_t i = tile_i * (uint32_t)kT + lane;
    const bool real = i < n;
    const sim_vec4f pi = real ? sim_ld4(pos + i) : sim_ld4(pos);
    const sim_cull_box bi = sim_cull_load_box(boxes, tile_i);
    const uint32_t tiles_j = HALF ? tile_i + 1u : n_tiles;
    uint32_t found = 0;
    for (uint32_t j0 = 0; j0 < tiles_j; j0 += 32u) {
        bool near = false;
        if (j0 + lane < tiles_j) {
            const sim_cull_box bj = sim_cull_load_box(boxes, j0 + lane);
            near = sim_tcull_near_f(&bi, &bj, box_limit) != 0;
        }
        unsigned mask = __ballot_sync(SIM_FULL_MASK, near);
        while (mask != 0u) {
            const uint32_t tile_j = j0 + (uint32_t)(__ffs((int)mask) - 1);
            mask &= mask - 1u;
            const uint32_t jl = tile_j * (uint32_t)kT + lane;
            const sim_vec4f mine = jl < n ? sim_ld4(pos + jl) : pi;
            for (int q = 0; q < kT; ++q) {
                sim_vec4f pj;
                pj.x = __shfl_sync(SIM_FULL_MASK, mine.x, q);
                pj.y = __shfl_sync(SIM_FULL_MASK, mine.y, q);
                pj.z = __shfl_sync(SIM_FULL_MASK, mine.z, q);
                pj.w = 0.0f;
                const uint32_t j = tile_j * (uint32_t)kT + (uint32_t)q;
                const bool order = HALF ? j < i : j != i;
                if (real && j < n && order && sim_atm_list_near_f(pi, pj, reach2)) {
                    if (found < cap) {
                        nbr[(size_t)found * stride + i] = j;
                    }
                    ++found;
                }
            }
        }
    }
    if (real) {
        count[i] = found;
    }
    const uint32_t most = sim_warp_max_u32(found);
    const uint32_t sum = sim_warp_sum_u32(found);
    if (lane == 0 && most > 0u) {
        atomicMax(&counts->most, most);
        atomicAdd(&counts->entries, (unsigned long long)sum);
    }
}

/* The pair (u, v) as the tile kernel counts it (sim_atm_pair_f's rule: fl(d.d) <= a2_max and the
 * pair term within SIM_ATM_H_MAX), tested on d.d before the pair term's rsqrt is paid. */
static __device__ __forceinline__ bool atm_pair(sim_vec4f u, sim_vec4f v, float nu3, float a2_max,
                                                sim_vec3f *d, float *a2, float *h) {
    d->x = v.x - u.x;
    d->y = v.y - u.y;
    d->z = v.z - u.z;
    *a2 = d->x * d->x + d->y * d->y + d->z * d->z;
    if (!(*a2 <= a2_max)) {
        return false;
    }
    *h = sim_atm_pair_h_f(*a2, nu3);
    return sim_atm_pair_in_range_f(*a2, *h, a2_max) != 0;
}

/* The triple (i, j, k), its (i, j) pair already counted (dij = x_j - x_i, aij, hij), when its
 * pairs (i, k) and (j, k) count too: i's force added into fi, j's into gj (HALF), k's into
 * force[k] (HALF: a vector atomic), the energy into *e (may be NULL). Whether it counted. */
template <bool HALF>
static __device__ __forceinline__ bool atm_triple(const sim_vec4f &pi, const sim_vec4f &pj,
                                                  const sim_vec4f &pk, uint32_t k,
                                                  const sim_vec3f &dij, float aij, float hij,
                                                  float nu3, float a2_max,
                                                  sim_vec4f *__restrict__ force, sim_vec3f &fi,
                                                  sim_vec3f &gj, float *e) {
    sim_vec3f dik, djk;
    float aik, hik, ajk, hjk;
    if (!atm_pair(pi, pk, nu3, a2_max, &dik, &aik, &hik) ||
        !atm_pair(pj, pk, nu3, a2_max, &djk, &ajk, &hjk)) {
        return false;
    }
    /* bodies 1, 2, 3 = i, j, k: a = x_j - x_i, b = x_k - x_j, c = x_i - x_k */
    const float cx = -dik.x, cy = -dik.y, cz = -dik.z;
    const float p = dij.x * djk.x + dij.y * djk.y + dij.z * djk.z;
    const float q = djk.x * cx + djk.y * cy + djk.z * cz;
    const float r = cx * dij.x + cy * dij.y + cz * dij.z;
    float ya, yb, yc;
    const float w3 = sim_atm_triple_f(aij, ajk, aik, p, q, r, hij, hjk, hik, &ya, &yb, &yc, e);
    const float ka = sim_atm_pair_coefficient_f(w3 * ya, aij);
    const float kb = sim_atm_pair_coefficient_f(w3 * yb, ajk);
    const float kc = sim_atm_pair_coefficient_f(w3 * yc, aik);
    fi.x += ka * dij.x - kc * cx;
    fi.y += ka * dij.y - kc * cy;
    fi.z += ka * dij.z - kc * cz;
    if (HALF) {
        gj.x += kb * djk.x - ka * dij.x;
        gj.y += kb * djk.y - ka * dij.y;
        gj.z += kb * djk.z - ka * dij.z;
        sim_atomic_add3(&force[k], kc * cx - kb * djk.x, kc * cy - kb * djk.y,
                        kc * cz - kb * djk.z);
    }
    return true;
}

/* What the sweep reads of the last build besides the lists: to find an overflowed list's
 * entries again (the build's positions, tile boxes, reach), and the counters. */
struct atm_list_build_view {
    const sim_vec4f *ref;
    const sim_cull_box *boxes;
    uint32_t n_tiles;
    sim_gpu_atm_list_counts *counts;
    unsigned flags; /* SIM_GPU_ATM_LIST_RECORD */
};

static __device__ __forceinline__ sim_vec4f shfl_xyz(const sim_vec4f &v, int q) {
    sim_vec4f r;
    r.x = __shfl_sync(SIM_FULL_MASK, v.x, q);
    r.y = __shfl_sync(SIM_FULL_MASK, v.y, q);
    r.z = __shfl_sync(SIM_FULL_MASK, v.z, q);
    r.w = 0.0f;
    return r;
}

/* Bit q set when body j = 32 t + q is in the list of this lane's body i as the build made it
 * (over: i's list overflowed; otherwise no bits): the build's own test on the build positions
 * (ri = ref[i]). All 32 lanes call it. */
template <bool HALF>
static __device__ __forceinline__ unsigned listed_bits(uint32_t t, uint32_t i, bool over,
                                                       const sim_vec4f &ri,
                                                       const sim_vec4f *__restrict__ ref,
                                                       uint32_t n, float reach2) {
    const uint32_t jl = t * (uint32_t)kT + (threadIdx.x & 31u);
    const sim_vec4f mine = jl < n ? sim_ld4(ref + jl) : ri;
    unsigned bits = 0u;
    for (int q = 0; q < kT; ++q) {
        const sim_vec4f rj = shfl_xyz(mine, q);
        const uint32_t j = t * (uint32_t)kT + (uint32_t)q;
        const bool order = HALF ? j < i : j != i;
        if (over && j < n && order && sim_atm_list_near_f(ri, rj, reach2)) {
            bits |= 1u << q;
        }
    }
    return bits;
}

/* The triples of the lanes whose list overflowed (over), from the entries the build found but
 * could not store: for each pair of near tiles J <= K of the build's boxes (the build's box
 * test), the bits of each lane's listed bodies in them (listed_bits), and every pair j < k of
 * them, each once (j in J, k in K; J = K: j before k). The same pairs as a complete list's, so
 * the same triples; only the order of j's sums differs (an atomic per j and tile K). All 32 lanes
 * of a warp (one triplet tile I) call it; the loops are warp-uniform, the work predicated per
 * lane. Cost per near tile pair (J, K) with a listed j: 2 x 32 x 4 SHFL + 8 FP32 (the bits, K's
 * cached when J = K), then 32 x ~16 x (3 SHFL + a test), and a triple's cost per listed pair. */
template <bool HALF>
static __device__ __forceinline__ void overflowed_triples(uint32_t i, bool over, const sim_vec4f &pi,
                                          const atm_list_build_view &bv,
                                          const sim_vec4f *__restrict__ pos,
                                          sim_vec4f *__restrict__ force, uint32_t n, float nu3,
                                          float a2_max, sim_vec3f &fi, float *e,
                                          uint32_t &counted) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t tile_i = (blockIdx.x * blockDim.x + threadIdx.x) / (uint32_t)kT;
    const float reach2 = bv.counts->reach2, box_limit = bv.counts->box_limit;
    const sim_cull_box bi = sim_cull_load_box(bv.boxes, tile_i);
    const uint32_t tiles = HALF ? tile_i + 1u : bv.n_tiles;
    const sim_vec4f ri = over ? sim_ld4(bv.ref + i) : pi;
    for (uint32_t cj = 0; cj < tiles; cj += 32u) {
        bool near_j = false;
        if (cj + lane < tiles) {
            const sim_cull_box b = sim_cull_load_box(bv.boxes, cj + lane);
            near_j = sim_tcull_near_f(&bi, &b, box_limit) != 0;
        }
        unsigned mj = __ballot_sync(SIM_FULL_MASK, near_j);
        while (mj != 0u) {
            const uint32_t tj = cj + (uint32_t)(__ffs((int)mj) - 1);
            mj &= mj - 1u;
            const unsigned lj = listed_bits<HALF>(tj, i, over, ri, bv.ref, n, reach2);
            if (!__any_sync(SIM_FULL_MASK, lj != 0u)) {
                continue;
            }
            const uint32_t jl = tj * (uint32_t)kT + lane;
            const sim_vec4f pj_mine = jl < n ? sim_ld4(pos + jl) : pi;
            for (uint32_t ck = cj; ck < tiles; ck += 32u) {
                bool near_k = false;
                if (ck + lane >= tj && ck + lane < tiles) {
                    const sim_cull_box b = sim_cull_load_box(bv.boxes, ck + lane);
                    near_k = sim_tcull_near_f(&bi, &b, box_limit) != 0;
                }
                unsigned mk = __ballot_sync(SIM_FULL_MASK, near_k);
                while (mk != 0u) {
                    const uint32_t tk = ck + (uint32_t)(__ffs((int)mk) - 1);
                    mk &= mk - 1u;
                    const unsigned lk =
                        tk == tj ? lj : listed_bits<HALF>(tk, i, over, ri, bv.ref, n, reach2);
                    if (!__any_sync(SIM_FULL_MASK, lk != 0u)) {
                        continue;
                    }
                    const uint32_t kl = tk * (uint32_t)kT + lane;
                    const sim_vec4f pk_mine = kl < n ? sim_ld4(pos + kl) : pi;
#pragma unroll 1
                    for (int qj = 0; qj < kT; ++qj) {
                        const sim_vec4f pj = shfl_xyz(pj_mine, qj);
                        sim_vec3f dij = {0.0f, 0.0f, 0.0f};
                        float aij = 0.0f, hij = 0.0f;
                        const bool has_j = ((lj >> qj) & 1u) != 0u &&
                                           atm_pair(pi, pj, nu3, a2_max, &dij, &aij, &hij);
                        if (!__any_sync(SIM_FULL_MASK, has_j)) {
                            continue;
                        }
                        sim_vec3f gj = {0.0f, 0.0f, 0.0f};
#pragma unroll 1
                        for (int qk = tk == tj ? qj + 1 : 0; qk < kT; ++qk) {
                            const sim_vec4f pk = shfl_xyz(pk_mine, qk);
                            if (has_j && ((lk >> qk) & 1u) != 0u &&
                                atm_triple<HALF>(pi, pj, pk, tk * (uint32_t)kT + (uint32_t)qk, dij,
                                                 aij, hij, nu3, a2_max, force, fi, gj, e)) {
                                ++counted;
                            }
                        }
                        if (HALF && has_j) {
                            sim_atomic_add3(&force[tj * (uint32_t)kT + (uint32_t)qj], gj.x, gj.y,
                                            gj.z);
                        }
                    }
                }
            }
        }
    }
}

/* The end of a sweep thread: its body's force (HALF: an atomic, other threads add to it too;
 * full lists: thread i alone writes force[i] in a sweep), the warp's triples and the block's
 * energy (full lists: a third, each triple counted from its three bodies). */
template <bool HALF>
static __device__ __forceinline__ void sweep_end(uint32_t i, bool mine, const sim_vec3f &fi,
                                                 float e, uint32_t counted,
                                                 sim_vec4f *__restrict__ force,
                                                 double *__restrict__ energy,
                                                 unsigned long long *__restrict__ triples) {
    if (mine) {
        if (HALF) {
            sim_atomic_add3(&force[i], fi.x, fi.y, fi.z);
        } else {
            sim_vec4f f = force[i];
            f.x += fi.x;
            f.y += fi.y;
            f.z += fi.z;
            force[i] = f;
            e *= 1.0f / 3.0f;
        }
    }
    if (triples != nullptr) { /* uniform: a pointer argument */
        const uint32_t sum = sim_warp_sum_u32(counted);
        if ((threadIdx.x & 31u) == 0 && sum > 0u) {
            atomicAdd(triples, (unsigned long long)sum);
        }
    }
    if (energy != nullptr) {
        sim_block_sum_add<kThreads>((double)e, energy);
    }
}

/* The ATM forces of the triples from the lists whose bodies did not overflow (count <= cap; the
 * others: atm_list_overflow_kernel, launched after it).
 *
 * Launch contract: grid = ceil(n / 128) blocks of 128 threads (n > 0); thread i owns body slot i
 * (guard: i < n and a complete list; every thread reaches the energy's block sum). For every
 * pair of entries a < b of its list (j = nbr[a], k = nbr[b]): the triple (i, j, k) when its three
 * pairs count (the (i, j) pair is tested once per a). HALF (j, k < i: each triple once): i's force
 * summed in registers and added once, j's summed over its row (entry a) and added once per a, k's
 * added with a vector atomic per counted triple. Full lists (each triple from all three bodies):
 * only i's force, added without atomics, a third of the energy. Block 0 lowers counts->rebuild
 * and, RECORD, notes the lists' most entries (frame.peak) and an overflow (frame.fallback_steps).
 * Cost per candidate (a, b): 16 B gathered (L1 mostly), two differences and squares (~14 FP32);
 * per counted triple two rsqrt (pair terms) and ~60 FP32 (sim_atm_triple_f + three
 * coefficients), and for HALF one RED.128 (k's; j's once per row). The list is read slot-major:
 * the 32 threads of a warp read entry a of 32 adjacent slots, 128 adjacent bytes. 47 registers
 * (HALF; 40 full), no spills (ptxas -v, sm_90): the overflow path is its own kernel so that this
 * one keeps them. */
template <bool HALF>
__global__ void __launch_bounds__(kThreads)
    atm_list_sweep_kernel(const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ force,
                          uint32_t n, const uint32_t *__restrict__ nbr,
                          const uint32_t *__restrict__ count, uint32_t stride, uint32_t cap,
                          float nu3, float a2_max, double *__restrict__ energy,
                          unsigned long long *__restrict__ triples, atm_list_build_view bv) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        sim_gpu_atm_list_counts *c = bv.counts;
        const uint32_t most = c->most;
        c->rebuild = 0u; /* no later kernel of this step reads it; the next check raises it */
        if (bv.flags & SIM_GPU_ATM_LIST_RECORD) {
            c->frame.peak = most > c->frame.peak ? most : c->frame.peak;
            c->frame.fallback_steps += most > cap ? 1u : 0u;
        }
    }
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    float e = 0.0f;
    float *ep = energy != nullptr ? &e : nullptr;
    uint32_t counted = 0;
    sim_vec3f fi = {0.0f, 0.0f, 0.0f};
    const uint32_t m = i < n ? count[i] : 0u;
    const bool mine = i < n && m <= cap;
    if (mine) {
        const sim_vec4f pi = sim_ld4(pos + i);
        for (uint32_t a = 0; a < m; ++a) {
            const uint32_t j = nbr[(size_t)a * stride + i];
            const sim_vec4f pj = sim_ld4(pos + j);
            sim_vec3f dij;
            float aij, hij;
            if (!atm_pair(pi, pj, nu3, a2_max, &dij, &aij, &hij)) {
                continue; /* every triple with this pair gives zero */
            }
            sim_vec3f gj = {0.0f, 0.0f, 0.0f}; /* HALF: j's force over this row, one atomic */
            for (uint32_t b = a + 1u; b < m; ++b) {
                const uint32_t k = nbr[(size_t)b * stride + i];
                if (atm_triple<HALF>(pi, pj, sim_ld4(pos + k), k, dij, aij, hij, nu3, a2_max,
                                     force, fi, gj, ep)) {
                    ++counted;
                }
            }
            if (HALF) {
                sim_atomic_add3(&force[j], gj.x, gj.y, gj.z);
            }
        }
    }
    sweep_end<HALF>(i, mine, fi, e, counted, force, energy, triples);
}

/* The triples of the bodies whose list overflowed at the build (count > cap), found again from
 * the build (overflowed_triples). Every block returns at once when no list overflowed (the
 * usual case: one launch that finds nothing to do).
 *
 * Launch contract: as atm_list_sweep_kernel's (thread i body i, warp w triplet tile w; every
 * thread of a block reaches the energy's block sum); a warp without such a body does nothing
 * else. Cost: overflowed_triples' per warp that holds one. 82 registers (HALF; 66 full), no spills
 * (ptxas -v, sm_90): the floor of 4 blocks per SM lets ptxas take them (without one it stopped at
 * 72 and spilled). */
template <bool HALF>
__global__ void __launch_bounds__(kThreads, sim_min_blocks(kThreads, 4))
    atm_list_overflow_kernel(const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ force,
                             uint32_t n, const uint32_t *__restrict__ count, uint32_t cap,
                             float nu3, float a2_max, double *__restrict__ energy,
                             unsigned long long *__restrict__ triples, atm_list_build_view bv) {
    if (bv.counts->most <= cap) {
        return; /* uniform: written by the build, before this launch */
    }
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool real = i < n;
    const bool over = real && count[i] > cap;
    float e = 0.0f;
    uint32_t counted = 0;
    sim_vec3f fi = {0.0f, 0.0f, 0.0f};
    if (__any_sync(SIM_FULL_MASK, over)) {
        const sim_vec4f pi = sim_ld4(pos + (real ? i : 0u));
        overflowed_triples<HALF>(i, over, pi, bv, pos, force, n, nu3, a2_max, fi,
                                 energy != nullptr ? &e : nullptr, counted);
    }
    sweep_end<HALF>(i, over, fi, e, counted, force, energy, triples);
}

} // namespace atml

#ifndef SIM_ATM_LIST_KERNELS_ONLY
using namespace atml;

namespace {

unsigned tile_blocks(uint32_t n_tiles) {
    return (n_tiles + kWarps - 1) / kWarps;
}

unsigned body_blocks(uint32_t n) {
    return (n + kThreads - 1) / kThreads;
}

/* The boxes and the build (both return at once on the device unless rebuilding, or forced). */
sim_status enqueue_build(const sim_gpu_bodies *b, const sim_gpu_atm_list *l, float a2_max,
                         float skin, unsigned flags, cudaStream_t s, sim_error *err) {
    SIM_ASSERT(b->n == l->n);
    if (l->n == 0) {
        return SIM_OK;
    }
    const float reach2 = sim_atm_list_reach2_f(a2_max, skin);
    const float box_limit = sim_tcull_limit_f(reach2);
    const unsigned grid = tile_blocks(l->n_tiles);
    atm_list_boxes_kernel<<<grid, kThreads, 0, s>>>(b->pos, l->n, l->n_tiles, l->boxes, l->ref,
                                                    l->counts, reach2, box_limit, flags);
    SIM_CUDA_CHECK_LAUNCH("atm_list_boxes_kernel");
    if (l->half) {
        atm_list_build_kernel<true><<<grid, kThreads, 0, s>>>(b->pos, l->n, l->n_tiles, l->boxes,
                                                              reach2, box_limit, l->nbr, l->count,
                                                              l->stride, l->cap, l->counts);
    } else {
        atm_list_build_kernel<false><<<grid, kThreads, 0, s>>>(b->pos, l->n, l->n_tiles, l->boxes,
                                                               reach2, box_limit, l->nbr, l->count,
                                                               l->stride, l->cap, l->counts);
    }
    SIM_CUDA_CHECK_LAUNCH("atm_list_build_kernel");
    return SIM_OK;
}

sim_status enqueue_sweep(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                         const sim_physics_f *ph, double *energy, unsigned long long *triples,
                         unsigned flags, cudaStream_t s, sim_error *err) {
    SIM_ASSERT(b->n == l->n && ph->atm.atm_cutoff2 > 0.0f);
    if (l->n == 0) {
        return SIM_OK;
    }
    const float nu3 = sim_atm_nu3_f(ph->atm.atm_nu);
    const float a2_max = sim_atm_a2_max_f(ph->atm.atm_cutoff2);
    const atm_list_build_view bv = {l->ref, l->boxes, l->n_tiles, l->counts, flags};
    const unsigned grid = body_blocks(l->n);
    if (l->half) {
        atm_list_sweep_kernel<true><<<grid, kThreads, 0, s>>>(b->pos, b->force, l->n, l->nbr,
                                                              l->count, l->stride, l->cap, nu3,
                                                              a2_max, energy, triples, bv);
    } else {
        atm_list_sweep_kernel<false><<<grid, kThreads, 0, s>>>(b->pos, b->force, l->n, l->nbr,
                                                               l->count, l->stride, l->cap, nu3,
                                                               a2_max, energy, triples, bv);
    }
    SIM_CUDA_CHECK_LAUNCH("atm_list_sweep_kernel");
    if (l->half) {
        atm_list_overflow_kernel<true><<<grid, kThreads, 0, s>>>(
            b->pos, b->force, l->n, l->count, l->cap, nu3, a2_max, energy, triples, bv);
    } else {
        atm_list_overflow_kernel<false><<<grid, kThreads, 0, s>>>(
            b->pos, b->force, l->n, l->count, l->cap, nu3, a2_max, energy, triples, bv);
    }
    SIM_CUDA_CHECK_LAUNCH("atm_list_overflow_kernel");
    return SIM_OK;
}

} // namespace

sim_status sim_gpu_atm_list_alloc(sim_gpu_atm_list *l, uint32_t n, uint32_t cap, int half,
                                  cudaStream_t s, sim_error *err) {
    memset(l, 0, sizeof *l);
    l->n = n;
    l->n_tiles = (n + SIM_TRIPLET_TILE - 1u) / SIM_TRIPLET_TILE;
    l->stride = sim_nlist_stride(n);
    l->half = half;
    const cudaError_t e1 = cudaMalloc((void **)&l->count, (size_t)n * sizeof *l->count);
    const cudaError_t e2 = cudaMalloc((void **)&l->ref, (size_t)n * sizeof *l->ref);
    const cudaError_t e3 = cudaMalloc((void **)&l->boxes, (size_t)l->n_tiles * sizeof *l->boxes);
    const cudaError_t e4 = cudaMalloc((void **)&l->counts, sizeof *l->counts);
    if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess || e4 != cudaSuccess) {
        (void)cudaGetLastError();
        sim_gpu_atm_list_free(l);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate the ATM lists' counts, positions and boxes",
                        n);
    }
    SIM_CUDA_TRY(cudaMemsetAsync(l->count, 0, (size_t)n * sizeof *l->count, s));
    SIM_CUDA_TRY(cudaMemsetAsync(l->counts, 0, sizeof *l->counts, s));
    /* NaN positions: every body has moved, the first check rebuilds */
    SIM_CUDA_TRY(cudaMemsetAsync(l->ref, 0xff, (size_t)n * sizeof *l->ref, s));
    const sim_status st = sim_gpu_atm_list_realloc(l, cap, s, err);
    if (st != SIM_OK) {
        sim_gpu_atm_list_free(l);
        return st;
    }
    return SIM_OK;
}

void sim_gpu_atm_list_free(sim_gpu_atm_list *l) {
    (void)cudaFree(l->nbr);
    (void)cudaFree(l->count);
    (void)cudaFree(l->ref);
    (void)cudaFree(l->boxes);
    (void)cudaFree(l->counts);
    memset(l, 0, sizeof *l);
}

sim_status sim_gpu_atm_list_realloc(sim_gpu_atm_list *l, uint32_t cap, cudaStream_t s,
                                   sim_error *err) {
    cap = cap > 0 ? cap : 1;
    uint32_t *nbr = nullptr;
    const size_t bytes = (size_t)cap * l->stride * sizeof *nbr;
    if (cudaMalloc((void **)&nbr, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu bytes of GPU memory for ATM lists of "
                        "%u entries",
                        l->n, (unsigned long long)bytes, cap);
    }
    (void)cudaFree(l->nbr); /* cudaFree waits for the work that may still read it */
    l->nbr = nbr;
    l->cap = cap;
    SIM_CUDA_TRY(cudaMemsetAsync(&l->counts->rebuild, 1, sizeof l->counts->rebuild, s));
    return SIM_OK;
}

uint64_t sim_gpu_atm_list_bytes(const sim_gpu_atm_list *l) {
    return (uint64_t)l->cap * l->stride * sizeof(uint32_t) +
           (uint64_t)l->n * (sizeof(uint32_t) + sizeof(sim_vec4f)) +
           (uint64_t)l->n_tiles * sizeof(sim_cull_box);
}

sim_status sim_gpu_atm_list_build(const sim_gpu_bodies *b, const sim_gpu_atm_list *l, float a2_max,
                                  float skin, cudaStream_t s, sim_error *err) {
    return enqueue_build(b, l, a2_max, skin, SIM_GPU_ATM_LIST_REBUILD, s, err);
}

sim_status sim_gpu_atm_list_build_complete(const sim_gpu_bodies *b, sim_gpu_atm_list *l,
                                           float a2_max, float skin, cudaStream_t s,
                                           uint32_t *most, sim_error *err) {
    for (;;) {
        SIM_TRY(sim_gpu_atm_list_build(b, l, a2_max, skin, s, err));
        uint32_t found = 0;
        SIM_CUDA_TRY(cudaMemcpyAsync(&found, &l->counts->most, sizeof found,
                                     cudaMemcpyDeviceToHost, s));
        SIM_CUDA_TRY(cudaStreamSynchronize(s));
        if (most != NULL) {
            *most = found;
        }
        if (found <= l->cap) {
            return SIM_OK;
        }
        SIM_TRY(sim_gpu_atm_list_realloc(l, found + found / 8u + 1u, s, err));
    }
}

sim_status sim_gpu_atm_list_forces(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                   const sim_physics_f *ph, double *energy, int count_triples,
                                   cudaStream_t s, sim_error *err) {
    unsigned long long *triples = count_triples ? &l->counts->triples : nullptr;
    if (triples != nullptr) {
        SIM_CUDA_TRY(cudaMemsetAsync(triples, 0, sizeof *triples, s));
    }
    return enqueue_sweep(b, l, ph, energy, triples, 0u, s, err);
}

sim_status sim_gpu_atm_list_check(const sim_gpu_bodies *b, const sim_gpu_atm_list *l, float skin,
                                  cudaStream_t s, sim_error *err) {
    SIM_ASSERT(b->n == l->n);
    if (l->n == 0) {
        return SIM_OK;
    }
    const float h = 0.5f * skin;
    atm_list_check_kernel<<<body_blocks(l->n), kThreads, 0, s>>>(b->pos, l->n, l->ref, h * h,
                                                                 l->counts);
    SIM_CUDA_CHECK_LAUNCH("atm_list_check_kernel");
    return SIM_OK;
}

sim_status sim_gpu_atm_list_update(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                   float a2_max, float skin, unsigned flags, cudaStream_t s,
                                   sim_error *err) {
    return enqueue_build(b, l, a2_max, skin,
                         flags & (SIM_GPU_ATM_LIST_RECORD | SIM_GPU_ATM_LIST_REBUILD), s, err);
}

sim_status sim_gpu_atm_list_step_forces(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                        const sim_physics_f *ph, unsigned flags, cudaStream_t s,
                                        sim_error *err) {
    return enqueue_sweep(b, l, ph, nullptr, nullptr, flags & SIM_GPU_ATM_LIST_RECORD, s, err);
}

#endif /* SIM_ATM_LIST_KERNELS_ONLY */
