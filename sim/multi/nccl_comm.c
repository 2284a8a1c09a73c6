/* SPDX-License-Identifier: MIT
 * nbsim — the NCCL transport of comm.h: one communicator per rank (one device each), sums of
 * device buffers enqueued on the rank's CUDA stream. NCCL's all-reduce computes each element's
 * sum once (ring: reduce-scatter then all-gather) and gives every rank those bits, so ranks that
 * integrate the sums stay identical. NVLink multicast (NVLS) is kept off (sim_multi_nccl_env). */
#include "multi/comm.h"
#include "nbsim/cuda_check.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(NCCL_UNIQUE_ID_BYTES == SIM_NCCL_ID_BYTES, "NCCL id size");

int sim_multi_have_nccl(void) {
    return 1;
}

#define NCCL_TRY(call, what)                                                                       \
    do {                                                                                           \
        const ncclResult_t nccl_r_ = (call);                                                       \
        if (nccl_r_ != ncclSuccess) {                                                              \
            return sim_fail(err, SIM_CUDA, "NCCL %s failed: %s (%s)", what,                        \
                            ncclGetErrorString(nccl_r_), ncclGetLastError(NULL));                  \
        }                                                                                          \
    } while (0)

sim_status sim_multi_nccl_id(unsigned char id[SIM_NCCL_ID_BYTES], sim_error *err) {
    sim_multi_nccl_env();
    ncclUniqueId uid;
    NCCL_TRY(ncclGetUniqueId(&uid), "ncclGetUniqueId");
    memcpy(id, uid.internal, SIM_NCCL_ID_BYTES);
    return SIM_OK;
}

typedef struct {
    sim_comm base;
    ncclComm_t nccl;
    double *scratch; /* device: SIM_COMM_HOST_MAX doubles for allreduce_host, on first use */
} nccl_comm;

static sim_status nccl_allreduce(sim_comm *c, void *buf, size_t count, sim_comm_type type,
                                 void *stream, sim_error *err) {
    nccl_comm *n = (nccl_comm *)c;
    NCCL_TRY(ncclAllReduce(buf, buf, count, type == SIM_COMM_DOUBLE ? ncclFloat64 : ncclFloat32,
                           ncclSum, n->nccl, (cudaStream_t)stream),
             "all-reduce");
    return SIM_OK;
}

/* Host values through the scratch on this rank's device (the caller made it current), on the
 * legacy default stream: the blocking copies wait for the all-reduce, so the sums are there when
 * the call returns. Between frames the backends' streams are idle, so nothing else is waited for.
 */
static sim_status nccl_allreduce_host(sim_comm *c, double *v, size_t count, sim_error *err) {
    nccl_comm *n = (nccl_comm *)c;
    const size_t bytes = count * sizeof *v;
    if (n->scratch == NULL) {
        SIM_CUDA_TRY(cudaMalloc((void **)&n->scratch, SIM_COMM_HOST_MAX * sizeof *n->scratch));
    }
    SIM_CUDA_TRY(cudaMemcpy(n->scratch, v, bytes, cudaMemcpyHostToDevice));
    NCCL_TRY(ncclAllReduce(n->scratch, n->scratch, count, ncclFloat64, ncclSum, n->nccl, 0),
             "all-reduce");
    SIM_CUDA_TRY(cudaMemcpy(v, n->scratch, bytes, cudaMemcpyDeviceToHost));
    return SIM_OK;
}

static void nccl_destroy(sim_comm *c) {
    nccl_comm *n = (nccl_comm *)c;
    if (n->nccl != NULL) {
        (void)ncclCommDestroy(n->nccl);
    }
    if (n->scratch != NULL) {
        (void)cudaFree(n->scratch);
    }
    free(n);
}

static const sim_comm_ops nccl_ops = {nccl_allreduce, nccl_destroy, nccl_allreduce_host};

sim_status sim_nccl_comm_create(const unsigned char id[SIM_NCCL_ID_BYTES], int world, int rank,
                                sim_comm **out, sim_error *err) {
    *out = NULL;
    sim_multi_nccl_env();
    nccl_comm *n = calloc(1, sizeof *n);
    if (n == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate an NCCL communicator");
    }
    ncclUniqueId uid;
    memcpy(uid.internal, id, SIM_NCCL_ID_BYTES);
    const ncclResult_t r = ncclCommInitRank(&n->nccl, world, uid, rank);
    if (r != ncclSuccess) {
        free(n);
        return sim_fail(err, SIM_CUDA, "NCCL rank %d of %d could not join the run: %s (%s)", rank,
                        world, ncclGetErrorString(r), ncclGetLastError(NULL));
    }
    n->base.ops = &nccl_ops;
    n->base.rank = rank;
    n->base.world = world;
    *out = &n->base;
    return SIM_OK;
}
