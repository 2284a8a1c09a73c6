/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference's culling of tile triples by the ATM cut-off (cpu_tcull.h): the
 * kernels' passes in double, one thread (the passes cost O(T2(groups) 256 + N k) box tests for k
 * neighbour tiles, far below the triples they prune). */
#include "cpu/cpu_tcull.h"

#include "cull/triplet_cull.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sim_cpu_tcull_free(sim_cpu_tcull *c) {
    free(c->boxes);
    free(c->supers);
    free(c->pairs.v);
    free(c->super_pairs.v);
    free(c->row_start);
    free(c->row_fill);
    free(c->nbr);
    free(c->triples.v);
    memset(c, 0, sizeof *c);
}

sim_status sim_cpu_tcull_init(sim_cpu_tcull *c, uint32_t n, sim_error *err) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->n_tiles = (uint32_t)(((uint64_t)n + SIM_TRIPLET_TILE - 1u) / SIM_TRIPLET_TILE);
    c->n_supers = (c->n_tiles + SIM_CULL_SUPER - 1u) / SIM_CULL_SUPER;
    c->boxes = malloc((size_t)c->n_tiles * sizeof *c->boxes);
    c->supers = malloc((size_t)c->n_supers * sizeof *c->supers);
    c->row_start = malloc(((size_t)c->n_tiles + 1u) * sizeof *c->row_start);
    c->row_fill = malloc((size_t)c->n_tiles * sizeof *c->row_fill);
    if (!c->boxes || !c->supers || !c->row_start || !c->row_fill) {
        sim_cpu_tcull_free(c);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate CPU triplet culling buffers for %u bodies", n);
    }
    return SIM_OK;
}

/* Boxes of the centres (fmin / fmax skip NaN, as the kernels' fminf / fmaxf), moved outwards by
 * 2^-48 of their largest corner (cpu_cull.c's insurance); super-tiles as unions. */
static void make_boxes(sim_cpu_tcull *c, const sim_vec4d *pos) {
    for (uint32_t t = 0; t < c->n_tiles; ++t) {
        sim_cull_boxd b;
        for (int a = 0; a < 3; ++a) {
            b.lo[a] = INFINITY;
            b.hi[a] = -INFINITY;
        }
        const uint32_t lo = t * SIM_TRIPLET_TILE;
        const uint32_t hi = lo + SIM_TRIPLET_TILE < c->n ? lo + SIM_TRIPLET_TILE : c->n;
        for (uint32_t s = lo; s < hi; ++s) {
            const double x[3] = {pos[s].x, pos[s].y, pos[s].z};
            for (int a = 0; a < 3; ++a) {
                b.lo[a] = fmin(b.lo[a], x[a]);
                b.hi[a] = fmax(b.hi[a], x[a]);
            }
        }
        for (int a = 0; a < 3; ++a) {
            if (b.lo[a] <= b.hi[a]) {
                const double m = fmax(fabs(b.lo[a]), fabs(b.hi[a])) * 0x1p-48 + 1e-300;
                b.lo[a] -= m;
                b.hi[a] += m;
            }
        }
        c->boxes[t] = b;
    }
    for (uint32_t s = 0; s < c->n_supers; ++s) {
        sim_cull_boxd u;
        for (int a = 0; a < 3; ++a) {
            u.lo[a] = INFINITY;
            u.hi[a] = -INFINITY;
        }
        for (uint32_t t = s * SIM_CULL_SUPER; t < (s + 1u) * SIM_CULL_SUPER && t < c->n_tiles;
             ++t) {
            for (int a = 0; a < 3; ++a) {
                u.lo[a] = fmin(u.lo[a], c->boxes[t].lo[a]);
                u.hi[a] = fmax(u.hi[a], c->boxes[t].hi[a]);
            }
        }
        c->supers[s] = u;
    }
}

/* per: the box's periods (NULL: walls on every axis). */
static int near(const sim_cull_boxd *a, const sim_cull_boxd *b, double limit,
                const sim_period_d *per) {
    return sim_tcull_near_pd(a->lo, a->hi, b->lo, b->hi, limit, per);
}

static sim_status push_triple(sim_triple_list *l, sim_tile3 t, sim_error *err) {
    if (l->count == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 4096;
        sim_tile3 *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY,
                            "cannot grow the tile-triple list to %zu triples", cap);
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->count++] = t;
    return SIM_OK;
}

