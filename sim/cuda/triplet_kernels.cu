/* SPDX-License-Identifier: MIT
 * nbsim — Axilrod–Teller–Muto forces over all unordered triples: a block's work on one tile
 * triple (triplet_block), the kernel over the tile triples of a source (a triplet thread map, or
 * a list in device memory), the persistent kernel over the ATM cut-off's culled list
 * (triplet_culled_kernel, triplet_cull.h), and their host drivers.
 * tests/test_triplet_kernel_emu.cc and tests/test_tcull_emu.cc compile the kernels alone on the
 * CPU (SIM_TRIPLET_KERNEL_ONLY: no drivers) and run them under tests/cuda_emulation.h. */
#include "cuda/triplet_kernels.h"

#include "cull/cull_device.cuh"
#include "cull/cull_kernels.h"
#include "gpu/arch.cuh"

namespace {

constexpr int kT = (int)SIM_TRIPLET_TILE; /* bodies per tile = lanes per warp */
constexpr int kWarps = 4;                 /* warps per block share out the j of tile J */
constexpr int kThreads = kT * kWarps;
constexpr int kJ = kT / kWarps;    /* j per warp, held in registers */
constexpr int kFjValues = 3 * kJ;  /* force components on a warp's j, summed over its lanes */
constexpr int kWantBlocksPerSM = 5; /* shared memory allows 5 (38.4 KB each): registers <= 102 */
constexpr int kMinBlocksPerSM = sim_min_blocks(kThreads, kWantBlocksPerSM);
static_assert(kT == 32, "the k rotation runs over the 32 lanes of a warp");
static_assert(kFjValues % 4 == 0, "the F_j scratch is written as float4");

/* ---- Where a block's tile triple comes from (the kernel's TILES parameter) ----
 * get() gets the block coordinates and returns false when the block has no tile triple. */

/* A triplet thread map: the launch's block coordinates through sim_triplet_map_block; origin is
 * the first block of the piece launched (a rank's share, work_split.h; 0 for a whole launch). */
template <sim_triplet_map MAP> struct map_tiles {
    sim_map_launch launch;
    uint3 origin;
    __device__ __forceinline__ bool get(uint32_t bx, uint32_t by, uint32_t bz, sim_tile3 *t) const {
        return sim_triplet_map_block(MAP, &launch, origin.x + bx, origin.y + by, origin.z + bz,
                                     t) != 0;
    }
};

/* A list of tile triples in device memory (a culled list): block bx takes entry bx. Entries
 * that are not ordered tiles of the domain (I >= J >= K, I < tiles) are skipped. */
struct list_tiles {
    const sim_tile3 *list;
    uint32_t count;
    uint32_t tiles;
    __device__ __forceinline__ bool get(uint32_t bx, uint32_t by, uint32_t bz, sim_tile3 *t) const {
        if (bx >= count || by != 0u || bz != 0u) {
            return false;
        }
        *t = list[bx];
        return t->i < tiles && t->j <= t->i && t->k <= t->j;
    }
};

/* Shared memory of one block, 38.4 KB. The union's members are used one after the other,
 * separated by barriers (see the kernel's phases). */
struct triplet_shared {
    sim_vec4f pos[3][kT]; /* tiles I, J, K; bodies past N padded at NaN (SIM_PAD_COORD) */
    float4 jk[kT][kT];    /* (b, h) of pair (j, k) at [j][k], b = x_k - x_j; 0 when dropped */
    float jk_b2[kT][kT];  /* B = |b|^2 of the same pair; 0 when dropped */
    union {
        float wik[kWarps][kT][kT]; /* warp w's sum over its j of W3 y_C, pair (i, k = i + s)
                                      at [w][s][i] */
        struct {
            float kik[kT][kT];                 /* K_C of pair (i, k) as in wik (over wik[0]) */
            float red[kWarps][kFjValues * kT]; /* each warp's scratch: F_j sums, then its forces */
        } fin;
    } u;
    int any[2]; /* some pair (i, j), (j, k) counts */
};
static_assert(sizeof(((triplet_shared *)nullptr)->u.fin) <=
                  sizeof(((triplet_shared *)nullptr)->u.wik),
              "the F_j scratch fits beside kik");
static_assert(kFjValues * kT >= 6 * kT + kFjValues, "a warp's forces fit in its scratch");

/* Brings lane (lane + by) mod 32's value to this lane, for each of the kJ accumulators. */
static __device__ __forceinline__ void rotate(float (&acc)[kJ], int lane, int by) {
    const int from = (lane + by) & (kT - 1);
#pragma unroll
    for (int jj = 0; jj < kJ; ++jj) {
        acc[jj] = __shfl_sync(SIM_FULL_MASK, acc[jj], from);
    }
}

static __device__ __forceinline__ float dot3(const sim_vec3f &u, const sim_vec3f &v) {
    return u.x * v.x + u.y * v.y + u.z * v.z;
}

/* A periodic box as the triplet kernels take it (physics.h): each pair's difference vector is
 * its minimum image under per (periodic 0: walls only, per unused); check 1 where the cut-off
 * exceeds a third of a period, so that three sides within it can wrap around the box: a triple
 * whose pair images do not close (sim_atm_images_agree_f) is dropped, as LAMMPS's ghost atoms
 * never form it. Cost: 9 instructions per pair (the images); with check, 9 per triple. */
struct atm_box {
    sim_period_f per;
    int periodic, check;
};

/* The work of one block on one tile triple: each unordered triple once; pair terms once per
 * pair; the forces of the block's triples reduced inside the block, one atomic per body. All 128
 * threads (4 warps) call it with the same tile triple (I, J, K), I >= J >= K < ceil(n / 32), and
 * the block's shared memory; it uses that memory between its own barriers and returns at
 * block-uniform points (or, in phase (5), warps 1-3 before warp 0), so a caller that loops over
 * tile triples puts a barrier before each next one. Lane l owns i = I*32 + l;
 * warp w owns j = J*32 + 8w + jj, jj = 0..7; in step s = 0..31 lane l takes k = (l + s) mod 32
 * of tile K, so a warp covers all 32 x 8 x 32 (i, j, k) of its j with every lane busy. Bodies
 * past N are padded at NaN and every pair with one is dropped; where tiles coincide only
 * strictly ordered bodies count (i > j when I == J, j > k when J == K): all masks are pair
 * masks (sim_atm_pair's `valid`), so there is no per-triple test.
 *
 * Phases: (1) positions of the three tiles into shared memory. (2) Pairs (difference vector, A,
 * h; sim_atm_pair) once per body pair: (i, j) in registers (8 per lane), (j, k) in a shared
 * table; a block with no (i, j) or no (j, k) that counts returns here. (3) The triple loop: per
 * step s the lane's (i, k) pair, then per triple one 16-byte and one 4-byte table load of
 * (j, k), three dot products and sim_atm_triple, and three sums of W3 y, one per pair: over k
 * for (i, j) in a register; over i for (j, k) in a register that rotates with k (after each step
 * every lane passes its 8 accumulators to lane l - 1, the lane that takes that k next; after 32
 * steps lane l holds k = l); over this warp's j for (i, k), stored per warp after each step.
 * (4) Pair coefficients K = (sum of W3 y) / A and pair forces (physics_impl.h): (i, k) summed
 * over the warps first, then each warp's (i, j) and (j, k); F_j summed over the lanes in shared
 * memory. (5) One atomic per body (coinciding tiles merged first).
 *
 * Cost per triple: 27 FP32 instructions (FFMA/FMUL/FADD: 3 dot products, sim_atm_triple, 3
 * sums), 2 LDS, 1 SHFL; per step of 8 triples ~33 more (the (i, k) pair, its store, addresses,
 * the loop). Counted in the SASS of the sm_90 build (cuobjdump --dump-sass, the loop of
 * triplet_kernel<map_tiles<rm>, false, false>, unrolled twice): 545 instructions per 16
 * triples = 34.1 per triple; with the map, the pair terms and the reductions ~39 per triple
 * (SIM_TRIPLET_KERNEL_INSTR; bench/README.md has the table). No global traffic beyond 3 x 512 B
 * of positions and up to 96 atomics per tile triple of 32768 triples.
 *
 * CUT (cut-off on): a warp skips the steps whose (i, k) pairs are all dropped and the j whose
 * (i, j) are (the k accumulators then rotate by the steps skipped at once). ENERGY: adds the ATM
 * energy of the block's triples to this thread's e (the caller sums e over the block) instead of
 * forces. */
template <bool ENERGY, bool CUT>
static __device__ __forceinline__ void
triplet_block(const sim_tile3 &tile, triplet_shared &sh, const sim_vec4f *__restrict__ pos,
              sim_vec4f *__restrict__ force, double &e, uint32_t n, float nu3, float a2_max,
              const atm_box &box) {
    const sim_period_f per = box.per;
    const sim_period_f *pp = box.periodic ? &per : nullptr;
    /* (1) Positions. */
    const int t = (int)threadIdx.x;
    const int lane = t & (kT - 1);
    const int w = t / kT;
    const uint32_t i0 = tile.i * kT, j0 = tile.j * kT, k0 = tile.k * kT;
    if (w < 3) {
        const uint32_t base = w == 0 ? i0 : (w == 1 ? j0 : k0);
        sh.pos[w][lane] = base + lane < n ? sim_ld4(pos + base + lane) : sim_pad_body();
    } else if (lane < 2) {
        sh.any[lane] = 0;
    }
    __syncthreads();

    /* (2) Pairs: (i, j) of this warp's j in registers, the (j, k) table. */
    const bool same_ij = tile.i == tile.j, same_jk = tile.j == tile.k;
    const sim_vec4f pi = sh.pos[0][lane];
    sim_vec3f a_ij[kJ]; /* a = x_j - x_i */
    float a2_ij[kJ], h_ij[kJ];
    float any_ij = 0.0f, any_jk = 0.0f; /* sums of |h| (finite): nonzero when a pair counts */
#pragma unroll
    for (int jj = 0; jj < kJ; ++jj) {
        const int jl = kJ * w + jj;
        sim_atm_pair_f(pi, sh.pos[1][jl], !same_ij || lane > jl, nu3, a2_max, pp, &a_ij[jj],
                       &a2_ij[jj], &h_ij[jj]);
        any_ij += fabsf(h_ij[jj]);
    }
    {
        const sim_vec4f pk = sh.pos[2][lane];
#pragma unroll 2
        for (int r = w; r < kT; r += kWarps) {
            sim_vec3f b;
            float b2, h;
            sim_atm_pair_f(sh.pos[1][r], pk, !same_jk || r > lane, nu3, a2_max, pp, &b, &b2, &h);
            sh.jk[r][lane] = make_float4(b.x, b.y, b.z, h);
            sh.jk_b2[r][lane] = b2;
            any_jk += fabsf(h);
        }
    }
    if (any_ij != 0.0f) { /* every writer writes 1 */
        sh.any[0] = 1;
    }
    if (any_jk != 0.0f) {
        sh.any[1] = 1;
    }
    __syncthreads();
    if (!(sh.any[0] && sh.any[1])) { /* block-uniform: every triple is dropped */
        return;
    }

    /* (3) The triple loop. */
    float wa[kJ], wb[kJ]; /* sums of W3 y_A over k, of W3 y_B over i (rotating with k) */
#pragma unroll
    for (int jj = 0; jj < kJ; ++jj) {
        wa[jj] = 0.0f;
        wb[jj] = 0.0f;
    }
    unsigned jmask = (1u << kJ) - 1u; /* the j with some (i, j) that counts */
    if constexpr (CUT) {
#pragma unroll
        for (int jj = 0; jj < kJ; ++jj) {
            jmask &= __any_sync(SIM_FULL_MASK, h_ij[jj] != 0.0f) ? ~0u : ~(1u << jj);
        }
    }
    int lag = 0; /* CUT: steps since the k accumulators were last aligned (lane l: k = l + s) */
    float *wik = &sh.u.wik[w][0][0];
#pragma unroll 2
    for (int s = 0; s < kT; ++s) {
        const int kl = (lane + s) & (kT - 1);
        sim_vec3f c; /* c = x_i - x_k */
        float c2, hc;
        sim_atm_pair_f(sh.pos[2][kl], pi, 1, nu3, a2_max, pp, &c, &c2, &hc);
        const float4 *jk = &sh.jk[kJ * w][kl];
        const float *jk_b2 = &sh.jk_b2[kJ * w][kl];
        float wc = 0.0f, es = 0.0f;
        bool work = true;
        if constexpr (CUT) {
            work = jmask != 0u && __any_sync(SIM_FULL_MASK, hc != 0.0f);
            if (!ENERGY && work && lag != 0) {
                rotate(wb, lane, lag);
                lag = 0;
            }
        }
        if (work) {
#pragma unroll
            for (int jj = 0; jj < kJ; ++jj) {
                if (CUT && !((jmask >> jj) & 1u)) {
                    continue;
                }
                const float4 bh = jk[jj * kT];
                const sim_vec3f b = {bh.x, bh.y, bh.z};
                float ya, yb, yc;
                float ha = h_ij[jj];
                if (box.check && !sim_atm_images_agree_f(a_ij[jj], b, c, &per)) {
                    ha = 0.0f; /* the images wrap around the box: not one triple */
                }
                const float w3 = sim_atm_triple_f(a2_ij[jj], jk_b2[jj * kT], c2, dot3(a_ij[jj], b),
                                                  dot3(b, c), dot3(c, a_ij[jj]), ha, bh.w, hc, &ya,
                                                  &yb, &yc, ENERGY ? &es : nullptr);
                if constexpr (!ENERGY) {
                    wa[jj] += w3 * ya;
                    wb[jj] += w3 * yb;
                    wc += w3 * yc;
                }
            }
        }
        if constexpr (ENERGY) {
            e += (double)es;
        } else {
            wik[s * kT + lane] = wc;
            if constexpr (CUT) {
                ++lag;
            } else {
                rotate(wb, lane, 1);
            }
        }
    }
    if constexpr (ENERGY) {
        return;
    }
    if (CUT && (lag & (kT - 1)) != 0) {
        rotate(wb, lane, lag);
    }
    __syncthreads();

    /* (4) Pair forces, F_1 = K_A a - K_C c, F_2 = K_B b - K_A a, F_3 = K_C c - K_B b. First
     * (i, k), whose sums are spread over the warps: warp w takes steps s = 8w .. 8w + 7 with
     * i = lane... */
    sim_vec3f fi = {0.0f, 0.0f, 0.0f}, fk = {0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int q = 0; q < kJ; ++q) {
        const int s = kJ * w + q;
        float sum = 0.0f;
#pragma unroll
        for (int ww = 0; ww < kWarps; ++ww) {
            sum += sh.u.wik[ww][s][lane];
        }
        /* c and C as sim_atm_pair computed them in the loop; a dropped pair has sum 0, so K 0 */
        const sim_vec4f pk = sh.pos[2][(lane + s) & (kT - 1)];
        float cx = pi.x - pk.x, cy = pi.y - pk.y, cz = pi.z - pk.z;
        if (pp != nullptr) {
            sim_min_image_in_f(&cx, &cy, &cz, pp);
        }
        const float kc = sim_atm_pair_coefficient_f(sum, cx * cx + cy * cy + cz * cz);
        sh.u.fin.kik[s][lane] = kc; /* over wik[0][s][lane], read above by this lane only */
        const bool counts = kc != 0.0f; /* not 0 * c: a padded body's c is NaN (SIM_PAD_COORD) */
        fi.x -= counts ? kc * cx : 0.0f;
        fi.y -= counts ? kc * cy : 0.0f;
        fi.z -= counts ? kc * cz : 0.0f;
    }
    __syncthreads();
    /* ... then k = lane for the same steps (i = (k - s) mod 32; K_C is 0 for dropped pairs). */
    const sim_vec4f pk = sh.pos[2][lane];
#pragma unroll
    for (int q = 0; q < kJ; ++q) {
        const int s = kJ * w + q;
        const int il = (lane - s) & (kT - 1);
        const float kc = sh.u.fin.kik[s][il];
        const sim_vec4f p = sh.pos[0][il];
        float cx = p.x - pk.x, cy = p.y - pk.y, cz = p.z - pk.z;
        if (pp != nullptr) {
            sim_min_image_in_f(&cx, &cy, &cz, pp);
        }
        const bool counts = kc != 0.0f;
        fk.x += counts ? kc * cx : 0.0f;
        fk.y += counts ? kc * cy : 0.0f;
        fk.z += counts ? kc * cz : 0.0f;
    }
    /* (i, j) and (j, k) of this warp's j: lane l holds i = l and, after the rotation, k = l.
     * v: this lane's share of the force on each j, summed over the lanes below. */
    float v[kFjValues];
#pragma unroll
    for (int jj = 0; jj < kJ; ++jj) {
        const int jl = kJ * w + jj;
        const float4 bh = sh.jk[jl][lane];
        const float ka = sim_atm_pair_coefficient_f(wa[jj], a2_ij[jj]);
        const float kb = sim_atm_pair_coefficient_f(wb[jj], sh.jk_b2[jl][lane]);
        const sim_vec3f &a = a_ij[jj];
        fi.x += ka * a.x;
        fi.y += ka * a.y;
        fi.z += ka * a.z;
        fk.x -= kb * bh.x;
        fk.y -= kb * bh.y;
        fk.z -= kb * bh.z;
        v[3 * jj + 0] = kb * bh.x - ka * a.x;
        v[3 * jj + 1] = kb * bh.y - ka * a.y;
        v[3 * jj + 2] = kb * bh.z - ka * a.z;
    }
    float *red = sh.u.fin.red[w]; /* [lane][value]: lane m then sums column m */
#pragma unroll
    for (int q = 0; q < kFjValues / 4; ++q) {
        reinterpret_cast<float4 *>(red + lane * kFjValues)[q] =
            make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
    }
    __syncwarp();
    float fj = 0.0f; /* lane m < 24: component m % 3 of the force on j = 8w + m / 3 */
    if (lane < kFjValues) {
#pragma unroll 8
        for (int l = 0; l < kT; ++l) {
            fj += red[l * kFjValues + lane];
        }
    }
    __syncwarp();
    /* The warp's forces into its scratch: F_i [3][32], F_k [3][32], F_j [24]. */
    red[lane] = fi.x;
    red[kT + lane] = fi.y;
    red[2 * kT + lane] = fi.z;
    red[3 * kT + lane] = fk.x;
    red[4 * kT + lane] = fk.y;
    red[5 * kT + lane] = fk.z;
    if (lane < kFjValues) {
        red[6 * kT + lane] = fj;
    }
    __syncthreads();

    /* (5) One atomic per body. */
    if (t >= kT) {
        return;
    }
    const int ni = (int)min((uint32_t)kT, n - i0);
    const int nj = (int)min((uint32_t)kT, n - j0);
    const int nk = (int)min((uint32_t)kT, n - k0);
    float gi[3], gk[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        gi[c] = 0.0f;
        gk[c] = 0.0f;
#pragma unroll
        for (int ww = 0; ww < kWarps; ++ww) {
            gi[c] += sh.u.fin.red[ww][c * kT + t];
            gk[c] += sh.u.fin.red[ww][(3 + c) * kT + t];
        }
    }
    const float *fj_of = &sh.u.fin.red[t / kJ][6 * kT + 3 * (t % kJ)]; /* j = t: warp t / 8 */
    const float gj[3] = {fj_of[0], fj_of[1], fj_of[2]};
    /* Coinciding tiles hold the same bodies: merge so each body gets one atomic per block. */
    if (same_ij && same_jk) {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, gi[0] + gj[0] + gk[0], gi[1] + gj[1] + gk[1],
                            gi[2] + gj[2] + gk[2]);
        }
    } else if (same_ij) {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, gi[0] + gj[0], gi[1] + gj[1], gi[2] + gj[2]);
        }
        if (t < nk) {
            sim_atomic_add3(force + k0 + t, gk[0], gk[1], gk[2]);
        }
    } else if (same_jk) {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, gi[0], gi[1], gi[2]);
        }
        if (t < nj) {
            sim_atomic_add3(force + j0 + t, gj[0] + gk[0], gj[1] + gk[1], gj[2] + gk[2]);
        }
    } else {
        if (t < ni) {
            sim_atomic_add3(force + i0 + t, gi[0], gi[1], gi[2]);
        }
        if (t < nj) {
            sim_atomic_add3(force + j0 + t, gj[0], gj[1], gj[2]);
        }
        if (t < nk) {
            sim_atomic_add3(force + k0 + t, gk[0], gk[1], gk[2]);
        }
    }
}

