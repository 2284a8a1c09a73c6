/* SPDX-License-Identifier: MIT
 * nbsim — the program's exit codes for a status, and where the program is. */
#define _POSIX_C_SOURCE 200809L /* readlink */
#include "app.h"
#include "signals.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int app_program_dir(char *out, size_t cap) {
    char exe[4096];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        return -1;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) {
        return -1;
    }
    *slash = '\0';
    return snprintf(out, cap, "%s", exe) < (int)cap ? 0 : -1;
}

int app_exit_code(sim_status status) {
    switch (status) {
    case SIM_OK:
        return APP_EXIT_OK;
    case SIM_BAD_ARGUMENT:
    case SIM_PARSE:
        return APP_EXIT_USAGE;
    case SIM_INTERRUPTED: { /* 128 + the signal that stopped it (a wait on a FIFO, a run) */
        const int sig = app_stop_signal();
        return sig > 0 ? 128 + sig : APP_EXIT_INTERRUPT;
    }
    default:
        return APP_EXIT_FAILURE;
    }
}

int app_setup_exit_code(sim_status status) {
    return status == SIM_OUT_OF_MEMORY ? APP_EXIT_USAGE : app_exit_code(status);
}
