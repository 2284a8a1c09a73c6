/* SPDX-License-Identifier: MIT
 * nbsim — the papers' micro-benchmark kernels (map only, accumulate, EDM) under every map, their
 * host drivers and exactly-once verification.
 *
 * Why these kernels are lean: the quantity measured is the cost of placing blocks, so nothing
 * else may dominate the map-only kernel. Every map is a template parameter (its switch folds),
 * rho comes from blockDim (one IMAD per coordinate), element indices are 32-bit (N^dim < 2^32),
 * and the map-only kernel keeps its coordinates alive with a store under a condition that valid
 * coordinates never meet, so no thread touches memory.
 *
 * Block order is memory order: the hardware dispatches blocks x fastest, so a map whose grid walks
 * the matrix column by column (rb and rm put their long side on x for CUDA's y limit) loses the
 * DRAM and L2 locality of a row-by-row walk on read-modify-write kernels. Every kernel can
 * therefore also run transposed (TR = 1: the plan's x and y swapped at launch), which turns each
 * map's order around without changing its blocks; the benchmark times both. */
#include <cuda_runtime.h>

#include <new>
#include <stdio.h>
#include <string.h>

#include "bench_map_kernels.h"
#include "nbsim/cuda_check.h"

/* ---- element coordinates of a thread ------------------------------------------------------ */

/* The block's tile, evaluated by every thread (PB = 0, the papers' way) or by thread 0 alone and
 * broadcast through shared memory (PB = 1): the map is block-uniform, so one evaluation per
 * block is enough, at the price of a barrier. Heavy maps and big blocks gain. TR = 1: the launch
 * is transposed, so the plan's (bx, by) are (blockIdx.y, blockIdx.x). */
template <int TR> __device__ __forceinline__ uint32_t plan_bx() {
    return TR ? blockIdx.y : blockIdx.x;
}
template <int TR> __device__ __forceinline__ uint32_t plan_by() {
    return TR ? blockIdx.x : blockIdx.y;
}

template <int M, int PB, int TR>
__device__ __forceinline__ bool pair_tile(const sim_map_launch &launch, sim_tile2 &t) {
    if (!PB) {
        return sim_pair_map_block((sim_pair_map)M, &launch, plan_bx<TR>(), plan_by<TR>(),
                                  blockIdx.z, &t) != 0;
    }
    __shared__ uint32_t s_tile[3];
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        sim_tile2 u = {0u, 0u};
        s_tile[0] = (uint32_t)sim_pair_map_block((sim_pair_map)M, &launch, plan_bx<TR>(),
                                                 plan_by<TR>(), blockIdx.z, &u);
        s_tile[1] = u.i;
        s_tile[2] = u.j;
    }
    __syncthreads();
    t.i = s_tile[1];
    t.j = s_tile[2];
    return s_tile[0] != 0;
}

template <int M, int PB, int TR>
__device__ __forceinline__ bool triple_tile(const sim_map_launch &launch, sim_tile3 &t) {
    if (!PB) {
        return sim_triplet_map_block((sim_triplet_map)M, &launch, plan_bx<TR>(), plan_by<TR>(),
                                     blockIdx.z, &t) != 0;
    }
    __shared__ uint32_t s_tile[4];
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        sim_tile3 u = {0u, 0u, 0u};
        s_tile[0] = (uint32_t)sim_triplet_map_block((sim_triplet_map)M, &launch, plan_bx<TR>(),
                                                    plan_by<TR>(), blockIdx.z, &u);
        s_tile[1] = u.i;
        s_tile[2] = u.j;
        s_tile[3] = u.k;
    }
    __syncthreads();
    t.i = s_tile[1];
    t.j = s_tile[2];
    t.k = s_tile[3];
    return s_tile[0] != 0;
}

