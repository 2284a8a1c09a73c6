/* SPDX-License-Identifier: MIT
 * nbsim — the sphere-triangle contact's formulas (mesh_contact.h says what they do and why),
 * included by mesh_contact.h twice with SIM_R, SIM_V3, SIM_V4, SIM_PH, SIM_HIST, SIM_FN, SIM_K,
 * SIM_SQRT, SIM_FABS, SIM_MESH_HIT, SIM_MESH_POSE and SIM_MESH_PLANE_TOL defined, which it
 * undefines at its end. No include guard on purpose. C and C++ (nvcc): no compound literals. */

SIM_HD SIM_V3 SIM_FN(sim_mesh_v3)(SIM_R x, SIM_R y, SIM_R z) {
    SIM_V3 v;
    v.x = x;
    v.y = y;
    v.z = z;
    return v;
}

SIM_HD SIM_V3 SIM_FN(sim_mesh_sub)(SIM_V3 a, SIM_V3 b) {
    return SIM_FN(sim_mesh_v3)(a.x - b.x, a.y - b.y, a.z - b.z);
}

SIM_HD SIM_R SIM_FN(sim_mesh_dot)(SIM_V3 a, SIM_V3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

SIM_HD SIM_V3 SIM_FN(sim_mesh_axpy)(SIM_V3 a, SIM_R s, SIM_V3 b) { /* a + s b */
    return SIM_FN(sim_mesh_v3)(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z);
}

/* The point of triangle (a, b, c) nearest p, and in *feature which of its Voronoi regions p is
 * in (SIM_TRI_FACE, SIM_TRI_EDGE(k), SIM_TRI_VERTEX(k)): Ericson's ClosestPtPointTriangle, whose
 * tests are the regions' borders, so the feature and the point agree. A point on a border takes
 * the edge or vertex: the same point and distance as the face would give. */
SIM_HD SIM_V3 SIM_FN(sim_closest_on_triangle)(SIM_V3 p, SIM_V3 a, SIM_V3 b, SIM_V3 c,
                                              int *feature) {
    const SIM_V3 ab = SIM_FN(sim_mesh_sub)(b, a), ac = SIM_FN(sim_mesh_sub)(c, a);
    const SIM_V3 ap = SIM_FN(sim_mesh_sub)(p, a);
    const SIM_R d1 = SIM_FN(sim_mesh_dot)(ab, ap), d2 = SIM_FN(sim_mesh_dot)(ac, ap);
    if (d1 <= SIM_K(0.0) && d2 <= SIM_K(0.0)) {
        *feature = SIM_TRI_VERTEX(0);
        return a;
    }
    const SIM_V3 bp = SIM_FN(sim_mesh_sub)(p, b);
    const SIM_R d3 = SIM_FN(sim_mesh_dot)(ab, bp), d4 = SIM_FN(sim_mesh_dot)(ac, bp);
    if (d3 >= SIM_K(0.0) && d4 <= d3) {
        *feature = SIM_TRI_VERTEX(1);
        return b;
    }
    const SIM_R vc = d1 * d4 - d3 * d2;
    if (vc <= SIM_K(0.0) && d1 >= SIM_K(0.0) && d3 <= SIM_K(0.0)) {
        *feature = SIM_TRI_EDGE(0);
        return SIM_FN(sim_mesh_axpy)(a, d1 / (d1 - d3), ab);
    }
    const SIM_V3 cp = SIM_FN(sim_mesh_sub)(p, c);
    const SIM_R d5 = SIM_FN(sim_mesh_dot)(ab, cp), d6 = SIM_FN(sim_mesh_dot)(ac, cp);
    if (d6 >= SIM_K(0.0) && d5 <= d6) {
        *feature = SIM_TRI_VERTEX(2);
        return c;
    }
    const SIM_R vb = d5 * d2 - d1 * d6;
    if (vb <= SIM_K(0.0) && d2 >= SIM_K(0.0) && d6 <= SIM_K(0.0)) {
        *feature = SIM_TRI_EDGE(2);
        return SIM_FN(sim_mesh_axpy)(a, d2 / (d2 - d6), ac);
    }
    const SIM_R va = d3 * d6 - d5 * d4;
    if (va <= SIM_K(0.0) && d4 - d3 >= SIM_K(0.0) && d5 - d6 >= SIM_K(0.0)) {
        *feature = SIM_TRI_EDGE(1);
        return SIM_FN(sim_mesh_axpy)(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)),
                                     SIM_FN(sim_mesh_sub)(c, b));
    }
    *feature = SIM_TRI_FACE;
    const SIM_R denom = SIM_K(1.0) / (va + vb + vc);
    return SIM_FN(sim_mesh_axpy)(SIM_FN(sim_mesh_axpy)(a, vb * denom, ab), vc * denom, ac);
}

