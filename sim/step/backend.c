/* SPDX-License-Identifier: MIT
 * nbsim — the calls on a sim_backend: each validates its input once, then dispatches to the
 * backend's table (the CPU, CUDA or multi backend; made by backends/backend_create.c). What
 * follows a change is decided here once for every stepped backend (the stepper computes the
 * forces again after a new state or model, and sorts after a new state or culling on). */
#include "step/backend_impl.h"
#include "nbsim/params.h"
#include "physics/physics.h"

#include <stdlib.h>
#include <string.h>

sim_status sim_backend_check_maps(sim_backend_kind kind, sim_pair_choice pm,
                                  sim_triplet_map tm, sim_error *err) {
    if (pm < 0 || pm >= SIM_PAIR_CHOICE_COUNT) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", pm);
    }
    if ((int)tm < 0 || tm >= SIM_TRIPLET_MAP_COUNT) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown triplet map %d", (int)tm);
    }
    if (sim_pair_choice_needs_cuda(pm) && kind != SIM_BACKEND_CUDA) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "the full N^2 pair sweep is a CUDA kernel variant; the CPU reference "
                        "always uses the symmetric tiled sweep");
    }
    return SIM_OK;
}

/* Friction runs on one rank, CPU or one GPU (nbsim/internal/backend.h): the one refusal of the library, before
 * any work (the session says it with the flags first). Its contact histories live in one
 * process's tables, keyed by the pairs' owners; several ranks would have to move them with the
 * pairs at every re-partition. */
sim_status sim_backend_check_friction(const sim_backend_config *c, const sim_params *p,
                                      sim_error *err) {
    if (!sim_params_have_friction(p)) {
        return SIM_OK;
    }
    if (c->multi.world > 1) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "friction (friction %g, rolling_friction %g) runs on one rank: its "
                        "contact histories live in one process, not split over %d ranks",
                        p->friction, p->rolling_friction, c->multi.world);
    }
    return SIM_OK;
}

/* The spin of several GPUs, kept here (backend_impl.h): the state's, or zero. */
sim_status sim_backend_keep_spin(sim_backend *b, const sim_state *s, sim_error *err) {
    if (b->config.kind != SIM_BACKEND_CUDA || b->config.multi.world <= 1) {
        return SIM_OK;
    }
    if (b->kept_spin == NULL) {
        b->kept_spin = calloc(b->n ? b->n : 1, sizeof *b->kept_spin);
        if (b->kept_spin == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the spin of %u bodies", b->n);
        }
    }
    for (uint32_t i = 0; i < b->n; ++i) {
        b->kept_spin[i] = s->spin != NULL ? s->spin[i] : (sim_vec4d){0.0, 0.0, 0.0, 0.0};
    }
    b->kept_rotational = sim_state_rotational_energy(s);
    return SIM_OK;
}

void sim_backend_destroy(sim_backend *b) {
    if (b != NULL) {
        free(b->kept_spin);
        b->kept_spin = NULL;
        b->ops->destroy(b);
    }
}

sim_status sim_backend_run_frame(sim_backend *b, sim_frame_timing *t, sim_error *err) {
    SIM_ASSERT(b != NULL && t != NULL);
    return b->ops->run_frame(b, t, err);
}

sim_status sim_backend_set_maps(sim_backend *b, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err) {
    SIM_ASSERT(b != NULL);
    SIM_TRY(sim_backend_check_maps(b->config.kind, pm, tm, err));
    /* Backends read the plans at every step: nothing else to tell them. */
    return sim_backend_plan_maps(b, pm, tm, &b->params, err);
}

