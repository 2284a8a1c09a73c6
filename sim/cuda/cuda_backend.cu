/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend: owns the device arrays, streams and events, plans the maps and
 * drives the kernels step by step. One host sync per frame (the instability flag and timings);
 * a long frame, when a stop flag is watched, also waits on events as it goes (Stopping, below).
 *
 * A step: verlet_first(F_n) | [sort] | [boxes, culling passes] | F = 0, pair kernel(s) |
 * triplet kernel(s) | body force + verlet_second (F_{n+1} stored as the last total force). Each
 * `|` is a timing event on the main stream; sort_ms, cull_ms, pair_ms, triplet_ms and
 * integrate_ms (both Verlet halves) are the sums of these intervals over the frame, and step_ms
 * is the sum of one event pair around each whole step. Unculled steps leave the sort and cull
 * intervals empty.
 *
 * Culling (cull.h, cull_kernels.h): the device keeps the bodies in sorted slots (slot s holds
 * user body perm[s]; no perm until culling is first turned on: identity). The sort runs between
 * the first half kick, which consumed F_n, and the force computation, which rewrites F, so
 * forces never need moving. Everything leaving the backend is put back in the user's order:
 * read_state and the host export scatter on the host or into scratch, the device export
 * scatters straight into the caller's buffer, unstable-body messages translate the slot.
 * List lengths stay on the device; the frame's one sync also reads the counters, which decide
 * the next frame's re-sort (boxes grown) and list growth (see grow_lists).
 *
 * The ATM cut-off (triplet_cull_kernels.h), when culling is on and atm_cutoff > 0: the triplet
 * phase builds the tile-triple list from the same sorted bodies and runs the ATM kernel over it
 * (its own event splits triplet_cull_ms from triplet_ms); set-up sizes its lists with a sync.
 *
 * Stopping (backend.h: config.stop). The host reads the flag before it enqueues each step. A
 * frame of many steps keeps about kSliceMs of them in flight and waits for the one before
 * (step_window), so a raised flag is seen that soon. A step whose unculled contact or triplet
 * sweep is expected to take more than kLongSweepMs (from the sweep's last measured rate, else a
 * cautious guess from its work) saves pos, vel and force on the device first (save_step, 48
 * bytes per body, D2D), and enqueues those sweeps in slices of about kSliceMs of GPU time
 * (sweep: consecutive block ranges of the plan, as sim/multi/work_split.h cuts them for ranks),
 * two in flight, the host waiting for the one before last and reading the flag between them.
 * Raised, the host waits for the slices in flight, copies the saved state back and ends the frame
 * with the steps before: the state is exactly the last completed step's. The events around a
 * phase enclose all of its slices, so pair_ms and triplet_ms stay the sweeps' GPU time. Culled
 * steps are O(N), far shorter: never sliced, never saved. The initial forces of a new backend
 * slice the same way (nothing to restore: no backend). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step/backend_impl.h"
#include "cuda/cuda_check.h"
#include "cull/cull_kernels.h"
#include "cuda/device_state.h"
#include "cuda/integrate.h"
#include "cuda/pair_kernels.h"
#include "physics/physics.h"
#include "cull/triplet_cull_kernels.h"
#include "cuda/triplet_kernels.h"

namespace {

/* Events recorded per step (the step's first event is the previous step's last). */
constexpr int kEventsPerStep = 7;
/* Intervals between them: verlet_first, sort, cull, pairs, triplets, the ranks' all-reduce of
 * the forces (empty alone), verlet_second. */
enum { kIvFirst, kIvSort, kIvCull, kIvPair, kIvTriplet, kIvReduce, kIvSecond };
/* Lists grow when a frame's peak passes this fraction of their capacity, to twice the peak. */
constexpr double kGrowAt = 0.8;

/* Stopping: GPU time [ms] per slice of a long sweep, and per window of steps in flight; a sweep
 * expected to take longer than kLongSweepMs is sliced. Two slices are in flight, so a raised
 * flag is answered within about three slices, ~0.3 s, while the GPU never waits for the host. */
constexpr double kSliceMs = 100.0;
constexpr double kLongSweepMs = 200.0;
constexpr int kSliceEvents = 3; /* slice j's end event: j % 3; the host waits for j - 2 */
/* The rates a sweep is assumed to run at before it has been timed, per SM [interactions / ms]:
 * about a quarter of an H100's (a pair check ~10.5 instructions, a triple ~39, at 128 lanes and
 * 1.755 GHz: 2.1e7 and 5.8e6), so a sweep is sliced when it might be long and its first slices
 * are short; slices are sized from the measured rate after the first two. */
constexpr double kGuessPairChecksPerMsPerSm = 5.0e6;
constexpr double kGuessTriplesPerMsPerSm = 1.5e6;

/* A sweep's measured rate [blocks / ms], for the plan it was measured on. */
struct sweep_rate {
    int map;       /* pair choice or triplet map */
    uint32_t tile; /* bodies per tile */
    uint64_t blocks;
    double blocks_per_ms; /* 0: not measured */
};

struct cuda_backend {
    sim_backend base; /* first: sim_backend * points here */
    int device;
    sim_gpu_bodies bodies;
    sim_gpu_streams streams;
    int streams_made;
    cudaEvent_t *events; /* kEventsPerStep * steps_per_frame + 1, created once, grown */
    int event_count;
    unsigned char *step_sorted; /* per step of the frame: whether it sorted (its sort_ms counts) */
    uint64_t *d_flag;           /* instability flag, SIM_GPU_STABLE when all is well */
    uint64_t *h_flag;           /* pinned */
    double *d_energy;           /* kinetic, body potential, contact, ATM */
    float *d_speed;             /* scratch for host exports of speeds */
    sim_physics_f ph;
    float dt;
    int sm_count;
    /* culling */
    sim_gpu_cull cull; /* buffers, once cull_ready */
    int cull_ready;
    sim_gpu_cull_counts *h_counts; /* pinned: the counters as read at the frame's sync */
    int sort_due;                  /* sort at the next culled force computation */
    int steps_since_sort;
    int capped; /* a list could not grow (GPU memory) */
    /* the ATM cut-off, culled (tcull_*) */
    sim_gpu_tcull tcull; /* buffers, once tcull_ready */
    int tcull_ready;
    sim_gpu_tcull_counts *h_tcounts; /* pinned: the counters as read at the frame's sync */
    cudaEvent_t *tcull_events;       /* per step: between the culling and the ATM kernel */
    int tcull_event_count;
    int tcull_capped; /* a triplet list could not grow */
    /* stopping (config.stop): the flag while the sweeps under way may be sliced and stopped, else
     * nullptr; the saved start of a long step (save_ready 1; -1: no memory for it, such steps
     * run whole); the slices' events; the sweeps' rates; the last frame's time per step */
    const volatile sig_atomic_t *watch;
    sim_vec4f *save_pos, *save_vel, *save_force;
    uint32_t *save_perm;              /* once culling has a body order */
    sim_gpu_cull_counts *save_counts; /* with it */
    int save_ready;
    int save_sort_due, save_steps_since_sort;
    cudaEvent_t slice_start, slice_end[kSliceEvents];
    int slice_events_made;
    sweep_rate pair_rate, triplet_rate;
    double step_ms_est; /* <= 0: not timed yet */
};

cuda_backend *as_cuda(sim_backend *b) {
    return reinterpret_cast<cuda_backend *>(b);
}

/* Frees the culling buffers (after a failed allocation, or at the end). The bodies are left in
 * whatever order they are; callers that keep the backend reset the order first. */
void cull_free(cuda_backend *b) {
    sim_gpu_cull *c = &b->cull;
    (void)cudaFree(c->perm);
    (void)cudaFree(c->perm_alt);
    for (int k = 0; k < 2; ++k) {
        (void)cudaFree(c->keys[k]);
        (void)cudaFree(c->vals[k]);
    }
    (void)cudaFree(c->sort_temp);
    (void)cudaFree(c->pos_alt);
    (void)cudaFree(c->vel_alt);
    (void)cudaFree(c->boxes);
    (void)cudaFree(c->supers);
    (void)cudaFree(c->tile_list);
    (void)cudaFree(c->super_list);
    (void)cudaFree(c->counts);
    (void)cudaFreeHost(b->h_counts);
    memset(c, 0, sizeof *c);
    b->h_counts = nullptr;
    b->cull_ready = 0;
}

/* The ATM cut-off's buffers and events (after a failed allocation, or at the end). */
void tcull_free(cuda_backend *b) {
    sim_gpu_tcull_free(&b->tcull);
    (void)cudaFreeHost(b->h_tcounts);
    b->h_tcounts = nullptr;
    for (int e = 0; e < b->tcull_event_count; ++e) {
        (void)cudaEventDestroy(b->tcull_events[e]);
    }
    free(b->tcull_events);
    b->tcull_events = nullptr;
    b->tcull_event_count = 0;
    b->tcull_ready = 0;
}

void cuda_destroy(sim_backend *base) {
    cuda_backend *b = as_cuda(base);
    /* Errors are ignored here: destroy must free what it can, also after a device fault. */
    if (b->streams.main != nullptr) {
        (void)cudaStreamSynchronize(b->streams.main);
    }
    for (int e = 0; e < b->event_count; ++e) {
        (void)cudaEventDestroy(b->events[e]);
    }
    free(b->events);
    free(b->step_sorted);
    if (b->streams_made) {
        (void)cudaEventDestroy(b->streams.fork);
        for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
            (void)cudaEventDestroy(b->streams.join[k]);
            (void)cudaStreamDestroy(b->streams.side[k]);
        }
        (void)cudaStreamDestroy(b->streams.main);
    }
    if (b->slice_events_made) {
        (void)cudaEventDestroy(b->slice_start);
        for (int k = 0; k < kSliceEvents; ++k) {
            (void)cudaEventDestroy(b->slice_end[k]);
        }
    }
    (void)cudaFree(b->save_pos);
    (void)cudaFree(b->save_vel);
    (void)cudaFree(b->save_force);
    (void)cudaFree(b->save_perm);
    (void)cudaFree(b->save_counts);
    (void)cudaFree(b->bodies.pos);
    (void)cudaFree(b->bodies.vel);
    (void)cudaFree(b->bodies.force);
    (void)cudaFree(b->d_flag);
    (void)cudaFree(b->d_energy);
    (void)cudaFree(b->d_speed);
    (void)cudaFreeHost(b->h_flag);
    cull_free(b);
    tcull_free(b);
    free(b);
}

