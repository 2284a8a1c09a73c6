/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference's neighbour lists (cpu_nlist.h): the builds from the cell grid and
 * from the culled tile pairs, the rebuild test and the sweep, in double. Single-threaded builds
 * (as the CPU's culling passes); the sweep runs a slice of slots on the calling thread. */
#include "nlist/cpu_nlist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sim_cpu_nlist_free(sim_cpu_nlist *l) {
    free(l->nbr);
    free(l->count);
    free(l->ref);
    free(l->cell_of);
    free(l->binned);
    free(l->cell_start);
    free(l->found);
    memset(l, 0, sizeof *l);
}

sim_status sim_cpu_nlist_init(sim_cpu_nlist *l, uint32_t n, uint32_t cap, int half,
                              sim_error *err) {
    memset(l, 0, sizeof *l);
    l->n = n;
    l->stride = sim_nlist_stride(n);
    l->half = half;
    l->count = calloc(n, sizeof *l->count);
    l->ref = calloc(n, sizeof *l->ref);
    if (l->count == NULL || l->ref == NULL) {
        sim_cpu_nlist_free(l);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate neighbour lists for %u bodies", n);
    }
    const sim_status st = sim_cpu_nlist_resize(l, cap, err);
    if (st != SIM_OK) {
        sim_cpu_nlist_free(l);
    }
    return st;
}

sim_status sim_cpu_nlist_resize(sim_cpu_nlist *l, uint32_t cap, sim_error *err) {
    cap = cap > 0 ? cap : 1;
    uint32_t *nbr = malloc((size_t)cap * l->stride * sizeof *nbr);
    if (nbr == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate neighbour lists of %u entries for %u bodies", cap, l->n);
    }
    free(l->nbr);
    l->nbr = nbr;
    l->cap = cap;
    l->built = 0;
    return SIM_OK;
}

uint64_t sim_cpu_nlist_bytes(const sim_cpu_nlist *l) {
    return (uint64_t)l->cap * l->stride * sizeof *l->nbr +
           (uint64_t)l->n * (sizeof *l->count + sizeof *l->ref) +
           (l->cell_of != NULL ? 2u * (uint64_t)l->n * sizeof *l->cell_of : 0u) +
           (l->cell_start != NULL ? ((uint64_t)l->cell_cap + 1u) * sizeof *l->cell_start : 0u) +
           (uint64_t)l->found_cap * sizeof *l->found;
}

/* The periods to take images through: NULL without a periodic axis (walled axes have period 0,
 * whose image is the separation itself: the same bits without the work). */
static const sim_period_d *images(const sim_period_d *per) {
    return per != NULL && (per->len[0] > 0.0 || per->len[1] > 0.0 || per->len[2] > 0.0) ? per
                                                                                         : NULL;
}

int sim_cpu_nlist_stale(const sim_cpu_nlist *l, const sim_vec4d *pos, double skin) {
    if (!l->built || l->skin != skin) {
        return 1;
    }
    const double half = 0.5 * skin, h2 = half * half;
    const sim_period_d *per = images(l->per);
    for (uint32_t s = 0; s < l->n; ++s) {
        if (sim_nlist_moved_pd(pos[s], l->ref[s], h2, per)) {
            return 1;
        }
    }
    return 0;
}

/* Appends `other` to slot `owner`'s list: counted always, stored while it fits. */
static void append(sim_cpu_nlist *l, uint32_t owner, uint32_t other) {
    const uint32_t k = l->count[owner]++;
    if (k < l->cap) {
        l->nbr[(size_t)k * l->stride + owner] = other;
    }
}

/* The counts' summary of a build: overflow, most, entries, and the skin it was built for. */
static void finish_build(sim_cpu_nlist *l, double skin) {
    l->overflow = 0;
    l->most = 0;
    l->entries = 0;
    for (uint32_t s = 0; s < l->n; ++s) {
        const uint32_t c = l->count[s];
        l->overflow |= c > l->cap;
        l->most = c > l->most ? c : l->most;
        l->entries += c < l->cap ? c : l->cap;
    }
    l->skin = skin;
    l->built = 1;
}

