/* SPDX-License-Identifier: MIT
 * nbsim — stopping the CUDA backend (nbsim/config.h: config.stop), the flag raised by another thread
 * as a signal handler would raise it. Long steps (seconds of GPU time without culling) are
 * launched in slices and stop between them; the tests ask for SIM_INTERRUPTED within a second of
 * the flag, for the steps completed, and for the state of the last of them:
 *  - a flag raised before sim_backend_create: no backend (the initial forces stop too);
 *  - raised in the first step of a frame: no step kept, the state bit for bit as before;
 *  - raised in a later step: that step rolled back, the state equal to a run of the steps kept
 *    (a second backend without a flag) up to float summation order (the kernels add forces with
 *    atomics, in no fixed order: test_gpu_backend.c's per-step tolerances, 4x), and the pair and
 *    triplet times per step within a factor 1.5 of the unsliced run's (the events around a phase
 *    enclose its slices);
 *  - a long frame of short (culled) steps stops between two of them, within a second.
 * Cases: the ltm map at N = 2,000,000 (~0.7 s a step on an H100), the full sweep at N = 1.5M, and
 * the tetra triplet map at N = 16,384 (~1 s) with culled contacts re-sorting every step (the
 * sort swaps buffers and the body order: both come back). Skipped (77) without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "stop_raiser.h"
#include "test_gpu_util.h"

#define TOL_POS_PER_STEP 1e-6 /* times box_half (test_gpu_backend.c) */
#define TOL_VEL_PER_STEP 1e-5
#define TOL_F_L2 1e-5
#define SLACK 4.0
#define FLOOR 0.1

static volatile sig_atomic_t flag;

typedef struct {
    const char *what;
    uint32_t n;
    sim_pair_choice pair_map;
    int cull;
    int sort_every;
    int triplets;
} stop_case;

static sim_backend_config config_of(const stop_case *c, int watched) {
    sim_backend_config k = sim_backend_config_default();
    k.kind = SIM_BACKEND_CUDA;
    k.pair_map = c->pair_map;
    k.triplet_map = SIM_TRIPLET_MAP_TETRA;
    k.tile = 64;
    k.cull = c->cull;
    k.sort_every = c->sort_every;
    k.stop = watched ? &flag : NULL;
    return k;
}

static sim_status set_steps(sim_backend *b, int steps, sim_error *err) {
    sim_params p = *sim_backend_get_params(b);
    p.steps_per_frame = steps;
    return sim_backend_set_params(b, &p, err);
}

/* A frame of `steps` steps with the flag raised after delay_ms: its status and timing, and how
 * long after the flag it came back [ms]. */
static sim_status stopped_frame(sim_backend *b, int steps, double delay_ms, sim_frame_timing *t,
                                double *late_ms, sim_error *err) {
    flag = 0;
    ENSURE(set_steps(b, steps, err) == SIM_OK);
    stop_raiser r;
    stop_raiser_start(&r, &flag, delay_ms);
    const sim_status st = sim_backend_run_frame(b, t, err);
    const double back_ms = sim_now_ms();
    stop_raiser_join(&r);
    *late_ms = back_ms - r.raised_ms;
    flag = 0;
    return st;
}

static int same_bits(const gpu_snapshot *a, const gpu_snapshot *b) {
    const size_t n = a->state.n;
    return memcmp(a->state.pos, b->state.pos, n * sizeof *a->state.pos) == 0 &&
           memcmp(a->state.vel, b->state.vel, n * sizeof *a->state.vel) == 0 &&
           memcmp(a->force, b->force, n * sizeof *a->force) == 0;
}

/* The state of a (stopped) backend against a run of the same steps without a flag. */
static void compare_states(const char *what, const gpu_snapshot *a, const gpu_snapshot *ref,
                           int steps, double box_half) {
    const uint32_t n = ref->state.n;
    const gpu_err f = gpu_compare3(a->force, ref->force, n, FLOOR);
    const gpu_err x = gpu_compare_pos(&a->state, &ref->state, FLOOR);
    const gpu_err v = gpu_compare_vel(&a->state, &ref->state, FLOOR);
    const double k = steps > 0 ? steps : 1;
    printf("  %-26s after %d steps: F %.1e  x %.1e  v %.1e\n", what, steps, f.rel_l2, x.max_abs,
           v.worst);
    ENSURE_MSG(f.rel_l2 <= SLACK * TOL_F_L2, "%s: forces rel %.3g", what, f.rel_l2);
    ENSURE_MSG(x.max_abs <= SLACK * TOL_POS_PER_STEP * box_half * k, "%s: positions differ by %.3g",
               what, x.max_abs);
    ENSURE_MSG(v.worst <= SLACK * TOL_VEL_PER_STEP * k, "%s: velocity of body %u rel %.3g", what,
               v.worst_body, v.worst);
}

