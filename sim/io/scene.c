/* SPDX-License-Identifier: MIT
 * nbsim — the built-in scenes. Every scene places bodies on a cubic lattice whose spacing leaves
 * a gap larger than twice the jitter, so bodies never overlap and placement is O(n) even for
 * millions of bodies. Randomness comes from splitmix64 seeded by the user's seed only, so a
 * scene is reproducible bit for bit on every platform; its bodies are built on the CPU's threads,
 * each from draws of its own, the same whatever the threads. */
#include "nbsim/scene.h"

#include "core/omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pi_ = 3.14159265358979323846;

double sim_sphere_mass(double radius, double density) {
    return density * 4.0 / 3.0 * pi_ * radius * radius * radius;
}

/* ---- reproducible random numbers ---- */

/* splitmix64: draw k of a seed's sequence is mix(seed + (k + 1) GAMMA), so any draw is found
 * without drawing the ones before it. A scene gives body i the draws [K i, K i + K), K the draws
 * it takes a body, and each thread starts its bodies there: the numbers, and their order, are
 * those one thread drawing in sequence takes, so a scene is the same bit for bit whatever the
 * threads (and as it was when it was built in sequence). */
#define SPLITMIX_GAMMA 0x9E3779B97F4A7C15ull

typedef struct {
    uint64_t s;
} rng;

/* The generator about to give draw k of the seed's sequence. */
static rng rng_at(uint64_t seed, uint64_t k) {
    return (rng){seed + k * SPLITMIX_GAMMA};
}

static uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += SPLITMIX_GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(rng *r, double lo, double hi) { /* [lo, hi) */
    return lo + (hi - lo) * ((double)(rng_next(r) >> 11) * 0x1.0p-53);
}

static double rng_normal(rng *r) {                    /* Box-Muller, standard normal */
    const double u1 = 1.0 - rng_uniform(r, 0.0, 1.0); /* (0, 1] */
    const double u2 = rng_uniform(r, 0.0, 1.0);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * pi_ * u2);
}

/* ---- building on the CPU's threads ---- */

typedef struct {
    uint64_t seed;
    const volatile sig_atomic_t *stop; /* the caller's stop flag (NULL: none) */
    int stopped;                       /* it rose: the loops end, the scene is discarded */
} scene_build;

/* Whether the build is to end: reads the stop flag (draws no number: a scene that is not stopped
 * is the same bit for bit). A thread asks before each block of bodies or row of sites (a few ms
 * of work at most), so a scene of millions of bodies is left within a fraction of a second. */
static int build_stopping(scene_build *b) {
    int stopped;
    SIM_OMP(omp atomic read)
    stopped = b->stopped;
    if (!stopped && b->stop != NULL && *b->stop != 0) {
        SIM_OMP(omp atomic write)
        b->stopped = 1;
        stopped = 1;
    }
    return stopped;
}

/* Bodies a thread builds at a time. */
#define SCENE_BLOCK 65536u

/* Fills bodies [lo, hi) of a scene whose constants are `scene`. */
typedef void (*scene_fill)(sim_state *st, const void *scene, uint64_t seed, uint32_t lo,
                           uint32_t hi);

/* Bodies [0, n) by blocks on the CPU's threads (OpenMP's default team); a body's values depend
 * on its index alone. */
static void fill_blocks(sim_state *st, scene_build *b, scene_fill fill, const void *scene) {
    const int64_t blocks = ((int64_t)st->n + SCENE_BLOCK - 1) / SCENE_BLOCK;
    SIM_OMP(omp parallel for schedule(dynamic))
    for (int64_t k = 0; k < blocks; ++k) {
        if (!build_stopping(b)) {
            const uint64_t lo = (uint64_t)k * SCENE_BLOCK, hi = lo + SCENE_BLOCK;
            fill(st, scene, b->seed, (uint32_t)lo, hi < st->n ? (uint32_t)hi : st->n);
        }
    }
}

/* ---- lattice ---- */

