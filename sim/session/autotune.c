/* SPDX-License-Identifier: MIT
 * nbsim — automatic choice of maps and tile size by a short calibration, with a per-GPU cache. */
#define _POSIX_C_SOURCE 200809L
#include "nbsim/autotune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "nbsim/internal/backend.h"
#include "nbsim/output_file.h"
#include "nbsim/stats.h"

/* Calibration budget [s] across all candidates; at least MIN_REPEATS steps each anyway. */
#define BUDGET_S 1.5
#define MIN_REPEATS 3
#define MAX_REPEATS 9
#define MAX_CAND 12
#define CACHE_MAX_LINES 256

void sim_device_slug(const char *name, char *out, size_t cap) {
    if (cap == 0) {
        return;
    }
    size_t len = 0;
    int dash = 0;
    for (const char *p = name ? name : ""; *p != '\0' && len + 1 < cap; ++p) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && len > 0 && len + 2 < cap) {
                out[len++] = '-';
            }
            out[len++] = c;
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[len] = '\0';
    if (len == 0) {
        snprintf(out, cap, "gpu");
    }
}

void sim_autotune_cache_path(char *out, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg != NULL && xdg[0] == '/') {
        snprintf(out, cap, "%s/nbsim/autotune.txt", xdg);
    } else if (home != NULL && home[0] != '\0') {
        snprintf(out, cap, "%s/.cache/nbsim/autotune.txt", home);
    } else {
        snprintf(out, cap, "%s", "");
    }
}

/* ---- the cache file: one entry per line ---------------------------------------------------- */

/* The date (a tenth field) came later: lines without it still parse. */
#define ENTRY_FORMAT "v1 %127s %u %u %u %u %31s %31s %lf %lf %15s"

static int parse_entry(const char *line, sim_autotune_entry *e) {
    memset(e, 0, sizeof *e);
    return sscanf(line, ENTRY_FORMAT, e->gpu, &e->bucket, &e->what, &e->tile_in, &e->tile, e->pair,
                  e->triplet, &e->pair_ms, &e->triplet_ms, e->date) >= 9;
}

static int same_key(const sim_autotune_entry *a, const sim_autotune_entry *b) {
    return strcmp(a->gpu, b->gpu) == 0 && a->bucket == b->bucket && a->what == b->what &&
           a->tile_in == b->tile_in;
}

int sim_autotune_cache_find(const char *path, const sim_autotune_entry *key,
                            sim_autotune_entry *found) {
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (f == NULL) {
        return 0;
    }
    char line[512];
    int hit = 0;
    sim_autotune_entry e;
    while (fgets(line, sizeof line, f) != NULL) {
        if (parse_entry(line, &e) && same_key(&e, key)) {
            *found = e; /* the newest (last) line of a key wins */
            hit = 1;
        }
    }
    fclose(f);
    return hit;
}

sim_status sim_autotune_cache_store(const char *path, const sim_autotune_entry *e, sim_error *err) {
    if (path[0] == '\0') {
        return sim_fail(err, SIM_IO, "no cache folder (neither XDG_CACHE_HOME nor HOME is set)");
    }
    char folder[SIM_PATH_MAX];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash != NULL && slash != folder) {
        *slash = '\0';
        SIM_TRY(sim_make_folders(folder, err));
    }
    /* Keep the other keys' newest lines (at most CACHE_MAX_LINES - 1), then this entry. */
    static char lines[CACHE_MAX_LINES][512];
    int count = 0;
    FILE *in = fopen(path, "r");
    if (in != NULL) {
        char line[512];
        sim_autotune_entry old;
        while (fgets(line, sizeof line, in) != NULL) {
            if (!parse_entry(line, &old) || same_key(&old, e)) {
                continue;
            }
            if (count == CACHE_MAX_LINES - 1) { /* drop the oldest */
                memmove(lines[0], lines[1], sizeof lines[0] * (size_t)(count - 1));
                --count;
            }
            snprintf(lines[count++], sizeof lines[0], "%s", line);
        }
        fclose(in);
    }
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    for (int i = 0; i < count; ++i) {
        fputs(lines[i], out.file);
    }
    char date[16] = "-";
    const time_t now = time(NULL);
    struct tm day;
    if (localtime_r(&now, &day) != NULL) {
        strftime(date, sizeof date, "%Y-%m-%d", &day);
    }
    fprintf(out.file, "v1 %s %u %u %u %u %s %s %.6g %.6g %s\n", e->gpu, e->bucket, e->what,
            e->tile_in, e->tile, e->pair, e->triplet, e->pair_ms, e->triplet_ms, date);
    return sim_output_commit(&out, err);
}

