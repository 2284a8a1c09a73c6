/* SPDX-License-Identifier: MIT
 * nbsim — running bench/plot.py under a python3 that has matplotlib; --plot's picture written
 * as every output is (nbsim/output_file.h). */
#define _POSIX_C_SOURCE 200809L /* posix_spawn, readlink */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "nbsim/output_file.h"

extern char **environ;

#define PLOT_ARGS_MAX 16

/* Runs args quietly (stdout/stderr to /dev/null when quiet) and returns its exit status, or -1
 * when it could not be started. */
static int run_program(char *const *args, int quiet) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    const int rc = posix_spawnp(&pid, args[0], &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int app_plot_script(char *out, size_t cap) {
    const char *env = getenv("NBSIM_PLOT_SCRIPT");
    if (env != NULL && env[0] != '\0') {
        snprintf(out, cap, "%s", env);
        return file_exists(out) ? 0 : -1;
    }
    char dir[4096];
    if (app_program_dir(dir, sizeof dir) != 0) {
        snprintf(out, cap, "share/nbsim/plot.py");
        return -1;
    }
    snprintf(out, cap, "%s/../share/nbsim/plot.py", dir);
    return file_exists(out) ? 0 : -1;
}

/* The first of $NBSIM_PYTHON, python3, /usr/bin/python3 that imports matplotlib, or NULL. */
static const char *find_python(void) {
    const char *candidates[] = {getenv("NBSIM_PYTHON"), "python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; ++i) {
        if (candidates[i] == NULL || candidates[i][0] == '\0') {
            continue;
        }
        char *check[] = {(char *)candidates[i], "-c", "import matplotlib", NULL};
        if (run_program(check, 1) == 0) {
            return candidates[i];
        }
    }
    return NULL;
}

int app_plot_run(const char *what, const char *const *args, int nargs) {
    char script[4200];
    if (app_plot_script(script, sizeof script) != 0) {
        fprintf(stderr, "nbsim: %s: the plot script %s is missing (reinstall nbsim)\n", what,
                script);
        return -1;
    }
    char *argv[PLOT_ARGS_MAX + 3];
    if (nargs > PLOT_ARGS_MAX) {
        nargs = PLOT_ARGS_MAX;
    }
    const char *python = find_python();
    if (python == NULL) {
        fprintf(stderr,
                "nbsim: %s: no python3 with matplotlib found; install it (Debian: apt-get install "
                "python3-matplotlib) and run python3 %s by hand\n",
                what, script);
        return -1;
    }
    argv[0] = (char *)python;
    argv[1] = script;
    for (int a = 0; a < nargs; ++a) {
        argv[2 + a] = (char *)args[a];
    }
    argv[2 + nargs] = NULL;
    if (run_program(argv, 0) != 0) {
        fprintf(stderr, "nbsim: %s: %s %s failed (the CSV files are complete)\n", what, python,
                script);
        return -1;
    }
    return 0;
}

sim_status app_plotter_find(app_plotter *p, const char *what, sim_error *err) {
    if (app_plot_script(p->script, sizeof p->script) != 0) {
        return sim_fail(err, SIM_UNSUPPORTED, "%s: the plot script %s is missing (reinstall nbsim)",
                        what, p->script);
    }
    const char *python = find_python();
    if (python == NULL) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "%s: no python3 with matplotlib found: install it (Debian: apt-get install "
                        "python3-matplotlib), or leave %s out",
                        what, what);
    }
    snprintf(p->python, sizeof p->python, "%s", python);
    return SIM_OK;
}

/* The last line of what the script said on stderr (a traceback's is its exception), or "". */
static void last_line(FILE *f, char *out, size_t cap) {
    out[0] = '\0';
    if (f == NULL || fseek(f, 0, SEEK_SET) != 0) {
        return;
    }
    char line[1024];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] != '\0') {
            snprintf(out, cap, "%s", line);
        }
    }
}

/* Runs argv with its standard output read into *data (malloc'ed, *size bytes) and its standard
 * error into errors; returns the exit status, or -1 when it could not be run. */
static int run_capture(char *const *argv, FILE *errors, unsigned char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    int fds[2];
    if (pipe(fds) != 0) {
        return -1;
    }
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    if (errors != NULL) {
        posix_spawn_file_actions_adddup2(&fa, fileno(errors), 2);
    }
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    const int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    size_t cap = 0;
    unsigned char chunk[65536];
    int lost = 0;
    for (;;) {
        const ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        if (*size + (size_t)got > cap) {
            cap = 2 * (*size + (size_t)got);
            unsigned char *grown = realloc(*data, cap);
            if (grown == NULL) {
                lost = 1; /* read on to the end, so the script is not stopped by a full pipe */
                continue;
            }
            *data = grown;
        }
        if (!lost) {
            memcpy(*data + *size, chunk, (size_t)got);
            *size += (size_t)got;
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    if (lost) {
        *size = 0;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

sim_status app_plot_png(const app_plotter *p, const char *log_path, const char *out_path,
                        sim_error *err) {
    char *argv[] = {(char *)p->python, (char *)p->script, (char *)log_path, "--out", "-", NULL};
    FILE *errors = tmpfile();
    unsigned char *png = NULL;
    size_t size = 0;
    const int code = run_capture(argv, errors, &png, &size);
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    sim_status st = SIM_OK;
    if (code != 0) {
        char said[1024];
        last_line(errors, said, sizeof said);
        st = said[0] != '\0' ? sim_fail(err, SIM_IO, "%s", said)
                             : sim_fail(err, SIM_IO, "%s %s could not draw '%s' (exit %d)",
                                        p->python, p->script, log_path, code);
    } else if (size < sizeof signature || memcmp(png, signature, sizeof signature) != 0) {
        st = sim_fail(err, SIM_IO, "%s wrote no PNG for '%s'", p->script, log_path);
    }
    if (errors != NULL) {
        fclose(errors);
    }
    if (st == SIM_OK) {
        sim_output out;
        st = sim_output_open(&out, out_path, err);
        if (st == SIM_OK) {
            (void)fwrite(png, 1, size, out.file); /* a write error is the commit's */
            st = sim_output_commit(&out, err);
        }
    }
    free(png);
    return st;
}
