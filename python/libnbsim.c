/* SPDX-License-Identifier: MIT
 * libnbsim.so — the library as a shared object, for bindings (the Python package). Its code is
 * all of nbsim_sim, linked whole (python/CMakeLists.txt): the objects the program runs. What it
 * exports is the functions of include/nbsim/, from a version script gen_ffi.py writes from them.
 * This file only gives the target a source of its own, as CMake wants one. */
#include "nbsim/base.h"
