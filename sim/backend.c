/* SPDX-License-Identifier: MIT
 * nbsim — sim_backend: validates input once, then dispatches to the CPU or CUDA backend. */
#include "backend_impl.h"

sim_backend_config sim_backend_config_default(void) {
    sim_backend_config c = {0};
    c.kind = SIM_BACKEND_CUDA;
    c.pair_map = SIM_PAIR_MAP_LTM;
    c.triplet_map = SIM_TRIPLET_MAP_TETRA;
    c.pair_full = 0;
    c.tile = 64;
    c.cpu_threads = 0;
    return c;
}

static sim_status check_maps(sim_pair_map pm, sim_triplet_map tm, sim_error *err) {
    if ((int)pm < 0 || pm >= SIM_PAIR_MAP_COUNT) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", (int)pm);
    }
    if ((int)tm < 0 || tm >= SIM_TRIPLET_MAP_COUNT) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown triplet map %d", (int)tm);
    }
    return SIM_OK;
}

static sim_status check_params(const sim_params *p, sim_error *err) {
    if (!(p->dt >= 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "time step %g must be >= 0", p->dt);
    }
    if (!(p->stiffness > 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "stiffness %g must be > 0", p->stiffness);
    }
    if (!(p->restitution > 0.0 && p->restitution <= 1.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "restitution %g must be in (0, 1]", p->restitution);
    }
    if (!(p->box_half > 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "box half-width %g must be > 0", p->box_half);
    }
    if (!(p->atm_cutoff >= 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "ATM cut-off %g must be >= 0", p->atm_cutoff);
    }
    if (p->steps_per_frame < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "steps per frame %d must be >= 1",
                        p->steps_per_frame);
    }
    return SIM_OK;
}

sim_status sim_backend_create(const sim_backend_config *config, const sim_params *params,
                              const sim_state *initial, sim_backend **out, sim_error *err) {
    SIM_ASSERT(config != NULL && params != NULL && initial != NULL && out != NULL);
    *out = NULL;
    sim_status s = check_maps(config->pair_map, config->triplet_map, err);
    if (s != SIM_OK) {
        return s;
    }
    if (config->tile != 32 && config->tile != 64 && config->tile != 128) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "tile size %u must be 32, 64 or 128", config->tile);
    }
    if (initial->n < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "the scene has no bodies");
    }
    s = check_params(params, err);
    if (s != SIM_OK) {
        return s;
    }
    if (config->kind == SIM_BACKEND_CPU) {
        return sim_cpu_backend_create(config, params, initial, out, err);
    }
    return sim_cuda_backend_create(config, params, initial, out, err);
}

void sim_backend_destroy(sim_backend *b) {
    if (b != NULL) {
        b->ops->destroy(b);
    }
}

sim_status sim_backend_run_frame(sim_backend *b, sim_frame_timing *t, sim_error *err) {
    SIM_ASSERT(b != NULL && t != NULL);
    return b->ops->run_frame(b, t, err);
}

sim_status sim_backend_set_maps(sim_backend *b, sim_pair_map pm, sim_triplet_map tm,
                                sim_error *err) {
    SIM_ASSERT(b != NULL);
    sim_status s = check_maps(pm, tm, err);
    return s != SIM_OK ? s : b->ops->set_maps(b, pm, tm, err);
}

sim_status sim_backend_set_pair_full(sim_backend *b, int on, sim_error *err) {
    SIM_ASSERT(b != NULL);
    if (on && b->config.kind != SIM_BACKEND_CUDA) {
        return sim_fail(err, SIM_UNSUPPORTED, "the full pair sweep needs the CUDA backend");
    }
    /* The CUDA backend reads config.pair_full at every step; its map plan stays valid. */
    b->config.pair_full = on ? 1 : 0;
    return SIM_OK;
}

sim_status sim_backend_set_params(sim_backend *b, const sim_params *p, sim_error *err) {
    SIM_ASSERT(b != NULL && p != NULL);
    sim_status s = check_params(p, err);
    return s != SIM_OK ? s : b->ops->set_params(b, p, err);
}

sim_status sim_backend_set_state(sim_backend *b, const sim_state *state, sim_error *err) {
    SIM_ASSERT(b != NULL && state != NULL);
    if (state->n != b->n) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "state has %u bodies, backend holds %u", state->n,
                        b->n);
    }
    return b->ops->set_state(b, state, err);
}

sim_status sim_backend_read_state(sim_backend *b, sim_state *out, sim_vec3d *forces,
                                  sim_error *err) {
    SIM_ASSERT(b != NULL && out != NULL && out->n == b->n);
    return b->ops->read_state(b, out, forces, err);
}

sim_status sim_backend_energy(sim_backend *b, sim_energy *e, sim_error *err) {
    SIM_ASSERT(b != NULL && e != NULL);
    return b->ops->energy(b, e, err);
}

sim_status sim_backend_export_positions(sim_backend *b, sim_vec4f *pos, float *speed,
                                        int on_device, sim_error *err) {
    SIM_ASSERT(b != NULL && pos != NULL);
    if (on_device && b->config.kind != SIM_BACKEND_CUDA) {
        return sim_fail(err, SIM_UNSUPPORTED, "device export needs the CUDA backend");
    }
    return b->ops->export_positions(b, pos, speed, on_device, err);
}

const sim_backend_config *sim_backend_get_config(const sim_backend *b) {
    return &b->config;
}

const sim_params *sim_backend_get_params(const sim_backend *b) {
    return &b->params;
}

const char *sim_backend_device_name(const sim_backend *b) {
    return b->device_name;
}
