/* SPDX-License-Identifier: MIT
 * nbsim — body state allocation. */
#include "nbsim/state.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

sim_status sim_state_alloc(sim_state *state, uint32_t n, sim_error *err) {
    SIM_ASSERT(state != NULL);
    memset(state, 0, sizeof *state);
    state->pos = calloc(n ? n : 1, sizeof *state->pos);
    state->vel = calloc(n ? n : 1, sizeof *state->vel);
    if (state->pos == NULL || state->vel == NULL) {
        sim_state_free(state);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu bytes of host memory for their state",
                        n, (unsigned long long)n * (sizeof *state->pos + sizeof *state->vel));
    }
    state->spin = calloc(n ? n : 1, sizeof *state->spin);
    if (state->spin == NULL) {
        sim_state_free(state);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu more bytes of host memory for their "
                        "spin",
                        n, (unsigned long long)n * sizeof *state->spin);
    }
    state->n = n;
    return SIM_OK;
}

void sim_state_free(sim_state *state) {
    if (state != NULL) {
        free(state->pos);
        free(state->vel);
        free(state->spin);
        free(state->contacts);
        memset(state, 0, sizeof *state);
    }
}

sim_status sim_state_set_contact_count(sim_state *state, uint64_t count, sim_error *err) {
    if (count > SIZE_MAX / sizeof *state->contacts) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "%llu contacts are more than memory holds",
                        (unsigned long long)count);
    }
    sim_state_contact *c = realloc(state->contacts, (count ? count : 1) * sizeof *c);
    if (c == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the histories of %llu contacts",
                        (unsigned long long)count);
    }
    state->contacts = c;
    state->contact_count = count;
    return SIM_OK;
}

sim_status sim_state_copy(sim_state *dst, const sim_state *src, sim_error *err) {
    SIM_TRY(sim_state_alloc(dst, src->n, err));
    sim_state_copy_bodies(dst, src);
    if (src->contact_count > 0) {
        const sim_status st = sim_state_set_contact_count(dst, src->contact_count, err);
        if (st != SIM_OK) {
            sim_state_free(dst);
            return st;
        }
        memcpy(dst->contacts, src->contacts, (size_t)src->contact_count * sizeof *src->contacts);
    }
    return SIM_OK;
}

void sim_state_copy_bodies(sim_state *dst, const sim_state *src) {
    SIM_ASSERT(dst->n == src->n);
    memcpy(dst->pos, src->pos, (size_t)src->n * sizeof *src->pos);
    memcpy(dst->vel, src->vel, (size_t)src->n * sizeof *src->vel);
    if (dst->spin != NULL && src->spin != NULL) {
        memcpy(dst->spin, src->spin, (size_t)src->n * sizeof *src->spin);
    } else if (dst->spin != NULL) {
        memset(dst->spin, 0, (size_t)src->n * sizeof *dst->spin);
    }
}

sim_status sim_state_check_bodies(const sim_state *s, sim_error *err) {
    for (uint32_t i = 0; i < s->n; ++i) {
        const double r = s->pos[i].w, m = s->vel[i].w;
        if (!(r > 0.0 && isfinite(r)) || !(m > 0.0 && isfinite(m))) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "body %u: radius %g and mass %g must be positive and finite", i, r, m);
        }
    }
    for (uint64_t k = 0; k < s->contact_count; ++k) {
        const sim_state_contact *c = &s->contacts[k];
        if (c->i >= s->n || (c->j >= c->i && !SIM_CONTACT_IS_WALL(c->j))) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "contact %llu: body %u with %s %u: i must be one of the %u bodies and "
                            "j a body below i or a wall (0-5)",
                            (unsigned long long)k, c->i,
                            SIM_CONTACT_IS_WALL(c->j) ? "wall" : "body",
                            SIM_CONTACT_IS_WALL(c->j) ? (uint32_t)SIM_CONTACT_WALL_INDEX(c->j)
                                                      : c->j,
                            s->n);
        }
    }
    return SIM_OK;
}