/* Triplet kernel over the tile triples of a source (a thread map, or a list with its length on
 * the host).
 *
 * Launch contract: grid from the tile source (a map plan's launch, or 1-D over a list), 128
 * threads = 4 warps, 38.4 KB static shared memory. TILES::get gives the tile triple (I, J, K),
 * I >= J >= K, or nothing (the block returns before any barrier); then triplet_block. 96
 * registers, no spills: 5 blocks = 20 warps per SM. ENERGY: the block's energy summed into
 * *energy with one double atomic. Cost: triplet_block's, plus the map per block. */
template <class TILES, bool ENERGY, bool CUT>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM)
    triplet_kernel(TILES tiles, const sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ force,
                   double *__restrict__ energy, uint32_t n, float nu3, float a2_max,
                   atm_box box = atm_box()) {
    sim_tile3 tile;
    if (!tiles.get(blockIdx.x, blockIdx.y, blockIdx.z, &tile)) {
        return;
    }
    __shared__ triplet_shared sh;
    double e = 0.0;
    triplet_block<ENERGY, CUT>(tile, sh, pos, force, e, n, nu3, a2_max, box);
    if constexpr (ENERGY) {
        sim_block_sum_add<kThreads>(e, energy);
    }
}

/* ---- The culled kernel (ATM cut-off, triplet_cull.h): a persistent grid over the tile-triple
 * list, or, when a list overflowed, over the boxes themselves ---- */

