/* SPDX-License-Identifier: MIT
 * nbsim — what the viewer writes: the timing log (L, or --log from the start), trajectories
 * (D, or --dump from the start) and screenshots (P/F12, or --screenshot at exit). Names the user
 * did not give are timestamped, and never overwrite an existing file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "screenshot.h"
#include "viewer_internal.h"

/* "<prefix>-YYYYmmdd-HHMMSS<ext>" in the working directory; "-2", "-3", ... when taken (two
 * screenshots in one second). */
static void timestamped(char *out, size_t cap, const char *prefix, const char *ext) {
    time_t now = time(NULL);
    struct tm local;
    localtime_r(&now, &local);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    struct stat st;
    snprintf(out, cap, "%s-%s%s", prefix, stamp, ext);
    for (int k = 2; stat(out, &st) == 0 && k < 1000; ++k) {
        snprintf(out, cap, "%s-%s-%d%s", prefix, stamp, k, ext);
    }
}

sim_status viewer_log_start(viewer_state *v, const char *path, sim_error *err) {
    char name[SIM_PATH_MAX];
    if (path == NULL || path[0] == '\0') {
        timestamped(name, sizeof name, "nbsim-log", ".csv");
        path = name;
    }
    sim_error_clear(&v->run.log_error);
    return sim_timing_log_open(&v->run.log, path, err);
}

sim_status viewer_log_stop(viewer_state *v, sim_error *err) {
    return sim_timing_log_close(&v->run.log, err);
}

void viewer_log_toggle(viewer_state *v) {
    sim_error err;
    sim_error_clear(&err);
    if (v->run.log.file != NULL) {
        unsigned long long rows = (unsigned long long)v->run.log.rows;
        char path[SIM_PATH_MAX];
        snprintf(path, sizeof path, "%s", v->run.log.out.path);
        if (viewer_log_stop(v, &err) != SIM_OK) {
            viewer_message(v, "%s", err.message);
        } else {
            viewer_message(v, "timing log written: %s (%llu frame%s)", path, rows,
                           rows == 1 ? "" : "s");
        }
        return;
    }
    /* --log names the first recording; later ones get fresh names so none is overwritten. */
    const char *path = v->log_path_used ? NULL : v->settings->log_path;
    if (viewer_log_start(v, path, &err) != SIM_OK) {
        viewer_message(v, "%s", err.message);
        return;
    }
    if (path != NULL && path[0] != '\0') {
        v->log_path_used = 1;
    }
    viewer_message(v, "recording the timing log to %s (L stops)", v->run.log.out.path);
}

sim_status viewer_screenshot(viewer_state *v, const char *path, sim_error *err) {
    char name[SIM_PATH_MAX];
    int interactive = path == NULL;
    if (interactive) {
        timestamped(name, sizeof name, "nbsim", ".png");
        path = name;
    }
    sim_status st = render_screenshot_write(path, v->window.fb_width, v->window.fb_height, err);
    if (st == SIM_OK && interactive) {
        viewer_message(v, "screenshot written: %s", path);
    }
    return st;
}

void viewer_dump_toggle(viewer_state *v) {
    sim_error err;
    sim_error_clear(&err);
    const sim_run_info *info = viewer_info(v);
    if (info->dump_path[0] != '\0') {
        char path[SIM_PATH_MAX];
        snprintf(path, sizeof path, "%s", info->dump_path);
        sim_dump_stats ds;
        memset(&ds, 0, sizeof ds);
        if (sim_session_dump_stop(v->run.session, &ds, &err) != SIM_OK) {
            viewer_message(v, "%s", err.message);
        } else {
            viewer_message(v, "trajectory written: %s (%llu frame%s)", path,
                           (unsigned long long)ds.frames, ds.frames == 1 ? "" : "s");
        }
        return;
    }
    char name[SIM_PATH_MAX];
    const char *path = v->dump_path_used ? "" : v->settings->dump_path;
    if (path[0] == '\0') {
        timestamped(name, sizeof name, "nbsim", ".xyz");
        path = name;
    }
    if (sim_session_dump_start(v->run.session, path, v->settings->dump_every, &err) != SIM_OK) {
        viewer_message(v, "%s", err.message);
        return;
    }
    v->dump_path_used = 1;
    viewer_message(v, "recording a trajectory to %s, every %d frame%s (D stops)", path,
                   v->settings->dump_every, v->settings->dump_every == 1 ? "" : "s");
}
