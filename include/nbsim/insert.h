/* SPDX-License-Identifier: MIT
 * nbsim — inserting bodies during the run, as LAMMPS's `fix pour` and LIGGGHTS's
 * `fix insert/rate/region` do: a region (a box or a cylinder) receives bodies at a rate (bodies or
 * kilograms per second) with a distribution of radii, an initial velocity, until a stop (a time
 * or a count). The session places them in batches between frames (sim/session/insert.c: the batch
 * interval and why), never overlapping a body already there, across periodic faces too.
 *
 * One row per setting gives its scene-file key, its command-line flag and its rule, so a scene
 * file and the command line accept and refuse the same values (params.h does the same for the
 * physics). A saved state carries the settings and the progress (`insert_state`), so a run
 * resumed from it inserts what the uninterrupted run would have. */
#ifndef SIM_INSERT_H
#define SIM_INSERT_H

#include <stdio.h>

#include "nbsim/state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(id, key, flag, value, rule, help) */
#define SIM_INSERT_LIST(X)                                                                         \
    X(REGION, "insert", "--insert", "box:X0,Y0,Z0,X1,Y1,Z1|cylinder:A,C1,C2,R,LO,HI",              \
      "box:x0,y0,z0,x1,y1,z1 (x0 < x1, ...) or cylinder:axis,c1,c2,radius,lo,hi (axis x, y or "    \
      "z; c1, c2 the centre on the other two axes in order; lo < hi along it)",                    \
      "insert bodies during the run into this region (inside the box): a\n"                        \
      "box by its corners, or a cylinder (axis, centre, radius, span)")                            \
    X(RATE, "insert_rate", "--insert-rate", "B|mass:M",                                            \
      "a rate in (0, 1e12]: bodies per second, or mass:M kilograms per second",                    \
      "bodies per second into the region, or mass:M kg per second\n(required with a region)")      \
    X(RADIUS, "insert_radius", "--insert-radius", "fixed:R|uniform:A,B|lognormal:MU,SIGMA",        \
      "fixed:r (r > 0), uniform:a,b (0 < a <= b) or lognormal:mu,sigma (sigma in [0, 5]; "         \
      "ln r is normal, cut at 4 sigma)",                                                           \
      "the inserted bodies' radii [m] (default fixed:0.5)")                                        \
    X(VELOCITY, "insert_velocity", "--insert-velocity", "VX,VY,VZ",                                \
      "three numbers vx,vy,vz, each in [-1e6, 1e6]",                                               \
      "the inserted bodies' velocity [m/s] (default 0,0,0)")                                       \
    X(DENSITY, "insert_density", "--insert-density", "RHO", "a density in (0, 1e20]",              \
      "the inserted bodies' density [kg/m^3] (default 1)")                                         \
    X(STOP, "insert_stop", "--insert-stop", "time:T|count:N",                                      \
      "time:t (0 < t <= 1e12) or count:n (1..4294967295), or both joined by a comma",              \
      "stop inserting after T seconds of the run or N bodies inserted\n(default: never)")          \
    X(SEED, "insert_seed", "--insert-seed", "S", "a whole number in 0..2^64-1",                    \
      "the inserted bodies' random seed (default 1): the same bodies on\nevery backend")

typedef enum {
#define SIM_INSERT_ENUM(id, key, flag, value, rule, help) SIM_INSERT_##id,
    SIM_INSERT_LIST(SIM_INSERT_ENUM)
#undef SIM_INSERT_ENUM
        SIM_INSERT_KEY_COUNT
} sim_insert_key;

/* The progress's key in a saved state: written by saves, read back to resume (below). */
#define SIM_INSERT_STATE_KEY "insert_state"

typedef enum { SIM_INSERT_OFF, SIM_INSERT_BOX, SIM_INSERT_CYLINDER } sim_insert_shape;
typedef enum { SIM_INSERT_FIXED, SIM_INSERT_UNIFORM, SIM_INSERT_LOGNORMAL } sim_insert_radii;

