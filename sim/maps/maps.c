/* SPDX-License-Identifier: MIT
 * nbsim — thread-map plans (launches, grids, per-launch parameters) and the map names.
 * The per-block functions are in maps_pair.h / maps_triplet.h; the grid each plan builds here
 * is the one described above the matching function there. */
#include "nbsim/maps.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* CUDA's grid limits (blocks per launch in x, y, z). */
#define GRID_X_MAX 2147483647u
#define GRID_YZ_MAX 65535u

/* ---- names ---- */

typedef struct {
    const char *name, *label;
    int paper;
} map_info;

static const map_info pair_info[SIM_PAIR_MAP_COUNT] = {
#define PAIR_INFO(id, name, label, paper) {name, label, paper},
    SIM_PAIR_MAP_LIST(PAIR_INFO)
#undef PAIR_INFO
};

static const map_info triplet_info[SIM_TRIPLET_MAP_COUNT] = {
#define TRIPLET_INFO(id, name, label, paper) {name, label, paper},
    SIM_TRIPLET_MAP_LIST(TRIPLET_INFO)
#undef TRIPLET_INFO
};

static const map_info unknown_info = {"unknown", "unknown map", 0};

static const map_info *pair_map_info(sim_pair_map map) {
    return (int)map >= 0 && map < SIM_PAIR_MAP_COUNT ? &pair_info[map] : &unknown_info;
}

static const map_info *triplet_map_info(sim_triplet_map map) {
    return (int)map >= 0 && map < SIM_TRIPLET_MAP_COUNT ? &triplet_info[map] : &unknown_info;
}

static int find_name(const map_info *info, int count, const char *name) {
    for (int m = 0; name != NULL && m < count; ++m) {
        if (strcmp(info[m].name, name) == 0) {
            return m;
        }
    }
    return -1;
}

const char *sim_pair_map_name(sim_pair_map map) {
    return pair_map_info(map)->name;
}
const char *sim_pair_map_label(sim_pair_map map) {
    return pair_map_info(map)->label;
}
int sim_pair_map_is_paper_float(sim_pair_map map) {
    return pair_map_info(map)->paper;
}
int sim_pair_map_from_name(const char *name) {
    return find_name(pair_info, SIM_PAIR_MAP_COUNT, name);
}
const char *sim_triplet_map_name(sim_triplet_map map) {
    return triplet_map_info(map)->name;
}
const char *sim_triplet_map_label(sim_triplet_map map) {
    return triplet_map_info(map)->label;
}
int sim_triplet_map_is_paper_float(sim_triplet_map map) {
    return triplet_map_info(map)->paper;
}
int sim_triplet_map_from_name(const char *name) {
    return find_name(triplet_info, SIM_TRIPLET_MAP_COUNT, name);
}

