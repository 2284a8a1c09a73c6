/* SPDX-License-Identifier: MIT
 * nbsim — friction on the CUDA backend (sim/gpu/friction.h) against the CPU reference (double),
 * and every GPU enumeration against the GPU's own unculled sweep.
 *
 * Scenes, every value rounded to float so both backends start from the same numbers: a random
 * dense box of 3000 spinning bodies under gravity (linear and Hertz, mu 0.5, mu_r 0.1: most
 * bodies touch several others and some the walls) and the built-in heap (its carpet and first
 * pour, 3000 bodies). K = 10 steps (2 frames of 5), then positions, velocities, spins, the last
 * total forces and the contact histories (sim_backend_read_state) are compared. Torques are seen
 * through the spins they integrate into (no hook reads them): a torque off by x moves the spin
 * by x dt / I per step.
 *
 * Tolerances, as relative L2 norms over all bodies (||a - ref|| / ||ref||) and, for the
 * histories, over the contacts both name:
 *  - GPU enumeration against the GPU's unculled LTM sweep (TOL_GPU 1e-4): every pair is
 *    evaluated with the same float arguments in the same roles (its owner, the larger user
 *    index, is "i"), so each contact's force, torques and spring are the same bits; only the
 *    order in which a body's contacts are summed differs (atomics, slots): 1e-7 per sum,
 *    amplified by the stiff contacts over K steps to a measured-to-be-confirmed few 1e-6;
 *  - GPU against the CPU reference (TOL_CPU 2e-3 for forces, spins and springs, 1e-4 for
 *    velocities): float against double arithmetic; the overlap d = r_i + r_j - |x_i - x_j|
 *    cancels ~2 digits (d ~ 1 % of r), so the normal force is good to ~1e-5 and the Coulomb limit
 *    with it, the springs accumulate v_t dt over the steps, and test_gpu_nlist.c's per-body force
 *    tolerance against the CPU is 2e-3 already without friction;
 *  - the contacts named: at most 0.5 % of them may differ (GPU-CPU; 0.2 % GPU-GPU): a pair at the
 *    edge of contact (overlap ~ float rounding) can touch in one and not the other.
 * Every run's contacts are each listed once (j < i or a wall, sorted). Also: a run saved and
 * resumed on the GPU (its read_state, contacts and spins, given to a new GPU backend) against the
 * CPU resumed from the same state; friction 0 set on a frictional GPU backend gives the bits of a
 * frictionless backend (the frictionless kernels, unchanged). Skipped (77) without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "friction_util.h"
#include "nbsim/maps.h"
#include "nbsim/scene.h"
#include "test_backend_util.h"
#include "test_gpu_util.h"

#define TOL_GPU 1e-4
#define TOL_GPU_CONTACTS 0.002
#define TOL_CPU 2e-3
#define TOL_CPU_VEL 1e-4
#define TOL_CPU_CONTACTS 0.005
#define FRAMES 2
#define STEPS_PER_FRAME 5

static uint64_t rng_state = 0x5eed2100u;

static double to_float(double x) {
    return (double)(float)x;
}

static void round_state(sim_state *s) {
    for (uint32_t i = 0; i < s->n; ++i) {
        double *v[3] = {&s->pos[i].x, &s->vel[i].x, &s->spin[i].x};
        for (int a = 0; a < 3; ++a) {
            for (int k = 0; k < 4; ++k) {
                v[a][k] = to_float(v[a][k]);
            }
        }
    }
}

typedef struct {
    const char *name;
    sim_params p;
    sim_state s;
} scene;

static scene dense_scene(int hertz) {
    scene sc;
    const uint32_t n = 3000;
    const double h = 0.32 * cbrt((double)n);
    sc.name = hertz ? "dense box, Hertz" : "dense box, linear";
    sc.s = test_random_state(&rng_state, n, h, 0.5);
    for (uint32_t i = 0; i < n; ++i) {
        sc.s.spin[i] = v4(test_rnd(&rng_state, -2, 2), test_rnd(&rng_state, -2, 2),
                          test_rnd(&rng_state, -2, 2), 0.0);
    }
    round_state(&sc.s);
    sc.p = sim_params_default();
    sc.p.box_half = to_float(h + 0.3);
    sc.p.gravity = v3(0.0, -9.81, 0.0);
    sc.p.restitution = 0.6;
    sc.p.friction = 0.5;
    sc.p.rolling_friction = 0.1;
    sc.p.hertz = hertz;
    sc.p.steps_per_frame = STEPS_PER_FRAME;
    return sc;
}

static scene heap_scene(void) {
    scene sc;
    sim_error err = {SIM_OK, ""};
    sc.name = "heap";
    sc.p = sim_params_default();
    memset(&sc.s, 0, sizeof sc.s);
    ENSURE_MSG(sim_scene_builtin("heap", 3000, 1, &sc.p, &sc.s, &err) == SIM_OK, "%s",
               err.message);
    round_state(&sc.s);
    sc.p.steps_per_frame = STEPS_PER_FRAME;
    return sc;
}

static sim_backend_config config(sim_backend_kind kind, sim_pair_choice map, uint32_t tile,
                                 int cull, int sort_every, sim_nlist_kind nlist) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = kind;
    c.pair_map = map;
    c.tile = tile;
    c.cull = cull;
    c.sort_every = sort_every;
    c.nlist = nlist;
    c.cpu_threads = 2;
    return c;
}

typedef struct {
    sim_state s;
    sim_vec3d *f;
} snapshot;

static snapshot read_back(sim_backend *b, uint32_t n) {
    snapshot out;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&out.s, n, &err) == SIM_OK);
    out.f = calloc(n, sizeof *out.f);
    ENSURE_MSG(sim_backend_read_state(b, &out.s, out.f, &err) == SIM_OK, "%s", err.message);
    return out;
}

/* frames of the scene's steps from state s0 under c (skin < 0: auto). */
static snapshot run(const sim_backend_config *c, const sim_params *p0, const sim_state *s0,
                    double skin, int frames, const char *name) {
    sim_params p = *p0;
    p.skin.value = skin < 0.0 ? 0.0 : skin;
    p.skin.set = skin >= 0.0;
    sim_backend *b = test_backend_make(c, &p, s0, name);
    sim_error err = {SIM_OK, ""};
    for (int k = 0; k < frames; ++k) {
        sim_frame_timing t;
        ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s: %s", name, err.message);
    }
    snapshot out = read_back(b, s0->n);
    sim_backend_destroy(b);
    return out;
}