/* Phase times per step of a sliced run against an unsliced one: slicing costs less than half
 * again (a coarse bound on one step each: the test runs alone, RUN_SERIAL, but a GPU's clocks
 * still vary; the whole run being slower says nothing about slicing, so it is only shown). */
static void compare_times(const char *what, const char *phase, double sliced, double whole) {
    printf("  %-26s %s per step: %.1f ms sliced, %.1f ms whole\n", what, phase, sliced, whole);
    ENSURE_MSG(sliced <= 1.5 * whole, "%s: %s %.1f ms per step sliced, %.1f ms whole", what, phase,
               sliced, whole);
}

static void run_case(const stop_case *c) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {c->n, 0.5, 0.95, 0.5, 4242u + c->n};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = sim_params_default();
    p.box_half = box_half;
    p.gravity = (sim_vec3d){0.0, 0.0, -9.81};
    p.triplets = c->triplets;
    p.atm_nu = c->triplets ? 0.01 : 0.0;
    p.atm_cutoff = 0.0;
    p.steps_per_frame = 1;
    const sim_backend_config cw = config_of(c, 1), cr = config_of(c, 0);

    /* raised before: the initial forces stop, no backend */
    sim_backend *none = NULL;
    flag = 1;
    ENSURE_MSG(sim_backend_create(&cw, &p, &s0, &none, &err) == SIM_INTERRUPTED && none == NULL,
               "%s: create with the flag raised: %s", c->what, err.message);
    flag = 0;

    const double t0 = sim_now_ms();
    sim_backend *b = NULL;
    ENSURE_MSG(sim_backend_create(&cw, &p, &s0, &b, &err) == SIM_OK, "%s: %s", c->what,
               err.message);
    const double setup_ms = sim_now_ms() - t0;
    if (b == NULL) {
        sim_state_free(&s0);
        return;
    }

    /* in the first step: nothing kept, the state as it was */
    gpu_snapshot before, after, ref_snap;
    ENSURE(gpu_snapshot_take(b, c->n, &before, &err) == SIM_OK);
    sim_frame_timing t;
    double late_ms;
    sim_status st = stopped_frame(b, 4, 0.3 * setup_ms, &t, &late_ms, &err);
    printf("  %-26s initial forces %.0f ms; stopped in step 1: %s, %d steps, %.0f ms after the "
           "flag\n",
           c->what, setup_ms, sim_status_string(st), t.steps, late_ms);
    ENSURE_MSG(st == SIM_INTERRUPTED && t.steps == 0, "%s: %s, %d steps", c->what,
               sim_status_string(st), t.steps);
    ENSURE_MSG(late_ms < 1000.0, "%s: back %.0f ms after the flag", c->what, late_ms);
    ENSURE(gpu_snapshot_take(b, c->n, &after, &err) == SIM_OK);
    ENSURE_MSG(same_bits(&before, &after), "%s: a step stopped in its middle changed the state",
               c->what);
    gpu_snapshot_free(&after);

    /* in a later step: the steps before it kept, it rolled back */
    st = stopped_frame(b, 4, 1.5 * setup_ms, &t, &late_ms, &err);
    printf("  %-26s stopped later: %s, %d steps, %.0f ms after the flag\n", c->what,
           sim_status_string(st), t.steps, late_ms);
    ENSURE_MSG(st == SIM_INTERRUPTED && t.steps < 4, "%s: %s, %d steps", c->what,
               sim_status_string(st), t.steps);
    ENSURE_MSG(late_ms < 1000.0, "%s: back %.0f ms after the flag", c->what, late_ms);
    const int kept = t.steps;

    sim_backend *ref = NULL;
    ENSURE(sim_backend_create(&cr, &p, &s0, &ref, &err) == SIM_OK);
    if (ref != NULL && kept > 0) {
        sim_frame_timing tr;
        ENSURE(set_steps(ref, kept, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(ref, &tr, &err) == SIM_OK && tr.steps == kept);
        if (!c->cull) { /* culled contacts take ~1 ms: too short to compare */
            compare_times(c->what, "pair_ms", t.pair_ms / kept, tr.pair_ms / kept);
        }
        if (c->triplets) {
            compare_times(c->what, "triplet_ms", t.triplet_ms / kept, tr.triplet_ms / kept);
        }
    }
    if (ref != NULL) {
        ENSURE(gpu_snapshot_take(b, c->n, &after, &err) == SIM_OK);
        ENSURE(gpu_snapshot_take(ref, c->n, &ref_snap, &err) == SIM_OK);
        compare_states(c->what, &after, &ref_snap, kept, box_half);
        gpu_snapshot_free(&after);
        gpu_snapshot_free(&ref_snap);
        /* and on from there: one more step each */
        sim_frame_timing t1, t2;
        ENSURE(set_steps(b, 1, &err) == SIM_OK && set_steps(ref, 1, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b, &t1, &err) == SIM_OK && t1.steps == 1);
        ENSURE(sim_backend_run_frame(ref, &t2, &err) == SIM_OK && t2.steps == 1);
        ENSURE(gpu_snapshot_take(b, c->n, &after, &err) == SIM_OK);
        ENSURE(gpu_snapshot_take(ref, c->n, &ref_snap, &err) == SIM_OK);
        compare_states(c->what, &after, &ref_snap, kept + 1, box_half);
        gpu_snapshot_free(&after);
        gpu_snapshot_free(&ref_snap);
        sim_backend_destroy(ref);
    }
    gpu_snapshot_free(&before);
    sim_backend_destroy(b);
    sim_state_free(&s0);
}

