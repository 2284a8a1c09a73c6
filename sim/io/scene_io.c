/* SPDX-License-Identifier: MIT
 * nbsim — scene files: parsing (every error names file, line and problem) and atomic saving.
 * The format is described in scene.h and assets/README.md. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/scene.h"
#include "nbsim/trajectory.h"

#include "nbsim/output_file.h"
#include "io/state_write.h"
#include "nbsim/params.h"
#include "physics/physics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BODY_COLUMNS 8
#define MAX_COLUMNS (BODY_COLUMNS + 6)

static const char *const column_names[BODY_COLUMNS] = {"x",  "y",  "z",      "vx",
                                                       "vy", "vz", "radius", "density"};

/* The columns a header declares: the eight of every body, then, in either order, optional
 * groups of three: the spin `wx wy wz` [rad/s] and the force `fx fy fz` [N] of a saved state
 * (read and ignored). */
typedef struct {
    int count;       /* 0: not a header */
    int spin, force; /* first column of each group, -1 when absent */
    char names[160];
} body_columns;

/* The contact section of a saved state (friction's histories, after the bodies): this header,
 * then one contact per line, i j and the two springs; j is a body number below i, or a wall. */
static const char contact_header[] = "contacts i j xi_x xi_y xi_z roll_x roll_y roll_z";
#define CONTACT_COLUMNS 8
static const char *const wall_names[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};

/* ---- small string helpers ---- */

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') {
        ++s;
    }
    size_t len = strlen(s);
    while (len > 0 && strchr(" \t\r\n", s[len - 1]) != NULL) {
        s[--len] = '\0';
    }
    return s;
}

/* Splits s in place at blanks (and, if commas, at commas); returns the number of fields. */
static int split(char *s, char **fields, int max, int commas) {
    const char *sep = commas ? " \t\r\n," : " \t\r\n";
    int count = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, sep, &save); tok != NULL; tok = strtok_r(NULL, sep, &save)) {
        if (count < max) {
            fields[count] = tok;
        }
        ++count;
    }
    return count;
}

/* ---- messages ---- */

/* Bytes from a file as they may reach a terminal: anything but printable ASCII becomes '?', so
 * a file's escape sequences or binary garbage never act on the terminal that shows the error. */
static void printable(char *text) {
    for (unsigned char *c = (unsigned char *)text; *c != '\0'; ++c) {
        if (*c < 0x20 || *c > 0x7e) {
            *c = '?';
        }
    }
}

typedef struct {
    const char *path;
    long line;
    const sim_scene_load_options *opt;
    long key_line[SIM_PARAM_COUNT + 2]; /* where each key was first given (hertz, triplets last) */
    sim_error *err;
} where;

/* detail may hold the file's bytes: they are made printable. */
static sim_status fail_at(const where *w, const char *problem, const char *detail) {
    char clean[SIM_ERROR_MESSAGE_MAX];
    snprintf(clean, sizeof clean, "%s", detail);
    printable(clean);
    return sim_fail(w->err, SIM_PARSE, "%s:%ld: %s%s", w->path, w->line, problem, clean);
}

static void warn_at(const where *w, const char *text) {
    char *out = w->opt->warnings;
    if (out == NULL || w->opt->warnings_cap == 0) {
        return;
    }
    char clean[SIM_ERROR_MESSAGE_MAX];
    snprintf(clean, sizeof clean, "%s", text);
    printable(clean);
    const size_t len = strnlen(out, w->opt->warnings_cap);
    if (len + 1 < w->opt->warnings_cap) {
        snprintf(out + len, w->opt->warnings_cap - len, "%s%s:%ld: %s", len ? "\n" : "", w->path,
                 w->line, clean);
    }
}

/* ---- parameter lines ---- */

/* A key given twice: the later value wins (as in most config formats), with a warning. */
static void note_key(where *w, int slot, const char *name) {
    if (w->key_line[slot] != 0) {
        char text[SIM_ERROR_MESSAGE_MAX];
        snprintf(text, sizeof text,
                 "warning: %.60s given again (first on line %ld): the later "
                 "value wins",
                 name, w->key_line[slot]);
        warn_at(w, text);
    } else {
        w->key_line[slot] = w->line;
    }
}

/* A parameter line `key = value`. The numeric parameters follow the rows of params.h, so a
 * file accepts and refuses exactly what the command line does; hertz and triplets are 0 or 1.
 * A parameter the caller fixed is checked but keeps the caller's value. */
