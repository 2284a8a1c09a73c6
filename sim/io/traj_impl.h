/* SPDX-License-Identifier: MIT
 * nbsim — private to the trajectory files: the writer object each format fills in, the text
 * output both text formats share (fast number formatting, frames that are committed whole or
 * cut off again), the mapped-file line reader, and the body table every reader returns. */
#ifndef SIM_TRAJ_IMPL_H
#define SIM_TRAJ_IMPL_H

#include "nbsim/trajectory.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- writers ---- */

typedef struct sim_traj_writer_ops {
    /* Writes one frame whole or not at all (the file keeps only complete frames). */
    sim_status (*write)(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err);
    /* Releases the format's resources (not w itself); flushes to disk. */
    sim_status (*close)(sim_traj_writer *w, sim_error *err);
} sim_traj_writer_ops;

/* Text output that commits whole frames: bytes go straight to the file descriptor (no stdio
 * buffer whose failure could not be undone), and a frame that fails part-way is cut off again by
 * ftruncate to the end of the last complete frame. */
typedef struct traj_text_sink {
    int fd;
    uint64_t good_size; /* end of the last complete frame [bytes] */
    char *buf;          /* formatting buffer, TRAJ_TEXT_CHUNK bodies */
    size_t *lens;       /* bytes formatted per block of the chunk */
} traj_text_sink;

struct sim_traj_writer {
    const sim_traj_writer_ops *ops;
    sim_traj_format format;
    char *path;
    uint32_t n;
    uint64_t frames; /* complete frames in the file */
    uint64_t bytes;  /* their size */
    sim_status failed;
    char failure[SIM_ERROR_MESSAGE_MAX];
    int has_params;
    sim_params params;   /* carried by every frame when has_params (traj_params.c) */
    int spin;            /* frames carry the spin (the params have friction) */
    traj_text_sink text; /* .xyz, .lammpstrj */
    void *nc;            /* .nc: traj_netcdf.c's state */
    void *vtk;           /* .pvd: traj_vtk.c's state */
};

sim_status traj_xyz_open(sim_traj_writer *w, sim_error *err);
sim_status traj_lammps_open(sim_traj_writer *w, sim_error *err);
sim_status traj_netcdf_open(sim_traj_writer *w, sim_error *err);
sim_status traj_vtk_open(sim_traj_writer *w, sim_error *err);

/* ---- the contact network of a frame (traj_contacts.c), drawn by the .pvd ---- */

/* One pair of bodies in contact (overlap > 0), each pair once. */
typedef struct traj_contact {
    uint32_t i, j;  /* the bodies, j < i (the histories' order: sim_state_contact) */
    sim_vec3d d;    /* x_i - x_j, its minimum image on periodic axes [m] */
    double overlap; /* r_i + r_j - |d| > 0 [m] */
    sim_vec3d fn;   /* normal force on i from j [N] (j gets -fn) */
    sim_vec3d ft;   /* tangential force on i from j [N]: 0 without friction */
    int wrapped;    /* d is an image across a periodic face, not x_i - x_j itself */
} traj_contact;

typedef struct traj_contacts {
    traj_contact *v;
    uint64_t count, cap;
    uint64_t wrapped; /* how many of them cross a periodic face */
} traj_contacts;

/* The pairs of f's bodies in contact, found through a grid of cells at least one contact wide
 * (O(N) for bodies spread through the box) and their forces by the CPU reference's double
 * contact law under params (NULL: no law known, forces 0): sim_contact_force_d for the normal
 * force, and with friction sim_friction_contact_d at dt = 0 (the forces of the histories as
 * they are, as the backends evaluate them) on the spring f->contacts holds for the pair (none:
 * a contact begun this step, zero spring). Wall contacts are not drawn. SIM_OUT_OF_MEMORY names
 * `path`. */
sim_status traj_contacts_find(traj_contacts *c, const sim_traj_frame *f, const sim_params *params,
                              const char *path, sim_error *err);
void traj_contacts_free(traj_contacts *c);

/* The most bodies a CDF-2 (64-bit offset) NetCDF trajectory holds: CDF-2 keeps no variable of
 * more than 2^32 - 4 bytes a frame (libnetcdf refuses the file with NC_EVARSIZE), and
 * coordinates, velocities, forces and omega are 3 float32 a body, 12 bytes. */