/* 2-D: block -> tile pair (I, J) -> element pair (i, j); true when i > j and i < N. */
template <int M, int PB, int TR>
__device__ __forceinline__ bool pair_element(const sim_map_launch &launch, uint32_t n_elems,
                                             uint32_t &i, uint32_t &j) {
    sim_tile2 t;
    if (!pair_tile<M, PB, TR>(launch, t)) {
        return false;
    }
    i = t.i * blockDim.y + threadIdx.y;
    j = t.j * blockDim.x + threadIdx.x;
    return i < n_elems && j < i;
}

/* 3-D: block -> tile triple (I, J, K) -> element triple, true when i > j > k and i < N. */
template <int M, int PB, int TR>
__device__ __forceinline__ bool triple_element(const sim_map_launch &launch, uint32_t n_elems,
                                               uint32_t &i, uint32_t &j, uint32_t &k) {
    sim_tile3 t;
    if (!triple_tile<M, PB, TR>(launch, t)) {
        return false;
    }
    i = t.i * blockDim.z + threadIdx.z;
    j = t.j * blockDim.y + threadIdx.y;
    k = t.k * blockDim.x + threadIdx.x;
    return i < n_elems && j < i && k < j;
}

/* Euclidean distance over the first F features (the papers' EDM with 1..4 features). Shared by
 * the timed kernels and the verifier so a correct run matches bit for bit. 3F FLOPs + sqrt. */
template <int F>
__device__ __forceinline__ float feature_distance(const float4 *__restrict__ a, uint32_t i,
                                                  uint32_t j) {
    const float4 p = __ldg(a + i), q = __ldg(a + j);
    float d = p.x - q.x, s = d * d;
    if (F > 1) {
        d = p.y - q.y;
        s = fmaf(d, d, s);
    }
    if (F > 2) {
        d = p.z - q.z;
        s = fmaf(d, d, s);
    }
    if (F > 3) {
        d = p.w - q.w;
        s = fmaf(d, d, s);
    }
    return sqrtf(s);
}

/* 3-D EDM analogue: the perimeter of the element triangle (i, j, k); three distances. */
template <int F>
__device__ __forceinline__ float feature_perimeter(const float4 *__restrict__ a, uint32_t i,
                                                   uint32_t j, uint32_t k) {
    return feature_distance<F>(a, i, j) + feature_distance<F>(a, j, k) +
           feature_distance<F>(a, i, k);
}

/* ---- timed kernels ------------------------------------------------------------------------
 * Launch contract (all): grid = one launch of a sim_map_plan (TR = 1: with x and y swapped),
 * block = rho x rho (x rho) threads, a thread owns one element pair/triple; threads outside the
 * simplex or past N return.
 * Costs per useful element: MAP 0 bytes; ACCUM 4 B read + 4 B written; EDM 4 B written (+ the
 * 16-byte feature loads, cached) and 3F+1 FLOPs (3-D: three distances). */

template <int M, int PB, int TR>
__global__ void pair_map_kernel(sim_map_launch launch, uint32_t n_elems, uint32_t *sink) {
    uint32_t i, j;
    /* i + j never wraps to 0xffffffff for valid coordinates (i, j < 65536), but the compiler
     * cannot know that, so it must compute both. */
    if (pair_element<M, PB, TR>(launch, n_elems, i, j) && i + j == 0xffffffffu) {
        *sink = i;
    }
}

template <int M, int PB, int TR>
__global__ void pair_accum_kernel(sim_map_launch launch, uint32_t n_elems, uint32_t *m) {
    uint32_t i, j;
    if (pair_element<M, PB, TR>(launch, n_elems, i, j)) {
        m[i * n_elems + j] += 1u;
    }
}

template <int M, int PB, int TR, int F>
__global__ void pair_edm_kernel(sim_map_launch launch, uint32_t n_elems,
                                const float4 *__restrict__ a, float *__restrict__ out) {
    uint32_t i, j;
    if (pair_element<M, PB, TR>(launch, n_elems, i, j)) {
        out[i * n_elems + j] = feature_distance<F>(a, i, j);
    }
}

template <int M, int PB, int TR>
__global__ void triple_map_kernel(sim_map_launch launch, uint32_t n_elems, uint32_t *sink) {
    uint32_t i, j, k;
    if (triple_element<M, PB, TR>(launch, n_elems, i, j, k) && i + j + k == 0xffffffffu) {
        *sink = i;
    }
}

