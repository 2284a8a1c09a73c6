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
    glBufferData(GL_ARRAY_BUFFER, (24 + 48) * 3 * sizeof(float), NULL, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (const void *)0);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    b->half = 0.0f;
    b->periodic = -1;
    b->periodic_vertices = 0;
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

/* The 12 edges join corners whose indices (bit k = sign of axis k) differ in one bit; then per
 * periodic axis its two faces as squares 1 % inside the box (drawn over the edges they would
 * share with it, the outline would not show). */
static void fill(render_box_lines *b, float half, int periodic) {
    float v[24 + 48][3];
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
    const float in = 0.99f * half;
    for (int axis = 0; axis < 3; ++axis) {
        if (!((periodic >> axis) & 1)) {
            continue;
        }
        const int u = (axis + 1) % 3, w = (axis + 2) % 3;
        static const float square[5][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}, {-1, -1}};
        for (int side = -1; side <= 1; side += 2) {
            for (int e = 0; e < 4; ++e) {
                for (int end = 0; end < 2; ++end) {
                    v[count][axis] = (float)side * half;
                    v[count][u] = square[e + end][0] * in;
                    v[count][w] = square[e + end][1] * in;
                    ++count;
                }
            }
        }
    }
    glBindBuffer(GL_ARRAY_BUFFER, b->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (size_t)count * sizeof v[0], v);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    b->half = half;
    b->periodic = periodic;
    b->periodic_vertices = count - 24;
}

void render_box_lines_draw(render_box_lines *b, float half, int periodic, const float view_proj[16],
                           const float rgba[4], const float periodic_rgba[4]) {
    if (half != b->half || periodic != b->periodic) {
        fill(b, half, periodic);
    }
    glUseProgram(b->program);
    glUniformMatrix4fv(b->u_view_proj, 1, GL_FALSE, view_proj);
    glUniform4fv(b->u_color, 1, rgba);
    glBindVertexArray(b->vao);
    glDrawArrays(GL_LINES, 0, 24);
    if (b->periodic_vertices > 0) {
        glUniform4fv(b->u_color, 1, periodic_rgba);
        glDrawArrays(GL_LINES, 24, b->periodic_vertices);
    }
    glBindVertexArray(0);
    glUseProgram(0);
}
