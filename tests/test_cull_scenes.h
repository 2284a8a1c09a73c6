/* SPDX-License-Identifier: MIT
 * nbsim tests — the scenes the culling tests share (CPU and GPU) and the comparison of the sets
 * of touching pairs that sim_backend_contacts reports. Header-only (static functions); include
 * after ensure.h. */
#ifndef NBSIM_TEST_CULL_SCENES_H
#define NBSIM_TEST_CULL_SCENES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "nbsim/scene.h"

typedef struct {
    const char *name;
    sim_state s;
    sim_params p;
} scene;

static inline void scale_scene(scene *sc, double f) {
    for (uint32_t i = 0; i < sc->s.n; ++i) {
        sc->s.pos[i].x *= f;
        sc->s.pos[i].y *= f;
        sc->s.pos[i].z *= f;
    }
    sc->p.box_half *= f;
}

/* Built-in scenes made dense enough to have contacts everywhere: gas squeezed to 45 % (spacing
 * 0.9 m, radii 0.35-0.5 m), pile to 72 %, collide to 88 % with its blocks pushed 0.3 m into
 * each other; `walls` is the squeezed gas with a tenth of its bodies moved onto the walls, past
 * them (up to 1.2 box_half) and into the corners. Every value is rounded to float. */
static inline scene make_scene(const char *kind, uint32_t n, uint64_t seed) {
    scene sc = {kind, {0}, sim_params_default()};
    sim_error err;
    const int walls = strcmp(kind, "walls") == 0;
    const char *base = walls ? "gas" : kind;
    if (sim_scene_builtin(base, n, seed, &sc.p, &sc.s, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    if (strcmp(base, "gas") == 0) {
        scale_scene(&sc, 0.45);
    } else if (strcmp(base, "pile") == 0) {
        scale_scene(&sc, 0.72);
    } else { /* collide, squeezed to 88 %: bodies [0, (n+1)/2) are the left block */
        scale_scene(&sc, 0.88);
        const uint32_t na = (n + 1) / 2;
        double right = -1e300, left = 1e300;
        for (uint32_t i = 0; i < n; ++i) {
            if (i < na) {
                right = fmax(right, sc.s.pos[i].x + sc.s.pos[i].w);
            } else {
                left = fmin(left, sc.s.pos[i].x - sc.s.pos[i].w);
            }
        }
        for (uint32_t i = na; i < n; ++i) {
            sc.s.pos[i].x -= left - right + 0.3;
        }
    }
    if (walls) {
        const double h = sc.p.box_half;
        for (uint32_t i = 0; i < n; i += 10) {
            double *c[3] = {&sc.s.pos[i].x, &sc.s.pos[i].y, &sc.s.pos[i].z};
            const int axis = (int)(i / 10 % 3);
            const double side = i / 30 % 2 ? 1.0 : -1.0;
            const double at = i / 60 % 3 == 0 ? 1.0 : i / 60 % 3 == 1 ? 1.05 : 1.2;
            *c[axis] = side * h * at;
            if (i / 10 % 7 == 0) { /* a corner */
                *c[(axis + 1) % 3] = side * h;
                *c[(axis + 2) % 3] = -side * h;
            }
        }
    }
    for (uint32_t i = 0; i < n; ++i) { /* exact floats: the GPU starts from the same numbers */
        double *v[8] = {&sc.s.pos[i].x, &sc.s.pos[i].y, &sc.s.pos[i].z, &sc.s.pos[i].w,
                        &sc.s.vel[i].x, &sc.s.vel[i].y, &sc.s.vel[i].z, &sc.s.vel[i].w};
        for (int k = 0; k < 8; ++k) {
            *v[k] = (double)(float)*v[k];
        }
    }
    sc.p.box_half = (double)(float)sc.p.box_half;
    sc.p.steps_per_frame = 1;
    return sc;
}

/* ---- comparing ---- */

static inline int cmp_pair(const void *a, const void *b) {
    const sim_body_pair *x = a, *y = b;
    if (x->i != y->i) {
        return x->i < y->i ? -1 : 1;
    }
    return (x->j > y->j) - (x->j < y->j);
}

/* The touching pairs a backend finds, sorted; *count set. Caller frees. */
static inline sim_body_pair *contacts_of(sim_backend *b, uint64_t *count) {
    sim_error err = {SIM_OK, ""};
    uint64_t cap = 1u << 20;
    sim_body_pair *v = malloc(cap * sizeof *v);
    ENSURE(sim_backend_contacts(b, v, cap, count, &err) == SIM_OK);
    ENSURE_MSG(*count <= cap, "more than %llu contacts", (unsigned long long)cap);
    qsort(v, (size_t)(*count < cap ? *count : cap), sizeof *v, cmp_pair);
    return v;
}

/* The minimum image of b - a on p's periodic axes (p NULL: walls), written independently of
 * physics_impl.h: the nearest of the three images per axis. */
static inline double brute_image_axis(double d, double L) {
    const double c[3] = {d, d - L, d + L};
    double best = d;
    for (int k = 0; k < 3; ++k) {
        best = fabs(c[k]) < fabs(best) ? c[k] : best;
    }
    return best;
}

static inline void brute_image(const sim_params *p, sim_vec4d a, sim_vec4d b, double d[3]) {
    const int per = p != NULL ? p->periodic : 0;
    const double L = p != NULL ? 2.0 * p->box_half : 0.0;
    d[0] = (per & 1) ? brute_image_axis(b.x - a.x, L) : b.x - a.x;
    d[1] = (per & 2) ? brute_image_axis(b.y - a.y, L) : b.y - a.y;
    d[2] = (per & 4) ? brute_image_axis(b.z - a.z, L) : b.z - a.z;
}

/* Every touching pair (i > j) of s by brute force in double, through the minimum image on p's
 * periodic axes (p NULL: walls), in (i, j) order, so sorted as cmp_pair sorts; *count set.
 * Caller frees. */
static inline sim_body_pair *brute_contacts(const sim_params *p, const sim_state *s,
                                            uint64_t *count) {
    size_t cap = 1024, k = 0;
    sim_body_pair *v = malloc(cap * sizeof *v);
    for (uint32_t i = 0; i < s->n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            double d[3];
            brute_image(p, s->pos[i], s->pos[j], d);
            const double reach = s->pos[i].w + s->pos[j].w;
            if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < reach * reach) {
                if (k == cap) {
                    cap *= 2;
                    v = realloc(v, cap * sizeof *v);
                }
                v[k++] = (sim_body_pair){i, j};
            }
        }
    }
    *count = k;
    return v;
}

