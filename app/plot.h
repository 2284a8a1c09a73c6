/* SPDX-License-Identifier: MIT
 * nbsim — pictures of CSV results through bench/plot.py and Debian's matplotlib. The script is
 * installed beside the program as ../share/nbsim/plot.py (the build tree has the same layout),
 * so it is found from wherever nbsim runs. */
#ifndef APP_PLOT_H
#define APP_PLOT_H

#include <stddef.h>

#include "nbsim/base.h"

/* The plot script: $NBSIM_PLOT_SCRIPT, else <folder of the program>/../share/nbsim/plot.py.
 * Returns 0 when the file exists, else -1 (out then names where it was looked for). */
int app_plot_script(char *out, size_t cap);

/* Runs `python3 plot.py ARGS...` with the first interpreter that imports matplotlib
 * ($NBSIM_PYTHON, python3, /usr/bin/python3). Returns 0 when the script succeeded; otherwise
 * prints one line on stderr, prefixed "nbsim: <what>: ", saying why and how to make the plots by
 * hand, and returns -1. A missing plot never fails the run that asked for it (nbsim bench). */
int app_plot_run(const char *what, const char *const *args, int nargs);

/* What draws a picture: the script and an interpreter that imports matplotlib. */
typedef struct {
    char script[4200];
    char python[4096];
} app_plotter;

/* Finds both, before the work whose picture is wanted: SIM_UNSUPPORTED with one line in err,
 * prefixed "<what>: ", saying what is missing (the script, matplotlib) and how to get it. */
sim_status app_plotter_find(app_plotter *p, const char *what, sim_error *err);

/* The timing log at log_path drawn as a PNG at out_path, as every output is
 * written (nbsim/output_file.h): the script writes the picture to a pipe, and only a whole PNG is
 * written, through a temporary renamed into place (FIFOs, devices and "-" directly). A failure of
 * the script or of the write: err says why in one line (SIM_IO; SIM_INTERRUPTED when a signal
 * stopped the wait for a FIFO's reader), and out_path keeps what it had. */
sim_status app_plot_png(const app_plotter *p, const char *log_path, const char *out_path,
                        sim_error *err);

#endif /* APP_PLOT_H */