#define TRAJ_NETCDF_CDF2_MAX_N 357913941u /* (2^32 - 4) / 12 */
/* The NetCDF variant traj_netcdf_open writes for n bodies: 2 (CDF-2, the AMBER convention's,
 * which MDAnalysis reads) up to TRAJ_NETCDF_CDF2_MAX_N, else 5 (CDF-5, 64-bit data). */
int traj_netcdf_version(uint64_t n);
/* Creates the file of w, a .nc writer that has written no frame, again in variant `version` (2
 * or 5) whatever w->n: tests write a small file as the large runs' CDF-5. */
sim_status traj_netcdf_reopen(sim_traj_writer *w, int version, sim_error *err);
/* Creates path as the file traj_netcdf_open would begin for n bodies (with omega when spin), in
 * variant `version`, with no frame, and closes it: the header alone, nothing of N's size
 * allocated, so tests hold the size rule against libnetcdf's at any N. SIM_IO naming libnetcdf's
 * reason when the variant cannot hold n bodies (CDF-2 past TRAJ_NETCDF_CDF2_MAX_N). */
sim_status traj_netcdf_define(const char *path, uint32_t n, int spin, int version, sim_error *err);

/* ---- text formatting (traj_text.c) ---- */

/* Longest body line (extended XYZ's with spin): species "X", id (10 digits), 18 numbers of at
 * most 24 characters (a double's "-1.2345678901234567e-308"), 19 blanks and a newline: 464 bytes
 * (301 from a float frame, whose numbers take at most 15). */
#define TRAJ_TEXT_LINE_MAX 480

/* One body of a frame, whatever precision the frame holds (a float's value widened exactly). */
typedef struct traj_body {
    double pos[3], vel[3], radius, mass, force[3], spin[3];
} traj_body;

/* Body i of frame f: from its double arrays when it has them (pos_d), else its float arrays;
 * absent forces and spins are zeros. */
void traj_frame_body(const sim_traj_frame *f, uint32_t i, traj_body *b);

/* Writes v like printf("%.9g") (9 significant digits: enough to give every float back exactly),
 * about five times faster. Returns the characters written (at most 15, no terminator). */
size_t traj_fmt_float(char *out, float v);
/* The shortest of %.15g / %.17g that gives v back exactly, NUL-terminated (cap >= 32). */
const char *traj_fmt_double(char *out, size_t cap, double v);
/* v at full precision, like traj_fmt_double (15 significant digits when they give v back, else
 * 17), written at out without a terminator; returns the characters (at most 24). A 17-digit
 * candidate in long double checked by strtod (printf's %.17g when it is off): ~10x faster than
 * printf, so a CPU run's frames cost ~3x a float frame's. */
size_t traj_fmt_double_at(char *out, double v);
/* Decimal digits of v; returns the count (no terminator). */
size_t traj_fmt_u64(char *out, uint64_t v);
/* One body line of a text format:
 *   .lammpstrj  "id type x y z vx vy vz radius mass fx fy fz\n" (type 1: LAMMPS readers need a
 *               type column: ASE refuses a dump without one, VMD and scripts expect it),
 *   .xyz        "X id x y z vx vy vz px py pz radius mass mass fx fy fz\n": species X (ASE's
 *               dummy element), the velocity under OVITO's name (velo) and as ASE's momenta, the
 *               mass under OVITO's name (mass) and ASE's (masses): each reader finds its own;
 * and the spin's three columns after the force when `spin`. Numbers in 9 significant digits (a
 * float frame's values), or when `full` at full double precision (traj_fmt_double_at). */
size_t traj_text_body(char *out, sim_traj_format format, uint32_t id, const traj_body *b, int spin,
                      int full);

sim_status traj_text_open(sim_traj_writer *w, sim_error *err);
/* Writes header (len bytes) and then one body line per body of f; on success the frame is
 * committed (w->frames, w->bytes advance), on failure the file is cut back to its last complete
 * frame and the message names the file and the cause. */
sim_status traj_text_frame(sim_traj_writer *w, const char *header, size_t len,
                           const sim_traj_frame *f, sim_error *err);
sim_status traj_text_close(sim_traj_writer *w, sim_error *err);

/* ---- reading (traj_text.c, trajectory.c) ---- */

/* A file mapped read-only; lines are handed out as (pointer, length) without copying. */
typedef struct traj_map {
    const char *data;
    size_t size;
} traj_map;

sim_status traj_map_open(traj_map *m, const char *path, sim_error *err);
void traj_map_close(traj_map *m);
/* The line starting at *pos (without its newline or a '\r' before it); advances *pos past it.
 * Returns 0 at the end of the file. *complete is 0 when the line has no newline (the file's
 * last line was cut off). */
