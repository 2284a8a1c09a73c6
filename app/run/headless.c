/* SPDX-License-Identifier: MIT
 * nbsim — the headless loop: frames, timing log, summary, final state. SIGINT, SIGTERM and
 * SIGHUP end a run the same way, within a second (the backend stops in the middle of a frame,
 * keeping the steps it completed: signals.h), with every output complete, and exit status
 * 128 + the signal number; before the first frame, with no outputs. */
#define _POSIX_C_SOURCE 200809L
#include "headless.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "plot.h"
#include "nbsim/run_loop.h"
#include "nbsim/scene.h"
#include "signals.h"
#include "watchdog.h"

/* The notices of a terminal program: each line on stderr as "nbsim: LINE". */
static void print_notice(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, "nbsim: %s\n", line);
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
    fprintf(stderr, "\r[%s] %ld/%ld frame%s  %.2f ms/frame  ETA %02d:%02d:%02d%s", bar, done, total,
            total == 1 ? "" : "s", per_frame, (int)(eta_s / 3600.0), (int)(eta_s / 60.0) % 60,
            (int)eta_s % 60, final ? "\n" : "");
}

static void print_banner(const sim_run_info *s) {
    fprintf(stderr,
            "nbsim: %u bodies, scene %s, backend %s (%s), %d rank%s, pair map %s, culling %s, "
            "triplet map %s, tile %u, dt %.3g s\n",
            s->n, s->scene, s->backend, s->device, s->gpus, s->gpus == 1 ? "" : "s",
            sim_pair_choice_name(s->config.pair_map), sim_config_culls(&s->config) ? "on" : "off",
            s->params.triplets ? sim_triplet_map_name(s->config.triplet_map) : "off",
            s->config.tile, s->params.dt);
}

/* A frame this large (interactions, a triple counted as ~8 pairs: design notes §5) takes a
 * minute or more on a few CPU cores, or seconds on a GPU. */
#define LONG_FRAME_CPU 1.0e10
#define LONG_FRAME_CUDA 1.0e13
/* A frame expected to take this long [s], from the time of the initial forces, is announced;
 * on a GPU only when those took LONG_SETUP_CUDA_S or more, as the set-up's own time (the CUDA
 * context, allocations: up to a second or two) is then a small part of it. */
#define LONG_FRAME_S 5.0
#define LONG_SETUP_CUDA_S 3.0

/* Before the initial forces (a step's work) and the first frame, which show nothing while they
 * run: what a frame computes, when that is a lot. Culled contacts and triplets culled by a
 * cut-off grow like N, not N^2 / 2 or N^3 / 6: their counts say nothing of the work, and such
 * runs are announced from the measured initial forces instead (announce_frame_time). */
static void announce_long_frames(const sim_run_info *info) {
    const double steps = (double)info->params.steps_per_frame;
    const sim_backend_config *c = &info->config;
    const int culled = sim_config_culls(c);
    const int triplets_culled = sim_config_culls_triplets(c, &info->params);
    const double pairs = culled ? 0.0 : steps * (double)info->unique_pairs;
    const double triples =
        info->params.triplets && !triplets_culled ? steps * (double)info->unique_triples : 0.0;
    const int cuda = c->kind == SIM_BACKEND_CUDA;
    if (pairs + 8.0 * triples < (cuda ? LONG_FRAME_CUDA : LONG_FRAME_CPU)) {
        return;
    }
    char work[96];
    if (triples > 0.0 && pairs > 0.0) {
        snprintf(work, sizeof work, "%.3g unique pairs and %.3g triples", pairs, triples);
    } else if (triples > 0.0) {
        snprintf(work, sizeof work, "%.3g triples", triples);
    } else {
        snprintf(work, sizeof work, "%.3g unique pairs", pairs);
    }
    fprintf(stderr,
            "nbsim: each frame computes %s on the %s, which takes a while (the initial forces, "
            "first, are a step's work): the progress bar starts after the first frame, and "
            "Ctrl-C stops within a second, keeping the steps completed\n",
            work, cuda ? "GPU" : "CPU");
}

/* "350 ms", "26 s", "12 min", "1.5 h". */
static void duration_text(double s, char *out, size_t cap) {
    if (s < 1.0) {
        snprintf(out, cap, "%.0f ms", s * 1e3);
    } else if (s < 90.0) {
        snprintf(out, cap, "%.0f s", s);
    } else if (s < 5400.0) {
        snprintf(out, cap, "%.0f min", s / 60.0);
    } else {
        snprintf(out, cap, "%.1f h", s / 3600.0);
    }
}

/* After the initial forces: a frame's time from theirs, when long: the step's estimate (the
 * lists' builds spread over the steps between rebuilds: sim_run_info.step_estimate_ms), else the
 * set-up's whole time as a step's. */
