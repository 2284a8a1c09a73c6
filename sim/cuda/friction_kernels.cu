/* SPDX-License-Identifier: MIT
 * nbsim — friction on the device (gpu/friction.h; drivers: friction_kernels.h): the walls with
 * friction and the spin's half kicks (integrate.cu's per-body kernels with torques), the springs'
 * and the rotational energy, and the host side of the history tables (allocation, upload of a
 * state's contacts, read-back, commit, save, restore). The pair visit is gpu/friction.cuh's.
 *
 * Launch contract of the per-body kernels: ceil(N / 256) blocks of 256 threads, thread i slot i
 * (or owner u for the table kernels), guard i < n. */
#include <stdlib.h>
#include <string.h>

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
        if ((ph.periodic >> (k >> 1)) & 1) { /* a periodic axis has no walls: no lookup either */
            continue;
        }
        const float overlap = (k & 1) ? x[k >> 1] + p.w - ph.box_half : p.w - ph.box_half - x[k >> 1];
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
    total.x += m * ph.gx;
    total.y += m * ph.gy;
    total.z += m * ph.gz;
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
        const float lim = (float)SIM_ESCAPE_FACTOR * ph.box_half;
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
                d = (wall & 1) ? x + p.w - ph.box_half : p.w - ph.box_half - x;
            } else {
                const sim_vec4f q = pos_user[j];
                float dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;
                sim_min_image_f(&dx, &dy, &dz, &ph); /* a contact across a face */
                d = p.w + q.w - sqrtf(dx * dx + dy * dy + dz * dz);
            }
            if (!(d > 0.0f)) {
                continue;
            }
            const float kt = ph.hertz ? ph.tangential_stiffness * sqrtf(d) : ph.tangential_stiffness;
            const sim_contact_history_f h = fr.last_hist[first + k];
            float s2 = h.xi.x * h.xi.x + h.xi.y * h.xi.y + h.xi.z * h.xi.z;
            if (ph.rolling_friction > 0.0f) {
                s2 += h.roll.x * h.roll.x + h.roll.y * h.roll.y + h.roll.z * h.roll.z;
            }
            springs += 0.5 * (double)kt * (double)s2;
        }
    }
    sim_block_sum_add<kThreads>(rot, energy + 0);
    __syncthreads(); /* sim_block_sum_add's shared scratch is reused */
    sim_block_sum_add<kThreads>(springs, energy + 1);
}

void free_list(sim_gpu_friction *fr) {
    for (int k = 0; k < 2; ++k) {
        (void)cudaFree(fr->ls_a[k]);
        (void)cudaFree(fr->ls_b[k]);
        fr->ls_a[k] = nullptr;
        fr->ls_b[k] = nullptr;
    }
    (void)cudaFree(fr->ls_stamp);
    (void)cudaFree(fr->ls_owned);
    (void)cudaFree(fr->carry_partner);
    (void)cudaFree(fr->carry_k);
    (void)cudaFree(fr->carry_n);
    (void)cudaFree(fr->carry_gen);
    fr->carry_partner = fr->carry_k = fr->carry_n = fr->carry_gen = nullptr;
    fr->ls_stamp = nullptr;
    fr->ls_owned = nullptr;
    fr->ls_entries = 0;
    fr->ls_dirty = 0;
    fr->owned_step = 0;
}

void free_tables(sim_gpu_friction *fr) {
    free_list(fr); /* its springs are the tables' pairs: they go with them */
    (void)cudaFree(fr->row);
    free(fr->h_row);
    fr->h_row = nullptr;
    for (int t = 0; t < 2; ++t) {
        (void)cudaFree(fr->partner[t]);
        (void)cudaFree(fr->count[t]);
        (void)cudaFree(fr->hist[t]);
        fr->partner[t] = nullptr;
        fr->count[t] = nullptr;
        fr->hist[t] = nullptr;
    }
    fr->row = nullptr;
    fr->slots = 0;
    fr->on = 0;
    fr->last = 0;
}

