/* SPDX-License-Identifier: MIT
 * nbsim — map pictures. Layout is computed by the same functions that draw (canvas == NULL only
 * measures), so sizes and drawing cannot disagree. */
#include "map_png.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_canvas.h"
#include "map_palette.h"
#include "nbsim/maps_check.h"

enum {
    MARGIN = 24,
    GAP = 20,
    TEXT = 2,                                 /* text scale of captions */
    LINE = APP_CANVAS_TEXT_HEIGHT * TEXT + 8, /* caption line height */
    PANEL_2D = 448,                           /* target size of the tile triangle */
    PANEL_3D = 200,                           /* target size of one layer */
    FLOW_WIDTH = 960                          /* block panels wrap at this width */
};

static const render_rgb ink = {0x20, 0x20, 0x20}, faint = {0x70, 0x70, 0x70};
static const render_rgb waste_fill = {0xE4, 0xE4, 0xE4}, waste_mark = {0xA8, 0xA8, 0xA8};

typedef struct {
    const sim_map_plan *plan;
    app_canvas *canvas;                   /* NULL: measure only */
    uint64_t first[SIM_MAX_LAUNCHES + 1]; /* global index of each launch's first block */
    uint32_t *owner;                      /* per tile: owning block + 1, 0 = none */
    int cell;                             /* tile cell size, pixels */
    int block;                            /* block cell size, pixels */
    int labels;                           /* numbers fit in cells */
    int width, height;                    /* extent drawn so far */
} picture;

static void extend(picture *p, int x1, int y1) {
    p->width = x1 > p->width ? x1 : p->width;
    p->height = y1 > p->height ? y1 : p->height;
}

/* Caption text at scale TEXT; returns its width (a line is LINE high). */
static int caption(picture *p, int x, int y, render_rgb col, const char *text) {
    int w = app_canvas_text_width(text, TEXT);
    if (p->canvas != NULL) {
        app_canvas_text(p->canvas, x, y, TEXT, col, text);
    }
    extend(p, x + w, y + LINE);
    return w;
}

/* One cell: a block's colour (and its number when it fits), or the waste pattern. */
static void cell(picture *p, int x, int y, int size, int launch, uint64_t global, int owned) {
    extend(p, x + size, y + size);
    if (p->canvas == NULL) {
        return;
    }
    int inner = size >= 6 ? size - 1 : size; /* a one-pixel white gap between larger cells */
    if (!owned) {
        app_canvas_fill(p->canvas, x, y, inner, inner, waste_fill);
        for (int d = 1; size >= 8 && d < inner - 1; ++d) {
            app_canvas_fill(p->canvas, x + d, y + inner - 1 - d, 1, 1, waste_mark);
        }
        return;
    }
    render_rgb col = render_map_block_colour(launch, global - p->first[launch]);
    app_canvas_fill(p->canvas, x, y, inner, inner, col);
    if (p->labels) {
        char num[24];
        snprintf(num, sizeof num, "%" PRIu64, global);
        int lum = (299 * col.r + 587 * col.g + 114 * col.b) / 1000;
        render_rgb text = lum > 140 ? ink : (render_rgb){0xFF, 0xFF, 0xFF};
        int tw = app_canvas_text_width(num, 1);
        app_canvas_text(p->canvas, x + (inner - tw) / 2 + 1, y + (inner - 7) / 2 + 1, 1, text, num);
    }
}

static uint64_t tile_index(int dim, const uint32_t t[3]) {
    uint64_t i = t[0], j = t[1];
    return dim == 2 ? i * (i + 1u) / 2u + j
                    : i * (i + 1u) * (i + 2u) / 6u + j * (j + 1u) / 2u + t[2];
}

/* Runs every block once: launch offsets and each tile's first owner. */
static sim_status find_owners(picture *p, sim_error *err) {
    const sim_map_plan *plan = p->plan;
    p->owner = calloc((size_t)plan->useful, sizeof *p->owner);
    if (p->owner == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory to draw %" PRIu64 " tiles",
                        plan->useful);
    }
    uint64_t g = 0;
    for (int l = 0; l < plan->launch_count; ++l) {
        const uint32_t *grid = plan->launch[l].grid;
        p->first[l] = g;
        for (uint32_t z = 0; z < grid[2]; ++z) {
            for (uint32_t y = 0; y < grid[1]; ++y) {
                for (uint32_t x = 0; x < grid[0]; ++x, ++g) {
                    uint32_t t[3];
                    if (sim_map_run_block(plan, l, x, y, z, t) && t[0] < plan->n) {
                        uint64_t idx = tile_index(plan->dim, t);
                        if (idx < plan->useful && p->owner[idx] == 0u) {
                            p->owner[idx] = (uint32_t)(g + 1u);
                        }
                    }
                }
            }
        }
    }
    p->first[plan->launch_count] = g;
    return SIM_OK;
}

static int launch_of(const picture *p, uint64_t global) {
    int l = 0;
    while (l + 1 < p->plan->launch_count && global >= p->first[l + 1]) {
        ++l;
    }
    return l;
}

