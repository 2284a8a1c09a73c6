/* SPDX-License-Identifier: MIT
 * nbsim — sim_backend: validates input once, then dispatches to the CPU, CUDA or multi backend.
 * What follows a change is decided here once for every stepped backend (the stepper computes
 * the forces again after a new state or model, and sorts after a new state or culling on). */
#include "step/backend_impl.h"
#include "multi/comm.h"
#include "nbsim/params.h"
#include "physics/physics.h"
#include "nbsim/size_limits.h"
#include "cull/triplet_cull.h"
#include "nlist/atm_list.h"
#include "space/space.h"

#include <stdlib.h>
#include <string.h>

sim_backend_config sim_backend_config_default(void) {
    sim_backend_config c = {0};
    c.kind = SIM_BACKEND_CUDA;
    c.pair_map = SIM_PAIR_MAP_LTM;
    c.triplet_map = SIM_TRIPLET_MAP_TETRA;
    c.tile = 64;
    c.cpu_threads = 0;
    c.cull = 1;
    c.cull_levels = 0;
    c.sort_every = 0;
    c.cull_capacity = 0;
    c.nlist = SIM_NLIST_DEFAULT;
    c.nlist_capacity = 0;
    c.nlist_build = SIM_NLIST_BUILD_DEFAULT;
    c.count_contacts = 1;
    c.stream_launches = 0;
    c.phase_timing = SIM_PHASE_TIMING_SAMPLED;
    return c;
}

const char *sim_phase_timing_name(sim_phase_timing t) {
    return t == SIM_PHASE_TIMING_SAMPLED ? "sampled" : t == SIM_PHASE_TIMING_EVERY ? "every" : "?";
}

int sim_phase_timing_from_name(const char *name) {
    const sim_phase_timing all[] = {SIM_PHASE_TIMING_SAMPLED, SIM_PHASE_TIMING_EVERY};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) {
        if (strcmp(name, sim_phase_timing_name(all[k])) == 0) {
            return (int)all[k];
        }
    }
    return -1;
}

const char *sim_nlist_kind_name(sim_nlist_kind kind) {
    return kind == SIM_NLIST_HALF      ? "half"
           : kind == SIM_NLIST_FULL    ? "full"
           : kind == SIM_NLIST_CELLS   ? "cells"
           : kind == SIM_NLIST_DEFAULT ? "default"
                                       : "?";
}

int sim_nlist_kind_from_name(const char *name) {
    const sim_nlist_kind all[] = {SIM_NLIST_DEFAULT, SIM_NLIST_HALF, SIM_NLIST_FULL,
                                  SIM_NLIST_CELLS};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) {
        if (strcmp(name, sim_nlist_kind_name(all[k])) == 0) {
            return (int)all[k];
        }
    }
    return -1;
}

sim_nlist_kind sim_nlist_kind_for(sim_nlist_kind kind, const sim_params *p) {
    if (kind != SIM_NLIST_DEFAULT && !(kind == SIM_NLIST_CELLS && sim_params_have_friction(p))) {
        return kind;
    }
    return sim_params_have_friction(p) ? SIM_NLIST_DEFAULT_FRICTION_KIND : SIM_NLIST_DEFAULT_KIND;
}

int sim_pair_tile_valid(uint32_t tile) {
#define SIM_TILE_IS(t) tile == (t) ||
    return SIM_PAIR_TILE_LIST(SIM_TILE_IS) 0;
#undef SIM_TILE_IS
}

const char *sim_pair_choice_name(sim_pair_choice c) {
    return c == SIM_PAIR_FULL ? "full" : sim_pair_map_name((sim_pair_map)c);
}

const char *sim_pair_choice_label(sim_pair_choice c) {
    return c == SIM_PAIR_FULL ? "full N^2 sweep, no symmetry (nbody-style)"
                              : sim_pair_map_label((sim_pair_map)c);
}

int sim_pair_choice_from_name(const char *name) {
    if (name != NULL && strcmp(name, "full") == 0) {
        return SIM_PAIR_FULL;
    }
    return sim_pair_map_from_name(name);
}

uint32_t sim_ceil_div(uint32_t a, uint32_t b) {
    return (uint32_t)(((uint64_t)a + b - 1) / b);
}

uint64_t sim_t2_u64(uint64_t k) {
    return k * (k + 1u) / 2u;
}

uint64_t sim_t3_u64(uint64_t k) {
    return k * (k + 1u) / 2u * (k + 2u) / 3u;
}

int sim_config_culls(const sim_backend_config *c) {
    return c->cull && c->pair_map != SIM_PAIR_FULL;
}

int sim_config_culls_triplets(const sim_backend_config *c, const sim_params *p) {
    return sim_config_culls(c) && p->triplets && p->atm_cutoff > 0.0;
}

int sim_pair_choice_needs_cuda(sim_pair_choice choice) {
    return choice == SIM_PAIR_FULL;
}

int sim_backend_culling(const sim_backend *b) {
    return sim_config_culls(&b->config);
}

int sim_backend_listing(const sim_backend *b) {
    return sim_backend_culling(b) && b->nlist_skin > 0.0;
}