/* Smallest m with m^3 >= n. */
static uint32_t cube_side(uint32_t n) {
    uint64_t m = (uint64_t)ceil(cbrt((double)n));
    while (m > 1 && (m - 1) * (m - 1) * (m - 1) >= n) {
        --m;
    }
    while (m * m * m < n) {
        ++m;
    }
    return (uint32_t)m;
}

/* Site i of an m^3 lattice of spacing s centred on c, filled x fastest, then z, then y (so a
 * partial last layer is the top one). Jitter: uniform +-j per axis [m], three draws. */
static sim_vec4d lattice_site(uint32_t i, uint32_t m, double s, sim_vec3d c, double j, rng *r) {
    const uint32_t ix = i % m, iz = i / m % m, iy = i / m / m;
    const double h = 0.5 * (double)m - 0.5;
    sim_vec4d p;
    p.x = c.x + ((double)ix - h) * s + rng_uniform(r, -j, j);
    p.y = c.y + ((double)iy - h) * s + rng_uniform(r, -j, j);
    p.z = c.z + ((double)iz - h) * s + rng_uniform(r, -j, j);
    p.w = 0.0;
    return p;
}

static void set_body(sim_state *st, uint32_t i, sim_vec4d pos, double radius, sim_vec3d v) {
    pos.w = radius;
    st->pos[i] = pos;
    st->vel[i].x = v.x;
    st->vel[i].y = v.y;
    st->vel[i].z = v.z;
    st->vel[i].w = sim_sphere_mass(radius, 1.0); /* density 1 kg/m^3 */
}

/* Removes the centre-of-mass velocity (zero total momentum). The sum runs in the bodies' order
 * on one thread: a sum in parts rounds differently, and the scene would change with the number
 * of parts; it reads 32 bytes a body, a small part of the build. */
static void zero_momentum(sim_state *st) {
    double px = 0.0, py = 0.0, pz = 0.0, m = 0.0;
    for (uint32_t i = 0; i < st->n; ++i) {
        const sim_vec4d v = st->vel[i];
        px += v.w * v.x;
        py += v.w * v.y;
        pz += v.w * v.z;
        m += v.w;
    }
    const int64_t n = st->n;
    SIM_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        st->vel[i].x -= px / m;
        st->vel[i].y -= py / m;
        st->vel[i].z -= pz / m;
    }
}

/* Polydisperse radii [m]: the largest diameter is 1 m, which the lattice spacings assume. */
#define R_MIN 0.35
#define R_MAX 0.5

static const sim_vec3d origin = {0.0, 0.0, 0.0};

/* ---- the scenes; each fills st (n allocated) and p ---- */

/* A lattice of spheres of random radii and velocities N(0, speed) per axis: the gas and the
 * pile. Ten draws a body: the jitter's three, the radius, two for each velocity component. */
typedef struct {
    uint32_t m;   /* sites per side */
    double s;     /* spacing [m] */
    double j;     /* jitter [m] */
    double speed; /* [m/s] */
} loose_lattice;

static void fill_loose(sim_state *st, const void *scene, uint64_t seed, uint32_t lo, uint32_t hi) {
    const loose_lattice *c = scene;
    for (uint32_t i = lo; i < hi; ++i) {
        rng r = rng_at(seed, 10 * (uint64_t)i);
        const sim_vec4d pos = lattice_site(i, c->m, c->s, origin, c->j, &r);
        const double radius = rng_uniform(&r, R_MIN, R_MAX);
        sim_vec3d v;
        v.x = c->speed * rng_normal(&r);
        v.y = c->speed * rng_normal(&r);
        v.z = c->speed * rng_normal(&r);
        set_body(st, i, pos, radius, v);
    }
}

/* Gas: spacing 2 m (gap >= 1 m), jitter +-0.25 m, velocities N(0, 1 m/s) per axis, elastic. The
 * box is the lattice's cube, so the outermost spheres sit >= 0.25 m from the walls. A mild ATM
 * strength so that turning triplets on changes little. */
static sim_status scene_gas(sim_state *st, scene_build *b, sim_params *p, sim_error *err) {
    const loose_lattice c = {cube_side(st->n), 2.0, 0.25, 1.0};
    fill_blocks(st, b, fill_loose, &c);
    if (st->n > 1 && !b->stopped) { /* a stopped build ends here: this pass touches every body */
        zero_momentum(st);
    }
    p->box_half = 0.5 * c.m * c.s;
    p->gravity = origin;
    p->restitution = 1.0;
    p->atm_nu = 0.01;
    p->atm_cutoff = 0.0;
    return SIM_OK;
}

