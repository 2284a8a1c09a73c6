/* SPDX-License-Identifier: MIT
 * nbsim — loads the viewer module (nbsim-viewer.so, beside the program) only when a window is
 * wanted, so headless runs never load GL, GLFW or GLEW. */
#ifndef APP_VIEWER_LOADER_H
#define APP_VIEWER_LOADER_H

#include "options.h"

int app_run_viewer(const app_options *opt);

#endif /* APP_VIEWER_LOADER_H */
