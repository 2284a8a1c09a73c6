/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` helpers: the improvement ratio and list parsing. */
#include "bench_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double app_bench_improvement(double t_bb, double t_map) {
    return (t_bb > 0.0 && t_map > 0.0) ? t_bb / t_map : 0.0;
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
