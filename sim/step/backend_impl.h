/* SPDX-License-Identifier: MIT
 * nbsim — private: what each backend implements behind sim_backend (one table per backend), and
 * the header every backend struct begins with. The CPU and CUDA backends run their frames
 * through the stepper (step/stepper.h: run_frame = sim_step_frame) and give it their primitives
 * (sim_step_ops); the multi backend's run_frame runs its members' frames. */
#ifndef SIM_BACKEND_IMPL_H
#define SIM_BACKEND_IMPL_H

#include "cull/cull.h" /* the culling's sizes */
#include "nbsim/internal/backend.h"
#include "multi/comm.h"
#include "multi/work_split.h"
#include "step/stepper.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_backend_ops {
    void (*destroy)(sim_backend *b);
    sim_status (*run_frame)(sim_backend *b, sim_frame_timing *t, sim_error *err);
    sim_status (*set_params)(sim_backend *b, const sim_params *p, sim_error *err);
    sim_status (*set_state)(sim_backend *b, const sim_state *s, sim_error *err);
    sim_status (*read_state)(sim_backend *b, sim_state *out, sim_vec3d *forces, sim_error *err);
    sim_status (*energy)(sim_backend *b, sim_energy *e, sim_error *err);
    /* Bodies 0, every, 2 every, ... (sim_backend_export_sample). */
    sim_status (*export_positions)(sim_backend *b, uint32_t every, sim_vec4f *pos, float *speed,
                                   int on_device, sim_error *err);
    /* Enqueues copies of pos / vel / force into c (capture.h); sets c->pending, c->has_order. */
    sim_status (*capture)(sim_backend *b, sim_capture *c, sim_error *err);
    /* Called after b->config.cull changed (already set); may refuse (then it is reverted). */
    sim_status (*set_cull)(sim_backend *b, sim_error *err);
    sim_status (*tile_pairs)(sim_backend *b, sim_tile2 *out, uint64_t cap, uint64_t *count,
                             sim_error *err);
    sim_status (*contacts)(sim_backend *b, sim_body_pair *out, uint64_t cap, uint64_t *count,
                           sim_error *err);
    sim_status (*tile_triples)(sim_backend *b, sim_tile3 *out, uint64_t cap, uint64_t *count,
                               sim_error *err);
} sim_backend_ops;

/* Every backend struct begins with this header. The map plans live here, built by backend.c
 * for both backends, so the CPU reference enumerates exactly the blocks the kernels launch. */
struct sim_backend {
    const sim_backend_ops *ops;
    sim_backend_config config; /* config.tuning points at tuning (sim_backend_take_config) */
    sim_backend_tuning tuning;
    sim_params params;
    uint32_t n;
    char device_name[128];
    sim_map_plan pair_plan;    /* for config.pair_map over ceil(n / tile) tiles; unused for full */
    int pair_planned;          /* pair_plan holds one: a run on the cell grid may have none */
    sim_map_plan triplet_plan; /* over ceil(n / SIM_TRIPLET_TILE) tiles, when triplet_planned */
    int triplet_planned;
    /* Culling: the top pass's plan for config.pair_map (unused for full), over
     * ceil(cull_items / SIM_CULL_GROUP) groups; cull_items = tiles (levels 1) or super-tiles. */
    sim_map_plan cull_plan;
    int cull_levels; /* 1 or 2, from config.cull_levels and the tile count */
    uint32_t tiles, super_tiles, cull_items;
    sim_rank rank; /* this backend's rank of a multi-GPU run (multi.h); world 1 alone */
    /* The ATM cut-off's neighbour pass (triplet_cull.h): the pair map's plan over
     * ceil(tcull_items / SIM_CULL_GROUP) groups of triplet tiles (levels 1) or of their
     * super-tiles (levels 2); unused for full. */
    sim_map_plan tcull_plan;
    int tcull_levels;
    uint32_t ttiles, tsuper_tiles, tcull_items;
    /* The neighbour lists' skin [m] for the current bodies, parameters and step (nlist.h:
     * params.skin, or the automatic one), kept by the backend; 0: no lists. */
    double nlist_skin;
    /* 1: the backend builds the lists from a cell grid, not the culled tile pairs (the map then
     * places no pass of a listed step: sim_frame_timing.nlist_cells) */
    int nlist_cells;
    /* 1: this frame has no lists, its contacts are swept straight from the cells (nlist.h:
     * sim_nlist_cadence; sim_frame_timing.nlist_direct) */
    int nlist_direct;
    /* bodies within the ATM lists' reach of a body (sim_atm_list_neighbours), set with the skin */
    double atm_reach_bodies;
    /* The stepper and the primitives it steps this backend with (stepper.ops NULL: a composite,
     * whose members are stepped). */
    sim_stepper stepper;
    /* The bodies' spin in the user's order, kept by backend.c for several GPUs, which run no
     * friction (check_friction) and so never change it: read, saved, recorded and counted
     * (kept_rotational [J]) all the same. NULL for the CPU reference and one GPU, which keep and
     * integrate spin themselves. */
    sim_vec4d *kept_spin;
    double kept_rotational;
};

