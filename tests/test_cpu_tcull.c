/* SPDX-License-Identifier: MIT
 * nbsim — the ATM cut-off culled on the CPU reference (sim/cull/triplet_cull.h,
 * sim/cpu/cpu_tcull.c): culled against unculled triplet forces and energies (double, the same
 * triples: only the summation order differs), the unculled sweep under every exact triplet map and
 * the culled one with every pair map placing the neighbour pass, one and two levels; triples
 * exactly on the cut-off (integer coordinates: equilateral sides sqrt(2) and sqrt(8) at R = sqrt(8)
 * and one ulp below it), partial last tiles, cut-offs that keep few and many tile triples; every
 * body triple within the cut-off lies in a surviving tile triple; the frame's report; trajectories
 * over re-sorts; culling and the cut-off switched at run time. Each culled case runs both paths of
 * the cut-off: its neighbour lists (the default, a skin) and the tile triples (--skin 0). */
#include "nbsim/internal/backend.h"
#include "cpu/cpu_cull.h"
#include "physics/physics.h"
#include "cull/triplet_cull.h"
#include "step/backend_impl.h"

#include "ensure.h"
#include "test_backend_util.h"
#include "test_tcull_scenes.h"

#include <stdint.h>
#include <stdlib.h>

/* Culled against unculled: ||dF|| / ||F|| and per body |dF| / max |F| (interior bodies of a
 * lattice have forces that nearly cancel, so their own size is no yardstick). */
#define TOL_REL_L2 1e-12
#define TOL_REL_MAX 1e-11

static sim_backend_config config(int cull, int pair_map, sim_triplet_map tm, int levels) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.pair_map = pair_map;
    c.triplet_map = tm;
    c.cull = cull;
    c.cull_levels = levels;
    c.cpu_threads = 1; /* CI runs tests side by side on few cores */
    return c;
}

static sim_backend *make(const sim_backend_config *c, const tscene *sc) {
    return test_backend_make(c, &sc->p, &sc->s, sc->name);
}

/* The scene's parameters with skin 0: the cut-off over tile triples, not its lists. */
static sim_params tile_params(const sim_params *p) {
    sim_params q = *p;
    q.skin.value = 0.0;
    q.skin.set = 1;
    return q;
}

static sim_backend *make_tiles(const sim_backend_config *c, const tscene *sc) {
    const sim_params p = tile_params(&sc->p);
    return test_backend_make(c, &p, &sc->s, sc->name);
}

typedef struct {
    double rel_l2, rel_max;
} fdiff;

static fdiff force_diff(const sim_vec3d *a, const sim_vec3d *ref, uint32_t n) {
    double num = 0.0, den = 0.0, big = 0.0, worst = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double dx = a[i].x - ref[i].x, dy = a[i].y - ref[i].y, dz = a[i].z - ref[i].z;
        const double r2 = ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z;
        num += dx * dx + dy * dy + dz * dz;
        den += r2;
        big = fmax(big, sqrt(r2));
        worst = fmax(worst, sqrt(dx * dx + dy * dy + dz * dz));
    }
    fdiff d = {den > 0.0 ? sqrt(num / den) : sqrt(num), big > 0.0 ? worst / big : worst};
    return d;
}

static double atm_energy(sim_backend *b) {
    sim_energy e;
    sim_error err;
    ENSURE(sim_backend_energy(b, &e, &err) == SIM_OK);
    return e.atm;
}

/* One scene: the unculled sweep under `maps` exact triplet maps is the reference; the culled
 * pipeline under every pair map (or just ltm and rm; those with one and two levels) must give its
 * forces and energy. */
