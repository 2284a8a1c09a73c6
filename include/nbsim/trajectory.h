/* SPDX-License-Identifier: MIT
 * nbsim — trajectories: the frames of a run in the formats OVITO, VMD, ParaView, ASE and
 * MDAnalysis read, chosen by the file's extension, and the last frame of a trajectory read back
 * as a state (so a run can be continued from its dump).
 *
 *   .xyz        extended XYZ: per frame a count line, a comment line with
 *               Lattice="..." Origin="..." Properties=species:S:1:id:I:1:pos:R:3:velo:R:3:
 *               momenta:R:3:radius:R:1:mass:R:1:masses:R:1:forces:R:3 Time=... Step=...
 *               pbc="F F F", then one line per body (velocity and mass under OVITO's names and
 *               ASE's: traj_xyz.c).
 *   .lammpstrj  LAMMPS text dump (dump custom): ITEM: UNITS si (once), ITEM: TIME, ITEM:
 *               TIMESTEP, ITEM: NUMBER OF ATOMS, ITEM: BOX BOUNDS ff ff ff, ITEM: ATOMS id type x
 *               y z vx vy vz radius mass fx fy fz (type 1 for every sphere).
 *   .nc         AMBER NetCDF trajectory convention 1.0 (64-bit offset NetCDF, the flavour AMBER,
 *               MDAnalysis and VMD require), through libnetcdf when the build found it; extra
 *               variables radius and mass per atom and id per frame (OVITO maps `radius` to its
 *               Radius property; ASE reads `id` as each frame's order). Layout and units:
 *               traj_netcdf.c.
 *   .pvd        ParaView: the VTK XML series file, and beside it a folder of the same name with
 *               one .vtu (VTK XML unstructured grid, raw binary appended data) per frame:
 *               run.pvd lists run/run_000000.vtu, run/run_000001.vtu, ... Each .vtu holds the
 *               bodies as points and the contact network as line cells carrying each contact's
 *               normal and tangential force (traj_vtk.c: the layout; traj_contacts.c: the
 *               network). Written only: a run continues from another format or a saved state.
 * How OVITO, ASE, MDAnalysis and VMD read each (units, what a reader cannot represent):
 * docs/trajectories.md.
 *
 * What a frame holds, as LAMMPS and HOOMD users expect it: every body in the user's order (the
 * order of the scene), ids 1..N, the step count since the run started (steps, not frames), the
 * simulated time, the box (walls at +-box_half on every axis: fixed, non-periodic boundaries),
 * position, velocity, radius, mass and the last total force, and with friction (a writer opened
 * with parameters that have it) the angular velocity: extended XYZ's omega:R:3, LAMMPS's
 * omegax omegay omegaz (the names its dump custom writes, which OVITO maps to Angular Velocity),
 * NetCDF's variable omega. Units are nbsim's, SI: m, s, m/s, kg, N, rad/s.
 *
 * Precision: the state's own. The CUDA backend's state is float: text formats write 9
 * significant digits, which give every float back exactly. The CPU reference's state is double:
 * its frames (sim_traj_frame's *_d arrays, read off the backend by the recorder) are written by
 * the text formats at full double precision, the shortest of 15 or 17 significant digits that
 * gives each double back exactly, so a .xyz or .lammpstrj of a CPU run holds its state bit for
 * bit. NetCDF stores float32 coordinates, velocities and forces whatever the backend, as the
 * AMBER convention prescribes (its readers expect that type); for a bit-exact double checkpoint
 * of a CUDA run use --save-state.
 *
 * Writing never leaves half a frame behind: a frame that fails (disk full, I/O error, file size
 * limit) is cut off again, so the file holds the complete frames written before it and stays
 * readable; the error is one line naming the file and the cause. Files are written in place
 * (not renamed at the end), so a viewer can follow a trajectory while it grows. A .pvd series
 * grows by whole files: a frame's .vtu is renamed into place once complete, then listed in the
 * .pvd, whose closing lines are rewritten with the new entry in one write, so the series is a
 * valid one after every frame and a run killed mid-way leaves the frames before. */
#ifndef SIM_TRAJECTORY_H
#define SIM_TRAJECTORY_H

