/* SPDX-License-Identifier: MIT
 * nbsim — the neighbour lists' build from a cell grid (cell_grid.h says why and why it is exact),
 * part of nlist_kernels.cu's translation unit (namespace nl; it includes this file after its
 * helpers). A rebuild launches, each kernel returning at once (every block) unless the lists are
 * rebuilt this step (the drift's flag, or forced):
 *   grid_bin_kernel      each body's cell and its place there (an atomic per body on the cell's
 *                        fill count), the build positions, the step's list counters reset
 *   grid_place_kernel    each cell's start among the cells' bodies (a block's 256 cells take
 *                        consecutive places: one atomic per block), its fill count zeroed for
 *                        the next binning (no clearing pass)
 *   grid_scatter_kernel  each body's slot and position at its cell's start plus its place
 *   grid_build_kernel    each body's list from the 27 cells around its own, its own row only
 *                        (half lists j < i, full lists every j != i): no atomics; the threads
 *                        take the bodies in cell order (a warp's lanes walk neighbouring cells)
 * and the cells stay until the next rebuild: a list that overflowed makes the sweep walk them
 * (grid_walk). A body's place among its cell's bodies follows the atomics' order, so a list's
 * order may differ from one run to the next (the tile build's appends are atomics too).
 *
 * Swept straight from the cells (sim_gpu_nlist.direct: lists that would be rebuilt at nearly
 * every step, nlist.h): no lists; every step the drift bins (drift_bin_kernel, with the step
 * before's second half kick), the place and the scatter (velocities too) follow, and
 * cell_pairs_kernel finds each touching pair once in the cells around a body and adds its force
 * to both (cell_sweep_kernel, both directions, is the form measured against it): four kernels a
 * step where the lists take seven. */
/* What the kernels read of the grid. */
struct cell_view {
    sim_cell_grid g;
    sim_cell_range *cell;
    uint32_t *cell_body, *body_cell, *body_rank;
    sim_vec4f *cell_pos; /* the build positions in cell_body's order */
    uint32_t *fill;      /* per cell: bodies binned since its last place (0 between builds) */
    sim_vec4f *cell_vel; /* swept from the cells: the velocities in cell_body's order (else NULL) */
};

/* Blocks of 256 per SM the persistent grid is sized for: a full SM of 2,048 threads, at up to 32
 * registers a thread (the launch bounds hold every kernel here to it; an SM of 1,536 threads
 * holds 6: sim_min_blocks, gpu/arch.cuh). */
constexpr int kGridBlocksPerSm = 8;
constexpr int kGridMinBlocks = sim_min_blocks(256, kGridBlocksPerSm);

/* Every kernel here is a grid-stride loop over a persistent grid (l->grid_blocks blocks of 256):
 * a step that does not rebuild then costs five launches of a few blocks that return at once, not
 * a block per 256 cells or bodies. */
static __device__ __forceinline__ uint32_t grid_thread() {
    return blockIdx.x * kThreads + threadIdx.x;
}

static __device__ __forceinline__ uint32_t grid_threads() {
    return gridDim.x * kThreads;
}

/* The inclusive prefix sum of v over the warp's lanes up to this one (all 32 lanes call it). */
static __device__ __forceinline__ uint32_t warp_inclusive_sum(uint32_t v, uint32_t lane) {
    for (uint32_t o = 1; o < 32u; o <<= 1) {
        const uint32_t below = __shfl_up_sync(SIM_FULL_MASK, v, o);
        v += lane >= o ? below : 0u;
    }
    return v;
}

/* Swept from the cells: drift_kernel's drift and check, and grid_bin_kernel's binning of the
 * drifted centre (its cell, its place there), in one pass; the forces are not cleared unless
 * `clear` (cell_sweep_kernel stores each). Thread 0 zeroes the place kernel's cursor. Launch
 * contract and guard as drift_kernel (ceil(N / 256) blocks, thread i body i). Cost per body:
 * drift_kernel's less the force's 16 B written, 8 B written more and an atomic on its cell's
 * fill count. clear: the force zeroed once read, as drift_kernel does (each pair once:
 * cell_pairs_kernel adds into it; 16 B written more). last.flag set (each pair once, not the
 * frame's first step): the step before's second half first (body force, half kick, the flag:
 * verlet_second_kernel's, the same bits), for ph's body force (its perm read: 4 B more) - the
 * pass of its own it replaces read and wrote each body's velocity and force again. */
