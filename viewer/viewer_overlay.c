/* SPDX-License-Identifier: MIT
 * nbsim — what the overlay says: frame rate, bodies, backend, how positions reach GL, active
 * maps and their block counts, kernel and render times, particle steps/s and interactions/s,
 * pair tests and contacts per step, colour legend, the timing graph, messages, the help panel;
 * and the window title's headline numbers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "text.h"
#include "viewer_internal.h"
#include "viewer_keys.h"

#define OVERLAY_MAX_LINES 24

static const float panel_color[4] = {0.04f, 0.05f, 0.07f, 0.70f};
static const float text_color[4] = {0.88f, 0.90f, 0.94f, 1.0f};
static const float head_color[4] = {1.0f, 1.0f, 1.0f, 1.0f};
static const float warn_color[4] = {1.0f, 0.72f, 0.30f, 1.0f};
static const float note_color[4] = {1.0f, 0.95f, 0.45f, 1.0f};
static const float faint_color[4] = {0.70f, 0.74f, 0.82f, 1.0f};

/* The panel's lines. Consecutive lines marked `table` are laid out as one table (cells split
 * at two or more spaces), so the map rows line up in the proportional font. */
typedef struct {
    char text[OVERLAY_MAX_LINES][200];
    const float *color[OVERLAY_MAX_LINES];
    int table[OVERLAY_MAX_LINES];
    int count;
} overlay_lines;

static void add_line(overlay_lines *l, const float *color, int table, const char *fmt, va_list ap) {
    if (l->count >= OVERLAY_MAX_LINES) {
        return;
    }
    vsnprintf(l->text[l->count], sizeof l->text[l->count], fmt, ap);
    l->color[l->count] = color;
    l->table[l->count++] = table;
}

static void add(overlay_lines *l, const float *color, const char *fmt, ...) SIM_PRINTF(3, 4);
static void add(overlay_lines *l, const float *color, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_line(l, color, 0, fmt, ap);
    va_end(ap);
}

static void add_row(overlay_lines *l, const char *fmt, ...) SIM_PRINTF(2, 3);
static void add_row(overlay_lines *l, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_line(l, text_color, 1, fmt, ap);
    va_end(ap);
}

