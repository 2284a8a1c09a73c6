// SPDX-License-Identifier: MIT
// nbsim — a 2-D image (the map inset) as one textured quad in pixels, origin at the top left.
#version 330 core

uniform vec4 u_rect;     // x, y, width, height [px]
uniform vec2 u_viewport; // framebuffer size [px]
out vec2 v_uv;

void main() {
    // Two triangles from gl_VertexID alone: no vertex buffer to keep.
    const vec2 corners[6] = vec2[6](vec2(0, 0), vec2(1, 0), vec2(1, 1), vec2(0, 0), vec2(1, 1),
                                    vec2(0, 1));
    vec2 c = corners[gl_VertexID];
    vec2 ndc = (u_rect.xy + c * u_rect.zw) / u_viewport * 2.0 - 1.0;
    gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
    v_uv = c; // texture row 0 is the image's top row
}
