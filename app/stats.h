/* SPDX-License-Identifier: MIT
 * nbsim — summary statistics of repeated timings, shared by the run summary, the benchmarks
 * and the autotuner. */
#ifndef APP_STATS_H
#define APP_STATS_H

#include <stddef.h>

typedef struct {
    double median; /* the mean of the two middle values for an even count */
    double p95;    /* nearest rank */
    double min, max;
} app_stats;

/* Statistics of count values (left in their order); all zeros for count == 0 or when no
 * memory is left for the sorted copy. */
app_stats app_stats_of(const double *values, size_t count);

#endif /* APP_STATS_H */
