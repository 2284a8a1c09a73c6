/* SPDX-License-Identifier: MIT
 * nbsim — the cell grid the backends build the contacts' neighbour lists from (host + device,
 * C11 and CUDA): its shape, a body's cell, and the cells next to one.
 *
 * Why a grid. A list built from the culled tile pairs tests every body of a tile against every
 * body of each tile whose box it meets: ~900 tests per body on the falling `lattice`, for ~10
 * neighbours, and that lattice rebuilds at every step (its bodies move more than the largest
 * skin between two steps). A grid of cells at least one list reach wide (2 r_max + skin) holds
 * every pair within reach in the same or adjacent cells: 27 cells, ~30 tests per body. HOOMD-blue
 * and LAMMPS build their lists so (binning). The tile build stays for several ranks (each lists
 * its tile rows) and where the grid would not fit (sim_cell_grid_shape says).
 *
 * Why it is exact. Along an axis a body's cell is c = clamp(floor((x - lo) inv), 0, dims - 1):
 * monotone in x and never farther apart than the exact quotient, so two bodies closer than a cell
 * side are in the same or adjacent cells. The side is the reach widened by 2^-10: the floats'
 * rounding of (x - lo) inv (a few ulps of at most dims) is far below that margin, and so is the
 * build test's own (nlist.h). A body outside the box (walls) takes the border cell: the clamp
 * keeps the bound. A periodic axis needs at least 3 cells (else a cell would be its own
 * neighbour twice); its cells wrap, the tests take minimum images, and the side also covers
 * nlist.h's image slack. Positions are inside the box there (the drift wraps them); one on the
 * upper face takes the last cell, which neighbours the first. */
#ifndef SIM_CELL_GRID_H
#define SIM_CELL_GRID_H

#include "nbsim/params.h"
#include "physics/physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cell side over the reach: the margin above. */
#define SIM_CELL_GRID_MARGIN (1.0 + 0x1p-10)
/* At most this many cells per body: a gas in a large box gets coarser cells (still exact, a few
 * more tests per body) instead of memory and a clear of mostly empty cells. Not fewer: bodies
 * that fill a corner of their box (the `lattice` below 262,144 fills 1/15 of it at 16,384) would
 * crowd ~8 to a coarse cell at 2 per body, and a step at 16,384 then took longer than one at
 * 65,536, whose grid was not coarsened (timed when it rose from 2; not kept in bench/results/). */
#define SIM_CELL_GRID_CELLS_PER_BODY 8.0

typedef struct {
    uint32_t dims[3]; /* cells per axis */
    float lo[3];      /* the box's lower corner [m] */
    float inv[3];     /* cells per metre */
    uint32_t wrap;    /* bit k: axis k is periodic (its cells wrap) */
    uint32_t cells;   /* dims[0] dims[1] dims[2] */
    float rmax;       /* the largest radius it was made for [m]: a walk may skip cells farther
                         from a body of radius r than r + rmax (grid_build.cuh) */
} sim_cell_grid;

/* The grid for n bodies of radius at most rmax [m] and lists of skin [m] in p's box (skin 0: the
 * touching pairs alone, the contacts swept straight from the cells); 0 (g zeroed) when none
 * fits: a periodic axis with fewer than 3 cells of the reach, or no bodies. */
int sim_cell_grid_shape(const sim_params *p, double rmax, double skin, uint32_t n,
                        sim_cell_grid *g);
/* Whether a and b are the same shape. */
int sim_cell_grid_same(const sim_cell_grid *a, const sim_cell_grid *b);

/* A coordinate's cell along one axis (NaN: the first). */
SIM_HD uint32_t sim_cell_axis(float x, float lo, float inv, uint32_t dims) {
    const float c = fminf(fmaxf(floorf((x - lo) * inv), 0.0f), (float)(dims - 1u));
    return (uint32_t)c;
}

/* A position's cell, x fastest. */
SIM_HD uint32_t sim_cell_of(const sim_cell_grid *g, sim_vec4f p) {
    const uint32_t x = sim_cell_axis(p.x, g->lo[0], g->inv[0], g->dims[0]);
    const uint32_t y = sim_cell_axis(p.y, g->lo[1], g->inv[1], g->dims[1]);
    const uint32_t z = sim_cell_axis(p.z, g->lo[2], g->inv[2], g->dims[2]);
    return x + g->dims[0] * (y + g->dims[1] * z);
}

