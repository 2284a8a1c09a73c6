/* SPDX-License-Identifier: MIT
 * nbsim — the ATM cut-off over neighbour lists on the device (sim/nlist/atm_list_kernels.cu)
 * against the CPU reference over lists (sim/nlist/cpu_atm_list.c, itself equal to the culled
 * tile sweep: test_cpu_atm_list) on the `triplets` cluster and the `gas` at R = 3 m, bodies in
 * the backend's slot order (Morton). Skipped (77) without a device.
 *
 * Acceptance (test_gpu_tcull.c's float tolerances):
 *  - forces ||dF|| / ||F|| <= 1e-5 and per body 1e-4 of |F_i| + 0.1 F_rms, bodies of a pair whose
 *    squared distance is within 1e-5 of R^2 left out of the per-body test (float and double may
 *    put it on either side of the cut-off) and counted; ATM energy within 1e-5;
 *  - the triples within the cut-off: the CPU's count (full lists: three times), up to the pairs
 *    on the cut-off; half and full lists give the same forces;
 *  - skins 0 and 0.5 m, and after every body moved by up to half the skin the old lists still
 *    give the reference at the new positions;
 *  - lists that start too short (4 entries) grow in build_complete and then give the same;
 *  - stepped (the CUDA backend's default with a skin on one GPU, sim/cuda/cuda_step.cu): a moving
 *    lattice over 1,000+ steps, the lists rebuilt on the device when a body moved past half the
 *    skin (and after sorts); at every frame their forces at the backend's own state equal the tile
 *    triples' (skin 0, GPU) and the CPU reference's (its lists, double) within 3e-5 (per body
 *    3e-4);
 *    a frame whose lists were shrunk to 4 entries overflows at every step and stays exact, and
 *    the next runs from grown lists; the rebuilds far fewer than the steps; a periodic box and
 *    skin 0 keep the tile triples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda/cuda_backend_impl.h"
#include "ensure.h"
#include "nbsim/internal/backend.h"
#include "nlist/atm_list_kernels.h"
#include "nlist/cpu_atm_list.h"
#include "test_atm_list_util.h"
#include "test_rng.h"

#define TOL_F_L2 1e-5
#define TOL_F_BODY 1e-4
#define TOL_E 1e-5

#define CHECK_CUDA(x) ENSURE_MSG((x) == cudaSuccess, "%s", #x)

/* The CPU reference at pos: forces, energy, triples within R. */
struct reference {
    std::vector<sim_vec3d> f;
    double e;
    uint64_t triples;
    std::vector<char> edge; /* bodies of a pair within 1e-5 of R^2 */
    uint32_t edge_bodies;
};

static reference cpu_reference(const std::vector<sim_vec4d> &pos, const sim_params &p) {
    reference r;
    const uint32_t n = (uint32_t)pos.size();
    const sim_physics ph = sim_physics_from_params(&p);
    sim_cpu_atm_list l;
    sim_error err;
    ENSURE(sim_cpu_atm_list_init(&l, n, &err) == SIM_OK);
    ENSURE(sim_cpu_atm_list_build(&l, pos.data(), p.atm_cutoff, 0.0, &err) == SIM_OK);
    r.f.assign(n, sim_vec3d{0.0, 0.0, 0.0});
    r.e = 0.0;
    r.triples = sim_cpu_atm_list_sweep(&l, 0, n, pos.data(), &ph, r.f.data(), &r.e);
    /* pairs on the cut-off, from the lists of R (1 + 1e-5) */
    r.edge.assign(n, 0);
    ENSURE(sim_cpu_atm_list_build(&l, pos.data(), p.atm_cutoff * (1.0 + 1e-5), 0.0, &err) ==
           SIM_OK);
    const double r2 = p.atm_cutoff * p.atm_cutoff;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t a = 0; a < l.count[i]; ++a) {
            const uint32_t j = l.nbr[(size_t)a * l.stride + i];
            const double dx = pos[j].x - pos[i].x, dy = pos[j].y - pos[i].y,
                         dz = pos[j].z - pos[i].z;
            if (fabs(dx * dx + dy * dy + dz * dz - r2) <= 1e-5 * r2) {
                r.edge[i] = r.edge[j] = 1;
            }
        }
    }
    r.edge_bodies = 0;
    for (uint32_t i = 0; i < n; ++i) {
        r.edge_bodies += r.edge[i];
    }
    sim_cpu_atm_list_free(&l);
    return r;
}

