/* SPDX-License-Identifier: MIT
 * nbsim — the kernels that cull tile triples by the ATM cut-off (triplet_cull_kernels.h): boxes
 * of centres, the neighbour-pair passes, the rows of the neighbour list and the tile triples.
 * Why the result is exact: triplet_cull.h. tests/test_tcull_emu.cc compiles the kernels alone on
 * the CPU (SIM_TCULL_KERNELS_ONLY: no drivers, no CUB) and runs them under
 * tests/cuda_emulation.h. */
#include "cull/triplet_cull_kernels.h"

#include <string.h>

#include "nbsim/internal/backend.h"
#include "cull/cull_device.cuh"

#ifndef SIM_TCULL_KERNELS_ONLY
#include <cub/device/device_scan.cuh>
#endif

namespace tcull {

constexpr int kT = (int)SIM_TRIPLET_TILE;
static_assert(kT == 32, "a triplet tile is one warp's lanes");
/* The box kernel: 4 warps, each boxing 4 tiles: a block is one super-tile of 16 tiles. */
constexpr int kBoxWarps = 4;
constexpr int kBoxThreads = kBoxWarps * 32;
constexpr int kTilesPerBoxWarp = (int)SIM_CULL_SUPER / kBoxWarps;
static_assert(kTilesPerBoxWarp * kBoxWarps == (int)SIM_CULL_SUPER, "whole super-tiles");
/* A pair-culling block: 16 x 16 threads, one item pair each (cull.h). */
constexpr int kGroup = (int)SIM_CULL_GROUP;
constexpr int kPairThreads = kGroup * kGroup;
/* Grid-stride kernels over the lists (rows, triples). */
constexpr int kListThreads = 128;

/* Boxes of centres of the triplet tiles and of their super-tiles.
 *
 * Launch contract: grid = n_supers blocks of 4 warps; block s owns super-tile s, warp w its tiles
 * t = 16 s + 4 w .. 16 s + 4 w + 3, lane l body 32 t + l (guard: body < n; tiles past n_tiles
 * stay empty and are not written). Per tile: min / max by shuffles, inflated by the margin,
 * written by lane 0, which also zeroes the tile's row count; the warps' unions meet in shared
 * memory for the super-tile's box. Block 0 zeroes the step's counts (this kernel runs first in a
 * culled triplet step). Cost per body: 16 B read, 6 FMNMX; per tile 30 shuffles, 32 B written. */
__global__ void __launch_bounds__(kBoxThreads)
    tcull_boxes_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t n_tiles,
                       sim_cull_box *__restrict__ boxes, sim_cull_box *__restrict__ supers,
                       uint32_t *__restrict__ row_count,
                       sim_gpu_tcull_counts *__restrict__ counts) {
    const uint32_t w = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        counts->supers = 0;
        counts->pairs = 0;
        counts->triples = 0;
        row_count[n_tiles] = 0; /* the prefix sum's last entry: the number of pairs */
    }
    sim_cull_box all = sim_cull_empty_box();
    for (int q = 0; q < kTilesPerBoxWarp; ++q) {
        const uint32_t t =
            blockIdx.x * SIM_CULL_SUPER + w * (uint32_t)kTilesPerBoxWarp + (uint32_t)q;
        const uint32_t i = t * (uint32_t)kT + lane;
        sim_cull_box box = sim_cull_empty_box();
        if (t < n_tiles && i < n) { /* fminf / fmaxf skip a NaN centre, as for contacts */
            const sim_vec4f p = sim_ld4(pos + i);
            box.lo.x = fminf(box.lo.x, p.x);
            box.lo.y = fminf(box.lo.y, p.y);
            box.lo.z = fminf(box.lo.z, p.z);
            box.hi.x = fmaxf(box.hi.x, p.x);
            box.hi.y = fmaxf(box.hi.y, p.y);
            box.hi.z = fmaxf(box.hi.z, p.z);
        }
        box = sim_cull_warp_box(box);
        sim_cull_inflate(&box);
        if (lane == 0 && t < n_tiles) {
            boxes[t] = box;
            row_count[t] = 0;
        }
        sim_cull_box_merge(&all, box);
    }
    __shared__ sim_cull_box sh_box[kBoxWarps];
    if (lane == 0) {
        sh_box[w] = all;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        sim_cull_box u = sh_box[0];
        for (int k = 1; k < kBoxWarps; ++k) {
            sim_cull_box_merge(&u, sh_box[k]);
        }
        supers[blockIdx.x] = u;
    }
}

