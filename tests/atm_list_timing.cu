/* SPDX-License-Identifier: MIT
 * nbsim — the ATM cut-off on the GPU two ways, timed on the same scene (scripts/gpu_atm_list.sh):
 *   tiles: today's path, the CUDA backend with culling (triplet_cull_kernels.cu + the culled ATM
 *          kernel): per step, the culling and the sweep of the surviving 32^3 tile triples (the
 *          backend's own phase timings, one step per frame from the scene's start, as
 *          `nbsim bench triplets --atm-cutoff` times them);
 *   lists: sim/nlist/atm_list_kernels.cu over the same bodies in the backend's slot order
 *          (Morton), half lists (atomics) and full lists (none): the build and the sweep each
 *          timed alone with CUDA events, the build amortised over the steps between rebuilds.
 * The rebuild cadence per skin s: the steps the scene's fastest body needs to cross s/2 at its
 * initial speed (at least 1): a lower bound on the real interval (a rebuild happens when some
 * body has crossed s/2), so the lists' figure is their worst case. The contacts' automatic skin
 * (sim_nlist_auto_skin) is printed beside it: sharing the contacts' displacement check, the
 * ATM lists would be rebuilt at that skin's cadence.
 * A white-box program (the drivers are private to the library), like cull_timing.c.
 * Usage: atm_list_timing --scene triplets|gas [--n 16384,262144] [--cutoff 3] [--skins 0.1,0.3]
 *                        [--repeats 20] [--csv FILE (appended; header when new)] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "nbsim/internal/backend.h"
#include "nlist/atm_list_kernels.h"
#include "nlist/nlist.h"
#include "test_atm_list_util.h"

#define TRY_CUDA(x)                                                                                \
    do {                                                                                           \
        const cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define TRY_SIM(x)                                                                                 \
    do {                                                                                           \
        if ((x) != SIM_OK) {                                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, err.message);              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

struct tile_result {
    double cull_ms, kernel_ms;
    uint64_t tile_triples;
};

/* Today's path through the backend: medians of `repeats` steps from the scene's start. */
static tile_result time_tiles(const atm_bodies &sc, int repeats) {
    sim_error err;
    sim_backend_config cfg = sim_backend_config_default();
    cfg.kind = SIM_BACKEND_CUDA;
    cfg.cull = 1;
    sim_params p = sc.p;
    p.steps_per_frame = 1;
    sim_backend *b = NULL;
    TRY_SIM(sim_backend_create(&cfg, &p, &sc.s, &b, &err));
    std::vector<double> cull, kern;
    tile_result r = {0, 0, 0};
    for (int k = 0; k < repeats + 2; ++k) {
        sim_frame_timing t;
        TRY_SIM(sim_backend_set_state(b, &sc.s, &err));
        TRY_SIM(sim_backend_run_frame(b, &t, &err));
        if (!t.triplet_culled) {
            fprintf(stderr, "the triplets were not culled\n");
            exit(1);
        }
        if (k >= 2) { /* two warm-up steps */
            cull.push_back(t.triplet_cull_ms + t.atm_list_ms); /* whichever ran */
            kern.push_back(t.triplet_ms);
        }
        r.tile_triples = t.tile_triples;
    }
    sim_backend_destroy(b);
    r.cull_ms = median(cull);
    r.kernel_ms = median(kern);
    return r;
}

struct list_result {
    double build_ms, sweep_ms, entries_per_body, bytes_per_body;
    unsigned long long triples;
};

