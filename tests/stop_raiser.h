/* SPDX-License-Identifier: MIT
 * nbsim — for the tests of stopping a run: a thread that raises a stop flag (nbsim/config.h:
 * config.stop) after a delay, as a signal handler would, and notes when it did. */
#ifndef NBSIM_STOP_RAISER_H
#define NBSIM_STOP_RAISER_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nbsim/base.h"

typedef struct {
    volatile sig_atomic_t *flag;
    double delay_ms;
    double raised_ms; /* sim_now_ms() when raised; read after stop_raiser_join */
    pthread_t thread;
} stop_raiser;

static void *stop_raiser_main(void *arg) {
    stop_raiser *r = arg;
    const long ns = (long)(r->delay_ms * 1e6);
    const struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&ts, NULL);
    r->raised_ms = sim_now_ms();
    *r->flag = 1;
    return NULL;
}

static void stop_raiser_start(stop_raiser *r, volatile sig_atomic_t *flag, double delay_ms) {
    r->flag = flag;
    r->delay_ms = delay_ms;
    r->raised_ms = 0.0;
    if (pthread_create(&r->thread, NULL, stop_raiser_main, r) != 0) {
        fprintf(stderr, "cannot start a thread\n");
        exit(1);
    }
}

static void stop_raiser_join(stop_raiser *r) {
    pthread_join(r->thread, NULL);
}

#endif /* NBSIM_STOP_RAISER_H */
