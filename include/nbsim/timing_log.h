/* SPDX-License-Identifier: MIT
 * nbsim — the per-frame timing log (CSV, one row per frame), written by the headless loop and
 * by the viewer (L key). Written through sim_output, so a log at <path> is always complete. */
#ifndef SIM_TIMING_LOG_H
#define SIM_TIMING_LOG_H

#include <stdio.h>

#include "nbsim/output_file.h"
#include "nbsim/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    FILE *file;     /* out.file while open, else NULL */
    sim_output out; /* out.path: the path as given */
    uint64_t rows;
} sim_timing_log;

sim_status sim_timing_log_open(sim_timing_log *log, const char *path, sim_error *err);
/* One row for the frame the session just ran, flushed to the file at once (a killed run leaves
 * its rows in the temporary). energy and mean_height (sim_session_mean_height) may be NULL: their
 * columns are left empty. */
sim_status sim_timing_log_row(sim_timing_log *log, const sim_run_info *s, const sim_frame_timing *t,
                              const sim_energy *energy, const double *mean_height, sim_error *err);
/* Flushes, closes and renames into place (see output_file.h). */
sim_status sim_timing_log_close(sim_timing_log *log, sim_error *err);
/* Closes and drops what was written (error paths). */
void sim_timing_log_abandon(sim_timing_log *log);

/* The CSV header line, without newline (tests check it). */
const char *sim_timing_log_header(void);

#ifdef __cplusplus
}
#endif

#endif /* SIM_TIMING_LOG_H */
