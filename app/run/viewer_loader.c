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

#define VIEWER_MODULE "nbsim-viewer.so"

typedef int (*viewer_entry)(const app_options *opt);

/* <directory of this executable>/nbsim-viewer.so */
static int module_path(char *out, size_t cap) {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        return -1;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) {
        return -1;
    }
    *slash = '\0';
    return snprintf(out, cap, "%s/%s", exe, VIEWER_MODULE) < (int)cap ? 0 : -1;
}

int app_run_viewer(const app_options *opt) {
    const char *display = getenv("DISPLAY");
    const char *wayland = getenv("WAYLAND_DISPLAY");
    if ((display == NULL || !*display) && (wayland == NULL || !*wayland)) {
        fprintf(stderr, "nbsim: cannot open a window (no display: DISPLAY is not set); "
                        "use --frames N for a headless run\n");
        return APP_EXIT_FAILURE;
    }
    char path[4200];
    if (module_path(path, sizeof path) != 0) {
        fprintf(stderr, "nbsim: cannot locate the viewer module %s\n", VIEWER_MODULE);
        return APP_EXIT_FAILURE;
    }
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (module == NULL) {
        fprintf(stderr,
                "nbsim: the viewer is not available (%s); this build may lack GLFW/GLEW — "
                "use --frames N for a headless run\n",
                dlerror());
        return APP_EXIT_FAILURE;
    }
    viewer_entry run = (viewer_entry)dlsym(module, "app_viewer_run");
    if (run == NULL) {
        fprintf(stderr, "nbsim: %s has no entry point app_viewer_run\n", path);
        dlclose(module);
        return APP_EXIT_FAILURE;
    }
    int code = run(opt);
    /* The module stays loaded: GL drivers may keep threads and atexit hooks in it. */
    return code;
}
