/* SPDX-License-Identifier: MIT
 * nbsim — ending a process of a run whose other processes stopped answering (watchdog.h). */
#define _POSIX_C_SOURCE 200809L
#include "watchdog.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "nbsim/base.h"

struct app_watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    const volatile sig_atomic_t *flag;
    double grace_ms;
    app_watchdog_give_up give_up;
    void *ctx;
    double last_beat_ms, longest_gap_ms;
    int quit;
};

/* Polls ten times a second: a signal is a flag (no thread is told), and the deadline moves. */
static void *watch(void *arg) {
    app_watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->wake, &w->lock, &until);
        const int sig = *w->flag;
        if (w->quit || sig == 0) {
            continue;
        }
        const double deadline = w->last_beat_ms + 2.0 * w->longest_gap_ms + w->grace_ms;
        if (sim_now_ms() > deadline) {
            pthread_mutex_unlock(&w->lock);
            w->give_up(sig, w->ctx);
            pthread_mutex_lock(&w->lock);
            w->quit = 1; /* a give_up that returned (tests): watch no more */
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

app_watchdog *app_watchdog_start(const volatile sig_atomic_t *flag, double grace_s,
                                 app_watchdog_give_up give_up, void *ctx) {
    app_watchdog *w = calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->flag = flag;
    w->grace_ms = grace_s * 1e3;
    w->give_up = give_up;
    w->ctx = ctx;
    w->last_beat_ms = sim_now_ms();
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->wake);
        free(w);
        return NULL;
    }
    return w;
}

void app_watchdog_beat(app_watchdog *w) {
    if (w == NULL) {
        return;
    }
    pthread_mutex_lock(&w->lock);
    const double now = sim_now_ms();
    if (now - w->last_beat_ms > w->longest_gap_ms) {
        w->longest_gap_ms = now - w->last_beat_ms;
    }
    w->last_beat_ms = now;
    pthread_mutex_unlock(&w->lock);
}

void app_watchdog_stop(app_watchdog *w) {
    if (w == NULL) {
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w);
}
