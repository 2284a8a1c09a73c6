/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench pairs` / `nbsim bench triplets`: the simulation kernels through the CUDA
 * backend under every map (and the nbody-style `full` sweep for pairs), over N and tile size,
 * on the built-in gas scene with a fixed seed. Times are the backend's CUDA-event pair_ms /
 * triplet_ms of one step. Every frame starts from the same initial state, so each map does
 * exactly the same work (same contacts) in every repeat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bench_csv.h"
#include "bench_report.h"
#include "bench_stats.h"
#include "bench_suites.h"
#include "scene.h"

static const uint32_t k_pairs_n[] = {4096, 16384, 65536, 131072};
static const uint32_t k_pairs_n_quick[] = {1024, 2048};
static const uint32_t k_triplets_n[] = {256, 512, 1024, 2048, 4096};
static const uint32_t k_triplets_n_quick[] = {128, 256};
static const uint32_t k_tiles[] = {32, 64, 128};

/* In the default sweep, sizes stop growing once one bb step takes longer than this. */
#define SLOW_STEP_MS 2000.0

#define MAX_CANDIDATES 16

typedef struct {
    int map; /* sim_pair_map / sim_triplet_map, or SIM_PAIR_FULL */
    sim_backend *backend;
    sim_frame_timing last;
} candidate;

static const char *candidate_name(int triplets, int map) {
    return triplets ? sim_triplet_map_name((sim_triplet_map)map) : sim_pair_choice_name(map);
}

static int candidate_paper(int triplets, int map) {
    if (!triplets && map == SIM_PAIR_FULL) {
        return 0;
    }
    return triplets ? sim_triplet_map_is_paper_float((sim_triplet_map)map)
                    : sim_pair_map_is_paper_float((sim_pair_map)map);
}

static const char *const k_header[] = {"gpu",
                                       "kernel",
                                       "map",
                                       "paper_float",
                                       "tile",
                                       "N",
                                       "tiles",
                                       "blocks",
                                       "wasted_blocks",
                                       "repeats",
                                       "median_ms",
                                       "min_ms",
                                       "max_ms",
                                       "I",
                                       "interactions",
                                       "interactions_per_s",
                                       "flops_per_interaction",
                                       "gflops",
                                       "ceiling_fraction"};
#define HEADER_COLUMNS ((int)(sizeof k_header / sizeof k_header[0]))

/* One frame of one candidate from the initial state; returns its kernel time [ms]. */
static sim_status one_frame(candidate *c, const sim_state *initial, int triplets, double *ms,
                            sim_error *err) {
    SIM_TRY(sim_backend_set_state(c->backend, initial, err));
    SIM_TRY(sim_backend_run_frame(c->backend, &c->last, err));
    *ms = triplets ? c->last.triplet_ms : c->last.pair_ms;
    return SIM_OK;
}

static void destroy_all(candidate *cands, int count) {
    for (int k = 0; k < count; ++k) {
        sim_backend_destroy(cands[k].backend);
        cands[k].backend = NULL;
    }
}

/* One row (tile, N). *slow is set when the bb step was slower than SLOW_STEP_MS. */
static sim_status run_row(const app_bench_options *o, int triplets, const sim_device_info *dev,
                          const int *maps, int map_count, uint32_t tile, uint32_t n_bodies,
                          app_csv *csv, app_bench_tally *tally, int *slow, sim_error *err) {
    sim_params params = sim_params_default();
    sim_state initial = {0};
    sim_error scene_err = {0};
    if (sim_scene_builtin("gas", n_bodies, o->seed, &params, &initial, &scene_err) != SIM_OK) {
        printf("  tile %u N %u: skipped: %s\n", tile, n_bodies, scene_err.message);
        sim_state_free(&initial);
        tally->skipped++;
        return SIM_OK;
    }
    params.triplets = triplets;
    params.steps_per_frame = 1;

    candidate cands[MAX_CANDIDATES];
    memset(cands, 0, sizeof cands);
    sim_status st = SIM_OK;
    for (int k = 0; k < map_count && st == SIM_OK; ++k) {
        sim_backend_config cfg = sim_backend_config_default();
        cfg.kind = SIM_BACKEND_CUDA;
        cfg.tile = tile;
        cands[k].map = maps[k];
        if (triplets) {
            cfg.triplet_map = (sim_triplet_map)maps[k];
        } else {
            cfg.pair_map = maps[k];
        }
        st = sim_backend_create(&cfg, &params, &initial, &cands[k].backend, err);
    }
    if (st == SIM_OUT_OF_MEMORY || st == SIM_BAD_ARGUMENT) {
        printf("  tile %u N %u: skipped: %s\n", tile, n_bodies, err->message);
        tally->skipped++;
        destroy_all(cands, map_count);
        sim_state_free(&initial);
        return SIM_OK;
    }
    double bb_warm = 0.0;
    for (int w = 0; w < o->warmup && st == SIM_OK; ++w) {
        for (int k = 0; k < map_count && st == SIM_OK; ++k) {
            double ms = 0.0;
            st = one_frame(&cands[k], &initial, triplets, &ms, err);
            bb_warm = k == 0 ? ms : bb_warm;
        }
    }
    double *times = calloc((size_t)o->repeats * MAX_CANDIDATES, sizeof(double));
    if (times == NULL && st == SIM_OK) {
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for timings");
    }
    for (int r = 0; r < o->repeats && st == SIM_OK; ++r) {
        for (int q = 0; q < map_count && st == SIM_OK; ++q) {
            const int k = (q + r) % map_count; /* rotated: drift hits every map alike */
            st = one_frame(&cands[k], &initial, triplets, &times[k * o->repeats + r], err);
        }
    }
    if (st != SIM_OK) {
        free(times);
        destroy_all(cands, map_count);
        sim_state_free(&initial);
        return st;
    }
    *slow = bb_warm > SLOW_STEP_MS;

    const uint64_t interactions = sim_choose(n_bodies, triplets ? 3 : 2);
    const double instr = triplets ? APP_BENCH_TRIPLE_INSTR : APP_BENCH_PAIR_INSTR;
    const double ceiling = app_bench_issue_rate(dev) / instr;
    app_stats stats[MAX_CANDIDATES] = {0};
    for (int k = 0; k < map_count; ++k) {
        stats[k] = app_stats_of(&times[k * o->repeats], o->repeats);
    }
    free(times);
    printf("%4u %7u %10.4f", tile, n_bodies, stats[0].median);
    double best_rate = 0.0;
    int best = 0;
    for (int k = 0; k < map_count; ++k) {
        const double I = app_bench_improvement(stats[0].median, stats[k].median);
        const double rate =
            stats[k].median > 0 ? (double)interactions / (stats[k].median * 1e-3) : 0.0;
        if (rate > best_rate) {
            best_rate = rate;
            best = k;
        }
        const char *name = candidate_name(triplets, cands[k].map);
        const int paper = candidate_paper(triplets, cands[k].map);
        if (k > 0) {
            const int width = (int)(strlen(name) + (paper ? 1 : 0));
            printf(" %*.3f", width > 6 ? width : 6, I);
        }
        const sim_frame_timing *t = &cands[k].last;
        app_csv_str(csv, dev->name);
        app_csv_str(csv, triplets ? "triplets" : "pairs");
        app_csv_str(csv, name);
        app_csv_int(csv, paper);
        app_csv_int(csv, tile);
        app_csv_int(csv, n_bodies);
        app_csv_int(csv, (n_bodies + tile - 1) / tile);
        app_csv_u64(csv, triplets ? t->triplet_blocks : t->pair_blocks);
        app_csv_u64(csv, triplets ? t->triplet_blocks_wasted : t->pair_blocks_wasted);
        app_csv_int(csv, o->repeats);
        app_csv_num(csv, stats[k].median);
        app_csv_num(csv, stats[k].min);
        app_csv_num(csv, stats[k].max);
        app_csv_num(csv, I);
        app_csv_u64(csv, interactions);
        app_csv_num(csv, rate);
        app_csv_num(csv, instr);
        app_csv_num(csv, rate * instr * 1e-9);
        app_csv_num(csv, ceiling > 0 ? rate / ceiling : 0.0);
        app_csv_end_row(csv);
        tally->rows++;
    }
    if (triplets) { /* the kernel's instructions per triple and the share of issue they take */
        printf("   %.3g/s (%s, %.1f instr/triple: %.0f%% of the issue rate)\n", best_rate,
               candidate_name(triplets, cands[best].map), instr,
               ceiling > 0 ? 100.0 * best_rate / ceiling : 0.0);
    } else {
        printf("   %.3g/s (%s, %.0f%% of ceiling)\n", best_rate,
               candidate_name(triplets, cands[best].map),
               ceiling > 0 ? 100.0 * best_rate / ceiling : 0.0);
    }
    fflush(stdout);
    destroy_all(cands, map_count);
    sim_state_free(&initial);
    return SIM_OK;
}

sim_status app_bench_sim_suite(const app_bench_options *o, int triplets, const sim_device_info *dev,
                               const char *dir, app_bench_tally *tally, sim_error *err) {
    int maps[MAX_CANDIDATES], map_count = 0;
    if (triplets) {
        for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
            if (o->triplet_maps & (1u << m)) {
                maps[map_count++] = m;
            }
        }
    } else {
        for (int m = 0; m <= SIM_PAIR_FULL && map_count < MAX_CANDIDATES; ++m) {
            if (o->pair_maps & (1u << m)) {
                maps[map_count++] = m;
            }
        }
    }
    if (map_count == 0) {
        printf("\n== %s: no map selected for this suite\n", triplets ? "triplets" : "pairs");
        return SIM_OK;
    }
    uint32_t sizes[APP_BENCH_MAX_LIST], tiles[APP_BENCH_MAX_LIST];
    int n_sizes = 0, n_tiles = 0;
    if (o->n_count > 0) {
        memcpy(sizes, o->n, sizeof(uint32_t) * (size_t)o->n_count);
        n_sizes = o->n_count;
    } else {
        const uint32_t *src = triplets ? (o->quick ? k_triplets_n_quick : k_triplets_n)
                                       : (o->quick ? k_pairs_n_quick : k_pairs_n);
        n_sizes = triplets ? (o->quick ? 2 : 5) : (o->quick ? 2 : 4);
        memcpy(sizes, src, sizeof(uint32_t) * (size_t)n_sizes);
    }
    n_sizes = app_bench_sort_sizes(sizes, n_sizes);
    for (int i = 0; i < o->tile_count; ++i) {
        if (o->tile[i] == 32 || o->tile[i] == 64 || o->tile[i] == 128) {
            tiles[n_tiles++] = o->tile[i];
        }
    }
    if (o->tile_count == 0) {
        if (o->quick) {
            tiles[n_tiles++] = triplets ? 32 : 64;
        } else {
            memcpy(tiles, k_tiles, sizeof k_tiles);
            n_tiles = 3;
        }
    }
    if (n_tiles == 0) {
        printf("\n== %s: no tile size applies (32, 64 or 128)\n", triplets ? "triplets" : "pairs");
        return SIM_OK;
    }

    char path[APP_BENCH_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s.csv", dir, triplets ? "triplets" : "pairs");
    app_csv csv;
    SIM_TRY(app_csv_open(&csv, path, k_header, HEADER_COLUMNS, err));
    printf("\n== %s: %s kernel of one step through the CUDA backend, gas scene (seed %llu); "
           "I = t_bb / t_map; best = unique %s per second\n",
           triplets ? "triplets" : "pairs", triplets ? "ATM triplet" : "contact pair",
           (unsigned long long)o->seed, triplets ? "triples" : "pairs");
    if (triplets) {
        const double issue = app_bench_issue_rate(dev);
        printf("   the kernel issues %.1f instructions per triple (counted in its SASS, "
               "bench/README.md): issue ceiling %.3g triples/s\n",
               APP_BENCH_TRIPLE_INSTR, issue > 0 ? issue / APP_BENCH_TRIPLE_INSTR : 0.0);
    }
    printf("%4s %7s %10s", "tile", "N", "bb ms");
    for (int k = 1; k < map_count; ++k) {
        const char *name = candidate_name(triplets, maps[k]);
        char label[40];
        snprintf(label, sizeof label, "%s%s", name, candidate_paper(triplets, maps[k]) ? "*" : "");
        printf(" %*s", (int)(strlen(label) > 6 ? strlen(label) : 6), label);
    }
    printf("   best\n");
    sim_status st = SIM_OK;
    for (int t = 0; t < n_tiles && st == SIM_OK; ++t) {
        for (int i = 0; i < n_sizes && st == SIM_OK; ++i) {
            int slow = 0;
            st = run_row(o, triplets, dev, maps, map_count, tiles[t], sizes[i], &csv, tally, &slow,
                         err);
            if (st == SIM_OK && slow && o->n_count == 0 && i + 1 < n_sizes) {
                printf("  tile %u: larger N left out (one bb step took over %.0f ms; "
                       "--n forces them)\n",
                       tiles[t], SLOW_STEP_MS);
                tally->skipped += n_sizes - i - 1;
                break;
            }
        }
    }
    if (st != SIM_OK) {
        app_csv_abort(&csv);
        return st;
    }
    return app_csv_close(&csv, err);
}
