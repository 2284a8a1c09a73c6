/* SPDX-License-Identifier: MIT
 * nbsim — the live map comparison: every frame's kernel times go to the map that ran them
 * (sim_map_compare, under the key N, tile, culling), the panel (B) shows each map's median, I =
 * t_bb / t_map and a bar, and the sweep (S) runs every map in turn, three rounds of a few
 * frames each, then gives the user's maps back. Keys keep working during a sweep; Esc cancels
 * it, M / T end it and switch from the user's maps. */
#include <stdio.h>
#include <string.h>

#include "nbsim/maps_check.h"
#include "nbsim/size_limits.h"
#include "text.h"
#include "viewer_internal.h"
#include "viewer_panel.h"

#define WARMUP_FRAMES 2 /* after a map change: plans, caches and clocks settle */
/* A sweep visits every map SWEEP_ROUNDS times in turn rather than once for long, so that a
 * scene that changes meanwhile (a falling pile culls ever fewer tile pairs) changes every map's
 * times alike. Each visit measures SWEEP_FRAMES frames, or at least SWEEP_MIN_FRAMES and
 * SWEEP_SECONDS, whichever comes first: about a second per map in all. */
#define SWEEP_ROUNDS 3
#define SWEEP_FRAMES 10
#define SWEEP_MIN_FRAMES 3
#define SWEEP_SECONDS 0.35
#define SWEEP_GIVE_UP 4 /* frames past warm-up without a sample (its phase is off): skip */
#define PAPER_CHECK_FULL (1ull << 22) /* exactness check of a paper map: in full up to here */

static const float note_color[4] = {1.0f, 0.95f, 0.45f, 1.0f};
static const float paper_color[4] = {1.0f, 0.68f, 0.30f, 1.0f};
static const float wrong_color[4] = {1.0f, 0.38f, 0.35f, 1.0f};
static const float good_color[4] = {0.45f, 0.88f, 0.50f, 1.0f};
static const float active_color[4] = {1.0f, 0.80f, 0.25f, 0.22f};
static const float bar_color[4] = {0.42f, 0.62f, 0.95f, 0.95f};
static const float track_color[4] = {1.0f, 1.0f, 1.0f, 0.07f};
static const float whisker_color[4] = {1.0f, 1.0f, 1.0f, 0.85f};

static sim_compare_key key_now(const viewer_state *v) {
    const sim_run_info *s = viewer_info(v);
    sim_compare_key k = {s->n, s->config.tile, viewer_cull(v)};
    return k;
}

static void forget_checks(viewer_compare *c) {
    for (int d = 0; d < 2; ++d) {
        for (int m = 0; m < SIM_PAIR_CHOICE_COUNT; ++m) {
            c->paper_exact[d][m] = -1;
        }
    }
}

void viewer_compare_init(viewer_state *v) {
    viewer_compare *c = &v->compare;
    const sim_compare_key key = key_now(v);
    sim_map_compare_init(&c->table, &key);
    c->last_pair = c->last_triplet = c->last_triplets_on = -1;
    forget_checks(c);
}

const sim_map_compare *viewer_compare_table(const viewer_state *v) {
    const sim_map_compare *t = &v->compare.table;
    return sim_map_compare_frames(t, 2) + sim_map_compare_frames(t, 3) > 0 ? t : NULL;
}

void viewer_compare_open(viewer_state *v) {
    if (!v->compare.opened_once) {
        v->compare.opened_once = 1;
        v->compare.show = 1;
    }
}

void viewer_compare_toggle(viewer_state *v) {
    v->compare.opened_once = 1;
    v->compare.show = !v->compare.show;
}

static const char *map_name(int dim, int map) {
    return dim == 2 ? sim_pair_choice_name(map) : sim_triplet_map_name((sim_triplet_map)map);
}

/* ---- the sweep ---- */

