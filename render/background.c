/* SPDX-License-Identifier: MIT
 * nbsim — background gradient. */
#include "background.h"

#include "shader.h"
#include "shaders_embedded.h"

sim_status render_background_create(render_background *bg, sim_error *err) {
    sim_status st = render_program_create("background", render_shader_background_vert,
                                          render_shader_background_frag, &bg->program, err);
    if (st != SIM_OK) {
        return st;
    }
    bg->u_top = glGetUniformLocation(bg->program, "u_top");
    bg->u_bottom = glGetUniformLocation(bg->program, "u_bottom");
    glGenVertexArrays(1, &bg->vao); /* core profiles draw nothing without a bound VAO */
    return SIM_OK;
}

void render_background_destroy(render_background *bg) {
    if (bg->vao) {
        glDeleteVertexArrays(1, &bg->vao);
    }
    if (bg->program) {
        glDeleteProgram(bg->program);
    }
    bg->vao = bg->program = 0;
}

void render_background_draw(render_background *bg, const float top[3], const float bottom[3]) {
    glDisable(GL_DEPTH_TEST);
    glDepthMask(GL_FALSE);
    glUseProgram(bg->program);
    glUniform3fv(bg->u_top, 1, top);
    glUniform3fv(bg->u_bottom, 1, bottom);
    glBindVertexArray(bg->vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glBindVertexArray(0);
    glUseProgram(0);
    glDepthMask(GL_TRUE);
    glEnable(GL_DEPTH_TEST);
}