static void scene_case(tscene *sc, int maps, int every_pair_map) {
    const uint32_t n = sc->s.n;
    static const sim_triplet_map exact[] = {SIM_TRIPLET_MAP_BB, SIM_TRIPLET_MAP_TETRA,
                                            SIM_TRIPLET_MAP_RM};
    sim_backend_config rc = config(0, SIM_PAIR_MAP_LTM, exact[0], 0);
    sim_backend *ref = make(&rc, sc);
    sim_vec3d *f_ref = test_backend_forces(ref, n);
    const double e_ref = atm_energy(ref);
    double worst = 0.0;
    for (int m = 1; m < maps; ++m) { /* the other exact maps agree with bb */
        rc.triplet_map = exact[m];
        sim_backend *b = make(&rc, sc);
        sim_vec3d *f = test_backend_forces(b, n);
        const fdiff d = force_diff(f, f_ref, n);
        ENSURE_MSG(d.rel_l2 <= TOL_REL_L2 && d.rel_max <= TOL_REL_MAX,
                   "%s: unculled %s vs bb: %.3g / %.3g", sc->name, sim_triplet_map_name(exact[m]),
                   d.rel_l2, d.rel_max);
        free(f);
        sim_backend_destroy(b);
    }
    int configs = 0, agree = 0;
    uint64_t tiles = 0, total = 0;
    for (int pm = 0; pm < SIM_PAIR_MAP_COUNT; ++pm) {
        const int main_map = pm == SIM_PAIR_MAP_LTM || pm == SIM_PAIR_MAP_RM;
        if (!every_pair_map && !main_map) {
            continue;
        }
        for (int path = 0; path < 2; ++path) {
            for (int levels = 1; levels <= (main_map ? 2 : 1); ++levels) {
                const sim_backend_config c = config(1, pm, exact[(pm + levels) % 3], levels);
                sim_backend *b = path ? make(&c, sc) : make_tiles(&c, sc); /* 1: the lists */
                sim_vec3d *f = test_backend_forces(b, n);
                const fdiff d = force_diff(f, f_ref, n);
                const double e = atm_energy(b);
                sim_frame_timing t;
                sim_error err = {SIM_OK, ""};
                ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
                /* the lists only where they pay (a cut-off spanning the scene keeps tiles) */
                const int listed = path && sim_backend_atm_listing(b);
                const int counted =
                    listed ? t.atm_lists && t.atm_list_entries > 0 && t.tile_triples == 0
                           : !t.atm_lists && t.tile_triples > 0 &&
                                 t.tile_triples <= t.tile_triples_total;
                const int ok = d.rel_l2 <= TOL_REL_L2 && d.rel_max <= TOL_REL_MAX &&
                               fabs(e - e_ref) <= 1e-12 * fabs(e_ref) + 1e-300 &&
                               t.triplet_culled && counted;
                ENSURE_MSG(
                    ok,
                    "%s: culled %s (pair map %s, levels %d): F %.3g / %.3g, E %.17g vs %.17g, "
                    "%llu of %llu tile triples, %llu list entries",
                    sc->name, listed ? "lists" : "tiles", sim_pair_choice_name(pm), c.cull_levels,
                    d.rel_l2, d.rel_max, e, e_ref, (unsigned long long)t.tile_triples,
                    (unsigned long long)t.tile_triples_total,
                    (unsigned long long)t.atm_list_entries);
                worst = fmax(worst, fmax(d.rel_l2, d.rel_max));
                tiles += t.tile_triples;
                total += t.tile_triples_total;
                agree += ok;
                ++configs;
                free(f);
                sim_backend_destroy(b);
            }
        }
    }
    printf("  %-40s N=%-4u %d/%d culled configurations (lists and tiles) give the unculled forces "
           "(within %.1e) and ATM energy %.6g; tile triples swept %.1f %%\n",
           sc->name, n, agree, configs, worst, e_ref,
           total ? 100.0 * (double)tiles / (double)total : 0.0);
    ENSURE(e_ref != 0.0);
    free(f_ref);
    sim_backend_destroy(ref);
    tscene_free(sc);
}

static void test_scenes(void) {
    /* the `triplets` cluster: a cut-off that keeps few tile triples, the target's 3 diameters,
     * and one that keeps them all; N not a multiple of 32 */
    tscene a = tscene_builtin("triplets", 421, 1.6, 3u);
    scene_case(&a, 3, 1);
    tscene b = tscene_builtin("triplets", 517, 3.0, 4u);
    scene_case(&b, 1, 0);
    tscene c = tscene_builtin("triplets", 300, 40.0, 5u);
    scene_case(&c, 1, 0);
    tscene d = tscene_builtin("gas", 401, 4.5, 6u);
    scene_case(&d, 1, 0);
}

/* Integer coordinates: sides exactly sqrt(2), 2, sqrt(8) ... R = sqrt(8) (double: R^2 rounds up
 * to 8 + 2 ulp, so sides sqrt(8) count), R one ulp below it (sides sqrt(8) are then past R), R = 2,
 * and the grid scaled by 1 + 2^-20 (sides a little past sqrt(8)). */
static void test_on_the_cutoff(void) {
    const double r8 = sqrt(8.0);
    tscene a = tscene_grid(350, 8, 1.0, r8, 7u);
    scene_case(&a, 2, 1);
    tscene b = tscene_grid(350, 8, 1.0, nextafter(r8, 0.0), 8u);
    scene_case(&b, 1, 0);
    tscene c = tscene_grid(350, 8, 1.0, 2.0, 9u);
    scene_case(&c, 1, 0);
    tscene d = tscene_grid(350, 8, 1.0 + 0x1p-20, r8, 10u);
    scene_case(&d, 1, 0);
}

/* Every body triple the reference counts lies in a surviving tile triple of the sorted order
 * (the order the backend keeps: the stable Morton sort of the initial positions). */
