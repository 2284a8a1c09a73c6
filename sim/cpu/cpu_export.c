/* SPDX-License-Identifier: MIT
 * nbsim — what leaves the CPU reference (cpu_backend_impl.h): the state and the last forces,
 * positions for the viewer, trajectory captures, energies (computed with the forces), and the
 * test hooks' lists and contacts. The state is kept in the user's order (culling sorts copies),
 * so nothing here reorders except the culled pairs, found in slots. */
#include "cpu/cpu_backend_impl.h"

#include <math.h>
#include <string.h>

sim_status sim_cpu_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces,
                              sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    sim_state_copy_bodies(out, &b->st);
    if (forces != NULL) {
        memcpy(forces, b->force, (size_t)b->st.n * sizeof *forces);
    }
    return sim_cpu_friction_read(b->fric, out, err);
}

sim_status sim_cpu_energy(sim_backend *base, sim_energy *e, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    const double kinetic = sim_state_kinetic_energy(&b->st);
    e->kinetic = kinetic;
    e->rotational = sim_state_rotational_energy(&b->st);
    e->contact = b->e_contact;
    e->atm = b->e_atm;
    e->gravity = b->e_body;
    e->total = kinetic + e->rotational + b->e_contact + b->e_atm + b->e_body;
    return SIM_OK;
}

sim_status sim_cpu_export_positions(sim_backend *base, uint32_t every, sim_vec4f *pos, float *speed,
                                    int on_device, sim_error *err) {
    const sim_state *st = &sim_cpu_of(base)->st;
    if (every == 1) {
        sim_state_to_floats(st, NULL, pos, NULL, NULL, NULL, speed);
        return SIM_OK;
    }
    const uint32_t count = sim_sample_count(st->n, every);
    for (uint32_t k = 0; k < count; ++k) {
        const sim_vec4d p = st->pos[(size_t)k * every], v = st->vel[(size_t)k * every];
        pos[k] = (sim_vec4f){(float)p.x, (float)p.y, (float)p.z, (float)p.w};
        if (speed != NULL) {
            speed[k] = (float)sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        }
    }
    return SIM_OK;
}

/* A cull list into the caller's array: its length in *count, at most cap entries copied. */
static void copy_list(const void *list, size_t have, size_t size, void *out, uint64_t cap,
                      uint64_t *count) {
    *count = have;
    if (have > 0 && cap > 0) {
        memcpy(out, list, (size_t)(have < cap ? have : cap) * size);
    }
}

sim_status sim_cpu_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                sim_error *err) {
    const cpu_backend *b = sim_cpu_of_const(base);
    /* the cut-off over its lists builds no tile triple (a list left from an earlier frame is
     * not this state's) */
    const int built = b->tcull_ready && !sim_backend_atm_listing(base);
    copy_list(b->tcull.triples.v, built ? b->tcull.triples.count : 0u, sizeof *out, out, cap,
              count);
    return SIM_OK;
}

sim_status sim_cpu_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                              sim_error *err) {
    const cpu_backend *b = sim_cpu_of_const(base);
    copy_list(b->cull.tiles.v, b->cull_ready ? b->cull.tiles.count : 0u, sizeof *out, out, cap,
              count);
    return SIM_OK;
}

typedef struct {
    sim_body_pair *out;
    uint64_t cap, count;
    const uint32_t *order; /* slot -> body */
} contact_sink;

/* The touching pairs of tile pair t over pos (slot order; order maps slots to bodies, or NULL). */
static void contacts_tile(const cpu_backend *b, sim_tile2 t, const sim_vec4d *pos,
                          const uint32_t *order, contact_sink *sink) {
    uint32_t i0, i1, j0, j1;
    const uint32_t rho = b->base.config.tile;
    sim_cpu_tile_range(b, t.i, rho, &i0, &i1);
    sim_cpu_tile_range(b, t.j, rho, &j0, &j1);
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t j_end = t.i == t.j ? i : j1;
        for (uint32_t j = j0; j < j_end; ++j) {
            if (sim_cpu_touching(pos[i], pos[j], &b->ph)) {
                const uint32_t bi = order ? order[i] : i, bj = order ? order[j] : j;
                if (sink->count < sink->cap) {
                    sink->out[sink->count] = (sim_body_pair){bi > bj ? bi : bj, bi > bj ? bj : bi};
                }
                sink->count++;
            }
        }
    }
}

static void emit_contact(void *ctx, uint32_t i, uint32_t j) {
    contact_sink *sink = ctx;
    const uint32_t *order = sink->order;
    const uint32_t bi = order[i], bj = order[j];
    if (sink->count < sink->cap) {
        sink->out[sink->count] = (sim_body_pair){bi > bj ? bi : bj, bi > bj ? bj : bi};
    }
    sink->count++;
}

/* Culled, the pairs of the current pipeline: the neighbour lists as a step would find them (the
 * tile pairs of their build when one overflowed), else the tile pairs culled now. */
sim_status sim_cpu_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap, uint64_t *count,
                            sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    contact_sink sink = {out, cap, 0, NULL};
    if (sim_backend_culling(base)) {
        sim_cpu_cull *c = &b->cull;
        SIM_TRY(sim_cpu_pairs_current(b, err));
        sink.order = c->order;
        if (sim_backend_listing(base) && !b->nlist.overflow) {
            sim_cpu_nlist_contacts(&b->nlist, c->pos, emit_contact, &sink);
        } else {
            for (size_t k = 0; k < c->tiles.count; ++k) {
                contacts_tile(b, c->tiles.v[k], c->pos, c->order, &sink);
            }
        }
    } else {
        const sim_map_plan *plan = &base->pair_plan;
        for (int l = 0; l < plan->launch_count; ++l) {
            const sim_map_launch *launch = &plan->launch[l];
            const uint64_t gx = launch->grid[0], gy = launch->grid[1];
            const uint64_t blocks = gx * gy * launch->grid[2];
            for (uint64_t blk = 0; blk < blocks; ++blk) {
                sim_tile2 t;
                if (sim_pair_map_block((sim_pair_map)base->config.pair_map, launch,
                                       (uint32_t)(blk % gx), (uint32_t)(blk / gx % gy),
                                       (uint32_t)(blk / gx / gy), &t) &&
                    t.i < b->tiles && t.j < b->tiles) {
                    contacts_tile(b, t, b->st.pos, NULL, &sink);
                }
            }
        }
    }
    *count = sink.count;
    return SIM_OK;
}

/* Trajectory capture: there is no device to overlap with, so the state is converted to the
 * capture's floats at once (O(n), one short pass). The state stays in the user's order
 * (culling sorts a copy), so no order travels. */
sim_status sim_cpu_capture(sim_backend *base, sim_capture *c, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    sim_state_to_floats(&b->st, b->force, c->pos, c->vel, c->force, c->spin, NULL);
    c->has_order = 0;
    c->pending = 0;
    return SIM_OK;
}