static sim_status parse_param(where *w, char *key, char *value, sim_params *p) {
    char text[SIM_ERROR_MESSAGE_MAX];
    const int id = sim_param_from_key(key);
    const int hertz = strcmp(key, "hertz") == 0, triplets = strcmp(key, "triplets") == 0;
    sim_params scratch = *p;
    if (id == SIM_PARAM_GRAVITY || id == SIM_PARAM_PERIODIC) { /* "x, z": the whole value */
        if (sim_param_set(&scratch, (sim_param_id)id, value, w->err) != SIM_OK) {
            snprintf(text, sizeof text, "%s: %.400s", key, w->err->message);
            return fail_at(w, "bad value: ", text);
        }
    } else if (id < 0 && !hertz && !triplets) {
        char known[256] = "";
        for (int k = 0; k < SIM_PARAM_COUNT; ++k) {
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s, ",
                     sim_param_info_of((sim_param_id)k)->key);
        }
        snprintf(text, sizeof text, "'%.60s' (known: %shertz, triplets)", key, known);
        return fail_at(w, "unknown key ", text);
    } else {
        char *f[2];
        const int count = split(value, f, 2, 0);
        if (count != 1) {
            snprintf(text, sizeof text, "'%.60s' needs one number, got %d values", key, count);
            return fail_at(w, "bad value: ", text);
        }
        if (hertz || triplets) {
            if (strcmp(f[0], "0") != 0 && strcmp(f[0], "1") != 0) {
                snprintf(text, sizeof text, "%s: '%.60s' must be 0 or 1", key, f[0]);
                return fail_at(w, "bad value: ", text);
            }
            *(hertz ? &scratch.hertz : &scratch.triplets) = f[0][0] == '1';
        } else if (sim_param_set(&scratch, (sim_param_id)id, f[0], w->err) != SIM_OK) {
            snprintf(text, sizeof text, "%.40s: %.400s", key, w->err->message);
            return fail_at(w, "bad value: ", text);
        }
    }
    const int slot = id >= 0 ? id : hertz ? SIM_PARAM_COUNT : SIM_PARAM_COUNT + 1;
    note_key(w, slot, id >= 0 ? sim_param_info_of((sim_param_id)id)->key : key);
    const unsigned bit = id >= 0 ? 1u << id : hertz ? SIM_SCENE_FIXED_HERTZ : 0u;
    if ((w->opt->fixed & bit) == 0) {
        *p = scratch;
    }
    return SIM_OK;
}

static int is_insert_key(const char *key) {
    return sim_insert_from_key(key) >= 0 || strcmp(key, SIM_INSERT_STATE_KEY) == 0;
}

/* An insertion line `key = value` (insert.h): the rules of its flag. */
static sim_status parse_insert(where *w, const char *key, const char *value, sim_inserter *ins) {
    const int k = sim_insert_from_key(key);
    const sim_status s = k >= 0 ? sim_insert_set(&ins->def, (sim_insert_key)k, value, w->err)
                                : sim_insert_set_progress(&ins->progress, value, w->err);
    if (s != SIM_OK) {
        char text[SIM_ERROR_MESSAGE_MAX];
        snprintf(text, sizeof text, "%.40s: %.400s", key, w->err->message);
        return fail_at(w, "bad value: ", text);
    }
    ins->given |= k >= 0 ? 1u << k : SIM_INSERT_GIVEN_STATE;
    return SIM_OK;
}

/* ---- the column header, body lines and contact lines ---- */

/* The columns the header declares (count 0 if the line is not a header). */
static body_columns parse_header(char *line) {
    body_columns c = {0, -1, -1, ""};
    char *f[MAX_COLUMNS + 1];
    const int count = split(line, f, MAX_COLUMNS + 1, 0);
    if (count != BODY_COLUMNS && count != BODY_COLUMNS + 3 && count != MAX_COLUMNS) {
        return c;
    }
    for (int i = 0; i < BODY_COLUMNS; ++i) {
        if (strcmp(f[i], column_names[i]) != 0) {
            return c;
        }
    }
    for (int g = BODY_COLUMNS; g < count; g += 3) {
        const int spin = strcmp(f[g], "wx") == 0 && strcmp(f[g + 1], "wy") == 0 &&
                         strcmp(f[g + 2], "wz") == 0 && c.spin < 0;
        const int force = strcmp(f[g], "fx") == 0 && strcmp(f[g + 1], "fy") == 0 &&
                          strcmp(f[g + 2], "fz") == 0 && c.force < 0;
        if (!spin && !force) {
            return c;
        }
        *(spin ? &c.spin : &c.force) = g;
    }
    c.count = count;
    for (int i = 0; i < count; ++i) {
        snprintf(c.names + strlen(c.names), sizeof c.names - strlen(c.names), "%s%s",
                 i ? " " : "", f[i]);
    }
    return c;
}

typedef struct {
    sim_vec4d *pos, *vel, *spin;
    uint32_t n, cap;
    /* the lightest body and where it was, for a default step it makes impossible */
    uint32_t lightest;
    long lightest_line;
    double lightest_density;
    sim_state_contact *contacts;
    uint64_t contact_count, contact_cap;
    int in_contacts; /* past the contact header */
} body_list;

