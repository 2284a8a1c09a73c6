/* SPDX-License-Identifier: MIT
 * nbsim — periodic boundaries (issue 22) on the CPU reference: the parameter and its refusals;
 * a pair touching across a face, an edge or a corner feels the force of the same pair inside;
 * every pair map, the culled tiles and both kinds of neighbour list give the forces of a
 * brute-force minimum-image sum, and the same touching pairs as a brute-force minimum-image sweep
 * at every step of a fast dense gas crowded against the faces; an elastic periodic gas keeps its
 * energy and momentum (no walls); bodies leaving one face enter at the other while walls stay on
 * the other axes; ATM triples wrap as one image, never through two.
 * `test_periodic --lammps DIR` compares the ATM forces with LAMMPS's pair_style atm in periodic
 * boxes (tests/lammps/in.atm), skipped (77) where there is no lmp. */
#define _DEFAULT_SOURCE /* realpath */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "periodic_pairs.h"
#include "test_tmp.h"
#include "test_backend_util.h"
#include "test_cull_scenes.h"

#include "nbsim/params.h"
#include "physics/physics.h"

/* ---- helpers ---- */

static sim_params periodic_params(double box_half, int axes) {
    sim_params p = sim_params_default();
    p.box_half = box_half;
    p.periodic = axes;
    p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    p.restitution = 0.9;
    p.skin.value = 0.0; /* culled tiles unless a test asks for lists */
    p.skin.set = 1;
    return p;
}

/* n bodies crowded against the faces, edges and corners of the box of half-width h: each
 * coordinate within `shell` of a face with probability 2/3, else anywhere; radii 0.4-0.5 m. */
static sim_state boundary_state(uint64_t *rng, uint32_t n, double h, double shell, double v) {
    sim_state s = test_random_state(rng, n, h, v);
    for (uint32_t i = 0; i < n; ++i) {
        double *x[3] = {&s.pos[i].x, &s.pos[i].y, &s.pos[i].z};
        for (int a = 0; a < 3; ++a) {
            const double u = test_rnd(rng, 0.0, 3.0);
            if (u < 2.0) {
                const double side = u < 1.0 ? -1.0 : 1.0;
                *x[a] = side * (h - test_rnd(rng, 0.0, shell));
            }
        }
    }
    return s;
}

/* Centres on the walled axes of p kept clear of the walls (a body past one is not the point). */
static void clear_walls(sim_state *s, const sim_params *p) {
    const double lim = p->box_half - 0.55;
    for (uint32_t i = 0; i < s->n; ++i) {
        double *x[3] = {&s->pos[i].x, &s->pos[i].y, &s->pos[i].z};
        for (int a = 0; a < 3; ++a) {
            if (!((p->periodic >> a) & 1)) {
                *x[a] = fmax(-lim, fmin(lim, *x[a]));
            }
        }
    }
}

static sim_backend_config cpu_config(int cull, sim_nlist_kind kind) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.tile = 32;
    c.cpu_threads = 2;
    c.cull = cull;
    c.nlist = kind;
    return c;
}

/* ---- the parameter ---- */

static void test_params(void) {
    sim_params p = sim_params_default();
    sim_error err;
    ENSURE(p.periodic == 0);
    ENSURE(sim_param_from_key("periodic") == SIM_PARAM_PERIODIC);
    ENSURE(sim_param_from_flag("--periodic") == SIM_PARAM_PERIODIC);
    static const struct {
        const char *text;
        int axes;
    } good[] = {{"x", 1},       {"y", 2},   {"z", 4},    {"xz", 5}, {"x,z", 5},
                {"x, y, z", 7}, {"zyx", 7}, {"none", 0}, {"y,x", 3}};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; ++k) {
        p.periodic = -1;
        ENSURE_MSG(sim_param_set(&p, SIM_PARAM_PERIODIC, good[k].text, &err) == SIM_OK &&
                       p.periodic == good[k].axes,
                   "'%s' -> %d", good[k].text, p.periodic);
    }
    static const char *const bad[] = {"",  "w", "xx",   "x,x", "xyzx", "none,x",
                                      "X", "1", "auto", ",",   "x;z"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        ENSURE_MSG(sim_param_set(&p, SIM_PARAM_PERIODIC, bad[k], &err) == SIM_BAD_ARGUMENT &&
                       strstr(err.message, "periodic axes") != NULL,
                   "'%s' accepted (%s)", bad[k], err.message);
    }
    char t[8];
    ENSURE(strcmp(sim_periodic_text(5, ",", t, sizeof t), "x,z") == 0);
    ENSURE(strcmp(sim_periodic_text(7, "", t, sizeof t), "xyz") == 0);
    ENSURE(strcmp(sim_periodic_text(0, ",", t, sizeof t), "none") == 0);
    for (int axes = 0; axes <= 7; ++axes) { /* the texts read back */
        ENSURE(sim_param_set(&p, SIM_PARAM_PERIODIC, sim_periodic_text(axes, ",", t, 8), &err) ==
                   SIM_OK &&
               p.periodic == axes);
    }
    p = sim_params_default();
    p.periodic = 8;
    ENSURE(sim_params_check(&p, &err) == SIM_BAD_ARGUMENT);
    sim_params q = sim_params_default();
    p.periodic = 1;
    ENSURE(!sim_params_same_model(&p, &q)); /* a periodic box is another model */
}

