/* SPDX-License-Identifier: MIT
 * nbsim — statistics of a run's per-step kernel times: median, p95, min, max; the end-of-run
 * summary on stdout and as JSON. */
#ifndef SIM_RUN_STATS_H
#define SIM_RUN_STATS_H

#include <stdio.h>

#include "nbsim/map_compare.h"
#include "nbsim/session.h"
#include "nbsim/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-step times a run keeps statistics of: id, name, and its time in a frame's timing.
 * `contact` is the whole contact phase, sort + cull + pair (what culling is measured by); `comm`
 * the all-reduce of a multi-GPU step (sim_frame_timing.comm_ms); `triplet` the ATM kernel,
 * `triplet_cull` the culling of tile triples by the cut-off. */
#define SIM_RUN_KERNEL_LIST(X)                                                                     \
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
#define SIM_RUN_KERNEL_ENUM(id, name, ms) SIM_RUN_KERNEL_##id,
    SIM_RUN_KERNEL_LIST(SIM_RUN_KERNEL_ENUM)
#undef SIM_RUN_KERNEL_ENUM
        SIM_RUN_KERNEL_COUNT
} sim_run_kernel;

typedef struct {
    double *ms[SIM_RUN_KERNEL_COUNT]; /* per-step time of each frame [ms] */
    size_t count, capacity;
    int culled;         /* some frame ran the culled pipeline (sort and cull are worth printing) */
    int triplet_culled; /* some frame culled tile triples by the cut-off */
} sim_run_stats;

sim_status sim_run_stats_add(sim_run_stats *rs, const sim_frame_timing *t, sim_error *err);
sim_stats sim_run_stats_get(const sim_run_stats *rs, sim_run_kernel k);
void sim_run_stats_free(sim_run_stats *rs);

/* How a run ended, for the summary. */
typedef struct {
    long frames_requested; /* --frames; 0 in the viewer */
    uint64_t seed;         /* the built-in scene's seed, when seed_used */
    int seed_used;
    const char *stop;    /* "done", "interrupted", "unstable" (blew up), "failed" */
    uint64_t stop_frame; /* the frame that blew up or failed (1-based); 0 when none did */
    const char *detail;  /* the signal, the cause of a blow-up or failure; "" when done */
    double wall_s;       /* wall-clock seconds of the run */
} sim_run_end;

/* Prints the summary table. */
void sim_run_stats_print(const sim_run_stats *rs, const sim_run_info *s, FILE *out);
/* The summary as JSON: what ran (scene, seed, N, backend, maps), how it ended (frames requested
 * and done, stop reason, the frame that blew up or failed and why, wall time), and the per-kernel
 * statistics (null when no frame completed). */
sim_status sim_run_stats_write_json(const sim_run_stats *rs, const sim_run_info *s,
                                    const sim_run_end *end, const char *path, sim_error *err);
/* The same with the viewer's map comparison as "map_comparison" (sim_map_compare_write_json;
 * `full` listed on CUDA); maps == NULL writes exactly sim_run_stats_write_json's file. */
sim_status sim_run_stats_write_json_maps(const sim_run_stats *rs, const sim_run_info *s,
                                         const sim_run_end *end, const sim_map_compare *maps,
                                         const char *path, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_RUN_STATS_H */