int traj_next_line(const traj_map *m, size_t *pos, const char **line, size_t *len, int *complete);
/* Skips `count` lines; returns 0 when the file ends first (only complete lines count). */
int traj_skip_lines(const traj_map *m, size_t *pos, uint64_t count);
/* Copies a line into a NUL-terminated buffer; 0 when it does not fit. */
int traj_line_copy(char *dst, size_t cap, const char *line, size_t len);
/* Splits s in place at blanks; returns the number of fields (fields beyond max are counted). */
int traj_split(char *s, char **fields, int max);
/* A finite number filling the whole token. */
int traj_parse_double(const char *tok, double *out);

/* The last frame as a reader found it, before checks; trajectory.c turns it into a state. */
typedef struct traj_bodies {
    uint32_t n;
    double *pos; /* 3 per body [m] */
    double *vel; /* 3 per body [m/s], zero when the file has none; momenta [kg m/s] when
                    vel_is_momentum (divided by the mass when the state is made) */
    int vel_is_momentum;
    double *radius;  /* [m] */
    double *mass;    /* [kg], or NULL */
    double *density; /* [kg/m^3], or NULL (used when mass is NULL) */
    double *spin;    /* 3 per body [rad/s], or NULL (no spin in the file: zero) */
    int64_t *id;     /* or NULL */
    int has_box;
    double box_half;       /* [m] when has_box */
    sim_params params;     /* what the file carries of them ... */
    unsigned params_found; /* ... (bits as sim_traj_info.params_found) */
    sim_traj_info info;
} traj_bodies;

/* Allocates the arrays a reader fills (pos, vel zeroed, radius; mass, density, id and spin when
 * asked); SIM_OUT_OF_MEMORY names the file. */
sim_status traj_bodies_alloc(traj_bodies *b, uint32_t n, int mass, int density, int id, int spin,
                             const char *path, sim_error *err);
void traj_bodies_free(traj_bodies *b);

/* Where a text format's body lines keep what nbsim reads: the first column of each, -1 when
 * absent (the reader has checked that pos and radius are there). */
typedef struct traj_columns {
    int total; /* columns per line */
    int id, pos, vel, radius, mass, density;
    int momenta; /* read into vel when there is no velocity column (ASE's extended XYZ) */
    int spin;    /* angular velocity, 3 columns */
} traj_columns;

/* Allocates b for n bodies with what cols holds (mass; density only without mass; id) and reads
 * the n body lines that start at byte pos of m (the reader has found them complete). Errors name
 * the file, the frame and the line: `what` and its number from 1 ("atom line 3", "body 3"). */
sim_status traj_text_read_bodies(const traj_map *m, size_t pos, uint32_t n,
                                 const traj_columns *cols, const char *path, uint64_t frame,
                                 const char *what, traj_bodies *b, sim_error *err);

/* ---- parameters in dumps (traj_params.c) ---- */

/* The parameters as `PREFIXKEY=VALUE` pairs, blank-separated (every SIM_PARAM_LIST row but
 * box_half, then hertz and triplets), gravity as "gx gy gz" when quoted_vectors, else gx,gy,gz;
 * full double precision. Returns the length (cut short, never overflowing, if cap is small). */
size_t traj_params_text(char *out, size_t cap, const sim_params *p, const char *prefix,
                        int quoted_vectors);
/* One KEY (prefix removed) and VALUE of such text into b->params and b->params_found: 1 when
 * KEY is a parameter, 0 when not (the box, other programs' keys: ignored), -1 with err set
 * (SIM_PARSE naming path and frame) when its value breaks the parameter's rule. */
int traj_params_read(traj_bodies *b, const char *key, const char *value, const char *path,
                     uint64_t frame, sim_error *err);
/* The value of parameter id (any but gravity) in p: stiffness_ratio's default when 0;
 * tangential_damping's factor and the skin (the caller says "auto" when sim_param_is_auto). */
double traj_param_scalar(const sim_params *p, sim_param_id id);
/* The parameters b carries, into *p (the others stay). */
void traj_params_apply(const traj_bodies *b, sim_params *p);

sim_status traj_xyz_read_last(const char *path, traj_bodies *b, sim_error *err);
sim_status traj_lammps_read_last(const char *path, traj_bodies *b, sim_error *err);
sim_status traj_netcdf_read_last(const char *path, traj_bodies *b, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_TRAJ_IMPL_H */