sim_status device_alloc(void **p, size_t bytes, const char *what, uint32_t n, sim_error *err) {
    const cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *p = nullptr;
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "friction: cannot allocate %llu bytes of GPU memory for %s of %u bodies",
                        (unsigned long long)bytes, what, n);
    }
    return SIM_OK;
}

const sim_state *g_sort_state; /* qsort's comparison has no context argument */

int by_pair(const void *a, const void *b) {
    const sim_state_contact *x = &g_sort_state->contacts[*(const uint64_t *)a];
    const sim_state_contact *y = &g_sort_state->contacts[*(const uint64_t *)b];
    if (x->i != y->i) {
        return x->i < y->i ? -1 : 1;
    }
    return x->j < y->j ? -1 : x->j > y->j ? 1 : 0;
}

/* Contact k of st goes to slot at[k] of its body's row (count: the rows' fill), refusing a
 * contact given twice (SIM_BAD_ARGUMENT) and a row past its capacity (SIM_UNSTABLE), as
 * sim_cpu_friction_init does. */
sim_status place_contacts(const sim_state *st, const uint64_t *row, uint32_t *count,
                          unsigned long long *at, sim_error *err) {
    const uint64_t m = st->contact_count;
    uint64_t *idx = (uint64_t *)malloc((size_t)(m ? m : 1) * sizeof *idx);
    if (idx == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "friction: cannot sort %llu contacts",
                        (unsigned long long)m);
    }
    for (uint64_t k = 0; k < m; ++k) {
        idx[k] = k;
    }
    g_sort_state = st;
    qsort(idx, (size_t)m, sizeof *idx, by_pair);
    sim_status status = SIM_OK;
    for (uint64_t q = 0; q < m && status == SIM_OK; ++q) {
        const sim_state_contact *c = &st->contacts[idx[q]];
        const uint64_t cap = row[c->i + 1] - row[c->i];
        if (q > 0 && st->contacts[idx[q - 1]].i == c->i && st->contacts[idx[q - 1]].j == c->j) {
            status = sim_fail(err, SIM_BAD_ARGUMENT, "contact of body %u with %s %u given twice",
                              c->i, SIM_CONTACT_IS_WALL(c->j) ? "wall" : "body",
                              SIM_CONTACT_IS_WALL(c->j) ? (uint32_t)SIM_CONTACT_WALL_INDEX(c->j)
                                                        : c->j);
        } else if (count[c->i] >= cap) {
            status = sim_fail(err, SIM_UNSTABLE,
                              "friction: body %u touches more than the %llu bodies and walls "
                              "whose histories it has room for (its neighbours overlap each "
                              "other by more than %.0f %% of the smallest radius)",
                              c->i, (unsigned long long)cap, 100.0 * SIM_FRICTION_OVERLAP);
        } else {
            at[idx[q]] = row[c->i] + count[c->i]++;
        }
    }
    free(idx);
    return status;
}

} // namespace

sim_status sim_gpu_friction_alloc(sim_gpu_friction *fr, uint32_t n, sim_error *err) {
    memset(fr, 0, sizeof *fr);
    fr->n = n;
    fr->gen = 1; /* stamp 0 is never current */
    const size_t v4 = (size_t)(n ? n : 1) * sizeof(sim_vec4f);
    SIM_TRY(device_alloc((void **)&fr->spin, v4, "the spin", n, err));
    SIM_TRY(device_alloc((void **)&fr->torque, v4, "the torques", n, err));
    SIM_TRY(device_alloc((void **)&fr->spin_alt, v4, "the spin", n, err));
    SIM_TRY(device_alloc((void **)&fr->overflow, sizeof *fr->overflow, "a flag", n, err));
    SIM_CUDA_TRY(cudaMallocHost((void **)&fr->h_overflow, sizeof *fr->h_overflow));
    *fr->h_overflow = UINT32_MAX;
    SIM_CUDA_TRY(cudaMemset(fr->spin, 0, v4));
    SIM_CUDA_TRY(cudaMemset(fr->torque, 0, v4));
    SIM_CUDA_TRY(cudaMemset(fr->overflow, 0xff, sizeof *fr->overflow));
    return SIM_OK;
}