/* What the culled kernel reads: the tile-triple list and the counters that say how much of it
 * is valid, and for the fallback the tile boxes. */
struct culled_args {
    const sim_tile3 *list;
    uint32_t triple_cap, pair_cap;
    const sim_cull_box *boxes; /* triplet tile boxes of centres */
    uint32_t n_tiles;
    float limit; /* sim_tcull_limit_f [m^2] */
    sim_gpu_tcull_counts *counts;
    uint32_t part, parts; /* this device's share (triplet_cull.h) */
    unsigned flags;       /* SIM_GPU_CULL_RECORD, SIM_GPU_CULL_SORTED */
    sim_period_f per;     /* the box's periods (all 0: walls): boxes near through images */
};

/* The source's block-uniform state in shared memory, 1.1 KB: written by thread 0 (or by a
 * compaction) between barriers, read by all threads after one. */
struct culled_queue {
    int fallback;        /* a list is incomplete: test the simplex's tile pairs and triples */
    uint32_t begin, end; /* this share: list entries, or (fallback) simplex pairs in row order */
    uint32_t item;       /* list: the entry taken (relative to begin) */
    uint32_t chunk;      /* fallback: this block's next chunk of kThreads simplex pairs */
    uint32_t pi, npairs; /* fallback: position in and length of pq */
    uint32_t pair_i, pair_j, kbase; /* the pair whose K are tested, and the next K to test */
    uint32_t ki, nk;                /* position in and length of kq */
    int has_pair;
    int warp_sum[kWarps];
    uint32_t pq[kThreads]; /* neighbour pairs of the chunk, I << 16 | J (tiles <= 65535) */
    uint32_t kq[kThreads]; /* K of the batch that are neighbours of both I and J */
};

