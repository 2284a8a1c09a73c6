/* SPDX-License-Identifier: MIT
 * nbsim — the built-in scenes. Every scene places bodies on a cubic lattice whose spacing leaves
 * a gap larger than twice the jitter, so bodies never overlap and placement is O(n) even for
 * millions of bodies. Randomness comes from splitmix64 seeded by the user's seed only, so a
 * scene is reproducible bit for bit on every platform. */
#include "nbsim/scene.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double pi_ = 3.14159265358979323846;

double sim_sphere_mass(double radius, double density) {
    return density * 4.0 / 3.0 * pi_ * radius * radius * radius;
}

/* ---- reproducible random numbers ---- */

typedef struct {
    uint64_t s;
    const volatile sig_atomic_t *stop; /* the caller's stop flag (NULL: none) */
    int stopped;                       /* it rose: the loops end, the scene is discarded */
} rng;

/* Whether the build is to end: the stop flag, read every 65,536 bodies (a few ms of work), so a
 * scene of millions of bodies is left within a fraction of a second. Draws no number: a scene
 * that is not stopped is the same bit for bit. */
static int stopping(rng *r, uint32_t i) {
    if ((i & 0xFFFFu) == 0 && r->stop != NULL && *r->stop != 0) {
        r->stopped = 1;
    }
    return r->stopped;
}

static uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
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
 * partial last layer is the top one). Jitter: uniform +-j per axis [m]. */
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

