/* SPDX-License-Identifier: MIT
 * nbsim — an insertion's settings as text (include/nbsim/insert.h): parsed from the command line
 * and scene files by one set of rules, checked against the box, written into saved states. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "nbsim/insert.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/params.h"

typedef struct {
    const char *key, *flag, *value, *rule, *help;
} insert_row;

static const insert_row rows[SIM_INSERT_KEY_COUNT] = {
#define INSERT_ROW(id, key, flag, value, rule, help) {key, flag, value, rule, help},
    SIM_INSERT_LIST(INSERT_ROW)
#undef INSERT_ROW
};

/* The largest rate, radius and speed taken: what float on the GPU holds with room to spare. */
#define INSERT_RATE_MAX 1e12
#define INSERT_SPEED_MAX 1e6
#define INSERT_DENSITY_MAX 1e20
#define INSERT_SIGMA_MAX 5.0

sim_insert_def sim_insert_def_default(void) {
    sim_insert_def d;
    memset(&d, 0, sizeof d);
    d.radii = SIM_INSERT_FIXED;
    d.radius_a = d.radius_b = 0.5;
    d.density = 1.0;
    d.seed = 1;
    return d;
}

const char *sim_insert_key_name(sim_insert_key k) {
    return rows[k].key;
}
const char *sim_insert_flag(sim_insert_key k) {
    return rows[k].flag;
}
const char *sim_insert_value(sim_insert_key k) {
    return rows[k].value;
}
const char *sim_insert_rule(sim_insert_key k) {
    return rows[k].rule;
}
const char *sim_insert_help(sim_insert_key k) {
    return rows[k].help;
}

int sim_insert_from_key(const char *key) {
    for (int k = 0; k < SIM_INSERT_KEY_COUNT; ++k) {
        if (strcmp(rows[k].key, key) == 0) {
            return k;
        }
    }
    return -1;
}

int sim_insert_from_flag(const char *flag) {
    for (int k = 0; k < SIM_INSERT_KEY_COUNT; ++k) {
        if (strcmp(rows[k].flag, flag) == 0) {
            return k;
        }
    }
    return -1;
}

/* Up to max numbers separated by commas (blanks around them allowed) into v; their count, or -1
 * when one is not a number or there are more than max. */
static int numbers(const char *text, double *v, int max) {
    char buf[256];
    if (strlen(text) >= sizeof buf) {
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", text);
    int count = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t') {
            ++tok;
        }
        size_t len = strlen(tok);
        while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t')) {
            tok[--len] = '\0';
        }
        if (count == max || !sim_parse_number(tok, &v[count])) {
            return -1;
        }
        ++count;
    }
    return count;
}

/* text after "prefix:", or NULL when text does not start with it. */
static const char *after(const char *text, const char *prefix) {
    const size_t len = strlen(prefix);
    return strncmp(text, prefix, len) == 0 && text[len] == ':' ? text + len + 1 : NULL;
}

static int set_region(sim_insert_def *d, const char *text) {
    double v[6];
    const char *rest = after(text, "box");
    if (rest != NULL) {
        if (numbers(rest, v, 6) != 6 || !(v[0] < v[3] && v[1] < v[4] && v[2] < v[5])) {
            return -1;
        }
        d->shape = SIM_INSERT_BOX;
        for (int a = 0; a < 3; ++a) {
            d->lo[a] = v[a];
            d->hi[a] = v[a + 3];
        }
        return 0;
    }
    rest = after(text, "cylinder");
    if (rest == NULL || (rest[0] != 'x' && rest[0] != 'y' && rest[0] != 'z') || rest[1] != ',') {
        return -1;
    }
    const int axis = rest[0] - 'x';
    if (numbers(rest + 2, v, 5) != 5 || !(v[2] > 0.0) || !(v[3] < v[4])) {
        return -1;
    }
    d->shape = SIM_INSERT_CYLINDER;
    d->axis = axis;
    d->cyl_radius = v[2];
    d->centre[axis] = 0.0;
    d->centre[(axis + 1) % 3 < (axis + 2) % 3 ? (axis + 1) % 3 : (axis + 2) % 3] = v[0];
    d->centre[(axis + 1) % 3 < (axis + 2) % 3 ? (axis + 2) % 3 : (axis + 1) % 3] = v[1];
    for (int a = 0; a < 3; ++a) {
        d->lo[a] = a == axis ? v[3] : d->centre[a] - v[2];
        d->hi[a] = a == axis ? v[4] : d->centre[a] + v[2];
    }
    return 0;
}

