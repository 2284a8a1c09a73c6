/* SPDX-License-Identifier: MIT
 * nbsim — small pure helpers of `nbsim bench`: the improvement ratio and list parsing. */
#ifndef APP_BENCH_STATS_H
#define APP_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "nbsim/base.h"
#include "nbsim/stats.h"

/* I = t_BB / t_map; 0 when either time is not positive. */
double app_bench_improvement(double t_bb, double t_map);

/* "1024,2048,4096" -> out[]; every value in [lo, hi], at most cap of them, no empty items.
 * Returns the count, or -1 when the text is malformed or a value is out of range. */
int app_bench_parse_list(const char *text, uint32_t lo, uint32_t hi, uint32_t *out, int cap);

#endif /* APP_BENCH_STATS_H */
