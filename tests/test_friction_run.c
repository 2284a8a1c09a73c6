/* SPDX-License-Identifier: MIT
 * nbsim — friction through the CPU reference backend (sim/cpu/cpu_friction.c, the stepper's
 * commit_history): every enumeration of pairs (each exact map's plan, culled tiles of every
 * size, re-sorts every step or never, one thread or two) gives the same forces, spins and
 * contact histories; each contact is kept once, by the body with the larger index; a saved state
 * resumes with its springs; friction only dissipates; spin is carried (and saved) without
 * friction; the refusals (CUDA, several ranks) and a body with more contacts than its slots.
 * The model itself: test_friction.c; against LAMMPS: test_friction_lammps.c; the heap:
 * test_heap.c. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/internal/backend.h"
#include "nbsim/scene.h"
#include "physics/physics.h"

#include "ensure.h"
#include "friction_util.h"
#include "test_backend_util.h"
#include "test_rng.h"
#include "test_tmp.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 314159;

/* A dense frictional pack falling onto the floor: n spheres in a cube of half-width 0.32 n^(1/3)
 * (many contacts from the start), spinning at up to 2 rad/s, gravity -y, box just around them. */
static sim_state dense_state(uint32_t n, sim_params *p) {
    const double h = 0.32 * cbrt((double)n);
    sim_state s = test_random_state(&rng_state, n, h, 0.5);
    for (uint32_t i = 0; i < n; ++i) {
        s.spin[i] = v4(test_rnd(&rng_state, -2, 2), test_rnd(&rng_state, -2, 2),
                       test_rnd(&rng_state, -2, 2), 0.0);
    }
    *p = sim_params_default();
    p->box_half = h + 0.3;
    p->gravity = v3(0.0, -9.81, 0.0);
    p->restitution = 0.6;
    p->friction = 0.5;
    p->rolling_friction = 0.1;
    p->steps_per_frame = 10;
    return s;
}

static sim_backend_config cpu_config(int map, uint32_t tile, int cull, int sort_every,
                                     int threads) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.pair_map = map;
    c.tile = tile;
    c.cull = cull;
    c.sort_every = sort_every;
    c.cpu_threads = threads;
    return c;
}

/* Everything a run leaves: state (with contacts) and forces. */
typedef struct {
    sim_state s;
    sim_vec3d *f;
} snapshot;

static snapshot run(const sim_backend_config *c, const sim_params *p, const sim_state *s0,
                    int frames, const char *name) {
    sim_backend *b = test_backend_make(c, p, s0, name);
    sim_error err = {SIM_OK, ""};
    for (int k = 0; k < frames; ++k) {
        sim_frame_timing t;
        const sim_status st = sim_backend_run_frame(b, &t, &err);
        ENSURE_MSG(st == SIM_OK, "%s: %s", name, err.message);
    }
    snapshot out;
    ENSURE(sim_state_alloc(&out.s, s0->n, &err) == SIM_OK);
    out.f = calloc(s0->n, sizeof *out.f);
    ENSURE(sim_backend_read_state(b, &out.s, out.f, &err) == SIM_OK);
    sim_backend_destroy(b);
    return out;
}

static void snapshot_free(snapshot *x) {
    sim_state_free(&x->s);
    free(x->f);
}

/* Largest difference of two runs relative to the largest value: positions, velocities, spins,
 * forces, springs; the contact lists must name the same pairs (each once). */