/* Switches to the sweep's current map; 0 when the session refused it. */
static int sweep_switch(viewer_state *v) {
    viewer_compare *c = &v->compare;
    const int dim = c->list_dim[c->list_pos], map = c->list_map[c->list_pos];
    sim_error err;
    sim_error_clear(&err);
    const sim_status st =
        dim == 2 ? sim_session_set_maps(v->run.session, map, c->saved_triplet, &err)
                 : sim_session_set_maps(v->run.session, c->saved_pair, (sim_triplet_map)map, &err);
    if (st != SIM_OK) {
        viewer_message(v, "sweep: %s map %s: %s", dim == 2 ? "pair" : "triplet", map_name(dim, map),
                       err.message);
        return 0;
    }
    char mark[RENDER_GRAPH_LABEL];
    snprintf(mark, sizeof mark, "%s: %s", dim == 2 ? "pair" : "triplet", map_name(dim, map));
    render_graph_mark(&v->graph, mark);
    c->measured_on_map = 0;
    c->frames_on_map = 0;
    c->map_started_s = viewer_now();
    return 1;
}

static void restore_maps(viewer_state *v) {
    viewer_compare *c = &v->compare;
    sim_error err;
    sim_error_clear(&err);
    if (sim_session_set_maps(v->run.session, c->saved_pair, c->saved_triplet, &err) != SIM_OK) {
        viewer_message(v, "cannot restore the maps: %s", err.message);
    }
    char mark[RENDER_GRAPH_LABEL];
    snprintf(mark, sizeof mark, "pair: %s", sim_pair_choice_name(c->saved_pair));
    render_graph_mark(&v->graph, mark);
}

/* Moves on from position pos (inclusive) of the current round to the first map the session
 * accepts, into the next round past the end of the list; list_pos == list_count when the last
 * round is done. */
static void sweep_goto(viewer_state *v, int pos) {
    viewer_compare *c = &v->compare;
    for (;;) {
        for (c->list_pos = pos; c->list_pos < c->list_count; ++c->list_pos) {
            if (sweep_switch(v)) {
                return;
            }
        }
        if (++c->round >= SWEEP_ROUNDS) {
            return;
        }
        pos = 0;
    }
}

/* The fastest measured map of dim (index into rows), or -1. */
static int fastest(const sim_compare_row *rows, int count) {
    int best = -1;
    for (int i = 0; i < count; ++i) {
        if (rows[i].samples > 0 && (best < 0 || rows[i].median_ms < rows[best].median_ms)) {
            best = i;
        }
    }
    return best;
}

static void sweep_finish(viewer_state *v) {
    viewer_compare *c = &v->compare;
    c->sweeping = 0;
    c->done_once = 1;
    restore_maps(v);
    sim_compare_row rows[SIM_PAIR_CHOICE_COUNT];
    const int cuda = viewer_info(v)->config.kind == SIM_BACKEND_CUDA;
    const int count = sim_map_compare_rows(&c->table, 2, cuda, rows, SIM_PAIR_CHOICE_COUNT);
    const int best = fastest(rows, count);
    if (best >= 0 && rows[best].ratio > 0.0) {
        viewer_message(v,
                       "sweep done: fastest pair map here %s, I = %.3f against bb; maps restored",
                       rows[best].name, rows[best].ratio);
    } else {
        viewer_message(v, "sweep done; maps restored");
    }
    if (c->exit_when_done) {
        v->quit = 1;
    }
}

void viewer_sweep_start(viewer_state *v) {
    viewer_compare *c = &v->compare;
    if (c->sweeping) {
        viewer_message(v, "a sweep is running (Esc cancels it)");
        return;
    }
    const sim_run_info *s = viewer_info(v);
    c->list_count = 0;
    const int pairs =
        s->config.kind == SIM_BACKEND_CUDA ? SIM_PAIR_CHOICE_COUNT : SIM_PAIR_MAP_COUNT;
    for (int m = 0; m < pairs; ++m) {
        c->list_dim[c->list_count] = 2;
        c->list_map[c->list_count++] = m;
    }
    for (int m = 0; s->params.triplets && m < SIM_TRIPLET_MAP_COUNT; ++m) {
        c->list_dim[c->list_count] = 3;
        c->list_map[c->list_count++] = m;
    }
    c->saved_pair = s->config.pair_map;
    c->saved_triplet = s->config.triplet_map;
    c->round = 0;
    c->sweeping = 1;
    c->show = 1;
    c->opened_once = 1;
    if (!v->inset.show) {
        viewer_inset_toggle(v); /* watch each map's picture while it is timed */
    }
    if (v->paused) {
        viewer_message(v, "sweep: paused - Space resumes the simulation and the sweep");
    }
    sweep_goto(v, 0);
    if (c->list_pos >= c->list_count) {
        sweep_finish(v);
    }
}