double sim_state_kinetic_energy(const sim_state *s) {
    double kinetic = 0.0;
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d v = s->vel[i];
        kinetic += 0.5 * v.w * (v.x * v.x + v.y * v.y + v.z * v.z);
    }
    return kinetic;
}

double sim_state_rotational_energy(const sim_state *s) {
    double e = 0.0;
    for (uint32_t i = 0; s->spin != NULL && i < s->n; ++i) {
        const sim_vec4d w = s->spin[i];
        const double r = s->pos[i].w, inertia = 0.4 * s->vel[i].w * r * r;
        e += 0.5 * inertia * (w.x * w.x + w.y * w.y + w.z * w.z);
    }
    return e;
}

void sim_state_to_floats(const sim_state *s, const sim_vec3d *forces, sim_vec4f *pos,
                         sim_vec4f *vel, sim_vec4f *force, sim_vec4f *spin, float *speed) {
    for (uint32_t i = 0; i < s->n; ++i) {
        const sim_vec4d p = s->pos[i], v = s->vel[i];
        if (pos != NULL) {
            pos[i] = (sim_vec4f){(float)p.x, (float)p.y, (float)p.z, (float)p.w};
        }
        if (vel != NULL) {
            vel[i] = (sim_vec4f){(float)v.x, (float)v.y, (float)v.z, (float)v.w};
        }
        if (force != NULL) {
            const sim_vec3d f = forces != NULL ? forces[i] : (sim_vec3d){0.0, 0.0, 0.0};
            force[i] = (sim_vec4f){(float)f.x, (float)f.y, (float)f.z, 0.0f};
        }
        if (spin != NULL) {
            const sim_vec4d w = s->spin != NULL ? s->spin[i] : (sim_vec4d){0.0, 0.0, 0.0, 0.0};
            spin[i] = (sim_vec4f){(float)w.x, (float)w.y, (float)w.z, 0.0f};
        }
        if (speed != NULL) {
            speed[i] = (float)sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        }
    }
}

/* A position's bits, -0 as +0, mixed (splitmix64's finaliser) into one sortable key. */
typedef struct {
    uint64_t key;
    uint32_t body;
} position_key;

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t bits_of(double v) {
    uint64_t b;
    v = v == 0.0 ? 0.0 : v;
    memcpy(&b, &v, sizeof b);
    return b;
}

static int compare_keys(const void *a, const void *b) {
    const position_key *x = a, *y = b;
    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return (x->body > y->body) - (x->body < y->body);
}

static int same_centre(const sim_state *s, uint32_t a, uint32_t b) {
    const sim_vec4d p = s->pos[a], q = s->pos[b];
    return p.x == q.x && p.y == q.y && p.z == q.z;
}

uint64_t sim_state_coincident_pairs(const sim_state *s, uint32_t *i, uint32_t *j) {
    position_key *keys = s->n > 1 ? malloc((size_t)s->n * sizeof *keys) : NULL;
    if (keys == NULL) {
        return 0;
    }
    for (uint32_t b = 0; b < s->n; ++b) {
        const sim_vec4d p = s->pos[b];
        keys[b].key = mix(mix(mix(bits_of(p.x)) ^ bits_of(p.y)) ^ bits_of(p.z));
        keys[b].body = b;
    }
    qsort(keys, s->n, sizeof *keys, compare_keys);
    /* Runs of one key and one centre; a (never seen) hash collision only splits a run. */
    uint64_t pairs = 0;
    uint32_t first_i = 0, first_j = 0;
    for (uint32_t a = 0, b; a < s->n; a = b) {
        for (b = a + 1;
             b < s->n && keys[b].key == keys[a].key && same_centre(s, keys[a].body, keys[b].body);
             ++b) {
        }
        const uint64_t k = b - a;
        if (k > 1) {
            if (pairs == 0 || keys[a].body < first_i ||
                (keys[a].body == first_i && keys[a + 1].body < first_j)) {
                first_i = keys[a].body;
                first_j = keys[a + 1].body;
            }
            pairs += k * (k - 1) / 2;
        }
    }
    free(keys);
    if (pairs > 0) {
        *i = first_i;
        *j = first_j;
    }
    return pairs;
}
