/* SPDX-License-Identifier: MIT
 * nbsim — thread maps: which tile pair / tile triple a CUDA block owns.
 *
 * One X-macro list per dimension gives the enum, the command-line name, the label shown in the
 * viewer/logs, and whether the map is one of the papers' float variants (kept for study; known
 * to be wrong for large n). Adding a map = one line here + its SIM_HD function + its exhaustive
 * test.
 *
 * A map is used in two steps:
 *   1. sim_*_map_plan(map, n, &plan) on the host: how many launches, each launch's grid and
 *      per-launch parameters (sim_map_launch), blocks launched vs useful.
 *   2. sim_*_map_block(map, &plan.launch[l], bx, by, bz, &tile) on host or device: the tile
 *      pair/triple that block owns, or 0 when the block is wasted.
 * Kernels pass the sim_map_launch by value and make `map` a compile-time constant so the switch
 * folds away. Only __global__ functions read blockIdx.
 *
 * Enumeration order (used by `nbsim maps --dump`): launch 0 first, then launch 1, …; inside a
 * launch, bx fastest, then by, then bz (linear = bx + gx*(by + gy*bz)). */
#ifndef SIM_MAPS_H
#define SIM_MAPS_H

#include "nbsim/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2-simplex maps: tile pairs (I, J), 0 <= J <= I < n. One row per map: id, block function
 * (sim_pair_map_<fn> in maps_pair.h), name, label, paper float variant. SIM_PAIR_MAP_LIST(X)
 * gives the rows without the function, X(id, name, label, paper); SIM_PAIR_MAP_FUNCS(X) the ids
 * with their functions, X(id, fn), for the dispatch (sim_pair_map_block). */
#define SIM_PAIR_MAP_TABLE(X, R)                                                                   \
    R(X, BB, bb, "bb", "bounding box", 0)                                                          \
    R(X, LTM, ltm, "ltm", "lower-triangular g(lambda), exact", 0)                                  \
    R(X, LTM_SQRT, ltm_sqrt, "ltm-sqrt", "g(lambda), float sqrtf (paper LTM-X)", 1)                \
    R(X, LTM_RSQRT, ltm_rsqrt, "ltm-rsqrt", "g(lambda), x*rsqrtf(x) (paper LTM-R)", 1)             \
    R(X, LTM_NEWTON, ltm_newton, "ltm-newton", "g(lambda), Newton 0x5f3759df (paper LTM-N)", 1)    \
    R(X, RB, rb, "rb", "rectangular box", 0)                                                       \
    R(X, UTM, utm, "utm", "upper-triangular map", 0)                                               \
    R(X, REC, rec, "rec", "recursive partition", 0)                                                \
    R(X, RM, rm, "rm", "recursive O(1) map", 0)
#define SIM_PAIR_MAP_LIST(X) SIM_PAIR_MAP_TABLE(X, SIM_MAP_ROW)
#define SIM_PAIR_MAP_FUNCS(X) SIM_PAIR_MAP_TABLE(X, SIM_MAP_ROW_FN)
/* A row of either table as the lists give it: without its block function, or only the id and it. */
#define SIM_MAP_ROW(X, id, fn, name, label, paper) X(id, name, label, paper)
#define SIM_MAP_ROW_FN(X, id, fn, name, label, paper) X(id, fn)

typedef enum {
#define SIM_PAIR_MAP_ENUM(id, name, label, paper) SIM_PAIR_MAP_##id,
    SIM_PAIR_MAP_LIST(SIM_PAIR_MAP_ENUM)
#undef SIM_PAIR_MAP_ENUM
        SIM_PAIR_MAP_COUNT
} sim_pair_map;

/* 3-simplex maps: tile triples (I, J, K), 0 <= K <= J <= I < n; rows as the pair maps' (the
 * block function is sim_triplet_map_<fn> in maps_triplet.h). */
#define SIM_TRIPLET_MAP_TABLE(X, R)                                                                \
    R(X, BB, bb, "bb", "bounding box", 0)                                                          \
    R(X, TETRA, tetra, "tetra", "tetrahedral g(lambda), exact", 0)                                 \
    R(X, TETRA_FLOAT, tetra_float, "tetra-float", "tetrahedral g(lambda), float (paper)", 1)       \
    R(X, RM, rm, "rm", "recursive O(1) map", 0)