/* ||g - ref|| / ||ref|| and the worst per-body error outside the edge bodies. */
static void compare(const std::vector<sim_vec4f> &g, const reference &r, double *rel,
                    double *worst) {
    double num = 0.0, den = 0.0;
    const size_t n = r.f.size();
    for (size_t i = 0; i < n; ++i) {
        const double dx = g[i].x - r.f[i].x, dy = g[i].y - r.f[i].y, dz = g[i].z - r.f[i].z;
        num += dx * dx + dy * dy + dz * dz;
        den += r.f[i].x * r.f[i].x + r.f[i].y * r.f[i].y + r.f[i].z * r.f[i].z;
    }
    const double rms = sqrt(den / (double)n);
    *rel = sqrt(num / den);
    *worst = 0.0;
    for (size_t i = 0; i < n; ++i) {
        if (r.edge[i]) {
            continue;
        }
        const double dx = g[i].x - r.f[i].x, dy = g[i].y - r.f[i].y, dz = g[i].z - r.f[i].z;
        const double f = sqrt(r.f[i].x * r.f[i].x + r.f[i].y * r.f[i].y + r.f[i].z * r.f[i].z);
        const double e = sqrt(dx * dx + dy * dy + dz * dz) / (f + 0.1 * rms);
        *worst = isfinite(e) ? fmax(*worst, e) : INFINITY;
    }
}

/* The device side: bodies, lists, an energy slot. */
struct device {
    sim_gpu_bodies b;
    double *d_energy;
    cudaStream_t s;
};

static device device_make(uint32_t n) {
    device d;
    memset(&d, 0, sizeof d);
    d.b.n = n;
    CHECK_CUDA(cudaMalloc((void **)&d.b.pos, n * sizeof(sim_vec4f)));
    CHECK_CUDA(cudaMalloc((void **)&d.b.force, n * sizeof(sim_vec4f)));
    CHECK_CUDA(cudaMalloc((void **)&d.d_energy, sizeof(double)));
    CHECK_CUDA(cudaStreamCreate(&d.s));
    return d;
}

static void device_free(device *d) {
    cudaFree(d->b.pos);
    cudaFree(d->b.force);
    cudaFree(d->d_energy);
    cudaStreamDestroy(d->s);
}

