/* SPDX-License-Identifier: MIT
 * nbsim — the neighbour lists' build from a cell grid (cell_grid.h says why and why it is exact),
 * part of nlist_kernels.cu's translation unit (namespace nl; it includes this file after its
 * helpers). A rebuild launches, each kernel returning at once (every block) unless the lists are
 * rebuilt this step (the drift's flag, or forced):
 *   grid_clear_kernel    the cells emptied (a thread per cell)
 *   grid_bin_kernel      each body's cell and its place there (an atomic per body), the build
 *                        positions, the step's list counters reset
 *   grid_place_kernel    each cell's start among the cells' bodies (a block's 256 cells take
 *                        consecutive places: one atomic per block)
 *   grid_scatter_kernel  each body's slot and position at its cell's start plus its place
 *   grid_build_kernel    each body's list from the 27 cells around its own, its own row only
 *                        (half lists j < i, full lists every j != i): no atomics; the threads
 *                        take the bodies in cell order (a warp's lanes walk neighbouring cells)
 * and the cells stay until the next rebuild: a list that overflowed makes the sweep walk them
 * (grid_walk). A body's place among its cell's bodies follows the atomics' order, so a list's
 * order may differ from one run to the next (the tile build's appends are atomics too). */

/* What the kernels read of the grid. */
struct cell_view {
    sim_cell_grid g;
    sim_cell_range *cell;
    uint32_t *cell_body, *body_cell, *body_rank;
    sim_vec4f *cell_pos; /* the build positions in cell_body's order */
};

/* Blocks of 256 per SM the persistent grid is sized for: a full sm_90 SM, at up to 32
 * registers a thread (the launch bounds hold every kernel here to it). */
constexpr int kGridBlocksPerSm = 8;

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

/* Launch contract: a persistent grid of 256-thread blocks; thread t clears cells t, t + threads,
 * ... */
__global__ void __launch_bounds__(kThreads, kGridBlocksPerSm)
    grid_clear_kernel(cell_view v, const sim_gpu_nlist_counts *__restrict__ nc, int forced) {
    sim_chain_enter();
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    for (uint32_t c = grid_thread(); c < v.g.cells; c += grid_threads()) {
        v.cell[c].n = 0u;
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Thread 0
 * resets the lists' counters (rebuild raised: the later kernels see it when forced) and the
 * culling's, and counts the rebuild (RECORD). Cost per body: 16 B read, 28 B written, an atomic
 * on its cell's count. */
__global__ void __launch_bounds__(kThreads, kGridBlocksPerSm)
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
        v.body_rank[i] = atomicAdd(&v.cell[c].n, 1u);
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the cells (grid-stride, the bound
 * rounded up to whole blocks: every thread reaches the barriers). A block's 256 cells take
 * consecutive places: a scan over the warps, then one atomic per block. Cost per cell: 4 B read,
 * 4 B written. One atomic per warp on the one cursor (the first form) was 9 us at 262,144 bodies
 * (ncu, H100): 6,750 atomics on one address. */
__global__ void __launch_bounds__(kThreads, kGridBlocksPerSm)
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
        const uint32_t mine = c < v.g.cells ? v.cell[c].n : 0u;
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
            v.cell[c].start = block_base + below_warp[warp] + upto - mine;
        }
        __syncthreads(); /* the shared words are the next round's */
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Cost per
 * body: 28 B read (its cell, place and position, the cell's start), 20 B written (its slot and
 * position, scattered within its cell's neighbourhood). The positions in cell order: the build
 * then reads a candidate's beside its slot, not through it. */
__global__ void __launch_bounds__(kThreads, kGridBlocksPerSm)
    grid_scatter_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, cell_view v,
                        const sim_gpu_nlist_counts *__restrict__ nc, int forced) {
    sim_chain_enter();
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    for (uint32_t i = grid_thread(); i < n; i += grid_threads()) {
        const uint32_t m = v.cell[v.body_cell[i]].start + v.body_rank[i];
        v.cell_body[m] = i;
        v.cell_pos[m] = sim_ld4(pos + i);
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

/* Calls on_body(j, p_j) for every body j of the 27 cells around `home` with its build position
 * (cell_pos), a row of (up to) 3 cells along x at a time: the row's ranges loaded together (one
 * 8-byte load per cell, start and count side by side: as two arrays the compiler held one
 * start's load back until the counts had come), then its bodies walked as one run, candidate t
 * at cell_body[t + base] with base the start of t's cell less the bodies of the row's cells
 * before it. Where the cells' ranges are contiguous (within an aligned group of 256 cells the
 * place kernel gives them consecutive places: most rows) the base is the same for all: one
 * range, and consecutive candidates read consecutive slots and positions. */
template <class OnBody>
static __device__ __forceinline__ void grid_rows(const cell_view &v, uint32_t home,
                                                 OnBody &&on_body) {
    SIM_CELL_GRID_FOR_ROWS(&v.g, home, lo, mid, hi, {
        const sim_cell_range none = {0u, 0u};
        const sim_cell_range c0 = lo != SIM_CELL_NONE ? v.cell[lo] : none;
        const sim_cell_range c1 = v.cell[mid];
        const sim_cell_range c2 = hi != SIM_CELL_NONE ? v.cell[hi] : none;
        const uint32_t n0 = c0.n, n01 = n0 + c1.n, total = n01 + c2.n;
        const uint32_t base1 = c1.start - n0, base2 = c2.start - n01; /* mod 2^32 */
        /* one candidate at a time: unrolled by 2, the build spills its loop counter */
        _Pragma("unroll 1")
        for (uint32_t t = 0; t < total; ++t) {
            const uint32_t m = t + (t < n0 ? c0.start : t < n01 ? base1 : base2);
            on_body(v.cell_body[m], sim_ld4(v.cell_pos + m));
        }
    });
}

/* Launch contract: a persistent grid of 256-thread blocks over the cell-ordered slots
 * (grid-stride): thread m lists body i = cell_body[m], its row every j of the cells around its own
 * (half lists j < i, full lists j != i) within reach (sim_nlist_near_pf), stored while fewer than
 * cap, all counted; more than cap raises the overflow (a plain store: every writer writes 1).
 *
 * Why in cell order, not body order: a warp's 32 bodies then lie in consecutive cells of one row,
 * so the lanes' candidates at each turn of the walk are neighbouring slots, a few cache lines per
 * load; in body (Morton) order each lane walked its own rows, 32 lines per load, and the build was
 * bound by those L1 wavefronts (ncu, H100, lattice of 262,144: 55 us, L1 57 %, DRAM 7 %). The
 * rows' stores (nbr[k * stride + i]) are scattered instead: ~10 per body, against ~90 loads.
 *
 * Cost per body: its slot and build position (coalesced), 27 cells' start and count (8 B each, a
 * row's 3 loads together), per candidate a 4 B slot and the 16 B position beside it (independent
 * loads) and the 9-instruction test, per entry a 4 B store. */
__global__ void __launch_bounds__(kThreads, kGridBlocksPerSm)
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