/* The neighbour c + d (d in -1..1) of coordinate c along axis k: 0 when it is outside the grid
 * (walls), wrapped on a periodic axis. */
SIM_HD int sim_cell_step(const sim_cell_grid *g, int k, uint32_t c, int d, uint32_t *out) {
    const uint32_t dims = g->dims[k];
    if (d < 0) {
        if (c == 0u) {
            *out = dims - 1u;
            return (g->wrap >> k) & 1u;
        }
        *out = c - 1u;
        return 1;
    }
    if (d > 0) {
        if (c + 1u == dims) {
            *out = 0u;
            return (g->wrap >> k) & 1u;
        }
        *out = c + 1u;
        return 1;
    }
    *out = c;
    return 1;
}

/* Calls visit(cell) for each of the (up to) 27 cells around cell `home`, each once. A macro:
 * C and CUDA callers alike, visit's body inline. */
#define SIM_CELL_GRID_FOR_NEAR(g, home, cell, ...)                                                 \
    do {                                                                                           \
        const uint32_t hx_ = (home) % (g)->dims[0], hyz_ = (home) / (g)->dims[0];                  \
        const uint32_t hy_ = hyz_ % (g)->dims[1], hz_ = hyz_ / (g)->dims[1];                       \
        for (int dz_ = -1; dz_ <= 1; ++dz_) {                                                      \
            uint32_t z_;                                                                           \
            if (!sim_cell_step((g), 2, hz_, dz_, &z_)) {                                           \
                continue;                                                                          \
            }                                                                                      \
            for (int dy_ = -1; dy_ <= 1; ++dy_) {                                                  \
                uint32_t y_;                                                                       \
                if (!sim_cell_step((g), 1, hy_, dy_, &y_)) {                                       \
                    continue;                                                                      \
                }                                                                                  \
                for (int dx_ = -1; dx_ <= 1; ++dx_) {                                              \
                    uint32_t x_;                                                                   \
                    if (!sim_cell_step((g), 0, hx_, dx_, &x_)) {                                   \
                        continue;                                                                  \
                    }                                                                              \
                    const uint32_t cell = x_ + (g)->dims[0] * (y_ + (g)->dims[1] * z_);            \
                    __VA_ARGS__                                                                    \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* No cell: a row's neighbour beyond a wall (SIM_CELL_GRID_FOR_ROWS). */
#define SIM_CELL_NONE 0xffffffffu

/* Calls visit(lo, mid, hi) for each of the (up to) 9 rows along x of the 27 cells around cell
 * `home`, each once: mid the row's cell at home's x, lo and hi its neighbours at x - 1 and x + 1
 * (sim_cell_step: wrapped on a periodic axis, SIM_CELL_NONE beyond a wall). By rows: a row's
 * cells are neighbours in memory, and the device walk loads their starts and counts together
 * (grid_build.cuh). A macro: C and CUDA callers alike, visit's body inline. */
#define SIM_CELL_GRID_FOR_ROWS(g, home, lo, mid, hi, ...)                                          \
    do {                                                                                           \
        const uint32_t hx_ = (home) % (g)->dims[0], hyz_ = (home) / (g)->dims[0];                  \
        const uint32_t hy_ = hyz_ % (g)->dims[1], hz_ = hyz_ / (g)->dims[1];                       \
        for (int r_ = 0; r_ < 9; ++r_) {                                                           \
            uint32_t y_, z_, xlo_, xhi_;                                                           \
            if (!sim_cell_step((g), 1, hy_, r_ % 3 - 1, &y_) ||                                    \
                !sim_cell_step((g), 2, hz_, r_ / 3 - 1, &z_)) {                                    \
                continue;                                                                          \
            }                                                                                      \
            const uint32_t row_ = (g)->dims[0] * (y_ + (g)->dims[1] * z_);                         \
            const int has_lo_ = sim_cell_step((g), 0, hx_, -1, &xlo_);                             \
            const int has_hi_ = sim_cell_step((g), 0, hx_, 1, &xhi_);                              \
            const uint32_t mid = row_ + hx_;                                                       \
            const uint32_t lo = has_lo_ ? row_ + xlo_ : SIM_CELL_NONE;                             \
            const uint32_t hi = has_hi_ ? row_ + xhi_ : SIM_CELL_NONE;                             \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* SIM_CELL_GRID_H */
