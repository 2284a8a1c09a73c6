/* SPDX-License-Identifier: MIT
 * nbsim — orbit camera (cglm). */
#include "camera.h"

#include <math.h>
#include <string.h>

#include <cglm/cglm.h>

#define PITCH_LIMIT 1.50f /* [rad], about 86 degrees: short of the pole */
#define ORBIT_RAD_PER_PX 0.006f
#define ZOOM_PER_STEP 0.88f /* distance factor per wheel notch */
#define EASE_RATE 18.0f     /* [1/s]: 1/e of the remaining motion every 55 ms */

void render_camera_set_up(render_camera *c, const float up[3]) {
    vec3 u = {up[0], up[1], up[2]};
    if (glm_vec3_norm(u) < 1e-12f) {
        glm_vec3_copy((vec3){0.0f, 1.0f, 0.0f}, u);
    }
    glm_vec3_normalize(u);
    /* A horizontal reference axis: the world axis least aligned with up, made orthogonal. */
    vec3 axis = {1.0f, 0.0f, 0.0f};
    if (fabsf(u[0]) > 0.8f) {
        glm_vec3_copy((vec3){0.0f, 0.0f, 1.0f}, axis);
    }
    vec3 ref, side;
    glm_vec3_cross(u, axis, side);
    glm_vec3_normalize(side);
    glm_vec3_cross(side, u, ref);
    memcpy(c->up, u, sizeof c->up);
    memcpy(c->ref, ref, sizeof c->ref);
    memcpy(c->side, side, sizeof c->side);
}

void render_camera_init(render_camera *c, const float up[3]) {
    memset(c, 0, sizeof *c);
    c->fov_y = glm_rad(40.0f);
    render_camera_set_up(c, up);
    render_camera_fit(c, 1.0f, 1);
}

void render_camera_fit(render_camera *c, float half, int immediate) {
    /* The cube's circumscribed sphere (radius half * sqrt 3) fills the vertical field. */
    float radius = half * sqrtf(3.0f);
    c->scene_radius = radius;
    c->goal.distance = radius / sinf(0.5f * c->fov_y) * 1.02f;
    c->goal.yaw = glm_rad(35.0f);
    c->goal.pitch = glm_rad(22.0f);
    memset(c->goal.target, 0, sizeof c->goal.target);
    if (immediate) {
        c->now = c->goal;
    }
}

void render_camera_orbit(render_camera *c, float dx_px, float dy_px) {
    c->goal.yaw -= dx_px * ORBIT_RAD_PER_PX;
    c->goal.pitch += dy_px * ORBIT_RAD_PER_PX;
    c->goal.pitch = glm_clamp(c->goal.pitch, -PITCH_LIMIT, PITCH_LIMIT);
}

/* Unit vector from the target to the eye. */
static void eye_direction(const render_camera *c, const render_camera_pose *p, vec3 out) {
    float cp = cosf(p->pitch), sp = sinf(p->pitch), cy = cosf(p->yaw), sy = sinf(p->yaw);
    for (int k = 0; k < 3; ++k) {
        out[k] = cp * (cy * c->ref[k] + sy * c->side[k]) + sp * c->up[k];
    }
}

void render_camera_pan(render_camera *c, float dx_px, float dy_px, float viewport_h) {
    if (viewport_h <= 0.0f) {
        return;
    }
    vec3 back, right, cam_up, up = {c->up[0], c->up[1], c->up[2]};
    eye_direction(c, &c->goal, back);
    glm_vec3_cross(up, back, right);
    glm_vec3_normalize(right);
    glm_vec3_cross(back, right, cam_up);
    /* World units per pixel at the target's depth. */
    float scale = 2.0f * c->goal.distance * tanf(0.5f * c->fov_y) / viewport_h;
    for (int k = 0; k < 3; ++k) {
        c->goal.target[k] += (-dx_px * right[k] + dy_px * cam_up[k]) * scale;
    }
}

void render_camera_zoom(render_camera *c, float steps) {
    c->goal.distance *= powf(ZOOM_PER_STEP, steps);
    float lo = 1e-3f * c->scene_radius, hi = 50.0f * c->scene_radius;
    c->goal.distance = glm_clamp(c->goal.distance, lo, hi);
}

void render_camera_update(render_camera *c, float dt_s) {
    float a = 1.0f - expf(-EASE_RATE * (dt_s > 0.0f ? dt_s : 0.0f));
    render_camera_pose *n = &c->now;
    const render_camera_pose *g = &c->goal;
    n->yaw += (g->yaw - n->yaw) * a;
    n->pitch += (g->pitch - n->pitch) * a;
    /* Distance eases in log space so zooming feels the same near and far. */
    n->distance = expf(logf(n->distance) + (logf(g->distance) - logf(n->distance)) * a);
    for (int k = 0; k < 3; ++k) {
        n->target[k] += (g->target[k] - n->target[k]) * a;
    }
}

void render_camera_matrices(const render_camera *c, float aspect, float view[16], float proj[16]) {
    vec3 back, eye, target = {c->now.target[0], c->now.target[1], c->now.target[2]};
    vec3 up = {c->up[0], c->up[1], c->up[2]};
    eye_direction(c, &c->now, back);
    glm_vec3_scale(back, c->now.distance, eye);
    glm_vec3_add(eye, target, eye);
    mat4 v, p;
    glm_lookat(eye, target, up, v);
    /* Clip planes bracket the scene around the target; the near plane stays a fixed fraction
     * of the distance so depth precision (24 bits) is spent where the spheres are. */
    float reach = c->scene_radius + glm_vec3_norm(target);
    float nearz = fmaxf(c->now.distance - reach, c->now.distance * 0.01f);
    nearz = fmaxf(nearz * 0.5f, 1e-4f * c->scene_radius);
    float farz = c->now.distance + 2.0f * reach + 1e-3f;
    glm_perspective(c->fov_y, aspect > 0.0f ? aspect : 1.0f, nearz, farz, p);
    memcpy(view, v, 16 * sizeof(float));
    memcpy(proj, p, 16 * sizeof(float));
}
