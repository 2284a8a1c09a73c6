/* SPDX-License-Identifier: MIT
 * nbsim — stopping a run on the CPU reference (nbsim/config.h: config.stop): a flag raised before the
 * backend is built, before a frame, between short steps and in the middle of a long step, by
 * another thread as a signal handler would raise it. A frame stops within a second of the flag
 * with the steps it completed, and a step cut short is rolled back: the state then equals, bit
 * for bit, that of a backend that ran exactly those steps (one thread: the same summation order),
 * and both go on alike. With two threads a step stopped mid-way gives back its starting state. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "nbsim/internal/backend.h"
#include "ensure.h"
#include "test_backend_util.h"
#include "nbsim/scene.h"
#include "stop_raiser.h"

/* The flag the backends under test read. */
static volatile sig_atomic_t flag;

/* A scene and its parameters: a built-in scene, triplets and cut-off as given. */
typedef struct {
    const char *scene;
    uint32_t n;
    int triplets;
    double atm_cutoff; /* [m]; < 0: the scene's */
    int cull;
    int threads;
    int tile_triples; /* the cut-off over its tile triples (skin 0), not its neighbour lists */
} setup;

static sim_params params_of(const setup *u, sim_state *s) {
    sim_params p = sim_params_default();
    sim_error err;
    if (sim_scene_builtin(u->scene, u->n, 7, &p, s, &err) != SIM_OK) {
        fprintf(stderr, "scene %s: %s\n", u->scene, err.message);
        exit(1);
    }
    p.triplets = u->triplets;
    if (u->atm_cutoff >= 0.0) {
        p.atm_cutoff = u->atm_cutoff;
    }
    p.steps_per_frame = 1;
    if (u->tile_triples) {
        p.skin.value = 0.0;
        p.skin.set = 1;
    }
    return p;
}

static sim_backend_config config_of(const setup *u, int watched) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.cull = u->cull;
    c.cpu_threads = u->threads;
    c.stop = watched ? &flag : NULL;
    return c;
}

/* A backend's state and last forces, read back. */
typedef struct {
    sim_state s;
    sim_vec3d *f;
} readout;

static readout read_back(sim_backend *b) {
    readout r;
    sim_error err;
    const uint32_t n = sim_backend_body_count(b);
    r.f = calloc(n, sizeof *r.f);
    if (sim_state_alloc(&r.s, n, &err) != SIM_OK || r.f == NULL ||
        sim_backend_read_state(b, &r.s, r.f, &err) != SIM_OK) {
        fprintf(stderr, "read back: %s\n", err.message);
        exit(1);
    }
    return r;
}

static void readout_free(readout *r) {
    sim_state_free(&r->s);
    free(r->f);
}

/* Positions, velocities and forces identical, bit for bit. */
static int same_bits(sim_backend *a, sim_backend *b) {
    readout ra = read_back(a), rb = read_back(b);
    const size_t n = ra.s.n;
    const int same = ra.s.n == rb.s.n && memcmp(ra.s.pos, rb.s.pos, n * sizeof *ra.s.pos) == 0 &&
                     memcmp(ra.s.vel, rb.s.vel, n * sizeof *ra.s.vel) == 0 &&
                     memcmp(ra.f, rb.f, n * sizeof *ra.f) == 0;
    readout_free(&ra);
    readout_free(&rb);
    return same;
}

static int same_as(sim_backend *b, const readout *before) {
    readout r = read_back(b);
    const size_t n = r.s.n;
    const int same = memcmp(r.s.pos, before->s.pos, n * sizeof *r.s.pos) == 0 &&
                     memcmp(r.s.vel, before->s.vel, n * sizeof *r.s.vel) == 0 &&
                     memcmp(r.f, before->f, n * sizeof *r.f) == 0;
    readout_free(&r);
    return same;
}

static sim_status set_steps(sim_backend *b, int steps) {
    sim_params p = *sim_backend_get_params(b);
    p.steps_per_frame = steps;
    sim_error err;
    return sim_backend_set_params(b, &p, &err);
}

