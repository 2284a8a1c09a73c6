/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — a stand-in for the C library's header (gen_ffi.py's preprocessor pass). */
typedef int sig_atomic_t;