/* Refuses before allocating anything when N bodies cannot fit (state, scratch, the culling
 * buffers when culling is on, and the few hundred bytes of flags and energies). */
sim_status check_memory(uint32_t n, int cull, const char *gpu, sim_error *err) {
    size_t free_bytes = 0, total_bytes = 0;
    SIM_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    const uint64_t per_body = SIM_GPU_BYTES_PER_BODY + (cull ? SIM_GPU_CULL_BYTES_PER_BODY : 0u);
    const uint64_t need = (uint64_t)n * per_body + 4096u;
    if (need > (uint64_t)free_bytes) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies need %llu bytes (%.1f MiB) of GPU memory, but %s has only "
                        "%llu bytes (%.1f MiB) free",
                        n, (unsigned long long)need, (double)need / 1048576.0, gpu,
                        (unsigned long long)free_bytes, (double)free_bytes / 1048576.0);
    }
    return SIM_OK;
}

sim_status make_streams(cuda_backend *b, sim_error *err) {
    sim_gpu_streams *st = &b->streams;
    /* Non-blocking: no implicit sync with the legacy default stream (GL interop, other libs). */
    SIM_CUDA_TRY(cudaStreamCreateWithFlags(&st->main, cudaStreamNonBlocking));
    for (int k = 0; k < SIM_GPU_SIDE_STREAMS; ++k) {
        SIM_CUDA_TRY(cudaStreamCreateWithFlags(&st->side[k], cudaStreamNonBlocking));
        SIM_CUDA_TRY(cudaEventCreateWithFlags(&st->join[k], cudaEventDisableTiming));
    }
    SIM_CUDA_TRY(cudaEventCreateWithFlags(&st->fork, cudaEventDisableTiming));
    b->streams_made = 1;
    SIM_CUDA_TRY(cudaEventCreate(&b->slice_start));
    for (int k = 0; k < kSliceEvents; ++k) {
        const cudaError_t e = cudaEventCreate(&b->slice_end[k]);
        if (e != cudaSuccess) {
            for (int q = 0; q < k; ++q) {
                (void)cudaEventDestroy(b->slice_end[q]);
            }
            (void)cudaEventDestroy(b->slice_start);
            SIM_CUDA_TRY(e);
        }
    }
    b->slice_events_made = 1;
    return SIM_OK;
}

sim_status ensure_events(cuda_backend *b, int steps, sim_error *err) {
    const int need = kEventsPerStep * steps + 1;
    if (need <= b->event_count) {
        return SIM_OK;
    }
    cudaEvent_t *ev = (cudaEvent_t *)realloc(b->events, (size_t)need * sizeof *ev);
    if (ev == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d timing events", need);
    }
    b->events = ev;
    unsigned char *sorted = (unsigned char *)realloc(b->step_sorted, (size_t)steps);
    if (sorted == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d step flags", steps);
    }
    b->step_sorted = sorted;
    while (b->event_count < need) {
        SIM_CUDA_TRY(cudaEventCreate(&b->events[b->event_count]));
        ++b->event_count;
    }
    return SIM_OK;
}

/* The memory check can race with other processes: a failed allocation is still an
 * out-of-memory refusal, not a CUDA error. */
sim_status device_alloc(void **p, size_t bytes, const char *what, uint32_t n, sim_error *err) {
    const cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "N = %u bodies: cannot allocate %llu bytes of GPU memory for %s", n,
                        (unsigned long long)bytes, what);
    }
    SIM_CUDA_TRY(e);
    return SIM_OK;
}

/* ---- culling ---- */

/* (Re)allocates a pair list of cap entries; the old one is freed first (its contents are
 * rebuilt at every step). */
sim_status alloc_list(sim_tile2 **list, uint32_t *have, uint64_t cap, const char *what, uint32_t n,
                      sim_error *err) {
    (void)cudaFree(*list);
    *list = nullptr;
    *have = 0;
    cap = cap > 0 ? cap : 1;
    SIM_TRY(device_alloc((void **)list, (size_t)cap * sizeof **list, what, n, err));
    *have = (uint32_t)cap;
    return SIM_OK;
}

sim_status cull_alloc(cuda_backend *b, sim_error *err) {
    sim_gpu_cull *c = &b->cull;
    const uint32_t n = b->base.n;
    const size_t u4 = (size_t)n * sizeof(uint32_t), v4 = (size_t)n * sizeof(sim_vec4f);
    c->tile = b->base.config.tile;
    c->n_tiles = sim_ceil_div(n, c->tile);
    c->n_supers = sim_ceil_div(c->n_tiles, SIM_CULL_SUPER);
    sim_backend_cull_rows(&b->base, c->n_tiles, &c->row0, &c->row1);
    SIM_TRY(device_alloc((void **)&c->perm, u4, "the body order", n, err));
    SIM_TRY(device_alloc((void **)&c->perm_alt, u4, "the body order", n, err));
    for (int k = 0; k < 2; ++k) {
        SIM_TRY(device_alloc((void **)&c->keys[k], u4, "sort keys", n, err));
        SIM_TRY(device_alloc((void **)&c->vals[k], u4, "sort values", n, err));
    }
    SIM_TRY(sim_gpu_sort_temp_bytes(n, &c->sort_temp_bytes, err));
    SIM_TRY(device_alloc(&c->sort_temp, c->sort_temp_bytes + 16u, "the sort", n, err));
    SIM_TRY(device_alloc((void **)&c->pos_alt, v4, "sorted positions", n, err));
    SIM_TRY(device_alloc((void **)&c->vel_alt, v4, "sorted velocities", n, err));
    SIM_TRY(device_alloc((void **)&c->boxes, (size_t)c->n_tiles * sizeof *c->boxes, "tile boxes", n,
                         err));
    SIM_TRY(device_alloc((void **)&c->supers, (size_t)c->n_supers * sizeof *c->supers,
                         "super-tile boxes", n, err));
    SIM_TRY(device_alloc((void **)&c->counts, sizeof *c->counts, "cull counters", n, err));
    SIM_TRY(alloc_list(&c->tile_list, &c->tile_cap, sim_cull_initial_capacity(&b->base),
                       "the tile-pair list", n, err));
    SIM_TRY(alloc_list(&c->super_list, &c->super_cap, sim_cull_super_capacity(&b->base),
                       "the super-pair list", n, err));
    SIM_CUDA_TRY(cudaMallocHost((void **)&b->h_counts, sizeof *b->h_counts));
    SIM_CUDA_TRY(cudaMemsetAsync(c->counts, 0, sizeof *c->counts, b->streams.main));
    SIM_TRY(sim_gpu_iota(c->perm, n, b->streams.main, err));
    SIM_TRY(sim_gpu_pair_list_grid(c->tile, b->sm_count, &c->list_grid, err));
    SIM_TRY(sim_gpu_cull_second_grid(b->sm_count, &c->super_grid, err));
    SIM_CUDA_TRY(cudaStreamSynchronize(b->streams.main));
    return SIM_OK;
}

/* The culling buffers, once (nothing kept when one cannot be had); every time, the next force
 * computation sorts. */
sim_status cull_prepare(cuda_backend *b, sim_error *err) {
    b->sort_due = 1;
    if (b->cull_ready) {
        return SIM_OK;
    }
    const sim_status st = cull_alloc(b, err);
    if (st != SIM_OK) {
        cull_free(b);
        return st;
    }
    b->cull_ready = 1;
    return SIM_OK;
}

