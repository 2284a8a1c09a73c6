/* SPDX-License-Identifier: MIT
 * nbsim — the ATM cut-off over neighbour lists on the CPU (sim/nlist/cpu_atm_list.c, atm_list.h)
 * against today's CPU path, the culled tile-triple sweep of the CPU backend (cpu_tcull.c), and a
 * brute-force enumeration of every triple:
 *  - the lists, per body, are exactly the bodies j < i within the reach (brute force), through
 *    dense and dilute grids (cells clamped, widened);
 *  - forces and ATM energy equal the backend's culled sweep (no contacts, walls or gravity in
 *    these scenes: its forces are the ATM forces) to 1e-12 relative, and the triples the sweep
 *    counts equal the brute-force count of sim_atm_forces_d's own rule (tscene_triple_counts),
 *    on the `triplets` cluster and the `gas` at R = 3 m, random clouds dense and dilute, and the
 *    integer grid whose triples sit exactly on the cut-off, under skins 0, 0.3 and 1 m;
 *  - after every body moved by up to half the skin, the old lists (not stale) still give the
 *    brute-force forces and count at the new positions; a body moved past half the skin makes
 *    them stale;
 *  - the backend's default path (the lists, stepped: rebuilt when stale or after a sort) over
 *    thousands of steps of a moving cloud: at every frame its forces and ATM energy equal the
 *    tile-triple path's (--skin 0) at the same state to rounding, the lists rebuilt far less
 *    often than every step; and the two paths' trajectories agree over the first steps; in
 *    periodic boxes too (every axis; x and z, a cut-off of 2.6 m in a period of 7 m). */
#include "nbsim/internal/backend.h"
#include "nlist/cpu_atm_list.h"
#include "step/backend_impl.h"

#include "ensure.h"
#include "test_backend_util.h"
#include "test_tcull_scenes.h"

#include <stdlib.h>

#define TOL_REL 1e-12

static const double k_skins[] = {0.0, 0.3, 1.0};
#define SKINS ((int)(sizeof k_skins / sizeof k_skins[0]))

/* ||a - ref|| / ||ref|| and the largest per-body difference over the largest force. */
static void force_diff(const sim_vec3d *a, const sim_vec3d *ref, uint32_t n, double *rel_l2,
                       double *rel_max) {
    double num = 0.0, den = 0.0, big = 0.0, worst = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double dx = a[i].x - ref[i].x, dy = a[i].y - ref[i].y, dz = a[i].z - ref[i].z;
        const double r2 = ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z;
        num += dx * dx + dy * dy + dz * dz;
        den += r2;
        big = fmax(big, sqrt(r2));
        worst = fmax(worst, sqrt(dx * dx + dy * dy + dz * dz));
    }
    *rel_l2 = den > 0.0 ? sqrt(num / den) : sqrt(num);
    *rel_max = big > 0.0 ? worst / big : worst;
}

/* Every triple i > j > k through sim_atm_forces_d, as the tile sweep's argument order. */
static uint64_t brute(const sim_vec4d *pos, uint32_t n, const sim_physics *ph, sim_vec3d *f,
                      double *energy) {
    uint64_t inside = 0;
    for (uint32_t i = 0; i < n; ++i) {
        f[i] = (sim_vec3d){0.0, 0.0, 0.0};
    }
    for (uint32_t i = 2; i < n; ++i) {
        for (uint32_t j = 1; j < i; ++j) {
            for (uint32_t k = 0; k < j; ++k) {
                if (!tscene_triple_counts(pos, i, j, k, ph->atm.atm_cutoff)) {
                    continue;
                }
                sim_vec3d fi, fj, fk;
                sim_atm_forces_d(pos[i], pos[j], pos[k], ph, &fi, &fj, &fk, energy);
                f[i].x += fi.x, f[i].y += fi.y, f[i].z += fi.z;
                f[j].x += fj.x, f[j].y += fj.y, f[j].z += fj.z;
                f[k].x += fk.x, f[k].y += fk.y, f[k].z += fk.z;
                ++inside;
            }
        }
    }
    return inside;
}