int viewer_sweep_cancel(viewer_state *v, const char *why) {
    viewer_compare *c = &v->compare;
    if (!c->sweeping) {
        return 0;
    }
    c->sweeping = 0;
    restore_maps(v);
    viewer_message(v, "sweep cancelled (%s); the maps are as before", why);
    if (c->exit_when_done) {
        v->quit = 1;
    }
    return 1;
}

static void sweep_advance(viewer_state *v) {
    viewer_compare *c = &v->compare;
    const double on_map = viewer_now() - c->map_started_s;
    const int enough = c->measured_on_map >= SWEEP_FRAMES ||
                       (c->measured_on_map >= SWEEP_MIN_FRAMES && on_map >= SWEEP_SECONDS);
    const int hopeless =
        c->measured_on_map == 0 && c->frames_on_map > WARMUP_FRAMES + SWEEP_GIVE_UP;
    if (!enough && !hopeless) {
        return;
    }
    sweep_goto(v, c->list_pos + 1);
    if (c->list_pos >= c->list_count) {
        sweep_finish(v);
    }
}

/* What a pair map costs in a frame: the contact kernel it places; with culled contacts the
 * culling pass it places and the contact sweep over that pass's list; with neighbour lists the
 * pass runs when they are rebuilt, and their build from its list counts too (the re-sorts are
 * the same for every map and stay out). */
static double pair_phase_ms(const sim_frame_timing *t) {
    return t->pair_ms + (t->culled ? t->cull_ms + t->nlist_ms : 0.0);
}

void viewer_compare_frame(viewer_state *v, const sim_frame_timing *t) {
    viewer_compare *c = &v->compare;
    const sim_run_info *s = viewer_info(v);
    const sim_compare_key key = key_now(v);
    if (sim_map_compare_set_key(&c->table, &key)) {
        forget_checks(c);
        if (sim_map_compare_frames(&c->table, 2) == 0 && c->show) {
            viewer_message(v, "map comparison cleared: N, tile or culling changed");
        }
    }
    const int pair = s->config.pair_map, triplet = (int)s->config.triplet_map;
    const int on = s->params.triplets;
    if (pair != c->last_pair || triplet != c->last_triplet || on != c->last_triplets_on) {
        c->warm = 0;
        c->last_pair = pair;
        c->last_triplet = triplet;
        c->last_triplets_on = on;
    }
    const double steps = t->steps > 0 ? (double)t->steps : 1.0;
    if (c->warm >= WARMUP_FRAMES) {
        sim_map_compare_add(&c->table, 2, pair, pair_phase_ms(t) / steps);
        if (on) {
            sim_map_compare_add(&c->table, 3, triplet, t->triplet_ms / steps);
        }
        if (c->sweeping) {
            const int dim = c->list_dim[c->list_pos];
            c->measured_on_map += dim == 2 || on;
        }
    }
    c->warm++;
    if (c->sweeping) {
        c->frames_on_map++;
        sweep_advance(v);
    }
}

/* ---- the panel ---- */

/* Paper float maps: does this map place every block right at the current n? Checked once per
 * key (a full coverage check up to PAPER_CHECK_FULL blocks, else the sampled one). */
/* The side of the domain a pair map places blocks on: tiles, or with culling the groups of the
 * culling pass (items / 16 per side); what the paper float maps' exactness depends on. */
static uint32_t pair_domain(const viewer_state *v, const char **unit) {
    const sim_run_info *s = viewer_info(v);
    sim_cull_info cull;
    sim_session_cull_info(v->run.session, &cull);
    if (cull.active) {
        *unit = cull.levels == 1 ? "culling groups of 16 tiles" : "culling groups of super-tiles";
        return viewer_tiles(cull.items, sim_cull_group_size());
    }
    *unit = "tiles";
    return viewer_tiles(s->n, s->config.tile);
}

