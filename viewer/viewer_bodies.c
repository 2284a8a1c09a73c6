/* SPDX-License-Identifier: MIT
 * nbsim — the GL side of the bodies: buffers sized for the session's N (or for an even sample of
 * the bodies, every k-th, when N passes what the viewer draws), filled each frame through CUDA-GL
 * interop when possible, else through the host, and the colour range sampled from them. */
#include <stdio.h>
#include <string.h>

#include "viewer_internal.h"

#define RANGE_SAMPLE_PERIOD_S 0.1 /* colour range refresh: a strided copy of a few KB */

static void sample_range(viewer_state *v, double now) {
    int component = v->color_mode == VIEWER_COLOR_SPEED || v->color_mode == VIEWER_COLOR_SPIN ? 4
                    : v->color_mode == VIEWER_COLOR_RADIUS                                  ? 3
                                                                                            : -1;
    if (component < 0) {
        return;
    }
    render_autorange *r = &v->range[v->color_mode];
    if (r->valid && now - v->range_sampled_s < RANGE_SAMPLE_PERIOD_S) {
        return;
    }
    uint32_t got =
        render_bodies_sample(&v->bodies, component, v->range_samples, VIEWER_RANGE_SAMPLES);
    float dt = r->valid ? (float)(now - v->range_sampled_s) : 0.0f;
    render_autorange_update(r, v->range_samples, got, dt);
    v->range_sampled_s = now;
}

static sim_status export_host(viewer_state *v, sim_error *err) {
    sim_vec4f *pos;
    float *speed;
    sim_status st = render_bodies_host_arrays(&v->bodies, &pos, &speed, err);
    if (st == SIM_OK) {
        st = sim_session_export_sample(v->run.session, v->draw_every, pos, speed, 0, err);
    }
    if (st == SIM_OK && v->color_mode == VIEWER_COLOR_SPIN) { /* the scalar is |w| instead */
        st = sim_session_angular_speeds_sample(v->run.session, v->draw_every, speed, err);
    }
    if (st == SIM_OK) {
        sample_range(v, viewer_now());
        render_bodies_upload(&v->bodies);
    }
    return st;
}

/* Interop: the backend writes straight into the mapped GL buffers; no per-body host work. */
static sim_status export_interop(viewer_state *v, sim_error *err) {
    sim_status st = render_bodies_map(&v->bodies, err);
    if (st != SIM_OK) {
        return st;
    }
    st = sim_session_export_sample(v->run.session, v->draw_every, v->bodies.d_pos,
                                   v->bodies.d_scalar, 1, err);
    if (st == SIM_OK) {
        sample_range(v, viewer_now());
    }
    render_bodies_unmap(&v->bodies);
    return st;
}

void viewer_export_bodies(viewer_state *v) {
    int need_range = v->color_mode != VIEWER_COLOR_INDEX && !v->range[v->color_mode].valid;
    if (!v->dirty && !need_range) {
        return;
    }
    sim_error err;
    sim_error_clear(&err);
    /* Angular speeds are read back through the state (sim_backend_read_spin): that colour goes
     * through the host arrays. */
    if (v->bodies.interop && v->color_mode != VIEWER_COLOR_SPIN) {
        if (export_interop(v, &err) == SIM_OK) {
            v->dirty = 0;
            return;
        }
        /* Mapping or writing failed at run time: keep going through the host. */
        snprintf(v->interop_off, sizeof v->interop_off, "%.255s", err.message);
        render_bodies_disable_interop(&v->bodies, v->interop_off, &err);
        viewer_message(v, "CUDA-GL interop failed (%s); copying through the host", v->interop_off);
    }
    if (export_host(v, &err) != SIM_OK) {
        viewer_message(v, "cannot read positions: %s", err.message);
        v->sim_failed = 1;
        v->paused = 1;
    }
    v->dirty = 0;
}

sim_status viewer_rebuild_bodies(viewer_state *v, sim_error *err) {
    if (v->bodies_ready) {
        render_bodies_destroy(&v->bodies);
        v->bodies_ready = 0;
    }
    int cuda = viewer_info(v)->config.kind == SIM_BACKEND_CUDA;
    const uint32_t n = viewer_info(v)->n;
    const long max = v->settings->draw_max > 0 ? v->settings->draw_max : VIEWER_DRAW_MAX;
    v->draw_every = sim_sample_every(n, max < (long)UINT32_MAX ? (uint32_t)max : UINT32_MAX);
    /* A registration that failed once fails again (same driver, same GL): pass the reason back
     * instead of retrying on every scene change. */
    sim_status st = render_bodies_create(&v->bodies, sim_sample_count(n, v->draw_every), cuda,
                                         cuda ? v->interop_off : "CPU backend", err);
    if (st != SIM_OK) {
        return st;
    }
    if (v->draw_every > 1 && !v->settings->quiet) {
        fprintf(stderr, "nbsim: the viewer draws %u of the %u bodies: one in %u (--draw-max)\n",
                v->bodies.count, n, v->draw_every);
    }
    if (cuda && !v->bodies.interop && v->interop_off[0] == '\0') {
        snprintf(v->interop_off, sizeof v->interop_off, "%s", v->bodies.reason);
        if (!v->settings->quiet) {
            fprintf(stderr, "nbsim: positions go through the host: %s\n", v->bodies.mode);
        }
    }
    v->bodies_ready = 1;
    v->dirty = 1;
    return SIM_OK;
}
