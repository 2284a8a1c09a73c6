/* SPDX-License-Identifier: MIT
 * nbsim — private to the pair kernels' translation units (pair_kernels.cu: forces, energy,
 * contacts; pair_friction.cu: forces with friction): the symmetric tiled kernel placed by a pair
 * thread map, the sweep over the culled tile-pair list, the nbody-style full sweep (baseline),
 * and the launchers their host drivers call. Its templates are instantiated by the drivers'
 * switches over maps and tiles, one mode per file, so the two files compile side by side (a
 * build's longest step was this one file). Everything here has internal linkage. */
#ifndef SIM_PAIR_SWEEP_CUH
#define SIM_PAIR_SWEEP_CUH

#include "cuda/pair_kernels.h"

#include "cull/cull_kernels.h"
#include "gpu/device_util.cuh"
#include "gpu/friction.cuh"
#include "cull/cull_device.cuh"
#include "gpu/arch.cuh"

namespace {

/* Pairs tested between two warp votes: the rare slow path (a contact somewhere in the warp)
 * costs one vote + branch per kGroup pairs on the fast path. */
constexpr int kGroup = 8;

/* The fast reject: 3 FADD + FMUL + 2 FFMA + FADD + FMUL + FSETP. Strict `<`, so padded bodies
 * (radius 0, see SIM_PAD_COORD) and bodies exactly touching are rejected. */
static __device__ __forceinline__ bool touching(const sim_vec4f &pi, const sim_vec4f &pj) {
    const float dx = pj.x - pi.x;
    const float dy = pj.y - pi.y;
    const float dz = pj.z - pi.z;
    return sim_touch_f(dx, dy, dz, pi.w + pj.w) != 0;
}

/* The same through the minimum image on the periodic axes of per (physics.h): 9 more
 * instructions (FMUL, FRND, FFMA per axis). */
static __device__ __forceinline__ bool touching_periodic(const sim_vec4f &pi, const sim_vec4f &pj,
                                                         const sim_period_f &per) {
    float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
    sim_min_image_in_f(&dx, &dy, &dz, &per);
    return sim_touch_f(dx, dy, dz, pi.w + pj.w) != 0;
}

/* The same with the image fixed per tile pair: (x_j - x_i) - s on each axis, s the shift of the
 * tile pair's boxes (pair_shift): 3 FADDs more than touching(), and the same bits as
 * touching_periodic wherever the pair's own image is s, which it is for every pair that can
 * touch (pair_shift's condition). */
static __device__ __forceinline__ bool touching_shifted(const sim_vec4f &pi, const sim_vec4f &pj,
                                                        const sim_vec3f &s) {
    const float dx = (pj.x - pi.x) - s.x;
    const float dy = (pj.y - pi.y) - s.y;
    const float dz = (pj.z - pi.z) - s.z;
    return sim_touch_f(dx, dy, dz, pi.w + pj.w) != 0;
}

/* How a block tests its pairs in a periodic box. */
enum image_mode { kWalls, kShifted, kPerPair };

/* The one image shift s of tile pair (I, J) (per periodic axis len * rint((c_J - c_I) / len), c
 * the boxes' centres; 0 on walled axes) when every pair that can touch takes it: both boxes of
 * their bodies' own coordinates (lo.w 0: not of images nearer the tile's first body, cull.h) and
 * their half-widths w_I + w_J (radii included, so also >= r_i + r_j) below a quarter period. Then
 * a pair touching through another image s' = s +- L would be within r_i + r_j of it, while
 * |x_j - x_i - s| <= L/2 + w_I + w_J: L - (r_i + r_j) <= L/2 + w_I + w_J, impossible. 0.24
 * leaves room for the float rounding of centres and widths. Returns false (take images pair by
 * pair) otherwise. */
static __device__ __forceinline__ bool pair_shift(const sim_cull_box &a, const sim_cull_box &b,
                                                  const sim_period_f &per, sim_vec3f *s) {
    const float alo[3] = {a.lo.x, a.lo.y, a.lo.z}, ahi[3] = {a.hi.x, a.hi.y, a.hi.z};
    const float blo[3] = {b.lo.x, b.lo.y, b.lo.z}, bhi[3] = {b.hi.x, b.hi.y, b.hi.z};
    float out[3];
    bool unique = a.lo.w == 0.0f && b.lo.w == 0.0f;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        const float len = per.len[k];
        const float dc = 0.5f * ((blo[k] + bhi[k]) - (alo[k] + ahi[k]));
        const float w = 0.5f * ((ahi[k] - alo[k]) + (bhi[k] - blo[k]));
        out[k] = len > 0.0f ? len * rintf(dc * per.inv[k]) : 0.0f; /* walls: 0, even for inf */
        unique = unique && (len == 0.0f || w < 0.24f * len);       /* NaN: not unique */
    }
    s->x = out[0];
    s->y = out[1];
    s->z = out[2];
    return unique;
}