void sim_gpu_friction_free(sim_gpu_friction *fr) {
    free_tables(fr);
    (void)cudaFree(fr->spin);
    (void)cudaFree(fr->torque);
    (void)cudaFree(fr->spin_alt);
    (void)cudaFree(fr->overflow);
    (void)cudaFree(fr->save_spin);
    (void)cudaFree(fr->save_torque);
    if (fr->h_overflow != nullptr) {
        (void)cudaFreeHost(fr->h_overflow);
    }
    memset(fr, 0, sizeof *fr);
}

sim_status sim_gpu_friction_ready(sim_gpu_friction *fr, int on, const sim_state *st, int keep,
                                  cudaStream_t s, sim_error *err) {
    if (!on) {
        free_tables(fr);
        return SIM_OK;
    }
    fr->spin_live = 1; /* friction turns the bodies: the spin moves with them at a re-sort */
    if (fr->on && keep) {
        return SIM_OK;
    }
    const uint32_t n = st->n;
    sim_gpu_friction nf;
    memset(&nf, 0, sizeof nf);
    double r_min = INFINITY;
    for (uint32_t i = 0; i < n; ++i) {
        r_min = st->pos[i].w < r_min ? st->pos[i].w : r_min;
    }
    nf.h_row = (uint64_t *)malloc(((size_t)n + 1) * sizeof *nf.h_row);
    uint32_t *count = (uint32_t *)calloc(n ? n : 1, sizeof *count);
    const uint64_t m = keep ? 0u : st->contact_count;
    unsigned long long *at =
        (unsigned long long *)malloc((size_t)(m ? m : 1) * sizeof(unsigned long long));
    uint32_t *partner = (uint32_t *)malloc((size_t)(m ? m : 1) * sizeof *partner);
    sim_contact_history_f *h = (sim_contact_history_f *)malloc((size_t)(m ? m : 1) * sizeof *h);
    sim_status status = SIM_OK;
    if (nf.h_row == nullptr || count == nullptr || at == nullptr || partner == nullptr ||
        h == nullptr) {
        status = sim_fail(err, SIM_OUT_OF_MEMORY, "friction: cannot stage the tables of %u bodies",
                          n);
    }
    if (status == SIM_OK) {
        nf.h_row[0] = 0;
        for (uint32_t i = 0; i < n; ++i) {
            nf.h_row[i + 1] = nf.h_row[i] + sim_friction_slots(st->pos[i].w, r_min, n);
        }
        nf.slots = nf.h_row[n];
        if (m > 0) {
            sim_state view = *st;
            view.contact_count = m;
            status = place_contacts(&view, nf.h_row, count, at, err);
        }
    }
    for (uint64_t k = 0; k < m && status == SIM_OK; ++k) {
        const sim_state_contact *c = &st->contacts[k];
        partner[k] = c->j;
        h[k].xi = sim_vec3f{(float)c->xi.x, (float)c->xi.y, (float)c->xi.z};
        h[k].roll = sim_vec3f{(float)c->roll.x, (float)c->roll.y, (float)c->roll.z};
    }
    const size_t slots = (size_t)(nf.slots ? nf.slots : 1);
    for (int t = 0; t < 2 && status == SIM_OK; ++t) {
        status = device_alloc((void **)&nf.partner[t], slots * sizeof(uint32_t),
                              "the contact histories", n, err);
        if (status == SIM_OK) {
            status = device_alloc((void **)&nf.hist[t], slots * sizeof(sim_contact_history_f),
                                  "the contact histories", n, err);
        }
        if (status == SIM_OK) {
            status = device_alloc((void **)&nf.count[t], (size_t)(n ? n : 1) * sizeof(uint32_t),
                                  "the contact counts", n, err);
        }
    }
    if (status == SIM_OK) {
        status = device_alloc((void **)&nf.row, ((size_t)n + 1) * sizeof(unsigned long long),
                              "the history rows", n, err);
    }
    unsigned long long *d_at = nullptr;
    uint32_t *d_partner = nullptr;
    sim_contact_history_f *d_h = nullptr;
    if (status == SIM_OK && m > 0) {
        status = device_alloc((void **)&d_at, (size_t)m * sizeof *d_at, "staging", n, err);
        if (status == SIM_OK) {
            status = device_alloc((void **)&d_partner, (size_t)m * sizeof *d_partner, "staging", n,
                                  err);
        }
        if (status == SIM_OK) {
            status = device_alloc((void **)&d_h, (size_t)m * sizeof *d_h, "staging", n, err);
        }
    }
    cudaError_t e = cudaSuccess;
    if (status == SIM_OK) {
        static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "rows are 64-bit");
        e = cudaMemcpyAsync(nf.row, nf.h_row, ((size_t)n + 1) * sizeof(uint64_t),
                            cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) {
            e = cudaMemcpyAsync(nf.count[0], count, (size_t)n * sizeof *count,
                                cudaMemcpyHostToDevice, s);
        }
        if (e == cudaSuccess) {
            e = cudaMemsetAsync(nf.count[1], 0, (size_t)n * sizeof *count, s);
        }
        if (e == cudaSuccess && m > 0) {
            e = cudaMemcpyAsync(d_at, at, (size_t)m * sizeof *at, cudaMemcpyHostToDevice, s);
            if (e == cudaSuccess) {
                e = cudaMemcpyAsync(d_partner, partner, (size_t)m * sizeof *partner,
                                    cudaMemcpyHostToDevice, s);
            }
            if (e == cudaSuccess) {
                e = cudaMemcpyAsync(d_h, h, (size_t)m * sizeof *h, cudaMemcpyHostToDevice, s);
            }
            if (e == cudaSuccess) {
                scatter_kernel<<<blocks_for(m), kThreads, 0, s>>>(m, d_at, d_partner, d_h,
                                                                  nf.partner[0], nf.hist[0]);
                e = cudaGetLastError();
            }
        }
        if (e == cudaSuccess) {
            e = cudaStreamSynchronize(s); /* before the staging goes */
        }
        if (e != cudaSuccess) {
            status = sim_fail(err, SIM_CUDA, "friction: uploading the contact histories: %s",
                              cudaGetErrorString(e));
        }
    }
    (void)cudaFree(d_at);
    (void)cudaFree(d_partner);
    (void)cudaFree(d_h);
    free(count);
    free(at);
    free(partner);
    free(h);
    if (status != SIM_OK) {
        free_tables(&nf);
        return status;
    }
    free_tables(fr);
    fr->row = nf.row;
    fr->h_row = nf.h_row;
    fr->slots = nf.slots;
    fr->min_cap = UINT32_MAX;
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t cap = nf.h_row[i + 1] - nf.h_row[i];
        fr->min_cap = cap < fr->min_cap ? (uint32_t)cap : fr->min_cap;
    }
    for (int t = 0; t < 2; ++t) {
        fr->partner[t] = nf.partner[t];
        fr->count[t] = nf.count[t];
        fr->hist[t] = nf.hist[t];
    }
    fr->last = 0;
    fr->on = 1;
    return SIM_OK;
}