static int set_rate(sim_insert_def *d, const char *text) {
    const char *mass = after(text, "mass");
    double r = 0.0;
    if (!sim_parse_number(mass != NULL ? mass : text, &r) || !(r > 0.0 && r <= INSERT_RATE_MAX)) {
        return -1;
    }
    d->rate = r;
    d->rate_mass = mass != NULL;
    return 0;
}

static int set_radius(sim_insert_def *d, const char *text) {
    double v[2];
    const char *rest;
    if ((rest = after(text, "fixed")) != NULL) {
        if (numbers(rest, v, 1) != 1 || !(v[0] > 0.0 && v[0] <= 1e9)) {
            return -1;
        }
        d->radii = SIM_INSERT_FIXED;
        d->radius_a = d->radius_b = v[0];
    } else if ((rest = after(text, "uniform")) != NULL) {
        if (numbers(rest, v, 2) != 2 || !(v[0] > 0.0 && v[0] <= v[1] && v[1] <= 1e9)) {
            return -1;
        }
        d->radii = SIM_INSERT_UNIFORM;
        d->radius_a = v[0];
        d->radius_b = v[1];
    } else if ((rest = after(text, "lognormal")) != NULL) {
        if (numbers(rest, v, 2) != 2 || !(fabs(v[0]) <= 20.0) ||
            !(v[1] >= 0.0 && v[1] <= INSERT_SIGMA_MAX)) {
            return -1;
        }
        d->radii = SIM_INSERT_LOGNORMAL;
        d->radius_a = v[0];
        d->radius_b = v[1];
    } else {
        return -1;
    }
    return 0;
}

static int set_stop(sim_insert_def *d, const char *text) {
    char buf[128];
    if (strlen(text) >= sizeof buf) {
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", text);
    double t = 0.0;
    uint64_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') {
            ++tok;
        }
        const char *rest;
        if ((rest = after(tok, "time")) != NULL && t == 0.0) {
            if (!sim_parse_number(rest, &t) || !(t > 0.0 && t <= 1e12)) {
                return -1;
            }
        } else if ((rest = after(tok, "count")) != NULL && n == 0) {
            char *end = NULL;
            errno = 0;
            const unsigned long long c = strtoull(rest, &end, 10);
            if (rest[0] < '0' || rest[0] > '9' || *end != '\0' || errno != 0 || c == 0 ||
                c > UINT32_MAX) {
                return -1;
            }
            n = c;
        } else {
            return -1;
        }
    }
    if (t == 0.0 && n == 0) {
        return -1;
    }
    d->stop_time = t;
    d->stop_count = n;
    return 0;
}

