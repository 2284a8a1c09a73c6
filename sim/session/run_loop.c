/* SPDX-License-Identifier: MIT
 * nbsim — the per-frame pipeline shared by the headless loop and the viewer. */
#include "nbsim/run_loop.h"

#include <stdio.h>
#include <string.h>

/* Each line of text to fn (NULL: dropped). */
static void hand_lines(sim_notice_fn fn, void *ctx, const char *text) {
    while (fn != NULL && *text != '\0') {
        const size_t len = strcspn(text, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), text);
        fn(ctx, line);
        text += len + (text[len] == '\n');
    }
}

static sim_notice_fn warning_fn(const sim_run *r) {
    return r->warning != NULL ? r->warning : r->notice;
}

void sim_run_notices(sim_run *r) {
    hand_lines(warning_fn(r), r->notice_ctx, sim_session_take_warnings(r->session));
    hand_lines(r->notice, r->notice_ctx, sim_session_take_notices(r->session));
}

sim_status sim_run_frame(sim_run *r, int last, sim_frame_timing *t, sim_error *err) {
    memset(t, 0, sizeof *t);
    SIM_TRY(sim_session_frame(r->session, t, err));
    const sim_run_info *info = sim_session_info(r->session);
    sim_energy energy;
    double height = 0.0;
    const int every = r->energy_every;
    const int with_energy = (r->log.file != NULL || r->energy_collective) && every > 0 &&
                            ((info->frame - 1) % (uint64_t)every == 0 || last);
    if (with_energy) {
        SIM_TRY(sim_session_energy(r->session, &energy, err));
    }
    if (with_energy && r->log.file != NULL) { /* this rank's own, only for the log */
        SIM_TRY(sim_session_mean_height(r->session, &height, err));
    }
    if (sim_run_stats_add(&r->stats, t, err) != SIM_OK) {
        /* Out of memory for the statistics: the run goes on without a summary. */
        sim_run_stats_free(&r->stats);
        if (warning_fn(r) != NULL) {
            warning_fn(r)(r->notice_ctx, "no memory left for the timing statistics: no summary");
        }
    }
    if (r->log.file != NULL &&
        sim_timing_log_row(&r->log, info, t, with_energy ? &energy : NULL,
                           with_energy ? &height : NULL, &r->log_error) != SIM_OK) {
        sim_timing_log_abandon(&r->log);
        if (warning_fn(r) != NULL) {
            char line[SIM_ERROR_MESSAGE_MAX + 32];
            snprintf(line, sizeof line, "%s; the timing log stopped", r->log_error.message);
            warning_fn(r)(r->notice_ctx, line);
        }
    }
    sim_run_notices(r);
    return SIM_OK;
}