/* Block-wide stream compaction: the values of the threads with keep, in thread order, to out;
 * returns how many (all threads). Two barriers. */
static __device__ __forceinline__ uint32_t block_compact(bool keep, uint32_t value, uint32_t *out,
                                                         int *warp_sum) {
    const int lane = (int)threadIdx.x & (kT - 1), w = (int)threadIdx.x / kT;
    const unsigned mask = __ballot_sync(SIM_FULL_MASK, keep);
    if (lane == 0) {
        warp_sum[w] = __popc(mask);
    }
    __syncthreads();
    uint32_t before = 0, total = 0;
#pragma unroll
    for (int q = 0; q < kWarps; ++q) {
        const uint32_t c = (uint32_t)warp_sum[q];
        before += q < w ? c : 0u;
        total += c;
    }
    if (keep) {
        out[before + (uint32_t)__popc(mask & ((1u << lane) - 1u))] = value;
    }
    __syncthreads();
    return total;
}

static __device__ __forceinline__ bool near_tiles(const culled_args &a, uint32_t u, uint32_t v) {
    const sim_cull_box bu = sim_cull_load_box(a.boxes, u), bv = sim_cull_load_box(a.boxes, v);
    return sim_tcull_near_pf(&bu, &bv, a.limit, sim_period_or_null(&a.per)) != 0;
}

