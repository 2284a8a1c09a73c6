/* SPDX-License-Identifier: MIT
 * nbsim — the kernels of the ATM cut-off's neighbour lists (atm_list_kernels.h): tile boxes, the
 * build, the triple sweep (half lists with atomics, full lists without). Why the triples are the
 * tile sweep's: atm_list.h. tests/test_atm_list_emu.cc compiles the kernels alone on the CPU
 * (SIM_ATM_LIST_KERNELS_ONLY: no drivers) and runs them under tests/cuda_emulation.h. */
#include "nlist/atm_list_kernels.h"

#include <string.h>

#include "nbsim/backend.h"

#include "cull/cull_device.cuh"
#include "cull/triplet_cull.h"

namespace atml {

constexpr int kT = (int)SIM_TRIPLET_TILE;
static_assert(kT == 32, "a triplet tile is one warp's lanes");
constexpr int kWarps = 4; /* boxes and build: a warp per tile */
constexpr int kThreads = kWarps * 32;

/* Boxes of centres of the triplet tiles (inflated by cull.h's margin) and the build positions.
 *
 * Launch contract: grid = ceil(n_tiles / 4) blocks of 4 warps; warp w of block g owns tile
 * t = 4 g + w, lane l body 32 t + l (guard: body < n; a tile past n_tiles returns). Block 0 zeroes
 * counts->most (the build that follows counts into it). Cost per body: 16 B read, 16 B written,
 * 6 FMNMX; per tile 30 shuffles, 32 B written. */
__global__ void __launch_bounds__(kThreads)
    atm_list_boxes_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t n_tiles,
                          sim_cull_box *__restrict__ boxes, sim_vec4f *__restrict__ ref,
                          sim_gpu_atm_list_counts *__restrict__ counts) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t t = blockIdx.x * (uint32_t)kWarps + (threadIdx.x >> 5);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        counts->most = 0;
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

/* The lists: body i gets every j (HALF: j < i; else j != i) with
 * sim_atm_list_near_f(x_i, x_j, reach2), from the tiles J whose box is within box_limit of its
 * own tile's (sim_tcull_limit_f(reach2): never a pair the body test keeps, triplet_cull.h).
 *
 * Launch contract: grid = ceil(n_tiles / 4) blocks of 4 warps; warp w of block g owns tile
 * I = 4 g + w, lane l body i = 32 I + l (bodies past n take part in the shuffles and store
 * nothing). The warp tests 32 tiles J at a time (a lane each, one ballot), and for each near tile
 * broadcasts its 32 bodies by shuffles; entries past cap are counted, not stored. Each body
 * writes count[i]; the warp's largest count goes to counts->most (atomicMax). Cost per tile pair
 * tested: 2 LDG.128 + ~20 FP32 per lane-tile; per near tile and lane: 16 B read, 32 x (4 SHFL +
 * 8 FP32 + a compare), a 4 B store per entry (adjacent across the warp when the lanes' counts
 * agree, scattered otherwise). O(n_tiles^2 / 2) box tests for HALF: fine up to ~10^6 bodies at
 * a rebuild every ~10 steps (the bench measures it); tile-pair lists would make it O(N). */