/* The lists hold exactly the j < i within reach, each once. */
static void check_lists(const sim_cpu_atm_list *l, const sim_vec4d *pos, double reach2,
                        const char *name) {
    uint32_t bad = 0;
    char *mark = calloc(l->n, 1);
    for (uint32_t i = 0; i < l->n; ++i) {
        uint32_t want = 0;
        for (uint32_t a = 0; a < l->count[i]; ++a) {
            const uint32_t j = l->nbr[(size_t)a * l->stride + i];
            bad += j >= i || mark[j] || !sim_atm_list_near_d(pos[i], pos[j], reach2);
            mark[j] = 1;
        }
        for (uint32_t j = 0; j < i; ++j) {
            want += sim_atm_list_near_d(pos[i], pos[j], reach2);
            mark[j] = 0;
        }
        bad += want != l->count[i];
    }
    free(mark);
    ENSURE_MSG(bad == 0, "%s: %u bodies with wrong lists", name, bad);
}

static uint64_t list_forces(const sim_cpu_atm_list *l, const sim_vec4d *pos, const sim_physics *ph,
                            sim_vec3d *f, double *energy) {
    for (uint32_t i = 0; i < l->n; ++i) {
        f[i] = (sim_vec3d){0.0, 0.0, 0.0};
    }
    *energy = 0.0;
    /* two slices: a sweep of part of the bodies adds only their triples */
    const uint32_t mid = l->n / 3u;
    return sim_cpu_atm_list_sweep(l, 0, mid, pos, ph, f, energy) +
           sim_cpu_atm_list_sweep(l, mid, l->n, pos, ph, f, energy);
}

/* The scene against the backend's culled sweep under every skin, then moved within half the
 * largest skin. */
