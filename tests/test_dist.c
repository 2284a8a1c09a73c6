/* SPDX-License-Identifier: MIT
 * nbsim — runs over processes without a GPU or NCCL (dist.h): rank and world from the
 * launchers' variables, and the NCCL id passed through a file between real processes (a made-up
 * id: the exchange does not care what the bytes are), refused when their settings differ. */
#define _POSIX_C_SOURCE 200809L
#include "nbsim/dist.h"

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

static const char kRun[] = "N 1000, 5 frames of 1 steps";

static sim_dist_exchange exchange(const char *path, int rank, int world, const char *run,
                                  double timeout_s) {
    const sim_dist_exchange x = {path, rank, world, run, timeout_s, NULL};
    return x;
}

/* Rank `rank` in a child process: the read side; exit 0 when it got `id`, else 10 + status. */
static pid_t start_reader(const char *path, int rank, int world, const char *run,
                          const unsigned char id[SIM_NCCL_ID_BYTES]) {
    fflush(NULL);
    const pid_t child = fork();
    if (child == 0) {
        unsigned char got[SIM_NCCL_ID_BYTES];
        sim_error err;
        const sim_dist_exchange x = exchange(path, rank, world, run, 20.0);
        const sim_status st = sim_dist_read_id(&x, got, &err);
        if (st != SIM_OK) {
            fprintf(stderr, "  rank %d: %s\n", rank, err.message);
        }
        _exit(st == SIM_OK ? (memcmp(got, id, SIM_NCCL_ID_BYTES) == 0 ? 0 : 9) : 10 + (int)st);
    }
    return child;
}