/* Pile: the box's cube filled with a loose lattice (spacing 1.2 m, gap >= 0.1 m after jitter
 * +-0.05 m), nearly at rest (N(0, 0.1 m/s)), falling onto the floor at y = -box_half under
 * g = 9.81 m/s^2, restitution 0.5. The top layer lands at ~sqrt(2 g 0.7 H) (16 m/s for the
 * default n, ~40 m/s for a million bodies: raise the stiffness for large n to keep overlaps
 * small). */
static sim_status scene_pile(sim_state *st, scene_build *b, sim_params *p, sim_error *err) {
    const loose_lattice c = {cube_side(st->n), 1.2, 0.05, 0.1};
    fill_blocks(st, b, fill_loose, &c);
    p->box_half = 0.5 * c.m * c.s;
    p->gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p->restitution = 0.5;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
    return SIM_OK;
}

/* Two blocks of na bodies: the second from body na. Four draws a body: jitter, radius. */
typedef struct {
    uint32_t na, m;
    double L, s;
} two_blocks;

static void fill_collide(sim_state *st, const void *scene, uint64_t seed, uint32_t lo,
                         uint32_t hi) {
    const two_blocks *c = scene;
    for (uint32_t i = lo; i < hi; ++i) {
        rng r = rng_at(seed, 4 * (uint64_t)i);
        const int second = i >= c->na;
        const sim_vec3d centre = {second ? 0.75 * c->L : -0.75 * c->L,
                                  second ? -c->L / 8 : c->L / 8, 0.0};
        const sim_vec4d pos = lattice_site(second ? i - c->na : i, c->m, c->s, centre, 0.01, &r);
        const double radius = rng_uniform(&r, R_MIN, R_MAX);
        const sim_vec3d v = {second ? -5.0 : 5.0, 0.0, 0.0};
        set_body(st, i, pos, radius, v);
    }
}

/* Collide: two dense blocks (spacing 1.05 m, gap >= 0.03 m) of n/2 bodies each, side L, centres
 * at x = -+0.75 L (a gap of L/2 between them) and y = -+L/8 (off-centre, so the debris spins),
 * flying at +-5 m/s along x. No gravity, restitution 0.8. Box half-width 2 L. */
static sim_status scene_collide(sim_state *st, scene_build *b, sim_params *p, sim_error *err) {
    two_blocks c;
    c.s = 1.05;
    c.na = (st->n + 1) / 2;
    c.m = cube_side(c.na);
    c.L = c.m * c.s;
    fill_blocks(st, b, fill_collide, &c);
    p->box_half = 2.0 * c.L;
    p->gravity = origin;
    p->restitution = 0.8;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
    return SIM_OK;
}

/* A lattice of equal spheres at rest: three draws a body, the jitter. */
typedef struct {
    uint32_t m;
    double s;
} tight_lattice;

static void fill_triplets(sim_state *st, const void *scene, uint64_t seed, uint32_t lo,
                          uint32_t hi) {
    const tight_lattice *c = scene;
    const sim_vec3d rest = {0.0, 0.0, 0.0};
    for (uint32_t i = lo; i < hi; ++i) {
        rng r = rng_at(seed, 3 * (uint64_t)i);
        set_body(st, i, lattice_site(i, c->m, c->s, origin, 0.02, &r), 0.5, rest);
    }
}

/* Triplets: equal spheres (r = 0.5 m) in a compact cube (spacing 1.1 m, gap >= 0.06 m), at rest,
 * no gravity: nothing touches, so only ATM forces move anything. nu = 0.5 J m^9 (physical sign:
 * compact triangles repel) blows the cluster apart from its surface inwards at ~1-2 m/s. Box
 * half-width max(L, L/2 + 4 m) leaves room to expand. */
