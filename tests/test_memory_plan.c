/* SPDX-License-Identifier: MIT
 * nbsim — the GPU memory plan and the size limits of a run on the cell grid (issue 39), on the
 * CPU and with no allocation of the sizes planned: the parts add up in 64 bits past 2^32 bytes, a
 * plan grows with N and with friction, the largest N that fits is the bisection's edge, the
 * refusal names both figures and the largest N, a run on the grid takes N past the pair maps'
 * 8.4M (up to CUB's int) while every other run keeps the maps' limit, and the backend plans the
 * tile-pair map only where it launches one. */
#include <stdlib.h>
#include <string.h>

#include "ensure.h"
#include "nbsim/memory_plan.h"
#include "nbsim/size_limits.h"
#include "step/backend_impl.h"

static sim_backend_config grid_config(void) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CUDA;
    c.cull = 1;
    c.tile = 32;
    return c;
}

static void test_parts_add_up(void) {
    const sim_backend_config c = grid_config();
    sim_params p = sim_params_default();
    sim_memory_plan plan;
    sim_memory_plan_cuda(200000000u, &c, &p, 0.0, 0.0, 0, &plan);
    double sum = 0.0;
    for (int k = 0; k < plan.count; ++k) {
        ENSURE(plan.part[k].name != NULL && plan.part[k].per_body > 0.0);
        sum += plan.part[k].per_body;
    }
    ENSURE_NEAR(sum, plan.per_body, 1e-9);
    /* 64-bit: 200M bodies of a few hundred bytes each pass 2^32 bytes many times over */
    ENSURE(plan.need > (1ull << 36) && plan.need < (1ull << 37));
    ENSURE(plan.need >= (uint64_t)(plan.per_body * 200000000.0));
    ENSURE(plan.growth > 0); /* the lists' first doubling */
    /* the bodies alone: pos, vel, force and a speed, 52 bytes; a run on the grid lists */
    ENSURE_NEAR(plan.part[0].per_body, 52.0, 0.0);
    ENSURE(plan.per_body > 300.0 && plan.per_body < 420.0);
    char text[4096];
    sim_memory_plan_text(&plan, text, sizeof text);
    ENSURE(strstr(text, "neighbour lists: entries") != NULL && strstr(text, "B/body") != NULL);
    printf("  gas of 200M on the grid: %.1f bytes a body, %.2f GB\n%s", plan.per_body,
           (double)plan.need * 1e-9, text);
    /* the grid's cells as the backend counts them replace the most a body takes */
    sim_memory_plan exact;
    sim_memory_plan_cuda(200000000u, &c, &p, 0.5, 0.5, 200000000u, &exact);
    ENSURE_NEAR(plan.per_body - exact.per_body, 7.0 * 12.0, 1e-6);
}

static void test_friction_and_culling(void) {
    sim_backend_config c = grid_config();
    sim_params p = sim_params_default();
    sim_memory_plan off, on, wide, unculled;
    sim_memory_plan_cuda(1000000u, &c, &p, 0.5, 0.5, 0, &off);
    p.friction = 0.5;
    sim_memory_plan_cuda(1000000u, &c, &p, 0.5, 0.5, 0, &on);
    sim_memory_plan_cuda(1000000u, &c, &p, 0.25, 0.5, 0, &wide);
    /* friction: the springs beside 16 entries a body (60 B each) and two tables of 21 slots of
     * 28 B (equal spheres: 18 neighbours and 3 walls) */
    ENSURE_NEAR(on.per_body - off.per_body,
                16.0 * 60.0 + 12.0 + 2.0 * (21.0 * 28.0 + 4.0) + 8.0, 1e-6);
    ENSURE(wide.per_body > on.per_body); /* a smaller sphere beside a larger: more neighbours */
    c.cull = 0;
    p.friction = 0.0;
    sim_memory_plan_cuda(1000000u, &c, &p, 0.5, 0.5, 0, &unculled);
    ENSURE_NEAR(unculled.per_body, 100.0, 1e-9); /* the bodies, spin and torque alone */
    ENSURE(unculled.growth == 0);
}

