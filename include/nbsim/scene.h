/* SPDX-License-Identifier: MIT
 * nbsim — scenes: the built-in initial conditions and scene files (load and save).
 *
 * Units: SI-like, metres / kilograms / seconds. Built-in scenes use spheres of radius 0.35-0.5 m
 * and density 1 kg/m^3 (masses ~0.2-0.5 kg), so with the default stiffness 1e4 N/m the contact
 * time is ~0.01 s and the default step ~2e-4 s.
 *
 * Scene file format (also in assets/README.md):
 *
 *     # comment (anywhere; the rest of the line is ignored)
 *     box_half = 8              # optional parameter lines, `key = value`, before the header
 *     gravity = 0, -9.81, 0
 *     x y z vx vy vz radius density          # the column header (required)
 *     0 0 0  1 0 0  0.5 1                    # one sphere per line
 *
 * Keys (sim_params fields): dt [s] (0 = default), stiffness [N/m or N/m^1.5], restitution (0..1],
 * hertz (0/1), gravity = gx, gy, gz [m/s^2], box_half [m] (alias `box`; walls at +-box_half),
 * atm_nu [J m^9], atm_cutoff [m] (0 = none), triplets (0/1), steps_per_frame (>= 1). Keys not
 * given keep the caller's values. The header may add `fx fy fz` (saved states carry the last
 * force per body); loading reads and ignores those columns, so a saved state can be resumed.
 * Insertion keys (insert, insert_rate, ...: insert.h) are read where the caller asks for them
 * (sim_scene_load_options.insert). Columns are separated by blanks. mass = density * 4/3 pi
 * radius^3 [kg]. Every sphere must have radius > 0, density > 0 and its centre inside the box; a
 * saved state (with fx fy fz) may hold centres up to SIM_ESCAPE_FACTOR x box_half (physics.h),
 * where a run pushed a body into a wall without blowing up, so that every state nbsim saves loads
 * back. */
#ifndef SIM_SCENE_H
#define SIM_SCENE_H

#include <signal.h>
#include <stdio.h>

#include "nbsim/insert.h"
#include "nbsim/params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Built-in scenes, by index 0 .. count-1:
 *   gas      random elastic gas filling the box (jittered lattice, Gaussian velocities),
 *   pile     a loose lattice dropped under gravity onto the floor (y = -box_half), e = 0.5,
 *   collide  two dense blocks colliding off-centre at 2 x 5 m/s, no gravity,
 *   triplets a compact cluster at rest with strong ATM (nu > 0): with triplets on it blows
 *            apart (compact triangles repel); with triplets off nothing moves,
 *   lattice  NVIDIA's `particles` sample's benchmark configuration scaled x32: touching spheres
 *            (r = 0.5 m, 1 kg, +-1 % jitter) from a corner of a 64 m box, gravity along -y.
 * Each sets in *params_inout the fields it is designed for: box_half, gravity, restitution,
 * atm_nu, atm_cutoff (and triplets = 1 for "triplets"; "lattice" also sets the sample's linear
 * spring and step: stiffness, hertz = 0 and dt); the others are left as given. Bodies never
 * overlap each other or the walls initially, except in "lattice", whose neighbours touch and
 * overlap by up to its jitter; the same (name, n, seed) gives the same state bit for bit,
 * whatever the threads; O(n) time (lattice + jitter), on OpenMP's default team of the CPU's
 * threads (OMP_NUM_THREADS). */
int sim_scene_builtin_count(void);
const char *sim_scene_builtin_name(int i);
/* 1 when name is one of the built-in scenes. */
int sim_scene_is_builtin(const char *name);
const char *sim_scene_builtin_description(int i);
uint32_t sim_scene_builtin_default_n(int i);

/* n = 0: the scene's default body count. Unknown name or a failed allocation: error. */
sim_status sim_scene_builtin(const char *name, uint32_t n, uint64_t seed, sim_params *params_inout,
                             sim_state *out, sim_error *err);
/* The same, ended when *stop (may be NULL; a session's config.stop, raised by Ctrl-C) rises:
 * each thread reads the flag before each block of 65,536 bodies (a few ms of work), and a
 * stopped build returns SIM_INTERRUPTED with nothing in *out. */
