/* SPDX-License-Identifier: MIT
 * nbsim — trajectory files: the format from the extension, the writer object, and the checks
 * that turn a reader's last frame into a state (id order, masses, box, bodies inside it). */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nbsim/scene.h"

/* ---- formats ---- */

static const char *const format_ext[] = {
#define SIM_TRAJ_EXT(id, ext, label) ext,
    SIM_TRAJ_FORMAT_LIST(SIM_TRAJ_EXT)
#undef SIM_TRAJ_EXT
};

static const char *const format_label[] = {
#define SIM_TRAJ_LABEL(id, ext, label) label,
    SIM_TRAJ_FORMAT_LIST(SIM_TRAJ_LABEL)
#undef SIM_TRAJ_LABEL
};

sim_traj_format sim_traj_format_from_path(const char *path) {
    const size_t len = path ? strlen(path) : 0;
    for (int f = 0; f < SIM_TRAJ_FORMAT_COUNT; ++f) {
        const size_t e = strlen(format_ext[f]);
        if (len > e && strcasecmp(path + len - e, format_ext[f]) == 0) {
            return (sim_traj_format)f;
        }
    }
    return SIM_TRAJ_NONE;
}

const char *sim_traj_format_extension(sim_traj_format f) {
    return f >= 0 && f < SIM_TRAJ_FORMAT_COUNT ? format_ext[f] : NULL;
}

const char *sim_traj_format_label(sim_traj_format f) {
    return f >= 0 && f < SIM_TRAJ_FORMAT_COUNT ? format_label[f] : "unknown";
}

const char *sim_traj_format_list(void) {
    return "trajectory formats: "
#define SIM_TRAJ_ITEM(id, ext, label) ext " (" label ") "
        SIM_TRAJ_FORMAT_LIST(SIM_TRAJ_ITEM)
#undef SIM_TRAJ_ITEM
            ;
}

/* ---- writer ---- */

sim_status sim_traj_writer_open(sim_traj_writer **out, const char *path, uint32_t n,
                                sim_error *err) {
    return sim_traj_writer_open_params(out, path, n, NULL, err);
}

sim_status sim_traj_writer_open_params(sim_traj_writer **out, const char *path, uint32_t n,
                                       const sim_params *params, sim_error *err) {
    SIM_ASSERT(out != NULL && path != NULL);
    *out = NULL;
    const sim_traj_format format = sim_traj_format_from_path(path);
    if (format == SIM_TRAJ_NONE) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "'%s': unknown trajectory extension (%s)", path,
                        sim_traj_format_list());
    }
    if (n < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "'%s': a trajectory needs at least one body", path);
    }
    if (format == SIM_TRAJ_NETCDF && !sim_traj_netcdf_available()) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "'%s': this build of nbsim has no NetCDF (install libnetcdf-dev and "
                        "rebuild), use .xyz or .lammpstrj",
                        path);
    }
    sim_traj_writer *w = calloc(1, sizeof *w);
    char *copy = malloc(strlen(path) + 1);
    if (w == NULL || copy == NULL) {
        free(w);
        free(copy);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "'%s': no memory for a trajectory writer", path);
    }
    strcpy(copy, path);
    w->path = copy;
    w->format = format;
    w->n = n;
    w->text.fd = -1;
    w->has_params = params != NULL;
    if (params != NULL) {
        w->params = *params;
        w->spin = params->friction > 0.0 || params->rolling_friction > 0.0;
    }
    sim_status st = format == SIM_TRAJ_XYZ      ? traj_xyz_open(w, err)
                    : format == SIM_TRAJ_LAMMPS ? traj_lammps_open(w, err)
                    : format == SIM_TRAJ_VTK    ? traj_vtk_open(w, err)
                                                : traj_netcdf_open(w, err);
    if (st != SIM_OK) {
        const int created = w->text.fd >= 0 || w->nc != NULL;
        if (w->ops != NULL) {
            (void)w->ops->close(w, NULL);
        }
        if (created) {
            unlink(path); /* nothing is left behind by a failed open */
        }
        free(w->path);
        free(w);
        return st;
    }
    *out = w;
    return SIM_OK;
}

sim_status sim_traj_writer_write(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err) {
    SIM_ASSERT(w != NULL && f != NULL &&
               ((f->pos != NULL && f->vel != NULL) || (f->pos_d != NULL && f->vel_d != NULL)));
    if (w->failed != SIM_OK) {
        return sim_fail(err, w->failed, "%s", w->failure);
    }
    if (f->n != w->n && w->format == SIM_TRAJ_NETCDF) { /* its bodies are a dimension */
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "'%s': a frame of %u bodies in a trajectory of %u (N changed: start a new "
                        "file)",
                        w->path, f->n, w->n);
    }
    sim_error local;
    sim_error_clear(&local);
    const sim_status st = w->ops->write(w, f, &local);
    if (st != SIM_OK) {
        w->failed = st;
        snprintf(w->failure, sizeof w->failure, "%s", local.message);
        return sim_fail(err, st, "%s", local.message);
    }
    return SIM_OK;
}

sim_status sim_traj_writer_close(sim_traj_writer *w, sim_error *err) {
    if (w == NULL) {
        return SIM_OK;
    }
    sim_error local;
    sim_error_clear(&local);
    sim_status st = w->ops->close(w, &local);
    if (w->failed != SIM_OK) {
        st = sim_fail(err, w->failed, "%s", w->failure);
    } else if (st != SIM_OK) {
        sim_fail(err, st, "%s", local.message);
    }
    free(w->path);
    free(w);
    return st;
}

uint64_t sim_traj_writer_frames(const sim_traj_writer *w) {
    return w->frames;
}