static void test_largest_and_refusal(void) {
    const sim_backend_config c = grid_config();
    const sim_params p = sim_params_default();
    const uint64_t bytes = 80ull * 1000 * 1000 * 1000;
    const uint32_t most = sim_memory_plan_largest(&c, &p, 0.0, 0.0, SIM_GRID_MAX_BODIES, bytes);
    sim_memory_plan at, above;
    sim_memory_plan_cuda(most, &c, &p, 0.0, 0.0, 0, &at);
    sim_memory_plan_cuda(most + 1u, &c, &p, 0.0, 0.0, 0, &above);
    ENSURE(at.need <= bytes && above.need > bytes);
    ENSURE(most > 150000000u && most < 260000000u);
    ENSURE(sim_memory_plan_largest(&c, &p, 0.0, 0.0, 1000u, bytes) == 1000u); /* the limit */
    ENSURE(sim_memory_plan_largest(&c, &p, 0.0, 0.0, SIM_GRID_MAX_BODIES, 1000u) == 0u);
    above.free_bytes = bytes;
    above.total_bytes = bytes;
    above.largest_n = most;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_memory_plan_check(&above, "the GPU", &err) == SIM_OUT_OF_MEMORY);
    char want[64];
    snprintf(want, sizeof want, "at most %u", most);
    ENSURE_MSG(strstr(err.message, "bodies need") != NULL &&
                   strstr(err.message, "the GPU has 80.00 GB free") != NULL &&
                   strstr(err.message, "bodies fit with these settings") != NULL,
               "%s", err.message);
    at.free_bytes = bytes;
    ENSURE(sim_memory_plan_check(&at, "the GPU", &err) == SIM_OK);
    at.free_bytes = 0; /* no device asked: nothing to refuse */
    ENSURE(sim_memory_plan_check(&above, "x", &err) == SIM_OUT_OF_MEMORY);
    above.free_bytes = 0;
    ENSURE(sim_memory_plan_check(&above, "x", &err) == SIM_OK);
}

static void test_grid_limits(void) {
    sim_backend_config c = grid_config();
    sim_params p = sim_params_default();
    ENSURE(sim_config_runs_on_grid(&c, &p));
    ENSURE(sim_run_max_bodies(&c, &p) == SIM_GRID_MAX_BODIES);
    /* every other run keeps the maps' limit */
    sim_backend_config o = c;
    o.kind = SIM_BACKEND_CPU; /* lists from tile pairs */
    ENSURE(!sim_config_runs_on_grid(&o, &p) && sim_run_max_bodies(&o, &p) == 65535u * 32u);
    o = c;
    o.cull = 0;
    ENSURE(!sim_config_runs_on_grid(&o, &p));
    o = c;
    o.pair_map = SIM_PAIR_FULL;
    ENSURE(!sim_config_runs_on_grid(&o, &p));
    o = c;
    o.multi.world = 2;
    ENSURE(!sim_config_runs_on_grid(&o, &p));
    o = c;
    sim_backend_tuning tiles = sim_backend_tuning_default();
    tiles.nlist_build = SIM_NLIST_BUILD_TILES;
    o.tuning = &tiles;
    ENSURE(!sim_config_runs_on_grid(&o, &p));
    sim_params q = p;
    q.skin.set = 1;
    q.skin.value = 0.0; /* the tile pairs, swept */
    ENSURE(!sim_config_runs_on_grid(&c, &q));
    q = p;
    q.triplets = 1; /* a triplet map */
    ENSURE(!sim_config_runs_on_grid(&c, &q) && sim_run_max_bodies(&c, &q) == 131072u);
    q.atm_cutoff = 3.0; /* culled by a cut-off: the culled triplets' limit */
    ENSURE(sim_config_runs_on_grid(&c, &q));
    ENSURE(sim_run_max_bodies(&c, &q) == sim_triplet_culled_max_bodies());
}

/* A backend's plan_maps past the maps' limit: on the grid the pair map's plan is left out and
 * nothing fails; the same N unculled or on the CPU is refused. */
static void test_plan_maps_on_grid(void) {
    sim_backend b;
    memset(&b, 0, sizeof b);
    b.config = grid_config();
    b.params = sim_params_default();
    b.n = 100000000u; /* 3,125,000 tiles of 32 */
    b.rank = (sim_rank){0, 1, 0, NULL};
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_backend_plan_maps(&b, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, &b.params,
                                     &err) == SIM_OK,
               "%s", err.message);
    ENSURE(!b.pair_planned && b.cull_levels == 2);
    b.config.kind = SIM_BACKEND_CPU;
    ENSURE(sim_backend_plan_maps(&b, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, &b.params, &err) ==
           SIM_BAD_ARGUMENT);
    b.config.kind = SIM_BACKEND_CUDA;
    b.n = 1000000u;
    ENSURE(sim_backend_plan_maps(&b, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, &b.params, &err) ==
           SIM_OK);
    ENSURE(b.pair_planned);
}

static const ensure_test tests[] = {
    {"parts_add_up", test_parts_add_up},
    {"friction_and_culling", test_friction_and_culling},
    {"largest_and_refusal", test_largest_and_refusal},
    {"grid_limits", test_grid_limits},
    {"plan_maps_on_grid", test_plan_maps_on_grid},
};

ENSURE_MAIN(tests)
