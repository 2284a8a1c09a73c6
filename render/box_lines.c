/* SPDX-License-Identifier: MIT
 * nbsim — box edges. */
#include "box_lines.h"

#include "shader.h"
#include "shaders_embedded.h"

sim_status render_box_lines_create(render_box_lines *b, sim_error *err) {
    sim_status st = render_program_create("lines", render_shader_lines_vert,
                                          render_shader_lines_frag, &b->program, err);
    if (st != SIM_OK) {
        return st;
    }
    b->u_view_proj = glGetUniformLocation(b->program, "u_view_proj");
    b->u_color = glGetUniformLocation(b->program, "u_color");
    glGenVertexArrays(1, &b->vao);
    glGenBuffers(1, &b->vbo);
    glBindVertexArray(b->vao);
    glBindBuffer(GL_ARRAY_BUFFER, b->vbo);
    glBufferData(GL_ARRAY_BUFFER, 24 * 3 * sizeof(float), NULL, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (const void *)0);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    b->half = 0.0f;
    return SIM_OK;
}

void render_box_lines_destroy(render_box_lines *b) {
    if (b->vbo) {
        glDeleteBuffers(1, &b->vbo);
    }
    if (b->vao) {
        glDeleteVertexArrays(1, &b->vao);
    }
    if (b->program) {
        glDeleteProgram(b->program);
    }
    b->vbo = b->vao = b->program = 0;
}

/* The 12 edges join corners whose indices (bit k = sign of axis k) differ in one bit. */
static void fill(render_box_lines *b, float half) {
    float v[24][3];
    int count = 0;
    for (int c = 0; c < 8; ++c) {
        for (int axis = 0; axis < 3; ++axis) {
            int other = c | (1 << axis);
            if (other == c) {
                continue;
            }
            for (int end = 0; end < 2; ++end) {
                int corner = end ? other : c;
                for (int k = 0; k < 3; ++k) {
                    v[count][k] = (corner >> k) & 1 ? half : -half;
                }
                ++count;
            }
        }
    }
    glBindBuffer(GL_ARRAY_BUFFER, b->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof v, v);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    b->half = half;
}

void render_box_lines_draw(render_box_lines *b, float half, const float view_proj[16],
                           const float rgba[4]) {
    if (half != b->half) {
        fill(b, half);
    }
    glUseProgram(b->program);
    glUniformMatrix4fv(b->u_view_proj, 1, GL_FALSE, view_proj);
    glUniform4fv(b->u_color, 1, rgba);
    glBindVertexArray(b->vao);
    glDrawArrays(GL_LINES, 0, 24);
    glBindVertexArray(0);
    glUseProgram(0);
}
