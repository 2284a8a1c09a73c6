/* SPDX-License-Identifier: MIT
 * nbsim — private: mesh walls in the CPU reference (include/nbsim/mesh.h): the meshes' clock,
 * their contacts with each body in the body phase, and those contacts' friction histories.
 *
 * The histories: CPU_MESH_SLOTS slots per body, keyed by (mesh, feature key: mesh_contact.h),
 * two tables like friction's (cpu_friction.h): the last completed step's, read, and the step's
 * own, written, swapped when the stepper commits the step's histories. A body's slots are its own
 * thread's (the body phase goes body by body), so no atomics. A contact that moves to a
 * neighbouring feature (face to shared edge to the next face as a sphere rolls on) takes the
 * history of the feature it left: one with a common vertex that the body touched last step and
 * does not touch now. A body touching more features at once than its slots stops the run
 * (SIM_UNSTABLE naming it), as friction's tables do, instead of losing a history: six is two
 * more than a sphere in the corner of a box of mesh walls (three faces) and an edge needs.
 *
 * The clock: the meshes' time [s] advances by dt in each step's first half (the drift), so the
 * body phase sees the meshes where they are at the new positions' time; a long step saves and
 * restores it with the bodies. It starts at 0 when the meshes are set. */
#ifndef SIM_CPU_MESH_H
#define SIM_CPU_MESH_H

#include "mesh/mesh.h"
#include "physics/physics.h"

#define CPU_MESH_SLOTS 6

typedef struct {
    uint32_t mesh, key;
    sim_contact_history_d h;
} sim_cpu_mesh_slot;

typedef struct sim_cpu_mesh {
    sim_mesh **meshes; /* borrowed */
    sim_mesh_pose_d *pose;
    int count;
    uint32_t n;
    double time, save_time;
    sim_cpu_mesh_slot *table[2];
    uint8_t *used[2];
    int last;
    uint32_t overflow; /* the lowest body whose contacts outnumbered its slots, or UINT32_MAX */
} sim_cpu_mesh;

/* *cm for meshes[0 .. count) and n bodies (count 0: none, freed); the clock from 0, no
 * histories. */
sim_status sim_cpu_mesh_set(sim_cpu_mesh **cm, sim_mesh *const *meshes, int count, uint32_t n,
                            sim_error *err);
/* n bodies from now on: the histories dropped when n changes. */
sim_status sim_cpu_mesh_resize(sim_cpu_mesh *cm, uint32_t n, sim_error *err);
void sim_cpu_mesh_clear_history(sim_cpu_mesh *cm);
void sim_cpu_mesh_destroy(sim_cpu_mesh **cm);
/* The poses at the clock's time, before a body phase. */
void sim_cpu_mesh_begin(sim_cpu_mesh *cm);
/* Body i's contacts with every mesh: returns their force, adds their torque to *torque and their
 * energy to *energy (either may be NULL); w its spin; dt the step the histories advance by (0:
 * the forces alone). */
sim_vec3d sim_cpu_mesh_body(sim_cpu_mesh *cm, const sim_physics *ph, uint32_t i, sim_vec4d pos,
                            sim_vec4d vel, sim_vec3d w, double dt, sim_vec3d *torque,
                            double *energy);
/* SIM_UNSTABLE naming a body that touched more features than its slots. */
sim_status sim_cpu_mesh_check(sim_cpu_mesh *cm, sim_error *err);
void sim_cpu_mesh_commit(sim_cpu_mesh *cm);

#endif /* SIM_CPU_MESH_H */
