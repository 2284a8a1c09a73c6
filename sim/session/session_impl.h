/* SPDX-License-Identifier: MIT
 * nbsim — private to sim/session/: a session's state, shared by opening it (open.c: the scene and
 * the settings resolved for it) and running it (session.c: frames, state, trajectories,
 * switches). */
#ifndef SIM_SESSION_IMPL_H
#define SIM_SESSION_IMPL_H

#include "nbsim/session.h"
#include "session/recorder.h"

#define NOTICES_MAX 2048

struct sim_session {
    sim_session_config cfg;    /* as the caller asked (never changed) */
    sim_backend_config config; /* resolved: kind, autotuned maps */
    char scene[SIM_PATH_MAX];  /* active scene */
    sim_state initial;         /* the scene as loaded, for reset */
    sim_state bodies;          /* the caller's arrays (config.bodies), copied; n = 0: none */
    sim_params params;         /* effective parameters */
    sim_backend *backend;
    sim_run_info info; /* what sim_session_info returns, refreshed on every change */
    sim_dump *dump;    /* the trajectory being recorded, or NULL */
    char dump_path[SIM_PATH_MAX];
    char decomposition[256]; /* sim_run_info.decomposition */
    uint64_t dump_frame0;             /* info.frame when the recording started */
    int id_written;                   /* rank 0 of a run over processes wrote the --nccl-id file */
    char notices[NOTICES_MAX];        /* pending, one per line */
    char warnings[NOTICES_MAX];       /* pending warnings, one per line */
    char taken[NOTICES_MAX];          /* what the last sim_session_take_notices returned */
    char taken_warnings[NOTICES_MAX]; /* what the last sim_session_take_warnings returned */
    sim_vec4f *height_pos;            /* scratch of sim_session_mean_height, n bodies, or NULL */
    uint32_t height_cap;
    sim_vec4d *spin;           /* scratch of sim_session_angular_speeds, n bodies, or NULL */
    uint32_t spin_cap;
    char maps_source[192]; /* where the maps and tile came from (sim_run_info.maps_source) */
    /* insertion during the run (insert.h; def.shape OFF: none): its settings and progress, the
     * most bodies the run takes, whether a batch that did not fit was said */
    sim_inserter ins;
    uint32_t insert_max;
    int insert_full_said;
    char insertion[256]; /* sim_run_info.insertion */
    sim_mesh *meshes[SIM_MESHES_MAX]; /* cfg.meshes loaded (meshes.c) */
    int mesh_count;
};

/* meshes.c: the config's mesh walls loaded (refused where they do not run yet), handed to the
 * backend (their clock from 0: a new backend, a new or reloaded scene), freed. */
sim_status sim_session_load_meshes(sim_session *s, sim_error *err);
sim_status sim_session_apply_meshes(sim_session *s, sim_error *err);
void sim_session_free_meshes(sim_session *s);

/* A notice for the user (sim_session_take_notices), one line: what was chosen or fell back. */
void sim_session_notice(sim_session *s, const char *text);
/* A warning (sim_session_take_warnings), one line: something in the user's input they may want to
 * change (a long dt, spheres sharing a centre, a scene file's key given twice); --quiet keeps
 * showing these. */
void sim_session_warning(sim_session *s, const char *text);
/* The info a reader sees (sim_session_info), from the session's own fields and the backend's:
 * after every change. */
void sim_session_refresh(sim_session *s);
/* Loads a scene (built-in, file, or the caller's arrays under their name) with the config's
 * overrides, triplets and step resolved, and makes it the session's; the backend is the caller's
 * business. On failure the session keeps what it had. */
sim_status sim_session_load(sim_session *s, const char *scene, sim_error *err);
/* The batches of the insertion due now, placed into *state (grown), with a warning the first time
 * one does not fit (session.c). */
sim_status sim_session_insert_into(sim_session *s, sim_state *state, sim_error *err);

#endif /* SIM_SESSION_IMPL_H */
