/* SPDX-License-Identifier: MIT
 * nbsim — the CPU backend's culled tile pairs and neighbour lists (cpu_backend_impl.h): made
 * ready on first use, built when the stepper's phases ask, and made current for the test hooks
 * (cpu_export.c). Below cpu_backend.c and cpu_export.c, which both call it. */
#include "cpu/cpu_backend_impl.h"

/* Culling buffers on first use (the order then is the identity: the stepper sorts first). */
sim_status sim_cpu_cull_ready(cpu_backend *b, sim_error *err) {
    if (!b->cull_ready) {
        SIM_TRY(sim_cpu_cull_init(&b->cull, b->st.n, b->base.config.tile, err));
        b->cull_ready = 1;
        sim_step_request_sort(&b->base.stepper);
    }
    return SIM_OK;
}

/* The neighbour lists on first use, or of another kind; their size from the config. */
sim_status sim_cpu_nlist_ready(cpu_backend *b, sim_error *err) {
    const int half = sim_backend_nlist_kind(&b->base) == SIM_NLIST_HALF;
    if (b->nlist_ready && b->nlist.half == half) {
        return SIM_OK;
    }
    if (b->nlist_ready) {
        sim_cpu_nlist_free(&b->nlist);
        b->nlist_ready = 0;
    }
    const uint32_t cap = sim_nlist_first_cap(b->base.tuning.nlist_capacity);
    SIM_TRY(sim_cpu_nlist_init(&b->nlist, b->st.n, cap, half, err));
    b->nlist.per = &b->ph.box.period; /* zeros on walled axes: the images are the separations */
    b->nlist_ready = 1;
    return SIM_OK;
}

/* The tile pairs for the sorted copies just gathered: with neighbour lists only when these are
 * rebuilt (asked, or a body moved more than half the skin: b->nlist_rebuild), from boxes
 * inflated by half the skin. */
sim_status sim_cpu_cull_pairs(cpu_backend *b, unsigned flags, sim_error *err) {
    sim_cpu_cull *c = &b->cull;
    double pad = 0.0;
    if (sim_backend_listing(&b->base)) {
        const double skin = b->base.nlist_skin;
        b->nlist_rebuild =
            (flags & SIM_STEP_REBUILD) || sim_cpu_nlist_stale(&b->nlist, c->pos, skin);
        if (!b->nlist_rebuild) {
            return SIM_OK;
        }
        pad = 0.5 * skin;
    }
    SIM_TRY(sim_cpu_cull_passes(c, &b->base, pad, err));
    sim_cpu_record(&b->rec.list[SIM_LIST_TILE_PAIRS], c->tiles.count, sim_t2_u64(b->base.tiles),
                   flags);
    sim_cpu_record(&b->rec.list[SIM_LIST_SUPER_PAIRS], c->super_pairs.count,
                   sim_t2_u64(b->base.super_tiles), flags & ~(unsigned)SIM_STEP_SORTED);
    return SIM_OK;
}

/* The lists, when the cull rebuilt its tile pairs: from the cell grid as the CUDA backend (one
 * rank, unless the tile pairs are asked for), else from those pairs (several ranks list their
 * tile rows). The pairs stay the overflow's fallback either way. */
void sim_cpu_build_nlist(cpu_backend *b, unsigned flags) {
    if (!b->nlist_rebuild) {
        return;
    }
    sim_cpu_nlist *l = &b->nlist;
    const sim_cpu_cull *c = &b->cull;
    sim_cpu_friction_rebuilt(b->fric); /* the springs were laid out for the old lists */
    const int grid = b->base.rank.world <= 1 && b->base.tuning.nlist_build != SIM_NLIST_BUILD_TILES;
    if (!grid || !sim_cpu_nlist_build_grid(l, &b->base.params, c->pos, b->base.nlist_skin)) {
        sim_cpu_nlist_build(l, c->tiles.v, c->tiles.count, b->base.config.tile, c->pos,
                            b->base.nlist_skin);
    }
    b->nlist_rebuild = 0;
    sim_list_count *x = &b->rec.list[SIM_LIST_NEIGHBOURS];
    sim_cpu_record(x, l->most, b->st.n > 1 ? b->st.n - 1u : 1u, flags);
    x->cap = l->cap;
    b->rec.nlist_rebuilds += (flags & SIM_STEP_RECORD) != 0;
}

sim_status sim_cpu_pairs_current(cpu_backend *b, sim_error *err) {
    sim_cpu_cull *c = &b->cull;
    sim_cpu_cull_gather(c, b->st.pos, b->st.vel);
    if (sim_backend_listing(&b->base)) {
        SIM_TRY(sim_cpu_nlist_ready(b, err));
    }
    SIM_TRY(sim_cpu_cull_pairs(b, 0u, err));
    if (sim_backend_listing(&b->base)) {
        sim_cpu_build_nlist(b, 0u);
    }
    return SIM_OK;
}