template <int TILE, typename Test, typename Contact>
static __device__ __forceinline__ void sweep_tile_with(const sim_vec4f &pi, const sim_vec4f *sh_pos,
                                                       Test &&test, Contact &&contact) {
#pragma unroll 2
    for (int jb = 0; jb < TILE; jb += kGroup) {
        bool any = false;
#pragma unroll
        for (int u = 0; u < kGroup; ++u) {
            any |= test(pi, sh_pos[jb + u]);
        }
        if (__any_sync(SIM_FULL_MASK, any)) {
#pragma unroll
            for (int u = 0; u < kGroup; ++u) {
                const sim_vec4f pj = sh_pos[jb + u];
                if (test(pi, pj)) {
                    contact(jb + u, pj);
                }
            }
        }
    }
}

/* Sweeps this thread's body pi over the TILE bodies in shared memory (all lanes read the same
 * j: a broadcast LDS.128, no bank conflicts) and calls contact(jl, pj) for each touching pair.
 * Must be called by whole warps (the vote). Fast path per pair: LDS.128 + the 9 instructions
 * of touching() + 1/kGroup of vote/branch + loop overhead, i.e. about 10.5 instructions and
 * 0 bytes of global memory traffic (the tile costs 16 B per body per block). A periodic box
 * (mode block-uniform: one branch per tile, none per pair) takes touching() (the culled list's
 * tile pairs whose boxes give one image, 0: most of them), touching_shifted (~13.5
 * instructions: those whose one image is across a face) or touching_periodic (~19.5: the
 * map-placed sweeps, tile pairs too wide for one image, tiles with bodies across a face since
 * the last sort); the contact's own test takes the same image (physics_impl.h), bit for bit. */
template <int TILE, typename Contact>
static __device__ __forceinline__ void sweep_tile(const sim_vec4f &pi, const sim_vec4f *sh_pos,
                                                  const sim_physics_f &ph, image_mode mode,
                                                  const sim_vec3f &shift, Contact &&contact) {
    if (mode == kShifted) {
        sweep_tile_with<TILE>(
            pi, sh_pos,
            [&](const sim_vec4f &a, const sim_vec4f &b) { return touching_shifted(a, b, shift); },
            contact);
    } else if (mode == kPerPair) {
        const sim_period_f per = ph.box.period;
        sweep_tile_with<TILE>(
            pi, sh_pos,
            [&](const sim_vec4f &a, const sim_vec4f &b) { return touching_periodic(a, b, per); },
            contact);
    } else {
        sweep_tile_with<TILE>(
            pi, sh_pos, [](const sim_vec4f &a, const sim_vec4f &b) { return touching(a, b); },
            contact);
    }
}

/* What a block's pairs produce: forces (the step), the contact potential (energy passes, not
 * timed), the list of touching pairs (the contacts hook of the tests), or forces with friction
 * (friction.cuh: the histories, torques by atomics; its own instantiations, so the frictionless
 * kernels are the code they were). */