template <bool HALF>
__global__ void __launch_bounds__(kThreads)
    atm_list_build_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t n_tiles,
                          const sim_cull_box *__restrict__ boxes, float reach2, float box_limit,
                          uint32_t *__restrict__ nbr, uint32_t *__restrict__ count,
                          uint32_t stride, uint32_t cap,
                          sim_gpu_atm_list_counts *__restrict__ counts) {
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t tile_i = blockIdx.x * (uint32_t)kWarps + (threadIdx.x >> 5);
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
    if (lane == 0 && most > 0u) {
        atomicMax(&counts->most, most);
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

/* The ATM forces of the triples from the lists.
 *
 * Launch contract: grid = ceil(n / 128) blocks of 128 threads; thread i owns body slot i (guard:
 * i < n; every thread reaches the energy's block sum). For every pair of entries a < b of its list
 * (j = nbr[a], k = nbr[b]): the triple (i, j, k) when its three pairs count (the (i, j) pair is
 * tested once per a). HALF (j, k < i: each triple once): i's force summed in registers and added
 * once, j's summed over its row (entry a) and added once per a, k's added with a vector atomic
 * per counted triple. Full lists (each triple from all three bodies): only i's force, added
 * without atomics (thread i alone writes force[i] in this kernel), a third of the energy. Cost
 * per candidate (a, b): 16 B gathered (L1 mostly), two differences and squares (~14 FP32); per
 * counted triple two rsqrt (pair terms) and ~60 FP32 (sim_atm_triple_f + three coefficients),
 * and for HALF one RED.128 (k's; j's once per row). The list is read slot-major: the 32 threads
 * of a warp read entry a of 32 adjacent slots, 128 adjacent bytes. */
template <bool HALF>
__global__ void __launch_bounds__(kThreads)
    atm_list_sweep_kernel(const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ force,
                          uint32_t n, const uint32_t *__restrict__ nbr,
                          const uint32_t *__restrict__ count, uint32_t stride, uint32_t cap,
                          float nu3, float a2_max, double *__restrict__ energy,
                          unsigned long long *__restrict__ triples) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    float e = 0.0f;
    uint32_t counted = 0;
    if (i < n) {
        const sim_vec4f pi = sim_ld4(pos + i);
        const uint32_t m = count[i] < cap ? count[i] : cap;
        float fx = 0.0f, fy = 0.0f, fz = 0.0f;
        for (uint32_t a = 0; a < m; ++a) {
            const uint32_t j = nbr[(size_t)a * stride + i];
            const sim_vec4f pj = sim_ld4(pos + j);
            sim_vec3f dij;
            float aij, hij;
            if (!atm_pair(pi, pj, nu3, a2_max, &dij, &aij, &hij)) {
                continue; /* every triple with this pair gives zero */
            }
            float gx = 0.0f, gy = 0.0f, gz = 0.0f; /* HALF: j's force over this row, one atomic */
            for (uint32_t b = a + 1u; b < m; ++b) {
                const uint32_t k = nbr[(size_t)b * stride + i];
                const sim_vec4f pk = sim_ld4(pos + k);
                sim_vec3f dik, djk;
                float aik, hik, ajk, hjk;
                if (!atm_pair(pi, pk, nu3, a2_max, &dik, &aik, &hik) ||
                    !atm_pair(pj, pk, nu3, a2_max, &djk, &ajk, &hjk)) {
                    continue;
                }
                /* bodies 1, 2, 3 = i, j, k: a = x_j - x_i, b = x_k - x_j, c = x_i - x_k */
                const float cx = -dik.x, cy = -dik.y, cz = -dik.z;
                const float p = dij.x * djk.x + dij.y * djk.y + dij.z * djk.z;
                const float q = djk.x * cx + djk.y * cy + djk.z * cz;
                const float r = cx * dij.x + cy * dij.y + cz * dij.z;
                float ya, yb, yc;
                const float w3 = sim_atm_triple_f(aij, ajk, aik, p, q, r, hij, hjk, hik, &ya, &yb,
                                                  &yc, energy != nullptr ? &e : nullptr);
                const float ka = sim_atm_pair_coefficient_f(w3 * ya, aij);
                const float kb = sim_atm_pair_coefficient_f(w3 * yb, ajk);
                const float kc = sim_atm_pair_coefficient_f(w3 * yc, aik);
                fx += ka * dij.x - kc * cx;
                fy += ka * dij.y - kc * cy;
                fz += ka * dij.z - kc * cz;
                if (HALF) {
                    gx += kb * djk.x - ka * dij.x;
                    gy += kb * djk.y - ka * dij.y;
                    gz += kb * djk.z - ka * dij.z;
                    sim_atomic_add3(&force[k], kc * cx - kb * djk.x, kc * cy - kb * djk.y,
                                    kc * cz - kb * djk.z);
                }
                ++counted;
            }
            if (HALF) {
                sim_atomic_add3(&force[j], gx, gy, gz);
            }
        }
        if (HALF) {
            sim_atomic_add3(&force[i], fx, fy, fz);
        } else {
            sim_vec4f f = force[i];
            f.x += fx;
            f.y += fy;
            f.z += fz;
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

} // namespace atml

#ifndef SIM_ATM_LIST_KERNELS_ONLY
using namespace atml;

namespace {

unsigned tile_blocks(uint32_t n_tiles) {
    return (n_tiles + kWarps - 1) / kWarps;
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
    const sim_status st = sim_gpu_atm_list_realloc(l, cap, err);
    if (st != SIM_OK) {
        sim_gpu_atm_list_free(l);
        return st;
    }
    SIM_CUDA_TRY(cudaMemsetAsync(l->count, 0, (size_t)n * sizeof *l->count, s));
    SIM_CUDA_TRY(cudaMemsetAsync(l->counts, 0, sizeof *l->counts, s));
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

sim_status sim_gpu_atm_list_realloc(sim_gpu_atm_list *l, uint32_t cap, sim_error *err) {
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
    (void)cudaFree(l->nbr);
    l->nbr = nbr;
    l->cap = cap;
    return SIM_OK;
}

uint64_t sim_gpu_atm_list_bytes(const sim_gpu_atm_list *l) {
    return (uint64_t)l->cap * l->stride * sizeof(uint32_t) +
           (uint64_t)l->n * (sizeof(uint32_t) + sizeof(sim_vec4f)) +
           (uint64_t)l->n_tiles * sizeof(sim_cull_box);
}

sim_status sim_gpu_atm_list_build(const sim_gpu_bodies *b, const sim_gpu_atm_list *l, float a2_max,
                                  float skin, cudaStream_t s, sim_error *err) {
    SIM_ASSERT(b->n == l->n);
    if (l->n == 0) {
        return SIM_OK;
    }
    const float reach2 = sim_atm_list_reach2_f(a2_max, skin);
    const unsigned grid = tile_blocks(l->n_tiles);
    atm_list_boxes_kernel<<<grid, kThreads, 0, s>>>(b->pos, l->n, l->n_tiles, l->boxes, l->ref,
                                                    l->counts);
    SIM_CUDA_CHECK_LAUNCH("atm_list_boxes_kernel");
    if (l->half) {
        atm_list_build_kernel<true><<<grid, kThreads, 0, s>>>(
            b->pos, l->n, l->n_tiles, l->boxes, reach2, sim_tcull_limit_f(reach2), l->nbr,
            l->count, l->stride, l->cap, l->counts);
    } else {
        atm_list_build_kernel<false><<<grid, kThreads, 0, s>>>(
            b->pos, l->n, l->n_tiles, l->boxes, reach2, sim_tcull_limit_f(reach2), l->nbr,
            l->count, l->stride, l->cap, l->counts);
    }
    SIM_CUDA_CHECK_LAUNCH("atm_list_build_kernel");
    return SIM_OK;
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
        SIM_TRY(sim_gpu_atm_list_realloc(l, found + found / 8u + 1u, err));
    }
}

sim_status sim_gpu_atm_list_forces(const sim_gpu_bodies *b, const sim_gpu_atm_list *l,
                                   const sim_physics_f *ph, double *energy, int count_triples,
                                   cudaStream_t s, sim_error *err) {
    SIM_ASSERT(b->n == l->n && ph->atm_cutoff2 > 0.0f);
    if (l->n == 0) {
        return SIM_OK;
    }
    const float nu3 = sim_atm_nu3_f(ph->atm_nu);
    const float a2_max = sim_atm_a2_max_f(ph->atm_cutoff2);
    unsigned long long *triples = count_triples ? &l->counts->triples : nullptr;
    if (triples != nullptr) {
        SIM_CUDA_TRY(cudaMemsetAsync(triples, 0, sizeof *triples, s));
    }
    const unsigned grid = (l->n + kThreads - 1) / kThreads;
    if (l->half) {
        atm_list_sweep_kernel<true><<<grid, kThreads, 0, s>>>(b->pos, b->force, l->n, l->nbr,
                                                              l->count, l->stride, l->cap, nu3,
                                                              a2_max, energy, triples);
    } else {
        atm_list_sweep_kernel<false><<<grid, kThreads, 0, s>>>(b->pos, b->force, l->n, l->nbr,
                                                               l->count, l->stride, l->cap, nu3,
                                                               a2_max, energy, triples);
    }
    SIM_CUDA_CHECK_LAUNCH("atm_list_sweep_kernel");
    return SIM_OK;
}

#endif /* SIM_ATM_LIST_KERNELS_ONLY */
