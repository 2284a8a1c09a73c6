/* SPDX-License-Identifier: MIT
 * nbsim — model parameters by name. One row per parameter gives its scene-file key, its
 * command-line flag and the rule its value must follow. Scene files, the command line and
 * sim_backend check values against these rows, so each accepts and refuses exactly the same
 * values (a step the command line refuses is refused in a file too).
 *
 * Numbers are strict: decimal only (no hexadecimal, no inf or nan), the whole text, finite. */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include "nbsim/state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row per parameter, read across:
 *  id, field    its sim_param_id (SIM_PARAM_<id>) and its field of sim_params;
 *  kind         what the field holds: REAL (double), DEFAULTED (double whose 0, the
 *               zero-initialised field, means SIM_DEFAULT_<id>), WHOLE (int), AUTO
 *               (sim_optional_value: a number or "auto"), VEC3 (sim_vec3d, "gx,gy,gz", each
 *               number within the bounds), AXES (int, the periodic axes as bits, written as
 *               text);
 *  default      sim_params_default's value (AUTO: auto);
 *  bounds       IN(lo, hi): lo <= v <= hi; ABOVE(lo, hi): lo < v <= hi (WHOLE and AXES: whole);
 *  saved        its line in a saved state's header (sim_state_save; -1: not saved);
 *  use          RUN (no force depends on it), MODEL (forces do: sim_params_same_model compares it;
 *               sim_physics_from_params derives its constants by hand), COPY(part, member) (the
 *               same, copied as it is into sim_physics's part.member);
 *  key, flag, value, rule, help   the scene-file key, the command-line flag, the value's name in
 *               help texts, what an error says the value must be, the help line.
 * The range checks, put/check, saves, dumps' fields, defaults, sim_params_same_model and
 * sim_physics_from_params's copies are generated from these rows (params.c, scene_io.c,
 * traj_params.c, physics.c). SIM_PARAM_LIST(X) gives X(id, key, flag, value, rule, help), for the
 * names and rules; SIM_PARAM_FIELDS(X) X(id, field), for code that copies a parameter by id (the
 * session's overrides); SIM_PARAM_SPECS(X) X(id, field, kind, default, bounds, saved, use).
 * The bounds are wide but finite: the GPU computes in float (~3.4e38), so a parameter that
 * overflows there, or a step so long that nothing can be resolved, is refused up front. */
#define SIM_PARAM_TABLE(X, R)                                                                      \
    R(X, DT, dt, REAL, 0.0, IN(0, 1e3), 0, RUN, "dt", "--dt", "S",                                 \
      "a time step in [0, 1000] s (0: the default step)",                                          \
      "time step [s] (default: contact time / 50, finer for strong damping)")                      \
    R(X, STIFFNESS, stiffness, REAL, 1.0e4, ABOVE(0, 1e20), 1, COPY(normal, stiffness), "stiffness",       \
      "--stiffness", "K", "a stiffness in (0, 1e20]",                                              \
      "contact stiffness [N/m, or N/m^1.5 for hertz]")                                             \
    R(X, RESTITUTION, restitution, REAL, 0.9, ABOVE(0, 1), 2, MODEL, "restitution",                \
      "--restitution", "E", "a restitution coefficient in (0, 1]",                                 \
      "normal restitution coefficient, 0 < E <= 1")                                                \
    R(X, GRAVITY, gravity, VEC3, 0.0, IN(-1e6, 1e6), 4, COPY(box, gravity), "gravity", "--gravity",     \
      "GX,GY,GZ", "three numbers gx,gy,gz, each in [-1e6, 1e6]", "gravity [m/s^2]")                \
    R(X, BOX, box_half, REAL, 20.0, ABOVE(0, 1e9), 5, COPY(box, box_half), "box_half", "--box", "L",    \
      "a half-width in (0, 1e9] m", "half-width of the box [m]")                                   \
    R(X, ATM_NU, atm_nu, REAL, 0.0, IN(-1e30, 1e30), 7, COPY(atm, atm_nu), "atm_nu", "--atm-nu", "NU",  \
      "a number in [-1e30, 1e30]", "ATM strength [J m^9]")                                         \
    R(X, ATM_CUTOFF, atm_cutoff, REAL, 0.0, IN(0, 1e9), 8, COPY(atm, atm_cutoff), "atm_cutoff",         \
      "--atm-cutoff", "R", "a distance in [0, 1e9] m (0: none)",                                   \
      "ATM cut-off on each of the three distances [m] (0: none)")                                  \
    R(X, STEPS, steps_per_frame, WHOLE, 1, IN(1, 100000), 10, RUN, "steps_per_frame",              \
      "--steps-per-frame", "K", "a whole number in 1..100000",                                     \
      "integration steps per frame / log row (default 1)")                                         \
    R(X, FRICTION, friction, REAL, 0.0, IN(0, 10), 11, COPY(tangential, friction), "friction", "--friction",   \
      "MU", "a friction coefficient in [0, 10]",                                                   \
      "sliding friction coefficient (default 0: none, and no rotation)")                           \
    R(X, ROLLING_FRICTION, rolling_friction, REAL, 0.0, IN(0, 10), 12, COPY(rolling, rolling_friction),     \
      "rolling_friction", "--rolling-friction", "MU_R",                                            \
      "a rolling friction coefficient in [0, 10]",                                                 \
      "rolling resistance: torque up to MU_R R_eff F_n (default 0)")                               \
    R(X, STIFFNESS_RATIO, stiffness_ratio, DEFAULTED, SIM_DEFAULT_STIFFNESS_RATIO, ABOVE(0, 10),   \
      13, MODEL, "stiffness_ratio", "--stiffness-ratio", "R", "a ratio in (0, 10]",                \
      "tangential / normal contact stiffness (default 2/7)")                                       \
    R(X, TANGENTIAL_DAMPING, tangential_damping, AUTO, 0.0, IN(0, 10), 14, MODEL,                  \
      "tangential_damping", "--tangential-damping", "X|auto", "a factor in [0, 10] or auto",       \
      "tangential / normal dashpot (auto: the normal damping ratio)")                              \
    R(X, SKIN, skin, AUTO, 0.0, IN(0, 1e9), -1, RUN, "skin", "--skin", "S|auto",                   \
      "a distance in [0, 1e9] m or auto",                                                          \
      "neighbour-list skin [m] (auto: from the speeds and the step; 0: no lists, culled tiles)")   \
    R(X, PERIODIC, periodic, AXES, 0, IN(0, SIM_PERIODIC_ALL), 6, COPY(box, periodic), "periodic",      \
      "--periodic", "AXES", "periodic axes: x, y and z each at most once (xz, x,z) or none",       \
      "periodic axes, e.g. xz (walls stay on the others; default none)")                           \
    R(X, LAMMPS_DASHPOT, lammps_dashpot, WHOLE, 0, IN(0, 1), 15, COPY(normal, lammps_dashpot),             \
      "lammps_dashpot", "--lammps-dashpot", "0|1", "0 or 1",                                       \
      "linear law: 1 samples the normal dashpot as LAMMPS does, unweighted at a contact's first "  \
      "and last step (default 0: weighted, docs/physics.md)")
#define SIM_PARAM_LIST(X) SIM_PARAM_TABLE(X, SIM_PARAM_ROW)
#define SIM_PARAM_FIELDS(X) SIM_PARAM_TABLE(X, SIM_PARAM_ROW_FIELD)
#define SIM_PARAM_SPECS(X) SIM_PARAM_TABLE(X, SIM_PARAM_ROW_SPEC)
#define SIM_PARAM_ROW(X, id, field, kind, dflt, bounds, saved, use, key, flag, value, rule, help)  \
    X(id, key, flag, value, rule, help)
#define SIM_PARAM_ROW_FIELD(X, id, field, kind, dflt, bounds, saved, use, key, flag, value, rule,  \
                            help)                                                                  \
    X(id, field)