/* Forces (from zero), energy and triples of one sweep over l at pos. */
static std::vector<sim_vec4f> sweep(device *d, const sim_gpu_atm_list *l,
                                    const std::vector<sim_vec4f> &pos, const sim_physics_f *ph,
                                    double *e, unsigned long long *triples) {
    sim_error err;
    const uint32_t n = d->b.n;
    CHECK_CUDA(cudaMemcpy(d->b.pos, pos.data(), n * sizeof(sim_vec4f), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(d->b.force, 0, n * sizeof(sim_vec4f)));
    CHECK_CUDA(cudaMemset(d->d_energy, 0, sizeof(double)));
    ENSURE(sim_gpu_atm_list_forces(&d->b, l, ph, d->d_energy, 1, d->s, &err) == SIM_OK);
    CHECK_CUDA(cudaStreamSynchronize(d->s));
    std::vector<sim_vec4f> f(n);
    CHECK_CUDA(cudaMemcpy(f.data(), d->b.force, n * sizeof(sim_vec4f), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(e, d->d_energy, sizeof(double), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(triples, &l->counts->triples, sizeof *triples, cudaMemcpyDeviceToHost));
    return f;
}

static void check(const char *what, const std::vector<sim_vec4f> &f, double e,
                  unsigned long long triples, int half, const reference &r) {
    double rel, worst;
    compare(f, r, &rel, &worst);
    const unsigned long long want = r.triples * (half ? 1u : 3u);
    const unsigned long long diff = triples > want ? triples - want : want - triples;
    const int count_ok = diff == 0 || (r.edge_bodies > 0 && diff <= want / 10000u + 3u);
    ENSURE_MSG(rel <= TOL_F_L2 && worst <= TOL_F_BODY && fabs(e - r.e) <= TOL_E * fabs(r.e) &&
                   count_ok,
               "%s (%s): F %.3g / %.3g, E %.9g vs %.9g, %llu triples (CPU %llu), %u edge bodies",
               what, half ? "half" : "full", rel, worst, e, r.e, triples, want, r.edge_bodies);
}

static void scene_case(const char *kind, uint32_t n) {
    atm_bodies sc = atm_bodies_builtin(kind, n, 3.0, 5u);
    const sim_physics ph = sim_physics_from_params(&sc.p);
    const sim_physics_f phf = sim_physics_to_float(&ph);
    const float a2_max = sim_atm_a2_max_f(phf.atm.atm_cutoff2);
    const reference r = cpu_reference(sc.pos_d, sc.p);
    device d = device_make(n);
    sim_error err;
    for (int half = 0; half < 2; ++half) {
        for (float skin : {0.0f, 0.5f}) {
            sim_gpu_atm_list l;
            ENSURE(sim_gpu_atm_list_alloc(&l, n, 4, half, d.s, &err) == SIM_OK);
            CHECK_CUDA(cudaMemcpy(d.b.pos, sc.pos.data(), n * sizeof(sim_vec4f),
                                  cudaMemcpyHostToDevice));
            uint32_t most = 0;
            ENSURE(sim_gpu_atm_list_build_complete(&d.b, &l, a2_max, skin, d.s, &most, &err) ==
                   SIM_OK);
            ENSURE(most > 4u && l.cap >= most); /* grown from 4 */
            double e;
            unsigned long long triples;
            std::vector<sim_vec4f> f = sweep(&d, &l, sc.pos, &phf, &e, &triples);
            char what[128];
            snprintf(what, sizeof what, "%s N=%u skin %g", kind, n, skin);
            check(what, f, e, triples, half, r);
            if (skin > 0.0f) {
                uint64_t rng = 17;
                std::vector<sim_vec4f> moved = sc.pos;
                std::vector<sim_vec4d> moved_d(n);
                for (uint32_t i = 0; i < n; ++i) {
                    const float step = 0.499f * skin / sqrtf(3.0f);
                    moved[i].x += (float)test_rnd(&rng, -step, step);
                    moved[i].y += (float)test_rnd(&rng, -step, step);
                    moved[i].z += (float)test_rnd(&rng, -step, step);
                    moved_d[i] = sim_vec4d{moved[i].x, moved[i].y, moved[i].z, moved[i].w};
                }
                const reference rm = cpu_reference(moved_d, sc.p);
                f = sweep(&d, &l, moved, &phf, &e, &triples);
                snprintf(what, sizeof what, "%s N=%u moved < skin/2 = %g", kind, n, 0.5 * skin);
                check(what, f, e, triples, half, rm);
            }
            if (half && skin == 0.0f) {
                printf("  %-10s N=%-6u %llu triples within R, most %u neighbours (half list), "
                       "%u edge bodies, E %.6g\n",
                       kind, n, (unsigned long long)r.triples, most, r.edge_bodies, r.e);
            }
            sim_gpu_atm_list_free(&l);
        }
    }
    device_free(&d);
    sim_state_free(&sc.s);
}

static void test_triplets(void) {
    scene_case("triplets", 4000);
}

static void test_gas(void) {
    scene_case("gas", 6001);
}

/* ---- stepped: the backend's default path ---- */

/* tests/test_tcull_scenes.h's moving lattice: side^3 spheres of 0.2 m at pitch 1 m moving at up
 * to v m/s, elastic contacts, no walls or gravity (the forces are functions of the positions),
 * a weak ATM, skin 0.2 m, in shuffled order, every value a float. */
static void moving_lattice(uint32_t side, double v, double cutoff, uint64_t seed, sim_params *p,
                           sim_state *s) {
    *p = sim_params_default();
    const uint32_t n = side * side * side;
    sim_error err;
    ENSURE(sim_state_alloc(s, n, &err) == SIM_OK);
    for (uint32_t i = 0; i < n; ++i) {
        s->vel[i] = sim_vec4d{test_rnd(&seed, -v, v), test_rnd(&seed, -v, v),
                              test_rnd(&seed, -v, v), test_rnd(&seed, 0.5, 2.0)};
        const uint32_t c = (uint32_t)((uint64_t)i * 2654435761u % n);
        s->pos[i].x = (double)(c % side) + 0.5 - 0.5 * side + test_rnd(&seed, -0.15, 0.15);
        s->pos[i].y = (double)(c / side % side) + 0.5 - 0.5 * side + test_rnd(&seed, -0.15, 0.15);
        s->pos[i].z = (double)(c / side / side) + 0.5 - 0.5 * side + test_rnd(&seed, -0.15, 0.15);
        s->pos[i].w = 0.2;
        double *x[8] = {&s->pos[i].x, &s->pos[i].y, &s->pos[i].z, &s->pos[i].w,
                        &s->vel[i].x, &s->vel[i].y, &s->vel[i].z, &s->vel[i].w};
        for (double *e : x) {
            *e = (double)(float)*e;
        }
    }
    p->triplets = 1;
    p->atm_nu = 0.0005;
    p->restitution = 1.0;
    p->atm_cutoff = cutoff;
    p->gravity = sim_vec3d{0.0, 0.0, 0.0};
    p->box_half = 1e6;
    p->steps_per_frame = 40;
    p->skin.value = 0.2;
    p->skin.set = 1;
}

static sim_backend *backend(sim_backend_kind kind, const sim_params *p, const sim_state *s,
                            int sort_every = 0) {
    sim_backend_config c = sim_backend_config_default();
    c.kind = kind;
    c.cull = 1;
    c.sort_every = sort_every;
    sim_backend *b = nullptr;
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_backend_create(&c, p, s, &b, &err) == SIM_OK, "create: %s", err.message);
    return b;
}

/* The forces of b at state st (its forces computed for it). */
static std::vector<sim_vec3d> forces_at(sim_backend *b, const sim_state *st) {
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_backend_set_state(b, st, &err) == SIM_OK, "%s", err.message);
    sim_state tmp;
    ENSURE(sim_state_alloc(&tmp, st->n, &err) == SIM_OK);
    std::vector<sim_vec3d> f(st->n);
    ENSURE(sim_backend_read_state(b, &tmp, f.data(), &err) == SIM_OK);
    sim_state_free(&tmp);
    return f;
}

/* ||a - ref|| / ||ref|| and the worst per-body error over |ref_i| + 0.1 rms. */
static double force_error(const std::vector<sim_vec3d> &a, const std::vector<sim_vec3d> &ref,
                          double *worst) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double dx = a[i].x - ref[i].x, dy = a[i].y - ref[i].y, dz = a[i].z - ref[i].z;
        num += dx * dx + dy * dy + dz * dz;
        den += ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z;
    }
    const double rms = sqrt(den / (double)ref.size());
    *worst = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double dx = a[i].x - ref[i].x, dy = a[i].y - ref[i].y, dz = a[i].z - ref[i].z;
        const double r = sqrt(ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z);
        const double e = sqrt(dx * dx + dy * dy + dz * dz) / (r + 0.1 * rms + 1e-300);
        *worst = isfinite(e) ? fmax(*worst, e) : INFINITY;
    }
    return den > 0.0 ? sqrt(num / den) : INFINITY;
}

