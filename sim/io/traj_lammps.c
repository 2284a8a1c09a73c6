/* SPDX-License-Identifier: MIT
 * nbsim — LAMMPS text dumps (what `dump custom` with `dump_modify units yes time yes` writes):
 *
 *   ITEM: UNITS                       (once, at the start of the file)
 *   si
 *   ITEM: TIME
 *   0.5
 *   ITEM: TIMESTEP
 *   2500
 *   ITEM: NUMBER OF ATOMS
 *   3
 *   ITEM: BOX BOUNDS ff ff ff
 *   -8 8
 *   -8 8
 *   -8 8
 *   ITEM: NBSIM PARAMETERS
 *   dt=0.0002 stiffness=10000 restitution=0.5 gravity=0,-9.81,0 atm_nu=0 ... hertz=0 triplets=0
 *   ITEM: ATOMS id type x y z vx vy vz radius mass fx fy fz
 *   1 1 0.5 -1.25 3 0 0 0 0.5 0.523598776 0 0 0
 *
 * "ff" marks fixed (non-periodic) boundaries: nbsim's walls; "pp" a periodic axis (--periodic).
 * TIMESTEP is the step count, TIME the simulated time [s]. Every number is in LAMMPS's `units si`
 * (m, s, m/s, kg, N, rad/s), which ITEM: UNITS says as LAMMPS itself does (read_dump and LAMMPS's
 * tools skip it; a reader that assumes a unit style must be told: ASE reads `units="metal"`
 * unless given `units="si"`, docs/trajectories.md). OVITO reads every column by name: radius,
 * mass, velocity, force and omegax omegay omegaz (its Angular Velocity). Every sphere has type 1
 * (ASE refuses a dump without a type or element column, and VMD and most scripts expect one; ASE
 * takes type 1 for hydrogen, and its reader keeps no radius, mass or omega column).
 * ITEM: NBSIM PARAMETERS (sim_traj_writer_open_params: the run's physics, for continuing it) is
 * nbsim's own item; OVITO, ASE and VMD skip items they do not know.
 *
 * Precision: the frame's (trajectory.h): 9 significant digits from the CUDA backend's floats,
 * full double precision from the CPU reference's double state.
 *
 * Reading accepts what LAMMPS writes for granular runs: positions as x y z, xu yu zu (unwrapped)
 * or xs ys zs (scaled to the box); `radius` or `diameter`; `mass`, else `density`; atoms in any
 * order (parallel LAMMPS runs write them unsorted), put back in id order. */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ---- */

static sim_status lammps_write(sim_traj_writer *w, const sim_traj_frame *f, sim_error *err) {
    char header[2048], params[1100] = "", lo[32], hi[32], t[32];
    traj_fmt_double(lo, sizeof lo, -f->box_half);
    traj_fmt_double(hi, sizeof hi, f->box_half);
    traj_fmt_double(t, sizeof t, f->time);
    if (w->has_params) {
        const size_t n = snprintf(params, sizeof params, "ITEM: NBSIM PARAMETERS\n");
        const size_t k = traj_params_text(params + n, sizeof params - n - 1, &w->params, "", 0);
        params[n + k] = '\n';
        params[n + k + 1] = '\0';
    }
    const char *b[2] = {"ff", "pp"};
    const int len =
        snprintf(header, sizeof header,
                 "%sITEM: TIME\n%s\nITEM: TIMESTEP\n%llu\nITEM: NUMBER OF ATOMS\n%u\n"
                 "ITEM: BOX BOUNDS %s %s %s\n%s %s\n%s %s\n%s %s\n%s"
                 "ITEM: ATOMS id type x y z vx vy vz radius mass fx fy fz%s\n",
                 w->frames == 0 ? "ITEM: UNITS\nsi\n" : "", t, (unsigned long long)f->step, f->n,
                 b[f->periodic & 1], b[(f->periodic >> 1) & 1],
                 b[(f->periodic >> 2) & 1], lo, hi, lo, hi, lo, hi, params,
                 w->spin ? " omegax omegay omegaz" : "");
    SIM_ASSERT(len > 0 && (size_t)len < sizeof header);
    return traj_text_frame(w, header, (size_t)len, f, err);
}

