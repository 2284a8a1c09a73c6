/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: small device helpers shared by the kernels, and the loop
 * that runs every launch of a map plan (in order, or forked over side streams). */
#ifndef SIM_DEVICE_UTIL_CUH
#define SIM_DEVICE_UTIL_CUH

#include "nbsim/cuda_check.h"
#include "gpu/device_state.h"
#include "nbsim/maps.h"
#include "multi/work_split.h"

#define SIM_FULL_MASK 0xffffffffu

/* Bodies past N in a partial last tile sit at NaN with radius 0: a padded body touches nothing,
 * whatever the box. Every distance to it is NaN, and every test that decides a pair (sim_touch_f's
 * strict `<`, the ATM pair's range check, the lists' box tests) is false for NaN, so the inner
 * loops need no bounds check. Not a far-away coordinate: the minimum image of a periodic box
 * folds any finite coordinate back into the box (1e18 came back at distance 0 from every body:
 * each pad then touched every body, reported as contacts and, with friction, read past N). */
#define SIM_PAD_COORD __int_as_float(0x7fc00000)

/* 16-byte read-only load (LDG.E.128 through the non-coherent path). */
static __device__ __forceinline__ sim_vec4f sim_ld4(const sim_vec4f *p) {
    const float4 v = __ldg(reinterpret_cast<const float4 *>(p));
    sim_vec4f r;
    r.x = v.x;
    r.y = v.y;
    r.z = v.z;
    r.w = v.w;
    return r;
}

static __device__ __forceinline__ sim_vec4f sim_pad_body(void) {
    sim_vec4f r;
    r.x = SIM_PAD_COORD;
    r.y = SIM_PAD_COORD;
    r.z = SIM_PAD_COORD;
    r.w = 0.0f;
    return r;
}

/* One global atomic per body: a single 16-byte vector atomic on Hopper, three scalar ones on
 * older chips. Skipped when the contribution is exactly zero (most far-apart tile pairs). */
static __device__ __forceinline__ void sim_atomic_add3(sim_vec4f *dst, float x, float y, float z) {
    if (x == 0.0f && y == 0.0f && z == 0.0f) {
        return;
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float4 *>(dst), make_float4(x, y, z, 0.0f));
#else
    atomicAdd(&dst->x, x);
    atomicAdd(&dst->y, y);
    atomicAdd(&dst->z, z);
#endif
}

/* The sum and the maximum of v over the warp, in every lane (all 32 lanes must call them). */
static __device__ __forceinline__ uint32_t sim_warp_sum_u32(uint32_t v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(SIM_FULL_MASK, v, o);
    }
    return v;
}

static __device__ __forceinline__ uint32_t sim_warp_max_u32(uint32_t v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const uint32_t w = __shfl_xor_sync(SIM_FULL_MASK, v, o);
        v = w > v ? w : v;
    }
    return v;
}

/* The start of a kernel launched as a programmatic dependent of the one before it in the stream
 * (cudaLaunchAttributeProgrammaticStreamSerialization, compute capability 9.0 on): it first lets
 * its own dependent launch (whose blocks take an SM as this kernel's leave, then wait here), then
 * waits for the kernel before it to complete with its memory visible. A chain of short kernels
 * (the cell grid's five) then overlaps each launch with the tail of the kernel before it. Every
 * thread calls it before reading anything an earlier kernel wrote; a no-op below 9.0, in a normal
 * launch, and in the CPU emulation. */
static __device__ __forceinline__ void sim_chain_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
#endif
}

/* Sets *flag to 1 when v holds in any thread of the block (every thread must call it): one store
 * per block. A store per warp that saw it (the first form) made the lists' drift of the falling
 * `lattice`, where every body moves, 8,192 stores to one address per step at 262,144 bodies, and
 * the drift twice as long as its bytes (ncu: bench/results/nvidia-h100/ncu_lattice_kernels.txt). */
static __device__ __forceinline__ void sim_block_raise(bool v, uint32_t *flag) {
    if (__syncthreads_or(v) && threadIdx.x == 0) {
        *flag = 1u;
    }
}

/* Sums v over the block (all THREADS threads must call it) and adds the sum to *dst with one
 * double atomic. Used only by the energy passes, which are not timed. */
