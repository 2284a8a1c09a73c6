// SPDX-License-Identifier: MIT
// nbsim — a 2-D image: texels as they are (nearest), blended by their alpha.
#version 330 core

in vec2 v_uv;
uniform sampler2D u_image;
out vec4 frag_color;

void main() {
    frag_color = texture(u_image, v_uv);
}
