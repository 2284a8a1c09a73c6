/* SPDX-License-Identifier: MIT
 * nbsim — sphere impostor draw. */
#include "spheres.h"

#include "colormap.h"
#include "shader.h"
#include "shaders_embedded.h"

sim_status render_spheres_create(render_spheres *s, sim_error *err) {
    sim_status st = render_program_create("spheres", render_shader_spheres_vert,
                                          render_shader_spheres_frag, &s->program, err);
    if (st != SIM_OK) {
        return st;
    }
    s->u_view = glGetUniformLocation(s->program, "u_view");
    s->u_proj = glGetUniformLocation(s->program, "u_proj");
    s->u_source = glGetUniformLocation(s->program, "u_color_source");
    s->u_range = glGetUniformLocation(s->program, "u_range");
    s->u_count = glGetUniformLocation(s->program, "u_count");
    s->u_colormap = glGetUniformLocation(s->program, "u_colormap");
    s->u_row = glGetUniformLocation(s->program, "u_colormap_row");
    glGenVertexArrays(1, &s->vao);
    return SIM_OK;
}

void render_spheres_destroy(render_spheres *s) {
    if (s->vao) {
        glDeleteVertexArrays(1, &s->vao);
    }
    if (s->program) {
        glDeleteProgram(s->program);
    }
    s->vao = s->program = 0;
}

void render_spheres_draw(render_spheres *s, const render_bodies *bodies, const float view[16],
                         const float proj[16], GLuint colormap_tex,
                         const render_sphere_style *style) {
    if (bodies->count == 0) {
        return;
    }
    glUseProgram(s->program);
    glUniformMatrix4fv(s->u_view, 1, GL_FALSE, view);
    glUniformMatrix4fv(s->u_proj, 1, GL_FALSE, proj);
    glUniform1i(s->u_source, (GLint)style->source);
    glUniform2f(s->u_range, style->range[0], style->range[1]);
    glUniform1f(s->u_count, (float)bodies->count);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, colormap_tex);
    glUniform1i(s->u_colormap, 0);
    glUniform1f(s->u_row, render_colormap_row_coord(style->colormap));

    /* Attributes are re-pointed every draw: the buffers are recreated when N changes, and two
     * calls cost nothing next to the draw. Both advance once per instance (per body). */
    glBindVertexArray(s->vao);
    glBindBuffer(GL_ARRAY_BUFFER, bodies->pos_vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, sizeof(sim_vec4f), (const void *)0);
    glVertexAttribDivisor(0, 1);
    glBindBuffer(GL_ARRAY_BUFFER, bodies->scalar_vbo);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, sizeof(float), (const void *)0);
    glVertexAttribDivisor(1, 1);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, (GLsizei)bodies->count);
    glBindVertexArray(0);
    glUseProgram(0);
}
