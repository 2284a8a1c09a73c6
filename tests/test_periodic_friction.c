/* SPDX-License-Identifier: MIT
 * nbsim — friction in a periodic box (issue 22) on the CPU reference: a frictional pair touching
 * across a face, an edge or a corner feels the force and the torques of the same pair inside
 * (every enumeration: the map plan, culled tiles, full and half lists), and keeps one contact
 * history; a dense frictional pack in a box periodic on x and z (gravity -y, walls on y) gives
 * over culled tiles and both kinds of list what the plan's sweep gives. A separation formed raw
 * instead of through the minimum image drops every contact across a face: both catch it. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/internal/backend.h"
#include "physics/physics.h"

#include "ensure.h"
#include "friction_util.h"
#include "periodic_pairs.h"
#include "test_backend_util.h"
#include "test_rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static sim_params fric_params(double h, int axes) {
    sim_params p = sim_params_default();
    p.box_half = h;
    p.periodic = axes;
    p.gravity = v3(0.0, 0.0, 0.0);
    p.restitution = 0.6;
    p.friction = 0.5;
    p.rolling_friction = 0.1;
    p.skin.value = 0.0;
    p.skin.set = 1;
    p.steps_per_frame = 1;
    return p;
}

/* path 0: the map plan; 1: culled tiles; 2, 3: culled full, half lists (skin 0.1). */
static sim_backend *make_path(const sim_params *p0, const sim_state *s, int path) {
    sim_params p = *p0;
    p.skin.value = path >= 2 ? 0.1 : 0.0;
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.pair_map = SIM_PAIR_MAP_LTM;
    c.tile = 32;
    c.cull = path > 0;
    c.nlist = path == 3 ? SIM_NLIST_HALF : SIM_NLIST_FULL;
    return test_backend_make(&c, &p, s, "periodic friction");
}

typedef struct {
    sim_state s;
    sim_vec3d *f;
} snap;

static snap run(const sim_params *p, const sim_state *s0, int path, int frames) {
    sim_backend *b = make_path(p, s0, path);
    sim_error err = {SIM_OK, ""};
    for (int k = 0; k < frames; ++k) {
        sim_frame_timing t;
        const sim_status st = sim_backend_run_frame(b, &t, &err);
        ENSURE_MSG(st == SIM_OK, "path %d: %s", path, err.message);
    }
    snap out;
    ENSURE(sim_state_alloc(&out.s, s0->n, &err) == SIM_OK);
    out.f = calloc(s0->n, sizeof *out.f);
    ENSURE(sim_backend_read_state(b, &out.s, out.f, &err) == SIM_OK);
    sim_backend_destroy(b);
    return out;
}

static void snap_free(snap *x) {
    sim_state_free(&x->s);
    free(x->f);
}

/* Largest difference of velocities, spins, forces and springs (positions may differ by a period:
 * not compared), relative to scale; the same contacts (pairs) required. */
static double snap_diff(const snap *a, const snap *b, double scale, const char *what) {
    double d = 0.0;
    for (uint32_t i = 0; i < a->s.n; ++i) {
        d = fmax(d, norm3(sub3(xyz(a->s.vel[i]), xyz(b->s.vel[i]))));
        d = fmax(d, norm3(sub3(xyz(a->s.spin[i]), xyz(b->s.spin[i]))));
        d = fmax(d, norm3(sub3(a->f[i], b->f[i])) * 1e-3);
    }
    ENSURE_MSG(a->s.contact_count == b->s.contact_count, "%s: %llu contacts against %llu", what,
               (unsigned long long)a->s.contact_count, (unsigned long long)b->s.contact_count);
    if (a->s.contact_count != b->s.contact_count) {
        return INFINITY;
    }
    for (uint64_t k = 0; k < a->s.contact_count; ++k) {
        const sim_state_contact *x = &a->s.contacts[k], *y = &b->s.contacts[k];
        ENSURE_MSG(x->i == y->i && x->j == y->j, "%s: contact %llu is %u-%u against %u-%u", what,
                   (unsigned long long)k, x->i, x->j, y->i, y->j);
        d = fmax(d, 1e2 * norm3(sub3(x->xi, y->xi)));
        d = fmax(d, 1e2 * norm3(sub3(x->roll, y->roll)));
    }
    return d / scale;
}

/* Two spinning bodies sliding past each other, inside the box and across each of the 26 faces,
 * edges and corners (periodic_pairs.h; test_periodic.c's pair_across with friction): after one
 * step (a history made, the forces and torques applied) the velocities, spins, forces and the
 * one contact's springs are those of the pair inside, on every path. */
