/* SPDX-License-Identifier: MIT
 * nbsim — quick throughput of the CUDA backend's force kernels on a dense scene: unique pairs/s
 * (N (N-1) / 2 per step) and unique triples/s (N (N-1) (N-2) / 6 per step), from the backend's
 * own event timings, median over timed frames after a warm-up frame. Fails only when a run
 * fails; the numbers are for people (`test_gpu_throughput` prints a table). The full sweep
 * evaluates N (N-1) ordered pairs but is reported per unique pair, so sym/full compares the
 * time to the same result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "test_gpu_util.h"

#define TIMED_FRAMES 3

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median ms per step of the pair phase (triplets = 0) or of the triplet phase. */
static double phase_ms(uint32_t n, sim_pair_map pm, sim_triplet_map tm, uint32_t tile, int full,
                       int triplets) {
    sim_state s0;
    double box_half;
    sim_error err = {SIM_OK, ""};
    const gpu_scene def = {n, 0.5, 0.95, 0.5, 2024u};
    if (gpu_scene_make(&def, &s0, &box_half, &err) != SIM_OK) {
        ENSURE_MSG(0, "%s", err.message);
        return -1.0;
    }
    sim_params p = sim_params_default();
    p.box_half = box_half;
    p.gravity = (sim_vec3d){0.0, 0.0, -9.81};
    p.steps_per_frame = triplets ? 1 : 2;
    p.triplets = triplets;
    p.atm_nu = 0.01;
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CUDA;
    c.pair_map = full ? SIM_PAIR_FULL : (sim_pair_choice)pm;
    c.triplet_map = tm;
    c.tile = tile;
    c.cull = 0; /* every pair swept: the rate counts all N (N-1) / 2 pairs */
    sim_backend *b = NULL;
    double ms[TIMED_FRAMES];
    double result = -1.0;
    sim_status st = sim_backend_create(&c, &p, &s0, &b, &err);
    sim_frame_timing t;
    if (st == SIM_OK) {
        st = sim_backend_run_frame(b, &t, &err); /* warm-up */
    }
    for (int f = 0; st == SIM_OK && f < TIMED_FRAMES; ++f) {
        st = sim_backend_run_frame(b, &t, &err);
        ms[f] = (triplets ? t.triplet_ms : t.pair_ms) / t.steps;
    }
    ENSURE_MSG(st == SIM_OK, "N=%u %s: %s", n, sim_pair_map_name(pm), err.message);
    if (st == SIM_OK) {
        qsort(ms, TIMED_FRAMES, sizeof ms[0], cmp_double);
        result = ms[TIMED_FRAMES / 2];
    }
    sim_backend_destroy(b);
    sim_state_free(&s0);
    return result;
}

static double pairs_per_s(uint32_t n, double ms) {
    return (double)n * (double)(n - 1) / 2.0 / (ms * 1e-3);
}

static void test_pairs(void) {
    static const uint32_t tiles[] = {32, 64, 128};
    static const sim_pair_map maps[] = {SIM_PAIR_MAP_LTM, SIM_PAIR_MAP_BB};
    uint32_t best = 128;
    double best_ms = 1e30;
    printf("pairs: unique pairs/s, median of %d frames (ms per step)\n", TIMED_FRAMES);
    for (int m = 0; m < 2; ++m) {
        for (int ti = 0; ti < 3; ++ti) {
            const double ms = phase_ms(65536, maps[m], SIM_TRIPLET_MAP_TETRA, tiles[ti], 0, 0);
            printf("  N=%-7u %-4s tile %-3u %8.3f ms  %.3e pairs/s\n", 65536u,
                   sim_pair_map_name(maps[m]), tiles[ti], ms, pairs_per_s(65536, ms));
            if (m == 0 && ms > 0.0 && ms < best_ms) {
                best_ms = ms;
                best = tiles[ti];
            }
        }
    }
    printf("  best tile (ltm, N=65536): %u\n", best);
    static const uint32_t sizes[] = {65536, 262144};
    for (int si = 0; si < 2; ++si) {
        double sym = 0.0;
        for (int m = 0; m < 2; ++m) {
            const double ms = phase_ms(sizes[si], maps[m], SIM_TRIPLET_MAP_TETRA, best, 0, 0);
            printf("  N=%-7u %-4s tile %-3u %8.3f ms  %.3e pairs/s\n", sizes[si],
                   sim_pair_map_name(maps[m]), best, ms, pairs_per_s(sizes[si], ms));
            if (m == 0) {
                sym = ms;
            }
        }
        const double full =
            phase_ms(sizes[si], SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, best, 1, 0);
        printf("  N=%-7u full tile %-3u %8.3f ms  %.3e pairs/s  (sym ltm %.2fx faster)\n",
               sizes[si], best, full, pairs_per_s(sizes[si], full), full / sym);
    }
}

static void test_triplets(void) {
    const uint32_t n = 4096;
    const double triples = (double)n * (n - 1) * (n - 2) / 6.0;
    printf("triplets: unique triples/s at N=%u, median of %d frames\n", n, TIMED_FRAMES);
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        const double ms = phase_ms(n, SIM_PAIR_MAP_LTM, (sim_triplet_map)m, 128, 0, 1);
        printf("  %-12s %9.3f ms  %.3e triples/s\n", sim_triplet_map_name((sim_triplet_map)m), ms,
               triples / (ms * 1e-3));
    }
}

static const ensure_test tests[] = {
    {"pairs", test_pairs},
    {"triplets", test_triplets},
};

int main(int argc, char **argv) {
    if (!gpu_require_device()) {
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