sim_status sim_gpu_friction_upload_spin(sim_gpu_friction *fr, const sim_state *st, cudaStream_t s,
                                        sim_error *err) {
    const uint32_t n = fr->n;
    sim_vec4f *w = (sim_vec4f *)malloc((size_t)(n ? n : 1) * sizeof *w);
    if (w == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot stage the spin of %u bodies", n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec3d v = sim_state_spin(st, i);
        w[i] = sim_vec4f{(float)v.x, (float)v.y, (float)v.z, 0.0f};
        fr->spin_live |= w[i].x != 0.0f || w[i].y != 0.0f || w[i].z != 0.0f;
    }
    const cudaError_t e1 =
        cudaMemcpyAsync(fr->spin, w, (size_t)n * sizeof *w, cudaMemcpyHostToDevice, s);
    const cudaError_t e2 = cudaStreamSynchronize(s);
    free(w);
    SIM_CUDA_TRY(e1);
    SIM_CUDA_TRY(e2);
    return SIM_OK;
}

sim_status sim_gpu_friction_read(const sim_gpu_friction *fr, const uint32_t *order, sim_state *out,
                                 cudaStream_t s, sim_error *err) {
    const uint32_t n = fr->n;
    sim_vec4f *w = (sim_vec4f *)malloc((size_t)(n ? n : 1) * sizeof *w);
    uint32_t *count = (uint32_t *)malloc((size_t)(n ? n : 1) * sizeof *count);
    unsigned long long *off =
        (unsigned long long *)malloc(((size_t)n + 1) * sizeof(unsigned long long));
    if (w == nullptr || count == nullptr || off == nullptr) {
        free(w);
        free(count);
        free(off);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot stage the spin of %u bodies", n);
    }
    cudaError_t e = cudaMemcpyAsync(w, fr->spin, (size_t)n * sizeof *w, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess && fr->on) {
        e = cudaMemcpyAsync(count, fr->count[fr->last], (size_t)n * sizeof *count,
                            cudaMemcpyDeviceToHost, s);
    }
    if (e == cudaSuccess) {
        e = cudaStreamSynchronize(s);
    }
    for (uint32_t i = 0; e == cudaSuccess && out->spin != nullptr && i < n; ++i) { /* slot i */
        out->spin[order != nullptr ? order[i] : i] = sim_vec4d{w[i].x, w[i].y, w[i].z, 0.0};
    }
    uint64_t total = 0;
    off[0] = 0;
    for (uint32_t i = 0; i < n; ++i) { /* a row that overflowed holds its capacity */
        const uint64_t cap = fr->on ? fr->h_row[i + 1] - fr->h_row[i] : 0u;
        const uint64_t c = fr->on ? (count[i] < cap ? count[i] : cap) : 0u;
        total += c;
        off[i + 1] = total;
    }
    free(w);
    sim_status status = e == cudaSuccess ? SIM_OK
                                         : sim_fail(err, SIM_CUDA, "reading the spin back: %s",
                                                    cudaGetErrorString(e));
    if (status == SIM_OK) {
        status = sim_state_set_contact_count(out, total, err);
    }
    unsigned long long *d_off = nullptr;
    uint32_t *d_partner = nullptr, *partner = nullptr;
    sim_contact_history_f *d_h = nullptr, *h = nullptr;
    if (status == SIM_OK && total > 0) {
        status = device_alloc((void **)&d_off, ((size_t)n + 1) * sizeof *d_off, "staging", n, err);
        if (status == SIM_OK) {
            status = device_alloc((void **)&d_partner, (size_t)total * sizeof *d_partner,
                                  "staging", n, err);
        }
        if (status == SIM_OK) {
            status = device_alloc((void **)&d_h, (size_t)total * sizeof *d_h, "staging", n, err);
        }
        partner = (uint32_t *)malloc((size_t)total * sizeof *partner);
        h = (sim_contact_history_f *)malloc((size_t)total * sizeof *h);
        if (status == SIM_OK && (partner == nullptr || h == nullptr)) {
            status = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot stage %llu contacts",
                              (unsigned long long)total);
        }
        if (status == SIM_OK) {
            e = cudaMemcpyAsync(d_off, off, ((size_t)n + 1) * sizeof *off, cudaMemcpyHostToDevice,
                                s);
            if (e == cudaSuccess) {
                gather_kernel<<<blocks_for(n), kThreads, 0, s>>>(
                    n, fr->row, fr->count[fr->last], fr->partner[fr->last], fr->hist[fr->last],
                    d_off, d_partner, d_h);
                e = cudaGetLastError();
            }
            if (e == cudaSuccess) {
                e = cudaMemcpyAsync(partner, d_partner, (size_t)total * sizeof *partner,
                                    cudaMemcpyDeviceToHost, s);
            }
            if (e == cudaSuccess) {
                e = cudaMemcpyAsync(h, d_h, (size_t)total * sizeof *h, cudaMemcpyDeviceToHost, s);
            }
            if (e == cudaSuccess) {
                e = cudaStreamSynchronize(s);
            }
            if (e != cudaSuccess) {
                status = sim_fail(err, SIM_CUDA, "reading the contact histories back: %s",
                                  cudaGetErrorString(e));
            }
        }
    }
    /* By body, then partner (insertion within a row: rows are a few entries long). */
    for (uint32_t i = 0; status == SIM_OK && total > 0 && i < n; ++i) {
        for (uint64_t k = off[i]; k < off[i + 1]; ++k) {
            const sim_contact_history_f *g = &h[k];
            sim_state_contact c = {i, partner[k],
                                   sim_vec3d{g->xi.x, g->xi.y, g->xi.z},
                                   sim_vec3d{g->roll.x, g->roll.y, g->roll.z}};
            uint64_t at = k;
            while (at > off[i] && out->contacts[at - 1].j > c.j) {
                out->contacts[at] = out->contacts[at - 1];
                --at;
            }
            out->contacts[at] = c;
        }
    }
    (void)cudaFree(d_off);
    (void)cudaFree(d_partner);
    (void)cudaFree(d_h);
    free(partner);
    free(h);
    free(count);
    free(off);
    return status;
}