static double snapshot_diff(const snapshot *a, const snapshot *b, const char *name) {
    double d = 0.0;
    for (uint32_t i = 0; i < a->s.n; ++i) {
        d = fmax(d, norm3(sub3(xyz(a->s.pos[i]), xyz(b->s.pos[i]))));
        d = fmax(d, norm3(sub3(xyz(a->s.vel[i]), xyz(b->s.vel[i]))) * 1e-1);
        d = fmax(d, norm3(sub3(xyz(a->s.spin[i]), xyz(b->s.spin[i]))) * 1e-1);
        d = fmax(d, norm3(sub3(a->f[i], b->f[i])) * 1e-3);
    }
    ENSURE_MSG(a->s.contact_count == b->s.contact_count, "%s: %llu contacts against %llu", name,
               (unsigned long long)a->s.contact_count, (unsigned long long)b->s.contact_count);
    if (a->s.contact_count != b->s.contact_count) {
        return INFINITY;
    }
    for (uint64_t k = 0; k < a->s.contact_count; ++k) {
        const sim_state_contact *x = &a->s.contacts[k], *y = &b->s.contacts[k];
        ENSURE_MSG(x->i == y->i && x->j == y->j, "%s: contact %llu is %u-%u against %u-%u", name,
                   (unsigned long long)k, x->i, x->j, y->i, y->j);
        d = fmax(d, 1e2 * norm3(sub3(x->xi, y->xi)));
        d = fmax(d, 1e2 * norm3(sub3(x->roll, y->roll)));
    }
    return d;
}

/* Each contact once, owned by its larger index, walls included; sorted by (i, j). */
static void check_contacts(const sim_state *s, const char *name) {
    int walls = 0;
    for (uint64_t k = 0; k < s->contact_count; ++k) {
        const sim_state_contact *c = &s->contacts[k];
        ENSURE_MSG(c->i < s->n && (c->j < c->i || SIM_CONTACT_IS_WALL(c->j)), "%s: %u-%u", name,
                   c->i, c->j);
        if (k > 0) {
            const sim_state_contact *p = &s->contacts[k - 1];
            ENSURE_MSG(p->i < c->i || (p->i == c->i && p->j < c->j), "%s: %u-%u after %u-%u", name,
                       c->i, c->j, p->i, p->j);
        }
        walls += SIM_CONTACT_IS_WALL(c->j);
    }
    ENSURE_MSG(s->contact_count > 100 && walls > 0, "%s: %llu contacts, %d with walls", name,
               (unsigned long long)s->contact_count, walls);
}

/* The same steps under every exact pair map's plan, culled tiles of 32, 64 and 128 (re-sorted
 * every step, or only at the start), one thread or two: the same state, forces and springs to
 * rounding (the sums' order differs), the same contacts. Values are per contact, looked up by the
 * partner's index: the enumeration order cannot change them. */
static void test_every_enumeration(void) {
    sim_params p;
    sim_state s0 = dense_state(700, &p);
    const sim_backend_config ref_c = cpu_config(SIM_PAIR_MAP_LTM, 64, 0, 0, 1);
    snapshot ref = run(&ref_c, &p, &s0, 6, "ltm, unculled, 1 thread");
    check_contacts(&ref.s, "reference");
    const int maps[] = {SIM_PAIR_MAP_BB, SIM_PAIR_MAP_RB, SIM_PAIR_MAP_UTM, SIM_PAIR_MAP_REC,
                        SIM_PAIR_MAP_RM};
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; ++m) {
        const sim_backend_config c = cpu_config(maps[m], 32, 0, 0, 2);
        snapshot x = run(&c, &p, &s0, 6, sim_pair_map_name((sim_pair_map)maps[m]));
        const double d = snapshot_diff(&ref, &x, sim_pair_map_name((sim_pair_map)maps[m]));
        ENSURE_MSG(d < 1e-10, "map %s: %g", sim_pair_map_name((sim_pair_map)maps[m]), d);
        snapshot_free(&x);
    }
    const uint32_t tiles[] = {32, 64, 128};
    for (int t = 0; t < 3; ++t) {
        for (int e = 0; e < 2; ++e) {
            const int sort_every = e == 0 ? 1 : 1000000;
            for (int threads = 1; threads <= 2; ++threads) {
                char name[96];
                snprintf(name, sizeof name, "culled, tile %u, sort every %d, %d thread(s)",
                         tiles[t], sort_every, threads);
                const sim_backend_config c =
                    cpu_config(SIM_PAIR_MAP_LTM, tiles[t], 1, sort_every, threads);
                snapshot x = run(&c, &p, &s0, 6, name);
                const double d = snapshot_diff(&ref, &x, name);
                ENSURE_MSG(d < 1e-10, "%s: %g", name, d);
                snapshot_free(&x);
            }
        }
    }
    snapshot_free(&ref);
    sim_state_free(&s0);
}

