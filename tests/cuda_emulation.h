/* SPDX-License-Identifier: MIT
 * nbsim — a CPU emulation of the few CUDA features the triplet kernel uses, so a CPU test can
 * run sim/cuda/triplet_kernels.cu's kernel from its own source (test_triplet_kernel_emu.cc). The
 * threads of one block are fibers (ucontext) on one host thread. __syncthreads, __syncwarp and
 * the warp collectives (__shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync,
 * __any_sync, __ballot_sync) and __syncthreads_or are barriers, and at each
 * one the scheduler resumes a runnable fiber chosen at random: a missing barrier or a wrong
 * shuffle gives wrong forces, as it would on a GPU. __shared__ variables become function-local
 * statics (one block runs at a time); atomics are plain adds (one host thread).
 *
 * Include after <cuda_runtime.h> (whose host headers give float2, float4, uint3, dim3) and
 * before the kernel's source. C++17. */
#ifndef NBSIM_CUDA_EMULATION_H
#define NBSIM_CUDA_EMULATION_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __forceinline__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __shared__
#define __shared__ static

namespace emu {

constexpr int kMaxThreads = 512;
constexpr int kWarps = kMaxThreads / 32;
constexpr size_t kStackBytes = 64 * 1024;

struct fiber {
    ucontext_t ctx;
    bool done;
    int waiting;  /* 0: runnable, 1: at a warp barrier, 2: at the block barrier */
    unsigned gen; /* the barrier generation it waits to see pass */
};

struct block_state {
    fiber fib[kMaxThreads];
    ucontext_t scheduler;
    int current, threads;
    int warp_arrived[kWarps], warp_live[kWarps], block_arrived, block_live;
    unsigned warp_gen[kWarps], block_gen;
    uint64_t xbuf[kWarps][32]; /* the lanes' values (warp_exchange) and votes (warp_ballot) */
    int bbuf[kMaxThreads]; /* __syncthreads_or's predicates */
    uint64_t rng;
    void (*body)(void *);
    void *arg;
};

inline block_state g;
inline uint3 thread_idx, block_idx;
inline dim3 grid_dim, block_dim;
inline char stacks[kMaxThreads][kStackBytes];

inline uint32_t next_random() { /* xorshift64 */
    g.rng ^= g.rng << 13;
    g.rng ^= g.rng >> 7;
    g.rng ^= g.rng << 17;
    return (uint32_t)g.rng;
}

inline void wait(int kind, unsigned gen) {
    fiber &f = g.fib[g.current];
    f.waiting = kind;
    f.gen = gen;
    swapcontext(&f.ctx, &g.scheduler);
}

/* Arrival at a barrier of `arrived` out of `live` threads: the last one opens it. */
inline unsigned arrive(int *arrived, int live, unsigned *gen) {
    const unsigned mine = *gen;
    if (++*arrived == live) {
        *arrived = 0;
        ++*gen;
    }
    return mine;
}

inline void sync_warp() {
    const int w = g.current / 32;
    wait(1, arrive(&g.warp_arrived[w], g.warp_live[w], &g.warp_gen[w]));
}

inline void sync_block() {
    wait(2, arrive(&g.block_arrived, g.block_live, &g.block_gen));
}

inline void fiber_main() {
    g.body(g.arg);
    const int w = g.current / 32;
    g.fib[g.current].done = true;
    --g.warp_live[w];
    --g.block_live;
    /* Threads that returned no longer count: a barrier the others wait at may now be complete. */
    if (g.warp_arrived[w] > 0 && g.warp_arrived[w] == g.warp_live[w]) {
        g.warp_arrived[w] = 0;
        ++g.warp_gen[w];
    }
    if (g.block_arrived > 0 && g.block_arrived == g.block_live) {
        g.block_arrived = 0;
        ++g.block_gen;
    }
}

/* Runs body(arg) as block `block` of `grid` with `dims` threads (x fastest; x * y * z a multiple
 * of 32, <= 512). Returns false on a deadlock (threads waiting at a barrier that can never
 * open). */
inline bool run_block(uint3 block, dim3 grid, dim3 dims, void (*body)(void *), void *arg,
                      uint64_t seed) {
    const int threads = (int)(dims.x * dims.y * dims.z);
    block_dim = dims;
    g.threads = threads;
    g.body = body;
    g.arg = arg;
    g.rng = seed | 1u;
    g.block_live = threads;
    g.block_arrived = 0;
    for (int w = 0; w < kWarps; ++w) {
        g.warp_live[w] = w * 32 < threads ? 32 : 0;
        g.warp_arrived[w] = 0;
    }
    block_idx = block;
    grid_dim = grid;
    for (int t = 0; t < threads; ++t) {
        fiber &f = g.fib[t];
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = stacks[t];
        f.ctx.uc_stack.ss_size = kStackBytes;
        f.ctx.uc_link = &g.scheduler;
        makecontext(&f.ctx, fiber_main, 0);
        f.done = false;
        f.waiting = 0;
    }
    int runnable[kMaxThreads];
    for (;;) {
        int count = 0, alive = 0;
        for (int t = 0; t < threads; ++t) {
            const fiber &f = g.fib[t];
            if (f.done) {
                continue;
            }
            ++alive;
            if (f.waiting == 0 || (f.waiting == 1 && g.warp_gen[t / 32] != f.gen) ||
                (f.waiting == 2 && g.block_gen != f.gen)) {
                runnable[count++] = t;
            }
        }
        if (alive == 0) {
            return true;
        }
        if (count == 0) {
            return false;
        }
        const int t = runnable[next_random() % (uint32_t)count];
        g.current = t;
        g.fib[t].waiting = 0;
        thread_idx = make_uint3((unsigned)t % dims.x, (unsigned)t / dims.x % dims.y,
                                (unsigned)t / (dims.x * dims.y));
        swapcontext(&g.scheduler, &g.fib[t].ctx);
    }
}

/* The same for a 1-D block of `threads` threads. */
inline bool run_block(uint3 block, dim3 grid, int threads, void (*body)(void *), void *arg,
                      uint64_t seed) {
    return run_block(block, grid, dim3((unsigned)threads), body, arg, seed);
}

/* What every shuffle is: each lane of the warp publishes v, then reads lane src's (src outside
 * 0..31: its own v); a barrier on each side, as a shuffle is one. */
template <class T> inline T warp_exchange(T v, int src) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "a shuffle moves at most 8 bytes");
    const int w = g.current / 32, l = g.current % 32;
    memcpy(&g.xbuf[w][l], &v, sizeof v);
    sync_warp();
    T r = v;
    if (src >= 0 && src < 32) {
        memcpy(&r, &g.xbuf[w][src], sizeof r);
    }
    sync_warp();
    return r;
}

