/* SPDX-License-Identifier: MIT
 * nbsim — a session's mesh walls (session_impl.h): loaded once when it opens, handed to each
 * backend it makes and again on each scene it loads. */
#include "session/session_impl.h"

sim_status sim_session_load_meshes(sim_session *s, sim_error *err) {
    const sim_session_config *o = &s->cfg;
    if (o->mesh_count <= 0) {
        return SIM_OK;
    }
    if (o->mesh_count > SIM_MESHES_MAX) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "--mesh: %d meshes, at most %d", o->mesh_count,
                        SIM_MESHES_MAX);
    }
    if (s->config.kind != SIM_BACKEND_CPU || s->config.multi.world > 1 || o->world > 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--mesh: mesh walls run on the CPU reference of one process only for now "
                        "(--backend cpu, without --gpus or --rank/--world)");
    }
    for (int k = 0; k < o->mesh_count; ++k) {
        const sim_status st = sim_mesh_load(&o->meshes[k], &s->meshes[k], err);
        if (st == SIM_IO) { /* a file the user named that cannot be read: bad input (exit 2) */
            err->status = SIM_BAD_ARGUMENT;
            return SIM_BAD_ARGUMENT;
        }
        SIM_TRY(st);
        s->mesh_count = k + 1;
    }
    return SIM_OK;
}

sim_status sim_session_apply_meshes(sim_session *s, sim_error *err) {
    if (s->mesh_count == 0 || s->backend == NULL) {
        return SIM_OK;
    }
    return sim_backend_set_meshes(s->backend, s->meshes, s->mesh_count, err);
}

void sim_session_free_meshes(sim_session *s) {
    for (int k = 0; k < s->mesh_count; ++k) {
        sim_mesh_destroy(s->meshes[k]);
        s->meshes[k] = NULL;
    }
    s->mesh_count = 0;
}