/* The lists stepped for `frames` frames (shrunk to 4 entries before frame `shrink`, -1: never)
 * against the GPU's tile triples and the CPU at the lists' states. */
static void stepped_case(const char *name, const sim_params &p, const sim_state &s0, int frames,
                         int shrink, int sort_every) {
    const uint32_t n = s0.n;
    sim_params tp = p;
    tp.skin.value = 0.0;
    tp.skin.set = 1;
    sim_backend *lists = backend(SIM_BACKEND_CUDA, &p, &s0, sort_every);
    sim_backend *tiles = backend(SIM_BACKEND_CUDA, &tp, &s0);
    sim_backend *cpu = backend(SIM_BACKEND_CPU, &p, &s0);
    if (lists == nullptr || tiles == nullptr || cpu == nullptr) {
        return;
    }
    sim_error err = {SIM_OK, ""};
    ENSURE(lists->stepper.ops == &sim_cuda_step_ops);
    sim_frame_timing t;
    ENSURE(sim_backend_run_frame(tiles, &t, &err) == SIM_OK);
    ENSURE_MSG(!t.atm_lists && t.triplet_culled && t.tile_triples > 0, "%s: skin 0 keeps tiles",
               name);
    sim_state st;
    ENSURE(sim_state_alloc(&st, n, &err) == SIM_OK);
    std::vector<sim_vec3d> f_lists(n);
    int rebuilds = 0, steps = 0, fallbacks = 0, sorts = 0;
    double worst_tiles = 0.0, worst_cpu = 0.0;
    for (int fr = 0; fr < frames; ++fr) {
        if (fr == shrink) { /* white-box: the stepper's grow primitive, to 4 entries */
            int grown = 0;
            ENSURE(sim_cuda_step_ops.grow(lists, SIM_LIST_ATM_NEIGHBOURS, 4, &grown, &err) ==
                       SIM_OK &&
                   grown);
        }
        ENSURE_MSG(sim_backend_run_frame(lists, &t, &err) == SIM_OK, "%s", err.message);
        ENSURE_MSG(t.atm_lists && t.triplet_culled && t.tile_triples == 0, "%s frame %d", name,
                   fr);
        rebuilds += t.atm_list_rebuilds;
        steps += t.steps;
        sorts += t.sorts;
        fallbacks += t.triplet_fallback_steps;
        if (fr == shrink) { /* every step overflowed; grown after the frame */
            ENSURE_MSG(t.triplet_fallback_steps == t.steps && t.atm_list_cap == 4u &&
                           t.atm_list_peak > 4u,
                       "%s: shrunk lists: %d of %d steps overflowed, cap %u (peak %u)", name,
                       t.triplet_fallback_steps, t.steps, t.atm_list_cap, t.atm_list_peak);
        } else {
            ENSURE_MSG(t.atm_list_cap >= t.atm_list_peak, "%s frame %d: cap %u, peak %u", name,
                       fr, t.atm_list_cap, t.atm_list_peak);
            ENSURE_MSG(t.triplet_fallback_steps == 0, "%s frame %d: %d overflowed steps", name,
                       fr, t.triplet_fallback_steps);
        }
        ENSURE(sim_backend_read_state(lists, &st, f_lists.data(), &err) == SIM_OK);
        const std::vector<sim_vec3d> f_tiles = forces_at(tiles, &st);
        const std::vector<sim_vec3d> f_cpu = forces_at(cpu, &st);
        double body_tiles, body_cpu;
        const double rel_tiles = force_error(f_lists, f_tiles, &body_tiles);
        const double rel_cpu = force_error(f_lists, f_cpu, &body_cpu);
        /* 3e-5, as test_gpu_tcull.c's lists_over_time: the lattice's ATM forces cancel to a few
         * per cent of their terms, so float sums in two orders (lists, tiles) part by more than
         * the 1e-5 of the scenes above, and so does the CPU's double */
        ENSURE_MSG(rel_tiles <= 3 * TOL_F_L2 && body_tiles <= 3 * TOL_F_BODY &&
                       rel_cpu <= 3 * TOL_F_L2 && body_cpu <= 3 * TOL_F_BODY,
                   "%s frame %d: F lists vs tiles %.3g / %.3g, vs the CPU %.3g / %.3g", name, fr,
                   rel_tiles, body_tiles, rel_cpu, body_cpu);
        worst_tiles = fmax(worst_tiles, rel_tiles);
        worst_cpu = fmax(worst_cpu, rel_cpu);
    }
    printf("  %-34s N=%-5u %d steps: %d list rebuilds, %d sorts, %d overflowed steps; forces = "
           "the tile triples' within %.1e, the CPU's within %.1e\n",
           name, n, steps, rebuilds, sorts, fallbacks, worst_tiles, worst_cpu);
    ENSURE(rebuilds > 2 && rebuilds < steps / 4);
    ENSURE(shrink < 0 || fallbacks > 0);
    sim_state_free(&st);
    sim_backend_destroy(lists);
    sim_backend_destroy(tiles);
    sim_backend_destroy(cpu);
}

