// SPDX-License-Identifier: MIT
// nbsim — sphere impostors: one camera-facing quad per body (instanced triangle strip).
// A quad, not a point sprite: point sizes are capped (255 px on llvmpipe), and a quad placed
// across the tangent cone covers the sphere's exact perspective silhouette.
#version 330 core

layout(location = 0) in vec4 a_body;   // per instance: centre (x, y, z) and radius [m]
layout(location = 1) in float a_scalar; // per instance: the coloured quantity (e.g. speed)

uniform mat4 u_view;
uniform mat4 u_proj;
uniform int u_color_source; // 0: a_scalar, 1: radius, 2: body index
uniform vec2 u_range;       // value range mapped onto the colormap
uniform float u_count;      // bodies, for index colouring

out vec3 v_center; // view space
out float v_radius;
out vec3 v_ray;    // view-space point on the quad: the eye ray through this fragment
out float v_t;     // colormap coordinate in [0, 1]

void main() {
    vec3 c = (u_view * vec4(a_body.xyz, 1.0)).xyz;
    float r = a_body.w;
    float d2 = dot(c, c);
    if (!(r > 0.0) || d2 <= r * r * 1.0001) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // eye inside the sphere or no radius: cull
        return;
    }
    // The quad lies in the plane through the sphere's nearest point, perpendicular to the
    // eye-centre axis: the whole sphere is behind that plane, so every hit is deeper than the
    // quad (the fragment shader declares depth_greater and early depth tests keep working).
    // There the cone from the eye tangent to the sphere has radius r sqrt((d - r) / (d + r)); a
    // square of that half-size contains the sphere's exact perspective silhouette.
    float d = sqrt(d2);
    vec3 w = c / d;
    vec3 helper = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(helper, w));
    vec3 v = cross(w, u);
    float h = r * sqrt((d - r) / (d + r));
    vec2 k = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)) * 2.0 - 1.0;
    vec3 p = c - r * w + h * (k.x * u + k.y * v);

    v_center = c;
    v_radius = r;
    v_ray = p;
    float value = u_color_source == 0 ? a_scalar
                : u_color_source == 1 ? r
                                      : float(gl_InstanceID);
    vec2 range = u_color_source == 2 ? vec2(0.0, max(u_count - 1.0, 1.0)) : u_range;
    v_t = clamp((value - range.x) / max(range.y - range.x, 1e-30), 0.0, 1.0);
    if (u_color_source == 2) {
        v_t = 0.05 + 0.9 * v_t; // turbo's darkest ends vanish against the background
    }
    gl_Position = u_proj * vec4(p, 1.0);
}
