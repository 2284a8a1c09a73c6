/* SPDX-License-Identifier: MIT
 * nbsim — what every backend decides the same way from its configuration (backend_impl.h): the
 * configuration's defaults and names, whether it culls and lists, the lists' first capacities,
 * the maps' plans, the blocks a step launches, a rank's share. Below the backends, which call it;
 * the stepper too. */
#include "step/backend_impl.h"
#include "nbsim/params.h"
#include "physics/physics.h"
#include "nbsim/size_limits.h"
#include "cull/triplet_cull.h"
#include "nlist/atm_list.h"

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
    c.nlist = SIM_NLIST_DEFAULT;
    c.phase_timing = SIM_PHASE_TIMING_SAMPLED;
    c.tuning = NULL;
    return c;
}

void sim_backend_take_config(sim_backend *b, const sim_backend_config *c) {
    b->tuning = sim_backend_tuning_of(c);
    b->config = *c;
    b->config.tuning = &b->tuning;
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

int sim_config_runs_on_grid(const sim_backend_config *c, const sim_params *p) {
    const int skin_zero = p->skin.set && !(p->skin.value > 0.0);
    return c->kind == SIM_BACKEND_CUDA && c->multi.world <= 1 && sim_config_culls(c) &&
           !skin_zero && sim_backend_tuning_of(c).nlist_build != SIM_NLIST_BUILD_TILES &&
           (!p->triplets || sim_config_culls_triplets(c, p));
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
    uint64_t cap = b->tuning.cull_capacity ? b->tuning.cull_capacity : 32u * (uint64_t)b->tiles;
    cap = b->tuning.cull_capacity || cap >= 4096u ? cap : 4096u;
    return cap < all ? cap : all;
}

uint64_t sim_cull_super_capacity(const sim_backend *b) {
    const uint64_t all = sim_t2_u64(b->super_tiles);
    uint64_t cap =
        b->tuning.cull_capacity ? b->tuning.cull_capacity : 32u * (uint64_t)b->super_tiles;
    cap = b->tuning.cull_capacity || cap >= 1024u ? cap : 1024u;
    return cap < all ? cap : all;
}

static uint64_t tcull_capacity(const sim_backend *b, uint64_t per_tile, uint64_t all) {
    uint64_t cap = b->tuning.cull_capacity ? b->tuning.cull_capacity : per_tile * b->ttiles;
    cap = b->tuning.cull_capacity || cap >= SIM_TCULL_MIN_CAPACITY ? cap : SIM_TCULL_MIN_CAPACITY;
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