static inline int same_pairs(const sim_body_pair *a, uint64_t na, const sim_body_pair *b,
                             uint64_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

static inline void scene_free(scene *sc) {
    sim_state_free(&sc->s);
}

/* The culled paths a periodic test runs the same bodies through (test_periodic.c on the CPU,
 * test_gpu_cull.c on the GPU): tiles in one and two culling passes, then full lists. */
typedef struct {
    int levels;
    double skin;
    const char *name;
} cull_path;
static const cull_path cull_paths[3] = {
    {1, 0.0, "tiles, one pass"}, {2, 0.0, "tiles, two passes"}, {2, 0.1, "full lists"}};

/* What a periodic path's frames did to its tile pairs: those found at the sort (frame 0) and
 * the most since (tiles only: lists build from them only at rebuilds), and the re-sorts after
 * the first frame. */
typedef struct {
    uint64_t first, most;
    int sorts;
} tile_pair_watch;

static inline void tile_pair_watch_frame(tile_pair_watch *w, const sim_frame_timing *t, int frame,
                                         const cull_path *path) {
    w->sorts += frame > 0 ? t->sorts : 0;
    if (path->skin == 0.0) {
        w->first = frame == 0 ? t->tile_pairs : w->first;
        w->most = t->tile_pairs > w->most ? t->tile_pairs : w->most;
    }
}

/* No re-sort (the tile pairs did not regrow), and at most 5 % more tile pairs than at the sort. */
static inline void tile_pair_watch_check(const tile_pair_watch *w, const cull_path *path) {
    ENSURE_MSG(w->sorts == 0, "%s: %d re-sorts (the tile pairs regrew)", path->name, w->sorts);
    ENSURE_MSG((double)w->most <= 1.05 * (double)w->first, "%s: tile pairs %llu -> %llu",
               path->name, (unsigned long long)w->first, (unsigned long long)w->most);
}

#endif /* NBSIM_TEST_CULL_SCENES_H */