sim_nlist_kind sim_backend_nlist_kind(const sim_backend *b) {
    return sim_nlist_kind_for(b->config.nlist, &b->params);
}

int sim_backend_triplet_culling(const sim_backend *b) {
    return sim_config_culls_triplets(&b->config, &b->params);
}

int sim_backend_atm_listing(const sim_backend *b) {
    return sim_backend_triplet_culling(b) && b->nlist_skin > 0.0 && b->rank.world <= 1 &&
           b->atm_reach_bodies <= SIM_ATM_LIST_MAX_NEIGHBOURS;
}

uint64_t sim_cull_initial_capacity(const sim_backend *b) {
    const uint64_t all = sim_t2_u64(b->tiles);
    uint64_t cap = b->config.cull_capacity ? b->config.cull_capacity : 32u * (uint64_t)b->tiles;
    cap = b->config.cull_capacity || cap >= 4096u ? cap : 4096u;
    return cap < all ? cap : all;
}

uint64_t sim_cull_super_capacity(const sim_backend *b) {
    const uint64_t all = sim_t2_u64(b->super_tiles);
    uint64_t cap =
        b->config.cull_capacity ? b->config.cull_capacity : 32u * (uint64_t)b->super_tiles;
    cap = b->config.cull_capacity || cap >= 1024u ? cap : 1024u;
    return cap < all ? cap : all;
}

static uint64_t tcull_capacity(const sim_backend *b, uint64_t per_tile, uint64_t all) {
    uint64_t cap = b->config.cull_capacity ? b->config.cull_capacity : per_tile * b->ttiles;
    cap = b->config.cull_capacity || cap >= SIM_TCULL_MIN_CAPACITY ? cap : SIM_TCULL_MIN_CAPACITY;
    return cap < all ? cap : all;
}

uint64_t sim_tcull_super_capacity(const sim_backend *b) {
    return tcull_capacity(b, 32u / SIM_CULL_SUPER, sim_t2_u64(b->tsuper_tiles));
}

uint64_t sim_tcull_pair_capacity(const sim_backend *b) {
    return tcull_capacity(b, SIM_TCULL_PAIRS_PER_TILE, sim_t2_u64(b->ttiles));
}

uint64_t sim_tcull_triple_capacity(const sim_backend *b) {
    return tcull_capacity(b, SIM_TCULL_TRIPLES_PER_TILE, sim_t3_u64(b->ttiles));
}

static sim_status check_maps(sim_backend_kind kind, sim_pair_choice pm, sim_triplet_map tm,
                             sim_error *err) {
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

/* Passes of the cull for this many tiles: the config's choice, or by size. */
static int cull_levels_for(int configured, uint32_t tiles) {
    if (configured == 1 || configured == 2) {
        return configured;
    }
    return tiles > SIM_CULL_FLAT_MAX_TILES ? 2 : 1;
}

sim_status sim_backend_plan_maps(sim_backend *b, sim_pair_choice pm, sim_triplet_map tm,
                                 const sim_params *p, sim_error *err) {
    sim_map_plan pair = b->pair_plan, triplet, cull = b->cull_plan, tcull = b->tcull_plan;
    const uint32_t tiles = sim_ceil_div(b->n, b->config.tile);
    const int levels = cull_levels_for(b->config.cull_levels, tiles);
    const uint32_t supers = levels == 2 ? sim_ceil_div(tiles, SIM_CULL_SUPER) : 0u;
    const uint32_t items = levels == 2 ? supers : tiles;
    /* The ATM cut-off's neighbour pass over triplet tiles, placed by the same pair map. */
    const uint32_t ttiles = sim_ceil_div(b->n, SIM_TRIPLET_TILE);
    const int tlevels = cull_levels_for(b->config.cull_levels, ttiles);
    const uint32_t tsupers = sim_ceil_div(ttiles, SIM_CULL_SUPER);
    const uint32_t titems = tlevels == 2 ? tsupers : ttiles;
    int pair_planned = pm != SIM_PAIR_FULL;
    if (pm != SIM_PAIR_FULL) {
        /* A run on the cell grid launches no pair map (size_limits.h): a size the map's plan
         * cannot cover is no error there, and the unculled sweeps that would need it are
         * refused (sim_backend_set_cull). The culling's plans place no more than N / 4096. */
        sim_backend_config next = b->config;
        next.pair_map = pm;
        const int grid = sim_config_runs_on_grid(&next, p);
        sim_error plan_err;
        const sim_status st =
            sim_pair_map_plan((sim_pair_map)pm, tiles, &pair, grid ? &plan_err : err);
        if (st != SIM_OK && !grid) {
            return st;
        }
        pair_planned = st == SIM_OK;
        SIM_TRY(
            sim_pair_map_plan((sim_pair_map)pm, sim_ceil_div(items, SIM_CULL_GROUP), &cull, err));
        SIM_TRY(
            sim_pair_map_plan((sim_pair_map)pm, sim_ceil_div(titems, SIM_CULL_GROUP), &tcull, err));
    }
    int planned = 0;
    if (p->triplets) {
        sim_backend_config next = b->config;
        next.pair_map = pm;
        const int culled = sim_config_culls_triplets(&next, p);
        if (culled && ttiles > SIM_TCULL_MAX_TILES) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "N = %u bodies make %u triplet tiles: ATM forces with a cut-off "
                            "support at most %u tiles (N <= %u)",
                            b->n, ttiles, SIM_TCULL_MAX_TILES,
                            SIM_TCULL_MAX_TILES * SIM_TRIPLET_TILE);
        }
        /* Culled, the triplet map places nothing: a size it cannot plan is no error. */
        sim_error plan_err;
        const sim_status st = sim_triplet_map_plan(tm, ttiles, &triplet, culled ? &plan_err : err);
        if (st != SIM_OK && !culled) {
            return st;
        }
        planned = st == SIM_OK;
    }
    b->pair_plan = pair;
    b->pair_planned = pair_planned;
    b->cull_plan = cull;
    b->cull_levels = levels;
    b->tiles = tiles;
    b->super_tiles = supers;
    b->cull_items = items;
    b->tcull_plan = tcull;
    b->tcull_levels = tlevels;
    b->ttiles = ttiles;
    b->tsuper_tiles = tsupers;
    b->tcull_items = titems;
    if (planned) {
        b->triplet_plan = triplet;
    }
    b->triplet_planned = planned;
    b->config.pair_map = pm;
    b->config.triplet_map = tm;
    return SIM_OK;
}