static void announce_frame_time(const sim_run_info *info, double setup_s) {
    const int steps = info->params.steps_per_frame;
    const double step_s = info->step_estimate_ms > 0.0 ? info->step_estimate_ms * 1e-3 : setup_s;
    const double frame_s = step_s * (double)steps;
    const int cuda = info->config.kind == SIM_BACKEND_CUDA;
    if (frame_s < LONG_FRAME_S || (cuda && setup_s < LONG_SETUP_CUDA_S)) {
        return;
    }
    char took[32], frame[32];
    duration_text(setup_s, took, sizeof took);
    duration_text(frame_s, frame, sizeof frame);
    fprintf(stderr,
            "nbsim: the initial forces took %s, so a frame of %d step%s should take about %s; "
            "Ctrl-C stops within a second\n",
            took, steps, steps == 1 ? "" : "s", frame);
}

/* How the frame loop ended: the status, and for a failure the frame and the cause. */
typedef struct {
    sim_status status; /* SIM_OK, SIM_INTERRUPTED, SIM_UNSTABLE, or a failure */
    long frame;        /* the frame that failed (1-based); 0 when none did */
    int told;          /* the failure was already shown as a notice */
    int signal;        /* SIM_INTERRUPTED: the signal that stopped the run (maybe another rank's) */
} run_end;

/* The frame loop. err holds the cause of a failure. dog (NULL: none) hears a beat per frame. */
static run_end run_frames(sim_run *r, const app_options *o, app_watchdog *dog, sim_error *err) {
    progress_bar bar = {!o->quiet && isatty(STDERR_FILENO), sim_now_ms(), 0.0};
    run_end end = {SIM_OK, 0, 0, 0};
    for (long f = 0; f < o->session.frames && end.status == SIM_OK; ++f) {
        sim_frame_timing t;
        end.status = sim_run_frame(r, f + 1 == o->session.frames, &t, err);
        if (end.status == SIM_INTERRUPTED) { /* a signal stopped the frame: no failure */
            end.signal = app_stop_signal();
            break;
        }
        if (end.status != SIM_OK) {
            end.frame = f + 1;
            break;
        }
        progress(&bar, f + 1, o->session.frames, f + 1 == o->session.frames);
        app_watchdog_beat(dog);
        /* The processes of a run over several stop after the same frame, for a signal or a full
         * disk on any of them, or the ones still running would wait in the next step's
         * all-reduce for ever. (The frame's own failures, a blow-up, happen on all of them.) */
        const int log_failed = r->log_error.status != SIM_OK;
        int failed = log_failed;
        end.signal = app_stop_signal();
        end.status = sim_session_agree_stop(r->session, &end.signal, &failed, err);
        if (end.status == SIM_OK && log_failed) {
            /* A full disk: sim_run_frame dropped the log and said why (a warning). */
            *err = r->log_error;
            end.status = r->log_error.status;
            end.told = r->warning != NULL || r->notice != NULL;
        } else if (end.status == SIM_OK && failed) {
            end.status = sim_fail(err, SIM_IO,
                                  "another process of the run could not write its outputs; every "
                                  "process stopped after frame %ld",
                                  f + 1);
        } else if (end.status == SIM_OK && end.signal != 0) {
            end.status = SIM_INTERRUPTED;
        }
        if (end.status != SIM_OK && end.status != SIM_INTERRUPTED) {
            end.frame = f + 1;
        }
    }
    if (bar.show && end.status != SIM_OK) {
        fputc('\n', stderr);
    }
    return end;
}

/* Appends "name path" to a list of completed outputs. */
static void completed(char *list, size_t cap, const char *name, const char *path) {
    const size_t len = strlen(list);
    snprintf(list + len, cap - len, "%s%s %s", len ? ", " : "", name, path);
}

static const char *stop_name(sim_status st) {
    return st == SIM_OK            ? "done"
           : st == SIM_INTERRUPTED ? "interrupted"
           : st == SIM_UNSTABLE    ? "unstable"
                                   : "failed";
}

/* What the run did of a frame that a signal stopped, for the messages: ", and 3 of the 10
 * steps of frame 5 (kept in the state)", or "". */
static void partial_text(const sim_run_info *info, char *out, size_t cap) {
    out[0] = '\0';
    if (info->partial_steps > 0) {
        snprintf(out, cap, ", and %d of the %d steps of frame %llu (kept in the state)",
                 info->partial_steps, info->params.steps_per_frame,
                 (unsigned long long)info->frame + 1);
    }
}

/* setup_s: how long the initial forces took. *dog (a run over processes) is stopped once the
 * frames are over: what follows waits on no other process. plotter: what draws --plot. */