static int push_body(body_list *l, sim_vec4d pos, sim_vec4d vel, sim_vec4d spin) {
    if (l->n == l->cap) {
        if (l->cap >= UINT32_MAX / 2) {
            return 0;
        }
        const uint32_t cap = l->cap ? 2 * l->cap : 1024;
        sim_vec4d *p = realloc(l->pos, (size_t)cap * sizeof *p);
        if (p == NULL) {
            return 0;
        }
        l->pos = p;
        sim_vec4d *v = realloc(l->vel, (size_t)cap * sizeof *v);
        if (v == NULL) {
            return 0;
        }
        l->vel = v;
        sim_vec4d *w = realloc(l->spin, (size_t)cap * sizeof *w);
        if (w == NULL) {
            return 0;
        }
        l->spin = w;
        l->cap = cap;
    }
    l->pos[l->n] = pos;
    l->vel[l->n] = vel;
    l->spin[l->n] = spin;
    l->n++;
    return 1;
}

/* The walls a body's centre must be inside: +-box_half, or for a state a run reached (a saved
 * state, `saved`) up to SIM_ESCAPE_FACTOR x box_half, where a run may have pushed a body into a
 * wall without blowing up (beyond it the backends report the run unstable). */
static double centre_limit(const sim_params *p, int saved) {
    return saved ? SIM_ESCAPE_FACTOR * p->box_half : p->box_half;
}

static int centre_inside(double x, double y, double z, double limit) {
    return fabs(x) <= limit && fabs(y) <= limit && fabs(z) <= limit; /* false for NaN */
}

static sim_status parse_body(const where *w, char *line, const body_columns *cols,
                             const sim_params *p, body_list *bodies) {
    char *f[MAX_COLUMNS + 1];
    double c[MAX_COLUMNS];
    char text[SIM_ERROR_MESSAGE_MAX];
    const uint32_t max = w->opt->max_bodies;
    if (max != 0 && bodies->n >= max) {
        snprintf(text, sizeof text, "more than %u bodies, the most this run can take%s%s%s", max,
                 w->opt->max_reason ? " (" : "", w->opt->max_reason ? w->opt->max_reason : "",
                 w->opt->max_reason ? ")" : "");
        return sim_fail(w->err, SIM_BAD_ARGUMENT, "%s:%ld: %s", w->path, w->line, text);
    }
    const int columns = cols->count;
    const int count = split(line, f, MAX_COLUMNS + 1, 0);
    if (count != columns) {
        snprintf(text, sizeof text, "expected %d (%s), got %d", columns, cols->names, count);
        return fail_at(w, "wrong column count: ", text);
    }
    for (int i = 0; i < count; ++i) {
        if (!sim_parse_number(f[i], &c[i])) {
            static const char *const spin_names[3] = {"wx", "wy", "wz"};
            static const char *const force_names[3] = {"fx", "fy", "fz"};
            const int spin = cols->spin >= 0 && i >= cols->spin && i < cols->spin + 3;
            snprintf(text, sizeof text, "'%.60s' in column %d (%s)", f[i], i + 1,
                     i < BODY_COLUMNS ? column_names[i]
                     : spin           ? spin_names[i - cols->spin]
                                      : force_names[i - cols->force]);
            return fail_at(w, "bad number ", text);
        }
    }
    if (!(c[6] > 0.0)) {
        snprintf(text, sizeof text, "%g", c[6]);
        return fail_at(w, "radius must be > 0, got ", text);
    }
    if (!(c[7] > 0.0)) {
        snprintf(text, sizeof text, "%g", c[7]);
        return fail_at(w, "density must be > 0, got ", text);
    }
    if (!(c[6] <= p->box_half)) { /* a sphere wider than the box cannot be between its walls */
        const int fixed = (w->opt->fixed & (1u << SIM_PARAM_BOX)) != 0;
        snprintf(text, sizeof text,
                 "body %u: radius %g m is larger than the box (half-width %g m, %s)", bodies->n + 1,
                 c[6], p->box_half, fixed ? sim_param_info_of(SIM_PARAM_BOX)->flag : "box_half");
        return fail_at(w, "sphere wider than the box: ", text);
    }
    /* A saved state (force columns) may hold what a run reached without blowing up. */
    const double L = p->box_half, limit = centre_limit(p, cols->force >= 0);
    if (!centre_inside(c[0], c[1], c[2], limit)) {
        const int fixed = (w->opt->fixed & (1u << SIM_PARAM_BOX)) != 0;
        snprintf(text, sizeof text,
                 "body %u: centre (%g, %g, %g) is beyond the walls at +-%g (%s)%s", bodies->n + 1,
                 c[0], c[1], c[2], L, fixed ? sim_param_info_of(SIM_PARAM_BOX)->flag : "box_half",
                 limit > L ? ", farther than a run can push a body into a wall" : "");
        return fail_at(w, "body outside the box: ", text);
    }
    const double mass = sim_sphere_mass(c[6], c[7]);
    if (!(mass > 0.0 && isfinite(mass))) {
        snprintf(text, sizeof text, "radius %g and density %g give mass %g", c[6], c[7], mass);
        return fail_at(w, "bad mass: ", text);
    }
    const sim_vec4d pos = {c[0], c[1], c[2], c[6]};
    const sim_vec4d vel = {c[3], c[4], c[5], mass};
    const int k = cols->spin;
    const sim_vec4d spin = k >= 0 ? (sim_vec4d){c[k], c[k + 1], c[k + 2], 0.0}
                                  : (sim_vec4d){0.0, 0.0, 0.0, 0.0};
    if (bodies->n == 0 || mass < bodies->vel[bodies->lightest].w) {
        bodies->lightest = bodies->n;
        bodies->lightest_line = w->line;
        bodies->lightest_density = c[7];
    }
    if (!push_body(bodies, pos, vel, spin)) {
        const double bytes = 3.0 * (double)(bodies->cap ? 2.0 * bodies->cap : 1024) * sizeof pos;
        return sim_fail(w->err, SIM_OUT_OF_MEMORY,
                        "%s:%ld: out of memory after %u bodies (%.0f bytes needed to go on)",
                        w->path, w->line, bodies->n, bytes);
    }
    return SIM_OK;
}

