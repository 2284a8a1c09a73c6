/* SPDX-License-Identifier: MIT
 * nbsim — a running simulation: the scene, the effective parameters and the backend. Shared by
 * the headless loop and the viewer (which also switches scenes, maps and resets through it). */
#ifndef APP_SESSION_H
#define APP_SESSION_H

#include "options.h"

typedef struct {
    app_options opt;          /* the command line this session was opened with */
    char scene[SIM_PATH_MAX]; /* active scene (name or file) */
    sim_state initial;        /* the scene as loaded, for reset */
    sim_params params;        /* effective parameters (scene + command line + derived dt) */
    sim_backend *backend;
    uint64_t unique_pairs;   /* N(N-1)/2 */
    uint64_t unique_triples; /* N(N-1)(N-2)/6 */
    uint64_t frame;          /* frames run since open/reset */
    double sim_time;         /* [s] */
    char notice[512];        /* what a user should know (fallbacks, defaults chosen), or "" */
} app_session;

/* Builds the scene, resolves the backend (auto: CUDA if a device exists, else CPU with a
 * notice), chooses triplets on/off for auto, derives dt and warns if the user's dt is too large. */
sim_status app_session_open(app_session *s, const app_options *o, sim_error *err);
void app_session_close(app_session *s);

/* Runs one frame and advances frame / sim_time. */
sim_status app_session_frame(app_session *s, sim_frame_timing *t, sim_error *err);
/* Reloads the active scene (same N and seed) into the backend. */
sim_status app_session_reset(app_session *s, sim_error *err);
/* Switches to another scene (built-in name or file); the backend is rebuilt if N changes. */
sim_status app_session_set_scene(app_session *s, const char *scene, sim_error *err);
sim_status app_session_set_maps(app_session *s, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err);
sim_status app_session_set_triplets(app_session *s, int on, sim_error *err);
sim_status app_session_set_steps_per_frame(app_session *s, int steps, sim_error *err);

#endif /* APP_SESSION_H */
