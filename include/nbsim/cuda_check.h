/* SPDX-License-Identifier: MIT
 * nbsim — CUDA errors as sim_error values (no exit()): for the library's CUDA code and for
 * programs with CUDA code of their own (the kernels of `nbsim bench`). */
#ifndef SIM_CUDA_CHECK_H
#define SIM_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "nbsim/base.h"

/* SIM_CUDA_TRY(expr): evaluates a CUDA runtime call; on failure records file, line, the call
 * text and cudaGetErrorString in `err` (a sim_error * that must be in scope, may be NULL) and
 * returns SIM_CUDA from the enclosing function. Resources are owned by the backend struct and
 * freed by its destroy, so an early return leaks nothing. */
#define SIM_CUDA_TRY(expr)                                                                         \
    do {                                                                                           \
        cudaError_t sim_cuda_e_ = (expr);                                                          \
        if (sim_cuda_e_ != cudaSuccess) {                                                          \
            return sim_fail(err, SIM_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #expr,             \
                            cudaGetErrorString(sim_cuda_e_));                                      \
        }                                                                                          \
    } while (0)

/* After every kernel launch: a bad configuration shows up here, a fault at the next sync. */
#define SIM_CUDA_CHECK_LAUNCH(name)                                                                \
    do {                                                                                           \
        cudaError_t sim_cuda_e_ = cudaGetLastError();                                              \
        if (sim_cuda_e_ != cudaSuccess) {                                                          \
            return sim_fail(err, SIM_CUDA, "%s:%d: launch of %s: %s", __FILE__, __LINE__, name,    \
                            cudaGetErrorString(sim_cuda_e_));                                      \
        }                                                                                          \
    } while (0)

#endif /* SIM_CUDA_CHECK_H */
