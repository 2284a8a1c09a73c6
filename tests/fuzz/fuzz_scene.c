/* SPDX-License-Identifier: MIT
 * nbsim — libFuzzer target: bytes as a scene file, through the parser nbsim runs
 * (sim_scene_read), once as the file says, once with a command line's --box and a size limit, and
 * once taking the insertion keys (insert.h: then a file may hold no bodies).
 * Refusals are fine; a crash, a sanitizer report or a leak is a bug, and so is a scene the
 * parser accepts but a backend would refuse (its parameters and bodies are checked the way
 * sim_backend_create checks them). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "physics/physics.h"
#include "nbsim/scene.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse(const uint8_t *data, size_t size, const sim_scene_load_options *options,
                  sim_params params) {
    FILE *f = fmemopen((void *)data, size, "r");
    if (f == NULL) {
        return;
    }
    sim_state state = {0};
    sim_error err;
    const sim_status st = sim_scene_read(f, "fuzz.scene", options, &params, &state, &err);
    fclose(f);
    if (st != SIM_OK) {
        return;
    }
    sim_error why;
    if (sim_params_check(&params, &why) != SIM_OK ||
        sim_state_check_bodies(&state, &why) != SIM_OK || (state.n == 0 && !options->insert) ||
        (options->max_bodies != 0 && state.n > options->max_bodies)) {
        abort(); /* accepted here, refused by a backend */
    }
    const double limit = SIM_ESCAPE_FACTOR * params.box_half;
    for (uint32_t i = 0; i < state.n; ++i) {
        const sim_vec4d p = state.pos[i];
        if (!(p.x >= -limit && p.x <= limit && p.y >= -limit && p.y <= limit && p.z >= -limit &&
              p.z <= limit)) {
            abort(); /* a body the first frame would call escaped */
        }
    }
    uint32_t a, b;
    (void)sim_state_coincident_pairs(&state, &a, &b);
    if (options->insert != NULL) { /* the session's check of what the file asked */
        (void)sim_insert_check(&options->insert->def, &params, &why);
    }
    sim_state_free(&state);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const sim_scene_load_options plain = {0};
    parse(data, size, &plain, sim_params_default());
    char warnings[256] = "";
    sim_scene_load_options fixed = {0};
    fixed.max_bodies = 100;
    fixed.max_reason = "fuzzing";
    fixed.fixed = 1u << SIM_PARAM_BOX;
    fixed.warnings = warnings;
    fixed.warnings_cap = sizeof warnings;
    sim_params box = sim_params_default();
    box.box_half = 1.0;
    parse(data, size, &fixed, box);
    sim_inserter ins = {sim_insert_def_default(), {0}, 0};
    const sim_scene_load_options inserts = {.insert = &ins};
    parse(data, size, &inserts, sim_params_default());
    return 0;
}
