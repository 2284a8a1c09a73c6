/* SPDX-License-Identifier: MIT
 * nbsim — the simulation side of a viewer frame: one frame of the run pipeline (or one step
 * while paused), and its timings into the overlay averages and the graph. */
#include <stdio.h>
#include <string.h>

#include "viewer_internal.h"

#define SMOOTHING 0.08 /* EMA weight of the newest frame in the overlay's numbers */

void viewer_smooth_weight(double *avg, double x, int first, double weight) {
    *avg = first ? x : *avg + weight * (x - *avg);
}

void viewer_smooth(double *avg, double x, int first) {
    viewer_smooth_weight(avg, x, first, SMOOTHING);
}

static void record_timing(viewer_state *v, const sim_frame_timing *t) {
    v->timing = *t;
    v->have_timing = 1;
    double steps = t->steps > 0 ? (double)t->steps : 1.0;
    int first = !v->smooth.valid;
    viewer_smooth(&v->smooth.pair_ms, t->pair_ms / steps, first);
    viewer_smooth(&v->smooth.triplet_ms, t->triplet_ms / steps, first);
    viewer_smooth(&v->smooth.integrate_ms, t->integrate_ms / steps, first);
    viewer_smooth(&v->smooth.step_ms, t->step_ms / steps, first);
#define SMOOTH_PHASE(id, field, name, what)                                                        \
    viewer_smooth(&v->smooth.phase_ms[SIM_FRAME_PHASE_##id], t->field / steps, first);
    SIM_FRAME_PHASE_LIST(SMOOTH_PHASE)
#undef SMOOTH_PHASE
    v->smooth.valid = 1;
    viewer_smooth(&v->smooth.sort_ms, t->sort_ms / steps, first);
    viewer_smooth(&v->smooth.cull_ms, t->cull_ms / steps, first);
    viewer_smooth(&v->smooth.nlist_ms, (t->nlist_ms + t->cells_ms) / steps, first);
    viewer_smooth(&v->smooth.triplet_cull_ms, (t->triplet_cull_ms + t->atm_list_ms) / steps, first);
    /* the series stack up to the whole step: the last holds every culling phase (the lists'
     * builds, the largest phase of a falling lattice, and the ATM cut-off's among them) */
    const double culling = t->sort_ms + t->cull_ms + t->nlist_ms + t->cells_ms +
                           t->triplet_cull_ms + t->atm_list_ms;
    const float per_step[4] = {(float)(t->pair_ms / steps), (float)(t->triplet_ms / steps),
                               (float)(t->integrate_ms / steps), (float)(culling / steps)};
    render_graph_push(&v->graph, per_step);
    viewer_compare_frame(v, t);
}

int viewer_simulate(viewer_state *v) {
    v->frame_steps = 0;
    if (v->sim_failed || (v->paused && !v->step_requested)) {
        return 0;
    }
    /* A single step while paused really is one step, whatever the steps per frame. */
    int single = v->paused;
    int steps = viewer_info(v)->params.steps_per_frame;
    v->step_requested = 0;
    sim_error err;
    sim_error_clear(&err);
    if (single && steps != 1) {
        sim_session_set_steps_per_frame(v->run.session, 1, &err);
    }
    sim_frame_timing t;
    const int had_log = v->run.log.file != NULL;
    sim_status st = sim_run_frame(&v->run, 0, &t, &err);
    if (single && steps != 1) {
        sim_error restore;
        sim_session_set_steps_per_frame(v->run.session, steps, &restore);
    }
    if (st == SIM_INTERRUPTED) { /* a signal: the loop ends on it, with the steps kept */
        return 0;
    }
    /* an insertion grew N (nbsim/insert.h): the bodies' buffers follow */
    if (st == SIM_OK && sim_sample_count(viewer_info(v)->n, v->draw_every) != v->bodies.count) {
        st = viewer_rebuild_bodies(v, &err);
    }
    if (st != SIM_OK) {
        v->sim_failed = 1;
        v->paused = 1;
        viewer_message(v, "simulation stopped at frame %llu: %s (R resets, 1-4 change scene)",
                       (unsigned long long)viewer_info(v)->frame + 1, err.message);
        return 0;
    }
    if (had_log && v->run.log.file == NULL) { /* the log failed (the notice said why) */
        v->failed = 1;
    }
    v->dirty = 1;
    v->frames_simulated++;
    v->frame_steps = single ? 0 : t.steps; /* a single step says nothing about pacing */
    record_timing(v, &t);
    return 1;
}
