/* SPDX-License-Identifier: MIT
 * nbsim — opening a simulation (scene, resolved settings, backend) and everything that reaches
 * the backend afterwards. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "autotune.h"
#include "physics.h"
#include "scene.h"

/* Triplets (auto) stay on while a step's unique triples fit this budget: about 10 ms per step
 * on a current GPU at ~2e11 triples/s, and well under a second per frame on a CPU core. */
#define APP_AUTO_TRIPLES_CUDA 2.0e9
#define APP_AUTO_TRIPLES_CPU 2.0e6
/* With an ATM cut-off and culling the triplet work grows like N (sim/triplet_cull.h): they stay
 * on up to this many bodies (the `triplets` scene at a 3 m cut-off: ~20 ms per step expected at
 * 131,072 on an H100, bench/README.md; ~1 s per step at 4,096 on two CPU cores). */
#define APP_AUTO_CULLED_TRIPLETS_N_CUDA 131072u
#define APP_AUTO_CULLED_TRIPLETS_N_CPU 4096u

/* A user's dt beyond this multiple of the default step (t_c / 50 or finer) gets a warning. */
#define APP_DT_WARN_FACTOR 2.5

#define NOTICES_MAX 2048

struct app_session {
    app_options opt;           /* the command line, as parsed (never changed) */
    sim_backend_config config; /* resolved: kind, autotuned maps */
    char scene[SIM_PATH_MAX];  /* active scene */
    sim_state initial;         /* the scene as loaded, for reset */
    sim_params params;         /* effective parameters */
    sim_backend *backend;
    app_run_info info; /* what app_session_info returns, refreshed on every change */
    app_dump *dump;    /* the trajectory being recorded, or NULL */
    char dump_path[SIM_PATH_MAX];
    uint64_t dump_frame0;      /* info.frame when the recording started */
    char notices[NOTICES_MAX]; /* pending, one per line */
    char taken[NOTICES_MAX];   /* what the last app_session_take_notices returned */
};

static void add_notice(app_session *s, const char *text) {
    const size_t len = strlen(s->notices);
    snprintf(s->notices + len, sizeof s->notices - len, "%s%s", len ? "\n" : "", text);
}

/* The info a reader sees, from the session's own fields and the backend's. */
static void refresh_info(app_session *s) {
    app_run_info *i = &s->info;
    i->scene = s->scene;
    i->n = s->initial.n;
    i->config = s->backend != NULL ? *sim_backend_get_config(s->backend) : s->config;
    i->backend = i->config.kind == SIM_BACKEND_CUDA ? "cuda" : "cpu";
    i->device = s->backend != NULL ? sim_backend_device_name(s->backend) : "";
    i->params = s->params;
    i->unique_pairs = sim_choose(s->initial.n, 2);
    i->unique_triples = sim_choose(s->initial.n, 3);
    i->dump_path = s->dump != NULL ? s->dump_path : "";
}

/* Loads the scene into *state with its parameters, then applies the command-line overrides. */
static sim_status load_scene(const app_options *o, const char *scene, sim_params *params,
                             sim_state *state, sim_error *err) {
    *params = sim_params_default();
    if (sim_scene_is_builtin(scene)) {
        SIM_TRY(sim_scene_builtin(scene, o->n, o->seed, params, state, err));
    } else {
        struct stat info;
        if (stat(scene, &info) != 0 || !S_ISREG(info.st_mode)) {
            char names[256] = "";
            for (int i = 0; i < sim_scene_builtin_count(); ++i) {
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                         sim_scene_builtin_name(i));
            }
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "--scene: '%s' is neither a built-in scene (%s) nor a scene file",
                            scene, names);
        }
        if (o->n != 0) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "--n applies to built-in scenes; '%s' is a file",
                            scene);
        }
        SIM_TRY(sim_scene_load(scene, params, state, err));
    }
    /* The command line's values where given: the same setter rules as the file's. */
    const sim_params *u = &o->params;
    const unsigned set = o->params_set;
    if (set & APP_SET(DT))
        params->dt = u->dt;
    if (set & APP_SET(STIFFNESS))
        params->stiffness = u->stiffness;
    if (set & APP_SET(RESTITUTION))
        params->restitution = u->restitution;
    if (set & APP_SET(GRAVITY))
        params->gravity = u->gravity;
    if (set & APP_SET(BOX))
        params->box_half = u->box_half;
    if (set & APP_SET(ATM_NU))
        params->atm_nu = u->atm_nu;
    if (set & APP_SET(ATM_CUTOFF))
        params->atm_cutoff = u->atm_cutoff;
    if (set & APP_SET(STEPS))
        params->steps_per_frame = u->steps_per_frame;
    if (set & APP_SET_HERTZ)
        params->hertz = u->hertz;
    return SIM_OK;
}

