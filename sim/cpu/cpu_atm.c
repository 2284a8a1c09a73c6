/* SPDX-License-Identifier: MIT
 * nbsim — the CPU reference's ATM cut-off (config.cull, triplets on, atm_cutoff > 0): the
 * TRIPLET_CULL phase and the sweep of its neighbour lists, over the sorted copies the cull phase
 * gathered (slot order; the sweep's buffers go back through the body order in cpu_backend.c).
 *
 * Lists (the default: sim_backend_atm_listing, a skin > 0 on one rank): half lists
 * of the cut-off R plus the contacts' skin s (nlist/atm_list.h), rebuilt when the stepper says
 * (SIM_STEP_REBUILD: a sort - their indices are slots -, new bodies or parameters, a rollback)
 * or when a body moved more than s/2 since the build (sim_cpu_atm_list_stale: NaN counts as
 * moved); between rebuilds every triple within R has its sides in the lists, and each is
 * evaluated once, as (i, max(j, k), min(j, k)), the slot order of the tile sweep (atm_list.h),
 * so the same triples give the same forces up to summation order. The lists grow in the build to
 * the most neighbours a body has: they never drop a triple and the stepper has nothing to grow.
 *
 * Periodic axes: the lists hold minimum-image neighbours (a wrapping cell grid), the sweep's and
 * sim_atm_forces_d's images agree (a and b minimum images, c closing the triangle), and a body
 * wrapped across a face has not moved.
 *
 * Tile triples (skin 0, several ranks): cpu_tcull.c's boxes and passes. */
#include "cpu/cpu_backend_impl.h"

#include "core/omp.h"

/* Slots per chunk of the lists' sweep: a chunk's triples vary with the density, so threads
 * take chunks as they finish (dynamic), and 64 keeps the scheduling cost below 1 %. */
#define CPU_ATM_CHUNK 64u

/* The lists rebuilt when asked or stale, and recorded. */
static sim_status atm_lists(cpu_backend *b, unsigned flags, sim_error *err) {
    if (!b->atm_ready) {
        SIM_TRY(sim_cpu_atm_list_init(&b->atm, b->st.n, err));
        b->atm_ready = 1;
    }
    /* minimum images on the periodic axes (the parameters may have changed them) */
    b->atm.per = b->ph.box.periodic ? &b->ph.box.period : NULL;
    sim_cpu_atm_list *l = &b->atm;
    const double cutoff = b->ph.atm.atm_cutoff, skin = b->base.nlist_skin;
    if (!(flags & SIM_STEP_REBUILD) && !sim_cpu_atm_list_stale(l, b->cull.pos, cutoff, skin)) {
        return SIM_OK;
    }
    SIM_TRY(sim_cpu_atm_list_build(l, b->cull.pos, cutoff, skin, err));
    if (flags & SIM_STEP_RECORD) {
        /* all = cap: the lists grew to what the build needed, nothing for the stepper to grow */
        sim_cpu_record(&b->rec.list[SIM_LIST_ATM_NEIGHBOURS], l->most, l->cap, flags);
        b->rec.atm_rebuilds++;
        b->rec.atm_entries = l->entries;
    }
    return SIM_OK;
}

/* The cut-off's tile triples from the sorted copies the cull phase gathered. */
static sim_status tile_triples(cpu_backend *b, unsigned flags, sim_error *err) {
    sim_cpu_tcull *c = &b->tcull;
    SIM_TRY(sim_cpu_tcull_build(c, &b->base, b->cull.pos, b->base.params.atm_cutoff, err));
    const unsigned unsorted = flags & ~(unsigned)SIM_STEP_SORTED;
    sim_cpu_record(&b->rec.list[SIM_LIST_TCULL_SUPERS], c->super_pairs.count,
                   sim_t2_u64(c->n_supers), unsorted);
    sim_cpu_record(&b->rec.list[SIM_LIST_TCULL_PAIRS], c->pairs.count, sim_t2_u64(c->n_tiles),
                   unsorted);
    sim_cpu_record(&b->rec.list[SIM_LIST_TCULL_TRIPLES], c->triples.count, sim_t3_u64(c->n_tiles),
                   flags);
    return SIM_OK;
}

sim_status sim_cpu_triplet_cull(sim_backend *base, unsigned flags, sim_error *err) {
    cpu_backend *b = sim_cpu_of(base);
    return sim_backend_atm_listing(base) ? atm_lists(b, flags, err) : tile_triples(b, flags, err);
}

double sim_cpu_atm_list_slice(cpu_backend *b, uint64_t begin, uint64_t end) {
    const sim_cpu_atm_list *l = &b->atm;
    const int64_t chunks = (int64_t)((end - begin + CPU_ATM_CHUNK - 1u) / CPU_ATM_CHUNK);
    double energy = 0.0;
    SIM_OMP(omp parallel num_threads(b->team) reduction(+ : energy)) {
        sim_vec3d *f = b->tbuf + (size_t)sim_cpu_thread_id() * b->st.n;
        SIM_OMP(omp for schedule(dynamic, 1))
        for (int64_t k = 0; k < chunks; ++k) {
            const uint64_t lo = begin + CPU_ATM_CHUNK * (uint64_t)k;
            const uint64_t hi = lo + CPU_ATM_CHUNK < end ? lo + CPU_ATM_CHUNK : end;
            (void)sim_cpu_atm_list_sweep(l, (uint32_t)lo, (uint32_t)hi, b->cull.pos, &b->ph, f,
                                         &energy);
        }
    }
    return energy;
}

double sim_cpu_atm_list_work(const cpu_backend *b) {
    /* a body of m neighbours pairs them m (m - 1) / 2 ways: about entries x (most / 2) */
    return b->atm_ready ? 0.5 * (double)b->atm.entries * (double)b->atm.most : 0.0;
}