sim_status sim_scene_check_bodies(const sim_state *s, const sim_params *p, int saved,
                                  sim_error *err) {
    const double L = p->box_half, limit = centre_limit(p, saved);
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d x = s->pos[i], v = s->vel[i];
        const sim_vec4d w = s->spin != NULL ? s->spin[i] : (sim_vec4d){0.0, 0.0, 0.0, 0.0};
        const char *what = !(isfinite(x.x) && isfinite(x.y) && isfinite(x.z)) ? "position"
                           : !(isfinite(v.x) && isfinite(v.y) && isfinite(v.z)) ? "velocity"
                           : !(isfinite(w.x) && isfinite(w.y) && isfinite(w.z)) ? "angular velocity"
                                                                                : NULL;
        if (what != NULL) {
            const sim_vec4d bad = what[0] == 'p' ? x : what[0] == 'v' ? v : w;
            return sim_fail(err, SIM_BAD_ARGUMENT, "body %u: %s (%g, %g, %g) is not finite", i,
                            what, bad.x, bad.y, bad.z);
        }
        if (!(x.w <= L)) { /* a sphere wider than the box cannot be between its walls */
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "body %u: radius %g m is larger than the box (half-width %g m)", i, x.w,
                            L);
        }
        if (!centre_inside(x.x, x.y, x.z, limit)) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "body %u: centre (%g, %g, %g) m is beyond the walls at +-%g m "
                            "(box_half %g m%s)",
                            i, x.x, x.y, x.z, limit, L,
                            saved ? ", and farther than a run can push a body into a wall" : "");
        }
    }
    return SIM_OK;
}

/* Whether the line is the contact section's header (blanks between its words as they come). */
static int is_contact_header(const char *line) {
    char copy[128], *f[CONTACT_COLUMNS + 2];
    snprintf(copy, sizeof copy, "%s", line);
    const int count = split(copy, f, CONTACT_COLUMNS + 2, 0);
    if (count != CONTACT_COLUMNS + 1) {
        return 0;
    }
    char joined[128] = "";
    for (int i = 0; i < count; ++i) {
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? " " : "",
                 f[i]);
    }
    return strcmp(joined, contact_header) == 0;
}

/* A contact line: body i (from 1), body j < i or a wall (-x +x -y +y -z +z), xi, roll [m]. */
static sim_status parse_contact(const where *w, char *line, body_list *bodies) {
    char *f[CONTACT_COLUMNS + 1];
    char text[SIM_ERROR_MESSAGE_MAX];
    const int count = split(line, f, CONTACT_COLUMNS + 1, 0);
    if (count != CONTACT_COLUMNS) {
        snprintf(text, sizeof text, "expected %d (i j xi_x xi_y xi_z roll_x roll_y roll_z), got %d",
                 CONTACT_COLUMNS, count);
        return fail_at(w, "wrong column count in a contact: ", text);
    }
    double c[CONTACT_COLUMNS];
    uint32_t j = 0;
    int wall = -1;
    for (int k = 0; k < 6; ++k) {
        wall = strcmp(f[1], wall_names[k]) == 0 ? k : wall;
    }
    for (int i = 0; i < count; ++i) {
        if (!(i == 1 && wall >= 0) && !sim_parse_number(f[i], &c[i])) {
            snprintf(text, sizeof text, "'%.60s' in column %d of a contact", f[i], i + 1);
            return fail_at(w, "bad number ", text);
        }
    }
    const int body_i = c[0] == floor(c[0]) && c[0] >= 1.0 && c[0] <= (double)bodies->n;
    const int body_j = wall >= 0 || (c[1] == floor(c[1]) && c[1] >= 1.0 && c[1] < c[0]);
    if (!body_i || !body_j) {
        snprintf(text, sizeof text,
                 "'%.20s %.20s': i must be one of the %u bodies and j a body below i or a wall "
                 "(-x +x -y +y -z +z)",
                 f[0], f[1], bodies->n);
        return fail_at(w, "bad contact: ", text);
    }
    j = wall >= 0 ? SIM_CONTACT_WALL(wall) : (uint32_t)c[1] - 1u;
    if (bodies->contact_count == bodies->contact_cap) {
        const uint64_t cap = bodies->contact_cap ? 2 * bodies->contact_cap : 1024;
        sim_state_contact *grown = realloc(bodies->contacts, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            return sim_fail(w->err, SIM_OUT_OF_MEMORY, "%s:%ld: out of memory after %llu contacts",
                            w->path, w->line, (unsigned long long)bodies->contact_count);
        }
        bodies->contacts = grown;
        bodies->contact_cap = cap;
    }
    const sim_state_contact contact = {(uint32_t)c[0] - 1u, j, {c[2], c[3], c[4]},
                                       {c[5], c[6], c[7]}};
    bodies->contacts[bodies->contact_count++] = contact;
    return SIM_OK;
}