static sim_status resolve_backend(app_session *s, sim_error *err) {
    const app_options *o = &s->opt;
    s->config = o->config;
    if (o->backend == APP_BACKEND_CPU) {
        s->config.kind = SIM_BACKEND_CPU;
    } else if (sim_cuda_device_count() > 0) {
        s->config.kind = SIM_BACKEND_CUDA;
    } else if (o->backend == APP_BACKEND_CUDA) {
        return sim_fail(err, SIM_NO_DEVICE,
                        "--backend cuda: no CUDA device found; "
                        "use --backend cpu");
    } else {
        s->config.kind = SIM_BACKEND_CPU;
        add_notice(s, "no CUDA device found: using the CPU reference backend");
    }
    if (s->config.kind == SIM_BACKEND_CPU && s->config.pair_map == SIM_PAIR_FULL) {
        return sim_fail(err, SIM_UNSUPPORTED, "--pair-map full needs the CUDA backend");
    }
    return SIM_OK;
}

/* Effective triplets on/off and dt for the loaded scene. */
static void finish_params(app_session *s) {
    const app_options *o = &s->opt;
    sim_params *p = &s->params;
    const uint64_t triples = sim_choose(s->initial.n, 3);
    char text[256];
    if (o->triplets == APP_TRIPLETS_AUTO) {
        double budget =
            s->config.kind == SIM_BACKEND_CUDA ? APP_AUTO_TRIPLES_CUDA : APP_AUTO_TRIPLES_CPU;
        int wanted = p->triplets || p->atm_nu != 0.0;
        const int culled =
            p->atm_cutoff > 0.0 && s->config.cull && s->config.pair_map != SIM_PAIR_FULL;
        const uint32_t culled_n = s->config.kind == SIM_BACKEND_CUDA
                                      ? APP_AUTO_CULLED_TRIPLETS_N_CUDA
                                      : APP_AUTO_CULLED_TRIPLETS_N_CPU;
        p->triplets = wanted && (culled ? s->initial.n <= culled_n : (double)triples <= budget);
        if (wanted && !p->triplets) {
            snprintf(text, sizeof text,
                     "triplet forces off: N = %u gives %.3g triples per step%s, too many for "
                     "interactive speed (--triplets on forces them)",
                     s->initial.n, (double)triples, culled ? " (culled by the cut-off)" : "");
            add_notice(s, text);
        }
    } else {
        p->triplets = o->triplets == APP_TRIPLETS_ON;
    }
    double safe = sim_default_dt(p, &s->initial);
    if (p->dt <= 0.0) {
        p->dt = safe;
    } else if (p->dt > APP_DT_WARN_FACTOR * safe) {
        snprintf(text, sizeof text,
                 "warning: --dt %g is more than %.1f times the default step %g (resolving a "
                 "contact in enough steps): contacts may be unstable or lose energy wrongly",
                 p->dt, APP_DT_WARN_FACTOR, safe);
        add_notice(s, text);
    }
}

static sim_status load_into(app_session *s, const char *scene, sim_error *err) {
    sim_state state = {0};
    sim_params params;
    sim_status st = load_scene(&s->opt, scene, &params, &state, err);
    if (st != SIM_OK) {
        sim_state_free(&state);
        return st;
    }
    sim_state_free(&s->initial);
    s->initial = state;
    s->params = params;
    snprintf(s->scene, sizeof s->scene, "%s", scene);
    finish_params(s);
    s->info.frame = 0;
    s->info.steps = 0;
    s->info.sim_time = 0.0;
    return SIM_OK;
}

sim_status app_session_open(app_session **out, const app_options *o, sim_error *err) {
    *out = NULL;
    app_session *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the session");
    }
    s->opt = *o;
    sim_status st = resolve_backend(s, err);
    if (st == SIM_OK) {
        st = load_into(s, o->scene, err);
    }
    if (st == SIM_OK && o->autotune != 0) {
        char report[512];
        st = app_autotune(&s->config, o->autotune, &s->params, &s->initial, report, sizeof report,
                          err);
        if (st == SIM_OK) {
            add_notice(s, report);
        }
    }
    if (st == SIM_OK) {
        st = sim_backend_create(&s->config, &s->params, &s->initial, &s->backend, err);
    }
    if (st != SIM_OK) {
        app_session_close(s);
        return st;
    }
    refresh_info(s);
    *out = s;
    return SIM_OK;
}

void app_session_close(app_session *s) {
    if (s == NULL) {
        return;
    }
    (void)app_session_dump_stop(s, NULL, NULL);
    sim_backend_destroy(s->backend);
    sim_state_free(&s->initial);
    free(s);
}

const app_run_info *app_session_info(const app_session *s) {
    return &s->info;
}

const char *app_session_take_notices(app_session *s) {
    snprintf(s->taken, sizeof s->taken, "%s", s->notices);
    s->notices[0] = '\0';
    return s->taken;
}

