/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference's neighbour lists (cpu_nlist.h): the build from the culled tile
 * pairs, the rebuild test and the sweep, in double. Single-threaded build (as the CPU's culling
 * passes); the sweep runs a slice of slots on the calling thread. */
#include "nlist/cpu_nlist.h"

#include <stdlib.h>
#include <string.h>

void sim_cpu_nlist_free(sim_cpu_nlist *l) {
    free(l->nbr);
    free(l->count);
    free(l->ref);
    memset(l, 0, sizeof *l);
}

sim_status sim_cpu_nlist_init(sim_cpu_nlist *l, uint32_t n, uint32_t cap, int half,
                              sim_error *err) {
    memset(l, 0, sizeof *l);
    l->n = n;
    l->stride = sim_nlist_stride(n);
    l->half = half;
    l->count = calloc(n, sizeof *l->count);
    l->ref = calloc(n, sizeof *l->ref);
    if (l->count == NULL || l->ref == NULL) {
        sim_cpu_nlist_free(l);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate neighbour lists for %u bodies", n);
    }
    const sim_status st = sim_cpu_nlist_resize(l, cap, err);
    if (st != SIM_OK) {
        sim_cpu_nlist_free(l);
    }
    return st;
}

sim_status sim_cpu_nlist_resize(sim_cpu_nlist *l, uint32_t cap, sim_error *err) {
    cap = cap > 0 ? cap : 1;
    uint32_t *nbr = malloc((size_t)cap * l->stride * sizeof *nbr);
    if (nbr == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate neighbour lists of %u entries for %u bodies", cap, l->n);
    }
    free(l->nbr);
    l->nbr = nbr;
    l->cap = cap;
    l->built = 0;
    return SIM_OK;
}

uint64_t sim_cpu_nlist_bytes(const sim_cpu_nlist *l) {
    return (uint64_t)l->cap * l->stride * sizeof *l->nbr +
           (uint64_t)l->n * (sizeof *l->count + sizeof *l->ref);
}

int sim_cpu_nlist_stale(const sim_cpu_nlist *l, const sim_vec4d *pos, double skin) {
    if (!l->built || l->skin != skin) {
        return 1;
    }
    const double half = 0.5 * skin, h2 = half * half;
    for (uint32_t s = 0; s < l->n; ++s) {
        if (sim_nlist_moved_pd(pos[s], l->ref[s], h2, l->per)) {
            return 1;
        }
    }
    return 0;
}

/* Appends `other` to slot `owner`'s list: counted always, stored while it fits. */
static void append(sim_cpu_nlist *l, uint32_t owner, uint32_t other) {
    const uint32_t k = l->count[owner]++;
    if (k < l->cap) {
        l->nbr[(size_t)k * l->stride + owner] = other;
    }
}

void sim_cpu_nlist_build(sim_cpu_nlist *l, const sim_tile2 *pairs, size_t pair_count, uint32_t tile,
                         const sim_vec4d *pos, double skin) {
    const uint32_t n = l->n;
    memset(l->count, 0, (size_t)n * sizeof *l->count);
    memcpy(l->ref, pos, (size_t)n * sizeof *l->ref);
    for (size_t k = 0; k < pair_count; ++k) {
        const sim_tile2 t = pairs[k];
        const uint32_t i0 = t.i * tile, i1 = i0 + tile < n ? i0 + tile : n;
        const uint32_t j0 = t.j * tile, j1 = j0 + tile < n ? j0 + tile : n;
        for (uint32_t i = i0; i < i1; ++i) {
            const uint32_t j_end = t.i == t.j ? i : j1; /* j < i: each pair once */
            for (uint32_t j = j0; j < j_end; ++j) {
                if (sim_nlist_near_pd(pos[i], pos[j], skin, l->per)) {
                    append(l, i, j);
                    if (!l->half) {
                        append(l, j, i);
                    }
                }
            }
        }
    }
    l->overflow = 0;
    l->most = 0;
    l->entries = 0;
    for (uint32_t s = 0; s < n; ++s) {
        const uint32_t c = l->count[s];
        l->overflow |= c > l->cap;
        l->most = c > l->most ? c : l->most;
        l->entries += c < l->cap ? c : l->cap;
    }
    l->skin = skin;
    l->built = 1;
}

/* The kernels' contact test in double: |x_i - x_j| < r_i + r_j (NaN: no), minimum image under
 * per (NULL: none). */
static int touching(sim_vec4d a, sim_vec4d b, const sim_period_d *per) {
    double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    const double reach = a.w + b.w;
    if (per != NULL) {
        sim_min_image_in_d(&dx, &dy, &dz, per);
    }
    return dx * dx + dy * dy + dz * dz < reach * reach;
}

double sim_cpu_nlist_sweep(const sim_cpu_nlist *l, uint32_t begin, uint32_t end,
                           const sim_vec4d *pos, const sim_vec4d *vel, const sim_physics *ph,
                           sim_vec3d *f, sim_cpu_nlist_tally *tally) {
    double energy = 0.0;
    for (uint32_t i = begin; i < end; ++i) {
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        tally->tests += c;
        for (uint32_t k = 0; k < c; ++k) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            if (!touching(pos[i], pos[j], l->per)) {
                continue;
            }
            double e = 0.0;
            const sim_vec3d fij = sim_contact_force_d(pos[i], vel[i], pos[j], vel[j], ph, &e);
            f[i].x += fij.x;
            f[i].y += fij.y;
            f[i].z += fij.z;
            if (l->half) {
                f[j].x -= fij.x;
                f[j].y -= fij.y;
                f[j].z -= fij.z;
                energy += e;
                tally->contacts++;
            } else { /* the pair is swept from both ends: half of it here */
                energy += 0.5 * e;
                tally->contacts += i > j;
            }
        }
    }
    return energy;
}

void sim_cpu_nlist_contacts(const sim_cpu_nlist *l, const sim_vec4d *pos,
                            void (*emit)(void *ctx, uint32_t i, uint32_t j), void *ctx) {
    for (uint32_t i = 0; i < l->n; ++i) {
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        for (uint32_t k = 0; k < c; ++k) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            if ((l->half || i > j) && touching(pos[i], pos[j], l->per)) {
                emit(ctx, i > j ? i : j, i > j ? j : i);
            }
        }
    }
}
