/* SPDX-License-Identifier: MIT
 * nbsim — the signals that end a run: SIGINT (Ctrl-C), SIGTERM and SIGHUP. The headless loop and
 * the viewer poll app_stop_signal() and stop after the current frame with every output complete;
 * the exit status is then 128 + the signal number.
 *
 * A signal that was ignored when nbsim started stays ignored: `nohup nbsim ...` must survive the
 * terminal's hangup, and a shell's background job ignores Ctrl-C meant for the foreground. */
#ifndef APP_SIGNALS_H
#define APP_SIGNALS_H

/* Installs the handlers (clearing any earlier signal); app_stop_signals_end restores what was
 * there before. */
void app_stop_signals_begin(void);
void app_stop_signals_end(void);
/* The signal that asked the run to stop, or 0. */
int app_stop_signal(void);
/* "SIGINT (Ctrl-C)", "SIGTERM", "SIGHUP" (else "a signal"). */
const char *app_signal_name(int sig);

#endif /* APP_SIGNALS_H */
