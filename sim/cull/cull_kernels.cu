/* SPDX-License-Identifier: MIT
 * nbsim — the culling kernels (cull_kernels.h): Morton keys, CUB's radix sort, the gather that
 * reorders the bodies, tile and super-tile boxes, and the culling passes that write the
 * interacting tile pairs to a compact list. Why the result is exact: cull.h. */
#include "cull/cull_kernels.h"

#include <cub/device/device_radix_sort.cuh>

#include "nbsim/internal/backend.h"

#include "cull/cull_device.cuh"

namespace {

constexpr int kThreads = 256; /* per-body kernels */

/* The box kernel: one warp per tile, a block = one super-tile of SIM_CULL_SUPER tiles. */
constexpr int kBoxWarps = (int)SIM_CULL_SUPER;

/* A culling block: SIM_CULL_GROUP x SIM_CULL_GROUP threads, one item pair each. */
constexpr int kGroup = (int)SIM_CULL_GROUP;
constexpr int kCullThreads = kGroup * kGroup;
static_assert(kCullThreads % 32 == 0, "whole warps: the append votes per warp");

unsigned blocks_for(uint32_t n) {
    return (n + kThreads - 1) / kThreads;
}

/* One key per body: x, y, z cell of its centre interleaved (cull.h). 16 B read, 8 B written. */
__global__ void __launch_bounds__(kThreads)
    morton_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, float box_half, float scale,
                  uint32_t *__restrict__ keys, uint32_t *__restrict__ slots) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    const sim_vec4f p = sim_ld4(pos + i);
    keys[i] = sim_morton_key(p.x, p.y, p.z, box_half, scale);
    slots[i] = i;
}

/* New slot k takes old slot order[k]: 36 B gathered (L2, mostly near each other once sorted),
 * 36 B written coalesced per body. */
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const uint32_t *__restrict__ order, const sim_vec4f *__restrict__ pos,
                  const sim_vec4f *__restrict__ vel, const uint32_t *__restrict__ perm, uint32_t n,
                  sim_vec4f *__restrict__ pos2, sim_vec4f *__restrict__ vel2,
                  uint32_t *__restrict__ perm2) {
    const uint32_t k = blockIdx.x * kThreads + threadIdx.x;
    if (k >= n) {
        return;
    }
    const uint32_t s = order[k];
    pos2[k] = sim_ld4(pos + s);
    vel2[k] = sim_ld4(vel + s);
    perm2[k] = perm[s];
}

__global__ void __launch_bounds__(kThreads) iota_kernel(uint32_t *__restrict__ d, uint32_t n) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i < n) {
        d[i] = i;
    }
}

/* Tile and super-tile boxes.
 *
 * Launch contract: grid = ceil(tiles / 16) blocks (one per super-tile) of 16 warps; warp w owns
 * tile t = blockIdx.x * 16 + w, its lanes TILE / 32 bodies each (guard body < n, tile < tiles:
 * padded bodies do not enlarge a box). Warp min/max by shuffles, then warp 0 merges the block's
 * 16 inflated tile boxes into the super-tile's. Block 0 also zeroes the step's survivor counts
 * (this kernel runs first in every culled step, on the same stream as the passes).
 * Cost per body: 16 B read, 6 FMNMX; per tile 30 shuffles + 32 B written. Periodic axes (per
 * not all 0: a kernel-uniform branch, the walls' code untouched): each body through its image
 * nearest the tile's first body, each tile box moved to the image nearest the super-tile's first
 * body (cull.h): ~14 instructions more per body, 16 B more per tile (the anchors, from L1), a
 * vote per tile for lo.w. */
