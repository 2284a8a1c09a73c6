/* SPDX-License-Identifier: MIT
 * nbsim — the build without NCCL (-DNBSIM_NCCL=OFF) compiled and checked in every build: its
 * stand-in says in one line that there is no NCCL (the program turns that into `--gpus 2`'s
 * one-line refusal, exit 2). Links sim/multi/nccl_none.c alone, whatever this build found. */
#include "multi/comm.h"

#include <string.h>

#include "ensure.h"

static void test_no_nccl(void) {
    ENSURE(sim_multi_have_nccl() == 0);
    unsigned char id[SIM_NCCL_ID_BYTES];
    sim_error err;
    ENSURE(sim_multi_nccl_id(id, &err) == SIM_UNSUPPORTED);
    ENSURE(strstr(err.message, "this build has no NCCL") != NULL &&
           strchr(err.message, '\n') == NULL);
    sim_comm *c = (sim_comm *)&err;
    ENSURE(sim_nccl_comm_create(id, 2, 0, &c, &err) == SIM_UNSUPPORTED && c == NULL);
}

static const ensure_test tests[] = {
    {"no_nccl", test_no_nccl},
};

ENSURE_MAIN(tests)