enum pair_mode { kForce, kEnergy, kContacts, kFriction };

/* Where a block's results go: force for kForce, energy for kEnergy (one double atomic per
 * block), for kContacts pairs of user indices (slot s holds body perm[s]; perm NULL: identity)
 * appended while fewer than cap, all counted. */
struct pair_sink {
    sim_vec4f *force;
    double *energy;
    const uint32_t *perm;
    sim_body_pair *contacts;
    uint32_t contacts_cap;
    uint32_t *contacts_count;
    sim_gpu_fric fric; /* kFriction */
};

/* One tile pair (I, J), I >= J, by a block of TILE threads: each unordered pair once, Newton's
 * third law inside the block. Thread t owns body i = I*TILE + t (its position and force in
 * registers); the block stages tile J's positions in shared memory. Off the diagonal every i
 * meets every j of tile J; on it (I == J) only j < i. Bounds: bodies past N in a partial last
 * tile are padded at NaN (SIM_PAD_COORD: they touch nothing), and every global access is
 * guarded by < n. All TILE threads must call it (barriers); it ends with a barrier, so a persistent
 * block may call it again for its next tile pair.
 *
 * j-forces: a touching pair adds -f to the block's shared accumulator of j with shared-memory
 * atomics (only on the rare slow path); at the end the block (if any thread saw a contact)
 * adds each nonzero body force to global memory with one atomic per body (16-byte vector
 * atomic on sm_90). Never a global atomic per interaction.
 *
 * Cost per pair: ~10.5 instructions when not touching (see sweep_tile); a contact adds ~60
 * (sim_contact_force_f: 1 sqrt, 1 div) + 2 x 16 B velocity loads (L1) + 3 shared atomics.
 * Bytes per block from L2: 2 * 16 * TILE (positions of tiles I and J). kEnergy adds the pair
 * potentials to e (the caller sums e over the block). touches (the culled sweep's; NULL for the
 * map-placed one, whose code it leaves as it was) counts the thread's touching pairs. */