static void snapshot_free(snapshot *x) {
    sim_state_free(&x->s);
    free(x->f);
}

/* Each contact once, owned by its larger index, walls included; sorted by (i, j). */
static void check_contacts(const sim_state *s, const char *name) {
    int walls = 0, ordered = 1;
    for (uint64_t k = 0; k < s->contact_count; ++k) {
        const sim_state_contact *c = &s->contacts[k];
        ordered &= c->i < s->n && (c->j < c->i || SIM_CONTACT_IS_WALL(c->j));
        if (k > 0) {
            const sim_state_contact *q = &s->contacts[k - 1];
            ordered &= q->i < c->i || (q->i == c->i && q->j < c->j);
        }
        walls += SIM_CONTACT_IS_WALL(c->j);
    }
    ENSURE_MSG(ordered, "%s: contacts not each once, owner first, sorted", name);
    /* the dense boxes hold ~1.5 contacts per body, the poured heap (still slumping, its carpet
     * on the floor) fewer */
    ENSURE_MSG(s->contact_count > s->n / 3 && walls > 0, "%s: %llu contacts, %d with walls", name,
               (unsigned long long)s->contact_count, walls);
}

static double rel3(const sim_vec3d *a, const sim_vec3d *ref, uint32_t n) {
    double d = 0.0, r = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec3d e = sub3(a[i], ref[i]);
        d += dot3(e, e);
        r += dot3(ref[i], ref[i]);
    }
    return r > 0.0 ? sqrt(d / r) : sqrt(d);
}

static double rel4(const sim_vec4d *a, const sim_vec4d *ref, uint32_t n) {
    double d = 0.0, r = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec3d e = sub3(xyz(a[i]), xyz(ref[i]));
        d += dot3(e, e);
        r += dot3(xyz(ref[i]), xyz(ref[i]));
    }
    return r > 0.0 ? sqrt(d / r) : sqrt(d);
}

typedef struct {
    double pos, vel, spin, force, springs, unmatched; /* unmatched: fraction of contacts */
} diff;