/* Triangle tri (a, b, c) with topology ids against a sphere at p of radius r (mesh frame): 1
 * and *hit filled when its nearest point is closer than r, else 0. */
SIM_HD int SIM_FN(sim_mesh_hit_triangle)(SIM_V3 p, SIM_R r, SIM_V3 a, SIM_V3 b, SIM_V3 c,
                                         uint32_t tri, const sim_mesh_tri_ids *ids,
                                         SIM_MESH_HIT *hit) {
    int feature;
    const SIM_V3 q = SIM_FN(sim_closest_on_triangle)(p, a, b, c, &feature);
    const SIM_V3 d = SIM_FN(sim_mesh_sub)(p, q);
    const SIM_R d2 = SIM_FN(sim_mesh_dot)(d, d);
    if (!(d2 < r * r)) {
        return 0;
    }
    hit->q = q;
    hit->d2 = d2;
    hit->keep = 1;
    for (int k = 0; k < 3; ++k) {
        hit->v[k] = hit->e[k] = UINT32_MAX;
    }
    if (feature == SIM_TRI_FACE) {
        for (int k = 0; k < 3; ++k) {
            hit->v[k] = ids->v[k];
            hit->e[k] = ids->e[k];
        }
        hit->key = SIM_MESH_KEY(0, tri);
    } else if (feature < SIM_TRI_VERTEX(0)) {
        const int k = feature - SIM_TRI_EDGE(0);
        hit->v[0] = ids->v[k];
        hit->v[1] = ids->v[(k + 1) % 3];
        hit->key = SIM_MESH_KEY(1, ids->e[k]);
    } else {
        hit->v[0] = ids->v[feature - SIM_TRI_VERTEX(0)];
        hit->key = SIM_MESH_KEY(2, hit->v[0]);
    }
    return 1;
}

/* Adds *hit to hits[0 .. *count) unless its feature is there already (reached from another
 * triangle: the same point) or SIM_MESH_HITS are there. */
SIM_HD void SIM_FN(sim_mesh_hit_add)(SIM_MESH_HIT *hits, int *count, const SIM_MESH_HIT *hit) {
    for (int k = 0; k < *count; ++k) {
        if (hits[k].key == hit->key) {
            return;
        }
    }
    if (*count < SIM_MESH_HITS) {
        hits[(*count)++] = *hit;
    }
}

SIM_HD int SIM_FN(sim_mesh_has)(const uint32_t *ids, int count, uint32_t id) {
    for (int k = 0; k < count; ++k) {
        if (ids[k] == id) {
            return 1;
        }
    }
    return 0;
}

/* Marks which of the hits of a sphere at p of radius r are contacts (keep), by the rules in
 * mesh_contact.h: faces always; an edge or vertex not of a face hit nor in its plane; a vertex
 * not ending a kept edge. */
SIM_HD void SIM_FN(sim_mesh_hits_filter)(SIM_MESH_HIT *hits, int count, SIM_V3 p, SIM_R r) {
    for (int i = 0; i < count; ++i) {
        const int kind = SIM_MESH_KEY_KIND(hits[i].key);
        hits[i].keep = 1;
        if (kind == 0) {
            continue;
        }
        const uint32_t id = SIM_MESH_KEY_INDEX(hits[i].key);
        for (int j = 0; j < count && hits[i].keep; ++j) {
            if (SIM_MESH_KEY_KIND(hits[j].key) != 0) {
                continue;
            }
            if (kind == 1 ? SIM_FN(sim_mesh_has)(hits[j].e, 3, id)
                          : SIM_FN(sim_mesh_has)(hits[j].v, 3, id)) {
                hits[i].keep = 0;
                break;
            }
            /* in the face's plane: (q_i - q_j) . (p - q_j) ~ 0, the normal unnormalised */
            const SIM_V3 nj = SIM_FN(sim_mesh_sub)(p, hits[j].q);
            const SIM_V3 dq = SIM_FN(sim_mesh_sub)(hits[i].q, hits[j].q);
            const SIM_R scale = r + SIM_FABS(hits[i].q.x) + SIM_FABS(hits[i].q.y) +
                                SIM_FABS(hits[i].q.z);
            const SIM_R off = SIM_FN(sim_mesh_dot)(dq, nj);
            if (hits[j].d2 > SIM_K(0.0) &&
                off * off <= SIM_MESH_PLANE_TOL * SIM_MESH_PLANE_TOL * scale * scale * hits[j].d2) {
                hits[i].keep = 0;
            }
        }
    }
    for (int i = 0; i < count; ++i) {
        if (!hits[i].keep || SIM_MESH_KEY_KIND(hits[i].key) != 2) {
            continue;
        }
        for (int j = 0; j < count; ++j) {
            if (hits[j].keep && SIM_MESH_KEY_KIND(hits[j].key) == 1 &&
                SIM_FN(sim_mesh_has)(hits[j].v, 2, hits[i].v[0])) {
                hits[i].keep = 0;
                break;
            }
        }
    }
}