static int paper_exact(viewer_state *v, int dim, int map) {
    int *known = &v->compare.paper_exact[dim - 2][map];
    if (*known >= 0) {
        return *known;
    }
    const sim_run_info *s = viewer_info(v);
    const char *unit;
    sim_map_plan plan;
    sim_error err;
    sim_map_check_result res;
    *known = 1;
    const sim_status st =
        dim == 2 ? sim_pair_map_plan((sim_pair_map)map, pair_domain(v, &unit), &plan, &err)
                 : sim_triplet_map_plan((sim_triplet_map)map, viewer_tiles(s->n, SIM_TRIPLET_TILE),
                                        &plan, &err);
    if (st == SIM_OK && sim_map_check(&plan, PAPER_CHECK_FULL, &res, &err) == SIM_OK) {
        *known = res.exact;
    }
    return *known;
}

/* Draws (d != NULL) or measures text; returns its width. */
static void format_ms(char *out, size_t cap, double ms) {
    if (ms <= 0.0) {
        snprintf(out, cap, "-");
    } else if (ms < 1.0) {
        snprintf(out, cap, "%.4f", ms);
    } else if (ms < 100.0) {
        snprintf(out, cap, "%.3f", ms);
    } else {
        snprintf(out, cap, "%.1f", ms);
    }
}

typedef struct {
    viewer_panel t;
    float col[4]; /* x offsets of: ms, I, frames, bar (from x) */
    float bar_w;
} panel_layout;

/* One dimension's table: header, a row per map, bars scaled to the slowest. */
static void table(viewer_state *v, panel_layout *p, int dim, int active, int *any_paper,
                  int *any_wrong) {
    const int cuda = viewer_info(v)->config.kind == SIM_BACKEND_CUDA;
    sim_compare_row rows[SIM_PAIR_CHOICE_COUNT + SIM_TRIPLET_MAP_COUNT];
    const int count = sim_map_compare_rows(&v->compare.table, dim, dim == 2 && cuda, rows,
                                           (int)(sizeof rows / sizeof rows[0]));
    double slowest = 0.0;
    for (int i = 0; i < count; ++i) {
        slowest = rows[i].q3_ms > slowest ? rows[i].q3_ms : slowest;
    }
    const int best = fastest(rows, count);
    const float s = p->t.scale;
    static const char *const heads[5] = {"map", "ms/step", "I = bb/map", "frames", ""};
    for (int c = 0; c < 4; ++c) {
        viewer_panel_put(&p->t, p->t.x + (c == 0 ? 0.0f : p->col[c - 1]), p->t.y,
                         viewer_panel_faint, heads[c]);
    }
    p->t.y += p->t.line;
    for (int i = 0; i < count; ++i) {
        const sim_compare_row *r = &rows[i];
        const int wrong = r->paper_float && !paper_exact(v, dim, r->map);
        *any_paper |= r->paper_float;
        *any_wrong |= wrong;
        if (p->t.d != NULL && r->map == active) {
            render_draw2d_rect(p->t.d, p->t.x - 4.0f * s, p->t.y - 1.5f * s,
                               p->col[3] + p->bar_w + 8.0f * s, p->t.line, active_color);
        }
        char name[48], ms[24], ratio[24], frames[24];
        const int unculled = dim == 2 && r->map == SIM_PAIR_FULL && v->compare.table.key.cull;
        snprintf(name, sizeof name, "%s %s%s", r->map == active ? ">" : " ", r->name,
                 wrong            ? " *!"
                 : r->paper_float ? " *"
                 : unculled       ? " (no cull)"
                                  : "");
        format_ms(ms, sizeof ms, r->median_ms);
        if (r->ratio > 0.0) {
            snprintf(ratio, sizeof ratio, "%.3f", r->ratio);
        } else {
            snprintf(ratio, sizeof ratio, "-");
        }
        snprintf(frames, sizeof frames, "%d", r->samples);
        const float *name_color = wrong            ? wrong_color
                                  : r->paper_float ? paper_color
                                                   : viewer_panel_text;
        viewer_panel_put(&p->t, p->t.x, p->t.y, r->map == active ? viewer_panel_head : name_color,
                         name);
        viewer_panel_put(&p->t, p->t.x + p->col[0], p->t.y,
                         i == best ? good_color : viewer_panel_text, ms);
        const float *ratio_color = r->ratio > 1.005                     ? good_color
                                   : r->ratio > 0.0 && r->ratio < 0.995 ? wrong_color
                                                                        : viewer_panel_text;
        viewer_panel_put(&p->t, p->t.x + p->col[1], p->t.y, ratio_color, ratio);
        viewer_panel_put(&p->t, p->t.x + p->col[2], p->t.y, viewer_panel_faint, frames);
        if (p->t.d != NULL) {
            const float bx = p->t.x + p->col[3], by = p->t.y + 1.0f * s, bh = p->t.line - 5.0f * s;
            render_draw2d_rect(p->t.d, bx, by, p->bar_w, bh, track_color);
            if (r->samples > 0 && slowest > 0.0) {
                const float scale_x = p->bar_w / (float)slowest;
                const float *fill = i == best        ? good_color
                                    : wrong          ? wrong_color
                                    : r->paper_float ? paper_color
                                                     : bar_color;
                render_draw2d_rect(p->t.d, bx, by, (float)r->median_ms * scale_x, bh, fill);
                /* The quartiles: how much of a difference the noise could make. */
                const float q1 = bx + (float)r->q1_ms * scale_x,
                            q3 = bx + (float)r->q3_ms * scale_x;
                const float my = by + 0.5f * bh;
                render_draw2d_rect(p->t.d, q1, my - 0.5f * s, q3 - q1 + 1.0f, 1.0f * s,
                                   whisker_color);
                render_draw2d_rect(p->t.d, q1, by, 1.0f * s, bh, whisker_color);
                render_draw2d_rect(p->t.d, q3, by, 1.0f * s, bh, whisker_color);
            }
        }
        p->t.y += p->t.line;
    }
    const float w = p->col[3] + p->bar_w;
    p->t.width = w > p->t.width ? w : p->t.width;
    if (best >= 0 && rows[best].ratio > 0.0 && rows[0].samples > 0 && best != 0) {
        char text[160];
        /* Overlapping quartiles: the ranking could be the noise's. */
        const int noise = rows[best].q3_ms >= rows[0].q1_ms;
        snprintf(text, sizeof text, "fastest here: %s, %.1f %% less time per step than bb%s",
                 rows[best].name, 100.0 * (1.0 - 1.0 / rows[best].ratio),
                 noise ? " - within the noise" : "");
        viewer_panel_line(&p->t, noise ? viewer_panel_text : good_color, text);
    } else if (best == 0) {
        viewer_panel_line(&p->t, viewer_panel_text, "fastest here: bb (the bounding box)");
    }
}

