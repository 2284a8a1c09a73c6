/* SPDX-License-Identifier: MIT
 * nbsim — the program's exit codes for a status. */
#include "app.h"

int app_exit_code(sim_status status) {
    switch (status) {
    case SIM_OK:
        return APP_EXIT_OK;
    case SIM_BAD_ARGUMENT:
    case SIM_PARSE:
        return APP_EXIT_USAGE;
    case SIM_INTERRUPTED:
        return APP_EXIT_INTERRUPT;
    default:
        return APP_EXIT_FAILURE;
    }
}
