// SPDX-License-Identifier: MIT
// nbsim — 2-D overlay geometry (text, panels, graph) in pixels, origin at the top left.
#version 330 core

layout(location = 0) in vec2 a_position; // [px]
layout(location = 1) in vec4 a_color;
uniform vec2 u_viewport; // framebuffer size [px]
out vec4 v_color;

void main() {
    vec2 ndc = a_position / u_viewport * 2.0 - 1.0;
    gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
    v_color = a_color;
}
