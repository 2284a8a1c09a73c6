/* SPDX-License-Identifier: MIT
 * nbsim — the program's subcommands and exit codes. */
#ifndef APP_H
#define APP_H

#include <stddef.h>

#include "nbsim/base.h"

/* Exit codes of the nbsim program. */
enum {
    APP_EXIT_OK = 0,
    APP_EXIT_FAILURE = 1,    /* runtime failure: no device, out of memory, I/O, blow-up */
    APP_EXIT_USAGE = 2,      /* bad command line or input */
    APP_EXIT_INTERRUPT = 130 /* stopped by Ctrl-C (SIGINT) after flushing the log */
};

/* The folder the running program is in (the viewer module and share/ are found from it): 0, or
 * -1 when it cannot be told. */
int app_program_dir(char *out, size_t cap);

/* Exit code for a sim_status: 2 for bad input, 1 for runtime failures, 128 + S interrupted by
 * the stop signal S (app_stop_signal; 130 when none was recorded). */
int app_exit_code(sim_status status);
/* The same for a failure before the first frame (building the scene, creating the backend):
 * there, running out of memory means the N asked for does not fit this machine, which the user
 * fixes by asking for less, as with any other bad input (2). */
int app_setup_exit_code(sim_status status);

int app_maps_main(int argc, char **argv);  /* nbsim maps …   (map inspector) */
int app_bench_main(int argc, char **argv); /* nbsim bench …  (benchmarks) */
int app_sim_main(int argc, char **argv);   /* nbsim [--frames F] …  (simulator) */

#endif /* APP_H */