static void scene_case(tscene *sc) {
    const uint32_t n = sc->s.n;
    sc->p.gravity = (sim_vec3d){0.0, 0.0, 0.0};
    sc->p.box_half = 1e6; /* no walls */
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.cull = 1;
    c.cpu_threads = 1;
    sim_params tiles = sc->p; /* skin 0: the tile triples, not the backend's lists */
    tiles.skin.value = 0.0;
    tiles.skin.set = 1;
    sim_backend *b = test_backend_make(&c, &tiles, &sc->s, sc->name);
    sim_vec3d *f_tiles = test_backend_forces(b, n);
    sim_energy e_tiles;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_backend_energy(b, &e_tiles, &err) == SIM_OK);
    sim_backend_destroy(b);

    const sim_physics ph = sim_physics_from_params(&sc->p);
    sim_vec3d *f_brute = malloc(n * sizeof *f_brute), *f = malloc(n * sizeof *f);
    double e_brute = 0.0;
    const uint64_t want = brute(sc->s.pos, n, &ph, f_brute, &e_brute);
    sim_cpu_atm_list l;
    ENSURE(sim_cpu_atm_list_init(&l, n, &err) == SIM_OK);
    for (int s = 0; s < SKINS; ++s) {
        ENSURE(sim_cpu_atm_list_build(&l, sc->s.pos, ph.atm.atm_cutoff, k_skins[s], &err) == SIM_OK);
        check_lists(&l, sc->s.pos, sim_atm_list_reach2_d(ph.atm.atm_cutoff, k_skins[s]), sc->name);
        double e = 0.0, rel_l2, rel_max;
        const uint64_t got = list_forces(&l, sc->s.pos, &ph, f, &e);
        force_diff(f, f_tiles, n, &rel_l2, &rel_max);
        ENSURE_MSG(got == want && rel_l2 <= TOL_REL && rel_max <= TOL_REL &&
                       fabs(e - e_tiles.atm) <= TOL_REL * fabs(e_tiles.atm),
                   "%s skin %g: %llu triples (brute %llu), F vs tiles %.3g / %.3g, E %.17g vs "
                   "%.17g",
                   sc->name, k_skins[s], (unsigned long long)got, (unsigned long long)want, rel_l2,
                   rel_max, e, e_tiles.atm);
        ENSURE(!sim_cpu_atm_list_stale(&l, sc->s.pos, ph.atm.atm_cutoff, k_skins[s]));
        if (s == 0) {
            printf(
                "  %-40s N=%-4u %llu triples within the cut-off, %.1f entries per body, E %.6g\n",
                sc->name, n, (unsigned long long)got, (double)l.entries / n, e);
        }
    }
    ENSURE(e_brute != 0.0 && want > 0);

    /* Move every body by up to s/2 (s the last, largest skin): the lists stay valid. */
    const double skin = k_skins[SKINS - 1];
    sim_vec4d *moved = malloc(n * sizeof *moved);
    uint64_t rng = 99;
    for (uint32_t i = 0; i < n; ++i) {
        double d[3], len = 0.0;
        for (int a = 0; a < 3; ++a) {
            d[a] = test_rnd(&rng, -1.0, 1.0);
            len += d[a] * d[a];
        }
        const double scale = test_rnd(&rng, 0.0, 0.499 * skin) / sqrt(len);
        moved[i] = (sim_vec4d){sc->s.pos[i].x + scale * d[0], sc->s.pos[i].y + scale * d[1],
                               sc->s.pos[i].z + scale * d[2], sc->s.pos[i].w};
    }
    ENSURE(!sim_cpu_atm_list_stale(&l, moved, ph.atm.atm_cutoff, skin));
    double e = 0.0, e_ref = 0.0, rel_l2, rel_max;
    const uint64_t got = list_forces(&l, moved, &ph, f, &e);
    const uint64_t want_moved = brute(moved, n, &ph, f_brute, &e_ref);
    force_diff(f, f_brute, n, &rel_l2, &rel_max);
    ENSURE_MSG(got == want_moved && rel_l2 <= TOL_REL && rel_max <= TOL_REL &&
                   fabs(e - e_ref) <= TOL_REL * fabs(e_ref),
               "%s moved < s/2: %llu triples (brute %llu), F %.3g / %.3g", sc->name,
               (unsigned long long)got, (unsigned long long)want_moved, rel_l2, rel_max);
    moved[n / 2].x = l.ref[n / 2].x + 0.5001 * skin;
    moved[n / 2].y = l.ref[n / 2].y;
    moved[n / 2].z = l.ref[n / 2].z;
    ENSURE(sim_cpu_atm_list_stale(&l, moved, ph.atm.atm_cutoff, skin));
    ENSURE(sim_cpu_atm_list_stale(&l, sc->s.pos, ph.atm.atm_cutoff, 0.5 * skin)); /* another skin */
    free(moved);
    free(f);
    free(f_brute);
    free(f_tiles);
    sim_cpu_atm_list_free(&l);
    tscene_free(sc);
}

static void test_builtin(void) {
    tscene a = tscene_builtin("triplets", 421, 3.0, 3u);
    scene_case(&a);
    tscene b = tscene_builtin("gas", 517, 3.0, 4u);
    scene_case(&b);
}

/* Uniform clouds of small spheres (no contacts): dense (~12 bodies within R) and dilute (~1). */
static tscene cloud(uint32_t n, double h, double cutoff, uint64_t seed, const char *kind) {
    tscene sc;
    memset(&sc, 0, sizeof sc);
    sc.p = sim_params_default();
    sc.s = test_random_state(&seed, n, h, 0.0);
    for (uint32_t i = 0; i < n; ++i) {
        sc.s.pos[i].w = 0.01;
    }
    sc.p.triplets = 1;
    sc.p.atm_nu = 0.5;
    sc.p.atm_cutoff = cutoff;
    snprintf(sc.name, sizeof sc.name, "%s cloud h %g cut-off %g", kind, h, cutoff);
    tscene_round(&sc);
    return sc;
}