static sim_status scene_triplets(sim_state *st, scene_build *b, sim_params *p, sim_error *err) {
    const tight_lattice c = {cube_side(st->n), 1.1};
    const double L = c.m * c.s;
    fill_blocks(st, b, fill_triplets, &c);
    p->box_half = L > 0.5 * L + 4.0 ? L : 0.5 * L + 4.0;
    p->gravity = origin;
    p->restitution = 0.9;
    p->atm_nu = 0.5;
    p->atm_cutoff = 0.0;
    p->triplets = 1;
    return SIM_OK;
}

/* Lattice: NVIDIA's CUDA sample `particles` in its benchmark configuration (-benchmark -n=N),
 * scaled by 32 in length. The sample puts spheres of radius r = 1/64 on a touching cubic lattice
 * (spacing 2r), ceil(cbrt(N)) per side, from the corner (-1, -1, -1) of its box [-1, 1]^3, x
 * fastest, then y, then z, with a uniform jitter of +-1 % of r per axis, at rest. Here r = 0.5 m,
 * spacing 1 m, jitter +-5 mm, the first centre at -31.5 m on each axis, the box half-width 32 m
 * (wider when the lattice needs it: above 262,144 bodies, the most the sample's 64^3 grid holds).
 * The block stands on the floor against three walls; gravity makes it slump into the empty part
 * of the box, as in the sample. Time is not scaled: every sphere weighs 1 kg (the sample's unit
 * masses), the spring 1 N/m is its k/m = spring / timestep = 0.5 / 0.5 s^-2, the restitution
 * 0.915 is its normal damping (0.02 per step of the relative velocity: damping ratio 0.028),
 * gravity 0.0003 x 32 = 0.0096 m/s^2 along -y. The step is not the sample's 0.5 s: that resolves
 * a contact (t_c = pi / sqrt(k / m_eff) = 2.2 s) in ~4.4 steps, and a built-in scene comes with a
 * step that is safe for its own physics, so the session derives nbsim's default, t_c / 50 =
 * 0.044 s. `--dt 0.5` runs the sample's step, per-step dynamics and all (with the session's
 * warning): scripts/gpu_*.sh pass it to time the sample's workload. What nbsim's model lacks (the
 * sample's tangential shear, walls that clamp and reflect at e = 0.5, its static collider
 * sphere) is listed in scripts/gpu_peers.sh. Neighbours touch: overlaps up to the jitter
 * (2 sqrt(3) x 5 mm), also with the walls. */
#define LATTICE_RADIUS 0.5
#define LATTICE_BOX_HALF 32.0
#define LATTICE_JITTER (0.01 * LATTICE_RADIUS)

typedef struct {
    uint32_t m;
    double first; /* the first centre on each axis [m] */
} particles_lattice;

static void fill_lattice(sim_state *st, const void *scene, uint64_t seed, uint32_t lo,
                         uint32_t hi) {
    const particles_lattice *c = scene;
    const uint32_t m = c->m;
    const double s = 2.0 * LATTICE_RADIUS;
    for (uint32_t i = lo; i < hi; ++i) {
        rng r = rng_at(seed, 3 * (uint64_t)i);
        const uint32_t ix = i % m, iy = i / m % m, iz = i / m / m;
        sim_vec4d pos;
        pos.x = c->first + ix * s + rng_uniform(&r, -LATTICE_JITTER, LATTICE_JITTER);
        pos.y = c->first + iy * s + rng_uniform(&r, -LATTICE_JITTER, LATTICE_JITTER);
        pos.z = c->first + iz * s + rng_uniform(&r, -LATTICE_JITTER, LATTICE_JITTER);
        pos.w = LATTICE_RADIUS;
        st->pos[i] = pos;
        st->vel[i] = (sim_vec4d){0.0, 0.0, 0.0, 1.0}; /* 1 kg */
    }
}

static sim_status scene_lattice(sim_state *st, scene_build *b, sim_params *p, sim_error *err) {
    const double s = 2.0 * LATTICE_RADIUS;
    const uint32_t m = cube_side(st->n);
    const double half = 0.5 * m * s > LATTICE_BOX_HALF ? 0.5 * m * s : LATTICE_BOX_HALF;
    const particles_lattice c = {m, -half + LATTICE_RADIUS};
    fill_blocks(st, b, fill_lattice, &c);
    p->box_half = half;
    p->gravity = (sim_vec3d){0.0, -0.0003 * 32.0, 0.0};
    p->restitution = 0.915;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
    p->stiffness = 1.0;
    p->hertz = 0;
    return SIM_OK;
}