static list_result time_lists(const atm_bodies &sc, int half, float skin, int repeats) {
    sim_error err;
    const uint32_t n = (uint32_t)sc.pos.size();
    const sim_physics ph = sim_physics_from_params(&sc.p);
    const sim_physics_f phf = sim_physics_to_float(&ph);
    const float a2_max = sim_atm_a2_max_f(phf.atm.atm_cutoff2);
    cudaStream_t s;
    TRY_CUDA(cudaStreamCreate(&s));
    sim_gpu_bodies b;
    memset(&b, 0, sizeof b);
    b.n = n;
    TRY_CUDA(cudaMalloc((void **)&b.pos, n * sizeof(sim_vec4f)));
    TRY_CUDA(cudaMalloc((void **)&b.force, n * sizeof(sim_vec4f)));
    TRY_CUDA(cudaMemcpy(b.pos, sc.pos.data(), n * sizeof(sim_vec4f), cudaMemcpyHostToDevice));
    TRY_CUDA(cudaMemset(b.force, 0, n * sizeof(sim_vec4f)));
    sim_gpu_atm_list l;
    TRY_SIM(sim_gpu_atm_list_alloc(&l, n, SIM_ATM_LIST_INITIAL_CAP, half, s, &err));
    TRY_SIM(sim_gpu_atm_list_build_complete(&b, &l, a2_max, skin, s, NULL, &err));
    list_result r;
    TRY_SIM(sim_gpu_atm_list_forces(&b, &l, &phf, NULL, 1, s, &err));
    TRY_CUDA(cudaMemcpyAsync(&r.triples, &l.counts->triples, sizeof r.triples,
                             cudaMemcpyDeviceToHost, s));
    std::vector<uint32_t> count(n);
    TRY_CUDA(cudaMemcpyAsync(count.data(), l.count, n * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                             s));
    TRY_CUDA(cudaStreamSynchronize(s));
    double entries = 0.0;
    for (uint32_t c : count) {
        entries += c;
    }
    r.entries_per_body = entries / n;
    r.bytes_per_body = (double)sim_gpu_atm_list_bytes(&l) / n;
    cudaEvent_t e0, e1;
    TRY_CUDA(cudaEventCreate(&e0));
    TRY_CUDA(cudaEventCreate(&e1));
    std::vector<double> build, sweep;
    for (int k = 0; k < repeats + 2; ++k) {
        float ms = 0.0f;
        TRY_CUDA(cudaEventRecord(e0, s));
        TRY_SIM(sim_gpu_atm_list_build(&b, &l, a2_max, skin, s, &err));
        TRY_CUDA(cudaEventRecord(e1, s));
        TRY_CUDA(cudaEventSynchronize(e1));
        TRY_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (k >= 2) {
            build.push_back(ms);
        }
        TRY_CUDA(cudaEventRecord(e0, s));
        TRY_SIM(sim_gpu_atm_list_forces(&b, &l, &phf, NULL, 0, s, &err));
        TRY_CUDA(cudaEventRecord(e1, s));
        TRY_CUDA(cudaEventSynchronize(e1));
        TRY_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (k >= 2) {
            sweep.push_back(ms);
        }
    }
    r.build_ms = median(build);
    r.sweep_ms = median(sweep);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    sim_gpu_atm_list_free(&l);
    cudaFree(b.pos);
    cudaFree(b.force);
    cudaStreamDestroy(s);
    return r;
}

static int parse_list(const char *v, double *out, int cap) {
    int c = 0;
    for (char *end = NULL; *v && c < cap; v = *end ? end + 1 : end) {
        out[c++] = strtod(v, &end);
    }
    return c;
}