sim_status sim_insert_set(sim_insert_def *d, sim_insert_key k, const char *text, sim_error *err) {
    sim_insert_def scratch = *d;
    int bad = 0;
    double v[3];
    switch (k) {
    case SIM_INSERT_REGION:
        bad = set_region(&scratch, text);
        break;
    case SIM_INSERT_RATE:
        bad = set_rate(&scratch, text);
        break;
    case SIM_INSERT_RADIUS:
        bad = set_radius(&scratch, text);
        break;
    case SIM_INSERT_VELOCITY:
        bad = numbers(text, v, 3) != 3 || !(fabs(v[0]) <= INSERT_SPEED_MAX) ||
              !(fabs(v[1]) <= INSERT_SPEED_MAX) || !(fabs(v[2]) <= INSERT_SPEED_MAX);
        scratch.velocity = (sim_vec3d){v[0], v[1], v[2]};
        break;
    case SIM_INSERT_DENSITY:
        bad = !sim_parse_number(text, &v[0]) || !(v[0] > 0.0 && v[0] <= INSERT_DENSITY_MAX);
        scratch.density = v[0];
        break;
    case SIM_INSERT_STOP:
        bad = set_stop(&scratch, text);
        break;
    case SIM_INSERT_SEED: {
        char *end = NULL;
        errno = 0;
        scratch.seed = strtoull(text, &end, 10);
        bad = text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0;
        break;
    }
    default:
        bad = 1;
    }
    if (bad) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "'%.80s' must be %s", text, rows[k].rule);
    }
    *d = scratch;
    return SIM_OK;
}

sim_status sim_insert_set_progress(sim_insert_progress *p, const char *text, sim_error *err) {
    double v[6];
    const int ok = numbers(text, v, 6) == 6 && v[0] >= 0.0 && v[1] >= v[2] && v[2] >= 0.0 &&
                   v[1] <= 1e18 && v[0] == floor(v[0]) && v[1] == floor(v[1]) &&
                   v[2] == floor(v[2]) && v[3] >= 0.0 && v[4] >= 0.0 && v[5] >= 0.0;
    if (!ok) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "'%.80s' must be six numbers: batches, bodies drawn, bodies inserted "
                        "(whole, drawn >= inserted), mass drawn, clock, interval (>= 0)",
                        text);
    }
    p->batches = (uint64_t)v[0];
    p->planned = (uint64_t)v[1];
    p->inserted = (uint64_t)v[2];
    p->planned_mass = v[3];
    p->clock = v[4];
    p->interval = v[5];
    return SIM_OK;
}

void sim_insert_take(sim_insert_def *to, const sim_insert_def *from, unsigned bits) {
    if (bits & (1u << SIM_INSERT_REGION)) {
        to->shape = from->shape;
        memcpy(to->lo, from->lo, sizeof to->lo);
        memcpy(to->hi, from->hi, sizeof to->hi);
        memcpy(to->centre, from->centre, sizeof to->centre);
        to->axis = from->axis;
        to->cyl_radius = from->cyl_radius;
    }
    if (bits & (1u << SIM_INSERT_RATE)) {
        to->rate = from->rate;
        to->rate_mass = from->rate_mass;
    }
    if (bits & (1u << SIM_INSERT_RADIUS)) {
        to->radii = from->radii;
        to->radius_a = from->radius_a;
        to->radius_b = from->radius_b;
    }
    if (bits & (1u << SIM_INSERT_VELOCITY)) {
        to->velocity = from->velocity;
    }
    if (bits & (1u << SIM_INSERT_DENSITY)) {
        to->density = from->density;
    }
    if (bits & (1u << SIM_INSERT_STOP)) {
        to->stop_time = from->stop_time;
        to->stop_count = from->stop_count;
    }
    if (bits & (1u << SIM_INSERT_SEED)) {
        to->seed = from->seed;
    }
}

/* ln r is cut at 4 sigma (sim/session/insert.c draws again beyond): radii stay bounded, so the
 * step (from the lightest body) and the overlap grid's cells (from the largest) are known. */
#define LOGNORMAL_CUT 4.0

void sim_insert_radius_range(const sim_insert_def *d, double *r_min, double *r_max) {
    if (d->radii == SIM_INSERT_LOGNORMAL) {
        *r_min = exp(d->radius_a - LOGNORMAL_CUT * d->radius_b);
        *r_max = exp(d->radius_a + LOGNORMAL_CUT * d->radius_b);
    } else {
        *r_min = d->radius_a;
        *r_max = d->radius_b;
    }
}

