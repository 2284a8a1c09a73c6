/* SPDX-License-Identifier: MIT
 * nbsim — the viewer module's entry point. The module (nbsim-viewer.so, beside the program) is
 * loaded with dlopen only when a window is wanted; app/viewer_loader.c finds this symbol. */
#ifndef APP_VIEWER_H
#define APP_VIEWER_H

#include "options.h"

#define APP_VIEWER_MODULE "nbsim-viewer.so"
#define APP_VIEWER_ENTRY "app_viewer_run"

#if defined(__GNUC__)
#define APP_VIEWER_EXPORT __attribute__((visibility("default")))
#else
#define APP_VIEWER_EXPORT
#endif

/* Opens the window on opt's scene and runs until the user quits, --exit-after frames were
 * drawn, or Ctrl-C. Returns the process exit code: 0 ok, 1 runtime failure (no display, no
 * OpenGL 3.3, shader failure, the --screenshot at exit could not be written, the log could not
 * be written), 2 bad input (unknown scene, bad parameters), 130 interrupted. */
APP_VIEWER_EXPORT int app_viewer_run(const app_options *opt);

typedef int (*app_viewer_run_fn)(const app_options *opt);

#endif /* APP_VIEWER_H */