/* Heap: spheres (radius 0.45-0.5 m, density 1) poured into a corner of the box onto a rough
 * floor, friction on: they build a quarter of a cone against the two walls, at any N.
 *  - The pour: a loose quarter cone of the spheres against the two walls, 60 degrees steep, far
 *    steeper than they stand (a cubic lattice: centres 1.05 m apart, 5-15 cm between spheres),
 *    its base just above the rough floor: released at once, it subsides as its flanks avalanche
 *    down onto the floor, and they build the cone. Its size grows with N like the cone's (104 m
 *    high at 10^5 bodies), but it is a stack: no sphere falls further than the gaps beneath it
 *    add up to, 5-15 % of its height. Without a hopper nbsim cannot feed a stream over time, and
 *    a stream released at once does not scale: this scene's first pour, a column of layers 1.5 m
 *    apart above a patch by the corner, as tall (114 m at 10^5 bodies), opened a third of its
 *    height in gaps, so its top hit the summit at 47 m/s (overlaps of half a radius at this
 *    stiffness), and its arrivals per metre of slope grew like N^(1/2), where the slope carries
 *    a layer a few spheres thick whatever N: the impacts splashed it over the floor (6 % of a
 *    pour of 10,000 already lay flat beyond the cone's foot, out to the far corner; at 10^5, a
 *    carpet).
 *  - The rough floor: a quarter disk of spheres (radius 0.5 m, spacing 1.1 m) 30 times denser
 *    than the heap, where the cone will stand, reaching its radius at 15 degrees. Rolling
 *    spheres do not stop on a flat floor (mu_r 0.1 decelerates a rolling sphere by only 0.7 m/s^2),
 *    so on a bare floor the heap spreads to a flat layer; the carpet is the floor's roughness.
 *  - The corner: the walls hold two sides of the cone, so n spheres build a cone 1.6 times as
 *    tall as in the open.
 *  - Contacts: stiffness 1e4 N/m, restitution 0.7 (the default step, t_c / 51, stays coarse
 *    enough to pour in seconds), friction 0.5, rolling friction 0.1. At the default N the cone
 *    settles within ~5 s at an angle of repose of 23 degrees (test_heap measures it; it grows
 *    with both coefficients: 15 degrees without rolling friction, 22 at mu 0.2); larger heaps
 *    stand flatter, as their avalanches run faster (20 degrees at 10,000 bodies). Gravity -y. */
#define HEAP_SPACING 1.05       /* [m] the pour's lattice: gap >= 5 cm, less the jitter */
#define HEAP_JITTER 0.02        /* [m] +- on x and z */
#define HEAP_POUR_DEG 60.0      /* the pour's slope [degrees] */
#define HEAP_CARPET_SPACING 1.1 /* [m] */
#define HEAP_CARPET_DENSITY 30.0

/* Sites of a quarter disk of radius r on a square lattice of spacing s (from the corner). */
static uint32_t quarter_disk_sites(double r, double s) {
    uint32_t count = 0;
    const int m = r >= 0.0 ? (int)(r / s) : -1;
    for (int a = 0; a <= m; ++a) {
        const double left = r * r - (a * s) * (a * s);
        count += left >= 0.0 ? (uint32_t)(sqrt(left) / s + 1e-9) + 1 : 0;
    }
    return count;
}

/* Sites of a quarter disk of radius r on the carpet's lattice (from the corner). */
static uint32_t heap_carpet_sites(double r) {
    return quarter_disk_sites(r, HEAP_CARPET_SPACING);
}

/* The pour's layer k: the radius of its quarter disk when the cone's base radius is r. */
static double heap_pour_layer(double r, uint32_t k) {
    return r - k * HEAP_SPACING / tan(HEAP_POUR_DEG * pi_ / 180.0);
}

