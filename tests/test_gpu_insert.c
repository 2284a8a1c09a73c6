/* SPDX-License-Identifier: MIT
 * nbsim — insertion during the run on the CUDA backend (sim/session/insert.c places the bodies on
 * the host, so the backends must agree): the CPU reference and CUDA get the same inserted bodies,
 * batch after batch, and a frictional pour grows N on the GPU without a restart, recorded as it
 * grows. The CPU-only
 * tests: test_insert.c. Skipped (77) without a device. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/insert.h"
#include "nbsim/session.h"
#include "nbsim/trajectory.h"

#include "ensure.h"
#include "test_gpu_util.h"
#include "test_tmp.h"

#include <stdlib.h>

static const char *scene_file(void) {
    const char *path = test_tmp_path("pour.scene");
    test_write_file(path, "box_half = 3\ngravity = 0, -9.81, 0\nstiffness = 1000\n"
                          "friction = 0.5\nrolling_friction = 0.05\nrestitution = 0.5\n"
                          "dt = 1e-4\nsteps_per_frame = 100\n"
                          "insert = cylinder:y,0,0,2.5,0.5,2.5\ninsert_rate = 150\n"
                          "insert_radius = uniform:0.15,0.25\ninsert_velocity = 0,-0.5,0\n"
                          "insert_seed = 3\n"
                          "x y z vx vy vz radius density\n");
    return path;
}

static sim_session *open_on(sim_backend_choice backend) {
    sim_session_config c = sim_session_config_default();
    snprintf(c.scene, sizeof c.scene, "%s", scene_file());
    c.backend = backend;
    c.triplets = SIM_TRIPLETS_OFF;
    sim_session *s = NULL;
    sim_error err;
    ENSURE_MSG(sim_session_open(&s, &c, &err) == SIM_OK, "%s", err.message);
    return s;
}

static sim_state read_state(sim_session *s) {
    sim_state st;
    sim_error err;
    ENSURE(sim_state_alloc(&st, sim_session_info(s)->n, &err) == SIM_OK);
    ENSURE_MSG(sim_session_read_state(s, &st, NULL, &err) == SIM_OK, "%s", err.message);
    return st;
}

static void run_frames(sim_session *s, int frames) {
    sim_error err;
    for (int f = 0; f < frames; ++f) {
        sim_frame_timing t;
        ENSURE_MSG(sim_session_frame(s, &t, &err) == SIM_OK, "frame %d: %s", f, err.message);
    }
}

/* The first batch before any step: the same bodies to float's rounding (the GPU holds floats);
 * the later ones, placed against bodies that moved a little differently, the same radii in the
 * same order while every batch fits (this pour leaves its region room). */
static void test_same_bodies(void) {
    sim_session *cpu = open_on(SIM_BACKEND_CHOICE_CPU), *gpu = open_on(SIM_BACKEND_CHOICE_CUDA);
    if (cpu == NULL || gpu == NULL) {
        sim_session_close(cpu);
        sim_session_close(gpu);
        return;
    }
    ENSURE(strcmp(sim_session_info(gpu)->backend, "cuda") == 0);
    ENSURE(sim_session_info(cpu)->n == sim_session_info(gpu)->n);
    sim_state a = read_state(cpu), b = read_state(gpu);
    double worst = 0.0;
    for (uint32_t i = 0; i < a.n && i < b.n; ++i) {
        worst = fmax(worst, fabs(a.pos[i].x - b.pos[i].x) + fabs(a.pos[i].y - b.pos[i].y) +
                                fabs(a.pos[i].z - b.pos[i].z) + fabs(a.pos[i].w - b.pos[i].w));
    }
    ENSURE_MSG(worst < 1e-6, "first batch: %g m apart", worst);
    sim_state_free(&a);
    sim_state_free(&b);
    run_frames(cpu, 140); /* batches at 0, ~65 and ~130 frames */
    run_frames(gpu, 140);
    const sim_run_info *ic = sim_session_info(cpu), *ig = sim_session_info(gpu);
    ENSURE_MSG(ic->inserted == ig->inserted && ic->n == ig->n, "cpu %u (%s), cuda %u (%s)", ic->n,
               ic->insertion, ig->n, ig->insertion);
    ENSURE(strstr(ig->insertion, "in 3 batches") != NULL &&
           strstr(ig->insertion, "0 found") != NULL);
    a = read_state(cpu);
    b = read_state(gpu);
    uint32_t same = 0;
    for (uint32_t i = 0; i < a.n && i < b.n; ++i) {
        same += fabs(a.pos[i].w - b.pos[i].w) <= 1e-7 * a.pos[i].w;
    }
    ENSURE_MSG(same == a.n, "%u of %u radii", same, a.n);
    sim_state_free(&a);
    sim_state_free(&b);
    sim_session_close(cpu);
    sim_session_close(gpu);
}

/* A frictional pour on the GPU: N grows batch by batch, the springs go with the state to each new
 * backend, nothing blows up, and the run saves a state that carries the insertion on. */
static void test_grows_on_gpu(void) {
    sim_session *s = open_on(SIM_BACKEND_CHOICE_CUDA);
    if (s == NULL) {
        return;
    }
    const sim_run_info *info = sim_session_info(s);
    const uint32_t n0 = info->n;
    sim_error err;
    const char *dump = test_tmp_path("gpu.lammpstrj"); /* recorded through the growth */
    ENSURE_MSG(sim_session_dump_start(s, dump, 25, &err) == SIM_OK, "%s", err.message);
    uint32_t grew = 0, last = n0;
    for (int f = 0; f < 300; ++f) {
        run_frames(s, 1);
        grew += info->n > last;
        last = info->n;
    }
    ENSURE_MSG(n0 > 0 && grew >= 4 && info->n > 4 * n0, "%u -> %u, %s", n0, info->n,
               info->insertion);
    ENSURE(info->dump_path[0] != '\0' && sim_session_dump_stop(s, NULL, &err) == SIM_OK);
    sim_params p = sim_params_default();
    sim_state frame;
    sim_traj_info ti;
    ENSURE_MSG(sim_traj_read_last(dump, &p, &frame, &ti, &err) == SIM_OK, "%s", err.message);
    ENSURE(ti.frames == 13 && frame.n == info->n); /* frames 0, 25, ..., 300 */
    sim_state_free(&frame);
    sim_state st = read_state(s);
    ENSURE(st.contact_count > 0);
    sim_state_free(&st);
    sim_energy e;
    ENSURE(sim_session_energy(s, &e, &err) == SIM_OK && isfinite(e.total));
    const char *saved = test_tmp_path("gpu.state");
    ENSURE(sim_session_save_state(s, saved, &err) == SIM_OK);
    FILE *f = fopen(saved, "r");
    char line[512];
    int found = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        found |= strncmp(line, SIM_INSERT_STATE_KEY " = ", strlen(SIM_INSERT_STATE_KEY) + 3) == 0;
    }
    if (f != NULL) {
        fclose(f);
    }
    ENSURE(found);
    sim_session_close(s);
}

static const ensure_test tests[] = {
    {"same_bodies", test_same_bodies},
    {"grows_on_gpu", test_grows_on_gpu},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    test_tmp_name = "gpu_insert";
    const int rc =
        ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
    test_tmp_remove();
    return rc;
}
