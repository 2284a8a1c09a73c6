/* SPDX-License-Identifier: MIT
 * nbsim — several GPUs against one (skips below two): the forces of 2 (and 4, where there are
 * four) GPUs equal one GPU's within the GPU tests' float tolerances (only the order of float sums
 * differs), for pair maps culled and not, bb's row split, the full sweep and the ATM triplets
 * (all triples, and within a cut-off culled: the ranks' rows hold every tile triple once);
 * energies agree; after frames every rank is bit-identical to rank 0; and two processes with one
 * GPU each (the NCCL id through a file) give the forces of one process with two GPUs.
 *
 * The two processes are forked before this process touches CUDA (a CUDA context does not
 * survive fork); each writes its F_0 to a file the parent compares after its own runs. */
#define _POSIX_C_SOURCE 200809L
#include "step/backend_impl.h"
#include "nbsim/dist.h"
#include "test_gpu_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ensure.h"

#define TOL_F_L2 1e-5 /* test_gpu_backend.c's float tolerances */
#define TOL_F_BODY 1e-4
#define FLOOR 0.1

static const gpu_scene k_pile = {6000, 0.05, 0.95, 0.5, 3}; /* contacts in every tile kind */
static const gpu_scene k_atm = {1100, 0.05, 1.6, 0.1, 5};   /* 35 triplet tiles, partial last */

static int g_devices;
static char g_dir[256];

static sim_backend_config config_for(int pair_map, int triplet_map, int cull, uint32_t tile,
                                     int g) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CUDA;
    c.pair_map = pair_map;
    c.triplet_map = (sim_triplet_map)triplet_map;
    c.cull = cull;
    c.tile = tile;
    /* one GPU lists from the tile pairs too, as ranks do: the tile pairs found are compared */
    static sim_backend_tuning tiles;
    tiles = sim_backend_tuning_default();
    tiles.nlist_build = SIM_NLIST_BUILD_TILES;
    c.tuning = &tiles;
    if (g > 1) {
        c.multi.world = g;
        c.multi.local = g;
    }
    return c;
}

/* triplets: 0 off, 1 all triples, 2 within an ATM cut-off of g_atm_cutoff, culled */
static double g_atm_cutoff;

static sim_params params_for(double half, int triplets) {
    sim_params p = sim_params_default();
    p.atm_cutoff = triplets == 2 ? g_atm_cutoff : 0.0;
    p.box_half = half;
    p.gravity = (sim_vec3d){0.0, -9.81, 0.0};
    p.triplets = triplets != 0;
    p.atm_nu = triplets ? 1e-6 : 0.0;
    p.steps_per_frame = 4;
    return p;
}

