/* SPDX-License-Identifier: MIT
 * nbsim — the per-frame pipeline shared by the headless loop and the viewer. */
#include "run_loop.h"

#include <stdio.h>
#include <string.h>

void app_print_notice(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, "nbsim: %s\n", line);
}

void app_run_notices(app_run *r) {
    const char *text = app_session_take_notices(r->session);
    while (r->notice != NULL && *text != '\0') {
        const size_t len = strcspn(text, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), text);
        r->notice(r->notice_ctx, line);
        text += len + (text[len] == '\n');
    }
}

sim_status app_run_frame(app_run *r, int last, sim_frame_timing *t, sim_error *err) {
    memset(t, 0, sizeof *t);
    SIM_TRY(app_session_frame(r->session, t, err));
    const app_run_info *info = app_session_info(r->session);
    sim_energy energy;
    double height = 0.0;
    const int every = r->energy_every;
    const int with_energy = (r->log.file != NULL || r->energy_collective) && every > 0 &&
                            ((info->frame - 1) % (uint64_t)every == 0 || last);
    if (with_energy) {
        SIM_TRY(app_session_energy(r->session, &energy, err));
    }
    if (with_energy && r->log.file != NULL) { /* this rank's own, only for the log */
        SIM_TRY(app_session_mean_height(r->session, &height, err));
    }
    if (app_run_stats_add(&r->stats, t, err) != SIM_OK) {
        /* Out of memory for the statistics: the run goes on without a summary. */
        app_run_stats_free(&r->stats);
        if (r->notice != NULL) {
            r->notice(r->notice_ctx, "no memory left for the timing statistics: no summary");
        }
    }
    if (r->log.file != NULL &&
        app_timing_log_row(&r->log, info, t, with_energy ? &energy : NULL,
                           with_energy ? &height : NULL, &r->log_error) != SIM_OK) {
        app_timing_log_abandon(&r->log);
        if (r->notice != NULL) {
            char line[SIM_ERROR_MESSAGE_MAX + 32];
            snprintf(line, sizeof line, "%s; the timing log stopped", r->log_error.message);
            r->notice(r->notice_ctx, line);
        }
    }
    app_run_notices(r);
    return SIM_OK;
}