/* Re-sorts when due (flagged, or sort_every steps since the last sort); returns whether it did. */
sim_status sort_phase(cuda_backend *b, int *sorted, sim_error *err) {
    *sorted = 0;
    if (!sim_backend_culling(&b->base)) {
        return SIM_OK;
    }
    if (!b->cull_ready) {
        SIM_TRY(cull_prepare(b, err));
    }
    const int every =
        b->base.config.sort_every > 0 ? b->base.config.sort_every : SIM_CULL_SORT_EVERY;
    if (b->sort_due || b->steps_since_sort >= every) {
        SIM_TRY(sim_gpu_sort_bodies(&b->bodies, &b->cull, b->ph.box_half, b->streams.main, err));
        b->sort_due = 0;
        b->steps_since_sort = 0;
        *sorted = 1;
    }
    return SIM_OK;
}

/* Boxes and the culling passes: after it the tile list (or its overflow count) is current. */
sim_status cull_phase(cuda_backend *b, unsigned flags, sim_error *err) {
    const sim_gpu_cull *c = &b->cull;
    SIM_TRY(sim_gpu_cull_boxes(&b->bodies, c, b->streams.main, err));
    SIM_TRY(sim_gpu_cull_top(c, &b->base.cull_plan, b->base.cull_levels, &b->streams, err));
    if (b->base.cull_levels == 2) {
        SIM_TRY(sim_gpu_cull_second(c, flags, b->streams.main, err));
    }
    return SIM_OK;
}

/* ---- long sweeps, in slices (stopping; the file's header says how) ---- */

/* One unculled sweep: where its rate is kept, the plan it runs (map, tile, blocks), the work of
 * one block [interactions] and the rate per SM guessed for them before it is timed. */
struct sweep_plan {
    sweep_rate *rate;
    int map;
    uint32_t tile;
    uint64_t blocks;
    double work_per_block;
    double guess_per_ms_per_sm;
};

/* The contact sweep without culling: the pair map's blocks (a tile pair each: tile^2 checks, half
 * on the diagonal), or the full sweep's (a tile of bodies against all N each). */
sweep_plan contact_sweep(cuda_backend *b) {
    const uint32_t tile = b->base.config.tile, n = b->base.n;
    const int full = b->base.config.pair_map == SIM_PAIR_FULL;
    return sweep_plan{&b->pair_rate,
                      b->base.config.pair_map,
                      tile,
                      full ? (uint64_t)sim_ceil_div(n, tile) : b->base.pair_plan.blocks,
                      full ? (double)tile * (double)n : (double)tile * (double)tile,
                      kGuessPairChecksPerMsPerSm};
}

/* The triplet map's sweep: a tile triple per block. */
sweep_plan triplet_sweep(cuda_backend *b) {
    const double t = SIM_TRIPLET_TILE;
    return sweep_plan{&b->triplet_rate, (int)b->base.config.triplet_map,
                      SIM_TRIPLET_TILE, b->base.triplet_plan.blocks,
                      t * t * t,        kGuessTriplesPerMsPerSm};
}

/* Its rate [blocks / ms]: as measured on this plan, else the guess. */
double sweep_blocks_per_ms(const cuda_backend *b, const sweep_plan &p) {
    const sweep_rate *r = p.rate;
    if (r->blocks_per_ms > 0.0 && r->map == p.map && r->tile == p.tile && r->blocks == p.blocks) {
        return r->blocks_per_ms;
    }
    return p.guess_per_ms_per_sm * (double)(b->sm_count > 0 ? b->sm_count : 1) / p.work_per_block;
}

bool sweep_is_long(const cuda_backend *b, const sweep_plan &p) {
    return (double)p.blocks > kLongSweepMs * sweep_blocks_per_ms(b, p);
}

/* Enqueues a sweep on the main stream through launch(begin, end, err), which enqueues the blocks
 * [begin, end) of it (side streams joined back): whole, or - while b->watch is set and the sweep
 * is long - in slices of ~kSliceMs, sized from the rate measured over the slices done so far
 * (kept for the next step). SIM_INTERRUPTED when the flag rose: slices may still be running. */
template <typename Launch>
sim_status sweep(cuda_backend *b, const sweep_plan &p, Launch &&launch, sim_error *err) {
    if (b->watch == nullptr || !sweep_is_long(b, p)) {
        return launch((uint64_t)0, p.blocks, err);
    }
    cudaStream_t s = b->streams.main;
    double per_ms = sweep_blocks_per_ms(b, p);
    uint64_t ends[kSliceEvents] = {0, 0, 0}; /* blocks done at the end of each slice in the ring */
    SIM_CUDA_TRY(cudaEventRecord(b->slice_start, s));
    uint64_t begin = 0;
    for (int j = 0; begin < p.blocks; ++j) {
        if (sim_stop_raised(b->watch)) {
            return sim_fail(err, SIM_INTERRUPTED, "stopped in the middle of a step");
        }
        const double want = per_ms * kSliceMs, left = (double)(p.blocks - begin);
        const uint64_t end = want >= left ? p.blocks : begin + (want < 1.0 ? 1u : (uint64_t)want);
        SIM_TRY(launch(begin, end, err));
        SIM_CUDA_TRY(cudaEventRecord(b->slice_end[j % kSliceEvents], s));
        ends[j % kSliceEvents] = end;
        begin = end;
        if (j >= 2) { /* slices j - 1 and j stay queued while the host waits for j - 2 */
            const int q = (j - 2) % kSliceEvents;
            SIM_CUDA_TRY(cudaEventSynchronize(b->slice_end[q]));
            float ms = 0.0f;
            SIM_CUDA_TRY(cudaEventElapsedTime(&ms, b->slice_start, b->slice_end[q]));
            if (ms > 0.0f) {
                per_ms = (double)ends[q] / (double)ms;
                *p.rate = sweep_rate{p.map, p.tile, p.blocks, per_ms};
            }
        }
    }
    return SIM_OK;
}

/* The unculled contact sweep of a backend alone (a rank's share is never sliced: ranks do not
 * read the flag). */
sim_status contact_sweep_alone(cuda_backend *b, sim_error *err) {
    const sim_gpu_bodies *bd = &b->bodies;
    const sim_physics_f *ph = &b->ph;
    const uint32_t tile = b->base.config.tile;
    cudaStream_t s = b->streams.main;
    if (b->base.config.pair_map == SIM_PAIR_FULL) {
        return sweep(
            b, contact_sweep(b),
            [&](uint64_t begin, uint64_t end, sim_error *e) {
                return sim_gpu_pair_forces_full_range(bd, ph, tile, begin, end, s, e);
            },
            err);
    }
    const sim_map_plan *plan = &b->base.pair_plan;
    return sweep(
        b, contact_sweep(b),
        [&](uint64_t begin, uint64_t end, sim_error *e) {
            sim_map_share share;
            sim_work_range_share(plan, begin, end, &share);
            return sim_gpu_pair_forces(bd, ph, plan, &share, tile, &b->streams, e);
        },
        err);
}

/* The contact sweep: the full sweep (stores F), or F = 0 and the culled list or the map. */
sim_status contact_phase(cuda_backend *b, unsigned flags, sim_error *err) {
    const sim_gpu_bodies *bd = &b->bodies;
    const int alone = b->base.rank.world <= 1;
    if (b->base.config.pair_map == SIM_PAIR_FULL) {
        return alone ? contact_sweep_alone(b, err)
                     : sim_gpu_pair_forces_full(bd, &b->ph, b->base.config.tile, b->base.rank.rank,
                                                b->base.rank.world, b->streams.main, err);
    }
    SIM_CUDA_TRY(cudaMemsetAsync(bd->force, 0, (size_t)bd->n * sizeof *bd->force, b->streams.main));
    if (sim_backend_culling(&b->base)) {
        return sim_gpu_pair_forces_list(bd, &b->ph, &b->cull, flags, b->streams.main, err);
    }
    if (alone) {
        return contact_sweep_alone(b, err);
    }
    sim_map_share share; /* this rank's blocks */
    sim_backend_share(&b->base, &b->base.pair_plan, &share);
    return sim_gpu_pair_forces(bd, &b->ph, &b->base.pair_plan, &share, b->base.config.tile,
                               &b->streams, err);
}

/* A multi-GPU step: every rank holds its share's forces; NCCL sums them on the stream (every
 * rank gets the same bits), before the body forces and the second half kick, which every rank
 * then applies to all bodies alike. The w components (unused, 0) travel too: 16 B per body. */
sim_status reduce_phase(cuda_backend *b, sim_error *err) {
    if (b->base.rank.world <= 1) {
        return SIM_OK;
    }
    return sim_comm_allreduce_sum(b->base.rank.comm, b->bodies.force, 4u * (size_t)b->base.n,
                                  SIM_COMM_FLOAT, b->streams.main, err);
}

/* After a sync: grows a list whose peak came near (or past) its capacity, to twice the peak
 * (at most the whole simplex). Out of memory: keep the old list; steps that overflow it sweep
 * the whole simplex (exact) and the frame says cull_capped. */