#include "nbsim/params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The formats: enum name, the extension that selects it, a label for messages. */
#define SIM_TRAJ_FORMAT_LIST(X)                                                                    \
    X(XYZ, ".xyz", "extended XYZ")                                                                 \
    X(LAMMPS, ".lammpstrj", "LAMMPS text dump")                                                    \
    X(NETCDF, ".nc", "AMBER NetCDF trajectory")                                                    \
    X(VTK, ".pvd", "ParaView VTK series")

typedef enum {
    SIM_TRAJ_NONE = -1,
#define SIM_TRAJ_ENUM(id, ext, label) SIM_TRAJ_##id,
    SIM_TRAJ_FORMAT_LIST(SIM_TRAJ_ENUM)
#undef SIM_TRAJ_ENUM
        SIM_TRAJ_FORMAT_COUNT
} sim_traj_format;

/* The format a path's extension selects (case-insensitive), or SIM_TRAJ_NONE. */
sim_traj_format sim_traj_format_from_path(const char *path);
const char *sim_traj_format_extension(sim_traj_format format); /* ".xyz"; NULL if out of range */
const char *sim_traj_format_label(sim_traj_format format);
/* "trajectory formats: .xyz (extended XYZ), .lammpstrj (...), .nc (...)" for messages. */
const char *sim_traj_format_list(void);
/* 1 when this build can write and read .nc (it found libnetcdf), else 0. */
int sim_traj_netcdf_available(void);

/* One frame, every array in the user's order (or in the order slot_of gives): float arrays of n
 * entries of 16 bytes (the device layout), or the double arrays of the CPU reference's state
 * (pos_d, vel_d: then pos and vel may be NULL and the float arrays are not read). */
typedef struct sim_traj_frame {
    uint32_t n;
    uint64_t step;          /* integration steps since the run started */
    double time;            /* simulated time [s] */
    double box_half;        /* walls at +-box_half on each axis [m] */
    const sim_vec4f *pos;   /* (x, y, z, radius) [m] */
    const sim_vec4f *vel;   /* (vx, vy, vz, mass) [m/s, kg] */
    const sim_vec4f *force; /* (fx, fy, fz, unused) [N]; NULL writes zeros */
    const sim_vec4f *spin;  /* (wx, wy, wz, unused) [rad/s]; NULL writes zeros where the file
                               carries spin */
    int periodic;           /* sim_params.periodic: the axes the formats mark periodic (LAMMPS
                             * BOX BOUNDS pp, extended XYZ pbc="T"); the others are walls */
    /* A frame of double values (pos_d != NULL): written at full precision by the text formats
     * (above); NULL force_d / spin_d write zeros as for the float arrays. */
    const sim_vec4d *pos_d;   /* (x, y, z, radius) [m] */
    const sim_vec4d *vel_d;   /* (vx, vy, vz, mass) [m/s, kg] */
    const sim_vec3d *force_d; /* (fx, fy, fz) [N] */
    const sim_vec4d *spin_d;  /* (wx, wy, wz, unused) [rad/s] */
    /* Friction's contact histories at this frame (the state's: sim_state.contacts), whose
     * springs give the .pvd's tangential forces; NULL: none (the other formats ignore them). */
    const sim_state_contact *contacts;
    uint64_t contact_count;
    /* NULL: body i is entry i of every array. Else body i is entry slot_of[i] (a permutation of
     * 0..n-1): a backend's sorted slots are written in the user's order without a reordered copy
     * of the frame (the recorder: 4 bytes a body, not 64). */
    const uint32_t *slot_of;
} sim_traj_frame;

typedef struct sim_traj_writer sim_traj_writer;

/* Creates (truncates) the file at `path` for n bodies per frame in the format its extension
 * selects. Unknown extension: SIM_BAD_ARGUMENT naming the formats; .nc in a build without
 * NetCDF: SIM_UNSUPPORTED; an unwritable path: SIM_IO. Nothing is created on error. */
sim_status sim_traj_writer_open(sim_traj_writer **out, const char *path, uint32_t n,
                                sim_error *err);
