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
#define FIT_MARGIN 0.92f    /* the fitted corners' farthest reach, of the half-view */
#define FIT_YAW 35.0f       /* [degrees] the three-quarter view */
#define FIT_PITCH 22.0f     /* [degrees] */

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
    c->goal.yaw = glm_rad(FIT_YAW);
    c->goal.pitch = glm_rad(FIT_PITCH);
    memset(c->goal.target, 0, sizeof c->goal.target);
    if (immediate) {
        c->now = c->goal;
    }
}

static void eye_direction(const render_camera *c, const render_camera_pose *p, vec3 out);

void render_camera_fit_bounds(render_camera *c, const float lo[3], const float hi[3],
                              float clip_half, float aspect, int immediate) {
    c->scene_radius = clip_half * sqrtf(3.0f);
    c->goal.yaw = glm_rad(FIT_YAW);
    c->goal.pitch = glm_rad(FIT_PITCH);
    vec3 back, right, cam_up, up = {c->up[0], c->up[1], c->up[2]};
    eye_direction(c, &c->goal, back);
    glm_vec3_cross(up, back, right);
    glm_vec3_normalize(right);
    glm_vec3_cross(back, right, cam_up);
    /* Seen from distance d, a corner at (x, y) across the view and z towards the eye (from the
     * bounds' centre) fits where |x - tx| <= (d - z) fx and |y - ty| <= (d - z) fy, (tx, ty) the
     * target's shift across the view, fy = tan(fov_y / 2) with the margin, fx = fy aspect. Two
     * corners i, j fit together on an axis where x_i - x_j <= (2 d - z_i - z_j) f: d is the
     * largest (x_i - x_j) / (2 f) + (z_i + z_j) / 2 over the pairs and axes, and the shift the
     * middle of what then fits. */
    const float fy = FIT_MARGIN * tanf(0.5f * c->fov_y), fx = fy * (aspect > 0.0f ? aspect : 1.0f);
    float across[8][2], depth[8];
    vec3 centre;
    for (int k = 0; k < 3; ++k) {
        centre[k] = 0.5f * (lo[k] + hi[k]);
    }
    for (int corner = 0; corner < 8; ++corner) {
        vec3 rel;
        for (int k = 0; k < 3; ++k) {
            rel[k] = (corner >> k & 1 ? hi[k] : lo[k]) - centre[k];
        }
        across[corner][0] = glm_vec3_dot(rel, right);
        across[corner][1] = glm_vec3_dot(rel, cam_up);
        depth[corner] = glm_vec3_dot(rel, back);
    }
    const float f[2] = {fx, fy};
    const float nearest = 1e-3f * c->scene_radius; /* every corner this far in front, at least */
    float d = nearest;
    for (int i = 0; i < 8; ++i) {
        d = fmaxf(d, depth[i] + nearest);
        for (int j = 0; j < 8; ++j) {
            for (int a = 0; a < 2; ++a) {
                const float need =
                    (across[i][a] - across[j][a]) / (2.0f * f[a]) + 0.5f * (depth[i] + depth[j]);
                d = fmaxf(d, need);
            }
        }
    }
    float shift[2];
    for (int a = 0; a < 2; ++a) {
        float from = -INFINITY, to = INFINITY; /* the shifts at which every corner fits */
        for (int i = 0; i < 8; ++i) {
            from = fmaxf(from, across[i][a] - (d - depth[i]) * f[a]);
            to = fminf(to, across[i][a] + (d - depth[i]) * f[a]);
        }
        shift[a] = 0.5f * (from + to);
    }
    for (int k = 0; k < 3; ++k) {
        c->goal.target[k] = centre[k] + shift[0] * right[k] + shift[1] * cam_up[k];
    }
    c->goal.distance = d;
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
