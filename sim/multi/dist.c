/* SPDX-License-Identifier: MIT
 * nbsim — ranks from the launcher, and the NCCL id passed through a file (dist.h). */
#define _POSIX_C_SOURCE 200809L
#include "nbsim/dist.h"

#include "nbsim/output_file.h"
#include "multi/work_split.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The variable's value as a whole number >= 0, or -1 when unset; -2 when set but not one. */
static long env_number(const char *name) {
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    const long l = strtol(v, &end, 10);
    return errno == 0 && end != v && *end == '\0' && l >= 0 && l <= 1000000 ? l : -2;
}

sim_status sim_dist_from_env(sim_dist_env *out, int *found, sim_error *err) {
    static const struct {
        const char *source, *rank, *world, *world_alt;
    } launchers[] = {
        {"OMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL},
        {"PMI", "PMI_RANK", "PMI_SIZE", NULL},
        /* In a batch script SLURM_NTASKS counts the tasks a later srun would start; a task of a
         * step has SLURM_STEP_NUM_TASKS, so it comes first. */
        {"SLURM", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"},
    };
    static const char *const locals[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                         "SLURM_LOCALID", "LOCAL_RANK"};
    *found = 0;
    memset(out, 0, sizeof *out);
    out->local_rank = -1;
    for (size_t k = 0; k < sizeof launchers / sizeof launchers[0]; ++k) {
        const long rank = env_number(launchers[k].rank);
        long world = env_number(launchers[k].world);
        const char *world_name = launchers[k].world;
        if (world == -1 && launchers[k].world_alt != NULL) {
            world = env_number(launchers[k].world_alt);
            world_name = launchers[k].world_alt;
        }
        if (rank == -1 && world == -1) {
            continue;
        }
        if (rank < 0 || world < 1 || rank >= world || world > SIM_MAX_RANKS) {
            return sim_fail(
                err, SIM_BAD_ARGUMENT, "%s='%s' and %s='%s' are not a rank of a run of 1..%d ranks",
                launchers[k].rank, getenv(launchers[k].rank) ? getenv(launchers[k].rank) : "",
                world_name, getenv(world_name) ? getenv(world_name) : "", SIM_MAX_RANKS);
        }
        out->rank = (int)rank;
        out->world = (int)world;
        out->source = launchers[k].source;
        *found = 1;
        break;
    }
    for (size_t k = 0; *found && k < sizeof locals / sizeof locals[0]; ++k) {
        const long l = env_number(locals[k]);
        if (l == -2) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "%s='%s' is not a local rank", locals[k],
                            getenv(locals[k]));
        }
        if (l >= 0) {
            out->local_rank = (int)l;
            break;
        }
    }
    return SIM_OK;
}

/* The launcher's job, so that ranks never take an id another job left: "" when unknown. */
static void job_token(char *buf, size_t cap) {
    const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *pmix = getenv("PMIX_NAMESPACE"), *ompi = getenv("OMPI_MCA_ess_base_jobid");
    if (slurm != NULL) {
        snprintf(buf, cap, "slurm:%s.%s", slurm, step != NULL ? step : "-");
    } else if (pmix != NULL) {
        snprintf(buf, cap, "pmix:%s", pmix);
    } else if (ompi != NULL) {
        snprintf(buf, cap, "ompi:%s", ompi);
    } else {
        buf[0] = '\0';
    }
    for (char *c = buf; *c; ++c) { /* one word on the line */
        *c = (*c == ' ' || *c == '\n') ? '_' : *c;
    }
}

#define ID_MAGIC "nbsim-nccl-id 1"
#define RANK_MAGIC "nbsim-nccl-rank 1"

static void rank_path(char *buf, size_t cap, const char *path, int rank) {
    snprintf(buf, cap, "%s.rank%d", path, rank);
}