/* The item pair a culling thread owns in `group` and whether their boxes are within the limit. */
static __device__ __forceinline__ bool near_pair(sim_tile2 group, uint32_t count,
                                                 const sim_cull_box *__restrict__ boxes,
                                                 float limit, const sim_period_f &per,
                                                 sim_tile2 *pair) {
    if (!sim_cull_thread_pair(group, threadIdx.x, threadIdx.y, count, pair)) {
        return false;
    }
    const sim_cull_box a = sim_cull_load_box(boxes, pair->i), b = sim_cull_load_box(boxes, pair->j);
    return sim_tcull_near_pf(&a, &b, limit, sim_period_or_null(&per)) != 0;
}

/* The map-placed neighbour pass (the top level).
 *
 * Launch contract: one launch of a pair map plan over ceil(count / 16) groups per side, blocks
 * of 16 x 16 threads, as cull_kernels.cu's cull_map_kernel: the map (every thread) gives the
 * block's group pair or nothing (the whole block returns); thread (tx, ty) owns item pair
 * (16 G_I + ty, 16 G_J + tx), kept when it lies in the simplex and the box distance is within the
 * limit; one atomic per warp. Items are tiles (levels 1) or super-tiles (levels 2). Cost per
 * thread: the map + 4 LDG.128 + ~20 FP32 (three gaps, two FMAs, one compare). */
template <sim_pair_map MAP>
__global__ void __launch_bounds__(kPairThreads)
    tcull_map_kernel(const sim_cull_box *__restrict__ boxes, uint32_t count, sim_map_launch launch,
                     float limit, sim_tile2 *__restrict__ out, uint32_t cap,
                     uint32_t *__restrict__ out_count, sim_period_f per = sim_period_f()) {
    sim_tile2 group;
    if (!sim_pair_map_block(MAP, &launch, blockIdx.x, blockIdx.y, blockIdx.z, &group)) {
        return;
    }
    sim_tile2 pair = {0u, 0u};
    const bool keep = near_pair(group, count, boxes, limit, per, &pair);
    const uint32_t lane = (threadIdx.y * kGroup + threadIdx.x) & 31u;
    sim_cull_append(keep, pair, lane, out, cap, out_count);
}

/* The second neighbour pass (two levels): the tile pairs inside each surviving super pair.
 *
 * Launch contract: a persistent grid of 16 x 16 threads; block b takes super pairs b, b + grid,
 * ... of the list, or of the whole super simplex (row order) when the top pass found more than
 * super_cap (the list is incomplete). Per item as tcull_map_kernel with count = n_tiles. The
 * item count is uniform per block (the append votes per warp). */
__global__ void __launch_bounds__(kPairThreads)
    tcull_second_kernel(const sim_cull_box *__restrict__ boxes, uint32_t n_tiles, uint32_t n_supers,
                        const sim_tile2 *__restrict__ super_list, uint32_t super_cap, float limit,
                        sim_gpu_tcull_counts *__restrict__ counts, sim_tile2 *__restrict__ out,
                        uint32_t cap, sim_period_f per = sim_period_f()) {
    const uint32_t found = counts->supers;
    const bool overflow = found > super_cap;
    const uint32_t items = overflow ? sim_map_t2(n_supers) : found;
    const uint32_t lane = (threadIdx.y * kGroup + threadIdx.x) & 31u;
    for (uint32_t k = blockIdx.x; k < items; k += gridDim.x) {
        const sim_tile2 group = overflow ? sim_cull_simplex_pair(k) : super_list[k];
        sim_tile2 pair = {0u, 0u};
        const bool keep = near_pair(group, n_tiles, boxes, limit, per, &pair);
        sim_cull_append(keep, pair, lane, out, cap, &counts->pairs);
    }
}

