/* SPDX-License-Identifier: MIT
 * nbsim — `--pair-map auto` / `--triplet-map auto`: a short calibration that times a few steps
 * of every exact map (and `full` for pairs) through the CUDA backend on the session's own
 * bodies, picks the fastest (and the tile size, unless the user fixed it), and caches the choice
 * per GPU name and N bucket (powers of two) in $XDG_CACHE_HOME/nbsim/autotune.txt (else
 * ~/.cache/nbsim/autotune.txt), so the next start with a similar N costs nothing.
 * The papers' float variants are never chosen: they misplace blocks at large sizes. */
#ifndef SIM_AUTOTUNE_H
#define SIM_AUTOTUNE_H

#include <stddef.h>

#include "nbsim/config.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SIM_AUTOTUNE_PAIR = 1u << 0,    /* choose config->pair_map (a map or full) */
    SIM_AUTOTUNE_TRIPLET = 1u << 1, /* choose config->triplet_map (only if params->triplets) */
    SIM_AUTOTUNE_TILE = 1u << 2,    /* also choose config->tile (32, 64, 128); else keep it */
    SIM_AUTOTUNE_FRESH = 1u << 3,   /* ignore a cached choice (and replace it) */
    SIM_AUTOTUNE_CULLED = 1u << 4   /* in a cache key: tuned with culling on (its own choice) */
};

/* Chooses what `what` asks for and writes it into *config; the rest of *config is kept.
 * params/initial: the session's effective parameters and bodies. report (cap bytes) gets one
 * line saying what was chosen, from which measurements or from the cache, for the user.
 * Without a CUDA device (or config->kind != SIM_BACKEND_CUDA) nothing is timed: the maps stay
 * as they are, the report says so, and SIM_OK is returned. A failing cache file never fails. */
sim_status sim_autotune(sim_backend_config *config, unsigned what, const sim_params *params,
                        const sim_state *initial, char *report, size_t cap, sim_error *err);

/* The cache file path (for messages and tests); "" when neither variable is set. */
void sim_autotune_cache_path(char *out, size_t cap);

/* A GPU's name as it keys the cache and names the benchmarks' results folder (examples:
 * tests/test_bench.c, test_slug): lower-case letters and digits, runs of
 * anything else become one '-', no leading/trailing '-'; "gpu" when nothing is left. */
void sim_device_slug(const char *name, char *out, size_t cap);

/* A cache line's key and value; exposed for the CPU tests. */
typedef struct {
    char gpu[128];              /* slug of the GPU name */
    unsigned bucket;            /* floor(log2 N) */
    unsigned what;              /* SIM_AUTOTUNE_PAIR | _TRIPLET | _TILE actually tuned */
    unsigned tile_in;           /* the fixed tile when _TILE was not asked, else 0 */
    unsigned tile;              /* chosen */
    char pair[32];              /* chosen pair map name, "full", or "-" */
    char triplet[32];           /* chosen triplet map name or "-" */
    double pair_ms, triplet_ms; /* medians measured at calibration */
    char date[16];              /* when it was measured, "YYYY-MM-DD"; "" in older caches */
} sim_autotune_entry;

/* Finds the newest entry with the same key (gpu, bucket, what, tile_in) in the cache file at
 * path. Returns 1 and fills *found, or 0. */
int sim_autotune_cache_find(const char *path, const sim_autotune_entry *key,
                            sim_autotune_entry *found);
/* Replaces (or appends) the entry with that key, dated today; writes a temporary and renames
 * it. */
sim_status sim_autotune_cache_store(const char *path, const sim_autotune_entry *e, sim_error *err);

/* The cached choice for the current CUDA device and N, without measuring anything: the newest
 * entry `--pair-map auto` (with `--triplet-map auto` when triplets run) stored for this GPU, N
 * bucket and culling mode (config->cull), with the tile it chose, or for config->tile when
 * tile_fixed. Applies the entry's
 * pair map (and triplet map, tile) to *config and returns 1 with *found filled; 0 when there
 * is none (or no CUDA device, or config->kind is not CUDA). */
int sim_autotune_cached(sim_backend_config *config, int triplets, int tile_fixed, uint32_t n,
                        sim_autotune_entry *found);

#ifdef __cplusplus
}
#endif

#endif /* SIM_AUTOTUNE_H */
