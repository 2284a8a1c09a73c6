/* SPDX-License-Identifier: MIT
 * nbsim — communicators (comm.h): the dispatch, and the host group, whose ranks are threads of
 * one process summing host buffers (the CPU reference's reduction path). */
#define _POSIX_C_SOURCE 200809L
#include "multi/comm.h"
#include "multi/work_split.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

sim_status sim_comm_allreduce_sum(sim_comm *c, void *buf, size_t count, sim_comm_type type,
                                  void *stream, sim_error *err) {
    SIM_ASSERT(c != NULL && (buf != NULL || count == 0));
    return c->ops->allreduce_sum(c, buf, count, type, stream, err);
}

sim_status sim_comm_allreduce_host(sim_comm *c, double *v, size_t count, sim_error *err) {
    SIM_ASSERT(c != NULL && v != NULL && count <= SIM_COMM_HOST_MAX);
    if (c->ops->allreduce_host != NULL) {
        return c->ops->allreduce_host(c, v, count, err);
    }
    return c->ops->allreduce_sum(c, v, count, SIM_COMM_DOUBLE, NULL, err);
}

void sim_comm_destroy(sim_comm *c) {
    if (c != NULL) {
        c->ops->destroy(c);
    }
}

void sim_multi_nccl_env(void) {
    /* 0: do not overwrite what the user set. */
    (void)setenv("NCCL_NVLS_ENABLE", "0", 0);
}

/* ---- the host group ----
 * Each rank posts its buffer; each sums a slice of the elements over all ranks in rank order
 * into the group's scratch; each copies the whole sum back. Four barriers per all-reduce: the
 * posts, the scratch, the sums, the copies (before a buffer or the scratch is reused). */

struct sim_host_group {
    int world;
    pthread_barrier_t barrier;
    void **slot;        /* each rank's buffer during an all-reduce */
    sim_comm *comms;    /* one handle per rank */
    double *scratch;    /* the sums, grown by rank 0 between barriers */
    size_t scratch_cap; /* doubles */
    int failed;         /* rank 0 could not grow the scratch: every rank fails the call */
};

typedef struct {
    sim_comm base;
    sim_host_group *group;
} host_comm;

static sim_status host_allreduce(sim_comm *c, void *buf, size_t count, sim_comm_type type,
                                 void *stream, sim_error *err) {
    sim_host_group *g = ((host_comm *)c)->group;
    const int rank = c->rank, world = c->world;
    const size_t width = type == SIM_COMM_DOUBLE ? sizeof(double) : sizeof(float);
    g->slot[rank] = buf;
    if (rank == 0) {
        g->failed = 0;
        if (count > g->scratch_cap) {
            double *grown = realloc(g->scratch, count * sizeof *grown);
            if (grown == NULL) {
                g->failed = 1;
            } else {
                g->scratch = grown;
                g->scratch_cap = count;
            }
        }
    }
    pthread_barrier_wait(&g->barrier);
    const int failed = g->failed;
    if (!failed) {
        uint64_t b, e;
        sim_work_list_range(count, rank, world, &b, &e);
        for (uint64_t i = b; i < e; ++i) {
            double s = 0.0;
            for (int r = 0; r < world; ++r) {
                s += type == SIM_COMM_DOUBLE ? ((const double *)g->slot[r])[i]
                                             : (double)((const float *)g->slot[r])[i];
            }
            g->scratch[i] = s;
        }
    }
    pthread_barrier_wait(&g->barrier);
    if (!failed) {
        if (type == SIM_COMM_DOUBLE) {
            memcpy(buf, g->scratch, count * width);
        } else {
            for (size_t i = 0; i < count; ++i) {
                ((float *)buf)[i] = (float)g->scratch[i];
            }
        }
    }
    pthread_barrier_wait(&g->barrier);
    (void)stream;
    if (failed) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the sum of %zu values", count);
    }
    return SIM_OK;
}

static void host_destroy(sim_comm *c) {
    (void)c; /* owned by the group */
}

static const sim_comm_ops host_ops = {host_allreduce, host_destroy, NULL};

sim_status sim_host_group_create(int world, sim_host_group **out, sim_error *err) {
    *out = NULL;
    if (world < 1 || world > SIM_MAX_LOCAL_RANKS) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "%d ranks in one process: 1..%d", world,
                        SIM_MAX_LOCAL_RANKS);
    }
    sim_host_group *g = calloc(1, sizeof *g);
    host_comm *comms = calloc((size_t)world, sizeof *comms);
    void **slot = calloc((size_t)world, sizeof *slot);
    if (g == NULL || comms == NULL || slot == NULL ||
        pthread_barrier_init(&g->barrier, NULL, (unsigned)world) != 0) {
        free(g);
        free(comms);
        free(slot);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot create a host group of %d ranks", world);
    }
    g->world = world;
    g->slot = slot;
    g->comms = (sim_comm *)comms; /* host_comm begins with its sim_comm */
    for (int r = 0; r < world; ++r) {
        comms[r].base.ops = &host_ops;
        comms[r].base.rank = r;
        comms[r].base.world = world;
        comms[r].group = g;
    }
    *out = g;
    return SIM_OK;
}

void sim_host_group_destroy(sim_host_group *g) {
    if (g == NULL) {
        return;
    }
    pthread_barrier_destroy(&g->barrier);
    free(g->comms);
    free(g->slot);
    free(g->scratch);
    free(g);
}

sim_comm *sim_host_comm(sim_host_group *g, int rank) {
    SIM_ASSERT(g != NULL && rank >= 0 && rank < g->world);
    return &((host_comm *)g->comms)[rank].base;
}
