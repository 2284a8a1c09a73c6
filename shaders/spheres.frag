// SPDX-License-Identifier: MIT
// nbsim — sphere impostors: ray-cast each fragment against the true sphere, write its depth,
// light it. Spheres then intersect and occlude each other exactly like geometry.
#version 330 core
#extension GL_ARB_conservative_depth : enable

#ifdef GL_ARB_conservative_depth
// Hits are never nearer than the quad (see spheres.vert), so the rasterised depth is a lower
// bound and hidden spheres are rejected before shading despite the depth write below.
layout(depth_greater) out float gl_FragDepth;
#endif

in vec3 v_center;
in float v_radius;
in vec3 v_ray;
in float v_t;

uniform mat4 u_proj;
uniform sampler2D u_colormap; // 256 x rows, one colormap per row
uniform float u_colormap_row; // texture coordinate of the row's centre

out vec4 frag_color;

void main() {
    vec3 dir = normalize(v_ray);
    float b = dot(dir, v_center);
    // Squared distance from the centre to the ray, taken from the perpendicular vector rather
    // than as b^2 - |c|^2: the latter cancels catastrophically in float for small, far spheres.
    vec3 q = v_center - b * dir;
    float disc = v_radius * v_radius - dot(q, q);
    if (disc < 0.0) {
        discard;
    }
    float t = b - sqrt(disc);
    vec3 hit = t * dir;
    vec3 n = (hit - v_center) / v_radius;

    vec4 clip = u_proj * vec4(hit, 1.0);
    float ndc_z = clip.z / clip.w;
    gl_FragDepth = 0.5 * ndc_z + 0.5; // default glDepthRange(0, 1)

    vec3 base = texture(u_colormap, vec2((v_t * 255.0 + 0.5) / 256.0, u_colormap_row)).rgb;
    vec3 to_eye = -dir;
    vec3 key = normalize(vec3(-0.45, 0.65, 0.62)); // upper-left key light, view space
    float diffuse = max(dot(n, key), 0.0);
    float fill = max(dot(n, to_eye), 0.0);         // headlight keeps the shadow side readable
    float spec = pow(max(dot(n, normalize(key + to_eye)), 0.0), 48.0);
    vec3 color = base * (0.22 + 0.58 * diffuse + 0.30 * fill) + vec3(0.30 * spec);
    // Darken towards the silhouette so touching spheres of one colour stay distinguishable.
    color *= mix(0.55, 1.0, smoothstep(0.0, 0.45, fill));
    frag_color = vec4(color, 1.0);
}
