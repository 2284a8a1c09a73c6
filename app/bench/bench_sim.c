/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench pairs` / `nbsim bench triplets`: the simulation kernels through the CUDA
 * backend under every map (and the nbody-style `full` sweep for pairs), over N and tile size,
 * on the built-in gas scene with a fixed seed. Times are the backend's CUDA-event pair_ms /
 * triplet_ms of one step, every tile pair swept (culling off). Every frame starts from the same
 * initial state, so each map does exactly the same work (same contacts) in every repeat.
 *
 * The pairs suite then times the culled pipeline (pairs_culled.csv): per map, the culling pass
 * the map places (cull_ms: tile boxes and the pass or passes) and the whole contact step, sort
 * amortised over sim_cull_sort_every_default() steps (50) + cull + the sweep of the interacting
 * tile pairs. A frame is two steps from the initial state with a sort every step, so the second
 * step sorts and its sort is timed too. */
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

static const uint32_t k_pairs_n[] = {4096, 16384, 65536, 131072};
static const uint32_t k_pairs_n_quick[] = {1024, 2048};
static const uint32_t k_triplets_n[] = {256, 512, 1024, 2048, 4096};
static const uint32_t k_triplets_n_quick[] = {128, 256};
static const uint32_t k_tiles[] = {32, 64, 128};
static const uint32_t k_cull_n[] = {65536, 262144, 1048576};
static const uint32_t k_cull_n_quick[] = {1024, 2048};

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

/* A row left out (no scene, or a backend refused: memory, limits), with a line saying why. */
static sim_status skip_row(uint32_t tile, uint32_t n_bodies, const char *why,
                           app_bench_tally *tally) {
    printf("  tile %u N %u: skipped: %s\n", tile, n_bodies, why);
    tally->skipped++;
    return SIM_OK;
}

/* The gas scene of a row (the suite's seed); 0 when the row is skipped (nothing to free). */
static int row_scene(const app_bench_options *o, uint32_t tile, uint32_t n_bodies,
                     sim_params *params, sim_state *initial, app_bench_tally *tally) {
    *params = sim_params_default();
    sim_error scene_err = {0};
    if (sim_scene_builtin("gas", n_bodies, o->seed, params, initial, &scene_err) != SIM_OK) {
        sim_state_free(initial);
        skip_row(tile, n_bodies, scene_err.message, tally);
        return 0;
    }
    return 1;
}

/* One CUDA backend per map from `base`, with the map as its triplet or pair map; stops at the
 * first that fails (cands zeroed first, so destroy_all frees what was made). */
static sim_status make_candidates(const sim_backend_config *base, int triplets, const int *maps,
                                  int map_count, const sim_params *params, const sim_state *initial,
                                  candidate *cands, sim_error *err) {
    memset(cands, 0, MAX_CANDIDATES * sizeof *cands);
    sim_status st = SIM_OK;
    for (int k = 0; k < map_count && st == SIM_OK; ++k) {
        sim_backend_config cfg = *base;
        if (triplets) {
            cfg.triplet_map = (sim_triplet_map)maps[k];
        } else {
            cfg.pair_map = maps[k];
        }
        cands[k].map = maps[k];
        st = sim_backend_create(&cfg, params, initial, &cands[k].backend, err);
    }
    return st;
}

/* One row (tile, N). *slow is set when the bb step was slower than SLOW_STEP_MS. */
static sim_status run_row(const app_bench_options *o, int triplets, const sim_device_info *dev,
                          const int *maps, int map_count, uint32_t tile, uint32_t n_bodies,
                          app_csv *csv, app_bench_tally *tally, int *slow, sim_error *err) {
    sim_params params;
    sim_state initial = {0};
    if (!row_scene(o, tile, n_bodies, &params, &initial, tally)) {
        return SIM_OK;
    }
    params.triplets = triplets;
    params.steps_per_frame = 1;

    sim_backend_config base = sim_backend_config_default();
    base.kind = SIM_BACKEND_CUDA;
    base.tile = tile;
    base.cull = 0; /* every tile pair swept: the maps place the contact blocks */
    candidate cands[MAX_CANDIDATES];
    sim_status st =
        make_candidates(&base, triplets, maps, map_count, &params, &initial, cands, err);
    if (st == SIM_OUT_OF_MEMORY || st == SIM_BAD_ARGUMENT) {
        destroy_all(cands, map_count);
        sim_state_free(&initial);
        return skip_row(tile, n_bodies, err->message, tally);
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
    sim_stats stats[MAX_CANDIDATES] = {0};
    for (int k = 0; k < map_count; ++k) {
        stats[k] = sim_stats_of(&times[k * o->repeats], o->repeats);
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

/* ---- the culled pipeline ---- */

static const char *const k_cull_header[] = {"gpu",
                                            "map",
                                            "paper_float",
                                            "tile",
                                            "N",
                                            "tiles",
                                            "levels",
                                            "cull_blocks",
                                            "cull_blocks_wasted",
                                            "tile_pairs",
                                            "tile_pairs_total",
                                            "super_pairs",
                                            "repeats",
                                            "cull_median_ms",
                                            "cull_min_ms",
                                            "cull_max_ms",
                                            "I_cull",
                                            "sort_ms",
                                            "sort_every",
                                            "pair_ms",
                                            "step_median_ms",
                                            "step_min_ms",
                                            "step_max_ms",
                                            "I_step",
                                            "fallback_steps"};
#define CULL_HEADER_COLUMNS ((int)(sizeof k_cull_header / sizeof k_cull_header[0]))

enum { CULL_T_CULL, CULL_T_SORT, CULL_T_PAIR, CULL_T_STEP, CULL_T_COUNT };

/* One culled frame (two steps, the second sorts) of one candidate from the initial state: per
 * step cull and sweep times, the sort's time, the contact step with the sort amortised. */
static sim_status one_culled_frame(candidate *c, const sim_state *initial, double ms[CULL_T_COUNT],
                                   sim_error *err) {
    SIM_TRY(sim_backend_set_state(c->backend, initial, err));
    SIM_TRY(sim_backend_run_frame(c->backend, &c->last, err));
    const sim_frame_timing *t = &c->last;
    const double steps = t->steps > 0 ? t->steps : 1;
    ms[CULL_T_CULL] = t->cull_ms / steps;
    ms[CULL_T_SORT] = t->sorts > 0 ? t->sort_ms / t->sorts : 0.0;
    ms[CULL_T_PAIR] = t->pair_ms / steps;
    ms[CULL_T_STEP] =
        ms[CULL_T_SORT] / sim_cull_sort_every_default() + ms[CULL_T_CULL] + ms[CULL_T_PAIR];
    return SIM_OK;
}

/* One culled row (tile, N, levels): every map but full, interleaved per repeat as run_row. */
static sim_status run_cull_row(const app_bench_options *o, const sim_device_info *dev,
                               const int *maps, int map_count, uint32_t tile, uint32_t n_bodies,
                               int levels, app_csv *csv, app_bench_tally *tally, sim_error *err) {
    sim_params params;
    sim_state initial = {0};
    if (!row_scene(o, tile, n_bodies, &params, &initial, tally)) {
        return SIM_OK;
    }
    params.triplets = 0;
    params.steps_per_frame = 2;
    /* the maps' study of the culled tile sweep: no neighbour lists (they would run the pass the
     * map places only when rebuilt; scripts/gpu_nlist.sh times them) */
    params.skin.value = 0.0;
    params.skin.set = 1;
    sim_backend_config base = sim_backend_config_default();
    base.kind = SIM_BACKEND_CUDA;
    base.tile = tile;
    base.cull = 1;
    base.cull_levels = levels;
    base.sort_every = 1;
    candidate cands[MAX_CANDIDATES];
    sim_status st = make_candidates(&base, 0, maps, map_count, &params, &initial, cands, err);
    if (st == SIM_OUT_OF_MEMORY || st == SIM_BAD_ARGUMENT) {
        destroy_all(cands, map_count);
        sim_state_free(&initial);
        return skip_row(tile, n_bodies, err->message, tally);
    }
    double ms[CULL_T_COUNT] = {0}; /* copied below even when a frame failed (then unused) */
    for (int w = 0; w < o->warmup && st == SIM_OK; ++w) {
        for (int k = 0; k < map_count && st == SIM_OK; ++k) {
            st = one_culled_frame(&cands[k], &initial, ms, err);
        }
    }
    const size_t per = (size_t)o->repeats;
    double *times = calloc(per * MAX_CANDIDATES * CULL_T_COUNT, sizeof(double));
    if (times == NULL && st == SIM_OK) {
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for timings");
    }
    for (int r = 0; r < o->repeats && st == SIM_OK; ++r) {
        for (int q = 0; q < map_count && st == SIM_OK; ++q) {
            const int k = (q + r) % map_count;
            st = one_culled_frame(&cands[k], &initial, ms, err);
            for (int c = 0; c < CULL_T_COUNT; ++c) {
                times[((size_t)k * CULL_T_COUNT + (size_t)c) * per + (size_t)r] = ms[c];
            }
        }
    }
    if (st != SIM_OK) {
        free(times);
        destroy_all(cands, map_count);
        sim_state_free(&initial);
        return st;
    }
    sim_stats stats[MAX_CANDIDATES][CULL_T_COUNT];
    memset(stats, 0, sizeof stats);
    for (int k = 0; k < map_count; ++k) {
        for (int c = 0; c < CULL_T_COUNT; ++c) {
            stats[k][c] =
                sim_stats_of(&times[((size_t)k * CULL_T_COUNT + (size_t)c) * per], o->repeats);
        }
    }
    free(times);
    const int lv = cands[0].last.cull_levels;
    for (int line = 0; line < 2; ++line) {
        const int c = line == 0 ? CULL_T_CULL : CULL_T_STEP;
        printf("%4u %8u %2d %-5s %9.4f", tile, n_bodies, lv, line == 0 ? "cull" : "step",
               stats[0][c].median);
        for (int k = 1; k < map_count; ++k) {
            const char *name = candidate_name(0, cands[k].map);
            const int width = (int)(strlen(name) + (candidate_paper(0, cands[k].map) ? 1 : 0));
            printf(" %*.3f", width > 6 ? width : 6,
                   app_bench_improvement(stats[0][c].median, stats[k][c].median));
        }
        if (line == 0) {
            printf("   %llu of %llu tile pairs\n", (unsigned long long)cands[0].last.tile_pairs,
                   (unsigned long long)cands[0].last.tile_pairs_total);
        } else {
            printf("   sort %.3f ms / %d steps, sweep %.3f ms\n", stats[0][CULL_T_SORT].median,
                   sim_cull_sort_every_default(), stats[0][CULL_T_PAIR].median);
        }
    }
    fflush(stdout);
    for (int k = 0; k < map_count; ++k) {
        const sim_frame_timing *t = &cands[k].last;
        app_csv_str(csv, dev->name);
        app_csv_str(csv, candidate_name(0, cands[k].map));
        app_csv_int(csv, candidate_paper(0, cands[k].map));
        app_csv_int(csv, tile);
        app_csv_int(csv, n_bodies);
        app_csv_int(csv, (n_bodies + tile - 1) / tile);
        app_csv_int(csv, t->cull_levels);
        app_csv_u64(csv, t->cull_blocks);
        app_csv_u64(csv, t->cull_blocks_wasted);
        app_csv_u64(csv, t->tile_pairs);
        app_csv_u64(csv, t->tile_pairs_total);
        app_csv_u64(csv, t->super_pairs);
        app_csv_int(csv, o->repeats);
        app_csv_num(csv, stats[k][CULL_T_CULL].median);
        app_csv_num(csv, stats[k][CULL_T_CULL].min);
        app_csv_num(csv, stats[k][CULL_T_CULL].max);
        app_csv_num(
            csv, app_bench_improvement(stats[0][CULL_T_CULL].median, stats[k][CULL_T_CULL].median));
        app_csv_num(csv, stats[k][CULL_T_SORT].median);
        app_csv_int(csv, sim_cull_sort_every_default());
        app_csv_num(csv, stats[k][CULL_T_PAIR].median);
        app_csv_num(csv, stats[k][CULL_T_STEP].median);
        app_csv_num(csv, stats[k][CULL_T_STEP].min);
        app_csv_num(csv, stats[k][CULL_T_STEP].max);
        app_csv_num(
            csv, app_bench_improvement(stats[0][CULL_T_STEP].median, stats[k][CULL_T_STEP].median));
        app_csv_int(csv, t->cull_fallback_steps);
        app_csv_end_row(csv);
        tally->rows++;
    }
    destroy_all(cands, map_count);
    sim_state_free(&initial);
    return SIM_OK;
}

/* The culled rows of the pairs suite: every selected map except full, bb first (I needs it). */
static sim_status cull_suite(const app_bench_options *o, const sim_device_info *dev,
                             const char *dir, const uint32_t *tiles, int n_tiles,
                             app_bench_tally *tally, sim_error *err) {
    int maps[MAX_CANDIDATES], map_count = 0;
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        if (o->pair_maps & (1u << m)) {
            maps[map_count++] = m;
        }
    }
    if (map_count == 0) {
        return SIM_OK;
    }
    uint32_t sizes[APP_BENCH_MAX_LIST];
    const int n_sizes =
        app_bench_sizes(o, o->quick ? k_cull_n_quick : k_cull_n, o->quick ? 2 : 3, sizes);
    char path[APP_BENCH_PATH_MAX + 24];
    snprintf(path, sizeof path, "%s/pairs_culled.csv", dir);
    app_csv csv;
    SIM_TRY(app_csv_open(&csv, path, k_cull_header, CULL_HEADER_COLUMNS, err));
    printf("\n== pairs, culled: only the tile pairs whose bounding boxes overlap are swept; "
           "cull = tile boxes + the culling pass(es) the map places, step = sort / %d + cull + "
           "sweep; ms per step for bb, I = t_bb / t_map for the others\n",
           sim_cull_sort_every_default());
    printf("%4s %8s %2s %-5s %9s", "tile", "N", "lv", "", "bb ms");
    for (int k = 1; k < map_count; ++k) {
        const char *name = candidate_name(0, maps[k]);
        char label[40];
        snprintf(label, sizeof label, "%s%s", name, candidate_paper(0, maps[k]) ? "*" : "");
        printf(" %*s", (int)(strlen(label) > 6 ? strlen(label) : 6), label);
    }
    printf("\n");
    sim_status st = SIM_OK;
    for (int t = 0; t < n_tiles && st == SIM_OK; ++t) {
        for (int i = 0; i < n_sizes && st == SIM_OK; ++i) {
            for (int levels = 1; levels <= 2 && st == SIM_OK; ++levels) {
                const unsigned bit = levels == 1 ? APP_BENCH_CULL_ONE : APP_BENCH_CULL_TWO;
                if (o->cull & bit) {
                    st = run_cull_row(o, dev, maps, map_count, tiles[t], sizes[i], levels, &csv,
                                      tally, err);
                }
            }
        }
    }
    return app_csv_finish(&csv, st, err);
}

sim_status app_bench_sim_suite(const app_bench_options *o, int triplets, const sim_device_info *dev,
                               const char *dir, app_bench_tally *tally, sim_error *err) {
    if (triplets && o->atm_cutoff > 0.0) { /* the culled cut-off instead of the maps */
        return app_bench_tcull_suite(o, dev, dir, tally, err);
    }
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
    const uint32_t *defaults = triplets ? (o->quick ? k_triplets_n_quick : k_triplets_n)
                                        : (o->quick ? k_pairs_n_quick : k_pairs_n);
    const int n_sizes =
        app_bench_sizes(o, defaults, triplets ? (o->quick ? 2 : 5) : (o->quick ? 2 : 4), sizes);
    int n_tiles = 0;
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
    if (!triplets && !(o->cull & APP_BENCH_CULL_OFF)) {
        return cull_suite(o, dev, dir, tiles, n_tiles, tally, err);
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
    SIM_TRY(app_csv_finish(&csv, st, err));
    if (!triplets && (o->cull & (APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO))) {
        return cull_suite(o, dev, dir, tiles, n_tiles, tally, err);
    }
    return SIM_OK;
}
