/* SPDX-License-Identifier: MIT
 * nbsim — friction's state on the device and its one owner (friction_state.h): the spin, the
 * history tables (allocation, upload of a state's contacts, read-back, commit, save, restore),
 * the springs beside the neighbour lists' entries and the carry over a rebuild, with the step's
 * calls that keep the three in step (prepare, carry, flush, commit). Host side only: the kernels
 * are friction_kernels.cu's and nlist_kernels.cu's. */
#include <stdlib.h>
#include <string.h>

#include "nbsim/cuda_check.h"
#include "cuda/friction_kernels.h"
#include "nlist/nlist_kernels.h"

namespace {

void free_list(sim_cuda_friction *fr) {
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

void free_tables(sim_cuda_friction *fr) {
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

sim_status sim_cuda_friction_alloc(sim_cuda_friction *fr, uint32_t n, sim_error *err) {
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

void sim_cuda_friction_free(sim_cuda_friction *fr) {
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

sim_status sim_cuda_friction_ready(sim_cuda_friction *fr, int on, const sim_state *st, int keep,
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
    sim_cuda_friction nf;
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
                e = sim_cuda_friction_scatter(m, d_at, d_partner, d_h, nf.partner[0], nf.hist[0],
                                              s);
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

sim_status sim_cuda_friction_upload_spin(sim_cuda_friction *fr, const sim_state *st, cudaStream_t s,
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

sim_status sim_cuda_friction_read(const sim_cuda_friction *fr, const uint32_t *order,
                                  sim_state *out, cudaStream_t s, sim_error *err) {
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
                e = sim_cuda_friction_gather(n, fr->row, fr->count[fr->last], fr->partner[fr->last],
                                             fr->hist[fr->last], d_off, d_partner, d_h, s);
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

sim_status sim_cuda_friction_begin(sim_cuda_friction *fr, cudaStream_t s, sim_error *err) {
    SIM_CUDA_TRY(
        cudaMemsetAsync(fr->count[1 - fr->last], 0, (size_t)fr->n * sizeof(uint32_t), s));
    SIM_CUDA_TRY(cudaMemsetAsync(fr->torque, 0, (size_t)fr->n * sizeof(sim_vec4f), s));
    return SIM_OK;
}

void sim_cuda_friction_commit(sim_cuda_friction *fr) {
    fr->last = 1 - fr->last;
    fr->ls_last = 1 - fr->ls_last;
    fr->gen = sim_cuda_friction_list_view(fr).next;
}

sim_status sim_cuda_friction_list_prepare(sim_cuda_friction *fr, uint64_t entries, cudaStream_t s,
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
    return sim_cuda_friction_list_invalidate(fr, s, err);
}

void sim_cuda_friction_list_free(sim_cuda_friction *fr) {
    free_list(fr);
}

sim_status sim_cuda_friction_list_invalidate(sim_cuda_friction *fr, cudaStream_t s,
                                             sim_error *err) {
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

sim_gpu_fric sim_cuda_friction_flush_view(const sim_cuda_friction *fr, const uint32_t *perm) {
    sim_gpu_fric v = sim_cuda_friction_view(fr, perm, 0.0f);
    v.next_partner = fr->partner[fr->last];
    v.next_count = fr->count[fr->last];
    v.next_hist = fr->hist[fr->last];
    return v;
}

sim_gpu_fric_list sim_cuda_friction_list_view(const sim_cuda_friction *fr) {
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

sim_status sim_cuda_friction_frame_start(sim_cuda_friction *fr, cudaStream_t s, sim_error *err) {
    SIM_CUDA_TRY(cudaMemsetAsync(fr->overflow, 0xff, sizeof *fr->overflow, s));
    return SIM_OK;
}

sim_status sim_cuda_friction_enqueue_read(sim_cuda_friction *fr, cudaStream_t s, sim_error *err) {
    SIM_CUDA_TRY(cudaMemcpyAsync(fr->h_overflow, fr->overflow, sizeof *fr->overflow,
                                 cudaMemcpyDeviceToHost, s));
    return SIM_OK;
}

sim_status sim_cuda_friction_check(sim_cuda_friction *fr, sim_error *err) {
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

sim_status sim_cuda_friction_save(sim_cuda_friction *fr, int *saved, cudaStream_t s,
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

sim_status sim_cuda_friction_restore(sim_cuda_friction *fr, cudaStream_t s, sim_error *err) {
    const size_t bytes = (size_t)fr->n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(fr->spin, fr->save_spin, bytes, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(
        cudaMemcpyAsync(fr->torque, fr->save_torque, bytes, cudaMemcpyDeviceToDevice, s));
    return sim_cuda_friction_frame_start(fr, s, err); /* the cut step's overflow is not a fact */
}

sim_status sim_cuda_friction_prepare(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                     cudaStream_t s, sim_error *err) {
    if (!fr->on) {
        return SIM_OK;
    }
    SIM_TRY(sim_cuda_friction_frame_start(fr, s, err));
    if (lists != nullptr) {
        SIM_TRY(sim_cuda_friction_list_prepare(fr, (uint64_t)lists->cap * lists->stride, s, err));
    }
    return SIM_OK;
}

sim_status sim_cuda_friction_carry(const sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                   int rebuild, cudaStream_t s, sim_error *err) {
    if (lists == nullptr || !fr->on || !fr->ls_dirty) {
        return SIM_OK;
    }
    const sim_gpu_fric_list springs = sim_cuda_friction_list_view(fr);
    return sim_gpu_nlist_friction_carry(lists, &springs, rebuild, s, err);
}

sim_status sim_cuda_friction_flush(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                   const uint32_t *perm, cudaStream_t s, sim_error *err) {
    if (!fr->on || !fr->ls_dirty || lists == nullptr) {
        return SIM_OK;
    }
    const sim_gpu_fric into = sim_cuda_friction_flush_view(fr, perm);
    const sim_gpu_fric_list springs = sim_cuda_friction_list_view(fr);
    SIM_TRY(sim_gpu_nlist_friction_flush(lists, &into, &springs, 1, s, err));
    fr->ls_dirty = 0;
    return SIM_OK;
}

sim_status sim_cuda_friction_built(const sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                   const uint32_t *perm, cudaStream_t s, sim_error *err) {
    if (!fr->on || !fr->ls_dirty || lists == nullptr) {
        return SIM_OK;
    }
    const sim_gpu_fric into = sim_cuda_friction_flush_view(fr, perm);
    const sim_gpu_fric_list springs = sim_cuda_friction_list_view(fr);
    return sim_gpu_nlist_friction_overflowed(lists, &into, &springs, s, err);
}

sim_status sim_cuda_friction_sweep_lists(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                         int advance, sim_gpu_fric_list *springs, cudaStream_t s,
                                         sim_error *err) {
    SIM_TRY(sim_cuda_friction_list_prepare(fr, (uint64_t)lists->cap * lists->stride, s, err));
    SIM_CUDA_TRY(cudaMemsetAsync(fr->ls_owned, 0, (size_t)fr->n * sizeof(uint32_t), s));
    fr->owned_step = 1;
    *springs = sim_cuda_friction_list_view(fr);
    if (advance) {
        fr->ls_dirty = 1;
    }
    return SIM_OK;
}

sim_status sim_cuda_friction_sweep_tables(sim_cuda_friction *fr, const sim_gpu_nlist *lists,
                                          const uint32_t *perm, cudaStream_t s, sim_error *err) {
    SIM_TRY(sim_cuda_friction_flush(fr, lists, perm, s, err));
    fr->owned_step = 0;
    return SIM_OK;
}
