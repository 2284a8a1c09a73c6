/* SPDX-License-Identifier: MIT
 * nbsim — model parameters by name: parsing, the one rule per parameter and the defaults, all
 * from the rows of params.h. */
#include "nbsim/params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sim_param_info infos[SIM_PARAM_COUNT] = {
#define SIM_PARAM_INFO(id, key, flag, value, rule, help) {key, flag, value, rule, help},
    SIM_PARAM_LIST(SIM_PARAM_INFO)
#undef SIM_PARAM_INFO
};

const sim_param_info *sim_param_info_of(sim_param_id id) {
    SIM_ASSERT((int)id >= 0 && id < SIM_PARAM_COUNT);
    return &infos[id];
}

int sim_param_from_key(const char *key) {
    if (strcmp(key, "box") == 0) {
        return SIM_PARAM_BOX;
    }
    for (int i = 0; i < SIM_PARAM_COUNT; ++i) {
        if (strcmp(infos[i].key, key) == 0) {
            return i;
        }
    }
    return -1;
}

int sim_param_from_flag(const char *flag) {
    for (int i = 0; i < SIM_PARAM_COUNT; ++i) {
        if (strcmp(infos[i].flag, flag) == 0) {
            return i;
        }
    }
    return -1;
}

int sim_parse_number(const char *text, double *out) {
    /* strtod alone would take leading blanks, hexadecimal, "inf" and "nan". */
    const char *p = text;
    if (*p == '+' || *p == '-') {
        ++p;
    }
    if (!isdigit((unsigned char)p[0]) && !(p[0] == '.' && isdigit((unsigned char)p[1]))) {
        return 0;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        return 0;
    }
    char *end = NULL;
    errno = 0;
    const double v = strtod(text, &end);
    /* ERANGE also flags an underflow to a subnormal or zero, which is a fine number (a saved
     * state may hold one); only an overflow is refused. */
    if (end == text || *end != '\0' || (errno == ERANGE && fabs(v) >= 1.0) || !isfinite(v)) {
        return 0;
    }
    *out = v;
    return 1;
}

/* Whether v satisfies parameter id's bounds (gravity: one component), from the table's bounds
 * and kind columns. */
static int in_range(sim_param_id id, double v) {
#define SIM_IN(lo, hi) (v >= (lo) && v <= (hi))
#define SIM_ABOVE(lo, hi) (v > (lo) && v <= (hi))
#define SIM_WHOLE_REAL 1
#define SIM_WHOLE_DEFAULTED 1
#define SIM_WHOLE_AUTO 1
#define SIM_WHOLE_VEC3 1
#define SIM_WHOLE_WHOLE v == floor(v)
#define SIM_WHOLE_AXES v == floor(v)
#define SIM_RANGE_CASE(id, field, kind, dflt, bounds, saved, use)                                  \
    case SIM_PARAM_##id:                                                                           \
        return SIM_##bounds && SIM_WHOLE_##kind;
    switch (id) {
        SIM_PARAM_SPECS(SIM_RANGE_CASE)
    default:
        return 0;
    }
#undef SIM_RANGE_CASE
#undef SIM_IN
#undef SIM_ABOVE
}

static sim_status bad_value(sim_param_id id, const char *text, sim_error *err) {
    return sim_fail(err, SIM_BAD_ARGUMENT, "'%.80s' must be %s", text, infos[id].rule);
}

/* "gx,gy,gz" (blanks allowed around the numbers, as scene files write them). */
static int parse_vec3(const char *text, double g[3]) {
    char buf[256];
    if (strlen(text) >= sizeof buf) {
        return 0;
    }
    strcpy(buf, text);
    char *p = buf;
    for (int k = 0; k < 3; ++k) {
        char *comma = strchr(p, ',');
        if ((k < 2) != (comma != NULL)) {
            return 0;
        }
        if (comma != NULL) {
            *comma = '\0';
        }
        while (*p == ' ' || *p == '\t') {
            ++p;
        }
        size_t len = strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) {
            p[--len] = '\0';
        }
        if (!sim_parse_number(p, &g[k]) || !in_range(SIM_PARAM_GRAVITY, g[k])) {
            return 0;
        }
        p = comma != NULL ? comma + 1 : p + len;
    }
    return 1;
}

/* "none", or x, y, z each at most once, separated by nothing, commas or blanks: the bits of
 * sim_params.periodic, or -1. */