static diff compare(const snapshot *a, const snapshot *ref, double box_half) {
    diff d;
    const uint32_t n = ref->s.n;
    d.pos = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        d.pos = fmax(d.pos, norm3(sub3(xyz(a->s.pos[i]), xyz(ref->s.pos[i]))) / box_half);
    }
    d.vel = rel4(a->s.vel, ref->s.vel, n);
    d.spin = rel4(a->s.spin, ref->s.spin, n);
    d.force = rel3(a->f, ref->f, n);
    /* the histories of the contacts both name (both lists sorted by (i, j)) */
    uint64_t x = 0, y = 0, matched = 0;
    double dd = 0.0, rr = 0.0;
    while (x < a->s.contact_count && y < ref->s.contact_count) {
        const sim_state_contact *p = &a->s.contacts[x], *q = &ref->s.contacts[y];
        if (p->i == q->i && p->j == q->j) {
            const sim_vec3d e1 = sub3(p->xi, q->xi), e2 = sub3(p->roll, q->roll);
            dd += dot3(e1, e1) + dot3(e2, e2);
            rr += dot3(q->xi, q->xi) + dot3(q->roll, q->roll);
            ++matched;
            ++x;
            ++y;
        } else if (p->i < q->i || (p->i == q->i && p->j < q->j)) {
            ++x;
        } else {
            ++y;
        }
    }
    d.springs = rr > 0.0 ? sqrt(dd / rr) : sqrt(dd);
    const uint64_t total = a->s.contact_count + ref->s.contact_count;
    d.unmatched = total > 0 ? (double)(total - 2 * matched) / (double)total : 0.0;
    return d;
}

static void expect(const char *name, const diff *d, double tol, double tol_vel, double tol_c) {
    printf("  %-52s x %.1e v %.1e w %.1e F %.1e springs %.1e contacts %.2f %%\n", name, d->pos,
           d->vel, d->spin, d->force, d->springs, 100.0 * d->unmatched);
    ENSURE_MSG(d->vel <= tol_vel && d->spin <= tol && d->force <= tol && d->springs <= tol &&
                   d->unmatched <= tol_c,
               "%s: v %.2g (tol %.1g), w %.2g, F %.2g, springs %.2g (tol %.1g), contacts %.3g "
               "(tol %.1g)",
               name, d->vel, tol_vel, d->spin, d->force, d->springs, tol, d->unmatched, tol_c);
}

/* The GPU's enumerations of one scene: against the GPU's unculled LTM sweep, which is against
 * the CPU reference. */
static void every_enumeration(scene *sc) {
    const int frames = FRAMES;
    const double bh = sc->p.box_half;
    char name[160];
    const sim_backend_config cpu_c = config(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, 64, 0, 0, 0);
    snapshot ref = run(&cpu_c, &sc->p, &sc->s, 0.0, frames, "cpu");
    check_contacts(&ref.s, "cpu");
    const sim_backend_config base_c = config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, 64, 0, 0, 0);
    snapshot base = run(&base_c, &sc->p, &sc->s, 0.0, frames, "gpu ltm");
    check_contacts(&base.s, "gpu ltm");
    snprintf(name, sizeof name, "%s: GPU ltm against the CPU", sc->name);
    diff d = compare(&base, &ref, bh);
    expect(name, &d, TOL_CPU, TOL_CPU_VEL, TOL_CPU_CONTACTS);
    /* every exact pair map's brute-force sweep, and the full (nbody) sweep */
    for (int m = 0; m <= SIM_PAIR_MAP_COUNT; ++m) {
        const sim_pair_choice map = (sim_pair_choice)m;
        if (m < SIM_PAIR_MAP_COUNT && sim_pair_map_is_paper_float((sim_pair_map)m)) {
            continue;
        }
        snprintf(name, sizeof name, "%s: %s tile 32", sc->name,
                 m == SIM_PAIR_MAP_COUNT ? "full sweep" : sim_pair_map_name((sim_pair_map)m));
        const sim_backend_config c = config(SIM_BACKEND_CUDA, map, 32, 0, 0, 0);
        snapshot x = run(&c, &sc->p, &sc->s, 0.0, frames, name);
        check_contacts(&x.s, name);
        d = compare(&x, &base, bh);
        expect(name, &d, TOL_GPU, TOL_GPU, TOL_GPU_CONTACTS);
        snapshot_free(&x);
    }
    /* culled tiles, re-sorted every step and never; neighbour lists, full and half */
    for (uint32_t tile = 32; tile <= 64; tile *= 2) {
        for (int e = 0; e < 2; ++e) {
            const int sort_every = e == 0 ? 1 : 1000000;
            snprintf(name, sizeof name, "%s: culled tile %u, sort every %d", sc->name, tile,
                     sort_every);
            const sim_backend_config c =
                config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, tile, 1, sort_every, 0);
            snapshot x = run(&c, &sc->p, &sc->s, 0.0, frames, name);
            check_contacts(&x.s, name);
            d = compare(&x, &base, bh);
            expect(name, &d, TOL_GPU, TOL_GPU, TOL_GPU_CONTACTS);
            snapshot_free(&x);
        }
        const sim_nlist_kind kinds[2] = {SIM_NLIST_FULL, SIM_NLIST_HALF};
        for (int k = 0; k < 2; ++k) {
            snprintf(name, sizeof name, "%s: neighbour lists (%s), tile %u", sc->name,
                     sim_nlist_kind_name(kinds[k]), tile);
            const sim_backend_config c =
                config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, tile, 1, 0, kinds[k]);
            snapshot x = run(&c, &sc->p, &sc->s, -1.0, frames, name);
            check_contacts(&x.s, name);
            d = compare(&x, &base, bh);
            expect(name, &d, TOL_GPU, TOL_GPU, TOL_GPU_CONTACTS);
            snapshot_free(&x);
        }
    }
    snapshot_free(&base);
    snapshot_free(&ref);
}

