/* SPDX-License-Identifier: MIT
 * nbsim — the largest N a configuration can run, and the sizes the culling works in. */
#include "nbsim/size_limits.h"

#include "cull/cull.h"
#include "cull/triplet_cull.h"

uint32_t sim_pair_tile_max(void) {
    uint32_t best = 0;
#define SIM_TILE_MAX(t) best = (t) > best ? (t) : best;
    SIM_PAIR_TILE_LIST(SIM_TILE_MAX)
#undef SIM_TILE_MAX
    return best;
}

static uint32_t product(uint32_t tiles, uint32_t tile) {
    const uint64_t n = (uint64_t)tiles * tile;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

uint32_t sim_pair_max_bodies(uint32_t tile) {
    return product(SIM_MAX_TILES_2D, tile);
}

uint32_t sim_triplet_max_bodies(void) {
    return product(SIM_MAX_TILES_3D, SIM_TRIPLET_TILE);
}

uint32_t sim_triplet_culled_max_bodies(void) {
    return product(SIM_TCULL_MAX_TILES, SIM_TRIPLET_TILE);
}

uint32_t sim_run_max_bodies(const sim_backend_config *c, const sim_params *p) {
    const int culled_triplets = p->triplets && sim_config_culls_triplets(c, p);
    if (sim_config_runs_on_grid(c, p)) {
        return culled_triplets && sim_triplet_culled_max_bodies() < SIM_GRID_MAX_BODIES
                   ? sim_triplet_culled_max_bodies()
                   : SIM_GRID_MAX_BODIES;
    }
    const uint32_t max = sim_backend_max_bodies(c, p->triplets && !culled_triplets);
    return culled_triplets && sim_triplet_culled_max_bodies() < max
               ? sim_triplet_culled_max_bodies()
               : max;
}

uint32_t sim_backend_max_bodies(const sim_backend_config *config, int triplets) {
    SIM_ASSERT(config != NULL && sim_pair_tile_valid(config->tile));
    const uint32_t pairs = sim_pair_max_bodies(config->tile);
    const uint32_t triples = sim_triplet_max_bodies();
    return triplets && triples < pairs ? triples : pairs;
}

uint32_t sim_cull_group_size(void) {
    return SIM_CULL_GROUP;
}

uint32_t sim_cull_super_size(void) {
    return SIM_CULL_SUPER;
}

int sim_cull_sort_every_default(void) {
    return SIM_CULL_SORT_EVERY;
}

uint64_t sim_tile3_body_triples(sim_tile3 t, uint32_t rho) {
    return sim_tcull_body_triples(t.i, t.j, t.k, rho); /* the culled sweep's own count */
}