/* ---- refusals, before any work ---- */

static void test_refusals(void) {
    sim_params p = periodic_params(5.0, 5);
    sim_error err;
    ENSURE(sim_periodic_check(&p, 0.5, &err) == SIM_OK);
    p.triplets = 1;
    p.atm_nu = 1.0;
    p.atm_cutoff = 0.0;
    ENSURE(sim_periodic_check(&p, 0.5, &err) == SIM_BAD_ARGUMENT &&
           strstr(err.message, "sum over images is not defined") != NULL &&
           strchr(err.message, '\n') == NULL);
    p.atm_cutoff = 5.0; /* exactly half the box: allowed */
    ENSURE(sim_periodic_check(&p, 0.5, &err) == SIM_OK);
    p.atm_cutoff = 5.01;
    ENSURE(sim_periodic_check(&p, 0.5, &err) == SIM_BAD_ARGUMENT &&
           strstr(err.message, "more than half the box") != NULL);
    p.triplets = 0; /* a cut-off without triplets is no triple */
    ENSURE(sim_periodic_check(&p, 0.5, &err) == SIM_OK);
    ENSURE(sim_periodic_check(&p, 2.5, &err) == SIM_BAD_ARGUMENT &&
           strstr(err.message, "two images") != NULL);
    p.periodic = 0; /* walls: none of it applies */
    p.triplets = 1;
    p.atm_cutoff = 0.0;
    ENSURE(sim_periodic_check(&p, 2.5, &err) == SIM_OK);
    /* the backend refuses too (bindings that skip the session) */
    uint64_t rng = 7;
    sim_state s = test_random_state(&rng, 50, 2.0, 1.0);
    sim_params q = periodic_params(2.0, 7);
    q.triplets = 1;
    q.atm_nu = 1.0;
    const sim_backend_config c = cpu_config(1, SIM_NLIST_FULL);
    sim_backend *b = NULL;
    ENSURE(sim_backend_create(&c, &q, &s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    q.triplets = 0;
    q.box_half = 0.9; /* radii up to 0.5: a diameter of ~1 is not below 0.9 */
    ENSURE(sim_backend_create(&c, &q, &s, &b, &err) == SIM_BAD_ARGUMENT && b == NULL);
    sim_state_free(&s);
}

/* ---- one pair across the boundary ---- */

/* For each of the 26 directions (periodic_pairs.h): the pair overlapping along it in the middle
 * of the box and the same pair straddling the faces of that direction. Same force and energy to
 * rounding. */
static void test_pair_across(void) {
    const sim_params p = periodic_params(5.0, 7);
    const sim_physics ph = sim_physics_from_params(&p);
    sim_physics phw = ph; /* walls: what the wrapped pair would feel without the periods */
    phw.box.periodic = 0;
    periodic_pair pairs[PERIODIC_PAIR_DIRECTIONS];
    periodic_pairs_make(p.box_half, pairs);
    int checked = 0;
    for (int k = 0; k < PERIODIC_PAIR_DIRECTIONS; ++k) {
        const periodic_pair *pp = &pairs[k];
        const int dx = pp->dir[0], dy = pp->dir[1], dz = pp->dir[2];
        const sim_vec4d ai = pp->in[0], bi = pp->in[1], aa = pp->across[0], ba = pp->across[1];
        const sim_vec4d va = pp->vel[0], vb = pp->vel[1];
        double ei = 0.0, ea = 0.0, ew = 0.0;
        const sim_vec3d fi = sim_contact_force_d(ai, va, bi, vb, &ph, &ei);
        const sim_vec3d fa = sim_contact_force_d(aa, va, ba, vb, &ph, &ea);
        const sim_vec3d fw = sim_contact_force_d(aa, va, ba, vb, &phw, &ew);
        const double mag = fabs(fi.x) + fabs(fi.y) + fabs(fi.z);
        ENSURE(mag > 0.0 && ei > 0.0);
        ENSURE_MSG(fabs(fa.x - fi.x) + fabs(fa.y - fi.y) + fabs(fa.z - fi.z) <= 1e-12 * mag,
                   "direction (%d %d %d): (%g %g %g) across, (%g %g %g) inside", dx, dy, dz, fa.x,
                   fa.y, fa.z, fi.x, fi.y, fi.z);
        ENSURE_NEAR(ea, ei, 1e-12 * ei);
        ENSURE(ew == 0.0 && fw.x == 0.0 && fw.y == 0.0 && fw.z == 0.0);
        /* the CPU reference's sweeps (map plan, culled tiles, lists) see it too */
        sim_state s;
        sim_error err;
        ENSURE(sim_state_alloc(&s, 2, &err) == SIM_OK);
        s.pos[0] = aa;
        s.pos[1] = ba;
        s.vel[0] = va;
        s.vel[1] = vb;
        for (int path = 0; path < 3; ++path) {
            sim_params q = p;
            if (path == 2) {
                q.skin.value = 0.1;
            }
            const sim_backend_config cc =
                cpu_config(path > 0, path == 2 ? SIM_NLIST_HALF : SIM_NLIST_FULL);
            sim_backend *bk = test_backend_make(&cc, &q, &s, "pair across");
            sim_vec3d *f = test_backend_forces(bk, 2);
            ENSURE_MSG(
                fabs(f[0].x - fi.x) + fabs(f[0].y - fi.y) + fabs(f[0].z - fi.z) <= 1e-12 * mag &&
                    fabs(f[1].x + fi.x) + fabs(f[1].y + fi.y) + fabs(f[1].z + fi.z) <= 1e-12 * mag,
                "direction (%d %d %d), path %d", dx, dy, dz, path);
            free(f);
            sim_backend_destroy(bk);
        }
        sim_state_free(&s);
        ++checked;
    }
    ENSURE(checked == 26);
}

/* ---- forces of every path against a brute-force minimum-image sum ---- */

static void brute_forces(const sim_params *p, const sim_state *s, sim_vec3d *f) {
    const sim_physics ph = sim_physics_from_params(p);
    for (uint32_t i = 0; i < s->n; ++i) {
        f[i] = sim_body_force_d(s->pos[i], s->vel[i], &ph, NULL);
    }
    for (uint32_t i = 0; i < s->n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            double d[3];
            brute_image(p, s->pos[i], s->pos[j], d);
            /* j moved to the image nearest i: the pair's force with no periods at all */
            const sim_vec4d pj = {s->pos[i].x + d[0], s->pos[i].y + d[1], s->pos[i].z + d[2],
                                  s->pos[j].w};
            sim_physics none = ph;
            none.box.periodic = 0;
            const sim_vec3d fij =
                sim_contact_force_d(s->pos[i], s->vel[i], pj, s->vel[j], &none, NULL);
            f[i].x += fij.x;
            f[i].y += fij.y;
            f[i].z += fij.z;
            f[j].x -= fij.x;
            f[j].y -= fij.y;
            f[j].z -= fij.z;
        }
    }
}

static void test_forces_every_path(void) {
    static const int axes_list[4] = {7, 1, 6, 5};
    for (int ai = 0; ai < 4; ++ai) {
        uint64_t rng = 11u + (uint64_t)ai;
        const double h = 4.0;
        sim_state s = boundary_state(&rng, 400, h, 0.6, 1.0);
        sim_params p = periodic_params(h, axes_list[ai]);
        p.dt = 1e-5; /* the reference's physics has the backend's 1/dt (contact onsets) */
        clear_walls(&s, &p);
        sim_vec3d *ref = malloc(s.n * sizeof *ref);
        brute_forces(&p, &s, ref);
        double scale = 0.0;
        for (uint32_t i = 0; i < s.n; ++i) {
            scale = fmax(scale, fabs(ref[i].x) + fabs(ref[i].y) + fabs(ref[i].z));
        }
        int paths = 0;
        for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
            for (int mode = 0; mode < 4; ++mode) { /* plan, culled tiles, full lists, half */
                if (mode > 0 && m != 0) {
                    continue; /* culling is exact whatever map places its passes: map 0 */
                }
                sim_backend_config c =
                    cpu_config(mode > 0, mode == 3 ? SIM_NLIST_HALF : SIM_NLIST_FULL);
                c.pair_map = m;
                sim_params q = p;
                q.skin.value = mode >= 2 ? 0.2 : 0.0;
                sim_backend *b = test_backend_make(&c, &q, &s, "forces");
                sim_vec3d *f = test_backend_forces(b, s.n);
                double d = 0.0;
                for (uint32_t i = 0; i < s.n; ++i) {
                    d = fmax(d, fabs(f[i].x - ref[i].x) + fabs(f[i].y - ref[i].y) +
                                    fabs(f[i].z - ref[i].z));
                }
                ENSURE_MSG(d <= 1e-10 * scale, "axes %d, map %s, mode %d: %g of %g", p.periodic,
                           sim_pair_choice_name(m), mode, d, scale);
                free(f);
                sim_backend_destroy(b);
                ++paths;
            }
        }
        ENSURE(paths == SIM_PAIR_MAP_COUNT + 3);
        free(ref);
        sim_state_free(&s);
    }
}