sim_status sim_scene_builtin_with(const char *name, uint32_t n, uint64_t seed,
                                  const volatile sig_atomic_t *stop, sim_params *params_inout,
                                  sim_state *out, sim_error *err);

/* Reads a scene file into *out (allocated here) and the parameters it sets into *params_inout.
 * On error neither is touched; the message names file, line and problem (the file's own bytes
 * in it are printable: control characters and non-ASCII bytes show as '?'). A UTF-8 byte order
 * mark at the start is skipped. A trajectory (.xyz, .lammpstrj, .nc: trajectory.h) gives its
 * last complete frame, its box and the parameters it carries (sim_traj_writer_open_params), so a
 * run can be continued from its dump; with options, what it does not carry is named in one
 * warning ("not restored"), and a cut-off last frame in another. */
sim_status sim_scene_load(const char *path, sim_params *params_inout, sim_state *out,
                          sim_error *err);

/* Fixed bit of the contact law (hertz), after the 1 << sim_param_id bits. */
#define SIM_SCENE_FIXED_HERTZ SIM_PARAM_BIT_HERTZ

/* What a caller asks of a scene file beyond its text. Zero-initialised: no limit, nothing fixed,
 * warnings dropped. */
typedef struct {
    /* More bodies than this are refused at the first one too many, without reading on (a file of
     * ten million lines costs no time or memory); 0: no limit. `max_reason` (may be NULL) is
     * appended to that message: why the limit, what would allow more. */
    uint32_t max_bodies;
    const char *max_reason;
    /* Parameters the caller has set (bits 1 << sim_param_id, SIM_SCENE_FIXED_HERTZ: the command
     * line's): the file's lines for them are checked but do not change *params_inout, and the
     * bodies are checked against the caller's box. */
    unsigned fixed;
    /* What is legal but probably not meant (a key given twice: the later value wins), one line
     * "FILE:LINE: ..." each, '\n'-separated, appended to warnings[0 .. warnings_cap). */
    char *warnings;
    size_t warnings_cap;
    /* The insertion keys (insert.h) into *insert, which then says which the file gave; the file
     * may then hold no bodies (the caller refuses that without an insertion). NULL: those keys
     * are unknown, and a file needs bodies. */
    sim_inserter *insert;
} sim_scene_load_options;

/* sim_scene_load with options (NULL: none). */
sim_status sim_scene_load_with(const char *path, const sim_scene_load_options *options,
                               sim_params *params_inout, sim_state *out, sim_error *err);
/* The same from an open stream; `name` is what messages call it (the fuzzer reads memory). */
sim_status sim_scene_read(FILE *f, const char *name, const sim_scene_load_options *options,
                          sim_params *params_inout, sim_state *out, sim_error *err);

/* A scene file's rules for bodies that come from memory (a binding's arrays), so that they are
 * refused as the same bodies in a file would be: positions, velocities and spins finite (a file's
 * numbers are), radius at most box_half, and every centre inside the walls at +-box_half, or up to
 * SIM_ESCAPE_FACTOR x box_half when `saved` (a state a run reached, as a saved state's may).
 * SIM_BAD_ARGUMENT names the first body that breaks one, by its index from 0, and what is wrong.
 * Radius and mass > 0 and the contacts are sim_state_check_bodies' (state.h), which the session
 * applies to every state. */
sim_status sim_scene_check_bodies(const sim_state *state, const sim_params *params, int saved,
                                  sim_error *err);

/* Writes params and state (and forces [N] as fx fy fz when not NULL) in the scene format, at
 * full double precision (%.17g). Writes a temporary file beside `path` and renames it over
 * `path`, so readers never see a half-written file. */
sim_status sim_state_save(const char *path, const sim_params *params, const sim_state *state,
                          const sim_vec3d *forces, sim_error *err);
/* The same with an insertion's settings and progress (NULL or off: none), for a run resumed from
 * the file to insert what the uninterrupted run would have. A state with no bodies is written
 * only with an insertion. */
sim_status sim_state_save_insert(const char *path, const sim_params *params, const sim_state *state,
                                 const sim_vec3d *forces, const sim_inserter *insert,
                                 sim_error *err);

/* Mass [kg] of a sphere of radius r [m] and density rho [kg/m^3]. */
double sim_sphere_mass(double radius, double density);

#ifdef __cplusplus
}
#endif

#endif /* SIM_SCENE_H */
