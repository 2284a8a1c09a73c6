/* SPDX-License-Identifier: MIT
 * nbsim — sphere-triangle contact for mesh walls (sim/mesh/), written once for host and device
 * and read twice (float for the GPU, double for the CPU reference) as physics.h reads its parts;
 * the formulas are mesh_contact_impl.h's.
 *
 * A triangle is a wall: a sphere of infinite mass and radius, so its contact is the box walls'
 * (contact.h's sim_friction_wall) with the normal from the nearest point of the triangle to the
 * sphere's centre, m_eff = m, R_eff and the lever the sphere's radius, and the relative velocity
 * less the wall's own at that point (a moving or rotating mesh).
 *
 * Which contacts a sphere feels (no bump where triangles meet). The nearest point of each
 * triangle within reach is on its face, one of its edges or one of its vertices (the Voronoi
 * regions of the triangle: Ericson, Real-Time Collision Detection, 5.1.5); the hits are keyed by
 * that feature, welded across triangles (sim/mesh/mesh.h), so an edge or vertex reached from two
 * or six triangles is one contact. Then, in order:
 *   - a face hit is always kept;
 *   - an edge or vertex hit is dropped when the feature belongs to a face that has a hit, or
 *     its point lies in the plane of such a face (a flat mesh finer than the sphere: the
 *     triangles beyond the one under the centre are the same plane, already felt);
 *   - a vertex hit is dropped when the vertex ends an edge that has a kept hit.
 * On a flat floor a sphere crossing a shared edge goes from one face contact to the other through
 * an edge contact at the same distance along the same normal: the force is continuous. A sphere
 * in a concave corner keeps a contact per face; on a convex edge or vertex, one. */
#ifndef SIM_PHYSICS_MESH_CONTACT_H
#define SIM_PHYSICS_MESH_CONTACT_H

#include "physics/physics.h"

#include <stdint.h>

/* The feature nearest a point (sim_closest_on_triangle): the face, edge k (from vertex k to
 * vertex k + 1 mod 3) or vertex k, coded face 0, edges 1 + k, vertices 4 + k. */
#define SIM_TRI_FACE 0
#define SIM_TRI_EDGE(k) (1 + (k))
#define SIM_TRI_VERTEX(k) (4 + (k))

/* A feature of a mesh as one 32-bit key, the contact's identity from step to step (its friction
 * history): kind (0 face, 1 edge, 2 vertex) in the top two bits, the welded index below. */
#define SIM_MESH_KEY(kind, index) (((uint32_t)(kind) << 30) | (uint32_t)(index))
#define SIM_MESH_KEY_KIND(key) ((int)((key) >> 30))
#define SIM_MESH_KEY_INDEX(key) ((key) & 0x3fffffffu)
#define SIM_MESH_MAX_FEATURES 0x3fffffffu

/* The hits one sphere collects from one mesh before they are filtered: more are ignored (a
 * sphere reaching more than this many features of one mesh at once sits on a mesh far finer
 * than itself; the filter keeps a handful of them). */
#define SIM_MESH_HITS 16

/* A triangle's topology (sim/mesh/mesh.c builds it once): its welded vertices, and its edges'
 * indices (edge k from v[k] to v[(k + 1) % 3]). */
typedef struct {
    uint32_t v[3], e[3];
} sim_mesh_tri_ids;

/* One triangle's nearest feature within reach of a sphere, in the mesh's frame: the point q, the
 * squared distance d2 to the centre, the feature's key, the vertices it spans (face: 3, edge: 2,
 * vertex: 1; the rest UINT32_MAX), a face's edges, and whether the filter keeps it. */
typedef struct {
    sim_vec3f q;
    float d2;
    uint32_t key;
    uint32_t v[3], e[3];
    int keep;
} sim_mesh_hit_f;
typedef struct {
    sim_vec3d q;
    double d2;
    uint32_t key;
    uint32_t v[3], e[3];
    int keep;
} sim_mesh_hit_d;

/* Where a rigid mesh is at one time: x_world = origin + rot x_mesh (rot row-major), its frame's
 * velocity [m/s] and angular velocity [rad/s] (the wall's velocity at x: vel + omega x (x -
 * origin)). sim/mesh/mesh.c computes it in double for a time; the GPU gets the float copy. */
typedef struct {
    sim_vec3f origin, vel, omega;
    float rot[9];
} sim_mesh_pose_f;
typedef struct {
    sim_vec3d origin, vel, omega;
    double rot[9];
} sim_mesh_pose_d;

#define SIM_R float
#define SIM_V3 sim_vec3f
#define SIM_V4 sim_vec4f
#define SIM_PH sim_physics_f
#define SIM_HIST sim_contact_history_f
#define SIM_FN(name) name##_f
#define SIM_K(c) ((float)(c))
#define SIM_SQRT(x) sqrtf(x)
#define SIM_FABS(x) fabsf(x)
#define SIM_MESH_HIT sim_mesh_hit_f
#define SIM_MESH_POSE sim_mesh_pose_f
/* A point within this fraction of the mesh's scale (the sphere's radius plus the point's largest
 * coordinate) of a face's plane is in it: a few ulp of float, many of double. */
#define SIM_MESH_PLANE_TOL 1e-5f
#include "physics/mesh_contact_impl.h"

#define SIM_R double
#define SIM_V3 sim_vec3d
#define SIM_V4 sim_vec4d
#define SIM_PH sim_physics
#define SIM_HIST sim_contact_history_d
#define SIM_FN(name) name##_d
#define SIM_K(c) ((double)(c))
#define SIM_SQRT(x) sqrt(x)
#define SIM_FABS(x) fabs(x)
#define SIM_MESH_HIT sim_mesh_hit_d
#define SIM_MESH_POSE sim_mesh_pose_d
#define SIM_MESH_PLANE_TOL 1e-10
#include "physics/mesh_contact_impl.h"

#endif /* SIM_PHYSICS_MESH_CONTACT_H */
