/* SPDX-License-Identifier: MIT
 * nbsim — the contact network of a trajectory frame: which bodies touch, and with what forces,
 * found on the host from the frame alone (the .pvd draws it: traj_vtk.c).
 *
 * The pairs: the bodies are binned by a counting sort into a grid of cubic cells at least one
 * contact (2 r_max) wide, so a touching pair lies in the same or in adjacent cells; each body
 * looks through the cells around its own (each once: an axis of one or two cells has fewer
 * neighbours than three) for partners of smaller index, so every pair is found once. The grid
 * has at most about 2 N cells (wider cells in a sparse box), so time and memory are O(N) for
 * bodies spread through the box. Periodic axes: the cells tile the period exactly and wrap
 * round, and separations are minimum images (sim_min_image_d), as in a step. Walled axes: a
 * centre beyond the box (a body pressed into a wall) is binned in the last cell. The touching
 * test is sim_friction_contact_d's: |d| < r_i + r_j and an overlap above 0.
 *
 * The forces: the CPU reference's law in double (physics.h) at the frame's state. The normal
 * force is sim_contact_force_d's; with friction the tangential one is sim_friction_contact_d's
 * total less it, at dt = 0 (the force of the pair's spring as the step left it, neither rotated
 * nor stretched) on a copy of the spring from the frame's histories. The elastic parts are then
 * the step's own. The dashpots' are not quite: velocity Verlet evaluates a step's forces with
 * the half-kicked velocities, a frame holds the velocities at the step's end, so a damped
 * contact's force differs from the step's by the damping of half a step's change of velocity
 * (not at all with restitution 1, which has no dashpot). */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "physics/physics.h"

/* The grid is at most this many cells a side (a billion cells): wider cells beyond. */
#define CONTACT_GRID_MAX_DIMS 1024

typedef struct {
    uint32_t j;
    sim_contact_history_d h;
} hist_entry;

/* The frame's pair histories by owner i (rows of a compressed table: O(N + contacts)). */
typedef struct {
    uint64_t *row; /* n + 1 */
    hist_entry *e;
} hist_table;

typedef struct {
    int dims;
    double lo, inv_h; /* the box's lower face [m], cells per metre */
    int periodic;
    uint32_t *start; /* dims^3 + 1: the bodies of cell c are body[start[c] .. start[c + 1]) */
    uint32_t *body;
    uint32_t *cell; /* each body's cell */
} cell_grid;

void traj_contacts_free(traj_contacts *c) {
    free(c->v);
    memset(c, 0, sizeof *c);
}

static sim_status oom(const char *path, const char *what, sim_error *err) {
    return sim_fail(err, SIM_OUT_OF_MEMORY, "trajectory '%s': no memory for the contacts' %s", path,
                    what);
}

/* The history of pair (i, j), j < i: zero when the frame has none (a contact begun this step). */
static sim_contact_history_d hist_find(const hist_table *t, uint32_t i, uint32_t j) {
    sim_contact_history_d h;
    memset(&h, 0, sizeof h);
    for (uint64_t k = t->row != NULL ? t->row[i] : 0; t->row != NULL && k < t->row[i + 1]; ++k) {
        if (t->e[k].j == j) {
            return t->e[k].h;
        }
    }
    return h;
}

static sim_status hist_build(hist_table *t, const sim_traj_frame *f, const char *path,
                             sim_error *err) {
    t->row = calloc((size_t)f->n + 1, sizeof *t->row);
    if (t->row == NULL) {
        return oom(path, "histories", err);
    }
    for (uint64_t k = 0; k < f->contact_count; ++k) {
        const sim_state_contact *c = &f->contacts[k];
        if (c->i < f->n && c->j < c->i) { /* a wall's code is above every body's index */
            t->row[c->i + 1]++;
        }
    }
    for (uint32_t i = 0; i < f->n; ++i) {
        t->row[i + 1] += t->row[i];
    }
    t->e = malloc((t->row[f->n] ? t->row[f->n] : 1) * sizeof *t->e);
    uint64_t *fill = malloc(((size_t)f->n + 1) * sizeof *fill);
    if (t->e == NULL || fill == NULL) {
        free(fill);
        return oom(path, "histories", err);
    }
    memcpy(fill, t->row, ((size_t)f->n + 1) * sizeof *fill);
    for (uint64_t k = 0; k < f->contact_count; ++k) {
        const sim_state_contact *c = &f->contacts[k];
        if (c->i < f->n && c->j < c->i) {
            hist_entry *e = &t->e[fill[c->i]++];
            e->j = c->j;
            e->h.xi = c->xi;
            e->h.roll = c->roll;
        }
    }
    free(fill);
    return SIM_OK;
}

