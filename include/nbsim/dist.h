/* SPDX-License-Identifier: MIT
 * nbsim — a run over several processes (hosts): where this process sits, and how the ranks agree
 * on one NCCL id. One process per GPU, launched by mpirun, srun or by hand: the rank and world
 * come from --rank/--world or from the launcher's variables; rank 0 makes the NCCL id and writes
 * it to a file on a path every host sees, the others wait for it. */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include "nbsim/multi.h"

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int rank, world;
    int local_rank;     /* the rank among those on this host (picks the device); -1 unknown */
    const char *source; /* where rank and world came from: "OMPI", "PMI", "SLURM" */
} sim_dist_env;

/* Rank and world from the launcher's variables: Open MPI (OMPI_COMM_WORLD_RANK / _SIZE), MPICH
 * and Intel MPI (PMI_RANK / PMI_SIZE), Slurm (SLURM_PROCID / SLURM_STEP_NUM_TASKS, else
 * SLURM_NTASKS); the local rank from OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
 * or LOCAL_RANK. SIM_OK with *found = 0 when none is set; SIM_BAD_ARGUMENT when a set one is not
 * a valid rank (names the variable). */
sim_status sim_dist_from_env(sim_dist_env *out, int *found, sim_error *err);

/* How long ranks other than 0 wait for the id file by default [s]. */
#define SIM_DIST_ID_WAIT_S 120.0

/* The settings every rank must share, as one line (bodies, frames, maps, ...: the caller's
 * words), at most this long. */
#define SIM_DIST_RUN_MAX 400

/* One rank's side of the exchange before NCCL starts. Each rank k > 0 leaves its settings in
 * "PATH.rank<k>"; rank 0 waits for all of them and only when every rank's settings equal its
 * own writes the id to PATH, else a refusal naming the first rank that differs. So no rank
 * enters NCCL's set-up (which waits for ever for a rank that never comes) unless all of them
 * are there and will make the same collectives. Files carry the launcher's job id when there is
 * one (Slurm, Open MPI, PMIx), so ranks of one job never take another job's files. */
typedef struct {
    const char *path; /* --nccl-id: a new file on a path every rank sees */
    int rank, world;
    const char *run;                   /* this rank's settings (one line, < SIM_DIST_RUN_MAX) */
    double timeout_s;                  /* the longest wait for the other side [s] */
    const volatile sig_atomic_t *stop; /* NULL, or a flag that ends a wait: SIM_INTERRUPTED */
} sim_dist_exchange;

/* Rank 0: waits for every other rank's settings, then writes the id (complete or not at all,
 * sim_output), or the refusal. Refuses at once when PATH exists (an id left by an earlier run
 * would send the other ranks to it). SIM_IO when a rank did not come within the timeout;
 * SIM_BAD_ARGUMENT when one's settings differ (both named). */
sim_status sim_dist_write_id(const sim_dist_exchange *x, const unsigned char id[SIM_NCCL_ID_BYTES],
                             sim_error *err);

/* Ranks > 0: leave the settings, wait for rank 0's answer (polling every 50 [ms]), take the
 * settings back. SIM_IO with a message naming the file and what to check; SIM_BAD_ARGUMENT
 * when rank 0 refused this run (its reason). */
sim_status sim_dist_read_id(const sim_dist_exchange *x, unsigned char id[SIM_NCCL_ID_BYTES],
                            sim_error *err);

/* 1 when this build found MPI (sim/multi/dist_mpi.c): a run launched by mpirun may then leave out
 * --nccl-id, and the ranks exchange the settings and the id through MPI instead of files. */
int sim_dist_have_mpi(void);

/* The same exchange through MPI (x's path and timeout unused: mpirun starts every rank or ends
 * the job). MPI is initialised once per process and finalised at exit. Every rank gathers every
 * rank's settings and refuses alike when one differs from rank 0's (SIM_BAD_ARGUMENT naming
 * it); else rank 0's id (made before the call) reaches the others (id: rank 0's input, the
 * others' output). SIM_BAD_ARGUMENT when MPI's rank or world is not x's; SIM_UNSUPPORTED in a
 * build without MPI. */
sim_status sim_dist_exchange_mpi(const sim_dist_exchange *x, unsigned char id[SIM_NCCL_ID_BYTES],
                                 sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_DIST_H */
