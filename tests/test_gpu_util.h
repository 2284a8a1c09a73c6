/* SPDX-License-Identifier: MIT
 * nbsim — helpers for the GPU tests: dense test scenes, GPU/CPU backends side by side, and the
 * error measures the tolerances are stated in. */
#ifndef TEST_GPU_UTIL_H
#define TEST_GPU_UTIL_H

#include "nbsim/internal/backend.h"

/* A jittered cubic lattice of n bodies, radii r0 (1 +- 10 %), density 1000 kg/m^3, spacing
 * `spacing` * 2 r0 (below 1: neighbours overlap, a dense pile), random velocities of about
 * `speed`, body order shuffled so contacts fall in every kind of tile pair (diagonal, near, far).
 * Every value is rounded to float, so the GPU (float) and the CPU reference (double) start from
 * the same numbers and their difference is arithmetic alone. box_half is set so the outer
 * layer touches the walls. */
typedef struct {
    uint32_t n;
    double r0;      /* mean radius [m] */
    double spacing; /* lattice pitch / (2 r0) */
    double speed;   /* [m/s] */
    uint64_t seed;
} gpu_scene;

sim_status gpu_scene_make(const gpu_scene *def, sim_state *s, double *box_half, sim_error *err);

/* Relative error of a set of 3-vectors against a reference:
 *   rel_l2   = ||a - ref||_2 / ||ref||_2 over all bodies,
 *   rms      = ||ref||_2 / sqrt(n),
 *   worst    = max_i |a_i - ref_i| / (|ref_i| + floor_frac * rms): the per-body relative error,
 *              with bodies whose reference is tiny measured against a floor of the rms. */
typedef struct {
    double rel_l2, rms, worst;
    double max_abs; /* max_i |a_i - ref_i| */
    uint32_t worst_body;
} gpu_err;

gpu_err gpu_compare3(const sim_vec3d *a, const sim_vec3d *ref, uint32_t n, double floor_frac);
/* The same for positions (xyz of pos) and velocities (xyz of vel) of two states. */
gpu_err gpu_compare_pos(const sim_state *a, const sim_state *ref, double floor_frac);
gpu_err gpu_compare_vel(const sim_state *a, const sim_state *ref, double floor_frac);

/* A backend's state and last total force read back (caller frees with gpu_snapshot_free). */
typedef struct {
    sim_state state;
    sim_vec3d *force;
} gpu_snapshot;

sim_status gpu_snapshot_take(sim_backend *b, uint32_t n, gpu_snapshot *snap, sim_error *err);
void gpu_snapshot_free(gpu_snapshot *snap);

/* Skip the whole executable (exit status 77) when there is no CUDA device. */
int gpu_require_device(void);

#endif /* TEST_GPU_UTIL_H */