__global__ void __launch_bounds__(kThreads)
    drift_bin_kernel(sim_vec4f *__restrict__ pos, sim_vec4f *__restrict__ vel,
                     sim_vec4f *__restrict__ force, uint32_t n, float dt,
                     const sim_vec4f *__restrict__ ref, float h2,
                     sim_gpu_nlist_counts *__restrict__ nc, cell_view v, sim_period_f per,
                     int clear, sim_gpu_kick last, sim_physics_f ph) {
    const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
    if (i == 0u) {
        nc->cells_placed = 0u;
    }
    bool moved = false;
    if (i < n) {
        const sim_vec4f p = drift_body(i, pos, vel, force, dt, ref, h2, per, nullptr, nullptr,
                                       &moved, &last, &ph);
        const uint32_t c = sim_cell_of(&v.g, p);
        v.body_cell[i] = c;
        v.body_rank[i] = atomicAdd(&v.fill[c], 1u);
        if (clear) { /* each pair once: the sweep adds into it */
            force[i] = sim_vec4f{0.0f, 0.0f, 0.0f, 0.0f};
        }
    }
    sim_block_raise(moved, &nc->rebuild);
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Thread 0
 * resets the lists' counters (rebuild raised: the later kernels see it when forced) and the
 * culling's, and counts the rebuild (RECORD). Cost per body: 16 B read, 28 B written, an atomic
 * on its cell's count. */
__global__ void __launch_bounds__(kThreads, kGridMinBlocks)
    grid_bin_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, cell_view v,
                    sim_vec4f *__restrict__ ref, uint32_t *__restrict__ count,
                    sim_gpu_nlist_counts *__restrict__ nc, unsigned flags) {
    sim_chain_enter();
    const bool forced = (flags & SIM_GPU_NLIST_REBUILD) != 0u;
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        begin_rebuild(nc, flags);
    }
    for (uint32_t i = grid_thread(); i < n; i += grid_threads()) {
        const sim_vec4f p = sim_ld4(pos + i);
        const uint32_t c = sim_cell_of(&v.g, p);
        ref[i] = p;
        count[i] = 0u;
        v.body_cell[i] = c;
        v.body_rank[i] = atomicAdd(&v.fill[c], 1u);
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the cells (grid-stride, the bound
 * rounded up to whole blocks: every thread reaches the barriers). A block's 256 cells take
 * consecutive places: a scan over the warps, then one atomic per block; each cell's fill count
 * goes into its range and back to 0 for the next binning. Cost per cell: 4 B read, 12 B written.
 * One atomic per warp on the one cursor (the first form): 6,750 atomics on one address at 262,144
 * bodies, made it ~1.8x as long (ncu: bench/results/nvidia-h100/ncu_lattice_kernels.txt). */
__global__ void __launch_bounds__(kThreads, kGridMinBlocks)
    grid_place_kernel(cell_view v, sim_gpu_nlist_counts *__restrict__ nc, int forced) {
    sim_chain_enter();
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    constexpr uint32_t kWarps = kThreads / 32;
    __shared__ uint32_t below_warp[kWarps]; /* the block's cells before each warp's */
    __shared__ uint32_t block_base;
    const uint32_t lane = lane_id(), warp = threadIdx.x >> 5;
    const uint32_t end = (v.g.cells + kThreads - 1u) / kThreads * kThreads;
    for (uint32_t c = grid_thread(); c < end; c += grid_threads()) {
        const uint32_t mine = c < v.g.cells ? v.fill[c] : 0u;
        const uint32_t upto = warp_inclusive_sum(mine, lane);
        if (lane == 31u) {
            below_warp[warp] = upto; /* the warp's total, for now */
        }
        __syncthreads();
        if (warp == 0u) {
            const uint32_t t = lane < kWarps ? below_warp[lane] : 0u;
            const uint32_t incl = warp_inclusive_sum(t, lane);
            const uint32_t total = __shfl_sync(SIM_FULL_MASK, incl, 31);
            if (lane == 0u) {
                block_base = total != 0u ? atomicAdd(&nc->cells_placed, total) : 0u;
            }
            if (lane < kWarps) {
                below_warp[lane] = incl - t;
            }
        }
        __syncthreads();
        if (c < v.g.cells) {
            sim_cell_range r;
            r.start = block_base + below_warp[warp] + upto - mine;
            r.n = mine;
            v.cell[c] = r;
            v.fill[c] = 0u;
        }
        __syncthreads(); /* the shared words are the next round's */
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Cost per
 * body: 28 B read (its cell, place and position, the cell's start), 20 B written (its slot and
 * position, scattered within its cell's neighbourhood). The positions in cell order: the build
 * then reads a candidate's beside its slot, not through it.
 *
 * Swept from the cells (v.cell_vel set, run at every step): the velocity beside the position too
 * (16 B read and written more); and where a list would have been rebuilt (the drift's flag, or
 * forced) the check's reference positions as a build would set them (ref; 16 B written more), the
 * rebuild counted (RECORD): the cadence the lists would have, which decides when they pay again
 * (sim_nlist_cadence). */
__global__ void __launch_bounds__(kThreads, kGridMinBlocks)
    grid_scatter_kernel(const sim_vec4f *__restrict__ pos, const sim_vec4f *__restrict__ vel,
                        uint32_t n, cell_view v, sim_vec4f *__restrict__ ref,
                        sim_gpu_nlist_counts *__restrict__ nc, unsigned flags) {
    sim_chain_enter();
    const bool forced = (flags & SIM_GPU_NLIST_REBUILD) != 0u;
    const bool direct = v.cell_vel != nullptr;
    const bool rebuilt = forced || nc->rebuild != 0u;
    if (!direct && !rebuilt) {
        return;
    }
    if (direct && rebuilt && (flags & SIM_GPU_CULL_RECORD) && blockIdx.x == 0 &&
        threadIdx.x == 0) {
        nc->frame.rebuilds++;
    }
    for (uint32_t i = grid_thread(); i < n; i += grid_threads()) {
        const uint32_t m = v.cell[v.body_cell[i]].start + v.body_rank[i];
        const sim_vec4f p = sim_ld4(pos + i);
        v.cell_body[m] = i;
        v.cell_pos[m] = p;
        if (direct) {
            v.cell_vel[m] = sim_ld4(vel + i);
            if (rebuilt) {
                ref[i] = p;
            }
        }
    }
}

/* Calls on_body(j, p_j) for every body j of the 27 cells around `home` (the cells of the last
 * build, the bodies where they are now), a cell at a time: the sweep's fallback over overflowed
 * lists. Not by rows as grid_rows: beside the sweep's force code the rows' state spills (4 to 28
 * more bytes per sweep, ptxas sm_90), for a path taken only after an overflow. */
template <class OnBody>
static __device__ __forceinline__ void grid_walk(const cell_view &v, uint32_t home,
                                                 const sim_vec4f *__restrict__ pos,
                                                 OnBody &&on_body) {
    SIM_CELL_GRID_FOR_NEAR(&v.g, home, cell, {
        const sim_cell_range r = v.cell[cell];
        for (uint32_t m = r.start; m < r.start + r.n; ++m) {
            const uint32_t j = v.cell_body[m];
            on_body(j, sim_ld4(pos + j));
        }
    });
}

/* Calls on_slot(m) for every slot m (cell order) of the 27 cells around `home`, a row of (up to)
 * 3 cells along x at a time: the row's ranges loaded together (one 8-byte load per cell, start
 * and count side by side: as two arrays the compiler held one start's load back until the counts
 * had come), then its slots walked as one run, candidate t at slot t + base with base the start of
 * t's cell less the bodies of the row's cells before it. Where the cells' ranges are contiguous
 * (within an aligned group of 256 cells the place kernel gives them consecutive places: most
 * rows) the base is the same for all: one range, and consecutive candidates are consecutive
 * slots, whose positions (and velocities) lie side by side. UNROLL: candidates per turn of the
 * walk (the build takes one: unrolled by 2 it spills its loop counter; the cells' sweep two). */
template <int UNROLL = 1, class OnSlot>
static __device__ __forceinline__ void grid_row_slots(const cell_view &v, uint32_t home,
                                                      OnSlot &&on_slot) {
    SIM_CELL_GRID_FOR_ROWS(&v.g, home, lo, mid, hi, {
        const sim_cell_range none = {0u, 0u};
        const sim_cell_range c0 = lo != SIM_CELL_NONE ? v.cell[lo] : none;
        const sim_cell_range c1 = v.cell[mid];
        const sim_cell_range c2 = hi != SIM_CELL_NONE ? v.cell[hi] : none;
        const uint32_t n0 = c0.n, n01 = n0 + c1.n, total = n01 + c2.n;
        const uint32_t base1 = c1.start - n0, base2 = c2.start - n01; /* mod 2^32 */
        _Pragma("unroll UNROLL")
        for (uint32_t t = 0; t < total; ++t) {
            on_slot(t + (t < n0 ? c0.start : t < n01 ? base1 : base2));
        }
    });
}

/* Calls on_body(j, p_j) for every body j of the 27 cells around `home` with its build position
 * (cell_pos), by grid_row_slots: the slot's and the position's loads side by side. */
template <class OnBody>
static __device__ __forceinline__ void grid_rows(const cell_view &v, uint32_t home,
                                                 OnBody &&on_body) {
    grid_row_slots(v, home,
                   [&](uint32_t m) { on_body(v.cell_body[m], sim_ld4(v.cell_pos + m)); });
}

/* Launch contract: a persistent grid of 256-thread blocks over the cell-ordered slots
 * (grid-stride): thread m lists body i = cell_body[m], its row every j of the cells around its own
 * (half lists j < i, full lists j != i) within reach (sim_nlist_near_pf), stored while fewer than
 * cap, all counted; more than cap raises the overflow (a plain store: every writer writes 1).
 *
 * Why in cell order, not body order: a warp's 32 bodies then lie in consecutive cells of one row,
 * so the lanes' candidates at each turn of the walk are neighbouring slots, a few cache lines per
 * load; in body (Morton) order each lane walked its own rows, 32 lines per load, and the build was
 * bound by those L1 wavefronts (L1 57 %: bench/results/nvidia-h100/ncu_lattice_kernels.txt). The
 * rows' stores (nbr[k * stride + i]) are scattered instead: ~10 per body, against ~90 loads.
 *
 * Cost per body: its slot and build position (coalesced), 27 cells' start and count (8 B each, a
 * row's 3 loads together), per candidate a 4 B slot and the 16 B position beside it (independent
 * loads) and the 9-instruction test, per entry a 4 B store. */
__global__ void __launch_bounds__(kThreads, kGridMinBlocks)
    grid_build_kernel(uint32_t n, cell_view v, float skin, uint32_t *__restrict__ nbr,
                      uint32_t *__restrict__ count, uint32_t stride, uint32_t cap, int full,
                      sim_gpu_nlist_counts *__restrict__ nc, sim_period_f period) {
    sim_chain_enter();
    if (nc->rebuild == 0u) {
        return;
    }
    const bool periodic = sim_period_any_f(&period); /* a flag, not a pointer (cull.h) */
    for (uint32_t m = grid_thread(); m < n; m += grid_threads()) {
        const uint32_t i = v.cell_body[m];
        const sim_vec4f pi = sim_ld4(v.cell_pos + m); /* pos[i] at the bin, bit for bit */
        uint32_t k = 0;
        grid_rows(v, v.body_cell[i], [&](uint32_t j, const sim_vec4f &pj) {
            /* both tests whatever the other says: the slot's and the position's loads issue
             * together */
            const bool near = periodic ? sim_nlist_near_pf(pi, pj, skin, &period)
                                       : sim_nlist_near_pf(pi, pj, skin, nullptr);
            if (near & (full ? j != i : j < i)) {
                if (k < cap) {
                    nbr[(size_t)k * stride + i] = j;
                }
                ++k;
            }
        });
        count[i] = k;
        if (k > cap) {
            nc->overflow = 1u;
        }
    }
}

/* ---- the contacts swept straight from the cells ---- */

/* How far a walk's pruning trusts its own floats. A cell's faces lie at whole multiples of the
 * side in units u = (x - lo) inv, which the bin floors (sim_cell_axis); a float u is within a few
 * ulps of dims of the exact quotient, so a face's distance is shrunk by dims 2^-20 units (several
 * times that) before it rules a cell out, and the reach r_i + rmax is widened by 2^-16 (over the
 * float contact test's own rounding). */
constexpr float kFaceSlack = 0x1p-20f;
constexpr float kReachSlack = 1.0f + 0x1p-16f;

/* How far [m] the body at p surely is from the lower and upper faces of its cell c along axis k
 * (0: at or beyond the face; a NaN coordinate: 0, nothing ruled out). */
static __device__ __forceinline__ void face_gaps(float x, const sim_cell_grid &g, int k,
                                                 uint32_t c, float *lo, float *hi) {
    const float u = (x - g.lo[k]) * g.inv[k], e = (float)g.dims[k] * kFaceSlack;
    const float side = 1.0f / g.inv[k];
    *lo = fmaxf(u - (float)c - e, 0.0f) * side;
    *hi = fmaxf((float)c + 1.0f - u - e, 0.0f) * side;
}

/* Calls on_slot(o) for every slot o (cell order) of the cells around `home` that may hold a body
 * touching the one at p (radius p.w, every radius at most g.rmax): of the 9 rows along x of the
 * 27 cells (sim_cell_grid_step's neighbours; row r at dy = r % 3 - 1, dz = r / 3 - 1) rows first,
 * first + stride, ... (a body's rows shared among `stride` threads), and of those only the rows -
 * and of a row only the end cells - whose nearest point is closer to p than p.w + rmax. HALF
 * (first 4 and up): each pair of cells once, the 13 neighbours after `home` in cell order and
 * home's own slots after `self` (the body's slot), the rows dz = 0, dy >= 0 and dz = 1. Exact: a
 * skipped cell's bodies are all farther than any contact (the faces' distances above are lower
 * bounds; a body beyond a wall lies beyond its border cell, farther still). Against the 27 cells
 * whole: 165 of 216 (2 r)^3 on average, a quarter fewer candidates. A row's cells as
 * grid_row_slots walks them (one run where their ranges are contiguous), UNROLL candidates per
 * turn. */
template <int UNROLL, bool HALF = false, class OnSlot>
static __device__ __forceinline__ void cell_near_slots(const cell_view &v, const sim_vec4f &p,
                                                       uint32_t home, uint32_t first,
                                                       uint32_t stride, uint32_t self,
                                                       OnSlot &&on_slot) {
    const sim_cell_grid &g = v.g;
    const uint32_t hx = home % g.dims[0], hyz = home / g.dims[0];
    const uint32_t hy = hyz % g.dims[1], hz = hyz / g.dims[1];
    float xlo, xhi, ylo, yhi, zlo, zhi;
    face_gaps(p.x, g, 0, hx, &xlo, &xhi);
    face_gaps(p.y, g, 1, hy, &ylo, &yhi);
    face_gaps(p.z, g, 2, hz, &zlo, &zhi);
    const float reach = (p.w + g.rmax) * kReachSlack, reach2 = reach * reach;
    for (uint32_t r = first; r < 9u; r += stride) {
        const int dy = (int)(r % 3u) - 1, dz = (int)(r / 3u) - 1;
        uint32_t y, z;
        if (!sim_cell_step(&g, 1, hy, dy, &y) || !sim_cell_step(&g, 2, hz, dz, &z)) {
            continue;
        }
        const float gy = dy < 0 ? ylo : dy > 0 ? yhi : 0.0f;
        const float gz = dz < 0 ? zlo : dz > 0 ? zhi : 0.0f;
        const float row2 = gy * gy + gz * gz;
        if (row2 > 0.0f && row2 >= reach2) { /* the body's own row always (itself counted) */
            continue;
        }
        const uint32_t row = g.dims[0] * (y + g.dims[1] * z);
        uint32_t lo_x, hi_x;
        const bool has_lo = sim_cell_step(&g, 0, hx, -1, &lo_x) && !(xlo * xlo + row2 >= reach2);
        const bool has_hi = sim_cell_step(&g, 0, hx, 1, &hi_x) && !(xhi * xhi + row2 >= reach2);
        const sim_cell_range none = {0u, 0u};
        const bool own_row = HALF && r == 4u; /* half: its cell past itself, and the next */
        const sim_cell_range c0 = has_lo && !own_row ? v.cell[row + lo_x] : none;
        sim_cell_range c1 = v.cell[row + hx];
        if (own_row) {
            c1.n = c1.start + c1.n - (self + 1u);
            c1.start = self + 1u;
        }
        const sim_cell_range c2 = has_hi ? v.cell[row + hi_x] : none;
        const uint32_t n0 = c0.n, n01 = n0 + c1.n, total = n01 + c2.n;
        const uint32_t base1 = c1.start - n0, base2 = c2.start - n01; /* mod 2^32 */
        _Pragma("unroll UNROLL")
        for (uint32_t t = 0; t < total; ++t) {
            on_slot(t + (t < n0 ? c0.start : t < n01 ? base1 : base2));
        }
    }
}

/* Contacts a body's threads of cell_sweep_kernel hold before they sum their forces: the walk
 * queues the touching slots (shared memory, 4 B each; kCellQueue / LANES per thread) and the
 * forces are summed after it, so a warp's lanes do not take turns through the force code at every
 * candidate that touches one of them (the grid build that summed forces as it walked was 1.9x
 * slower, nlist_fused_trial.md), and the walk keeps the build's few registers. A thread with more
 * contacts walks its rows a second time for those past its queue, out of line. 32: the falling
 * lattice of 262,144 compresses to 15 contacts per body on average in its densest frames, where a
 * queue of 16 sent many bodies round twice (those frames ~1.8x as long as with 32, the whole
 * run's mean ~1.2x: bench/results/nvidia-h100/cells_pruned.md). */
constexpr uint32_t kCellQueue = 32;
/* The sweep keeps more in registers than the build (a body's velocity and force, the step's second
 * half): 4 resident blocks of 256 per SM, at up to 64 registers. Measured (lattice of
 * 262,144, whole step): 6 blocks at 40 registers spilled and took ~13 % longer than 4 blocks
 * (bench/results/nvidia-h100/cells_swept.md). */
constexpr int kCellSweepBlocksPerSm = 4;
/* The walk's candidates two at a time (their loads in flight together): 2 to 4 % faster than
 * one or four at a time, same run, same file. */
constexpr int kCellSweepUnroll = 2;

/* Threads per body of the cells' sweep for n bodies on sm_count SMs: 4, 2 or 1, the most with
 * which every body's threads are resident at once (kCellSweepBlocksPerSm blocks of 256 per SM).
 * A body's walk is a chain of dependent loads; where the bodies alone would leave the SMs half
 * empty, more threads per body keep more loads in flight; where they fill the GPU, more threads
 * only add waves. Measured each pair once (lattice, whole step, 1 / 2 / 4 threads): 4 fastest
 * at 16,384 bodies, 2 at 65,536, 1 at 262,144 (bench/results/nvidia-h100/cells_once.md, "Trials",
 * before the vector atomics; the rule picks the fastest at each). */
static inline int cell_sweep_lanes(uint32_t n, int sm_count) {
    const uint64_t resident =
        (uint64_t)(sm_count > 0 ? sm_count : 1) * kCellSweepBlocksPerSm * kThreads;
    return (uint64_t)n * 4u <= resident ? 4 : (uint64_t)n * 2u <= resident ? 2 : 1;
}

/* The force on the body at slot m (position pi, velocity vi) from the one at slot o, added. */
static __device__ __forceinline__ void cell_force_add(const cell_view &v, const sim_vec4f &pi,
                                                      const sim_vec4f &vi, uint32_t o,
                                                      const sim_physics_f &ph, float *fx,
                                                      float *fy, float *fz) {
    const sim_vec3f f = sim_contact_force_f(pi, vi, sim_ld4(v.cell_pos + o),
                                            sim_ld4(v.cell_vel + o), &ph, nullptr);
    *fx += f.x;
    *fy += f.y;
    *fz += f.z;
}

/* The forces on the body at slot m from the contacts its thread found past the first QUEUE
 * (in the walk's order, rows first, first + stride, ...), added: a second walk, rare, out of line
 * so that the first keeps its few registers. */
template <bool PERIODIC, uint32_t QUEUE>
static __device__ __noinline__ void cell_forces_past_queue(const cell_view &v, uint32_t m,
                                                           uint32_t home, uint32_t first,
                                                           uint32_t stride, sim_vec4f pi,
                                                           sim_vec4f vi, const sim_physics_f &ph,
                                                           float *fx, float *fy, float *fz) {
    const sim_period_f period = ph.box.period;
    const sim_period_f *per = PERIODIC ? &period : nullptr;
    uint32_t k = 0;
    cell_near_slots<1>(v, pi, home, first, stride, m, [&](uint32_t o) {
        if (touching(pi, sim_ld4(v.cell_pos + o), per) && o != m && k++ >= QUEUE) {
            cell_force_add(v, pi, vi, o, ph, fx, fy, fz);
        }
    });
}

/* Swept straight from the cells (no lists), both directions (NBSIM_CELL_ONCE=0; each pair once,
 * cell_pairs_kernel, is faster at every size and the default): the contact forces on every body
 * from the bodies of the cells around its own that may touch it (cell_near_slots), where they
 * are now (binned this step), each body's force stored (its own sum: no atomics, nothing cleared
 * before); lowers the rebuild flag as the lists' sweep does. Exact as a list build is
 * (cell_grid.h): every touching pair lies in the same or adjacent cells; the test is the lists'
 * sweep's (touching), the force pair_kernels.cu's. PERIODIC: minimum images through ph.box.period
 * (its own instantiation: the walls' walk keeps fewer registers). LANES threads per body share
 * its 9 rows (thread q of a body rows q, q + LANES, ...) and sum their forces by shuffles: more
 * threads in flight where the bodies alone would not fill the GPU, and a shorter walk each.
 *
 * Launch contract: ceil(N LANES / 256) blocks of 256 threads (sim_gpu_nlist_forces), threads
 * LANES q .. LANES q + LANES - 1 the body at slot q of the cell order (guard q < n; every thread
 * runs to the end: the shuffles and the warp sums). Cost per body: its slot, position and
 * velocity (coalesced), its force stored (16 B, scattered), up to 27 cells' ranges; per candidate
 * its 16 B position beside the last (no slot: the force is body i's alone) and the 9-instruction
 * test; per touching pair the queue's 8 B (store, load), the other's velocity beside its position
 * and the ~60-instruction force. Counts (RECORD, count_on) as the lists' sweep: candidates tested
 * and touching pairs (each once: the higher slot's). vel (else NULL): the step's second half too
 * (sim_gpu_kick, gpu/second_half.cuh: body force, half kick, the flag; 16 B more written per
 * body, vel[i] of slot order: nothing else reads it during the sweep, which takes the velocities
 * from cell_vel). */
template <bool PERIODIC, int LANES>
__global__ void __launch_bounds__(kThreads, sim_min_blocks(256, kCellSweepBlocksPerSm))
    cell_sweep_kernel(uint32_t n, cell_view v, sim_vec4f *__restrict__ force,
                      sim_vec4f *__restrict__ vel, sim_gpu_kick kick, sim_physics_f ph,
                      sim_gpu_nlist_counts *__restrict__ nc, unsigned flags, int count_on) {
    static_assert(LANES == 1 || LANES == 2 || LANES == 4, "a body's threads within a warp");
    constexpr uint32_t QUEUE = kCellQueue / LANES; /* each thread's */
    sim_chain_enter();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        nc->rebuild = 0u; /* as the lists' sweep: read by the scatter before, raised by the drift */
        if (flags & SIM_GPU_CULL_RECORD) {
            nc->frame.steps++;
        }
    }
    __shared__ uint32_t queue[QUEUE][kThreads];
    const uint32_t thread = blockIdx.x * kThreads + threadIdx.x;
    const uint32_t m = thread / (uint32_t)LANES, lane = thread % (uint32_t)LANES;
    uint32_t tests = 0, touched = 0;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    sim_vec4f pi = {}, vi = {};
    if (m < n) {
        pi = sim_ld4(v.cell_pos + m);
        const sim_period_f period = ph.box.period;
        const sim_period_f *per = PERIODIC ? &period : nullptr;
        /* the body's cell from its binned position, bit for bit the bin's (no gather) */
        const uint32_t home = sim_cell_of(&v.g, pi);
        uint32_t found = 0;
        cell_near_slots<kCellSweepUnroll>(v, pi, home, lane, LANES, m, [&](uint32_t o) {
            const sim_vec4f pj = sim_ld4(v.cell_pos + o);
            if (touching(pi, pj, per) && o != m) {
                if (found < QUEUE) {
                    queue[found][threadIdx.x] = o;
                }
                ++found;
                touched += o < m ? 1u : 0u;
            }
            ++tests;
        });
        vi = sim_ld4(v.cell_vel + m);
        const uint32_t queued = found < QUEUE ? found : QUEUE;
        for (uint32_t q = 0; q < queued; ++q) {
            cell_force_add(v, pi, vi, queue[q][threadIdx.x], ph, &fx, &fy, &fz);
        }
        if (found > QUEUE) { /* the contacts past the queue, in the walk's order */
            cell_forces_past_queue<PERIODIC, QUEUE>(v, m, home, lane, LANES, pi, vi, ph, &fx, &fy,
                                                    &fz);
        }
        tests -= lane == 0u ? 1u : 0u; /* itself (in its home row, row 4: lane 0's) */
    }
    for (int o = LANES / 2; o > 0; o >>= 1) { /* the body's threads' sums, in every one */
        fx += __shfl_xor_sync(SIM_FULL_MASK, fx, o);
        fy += __shfl_xor_sync(SIM_FULL_MASK, fy, o);
        fz += __shfl_xor_sync(SIM_FULL_MASK, fz, o);
    }
    if (m < n && lane == 0u) {
        sim_vec4f f4;
        f4.x = fx;
        f4.y = fy;
        f4.z = fz;
        f4.w = 0.0f;
        const uint32_t i = v.cell_body[m];
        if (vel != nullptr) { /* the step's second half (sim_gpu_kick) */
            sim_vec4f vk = vi;
            sim_second_half_f(pi, &vk, &f4, kick.dt, ph, kick.flag, kick.step,
                              kick.perm != nullptr ? kick.perm[i] : i);
            vel[i] = vk;
        }
        force[i] = f4;
    }
    if (count_on && (flags & SIM_GPU_CULL_RECORD)) {
        count_sweep(nc, tests, touched);
    }
}

/* The force on the body at slot m (position pi, velocity vi) from the one at slot o added to the
 * sums, its negative to the other's force (an atomic, others add to it too: one 16-byte vector
 * atomic on Hopper, sim_atomic_add3). */
static __device__ __forceinline__ void cell_pair_add(const cell_view &v, const sim_vec4f &pi,
                                                     const sim_vec4f &vi, uint32_t o,
                                                     const sim_physics_f &ph,
                                                     sim_vec4f *__restrict__ force, float *fx,
                                                     float *fy, float *fz) {
    const sim_vec3f f = sim_contact_force_f(pi, vi, sim_ld4(v.cell_pos + o),
                                            sim_ld4(v.cell_vel + o), &ph, nullptr);
    *fx += f.x;
    *fy += f.y;
    *fz += f.z;
    sim_atomic_add3(force + v.cell_body[o], -f.x, -f.y, -f.z);
}

/* Swept from the cells, each touching pair once (sim_gpu_nlist.pairs_once, at every size), not
 * both directions (cell_sweep_kernel, which also finishes the step). Measured (lattice, whole
 * step, the threads a body as cell_sweep_lanes picks, bench/results/nvidia-h100/cells_once.md):
 * 18 %, 21 % and 26 % faster than both ways at 16,384, 65,536 and 262,144 bodies: half
 * the walk and half the force code, for one 16-byte vector atomic per pair (three scalar ones took
 * ~1.27x as long at 262,144). Body m walks the cells after its own and its own slots after m
 * (cell_near_slots HALF: half the candidates), adds each pair's force to itself and its negative
 * to the other (sim_contact_force: j receives the negative; atomics on force, cleared by the
 * drift), and its own sum once at the end (others add to it too). LANES threads a body share its 5
 * rows as cell_sweep_kernel's share its 9 (thread q of a body rows 4 + q, 4 + q + LANES, ...) and
 * sum their forces by shuffles before the one atomic. The step's second half then waits for every
 * body's sum: it is folded into the next step's drift (drift_bin_kernel), or a pass of its own
 * after a frame's last step. Exact as cell_sweep_kernel; the sums' order follows the atomics.
 * Launch contract: ceil(N LANES / 256) blocks of 256 threads, the LANES threads from LANES m on
 * slot m (guard m < n; every thread runs to the shuffles). Counts (RECORD, count_on): candidates
 * tested and touching pairs, each once. */
template <bool PERIODIC, int LANES>
__global__ void __launch_bounds__(kThreads, sim_min_blocks(256, kCellSweepBlocksPerSm))
    cell_pairs_kernel(uint32_t n, cell_view v, sim_vec4f *__restrict__ force, sim_physics_f ph,
                      sim_gpu_nlist_counts *__restrict__ nc, unsigned flags, int count_on) {
    static_assert(LANES == 1 || LANES == 2 || LANES == 4, "a body's threads within a warp");
    constexpr uint32_t QUEUE = kCellQueue / LANES; /* each thread's */
    sim_chain_enter();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        nc->rebuild = 0u;
        if (flags & SIM_GPU_CULL_RECORD) {
            nc->frame.steps++;
        }
    }
    __shared__ uint32_t queue[QUEUE][kThreads];
    const uint32_t thread = blockIdx.x * kThreads + threadIdx.x;
    const uint32_t m = thread / (uint32_t)LANES, lane = thread % (uint32_t)LANES;
    const uint32_t first = 4u + lane; /* the half stencil's rows: 4 .. 8 */
    uint32_t tests = 0, touched = 0;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    if (m < n) {
        const sim_vec4f pi = sim_ld4(v.cell_pos + m);
        const sim_period_f period = ph.box.period;
        const sim_period_f *per = PERIODIC ? &period : nullptr;
        const uint32_t home = sim_cell_of(&v.g, pi);
        uint32_t found = 0;
        cell_near_slots<kCellSweepUnroll, true>(v, pi, home, first, LANES, m, [&](uint32_t o) {
            const sim_vec4f pj = sim_ld4(v.cell_pos + o);
            if (touching(pi, pj, per)) {
                if (found < QUEUE) {
                    queue[found][threadIdx.x] = o;
                }
                ++found;
            }
            ++tests;
        });
        touched = found;
        const sim_vec4f vi = sim_ld4(v.cell_vel + m);
        const uint32_t queued = found < QUEUE ? found : QUEUE;
        for (uint32_t q = 0; q < queued; ++q) {
            cell_pair_add(v, pi, vi, queue[q][threadIdx.x], ph, force, &fx, &fy, &fz);
        }
        if (found > QUEUE) { /* past the queue: walked again, in the same order */
            uint32_t k = 0;
            cell_near_slots<1, true>(v, pi, home, first, LANES, m, [&](uint32_t o) {
                if (touching(pi, sim_ld4(v.cell_pos + o), per) && k++ >= QUEUE) {
                    cell_pair_add(v, pi, vi, o, ph, force, &fx, &fy, &fz);
                }
            });
        }
    }
    for (int o = LANES / 2; o > 0; o >>= 1) { /* the body's threads' sums, in every one */
        fx += __shfl_xor_sync(SIM_FULL_MASK, fx, o);
        fy += __shfl_xor_sync(SIM_FULL_MASK, fy, o);
        fz += __shfl_xor_sync(SIM_FULL_MASK, fz, o);
    }
    if (m < n && lane == 0u) {
        sim_atomic_add3(force + v.cell_body[m], fx, fy, fz);
    }
    if (count_on && (flags & SIM_GPU_CULL_RECORD)) {
        count_sweep(nc, tests, touched);
    }
}
