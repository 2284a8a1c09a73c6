/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench triplets --atm-cutoff R`: the ATM cut-off culled (sim/cull/triplet_cull.h)
 * through the CUDA backend on the built-in `triplets` scene, over N. Per N: the surviving tile
 * triples, the culling (boxes of centres, neighbour pairs, tile-triple list) and the ATM kernel
 * over the list per step, their sum (the triplet step), the whole step and steps per second, and
 * t(N) / t(N0) for the smallest N (16,384 by default): a step that scales with N keeps that ratio
 * near N / N0. Rates count the body triples the surviving tile triples hold (32^3 each, fewer
 * where tiles coincide: what the kernel evaluates). No issue-rate ceiling is drawn: the kernel
 * skips a triple outside the cut-off after a few instructions (ncu on an H100: 8.6 per evaluated
 * triple at N = 65,536, bench/README.md), so SIM_TRIPLET_KERNEL_INSTR does not apply. Every
 * frame is one step from the same initial state (sorted and sized at set_state), so every repeat
 * does the same work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "bench_csv.h"
#include "bench_report.h"
#include "bench_stats.h"
#include "bench_suites.h"
#include "nbsim/scene.h"
#include "nbsim/size_limits.h"

static const uint32_t k_tcull_n[] = {16384, 65536, 262144};
static const uint32_t k_tcull_n_quick[] = {2048, 4096};

static const char *const k_header[] = {"gpu",
                                       "scene",
                                       "N",
                                       "cutoff_m",
                                       "pair_map",
                                       "triplet_tiles",
                                       "tile_triples",
                                       "tile_triples_total",
                                       "neighbour_tile_pairs",
                                       "triples_evaluated",
                                       "repeats",
                                       "cull_median_ms",
                                       "kernel_median_ms",
                                       "triplet_step_median_ms",
                                       "triplet_step_min_ms",
                                       "triplet_step_max_ms",
                                       "step_median_ms",
                                       "steps_per_s",
                                       "ratio_to_first",
                                       "triples_per_s",
                                       "fallback_steps"};
#define HEADER_COLUMNS ((int)(sizeof k_header / sizeof k_header[0]))

enum { T_CULL, T_KERNEL, T_TRIPLET, T_STEP, T_COUNT };

/* Body triples the listed tile triples hold (partial last tile ignored: an upper bound there). */
static uint64_t triples_evaluated(const sim_tile3 *list, uint64_t count) {
    uint64_t sum = 0;
    for (uint64_t k = 0; k < count; ++k) {
        sum += sim_tile3_body_triples(list[k], SIM_TRIPLET_TILE);
    }
    return sum;
}

typedef struct {
    uint32_t n;
    double median[T_COUNT], min_triplet, max_triplet;
    sim_frame_timing last;
    uint64_t evaluated;
} tcull_row;

/* One N: a backend on the triplets scene with the cut-off, warm-up, repeats. */
static sim_status run_one(const app_bench_options *o, uint32_t n_bodies, tcull_row *row,
                          int *skipped, sim_error *err) {
    *skipped = 0;
    sim_params params = sim_params_default();
    sim_state initial = {0};
    sim_error scene_err = {0};
    if (sim_scene_builtin("triplets", n_bodies, o->seed, &params, &initial, &scene_err) != SIM_OK) {
        printf("  N %u: skipped: %s\n", n_bodies, scene_err.message);
        sim_state_free(&initial);
        *skipped = 1;
        return SIM_OK;
    }
    params.triplets = 1;
    params.atm_cutoff = o->atm_cutoff;
    params.steps_per_frame = 1;
    /* the tile triples this suite times: a skin takes the cut-off's neighbour lists on one GPU
     * (scripts/gpu_atm_list.sh times those against these) */
    params.skin.value = 0.0;
    params.skin.set = 1;
    sim_backend_config cfg = sim_backend_config_default();
    cfg.kind = SIM_BACKEND_CUDA;
    cfg.cull = 1;
    if (o->tile_count > 0 && sim_pair_tile_valid(o->tile[0])) {
        cfg.tile = o->tile[0];
    }
    sim_backend *b = NULL;
    sim_status st = sim_backend_create(&cfg, &params, &initial, &b, err);
    if (st == SIM_OUT_OF_MEMORY || st == SIM_BAD_ARGUMENT) {
        printf("  N %u: skipped: %s\n", n_bodies, err->message);
        sim_state_free(&initial);
        *skipped = 1;
        return SIM_OK;
    }
    const int total = o->warmup + o->repeats;
    double *ms = calloc((size_t)o->repeats * T_COUNT, sizeof *ms);
    if (ms == NULL && st == SIM_OK) {
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for timings");
    }
    for (int r = 0; r < total && st == SIM_OK; ++r) {
        st = sim_backend_set_state(b, &initial, err);
        if (st == SIM_OK) {
            st = sim_backend_run_frame(b, &row->last, err);
        }
        if (st == SIM_OK && r >= o->warmup) {
            const int k = r - o->warmup;
            const sim_frame_timing *t = &row->last;
            const double cull = t->triplet_cull_ms + t->atm_list_ms; /* tile triples, or lists */
            ms[T_CULL * o->repeats + k] = cull;
            ms[T_KERNEL * o->repeats + k] = t->triplet_ms;
            ms[T_TRIPLET * o->repeats + k] = cull + t->triplet_ms;
            ms[T_STEP * o->repeats + k] = t->step_ms;
        }
    }
    uint64_t count = 0;
    sim_tile3 *list = NULL;
    if (st == SIM_OK) { /* the list of the initial state, for the triples it holds */
        st = sim_backend_set_state(b, &initial, err);
    }
    if (st == SIM_OK) {
        st = sim_backend_tile_triples(b, NULL, 0, &count, err);
    }
    if (st == SIM_OK && count > 0) {
        list = malloc(count * sizeof *list);
        st = list != NULL ? sim_backend_tile_triples(b, list, count, &count, err)
                          : sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for %llu tile triples",
                                     (unsigned long long)count);
    }
    if (st == SIM_OK) {
        row->n = n_bodies;
        row->evaluated = list != NULL ? triples_evaluated(list, count) : 0;
        for (int c = 0; c < T_COUNT; ++c) {
            const sim_stats s = sim_stats_of(&ms[c * o->repeats], o->repeats);
            row->median[c] = s.median;
            if (c == T_TRIPLET) {
                row->min_triplet = s.min;
                row->max_triplet = s.max;
            }
        }
        if (!row->last.triplet_culled) {
            st = sim_fail(err, SIM_BAD_ARGUMENT, "N = %u: the triplets were not culled", n_bodies);
        }
    }
    free(list);
    free(ms);
    sim_backend_destroy(b);
    sim_state_free(&initial);
    return st;
}

sim_status app_bench_tcull_suite(const app_bench_options *o, const sim_device_info *dev,
                                 const char *dir, app_bench_tally *tally, sim_error *err) {
    uint32_t sizes[APP_BENCH_MAX_LIST];
    const int n_sizes =
        app_bench_sizes(o, o->quick ? k_tcull_n_quick : k_tcull_n, o->quick ? 2 : 3, sizes);
    char path[APP_BENCH_PATH_MAX + 24];
    snprintf(path, sizeof path, "%s/triplets_cutoff.csv", dir);
    app_csv csv;
    SIM_TRY(app_csv_open(&csv, path, k_header, HEADER_COLUMNS, err));
    printf("\n== triplets, ATM cut-off %.6g m culled: `triplets` scene (seed %llu), only tile "
           "triples whose three tile pairs have boxes within the cut-off; cull = boxes + "
           "neighbour pairs + list, kernel = ATM over the list, triplet = both, per step; "
           "triples/s counts the body triples of the surviving tile triples\n",
           o->atm_cutoff, (unsigned long long)o->seed);
    printf("%8s %10s %12s %9s %9s %9s %8s %8s %10s\n", "N", "tile_trip", "of", "cull_ms",
           "kernel_ms", "triplet", "steps/s", "t/t(N0)", "triples/s");
    sim_status st = SIM_OK;
    double first = 0.0;
    for (int i = 0; i < n_sizes && st == SIM_OK; ++i) {
        tcull_row row;
        memset(&row, 0, sizeof row);
        int skipped = 0;
        st = run_one(o, sizes[i], &row, &skipped, err);
        if (st != SIM_OK || skipped) {
            tally->skipped += skipped;
            continue;
        }
        const sim_frame_timing *t = &row.last;
        first = first > 0.0 ? first : row.median[T_TRIPLET];
        const double ratio = first > 0.0 ? row.median[T_TRIPLET] / first : 0.0;
        const double steps_per_s = row.median[T_STEP] > 0.0 ? 1e3 / row.median[T_STEP] : 0.0;
        const double rate = row.median[T_KERNEL] > 0.0
                                ? (double)row.evaluated / (row.median[T_KERNEL] * 1e-3)
                                : 0.0;
        printf("%8u %10llu %12llu %9.4f %9.4f %9.4f %8.1f %8.2f %10.3g\n", row.n,
               (unsigned long long)t->tile_triples, (unsigned long long)t->tile_triples_total,
               row.median[T_CULL], row.median[T_KERNEL], row.median[T_TRIPLET], steps_per_s, ratio,
               rate);
        fflush(stdout);
        app_csv_str(&csv, dev->name);
        app_csv_str(&csv, "triplets");
        app_csv_int(&csv, row.n);
        app_csv_num(&csv, o->atm_cutoff);
        app_csv_str(&csv, sim_pair_choice_name(sim_backend_config_default().pair_map));
        app_csv_int(&csv, (row.n + SIM_TRIPLET_TILE - 1) / SIM_TRIPLET_TILE);
        app_csv_u64(&csv, t->tile_triples);
        app_csv_u64(&csv, t->tile_triples_total);
        app_csv_u64(&csv, t->triplet_tile_pairs);
        app_csv_u64(&csv, row.evaluated);
        app_csv_int(&csv, o->repeats);
        app_csv_num(&csv, row.median[T_CULL]);
        app_csv_num(&csv, row.median[T_KERNEL]);
        app_csv_num(&csv, row.median[T_TRIPLET]);
        app_csv_num(&csv, row.min_triplet);
        app_csv_num(&csv, row.max_triplet);
        app_csv_num(&csv, row.median[T_STEP]);
        app_csv_num(&csv, steps_per_s);
        app_csv_num(&csv, ratio);
        app_csv_num(&csv, rate);
        app_csv_int(&csv, t->triplet_fallback_steps);
        app_csv_end_row(&csv);
        tally->rows++;
    }
    return app_csv_finish(&csv, st, err);
}