sim_gpu_fric sim_gpu_friction_view(const sim_gpu_friction *fr, const uint32_t *perm, float dt) {
    sim_gpu_fric v;
    memset(&v, 0, sizeof v);
    v.perm = perm;
    v.spin = fr->spin;
    v.torque = fr->torque;
    v.row = fr->row;
    v.last_partner = fr->partner[fr->last];
    v.last_count = fr->count[fr->last];
    v.last_hist = fr->hist[fr->last];
    v.next_partner = fr->partner[1 - fr->last];
    v.next_count = fr->count[1 - fr->last];
    v.next_hist = fr->hist[1 - fr->last];
    v.overflow = fr->overflow;
    v.dt = dt;
    return v;
}

sim_status sim_gpu_friction_begin(sim_gpu_friction *fr, cudaStream_t s, sim_error *err) {
    SIM_CUDA_TRY(
        cudaMemsetAsync(fr->count[1 - fr->last], 0, (size_t)fr->n * sizeof(uint32_t), s));
    SIM_CUDA_TRY(cudaMemsetAsync(fr->torque, 0, (size_t)fr->n * sizeof(sim_vec4f), s));
    return SIM_OK;
}

sim_status sim_gpu_friction_body_forces(const sim_gpu_bodies *b, const sim_gpu_friction *fr,
                                        const uint32_t *perm, const sim_physics_f *ph, float dt,
                                        cudaStream_t s, sim_error *err) {
    body_kernel<false><<<blocks_for(b->n), kThreads, 0, s>>>(
        b->pos, b->vel, b->force, b->n, 0.0f, *ph, sim_gpu_friction_view(fr, perm, dt),
        fr->owned_step ? fr->ls_owned : nullptr, fr->min_cap, nullptr, 0u);
    SIM_CUDA_CHECK_LAUNCH("friction body_kernel");
    return SIM_OK;
}

