/* SPDX-License-Identifier: MIT
 * nbsim — mesh walls in the CPU reference (cpu_mesh.h): each body's centre taken into each
 * mesh's frame, the triangles of the grid cells its sphere overlaps tested, the hits filtered
 * (mesh_contact.h) and each kept one applied with its history. */
#include "cpu/cpu_mesh.h"

#include <stdlib.h>
#include <string.h>

#include "core/omp.h"

void sim_cpu_mesh_destroy(sim_cpu_mesh **cm) {
    if (*cm == NULL) {
        return;
    }
    free((*cm)->meshes);
    free((*cm)->pose);
    for (int t = 0; t < 2; ++t) {
        free((*cm)->table[t]);
        free((*cm)->used[t]);
    }
    free(*cm);
    *cm = NULL;
}

sim_status sim_cpu_mesh_resize(sim_cpu_mesh *cm, uint32_t n, sim_error *err) {
    if (cm->table[0] != NULL && cm->n == n) {
        return SIM_OK;
    }
    sim_cpu_mesh_slot *table[2];
    uint8_t *used[2];
    const size_t rows = n ? n : 1;
    for (int t = 0; t < 2; ++t) {
        table[t] = malloc(rows * CPU_MESH_SLOTS * sizeof *table[t]);
        used[t] = calloc(rows, sizeof *used[t]);
    }
    if (table[0] == NULL || table[1] == NULL || used[0] == NULL || used[1] == NULL) {
        for (int t = 0; t < 2; ++t) {
            free(table[t]);
            free(used[t]);
        }
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "mesh walls: cannot allocate the contact histories of %u bodies", n);
    }
    for (int t = 0; t < 2; ++t) {
        free(cm->table[t]);
        free(cm->used[t]);
        cm->table[t] = table[t];
        cm->used[t] = used[t];
    }
    cm->n = n;
    cm->last = 0;
    cm->overflow = UINT32_MAX;
    return SIM_OK;
}

void sim_cpu_mesh_clear_history(sim_cpu_mesh *cm) {
    for (int t = 0; t < 2 && cm != NULL; ++t) {
        memset(cm->used[t], 0, (size_t)(cm->n ? cm->n : 1) * sizeof *cm->used[t]);
    }
}

sim_status sim_cpu_mesh_set(sim_cpu_mesh **cm, sim_mesh *const *meshes, int count, uint32_t n,
                            sim_error *err) {
    if (count <= 0) {
        sim_cpu_mesh_destroy(cm);
        return SIM_OK;
    }
    sim_cpu_mesh *m = calloc(1, sizeof *m);
    if (m != NULL) {
        m->meshes = malloc((size_t)count * sizeof *m->meshes);
        m->pose = malloc((size_t)count * sizeof *m->pose);
    }
    if (m == NULL || m->meshes == NULL || m->pose == NULL) {
        sim_cpu_mesh_destroy(&m);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh walls: cannot allocate %d meshes", count);
    }
    memcpy(m->meshes, meshes, (size_t)count * sizeof *m->meshes);
    m->count = count;
    const sim_status st = sim_cpu_mesh_resize(m, n, err);
    if (st != SIM_OK) {
        sim_cpu_mesh_destroy(&m);
        return st;
    }
    sim_cpu_mesh_destroy(cm);
    *cm = m;
    sim_cpu_mesh_begin(m);
    return SIM_OK;
}

void sim_cpu_mesh_begin(sim_cpu_mesh *cm) {
    for (int k = 0; k < cm->count; ++k) {
        cm->pose[k] = sim_mesh_pose_at(cm->meshes[k], cm->time);
    }
}

/* Body i's history with feature key of mesh k in the last step's table; none: the history of a
 * feature next to it (a common vertex) that it touched then and does not touch now (fresh: the
 * slots already written this step), else zero. */
