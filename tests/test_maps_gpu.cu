/* SPDX-License-Identifier: MIT
 * nbsim — thread maps on the GPU, compiled by nvcc exactly as the kernels see them:
 *   - exhaustive coverage at the largest sizes (every block of every launch, one tile bit each,
 *     atomicOr reporting duplicates), which the CPU test can only sample;
 *   - device results == host results for sampled blocks (bit for bit for the exact maps);
 *   - the papers' float variants' first failing n on the device, next to the host's.
 * Exits 77 (skipped) without a CUDA device. */
#include <cuda_runtime.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "ensure.h"
#include "nbsim/maps.h"

#define CUDA_OK(expr)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (expr);                                                                   \
        ENSURE_MSG(e_ == cudaSuccess, "%s: %s", #expr, cudaGetErrorString(e_));                    \
    } while (0)

struct cover_counts {
    unsigned long long produced, wasted, outside, duplicates, bits_set;
};

template <int DIM, int MAP>
__device__ int run_map(const sim_map_launch &l, uint32_t bx, uint32_t by, uint32_t bz,
                       uint32_t t[3]) {
    if (DIM == 2) {
        sim_tile2 p = {0, 0};
        int owned = sim_pair_map_block((sim_pair_map)MAP, &l, bx, by, bz, &p);
        t[0] = p.i, t[1] = p.j, t[2] = 0;
        return owned;
    }
    sim_tile3 p = {0, 0, 0};
    int owned = sim_triplet_map_block((sim_triplet_map)MAP, &l, bx, by, bz, &p);
    t[0] = p.i, t[1] = p.j, t[2] = p.k;
    return owned;
}

__device__ unsigned long long tile_index(int dim, const uint32_t t[3]) {
    unsigned long long i = t[0], j = t[1];
    return dim == 2 ? i * (i + 1u) / 2u + j
                    : i * (i + 1u) * (i + 2u) / 6u + j * (j + 1u) / 2u + t[2];
}

__device__ void warp_add(unsigned long long *counter, bool flag) {
    unsigned votes = __ballot_sync(0xffffffffu, flag);
    if ((threadIdx.x & 31u) == 0u && votes != 0u) {
        atomicAdd(counter, (unsigned long long)__popc(votes));
    }
}

/* Launch contract: grid (ceil(gx / 256), gy, gz) x 256 threads; thread = map block
 * (blockIdx.x * 256 + threadIdx.x, blockIdx.y, blockIdx.z) of `launch`. */
template <int DIM, int MAP>
__global__ void cover_kernel(sim_map_launch launch, unsigned long long *bits, cover_counts *c) {
    uint32_t bx = blockIdx.x * blockDim.x + threadIdx.x;
    bool in = bx < launch.grid[0], owned = false, outside = false, dup = false;
    if (in) {
        uint32_t t[3];
        owned = run_map<DIM, MAP>(launch, bx, blockIdx.y, blockIdx.z, t) != 0;
        if (owned) {
            outside = t[0] >= launch.n || t[1] > t[0] || (DIM == 3 && t[2] > t[1]);
            if (!outside) {
                unsigned long long idx = tile_index(DIM, t), bit = 1ull << (idx & 63u);
                dup = (atomicOr(&bits[idx >> 6], bit) & bit) != 0u;
            }
        }
    }
    warp_add(&c->produced, owned);
    warp_add(&c->wasted, in && !owned);
    warp_add(&c->outside, outside);
    warp_add(&c->duplicates, dup);
}

__global__ void popcount_kernel(const unsigned long long *bits, uint64_t words, cover_counts *c) {
    unsigned long long sum = 0;
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < words;
         w += (uint64_t)gridDim.x * blockDim.x) {
        sum += (unsigned long long)__popcll(bits[w]);
    }
    atomicAdd(&c->bits_set, sum);
}

/* Map results for a list of blocks (x, y, z, launch), to compare with the host. */
template <int DIM, int MAP>
__global__ void sample_kernel(const sim_map_launch *launches, const uint32_t *blocks, size_t count,
                              uint32_t *out) {
    size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (s < count) {
        const uint32_t *b = &blocks[4 * s];
        uint32_t t[3] = {0, 0, 0};
        out[4 * s] = (uint32_t)run_map<DIM, MAP>(launches[b[3]], b[0], b[1], b[2], t);
        out[4 * s + 1] = t[0], out[4 * s + 2] = t[1], out[4 * s + 3] = t[2];
    }
}