/* ---- contacts at every step of a fast dense gas against the faces ---- */

static int contacts_exact(sim_backend *b, const sim_params *p, uint32_t n, const char *what,
                          int step) {
    sim_state s;
    sim_error err;
    ENSURE(sim_state_alloc(&s, n, &err) == SIM_OK);
    ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
    int inside = 1;
    for (uint32_t i = 0; i < n; ++i) { /* wrapped into the box on the periodic axes */
        const double x[3] = {s.pos[i].x, s.pos[i].y, s.pos[i].z};
        for (int a = 0; a < 3; ++a) {
            inside &= !((p->periodic >> a) & 1) || fabs(x[a]) <= p->box_half;
        }
    }
    ENSURE_MSG(inside, "%s, step %d: a body outside the periodic box", what, step);
    uint64_t na = 0, nb = 0;
    sim_body_pair *a = contacts_of(b, &na), *w = brute_contacts(p, &s, &nb);
    const int same = same_pairs(a, na, w, nb);
    ENSURE_MSG(same, "%s, step %d: %llu contacts found, %llu touching", what, step,
               (unsigned long long)na, (unsigned long long)nb);
    free(a);
    free(w);
    sim_state_free(&s);
    return same && inside;
}

static void test_contacts_over_time(void) {
    static const struct {
        int cull;
        sim_nlist_kind kind;
        double skin;
        const char *name;
    } paths[] = {{1, SIM_NLIST_FULL, 0.0, "culled tiles"},
                 {1, SIM_NLIST_FULL, 0.15, "full lists"},
                 {1, SIM_NLIST_HALF, 0.15, "half lists"},
                 {0, SIM_NLIST_FULL, 0.0, "map plan"}};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; ++k) {
        uint64_t rng = 101u + k;
        const double h = 5.0;
        /* the walled z of the map plan's case holds a thinner, slower gas: crowded bodies thrown
         * apart at the gas's speeds would pass through a wall */
        sim_state s = boundary_state(&rng, k == 3 ? 250 : 700, h, 0.8, k == 3 ? 3.0 : 12.0);
        sim_params p = periodic_params(h, k == 3 ? 3 : 7);
        clear_walls(&s, &p);
        p.restitution = 1.0;
        p.skin.value = paths[k].skin;
        const sim_backend_config c = cpu_config(paths[k].cull, paths[k].kind);
        sim_backend *b = test_backend_make(&c, &p, &s, paths[k].name);
        int contacts_seen = 0, crossings = 0;
        sim_state prev;
        sim_error err;
        ENSURE(sim_state_alloc(&prev, s.n, &err) == SIM_OK);
        const int steps = k < 3 ? 2000 : 300;
        for (int step = 0; step < steps; ++step) {
            ENSURE(sim_backend_read_state(b, &prev, NULL, &err) == SIM_OK);
            sim_frame_timing t;
            if (sim_backend_run_frame(b, &t, &err) != SIM_OK) {
                ENSURE_MSG(0, "%s, step %d: %s", paths[k].name, step, err.message);
                break;
            }
            contacts_seen += t.contacts > 0 || !paths[k].cull;
            if (!contacts_exact(b, &p, s.n, paths[k].name, step)) {
                break;
            }
            { /* bodies that jumped a period: they crossed a face */
                sim_state now;
                ENSURE(sim_state_alloc(&now, s.n, &err) == SIM_OK);
                ENSURE(sim_backend_read_state(b, &now, NULL, &err) == SIM_OK);
                for (uint32_t i = 0; i < s.n; ++i) {
                    crossings += fabs(now.pos[i].x - prev.pos[i].x) > h;
                }
                sim_state_free(&now);
            }
        }
        printf("  %s: %d steps, %d with contacts, %d face crossings\n", paths[k].name, steps,
               contacts_seen, crossings);
        ENSURE(contacts_seen > steps / 2 && crossings > 0);
        sim_state_free(&prev);
        sim_backend_destroy(b);
        sim_state_free(&s);
    }
}

