/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference's ATM cut-off lists (cpu_atm_list.h): a cell grid build, the rebuild
 * test and the triple sweep, in double, on the calling thread. */
#include "nlist/cpu_atm_list.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cells per body at most: a dilute cloud gets larger cells rather than an empty grid. */
#define CELLS_PER_BODY 4u

void sim_cpu_atm_list_free(sim_cpu_atm_list *l) {
    free(l->nbr);
    free(l->count);
    free(l->ref);
    free(l->cell_start);
    free(l->cell_body);
    free(l->body_cell);
    memset(l, 0, sizeof *l);
}

sim_status sim_cpu_atm_list_init(sim_cpu_atm_list *l, uint32_t n, sim_error *err) {
    memset(l, 0, sizeof *l);
    l->n = n;
    l->stride = sim_nlist_stride(n);
    l->count = calloc(n ? n : 1, sizeof *l->count);
    l->ref = calloc(n ? n : 1, sizeof *l->ref);
    l->cell_body = malloc((n ? n : 1) * sizeof *l->cell_body);
    l->body_cell = malloc((n ? n : 1) * sizeof *l->body_cell);
    if (!l->count || !l->ref || !l->cell_body || !l->body_cell) {
        sim_cpu_atm_list_free(l);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate ATM lists for %u bodies", n);
    }
    return SIM_OK;
}

uint64_t sim_cpu_atm_list_bytes(const sim_cpu_atm_list *l) {
    return (uint64_t)l->cap * l->stride * sizeof *l->nbr +
           (uint64_t)l->n * (sizeof *l->count + sizeof *l->ref);
}

int sim_cpu_atm_list_stale(const sim_cpu_atm_list *l, const sim_vec4d *pos, double cutoff,
                           double skin) {
    if (!l->built || l->cutoff != cutoff || l->skin != skin) {
        return 1;
    }
    const double h = 0.5 * skin, h2 = h * h;
    for (uint32_t i = 0; i < l->n; ++i) {
        if (sim_nlist_moved_pd(pos[i], l->ref[i], h2, l->per)) {
            return 1;
        }
    }
    return 0;
}

/* The grid: the box of the finite centres (a periodic axis: its period) cut into dims[a] cells
 * of width >= edge per axis. */
typedef struct {
    double lo[3], edge;
    double width[3]; /* a cell's width per axis (>= edge) */
    uint32_t dims[3];
    int wrap[3]; /* a periodic axis: cells wrap round */
} grid;

static int finite3(sim_vec4d p) {
    return isfinite(p.x) && isfinite(p.y) && isfinite(p.z);
}

static grid make_grid(const sim_vec4d *pos, uint32_t n, double reach, const sim_period_d *per) {
    grid g;
    double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    g.lo[0] = g.lo[1] = g.lo[2] = INFINITY;
    for (uint32_t i = 0; i < n; ++i) {
        if (finite3(pos[i])) {
            const double x[3] = {pos[i].x, pos[i].y, pos[i].z};
            for (int a = 0; a < 3; ++a) {
                g.lo[a] = fmin(g.lo[a], x[a]);
                hi[a] = fmax(hi[a], x[a]);
            }
        }
    }
    /* The edge a shade above the reach, so that the reach's own rounding never spans two cells. */
    g.edge = reach * (1.0 + 0x1p-20) + 1e-300;
    for (;;) {
        double cells = 1.0;
        for (int a = 0; a < 3; ++a) {
            const double len = per != NULL ? per->len[a] : 0.0;
            g.wrap[a] = len > 0.0;
            if (g.wrap[a]) { /* the whole period (bodies are wrapped into it), whole cells */
                const double d = floor(len / g.edge);
                g.dims[a] = d < 1.0 ? 1u : d < 1024.0 ? (uint32_t)d : 1024u;
                g.lo[a] = -0.5 * len;
                g.width[a] = len / g.dims[a];
            } else {
                const double span = hi[a] >= g.lo[a] ? hi[a] - g.lo[a] : 0.0;
                const double d = floor(span / g.edge) + 1.0;
                g.dims[a] = d < 1024.0 ? (uint32_t)d : 1024u;
                g.width[a] = g.edge;
            }
            cells *= g.dims[a];
        }
        if (cells <= (double)CELLS_PER_BODY * n + 64.0) {
            break;
        }
        g.edge *= 1.26;
    }
    return g;
}

