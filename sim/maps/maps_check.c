/* SPDX-License-Identifier: MIT
 * nbsim — exhaustive (or sampled) verification of thread-map plans on the host. */
#include "nbsim/maps_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inlined into the checking loops: a call per block would cost as much as the map itself. */
static inline int run_block(const sim_map_plan *plan, int launch, uint32_t bx, uint32_t by,
                            uint32_t bz, uint32_t tile[3]) {
    const sim_map_launch *l = &plan->launch[launch];
    if (plan->dim == 2) {
        sim_tile2 t;
        if (!sim_pair_map_block((sim_pair_map)plan->map, l, bx, by, bz, &t)) {
            return 0;
        }
        tile[0] = t.i;
        tile[1] = t.j;
        tile[2] = 0;
        return 1;
    }
    sim_tile3 t;
    if (!sim_triplet_map_block((sim_triplet_map)plan->map, l, bx, by, bz, &t)) {
        return 0;
    }
    tile[0] = t.i;
    tile[1] = t.j;
    tile[2] = t.k;
    return 1;
}

int sim_map_run_block(const sim_map_plan *plan, int launch, uint32_t bx, uint32_t by, uint32_t bz,
                      uint32_t tile[3]) {
    return run_block(plan, launch, bx, by, bz, tile);
}

/* ---- integer-only references (binary searches; no roots, independent of the maps) ---- */

static uint64_t t2(uint64_t k) {
    return k * (k + 1u) / 2u;
}
static uint64_t t3(uint64_t k) {
    return k * (k + 1u) * (k + 2u) / 6u;
}

/* First block of column a in utm's enumeration: S(a) = a (2n + 1 - a) / 2. */
static uint64_t utm_start(uint64_t a, uint32_t n) {
    return a * (2u * (uint64_t)n + 1u - a) / 2u;
}

typedef enum { SEQ_T2, SEQ_T3, SEQ_UTM } seq_kind;

static uint64_t seq(seq_kind kind, uint64_t k, uint32_t n) {
    return kind == SEQ_T2 ? t2(k) : kind == SEQ_T3 ? t3(k) : utm_start(k, n);
}