/* Sites of the pour's quarter cone of base radius r (O(r^2)). */
static uint64_t heap_pour_sites(double r) {
    uint64_t count = 0;
    for (uint32_t k = 0; heap_pour_layer(r, k) >= 0.0; ++k) {
        count += quarter_disk_sites(heap_pour_layer(r, k), HEAP_SPACING);
    }
    return count;
}

/* The radius of a quarter cone of `poured` spheres at 15 degrees (solid fraction 0.55, sphere
 * volume 0.45 m^3): V = pi/12 R^3 tan 15. */
static double heap_radius(uint32_t poured) {
    return cbrt(12.0 * poured * 0.45 / (0.55 * pi_ * tan(15.0 * pi_ / 180.0)));
}

/* The heap's sites by rows: a row of the carpet (layer HEAP_CARPET) or of a layer of the pour,
 * at a along x, its sites at b = 0, 1, ... along z while they fall in the quarter disk: the
 * distance from the corner grows with b by a spacing or more, far more than hypot's rounding, so
 * the sites of a row are the first `count` of its columns, found by bisection. Rows are counted,
 * then filled from their first body, each on any thread. */
#define HEAP_CARPET UINT32_MAX

typedef struct {
    uint64_t first; /* the row's first body */
    uint32_t count; /* its sites */
    uint32_t layer; /* the pour's layer, or HEAP_CARPET */
    int a;
} heap_row;

typedef struct {
    double cr, pr;       /* the carpet's radius, the pour's base radius [m] */
    int m;               /* the carpet's last row and column */
    double half, corner; /* the box's half-width, the first carpet centre on x and z [m] */
    double first, base;  /* the pour's first centre on x and z, its first layer's y [m] */
    uint64_t carpet;     /* bodies on the carpet: two draws each, then three a poured sphere */
} heap_scene;

static int heap_site(const heap_scene *h, const heap_row *row, int b) {
    if (row->layer == HEAP_CARPET) {
        return hypot(row->a * HEAP_CARPET_SPACING, b * HEAP_CARPET_SPACING) <= h->cr;
    }
    return hypot(row->a * HEAP_SPACING, b * HEAP_SPACING) <= heap_pour_layer(h->pr, row->layer);
}

/* The row's columns: the carpet's m + 1, or lm + 1 of its layer of the pour. */
static int heap_row_width(const heap_scene *h, const heap_row *row) {
    if (row->layer == HEAP_CARPET) {
        return h->m + 1;
    }
    return (int)(heap_pour_layer(h->pr, row->layer) / HEAP_SPACING) + 1;
}

