/* SPDX-License-Identifier: MIT
 * nbsim — AMBER NetCDF trajectories (convention 1.0), the binary format OVITO, VMD, MDAnalysis,
 * cpptraj and LAMMPS's `dump netcdf` share; built only when CMake finds libnetcdf.
 *
 * Layout (`ncdump -h run.nc`): 64-bit offset NetCDF, CDF-2 (the AMBER convention asks for it,
 * and MDAnalysis, reading through scipy's netcdf_file, takes nothing else), up to
 * TRAJ_NETCDF_CDF2_MAX_N bodies; past that, 64-bit data, CDF-5 (traj_netcdf_version: CDF-2 holds
 * no variable of more than 2^32 - 4 bytes a frame, and coordinates are 12 bytes a body; CDF-5
 * is what LAMMPS's dump netcdf writes, and libnetcdf >= 4.4 reads it: nbsim, ASE through
 * netCDF4-python, OVITO; not MDAnalysis, whose scipy reader refuses its header). Not netCDF-4:
 * the convention says not the HDF5 encoding, and a frame could not be rolled back as below.
 * Dimensions frame (unlimited), spatial = 3, atom = N,
 * cell_spatial = 3, cell_angular = 3, label = 5; labels spatial = "xyz", cell_spatial = "abc",
 * cell_angular = "alpha", "beta", "gamma"; per frame time, cell_origin, cell_lengths,
 * cell_angles, id, coordinates, velocities, forces and nbsim's step and box_half (with friction
 * also omega, the angular velocity [rad/s], float32, no scale_factor); per body (once) radius and
 * mass. (Files of nbsim before issue 37 kept id per body; nbsim and OVITO read both.)
 *
 * Units. The stored numbers are nbsim's SI values, so every reader that takes numbers as they are
 * (OVITO, and nbsim reading it back) sees metres, seconds and kilograms, with radii that match
 * the positions. The AMBER variables carry the units the convention prescribes together with
 * the convention's scale_factor attribute, "multiply by this to get the units attribute's
 * units": coordinates 1e10 (m -> angstrom), time 1e12 (s -> picosecond), velocities 1e-2
 * (m/s -> angstrom/picosecond), forces 1.4393e10 (N -> kilocalorie/mole/angstrom). Readers that
 * apply scale factors (MDAnalysis, VMD, netCDF4-python) therefore get correct AMBER units, and
 * MDAnalysis, which refuses any other units attribute, reads the file. radius [m], mass [kg],
 * step and box_half [m] are nbsim's additions (no scale_factor: MDAnalysis refuses one on
 * variables it does not know); OVITO imports radius as its Radius property.
 *
 * Precision: float32 coordinates, velocities and forces (the convention's type; what the GPU
 * computes in), also from the CPU reference's double frames (rounded once), double time.
 *
 * ASE (netCDF4-python applies the scale factors) reads positions in angstrom and the convention's
 * angstrom/picosecond velocities as they come, masses from elements the file does not have
 * (hydrogen's; `mass` is an array beside them), and cell_origin in metres: docs/trajectories.md.
 *
 * The box: per frame the convention's cell_lengths (2 box_half on each axis, metres with the
 * angstrom scale_factor, as the coordinates) and cell_angles (90 degrees), and cell_origin
 * (-box_half on each axis [m]; LAMMPS's dump netcdf and OVITO's extension of the convention), so
 * OVITO, VMD and MDAnalysis show the box where the walls are. The convention knows no walls:
 * readers take a cell of non-zero lengths as periodic (a zero one, as LAMMPS writes for
 * non-periodic axes, makes MDAnalysis 2.x fail), so analyses across the box's faces see periodic
 * images nbsim never has; box_half [m] says what the walls are, and nbsim reads the box from it.
 * On the axes of a periodic run (--periodic; the nbsim_periodic attribute names them) the
 * readers' periodic cell is right: ASE, OVITO and MDAnalysis wrap and image as nbsim does.
 *
 * Frames are whole or absent: numrecs (the frame count in the header) reaches the disk only by
 * nc_sync after all of a frame's variables are written. When a write fails, the file is closed,
 * its numrecs is set back to the frames that completed and it is truncated to their end
 * (the classic formats' header keeps numrecs as a big-endian integer at byte 4, 32 bits in
 * CDF-2, 64 in CDF-5: the NetCDF classic format specification in the netcdf-c documentation,
 * and PnetCDF's CDF-5 one). */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int traj_netcdf_version(uint64_t n) {
    return n <= TRAJ_NETCDF_CDF2_MAX_N ? 2 : 5;
}

#ifdef NBSIM_HAVE_NETCDF

#include <errno.h>
#include <fcntl.h>
#include <netcdf.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 N in kilocalorie/mole/angstrom: 1e-10 J/angstrom / (4184 J / N_A). */
#define NC_NEWTON_IN_KCAL_MOL_A (1e-10 * 6.02214076e23 / 4184.0)