sim_status sim_gpu_friction_verlet_second(const sim_gpu_bodies *b, const sim_gpu_friction *fr,
                                          const uint32_t *perm, const sim_physics_f *ph, float dt,
                                          uint64_t *d_flag, uint32_t step, cudaStream_t s,
                                          sim_error *err) {
    body_kernel<true><<<blocks_for(b->n), kThreads, 0, s>>>(
        b->pos, b->vel, b->force, b->n, dt, *ph, sim_gpu_friction_view(fr, perm, dt),
        fr->owned_step ? fr->ls_owned : nullptr, fr->min_cap, d_flag, step);
    SIM_CUDA_CHECK_LAUNCH("friction body_kernel<kick>");
    return SIM_OK;
}

sim_status sim_gpu_friction_kick(const sim_gpu_bodies *b, const sim_gpu_friction *fr, float dt,
                                 cudaStream_t s, sim_error *err) {
    kick_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, b->n, dt, fr->spin,
                                                      fr->torque);
    SIM_CUDA_CHECK_LAUNCH("friction kick_kernel");
    return SIM_OK;
}

void sim_gpu_friction_commit(sim_gpu_friction *fr) {
    fr->last = 1 - fr->last;
    fr->ls_last = 1 - fr->ls_last;
    fr->gen = sim_gpu_friction_list_view(fr).next;
}

