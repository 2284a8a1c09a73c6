/* SPDX-License-Identifier: MIT
 * nbsim — screenshots of the current framebuffer as PNG. Written to "<path>.tmp" and renamed,
 * so a file at <path> is always a complete image. */
#ifndef RENDER_SCREENSHOT_H
#define RENDER_SCREENSHOT_H

#include "nbsim/base.h"

/* Reads the back buffer (call after drawing, before swapping) of size width x height [px]. */
sim_status render_screenshot_write(const char *path, int width, int height, sim_error *err);

#endif /* RENDER_SCREENSHOT_H */
