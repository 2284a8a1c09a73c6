/* SPDX-License-Identifier: MIT
 * nbsim — the live map comparison table: per-map samples, medians, quartiles, I, JSON. */
#include "nbsim/map_compare.h"

#include <stdlib.h>
#include <string.h>

void sim_map_compare_init(sim_map_compare *c, const sim_compare_key *key) {
    memset(c, 0, sizeof *c);
    c->key = *key;
}

int sim_map_compare_set_key(sim_map_compare *c, const sim_compare_key *key) {
    if (c->key.n == key->n && c->key.tile == key->tile && c->key.cull == key->cull) {
        return 0;
    }
    const uint64_t generation = c->generation + 1;
    sim_map_compare_init(c, key);
    c->generation = generation;
    return 1;
}

static sim_compare_series *series_of(sim_map_compare *c, int dim, int map) {
    if (dim == 2 && map >= 0 && map < SIM_PAIR_CHOICE_COUNT) {
        return &c->pair[map];
    }
    if (dim == 3 && map >= 0 && map < SIM_TRIPLET_MAP_COUNT) {
        return &c->triplet[map];
    }
    return NULL;
}

void sim_map_compare_add(sim_map_compare *c, int dim, int map, double ms_per_step) {
    sim_compare_series *s = series_of(c, dim, map);
    if (s == NULL || !(ms_per_step > 0.0)) {
        return; /* a phase that did not run (no time) says nothing about its map */
    }
    s->ms[s->next] = ms_per_step;
    s->next = (s->next + 1) % SIM_COMPARE_SAMPLES;
    s->count = s->count < SIM_COMPARE_SAMPLES ? s->count + 1 : s->count;
    s->frames++;
}

static int compare_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Value at fraction q of the sorted samples, linearly interpolated (q = 0.5: the median). */
static double quantile(const double *sorted, int count, double q) {
    const double at = q * (double)(count - 1);
    const int lo = (int)at;
    const int hi = lo + 1 < count ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - (double)lo);
}

static void fill_row(const sim_compare_series *s, sim_compare_row *r) {
    r->samples = s->count;
    r->median_ms = r->q1_ms = r->q3_ms = 0.0;
    if (s->count == 0) {
        return;
    }
    double sorted[SIM_COMPARE_SAMPLES];
    memcpy(sorted, s->ms, (size_t)s->count * sizeof sorted[0]);
    qsort(sorted, (size_t)s->count, sizeof sorted[0], compare_double);
    r->median_ms = quantile(sorted, s->count, 0.5);
    r->q1_ms = quantile(sorted, s->count, 0.25);
    r->q3_ms = quantile(sorted, s->count, 0.75);
}

int sim_map_compare_rows(const sim_map_compare *c, int dim, int include_full, sim_compare_row *rows,
                         int cap) {
    const int maps = dim == 2 ? SIM_PAIR_MAP_COUNT + (include_full ? 1 : 0) : SIM_TRIPLET_MAP_COUNT;
    int count = 0;
    for (int m = 0; m < maps && count < cap; ++m, ++count) {
        sim_compare_row *r = &rows[count];
        memset(r, 0, sizeof *r);
        r->dim = dim;
        r->map = m;
        if (dim == 2) {
            r->name = sim_pair_choice_name(m);
            r->paper_float = m < SIM_PAIR_MAP_COUNT && sim_pair_map_is_paper_float((sim_pair_map)m);
            fill_row(&c->pair[m], r);
        } else {
            r->name = sim_triplet_map_name((sim_triplet_map)m);
            r->paper_float = sim_triplet_map_is_paper_float((sim_triplet_map)m);
            fill_row(&c->triplet[m], r);
        }
    }
    /* bb is map 0 in both lists: I against it. */
    const double bb = count > 0 ? rows[0].median_ms : 0.0;
    for (int i = 0; i < count; ++i) {
        rows[i].ratio = bb > 0.0 && rows[i].median_ms > 0.0 ? bb / rows[i].median_ms : 0.0;
    }
    return count;
}

uint64_t sim_map_compare_frames(const sim_map_compare *c, int dim) {
    uint64_t frames = 0;
    const int maps = dim == 2 ? SIM_PAIR_CHOICE_COUNT : SIM_TRIPLET_MAP_COUNT;
    for (int m = 0; m < maps; ++m) {
        frames += dim == 2 ? c->pair[m].frames : c->triplet[m].frames;
    }
    return frames;
}

static void put_number(FILE *f, double x) {
    if (x > 0.0) {
        fprintf(f, "%.6g", x);
    } else {
        fputs("null", f);
    }
}

static void write_rows(const sim_map_compare *c, int dim, int include_full, FILE *f, int indent) {
    sim_compare_row rows[SIM_PAIR_CHOICE_COUNT + SIM_TRIPLET_MAP_COUNT];
    const int count =
        sim_map_compare_rows(c, dim, include_full, rows, (int)(sizeof rows / sizeof rows[0]));
    fputs("[", f);
    for (int i = 0; i < count; ++i) {
        const sim_compare_row *r = &rows[i];
        fprintf(f, "%s\n%*s{\"map\": \"%s\", \"paper_float\": %s, \"frames\": %d, \"median_ms\": ",
                i ? "," : "", indent + 2, "", r->name, r->paper_float ? "true" : "false",
                r->samples);
        put_number(f, r->median_ms);
        fputs(", \"q1_ms\": ", f);
        put_number(f, r->q1_ms);
        fputs(", \"q3_ms\": ", f);
        put_number(f, r->q3_ms);
        fputs(", \"I\": ", f);
        put_number(f, r->ratio);
        fputs("}", f);
    }
    fprintf(f, "\n%*s]", indent, "");
}

void sim_map_compare_write_json(const sim_map_compare *c, int include_full, FILE *f, int indent) {
    fprintf(f, "{\n%*s\"n\": %u,\n%*s\"tile\": %u,\n%*s\"cull\": %s,\n%*s\"pair\": ", indent + 2,
            "", c->key.n, indent + 2, "", c->key.tile, indent + 2, "",
            c->key.cull ? "true" : "false", indent + 2, "");
    write_rows(c, 2, include_full, f, indent + 2);
    fprintf(f, ",\n%*s\"triplet\": ", indent + 2, "");
    write_rows(c, 3, 0, f, indent + 2);
    fprintf(f, "\n%*s}", indent, "");
}
