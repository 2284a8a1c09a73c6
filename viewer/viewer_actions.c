/* SPDX-License-Identifier: MIT
 * nbsim — what the viewer's hotkeys do to the session: maps, triplets, scenes, steps, colours.
 * Each action reports its effect on screen; a failure leaves the previous state running. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer_internal.h"

/* Above this estimated cost per step, A refuses to switch triplets on: at N = 10^6 one step
 * would hold the GPU for days. The rate is the session's rough one (sim_session_triples_per_s). */
#define TRIPLET_SECONDS_MAX 2.0

static const sim_backend_config *config(const viewer_state *v) {
    return &viewer_info(v)->config;
}

/* M cycles through the pair maps and, on the CUDA backend, `full` (the nbody-style sweep). */
void viewer_cycle_pair_map(viewer_state *v, int dir) {
    const sim_backend_config *c = config(v);
    const int slots = c->kind == SIM_BACKEND_CUDA ? SIM_PAIR_CHOICE_COUNT : SIM_PAIR_MAP_COUNT;
    const sim_pair_choice next = (c->pair_map + dir + slots) % slots;
    const char *name = sim_pair_choice_name(next);
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_maps(v->run.session, next, c->triplet_map, &err) != SIM_OK) {
        viewer_message(v, "pair map %s: %s", name, err.message);
        return;
    }
    char mark[RENDER_GRAPH_LABEL];
    snprintf(mark, sizeof mark, "pair: %s", name);
    render_graph_mark(&v->graph, mark);
    viewer_compare_open(v);
}

void viewer_cycle_triplet_map(viewer_state *v, int dir) {
    const sim_backend_config *c = config(v);
    int tm = ((int)c->triplet_map + dir + SIM_TRIPLET_MAP_COUNT) % SIM_TRIPLET_MAP_COUNT;
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_maps(v->run.session, c->pair_map, (sim_triplet_map)tm, &err) != SIM_OK) {
        viewer_message(v, "triplet map %s: %s", sim_triplet_map_name((sim_triplet_map)tm),
                       err.message);
        return;
    }
    char mark[RENDER_GRAPH_LABEL];
    snprintf(mark, sizeof mark, "triplet: %s", sim_triplet_map_name((sim_triplet_map)tm));
    render_graph_mark(&v->graph, mark);
    viewer_compare_open(v);
    if (!viewer_info(v)->params.triplets) {
        viewer_message(v, "triplet map %s selected; triplet forces are off (A turns them on)",
                       sim_triplet_map_name((sim_triplet_map)tm));
    }
}

void viewer_toggle_triplets(viewer_state *v) {
    int on = !viewer_info(v)->params.triplets;
    if (on) {
        const double rate = sim_session_triples_per_s(config(v)->kind);
        double seconds = (double)viewer_info(v)->unique_triples / rate;
        if (seconds > TRIPLET_SECONDS_MAX) {
            viewer_message(v,
                           "triplets stay off: N = %u has %.3g triples, about %.3g s per step "
                           "(start with --triplets on to insist)",
                           viewer_info(v)->n, (double)viewer_info(v)->unique_triples, seconds);
            return;
        }
    }
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_triplets(v->run.session, on, &err) != SIM_OK) {
        viewer_message(v, "triplets %s: %s", on ? "on" : "off", err.message);
        return;
    }
    render_graph_mark(&v->graph, on ? "triplets on" : "triplets off");
    if (on) {
        viewer_pace_restart(v); /* a step now costs the triplets too */
    }
}

/* Friction off (remembering its coefficients) or on again (those, else mu 0.5 and mu_r 0.1, the
 * heap scene's). Turned on it starts with no contact histories; off, bodies keep their spin. */
void viewer_toggle_friction(viewer_state *v) {
    sim_params p = viewer_info(v)->params;
    const int on = !(p.friction > 0.0 || p.rolling_friction > 0.0);
    if (on) {
        const int remembered = v->friction_off[0] > 0.0 || v->friction_off[1] > 0.0;
        p.friction = remembered ? v->friction_off[0] : 0.5;
        p.rolling_friction = remembered ? v->friction_off[1] : 0.1;
    } else {
        v->friction_off[0] = p.friction;
        v->friction_off[1] = p.rolling_friction;
        p.friction = p.rolling_friction = 0.0;
    }
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_params(v->run.session, &p, &err) != SIM_OK) {
        viewer_message(v, "friction %s: %s", on ? "on" : "off", err.message);
        return;
    }
    render_graph_mark(&v->graph, on ? "friction on" : "friction off");
    if (on) {
        viewer_message(v, "friction on: mu %g, rolling mu_r %g", p.friction, p.rolling_friction);
    } else {
        viewer_message(v, "friction off");
    }
    v->dirty = 1;
}

/* After the session's scene changed: buffers for its N, camera, colour ranges, messages. */
static void scene_changed(viewer_state *v, const char *what, uint32_t old_n) {
    sim_error err;
    sim_error_clear(&err);
    if (viewer_info(v)->n != old_n && viewer_rebuild_bodies(v, &err) != SIM_OK) {
        viewer_message(v, "%s", err.message);
        v->sim_failed = 1;
        v->paused = 1;
        return;
    }
    v->sim_failed = 0;
    v->dirty = 1;
    for (int m = 0; m < VIEWER_COLOR_COUNT; ++m) {
        v->range[m].valid = 0;
    }
    render_graph_mark(&v->graph, what);
    viewer_pace_restart(v);
    sim_run_notices(&v->run);
}

