/* SPDX-License-Identifier: MIT
 * nbsim — scenes: built-in scenes (no overlaps, inside the box, reproducible, fast), scene files
 * (save -> load round trip, atomic save, every parse error with file, line and problem), and
 * the shipped assets (they load, and the two-ball collision has the restitution it declares). */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/internal/backend.h"
#include "nbsim/scene.h"
#include "nbsim/session.h"

#include "ensure.h"
#include "test_tmp.h"

#include <dirent.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifndef NBSIM_ASSETS_DIR
#error "NBSIM_ASSETS_DIR must name the assets directory"
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- geometry checks, O(n) with a cell grid (cell = largest diameter) ---- */

/* Returns the number of pairs that overlap by more than `slack` [m] (0 expected); also checks
 * every sphere lies inside the walls (|x| + r <= box_half + slack on each axis), counting
 * violations in *outside. */
static uint64_t count_overlaps_beyond(const sim_state *s, double box_half, double slack,
                                      uint64_t *outside) {
    double rmax = 0.0;
    *outside = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d p = s->pos[i];
        rmax = fmax(rmax, p.w);
        const double wall = box_half + slack;
        if (!(fabs(p.x) + p.w <= wall && fabs(p.y) + p.w <= wall && fabs(p.z) + p.w <= wall)) {
            ++*outside;
        }
    }
    const double cell = fmax(2.0 * rmax, box_half / 80.0); /* at most ~160^3 cells */
    const int64_t m = (int64_t)ceil(2.0 * box_half / cell) + 1;
    int32_t *head = malloc((size_t)(m * m * m) * sizeof *head);
    int32_t *next = malloc((size_t)s->n * sizeof *next);
    for (int64_t c = 0; c < m * m * m; ++c) {
        head[c] = -1;
    }
#define CELL_OF(v) ((int64_t)floor(((v) + box_half) / cell))
    for (uint32_t i = 0; i < s->n; ++i) {
        const int64_t cx = CELL_OF(s->pos[i].x), cy = CELL_OF(s->pos[i].y),
                      cz = CELL_OF(s->pos[i].z);
        const int64_t c = (cz * m + cy) * m + cx;
        next[i] = head[c];
        head[c] = (int32_t)i;
    }
    uint64_t overlaps = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d p = s->pos[i];
        const int64_t cx = CELL_OF(p.x), cy = CELL_OF(p.y), cz = CELL_OF(p.z);
        for (int64_t z = cz - 1; z <= cz + 1; ++z) {
            for (int64_t y = cy - 1; y <= cy + 1; ++y) {
                for (int64_t x = cx - 1; x <= cx + 1; ++x) {
                    if (x < 0 || y < 0 || z < 0 || x >= m || y >= m || z >= m) {
                        continue;
                    }
                    for (int32_t j = head[(z * m + y) * m + x]; j >= 0; j = next[j]) {
                        const sim_vec4d q = s->pos[j];
                        const double dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;
                        const double r = p.w + q.w - slack;
                        overlaps += (uint32_t)j < i && dx * dx + dy * dy + dz * dz < r * r;
                    }
                }
            }
        }
    }
#undef CELL_OF
    free(head);
    free(next);
    return overlaps;
}

static uint64_t count_overlaps(const sim_state *s, double box_half, uint64_t *outside) {
    return count_overlaps_beyond(s, box_half, 0.0, outside);
}

/* The lattice scene's spheres touch: overlaps up to its jitter are its design. */
static const double kLatticeJitter = 0.005; /* [m]: 1 % of r = 0.5 m */
static double scene_slack(const char *name) {
    return strcmp(name, "lattice") == 0 ? 2.0 * sqrt(3.0) * kLatticeJitter + 1e-12 : 0.0;
}

static const double kPi = 3.14159265358979323846;

static int params_equal(const sim_params *a, const sim_params *b) {
    return a->dt == b->dt && a->stiffness == b->stiffness && a->restitution == b->restitution &&
           a->hertz == b->hertz && a->gravity.x == b->gravity.x && a->gravity.y == b->gravity.y &&
           a->gravity.z == b->gravity.z && a->box_half == b->box_half && a->atm_nu == b->atm_nu &&
           a->atm_cutoff == b->atm_cutoff && a->triplets == b->triplets &&
           a->steps_per_frame == b->steps_per_frame;
}

/* ---- built-in scenes ---- */

static void test_builtin_list(void) {
    ENSURE(sim_scene_builtin_count() == 6);
    const char *want[] = {"gas", "pile", "collide", "triplets", "lattice", "heap"};
    for (int i = 0; i < 6; ++i) {
        ENSURE(strcmp(sim_scene_builtin_name(i), want[i]) == 0);
        ENSURE(strlen(sim_scene_builtin_description(i)) > 10);
        ENSURE(sim_scene_builtin_default_n(i) > 0);
    }
    ENSURE(sim_scene_builtin_name(6) == NULL && sim_scene_builtin_name(-1) == NULL);
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_scene_builtin("nope", 10, 1, &p, &s, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "'nope'") != NULL && s.pos == NULL);
    ENSURE_MSG(strstr(err.message, "gas, pile, collide, triplets, lattice, heap") != NULL, "%s",
               err.message);
}

