/* SPDX-License-Identifier: MIT
 * nbsim — statistics of a run's per-step kernel times: median, p95, min, max; the end-of-run
 * summary on stdout and as JSON. */
#ifndef APP_RUN_STATS_H
#define APP_RUN_STATS_H

#include <stdio.h>

#include "map_compare.h"
#include "session.h"
#include "nbsim/stats.h"

/* The per-step times a run keeps statistics of: id, name, and its time in a frame's timing.
 * `contact` is the whole contact phase, sort + cull + pair (what culling is measured by); `comm`
 * the all-reduce of a multi-GPU step (sim_frame_timing.comm_ms); `triplet` the ATM kernel,
 * `triplet_cull` the culling of tile triples by the cut-off. */
#define APP_KERNEL_LIST(X)                                                                         \
    X(PAIR, "pair", t->pair_ms)                                                                    \
    X(SORT, "sort", t->sort_ms)                                                                    \
    X(CULL, "cull", t->cull_ms)                                                                    \
    X(CONTACT, "contact", t->sort_ms + t->cull_ms + t->pair_ms)                                    \
    X(TRIPLET, "triplet", t->triplet_ms)                                                           \
    X(TRIPLET_CULL, "triplet_cull", t->triplet_cull_ms)                                            \
    X(INTEGRATE, "integrate", t->integrate_ms)                                                     \
    X(COMM, "comm", t->comm_ms)                                                                    \
    X(STEP, "step", t->step_ms)

typedef enum {
#define APP_KERNEL_ENUM(id, name, ms) APP_KERNEL_##id,
    APP_KERNEL_LIST(APP_KERNEL_ENUM)
#undef APP_KERNEL_ENUM
        APP_KERNEL_COUNT
} app_kernel;

typedef struct {
    double *ms[APP_KERNEL_COUNT]; /* per-step time of each frame [ms] */
    size_t count, capacity;
    int culled;         /* some frame ran the culled pipeline (sort and cull are worth printing) */
    int triplet_culled; /* some frame culled tile triples by the cut-off */
} app_run_stats;

sim_status app_run_stats_add(app_run_stats *rs, const sim_frame_timing *t, sim_error *err);
sim_stats app_run_stats_get(const app_run_stats *rs, app_kernel k);
void app_run_stats_free(app_run_stats *rs);

/* How a run ended, for the summary. */
typedef struct {
    long frames_requested; /* --frames; 0 in the viewer */
    uint64_t seed;         /* the built-in scene's seed, when seed_used */
    int seed_used;
    const char *stop;    /* "done", "interrupted", "unstable" (blew up), "failed" */
    uint64_t stop_frame; /* the frame that blew up or failed (1-based); 0 when none did */
    const char *detail;  /* the signal, the cause of a blow-up or failure; "" when done */
    double wall_s;       /* wall-clock seconds of the run */
} app_run_end;

/* Prints the summary table. */
void app_run_stats_print(const app_run_stats *rs, const app_run_info *s, FILE *out);
/* The summary as JSON: what ran (scene, seed, N, backend, maps), how it ended (frames requested
 * and done, stop reason, the frame that blew up or failed and why, wall time), and the per-kernel
 * statistics (null when no frame completed). */
sim_status app_run_stats_write_json(const app_run_stats *rs, const app_run_info *s,
                                    const app_run_end *end, const char *path, sim_error *err);
/* The same with the viewer's map comparison as "map_comparison" (app_map_compare_write_json;
 * `full` listed on CUDA); maps == NULL writes exactly app_run_stats_write_json's file. */
sim_status app_run_stats_write_json_maps(const app_run_stats *rs, const app_run_info *s,
                                         const app_run_end *end, const app_map_compare *maps,
                                         const char *path, sim_error *err);

#endif /* APP_RUN_STATS_H */
