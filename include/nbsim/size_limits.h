/* SPDX-License-Identifier: MIT
 * nbsim — the largest N a configuration can run, known before anything is allocated: the pair
 * maps cover at most SIM_MAX_TILES_2D tiles per side and the triplet maps SIM_MAX_TILES_3D
 * (maps.h), so N is at most tiles x bodies per tile. Callers check N against it before building a
 * scene or reading a scene file, so a size that cannot run costs neither time nor memory. Also
 * the other sizes programs count the work in: the culling's, the body triples of a tile triple. */
#ifndef SIM_SIZE_LIMITS_H
#define SIM_SIZE_LIMITS_H

#include "nbsim/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest pair tile (rho) the kernels are built for: the one that allows the most bodies. */
uint32_t sim_pair_tile_max(void);

/* The largest N that config can run, with triplet forces when `triplets` is nonzero. Every pair
 * choice (the maps and `full`) gets the maps' limit, so switching maps while running never
 * meets a size the new map cannot cover. */
uint32_t sim_backend_max_bodies(const sim_backend_config *config, int triplets);

/* Whether a run with this config and params sweeps its contacts from the cell grid alone (over
 * neighbour lists built from the cells, or the cells themselves) and launches no pair map: the
 * CUDA backend, one rank, culling on with a pair map (not `full`), a skin (not --skin 0: the tile
 * pairs), the lists built from the cells (not SIM_NLIST_BUILD_TILES), and triplets off or culled
 * by a cut-off. Such a run is limited by memory (memory_plan.h) and SIM_GRID_MAX_BODIES, not by
 * the maps. */
int sim_config_runs_on_grid(const sim_backend_config *config, const sim_params *params);
/* The most bodies a run on the grid takes: CUB's radix sort counts its items in an int. */
#define SIM_GRID_MAX_BODIES 2147483647u

/* The largest N a run with this config and params takes besides memory: the grid's for a run on
 * the grid (sim_config_runs_on_grid), else sim_backend_max_bodies (triplets: params' on and not
 * culled by a cut-off, which keeps the culled triplets' limit). */
uint32_t sim_run_max_bodies(const sim_backend_config *config, const sim_params *params);

/* The pair maps' and triplet maps' own limits: tiles per side x bodies per tile. */
uint32_t sim_pair_max_bodies(uint32_t tile);
uint32_t sim_triplet_max_bodies(void);

/* The largest triplet tile count culled triplets (an ATM cut-off, culling on) support: no
 * triplet map places them, but the fallback enumerates the tile pairs in 32 bits and packs tile
 * indices in 16. */
#define SIM_TCULL_MAX_TILES 65535u
/* Their bodies: SIM_TCULL_MAX_TILES x SIM_TRIPLET_TILE = 2,097,120. */
uint32_t sim_triplet_culled_max_bodies(void);

/* The culling's fixed sizes, for programs that show or count its work (the viewer's map inset,
 * the benchmarks); sim/cull/cull.h says why they are what they are. Items (tiles, or super-tiles
 * in a top pass) per side of a culling block: 16. Tiles per side of a super-tile of the two-level
 * cull: 16. Steps between re-sorts when sim_backend_config.sort_every is 0 (the default): 50. */
uint32_t sim_cull_group_size(void);
uint32_t sim_cull_super_size(void);
int sim_cull_sort_every_default(void);

/* Body triples that tile triple t (I >= J >= K) of tiles of rho bodies holds, each counted once:
 * rho^3 for distinct tiles, where tiles coincide only the strictly ordered bodies (design notes
 * §1). A partly filled last tile is counted full (an upper bound there). */
uint64_t sim_tile3_body_triples(sim_tile3 t, uint32_t rho);

#ifdef __cplusplus
}
#endif

#endif /* SIM_SIZE_LIMITS_H */