/* ---- load ---- */

/* The longest line a scene file may have [bytes]: a body's line is a dozen numbers; a longer one
 * means the file is not a scene (a device such as /dev/zero, a binary file), and reading on would
 * only grow the buffer until memory runs out. */
#define SCENE_LINE_MAX 65536

/* The next line of f into *buf (with its newline, NUL-terminated; *cap grown as needed, to at most
 * SCENE_LINE_MAX + 2), its length in *len (NUL bytes read count: the caller refuses them).
 * Returns 1 for a line, 0 at the end of the file, -1 for a line longer than SCENE_LINE_MAX or no
 * memory. The caller holds f's lock (getc_unlocked). */
static int read_line(FILE *f, char **buf, size_t *cap, size_t *len) {
    *len = 0;
    int c = EOF;
    while ((c = getc_unlocked(f)) != EOF) {
        if (*len + 2 > *cap) {
            if (*cap > SCENE_LINE_MAX) {
                return -1;
            }
            const size_t grown = *cap == 0 ? 256 : *cap * 2;
            char *b = realloc(*buf, grown);
            if (b == NULL) {
                return -1;
            }
            *buf = b;
            *cap = grown;
        }
        (*buf)[(*len)++] = (char)c;
        if (c == '\n') {
            break;
        }
    }
    if (*len == 0) {
        return 0;
    }
    (*buf)[*len] = '\0';
    return 1;
}

static sim_status parse_file(FILE *f, where *w, sim_params *p, body_list *bodies) {
    char *buf = NULL;
    size_t cap = 0;
    body_columns cols = {0, -1, -1, ""}; /* count 0 until the header is read */
    sim_status s = SIM_OK;
    size_t got = 0;
    int more;
    while (s == SIM_OK && (more = read_line(f, &buf, &cap, &got)) != 0) {
        w->line++;
        if (more < 0) {
            s = fail_at(w, "a line longer than 65536 bytes: ", "this is not a scene file");
            break;
        }
        if (memchr(buf, '\0', got) != NULL) {
            s = fail_at(w, "a NUL byte: ", "this is not a text file");
            break;
        }
        char *text = buf;
        if (w->line == 1 && strncmp(text, "\xEF\xBB\xBF", 3) == 0) {
            text += 3; /* a UTF-8 byte order mark, as some editors write */
        }
        char *hash = strchr(text, '#');
        if (hash != NULL) {
            *hash = '\0';
        }
        char *line = trim(text);
        if (*line == '\0') {
            continue;
        }
        if (bodies->in_contacts) {
            s = parse_contact(w, line, bodies);
            continue;
        }
        if (cols.count > 0 && bodies->n > 0 && is_contact_header(line)) {
            bodies->in_contacts = 1;
            continue;
        }
        if (cols.count > 0) {
            s = parse_body(w, line, &cols, p, bodies);
            continue;
        }
        char *eq = strchr(line, '=');
        if (eq != NULL) {
            *eq = '\0';
            char *key = trim(line);
            s = w->opt->insert != NULL && is_insert_key(key)
                    ? parse_insert(w, key, trim(eq + 1), w->opt->insert)
                    : parse_param(w, key, eq + 1, p);
            continue;
        }
        char copy[64];
        snprintf(copy, sizeof copy, "%s", line);
        cols = parse_header(line);
        if (cols.count == 0) {
            char detail[256];
            snprintf(detail, sizeof detail,
                     "'x y z vx vy vz radius density' (optionally + 'wx wy wz', 'fx fy fz')"
                     " or 'key = value', got '%s'",
                     copy);
            s = fail_at(w, "expected the column header ", detail);
        }
    }
    if (s == SIM_OK && ferror(f)) {
        s = sim_fail(w->err, SIM_IO, "%s:%ld: read error: %s", w->path, w->line, strerror(errno));
    }
    free(buf);
    /* bodies may come from an insertion (the caller's settings or the file's): the caller says */
    if (s == SIM_OK && bodies->n == 0 && !(w->opt->insert != NULL && cols.count > 0)) {
        s = sim_fail(w->err, SIM_PARSE, "%s:%ld: no bodies (%s)", w->path, w->line,
                     cols.count ? "nothing after the column header"
                             : "expected the column header 'x y z vx vy vz radius density' and "
                               "one sphere per line");
    }
    return s;
}