static void test_dense_linear(void) {
    scene sc = dense_scene(0);
    every_enumeration(&sc);
    sim_state_free(&sc.s);
}

static void test_dense_hertz(void) {
    scene sc = dense_scene(1);
    every_enumeration(&sc);
    sim_state_free(&sc.s);
}

static void test_heap(void) {
    scene sc = heap_scene();
    /* poured first, ~1 s on the GPU: the scene starts with its pour 5 cm apart, its carpet 1 mm
     * above the floor; poured, the pour slumps onto the carpet, so bodies touch one another, the
     * floor and the walls, with springs to carry */
    /* the brute-force sweep: no atomics, so the same poured state at every run (the heap is
     * chaotic: a pour summed in another order lands elsewhere, and with it the few contacts at
     * their Coulomb limit that the comparisons below are sensitive to) */
    const sim_backend_config g = config(SIM_BACKEND_CUDA, SIM_PAIR_FULL, 32, 0, 0,
                                        SIM_NLIST_DEFAULT);
    sim_params pour = sc.p;
    pour.steps_per_frame = 100;
    snapshot poured = run(&g, &pour, &sc.s, -1.0, 40, "heap: pour");
    sim_state_free(&sc.s);
    sc.s = poured.s;
    free(poured.f);
    round_state(&sc.s);
    every_enumeration(&sc);
    sim_state_free(&sc.s);
}

/* A GPU run read back (spins, springs) and resumed on a new GPU backend, against the CPU
 * resumed from the same state: the state carries the run on. Then the resumed GPU run against
 * the uninterrupted one: they differ only by the first forces of the new state (docs/friction.md:
 * the full step's velocities in the dashpots), far less than without the springs. */
