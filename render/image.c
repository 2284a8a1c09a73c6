/* SPDX-License-Identifier: MIT
 * nbsim — 2-D images in the overlay. */
#include "image.h"

#include <string.h>

#include "shader.h"
#include "shaders_embedded.h"

sim_status render_image_create(render_image *im, sim_error *err) {
    memset(im, 0, sizeof *im);
    SIM_TRY(render_program_create("image", render_shader_image_vert, render_shader_image_frag,
                                  &im->program, err));
    im->u_rect = glGetUniformLocation(im->program, "u_rect");
    im->u_viewport = glGetUniformLocation(im->program, "u_viewport");
    im->u_image = glGetUniformLocation(im->program, "u_image");
    glGenVertexArrays(1, &im->vao); /* core profile: a draw needs a bound VAO, even an empty one */
    glGenTextures(1, &im->tex);
    glBindTexture(GL_TEXTURE_2D, im->tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    return SIM_OK;
}

void render_image_destroy(render_image *im) {
    if (im->tex) {
        glDeleteTextures(1, &im->tex);
    }
    if (im->vao) {
        glDeleteVertexArrays(1, &im->vao);
    }
    if (im->program) {
        glDeleteProgram(im->program);
    }
    memset(im, 0, sizeof *im);
}

void render_image_upload(render_image *im, int width, int height, const uint8_t *rgba) {
    glBindTexture(GL_TEXTURE_2D, im->tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    if (width != im->width || height != im->height) {
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
        im->width = width;
        im->height = height;
    } else {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    }
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
}

void render_image_draw(const render_image *im, float x, float y, float w, float h, int fb_width,
                       int fb_height) {
    if (im->width <= 0 || im->height <= 0) {
        return;
    }
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(im->program);
    glUniform4f(im->u_rect, x, y, w, h);
    glUniform2f(im->u_viewport, (float)fb_width, (float)fb_height);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, im->tex);
    glUniform1i(im->u_image, 0);
    glBindVertexArray(im->vao);
    glDrawArrays(GL_TRIANGLES, 0, 6);
    glBindVertexArray(0);
    glBindTexture(GL_TEXTURE_2D, 0);
    glUseProgram(0);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
}
