/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — the public headers it is declared from: gen_ffi.py runs the
 * preprocessor over this file and takes the declarations the binding names from the result, and
 * the extension cffi generates includes it, so the binding compiles against the very headers
 * its declarations came from. */
#ifndef NBSIM_FFI_H
#define NBSIM_FFI_H

#include "nbsim/autotune.h"
#include "nbsim/map_cover.h"
#include "nbsim/maps.h"
#include "nbsim/maps_check.h"
#include "nbsim/params.h"
#include "nbsim/run_loop.h"
#include "nbsim/run_stats.h"
#include "nbsim/scene.h"
#include "nbsim/session.h"
#include "nbsim/size_limits.h"
#include "nbsim/state.h"
#include "nbsim/timing_log.h"
#include "nbsim/trajectory.h"
#include "nbsim_py.h"

#endif /* NBSIM_FFI_H */