/* Removes the centre-of-mass velocity (zero total momentum). */
static void zero_momentum(sim_state *st) {
    double px = 0.0, py = 0.0, pz = 0.0, m = 0.0;
    for (uint32_t i = 0; i < st->n; ++i) {
        const sim_vec4d v = st->vel[i];
        px += v.w * v.x;
        py += v.w * v.y;
        pz += v.w * v.z;
        m += v.w;
    }
    for (uint32_t i = 0; i < st->n; ++i) {
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

/* Gas: spacing 2 m (gap >= 1 m), jitter +-0.25 m, velocities N(0, 1 m/s) per axis, elastic. The
 * box is the lattice's cube, so the outermost spheres sit >= 0.25 m from the walls. A mild ATM
 * strength so that turning triplets on changes little. */
static void scene_gas(sim_state *st, rng *r, sim_params *p) {
    const double s = 2.0;
    const uint32_t m = cube_side(st->n);
    for (uint32_t i = 0; i < st->n && !stopping(r, i); ++i) {
        const sim_vec4d pos = lattice_site(i, m, s, origin, 0.25, r);
        const double radius = rng_uniform(r, R_MIN, R_MAX);
        const sim_vec3d v = {rng_normal(r), rng_normal(r), rng_normal(r)};
        set_body(st, i, pos, radius, v);
    }
    if (st->n > 1 && !r->stopped) { /* a stopped build ends here: this pass touches every body */
        zero_momentum(st);
    }
    p->box_half = 0.5 * m * s;
    p->gravity = origin;
    p->restitution = 1.0;
    p->atm_nu = 0.01;
    p->atm_cutoff = 0.0;
}

/* Pile: the box's cube filled with a loose lattice (spacing 1.2 m, gap >= 0.1 m after jitter
 * +-0.05 m), nearly at rest (N(0, 0.1 m/s)), falling onto the floor at y = -box_half under
 * g = 9.81 m/s^2, restitution 0.5. The top layer lands at ~sqrt(2 g 0.7 H) (16 m/s for the
 * default n, ~40 m/s for a million bodies: raise the stiffness for large n to keep overlaps
 * small). */
static void scene_pile(sim_state *st, rng *r, sim_params *p) {
    const double s = 1.2;
    const uint32_t m = cube_side(st->n);
    for (uint32_t i = 0; i < st->n && !stopping(r, i); ++i) {
        const sim_vec4d pos = lattice_site(i, m, s, origin, 0.05, r);
        const double radius = rng_uniform(r, R_MIN, R_MAX);
        const sim_vec3d v = {0.1 * rng_normal(r), 0.1 * rng_normal(r), 0.1 * rng_normal(r)};
        set_body(st, i, pos, radius, v);
    }
    p->box_half = 0.5 * m * s;
    p->gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p->restitution = 0.5;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
}

/* Collide: two dense blocks (spacing 1.05 m, gap >= 0.03 m) of n/2 bodies each, side L, centres
 * at x = -+0.75 L (a gap of L/2 between them) and y = -+L/8 (off-centre, so the debris spins),
 * flying at +-5 m/s along x. No gravity, restitution 0.8. Box half-width 2 L. */
static void scene_collide(sim_state *st, rng *r, sim_params *p) {
    const double s = 1.05;
    const uint32_t na = (st->n + 1) / 2;
    const uint32_t m = cube_side(na);
    const double L = m * s;
    for (uint32_t i = 0; i < st->n && !stopping(r, i); ++i) {
        const int second = i >= na;
        const sim_vec3d c = {second ? 0.75 * L : -0.75 * L, second ? -L / 8 : L / 8, 0.0};
        const sim_vec4d pos = lattice_site(second ? i - na : i, m, s, c, 0.01, r);
        const double radius = rng_uniform(r, R_MIN, R_MAX);
        const sim_vec3d v = {second ? -5.0 : 5.0, 0.0, 0.0};
        set_body(st, i, pos, radius, v);
    }
    p->box_half = 2.0 * L;
    p->gravity = origin;
    p->restitution = 0.8;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
}

/* Triplets: equal spheres (r = 0.5 m) in a compact cube (spacing 1.1 m, gap >= 0.06 m), at rest,
 * no gravity: nothing touches, so only ATM forces move anything. nu = 0.5 J m^9 (physical sign:
 * compact triangles repel) blows the cluster apart from its surface inwards at ~1-2 m/s. Box
 * half-width max(L, L/2 + 4 m) leaves room to expand. */
static void scene_triplets(sim_state *st, rng *r, sim_params *p) {
    const double s = 1.1;
    const uint32_t m = cube_side(st->n);
    const double L = m * s;
    const sim_vec3d rest = {0.0, 0.0, 0.0};
    for (uint32_t i = 0; i < st->n && !stopping(r, i); ++i) {
        set_body(st, i, lattice_site(i, m, s, origin, 0.02, r), 0.5, rest);
    }
    p->box_half = L > 0.5 * L + 4.0 ? L : 0.5 * L + 4.0;
    p->gravity = origin;
    p->restitution = 0.9;
    p->atm_nu = 0.5;
    p->atm_cutoff = 0.0;
    p->triplets = 1;
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

static void scene_lattice(sim_state *st, rng *r, sim_params *p) {
    const double s = 2.0 * LATTICE_RADIUS;
    const uint32_t m = cube_side(st->n);
    const double half = 0.5 * m * s > LATTICE_BOX_HALF ? 0.5 * m * s : LATTICE_BOX_HALF;
    const double first = -half + LATTICE_RADIUS;
    for (uint32_t i = 0; i < st->n && !stopping(r, i); ++i) {
        const uint32_t ix = i % m, iy = i / m % m, iz = i / m / m;
        sim_vec4d pos;
        pos.x = first + ix * s + rng_uniform(r, -LATTICE_JITTER, LATTICE_JITTER);
        pos.y = first + iy * s + rng_uniform(r, -LATTICE_JITTER, LATTICE_JITTER);
        pos.z = first + iz * s + rng_uniform(r, -LATTICE_JITTER, LATTICE_JITTER);
        pos.w = LATTICE_RADIUS;
        st->pos[i] = pos;
        st->vel[i] = (sim_vec4d){0.0, 0.0, 0.0, 1.0}; /* 1 kg */
    }
    p->box_half = half;
    p->gravity = (sim_vec3d){0.0, -0.0003 * 32.0, 0.0};
    p->restitution = 0.915;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
    p->stiffness = 1.0;
    p->hertz = 0;
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

static void scene_heap(sim_state *st, rng *r, sim_params *p) {
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
    const double corner = -half + 0.55; /* the first carpet sphere's centre, 5 cm off the walls */
    const sim_vec3d rest = {0.0, 0.0, 0.0};
    uint32_t k = 0;
    const int m = (int)(cr / HEAP_CARPET_SPACING);
    for (int a = 0; a <= m && carpet > 0; ++a) {
        for (int b = 0; b <= m; ++b) {
            if (hypot(a * HEAP_CARPET_SPACING, b * HEAP_CARPET_SPACING) <= cr) {
                const sim_vec4d pos = {corner + a * HEAP_CARPET_SPACING + rng_uniform(r, -0.03, 0.03),
                                       -half + 0.501, /* 1 mm above the floor */
                                       corner + b * HEAP_CARPET_SPACING + rng_uniform(r, -0.03, 0.03),
                                       0.0};
                set_body(st, k, pos, 0.5, rest);
                st->vel[k].w *= HEAP_CARPET_DENSITY;
                ++k;
            }
        }
    }
    /* the pour, layer by layer from the bottom (its top layer partly filled): 5 cm above the
     * carpet's spheres, 5 cm off the walls */
    const double first = -half + 0.55, base = -half + 1.0 + 0.55;
    for (uint32_t layer = 0; k < st->n && heap_pour_layer(pr, layer) >= 0.0; ++layer) {
        const double lr = heap_pour_layer(pr, layer);
        const int lm = (int)(lr / HEAP_SPACING);
        for (int a = 0; a <= lm && k < st->n && !r->stopped; ++a) {
            for (int b = 0; b <= lm && k < st->n && !stopping(r, k); ++b) {
                if (hypot(a * HEAP_SPACING, b * HEAP_SPACING) > lr) {
                    continue;
                }
                sim_vec4d pos;
                pos.x = first + a * HEAP_SPACING + rng_uniform(r, -HEAP_JITTER, HEAP_JITTER);
                pos.z = first + b * HEAP_SPACING + rng_uniform(r, -HEAP_JITTER, HEAP_JITTER);
                pos.y = base + layer * HEAP_SPACING;
                pos.w = 0.0;
                set_body(st, k++, pos, rng_uniform(r, 0.45, 0.5), rest);
            }
        }
    }
    p->box_half = half;
    p->gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p->stiffness = 1e4;
    p->hertz = 0;
    p->restitution = 0.7;
    p->atm_nu = 0.0;
    p->atm_cutoff = 0.0;
    p->friction = 0.5;
    p->rolling_friction = 0.1;
}

typedef struct {
    const char *name;
    const char *description;
    uint32_t default_n;
    void (*build)(sim_state *st, rng *r, sim_params *p);
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
    rng r = {seed, stop, stop != NULL && *stop != 0};
    if (!r.stopped) {
        e->build(&st, &r, &p);
    }
    if (r.stopped) {
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