template <int TILE, int MODE>
static __device__ __forceinline__ void
pair_block(sim_tile2 tile, const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
           uint32_t n, const sim_physics_f &ph, const pair_sink &sink, double &e, sim_vec4f *sh_pos,
           float *sh_fx, float *sh_fy, float *sh_fz, uint32_t *touches,
           const sim_cull_box *__restrict__ boxes = nullptr) {
    const int t = (int)threadIdx.x;
    const uint32_t i = tile.i * TILE + (uint32_t)t;
    const uint32_t j0 = tile.j * TILE;
    constexpr bool kForces = MODE == kForce || MODE == kFriction;
    const sim_vec4f pi = i < n ? sim_ld4(pos + i) : sim_pad_body();
    sh_pos[t] = j0 + (uint32_t)t < n ? sim_ld4(pos + j0 + t) : sim_pad_body();
    if constexpr (kForces) {
        sh_fx[t] = 0.0f;
        sh_fy[t] = 0.0f;
        sh_fz[t] = 0.0f;
    }
    __syncthreads();

    const bool diag = tile.i == tile.j;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    int touched = 0;
    image_mode mode = kWalls;
    sim_vec3f shift = {0.0f, 0.0f, 0.0f};
    if (ph.box.periodic) { /* block-uniform: every thread reads the same two boxes */
        mode = kPerPair;
        if (boxes != nullptr && pair_shift(sim_cull_load_box(boxes, tile.i),
                                           sim_cull_load_box(boxes, tile.j), ph.box.period, &shift)) {
            /* no image between the tiles (most pairs, away from the faces): the walls' test,
             * whose x_j - x_i is the bits of (x_j - x_i) - 0 */
            mode = shift.x == 0.0f && shift.y == 0.0f && shift.z == 0.0f ? kWalls : kShifted;
        }
    }
    sweep_tile<TILE>(pi, sh_pos, ph, mode, shift, [&](int jl, const sim_vec4f &pj) {
        if (diag && jl >= t) {
            return; /* the diagonal tile: each unordered pair once, from its larger index */
        }
        if constexpr (MODE == kContacts) {
            const uint32_t j = j0 + (uint32_t)jl;
            const uint32_t a = sink.perm != nullptr ? sink.perm[i] : i;
            const uint32_t b = sink.perm != nullptr ? sink.perm[j] : j;
            const uint32_t k = atomicAdd(sink.contacts_count, 1u);
            if (k < sink.contacts_cap) {
                sink.contacts[k].i = a > b ? a : b;
                sink.contacts[k].j = a > b ? b : a;
            }
            return;
        }
        touched = 1;
        if (touches != nullptr) {
            ++*touches;
        }
        const sim_vec4f vi = sim_ld4(vel + i);
        const sim_vec4f vj = sim_ld4(vel + j0 + jl);
        float eij = 0.0f;
        sim_vec3f f;
        if constexpr (MODE == kFriction) {
            f = sim_fric_pair(sink.fric, ph, i, j0 + (uint32_t)jl, pi, vi, pj, vj, nullptr);
        } else {
            f = sim_contact_force_f(pi, vi, pj, vj, &ph, MODE == kEnergy ? &eij : nullptr);
        }
        if constexpr (MODE == kEnergy) {
            e += (double)eij;
        } else {
            fx += f.x;
            fy += f.y;
            fz += f.z;
            atomicAdd(&sh_fx[jl], -f.x);
            atomicAdd(&sh_fy[jl], -f.y);
            atomicAdd(&sh_fz[jl], -f.z);
        }
    });

    if constexpr (!kForces) {
        __syncthreads(); /* the next tile pair restages sh_pos */
        return;
    }
    /* The barrier also orders the shared accumulators; a block without contacts (most of
     * them once N is large) writes nothing. After it each thread touches only its own slot t
     * of the shared arrays until the next staging barrier. */
    if (!__syncthreads_or(touched)) {
        return;
    }
    const float gx = sh_fx[t], gy = sh_fy[t], gz = sh_fz[t];
    if (diag) {
        if (i < n) {
            sim_atomic_add3(sink.force + i, fx + gx, fy + gy, fz + gz);
        }
    } else {
        if (i < n) {
            sim_atomic_add3(sink.force + i, fx, fy, fz);
        }
        if (j0 + (uint32_t)t < n) {
            sim_atomic_add3(sink.force + j0 + t, gx, gy, gz);
        }
    }
}

/* Symmetric pair kernel placed by a map (the full sweep over every tile pair).
 *
 * Launch contract: one launch of a pair map plan (grid = launch.grid), or a piece of it (a
 * rank's share of a multi-GPU step, work_split.h: grid = the piece's, origin = its first block,
 * added to blockIdx: three IADDs per thread), TILE threads per block, TILE in {32, 64, 128}.
 * sim_pair_map_block gives the block's tile pair (I, J), I >= J, or
 * nothing (the whole block returns before any barrier); pair_block does the rest (cost there).
 * kEnergy: one double atomic per block with the block's contact potential. */
template <sim_pair_map MAP, int TILE, int MODE>
__global__ void __launch_bounds__(TILE)
    pair_sym_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                    uint32_t n, sim_map_launch launch, uint3 origin, sim_physics_f ph,
                    pair_sink sink) {
    sim_tile2 tile;
    if (!sim_pair_map_block(MAP, &launch, origin.x + blockIdx.x, origin.y + blockIdx.y,
                            origin.z + blockIdx.z, &tile)) {
        return;
    }
    __shared__ sim_vec4f sh_pos[TILE];
    __shared__ float sh_fx[TILE], sh_fy[TILE], sh_fz[TILE];
    double e = 0.0;
    pair_block<TILE, MODE>(tile, pos, vel, n, ph, sink, e, sh_pos, sh_fx, sh_fy, sh_fz, nullptr);
    if constexpr (MODE == kEnergy) {
        sim_block_sum_add<TILE>(e, sink.energy);
    }
}

