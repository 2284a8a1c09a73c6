/* SPDX-License-Identifier: MIT
 * nbsim — the watchdog of runs over processes (watchdog.h): silent without a signal or while the
 * loop beats, gives up after the grace when the loop stalls, and waits longer for a loop whose
 * frames are long; and the unfinished outputs it removes when it gives up (output_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ensure.h"
#include "nbsim/output_file.h"
#include "nbsim/base.h"

static volatile sig_atomic_t flag;
static volatile int gave_up;
static volatile double gave_up_ms;

static void record(int sig, void *ctx) {
    (void)ctx;
    gave_up = sig;
    gave_up_ms = sim_now_ms();
}

static void sleep_ms(double ms) {
    const struct timespec t = {(time_t)(ms / 1e3),
                               (long)(ms - 1e3 * (double)(time_t)(ms / 1e3)) * 1000000L};
    nanosleep(&t, NULL);
}

static app_watchdog *start(double grace_s) {
    flag = 0;
    gave_up = 0;
    return app_watchdog_start(&flag, grace_s, record, NULL);
}

static void test_quiet_without_signal(void) {
    app_watchdog *w = start(0.2);
    ENSURE(w != NULL);
    sleep_ms(500); /* no beat, no signal: nothing */
    ENSURE(gave_up == 0);
    app_watchdog_stop(w);
}

static void test_beating_loop_is_left_alone(void) {
    app_watchdog *w = start(0.5); /* a busy CI machine may stretch a 50 ms sleep */
    flag = 2;
    for (int k = 0; k < 20; ++k) { /* 1 s of frames of 50 ms after the signal */
        sleep_ms(50);
        app_watchdog_beat(w);
    }
    ENSURE_MSG(gave_up == 0, "gave up on a loop that beats");
    app_watchdog_stop(w);
}

static void test_stalled_loop(void) {
    app_watchdog *w = start(0.2);
    app_watchdog_beat(w);
    const double t0 = sim_now_ms();
    flag = 15;
    while (!gave_up && sim_now_ms() - t0 < 3000.0) {
        sleep_ms(20);
    }
    const double after = gave_up_ms - t0;
    printf("  stalled loop, grace 0.2 s: gave up after %.0f ms\n", after);
    ENSURE(gave_up == 15 && after >= 150.0 && after < 1000.0);
    app_watchdog_stop(w);
}

/* A frame of 0.4 s was seen: a stall counts from 2 x 0.4 + 0.2 s after the last beat. */
static void test_long_frames_wait_longer(void) {
    app_watchdog *w = start(0.2);
    app_watchdog_beat(w);
    sleep_ms(400);
    app_watchdog_beat(w);
    const double t0 = sim_now_ms();
    flag = 2;
    sleep_ms(600);
    ENSURE_MSG(gave_up == 0, "gave up within a frame's usual time");
    while (!gave_up && sim_now_ms() - t0 < 3000.0) {
        sleep_ms(20);
    }
    const double after = gave_up_ms - t0;
    printf("  frames of 0.4 s, grace 0.2 s: gave up after %.0f ms\n", after);
    ENSURE(gave_up == 2 && after >= 950.0 && after < 2000.0);
    app_watchdog_stop(w);
}

static void test_unfinished_outputs_removed(void) {
    char dir[] = "/tmp/nbsim-test-watchdog-XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/log.csv", dir);
    sim_output out;
    sim_error err;
    ENSURE(sim_output_open(&out, path, &err) == SIM_OK);
    fputs("frame\n", out.file);
    fflush(out.file);
    ENSURE(access(out.temp, F_OK) == 0);
    sim_output_remove_unfinished();
    ENSURE_MSG(access(out.temp, F_OK) != 0, "the temporary is still there");
    ENSURE(access(path, F_OK) != 0);
    sim_output_abort(&out);
    ENSURE(rmdir(dir) == 0);
}

static const ensure_test tests[] = {
    {"watchdog_quiet_without_signal", test_quiet_without_signal},
    {"watchdog_beating_loop_is_left_alone", test_beating_loop_is_left_alone},
    {"watchdog_stalled_loop", test_stalled_loop},
    {"watchdog_long_frames_wait_longer", test_long_frames_wait_longer},
    {"watchdog_unfinished_outputs_removed", test_unfinished_outputs_removed},
};

ENSURE_MAIN(tests)
