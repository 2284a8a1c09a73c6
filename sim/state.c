/* SPDX-License-Identifier: MIT
 * nbsim — body state allocation and default parameters. */
#include "state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sim_status sim_state_alloc(sim_state *state, uint32_t n, sim_error *err) {
    SIM_ASSERT(state != NULL);
    state->n = 0;
    state->pos = calloc(n ? n : 1, sizeof *state->pos);
    state->vel = calloc(n ? n : 1, sizeof *state->vel);
    if (state->pos == NULL || state->vel == NULL) {
        sim_state_free(state);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate host state for %u bodies", n);
    }
    state->n = n;
    return SIM_OK;
}

void sim_state_free(sim_state *state) {
    if (state != NULL) {
        free(state->pos);
        free(state->vel);
        state->pos = NULL;
        state->vel = NULL;
        state->n = 0;
    }
}

sim_status sim_state_copy(sim_state *dst, const sim_state *src, sim_error *err) {
    sim_status s = sim_state_alloc(dst, src->n, err);
    if (s != SIM_OK) {
        return s;
    }
    memcpy(dst->pos, src->pos, (size_t)src->n * sizeof *src->pos);
    memcpy(dst->vel, src->vel, (size_t)src->n * sizeof *src->vel);
    return SIM_OK;
}

sim_status sim_state_check_bodies(const sim_state *s, sim_error *err) {
    for (uint32_t i = 0; i < s->n; ++i) {
        const double r = s->pos[i].w, m = s->vel[i].w;
        if (!(r > 0.0 && isfinite(r)) || !(m > 0.0 && isfinite(m))) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "body %u: radius %g and mass %g must be positive and finite", i, r, m);
        }
    }
    return SIM_OK;
}

sim_params sim_params_default(void) {
    sim_params p;
    memset(&p, 0, sizeof p);
    p.dt = 0.0;
    p.stiffness = 1.0e4;
    p.restitution = 0.9;
    p.hertz = 0;
    p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    p.box_half = 20.0;
    p.atm_nu = 0.0;
    p.atm_cutoff = 0.0;
    p.triplets = 0;
    p.steps_per_frame = 1;
    return p;
}
