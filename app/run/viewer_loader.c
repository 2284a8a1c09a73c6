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
        fprintf(stderr, "nbsim: cannot locate the viewer module %s\n", APP_VIEWER_MODULE);
        return APP_EXIT_FAILURE;
    }
    snprintf(path, sizeof path, "%s/%s", dir, APP_VIEWER_MODULE);
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (module == NULL) {
        fprintf(stderr,
                "nbsim: the viewer is not available (%s); this build may lack GLFW/GLEW — "
                "use --frames N for a headless run\n",
                dlerror());
        return APP_EXIT_FAILURE;
    }
    app_viewer_run_fn run = (app_viewer_run_fn)dlsym(module, APP_VIEWER_ENTRY);
    if (run == NULL) {
        fprintf(stderr, "nbsim: %s has no entry point %s\n", path, APP_VIEWER_ENTRY);
        dlclose(module);
        return APP_EXIT_FAILURE;
    }
    int code = run(opt);
    /* The module stays loaded: GL drivers may keep threads and atexit hooks in it. */
    return code;
}
