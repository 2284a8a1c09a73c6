/* SPDX-License-Identifier: MIT
 * nbsim — which launch and block covers each part of a map's domain (the viewer's map inset). */
#include "nbsim/map_cover.h"

#include <stdlib.h>
#include <string.h>

#include "nbsim/maps_check.h"

typedef struct {
    float order_sum; /* sum of the blocks' positions in their launch's order, 0..1 */
    uint32_t hits;
    int16_t vote; /* Boyer-Moore majority vote over the blocks' launches */
    int32_t votes;
    uint64_t first; /* per_block: the first block (global index) + 1 */
} cell_acc;

typedef struct {
    sim_map_cover *c;
    const sim_map_plan *plan;
    uint32_t span; /* tiles per side of one of the plan's items */
    cell_acc *acc;
    uint64_t first[SIM_MAX_LAUNCHES + 1]; /* global index of each launch's first block */
} builder;

/* Adds one block to a cell. */
static void add(cell_acc *a, int launch, float order, uint64_t g) {
    a->order_sum += order;
    a->hits++;
    if (a->votes == 0) {
        a->vote = (int16_t)launch;
        a->votes = 1;
    } else {
        a->votes += a->vote == launch ? 1 : -1;
    }
    if (a->first == 0) {
        a->first = g + 1;
    }
}

/* One block's contribution: its item pair covers tiles [row * span, +span) x [col * span,
 * +span), so every cell those touch on or below the diagonal. */
static void visit(builder *b, int launch, uint32_t bx, uint32_t by, uint32_t bz, uint64_t g) {
    uint32_t t[3];
    if (!sim_map_run_block(b->plan, launch, bx, by, bz, t)) {
        return;
    }
    const sim_map_cover *c = b->c;
    uint32_t row = t[0], col = t[1];
    if (c->dim == 3) { /* the layer's triangle: rows J, columns K */
        if (t[0] != c->layer) {
            return;
        }
        row = t[1];
        col = t[2];
    }
    const uint64_t top = (uint64_t)row * b->span, left = (uint64_t)col * b->span;
    if (col > row || top >= c->n) {
        return; /* outside the domain: a broken map, nothing to draw */
    }
    const uint64_t in_launch = b->first[launch + 1] - b->first[launch];
    const float order =
        in_launch > 1 ? (float)((double)(g - b->first[launch]) / (double)(in_launch - 1)) : 0.0f;
    const uint64_t bottom = top + b->span - 1u < c->n ? top + b->span - 1u : c->n - 1u;
    const uint64_t right = left + b->span - 1u < c->n ? left + b->span - 1u : c->n - 1u;
    for (uint64_t r = top / c->per_cell; r <= bottom / c->per_cell; ++r) {
        for (uint64_t q = left / c->per_cell; q <= right / c->per_cell && q <= r; ++q) {
            add(&b->acc[r * c->side + q], launch, order, g);
        }
    }
}

static void run_all(builder *b) {
    const sim_map_plan *plan = b->plan;
    uint64_t g = 0;
    for (int l = 0; l < plan->launch_count; ++l) {
        const uint32_t *grid = plan->launch[l].grid;
        for (uint32_t z = 0; z < grid[2]; ++z) {
            for (uint32_t y = 0; y < grid[1]; ++y) {
                for (uint32_t x = 0; x < grid[0]; ++x, ++g) {
                    visit(b, l, x, y, z, g);
                }
            }
        }
    }
}

/* Blocks at frac(k * golden ratio) of the launch order: evenly spread over every stretch of the
 * order, so each part of the domain gets its share whatever the grid's width. */
static void run_sample(builder *b) {
    const double phi = 0.6180339887498949;
    const sim_map_plan *plan = b->plan;
    double x = 0.0;
    for (uint32_t k = 0; k < SIM_MAP_COVER_SAMPLES; ++k) {
        x += phi;
        x -= (double)(uint64_t)x;
        const uint64_t g = (uint64_t)(x * (double)plan->blocks);
        int l;
        uint32_t bx, by, bz;
        if (sim_map_plan_block_at(plan, g, &l, &bx, &by, &bz)) {
            visit(b, l, bx, by, bz, g);
        }
    }
}

sim_status sim_map_cover_build(sim_map_cover *c, const sim_map_plan *plan, sim_error *err) {
    return sim_map_cover_build_grouped(c, plan, plan->n, 1u, err);
}