static void layout(viewer_state *v, panel_layout *p) {
    const sim_run_info *s = viewer_info(v);
    viewer_compare *c = &v->compare;
    char text[256];
    const float sc = p->t.scale;
    /* Columns sized for the longest names and numbers. */
    const float name_w = render_text_width("> full (no cull)", sc);
    const float gap = 14.0f * sc;
    p->col[0] = name_w + gap;
    p->col[1] = p->col[0] + render_text_width("ms/step000", sc) + gap;
    p->col[2] = p->col[1] + render_text_width("I = bb/map", sc) + gap;
    p->col[3] = p->col[2] + render_text_width("frames0", sc) + gap;
    p->bar_w = 150.0f * sc;

    snprintf(text, sizeof text, "Map comparison   N %u   tile %u   culling %s", s->n,
             s->config.tile, c->table.key.cull ? "on" : "off");
    viewer_panel_line(&p->t, viewer_panel_head, text);
    viewer_panel_line(&p->t, viewer_panel_faint,
                      "median kernel time per step, this session; bar: time, | |: quartiles");
    int any_paper = 0, any_wrong = 0;
    p->t.y += 0.3f * p->t.line;
    viewer_panel_line(&p->t, viewer_panel_head,
                      !c->table.key.cull ? "pair kernel: contacts over every tile pair"
                      : v->timing.nlist && v->timing.nlist_direct
                          ? "pair phase: contacts swept from cells (no map, no lists): the "
                            "maps differ by noise"
                      : v->timing.nlist && v->timing.nlist_cells
                          ? "pair phase: lists from cells (no map) + contacts: the maps "
                            "differ by noise"
                      : v->timing.nlist
                          ? "pair phase: culling pass (placed by the map, when the "
                            "neighbour lists are rebuilt) + lists + contacts"
                          : "pair phase: culling pass (placed by the map) + contacts");
    table(v, p, 2, s->config.pair_map, &any_paper, &any_wrong);
    if (s->params.triplets || sim_map_compare_frames(&c->table, 3) > 0) {
        p->t.y += 0.3f * p->t.line;
        viewer_panel_line(&p->t, viewer_panel_head,
                          s->params.triplets ? "triplet kernel (ATM)"
                                             : "triplet kernel (ATM; now off)");
        table(v, p, 3, s->params.triplets ? (int)s->config.triplet_map : -1, &any_paper,
              &any_wrong);
    }
    p->t.y += 0.3f * p->t.line;
    if (any_paper) {
        viewer_panel_line(&p->t, paper_color, "* the papers' float variant, kept for study");
    }
    if (any_wrong) {
        const char *unit;
        const uint32_t n = pair_domain(v, &unit);
        snprintf(text, sizeof text, "*! places blocks wrongly at this size (pairs: %u %s per side)",
                 n, unit);
        viewer_panel_line(&p->t, wrong_color, text);
    }
    if (c->sweeping) {
        const int dim = c->list_dim[c->list_pos];
        snprintf(text, sizeof text, "sweep, round %d of %d: %s map %s (%d of %d), %d/%d frames%s",
                 c->round + 1, SWEEP_ROUNDS, dim == 2 ? "pair" : "triplet",
                 map_name(dim, c->list_map[c->list_pos]), c->list_pos + 1, c->list_count,
                 c->measured_on_map, SWEEP_FRAMES, v->paused ? " (paused)" : "");
        viewer_panel_line(&p->t, note_color, text);
        snprintf(text, sizeof text, "Esc cancels the sweep");
        viewer_panel_line(&p->t, note_color, text);
    } else {
        viewer_panel_line(&p->t, viewer_panel_faint,
                          "S: time every map   M / T: switch by hand   B: hide");
    }
}

