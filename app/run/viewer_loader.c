/* SPDX-License-Identifier: MIT
 * nbsim — finding and loading the viewer module. */
#define _GNU_SOURCE
#include "viewer_loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "signals.h"
#include "viewer.h"

int app_run_viewer(const app_options *opt) {
    const char *display = getenv("DISPLAY");
    const char *wayland = getenv("WAYLAND_DISPLAY");
    if ((display == NULL || !*display) && (wayland == NULL || !*wayland)) {
        fprintf(stderr, "nbsim: cannot open a window (no display: DISPLAY is not set); "
                        "use --frames N for a headless run\n");
        return APP_EXIT_FAILURE;
    }
    char dir[4096], path[4200];
    if (app_program_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, "nbsim: cannot locate the viewer module %s\n", VIEWER_MODULE);
        return APP_EXIT_FAILURE;
    }
    snprintf(path, sizeof path, "%s/%s", dir, VIEWER_MODULE);
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (module == NULL) {
        fprintf(stderr,
                "nbsim: the viewer is not available (%s); this build may lack GLFW/GLEW — "
                "use --frames N for a headless run\n",
                dlerror());
        return APP_EXIT_FAILURE;
    }
    viewer_run_fn run = (viewer_run_fn)dlsym(module, VIEWER_ENTRY);
    if (run == NULL) {
        fprintf(stderr, "nbsim: %s has no entry point %s\n", path, VIEWER_ENTRY);
        dlclose(module);
        return APP_EXIT_FAILURE;
    }
    sim_session_config session = opt->session;
    session.config.stop = app_stop_flag(); /* signals.h: the backend stops on it */
    const viewer_settings settings = {&session,
                                      opt->width,
                                      opt->height,
                                      opt->vsync,
                                      opt->exit_after,
                                      opt->sweep,
                                      opt->log_path,
                                      opt->summary_path,
                                      opt->save_state_path,
                                      opt->dump_path,
                                      opt->dump_every,
                                      opt->screenshot_path,
                                      opt->quiet,
                                      app_stop_signals_begin,
                                      app_stop_signals_end,
                                      app_stop_signal,
                                      app_signal_name,
                                      opt->draw_max};
    viewer_outcome outcome = {SIM_OK, 0, 0};
    run(&settings, &outcome);
    /* The module stays loaded: GL drivers may keep threads and atexit hooks in it. */
    if (outcome.open_status != SIM_OK) {
        return app_setup_exit_code(outcome.open_status);
    }
    if (outcome.failed) {
        return APP_EXIT_FAILURE;
    }
    return outcome.signal != 0 ? 128 + outcome.signal : APP_EXIT_OK;
}