/* Pairs stored in the neighbour list (those past its capacity are counted, not stored). */
static __device__ __forceinline__ uint32_t stored_pairs(const sim_gpu_tcull_counts *counts,
                                                        uint32_t pair_cap) {
    const uint32_t found = counts->pairs;
    return found < pair_cap ? found : pair_cap;
}

/* Row lengths: row I gets one entry per stored pair (I, J).
 *
 * Launch contract: a grid-stride 1-D grid of 128 threads, one stored pair per thread and step.
 * Cost per pair: 8 B read, one atomic. */
__global__ void __launch_bounds__(kListThreads)
    tcull_rows_kernel(const sim_tile2 *__restrict__ pairs, uint32_t pair_cap,
                      const sim_gpu_tcull_counts *__restrict__ counts,
                      uint32_t *__restrict__ row_count) {
    const uint32_t stored = stored_pairs(counts, pair_cap);
    for (uint32_t p = blockIdx.x * blockDim.x + threadIdx.x; p < stored;
         p += gridDim.x * blockDim.x) {
        atomicAdd(&row_count[pairs[p].i], 1u);
    }
}

/* The rows: pair (I, J) puts J at a free place of row I (row_start from the prefix sum; the
 * counts run back down to 0, so each pair takes one place).
 *
 * Launch contract: as tcull_rows_kernel. Cost per pair: 12 B read, one atomic, 4 B written. */
__global__ void __launch_bounds__(kListThreads)
    tcull_scatter_kernel(const sim_tile2 *__restrict__ pairs, uint32_t pair_cap,
                         const sim_gpu_tcull_counts *__restrict__ counts,
                         const uint32_t *__restrict__ row_start, uint32_t *__restrict__ row_count,
                         uint32_t *__restrict__ nbr) {
    const uint32_t stored = stored_pairs(counts, pair_cap);
    for (uint32_t p = blockIdx.x * blockDim.x + threadIdx.x; p < stored;
         p += gridDim.x * blockDim.x) {
        const sim_tile2 ij = pairs[p];
        nbr[row_start[ij.i] + atomicSub(&row_count[ij.i], 1u) - 1u] = ij.j;
    }
}

/* The tile triples of part `part` of `parts`: for each stored neighbour pair (I, J) of a row I
 * of that part (sim_tcull_mine), every K of row J (a neighbour of J, K <= J) whose box is also
 * within the limit of tile I's box.
 *
 * Launch contract: a grid-stride 1-D grid of 128 threads; warp v of the grid takes pairs v,
 * v + warps, ... (warp-uniform), its lanes the K of row J, 32 at a time; survivors appended with
 * one atomic per warp. Cost per candidate: 4 B + 2 LDG.128, ~20 FP32; per pair 2 LDG.128 and
 * 12 B. */
__global__ void __launch_bounds__(kListThreads)
    tcull_extend_kernel(const sim_cull_box *__restrict__ boxes, const sim_tile2 *__restrict__ pairs,
                        uint32_t pair_cap, const uint32_t *__restrict__ row_start,
                        const uint32_t *__restrict__ nbr, float limit, uint32_t part,
                        uint32_t parts, sim_gpu_tcull_counts *__restrict__ counts,
                        sim_tile3 *__restrict__ out, uint32_t cap,
                        sim_period_f period = sim_period_f()) {
    const uint32_t stored = stored_pairs(counts, pair_cap);
    const sim_period_f *per = sim_period_or_null(&period);
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warps = gridDim.x * (blockDim.x >> 5);
    for (uint32_t p = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; p < stored; p += warps) {
        const sim_tile2 ij = pairs[p];
        if (!sim_tcull_mine(ij.i, part, parts)) { /* warp-uniform: one pair per warp */
            continue;
        }
        const sim_cull_box bi = sim_cull_load_box(boxes, ij.i);
        const uint32_t r1 = row_start[ij.j + 1u];
        for (uint32_t r = row_start[ij.j]; r < r1; r += 32u) {
            const uint32_t slot = r + lane;
            sim_tile3 t = {ij.i, ij.j, 0u};
            bool keep = false;
            if (slot < r1) {
                t.k = nbr[slot];
                const sim_cull_box bk = sim_cull_load_box(boxes, t.k);
                keep = sim_tcull_near_pf(&bi, &bk, limit, per) != 0;
            }
            sim_cull_append(keep, t, lane, out, cap, &counts->triples);
        }
    }
}

} // namespace tcull

