/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` helpers: statistics, counts, lists, slugs. */
#include "bench_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

app_bench_stats app_bench_summarize(const double *values, int count) {
    app_bench_stats s = {0.0, 0.0, 0.0};
    if (count <= 0) {
        return s;
    }
    /* Repeats are few (tens); a copy on the stack keeps the caller's order intact. */
    double sorted[1024];
    const int m = count < 1024 ? count : 1024;
    memcpy(sorted, values, (size_t)m * sizeof *sorted);
    qsort(sorted, (size_t)m, sizeof *sorted, compare_double);
    s.min = sorted[0];
    s.max = sorted[m - 1];
    s.median = (m % 2) ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
    return s;
}

double app_bench_improvement(double t_bb, double t_map) {
    return (t_bb > 0.0 && t_map > 0.0) ? t_bb / t_map : 0.0;
}

uint64_t app_bench_choose(uint64_t n, int k) {
    if ((k != 2 && k != 3) || n < (uint64_t)k) {
        return 0;
    }
    uint64_t f[3] = {n, n - 1, k == 3 ? n - 2 : 1};
    /* Divide the falling factorial by k! factor by factor so the product stays exact. */
    for (int d = 2; d <= k; ++d) {
        for (int i = 0; i < k; ++i) {
            if (f[i] % (uint64_t)d == 0) {
                f[i] /= (uint64_t)d;
                break;
            }
        }
    }
    uint64_t r = 1;
    for (int i = 0; i < k; ++i) {
        if (f[i] != 0 && r > UINT64_MAX / f[i]) {
            return UINT64_MAX;
        }
        r *= f[i];
    }
    return r;
}

int app_bench_parse_list(const char *text, uint32_t lo, uint32_t hi, uint32_t *out, int cap) {
    if (text == NULL || *text == '\0') {
        return -1;
    }
    int count = 0;
    const char *p = text;
    for (;;) {
        if (*p < '0' || *p > '9') {
            return -1; /* empty item, sign or space */
        }
        char *end = NULL;
        errno = 0;
        const unsigned long long v = strtoull(p, &end, 10);
        if (errno != 0 || v < lo || v > hi || count >= cap) {
            return -1;
        }
        out[count++] = (uint32_t)v;
        if (*end == '\0') {
            return count;
        }
        if (*end != ',') {
            return -1;
        }
        p = end + 1;
    }
}

void app_bench_slug(const char *name, char *out, size_t cap) {
    if (cap == 0) {
        return;
    }
    size_t len = 0;
    int dash = 0;
    for (const char *p = name ? name : ""; *p != '\0' && len + 1 < cap; ++p) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && len > 0 && len + 2 < cap) {
                out[len++] = '-';
            }
            out[len++] = c;
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[len] = '\0';
    if (len == 0) {
        snprintf(out, cap, "gpu");
    }
}
