/* SPDX-License-Identifier: MIT
 * The NCCL id and the settings check through MPI (sim/multi/dist_mpi.c), run by ctest under mpiexec
 * with 3 processes on the CPU: rank 0's id reaches every rank when the settings agree; when one
 * rank's settings differ every rank refuses alike, naming it; a --rank that is not MPI's is
 * refused before any collective (so no rank waits in one). Each rank checks its own side; the
 * ranks' failures are summed so rank 0's exit says them all. */
#include "nbsim/dist.h"
#include "ensure.h"

#include <mpi.h>
#include <string.h>

static sim_dist_env g_env; /* this process: rank and world from mpiexec's variables */

static void exchange_agrees(void) {
    const sim_dist_env *env = &g_env;
    unsigned char id[SIM_NCCL_ID_BYTES];
    for (int k = 0; k < SIM_NCCL_ID_BYTES; ++k) {
        id[k] = env->rank == 0 ? (unsigned char)(7 * k + 1) : 0;
    }
    const sim_dist_exchange x = {"",  env->rank, env->world, "n 4096 frames 10 maps ltm/tetra",
                                 1.0, NULL};
    sim_error err;
    ENSURE(sim_dist_exchange_mpi(&x, id, &err) == SIM_OK);
    int same = 1;
    for (int k = 0; k < SIM_NCCL_ID_BYTES; ++k) {
        same &= id[k] == (unsigned char)(7 * k + 1);
    }
    ENSURE(same);
}

static void settings_differ(void) {
    const sim_dist_env *env = &g_env;
    unsigned char id[SIM_NCCL_ID_BYTES] = {0};
    const sim_dist_exchange x = {
        "",  env->rank, env->world, env->rank == 2 ? "n 4096 frames 11" : "n 4096 frames 10",
        1.0, NULL};
    sim_error err;
    ENSURE(sim_dist_exchange_mpi(&x, id, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "rank 0 runs n 4096 frames 10; rank 2 runs n 4096 frames 11") !=
           NULL);
}

static void rank_not_mpis(void) {
    const sim_dist_env *env = &g_env;
    unsigned char id[SIM_NCCL_ID_BYTES] = {0};
    const sim_dist_exchange x = {"", (env->rank + 1) % env->world, env->world, "same", 1.0, NULL};
    sim_error err;
    ENSURE(sim_dist_exchange_mpi(&x, id, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "MPI says rank") != NULL);
}

static const ensure_test k_tests[] = {
    {"dist_mpi_exchange_agrees", exchange_agrees},
    {"dist_mpi_settings_differ", settings_differ},
    {"dist_mpi_rank_not_mpis", rank_not_mpis},
    {"dist_mpi_exchange_again", exchange_agrees}, /* MPI is initialised once per process */
};

int main(void) {
    int found = 0;
    sim_error err;
    if (!sim_dist_have_mpi() || sim_dist_from_env(&g_env, &found, &err) != SIM_OK || !found ||
        g_env.world != 3 || strcmp(g_env.source, "SLURM") == 0) {
        printf("test_dist_mpi: run it under mpiexec -n 3 (ctest does)\n");
        return 2;
    }
    if (g_env.rank > 0 && freopen("/dev/null", "w", stdout) == NULL) { /* rank 0 reports */
        return 2;
    }
    const int failed = ensure_run(k_tests, (int)(sizeof k_tests / sizeof k_tests[0]), NULL);
    int all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("%d of %d ranks failed\n", all, g_env.world);
    return all > 0 ? 1 : 0;
}