/* Symmetric pair kernel over the culled list of interacting tile pairs.
 *
 * Launch contract: a persistent grid (sim_cuda_pair_list_grid: SMs x resident blocks) of TILE
 * threads; block b sweeps list items b, b + grid, ... as pair_block does. The list holds
 * counts->tiles pairs when that is <= cap; when it is more, the list is incomplete and the
 * blocks sweep every tile pair of rows [row0, row1) of the simplex (item k = row-order pair
 * T2(row0) + k; all rows alone, a rank's rows in a multi-GPU step): exact, slow, recorded as a
 * fallback step. The item count is uniform per block (barriers).
 * Cost per item: one pair_block (no block launch, no map). kEnergy sums the block's potential
 * over all its items, then one double atomic. RECORD: block 0 notes the count into the frame's
 * peak and the fallback, and after a sort the count the regrow test compares against; with
 * count_on it adds the pair tests (items x TILE^2), and each warp its touching pairs (a sum by
 * shuffles, one atomic into a counter slot), to the frame's. */
/* Resident blocks per SM the list sweep asks the register allocator for: a full SM (or as
 * many blocks as it holds: gpu/arch.cuh) at 32 registers per thread, what the map-placed kernel
 * needs anyway; tile 32 is capped by the block limit, so it keeps its registers. */
constexpr int list_min_blocks(int tile) {
    return tile < 64 ? 1 : sim_sm_fit(tile);
}

/* With friction the contact path needs more registers than 32 (a spill there costs a local
 * memory round trip per contact of a dense pile): half the resident blocks. */
constexpr int list_min_blocks(int tile, int mode) {
    return mode == kFriction && list_min_blocks(tile) > 1 ? list_min_blocks(tile) / 2
                                                          : list_min_blocks(tile);
}

template <int TILE, int MODE>
__global__ void __launch_bounds__(TILE, list_min_blocks(TILE, MODE))
    pair_list_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                     uint32_t n, uint32_t row0, uint32_t row1, const sim_tile2 *__restrict__ list,
                     uint32_t cap, sim_gpu_cull_counts *__restrict__ counts, unsigned flags,
                     sim_physics_f ph, pair_sink sink, int count_on,
                     const sim_cull_box *__restrict__ boxes) {
    const uint32_t found = counts->tiles;
    const bool overflow = found > cap;
    const uint32_t first = sim_map_t2(row0);
    const uint32_t items = overflow ? sim_map_t2(row1) - first : found;
    if ((flags & SIM_GPU_CULL_RECORD) && blockIdx.x == 0 && threadIdx.x == 0) {
        atomicMax(&counts->frame.tiles_peak, found);
        if (overflow || counts->super_overflow) {
            atomicAdd(&counts->frame.fallback_steps, 1u);
        }
        if (flags & SIM_GPU_CULL_SORTED) {
            counts->tiles_sorted = found;
        }
        if (count_on) {
            atomicAdd(&counts->frame.tests[0], (unsigned long long)items * TILE * TILE);
        }
    }
    __shared__ sim_vec4f sh_pos[TILE];
    __shared__ float sh_fx[TILE], sh_fy[TILE], sh_fz[TILE];
    double e = 0.0;
    uint32_t touches = 0;
    const bool counted = count_on && (flags & SIM_GPU_CULL_RECORD);
    for (uint32_t k = blockIdx.x; k < items; k += gridDim.x) {
        const sim_tile2 tile = overflow ? sim_cull_simplex_pair(first + k) : list[k];
        pair_block<TILE, MODE>(tile, pos, vel, n, ph, sink, e, sh_pos, sh_fx, sh_fy, sh_fz,
                               counted ? &touches : nullptr, boxes);
    }
    if constexpr (MODE == kEnergy) {
        sim_block_sum_add<TILE>(e, sink.energy);
    }
    if (counted) {
        const uint32_t sum = sim_warp_sum_u32(touches);
        const uint32_t slot =
            (blockIdx.x * (TILE / 32) + threadIdx.x / 32) % (uint32_t)SIM_GPU_COUNT_SLOTS;
        if ((threadIdx.x & 31u) == 0u && sum != 0u) {
            atomicAdd(&counts->frame.contacts[slot], (unsigned long long)sum);
        }
    }
}

