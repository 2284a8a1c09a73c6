/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: the neighbour lists on the device (nlist.h says what they
 * are and why they are exact) and the host drivers of their kernels. A listed step runs, on the
 * main stream and without a host sync:
 *   sim_gpu_nlist_drift              first half kick + drift, each body's displacement since the
 *                                    build checked (a flag on the device), forces cleared
 *   [sim_gpu_sort_bodies, on the host's clock: the lists are then rebuilt whatever they say]
 *   sim_gpu_nlist_boxes              tile boxes inflated by half the skin; returns at once unless
 *   sim_gpu_cull_top / _second       the flag is up (or the rebuild is forced); the culling passes
 *   sim_gpu_nlist_build              and the build likewise (from a cell grid, grid_build.cuh:
 *                                    four launches alike, and no boxes or culling passes)
 *   sim_gpu_nlist_forces             the contact forces over the lists (or, when one overflowed,
 *                                    over the build's tile pairs); clears the flag
 *   [body forces and the second half kick, integrate.h]
 * so a step that does not rebuild costs, besides its sweeps, four launches that return at once
 * (five with two culling levels). Swept straight from the cells (sim_gpu_nlist.direct,
 * grid_build.cuh) a step is the drift that bins (and kicks the step before's second half), the
 * place, the scatter and the cell sweep. The counters (rebuilds, fallbacks, the most entries of a
 * body, tests and touching pairs) stay on the device until the frame's one sync. */
#ifndef SIM_NLIST_KERNELS_H
#define SIM_NLIST_KERNELS_H

#include "gpu/device_state.h"
#include "cull/cull_kernels.h"
#include "gpu/friction.h"
#include "nlist/cell_grid.h"
#include "nlist/nlist.h"
#include "physics/physics.h"
#include "nbsim/internal/backend.h"

/* Per frame: zeroed as a whole before a frame's steps; recording kernels only. */
typedef struct {
    uint32_t rebuilds;       /* steps that rebuilt the lists */
    uint32_t fallback_steps; /* steps that swept the tile pairs: a list had overflowed */
    uint32_t peak;           /* the most entries one body needed */
    uint32_t steps;          /* steps swept (lists or cells): the cadence's denominator */
    unsigned long long tests[SIM_GPU_COUNT_SLOTS];    /* pair tests of the contact sweeps */
    unsigned long long contacts[SIM_GPU_COUNT_SLOTS]; /* touching pairs they found, each once */
} sim_gpu_nlist_frame;

typedef struct {
    uint32_t rebuild;  /* this step rebuilds: raised by the drift's check, or forced; the contact
                        * sweep lowers it */
    uint32_t overflow; /* some body had more neighbours than cap at the last build */
    uint32_t most;     /* the most entries of one body at the last build (found by the sweeps) */
    uint32_t cells_placed; /* a grid build's cursor: bodies of the cells given a place so far */
    sim_gpu_nlist_frame frame;
} sim_gpu_nlist_counts;

/* A grid cell's bodies: cell_body[start, start + n). Start and count side by side, 8-byte
 * aligned: one load gives both (the build loads a row's three cells at once, grid_build.cuh). */
typedef struct
#if defined(__GNUC__) || defined(__CUDACC__)
    __attribute__((aligned(8)))
#endif
{
    uint32_t start, n;
} sim_cell_range;

typedef struct {
    uint32_t *nbr;                /* d_: slot-major, nbr[k * stride + i] (nlist.h) */
    uint32_t *count;              /* d_: neighbours of each slot at the last build (> cap: some
                                   * were not stored) */
    sim_vec4f *ref;               /* d_: positions at the last build (NaN before the first) */
    sim_gpu_nlist_counts *counts; /* d_ */
    uint32_t n, stride, cap;      /* slots, entries between neighbour k and k + 1, per body */
    int half;                     /* each pair in its larger slot's list only (atomics on j) */
    float skin;                   /* [m] */
    int build_grid;               /* blocks of the persistent build */
    int grid_blocks;              /* blocks of the cell grid's kernels (grid-stride) */
    int pairs_once;  /* the cells' sweep takes each pair once (cell_pairs_kernel) */
    int kick_apart;  /* each pair once, the second half in a pass of its own (NBSIM_KICK_APART) */
    int sweep_lanes; /* threads per body of the cells' sweep: 4, 2 or 1, the most with which the
                      * bodies' threads still fit on the GPU at once (grid_build.cuh) */
    int chained; /* the grid's kernels launched as programmatic dependents (compute 9.0 on) */
    /* The box's periods (physics.h; all 0: walls), the backend's, copied in before each cull:
     * builds, sweeps and the displacement check take minimum images through them. */
    sim_period_f period;
    /* The cell grid the lists are built from (cell_grid.h; grid.cells 0: from the culled tile
     * pairs), kept from one build to the next: a list that overflowed sweeps its cells instead.
     * The cells' bodies are in cell_body, cell c's at cell_range[c], and their build positions
     * beside them in cell_pos. */
    sim_cell_grid grid;
    uint32_t grid_cap;   /* cells allocated */
    sim_cell_range *cell_range; /* d_: each cell's bodies at the last build */
    uint32_t *cell_body; /* d_: slots, cell by cell */
    uint32_t *body_cell; /* d_: each slot's cell at the last build */
    uint32_t *body_rank; /* d_: its place among its cell's bodies */
    sim_vec4f *cell_pos; /* d_: cell_body's positions at the last build: the build reads a
                          * candidate's beside its slot, not through it */
    uint32_t *cell_fill; /* d_: per cell, bodies binned since its last place (0 between) */
    sim_vec4f *cell_vel; /* d_: cell_body's velocities, swept from the cells */
    /* Swept straight from the cells this frame (grid_build.cuh; nlist.h says when): no lists,
     * the drift bins, every step places and scatters, the contacts are cell_sweep_kernel's. */
    int direct;
} sim_gpu_nlist;

/* Bytes of the lists besides the entries: per body a count and a position; a grid build's cell,
 * place, and slot and position by cell too, and per cell a count and a start. */
#define SIM_GPU_NLIST_BYTES_PER_BODY (4u + 16u)
#define SIM_GPU_NLIST_GRID_BYTES_PER_BODY (12u + 16u + 16u)
#define SIM_GPU_NLIST_GRID_BYTES_PER_CELL 12u

/* Allocates lists for n slots, cap entries each (their positions NaN: the first use rebuilds);
 * SIM_OUT_OF_MEMORY names them. Free releases all of it (safe on a zeroed struct). */
sim_status sim_gpu_nlist_alloc(sim_gpu_nlist *l, uint32_t n, uint32_t cap, int half, int sm_count,
                               cudaStream_t s, sim_error *err);
void sim_gpu_nlist_free(sim_gpu_nlist *l);
/* Whether the CUDA backend lists from the cell grid where sim_cell_grid_shape gives one: one rank
 * of `world` (several list their tile rows) unless the tile pairs are asked for. The memory check
 * and the lists' preparation both ask it. */
static inline int sim_gpu_nlist_wants_grid(const sim_backend_config *c, int world) {
    return world <= 1 && sim_backend_tuning_of(c).nlist_build != SIM_NLIST_BUILD_TILES;
}

/* The lists built from grid g (cell_grid.h) from now on, or (g NULL or no cells) from the culled
 * tile pairs; the cells (re)allocated when more are needed. *changed: the way or the shape
 * differs from before (the caller then has the lists rebuilt before anything reads them). */
sim_status sim_gpu_nlist_use_grid(sim_gpu_nlist *l, const sim_cell_grid *g, int *changed,
                                  sim_error *err);
/* The entries reallocated with cap per body (contents lost: the next step must rebuild). */
sim_status sim_gpu_nlist_realloc(sim_gpu_nlist *l, uint32_t cap, sim_error *err);
uint64_t sim_gpu_nlist_bytes(const sim_gpu_nlist *l);

/* Flags of the list kernels: the culling flags (cull_kernels.h: RECORD, SORTED), a forced
 * rebuild (the stepper's SIM_STEP_REBUILD); swept from the cells, BINNED: the drift binned the
 * bodies this step (sim_gpu_nlist_build then only places and scatters them, unless they were
 * re-sorted since), and CELLS: the energy's and contacts' sweeps walk the cells (no lists). */
enum { SIM_GPU_NLIST_REBUILD = 16u, SIM_GPU_NLIST_CELLS = 32u, SIM_GPU_NLIST_BINNED = 64u };

/* A step's second half on the device, out of its own pass (sim_gpu_nlist.direct, where the contact
 * forces are the whole of F: no ATM, one rank, no friction): the body forces, the second half
 * kick and the instability flag of integrate.h's sim_cuda_verlet_second (gpu/second_half.cuh),
 * folded into the cells' sweep (both directions: every body's force is whole there) or, each
 * pair once, into the next step's drift (sim_gpu_nlist_drift); one pass over the bodies a step
 * less. */
typedef struct {
    float dt;
    uint64_t *flag;       /* d_: the instability flag */
    uint32_t step;        /* the step of the frame */
    const uint32_t *perm; /* d_: slot -> user index (NULL: identity) */
} sim_gpu_kick;

/* The first half kick and drift (integrate.h's), each body's displacement from l->ref checked
 * against half the skin (the flag raised), and the forces cleared for the sweep; with friction
 * (spin, torque: slot order; NULL without) the spin's first half kick in the same pass. Swept from
 * the cells (l->direct): the bodies binned too (drift_bin_kernel), and with last (else NULL)
 * the step before's second half first, by the forces its sweep left (each pair once: the body
 * forces added here, ph's), as sim_cuda_verlet_second would have done it, bit for bit. */
sim_status sim_gpu_nlist_drift(const sim_gpu_bodies *b, const sim_gpu_nlist *l, float dt,
                               sim_vec4f *spin, const sim_vec4f *torque, const sim_gpu_kick *last,
                               const sim_physics_f *ph, cudaStream_t s, sim_error *err);
/* The check alone, for the bodies where they are (the test hooks, outside a step). */
sim_status sim_gpu_nlist_check(const sim_gpu_bodies *b, const sim_gpu_nlist *l, cudaStream_t s,
                               sim_error *err);
/* When rebuilding: the tile and super-tile boxes with each body's interval widened by half the
 * skin, the build positions, the counts cleared and the step's culling counters zeroed. */
sim_status sim_gpu_nlist_boxes(const sim_gpu_bodies *b, const sim_gpu_cull *c,
                               const sim_gpu_nlist *l, unsigned flags, cudaStream_t s,
                               sim_error *err);
/* When rebuilding: the lists from the grid (l->grid.cells > 0: the build positions, the counts,
 * the step's counters too; sim_gpu_nlist_boxes and the culling passes are then not run), or from
 * the culled tile pairs (or from every tile pair of the rows, when that list overflowed; records
 * the tile list's counts as a culled sweep does). */
sim_status sim_gpu_nlist_build(const sim_gpu_bodies *b, const sim_gpu_cull *c,
                               const sim_gpu_nlist *l, unsigned flags, cudaStream_t s,
                               sim_error *err);

/* The contact forces over the lists, into forces cleared by the drift (or by the caller);
 * count_contacts 0: the touching pairs and tests are not counted. Swept from the cells
 * (l->direct): cell_sweep_kernel stores every body's force (nothing cleared before), and with
 * kick (else NULL) finishes the step. */
sim_status sim_gpu_nlist_forces(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                const sim_gpu_cull *c, const sim_gpu_nlist *l, unsigned flags,
                                int count_contacts, const sim_gpu_kick *kick, cudaStream_t s,
                                sim_error *err);
/* sim_gpu_nlist_forces with friction (gpu/friction.h): the springs beside the entries
 * (springs: cap x stride of them, their owned counts zeroed by the caller), a spring not current
 * there taken from fric's last table; the torques into fric->torque (zeroed by the caller);
 * forces cleared as there. A list that overflowed sweeps the tile pairs with the tables. */
sim_status sim_gpu_nlist_friction(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_gpu_cull *c, const sim_gpu_nlist *l,
                                  const sim_gpu_fric *fric, const sim_gpu_fric_list *springs,
                                  unsigned flags, int count_contacts, cudaStream_t s,
                                  sim_error *err);
/* The springs current beside the entries, and a rebuild's carry, into `into`'s store table (the
 * last step's: see sim_cuda_friction_flush_view), made stale: forced, or (0) only when the lists
 * are rebuilt this step, on the device's flag. */
sim_status sim_gpu_nlist_friction_flush(const sim_gpu_nlist *l, const sim_gpu_fric *into,
                                        const sim_gpu_fric_list *springs, int forced,
                                        cudaStream_t s, sim_error *err);
/* The contact potential over the lists, added to *d_energy (not timed). */
/* When the lists are rebuilt this step (the device's flag, or forced), before
 * sim_gpu_nlist_boxes: each slot's current springs carried beside the old lists for the sweep
 * after the build (gpu/friction.h); the slots must not change before it (a re-sort flushes). */
sim_status sim_gpu_nlist_friction_carry(const sim_gpu_nlist *l, const sim_gpu_fric_list *springs,
                                        int forced, cudaStream_t s, sim_error *err);
/* After sim_gpu_nlist_build: when the lists overflowed (the device's flag), the carry into the
 * table as the flush does (the sweep falls back to the tile pairs, which read the tables). */
sim_status sim_gpu_nlist_friction_overflowed(const sim_gpu_nlist *l, const sim_gpu_fric *into,
                                             const sim_gpu_fric_list *springs, cudaStream_t s,
                                             sim_error *err);
sim_status sim_gpu_nlist_energy(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                const sim_gpu_cull *c, const sim_gpu_nlist *l, double *d_energy,
                                cudaStream_t s, sim_error *err);
/* The touching pairs the lists hold, in user indices (slot s is body perm[s]; perm NULL:
 * identity), i > j, appended while fewer than cap, all counted in *d_count; through the minimum
 * image on ph's periodic axes (nothing else of ph is read). */
sim_status sim_gpu_nlist_contacts(const sim_gpu_bodies *b, const sim_physics_f *ph,
                                  const sim_gpu_cull *c,
                                  const sim_gpu_nlist *l, const uint32_t *perm,
                                  sim_body_pair *d_out, uint32_t cap, uint32_t *d_count,
                                  cudaStream_t s, sim_error *err);

#endif /* SIM_NLIST_KERNELS_H */