/* Cell of coordinate x along an axis: wrapped round a periodic one, clamped to a walled one. */
static int cell_along(const cell_grid *g, double x, int periodic) {
    const double q = floor((x - g->lo) * g->inv_h);
    if (!isfinite(q)) {
        return 0;
    }
    if (periodic) {
        const double m = fmod(q, (double)g->dims);
        return (int)(m < 0.0 ? m + g->dims : m);
    }
    return q < 0.0 ? 0 : q >= (double)g->dims ? g->dims - 1 : (int)q;
}

/* The distinct cells next to cell q along an axis (itself included): up to 3. */
static int cells_around(const cell_grid *g, int q, int periodic, int out[3]) {
    int count = 0;
    for (int o = -1; o <= 1; ++o) {
        int k = q + o;
        if (periodic) {
            k = (k + g->dims) % g->dims;
        } else if (k < 0 || k >= g->dims) {
            continue;
        }
        int seen = 0;
        for (int m = 0; m < count; ++m) {
            seen |= out[m] == k;
        }
        if (!seen) {
            out[count++] = k;
        }
    }
    return count;
}

static sim_status grid_build(cell_grid *g, const sim_vec4d *pos, uint32_t n, double box_half,
                             int periodic, const char *path, sim_error *err) {
    double r_max = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        r_max = pos[i].w > r_max && isfinite(pos[i].w) ? pos[i].w : r_max;
    }
    const double side = 2.0 * box_half;
    /* At least a contact wide, with a margin against rounding at a cell's face. */
    const double h_min = 2.0 * r_max * (1.0 + 1e-9);
    double fit = h_min > 0.0 ? floor(side / h_min) : 1.0;
    const double cap = floor(cbrt(2.0 * (double)n)) + 1.0;
    fit = fit < cap ? fit : cap;
    fit = fit < CONTACT_GRID_MAX_DIMS ? fit : CONTACT_GRID_MAX_DIMS;
    g->dims = fit >= 1.0 ? (int)fit : 1;
    g->lo = -box_half;
    g->inv_h = side > 0.0 ? (double)g->dims / side : 0.0;
    g->periodic = periodic;
    const size_t cells = (size_t)g->dims * (size_t)g->dims * (size_t)g->dims;
    g->start = calloc(cells + 1, sizeof *g->start);
    g->body = malloc((n ? n : 1) * sizeof *g->body);
    g->cell = malloc((n ? n : 1) * sizeof *g->cell);
    if (g->start == NULL || g->body == NULL || g->cell == NULL) {
        return oom(path, "grid", err);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const int cx = cell_along(g, pos[i].x, periodic & 1);
        const int cy = cell_along(g, pos[i].y, periodic & 2);
        const int cz = cell_along(g, pos[i].z, periodic & 4);
        g->cell[i] =
            (uint32_t)(((size_t)cz * (size_t)g->dims + (size_t)cy) * (size_t)g->dims + (size_t)cx);
        g->start[g->cell[i] + 1]++;
    }
    for (size_t c = 0; c < cells; ++c) {
        g->start[c + 1] += g->start[c];
    }
    for (uint32_t i = 0; i < n; ++i) { /* in index order: each cell's bodies ascending */
        g->body[g->start[g->cell[i]]++] = i;
    }
    for (size_t c = cells; c > 0; --c) { /* the fill moved each start to the next cell's */
        g->start[c] = g->start[c - 1];
    }
    g->start[0] = 0;
    return SIM_OK;
}

static void grid_free(cell_grid *g) {
    free(g->start);
    free(g->body);
    free(g->cell);
}