#ifndef SIM_TCULL_KERNELS_ONLY
using namespace tcull;

namespace {

/* Blocks of a grid-stride kernel over up to `items` entries: enough to fill the GPU, no more. */
unsigned stride_blocks(uint64_t items, int sm_count) {
    const uint64_t want = (items + kListThreads - 1) / kListThreads;
    const uint64_t most = 8u * (uint64_t)(sm_count > 0 ? sm_count : 1);
    return (unsigned)(want < 1 ? 1 : (want < most ? want : most));
}

sim_status alloc_bytes(void **p, size_t bytes, const char *what, sim_error *err) {
    const cudaError_t e = cudaMalloc(p, bytes > 0 ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate %llu bytes of GPU memory for %s (ATM cut-off culling)",
                        (unsigned long long)bytes, what);
    }
    SIM_CUDA_TRY(e);
    return SIM_OK;
}

} // namespace

void sim_gpu_tcull_free(sim_gpu_tcull *c) {
    (void)cudaFree(c->boxes);
    (void)cudaFree(c->supers);
    (void)cudaFree(c->super_list);
    (void)cudaFree(c->pair_list);
    (void)cudaFree(c->row_count);
    (void)cudaFree(c->row_start);
    (void)cudaFree(c->nbr);
    (void)cudaFree(c->scan_temp);
    (void)cudaFree(c->triple_list);
    (void)cudaFree(c->counts);
    memset(c, 0, sizeof *c);
}

sim_status sim_gpu_tcull_realloc(sim_gpu_tcull *c, int list, uint64_t cap, sim_error *err) {
    cap = cap > 0 ? cap : 1;
    if (cap > 0xffffffffu) {
        cap = 0xffffffffu;
    }
    switch (list) {
    case SIM_TCULL_LIST_SUPERS:
        (void)cudaFree(c->super_list);
        c->super_list = nullptr;
        c->super_cap = 0;
        SIM_TRY(alloc_bytes((void **)&c->super_list, (size_t)cap * sizeof(sim_tile2),
                            "the super-pair list", err));
        c->super_cap = (uint32_t)cap;
        return SIM_OK;
    case SIM_TCULL_LIST_PAIRS:
        (void)cudaFree(c->pair_list);
        (void)cudaFree(c->nbr);
        c->pair_list = nullptr;
        c->nbr = nullptr;
        c->pair_cap = 0;
        SIM_TRY(alloc_bytes((void **)&c->pair_list, (size_t)cap * sizeof(sim_tile2),
                            "the neighbour-pair list", err));
        SIM_TRY(alloc_bytes((void **)&c->nbr, (size_t)cap * sizeof(uint32_t), "the neighbour rows",
                            err));
        c->pair_cap = (uint32_t)cap;
        return SIM_OK;
    case SIM_TCULL_LIST_TRIPLES:
        (void)cudaFree(c->triple_list);
        c->triple_list = nullptr;
        c->triple_cap = 0;
        SIM_TRY(alloc_bytes((void **)&c->triple_list, (size_t)cap * sizeof(sim_tile3),
                            "the tile-triple list", err));
        c->triple_cap = (uint32_t)cap;
        return SIM_OK;
    default:
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown triplet culling list %d", list);
    }
}

