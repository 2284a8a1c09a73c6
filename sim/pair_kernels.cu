/* SPDX-License-Identifier: MIT
 * nbsim — contact forces over all unordered pairs: the symmetric tiled kernel placed by a pair
 * thread map, the nbody-style full sweep (baseline), and their host drivers. */
#include "pair_kernels.h"

#include "device_util.cuh"

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
    const float rs = pi.w + pj.w;
    return dx * dx + dy * dy + dz * dz < rs * rs;
}

/* Sweeps this thread's body pi over the TILE bodies in shared memory (all lanes read the same
 * j: a broadcast LDS.128, no bank conflicts) and calls contact(jl, pj) for each touching pair.
 * Must be called by whole warps (the vote). Fast path per pair: LDS.128 + the 9 instructions
 * of touching() + 1/kGroup of vote/branch + loop overhead, i.e. about 10.5 instructions and
 * 0 bytes of global memory traffic (the tile costs 16 B per body per block). */
template <int TILE, typename Contact>
static __device__ __forceinline__ void sweep_tile(const sim_vec4f &pi, const sim_vec4f *sh_pos,
                                                  Contact &&contact) {
#pragma unroll 2
    for (int jb = 0; jb < TILE; jb += kGroup) {
        bool any = false;
#pragma unroll
        for (int u = 0; u < kGroup; ++u) {
            any |= touching(pi, sh_pos[jb + u]);
        }
        if (__any_sync(SIM_FULL_MASK, any)) {
#pragma unroll
            for (int u = 0; u < kGroup; ++u) {
                const sim_vec4f pj = sh_pos[jb + u];
                if (touching(pi, pj)) {
                    contact(jb + u, pj);
                }
            }
        }
    }
}

/* Symmetric pair kernel: each unordered pair once, Newton's third law inside the block.
 *
 * Launch contract: one launch of a pair map plan (grid = launch.grid), TILE threads per block,
 * TILE in {32, 64, 128}. sim_pair_map_block gives the block's tile pair (I, J), I >= J, or
 * nothing (the whole block returns before any barrier). Thread t owns body i = I*TILE + t (its
 * position and force in registers); the block stages tile J's positions in shared memory.
 * Off the diagonal every i meets every j of tile J; on it (I == J) only j < i. Bounds: bodies
 * past N in a partial last tile are padded far away with radius 0 (touch nothing), and every
 * global access is guarded by < n.
 *
 * j-forces: a touching pair adds -f to the block's shared accumulator of j with shared-memory
 * atomics (only on the rare slow path); at the end the block (if any thread saw a contact)
 * adds each nonzero body force to global memory with one atomic per body (16-byte vector
 * atomic on sm_90). Never a global atomic per interaction.
 *
 * Cost per pair: ~10.5 instructions when not touching (see sweep_tile); a contact adds ~60
 * (sim_contact_force_f: 1 sqrt, 1 div) + 2 x 16 B velocity loads (L1) + 3 shared atomics.
 * Bytes per block from L2: 2 * 16 * TILE (positions of tiles I and J). ENERGY: instead of
 * forces, sums the contact potential of the block's pairs into *energy (one double atomic). */
