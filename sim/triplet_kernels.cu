/* SPDX-License-Identifier: MIT
 * nbsim — Axilrod–Teller–Muto forces over all unordered triples: the tiled kernel placed by a
 * triplet thread map, and its host drivers. */
#include "triplet_kernels.h"

#include "device_util.cuh"

namespace {

constexpr int kT = (int)SIM_TRIPLET_TILE; /* bodies per tile = lanes per warp */
constexpr int kWarps = 4;                 /* warps per block share out the j of tile J */
constexpr int kThreads = kT * kWarps;
static_assert(kT == 32, "the k rotation runs over the 32 lanes of a warp");

static __device__ __forceinline__ float dist2(const sim_vec4f &a, const sim_vec4f &b) {
    const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return dx * dx + dy * dy + dz * dz;
}

/* Sum over the warp, result in every lane (butterfly). */
static __device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(SIM_FULL_MASK, v, o);
    }
    return v;
}

/* Triplet kernel: each unordered triple once, its three forces reduced inside the block.
 *
 * Launch contract: one launch of a triplet map plan (grid = launch.grid), 128 threads = 4
 * warps. sim_triplet_map_block gives the tile triple (I, J, K), I >= J >= K, or nothing (the
 * block returns before any barrier). Shared memory holds the three tiles' positions. Lane l
 * owns body i = I*32 + l; warp w takes j = w, w+4, ... of tile J; for each j the warp makes 32
 * steps s in which lane l takes k = (l + s) mod 32, so one warp covers all 32 x 32 (i, k) for
 * its j with every lane busy. Where tiles coincide only strictly ordered bodies count (i > j
 * when I == J, j > k when J == K); bounds: bodies past N are masked (never padded: ATM of
 * coincident padding would be 0/0).
 *
 * Forces: on i in registers (per lane); on j in registers per lane, summed over the warp after
 * its 32 steps (j belongs to one warp) into shared memory; on k in a register that rotates with
 * k: after each step every lane passes its k accumulator to lane l - 1, the lane that takes
 * that k next, so after 32 steps lane l holds k = l again and the accumulator stays in
 * registers across all j. At the end the block sums the 4 warps' i and k partials in shared
 * memory and issues one atomic per body (tiles that coincide are merged first).
 *
 * Cost per triple: sim_atm_forces_f (~60-80 instructions: 3 distances, one reciprocal square
 * root chain, the gradient) + 9 FADD accumulation + 3 SHFL rotation + 1 LDS.128 + masking;
 * no global traffic (3 * 512 B of positions per block of 32768 triples). With a cut-off the
 * distances are tested first and out-of-range triples skip the ATM evaluation. ENERGY: sums the
 * ATM energy of the block's triples into *energy (one double atomic) instead of forces. */
