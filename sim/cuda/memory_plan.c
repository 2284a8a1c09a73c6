/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend's device memory, part by part (nbsim/memory_plan.h): each part is the
 * allocation it names, at the size the backend first makes it (cuda_backend.cu's create_impl,
 * friction_kernels.cu's sim_cuda_friction_alloc and _ready, cuda_lists.cu's cull_alloc,
 * nlist_kernels.cu's sim_gpu_nlist_alloc and its grid, friction's springs beside the entries).
 * Plain arithmetic, so the plan runs on a machine without a GPU, before anything is allocated. */
#include "nbsim/memory_plan.h"

#include <stdio.h>
#include <string.h>

#include "cull/cull_kernels.h"
#include "gpu/device_state.h"
#include "cuda/friction_state.h"
#include "nlist/cell_grid.h"
#include "nlist/nlist.h"
#include "nlist/nlist_kernels.h"
#include "physics/physics.h"
#include "step/backend_impl.h"

/* Flags, energies, counters and events: a few KiB; with the sort's constant part, fixed. */
#define SMALL_FIXED 65536u

static void add(sim_memory_plan *plan, const char *name, double per_body) {
    if (plan->count < SIM_MEMORY_PARTS_MAX && per_body > 0.0) {
        plan->part[plan->count].name = name;
        plan->part[plan->count].per_body = per_body;
        plan->count++;
        plan->per_body += per_body;
    }
}

/* The tile pairs' first capacity (sim_cull_initial_capacity, sim_cull_super_capacity). */
static uint64_t first_list(uint64_t items, uint64_t floor_cap, uint64_t asked) {
    const uint64_t all = sim_t2_u64(items);
    uint64_t cap = asked ? asked : 32u * items;
    cap = asked || cap >= floor_cap ? cap : floor_cap;
    return cap < all ? cap : all;
}

void sim_memory_plan_cuda(uint32_t n, const sim_backend_config *c, const sim_params *p,
                          double r_min, double r_max, uint64_t cells, sim_memory_plan *plan) {
    memset(plan, 0, sizeof *plan);
    plan->n = n;
    if (!(r_max > 0.0) || !(r_min > 0.0)) {
        r_max = 1.0;
        r_min = 1.0 / SIM_MEMORY_PLAN_R_RATIO;
    }
    const double bodies = n > 0 ? (double)n : 1.0;
    const int friction = sim_params_have_friction(p);
    add(plan, "bodies: position, velocity, force, speed", SIM_GPU_BYTES_PER_BODY);
    add(plan, "spin, torque, spin by user index", SIM_GPU_FRICTION_BYTES_PER_BODY);
    uint64_t fixed = SMALL_FIXED;
    if (c->cull) {
        add(plan, "culling: sort keys, body order, sorted copies",
            SIM_GPU_CULL_BYTES_PER_BODY + SIM_MEMORY_SORT_PER_BODY);
        fixed += SIM_MEMORY_SORT_FIXED;
        const uint64_t tile = c->tile ? c->tile : 32u;
        const uint64_t tiles = ((uint64_t)n + tile - 1u) / tile;
        const uint64_t supers = (tiles + SIM_CULL_SUPER - 1u) / SIM_CULL_SUPER;
        const uint64_t boxes = (tiles + supers) * sizeof(sim_cull_box);
        const uint64_t pairs = (first_list(tiles, 4096u, sim_backend_tuning_of(c).cull_capacity) +
                                first_list(supers, 1024u, sim_backend_tuning_of(c).cull_capacity)) *
                               sizeof(sim_tile2);
        add(plan, "culling: tile boxes, tile-pair lists", (double)(boxes + pairs) / bodies);
        /* the neighbour lists (every culled CUDA run has them: the cells' sweep keeps them for
         * a return to lists) */
        const double entries =
            (double)sim_nlist_first_cap(sim_backend_tuning_of(c).nlist_capacity) * sim_nlist_stride(n) / bodies;
        add(plan, "neighbour lists: counts, build positions", SIM_GPU_NLIST_BYTES_PER_BODY);
        add(plan, "neighbour lists: entries", entries * sizeof(uint32_t));
        if (sim_gpu_nlist_wants_grid(c, c->multi.world)) {
            const double per_body_cells =
                cells > 0 ? (double)cells / bodies : SIM_CELL_GRID_CELLS_PER_BODY;
            add(plan, "cell grid: bodies by cell, cells",
                SIM_GPU_NLIST_GRID_BYTES_PER_BODY +
                    per_body_cells * SIM_GPU_NLIST_GRID_BYTES_PER_CELL);
        }
        if (friction) {
            add(plan, "friction: springs beside the entries",
                entries * SIM_GPU_FRIC_LIST_BYTES_PER_ENTRY + SIM_GPU_FRIC_LIST_BYTES_PER_BODY);
        }
        /* the first doubling: the new entries before the old are freed */
        plan->growth = (uint64_t)(2.0 * entries * bodies *
                                  (sizeof(uint32_t) +
                                   (friction ? SIM_GPU_FRIC_LIST_BYTES_PER_ENTRY : 0u)));
    }
    if (friction) { /* two tables, each body's row sized for its widest neighbours */
        const double slots = (double)sim_friction_slots(r_max, r_min, n);
        add(plan, "friction: contact histories (two tables)",
            2.0 * (slots * (sizeof(uint32_t) + sizeof(sim_contact_history_f)) + 4.0) + 8.0);
    }
    plan->fixed = fixed;
    plan->need = (uint64_t)(plan->per_body * (double)n) + fixed;
}