/* The row's sites: its first column outside the disk. */
static uint32_t heap_row_sites(const heap_scene *h, const heap_row *row) {
    int lo = 0, hi = heap_row_width(h, row); /* columns below lo are sites, hi and up are not */
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (heap_site(h, row, mid)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (uint32_t)lo;
}

/* Bodies [row->first, n) of the row's sites. */
static void heap_fill_row(sim_state *st, const heap_scene *h, uint64_t seed, const heap_row *row) {
    const sim_vec3d rest = {0.0, 0.0, 0.0};
    const int a = row->a;
    for (uint32_t b = 0; b < row->count && row->first + b < st->n; ++b) {
        const uint64_t k = row->first + b;
        sim_vec4d pos;
        pos.w = 0.0;
        if (row->layer == HEAP_CARPET) {
            rng r = rng_at(seed, 2 * k);
            pos.x = h->corner + a * HEAP_CARPET_SPACING + rng_uniform(&r, -0.03, 0.03);
            pos.y = -h->half + 0.501; /* 1 mm above the floor */
            pos.z = h->corner + b * HEAP_CARPET_SPACING + rng_uniform(&r, -0.03, 0.03);
            set_body(st, (uint32_t)k, pos, 0.5, rest);
            st->vel[k].w *= HEAP_CARPET_DENSITY;
        } else {
            rng r = rng_at(seed, 2 * h->carpet + 3 * (k - h->carpet));
            pos.x = h->first + a * HEAP_SPACING + rng_uniform(&r, -HEAP_JITTER, HEAP_JITTER);
            pos.z = h->first + b * HEAP_SPACING + rng_uniform(&r, -HEAP_JITTER, HEAP_JITTER);
            pos.y = h->base + row->layer * HEAP_SPACING;
            set_body(st, (uint32_t)k, pos, rng_uniform(&r, 0.45, 0.5), rest);
        }
    }
}

/* The carpet's rows, then the pour's layer by layer from the bottom, into *rows (allocated). */
static sim_status heap_rows(const heap_scene *h, uint64_t carpet_sites, heap_row **rows,
                            int64_t *count, sim_error *err) {
    int64_t n = carpet_sites > 0 ? h->m + 1 : 0;
    for (uint32_t layer = 0; heap_pour_layer(h->pr, layer) >= 0.0; ++layer) {
        n += (int64_t)(heap_pour_layer(h->pr, layer) / HEAP_SPACING) + 1;
    }
    heap_row *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    if (r == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "the heap: cannot allocate its %lld rows of sites",
                        (long long)n);
    }
    int64_t k = 0;
    for (int a = 0; carpet_sites > 0 && a <= h->m; ++a) {
        r[k++] = (heap_row){0, 0, HEAP_CARPET, a};
    }
    for (uint32_t layer = 0; heap_pour_layer(h->pr, layer) >= 0.0; ++layer) {
        const int lm = (int)(heap_pour_layer(h->pr, layer) / HEAP_SPACING);
        for (int a = 0; a <= lm; ++a) {
            r[k++] = (heap_row){0, 0, layer, a};
        }
    }
    SIM_ASSERT(k == n);
    *rows = r;
    *count = n;
    return SIM_OK;
}

static sim_status scene_heap(sim_state *st, scene_build *bld, sim_params *p, sim_error *err) {
    /* the carpet for the spheres that remain, at most a third of them */
    double cr = heap_radius(st->n);
    for (int it = 0; it < 3; ++it) { /* few bodies: the carpet's sites can outnumber them */
        const uint32_t sites = heap_carpet_sites(cr);
        cr = heap_radius(sites < st->n ? st->n - sites : 0u);
    }
    while (cr > 0.0 && heap_carpet_sites(cr) > st->n / 3) {
        cr -= HEAP_CARPET_SPACING;
    }
    const uint32_t carpet = cr > 0.0 ? heap_carpet_sites(cr) : 0, poured = st->n - carpet;
    /* the pour's base radius: the smallest quarter cone with a site for every sphere */
    double lo = 0.0, hi = HEAP_SPACING;
    while (heap_pour_sites(hi) < poured) {
        hi *= 2.0;
    }
    for (int it = 0; it < 60 && hi - lo > 1e-6; ++it) {
        const double mid = 0.5 * (lo + hi);
        *(heap_pour_sites(mid) >= poured ? &hi : &lo) = mid;
    }
    const double pr = hi;
    const double height = heap_pour_layer(pr, 0) * tan(HEAP_POUR_DEG * pi_ / 180.0);
    double half = 0.5 * (cr + 3.0);
    half = half > 0.5 * (pr + 3.0) ? half : 0.5 * (pr + 3.0);
    half = half > 0.5 * (height + 4.0) ? half : 0.5 * (height + 4.0);
    /* the carpet's first sphere 5 cm off the walls; the pour 5 cm above the carpet's spheres,
     * 5 cm off the walls, its top layer partly filled */
    heap_scene h = {.cr = cr, .pr = pr, .m = (int)(cr / HEAP_CARPET_SPACING), .half = half};
    h.corner = h.first = -half + 0.55;
    h.base = -half + 1.0 + 0.55;
    heap_row *rows;
    int64_t count;
    SIM_TRY(heap_rows(&h, carpet, &rows, &count, err));
    SIM_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < count; ++i) {
        rows[i].count = heap_row_sites(&h, &rows[i]);
    }
    uint64_t k = 0;
    for (int64_t i = 0; i < count; ++i) {
        rows[i].first = k;
        k += rows[i].count;
        h.carpet += rows[i].layer == HEAP_CARPET ? rows[i].count : 0;
    }
    SIM_OMP(omp parallel for schedule(dynamic, 16))
    for (int64_t i = 0; i < count; ++i) {
        if (rows[i].first < st->n && !build_stopping(bld)) {
            heap_fill_row(st, &h, bld->seed, &rows[i]);
        }
    }
    free(rows);
    p->box_half = half;
    p->gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p->stiffness = 1e4;
    p->hertz = 0;
    p->restitution = 0.7;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
    p->friction = 0.5;
    p->rolling_friction = 0.1;
    return SIM_OK;
}