static sim_status push(traj_contacts *c, const traj_contact *k, const char *path, sim_error *err) {
    if (c->count == c->cap) {
        const uint64_t cap = c->cap ? 2 * c->cap : 1024;
        traj_contact *v = realloc(c->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            return oom(path, "list", err);
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->count++] = *k;
    c->wrapped += k->wrapped ? 1u : 0u;
    return SIM_OK;
}

static sim_vec4d body_vel(const sim_traj_frame *f, uint32_t i, sim_vec3d *spin) {
    traj_body b;
    traj_frame_body(f, i, &b);
    spin->x = b.spin[0];
    spin->y = b.spin[1];
    spin->z = b.spin[2];
    return (sim_vec4d){b.vel[0], b.vel[1], b.vel[2], b.mass};
}

/* Pair (i, j), j < i, when it touches: its geometry and forces into *k; 0 when it does not. */
static int contact_of(const sim_traj_frame *f, const sim_vec4d *pos, uint32_t i, uint32_t j,
                      const sim_physics *ph, int law, int friction, const hist_table *hist,
                      traj_contact *k) {
    const sim_vec4d pi = pos[i], pj = pos[j];
    const double rx = pi.x - pj.x, ry = pi.y - pj.y, rz = pi.z - pj.z;
    double dx = rx, dy = ry, dz = rz;
    sim_min_image_d(&dx, &dy, &dz, ph);
    const double d2 = dx * dx + dy * dy + dz * dz;
    const double reach = pi.w + pj.w;
    if (d2 >= reach * reach || !(d2 > 0.0)) {
        return 0;
    }
    const double overlap = reach - d2 / sqrt(d2);
    if (!(overlap > 0.0)) {
        return 0;
    }
    memset(k, 0, sizeof *k);
    k->i = i;
    k->j = j;
    k->d = (sim_vec3d){dx, dy, dz};
    k->overlap = overlap;
    k->wrapped = dx != rx || dy != ry || dz != rz;
    if (!law) {
        return 1;
    }
    sim_vec3d wi, wj;
    const sim_vec4d vi = body_vel(f, i, &wi), vj = body_vel(f, j, &wj);
    k->fn = sim_contact_force_d(pi, vi, pj, vj, ph, NULL);
    if (friction) {
        sim_contact_history_d h = hist_find(hist, i, j);
        sim_vec3d total, ti, tj;
        sim_friction_contact_d(pi, vi, wi, pj, vj, wj, &h, ph, 0.0, &total, &ti, &tj, NULL);
        k->ft = (sim_vec3d){total.x - k->fn.x, total.y - k->fn.y, total.z - k->fn.z};
    }
    return 1;
}

sim_status traj_contacts_find(traj_contacts *c, const sim_traj_frame *f, const sim_params *params,
                              const char *path, sim_error *err) {
    c->count = 0;
    c->wrapped = 0;
    sim_params box = params != NULL ? *params : sim_params_default();
    box.box_half = f->box_half;
    box.periodic = f->periodic;
    const sim_physics ph = sim_physics_from_params(&box);
    const int law = params != NULL;
    const int friction = law && sim_params_have_friction(params);
    const uint32_t n = f->n;
    sim_vec4d *pos = malloc((n ? n : 1) * sizeof *pos);
    if (pos == NULL) {
        return oom(path, "positions", err);
    }
    for (uint32_t i = 0; i < n; ++i) {
        traj_body b;
        traj_frame_body(f, i, &b);
        pos[i] = (sim_vec4d){b.pos[0], b.pos[1], b.pos[2], b.radius};
    }
    hist_table hist = {NULL, NULL};
    cell_grid g;
    memset(&g, 0, sizeof g);
    sim_status st = friction ? hist_build(&hist, f, path, err) : SIM_OK;
    if (st == SIM_OK) {
        st = grid_build(&g, pos, n, f->box_half, f->periodic, path, err);
    }
    const size_t dims = (size_t)g.dims;
    for (uint32_t i = 0; st == SIM_OK && i < n; ++i) {
        const size_t cell = g.cell[i];
        int ax[3], ay[3], az[3];
        const int nx = cells_around(&g, (int)(cell % dims), f->periodic & 1, ax);
        const int ny = cells_around(&g, (int)(cell / dims % dims), f->periodic & 2, ay);
        const int nz = cells_around(&g, (int)(cell / dims / dims), f->periodic & 4, az);
        for (int a = 0; a < nz && st == SIM_OK; ++a) {
            for (int b = 0; b < ny && st == SIM_OK; ++b) {
                for (int e = 0; e < nx && st == SIM_OK; ++e) {
                    const size_t q = ((size_t)az[a] * dims + (size_t)ay[b]) * dims + (size_t)ax[e];
                    for (uint32_t s = g.start[q]; s < g.start[q + 1] && st == SIM_OK; ++s) {
                        const uint32_t j = g.body[s];
                        traj_contact k;
                        if (j < i && contact_of(f, pos, i, j, &ph, law, friction, &hist, &k)) {
                            st = push(c, &k, path, err);
                        }
                    }
                }
            }
        }
    }
    grid_free(&g);
    free(hist.row);
    free(hist.e);
    free(pos);
    return st;
}