sim_status sim_map_cover_build_grouped(sim_map_cover *c, const sim_map_plan *plan, uint32_t tiles,
                                       uint32_t span, sim_error *err) {
    SIM_ASSERT(span >= 1u && (plan->dim == 2 || span == 1u));
    memset(c, 0, sizeof *c);
    c->dim = plan->dim;
    c->map = plan->map;
    c->n = tiles;
    c->span = span;
    c->layer = plan->n > 0 ? plan->n - 1u : 0u;
    c->per_cell = (tiles + SIM_MAP_COVER_SIDE - 1u) / SIM_MAP_COVER_SIDE;
    c->per_cell = c->per_cell > 0u ? c->per_cell : 1u;
    c->side = (tiles + c->per_cell - 1u) / c->per_cell;
    c->launches = plan->launch_count;
    c->blocks = plan->blocks;
    c->useful = plan->useful;
    c->waste = plan->dim == 2 ? plan->map == SIM_PAIR_MAP_BB : plan->map == SIM_TRIPLET_MAP_BB;
    /* 3-D keeps only one layer's blocks: sampling would leave it nearly empty. */
    c->exact = plan->blocks <= (plan->dim == 3 ? 64ull * SIM_MAP_COVER_EXACT : SIM_MAP_COVER_EXACT);
    c->per_block = c->exact && tiles <= SIM_MAP_COVER_BLOCK_TILES;
    if (c->side == 0u) {
        return SIM_OK;
    }
    builder b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.plan = plan;
    b.span = span;
    b.acc = calloc((size_t)c->side * c->side, sizeof *b.acc);
    if (b.acc == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory to draw the map");
    }
    uint64_t g = 0;
    for (int l = 0; l < plan->launch_count; ++l) {
        const uint32_t *grid = plan->launch[l].grid;
        b.first[l] = g;
        g += (uint64_t)grid[0] * grid[1] * grid[2];
    }
    b.first[plan->launch_count] = g;
    if (c->exact) {
        run_all(&b);
    } else {
        run_sample(&b);
    }
    for (uint32_t k = 0; k < c->side * c->side; ++k) {
        const cell_acc *a = &b.acc[k];
        sim_map_cover_cell *cell = &c->cell[k];
        cell->launch = a->hits > 0 ? a->vote : -1;
        cell->hits = a->hits;
        cell->order = a->hits > 0 ? a->order_sum / (float)a->hits : 0.0f;
        cell->block = a->hits > 0 ? (a->first - 1u) - b.first[a->vote] : 0u;
    }
    free(b.acc);
    return SIM_OK;
}

uint32_t sim_map_cover_light(const sim_map_cover *c, const sim_tile2 *pairs, uint64_t count,
                             double *share) {
    const uint32_t cells = c->side * c->side;
    memset(share, 0, (size_t)cells * sizeof *share);
    if (c->dim != 2 || cells == 0u) {
        return 0;
    }
    /* Count per cell, then turn counts into shares of the cell's tile pairs. */
    uint32_t *hits = calloc(cells, sizeof *hits);
    if (hits == NULL) {
        return 0;
    }
    for (uint64_t p = 0; p < count; ++p) {
        if (pairs[p].i < c->n && pairs[p].j <= pairs[p].i) {
            hits[sim_map_cover_index(c, pairs[p].i, pairs[p].j)]++;
        }
    }
    uint32_t lit = 0;
    for (uint32_t row = 0; row < c->side; ++row) {
        for (uint32_t col = 0; col <= row; ++col) {
            const uint32_t h = hits[row * c->side + col];
            if (h == 0u) {
                continue;
            }
            /* Tile pairs in the cell: a square, or a triangle on the diagonal, clipped at n. */
            const uint64_t rows =
                c->n - row * c->per_cell < c->per_cell ? c->n - row * c->per_cell : c->per_cell;
            const uint64_t cols =
                c->n - col * c->per_cell < c->per_cell ? c->n - col * c->per_cell : c->per_cell;
            const uint64_t in_cell = row == col ? rows * (rows + 1u) / 2u : rows * cols;
            share[row * c->side + col] = in_cell > 0u ? (double)h / (double)in_cell : 1.0;
            ++lit;
        }
    }
    free(hits);
    return lit;
}
