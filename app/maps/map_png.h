/* SPDX-License-Identifier: MIT
 * nbsim — pictures of a thread map (`nbsim maps --png`): the tile domain with every tile coloured
 * by the block that owns it, and every launch's grid of blocks with the wasted ones greyed. */
#ifndef APP_MAP_PNG_H
#define APP_MAP_PNG_H

#include "nbsim/maps.h"

/* Largest n drawn (one pixel per tile and block at the least). */
#define APP_MAP_PNG_MAX_2D 1024u
#define APP_MAP_PNG_MAX_3D 64u

/* Draws plan and writes it to path (see app_canvas_write_png: never a partial file). lines are
 * the header text (title first), line_count <= 4. */
sim_status app_map_png_write(const sim_map_plan *plan, const char *const *lines, int line_count,
                             const char *path, sim_error *err);

#endif /* APP_MAP_PNG_H */
