/* SPDX-License-Identifier: MIT
 * nbsim — the one place render/ includes OpenGL: GLEW first (it must precede any GL header),
 * then GLFW told not to pull in its own. */
#ifndef RENDER_GL_H
#define RENDER_GL_H

#include <GL/glew.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#endif /* RENDER_GL_H */