uint64_t sim_traj_writer_bytes(const sim_traj_writer *w) {
    return w->bytes;
}

sim_traj_format sim_traj_writer_format(const sim_traj_writer *w) {
    return w->format;
}

/* ---- reading ---- */

typedef struct {
    int64_t id;
    uint32_t index;
} id_slot;

static int by_id(const void *a, const void *b) {
    const int64_t x = ((const id_slot *)a)->id, y = ((const id_slot *)b)->id;
    return (x > y) - (x < y);
}

/* The order to take bodies in: by id when the file has ids (which must be distinct). */
static sim_status body_order(const char *path, const traj_bodies *b, uint32_t *order,
                             sim_error *err) {
    if (b->id == NULL) {
        for (uint32_t i = 0; i < b->n; ++i) {
            order[i] = i;
        }
        return SIM_OK;
    }
    id_slot *s = malloc((size_t)b->n * sizeof *s);
    if (s == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "%s: no memory to sort %u ids", path, b->n);
    }
    for (uint32_t i = 0; i < b->n; ++i) {
        s[i] = (id_slot){b->id[i], i};
    }
    qsort(s, b->n, sizeof *s, by_id);
    sim_status st = SIM_OK;
    for (uint32_t i = 0; i < b->n; ++i) {
        if (i > 0 && s[i].id == s[i - 1].id) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu: id %lld appears twice", path,
                          (unsigned long long)b->info.frame, (long long)s[i].id);
            break;
        }
        order[i] = s[i].index;
    }
    free(s);
    return st;
}

static sim_status to_state(const char *path, const traj_bodies *b, double box_half, sim_state *out,
                           sim_error *err) {
    uint32_t *order = malloc((size_t)b->n * sizeof *order);
    if (order == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "%s: no memory for %u bodies", path, b->n);
    }
    sim_state s = {0};
    sim_status st = body_order(path, b, order, err);
    if (st == SIM_OK) {
        st = sim_state_alloc(&s, b->n, err);
    }
    const unsigned long long frame = b->info.frame;
    for (uint32_t k = 0; st == SIM_OK && k < b->n; ++k) {
        const uint32_t i = order[k];
        const double *x = b->pos + 3 * (size_t)i, *v = b->vel + 3 * (size_t)i;
        const double r = b->radius[i];
        /* Without a mass column: the density column, else the built-in scenes' 1 kg/m^3. */
        const double m = b->mass      ? b->mass[i]
                         : b->density ? sim_sphere_mass(r, b->density[i])
                                      : sim_sphere_mass(r, 1.0);
        const long long id = b->id ? (long long)b->id[i] : (long long)i + 1;
        if (!(r > 0.0)) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu, body id %lld: radius %g must be > 0",
                          path, frame, id, r);
        } else if (!(m > 0.0 && isfinite(m))) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu, body id %lld: mass %g must be > 0", path,
                          frame, id, m);
        } else if (!(fabs(x[0]) <= box_half && fabs(x[1]) <= box_half && fabs(x[2]) <= box_half)) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu, body id %lld: centre (%g, %g, %g) is beyond the walls "
                          "at +-%g (box_half)",
                          path, frame, id, x[0], x[1], x[2], box_half);
        } else {
            const double per = b->vel_is_momentum ? 1.0 / m : 1.0; /* momenta: p / m */
            s.pos[k] = (sim_vec4d){x[0], x[1], x[2], r};
            s.vel[k] = (sim_vec4d){per * v[0], per * v[1], per * v[2], m};
            if (b->spin != NULL) {
                const double *w = b->spin + 3 * (size_t)i;
                s.spin[k] = (sim_vec4d){w[0], w[1], w[2], 0.0};
            }
        }
    }
    free(order);
    if (st != SIM_OK) {
        sim_state_free(&s);
        return st;
    }
    *out = s;
    return SIM_OK;
}

sim_status sim_traj_read_last(const char *path, sim_params *params_inout, sim_state *out,
                              sim_traj_info *info, sim_error *err) {
    SIM_ASSERT(path != NULL && params_inout != NULL && out != NULL);
    const sim_traj_format format = sim_traj_format_from_path(path);
    traj_bodies b;
    memset(&b, 0, sizeof b);
    sim_status st;
    switch (format) {
    case SIM_TRAJ_XYZ:
        st = traj_xyz_read_last(path, &b, err);
        break;
    case SIM_TRAJ_LAMMPS:
        st = traj_lammps_read_last(path, &b, err);
        break;
    case SIM_TRAJ_NETCDF:
        st = sim_traj_netcdf_available()
                 ? traj_netcdf_read_last(path, &b, err)
                 : sim_fail(err, SIM_UNSUPPORTED, "'%s': this build of nbsim has no NetCDF", path);
        break;
    case SIM_TRAJ_VTK:
        st = sim_fail(err, SIM_UNSUPPORTED,
                      "'%s': nbsim writes ParaView series but does not read them back: continue "
                      "from a saved state (--save-state) or an .xyz, .lammpstrj or .nc dump",
                      path);
        break;
    default:
        st = sim_fail(err, SIM_BAD_ARGUMENT, "'%s': unknown trajectory extension (%s)", path,
                      sim_traj_format_list());
        break;
    }
    const double box_half = b.has_box ? b.box_half : params_inout->box_half;
    if (st == SIM_OK) {
        st = to_state(path, &b, box_half, out, err);
    }
    if (st == SIM_OK) {
        traj_params_apply(&b, params_inout);
        params_inout->box_half = box_half;
        b.info.has_box = b.has_box;
        b.info.params_found = b.params_found | (b.has_box ? 1u << SIM_PARAM_BOX : 0u);
        if (info != NULL) {
            *info = b.info;
        }
    }
    traj_bodies_free(&b);
    return st;
}
