/* SPDX-License-Identifier: MIT
 * nbsim — what happens around every frame of a run, written once for the headless loop and the
 * viewer: the step, the energies when due, a row of the timing log, the statistics for the
 * summary, and the notices the session has for the user. */
#ifndef SIM_RUN_LOOP_H
#define SIM_RUN_LOOP_H

#include "nbsim/run_stats.h"
#include "nbsim/session.h"
#include "nbsim/timing_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Receives one notice line (without the "nbsim: " prefix). */
typedef void (*sim_notice_fn)(void *ctx, const char *line);

typedef struct {
    sim_session *session;
    sim_timing_log log;  /* rows are written while log.file != NULL */
    sim_run_stats stats; /* per-step times of every frame run */
    int energy_every;    /* energies on frames 1, 1 + K, 1 + 2K, ... (and a run's last); 0 never */
    /* A run over processes: the energies are an all-reduce over the ranks, so every rank
     * computes them on the schedule, with or without a log of its own (rank 0 too, after a full
     * disk dropped its log), whatever the other ranks' command lines say: a rank that skipped
     * one would leave the others waiting forever. While rank 0 logs this costs no time (the
     * others would wait for its energies in the next all-reduce anyway); --energy-every 0 turns
     * them off everywhere. */
    int energy_collective;
    sim_notice_fn notice;  /* where notices go; NULL drops them (--quiet) */
    sim_notice_fn warning; /* where warnings and failures to say go (NULL: to notice): a quiet
                              program keeps them */
    void *notice_ctx;      /* for both */
    sim_error log_error;   /* status != SIM_OK: a log row failed and the log was dropped */
} sim_run;

/* One frame. `last`: the run's final frame (energies are logged for it). A failed step returns
 * its error. A failed log row (a full disk) drops the log, records why in r->log_error, passes
 * it on as a warning, and the frame still counts: the headless loop then stops, the viewer
 * keeps running without recording. */
sim_status sim_run_frame(sim_run *r, int last, sim_frame_timing *t, sim_error *err);
/* Hands the session's pending warnings to r->warning (else r->notice) and its notices to
 * r->notice, one line each. */
void sim_run_notices(sim_run *r);

#ifdef __cplusplus
}
#endif

#endif /* SIM_RUN_LOOP_H */