int sim_map_count(int dim) {
    return dim == 2 ? SIM_PAIR_MAP_COUNT : SIM_TRIPLET_MAP_COUNT;
}
const char *sim_map_name(int dim, int map) {
    return dim == 2 ? sim_pair_map_name((sim_pair_map)map)
                    : sim_triplet_map_name((sim_triplet_map)map);
}
int sim_map_from_name(int dim, const char *name) {
    return dim == 2 ? sim_pair_map_from_name(name) : sim_triplet_map_from_name(name);
}
const char *sim_map_names(int dim, char *buf, size_t cap) {
    size_t len = 0;
    if (cap > 0) {
        buf[0] = '\0';
    }
    for (int m = 0; m < sim_map_count(dim) && len < cap; ++m) {
        const int w = snprintf(buf + len, cap - len, "%s%s", m ? ", " : "", sim_map_name(dim, m));
        len += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* ---- plan building ---- */

static void plan_begin(sim_map_plan *plan, int dim, int map, uint32_t n) {
    memset(plan, 0, sizeof *plan);
    plan->dim = dim;
    plan->map = map;
    plan->n = n;
    /* Every map's launches own disjoint tiles, so they may overlap on streams. */
    plan->concurrent = 1;
    plan->useful = dim == 2 ? (uint64_t)n * (n + 1u) / 2u : (uint64_t)n * (n + 1u) * (n + 2u) / 6u;
}

/* Appends a launch; grids are checked against CUDA's limits by plan_finish. */
static void plan_add(sim_map_plan *plan, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t p0,
                     uint32_t p1, uint32_t p2, uint32_t p3) {
    SIM_ASSERT(plan->launch_count < SIM_MAX_LAUNCHES);
    SIM_ASSERT(gx > 0 && gy > 0 && gz > 0);
    sim_map_launch *l = &plan->launch[plan->launch_count++];
    l->grid[0] = gx;
    l->grid[1] = gy;
    l->grid[2] = gz;
    l->n = plan->n;
    l->p[0] = p0;
    l->p[1] = p1;
    l->p[2] = p2;
    l->p[3] = p3;
    plan->blocks += (uint64_t)gx * gy * gz;
}

static sim_status plan_finish(sim_map_plan *plan, const char *name, sim_error *err) {
    static const char axis[3] = {'x', 'y', 'z'};
    for (int l = 0; l < plan->launch_count; ++l) {
        for (int a = 0; a < 3; ++a) {
            uint32_t limit = a == 0 ? GRID_X_MAX : GRID_YZ_MAX;
            if (plan->launch[l].grid[a] > limit) {
                return sim_fail(err, SIM_BAD_ARGUMENT,
                                "map '%s' at n = %u tiles needs %u blocks in grid %c, above "
                                "CUDA's limit %u",
                                name, plan->n, plan->launch[l].grid[a], axis[a], limit);
            }
        }
    }
    return SIM_OK;
}

static sim_status check_n(uint32_t n, uint32_t max, const char *kind, sim_error *err) {
    if (n == 0u) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "n = 0 tiles per side: %s maps need n >= 1", kind);
    }
    if (n > max) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "n = %u tiles per side is above the %s-map limit of %u", n, kind, max);
    }
    return SIM_OK;
}

static uint32_t ceil_div(uint64_t a, uint64_t b) {
    return (uint32_t)((a + b - 1u) / b);
}

/* ceil(sqrt(x)) and ceil(cbrt(x)), exact: a double estimate, then integer steps. */
static uint32_t ceil_sqrt(uint64_t x) {
    uint64_t m = (uint64_t)sqrt((double)x);
    while (m * m < x) {
        ++m;
    }
    while (m > 0 && (m - 1) * (m - 1) >= x) {
        --m;
    }
    return (uint32_t)m;
}

static uint32_t ceil_cbrt(uint64_t x) {
    uint64_t m = (uint64_t)cbrt((double)x);
    while (m * m * m < x) {
        ++m;
    }
    while (m > 0 && (m - 1) * (m - 1) * (m - 1) >= x) {
        --m;
    }
    return (uint32_t)m;
}

/* ---- rm: power-of-two parts ----
 * The rm maps are exact and wasteless for n = 2^k. For other n the domain is cut along the
 * diagonal into power-of-two parts (one launch each in 2-D, up to three in 3-D); only the last
 * part may reach past n, and its blocks there are wasted. Measured over every n <= 65535 (2-D)
 * and n <= 4096 (3-D), wasted blocks / blocks launched, worst (mean):
 *   pad to the next 2^k, 1 part:  2-D 75.0 % (41.7 %), 3-D 75.0 % (41.5 %); 1 launch
 *   at most 2 parts:              2-D 25.0 % (7.9 %),  3-D 43.7 % (15.1 %); <= 2 / 4 launches
 *   at most 3 parts:              2-D 5.8 % (1.1 %),   3-D 14.2 % (2.8 %);  <= 3 / 7 launches
 *   at most 4 parts:              2-D 1.3 % (0.15 %),  3-D 3.8 % (0.42 %);  <= 4 / 14 launches
 *   at most 5 parts:              2-D 0.31 % (0.02 %), 3-D 0.90 % (0.06 %); <= 5 / 13 launches
 *   one part per set bit:         0 %, but up to 16 (2-D) / 34 (3-D) launches, most tiny
 * (In 3-D the top level of each part's simplex now has a launch of its own, maps_triplet.h: the
 * row of 4 parts is measured with it, the others before it, ~0.1 point and a few launches low.)
 * Padding wastes most of the grid just past a power of two, so rm uses parts. A wasted block
 * only evaluates the map and exits while every launch costs microseconds, so SIM_RM_PARTS = 4:
 * waste of a few percent at worst, few launches (disjoint, so they may run concurrently).
 * tests/test_maps.c recomputes and bounds the worst case. */
