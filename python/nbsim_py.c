/* SPDX-License-Identifier: MIT
 * nbsim's Python binding — its own C (nbsim_py.h), compiled into the extension after the
 * declarations cffi generates. Only include/nbsim/ and the C library. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nbsim_py.h"

#include <string.h>

#include "nbsim/maps_check.h"

static volatile sig_atomic_t *nbsim_py_flag;
static struct sigaction nbsim_py_previous;
static int nbsim_py_installed;

static void nbsim_py_on_sigint(int sig) {
    (void)sig;
    if (nbsim_py_flag != NULL) {
        *nbsim_py_flag = 1;
    }
}

int nbsim_py_sigint_begin(volatile sig_atomic_t *flag) {
    if (nbsim_py_installed) {
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = nbsim_py_on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocking write (a FIFO) is interrupted, as in nbsim */
    nbsim_py_flag = flag;
    if (sigaction(SIGINT, &sa, &nbsim_py_previous) != 0) {
        nbsim_py_flag = NULL;
        return 0;
    }
    nbsim_py_installed = 1;
    return 1;
}

void nbsim_py_sigint_end(void) {
    if (!nbsim_py_installed) {
        return;
    }
    (void)sigaction(SIGINT, &nbsim_py_previous, NULL);
    nbsim_py_installed = 0;
    nbsim_py_flag = NULL;
}

uint64_t nbsim_py_map_assign(const sim_map_plan *plan, uint64_t first, uint64_t count,
                             int32_t *launch, uint32_t *block, int64_t *tile) {
    for (uint64_t k = 0; k < count; ++k) {
        int l = 0;
        uint32_t b[3] = {0, 0, 0}, t[3] = {0, 0, 0};
        if (!sim_map_plan_block_at(plan, first + k, &l, &b[0], &b[1], &b[2])) {
            return k;
        }
        const int owns = sim_map_run_block(plan, l, b[0], b[1], b[2], t);
        launch[k] = l;
        for (int d = 0; d < 3; ++d) {
            block[3 * k + (uint64_t)d] = b[d];
            tile[3 * k + (uint64_t)d] = owns && d < plan->dim ? (int64_t)t[d] : -1;
        }
    }
    return count;
}