/* ---- an elastic periodic gas ---- */

static void momentum(sim_backend *b, uint32_t n, double out[3]) {
    sim_state s;
    sim_error err;
    ENSURE(sim_state_alloc(&s, n, &err) == SIM_OK);
    ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
    out[0] = out[1] = out[2] = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        out[0] += s.vel[i].w * s.vel[i].x;
        out[1] += s.vel[i].w * s.vel[i].y;
        out[2] += s.vel[i].w * s.vel[i].z;
    }
    sim_state_free(&s);
}

static void test_elastic_gas(void) {
    uint64_t rng = 3;
    const double h = 6.0;
    sim_state s = test_random_state(&rng, 600, h, 3.0);
    sim_params p = periodic_params(h, 7);
    p.restitution = 1.0;
    p.skin.set = 0; /* auto: the default lists */
    const sim_backend_config c = cpu_config(1, SIM_NLIST_FULL);
    sim_backend *b = test_backend_make(&c, &p, &s, "elastic gas");
    sim_energy e0, e;
    sim_error err;
    ENSURE(sim_backend_energy(b, &e0, &err) == SIM_OK);
    double p0[3], p1[3];
    momentum(b, s.n, p0);
    double worst = 0.0;
    uint64_t contacts = 0;
    for (int frame = 0; frame < 300; ++frame) {
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        contacts += t.contacts;
        ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
        worst = fmax(worst, fabs(e.total - e0.total) / e0.total);
    }
    momentum(b, s.n, p1);
    const double pscale = fabs(p0[0]) + fabs(p0[1]) + fabs(p0[2]) + 1.0;
    printf("  elastic gas: energy within %.2e of %g J over 300 steps, %llu contacts\n", worst,
           e0.total, (unsigned long long)contacts);
    ENSURE(contacts > 100);
    ENSURE_MSG(worst < 2e-3, "energy drifted by %g", worst);
    /* no walls on any axis: nothing but the pairs, which cancel */
    ENSURE(fabs(p1[0] - p0[0]) + fabs(p1[1] - p0[1]) + fabs(p1[2] - p0[2]) < 1e-9 * pscale);
    sim_backend_destroy(b);
    sim_state_free(&s);
}