static const sim_traj_writer_ops lammps_ops = {lammps_write, traj_text_close};

sim_status traj_lammps_open(sim_traj_writer *w, sim_error *err) {
    w->ops = &lammps_ops;
    return traj_text_open(w, err);
}

/* ---- reading ---- */

/* One frame's items as the scan meets them. */
typedef struct {
    uint64_t step, n;
    double time;
    int has_n, has_box, triclinic;
    double lo[3], hi[3];
    char atoms[1024];  /* the ITEM: ATOMS line's column names */
    char params[1024]; /* the ITEM: NBSIM PARAMETERS line ("" when none) */
    size_t body;       /* offset of the first atom line */
} lammps_frame;

static int starts_with(const char *line, size_t len, const char *prefix) {
    const size_t p = strlen(prefix);
    return len >= p && memcmp(line, prefix, p) == 0;
}

/* The value line after an item; 0 at the end of the file. */
static int value_line(const traj_map *m, size_t *pos, char *out, size_t cap) {
    const char *line;
    size_t len;
    int complete;
    return traj_next_line(m, pos, &line, &len, &complete) && complete &&
           traj_line_copy(out, cap, line, len);
}

typedef struct {
    int total, id, pos, pos_kind, vel, radius, diameter, mass, density, spin;
} lammps_columns;

enum { POS_PLAIN, POS_UNWRAPPED, POS_SCALED };

static void parse_columns(char *names, lammps_columns *c) {
    char *f[256];
    const int count = traj_split(names, f, 256);
    *c = (lammps_columns){count, -1, -1, POS_PLAIN, -1, -1, -1, -1, -1, -1};
    for (int i = 0; i + 2 < count && i < 256 - 2; ++i) {
        const char *a = f[i], *bb = f[i + 1], *cc = f[i + 2];
        if (c->pos < 0 && strcmp(a, "x") == 0 && strcmp(bb, "y") == 0 && strcmp(cc, "z") == 0) {
            c->pos = i;
            c->pos_kind = POS_PLAIN;
        } else if (c->pos < 0 && strcmp(a, "xu") == 0 && strcmp(bb, "yu") == 0 &&
                   strcmp(cc, "zu") == 0) {
            c->pos = i;
            c->pos_kind = POS_UNWRAPPED;
        } else if (c->pos < 0 && strcmp(a, "xs") == 0 && strcmp(bb, "ys") == 0 &&
                   strcmp(cc, "zs") == 0) {
            c->pos = i;
            c->pos_kind = POS_SCALED;
        } else if (strcmp(a, "vx") == 0 && strcmp(bb, "vy") == 0 && strcmp(cc, "vz") == 0) {
            c->vel = i;
        } else if (strcmp(a, "omegax") == 0 && strcmp(bb, "omegay") == 0 &&
                   strcmp(cc, "omegaz") == 0) {
            c->spin = i;
        }
    }
    for (int i = 0; i < count && i < 256; ++i) {
        int *slot = strcmp(f[i], "id") == 0         ? &c->id
                    : strcmp(f[i], "radius") == 0   ? &c->radius
                    : strcmp(f[i], "diameter") == 0 ? &c->diameter
                    : strcmp(f[i], "mass") == 0     ? &c->mass
                    : strcmp(f[i], "density") == 0  ? &c->density
                                                    : NULL;
        if (slot != NULL && *slot < 0) {
            *slot = i;
        }
    }
}

