/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench maps`: the papers' micro-benchmarks (map only, accumulate, EDM 1-4)
 * under every 2-D and 3-D map, over N and rho. One row = (dim, kernel, rho, N); every map of a
 * row is timed in the same run, interleaved per repeat. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_csv.h"
#include "bench_stats.h"
#include "bench_suites.h"

/* Default sweeps. 2-D follows the papers' N in [1024, 30720]; 3-D stops where the N^3 counters
 * take 4 GiB. --quick is for tests: seconds on any GPU. */
static const uint32_t k_n2[] = {1024, 2048, 4096, 8192, 16384, 24576, 32768};
static const uint32_t k_n3[] = {64, 128, 256, 384, 512, 768, 1024};
static const uint32_t k_n2_quick[] = {512, 1024};
static const uint32_t k_n3_quick[] = {32, 64};
static const uint32_t k_rho2[] = {8, 16, 32};
static const uint32_t k_rho3[] = {4, 8};

/* Each timed region lasts at least this long; shorter runs are repeated inside it. */
#define TARGET_REGION_MS 0.25
#define MAX_INNER 1000

#define MAX_MAPS 16

int app_bench_sort_sizes(uint32_t *v, int count) {
    for (int i = 1; i < count; ++i) { /* insertion sort: lists are short */
        const uint32_t x = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > x; --j) {
            v[j + 1] = v[j];
        }
        v[j + 1] = x;
    }
    int out = 0;
    for (int i = 0; i < count; ++i) {
        if (out == 0 || v[out - 1] != v[i]) {
            v[out++] = v[i];
        }
    }
    return out;
}

int app_bench_sizes(const app_bench_options *o, const uint32_t *defaults, int count,
                    uint32_t *sizes) {
    if (o->n_count > 0) {
        count = o->n_count;
        defaults = o->n;
    }
    memcpy(sizes, defaults, sizeof(uint32_t) * (size_t)count);
    return app_bench_sort_sizes(sizes, count);
}

typedef struct {
    int dim;
    int maps[MAX_MAPS];
    int map_count;
    sim_map_plan plans[MAX_MAPS];
    int plan_ok[MAX_MAPS];
    uint64_t wrong[MAX_MAPS]; /* from the accumulate check of this (rho, N) */
    int checked;
} map_row_set;

static const char *map_name(int dim, int m) {
    return dim == 2 ? sim_pair_map_name((sim_pair_map)m) : sim_triplet_map_name((sim_triplet_map)m);
}

static int map_is_paper(int dim, int m) {
    return dim == 2 ? sim_pair_map_is_paper_float((sim_pair_map)m)
                    : sim_triplet_map_is_paper_float((sim_triplet_map)m);
}

static const char *const k_header[] = {"gpu",          "dim",
                                       "kernel",       "features",
                                       "map",          "paper_float",
                                       "eval",         "rho",
                                       "threads",      "N",
                                       "tiles",        "launches",
                                       "blocks",       "wasted_blocks",
                                       "inner",        "repeats",
                                       "median_ms",    "min_ms",
                                       "max_ms",       "I",
                                       "interactions", "interactions_per_s",
                                       "check"};
#define HEADER_COLUMNS ((int)(sizeof k_header / sizeof k_header[0]))

/* How a candidate evaluates its map: every thread (the papers' way), once per block, or every
 * thread with the plan's grid transposed at launch (bench_map_kernels.cu: block order). */
static const char *eval_name(const sim_bench_case *c) {
    return c->transposed ? "thread-t" : c->per_block ? "block" : "thread";
}

static int eval_mode(const sim_bench_case *c) {
    return c->transposed ? 2 : c->per_block ? 1 : 0;
}

static int label_width(int dim, int m) {
    const int len = (int)strlen(map_name(dim, m)) + (map_is_paper(dim, m) ? 1 : 0);
    return len > 6 ? len : 6;
}

static void print_table_header(int dim, const map_row_set *s) {
    printf("\n== maps, %d-D: I = t_bb / t_map, bb evaluated per thread, same row; eval: thread = "
           "every thread evaluates the map (papers), block = once per block, thread-t = per "
           "thread with the grid transposed (blocks dispatched in the other order); * paper "
           "float variant; ! failed its check; - not run\n",
           dim);
    printf("%-6s %-8s %3s %6s %5s %9s", "kernel", "eval", "rho", "N", "tiles", "bb ms");
    for (int k = 0; k < s->map_count; ++k) {
        char label[40];
        snprintf(label, sizeof label, "%s%s", map_name(dim, s->maps[k]),
                 map_is_paper(dim, s->maps[k]) ? "*" : "");
        printf(" %*s", label_width(dim, s->maps[k]), label);
    }
    printf("\n");
}

static int kernel_features(int k) {
    return k >= APP_BENCH_K_EDM1 ? k - APP_BENCH_K_EDM1 + 1 : 0;
}

static sim_bench_kernel kernel_kind(int k) {
    return k == APP_BENCH_K_MAP     ? SIM_BENCH_MAP
           : k == APP_BENCH_K_ACCUM ? SIM_BENCH_ACCUM
                                    : SIM_BENCH_EDM;
}

/* A row's candidates: (map, eval) pairs; candidate 0 is bb evaluated per thread, the baseline. */
#define MAX_CANDIDATES (3 * MAX_MAPS)

typedef struct {
    sim_bench_case c[MAX_CANDIDATES];
    int set_index[MAX_CANDIDATES]; /* index into map_row_set's maps/plans */
    int runs[MAX_CANDIDATES];      /* the plan exists and the case can run at this size */
    uint64_t wrong[MAX_CANDIDATES];
    sim_stats stats[MAX_CANDIDATES];
    int count;
} candidates;

static void add_candidate(candidates *cand, const map_row_set *s, int k, int kernel, uint32_t rho,
                          int per_block, int transposed) {
    const int n = cand->count++;
    cand->c[n] = (sim_bench_case){s->dim, s->maps[k], kernel_kind(kernel), kernel_features(kernel),
                                  rho,    per_block,  transposed};
    cand->set_index[n] = k;
    cand->runs[n] = s->plan_ok[k] && (!transposed || sim_bench_can_transpose(&s->plans[k]));
}

static void list_candidates(const app_bench_options *o, const map_row_set *s, int kernel,
                            uint32_t rho, candidates *cand) {
    cand->count = 0;
    add_candidate(cand, s, 0, kernel, rho, 0, 0); /* bb per thread: the baseline, always timed */
    for (int k = 1; k < s->map_count && (o->evals & APP_BENCH_EVAL_THREAD); ++k) {
        add_candidate(cand, s, k, kernel, rho, 0, 0);
    }
    for (int k = 0; k < s->map_count && (o->evals & APP_BENCH_EVAL_BLOCK); ++k) {
        add_candidate(cand, s, k, kernel, rho, 1, 0);
    }
    /* The other block order, per thread: for maps whose grid walks the matrix column by column
     * (rb, rm) it is the row-by-row walk that read-modify-write kernels want, and vice versa. */
    for (int k = 0; k < s->map_count && (o->evals & APP_BENCH_EVAL_THREAD); ++k) {
        add_candidate(cand, s, k, kernel, rho, 0, 1);
    }
}

/* Warm-up, the inner count (from the fastest candidate), then the interleaved repeats. */
static sim_status measure(const app_bench_options *o, sim_bench_domain *d, const map_row_set *s,
                          candidates *cand, int *inner_out, sim_error *err) {
    const int n = cand->count;
    double fastest = 1e30;
    for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); ++w) {
        for (int k = 0; k < n; ++k) {
            if (cand->runs[k]) {
                SIM_TRY(
                    sim_bench_enqueue(d, &cand->c[k], &s->plans[cand->set_index[k]], 1, k, err));
            }
        }
        for (int k = 0; k < n; ++k) {
            double ms = 0.0;
            if (cand->runs[k]) {
                SIM_TRY(sim_bench_collect(d, k, 1, &ms, err));
                fastest = ms < fastest ? ms : fastest;
            }
        }
    }
    int inner = 1;
    if (fastest > 0.0 && fastest < TARGET_REGION_MS) {
        inner = (int)ceil(TARGET_REGION_MS / fastest);
        inner = inner > MAX_INNER ? MAX_INNER : inner;
    }
    *inner_out = inner;
    double *times = calloc((size_t)o->repeats * MAX_CANDIDATES, sizeof(double));
    if (times == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for timings");
    }
    sim_status st = SIM_OK;
    for (int r = 0; r < o->repeats && st == SIM_OK; ++r) {
        /* Rotate the order each repeat so that clock or thermal drift hits every map alike. */
        for (int q = 0; q < n && st == SIM_OK; ++q) {
            const int k = (q + r) % n;
            if (cand->runs[k]) {
                st =
                    sim_bench_enqueue(d, &cand->c[k], &s->plans[cand->set_index[k]], inner, k, err);
            }
        }
        for (int k = 0; k < n && st == SIM_OK; ++k) {
            if (cand->runs[k]) {
                st = sim_bench_collect(d, k, inner, &times[k * o->repeats + r], err);
            }
        }
    }
    for (int k = 0; k < n; ++k) {
        cand->stats[k] = sim_stats_of(&times[k * o->repeats], o->repeats);
    }
    free(times);
    return st;
}

/* Times one row (dim, kernel, rho, N) and writes its CSV rows and table lines. */
static sim_status time_row(const app_bench_options *o, const sim_device_info *dev,
                           sim_bench_domain *d, map_row_set *s, int kernel, uint32_t rho,
                           uint32_t n_elems, app_csv *csv, app_bench_tally *tally, sim_error *err) {
    const int dim = s->dim;
    candidates *cand = calloc(1, sizeof *cand);
    if (cand == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for candidates");
    }
    list_candidates(o, s, kernel, rho, cand);
    sim_status st = SIM_OK;
    for (int k = 0; k < cand->count && st == SIM_OK; ++k) {
        const int m = cand->set_index[k];
        cand->wrong[k] = s->checked ? s->wrong[m] : 0;
        /* The accumulate check covers the map; EDM, per-block and transposed rows check
         * themselves too. */
        const sim_bench_case *c = &cand->c[k];
        if (cand->runs[k] && (c->kernel == SIM_BENCH_EDM ||
                              ((c->per_block || c->transposed) && c->kernel != SIM_BENCH_MAP))) {
            uint64_t w = 0;
            st = sim_bench_verify(d, &cand->c[k], &s->plans[m], &w, err);
            cand->wrong[k] += w;
        }
    }
    int inner = 1;
    if (st == SIM_OK) {
        st = measure(o, d, s, cand, &inner, err);
    }
    if (st != SIM_OK) {
        free(cand);
        return st;
    }
    const uint32_t tiles = (n_elems + rho - 1) / rho;
    const uint64_t interactions = sim_choose(n_elems, dim);
    const double t_bb = cand->stats[0].median;
    int line_eval = -1;
    for (int k = 0; k < cand->count; ++k) {
        const sim_bench_case *c = &cand->c[k];
        const int m = cand->set_index[k];
        const int paper = map_is_paper(dim, c->map);
        const double I = app_bench_improvement(t_bb, cand->stats[k].median);
        char check[32] = "-";
        if (cand->runs[k] && (s->checked || c->kernel != SIM_BENCH_MAP)) {
            if (cand->wrong[k] == 0) {
                snprintf(check, sizeof check, "ok");
            } else {
                snprintf(check, sizeof check, "FAIL:%llu", (unsigned long long)cand->wrong[k]);
                *(paper ? &tally->paper_failures : &tally->exact_failures) += 1;
            }
        }
        if (eval_mode(c) != line_eval) { /* one table line per evaluation mode */
            if (line_eval >= 0) {
                printf("\n");
            }
            line_eval = eval_mode(c);
            printf("%-6s %-8s %3u %6u %5u %9.4f", app_bench_kernel_name(kernel), eval_name(c), rho,
                   n_elems, tiles, t_bb);
        }
        const int width = label_width(dim, c->map);
        if (!cand->runs[k]) {
            printf(" %*s", width, "-");
            continue;
        }
        printf(" %*.3f%s", width - (cand->wrong[k] ? 1 : 0), I, cand->wrong[k] ? "!" : "");
        const sim_map_plan *p = &s->plans[m];
        app_csv_str(csv, dev->name);
        app_csv_int(csv, dim);
        app_csv_str(csv, app_bench_kernel_name(kernel));
        app_csv_int(csv, c->features);
        app_csv_str(csv, map_name(dim, c->map));
        app_csv_int(csv, paper);
        app_csv_str(csv, eval_name(c));
        app_csv_int(csv, rho);
        app_csv_int(csv, dim == 2 ? rho * rho : rho * rho * rho);
        app_csv_int(csv, n_elems);
        app_csv_int(csv, tiles);
        app_csv_int(csv, p->launch_count);
        app_csv_u64(csv, p->blocks);
        app_csv_u64(csv, p->blocks - p->useful);
        app_csv_int(csv, inner);
        app_csv_int(csv, o->repeats);
        app_csv_num(csv, cand->stats[k].median);
        app_csv_num(csv, cand->stats[k].min);
        app_csv_num(csv, cand->stats[k].max);
        app_csv_num(csv, I);
        app_csv_u64(csv, interactions);
        app_csv_num(csv, cand->stats[k].median > 0
                             ? (double)interactions / (cand->stats[k].median * 1e-3)
                             : 0.0);
        app_csv_str(csv, check);
        app_csv_end_row(csv);
        tally->rows++;
    }
    printf("\n");
    fflush(stdout);
    free(cand);
    return SIM_OK;
}

/* All rows of one (dim, rho, N): domain, plans, the exactly-once check, then each kernel. */
static sim_status run_size(const app_bench_options *o, const sim_device_info *dev, map_row_set *s,
                           uint32_t rho, uint32_t n_elems, app_csv *csv, app_bench_tally *tally,
                           sim_error *err) {
    const int dim = s->dim;
    const uint32_t tiles = (n_elems + rho - 1) / rho;
    const int with_matrix = (o->kernels & ~(1u << APP_BENCH_K_MAP)) != 0;
    for (int k = 0; k < s->map_count; ++k) {
        sim_error plan_err = {0};
        const sim_status ps =
            dim == 2
                ? sim_pair_map_plan((sim_pair_map)s->maps[k], tiles, &s->plans[k], &plan_err)
                : sim_triplet_map_plan((sim_triplet_map)s->maps[k], tiles, &s->plans[k], &plan_err);
        s->plan_ok[k] = ps == SIM_OK;
        if (ps != SIM_OK) {
            if (k == 0) {
                printf("  %d-D rho %u N %u: skipped: %s\n", dim, rho, n_elems, plan_err.message);
                tally->skipped++;
                return SIM_OK;
            }
            printf("  %d-D rho %u N %u: map %s left out: %s\n", dim, rho, n_elems,
                   map_name(dim, s->maps[k]), plan_err.message);
        }
    }
    sim_bench_domain *d = NULL;
    sim_error dom_err = {0};
    const sim_status ds = sim_bench_domain_create(dim, n_elems, with_matrix, &d, &dom_err);
    if (ds == SIM_OUT_OF_MEMORY || ds == SIM_BAD_ARGUMENT) {
        printf("  %d-D rho %u N %u: skipped: %s\n", dim, rho, n_elems, dom_err.message);
        tally->skipped++;
        return SIM_OK;
    }
    if (ds != SIM_OK) {
        *err = dom_err;
        return ds;
    }
    sim_status st = SIM_OK;
    /* Exactly once, per map: one accumulate pass must leave every counter of the simplex at 1
     * and everything else at 0. The map-only rows of this size report this check too. */
    s->checked = with_matrix;
    for (int k = 0; k < s->map_count && with_matrix && st == SIM_OK; ++k) {
        s->wrong[k] = 0;
        if (s->plan_ok[k]) {
            const sim_bench_case c = {dim, s->maps[k], SIM_BENCH_ACCUM, 0, rho, 0, 0};
            st = sim_bench_verify(d, &c, &s->plans[k], &s->wrong[k], err);
        }
    }
    for (int kernel = 0; kernel < APP_BENCH_K_COUNT && st == SIM_OK; ++kernel) {
        if (o->kernels & (1u << kernel)) {
            st = time_row(o, dev, d, s, kernel, rho, n_elems, csv, tally, err);
        }
    }
    sim_bench_domain_destroy(d);
    return st;
}

sim_status app_bench_maps_suite(const app_bench_options *o, const sim_device_info *dev,
                                const char *dir, app_bench_tally *tally, sim_error *err) {
    char path[APP_BENCH_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/maps.csv", dir);
    app_csv csv;
    SIM_TRY(app_csv_open(&csv, path, k_header, HEADER_COLUMNS, err));
    sim_status st = SIM_OK;
    for (int dim = 2; dim <= 3 && st == SIM_OK; ++dim) {
        map_row_set *s = calloc(1, sizeof *s);
        if (s == NULL) {
            st = sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for map plans");
            break;
        }
        s->dim = dim;
        const unsigned mask = dim == 2 ? o->pair_maps : o->triplet_maps;
        const int count = dim == 2 ? (int)SIM_PAIR_MAP_COUNT : (int)SIM_TRIPLET_MAP_COUNT;
        for (int m = 0; m < count && s->map_count < MAX_MAPS; ++m) { /* bb (0) comes first */
            if (mask & (1u << m)) {
                s->maps[s->map_count++] = m;
            }
        }
        if (!(o->dims & (1u << dim)) || s->map_count == 0) {
            free(s);
            continue;
        }
        /* Sizes and block sides for this dimension: the options' values that apply to it. */
        uint32_t sizes[APP_BENCH_MAX_LIST], rhos[APP_BENCH_MAX_LIST];
        int n_sizes = 0, n_rhos = 0;
        const uint32_t max_n = dim == 2 ? SIM_BENCH_MAX_N_2D : SIM_BENCH_MAX_N_3D;
        if (o->n_count > 0) {
            for (int i = 0; i < o->n_count; ++i) {
                if (o->n[i] <= max_n) {
                    sizes[n_sizes++] = o->n[i];
                } else {
                    printf("  %d-D: N = %u left out (at most %u)\n", dim, o->n[i], max_n);
                    tally->skipped++;
                }
            }
        } else {
            const uint32_t *src =
                dim == 2 ? (o->quick ? k_n2_quick : k_n2) : (o->quick ? k_n3_quick : k_n3);
            const int len = dim == 2 ? (o->quick ? 2 : 7) : (o->quick ? 2 : 7);
            memcpy(sizes, src, sizeof(uint32_t) * (size_t)len);
            n_sizes = len;
        }
        if (o->tile_count > 0) {
            for (int i = 0; i < o->tile_count; ++i) {
                const uint32_t t = o->tile[i];
                if ((dim == 2 && t >= 4 && t <= 32) || (dim == 3 && (t == 4 || t == 8))) {
                    rhos[n_rhos++] = t;
                }
            }
        } else if (o->quick) {
            rhos[n_rhos++] = dim == 2 ? 16 : 4;
        } else {
            n_rhos = dim == 2 ? 3 : 2;
            memcpy(rhos, dim == 2 ? k_rho2 : k_rho3, sizeof(uint32_t) * (size_t)n_rhos);
        }
        n_sizes = app_bench_sort_sizes(sizes, n_sizes);
        if (n_rhos == 0 || n_sizes == 0) {
            printf("  %d-D: no size or block side applies (rho: 2-D 4..32, 3-D 4 or 8)\n", dim);
            free(s);
            continue;
        }
        print_table_header(dim, s);
        for (int r = 0; r < n_rhos && st == SIM_OK; ++r) {
            for (int i = 0; i < n_sizes && st == SIM_OK; ++i) {
                st = run_size(o, dev, s, rhos[r], sizes[i], &csv, tally, err);
            }
        }
        free(s);
    }
    return app_csv_finish(&csv, st, err);
}
