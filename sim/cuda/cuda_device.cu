/* SPDX-License-Identifier: MIT
 * nbsim — what CUDA devices there are: the count the program decides its backend by, and the
 * description the benchmarks and the autotuner's cache key need; and the backend's allocations
 * that name what failed (cuda_backend_impl.h). */
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>

#include "step/backend_impl.h"
#include "cuda/cuda_backend_impl.h"
#include "nbsim/cuda_check.h"

int sim_cuda_device_count(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear it: no device is not an error here */
        return 0;
    }
    return count;
}

/* FP32 lanes per SM by architecture (the issue ceiling's width). */
static int fp32_lanes(int major, int minor) {
    if (major == 9 || major >= 10)
        return 128; /* Hopper, Blackwell */
    if (major == 8)
        return minor == 0 ? 64 : 128; /* 8.0 (GA100): 64; GA10x, Ada: 128 */
    if (major == 7)
        return 64; /* Volta, Turing */
    if (major == 6)
        return minor == 0 ? 64 : 128; /* 6.0 (GP100): 64; GP10x: 128 */
    if (major == 5)
        return 128; /* Maxwell */
    return 0;
}

sim_status sim_cuda_device_query(sim_device_info *dev, sim_error *err) {
    SIM_ASSERT(dev != NULL);
    memset(dev, 0, sizeof *dev);
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        cudaGetLastError();
        return sim_fail(err, SIM_NO_DEVICE, "no CUDA device found");
    }
    SIM_CUDA_TRY(cudaGetDevice(&dev->device));
    cudaDeviceProp p;
    SIM_CUDA_TRY(cudaGetDeviceProperties(&p, dev->device));
    snprintf(dev->name, sizeof dev->name, "%s", p.name);
    dev->cc_major = p.major;
    dev->cc_minor = p.minor;
    dev->sm_count = p.multiProcessorCount;
    dev->fp32_lanes_per_sm = fp32_lanes(p.major, p.minor);
    dev->l2_bytes = p.l2CacheSize;
    dev->global_mem_bytes = (uint64_t)p.totalGlobalMem;
    SIM_CUDA_TRY(cudaDeviceGetAttribute(&dev->clock_khz, cudaDevAttrClockRate, dev->device));
    SIM_CUDA_TRY(
        cudaDeviceGetAttribute(&dev->mem_clock_khz, cudaDevAttrMemoryClockRate, dev->device));
    SIM_CUDA_TRY(
        cudaDeviceGetAttribute(&dev->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, dev->device));
    size_t free_b = 0, total_b = 0;
    SIM_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    dev->free_mem_bytes = (uint64_t)free_b;
    SIM_CUDA_TRY(cudaDriverGetVersion(&dev->driver_version));
    SIM_CUDA_TRY(cudaRuntimeGetVersion(&dev->runtime_version));
    return SIM_OK;
}

sim_status sim_cuda_use_device(int device, sim_error *err) {
    SIM_CUDA_TRY(cudaSetDevice(device));
    return SIM_OK;
}

sim_status sim_cuda_alloc(void **p, size_t bytes, const char *what, uint32_t n, sim_error *err) {
    const cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu bytes of GPU memory for %s", n,
                        (unsigned long long)bytes, what);
    }
    SIM_CUDA_TRY(e);
    return SIM_OK;
}
