/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — a stand-in for the C library's header (gen_ffi.py's preprocessor pass). */
typedef unsigned long size_t;
typedef long ptrdiff_t;
#define NULL ((void *)0)