template <sim_pair_map MAP, int TILE, bool ENERGY>
__global__ void __launch_bounds__(TILE)
    pair_sym_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                    sim_vec4f *__restrict__ force, double *__restrict__ energy, uint32_t n,
                    sim_map_launch launch, sim_physics_f ph) {
    sim_tile2 tile;
    if (!sim_pair_map_block(MAP, &launch, blockIdx.x, blockIdx.y, blockIdx.z, &tile)) {
        return;
    }
    __shared__ sim_vec4f sh_pos[TILE];
    __shared__ float sh_fx[TILE], sh_fy[TILE], sh_fz[TILE];

    const int t = (int)threadIdx.x;
    const uint32_t i = tile.i * TILE + (uint32_t)t;
    const uint32_t j0 = tile.j * TILE;
    const sim_vec4f pi = i < n ? sim_ld4(pos + i) : sim_pad_body();
    sh_pos[t] = j0 + (uint32_t)t < n ? sim_ld4(pos + j0 + t) : sim_pad_body();
    sh_fx[t] = 0.0f;
    sh_fy[t] = 0.0f;
    sh_fz[t] = 0.0f;
    __syncthreads();

    const bool diag = tile.i == tile.j;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    double e = 0.0;
    int touched = 0;
    sweep_tile<TILE>(pi, sh_pos, [&](int jl, const sim_vec4f &pj) {
        if (diag && jl >= t) {
            return; /* the diagonal tile: each unordered pair once, from its larger index */
        }
        touched = 1;
        const sim_vec4f vi = sim_ld4(vel + i);
        const sim_vec4f vj = sim_ld4(vel + j0 + jl);
        float eij = 0.0f;
        const sim_vec3f f = sim_contact_force_f(pi, vi, pj, vj, &ph, ENERGY ? &eij : nullptr);
        if constexpr (ENERGY) {
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

    if constexpr (ENERGY) {
        sim_block_sum_add<TILE>(e, energy);
        return;
    }
    /* The barrier also orders the shared accumulators; a block without contacts (most of
     * them once N is large) writes nothing. */
    if (!__syncthreads_or(touched)) {
        return;
    }
    float gx = sh_fx[t], gy = sh_fy[t], gz = sh_fz[t];
    if (diag) {
        if (i < n) {
            sim_atomic_add3(force + i, fx + gx, fy + gy, fz + gz);
        }
    } else {
        if (i < n) {
            sim_atomic_add3(force + i, fx, fy, fz);
        }
        if (j0 + (uint32_t)t < n) {
            sim_atomic_add3(force + j0 + t, gx, gy, gz);
        }
    }
}

/* Full (nbody-style) pair kernel: no symmetry, the baseline that shows what symmetry buys.
 *
 * Launch contract: grid ceil(N / TILE) x 1 x 1, TILE threads. Thread t owns body
 * i = blockIdx.x * TILE + t and sweeps all tiles J = 0 .. n-1 through shared memory (barrier,
 * load, barrier), summing the force on i only; every pair is evaluated twice, never written
 * by another thread, so force[i] is stored without atomics. Bounds: as pair_sym_kernel, plus
 * j != i on the slow path (a body touches itself by the distance test).
 *
 * Cost per ordered pair: ~10.5 instructions when not touching, as pair_sym_kernel; 16 B per
 * body per block read from L2 per tile sweep. */
template <int TILE>
__global__ void __launch_bounds__(TILE)
    pair_full_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                     sim_vec4f *__restrict__ force, uint32_t n, sim_physics_f ph) {
    __shared__ sim_vec4f sh_pos[TILE];
    const int t = (int)threadIdx.x;
    const uint32_t i = blockIdx.x * TILE + (uint32_t)t;
    const sim_vec4f pi = i < n ? sim_ld4(pos + i) : sim_pad_body();
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (uint32_t j0 = 0; j0 < n; j0 += TILE) {
        __syncthreads(); /* everybody is done with the previous tile */
        sh_pos[t] = j0 + (uint32_t)t < n ? sim_ld4(pos + j0 + t) : sim_pad_body();
        __syncthreads();
        sweep_tile<TILE>(pi, sh_pos, [&](int jl, const sim_vec4f &pj) {
            if (j0 + (uint32_t)jl == i) {
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
    }
}

template <int TILE>
sim_status launch_sym(const sim_gpu_bodies *b, const sim_physics_f *ph, const sim_map_plan *plan,
                      const sim_gpu_streams *st, sim_error *err) {
    const sim_pair_map map = (sim_pair_map)plan->map;
    auto one = [&](const sim_map_launch *l, cudaStream_t s, sim_error *err) -> sim_status {
        const dim3 grid(l->grid[0], l->grid[1], l->grid[2]);
        switch (map) {
#define SIM_PAIR_CASE(id, name, label, paper)                                                      \
    case SIM_PAIR_MAP_##id:                                                                        \
        pair_sym_kernel<SIM_PAIR_MAP_##id, TILE, false>                                            \
            <<<grid, TILE, 0, s>>>(b->pos, b->vel, b->force, nullptr, b->n, *l, *ph);              \
        break;
            SIM_PAIR_MAP_LIST(SIM_PAIR_CASE)
#undef SIM_PAIR_CASE
        default:
            return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", (int)map);
        }
        SIM_CUDA_CHECK_LAUNCH("pair_sym_kernel");
        return SIM_OK;
    };
    return sim_gpu_run_plan(plan, st, one, err);
}

template <int TILE>
sim_status launch_full(const sim_gpu_bodies *b, const sim_physics_f *ph, cudaStream_t s,
                       sim_error *err) {
    const uint32_t blocks = (b->n + TILE - 1) / TILE;
    pair_full_kernel<TILE><<<blocks, TILE, 0, s>>>(b->pos, b->vel, b->force, b->n, *ph);
    SIM_CUDA_CHECK_LAUNCH("pair_full_kernel");
    return SIM_OK;
}

constexpr int kEnergyTile = 128;

} // namespace

sim_status sim_gpu_pair_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                               const sim_map_plan *plan, uint32_t tile, const sim_gpu_streams *st,
                               sim_error *err) {
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return launch_sym<t>(b, ph, plan, st, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_fail(err, SIM_BAD_ARGUMENT, "tile size %u must be " SIM_PAIR_TILE_NAMES, tile);
    }
}

sim_status sim_gpu_pair_forces_full(const sim_gpu_bodies *b, const sim_physics_f *ph, uint32_t tile,
                                    cudaStream_t stream, sim_error *err) {
    switch (tile) {
#define SIM_TILE_CASE(t)                                                                           \
    case t:                                                                                        \
        return launch_full<t>(b, ph, stream, err);
        SIM_PAIR_TILE_LIST(SIM_TILE_CASE)
#undef SIM_TILE_CASE
    default:
        return sim_fail(err, SIM_BAD_ARGUMENT, "tile size %u must be " SIM_PAIR_TILE_NAMES, tile);
    }
}

sim_status sim_gpu_pair_energy(const sim_gpu_bodies *b, const sim_physics_f *ph, double *d_energy,
                               cudaStream_t stream, sim_error *err) {
    /* One launch of the bounding box: the simplest plan, valid for every N a map supports. */
    sim_map_plan plan;
    const uint32_t n_tiles = (b->n + kEnergyTile - 1) / kEnergyTile;
    SIM_TRY(sim_pair_map_plan(SIM_PAIR_MAP_BB, n_tiles, &plan, err));
    for (int l = 0; l < plan.launch_count; ++l) {
        const sim_map_launch *launch = &plan.launch[l];
        const dim3 grid(launch->grid[0], launch->grid[1], launch->grid[2]);
        pair_sym_kernel<SIM_PAIR_MAP_BB, kEnergyTile, true><<<grid, kEnergyTile, 0, stream>>>(
            b->pos, b->vel, nullptr, d_energy, b->n, *launch, *ph);
        SIM_CUDA_CHECK_LAUNCH("pair_sym_kernel<energy>");
    }
    return SIM_OK;
}