/* ---- leaving one face, entering at the other; walls on the others ---- */

static void test_wrap_and_walls(void) {
    sim_state s;
    sim_error err;
    ENSURE(sim_state_alloc(&s, 2, &err) == SIM_OK);
    s.pos[0] = (sim_vec4d){4.6, 0.0, 0.0, 0.3};
    s.vel[0] = (sim_vec4d){5.0, 0.0, 0.0, 1.0}; /* along the periodic x */
    s.pos[1] = (sim_vec4d){0.0, 4.6, 0.0, 0.3};
    s.vel[1] = (sim_vec4d){0.0, 5.0, 0.0, 1.0}; /* towards the wall at y = +5 */
    sim_params p = periodic_params(5.0, 1);
    p.restitution = 1.0;
    p.dt = 1e-3;
    const sim_backend_config c = cpu_config(1, SIM_NLIST_FULL);
    sim_backend *b = test_backend_make(&c, &p, &s, "wrap");
    int wrapped = 0, bounced = 0;
    for (int step = 0; step < 300; ++step) {
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
        ENSURE(s.pos[0].x >= -5.0 && s.pos[0].x <= 5.0);
        wrapped |= s.pos[0].x < 0.0;
        bounced |= s.vel[1].y < 0.0;
        ENSURE(s.pos[1].y < 5.0); /* a wall, never wrapped */
    }
    ENSURE(wrapped && bounced);
    ENSURE_NEAR(s.vel[0].x, 5.0, 1e-12); /* nothing touched it */
    ENSURE_NEAR(s.pos[0].x, 4.6 + 5.0 * 0.3 - 10.0, 1e-9);
    sim_backend_destroy(b);
    sim_state_free(&s);
}

/* ---- tiles whose bodies crossed a face since the last sort (cull.h: boxes of near images) ----
 *
 * A touching lattice filling the period on x and z (32 x 32 sites 1 m apart, radius 0.52 m: every
 * site touches its neighbours, across the faces too; 2 layers 1.2 m apart, which do not touch,
 * so nothing expands) sliding along +x at 5 m/s, sorted once at
 * the start and never again: the tiles at the face at +x take turns having bodies on both sides
 * of it. Their boxes are made of the images nearest each tile's first body, so the tile pairs
 * kept stay those of the first frame (a box of wrapped centres would span the period and meet a
 * whole slab of tiles, and the regrowth would re-sort), and the touching pairs are the brute
 * force's through minimum images at every frame: culled tiles in one and two passes (super-tile
 * boxes), and full lists. */
static void test_wrapped_tiles(void) {
    const double h = 16.0;
    const uint32_t side = 32, layers = 2, n = side * side * layers;
    const cull_path *paths = cull_paths;
    for (size_t k = 0; k < sizeof cull_paths / sizeof cull_paths[0]; ++k) {
        sim_state s;
        sim_error err;
        ENSURE(sim_state_alloc(&s, n, &err) == SIM_OK);
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t ix = i % side, iz = i / side % side, iy = i / side / side;
            s.pos[i] = (sim_vec4d){-h + 0.5 + ix, 1.2 * (iy - 0.5), -h + 0.5 + iz, 0.52};
            s.vel[i] = (sim_vec4d){5.0, 0.0, 0.0, 1.0};
        }
        sim_params p = periodic_params(h, 5);
        p.dt = 1e-3;
        p.steps_per_frame = 10;
        p.skin.value = paths[k].skin;
        sim_backend_config c = cpu_config(1, SIM_NLIST_FULL);
        c.cull_levels = paths[k].levels;
        c.sort_every = 1000000;
        sim_backend *b = test_backend_make(&c, &p, &s, paths[k].name);
        tile_pair_watch w = {0, 0, 0};
        int exact = 1;
        const int frames = 36; /* 1.8 m along x: every tile at the face has straddled it */
        for (int f = 0; f < frames && exact; ++f) {
            sim_frame_timing t;
            ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s", err.message);
            tile_pair_watch_frame(&w, &t, f, &paths[k]);
            exact = contacts_exact(b, &p, n, paths[k].name, f);
        }
        printf("  %s: %d frames exact; tile pairs %llu at the sort, at most %llu after; %d "
               "re-sorts\n",
               paths[k].name, frames, (unsigned long long)w.first, (unsigned long long)w.most,
               w.sorts);
        ENSURE(exact);
        tile_pair_watch_check(&w, &paths[k]);
        sim_backend_destroy(b);
        sim_state_free(&s);
    }
}

/* ---- several ranks (the multi backend over CPU ranks): each wraps the same bodies ---- */

/* Three ranks sharing the culled rows (and the ATM cut-off's triples) follow the one-rank run of
 * a fast periodic gas up to the order of the double sums; every rank wraps its own copy of the
 * bodies after the drift, so the ranks stay identical and the bodies inside the box. */
