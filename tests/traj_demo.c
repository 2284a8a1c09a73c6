/* SPDX-License-Identifier: MIT
 * nbsim — a run with the trajectory recorder, for the reader checks (test_traj_readers.sh), the
 * README pictures and the GPU timings (scripts/gpu_traj.sh), until `nbsim --dump` drives the
 * recorder itself. Runs a built-in scene, dumps every K-th frame (frame 0 included) to each
 * requested format at once, and writes the final state as --save-state does, so a reader's last
 * frame can be compared with it.
 *
 *   traj_demo [--backend cpu|cuda] [--scene NAME] [--n N] [--frames F] [--every K]
 *             [--steps S] [--formats xyz,lammpstrj,nc] [--out DIR] [--no-state] [--write-only]
 *             [--keep] [--nc-version 2|5]
 *
 * --write-only times the writers alone on the scene's initial state (no backend): F frames per
 * format, one line `write_only FORMAT N ms_per_frame MB_per_frame` each; the files
 * (DIR/write_only.FORMAT) carry the scene's parameters and are removed unless --keep. With
 * --nc-version 5 the .nc is CDF-5 whatever N, as runs past TRAJ_NETCDF_CDF2_MAX_N bodies write it
 * (traj_netcdf.c), so readers can be tried on a small one.
 *
 * Prints one line per format (the recorder's summary), `writer_ms PATH MS` and `frame_ms plain X
 * after_dump Y sim_thread_dump_ms Z`: the mean frame time of frames that follow no dump and of
 * those that follow one (the GPU runs a dump's copies before the next frame's kernels), and the
 * simulation thread's mean cost per dump call, so the cost of dumping can be read off. Exit 77 when
 * the CUDA backend is asked for and there is no device. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "session/recorder.h"
#include "physics/physics.h"
#include "nbsim/scene.h"
#include "nbsim/trajectory.h"
#include "io/traj_impl.h"

#define MAX_FORMATS 3

/* The writers alone: the host cost of a frame in each format (formatting + writing). */
static int time_writers(const sim_state *s, const sim_params *p, const char *formats,
                        const char *out, long frames, int keep, int nc_version) {
    const uint32_t n = s->n;
    sim_vec4f *pos = malloc(n * sizeof *pos), *vel = malloc(n * sizeof *vel),
              *force = calloc(n, sizeof *force);
    if (pos == NULL || vel == NULL || force == NULL) {
        fprintf(stderr, "traj_demo: no memory for %u bodies\n", n);
        return 1;
    }
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4d x = s->pos[i], v = s->vel[i];
        pos[i] = (sim_vec4f){(float)x.x, (float)x.y, (float)x.z, (float)x.w};
        vel[i] = (sim_vec4f){(float)v.x, (float)v.y, (float)v.z, (float)v.w};
        force[i] = (sim_vec4f){(float)(v.x * 3.7), (float)(-v.y * 1e3), (float)v.z, 0.0f};
    }
    char list[256];
    snprintf(list, sizeof list, "%s", formats);
    char *save_ptr = NULL;
    int rc = 0;
    for (char *f = strtok_r(list, ",", &save_ptr); f != NULL; f = strtok_r(NULL, ",", &save_ptr)) {
        char path[4200];
        snprintf(path, sizeof path, "%s/write_only.%s", out, f);
        sim_error err;
        sim_error_clear(&err);
        sim_traj_writer *w = NULL;
        if (sim_traj_writer_open_params(&w, path, n, p, &err) != SIM_OK) {
            printf("skip: %s\n", err.message);
            continue;
        }
        if (nc_version != 0 && sim_traj_writer_format(w) == SIM_TRAJ_NETCDF &&
            traj_netcdf_reopen(w, nc_version, &err) != SIM_OK) {
            fprintf(stderr, "traj_demo: %s\n", err.message);
            sim_traj_writer_close(w, NULL);
            rc = 1;
            continue;
        }
        const double t0 = sim_now_ms();
        sim_status st = SIM_OK;
        for (long k = 0; k < frames && st == SIM_OK; ++k) {
            const sim_traj_frame fr = {.n = n,
                                       .step = (uint64_t)k,
                                       .time = 0.1 * (double)k,
                                       .box_half = p->box_half,
                                       .pos = pos,
                                       .vel = vel,
                                       .force = force,
                                       .periodic = p->periodic};
            st = sim_traj_writer_write(w, &fr, &err);
        }
        const double ms = (sim_now_ms() - t0) / (double)frames;
        const double mb = (double)sim_traj_writer_bytes(w) / 1e6 / (double)frames;
        if (st != SIM_OK || sim_traj_writer_close(w, &err) != SIM_OK) {
            fprintf(stderr, "traj_demo: %s\n", err.message);
            rc = 1;
        }
        printf("write_only %s %u %.1f %.1f\n", f, n, ms, mb);
        if (!keep) {
            remove(path);
        }
    }
    free(pos);
    free(vel);
    free(force);
    return rc;
}