static void test_clouds(void) {
    tscene a = cloud(500, 4.0, 1.8, 11u, "dense");
    scene_case(&a);
    tscene b = cloud(400, 20.0, 3.0, 12u, "dilute");
    scene_case(&b);
}

/* The integer grid: many triples exactly on R = 2 and R = sqrt(8) (tscene_grid). */
static void test_on_cutoff(void) {
    tscene a = tscene_grid(343, 7, 1.0, 2.0, 5u);
    scene_case(&a);
    tscene b = tscene_grid(343, 7, 1.0, sqrt(8.0), 6u);
    scene_case(&b);
}

static sim_backend *cpu_backend(const tscene *sc, const sim_params *p, int sort_every) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.cull = 1;
    c.cpu_threads = 1;
    c.sort_every = sort_every;
    return test_backend_make(&c, p, &sc->s, sc->name);
}

/* The stepped lists against the tile triples, frame by frame, at the lists' own states (the
 * trajectories themselves part by rounding that the ATM forces amplify: compared early only). */
static void stepped_case(tscene *sc, int frames, int sort_every) {
    const uint32_t n = sc->s.n;
    sim_params tp = sc->p;
    tp.skin.value = 0.0;
    tp.skin.set = 1;
    sim_backend *lists = cpu_backend(sc, &sc->p, sort_every);
    sim_backend *tiles = cpu_backend(sc, &tp, sort_every);
    sim_backend *follow = cpu_backend(sc, &tp, sort_every); /* the tile path's own trajectory */
    sim_state st;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&st, n, &err) == SIM_OK);
    sim_vec3d *f_lists = malloc(n * sizeof *f_lists);
    int rebuilds = 0, steps = 0, sorts = 0;
    double worst = 0.0, early = 0.0;
    uint64_t entries = 0;
    for (int fr = 0; fr < frames; ++fr) {
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(lists, &t, &err) == SIM_OK);
        ENSURE_MSG(t.atm_lists && t.triplet_culled && t.tile_triples == 0, "frame %d", fr);
        rebuilds += t.atm_list_rebuilds;
        steps += t.steps;
        sorts += t.sorts;
        entries = t.atm_list_entries;
        if (fr < 3) {
            ENSURE(sim_backend_run_frame(follow, &t, &err) == SIM_OK && !t.atm_lists);
            early = fmax(early, test_backend_state_diff(lists, follow, n));
        }
        ENSURE(sim_backend_read_state(lists, &st, f_lists, &err) == SIM_OK);
        sim_energy e_lists, e_tiles;
        ENSURE(sim_backend_energy(lists, &e_lists, &err) == SIM_OK);
        ENSURE(sim_backend_set_state(tiles, &st, &err) == SIM_OK);
        sim_vec3d *f_tiles = test_backend_forces(tiles, n);
        ENSURE(sim_backend_energy(tiles, &e_tiles, &err) == SIM_OK);
        double rel_l2, rel_max;
        force_diff(f_lists, f_tiles, n, &rel_l2, &rel_max);
        ENSURE_MSG(rel_l2 <= TOL_REL && rel_max <= TOL_REL &&
                       fabs(e_lists.atm - e_tiles.atm) <= TOL_REL * fabs(e_tiles.atm),
                   "%s frame %d: F lists vs tiles %.3g / %.3g, E %.17g vs %.17g", sc->name, fr,
                   rel_l2, rel_max, e_lists.atm, e_tiles.atm);
        ENSURE(e_tiles.atm != 0.0);
        worst = fmax(worst, fmax(rel_l2, rel_max));
        free(f_tiles);
    }
    printf("  %-40s N=%-4u %d steps: forces = the tile triples' within %.1e at every frame; "
           "%d list rebuilds, %d sorts, %.1f entries per body; the paths' states within %.1e "
           "after %d steps\n",
           sc->name, n, steps, worst, rebuilds, sorts, (double)entries / n, early,
           3 * sc->p.steps_per_frame);
    ENSURE(rebuilds > 2 && rebuilds < steps / 4);
    ENSURE(early <= 1e-6);
    free(f_lists);
    sim_state_free(&st);
    sim_backend_destroy(lists);
    sim_backend_destroy(tiles);
    sim_backend_destroy(follow);
    tscene_free(sc);
}

