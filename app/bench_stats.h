/* SPDX-License-Identifier: MIT
 * nbsim — small pure helpers of `nbsim bench`: summary statistics of repeated timings, exact
 * interaction counts, list parsing and the GPU-name slug used for result folders. */
#ifndef APP_BENCH_STATS_H
#define APP_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "sim_base.h"

/* Propagates a sim_status from a call that already filled `err`. */
#define APP_BENCH_TRY(expr)                                                                        \
    do {                                                                                           \
        const sim_status app_bench_try_s_ = (expr);                                                \
        if (app_bench_try_s_ != SIM_OK) {                                                          \
            return app_bench_try_s_;                                                               \
        }                                                                                          \
    } while (0)

/* Median (mean of the two middle values for an even count), min and max of count >= 1 values;
 * count == 0 gives all zeros. The input is not reordered. */
typedef struct {
    double median, min, max;
} app_bench_stats;

app_bench_stats app_bench_summarize(const double *values, int count);

/* I = t_BB / t_map; 0 when either time is not positive. */
double app_bench_improvement(double t_bb, double t_map);

/* Unique pairs N(N-1)/2 (k = 2) or triples N(N-1)(N-2)/6 (k = 3), exact in 64 bits
 * (saturates at UINT64_MAX). */
uint64_t app_bench_choose(uint64_t n, int k);

/* "1024,2048,4096" -> out[]; every value in [lo, hi], at most cap of them, no empty items.
 * Returns the count, or -1 when the text is malformed or a value is out of range. */
int app_bench_parse_list(const char *text, uint32_t lo, uint32_t hi, uint32_t *out, int cap);

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": lower-case letters and digits, runs of
 * anything else become one '-', no leading/trailing '-'; "gpu" when nothing is left. */
void app_bench_slug(const char *name, char *out, size_t cap);

#endif /* APP_BENCH_STATS_H */