static void test_builtin_scenes(void) {
    const uint32_t sizes[] = {0, 1, 2, 7, 100, 1000, 5001};
    for (int sc = 0; sc < sim_scene_builtin_count(); ++sc) {
        const char *name = sim_scene_builtin_name(sc);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
            const uint32_t n = sizes[k];
            sim_params p = sim_params_default(), q = sim_params_default();
            p.dt = 1.5e-4;
            p.stiffness = 3e4;
            p.steps_per_frame = 9;
            q = p;
            sim_state a = {0}, b = {0}, c = {0};
            sim_error err = {SIM_OK, ""};
            ENSURE(sim_scene_builtin(name, n, 42, &p, &a, &err) == SIM_OK);
            ENSURE(sim_scene_builtin(name, n, 42, &q, &b, &err) == SIM_OK);
            ENSURE(a.n == (n ? n : sim_scene_builtin_default_n(sc)));
            /* reproducible bit for bit; another seed gives another state */
            ENSURE(memcmp(a.pos, b.pos, a.n * sizeof *a.pos) == 0);
            ENSURE(memcmp(a.vel, b.vel, a.n * sizeof *a.vel) == 0);
            ENSURE(params_equal(&p, &q));
            ENSURE(sim_scene_builtin(name, n, 43, &q, &c, &err) == SIM_OK);
            ENSURE(memcmp(a.pos, c.pos, a.n * sizeof *a.pos) != 0);
            /* geometry and masses */
            const int lattice = strcmp(name, "lattice") == 0;
            const int heap = strcmp(name, "heap") == 0; /* its rough floor: 30 times denser */
            uint64_t outside = 0;
            const uint64_t overlaps =
                count_overlaps_beyond(&a, p.box_half, scene_slack(name), &outside);
            ENSURE_MSG(overlaps == 0 && outside == 0, "%s n=%u: %llu overlaps, %llu outside", name,
                       a.n, (unsigned long long)overlaps, (unsigned long long)outside);
            for (uint32_t i = 0; i < a.n; ++i) {
                const double r = a.pos[i].w;
                const double dense = heap && a.vel[i].w > 2.0 * 4.0 / 3.0 * kPi * r * r * r;
                ENSURE_NEAR(a.vel[i].w,
                            lattice ? 1.0 : (dense ? 30.0 : 1.0) * 4.0 / 3.0 * kPi * r * r * r,
                            1e-15 * (dense ? 30.0 : 1.0));
            }
            /* the scene sets what it is designed for and leaves the rest (the lattice also sets
             * the sample's spring; no scene sets a step: the session derives one for it) */
            ENSURE(p.steps_per_frame == 9);
            ENSURE(lattice ? p.dt == 1.5e-4 && p.stiffness == 1.0 && p.hertz == 0
                   : heap  ? p.dt == 1.5e-4 && p.stiffness == 1e4 && p.hertz == 0
                           : p.dt == 1.5e-4 && p.stiffness == 3e4);
            ENSURE(p.box_half > 0.0 && p.restitution > 0.0 && p.restitution <= 1.0);
            ENSURE((p.gravity.y != 0.0) == (strcmp(name, "pile") == 0 || lattice || heap));
            ENSURE((p.friction > 0.0 && p.rolling_friction > 0.0) == heap);
            ENSURE(p.gravity.x == 0.0 && p.gravity.z == 0.0 && p.gravity.y <= 0.0);
            ENSURE(p.triplets == (strcmp(name, "triplets") == 0));
            const int has_atm = strcmp(name, "gas") == 0 || strcmp(name, "triplets") == 0;
            ENSURE((p.atm_nu != 0.0) == has_atm);
            if (strcmp(name, "gas") == 0 && a.n > 1) {
                double px = 0.0, pm = 0.0;
                for (uint32_t i = 0; i < a.n; ++i) {
                    px += a.vel[i].w * a.vel[i].x;
                    pm += a.vel[i].w * fabs(a.vel[i].x);
                }
                ENSURE(fabs(px) <= 1e-12 * pm);
            }
            sim_state_free(&a);
            sim_state_free(&b);
            sim_state_free(&c);
        }
    }
}

/* A million bodies in O(n): time it and check every body. */
static void test_builtin_large(void) {
    for (int sc = 0; sc < sim_scene_builtin_count(); ++sc) {
        const char *name = sim_scene_builtin_name(sc);
        sim_params p = sim_params_default();
        sim_state s = {0};
        sim_error err = {SIM_OK, ""};
        const double t0 = now_s();
        ENSURE_MSG(sim_scene_builtin(name, 1000000, 7, &p, &s, &err) == SIM_OK, "%s", err.message);
        const double t1 = now_s();
        uint64_t outside = 0;
        const uint64_t overlaps =
            count_overlaps_beyond(&s, p.box_half, scene_slack(name), &outside);
        printf("  %-8s 1e6 bodies in %.2f s, box_half %.1f m, %llu overlaps, %llu outside\n", name,
               t1 - t0, p.box_half, (unsigned long long)overlaps, (unsigned long long)outside);
        ENSURE(overlaps == 0 && outside == 0);
        ENSURE(t1 - t0 < 10.0); /* ~0.1 s on one core; generous for loaded CI machines */
        sim_state_free(&s);
    }
}

/* FNV-1a of the bodies' bytes. */
static uint64_t bodies_hash(const sim_state *s) {
    uint64_t h = 1469598103934665603ull;
    const unsigned char *bytes[2] = {(const void *)s->pos, (const void *)s->vel};
    for (int a = 0; a < 2; ++a) {
        for (size_t i = 0; i < (size_t)s->n * sizeof *s->pos; ++i) {
            h = (h ^ bytes[a][i]) * 1099511628211ull;
        }
    }
    return h;
}

/* Sets OpenMP's default team; returns the one it replaces. */
static int set_threads(int threads) {
#ifdef _OPENMP
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    return before;
#else
    (void)threads;
    return 1;
#endif
}

/* Built on the CPU's threads, a scene is the same bit for bit whatever their number (several
 * blocks of bodies, and the heap's rows), and the same as the sequential generator made it: the
 * hashes below were taken from the scenes built on one thread drawing in sequence (the lattice
 * and the blocks: no libm function between the draws and the bodies). */
