// SPDX-License-Identifier: MIT
// nbsim — background: a vertical gradient with a soft vignette; mid-dark so that both the
// dark and the bright ends of the colormaps stay readable against it.
#version 330 core

in vec2 v_uv;
uniform vec3 u_top;
uniform vec3 u_bottom;
out vec4 frag_color;

void main() {
    vec3 c = mix(u_bottom, u_top, clamp(v_uv.y, 0.0, 1.0));
    vec2 centred = v_uv - 0.5;
    c *= 1.0 - 0.35 * dot(centred, centred);
    frag_color = vec4(c, 1.0);
}