typedef struct {
    const char *name;
    const char *description;
    uint32_t default_n;
    sim_status (*build)(sim_state *st, scene_build *b, sim_params *p, sim_error *err);
} scene_entry;

static const scene_entry scenes[] = {
    {"gas", "random elastic gas filling the box, no gravity", 4096, scene_gas},
    {"pile", "loose lattice dropped onto the floor under gravity", 4096, scene_pile},
    {"collide", "two dense blocks colliding off-centre at 2 x 5 m/s", 4096, scene_collide},
    {"triplets", "compact cluster at rest blown apart by ATM forces (triplets on)", 216,
     scene_triplets},
    {"lattice",
     "NVIDIA's particles sample's benchmark configuration scaled x32: a touching lattice "
     "(r = 0.5 m, +-1 % jitter) filled from a corner of a 64 m box, gravity along -y",
     4096, scene_lattice},
    {"heap",
     "spheres poured into a corner onto a rough floor build a cone (friction 0.5, rolling "
     "friction 0.1)",
     1400, scene_heap},
};

#define SCENE_COUNT ((int)(sizeof scenes / sizeof scenes[0]))

int sim_scene_builtin_count(void) {
    return SCENE_COUNT;
}

const char *sim_scene_builtin_name(int i) {
    return i >= 0 && i < SCENE_COUNT ? scenes[i].name : NULL;
}

const char *sim_scene_builtin_description(int i) {
    return i >= 0 && i < SCENE_COUNT ? scenes[i].description : NULL;
}

uint32_t sim_scene_builtin_default_n(int i) {
    return i >= 0 && i < SCENE_COUNT ? scenes[i].default_n : 0;
}

sim_status sim_scene_builtin(const char *name, uint32_t n, uint64_t seed, sim_params *params_inout,
                             sim_state *out, sim_error *err) {
    return sim_scene_builtin_with(name, n, seed, NULL, params_inout, out, err);
}

sim_status sim_scene_builtin_with(const char *name, uint32_t n, uint64_t seed,
                                  const volatile sig_atomic_t *stop, sim_params *params_inout,
                                  sim_state *out, sim_error *err) {
    SIM_ASSERT(name != NULL && params_inout != NULL && out != NULL);
    const scene_entry *e = NULL;
    for (int i = 0; i < SCENE_COUNT; ++i) {
        if (strcmp(scenes[i].name, name) == 0) {
            e = &scenes[i];
        }
    }
    if (e == NULL) {
        char names[256] = "";
        for (int i = 0; i < SCENE_COUNT; ++i) {
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     scenes[i].name);
        }
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown built-in scene '%s' (choose %s)", name,
                        names);
    }
    sim_state st;
    sim_status s = sim_state_alloc(&st, n ? n : e->default_n, err);
    if (s != SIM_OK) {
        return s;
    }
    sim_params p = *params_inout;
    scene_build b = {seed, stop, stop != NULL && *stop != 0};
    if (!b.stopped) {
        s = e->build(&st, &b, &p, err);
    }
    if (s != SIM_OK) {
        sim_state_free(&st);
        return s;
    }
    if (b.stopped) {
        sim_state_free(&st);
        return sim_fail(err, SIM_INTERRUPTED, "stopped while building the scene %s (%u bodies)",
                        name, n ? n : e->default_n);
    }
    *params_inout = p;
    *out = st;
    return SIM_OK;
}

int sim_scene_is_builtin(const char *name) {
    for (int i = 0; i < sim_scene_builtin_count(); ++i) {
        if (strcmp(sim_scene_builtin_name(i), name) == 0) {
            return 1;
        }
    }
    return 0;
}