/* Friction's state round trip: run 2K steps, or K steps, save (--save-state's scene file: spin,
 * contacts' springs), load and run K more. The file gives positions, velocities, spins and
 * springs back bit for bit (the mass through the density within an ulp), and the run from it is
 * the run from the state in memory to rounding. It differs from the uninterrupted run
 * only by its first forces, which a new state computes from the full step's velocities (the
 * run's own came from the half step's: the dashpots see other velocities), as without friction:
 * measured, spins 0.03 rad/s apart after 100 steps of a dense pack; without the springs they go
 * ~700 times farther (18 rad/s). */
static void test_save_and_resume(void) {
    sim_params p;
    sim_state s0 = dense_state(400, &p);
    p.dt = 1e-4;
    const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, 64, 1, 0, 0);
    snapshot whole = run(&c, &p, &s0, 20, "whole");
    snapshot half = run(&c, &p, &s0, 10, "half");
    check_contacts(&half.s, "half");
    sim_error err = {SIM_OK, ""};
    const char *path = test_tmp_path("friction.scene");
    ENSURE_MSG(sim_state_save(path, &p, &half.s, half.f, &err) == SIM_OK, "%s", err.message);
    sim_params q = sim_params_default();
    sim_state loaded = {0};
    ENSURE_MSG(sim_scene_load(path, &q, &loaded, &err) == SIM_OK, "%s", err.message);
    ENSURE(q.friction == p.friction && q.rolling_friction == p.rolling_friction && q.dt == p.dt);
    ENSURE(loaded.n == half.s.n && loaded.contact_count == half.s.contact_count);
    int same = loaded.n == half.s.n && loaded.contact_count == half.s.contact_count;
    for (uint32_t i = 0; same && i < loaded.n; ++i) {
        same = memcmp(&loaded.pos[i], &half.s.pos[i], 3 * sizeof(double)) == 0 &&
               memcmp(&loaded.vel[i], &half.s.vel[i], 3 * sizeof(double)) == 0 &&
               memcmp(&loaded.spin[i], &half.s.spin[i], 3 * sizeof(double)) == 0;
    }
    for (uint64_t k = 0; same && k < loaded.contact_count; ++k) {
        same = memcmp(&loaded.contacts[k], &half.s.contacts[k], sizeof loaded.contacts[k]) == 0;
    }
    ENSURE_MSG(same, "the saved state does not load back bit for bit");
    snapshot resumed = run(&c, &q, &loaded, 10, "resumed");
    snapshot in_memory = run(&c, &p, &half.s, 10, "resumed from memory");
    const double d_file = snapshot_diff(&resumed, &in_memory, "file against memory");
    ENSURE_MSG(d_file < 1e-9, "resuming from the file is not resuming from memory: %g", d_file);
    const double d = snapshot_diff(&whole, &resumed, "resumed");
    sim_state forgotten = {0};
    ENSURE(sim_state_copy(&forgotten, &loaded, &err) == SIM_OK);
    forgotten.contact_count = 0;
    snapshot fresh = run(&c, &q, &forgotten, 10, "resumed without springs");
    double dx = 0.0;
    for (uint32_t i = 0; i < loaded.n; ++i) {
        dx = fmax(dx, norm3(sub3(xyz(whole.s.spin[i]), xyz(fresh.s.spin[i]))));
    }
    double dw = 0.0;
    for (uint32_t i = 0; i < loaded.n; ++i) {
        dw = fmax(dw, norm3(sub3(xyz(whole.s.spin[i]), xyz(resumed.s.spin[i]))));
    }
    printf("  resumed: max difference %.2e (scaled), spins %.2e rad/s; without the springs: "
           "spins %.2e rad/s\n",
           d, dw, dx);
    ENSURE_MSG(dx > 100.0 * dw, "resumed spins off by %g, %g without springs", dw, dx);
    snapshot_free(&whole);
    snapshot_free(&half);
    snapshot_free(&resumed);
    snapshot_free(&in_memory);
    snapshot_free(&fresh);
    sim_state_free(&loaded);
    sim_state_free(&forgotten);
    sim_state_free(&s0);
}