static void test_stepped(void) {
    sim_params p;
    sim_state s;
    moving_lattice(12, 1.0, 1.8, 81u, &p, &s); /* 1,728 bodies */
    stepped_case("moving lattice, shrunk at frame 5", p, s, 30, 5, 0);
    sim_state_free(&s);
    moving_lattice(20, 2.0, 2.2, 82u, &p, &s); /* 8,000 bodies, sorted every 9 steps */
    stepped_case("faster lattice, sorts", p, s, 25, 12, 9);
    sim_state_free(&s);
}

/* Where the GPU keeps its tile triples with a skin: a periodic box (the lists' kernels take no
 * minimum images), and with its forces still the CPU's (its periodic lists). */
static void test_periodic_keeps_tiles(void) {
    sim_params p;
    sim_state s;
    moving_lattice(7, 1.0, 1.8, 83u, &p, &s);
    p.periodic = 7;
    p.box_half = 3.5;
    sim_backend *gpu = backend(SIM_BACKEND_CUDA, &p, &s);
    sim_backend *cpu = backend(SIM_BACKEND_CPU, &p, &s);
    if (gpu != nullptr && cpu != nullptr) {
        sim_error err = {SIM_OK, ""};
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(gpu, &t, &err) == SIM_OK);
        ENSURE_MSG(!t.atm_lists && t.triplet_culled && t.tile_triples > 0,
                   "periodic: the GPU keeps its tile triples");
        ENSURE(sim_backend_run_frame(cpu, &t, &err) == SIM_OK && t.atm_lists);
        sim_state st;
        ENSURE(sim_state_alloc(&st, s.n, &err) == SIM_OK);
        std::vector<sim_vec3d> f(s.n);
        ENSURE(sim_backend_read_state(cpu, &st, f.data(), &err) == SIM_OK);
        const std::vector<sim_vec3d> g = forces_at(gpu, &st);
        double body;
        const double rel = force_error(g, f, &body);
        ENSURE_MSG(rel <= 3 * TOL_F_L2 && body <= 3 * TOL_F_BODY,
                   "periodic: GPU tiles vs CPU lists %.3g / %.3g", rel, body);
        sim_state_free(&st);
    }
    sim_backend_destroy(gpu);
    sim_backend_destroy(cpu);
    sim_state_free(&s);
}