static void coverage_case(tscene *sc) {
    const uint32_t n = sc->s.n;
    const sim_backend_config c = config(1, SIM_PAIR_MAP_RB, SIM_TRIPLET_MAP_TETRA, 0);
    sim_backend *b = make_tiles(&c, sc); /* the tile-triple list is what is covered */
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    uint64_t count = 0;
    ENSURE(sim_backend_tile_triples(b, NULL, 0, &count, &err) == SIM_OK && count > 0);
    sim_tile3 *list = malloc(count * sizeof *list);
    uint64_t again = 0;
    ENSURE(sim_backend_tile_triples(b, list, count, &again, &err) == SIM_OK && again == count);
    sim_cpu_cull order;
    ENSURE(sim_cpu_cull_init(&order, n, 64, &err) == SIM_OK);
    sim_cpu_cull_sort(&order, sc->s.pos, sc->p.box_half);
    uint32_t *tile_of = malloc(n * sizeof *tile_of);
    for (uint32_t s = 0; s < n; ++s) {
        tile_of[order.order[s]] = s / SIM_TRIPLET_TILE;
    }
    const uint32_t tiles = (n + SIM_TRIPLET_TILE - 1) / SIM_TRIPLET_TILE;
    unsigned char *kept = calloc((size_t)tiles * tiles * tiles, 1);
    int bad = 0;
    for (uint64_t k = 0; k < count; ++k) {
        const sim_tile3 q = list[k];
        bad += !(q.i < tiles && q.j <= q.i && q.k <= q.j);
        bad += q.i < tiles && kept[((size_t)q.i * tiles + q.j) * tiles + q.k]++ != 0;
    }
    uint64_t within = 0, missed = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            for (uint32_t k = 0; k < j; ++k) {
                if (!tscene_triple_counts(sc->s.pos, i, j, k, sc->p.atm_cutoff)) {
                    continue;
                }
                uint32_t t3[3] = {tile_of[i], tile_of[j], tile_of[k]};
                for (int x = 0; x < 2; ++x) { /* sort descending */
                    for (int y = 0; y < 2 - x; ++y) {
                        if (t3[y] < t3[y + 1]) {
                            const uint32_t tmp = t3[y];
                            t3[y] = t3[y + 1];
                            t3[y + 1] = tmp;
                        }
                    }
                }
                ++within;
                missed += !kept[((size_t)t3[0] * tiles + t3[1]) * tiles + t3[2]];
            }
        }
    }
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    printf("  %-40s N=%-4u %llu body triples within the cut-off, %llu outside the %llu surviving "
           "tile triples (of %llu); %d bad or repeated entries\n",
           sc->name, n, (unsigned long long)within, (unsigned long long)missed,
           (unsigned long long)count, (unsigned long long)sim_t3_u64(tiles), bad);
    ENSURE(within > 0 && missed == 0 && bad == 0);
    ENSURE(count < sim_t3_u64(tiles));
    free(kept);
    free(tile_of);
    free(list);
    sim_cpu_cull_free(&order);
    sim_backend_destroy(b);
    tscene_free(sc);
}

static void test_coverage(void) {
    tscene a = tscene_builtin("triplets", 700, 2.3, 11u);
    coverage_case(&a);
    tscene b = tscene_grid(600, 9, 1.0, 2.0, 12u);
    coverage_case(&b);
}