/* ---- A mesh's pose: between its frame and the world ---- */

/* rot v */
SIM_HD SIM_V3 SIM_FN(sim_mesh_rotate)(const SIM_MESH_POSE *m, SIM_V3 v) {
    return SIM_FN(sim_mesh_v3)(m->rot[0] * v.x + m->rot[1] * v.y + m->rot[2] * v.z,
                               m->rot[3] * v.x + m->rot[4] * v.y + m->rot[5] * v.z,
                               m->rot[6] * v.x + m->rot[7] * v.y + m->rot[8] * v.z);
}

/* A world point x [m] in the mesh's frame: rot^T (x - origin). */
SIM_HD SIM_V3 SIM_FN(sim_mesh_to_frame)(const SIM_MESH_POSE *m, SIM_V3 x) {
    const SIM_V3 d = SIM_FN(sim_mesh_sub)(x, m->origin);
    return SIM_FN(sim_mesh_v3)(m->rot[0] * d.x + m->rot[3] * d.y + m->rot[6] * d.z,
                               m->rot[1] * d.x + m->rot[4] * d.y + m->rot[7] * d.z,
                               m->rot[2] * d.x + m->rot[5] * d.y + m->rot[8] * d.z);
}

/* The wall's velocity [m/s] at world point x: vel + omega x (x - origin). */
SIM_HD SIM_V3 SIM_FN(sim_mesh_wall_velocity)(const SIM_MESH_POSE *m, SIM_V3 x) {
    const SIM_V3 d = SIM_FN(sim_mesh_sub)(x, m->origin);
    const SIM_V3 w = m->omega;
    return SIM_FN(sim_mesh_v3)(m->vel.x + w.y * d.z - w.z * d.y, m->vel.y + w.z * d.x - w.x * d.z,
                               m->vel.z + w.x * d.y - w.y * d.x);
}

/* ---- The contact ---- */

/* A body (pos, vel, spin w) against a wall at one kept hit: unit normal n from the wall to the
 * centre, overlap d > 0 [m], the wall's velocity vwall at the contact point and its angular
 * velocity wwall, all in the world frame; h the contact's history (friction). Adds the force and
 * torque on the body; energy gets the elastic and springs' energy. sim_friction_wall with a
 * plane of any normal and a moving wall. */
SIM_HD void SIM_FN(sim_mesh_contact)(SIM_V4 pos, SIM_V4 vel, SIM_V3 w, SIM_V3 n, SIM_R d,
                                     SIM_V3 vwall, SIM_V3 wwall, SIM_HIST *h, const SIM_PH *ph,
                                     SIM_R dt, SIM_V3 *force, SIM_V3 *torque, SIM_R *energy) {
    SIM_V3 vr, wr, dw;
    vr.x = vel.x - vwall.x;
    vr.y = vel.y - vwall.y;
    vr.z = vel.z - vwall.z;
    const SIM_R vn = SIM_FN(sim_mesh_dot)(vr, n);
    const SIM_R fn = SIM_FN(sim_normal_force)(d, vn, vel.w, ph, energy);
    force->x += fn * n.x;
    force->y += fn * n.y;
    force->z += fn * n.z;
    if (!(ph->tangential.friction > SIM_K(0.0)) && !(ph->rolling.rolling_friction > SIM_K(0.0))) {
        return;
    }
    const SIM_R eta_n = SIM_FN(sim_normal_dashpot)(d, vel.w, &ph->normal);
    wr.x = pos.w * w.x;
    wr.y = pos.w * w.y;
    wr.z = pos.w * w.z;
    dw.x = w.x - wwall.x;
    dw.y = w.y - wwall.y;
    dw.z = w.z - wwall.z;
    SIM_FN(sim_friction_apply)
    (n, d, fn, eta_n, vr, wr, dw, pos.w, pos.w, pos.w, h, ph, dt, force, torque, NULL, energy);
}

#undef SIM_R
#undef SIM_V3
#undef SIM_V4
#undef SIM_PH
#undef SIM_HIST
#undef SIM_FN
#undef SIM_K
#undef SIM_SQRT
#undef SIM_FABS
#undef SIM_MESH_HIT
#undef SIM_MESH_POSE
#undef SIM_MESH_PLANE_TOL