/* The choice of lists or tile triples made again by set_params with an explicit step and skin
 * (the state is then not needed for either), as the CPU makes it: a lattice whose lists pay at
 * R = 1.8 m (~40 bodies within reach), tile triples at R = 3.5 m (~250), lists again at 1.8. */
static void test_set_params_choice(void) {
    sim_params p;
    sim_state s;
    moving_lattice(12, 1.0, 1.8, 84u, &p, &s); /* 1,728 bodies */
    p.dt = 1e-3;
    p.steps_per_frame = 2;
    sim_backend *gpu = backend(SIM_BACKEND_CUDA, &p, &s);
    sim_backend *cpu = backend(SIM_BACKEND_CPU, &p, &s);
    if (gpu != nullptr && cpu != nullptr) {
        const double cutoffs[3] = {1.8, 3.5, 1.8};
        const int lists_expected[3] = {1, 0, 1};
        for (int k = 0; k < 3; ++k) {
            sim_params q = p;
            q.atm_cutoff = cutoffs[k];
            sim_error err = {SIM_OK, ""};
            sim_frame_timing tg, tc;
            ENSURE_MSG(sim_backend_set_params(gpu, &q, &err) == SIM_OK, "%s", err.message);
            ENSURE_MSG(sim_backend_set_params(cpu, &q, &err) == SIM_OK, "%s", err.message);
            ENSURE(sim_backend_run_frame(gpu, &tg, &err) == SIM_OK);
            ENSURE(sim_backend_run_frame(cpu, &tc, &err) == SIM_OK);
            ENSURE_MSG(tg.atm_lists == lists_expected[k] && tc.atm_lists == lists_expected[k],
                       "set_params R = %g m: GPU %s, CPU %s, expected %s", cutoffs[k],
                       tg.atm_lists ? "lists" : "tiles", tc.atm_lists ? "lists" : "tiles",
                       lists_expected[k] ? "lists" : "tiles");
            printf("  set_params R = %.1f m: GPU and CPU both take %s\n", cutoffs[k],
                   tg.atm_lists ? "lists" : "tile triples");
        }
    }
    sim_backend_destroy(gpu);
    sim_backend_destroy(cpu);
    sim_state_free(&s);
}

int main(int argc, char **argv) {
    if (sim_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    static const ensure_test tests[] = {
        {"triplets", test_triplets},
        {"gas", test_gas},
        {"stepped", test_stepped},
        {"periodic_keeps_tiles", test_periodic_keeps_tiles},
        {"set_params_choice", test_set_params_choice},
    };
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
