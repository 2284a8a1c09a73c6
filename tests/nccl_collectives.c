/* SPDX-License-Identifier: MIT
 * nbsim — measures, on the GPUs of this machine, the two ways the issue allows to sum a step's
 * forces over GPUs (bench/README.md, "Several GPUs"):
 *   all-reduce       ncclAllReduce of the forces, 16 B per body (what nbsim does), and 12 B per
 *                    body (the force packed without its padding lane);
 *   scatter+gather   ncclReduceScatter of the forces (16 B per body), each GPU integrating its
 *                    slice, then ncclAllGather of positions and velocities (32 B per body), which
 *                    the next step's contact forces need for every body.
 * One process, one communicator per GPU (ncclCommInitAll), NVLink multicast off. Each
 * collective runs on every GPU's stream inside one NCCL group; CUDA events on each stream, the
 * slowest GPU's time; 5 warm-ups, the median of 30.
 * Usage: nccl_collectives [GPUS [N ...]]   (default: every GPU, N = 1,048,576 and 4,194,304)
 * Prints a table and exits 0; exits 77 with one line with fewer than two GPUs. */
#include "multi/comm.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_GPUS = 8, WARMUP = 5, REPEATS = 30 };

#define CHECK(ok, what)                                                                            \
    do {                                                                                           \
        if (!(ok)) {                                                                               \
            fprintf(stderr, "nccl_collectives: %s failed (%s:%d)\n", what, __FILE__, __LINE__);   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CUDA(call) CHECK((call) == cudaSuccess, #call)
#define NCCL(call) CHECK((call) == ncclSuccess, #call)

typedef enum { ALL_REDUCE_16, ALL_REDUCE_12, SCATTER_GATHER, WAY_COUNT } way;
static const char *const k_way_names[WAY_COUNT] = {"all-reduce 16 B", "all-reduce 12 B",
                                                   "reduce-scatter 16 B + all-gather 32 B"};

typedef struct {
    int gpus;
    ncclComm_t comm[MAX_GPUS];
    cudaStream_t stream[MAX_GPUS];
    cudaEvent_t start[MAX_GPUS], stop[MAX_GPUS];
    float *force[MAX_GPUS]; /* 4 floats per body, summed in place */
    float *state[MAX_GPUS]; /* 8 floats per body: position and velocity, gathered */
} rig;

/* One collective of the way on every GPU. Every slice is n / gpus bodies (n a multiple). */
static void launch(rig *r, way w, size_t n) {
    const size_t slice = n / (size_t)r->gpus;
    NCCL(ncclGroupStart());
    for (int g = 0; g < r->gpus; ++g) {
        if (w == SCATTER_GATHER) {
            NCCL(ncclReduceScatter(r->force[g], r->force[g] + 4 * slice * (size_t)g, 4 * slice,
                                   ncclFloat, ncclSum, r->comm[g], r->stream[g]));
        } else {
            NCCL(ncclAllReduce(r->force[g], r->force[g], (w == ALL_REDUCE_16 ? 4 : 3) * n,
                               ncclFloat, ncclSum, r->comm[g], r->stream[g]));
        }
    }
    NCCL(ncclGroupEnd());
    if (w == SCATTER_GATHER) {
        NCCL(ncclGroupStart());
        for (int g = 0; g < r->gpus; ++g) {
            NCCL(ncclAllGather(r->state[g] + 8 * slice * (size_t)g, r->state[g], 8 * slice,
                               ncclFloat, r->comm[g], r->stream[g]));
        }
        NCCL(ncclGroupEnd());
    }
}

static int by_value(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median over REPEATS of the slowest GPU's milliseconds. */
static float time_way(rig *r, way w, size_t n) {
    float ms[REPEATS];
    for (int k = -WARMUP; k < REPEATS; ++k) {
        for (int g = 0; g < r->gpus; ++g) {
            CUDA(cudaSetDevice(g));
            CUDA(cudaEventRecord(r->start[g], r->stream[g]));
        }
        launch(r, w, n);
        float slowest = 0.0f;
        for (int g = 0; g < r->gpus; ++g) {
            CUDA(cudaSetDevice(g));
            CUDA(cudaEventRecord(r->stop[g], r->stream[g]));
            CUDA(cudaEventSynchronize(r->stop[g]));
            float t = 0.0f;
            CUDA(cudaEventElapsedTime(&t, r->start[g], r->stop[g]));
            slowest = t > slowest ? t : slowest;
        }
        if (k >= 0) {
            ms[k] = slowest;
        }
    }
    qsort(ms, REPEATS, sizeof ms[0], by_value);
    return ms[REPEATS / 2];
}

int main(int argc, char **argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) {
        printf("nccl_collectives: %d GPU(s) visible; two or more are needed: skipped\n",
               devices);
        return 77;
    }
    rig r = {.gpus = argc > 1 ? atoi(argv[1]) : devices};
    if (r.gpus < 2 || r.gpus > devices || r.gpus > MAX_GPUS) {
        fprintf(stderr, "nccl_collectives: GPUS must be 2..%d here\n",
                devices < MAX_GPUS ? devices : MAX_GPUS);
        return 2;
    }
    size_t sizes[16] = {1048576, 4194304};
    int n_sizes = 2;
    if (argc > 2) {
        n_sizes = 0;
        for (int a = 2; a < argc && n_sizes < 16; ++a) {
            const long v = atol(argv[a]);
            if (v < r.gpus) {
                fprintf(stderr, "nccl_collectives: N must be at least GPUS (got %s)\n", argv[a]);
                return 2;
            }
            sizes[n_sizes++] = (size_t)v / (size_t)r.gpus * (size_t)r.gpus;
        }
    }
    size_t most = 0;
    for (int i = 0; i < n_sizes; ++i) {
        most = sizes[i] > most ? sizes[i] : most;
    }
    sim_multi_nccl_env();
    int list[MAX_GPUS];
    for (int g = 0; g < r.gpus; ++g) {
        list[g] = g;
    }
    NCCL(ncclCommInitAll(r.comm, r.gpus, list));
    for (int g = 0; g < r.gpus; ++g) {
        CUDA(cudaSetDevice(g));
        CUDA(cudaStreamCreateWithFlags(&r.stream[g], cudaStreamNonBlocking));
        CUDA(cudaEventCreate(&r.start[g]));
        CUDA(cudaEventCreate(&r.stop[g]));
        CUDA(cudaMalloc((void **)&r.force[g], 16 * most));
        CUDA(cudaMalloc((void **)&r.state[g], 32 * most));
        CUDA(cudaMemset(r.force[g], 0, 16 * most));
        CUDA(cudaMemset(r.state[g], 0, 32 * most));
    }
    int version = 0;
    NCCL(ncclGetVersion(&version));
    printf("%d GPUs, NCCL %d (header %d); median of %d after %d warm-ups, the slowest GPU, CUDA events\n",
           r.gpus, version, NCCL_VERSION_CODE, REPEATS, WARMUP);
    printf("%10s  %-40s %10s %12s\n", "N", "collective", "ms", "GB/s (bus)");
    for (int i = 0; i < n_sizes; ++i) {
        for (int w = 0; w < WAY_COUNT; ++w) {
            const float ms = time_way(&r, (way)w, sizes[i]);
            /* NCCL's bus bandwidth: all-reduce moves 2(G-1)/G of the buffer, the others (G-1)/G */
            const double f = (double)(r.gpus - 1) / r.gpus;
            const double bytes = w == ALL_REDUCE_16   ? 2.0 * f * 16.0 * (double)sizes[i]
                                 : w == ALL_REDUCE_12 ? 2.0 * f * 12.0 * (double)sizes[i]
                                                      : f * 48.0 * (double)sizes[i];
            printf("%10zu  %-40s %10.4f %12.1f\n", sizes[i], k_way_names[w], ms,
                   ms > 0 ? bytes / (ms * 1e6) : 0.0);
        }
    }
    for (int g = 0; g < r.gpus; ++g) {
        CUDA(cudaSetDevice(g));
        CUDA(cudaFree(r.force[g]));
        CUDA(cudaFree(r.state[g]));
        CUDA(cudaEventDestroy(r.start[g]));
        CUDA(cudaEventDestroy(r.stop[g]));
        CUDA(cudaStreamDestroy(r.stream[g]));
        NCCL(ncclCommDestroy(r.comm[g]));
    }
    return 0;
}