static void test_stepped(void) {
    tscene a = tscene_moving_lattice(7, 1.0, 1.8, 21u);
    stepped_case(&a, 60, 1000); /* 2,400 steps, no sort after the first */
    tscene b = tscene_moving_lattice(5, 0.5, 2.0, 22u);
    stepped_case(&b, 30, 7); /* 1,200 steps, sorted every 7: the lists rebuilt after each */
    /* periodic: the lattice fills its box (period 7 m on every axis, then on x and z), bodies
     * cross the faces, the lists hold minimum images */
    tscene c = tscene_moving_lattice(7, 1.0, 1.8, 23u);
    c.p.periodic = 7;
    c.p.box_half = 3.5;
    snprintf(c.name, sizeof c.name, "periodic xyz lattice cut-off 1.8");
    stepped_case(&c, 30, 1000);
    tscene d = tscene_moving_lattice(7, 2.0, 2.6, 24u);
    d.p.periodic = 5;
    d.p.box_half = 3.5;
    snprintf(d.name, sizeof d.name, "periodic xz lattice cut-off 2.6");
    stepped_case(&d, 16, 1000);
}

/* Lists only where they pay (SIM_ATM_LIST_MAX_NEIGHBOURS within reach): the
 * `triplets` scene at R = 3 m (~85 within R, more with the skin) sweeps its lists; a cut-off
 * spanning the box (every body within reach of every other) keeps its tile triples. */
static void test_where_lists_pay(void) {
    tscene a = tscene_builtin("triplets", 4096, 3.0, 7u);
    sim_backend *b = cpu_backend(&a, &a.p, 1000);
    const double k = b->atm_reach_bodies;
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE_MSG(sim_backend_atm_listing(b) && t.atm_lists && k > 60.0 && k <= 150.0,
               "triplets at R = 3: %.0f within reach, lists %d", k, t.atm_lists);
    printf("  %s: %.0f bodies within reach (the bodies' bounding box): lists\n", a.name, k);
    sim_backend_destroy(b);
    tscene_free(&a);
    tscene c = cloud(600, 4.0, 100.0, 13u, "whole-box");
    sim_backend *w = cpu_backend(&c, &c.p, 1000);
    const double kw = w->atm_reach_bodies;
    ENSURE_MSG(!sim_backend_atm_listing(w) && kw == 599.0, "R = 100 m: %.0f within reach", kw);
    printf("  %s: %.0f bodies within reach: tile triples\n", c.name, kw);
    sim_backend_destroy(w);
    tscene_free(&c);
}

/* A frame of b, then which path its ATM cut-off took (lists or tile triples: the frame's
 * timing, the backend's choice) and its ATM forces and energy at the state reached against the
 * brute force (the lattice never touches: the forces are ATM's alone). */