static void test_builtin_threads(void) {
    const uint32_t n = 3 * 65536 + 7;
    const int threads = set_threads(1);
    for (int sc = 0; sc < sim_scene_builtin_count(); ++sc) {
        const char *name = sim_scene_builtin_name(sc);
        sim_params p = sim_params_default(), q = sim_params_default();
        sim_state a = {0}, b = {0};
        sim_error err = {SIM_OK, ""};
        set_threads(1);
        ENSURE_MSG(sim_scene_builtin(name, n, 12345, &p, &a, &err) == SIM_OK, "%s", err.message);
        set_threads(4);
        ENSURE_MSG(sim_scene_builtin(name, n, 12345, &q, &b, &err) == SIM_OK, "%s", err.message);
        ENSURE_MSG(a.n == n && b.n == n && memcmp(a.pos, b.pos, n * sizeof *a.pos) == 0 &&
                       memcmp(a.vel, b.vel, n * sizeof *a.vel) == 0 &&
                       memcmp(a.spin, b.spin, n * sizeof *a.spin) == 0 && params_equal(&p, &q),
                   "%s: 1 and 4 threads built different bodies", name);
        sim_state_free(&a);
        sim_state_free(&b);
    }
    const struct {
        const char *name;
        uint32_t n;
        uint64_t hash;
    } pinned[] = {{"lattice", 100003, 0xabba425c5c1ca4f1ull},
                  {"collide", 100003, 0xe4b23df117eb98b9ull},
                  {"lattice", 1000, 0x3ae2c091dc615a6eull}};
    for (size_t k = 0; k < sizeof pinned / sizeof pinned[0]; ++k) {
        sim_params p = sim_params_default();
        sim_state a = {0};
        sim_error err = {SIM_OK, ""};
        ENSURE(sim_scene_builtin(pinned[k].name, pinned[k].n, 12345, &p, &a, &err) == SIM_OK);
        ENSURE_MSG(bodies_hash(&a) == pinned[k].hash, "%s n=%u: bodies hash %016llx",
                   pinned[k].name, pinned[k].n, (unsigned long long)bodies_hash(&a));
        sim_state_free(&a);
    }
    set_threads(threads);
}

/* The lattice reproduces the particles sample's benchmark configuration, scaled x32: centres
 * on a cubic lattice of spacing 2r = 1 m from the corner (-31.5, -31.5, -31.5) m, x fastest,
 * then y, then z, each within +-1 % of r of its site (and not all on it), neighbours 1 m apart,
 * no overlap beyond the jitter, a box of half-width 32 m (or what the lattice needs), at rest,
 * 1 kg each, and the sample's physics but its step (too long to resolve a contact). */
static void test_lattice(void) {
    const uint32_t sizes[] = {1, 7, 1000, 4096, 65536, 262144, 262145};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const uint32_t n = sizes[k];
        sim_params p = sim_params_default();
        sim_state s = {0};
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_scene_builtin("lattice", n, 11, &p, &s, &err) == SIM_OK, "%s", err.message);
        ENSURE(s.n == n);
        uint32_t m = 1;
        while ((uint64_t)m * m * m < n) {
            ++m;
        }
        const double half = m > 64 ? 0.5 * m : 32.0;
        ENSURE_MSG(p.box_half == half, "n=%u: box_half %g, want %g", n, p.box_half, half);
        double worst = 0.0, moved = 0.0;
        for (uint32_t i = 0; i < n; ++i) {
            const double site[3] = {-half + 0.5 + (double)(i % m),
                                    -half + 0.5 + (double)(i / m % m),
                                    -half + 0.5 + (double)(i / m / m)};
            const double at[3] = {s.pos[i].x, s.pos[i].y, s.pos[i].z};
            for (int a = 0; a < 3; ++a) {
                worst = fmax(worst, fabs(at[a] - site[a]));
                moved += fabs(at[a] - site[a]);
            }
            ENSURE(s.pos[i].w == 0.5);
            ENSURE(s.vel[i].x == 0.0 && s.vel[i].y == 0.0 && s.vel[i].z == 0.0 &&
                   s.vel[i].w == 1.0);
        }
        ENSURE_MSG(worst <= kLatticeJitter, "n=%u: a centre %g m from its site", n, worst);
        ENSURE_MSG(moved > 0.25 * kLatticeJitter * 3.0 * n, "n=%u: no jitter (%g)", n, moved);
        /* neighbours along each axis are one spacing apart, give or take twice the jitter */
        if (n >= m + 1) {
            ENSURE_NEAR(s.pos[1].x - s.pos[0].x, 1.0, 2.0 * kLatticeJitter);
            ENSURE_NEAR(s.pos[m].y - s.pos[0].y, 1.0, 2.0 * kLatticeJitter);
        }
        if (n > m * m) {
            ENSURE_NEAR(s.pos[m * m].z - s.pos[0].z, 1.0, 2.0 * kLatticeJitter);
        }
        uint64_t outside = 0;
        const uint64_t overlaps =
            count_overlaps_beyond(&s, p.box_half, scene_slack("lattice"), &outside);
        ENSURE_MSG(overlaps == 0 && outside == 0, "n=%u: %llu overlaps, %llu outside", n,
                   (unsigned long long)overlaps, (unsigned long long)outside);
        /* the sample's physics, scaled: gravity along -y, its spring and damping; the step is
         * the session's default (t_c / 50), not the sample's 0.5 s (~4.4 steps a contact) */
        ENSURE(p.gravity.x == 0.0 && p.gravity.z == 0.0 && fabs(p.gravity.y + 0.0096) < 1e-15);
        ENSURE(p.stiffness == 1.0 && p.hertz == 0 && p.dt == 0.0 && p.restitution == 0.915);
        ENSURE(p.atm_nu == 0.0 && p.triplets == 0);
        sim_state_free(&s);
    }
}

/* Every built-in scene opens without a warning, about its own time step above all (DESIGN.md: a
 * scene comes with a step near t_c / 50, the one the session derives; the warning is for a
 * user's longer step; the lattice came with the particles sample's 0.5 s, ~t_c / 4.4): through
 * the session, as nbsim opens it (--frames: headless; the viewer's interactive session alike),
 * at the scene's default N and at a few others. The session's first half (sim_session_prepare)
 * builds the scene and derives dt; no backend is made. */
