/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference's culled pair pipeline (cpu_cull.h): Morton sort, tile boxes in
 * double, and culling passes that visit the map's blocks and each block's 16 x 16 threads as the
 * kernels do (sim_pair_map_block, then sim_cull_thread_pair), one list append per surviving
 * thread. Single-threaded: the passes cost O(T2(groups) * 256 + survivors * 256) box tests,
 * far below the pair sweep they prune. */
#include "cpu/cpu_cull.h"
#include "nlist/nlist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sim_cpu_cull_free(sim_cpu_cull *c) {
    free(c->order);
    free(c->keys);
    free(c->tmp);
    free(c->pos);
    free(c->vel);
    free(c->boxes);
    free(c->supers);
    free(c->tiles.v);
    free(c->super_pairs.v);
    memset(c, 0, sizeof *c);
}

sim_status sim_cpu_cull_init(sim_cpu_cull *c, uint32_t n, uint32_t tile, sim_error *err) {
    memset(c, 0, sizeof *c);
    const uint32_t tiles = sim_ceil_div(n, tile);
    c->n = n;
    c->tile = tile;
    c->order = malloc((size_t)n * sizeof *c->order);
    c->keys = malloc(2 * (size_t)n * sizeof *c->keys);
    c->tmp = malloc(2 * (size_t)n * sizeof *c->tmp);
    c->pos = malloc((size_t)n * sizeof *c->pos);
    c->vel = malloc((size_t)n * sizeof *c->vel);
    c->boxes = malloc((size_t)tiles * sizeof *c->boxes);
    c->supers = malloc((size_t)sim_ceil_div(tiles, SIM_CULL_SUPER) * sizeof *c->supers);
    if (!c->order || !c->keys || !c->tmp || !c->pos || !c->vel || !c->boxes || !c->supers) {
        sim_cpu_cull_free(c);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate CPU culling buffers for %u bodies",
                        n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        c->order[i] = i;
    }
    return SIM_OK;
}

/* Stable LSD radix sort of (key, body) by key, 3 passes of 10 bits: O(n), deterministic. */
void sim_cpu_cull_sort(sim_cpu_cull *c, const sim_vec4d *pos, double box_half) {
    const uint32_t n = c->n;
    const float bh = (float)box_half, scale = (float)SIM_MORTON_CELLS / (2.0f * bh);
    uint32_t *key = c->keys, *key2 = c->keys + n, *idx = c->tmp, *idx2 = c->tmp + n;
    for (uint32_t i = 0; i < n; ++i) {
        key[i] = sim_morton_key((float)pos[i].x, (float)pos[i].y, (float)pos[i].z, bh, scale);
        idx[i] = i;
    }
    enum { kBits = 10, kBuckets = 1 << kBits };
    _Static_assert(3 * kBits == SIM_MORTON_KEY_BITS, "three passes cover the key");
    for (int pass = 0; pass < 3; ++pass) {
        const int shift = pass * kBits;
        uint32_t start[kBuckets + 1];
        memset(start, 0, sizeof start);
        for (uint32_t i = 0; i < n; ++i) {
            start[((key[i] >> shift) & (kBuckets - 1)) + 1]++;
        }
        for (int k = 0; k < kBuckets; ++k) {
            start[k + 1] += start[k];
        }
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t d = start[(key[i] >> shift) & (kBuckets - 1)]++;
            key2[d] = key[i];
            idx2[d] = idx[i];
        }
        uint32_t *t = key;
        key = key2;
        key2 = t;
        t = idx;
        idx = idx2;
        idx2 = t;
    }
    memcpy(c->order, idx, (size_t)n * sizeof *c->order);
}

/* ---- boxes ---- */

static void box_empty(sim_cull_boxd *b) {
    for (int a = 0; a < 3; ++a) {
        b->lo[a] = INFINITY;
        b->hi[a] = -INFINITY;
    }
}

/* Outwards by 2^-48 max(|lo|, |hi|): the same insurance as the kernels' (cull.h; the monotone
 * rounding argument there holds for the double test of sim_contact_force_d too). */
static void box_inflate(sim_cull_boxd *b) {
    for (int a = 0; a < 3; ++a) {
        const double m = fmax(fabs(b->lo[a]), fabs(b->hi[a])) * 0x1p-48 + 1e-300;
        b->lo[a] -= m;
        b->hi[a] += m;
    }
}

