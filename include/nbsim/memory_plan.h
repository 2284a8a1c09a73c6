/* SPDX-License-Identifier: MIT
 * nbsim — the GPU memory a run needs, planned from N and the settings before anything is built
 * or allocated: its parts (bytes per body, and fixed bytes), the extra the neighbour lists take
 * while they grow, against what the device has free, and the largest N that fits. The CUDA
 * backend allocates exactly these parts (sim/cuda/memory_plan.c names the allocation behind each)
 * and checks the plan again, with the bodies' radii, before it allocates; the session refuses an N
 * that does not fit before it builds the scene; `nbsim --dry-run` prints the plan, and the summary
 * reports each part's bytes per body. */
#ifndef SIM_MEMORY_PLAN_H
#define SIM_MEMORY_PLAN_H

#include "nbsim/config.h"
#include "nbsim/params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_MEMORY_PARTS_MAX 12

typedef struct {
    const char *name; /* "bodies: position, velocity, force" */
    double per_body;  /* [bytes] */
} sim_memory_part;

typedef struct sim_memory_plan {
    uint32_t n;
    int count;
    sim_memory_part part[SIM_MEMORY_PARTS_MAX];
    double per_body;    /* the parts' sum [bytes] */
    uint64_t fixed;     /* bytes that do not grow with N: the sort's scratch's constant, counters */
    uint64_t need;      /* n * per_body + fixed: what the backend allocates at its start */
    uint64_t growth;    /* more, for a moment, when the neighbour lists double (old and new both
                         * allocated) */
    uint64_t free_bytes, total_bytes; /* the device's when planned; 0: no device asked */
    uint32_t limit;     /* the most bodies these settings take besides memory (size_limits.h) */
    uint32_t largest_n; /* the most bodies whose need fits free_bytes, at most `limit` */
} sim_memory_plan;

/* CUB's radix sort scratch, which only CUB on a device can say (sim_gpu_sort_temp_bytes): its
 * decoupled look-back keeps a few counters per tile of keys, bounded in a plan by this many bytes
 * a body and fixed bytes; the backend puts CUB's own figure in their place. */
#define SIM_MEMORY_SORT_PER_BODY 1.0
#define SIM_MEMORY_SORT_FIXED (1u << 20)

/* The radii a plan assumes before the bodies exist: the built-in scenes' widest spread (the
 * friction tables' rows grow with r / r_min). The backend plans again with the real ones. */
#define SIM_MEMORY_PLAN_R_RATIO 1.5

/* The plan of the CUDA backend for n bodies under config c and params p, the bodies' radii
 * between r_min and r_max [m] (0, 0: SIM_MEMORY_PLAN_R_RATIO) and the cell grid's cells (0: the
 * most it takes, SIM_CELL_GRID_CELLS_PER_BODY a body), without asking a device (free_bytes,
 * total_bytes and largest_n left 0). Pure arithmetic: runs without a GPU. */
void sim_memory_plan_cuda(uint32_t n, const sim_backend_config *c, const sim_params *p,
                          double r_min, double r_max, uint64_t cells, sim_memory_plan *plan);

/* The largest n <= limit whose plan's need fits `bytes`, 0 when none does. */
uint32_t sim_memory_plan_largest(const sim_backend_config *c, const sim_params *p, double r_min,
                                 double r_max, uint32_t limit, uint64_t bytes);
/* (the cells of a grid scale with N: the largest N is planned at the most a body takes) */

/* SIM_OUT_OF_MEMORY when the plan's need passes its free_bytes: "N = ... bodies need ... GB of GPU
 * memory (... bytes a body), and <gpu> has ... GB free: at most ... bodies fit"; else SIM_OK. */
sim_status sim_memory_plan_check(const sim_memory_plan *plan, const char *gpu, sim_error *err);

/* The plan as lines of text ("  bodies: position, velocity, force   52.0 B/body   10.4 GB")
 * into out (cap bytes). */
void sim_memory_plan_text(const sim_memory_plan *plan, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SIM_MEMORY_PLAN_H */