void viewer_set_scene(viewer_state *v, const char *scene) {
    viewer_sweep_cancel(v, "the scene changed");
    uint32_t old_n = viewer_info(v)->n;
    float old_box = (float)viewer_info(v)->params.box_half;
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_scene(v->run.session, scene, &err) != SIM_OK) {
        viewer_message(v, "scene %s: %s", scene, err.message);
        return;
    }
    char mark[RENDER_GRAPH_LABEL];
    snprintf(mark, sizeof mark, "scene %s", scene);
    scene_changed(v, mark, old_n);
    if ((float)viewer_info(v)->params.box_half != old_box) {
        viewer_frame_bodies(v, 0);
    } else {
        viewer_aim_up(v); /* same box: keep the user's view */
    }
}

void viewer_reset(viewer_state *v) {
    uint32_t old_n = viewer_info(v)->n;
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_reset(v->run.session, &err) != SIM_OK) {
        viewer_message(v, "reset: %s", err.message);
        return;
    }
    scene_changed(v, "reset", old_n);
}

void viewer_cycle_color(viewer_state *v) {
    v->color_mode = (viewer_color_mode)((v->color_mode + 1) % VIEWER_COLOR_COUNT);
    v->dirty = 1; /* re-sample the new quantity's range */
}

void viewer_toggle_vsync(viewer_state *v) {
    v->vsync = !v->vsync;
    render_window_set_vsync(&v->window, v->vsync);
    viewer_message(v, "vsync %s", v->vsync ? "on" : "off");
}

void viewer_aim_up(viewer_state *v) {
    const sim_vec3d g = viewer_info(v)->params.gravity;
    float up[3] = {(float)-g.x, (float)-g.y, (float)-g.z}; /* zero gravity: the camera's +y */
    render_camera_set_up(&v->camera, up);
}

void viewer_fit_camera(viewer_state *v, int immediate) {
    viewer_aim_up(v);
    render_camera_fit(&v->camera, (float)viewer_info(v)->params.box_half, immediate);
}

/* The drawn bodies' bounds [m], their spheres included, from a host copy of their positions
 * (once per scene: 20 bytes a body drawn). 0 when there are none or they cannot be read. */
static int body_bounds(viewer_state *v, float lo[3], float hi[3]) {
    const uint32_t n = sim_sample_count(viewer_info(v)->n, v->draw_every);
    sim_vec4f *pos = n > 0 ? malloc((size_t)n * sizeof *pos) : NULL;
    float *speed = n > 0 ? malloc((size_t)n * sizeof *speed) : NULL;
    sim_error err;
    sim_error_clear(&err);
    int ok =
        pos != NULL && speed != NULL &&
        sim_session_export_sample(v->run.session, v->draw_every, pos, speed, 0, &err) == SIM_OK;
    for (int k = 0; k < 3 && ok; ++k) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (uint32_t i = 0; i < n && ok; ++i) {
        const float c[3] = {pos[i].x, pos[i].y, pos[i].z}, r = pos[i].w;
        for (int k = 0; k < 3; ++k) {
            lo[k] = fminf(lo[k], c[k] - r);
            hi[k] = fmaxf(hi[k], c[k] + r);
        }
    }
    for (int k = 0; k < 3 && ok; ++k) {
        ok = isfinite(lo[k]) && isfinite(hi[k]);
    }
    free(pos);
    free(speed);
    return ok;
}

void viewer_frame_bodies(viewer_state *v, int immediate) {
    float lo[3], hi[3];
    if (!body_bounds(v, lo, hi)) {
        viewer_fit_camera(v, immediate);
        return;
    }
    viewer_aim_up(v);
    const float aspect =
        v->window.fb_height > 0 ? (float)v->window.fb_width / (float)v->window.fb_height : 1.0f;
    render_camera_fit_bounds(&v->camera, lo, hi, (float)viewer_info(v)->params.box_half, aspect,
                             immediate);
}

void viewer_toggle_graph_log(viewer_state *v) {
    v->graph_log = !v->graph_log;
    render_graph_set_log(&v->graph, v->graph_log);
    viewer_message(v, "timing graph: %s axis",
                   v->graph_log ? "log (one line per kernel)" : "linear (stacked)");
}

int viewer_cull(const viewer_state *v) {
    return viewer_info(v)->config.cull;
}

void viewer_toggle_cull(viewer_state *v) {
    const int on = !viewer_cull(v);
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_cull(v->run.session, on, &err) != SIM_OK) {
        viewer_message(v, "culling %s: %s", on ? "on" : "off", err.message);
        return;
    }
    render_graph_mark(&v->graph, on ? "culling on" : "culling off");
    viewer_compare_open(v);
    viewer_message(v, "%s",
                   on ? "culling on: contacts over the tile pairs whose boxes overlap"
                      : "culling off: every tile pair is swept (as the maps are studied)");
}