typedef struct {
    int ncid, open;
    int v_time, v_step, v_box, v_cell_origin, v_cell_lengths, v_cell_angles;
    int v_coordinates, v_velocities, v_forces, v_radius, v_mass, v_id, v_omega;
    float *buf;           /* 3n floats: one vector variable of one frame */
    int *id;              /* 1..n, every frame's ids */
    float *radius, *mass; /* as stored (frame 0), to refuse frames where they changed */
    uint64_t good_size;   /* file size after the last complete frame [bytes] */
    int version;          /* 2: CDF-2, 5: CDF-5 (traj_netcdf_version) */
} nc_writer;

int sim_traj_netcdf_available(void) {
    return 1;
}

/* nc_strerror for NetCDF codes; system errors (ENOSPC, EIO, ...) come back as errno values. */
static const char *nc_why(int code) {
    return code > 0 ? strerror(code) : nc_strerror(code);
}

static int put_text_att(int ncid, int var, const char *name, const char *value) {
    return nc_put_att_text(ncid, var, name, strlen(value), value);
}

/* units and, when scale != 0, scale_factor (a double, as MDAnalysis and VMD read it). */
static int put_units(int ncid, int var, const char *units, double scale) {
    int rc = put_text_att(ncid, var, "units", units);
    if (rc == NC_NOERR && scale != 0.0) {
        rc = nc_put_att_double(ncid, var, "scale_factor", NC_DOUBLE, 1, &scale);
    }
    return rc;
}

/* The run's parameters as global attributes nbsim_KEY (scene-file keys): doubles, gravity three
 * of them, hertz and triplets ints; the box is box_half. */
static int put_params(int ncid, const sim_params *p) {
    int rc = NC_NOERR;
    for (int k = 0; k < SIM_PARAM_COUNT && rc == NC_NOERR; ++k) {
        if (k == SIM_PARAM_BOX) {
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "nbsim_%s", sim_param_info_of((sim_param_id)k)->key);
        const double g[3] = {p->gravity.x, p->gravity.y, p->gravity.z};
        if (k == SIM_PARAM_GRAVITY) {
            rc = nc_put_att_double(ncid, NC_GLOBAL, name, NC_DOUBLE, 3, g);
        } else if (k == SIM_PARAM_PERIODIC) {
            char axes[8];
            rc = put_text_att(ncid, NC_GLOBAL, name, sim_periodic_text(p->periodic, "", axes, 8));
        } else if (sim_param_is_auto(p, (sim_param_id)k)) {
            rc = put_text_att(ncid, NC_GLOBAL, name, "auto");
        } else {
            const double v = traj_param_scalar(p, (sim_param_id)k);
            rc = nc_put_att_double(ncid, NC_GLOBAL, name, NC_DOUBLE, 1, &v);
        }
    }
    const int flags[2] = {p->hertz ? 1 : 0, p->triplets ? 1 : 0};
    if (rc == NC_NOERR) {
        rc = nc_put_att_int(ncid, NC_GLOBAL, "nbsim_hertz", NC_INT, 1, &flags[0]);
    }
    if (rc == NC_NOERR) {
        rc = nc_put_att_int(ncid, NC_GLOBAL, "nbsim_triplets", NC_INT, 1, &flags[1]);
    }
    return rc;
}

/* The nbsim_KEY attributes back, through the rules of scene files (traj_params_read). */
static sim_status get_params(int ncid, const char *path, size_t frame, traj_bodies *b,
                             sim_error *err) {
    int natts = 0;
    if (nc_inq_natts(ncid, &natts) != NC_NOERR) {
        return SIM_OK;
    }
    for (int a = 0; a < natts; ++a) {
        char name[NC_MAX_NAME + 1];
        nc_type type;
        size_t len = 0;
        if (nc_inq_attname(ncid, NC_GLOBAL, a, name) != NC_NOERR ||
            strncmp(name, "nbsim_", 6) != 0 ||
            nc_inq_att(ncid, NC_GLOBAL, name, &type, &len) != NC_NOERR || len < 1 ||
            (type != NC_CHAR && len > 3)) {
            continue;
        }
        char text[128], x[32], y[32], z[32];
        double v[3] = {0.0, 0.0, 0.0};
        if (type == NC_CHAR) { /* a word ("auto"); nbsim_units and other text are not parameters */
            if (len >= sizeof text || nc_get_att_text(ncid, NC_GLOBAL, name, text) != NC_NOERR) {
                continue;
            }
            text[len] = '\0';
        } else if (nc_get_att_double(ncid, NC_GLOBAL, name, v) != NC_NOERR) {
            continue;
        } else if (len == 3) {
            snprintf(text, sizeof text, "%s,%s,%s", traj_fmt_double(x, sizeof x, v[0]),
                     traj_fmt_double(y, sizeof y, v[1]), traj_fmt_double(z, sizeof z, v[2]));
        } else {
            snprintf(text, sizeof text, "%s", traj_fmt_double(x, sizeof x, v[0]));
        }
        if (traj_params_read(b, name + 6, text, path, frame, err) < 0) {
            return SIM_PARSE;
        }
    }
    return SIM_OK;
}

