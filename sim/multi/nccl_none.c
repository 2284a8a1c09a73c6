/* SPDX-License-Identifier: MIT
 * nbsim — a build without NCCL: the multi-GPU path says so and does nothing. */
#include "multi/comm.h"

int sim_multi_have_nccl(void) {
    return 0;
}

static sim_status no_nccl(sim_error *err) {
    return sim_fail(err, SIM_UNSUPPORTED,
                    "this build has no NCCL, so it runs on one GPU only (rebuild with NCCL: "
                    "NCCL_ROOT=... or pip install nvidia-nccl-cu13)");
}

sim_status sim_multi_nccl_id(unsigned char id[SIM_NCCL_ID_BYTES], sim_error *err) {
    (void)id;
    return no_nccl(err);
}

sim_status sim_nccl_comm_create(const unsigned char id[SIM_NCCL_ID_BYTES], int world, int rank,
                                sim_comm **out, sim_error *err) {
    *out = NULL;
    return no_nccl(err);
}