static uint32_t cell_axis(const grid *g, double x, int a) {
    double c = floor((x - g->lo[a]) / g->width[a]);
    if (g->wrap[a]) { /* a body just past a face (rounding, or not yet wrapped) wraps round */
        c -= g->dims[a] * floor(c / g->dims[a]);
    }
    return c <= 0.0 ? 0u : c >= g->dims[a] - 1.0 ? g->dims[a] - 1u : (uint32_t)c;
}

static sim_status grow(sim_cpu_atm_list *l, uint32_t cap, sim_error *err) {
    uint32_t *nbr = malloc((size_t)cap * l->stride * sizeof *nbr);
    if (nbr == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate ATM lists of %u entries for %u bodies", cap, l->n);
    }
    free(l->nbr);
    l->nbr = nbr;
    l->cap = cap;
    return SIM_OK;
}

/* The cells along axis a next to cell c: [*first, first + *count) (mod dims on a wrapping axis:
 * all of them when fewer than 3, each once). */
static void neighbour_cells(const grid *g, int a, uint32_t c, uint32_t *first, uint32_t *count) {
    const uint32_t d = g->dims[a];
    if (g->wrap[a]) {
        *first = d < 3u ? 0u : c + d - 1u;
        *count = d < 3u ? d : 3u;
    } else {
        *first = c ? c - 1u : 0u;
        *count = (c + 1u < d ? c + 2u : d) - *first;
    }
}

/* Whether b belongs in a's list: the minimum image under per (NULL: none) within the reach. */
static int near_per(sim_vec4d a, sim_vec4d b, double reach2, const sim_period_d *per) {
    double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    if (per != NULL) {
        sim_min_image_in_d(&dx, &dy, &dz, per);
    }
    return dx * dx + dy * dy + dz * dz < reach2;
}

/* Visits every j < i within reach of body i in the 27 cells around its own; store: write the
 * entries (the lists are large enough), else only count. Returns the neighbours found. */
static uint32_t scan_body(sim_cpu_atm_list *l, const grid *g, const sim_vec4d *pos, uint32_t i,
                          double reach2, int store) {
    const uint32_t c = l->body_cell[i];
    if (c == UINT32_MAX) {
        return 0;
    }
    const uint32_t cx = c % g->dims[0], cy = c / g->dims[0] % g->dims[1],
                   cz = c / g->dims[0] / g->dims[1];
    uint32_t x0, nx, y0, ny, z0, nz;
    neighbour_cells(g, 0, cx, &x0, &nx);
    neighbour_cells(g, 1, cy, &y0, &ny);
    neighbour_cells(g, 2, cz, &z0, &nz);
    uint32_t found = 0;
    for (uint32_t dz = 0; dz < nz; ++dz) {
        const uint32_t z = (z0 + dz) % g->dims[2];
        for (uint32_t dy = 0; dy < ny; ++dy) {
            const uint32_t y = (y0 + dy) % g->dims[1];
            for (uint32_t dx = 0; dx < nx; ++dx) {
                const uint32_t x = (x0 + dx) % g->dims[0];
                const uint32_t cell = (z * g->dims[1] + y) * g->dims[0] + x;
                for (uint32_t e = l->cell_start[cell]; e < l->cell_start[cell + 1u]; ++e) {
                    const uint32_t j = l->cell_body[e];
                    if (j < i && near_per(pos[i], pos[j], reach2, l->per)) {
                        if (store) {
                            l->nbr[(size_t)found * l->stride + i] = j;
                        }
                        ++found;
                    }
                }
            }
        }
    }
    return found;
}