typedef struct {
    int count;
    uint32_t offset[32], log2size[32];
} rm_parts;

/* Parts of n: every set bit if there are at most SIM_RM_PARTS, else the top SIM_RM_PARTS - 1
 * bits and the rest rounded up to a power of two (the only part that reaches past n). */
static rm_parts rm_split(uint32_t n) {
    rm_parts parts = {0, {0}, {0}};
    uint32_t o = 0;
    for (int d = 31; d >= 0 && o < n; --d) {
        uint32_t s = 1u << d, rest = n - o;
        if (!(rest & s)) {
            continue;
        }
        if (parts.count == SIM_RM_PARTS - 1 && rest != s) {
            d = (int)sim_map_log2(rest) + ((rest & (rest - 1u)) != 0u);
            s = 1u << d;
        }
        parts.offset[parts.count] = o;
        parts.log2size[parts.count++] = (uint32_t)d;
        o += s;
    }
    return parts;
}

/* Rows below a part [o, o + s) that are still inside the domain. */
static uint32_t rows_below(uint32_t n, uint32_t o, uint32_t s) {
    return n > o + s ? n - o - s : 0u;
}

static uint32_t rm_part_grid_x(uint32_t n, uint32_t o, uint32_t s) {
    return s == 1u ? 1u : s + 1u + 2u * rows_below(n, o, s);
}

static uint32_t rm_triangle_grid_x(uint32_t s) {
    return s == 1u ? 1u : s + 1u;
}
static uint32_t rm_triangle_grid_y(uint32_t s) {
    return s == 1u ? 1u : s / 2u;
}

static void plan_pair_rm(sim_map_plan *plan) {
    uint32_t n = plan->n;
    rm_parts parts = rm_split(n);
    for (int a = 0; a < parts.count; ++a) {
        uint32_t o = parts.offset[a], d = parts.log2size[a], s = 1u << d;
        plan_add(plan, rm_part_grid_x(n, o, s), rm_triangle_grid_y(s), 1, o, d, 0, 0);
    }
}

static void plan_triplet_rm(sim_map_plan *plan) {
    uint32_t n = plan->n;
    rm_parts parts = rm_split(n);
    for (int a = 0; a < parts.count; ++a) {
        uint32_t o = parts.offset[a], d = parts.log2size[a], s = 1u << d;
        /* The top level (t = s/2) on its own launch when s >= 4 (maps_triplet.h); skipped when
         * its every I = o + t + ... is past n (only in a padded last part). */
        int top = s >= 4u;
        uint32_t levels = sim_map_rm_level_start(top ? d - 1u : d);
        /* Lines z >= n - o only hold tiles with I >= n (I >= o + z in a part's simplex). */
        uint32_t lines = n - o < s ? n - o : s;
        plan_add(plan, levels + 1u, lines, 1, 0, o, d, levels);
        if (top && n - o > s / 2u) {
            plan_add(plan, s / 2u, s / 4u, s + 2u, 3, o, d, 0);
        }
        /* x = K in both (memory order; maps_triplet.h); z <= 2n + 1 fits CUDA's limit. */
        if (o > 0u) {
            plan_add(plan, o, rm_triangle_grid_y(s), rm_part_grid_x(n, o, s), 1, o, d, 0);
        }
        if (rows_below(n, o, s) > 0u) {
            plan_add(plan, rm_triangle_grid_y(s), rm_triangle_grid_x(s), rows_below(n, o, s), 2, o,
                     d, 0);
        }
    }
}