/* 1234567 -> "1,234,567" (into a small rotating pool, so several fit in one printf). */
static const char *grouped(uint64_t x) {
    static char pool[8][32];
    static int next;
    char *out = pool[next++ % 8];
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)x);
    int o = 0;
    for (int i = 0; i < n; ++i) {
        if (i > 0 && (n - i) % 3 == 0) {
            out[o++] = ',';
        }
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

/* Glyphs twice as large from 1080 lines up (projectors, full-HD screens). */
static float text_scale(const viewer_state *v) {
    return v->window.fb_height >= 1000 ? 2.0f : 1.0f;
}

static const char *color_name(viewer_color_mode m) {
    return m == VIEWER_COLOR_SPEED    ? "speed"
           : m == VIEWER_COLOR_RADIUS ? "radius"
           : m == VIEWER_COLOR_SPIN   ? "angular speed"
                                      : "body index";
}

static void block_row(overlay_lines *l, const char *what, const char *name, const char *label,
                      uint64_t blocks, uint64_t wasted) {
    double pct = blocks > 0 ? 100.0 * (double)wasted / (double)blocks : 0.0;
    add_row(l, "%s  %s  %s  %s blocks/step  %s wasted (%.1f%%)", what, name, label, grouped(blocks),
            grouped(wasted), pct);
}

static void build_lines(viewer_state *v, overlay_lines *l) {
    const sim_run_info *s = viewer_info(v);
    const sim_backend_config *c = &s->config;
    const sim_frame_timing *t = &v->timing;
    const viewer_smoothed *m = &v->smooth;
    add(l, head_color, "nbsim  %.1f fps  %.2f ms/frame%s%s", v->fps,
        v->fps > 0.0 ? 1e3 / v->fps : 0.0, v->paused ? "   [PAUSED]" : "",
        v->sim_failed ? "  [STOPPED - R resets]" : "");
    char axes[8];
    add(l, text_color, "N %s   scene %s   backend %s: %s%s%s", grouped(s->n), s->scene,
        c->kind == SIM_BACKEND_CUDA ? "CUDA" : "CPU", s->device,
        s->params.periodic ? "   periodic " : "",
        s->params.periodic ? sim_periodic_text(s->params.periodic, "", axes, sizeof axes) : "");
    add(l, v->bodies.interop ? text_color : warn_color, "positions: %s", v->bodies.mode);
    if (v->draw_every > 1) {
        add(l, warn_color, "drawing %s of %s bodies: one in %u (--draw-max)",
            grouped(v->bodies.count), grouped(s->n), v->draw_every);
    } else {
        add(l, text_color, "drawing all %s bodies", grouped(s->n));
    }
    add(l, text_color, "GL: %s", v->window.gl_renderer);
    if (t->culled && t->nlist && t->nlist_cells) { /* lists from cells: no pass the map places */
        add_row(l, "pair map  %s  %s  not used: the neighbour lists are built from a cell grid",
                sim_pair_choice_name(c->pair_map), sim_pair_choice_label(c->pair_map));
    } else if (t->culled) { /* the map places the culling pass; the contacts sweep its list */
        block_row(l, "pair map", sim_pair_choice_name(c->pair_map),
                  sim_pair_choice_label(c->pair_map), t->cull_blocks, t->cull_blocks_wasted);
    } else {
        block_row(l, "pair map", sim_pair_choice_name(c->pair_map),
                  sim_pair_choice_label(c->pair_map), t->pair_blocks, t->pair_blocks_wasted);
    }
    if (s->params.triplets && t->atm_lists) { /* no map places the lists' sweep (a body each) */
        add_row(l, "triplet map  %s  %s  not used: the cut-off sweeps its neighbour lists",
                sim_triplet_map_name(c->triplet_map), sim_triplet_map_label(c->triplet_map));
    } else if (s->params.triplets) {
        block_row(l, "triplet map", sim_triplet_map_name(c->triplet_map),
                  sim_triplet_map_label(c->triplet_map), t->triplet_blocks,
                  t->triplet_blocks_wasted);
    } else {
        add_row(l, "triplet map  %s  %s  off (A turns triplet forces on)",
                sim_triplet_map_name(c->triplet_map), sim_triplet_map_label(c->triplet_map));
    }
    int paper =
        (c->pair_map != SIM_PAIR_FULL && sim_pair_map_is_paper_float((sim_pair_map)c->pair_map)) ||
        (s->params.triplets && sim_triplet_map_is_paper_float(c->triplet_map));
    if (paper) {
        add(l, warn_color, "paper float variant active: kept for study, wrong for large n");
    }
    const char *render_clock = v->gpu_timer.last_ms >= 0.0 ? "GPU" : "host";
    if (v->have_timing) {
        /* phases measured on some of the frame's steps (--phase-times sampled), the rest spread */
        char sampled[48] = "";
        if (t->phase_steps > 0 && t->phase_steps < t->steps) {
            snprintf(sampled, sizeof sampled, "   phases of %d of %d steps", t->phase_steps,
                     t->steps);
        }
        /* every phase that ran, so the line adds up to the step */
        char phases[256] = "";
        size_t at = 0;
        static const char *const phase_names[SIM_FRAME_PHASE_COUNT] = {
#define PHASE_NAME(id, field, name, what) name,
            SIM_FRAME_PHASE_LIST(PHASE_NAME)
#undef PHASE_NAME
        };
        for (int p = 0; p < SIM_FRAME_PHASE_COUNT && at < sizeof phases; ++p) {
            if (m->phase_ms[p] > 0.0005 || p == SIM_FRAME_PHASE_PAIR) {
                at += (size_t)snprintf(phases + at, sizeof phases - at, "%s%s %.3f",
                                       at > 0 ? " + " : "", phase_names[p], m->phase_ms[p]);
            }
        }
        add(l, text_color, "ms/step: %s = step %.3f   render %.3f (%s)%s", phases, m->step_ms,
            m->render_ms, render_clock, sampled);
        if (t->culled) {
            const double share = t->tile_pairs_total > 0
                                     ? 100.0 * (double)t->tile_pairs / (double)t->tile_pairs_total
                                     : 0.0;
            if (t->nlist && t->nlist_cells) {
                add(l, text_color, "culling: bodies sorted, binned in cells   sort %.3f ms/step   "
                    "(K: off)", m->sort_ms);
            } else {
                add(l, text_color,
                    "culling (%d level%s): %s of %s tile pairs interact (%.2f %%)   sort %.3f  "
                    "cull %.3f ms/step   (K: off)",
                    t->cull_levels, t->cull_levels == 1 ? "" : "s", grouped(t->tile_pairs),
                    grouped(t->tile_pairs_total), share, m->sort_ms, m->cull_ms);
            }
            if (t->nlist && t->nlist_direct) { /* no lists: the cells swept at every step */
                add(l, text_color,
                    "contacts swept from the cells, no lists (they would rebuild %d of %d steps, "
                    "skin %.3g m): cells placed %.3f ms/step, %.1f B/body",
                    t->nlist_rebuilds, t->steps, t->skin, m->nlist_ms,
                    s->n > 0 ? (double)t->nlist_bytes / (double)s->n : 0.0);
            } else if (t->nlist) { /* the neighbour lists: how often rebuilt, their memory */
                add(l, t->nlist_fallback_steps || t->nlist_capped ? warn_color : text_color,
                    "neighbour lists (from %s): %.3f ms/step, skin %.3g m, rebuilt %d of %d steps, "
                    "%.1f B/body (%u of %u entries at most)%s",
                    t->nlist_cells ? "cells" : "tile pairs", m->nlist_ms, t->skin,
                    t->nlist_rebuilds, t->steps,
                    s->n > 0 ? (double)t->nlist_bytes / (double)s->n : 0.0, t->nlist_peak,
                    t->nlist_cap,
                    !t->nlist_fallback_steps ? ""
                    : t->nlist_cells         ? "   overflowed: cells swept"
                                             : "   overflowed: tile pairs swept");
            }
        } else {
            add(l, faint_color, "%s",
                c->pair_map == SIM_PAIR_FULL ? "culling: none for full (a brute-force sweep)"
                : c->cull                    ? "culling: not this frame"
                                             : "culling off: every tile pair is swept   (K: on)");
        }
        if (t->triplet_culled) { /* the ATM cut-off: its neighbour lists, or its tile triples */
            const float *color =
                t->triplet_fallback_steps || t->triplet_cull_capped ? warn_color : text_color;
            if (t->atm_lists) {
                add(l, color,
                    "ATM lists: skin %.3g m, rebuilt %d of %d steps, %.1f B/body (%u of %u "
                    "entries at most)   checks + builds %.3f ms/step%s",
                    t->skin, t->atm_list_rebuilds, t->steps,
                    s->n > 0 ? (double)t->atm_list_bytes / (double)s->n : 0.0, t->atm_list_peak,
                    t->atm_list_cap, m->triplet_cull_ms,
                    t->triplet_fallback_steps ? "   overflowed: found from the tiles" : "");
            } else {
                add(l, color, "ATM cut-off: %s of %s tile triples swept   cull %.3f ms/step%s",
                    grouped(t->tile_triples), grouped(t->tile_triples_total), m->triplet_cull_ms,
                    t->triplet_fallback_steps ? "   overflowed: swept from the boxes" : "");
            }
        }
        /* Unique pairs/s only for the brute-force sweep: culled, most pairs are never tested. */
        char rates[160];
        int len = snprintf(rates, sizeof rates, "particle steps/s %.3g",
                           sim_particle_steps_per_s(s, m->step_ms));
        if (!t->culled && m->pair_ms > 0.0) {
            len += snprintf(rates + len, sizeof rates - (size_t)len, "   unique pairs/s %.3g",
                            (double)s->unique_pairs / (m->pair_ms * 1e-3));
        }
        if (s->params.triplets && m->triplet_ms > 0.0) {
            snprintf(rates + len, sizeof rates - (size_t)len, "   unique triples/s %.3g",
                     (double)s->unique_triples / (m->triplet_ms * 1e-3));
        }
        add(l, text_color, "%s", rates);
        char tests[64] = "n/a", touching[32] = "n/a";
        snprintf(tests, sizeof tests, "%s (%.3g per body)", grouped(t->candidate_tests),
                 s->n > 0 ? (double)t->candidate_tests / s->n : 0.0);
        if (sim_frame_contacts_counted(t->culled)) {
            snprintf(touching, sizeof touching, "%s", grouped(t->contacts));
        }
        add(l, text_color, "pair tests/step %s   contacts/step %s", tests, touching);
    } else {
        add(l, text_color, "render %.3f ms (%s)   no frame simulated yet", m->render_ms,
            render_clock);
    }
    add(l, faint_color, "maps and tile: %s", s->maps_source);
    char pace[160];
    viewer_pace_describe(v, pace, sizeof pace);
    add(l, text_color, "%s", pace);
    add(l, text_color, "dt %.3g s   t %.4g s   %.3g s simulated per second   frame %s",
        s->params.dt, s->sim_time, v->pace.valid ? v->pace.sim_rate : 0.0, grouped(s->frame));
    if (s->params.friction > 0.0 || s->params.rolling_friction > 0.0) {
        add(l, text_color, "friction mu %g   rolling mu_r %g   (X: off)", s->params.friction,
            s->params.rolling_friction);
    } else {
        add(l, faint_color, "friction off   (X: on)");
    }
    if (v->run.log.file != NULL) {
        add(l, note_color, "recording log: %s (%s frame%s)  L stops", v->run.log.out.path,
            grouped(v->run.log.rows), v->run.log.rows == 1 ? "" : "s");
    }
    if (s->dump_path[0] != '\0') {
        add(l, note_color, "recording trajectory: %s  D stops", s->dump_path);
    }
}

/* The colour legend: a bar through the active colormap with its range. */
static float draw_legend(viewer_state *v, float x, float y, float scale) {
    char text[128];
    const render_autorange *r = &v->range[v->color_mode];
    if (v->color_mode == VIEWER_COLOR_INDEX) {
        snprintf(text, sizeof text, "colour (C): body index 0 .. %u", viewer_info(v)->n - 1);
    } else {
        snprintf(text, sizeof text, "colour (C): %s %.3g .. %.3g%s", color_name(v->color_mode),
                 r->lo, r->hi,
                 v->color_mode == VIEWER_COLOR_SPEED  ? " m/s"
                 : v->color_mode == VIEWER_COLOR_SPIN ? " rad/s"
                                                      : " m");
    }
    float w = render_text_draw(&v->d2, x, y, scale, text_color, text);
    render_colormap map =
        v->color_mode == VIEWER_COLOR_INDEX ? RENDER_COLORMAP_TURBO : RENDER_COLORMAP_VIRIDIS;
    float bx = x + w + 8.0f * scale, bw = 160.0f * scale, bh = 8.0f * scale;
    const int steps = 32;
    /* The index colouring uses the middle 90 % of turbo (spheres.vert); so does its bar. */
    float t0 = map == RENDER_COLORMAP_TURBO ? 0.05f : 0.0f, span = 1.0f - 2.0f * t0;
    for (int i = 0; i < steps; ++i) {
        float c0[4] = {0, 0, 0, 1}, c1[4] = {0, 0, 0, 1};
        render_colormap_eval(map, t0 + span * (float)i / steps, c0);
        render_colormap_eval(map, t0 + span * (float)(i + 1) / steps, c1);
        float x0 = bx + bw * (float)i / steps, x1 = bx + bw * (float)(i + 1) / steps;
        const float xy[4][2] = {{x0, y}, {x1, y}, {x1, y + bh}, {x0, y + bh}};
        float col[4][4];
        memcpy(col[0], c0, sizeof col[0]);
        memcpy(col[1], c1, sizeof col[1]);
        memcpy(col[2], c1, sizeof col[2]);
        memcpy(col[3], c0, sizeof col[3]);
        render_draw2d_quad(&v->d2, xy, (const float(*)[4])col);
    }
    return bx + bw - x;
}

/* Draws (or with d == NULL only measures) lines [from, to) of one table group or one line;
 * returns the width [px]. */
static float draw_group(render_draw2d *d, const overlay_lines *l, int from, int to, float x,
                        float y, float scale) {
    if (!l->table[from]) {
        if (d != NULL) {
            render_text_draw(d, x, y, scale, l->color[from], l->text[from]);
        }
        return render_text_width(l->text[from], scale);
    }
    char joined[OVERLAY_MAX_LINES * 201];
    joined[0] = '\0';
    for (int i = from; i < to; ++i) {
        strcat(joined, l->text[i]);
        strcat(joined, "\n");
    }
    float w = 0.0f;
    render_text_columns(d, x, y, scale, l->color[from], joined, &w, NULL);
    return w;
}

static int group_end(const overlay_lines *l, int from) {
    int to = from + 1;
    while (l->table[from] && to < l->count && l->table[to]) {
        ++to;
    }
    return to;
}

/* Draws the status panel at the top left (draw == 0: only measures); returns its width [px]. */
static float draw_panel(viewer_state *v, float scale, int draw) {
    overlay_lines lines;
    lines.count = 0;
    build_lines(v, &lines);
    float pad = 6.0f * scale, line_h = RENDER_TEXT_LINE * scale;
    float width = 330.0f * scale; /* at least the colour legend */
    for (int i = 0; i < lines.count; i = group_end(&lines, i)) {
        float w = draw_group(NULL, &lines, i, group_end(&lines, i), 0.0f, 0.0f, scale);
        width = w > width ? w : width;
    }
    if (!draw) {
        return width + 2.0f * pad;
    }
    float height = line_h * (float)(lines.count + 1) + 2.0f * pad;
    float x = 10.0f, y = 10.0f;
    render_draw2d_rect(&v->d2, x, y, width + 2.0f * pad, height, panel_color);
    for (int i = 0; i < lines.count; i = group_end(&lines, i)) {
        draw_group(&v->d2, &lines, i, group_end(&lines, i), x + pad, y + pad + line_h * (float)i,
                   scale);
    }
    draw_legend(v, x + pad, y + pad + line_h * (float)lines.count, scale);
    return width + 2.0f * pad;
}

static void draw_help(viewer_state *v, float scale) {
    const char *text = VIEWER_KEYS_HELP;
    float pad = 10.0f * scale, w = 0.0f, h = 0.0f;
    render_text_columns(NULL, 0.0f, 0.0f, scale, head_color, text, &w, &h);
    float x = ((float)v->window.fb_width - w) * 0.5f - pad;
    float y = ((float)v->window.fb_height - h) * 0.5f - pad;
    const float help_panel[4] = {0.03f, 0.04f, 0.06f, 0.88f};
    render_draw2d_rect(&v->d2, x, y, w + 2.0f * pad, h + 2.0f * pad, help_panel);
    render_text_columns(&v->d2, x + pad, y + pad, scale, head_color, text, NULL, NULL);
}

/* A message above the graph (or the bottom edge) while it is fresh, wrapped to the window's
 * width (a warning is often longer than one line of it). */
static void draw_message(viewer_state *v, float scale, float bottom) {
    if (v->message[0] == '\0' || viewer_now() > v->message_until) {
        return;
    }
    float pad = 5.0f * scale, line_h = RENDER_TEXT_LINE * scale;
    char text[sizeof v->message];
    const float room = (float)v->window.fb_width - 20.0f - 2.0f * pad;
    const int lines = render_text_wrap(v->message, scale, room, text, sizeof text);
    float w = render_text_width(text, scale), h = (float)lines * line_h;
    float y = bottom - h - 2.0f * pad - 6.0f;
    render_draw2d_rect(&v->d2, 10.0f, y, w + 2.0f * pad, h + 2.0f * pad, panel_color);
    render_text_draw(&v->d2, 10.0f + pad, y + pad, scale, note_color, text);
}

/* The right-hand column: the map comparison (top) and the map inset (bottom), as large as
 * the window allows beside the status panel (they are read from the back of a room). */
typedef struct {
    float scale;
    float cw, ch, iw, ih; /* comparison and inset sizes [px]; 0 when hidden */
    float room;           /* height left to the inset */
} column_fit;

static int fit_column(viewer_state *v, float scale, float max_w, float max_h, column_fit *f) {
    memset(f, 0, sizeof *f);
    f->scale = scale;
    if (v->compare.show) {
        viewer_compare_measure(v, scale, &f->cw, &f->ch);
    }
    f->room = max_h - (f->ch > 0.0f ? f->ch + 10.0f : 0.0f);
    if (v->inset.show) {
        viewer_inset_measure(v, scale, f->room, &f->iw, &f->ih);
    }
    const float w = f->cw > f->iw ? f->cw : f->iw;
    return w <= max_w && f->ih <= f->room;
}

static float draw_right_column(viewer_state *v, float left_w) {
    const float fb_w = (float)v->window.fb_width, fb_h = (float)v->window.fb_height;
    if (!v->compare.show && !v->inset.show) {
        return 0.0f;
    }
    float max_w = fb_w - left_w - 30.0f;
    max_w = max_w > 0.55f * fb_w ? 0.55f * fb_w : max_w;
    static const float scales[] = {3.0f, 2.5f, 2.0f, 1.5f, 1.0f};
    column_fit f;
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; ++k) {
        if (fit_column(v, scales[k], max_w, fb_h - 20.0f, &f)) {
            break;
        }
    }
    if (v->compare.show) {
        viewer_compare_draw(v, fb_w - 10.0f - f.cw, 10.0f, f.scale);
    }
    if (v->inset.show) {
        const float top = fb_h - 10.0f - f.room;
        const float y = fb_h - 10.0f - f.ih > top ? fb_h - 10.0f - f.ih : top;
        viewer_inset_draw(v, fb_w - 10.0f - f.iw, y, f.scale, f.room);
    }
    return f.cw > f.iw ? f.cw : f.iw;
}