sim_status sim_cpu_atm_list_build(sim_cpu_atm_list *l, const sim_vec4d *pos, double cutoff,
                                  double skin, sim_error *err) {
    SIM_ASSERT(cutoff > 0.0 && skin >= 0.0);
    const uint32_t n = l->n;
    const double reach2 = sim_atm_list_reach2_d(cutoff, skin);
    const grid g = make_grid(pos, n, sqrt(reach2), l->per);
    const size_t cells = (size_t)g.dims[0] * g.dims[1] * g.dims[2];
    l->built = 0;
    if (cells + 1u > l->cells_cap) {
        uint32_t *v = realloc(l->cell_start, (cells + 1u) * sizeof *v);
        if (v == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %zu cells", cells);
        }
        l->cell_start = v;
        l->cells_cap = cells + 1u;
    }
    /* Bodies by cell: count, prefix sum, scatter (non-finite centres in no cell: never near). */
    memset(l->cell_start, 0, (cells + 1u) * sizeof *l->cell_start);
    for (uint32_t i = 0; i < n; ++i) {
        l->body_cell[i] = UINT32_MAX;
        if (finite3(pos[i])) {
            l->body_cell[i] =
                (cell_axis(&g, pos[i].z, 2) * g.dims[1] + cell_axis(&g, pos[i].y, 1)) * g.dims[0] +
                cell_axis(&g, pos[i].x, 0);
            l->cell_start[l->body_cell[i] + 1u]++;
        }
    }
    for (size_t c = 0; c < cells; ++c) {
        l->cell_start[c + 1u] += l->cell_start[c];
    }
    for (uint32_t i = 0; i < n; ++i) { /* cell_start[c] runs ahead while filling, then restored */
        if (l->body_cell[i] != UINT32_MAX) {
            l->cell_body[l->cell_start[l->body_cell[i]]++] = i;
        }
    }
    for (size_t c = cells; c > 0; --c) {
        l->cell_start[c] = l->cell_start[c - 1u];
    }
    l->cell_start[0] = 0;
    /* Count, grow to the most, then store. */
    uint32_t most = 0;
    for (uint32_t i = 0; i < n; ++i) {
        l->count[i] = scan_body(l, &g, pos, i, reach2, 0);
        most = l->count[i] > most ? l->count[i] : most;
    }
    if (most > l->cap || l->nbr == NULL) {
        SIM_TRY(grow(l, most > 0 ? most : 1u, err));
    }
    uint64_t entries = 0;
    for (uint32_t i = 0; i < n; ++i) {
        entries += scan_body(l, &g, pos, i, reach2, 1);
        l->ref[i] = pos[i];
    }
    l->most = most;
    l->entries = entries;
    l->cutoff = cutoff;
    l->skin = skin;
    l->built = 1;
    return SIM_OK;
}

static void add3(sim_vec3d *a, sim_vec3d f) {
    a->x += f.x;
    a->y += f.y;
    a->z += f.z;
}

/* sim_atm_list_inside_d through sim_atm_forces_d's images (per: a and b minimum images, c
 * closes the triangle). */
static int triple_inside(sim_vec4d p1, sim_vec4d p2, sim_vec4d p3, double cut2,
                         const sim_period_d *per) {
    if (per == NULL) {
        return sim_atm_list_inside_d(p1, p2, p3, cut2);
    }
    double ax = p2.x - p1.x, ay = p2.y - p1.y, az = p2.z - p1.z;
    double bx = p3.x - p2.x, by = p3.y - p2.y, bz = p3.z - p2.z;
    sim_min_image_in_d(&ax, &ay, &az, per);
    sim_min_image_in_d(&bx, &by, &bz, per);
    const double cx = -(ax + bx), cy = -(ay + by), cz = -(az + bz);
    return ax * ax + ay * ay + az * az <= cut2 && bx * bx + by * by + bz * bz <= cut2 &&
           cx * cx + cy * cy + cz * cz <= cut2;
}

uint64_t sim_cpu_atm_list_sweep(const sim_cpu_atm_list *l, uint32_t begin, uint32_t end,
                                const sim_vec4d *pos, const sim_physics *ph, sim_vec3d *f,
                                double *energy) {
    SIM_ASSERT(l->built && ph->atm.atm_cutoff == l->cutoff && end <= l->n);
    const double cut2 = ph->atm.atm_cutoff * ph->atm.atm_cutoff;
    uint64_t inside = 0;
    for (uint32_t i = begin; i < end; ++i) {
        const uint32_t m = l->count[i];
        for (uint32_t a = 0; a < m; ++a) {
            const uint32_t ja = l->nbr[(size_t)a * l->stride + i];
            for (uint32_t b = a + 1u; b < m; ++b) {
                const uint32_t kb = l->nbr[(size_t)b * l->stride + i];
                const uint32_t j = ja > kb ? ja : kb, k = ja > kb ? kb : ja;
                if (!triple_inside(pos[i], pos[j], pos[k], cut2, l->per)) {
                    continue; /* sim_atm_forces_d would give exactly zero */
                }
                sim_vec3d fi, fj, fk;
                sim_atm_forces_d(pos[i], pos[j], pos[k], ph, &fi, &fj, &fk, energy);
                add3(&f[i], fi);
                add3(&f[j], fj);
                add3(&f[k], fk);
                ++inside;
            }
        }
    }
    return inside;
}