static void test_pair_across(void) {
    const sim_params p = fric_params(5.0, 7);
    periodic_pair pairs[PERIODIC_PAIR_DIRECTIONS];
    periodic_pairs_make(p.box_half, pairs);
    int checked = 0;
    for (int d = 0; d < PERIODIC_PAIR_DIRECTIONS; ++d) {
        const periodic_pair *pp = &pairs[d];
        sim_state in, across;
        sim_error err;
        ENSURE(sim_state_alloc(&in, 2, &err) == SIM_OK);
        ENSURE(sim_state_alloc(&across, 2, &err) == SIM_OK);
        for (int k = 0; k < 2; ++k) { /* tangential sliding and spin: torques */
            in.pos[k] = pp->in[k];
            across.pos[k] = pp->across[k];
            in.vel[k] = across.vel[k] = pp->vel[k];
        }
        in.spin[0] = across.spin[0] = v4(1.5, -0.5, 2.0, 0.0);
        in.spin[1] = across.spin[1] = v4(-1.0, 0.7, 0.3, 0.0);
        for (int path = 0; path < 4; ++path) {
            snap ri = run(&p, &in, path, 1), ra = run(&p, &across, path, 1);
            double spin_change = 0.0;
            for (int k = 0; k < 2; ++k) {
                spin_change += norm3(sub3(xyz(ri.s.spin[k]), xyz(in.spin[k])));
            }
            ENSURE_MSG(ri.s.contact_count == 1 && spin_change > 1e-6,
                       "inside, path %d: %llu contacts, spin change %g", path,
                       (unsigned long long)ri.s.contact_count, spin_change);
            const double diff = snap_diff(&ri, &ra, 1.0, "across");
            ENSURE_MSG(diff <= 1e-9, "direction (%d %d %d), path %d: %g from inside", pp->dir[0],
                       pp->dir[1], pp->dir[2], path, diff);
            snap_free(&ri);
            snap_free(&ra);
        }
        sim_state_free(&in);
        sim_state_free(&across);
        ++checked;
    }
    ENSURE(checked == 26);
}

/* test_friction_run.c's dense frictional pack in a box periodic on x and z at its own edge (so
 * that many contacts cross those faces), falling (gravity -y) onto the floor: 20 steps through
 * culled tiles and full and half lists against the plan's sweep (the same pairs each step, visited
 * in another order: the sums differ in their last bits only). */
static void test_run_paths(void) {
    const uint32_t n = 1500;
    const double h = 0.32 * cbrt((double)n);
    uint64_t rng = 2718;
    sim_state s = test_random_state(&rng, n, h, 0.5);
    for (uint32_t i = 0; i < n; ++i) {
        s.spin[i] = v4(test_rnd(&rng, -2, 2), test_rnd(&rng, -2, 2), test_rnd(&rng, -2, 2), 0.0);
    }
    sim_params p = fric_params(h, 5);
    /* walls on y just around the pack; x and z wrap at +-h, where the pack meets its images */
    p.gravity = v3(0.0, -9.81, 0.0);
    p.steps_per_frame = 10;
    snap ref = run(&p, &s, 0, 2);
    uint64_t across = 0;
    for (uint64_t k = 0; k < ref.s.contact_count; ++k) {
        const sim_state_contact *c = &ref.s.contacts[k];
        if (!SIM_CONTACT_IS_WALL(c->j) &&
            (fabs(ref.s.pos[c->i].x - ref.s.pos[c->j].x) > p.box_half ||
             fabs(ref.s.pos[c->i].z - ref.s.pos[c->j].z) > p.box_half)) {
            ++across;
        }
    }
    printf("  %llu contacts, %llu across a face\n", (unsigned long long)ref.s.contact_count,
           (unsigned long long)across);
    ENSURE(across >= 20);
    double scale = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        scale = fmax(scale, norm3(xyz(ref.s.vel[i])));
    }
    for (int path = 1; path < 4; ++path) {
        snap x = run(&p, &s, path, 2);
        const double d = snap_diff(&ref, &x, scale, "path");
        ENSURE_MSG(d < 1e-9, "path %d against the plan: %g", path, d);
        snap_free(&x);
    }
    snap_free(&ref);
    sim_state_free(&s);
}

static const ensure_test tests[] = {
    {"pair_across", test_pair_across},
    {"run_paths", test_run_paths},
};

int main(int argc, char **argv) {
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
