// SPDX-License-Identifier: MIT
// nbsim — background: one triangle that covers the viewport, no vertex buffer needed.
#version 330 core

out vec2 v_uv;

void main() {
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2)); // (0,0) (2,0) (0,2)
    v_uv = p;
    gl_Position = vec4(p * 2.0 - 1.0, 1.0, 1.0);
}