void viewer_compare_measure(viewer_state *v, float scale, float *w, float *h) {
    panel_layout p;
    memset(&p, 0, sizeof p);
    viewer_panel_begin(&p.t, NULL, 0.0f, 0.0f, scale);
    layout(v, &p);
    viewer_panel_size(&p.t, w, h);
}

void viewer_compare_draw(viewer_state *v, float x, float y, float scale) {
    float w, h;
    viewer_compare_measure(v, scale, &w, &h);
    viewer_panel_background(&v->d2, x, y, w, h);
    panel_layout p;
    memset(&p, 0, sizeof p);
    viewer_panel_begin(&p.t, &v->d2, x, y, scale);
    layout(v, &p);
}

void viewer_compare_print(const viewer_state *v, FILE *out) {
    const sim_map_compare *t = viewer_compare_table(v);
    if (t == NULL) {
        return;
    }
    const int cuda = viewer_info(v)->config.kind == SIM_BACKEND_CUDA;
    fprintf(out,
            "map comparison (N = %u, tile %u, culling %s): median ms/step, I = t_bb / t_map, "
            "frames\n",
            t->key.n, t->key.tile, t->key.cull ? "on" : "off");
    for (int dim = 2; dim <= 3; ++dim) {
        sim_compare_row rows[SIM_PAIR_CHOICE_COUNT + SIM_TRIPLET_MAP_COUNT];
        const int count = sim_map_compare_rows(t, dim, dim == 2 && cuda, rows,
                                               (int)(sizeof rows / sizeof rows[0]));
        for (int i = 0; i < count; ++i) {
            if (rows[i].samples == 0) {
                continue;
            }
            char ratio[16] = "     -";
            if (rows[i].ratio > 0.0) {
                snprintf(ratio, sizeof ratio, "%6.3f", rows[i].ratio);
            }
            fprintf(out, "  %-8s %-12s %10.4f  %s  %4d%s\n", dim == 2 ? "pair" : "triplet",
                    rows[i].name, rows[i].median_ms, ratio, rows[i].samples,
                    rows[i].paper_float ? "  (paper float variant)" : "");
        }
    }
}