template <int TILE>
__global__ void __launch_bounds__(kBoxWarps * 32)
    tile_boxes_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, uint32_t n_tiles,
                      sim_cull_box *__restrict__ boxes, sim_cull_box *__restrict__ supers,
                      sim_gpu_cull_counts *__restrict__ counts, sim_period_f per) {
    static_assert(TILE % 32 == 0, "whole warps per tile");
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        counts->supers = 0;
        counts->tiles = 0;
        counts->super_overflow = 0;
    }
    const uint32_t w = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const uint32_t t = blockIdx.x * kBoxWarps + w;
    const bool periodic = sim_period_or_null(&per) != nullptr;
    sim_cull_box box = sim_cull_empty_box();
    if (!periodic) {
        if (t < n_tiles) {
#pragma unroll
            for (int k = 0; k < TILE / 32; ++k) {
                const uint32_t i = t * TILE + (uint32_t)k * 32u + lane;
                if (i < n) {
                    const sim_vec4f p = sim_ld4(pos + i);
                    sim_cull_box_add(&box, p, p.w);
                }
            }
        }
        box = sim_cull_warp_box(box);
        sim_cull_inflate(&box);
    } else {
        bool far = false;
        if (t < n_tiles) {
            const sim_vec4f a = sim_ld4(pos + t * TILE);
#pragma unroll
            for (int k = 0; k < TILE / 32; ++k) {
                const uint32_t i = t * TILE + (uint32_t)k * 32u + lane;
                if (i < n) {
                    const sim_vec4f p = sim_ld4(pos + i);
                    sim_cull_box_add_near(&box, p, p.w, a, per, &far);
                }
            }
        }
        box = sim_cull_warp_box(box);
        sim_cull_inflate(&box);
        box.lo.w = __any_sync(SIM_FULL_MASK, far) ? 1.0f : 0.0f;
    }
    __shared__ sim_cull_box sh_box[kBoxWarps];
    if (lane == 0) {
        sh_box[w] = box;
        if (t < n_tiles) {
            boxes[t] = box;
            if (periodic) {
                sim_cull_box_near(&sh_box[w], sim_ld4(pos + t * TILE),
                                  sim_ld4(pos + blockIdx.x * kBoxWarps * TILE), per);
            }
        }
    }
    __syncthreads();
    if (w == 0) {
        const sim_cull_box mine = lane < (uint32_t)kBoxWarps ? sh_box[lane] : sim_cull_empty_box();
        sim_cull_box all = sim_cull_warp_box(mine);
        if (lane == 0) {
            all.lo.w = 0.0f;
            supers[blockIdx.x] = all;
        }
    }
}

/* The item pair a culling thread owns in `group` and whether its boxes overlap. */
static __device__ __forceinline__ bool test_pair(sim_tile2 group, uint32_t count,
                                                 const sim_cull_box *__restrict__ boxes,
                                                 const sim_period_f &per, sim_tile2 *pair) {
    if (!sim_cull_thread_pair(group, threadIdx.x, threadIdx.y, count, pair)) {
        return false;
    }
    const sim_cull_box a = sim_cull_load_box(boxes, pair->i), b = sim_cull_load_box(boxes, pair->j);
    return sim_cull_overlap_p(&a, &b, sim_period_or_null(&per)) != 0;
}

/* The map-placed culling pass (the top level).
 *
 * Launch contract: one launch of a pair map plan over ceil(count / 16) groups per side, blocks
 * of 16 x 16 threads. sim_pair_map_block (evaluated by every thread, as in the papers' code)
 * gives the block's group pair (G_I, G_J) or nothing (the whole block returns: no barrier
 * follows). Thread (tx, ty) owns item pair (G_I * 16 + ty, G_J * 16 + tx): kept when it lies in
 * the simplex (J <= I < count), its row I in [row0, row1) (all rows alone; a rank's rows of a
 * multi-GPU step) and the two boxes overlap; survivors appended with one atomic per warp. Cost
 * per thread: the map + 4 LDG.128 (L1: a block reads 32 distinct boxes) + 6 FSETP; per block 8
 * votes and at most 8 atomics. gate (neighbour lists: their rebuild flag; NULL: always): every
 * block returns at once while it is 0. */
template <sim_pair_map MAP>
__global__ void __launch_bounds__(kCullThreads)
    cull_map_kernel(const sim_cull_box *__restrict__ boxes, uint32_t count, uint32_t row0,
                    uint32_t row1, sim_map_launch launch, sim_tile2 *__restrict__ out, uint32_t cap,
                    uint32_t *__restrict__ out_count, const uint32_t *__restrict__ gate,
                    sim_period_f per) {
    if (gate != nullptr && *gate == 0u) {
        return;
    }
    sim_tile2 group;
    if (!sim_pair_map_block(MAP, &launch, blockIdx.x, blockIdx.y, blockIdx.z, &group)) {
        return;
    }
    sim_tile2 pair = {0u, 0u};
    const bool keep = test_pair(group, count, boxes, per, &pair) && pair.i >= row0 && pair.i < row1;
    const uint32_t lane = (threadIdx.y * kGroup + threadIdx.x) & 31u;
    sim_cull_append(keep, pair, lane, out, cap, out_count);
}

