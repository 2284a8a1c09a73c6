/* SPDX-License-Identifier: MIT
 * nbsim — the headless loop: frames, timing log, summary, final state; Ctrl-C stops cleanly. */
#define _POSIX_C_SOURCE 200809L
#include "headless.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "run_stats.h"
#include "scene.h"
#include "timing_log.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

/* A progress bar on stderr, redrawn at most ten times a second. */
static void progress(long done, long total, double started, int final) {
    static double last;
    double t = sim_now_ms() * 1e-3;
    if (!final && t - last < 0.1) {
        return;
    }
    last = t;
    int width = 30, filled = (int)((double)width * (double)done / (double)total);
    char bar[64];
    for (int i = 0; i < width; ++i) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[width] = '\0';
    double rate = done > 0 ? (t - started) / (double)done * 1e3 : 0.0;
    fprintf(stderr, "\r[%s] %ld/%ld frames  %.2f ms/frame%s", bar, done, total, rate,
            final ? "\n" : "");
}

static void print_banner(const app_session *s) {
    const sim_backend_config *c = sim_backend_get_config(s->backend);
    fprintf(stderr,
            "nbsim: %u bodies, scene %s, backend %s (%s), pair map %s, triplet map %s, tile %u, "
            "dt %.3g s\n",
            s->initial.n, s->scene, c->kind == SIM_BACKEND_CUDA ? "cuda" : "cpu",
            sim_backend_device_name(s->backend), sim_pair_choice_name(c->pair_map),
            s->params.triplets ? sim_triplet_map_name(c->triplet_map) : "off", c->tile,
            s->params.dt);
}

/* Writes the final state with the last force per body. */
static sim_status save_state(const app_session *s, const char *path, sim_error *err) {
    sim_state state = {0};
    sim_status st = sim_state_alloc(&state, s->initial.n, err);
    sim_vec3d *forces = NULL;
    if (st == SIM_OK) {
        forces = calloc(s->initial.n, sizeof *forces);
        st = forces ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for forces");
    }
    if (st == SIM_OK) {
        st = sim_backend_read_state(s->backend, &state, forces, err);
    }
    if (st == SIM_OK) {
        st = sim_state_save(path, &s->params, &state, forces, err);
    }
    free(forces);
    sim_state_free(&state);
    return st;
}

/* The frame loop. Returns SIM_OK, SIM_INTERRUPTED, or the failure (err filled). */
static sim_status run_frames(app_session *s, app_timing_log *log, app_run_stats *stats,
                             sim_error *err) {
    const app_options *o = &s->opt;
    int show = !o->quiet && isatty(STDERR_FILENO);
    double started = sim_now_ms() * 1e-3;
    for (long f = 0; f < o->frames; ++f) {
        sim_frame_timing t;
        sim_status st = app_session_frame(s, &t, err);
        if (st != SIM_OK) {
            if (show) {
                fputc('\n', stderr);
            }
            if (st == SIM_UNSTABLE) {
                char cause[SIM_ERROR_MESSAGE_MAX];
                snprintf(cause, sizeof cause, "%s", err->message);
                sim_fail(err, st, "simulation stopped at frame %ld: %s", f + 1, cause);
            }
            return st;
        }
        sim_energy energy;
        const int every = o->energy_every == APP_ENERGY_AUTO ? 1 : o->energy_every;
        int with_energy = every > 0 && (f % every == 0 || f + 1 == o->frames);
        if (with_energy && (st = sim_backend_energy(s->backend, &energy, err)) != SIM_OK) {
            return st;
        }
        if (log->file != NULL &&
            (st = app_timing_log_row(log, s, &t, with_energy ? &energy : NULL, err)) != SIM_OK) {
            return st;
        }
        if ((st = app_run_stats_add(stats, &t, err)) != SIM_OK) {
            return st;
        }
        if (show) {
            progress(f + 1, o->frames, started, f + 1 == o->frames);
        }
        if (interrupted) {
            if (show) {
                fputc('\n', stderr);
            }
            return SIM_INTERRUPTED;
        }
    }
    return SIM_OK;
}

int app_run_headless(const app_options *opt) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);

    app_session s;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = app_session_open(&s, opt, &err);
    if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return app_exit_code(st);
    }
    if (!opt->quiet) {
        /* One "nbsim: " line per notice. */
        for (const char *line = s.notice; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(stderr, "nbsim: %.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
        print_banner(&s);
    }
    app_timing_log log = {0};
    if (opt->log_path[0] && (st = app_timing_log_open(&log, opt->log_path, &err)) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        app_session_close(&s);
        return app_exit_code(st);
    }
    app_run_stats stats = {0};
    sim_status run = run_frames(&s, &log, &stats, &err);
    int code = run == SIM_OK || run == SIM_INTERRUPTED ? app_exit_code(run) : APP_EXIT_FAILURE;
    if (run != SIM_OK && run != SIM_INTERRUPTED) {
        fprintf(stderr, "nbsim: %s\n", err.message);
    } else if (run == SIM_INTERRUPTED) {
        fprintf(stderr, "nbsim: interrupted after %llu frames; log and summary are complete\n",
                (unsigned long long)s.frame);
    }
    /* Whatever ran is kept: the log holds complete rows up to the last finished frame. */
    sim_error werr;
    sim_error_clear(&werr);
    if (log.file != NULL && app_timing_log_close(&log, &werr) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", werr.message);
        code = code ? code : APP_EXIT_FAILURE;
    }
    if (stats.count > 0) {
        app_run_stats_print(&stats, &s, stdout);
    }
    if (stats.count > 0 && opt->summary_path[0] &&
        app_run_stats_write_json(&stats, &s, opt->summary_path, run == SIM_INTERRUPTED, &werr) !=
            SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", werr.message);
        code = code ? code : APP_EXIT_FAILURE;
    }
    if (run == SIM_OK && opt->save_state_path[0] &&
        save_state(&s, opt->save_state_path, &werr) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", werr.message);
        code = APP_EXIT_FAILURE;
    }
    app_run_stats_free(&stats);
    app_session_close(&s);
    return code;
}
