/* SPDX-License-Identifier: MIT
 * nbsim — the NCCL id and the settings check through MPI, for a run launched by mpirun in a
 * build that found MPI (dist.h). MPI carries only these few hundred bytes before NCCL starts; the
 * step's sums stay NCCL's. Without MPI (NBSIM_HAVE_MPI unset) the functions say so. */
#include "nbsim/dist.h"

#include <stdio.h>
#include <string.h>

#ifdef NBSIM_HAVE_MPI
#include <mpi.h>
#include <stdlib.h>

int sim_dist_have_mpi(void) {
    return 1;
}

static void finalize_at_exit(void) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
        MPI_Finalize();
    }
}

/* MPI once per process: the exchange may run again (tests), MPI_Init may not. Finalized at exit
 * so that mpirun sees every rank end cleanly. */
static sim_status init_once(sim_error *err) {
    int ready = 0;
    MPI_Initialized(&ready);
    if (ready) {
        return SIM_OK;
    }
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        return sim_fail(err, SIM_IO, "MPI_Init failed: start the ranks with mpirun");
    }
    /* a failed collective returns an error instead of ending the process behind our back */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    atexit(finalize_at_exit);
    return SIM_OK;
}

sim_status sim_dist_exchange_mpi(const sim_dist_exchange *x, unsigned char id[SIM_NCCL_ID_BYTES],
                                 sim_error *err) {
    SIM_TRY(init_once(err));
    int rank = -1, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (rank != x->rank || world != x->world) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "MPI says rank %d of %d, the command line rank %d of %d: leave --rank "
                        "and --world out under mpirun",
                        rank, world, x->rank, x->world);
    }
    /* every rank sees every rank's settings, so all of them refuse alike, naming the same one */
    char mine[SIM_DIST_RUN_MAX];
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine, "%s", x->run);
    char *all = calloc((size_t)world, sizeof mine);
    if (all == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot hold %d ranks' settings", world);
    }
    sim_status st = SIM_OK;
    if (MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR,
                      MPI_COMM_WORLD) != MPI_SUCCESS) {
        st = sim_fail(err, SIM_IO, "MPI: gathering the ranks' settings failed");
    }
    for (int k = 1; k < world && st == SIM_OK; ++k) {
        const char *theirs = all + (size_t)k * sizeof mine;
        if (strcmp(theirs, all) != 0) {
            st = sim_fail(err, SIM_BAD_ARGUMENT,
                          "the ranks' settings differ: rank 0 runs %.*s; rank %d runs %.*s",
                          SIM_DIST_RUN_MAX, all, k, SIM_DIST_RUN_MAX, theirs);
        }
    }
    free(all);
    if (st == SIM_OK &&
        MPI_Bcast(id, SIM_NCCL_ID_BYTES, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        st = sim_fail(err, SIM_IO, "MPI: broadcasting rank 0's NCCL id failed");
    }
    return st;
}

#else

int sim_dist_have_mpi(void) {
    return 0;
}

sim_status sim_dist_exchange_mpi(const sim_dist_exchange *x, unsigned char id[SIM_NCCL_ID_BYTES],
                                 sim_error *err) {
    (void)x;
    (void)id;
    return sim_fail(err, SIM_UNSUPPORTED,
                    "this build has no MPI: give --nccl-id FILE, a new file every rank sees");
}

#endif