static int run(sim_run *r, const app_options *opt, const app_plotter *plotter, double started_ms,
               double setup_s, app_watchdog **dog) {
    sim_error err;
    sim_error_clear(&err);
    const sim_run_info *info = sim_session_info(r->session);
    if (!opt->quiet) {
        print_banner(info);
        announce_frame_time(info, setup_s);
    }
    sim_status st;
    /* --plot draws the timing log: without --log it goes to a temporary file. */
    char plot_log[64] = "";
    const char *log_path = opt->log_path;
    if (opt->plot_path[0] && !log_path[0]) {
        snprintf(plot_log, sizeof plot_log, "/tmp/nbsim-plot-%ld.csv", (long)getpid());
        log_path = plot_log;
    }
    if (log_path[0] && (st = sim_timing_log_open(&r->log, log_path, &err)) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        return app_exit_code(st);
    }
    if (opt->dump_path[0] && (st = sim_session_dump_start(r->session, opt->dump_path,
                                                          opt->dump_every, &err)) != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        sim_timing_log_abandon(&r->log);
        return app_exit_code(st);
    }
    const run_end end = run_frames(r, opt, *dog, &err);
    app_watchdog_stop(*dog);
    *dog = NULL;
    const int sig = end.signal;
    int code = end.status == SIM_OK ? APP_EXIT_OK : APP_EXIT_FAILURE;
    if (end.status == SIM_INTERRUPTED) {
        code = 128 + sig;
    } else if (end.status == SIM_UNSTABLE) {
        fprintf(stderr, "nbsim: simulation stopped at frame %ld: %s\n", end.frame, err.message);
    } else if (end.status != SIM_OK && !end.told) {
        fprintf(stderr, "nbsim: %s\n", err.message);
    }

    /* Whatever ran is kept: the log holds complete rows up to the last finished frame, and an
     * interrupted run still writes its summary and state (so it can be resumed). */
    char done_list[3 * SIM_PATH_MAX + 64] = "";
    sim_error werr;
    sim_error_clear(&werr);
    if (opt->dump_path[0]) {
        sim_dump_stats ds;
        memset(&ds, 0, sizeof ds);
        if (sim_session_dump_stop(r->session, &ds, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        }
        if (ds.frames > 0) {
            completed(done_list, sizeof done_list, "trajectory", opt->dump_path);
            if (!opt->quiet) {
                char line[SIM_PATH_MAX + 256];
                sim_dump_summary(opt->dump_path, opt->dump_every, &ds, line, sizeof line);
                fprintf(stderr, "nbsim: %s\n", line);
            }
        }
    }
    int log_ok = 0; /* the log is complete at its path */
    if (r->log.file != NULL) {
        if (sim_timing_log_close(&r->log, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        } else {
            log_ok = 1;
            if (!plot_log[0]) {
                completed(done_list, sizeof done_list, "log", opt->log_path);
            }
        }
    }
    const int any_stdout = strcmp(opt->log_path, "-") == 0 || strcmp(opt->summary_path, "-") == 0 ||
                           strcmp(opt->save_state_path, "-") == 0 ||
                           strcmp(opt->plot_path, "-") == 0;
    if (r->stats.count > 0 && sim_session_config_writes_outputs(&opt->session)) {
        sim_run_stats_print(&r->stats, info, any_stdout ? stderr : stdout);
    }
    if (opt->summary_path[0]) {
        char detail[SIM_ERROR_MESSAGE_MAX] = "";
        if (end.status == SIM_INTERRUPTED) {
            char partial[128];
            partial_text(info, partial, sizeof partial);
            snprintf(detail, sizeof detail, "%s%s", app_signal_name(sig), partial);
        } else if (end.status != SIM_OK) {
            snprintf(detail, sizeof detail, "%s", err.message);
        }
        const sim_run_end how = {opt->session.frames,
                                 opt->session.seed,
                                 sim_scene_is_builtin(info->scene),
                                 stop_name(end.status),
                                 (uint64_t)end.frame,
                                 detail,
                                 (sim_now_ms() - started_ms) * 1e-3};
        if (sim_run_stats_write_json(&r->stats, info, &how, opt->summary_path, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        } else {
            completed(done_list, sizeof done_list, "summary", opt->summary_path);
        }
    }
    /* A blown-up state is not worth resuming; a finished or interrupted one is. */
    if ((end.status == SIM_OK || end.status == SIM_INTERRUPTED) && opt->save_state_path[0]) {
        if (sim_session_save_state(r->session, opt->save_state_path, &werr) != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", werr.message);
            code = code ? code : APP_EXIT_FAILURE;
        } else {
            completed(done_list, sizeof done_list, "state", opt->save_state_path);
        }
    }
    /* The picture last, from the complete log, so that a failure can say what else is complete
     * (never the temporary log of a run without --log). */
    if (opt->plot_path[0] && r->stats.count > 0 && log_ok) {
        if (app_plot_png(plotter, log_path, opt->plot_path, &werr) == SIM_OK) {
            completed(done_list, sizeof done_list, "plot", opt->plot_path);
        } else {
            const int ran_well = end.status == SIM_OK && code == APP_EXIT_OK;
            fprintf(stderr, "nbsim: --plot: %s%s%s%s\n", werr.message,
                    ran_well && done_list[0] ? " (complete: " : "", ran_well ? done_list : "",
                    ran_well && done_list[0] ? ")" : "");
            code = code ? code : app_exit_code(werr.status);
        }
    }
    if (plot_log[0]) {
        remove(plot_log);
    }
    const unsigned long long frames = (unsigned long long)info->frame;
    if (end.status == SIM_INTERRUPTED) {
        char partial[128];
        partial_text(info, partial, sizeof partial);
        fprintf(stderr, "nbsim: stopped by %s after %llu frame%s%s; %s%s\n", app_signal_name(sig),
                frames, frames == 1 ? "" : "s", partial,
                done_list[0] ? "complete: " : "no output files were asked for", done_list);
    } else if (end.status != SIM_OK && done_list[0]) {
        fprintf(stderr, "nbsim: after %llu complete frame%s, complete: %s\n", frames,
                frames == 1 ? "" : "s", done_list);
    }
    return code;
}

/* The watchdog's last resort (watchdog.h): this process waits for others that do not answer. */
static void give_up(int sig, void *ctx) {
    const app_options *opt = ctx;
    fprintf(stderr,
            "nbsim: stopped by %s, but this process still waits on the run's others (one may have "
            "ended or be stuck): exiting without finishing the outputs\n",
            app_signal_name(sig));
    sim_output_remove_unfinished();
    if (opt->session.rank == 0 && opt->session.nccl_id_path[0]) {
        (void)remove(opt->session.nccl_id_path); /* never handed out, or spent */
    }
    _exit(128 + sig);
}

/* Seconds a process of a run over several waits, after a signal, beyond twice its longest
 * frame, before it decides the others are gone. */
#define WATCHDOG_GRACE_S 10.0

int app_run_headless(const app_options *opt) {
    /* What draws --plot, found before any work: a run is not worth minutes if its picture
     * cannot be drawn (exit 1: what this machine lacks). */
    static app_plotter plotter;
    if (opt->plot_path[0]) {
        sim_error perr;
        const sim_status pst = app_plotter_find(&plotter, "--plot", &perr);
        if (pst != SIM_OK) {
            fprintf(stderr, "nbsim: %s\n", perr.message);
            return app_exit_code(pst);
        }
    }
    app_stop_signals_begin();
    app_watchdog *dog =
        opt->session.world > 1
            ? app_watchdog_start(app_stop_flag(), WATCHDOG_GRACE_S, give_up, (void *)opt)
            : NULL;
    const double started_ms = sim_now_ms();
    sim_error err;
    sim_error_clear(&err);
    sim_run r;
    memset(&r, 0, sizeof r);
    r.energy_every = opt->session.energy_every;
    r.energy_collective = opt->session.world > 1;
    /* --quiet: warnings and failures only; ranks but 0 of a run over processes: neither (rank 0
     * says them for the run) */
    r.notice = opt->quiet ? NULL : print_notice;
    r.warning = sim_session_config_writes_outputs(&opt->session) ? print_notice : NULL;
    int code;
    double setup_s = 0.0;
    sim_session_config config = opt->session;
    config.config.stop = app_stop_flag(); /* signals.h: the backend stops on it */
    sim_status st = sim_session_prepare(&r.session, &config, &err);
    if (st == SIM_OK) {
        sim_run_notices(&r);
        if (!opt->quiet) {
            announce_long_frames(sim_session_info(r.session));
        }
        const double t0 = sim_now_ms();
        st = sim_session_start(r.session, &err);
        setup_s = (sim_now_ms() - t0) * 1e-3;
        app_watchdog_beat(dog);
    }
    if (st == SIM_INTERRUPTED) {
        const int sig = app_stop_signal();
        fprintf(stderr, "nbsim: stopped by %s before the first frame; no output files written\n",
                app_signal_name(sig));
        code = 128 + sig;
    } else if (st != SIM_OK) {
        fprintf(stderr, "nbsim: %s\n", err.message);
        code = app_setup_exit_code(st);
    } else {
        code = run(&r, opt, &plotter, started_ms, setup_s, &dog);
    }
    app_watchdog_stop(dog);
    sim_run_stats_free(&r.stats);
    sim_session_close(r.session);
    app_stop_signals_end();
    return code;
}