sim_status sim_gpu_friction_list_prepare(sim_gpu_friction *fr, uint64_t entries, cudaStream_t s,
                                         sim_error *err) {
    if (fr->ls_entries == entries && fr->ls_a[0] != nullptr) {
        return SIM_OK;
    }
    free_list(fr);
    const size_t e = (size_t)(entries ? entries : 1);
    sim_status st = SIM_OK;
    for (int k = 0; k < 2 && st == SIM_OK; ++k) {
        st = device_alloc((void **)&fr->ls_a[k], e * sizeof *fr->ls_a[k],
                          "the springs beside the neighbour lists", fr->n, err);
        if (st == SIM_OK) {
            st = device_alloc((void **)&fr->ls_b[k], e * sizeof *fr->ls_b[k],
                              "the springs beside the neighbour lists", fr->n, err);
        }
    }
    if (st == SIM_OK) {
        st = device_alloc((void **)&fr->ls_stamp, e * sizeof *fr->ls_stamp,
                          "the springs beside the neighbour lists", fr->n, err);
    }
    const size_t nb = (size_t)(fr->n ? fr->n : 1);
    if (st == SIM_OK) {
        st = device_alloc((void **)&fr->ls_owned, nb * sizeof(uint32_t), "the contact counts",
                          fr->n, err);
    }
    if (st == SIM_OK) {
        st = device_alloc((void **)&fr->carry_partner, e * sizeof *fr->carry_partner,
                          "the springs carried over a rebuild", fr->n, err);
    }
    if (st == SIM_OK) {
        st = device_alloc((void **)&fr->carry_k, e * sizeof *fr->carry_k,
                          "the springs carried over a rebuild", fr->n, err);
    }
    if (st == SIM_OK) {
        st = device_alloc((void **)&fr->carry_n, nb * sizeof(uint32_t), "the contact counts", fr->n,
                          err);
    }
    if (st == SIM_OK) {
        st = device_alloc((void **)&fr->carry_gen, nb * sizeof(uint32_t), "the contact counts",
                          fr->n, err);
    }
    if (st != SIM_OK) {
        free_list(fr);
        return st;
    }
    fr->ls_entries = entries;
    return sim_gpu_friction_list_invalidate(fr, s, err);
}

