/* SPDX-License-Identifier: MIT
 * nbsim — private to the backends: a rank's communicator, one interface over two transports.
 * NCCL (nccl_comm.c) sums device buffers on a CUDA stream; the host group (comm.c) sums host
 * buffers of ranks that are threads of one process, for the CPU reference. Both give every rank
 * the same bits: each element's sum is computed once and copied to all ranks. */
#ifndef SIM_COMM_H
#define SIM_COMM_H

#include "nbsim/multi.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SIM_COMM_FLOAT, SIM_COMM_DOUBLE } sim_comm_type;

typedef struct sim_comm sim_comm;

/* A rank's place in the run: what a backend needs to take its share and sum with the others.
 * world 1: alone (comm NULL). */
typedef struct {
    int rank, world;
    int device; /* CUDA device (CUDA backend) */
    sim_comm *comm;
} sim_rank;

/* In place: buf (count elements) becomes the sum over the ranks, in every rank. Collective: every
 * rank must call it with the same count. stream: the CUDA stream (NCCL), ignored by the host
 * group. */
sim_status sim_comm_allreduce_sum(sim_comm *c, void *buf, size_t count, sim_comm_type type,
                                  void *stream, sim_error *err);
/* In place: a few host values (at most SIM_COMM_HOST_MAX) become their sum over the ranks, and
 * the call returns when every rank has them: for agreements between frames (whether to stop),
 * not for a step's data. Collective, as above. */
#define SIM_COMM_HOST_MAX 64
sim_status sim_comm_allreduce_host(sim_comm *c, double *v, size_t count, sim_error *err);
/* Frees this rank's communicator (NCCL: ncclCommDestroy; host: nothing, the group owns it). */
void sim_comm_destroy(sim_comm *c);

/* Host group: `world` ranks that are threads of this process. */
typedef struct sim_host_group sim_host_group;
sim_status sim_host_group_create(int world, sim_host_group **out, sim_error *err);
void sim_host_group_destroy(sim_host_group *g);
sim_comm *sim_host_comm(sim_host_group *g, int rank); /* owned by the group */

/* NCCL: this thread's current device joins rank `rank` of `world` (blocks until every rank has
 * joined). SIM_UNSUPPORTED in a build without NCCL. */
sim_status sim_nccl_comm_create(const unsigned char id[SIM_NCCL_ID_BYTES], int world, int rank,
                                sim_comm **out, sim_error *err);

/* The transports behind sim_comm. */
typedef struct {
    sim_status (*allreduce_sum)(sim_comm *c, void *buf, size_t count, sim_comm_type type,
                                void *stream, sim_error *err);
    void (*destroy)(sim_comm *c);
    /* sim_comm_allreduce_host; NULL: allreduce_sum already takes host buffers */
    sim_status (*allreduce_host)(sim_comm *c, double *v, size_t count, sim_error *err);
} sim_comm_ops;

struct sim_comm {
    const sim_comm_ops *ops;
    int rank, world;
};

#ifdef __cplusplus
}
#endif

#endif /* SIM_COMM_H */