static int usage(const char *why) {
    fprintf(stderr, "traj_demo: %s\n", why);
    return 2;
}

int main(int argc, char **argv) {
    const char *backend_name = "cpu", *scene = "pile", *formats = "xyz,lammpstrj,nc", *out = ".";
    long n = 300, frames = 40, every = 10, steps = 0, nc_version = 0;
    int save = 1, write_only = 0, keep = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-state") == 0 || strcmp(a, "--write-only") == 0 ||
            strcmp(a, "--keep") == 0) {
            save = save && strcmp(a, "--no-state") != 0;
            write_only = write_only || strcmp(a, "--write-only") == 0;
            keep = keep || strcmp(a, "--keep") == 0;
            continue;
        }
        if (v == NULL) {
            return usage("an option lacks its value");
        }
        ++i;
        if (strcmp(a, "--backend") == 0) {
            backend_name = v;
        } else if (strcmp(a, "--scene") == 0) {
            scene = v;
        } else if (strcmp(a, "--n") == 0) {
            n = atol(v);
        } else if (strcmp(a, "--frames") == 0) {
            frames = atol(v);
        } else if (strcmp(a, "--every") == 0) {
            every = atol(v);
        } else if (strcmp(a, "--steps") == 0) {
            steps = atol(v);
        } else if (strcmp(a, "--formats") == 0) {
            formats = v;
        } else if (strcmp(a, "--out") == 0) {
            out = v;
        } else if (strcmp(a, "--nc-version") == 0) {
            nc_version = atol(v);
        } else {
            return usage(a);
        }
    }
    if (n < 1 || frames < 0 || every < 1) {
        return usage("need n >= 1, frames >= 0, every >= 1");
    }
    if (nc_version != 0 && ((nc_version != 2 && nc_version != 5) || !write_only)) {
        return usage("--nc-version takes 2 or 5, with --write-only");
    }
    sim_error err;
    sim_error_clear(&err);
    sim_backend_config config = sim_backend_config_default();
    config.kind = strcmp(backend_name, "cuda") == 0 ? SIM_BACKEND_CUDA : SIM_BACKEND_CPU;
    if (config.kind == SIM_BACKEND_CUDA && sim_cuda_device_count() == 0) {
        printf("skip: no CUDA device\n");
        return 77;
    }
    sim_params params = sim_params_default();
    if (steps > 0) {
        params.steps_per_frame = (int)steps;
    }
    sim_state state = {0};
    sim_backend *b = NULL;
    if (sim_scene_builtin(scene, (uint32_t)n, 1, &params, &state, &err) != SIM_OK) {
        fprintf(stderr, "traj_demo: %s\n", err.message);
        return 1;
    }
    params.dt = sim_default_dt(&params, &state); /* as the session does: time = steps * dt */
    if (write_only) {
        return time_writers(&state, &params, formats, out, frames > 0 ? frames : 1, keep,
                            (int)nc_version);
    }
    if (sim_backend_create(&config, &params, &state, &b, &err) != SIM_OK) {
        fprintf(stderr, "traj_demo: %s\n", err.message);
        return 1;
    }
    params = *sim_backend_get_params(b);
    sim_dump *dumps[MAX_FORMATS] = {NULL, NULL, NULL};
    char paths[MAX_FORMATS][4200];
    int count = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", formats);
    char *save_ptr = NULL;
    for (char *f = strtok_r(list, ",", &save_ptr); f != NULL && count < MAX_FORMATS;
         f = strtok_r(NULL, ",", &save_ptr)) {
        if (strcmp(f, "none") == 0) {
            continue; /* a run without dumps, for comparison */
        }
        if (strcmp(f, "nc") == 0 && !sim_traj_netcdf_available()) {
            printf("skip: .nc (this build has no NetCDF)\n");
            continue;
        }
        snprintf(paths[count], sizeof paths[count], "%s/run.%s", out, f);
        if (sim_dump_open(&dumps[count], paths[count], (int)every, b, &err) != SIM_OK) {
            fprintf(stderr, "traj_demo: %s\n", err.message);
            return 1;
        }
        ++count;
    }
    uint64_t step_count = 0;
    double time = 0.0, plain_ms = 0.0, dump_frame_ms = 0.0, dump_sim_ms = 0.0;
    long plain = 0, dumped = 0, dump_calls = 0;
    sim_status st = SIM_OK;
    for (long f = 0; f <= frames && st == SIM_OK; ++f) {
        double frame_ms = 0.0;
        if (f > 0) {
            sim_frame_timing t;
            const double t0 = sim_now_ms();
            st = sim_backend_run_frame(b, &t, &err);
            frame_ms = sim_now_ms() - t0;
            step_count += (uint64_t)t.steps;
            time = (double)step_count * params.dt;
        }
        double ms_all = 0.0;
        for (int k = 0; k < count && st == SIM_OK; ++k) {
            double ms = 0.0;
            st = sim_dump_frame(dumps[k], b, (uint64_t)f, step_count, time, &ms, &err);
            ms_all += ms;
        }
        /* The GPU runs a dump's copies in stream order before the next frame's kernels, so their
         * cost shows in the frame after a dump. Frame 1 is left out (warm-up). */
        if (f > 1 && (f - 1) % every == 0) {
            dump_frame_ms += frame_ms;
            ++dumped;
        } else if (f > 1) {
            plain_ms += frame_ms;
            ++plain;
        }
        if (f % every == 0) {
            dump_sim_ms += ms_all;
            ++dump_calls;
        }
    }
    if (st != SIM_OK) {
        fprintf(stderr, "traj_demo: %s\n", err.message);
    }
    for (int k = 0; k < count; ++k) {
        sim_dump_stats s;
        sim_error cerr;
        sim_error_clear(&cerr);
        if (sim_dump_close(dumps[k], &s, &cerr) != SIM_OK) {
            fprintf(stderr, "traj_demo: %s\n", cerr.message);
            st = st == SIM_OK ? cerr.status : st;
        }
        char line[1024];
        sim_dump_summary(paths[k], (int)every, &s, line, sizeof line);
        printf("%s\n", line);
        printf("writer_ms %s %.3f\n", paths[k], s.frames ? s.write_ms_total / (double)s.frames : 0);
    }
    printf("frame_ms plain %.3f after_dump %.3f sim_thread_dump_ms %.4f (n %ld, %s)\n",
           plain ? plain_ms / (double)plain : 0.0, dumped ? dump_frame_ms / (double)dumped : 0.0,
           dump_calls ? dump_sim_ms / (double)dump_calls : 0.0, n, sim_backend_device_name(b));
    if (st == SIM_OK && save) {
        char path[4200];
        snprintf(path, sizeof path, "%s/final.scene", out);
        sim_state final = {0};
        sim_vec3d *force = calloc((size_t)n, sizeof *force);
        st = force ? sim_state_alloc(&final, (uint32_t)n, &err) : SIM_OUT_OF_MEMORY;
        if (st == SIM_OK) {
            st = sim_backend_read_state(b, &final, force, &err);
        }
        if (st == SIM_OK) {
            st = sim_state_save(path, &params, &final, force, &err);
        }
        if (st != SIM_OK) {
            fprintf(stderr, "traj_demo: %s\n", err.message);
        }
        free(force);
        sim_state_free(&final);
    }
    sim_backend_destroy(b);
    sim_state_free(&state);
    return st == SIM_OK ? 0 : 1;
}