sim_status sim_backend_set_cull(sim_backend *b, int on, sim_error *err) {
    SIM_ASSERT(b != NULL);
    const int old = b->config.cull;
    if (!on && old && !b->pair_planned && b->config.pair_map != SIM_PAIR_FULL) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "N = %u bodies run culled on the cell grid: the pair maps cover at most "
                        "%u tiles of %u bodies per side, so culling stays on",
                        b->n, SIM_MAX_TILES_2D, b->config.tile);
    }
    b->config.cull = on ? 1 : 0;
    if (b->config.cull == old) {
        return SIM_OK;
    }
    /* Unculled triplets need the triplet map's plan (culled ones may have gone without). */
    sim_status st = SIM_OK;
    if (b->params.triplets && !b->triplet_planned) {
        st = sim_backend_plan_maps(b, b->config.pair_map, b->config.triplet_map, &b->params, err);
    }
    if (st == SIM_OK) {
        st = b->ops->set_cull(b, err);
    }
    if (st == SIM_OK && b->config.cull) {
        sim_step_request_sort(&b->stepper); /* the bodies' order says nothing of their places */
    }
    if (st != SIM_OK) {
        b->config.cull = old;
        (void)sim_backend_plan_maps(b, b->config.pair_map, b->config.triplet_map, &b->params, NULL);
    }
    return st;
}

void sim_backend_cull_info(const sim_backend *b, sim_cull_info *info) {
    SIM_ASSERT(b != NULL && info != NULL);
    info->active = sim_backend_culling(b);
    info->levels = b->cull_levels;
    info->tiles = b->tiles;
    info->super_tiles = b->super_tiles;
    info->items = b->cull_items;
    info->plan = info->active ? &b->cull_plan : NULL;
}

sim_status sim_backend_tile_pairs(sim_backend *b, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                  sim_error *err) {
    SIM_ASSERT(b != NULL && count != NULL && (out != NULL || cap == 0));
    *count = 0;
    if (!sim_backend_culling(b)) {
        return SIM_OK;
    }
    return b->ops->tile_pairs(b, out, cap, count, err);
}

sim_status sim_backend_tile_triples(sim_backend *b, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                    sim_error *err) {
    SIM_ASSERT(b != NULL && count != NULL && (out != NULL || cap == 0));
    *count = 0;
    if (!sim_backend_triplet_culling(b)) {
        return SIM_OK;
    }
    return b->ops->tile_triples(b, out, cap, count, err);
}

sim_status sim_backend_contacts(sim_backend *b, sim_body_pair *out, uint64_t cap, uint64_t *count,
                                sim_error *err) {
    SIM_ASSERT(b != NULL && count != NULL && (out != NULL || cap == 0));
    *count = 0;
    return b->ops->contacts(b, out, cap, count, err);
}

sim_status sim_backend_set_params(sim_backend *b, const sim_params *p, sim_error *err) {
    SIM_ASSERT(b != NULL && p != NULL);
    SIM_TRY(sim_params_check(p, err));
    SIM_TRY(sim_backend_check_friction(&b->config, p, err));
    SIM_TRY(sim_periodic_check(p, 0.0, err)); /* the bodies' radii: set_state and create */
    /* New params may need the triplet map's plan (triplets turned on, the cut-off removed). */
    if (p->triplets && !b->triplet_planned) {
        SIM_TRY(sim_backend_plan_maps(b, b->config.pair_map, b->config.triplet_map, p, err));
    }
    const sim_params old = b->params;
    SIM_TRY(b->ops->set_params(b, p, err));
    if (b->stepper.ops != NULL) { /* the skin, the box or the radii the lists were built for */
        sim_step_request_rebuild(&b->stepper);
    }
    /* Forces change only with the model (not with dt or steps per frame): computed again then, so
     * the next half kick uses forces of the new model; otherwise F_n is kept bit for bit. */
    if (b->stepper.ops != NULL && !sim_params_same_model(&old, p)) {
        return sim_step_forces(b, 0, err);
    }
    return SIM_OK;
}

sim_status sim_backend_set_state(sim_backend *b, const sim_state *state, sim_error *err) {
    SIM_ASSERT(b != NULL && state != NULL);
    if (state->n != b->n) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "state has %u bodies, backend holds %u", state->n,
                        b->n);
    }
    SIM_TRY(sim_periodic_check(&b->params,
                               b->params.periodic ? sim_state_max_radius(state) : 0.0, err));
    SIM_TRY(b->ops->set_state(b, state, err));
    SIM_TRY(sim_backend_keep_spin(b, state, err));
    if (b->stepper.ops == NULL) {
        return SIM_OK; /* a composite: its members did the rest */
    }
    sim_step_request_sort(&b->stepper); /* the new bodies' order says nothing of their places */
    return sim_step_forces(b, 0, err);
}