static void test_ranks(void) {
    scene sc = make_scene("gas", 500, 21); /* the squeezed gas: contacts everywhere, no blast */
    sim_state s = sc.s;
    for (uint32_t i = 0; i < s.n; ++i) { /* fast, so that bodies cross the faces */
        s.vel[i].x *= 8.0;
        s.vel[i].y *= 8.0;
        s.vel[i].z *= 8.0;
    }
    sim_params p = sc.p;
    p.periodic = 7;
    p.skin.value = 0.0;
    p.skin.set = 1;
    p.triplets = 1;
    p.atm_nu = 0.05;
    p.atm_cutoff = 2.0;
    p.steps_per_frame = 10;
    sim_backend_config one = cpu_config(1, SIM_NLIST_FULL), three = one;
    one.cpu_threads = three.cpu_threads = 1;
    three.multi.world = 3;
    three.multi.local = 3;
    sim_backend *a = test_backend_make(&one, &p, &s, "one rank");
    sim_backend *b = test_backend_make(&three, &p, &s, "three ranks");
    sim_error err;
    for (int frame = 0; frame < 20; ++frame) {
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(a, &t, &err) == SIM_OK);
        ENSURE_MSG(sim_backend_run_frame(b, &t, &err) == SIM_OK, "%s", err.message);
    }
    const double d = test_backend_state_diff(a, b, s.n);
    printf("  three ranks against one after 200 steps: %.2e (positions + velocities)\n", d);
    ENSURE(d < 1e-8);
    ENSURE(contacts_exact(b, &p, s.n, "three ranks", 200));
    sim_backend_destroy(a);
    sim_backend_destroy(b);
    scene_free(&sc);
}

/* ---- ATM: one image per triple ---- */

/* Three bodies spread round a ring of period 10 along x, each pair within the cut-off through
 * its own image, but no one image holds all three (the sides sum to a period): not a triple,
 * in the double reference and in the float pair terms the kernels use. */
static void test_atm_wrapping_triple(void) {
    sim_params p = periodic_params(5.0, 1);
    p.atm_nu = 1.0;
    p.atm_cutoff = 4.5;
    p.triplets = 1;
    const sim_physics ph = sim_physics_from_params(&p);
    const sim_vec4d q[3] = {{-4.0, 0.0, 0.0, 0.1}, {-0.7, 0.3, 0.0, 0.1}, {2.6, -0.2, 0.1, 0.1}};
    sim_vec3d f[3];
    double e = 0.0;
    sim_atm_forces_d(q[0], q[1], q[2], &ph, &f[0], &f[1], &f[2], &e);
    ENSURE(e == 0.0 && f[0].x == 0.0 && f[1].y == 0.0 && f[2].z == 0.0);
    const sim_period_f per = sim_period_to_float(ph.box.period);
    sim_vec4f qf[3];
    for (int k = 0; k < 3; ++k) {
        qf[k] = (sim_vec4f){(float)q[k].x, (float)q[k].y, (float)q[k].z, (float)q[k].w};
    }
    sim_vec3f g[3];
    float ef = 0.0f;
    const float nu3 = sim_atm_nu3_f(1.0f), a2 = sim_atm_a2_max_f(4.5f * 4.5f);
    sim_atm_forces_pairwise_f(qf[0], qf[1], qf[2], nu3, a2, &per, &g[0], &g[1], &g[2], &ef);
    ENSURE(ef == 0.0f && g[0].x == 0.0f && g[1].x == 0.0f && g[2].x == 0.0f);
    /* the same three closer, across the face: one image holds them, and it is their force */
    const sim_vec4d r[3] = {{4.2, 0.0, 0.0, 0.1}, {-4.6, 0.3, 0.0, 0.1}, {-3.5, -0.2, 0.1, 0.1}};
    const sim_vec4d r_in[3] = {{4.2, 0.0, 0.0, 0.1}, {5.4, 0.3, 0.0, 0.1}, {6.5, -0.2, 0.1, 0.1}};
    sim_physics none = ph;
    none.box.periodic = 0;
    sim_vec3d fa[3], fb[3];
    double ea = 0.0, eb = 0.0;
    sim_atm_forces_d(r[0], r[1], r[2], &ph, &fa[0], &fa[1], &fa[2], &ea);
    sim_atm_forces_d(r_in[0], r_in[1], r_in[2], &none, &fb[0], &fb[1], &fb[2], &eb);
    ENSURE(eb != 0.0);
    ENSURE_NEAR(ea, eb, 1e-12 * fabs(eb));
    for (int k = 0; k < 3; ++k) {
        const double m = fabs(fb[k].x) + fabs(fb[k].y) + fabs(fb[k].z);
        ENSURE_NEAR(fa[k].x, fb[k].x, 1e-10 * m);
        ENSURE_NEAR(fa[k].y, fb[k].y, 1e-10 * m);
        ENSURE_NEAR(fa[k].z, fb[k].z, 1e-10 * m);
    }
    for (int k = 0; k < 3; ++k) {
        qf[k] = (sim_vec4f){(float)r[k].x, (float)r[k].y, (float)r[k].z, (float)r[k].w};
    }
    sim_atm_forces_pairwise_f(qf[0], qf[1], qf[2], nu3, a2, &per, &g[0], &g[1], &g[2], &ef);
    for (int k = 0; k < 3; ++k) {
        const double m = fabs(fb[k].x) + fabs(fb[k].y) + fabs(fb[k].z);
        ENSURE_NEAR(g[k].x, fb[k].x, 1e-4 * m);
        ENSURE_NEAR(g[k].y, fb[k].y, 1e-4 * m);
    }
}

