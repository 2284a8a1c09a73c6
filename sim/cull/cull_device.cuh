/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: device helpers the culling kernels share (contacts:
 * cull_kernels.cu; the ATM cut-off: triplet_cull_kernels.cu): boxes merged by warp shuffles, the
 * rounding margin, and the warp-aggregated append to a list whose length stays on the device. */
#ifndef SIM_CULL_DEVICE_CUH
#define SIM_CULL_DEVICE_CUH

#include "cull/cull.h"
#include "gpu/device_util.cuh"

static __device__ __forceinline__ sim_cull_box sim_cull_empty_box(void) {
    sim_cull_box b;
    b.lo.x = b.lo.y = b.lo.z = INFINITY;
    b.hi.x = b.hi.y = b.hi.z = -INFINITY;
    b.lo.w = b.hi.w = 0.0f;
    return b;
}

static __device__ __forceinline__ void sim_cull_box_merge(sim_cull_box *a, const sim_cull_box &b) {
    a->lo.x = fminf(a->lo.x, b.lo.x);
    a->lo.y = fminf(a->lo.y, b.lo.y);
    a->lo.z = fminf(a->lo.z, b.lo.z);
    a->hi.x = fmaxf(a->hi.x, b.hi.x);
    a->hi.y = fmaxf(a->hi.y, b.hi.y);
    a->hi.z = fmaxf(a->hi.z, b.hi.z);
}

/* Adds the interval of half-width w [m] around centre p to box b. */
static __device__ __forceinline__ void sim_cull_box_add(sim_cull_box *b, const sim_vec4f &p,
                                                        float w) {
    b->lo.x = fminf(b->lo.x, p.x - w);
    b->lo.y = fminf(b->lo.y, p.y - w);
    b->lo.z = fminf(b->lo.z, p.z - w);
    b->hi.x = fmaxf(b->hi.x, p.x + w);
    b->hi.y = fmaxf(b->hi.y, p.y + w);
    b->hi.z = fmaxf(b->hi.z, p.z + w);
}

/* The same in a periodic box (cull.h): on each periodic axis of per through the image of p
 * nearest the anchor a (walled axes: inv = 0, p itself); *far is raised where that is not p's own
 * coordinate. ~4 instructions more per axis. */
static __device__ __forceinline__ void sim_cull_box_add_near(sim_cull_box *b, sim_vec4f p, float w,
                                                             const sim_vec4f &a,
                                                             const sim_period_f &per, bool *far) {
    const float kx = sim_period_count_f(p.x, a.x, per.inv[0]);
    const float ky = sim_period_count_f(p.y, a.y, per.inv[1]);
    const float kz = sim_period_count_f(p.z, a.z, per.inv[2]);
    if (kx != 0.0f || ky != 0.0f || kz != 0.0f) {
        p.x -= per.len[0] * kx;
        p.y -= per.len[1] * ky;
        p.z -= per.len[2] * kz;
        *far = true;
    }
    sim_cull_box_add(b, p, w);
}

/* Box b moved by whole periods to the image nearest anchor a, whose own anchor is at: what a
 * super-tile's box is made of in a periodic box (cull.h). */
static __device__ __forceinline__ void sim_cull_box_near(sim_cull_box *b, const sim_vec4f &at,
                                                         const sim_vec4f &a,
                                                         const sim_period_f &per) {
    const float sx = per.len[0] * sim_period_count_f(at.x, a.x, per.inv[0]);
    const float sy = per.len[1] * sim_period_count_f(at.y, a.y, per.inv[1]);
    const float sz = per.len[2] * sim_period_count_f(at.z, a.z, per.inv[2]);
    b->lo.x -= sx;
    b->lo.y -= sy;
    b->lo.z -= sz;
    b->hi.x -= sx;
    b->hi.y -= sy;
    b->hi.z -= sz;
}

/* The union of the 32 lanes' boxes, in every lane. */
static __device__ __forceinline__ sim_cull_box sim_cull_warp_box(sim_cull_box b) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        sim_cull_box other;
        other.lo.x = __shfl_xor_sync(SIM_FULL_MASK, b.lo.x, o);
        other.lo.y = __shfl_xor_sync(SIM_FULL_MASK, b.lo.y, o);
        other.lo.z = __shfl_xor_sync(SIM_FULL_MASK, b.lo.z, o);
        other.hi.x = __shfl_xor_sync(SIM_FULL_MASK, b.hi.x, o);
        other.hi.y = __shfl_xor_sync(SIM_FULL_MASK, b.hi.y, o);
        other.hi.z = __shfl_xor_sync(SIM_FULL_MASK, b.hi.z, o);
        sim_cull_box_merge(&b, other);
    }
    return b;
}

/* Outwards by the rounding margin (cull.h); an empty (or all-NaN) axis stays empty. */
static __device__ __forceinline__ void sim_cull_inflate_axis(float *lo, float *hi) {
    if (*lo <= *hi) {
        const float m = sim_cull_margin_f(*lo, *hi);
        *lo -= m;
        *hi += m;
    }
}

static __device__ __forceinline__ void sim_cull_inflate(sim_cull_box *b) {
    sim_cull_inflate_axis(&b->lo.x, &b->hi.x);
    sim_cull_inflate_axis(&b->lo.y, &b->hi.y);
    sim_cull_inflate_axis(&b->lo.z, &b->hi.z);
}

/* Both corners of box k (two LDG.128). */
static __device__ __forceinline__ sim_cull_box sim_cull_load_box(const sim_cull_box *boxes,
                                                                 uint32_t k) {
    sim_cull_box b;
    b.lo = sim_ld4(&boxes[k].lo);
    b.hi = sim_ld4(&boxes[k].hi);
    return b;
}

/* Appends `item` for each lane with keep, one atomic per warp (ballot + popc); items past cap are
 * counted but not written, so a consumer that finds *count > cap knows the list is incomplete.
 * All 32 lanes must call it. */
template <class T>
static __device__ __forceinline__ void sim_cull_append(bool keep, const T &item, uint32_t lane,
                                                       T *__restrict__ out, uint32_t cap,
                                                       uint32_t *__restrict__ count) {
    const unsigned mask = __ballot_sync(SIM_FULL_MASK, keep);
    if (mask == 0u) {
        return;
    }
    const int leader = __ffs((int)mask) - 1;
    uint32_t base = 0;
    if ((int)lane == leader) {
        base = atomicAdd(count, (uint32_t)__popc(mask));
    }
    base = __shfl_sync(SIM_FULL_MASK, base, leader);
    if (keep) {
        const uint32_t idx = base + (uint32_t)__popc(mask & ((1u << lane) - 1u));
        if (idx < cap) {
            out[idx] = item;
        }
    }
}

#endif /* SIM_CULL_DEVICE_CUH */