/* A frame of `steps` steps whose flag rises `delay` x (the initial forces' time) after it began:
 * SIM_INTERRUPTED within a second of the flag, fewer steps than asked, and the state of a backend
 * that ran exactly those steps, bit for bit; one more step on each keeps them equal. */
static void stop_mid_frame(const char *what, const setup *u, int steps, double delay) {
    sim_state s0;
    sim_params p = params_of(u, &s0);
    const sim_backend_config cw = config_of(u, 1), cr = config_of(u, 0);
    flag = 0;
    const double t0 = sim_now_ms();
    sim_backend *b = test_backend_make(&cw, &p, &s0, "backend");
    const double setup_ms = sim_now_ms() - t0;
    ENSURE(set_steps(b, steps) == SIM_OK);

    stop_raiser r;
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    stop_raiser_start(&r, &flag, delay * setup_ms);
    const sim_status st = sim_backend_run_frame(b, &t, &err);
    const double back_ms = sim_now_ms();
    stop_raiser_join(&r);
    ENSURE_MSG(st == SIM_INTERRUPTED, "%s: status %s (%s)", what, sim_status_string(st),
               err.message);
    ENSURE_MSG(back_ms - r.raised_ms < 1000.0, "%s: back %.0f ms after the flag", what,
               back_ms - r.raised_ms);
    ENSURE_MSG(t.steps >= 0 && t.steps < steps, "%s: %d of %d steps", what, t.steps, steps);
    printf("  %s: initial forces %.0f ms, flag after %.0f ms, back %.1f ms later, %d of %d "
           "steps kept\n",
           what, setup_ms, delay * setup_ms, back_ms - r.raised_ms, t.steps, steps);

    sim_backend *ref = test_backend_make(&cr, &p, &s0, "backend");
    if (t.steps > 0) {
        sim_frame_timing tr;
        ENSURE(set_steps(ref, t.steps) == SIM_OK);
        ENSURE(sim_backend_run_frame(ref, &tr, &err) == SIM_OK && tr.steps == t.steps);
    }
    ENSURE_MSG(same_bits(b, ref), "%s: the state after %d steps differs from a run of %d", what,
               t.steps, t.steps);

    flag = 0; /* and on from there: one more step each */
    sim_frame_timing t1, t2;
    ENSURE(set_steps(b, 1) == SIM_OK && set_steps(ref, 1) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t1, &err) == SIM_OK && t1.steps == 1);
    ENSURE(sim_backend_run_frame(ref, &t2, &err) == SIM_OK && t2.steps == 1);
    ENSURE_MSG(same_bits(b, ref), "%s: the step after the stop differs", what);
    sim_backend_destroy(b);
    sim_backend_destroy(ref);
    sim_state_free(&s0);
}

/* Contacts over every tile pair (~0.2 s a step on one thread): stopped in the second step. */
static void test_stop_pairs(void) {
    const setup u = {"gas", 10000, 0, -1.0, 0, 1, 0};
    stop_mid_frame("pairs", &u, 6, 1.5);
}

/* Culled contacts and triplets of the tetra map (~0.2 s a step): stopped in the triplet sweep
 * of the second step; the sort counters come back too, so the next step sorts as it would. */
static void test_stop_triplets(void) {
    const setup u = {"gas", 400, 1, 0.0, 1, 1, 0};
    stop_mid_frame("triplets", &u, 6, 1.5);
}

/* Triplets culled by a cut-off over tile triples (the list sweep, ~0.35 s a step; the cut-off's
 * neighbour lists, the default, sweep the same triples in ~10 ms: too short a step to cut). */
static void test_stop_culled_triplets(void) {
    const setup u = {"triplets", 4096, 1, 1.6, 1, 1, 1};
    stop_mid_frame("culled triplets", &u, 6, 1.5);
}

/* Short steps (well under a millisecond) are never saved or cut: a long frame of them stops
 * between two of them, as exactly. */