template <int THREADS>
static __device__ __forceinline__ void sim_block_sum_add(double v, double *dst) {
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    __shared__ double sh_sum[THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(SIM_FULL_MASK, v, o);
    }
    if ((threadIdx.x & 31) == 0) {
        sh_sum[threadIdx.x >> 5] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int w = 0; w < THREADS / 32; ++w) {
            s += sh_sum[w];
        }
        if (s != 0.0) {
            atomicAdd(dst, s);
        }
    }
}

/* Runs launch_one(&plan->launch[l], stream, err) for every launch of the plan. Concurrent plans
 * fork onto the side streams and join back into st->main before returning (no host sync). */
template <typename LaunchOne>
static sim_status sim_gpu_run_plan(const sim_map_plan *plan, const sim_gpu_streams *st,
                                   LaunchOne launch_one, sim_error *err) {
    const bool fork = plan->concurrent && plan->launch_count > 1;
    const int sides =
        plan->launch_count < SIM_GPU_SIDE_STREAMS ? plan->launch_count : SIM_GPU_SIDE_STREAMS;
    if (fork) {
        SIM_CUDA_TRY(cudaEventRecord(st->fork, st->main));
        for (int k = 0; k < sides; ++k) {
            SIM_CUDA_TRY(cudaStreamWaitEvent(st->side[k], st->fork, 0));
        }
    }
    for (int l = 0; l < plan->launch_count; ++l) {
        const sim_map_launch *launch = &plan->launch[l];
        if (launch->grid[0] == 0 || launch->grid[1] == 0 || launch->grid[2] == 0) {
            continue;
        }
        cudaStream_t s = fork ? st->side[l % SIM_GPU_SIDE_STREAMS] : st->main;
        SIM_TRY(launch_one(launch, s, err));
    }
    if (fork) {
        for (int k = 0; k < sides; ++k) {
            SIM_CUDA_TRY(cudaEventRecord(st->join[k], st->side[k]));
            SIM_CUDA_TRY(cudaStreamWaitEvent(st->main, st->join[k], 0));
        }
    }
    return SIM_OK;
}

/* Runs launch_one(&plan->launch[piece.launch], grid, origin, stream, err) for every piece of a
 * rank's share of the plan (work_split.h; alone: one piece per launch, origin 0, the launch's
 * grid). The kernel adds origin to blockIdx, so each block maps to the tile it has in the whole
 * launch. Pieces of a concurrent plan fork onto the side streams as run_plan's launches do;
 * those of an ordered plan run in order on st->main. */
template <typename LaunchOne>
static sim_status sim_gpu_run_share(const sim_map_plan *plan, const sim_map_share *share,
                                    const sim_gpu_streams *st, LaunchOne launch_one,
                                    sim_error *err) {
    const bool fork = plan->concurrent && share->piece_count > 1;
    const int sides =
        share->piece_count < SIM_GPU_SIDE_STREAMS ? share->piece_count : SIM_GPU_SIDE_STREAMS;
    if (fork) {
        SIM_CUDA_TRY(cudaEventRecord(st->fork, st->main));
        for (int k = 0; k < sides; ++k) {
            SIM_CUDA_TRY(cudaStreamWaitEvent(st->side[k], st->fork, 0));
        }
    }
    for (int p = 0; p < share->piece_count; ++p) {
        const sim_map_piece *pc = &share->piece[p];
        if (pc->grid[0] == 0 || pc->grid[1] == 0 || pc->grid[2] == 0) {
            continue;
        }
        cudaStream_t s = fork ? st->side[p % SIM_GPU_SIDE_STREAMS] : st->main;
        const dim3 grid(pc->grid[0], pc->grid[1], pc->grid[2]);
        const uint3 origin = make_uint3(pc->origin[0], pc->origin[1], pc->origin[2]);
        SIM_TRY(launch_one(&plan->launch[pc->launch], grid, origin, s, err));
    }
    if (fork) {
        for (int k = 0; k < sides; ++k) {
            SIM_CUDA_TRY(cudaEventRecord(st->join[k], st->side[k]));
            SIM_CUDA_TRY(cudaStreamWaitEvent(st->main, st->join[k], 0));
        }
    }
    return SIM_OK;
}

#endif /* SIM_DEVICE_UTIL_CUH */
