/* SPDX-License-Identifier: MIT
 * nbsim — SIM_CUDA_TRY and SIM_CUDA_CHECK_LAUNCH for sim's CUDA code: written once in the public
 * face, since programs with CUDA code of their own (nbsim bench's kernels) use them too. */
#include "nbsim/cuda_check.h"