/* What to insert. Start from sim_insert_def_default(). */
typedef struct {
    sim_insert_shape shape; /* OFF: no insertion */
    /* The region's bounding box [m]: a box is exactly this; a cylinder spans lo..hi along its
     * axis and centre +- radius on the other two. */
    double lo[3], hi[3];
    int axis;          /* cylinder: 0 x, 1 y, 2 z */
    double centre[3];  /* cylinder: its axis passes through centre (the axis's own entry 0) */
    double cyl_radius; /* cylinder [m] */
    double rate;       /* bodies per second, or kilograms per second with rate_mass */
    int rate_mass;
    sim_insert_radii radii;
    double radius_a, radius_b; /* fixed: a; uniform: a..b; lognormal: mu, sigma of ln r */
    sim_vec3d velocity;        /* [m/s] */
    double density;            /* [kg/m^3] */
    double stop_time;          /* [s] of the run; 0: none */
    uint64_t stop_count;       /* bodies inserted; 0: none */
    uint64_t seed;
} sim_insert_def;

/* Where an insertion stands: what a save keeps (insert_state = batches, planned, inserted,
 * planned_mass, clock, interval), so that a resumed run goes on as the uninterrupted one. The
 * bodies are drawn from a counter-based generator (the seed and the body's number), so these
 * counters are the generator's whole state. */
typedef struct {
    uint64_t batches;    /* batches placed; batch b falls due at clock b * interval */
    uint64_t planned;    /* bodies drawn (placed or not: the next body's number) */
    uint64_t inserted;   /* bodies placed */
    double planned_mass; /* [kg] of the bodies drawn (a rate in mass) */
    double clock;        /* [s] of simulated time since insertion began */
    double interval;     /* [s] between batches; 0: not chosen yet (the session chooses) */
} sim_insert_progress;

/* An insertion with where it stands, and which settings a scene file gave (bits
 * 1 << sim_insert_key, and SIM_INSERT_GIVEN_STATE for its progress line). */
typedef struct {
    sim_insert_def def;
    sim_insert_progress progress;
    unsigned given;
} sim_inserter;
#define SIM_INSERT_GIVEN_STATE (1u << SIM_INSERT_KEY_COUNT)

sim_insert_def sim_insert_def_default(void);

const char *sim_insert_key_name(sim_insert_key k); /* scene-file key */
const char *sim_insert_flag(sim_insert_key k);     /* command-line flag */
const char *sim_insert_value(sim_insert_key k);    /* the value's name in help texts */
const char *sim_insert_rule(sim_insert_key k);     /* what an error says it must be */
const char *sim_insert_help(sim_insert_key k);     /* one help line */
/* By scene key or by flag; -1 when unknown. */
int sim_insert_from_key(const char *key);
int sim_insert_from_flag(const char *flag);

/* Parses text into the setting k of d. On a bad value SIM_BAD_ARGUMENT with the message
 * "'TEXT' must be RULE" (callers prefix the flag or the file and line); d keeps its value. */
sim_status sim_insert_set(sim_insert_def *d, sim_insert_key k, const char *text, sim_error *err);
/* The progress line's value (six numbers, as saves write them). */
sim_status sim_insert_set_progress(sim_insert_progress *p, const char *text, sim_error *err);
/* Copies into *to the settings of *from whose bits (1 << sim_insert_key) are set. */
void sim_insert_take(sim_insert_def *to, const sim_insert_def *from, unsigned bits);

/* The smallest and largest radius the distribution gives [m]. */
void sim_insert_radius_range(const sim_insert_def *d, double *r_min, double *r_max);
/* d against the run's parameters: a region inside the box (the walls; periodic axes within one
 * period), wide enough for the largest body, a rate given. SIM_BAD_ARGUMENT names the setting by
 * its flag and key. */
sim_status sim_insert_check(const sim_insert_def *d, const sim_params *p, sim_error *err);

/* The settings' and the progress's lines `key = value` for a saved state, at full precision (what
 * sim_insert_set and sim_insert_set_progress read back). Nothing when d is off. */
void sim_insert_write(FILE *f, const sim_insert_def *d, const sim_insert_progress *p);

#ifdef __cplusplus
}
#endif

#endif /* SIM_INSERT_H */
