/* SPDX-License-Identifier: MIT
 * nbsim — status strings, error recording, the assert handler, the clock and interaction counts. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "nbsim/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const status_strings[SIM_STATUS_COUNT] = {
#define SIM_STATUS_STRING(id, text) text,
    SIM_STATUS_LIST(SIM_STATUS_STRING)
#undef SIM_STATUS_STRING
};

const char *sim_status_string(sim_status status) {
    if ((int)status < 0 || status >= SIM_STATUS_COUNT) {
        return "unknown status";
    }
    return status_strings[status];
}

sim_status sim_fail(sim_error *err, sim_status status, const char *fmt, ...) {
    if (err != NULL) {
        err->status = status;
        va_list args;
        va_start(args, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return status;
}

void sim_error_clear(sim_error *err) {
    if (err != NULL) {
        err->status = SIM_OK;
        err->message[0] = '\0';
    }
}

static void default_assert_handler(const char *expr, const char *file, int line) {
    fprintf(stderr, "nbsim: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
    abort();
}

static sim_assert_handler current_handler = default_assert_handler;

void sim_set_assert_handler(sim_assert_handler handler) {
    current_handler = handler != NULL ? handler : default_assert_handler;
}

void sim_assert_failed(const char *expr, const char *file, int line) {
    current_handler(expr, file, line);
}

double sim_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

uint64_t sim_choose(uint64_t n, int k) {
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