static void test_builtin_steps_safe(void) {
    const uint32_t sizes[] = {0, 1, 7, 1000, 30000};
    for (int sc = 0; sc < sim_scene_builtin_count(); ++sc) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
            for (int interactive = 0; interactive <= 1; ++interactive) {
                sim_session_config o = sim_session_config_default();
                snprintf(o.scene, sizeof o.scene, "%s", sim_scene_builtin_name(sc));
                o.n = sizes[k];
                o.backend = SIM_BACKEND_CHOICE_CPU;
                o.interactive = interactive;
                o.triplets = SIM_TRIPLETS_OFF; /* the triplets scene at 30,000 in the viewer */
                sim_session *s = NULL;
                sim_error err;
                const sim_status st = sim_session_prepare(&s, &o, &err);
                ENSURE_MSG(st == SIM_OK, "%s n=%u: %s", o.scene, o.n, err.message);
                if (st != SIM_OK) {
                    continue;
                }
                const char *warnings = sim_session_take_warnings(s);
                const sim_run_info *info = sim_session_info(s);
                ENSURE_MSG(warnings[0] == '\0', "%s n=%u: %s", o.scene, info->n, warnings);
                ENSURE_MSG(info->params.dt > 0.0, "%s n=%u: dt %g", o.scene, info->n,
                           info->params.dt);
                sim_session_close(s);
            }
        }
    }
}

/* ---- the heap's pour ---- */

/* The heap's poured spheres (density 1; its rough floor's are 30 times denser). */
static int heap_poured(const sim_state *s, uint32_t i) {
    const double r = s->pos[i].w;
    return s->vel[i].w < 2.0 * 4.0 / 3.0 * kPi * r * r * r;
}

/* How far apart the poured spheres are stacked: for each, the height [m] from the centre of the
 * sphere right beneath it (within 0.1 m across), or for the lowest from the rough floor's
 * centres (the floor's, without one). Returns the largest (O(n): a grid of cells 1.1 m, the
 * sphere beneath lies in the cell or the two below). */
static double heap_largest_step(const sim_state *s, double half) {
    const double cell = 1.1;
    const int64_t m = (int64_t)ceil(2.0 * half / cell) + 1;
    int32_t *head = malloc((size_t)(m * m * m) * sizeof *head);
    int32_t *next = malloc((size_t)s->n * sizeof *next);
    for (int64_t c = 0; c < m * m * m; ++c) {
        head[c] = -1;
    }
    double floor_y = -half; /* the carpet's centres, or the floor */
    for (uint32_t i = 0; i < s->n; ++i) {
        floor_y = heap_poured(s, i) ? floor_y : fmax(floor_y, s->pos[i].y);
    }
#define HEAP_CELL(v) ((int64_t)floor(((v) + half) / cell))
    for (uint32_t i = 0; i < s->n; ++i) {
        const int64_t c =
            (HEAP_CELL(s->pos[i].z) * m + HEAP_CELL(s->pos[i].y)) * m + HEAP_CELL(s->pos[i].x);
        next[i] = head[c];
        head[c] = (int32_t)i;
    }
    double largest = 0.0;
    for (uint32_t i = 0; i < s->n; ++i) {
        if (!heap_poured(s, i)) {
            continue;
        }
        const sim_vec4d p = s->pos[i];
        double step = p.y - floor_y;
        const int64_t cx = HEAP_CELL(p.x), cy = HEAP_CELL(p.y), cz = HEAP_CELL(p.z);
        for (int64_t z = cz - 1; z <= cz + 1; ++z) {
            for (int64_t y = cy - 2; y <= cy; ++y) {
                for (int64_t x = cx - 1; x <= cx + 1; ++x) {
                    if (x < 0 || y < 0 || z < 0 || x >= m || y >= m || z >= m) {
                        continue;
                    }
                    for (int32_t j = head[(z * m + y) * m + x]; j >= 0; j = next[j]) {
                        const sim_vec4d q = s->pos[j];
                        if (q.y < p.y && hypot(p.x - q.x, p.z - q.z) <= 0.1) {
                            step = fmin(step, p.y - q.y);
                        }
                    }
                }
            }
        }
        largest = fmax(largest, step);
    }
#undef HEAP_CELL
    free(head);
    free(next);
    return largest;
}

/* The heap's pour (sim/io/scene.c) scales with N, so the heap is a cone at any N: at every size
 *  - the pour is a quarter cone against the two walls, 60 degrees steep (every poured centre
 *    within a sphere of the cone through the lowest layer's farthest centre), not a column;
 *  - nothing falls from a height: the pour is a stack, every sphere's centre at most 1.06 m
 *    above the one beneath it (the lowest above the rough floor's), so that at most 5-15 cm
 *    open under each and a sphere can drop freely only what the gaps beneath it add up to, 5 to
 *    15 % of its height. A rain of layers 1.5 m apart opens a third of the height of a column that
 *    grows like the cone: its top lands on the summit at sqrt(2 g h), and at large N the
 *    impacts splash it over the floor;
 *  - it stands on the rough floor (its base within the carpet's quarter disk), and its size and
 *    the carpet's grow like the cone's, as the cube root of the spheres poured (within 10 % of
 *    the default heap's, scaled), in a box that holds both.
 * The construction only: test_heap pours one. */
