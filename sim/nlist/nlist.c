/* SPDX-License-Identifier: MIT
 * nbsim — the skin of the neighbour lists (nlist.h): the user's, or chosen from the bodies' speeds
 * and the step; the ATM lists' neighbour estimate; the shape of the cell grid (cell_grid.h). */
#include "nlist/nlist.h"
#include "nlist/cell_grid.h"

#include <math.h>
#include <string.h>

double sim_nlist_auto_skin(const sim_params *p, const sim_state *s, double dt) {
    double vmax = 0.0, rmin = INFINITY;
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d v = s->vel[i];
        const double speed = sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        vmax = isfinite(speed) && speed > vmax ? speed : vmax;
        rmin = s->pos[i].w > 0.0 && s->pos[i].w < rmin ? s->pos[i].w : rmin;
    }
    if (!isfinite(rmin) || !(dt > 0.0)) {
        return 0.0;
    }
    const sim_vec3d g = p->gravity;
    const double k = SIM_NLIST_AUTO_STEPS;
    const double v = vmax + sqrt(g.x * g.x + g.y * g.y + g.z * g.z) * k * dt;
    const double skin = 2.0 * k * v * dt, d = 2.0 * rmin;
    const double lo = SIM_NLIST_SKIN_MIN * d, hi = SIM_NLIST_SKIN_MAX * d;
    if (hi < 2.0 * SIM_NLIST_FAST_STEPS * v * dt) { /* rebuilt at nearly every step anyway */
        return lo;
    }
    return fmin(fmax(skin, lo), hi);
}

int sim_nlist_cadence_next(sim_nlist_cadence *c, uint32_t rebuilds, uint32_t steps) {
    c->rebuilds += rebuilds < steps ? rebuilds : steps;
    c->steps += steps;
    if (c->steps < SIM_NLIST_CADENCE_STEPS) {
        return c->direct;
    }
    const double rate = (double)c->rebuilds / (double)c->steps;
    c->direct = c->direct ? rate >= SIM_NLIST_LISTS_BELOW : rate >= SIM_NLIST_DIRECT_AT;
    c->rebuilds = c->steps = 0u;
    return c->direct;
}

double sim_nlist_skin(const sim_params *p, const sim_state *s, double dt) {
    return p->skin.set ? p->skin.value : sim_nlist_auto_skin(p, s, dt);
}

double sim_atm_list_neighbours(const sim_params *p, const sim_state *s, double skin) {
    if (s->n < 2 || !(p->atm_cutoff > 0.0)) {
        return 0.0;
    }
    double lo[3] = {s->pos[0].x, s->pos[0].y, s->pos[0].z}, hi[3] = {lo[0], lo[1], lo[2]};
    for (uint32_t i = 1; i < s->n; ++i) {
        const double x[3] = {s->pos[i].x, s->pos[i].y, s->pos[i].z};
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], x[k]);
            hi[k] = fmax(hi[k], x[k]);
        }
    }
    const double reach = p->atm_cutoff + skin;
    double volume = 1.0;
    for (int k = 0; k < 3; ++k) { /* a flat or thin cloud: its thickness counts as the reach */
        volume *= fmin(fmax(hi[k] - lo[k], reach), 2.0 * p->box_half);
    }
    const double ball = 4.0 / 3.0 * 3.14159265358979323846 * reach * reach * reach;
    return fmin((double)(s->n - 1) * ball / volume, (double)(s->n - 1));
}

int sim_cell_grid_shape(const sim_params *p, double rmax, double skin, uint32_t n,
                        sim_cell_grid *g) {
    memset(g, 0, sizeof *g);
    const double side_len = 2.0 * p->box_half;
    if (n == 0 || !(rmax >= 0.0) || !(skin >= 0.0) || !(side_len > 0.0)) {
        return 0;
    }
    double reach = 2.0 * rmax + skin;
    if (p->periodic) { /* the build's minimum-image slack (nlist.h) */
        reach += SIM_NLIST_IMAGE_SLACK_F * side_len;
    }
    const double side = reach * SIM_CELL_GRID_MARGIN;
    double dims[3];
    for (int k = 0; k < 3; ++k) {
        dims[k] = fmax(floor(side_len / side), 1.0);
    }
    const double most = fmin(SIM_CELL_GRID_CELLS_PER_BODY * (double)n, (double)(UINT32_MAX / 2u));
    while (dims[0] * dims[1] * dims[2] > fmax(most, 1.0)) { /* coarser: still >= the reach */
        const double f = cbrt(dims[0] * dims[1] * dims[2] / most);
        for (int k = 0; k < 3; ++k) {
            dims[k] = fmax(floor(dims[k] / fmax(f, 1.0 + 0x1p-20)), 1.0);
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (((p->periodic >> k) & 1) && dims[k] < 3.0) {
            memset(g, 0, sizeof *g);
            return 0;
        }
        g->dims[k] = (uint32_t)dims[k];
        g->lo[k] = (float)-p->box_half;
        g->inv[k] = (float)(dims[k] / side_len);
    }
    g->wrap = (uint32_t)p->periodic & 7u;
    g->cells = g->dims[0] * g->dims[1] * g->dims[2];
    g->rmax = (float)rmax;
    return 1;
}

int sim_cell_grid_same(const sim_cell_grid *a, const sim_cell_grid *b) {
    return memcmp(a, b, sizeof *a) == 0;
}
