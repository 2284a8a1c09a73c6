/* SPDX-License-Identifier: MIT
 * nbsim — inserted bodies placed (insert.h): their radii and places drawn from the seed and their
 * numbers, tested against every body within reach through a cell grid over the box. */
#include "session/insert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/scene.h"
#include "physics/physics.h"

/* ---- the draws: counter-based, so a body's radius and places depend on the seed and its number
 * alone, not on how many draws came before (a body that did not fit, a batch cut by a stop) ---- */

static uint64_t mix64(uint64_t z) { /* splitmix64's finaliser */
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform number in [0, 1) for draw `slot` of body `body`. */
static double draw(uint64_t seed, uint64_t body, uint64_t slot) {
    const uint64_t h = mix64(mix64(mix64(seed) + body) + slot);
    return (double)(h >> 11) * 0x1p-53;
}

/* The slots: a radius's draws from RADIUS_SLOT (two per try of the cut log-normal), a place's
 * three per attempt from 0. */
#define TWO_PI 6.283185307179586476925286766559
#define RADIUS_SLOT (1ull << 32)
#define LOGNORMAL_CUT 4.0 /* sigmas; sim_insert_radius_range says the same */
#define LOGNORMAL_TRIES 64

static double body_radius(const sim_insert_def *d, uint64_t body) {
    if (d->radii == SIM_INSERT_FIXED) {
        return d->radius_a;
    }
    if (d->radii == SIM_INSERT_UNIFORM) {
        return d->radius_a + (d->radius_b - d->radius_a) * draw(d->seed, body, RADIUS_SLOT);
    }
    /* Box-Muller, drawn again beyond the cut (a chance of 6e-5 each) */
    double z = 0.0;
    for (uint64_t t = 0; t < LOGNORMAL_TRIES; ++t) {
        const double u1 = draw(d->seed, body, RADIUS_SLOT + 2 * t);
        const double u2 = draw(d->seed, body, RADIUS_SLOT + 2 * t + 1);
        z = sqrt(-2.0 * log(1.0 - u1)) * cos(TWO_PI * u2);
        if (fabs(z) <= LOGNORMAL_CUT) {
            break;
        }
        z = 0.0;
    }
    return exp(d->radius_a + d->radius_b * z);
}

/* Attempt a's centre for a body of radius r: the whole sphere inside the region. */
static void body_place(const sim_insert_def *d, uint64_t body, uint64_t a, double r, double c[3]) {
    double u[3];
    for (int k = 0; k < 3; ++k) {
        u[k] = draw(d->seed, body, 3 * a + (uint64_t)k);
    }
    if (d->shape == SIM_INSERT_BOX) {
        for (int k = 0; k < 3; ++k) {
            c[k] = d->lo[k] + r + (d->hi[k] - d->lo[k] - 2.0 * r) * u[k];
        }
        return;
    }
    const int ax = d->axis, b = ax == 0 ? 1 : 0, e = ax == 2 ? 1 : 2;
    const double rho = (d->cyl_radius - r) * sqrt(u[1]), phi = TWO_PI * u[2];
    c[ax] = d->lo[ax] + r + (d->hi[ax] - d->lo[ax] - 2.0 * r) * u[0];
    c[b] = d->centre[b] + rho * cos(phi);
    c[e] = d->centre[e] + rho * sin(phi);
}

/* ---- when ---- */

double sim_insert_interval(const sim_insert_def *d, const sim_params *p) {
    const double frame = p->dt * (double)p->steps_per_frame;
    const sim_vec3d g = p->gravity, v = d->velocity;
    const double g_abs = sqrt(g.x * g.x + g.y * g.y + g.z * g.z);
    const double v_abs = sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    const double span[3] = {d->hi[0] - d->lo[0], d->hi[1] - d->lo[1], d->hi[2] - d->lo[2]};
    double t = 0.0;
    if (g_abs > 0.0) { /* h = v t + g t^2 / 2 along gravity, from the region's top to its bottom */
        const double h = (fabs(g.x) * span[0] + fabs(g.y) * span[1] + fabs(g.z) * span[2]) / g_abs;
        const double v_down = (v.x * g.x + v.y * g.y + v.z * g.z) / g_abs;
        t = (sqrt(v_down * v_down + 2.0 * g_abs * h) - v_down) / g_abs;
    } else if (v_abs > 0.0) {
        const double h = (fabs(v.x) * span[0] + fabs(v.y) * span[1] + fabs(v.z) * span[2]) / v_abs;
        t = h / v_abs;
    }
    const double frames = frame > 0.0 ? ceil(t / frame - 1e-9) : 1.0;
    return (frames < 1.0 ? 1.0 : frames) * frame;
}

int sim_insert_done(const sim_insert_def *d, const sim_insert_progress *pr) {
    const double t_next = (double)pr->batches * pr->interval;
    return (d->stop_count > 0 && pr->inserted >= d->stop_count) ||
           (d->stop_time > 0.0 && t_next >= d->stop_time);
}

int sim_insert_due(const sim_insert_def *d, const sim_insert_progress *pr, const sim_params *p) {
    return d->shape != SIM_INSERT_OFF && !sim_insert_done(d, pr) &&
           pr->clock + 0.5 * p->dt >= (double)pr->batches * pr->interval;
}

void sim_insert_lightest(const sim_insert_def *d, sim_vec4d pos[2], sim_vec4d vel[2]) {
    double r_min = 0.0, r_max = 0.0;
    sim_insert_radius_range(d, &r_min, &r_max);
    for (int k = 0; k < 2; ++k) {
        pos[k] = (sim_vec4d){0.0, 0.0, 0.0, r_min};
        vel[k] = (sim_vec4d){d->velocity.x, d->velocity.y, d->velocity.z,
                             sim_sphere_mass(r_min, d->density)};
    }
}

/* ---- where: a grid of cells at least one reach wide over the box ---- */

#define GRID_CELLS_MAX (1u << 22) /* 16 MiB of heads; past it the cells widen */

typedef struct {
    int n[3];            /* cells per axis */
    double width[3];     /* [m] */
    double lo;           /* the box's lower face, -box_half */
    int periodic;        /* axes as bits */
    int32_t *head;       /* first body of each cell, -1: none */
    int32_t *next;       /* the next body of its cell */
    sim_period_d period; /* minimum images */
} grid;

static int cell_of(const grid *g, int a, double x) {
    double f = floor((x - g->lo) / g->width[a]);
    if (g->periodic & (1 << a)) {
        f = fmod(f, (double)g->n[a]);
        f = f < 0.0 ? f + g->n[a] : f;
    }
    return f < 0.0 ? 0 : f >= g->n[a] ? g->n[a] - 1 : (int)f;
}

static size_t cell_index(const grid *g, const int c[3]) {
    return ((size_t)c[2] * (size_t)g->n[1] + (size_t)c[1]) * (size_t)g->n[0] + (size_t)c[0];
}

static void grid_add(grid *g, const sim_vec4d *pos, int32_t i) {
    const int c[3] = {cell_of(g, 0, pos[i].x), cell_of(g, 1, pos[i].y), cell_of(g, 2, pos[i].z)};
    const size_t k = cell_index(g, c);
    g->next[i] = g->head[k];
    g->head[k] = i;
}

static sim_status grid_make(grid *g, const sim_params *p, double reach, size_t bodies,
                            sim_error *err) {
    memset(g, 0, sizeof *g);
    const double side = 2.0 * p->box_half;
    double w = reach > 0.0 ? reach : side;
    for (;;) {
        uint64_t cells = 1;
        for (int a = 0; a < 3; ++a) {
            const double n = floor(side / w);
            g->n[a] = n < 1.0 ? 1 : n > 1024.0 ? 1024 : (int)n;
            cells *= (uint64_t)g->n[a];
        }
        if (cells <= GRID_CELLS_MAX) {
            break;
        }
        w *= 1.5;
    }
    for (int a = 0; a < 3; ++a) {
        g->width[a] = side / g->n[a];
    }
    g->lo = -p->box_half;
    g->periodic = p->periodic;
    g->period = sim_period_of(p);
    const size_t cells = (size_t)g->n[0] * (size_t)g->n[1] * (size_t)g->n[2];
    g->head = malloc(cells * sizeof *g->head);
    g->next = malloc((bodies ? bodies : 1) * sizeof *g->next);
    if (g->head == NULL || g->next == NULL) {
        free(g->head);
        free(g->next);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for the insertion's grid of %zu cells",
                        cells);
    }
    memset(g->head, 0xff, cells * sizeof *g->head);
    return SIM_OK;
}