template <int M, int PB, int TR>
__global__ void triple_accum_kernel(sim_map_launch launch, uint32_t n_elems, uint32_t *m) {
    uint32_t i, j, k;
    if (triple_element<M, PB, TR>(launch, n_elems, i, j, k)) {
        m[(i * n_elems + j) * n_elems + k] += 1u;
    }
}

template <int M, int PB, int TR, int F>
__global__ void triple_edm_kernel(sim_map_launch launch, uint32_t n_elems,
                                  const float4 *__restrict__ a, float *__restrict__ out) {
    uint32_t i, j, k;
    if (triple_element<M, PB, TR>(launch, n_elems, i, j, k)) {
        out[(i * n_elems + j) * n_elems + k] = feature_perimeter<F>(a, i, j, k);
    }
}

/* ---- verification and set-up kernels (grid-stride over the whole N^dim buffer) ----------- */

/* Counts elements whose value differs from what one exact execution leaves: ACCUM 1 inside the
 * simplex and 0 outside; EDM the distance inside and the 0xffffffff fill outside. */
template <int F>
__global__ void verify_kernel(int dim, sim_bench_kernel kernel, uint32_t n_elems, const uint32_t *m,
                              const float4 *__restrict__ a, unsigned long long *wrong) {
    const uint64_t total =
        dim == 2 ? (uint64_t)n_elems * n_elems : (uint64_t)n_elems * n_elems * n_elems;
    unsigned long long bad = 0;
    for (uint64_t e = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; e < total;
         e += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t i, j, k = 0;
        bool inside;
        if (dim == 2) {
            i = (uint32_t)(e / n_elems);
            j = (uint32_t)(e % n_elems);
            inside = j < i;
        } else {
            i = (uint32_t)(e / ((uint64_t)n_elems * n_elems));
            j = (uint32_t)((e / n_elems) % n_elems);
            k = (uint32_t)(e % n_elems);
            inside = k < j && j < i;
        }
        uint32_t want;
        if (kernel == SIM_BENCH_ACCUM) {
            want = inside ? 1u : 0u;
        } else if (!inside) {
            want = 0xffffffffu;
        } else {
            const float d =
                dim == 2 ? feature_distance<F>(a, i, j) : feature_perimeter<F>(a, i, j, k);
            want = __float_as_uint(d);
        }
        bad += m[e] != want;
    }
    if (bad != 0) {
        atomicAdd(wrong, bad);
    }
}

/* Deterministic features in [0, 1): a hash of the index, so runs are comparable. */
__global__ void fill_features_kernel(float4 *a, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t h = i * 2654435761u + 0x9e3779b9u;
        float v[4];
        for (int f = 0; f < 4; ++f) {
            h ^= h >> 15;
            h *= 0x2c1b3c6du;
            h ^= h >> 12;
            v[f] = (float)(h >> 8) * (1.0f / 16777216.0f);
        }
        a[i] = make_float4(v[0], v[1], v[2], v[3]);
    }
}

/* ---- the domain: buffers, streams, events -------------------------------------------------- */

#define BENCH_SIDE_STREAMS 4

struct sim_bench_domain {
    int dim;
    uint32_t n_elems;
    size_t matrix_bytes;
    uint32_t *d_matrix; /* N^dim counters (ACCUM) or float distances (EDM), or NULL */
    float4 *d_features; /* N x 4 floats */
    uint32_t *d_sink;   /* never written by a correct map */
    unsigned long long *d_wrong;
    cudaStream_t main;
    cudaStream_t side[BENCH_SIDE_STREAMS];
    cudaEvent_t fork, join[BENCH_SIDE_STREAMS];
    cudaEvent_t start[SIM_BENCH_MAX_SLOTS], stop[SIM_BENCH_MAX_SLOTS];
    int events_made;
};