/* Without a dt (file or caller), the step is derived from the lightest bodies' contact time: a
 * body heavy beyond anything a step can resolve (density 1e300, radius 1e30) would make it a
 * step the rules refuse, reported later with no file or line. Said here, at the lightest body
 * (every body is at least that heavy), with the values that made it so. */
static sim_status check_default_dt(where *w, const sim_params *p, const body_list *bodies) {
    if (p->dt > 0.0 || bodies->n == 0) {
        return SIM_OK;
    }
    const sim_state st = {.n = bodies->n, .pos = bodies->pos, .vel = bodies->vel};
    const double dt = sim_default_dt(p, &st);
    sim_params probe = *p;
    probe.dt = dt;
    sim_error ignored;
    if (isfinite(dt) && sim_params_check(&probe, &ignored) == SIM_OK) {
        return SIM_OK;
    }
    const sim_vec4d x = bodies->pos[bodies->lightest], v = bodies->vel[bodies->lightest];
    char text[SIM_ERROR_MESSAGE_MAX];
    snprintf(text, sizeof text,
             "body %u, the lightest: radius %g m and density %g kg/m^3 give a mass of %g kg, "
             "and the default step (the contact time / %d) would be %g s, beyond the 1000 s a "
             "step may be (lighter bodies, a stiffer contact, or a dt in the file)",
             bodies->lightest + 1, x.w, bodies->lightest_density, v.w, SIM_STEPS_PER_CONTACT, dt);
    const long line = w->line;
    w->line = bodies->lightest_line;
    const sim_status s = fail_at(w, "", text);
    w->line = line;
    return s;
}

sim_status sim_scene_read(FILE *f, const char *name, const sim_scene_load_options *options,
                          sim_params *params_inout, sim_state *out, sim_error *err) {
    SIM_ASSERT(f != NULL && name != NULL && params_inout != NULL && out != NULL);
    static const sim_scene_load_options none;
    where w;
    memset(&w, 0, sizeof w);
    w.path = name;
    w.opt = options != NULL ? options : &none;
    w.err = err;
    sim_params p = *params_inout;
    body_list bodies;
    memset(&bodies, 0, sizeof bodies);
    flockfile(f); /* read_line's getc_unlocked */
    sim_status s = parse_file(f, &w, &p, &bodies);
    funlockfile(f);
    if (s == SIM_OK) {
        s = check_default_dt(&w, &p, &bodies);
    }
    if (s == SIM_OK) {
        s = sim_state_alloc(out, bodies.n, err);
    }
    if (s == SIM_OK && bodies.n > 0) { /* none: a file for an insertion, nothing to copy */
        memcpy(out->pos, bodies.pos, (size_t)bodies.n * sizeof *out->pos);
        memcpy(out->vel, bodies.vel, (size_t)bodies.n * sizeof *out->vel);
        memcpy(out->spin, bodies.spin, (size_t)bodies.n * sizeof *out->spin);
    }
    if (s == SIM_OK) {
        out->contacts = bodies.contacts; /* the state owns them now */
        out->contact_count = bodies.contact_count;
        bodies.contacts = NULL;
        *params_inout = p;
    }
    free(bodies.pos);
    free(bodies.vel);
    free(bodies.spin);
    free(bodies.contacts);
    return s;
}

/* Appends "PATH: warning: TEXT" as one line of the caller's warnings. */
static void warn_file(const sim_scene_load_options *opt, const char *path, const char *text) {
    char *out = opt->warnings;
    if (out == NULL || opt->warnings_cap == 0) {
        return;
    }
    char clean[SIM_ERROR_MESSAGE_MAX];
    snprintf(clean, sizeof clean, "%s: warning: %s", path, text);
    printable(clean);
    const size_t len = strnlen(out, opt->warnings_cap);
    if (len + 1 < opt->warnings_cap) {
        snprintf(out + len, opt->warnings_cap - len, "%s%s", len ? "\n" : "", clean);
    }
}

/* The last frame of a dump (trajectory.h) and the parameters it carries, under the rules of
 * scene files: the caller's fixed parameters win (and the bodies must fit the caller's box);
 * one warning names what the dump did not restore, one that its last frame was cut off. */