#define SIM_PARAM_ROW_SPEC(X, id, field, kind, dflt, bounds, saved, use, key, flag, value, rule,   \
                           help)                                                                   \
    X(id, field, kind, dflt, bounds, saved, use)

/* The tangential stiffness of the friction model when none is given: k_t = 2/7 k_n, the ratio at
 * which a solid sphere's tangential contact oscillation has the period of the normal one. */
#define SIM_DEFAULT_STIFFNESS_RATIO (2.0 / 7.0)

typedef enum {
#define SIM_PARAM_ENUM(id, key, flag, value, rule, help) SIM_PARAM_##id,
    SIM_PARAM_LIST(SIM_PARAM_ENUM)
#undef SIM_PARAM_ENUM
        SIM_PARAM_COUNT
} sim_param_id;

typedef struct {
    const char *key;   /* scene-file key */
    const char *flag;  /* command-line flag */
    const char *value; /* the value's name in help texts */
    const char *rule;  /* "a time step in [0, 1000] s ..." */
    const char *help;  /* one help line */
} sim_param_info;

/* Parameters as bits: 1 << sim_param_id for the rows above, and these for the two fields of
 * sim_params without a row (the contact law and the triplet switch). */
#define SIM_PARAM_BIT_HERTZ (1u << SIM_PARAM_COUNT)
#define SIM_PARAM_BIT_TRIPLETS (1u << (SIM_PARAM_COUNT + 1))
#define SIM_PARAM_BITS_ALL (SIM_PARAM_BIT_TRIPLETS | (SIM_PARAM_BIT_TRIPLETS - 1u))