static int parse_axes(const char *text) {
    while (*text == ' ' || *text == '\t') { /* scene files keep the blanks around a value */
        ++text;
    }
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t')) {
        --len;
    }
    if (len == 4 && strncmp(text, "none", 4) == 0) {
        return 0;
    }
    int axes = 0;
    for (const char *c = text; c < text + len; ++c) {
        if (*c == ',' || *c == ' ' || *c == '\t') {
            continue;
        }
        const int bit = *c == 'x' ? 1 : *c == 'y' ? 2 : *c == 'z' ? 4 : 0;
        if (bit == 0 || (axes & bit)) {
            return -1;
        }
        axes |= bit;
    }
    return axes != 0 ? axes : -1;
}

const char *sim_periodic_text(int axes, const char *sep, char *out, size_t cap) {
    SIM_ASSERT(cap >= 8);
    out[0] = '\0';
    if ((axes & SIM_PERIODIC_ALL) == 0) {
        snprintf(out, cap, "none");
        return out;
    }
    for (int a = 0; a < 3; ++a) {
        if (axes & (1 << a)) {
            const size_t len = strlen(out);
            snprintf(out + len, cap - len, "%s%c", len ? sep : "", "xyz"[a]);
        }
    }
    return out;
}

/* The parameters that may be left to a default ("auto", kind AUTO): their field, else NULL. */
static sim_optional_value *optional(sim_params *p, sim_param_id id) {
#define SIM_OPTIONAL_CASE(id, field, kind, dflt, bounds, saved, use)                               \
    case SIM_PARAM_##id:                                                                           \
        return SIM_OPTIONAL_##kind(p->field);
#define SIM_OPTIONAL_REAL(f) NULL
#define SIM_OPTIONAL_DEFAULTED(f) NULL
#define SIM_OPTIONAL_WHOLE(f) NULL
#define SIM_OPTIONAL_AUTO(f) &(f)
#define SIM_OPTIONAL_VEC3(f) NULL
#define SIM_OPTIONAL_AXES(f) NULL
    switch (id) {
        SIM_PARAM_SPECS(SIM_OPTIONAL_CASE)
    default:
        return NULL;
    }
#undef SIM_OPTIONAL_CASE
}

int sim_param_is_auto(const sim_params *p, sim_param_id id) {
    const sim_optional_value *opt = optional((sim_params *)p, id);
    return opt != NULL && !opt->set;
}

static void put(sim_params *p, sim_param_id id, double v) {
#define SIM_PUT_CASE(id, field, kind, dflt, bounds, saved, use)                                    \
    case SIM_PARAM_##id:                                                                           \
        SIM_PUT_##kind(p->field);                                                                  \
        break;
#define SIM_PUT_REAL(f) f = v
#define SIM_PUT_DEFAULTED(f) f = v
#define SIM_PUT_WHOLE(f) f = (int)v
#define SIM_PUT_AUTO(f)                                                                            \
    (f).value = v;                                                                                 \
    (f).set = 1
#define SIM_PUT_VEC3(f) SIM_ASSERT(!"not a scalar parameter")
#define SIM_PUT_AXES(f) SIM_ASSERT(!"not a scalar parameter")
    switch (id) {
        SIM_PARAM_SPECS(SIM_PUT_CASE)
    default:
        SIM_ASSERT(!"not a parameter");
    }
#undef SIM_PUT_CASE
}

double sim_param_value(const sim_params *p, sim_param_id id) {
#define SIM_VALUE_CASE(id, field, kind, dflt, bounds, saved, use)                                  \
    case SIM_PARAM_##id:                                                                           \
        return SIM_VALUE_##kind(p->field, SIM_DEFAULT_##id);
#define SIM_VALUE_REAL(f, d) (f)
#define SIM_VALUE_DEFAULTED(f, d) ((f) == 0.0 ? (d) : (f))
#define SIM_VALUE_WHOLE(f, d) (double)(f)
#define SIM_VALUE_AUTO(f, d) (f).value
#define SIM_VALUE_VEC3(f, d) (SIM_ASSERT(!"gravity is three numbers"), 0.0)
#define SIM_VALUE_AXES(f, d) (double)(f)
    switch (id) {
        SIM_PARAM_SPECS(SIM_VALUE_CASE)
    default:
        SIM_ASSERT(!"not a parameter");
        return 0.0;
    }
#undef SIM_VALUE_CASE
}

