/* SPDX-License-Identifier: MIT
 * nbsim — the viewer's hotkeys, one text shared by --help and the on-screen help panel. */
#ifndef VIEWER_KEYS_H
#define VIEWER_KEYS_H

#define VIEWER_KEYS_HELP                                                                           \
    "Viewer keys:\n"                                                                               \
    "  M / Shift+M   next / previous pair map      T / Shift+T   next / previous triplet map\n"    \
    "  S             sweep: time every map in turn  B             map comparison panel\n"          \
    "  I             the map at work (inset)        K             culled contacts on/off\n"        \
    "  A             triplet forces on/off          Space         pause\n"                         \
    "  N or Right    one step while paused          R             reset the scene\n"               \
    "  1, 2, ...     scene: the built-in scenes, in --help's order\n"                             \
    "  C             colour: speed, radius, index,  O             overlay on/off\n"                \
    "                angular speed                  X             friction on/off\n"               \
    "  G             timing graph on/off            Y             graph: log / linear axis\n"      \
    "  L             start/stop the timing log      P or F12      screenshot (PNG)\n"              \
    "  D             start/stop a trajectory (--dump, or nbsim-<time>.xyz; OVITO, VMD, ASE)\n"     \
    "  + / -         steps per frame by hand        0             steps per frame: automatic\n"    \
    "  V             vsync on/off                   H or F1       this help\n"                     \
    "  Esc           end a sweep, else quit         Q             quit\n"                          \
    "Mouse: left drag orbit, right/middle drag pan, scroll zoom, Home or F fit the box.\n"

#endif /* VIEWER_KEYS_H */