sim_status grow_lists(cuda_backend *b, sim_error *err) {
    sim_gpu_cull *c = &b->cull;
    const sim_gpu_cull_counts *h = b->h_counts;
    struct {
        sim_tile2 **list;
        uint32_t *cap;
        uint32_t peak;
        uint64_t all;
        const char *what;
    } lists[2] = {
        {&c->tile_list, &c->tile_cap, h->frame.tiles_peak, sim_t2_u64(c->n_tiles),
         "the tile-pair list"},
        {&c->super_list, &c->super_cap, h->frame.supers_peak, sim_t2_u64(c->n_supers),
         "the super-pair list"},
    };
    for (int k = 0; k < 2; ++k) {
        if ((double)lists[k].peak <= kGrowAt * (double)*lists[k].cap ||
            *lists[k].cap >= lists[k].all) {
            continue;
        }
        uint64_t want = 2u * (uint64_t)lists[k].peak;
        want = want < lists[k].all ? want : lists[k].all;
        const uint32_t old_cap = *lists[k].cap;
        sim_error grow_err;
        if (alloc_list(lists[k].list, lists[k].cap, want, lists[k].what, b->base.n, &grow_err) !=
            SIM_OK) {
            b->capped = 1; /* keep going with the old size, if that can still be had */
            SIM_TRY(
                alloc_list(lists[k].list, lists[k].cap, old_cap, lists[k].what, b->base.n, err));
        }
    }
    return SIM_OK;
}

/* ---- the ATM cut-off, culled (triplet_cull_kernels.h) ----
 * Several GPUs: each builds the whole neighbour list and lists only its own rows' tile triples
 * (sim_gpu_tcull_share, triplet_cull.h), so the sweep, the lists' memory and their growth are
 * shared; the all-reduce sums the forces as for every other phase. */

/* Whether this step culls tile triples (the float cut-off the kernel compares with is > 0). */
int tculled(const cuda_backend *b) {
    return sim_backend_triplet_culling(&b->base) && b->ph.atm_cutoff2 > 0.0f;
}

/* The buffers, once (nothing kept when one cannot be had). */
sim_status tcull_prepare(cuda_backend *b, sim_error *err) {
    if (b->tcull_ready) {
        return SIM_OK;
    }
    const sim_backend *base = &b->base;
    sim_status st = sim_gpu_tcull_alloc(
        &b->tcull, base->n, sim_tcull_super_capacity(base), sim_tcull_pair_capacity(base),
        sim_tcull_triple_capacity(base), b->sm_count, b->streams.main, err);
    if (st == SIM_OK) {
        st = sim_gpu_triplet_culled_grid(b->sm_count, &b->tcull.sweep_grid, err);
    }
    if (st == SIM_OK &&
        cudaMallocHost((void **)&b->h_tcounts, sizeof *b->h_tcounts) != cudaSuccess) {
        (void)cudaGetLastError();
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate pinned triplet culling counters");
    }
    if (st != SIM_OK) {
        tcull_free(b);
        return st;
    }
    b->tcull_ready = 1;
    return SIM_OK;
}

/* This rank's part of the tile triples (all of them on one GPU). */
static sim_gpu_tcull_share tcull_share(const cuda_backend *b) {
    const sim_gpu_tcull_share s = {(uint32_t)b->base.rank.rank,
                                   (uint32_t)(b->base.rank.world > 1 ? b->base.rank.world : 1)};
    return s;
}

sim_status tcull_build(cuda_backend *b, sim_error *err) {
    SIM_TRY(tcull_prepare(b, err));
    return sim_gpu_tcull_build(&b->bodies, &b->tcull, &b->ph, &b->base.tcull_plan,
                               b->base.tcull_levels, tcull_share(b), &b->streams, err);
}

/* Grows a list whose count `need` passed `at` of its capacity to `want` entries (at most
 * `all`); out of GPU memory it keeps the old size and notes tcull_capped. */
sim_status tcull_grow(cuda_backend *b, int list, uint32_t *cap, uint64_t need, double at,
                      uint64_t want, uint64_t all, sim_error *err) {
    if ((double)need <= at * (double)*cap || *cap >= all) {
        return SIM_OK;
    }
    want = want < all ? want : all;
    want = want < 0x7fffffffu ? want : 0x7fffffffu;
    const uint32_t old = *cap;
    sim_error grow_err;
    if (sim_gpu_tcull_realloc(&b->tcull, list, want, &grow_err) != SIM_OK) {
        b->tcull_capped = 1;
        SIM_TRY(sim_gpu_tcull_realloc(&b->tcull, list, old, err));
    }
    return SIM_OK;
}

/* Grows every list from counts h: to twice the count when it passed kGrowAt of the capacity
 * (`exact`: to the count and a quarter more when it passed the capacity, for set-up). */
sim_status tcull_grow_lists(cuda_backend *b, const sim_gpu_tcull_counts *h, int exact,
                            sim_error *err) {
    sim_gpu_tcull *c = &b->tcull;
    const uint32_t n = c->n_tiles, ns = c->n_supers;
    const double at = exact ? 1.0 : kGrowAt;
    const uint64_t s = exact ? h->supers : h->frame.supers_peak,
                   p = exact ? h->pairs : h->frame.pairs_peak,
                   t = exact ? h->triples : h->frame.triples_peak;
    const uint64_t sw = exact ? s + s / 4u + 16u : 2u * s, pw = exact ? p + p / 4u + 16u : 2u * p,
                   tw = exact ? t + t / 4u + 16u : 2u * t;
    SIM_TRY(tcull_grow(b, SIM_TCULL_LIST_SUPERS, &c->super_cap, s, at, sw, sim_t2_u64(ns), err));
    SIM_TRY(tcull_grow(b, SIM_TCULL_LIST_PAIRS, &c->pair_cap, p, at, pw, sim_t2_u64(n), err));
    return tcull_grow(b, SIM_TCULL_LIST_TRIPLES, &c->triple_cap, t, at, tw, sim_t3_u64(n), err);
}

/* Set-up (a sync is allowed): builds the lists for the current (sorted) bodies and grows them
 * until nothing overflows, so the first frame runs from complete lists. A pair list too short
 * undercounts the triples: hence up to three rounds. */
sim_status tcull_size(cuda_backend *b, sim_error *err) {
    for (int round = 0; round < 3; ++round) {
        SIM_TRY(tcull_build(b, err));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_tcounts, b->tcull.counts, sizeof *b->h_tcounts,
                                     cudaMemcpyDeviceToHost, b->streams.main));
        SIM_CUDA_TRY(cudaStreamSynchronize(b->streams.main));
        const sim_gpu_tcull_counts *h = b->h_tcounts;
        const sim_gpu_tcull *c = &b->tcull;
        if (h->supers <= c->super_cap && h->pairs <= c->pair_cap && h->triples <= c->triple_cap) {
            return SIM_OK;
        }
        SIM_TRY(tcull_grow_lists(b, h, 1, err));
    }
    return SIM_OK; /* still short (memory): the kernel's fallback covers it, exactly */
}

/* Before a frame's steps: buffers, one event per step, the frame's peaks zeroed. */
sim_status tcull_frame_begin(cuda_backend *b, int steps, sim_error *err) {
    if (!tculled(b)) {
        return SIM_OK;
    }
    SIM_TRY(tcull_prepare(b, err));
    if (b->tcull_event_count < steps) {
        cudaEvent_t *ev = (cudaEvent_t *)realloc(b->tcull_events, (size_t)steps * sizeof *ev);
        if (ev == nullptr) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %d timing events", steps);
        }
        b->tcull_events = ev;
        while (b->tcull_event_count < steps) {
            SIM_CUDA_TRY(cudaEventCreate(&b->tcull_events[b->tcull_event_count]));
            ++b->tcull_event_count;
        }
    }
    SIM_CUDA_TRY(cudaMemsetAsync(&b->tcull.counts->frame, 0, sizeof b->tcull.counts->frame,
                                 b->streams.main));
    return SIM_OK;
}

/* The triplet phase: the culled list (step >= 0: its event between culling and kernel), or
 * every tile triple of the triplet map. */
sim_status triplet_phase(cuda_backend *b, int step, unsigned flags, sim_error *err) {
    if (!b->base.params.triplets) {
        return SIM_OK;
    }
    if (tculled(b)) {
        SIM_TRY(tcull_build(b, err));
        if (step >= 0 && step < b->tcull_event_count) {
            SIM_CUDA_TRY(cudaEventRecord(b->tcull_events[step], b->streams.main));
        }
        /* Several GPUs: each listed and sweeps its rows' triples (triplet_cull.h) */
        return sim_gpu_triplet_forces_culled(&b->bodies, &b->ph, &b->tcull, flags, tcull_share(b),
                                             b->streams.main, err);
    }
    if (!b->base.triplet_planned) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "no triplet map plan for N = %u", b->base.n);
    }
    const sim_map_plan *plan = &b->base.triplet_plan;
    if (b->base.rank.world > 1) {
        sim_map_share share; /* this rank's blocks */
        sim_backend_share(&b->base, plan, &share);
        return sim_gpu_triplet_forces(&b->bodies, &b->ph, plan, &share, &b->streams, err);
    }
    return sweep(
        b, triplet_sweep(b),
        [&](uint64_t begin, uint64_t end, sim_error *e) {
            sim_map_share share;
            sim_work_range_share(plan, begin, end, &share);
            return sim_gpu_triplet_forces(&b->bodies, &b->ph, plan, &share, &b->streams, e);
        },
        err);
}

