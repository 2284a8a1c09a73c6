/* SPDX-License-Identifier: MIT
 * nbsim — the simulator command: parse, then a headless run or the viewer. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "headless.h"
#include "viewer_loader.h"

int app_sim_main(int argc, char **argv) {
    static app_options opt; /* large (paths); static keeps it off the stack */
    if (argc == 2 && strcmp(argv[1], "--help-reference") == 0) {
        /* Hidden: docs/reference.md (scripts/gen_reference.sh). */
        app_options_print_reference(stdout);
        return fflush(stdout) == 0 ? APP_EXIT_OK : APP_EXIT_FAILURE;
    }
    int r = app_options_parse(argc, argv, &opt);
    if (r == 1) {
        return APP_EXIT_OK;
    }
    if (r != 0) {
        return APP_EXIT_USAGE;
    }
    /* Every output is checked before any work, so a bad path never costs a run. */
    sim_error err;
    const sim_status st = app_options_check_outputs(&opt, &err);
    if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return app_exit_code(st);
    }
    if (opt.session.frames > 0) {
        return app_run_headless(&opt);
    }
    return app_run_viewer(&opt);
}