static void box_union(sim_cull_boxd *u, const sim_cull_boxd *b) {
    for (int a = 0; a < 3; ++a) {
        u->lo[a] = fmin(u->lo[a], b->lo[a]);
        u->hi[a] = fmax(u->hi[a], b->hi[a]);
    }
}

/* On a periodic axis of per (NULL: none) through any image: across a face, an edge, a corner. */
static int box_overlap(const sim_cull_boxd *a, const sim_cull_boxd *b, const sim_period_d *per) {
    if (per == NULL) {
        return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] &&
               b->lo[1] <= a->hi[1] && a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
    }
    for (int k = 0; k < 3; ++k) {
        if (!sim_period_meets_d(a->lo[k], a->hi[k], b->lo[k], b->hi[k], per->len[k], per->inv[k])) {
            return 0;
        }
    }
    return 1;
}

/* How far [m] the image of p nearest anchor a lies from p, per axis: whole periods of per on its
 * periodic axes (cull.h; sim_period_count_d: 0 for NaN and infinite bodies), else 0. */
static void near_shift(const sim_vec4d *p, const sim_vec4d *a, const sim_period_d *per,
                       double d[3]) {
    d[0] = per->len[0] * sim_period_count_d(p->x, a->x, per->inv[0]);
    d[1] = per->len[1] * sim_period_count_d(p->y, a->y, per->inv[1]);
    d[2] = per->len[2] * sim_period_count_d(p->z, a->z, per->inv[2]);
}

/* Tile boxes over the sorted copies (fmin/fmax skip NaN, like the kernel's fminf/fmaxf), and
 * super-tile boxes as unions of the inflated tile boxes. pad > 0 (neighbour lists: half the
 * skin) widens every body's interval to its list half-width (sim_nlist_width_d). Periodic axes
 * (per; NULL: none) as the kernels: each body through its image nearest its tile's first body,
 * each tile box moved by whole periods to the image nearest its super-tile's first body. */
static void make_boxes(sim_cpu_cull *c, uint32_t tiles, uint32_t supers, double pad,
                       const sim_period_d *per) {
    for (uint32_t t = 0; t < tiles; ++t) {
        sim_cull_boxd b;
        box_empty(&b);
        const uint32_t lo = t * c->tile, hi = lo + c->tile < c->n ? lo + c->tile : c->n;
        for (uint32_t s = lo; s < hi; ++s) {
            const sim_vec4d p = c->pos[s];
            double x[3] = {p.x, p.y, p.z};
            if (per != NULL) {
                double d[3];
                near_shift(&p, &c->pos[lo], per, d);
                for (int a = 0; a < 3; ++a) {
                    x[a] -= d[a];
                }
            }
            const double w = pad > 0.0 ? sim_nlist_width_d(p.w, pad) : p.w;
            for (int a = 0; a < 3; ++a) {
                b.lo[a] = fmin(b.lo[a], x[a] - w);
                b.hi[a] = fmax(b.hi[a], x[a] + w);
            }
        }
        box_inflate(&b);
        c->boxes[t] = b;
    }
    for (uint32_t s = 0; s < supers; ++s) {
        sim_cull_boxd u;
        box_empty(&u);
        const sim_vec4d *a = &c->pos[(size_t)s * SIM_CULL_SUPER * c->tile];
        for (uint32_t t = s * SIM_CULL_SUPER; t < (s + 1) * SIM_CULL_SUPER && t < tiles; ++t) {
            sim_cull_boxd b = c->boxes[t];
            if (per != NULL) { /* the tile's anchor moved to its image nearest a: the box too */
                double d[3];
                near_shift(&c->pos[(size_t)t * c->tile], a, per, d);
                for (int k = 0; k < 3; ++k) {
                    b.lo[k] -= d[k];
                    b.hi[k] -= d[k];
                }
            }
            box_union(&u, &b);
        }
        c->supers[s] = u;
    }
}

/* ---- passes ---- */

sim_status sim_pair_list_push(sim_pair_list *l, sim_tile2 p, const char *what, sim_error *err) {
    if (l->count == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 4096;
        sim_tile2 *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot grow the %s list to %zu pairs", what,
                            cap);
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->count++] = p;
    return SIM_OK;
}