/* After the frame's sync: step k's triplet interval (from `start`) split into culling and
 * kernel. */
sim_status tcull_split_time(cuda_backend *b, int k, cudaEvent_t start, sim_frame_timing *t,
                            sim_error *err) {
    if (!tculled(b) || k >= b->tcull_event_count) {
        return SIM_OK;
    }
    float ms = 0.0f;
    SIM_CUDA_TRY(cudaEventElapsedTime(&ms, start, b->tcull_events[k]));
    t->triplet_cull_ms += ms;
    t->triplet_ms -= ms;
    return SIM_OK;
}

/* The triplet part of a frame's report, from the counters read at the frame's sync; grows the
 * lists for the next frame and asks for a re-sort when the triples grew by SIM_CULL_REGROW. */
sim_status tcull_frame_end(cuda_backend *b, sim_frame_timing *t, sim_error *err) {
    if (!tculled(b)) {
        return SIM_OK;
    }
    const sim_gpu_tcull_counts *h = b->h_tcounts;
    t->triplet_culled = 1;
    t->tile_triples = h->triples;
    t->tile_triples_total = sim_t3_u64(b->tcull.n_tiles);
    t->triplet_tile_pairs = h->pairs;
    t->triplet_fallback_steps = (int)h->frame.fallback_steps;
    if ((double)h->triples > SIM_CULL_REGROW * (double)h->triples_sorted + 16.0) {
        b->sort_due = 1;
    }
    SIM_TRY(tcull_grow_lists(b, h, 0, err));
    if (h->frame.fallback_steps > 0) { /* a short pair list undercounts the triples */
        SIM_TRY(tcull_size(b, err));
    }
    t->triplet_cull_capped = b->tcull_capped;
    return SIM_OK;
}

/* F = pairs + triplets + body force for the current positions, without a kick: the force the
 * next step's first half kick uses, after set-up or a change of state or parameters. Sorts
 * first when due (set-up, new state, culling turned on). */
sim_status compute_forces(cuda_backend *b, sim_error *err) {
    int sorted = 0;
    SIM_TRY(sort_phase(b, &sorted, err));
    const int culled = sim_backend_culling(&b->base);
    const unsigned flags = SIM_GPU_CULL_RECORD | (sorted ? SIM_GPU_CULL_SORTED : 0u);
    if (culled) {
        SIM_CUDA_TRY(cudaMemsetAsync(&b->cull.counts->frame, 0, sizeof b->cull.counts->frame,
                                     b->streams.main));
        SIM_TRY(cull_phase(b, flags, err));
    }
    SIM_TRY(contact_phase(b, flags, err));
    if (b->base.params.triplets && tculled(b)) {
        SIM_TRY(tcull_size(b, err));
    }
    SIM_TRY(triplet_phase(b, -1, flags, err));
    SIM_TRY(reduce_phase(b, err));
    SIM_TRY(sim_gpu_body_forces(&b->bodies, &b->ph, b->streams.main, err));
    if (culled) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_counts, b->cull.counts, sizeof *b->h_counts,
                                     cudaMemcpyDeviceToHost, b->streams.main));
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(b->streams.main));
    return culled ? grow_lists(b, err) : SIM_OK;
}

sim_status upload_state(cuda_backend *b, const sim_state *s, sim_error *err) {
    SIM_TRY(sim_state_check_bodies(s, err));
    const uint32_t n = s->n;
    sim_vec4f *h = (sim_vec4f *)malloc((size_t)n * 2 * sizeof *h);
    if (h == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate host staging for %u bodies", n);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4d p = s->pos[i], v = s->vel[i];
        h[i] = sim_vec4f{(float)p.x, (float)p.y, (float)p.z, (float)p.w};
        h[n + i] = sim_vec4f{(float)v.x, (float)v.y, (float)v.z, (float)v.w};
    }
    const size_t bytes = (size_t)n * sizeof *h;
    cudaError_t e1 =
        cudaMemcpyAsync(b->bodies.pos, h, bytes, cudaMemcpyHostToDevice, b->streams.main);
    cudaError_t e2 =
        cudaMemcpyAsync(b->bodies.vel, h + n, bytes, cudaMemcpyHostToDevice, b->streams.main);
    cudaError_t e3 = cudaStreamSynchronize(b->streams.main);
    free(h);
    SIM_CUDA_TRY(e1);
    SIM_CUDA_TRY(e2);
    SIM_CUDA_TRY(e3);
    return SIM_OK;
}

sim_status set_physics(cuda_backend *b, const sim_params *p, const sim_state *s, sim_error *err) {
    sim_physics ph = sim_physics_from_params(p);
    const double dt = p->dt > 0.0 ? p->dt : sim_default_dt(p, s);
    if (!(dt > 0.0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "cannot derive a time step (got %g)", dt);
    }
    ph.inv_dt = 1.0 / dt;
    b->ph = sim_physics_to_float(&ph);
    b->dt = (float)dt;
    return SIM_OK;
}

/* The body order (slot -> user index), or nullptr while it is the identity. */
const uint32_t *body_order(const cuda_backend *b) {
    return b->cull_ready ? b->cull.perm : nullptr;
}

sim_status read_state_impl(cuda_backend *b, sim_state *out, sim_vec3d *forces, sim_error *err) {
    const uint32_t n = b->base.n;
    const uint32_t *d_perm = body_order(b);
    const size_t bytes = (size_t)n * sizeof(sim_vec4f);
    sim_vec4f *h = (sim_vec4f *)malloc(3 * bytes + (size_t)n * sizeof(uint32_t));
    if (h == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate host staging for %u bodies", n);
    }
    uint32_t *perm = (uint32_t *)(h + 3 * (size_t)n);
    cudaStream_t s = b->streams.main;
    cudaError_t e1 = cudaMemcpyAsync(h, b->bodies.pos, bytes, cudaMemcpyDeviceToHost, s);
    cudaError_t e2 = cudaMemcpyAsync(h + n, b->bodies.vel, bytes, cudaMemcpyDeviceToHost, s);
    cudaError_t e3 = forces != nullptr ? cudaMemcpyAsync(h + 2 * (size_t)n, b->bodies.force, bytes,
                                                         cudaMemcpyDeviceToHost, s)
                                       : cudaSuccess;
    cudaError_t e5 = d_perm != nullptr ? cudaMemcpyAsync(perm, d_perm, (size_t)n * sizeof *perm,
                                                         cudaMemcpyDeviceToHost, s)
                                       : cudaSuccess;
    cudaError_t e4 = cudaStreamSynchronize(s);
    if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess || e4 != cudaSuccess ||
        e5 != cudaSuccess) {
        free(h);
        SIM_CUDA_TRY(e1);
        SIM_CUDA_TRY(e2);
        SIM_CUDA_TRY(e3);
        SIM_CUDA_TRY(e5);
        SIM_CUDA_TRY(e4);
    }
    for (uint32_t k = 0; k < n; ++k) { /* slot k holds user body i */
        const uint32_t i = d_perm != nullptr ? perm[k] : k;
        const sim_vec4f p = h[k], v = h[n + k];
        out->pos[i] = sim_vec4d{p.x, p.y, p.z, p.w};
        out->vel[i] = sim_vec4d{v.x, v.y, v.z, v.w};
        if (forces != nullptr) {
            const sim_vec4f f = h[2 * (size_t)n + k];
            forces[i] = sim_vec3d{f.x, f.y, f.z};
        }
    }
    free(h);
    return SIM_OK;
}

/* User body `body`'s position now (its slot found through the body order; failure path). */
sim_status body_position(cuda_backend *b, uint32_t body, sim_vec4f *p, sim_error *err) {
    const uint32_t n = b->base.n, *d_perm = body_order(b);
    uint32_t slot = body;
    if (d_perm != nullptr) {
        uint32_t *perm = (uint32_t *)malloc((size_t)n * sizeof *perm);
        if (perm == nullptr) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the body order on the host");
        }
        const cudaError_t e =
            cudaMemcpy(perm, d_perm, (size_t)n * sizeof *perm, cudaMemcpyDeviceToHost);
        for (uint32_t s = 0; e == cudaSuccess && s < n; ++s) {
            slot = perm[s] == body ? s : slot;
        }
        free(perm);
        SIM_CUDA_TRY(e);
    }
    SIM_CUDA_TRY(cudaMemcpy(p, b->bodies.pos + slot, sizeof *p, cudaMemcpyDeviceToHost));
    return SIM_OK;
}

/* ---- the ops ---- */

/* The culling part of a frame's report, from the counters read at the frame's sync; decides
 * the next frame's re-sort (the list grew by SIM_CULL_REGROW since the last sort: the boxes
 * have spread) and grows lists that came near their capacity. */