/* ---- calibration --------------------------------------------------------------------------- */

typedef struct {
    sim_pair_choice pair[MAX_CAND];
    int pair_count;
    int triplet[MAX_CAND];
    int triplet_count;
} candidates;

static void list_candidates(const sim_backend_config *c, unsigned what, candidates *k) {
    memset(k, 0, sizeof *k);
    if (what & SIM_AUTOTUNE_PAIR) {
        for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
            if (!sim_pair_map_is_paper_float((sim_pair_map)m)) {
                k->pair[k->pair_count++] = m;
            }
        }
        k->pair[k->pair_count++] = SIM_PAIR_FULL;
    } else {
        k->pair[k->pair_count++] = c->pair_map;
    }
    if (what & SIM_AUTOTUNE_TRIPLET) {
        for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
            if (!sim_triplet_map_is_paper_float((sim_triplet_map)m)) {
                k->triplet[k->triplet_count++] = m;
            }
        }
    } else {
        k->triplet[k->triplet_count++] = (int)c->triplet_map;
    }
}

typedef struct {
    double pair_ms[MAX_CAND], triplet_ms[MAX_CAND]; /* medians per candidate */
} tile_result;

/* Times every candidate at one tile size. Backend b runs pair candidate b % P and triplet
 * candidate b % T, so one step measures one of each; steps start from the same state. */
static sim_status time_tile(const sim_backend_config *base, const candidates *k, uint32_t tile,
                            const sim_params *params, const sim_state *initial, tile_result *out,
                            sim_error *err) {
    const int nb = k->pair_count > k->triplet_count ? k->pair_count : k->triplet_count;
    sim_backend *b[MAX_CAND] = {0};
    double pair_t[MAX_CAND][2 * MAX_REPEATS], trip_t[MAX_CAND][2 * MAX_REPEATS];
    int pair_n[MAX_CAND] = {0}, trip_n[MAX_CAND] = {0};
    sim_status st = SIM_OK;
    double warm_s = 0.0;
    for (int i = 0; i < nb && st == SIM_OK; ++i) {
        sim_backend_config c = *base;
        c.tile = tile;
        c.pair_map = k->pair[i % k->pair_count];
        c.triplet_map = (sim_triplet_map)k->triplet[i % k->triplet_count];
        st = sim_backend_create(&c, params, initial, &b[i], err);
        if (st == SIM_OK) { /* warm-up step, also sizes the repeats to the budget */
            sim_frame_timing t;
            const double t0 = sim_now_ms() * 1e-3;
            st = sim_backend_set_state(b[i], initial, err);
            st = st == SIM_OK ? sim_backend_run_frame(b[i], &t, err) : st;
            warm_s += sim_now_ms() * 1e-3 - t0;
        }
    }
    int repeats = warm_s > 0.0 ? (int)(BUDGET_S / 3.0 / warm_s) : MAX_REPEATS;
    repeats = repeats < MIN_REPEATS ? MIN_REPEATS : repeats > MAX_REPEATS ? MAX_REPEATS : repeats;
    for (int r = 0; r < repeats && st == SIM_OK; ++r) {
        for (int q = 0; q < nb && st == SIM_OK; ++q) {
            const int i = (q + r) % nb; /* rotated, like `nbsim bench` */
            sim_frame_timing t;
            st = sim_backend_set_state(b[i], initial, err);
            st = st == SIM_OK ? sim_backend_run_frame(b[i], &t, err) : st;
            if (st == SIM_OK) {
                const int p = i % k->pair_count, tr = i % k->triplet_count;
                if (pair_n[p] < 2 * MAX_REPEATS)
                    /* the whole contact phase: with culling, the map places the culling pass */
                    pair_t[p][pair_n[p]++] = t.sort_ms + t.cull_ms + t.pair_ms;
                if (trip_n[tr] < 2 * MAX_REPEATS)
                    trip_t[tr][trip_n[tr]++] = t.triplet_ms;
            }
        }
    }
    for (int i = 0; i < nb; ++i) {
        sim_backend_destroy(b[i]);
    }
    for (int p = 0; p < k->pair_count; ++p) {
        out->pair_ms[p] = sim_stats_of(pair_t[p], pair_n[p]).median;
    }
    for (int t = 0; t < k->triplet_count; ++t) {
        out->triplet_ms[t] = sim_stats_of(trip_t[t], trip_n[t]).median;
    }
    return st;
}

static unsigned log2_floor(uint32_t n) {
    unsigned r = 0;
    while (n >>= 1) {
        ++r;
    }
    return r;
}