void sim_bench_domain_destroy(sim_bench_domain *d) {
    if (d == NULL) {
        return;
    }
    if (d->main != NULL) {
        cudaStreamSynchronize(d->main);
    }
    for (int s = 0; s < d->events_made; ++s) {
        cudaEventDestroy(d->start[s]);
        cudaEventDestroy(d->stop[s]);
    }
    for (int s = 0; s < BENCH_SIDE_STREAMS; ++s) {
        if (d->side[s] != NULL)
            cudaStreamDestroy(d->side[s]);
        if (d->join[s] != NULL)
            cudaEventDestroy(d->join[s]);
    }
    if (d->fork != NULL)
        cudaEventDestroy(d->fork);
    if (d->main != NULL)
        cudaStreamDestroy(d->main);
    cudaFree(d->d_matrix);
    cudaFree(d->d_features);
    cudaFree(d->d_sink);
    cudaFree(d->d_wrong);
    delete d;
}

static sim_status domain_init(sim_bench_domain *d, sim_error *err) {
    SIM_CUDA_TRY(cudaStreamCreateWithFlags(&d->main, cudaStreamNonBlocking));
    for (int s = 0; s < BENCH_SIDE_STREAMS; ++s) {
        SIM_CUDA_TRY(cudaStreamCreateWithFlags(&d->side[s], cudaStreamNonBlocking));
        SIM_CUDA_TRY(cudaEventCreateWithFlags(&d->join[s], cudaEventDisableTiming));
    }
    SIM_CUDA_TRY(cudaEventCreateWithFlags(&d->fork, cudaEventDisableTiming));
    for (; d->events_made < SIM_BENCH_MAX_SLOTS; ++d->events_made) {
        const int s = d->events_made;
        SIM_CUDA_TRY(cudaEventCreate(&d->start[s]));
        if (cudaEventCreate(&d->stop[s]) != cudaSuccess) {
            cudaEventDestroy(d->start[s]);
            return sim_fail(err, SIM_CUDA, "cannot create timing events");
        }
    }
    if (d->matrix_bytes != 0) {
        const cudaError_t e = cudaMalloc(&d->d_matrix, d->matrix_bytes);
        if (e != cudaSuccess) {
            cudaGetLastError(); /* not sticky, but clear it so later checks start clean */
            return sim_fail(err, SIM_OUT_OF_MEMORY, "N = %u needs %.2f GiB on the GPU: %s",
                            d->n_elems, (double)d->matrix_bytes / (1u << 30),
                            cudaGetErrorString(e));
        }
    }
    SIM_CUDA_TRY(cudaMalloc(&d->d_features, (size_t)d->n_elems * sizeof(float4)));
    SIM_CUDA_TRY(cudaMalloc(&d->d_sink, sizeof(uint32_t)));
    SIM_CUDA_TRY(cudaMalloc(&d->d_wrong, sizeof(unsigned long long)));
    fill_features_kernel<<<(d->n_elems + 255) / 256, 256, 0, d->main>>>(d->d_features, d->n_elems);
    SIM_CUDA_CHECK_LAUNCH("fill_features_kernel");
    SIM_CUDA_TRY(cudaMemsetAsync(d->d_sink, 0, sizeof(uint32_t), d->main));
    SIM_CUDA_TRY(cudaStreamSynchronize(d->main));
    return SIM_OK;
}

sim_status sim_bench_domain_create(int dim, uint32_t n_elems, int with_matrix,
                                   sim_bench_domain **out, sim_error *err) {
    SIM_ASSERT(out != NULL);
    *out = NULL;
    const uint32_t max_n = dim == 2 ? SIM_BENCH_MAX_N_2D : SIM_BENCH_MAX_N_3D;
    if ((dim != 2 && dim != 3) || n_elems < 2 || n_elems > max_n) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "%d-D benchmark: N = %u must be in 2..%u", dim,
                        n_elems, max_n);
    }
    sim_bench_domain *d = new (std::nothrow) sim_bench_domain();
    if (d == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the benchmark domain");
    }
    d->dim = dim;
    d->n_elems = n_elems;
    const uint64_t count =
        dim == 2 ? (uint64_t)n_elems * n_elems : (uint64_t)n_elems * n_elems * n_elems;
    d->matrix_bytes = with_matrix ? (size_t)(count * sizeof(uint32_t)) : 0;
    const sim_status st = domain_init(d, err);
    if (st != SIM_OK) {
        sim_bench_domain_destroy(d);
        return st;
    }
    *out = d;
    return SIM_OK;
}