/* The report, and culling / the cut-off switched at run time. */
static void test_report_and_switches(void) {
    tscene sc = tscene_builtin("triplets", 601, 3.0, 13u);
    sc.p.steps_per_frame = 2;
    const uint32_t n = sc.s.n, tiles = (n + 31) / 32;
    sim_backend_config c = config(1, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_RM, 0);
    sim_backend *b = make(&c, &sc);
    sim_frame_timing t;
    sim_error err = {SIM_OK, ""};
    /* the default: the cut-off's lists, rebuilt by set-up (not by these two steps: nothing moved
     * half the skin), no tile triple built */
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(t.triplet_culled == 1 && t.atm_lists == 1 && t.tile_triples == 0);
    ENSURE(t.atm_list_entries > 0 && t.atm_list_bytes > 0 && t.atm_list_cap > 0);
    ENSURE(t.triplet_blocks == n && t.atm_list_ms > 0.0 && t.triplet_ms > 0.0);
    ENSURE(t.triplet_cull_ms == 0.0); /* the lists' time is theirs, not the tile triples' */
    printf("  triplets N=%u cut-off 3, skin %.3g m: %llu list entries (%.1f per body, at most "
           "%u), %d rebuilds in %d steps\n",
           n, t.skin, (unsigned long long)t.atm_list_entries, (double)t.atm_list_entries / n,
           t.atm_list_cap, t.atm_list_rebuilds, t.steps);
    uint64_t count = 0;
    ENSURE(sim_backend_tile_triples(b, NULL, 0, &count, &err) == SIM_OK && count == 0);
    /* skin 0: the tile triples */
    sim_params p = tile_params(&sc.p);
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(t.triplet_culled == 1 && t.tile_triples > 0 && t.triplet_tile_pairs >= tiles);
    ENSURE(!t.atm_lists && t.atm_list_entries == 0);
    ENSURE(t.tile_triples_total == (uint64_t)tiles * (tiles + 1) * (tiles + 2) / 6);
    ENSURE(t.triplet_blocks == t.tile_triples && t.triplet_blocks_wasted == 0);
    ENSURE(t.triplet_cull_ms > 0.0 && t.triplet_ms > 0.0 && t.step_ms >= t.triplet_ms);
    ENSURE(t.triplet_fallback_steps == 0 && t.triplet_cull_capped == 0);
    printf("  triplets N=%u cut-off 3: %llu of %llu tile triples survive (%llu neighbour tile "
           "pairs); cull %.3f ms, triplets %.3f ms per step (CPU, one thread)\n",
           n, (unsigned long long)t.tile_triples, (unsigned long long)t.tile_triples_total,
           (unsigned long long)t.triplet_tile_pairs, t.triplet_cull_ms / t.steps,
           t.triplet_ms / t.steps);
    ENSURE(sim_backend_tile_triples(b, NULL, 0, &count, &err) == SIM_OK);
    ENSURE(count == t.tile_triples);
    /* culling off: the triplet map sweeps every tile triple; on again */
    ENSURE(sim_backend_set_cull(b, 0, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(!t.triplet_culled && t.tile_triples == 0 && t.triplet_cull_ms == 0.0);
    ENSURE(t.triplet_blocks > 0 && t.triplet_ms > 0.0);
    ENSURE(sim_backend_tile_triples(b, NULL, 0, &count, &err) == SIM_OK && count == 0);
    ENSURE(sim_backend_set_cull(b, 1, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.triplet_culled);
    /* no cut-off: unculled triplets, culled contacts */
    p.atm_cutoff = 0.0;
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
    ENSURE(t.culled && !t.triplet_culled && t.triplet_ms > 0.0);
    p.atm_cutoff = 3.0;
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && t.triplet_culled);
    /* triplets off: nothing to cull */
    p.triplets = 0;
    ENSURE(sim_backend_set_params(b, &p, &err) == SIM_OK);
    ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK && !t.triplet_culled);
    sim_backend_destroy(b);
    tscene_free(&sc);
}

/* The cluster blowing apart (ATM forces only): culled runs that re-sort every step and every
 * third step follow the unculled trajectory. */
static void test_over_time(void) {
    tscene sc = tscene_builtin("triplets", 300, 3.0, 14u);
    sc.p.steps_per_frame = 2;
    sc.p.dt = 2e-3;
    sim_backend_config c0 = config(0, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0);
    sim_backend_config c1 = config(1, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0);
    sim_backend_config c2 = config(1, SIM_PAIR_MAP_BB, SIM_TRIPLET_MAP_TETRA, 2);
    c1.sort_every = 1;
    c2.sort_every = 3;
    sim_backend *b0 = make(&c0, &sc), *b1 = make(&c1, &sc), *b2 = make(&c2, &sc);
    sim_error err = {SIM_OK, ""};
    sim_frame_timing t;
    int sorts = 0;
    for (int f = 0; f < 3; ++f) {
        ENSURE(sim_backend_run_frame(b0, &t, &err) == SIM_OK);
        ENSURE(sim_backend_run_frame(b1, &t, &err) == SIM_OK && t.triplet_culled);
        sorts += t.sorts;
        ENSURE(sim_backend_run_frame(b2, &t, &err) == SIM_OK && t.triplet_culled);
    }
    const double d1 = test_backend_state_diff(b0, b1, sc.s.n),
                 d2 = test_backend_state_diff(b0, b2, sc.s.n);
    printf("  6 steps of the triplets cluster: culled states within %.1e and %.1e of the "
           "unculled one (%d re-sorts)\n",
           d1, d2, sorts);
    ENSURE(sorts >= 6 && d1 <= 1e-12 && d2 <= 1e-12);
    sim_backend_destroy(b0);
    sim_backend_destroy(b1);
    sim_backend_destroy(b2);
    tscene_free(&sc);
}

static const ensure_test tests[] = {
    {"scenes", test_scenes},       {"on_the_cutoff", test_on_the_cutoff},
    {"coverage", test_coverage},   {"report_and_switches", test_report_and_switches},
    {"over_time", test_over_time},
};

ENSURE_MAIN(tests)