static void test_stop_pairs_ltm(void) {
    const stop_case c = {"ltm, N = 2,000,000", 2000000, SIM_PAIR_MAP_LTM, 0, 0, 0};
    run_case(&c);
}

static void test_stop_pairs_full(void) {
    const stop_case c = {"full, N = 1,500,000", 1500000, SIM_PAIR_FULL, 0, 0, 0};
    run_case(&c);
}

static void test_stop_triplets(void) {
    const stop_case c = {"tetra, N = 16,384, culled", 16384, SIM_PAIR_MAP_LTM, 1, 1, 1};
    run_case(&c);
}

/* Short culled steps (~0.5 ms at N = 1,048,576 on an H100): a frame of 20,000 of them (~10 s;
 * the flag after one, its 140,000 timing events made by then) stops between two of them, within
 * a second. */
static void test_stop_short_steps(void) {
    const stop_case c = {"short steps", 1048576, SIM_PAIR_MAP_LTM, 1, 0, 0};
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {c.n, 0.5, 0.95, 0.5, 99u};
    ENSURE(gpu_scene_make(&def, &s0, &box_half, &err) == SIM_OK);
    sim_params p = sim_params_default();
    p.box_half = box_half;
    p.steps_per_frame = 20;
    const sim_backend_config cw = config_of(&c, 1);
    sim_backend *b = NULL;
    flag = 0;
    ENSURE_MSG(sim_backend_create(&cw, &p, &s0, &b, &err) == SIM_OK, "%s", err.message);
    if (b == NULL) {
        sim_state_free(&s0);
        return;
    }
    sim_frame_timing t;
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.steps == 20); /* times a step */
    double late_ms;
    const sim_status st = stopped_frame(b, 20000, 1000.0, &t, &late_ms, &err);
    printf("  %-26s %s after %d of 20000 steps (%.3f ms each), %.0f ms after the flag\n", c.what,
           sim_status_string(st), t.steps, t.steps > 0 ? t.step_ms / t.steps : 0.0, late_ms);
    ENSURE_MSG(st == SIM_INTERRUPTED && t.steps > 0 && t.steps < 20000, "%s, %d steps",
               sim_status_string(st), t.steps);
    ENSURE_MSG(late_ms < 1000.0, "back %.0f ms after the flag", late_ms);
    sim_backend_destroy(b);
    sim_state_free(&s0);
}

static const ensure_test tests[] = {
    {"stop_pairs_ltm", test_stop_pairs_ltm},
    {"stop_pairs_full", test_stop_pairs_full},
    {"stop_triplets", test_stop_triplets},
    {"stop_short_steps", test_stop_short_steps},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