/* The cells around c on axis a: c-1..c+1 clamped at walls, wrapped on a periodic axis, each
 * once (an axis of one or two cells). Their count. */
static int around(const grid *g, int a, int c, int out[3]) {
    int count = 0;
    for (int d = -1; d <= 1; ++d) {
        int k = c + d;
        if (g->periodic & (1 << a)) {
            k = (k + g->n[a]) % g->n[a];
        } else if (k < 0 || k >= g->n[a]) {
            continue;
        }
        int seen = 0;
        for (int j = 0; j < count; ++j) {
            seen |= out[j] == k;
        }
        if (!seen) {
            out[count++] = k;
        }
    }
    return count;
}

/* Whether a sphere of radius r at c overlaps a body of the grid (their minimum image closer than
 * the sum of the radii; touching is free). */
static int overlaps(const grid *g, const sim_vec4d *pos, const double c[3], double r) {
    int cx[3], cy[3], cz[3];
    const int nx = around(g, 0, cell_of(g, 0, c[0]), cx);
    const int ny = around(g, 1, cell_of(g, 1, c[1]), cy);
    const int nz = around(g, 2, cell_of(g, 2, c[2]), cz);
    for (int z = 0; z < nz; ++z) {
        for (int y = 0; y < ny; ++y) {
            for (int x = 0; x < nx; ++x) {
                const int cell[3] = {cx[x], cy[y], cz[z]};
                for (int32_t j = g->head[cell_index(g, cell)]; j >= 0; j = g->next[j]) {
                    double dx = c[0] - pos[j].x, dy = c[1] - pos[j].y, dz = c[2] - pos[j].z;
                    sim_min_image_in_d(&dx, &dy, &dz, &g->period);
                    const double rs = r + pos[j].w;
                    if (dx * dx + dy * dy + dz * dz < rs * rs) {
                        return 1;
                    }
                }
            }
        }
    }
    return 0;
}

