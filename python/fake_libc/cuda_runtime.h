/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — a stand-in for CUDA's header (gen_ffi.py's preprocessor pass; the
 * binding declares nothing of nbsim/cuda_check.h, whose macros are for CUDA code). */