uint32_t sim_memory_plan_largest(const sim_backend_config *c, const sim_params *p, double r_min,
                                 double r_max, uint32_t limit, uint64_t bytes) {
    /* the need grows with n: bisect */
    uint32_t lo = 0, hi = limit;
    while (lo < hi) {
        const uint32_t mid = lo + (uint32_t)(((uint64_t)hi - lo + 1u) / 2u);
        sim_memory_plan plan;
        sim_memory_plan_cuda(mid, c, p, r_min, r_max, 0, &plan);
        if (plan.need <= bytes) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

/* "1,234,567" */
static const char *grouped(uint64_t v, char *buf, size_t cap) {
    char digits[32];
    const int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < cap; ++i) {
        if (i > 0 && (len - i) % 3 == 0) {
            buf[k++] = ',';
        }
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

sim_status sim_memory_plan_check(const sim_memory_plan *plan, const char *gpu, sim_error *err) {
    if (plan->free_bytes == 0 || plan->need <= plan->free_bytes) {
        return SIM_OK;
    }
    char n[32], most[32];
    return sim_fail(err, SIM_OUT_OF_MEMORY,
                    "N = %s bodies need %.2f GB of GPU memory (%.0f bytes a body; nbsim --dry-run "
                    "lists them), and %s has %.2f GB free: at most %s bodies fit with these "
                    "settings",
                    grouped(plan->n, n, sizeof n), (double)plan->need * 1e-9, plan->per_body, gpu,
                    (double)plan->free_bytes * 1e-9, grouped(plan->largest_n, most, sizeof most));
}

void sim_memory_plan_text(const sim_memory_plan *plan, char *out, size_t cap) {
    size_t at = 0;
    out[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        const int put = snprintf(out + (at < cap ? at : cap - 1u), at < cap ? cap - at : 1u,      \
                                 __VA_ARGS__);                                                     \
        at += put > 0 ? (size_t)put : 0u;                                                          \
    } while (0)
    for (int k = 0; k < plan->count; ++k) {
        PUT("  %-48s %8.1f B/body %10.2f GB\n", plan->part[k].name, plan->part[k].per_body,
            plan->part[k].per_body * plan->n * 1e-9);
    }
    PUT("  %-48s %8.1f B/body %10.2f GB (and %.2f GB fixed)\n", "all", plan->per_body,
        (double)plan->need * 1e-9, (double)plan->fixed * 1e-9);
    if (plan->growth > 0) {
        PUT("  %-48s %17s %10.2f GB more while they grow\n", "neighbour lists doubling", "",
            (double)plan->growth * 1e-9);
    }
#undef PUT
}
