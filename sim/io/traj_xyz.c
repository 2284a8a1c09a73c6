/* SPDX-License-Identifier: MIT
 * nbsim — extended XYZ trajectories (the flavour ASE, OVITO and QUIP read and write).
 *
 * A frame is a count line, a comment line of key=value pairs, then one line per body:
 *
 *   3
 *   Lattice="16 0 0 0 16 0 0 0 16" Origin="-8 -8 -8" Properties=species:S:1:id:I:1:pos:R:3:
 *   velo:R:3:momenta:R:3:radius:R:1:mass:R:1:masses:R:1:forces:R:3 Time=0.5 Step=2500
 *   pbc="F F F"                                                             (one line)
 *   X 1 0.5 -1.25 3 2 0 0 1.04719755 0 0 0.5 0.523598776 0.523598776 0 0 0
 *
 * The lattice is the box (pbc "T" on its periodic axes, "F" where it has walls); Origin is OVITO's
 * key for the cell's corner (ASE keeps it in atoms.info). Property names are the readers' own, and
 * where OVITO and ASE name a quantity differently both columns are written: OVITO maps species, id,
 * pos, velo, radius, mass and forces to its Particle Type, Particle Identifier, Position,
 * Velocity, Radius, Mass and Force; ASE takes species as the symbols (X: its dummy element),
 * pos as positions, and reads velocities only as momenta / masses (its get_velocities and
 * get_masses; a `velo` or `mass` column is an opaque array to it, so velocities came back 0
 * and masses 1). nbsim reads velo, else momenta / masses. */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- writing ---- */

static sim_status xyz_write(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err) {
    char header[2048], params[1024] = "", L[32], h[32], t[32];
    traj_fmt_double(L, sizeof L, 2.0 * f->box_half);
    traj_fmt_double(h, sizeof h, -f->box_half);
    traj_fmt_double(t, sizeof t, f->time);
    if (w->has_params) {
        params[0] = ' ';
        traj_params_text(params + 1, sizeof params - 1, &w->params, "nbsim_", 1);
    }
    const int len =
        snprintf(header, sizeof header,
                 "%u\nLattice=\"%s 0 0 0 %s 0 0 0 %s\" Origin=\"%s %s %s\" "
                 "Properties=species:S:1:id:I:1:pos:R:3:velo:R:3:momenta:R:3:radius:R:1:mass:R:1:"
                 "masses:R:1:forces:R:3%s Time=%s Step=%llu pbc=\"%c %c %c\"%s\n",
                 f->n, L, L, L, h, h, h, w->spin ? ":omega:R:3" : "", t,
                 (unsigned long long)f->step, (f->periodic & 1) ? 'T' : 'F',
                 (f->periodic & 2) ? 'T' : 'F', (f->periodic & 4) ? 'T' : 'F', params);
    SIM_ASSERT(len > 0 && (size_t)len < sizeof header);
    return traj_text_frame(w, header, (size_t)len, f, err);
}

static const sim_traj_writer_ops xyz_ops = {xyz_write, traj_text_close};

sim_status traj_xyz_open(sim_traj_writer *w, sim_error *err) {
    w->ops = &xyz_ops;
    return traj_text_open(w, err);
}

/* ---- reading ---- */

/* The comment line's key=value pairs: values may be quoted ("..." or {...}). */
typedef struct {
    char lattice[512], origin[256], properties[1024];
    double time;
    uint64_t step;
    int has_lattice, has_origin, has_properties;
} xyz_comment;

/* Reads the comment line into *c, and nbsim's parameters (nbsim_KEY=VALUE) into b; a parameter
 * whose value breaks its rule is an error naming the file and the frame. */
static sim_status parse_comment(const char *line, size_t len, xyz_comment *c, traj_bodies *b,
                                const char *path, uint64_t frame, sim_error *err) {
    memset(c, 0, sizeof *c);
    size_t i = 0;
    while (i < len) {
        while (i < len && isspace((unsigned char)line[i])) {
            ++i;
        }
        const size_t key = i;
        while (i < len && line[i] != '=' && !isspace((unsigned char)line[i])) {
            ++i;
        }
        const size_t key_len = i - key;
        if (i >= len || line[i] != '=') {
            continue; /* a flag without a value */
        }
        ++i;
        size_t val = i, val_len;
        if (i < len && (line[i] == '"' || line[i] == '{')) {
            const char close = line[i] == '"' ? '"' : '}';
            val = ++i;
            while (i < len && line[i] != close) {
                ++i;
            }
            val_len = i - val;
            if (i < len) {
                ++i;
            }
        } else {
            while (i < len && !isspace((unsigned char)line[i])) {
                ++i;
            }
            val_len = i - val;
        }
        char value[1024];
        if (!traj_line_copy(value, sizeof value, line + val, val_len)) {
            continue;
        }
#define KEY_IS(name) (key_len == strlen(name) && strncasecmp(line + key, name, key_len) == 0)
        if (KEY_IS("Lattice")) {
            c->has_lattice = traj_line_copy(c->lattice, sizeof c->lattice, value, val_len);
        } else if (KEY_IS("Origin")) {
            c->has_origin = traj_line_copy(c->origin, sizeof c->origin, value, val_len);
        } else if (KEY_IS("Properties")) {
            c->has_properties = traj_line_copy(c->properties, sizeof c->properties, value, val_len);
        } else if (KEY_IS("Time")) {
            double t;
            c->time = traj_parse_double(value, &t) ? t : 0.0;
        } else if (KEY_IS("Step") || KEY_IS("Timestep")) {
            c->step = strtoull(value, NULL, 10);
        } else if (key_len > 6 && key_len < 64 && strncmp(line + key, "nbsim_", 6) == 0) {
            char name[64];
            traj_line_copy(name, sizeof name, line + key + 6, key_len - 6);
            if (traj_params_read(b, name, value, path, frame, err) < 0) {
                return SIM_PARSE;
            }
        }
#undef KEY_IS
    }
    return SIM_OK;
}

