/* SPDX-License-Identifier: MIT
 * nbsim — 2-D overlay batch. */
#include "draw2d.h"

#include <stdlib.h>
#include <string.h>

#include "shader.h"
#include "shaders_embedded.h"

sim_status render_draw2d_create(render_draw2d *d, sim_error *err) {
    memset(d, 0, sizeof *d);
    sim_status st = render_program_create("overlay", render_shader_overlay_vert,
                                          render_shader_overlay_frag, &d->program, err);
    if (st != SIM_OK) {
        return st;
    }
    d->u_viewport = glGetUniformLocation(d->program, "u_viewport");
    glGenVertexArrays(1, &d->vao);
    glGenBuffers(1, &d->vbo);
    glBindVertexArray(d->vao);
    glBindBuffer(GL_ARRAY_BUFFER, d->vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(render_vertex2d), (const void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, sizeof(render_vertex2d),
                          (const void *)offsetof(render_vertex2d, rgba));
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return SIM_OK;
}

void render_draw2d_destroy(render_draw2d *d) {
    if (d->vbo) {
        glDeleteBuffers(1, &d->vbo);
    }
    if (d->vao) {
        glDeleteVertexArrays(1, &d->vao);
    }
    if (d->program) {
        glDeleteProgram(d->program);
    }
    free(d->tris.v);
    free(d->lines.v);
    memset(d, 0, sizeof *d);
}

/* Room for `more` vertices; on allocation failure the overlay just loses geometry this frame. */
static render_vertex2d *reserve(render_draw2d *d, render_vertex2d_list *l, size_t more) {
    if (l->count + more > l->capacity) {
        size_t cap = l->capacity ? l->capacity * 2 : 4096;
        while (cap < l->count + more) {
            cap *= 2;
        }
        render_vertex2d *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            d->out_of_memory = 1;
            return NULL;
        }
        l->v = v;
        l->capacity = cap;
    }
    render_vertex2d *out = l->v + l->count;
    l->count += more;
    return out;
}

static void put(render_vertex2d *v, float x, float y, const float rgba[4]) {
    v->x = x;
    v->y = y;
    memcpy(v->rgba, rgba, sizeof v->rgba);
}

void render_draw2d_quad(render_draw2d *d, const float xy[4][2], const float rgba[4][4]) {
    render_vertex2d *v = reserve(d, &d->tris, 6);
    if (v == NULL) {
        return;
    }
    static const int order[6] = {0, 1, 2, 0, 2, 3};
    for (int i = 0; i < 6; ++i) {
        put(&v[i], xy[order[i]][0], xy[order[i]][1], rgba[order[i]]);
    }
}

void render_draw2d_rect(render_draw2d *d, float x, float y, float w, float h, const float rgba[4]) {
    const float xy[4][2] = {{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}};
    float c[4][4];
    for (int i = 0; i < 4; ++i) {
        memcpy(c[i], rgba, sizeof c[i]);
    }
    render_draw2d_quad(d, xy, (const float(*)[4])c);
}

void render_draw2d_line(render_draw2d *d, float x0, float y0, float x1, float y1,
                        const float rgba[4]) {
    render_vertex2d *v = reserve(d, &d->lines, 2);
    if (v == NULL) {
        return;
    }
    /* +0.5: a one-pixel line through pixel centres stays crisp instead of straddling two rows. */
    put(&v[0], x0 + 0.5f, y0 + 0.5f, rgba);
    put(&v[1], x1 + 0.5f, y1 + 0.5f, rgba);
}

static void draw_list(render_draw2d *d, render_vertex2d_list *l, GLenum mode) {
    if (l->count == 0) {
        return;
    }
    if (l->count > d->vbo_capacity) {
        d->vbo_capacity = l->capacity;
    }
    /* Re-specifying the storage orphans it: the previous draw may still read the old one. */
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(d->vbo_capacity * sizeof(render_vertex2d)), NULL,
                 GL_STREAM_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(l->count * sizeof(render_vertex2d)), l->v);
    glDrawArrays(mode, 0, (GLsizei)l->count);
    l->count = 0;
}

void render_draw2d_flush(render_draw2d *d, int width, int height) {
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(d->program);
    glUniform2f(d->u_viewport, (float)width, (float)height);
    glBindVertexArray(d->vao);
    glBindBuffer(GL_ARRAY_BUFFER, d->vbo);
    draw_list(d, &d->tris, GL_TRIANGLES);
    draw_list(d, &d->lines, GL_LINES);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glBindVertexArray(0);
    glUseProgram(0);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
}
