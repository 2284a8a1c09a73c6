/* SPDX-License-Identifier: MIT
 * nbsim — per-body kernels: the two halves of velocity Verlet, body forces, the instability
 * flag, body energies and the viewer export. All are memory-bound streams over the body arrays.
 *
 * Launch contract (every kernel here): 1-D grid of ceil(N / 256) blocks of 256 threads; thread
 * owns body i = blockIdx.x * 256 + threadIdx.x; guard i < n. */
#include "cuda/integrate.h"

#include "gpu/device_util.cuh"
#include "gpu/second_half.cuh"

namespace {

constexpr int kThreads = 256;

static unsigned blocks_for(uint32_t n) {
    return (n + kThreads - 1) / kThreads;
}

static __device__ __forceinline__ sim_vec3f xyz(const sim_vec4f &v) {
    sim_vec3f r;
    r.x = v.x;
    r.y = v.y;
    r.z = v.z;
    return r;
}

/* 48 B read, 32 B written per body; ~15 flops. WRAP (periodic axes; its own instantiation, so
 * the walls' kernel is the code it was): the centre then goes back into the box on the periodic
 * axes of per (sim_wrap_coord_f, ~4 flops per axis), the stepper's WRAP phase in the same pass
 * (the same bits as a separate pass: the drifted centre is rounded to float either way). */
template <bool WRAP>
__global__ void __launch_bounds__(kThreads)
    verlet_first_kernel(sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ vel,
                        const sim_vec4f *__restrict__ force, uint32_t n, float dt,
                        sim_period_f per) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    sim_vec4f p = pos[i], v = vel[i];
    sim_verlet_first_f(&p, &v, xyz(sim_ld4(force + i)), dt);
    if constexpr (WRAP) {
        sim_wrap_in_f(&p, &per);
    }
    pos[i] = p;
    vel[i] = v;
}

/* 48 B read, 32 B written per body; body force (walls: 6 plane tests) + kick ~40 flops. A bad
 * body is flagged by its user index (perm[i]; perm NULL: i): a later sort in the same frame
 * moves it to another slot. */
__global__ void __launch_bounds__(kThreads)
    verlet_second_kernel(const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ vel,
                         sim_vec4f *__restrict__ force, uint32_t n, float dt, sim_physics_f ph,
                         uint64_t *__restrict__ flag, uint32_t step,
                         const uint32_t *__restrict__ perm) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    const sim_vec4f p = sim_ld4(pos + i);
    sim_vec4f v = vel[i];
    sim_vec4f f = force[i];
    sim_second_half_f(p, &v, &f, dt, ph, flag, step, perm != nullptr ? perm[i] : i);
    force[i] = f;
    vel[i] = v;
}

__global__ void __launch_bounds__(kThreads)
    body_force_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                      sim_vec4f *__restrict__ force, uint32_t n, sim_physics_f ph) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    const sim_vec3f fb = sim_body_force_f(sim_ld4(pos + i), sim_ld4(vel + i), &ph, nullptr);
    sim_vec4f f = force[i];
    f.x += fb.x;
    f.y += fb.y;
    f.z += fb.z;
    force[i] = f;
}

/* Not timed: per-thread energies summed in double, one atomic per block and quantity. */
__global__ void __launch_bounds__(kThreads)
    body_energy_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                       uint32_t n, sim_physics_f ph, double *__restrict__ energy) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    double kin = 0.0;
    float pot = 0.0f;
    if (i < n) {
        const sim_vec4f p = sim_ld4(pos + i), v = sim_ld4(vel + i);
        kin = 0.5 * (double)v.w * ((double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z);
        (void)sim_body_force_f(p, v, &ph, &pot);
    }
    sim_block_sum_add<kThreads>(kin, energy + 0);
    __syncthreads(); /* sim_block_sum_add's shared scratch is reused */
    sim_block_sum_add<kThreads>((double)pot, energy + 1);
}

/* Slot i goes to user index perm[i] (perm NULL: i), so the viewer colours by the user's index
 * whatever order the bodies are kept in: reads coalesced, writes scattered (16 + 4 B per body). */
__global__ void __launch_bounds__(kThreads)
    export_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                  const uint32_t *__restrict__ perm, uint32_t n, sim_vec4f *__restrict__ dst_pos,
                  float *__restrict__ dst_speed) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    const uint32_t u = perm != nullptr ? perm[i] : i;
    if (dst_pos != nullptr) {
        dst_pos[u] = sim_ld4(pos + i);
    }
    if (dst_speed != nullptr) {
        const sim_vec4f v = sim_ld4(vel + i);
        dst_speed[u] = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
    }
}

} // namespace

sim_status sim_cuda_verlet_first(const sim_gpu_bodies *b, float dt, const sim_period_f *per,
                                 cudaStream_t s, sim_error *err) {
    if (per != nullptr) {
        verlet_first_kernel<true>
            <<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->force, b->n, dt, *per);
    } else {
        verlet_first_kernel<false><<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->force,
                                                                         b->n, dt, sim_period_f());
    }
    SIM_CUDA_CHECK_LAUNCH("verlet_first_kernel");
    return SIM_OK;
}

sim_status sim_cuda_verlet_second(const sim_gpu_bodies *b, const uint32_t *perm,
                                  const sim_physics_f *ph, float dt, uint64_t *d_flag,
                                  uint32_t step, cudaStream_t s, sim_error *err) {
    verlet_second_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->force, b->n, dt,
                                                               *ph, d_flag, step, perm);
    SIM_CUDA_CHECK_LAUNCH("verlet_second_kernel");
    return SIM_OK;
}

sim_status sim_cuda_body_forces(const sim_gpu_bodies *b, const sim_physics_f *ph, cudaStream_t s,
                                sim_error *err) {
    body_force_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->force, b->n, *ph);
    SIM_CUDA_CHECK_LAUNCH("body_force_kernel");
    return SIM_OK;
}

sim_status sim_cuda_body_energy(const sim_gpu_bodies *b, const sim_physics_f *ph, double *d_energy,
                                cudaStream_t s, sim_error *err) {
    body_energy_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->n, *ph, d_energy);
    SIM_CUDA_CHECK_LAUNCH("body_energy_kernel");
    return SIM_OK;
}

sim_status sim_cuda_export(const sim_gpu_bodies *b, const uint32_t *perm, sim_vec4f *dst_pos,
                           float *dst_speed, cudaStream_t s, sim_error *err) {
    export_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, perm, b->n, dst_pos,
                                                        dst_speed);
    SIM_CUDA_CHECK_LAUNCH("export_kernel");
    return SIM_OK;
}
