/* SPDX-License-Identifier: MIT
 * nbsim — the simulation side of a viewer frame: one frame of the session (or one step
 * while paused), its timings into the overlay averages, the graph, the summary and the log. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "viewer_internal.h"

#define SMOOTHING 0.08 /* EMA weight of the newest frame in the overlay's numbers */

void viewer_smooth(double *avg, double x, int first) {
    *avg = first ? x : *avg + SMOOTHING * (x - *avg);
}

static void record_timing(app_viewer *v, const sim_frame_timing *t) {
    v->timing = *t;
    v->have_timing = 1;
    double steps = t->steps > 0 ? (double)t->steps : 1.0;
    int first = !v->smooth.valid;
    viewer_smooth(&v->smooth.pair_ms, t->pair_ms / steps, first);
    viewer_smooth(&v->smooth.triplet_ms, t->triplet_ms / steps, first);
    viewer_smooth(&v->smooth.integrate_ms, t->integrate_ms / steps, first);
    viewer_smooth(&v->smooth.step_ms, t->step_ms / steps, first);
    v->smooth.valid = 1;
    const float per_step[3] = {(float)(t->pair_ms / steps), (float)(t->triplet_ms / steps),
                               (float)(t->integrate_ms / steps)};
    render_graph_push(&v->graph, per_step);
    sim_error err;
    sim_error_clear(&err);
    if (app_run_stats_add(&v->stats, t, &err) != SIM_OK) {
        app_run_stats_free(&v->stats); /* out of memory: lose the summary, keep running */
    }
}

static void write_log_row(app_viewer *v, const sim_frame_timing *t) {
    if (!v->logging) {
        return;
    }
    sim_error err;
    sim_error_clear(&err);
    const app_options *o = v->opt;
    const int every =
        o->energy_every == APP_ENERGY_AUTO ? APP_VIEWER_ENERGY_EVERY : o->energy_every;
    sim_energy energy;
    int with_energy = every > 0 && (v->session.frame - 1) % (uint64_t)every == 0;
    if (with_energy && sim_backend_energy(v->session.backend, &energy, &err) != SIM_OK) {
        with_energy = 0;
    }
    if (app_timing_log_row(&v->log, &v->session, t, with_energy ? &energy : NULL, &err) != SIM_OK) {
        viewer_message(v, "%s; recording stopped", err.message);
        app_timing_log_abandon(&v->log);
        v->logging = 0;
        v->exit_code = APP_EXIT_FAILURE;
    }
}

int viewer_simulate(app_viewer *v) {
    if (v->sim_failed || (v->paused && !v->step_requested)) {
        return 0;
    }
    /* A single step while paused really is one step, whatever the steps per frame. */
    int single = v->paused;
    int steps = v->session.params.steps_per_frame;
    v->step_requested = 0;
    sim_error err;
    sim_error_clear(&err);
    if (single && steps != 1) {
        app_session_set_steps_per_frame(&v->session, 1, &err);
    }
    sim_frame_timing t;
    memset(&t, 0, sizeof t);
    sim_status st = app_session_frame(&v->session, &t, &err);
    if (single && steps != 1) {
        sim_error restore;
        app_session_set_steps_per_frame(&v->session, steps, &restore);
    }
    if (st != SIM_OK) {
        v->sim_failed = 1;
        v->paused = 1;
        viewer_message(v, "simulation stopped at frame %llu: %s (R resets, 1-4 change scene)",
                       (unsigned long long)v->session.frame + 1, err.message);
        return 0;
    }
    v->dirty = 1;
    v->frames_simulated++;
    record_timing(v, &t);
    write_log_row(v, &t);
    return 1;
}
