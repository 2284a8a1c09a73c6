/* SPDX-License-Identifier: MIT
 * nbsim — the simulator command: parse, then a headless run or the viewer. */
#include <stdio.h>
#include <string.h>

#include "nbsim/memory_plan.h"

#include "app.h"
#include "headless.h"
#include "viewer_loader.h"

/* --dry-run: the run's GPU memory planned, printed, and nothing built: exit 0 when it fits, 2
 * (and the refusal's line) when it does not. */
static int app_dry_run(const app_options *o) {
    sim_memory_plan plan;
    sim_error err;
    sim_status st = sim_session_memory_plan(&o->session, &plan, &err);
    if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return app_setup_exit_code(st);
    }
    char text[4096];
    sim_memory_plan_text(&plan, text, sizeof text);
    printf("GPU memory for %u bodies (planned; the bodies' radii assumed, nothing built):\n%s",
           plan.n, text);
    if (plan.free_bytes == 0) {
        printf("no CUDA device: the CPU reference runs in host memory (no GPU plan)\n");
        return APP_EXIT_OK;
    }
    printf("the GPU has %.2f of %.2f GB free; at most %u bodies fit with these settings (the "
           "largest N these settings take: %u)\n",
           (double)plan.free_bytes * 1e-9, (double)plan.total_bytes * 1e-9, plan.largest_n,
           plan.limit);
    st = sim_memory_plan_check(&plan, "the GPU", &err);
    if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return app_setup_exit_code(st);
    }
    return APP_EXIT_OK;
}

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
    if (opt.dry_run) {
        return app_dry_run(&opt);
    }
    if (opt.session.frames > 0) {
        return app_run_headless(&opt);
    }
    return app_run_viewer(&opt);
}