#define NC_TRY(call)                                                                               \
    do {                                                                                           \
        if ((rc = (call)) != NC_NOERR) {                                                           \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

static uint64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* After a failed frame: close, set numrecs back to the complete frames, cut the rest off. */
static void roll_back(sim_traj_writer *w, nc_writer *nc) {
    if (nc->open) {
        (void)nc_close(nc->ncid);
        nc->open = 0;
    }
    const int fd = open(w->path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    const int bytes = nc->version == 5 ? 8 : 4; /* numrecs, big-endian at byte 4 */
    unsigned char numrecs[8];
    for (int b = 0; b < bytes; ++b) {
        numrecs[b] = (unsigned char)(w->frames >> (8 * (bytes - 1 - b)));
    }
    (void)pwrite(fd, numrecs, (size_t)bytes, 4);
    (void)ftruncate(fd, (off_t)nc->good_size);
    (void)close(fd);
}

static sim_status nc_write(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err) {
    nc_writer *nc = w->nc;
    const uint32_t n = w->n;
    const size_t k = (size_t)w->frames;
    int rc = NC_NOERR;
    const char *what = "a frame";
    if (k == 0) {
        for (uint32_t i = 0; i < n; ++i) {
            traj_body body;
            traj_frame_body(f, i, &body);
            nc->radius[i] = (float)body.radius;
            nc->mass[i] = (float)body.mass;
        }
        what = "radius and mass";
        rc = nc_put_var_float(nc->ncid, nc->v_radius, nc->radius);
        rc = rc == NC_NOERR ? nc_put_var_float(nc->ncid, nc->v_mass, nc->mass) : rc;
        if (rc != NC_NOERR) {
            goto fail;
        }
    } else {
        for (uint32_t i = 0; i < n; ++i) {
            traj_body body;
            traj_frame_body(f, i, &body);
            if ((float)body.radius != nc->radius[i] || (float)body.mass != nc->mass[i]) {
                return sim_fail(err, SIM_BAD_ARGUMENT,
                                "'%s': body %u's radius or mass changed at frame %zu; NetCDF "
                                "stores them once (start a new trajectory)",
                                w->path, i + 1, k);
            }
        }
    }
    const size_t start3[3] = {k, 0, 0}, count3[3] = {1, n, 3};
    const int vars[4] = {nc->v_coordinates, nc->v_velocities, nc->v_forces, nc->v_omega};
    static const char *const names[4] = {"coordinates", "velocities", "forces", "omega"};
    for (int v = 0; v < (w->spin ? 4 : 3); ++v) {
        for (uint32_t i = 0; i < n; ++i) {
            traj_body body;
            traj_frame_body(f, i, &body);
            const double *src = v == 0   ? body.pos
                                : v == 1 ? body.vel
                                : v == 2 ? body.force
                                         : body.spin;
            for (int a = 0; a < 3; ++a) {
                nc->buf[3 * (size_t)i + (size_t)a] = (float)src[a]; /* float32: the convention's */
            }
        }
        what = names[v];
        NC_TRY(nc_put_vara_float(nc->ncid, vars[v], start3, count3, nc->buf));
    }
    const size_t id_start[2] = {k, 0}, id_count[2] = {1, n};
    what = "id";
    NC_TRY(nc_put_vara_int(nc->ncid, nc->v_id, id_start, id_count, nc->id));
    const size_t start2[1] = {k};
    const double step = (double)f->step; /* exact up to 2^53 steps */
    what = "time and step";
    NC_TRY(nc_put_var1_double(nc->ncid, nc->v_time, start2, &f->time));
    NC_TRY(nc_put_var1_double(nc->ncid, nc->v_step, start2, &step));
    NC_TRY(nc_put_var1_double(nc->ncid, nc->v_box, start2, &f->box_half));
    what = "the cell";
    const size_t cell_start[2] = {k, 0}, cell_count[2] = {1, 3};
    const double h = f->box_half, origin[3] = {-h, -h, -h}, lengths[3] = {2 * h, 2 * h, 2 * h};
    const double angles[3] = {90.0, 90.0, 90.0};
    NC_TRY(nc_put_vara_double(nc->ncid, nc->v_cell_origin, cell_start, cell_count, origin));
    NC_TRY(nc_put_vara_double(nc->ncid, nc->v_cell_lengths, cell_start, cell_count, lengths));
    NC_TRY(nc_put_vara_double(nc->ncid, nc->v_cell_angles, cell_start, cell_count, angles));
    what = "the frame count";
    NC_TRY(nc_sync(nc->ncid)); /* numrecs reaches the disk only now */
    nc->good_size = file_size(w->path);
    w->frames++;
    w->bytes = nc->good_size;
    return SIM_OK;
fail:
    roll_back(w, nc);
    return sim_fail(err, SIM_IO,
                    "cannot write trajectory '%s' (frame %zu, %s): %s; it keeps its %zu complete "
                    "frame%s",
                    w->path, k, what, nc_why(rc), k, k == 1 ? "" : "s");
}

static sim_status nc_close_writer(sim_traj_writer *w, sim_error *err) {
    nc_writer *nc = w->nc;
    sim_status st = SIM_OK;
    if (nc == NULL) {
        return SIM_OK;
    }
    if (nc->open) {
        const int rc = nc_close(nc->ncid);
        nc->open = 0;
        if (rc != NC_NOERR) {
            st = sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", w->path, nc_why(rc));
        }
        const int fd = open(w->path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) { /* late write-back errors (a full disk) surface here */
            if (fdatasync(fd) != 0 && st == SIM_OK) {
                st = sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", w->path,
                              strerror(errno));
            }
            close(fd);
        }
    }
    free(nc->buf);
    free(nc->id);
    free(nc->radius);
    free(nc->mass);
    free(nc);
    w->nc = NULL;
    return st;
}

static const sim_traj_writer_ops nc_ops = {nc_write, nc_close_writer};

/* Creates path as a trajectory of n bodies with no frame yet, in NetCDF variant `version` (2 or
 * 5): its dimensions, variables and attributes, left open in nc (nc->open). Nothing of N's size is
 * allocated here. */
static sim_status nc_define(nc_writer *nc, const char *path, uint32_t n, int spin,
                            const sim_params *params, int version, sim_error *err) {
    SIM_ASSERT(version == 2 || version == 5);
    nc->version = version;
    int rc =
        nc_create(path, NC_CLOBBER | (version == 5 ? NC_64BIT_DATA : NC_64BIT_OFFSET), &nc->ncid);
    if (rc != NC_NOERR) {
        return sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", path, nc_why(rc));
    }
    nc->open = 1;
    const int id = nc->ncid;
    int old_fill, d_frame, d_spatial, d_atom, d_cell_spatial, d_cell_angular, d_label;
    int v_spatial, v_cell_spatial, v_cell_angular;
    char title[160];
    snprintf(title, sizeof title, "nbsim: %u spheres between walls at +-box_half", n);
    /* No prefill: every byte of a frame is written anyway, and a failed one is cut off. */
    NC_TRY(nc_set_fill(id, NC_NOFILL, &old_fill));
    NC_TRY(put_text_att(id, NC_GLOBAL, "Conventions", "AMBER"));
    NC_TRY(put_text_att(id, NC_GLOBAL, "ConventionVersion", "1.0"));
    NC_TRY(put_text_att(id, NC_GLOBAL, "program", "nbsim"));
    NC_TRY(put_text_att(id, NC_GLOBAL, "programVersion", NBSIM_VERSION));
    NC_TRY(put_text_att(id, NC_GLOBAL, "title", title));
    NC_TRY(put_text_att(id, NC_GLOBAL, "nbsim_units",
                        "stored values are SI (m, s, m/s, N, kg); scale_factor converts the AMBER "
                        "variables to their units attribute"));
    if (params != NULL) {
        NC_TRY(put_params(id, params));
    }
    NC_TRY(nc_def_dim(id, "frame", NC_UNLIMITED, &d_frame));
    NC_TRY(nc_def_dim(id, "spatial", 3, &d_spatial));
    NC_TRY(nc_def_dim(id, "atom", n, &d_atom));
    NC_TRY(nc_def_dim(id, "cell_spatial", 3, &d_cell_spatial));
    NC_TRY(nc_def_dim(id, "cell_angular", 3, &d_cell_angular));
    NC_TRY(nc_def_dim(id, "label", 5, &d_label));
    NC_TRY(nc_def_var(id, "spatial", NC_CHAR, 1, &d_spatial, &v_spatial));
    NC_TRY(nc_def_var(id, "cell_spatial", NC_CHAR, 1, &d_cell_spatial, &v_cell_spatial));
    const int d_angular_label[2] = {d_cell_angular, d_label};
    NC_TRY(nc_def_var(id, "cell_angular", NC_CHAR, 2, d_angular_label, &v_cell_angular));
    /* Per body, once. */
    NC_TRY(nc_def_var(id, "radius", NC_FLOAT, 1, &d_atom, &nc->v_radius));
    NC_TRY(put_units(id, nc->v_radius, "meter", 0.0));
    NC_TRY(nc_def_var(id, "mass", NC_FLOAT, 1, &d_atom, &nc->v_mass));
    NC_TRY(put_units(id, nc->v_mass, "kilogram", 0.0));
    /* Per frame: scalars and cell first, then the ids and the large vector variables. The ids
     * are per frame, as LAMMPS's dump netcdf writes them: ASE reads `id` as every frame's atom
     * order (a per-atom id made it fail with IndexError); OVITO and nbsim take either. */
    NC_TRY(nc_def_var(id, "time", NC_DOUBLE, 1, &d_frame, &nc->v_time));
    NC_TRY(put_units(id, nc->v_time, "picosecond", 1e12));
    NC_TRY(nc_def_var(id, "step", NC_DOUBLE, 1, &d_frame, &nc->v_step));
    NC_TRY(nc_def_var(id, "box_half", NC_DOUBLE, 1, &d_frame, &nc->v_box));
    NC_TRY(put_units(id, nc->v_box, "meter", 0.0));
    const int d_cell[2] = {d_frame, d_cell_spatial}, d_angles[2] = {d_frame, d_cell_angular};
    NC_TRY(nc_def_var(id, "cell_origin", NC_DOUBLE, 2, d_cell, &nc->v_cell_origin));
    NC_TRY(put_units(id, nc->v_cell_origin, "meter", 0.0));
    NC_TRY(nc_def_var(id, "cell_lengths", NC_DOUBLE, 2, d_cell, &nc->v_cell_lengths));
    NC_TRY(put_units(id, nc->v_cell_lengths, "angstrom", 1e10));
    NC_TRY(nc_def_var(id, "cell_angles", NC_DOUBLE, 2, d_angles, &nc->v_cell_angles));
    NC_TRY(put_units(id, nc->v_cell_angles, "degree", 0.0));
    const int d_ids[2] = {d_frame, d_atom};
    NC_TRY(nc_def_var(id, "id", NC_INT, 2, d_ids, &nc->v_id));
    const int d_vec[3] = {d_frame, d_atom, d_spatial};
    NC_TRY(nc_def_var(id, "coordinates", NC_FLOAT, 3, d_vec, &nc->v_coordinates));
    NC_TRY(put_units(id, nc->v_coordinates, "angstrom", 1e10));
    NC_TRY(nc_def_var(id, "velocities", NC_FLOAT, 3, d_vec, &nc->v_velocities));
    NC_TRY(put_units(id, nc->v_velocities, "angstrom/picosecond", 1e-2));
    NC_TRY(nc_def_var(id, "forces", NC_FLOAT, 3, d_vec, &nc->v_forces));
    NC_TRY(put_units(id, nc->v_forces, "kilocalorie/mole/angstrom", NC_NEWTON_IN_KCAL_MOL_A));
    if (spin) {
        NC_TRY(nc_def_var(id, "omega", NC_FLOAT, 3, d_vec, &nc->v_omega));
        NC_TRY(put_units(id, nc->v_omega, "radian/second", 0.0));
    }
    NC_TRY(nc_enddef(id));
    NC_TRY(nc_put_var_text(id, v_spatial, "xyz"));
    NC_TRY(nc_put_var_text(id, v_cell_spatial, "abc"));
    NC_TRY(nc_put_var_text(id, v_cell_angular, "alphabeta gamma"));
    NC_TRY(nc_sync(id));
    nc->good_size = file_size(path);
    return SIM_OK;
fail:
    return sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", path, nc_why(rc));
}

static sim_status open_version(sim_traj_writer *w, int version, sim_error *err) {
    w->ops = &nc_ops;
    nc_writer *nc = calloc(1, sizeof *nc);
    if (nc == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "'%s': no memory for a NetCDF writer", w->path);
    }
    w->nc = nc;
    const uint32_t n = w->n;
    SIM_TRY(nc_define(nc, w->path, n, w->spin, w->has_params ? &w->params : NULL, version, err));
    nc->buf = malloc((size_t)n * 3 * sizeof *nc->buf);
    nc->id = malloc((size_t)n * sizeof *nc->id);
    nc->radius = malloc((size_t)n * sizeof *nc->radius);
    nc->mass = malloc((size_t)n * sizeof *nc->mass);
    if (nc->buf == NULL || nc->id == NULL || nc->radius == NULL || nc->mass == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "'%s': no memory for %u bodies", w->path, n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        nc->id[i] = (int)(i + 1);
    }
    return SIM_OK;
}

sim_status traj_netcdf_open(sim_traj_writer *w, sim_error *err) {
    return open_version(w, traj_netcdf_version(w->n), err);
}

sim_status traj_netcdf_reopen(sim_traj_writer *w, int version, sim_error *err) {
    SIM_ASSERT(w->format == SIM_TRAJ_NETCDF && w->frames == 0);
    SIM_TRY(nc_close_writer(w, err));
    return open_version(w, version, err);
}

sim_status traj_netcdf_define(const char *path, uint32_t n, int spin, int version, sim_error *err) {
    nc_writer nc;
    memset(&nc, 0, sizeof nc);
    const sim_status st = nc_define(&nc, path, n, spin, NULL, version, err);
    if (nc.open) {
        const int rc = nc_close(nc.ncid);
        if (rc != NC_NOERR && st == SIM_OK) {
            return sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", path, nc_why(rc));
        }
    }
    return st;
}

/* ---- reading ---- */

/* The record section of a classic (CDF-1), 64-bit offset (CDF-2) or 64-bit data (CDF-5) file,
 * from its header (the NetCDF classic format specification, netcdf-c's
 * docs/file_format_specifications.md; CDF-5 widens every count, length, dimension id and vsize
 * to 64 bits, tags and types stay 32): libnetcdf believes the header's record count and reads a
 * record cut off by a truncated file as zeros, without an error, so the reader checks the
 * file's length against the layout itself. */
typedef struct {
    uint64_t numrecs;   /* records the header announces */
    uint64_t rec_begin; /* offset of the first record */
    uint64_t rec_size;  /* bytes per record (all record variables) */
    uint64_t fixed_end; /* end of the last non-record variable */
} nc_layout;

typedef struct {
    FILE *f;
    int ok;
    int count_bytes; /* a count or length (NON_NEG): 4, or 8 in CDF-5 */
} be_reader;

static uint64_t be_read(be_reader *r, int bytes) {
    unsigned char b[8] = {0};
    if (!r->ok || fread(b, 1, (size_t)bytes, r->f) != (size_t)bytes) {
        r->ok = 0;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
        v = v << 8 | b[i];
    }
    return v;
}

static void be_skip(be_reader *r, uint64_t bytes) {
    if (r->ok && (bytes > (uint64_t)INT64_MAX || fseeko(r->f, (off_t)bytes, SEEK_CUR) != 0)) {
        r->ok = 0;
    }
}

static uint64_t be_count(be_reader *r) {
    return be_read(r, r->count_bytes);
}

static void skip_name(be_reader *r) {
    const uint64_t len = be_count(r);
    be_skip(r, len > UINT64_MAX - 3 ? UINT64_MAX : (len + 3) / 4 * 4);
}

/* nc_type sizes: byte, char, short, int, float, double (1..6); CDF-5's ubyte, ushort, uint,
 * int64, uint64 (7..11). */
static uint64_t type_size(uint64_t type) {
    static const uint64_t sizes[12] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    return type >= 1 && type <= 11 ? sizes[type] : 0;
}

static void skip_atts(be_reader *r) {
    const uint64_t tag = be_read(r, 4), count = be_count(r);
    if (tag != 0 && tag != 0x0C) {
        r->ok = 0;
    }
    for (uint64_t i = 0; r->ok && i < count; ++i) {
        skip_name(r);
        const uint64_t size = type_size(be_read(r, 4));
        const uint64_t n = be_count(r);
        if (n > UINT64_MAX / 16) {
            r->ok = 0;
        }
        if (size == 0) {
            r->ok = 0;
        }
        be_skip(r, (n * size + 3) / 4 * 4);
    }
}

/* 1 and *l filled for a classic, 64-bit offset or 64-bit data file; 0 for any other (netCDF-4,
 * a streamed file: nothing is checked here); -1 for a classic header that ends or goes wrong
 * before its last variable (a file cut off inside its header). */
static int classic_layout(const char *path, nc_layout *l) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    unsigned char magic[4] = {0};
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "CDF", 3) != 0 ||
        (magic[3] != 1 && magic[3] != 2 && magic[3] != 5)) {
        fclose(f);
        return 0;
    }
    be_reader r = {f, 1, magic[3] == 5 ? 8 : 4};
    const int offset_bytes = magic[3] == 1 ? 4 : 8;
    memset(l, 0, sizeof *l);
    l->numrecs = be_count(&r);
    if (l->numrecs == (r.count_bytes == 8 ? UINT64_MAX : 0xFFFFFFFFu)) {
        fclose(f); /* streaming: the count is not in the header */
        return 0;
    }
    int64_t record_dim = -1;
    const uint64_t dim_tag = be_read(&r, 4), dims = be_count(&r);
    r.ok = r.ok && (dim_tag == 0 || dim_tag == 0x0A);
    for (uint64_t d = 0; r.ok && d < dims; ++d) {
        skip_name(&r);
        if (be_count(&r) == 0 && record_dim < 0) {
            record_dim = (int64_t)d;
        }
    }
    skip_atts(&r);
    const uint64_t var_tag = be_read(&r, 4), vars = be_count(&r);
    r.ok = r.ok && (var_tag == 0 || var_tag == 0x0B);
    l->rec_begin = UINT64_MAX;
    for (uint64_t v = 0; r.ok && v < vars; ++v) {
        skip_name(&r);
        const uint64_t ndims = be_count(&r);
        int record = 0;
        for (uint64_t k = 0; r.ok && k < ndims; ++k) {
            const uint64_t id = be_count(&r);
            record |= k == 0 && record_dim >= 0 && id == (uint64_t)record_dim;
        }
        skip_atts(&r);
        (void)be_read(&r, 4); /* nc_type */
        const uint64_t vsize = be_count(&r);
        const uint64_t begin = be_read(&r, offset_bytes);
        if (record) {
            l->rec_size += vsize;
            l->rec_begin = begin < l->rec_begin ? begin : l->rec_begin;
        } else if (begin + vsize > l->fixed_end) {
            l->fixed_end = begin + vsize;
        }
    }
    fclose(f);
    return !r.ok ? -1 : l->rec_size > 0;
}