sim_status sim_insert_check(const sim_insert_def *d, const sim_params *p, sim_error *err) {
    if (d->shape == SIM_INSERT_OFF) {
        return SIM_OK;
    }
    const insert_row *region = &rows[SIM_INSERT_REGION], *rate = &rows[SIM_INSERT_RATE];
    if (!(d->rate > 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "%s (%s): an insertion needs a rate (%s, %s)",
                        region->flag, region->key, rate->flag, rate->key);
    }
    const double L = p->box_half;
    for (int a = 0; a < 3; ++a) {
        if (d->lo[a] < -L || d->hi[a] > L) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "%s (%s): the region spans %g..%g on %c, beyond the box's +-%g",
                            region->flag, region->key, d->lo[a], d->hi[a], 'x' + a, L);
        }
    }
    double r_min = 0.0, r_max = 0.0;
    sim_insert_radius_range(d, &r_min, &r_max);
    const double across =
        d->shape == SIM_INSERT_CYLINDER
            ? fmin(2.0 * d->cyl_radius, d->hi[d->axis] - d->lo[d->axis])
            : fmin(d->hi[0] - d->lo[0], fmin(d->hi[1] - d->lo[1], d->hi[2] - d->lo[2]));
    if (!(2.0 * r_max <= across)) {
        const insert_row *radius = &rows[SIM_INSERT_RADIUS];
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s (%s): the largest radius %g m does not fit the region %g m across "
                        "(%s)",
                        radius->flag, radius->key, r_max, across, region->flag);
    }
    return SIM_OK;
}

void sim_insert_write(FILE *f, const sim_insert_def *d, const sim_insert_progress *p) {
    if (d->shape == SIM_INSERT_OFF) {
        return;
    }
    if (d->shape == SIM_INSERT_BOX) {
        fprintf(f, "insert = box:%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", d->lo[0], d->lo[1],
                d->lo[2], d->hi[0], d->hi[1], d->hi[2]);
    } else {
        const int a = d->axis, b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
        fprintf(f, "insert = cylinder:%c,%.17g,%.17g,%.17g,%.17g,%.17g\n", 'x' + a, d->centre[b],
                d->centre[c], d->cyl_radius, d->lo[a], d->hi[a]);
    }
    fprintf(f, "insert_rate = %s%.17g\n", d->rate_mass ? "mass:" : "", d->rate);
    static const char *const radii[] = {"fixed", "uniform", "lognormal"};
    if (d->radii == SIM_INSERT_FIXED) {
        fprintf(f, "insert_radius = fixed:%.17g\n", d->radius_a);
    } else {
        fprintf(f, "insert_radius = %s:%.17g,%.17g\n", radii[d->radii], d->radius_a, d->radius_b);
    }
    fprintf(f, "insert_velocity = %.17g,%.17g,%.17g\n", d->velocity.x, d->velocity.y,
            d->velocity.z);
    fprintf(f, "insert_density = %.17g\n", d->density);
    if (d->stop_time > 0.0 || d->stop_count > 0) {
        char t[48] = "", n[32] = "";
        if (d->stop_time > 0.0) {
            snprintf(t, sizeof t, "time:%.17g", d->stop_time);
        }
        if (d->stop_count > 0) {
            snprintf(n, sizeof n, "count:%llu", (unsigned long long)d->stop_count);
        }
        fprintf(f, "insert_stop = %s%s%s\n", t, t[0] && n[0] ? "," : "", n);
    }
    fprintf(f, "insert_seed = %llu\n", (unsigned long long)d->seed);
    fprintf(f, "%s = %llu, %llu, %llu, %.17g, %.17g, %.17g\n", SIM_INSERT_STATE_KEY,
            (unsigned long long)p->batches, (unsigned long long)p->planned,
            (unsigned long long)p->inserted, p->planned_mass, p->clock, p->interval);
}