static sim_status load_dump(const char *path, const sim_scene_load_options *opt,
                            sim_params *params_inout, sim_state *out, sim_error *err) {
    sim_params from = *params_inout;
    sim_traj_info info;
    sim_state st = {0};
    SIM_TRY(sim_traj_read_last(path, &from, &st, &info, err));
    const unsigned fixed = opt->fixed & ~SIM_PARAM_BIT_TRIPLETS; /* the session decides those */
    const sim_params p = *params_inout;
    sim_params take = p;
    sim_params_take(&take, &from, info.params_found & ~fixed);
    if (fixed & (1u << SIM_PARAM_BOX)) { /* the caller's walls: every centre inside them */
        const double L = p.box_half;
        for (uint32_t i = 0; i < st.n; ++i) {
            const sim_vec4d x = st.pos[i];
            if (!(fabs(x.x) <= L && fabs(x.y) <= L && fabs(x.z) <= L)) {
                sim_state_free(&st);
                return sim_fail(err, SIM_PARSE,
                                "%s: frame %llu, body %u: centre (%g, %g, %g) is beyond the walls "
                                "at +-%g (%s)",
                                path, (unsigned long long)info.frame, i + 1, x.x, x.y, x.z, L,
                                sim_param_info_of(SIM_PARAM_BOX)->flag);
            }
        }
    }
    const unsigned missing = SIM_PARAM_BITS_ALL & ~info.params_found & ~fixed;
    if (missing != 0) {
        char names[256] = "";
        for (int k = 0; k < SIM_PARAM_COUNT + 2; ++k) {
            if (missing & (1u << k)) {
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         names[0] ? ", " : "",
                         k < SIM_PARAM_COUNT    ? sim_param_info_of((sim_param_id)k)->key
                         : k == SIM_PARAM_COUNT ? "hertz"
                                                : "triplets");
            }
        }
        char text[512];
        snprintf(text, sizeof text,
                 "the dump does not carry %s (an older nbsim's or another program's): not "
                 "restored, they are nbsim's defaults",
                 names);
        warn_file(opt, path, text);
    }
    if (info.truncated) {
        char text[256];
        snprintf(text, sizeof text,
                 "its last frame is cut off; continuing from the last complete one (frame %llu, "
                 "step %llu)",
                 (unsigned long long)info.frame, (unsigned long long)info.step);
        warn_file(opt, path, text);
    }
    *params_inout = take;
    *out = st;
    return SIM_OK;
}

sim_status sim_scene_load_with(const char *path, const sim_scene_load_options *options,
                               sim_params *params_inout, sim_state *out, sim_error *err) {
    SIM_ASSERT(path != NULL && params_inout != NULL && out != NULL);
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "scene '%s' is a directory, not a scene file", path);
    }
    if (sim_traj_format_from_path(path) != SIM_TRAJ_NONE) {
        static const sim_scene_load_options none;
        return load_dump(path, options != NULL ? options : &none, params_inout, out, err);
    }
    FILE *f = fopen(path, "r"); /* a FIFO waits for its writer; a stop signal ends the wait */
    if (f == NULL) {
        const int e = errno;
        if (e == EINTR) {
            return sim_fail(err, SIM_INTERRUPTED,
                            "scene '%s': stopped while waiting for a writer to open it", path);
        }
        /* a path that names nothing readable is the user's to mend (exit 2); a failing disk is
         * not (exit 1) */
        const int named = e == ENOENT || e == ELOOP || e == ENOTDIR || e == ENAMETOOLONG ||
                          e == EACCES || e == EPERM;
        return sim_fail(err, named ? SIM_BAD_ARGUMENT : SIM_IO, "cannot open scene '%s': %s", path,
                        e == ENOENT ? "no such file" : strerror(e));
    }
    const sim_status s = sim_scene_read(f, path, options, params_inout, out, err);
    fclose(f);
    return s;
}

sim_status sim_scene_load(const char *path, sim_params *params_inout, sim_state *out,
                          sim_error *err) {
    return sim_scene_load_with(path, NULL, params_inout, out, err);
}

/* ---- save ---- */

/* The lines of hertz and triplets among the parameters' (params.h's column `saved`). */
#define SAVED_HERTZ 3
#define SAVED_TRIPLETS 9

/* The parameter lines, `key = value` in the order of the table's column `saved`: full double
 * precision, gravity as "gx, gy, gz", the periodic axes as "x,z", AUTO rows "auto" when unset. */
