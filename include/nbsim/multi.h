/* SPDX-License-Identifier: MIT
 * nbsim — runs over several GPUs (and processes): which ranks a backend runs. One rank per GPU;
 * each holds all positions (O(N) memory), evaluates its share of the tile pairs / tile triples
 * (work_split.h), and the force sums are all-reduced with NCCL before every rank integrates all
 * bodies the same way, so the ranks stay bit-identical. A process runs `local` ranks on worker
 * threads, one device each (`--gpus N`); a run over processes or hosts (`--rank/--world`) has
 * one process per GPU or per group of `--gpus G` GPUs, all sharing an NCCL id (dist.h). The CPU
 * reference runs the same split over threads of one process, summing in host memory: the
 * reduction path tested without a GPU. */
#ifndef SIM_MULTI_H
#define SIM_MULTI_H

#include "nbsim/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

/* Ranks a process runs on its own: worker threads, one device each. */
#define SIM_MAX_LOCAL_RANKS 64
/* Ranks a run may have (GPUs over all processes). */
#define SIM_MAX_RANKS 1024

/* How the ranks share the bodies (--decompose). REPLICATE: every rank holds every body and takes
 * its share of the tile pairs / triples (the lambda split above), what brute-force sweeps and all
 * triples pay for. SPACE: each rank owns the bodies of one slab of the box and keeps ghosts of its
 * neighbours' within reach (sim/space/space.h): culled contacts, whose work and memory then split
 * with the bodies; the CPU reference over MPI processes so far. AUTO: SPACE for the CPU reference
 * over processes, REPLICATE elsewhere. */
typedef enum { SIM_DECOMPOSE_AUTO, SIM_DECOMPOSE_REPLICATE, SIM_DECOMPOSE_SPACE } sim_decompose;

typedef struct {
    int world;  /* ranks in the whole run; 0 or 1: alone, one device (the default) */
    int rank;   /* global rank of this process's first local rank */
    int local;  /* ranks this process runs (>= 1 when world > 1) */
    int device; /* CUDA device of the first local rank; local rank k uses device + k */
    int id_set; /* nccl_id holds the run's NCCL id (needed when world > local) */
    int space;  /* 1: the ranks split space (SIM_DECOMPOSE_SPACE), one process each, over MPI */
    unsigned char nccl_id[SIM_NCCL_ID_BYTES];
} sim_multi_config;

/* 1 when this build has NCCL (the multi-GPU path), else 0. */
int sim_multi_have_nccl(void);

/* A fresh NCCL unique id (rank 0 makes it; every rank passes the same to the backend). Sets
 * NCCL_NVLS_ENABLE=0 first unless the user set it (sim_multi_nccl_env). SIM_UNSUPPORTED without
 * NCCL. */
sim_status sim_multi_nccl_id(unsigned char id[SIM_NCCL_ID_BYTES], sim_error *err);

/* Sets NCCL_NVLS_ENABLE=0 in this process's environment when the user has not set it: NVLink
 * SHARP / multicast objects can take GPUs of shared machines out of service, and nbsim's
 * all-reduces are far too small to need them. Called before NCCL initialises. */
void sim_multi_nccl_env(void);

#ifdef __cplusplus
}
#endif

#endif /* SIM_MULTI_H */
