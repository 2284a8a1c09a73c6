/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA kernels: friction's pair visit on the device (friction.h says the
 * layout), the one every enumeration calls (the map-placed and culled tile sweeps of
 * pair_kernels.cu, the full sweep, the neighbour lists of nlist_kernels.cu). As the CPU's visit
 * (cpu_friction.c), the body with the larger user index owns the history and is "i" of
 * sim_friction_contact_f: the same arguments in the same roles whichever enumeration, slot order
 * or thread found the pair, so the same bits. */
#ifndef SIM_CUDA_FRICTION_CUH
#define SIM_CUDA_FRICTION_CUH

#include "gpu/device_util.cuh"
#include "gpu/friction.h"

static __device__ __forceinline__ sim_vec3f sim_fric_xyz(const sim_vec4f &v) {
    sim_vec3f r;
    r.x = v.x;
    r.y = v.y;
    r.z = v.z;
    return r;
}

/* sim_friction_contact's own first test (the same separation through the same minimum image on
 * ph's periodic axes: a pair across a face touches; the sign of a difference does not change its
 * square), taken before anything is read from global memory: most pairs a sweep tests do not
 * touch, and for them a visit must cost no more than the frictionless kernel's. */
static __device__ __forceinline__ bool sim_fric_touch(const sim_vec4f &pa, const sim_vec4f &pb,
                                                      const sim_physics_f &ph) {
    float dx = pa.x - pb.x, dy = pa.y - pb.y, dz = pa.z - pb.z;
    sim_min_image_f(&dx, &dy, &dz, &ph);
    return sim_touch_f(dx, dy, dz, pa.w + pb.w) != 0;
}

/* Owner u's history with partner in the last step's table, zero when there is none: by the
 * partner's index, whatever slot it sits in (at most the row's capacity: a row that overflowed
 * counted past it). */
static __device__ __forceinline__ sim_contact_history_f sim_fric_find(const sim_gpu_fric &fr,
                                                                      uint32_t u,
                                                                      uint32_t partner) {
    const unsigned long long first = fr.row[u];
    const uint32_t cap = (uint32_t)(fr.row[u + 1] - first);
    uint32_t used = fr.last_count[u];
    used = used < cap ? used : cap;
    for (uint32_t k = 0; k < used; ++k) {
        if (fr.last_partner[first + k] == partner) {
            return fr.last_hist[first + k];
        }
    }
    sim_contact_history_f none;
    none.xi.x = none.xi.y = none.xi.z = 0.0f;
    none.roll.x = none.roll.y = none.roll.z = 0.0f;
    return none;
}

/* A spring beside a list entry (friction.h: sim_fric_roll2) from and into its two words. */
static __device__ __forceinline__ sim_contact_history_f sim_fric_unpack(const sim_vec4f &a,
                                                                         const sim_fric_roll2 &b) {
    sim_contact_history_f h;
    h.xi.x = a.x;
    h.xi.y = a.y;
    h.xi.z = a.z;
    h.roll.x = a.w;
    h.roll.y = b.y;
    h.roll.z = b.z;
    return h;
}

static __device__ __forceinline__ void sim_fric_pack(const sim_contact_history_f &h, sim_vec4f *a,
                                                     sim_fric_roll2 *b) {
    a->x = h.xi.x;
    a->y = h.xi.y;
    a->z = h.xi.z;
    a->w = h.roll.x;
    b->y = h.roll.y;
    b->z = h.roll.z;
}

/* Owner u's history with partner into this step's table: a slot claimed with one atomicAdd (any
 * order: lookups go by partner); a full row keeps counting and names the lowest such body. */
static __device__ __forceinline__ void sim_fric_store(const sim_gpu_fric &fr, uint32_t u,
                                                      uint32_t partner,
                                                      const sim_contact_history_f &h) {
    const uint32_t k = atomicAdd(&fr.next_count[u], 1u);
    const unsigned long long at = fr.row[u] + k;
    if (at < fr.row[u + 1]) {
        fr.next_partner[at] = partner;
        fr.next_hist[at] = h;
    } else {
        atomicMin(fr.overflow, u);
    }
}

/* The contact of the bodies in slots sa, sb (user indices ua != ub) at pa, va and pb, vb with
 * friction: writes the force on a (b gets its negative) and the torques on a and b; stores the
 * history when `store` (the owner's thread of a sweep that visits the pair from both ends stores
 * it once). Returns whether they touch (nothing written otherwise; the spins, by slot, are read
 * only for a touching pair). */
static __device__ __forceinline__ bool
sim_fric_contact(const sim_gpu_fric &fr, const sim_physics_f &ph, uint32_t ua, uint32_t ub,
                 uint32_t sa, uint32_t sb, const sim_vec4f &pa, const sim_vec4f &va,
                 const sim_vec4f &pb, const sim_vec4f &vb, bool store, sim_vec3f *fa, sim_vec3f *ta,
                 sim_vec3f *tb, float *energy) {
    if (!sim_fric_touch(pa, pb, ph)) {
        return false;
    }
    const bool a_owns = ua > ub;
    const uint32_t i = a_owns ? ua : ub, j = a_owns ? ub : ua;
    sim_contact_history_f h = sim_fric_find(fr, i, j);
    sim_vec3f f, ti, tj;
    const sim_vec3f wa = sim_fric_xyz(fr.spin[sa]), wb = sim_fric_xyz(fr.spin[sb]);
    if (!sim_friction_contact_f(a_owns ? pa : pb, a_owns ? va : vb, a_owns ? wa : wb,
                                a_owns ? pb : pa, a_owns ? vb : va, a_owns ? wb : wa, &h, &ph,
                                fr.dt, &f, &ti, &tj, energy)) {
        return false;
    }
    if (store) {
        sim_fric_store(fr, i, j, h);
    }
    const float s = a_owns ? 1.0f : -1.0f;
    fa->x = s * f.x;
    fa->y = s * f.y;
    fa->z = s * f.z;
    *ta = a_owns ? ti : tj;
    *tb = a_owns ? tj : ti;
    return true;
}

/* The pair visit of the sweeps that see each pair once (the tile sweeps, a list's fallback over
 * tile pairs): the history stored, both torques added with atomics (slot order), the force on
 * a returned for the caller's accumulation (zero when they do not touch). */
static __device__ __forceinline__ sim_vec3f sim_fric_pair(const sim_gpu_fric &fr,
                                                          const sim_physics_f &ph, uint32_t sa,
                                                          uint32_t sb, const sim_vec4f &pa,
                                                          const sim_vec4f &va, const sim_vec4f &pb,
                                                          const sim_vec4f &vb, float *energy) {
    sim_vec3f f, ta, tb;
    if (!sim_fric_touch(pa, pb, ph)) {
        f.x = f.y = f.z = 0.0f;
        return f;
    }
    const uint32_t ua = fr.perm != nullptr ? fr.perm[sa] : sa;
    const uint32_t ub = fr.perm != nullptr ? fr.perm[sb] : sb;
    if (!sim_fric_contact(fr, ph, ua, ub, sa, sb, pa, va, pb, vb, true, &f, &ta, &tb, energy)) {
        f.x = f.y = f.z = 0.0f;
        return f;
    }
    sim_atomic_add3(fr.torque + sa, ta.x, ta.y, ta.z);
    sim_atomic_add3(fr.torque + sb, tb.x, tb.y, tb.z);
    return f;
}

#endif /* SIM_CUDA_FRICTION_CUH */
