/* SPDX-License-Identifier: MIT
 * nbsim — per-step kernel statistics and the run summary. */
#include "nbsim/run_stats.h"

#include "nbsim/output_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernel_names[SIM_RUN_KERNEL_COUNT] = {
#define SIM_RUN_KERNEL_NAME(id, field, name, includes) name,
    SIM_RUN_KERNEL_LIST(SIM_RUN_KERNEL_NAME)
#undef SIM_RUN_KERNEL_NAME
};

static const char *const kernel_includes[SIM_RUN_KERNEL_COUNT] = {
#define SIM_RUN_KERNEL_INCLUDES(id, field, name, includes) includes,
    SIM_RUN_KERNEL_LIST(SIM_RUN_KERNEL_INCLUDES)
#undef SIM_RUN_KERNEL_INCLUDES
};

int sim_frame_contacts_counted(int culled) {
    return culled;
}

static const char *const phase_fields[] = {
#define SIM_PHASE_FIELD_NAME(id, field, name, includes) #field,
    SIM_FRAME_PHASE_LIST(SIM_PHASE_FIELD_NAME)
#undef SIM_PHASE_FIELD_NAME
};

int sim_frame_phase_count(void) {
    return (int)(sizeof phase_fields / sizeof phase_fields[0]);
}

const char *sim_frame_phase_field(int i) {
    return i >= 0 && i < sim_frame_phase_count() ? phase_fields[i] : NULL;
}

double sim_particle_steps_per_s(const sim_run_info *s, double step_ms) {
    return step_ms > 0.0 ? (double)s->n / (step_ms * 1e-3) : 0.0;
}

