/* SPDX-License-Identifier: MIT
 * nbsim — the live map comparison: per-step kernel times of every pair map (and `full`) and
 * every triplet map measured in one session, under one key (N, pair tile, culling), as medians
 * and I = t_bb / t_map. The viewer fills it frame by frame (M/T switches, the S sweep), draws
 * it as a panel, and the run summary writes it as JSON (sim_run_stats_write_json_maps).
 * A frame belongs to the map that ran it; the first frames after a switch are warm-up, and
 * whatever was measured under another key is dropped when the key changes. */
#ifndef SIM_MAP_COMPARE_H
#define SIM_MAP_COMPARE_H

#include <stdio.h>

#include "nbsim/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Newest per-step times kept per map: a few sweeps' worth, so the median follows the scene. */
#define SIM_COMPARE_SAMPLES 240

/* What a time is comparable under. cull: the contact kernel runs over the culled tile pairs
 * (always 0 until culling exists). */
typedef struct {
    uint32_t n;    /* bodies */
    uint32_t tile; /* bodies per pair tile */
    int cull;
} sim_compare_key;

typedef struct {
    double ms[SIM_COMPARE_SAMPLES]; /* per-step kernel time of a frame [ms], a ring */
    int count, next;
    uint64_t frames; /* frames measured under this key, all of them */
} sim_compare_series;

typedef struct {
    sim_compare_key key;
    sim_compare_series pair[SIM_PAIR_CHOICE_COUNT];    /* by sim_pair_choice */
    sim_compare_series triplet[SIM_TRIPLET_MAP_COUNT]; /* by sim_triplet_map */
    uint64_t generation; /* counts key changes (clears), so a reader can tell */
} sim_map_compare;

/* One map's line of the table. */
typedef struct {
    int dim; /* 2: pair map or full, 3: triplet map */
    int map; /* sim_pair_choice or sim_triplet_map */
    const char *name;
    int paper_float;                /* one of the papers' float variants (kept for study) */
    int samples;                    /* frames held; 0: not measured */
    double median_ms, q1_ms, q3_ms; /* per step [ms]; quartiles show the noise */
    double ratio;                   /* I = median(bb) / median(map); 0 when either is unmeasured */
} sim_compare_row;

void sim_map_compare_init(sim_map_compare *c, const sim_compare_key *key);
/* Sets the key; a different one clears every map's times. Returns 1 when it cleared. */
int sim_map_compare_set_key(sim_map_compare *c, const sim_compare_key *key);
/* One frame's per-step time [ms] of map `map` (dim 2: a sim_pair_choice, 3: a triplet map). */
void sim_map_compare_add(sim_map_compare *c, int dim, int map, double ms_per_step);
/* The rows of one dimension in the maps' list order (pairs: then `full` when include_full),
 * measured or not. Returns the count written (at most cap). */
int sim_map_compare_rows(const sim_map_compare *c, int dim, int include_full, sim_compare_row *rows,
                         int cap);
/* Frames measured in dim over all its maps (0: nothing to show). */
uint64_t sim_map_compare_frames(const sim_map_compare *c, int dim);
/* The table as a JSON object (no trailing newline), its lines indented by `indent` spaces:
 * {"n", "tile", "cull", "pair": [{"map", "paper_float", "frames", "median_ms", "q1_ms",
 * "q3_ms", "I"}, ...], "triplet": [...]}, unmeasured values null. */
void sim_map_compare_write_json(const sim_map_compare *c, int include_full, FILE *f, int indent);

#ifdef __cplusplus
}
#endif

#endif /* SIM_MAP_COMPARE_H */
