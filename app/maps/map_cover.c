/* SPDX-License-Identifier: MIT
 * nbsim — map coverage pictures for the viewer's inset. */
#include "map_cover.h"

#include <stdlib.h>
#include <string.h>

#include "nbsim/maps_check.h"
#include "map_palette.h"

/* Grey for the bounding box's idle blocks, in two tones so the stripes read as "not work". */
static const app_rgb waste_dark = {0x58, 0x5C, 0x64}, waste_light = {0x74, 0x78, 0x80};
/* A tile of the domain no sampled block produced: only a broken map leaves one when exact. */
static const app_rgb hole = {0x10, 0x10, 0x10};

typedef struct {
    float order_sum; /* sum of the blocks' positions in their launch's order, 0..1 */
    uint32_t hits;
    int16_t vote; /* Boyer-Moore majority vote over the blocks' launches */
    int32_t votes;
    uint64_t first; /* per_block: the first block (global index) + 1 */
} cell_acc;

typedef struct {
    app_map_cover *c;
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
    const app_map_cover *c = b->c;
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
    for (uint32_t k = 0; k < APP_MAP_COVER_SAMPLES; ++k) {
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

static void put(uint8_t *px, app_rgb c, uint8_t alpha) {
    px[0] = c.r;
    px[1] = c.g;
    px[2] = c.b;
    px[3] = alpha;
}

sim_status app_map_cover_build(app_map_cover *c, const sim_map_plan *plan, sim_error *err) {
    return app_map_cover_build_grouped(c, plan, plan->n, 1u, err);
}

sim_status app_map_cover_build_grouped(app_map_cover *c, const sim_map_plan *plan, uint32_t tiles,
                                       uint32_t span, sim_error *err) {
    SIM_ASSERT(span >= 1u && (plan->dim == 2 || span == 1u));
    memset(c, 0, sizeof *c);
    c->dim = plan->dim;
    c->map = plan->map;
    c->n = tiles;
    c->span = span;
    c->layer = plan->n > 0 ? plan->n - 1u : 0u;
    c->per_cell = (tiles + APP_MAP_COVER_SIDE - 1u) / APP_MAP_COVER_SIDE;
    c->per_cell = c->per_cell > 0u ? c->per_cell : 1u;
    c->side = (tiles + c->per_cell - 1u) / c->per_cell;
    c->launches = plan->launch_count;
    c->blocks = plan->blocks;
    c->useful = plan->useful;
    c->waste = plan->dim == 2 ? plan->map == SIM_PAIR_MAP_BB : plan->map == SIM_TRIPLET_MAP_BB;
    /* 3-D keeps only one layer's blocks: sampling would leave it nearly empty. */
    c->exact = plan->blocks <= (plan->dim == 3 ? 64ull * APP_MAP_COVER_EXACT : APP_MAP_COVER_EXACT);
    c->per_block = c->exact && tiles <= APP_MAP_COVER_BLOCK_TILES;
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
    for (uint32_t row = 0; row < c->side; ++row) {
        for (uint32_t col = 0; col < c->side; ++col) {
            const cell_acc *a = &b.acc[row * c->side + col];
            uint8_t *px = &c->rgba[(row * c->side + col) * 4u];
            if (col > row) {
                const app_rgb w = (row + col) % 4u < 2u ? waste_dark : waste_light;
                put(px, w, c->waste ? 255 : 0);
            } else if (a->hits == 0) {
                put(px, hole, c->exact ? 255 : 0); /* sampled: a cell the sample missed */
            } else if (c->per_block) {
                const uint64_t block = a->first - 1u;
                put(px, app_map_block_colour(a->vote, block - b.first[a->vote]), 255);
            } else {
                put(px, app_map_order_colour(a->vote, a->order_sum / (float)a->hits), 255);
            }
        }
    }
    free(b.acc);
    return SIM_OK;
}

uint32_t app_map_cover_light(const app_map_cover *c, const sim_tile2 *pairs, uint64_t count,
                             uint8_t *rgba) {
    const uint32_t cells = c->side * c->side;
    memset(rgba, 0, (size_t)cells * 4u);
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
            hits[app_map_cover_cell(c, pairs[p].i, pairs[p].j)]++;
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
            const double share = in_cell > 0u ? (double)h / (double)in_cell : 1.0;
            const app_rgb white = {0xFF, 0xFF, 0xF0};
            put(&rgba[(row * c->side + col) * 4u], white,
                (uint8_t)(90.0 + 165.0 * (share > 1.0 ? 1.0 : share)));
            ++lit;
        }
    }
    free(hits);
    return lit;
}
