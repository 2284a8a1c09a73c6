/* SPDX-License-Identifier: MIT
 * nbsim — runs over processes without a GPU or NCCL (dist.h): rank and world from the
 * launchers' variables, and the NCCL id passed through a file between two real processes (a
 * made-up id: the exchange does not care what the bytes are). */
#define _POSIX_C_SOURCE 200809L
#include "dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ensure.h"

static const char *const vars[] = {"OMPI_COMM_WORLD_RANK",
                                   "OMPI_COMM_WORLD_SIZE",
                                   "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "PMI_RANK",
                                   "PMI_SIZE",
                                   "MPI_LOCALRANKID",
                                   "SLURM_PROCID",
                                   "SLURM_NTASKS",
                                   "SLURM_STEP_NUM_TASKS",
                                   "SLURM_LOCALID",
                                   "SLURM_JOB_ID",
                                   "SLURM_STEP_ID",
                                   "PMIX_NAMESPACE",
                                   "OMPI_MCA_ess_base_jobid",
                                   "LOCAL_RANK"};

static void clear_env(void) {
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; ++k) {
        unsetenv(vars[k]);
    }
}

static void test_env(void) {
    sim_dist_env e;
    int found = 1;
    sim_error err;
    clear_env();
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_OK && !found);
    setenv("SLURM_PROCID", "3", 1);
    setenv("SLURM_NTASKS", "8", 1);
    setenv("SLURM_LOCALID", "1", 1);
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_OK && found);
    ENSURE(e.rank == 3 && e.world == 8 && e.local_rank == 1 && strcmp(e.source, "SLURM") == 0);
    setenv("SLURM_STEP_NUM_TASKS", "4", 1); /* a step's own task count wins */
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_OK && e.world == 4);
    setenv("OMPI_COMM_WORLD_RANK", "1", 1); /* Open MPI first */
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_OK);
    ENSURE(e.rank == 1 && e.world == 2 && e.local_rank == 0 && strcmp(e.source, "OMPI") == 0);
    clear_env();
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "2", 1);
    setenv("LOCAL_RANK", "5", 1);
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_OK);
    ENSURE(e.rank == 0 && e.world == 2 && e.local_rank == 5 && strcmp(e.source, "PMI") == 0);
    setenv("PMI_RANK", "2", 1); /* not below the world */
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "PMI_RANK") != NULL);
    setenv("PMI_RANK", "x", 1);
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_BAD_ARGUMENT);
    clear_env();
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "2", 1);
    setenv("SLURM_LOCALID", "-1", 1);
    ENSURE(sim_dist_from_env(&e, &found, &err) == SIM_BAD_ARGUMENT);
    clear_env();
}

static void fake_id(unsigned char id[SIM_NCCL_ID_BYTES], int seed) {
    for (int k = 0; k < SIM_NCCL_ID_BYTES; ++k) {
        id[k] = (unsigned char)(k * 37 + seed);
    }
}

static void temp_path(char *buf, size_t cap, const char *what) {
    const char *dir = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    snprintf(buf, cap, "%s/nbsim-test-dist-%ld-%s", dir, (long)getpid(), what);
}

/* Rank 1 in a child process waits for the file; rank 0 (here) writes it after a pause. */
static void test_exchange_two_processes(void) {
    char path[512];
    temp_path(path, sizeof path, "id");
    remove(path);
    unsigned char id[SIM_NCCL_ID_BYTES];
    fake_id(id, 11);
    fflush(NULL);
    const pid_t child = fork();
    ENSURE(child >= 0);
    if (child == 0) {
        unsigned char got[SIM_NCCL_ID_BYTES];
        sim_error err;
        const sim_status st = sim_dist_read_id(path, 2, 20.0, got, &err);
        _exit(st == SIM_OK && memcmp(got, id, sizeof got) == 0 ? 0 : 1);
    }
    const struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL); /* the reader is waiting before the file appears */
    sim_error err;
    ENSURE_MSG(sim_dist_write_id(path, id, 2, &err) == SIM_OK, "%s", err.message);
    int status = 0;
    ENSURE(waitpid(child, &status, 0) == child);
    ENSURE_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank 1 did not get the id");
    /* a file that is there already is refused: another run's id must not be reused */
    ENSURE(sim_dist_write_id(path, id, 2, &err) == SIM_IO && strstr(err.message, "exists"));
    remove(path);
}

static void test_wrong_files(void) {
    char path[512];
    temp_path(path, sizeof path, "wrong");
    remove(path);
    unsigned char id[SIM_NCCL_ID_BYTES], got[SIM_NCCL_ID_BYTES];
    fake_id(id, 3);
    sim_error err;
    clear_env();
    /* nothing comes: a clear message after the wait */
    ENSURE(sim_dist_read_id(path, 2, 0.2, got, &err) == SIM_IO);
    ENSURE(strstr(err.message, "is rank 0 running") != NULL);
    /* another world */
    ENSURE(sim_dist_write_id(path, id, 4, &err) == SIM_OK);
    ENSURE(sim_dist_read_id(path, 2, 0.2, got, &err) == SIM_IO);
    ENSURE(strstr(err.message, "4 ranks") != NULL);
    remove(path);
    /* another job's */
    setenv("SLURM_JOB_ID", "100", 1);
    ENSURE(sim_dist_write_id(path, id, 2, &err) == SIM_OK);
    setenv("SLURM_JOB_ID", "101", 1);
    ENSURE(sim_dist_read_id(path, 2, 0.2, got, &err) == SIM_IO);
    ENSURE(strstr(err.message, "job") != NULL);
    setenv("SLURM_JOB_ID", "100", 1);
    ENSURE(sim_dist_read_id(path, 2, 0.2, got, &err) == SIM_OK && memcmp(got, id, sizeof id) == 0);
    remove(path);
    /* not an id file */
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f != NULL) {
        fputs("hello\n", f);
        fclose(f);
    }
    ENSURE(sim_dist_read_id(path, 2, 0.2, got, &err) == SIM_IO);
    remove(path);
    clear_env();
}

static const ensure_test tests[] = {
    {"dist_env", test_env},
    {"dist_exchange_two_processes", test_exchange_two_processes},
    {"dist_wrong_files", test_wrong_files},
};

ENSURE_MAIN(tests)
