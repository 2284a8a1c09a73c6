/* SPDX-License-Identifier: MIT
 * nbsim — the map at work (I): the active pair map's tile-pair triangle, each cell coloured by
 * the launch and block that cover it (sim/maps/map_cover.c, painted as `nbsim maps --png` paints
 * it: render/map_palette.c),
 * the bounding box's idle blocks in grey, and with culling on the interacting tile pairs of
 * the current frame lit; while triplets run, the triplet map's largest layer beside it.
 * The pictures are textures, rebuilt when the map or n changes; the lit cells every frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_palette.h"
#include "nbsim/size_limits.h"
#include "text.h"
#include "viewer_internal.h"
#include "viewer_panel.h"

static const float lit_color[4] = {1.0f, 1.0f, 0.94f, 1.0f};
static const float frame_color[4] = {1.0f, 1.0f, 1.0f, 0.30f};

#define INSET_SIDE_PX 230.0f /* picture side at text scale 1 [px] */

sim_status viewer_inset_create(viewer_state *v, sim_error *err) {
    viewer_inset *in = &v->inset;
    SIM_TRY(render_image_create(&in->image[0], err));
    SIM_TRY(render_image_create(&in->image[1], err));
    SIM_TRY(render_image_create(&in->lit, err));
    in->ready = 1;
    in->lit_cells = -1;
    return SIM_OK;
}

void viewer_inset_destroy(viewer_state *v) {
    viewer_inset *in = &v->inset;
    if (in->ready) {
        render_image_destroy(&in->image[0]);
        render_image_destroy(&in->image[1]);
        render_image_destroy(&in->lit);
    }
    free(in->pairs);
    in->pairs = NULL;
    in->pairs_cap = 0;
    in->ready = 0;
}

void viewer_inset_toggle(viewer_state *v) {
    v->inset.show = !v->inset.show;
}

/* `full` has no map: one block per row of tiles sweeps all n columns, both triangles. */
static void cover_full(sim_map_cover *c, uint8_t *rgba, uint32_t n) {
    memset(c, 0, sizeof *c);
    c->dim = 2;
    c->map = SIM_PAIR_FULL;
    c->n = n;
    c->per_cell = (n + SIM_MAP_COVER_SIDE - 1u) / SIM_MAP_COVER_SIDE;
    c->side = (n + c->per_cell - 1u) / c->per_cell;
    c->exact = 1;
    c->launches = 1;
    c->blocks = n;
    c->useful = n;
    for (uint32_t row = 0; row < c->side; ++row) {
        const render_rgb col =
            render_map_order_colour(0, c->side > 1 ? (double)row / (c->side - 1) : 0);
        for (uint32_t q = 0; q < c->side; ++q) {
            uint8_t *px = &rgba[(row * c->side + q) * 4u];
            px[0] = col.r;
            px[1] = col.g;
            px[2] = col.b;
            px[3] = 255;
        }
    }
}

/* Rebuilds picture k (0 pairs, 1 triplets) when its map, tile count or culling changed. With
 * culling the pair map places the culling pass, one block per group of 16 x 16 tile pairs (or of
 * super-tile pairs): that plan is drawn, over the same triangle of tile pairs. */
static void refresh_cover(viewer_state *v, int k) {
    viewer_inset *in = &v->inset;
    const sim_run_info *s = viewer_info(v);
    const int map = k == 0 ? s->config.pair_map : (int)s->config.triplet_map;
    const uint32_t n = viewer_tiles(s->n, k == 0 ? s->config.tile : SIM_TRIPLET_TILE);
    sim_cull_info cull;
    memset(&cull, 0, sizeof cull);
    if (k == 0) {
        sim_session_cull_info(v->run.session, &cull);
    }
    const int levels = cull.active && cull.plan != NULL ? cull.levels : 0;
    if (in->cover_valid[k] && in->cover_map[k] == map && in->cover_n[k] == n &&
        in->cover_levels[k] == levels) {
        return;
    }
    sim_error err;
    sim_error_clear(&err);
    sim_status st = SIM_OK;
    if (k == 0 && map == SIM_PAIR_FULL) {
        cover_full(&in->cover[0], in->rgba[0], n);
    } else if (levels > 0) {
        const uint32_t group = sim_cull_group_size();
        const uint32_t span = levels == 1 ? group : group * sim_cull_super_size();
        st = sim_map_cover_build_grouped(&in->cover[0], cull.plan, cull.tiles, span, &err);
    } else {
        sim_map_plan plan;
        st = k == 0 ? sim_pair_map_plan((sim_pair_map)map, n, &plan, &err)
                    : sim_triplet_map_plan((sim_triplet_map)map, n, &plan, &err);
        if (st == SIM_OK) {
            st = sim_map_cover_build(&in->cover[k], &plan, &err);
        }
    }
    if (st != SIM_OK) {
        viewer_message(v, "map inset: %s", err.message);
        in->cover_valid[k] = 0;
        return;
    }
    const sim_map_cover *c = &in->cover[k];
    if (!(k == 0 && map == SIM_PAIR_FULL)) { /* full painted itself */
        render_map_cover_rgba(c, in->rgba[k]);
    }
    render_image_upload(&in->image[k], (int)c->side, (int)c->side, in->rgba[k]);
    in->cover_valid[k] = 1;
    in->cover_map[k] = map;
    in->cover_n[k] = n;
    in->cover_levels[k] = levels;
    in->lit_s = -1.0; /* light the new picture at once */
}

