/* SPDX-License-Identifier: MIT
 * nbsim — the command line of `nbsim bench`: which suites, sweeps and maps. Parsing needs no GPU
 * (bad options are reported the same with or without one). */
#ifndef APP_BENCH_OPTIONS_H
#define APP_BENCH_OPTIONS_H

#include <stdint.h>

#include "nbsim/internal/backend.h"

enum { APP_BENCH_MAPS = 1u << 0, APP_BENCH_PAIRS = 1u << 1, APP_BENCH_TRIPLETS = 1u << 2 };

/* Micro-benchmark kernels of the maps suite, as bits (EDM with 1..4 features). */
#define APP_BENCH_KERNEL_LIST(X)                                                                   \
    X(MAP, "map", "map only")                                                                      \
    X(ACCUM, "accum", "accumulate")                                                                \
    X(EDM1, "edm1", "EDM, 1 feature")                                                              \
    X(EDM2, "edm2", "EDM, 2 features")                                                             \
    X(EDM3, "edm3", "EDM, 3 features")                                                             \
    X(EDM4, "edm4", "EDM, 4 features")

typedef enum {
#define APP_BENCH_KERNEL_ENUM(id, name, label) APP_BENCH_K_##id,
    APP_BENCH_KERNEL_LIST(APP_BENCH_KERNEL_ENUM)
#undef APP_BENCH_KERNEL_ENUM
        APP_BENCH_K_COUNT
} app_bench_kernel_id;

const char *app_bench_kernel_name(int k);

/* How the maps suite evaluates a map: in every thread, as the papers' code does, or once per
 * block (thread 0, broadcast through shared memory). */
enum { APP_BENCH_EVAL_THREAD = 1u << 0, APP_BENCH_EVAL_BLOCK = 1u << 1 };

/* What the pairs suite times: every tile pair swept (pairs.csv), and the culled pipeline with
 * a one-pass or a two-pass culling (pairs_culled.csv). --cull off,1,2 (on = 1,2). */
enum { APP_BENCH_CULL_OFF = 1u << 0, APP_BENCH_CULL_ONE = 1u << 1, APP_BENCH_CULL_TWO = 1u << 2 };

#define APP_BENCH_MAX_LIST 32
#define APP_BENCH_PATH_MAX 1024

typedef struct {
    unsigned suites;                /* APP_BENCH_* bits */
    int quick;                      /* small sweep for tests */
    uint32_t n[APP_BENCH_MAX_LIST]; /* --n: elements (maps) or bodies; n_count 0 = default */
    int n_count;
    uint32_t tile[APP_BENCH_MAX_LIST]; /* --tile: rho (maps) or bodies per tile (pairs/triplets) */
    int tile_count;
    int repeats;                       /* timed repeats per map (median, min, max) */
    int warmup;                        /* untimed executions before timing */
    unsigned pair_maps;                /* bit per sim_pair_choice (maps and full) */
    int maps_given;                    /* --maps named them */
    unsigned triplet_maps;             /* bit per sim_triplet_map */
    unsigned kernels;                  /* bit per app_bench_kernel_id */
    unsigned dims;                     /* bit 2 and/or bit 3 */
    unsigned evals;                    /* maps suite: APP_BENCH_EVAL_* bits */
    unsigned cull;                     /* pairs suite: APP_BENCH_CULL_* bits */
    double atm_cutoff;                 /* triplets suite: > 0 times the culled cut-off [m] */
    uint64_t seed;                     /* scene seed for pairs/triplets */
    uint32_t gpus[APP_BENCH_MAX_LIST]; /* --gpus: GPU counts of the scaling suite; 0 = none */
    int gpus_count;
    int steps;                    /* scaling suite: steps per timed frame */
    int plot;                     /* run bench/plot.py afterwards when possible */
    char out[APP_BENCH_PATH_MAX]; /* "" = bench/results/<gpu-slug> */
} app_bench_options;

void app_bench_options_default(app_bench_options *o);

/* argv[0] is "bench". Returns 0 to run, 1 when help was printed (exit 0), 2 on a bad option
 * (one line naming it already on stderr). */
int app_bench_options_parse(int argc, char **argv, app_bench_options *o);

void app_bench_print_help(void);

#endif /* APP_BENCH_OPTIONS_H */
