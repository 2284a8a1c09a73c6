/* SPDX-License-Identifier: MIT
 * nbsim — running bench/plot.py under a python3 that has matplotlib. */
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
    const char *env_python = getenv("NBSIM_PYTHON");
    const char *candidates[] = {env_python, "python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; ++i) {
        if (candidates[i] == NULL || candidates[i][0] == '\0') {
            continue;
        }
        char *check[] = {(char *)candidates[i], "-c", "import matplotlib", NULL};
        if (run_program(check, 1) != 0) {
            continue;
        }
        argv[0] = (char *)candidates[i];
        argv[1] = script;
        for (int a = 0; a < nargs; ++a) {
            argv[2 + a] = (char *)args[a];
        }
        argv[2 + nargs] = NULL;
        if (run_program(argv, 0) != 0) {
            fprintf(stderr, "nbsim: %s: %s %s failed (the CSV files are complete)\n", what,
                    candidates[i], script);
            return -1;
        }
        return 0;
    }
    fprintf(stderr,
            "nbsim: %s: no python3 with matplotlib found; install it (Debian: apt-get install "
            "python3-matplotlib) and run python3 %s by hand\n",
            what, script);
    return -1;
}
