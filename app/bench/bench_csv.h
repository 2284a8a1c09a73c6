/* SPDX-License-Identifier: MIT
 * nbsim — a CSV writer for benchmark results, through sim_output: an interrupted or failed run
 * never leaves a half-written result file behind (and never replaces an earlier complete one).
 * Fields are quoted only when they need it (RFC 4180). */
#ifndef APP_BENCH_CSV_H
#define APP_BENCH_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "nbsim/output_file.h"

typedef struct {
    FILE *f;        /* out.file while open, else NULL */
    sim_output out; /* written through a temporary, renamed when complete */
    int columns;    /* from the header */
    int field;      /* fields written in the current row */
    int rows;
} app_csv;

/* Opens the output (see output_file.h) and writes the header row. */
sim_status app_csv_open(app_csv *c, const char *path, const char *const *header, int columns,
                        sim_error *err);

void app_csv_str(app_csv *c, const char *s);
void app_csv_int(app_csv *c, long long v);
void app_csv_u64(app_csv *c, uint64_t v);
void app_csv_num(app_csv *c, double v); /* %.6g; non-finite values as empty fields */
/* Ends the row; a row with the wrong number of fields is a programmer error (asserted). */
void app_csv_end_row(app_csv *c);

/* Flushes, closes and renames into place. On any earlier write error the temporary file is
 * removed and SIM_IO names the path. */
sim_status app_csv_close(app_csv *c, sim_error *err);
/* Drops the temporary file (used when the run fails before anything worth keeping). */
void app_csv_abort(app_csv *c);
/* The end of a suite's table: st == SIM_OK closes it (its status), else drops it and returns st
 * (err already says why). */
sim_status app_csv_finish(app_csv *c, sim_status st, sim_error *err);

#endif /* APP_BENCH_CSV_H */