/* Smallest lambda in [from, from + count) where the float variant differs from the exact map
 * (both on the same one-launch plan); atomicMin into *first. */
template <int DIM, int MAP, int EXACT>
__global__ void first_fail_kernel(sim_map_launch launch, uint64_t from, uint64_t count,
                                  unsigned long long *first) {
    uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (k >= count) {
        return;
    }
    uint64_t lambda = from + k, gx = launch.grid[0], gy = launch.grid[1];
    uint32_t bx = (uint32_t)(lambda % gx), by = (uint32_t)(lambda / gx % gy);
    uint32_t bz = (uint32_t)(lambda / gx / gy), a[3], b[3];
    int ra = run_map<DIM, EXACT>(launch, bx, by, bz, a),
        rb = run_map<DIM, MAP>(launch, bx, by, bz, b);
    if (ra != rb || a[0] != b[0] || a[1] != b[1] || a[2] != b[2]) {
        atomicMin(first, (unsigned long long)lambda);
    }
}

/* ---- host side: one switch per kernel over the X-macro lists ---- */

static void launch_cover(int dim, int map, const sim_map_launch &l, unsigned long long *bits,
                         cover_counts *c) {
    dim3 grid((l.grid[0] + 255u) / 256u, l.grid[1], l.grid[2]);
    if (dim == 2) {
        switch (map) {
#define COVER2(id, name, label, paper)                                                             \
    case SIM_PAIR_MAP_##id:                                                                        \
        cover_kernel<2, SIM_PAIR_MAP_##id><<<grid, 256>>>(l, bits, c);                             \
        break;
            SIM_PAIR_MAP_LIST(COVER2)
#undef COVER2
        }
        return;
    }
    switch (map) {
#define COVER3(id, name, label, paper)                                                             \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        cover_kernel<3, SIM_TRIPLET_MAP_##id><<<grid, 256>>>(l, bits, c);                          \
        break;
        SIM_TRIPLET_MAP_LIST(COVER3)
#undef COVER3
    }
}

static void launch_sample(int dim, int map, const sim_map_launch *l, const uint32_t *blocks,
                          size_t count, uint32_t *out) {
    unsigned grid = (unsigned)((count + 255u) / 256u);
    if (dim == 2) {
        switch (map) {
#define SAMPLE2(id, name, label, paper)                                                            \
    case SIM_PAIR_MAP_##id:                                                                        \
        sample_kernel<2, SIM_PAIR_MAP_##id><<<grid, 256>>>(l, blocks, count, out);                 \
        break;
            SIM_PAIR_MAP_LIST(SAMPLE2)
#undef SAMPLE2
        }
        return;
    }
    switch (map) {
#define SAMPLE3(id, name, label, paper)                                                            \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        sample_kernel<3, SIM_TRIPLET_MAP_##id><<<grid, 256>>>(l, blocks, count, out);              \
        break;
        SIM_TRIPLET_MAP_LIST(SAMPLE3)
#undef SAMPLE3
    }
}

static void launch_first_fail(int dim, int map, const sim_map_launch &l, uint64_t from,
                              uint64_t count, unsigned long long *first) {
    unsigned grid = (unsigned)((count + 255u) / 256u);
    switch (dim * 100 + map) {
    case 200 + SIM_PAIR_MAP_LTM_SQRT:
        first_fail_kernel<2, SIM_PAIR_MAP_LTM_SQRT, SIM_PAIR_MAP_LTM>
            <<<grid, 256>>>(l, from, count, first);
        break;
    case 200 + SIM_PAIR_MAP_LTM_RSQRT:
        first_fail_kernel<2, SIM_PAIR_MAP_LTM_RSQRT, SIM_PAIR_MAP_LTM>
            <<<grid, 256>>>(l, from, count, first);
        break;
    case 200 + SIM_PAIR_MAP_LTM_NEWTON:
        first_fail_kernel<2, SIM_PAIR_MAP_LTM_NEWTON, SIM_PAIR_MAP_LTM>
            <<<grid, 256>>>(l, from, count, first);
        break;
    case 300 + SIM_TRIPLET_MAP_TETRA_FLOAT:
        first_fail_kernel<3, SIM_TRIPLET_MAP_TETRA_FLOAT, SIM_TRIPLET_MAP_TETRA>
            <<<grid, 256>>>(l, from, count, first);
        break;
    default:
        break;
    }
}