/* Friction only dissipates. A gas of spinning spheres under gravity with elastic normal contacts
 * (e = 1): the frictionless twin keeps its total energy within the integrator's own error delta
 * (measured, at most 1e-3 of the energy); with friction the total (translation, spin, gravity,
 * the normal, tangential and rolling springs, the walls') never rises by more than 2 delta
 * above any earlier value, and falls by far more than that over the run. */
static void test_friction_dissipates(void) {
    sim_params p;
    sim_state s0 = test_random_state(&rng_state, 300, 4.0, 2.0);
    for (uint32_t i = 0; i < s0.n; ++i) {
        s0.spin[i] = v4(test_rnd(&rng_state, -5, 5), test_rnd(&rng_state, -5, 5),
                        test_rnd(&rng_state, -5, 5), 0.0);
    }
    p = sim_params_default();
    p.box_half = 5.0;
    p.gravity = v3(0.0, -2.0, 0.0);
    p.restitution = 1.0;
    p.steps_per_frame = 50;
    double delta = 0.0, e_free0 = 0.0;
    for (int with = 0; with <= 1; ++with) {
        p.friction = with ? 0.5 : 0.0;
        p.rolling_friction = with ? 0.1 : 0.0;
        const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, 64, 1, 0, 0);
        sim_backend *b = test_backend_make(&c, &p, &s0, with ? "friction" : "frictionless");
        sim_error err = {SIM_OK, ""};
        sim_energy e;
        ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
        const double e0 = e.total;
        double lowest = e0, rise = 0.0, rotational = e.rotational;
        for (int k = 0; k < 100; ++k) {
            sim_frame_timing t;
            ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
            ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
            if (!with) {
                delta = fmax(delta, fabs(e.total - e0));
            }
            rise = fmax(rise, e.total - lowest);
            lowest = fmin(lowest, e.total);
        }
        ENSURE(rotational > 0.0);
        if (!with) {
            e_free0 = e0;
            printf("  frictionless: |E - E0| <= %.3e J of %.4g J\n", delta, e0);
            ENSURE(delta <= 1e-3 * fabs(e0));
        } else {
            printf("  friction: E %.4g -> %.4g J, largest rise over an earlier value %.3e J\n", e0,
                   e.total, rise);
            ENSURE_MSG(rise <= 2.0 * delta + 1e-12 * fabs(e0), "rise %g, delta %g", rise, delta);
            ENSURE_MSG(e0 - e.total > 100.0 * delta, "dissipated only %g", e0 - e.total);
            ENSURE(fabs(e0 - e_free0) <= 1e-12 * fabs(e0)); /* the same start */
        }
        sim_backend_destroy(b);
    }
    sim_state_free(&s0);
}

/* Without friction bodies keep their spin (carried, read, saved), no contact is kept, and the
 * positions and velocities are those of a state without spin, bit for bit. Friction turned on
 * mid-run starts from no histories; turned off, drops them and keeps the spins. */
static void test_spin_without_friction(void) {
    sim_params p;
    sim_state s0 = dense_state(200, &p);
    p.friction = p.rolling_friction = 0.0;
    sim_state still = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_copy(&still, &s0, &err) == SIM_OK);
    memset(still.spin, 0, still.n * sizeof *still.spin);
    const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, 64, 1, 0, 0);
    snapshot a = run(&c, &p, &s0, 5, "spinning, no friction");
    snapshot b = run(&c, &p, &still, 5, "still, no friction");
    int same = 1;
    for (uint32_t i = 0; i < s0.n; ++i) {
        same = same && memcmp(&a.s.pos[i], &b.s.pos[i], sizeof a.s.pos[i]) == 0 &&
               memcmp(&a.s.vel[i], &b.s.vel[i], sizeof a.s.vel[i]) == 0 &&
               memcmp(&a.s.spin[i], &s0.spin[i], sizeof a.s.spin[i]) == 0;
    }
    ENSURE_MSG(same, "spin changed the frictionless run, or was not carried");
    ENSURE(a.s.contact_count == 0);
    sim_backend *be = test_backend_make(&c, &p, &s0, "toggled");
    sim_params on = p;
    on.friction = 0.5;
    ENSURE(sim_backend_set_params(be, &on, &err) == SIM_OK);
    sim_frame_timing t;
    ENSURE(sim_backend_run_frame(be, &t, &err) == SIM_OK);
    sim_state now;
    ENSURE(sim_state_alloc(&now, s0.n, &err) == SIM_OK);
    ENSURE(sim_backend_read_state(be, &now, NULL, &err) == SIM_OK);
    ENSURE(now.contact_count > 0);
    ENSURE(sim_backend_set_params(be, &p, &err) == SIM_OK);
    sim_vec4d *w = malloc(s0.n * sizeof *w);
    ENSURE(sim_backend_read_spin(be, w, &err) == SIM_OK);
    ENSURE(memcmp(w, now.spin, s0.n * sizeof *w) == 0);
    ENSURE(sim_backend_read_state(be, &now, NULL, &err) == SIM_OK);
    ENSURE(now.contact_count == 0);
    free(w);
    sim_backend_destroy(be);
    sim_state_free(&now);
    snapshot_free(&a);
    snapshot_free(&b);
    sim_state_free(&still);
    sim_state_free(&s0);
}

