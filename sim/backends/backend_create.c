/* SPDX-License-Identifier: MIT
 * nbsim — sim_backend_create: validates a configuration once, then makes the CPU, CUDA, multi or
 * space backend; and the sums over processes, which only the multi and space backends do. Above the backends
 * it creates (the calls on a backend go through step/backend.c). */
#include "step/backend_impl.h"
#include "multi/comm.h"
#include "nbsim/params.h"
#include "physics/physics.h"
#include "space/space.h"

#include <stdlib.h>

static sim_status check_cull_config(const sim_backend_config *c, sim_error *err) {
    if (c->cull != 0 && c->cull != 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "cull %d must be 0 (off) or 1 (on)", c->cull);
    }
    if (c->cull_levels < 0 || c->cull_levels > 2) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "cull levels %d must be 0 (auto), 1 or 2",
                        c->cull_levels);
    }
    if (c->sort_every < 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "sort interval %d steps must be >= 0 (0 = default)",
                        c->sort_every);
    }
    if ((int)c->nlist < SIM_NLIST_DEFAULT || (int)c->nlist > SIM_NLIST_CELLS) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "neighbour list kind %d must be 0 (default), 1 (half), 2 (full) "
                        "or 3 (cells)",
                        (int)c->nlist);
    }
    return SIM_OK;
}

/* The ranks asked for: sane counts, a device for each, NCCL where the ranks are GPUs. */
static sim_status check_multi(const sim_backend_config *c, sim_error *err) {
    const sim_multi_config *m = &c->multi;
    if (m->world <= 1) {
        return SIM_OK;
    }
    if (m->world > SIM_MAX_RANKS || m->local < 1 || m->local > SIM_MAX_LOCAL_RANKS || m->rank < 0 ||
        m->rank + m->local > m->world || m->device < 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "ranks %d..%d of %d (device %d) are not a valid part of a run of 1..%d "
                        "ranks",
                        m->rank, m->rank + m->local - 1, m->world, m->device, SIM_MAX_RANKS);
    }
    if (c->kind == SIM_BACKEND_CPU && m->local != m->world && !m->space) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "the CPU reference splits its work over threads of one process only");
    }
    if (c->kind == SIM_BACKEND_CUDA && !sim_multi_have_nccl()) {
        sim_error why;
        (void)sim_multi_nccl_id(NULL, &why);
        return sim_fail(err, SIM_UNSUPPORTED, "%d GPUs: %s", m->world, why.message);
    }
    if (c->kind == SIM_BACKEND_CUDA && m->world > m->local && !m->id_set) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "a run over %d processes needs the NCCL id of its rank 0", m->world);
    }
    return SIM_OK;
}

sim_status sim_backend_create(const sim_backend_config *config, const sim_params *params,
                              const sim_state *initial, sim_backend **out, sim_error *err) {
    SIM_ASSERT(config != NULL && params != NULL && initial != NULL && out != NULL);
    *out = NULL;
    SIM_TRY(sim_backend_check_maps(config->kind, config->pair_map, config->triplet_map, err));
    if (!sim_pair_tile_valid(config->tile)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "tile size %u must be " SIM_PAIR_TILE_NAMES,
                        config->tile);
    }
    SIM_TRY(check_cull_config(config, err));
    if (initial->n < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "the scene has no bodies");
    }
    SIM_TRY(sim_params_check(params, err));
    /* the radii only when it matters: the memory refusal below must come before any body is read
     * (a state too large to hold is refused by its n alone) */
    SIM_TRY(sim_periodic_check(params, params->periodic ? sim_state_max_radius(initial) : 0.0,
                               err));
    SIM_TRY(check_multi(config, err));
    if (!config->multi.space) { /* the split in space says what it refuses itself */
        SIM_TRY(sim_backend_check_friction(config, params, err));
    }
    sim_status st;
    if (config->multi.world > 1 && config->multi.space) {
        st = sim_space_backend_create(config, params, initial, out, err);
    } else if (config->multi.world > 1) {
        st = sim_multi_backend_create(config, params, initial, out, err);
    } else if (config->kind == SIM_BACKEND_CPU) {
        st = sim_cpu_backend_create(config, params, initial, NULL, out, err);
    } else {
        st = sim_cuda_backend_create(config, params, initial, NULL, out, err);
    }
    if (st == SIM_OK && (st = sim_backend_keep_spin(*out, initial, err)) != SIM_OK) {
        sim_backend_destroy(*out);
        *out = NULL;
    }
    return st;
}

sim_status sim_backend_sum_over_processes(sim_backend *b, double *v, size_t count, sim_error *err) {
    SIM_ASSERT(b != NULL && v != NULL && count <= SIM_COMM_HOST_MAX);
    const sim_multi_config *m = &b->config.multi;
    if (m->world <= 1 || m->local >= m->world) {
        return SIM_OK;
    }
    if (m->space) {
        return sim_space_sum_over_processes(b, v, count, err);
    }
    return sim_multi_sum_over_processes(b, v, count, err);
}