/* Thread 0, once: the mode and this block's range; block 0 records the step's counts. */
static __device__ __forceinline__ void culled_start(const culled_args &a, culled_queue &q,
                                                    uint32_t &prefetch) {
    sim_gpu_tcull_counts *c = a.counts;
    const uint32_t pairs = c->pairs, triples = c->triples;
    const bool fallback = pairs > a.pair_cap || triples > a.triple_cap;
    q.fallback = fallback;
    /* the list holds this part's triples alone; the fallback tests every tile pair of the
     * simplex and keeps this part's rows (sim_tcull_mine) */
    q.begin = 0;
    if (fallback) {
        q.end = sim_map_t2(a.n_tiles);
        q.chunk = blockIdx.x;
        q.pi = q.npairs = 0;
        q.ki = q.nk = 0;
        q.has_pair = 0;
    } else {
        q.end = triples;
        prefetch = atomicAdd(&c->cursor, 1u);
    }
    if ((a.flags & SIM_GPU_CULL_RECORD) && blockIdx.x == 0) {
        atomicMax(&c->frame.supers_peak, c->supers);
        atomicMax(&c->frame.pairs_peak, pairs);
        atomicMax(&c->frame.triples_peak, triples);
        if (fallback) {
            atomicAdd(&c->frame.fallback_steps, 1u);
        }
        if (a.flags & SIM_GPU_CULL_SORTED) {
            c->triples_sorted = triples;
        }
    }
}