static sim_map_plan make_plan(int dim, int map, uint32_t n) {
    sim_map_plan plan;
    sim_error err;
    sim_status st = dim == 2 ? sim_pair_map_plan((sim_pair_map)map, n, &plan, &err)
                             : sim_triplet_map_plan((sim_triplet_map)map, n, &plan, &err);
    ENSURE_MSG(st == SIM_OK, "plan: %s", err.message);
    return plan;
}

static const char *map_name(int dim, int map) {
    return dim == 2 ? sim_pair_map_name((sim_pair_map)map)
                    : sim_triplet_map_name((sim_triplet_map)map);
}

static int is_paper(int dim, int map) {
    return dim == 2 ? sim_pair_map_is_paper_float((sim_pair_map)map)
                    : sim_triplet_map_is_paper_float((sim_triplet_map)map);
}

static int map_count(int dim) {
    return dim == 2 ? (int)SIM_PAIR_MAP_COUNT : (int)SIM_TRIPLET_MAP_COUNT;
}

/* The coverage bitmap, sized once for the largest domain (T3(4096) bits = 1.4 GB). */
static unsigned long long *d_bits;
static cover_counts *counts;

static int cover_setup(void) {
    if (d_bits == NULL) {
        uint64_t words =
            ((uint64_t)SIM_MAX_TILES_3D * (SIM_MAX_TILES_3D + 1u) * (SIM_MAX_TILES_3D + 2u) / 6u +
             63u) /
            64u;
        CUDA_OK(cudaMalloc(&d_bits, words * sizeof *d_bits));
        CUDA_OK(cudaMallocManaged(&counts, sizeof *counts));
    }
    return d_bits != NULL && counts != NULL;
}

/* Map m at n: every block on the device; 1 when each tile came exactly once, nothing else, and
 * the wasted blocks are the plan's. */
static int cover_one(int dim, int m, uint32_t n, int verbose) {
    uint64_t useful =
        dim == 2 ? (uint64_t)n * (n + 1u) / 2u : (uint64_t)n * (n + 1u) * (n + 2u) / 6u;
    uint64_t words = (useful + 63u) / 64u;
    sim_map_plan plan = make_plan(dim, m, n);
    CUDA_OK(cudaMemset(d_bits, 0, words * sizeof *d_bits));
    memset(counts, 0, sizeof *counts);
    for (int l = 0; l < plan.launch_count; ++l) {
        launch_cover(dim, m, plan.launch[l], d_bits, counts);
        CUDA_OK(cudaGetLastError());
    }
    popcount_kernel<<<1024, 256>>>(d_bits, words, counts);
    CUDA_OK(cudaDeviceSynchronize());
    int ok = counts->produced == useful && counts->bits_set == useful && counts->duplicates == 0u &&
             counts->outside == 0u && counts->wasted == plan.blocks - useful;
    if (verbose) {
        printf("  %d-D %-6s n=%-5u %2d launches %12" PRIu64 " blocks: %s\n", dim, map_name(dim, m),
               n, plan.launch_count, plan.blocks, ok ? "every tile exactly once" : "WRONG");
    }
    ENSURE_MSG(ok,
               "%s n=%u: produced %llu, tiles %llu of %" PRIu64 ", duplicates %llu, outside %llu, "
               "wasted %llu (plan %" PRIu64 ")",
               map_name(dim, m), n, counts->produced, counts->bits_set, useful, counts->duplicates,
               counts->outside, counts->wasted, plan.blocks - useful);
    return ok;
}

/* Every exact map at n (the papers' float variants are wrong at these sizes by design; see
 * test_gpu_paper_first_failing). */
static void cover_all(int dim, uint32_t n) {
    for (int m = 0; cover_setup() && m < map_count(dim); ++m) {
        if (!is_paper(dim, m)) {
            cover_one(dim, m, n, 1);
        }
    }
}

static void test_gpu_cover_2d(void) {
    const uint32_t sizes[] = {65535, 65534, 61441, 32769, 4097};
    for (uint32_t n : sizes) {
        cover_all(2, n);
    }
}

static void test_gpu_cover_3d(void) {
    const uint32_t sizes[] = {4096, 4095, 3841, 2049, 1000};
    for (uint32_t n : sizes) {
        cover_all(3, n);
    }
}