template <sim_triplet_map MAP, bool ENERGY>
__global__ void __launch_bounds__(kThreads)
    triplet_kernel(const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ force,
                   double *__restrict__ energy, uint32_t n, sim_map_launch launch,
                   sim_physics_f ph) {
    sim_tile3 tile;
    if (!sim_triplet_map_block(MAP, &launch, blockIdx.x, blockIdx.y, blockIdx.z, &tile)) {
        return;
    }
    __shared__ sim_vec4f sh_pos[3][kT];
    __shared__ float sh_fi[3][kWarps][kT];
    __shared__ float sh_fk[3][kWarps][kT];
    __shared__ float sh_fj[3][kT];

    const int t = (int)threadIdx.x;
    const int lane = t & (kT - 1);
    const int w = t / kT;
    const uint32_t i0 = tile.i * kT, j0 = tile.j * kT, k0 = tile.k * kT;
    if (w < 3) {
        const uint32_t base = w == 0 ? i0 : (w == 1 ? j0 : k0);
        sh_pos[w][lane] = base + lane < n ? sim_ld4(pos + base + lane) : sim_pad_body();
    } else {
        sh_fj[0][lane] = 0.0f;
        sh_fj[1][lane] = 0.0f;
        sh_fj[2][lane] = 0.0f;
    }
    __syncthreads();

    /* Valid bodies in each tile (only the last tile is partial). */
    const int ni = (int)min((uint32_t)kT, n - i0);
    const int nj = (int)min((uint32_t)kT, n - j0);
    const int nk = (int)min((uint32_t)kT, n - k0);
    const bool same_ij = tile.i == tile.j, same_jk = tile.j == tile.k;
    const float c2 = ph.atm_cutoff2;
    const sim_vec4f pi = sh_pos[0][lane];
    float f1x = 0.0f, f1y = 0.0f, f1z = 0.0f; /* on i = lane */
    float fkx = 0.0f, fky = 0.0f, fkz = 0.0f; /* on k = (lane + s) mod 32, rotating */
    double e = 0.0;

    for (int jl = w; jl < nj; jl += kWarps) { /* warp-uniform */
        const sim_vec4f pj = sh_pos[1][jl];
        bool ij_ok = lane < ni && (!same_ij || lane > jl);
        if (c2 > 0.0f) {
            ij_ok = ij_ok && dist2(pi, pj) <= c2;
        }
        float f2x = 0.0f, f2y = 0.0f, f2z = 0.0f;
#pragma unroll 4
        for (int s = 0; s < kT; ++s) {
            const int kl = (lane + s) & (kT - 1);
            const sim_vec4f pk = sh_pos[2][kl];
            bool ok = ij_ok && kl < nk && (!same_jk || jl > kl);
            if (c2 > 0.0f) {
                ok = ok && dist2(pi, pk) <= c2 && dist2(pj, pk) <= c2;
            }
            if (ok) {
                sim_vec3f a, b, c;
                float eijk = 0.0f;
                sim_atm_forces_f(pi, pj, pk, &ph, &a, &b, &c, ENERGY ? &eijk : nullptr);
                if constexpr (ENERGY) {
                    e += (double)eijk;
                } else {
                    f1x += a.x;
                    f1y += a.y;
                    f1z += a.z;
                    f2x += b.x;
                    f2y += b.y;
                    f2z += b.z;
                    fkx += c.x;
                    fky += c.y;
                    fkz += c.z;
                }
            }
            if constexpr (!ENERGY) {
                const int from = (lane + 1) & (kT - 1);
                fkx = __shfl_sync(SIM_FULL_MASK, fkx, from);
                fky = __shfl_sync(SIM_FULL_MASK, fky, from);
                fkz = __shfl_sync(SIM_FULL_MASK, fkz, from);
            }
        }
        if constexpr (!ENERGY) {
            f2x = warp_sum(f2x);
            f2y = warp_sum(f2y);
            f2z = warp_sum(f2z);
            if (lane == 0) { /* jl belongs to this warp alone: a plain store */
                sh_fj[0][jl] = f2x;
                sh_fj[1][jl] = f2y;
                sh_fj[2][jl] = f2z;
            }
        }
    }

    if constexpr (ENERGY) {
        sim_block_sum_add<kThreads>(e, energy);
        return;
    }
    sh_fi[0][w][lane] = f1x;
    sh_fi[1][w][lane] = f1y;
    sh_fi[2][w][lane] = f1z;
    sh_fk[0][w][lane] = fkx;
    sh_fk[1][w][lane] = fky;
    sh_fk[2][w][lane] = fkz;
    __syncthreads();
    if (t >= kT) {
        return;
    }
    float fi[3], fj[3], fk[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        fi[c] = 0.0f;
        fk[c] = 0.0f;
#pragma unroll
        for (int ww = 0; ww < kWarps; ++ww) {
            fi[c] += sh_fi[c][ww][t];
            fk[c] += sh_fk[c][ww][t];
        }
        fj[c] = sh_fj[c][t];
    }
    /* Coinciding tiles hold the same bodies: merge so each body gets one atomic per block. */
    if (same_ij && same_jk) {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, fi[0] + fj[0] + fk[0], fi[1] + fj[1] + fk[1],
                            fi[2] + fj[2] + fk[2]);
        }
    } else if (same_ij) {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, fi[0] + fj[0], fi[1] + fj[1], fi[2] + fj[2]);
        }
        if (t < nk) {
            sim_atomic_add3(force + k0 + t, fk[0], fk[1], fk[2]);
        }
    } else if (same_jk) {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, fi[0], fi[1], fi[2]);
        }
        if (t < nj) {
            sim_atomic_add3(force + j0 + t, fj[0] + fk[0], fj[1] + fk[1], fj[2] + fk[2]);
        }
    } else {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, fi[0], fi[1], fi[2]);
        }
        if (t < nj) {
            sim_atomic_add3(force + j0 + t, fj[0], fj[1], fj[2]);
        }
        if (t < nk) {
            sim_atomic_add3(force + k0 + t, fk[0], fk[1], fk[2]);
        }
    }
}

} // namespace

sim_status sim_gpu_triplet_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_map_plan *plan, const sim_gpu_streams *st,
                                  sim_error *err) {
    const sim_triplet_map map = (sim_triplet_map)plan->map;
    auto one = [&](const sim_map_launch *l, cudaStream_t s, sim_error *err) -> sim_status {
        const dim3 grid(l->grid[0], l->grid[1], l->grid[2]);
        switch (map) {
#define SIM_TRIPLET_CASE(id, name, label, paper)                                                   \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        triplet_kernel<SIM_TRIPLET_MAP_##id, false>                                                \
            <<<grid, kThreads, 0, s>>>(b->pos, b->force, nullptr, b->n, *l, *ph);                  \
        break;
            SIM_TRIPLET_MAP_LIST(SIM_TRIPLET_CASE)
#undef SIM_TRIPLET_CASE
        default:
            return sim_fail(err, SIM_BAD_ARGUMENT, "unknown triplet map %d", (int)map);
        }
        SIM_CUDA_CHECK_LAUNCH("triplet_kernel");
        return SIM_OK;
    };
    return sim_gpu_run_plan(plan, st, one, err);
}

sim_status sim_gpu_triplet_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  double *d_energy, cudaStream_t stream, sim_error *err) {
    sim_map_plan plan;
    const uint32_t n_tiles = (b->n + SIM_TRIPLET_TILE - 1) / SIM_TRIPLET_TILE;
    SIM_TRY(sim_triplet_map_plan(SIM_TRIPLET_MAP_BB, n_tiles, &plan, err));
    for (int l = 0; l < plan.launch_count; ++l) {
        const sim_map_launch *launch = &plan.launch[l];
        const dim3 grid(launch->grid[0], launch->grid[1], launch->grid[2]);
        triplet_kernel<SIM_TRIPLET_MAP_BB, true>
            <<<grid, kThreads, 0, stream>>>(b->pos, nullptr, d_energy, b->n, *launch, *ph);
        SIM_CUDA_CHECK_LAUNCH("triplet_kernel<energy>");
    }
    return SIM_OK;
}