/* The interacting tile pairs at the current positions, lit over the pair picture (culling
 * only). Reading them reruns the culling pass and copies its list: ten times a second. */
#define LIT_PERIOD_S 0.1
static void refresh_lit(viewer_state *v) {
    viewer_inset *in = &v->inset;
    if (in->cover_levels[0] == 0) {
        in->lit_cells = -1;
        snprintf(in->note, sizeof in->note, "%s",
                 viewer_cull(v) ? "not culled: every tile pair is computed"
                                : "culling off: every tile pair is computed (K culls)");
        return;
    }
    const double now = viewer_now();
    if (in->lit_s >= 0.0 && now - in->lit_s < LIT_PERIOD_S && !v->paused) {
        return;
    }
    in->lit_s = now;
    sim_error err;
    sim_error_clear(&err);
    uint64_t total = 0;
    sim_status st = sim_session_tile_pairs(v->run.session, in->pairs, in->pairs_cap, &total, &err);
    if (st == SIM_OK && total > in->pairs_cap) { /* grow, then read again */
        sim_tile2 *grown = realloc(in->pairs, (size_t)total * sizeof *grown);
        if (grown == NULL) {
            in->lit_cells = -1;
            snprintf(in->note, sizeof in->note, "no memory for %llu tile pairs",
                     (unsigned long long)total);
            return;
        }
        in->pairs = grown;
        in->pairs_cap = total;
        st = sim_session_tile_pairs(v->run.session, in->pairs, in->pairs_cap, &total, &err);
    }
    if (st != SIM_OK) {
        in->lit_cells = -1;
        snprintf(in->note, sizeof in->note, "interacting tile pairs: %.120s", err.message);
        return;
    }
    in->pairs_count = total < in->pairs_cap ? total : in->pairs_cap;
    const sim_map_cover *c = &in->cover[0];
    in->lit_cells = (int)sim_map_cover_light(c, in->pairs, in->pairs_count, in->lit_share);
    render_map_lit_rgba(c, in->lit_share, in->lit_rgba);
    render_image_upload(&in->lit, (int)c->side, (int)c->side, in->lit_rgba);
    const uint64_t all = (uint64_t)c->n * (c->n + 1u) / 2u;
    snprintf(in->note, sizeof in->note,
             "lit: the %llu interacting tile pairs now (%.2f %% of %llu)",
             (unsigned long long)total, all > 0 ? 100.0 * (double)total / (double)all : 0.0,
             (unsigned long long)all);
}

void viewer_inset_update(viewer_state *v) {
    viewer_inset *in = &v->inset;
    if (!in->show || !in->ready) {
        return;
    }
    refresh_cover(v, 0);
    if (viewer_info(v)->params.triplets) {
        refresh_cover(v, 1);
    }
    if (in->cover_valid[0] && viewer_info(v)->config.pair_map != SIM_PAIR_FULL) {
        refresh_lit(v);
    } else {
        in->lit_cells = -1;
        snprintf(in->note, sizeof in->note, "full: all n x n tile pairs, no symmetry, not culled");
    }
}

/* ---- layout: measured and drawn by the same code ---- */

typedef struct {
    viewer_panel t;
    float side; /* the picture's side */
} inset_layout;