const sim_param_info *sim_param_info_of(sim_param_id id);
/* By scene key (also the alias `box` of box_half) or by flag; -1 when unknown. */
int sim_param_from_key(const char *key);
int sim_param_from_flag(const char *flag);

/* The value of parameter id in p as a number, as saves and dumps write it (DEFAULTED: its
 * default when 0; AUTO: the value, meaningful when set; AXES: the bits); not for VEC3 (gravity). */
double sim_param_value(const sim_params *p, sim_param_id id);

/* Parses text and sets the parameter. On a bad value returns SIM_BAD_ARGUMENT with the message
 * "'TEXT' must be RULE" (callers prefix the flag or the file and line). */
sim_status sim_param_set(sim_params *p, sim_param_id id, const char *text, sim_error *err);
/* Whether parameter id is one that may be left to a default (tangential_damping, skin) and p
 * leaves it so ("auto" in scene files, dumps and on the command line). */
int sim_param_is_auto(const sim_params *p, sim_param_id id);
/* Copies into *to the parameters of *from whose bits are set in `bits` (the others stay). */
void sim_params_take(sim_params *to, const sim_params *from, unsigned bits);
/* Every parameter of p, and hertz / triplets (0 or 1), against its rule. stiffness_ratio 0 (the
 * zero-initialised field: the default ratio) and tangential_damping_set 0 (auto) pass. */
sim_status sim_params_check(const sim_params *p, sim_error *err);

/* The periodic axes of sim_params.periodic (bit 0 x, 1 y, 2 z) as text: "none", or the axes in
 * order joined by sep ("x,z" with sep ","; "xz" with ""); what sim_param_set reads back. out
 * holds at least 8 bytes; returns out. */
#define SIM_PERIODIC_ALL 7
const char *sim_periodic_text(int axes, const char *sep, char *out, size_t cap);

/* A finite decimal number filling the whole text (no blanks, no hexadecimal, no inf/nan):
 * 1 and *out set, else 0. The one number syntax of scene files and the command line. */
int sim_parse_number(const char *text, double *out);

#ifdef __cplusplus
}
#endif

#endif /* SIM_PARAMS_H */