static int name_is(const char *name, const char *const *aliases) {
    for (; *aliases != NULL; ++aliases) {
        if (strcasecmp(name, *aliases) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Parses "name:type:count:name:type:count:...". Returns 0 when malformed. */
static int parse_properties(char *spec, traj_columns *c) {
    static const char *const pos_names[] = {"pos", "positions", "position", NULL};
    static const char *const vel_names[] = {"velo", "vel", "velocities", "velocity", NULL};
    static const char *const radius_names[] = {"radius", "radii", NULL};
    static const char *const mass_names[] = {"mass", "masses", NULL};
    static const char *const density_names[] = {"density", NULL};
    static const char *const id_names[] = {"id", "ids", NULL};
    static const char *const momenta_names[] = {"momenta", NULL};
    static const char *const spin_names[] = {"omega", "angular_velocities", "angular_velocity",
                                             NULL};
    *c = (traj_columns){0, -1, -1, -1, -1, -1, -1, -1, -1};
    char *save = NULL;
    for (char *name = strtok_r(spec, ":", &save); name != NULL; name = strtok_r(NULL, ":", &save)) {
        const char *type = strtok_r(NULL, ":", &save);
        const char *count_text = strtok_r(NULL, ":", &save);
        if (type == NULL || count_text == NULL || strlen(type) != 1 ||
            strchr("RISL", toupper((unsigned char)type[0])) == NULL) {
            return 0;
        }
        const int count = atoi(count_text);
        if (count < 1 || count > 64) {
            return 0;
        }
        const int real = toupper((unsigned char)type[0]) == 'R';
        if (name_is(name, pos_names) && real && count == 3) {
            c->pos = c->total;
        } else if (name_is(name, vel_names) && real && count == 3) {
            c->vel = c->total;
        } else if (name_is(name, momenta_names) && real && count == 3) {
            c->momenta = c->total;
        } else if (name_is(name, spin_names) && real && count == 3) {
            c->spin = c->total;
        } else if (name_is(name, radius_names) && real && count == 1) {
            c->radius = c->total;
        } else if (name_is(name, mass_names) && real && count == 1 && c->mass < 0) {
            c->mass = c->total;
        } else if (name_is(name, density_names) && real && count == 1) {
            c->density = c->total;
        } else if (name_is(name, id_names) && toupper((unsigned char)type[0]) == 'I' &&
                   count == 1) {
            c->id = c->total;
        }
        c->total += count;
    }
    return c->total > 0;
}

/* Box from Lattice (and Origin): a cube centred on the origin. */
static sim_status parse_box(const char *path, uint64_t frame, const xyz_comment *c, traj_bodies *b,
                            sim_error *err) {
    char text[512];
    char *f[10];
    double m[9], o[3] = {0.0, 0.0, 0.0};
    snprintf(text, sizeof text, "%s", c->lattice);
    if (traj_split(text, f, 10) != 9) {
        return sim_fail(err, SIM_PARSE, "%s: frame %llu: Lattice needs 9 numbers, got '%s'", path,
                        (unsigned long long)frame, c->lattice);
    }
    for (int i = 0; i < 9; ++i) {
        if (!traj_parse_double(f[i], &m[i])) {
            return sim_fail(err, SIM_PARSE, "%s: frame %llu: bad number '%s' in Lattice", path,
                            (unsigned long long)frame, f[i]);
        }
    }
    const double L = m[0];
    const double tol = 1e-6 * fabs(L);
    int cube = L > 0.0 && fabs(m[4] - L) <= tol && fabs(m[8] - L) <= tol;
    for (int i = 0; i < 9; ++i) {
        cube = cube && (i % 4 == 0 || fabs(m[i]) <= tol);
    }
    if (c->has_origin) {
        snprintf(text, sizeof text, "%s", c->origin);
        cube = cube && traj_split(text, f, 4) == 3 && traj_parse_double(f[0], &o[0]) &&
               traj_parse_double(f[1], &o[1]) && traj_parse_double(f[2], &o[2]);
        for (int a = 0; a < 3; ++a) {
            cube = cube && fabs(o[a] + 0.5 * L) <= tol;
        }
    }
    if (!cube) {
        return sim_fail(err, SIM_PARSE,
                        "%s: frame %llu: the cell (Lattice=\"%s\"%s%s%s) is not a cube centred on "
                        "the origin, the only box nbsim has (walls at +-box_half)",
                        path, (unsigned long long)frame, c->lattice,
                        c->has_origin ? " Origin=\"" : "", c->has_origin ? c->origin : "",
                        c->has_origin ? "\"" : "");
    }
    b->has_box = 1;
    b->box_half = 0.5 * L;
    return SIM_OK;
}

/* Parses the count line: a whole number of bodies. */
static int parse_count(const char *line, size_t len, uint64_t *n) {
    char text[64];
    if (!traj_line_copy(text, sizeof text, line, len)) {
        return 0;
    }
    char *f[2];
    if (traj_split(text, f, 2) != 1) {
        return 0;
    }
    char *end = NULL;
    const unsigned long long v = strtoull(f[0], &end, 10);
    if (*end != '\0' || f[0][0] == '-' || v < 1 || v > UINT32_MAX) {
        return 0;
    }
    *n = v;
    return 1;
}

sim_status traj_xyz_read_last(const char *path, traj_bodies *b, sim_error *err) {
    traj_map map;
    SIM_TRY(traj_map_open(&map, path, err));
    /* Find the last complete frame: count line, comment line, n body lines. */
    size_t pos = 0, last = 0;
    uint64_t frames = 0, last_n = 0;
    int truncated = 0;
    sim_status st = SIM_OK;
    for (;;) {
        const size_t start = pos;
        const char *line;
        size_t len;
        int complete;
        if (!traj_next_line(&map, &pos, &line, &len, &complete)) {
            break;
        }
        uint64_t n = 0;
        if (len == 0 || strspn(line, " \t") >= len) {
            continue; /* blank lines between or after frames */
        }
        if (!parse_count(line, len, &n)) {
            if (frames == 0) {
                char text[80];
                traj_line_copy(text, sizeof text, line, len < 60 ? len : 60);
                st = sim_fail(err, SIM_PARSE,
                              "%s: not an XYZ file: the first line should be the number of "
                              "bodies, got '%s'",
                              path, text);
            } else {
                truncated = 1; /* garbage after the last frame: keep what was complete */
            }
            break;
        }
        if (!complete || !traj_skip_lines(&map, &pos, 1 + n)) {
            truncated = 1;
            break;
        }
        last = start;
        last_n = n;
        ++frames;
    }
    if (st == SIM_OK && frames == 0) {
        st = sim_fail(err, SIM_PARSE,
                      "%s: no complete frame (an XYZ frame is a count line, a "
                      "comment line and one line per body)",
                      path);
    }
    const uint64_t frame = frames - 1;
    xyz_comment c;
    traj_columns cols = {0, -1, -1, -1, -1, -1, -1, -1, -1};
    if (st == SIM_OK) {
        pos = last;
        const char *line;
        size_t len;
        int complete;
        traj_next_line(&map, &pos, &line, &len, &complete); /* count */
        traj_next_line(&map, &pos, &line, &len, &complete); /* comment */
        st = parse_comment(line, len, &c, b, path, frame, err);
    }
    if (st == SIM_OK) {
        char spec[1024];
        snprintf(spec, sizeof spec, "%s", c.has_properties ? c.properties : "species:S:1:pos:R:3");
        if (!parse_properties(spec, &cols)) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu: cannot read Properties=%s", path,
                          (unsigned long long)frame, c.properties);
        } else if (cols.pos < 0) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu has no position column (pos:R:3) in "
                          "Properties=%s",
                          path, (unsigned long long)frame, c.has_properties ? c.properties : "");
        } else if (cols.radius < 0) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu has no radius column (Properties=%s): nbsim needs a "
                          "radius per sphere (radius:R:1)",
                          path, (unsigned long long)frame,
                          c.has_properties ? c.properties : "none, so species:S:1:pos:R:3");
        }
    }
    if (st == SIM_OK && c.has_lattice) {
        st = parse_box(path, frame, &c, b, err);
    }
    if (st == SIM_OK) {
        st = traj_text_read_bodies(&map, pos, (uint32_t)last_n, &cols, path, frame, "body", b, err);
    }
    traj_map_close(&map);
    if (st == SIM_OK) {
        b->info.format = SIM_TRAJ_XYZ;
        b->info.frames = frames;
        b->info.frame = frame;
        b->info.step = c.step;
        b->info.time = c.time;
        b->info.truncated = truncated;
    }
    return st;
}