sim_status app_session_frame(app_session *s, sim_frame_timing *t, sim_error *err) {
    SIM_TRY(sim_backend_run_frame(s->backend, t, err));
    s->info.frame++;
    s->info.steps += (uint64_t)t->steps;
    s->info.sim_time += s->params.dt * (double)t->steps;
    s->info.dump_ms = 0.0;
    if (s->dump != NULL) {
        SIM_TRY(app_dump_frame(s->dump, s->backend, s->info.frame - s->dump_frame0, s->info.steps,
                               s->info.sim_time, &s->info.dump_ms, err));
    }
    return SIM_OK;
}

sim_status app_session_dump_start(app_session *s, const char *path, int every, sim_error *err) {
    SIM_ASSERT(s->dump == NULL);
    SIM_TRY(app_dump_open(&s->dump, path, every, s->backend, err));
    snprintf(s->dump_path, sizeof s->dump_path, "%s", path);
    s->dump_frame0 = s->info.frame;
    refresh_info(s);
    /* Frame 0 is the state the recording starts from, as LAMMPS and HOOMD write it. */
    return app_dump_frame(s->dump, s->backend, 0, s->info.steps, s->info.sim_time, &s->info.dump_ms,
                          err);
}

sim_status app_session_dump_stop(app_session *s, app_dump_stats *stats, sim_error *err) {
    if (s->dump == NULL) {
        return SIM_OK;
    }
    const sim_status st = app_dump_close(s->dump, stats, err);
    s->dump = NULL;
    refresh_info(s);
    return st;
}

sim_status app_session_energy(app_session *s, sim_energy *e, sim_error *err) {
    return sim_backend_energy(s->backend, e, err);
}

sim_status app_session_save_state(app_session *s, const char *path, sim_error *err) {
    sim_state state = {0};
    sim_status st = sim_state_alloc(&state, s->initial.n, err);
    sim_vec3d *forces = NULL;
    if (st == SIM_OK) {
        forces = calloc(s->initial.n, sizeof *forces);
        st = forces ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for forces");
    }
    if (st == SIM_OK) {
        st = sim_backend_read_state(s->backend, &state, forces, err);
    }
    if (st == SIM_OK) {
        st = sim_state_save(path, &s->params, &state, forces, err);
    }
    free(forces);
    sim_state_free(&state);
    return st;
}

sim_status app_session_export_positions(app_session *s, sim_vec4f *pos, float *speed, int on_device,
                                        sim_error *err) {
    return sim_backend_export_positions(s->backend, pos, speed, on_device, err);
}

sim_status app_session_reset(app_session *s, sim_error *err) {
    return app_session_set_scene(s, s->scene, err);
}

sim_status app_session_set_scene(app_session *s, const char *scene, sim_error *err) {
    char name[SIM_PATH_MAX];
    snprintf(name, sizeof name, "%s", scene);
    const uint32_t old_n = s->initial.n;
    SIM_TRY(load_into(s, name, err));
    sim_status st = SIM_OK;
    if (s->initial.n == old_n) {
        st = sim_backend_set_params(s->backend, &s->params, err);
        st = st == SIM_OK ? sim_backend_set_state(s->backend, &s->initial, err) : st;
    } else {
        /* A different N: a new backend sized for it, with the maps the user has active now. A
         * trajectory file holds one N: its recording ends here. */
        if (s->dump != NULL) {
            char text[SIM_PATH_MAX + 96];
            snprintf(text, sizeof text, "trajectory %s ended: the new scene has %u bodies",
                     s->dump_path, s->initial.n);
            (void)app_session_dump_stop(s, NULL, NULL);
            add_notice(s, text);
        }
        sim_backend_config config = *sim_backend_get_config(s->backend);
        sim_backend *fresh = NULL;
        st = sim_backend_create(&config, &s->params, &s->initial, &fresh, err);
        if (st == SIM_OK) {
            sim_backend_destroy(s->backend);
            s->backend = fresh;
        }
    }
    refresh_info(s);
    return st;
}

sim_status app_session_set_maps(app_session *s, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err) {
    const sim_status st = sim_backend_set_maps(s->backend, pm, tm, err);
    refresh_info(s);
    return st;
}

/* Applies a changed copy of the effective parameters to the backend, keeping it on success. */
static sim_status update_params(app_session *s, const sim_params *p, sim_error *err) {
    const sim_status st = sim_backend_set_params(s->backend, p, err);
    if (st == SIM_OK) {
        s->params = *p;
    }
    refresh_info(s);
    return st;
}

sim_status app_session_set_triplets(app_session *s, int on, sim_error *err) {
    sim_params p = s->params;
    p.triplets = on;
    return update_params(s, &p, err);
}

sim_status app_session_set_steps_per_frame(app_session *s, int steps, sim_error *err) {
    sim_params p = s->params;
    p.steps_per_frame = steps;
    return update_params(s, &p, err);
}

sim_status app_session_set_cull(app_session *s, int on, sim_error *err) {
    const sim_status st = sim_backend_set_cull(s->backend, on, err);
    refresh_info(s);
    return st;
}
