/* SPDX-License-Identifier: MIT
 * nbsim — pictures of CSV results through bench/plot.py and Debian's matplotlib. The script is
 * installed beside the program as ../share/nbsim/plot.py (the build tree has the same layout),
 * so it is found from wherever nbsim runs. */
#ifndef APP_PLOT_H
#define APP_PLOT_H

#include <stddef.h>

/* The plot script: $NBSIM_PLOT_SCRIPT, else <folder of the program>/../share/nbsim/plot.py.
 * Returns 0 when the file exists, else -1 (out then names where it was looked for). */
int app_plot_script(char *out, size_t cap);

/* Runs `python3 plot.py ARGS...` with the first interpreter that imports matplotlib
 * ($NBSIM_PYTHON, python3, /usr/bin/python3). Returns 0 when the script succeeded; otherwise
 * prints one line on stderr, prefixed "nbsim: <what>: ", saying why and how to make the plots by
 * hand, and returns -1. A missing plot never fails the run that asked for it. */
int app_plot_run(const char *what, const char *const *args, int nargs);

#endif /* APP_PLOT_H */
