/* SPDX-License-Identifier: MIT
 * nbsim — summary statistics of repeated timings. */
#include "nbsim/stats.h"

#include <stdlib.h>
#include <string.h>

static int compare_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

sim_stats sim_stats_of(const double *values, size_t count) {
    sim_stats s = {0.0, 0.0, 0.0, 0.0};
    double *sorted = count > 0 ? malloc(count * sizeof *sorted) : NULL;
    if (sorted == NULL) {
        return s;
    }
    memcpy(sorted, values, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, compare_double);
    s.median = count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
    const size_t rank = (95 * count + 99) / 100;
    s.p95 = sorted[rank > 0 ? rank - 1 : 0];
    s.min = sorted[0];
    s.max = sorted[count - 1];
    free(sorted);
    return s;
}