static void plan_pair_rec(sim_map_plan *plan) {
    uint32_t n = plan->n;
    for (uint32_t l = 0; (1u << l) < n; ++l) { /* s = 1, 2, ..., n'/2 */
        uint32_t s = 1u << l;
        uint32_t squares = (n + s - 1u) / (2u * s); /* squares whose first row 2qs + s < n */
        if (squares > 0u) {
            plan_add(plan, s * squares, s, 1, 1, l, 0, 0);
        }
    }
    plan_add(plan, n, 1, 1, 0, 0, 0, 0);
}

sim_status sim_pair_map_plan(sim_pair_map map, uint32_t n, sim_map_plan *plan, sim_error *err) {
    if ((int)map < 0 || map >= SIM_PAIR_MAP_COUNT) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown pair map %d", (int)map);
    }
    SIM_ASSERT(plan != NULL);
    sim_status st = check_n(n, SIM_MAX_TILES_2D, "pair", err);
    if (st != SIM_OK) {
        return st;
    }
    plan_begin(plan, 2, (int)map, n);
    uint32_t t2 = (uint32_t)plan->useful, even = n + (n & 1u);
    switch (map) {
    case SIM_PAIR_MAP_BB:
        plan_add(plan, n, n, 1, 0, 0, 0, 0);
        break;
    case SIM_PAIR_MAP_LTM:
    case SIM_PAIR_MAP_LTM_SQRT:
    case SIM_PAIR_MAP_LTM_RSQRT:
    case SIM_PAIR_MAP_LTM_NEWTON: {
        uint32_t m = ceil_sqrt(t2);
        plan_add(plan, m, ceil_div(t2, m), 1, t2, 0, 0, 0);
        break;
    }
    case SIM_PAIR_MAP_RB:
        plan_add(plan, even + 1u, even / 2u, 1, even, 0, 0, 0);
        break;
    case SIM_PAIR_MAP_UTM:
        plan_add(plan, t2, 1, 1, t2, 0, 0, 0);
        break;
    case SIM_PAIR_MAP_REC:
        plan_pair_rec(plan);
        break;
    case SIM_PAIR_MAP_RM:
        plan_pair_rm(plan);
        break;
    default:
        break;
    }
    return plan_finish(plan, sim_pair_map_name(map), err);
}

sim_status sim_triplet_map_plan(sim_triplet_map map, uint32_t n, sim_map_plan *plan,
                                sim_error *err) {
    if ((int)map < 0 || map >= SIM_TRIPLET_MAP_COUNT) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "unknown triplet map %d", (int)map);
    }
    SIM_ASSERT(plan != NULL);
    sim_status st = check_n(n, SIM_MAX_TILES_3D, "triplet", err);
    if (st != SIM_OK) {
        return st;
    }
    plan_begin(plan, 3, (int)map, n);
    uint64_t t3 = plan->useful;
    switch (map) {
    case SIM_TRIPLET_MAP_BB:
        plan_add(plan, n, n, n, 0, 0, 0, 0);
        break;
    case SIM_TRIPLET_MAP_TETRA:
    case SIM_TRIPLET_MAP_TETRA_FLOAT: {
        uint32_t m = ceil_cbrt(t3);
        plan_add(plan, m, m, ceil_div(t3, (uint64_t)m * m), (uint32_t)t3, (uint32_t)(t3 >> 32), 0,
                 0);
        break;
    }
    case SIM_TRIPLET_MAP_RM:
        plan_triplet_rm(plan);
        break;
    default:
        break;
    }
    return plan_finish(plan, sim_triplet_map_name(map), err);
}

int sim_map_plan_block_at(const sim_map_plan *plan, uint64_t index, int *launch, uint32_t *bx,
                          uint32_t *by, uint32_t *bz) {
    for (int l = 0; l < plan->launch_count; ++l) {
        const uint32_t *g = plan->launch[l].grid;
        uint64_t count = (uint64_t)g[0] * g[1] * g[2];
        if (index < count) {
            *launch = l;
            *bx = (uint32_t)(index % g[0]);
            *by = (uint32_t)(index / g[0] % g[1]);
            *bz = (uint32_t)(index / g[0] / g[1]);
            return 1;
        }
        index -= count;
    }
    return 0;
}