/* Friction runs on one rank (the CPU reference or one GPU: tests/test_gpu_friction.c): several
 * ranks refuse it at creation and in set_params, in one line. */
static void test_refusals(void) {
    sim_params p;
    sim_state s0 = dense_state(100, &p);
    sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, 64, 1, 0, 0);
    sim_backend *b = NULL;
    sim_error err = {SIM_OK, ""};
    c.multi.world = 2;
    c.multi.local = 2;
    ENSURE(sim_backend_create(&c, &p, &s0, &b, &err) == SIM_UNSUPPORTED && b == NULL);
    ENSURE_MSG(strstr(err.message, "one rank") != NULL, "%s", err.message);
    sim_params off = p;
    off.friction = off.rolling_friction = 0.0;
    ENSURE_MSG(sim_backend_create(&c, &off, &s0, &b, &err) == SIM_OK, "%s", err.message);
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_UNSUPPORTED);
    sim_backend_destroy(b);
    sim_state_free(&s0);
}

/* More contacts than a body has slots for (neighbours overlapping each other by far more than
 * CPU_FRICTION_OVERLAP): the run stops, naming the body, instead of losing a history. Body 30
 * (the last: it owns all its contacts) sits in 30 equal spheres 0.6 m from it. */
static void test_too_many_contacts(void) {
    sim_state s;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&s, 31, &err) == SIM_OK);
    for (uint32_t k = 0; k < 30; ++k) {
        const double z = 1.0 - (2.0 * k + 1.0) / 30.0, r = sqrt(1.0 - z * z);
        const double phi = 2.399963229728653 * k; /* the golden angle */
        s.pos[k] = v4(0.6 * r * cos(phi), 0.6 * r * sin(phi), 0.6 * z, 0.5);
        s.vel[k] = v4(0, 0, 0, 1.0);
    }
    s.pos[30] = v4(0, 0, 0, 0.5);
    s.vel[30] = v4(0, 0, 0, 1.0);
    sim_params p = sim_params_default();
    p.friction = 0.5;
    const sim_backend_config c = cpu_config(SIM_PAIR_MAP_LTM, 32, 1, 0, 0);
    sim_backend *b = NULL;
    ENSURE(sim_backend_create(&c, &p, &s, &b, &err) == SIM_UNSTABLE && b == NULL);
    ENSURE_MSG(strstr(err.message, "body 30 touches") != NULL, "%s", err.message);
    sim_state_free(&s);
}

static const ensure_test tests[] = {
    {"every_enumeration", test_every_enumeration},
    {"save_and_resume", test_save_and_resume},
    {"friction_dissipates", test_friction_dissipates},
    {"spin_without_friction", test_spin_without_friction},
    {"refusals", test_refusals},
    {"too_many_contacts", test_too_many_contacts},
};

int main(int argc, char **argv) {
    test_tmp_name = "test_friction_run";
    const int rc = ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
    if (rc == 0) {
        test_tmp_remove();
    }
    return rc;
}