/* One GPU and g GPUs from the same state: F_0, F after two frames, energies, ranks identical. */
static void compare(const char *what, const gpu_scene *sc, int pair_map, int triplet_map, int cull,
                    uint32_t tile, int triplets, int g) {
    if (g > g_devices) {
        return;
    }
    sim_state s0;
    double half = 0.0;
    sim_error err;
    ENSURE(gpu_scene_make(sc, &s0, &half, &err) == SIM_OK);
    const sim_params p = params_for(half, triplets);
    sim_backend_config c1 = config_for(pair_map, triplet_map, cull, tile, 1);
    sim_backend_config cg = config_for(pair_map, triplet_map, cull, tile, g);
    sim_backend *one = NULL, *many = NULL;
    ENSURE_MSG(sim_backend_create(&c1, &p, &s0, &one, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(sim_backend_create(&cg, &p, &s0, &many, &err) == SIM_OK, "%s: %s", what,
               err.message);
    gpu_snapshot a0, b0, a1, b1;
    memset(&a1, 0, sizeof a1);
    memset(&b1, 0, sizeof b1);
    if (one == NULL || many == NULL || gpu_snapshot_take(one, s0.n, &a0, &err) != SIM_OK ||
        gpu_snapshot_take(many, s0.n, &b0, &err) != SIM_OK) {
        sim_backend_destroy(one);
        sim_backend_destroy(many);
        sim_state_free(&s0);
        return;
    }
    sim_frame_timing t1, tg;
    for (int f = 0; f < 2; ++f) {
        ENSURE(sim_backend_run_frame(one, &t1, &err) == SIM_OK);
        ENSURE_MSG(sim_backend_run_frame(many, &tg, &err) == SIM_OK, "%s", err.message);
    }
    ENSURE(tg.ranks == g && (g == 1 || tg.comm_ms > 0.0));
    ENSURE(gpu_snapshot_take(one, s0.n, &a1, &err) == SIM_OK);
    ENSURE(gpu_snapshot_take(many, s0.n, &b1, &err) == SIM_OK);
    const gpu_err f0 = gpu_compare3(b0.force, a0.force, s0.n, FLOOR);
    const gpu_err f1 = gpu_compare3(b1.force, a1.force, s0.n, FLOOR);
    printf("  %-28s G %d  F0 %.1e/%.1e  F8 %.1e/%.1e  comm %.3f ms\n", what, g, f0.rel_l2, f0.worst,
           f1.rel_l2, f1.worst, tg.comm_ms / tg.steps);
    ENSURE_MSG(f0.rel_l2 <= TOL_F_L2 && f0.worst <= TOL_F_BODY, "%s G %d: F_0 %.3g / body %.3g",
               what, g, f0.rel_l2, f0.worst);
    ENSURE_MSG(f1.rel_l2 <= 4 * TOL_F_L2 && f1.worst <= 4 * TOL_F_BODY,
               "%s G %d: F after 8 steps %.3g / body %.3g", what, g, f1.rel_l2, f1.worst);
    if (cull) {
        ENSURE_MSG(tg.tile_pairs == t1.tile_pairs, "%s: %llu vs %llu tile pairs", what,
                   (unsigned long long)tg.tile_pairs, (unsigned long long)t1.tile_pairs);
    }
    if (triplets == 2 && !t1.atm_lists) { /* the ranks' rows hold every tile triple once */
        ENSURE_MSG(t1.triplet_culled && tg.triplet_culled && tg.tile_triples == t1.tile_triples &&
                       t1.tile_triples > 0 && t1.tile_triples < t1.tile_triples_total,
                   "%s: %llu vs %llu tile triples (of %llu)", what,
                   (unsigned long long)tg.tile_triples, (unsigned long long)t1.tile_triples,
                   (unsigned long long)t1.tile_triples_total);
    }
    sim_energy e1, eg;
    ENSURE(sim_backend_energy(one, &e1, &err) == SIM_OK);
    ENSURE(sim_backend_energy(many, &eg, &err) == SIM_OK);
    ENSURE_MSG(fabs(eg.total - e1.total) <= 1e-5 * (fabs(e1.total) + fabs(e1.kinetic)),
               "%s: energy %.9g vs %.9g", what, eg.total, e1.total);
    for (int k = 1; k < g; ++k) { /* the all-reduce gave every rank the same sums */
        gpu_snapshot r;
        ENSURE(sim_state_alloc(&r.state, s0.n, &err) == SIM_OK);
        r.force = calloc(s0.n, sizeof *r.force);
        ENSURE(sim_multi_read_rank(many, k, &r.state, r.force, &err) == SIM_OK);
        ENSURE_MSG(memcmp(r.state.pos, b1.state.pos, s0.n * sizeof *r.state.pos) == 0 &&
                       memcmp(r.state.vel, b1.state.vel, s0.n * sizeof *r.state.vel) == 0 &&
                       memcmp(r.force, b1.force, s0.n * sizeof *r.force) == 0,
                   "%s: rank %d of %d differs from rank 0", what, k, g);
        gpu_snapshot_free(&r);
    }
    gpu_snapshot_free(&a0);
    gpu_snapshot_free(&b0);
    gpu_snapshot_free(&a1);
    gpu_snapshot_free(&b1);
    sim_backend_destroy(one);
    sim_backend_destroy(many);
    sim_state_free(&s0);
}

static void test_pairs(void) {
    const int maps[] = {SIM_PAIR_MAP_BB, SIM_PAIR_MAP_LTM, SIM_PAIR_MAP_RM, SIM_PAIR_MAP_REC};
    for (int g = 2; g <= 4; g += 2) {
        for (size_t m = 0; m < sizeof maps / sizeof maps[0]; ++m) {
            char what[64];
            snprintf(what, sizeof what, "pairs %s", sim_pair_map_name((sim_pair_map)maps[m]));
            compare(what, &k_pile, maps[m], SIM_TRIPLET_MAP_TETRA, 0, 64, 0, g);
        }
        compare("pairs full", &k_pile, SIM_PAIR_FULL, SIM_TRIPLET_MAP_TETRA, 0, 64, 0, g);
        compare("pairs ltm culled (1 pass)", &k_pile, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1,
                32, 0, g);
        gpu_scene big = k_pile;
        big.n = 70000; /* 2188 tiles of 32: the two-pass cull */
        compare("pairs rm culled (2 passes)", &big, SIM_PAIR_MAP_RM, SIM_TRIPLET_MAP_TETRA, 1, 32,
                0, g);
    }
}

static void test_triplets(void) {
    const int maps[] = {SIM_TRIPLET_MAP_BB, SIM_TRIPLET_MAP_TETRA, SIM_TRIPLET_MAP_RM};
    for (int g = 2; g <= 4; g += 2) {
        for (size_t m = 0; m < sizeof maps / sizeof maps[0]; ++m) {
            char what[64];
            snprintf(what, sizeof what, "triplets %s",
                     sim_triplet_map_name((sim_triplet_map)maps[m]));
            compare(what, &k_atm, SIM_PAIR_MAP_LTM, maps[m], 1, 64, 1, g);
        }
        /* the ATM cut-off culled: each GPU lists and sweeps its rows' tile triples */
        g_atm_cutoff = 0.5;
        compare("triplets cut-off 0.5 culled", &k_atm, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1,
                64, 2, g);
        gpu_scene big = k_atm;
        big.n = 20000; /* 625 triplet tiles */
        g_atm_cutoff = 0.35;
        compare("triplets cut-off 0.35 culled", &big, SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 1,
                64, 2, g);
    }
}

/* ---- two processes ---- */

static void force_path(char *buf, size_t cap, int rank) {
    snprintf(buf, cap, "%s/f%d.bin", g_dir, rank);
}

/* Exit status of a child whose sum over the processes (the agreement between frames) was wrong. */
enum { kBadSum = 3 };

/* The agreement the command line makes after every frame: host values summed over the two
 * processes, after a frame (the backend's streams busy until then). 1: right. */
static int sums_over_processes(sim_backend *b, int rank, sim_error *err) {
    sim_frame_timing t;
    double v[3] = {rank + 1.0, 10.0 * (rank + 1), rank == 0 ? 1.0 : 0.0};
    if (sim_backend_run_frame(b, &t, err) != SIM_OK ||
        sim_backend_sum_over_processes(b, v, 3, err) != SIM_OK) {
        return 0;
    }
    return v[0] == 3.0 && v[1] == 30.0 && v[2] == 1.0;
}

/* A child: rank `rank` of 2 on device `rank`, the id through the file; writes its F_0, then
 * checks a sum over the processes after a frame. */
static int child_rank(int rank) {
    if (sim_cuda_device_count() < 2 || !sim_multi_have_nccl()) {
        return 77;
    }
    sim_state s0;
    double half = 0.0;
    sim_error err = {SIM_OK, ""};
    if (gpu_scene_make(&k_pile, &s0, &half, &err) != SIM_OK) {
        return 1;
    }
    const sim_params p = params_for(half, 0);
    sim_backend_config c = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0, 64, 1);
    c.multi.world = 2;
    c.multi.rank = rank;
    c.multi.local = 1;
    c.multi.device = rank;
    c.multi.id_set = 1;
    char id_path[300];
    snprintf(id_path, sizeof id_path, "%s/nccl.id", g_dir);
    sim_status st = rank == 0 ? sim_multi_nccl_id(c.multi.nccl_id, &err) : SIM_OK;
    if (st == SIM_OK) {
        const sim_dist_exchange x = {id_path, rank, 2, "test_multi_gpu", 60.0, NULL};
        st = rank == 0 ? sim_dist_write_id(&x, c.multi.nccl_id, &err)
                       : sim_dist_read_id(&x, c.multi.nccl_id, &err);
    }
    sim_backend *b = NULL;
    gpu_snapshot snap;
    if (st == SIM_OK) {
        st = sim_backend_create(&c, &p, &s0, &b, &err);
    }
    if (st == SIM_OK) {
        st = gpu_snapshot_take(b, s0.n, &snap, &err);
    }
    if (st != SIM_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, err.message);
        return 1;
    }
    char path[300];
    force_path(path, sizeof path, rank);
    FILE *f = fopen(path, "wb");
    const int ok = f != NULL && fwrite(snap.force, sizeof *snap.force, s0.n, f) == s0.n;
    if (f != NULL) {
        fclose(f);
    }
    gpu_snapshot_free(&snap);
    const int summed = ok && sums_over_processes(b, rank, &err);
    if (ok && !summed) {
        fprintf(stderr, "rank %d: sum over the processes: %s\n", rank,
                err.message[0] ? err.message : "wrong values");
    }
    sim_backend_destroy(b);
    sim_state_free(&s0);
    return !ok ? 1 : summed ? 0 : kBadSum;
}