/* The second pass of the two-level cull: the tile pairs inside each surviving super pair.
 *
 * Launch contract: a persistent grid (sim_gpu_cull_second_grid blocks) of 16 x 16 threads; block
 * b takes list items b, b + grid, ... of the super-pair list, or, when the top pass found more
 * than super_cap survivors (the list is incomplete), items of the whole super simplex in row
 * order. Per item as cull_map_kernel, with the item's super pair as the group and count = tiles,
 * keeping the tile rows [row0, row1).
 * The item count is uniform per block, so every thread runs the same iterations (the vote needs
 * whole warps). Cost per item: as one cull_map_kernel block, without a block launch. gate: as
 * cull_map_kernel's. */
__global__ void __launch_bounds__(kCullThreads)
    cull_second_kernel(const sim_cull_box *__restrict__ boxes, uint32_t n_tiles, uint32_t n_supers,
                       uint32_t row0, uint32_t row1, const sim_tile2 *__restrict__ super_list,
                       uint32_t super_cap, sim_gpu_cull_counts *__restrict__ counts,
                       sim_tile2 *__restrict__ out, uint32_t cap, unsigned flags,
                       const uint32_t *__restrict__ gate, sim_period_f per) {
    if (gate != nullptr && *gate == 0u) {
        return;
    }
    const uint32_t found = counts->supers;
    const bool overflow = found > super_cap;
    const uint32_t items = overflow ? sim_map_t2(n_supers) : found;
    const uint32_t lane = (threadIdx.y * kGroup + threadIdx.x) & 31u;
    if ((flags & SIM_GPU_CULL_RECORD) && blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
        atomicMax(&counts->frame.supers_peak, found);
        if (overflow) {
            counts->super_overflow = 1u; /* the contact sweep counts the step */
        }
    }
    for (uint32_t k = blockIdx.x; k < items; k += gridDim.x) {
        const sim_tile2 group = overflow ? sim_cull_simplex_pair(k) : super_list[k];
        sim_tile2 pair = {0u, 0u};
        const bool keep =
            test_pair(group, n_tiles, boxes, per, &pair) && pair.i >= row0 && pair.i < row1;
        sim_cull_append(keep, pair, lane, out, cap, &counts->tiles);
    }
}

} // namespace

sim_status sim_gpu_sort_temp_bytes(uint32_t n, size_t *bytes, sim_error *err) {
    cub::DoubleBuffer<uint32_t> keys(nullptr, nullptr), vals(nullptr, nullptr);
    *bytes = 0;
    SIM_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, *bytes, keys, vals, (int)n, 0,
                                                 (int)SIM_MORTON_KEY_BITS));
    return SIM_OK;
}

sim_status sim_gpu_cull_second_grid(int sm_count, int *grid, sim_error *err) {
    int per_sm = 0;
    SIM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cull_second_kernel,
                                                               kCullThreads, 0));
    *grid = (per_sm > 0 ? per_sm : 1) * (sm_count > 0 ? sm_count : 1);
    return SIM_OK;
}

sim_status sim_gpu_iota(uint32_t *d, uint32_t n, cudaStream_t s, sim_error *err) {
    iota_kernel<<<blocks_for(n), kThreads, 0, s>>>(d, n);
    SIM_CUDA_CHECK_LAUNCH("iota_kernel");
    return SIM_OK;
}