static const char *waste_text(const sim_map_cover *c, char *buf, size_t cap) {
    const uint64_t idle = c->blocks > c->useful ? c->blocks - c->useful : 0;
    snprintf(buf, cap, "%llu blocks in %d launch%s, %.1f %% idle%s", (unsigned long long)c->blocks,
             c->launches, c->launches == 1 ? "" : "es",
             c->blocks > 0 ? 100.0 * (double)idle / (double)c->blocks : 0.0,
             c->exact ? "" : "; picture from a sample of the blocks");
    return buf;
}

/* Launch hues as swatches, dark to light: how to read a cell's colour. */
static void swatches(inset_layout *p, const sim_map_cover *c) {
    const float s = p->t.scale, w = 7.0f * s, h = RENDER_TEXT_LINE * s * 0.75f;
    float x = p->t.x;
    const int shown = c->launches < RENDER_MAP_HUES ? c->launches : RENDER_MAP_HUES;
    for (int l = 0; l < shown && p->t.d != NULL; ++l) {
        for (int k = 0; k < 4; ++k) {
            const render_rgb col = render_map_order_colour(l, k / 3.0);
            const float rgba[4] = {col.r / 255.0f, col.g / 255.0f, col.b / 255.0f, 1.0f};
            render_draw2d_rect(p->t.d, x, p->t.y, w, h, rgba);
            x += w;
        }
        x += 3.0f * s;
    }
    if (p->t.d == NULL) {
        x += (float)shown * (4.0f * w + 3.0f * s);
    }
    const char *legend = c->launches > 1 ? "  hue: launch, shade: dark -> light = block order"
                                         : "  shade: dark -> light = block order";
    const float tw = viewer_panel_put(&p->t, x, p->t.y, viewer_panel_faint, legend);
    p->t.width = x + tw - p->t.x > p->t.width ? x + tw - p->t.x : p->t.width;
    p->t.y += p->t.line;
}

static void layout(viewer_state *v, inset_layout *p) {
    viewer_inset *in = &v->inset;
    const sim_run_info *s = viewer_info(v);
    char text[256], buf[160];
    const int triplets = s->params.triplets && in->cover_valid[1];
    const int pm = s->config.pair_map;
    const int levels = in->cover_levels[0];
    snprintf(text, sizeof text, "The map at work: pair map %s (%s)%s", sim_pair_choice_name(pm),
             sim_pair_choice_label(pm), levels > 0 ? " placing the culling pass" : "");
    viewer_panel_line(&p->t, viewer_panel_head, text);
    if (!in->cover_valid[0]) {
        viewer_panel_line(&p->t, viewer_panel_faint, "no picture for this map (see the message)");
        return;
    }
    const sim_map_cover *c = &in->cover[0];
    snprintf(text, sizeof text, "tile pairs (I, J): row I, column J; n = %u tiles of %u bodies",
             c->n, s->config.tile);
    viewer_panel_line(&p->t, viewer_panel_faint, text);
    char cell[64] = "a cell = a tile pair";
    if (c->per_cell > 1) {
        snprintf(cell, sizeof cell, "a cell = %u x %u tile pairs", c->per_cell, c->per_cell);
    }
    if (levels == 1) {
        snprintf(text, sizeof text, "a block tests %u x %u tile pairs; %s", sim_cull_group_size(),
                 sim_cull_group_size(), cell);
    } else if (levels == 2) {
        snprintf(text, sizeof text, "a block tests %u x %u pairs of %u-tile super-tiles; %s",
                 sim_cull_group_size(), sim_cull_group_size(), sim_cull_super_size(), cell);
    } else {
        snprintf(text, sizeof text, "a block owns a tile pair; %s", cell);
    }
    viewer_panel_line(&p->t, viewer_panel_faint, text);
    swatches(p, c);
    /* The pictures: pairs, and the triplet layer beside it at the same scale per cell side. */
    const float top = p->t.y + 0.2f * p->t.line;
    const float side = p->side;
    if (p->t.d != NULL) {
        in->image_rect[0][0] = p->t.x;
        in->image_rect[0][1] = top;
        in->image_rect[0][2] = side;
        in->image_rect[0][3] = side;
        const float border[4][4] = {{p->t.x - 1, top - 1, side + 2, 1},
                                    {p->t.x - 1, top + side, side + 2, 1},
                                    {p->t.x - 1, top, 1, side},
                                    {p->t.x + side, top, 1, side}};
        for (int b = 0; b < 4; ++b) {
            render_draw2d_rect(p->t.d, border[b][0], border[b][1], border[b][2], border[b][3],
                               frame_color);
        }
    }
    float right = side, bottom = side;
    in->image_rect[1][2] = 0.0f;
    if (triplets) {
        const float tx = p->t.x + side + 16.0f * p->t.scale, tside = side * 0.6f;
        const sim_map_cover *t = &in->cover[1];
        snprintf(text, sizeof text, "triplet map %s", sim_triplet_map_name(s->config.triplet_map));
        const float tw1 = viewer_panel_put(&p->t, tx, top, viewer_panel_head, text);
        snprintf(buf, sizeof buf, "layer I = %u: row J, col K", t->layer);
        const float tw2 = viewer_panel_put(&p->t, tx, top + p->t.line, viewer_panel_faint, buf);
        const float iy = top + 2.2f * p->t.line;
        if (p->t.d != NULL) {
            in->image_rect[1][0] = tx;
            in->image_rect[1][1] = iy;
            in->image_rect[1][2] = tside;
            in->image_rect[1][3] = tside;
        }
        char blocks[64];
        snprintf(blocks, sizeof blocks, "%llu blocks, %.1f %% idle", (unsigned long long)t->blocks,
                 t->blocks > 0 ? 100.0 * (double)(t->blocks - t->useful) / (double)t->blocks : 0.0);
        const float tw3 =
            viewer_panel_put(&p->t, tx, iy + tside + 4.0f * p->t.scale, viewer_panel_faint, blocks);
        float tw = tw1 > tw2 ? tw1 : tw2;
        tw = tw3 > tw ? tw3 : tw;
        tw = tside > tw ? tside : tw;
        right = tx + tw - p->t.x;
        const float below = iy + tside + 4.0f * p->t.scale + p->t.line - top;
        bottom = below > bottom ? below : bottom;
    }
    p->t.width = right > p->t.width ? right : p->t.width;
    p->t.y = top + bottom + 0.4f * p->t.line;
    viewer_panel_line(&p->t, viewer_panel_text, waste_text(c, buf, sizeof buf));
    if (c->waste) {
        viewer_panel_line(&p->t, viewer_panel_faint,
                          "grey: the bounding box's idle blocks (J > I), launched for nothing");
    }
    viewer_panel_line(&p->t, in->lit_cells > 0 ? lit_color : viewer_panel_faint, in->note);
    viewer_panel_line(&p->t, viewer_panel_faint, "I: hide   M / T: switch maps   S: time them all");
}