/* Every n in [1, all] and `random` more n in (all, max], every exact map (3-D bb only up to
 * bb_max: its n^3 grid dominates the time). */
static void sweep(int dim, uint32_t all, int random, uint32_t bb_max) {
    uint32_t max = dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D, runs = 0, good = 0;
    uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)dim;
    for (uint32_t k = 1; cover_setup() && k <= all + (uint32_t)random; ++k) {
        uint32_t n = k;
        if (k > all) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            n = all + 1u + (uint32_t)(x % (max - all));
        }
        for (int m = 0; m < map_count(dim); ++m) {
            if (is_paper(dim, m) || (dim == 3 && m == SIM_TRIPLET_MAP_BB && n > bb_max)) {
                continue;
            }
            good += (uint32_t)cover_one(dim, m, n, 0);
            ++runs;
        }
    }
    printf("  %d-D: every n <= %u and %d random n <= %u: %u of %u map checks exact\n", dim, all,
           random, max, good, runs);
}

static void test_gpu_cover_sweep(void) {
    /* Sizes chosen to run in about half a minute; with every n <= 4096 and 256 random n (2-D),
     * every n <= 400 and 64 random n (3-D) it passed in 4 minutes on an H200. */
    sweep(2, 1024, 32, 0);
    sweep(3, 200, 8, 512);
}

