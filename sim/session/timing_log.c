/* SPDX-License-Identifier: MIT
 * nbsim — the per-frame CSV timing log. */
#include "nbsim/timing_log.h"

#include "nbsim/run_stats.h"

#include <errno.h>
#include <string.h>

/* Interactions/s count unique pairs (N(N-1)/2) and triples (N(N-1)(N-2)/6) per step, so maps
 * and the symmetric/full kernels compare on the same work; pairs_per_s is left empty in a culled
 * frame, whose sweep tests only the pairs of the interacting tile pairs (candidate_tests). Every
 * phase of the step (SIM_FRAME_PHASE_LIST) is a column named after its sim_frame_timing field, and
 * the phases add up to step_ms; integrate_ms is drift_ms + kick_ms. New columns go at the end:
 * readers by position keep working. */
static const char header[] =
    "frame,sim_time,n,backend,gpu,pair_map,triplet_map,tile,steps,pair_ms,triplet_ms,"
    "integrate_ms,step_ms,unique_pairs,unique_triples,pairs_per_s,triples_per_s,pair_blocks,"
    "pair_blocks_wasted,triplet_blocks,triplet_blocks_wasted,kinetic,potential,total_energy,"
    "dump_ms,culled,sort_ms,cull_ms,tile_pairs,tile_pairs_total,triplet_cull_ms,tile_triples,"
    "tile_triples_total,gpus,comm_ms,mean_height,particle_steps_per_s,candidate_tests,contacts,"
    "atm_list_entries,atm_list_rebuilds,nlist_ms,cells_ms,atm_list_ms,drift_ms,kick_ms,inserted";

const char *sim_timing_log_header(void) {
    return header;
}

sim_status sim_timing_log_open(sim_timing_log *log, const char *path, sim_error *err) {
    memset(log, 0, sizeof *log);
    SIM_TRY(sim_output_open(&log->out, path, err));
    log->file = log->out.file;
    fprintf(log->file, "%s\n", header);
    fflush(log->file); /* a run killed outright leaves what it logged in the temporary */
    return SIM_OK;
}

/* CSV field: quoted when it holds a comma or quote (GPU names may). */
static void put_text(FILE *f, const char *text) {
    if (strpbrk(text, ",\"\n") == NULL) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *c = text; *c; ++c) {
        if (*c == '"') {
            fputc('"', f);
        }
        fputc(*c == '\n' ? ' ' : *c, f);
    }
    fputc('"', f);
}

static double per_second(uint64_t count, int steps, double ms) {
    return ms > 0.0 ? (double)count * steps / (ms * 1e-3) : 0.0;
}

sim_status sim_timing_log_row(sim_timing_log *log, const sim_run_info *s, const sim_frame_timing *t,
                              const sim_energy *e, const double *mean_height, sim_error *err) {
    const sim_backend_config *c = &s->config;
    FILE *f = log->file;
    int triplets = s->params.triplets;
    fprintf(f, "%llu,%.9g,%u,%s,", (unsigned long long)s->frame, s->sim_time, s->n, s->backend);
    put_text(f, s->device);
    fprintf(f, ",%s,%s,%u,%d,%.6f,%.6f,%.6f,%.6f,%llu,%llu,", sim_pair_choice_name(c->pair_map),
            triplets ? sim_triplet_map_name(c->triplet_map) : "off", c->tile, t->steps, t->pair_ms,
            t->triplet_ms, t->integrate_ms, t->step_ms, (unsigned long long)s->unique_pairs,
            (unsigned long long)(triplets ? s->unique_triples : 0));
    if (!t->culled) {
        fprintf(f, "%.6g", per_second(s->unique_pairs, t->steps, t->pair_ms));
    }
    fprintf(f, ",%.6g,%llu,%llu,%llu,%llu,",
            triplets ? per_second(s->unique_triples, t->steps, t->triplet_ms) : 0.0,
            (unsigned long long)t->pair_blocks, (unsigned long long)t->pair_blocks_wasted,
            (unsigned long long)t->triplet_blocks, (unsigned long long)t->triplet_blocks_wasted);
    if (e != NULL) {
        const double kinetic = e->kinetic + e->rotational; /* translation and spin */
        fprintf(f, "%.9g,%.9g,%.9g,", kinetic, e->total - kinetic, e->total);
    } else {
        fputs(",,,", f);
    }
    fprintf(f, "%.6f,%d,%.6f,%.6f,%llu,%llu,%.6f,%llu,%llu,%d,%.6f,", s->dump_ms, t->culled,
            t->sort_ms, t->cull_ms, (unsigned long long)t->tile_pairs,
            (unsigned long long)t->tile_pairs_total, t->triplet_cull_ms,
            (unsigned long long)t->tile_triples, (unsigned long long)t->tile_triples_total, s->gpus,
            t->comm_ms);
    if (mean_height != NULL) {
        fprintf(f, "%.9g", *mean_height);
    }
    fprintf(f, ",%.6g,", sim_particle_steps_per_s(s, t->steps > 0 ? t->step_ms / t->steps : 0.0));
    fprintf(f, "%llu,", (unsigned long long)t->candidate_tests);
    if (sim_frame_contacts_counted(t->culled)) {
        fprintf(f, "%llu", (unsigned long long)t->contacts);
    }
    /* The ATM cut-off over its neighbour lists (the default; triplet_cull_ms then times their
     * checks and rebuilds, tile_triples is 0): entries at the last build and the frame's
     * rebuilds; empty when it swept tile triples or had no cut-off. */
    fputc(',', f);
    if (t->atm_lists) {
        fprintf(f, "%llu,%d", (unsigned long long)t->atm_list_entries, t->atm_list_rebuilds);
    } else {
        fputc(',', f);
    }
    fprintf(f, ",%.6f,%.6f,%.6f,%.6f,%.6f,%llu\n", t->nlist_ms, t->cells_ms, t->atm_list_ms,
            t->drift_ms, t->kick_ms, (unsigned long long)s->inserted);
    /* Each row reaches the file as its frame ends (a write per frame, nothing next to a step):
     * a run killed with SIGKILL leaves its rows in the temporary (output_file.h). */
    fflush(f);
    log->rows++;
    if (ferror(f)) {
        return sim_fail(err, SIM_IO, "cannot write log '%s': %s", log->out.path, strerror(errno));
    }
    return SIM_OK;
}

sim_status sim_timing_log_close(sim_timing_log *log, sim_error *err) {
    if (log->file == NULL) {
        return SIM_OK;
    }
    log->file = NULL;
    return sim_output_commit(&log->out, err);
}

void sim_timing_log_abandon(sim_timing_log *log) {
    if (log->file != NULL) {
        log->file = NULL;
        sim_output_abort(&log->out);
    }
}