/* A triangle of tiles: rows a in [0, size), columns b <= a, tile index base + T2(a) + b. */
static void triangle(picture *p, int x, int y, uint32_t size, uint64_t base) {
    for (uint32_t a = 0; a < size; ++a) {
        for (uint32_t b = 0; b <= a; ++b) {
            uint32_t o = p->owner[base + (uint64_t)a * (a + 1u) / 2u + b];
            int px = x + (int)b * p->cell, py = y + (int)a * p->cell;
            if (o == 0u) { /* never produced: a broken map; leave a dark hole */
                extend(p, px + p->cell, py + p->cell);
                if (p->canvas != NULL) {
                    app_canvas_fill(p->canvas, px, py, p->cell, p->cell, ink);
                }
                continue;
            }
            cell(p, px, py, p->cell, launch_of(p, o - 1u), o - 1u, 1);
        }
    }
}

/* One z slice of a launch grid: gx x gy blocks, or a long 1-D grid wrapped into rows. */
static void slice(picture *p, int x, int y, int launch, uint32_t z, uint32_t cols) {
    const uint32_t *grid = p->plan->launch[launch].grid;
    uint64_t per = (uint64_t)grid[0] * grid[1], base = p->first[launch] + per * z;
    for (uint64_t e = 0; e < per; ++e) {
        uint32_t bx = (uint32_t)(e % grid[0]), by = (uint32_t)(e / grid[0]), t[3];
        int owned = sim_map_run_block(p->plan, launch, bx, by, z, t);
        uint64_t col = grid[1] == 1u ? e % cols : bx, row = grid[1] == 1u ? e / cols : by;
        cell(p, x + (int)col * p->block, y + (int)row * p->block, p->block, launch, base + e,
             owned);
    }
}

/* Columns a slice is drawn with: 1-D grids wider than the flow wrap. */
static uint32_t slice_cols(const picture *p, int launch) {
    const uint32_t *grid = p->plan->launch[launch].grid;
    uint32_t fit = (uint32_t)(FLOW_WIDTH / p->block);
    return grid[1] == 1u && grid[0] > fit ? (fit > 0u ? fit : 1u) : grid[0];
}

static int slice_height(const picture *p, int launch) {
    const uint32_t *grid = p->plan->launch[launch].grid;
    uint32_t cols = slice_cols(p, launch);
    uint64_t rows = grid[1] == 1u ? (grid[0] + cols - 1u) / cols : grid[1];
    return (int)rows * p->block;
}

static void launch_caption(const picture *p, int launch, char *buf, size_t size) {
    const uint32_t *g = p->plan->launch[launch].grid;
    uint64_t blocks = p->first[launch + 1] - p->first[launch];
    if (p->plan->dim == 3) {
        snprintf(buf, size, "launch %d: %u x %u x %u = %" PRIu64 " block%s", launch, g[0], g[1],
                 g[2], blocks, blocks == 1u ? "" : "s");
    } else if (g[1] == 1u && slice_cols(p, launch) < g[0]) {
        snprintf(buf, size, "launch %d: 1-D, %u blocks (wrapped)", launch, g[0]);
    } else {
        snprintf(buf, size, "launch %d: %u x %u block%s", launch, g[0], g[1],
                 blocks == 1u ? "" : "s");
    }
}

/* A launch's slices side by side (3-D: z = 0, 1, ...), wrapping at FLOW_WIDTH from x. */
static int launch_panel(picture *p, int x, int y, int launch) {
    char text[128];
    launch_caption(p, launch, text, sizeof text);
    caption(p, x, y, ink, text);
    int top = y + LINE;
    const uint32_t *grid = p->plan->launch[launch].grid;
    int w = (int)slice_cols(p, launch) * p->block, h = slice_height(p, launch);
    int cx = x, cy = top, bottom = top;
    for (uint32_t z = 0; z < grid[2]; ++z) {
        if (cx > x && cx + w > x + FLOW_WIDTH) {
            cx = x;
            cy = bottom + GAP / 2;
        }
        char zl[16];
        snprintf(zl, sizeof zl, "z=%u", grid[2] - 1u);
        int named = grid[2] > 1u && app_canvas_text_width(zl, TEXT) <= w; /* labels fit */
        if (named) {
            snprintf(zl, sizeof zl, "z=%u", z);
            caption(p, cx, cy, faint, zl);
        }
        int sy = cy + (named ? LINE : 0);
        slice(p, cx, sy, launch, z, slice_cols(p, launch));
        bottom = sy + h > bottom ? sy + h : bottom;
        cx += w + GAP / 2;
    }
    return bottom - y;
}

static int header(picture *p, const char *const *lines, int count) {
    int y = MARGIN;
    for (int i = 0; i < count; ++i, y += LINE) {
        caption(p, MARGIN, y, i == 0 ? ink : faint, lines[i]);
    }
    return y + GAP / 2;
}