static int exit_of(pid_t child) {
    int status = 0;
    ENSURE(child > 0 && waitpid(child, &status, 0) == child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int exists(const char *path) {
    return access(path, F_OK) == 0;
}

/* Ranks 1 and 2 in child processes leave their settings and wait; rank 0 (here) comes after a
 * pause, hands out the id, and every rank's file is gone afterwards. */
static void test_exchange_three_processes(void) {
    char path[512], file[600];
    temp_path(path, sizeof path, "id");
    remove(path);
    unsigned char id[SIM_NCCL_ID_BYTES];
    fake_id(id, 11);
    const pid_t r1 = start_reader(path, 1, 3, kRun, id);
    const struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL); /* rank 1 is waiting before rank 0 starts; rank 2 comes late */
    const pid_t r2 = start_reader(path, 2, 3, kRun, id);
    sim_error err;
    const sim_dist_exchange x = exchange(path, 0, 3, kRun, 20.0);
    ENSURE_MSG(sim_dist_write_id(&x, id, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(exit_of(r1) == 0 && exit_of(r2) == 0, "ranks 1 and 2 did not get the id");
    for (int k = 1; k <= 2; ++k) {
        snprintf(file, sizeof file, "%s.rank%d", path, k);
        ENSURE_MSG(!exists(file), "%s left behind", file);
    }
    /* a file that is there already is refused: another run's id must not be reused */
    ENSURE(sim_dist_write_id(&x, id, &err) == SIM_IO && strstr(err.message, "exists"));
    remove(path);
}

/* Rank 1 runs other settings: rank 0 refuses, names both, and rank 1 stops with its reason;
 * no file is left and nobody waits for the timeout. */
static void test_settings_differ(void) {
    char path[512];
    temp_path(path, sizeof path, "differ");
    remove(path);
    unsigned char id[SIM_NCCL_ID_BYTES];
    fake_id(id, 5);
    const pid_t r1 = start_reader(path, 1, 2, "N 2000, 5 frames of 1 steps", id);
    sim_error err;
    const sim_dist_exchange x = exchange(path, 0, 2, kRun, 20.0);
    const double t0 = sim_now_ms();
    ENSURE(sim_dist_write_id(&x, id, &err) == SIM_BAD_ARGUMENT);
    printf("  rank 0: %s\n", err.message);
    ENSURE(strstr(err.message, "N 1000") && strstr(err.message, "rank 1 runs N 2000"));
    ENSURE_MSG(exit_of(r1) == 10 + SIM_BAD_ARGUMENT, "rank 1 did not stop with rank 0's refusal");
    ENSURE((sim_now_ms() - t0) < 10e3);
    ENSURE(!exists(path));
}

/* Rank 1 never comes: rank 0 says so after its wait instead of entering NCCL; a raised stop
 * flag ends either side's wait. */
static void test_missing_rank_and_stop(void) {
    char path[512];
    temp_path(path, sizeof path, "missing");
    remove(path);
    unsigned char id[SIM_NCCL_ID_BYTES], got[SIM_NCCL_ID_BYTES];
    fake_id(id, 7);
    sim_error err;
    clear_env();
    const sim_dist_exchange x0 = exchange(path, 0, 2, kRun, 0.2);
    ENSURE(sim_dist_write_id(&x0, id, &err) == SIM_IO);
    ENSURE(strstr(err.message, "rank 1 did not come") != NULL);
    ENSURE(!exists(path));
    static volatile sig_atomic_t flag = 1;
    sim_dist_exchange xs = exchange(path, 0, 2, kRun, 60.0);
    xs.stop = &flag;
    ENSURE(sim_dist_write_id(&xs, id, &err) == SIM_INTERRUPTED);
    xs.rank = 1;
    ENSURE(sim_dist_read_id(&xs, got, &err) == SIM_INTERRUPTED);
    char file[600];
    snprintf(file, sizeof file, "%s.rank1", path);
    ENSURE(!exists(file) && !exists(path));
}

/* Rank 0's id files that are not this run's: an id left for another world or job, or not an
 * id file at all (written here by hand, as a stale file would be). */
static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_wrong_files(void) {
    char path[512];
    temp_path(path, sizeof path, "wrong");
    remove(path);
    unsigned char got[SIM_NCCL_ID_BYTES];
    sim_error err;
    clear_env();
    const sim_dist_exchange x = exchange(path, 1, 2, kRun, 0.2);
    /* nothing comes: a clear message after the wait */
    ENSURE(sim_dist_read_id(&x, got, &err) == SIM_IO);
    ENSURE(strstr(err.message, "is rank 0 running") != NULL);
    char hex[2 * SIM_NCCL_ID_BYTES + 2];
    memset(hex, 'a', 2 * SIM_NCCL_ID_BYTES);
    hex[2 * SIM_NCCL_ID_BYTES] = '\n';
    hex[2 * SIM_NCCL_ID_BYTES + 1] = '\0';
    char text[1024];
    /* another world */
    snprintf(text, sizeof text, "nbsim-nccl-id 1 world 4 job -\n%s", hex);
    write_file(path, text);
    ENSURE(sim_dist_read_id(&x, got, &err) == SIM_IO);
    ENSURE(strstr(err.message, "4 ranks") != NULL);
    /* another job's */
    setenv("SLURM_JOB_ID", "101", 1);
    snprintf(text, sizeof text, "nbsim-nccl-id 1 world 2 job slurm:100.-\n%s", hex);
    write_file(path, text);
    ENSURE(sim_dist_read_id(&x, got, &err) == SIM_IO);
    ENSURE(strstr(err.message, "job") != NULL);
    setenv("SLURM_JOB_ID", "100", 1);
    ENSURE(sim_dist_read_id(&x, got, &err) == SIM_OK && got[0] == 0xaa);
    /* not an id file */
    write_file(path, "hello\n");
    ENSURE(sim_dist_read_id(&x, got, &err) == SIM_IO);
    remove(path);
    clear_env();
}

static const ensure_test tests[] = {
    {"dist_env", test_env},
    {"dist_exchange_three_processes", test_exchange_three_processes},
    {"dist_settings_differ", test_settings_differ},
    {"dist_missing_rank_and_stop", test_missing_rank_and_stop},
    {"dist_wrong_files", test_wrong_files},
};

ENSURE_MAIN(tests)