/* Full (nbody-style) pair kernel: no symmetry, the baseline that shows what symmetry buys.
 *
 * Launch contract: grid ceil(N / TILE) x 1 x 1 (a rank of a multi-GPU step: its range of them,
 * from block0), TILE threads. Thread t owns body i = (block0 + blockIdx.x) * TILE + t and sweeps
 * all tiles J = 0 .. n-1 through shared memory (barrier, load, barrier), summing the force on i
 * only; every pair is evaluated twice, never written by another thread, so force[i] is stored
 * without atomics. Bounds: as pair_sym_kernel, plus j != i on the slow path (a body touches itself
 * by the distance test).
 *
 * Cost per ordered pair: ~10.5 instructions when not touching, as pair_sym_kernel; 16 B per
 * body per block read from L2 per tile sweep. */
template <int TILE, bool FRICTION>
__global__ void __launch_bounds__(TILE)
    pair_full_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                     sim_vec4f *__restrict__ force, uint32_t n, uint32_t block0, sim_physics_f ph,
                     sim_gpu_fric fric) {
    __shared__ sim_vec4f sh_pos[TILE];
    const int t = (int)threadIdx.x;
    const uint32_t i = (block0 + blockIdx.x) * TILE + (uint32_t)t;
    const sim_vec4f pi = i < n ? sim_ld4(pos + i) : sim_pad_body();
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    float tx = 0.0f, ty = 0.0f, tz = 0.0f; /* FRICTION: body i's torque */
    const uint32_t ui = FRICTION && fric.perm != nullptr && i < n ? fric.perm[i] : i;
    for (uint32_t j0 = 0; j0 < n; j0 += TILE) {
        __syncthreads(); /* everybody is done with the previous tile */
        sh_pos[t] = j0 + (uint32_t)t < n ? sim_ld4(pos + j0 + t) : sim_pad_body();
        __syncthreads();
        const sim_vec3f none = {0.0f, 0.0f, 0.0f};
        sweep_tile<TILE>(pi, sh_pos, ph, ph.box.periodic ? kPerPair : kWalls, none,
                         [&](int jl, const sim_vec4f &pj) {
            if (j0 + (uint32_t)jl == i) {
                return;
            }
            if constexpr (FRICTION) {
                /* Both ends evaluate the pair in the owner's roles (the same bits), only the
                 * owner stores its history: each thread keeps its own force and torque, no
                 * atomics, as the frictionless full sweep. */
                const uint32_t j = j0 + (uint32_t)jl;
                const uint32_t uj = fric.perm != nullptr ? fric.perm[j] : j;
                sim_vec3f f, ta, tb;
                if (sim_fric_contact(fric, ph, ui, uj, i, j, pi, sim_ld4(vel + i), pj,
                                     sim_ld4(vel + j), ui > uj, &f, &ta, &tb, nullptr)) {
                    fx += f.x;
                    fy += f.y;
                    fz += f.z;
                    tx += ta.x;
                    ty += ta.y;
                    tz += ta.z;
                }
                return;
            }
            const sim_vec3f f =
                sim_contact_force_f(pi, sim_ld4(vel + i), pj, sim_ld4(vel + j0 + jl), &ph, nullptr);
            fx += f.x;
            fy += f.y;
            fz += f.z;
        });
    }
    if (i < n) {
        sim_vec4f f;
        f.x = fx;
        f.y = fy;
        f.z = fz;
        f.w = 0.0f;
        force[i] = f;
        if constexpr (FRICTION) {
            sim_vec4f t;
            t.x = tx;
            t.y = ty;
            t.z = tz;
            t.w = 0.0f;
            fric.torque[i] = t; /* slot order (friction.h) */
        }
    }
}