sim_status sim_backend_read_state(sim_backend *b, sim_state *out, sim_vec3d *forces,
                                  sim_error *err) {
    SIM_ASSERT(b != NULL && out != NULL && out->n == b->n);
    SIM_TRY(b->ops->read_state(b, out, forces, err));
    if (b->kept_spin != NULL) { /* spin the backend does not hold, and no friction: no contacts */
        if (out->spin != NULL) {
            memcpy(out->spin, b->kept_spin, (size_t)b->n * sizeof *out->spin);
        }
        out->contact_count = 0;
    }
    return SIM_OK;
}

sim_status sim_backend_read_spin(sim_backend *b, sim_vec4d *out, sim_error *err) {
    SIM_ASSERT(b != NULL && out != NULL);
    if (b->kept_spin != NULL) {
        memcpy(out, b->kept_spin, (size_t)b->n * sizeof *out);
        return SIM_OK;
    }
    sim_state st;
    SIM_TRY(sim_state_alloc(&st, b->n, err));
    const sim_status status = sim_backend_read_state(b, &st, NULL, err);
    if (status == SIM_OK) {
        memcpy(out, st.spin, (size_t)b->n * sizeof *out);
    }
    sim_state_free(&st);
    return status;
}

sim_status sim_backend_energy(sim_backend *b, sim_energy *e, sim_error *err) {
    SIM_ASSERT(b != NULL && e != NULL);
    memset(e, 0, sizeof *e);
    SIM_TRY(b->ops->energy(b, e, err));
    if (b->kept_spin != NULL) { /* in place of what the members counted */
        e->total += b->kept_rotational - e->rotational;
        e->rotational = b->kept_rotational;
    }
    return SIM_OK;
}

sim_status sim_backend_export_positions(sim_backend *b, sim_vec4f *pos, float *speed, int on_device,
                                        sim_error *err) {
    return sim_backend_export_sample(b, 1, pos, speed, on_device, err);
}

sim_status sim_backend_export_sample(sim_backend *b, uint32_t every, sim_vec4f *pos, float *speed,
                                     int on_device, sim_error *err) {
    SIM_ASSERT(b != NULL && pos != NULL && every >= 1);
    if (on_device && b->config.kind != SIM_BACKEND_CUDA) {
        return sim_fail(err, SIM_UNSUPPORTED, "device export needs the CUDA backend");
    }
    return b->ops->export_positions(b, every, pos, speed, on_device, err);
}

sim_status sim_backend_capture_alloc(const sim_backend *b, sim_capture *c, sim_error *err) {
    SIM_ASSERT(b != NULL && c != NULL);
    return sim_capture_alloc(c, b->n, b->config.kind == SIM_BACKEND_CUDA, err);
}

sim_status sim_backend_capture(sim_backend *b, sim_capture *c, sim_error *err) {
    SIM_ASSERT(b != NULL && c != NULL && !c->pending);
    if (c->n != b->n) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "capture buffers hold %u bodies, backend holds %u",
                        c->n, b->n);
    }
    if (c->pinned != (b->config.kind == SIM_BACKEND_CUDA)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "capture buffers were made for another backend");
    }
    SIM_TRY(b->ops->capture(b, c, err));
    if (b->kept_spin != NULL) {
        c->spin_user_order = 1;
    }
    for (uint32_t i = 0; b->kept_spin != NULL && i < b->n; ++i) {
        const sim_vec4d w = b->kept_spin[i];
        c->spin[i] = (sim_vec4f){(float)w.x, (float)w.y, (float)w.z, 0.0f};
    }
    return SIM_OK;
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

uint32_t sim_backend_body_count(const sim_backend *b) {
    return b->n;
}