sim_status sim_run_stats_add(sim_run_stats *rs, const sim_frame_timing *t, sim_error *err) {
    if (rs->count == rs->capacity) {
        size_t cap = rs->capacity ? rs->capacity * 2 : 1024;
        for (int k = 0; k < SIM_RUN_KERNEL_COUNT; ++k) {
            double *grown = realloc(rs->ms[k], cap * sizeof *grown);
            if (grown == NULL) {
                return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot grow timing statistics");
            }
            rs->ms[k] = grown;
        }
        for (int c = 0; c < SIM_RUN_COUNT_COUNT; ++c) {
            double *grown = realloc(rs->counts[c], cap * sizeof *grown);
            if (grown == NULL) {
                return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot grow timing statistics");
            }
            rs->counts[c] = grown;
        }
        rs->capacity = cap;
    }
    double steps = t->steps > 0 ? (double)t->steps : 1.0;
#define SIM_RUN_KERNEL_STORE(id, field, name, includes)                                            \
    rs->ms[SIM_RUN_KERNEL_##id][rs->count] = t->field / steps;                                     \
    rs->total_ms[SIM_RUN_KERNEL_##id] += t->field;
    SIM_RUN_KERNEL_LIST(SIM_RUN_KERNEL_STORE)
#undef SIM_RUN_KERNEL_STORE
#define SIM_RUN_COUNT_STORE(id, name, expr)                                                        \
    rs->counts[SIM_RUN_COUNT_##id][rs->count] = (double)(expr);
    SIM_RUN_COUNT_LIST(SIM_RUN_COUNT_STORE)
#undef SIM_RUN_COUNT_STORE
    rs->culled |= t->culled;
    rs->triplet_culled |= t->triplet_culled;
    if (t->atm_lists) {
        rs->atm_lists = 1;
        rs->atm_steps += (uint64_t)(t->steps > 0 ? t->steps : 0);
        rs->atm_rebuilds += (uint64_t)t->atm_list_rebuilds;
        rs->atm_entries = t->atm_list_entries;
    }
    rs->total_steps += (uint64_t)steps;
    rs->count++;
    return SIM_OK;
}

double sim_run_stats_mean(const sim_run_stats *rs, sim_run_kernel k) {
    return rs->total_steps > 0 ? rs->total_ms[k] / (double)rs->total_steps : 0.0;
}

sim_stats sim_run_stats_get(const sim_run_stats *rs, sim_run_kernel k) {
    return sim_stats_of(rs->ms[k], rs->count);
}

sim_stats sim_run_stats_count(const sim_run_stats *rs, sim_run_count c) {
    return sim_stats_of(rs->counts[c], rs->count);
}

void sim_run_stats_free(sim_run_stats *rs) {
    for (int k = 0; k < SIM_RUN_KERNEL_COUNT; ++k) {
        free(rs->ms[k]);
        rs->ms[k] = NULL;
    }
    for (int c = 0; c < SIM_RUN_COUNT_COUNT; ++c) {
        free(rs->counts[c]);
        rs->counts[c] = NULL;
    }
    rs->count = rs->capacity = 0;
    memset(rs->total_ms, 0, sizeof rs->total_ms);
    rs->total_steps = 0;
}

static double rate(uint64_t count, double ms) {
    return ms > 0.0 ? (double)count / (ms * 1e-3) : 0.0;
}

/* Whether the summary shows kernel k's row: a phase that took time in the run (a phase that did
 * not run was never marked, and is 0), the contact sweep, the sums and the step; the sum of the
 * contact phase when culled. */
static int shown(const sim_run_stats *rs, int k) {
    switch (k) {
    case SIM_RUN_KERNEL_PAIR:
    case SIM_RUN_KERNEL_INTEGRATE:
    case SIM_RUN_KERNEL_STEP:
        return 1;
    case SIM_RUN_KERNEL_CONTACT:
        return rs->culled;
    default:
        return rs->total_ms[k] > 0.0;
    }
}

void sim_run_stats_print(const sim_run_stats *rs, const sim_run_info *s, FILE *out) {
    fprintf(out, "%llu frame%s, per step: median / p95 / min / max / mean [ms]%s%s\n",
            (unsigned long long)rs->count, rs->count == 1 ? "" : "s",
            s->gpus <= 1              ? ""
            : s->config.multi.space ? " (rank 0's; comm: the halos, migration and cuts)"
                                    : " (slowest rank; comm: the all-reduce)",
            s->config.phase_timing == SIM_PHASE_TIMING_SAMPLED &&
                    s->config.kind == SIM_BACKEND_CUDA && s->params.steps_per_frame > 1
                ? "; phases timed on sampled steps (one in ten) and re-sorts, the others' time "
                  "spread in their proportions (--phase-times every: all)"
                : "");
    for (int k = 0; k < SIM_RUN_KERNEL_COUNT; ++k) {
        if (!shown(rs, k)) {
            continue;
        }
        sim_stats st = sim_run_stats_get(rs, (sim_run_kernel)k);
        fprintf(out, "  %-12s %10.4f %10.4f %10.4f %10.4f %10.4f   %s\n", kernel_names[k],
                st.median, st.p95, st.min, st.max, sim_run_stats_mean(rs, (sim_run_kernel)k),
                kernel_includes[k]);
    }
    const sim_stats step = sim_run_stats_get(rs, SIM_RUN_KERNEL_STEP);
    fprintf(out, "  particle steps/s %.4g  (N x steps/s over the whole step, at the median)\n",
            sim_particle_steps_per_s(s, step.median));
    /* Culled, the contact sweep tests a few pairs of N(N-1)/2: a rate of unique pairs would be
     * one of pairs never tested. */
    if (!rs->culled) {
        const sim_stats pair = sim_run_stats_get(rs, SIM_RUN_KERNEL_PAIR);
        fprintf(out,
                "  unique pairs/s   %.4g  (%llu unique pairs per step over the contact sweep, at "
                "the median)\n",
                rate(s->unique_pairs, pair.median), (unsigned long long)s->unique_pairs);
    }
    if (s->decomposition != NULL && s->decomposition[0]) {
        fprintf(out, "  ranks            %s\n", s->decomposition);
    }
    if (s->insertion != NULL && s->insertion[0]) {
        fprintf(out, "  insertion        %s\n", s->insertion);
    }
    const sim_stats tests = sim_run_stats_count(rs, SIM_RUN_COUNT_CANDIDATES);
    const sim_stats touching = sim_run_stats_count(rs, SIM_RUN_COUNT_CONTACTS);
    fprintf(out, "  pair tests       %.17g per step, %.4g per body  (%s, at the median)\n",
            tests.median, s->n > 0 ? tests.median / s->n : 0.0,
            rs->culled ? "what the culled sweep tested: tile pairs or neighbour-list entries"
                       : "every tile pair of the plan, tile x tile each");
    if (sim_frame_contacts_counted(rs->culled)) {
        fprintf(out, "  contacts         %.17g per step  (pairs that touch, at the median)\n",
                touching.median);
    } else {
        fprintf(out, "  contacts         n/a  (the brute-force sweep does not count them)\n");
    }
    if (s->params.triplets) {
        sim_stats tri = sim_run_stats_get(rs, SIM_RUN_KERNEL_TRIPLET);
        fprintf(out, "  unique triples/s %.4g  (%llu unique triples per step, at the median%s)\n",
                rate(s->unique_triples, tri.median), (unsigned long long)s->unique_triples,
                rs->triplet_culled ? "; culled by the cut-off: effective, the ATM kernel alone"
                                   : "");
    }
    if (s->memory.count > 0) { /* the GPU's memory by part, as the backend allocated it */
        fprintf(out, "  GPU memory       %.1f bytes a body, %.2f GB (", s->memory.per_body,
                (double)s->memory.need * 1e-9);
        for (int k = 0; k < s->memory.count; ++k) {
            fprintf(out, "%s%s %.1f", k ? "; " : "", s->memory.part[k].name,
                    s->memory.part[k].per_body);
        }
        fprintf(out, ")\n");
    }
    if (rs->atm_lists) {
        fprintf(out,
                "  ATM lists        %llu entries, %.4g per body; rebuilt %llu times in %llu steps  "
                "(the cut-off's neighbour lists of R + skin, at the last build)\n",
                (unsigned long long)rs->atm_entries,
                s->n > 0 ? (double)rs->atm_entries / s->n : 0.0,
                (unsigned long long)rs->atm_rebuilds, (unsigned long long)rs->atm_steps);
    }
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_json_string(FILE *f, const char *text) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

sim_status sim_run_stats_write_json(const sim_run_stats *rs, const sim_run_info *s,
                                    const sim_run_end *end, const char *path, sim_error *err) {
    return sim_run_stats_write_json_maps(rs, s, end, NULL, path, err);
}

sim_status sim_run_stats_write_json_maps(const sim_run_stats *rs, const sim_run_info *s,
                                         const sim_run_end *end, const sim_map_compare *maps,
                                         const char *path, sim_error *err) {
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    FILE *f = out.file;
    const sim_backend_config *c = &s->config;
    fprintf(f, "{\n  \"nbsim_version\": \"%s\",\n  \"scene\": ", NBSIM_VERSION);
    put_json_string(f, s->scene);
    fprintf(f, ",\n  \"seed\": ");
    if (end->seed_used) {
        fprintf(f, "%llu", (unsigned long long)end->seed);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"n\": %u,\n  \"frames_requested\": ", s->n);
    if (end->frames_requested > 0) {
        fprintf(f, "%ld", end->frames_requested);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"frames\": %llu,\n  \"stop\": ", (unsigned long long)rs->count);
    put_json_string(f, end->stop);
    fprintf(f, ",\n  \"stop_frame\": ");
    if (end->stop_frame > 0) {
        fprintf(f, "%llu", (unsigned long long)end->stop_frame);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"stop_detail\": ");
    put_json_string(f, end->detail);
    fprintf(f, ",\n  \"interrupted\": %s,\n  \"wall_s\": %.6g,\n",
            strcmp(end->stop, "interrupted") == 0 ? "true" : "false", end->wall_s);
    fprintf(f, "  \"backend\": \"%s\",\n  \"gpus\": %d,\n  \"device\": ", s->backend, s->gpus);
    put_json_string(f, s->device);
    if (s->decomposition != NULL && s->decomposition[0]) {
        fprintf(f, ",\n  \"ranks\": ");
        put_json_string(f, s->decomposition);
    }
    if (s->insertion != NULL && s->insertion[0]) {
        fprintf(f, ",\n  \"inserted\": %llu,\n  \"insertion\": ", (unsigned long long)s->inserted);
        put_json_string(f, s->insertion);
    }
    fprintf(f, ",\n  \"pair_map\": \"%s\",\n  \"triplet_map\": \"%s\",\n  \"tile\": %u,\n",
            sim_pair_choice_name(c->pair_map),
            s->params.triplets ? sim_triplet_map_name(c->triplet_map) : "off", c->tile);
    fprintf(f, "  \"dt\": %.9g,\n  \"steps_per_frame\": %d,\n  \"phase_times\": \"%s\",\n",
            s->params.dt, s->params.steps_per_frame, sim_phase_timing_name(c->phase_timing));
    fprintf(f, "  \"unique_pairs_per_step\": %llu,\n  \"unique_triples_per_step\": %llu,\n",
            (unsigned long long)s->unique_pairs,
            (unsigned long long)(s->params.triplets ? s->unique_triples : 0));
    if (rs->count == 0) { /* nothing completed: no times to summarise */
        fprintf(f, "  \"ms_per_step\": null,\n  \"particle_steps_per_s\": null,\n"
                   "  \"candidate_tests_per_step\": null,\n  \"candidate_tests_per_body\": null,\n"
                   "  \"contacts_per_step\": null,\n  \"pairs_per_s\": null,\n"
                   "  \"triples_per_s\": null\n}\n");
        return sim_output_commit(&out, err);
    }
    fprintf(f, "  \"ms_per_step\": {\n");
    for (int k = 0; k < SIM_RUN_KERNEL_COUNT; ++k) {
        sim_stats st = sim_run_stats_get(rs, (sim_run_kernel)k);
        fprintf(f,
                "    \"%s\": {\"median\": %.6g, \"p95\": %.6g, \"min\": %.6g, \"max\": %.6g, "
                "\"mean\": %.6g}%s\n",
                kernel_names[k], st.median, st.p95, st.min, st.max,
                sim_run_stats_mean(rs, (sim_run_kernel)k),
                k + 1 < SIM_RUN_KERNEL_COUNT ? "," : "");
    }
    fprintf(f, "  },\n  \"ms_per_step_includes\": {\n");
    for (int k = 0; k < SIM_RUN_KERNEL_COUNT; ++k) {
        fprintf(f, "    \"%s\": ", kernel_names[k]);
        put_json_string(f, kernel_includes[k]);
        fputs(k + 1 < SIM_RUN_KERNEL_COUNT ? ",\n" : "\n", f);
    }
    const sim_stats pair = sim_run_stats_get(rs, SIM_RUN_KERNEL_PAIR);
    const sim_stats tri = sim_run_stats_get(rs, SIM_RUN_KERNEL_TRIPLET);
    const sim_stats step = sim_run_stats_get(rs, SIM_RUN_KERNEL_STEP);
    const sim_stats tests = sim_run_stats_count(rs, SIM_RUN_COUNT_CANDIDATES);
    const sim_stats touching = sim_run_stats_count(rs, SIM_RUN_COUNT_CONTACTS);
    fprintf(f, "  },\n  \"culled\": %s,\n  \"triplet_culled\": %s,\n",
            rs->culled ? "true" : "false", rs->triplet_culled ? "true" : "false");
    if (rs->atm_lists) {
        fprintf(f, "  \"atm_lists\": {\"entries\": %llu, \"rebuilds\": %llu, \"steps\": %llu},\n",
                (unsigned long long)rs->atm_entries, (unsigned long long)rs->atm_rebuilds,
                (unsigned long long)rs->atm_steps);
    } else {
        fputs("  \"atm_lists\": null,\n", f);
    }
    fprintf(f, "  \"particle_steps_per_s\": %.6g,\n", sim_particle_steps_per_s(s, step.median));
    fprintf(f, "  \"step_estimate_ms\": %.6g,\n", s->step_estimate_ms); /* before the first step */
    if (s->memory.count > 0) {
        fprintf(f, "  \"gpu_memory\": {\"bytes\": %llu, \"bytes_per_body\": %.6g, \"parts\": {",
                (unsigned long long)s->memory.need, s->memory.per_body);
        for (int k = 0; k < s->memory.count; ++k) {
            fprintf(f, "%s", k ? ", " : "");
            put_json_string(f, s->memory.part[k].name);
            fprintf(f, ": %.6g", s->memory.part[k].per_body);
        }
        fputs("}},\n", f);
    } else {
        fputs("  \"gpu_memory\": null,\n", f);
    }
    fprintf(f, "  \"candidate_tests_per_step\": %.17g,\n  \"candidate_tests_per_body\": %.6g,\n",
            tests.median, s->n > 0 ? tests.median / s->n : 0.0);
    if (sim_frame_contacts_counted(rs->culled)) {
        fprintf(f, "  \"contacts_per_step\": %.17g,\n", touching.median);
    } else {
        fputs("  \"contacts_per_step\": null,\n", f);
    }
    if (rs->culled) { /* no rate of pairs that were never tested */
        fputs("  \"pairs_per_s\": null,\n", f);
    } else {
        fprintf(f, "  \"pairs_per_s\": %.6g,\n", rate(s->unique_pairs, pair.median));
    }
    fprintf(f, "  \"triples_per_s\": %.6g",
            s->params.triplets ? rate(s->unique_triples, tri.median) : 0.0);
    if (maps != NULL) {
        fputs(",\n  \"map_comparison\": ", f);
        sim_map_compare_write_json(maps, c->kind == SIM_BACKEND_CUDA, f, 2);
    }
    fputs("\n}\n", f);
    return sim_output_commit(&out, err);
}