static void test_save_and_resume(void) {
    scene sc = dense_scene(0);
    const double bh = sc.p.box_half;
    const sim_backend_config g = config(SIM_BACKEND_CUDA, SIM_PAIR_MAP_LTM, 64, 1, 0, 0);
    const sim_backend_config cpu_c = config(SIM_BACKEND_CPU, SIM_PAIR_MAP_LTM, 64, 0, 0, 0);
    snapshot half = run(&g, &sc.p, &sc.s, -1.0, FRAMES, "gpu half");
    check_contacts(&half.s, "gpu half");
    snapshot whole = run(&g, &sc.p, &sc.s, -1.0, 2 * FRAMES, "gpu whole");
    snapshot resumed = run(&g, &sc.p, &half.s, -1.0, FRAMES, "gpu resumed");
    snapshot cpu = run(&cpu_c, &sc.p, &half.s, 0.0, FRAMES, "cpu resumed");
    diff d = compare(&resumed, &cpu, bh);
    expect("resumed on the GPU against the CPU", &d, TOL_CPU, TOL_CPU_VEL, TOL_CPU_CONTACTS);
    sim_state forgotten = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_copy(&forgotten, &half.s, &err) == SIM_OK);
    forgotten.contact_count = 0;
    snapshot fresh = run(&g, &sc.p, &forgotten, -1.0, FRAMES, "gpu resumed without springs");
    const diff with = compare(&resumed, &whole, bh), without = compare(&fresh, &whole, bh);
    printf("  resumed against uninterrupted: spins %.2e, without the springs %.2e\n", with.spin,
           without.spin);
    ENSURE_MSG(without.spin > 10.0 * with.spin, "resumed spins %g, without springs %g", with.spin,
               without.spin);
    snapshot_free(&half);
    snapshot_free(&whole);
    snapshot_free(&resumed);
    snapshot_free(&cpu);
    snapshot_free(&fresh);
    sim_state_free(&forgotten);
    sim_state_free(&sc.s);
}

/* Friction 0 is the frictionless model bit for bit: a frictional GPU backend with friction
 * turned off and the state set again runs the frictionless kernels (unchanged), with the bits of a
 * backend that never had friction; spin is carried unchanged. */
static void test_friction_off_bits(void) {
    scene sc = dense_scene(0);
    const uint32_t n = sc.s.n;
    sim_params off = sc.p;
    off.friction = off.rolling_friction = 0.0;
    /* the brute-force full sweep: each thread sums its own body's force in j order, no atomics,
     * so two runs of it are the same bits (a map's symmetric kernel adds j's forces with atomics
     * from many blocks in whatever order they land: not reproducible bit for bit, friction or
     * not); unculled, the bodies stay in the user's order (a culled backend's sort is stable, so
     * its order after set_state keeps traces of the frame each ran, and the sums their order) */
    const sim_backend_config g = config(SIM_BACKEND_CUDA, SIM_PAIR_FULL, 64, 0, 0, 0);
    sim_error err = {SIM_OK, ""};
    sim_backend *a = test_backend_make(&g, &off, &sc.s, "frictionless");
    sim_backend *b = test_backend_make(&g, &sc.p, &sc.s, "frictional");
    sim_frame_timing t;
    /* the same calls on both (a frame, the parameters, the state again), so that the stepper's
     * clocks agree: only the friction of b's first frame differs */
    ENSURE_MSG(sim_backend_run_frame(a, &t, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_set_params(a, &off, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_set_params(b, &off, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_set_state(a, &sc.s, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_set_state(b, &sc.s, &err) == SIM_OK, "%s", err.message);
    for (int k = 0; k < FRAMES; ++k) {
        ENSURE_MSG(sim_backend_run_frame(a, &t, &err) == SIM_OK, "%s", err.message);
        ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s", err.message);
    }
    snapshot x = read_back(a, n), y = read_back(b, n);
    int same = 1;
    for (uint32_t i = 0; i < n; ++i) {
        same &= memcmp(&x.s.pos[i], &y.s.pos[i], sizeof x.s.pos[i]) == 0 &&
                memcmp(&x.s.vel[i], &y.s.vel[i], sizeof x.s.vel[i]) == 0 &&
                memcmp(&x.f[i], &y.f[i], sizeof x.f[i]) == 0 &&
                memcmp(&x.s.spin[i], &sc.s.spin[i], 3 * sizeof(double)) == 0 &&
                memcmp(&y.s.spin[i], &sc.s.spin[i], 3 * sizeof(double)) == 0;
    }
    ENSURE_MSG(same, "friction 0 is not the frictionless run bit for bit");
    ENSURE(x.s.contact_count == 0 && y.s.contact_count == 0);
    snapshot_free(&x);
    snapshot_free(&y);
    sim_backend_destroy(a);
    sim_backend_destroy(b);
    sim_state_free(&sc.s);
}

static const ensure_test tests[] = {
    {"dense_linear", test_dense_linear},
    {"dense_hertz", test_dense_hertz},
    {"heap", test_heap},
    {"save_and_resume", test_save_and_resume},
    {"friction_off_bits", test_friction_off_bits},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