/* Bodies the batches up to b are to have drawn in all: the rate over their time (up to the stop),
 * rounded down; the hair above it keeps a product that is whole in exact arithmetic whole. */
static uint64_t planned_until(const sim_insert_def *d, const sim_insert_progress *pr, uint64_t b) {
    const double end = (double)(b + 1) * pr->interval;
    const double t = d->stop_time > 0.0 && end > d->stop_time ? d->stop_time : end;
    const double amount = d->rate * t;
    return (uint64_t)floor(amount * (1.0 + 1e-12) + 1e-9);
}

/* The amount the batches up to b are to have drawn: bodies, or kilograms. */
static double target_of(const sim_insert_def *d, const sim_insert_progress *pr, uint64_t b) {
    if (!d->rate_mass) {
        return (double)planned_until(d, pr, b);
    }
    const double end = (double)(b + 1) * pr->interval;
    return d->rate * (d->stop_time > 0.0 && end > d->stop_time ? d->stop_time : end);
}

/* Bodies the batches due may place, at most: what they draw (a rate in mass counted in bodies of
 * the smallest radius), + 1 for a run that starts from none. */
static uint64_t most_bodies(const sim_insert_def *d, const sim_insert_progress *pr,
                            uint64_t batches_due) {
    const double target = target_of(d, pr, pr->batches + batches_due - 1);
    double r_min = 0.0, r_max = 0.0;
    sim_insert_radius_range(d, &r_min, &r_max);
    const double bodies =
        d->rate_mass ? ceil((target - pr->planned_mass) / sim_sphere_mass(r_min, d->density)) + 1.0
                     : target - (double)pr->planned + 1.0;
    return bodies > 0.0 ? (bodies < 4e9 ? (uint64_t)bodies : (uint64_t)4e9) : 0u;
}

/* A full batch's remaining bodies, drawn as dropped without a place tried or a radius drawn: a
 * rate far above what the region holds costs no more than filling it. In mass, their number is
 * the remaining mass over a body of the distribution's middle radius. */
static void drop_rest(const sim_insert_def *d, sim_insert_progress *pr, double target,
                      uint64_t *wanted) {
    double rest = 0.0;
    if (d->rate_mass) {
        const double r =
            d->radii == SIM_INSERT_LOGNORMAL ? exp(d->radius_a) : 0.5 * (d->radius_a + d->radius_b);
        rest = ceil((target - pr->planned_mass) / sim_sphere_mass(r, d->density));
        pr->planned_mass = target;
    } else {
        rest = ceil(target) - (double)pr->planned;
    }
    const uint64_t n = rest > 0.0 ? (uint64_t)rest : 0u;
    pr->planned += n;
    *wanted += n;
}

