/* SPDX-License-Identifier: MIT
 * nbsim — helpers for the GPU tests (see test_gpu_util.h). */
#include "test_gpu_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s) { /* [-1, 1) */
    return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static double to_float(double x) {
    return (double)(float)x;
}

sim_status gpu_scene_make(const gpu_scene *def, sim_state *s, double *box_half, sim_error *err) {
    const uint32_t n = def->n;
    sim_status st = sim_state_alloc(s, n, err);
    if (st != SIM_OK) {
        return st;
    }
    uint32_t side = 1;
    while ((uint64_t)side * side * side < n) {
        ++side;
    }
    const double pitch = def->spacing * 2.0 * def->r0;
    const double half = 0.5 * side * pitch;
    uint64_t rng = def->seed;
    uint32_t *order = malloc((size_t)n * sizeof *order);
    if (order == NULL) {
        sim_state_free(s);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate a scene of %u bodies", n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        order[i] = i;
    }
    for (uint32_t i = n; i > 1; --i) { /* Fisher-Yates */
        const uint32_t j = (uint32_t)(rng_next(&rng) % i);
        const uint32_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (uint32_t c = 0; c < n; ++c) {
        const uint32_t ix = c % side, iy = (c / side) % side, iz = c / (side * side);
        const double r = def->r0 * (1.0 + 0.1 * rng_uniform(&rng));
        const double jit = 0.05 * def->r0;
        sim_vec4d p = {-half + (ix + 0.5) * pitch + jit * rng_uniform(&rng),
                       -half + (iy + 0.5) * pitch + jit * rng_uniform(&rng),
                       -half + (iz + 0.5) * pitch + jit * rng_uniform(&rng), r};
        const double m = 1000.0 * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
        sim_vec4d v = {def->speed * rng_uniform(&rng), def->speed * rng_uniform(&rng),
                       def->speed * rng_uniform(&rng), m};
        p = (sim_vec4d){to_float(p.x), to_float(p.y), to_float(p.z), to_float(p.w)};
        v = (sim_vec4d){to_float(v.x), to_float(v.y), to_float(v.z), to_float(v.w)};
        s->pos[order[c]] = p;
        s->vel[order[c]] = v;
    }
    free(order);
    *box_half = to_float(half);
    return SIM_OK;
}

gpu_err gpu_compare3(const sim_vec3d *a, const sim_vec3d *ref, uint32_t n, double floor_frac) {
    gpu_err e = {0.0, 0.0, 0.0, 0.0, 0};
    double num = 0.0, den = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double dx = a[i].x - ref[i].x, dy = a[i].y - ref[i].y, dz = a[i].z - ref[i].z;
        num += dx * dx + dy * dy + dz * dz;
        den += ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z;
    }
    e.rel_l2 = den > 0.0 ? sqrt(num / den) : sqrt(num);
    e.rms = n > 0 ? sqrt(den / n) : 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const double dx = a[i].x - ref[i].x, dy = a[i].y - ref[i].y, dz = a[i].z - ref[i].z;
        const double d = sqrt(dx * dx + dy * dy + dz * dz);
        const double r = sqrt(ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z);
        const double q = d / (r + floor_frac * e.rms + 1e-300);
        if (!(d <= e.max_abs)) {
            e.max_abs = d;
        }
        if (!(q <= e.worst)) { /* NaN counts as worst */
            e.worst = q;
            e.worst_body = i;
        }
    }
    return e;
}

static gpu_err compare4(const sim_vec4d *a, const sim_vec4d *ref, uint32_t n, double floor_frac) {
    sim_vec3d *a3 = malloc((size_t)n * sizeof *a3), *r3 = malloc((size_t)n * sizeof *r3);
    gpu_err e = {INFINITY, 0.0, INFINITY, INFINITY, 0};
    if (a3 != NULL && r3 != NULL) {
        for (uint32_t i = 0; i < n; ++i) {
            a3[i] = (sim_vec3d){a[i].x, a[i].y, a[i].z};
            r3[i] = (sim_vec3d){ref[i].x, ref[i].y, ref[i].z};
        }
        e = gpu_compare3(a3, r3, n, floor_frac);
    }
    free(a3);
    free(r3);
    return e;
}

gpu_err gpu_compare_pos(const sim_state *a, const sim_state *ref, double floor_frac) {
    return compare4(a->pos, ref->pos, ref->n, floor_frac);
}

gpu_err gpu_compare_vel(const sim_state *a, const sim_state *ref, double floor_frac) {
    return compare4(a->vel, ref->vel, ref->n, floor_frac);
}

sim_status gpu_snapshot_take(sim_backend *b, uint32_t n, gpu_snapshot *snap, sim_error *err) {
    snap->force = NULL;
    sim_status st = sim_state_alloc(&snap->state, n, err);
    if (st != SIM_OK) {
        return st;
    }
    snap->force = malloc((size_t)n * sizeof *snap->force);
    if (snap->force == NULL) {
        gpu_snapshot_free(snap);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate forces for %u bodies", n);
    }
    st = sim_backend_read_state(b, &snap->state, snap->force, err);
    if (st != SIM_OK) {
        gpu_snapshot_free(snap);
    }
    return st;
}

void gpu_snapshot_free(gpu_snapshot *snap) {
    sim_state_free(&snap->state);
    free(snap->force);
    snap->force = NULL;
}

int gpu_require_device(void) {
    if (sim_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 0;
    }
    return 1;
}