static float picture_side(float scale, float max_h) {
    /* Captions take about eleven lines; the picture gets the rest, up to its natural size. */
    const float captions = 11.5f * (RENDER_TEXT_LINE + 3.0f) * scale + 16.0f * scale;
    float side = INSET_SIDE_PX * scale;
    side = max_h - captions < side ? max_h - captions : side;
    /* Below this the picture says little: the caller tries a smaller text scale instead. */
    return side < 110.0f * scale ? 110.0f * scale : side;
}

void viewer_inset_measure(viewer_state *v, float scale, float max_h, float *w, float *h) {
    inset_layout p;
    viewer_panel_begin(&p.t, NULL, 0.0f, 0.0f, scale);
    p.side = picture_side(scale, max_h);
    layout(v, &p);
    viewer_panel_size(&p.t, w, h);
}

void viewer_inset_draw(viewer_state *v, float x, float y, float scale, float max_h) {
    float w, h;
    viewer_inset_measure(v, scale, max_h, &w, &h);
    viewer_panel_background(&v->d2, x, y, w, h);
    inset_layout p;
    viewer_panel_begin(&p.t, &v->d2, x, y, scale);
    p.side = picture_side(scale, max_h);
    layout(v, &p);
}

void viewer_inset_draw_images(viewer_state *v) {
    viewer_inset *in = &v->inset;
    const int fw = v->window.fb_width, fh = v->window.fb_height;
    for (int k = 0; k < 2; ++k) {
        const float *r = in->image_rect[k];
        if (in->cover_valid[k] && r[2] > 0.0f) {
            render_image_draw(&in->image[k], r[0], r[1], r[2], r[3], fw, fh);
        }
    }
    if (in->lit_cells > 0 && in->image_rect[0][2] > 0.0f) {
        const float *r = in->image_rect[0];
        render_image_draw(&in->lit, r[0], r[1], r[2], r[3], fw, fh);
    }
    in->image_rect[0][2] = in->image_rect[1][2] = 0.0f; /* drawn again only if laid out again */
}