void viewer_draw_overlay(viewer_state *v) {
    float scale = text_scale(v);
    float fb_w = (float)v->window.fb_width, fb_h = (float)v->window.fb_height;
    float bottom = fb_h;
    const float left = v->show_overlay ? draw_panel(v, scale, 0) + 10.0f : 0.0f;
    const float right = v->show_overlay ? draw_right_column(v, left) : 0.0f;
    if (v->show_graph && v->show_overlay) {
        float gw = fb_w - 20.0f, gh = 150.0f * scale;
        gw = gw > 900.0f * scale ? 900.0f * scale : gw;
        if (right > 0.0f && gw > fb_w - 30.0f - right) { /* beside the column, not under it */
            gw = fb_w - 30.0f - right;
            gw = gw < 200.0f * scale ? 200.0f * scale : gw;
        }
        render_graph_draw(&v->graph, &v->d2, 10.0f, fb_h - gh - 10.0f, gw, gh, scale, "ms/step");
        bottom = fb_h - gh - 10.0f;
    }
    if (v->show_overlay) {
        draw_panel(v, scale, 1);
    } else {
        render_text_draw(&v->d2, 10.0f, 10.0f, scale, text_color, "O: overlay   H: help");
    }
    render_draw2d_flush(&v->d2, v->window.fb_width, v->window.fb_height);
    /* The inset's pictures over their panel, under the message and the help. */
    if (v->show_overlay && v->inset.show) {
        viewer_inset_draw_images(v);
    }
    draw_message(v, scale, bottom);
    if (v->show_help) {
        draw_help(v, scale);
    }
    render_draw2d_flush(&v->d2, v->window.fb_width, v->window.fb_height);
}

void viewer_update_title(viewer_state *v) {
    const sim_run_info *s = viewer_info(v);
    const sim_backend_config *c = &s->config;
    char title[256];
    char axes[8];
    snprintf(title, sizeof title, "nbsim | %.1f fps | N %u | %s / %s | pair %.3f ms%s%s%s", v->fps,
             s->n, sim_pair_choice_name(c->pair_map),
             s->params.triplets ? sim_triplet_map_name(c->triplet_map) : "no triplets",
             v->smooth.pair_ms, s->params.periodic ? " | periodic " : "",
             s->params.periodic ? sim_periodic_text(s->params.periodic, "", axes, sizeof axes) : "",
             v->paused ? " | paused" : "");
    glfwSetWindowTitle(v->window.handle, title);
}