sim_status finish_cull_frame(cuda_backend *b, sim_frame_timing *t, sim_error *err) {
    const sim_gpu_cull_counts *h = b->h_counts;
    t->culled = 1;
    t->cull_levels = b->base.cull_levels;
    t->tile_pairs = h->tiles;
    t->tile_pairs_total = sim_t2_u64(b->cull.n_tiles);
    t->super_pairs = b->base.cull_levels == 2 ? h->supers : 0u;
    t->cull_fallback_steps = (int)h->frame.fallback_steps;
    /* Ranks of a multi-GPU run hold different rows of the list and must sort together (their
     * body orders must agree): they sort on the clock alone. */
    if (b->base.rank.world <= 1 &&
        (double)h->tiles > SIM_CULL_REGROW * (double)h->tiles_sorted + 16.0) {
        b->sort_due = 1;
    }
    SIM_TRY(grow_lists(b, err));
    t->cull_capped = b->capped;
    return SIM_OK;
}

/* ---- stopping between and inside steps (the file's header says how) ---- */

/* The flag this backend reads: config.stop alone, none as a rank of several (backend.h). */
const volatile sig_atomic_t *stop_flag(const cuda_backend *b) {
    return b->base.rank.world <= 1 ? b->base.config.stop : nullptr;
}

/* Whether the next step has a sweep that is sliced: unculled contacts, or the triplet map's
 * sweep (culled contacts may come with it), expected long. */
bool step_is_long(cuda_backend *b) {
    const int triplet_map = b->base.params.triplets && !tculled(b) && b->base.triplet_planned;
    return (!sim_backend_culling(&b->base) && sweep_is_long(b, contact_sweep(b))) ||
           (triplet_map && sweep_is_long(b, triplet_sweep(b)));
}

/* The device memory to save a step's start in, once (a failure is remembered: such steps then
 * run whole, and the flag is read between them); the body order too once culling has one. */
bool save_ready(cuda_backend *b) {
    const uint32_t n = b->base.n;
    const size_t v4 = (size_t)n * sizeof(sim_vec4f);
    sim_error ignored; /* not worth a word: the flag is then read between steps */
    if (b->save_ready == 0) {
        const bool ok = device_alloc((void **)&b->save_pos, v4, "", n, &ignored) == SIM_OK &&
                        device_alloc((void **)&b->save_vel, v4, "", n, &ignored) == SIM_OK &&
                        device_alloc((void **)&b->save_force, v4, "", n, &ignored) == SIM_OK;
        b->save_ready = ok ? 1 : -1;
    }
    if (b->save_ready == 1 && b->cull_ready && b->save_perm == nullptr) {
        const size_t u4 = (size_t)n * sizeof(uint32_t);
        const bool ok = device_alloc((void **)&b->save_perm, u4, "", n, &ignored) == SIM_OK &&
                        device_alloc((void **)&b->save_counts, sizeof *b->save_counts, "", n,
                                     &ignored) == SIM_OK;
        b->save_ready = ok ? 1 : -1;
    }
    return b->save_ready == 1;
}

/* Enqueues copies of what a step changes: the bodies and, while culling keeps them sorted, their
 * order and the culling counters (a step may sort, the pointers then swap with the gather's
 * buffers: the copies go back into whichever buffer is current), and on the host the sort's
 * clock. The copies (~0.1 ms per 4M bodies) count in the step's first interval. */
sim_status save_step(cuda_backend *b, sim_error *err) {
    cudaStream_t s = b->streams.main;
    const size_t v4 = (size_t)b->base.n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(b->save_pos, b->bodies.pos, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->save_vel, b->bodies.vel, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->save_force, b->bodies.force, v4, cudaMemcpyDeviceToDevice, s));
    if (b->cull_ready) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->save_perm, b->cull.perm,
                                     (size_t)b->base.n * sizeof(uint32_t), cudaMemcpyDeviceToDevice,
                                     s));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->save_counts, b->cull.counts, sizeof *b->save_counts,
                                     cudaMemcpyDeviceToDevice, s));
    }
    b->save_sort_due = b->sort_due;
    b->save_steps_since_sort = b->steps_since_sort;
    return SIM_OK;
}

/* After a step cut short: waits for its slices in flight, and puts back what save_step saved. */
sim_status restore_step(cuda_backend *b, sim_error *err) {
    cudaStream_t s = b->streams.main;
    const size_t v4 = (size_t)b->base.n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->bodies.pos, b->save_pos, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->bodies.vel, b->save_vel, v4, cudaMemcpyDeviceToDevice, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->bodies.force, b->save_force, v4, cudaMemcpyDeviceToDevice, s));
    if (b->cull_ready) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->cull.perm, b->save_perm,
                                     (size_t)b->base.n * sizeof(uint32_t), cudaMemcpyDeviceToDevice,
                                     s));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->cull.counts, b->save_counts, sizeof *b->save_counts,
                                     cudaMemcpyDeviceToDevice, s));
    }
    b->sort_due = b->save_sort_due;
    b->steps_since_sort = b->save_steps_since_sort;
    return SIM_OK;
}

/* Steps a frame keeps in flight while the flag is watched: ~kSliceMs of them by the last frame's
 * time per step (one before any was timed). After enqueuing step k the host waits for the end of
 * step k - window, so the GPU always has work queued and a raised flag is seen within ~kSliceMs
 * plus a step. A frame shorter than that never waits. */
int step_window(const cuda_backend *b) {
    if (b->step_ms_est <= 0.0) {
        return 1;
    }
    const double w = kSliceMs / b->step_ms_est;
    return w < 1.0 ? 1 : w > 1.0e6 ? 1000000 : (int)w;
}

/* Enqueues step k of the frame (its events, ev[0] recorded before); *sorted: whether it sorts. */
sim_status enqueue_step(cuda_backend *b, int k, int culled, int *sorted, sim_error *err) {
    cudaStream_t s = b->streams.main;
    cudaEvent_t *ev = b->events + kEventsPerStep * k;
    SIM_TRY(sim_gpu_verlet_first(&b->bodies, b->dt, s, err));
    SIM_CUDA_TRY(cudaEventRecord(ev[1], s));
    SIM_TRY(sort_phase(b, sorted, err));
    b->step_sorted[k] = (unsigned char)*sorted;
    SIM_CUDA_TRY(cudaEventRecord(ev[2], s));
    const unsigned flags = SIM_GPU_CULL_RECORD | (*sorted ? SIM_GPU_CULL_SORTED : 0u);
    if (culled) {
        SIM_TRY(cull_phase(b, flags, err));
        b->steps_since_sort++;
    }
    SIM_CUDA_TRY(cudaEventRecord(ev[3], s));
    SIM_TRY(contact_phase(b, flags, err));
    SIM_CUDA_TRY(cudaEventRecord(ev[4], s));
    SIM_TRY(triplet_phase(b, k, flags, err));
    SIM_CUDA_TRY(cudaEventRecord(ev[5], s));
    SIM_TRY(reduce_phase(b, err));
    SIM_CUDA_TRY(cudaEventRecord(ev[6], s));
    SIM_TRY(sim_gpu_verlet_second(&b->bodies, body_order(b), &b->ph, b->dt, b->d_flag, (uint32_t)k,
                                  s, err));
    SIM_CUDA_TRY(cudaEventRecord(ev[7], s));
    return SIM_OK;
}

/* Enqueues the frame's steps, reading the stop flag (when there is one) before each, and in a
 * step that may be long between the slices of its sweeps. Returns how many steps were enqueued
 * whole (*done) and SIM_INTERRUPTED when the flag stopped the frame (a step cut short has been
 * rolled back). */
sim_status enqueue_steps(cuda_backend *b, int steps, int culled, int *done, int *sorts,
                         sim_error *err) {
    const volatile sig_atomic_t *stop = stop_flag(b);
    const int window = step_window(b);
    *done = 0;
    for (int k = 0; k < steps; ++k) {
        if (sim_stop_raised(stop)) {
            return sim_fail(err, SIM_INTERRUPTED, "stopped after %d of the frame's %d steps", k,
                            steps);
        }
        const bool cut = stop != nullptr && step_is_long(b) && save_ready(b);
        if (cut) {
            SIM_TRY(save_step(b, err));
        }
        int sorted = 0;
        b->watch = cut ? stop : nullptr;
        const sim_status st = enqueue_step(b, k, culled, &sorted, err);
        b->watch = nullptr;
        if (st == SIM_INTERRUPTED) {
            SIM_TRY(restore_step(b, err));
            return sim_fail(err, SIM_INTERRUPTED, "stopped after %d of the frame's %d steps", k,
                            steps);
        }
        SIM_TRY(st);
        *sorts += sorted;
        *done = k + 1;
        if (stop != nullptr && k >= window) { /* the end of step k - window */
            SIM_CUDA_TRY(cudaEventSynchronize(b->events[kEventsPerStep * (k - window + 1)]));
        }
    }
    return SIM_OK;
}

