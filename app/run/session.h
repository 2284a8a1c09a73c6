/* SPDX-License-Identifier: MIT
 * nbsim — a running simulation: the scene, the settings resolved from the options, and the
 * backend. The session is the only door to the backend: the headless loop, the timing log, the
 * summary and the viewer ask the session, never the backend. */
#ifndef APP_SESSION_H
#define APP_SESSION_H

#include "dump.h"
#include "options.h"

typedef struct app_session app_session;

/* What the session runs now, resolved from the options, the scene and the machine. Read by the
 * loops, the log, the summary and the overlay; valid until the next call that changes it. */
typedef struct {
    const char *scene;         /* active scene: a built-in name or a file */
    uint32_t n;                /* bodies */
    sim_backend_config config; /* resolved: backend kind, maps (autotuned), tile */
    const char *backend;       /* "cuda" or "cpu" */
    const char *device;        /* "NVIDIA H100 80GB HBM3" or "CPU (8 threads)" */
    int gpus;                  /* ranks the steps are split over (GPUs, or CPU threads), 1 alone */
    sim_params params;         /* effective: scene + command line + derived dt, triplets resolved */
    uint64_t unique_pairs;     /* N(N-1)/2 */
    uint64_t unique_triples;   /* N(N-1)(N-2)/6 */
    uint64_t frame;            /* frames run since the scene was (re)loaded */
    uint64_t steps;            /* integration steps since then */
    int partial_steps;         /* steps of a frame stopped by a signal, kept in the state (in
                                  `steps`, not in `frame`) */
    double sim_time;           /* [s] */
    const char *dump_path;     /* the trajectory being recorded, "" when none */
    double dump_ms;            /* this thread's cost of the last frame's dump [ms], 0 if none */
    const char *maps_source;   /* where the maps and tile came from: "command line", "default
                                  (...)", "cached autotune of 2026-05-01 (...)", "autotune" */
} app_run_info;

/* Builds the scene, resolves the backend (auto: CUDA if a device exists, else CPU with a
 * notice), chooses triplets on/off for auto, autotunes the maps when asked, derives dt (and
 * warns if the user's dt is too large), and creates the backend: app_session_prepare, then
 * app_session_start. The backend reads the stop flag of signals.h: a signal during the autotune
 * or the initial forces gives SIM_INTERRUPTED (and no session). */
sim_status app_session_open(app_session **out, const app_options *o, sim_error *err);
/* The two halves, for a caller with something to say in between: everything but the backend
 * (the info is valid, without a device name), then the backend and its initial forces (a step's
 * work: minutes on a CPU at N in the hundreds of thousands). After a failed start only
 * app_session_info and app_session_close may be called. */
sim_status app_session_prepare(app_session **out, const app_options *o, sim_error *err);
sim_status app_session_start(app_session *s, sim_error *err);
void app_session_close(app_session *s);

const app_run_info *app_session_info(const app_session *s);
/* What a user should know since the last call (fallbacks, defaults chosen, warnings), one
 * notice per line, or "" (the text stays valid until the next call into the session). */
const char *app_session_take_notices(app_session *s);

/* Runs one frame (steps_per_frame steps) and advances frame / sim_time. Stopped by a signal
 * (SIM_INTERRUPTED), the frame does not count, its completed steps do (info.partial_steps). */
sim_status app_session_frame(app_session *s, sim_frame_timing *t, sim_error *err);
sim_status app_session_energy(app_session *s, sim_energy *e, sim_error *err);
/* Whether to stop after this frame, agreed by every process of a run over several (--world),
 * so that all of them stop after the same frame. In: this process's signal number (0: none) and
 * whether its outputs failed (a full disk). Out: *signal becomes the signal to stop by (its own,
 * else the lowest another process has; 0: none), *failed whether any process's outputs failed.
 * Collective: every process calls it after every frame. Alone (or with --gpus in one process)
 * both stay as they are. */
sim_status app_session_agree_stop(app_session *s, int *signal, int *failed, sim_error *err);
/* The current state with the last force per body, as a scene file (see output_file.h). */
sim_status app_session_save_state(app_session *s, const char *path, sim_error *err);
/* For the viewer: (x, y, z, radius) and speed per body, into device (a mapped GL buffer) or
 * host arrays; see sim_backend_export_positions. */
sim_status app_session_export_positions(app_session *s, sim_vec4f *pos, float *speed, int on_device,
                                        sim_error *err);
/* The bodies' mean height [m]: their mean position along -gravity (along +y without gravity).
 * Copies every position to the host (a few MB at a million bodies): call it when energies are
 * computed, not every frame. */
sim_status app_session_mean_height(app_session *s, double *height, sim_error *err);

/* Trajectory recording (dump.h): every `every`-th frame from now on, starting with the current
 * state, until stopped; a change of N stops it (with a notice). stats may be NULL. */
sim_status app_session_dump_start(app_session *s, const char *path, int every, sim_error *err);
sim_status app_session_dump_stop(app_session *s, app_dump_stats *stats, sim_error *err);

/* Reloads the active scene (same N and seed) into the backend. */
sim_status app_session_reset(app_session *s, sim_error *err);
/* Switches to another scene (built-in name or file); the backend is rebuilt if N changes. */
sim_status app_session_set_scene(app_session *s, const char *scene, sim_error *err);
sim_status app_session_set_maps(app_session *s, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err);
sim_status app_session_set_triplets(app_session *s, int on, sim_error *err);
/* Culling on or off from the next step (the viewer's key). */
sim_status app_session_set_cull(app_session *s, int on, sim_error *err);
sim_status app_session_set_steps_per_frame(app_session *s, int steps, sim_error *err);

/* For the viewer's map inset (backend.h): the interacting tile pairs (I >= J) at the current
 * positions, the first min(cap, total) into out and the total into *count (0 when not
 * culling); the culling pass as planned. */
sim_status app_session_tile_pairs(app_session *s, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                  sim_error *err);
void app_session_cull_info(const app_session *s, sim_cull_info *info);

#endif /* APP_SESSION_H */