static void test_stop_between_short_steps(void) {
    const setup u = {"gas", 200, 0, -1.0, 1, 1, 0};
    sim_state s0;
    sim_params p = params_of(&u, &s0);
    const sim_backend_config cw = config_of(&u, 1), cr = config_of(&u, 0);
    flag = 0;
    sim_backend *b = test_backend_make(&cw, &p, &s0, "backend");
    const int steps = 100000; /* the most a frame may have: seconds of steps */
    ENSURE(set_steps(b, steps) == SIM_OK);
    stop_raiser r;
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    stop_raiser_start(&r, &flag, 150.0);
    const sim_status st = sim_backend_run_frame(b, &t, &err);
    const double back_ms = sim_now_ms();
    stop_raiser_join(&r);
    ENSURE_MSG(st == SIM_INTERRUPTED, "status %s (%s)", sim_status_string(st), err.message);
    ENSURE_MSG(back_ms - r.raised_ms < 1000.0, "back %.0f ms after the flag",
               back_ms - r.raised_ms);
    ENSURE_MSG(t.steps > 0 && t.steps < steps, "%d steps", t.steps);
    sim_backend *ref = test_backend_make(&cr, &p, &s0, "backend");
    sim_frame_timing tr;
    ENSURE(set_steps(ref, t.steps) == SIM_OK);
    ENSURE(sim_backend_run_frame(ref, &tr, &err) == SIM_OK && tr.steps == t.steps);
    ENSURE_MSG(same_bits(b, ref), "after %d short steps", t.steps);
    sim_backend_destroy(b);
    sim_backend_destroy(ref);
    sim_state_free(&s0);
}

/* Two threads (summation order varies with the schedule): a step stopped mid-way gives back the
 * state it started from, bit for bit, promptly. */
static void test_stop_two_threads(void) {
    const setup u = {"gas", 24000, 0, -1.0, 0, 2, 0};
    sim_state s0;
    sim_params p = params_of(&u, &s0);
    const sim_backend_config cw = config_of(&u, 1);
    flag = 0;
    const double t0 = sim_now_ms();
    sim_backend *b = test_backend_make(&cw, &p, &s0, "backend");
    const double setup_ms = sim_now_ms() - t0;
    readout before = read_back(b);
    stop_raiser r;
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    stop_raiser_start(&r, &flag, 0.3 * setup_ms);
    const sim_status st = sim_backend_run_frame(b, &t, &err);
    const double back_ms = sim_now_ms();
    stop_raiser_join(&r);
    ENSURE_MSG(st == SIM_INTERRUPTED && t.steps == 0, "status %s, %d steps (%s)",
               sim_status_string(st), t.steps, err.message);
    ENSURE_MSG(back_ms - r.raised_ms < 1000.0, "back %.0f ms after the flag",
               back_ms - r.raised_ms);
    printf("  two threads: initial forces %.0f ms, back %.1f ms after the flag\n", setup_ms,
           back_ms - r.raised_ms);
    ENSURE(same_as(b, &before));
    readout_free(&before);
    sim_backend_destroy(b);
    sim_state_free(&s0);
}

/* A flag already raised: a frame runs no step and changes nothing; a backend is not built. */
static void test_raised_before(void) {
    const setup u = {"gas", 1000, 0, -1.0, 0, 1, 0};
    sim_state s0;
    sim_params p = params_of(&u, &s0);
    const sim_backend_config cw = config_of(&u, 1);
    flag = 0;
    sim_backend *b = test_backend_make(&cw, &p, &s0, "backend");
    readout before = read_back(b);
    flag = 1;
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_INTERRUPTED && t.steps == 0);
    ENSURE(same_as(b, &before));
    readout_free(&before);
    sim_backend_destroy(b);

    sim_backend *none = NULL;
    ENSURE(sim_backend_create(&cw, &p, &s0, &none, &err) == SIM_INTERRUPTED && none == NULL);
    ENSURE(strstr(err.message, "initial forces") != NULL);
    flag = 0;
    sim_state_free(&s0);
}

static const ensure_test tests[] = {
    {"raised_before", test_raised_before},
    {"stop_between_short_steps", test_stop_between_short_steps},
    {"stop_pairs", test_stop_pairs},
    {"stop_triplets", test_stop_triplets},
    {"stop_culled_triplets", test_stop_culled_triplets},
    {"stop_two_threads", test_stop_two_threads},
};

ENSURE_MAIN(tests)