/* One neighbour-pass block: the 16 x 16 threads of group pair `group` over `count` items. */
static sim_status pass_block(sim_tile2 group, uint32_t count, const sim_cull_boxd *boxes,
                             double limit, const sim_period_d *per, sim_pair_list *out,
                             sim_error *err) {
    for (uint32_t ty = 0; ty < SIM_CULL_GROUP; ++ty) {
        for (uint32_t tx = 0; tx < SIM_CULL_GROUP; ++tx) {
            sim_tile2 p;
            if (sim_cull_thread_pair(group, tx, ty, count, &p) &&
                near(&boxes[p.i], &boxes[p.j], limit, per)) {
                SIM_TRY(sim_pair_list_push(out, p, "neighbour-pair", err));
            }
        }
    }
    return SIM_OK;
}

/* Rows of the neighbour list: row I holds the J of every pair (I, J), in list order. */
static sim_status make_rows(sim_cpu_tcull *c, sim_error *err) {
    const size_t pairs = c->pairs.count;
    if (pairs > c->nbr_cap) {
        uint32_t *v = realloc(c->nbr, pairs * sizeof *v);
        if (v == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %zu neighbour rows", pairs);
        }
        c->nbr = v;
        c->nbr_cap = pairs;
    }
    memset(c->row_start, 0, ((size_t)c->n_tiles + 1u) * sizeof *c->row_start);
    for (size_t p = 0; p < pairs; ++p) {
        c->row_start[c->pairs.v[p].i + 1u]++;
    }
    for (uint32_t t = 0; t < c->n_tiles; ++t) {
        c->row_start[t + 1u] += c->row_start[t];
        c->row_fill[t] = 0;
    }
    for (size_t p = 0; p < pairs; ++p) {
        const sim_tile2 ij = c->pairs.v[p];
        c->nbr[c->row_start[ij.i] + c->row_fill[ij.i]++] = ij.j;
    }
    return SIM_OK;
}

sim_status sim_cpu_tcull_build(sim_cpu_tcull *c, const sim_backend *b, const sim_vec4d *pos,
                               double cutoff, sim_error *err) {
    const double limit = sim_tcull_limit_d(cutoff);
    const sim_period_d period = sim_period_of(&b->params);
    const sim_period_d *per = b->params.periodic ? &period : NULL;
    make_boxes(c, pos);
    const int two = b->tcull_levels == 2;
    sim_pair_list *top = two ? &c->super_pairs : &c->pairs;
    c->pairs.count = 0;
    c->super_pairs.count = 0;
    c->triples.count = 0;
    /* Top pass: every block of the map's plan, as the kernel launches it. */
    sim_plan_walk w = sim_plan_walk_begin(&b->tcull_plan, (sim_pair_map)b->config.pair_map);
    sim_tile2 group;
    while (sim_plan_walk_next(&w, &group)) {
        SIM_TRY(
            pass_block(group, b->tcull_items, two ? c->supers : c->boxes, limit, per, top, err));
    }
    for (size_t k = 0; two && k < c->super_pairs.count; ++k) {
        SIM_TRY(pass_block(c->super_pairs.v[k], c->n_tiles, c->boxes, limit, per, &c->pairs, err));
    }
    /* Each pair (I, J) of this rank's rows (triplet_cull.h) with every K of row J whose box is
     * within the limit of I's too. */
    SIM_TRY(make_rows(c, err));
    const uint32_t part = (uint32_t)b->rank.rank;
    const uint32_t parts = (uint32_t)(b->rank.world > 1 ? b->rank.world : 1);
    for (size_t p = 0; p < c->pairs.count; ++p) {
        const sim_tile2 ij = c->pairs.v[p];
        if (!sim_tcull_mine(ij.i, part, parts)) {
            continue;
        }
        for (uint32_t r = c->row_start[ij.j]; r < c->row_start[ij.j + 1u]; ++r) {
            const uint32_t k = c->nbr[r];
            if (near(&c->boxes[ij.i], &c->boxes[k], limit, per)) {
                SIM_TRY(push_triple(&c->triples, (sim_tile3){ij.i, ij.j, k}, err));
            }
        }
    }
    return SIM_OK;
}
