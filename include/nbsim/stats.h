/* SPDX-License-Identifier: MIT
 * nbsim — summary statistics of repeated timings, shared by the run summary, the benchmarks
 * and the autotuner. */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double median; /* the mean of the two middle values for an even count */
    double p95;    /* nearest rank */
    double min, max;
} sim_stats;

/* Statistics of count values (left in their order); all zeros for count == 0 or when no
 * memory is left for the sorted copy. */
sim_stats sim_stats_of(const double *values, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* SIM_STATS_H */
