/* SPDX-License-Identifier: MIT
 * nbsim — friction's per-body kernels and their drivers (friction_kernels.h; the layout:
 * gpu/friction.h): the walls with friction and the spin's half kicks (integrate.cu's per-body
 * kernels with torques), the spin's moves at a re-sort, the springs' and the rotational energy,
 * and the tables' scatter and gather that friction_state.cu's upload and read-back launch. The
 * pair visit is gpu/friction.cuh's; the state and its host side are friction_state.cu's.
 *
 * Launch contract of the per-body kernels: ceil(N / 256) blocks of 256 threads, thread i slot i
 * (or owner u for the table kernels), guard i < n. */
#include "nbsim/cuda_check.h"
#include "gpu/friction.cuh"
#include "cuda/friction_kernels.h"

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(uint64_t n) {
    return (unsigned)((n + kThreads - 1) / kThreads);
}

/* Body u's six walls with friction, as sim_cpu_friction_body: a history looked up only for a
 * wall the body overlaps, stored when it touches; adds the walls' forces to *f and torques to
 * *t, and gravity's m g to *f. owned: the pairs u owns that the list sweep kept beside its
 * entries (sim_gpu_fric_list.owned): with its walls past the row's capacity (read only past
 * min_cap, the smallest row), u is flagged as a claim past the row would flag it. */
__device__ void walls_and_gravity(const sim_gpu_fric &fr, const sim_physics_f &ph, uint32_t u,
                                  uint32_t owned, uint32_t min_cap, const sim_vec4f &p,
                                  const sim_vec4f &v, const sim_vec3f &w, sim_vec3f *f,
                                  sim_vec3f *t) {
    uint32_t walls = 0;
    sim_vec3f total;
    total.x = total.y = total.z = 0.0f;
    const float x[3] = {p.x, p.y, p.z};
    for (int k = 0; k < 6; ++k) {
        if ((ph.box.periodic >> (k >> 1)) & 1) { /* a periodic axis has no walls: no lookup either */
            continue;
        }
        const float overlap = (k & 1) ? x[k >> 1] + p.w - ph.box.box_half : p.w - ph.box.box_half - x[k >> 1];
        if (!(overlap > 0.0f)) {
            continue;
        }
        const uint32_t code = SIM_CONTACT_WALL(k);
        sim_contact_history_f h = sim_fric_find(fr, u, code);
        if (sim_friction_wall_f(p, v, w, k, &h, &ph, fr.dt, &total, t, nullptr)) {
            sim_fric_store(fr, u, code, h);
            ++walls;
        }
    }
    /* The pairs the list sweep kept beside its entries claimed no slot: the row's check here
     * (the same count a claim of each would reach; only past the smallest row is it read). */
    if (owned + walls > min_cap) {
        if (owned + walls > (uint32_t)(fr.row[u + 1] - fr.row[u])) {
            atomicMin(fr.overflow, u);
        }
    }
    const float m = v.w;
    total.x += m * ph.box.gx;
    total.y += m * ph.box.gy;
    total.z += m * ph.box.gz;
    f->x += total.x;
    f->y += total.y;
    f->z += total.z;
}

__device__ __forceinline__ void flag_body(uint64_t *flag, uint32_t step, uint32_t i, int cause) {
    const unsigned long long key =
        ((unsigned long long)step << 36) | ((unsigned long long)i << 4) | (unsigned long long)cause;
    atomicMin(reinterpret_cast<unsigned long long *>(flag), key);
}

/* Walls with friction + gravity added to the contact force, the total stored (F_{n+1}) and the
 * torque likewise; KICK: the velocity's and the spin's second half kicks and the instability
 * flag (integrate.cu's verlet_second_kernel). 64 B read, 48 B written per body beyond the
 * frictionless kernel's, plus a wall's history where it touches one. */