sim_plan_walk sim_plan_walk_begin(const sim_map_plan *plan, sim_pair_map map) {
    const sim_plan_walk w = {plan, map, 0, 0};
    return w;
}

int sim_plan_walk_next(sim_plan_walk *w, sim_tile2 *group) {
    for (; w->launch < w->plan->launch_count; ++w->launch, w->block = 0) {
        const sim_map_launch *launch = &w->plan->launch[w->launch];
        const uint64_t gx = launch->grid[0], gy = launch->grid[1];
        const uint64_t blocks = gx * gy * launch->grid[2];
        while (w->block < blocks) {
            const uint64_t blk = w->block++;
            if (sim_pair_map_block(w->map, launch, (uint32_t)(blk % gx), (uint32_t)(blk / gx % gy),
                                   (uint32_t)(blk / gx / gy), group)) {
                return 1;
            }
        }
    }
    return 0;
}

/* One culling block: the 16 x 16 threads of group pair `group` over `count` items; keeps the
 * item pairs whose row I lies in [row0, row1) (a rank's rows of a multi-GPU run). */
static sim_status cull_block(sim_tile2 group, uint32_t count, const sim_cull_boxd *boxes,
                             const sim_period_d *per, uint32_t row0, uint32_t row1,
                             sim_pair_list *out, sim_error *err) {
    for (uint32_t ty = 0; ty < SIM_CULL_GROUP; ++ty) {
        for (uint32_t tx = 0; tx < SIM_CULL_GROUP; ++tx) {
            sim_tile2 p;
            if (sim_cull_thread_pair(group, tx, ty, count, &p) && p.i >= row0 && p.i < row1 &&
                box_overlap(&boxes[p.i], &boxes[p.j], per)) {
                SIM_TRY(sim_pair_list_push(out, p, "tile-pair", err));
            }
        }
    }
    return SIM_OK;
}

void sim_cpu_cull_gather(sim_cpu_cull *c, const sim_vec4d *pos, const sim_vec4d *vel) {
    for (uint32_t s = 0; s < c->n; ++s) {
        c->pos[s] = pos[c->order[s]];
        c->vel[s] = vel[c->order[s]];
    }
}

sim_status sim_cpu_cull_build(sim_cpu_cull *c, const sim_backend *b, const sim_vec4d *pos,
                              const sim_vec4d *vel, sim_error *err) {
    sim_cpu_cull_gather(c, pos, vel);
    return sim_cpu_cull_passes(c, b, 0.0, err);
}

sim_status sim_cpu_cull_passes(sim_cpu_cull *c, const sim_backend *b, double pad, sim_error *err) {
    const int two = b->cull_levels == 2;
    const sim_period_d period = sim_period_of(&b->params);
    const sim_period_d *per = b->params.periodic ? &period : NULL;
    make_boxes(c, b->tiles, two ? b->super_tiles : 0u, pad, per);
    sim_pair_list *top = two ? &c->super_pairs : &c->tiles;
    c->tiles.count = 0;
    c->super_pairs.count = 0;
    /* A rank of a multi-GPU run keeps the tile pairs of its rows, and the super pairs whose
     * super row holds one of them (its rows are whole super-tiles: sim_backend_cull_rows). */
    uint32_t row0, row1;
    sim_backend_cull_rows(b, b->tiles, &row0, &row1);
    const uint32_t top0 = two ? row0 / SIM_CULL_SUPER : row0;
    const uint32_t top1 = two ? sim_ceil_div(row1, SIM_CULL_SUPER) : row1;
    /* Top pass: every block of the map's plan over the groups, as the kernel launches it. */
    sim_plan_walk w = sim_plan_walk_begin(&b->cull_plan, (sim_pair_map)b->config.pair_map);
    sim_tile2 group;
    while (sim_plan_walk_next(&w, &group)) {
        SIM_TRY(cull_block(group, b->cull_items, two ? c->supers : c->boxes, per, top0, top1, top,
                           err));
    }
    /* Second pass: the tile pairs inside each surviving super-tile pair, one block each. */
    for (size_t k = 0; two && k < c->super_pairs.count; ++k) {
        SIM_TRY(
            cull_block(c->super_pairs.v[k], b->tiles, c->boxes, per, row0, row1, &c->tiles, err));
    }
    return SIM_OK;
}
