/* SPDX-License-Identifier: MIT
 * nbsim — a run over several processes (hosts): where this process sits, and how the ranks agree
 * on one NCCL id. One process per GPU, launched by mpirun, srun or by hand: the rank and world
 * come from --rank/--world or from the launcher's variables; rank 0 makes the NCCL id and writes
 * it to a file on a path every host sees, the others wait for it. */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include "multi.h"

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

/* Rank 0: writes the id for a run of `world` ranks to path, complete or not at all (sim_output).
 * Refuses when path exists: an id left by an earlier run would send the other ranks to it. The
 * file carries the launcher's job id when there is one (Slurm, Open MPI, PMIx), so ranks of one
 * job never take another job's id. */
sim_status sim_dist_write_id(const char *path, const unsigned char id[SIM_NCCL_ID_BYTES], int world,
                             sim_error *err);

/* Other ranks: waits up to timeout_s for rank 0's id file (for a run of `world` ranks, of this
 * job), polling every 50 ms. SIM_IO with a message naming the file and what to check. */
sim_status sim_dist_read_id(const char *path, int world, double timeout_s,
                            unsigned char id[SIM_NCCL_ID_BYTES], sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_DIST_H */