static void apply(sim_backend_config *c, const sim_autotune_entry *e) {
    c->tile = e->tile;
    if (e->what & SIM_AUTOTUNE_PAIR) {
        const int m = sim_pair_choice_from_name(e->pair);
        c->pair_map = m >= 0 ? m : c->pair_map;
    }
    if (e->what & SIM_AUTOTUNE_TRIPLET) {
        const int m = sim_triplet_map_from_name(e->triplet);
        c->triplet_map = m >= 0 ? (sim_triplet_map)m : c->triplet_map;
    }
}

/* A cached entry is usable only if it names maps this build knows. */
static int entry_valid(const sim_autotune_entry *e) {
    const int tile_ok = e->tile == 32 || e->tile == 64 || e->tile == 128;
    const int pair_ok = !(e->what & SIM_AUTOTUNE_PAIR) || strcmp(e->pair, "full") == 0 ||
                        sim_pair_choice_from_name(e->pair) >= 0;
    const int trip_ok =
        !(e->what & SIM_AUTOTUNE_TRIPLET) || sim_triplet_map_from_name(e->triplet) >= 0;
    return tile_ok && pair_ok && trip_ok;
}

static void describe(const sim_autotune_entry *e, const char *gpu, uint32_t n, char *out,
                     size_t cap, const char *how) {
    char pair[80] = "", trip[80] = "";
    if (e->what & SIM_AUTOTUNE_PAIR) {
        snprintf(pair, sizeof pair, "pair map %s (%.3g ms/step), ", e->pair, e->pair_ms);
    }
    if (e->what & SIM_AUTOTUNE_TRIPLET) {
        snprintf(trip, sizeof trip, "triplet map %s (%.3g ms/step), ", e->triplet, e->triplet_ms);
    }
    snprintf(out, cap, "autotune: %s%stile %u%s for %s, N = %u (bucket 2^%u); %s", pair, trip,
             e->tile, (e->what & SIM_AUTOTUNE_TILE) ? "" : " (fixed)", gpu, n, e->bucket, how);
}