/* The next tile triple of this block, or false when its work is done (all threads call it and
 * get the same answer). List: one entry at a time from a cursor shared by the grid (thread 0
 * fetches the entry after next while the block works on this one). Fallback: chunks of kThreads
 * tile pairs of the simplex (static stride over the blocks), tested by the threads in parallel;
 * for each neighbour pair (I, J), batches of kThreads K <= J tested against both; the triples
 * that pass, one by one. Exact: the same box test as the lists, on every candidate. */
static __device__ __forceinline__ bool culled_next(const culled_args &a, culled_queue &q,
                                                   uint32_t &prefetch, sim_tile3 *tile) {
    const uint32_t t = threadIdx.x;
    __syncthreads(); /* the previous tile triple is done with shared memory (and q.item) */
    if (!q.fallback) {
        if (t == 0) {
            q.item = prefetch;
            prefetch = atomicAdd(&a.counts->cursor, 1u);
        }
        __syncthreads();
        const uint32_t k = q.item;
        if (k >= q.end - q.begin) {
            return false;
        }
        *tile = a.list[q.begin + k];
        return true;
    }
    for (;;) {
        if (q.ki < q.nk) {
            tile->i = q.pair_i;
            tile->j = q.pair_j;
            tile->k = q.kq[q.ki];
            __syncthreads();
            if (t == 0) {
                q.ki++;
            }
            return true;
        }
        if (q.has_pair && q.kbase <= q.pair_j) {
            const uint32_t k = q.kbase + t;
            const bool keep =
                k <= q.pair_j && near_tiles(a, q.pair_j, k) && near_tiles(a, q.pair_i, k);
            const uint32_t nk = block_compact(keep, k, q.kq, q.warp_sum);
            if (t == 0) {
                q.nk = nk;
                q.ki = 0;
                q.kbase += kThreads;
            }
            __syncthreads();
            continue;
        }
        if (q.pi < q.npairs) {
            const uint32_t packed = q.pq[q.pi];
            __syncthreads();
            if (t == 0) {
                q.pair_i = packed >> 16;
                q.pair_j = packed & 0xffffu;
                q.has_pair = 1;
                q.kbase = 0;
                q.pi++;
            }
            __syncthreads();
            continue;
        }
        const uint32_t span = q.end - q.begin;
        if (q.chunk >= (span + kThreads - 1u) / kThreads) {
            return false;
        }
        const uint32_t p = q.chunk * kThreads + t;
        bool keep = false;
        uint32_t packed = 0;
        if (p < span) {
            const sim_tile2 ij = sim_cull_simplex_pair(q.begin + p);
            keep = sim_tcull_mine(ij.i, a.part, a.parts) && near_tiles(a, ij.i, ij.j);
            packed = ij.i << 16 | ij.j;
        }
        const uint32_t np = block_compact(keep, packed, q.pq, q.warp_sum);
        if (t == 0) {
            q.npairs = np;
            q.pi = 0;
            q.has_pair = 0;
            q.chunk += gridDim.x;
        }
        __syncthreads();
    }
}

