/* SPDX-License-Identifier: MIT
 * nbsim — an orbit camera around a target: yaw about the world's up axis and pitch clamped
 * short of the poles (so it never flips over), pan in the view plane, zoom by distance. Input
 * moves goal values; the camera eases towards them each frame, so motion stays smooth even
 * when frames are slow. */
#ifndef RENDER_CAMERA_H
#define RENDER_CAMERA_H

typedef struct {
    float yaw, pitch; /* [rad]; pitch in (-pi/2, pi/2) */
    float distance;   /* eye to target [world units] */
    float target[3];
} render_camera_pose;

typedef struct {
    render_camera_pose now, goal;
    float up[3], ref[3], side[3]; /* world frame: up, and two horizontal axes */
    float fov_y;                  /* vertical field of view [rad] */
    float scene_radius;           /* radius of what was fitted (for clip planes) */
} render_camera;

/* up need not be normalised; a zero vector means +y. */
void render_camera_init(render_camera *c, const float up[3]);
void render_camera_set_up(render_camera *c, const float up[3]);
/* Frames the cube [-half, half]^3 from a three-quarter view. immediate: jump, else ease. */
void render_camera_fit(render_camera *c, float half, int immediate);
/* Frames the box [lo, hi] (the bodies' bounds) from the same view: the target at its centre, the
 * distance the nearest at which its eight corners fit a viewport of this aspect (w / h), with a
 * margin, so a heap at the bottom of a big box fills the view. clip_half: the half-width of the
 * cube everything drawn stays in (the simulation box), for the clip planes and the zoom's
 * limits. immediate: jump, else ease. */
void render_camera_fit_bounds(render_camera *c, const float lo[3], const float hi[3],
                              float clip_half, float aspect, int immediate);
void render_camera_orbit(render_camera *c, float dx_px, float dy_px);
/* Pans so the point under the cursor follows it; viewport_h is the window height [px]. */
void render_camera_pan(render_camera *c, float dx_px, float dy_px, float viewport_h);
/* steps > 0 zooms in (one mouse-wheel notch = 1). */
void render_camera_zoom(render_camera *c, float steps);
/* Eases the pose towards the goal; dt_s is the frame time [s]. */
void render_camera_update(render_camera *c, float dt_s);
/* Column-major view and projection matrices for a viewport of this aspect (w / h). */
void render_camera_matrices(const render_camera *c, float aspect, float view[16], float proj[16]);

#endif /* RENDER_CAMERA_H */