static void test_heap_pour(void) {
    const uint32_t sizes[] = {1400, 1000, 10000, 100000, 1000000};
    const double slope = tan(60.0 * kPi / 180.0);
    double ref[3] = {0.0, 0.0, 0.0}; /* the default heap's sizes / N^(1/3) */
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const uint32_t n = sizes[k];
        sim_params p = sim_params_default();
        sim_state s = {0};
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_scene_builtin("heap", n, 5, &p, &s, &err) == SIM_OK, "%s", err.message);
        const double half = p.box_half, wall = -half + 0.55; /* the first centres, by the walls */
        double base = INFINITY, top = -INFINITY, carpet = 0.0;
        for (uint32_t i = 0; i < s.n; ++i) {
            const sim_vec4d q = s.pos[i];
            const double across = hypot(q.x - wall, q.z - wall);
            if (heap_poured(&s, i)) {
                base = fmin(base, q.y);
                top = fmax(top, q.y);
            } else {
                carpet = fmax(carpet, across);
            }
        }
        double radius = 0.0; /* the pour's base */
        for (uint32_t i = 0; i < s.n; ++i) {
            if (heap_poured(&s, i) && s.pos[i].y < base + 0.5) {
                radius = fmax(radius, hypot(s.pos[i].x - wall, s.pos[i].z - wall));
            }
        }
        uint32_t outside_cone = 0;
        for (uint32_t i = 0; i < s.n; ++i) {
            const sim_vec4d q = s.pos[i];
            const double across = hypot(q.x - wall, q.z - wall);
            outside_cone += heap_poured(&s, i) && across > radius - (q.y - base) / slope + 1.05;
        }
        const double step = heap_largest_step(&s, half);
        uint32_t poured = 0;
        for (uint32_t i = 0; i < s.n; ++i) {
            poured += heap_poured(&s, i);
        }
        const double scale = cbrt((double)poured);
        const double sizes_n[3] = {radius / scale, (top - base) / scale, carpet / scale};
        printf("  heap n=%-7u pour %.1f m across, %.1f m high, on a carpet %.1f m across, box "
               "%.1f m; stacked %.3f m apart at most\n",
               n, radius, top - base, carpet, 2.0 * half, step);
        ENSURE_MSG(outside_cone == 0, "n=%u: %u poured spheres outside the pour's cone", n,
                   outside_cone);
        ENSURE_MSG(step <= 1.06, "n=%u: a poured sphere %.2f m above the one beneath it", n, step);
        ENSURE_MSG(radius <= carpet,
                   "n=%u: the pour (%.1f m) reaches past the rough floor (%.1f m)", n, radius,
                   carpet);
        ENSURE(2.0 * half >= carpet + 1.0 && 2.0 * half >= top + half + 0.5);
        for (int d = 0; d < 3; ++d) {
            if (k == 0) {
                ref[d] = sizes_n[d];
            }
            ENSURE_MSG(fabs(sizes_n[d] / ref[d] - 1.0) <= 0.10,
                       "n=%u: size %d is %.2f poured^(1/3), %.2f at the default N", n, d,
                       sizes_n[d], ref[d]);
        }
        sim_state_free(&s);
    }
}

/* ---- scene files ---- */

static int has_temp_files(void) {
    DIR *d = opendir(test_tmp_dir);
    int found = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        found |= strstr(e->d_name, ".tmp.") != NULL;
    }
    if (d != NULL) {
        closedir(d);
    }
    return found;
}

static void test_round_trip(void) {
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_scene_builtin("collide", 61, 5, &p, &s, &err) == SIM_OK);
    p.dt = 1.0 / 3.0 * 1e-4;
    p.stiffness = 12345.678901234567;
    p.restitution = 0.7;
    p.hertz = 1;
    p.gravity = (sim_vec3d){0.1, -9.81, 1.0 / 7.0};
    p.atm_nu = -0.3;
    p.atm_cutoff = 2.5;
    p.triplets = 1;
    p.steps_per_frame = 7;
    sim_vec3d *f = malloc(s.n * sizeof *f);
    for (uint32_t i = 0; i < s.n; ++i) {
        f[i] = (sim_vec3d){i * 0.1, -1.0 / (i + 1.0), 3e-300};
    }
    for (int with_forces = 0; with_forces <= 1; ++with_forces) {
        const char *path = test_tmp_path(with_forces ? "state_f.scene" : "state.scene");
        ENSURE_MSG(sim_state_save(path, &p, &s, with_forces ? f : NULL, &err) == SIM_OK, "%s",
                   err.message);
        sim_params q = sim_params_default();
        sim_state t = {0};
        ENSURE_MSG(sim_scene_load(path, &q, &t, &err) == SIM_OK, "%s", err.message);
        ENSURE(params_equal(&p, &q)); /* %.17g: every double comes back exactly */
        ENSURE(t.n == s.n);
        for (uint32_t i = 0; i < s.n && t.n == s.n; ++i) {
            ENSURE(memcmp(&s.pos[i], &t.pos[i], sizeof s.pos[i]) == 0);
            ENSURE(s.vel[i].x == t.vel[i].x && s.vel[i].y == t.vel[i].y &&
                   s.vel[i].z == t.vel[i].z);
            ENSURE_NEAR(t.vel[i].w / s.vel[i].w, 1.0, 4e-16); /* via density: ~1 ulp */
        }
        sim_state_free(&t);
    }
    ENSURE(!has_temp_files());
    free(f);
    sim_state_free(&s);
}

static void test_save_atomic(void) {
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_scene_builtin("gas", 10, 1, &p, &s, &err) == SIM_OK);
    /* An unwritable place: error naming the path, nothing left behind. */
    ENSURE(sim_state_save("/nonexistent-dir/x.scene", &p, &s, NULL, &err) == SIM_IO);
    ENSURE(strstr(err.message, "/nonexistent-dir/x.scene") != NULL);
    /* Replacing an existing file: all or nothing, the new content wins. */
    const char *path = test_tmp_path("replace.scene");
    test_write_file(path, "old content\n");
    ENSURE(sim_state_save(path, &p, &s, NULL, &err) == SIM_OK);
    sim_params q = sim_params_default();
    sim_state t = {0};
    ENSURE(sim_scene_load(path, &q, &t, &err) == SIM_OK && t.n == 10);
    ENSURE(!has_temp_files());
    sim_state_free(&t);
    sim_state_free(&s);
}