/* Triplet kernel over the culled tile triples (cut-off on).
 *
 * Launch contract: a persistent grid (sim_cuda_triplet_culled_grid: SMs x resident blocks) of
 * 128 threads, 38.4 + 1.1 KB static shared memory; the list's length stays on the device. While
 * the lists are complete (counts within their capacities) blocks take entries [begin, end) of
 * this device's share one at a time (culled_next) and run triplet_block<CUT> on each; when a
 * list overflowed they enumerate the tile pairs of the simplex and test the triples from the
 * boxes instead (exact; ~T2(tiles) box tests, recorded as a fallback step). RECORD: block 0
 * notes the step's counts into the frame's peaks. ENERGY: one double atomic per block at the
 * end. Cost per entry: triplet_block's (~39 instructions per triple of its 32^3), one atomic
 * and two barriers; no block launch. */
template <bool ENERGY>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM)
    triplet_culled_kernel(culled_args a, const sim_vec4f *__restrict__ pos,
                          sim_vec4f *__restrict__ force, double *__restrict__ energy, uint32_t n,
                          float nu3, float a2_max, atm_box box = atm_box()) {
    __shared__ triplet_shared sh;
    __shared__ culled_queue q;
    uint32_t prefetch = 0; /* thread 0: the cursor's value for the entry after this one */
    if (threadIdx.x == 0) {
        culled_start(a, q, prefetch);
    }
    double e = 0.0;
    sim_tile3 tile;
    while (culled_next(a, q, prefetch, &tile)) {
        triplet_block<ENERGY, true>(tile, sh, pos, force, e, n, nu3, a2_max, box);
    }
    if constexpr (ENERGY) {
        sim_block_sum_add<kThreads>(e, energy);
    }
}

} // namespace

#ifndef SIM_TRIPLET_KERNEL_ONLY
namespace {

/* The kernels' view of ph's box (atm_box). */
atm_box atm_box_of(const sim_physics_f *ph) {
    atm_box box = {ph->box.period, ph->box.periodic != 0, 0};
    const float cut = sqrtf(ph->atm.atm_cutoff2);
    for (int a = 0; a < 3; ++a) {
        box.check |= ph->box.period.len[a] > 0.0f && 3.0f * cut >= ph->box.period.len[a];
    }
    return box;
}

/* Launches triplet_kernel<TILES, ENERGY, CUT> with CUT chosen by the cut-off. */
template <class TILES, bool ENERGY>
sim_status launch(const TILES &tiles, dim3 grid, cudaStream_t stream, const sim_gpu_bodies *b,
                  const sim_physics_f *ph, double *d_energy, sim_error *err) {
    const float nu3 = sim_atm_nu3_f(ph->atm.atm_nu);
    const float a2_max = sim_atm_a2_max_f(ph->atm.atm_cutoff2);
    if (ph->atm.atm_cutoff2 > 0.0f) {
        triplet_kernel<TILES, ENERGY, true><<<grid, kThreads, 0, stream>>>(
            tiles, b->pos, b->force, d_energy, b->n, nu3, a2_max, atm_box_of(ph));
    } else {
        triplet_kernel<TILES, ENERGY, false><<<grid, kThreads, 0, stream>>>(
            tiles, b->pos, b->force, d_energy, b->n, nu3, a2_max, atm_box_of(ph));
    }
    SIM_CUDA_CHECK_LAUNCH(ENERGY ? "triplet_kernel<energy>" : "triplet_kernel");
    return SIM_OK;
}

} // namespace

sim_status sim_cuda_triplet_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                   const sim_map_plan *plan, const sim_map_share *share,
                                   const sim_gpu_streams *st, sim_error *err) {
    const sim_triplet_map map = (sim_triplet_map)plan->map;
    auto one = [&](const sim_map_launch *l, dim3 grid, uint3 origin, cudaStream_t s,
                   sim_error *err) -> sim_status {
        switch (map) {
#define SIM_TRIPLET_CASE(id, name, label, paper)                                                   \
    case SIM_TRIPLET_MAP_##id:                                                                     \
        return launch<map_tiles<SIM_TRIPLET_MAP_##id>, false>({*l, origin}, grid, s, b, ph,        \
                                                              nullptr, err);
            SIM_TRIPLET_MAP_LIST(SIM_TRIPLET_CASE)
#undef SIM_TRIPLET_CASE
        default:
            return sim_fail(err, SIM_BAD_ARGUMENT, "unknown triplet map %d", (int)map);
        }
    };
    sim_map_share all;
    if (share == nullptr) {
        sim_work_share(plan, 0, 1, &all);
        share = &all;
    }
    return sim_gpu_run_share(plan, share, st, one, err);
}