/* ---- dispatch: (dim, map, per_block, transposed, kernel, features) -> one template instance
 * ------------------------ */

typedef struct {
    dim3 grid, block;
    cudaStream_t stream;
    const sim_bench_domain *d;
} launch_ctx;

/* The kernels of one family (pair_ or triple_) for map M, evaluation mode PB, launch order TR. */
#define BENCH_LAUNCH_FAMILY(fn, family)                                                            \
    template <int M, int PB, int TR>                                                               \
    static void fn(const sim_bench_case *c, const sim_map_launch &l, const launch_ctx &x) {        \
        const uint32_t n = x.d->n_elems;                                                           \
        float *out = reinterpret_cast<float *>(x.d->d_matrix);                                     \
        const float4 *a = x.d->d_features;                                                         \
        if (c->kernel == SIM_BENCH_MAP) {                                                          \
            family##_map_kernel<M, PB, TR><<<x.grid, x.block, 0, x.stream>>>(l, n, x.d->d_sink);   \
        } else if (c->kernel == SIM_BENCH_ACCUM) {                                                 \
            family##_accum_kernel<M, PB, TR>                                                       \
                <<<x.grid, x.block, 0, x.stream>>>(l, n, x.d->d_matrix);                           \
        } else if (c->features == 1) {                                                             \
            family##_edm_kernel<M, PB, TR, 1><<<x.grid, x.block, 0, x.stream>>>(l, n, a, out);     \
        } else if (c->features == 2) {                                                             \
            family##_edm_kernel<M, PB, TR, 2><<<x.grid, x.block, 0, x.stream>>>(l, n, a, out);     \
        } else if (c->features == 3) {                                                             \
            family##_edm_kernel<M, PB, TR, 3><<<x.grid, x.block, 0, x.stream>>>(l, n, a, out);     \
        } else {                                                                                   \
            family##_edm_kernel<M, PB, TR, 4><<<x.grid, x.block, 0, x.stream>>>(l, n, a, out);     \
        }                                                                                          \
    }
BENCH_LAUNCH_FAMILY(launch_pair, pair)
BENCH_LAUNCH_FAMILY(launch_triple, triple)
#undef BENCH_LAUNCH_FAMILY

/* The three evaluation modes (per thread, per block, per thread transposed; check_case refuses
 * per block transposed) of map M of one family. */
#define BENCH_LAUNCH_MODES(fn, family_fn)                                                          \
    template <int M>                                                                               \
    static void fn(const sim_bench_case *c, const sim_map_launch &l, const launch_ctx &x) {        \
        if (c->transposed) {                                                                       \
            family_fn<M, 0, 1>(c, l, x);                                                           \
        } else if (c->per_block) {                                                                 \
            family_fn<M, 1, 0>(c, l, x);                                                           \
        } else {                                                                                   \
            family_fn<M, 0, 0>(c, l, x);                                                           \
        }                                                                                          \
    }
BENCH_LAUNCH_MODES(launch_pair_modes, launch_pair)
BENCH_LAUNCH_MODES(launch_triple_modes, launch_triple)
#undef BENCH_LAUNCH_MODES