/* Largest k in [0, hi) with seq(k) <= x (the sequences increase). */
static uint32_t last_at_most(seq_kind kind, uint64_t x, uint32_t hi, uint32_t n) {
    uint32_t lo = 0;
    while (hi - lo > 1u) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (seq(kind, mid, n) <= x) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* REF_SIBLING: the exact map with the same plan (for the papers' float variants, in full checks;
 * the sibling itself is proven exact by the coverage bitmap). The others are integer-only. */
typedef enum { REF_NONE, REF_SIBLING, REF_LTM, REF_UTM, REF_TETRA } ref_kind;

static ref_kind reference_kind(const sim_map_plan *plan) {
    if (plan->dim == 2) {
        switch ((sim_pair_map)plan->map) {
        case SIM_PAIR_MAP_LTM:
        case SIM_PAIR_MAP_LTM_SQRT:
        case SIM_PAIR_MAP_LTM_RSQRT:
        case SIM_PAIR_MAP_LTM_NEWTON:
            return REF_LTM;
        case SIM_PAIR_MAP_UTM:
            return REF_UTM;
        default:
            return REF_NONE;
        }
    }
    switch ((sim_triplet_map)plan->map) {
    case SIM_TRIPLET_MAP_TETRA:
    case SIM_TRIPLET_MAP_TETRA_FLOAT:
        return REF_TETRA;
    default:
        return REF_NONE;
    }
}

/* The tile the block should own under the map's enumeration; 0 when it should own none. */
static int reference_block(ref_kind kind, const sim_map_plan *plan, uint32_t bx, uint32_t by,
                           uint32_t bz, uint32_t tile[3]) {
    if (kind == REF_SIBLING && plan->dim == 2) {
        sim_tile2 t = {0, 0};
        int owns = sim_pair_map_block(SIM_PAIR_MAP_LTM, &plan->launch[0], bx, by, bz, &t);
        tile[0] = t.i;
        tile[1] = t.j;
        tile[2] = 0;
        return owns;
    }
    if (kind == REF_SIBLING) {
        sim_tile3 t = {0, 0, 0};
        int owns = sim_triplet_map_block(SIM_TRIPLET_MAP_TETRA, &plan->launch[0], bx, by, bz, &t);
        tile[0] = t.i;
        tile[1] = t.j;
        tile[2] = t.k;
        return owns;
    }
    const uint32_t *g = plan->launch[0].grid;
    uint64_t lambda = bx + (uint64_t)g[0] * (by + (uint64_t)g[1] * bz);
    if (lambda >= plan->useful) {
        return 0;
    }
    tile[2] = 0;
    if (kind == REF_LTM) {
        tile[0] = last_at_most(SEQ_T2, lambda, 65537u, 0);
        tile[1] = (uint32_t)(lambda - t2(tile[0]));
    } else if (kind == REF_UTM) {
        uint32_t a = last_at_most(SEQ_UTM, lambda, plan->n, plan->n);
        tile[0] = a + (uint32_t)(lambda - utm_start(a, plan->n));
        tile[1] = a;
    } else {
        tile[0] = last_at_most(SEQ_T3, lambda, 4098u, 0);
        uint64_t rest = lambda - t3(tile[0]);
        tile[1] = last_at_most(SEQ_T2, rest, 4098u, 0);
        tile[2] = (uint32_t)(rest - t2(tile[1]));
    }
    return 1;
}

/* ---- bookkeeping ---- */

static int inside(const sim_map_plan *plan, const uint32_t t[3]) {
    if (plan->dim == 2) {
        return t[0] < plan->n && t[1] <= t[0];
    }
    return t[0] < plan->n && t[1] <= t[0] && t[2] <= t[1];
}

static uint64_t tile_index(const sim_map_plan *plan, const uint32_t t[3]) {
    return plan->dim == 2 ? t2(t[0]) + t[1] : t3(t[0]) + t2(t[1]) + t[2];
}

static void tile_of_index(const sim_map_plan *plan, uint64_t idx, uint32_t t[3]) {
    t[2] = 0;
    if (plan->dim == 2) {
        t[0] = last_at_most(SEQ_T2, idx, plan->n, 0);
        t[1] = (uint32_t)(idx - t2(t[0]));
        return;
    }
    t[0] = last_at_most(SEQ_T3, idx, plan->n, 0);
    idx -= t3(t[0]);
    t[1] = last_at_most(SEQ_T2, idx, t[0] + 1u, 0);
    t[2] = (uint32_t)(idx - t2(t[1]));
}

static void record_wrong(sim_map_check_result *res, uint64_t index, int launch, const uint32_t b[3],
                         int got, const uint32_t tile[3], const char *what) {
    if (res->has_wrong && res->wrong_index <= index) { /* keep the first in enumeration order */
        return;
    }
    res->has_wrong = 1;
    res->wrong_index = index;
    res->wrong_launch = launch;
    memcpy(res->wrong_block, b, sizeof res->wrong_block);
    res->wrong_got = got;
    if (got) {
        memcpy(res->wrong_tile, tile, sizeof res->wrong_tile);
    }
    snprintf(res->wrong_what, sizeof res->wrong_what, "%s", what);
}

static void format_tile(const sim_map_plan *plan, const uint32_t t[3], char *buf, size_t size) {
    if (plan->dim == 2) {
        snprintf(buf, size, "(%u, %u)", t[0], t[1]);
    } else {
        snprintf(buf, size, "(%u, %u, %u)", t[0], t[1], t[2]);
    }
}

/* Runs one block, compares it with the reference (if any) and, when bitmap != NULL, marks its
 * tile. Returns nothing; counts and the first wrong block go to res. */
static inline void check_block(const sim_map_plan *plan, ref_kind ref, uint64_t *bitmap,
                               uint64_t index, int launch, const uint32_t b[3],
                               sim_map_check_result *res) {
    uint32_t tile[3] = {0, 0, 0}, want[3] = {0, 0, 0};
    int got = run_block(plan, launch, b[0], b[1], b[2], tile);
    ++res->checked;
    if (got) {
        ++res->produced;
    } else {
        ++res->wasted;
    }
    if (ref != REF_NONE) {
        int should = reference_block(ref, plan, b[0], b[1], b[2], want);
        if (got != should || (got && memcmp(tile, want, sizeof tile) != 0)) {
            char what[64] = "expected none";
            if (should) {
                char w[48];
                format_tile(plan, want, w, sizeof w);
                snprintf(what, sizeof what, "expected %s", w);
            }
            ++res->mismatched;
            record_wrong(res, index, launch, b, got, tile, what);
        }
    }
    if (!got) {
        return;
    }
    if (!inside(plan, tile)) {
        ++res->outside;
        record_wrong(res, index, launch, b, got, tile, "outside the domain");
        return;
    }
    if (bitmap != NULL) {
        uint64_t idx = tile_index(plan, tile), bit = 1ull << (idx & 63u);
        if (bitmap[idx >> 6] & bit) {
            ++res->duplicates;
            record_wrong(res, index, launch, b, got, tile, "duplicate tile");
        }
        bitmap[idx >> 6] |= bit;
    }
}

static void check_full(const sim_map_plan *plan, ref_kind ref, uint64_t *bitmap,
                       sim_map_check_result *res) {
    uint64_t index = 0;
    for (int l = 0; l < plan->launch_count; ++l) {
        const uint32_t *g = plan->launch[l].grid;
        uint32_t b[3];
        for (b[2] = 0; b[2] < g[2]; ++b[2]) {
            for (b[1] = 0; b[1] < g[1]; ++b[1]) {
                for (b[0] = 0; b[0] < g[0]; ++b[0]) {
                    check_block(plan, ref, bitmap, index++, l, b, res);
                }
            }
        }
    }
    uint64_t words = (plan->useful + 63u) / 64u;
    for (uint64_t w = 0; w < words; ++w) {
        uint64_t valid = w + 1u < words || plan->useful % 64u == 0u
                             ? ~0ull
                             : (1ull << (plan->useful % 64u)) - 1u;
        uint64_t gaps = ~bitmap[w] & valid;
        if (gaps == 0u) {
            continue;
        }
        if (!res->has_missing) {
            uint64_t bit = 0;
            while (!((gaps >> bit) & 1u)) {
                ++bit;
            }
            res->has_missing = 1;
            tile_of_index(plan, w * 64u + bit, res->missing_tile);
        }
        res->missing += (uint64_t)__builtin_popcountll(gaps);
    }
}

static void check_index(const sim_map_plan *plan, ref_kind ref, uint64_t index,
                        sim_map_check_result *res) {
    int launch;
    uint32_t b[3];
    if (sim_map_plan_block_at(plan, index, &launch, &b[0], &b[1], &b[2])) {
        check_block(plan, ref, NULL, index, launch, b, res);
    }
}

/* Row / layer boundaries of the root-based maps: where a float estimate is most likely off. */
static void check_boundaries(const sim_map_plan *plan, ref_kind ref, sim_map_check_result *res) {
    uint32_t n = plan->n;
    for (uint32_t k = 1; k <= n; ++k) {
        uint64_t start = ref == REF_LTM ? t2(k) : ref == REF_TETRA ? t3(k) : utm_start(k, n);
        check_index(plan, ref, start - 1u, res);
        check_index(plan, ref, start, res);
        /* The rows of layer k - 1: in full for the first and last 64 layers, else every 16th. */
        if (ref == REF_TETRA && (k <= 64u || k + 64u > n || k % 16u == 0u)) {
            for (uint32_t j = 1; j <= k; ++j) {
                check_index(plan, ref, t3(k - 1u) + t2(j) - 1u, res);
                check_index(plan, ref, t3(k - 1u) + t2(j), res);
            }
        }
    }
}

static void check_sampled(const sim_map_plan *plan, ref_kind ref, sim_map_check_result *res) {
    const uint64_t edge = 1u << 14, random = 1u << 18;
    for (uint64_t i = 0; i < edge && i < plan->blocks; ++i) {
        check_index(plan, ref, i, res);
        check_index(plan, ref, plan->blocks - 1u - i, res);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull ^ plan->n;
    for (uint64_t i = 0; i < random; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        check_index(plan, ref, x % plan->blocks, res);
    }
    if (ref != REF_NONE) {
        check_boundaries(plan, ref, res);
    }
}

sim_status sim_map_check(const sim_map_plan *plan, uint64_t full_limit, sim_map_check_result *res,
                         sim_error *err) {
    memset(res, 0, sizeof *res);
    if (plan->blocks > full_limit) {
        ref_kind ref = reference_kind(plan);
        res->reference = ref != REF_NONE;
        check_sampled(plan, ref, res);
        res->exact = !res->has_wrong;
        return SIM_OK;
    }
    uint64_t *bitmap = calloc((size_t)((plan->useful + 63u) / 64u), sizeof *bitmap);
    if (bitmap == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for a %" PRIu64 "-tile coverage map",
                        plan->useful);
    }
    check_full(plan, REF_NONE, bitmap, res);
    res->exact = !res->has_wrong && res->missing == 0 && res->wasted == plan->blocks - plan->useful;
    int paper = plan->dim == 2 ? sim_pair_map_is_paper_float((sim_pair_map)plan->map)
                               : sim_triplet_map_is_paper_float((sim_triplet_map)plan->map);
    if (!res->exact && paper) {
        /* A float variant drops blocks instead of mapping them outside, so only a comparison
         * with its exact sibling names the first wrong block: run again with it. */
        memset(res, 0, sizeof *res);
        memset(bitmap, 0, (size_t)((plan->useful + 63u) / 64u) * sizeof *bitmap);
        res->reference = 1;
        check_full(plan, REF_SIBLING, bitmap, res);
        res->exact = 0;
    }
    free(bitmap);
    res->full = 1;
    return SIM_OK;
}

void sim_map_check_describe(const sim_map_plan *plan, const sim_map_check_result *res, char *buf,
                            size_t size) {
    char how[96];
    if (res->full) {
        snprintf(how, sizeof how, "full, all %" PRIu64 " blocks", res->checked);
    } else {
        snprintf(how, sizeof how, "sampled %" PRIu64 " blocks%s", res->checked,
                 res->reference ? " against the exact reference" : ", in-domain only");
    }
    if (res->exact) {
        snprintf(buf, size, "exact: yes (%s)", how);
        return;
    }
    char got[48] = "none";
    if (res->has_wrong) {
        if (res->wrong_got) {
            format_tile(plan, res->wrong_tile, got, sizeof got);
        }
        snprintf(buf, size,
                 "exact: NO (%s), first wrong block %" PRIu64 " (launch %d, block %u,%u,%u) -> %s: "
                 "%s",
                 how, res->wrong_index, res->wrong_launch, res->wrong_block[0], res->wrong_block[1],
                 res->wrong_block[2], got, res->wrong_what);
        return;
    }
    char miss[48] = "?";
    if (res->has_missing) {
        format_tile(plan, res->missing_tile, miss, sizeof miss);
    }
    snprintf(buf, size, "exact: NO (%s), %" PRIu64 " tiles never produced, first %s", how,
             res->missing, miss);
}