sim_status sim_gpu_tcull_alloc(sim_gpu_tcull *c, uint32_t n, uint64_t super_cap, uint64_t pair_cap,
                               uint64_t triple_cap, int sm_count, cudaStream_t s, sim_error *err) {
    memset(c, 0, sizeof *c);
    c->n_tiles = (uint32_t)(((uint64_t)n + kT - 1) / kT);
    c->n_supers = (c->n_tiles + SIM_CULL_SUPER - 1u) / SIM_CULL_SUPER;
    const size_t rows = ((size_t)c->n_tiles + 1u) * sizeof(uint32_t);
    sim_status st = SIM_OK;
    if (st == SIM_OK) {
        st = alloc_bytes((void **)&c->boxes, (size_t)c->n_tiles * sizeof(sim_cull_box),
                         "triplet tile boxes", err);
    }
    if (st == SIM_OK) {
        st = alloc_bytes((void **)&c->supers, (size_t)c->n_supers * sizeof(sim_cull_box),
                         "triplet super-tile boxes", err);
    }
    if (st == SIM_OK) {
        st = alloc_bytes((void **)&c->row_count, rows, "the neighbour row counts", err);
    }
    if (st == SIM_OK) {
        st = alloc_bytes((void **)&c->row_start, rows, "the neighbour row starts", err);
    }
    if (st == SIM_OK) {
        st = alloc_bytes((void **)&c->counts, sizeof *c->counts, "triplet culling counters", err);
    }
    if (st == SIM_OK) {
        const cudaError_t e = cub::DeviceScan::ExclusiveSum(
            nullptr, c->scan_temp_bytes, c->row_count, c->row_start, (int)(c->n_tiles + 1u), s);
        st = e == cudaSuccess ? SIM_OK
                              : sim_fail(err, SIM_CUDA, "sizing the neighbour-row prefix sum: %s",
                                         cudaGetErrorString(e));
    }
    if (st == SIM_OK) {
        st = alloc_bytes(&c->scan_temp, c->scan_temp_bytes, "the neighbour-row prefix sum", err);
    }
    if (st == SIM_OK) {
        st = sim_gpu_tcull_realloc(c, SIM_TCULL_LIST_SUPERS, super_cap, err);
    }
    if (st == SIM_OK) {
        st = sim_gpu_tcull_realloc(c, SIM_TCULL_LIST_PAIRS, pair_cap, err);
    }
    if (st == SIM_OK) {
        st = sim_gpu_tcull_realloc(c, SIM_TCULL_LIST_TRIPLES, triple_cap, err);
    }
    if (st == SIM_OK) {
        const cudaError_t e1 = cudaMemsetAsync(c->counts, 0, sizeof *c->counts, s);
        const cudaError_t e2 = cudaMemsetAsync(c->row_count, 0, rows, s);
        int per_sm = 0;
        const cudaError_t e3 = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, tcull_second_kernel, kPairThreads, 0);
        st = e1 == cudaSuccess && e2 == cudaSuccess && e3 == cudaSuccess
                 ? SIM_OK
                 : sim_fail(err, SIM_CUDA, "setting up triplet culling: %s",
                            cudaGetErrorString(e1 != cudaSuccess   ? e1
                                               : e2 != cudaSuccess ? e2
                                                                   : e3));
        c->sm_count = sm_count > 0 ? sm_count : 1;
        c->second_grid = (per_sm > 0 ? per_sm : 1) * c->sm_count;
    }
    if (st != SIM_OK) {
        sim_gpu_tcull_free(c);
    }
    return st;
}