static void launch_one(const sim_bench_case *c, const sim_map_launch &l, const launch_ctx &x) {
    if (c->dim == 2) {
        switch (c->map) {
#define BENCH_PAIR_CASE(id, name, label, paper)                                                    \
    case SIM_PAIR_MAP_##id:                                                                        \
        launch_pair_modes<SIM_PAIR_MAP_##id>(c, l, x);                                             \
        break;
            SIM_PAIR_MAP_LIST(BENCH_PAIR_CASE)
#undef BENCH_PAIR_CASE
        default:
            break;
        }
    } else {
        switch (c->map) {
#define BENCH_TRIPLE_CASE(id, name, label, paper)                                                  \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        launch_triple_modes<SIM_TRIPLET_MAP_##id>(c, l, x);                                        \
        break;
            SIM_TRIPLET_MAP_LIST(BENCH_TRIPLE_CASE)
#undef BENCH_TRIPLE_CASE
        default:
            break;
        }
    }
}

int sim_bench_can_transpose(const sim_map_plan *plan) {
    for (int l = 0; l < plan->launch_count; ++l) {
        if (plan->launch[l].grid[0] > 65535u) {
            return 0;
        }
    }
    return 1;
}

static sim_status check_case(const sim_bench_domain *d, const sim_bench_case *c,
                             const sim_map_plan *plan, sim_error *err) {
    const int maps = c->dim == 2 ? (int)SIM_PAIR_MAP_COUNT : (int)SIM_TRIPLET_MAP_COUNT;
    if (c->dim != d->dim || plan->dim != c->dim || plan->map != c->map || c->map < 0 ||
        c->map >= maps) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "benchmark case does not match its plan/domain");
    }
    const uint32_t threads = c->dim == 2 ? c->rho * c->rho : c->rho * c->rho * c->rho;
    if (c->rho < 1 || threads > 1024) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "rho = %u gives %u threads per block (max 1024)",
                        c->rho, threads);
    }
    if (plan->n != (d->n_elems + c->rho - 1) / c->rho) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "plan for %u tiles, domain needs %u", plan->n,
                        (d->n_elems + c->rho - 1) / c->rho);
    }
    if (c->kernel != SIM_BENCH_MAP && d->d_matrix == NULL) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "domain was created without its matrix");
    }
    if (c->transposed && (c->per_block || !sim_bench_can_transpose(plan))) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "map '%s' at %u tiles cannot run transposed (per block, or a grid x "
                        "extent above 65535)",
                        sim_map_name(c->dim, c->map), plan->n);
    }
    if (c->kernel == SIM_BENCH_EDM && (c->features < 1 || c->features > 4)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "EDM features %d must be 1..4", c->features);
    }
    return SIM_OK;
}

/* One execution of the plan: every launch, forked onto side streams when the plan allows. */
static sim_status run_plan(sim_bench_domain *d, const sim_bench_case *c, const sim_map_plan *plan,
                           sim_error *err) {
    const int fork = plan->concurrent && plan->launch_count > 1;
    if (fork) {
        SIM_CUDA_TRY(cudaEventRecord(d->fork, d->main));
        for (int s = 0; s < BENCH_SIDE_STREAMS; ++s) {
            SIM_CUDA_TRY(cudaStreamWaitEvent(d->side[s], d->fork, 0));
        }
    }
    launch_ctx x;
    x.d = d;
    x.block = c->dim == 2 ? dim3(c->rho, c->rho, 1) : dim3(c->rho, c->rho, c->rho);
    for (int l = 0; l < plan->launch_count; ++l) {
        const sim_map_launch &launch = plan->launch[l];
        if (launch.grid[0] == 0 || launch.grid[1] == 0 || launch.grid[2] == 0) {
            continue;
        }
        x.grid = c->transposed ? dim3(launch.grid[1], launch.grid[0], launch.grid[2])
                               : dim3(launch.grid[0], launch.grid[1], launch.grid[2]);
        x.stream = fork ? d->side[l % BENCH_SIDE_STREAMS] : d->main;
        launch_one(c, launch, x);
        SIM_CUDA_CHECK_LAUNCH("benchmark map kernel");
    }
    if (fork) {
        for (int s = 0; s < BENCH_SIDE_STREAMS; ++s) {
            SIM_CUDA_TRY(cudaEventRecord(d->join[s], d->side[s]));
            SIM_CUDA_TRY(cudaStreamWaitEvent(d->main, d->join[s], 0));
        }
    }
    return SIM_OK;
}

