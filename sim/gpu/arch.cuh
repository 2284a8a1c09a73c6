/* SPDX-License-Identifier: MIT
 * nbsim — private to the GPU code: what one SM of the architecture being compiled holds, and the
 * minimum resident blocks a kernel's launch bounds may ask for there.
 *
 * Why: __launch_bounds__(threads, blocks) asks ptxas to fit `blocks` blocks of `threads` on one
 * SM (it caps registers to do so). A count the SM cannot hold is out of range: ptxas warns and
 * ignores it ("Value of threads per SM ... is out of range"), and a build with warnings as errors
 * stops. Data-centre chips (compute capability 8.0, 9.0, 10.x) hold 2,048 threads and 32 blocks an
 * SM; desktop Ampere, Ada and Blackwell (8.6, 8.9, 12.x: the RTX 30, 40 and 50 series) hold 1,536
 * threads and 16 (8.6, 8.7) or 24 (8.9) blocks. So every kernel asks through sim_min_blocks(),
 * which keeps the tuned count where it fits and lowers it where the SM is smaller. Chips this list
 * does not name get the smaller figures: a lower count only loosens the register cap.
 *
 * Compiles as CUDA (each device pass sees its __CUDA_ARCH__; the host pass sees the largest SM)
 * and as host C++ (the kernels' CPU emulation in tests/, where launch bounds are dropped). */
#ifndef SIM_GPU_ARCH_CUH
#define SIM_GPU_ARCH_CUH

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 ||                    \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
constexpr int kSimSmThreads = 2048; /* resident threads an SM holds */
#else
constexpr int kSimSmThreads = 1536;
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 ||                    \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
constexpr int kSimSmBlocks = 32; /* resident blocks an SM holds */
#elif __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200
constexpr int kSimSmBlocks = 24;
#else
constexpr int kSimSmBlocks = 16;
#endif

/* Blocks of `threads` threads one SM holds here (at least 1). */
constexpr int sim_sm_fit(int threads) {
    const int by_threads = kSimSmThreads / threads;
    const int fit = by_threads < kSimSmBlocks ? by_threads : kSimSmBlocks;
    return fit > 0 ? fit : 1;
}

/* The minimum resident blocks of `threads` threads for __launch_bounds__: `want` where the SM
 * holds that many, else as many as it holds. */
constexpr int sim_min_blocks(int threads, int want) {
    return want < sim_sm_fit(threads) ? want : sim_sm_fit(threads);
}

/* Host side: blocks of `threads` a persistent grid puts on each SM of a device that holds
 * sm_threads threads an SM (cudaDevAttrMaxThreadsPerMultiProcessor), at most `want`. */
static inline int sim_grid_blocks_per_sm(int threads, int want, int sm_threads) {
    const int fit = sm_threads > 0 ? sm_threads / threads : want;
    return fit < 1 ? 1 : fit < want ? fit : want;
}

#endif
