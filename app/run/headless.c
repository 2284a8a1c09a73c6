/* SPDX-License-Identifier: MIT
 * nbsim — the headless loop: frames, timing log, summary, final state. SIGINT, SIGTERM and
 * SIGHUP end a run the same way: after the current frame, with every output complete, and exit
 * status 128 + the signal number. */
#define _POSIX_C_SOURCE 200809L
#include "headless.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "run_loop.h"
#include "scene.h"

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) {
    stop_signal = sig;
}

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof signals / sizeof signals[0]; ++k) {
        sigaction(signals[k], &sa, NULL);
    }
}

static const char *signal_name(int sig) {
    return sig == SIGINT ? "SIGINT (Ctrl-C)" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

/* A progress bar with the rate and an ETA on stderr, redrawn at most ten times a second. */
typedef struct {
    int show;
    double started_ms, drawn_ms;
} progress_bar;

static void progress(progress_bar *p, long done, long total, int final) {
    const double now = sim_now_ms();
    if (!p->show || (!final && now - p->drawn_ms < 100.0)) {
        return;
    }
    p->drawn_ms = now;
    const int width = 30, filled = (int)((double)width * (double)done / (double)total);
    char bar[64];
    for (int i = 0; i < width; ++i) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[width] = '\0';
    const double per_frame = done > 0 ? (now - p->started_ms) / (double)done : 0.0;
    const double eta_s = per_frame * (double)(total - done) * 1e-3;
    fprintf(stderr, "\r[%s] %ld/%ld frames  %.2f ms/frame  ETA %02d:%02d:%02d%s", bar, done, total,
            per_frame, (int)(eta_s / 3600.0), (int)(eta_s / 60.0) % 60, (int)eta_s % 60,
            final ? "\n" : "");
}

static void print_banner(const app_run_info *s) {
    fprintf(stderr,
            "nbsim: %u bodies, scene %s, backend %s (%s), %d rank%s, pair map %s, culling %s, "
            "triplet map %s, tile %u, dt %.3g s\n",
            s->n, s->scene, s->backend, s->device, s->gpus, s->gpus == 1 ? "" : "s",
            sim_pair_choice_name(s->config.pair_map),
            s->config.cull && s->config.pair_map != SIM_PAIR_FULL ? "on" : "off",
            s->params.triplets ? sim_triplet_map_name(s->config.triplet_map) : "off",
            s->config.tile, s->params.dt);
}

/* The frame loop. Returns SIM_OK, SIM_INTERRUPTED, or the failure (err filled). */
static sim_status run_frames(app_run *r, const app_options *o, sim_error *err) {
    progress_bar bar = {!o->quiet && isatty(STDERR_FILENO), sim_now_ms(), 0.0};
    for (long f = 0; f < o->frames; ++f) {
        sim_frame_timing t;
        const sim_status st = app_run_frame(r, f + 1 == o->frames, &t, err);
        if (st != SIM_OK) {
            if (bar.show) {
                fputc('\n', stderr);
            }
            if (st == SIM_UNSTABLE) {
                char cause[SIM_ERROR_MESSAGE_MAX];
                snprintf(cause, sizeof cause, "%s", err->message);
                sim_fail(err, st, "simulation stopped at frame %ld: %.400s", f + 1, cause);
            }
            return st;
        }
        if (r->log_error.status != SIM_OK) {
            if (bar.show) {
                fputc('\n', stderr);
            }
            *err = r->log_error;
            return r->log_error.status;
        }
        progress(&bar, f + 1, o->frames, f + 1 == o->frames);
        if (stop_signal != 0) {
            if (bar.show) {
                fputc('\n', stderr);
            }
            return SIM_INTERRUPTED;
        }
    }
    return SIM_OK;
}

/* Appends "name 'path'" to a list of completed outputs. */
static void completed(char *list, size_t cap, const char *name, const char *path) {
    const size_t len = strlen(list);
    snprintf(list + len, cap - len, "%s%s %s", len ? ", " : "", name, path);
}

int app_run_headless(const app_options *opt) {
    stop_signal = 0;
    install_signals();
    const double started_ms = sim_now_ms();
    sim_error err;
    sim_error_clear(&err);
    app_run r;
    memset(&r, 0, sizeof r);
    r.energy_every = app_energy_every(opt, 0);
    r.notice = opt->quiet ? NULL : app_print_notice;
    sim_status st = app_session_open(&r.session, opt, &err);
    if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return app_exit_code(st);
    }
    const app_run_info *info = app_session_info(r.session);
    app_run_notices(&r);
    if (!opt->quiet) {
        print_banner(info);
    }
    if (opt->log_path[0] && (st = app_timing_log_open(&r.log, opt->log_path, &err)) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        app_session_close(r.session);
        return app_exit_code(st);
    }
    const sim_status run = run_frames(&r, opt, &err);
    int code = run == SIM_OK ? APP_EXIT_OK : APP_EXIT_FAILURE;
    if (run == SIM_INTERRUPTED) {
        code = 128 + stop_signal;
    } else if (run != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
    }

    /* Whatever ran is kept: the log holds complete rows up to the last finished frame, and an
     * interrupted run still writes its summary and state (so it can be resumed). */
    char done_list[3 * SIM_PATH_MAX + 64] = "";
    sim_error werr;
    sim_error_clear(&werr);
    if (r.log.file != NULL) {
        if (app_timing_log_close(&r.log, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        } else {
            completed(done_list, sizeof done_list, "log", opt->log_path);
        }
    }
    const int any_stdout = strcmp(opt->log_path, "-") == 0 || strcmp(opt->summary_path, "-") == 0 ||
                           strcmp(opt->save_state_path, "-") == 0;
    if (r.stats.count > 0 && app_options_writes_outputs(opt)) {
        app_run_stats_print(&r.stats, info, any_stdout ? stderr : stdout);
    }
    if (r.stats.count > 0 && opt->summary_path[0]) {
        char detail[SIM_ERROR_MESSAGE_MAX] = "";
        if (run == SIM_INTERRUPTED) {
            snprintf(detail, sizeof detail, "%s", signal_name(stop_signal));
        } else if (run != SIM_OK) {
            snprintf(detail, sizeof detail, "%s", err.message);
        }
        const app_run_end end = {opt->frames,
                                 opt->seed,
                                 sim_scene_is_builtin(info->scene),
                                 run == SIM_OK            ? "done"
                                 : run == SIM_INTERRUPTED ? "interrupted"
                                 : run == SIM_UNSTABLE    ? "unstable"
                                                          : "failed",
                                 detail,
                                 (sim_now_ms() - started_ms) * 1e-3};
        if (app_run_stats_write_json(&r.stats, info, &end, opt->summary_path, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        } else {
            completed(done_list, sizeof done_list, "summary", opt->summary_path);
        }
    }
    /* A blown-up state is not worth resuming; a finished or interrupted one is. */
    if ((run == SIM_OK || run == SIM_INTERRUPTED) && opt->save_state_path[0]) {
        if (app_session_save_state(r.session, opt->save_state_path, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        } else {
            completed(done_list, sizeof done_list, "state", opt->save_state_path);
        }
    }
    if (run == SIM_INTERRUPTED) {
        const uint64_t frames = info->frame;
        fprintf(stderr, "nbsim: stopped by %s after %llu frame%s; %s%s\n", signal_name(stop_signal),
                (unsigned long long)frames, frames == 1 ? "" : "s",
                done_list[0] ? "complete: " : "no output files were asked for", done_list);
    }
    app_run_stats_free(&r.stats);
    app_session_close(r.session);
    return code;
}
