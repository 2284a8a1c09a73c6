/* SPDX-License-Identifier: MIT
 * nbsim — a body's second half of velocity Verlet on the device, written once for the kernels
 * that finish a step: integrate.cu's verlet_second_kernel, and the cells' sweep where the contact
 * forces are the whole of F (sim/nlist/grid_build.cuh). Body force (walls, gravity) added to the
 * force, the second half kick, the instability flag (device_state.h: the step and the body's
 * user index, the smallest key wins). */
#ifndef SIM_SECOND_HALF_CUH
#define SIM_SECOND_HALF_CUH

#include "gpu/device_state.h"
#include "physics/physics.h"

/* Raises the instability flag for body `body` (its user index) after step `step`. */
static __device__ __forceinline__ void sim_flag_body(uint64_t *flag, uint32_t step, uint32_t body,
                                                     int cause) {
    const unsigned long long key =
        ((unsigned long long)step << 36) | ((unsigned long long)body << 4) | (unsigned long long)cause;
    atomicMin(reinterpret_cast<unsigned long long *>(flag), key);
}

/* f += the body force at (p, *v); *v kicked by f for half of dt; a NaN or infinite position or
 * velocity, or a centre beyond SIM_ESCAPE_FACTOR box_half, flagged for user index `body`. */
static __device__ __forceinline__ void sim_second_half_f(const sim_vec4f &p, sim_vec4f *v,
                                                         sim_vec4f *f, float dt,
                                                         const sim_physics_f &ph, uint64_t *flag,
                                                         uint32_t step, uint32_t body) {
    const sim_vec3f fb = sim_body_force_f(p, *v, &ph, nullptr);
    f->x += fb.x;
    f->y += fb.y;
    f->z += fb.z;
    sim_vec3f f3;
    f3.x = f->x;
    f3.y = f->y;
    f3.z = f->z;
    sim_verlet_second_f(v, f3, dt);
    /* `!(a <= b)` is also true for NaN. */
    const float lim = (float)SIM_ESCAPE_FACTOR * ph.box.box_half;
    if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z))) {
        sim_flag_body(flag, step, body, SIM_GPU_BAD_POSITION);
    } else if (!(isfinite(v->x) && isfinite(v->y) && isfinite(v->z))) {
        sim_flag_body(flag, step, body, SIM_GPU_BAD_VELOCITY);
    } else if (!(fabsf(p.x) <= lim && fabsf(p.y) <= lim && fabsf(p.z) <= lim)) {
        sim_flag_body(flag, step, body, SIM_GPU_ESCAPED);
    }
}

#endif /* SIM_SECOND_HALF_CUH */