sim_status sim_param_set(sim_params *p, sim_param_id id, const char *text, sim_error *err) {
    SIM_ASSERT((int)id >= 0 && id < SIM_PARAM_COUNT);
    if (id == SIM_PARAM_PERIODIC) {
        const int axes = parse_axes(text);
        if (axes < 0) {
            return bad_value(id, text, err);
        }
        p->periodic = axes;
        return SIM_OK;
    }
    if (id == SIM_PARAM_GRAVITY) {
        double g[3];
        if (!parse_vec3(text, g)) {
            return bad_value(id, text, err);
        }
        p->gravity = (sim_vec3d){g[0], g[1], g[2]};
        return SIM_OK;
    }
    sim_optional_value *opt = optional(p, id);
    if (opt != NULL && strcmp(text, "auto") == 0) {
        opt->value = 0.0;
        opt->set = 0;
        return SIM_OK;
    }
    double v = 0.0;
    if (!sim_parse_number(text, &v) || !in_range(id, v)) {
        return bad_value(id, text, err);
    }
    put(p, id, v);
    return SIM_OK;
}

void sim_params_take(sim_params *to, const sim_params *from, unsigned bits) {
#define SIM_TAKE(id, field)                                                                        \
    if (bits & (1u << SIM_PARAM_##id)) {                                                           \
        to->field = from->field;                                                                   \
    }
    SIM_PARAM_FIELDS(SIM_TAKE)
#undef SIM_TAKE
    if (bits & SIM_PARAM_BIT_HERTZ) {
        to->hertz = from->hertz;
    }
    if (bits & SIM_PARAM_BIT_TRIPLETS) {
        to->triplets = from->triplets;
    }
}

sim_status sim_params_check(const sim_params *p, sim_error *err) {
    for (int id = 0; id < SIM_PARAM_COUNT; ++id) {
        if (id == SIM_PARAM_GRAVITY) {
            const double g[3] = {p->gravity.x, p->gravity.y, p->gravity.z};
            for (int k = 0; k < 3; ++k) {
                if (!in_range(SIM_PARAM_GRAVITY, g[k])) {
                    return sim_fail(err, SIM_BAD_ARGUMENT, "gravity (%g, %g, %g) must be %s", g[0],
                                    g[1], g[2], infos[id].rule);
                }
            }
            continue;
        }
        /* DEFAULTED: 0 is the zero-initialised field (the default); a text "0" is refused. */
        const double v = sim_param_value(p, (sim_param_id)id);
        if (!in_range((sim_param_id)id, v)) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "%s = %g must be %s", infos[id].key, v,
                            infos[id].rule);
        }
    }
    if ((p->hertz != 0 && p->hertz != 1) || (p->triplets != 0 && p->triplets != 1)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "hertz = %d and triplets = %d must be 0 or 1",
                        p->hertz, p->triplets);
    }
    for (int id = 0; id < SIM_PARAM_COUNT; ++id) {
        const sim_optional_value *opt = optional((sim_params *)p, (sim_param_id)id);
        if (opt != NULL && opt->set != 0 && opt->set != 1) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "%s.set = %d must be 0 or 1", infos[id].key,
                            opt->set);
        }
    }
    return SIM_OK;
}

sim_params sim_params_default(void) {
    sim_params p;
    memset(&p, 0, sizeof p); /* AUTO: auto */
    /* DEFAULTED rows are written out too, so that a saved state (which writes the value in
     * force) loads as it was; a params struct zeroed by hand means the same. */
#define SIM_INIT_ROW(id, field, kind, dflt, bounds, saved, use) SIM_INIT_##kind(p.field, dflt);
#define SIM_INIT_REAL(f, d) f = d
#define SIM_INIT_DEFAULTED(f, d) f = d
#define SIM_INIT_WHOLE(f, d) f = d
#define SIM_INIT_AUTO(f, d) (void)0
#define SIM_INIT_VEC3(f, d) f = (sim_vec3d){d, d, d}
#define SIM_INIT_AXES(f, d) f = d
    SIM_PARAM_SPECS(SIM_INIT_ROW)
#undef SIM_INIT_ROW
    p.hertz = 0;
    p.triplets = 0;
    return p;
}