template <bool KICK>
__global__ void __launch_bounds__(kThreads)
    body_kernel(const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ vel,
                sim_vec4f *__restrict__ force, uint32_t n, float dt, sim_physics_f ph,
                sim_gpu_fric fr, const uint32_t *__restrict__ owned, uint32_t min_cap,
                uint64_t *__restrict__ flag, uint32_t step) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    const uint32_t u = fr.perm != nullptr ? fr.perm[i] : i;
    const sim_vec4f p = sim_ld4(pos + i);
    sim_vec4f v = vel[i];
    sim_vec4f f4 = force[i];
    sim_vec4f t4 = fr.torque[i]; /* spin and torque: slot order (friction.h) */
    sim_vec3f f = sim_fric_xyz(f4), t = sim_fric_xyz(t4);
    sim_vec3f w = sim_fric_xyz(fr.spin[i]);
    /* owned NULL: the sweep's pairs claimed their slots (no check here: min_cap is the most) */
    walls_and_gravity(fr, ph, u, owned != nullptr ? owned[i] : 0u,
                      owned != nullptr ? min_cap : UINT32_MAX, p, v, w, &f, &t);
    f4.x = f.x;
    f4.y = f.y;
    f4.z = f.z;
    force[i] = f4;
    t4.x = t.x;
    t4.y = t.y;
    t4.z = t.z;
    fr.torque[i] = t4;
    if constexpr (KICK) {
        sim_verlet_second_f(&v, f, dt);
        vel[i] = v;
        sim_verlet_spin_f(&w, t, p, v.w, dt);
        sim_vec4f w4;
        w4.x = w.x;
        w4.y = w.y;
        w4.z = w.z;
        w4.w = 0.0f;
        const_cast<sim_vec4f *>(fr.spin)[i] = w4;
        const float lim = (float)SIM_ESCAPE_FACTOR * ph.box.box_half;
        if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z))) {
            flag_body(flag, step, u, SIM_GPU_BAD_POSITION);
        } else if (!(isfinite(v.x) && isfinite(v.y) && isfinite(v.z))) {
            flag_body(flag, step, u, SIM_GPU_BAD_VELOCITY);
        } else if (!(fabsf(p.x) <= lim && fabsf(p.y) <= lim && fabsf(p.z) <= lim)) {
            flag_body(flag, step, u, SIM_GPU_ESCAPED);
        }
    }
}

/* The spin's first half kick with the last step's torque (sim_verlet_spin: the radius and mass
 * alone, so before or after the drift alike). */
__global__ void __launch_bounds__(kThreads)
    kick_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel, uint32_t n,
                float dt, sim_vec4f *__restrict__ spin, const sim_vec4f *__restrict__ torque) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i >= n) {
        return;
    }
    sim_vec4f w4 = spin[i]; /* slot order, as the positions */
    sim_vec3f w = sim_fric_xyz(w4);
    sim_verlet_spin_f(&w, sim_fric_xyz(torque[i]), sim_ld4(pos + i), sim_ld4(vel + i).w, dt);
    w4.x = w.x;
    w4.y = w.y;
    w4.z = w.z;
    spin[i] = w4;
}

/* The spin by user index (out[order[i]] = spin[i]; order NULL: identity), and back into slots
 * by another order (spin[i] = in[order[i]]): a re-sort's permutation of the spin. 36 B per body
 * each. */
__global__ void __launch_bounds__(kThreads)
    spin_to_users_kernel(uint32_t n, const uint32_t *__restrict__ order,
                         const sim_vec4f *__restrict__ spin, sim_vec4f *__restrict__ out) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i < n) {
        out[order != nullptr ? order[i] : i] = spin[i];
    }
}

__global__ void __launch_bounds__(kThreads)
    spin_to_slots_kernel(uint32_t n, const uint32_t *__restrict__ order,
                         const sim_vec4f *__restrict__ in, sim_vec4f *__restrict__ spin) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i < n) {
        spin[i] = in[order != nullptr ? order[i] : i];
    }
}

/* The state's contacts into the last step's table: contact k at slot at[k]. */
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(uint64_t count, const unsigned long long *__restrict__ at,
                   const uint32_t *__restrict__ partner, const sim_contact_history_f *__restrict__ h,
                   uint32_t *__restrict__ to_partner, sim_contact_history_f *__restrict__ to_h) {
    const uint64_t k = (uint64_t)blockIdx.x * kThreads + threadIdx.x;
    if (k < count) {
        to_partner[at[k]] = partner[k];
        to_h[at[k]] = h[k];
    }
}