/* Scans every frame; *last is the last one whose atom lines are all there. */
static sim_status scan(const char *path, const traj_map *m, lammps_frame *last, uint64_t *frames,
                       int *truncated, sim_error *err) {
    lammps_frame cur;
    memset(&cur, 0, sizeof cur);
    size_t pos = 0;
    char text[1100];
    *frames = 0;
    *truncated = 0;
    const char *line;
    size_t len;
    int complete, seen_item = 0;
    while (traj_next_line(m, &pos, &line, &len, &complete)) {
        if (!starts_with(line, len, "ITEM:")) {
            if (strspn(line, " \t") < len && !seen_item) {
                return sim_fail(err, SIM_PARSE,
                                "%s: not a LAMMPS dump: expected 'ITEM: TIMESTEP' first", path);
            }
            continue; /* values of items nbsim does not read */
        }
        seen_item = 1;
        if (starts_with(line, len, "ITEM: TIMESTEP")) {
            if (!value_line(m, &pos, text, sizeof text)) {
                break;
            }
            cur.step = strtoull(text, NULL, 10);
        } else if (starts_with(line, len, "ITEM: TIME")) {
            if (!value_line(m, &pos, text, sizeof text)) {
                break;
            }
            cur.time = strtod(text, NULL);
        } else if (starts_with(line, len, "ITEM: NUMBER OF ATOMS")) {
            if (!value_line(m, &pos, text, sizeof text)) {
                break;
            }
            char *end = NULL;
            const unsigned long long n = strtoull(text, &end, 10);
            cur.has_n = n >= 1 && n <= UINT32_MAX && strspn(end, " \t\r") == strlen(end);
            cur.n = n;
            if (!cur.has_n) {
                return sim_fail(err, SIM_PARSE, "%s: frame %llu: bad NUMBER OF ATOMS '%s'", path,
                                (unsigned long long)*frames, text);
            }
        } else if (starts_with(line, len, "ITEM: BOX BOUNDS")) {
            char head[256];
            traj_line_copy(head, sizeof head, line, len < 255 ? len : 255);
            cur.triclinic = strstr(head, "xy") != NULL;
            cur.has_box = 1;
            for (int a = 0; a < 3; ++a) {
                char *f[4];
                if (!value_line(m, &pos, text, sizeof text)) {
                    return SIM_OK; /* cut off inside the header: the last frame is incomplete */
                }
                cur.has_box = cur.has_box && traj_split(text, f, 4) >= 2 &&
                              traj_parse_double(f[0], &cur.lo[a]) &&
                              traj_parse_double(f[1], &cur.hi[a]);
            }
        } else if (starts_with(line, len, "ITEM: NBSIM PARAMETERS")) {
            if (!value_line(m, &pos, cur.params, sizeof cur.params)) {
                break;
            }
        } else if (starts_with(line, len, "ITEM: ATOMS")) {
            if (!cur.has_n) {
                return sim_fail(err, SIM_PARSE,
                                "%s: frame %llu: ITEM: ATOMS before ITEM: NUMBER OF ATOMS", path,
                                (unsigned long long)*frames);
            }
            traj_line_copy(cur.atoms, sizeof cur.atoms, line + 11,
                           len - 11 < sizeof cur.atoms - 1 ? len - 11 : sizeof cur.atoms - 1);
            cur.body = pos;
            if (!traj_skip_lines(m, &pos, cur.n)) {
                *truncated = 1;
                return SIM_OK;
            }
            *last = cur;
            ++*frames;
            cur.has_n = 0;
            cur.params[0] = '\0';
        }
    }
    *truncated = *truncated || cur.has_n; /* a header without its atoms */
    return SIM_OK;
}