sim_status sim_gpu_tcull_build(const sim_gpu_bodies *b, const sim_gpu_tcull *c,
                               const sim_physics_f *ph, const sim_map_plan *plan, int levels,
                               sim_gpu_tcull_share share, const sim_gpu_streams *st,
                               sim_error *err) {
    cudaStream_t s = st->main;
    const int sm_count = c->sm_count;
    if (!(ph->atm.atm_cutoff2 > 0.0f)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "culled triplets need an ATM cut-off");
    }
    if (share.parts < 1u || share.part >= share.parts) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "culled triplets: share %u of %u", share.part,
                        share.parts);
    }
    const float limit = sim_tcull_limit_f(sim_atm_a2_max_f(ph->atm.atm_cutoff2));
    tcull_boxes_kernel<<<c->n_supers, kBoxThreads, 0, s>>>(b->pos, b->n, c->n_tiles, c->boxes,
                                                           c->supers, c->row_count, c->counts);
    SIM_CUDA_CHECK_LAUNCH("tcull_boxes_kernel");
    /* The neighbour pairs: the pair map places the top pass. */
    const bool two = levels == 2;
    const sim_cull_box *items = two ? c->supers : c->boxes;
    const uint32_t count = two ? c->n_supers : c->n_tiles;
    sim_tile2 *out = two ? c->super_list : c->pair_list;
    const uint32_t cap = two ? c->super_cap : c->pair_cap;
    uint32_t *out_count = two ? &c->counts->supers : &c->counts->pairs;
    const sim_pair_map map = (sim_pair_map)plan->map;
    auto one = [&](const sim_map_launch *l, cudaStream_t ls, sim_error *err) -> sim_status {
        const dim3 grid(l->grid[0], l->grid[1], l->grid[2]), block(kGroup, kGroup);
        switch (map) {
#define SIM_PAIR_CASE(id, name, label, paper)                                                      \
    case SIM_PAIR_MAP_##id:                                                                        \
        tcull_map_kernel<SIM_PAIR_MAP_##id>                                                        \
            <<<grid, block, 0, ls>>>(items, count, *l, limit, out, cap, out_count, ph->box.period);    \
        break;
            SIM_PAIR_MAP_LIST(SIM_PAIR_CASE)
#undef SIM_PAIR_CASE
        default:
            return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", (int)map);
        }
        SIM_CUDA_CHECK_LAUNCH("tcull_map_kernel");
        return SIM_OK;
    };
    SIM_TRY(sim_gpu_run_plan(plan, st, one, err));
    if (two) {
        tcull_second_kernel<<<c->second_grid, dim3(kGroup, kGroup), 0, s>>>(
            c->boxes, c->n_tiles, c->n_supers, c->super_list, c->super_cap, limit, c->counts,
            c->pair_list, c->pair_cap, ph->box.period);
        SIM_CUDA_CHECK_LAUNCH("tcull_second_kernel");
    }
    /* Rows of the neighbour list, then the tile triples. */
    const unsigned grid = stride_blocks(c->pair_cap, sm_count);
    tcull_rows_kernel<<<grid, kListThreads, 0, s>>>(c->pair_list, c->pair_cap, c->counts,
                                                    c->row_count);
    SIM_CUDA_CHECK_LAUNCH("tcull_rows_kernel");
    size_t temp = c->scan_temp_bytes;
    SIM_CUDA_TRY(cub::DeviceScan::ExclusiveSum(c->scan_temp, temp, c->row_count, c->row_start,
                                               (int)(c->n_tiles + 1u), s));
    tcull_scatter_kernel<<<grid, kListThreads, 0, s>>>(c->pair_list, c->pair_cap, c->counts,
                                                       c->row_start, c->row_count, c->nbr);
    SIM_CUDA_CHECK_LAUNCH("tcull_scatter_kernel");
    const unsigned warps_grid = stride_blocks(32u * (uint64_t)c->pair_cap, sm_count);
    tcull_extend_kernel<<<warps_grid, kListThreads, 0, s>>>(
        c->boxes, c->pair_list, c->pair_cap, c->row_start, c->nbr, limit, share.part, share.parts,
        c->counts, c->triple_list, c->triple_cap, ph->box.period);
    SIM_CUDA_CHECK_LAUNCH("tcull_extend_kernel");
    return SIM_OK;
}
#endif /* SIM_TCULL_KERNELS_ONLY */