template <int TILE, int MODE>
sim_status launch_sym(const sim_gpu_bodies *b, const sim_physics_f *ph, const sim_map_plan *plan,
                      const sim_map_share *share, const pair_sink &sink, const sim_gpu_streams *st,
                      sim_error *err) {
    const sim_pair_map map = (sim_pair_map)plan->map;
    auto one = [&](const sim_map_launch *l, dim3 grid, uint3 origin, cudaStream_t s,
                   sim_error *err) -> sim_status {
        switch (map) {
#define SIM_PAIR_CASE(id, name, label, paper)                                                      \
    case SIM_PAIR_MAP_##id:                                                                        \
        pair_sym_kernel<SIM_PAIR_MAP_##id, TILE, MODE>                                             \
            <<<grid, TILE, 0, s>>>(b->pos, b->vel, b->n, *l, origin, *ph, sink);                   \
        break;
            SIM_PAIR_MAP_LIST(SIM_PAIR_CASE)
#undef SIM_PAIR_CASE
        default:
            return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", (int)map);
        }
        SIM_CUDA_CHECK_LAUNCH("pair_sym_kernel");
        return SIM_OK;
    };
    sim_map_share all;
    if (share == nullptr) {
        sim_work_share(plan, 0, 1, &all);
        share = &all;
    }
    return sim_gpu_run_share(plan, share, st, one, err);
}

template <int TILE>
sim_status launch_full(const sim_gpu_bodies *b, const sim_physics_f *ph, uint64_t begin,
                       uint64_t end, const sim_gpu_fric *fric, cudaStream_t s, sim_error *err) {
    if (end <= begin) {
        return SIM_OK;
    }
    const unsigned grid = (unsigned)(end - begin);
    if (fric != nullptr) {
        pair_full_kernel<TILE, true>
            <<<grid, TILE, 0, s>>>(b->pos, b->vel, b->force, b->n, (uint32_t)begin, *ph, *fric);
    } else {
        pair_full_kernel<TILE, false><<<grid, TILE, 0, s>>>(b->pos, b->vel, b->force, b->n,
                                                            (uint32_t)begin, *ph, sim_gpu_fric{});
    }
    SIM_CUDA_CHECK_LAUNCH("pair_full_kernel");
    return SIM_OK;
}

template <int TILE, int MODE>
sim_status launch_list(const sim_gpu_bodies *b, const sim_physics_f *ph, const sim_gpu_cull *c,
                       unsigned flags, const pair_sink &sink, cudaStream_t s, sim_error *err,
                       int count_on = 0) {
    pair_list_kernel<TILE, MODE>
        <<<c->list_grid, TILE, 0, s>>>(b->pos, b->vel, b->n, c->row0, c->row1, c->tile_list,
                                       c->tile_cap, c->counts, flags, *ph, sink, count_on,
                                       c->boxes);
    SIM_CUDA_CHECK_LAUNCH("pair_list_kernel");
    return SIM_OK;
}

template <int TILE> sim_status list_grid(int sm_count, int *grid, sim_error *err) {
    int per_sm = 0;
    SIM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, pair_list_kernel<TILE, kForce>, TILE, 0));
    *grid = (per_sm > 0 ? per_sm : 1) * (sm_count > 0 ? sm_count : 1);
    return SIM_OK;
}


} // namespace

#endif
