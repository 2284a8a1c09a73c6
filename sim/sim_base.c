/* SPDX-License-Identifier: MIT
 * nbsim — status strings, error recording and the assert handler. */
#include "sim_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