/* Device == host, block by block, for 2^20 pseudo-random blocks of every map. */
static void compare_host(int dim, uint32_t n) {
    const size_t count = 1u << 20;
    for (int m = 0; m < map_count(dim); ++m) {
        sim_map_plan plan = make_plan(dim, m, n);
        std::vector<uint32_t> blocks(4 * count), got(4 * count);
        uint64_t x = 0x2545f4914f6cdd1dull ^ ((uint64_t)m << 32) ^ n;
        for (size_t s = 0; s < count; ++s) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int launch;
            sim_map_plan_block_at(&plan, x % plan.blocks, &launch, &blocks[4 * s],
                                  &blocks[4 * s + 1], &blocks[4 * s + 2]);
            blocks[4 * s + 3] = (uint32_t)launch;
        }
        sim_map_launch *d_launches = NULL;
        uint32_t *d_blocks = NULL, *d_out = NULL;
        CUDA_OK(cudaMalloc(&d_launches, sizeof plan.launch));
        CUDA_OK(cudaMalloc(&d_blocks, blocks.size() * sizeof(uint32_t)));
        CUDA_OK(cudaMalloc(&d_out, got.size() * sizeof(uint32_t)));
        CUDA_OK(cudaMemcpy(d_launches, plan.launch, sizeof plan.launch, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(d_blocks, blocks.data(), blocks.size() * sizeof(uint32_t),
                           cudaMemcpyHostToDevice));
        launch_sample(dim, m, d_launches, d_blocks, count, d_out);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(
            cudaMemcpy(got.data(), d_out, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        size_t differ = 0;
        for (size_t s = 0; s < count; ++s) {
            const uint32_t *b = &blocks[4 * s];
            uint32_t t[3] = {0, 0, 0};
            int owned = 0;
            if (dim == 2) {
                sim_tile2 p = {0, 0};
                owned =
                    sim_pair_map_block((sim_pair_map)m, &plan.launch[b[3]], b[0], b[1], b[2], &p);
                t[0] = p.i, t[1] = p.j;
            } else {
                sim_tile3 p = {0, 0, 0};
                owned = sim_triplet_map_block((sim_triplet_map)m, &plan.launch[b[3]], b[0], b[1],
                                              b[2], &p);
                t[0] = p.i, t[1] = p.j, t[2] = p.k;
            }
            const uint32_t *g = &got[4 * s];
            differ += (uint32_t)owned != g[0] ||
                      (owned && (t[0] != g[1] || t[1] != g[2] || t[2] != g[3]));
        }
        printf("  %d-D %-11s n=%-5u device vs host: %zu of %zu sampled blocks differ\n", dim,
               map_name(dim, m), n, differ, count);
        if (!is_paper(dim, m)) {
            ENSURE_MSG(differ == 0u, "%s n=%u: %zu blocks differ", map_name(dim, m), n, differ);
        }
        cudaFree(d_launches);
        cudaFree(d_blocks);
        cudaFree(d_out);
    }
}

static void test_gpu_matches_host(void) {
    compare_host(2, 65535);
    compare_host(2, 3000);
    compare_host(3, 4096);
    compare_host(3, 150);
}

/* Host first failing n, by the same lambda scan on the CPU (see tests/test_maps.c). */
static uint32_t host_first_failing(int dim, int map, const sim_map_plan &plan) {
    const sim_map_launch *l = &plan.launch[0];
    for (uint64_t lambda = 0; lambda < plan.useful; ++lambda) {
        uint32_t bx = (uint32_t)(lambda % l->grid[0]),
                 by = (uint32_t)(lambda / l->grid[0] % l->grid[1]);
        uint32_t bz = (uint32_t)(lambda / l->grid[0] / l->grid[1]);
        if (dim == 2) {
            sim_tile2 a = {0, 0}, b = {0, 0};
            int ra = sim_pair_map_block(SIM_PAIR_MAP_LTM, l, bx, by, bz, &a);
            int rb = sim_pair_map_block((sim_pair_map)map, l, bx, by, bz, &b);
            if (ra != rb || a.i != b.i || a.j != b.j) {
                return a.i + 1u;
            }
        } else {
            sim_tile3 a = {0, 0, 0}, b = {0, 0, 0};
            int ra = sim_triplet_map_block(SIM_TRIPLET_MAP_TETRA, l, bx, by, bz, &a);
            int rb = sim_triplet_map_block((sim_triplet_map)map, l, bx, by, bz, &b);
            if (ra != rb || a.i != b.i || a.j != b.j || a.k != b.k) {
                return a.i + 1u;
            }
        }
    }
    return 0;
}

static void test_gpu_paper_first_failing(void) {
    unsigned long long *first = NULL;
    CUDA_OK(cudaMallocManaged(&first, sizeof *first));
    for (int dim = 2; dim <= 3 && first != NULL; ++dim) {
        for (int m = 0; m < map_count(dim); ++m) {
            if (!is_paper(dim, m)) {
                continue;
            }
            sim_map_plan plan = make_plan(dim, m, dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D);
            *first = ~0ull;
            const uint64_t chunk = 1ull << 28;
            for (uint64_t from = 0; from < plan.useful && *first == ~0ull; from += chunk) {
                uint64_t count = plan.useful - from < chunk ? plan.useful - from : chunk;
                launch_first_fail(dim, m, plan.launch[0], from, count, first);
                CUDA_OK(cudaDeviceSynchronize());
            }
            uint32_t device_n = 0;
            if (*first != ~0ull) { /* the row / layer of the first failing lambda, + 1 */
                uint64_t lambda = *first;
                uint32_t row = 0;
                while (dim == 2 ? (uint64_t)(row + 1u) * (row + 2u) / 2u <= lambda
                                : (uint64_t)(row + 1u) * (row + 2u) * (row + 3u) / 6u <= lambda) {
                    ++row;
                }
                device_n = row + 1u;
            }
            uint32_t host_n = host_first_failing(dim, m, plan);
            printf("  %-11s first failing n: device %u, host %u\n", map_name(dim, m), device_n,
                   host_n);
            ENSURE_MSG(device_n > (dim == 2 ? 1000u : 100u), "%s", map_name(dim, m));
            /* sqrtf, fmaf and the Newton steps are IEEE on both sides: they must agree. rsqrtf
             * (hardware approximation) and cbrtf may not. */
            if (dim == 2 && (m == SIM_PAIR_MAP_LTM_SQRT || m == SIM_PAIR_MAP_LTM_NEWTON)) {
                ENSURE_MSG(device_n == host_n, "%s: device %u host %u", map_name(dim, m), device_n,
                           host_n);
            }
        }
    }
    cudaFree(first);
}

static const ensure_test tests[] = {
    {"maps_gpu_matches_host", test_gpu_matches_host},
    {"maps_gpu_paper_first_failing", test_gpu_paper_first_failing},
    {"maps_gpu_cover_2d", test_gpu_cover_2d},
    {"maps_gpu_cover_3d", test_gpu_cover_3d},
    {"maps_gpu_cover_sweep", test_gpu_cover_sweep},
};

int main(int argc, char **argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: skipped\n");
        return ENSURE_SKIP_CODE;
    }
    int rc = ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
    cudaFree(d_bits);
    cudaFree(counts);
    return rc;
}