/* Loads text as a file; expects failure with status and every needle in the message. */
static void expect_error(const char *text, sim_status status, const char *needle1,
                         const char *needle2) {
    const char *path = test_tmp_path("bad.scene");
    test_write_file(path, text);
    sim_params p = sim_params_default();
    const sim_params before = p;
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    const sim_status st = sim_scene_load(path, &p, &s, &err);
    ENSURE_MSG(st == status, "status %d for:\n%s", (int)st, text);
    ENSURE_MSG(strstr(err.message, path) != NULL, "no file name in: %s", err.message);
    ENSURE_MSG(strstr(err.message, needle1) != NULL, "'%s' not in: %s", needle1, err.message);
    ENSURE_MSG(needle2 == NULL || strstr(err.message, needle2) != NULL, "'%s' not in: %s", needle2,
               err.message);
    ENSURE(params_equal(&p, &before) && s.pos == NULL); /* untouched on error */
}

#define HEADER "x y z vx vy vz radius density\n"

static void test_parse_errors(void) {
    expect_error(HEADER "0 0 abc 0 0 0 0.5 1\n", SIM_PARSE, ":2: bad number 'abc'", "column 3 (z)");
    expect_error(HEADER "0 0 0 0 0 0 0.5 1e999\n", SIM_PARSE, ":2: bad number", "(density)");
    expect_error(HEADER "0 0 0 0 0 nan 0.5 1\n", SIM_PARSE, ":2: bad number 'nan'", NULL);
    expect_error("# c\n\n" HEADER "0 0 0 0 0 0 0.5\n", SIM_PARSE, ":4: wrong column count",
                 "expected 8");
    expect_error(HEADER "0 0 0 0 0 0 0.5 1 9\n", SIM_PARSE, ":2: wrong column count", "got 9");
    expect_error("x y z vx vy vz radius density fx fy fz\n0 0 0 0 0 0 0.5 1\n", SIM_PARSE,
                 ":2: wrong column count", "expected 11");
    expect_error(HEADER "0 0 0 0 0 0 0 1\n", SIM_PARSE, ":2: radius must be > 0", NULL);
    expect_error(HEADER "0 0 0 0 0 0 -0.5 1\n", SIM_PARSE, ":2: radius must be > 0", NULL);
    expect_error(HEADER "0 0 0 0 0 0 0.5 0\n", SIM_PARSE, ":2: density must be > 0", NULL);
    expect_error("box_half = 2\n" HEADER "1 0 0 0 0 0 0.5 1\n0 2.5 0 0 0 0 0.5 1\n", SIM_PARSE,
                 ":4: body outside the box", "+-2");
    /* A body that makes the default step impossible (a step beyond 1000 s): the file, the line
     * and the lightest body's values, not "dt = 4.5e+146 must be ..." from the backend later. */
    expect_error(HEADER "1 0 0 0 0 0 0.5 1e300\n0 0 0 0 0 0 0.5 2e300\n", SIM_PARSE,
                 ":2: body 1, the lightest: radius 0.5 m and density 1e+300 kg/m^3",
                 "the default step (the contact time / 50) would be");
    expect_error("box_half = 1e9\n" HEADER "0 0 0 0 0 0 1e8 1\n", SIM_PARSE, ":3: body 1",
                 "beyond the 1000 s a step may be");
    expect_error("box_half = 1e9\n" HEADER "0 0 0 0 0 0 0.5 1\n3 0 0 0 0 0 1e30 1\n", SIM_PARSE,
                 ":4: sphere wider than the box", "radius 1e+30 m is larger than the box");
    expect_error(HEADER, SIM_PARSE, ":1: no bodies", NULL);
    expect_error("# only a comment\n", SIM_PARSE, "no bodies", NULL);
    expect_error("", SIM_PARSE, "no bodies", NULL);
    expect_error("foo = 1\n" HEADER "0 0 0 0 0 0 0.5 1\n", SIM_PARSE, ":1: unknown key 'foo'",
                 NULL);
    expect_error("stiffness = -1\n" HEADER, SIM_PARSE, ":1: bad value",
                 "stiffness: '-1' must be a stiffness in (0, 1e20]");
    expect_error("dt = fast\n" HEADER, SIM_PARSE, ":1: bad value",
                 "dt: 'fast' must be a time step");
    /* The command line's rules, not looser ones: no huge steps, no hexadecimal, no inf. */
    expect_error("dt = 1e308\n" HEADER, SIM_PARSE, ":1: bad value", "must be a time step");
    expect_error("stiffness = 1e308\n" HEADER, SIM_PARSE, ":1: bad value", "(0, 1e20]");
    expect_error("stiffness = 0x10\n" HEADER, SIM_PARSE, ":1: bad value", "'0x10'");
    expect_error("atm_nu = inf\n" HEADER, SIM_PARSE, ":1: bad value", "'inf'");
    expect_error("restitution = 1.5\n" HEADER, SIM_PARSE, ":1: bad value", "(0, 1]");
    expect_error("\ngravity = 0, -9.81\n" HEADER, SIM_PARSE, ":2: bad value", "three numbers");
    expect_error("hertz = 2\n" HEADER, SIM_PARSE, ":1: bad value", "0 or 1");
    expect_error("steps_per_frame = 2.5\n" HEADER, SIM_PARSE, ":1: bad value", "whole number");
    expect_error("0 0 0 0 0 0 0.5 1\n", SIM_PARSE, ":1: expected the column header", NULL);
    expect_error("x y z radius\n", SIM_PARSE, ":1: expected the column header", NULL);
    expect_error(HEADER "0 0 0 0 0 0 0.5 1\nbox_half = 3\n", SIM_PARSE, ":3: wrong column count",
                 NULL);
    /* a missing file */
    const char *path = test_tmp_path("missing.scene");
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_scene_load(path, &p, &s, &err) == SIM_BAD_ARGUMENT);
    ENSURE_MSG(strstr(err.message, "no such file") != NULL && strstr(err.message, path) != NULL,
               "%s", err.message);
}