/* The same, and every frame carries the run's parameters (params; NULL: none), so that a run
 * continued from the file (sim_traj_read_last, --scene FILE) gets its physics back: every
 * SIM_PARAM_LIST parameter but the box (which each format carries as its cell), hertz and
 * triplets, under their scene-file keys at full double precision; and when they have friction,
 * every frame carries the spin (above). Where: .xyz the comment line's
 * nbsim_KEY=VALUE pairs (gravity as nbsim_gravity="gx gy gz", an array to ASE); .lammpstrj an
 * item ITEM: NBSIM PARAMETERS before ITEM: ATOMS, its line KEY=VALUE ... (gravity=gx,gy,gz;
 * OVITO, ASE and VMD skip items they do not know); .nc global attributes nbsim_KEY. A .pvd
 * carries none (it is not read back): the parameters give its contacts' forces, which a .pvd
 * opened without them leaves out (its lines then carry body ids and overlaps). */
sim_status sim_traj_writer_open_params(sim_traj_writer **out, const char *path, uint32_t n,
                                       const sim_params *params, sim_error *err);
/* Appends one frame (f->pos and f->vel, or f->pos_d and f->vel_d; f->n the writer's n in NetCDF,
 * whose bodies are a dimension: the text formats and .pvd give each frame its own count).
 * Radii and masses may differ between frames in the text formats; NetCDF stores them once and
 * refuses a frame where they changed. After a failure the writer refuses further frames; the file
 * keeps the frames before the failed one. */
sim_status sim_traj_writer_write(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err);
/* Flushes to the operating system (and to disk: fdatasync), closes and frees the writer, also
 * after a failure. Returns the first error of the writer's life if a frame failed, else the
 * close's own. NULL is a no-op. */
sim_status sim_traj_writer_close(sim_traj_writer *w, sim_error *err);
uint64_t sim_traj_writer_frames(const sim_traj_writer *w); /* complete frames in the file */
uint64_t sim_traj_writer_bytes(const sim_traj_writer *w);  /* size of those frames [bytes] */
sim_traj_format sim_traj_writer_format(const sim_traj_writer *w);

/* What sim_traj_read_last found. */
typedef struct sim_traj_info {
    sim_traj_format format;
    uint64_t frames; /* complete frames in the file */
    uint64_t frame;  /* index of the frame read (frames - 1), 0-based */
    uint64_t step;   /* its step count (0 when the file has none) */
    double time;     /* its simulated time [s] (0 when the file has none) */
    int has_box;     /* the file gave the box; params_inout->box_half was set from it */
    int truncated;   /* the file ends in an incomplete frame, which was skipped */
    /* The parameters the file carried and params_inout took (bits as in params.h; the box's
     * when has_box): only the box's for a dump that carries no parameters (an older nbsim's,
     * another program's). */
    unsigned params_found;
} sim_traj_info;

/* Reads the last complete frame of a trajectory into *out (allocated here) in body order (by
 * the id column when the file has one: ids must be distinct; bodies are sorted by id). Required
 * columns: position and radius; a frame without radii is a one-line SIM_PARSE error naming the
 * file and the frame. Velocity: the velocity column, else momenta / mass (what ASE writes), else
 * zero. Spin: omega (xyz: also angular_velocities), omegax omegay omegaz (lammpstrj), the
 * variable omega (nc), else zero. Mass: the mass column, else
 * density * 4/3 pi r^3 from a density column, else density 1 kg/m^3 (the built-in scenes').
 * The box: Lattice= (xyz; plus Origin=, else the cell is taken as centred) or BOX BOUNDS
 * (lammpstrj) must be a cube centred on the origin and sets params_inout->box_half; without one
 * the caller's box_half stays. The parameters the file carries (sim_traj_writer_open_params) are
 * checked against the rules of params.h and set in *params_inout; the others stay. Every body
 * must have radius > 0, mass > 0 and its centre inside the walls. On error neither *out nor
 * *params_inout is touched. info may be NULL. A .pvd is refused (SIM_UNSUPPORTED). */
sim_status sim_traj_read_last(const char *path, sim_params *params_inout, sim_state *out,
                              sim_traj_info *info, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_TRAJECTORY_H */