static sim_contact_history_d find(const sim_cpu_mesh *cm, uint32_t i, uint32_t k, uint32_t key,
                                  const uint32_t *verts, const sim_cpu_mesh_slot *fresh,
                                  int fresh_count) {
    const sim_cpu_mesh_slot *row = cm->table[cm->last] + (size_t)i * CPU_MESH_SLOTS;
    const int used = cm->used[cm->last][i];
    for (int s = 0; s < used; ++s) {
        if (row[s].mesh == k && row[s].key == key) {
            return row[s].h;
        }
    }
    const sim_mesh *m = cm->meshes[k];
    for (int s = 0; s < used; ++s) {
        if (row[s].mesh != k) {
            continue;
        }
        int taken = 0;
        for (int f = 0; f < fresh_count && !taken; ++f) {
            taken = fresh[f].mesh == k && fresh[f].key == row[s].key;
        }
        /* the old feature's vertices */
        const uint32_t kind = (uint32_t)SIM_MESH_KEY_KIND(row[s].key);
        const uint32_t idx = SIM_MESH_KEY_INDEX(row[s].key);
        uint32_t ov[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
        if (kind == 0 && idx < m->nt) {
            memcpy(ov, m->tri[idx].v, sizeof ov);
        } else if (kind == 1 && idx < m->ne) {
            ov[0] = m->edge_vert[idx][0];
            ov[1] = m->edge_vert[idx][1];
        } else {
            ov[0] = idx;
        }
        for (int a = 0; a < 3 && !taken; ++a) {
            for (int b = 0; b < 3; ++b) {
                if (verts[a] != UINT32_MAX && verts[a] == ov[b]) {
                    return row[s].h;
                }
            }
        }
    }
    const sim_contact_history_d none = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
    return none;
}

sim_vec3d sim_cpu_mesh_body(sim_cpu_mesh *cm, const sim_physics *ph, uint32_t i, sim_vec4d pos,
                            sim_vec4d vel, sim_vec3d w, double dt, sim_vec3d *torque,
                            double *energy) {
    sim_vec3d force = {0.0, 0.0, 0.0};
    sim_vec3d tq = {0.0, 0.0, 0.0};
    const int to = 1 - cm->last;
    sim_cpu_mesh_slot *row = cm->table[to] + (size_t)i * CPU_MESH_SLOTS;
    int used = 0;
    const double r = pos.w;
    const sim_vec3d centre = {pos.x, pos.y, pos.z};
    for (int k = 0; k < cm->count; ++k) {
        const sim_mesh *m = cm->meshes[k];
        const sim_mesh_pose_d *pose = &cm->pose[k];
        const sim_vec3d p = sim_mesh_to_frame_d(pose, centre);
        const sim_vec3d lo = {p.x - r, p.y - r, p.z - r}, hi = {p.x + r, p.y + r, p.z + r};
        int c0[3], c1[3];
        if (!sim_mesh_cells(m, lo, hi, c0, c1)) {
            continue;
        }
        sim_mesh_hit_d hits[SIM_MESH_HITS];
        int count = 0;
        for (int z = c0[2]; z <= c1[2]; ++z) {
            for (int y = c0[1]; y <= c1[1]; ++y) {
                for (int x = c0[0]; x <= c1[0]; ++x) {
                    const size_t cell = sim_mesh_cell_index(m, x, y, z);
                    for (uint32_t s = m->cell_start[cell]; s < m->cell_start[cell + 1]; ++s) {
                        const uint32_t t = m->cell_tri[s];
                        const sim_mesh_tri_ids *ids = &m->tri[t];
                        sim_mesh_hit_d hit;
                        if (sim_mesh_hit_triangle_d(p, r, m->vert[ids->v[0]], m->vert[ids->v[1]],
                                                    m->vert[ids->v[2]], t, ids, &hit)) {
                            sim_mesh_hit_add_d(hits, &count, &hit);
                        }
                    }
                }
            }
        }
        sim_mesh_hits_filter_d(hits, count, p, r);
        for (int h = 0; h < count; ++h) {
            if (!hits[h].keep || !(hits[h].d2 > 0.0)) { /* the centre on the wall: no normal */
                continue;
            }
            const double d = sqrt(hits[h].d2);
            const sim_vec3d nm = {(p.x - hits[h].q.x) / d, (p.y - hits[h].q.y) / d,
                                  (p.z - hits[h].q.z) / d};
            const sim_vec3d n = sim_mesh_rotate_d(pose, nm);
            const sim_vec3d qr = sim_mesh_rotate_d(pose, hits[h].q);
            const sim_vec3d q = {pose->origin.x + qr.x, pose->origin.y + qr.y,
                                 pose->origin.z + qr.z};
            sim_contact_history_d hist =
                find(cm, i, (uint32_t)k, hits[h].key, hits[h].v, row, used);
            sim_mesh_contact_d(pos, vel, w, n, r - d, sim_mesh_wall_velocity_d(pose, q),
                               pose->omega, &hist, ph, dt, &force, &tq, energy);
            if (used < CPU_MESH_SLOTS) {
                row[used].mesh = (uint32_t)k;
                row[used].key = hits[h].key;
                row[used].h = hist;
                ++used;
            } else {
                SIM_OMP(omp critical(cpu_mesh_overflow)) {
                    if (i < cm->overflow) {
                        cm->overflow = i;
                    }
                }
            }
        }
    }
    cm->used[to][i] = (uint8_t)used;
    if (torque != NULL) {
        torque->x += tq.x;
        torque->y += tq.y;
        torque->z += tq.z;
    }
    return force;
}

sim_status sim_cpu_mesh_check(sim_cpu_mesh *cm, sim_error *err) {
    if (cm == NULL || cm->overflow == UINT32_MAX) {
        return SIM_OK;
    }
    const uint32_t i = cm->overflow;
    cm->overflow = UINT32_MAX;
    return sim_fail(err, SIM_UNSTABLE,
                    "mesh walls: body %u touches more than %d mesh faces, edges and vertices at "
                    "once, the histories it has room for (a mesh far finer than the body, or "
                    "bodies pushed deep into it: a stiffer contact or a smaller step)",
                    i, CPU_MESH_SLOTS);
}

void sim_cpu_mesh_commit(sim_cpu_mesh *cm) {
    if (cm != NULL) {
        cm->last = 1 - cm->last;
    }
}