sim_status sim_gpu_sort_bodies(sim_gpu_bodies *b, sim_gpu_cull *c, float box_half, cudaStream_t s,
                               sim_error *err) {
    const uint32_t n = b->n;
    const float scale = (float)SIM_MORTON_CELLS / (2.0f * box_half);
    morton_kernel<<<blocks_for(n), kThreads, 0, s>>>(b->pos, n, box_half, scale, c->keys[0],
                                                     c->vals[0]);
    SIM_CUDA_CHECK_LAUNCH("morton_kernel");
    cub::DoubleBuffer<uint32_t> keys(c->keys[0], c->keys[1]), vals(c->vals[0], c->vals[1]);
    size_t temp = c->sort_temp_bytes;
    SIM_CUDA_TRY(cub::DeviceRadixSort::SortPairs(c->sort_temp, temp, keys, vals, (int)n, 0,
                                                 (int)SIM_MORTON_KEY_BITS, s));
    gather_kernel<<<blocks_for(n), kThreads, 0, s>>>(vals.Current(), b->pos, b->vel, c->perm, n,
                                                     c->pos_alt, c->vel_alt, c->perm_alt);
    SIM_CUDA_CHECK_LAUNCH("gather_kernel");
    sim_vec4f *p = b->pos, *v = b->vel;
    uint32_t *q = c->perm;
    b->pos = c->pos_alt;
    b->vel = c->vel_alt;
    c->perm = c->perm_alt;
    c->pos_alt = p;
    c->vel_alt = v;
    c->perm_alt = q;
    return SIM_OK;
}

sim_status sim_gpu_cull_boxes(const sim_gpu_bodies *b, const sim_gpu_cull *c, cudaStream_t s,
                              sim_error *err) {
    const unsigned grid = c->n_supers;
    switch (c->tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        tile_boxes_kernel<t><<<grid, kBoxWarps * 32, 0, s>>>(b->pos, b->n, c->n_tiles, c->boxes,   \
                                                             c->supers, c->counts, c->period);     \
        break;
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_fail(err, SIM_BAD_ARGUMENT, "tile size %u must be " SIM_PAIR_TILE_NAMES,
                        c->tile);
    }
    SIM_CUDA_CHECK_LAUNCH("tile_boxes_kernel");
    return SIM_OK;
}

sim_status sim_gpu_cull_top(const sim_gpu_cull *c, const sim_map_plan *plan, int levels,
                            const uint32_t *gate, const sim_gpu_streams *st, sim_error *err) {
    const sim_pair_map map = (sim_pair_map)plan->map;
    const bool two = levels == 2;
    const sim_cull_box *boxes = two ? c->supers : c->boxes;
    const uint32_t count = two ? c->n_supers : c->n_tiles;
    sim_tile2 *out = two ? c->super_list : c->tile_list;
    const uint32_t cap = two ? c->super_cap : c->tile_cap;
    uint32_t *out_count = two ? &c->counts->supers : &c->counts->tiles;
    /* The rank's rows in the top pass's items: tiles, or the super-tiles that hold them. */
    const uint32_t row0 = two ? c->row0 / SIM_CULL_SUPER : c->row0;
    const uint32_t row1 = two ? (c->row1 + SIM_CULL_SUPER - 1u) / SIM_CULL_SUPER : c->row1;
    auto one = [&](const sim_map_launch *l, cudaStream_t s, sim_error *err) -> sim_status {
        const dim3 grid(l->grid[0], l->grid[1], l->grid[2]), block(kGroup, kGroup);
        switch (map) {
#define SIM_PAIR_CASE(id, name, label, paper)                                                      \
    case SIM_PAIR_MAP_##id:                                                                        \
        cull_map_kernel<SIM_PAIR_MAP_##id><<<grid, block, 0, s>>>(                                 \
            boxes, count, row0, row1, *l, out, cap, out_count, gate, c->period);                   \
        break;
            SIM_PAIR_MAP_LIST(SIM_PAIR_CASE)
#undef SIM_PAIR_CASE
        default:
            return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", (int)map);
        }
        SIM_CUDA_CHECK_LAUNCH("cull_map_kernel");
        return SIM_OK;
    };
    return sim_gpu_run_plan(plan, st, one, err);
}

sim_status sim_gpu_cull_second(const sim_gpu_cull *c, unsigned flags, const uint32_t *gate,
                               cudaStream_t s, sim_error *err) {
    const dim3 block(kGroup, kGroup);
    cull_second_kernel<<<c->super_grid, block, 0, s>>>(
        c->boxes, c->n_tiles, c->n_supers, c->row0, c->row1, c->super_list, c->super_cap, c->counts,
        c->tile_list, c->tile_cap, flags, gate, c->period);
    SIM_CUDA_CHECK_LAUNCH("cull_second_kernel");
    return SIM_OK;
}