/* Swatches of every launch's shades, the waste pattern, and how to read the numbers. */
static void legend(picture *p, int y) {
    int x = MARGIN;
    for (int l = 0; l < p->plan->launch_count && l < 10; ++l, x += 8) {
        for (int s = 0; s < 6; ++s, x += 9) {
            extend(p, x + 9, y + 14);
            if (p->canvas != NULL) {
                app_canvas_fill(p->canvas, x, y, 8, 14, render_map_block_colour(l, (uint64_t)s));
            }
        }
    }
    x += caption(p, x, y, faint, "one hue per launch, shades cycle in block order") + GAP;
    cell(p, x, y - 1, 16, 0, 0, 0);
    caption(p, x + 22, y, faint, "wasted block");
    caption(p, MARGIN, y + LINE, faint,
            p->labels ? "numbers: block index in launch order (bx fastest, then by, bz)"
                      : "blocks in launch order: bx fastest, then by, then bz");
}

static void layout_2d(picture *p, const char *const *lines, int count) {
    int top = header(p, lines, count);
    uint32_t n = p->plan->n;
    caption(p, MARGIN, top, ink, "tiles (I, J): row I, column J");
    int y = top + LINE;
    triangle(p, MARGIN, y, n, 0);
    int bottom = y + (int)n * p->cell, x = MARGIN + (int)n * p->cell + 2 * GAP;
    int right = top;
    for (int l = 0; l < p->plan->launch_count; ++l) {
        right += launch_panel(p, x, right, l) + GAP;
    }
    legend(p, (bottom > right ? bottom : right) + GAP);
}

static void layout_3d(picture *p, const char *const *lines, int count) {
    int y = header(p, lines, count);
    uint32_t n = p->plan->n;
    caption(p, MARGIN, y, ink, "tiles (I, J, K), one panel per layer I: row J, column K");
    y += LINE;
    /* Layers in rows of equal slots; a row is as tall as its last (largest) layer. */
    int slot = (int)n * p->cell + GAP, cols = (FLOW_WIDTH + GAP) / slot;
    cols = cols < 1 ? 1 : cols;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t col = i % (uint32_t)cols, last = i - col + (uint32_t)cols - 1u;
        last = last < n ? last : n - 1u;
        char name[32];
        snprintf(name, sizeof name, "I = %u", i);
        caption(p, MARGIN + (int)col * slot, y, faint, name);
        triangle(p, MARGIN + (int)col * slot, y + LINE, i + 1u,
                 (uint64_t)i * (i + 1u) * (i + 2u) / 6u);
        if (i == last) {
            y += LINE + (int)(last + 1u) * p->cell + GAP;
        }
    }
    caption(p, MARGIN, y, ink, "blocks, launch by launch: one grid slice per z");
    y += LINE;
    for (int l = 0; l < p->plan->launch_count; ++l) {
        y += launch_panel(p, MARGIN, y, l) + GAP;
    }
    legend(p, y);
}

static void layout(picture *p, const char *const *lines, int count) {
    p->width = p->height = 0;
    if (p->plan->dim == 2) {
        layout_2d(p, lines, count);
    } else {
        layout_3d(p, lines, count);
    }
}

static int clampi(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* Cell sizes: tiles fill the target panel; blocks the same size unless a grid gets too wide. */
static void choose_sizes(picture *p) {
    const sim_map_plan *plan = p->plan;
    int target = plan->dim == 2 ? PANEL_2D : PANEL_3D;
    p->cell = clampi(target / (int)plan->n, 1, plan->dim == 2 ? 28 : 24);
    uint32_t widest = 1;
    for (int l = 0; l < plan->launch_count; ++l) {
        const uint32_t *g = plan->launch[l].grid;
        widest = g[1] > 1u && g[0] > widest ? g[0] : widest;
    }
    p->block = clampi(FLOW_WIDTH / (int)widest, 1, p->cell);
    char big[24];
    snprintf(big, sizeof big, "%" PRIu64, plan->blocks > 0 ? plan->blocks - 1u : 0u);
    int need = app_canvas_text_width(big, 1) + 3;
    p->labels = p->cell >= 14 && p->block >= 14 && need <= p->cell - 1 && need <= p->block - 1;
}

sim_status app_map_png_write(const sim_map_plan *plan, const char *const *lines, int line_count,
                             const char *path, sim_error *err) {
    uint32_t max = plan->dim == 2 ? APP_MAP_PNG_MAX_2D : APP_MAP_PNG_MAX_3D;
    if (plan->n > max) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "--png draws n <= %u tiles in %d-D, not %u", max,
                        plan->dim, plan->n);
    }
    picture p;
    memset(&p, 0, sizeof p);
    p.plan = plan;
    sim_status st = find_owners(&p, err);
    if (st != SIM_OK) {
        return st;
    }
    choose_sizes(&p);
    layout(&p, lines, line_count); /* measure */
    app_canvas canvas;
    st = app_canvas_init(&canvas, p.width + MARGIN, p.height + MARGIN, err);
    if (st == SIM_OK) {
        p.canvas = &canvas;
        layout(&p, lines, line_count); /* draw */
        st = app_canvas_write_png(&canvas, path, err);
        app_canvas_free(&canvas);
    }
    free(p.owner);
    return st;
}
