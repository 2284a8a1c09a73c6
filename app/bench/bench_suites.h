/* SPDX-License-Identifier: MIT
 * nbsim — the three suites of `nbsim bench`; each writes its CSV into dir, a table on stdout. */
#ifndef APP_BENCH_SUITES_H
#define APP_BENCH_SUITES_H

#include "bench_map_kernels.h"
#include "bench_options.h"

/* What a run did, for the closing line and the exit status. */
typedef struct {
    int rows;           /* CSV rows written */
    int skipped;        /* sizes left out (memory, limits, too slow) with a note */
    int exact_failures; /* rows where an exact map failed its check: a bug, exit 1 */
    int paper_failures; /* rows where a paper float variant failed its check: expected */
} app_bench_tally;

/* Micro-benchmarks: maps.csv. */
sim_status app_bench_maps_suite(const app_bench_options *o, const sim_device_info *dev,
                                const char *dir, app_bench_tally *tally, sim_error *err);

/* Simulation kernels through sim_backend: pairs.csv (triplets = 0) or triplets.csv. */
sim_status app_bench_sim_suite(const app_bench_options *o, int triplets, const sim_device_info *dev,
                               const char *dir, app_bench_tally *tally, sim_error *err);

/* Scaling over GPUs (--gpus 1,2,4): scaling.csv, time per step, speed-up, efficiency, NCCL share
 * of pairs (triplets = 0; unculled and culled as --cull says) or triplets. */
sim_status app_bench_scaling_suite(const app_bench_options *o, int triplets,
                                   const sim_device_info *dev, const char *dir,
                                   app_bench_tally *tally, sim_error *err);
/* The triplets suite with --atm-cutoff: the culled cut-off over N (triplets_cutoff.csv). */
sim_status app_bench_tcull_suite(const app_bench_options *o, const sim_device_info *dev,
                                 const char *dir, app_bench_tally *tally, sim_error *err);

/* Sorts a size list ascending and drops duplicates; returns the new count. */
int app_bench_sort_sizes(uint32_t *v, int count);
/* The sizes a suite runs into sizes (APP_BENCH_MAX_LIST entries): --n when given, else the
 * suite's `count` defaults; sorted ascending without duplicates. Returns their count. */
int app_bench_sizes(const app_bench_options *o, const uint32_t *defaults, int count,
                    uint32_t *sizes);

#endif /* APP_BENCH_SUITES_H */