/* The warp's predicates as bits (lane i: bit i), every lane's answer: __ballot_sync, __any_sync. */
inline unsigned warp_ballot(int predicate) {
    const int w = g.current / 32, l = g.current % 32;
    g.xbuf[w][l] = predicate != 0;
    sync_warp();
    unsigned bits = 0;
    for (int i = 0; i < 32; ++i) {
        bits |= g.xbuf[w][i] ? 1u << i : 0u;
    }
    sync_warp();
    return bits;
}

inline int lane() {
    return g.current % 32;
}

} // namespace emu

#define threadIdx emu::thread_idx
#define blockIdx emu::block_idx
#define gridDim emu::grid_dim
#define blockDim emu::block_dim

inline void __syncthreads() {
    emu::sync_block();
}
inline void __syncwarp(unsigned = 0xffffffffu) {
    emu::sync_warp();
}
inline float __shfl_sync(unsigned, float v, int src, int = 32) {
    return emu::warp_exchange(v, src & 31);
}
inline unsigned __shfl_sync(unsigned, unsigned v, int src, int = 32) {
    return emu::warp_exchange(v, src & 31);
}
inline double __shfl_down_sync(unsigned, double v, unsigned delta, int = 32) {
    const int src = emu::lane() + (int)delta;
    return emu::warp_exchange(v, src < 32 ? src : -1);
}
inline unsigned __shfl_up_sync(unsigned, unsigned v, unsigned delta, int = 32) {
    return emu::warp_exchange(v, emu::lane() - (int)delta);
}
inline float __shfl_xor_sync(unsigned, float v, int lane_mask, int = 32) {
    return emu::warp_exchange(v, (emu::lane() ^ lane_mask) & 31);
}
inline unsigned __shfl_xor_sync(unsigned, unsigned v, int lane_mask, int = 32) {
    return emu::warp_exchange(v, (emu::lane() ^ lane_mask) & 31);
}
inline bool __any_sync(unsigned, int predicate) {
    return emu::warp_ballot(predicate) != 0u;
}
inline unsigned __ballot_sync(unsigned, int predicate) {
    return emu::warp_ballot(predicate);
}
inline int __syncthreads_or(int predicate) {
    emu::g.bbuf[emu::g.current] = predicate != 0;
    emu::sync_block();
    int any = 0;
    for (int i = 0; i < emu::g.threads; ++i) {
        any |= emu::g.bbuf[i];
    }
    emu::sync_block();
    return any;
}
inline int __popc(unsigned v) {
    return __builtin_popcount(v);
}
inline int __ffs(int v) {
    return __builtin_ffs(v);
}
inline float __int_as_float(int v) {
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    const unsigned old = *p;
    *p += v;
    return old;
}
inline unsigned atomicSub(unsigned *p, unsigned v) {
    const unsigned old = *p;
    *p -= v;
    return old;
}
inline unsigned atomicMax(unsigned *p, unsigned v) {
    const unsigned old = *p;
    *p = old > v ? old : v;
    return old;
}
inline unsigned atomicMin(unsigned *p, unsigned v) {
    const unsigned old = *p;
    *p = old < v ? old : v;
    return old;
}
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
    const unsigned long long old = *p;
    *p = old < v ? old : v;
    return old;
}
inline float4 __ldg(const float4 *p) {
    return *p;
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    const unsigned long long old = *p;
    *p += v;
    return old;
}
inline float atomicAdd(float *p, float v) {
    const float old = *p;
    *p += v;
    return old;
}
inline double atomicAdd(double *p, double v) {
    const double old = *p;
    *p += v;
    return old;
}
inline uint32_t min(uint32_t a, uint32_t b) {
    return a < b ? a : b;
}

#endif /* NBSIM_CUDA_EMULATION_H */
