/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — the little C of its own that the binding needs besides the library's
 * public face (include/nbsim/): a SIGINT handler that raises a simulation's stop flag while a
 * run is under way (the Python handler cannot run while the library works), and the block ->
 * tile assignment of a map's plan into arrays (one call instead of two per block from Python).
 * Declared to cffi by gen_ffi.py like the public headers; compiled into the extension. */
#ifndef NBSIM_PY_H
#define NBSIM_PY_H

#include <signal.h>

#include "nbsim/maps.h"

/* Installs a SIGINT handler that raises *flag (the simulation's sim_backend_config.stop), keeping
 * the one it replaces; nbsim_py_sigint_end puts that one back. Returns 0 when a handler of the
 * binding is installed already (a run inside a run: the outer one's stays), else 1. Main thread
 * only (the Python layer checks). */
int nbsim_py_sigint_begin(volatile sig_atomic_t *flag);
void nbsim_py_sigint_end(void);

/* Blocks first .. first + count - 1 of plan (numbered as sim_map_plan_block_at numbers them):
 * launch[k], block[3k .. 3k+2] = (bx, by, bz) and tile[3k .. 3k+2] = (I, J, K), -1 where the block
 * owns nothing or the dimension has no K. Returns the blocks written (fewer when the plan ends). */
uint64_t nbsim_py_map_assign(const sim_map_plan *plan, uint64_t first, uint64_t count,
                             int32_t *launch, uint32_t *block, int64_t *tile);

#endif /* NBSIM_PY_H */