/* Whether a stop flag (config.stop) is raised: one volatile load, cheap enough per block. */
static inline int sim_stop_raised(const volatile sig_atomic_t *flag) {
    return flag != NULL && *flag != 0;
}

/* Whether the next step culls: config.cull and a pair map (the full sweep never culls). */
int sim_backend_culling(const sim_backend *b);
/* Whether the next step sweeps neighbour lists: culling and a skin > 0 (nlist.h). */
int sim_backend_listing(const sim_backend *b);
/* The neighbour lists' kind of this configuration (DEFAULT resolved). */
sim_nlist_kind sim_backend_nlist_kind(const sim_backend *b);
/* Whether the next step culls tile triples by the ATM cut-off: culling, triplets on and
 * params.atm_cutoff > 0. The triplet map's plan is then not needed (it may not exist: 3-D plans
 * stop at SIM_MAX_TILES_3D tiles, culled triplets at 65,535 triplet tiles). */
int sim_backend_triplet_culling(const sim_backend *b);
/* Whether that cut-off sweeps its neighbour lists of R + skin (nlist/atm_list.h) rather than tile
 * triples: the default, wherever they are wired, as the lists were measured faster everywhere
 * (1.25-56x, bench/results/nvidia-h100/atm_list.md). They take the contacts' skin (b->nlist_skin:
 * --skin, else the automatic one; 0 keeps the tile triples, the old path). Tile triples still on
 * several ranks (each rank sweeps the tile triples of its rows, triplet_cull.h; splitting the
 * lists' rows the same way is not built yet). Periodic axes: minimum-image lists on the CPU; the
 * CUDA backend keeps its tile triples there (sim_cuda_atm_listed: its list kernels take raw
 * separations). And only where they pay: at most SIM_ATM_LIST_MAX_NEIGHBOURS bodies within the
 * reach (b->atm_reach_bodies: at the density of the bodies' bounding box when the state or the
 * parameters were set); a longer cut-off keeps the tile triples. */
int sim_backend_atm_listing(const sim_backend *b);

/* b->config = *c, its tuning (c's, or the defaults) copied into b->tuning, to which
 * b->config.tuning then points: a backend outlives the caller's structs. */
void sim_backend_take_config(sim_backend *b, const sim_backend_config *c);
/* Plans the maps for b->n and b->config.tile under params p (the triplet plan when p->triplets;
 * when it cannot be planned and these settings cull triplets, triplet_planned stays 0), then
 * commits them and the choice to b->config; nothing changes when a plan is refused. */
sim_status sim_backend_plan_maps(sim_backend *b, sim_pair_choice pm, sim_triplet_map tm,
                                 const sim_params *p, sim_error *err);
