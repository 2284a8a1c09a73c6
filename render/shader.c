/* SPDX-License-Identifier: MIT
 * nbsim — compiling and linking GLSL programs. */
#include "shader.h"

#include <string.h>

static sim_status compile(const char *name, GLenum type, const char *src, GLuint *out,
                          sim_error *err) {
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = GL_FALSE;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[SIM_ERROR_MESSAGE_MAX - 96];
        log[0] = '\0';
        glGetShaderInfoLog(sh, (GLsizei)sizeof log, NULL, log);
        glDeleteShader(sh);
        return sim_fail(err, SIM_UNSUPPORTED, "shader '%s' (%s) does not compile: %s", name,
                        type == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
    }
    *out = sh;
    return SIM_OK;
}

sim_status render_program_create(const char *name, const char *vertex_src, const char *fragment_src,
                                 GLuint *out, sim_error *err) {
    *out = 0;
    GLuint vs = 0, fs = 0;
    sim_status st = compile(name, GL_VERTEX_SHADER, vertex_src, &vs, err);
    if (st == SIM_OK) {
        st = compile(name, GL_FRAGMENT_SHADER, fragment_src, &fs, err);
    }
    if (st != SIM_OK) {
        if (vs) {
            glDeleteShader(vs);
        }
        return st;
    }
    GLuint prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    glDeleteShader(vs); /* flagged for deletion; freed with the program */
    glDeleteShader(fs);
    GLint ok = GL_FALSE;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[SIM_ERROR_MESSAGE_MAX - 64];
        log[0] = '\0';
        glGetProgramInfoLog(prog, (GLsizei)sizeof log, NULL, log);
        glDeleteProgram(prog);
        return sim_fail(err, SIM_UNSUPPORTED, "shader program '%s' does not link: %s", name, log);
    }
    *out = prog;
    return SIM_OK;
}
