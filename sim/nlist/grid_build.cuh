/* SPDX-License-Identifier: MIT
 * nbsim — the neighbour lists' build from a cell grid (cell_grid.h says why and why it is exact),
 * part of nlist_kernels.cu's translation unit (namespace nl; it includes this file after its
 * helpers). A rebuild launches, each kernel returning at once (every block) unless the lists are
 * rebuilt this step (the drift's flag, or forced):
 *   grid_clear_kernel    the cells emptied (a thread per cell)
 *   grid_bin_kernel      each body's cell and its place there (an atomic per body), the build
 *                        positions, the step's list counters reset
 *   grid_place_kernel    each cell's start among the cells' bodies (a warp's 32 cells take
 *                        consecutive places: one atomic per warp)
 *   grid_scatter_kernel  each body's slot at its cell's start plus its place
 *   grid_build_kernel    each body's list from the 27 cells around its own, its own row only
 *                        (half lists j < i, full lists every j != i): no atomics, and a warp
 *                        writes the k-th entries of 32 consecutive bodies together
 * and the cells stay until the next rebuild: a list that overflowed makes the sweep walk them
 * (grid_walk). A body's place among its cell's bodies follows the atomics' order, so a list's
 * order may differ from one run to the next (the tile build's appends are atomics too). */

/* What the kernels read of the grid. */
struct cell_view {
    sim_cell_grid g;
    uint32_t *cell_n, *cell_start, *cell_body, *body_cell, *body_rank;
};

/* Every kernel here is a grid-stride loop over a persistent grid (l->grid_blocks blocks of 256):
 * a step that does not rebuild then costs five launches of a few blocks that return at once, not
 * a block per 256 cells or bodies. */
static __device__ __forceinline__ uint32_t grid_thread() {
    return blockIdx.x * kThreads + threadIdx.x;
}

static __device__ __forceinline__ uint32_t grid_threads() {
    return gridDim.x * kThreads;
}

/* Launch contract: a persistent grid of 256-thread blocks; thread t clears cells t, t + threads,
 * ... */
__global__ void __launch_bounds__(kThreads)
    grid_clear_kernel(cell_view v, const sim_gpu_nlist_counts *__restrict__ nc, int forced) {
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    for (uint32_t c = grid_thread(); c < v.g.cells; c += grid_threads()) {
        v.cell_n[c] = 0u;
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Thread 0
 * resets the lists' counters (rebuild raised: the later kernels see it when forced) and the
 * culling's, and counts the rebuild (RECORD). Cost per body: 16 B read, 28 B written, an atomic
 * on its cell's count. */
__global__ void __launch_bounds__(kThreads)
    grid_bin_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, cell_view v,
                    sim_vec4f *__restrict__ ref, uint32_t *__restrict__ count,
                    sim_gpu_nlist_counts *__restrict__ nc, unsigned flags) {
    const bool forced = (flags & SIM_GPU_NLIST_REBUILD) != 0u;
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        nc->rebuild = 1u;
        nc->overflow = 0u;
        nc->most = 0u;
        nc->cells_placed = 0u;
        if (flags & SIM_GPU_CULL_RECORD) {
            nc->frame.rebuilds++;
        }
    }
    for (uint32_t i = grid_thread(); i < n; i += grid_threads()) {
        const sim_vec4f p = sim_ld4(pos + i);
        const uint32_t c = sim_cell_of(&v.g, p);
        ref[i] = p;
        count[i] = 0u;
        v.body_cell[i] = c;
        v.body_rank[i] = atomicAdd(&v.cell_n[c], 1u);
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the cells (grid-stride, the bound
 * rounded up to whole warps: every lane reaches the shuffles). Cost per cell: 4 B read, 4 B
 * written; an atomic per warp of 32 cells. */
__global__ void __launch_bounds__(kThreads)
    grid_place_kernel(cell_view v, sim_gpu_nlist_counts *__restrict__ nc, int forced) {
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    const uint32_t lane = lane_id(), end = (v.g.cells + 31u) & ~31u;
    for (uint32_t c = grid_thread(); c < end; c += grid_threads()) {
        const uint32_t mine = c < v.g.cells ? v.cell_n[c] : 0u;
        uint32_t upto = mine; /* inclusive prefix over the warp's lanes */
        for (uint32_t o = 1; o < 32u; o <<= 1) {
            const uint32_t below =
                __shfl_sync(SIM_FULL_MASK, upto, (int)(lane >= o ? lane - o : 0u));
            upto += lane >= o ? below : 0u;
        }
        const uint32_t total = __shfl_sync(SIM_FULL_MASK, upto, 31);
        uint32_t base = 0u;
        if (lane == 0u && total != 0u) {
            base = atomicAdd(&nc->cells_placed, total);
        }
        base = __shfl_sync(SIM_FULL_MASK, base, 0);
        if (c < v.g.cells) {
            v.cell_start[c] = base + upto - mine;
        }
    }
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Cost per
 * body: 12 B read, 4 B written (scattered within its cell's neighbourhood). */
__global__ void __launch_bounds__(kThreads)
    grid_scatter_kernel(uint32_t n, cell_view v, const sim_gpu_nlist_counts *__restrict__ nc,
                        int forced) {
    if (!forced && nc->rebuild == 0u) {
        return;
    }
    for (uint32_t i = grid_thread(); i < n; i += grid_threads()) {
        v.cell_body[v.cell_start[v.body_cell[i]] + v.body_rank[i]] = i;
    }
}

/* Calls on_body(j, p_j) for every body j of the 27 cells around `home` (cells of the last build,
 * bodies where they are now). */
template <class OnBody>
static __device__ __forceinline__ void grid_walk(const cell_view &v, uint32_t home,
                                                 const sim_vec4f *__restrict__ pos,
                                                 OnBody &&on_body) {
    SIM_CELL_GRID_FOR_NEAR(&v.g, home, cell, {
        const uint32_t first = v.cell_start[cell], end = first + v.cell_n[cell];
        for (uint32_t m = first; m < end; ++m) {
            const uint32_t j = v.cell_body[m];
            on_body(j, sim_ld4(pos + j));
        }
    });
}

/* Launch contract: a persistent grid of 256-thread blocks over the slots (grid-stride). Body i's
 * row: every j of the cells around its own (half lists j < i, full lists j != i) within reach
 * (sim_nlist_near_pf), stored while fewer than cap, all counted; more than cap raises the
 * overflow (a plain store: every writer writes 1). Cost per body: 27 cells' start and count
 * (8 B each, from L1/L2: Morton-sorted neighbours share cells), per candidate a 4 B slot and a
 * 16 B position (L1/L2) and the 9-instruction test, per entry a 4 B store. */
__global__ void __launch_bounds__(kThreads)
    grid_build_kernel(const sim_vec4f *__restrict__ pos, uint32_t n, cell_view v, float skin,
                      uint32_t *__restrict__ nbr, uint32_t *__restrict__ count, uint32_t stride,
                      uint32_t cap, int full, sim_gpu_nlist_counts *__restrict__ nc,
                      sim_period_f period) {
    if (nc->rebuild == 0u) {
        return;
    }
    const sim_period_f *per = sim_period_or_null(&period);
    for (uint32_t i = grid_thread(); i < n; i += grid_threads()) {
        const sim_vec4f pi = sim_ld4(pos + i);
        uint32_t k = 0;
        grid_walk(v, v.body_cell[i], pos, [&](uint32_t j, const sim_vec4f &pj) {
            if ((full ? j != i : j < i) && sim_nlist_near_pf(pi, pj, skin, per)) {
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