/* Whether the file holds all the records its header announces; else *complete is how many it
 * holds whole, and *size its length [bytes]. */
static int records_complete(const char *path, const nc_layout *l, uint64_t *complete,
                            uint64_t *size) {
    struct stat st;
    *size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    *complete = l->numrecs;
    if (*size < l->fixed_end || *size < l->rec_begin) {
        *complete = 0;
    } else if ((*size - l->rec_begin) / l->rec_size < l->numrecs) {
        *complete = (*size - l->rec_begin) / l->rec_size;
    }
    return *complete == l->numrecs && *size >= l->fixed_end;
}

/* A per-body variable of the last frame (dims (frame, atom[, spatial])) or of the file (dims
 * (atom[, spatial])), as doubles; 0 when the file has no such variable. */
static int read_body_var(int ncid, const char *name, size_t frame, uint32_t n, int width,
                         double *out, int *rc) {
    int var, ndims, dims[NC_MAX_VAR_DIMS];
    if (nc_inq_varid(ncid, name, &var) != NC_NOERR) {
        return 0;
    }
    *rc = nc_inq_varndims(ncid, var, &ndims);
    if (*rc != NC_NOERR) {
        return 0;
    }
    const int per_frame = ndims == (width == 1 ? 2 : 3);
    const size_t start[3] = {per_frame ? frame : 0, 0, 0};
    const size_t count[3] = {per_frame ? 1 : (size_t)n, per_frame ? (size_t)n : (size_t)width,
                             (size_t)width};
    (void)dims;
    *rc = nc_get_vara_double(ncid, var, start, count, out);
    return *rc == NC_NOERR;
}