sim_status cuda_run_frame(sim_backend *base, sim_frame_timing *t, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    const int steps = base->params.steps_per_frame;
    SIM_TRY(ensure_events(b, steps, err));
    cudaStream_t s = b->streams.main;
    const int culled = sim_backend_culling(base);
    int sorts = 0, done = 0;
    if (culled && !b->cull_ready) {
        SIM_TRY(cull_prepare(b, err));
    }
    SIM_CUDA_TRY(cudaMemsetAsync(b->d_flag, 0xff, sizeof *b->d_flag, s));
    if (culled) { /* the frame's peaks and fallbacks */
        SIM_CUDA_TRY(cudaMemsetAsync(&b->cull.counts->frame, 0, sizeof b->cull.counts->frame, s));
    }
    SIM_TRY(tcull_frame_begin(b, steps, err));
    SIM_CUDA_TRY(cudaEventRecord(b->events[0], s));
    const sim_status stopped = enqueue_steps(b, steps, culled, &done, &sorts, err);
    if (stopped != SIM_INTERRUPTED) {
        SIM_TRY(stopped);
    }
    SIM_CUDA_TRY(
        cudaMemcpyAsync(b->h_flag, b->d_flag, sizeof *b->d_flag, cudaMemcpyDeviceToHost, s));
    if (culled) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_counts, b->cull.counts, sizeof *b->h_counts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (tculled(b)) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_tcounts, b->tcull.counts, sizeof *b->h_tcounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(s)); /* the frame's only host sync (but for stopping) */

    memset(t, 0, sizeof *t);
    for (int k = 0; k < done; ++k) {
        cudaEvent_t *ev = b->events + kEventsPerStep * k;
        float ms[kEventsPerStep], step_ms;
        for (int q = 0; q < kEventsPerStep; ++q) {
            SIM_CUDA_TRY(cudaEventElapsedTime(&ms[q], ev[q], ev[q + 1]));
        }
        SIM_CUDA_TRY(cudaEventElapsedTime(&step_ms, ev[0], ev[kEventsPerStep]));
        t->integrate_ms += (double)ms[kIvFirst] + (double)ms[kIvSecond];
        /* An empty interval still reads ~1-2 us of event overhead: count only what ran. */
        t->sort_ms += b->step_sorted[k] ? ms[kIvSort] : 0.0;
        t->cull_ms += culled ? ms[kIvCull] : 0.0;
        t->pair_ms += ms[kIvPair];
        t->triplet_ms += ms[kIvTriplet];
        t->comm_ms += base->rank.world > 1 ? ms[kIvReduce] : 0.0;
        SIM_TRY(tcull_split_time(b, k, ev[kIvTriplet], t, err));
        t->step_ms += step_ms;
    }
    t->steps = done;
    t->ranks = base->rank.world;
    t->sorts = sorts;
    if (done > 0) {
        b->step_ms_est = t->step_ms / done;
    }
    if (culled) {
        SIM_TRY(finish_cull_frame(b, t, err));
    }
    SIM_TRY(tcull_frame_end(b, t, err));
    sim_backend_count_blocks(base, t, t->tile_pairs);

    if (*b->h_flag != SIM_GPU_STABLE) {
        uint32_t step, body;
        int cause;
        sim_gpu_unstable_decode(*b->h_flag, &step, &body, &cause);
        sim_vec4f p = {0.0f, 0.0f, 0.0f, 0.0f};
        SIM_TRY(body_position(b, body, &p, err));
        const double lim = SIM_ESCAPE_FACTOR * base->params.box_half;
        if (cause == SIM_GPU_BAD_POSITION || cause == SIM_GPU_BAD_VELOCITY) {
            return sim_fail(err, SIM_UNSTABLE,
                            "body %u: %s is NaN or infinite after step %u of the frame (the time "
                            "step %g s is probably too large)",
                            body, cause == SIM_GPU_BAD_POSITION ? "position" : "velocity", step + 1,
                            (double)b->dt);
        }
        return sim_fail(err, SIM_UNSTABLE,
                        "body %u left the box after step %u of the frame: a coordinate is beyond "
                        "%g m (%g x box_half); at the end of the frame it is at (%g, %g, %g)",
                        body, step + 1, lim, SIM_ESCAPE_FACTOR, (double)p.x, (double)p.y,
                        (double)p.z);
    }
    if (stopped == SIM_INTERRUPTED) {
        return sim_fail(err, SIM_INTERRUPTED, "stopped after %d of the frame's %d steps", done,
                        steps);
    }
    return SIM_OK;
}

sim_status cuda_set_params(sim_backend *base, const sim_params *p, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    sim_state tmp = {0, nullptr, nullptr};
    if (!(p->dt > 0.0)) { /* the default step depends on masses, radii, speeds: read them back */
        SIM_TRY(sim_state_alloc(&tmp, base->n, err));
        sim_status s = read_state_impl(b, &tmp, nullptr, err);
        if (s != SIM_OK) {
            sim_state_free(&tmp);
            return s;
        }
    }
    const sim_params old = base->params;
    sim_status s = set_physics(b, p, &tmp, err);
    sim_state_free(&tmp);
    SIM_TRY(s);
    base->params = *p;
    /* As the CPU reference: a new model needs the force the next half kick uses recomputed;
     * a new dt or frame length keeps F_n as it is. */
    if (!sim_params_same_model(&old, p)) {
        return compute_forces(b, err);
    }
    return SIM_OK;
}

sim_status cuda_set_state(sim_backend *base, const sim_state *st, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    SIM_TRY(upload_state(b, st, err));
    SIM_TRY(set_physics(b, &base->params, st, err)); /* the default dt depends on the state */
    if (b->cull_ready) { /* uploaded in the user's order; culling sorts them again */
        SIM_TRY(sim_gpu_iota(b->cull.perm, base->n, b->streams.main, err));
        b->sort_due = 1;
    }
    return compute_forces(b, err);
}

sim_status cuda_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces, sim_error *err) {
    return read_state_impl(as_cuda(base), out, forces, err);
}

