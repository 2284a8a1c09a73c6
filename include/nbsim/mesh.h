/* SPDX-License-Identifier: MIT
 * nbsim — triangle-mesh walls: STL files (ASCII or binary) loaded as rigid walls, placed by a
 * scale and an offset, moving at a constant velocity and turning about an axis (a drum, a moving
 * plate). The contact is the box walls' law against the nearest point of the mesh
 * (sim/physics/mesh_contact.h); the topology is built when a mesh is loaded and bad meshes are
 * refused in one line (sim/mesh/mesh.c). */
#ifndef SIM_MESH_H
#define SIM_MESH_H

#include "nbsim/base.h"
#include "nbsim/output_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a mesh is placed and moves. A vertex x of the file is at
 *   x(t) = axis_point + velocity t + R(omega t) (scale x + offset - axis_point)
 * at time t [s], R the rotation about the unit vector of `axis` (right-handed); axis zero: no
 * rotation. */
typedef struct {
    char path[SIM_PATH_MAX]; /* the STL file */
    double scale;            /* file units to m (default 1) */
    sim_vec3d offset;        /* [m], after scaling */
    sim_vec3d velocity;      /* [m/s] */
    sim_vec3d axis_point;    /* a point of the rotation axis at t = 0 [m] */
    sim_vec3d axis;          /* its direction (any length); zero: no rotation */
    double omega;            /* angular speed about it [rad/s] */
} sim_mesh_spec;

/* The most mesh walls one session holds. */
#define SIM_MESHES_MAX 8

/* Scale 1, everything else zero, no path. */
sim_mesh_spec sim_mesh_spec_default(void);

typedef struct sim_mesh sim_mesh;

/* Reads spec->path (binary when its size is 84 + 50 n for the count n its header gives, else
 * ASCII), welds equal corners, builds the topology and the mesh's grid. SIM_IO: unreadable;
 * SIM_PARSE: malformed; SIM_BAD_ARGUMENT: empty, NaN or infinite coordinates, a zero-area
 * triangle, an edge of more than two triangles, a bad scale or axis; one line naming the file
 * and, where there is one, the triangle. */
sim_status sim_mesh_load(const sim_mesh_spec *spec, sim_mesh **out, sim_error *err);
/* The same from count triangles of 9 coordinates each (corner 0 xyz, 1, 2), in file units; name
 * stands for the path in messages. */
sim_status sim_mesh_from_triangles(const sim_mesh_spec *spec, const double *xyz, uint32_t count,
                                   const char *name, sim_mesh **out, sim_error *err);
void sim_mesh_destroy(sim_mesh *m);

uint32_t sim_mesh_triangle_count(const sim_mesh *m);
/* Triangle tri's corners in the world at time t [s] (for drawing and tests). */
void sim_mesh_world_triangle(const sim_mesh *m, double t, uint32_t tri, sim_vec3d out[3]);

#ifdef __cplusplus
}
#endif

#endif /* SIM_MESH_H */