/* Owner u's used slots (at most the row's capacity) copied to [off[u], ...) of the outputs. */
__global__ void __launch_bounds__(kThreads)
    gather_kernel(uint32_t n, const unsigned long long *__restrict__ row,
                  const uint32_t *__restrict__ count, const uint32_t *__restrict__ partner,
                  const sim_contact_history_f *__restrict__ h,
                  const unsigned long long *__restrict__ off, uint32_t *__restrict__ out_partner,
                  sim_contact_history_f *__restrict__ out_h) {
    const uint32_t u = blockIdx.x * kThreads + threadIdx.x;
    if (u >= n) {
        return;
    }
    const uint64_t cap = row[u + 1] - row[u];
    const uint64_t c = count[u] < cap ? count[u] : cap;
    for (uint64_t k = 0; k < c; ++k) {
        out_partner[off[u] + k] = partner[row[u] + k];
        out_h[off[u] + k] = h[row[u] + k];
    }
}

/* Rotational energy (slot i, user u) into energy[0]; the springs of owner u's last histories
 * (0.5 k_t (|xi|^2 + |roll|^2) at the current overlap, as sim_friction_apply counts them) into
 * energy[1]. pos_user: positions by user index. Not timed. */
__global__ void __launch_bounds__(kThreads)
    energy_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                  const sim_vec4f *__restrict__ pos_user, uint32_t n, sim_physics_f ph,
                  sim_gpu_fric fr, int tables, double *__restrict__ energy) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    double rot = 0.0, springs = 0.0;
    if (i < n) {
        const sim_vec4f p = pos[i], v = vel[i], w = fr.spin[i];
        rot = 0.5 * SIM_INERTIA_FACTOR * (double)v.w * (double)p.w * (double)p.w *
              ((double)w.x * w.x + (double)w.y * w.y + (double)w.z * w.z);
    }
    if (i < n && tables) { /* here i is the owner's user index */
        const sim_vec4f p = pos_user[i];
        const unsigned long long first = fr.row[i];
        const uint32_t cap = (uint32_t)(fr.row[i + 1] - first);
        const uint32_t used = fr.last_count[i] < cap ? fr.last_count[i] : cap;
        for (uint32_t k = 0; k < used; ++k) {
            const uint32_t j = fr.last_partner[first + k];
            float d;
            if (SIM_CONTACT_IS_WALL(j)) {
                const int wall = SIM_CONTACT_WALL_INDEX(j);
                const float x = (wall >> 1) == 0 ? p.x : (wall >> 1) == 1 ? p.y : p.z;
                d = (wall & 1) ? x + p.w - ph.box.box_half : p.w - ph.box.box_half - x;
            } else {
                const sim_vec4f q = pos_user[j];
                float dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;
                sim_min_image_f(&dx, &dy, &dz, &ph); /* a contact across a face */
                d = p.w + q.w - sqrtf(dx * dx + dy * dy + dz * dz);
            }
            if (!(d > 0.0f)) {
                continue;
            }
            const float kt = ph.normal.hertz ? ph.tangential.tangential_stiffness * sqrtf(d) : ph.tangential.tangential_stiffness;
            const sim_contact_history_f h = fr.last_hist[first + k];
            float s2 = h.xi.x * h.xi.x + h.xi.y * h.xi.y + h.xi.z * h.xi.z;
            if (ph.rolling.rolling_friction > 0.0f) {
                s2 += h.roll.x * h.roll.x + h.roll.y * h.roll.y + h.roll.z * h.roll.z;
            }
            springs += 0.5 * (double)kt * (double)s2;
        }
    }
    sim_block_sum_add<kThreads>(rot, energy + 0);
    __syncthreads(); /* sim_block_sum_add's shared scratch is reused */
    sim_block_sum_add<kThreads>(springs, energy + 1);
}

} // namespace