sim_status cuda_energy(sim_backend *base, sim_energy *e, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    double h[4];
    const int rank = base->rank.rank, world = base->rank.world;
    SIM_CUDA_TRY(cudaMemsetAsync(b->d_energy, 0, sizeof h, s));
    if (world <= 1 || rank == 0) { /* per body: once over the ranks */
        SIM_TRY(sim_gpu_body_energy(&b->bodies, &b->ph, b->d_energy, s, err));
    }
    if (sim_backend_culling(base) && b->cull_ready) { /* the list for these positions, untimed */
        SIM_TRY(cull_phase(b, 0u, err));
        SIM_TRY(sim_gpu_pair_energy_list(&b->bodies, &b->ph, &b->cull, b->d_energy + 2, s, err));
    } else {
        SIM_TRY(sim_gpu_pair_energy(&b->bodies, &b->ph, b->d_energy + 2, rank, world, s, err));
    }
    if (base->params.triplets && tculled(b)) { /* the list for these positions, untimed */
        SIM_TRY(tcull_build(b, err));
        SIM_TRY(sim_gpu_triplet_energy_culled(&b->bodies, &b->ph, &b->tcull, tcull_share(b),
                                              b->d_energy + 3, s, err));
    } else if (base->params.triplets) {
        SIM_TRY(sim_gpu_triplet_energy(&b->bodies, &b->ph, b->d_energy + 3, rank, world, s, err));
    }
    if (world > 1) { /* each rank holds its share's energies */
        SIM_TRY(sim_comm_allreduce_sum(base->rank.comm, b->d_energy, 4, SIM_COMM_DOUBLE, s, err));
    }
    SIM_CUDA_TRY(cudaMemcpyAsync(h, b->d_energy, sizeof h, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    e->kinetic = h[0];
    e->gravity = h[1];
    e->contact = h[2];
    e->atm = h[3];
    e->total = h[0] + h[1] + h[2] + h[3];
    return SIM_OK;
}

sim_status cuda_export_positions(sim_backend *base, sim_vec4f *pos, float *speed, int on_device,
                                 sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    const size_t n = base->n;
    const uint32_t *perm = body_order(b);
    if (on_device) {
        SIM_TRY(sim_gpu_export(&b->bodies, perm, pos, speed, s, err));
    } else {
        /* Bodies in user order on the device first when they are sorted: pos_alt is scratch
         * between steps. */
        const sim_vec4f *src = b->bodies.pos;
        if (perm != nullptr) {
            SIM_TRY(sim_gpu_export(&b->bodies, perm, b->cull.pos_alt, nullptr, s, err));
            src = b->cull.pos_alt;
        }
        SIM_CUDA_TRY(cudaMemcpyAsync(pos, src, n * sizeof *pos, cudaMemcpyDeviceToHost, s));
        if (speed != nullptr) {
            SIM_TRY(sim_gpu_export(&b->bodies, perm, nullptr, b->d_speed, s, err));
            SIM_CUDA_TRY(
                cudaMemcpyAsync(speed, b->d_speed, n * sizeof *speed, cudaMemcpyDeviceToHost, s));
        }
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    return SIM_OK;
}

sim_status cuda_set_cull(sim_backend *base, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    if (!base->config.cull) {
        return SIM_OK; /* the order stays as it is; nothing sorts it any more */
    }
    return cull_prepare(b, err);
}

sim_status cuda_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                           sim_error *err) {
    cuda_backend *b = as_cuda(base);
    if (!b->cull_ready) {
        return SIM_OK;
    }
    cudaStream_t s = b->streams.main;
    /* The list for the current positions again: a list grown at the end of the last frame holds
     * nothing yet. */
    SIM_TRY(cull_phase(b, 0u, err));
    SIM_CUDA_TRY(cudaMemcpyAsync(b->h_counts, b->cull.counts, sizeof *b->h_counts,
                                 cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    *count = b->h_counts->tiles;
    uint64_t have = *count < b->cull.tile_cap ? *count : b->cull.tile_cap;
    have = have < cap ? have : cap;
    if (have > 0) {
        SIM_CUDA_TRY(
            cudaMemcpy(out, b->cull.tile_list, (size_t)have * sizeof *out, cudaMemcpyDeviceToHost));
    }
    return SIM_OK;
}

sim_status cuda_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap, uint64_t *count,
                             sim_error *err) {
    cuda_backend *b = as_cuda(base);
    if (!tculled(b)) {
        return SIM_OK;
    }
    cudaStream_t s = b->streams.main;
    SIM_TRY(tcull_build(b, err)); /* the list for the current positions again */
    SIM_CUDA_TRY(cudaMemcpyAsync(b->h_tcounts, b->tcull.counts, sizeof *b->h_tcounts,
                                 cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    *count = b->h_tcounts->triples;
    uint64_t have = *count < b->tcull.triple_cap ? *count : b->tcull.triple_cap;
    have = have < cap ? have : cap;
    if (have > 0) {
        SIM_CUDA_TRY(cudaMemcpy(out, b->tcull.triple_list, (size_t)have * sizeof *out,
                                cudaMemcpyDeviceToHost));
    }
    return SIM_OK;
}

sim_status cuda_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap, uint64_t *count,
                         sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    const uint32_t dcap = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
    sim_body_pair *d_out = nullptr;
    uint32_t *d_count = nullptr;
    SIM_TRY(device_alloc((void **)&d_out, ((size_t)dcap + 1u) * sizeof *d_out, "contacts", base->n,
                         err));
    sim_status st = device_alloc((void **)&d_count, sizeof *d_count, "contacts", base->n, err);
    const int culled = sim_backend_culling(base) && b->cull_ready;
    uint32_t found = 0;
    if (st == SIM_OK && culled) {
        st = cull_phase(b, 0u, err);
    }
    if (st == SIM_OK && cudaMemsetAsync(d_count, 0, sizeof *d_count, s) != cudaSuccess) {
        st = sim_fail(err, SIM_CUDA, "cannot clear the contact count");
    }
    if (st == SIM_OK) {
        st = sim_gpu_pair_contacts(&b->bodies, culled ? &b->cull : nullptr, base->config.tile,
                                   body_order(b), d_out, dcap, d_count, &b->streams, err);
    }
    if (st == SIM_OK) {
        const cudaError_t e1 =
            cudaMemcpyAsync(&found, d_count, sizeof found, cudaMemcpyDeviceToHost, s);
        const cudaError_t e2 = cudaStreamSynchronize(s);
        const uint64_t have = found < dcap ? found : dcap;
        const cudaError_t e3 =
            e1 == cudaSuccess && e2 == cudaSuccess && have > 0
                ? cudaMemcpy(out, d_out, (size_t)have * sizeof *out, cudaMemcpyDeviceToHost)
                : cudaSuccess;
        if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess) {
            st = sim_fail(err, SIM_CUDA, "reading the contacts back: %s",
                          cudaGetErrorString(e1 != cudaSuccess   ? e1
                                             : e2 != cudaSuccess ? e2
                                                                 : e3));
        }
    }
    (void)cudaFree(d_out);
    (void)cudaFree(d_count);
    *count = found;
    return st;
}

/* Trajectory capture (capture.h): device -> pinned host copies on the main stream, then an event
 * the recorder's writer thread waits on. Stream order puts them after the frame's kernels and
 * before the next frame's, so the simulation thread never waits; the GPU spends 48 bytes per
 * body (52 with the body order) of copy time, about 2 ms per million bodies over PCIe 5. While
 * culling keeps the bodies sorted, the slot -> user index array travels too and the writer puts
 * the bodies back in the user's order. */
sim_status cuda_capture(sim_backend *base, sim_capture *c, sim_error *err) {
    cuda_backend *b = as_cuda(base);
    cudaStream_t s = b->streams.main;
    const size_t bytes = (size_t)base->n * sizeof(sim_vec4f);
    SIM_CUDA_TRY(cudaMemcpyAsync(c->pos, b->bodies.pos, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->vel, b->bodies.vel, bytes, cudaMemcpyDeviceToHost, s));
    SIM_CUDA_TRY(cudaMemcpyAsync(c->force, b->bodies.force, bytes, cudaMemcpyDeviceToHost, s));
    const uint32_t *perm = body_order(b);
    if (perm != nullptr) {
        SIM_CUDA_TRY(cudaMemcpyAsync(c->order, perm, (size_t)base->n * sizeof *c->order,
                                     cudaMemcpyDeviceToHost, s));
    }
    SIM_CUDA_TRY(cudaEventRecord((cudaEvent_t)c->event, s));
    c->has_order = perm != nullptr;
    c->pending = 1;
    return SIM_OK;
}

const sim_backend_ops cuda_ops = {
    cuda_destroy,    cuda_run_frame,  cuda_set_params,       cuda_set_state,
    cuda_read_state, cuda_energy,     cuda_export_positions, cuda_capture,
    cuda_set_cull,   cuda_tile_pairs, cuda_contacts,         cuda_tile_triples,
};

sim_status create_impl(cuda_backend *b, const sim_state *s, sim_error *err) {
    const uint32_t n = s->n;
    const size_t v4 = (size_t)n * sizeof(sim_vec4f);
    b->bodies.n = n;
    SIM_TRY(device_alloc((void **)&b->bodies.pos, v4, "positions", n, err));
    SIM_TRY(device_alloc((void **)&b->bodies.vel, v4, "velocities", n, err));
    SIM_TRY(device_alloc((void **)&b->bodies.force, v4, "forces", n, err));
    SIM_TRY(device_alloc((void **)&b->d_speed, (size_t)n * sizeof(float), "speeds", n, err));
    SIM_TRY(device_alloc((void **)&b->d_flag, sizeof *b->d_flag, "flag", n, err));
    SIM_TRY(device_alloc((void **)&b->d_energy, 4 * sizeof *b->d_energy, "energies", n, err));
    SIM_CUDA_TRY(cudaMallocHost((void **)&b->h_flag, sizeof *b->h_flag));
    SIM_TRY(make_streams(b, err));
    SIM_TRY(ensure_events(b, b->base.params.steps_per_frame, err));
    SIM_TRY(sim_backend_plan_maps(&b->base, b->base.config.pair_map, b->base.config.triplet_map,
                                  &b->base.params, err));
    SIM_TRY(set_physics(b, &b->base.params, s, err));
    SIM_TRY(upload_state(b, s, err));
    if (b->base.config.cull) {
        SIM_TRY(cull_prepare(b, err));
    }
    /* F_0: a step's work, stopped like one (nothing to restore: the backend is not made). */
    b->watch = stop_flag(b);
    const sim_status st = compute_forces(b, err);
    b->watch = nullptr;
    if (st == SIM_INTERRUPTED) {
        return sim_fail(err, SIM_INTERRUPTED, "stopped while computing the initial forces");
    }
    return st;
}

} // namespace

sim_status sim_cuda_backend_create(const sim_backend_config *c, const sim_params *p,
                                   const sim_state *s, const sim_rank *rank, sim_backend **out,
                                   sim_error *err) {
    *out = nullptr;
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_NO_DEVICE, "no CUDA device found (%s)",
                        ce != cudaSuccess ? cudaGetErrorString(ce)
                                          : "the driver reports 0 devices");
    }
    const int device = rank != nullptr ? rank->device : 0;
    if (device >= count) {
        return sim_fail(err, SIM_NO_DEVICE, "rank %d needs CUDA device %d, but %d %s visible",
                        rank != nullptr ? rank->rank : 0, device, count, count == 1 ? "is" : "are");
    }
    cudaDeviceProp prop;
    SIM_CUDA_TRY(cudaSetDevice(device));
    SIM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    /* Before anything is allocated or the state is read: an impossible N fails fast. */
    SIM_TRY(check_memory(s->n, c->cull, prop.name, err));

    cuda_backend *b = (cuda_backend *)calloc(1, sizeof *b);
    if (b == nullptr) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the CUDA backend");
    }
    b->base.ops = &cuda_ops;
    b->base.config = *c;
    b->base.params = *p;
    b->base.n = s->n;
    b->base.rank = rank != nullptr ? *rank : sim_rank{0, 1, device, nullptr};
    /* Truncating a long product name is fine. */
    const size_t len = strnlen(prop.name, sizeof b->base.device_name - 1);
    memcpy(b->base.device_name, prop.name, len);
    b->base.device_name[len] = '\0';
    b->device = device;
    b->sm_count = prop.multiProcessorCount;
    const sim_status st = create_impl(b, s, err);
    if (st != SIM_OK) {
        cuda_destroy(&b->base);
        return st;
    }
    *out = &b->base;
    return SIM_OK;
}