sim_status sim_insert_place(const sim_insert_def *d, sim_insert_progress *pr, const sim_params *p,
                            uint32_t max_n, sim_state *state, uint64_t *wanted, uint64_t *placed,
                            sim_error *err) {
    *wanted = *placed = 0;
    SIM_ASSERT(pr->interval > 0.0);
    uint64_t due = 0;
    sim_insert_progress probe = *pr;
    while (sim_insert_due(d, &probe, p)) {
        ++due;
        ++probe.batches;
    }
    if (due == 0) {
        return SIM_OK;
    }
    const uint32_t n0 = state->n;
    uint64_t room = most_bodies(d, pr, due);
    if (d->stop_count > 0 && d->stop_count - pr->inserted < room) {
        room = d->stop_count - pr->inserted;
    }
    if (room > (uint64_t)(max_n - n0)) {
        room = max_n - n0;
    }
    double r_min = 0.0, r_max = 0.0;
    sim_insert_radius_range(d, &r_min, &r_max);
    /* no more spheres fit the region than its volume holds of the smallest */
    const double volume =
        d->shape == SIM_INSERT_CYLINDER
            ? 0.5 * TWO_PI * d->cyl_radius * d->cyl_radius * (d->hi[d->axis] - d->lo[d->axis])
            : (d->hi[0] - d->lo[0]) * (d->hi[1] - d->lo[1]) * (d->hi[2] - d->lo[2]);
    const double fits = floor(volume / (2.0 / 3.0 * TWO_PI * r_min * r_min * r_min)) + 1.0;
    if (fits < (double)room) {
        room = (uint64_t)fits;
    }
    /* the grown arrays, the old bodies first */
    sim_state grown;
    SIM_TRY(sim_state_alloc(&grown, (uint32_t)(n0 + room), err));
    grown.n = n0;
    if (n0 > 0) {
        sim_state_copy_bodies(&grown, state);
    }
    const double reach = r_max + fmax(r_max, sim_state_max_radius(state));
    grid g;
    sim_status st = grid_make(&g, p, reach, (size_t)n0 + room, err);
    if (st != SIM_OK) {
        sim_state_free(&grown);
        return st;
    }
    for (uint32_t i = 0; i < n0; ++i) {
        grid_add(&g, grown.pos, (int32_t)i);
    }
    for (uint64_t b = 0; b < due; ++b) {
        double target = target_of(d, pr, pr->batches);
        if (grown.n == 0 && !d->rate_mass && target < (double)pr->planned + 1.0) {
            /* a run from no bodies starts with one, ahead of the rate (the cumulative targets
             * make up for it), since a backend needs a body */
            target = (double)pr->planned + 1.0;
        }
        uint32_t misses = 0; /* bodies in a row that found no place */
        while ((d->rate_mass ? pr->planned_mass < target : (double)pr->planned < target) &&
               !(d->stop_count > 0 && pr->inserted >= d->stop_count)) {
            if (grown.n >= n0 + room || misses >= SIM_INSERT_FULL_MISSES) {
                drop_rest(d, pr, target, wanted); /* full: the rest untried, at once */
                break;
            }
            const uint64_t body = pr->planned;
            const double r = body_radius(d, body);
            const double m = sim_sphere_mass(r, d->density);
            pr->planned++;
            pr->planned_mass += m;
            ++*wanted;
            int placed_it = 0;
            for (uint64_t a = 0; a < SIM_INSERT_ATTEMPTS && !placed_it; ++a) {
                double c[3];
                body_place(d, body, a, r, c);
                if (!overlaps(&g, grown.pos, c, r)) {
                    const uint32_t i = grown.n++;
                    grown.pos[i] = (sim_vec4d){c[0], c[1], c[2], r};
                    grown.vel[i] = (sim_vec4d){d->velocity.x, d->velocity.y, d->velocity.z, m};
                    grid_add(&g, grown.pos, (int32_t)i);
                    pr->inserted++;
                    ++*placed;
                    placed_it = 1;
                }
            }
            misses = placed_it ? 0 : misses + 1;
        }
        pr->batches++;
    }
    free(g.head);
    free(g.next);
    /* the contacts' histories move over as they are: the old bodies keep their numbers */
    grown.contacts = state->contacts;
    grown.contact_count = state->contact_count;
    state->contacts = NULL;
    state->contact_count = 0;
    sim_state_free(state);
    *state = grown;
    return SIM_OK;
}