sim_status sim_bench_enqueue(sim_bench_domain *d, const sim_bench_case *c, const sim_map_plan *plan,
                             int inner, int slot, sim_error *err) {
    SIM_ASSERT(d != NULL && c != NULL && plan != NULL);
    if (slot < 0 || slot >= SIM_BENCH_MAX_SLOTS || inner < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "timing slot %d / inner %d out of range", slot,
                        inner);
    }
    SIM_TRY(check_case(d, c, plan, err));
    SIM_CUDA_TRY(cudaEventRecord(d->start[slot], d->main));
    for (int r = 0; r < inner; ++r) {
        SIM_TRY(run_plan(d, c, plan, err));
    }
    SIM_CUDA_TRY(cudaEventRecord(d->stop[slot], d->main));
    return SIM_OK;
}

sim_status sim_bench_collect(sim_bench_domain *d, int slot, int inner, double *ms, sim_error *err) {
    SIM_ASSERT(d != NULL && ms != NULL);
    if (slot < 0 || slot >= SIM_BENCH_MAX_SLOTS || inner < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "timing slot %d / inner %d out of range", slot,
                        inner);
    }
    float elapsed = 0.0f;
    SIM_CUDA_TRY(cudaEventSynchronize(d->stop[slot]));
    SIM_CUDA_TRY(cudaEventElapsedTime(&elapsed, d->start[slot], d->stop[slot]));
    *ms = (double)elapsed / inner;
    return SIM_OK;
}

sim_status sim_bench_verify(sim_bench_domain *d, const sim_bench_case *c, const sim_map_plan *plan,
                            uint64_t *wrong, sim_error *err) {
    SIM_ASSERT(d != NULL && c != NULL && plan != NULL && wrong != NULL);
    *wrong = 0;
    SIM_TRY(check_case(d, c, plan, err));
    if (c->kernel == SIM_BENCH_MAP) {
        return SIM_OK;
    }
    /* ACCUM starts from zero counters; EDM from all-ones bits so an unwritten element shows. */
    SIM_CUDA_TRY(cudaMemsetAsync(d->d_matrix, c->kernel == SIM_BENCH_ACCUM ? 0 : 0xff,
                                 d->matrix_bytes, d->main));
    SIM_CUDA_TRY(cudaMemsetAsync(d->d_wrong, 0, sizeof(unsigned long long), d->main));
    SIM_TRY(run_plan(d, c, plan, err));
    int sms = 0, device = 0;
    SIM_CUDA_TRY(cudaGetDevice(&device));
    SIM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const dim3 grid((unsigned)(sms > 0 ? sms * 8 : 256)), block(256);
    switch (c->kernel == SIM_BENCH_EDM ? c->features : 1) {
    case 1:
        verify_kernel<1><<<grid, block, 0, d->main>>>(d->dim, c->kernel, d->n_elems, d->d_matrix,
                                                      d->d_features, d->d_wrong);
        break;
    case 2:
        verify_kernel<2><<<grid, block, 0, d->main>>>(d->dim, c->kernel, d->n_elems, d->d_matrix,
                                                      d->d_features, d->d_wrong);
        break;
    case 3:
        verify_kernel<3><<<grid, block, 0, d->main>>>(d->dim, c->kernel, d->n_elems, d->d_matrix,
                                                      d->d_features, d->d_wrong);
        break;
    default:
        verify_kernel<4><<<grid, block, 0, d->main>>>(d->dim, c->kernel, d->n_elems, d->d_matrix,
                                                      d->d_features, d->d_wrong);
        break;
    }
    SIM_CUDA_CHECK_LAUNCH("verify_kernel");
    unsigned long long h_wrong = 0;
    SIM_CUDA_TRY(
        cudaMemcpyAsync(&h_wrong, d->d_wrong, sizeof h_wrong, cudaMemcpyDeviceToHost, d->main));
    SIM_CUDA_TRY(cudaStreamSynchronize(d->main));
    *wrong = h_wrong;
    return SIM_OK;
}