/* The blocks a step launches and wastes, from the plans, into t; when culled also the culling
 * pass's blocks, and tile_pairs (the list's length, which the backend knows) as pair_blocks. */
void sim_backend_count_blocks(const sim_backend *b, sim_frame_timing *t, uint64_t tile_pairs);
/* Tile-pair list capacity to start with: tuning.cull_capacity, or 32 per tile (a gas needs ~14,
 * a dense pile ~20), at least 4096, at most T2(tiles). And for the super-tile list. */
uint64_t sim_cull_initial_capacity(const sim_backend *b);
uint64_t sim_cull_super_capacity(const sim_backend *b);
/* The ATM cut-off's lists to start with (triplet_cull.h): tuning.cull_capacity, or
 * SIM_TCULL_*_PER_TILE per triplet tile (at least SIM_TCULL_MIN_CAPACITY), at most the whole
 * simplex; super pairs as for contacts. */
uint64_t sim_tcull_super_capacity(const sim_backend *b);
uint64_t sim_tcull_pair_capacity(const sim_backend *b);
uint64_t sim_tcull_triple_capacity(const sim_backend *b);
/* T3(k) = k (k + 1) (k + 2) / 6 in 64 bits. */
uint64_t sim_t3_u64(uint64_t k);
/* T2(k) = k (k + 1) / 2 in 64 bits. */
uint64_t sim_t2_u64(uint64_t k);
/* ceil(a / b) for tile counts. */
uint32_t sim_ceil_div(uint32_t a, uint32_t b);

/* The checks sim_backend_create and the calls that change a backend share (step/backend.c):
 * the maps exist and run on this kind of backend; friction runs on one rank. And the spin a
 * multi backend of GPUs keeps (kept_spin), the state's, taken when it is created or set. */
sim_status sim_backend_check_maps(sim_backend_kind kind, sim_pair_choice pm, sim_triplet_map tm,
                                  sim_error *err);
sim_status sim_backend_check_friction(const sim_backend_config *c, const sim_params *p,
                                      sim_error *err);
sim_status sim_backend_keep_spin(sim_backend *b, const sim_state *s, sim_error *err);

/* rank: NULL alone, else the rank this backend runs (a multi backend's member). */
sim_status sim_cpu_backend_create(const sim_backend_config *c, const sim_params *p,
                                  const sim_state *s, const sim_rank *rank, sim_backend **out,
                                  sim_error *err);
sim_status sim_cuda_backend_create(const sim_backend_config *c, const sim_params *p,
                                   const sim_state *s, const sim_rank *rank, sim_backend **out,
                                   sim_error *err);
/* Several ranks behind one backend (multi_backend.c): config->multi.world > 1. */
sim_status sim_multi_backend_create(const sim_backend_config *c, const sim_params *p,
                                    const sim_state *s, sim_backend **out, sim_error *err);
/* sim_backend_sum_over_processes for a multi backend that is one process of a run over several
 * (its local ranks all join; the process's values count once). */
sim_status sim_multi_sum_over_processes(sim_backend *b, double *v, size_t count, sim_error *err);
/* Test hook: local rank k's state and forces, read on its own thread (its device). */
sim_status sim_multi_read_rank(sim_backend *b, int k, sim_state *out, sim_vec3d *forces,
                               sim_error *err);
/* Makes `device` this thread's current CUDA device (a multi backend's worker threads). */
sim_status sim_cuda_use_device(int device, sim_error *err);

/* Rank b's share of a plan (work_split.h); alone, the whole plan. */
void sim_backend_share(const sim_backend *b, const sim_map_plan *plan, sim_map_share *share);
/* Rank b's rows of a culled tile-pair list: [*r0, *r1) of `tiles` (aligned to super-tiles). */
void sim_backend_cull_rows(const sim_backend *b, uint32_t tiles, uint32_t *r0, uint32_t *r1);

#ifdef __cplusplus
}
#endif

#endif /* SIM_BACKEND_IMPL_H */
