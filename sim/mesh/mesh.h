/* SPDX-License-Identifier: MIT
 * nbsim — private: a loaded mesh wall (include/nbsim/mesh.h): its triangles in its own frame,
 * welded, with their topology, its motion, and a uniform grid of its triangles in that frame.
 *
 * The mesh is rigid, so nothing of it moves but its frame: a sphere's centre is taken into the
 * frame (sim_mesh_to_frame, mesh_contact.h) and looks its cell up in a grid built once when the
 * mesh is loaded. No rebinning as the mesh moves or turns, and the pose at any time is a formula
 * of the time alone (sim_mesh_pose_at): a run's mesh phase is its clock. */
#ifndef SIM_MESH_MESH_H
#define SIM_MESH_MESH_H

#include "nbsim/mesh.h"
#include "physics/mesh_contact.h"

/* At most this many cells per axis of a mesh's grid. */
#define SIM_MESH_GRID_MAX 128

struct sim_mesh {
    char name[256];             /* the file, for messages */
    uint32_t nv, nt, ne;        /* welded vertices, triangles, edges */
    sim_vec3d *vert;            /* nv, in the mesh's frame [m] */
    sim_mesh_tri_ids *tri;      /* nt */
    uint32_t (*edge_vert)[2];   /* ne: an edge's two vertices */
    uint32_t (*edge_face)[2];   /* ne: its triangles (the second UINT32_MAX on a border) */
    sim_vec3d axis_point;       /* the frame's origin at t = 0 [m] */
    sim_vec3d velocity;         /* [m/s] */
    sim_vec3d axis;             /* unit, or zero */
    double omega;               /* [rad/s] */
    /* the grid: cells of side `cell` from `lo`, dims[0] dims[1] dims[2] of them, x fastest;
     * cell c's triangles are cell_tri[cell_start[c] .. cell_start[c + 1]) */
    sim_vec3d lo;
    double cell;
    int dims[3];
    uint32_t *cell_start, *cell_tri;
};

/* Cell (x, y, z) of m's grid, as an index into cell_start (x fastest). */
static inline size_t sim_mesh_cell_index(const struct sim_mesh *m, int x, int y, int z) {
    return ((size_t)z * (size_t)m->dims[1] + (size_t)y) * (size_t)m->dims[0] + (size_t)x;
}

/* The mesh's pose at time t [s]. */
sim_mesh_pose_d sim_mesh_pose_at(const sim_mesh *m, double t);
/* The cells [c0, c1] (inclusive, per axis) that box [lo, hi] of the mesh's frame overlaps;
 * 0 when it misses the grid. */
int sim_mesh_cells(const sim_mesh *m, sim_vec3d lo, sim_vec3d hi, int c0[3], int c1[3]);

#endif /* SIM_MESH_MESH_H */