sim_status sim_cuda_triplet_forces_list(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                        const sim_tile3 *d_tiles, uint32_t count,
                                        cudaStream_t stream, sim_error *err) {
    if (count == 0u) {
        return SIM_OK;
    }
    if (count > 0x7fffffffu) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "%u tile triples exceed one launch", count);
    }
    const list_tiles tiles = {d_tiles, count, (b->n + kT - 1) / kT};
    return launch<list_tiles, false>(tiles, dim3(count), stream, b, ph, nullptr, err);
}

namespace {

/* The culled kernel's arguments for c and this physics, or an error when there is no cut-off. */
sim_status culled_setup(const sim_gpu_tcull *c, const sim_physics_f *ph, unsigned flags,
                        sim_gpu_tcull_share share, culled_args *a, sim_error *err) {
    if (!(ph->atm.atm_cutoff2 > 0.0f)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "culled triplets need an ATM cut-off");
    }
    if (c->n_tiles > 65535u || share.parts < 1u || share.part >= share.parts) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "culled triplets: %u tiles (at most 65535), share %u of %u", c->n_tiles,
                        share.part, share.parts);
    }
    a->list = c->triple_list;
    a->triple_cap = c->triple_cap;
    a->pair_cap = c->pair_cap;
    a->boxes = c->boxes;
    a->n_tiles = c->n_tiles;
    a->limit = sim_tcull_limit_f(sim_atm_a2_max_f(ph->atm.atm_cutoff2));
    a->counts = c->counts;
    a->part = share.part;
    a->parts = share.parts;
    a->flags = flags;
    a->per = ph->box.period;
    return SIM_OK;
}

template <bool ENERGY>
sim_status launch_culled(const sim_gpu_bodies *b, const sim_physics_f *ph, const sim_gpu_tcull *c,
                         unsigned flags, sim_gpu_tcull_share share, double *d_energy,
                         cudaStream_t stream, sim_error *err) {
    culled_args a;
    SIM_TRY(culled_setup(c, ph, flags, share, &a, err));
    SIM_CUDA_TRY(cudaMemsetAsync(&c->counts->cursor, 0, sizeof c->counts->cursor, stream));
    const unsigned grid = c->sweep_grid > 0 ? (unsigned)c->sweep_grid : 1u;
    triplet_culled_kernel<ENERGY><<<grid, kThreads, 0, stream>>>(
        a, b->pos, b->force, d_energy, b->n, sim_atm_nu3_f(ph->atm.atm_nu),
        sim_atm_a2_max_f(ph->atm.atm_cutoff2), atm_box_of(ph));
    SIM_CUDA_CHECK_LAUNCH(ENERGY ? "triplet_culled_kernel<energy>" : "triplet_culled_kernel");
    return SIM_OK;
}

} // namespace

sim_status sim_cuda_triplet_culled_grid(int sm_count, int *grid, sim_error *err) {
    int per_sm = 0;
    SIM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, triplet_culled_kernel<false>, kThreads, 0));
    *grid = (per_sm > 0 ? per_sm : 1) * (sm_count > 0 ? sm_count : 1);
    return SIM_OK;
}

sim_status sim_cuda_triplet_forces_culled(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                          const sim_gpu_tcull *c, unsigned flags,
                                          sim_gpu_tcull_share share, cudaStream_t stream,
                                          sim_error *err) {
    return launch_culled<false>(b, ph, c, flags, share, nullptr, stream, err);
}

sim_status sim_cuda_triplet_energy_culled(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                          const sim_gpu_tcull *c, sim_gpu_tcull_share share,
                                          double *d_energy, cudaStream_t stream, sim_error *err) {
    return launch_culled<true>(b, ph, c, 0u, share, d_energy, stream, err);
}

sim_status sim_cuda_triplet_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                   double *d_energy, int rank, int world, cudaStream_t stream,
                                   sim_error *err) {
    sim_map_plan plan;
    const uint32_t n_tiles = (b->n + SIM_TRIPLET_TILE - 1) / SIM_TRIPLET_TILE;
    SIM_TRY(sim_triplet_map_plan(SIM_TRIPLET_MAP_BB, n_tiles, &plan, err));
    sim_map_share share;
    sim_work_share(&plan, rank, world, &share);
    for (int p = 0; p < share.piece_count; ++p) {
        const sim_map_piece *pc = &share.piece[p];
        const dim3 grid(pc->grid[0], pc->grid[1], pc->grid[2]);
        const uint3 origin = make_uint3(pc->origin[0], pc->origin[1], pc->origin[2]);
        SIM_TRY((launch<map_tiles<SIM_TRIPLET_MAP_BB>, true>({plan.launch[pc->launch], origin},
                                                             grid, stream, b, ph, d_energy, err)));
    }
    return SIM_OK;
}
#endif /* SIM_TRIPLET_KERNEL_ONLY */