static void write_params(FILE *f, const sim_params *p) {
    int row_of[SIM_PARAM_COUNT + 2];
    for (int k = 0; k < SIM_PARAM_COUNT + 2; ++k) {
        row_of[k] = -1;
    }
#define SAVED_ROW(id, field, kind, dflt, bounds, saved, use)                                       \
    if ((saved) >= 0) {                                                                            \
        row_of[saved] = SIM_PARAM_##id;                                                            \
    }
    SIM_PARAM_SPECS(SAVED_ROW)
#undef SAVED_ROW
    for (int line = 0; line < SIM_PARAM_COUNT + 2; ++line) {
        const int id = row_of[line];
        char text[64];
        if (line == SAVED_HERTZ || line == SAVED_TRIPLETS) {
            fprintf(f, "%s = %d\n", line == SAVED_HERTZ ? "hertz" : "triplets",
                    (line == SAVED_HERTZ ? p->hertz : p->triplets) ? 1 : 0);
        } else if (id < 0) {
            continue;
        } else if (id == SIM_PARAM_GRAVITY) {
            fprintf(f, "gravity = %.17g, %.17g, %.17g\n", p->gravity.x, p->gravity.y, p->gravity.z);
        } else if (id == SIM_PARAM_PERIODIC) {
            fprintf(f, "periodic = %s\n", sim_periodic_text(p->periodic, ",", text, sizeof text));
        } else if (sim_param_is_auto(p, (sim_param_id)id)) {
            fprintf(f, "%s = auto\n", sim_param_info_of((sim_param_id)id)->key);
        } else {
            fprintf(f, "%s = %.17g\n", sim_param_info_of((sim_param_id)id)->key,
                    sim_param_value(p, (sim_param_id)id));
        }
    }
}

/* Errors show in ferror(f); sim_output_commit reports them with their cause. */
void sim_state_write_head(FILE *f, const sim_params *p, uint32_t n, int forces,
                          const sim_inserter *ins) {
    fprintf(f, "# nbsim state: %u bodies", n);
#ifdef NBSIM_VERSION
    fprintf(f, ", written by nbsim %s", NBSIM_VERSION);
#endif
    fprintf(f, "\n# format: assets/README.md; mass = density * 4/3 pi radius^3\n");
    write_params(f, p);
    if (ins != NULL) {
        sim_insert_write(f, &ins->def, &ins->progress);
    }
    fprintf(f, "x y z vx vy vz radius density wx wy wz%s\n", forces ? " fx fy fz" : "");
}

int sim_state_write_bodies(FILE *f, const sim_state *st, const sim_vec3d *forces) {
    for (uint32_t i = 0; i < st->n; ++i) {
        const sim_vec4d x = st->pos[i], v = st->vel[i];
        const sim_vec3d w = sim_state_spin(st, i);
        const double density = v.w / sim_sphere_mass(x.w, 1.0);
        fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g", x.x, x.y,
                x.z, v.x, v.y, v.z, x.w, density, w.x, w.y, w.z);
        if (forces != NULL) {
            fprintf(f, " %.17g %.17g %.17g", forces[i].x, forces[i].y, forces[i].z);
        }
        if (fputc('\n', f) == EOF) {
            return -1;
        }
    }
    return 0;
}

void sim_state_write_contacts_head(FILE *f, uint64_t count) {
    /* Friction's histories: what a resumed run needs to go on with the same springs. */
    fprintf(f, "# %llu contacts' springs [m] (friction): body i, body j < i or a wall, as seen "
               "from i\n%s\n",
            (unsigned long long)count, contact_header);
}

int sim_state_write_contacts(FILE *f, const sim_state_contact *contacts, uint64_t count) {
    for (uint64_t k = 0; k < count; ++k) {
        const sim_state_contact *c = &contacts[k];
        char j[16];
        if (SIM_CONTACT_IS_WALL(c->j)) {
            snprintf(j, sizeof j, "%s", wall_names[SIM_CONTACT_WALL_INDEX(c->j)]);
        } else {
            snprintf(j, sizeof j, "%u", c->j + 1u);
        }
        if (fprintf(f, "%u %s %.17g %.17g %.17g %.17g %.17g %.17g\n", c->i + 1u, j, c->xi.x,
                    c->xi.y, c->xi.z, c->roll.x, c->roll.y, c->roll.z) < 0) {
            return -1;
        }
    }
    return 0;
}

static void write_all(FILE *f, const sim_params *p, const sim_state *st, const sim_vec3d *forces,
                      const sim_inserter *ins) {
    sim_state_write_head(f, p, st->n, forces != NULL, ins);
    if (sim_state_write_bodies(f, st, forces) != 0 || st->contact_count == 0) {
        return;
    }
    sim_state_write_contacts_head(f, st->contact_count);
    (void)sim_state_write_contacts(f, st->contacts, st->contact_count);
}

sim_status sim_state_save(const char *path, const sim_params *params, const sim_state *state,
                          const sim_vec3d *forces, sim_error *err) {
    SIM_ASSERT(path != NULL && params != NULL && state != NULL);
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    write_all(out.file, params, state, forces, NULL);
    return sim_output_commit(&out, err);
}

sim_status sim_state_save_insert(const char *path, const sim_params *params, const sim_state *state,
                                 const sim_vec3d *forces, const sim_inserter *insert,
                                 sim_error *err) {
    SIM_ASSERT(path != NULL && params != NULL && state != NULL);
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    write_all(out.file, params, state, forces, insert);
    return sim_output_commit(&out, err);
}