sim_status traj_lammps_read_last(const char *path, traj_bodies *b, sim_error *err) {
    traj_map map;
    SIM_TRY(traj_map_open(&map, path, err));
    lammps_frame fr;
    memset(&fr, 0, sizeof fr);
    uint64_t frames = 0;
    int truncated = 0;
    sim_status st = scan(path, &map, &fr, &frames, &truncated, err);
    if (st == SIM_OK && frames == 0) {
        st = sim_fail(err, SIM_PARSE,
                      "%s: no complete frame (expected ITEM: TIMESTEP, NUMBER OF ATOMS, BOX "
                      "BOUNDS and ATOMS with one line per atom)",
                      path);
    }
    const uint64_t frame = frames - 1;
    lammps_columns c = {0, -1, -1, 0, -1, -1, -1, -1, -1, -1};
    char names[1024];
    if (st == SIM_OK) {
        snprintf(names, sizeof names, "%s", fr.atoms);
        parse_columns(names, &c);
        if (c.pos < 0) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu (timestep %llu) has no positions (x y z, xu yu zu or "
                          "xs ys zs) in ITEM: ATOMS%s",
                          path, (unsigned long long)frame, (unsigned long long)fr.step, fr.atoms);
        } else if (c.radius < 0 && c.diameter < 0) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu (timestep %llu) has no radius column (ITEM: ATOMS%s): "
                          "nbsim needs a radius (or diameter) per sphere",
                          path, (unsigned long long)frame, (unsigned long long)fr.step, fr.atoms);
        } else if (fr.triclinic) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu: a triclinic box; nbsim's box is a cube centred on the "
                          "origin",
                          path, (unsigned long long)frame);
        } else if (c.pos_kind == POS_SCALED && !fr.has_box) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu: scaled positions without BOX BOUNDS",
                          path, (unsigned long long)frame);
        }
    }
    if (st == SIM_OK && fr.params[0] != '\0') { /* KEY=VALUE ..., nbsim's own item */
        char *f[64];
        const int count = traj_split(fr.params, f, 64);
        for (int i = 0; st == SIM_OK && i < count && i < 64; ++i) {
            char *eq = strchr(f[i], '=');
            if (eq == NULL) {
                continue;
            }
            *eq = '\0';
            if (traj_params_read(b, f[i], eq + 1, path, frame, err) < 0) {
                st = SIM_PARSE;
            }
        }
    }
    if (st == SIM_OK && fr.has_box) {
        const double h = fr.hi[0], tol = 1e-6 * fabs(h);
        int cube = h > 0.0;
        for (int a = 0; a < 3; ++a) {
            cube = cube && fabs(fr.hi[a] - h) <= tol && fabs(fr.lo[a] + h) <= tol;
        }
        if (!cube) {
            st = sim_fail(err, SIM_PARSE,
                          "%s: frame %llu: BOX BOUNDS [%g, %g] x [%g, %g] x [%g, %g] is not a cube "
                          "centred on the origin, the only box nbsim has (walls at +-box_half)",
                          path, (unsigned long long)frame, fr.lo[0], fr.hi[0], fr.lo[1], fr.hi[1],
                          fr.lo[2], fr.hi[2]);
        } else {
            b->has_box = 1;
            b->box_half = h;
        }
    }
    if (st == SIM_OK) {
        /* a diameter column is read as the radius, halved below */
        const traj_columns cols = {.total = c.total,
                                   .id = c.id,
                                   .pos = c.pos,
                                   .vel = c.vel,
                                   .radius = c.radius >= 0 ? c.radius : c.diameter,
                                   .mass = c.mass,
                                   .density = c.density,
                                   .momenta = -1,
                                   .spin = c.spin};
        st = traj_text_read_bodies(&map, fr.body, (uint32_t)fr.n, &cols, path, frame, "atom line",
                                   b, err);
    }
    traj_map_close(&map);
    if (st == SIM_OK) {
        for (uint32_t i = 0; i < b->n; ++i) {
            for (int a = 0; a < 3 && c.pos_kind == POS_SCALED; ++a) { /* fractions of the box */
                double *x = &b->pos[3 * (size_t)i + a];
                *x = fr.lo[a] + *x * (fr.hi[a] - fr.lo[a]);
            }
            if (c.radius < 0) {
                b->radius[i] *= 0.5;
            }
        }
        b->info.format = SIM_TRAJ_LAMMPS;
        b->info.frames = frames;
        b->info.frame = frame;
        b->info.step = fr.step;
        b->info.time = fr.time;
        b->info.truncated = truncated;
    }
    return st;
}
