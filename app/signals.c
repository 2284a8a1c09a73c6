/* SPDX-License-Identifier: MIT
 * nbsim — the signals that end a run, caught into one flag. */
#define _POSIX_C_SOURCE 200809L
#include "signals.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define STOP_SIGNAL_COUNT (sizeof stop_signals / sizeof stop_signals[0])

static volatile sig_atomic_t caught;
static struct sigaction previous[STOP_SIGNAL_COUNT];
static int installed[STOP_SIGNAL_COUNT];

static void on_stop_signal(int sig) {
    caught = sig;
}

void app_stop_signals_begin(void) {
    caught = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < STOP_SIGNAL_COUNT; ++k) {
        installed[k] = 0;
        if (sigaction(stop_signals[k], NULL, &previous[k]) != 0 ||
            previous[k].sa_handler == SIG_IGN) {
            continue; /* nohup or a background job: leave it ignored */
        }
        installed[k] = sigaction(stop_signals[k], &sa, NULL) == 0;
    }
}

void app_stop_signals_end(void) {
    for (size_t k = 0; k < STOP_SIGNAL_COUNT; ++k) {
        if (installed[k]) {
            sigaction(stop_signals[k], &previous[k], NULL);
            installed[k] = 0;
        }
    }
}

int app_stop_signal(void) {
    return caught;
}

const volatile sig_atomic_t *app_stop_flag(void) {
    return &caught;
}

const char *app_signal_name(int sig) {
    switch (sig) {
    case SIGINT:
        return "SIGINT (Ctrl-C)";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "a signal";
    }
}