void sim_backend_count_blocks(const sim_backend *b, sim_frame_timing *t, uint64_t tile_pairs) {
    t->cull_blocks = 0;
    t->cull_blocks_wasted = 0;
    if (b->config.pair_map == SIM_PAIR_FULL) {
        t->pair_blocks = sim_ceil_div(b->n, b->config.tile);
        t->pair_blocks_wasted = 0;
    } else if (sim_backend_culling(b)) {
        t->pair_blocks = tile_pairs;
        t->pair_blocks_wasted = 0;
        t->cull_blocks = b->cull_plan.blocks;
        t->cull_blocks_wasted = b->cull_plan.blocks - b->cull_plan.useful;
    } else {
        t->pair_blocks = b->pair_plan.blocks;
        t->pair_blocks_wasted = b->pair_plan.blocks - b->pair_plan.useful;
    }
    t->triplet_blocks = 0;
    t->triplet_blocks_wasted = 0;
    if (t->atm_lists) { /* a block: one body's list */
        t->triplet_blocks = b->n;
    } else if (sim_backend_triplet_culling(b)) {
        t->triplet_blocks = t->tile_triples;
    } else if (b->params.triplets && b->triplet_planned) {
        t->triplet_blocks = b->triplet_plan.blocks;
        t->triplet_blocks_wasted = b->triplet_plan.blocks - b->triplet_plan.useful;
    }
}

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

void sim_backend_share(const sim_backend *b, const sim_map_plan *plan, sim_map_share *share) {
    sim_work_share(plan, b->rank.world > 1 ? b->rank.rank : 0,
                   b->rank.world > 1 ? b->rank.world : 1, share);
}

void sim_backend_cull_rows(const sim_backend *b, uint32_t tiles, uint32_t *r0, uint32_t *r1) {
    if (b->rank.world <= 1) {
        *r0 = 0;
        *r1 = tiles;
        return;
    }
    sim_work_rows(tiles, SIM_CULL_SUPER, b->rank.rank, b->rank.world, r0, r1);
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

/* Friction runs on one rank, CPU or one GPU (backend.h): the one refusal of the library, before
 * any work (the session says it with the flags first). Its contact histories live in one
 * process's tables, keyed by the pairs' owners; several ranks would have to move them with the
 * pairs at every re-partition. */
static sim_status check_friction(const sim_backend_config *c, const sim_params *p, sim_error *err) {
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
static sim_status keep_spin(sim_backend *b, const sim_state *s, sim_error *err) {
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

sim_status sim_backend_create(const sim_backend_config *config, const sim_params *params,
                              const sim_state *initial, sim_backend **out, sim_error *err) {
    SIM_ASSERT(config != NULL && params != NULL && initial != NULL && out != NULL);
    *out = NULL;
    SIM_TRY(check_maps(config->kind, config->pair_map, config->triplet_map, err));
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
        SIM_TRY(check_friction(config, params, err));
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
    if (st == SIM_OK && (st = keep_spin(*out, initial, err)) != SIM_OK) {
        sim_backend_destroy(*out);
        *out = NULL;
    }
    return st;
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
    SIM_TRY(check_maps(b->config.kind, pm, tm, err));
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
    SIM_TRY(check_friction(&b->config, p, err));
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
    SIM_TRY(keep_spin(b, state, err));
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

sim_status sim_backend_export_positions(sim_backend *b, sim_vec4f *pos, float *speed, int on_device,
                                        sim_error *err) {
    SIM_ASSERT(b != NULL && pos != NULL);
    if (on_device && b->config.kind != SIM_BACKEND_CUDA) {
        return sim_fail(err, SIM_UNSUPPORTED, "device export needs the CUDA backend");
    }
    return b->ops->export_positions(b, pos, speed, on_device, err);
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