/* Comments anywhere, blank lines, CRLF, tabs, `box` alias, extra force columns ignored. */
static void test_parse_tolerant(void) {
    const char *path = test_tmp_path("ok.scene");
    test_write_file(path, "# a scene\r\n\r\n  box = 3   # half-width\r\ngravity = 0,-1 , 0\r\n"
                          "triplets = 1\n\tatm_nu = 1e-3\n"
                          "x y z vx vy vz radius density fx fy fz  # header\n"
                          "1 2 -1\t0.5 0 0 0.25 2 9 9 9\r\n"
                          "# between\n"
                          "-1 -2 1 0 0 0 0.5 1 0 0 0\n");
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_scene_load(path, &p, &s, &err) == SIM_OK, "%s", err.message);
    ENSURE(s.n == 2 && p.box_half == 3.0 && p.gravity.y == -1.0 && p.triplets == 1);
    ENSURE(p.atm_nu == 1e-3 && p.stiffness == sim_params_default().stiffness);
    ENSURE(s.n == 2 && s.pos[0].z == -1.0 && s.vel[0].x == 0.5 && s.pos[0].w == 0.25);
    ENSURE_NEAR(s.vel[0].w, 2.0 * 4.0 / 3.0 * kPi * 0.25 * 0.25 * 0.25, 1e-15);
    sim_state_free(&s);
}

/* Loads text with options; returns the status, err and warnings filled. */
static sim_status load_text(const char *text, const sim_scene_load_options *o, sim_params *p,
                            sim_state *s, sim_error *err) {
    const char *path = test_tmp_path("opt.scene");
    test_write_file(path, text);
    return sim_scene_load_with(path, o, p, s, err);
}

/* A size limit stops the parser at the first body too many, with the caller's reason. */
static void test_load_max_bodies(void) {
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    sim_scene_load_options o = {0};
    o.max_bodies = 2;
    o.max_reason = "why not";
    ENSURE(load_text(HEADER "0 0 0 0 0 0 0.5 1\n1 0 0 0 0 0 0.5 1\n2 0 0 0 0 0 0.5 1\n", &o, &p, &s,
                     &err) == SIM_BAD_ARGUMENT);
    ENSURE_MSG(strstr(err.message, ":4: more than 2 bodies") && strstr(err.message, "(why not)"),
               "%s", err.message);
    ENSURE(s.pos == NULL);
    ENSURE(load_text(HEADER "0 0 0 0 0 0 0.5 1\n1 0 0 0 0 0 0.5 1\n", &o, &p, &s, &err) == SIM_OK);
    ENSURE(s.n == 2);
    sim_state_free(&s);
}

/* The caller's values (the command line's) win over the file's, and bodies are checked against
 * the caller's box; a key given twice is a warning naming both lines. */
static void test_load_fixed_and_warnings(void) {
    const char *text = "box_half = 10\nstiffness = 5\nbox = 12\n" HEADER "4 0 0 0 0 0 0.5 1\n";
    sim_params p = sim_params_default();
    p.box_half = 2.0;
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    char warnings[512] = "";
    sim_scene_load_options o = {0};
    o.fixed = 1u << SIM_PARAM_BOX;
    o.warnings = warnings;
    o.warnings_cap = sizeof warnings;
    ENSURE(load_text(text, &o, &p, &s, &err) == SIM_PARSE);
    ENSURE_MSG(strstr(err.message, ":5: body outside the box: body 1") &&
                   strstr(err.message, "+-2 (--box)"),
               "%s", err.message);
    p.box_half = 5.0;
    warnings[0] = '\0';
    ENSURE_MSG(load_text(text, &o, &p, &s, &err) == SIM_OK, "%s", err.message);
    ENSURE(p.box_half == 5.0 && p.stiffness == 5.0 && s.n == 1);
    ENSURE_MSG(strstr(warnings, "opt.scene:3: warning: box_half given again (first on line 1)"),
               "%s", warnings);
    sim_state_free(&s);
    /* A fixed parameter's line is still checked. */
    ENSURE(load_text("box_half = -1\n" HEADER "0 0 0 0 0 0 0.5 1\n", &o, &p, &s, &err) ==
           SIM_PARSE);
}

/* A UTF-8 byte order mark is skipped; a NUL byte is refused; the file's bytes in a message are
 * printable; subnormal numbers are numbers; the parser reads from memory too. */
