/* SPDX-License-Identifier: MIT
 * nbsim — sphere impostors: every body in one instanced draw call, ray-cast per fragment to a
 * true sphere (exact perspective silhouette and depth), coloured through a colormap texture. */
#ifndef RENDER_SPHERES_H
#define RENDER_SPHERES_H

#include "bodies.h"

typedef enum {
    RENDER_COLOR_SCALAR = 0, /* the bodies' scalar buffer (speed) */
    RENDER_COLOR_RADIUS = 1,
    RENDER_COLOR_INDEX = 2
} render_color_source;

typedef struct {
    render_color_source source;
    float range[2]; /* value mapped to the colormap's ends (scalar and radius sources) */
    int colormap;   /* row of the colormap texture (render_colormap) */
} render_sphere_style;

typedef struct {
    GLuint program, vao;
    GLint u_view, u_proj, u_source, u_range, u_count, u_colormap, u_row;
} render_spheres;

sim_status render_spheres_create(render_spheres *s, sim_error *err);
void render_spheres_destroy(render_spheres *s);
/* view and proj are column-major 4x4 matrices; colormap_tex from render_colormap_texture. */
void render_spheres_draw(render_spheres *s, const render_bodies *bodies, const float view[16],
                         const float proj[16], GLuint colormap_tex,
                         const render_sphere_style *style);

#endif /* RENDER_SPHERES_H */
