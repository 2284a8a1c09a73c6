/* SPDX-License-Identifier: MIT
 * nbsim — opening a simulation: scene, parameters, backend; switching scenes and maps. */
#include "session.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "autotune.h"
#include "physics.h"
#include "scene.h"

/* Triplets (auto) stay on while a step's unique triples fit this budget: about 10 ms per step
 * on a current GPU at ~2e11 triples/s, and well under a second per frame on a CPU core. */
#define APP_AUTO_TRIPLES_CUDA 2.0e9
#define APP_AUTO_TRIPLES_CPU 2.0e6

/* A user's dt beyond this multiple of the default step (t_c / 50 or finer) gets a warning. */
#define APP_DT_WARN_FACTOR 2.5

static int is_builtin(const char *name) {
    for (int i = 0; i < sim_scene_builtin_count(); ++i) {
        if (strcmp(sim_scene_builtin_name(i), name) == 0) {
            return 1;
        }
    }
    return 0;
}

static void add_notice(app_session *s, const char *text) {
    size_t len = strlen(s->notice);
    snprintf(s->notice + len, sizeof s->notice - len, "%s%s", len ? "\n" : "", text);
}

/* Loads the scene into *state with its parameters, then applies the command-line overrides. */
static sim_status load_scene(const app_options *o, const char *scene, sim_params *params,
                             sim_state *state, sim_error *err) {
    *params = sim_params_default();
    sim_status st;
    if (is_builtin(scene)) {
        st = sim_scene_builtin(scene, o->n, o->seed, params, state, err);
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
        st = sim_scene_load(scene, params, state, err);
    }
    if (st != SIM_OK) {
        return st;
    }
    const sim_params *u = &o->params;
    unsigned set = o->params_set;
    if (set & APP_SET_DT)
        params->dt = u->dt;
    if (set & APP_SET_STIFFNESS)
        params->stiffness = u->stiffness;
    if (set & APP_SET_RESTITUTION)
        params->restitution = u->restitution;
    if (set & APP_SET_HERTZ)
        params->hertz = u->hertz;
    if (set & APP_SET_GRAVITY)
        params->gravity = u->gravity;
    if (set & APP_SET_BOX)
        params->box_half = u->box_half;
    if (set & APP_SET_ATM_NU)
        params->atm_nu = u->atm_nu;
    if (set & APP_SET_ATM_CUTOFF)
        params->atm_cutoff = u->atm_cutoff;
    if (set & APP_SET_STEPS)
        params->steps_per_frame = u->steps_per_frame;
    return SIM_OK;
}

static sim_status resolve_backend(app_session *s, sim_error *err) {
    const app_options *o = &s->opt;
    if (o->backend == APP_BACKEND_CPU) {
        s->opt.config.kind = SIM_BACKEND_CPU;
    } else if (sim_cuda_device_count() > 0) {
        s->opt.config.kind = SIM_BACKEND_CUDA;
    } else if (o->backend == APP_BACKEND_CUDA) {
        return sim_fail(err, SIM_NO_DEVICE,
                        "--backend cuda: no CUDA device found; "
                        "use --backend cpu");
    } else {
        s->opt.config.kind = SIM_BACKEND_CPU;
        add_notice(s, "no CUDA device found: using the CPU reference backend");
    }
    if (s->opt.config.kind == SIM_BACKEND_CPU && s->opt.config.pair_map == SIM_PAIR_FULL) {
        return sim_fail(err, SIM_UNSUPPORTED, "--pair-map full needs the CUDA backend");
    }
    return SIM_OK;
}

/* Effective triplets on/off and dt for the loaded scene. */
static void finish_params(app_session *s) {
    const app_options *o = &s->opt;
    sim_params *p = &s->params;
    char text[256];
    if (o->triplets == APP_TRIPLETS_AUTO) {
        double budget =
            s->opt.config.kind == SIM_BACKEND_CUDA ? APP_AUTO_TRIPLES_CUDA : APP_AUTO_TRIPLES_CPU;
        int wanted = p->triplets || p->atm_nu != 0.0;
        p->triplets = wanted && (double)s->unique_triples <= budget;
        if (wanted && !p->triplets) {
            snprintf(text, sizeof text,
                     "triplet forces off: N = %u gives %.3g triples per step, too many for "
                     "interactive speed (--triplets on forces them)",
                     s->initial.n, (double)s->unique_triples);
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
    s->unique_pairs = sim_choose(state.n, 2);
    s->unique_triples = sim_choose(state.n, 3);
    finish_params(s);
    s->frame = 0;
    s->sim_time = 0.0;
    return SIM_OK;
}

sim_status app_session_open(app_session *s, const app_options *o, sim_error *err) {
    memset(s, 0, sizeof *s);
    s->opt = *o;
    sim_status st = resolve_backend(s, err);
    if (st == SIM_OK) {
        st = load_into(s, o->scene, err);
    }
    if (st == SIM_OK && s->opt.autotune != 0) {
        char report[512];
        st = app_autotune(&s->opt.config, s->opt.autotune, &s->params, &s->initial, report,
                          sizeof report, err);
        if (st == SIM_OK) {
            add_notice(s, report);
        }
    }
    if (st == SIM_OK) {
        st = sim_backend_create(&s->opt.config, &s->params, &s->initial, &s->backend, err);
    }
    if (st != SIM_OK) {
        app_session_close(s);
    }
    return st;
}

void app_session_close(app_session *s) {
    sim_backend_destroy(s->backend);
    s->backend = NULL;
    sim_state_free(&s->initial);
}

sim_status app_session_frame(app_session *s, sim_frame_timing *t, sim_error *err) {
    sim_status st = sim_backend_run_frame(s->backend, t, err);
    if (st == SIM_OK) {
        s->frame++;
        s->sim_time += s->params.dt * (double)t->steps;
    }
    return st;
}

sim_status app_session_reset(app_session *s, sim_error *err) {
    return app_session_set_scene(s, s->scene, err);
}

sim_status app_session_set_scene(app_session *s, const char *scene, sim_error *err) {
    char name[SIM_PATH_MAX];
    snprintf(name, sizeof name, "%s", scene);
    uint32_t old_n = s->initial.n;
    s->notice[0] = '\0';
    sim_status st = load_into(s, name, err);
    if (st != SIM_OK) {
        return st;
    }
    if (s->initial.n == old_n && s->backend != NULL) {
        st = sim_backend_set_params(s->backend, &s->params, err);
        return st == SIM_OK ? sim_backend_set_state(s->backend, &s->initial, err) : st;
    }
    /* A different N: a new backend sized for it, with the maps the user has active now. */
    sim_backend_config config = *sim_backend_get_config(s->backend);
    sim_backend *fresh = NULL;
    st = sim_backend_create(&config, &s->params, &s->initial, &fresh, err);
    if (st != SIM_OK) {
        return st;
    }
    sim_backend_destroy(s->backend);
    s->backend = fresh;
    return SIM_OK;
}

sim_status app_session_set_maps(app_session *s, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err) {
    return sim_backend_set_maps(s->backend, pm, tm, err);
}

/* Applies a changed copy of the effective parameters to the backend, keeping it on success. */
static sim_status update_params(app_session *s, const sim_params *p, sim_error *err) {
    sim_status st = sim_backend_set_params(s->backend, p, err);
    if (st == SIM_OK) {
        s->params = *p;
    }
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
