/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench pairs|triplets --gpus 1,2,4`: the step on several GPUs of this machine
 * (one process, one rank per GPU, forces summed with NCCL; include/nbsim/multi.h), on the gas scene. Per
 * map, size and GPU count: the time per step (CUDA events on the slowest rank, the median over
 * the repeats), speed-up and parallel efficiency against the first count, and the share of the
 * step spent in the all-reduce (the quickest rank's interval: the transfer, not the waiting).
 * Frames follow each other from the initial state without a reset: an unculled step does the
 * same work every time, a culled gas changes its contacts slowly. scaling.csv, one row each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "bench_csv.h"
#include "bench_stats.h"
#include "bench_suites.h"
#include "nbsim/scene.h"

static const uint32_t k_pairs_n[] = {262144, 1048576};
static const uint32_t k_triplets_n[] = {4096, 16384};
static const uint32_t k_quick_pairs_n[] = {4096};
static const uint32_t k_quick_triplets_n[] = {512};

static const char *const k_header[] = {
    "gpu",       "suite",   "map",        "culled",         "tile",        "N",
    "gpus",      "repeats", "steps",      "step_median_ms", "step_min_ms", "step_max_ms",
    "kernel_ms", "comm_ms", "comm_share", "speedup",        "efficiency",  "interactions_per_s"};
#define HEADER_COLUMNS ((int)(sizeof k_header / sizeof k_header[0]))

typedef struct {
    sim_stats step, kernel, comm;
    int done;
} scaling_row;

/* Times one (map, N, culled) on g GPUs into *row; a size that does not fit is noted and left
 * out (row->done 0). */
static sim_status time_one(const app_bench_options *o, int triplets, int map, uint32_t n,
                           int culled, uint32_t tile, int g, scaling_row *row, sim_error *err) {
    memset(row, 0, sizeof *row);
    sim_params params = sim_params_default();
    sim_state initial = {0};
    SIM_TRY(sim_scene_builtin("gas", n, o->seed, &params, &initial, err));
    params.triplets = triplets;
    params.steps_per_frame = o->steps;
    sim_backend_config cfg = sim_backend_config_default();
    cfg.kind = SIM_BACKEND_CUDA;
    cfg.tile = tile;
    cfg.cull = culled;
    cfg.phase_timing = SIM_PHASE_TIMING_EVERY; /* its kernel column: every step's, measured */
    if (triplets) {
        cfg.triplet_map = (sim_triplet_map)map;
    } else {
        cfg.pair_map = map;
    }
    if (g > 1) {
        cfg.multi.world = g;
        cfg.multi.local = g;
    }
    sim_backend *b = NULL;
    sim_status st = sim_backend_create(&cfg, &params, &initial, &b, err);
    sim_state_free(&initial);
    if (st == SIM_OUT_OF_MEMORY || st == SIM_BAD_ARGUMENT) {
        printf("  %s N %u on %d GPU%s: left out: %s\n", triplets ? "triplets" : "pairs", n, g,
               g == 1 ? "" : "s", err->message);
        return SIM_OK;
    }
    SIM_TRY(st);
    const int reps = o->repeats;
    double *v = calloc(3 * (size_t)reps, sizeof *v);
    if (v == NULL) {
        sim_backend_destroy(b);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for timings");
    }
    sim_frame_timing t;
    for (int w = 0; w < o->warmup && st == SIM_OK; ++w) {
        st = sim_backend_run_frame(b, &t, err);
    }
    for (int r = 0; r < reps && st == SIM_OK; ++r) {
        st = sim_backend_run_frame(b, &t, err);
        const double steps = t.steps > 0 ? t.steps : 1;
        v[r] = t.step_ms / steps;
        v[reps + r] =
            (triplets ? t.triplet_ms : t.pair_ms + t.cull_ms + t.nlist_ms + t.sort_ms) / steps;
        v[2 * reps + r] = t.comm_ms / steps;
    }
    if (st == SIM_OK) {
        row->step = sim_stats_of(v, reps);
        row->kernel = sim_stats_of(v + reps, reps);
        row->comm = sim_stats_of(v + 2 * reps, reps);
        row->done = 1;
    }
    free(v);
    sim_backend_destroy(b);
    return st;
}

sim_status app_bench_scaling_suite(const app_bench_options *o, int triplets,
                                   const sim_device_info *dev, const char *dir,
                                   app_bench_tally *tally, sim_error *err) {
    const int devices = sim_cuda_device_count();
    int maps[SIM_PAIR_CHOICE_COUNT + 1], map_count = 0;
    if (!o->maps_given) { /* the bounding box's row split against the λ split */
        maps[map_count++] = triplets ? SIM_TRIPLET_MAP_BB : SIM_PAIR_MAP_BB;
        maps[map_count++] = triplets ? SIM_TRIPLET_MAP_TETRA : SIM_PAIR_MAP_LTM;
    } else {
        const unsigned mask = triplets ? o->triplet_maps : o->pair_maps;
        const int count = triplets ? SIM_TRIPLET_MAP_COUNT : SIM_PAIR_CHOICE_COUNT;
        for (int m = 0; m < count; ++m) {
            if (mask & (1u << m)) {
                maps[map_count++] = m;
            }
        }
    }
    uint32_t sizes[APP_BENCH_MAX_LIST];
    const uint32_t *defaults = triplets ? (o->quick ? k_quick_triplets_n : k_triplets_n)
                                        : (o->quick ? k_quick_pairs_n : k_pairs_n);
    const int n_sizes = app_bench_sizes(o, defaults, o->quick ? 1 : 2, sizes);
    int culls[2], n_culls = 0;
    if (triplets || (o->cull & APP_BENCH_CULL_OFF)) {
        culls[n_culls++] = 0;
    }
    if (!triplets && (o->cull & (APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO))) {
        culls[n_culls++] = 1;
    }
    int gpus[APP_BENCH_MAX_LIST], n_gpus = 0;
    for (int k = 0; k < o->gpus_count; ++k) {
        if ((int)o->gpus[k] > devices) {
            printf("  %u GPUs: left out, %d visible\n", o->gpus[k], devices);
            tally->skipped++;
        } else if (o->gpus[k] > 1 && !sim_multi_have_nccl()) {
            printf("  %u GPUs: left out, this build has no NCCL\n", o->gpus[k]);
            tally->skipped++;
        } else {
            gpus[n_gpus++] = (int)o->gpus[k];
        }
    }
    if (n_gpus == 0) {
        return SIM_OK;
    }

    char path[APP_BENCH_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/scaling_%s.csv", dir, triplets ? "triplets" : "pairs");
    app_csv csv;
    SIM_TRY(app_csv_open(&csv, path, k_header, HEADER_COLUMNS, err));
    printf("\n== %s over GPUs: ms per step (slowest rank, median), speed-up and efficiency "
           "against %d GPU%s, comm = the NCCL all-reduce's share of the step\n",
           triplets ? "triplets (ATM, all triples)" : "pairs", gpus[0], gpus[0] == 1 ? "" : "s");
    printf("%-6s %-7s %9s %5s %11s %11s %8s %7s %7s\n", "map", "culled", "N", "gpus", "step ms",
           "kernel ms", "speedup", "effic.", "comm");
    sim_status st = SIM_OK;
    for (int c = 0; c < n_culls && st == SIM_OK; ++c) {
        for (int i = 0; i < n_sizes && st == SIM_OK; ++i) {
            const uint32_t n = sizes[i];
            uint32_t tile = triplets ? SIM_TRIPLET_TILE : (o->tile_count > 0 ? o->tile[0] : 64u);
            if (!triplets && (n + tile - 1) / tile > SIM_MAX_TILES_2D) {
                tile = 128; /* the pair maps' 65,535 tiles per side */
            }
            for (int m = 0; m < map_count && st == SIM_OK; ++m) {
                if (culls[c] && maps[m] == SIM_PAIR_FULL) {
                    continue;
                }
                double base = 0.0;
                for (int k = 0; k < n_gpus && st == SIM_OK; ++k) {
                    scaling_row row;
                    st = time_one(o, triplets, maps[m], n, culls[c], tile, gpus[k], &row, err);
                    if (st != SIM_OK || !row.done) {
                        tally->skipped += st == SIM_OK;
                        continue;
                    }
                    const double ms = row.step.median;
                    base = k == 0 ? ms : base;
                    const double speedup = ms > 0 && base > 0 ? base / ms : 0.0;
                    const double eff = speedup * gpus[0] / gpus[k];
                    const double share = ms > 0 ? row.comm.median / ms : 0.0;
                    const uint64_t inter = sim_choose(n, triplets ? 3 : 2);
                    const char *name = triplets ? sim_triplet_map_name((sim_triplet_map)maps[m])
                                                : sim_pair_choice_name(maps[m]);
                    printf("%-6s %-7s %9u %5d %11.4f %11.4f %8.3f %6.1f%% %6.1f%%\n", name,
                           culls[c] ? "yes" : "no", n, gpus[k], ms, row.kernel.median, speedup,
                           100.0 * eff, 100.0 * share);
                    fflush(stdout);
                    app_csv_str(&csv, dev->name);
                    app_csv_str(&csv, triplets ? "triplets" : "pairs");
                    app_csv_str(&csv, name);
                    app_csv_int(&csv, culls[c]);
                    app_csv_int(&csv, (int)tile);
                    app_csv_int(&csv, (int)n);
                    app_csv_int(&csv, gpus[k]);
                    app_csv_int(&csv, o->repeats);
                    app_csv_int(&csv, o->steps);
                    app_csv_num(&csv, ms);
                    app_csv_num(&csv, row.step.min);
                    app_csv_num(&csv, row.step.max);
                    app_csv_num(&csv, row.kernel.median);
                    app_csv_num(&csv, row.comm.median);
                    app_csv_num(&csv, share);
                    app_csv_num(&csv, speedup);
                    app_csv_num(&csv, eff);
                    app_csv_num(&csv, ms > 0 ? (double)inter / (ms * 1e-3) : 0.0);
                    app_csv_end_row(&csv);
                    tally->rows++;
                }
            }
        }
    }
    return app_csv_finish(&csv, st, err);
}
