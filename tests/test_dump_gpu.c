/* SPDX-License-Identifier: MIT
 * nbsim — the asynchronous capture of the CUDA backend (exits 77 without a device): the pinned
 * copies hold exactly what read_state returns, the capture call returns without waiting for
 * them, and the recorder's last frame equals the backend's state. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/internal/backend.h"
#include "session/recorder.h"
#include "nbsim/trajectory.h"

#include "ensure.h"
#include "test_gpu_util.h"

#include <stdlib.h>
#include <unistd.h>

static sim_backend *cuda_backend(uint32_t n, sim_state *initial) {
    const gpu_scene def = {n, 0.05, 0.98, 0.5, 11};
    sim_params p = sim_params_default();
    sim_error err = {SIM_OK, ""};
    if (gpu_scene_make(&def, initial, &p.box_half, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    p.dt = 1e-5;
    p.steps_per_frame = 2;
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CUDA;
    sim_backend *b = NULL;
    if (sim_backend_create(&c, &p, initial, &b, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    return b;
}

static void test_capture_equals_read_state(void) {
    const uint32_t n = 30000;
    sim_state init = {0};
    sim_backend *b = cuda_backend(n, &init);
    sim_error err = {SIM_OK, ""};
    sim_frame_timing t;
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    sim_capture c;
    ENSURE(sim_backend_capture_alloc(b, &c, &err) == SIM_OK && c.pinned);
    ENSURE(sim_backend_capture(b, &c, &err) == SIM_OK && c.pending);
    ENSURE(sim_capture_wait(&c, &err) == SIM_OK && !c.pending);
    gpu_snapshot snap;
    ENSURE(gpu_snapshot_take(b, n, &snap, &err) == SIM_OK);
    /* Culling keeps the bodies sorted on the device: the capture carries the order and the
     * writer puts them back; after that they must be read_state's bit for bit. */
    ENSURE(c.has_order);
    sim_vec4f *pos = malloc((size_t)n * sizeof *pos), *vel = malloc((size_t)n * sizeof *vel),
              *force = malloc((size_t)n * sizeof *force);
    const sim_vec4f *up = NULL, *uv = NULL, *uf = NULL;
    int same = pos != NULL && vel != NULL && force != NULL;
    if (same) {
        sim_capture_user_order(&c, pos, vel, force, &up, &uv, &uf);
    }
    for (uint32_t i = 0; same && i < n; ++i) {
        same = up[i].x == snap.state.pos[i].x && up[i].y == snap.state.pos[i].y &&
               up[i].z == snap.state.pos[i].z && up[i].w == snap.state.pos[i].w &&
               uv[i].x == snap.state.vel[i].x && uv[i].w == snap.state.vel[i].w &&
               uf[i].x == snap.force[i].x && uf[i].z == snap.force[i].z;
    }
    ENSURE_MSG(same, "the capture differs from read_state");
    free(pos);
    free(vel);
    free(force);
    gpu_snapshot_free(&snap);
    sim_capture_free(&c);
    sim_backend_destroy(b);
    sim_state_free(&init);
}

static void test_capture_is_asynchronous(void) {
    /* 2^20 bodies: 48 MiB of copies, milliseconds of DMA; the call itself only enqueues. */
    const uint32_t n = 1u << 20;
    sim_state init = {0};
    sim_backend *b = cuda_backend(n, &init);
    sim_error err = {SIM_OK, ""};
    sim_capture c;
    ENSURE(sim_backend_capture_alloc(b, &c, &err) == SIM_OK);
    double call_ms = 1e30, wait_ms = 0.0;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = sim_now_ms();
        ENSURE(sim_backend_capture(b, &c, &err) == SIM_OK);
        const double t1 = sim_now_ms();
        ENSURE(sim_capture_wait(&c, &err) == SIM_OK);
        const double t2 = sim_now_ms();
        if (t1 - t0 < call_ms) {
            call_ms = t1 - t0;
            wait_ms = t2 - t1;
        }
    }
    printf("capture of %u bodies: the call %.3f ms, the copies landing %.3f ms later\n", n, call_ms,
           wait_ms);
    ENSURE_MSG(call_ms < 1.0, "the capture call took %.3f ms: it should only enqueue", call_ms);
    sim_capture_free(&c);
    sim_backend_destroy(b);
    sim_state_free(&init);
}

static void test_recorder_cuda(void) {
    const uint32_t n = 20000;
    sim_state init = {0};
    sim_backend *b = cuda_backend(n, &init);
    sim_error err = {SIM_OK, ""};
    char dir[] = "/tmp/nbsim_test_dump_gpu_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    const char *ext[] = {"xyz", "nc"};
    for (int k = 0; k < 2; ++k) {
        if (k == 1 && !sim_traj_netcdf_available()) {
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/run.%s", dir, ext[k]);
        sim_dump *d = NULL;
        ENSURE(sim_dump_open(&d, path, 2, b, &err) == SIM_OK);
        if (d == NULL) {
            continue;
        }
        uint64_t steps = 0;
        ENSURE(sim_dump_frame(d, b, 0, 0, 0.0, NULL, &err) == SIM_OK);
        for (int f = 1; f <= 6; ++f) {
            sim_frame_timing t;
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
            steps += (uint64_t)t.steps;
            ENSURE(sim_dump_frame(d, b, (uint64_t)f, steps, 1e-5 * (double)steps, NULL, &err) ==
                   SIM_OK);
        }
        sim_dump_stats s;
        ENSURE(sim_dump_close(d, &s, &err) == SIM_OK && s.frames == 4);
        gpu_snapshot snap;
        ENSURE(gpu_snapshot_take(b, n, &snap, &err) == SIM_OK);
        sim_params q = sim_params_default();
        sim_state back = {0};
        ENSURE_MSG(sim_traj_read_last(path, &q, &back, NULL, &err) == SIM_OK, "%s", err.message);
        int same = back.n == n;
        for (uint32_t i = 0; same && i < n; ++i) {
            same = (float)back.pos[i].x == (float)snap.state.pos[i].x &&
                   (float)back.pos[i].y == (float)snap.state.pos[i].y &&
                   (float)back.vel[i].z == (float)snap.state.vel[i].z;
        }
        ENSURE_MSG(same, "%s: the last frame is not the backend's state", path);
        sim_state_free(&back);
        gpu_snapshot_free(&snap);
        unlink(path);
    }
    rmdir(dir);
    sim_backend_destroy(b);
    sim_state_free(&init);
}

static const ensure_test tests[] = {
    {"capture_equals_read_state", test_capture_equals_read_state},
    {"capture_is_asynchronous", test_capture_is_asynchronous},
    {"recorder_cuda", test_recorder_cuda},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