sim_status traj_netcdf_read_last(const char *path, traj_bodies *b, sim_error *err) {
    int ncid, rc = nc_open(path, NC_NOWRITE, &ncid);
    if (rc != NC_NOERR) {
        /* A file that cannot be opened (no such file, no permission) is I/O; whatever libnetcdf
         * finds wrong with bytes it could read (also as EINVAL) is a bad file, refused as a bad
         * text scene is. */
        FILE *f = fopen(path, "rb");
        const int e = errno;
        if (f == NULL) {
            return sim_fail(err, SIM_IO, "cannot open trajectory '%s': %s", path, strerror(e));
        }
        fclose(f);
        return sim_fail(err, SIM_PARSE, "not a readable NetCDF trajectory '%s': %s", path,
                        nc_why(rc));
    }
    int d_atom, d_frame;
    size_t n = 0, frames = 0;
    sim_status st = SIM_OK;
    nc_layout layout;
    uint64_t whole = 0, size = 0;
    int truncated = 0, classic = 0;
    if ((classic = classic_layout(path, &layout)) < 0) {
        st = sim_fail(err, SIM_PARSE, "%s: truncated or damaged: its header ends too early", path);
    } else if (nc_inq_dimid(ncid, "atom", &d_atom) != NC_NOERR ||
               nc_inq_dimid(ncid, "frame", &d_frame) != NC_NOERR ||
               nc_inq_dimlen(ncid, d_atom, &n) != NC_NOERR ||
               nc_inq_dimlen(ncid, d_frame, &frames) != NC_NOERR) {
        st = sim_fail(err, SIM_PARSE,
                      "%s: not an AMBER NetCDF trajectory (no atom or frame "
                      "dimension)",
                      path);
    } else if (frames == 0) {
        st = sim_fail(err, SIM_PARSE, "%s: no complete frame", path);
    } else if (n < 1 || n > UINT32_MAX) {
        st = sim_fail(err, SIM_PARSE, "%s: %zu atoms", path, n);
    } else if (classic && layout.numrecs == frames &&
               !records_complete(path, &layout, &whole, &size)) {
        /* Cut off (a copy that stopped, a full disk outside nbsim): the complete frames stay
         * readable, as in the text formats; without one, or without the per-body variables
         * before the frames, the file is refused. */
        if (whole == 0 || size < layout.fixed_end) {
            st =
                sim_fail(err, SIM_PARSE,
                         "%s: truncated: the file ends at byte %llu, before its first complete "
                         "frame (its header announces %zu frames of %llu bytes from byte %llu)",
                         path, (unsigned long long)size, frames,
                         (unsigned long long)layout.rec_size, (unsigned long long)layout.rec_begin);
        } else {
            frames = (size_t)whole;
            truncated = 1;
        }
    }
    const size_t frame = frames - 1;
    int var;
    const int has_mass = st == SIM_OK && nc_inq_varid(ncid, "mass", &var) == NC_NOERR;
    const int has_id = st == SIM_OK && nc_inq_varid(ncid, "id", &var) == NC_NOERR;
    const int has_spin = st == SIM_OK && nc_inq_varid(ncid, "omega", &var) == NC_NOERR;
    if (st == SIM_OK) {
        st = traj_bodies_alloc(b, (uint32_t)n, has_mass, 0, has_id, has_spin, path, err);
    }
    double *tmp = st == SIM_OK ? malloc(n * sizeof *tmp) : NULL;
    if (st == SIM_OK && tmp == NULL) {
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "%s: no memory for %zu atoms", path, n);
    }
    if (st == SIM_OK && !read_body_var(ncid, "coordinates", frame, (uint32_t)n, 3, b->pos, &rc)) {
        st = sim_fail(err, SIM_PARSE, "%s: frame %zu has no coordinates%s%s", path, frame,
                      rc != NC_NOERR ? ": " : "", rc != NC_NOERR ? nc_why(rc) : "");
    }
    rc = NC_NOERR;
    if (st == SIM_OK && !read_body_var(ncid, "radius", frame, (uint32_t)n, 1, b->radius, &rc)) {
        st = sim_fail(err, SIM_PARSE,
                      "%s: frame %zu has no radius variable%s%s: nbsim needs a radius per sphere",
                      path, frame, rc != NC_NOERR ? ": " : "", rc != NC_NOERR ? nc_why(rc) : "");
    }
    if (st == SIM_OK) {
        (void)read_body_var(ncid, "velocities", frame, (uint32_t)n, 3, b->vel, &rc);
        if (has_spin) {
            (void)read_body_var(ncid, "omega", frame, (uint32_t)n, 3, b->spin, &rc);
        }
        if (has_mass) {
            (void)read_body_var(ncid, "mass", frame, (uint32_t)n, 1, b->mass, &rc);
        }
        if (has_id && read_body_var(ncid, "id", frame, (uint32_t)n, 1, tmp, &rc)) {
            for (size_t i = 0; i < n; ++i) {
                b->id[i] = (int64_t)tmp[i];
            }
        }
        const size_t at[1] = {frame};
        double v = 0.0;
        if (nc_inq_varid(ncid, "box_half", &var) == NC_NOERR &&
            nc_get_var1_double(ncid, var, at, &v) == NC_NOERR && v > 0.0) {
            b->has_box = 1;
            b->box_half = v;
        }
        if (nc_inq_varid(ncid, "time", &var) == NC_NOERR &&
            nc_get_var1_double(ncid, var, at, &v) == NC_NOERR) {
            b->info.time = v;
        }
        if (nc_inq_varid(ncid, "step", &var) == NC_NOERR &&
            nc_get_var1_double(ncid, var, at, &v) == NC_NOERR && v >= 0.0) {
            b->info.step = (uint64_t)v;
        }
        b->info.format = SIM_TRAJ_NETCDF;
        b->info.frames = frames;
        b->info.frame = frame;
        b->info.truncated = truncated;
        st = get_params(ncid, path, frame, b, err);
    }
    free(tmp);
    nc_close(ncid);
    return st;
}

#else /* no NetCDF in this build */

int sim_traj_netcdf_available(void) {
    return 0;
}

sim_status traj_netcdf_open(sim_traj_writer *w, sim_error *err) {
    return sim_fail(err, SIM_UNSUPPORTED, "'%s': this build of nbsim has no NetCDF", w->path);
}

sim_status traj_netcdf_reopen(sim_traj_writer *w, int version, sim_error *err) {
    (void)version;
    return traj_netcdf_open(w, err);
}

sim_status traj_netcdf_define(const char *path, uint32_t n, int spin, int version, sim_error *err) {
    (void)n;
    (void)spin;
    (void)version;
    return sim_fail(err, SIM_UNSUPPORTED, "'%s': this build of nbsim has no NetCDF", path);
}

sim_status traj_netcdf_read_last(const char *path, traj_bodies *b, sim_error *err) {
    (void)b;
    return sim_fail(err, SIM_UNSUPPORTED, "'%s': this build of nbsim has no NetCDF", path);
}

#endif