/* ATM forces of the plan and of the cut-off's culled tile triples against a brute-force sum
 * over one image per triple (the bodies moved to their images nearest body i). */
static void test_atm_paths(void) {
    uint64_t rng = 5;
    const double h = 3.0;
    const uint32_t n = 90;
    sim_state s = test_random_state(&rng, n, h, 0.0);
    for (uint32_t i = 0; i < n; ++i) {
        s.pos[i].w = 0.05;
    }
    for (int cut = 0; cut < 2; ++cut) {
        sim_params p = periodic_params(h, 7);
        p.triplets = 1;
        p.atm_nu = 0.01;
        p.atm_cutoff = cut ? 2.9 : 1.7; /* above a third of the period, and below */
        sim_physics ph = sim_physics_from_params(&p);
        sim_physics none = ph;
        none.box.periodic = 0;
        sim_vec3d *ref = calloc(n, sizeof *ref);
        for (uint32_t i = 0; i < n; ++i) {
            for (uint32_t j = 0; j < i; ++j) {
                for (uint32_t k = 0; k < j; ++k) {
                    double dj[3], dk[3];
                    brute_image(&p, s.pos[i], s.pos[j], dj);
                    brute_image(&p, s.pos[i], s.pos[k], dk);
                    const sim_vec4d pj = {s.pos[i].x + dj[0], s.pos[i].y + dj[1],
                                          s.pos[i].z + dj[2], 0.05};
                    const sim_vec4d pk = {s.pos[i].x + dk[0], s.pos[i].y + dk[1],
                                          s.pos[i].z + dk[2], 0.05};
                    sim_vec3d a, b, c;
                    sim_atm_forces_d(s.pos[i], pj, pk, &none, &a, &b, &c, NULL);
                    ref[i].x += a.x, ref[i].y += a.y, ref[i].z += a.z;
                    ref[j].x += b.x, ref[j].y += b.y, ref[j].z += b.z;
                    ref[k].x += c.x, ref[k].y += c.y, ref[k].z += c.z;
                }
            }
        }
        double scale = 0.0;
        for (uint32_t i = 0; i < n; ++i) {
            scale = fmax(scale, fabs(ref[i].x) + fabs(ref[i].y) + fabs(ref[i].z));
        }
        ENSURE(scale > 0.0);
        for (int culled = 0; culled < 2; ++culled) {
            sim_backend_config c = cpu_config(culled, SIM_NLIST_FULL);
            sim_backend *b = test_backend_make(&c, &p, &s, "atm");
            sim_vec3d *f = test_backend_forces(b, n);
            double d = 0.0;
            for (uint32_t i = 0; i < n; ++i) {
                d = fmax(d, fabs(f[i].x - ref[i].x) + fabs(f[i].y - ref[i].y) +
                                fabs(f[i].z - ref[i].z));
            }
            ENSURE_MSG(d <= 1e-9 * scale, "cut-off %g, culled %d: %g of %g", p.atm_cutoff, culled,
                       d, scale);
            free(f);
            sim_backend_destroy(b);
        }
        free(ref);
    }
    sim_state_free(&s);
}

/* ---- against LAMMPS's pair_style atm (--lammps DIR) ---- */

static const char *lammps_dir;

/* Runs tests/lammps/in.atm on s in a box of half-width h with boundary `bounds` ("p p p"), and
 * reads the forces back (by atom id). 0 when LAMMPS failed. */