static void pause_50ms(void) {
    const struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static int stopped(const sim_dist_exchange *x) {
    return x->stop != NULL && *x->stop != 0;
}

/* Reads a line into buf without its newline; 0 at the end of the file. */
static int read_line(FILE *f, char *buf, size_t cap) {
    if (fgets(buf, (int)cap, f) == NULL) {
        return 0;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return 1;
}

/* 1 when rank k's file is there, of this world and job (its settings into run), else 0 (not
 * yet, or another job's left-over, which the rank overwrites when it starts). */
static int parse_rank(const char *path, int world, const char *token, char *run, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    char line[512], job[300], settings[SIM_DIST_RUN_MAX + 8];
    int file_world = 0, rank = 0;
    const int ok =
        read_line(f, line, sizeof line) &&
        sscanf(line, RANK_MAGIC " rank %d world %d job %299s", &rank, &file_world, job) == 3 &&
        read_line(f, settings, sizeof settings) && strncmp(settings, "run ", 4) == 0;
    fclose(f);
    if (!ok || file_world != world || (token[0] != '\0' && strcmp(job, token) != 0)) {
        return 0;
    }
    snprintf(run, cap, "%s", settings + 4);
    return 1;
}

/* The id file: the header, then the id in hex, or "refused" and a line saying why. */
static sim_status write_answer(const sim_dist_exchange *x, const char *token,
                               const unsigned char id[SIM_NCCL_ID_BYTES], const char *refusal,
                               sim_error *err) {
    sim_output out;
    SIM_TRY(sim_output_open(&out, x->path, err));
    fprintf(out.file, "%s world %d job %s\n", ID_MAGIC, x->world, token[0] ? token : "-");
    if (refusal != NULL) {
        fprintf(out.file, "refused\nwhy %s\n", refusal);
    } else {
        for (int k = 0; k < SIM_NCCL_ID_BYTES; ++k) {
            fprintf(out.file, "%02x", id[k]);
        }
        fputc('\n', out.file);
    }
    return sim_output_commit(&out, err);
}

sim_status sim_dist_write_id(const sim_dist_exchange *x, const unsigned char id[SIM_NCCL_ID_BYTES],
                             sim_error *err) {
    struct stat st;
    if (stat(x->path, &st) == 0) {
        return sim_fail(err, SIM_IO,
                        "--nccl-id: '%s' exists (left by an earlier run?): remove it or name a "
                        "new file",
                        x->path);
    }
    char token[256];
    job_token(token, sizeof token);
    const double start = sim_now_ms();
    char refusal[3 * SIM_DIST_RUN_MAX] = "";
    for (int k = 1; k < x->world && !refusal[0]; ++k) {
        char file[SIM_PATH_MAX + 32], run[SIM_DIST_RUN_MAX + 8];
        rank_path(file, sizeof file, x->path, k);
        while (!parse_rank(file, x->world, token, run, sizeof run)) {
            if (stopped(x)) {
                return sim_fail(err, SIM_INTERRUPTED, "stopped while waiting for rank %d", k);
            }
            const double waited = (sim_now_ms() - start) * 1e-3;
            if (waited >= x->timeout_s) {
                return sim_fail(err, SIM_IO,
                                "--nccl-id: rank %d did not come within %.0f s (no '%s'): start "
                                "every rank with the same --nccl-id on a path they all see",
                                k, waited, file);
            }
            pause_50ms();
        }
        if (strcmp(run, x->run) != 0) {
            snprintf(refusal, sizeof refusal,
                     "the ranks' settings differ: rank 0 runs %s; rank %d runs %s", x->run, k, run);
        }
    }
    if (!refusal[0]) {
        return write_answer(x, token, id, NULL, err);
    }
    /* The refusal stays until every rank has read it (each removes its own file then). */
    SIM_TRY(write_answer(x, token, id, refusal, err));
    for (int k = 1; k < x->world; ++k) {
        char file[SIM_PATH_MAX + 32];
        rank_path(file, sizeof file, x->path, k);
        const double since = sim_now_ms();
        while (stat(file, &st) == 0 && (sim_now_ms() - since) < 10e3 && !stopped(x)) {
            pause_50ms();
        }
    }
    (void)remove(x->path);
    return sim_fail(err, SIM_BAD_ARGUMENT, "--nccl-id: %s", refusal);
}

/* 1 when the file holds a complete id for this world and job (into id), 0 when not (yet), -1
 * when it is another run's and -2 when rank 0 refused this run (why says which). */
static int parse_id(const char *path, int world, const char *token,
                    unsigned char id[SIM_NCCL_ID_BYTES], char *why, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    char line[512], hex[3 * SIM_DIST_RUN_MAX + 8], job[300];
    int file_world = 0, ok = 0, refused = 0;
    if (read_line(f, line, sizeof line) &&
        sscanf(line, ID_MAGIC " world %d job %299s", &file_world, job) == 2 &&
        read_line(f, hex, sizeof hex)) {
        if (strcmp(hex, "refused") == 0) {
            refused = read_line(f, hex, sizeof hex) && strncmp(hex, "why ", 4) == 0;
            ok = refused;
        } else if (strlen(hex) >= 2 * SIM_NCCL_ID_BYTES) {
            ok = 1;
            for (int k = 0; k < SIM_NCCL_ID_BYTES && ok; ++k) {
                unsigned v = 0;
                ok = sscanf(hex + 2 * k, "%2x", &v) == 1;
                id[k] = (unsigned char)v;
            }
        }
    }
    fclose(f);
    if (!ok) {
        return 0; /* not written by nbsim, or not complete: rename makes the latter rare */
    }
    if (file_world != world) {
        snprintf(why, cap, "it is for a run of %d ranks, this one has %d", file_world, world);
        return -1;
    }
    if (token[0] != '\0' && strcmp(job, token) != 0) {
        snprintf(why, cap, "it is job %.200s's, this is job %.200s", job, token);
        return -1;
    }
    if (refused) {
        snprintf(why, cap, "%s", hex + 4);
        return -2;
    }
    return 1;
}

sim_status sim_dist_read_id(const sim_dist_exchange *x, unsigned char id[SIM_NCCL_ID_BYTES],
                            sim_error *err) {
    char token[256], why[3 * SIM_DIST_RUN_MAX + 64] = "", mine[SIM_PATH_MAX + 32];
    job_token(token, sizeof token);
    rank_path(mine, sizeof mine, x->path, x->rank);
    sim_output out;
    SIM_TRY(sim_output_open(&out, mine, err));
    fprintf(out.file, "%s rank %d world %d job %s\nrun %s\n", RANK_MAGIC, x->rank, x->world,
            token[0] ? token : "-", x->run);
    SIM_TRY(sim_output_commit(&out, err));
    const double start = sim_now_ms();
    sim_status st = SIM_OK;
    for (;;) {
        const int r = parse_id(x->path, x->world, token, id, why, sizeof why);
        const double waited = (sim_now_ms() - start) * 1e-3;
        if (r == 1) {
            break;
        }
        if (r == -2) {
            st = sim_fail(err, SIM_BAD_ARGUMENT, "--nccl-id: rank 0 refused the run: %s", why);
            break;
        }
        if (stopped(x)) {
            st = sim_fail(err, SIM_INTERRUPTED, "stopped while waiting for rank 0's NCCL id");
            break;
        }
        if (waited >= x->timeout_s) {
            st = r < 0 ? sim_fail(err, SIM_IO, "--nccl-id: '%s' is not this run's id: %s", x->path,
                                  why)
                       : sim_fail(err, SIM_IO,
                                  "--nccl-id: no NCCL id in '%s' after %.0f s: is rank 0 running, "
                                  "and is the file on a path every host sees?",
                                  x->path, waited);
            break;
        }
        pause_50ms();
    }
    (void)remove(mine); /* rank 0 has read it, or the run is over */
    return st;
}
