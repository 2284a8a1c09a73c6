/* SPDX-License-Identifier: MIT
 * nbsim — the signals that end a run: SIGINT (Ctrl-C), SIGTERM and SIGHUP, caught into one flag.
 * The session hands the flag to the backend (sim_backend_config.stop), which stops within a
 * fraction of a second, also in the middle of a long step (rolled back: the state is that of the
 * last completed step) or while it computes the initial forces; the headless loop and the viewer
 * poll app_stop_signal() after each frame. Either way the run ends with every output complete
 * and the exit status 128 + the signal number.
 *
 * A signal that was ignored when nbsim started stays ignored: `nohup nbsim ...` must survive the
 * terminal's hangup, and a shell's background job ignores Ctrl-C meant for the foreground. */
#ifndef APP_SIGNALS_H
#define APP_SIGNALS_H

#include <signal.h>

/* Installs the handlers (clearing any earlier signal); app_stop_signals_end restores what was
 * there before. */
void app_stop_signals_begin(void);
void app_stop_signals_end(void);
/* The signal that asked the run to stop, or 0. */
int app_stop_signal(void);
/* The flag itself (nonzero once a signal came), for a backend to read: it lives as long as the
 * program, and reads 0 until app_stop_signals_begin is followed by a signal. */
const volatile sig_atomic_t *app_stop_flag(void);
/* "SIGINT (Ctrl-C)", "SIGTERM", "SIGHUP" (else "a signal"). */
const char *app_signal_name(int sig);

#endif /* APP_SIGNALS_H */
