/* SPDX-License-Identifier: MIT
 * nbsim — the run's parameters in a dump, so that a run continued from it (--scene run.xyz)
 * has the physics it was dumped with: every row of SIM_PARAM_LIST but the box (each format
 * carries the box in its own way), the contact law (hertz) and triplets, written at full double
 * precision under their scene-file keys and read back through the same rules as scene files
 * (sim_param_set), so a dump accepts and refuses exactly what a scene file does. */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <stdio.h>
#include <string.h>

size_t traj_params_text(char *out, size_t cap, const sim_params *p, const char *prefix,
                        int quoted_vectors) {
    SIM_ASSERT(cap > 0);
    size_t len = 0;
    out[0] = '\0';
#define APPEND(...)                                                                                \
    do {                                                                                           \
        const int k_ = snprintf(out + len, cap - len, __VA_ARGS__);                                \
        len = k_ > 0 && (size_t)k_ < cap - len ? len + (size_t)k_ : len;                           \
    } while (0)
    for (int id = 0; id < SIM_PARAM_COUNT; ++id) {
        if (id == SIM_PARAM_BOX) {
            continue;
        }
        const char *key = sim_param_info_of((sim_param_id)id)->key;
        char a[32], b[32], c[32];
        if (id == SIM_PARAM_GRAVITY) {
            traj_fmt_double(a, sizeof a, p->gravity.x);
            traj_fmt_double(b, sizeof b, p->gravity.y);
            traj_fmt_double(c, sizeof c, p->gravity.z);
            if (quoted_vectors) {
                APPEND("%s%s%s=\"%s %s %s\"", len ? " " : "", prefix, key, a, b, c);
            } else {
                APPEND("%s%s%s=%s,%s,%s", len ? " " : "", prefix, key, a, b, c);
            }
        } else if (id == SIM_PARAM_PERIODIC) { /* "xz": no comma, no blank in any format */
            APPEND("%s%s%s=%s", len ? " " : "", prefix, key,
                   sim_periodic_text(p->periodic, "", a, sizeof a));
        } else if (sim_param_is_auto(p, (sim_param_id)id)) {
            APPEND("%s%s%s=auto", len ? " " : "", prefix, key);
        } else {
            APPEND("%s%s%s=%s", len ? " " : "", prefix, key,
                   traj_fmt_double(a, sizeof a, sim_param_value(p, (sim_param_id)id)));
        }
    }
    APPEND(" %shertz=%d %striplets=%d", prefix, p->hertz ? 1 : 0, prefix, p->triplets ? 1 : 0);
#undef APPEND
    return len;
}

int traj_params_read(traj_bodies *b, const char *key, const char *value, const char *path,
                     uint64_t frame, sim_error *err) {
    const int id = sim_param_from_key(key);
    const int hertz = strcmp(key, "hertz") == 0, triplets = strcmp(key, "triplets") == 0;
    if ((id < 0 || id == SIM_PARAM_BOX || strcmp(key, "box") == 0) && !hertz && !triplets) {
        return 0; /* the box comes from the format's own; other keys are not nbsim's */
    }
    char text[256];
    snprintf(text, sizeof text, "%s", value);
    if (hertz || triplets) {
        if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
            sim_fail(err, SIM_PARSE, "%s: frame %llu: %s = '%.60s' must be 0 or 1", path,
                     (unsigned long long)frame, key, value);
            return -1;
        }
        *(hertz ? &b->params.hertz : &b->params.triplets) = text[0] == '1';
        b->params_found |= hertz ? SIM_PARAM_BIT_HERTZ : SIM_PARAM_BIT_TRIPLETS;
        return 1;
    }
    if (id == SIM_PARAM_GRAVITY) { /* "gx gy gz" (extended XYZ's arrays) or "gx,gy,gz" */
        for (char *c = text; *c != '\0'; ++c) {
            *c = *c == ' ' ? ',' : *c;
        }
    }
    sim_error why;
    if (sim_param_set(&b->params, (sim_param_id)id, text, &why) != SIM_OK) {
        sim_fail(err, SIM_PARSE, "%s: frame %llu: %s: %s", path, (unsigned long long)frame, key,
                 why.message);
        return -1;
    }
    b->params_found |= 1u << id;
    return 1;
}

void traj_params_apply(const traj_bodies *b, sim_params *p) {
    sim_params_take(p, &b->params, b->params_found);
}