sim_status sim_cuda_friction_body_forces(const sim_gpu_bodies *b, const sim_cuda_friction *fr,
                                         const uint32_t *perm, const sim_physics_f *ph, float dt,
                                         cudaStream_t s, sim_error *err) {
    body_kernel<false><<<blocks_for(b->n), kThreads, 0, s>>>(
        b->pos, b->vel, b->force, b->n, 0.0f, *ph, sim_cuda_friction_view(fr, perm, dt),
        fr->owned_step ? fr->ls_owned : nullptr, fr->min_cap, nullptr, 0u);
    SIM_CUDA_CHECK_LAUNCH("friction body_kernel");
    return SIM_OK;
}

sim_status sim_cuda_friction_verlet_second(const sim_gpu_bodies *b, const sim_cuda_friction *fr,
                                           const uint32_t *perm, const sim_physics_f *ph, float dt,
                                           uint64_t *d_flag, uint32_t step, cudaStream_t s,
                                           sim_error *err) {
    body_kernel<true><<<blocks_for(b->n), kThreads, 0, s>>>(
        b->pos, b->vel, b->force, b->n, dt, *ph, sim_cuda_friction_view(fr, perm, dt),
        fr->owned_step ? fr->ls_owned : nullptr, fr->min_cap, d_flag, step);
    SIM_CUDA_CHECK_LAUNCH("friction body_kernel<kick>");
    return SIM_OK;
}

sim_status sim_cuda_friction_kick(const sim_gpu_bodies *b, const sim_cuda_friction *fr, float dt,
                                  cudaStream_t s, sim_error *err) {
    kick_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->n, dt, fr->spin,
                                                      fr->torque);
    SIM_CUDA_CHECK_LAUNCH("friction kick_kernel");
    return SIM_OK;
}

sim_status sim_cuda_friction_permute(sim_cuda_friction *fr, const uint32_t *old_order,
                                     const uint32_t *new_order, cudaStream_t s, sim_error *err) {
    if (!fr->on && !fr->spin_live) { /* all zero: nothing moves (the frictionless sort) */
        return SIM_OK;
    }
    spin_to_users_kernel<<<blocks_for(fr->n), kThreads, 0, s>>>(fr->n, old_order, fr->spin,
                                                                fr->spin_alt);
    SIM_CUDA_CHECK_LAUNCH("friction spin_to_users_kernel");
    spin_to_slots_kernel<<<blocks_for(fr->n), kThreads, 0, s>>>(fr->n, new_order, fr->spin_alt,
                                                                fr->spin);
    SIM_CUDA_CHECK_LAUNCH("friction spin_to_slots_kernel");
    return SIM_OK;
}

sim_status sim_cuda_friction_energy(const sim_cuda_friction *fr, const sim_gpu_bodies *b,
                                    const uint32_t *perm, const sim_vec4f *pos_user,
                                    const sim_physics_f *ph, double *d_energy, cudaStream_t s,
                                    sim_error *err) {
    energy_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, pos_user, b->n, *ph,
                                                        sim_cuda_friction_view(fr, perm, 0.0f),
                                                        fr->on, d_energy);
    SIM_CUDA_CHECK_LAUNCH("friction energy_kernel");
    return SIM_OK;
}

cudaError_t sim_cuda_friction_scatter(uint64_t m, const unsigned long long *at,
                                      const uint32_t *partner, const sim_contact_history_f *h,
                                      uint32_t *table_partner, sim_contact_history_f *table_hist,
                                      cudaStream_t s) {
    scatter_kernel<<<blocks_for(m), kThreads, 0, s>>>(m, at, partner, h, table_partner,
                                                      table_hist);
    return cudaGetLastError();
}

cudaError_t sim_cuda_friction_gather(uint32_t n, const unsigned long long *row,
                                     const uint32_t *count, const uint32_t *table_partner,
                                     const sim_contact_history_f *table_hist,
                                     const unsigned long long *off, uint32_t *partner,
                                     sim_contact_history_f *h, cudaStream_t s) {
    gather_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, row, count, table_partner, table_hist,
                                                     off, partner, h);
    return cudaGetLastError();
}
