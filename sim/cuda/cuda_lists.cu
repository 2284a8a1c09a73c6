/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend's culled lists (cuda_backend_impl.h): the buffers of the contacts'
 * culling (cull_kernels.h) and of the ATM cut-off's (triplet_cull_kernels.h), their builds
 * outside a step (energies, test hooks, the stepper's measure), the stepper's grow primitive, and
 * the device counters as the stepper reads them (sim_step_counts). List lengths stay on the
 * device during a frame; the frame's one sync reads the counters, from which the stepper decides
 * the next frame's re-sort and the lists' growth.
 *
 * The ATM cut-off sweeps its neighbour lists of R + skin where sim_cuda_atm_listed (one GPU, a skin,
 * walls: atm_list_kernels.h), else its tile triples; both are exact (atm_list.h).
 *
 * Several GPUs: each culls the tile rows of its rank (contacts: the neighbour lists then hold the
 * pairs of those rows, nlist.h) or builds the whole neighbour tile-pair list and lists only its own
 * rows' tile triples (the cut-off: sim_gpu_tcull_share, triplet_cull.h), so the sweeps, the
 * lists' memory and their growth are shared. */
#include <string.h>

#include "cuda/cuda_backend_impl.h"
#include "cuda/pair_kernels.h"
#include "cuda/triplet_kernels.h"

const uint32_t *sim_cuda_body_order(const cuda_backend *b) {
    return b->cull_ready ? b->cull.perm : nullptr;
}

/* ---- contacts ---- */

void sim_cuda_cull_free(cuda_backend *b) {
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

/* (Re)allocates a pair list of cap entries; the old one is freed first (its contents are
 * rebuilt at every step). */
static sim_status alloc_list(sim_tile2 **list, uint32_t *have, uint64_t cap, const char *what,
                             uint32_t n, sim_error *err) {
    (void)cudaFree(*list);
    *list = nullptr;
    *have = 0;
    cap = cap > 0 ? cap : 1;
    SIM_TRY(sim_cuda_alloc((void **)list, (size_t)cap * sizeof **list, what, n, err));
    *have = (uint32_t)cap;
    return SIM_OK;
}

static sim_status cull_alloc(cuda_backend *b, sim_error *err) {
    sim_gpu_cull *c = &b->cull;
    const uint32_t n = b->base.n;
    const size_t u4 = (size_t)n * sizeof(uint32_t), v4 = (size_t)n * sizeof(sim_vec4f);
    c->tile = b->base.config.tile;
    c->n_tiles = sim_ceil_div(n, c->tile);
    c->n_supers = sim_ceil_div(c->n_tiles, SIM_CULL_SUPER);
    sim_backend_cull_rows(&b->base, c->n_tiles, &c->row0, &c->row1);
    SIM_TRY(sim_cuda_alloc((void **)&c->perm, u4, "the body order", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&c->perm_alt, u4, "the body order", n, err));
    for (int k = 0; k < 2; ++k) {
        SIM_TRY(sim_cuda_alloc((void **)&c->keys[k], u4, "sort keys", n, err));
        SIM_TRY(sim_cuda_alloc((void **)&c->vals[k], u4, "sort values", n, err));
    }
    SIM_TRY(sim_gpu_sort_temp_bytes(n, &c->sort_temp_bytes, err));
    SIM_TRY(sim_cuda_alloc(&c->sort_temp, c->sort_temp_bytes + 16u, "the sort", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&c->pos_alt, v4, "sorted positions", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&c->vel_alt, v4, "sorted velocities", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&c->boxes, (size_t)c->n_tiles * sizeof *c->boxes, "tile boxes",
                           n, err));
    SIM_TRY(sim_cuda_alloc((void **)&c->supers, (size_t)c->n_supers * sizeof *c->supers,
                           "super-tile boxes", n, err));
    SIM_TRY(sim_cuda_alloc((void **)&c->counts, sizeof *c->counts, "cull counters", n, err));
    SIM_TRY(alloc_list(&c->tile_list, &c->tile_cap, sim_cull_initial_capacity(&b->base),
                       sim_list_name(SIM_LIST_TILE_PAIRS), n, err));
    SIM_TRY(alloc_list(&c->super_list, &c->super_cap, sim_cull_super_capacity(&b->base),
                       sim_list_name(SIM_LIST_SUPER_PAIRS), n, err));
    SIM_CUDA_TRY(cudaMallocHost((void **)&b->h_counts, sizeof *b->h_counts));
    SIM_CUDA_TRY(cudaMemsetAsync(c->counts, 0, sizeof *c->counts, b->streams.main));
    SIM_TRY(sim_gpu_iota(c->perm, n, b->streams.main, err));
    SIM_TRY(sim_cuda_pair_list_grid(c->tile, b->sm_count, &c->list_grid, err));
    SIM_TRY(sim_gpu_cull_second_grid(b->sm_count, &c->super_grid, err));
    SIM_CUDA_TRY(cudaStreamSynchronize(b->streams.main));
    return SIM_OK;
}

sim_status sim_cuda_cull_prepare(cuda_backend *b, sim_error *err) {
    if (b->cull_ready) {
        return SIM_OK;
    }
    const sim_status st = cull_alloc(b, err);
    if (st != SIM_OK) {
        sim_cuda_cull_free(b);
        return st;
    }
    b->cull_ready = 1;
    sim_step_request_sort(&b->base.stepper); /* the identity order: no sort yet */
    return SIM_OK;
}

sim_status sim_cuda_cull_phase(cuda_backend *b, unsigned flags, sim_error *err) {
    b->cull.period = b->ph.box.period; /* the physics may have changed since the lists were made */
    b->nlist.period = b->ph.box.period;
    const sim_gpu_cull *c = &b->cull;
    const uint32_t *gate = nullptr;
    if (sim_backend_listing(&b->base)) {
        /* friction's springs carried beside the old lists when they are rebuilt (on the
         * device's flag, as the boxes), while count and nbr are still theirs */
        SIM_TRY(sim_cuda_friction_carry(&b->fric, sim_cuda_fric_lists(b),
                                        (flags & SIM_GPU_NLIST_REBUILD) != 0u, b->streams.main,
                                        err));
        if (b->nlist.grid.cells > 0) {
            return SIM_OK; /* built from the cell grid: the build bins the bodies itself */
        }
        SIM_TRY(sim_gpu_nlist_boxes(&b->bodies, c, &b->nlist, flags, b->streams.main, err));
        gate = &b->nlist.counts->rebuild;
    } else {
        SIM_TRY(sim_gpu_cull_boxes(&b->bodies, c, b->streams.main, err));
    }
    SIM_TRY(sim_gpu_cull_top(c, &b->base.cull_plan, b->base.cull_levels, gate, &b->streams, err));
    if (b->base.cull_levels == 2) {
        SIM_TRY(sim_gpu_cull_second(c, flags, gate, b->streams.main, err));
    }
    return SIM_OK;
}

/* ---- neighbour lists ---- */

const sim_gpu_nlist *sim_cuda_fric_lists(const cuda_backend *b) {
    return b->nlist_ready ? &b->nlist : nullptr;
}

sim_status sim_cuda_fric_built(cuda_backend *b, sim_error *err) {
    return sim_cuda_friction_built(&b->fric, sim_cuda_fric_lists(b), sim_cuda_body_order(b),
                                   b->streams.main, err);
}

sim_status sim_cuda_fric_flush(cuda_backend *b, sim_error *err) {
    return sim_cuda_friction_flush(&b->fric, sim_cuda_fric_lists(b), sim_cuda_body_order(b),
                                   b->streams.main, err);
}

void sim_cuda_nlist_free(cuda_backend *b) {
    sim_cuda_friction_list_free(&b->fric); /* its springs are the lists' (flushed first) */
    sim_gpu_nlist_free(&b->nlist);
    (void)cudaFreeHost(b->h_ncounts);
    b->h_ncounts = nullptr;
    b->nlist_ready = 0;
}

sim_status sim_cuda_nlist_prepare(cuda_backend *b, sim_error *err) {
    const int half = sim_backend_nlist_kind(&b->base) == SIM_NLIST_HALF;
    if (b->nlist_ready && b->nlist.half != half) {
        SIM_TRY(sim_cuda_fric_flush(b, err));
        sim_cuda_nlist_free(b);
    }
    if (!b->nlist_ready) {
        const uint32_t cap = sim_nlist_first_cap(b->base.tuning.nlist_capacity);
        sim_status st =
            sim_gpu_nlist_alloc(&b->nlist, b->base.n, cap, half, b->sm_count, b->streams.main, err);
        if (st == SIM_OK &&
            cudaMallocHost((void **)&b->h_ncounts, sizeof *b->h_ncounts) != cudaSuccess) {
            (void)cudaGetLastError();
            st = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate pinned neighbour-list counters");
        }
        if (st != SIM_OK) {
            sim_cuda_nlist_free(b);
            return st;
        }
        b->nlist_ready = 1;
        sim_step_request_rebuild(&b->base.stepper);
    }
    b->nlist.skin = (float)b->base.nlist_skin;
    /* No lists, the cells swept: asked for, or (DEFAULT) where the rebuilds say so (nlist.h);
     * never with friction (its springs live beside the lists' entries). Their cells are a touch
     * wide, not a list's reach: 14 % fewer candidates at a skin of 0.05 diameters. */
    const sim_nlist_kind asked = b->base.config.nlist;
    const int wants_grid = sim_gpu_nlist_wants_grid(&b->base.config, b->base.rank.world);
    int direct = wants_grid && !b->fric.on &&
                 (asked == SIM_NLIST_CELLS ||
                  (asked == SIM_NLIST_DEFAULT && b->nlist_cadence.direct));
    /* the grid for these bodies and skin, where it fits (one rank; a grid of another shape, or
     * none after one, means lists rebuilt before anything reads them) */
    sim_cell_grid g;
    int grid = wants_grid && sim_cell_grid_shape(&b->base.params, b->max_radius,
                                                 direct ? 0.0 : b->base.nlist_skin, b->base.n, &g);
    if (direct && !grid) { /* no grid of touching cells: lists, on a grid of their reach */
        direct = 0;
        grid = wants_grid && sim_cell_grid_shape(&b->base.params, b->max_radius,
                                                 b->base.nlist_skin, b->base.n, &g);
    }
    int changed = 0;
    SIM_TRY(sim_gpu_nlist_use_grid(&b->nlist, grid ? &g : nullptr, &changed, err));
    b->base.nlist_cells = b->nlist.grid.cells > 0;
    if (b->nlist.direct && !direct) {
        changed = 1; /* the lists were not kept up: built before anything reads them */
    }
    b->nlist.direct = direct;
    b->base.nlist_direct = direct;
    if (changed) {
        SIM_TRY(sim_cuda_nlist_stale(b, err));
    }
    return SIM_OK;
}

sim_status sim_cuda_nlist_stale(cuda_backend *b, sim_error *err) {
    SIM_CUDA_TRY(cudaMemsetAsync(&b->nlist.counts->rebuild, 1, sizeof(uint32_t), b->streams.main));
    return SIM_OK;
}

sim_status sim_cuda_pairs_current(cuda_backend *b, sim_error *err) {
    if (!sim_backend_listing(&b->base)) {
        return sim_cuda_cull_phase(b, 0u, err);
    }
    SIM_TRY(sim_cuda_nlist_prepare(b, err));
    cudaStream_t s = b->streams.main;
    SIM_TRY(sim_gpu_nlist_check(&b->bodies, &b->nlist, s, err));
    SIM_TRY(sim_cuda_cull_phase(b, 0u, err));
    SIM_TRY(sim_gpu_nlist_build(&b->bodies, &b->cull, &b->nlist, 0u, s, err));
    SIM_TRY(sim_cuda_fric_built(b, err));
    SIM_CUDA_TRY(cudaMemsetAsync(&b->nlist.counts->rebuild, 0, sizeof(uint32_t), s));
    return SIM_OK;
}

/* ---- the ATM cut-off ---- */

int sim_cuda_tculled(const cuda_backend *b) {
    return sim_backend_triplet_culling(&b->base) && b->ph.atm.atm_cutoff2 > 0.0f;
}

void sim_cuda_tcull_free(cuda_backend *b) {
    sim_gpu_tcull_free(&b->tcull);
    (void)cudaFreeHost(b->h_tcounts);
    b->h_tcounts = nullptr;
    b->tcull_ready = 0;
}

sim_status sim_cuda_tcull_prepare(cuda_backend *b, sim_error *err) {
    if (b->tcull_ready) {
        return SIM_OK;
    }
    const sim_backend *base = &b->base;
    sim_status st = sim_gpu_tcull_alloc(
        &b->tcull, base->n, sim_tcull_super_capacity(base), sim_tcull_pair_capacity(base),
        sim_tcull_triple_capacity(base), b->sm_count, b->streams.main, err);
    if (st == SIM_OK) {
        st = sim_cuda_triplet_culled_grid(b->sm_count, &b->tcull.sweep_grid, err);
    }
    if (st == SIM_OK &&
        cudaMallocHost((void **)&b->h_tcounts, sizeof *b->h_tcounts) != cudaSuccess) {
        (void)cudaGetLastError();
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate pinned triplet culling counters");
    }
    if (st != SIM_OK) {
        sim_cuda_tcull_free(b);
        return st;
    }
    b->tcull_ready = 1;
    return SIM_OK;
}

sim_gpu_tcull_share sim_cuda_tcull_share(const cuda_backend *b) {
    const sim_gpu_tcull_share s = {(uint32_t)b->base.rank.rank,
                                   (uint32_t)(b->base.rank.world > 1 ? b->base.rank.world : 1)};
    return s;
}

sim_status sim_cuda_tcull_build(cuda_backend *b, sim_error *err) {
    SIM_TRY(sim_cuda_tcull_prepare(b, err));
    return sim_gpu_tcull_build(&b->bodies, &b->tcull, &b->ph, &b->base.tcull_plan,
                               b->base.tcull_levels, sim_cuda_tcull_share(b), &b->streams, err);
}

/* ---- the ATM cut-off's neighbour lists ---- */

int sim_cuda_atm_listed(const cuda_backend *b) {
    return sim_cuda_tculled(b) && sim_backend_atm_listing(&b->base) && !b->ph.box.periodic;
}

void sim_cuda_atm_free(cuda_backend *b) {
    sim_gpu_atm_list_free(&b->atm);
    (void)cudaFreeHost(b->h_acounts);
    b->h_acounts = nullptr;
    b->atm_ready = 0;
}

sim_status sim_cuda_atm_prepare(cuda_backend *b, sim_error *err) {
    if (b->atm_ready) {
        return SIM_OK;
    }
    /* half lists: faster than full ones in every measured case (bench/results, atm_list.md) */
    sim_status st = sim_gpu_atm_list_alloc(&b->atm, b->base.n, SIM_ATM_LIST_INITIAL_CAP, 1,
                                           b->streams.main, err);
    if (st == SIM_OK &&
        cudaMallocHost((void **)&b->h_acounts, sizeof *b->h_acounts) != cudaSuccess) {
        (void)cudaGetLastError();
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate pinned ATM-list counters");
    }
    if (st != SIM_OK) {
        sim_cuda_atm_free(b);
        return st;
    }
    b->atm_ready = 1;
    sim_step_request_rebuild(&b->base.stepper);
    return SIM_OK;
}

sim_status sim_cuda_atm_update(cuda_backend *b, unsigned flags, sim_error *err) {
    SIM_TRY(sim_cuda_atm_prepare(b, err));
    cudaStream_t s = b->streams.main;
    const float skin = (float)b->base.nlist_skin;
    SIM_TRY(sim_gpu_atm_list_check(&b->bodies, &b->atm, skin, s, err));
    return sim_gpu_atm_list_update(&b->bodies, &b->atm, sim_atm_a2_max_f(b->ph.atm.atm_cutoff2), skin,
                                   flags, s, err);
}

sim_status sim_cuda_atm_stale(cuda_backend *b, sim_error *err) {
    SIM_CUDA_TRY(cudaMemsetAsync(&b->atm.counts->rebuild, 1, sizeof(uint32_t), b->streams.main));
    return SIM_OK;
}

/* ---- the stepper's view ---- */

sim_status sim_cuda_grow_list(sim_backend *base, sim_list list, uint64_t cap, int *grown,
                              sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    sim_gpu_cull *c = &b->cull;
    sim_gpu_tcull *t = &b->tcull;
    sim_error ignored; /* no memory for the larger list: kept at its size, the frame says so */
    *grown = 1;
    if (b->nlist_ready && (list == SIM_LIST_NEIGHBOURS || list == SIM_LIST_TILE_PAIRS)) {
        /* Their contents are lost (the lists', or the tile pairs the lists fall back to): the
         * stepper has the next step rebuild them, and until then the device flag has anything
         * that reads them (the hooks) rebuild first. */
        SIM_TRY(sim_cuda_nlist_stale(b, err));
    }
    if (list == SIM_LIST_NEIGHBOURS) {
        /* friction's springs beside the entries into the table first (the old entries go) */
        SIM_TRY(sim_cuda_fric_flush(b, err));
        sim_cuda_friction_list_free(&b->fric);
        *grown =
            b->nlist_ready && sim_gpu_nlist_realloc(&b->nlist, (uint32_t)cap, &ignored) == SIM_OK;
        return SIM_OK;
    }
    if (list == SIM_LIST_ATM_NEIGHBOURS) { /* contents lost: its flag raised, the stepper rebuilds */
        *grown = b->atm_ready && sim_gpu_atm_list_realloc(&b->atm, (uint32_t)cap, b->streams.main,
                                                          &ignored) == SIM_OK;
        return SIM_OK;
    }
    if (list == SIM_LIST_TILE_PAIRS || list == SIM_LIST_SUPER_PAIRS) {
        const int tiles = list == SIM_LIST_TILE_PAIRS;
        sim_tile2 **l = tiles ? &c->tile_list : &c->super_list;
        uint32_t *have = tiles ? &c->tile_cap : &c->super_cap;
        const uint32_t old = *have;
        if (alloc_list(l, have, cap, sim_list_name(list), base->n, &ignored) != SIM_OK) {
            *grown = 0;
            return alloc_list(l, have, old, sim_list_name(list), base->n, err);
        }
        return SIM_OK;
    }
    const int which = list == SIM_LIST_TCULL_SUPERS  ? SIM_TCULL_LIST_SUPERS
                      : list == SIM_LIST_TCULL_PAIRS ? SIM_TCULL_LIST_PAIRS
                                                     : SIM_TCULL_LIST_TRIPLES;
    const uint32_t old = which == SIM_TCULL_LIST_SUPERS  ? t->super_cap
                         : which == SIM_TCULL_LIST_PAIRS ? t->pair_cap
                                                         : t->triple_cap;
    if (sim_gpu_tcull_realloc(t, which, cap, &ignored) != SIM_OK) {
        *grown = 0;
        return sim_gpu_tcull_realloc(t, which, old, err);
    }
    return SIM_OK;
}

static sim_list_count list_count(uint64_t count, uint64_t peak, uint64_t sorted, uint64_t cap,
                                 uint64_t all) {
    const sim_list_count x = {count, peak, sorted, cap, all, 1};
    return x;
}

static uint64_t slots_sum(const unsigned long long *v) {
    uint64_t sum = 0;
    for (int k = 0; k < SIM_GPU_COUNT_SLOTS; ++k) {
        sum += v[k];
    }
    return sum;
}

void sim_cuda_counts(const cuda_backend *b, const sim_step_shape *f, sim_step_counts *c) {
    memset(c, 0, sizeof *c);
    if (f->culled && b->cull_ready) {
        const sim_gpu_cull_counts *h = b->h_counts;
        const sim_gpu_cull *g = &b->cull;
        c->list[SIM_LIST_TILE_PAIRS] = list_count(h->tiles, h->frame.tiles_peak, h->tiles_sorted,
                                                  g->tile_cap, sim_t2_u64(g->n_tiles));
        c->list[SIM_LIST_SUPER_PAIRS] =
            list_count(h->supers, h->frame.supers_peak, 0u, g->super_cap, sim_t2_u64(g->n_supers));
        c->pair_fallback_steps = (int)h->frame.fallback_steps;
        c->candidates = slots_sum(h->frame.tests);
        c->contacts = slots_sum(h->frame.contacts);
    }
    if (f->listed && b->nlist_ready) {
        const sim_gpu_nlist_counts *h = b->h_ncounts;
        const sim_gpu_nlist *l = &b->nlist;
        c->list[SIM_LIST_NEIGHBOURS] =
            list_count(h->most, h->frame.peak, 0u, l->cap, l->n > 1 ? l->n - 1u : 1u);
        c->nlist_rebuilds = (int)h->frame.rebuilds;
        c->nlist_fallback_steps = (int)h->frame.fallback_steps;
        c->nlist_bytes = sim_gpu_nlist_bytes(l);
        c->candidates += slots_sum(h->frame.tests);
        c->contacts += slots_sum(h->frame.contacts);
    }
    if (f->tlisted && b->atm_ready) {
        const sim_gpu_atm_list_counts *h = b->h_acounts;
        const sim_gpu_atm_list *l = &b->atm;
        c->list[SIM_LIST_ATM_NEIGHBOURS] =
            list_count(h->most, h->frame.peak, 0u, l->cap, l->n > 1 ? l->n - 1u : 1u);
        c->atm_rebuilds = (int)h->frame.rebuilds;
        c->atm_entries = h->entries;
        c->atm_bytes = sim_gpu_atm_list_bytes(l);
        c->triplet_fallback_steps = (int)h->frame.fallback_steps;
    }
    if (f->tculled && !f->tlisted && b->tcull_ready) {
        const sim_gpu_tcull_counts *h = b->h_tcounts;
        const sim_gpu_tcull *g = &b->tcull;
        c->list[SIM_LIST_TCULL_SUPERS] =
            list_count(h->supers, h->frame.supers_peak, 0u, g->super_cap, sim_t2_u64(g->n_supers));
        c->list[SIM_LIST_TCULL_PAIRS] =
            list_count(h->pairs, h->frame.pairs_peak, 0u, g->pair_cap, sim_t2_u64(g->n_tiles));
        c->list[SIM_LIST_TCULL_TRIPLES] =
            list_count(h->triples, h->frame.triples_peak, h->triples_sorted, g->triple_cap,
                       sim_t3_u64(g->n_tiles));
        c->triplet_fallback_steps = (int)h->frame.fallback_steps;
        /* a short pair list undercounts the triples built from it */
        c->inexact = h->frame.fallback_steps > 0;
    }
}

/* The lists for the current positions (untimed, unrecorded), their counts read with a sync. */
sim_status sim_cuda_measure(sim_backend *base, const sim_step_shape *f, sim_step_counts *c,
                            sim_error *err) {
    cuda_backend *b = sim_cuda_of(base);
    cudaStream_t s = b->streams.main;
    if (f->culled && b->cull_ready) {
        SIM_TRY(sim_cuda_pairs_current(b, err));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_counts, b->cull.counts, sizeof *b->h_counts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (f->listed && b->nlist_ready) {
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_ncounts, b->nlist.counts, sizeof *b->h_ncounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (f->tculled && !f->tlisted) {
        SIM_TRY(sim_cuda_tcull_build(b, err));
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_tcounts, b->tcull.counts, sizeof *b->h_tcounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    if (f->tlisted && b->atm_ready) { /* the last build's counts (complete: never inexact) */
        SIM_CUDA_TRY(cudaMemcpyAsync(b->h_acounts, b->atm.counts, sizeof *b->h_acounts,
                                     cudaMemcpyDeviceToHost, s));
    }
    SIM_CUDA_TRY(cudaStreamSynchronize(s));
    sim_cuda_counts(b, f, c);
    for (int l = 0; l < SIM_LIST_COUNT; ++l) {
        c->list[l].peak = c->list[l].count;
    }
    return SIM_OK;
}