static void test_load_bytes(void) {
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(load_text("\xEF\xBB\xBFgravity = 0, -1, 0\n" HEADER "0 0 0 0 0 4e-320 0.5 1\n", NULL,
                         &p, &s, &err) == SIM_OK,
               "%s", err.message);
    ENSURE(p.gravity.y == -1.0 && s.n == 1 && s.vel[0].z == 4e-320);
    sim_state_free(&s);
    ENSURE(load_text("foo\x1b[31m\x9b = 1\n" HEADER, NULL, &p, &s, &err) == SIM_PARSE);
    for (const char *c = err.message; *c != '\0'; ++c) {
        ENSURE_MSG((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f, "raw byte 0x%02x in %s",
                   (unsigned char)*c, err.message);
    }
    ENSURE_MSG(strstr(err.message, "'foo?[31m?'") != NULL, "%s", err.message);
    const char nul[] = "box_half = 3\n\0\n";
    const char *path = test_tmp_path("nul.scene");
    FILE *f = fopen(path, "wb");
    fwrite(nul, 1, sizeof nul - 1, f);
    fclose(f);
    ENSURE(sim_scene_load(path, &p, &s, &err) == SIM_PARSE && strstr(err.message, ":2: a NUL"));
    static char text[] = HEADER "1 2 3 0 0 0 0.5 1\n";
    FILE *m = fmemopen(text, sizeof text - 1, "r");
    ENSURE(m != NULL);
    ENSURE(m && sim_scene_read(m, "memory", NULL, &p, &s, &err) == SIM_OK && s.pos[0].z == 3.0);
    if (m != NULL) {
        fclose(m);
    }
    sim_state_free(&s);
}

/* A run may push a body into a wall (centre beyond it) without blowing up, and save that state:
 * the saved file (with forces) loads back; a hand-written one is refused. */
static void test_saved_state_beyond_wall_loads(void) {
    sim_params p = sim_params_default();
    p.box_half = 2.0;
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&s, 1, &err) == SIM_OK);
    s.pos[0] = (sim_vec4d){2.4, 0.0, -1.0, 0.5};
    s.vel[0] = (sim_vec4d){1.0, 0.0, 0.0, sim_sphere_mass(0.5, 1.0)};
    const sim_vec3d force = {-3.0, 0.0, 0.0};
    const char *path = test_tmp_path("pushed.scene");
    ENSURE(sim_state_save(path, &p, &s, &force, &err) == SIM_OK);
    sim_params q = sim_params_default();
    sim_state t = {0};
    ENSURE_MSG(sim_scene_load(path, &q, &t, &err) == SIM_OK, "%s", err.message);
    ENSURE(t.n == 1 && t.pos[0].x == 2.4);
    sim_state_free(&t);
    ENSURE(sim_state_save(path, &p, &s, NULL, &err) == SIM_OK);
    ENSURE(sim_scene_load(path, &q, &t, &err) == SIM_PARSE);
    ENSURE(strstr(err.message, "body outside the box") != NULL);
    sim_state_free(&s);
}

static void test_coincident_pairs(void) {
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_scene_builtin("gas", 1000, 3, &p, &s, &err) == SIM_OK);
    uint32_t i = 7, j = 7;
    ENSURE(sim_state_coincident_pairs(&s, &i, &j) == 0 && i == 7 && j == 7);
    s.pos[20].z = -0.0;
    s.pos[500] = s.pos[20];
    s.pos[500].z = 0.0;          /* one pair (the sign of zero does not matter) ... */
    s.pos[900].x = s.pos[100].x; /* ... not a pair (one coordinate is the same) ... */
    s.pos[600] = s.pos[300];
    s.pos[601] = s.pos[300];
    s.pos[601].w = 0.1; /* ... and three at one centre, whatever their radii: 3 pairs */
    ENSURE(sim_state_coincident_pairs(&s, &i, &j) == 4);
    ENSURE(i == 20 && j == 500);
    sim_state_free(&s);
}

/* ---- the shipped assets ---- */

static void test_assets(void) {
    DIR *d = opendir(NBSIM_ASSETS_DIR);
    ENSURE_MSG(d != NULL, "cannot open %s", NBSIM_ASSETS_DIR);
    int count = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        const size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".scene") != 0) {
            continue;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", NBSIM_ASSETS_DIR, e->d_name);
        sim_params p = sim_params_default();
        sim_state s = {0};
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_scene_load(path, &p, &s, &err) == SIM_OK, "%s", err.message);
        uint64_t outside = 0;
        ENSURE_MSG(count_overlaps(&s, p.box_half, &outside) == 0 && outside == 0, "%s", e->d_name);
        printf("  %-24s %u bodies\n", e->d_name, s.n);
        sim_state_free(&s);
        ++count;
    }
    if (d != NULL) {
        closedir(d);
    }
    ENSURE(count >= 3);
}

/* assets/two_balls.scene through the CPU backend: leaves with e times the approach speed. */
static void test_two_balls_asset(void) {
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_scene_load(NBSIM_ASSETS_DIR "/two_balls.scene", &p, &s, &err) == SIM_OK, "%s",
               err.message);
    if (s.n != 2) {
        ENSURE(s.n == 2);
        return;
    }
    const double approach = s.vel[0].x - s.vel[1].x;
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.cpu_threads = 1;
    c.tile = 32;
    p.steps_per_frame = 10;
    sim_backend *b = NULL;
    ENSURE_MSG(sim_backend_create(&c, &p, &s, &b, &err) == SIM_OK, "%s", err.message);
    sim_frame_timing t;
    for (int f = 0; f < 2000 && b != NULL; ++f) {
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(sim_backend_read_state(b, &s, NULL, &err) == SIM_OK);
        if (s.vel[1].x - s.vel[0].x > 0.0 && s.pos[1].x - s.pos[0].x > 1.01) {
            break; /* separated */
        }
    }
    const double e = (s.vel[1].x - s.vel[0].x) / approach;
    printf("  two_balls: restitution %.4f (declared %.2f)\n", e, p.restitution);
    ENSURE(fabs(e - p.restitution) <= 0.025 * p.restitution);
    sim_backend_destroy(b);
    sim_state_free(&s);
}

static const ensure_test tests[] = {
    {"builtin_list", test_builtin_list},
    {"builtin_scenes", test_builtin_scenes},
    {"builtin_large", test_builtin_large},
    {"builtin_threads", test_builtin_threads},
    {"lattice", test_lattice},
    {"builtin_steps_safe", test_builtin_steps_safe},
    {"heap_pour", test_heap_pour},
    {"round_trip", test_round_trip},
    {"save_atomic", test_save_atomic},
    {"parse_errors", test_parse_errors},
    {"parse_tolerant", test_parse_tolerant},
    {"assets", test_assets},
    {"two_balls_asset", test_two_balls_asset},
    {"load_max_bodies", test_load_max_bodies},
    {"load_fixed_and_warnings", test_load_fixed_and_warnings},
    {"load_bytes", test_load_bytes},
    {"saved_state_beyond_wall_loads", test_saved_state_beyond_wall_loads},
    {"coincident_pairs", test_coincident_pairs},
};

TEST_TMP_MAIN(tests, "test_scene")