static int lammps_atm(const sim_state *s, double h, const char *bounds, double nu, double cut,
                      sim_vec3d *f) {
    const char *data = test_tmp_path("atm.data");
    FILE *o = fopen(data, "w");
    ENSURE(o != NULL);
    fprintf(o, "nbsim periodic ATM\n\n%u atoms\n1 atom types\n\n", s->n);
    fprintf(o,
            "%.17g %.17g xlo xhi\n%.17g %.17g ylo yhi\n%.17g %.17g zlo zhi\n\nAtoms # atomic\n\n",
            -h, h, -h, h, -h, h);
    for (uint32_t i = 0; i < s->n; ++i) {
        fprintf(o, "%u 1 %.17g %.17g %.17g\n", i + 1, s->pos[i].x, s->pos[i].y, s->pos[i].z);
    }
    fclose(o);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && OMP_NUM_THREADS=1 lmp -in '%s/in.atm' -log atm.log -screen none -var data "
             "atm.data -var dump atm.dump -var bounds '%s' -var nu %.17g -var cut %.17g",
             test_tmp_dir, lammps_dir, bounds, nu, cut);
    if (system(cmd) != 0) {
        ENSURE_MSG(0, "LAMMPS failed (%s); see %s/atm.log", cmd, test_tmp_dir);
        return 0;
    }
    FILE *in = fopen(test_tmp_path("atm.dump"), "r");
    ENSURE(in != NULL);
    char line[512];
    uint32_t got = 0;
    int atoms = 0;
    while (in != NULL && fgets(line, sizeof line, in) != NULL) {
        if (strncmp(line, "ITEM: ATOMS", 11) == 0) {
            atoms = 1;
            continue;
        }
        unsigned id;
        double x, y, z, fx, fy, fz;
        if (atoms &&
            sscanf(line, "%u %lf %lf %lf %lf %lf %lf", &id, &x, &y, &z, &fx, &fy, &fz) == 7 &&
            id >= 1 && id <= s->n) {
            f[id - 1] = (sim_vec3d){fx, fy, fz};
            ++got;
        }
    }
    if (in != NULL) {
        fclose(in);
    }
    ENSURE_MSG(got == s->n, "%u forces in LAMMPS's dump, expected %u", got, s->n);
    return got == s->n;
}

static void test_lammps_atm(void) {
    static const struct {
        int axes;
        const char *bounds;
        double cut;
    } cases[] = {{7, "p p p", 2.4}, {7, "p p p", 4.4}, {5, "p f p", 3.1}, {2, "f p f", 4.9}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        uint64_t rng = 77u + k;
        const double h = 5.0;
        const uint32_t n = 60;
        sim_state s = test_random_state(&rng, n, h - 0.2, 0.0);
        for (uint32_t i = 0; i < n; ++i) {
            s.pos[i].w = 0.05;
            s.vel[i].x = s.vel[i].y = s.vel[i].z = 0.0;
        }
        sim_vec3d *lmp = calloc(n, sizeof *lmp);
        const double nu = 0.7;
        if (!lammps_atm(&s, h, cases[k].bounds, nu, cases[k].cut, lmp)) {
            free(lmp);
            sim_state_free(&s);
            return;
        }
        sim_params p = periodic_params(h, cases[k].axes);
        p.triplets = 1;
        p.atm_nu = nu;
        p.atm_cutoff = cases[k].cut;
        double scale = 0.0;
        for (uint32_t i = 0; i < n; ++i) {
            scale = fmax(scale, fabs(lmp[i].x) + fabs(lmp[i].y) + fabs(lmp[i].z));
        }
        for (int culled = 0; culled < 2; ++culled) {
            sim_backend_config c = cpu_config(culled, SIM_NLIST_FULL);
            sim_backend *b = test_backend_make(&c, &p, &s, "lammps atm");
            sim_vec3d *f = test_backend_forces(b, n);
            double d = 0.0;
            for (uint32_t i = 0; i < n; ++i) {
                d = fmax(d, fabs(f[i].x - lmp[i].x) + fabs(f[i].y - lmp[i].y) +
                                fabs(f[i].z - lmp[i].z));
            }
            printf("  %s cut-off %g, %s: largest difference %.3g of %.3g N\n", cases[k].bounds,
                   cases[k].cut, culled ? "culled" : "plan", d, scale);
            ENSURE_MSG(scale > 0.0 && d <= 1e-11 * scale, "%s cut-off %g culled %d: %g of %g",
                       cases[k].bounds, cases[k].cut, culled, d, scale);
            free(f);
            sim_backend_destroy(b);
        }
        free(lmp);
        sim_state_free(&s);
    }
}

static const ensure_test tests[] = {
    {"params", test_params},
    {"refusals", test_refusals},
    {"pair_across", test_pair_across},
    {"forces_every_path", test_forces_every_path},
    {"contacts_over_time", test_contacts_over_time},
    {"elastic_gas", test_elastic_gas},
    {"wrap_and_walls", test_wrap_and_walls},
    {"wrapped_tiles", test_wrapped_tiles},
    {"ranks", test_ranks},
    {"atm_wrapping_triple", test_atm_wrapping_triple},
    {"atm_paths", test_atm_paths},
};

static const ensure_test lammps_tests[] = {
    {"lammps_atm", test_lammps_atm},
};

int main(int argc, char **argv) {
    test_tmp_name = "test_periodic";
    if (argc > 2 && strcmp(argv[1], "--lammps") == 0) {
        static char dir[4096];
        lammps_dir = realpath(argv[2], dir) != NULL ? dir : argv[2]; /* LAMMPS runs elsewhere */
        if (system("lmp -h 2>/dev/null | grep -qw atm") != 0) {
            printf("no LAMMPS (lmp) with pair_style atm: skipped\n");
            return ENSURE_SKIP_CODE;
        }
        const int rc = ensure_run(lammps_tests, (int)(sizeof lammps_tests / sizeof lammps_tests[0]),
                                  argc > 3 ? argv[3] : NULL);
        if (rc == 0) {
            test_tmp_remove();
        } else if (test_tmp_dir[0] != '\0') {
            printf("LAMMPS's files: %s\n", test_tmp_dir);
        }
        return rc;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