static pid_t g_child[2];

static void start_processes(void) {
    fflush(NULL);
    for (int r = 0; r < 2; ++r) {
        g_child[r] = fork();
        if (g_child[r] == 0) {
            _exit(child_rank(r));
        }
    }
}

static void test_two_processes(void) {
    int status[2] = {0, 0};
    for (int r = 0; r < 2; ++r) {
        ENSURE(g_child[r] > 0 && waitpid(g_child[r], &status[r], 0) == g_child[r]);
        ENSURE_MSG(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0, "rank %d exit %d%s", r,
                   WIFEXITED(status[r]) ? WEXITSTATUS(status[r]) : -1,
                   WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == kBadSum
                       ? " (its sum over the processes was wrong)"
                       : "");
    }
    sim_state s0;
    double half = 0.0;
    sim_error err;
    ENSURE(gpu_scene_make(&k_pile, &s0, &half, &err) == SIM_OK);
    const sim_params p = params_for(half, 0);
    sim_backend_config c = config_for(SIM_PAIR_MAP_LTM, SIM_TRIPLET_MAP_TETRA, 0, 64, 2);
    sim_backend *b = NULL;
    gpu_snapshot snap;
    ENSURE(sim_backend_create(&c, &p, &s0, &b, &err) == SIM_OK);
    ENSURE(b != NULL && gpu_snapshot_take(b, s0.n, &snap, &err) == SIM_OK);
    sim_vec3d *f[2] = {calloc(s0.n, sizeof(sim_vec3d)), calloc(s0.n, sizeof(sim_vec3d))};
    for (int r = 0; r < 2 && b != NULL; ++r) {
        char path[300];
        force_path(path, sizeof path, r);
        FILE *in = fopen(path, "rb");
        ENSURE(in != NULL && fread(f[r], sizeof(sim_vec3d), s0.n, in) == s0.n);
        if (in != NULL) {
            fclose(in);
        }
        const gpu_err e = gpu_compare3(f[r], snap.force, s0.n, FLOOR);
        printf("  two processes, rank %d vs one process with 2 GPUs: F0 %.1e/%.1e\n", r, e.rel_l2,
               e.worst);
        ENSURE(e.rel_l2 <= TOL_F_L2 && e.worst <= TOL_F_BODY);
        remove(path);
    }
    ENSURE_MSG(memcmp(f[0], f[1], s0.n * sizeof(sim_vec3d)) == 0,
               "the two processes' ranks differ");
    free(f[0]);
    free(f[1]);
    if (b != NULL) {
        gpu_snapshot_free(&snap);
    }
    sim_backend_destroy(b);
    sim_state_free(&s0);
}

static const ensure_test tests[] = {
    {"multi_gpu_two_processes", test_two_processes},
    {"multi_gpu_pairs", test_pairs},
    {"multi_gpu_triplets", test_triplets},
};

int main(int argc, char **argv) {
    const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/nbsim-multi-gpu-%ld", tmp, (long)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", g_dir);
    if (system(cmd) != 0) {
        return 1;
    }
    start_processes(); /* before this process touches CUDA */
    g_devices = sim_cuda_device_count();
    if (g_devices < 2 || !sim_multi_have_nccl()) {
        for (int r = 0; r < 2; ++r) {
            waitpid(g_child[r], NULL, 0);
        }
        printf("multi-GPU tests skipped: %d CUDA device%s, NCCL %s\n", g_devices,
               g_devices == 1 ? "" : "s", sim_multi_have_nccl() ? "built" : "not built");
        return ENSURE_SKIP_CODE;
    }
    const int r =
        ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) { /* (void) does not quiet glibc's warn_unused_result under FORTIFY */
        fprintf(stderr, "test_multi_gpu: could not remove %s\n", g_dir);
    }
    return r;
}