static void switched_frame(sim_backend *b, const sim_params *p, int lists, const char *what) {
    const uint32_t n = b->n;
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    const double k = b->atm_reach_bodies;
    ENSURE_MSG(sim_backend_atm_listing(b) == lists && t.atm_lists == lists && t.triplet_culled &&
                   (t.tile_triples == 0) == lists,
               "%s: %.0f within reach, lists %d, %llu tile triples", what, k, t.atm_lists,
               (unsigned long long)t.tile_triples);
    sim_state st;
    ENSURE(sim_state_alloc(&st, n, &err) == SIM_OK);
    sim_vec3d *f = malloc(n * sizeof *f), *f_brute = malloc(n * sizeof *f_brute);
    ENSURE(sim_backend_read_state(b, &st, f, &err) == SIM_OK);
    uint32_t touching = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            const double dx = st.pos[i].x - st.pos[j].x, dy = st.pos[i].y - st.pos[j].y,
                         dz = st.pos[i].z - st.pos[j].z, r = st.pos[i].w + st.pos[j].w;
            touching += dx * dx + dy * dy + dz * dz < r * r;
        }
    }
    ENSURE_MSG(touching == 0, "%s: %u pairs touch", what, touching);
    const sim_physics ph = sim_physics_from_params(p);
    double e_brute = 0.0, rel_l2, rel_max;
    const uint64_t triples = brute(st.pos, n, &ph, f_brute, &e_brute);
    sim_energy e;
    ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
    force_diff(f, f_brute, n, &rel_l2, &rel_max);
    ENSURE_MSG(triples > 0 && rel_l2 <= TOL_REL && rel_max <= TOL_REL &&
                   fabs(e.atm - e_brute) <= TOL_REL * fabs(e_brute),
               "%s: F vs brute %.3g / %.3g, E %.17g vs %.17g", what, rel_l2, rel_max, e.atm,
               e_brute);
    printf("  %-34s %3.0f bodies within reach: %-12s %7llu triples, F within %.1e of the brute "
           "force\n",
           what, k, lists ? "lists," : "tile triples,", (unsigned long long)triples,
           fmax(rel_l2, rel_max));
    free(f);
    free(f_brute);
    sim_state_free(&st);
}

/* b's bodies with positions and radii scaled by `by`. */
static void scale_bodies(sim_backend *b, double by) {
    sim_state st;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&st, b->n, &err) == SIM_OK);
    ENSURE(sim_backend_read_state(b, &st, NULL, &err) == SIM_OK);
    for (uint32_t i = 0; i < b->n; ++i) {
        st.pos[i] =
            (sim_vec4d){by * st.pos[i].x, by * st.pos[i].y, by * st.pos[i].z, by * st.pos[i].w};
    }
    ENSURE_MSG(sim_backend_set_state(b, &st, &err) == SIM_OK, "%s", err.message);
    sim_state_free(&st);
}

/* The choice made again mid-run: a lattice whose lists pay (~50 bodies within R + skin) is
 * squeezed by set_state into 0.6 of its size (~230 within reach: tile triples) and back, then its
 * cut-off raised by set_params from 1.8 to 3 m (~200: tile triples) and back; each time a frame
 * takes the path chosen, its forces those of the brute force. */
static void test_switch_mid_run(void) {
    tscene sc = tscene_moving_lattice(6, 0.5, 1.8, 31u);
    sc.p.steps_per_frame = 5;
    sim_backend *b = cpu_backend(&sc, &sc.p, 1000);
    sim_error err = {SIM_OK, ""};
    switched_frame(b, &sc.p, 1, "lattice, R = 1.8 m");
    scale_bodies(b, 0.6);
    switched_frame(b, &sc.p, 0, "set_state: squeezed to 0.6");
    scale_bodies(b, 1.0 / 0.6);
    switched_frame(b, &sc.p, 1, "set_state: back to its size");
    sim_params wide = sc.p;
    wide.atm_cutoff = 3.0;
    ENSURE_MSG(sim_backend_set_params(b, &wide, &err) == SIM_OK, "%s", err.message);
    switched_frame(b, &wide, 0, "set_params: R = 3 m");
    ENSURE_MSG(sim_backend_set_params(b, &sc.p, &err) == SIM_OK, "%s", err.message);
    switched_frame(b, &sc.p, 1, "set_params: R = 1.8 m again");
    sim_backend_destroy(b);
    tscene_free(&sc);
}

int main(int argc, char **argv) {
    static const ensure_test tests[] = {
        {"where_lists_pay", test_where_lists_pay},
        {"switch_mid_run", test_switch_mid_run},
        {"builtin_scenes", test_builtin},
        {"random_clouds", test_clouds},
        {"on_the_cutoff", test_on_cutoff},
        {"stepped", test_stepped},
    };
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