#define SIM_TRIPLET_MAP_LIST(X) SIM_TRIPLET_MAP_TABLE(X, SIM_MAP_ROW)
#define SIM_TRIPLET_MAP_FUNCS(X) SIM_TRIPLET_MAP_TABLE(X, SIM_MAP_ROW_FN)

typedef enum {
#define SIM_TRIPLET_MAP_ENUM(id, name, label, paper) SIM_TRIPLET_MAP_##id,
    SIM_TRIPLET_MAP_LIST(SIM_TRIPLET_MAP_ENUM)
#undef SIM_TRIPLET_MAP_ENUM
        SIM_TRIPLET_MAP_COUNT
} sim_triplet_map;

typedef struct {
    uint32_t i, j; /* I >= J */
} sim_tile2;

typedef struct {
    uint32_t i, j, k; /* I >= J >= K */
} sim_tile3;

#define SIM_MAX_LAUNCHES 128

/* One kernel launch of a map: its grid and the parameters the map needs for it. */
typedef struct {
    uint32_t grid[3]; /* blocks in x, y, z */
    uint32_t n;       /* tiles per side of the whole domain */
    uint32_t p[4];    /* map-specific (level, offsets, balanced width, ...) */
} sim_map_launch;

typedef struct {
    int dim;          /* 2 or 3 */
    int map;          /* sim_pair_map or sim_triplet_map */
    uint32_t n;       /* tiles per side */
    int launch_count; /* launches, executed in order (or concurrently where `concurrent`) */
    int concurrent;   /* nonzero: launches touch disjoint work and may overlap on streams */
    sim_map_launch launch[SIM_MAX_LAUNCHES];
    uint64_t blocks; /* blocks launched, all launches together */
    uint64_t useful; /* T2(n) or T3(n): blocks that own work */
} sim_map_plan;

/* Largest n (tiles per side) each dimension supports; plans refuse larger n with a message. */
#define SIM_MAX_TILES_2D 65535u
#define SIM_MAX_TILES_3D 4096u

sim_status sim_pair_map_plan(sim_pair_map map, uint32_t n, sim_map_plan *plan, sim_error *err);
sim_status sim_triplet_map_plan(sim_triplet_map map, uint32_t n, sim_map_plan *plan,
                                sim_error *err);

/* Names and labels from the lists above; lookups return -1 for an unknown name. */
const char *sim_pair_map_name(sim_pair_map map);
const char *sim_pair_map_label(sim_pair_map map);
int sim_pair_map_is_paper_float(sim_pair_map map);
int sim_pair_map_from_name(const char *name);
const char *sim_triplet_map_name(sim_triplet_map map);
const char *sim_triplet_map_label(sim_triplet_map map);
int sim_triplet_map_is_paper_float(sim_triplet_map map);
int sim_triplet_map_from_name(const char *name);
/* The same by dimension (2: pair maps, 3: triplet maps), for code that handles both. */
int sim_map_count(int dim);
const char *sim_map_name(int dim, int map);
int sim_map_from_name(int dim, const char *name);
/* Every map name of the dimension, ", "-separated, into buf (truncated to cap); returns buf. */
const char *sim_map_names(int dim, char *buf, size_t cap);

/* rm for n not a power of two: the domain is cut along the diagonal into at most this many
 * power-of-two parts, one per set bit of n, the last one rounded up past n (maps.c gives the
 * measured waste for each choice). */
#define SIM_RM_PARTS 4

/* Block number `index` of a plan, in the enumeration order above, as launch and block
 * coordinates. Returns 0 when index >= plan->blocks. */
int sim_map_plan_block_at(const sim_map_plan *plan, uint64_t index, int *launch, uint32_t *bx,
                          uint32_t *by, uint32_t *bz);

#ifdef __cplusplus
}
#endif

/* The SIM_HD map functions themselves:
 *   SIM_HD int sim_pair_map_block(sim_pair_map map, const sim_map_launch *launch,
 *                                 uint32_t bx, uint32_t by, uint32_t bz, sim_tile2 *tile);
 *   SIM_HD int sim_triplet_map_block(sim_triplet_map map, const sim_map_launch *launch,
 *                                    uint32_t bx, uint32_t by, uint32_t bz, sim_tile3 *tile);
 * return 1 and fill *tile when the block owns work, 0 when it is wasted. */
#include "nbsim/maps_pair.h"
#include "nbsim/maps_triplet.h"

#endif /* SIM_MAPS_H */
