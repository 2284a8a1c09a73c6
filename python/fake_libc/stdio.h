/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — a stand-in for the C library's header (gen_ffi.py's preprocessor pass). */
#include <stddef.h>
typedef struct FILE FILE;
