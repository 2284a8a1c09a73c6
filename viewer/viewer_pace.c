/* SPDX-License-Identifier: MIT
 * nbsim — automatic pacing: steps per frame chosen so that one frame (its steps plus exporting
 * and drawing) fits the target frame rate, so a scene advances as much simulated time per
 * second as the machine allows instead of one step per drawn frame. + / - take over by hand
 * (doubling, halving), 0 gives it back.
 *
 * The costs are measured on the host clock around the frame's phases: the simulation (its
 * kernels, one synchronisation, the energies when due) per step, and the rest of the frame
 * (export, draw calls, overlay) plus the GL timer's render time and the swap. With vsync on, a
 * swap that waits for the display is no cost: only the part of a frame beyond the display's
 * period counts (software GL renders in the swap, and a frame that misses the period says the
 * GPU was behind). */
#include <math.h>
#include <stdio.h>

#include "viewer_internal.h"

#define PACE_TARGET_FPS 60.0
#define PACE_BUDGET_SHARE 0.85 /* of the frame period: room for jitter and the compositor */
/* When drawing alone takes longer than the period (software GL, huge N), the steps still get a
 * quarter of the period or a third of the drawing time: the scene moves, and a slow-drawing
 * frame loses at most a quarter of its rate to them. */
#define PACE_SIM_SHARE_MIN 0.25
#define PACE_SIM_OF_DRAW_MIN 0.33
#define PACE_SMOOTHING 0.25  /* EMA weight of the newest frame in the simulated rate shown */
#define PACE_SETTLE_FRAMES 3 /* frames between two changes, so the averages see the last one */
#define PACE_GROW_MAX 4.0    /* at most x4 per change upwards; downwards at once */
#define PACE_STEPS_MAX 4096  /* also the most + reaches */

void viewer_pace_init(viewer_state *v) {
    viewer_pace *p = &v->pace;
    const int by_user = (v->session.params_given & SIM_GIVEN(STEPS)) != 0;
    /* A scene file that sets its own steps per frame keeps them, like the command line. */
    const int by_scene = !by_user && viewer_info(v)->params.steps_per_frame != 1;
    p->automatic = !by_user && !by_scene;
    p->manual_why = by_user ? "--steps-per-frame" : by_scene ? "scene file" : "";
    p->target_fps = PACE_TARGET_FPS;
    p->valid = 0;
    p->frames_since_change = 0;
}

static double median(const double *values, int count) {
    double sorted[VIEWER_PACE_HISTORY];
    for (int i = 0; i < count; ++i) { /* insertion sort: a handful of values */
        int k = i;
        for (; k > 0 && sorted[k - 1] > values[i]; --k) {
            sorted[k] = sorted[k - 1];
        }
        sorted[k] = values[i];
    }
    return count > 0 ? sorted[count / 2] : 0.0;
}

static int clamp_steps(double s) {
    return s < 1.0 ? 1 : s > PACE_STEPS_MAX ? PACE_STEPS_MAX : (int)s;
}

static void set_steps(viewer_state *v, int steps) {
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_steps_per_frame(v->run.session, steps, &err) != SIM_OK) {
        viewer_message(v, "steps per frame %d: %s", steps, err.message);
        v->pace.automatic = 0;
        v->pace.manual_why = "a refused change";
    }
    v->pace.frames_since_change = 0;
}

void viewer_pace_restart(viewer_state *v) {
    viewer_pace *p = &v->pace;
    p->valid = 0;
    p->frames_since_change = 0;
    p->hist_count = p->hist_next = 0;
    if (p->automatic && viewer_info(v)->params.steps_per_frame != 1) {
        set_steps(v, 1); /* the old count could make one frame of the new work take seconds */
    }
}

void viewer_pace_frame(viewer_state *v, const viewer_frame_clock *c) {
    viewer_pace *p = &v->pace;
    const sim_run_info *s = viewer_info(v);
    if (c->steps <= 0 || c->frame_ms <= 0.0) {
        return; /* paused, or a single step: nothing to learn about a frame's steps */
    }
    const double step_ms = c->sim_ms / (double)c->steps;
    const double period = 1e3 / p->target_fps;
    const double late_ms = c->frame_ms > period ? c->frame_ms - period : 0.0;
    const double other_ms = c->other_ms + (c->vsync && c->swap_ms > late_ms ? late_ms : c->swap_ms);
    const double rate = s->params.dt * (double)c->steps / (c->frame_ms * 1e-3);
    p->step_hist[p->hist_next] = step_ms;
    p->other_hist[p->hist_next] = other_ms;
    p->hist_next = (p->hist_next + 1) % VIEWER_PACE_HISTORY;
    p->hist_count = p->hist_count < VIEWER_PACE_HISTORY ? p->hist_count + 1 : p->hist_count;
    p->step_ms = median(p->step_hist, p->hist_count);
    p->other_ms = median(p->other_hist, p->hist_count);
    viewer_smooth_weight(&p->sim_rate, rate, !p->valid, PACE_SMOOTHING);
    p->valid = 1;
    p->frames_since_change++;
    if (!p->automatic || p->frames_since_change < PACE_SETTLE_FRAMES) {
        return;
    }
    const int now = s->params.steps_per_frame;
    double budget = period * PACE_BUDGET_SHARE - p->other_ms;
    budget = budget < period * PACE_SIM_SHARE_MIN ? period * PACE_SIM_SHARE_MIN : budget;
    budget =
        budget < p->other_ms * PACE_SIM_OF_DRAW_MIN ? p->other_ms * PACE_SIM_OF_DRAW_MIN : budget;
    double want = p->step_ms > 0.0 ? floor(budget / p->step_ms) : now;
    want = want > now * PACE_GROW_MAX ? now * PACE_GROW_MAX : want;
    const int next = clamp_steps(want);
    /* Hysteresis: small moves are noise; at a few steps every step counts. */
    const int moved = now <= 4 ? next != now : (next > now * 1.15 || next < now * 0.87);
    if (moved) {
        set_steps(v, next);
    }
}

void viewer_pace_manual(viewer_state *v, int up) {
    viewer_pace *p = &v->pace;
    const int steps = viewer_info(v)->params.steps_per_frame;
    const int next = clamp_steps(up ? steps * 2.0 : steps / 2.0);
    p->automatic = 0;
    p->manual_why = "+/-";
    if (next != steps) {
        set_steps(v, next);
    }
    char mark[RENDER_GRAPH_LABEL];
    snprintf(mark, sizeof mark, "%d steps/frame", next);
    render_graph_mark(&v->graph, mark);
    viewer_message(v, "%d steps per frame (by hand; 0 returns to automatic pacing)", next);
}

void viewer_pace_auto(viewer_state *v) {
    viewer_pace *p = &v->pace;
    if (p->automatic) {
        viewer_message(v, "steps per frame are already automatic (%.0f frames/s target)",
                       p->target_fps);
        return;
    }
    p->automatic = 1;
    p->manual_why = "";
    p->frames_since_change = 0;
    render_graph_mark(&v->graph, "auto steps/frame");
    viewer_message(v, "steps per frame: automatic, for %.0f frames/s", p->target_fps);
}

void viewer_pace_describe(const viewer_state *v, char *out, size_t cap) {
    const viewer_pace *p = &v->pace;
    const int steps = viewer_info(v)->params.steps_per_frame;
    if (p->automatic) {
        snprintf(out, cap, "steps/frame %d (auto, %.0f fps target; + / - by hand)", steps,
                 p->target_fps);
    } else {
        snprintf(out, cap, "steps/frame %d (by hand: %s; 0 = auto)", steps, p->manual_why);
    }
}