void sim_cpu_nlist_build(sim_cpu_nlist *l, const sim_tile2 *pairs, size_t pair_count, uint32_t tile,
                         const sim_vec4d *pos, double skin) {
    const uint32_t n = l->n;
    memset(l->count, 0, (size_t)n * sizeof *l->count);
    memcpy(l->ref, pos, (size_t)n * sizeof *l->ref);
    for (size_t k = 0; k < pair_count; ++k) {
        const sim_tile2 t = pairs[k];
        const uint32_t i0 = t.i * tile, i1 = i0 + tile < n ? i0 + tile : n;
        const uint32_t j0 = t.j * tile, j1 = j0 + tile < n ? j0 + tile : n;
        for (uint32_t i = i0; i < i1; ++i) {
            const uint32_t j_end = t.i == t.j ? i : j1; /* j < i: each pair once */
            for (uint32_t j = j0; j < j_end; ++j) {
                if (sim_nlist_near_pd(pos[i], pos[j], skin, l->per)) {
                    append(l, i, j);
                    if (!l->half) {
                        append(l, j, i);
                    }
                }
            }
        }
    }
    finish_build(l, skin);
}

/* The grid's cells for n slots and `cells` cells; 0 when they cannot be allocated. */
static int grid_room(sim_cpu_nlist *l, uint32_t cells) {
    if (l->cell_of == NULL) {
        l->cell_of = malloc((size_t)(l->n ? l->n : 1) * sizeof *l->cell_of);
        l->binned = malloc((size_t)(l->n ? l->n : 1) * sizeof *l->binned);
        if (l->cell_of == NULL || l->binned == NULL) {
            return 0;
        }
    }
    if (cells > l->cell_cap || l->cell_start == NULL) {
        uint32_t *start = malloc(((size_t)cells + 1u) * sizeof *start);
        if (start == NULL) {
            return 0;
        }
        free(l->cell_start);
        l->cell_start = start;
        l->cell_cap = cells;
    }
    return 1;
}

/* One more candidate for the body being listed; 0 when there is no room for it. */
static int found_push(sim_cpu_nlist *l, uint32_t at, uint32_t j) {
    if (at == l->found_cap) {
        const uint32_t cap = l->found_cap ? 2u * l->found_cap : 64u;
        uint32_t *v = realloc(l->found, (size_t)cap * sizeof *v);
        if (v == NULL) {
            return 0;
        }
        l->found = v;
        l->found_cap = cap;
    }
    l->found[at] = j;
    return 1;
}

/* A coordinate's cell along one axis, as sim_cell_axis in double (NaN: the first). */
static uint32_t cell_axis_d(double x, double lo, double inv, uint32_t dims) {
    return (uint32_t)fmin(fmax(floor((x - lo) * inv), 0.0), (double)(dims - 1u));
}

/* Bins the slots by cell: stable, so each cell holds its slots in ascending order. */
static void bin_slots(sim_cpu_nlist *l, const sim_cell_grid *g, const sim_vec4d *pos) {
    const uint32_t n = l->n;
    memset(l->cell_start, 0, ((size_t)g->cells + 1u) * sizeof *l->cell_start);
    for (uint32_t s = 0; s < n; ++s) {
        const uint32_t x = cell_axis_d(pos[s].x, g->lo[0], g->inv[0], g->dims[0]);
        const uint32_t y = cell_axis_d(pos[s].y, g->lo[1], g->inv[1], g->dims[1]);
        const uint32_t z = cell_axis_d(pos[s].z, g->lo[2], g->inv[2], g->dims[2]);
        const uint32_t c = x + g->dims[0] * (y + g->dims[1] * z);
        l->cell_of[s] = c;
        l->cell_start[c + 1u]++;
    }
    for (uint32_t c = 0; c < g->cells; ++c) {
        l->cell_start[c + 1u] += l->cell_start[c];
    }
    for (uint32_t s = 0; s < n; ++s) { /* cell_start[c] runs to the end of cell c, then back */
        l->binned[l->cell_start[l->cell_of[s]]++] = s;
    }
    for (uint32_t c = g->cells; c > 0; --c) {
        l->cell_start[c] = l->cell_start[c - 1u];
    }
    l->cell_start[0] = 0;
}

/* The grid is exact in double too: its cells are the reach widened by 2^-10 (cell_grid.h), and
 * the float rounding of its corner and scale (2^-24) and the double build's own are far below
 * that. Each pair is tested with the larger slot first, as the tile build does, so the same
 * bits decide; a body's candidates are sorted so its list runs in ascending slot order. */
