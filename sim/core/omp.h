/* SPDX-License-Identifier: MIT
 * nbsim — private to the library's CPU threads: OpenMP where the build has it, one thread where
 * not (the pragmas vanish and the thread is 0), written once for the CPU reference's files and
 * the built-in scenes (sim/io/scene.c); in core/, below both. */
#ifndef SIM_CORE_OMP_H
#define SIM_CORE_OMP_H

#ifdef _OPENMP
#include <omp.h>
#define SIM_OMP(directive) _Pragma(#directive)
#else
#define SIM_OMP(directive)
#endif

/* This thread's number in the current team (0 outside one, or without OpenMP). */
static inline int sim_cpu_thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

#endif /* SIM_CORE_OMP_H */
