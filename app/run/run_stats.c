/* SPDX-License-Identifier: MIT
 * nbsim — per-step kernel statistics and the run summary. */
#include "run_stats.h"

#include "output_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernel_names[APP_KERNEL_COUNT] = {"pair", "triplet", "integrate", "step"};

sim_status app_run_stats_add(app_run_stats *rs, const sim_frame_timing *t, sim_error *err) {
    if (rs->count == rs->capacity) {
        size_t cap = rs->capacity ? rs->capacity * 2 : 1024;
        for (int k = 0; k < APP_KERNEL_COUNT; ++k) {
            double *grown = realloc(rs->ms[k], cap * sizeof *grown);
            if (grown == NULL) {
                return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot grow timing statistics");
            }
            rs->ms[k] = grown;
        }
        rs->capacity = cap;
    }
    double steps = t->steps > 0 ? (double)t->steps : 1.0;
    rs->ms[APP_KERNEL_PAIR][rs->count] = t->pair_ms / steps;
    rs->ms[APP_KERNEL_TRIPLET][rs->count] = t->triplet_ms / steps;
    rs->ms[APP_KERNEL_INTEGRATE][rs->count] = t->integrate_ms / steps;
    rs->ms[APP_KERNEL_STEP][rs->count] = t->step_ms / steps;
    rs->count++;
    return SIM_OK;
}

app_stats app_run_stats_get(const app_run_stats *rs, app_kernel k) {
    return app_stats_of(rs->ms[k], rs->count);
}

void app_run_stats_free(app_run_stats *rs) {
    for (int k = 0; k < APP_KERNEL_COUNT; ++k) {
        free(rs->ms[k]);
        rs->ms[k] = NULL;
    }
    rs->count = rs->capacity = 0;
}

static double rate(uint64_t count, double ms) {
    return ms > 0.0 ? (double)count / (ms * 1e-3) : 0.0;
}

void app_run_stats_print(const app_run_stats *rs, const app_session *s, FILE *out) {
    fprintf(out, "%llu frames, per step: median / p95 / min / max [ms]\n",
            (unsigned long long)rs->count);
    for (int k = 0; k < APP_KERNEL_COUNT; ++k) {
        if (k == APP_KERNEL_TRIPLET && !s->params.triplets) {
            continue;
        }
        app_stats st = app_run_stats_get(rs, (app_kernel)k);
        fprintf(out, "  %-10s %10.4f %10.4f %10.4f %10.4f\n", kernel_names[k], st.median, st.p95,
                st.min, st.max);
    }
    app_stats pair = app_run_stats_get(rs, APP_KERNEL_PAIR);
    fprintf(out, "  unique pairs/s   %.4g  (%llu unique pairs per step, at the median)\n",
            rate(s->unique_pairs, pair.median), (unsigned long long)s->unique_pairs);
    if (s->params.triplets) {
        app_stats tri = app_run_stats_get(rs, APP_KERNEL_TRIPLET);
        fprintf(out, "  unique triples/s %.4g  (%llu unique triples per step, at the median)\n",
                rate(s->unique_triples, tri.median), (unsigned long long)s->unique_triples);
    }
}

sim_status app_run_stats_write_json(const app_run_stats *rs, const app_session *s, const char *path,
                                    int interrupted, sim_error *err) {
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    FILE *f = out.file;
    const sim_backend_config *c = sim_backend_get_config(s->backend);
    fprintf(f, "{\n  \"nbsim_version\": \"%s\",\n  \"frames\": %llu,\n  \"interrupted\": %s,\n",
            NBSIM_VERSION, (unsigned long long)rs->count, interrupted ? "true" : "false");
    fprintf(f, "  \"n\": %u,\n  \"backend\": \"%s\",\n  \"device\": \"", s->initial.n,
            c->kind == SIM_BACKEND_CUDA ? "cuda" : "cpu");
    for (const char *p = sim_backend_device_name(s->backend); *p; ++p) {
        fprintf(f, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
    }
    fprintf(f, "\",\n  \"pair_map\": \"%s\",\n  \"triplet_map\": \"%s\",\n  \"tile\": %u,\n",
            sim_pair_choice_name(c->pair_map),
            s->params.triplets ? sim_triplet_map_name(c->triplet_map) : "off", c->tile);
    fprintf(f, "  \"dt\": %.9g,\n  \"steps_per_frame\": %d,\n", s->params.dt,
            s->params.steps_per_frame);
    fprintf(f, "  \"unique_pairs_per_step\": %llu,\n  \"unique_triples_per_step\": %llu,\n",
            (unsigned long long)s->unique_pairs,
            (unsigned long long)(s->params.triplets ? s->unique_triples : 0));
    fprintf(f, "  \"ms_per_step\": {\n");
    for (int k = 0; k < APP_KERNEL_COUNT; ++k) {
        app_stats st = app_run_stats_get(rs, (app_kernel)k);
        fprintf(f,
                "    \"%s\": {\"median\": %.6g, \"p95\": %.6g, \"min\": %.6g, \"max\": %.6g}%s\n",
                kernel_names[k], st.median, st.p95, st.min, st.max,
                k + 1 < APP_KERNEL_COUNT ? "," : "");
    }
    app_stats pair = app_run_stats_get(rs, APP_KERNEL_PAIR);
    app_stats tri = app_run_stats_get(rs, APP_KERNEL_TRIPLET);
    fprintf(f, "  },\n  \"pairs_per_s\": %.6g,\n  \"triples_per_s\": %.6g\n}\n",
            rate(s->unique_pairs, pair.median),
            s->params.triplets ? rate(s->unique_triples, tri.median) : 0.0);
    return sim_output_commit(&out, err);
}
