/* SPDX-License-Identifier: MIT
 * nbsim — headless batch runs: no window, no GL; returns the process exit code. */
#ifndef APP_HEADLESS_H
#define APP_HEADLESS_H

#include "options.h"

int app_run_headless(const app_options *opt);

#endif /* APP_HEADLESS_H */