sim_status sim_gpu_friction_permute(sim_gpu_friction *fr, const uint32_t *old_order,
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

void sim_gpu_friction_list_free(sim_gpu_friction *fr) {
    free_list(fr);
}

sim_status sim_gpu_friction_list_invalidate(sim_gpu_friction *fr, cudaStream_t s, sim_error *err) {
    if (fr->ls_stamp != nullptr) {
        SIM_CUDA_TRY(cudaMemsetAsync(
            fr->ls_stamp, 0, (size_t)(fr->ls_entries ? fr->ls_entries : 1) * sizeof *fr->ls_stamp,
            s));
        SIM_CUDA_TRY(cudaMemsetAsync(fr->carry_gen, 0,
                                     (size_t)(fr->n ? fr->n : 1) * sizeof *fr->carry_gen, s));
    }
    fr->ls_dirty = 0;
    return SIM_OK;
}

sim_gpu_fric sim_gpu_friction_flush_view(const sim_gpu_friction *fr, const uint32_t *perm) {
    sim_gpu_fric v = sim_gpu_friction_view(fr, perm, 0.0f);
    v.next_partner = fr->partner[fr->last];
    v.next_count = fr->count[fr->last];
    v.next_hist = fr->hist[fr->last];
    return v;
}

sim_gpu_fric_list sim_gpu_friction_list_view(const sim_gpu_friction *fr) {
    sim_gpu_fric_list v;
    v.a = fr->ls_a[fr->ls_last];
    v.b = fr->ls_b[fr->ls_last];
    v.a_next = fr->ls_a[1 - fr->ls_last];
    v.b_next = fr->ls_b[1 - fr->ls_last];
    v.stamp = fr->ls_stamp;
    v.owned = fr->ls_owned;
    v.carry_partner = fr->carry_partner;
    v.carry_k = fr->carry_k;
    v.carry_n = fr->carry_n;
    v.carry_gen = fr->carry_gen;
    v.gen = fr->gen;
    v.next = fr->gen + 1u != 0u ? fr->gen + 1u : 1u; /* 0 stays never current */
    return v;
}

sim_status sim_gpu_friction_frame_start(sim_gpu_friction *fr, cudaStream_t s, sim_error *err) {
    SIM_CUDA_TRY(cudaMemsetAsync(fr->overflow, 0xff, sizeof *fr->overflow, s));
    return SIM_OK;
}

sim_status sim_gpu_friction_enqueue_read(sim_gpu_friction *fr, cudaStream_t s, sim_error *err) {
    SIM_CUDA_TRY(cudaMemcpyAsync(fr->h_overflow, fr->overflow, sizeof *fr->overflow,
                                 cudaMemcpyDeviceToHost, s));
    return SIM_OK;
}

sim_status sim_gpu_friction_check(sim_gpu_friction *fr, sim_error *err) {
    const uint32_t i = *fr->h_overflow;
    if (i == UINT32_MAX || !fr->on) {
        return SIM_OK;
    }
    *fr->h_overflow = UINT32_MAX;
    return sim_fail(err, SIM_UNSTABLE,
                    "friction: body %u touches more bodies and walls at once than the %llu "
                    "whose histories it has room for (its neighbours overlap each other by more "
                    "than %.0f %% of the smallest radius: a stiffer contact or a smaller step)",
                    i, (unsigned long long)(fr->h_row[i + 1] - fr->h_row[i]),
                    100.0 * SIM_FRICTION_OVERLAP);
}

sim_status sim_gpu_friction_save(sim_gpu_friction *fr, int *saved, cudaStream_t s,
                                 sim_error *err) {
    const size_t v4 = (size_t)(fr->n ? fr->n : 1) * sizeof(sim_vec4f);
    sim_error ignored; /* no memory: the step runs whole (the stepper's rule) */
    if (fr->save_spin == nullptr &&
        device_alloc((void **)&fr->save_spin, v4, "", fr->n, &ignored) != SIM_OK) {
        *saved = 0;
        return SIM_OK;
    }
    if (fr->save_torque == nullptr &&
        device_alloc((void **)&fr->save_torque, v4, "", fr->n, &ignored) != SIM_OK) {
        *saved = 0;
        return SIM_OK;
    }
    const size_t bytes = (size_t)fr->n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(fr->save_spin, fr->spin, bytes, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(
        cudaMemcpyAsync(fr->save_torque, fr->torque, bytes, cudaMemcpyDeviceToDevice, s));
    *saved = 1;
    return SIM_OK;
}

sim_status sim_gpu_friction_restore(sim_gpu_friction *fr, cudaStream_t s, sim_error *err) {
    const size_t bytes = (size_t)fr->n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(fr->spin, fr->save_spin, bytes, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(
        cudaMemcpyAsync(fr->torque, fr->save_torque, bytes, cudaMemcpyDeviceToDevice, s));
    return sim_gpu_friction_frame_start(fr, s, err); /* the cut step's overflow is not a fact */
}

sim_status sim_gpu_friction_energy(const sim_gpu_friction *fr, const sim_gpu_bodies *b,
                                   const uint32_t *perm, const sim_vec4f *pos_user,
                                   const sim_physics_f *ph, double *d_energy, cudaStream_t s,
                                   sim_error *err) {
    energy_kernel<<<blocks_for(b->n), kThreads, 0, s>>>(b->pos, b->vel, pos_user, b->n, *ph,
                                                        sim_gpu_friction_view(fr, perm, 0.0f),
                                                        fr->on, d_energy);
    SIM_CUDA_CHECK_LAUNCH("friction energy_kernel");
    return SIM_OK;
}