int sim_cpu_nlist_build_grid(sim_cpu_nlist *l, const sim_params *p, const sim_vec4d *pos,
                             double skin) {
    const uint32_t n = l->n;
    double rmax = 0.0;
    for (uint32_t s = 0; s < n; ++s) {
        rmax = pos[s].w > rmax ? pos[s].w : rmax;
    }
    sim_cell_grid g;
    if (!sim_cell_grid_shape(p, rmax, skin, n, &g) || !grid_room(l, g.cells)) {
        return 0;
    }
    bin_slots(l, &g, pos);
    const sim_period_d *per = images(l->per);
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4d pi = pos[i];
        uint32_t m = 0;
        int room = 1;
        SIM_CELL_GRID_FOR_NEAR(&g, l->cell_of[i], cell, {
            const uint32_t end = l->cell_start[cell + 1u];
            for (uint32_t k = l->cell_start[cell]; k < end; ++k) {
                const uint32_t j = l->binned[k];
                if (j >= i) {
                    if (l->half) {
                        break; /* the cell's slots ascend: none below i follows */
                    }
                    if (j == i) {
                        continue;
                    }
                }
                const int near = j < i ? sim_nlist_near_pd(pi, pos[j], skin, per)
                                       : sim_nlist_near_pd(pos[j], pi, skin, per);
                if (near) {
                    room &= found_push(l, m, j);
                    m += room;
                }
            }
        });
        if (!room) {
            return 0;
        }
        uint32_t *v = l->found;
        for (uint32_t a = 1; a < m; ++a) { /* a few to a few tens: insertion */
            const uint32_t x = v[a];
            uint32_t b = a;
            for (; b > 0 && v[b - 1u] > x; --b) {
                v[b] = v[b - 1u];
            }
            v[b] = x;
        }
        const uint32_t kept = m < l->cap ? m : l->cap;
        for (uint32_t k = 0; k < kept; ++k) {
            l->nbr[(size_t)k * l->stride + i] = v[k];
        }
        l->count[i] = m;
    }
    memcpy(l->ref, pos, (size_t)n * sizeof *l->ref);
    finish_build(l, skin);
    return 1;
}

/* The kernels' contact test in double: |x_i - x_j| < r_i + r_j (NaN: no), minimum image under
 * per (NULL: none). */
static int touching(sim_vec4d a, sim_vec4d b, const sim_period_d *per) {
    double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    const double reach = a.w + b.w;
    if (per != NULL) {
        sim_min_image_in_d(&dx, &dy, &dz, per);
    }
    return dx * dx + dy * dy + dz * dz < reach * reach;
}

double sim_cpu_nlist_sweep(const sim_cpu_nlist *l, uint32_t begin, uint32_t end,
                           const sim_vec4d *pos, const sim_vec4d *vel, const sim_physics *ph,
                           sim_vec3d *f, sim_cpu_nlist_tally *tally) {
    double energy = 0.0;
    for (uint32_t i = begin; i < end; ++i) {
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        tally->tests += c;
        for (uint32_t k = 0; k < c; ++k) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            if (!touching(pos[i], pos[j], l->per)) {
                continue;
            }
            double e = 0.0;
            const sim_vec3d fij = sim_contact_force_d(pos[i], vel[i], pos[j], vel[j], ph, &e);
            f[i].x += fij.x;
            f[i].y += fij.y;
            f[i].z += fij.z;
            if (l->half) {
                f[j].x -= fij.x;
                f[j].y -= fij.y;
                f[j].z -= fij.z;
                energy += e;
                tally->contacts++;
            } else { /* the pair is swept from both ends: half of it here */
                energy += 0.5 * e;
                tally->contacts += i > j;
            }
        }
    }
    return energy;
}

void sim_cpu_nlist_contacts(const sim_cpu_nlist *l, const sim_vec4d *pos,
                            void (*emit)(void *ctx, uint32_t i, uint32_t j), void *ctx) {
    for (uint32_t i = 0; i < l->n; ++i) {
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        for (uint32_t k = 0; k < c; ++k) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            if ((l->half || i > j) && touching(pos[i], pos[j], l->per)) {
                emit(ctx, i > j ? i : j, i > j ? j : i);
            }
        }
    }
}
