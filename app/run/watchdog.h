/* SPDX-License-Identifier: MIT
 * nbsim — the last resort of a run over several processes: after a stop signal, a process
 * whose loop makes no progress (it waits in a collective that another process, killed or stuck,
 * never joins) is ended instead of waiting for ever. Within one process a signal always stops
 * the run (nbsim/internal/backend.h), so only runs over processes start one. */
#ifndef APP_WATCHDOG_H
#define APP_WATCHDOG_H

#include <signal.h>

typedef struct app_watchdog app_watchdog;

/* Called on the watchdog's thread when it gives up (sig: the signal); expected not to return
 * (the program's: says so in one line, removes unfinished outputs, _exit(128 + sig)). */
typedef void (*app_watchdog_give_up)(int sig, void *ctx);

/* Starts watching `flag` (a caught signal's number, 0: none). After the flag rises it gives up
 * when no beat has come for grace_s plus twice the longest gap between beats seen so far (a
 * long frame is not taken for a stuck one). NULL when the thread cannot start (the run goes on
 * without it). */
app_watchdog *app_watchdog_start(const volatile sig_atomic_t *flag, double grace_s,
                                 app_watchdog_give_up give_up, void *ctx);
/* The loop is alive: after the set-up and after every frame. NULL: nothing. */
void app_watchdog_beat(app_watchdog *w);
/* Stops and frees it (the loop is past everything that waits on other processes). NULL: nothing. */
void app_watchdog_stop(app_watchdog *w);

#endif /* APP_WATCHDOG_H */