int main(int argc, char **argv) {
    const char *scene = "triplets", *csv_path = NULL;
    double ns[8] = {16384, 262144}, skins[8] = {0.1, 0.3}, cutoff = 3.0;
    int n_count = 2, skin_count = 2, repeats = 20;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "--scene")) {
            scene = argv[a + 1];
        } else if (!strcmp(argv[a], "--n")) {
            n_count = parse_list(argv[a + 1], ns, 8);
        } else if (!strcmp(argv[a], "--skins")) {
            skin_count = parse_list(argv[a + 1], skins, 8);
        } else if (!strcmp(argv[a], "--cutoff")) {
            cutoff = atof(argv[a + 1]);
        } else if (!strcmp(argv[a], "--repeats")) {
            repeats = atoi(argv[a + 1]);
        } else if (!strcmp(argv[a], "--csv")) {
            csv_path = argv[a + 1];
        } else {
            fprintf(stderr, "unknown argument %s\n", argv[a]);
            return 2;
        }
    }
    if (sim_cuda_device_count() == 0) {
        printf("no CUDA device\n");
        return 77;
    }
    FILE *csv = NULL;
    if (csv_path != NULL) {
        FILE *probe = fopen(csv_path, "r");
        const int fresh = probe == NULL;
        if (probe != NULL) {
            fclose(probe);
        }
        csv = fopen(csv_path, "a");
        if (csv == NULL) {
            fprintf(stderr, "cannot write %s\n", csv_path);
            return 1;
        }
        if (fresh) {
            fprintf(csv, "scene,N,cutoff_m,skin_m,contact_auto_skin_m,rebuild_every,tile_triples,"
                         "tile_cull_ms,tile_kernel_ms,tile_ms,half_build_ms,half_sweep_ms,half_ms,"
                         "full_build_ms,full_sweep_ms,full_ms,faster,speedup,triples,"
                         "half_entries_per_body,half_bytes_per_body,full_entries_per_body\n");
        }
    }
    printf("%-9s %8s %5s %6s %10s %9s %9s %9s %9s %9s %9s %7s %8s\n", "scene", "N", "skin", "every",
           "tile_trip", "tile_ms", "h_build", "h_sweep", "half_ms", "f_sweep", "full_ms", "faster",
           "speedup");
    for (int i = 0; i < n_count; ++i) {
        const uint32_t n = (uint32_t)ns[i];
        atm_bodies sc = atm_bodies_builtin(scene, n, cutoff, 1u);
        const double dt = sc.p.dt > 0.0 ? sc.p.dt : sim_default_dt(&sc.p, &sc.s);
        double vmax = 0.0;
        for (uint32_t k = 0; k < n; ++k) {
            const sim_vec4d v = sc.s.vel[k];
            vmax = fmax(vmax, sqrt(v.x * v.x + v.y * v.y + v.z * v.z));
        }
        const double auto_skin = sim_nlist_auto_skin(&sc.p, &sc.s, dt);
        const tile_result t = time_tiles(sc, repeats);
        const double tile_ms = t.cull_ms + t.kernel_ms;
        for (int k = 0; k < skin_count; ++k) {
            const double skin = skins[k];
            const double steps = vmax > 0.0 ? floor(0.5 * skin / (vmax * dt)) : 1e6;
            const double every = fmax(1.0, fmin(steps, 1e6));
            const list_result h = time_lists(sc, 1, (float)skin, repeats);
            const list_result f = time_lists(sc, 0, (float)skin, repeats);
            const double half_ms = h.sweep_ms + h.build_ms / every;
            const double full_ms = f.sweep_ms + f.build_ms / every;
            const double best = fmin(half_ms, full_ms);
            const char *faster = best < tile_ms ? (half_ms <= full_ms ? "half" : "full") : "tiles";
            const double speedup = tile_ms / best;
            printf("%-9s %8u %5.2f %6.0f %10llu %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %7s %8.2f\n",
                   scene, n, skin, every, (unsigned long long)t.tile_triples, tile_ms, h.build_ms,
                   h.sweep_ms, half_ms, f.sweep_ms, full_ms, faster, speedup);
            fflush(stdout);
            if (csv != NULL) {
                fprintf(csv,
                        "%s,%u,%g,%g,%g,%.0f,%llu,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%s,"
                        "%.3f,%llu,%.2f,%.1f,%.2f\n",
                        scene, n, cutoff, skin, auto_skin, every,
                        (unsigned long long)t.tile_triples, t.cull_ms, t.kernel_ms, tile_ms,
                        h.build_ms, h.sweep_ms, half_ms, f.build_ms, f.sweep_ms, full_ms, faster,
                        speedup, h.triples, h.entries_per_body, h.bytes_per_body,
                        f.entries_per_body);
            }
        }
        printf("  (%s N=%u: dt %.3g s, fastest body %.3g m/s, the contacts' automatic skin %.3g m)\n",
               scene, n, dt, vmax, auto_skin);
        sim_state_free(&sc.s);
    }
    if (csv != NULL) {
        fclose(csv);
    }
    return 0;
}