sim_status sim_autotune(sim_backend_config *config, unsigned what, const sim_params *params,
                        const sim_state *initial, char *report, size_t cap, sim_error *err) {
    SIM_ASSERT(config != NULL && params != NULL && initial != NULL);
    if (report != NULL && cap > 0) {
        report[0] = '\0';
    }
    char scratch[8];
    if (report == NULL || cap == 0) {
        report = scratch;
        cap = sizeof scratch;
    }
    const char *fresh = getenv("NBSIM_AUTOTUNE_FRESH");
    if (fresh != NULL && strcmp(fresh, "1") == 0) {
        what |= SIM_AUTOTUNE_FRESH;
    }
    if (!params->triplets) {
        what &= ~(unsigned)SIM_AUTOTUNE_TRIPLET; /* nothing to time: triplets are off */
    }
    if (!(what & (SIM_AUTOTUNE_PAIR | SIM_AUTOTUNE_TRIPLET))) {
        snprintf(report, cap,
                 "autotune: nothing to choose (triplet forces are off); keeping "
                 "the default maps");
        return SIM_OK;
    }
    sim_device_info dev;
    sim_error dev_err = {0};
    if (config->kind != SIM_BACKEND_CUDA || sim_cuda_device_count() == 0 ||
        sim_cuda_device_query(&dev, &dev_err) != SIM_OK) {
        snprintf(report, cap,
                 "autotune: needs the CUDA backend; keeping pair map %s and "
                 "triplet map %s",
                 sim_pair_choice_name(config->pair_map), sim_triplet_map_name(config->triplet_map));
        return SIM_OK;
    }
    sim_autotune_entry key;
    memset(&key, 0, sizeof key);
    sim_device_slug(dev.name, key.gpu, sizeof key.gpu);
    key.bucket = log2_floor(initial->n);
    key.what = what & (SIM_AUTOTUNE_PAIR | SIM_AUTOTUNE_TRIPLET | SIM_AUTOTUNE_TILE);
    key.what |= config->cull ? SIM_AUTOTUNE_CULLED : 0u;
    key.tile_in = (what & SIM_AUTOTUNE_TILE) ? 0u : config->tile;
    char path[1024];
    sim_autotune_cache_path(path, sizeof path);
    sim_autotune_entry hit;
    if (!(what & SIM_AUTOTUNE_FRESH) && sim_autotune_cache_find(path, &key, &hit) &&
        entry_valid(&hit)) {
        apply(config, &hit);
        char how[1200];
        snprintf(how, sizeof how,
                 "cached in %s (delete it or set NBSIM_AUTOTUNE_FRESH=1 to re-measure)", path);
        describe(&hit, dev.name, initial->n, report, cap, how);
        return SIM_OK;
    }

    candidates k;
    list_candidates(config, what, &k);
    sim_params p = *params;
    p.steps_per_frame = 1;
    p.triplets = (what & SIM_AUTOTUNE_TRIPLET) != 0; /* untuned triplets would only cost time */
    const uint32_t all_tiles[3] = {32, 64, 128};
    const int tile_count = (what & SIM_AUTOTUNE_TILE) ? 3 : 1;
    const double t0 = sim_now_ms() * 1e-3;
    double best_total = 1e300;
    sim_autotune_entry best = key;
    for (int t = 0; t < tile_count; ++t) {
        const uint32_t tile = (what & SIM_AUTOTUNE_TILE) ? all_tiles[t] : config->tile;
        tile_result r;
        SIM_TRY(time_tile(config, &k, tile, &p, initial, &r, err));
        int bp = 0, bt = 0;
        for (int i = 1; i < k.pair_count; ++i) {
            bp = r.pair_ms[i] < r.pair_ms[bp] ? i : bp;
        }
        for (int i = 1; i < k.triplet_count; ++i) {
            bt = r.triplet_ms[i] < r.triplet_ms[bt] ? i : bt;
        }
        /* Pair and triplet maps share the tile size: minimise their sum. */
        const double total = ((what & SIM_AUTOTUNE_PAIR) ? r.pair_ms[bp] : 0.0) +
                             ((what & SIM_AUTOTUNE_TRIPLET) ? r.triplet_ms[bt] : 0.0);
        if (total < best_total) {
            best_total = total;
            best.tile = tile;
            snprintf(best.pair, sizeof best.pair, "%s",
                     (what & SIM_AUTOTUNE_PAIR) ? sim_pair_choice_name(k.pair[bp]) : "-");
            snprintf(best.triplet, sizeof best.triplet, "%s",
                     (what & SIM_AUTOTUNE_TRIPLET)
                         ? sim_triplet_map_name((sim_triplet_map)k.triplet[bt])
                         : "-");
            best.pair_ms = r.pair_ms[bp];
            best.triplet_ms = r.triplet_ms[bt];
        }
    }
    apply(config, &best);
    sim_error cache_err = {0};
    char how[1400];
    if (sim_autotune_cache_store(path, &best, &cache_err) == SIM_OK) {
        snprintf(how, sizeof how, "measured in %.1f s, cached in %s", sim_now_ms() * 1e-3 - t0,
                 path);
    } else {
        snprintf(how, sizeof how, "measured in %.1f s (not cached: %s)", sim_now_ms() * 1e-3 - t0,
                 cache_err.message);
    }
    describe(&best, dev.name, initial->n, report, cap, how);
    return SIM_OK;
}

int sim_autotune_cached(sim_backend_config *config, int triplets, int tile_fixed, uint32_t n,
                        sim_autotune_entry *found) {
    sim_device_info dev;
    sim_error dev_err = {0};
    if (config->kind != SIM_BACKEND_CUDA || n == 0 || sim_cuda_device_count() == 0 ||
        sim_cuda_device_query(&dev, &dev_err) != SIM_OK) {
        return 0;
    }
    char path[1024];
    sim_autotune_cache_path(path, sizeof path);
    sim_autotune_entry key;
    memset(&key, 0, sizeof key);
    sim_device_slug(dev.name, key.gpu, sizeof key.gpu);
    key.bucket = log2_floor(n);
    key.tile_in = tile_fixed ? config->tile : 0u;
    /* What the autotuner stores for `--pair-map auto` (and `--triplet-map auto`), with and
     * without --tile; an entry that also chose the triplet map first when triplets run. */
    /* Tuned under the same culling mode: the map places different work with and without. */
    const unsigned tile =
        (tile_fixed ? 0u : SIM_AUTOTUNE_TILE) | (config->cull ? SIM_AUTOTUNE_CULLED : 0u);
    const unsigned both = SIM_AUTOTUNE_PAIR | SIM_AUTOTUNE_TRIPLET | tile;
    const unsigned tries[2] = {triplets ? both : SIM_AUTOTUNE_PAIR | tile,
                               triplets ? SIM_AUTOTUNE_PAIR | tile : both};
    for (int t = 0; t < 2; ++t) {
        key.what = tries[t];
        if (sim_autotune_cache_find(path, &key, found) && entry_valid(found)) {
            apply(config, found);
            return 1;
        }
    }
    return 0;
}
