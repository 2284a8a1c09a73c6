/* SPDX-License-Identifier: MIT
 * nbsim — mesh walls loaded (mesh.h): the STL readers, the checks, welding and topology, the
 * grid, and the pose at a time. */
#include "mesh/mesh.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sim_mesh_spec sim_mesh_spec_default(void) {
    sim_mesh_spec s;
    memset(&s, 0, sizeof s);
    s.scale = 1.0;
    return s;
}

void sim_mesh_destroy(sim_mesh *m) {
    if (m == NULL) {
        return;
    }
    free(m->vert);
    free(m->tri);
    free(m->edge_vert);
    free(m->edge_face);
    free(m->cell_start);
    free(m->cell_tri);
    free(m);
}

uint32_t sim_mesh_triangle_count(const sim_mesh *m) {
    return m->nt;
}

/* ---- the readers: a file into 9 coordinates a triangle ---- */

/* The whole file into *data (NUL-terminated), its size in *size. */
static sim_status read_file(const char *path, char **data, long *size, sim_error *err) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return sim_fail(err, SIM_IO, "mesh '%s': cannot open: %s", path, strerror(errno));
    }
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) {
        n = ftell(f);
    }
    char *buf = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        const int e = errno;
        free(buf);
        fclose(f);
        return sim_fail(err, SIM_IO, "mesh '%s': cannot read: %s", path,
                        n < 0 ? strerror(e) : buf == NULL ? "out of memory" : "short read");
    }
    fclose(f);
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return SIM_OK;
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double le_float(const unsigned char *p) {
    const uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* Binary STL: 80 bytes of header, the count, then 50 bytes a triangle (normal, 3 corners, an
 * attribute word); the normals are not read (the contact takes its own). */
static sim_status read_binary(const unsigned char *d, uint32_t count, double **xyz,
                              sim_error *err) {
    double *out = malloc((size_t)(count ? count : 1) * 9 * sizeof *out);
    if (out == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh: cannot allocate %u triangles", count);
    }
    for (uint32_t t = 0; t < count; ++t) {
        const unsigned char *p = d + 84 + 50 * (size_t)t + 12;
        for (int k = 0; k < 9; ++k) {
            out[9 * (size_t)t + (size_t)k] = le_float(p + 4 * k);
        }
    }
    *xyz = out;
    return SIM_OK;
}

/* ASCII STL's words, one at a time, with the line they are on. */
typedef struct {
    char *p;
    int line;
    char word[64];
} scanner;

static int next_word(scanner *s) {
    while (*s->p != '\0' && isspace((unsigned char)*s->p)) {
        s->line += *s->p == '\n';
        ++s->p;
    }
    size_t n = 0;
    while (*s->p != '\0' && !isspace((unsigned char)*s->p)) {
        if (n + 1 < sizeof s->word) {
            s->word[n++] = *s->p;
        }
        ++s->p;
    }
    s->word[n] = '\0';
    return n > 0;
}

static void skip_line(scanner *s) {
    while (*s->p != '\0' && *s->p != '\n') {
        ++s->p;
    }
}

static sim_status expect(scanner *s, const char *word, const char *path, sim_error *err) {
    if (!next_word(s) || strcmp(s->word, word) != 0) {
        return sim_fail(err, SIM_PARSE, "mesh '%s': line %d: expected '%s', found '%s'", path,
                        s->line, word, s->word[0] ? s->word : "the end of the file");
    }
    return SIM_OK;
}

static sim_status number(scanner *s, double *v, const char *path, sim_error *err) {
    char *end = NULL;
    if (next_word(s)) {
        *v = strtod(s->word, &end);
    }
    if (end == NULL || end == s->word || *end != '\0') {
        return sim_fail(err, SIM_PARSE, "mesh '%s': line %d: expected a number, found '%s'", path,
                        s->line, s->word[0] ? s->word : "the end of the file");
    }
    return SIM_OK;
}

/* ASCII STL: solid NAME, then facets of "facet normal x y z / outer loop / vertex x y z (three
 * times) / endloop / endfacet", endsolid; several solids follow one another. */
static sim_status read_ascii(char *text, const char *path, double **xyz, uint32_t *count,
                             sim_error *err) {
    scanner s = {text, 1, {0}};
    size_t cap = 64, n = 0;
    double *out = malloc(cap * 9 * sizeof *out);
    sim_status st = out != NULL ? SIM_OK
                                : sim_fail(err, SIM_OUT_OF_MEMORY, "mesh: cannot allocate");
    int in_solid = 0;
    while (st == SIM_OK && next_word(&s)) {
        if (!in_solid) {
            if (strcmp(s.word, "solid") != 0) {
                st = sim_fail(err, SIM_PARSE, "mesh '%s': line %d: expected 'solid', found '%s'",
                              path, s.line, s.word);
                break;
            }
            skip_line(&s); /* the solid's name */
            in_solid = 1;
            continue;
        }
        if (strcmp(s.word, "endsolid") == 0) {
            skip_line(&s);
            in_solid = 0;
            continue;
        }
        if (strcmp(s.word, "facet") != 0) {
            st = sim_fail(err, SIM_PARSE, "mesh '%s': line %d: expected 'facet', found '%s'", path,
                          s.line, s.word);
            break;
        }
        double unused;
        st = expect(&s, "normal", path, err);
        for (int k = 0; k < 3 && st == SIM_OK; ++k) {
            st = number(&s, &unused, path, err);
        }
        if (st == SIM_OK) {
            st = expect(&s, "outer", path, err);
        }
        if (st == SIM_OK) {
            st = expect(&s, "loop", path, err);
        }
        if (st == SIM_OK && n == cap) {
            double *grown = realloc(out, 2 * cap * 9 * sizeof *out);
            st = grown != NULL ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "mesh: cannot allocate");
            if (grown != NULL) {
                out = grown;
                cap *= 2;
            }
        }
        for (int c = 0; c < 3 && st == SIM_OK; ++c) {
            st = expect(&s, "vertex", path, err);
            for (int k = 0; k < 3 && st == SIM_OK; ++k) {
                st = number(&s, &out[9 * n + 3 * (size_t)c + (size_t)k], path, err);
            }
        }
        if (st == SIM_OK) {
            st = expect(&s, "endloop", path, err);
        }
        if (st == SIM_OK) {
            st = expect(&s, "endfacet", path, err);
        }
        n += st == SIM_OK;
    }
    if (st == SIM_OK && in_solid) {
        st = sim_fail(err, SIM_PARSE, "mesh '%s': line %d: the file ends inside a solid (no "
                      "'endsolid')", path, s.line);
    }
    if (st == SIM_OK && n > UINT32_MAX / 3) {
        st = sim_fail(err, SIM_BAD_ARGUMENT, "mesh '%s': %zu triangles, too many", path, n);
    }
    if (st != SIM_OK) {
        free(out);
        return st;
    }
    *xyz = out;
    *count = (uint32_t)n;
    return SIM_OK;
}

/* ---- welding, topology, checks, grid ---- */

/* A corner and where it came from, sorted by position to weld equal ones. */
typedef struct {
    double p[3];
    uint32_t corner;
} corner_at;

static int corner_cmp(const void *a, const void *b) {
    const double *p = ((const corner_at *)a)->p, *q = ((const corner_at *)b)->p;
    for (int k = 0; k < 3; ++k) {
        if (p[k] != q[k]) {
            return p[k] < q[k] ? -1 : 1;
        }
    }
    return 0;
}

typedef struct {
    uint32_t a, b, face;
} half_edge;

static int half_edge_cmp(const void *x, const void *y) {
    const half_edge *p = x, *q = y;
    if (p->a != q->a) {
        return p->a < q->a ? -1 : 1;
    }
    if (p->b != q->b) {
        return p->b < q->b ? -1 : 1;
    }
    return p->face < q->face ? -1 : p->face > q->face;
}

static sim_status topology(sim_mesh *m, const double *corner, sim_error *err) {
    const uint32_t nc = 3 * m->nt;
    corner_at *order = malloc((size_t)nc * sizeof *order);
    uint32_t *vid = malloc((size_t)nc * sizeof *vid);
    m->vert = malloc((size_t)nc * sizeof *m->vert);
    half_edge *he = malloc((size_t)nc * sizeof *he);
    if (order == NULL || vid == NULL || m->vert == NULL || he == NULL) {
        free(order);
        free(vid);
        free(he);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh '%s': cannot allocate its topology",
                        m->name);
    }
    for (uint32_t c = 0; c < nc; ++c) {
        memcpy(order[c].p, corner + 3 * (size_t)c, sizeof order[c].p);
        order[c].corner = c;
    }
    qsort(order, nc, sizeof *order, corner_cmp);
    m->nv = 0;
    for (uint32_t k = 0; k < nc; ++k) {
        if (k == 0 || corner_cmp(&order[k - 1], &order[k]) != 0) {
            m->vert[m->nv].x = order[k].p[0];
            m->vert[m->nv].y = order[k].p[1];
            m->vert[m->nv].z = order[k].p[2];
            ++m->nv;
        }
        vid[order[k].corner] = m->nv - 1;
    }
    free(order);
    for (uint32_t t = 0; t < m->nt; ++t) {
        for (int k = 0; k < 3; ++k) {
            m->tri[t].v[k] = vid[3 * t + (uint32_t)k];
        }
        for (int k = 0; k < 3; ++k) {
            const uint32_t a = m->tri[t].v[k], b = m->tri[t].v[(k + 1) % 3];
            half_edge h = {a < b ? a : b, a < b ? b : a, 3 * t + (uint32_t)k};
            he[3 * t + (uint32_t)k] = h;
        }
    }
    free(vid);
    qsort(he, nc, sizeof *he, half_edge_cmp);
    m->edge_vert = malloc((size_t)nc * sizeof *m->edge_vert);
    m->edge_face = malloc((size_t)nc * sizeof *m->edge_face);
    if (m->edge_vert == NULL || m->edge_face == NULL) {
        free(he);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh '%s': cannot allocate its edges", m->name);
    }
    m->ne = 0;
    sim_status st = SIM_OK;
    for (uint32_t k = 0; k < nc && st == SIM_OK;) {
        uint32_t end = k + 1;
        while (end < nc && he[end].a == he[k].a && he[end].b == he[k].b) {
            ++end;
        }
        if (end - k > 2) {
            const sim_vec3d p = m->vert[he[k].a], q = m->vert[he[k].b];
            st = sim_fail(err, SIM_BAD_ARGUMENT,
                          "mesh '%s': the edge from (%g, %g, %g) to (%g, %g, %g) has %u "
                          "triangles (at most 2: the mesh is not manifold there)",
                          m->name, p.x, p.y, p.z, q.x, q.y, q.z, end - k);
            break;
        }
        const uint32_t e = m->ne++;
        m->edge_vert[e][0] = he[k].a;
        m->edge_vert[e][1] = he[k].b;
        m->edge_face[e][0] = he[k].face / 3;
        m->edge_face[e][1] = end - k == 2 ? he[k + 1].face / 3 : UINT32_MAX;
        for (uint32_t j = k; j < end; ++j) {
            m->tri[he[j].face / 3].e[he[j].face % 3] = e;
        }
        k = end;
    }
    free(he);
    return st;
}

static sim_status build_grid(sim_mesh *m, sim_error *err) {
    sim_vec3d lo = m->vert[0], hi = m->vert[0];
    for (uint32_t v = 1; v < m->nv; ++v) {
        const sim_vec3d p = m->vert[v];
        lo.x = fmin(lo.x, p.x), lo.y = fmin(lo.y, p.y), lo.z = fmin(lo.z, p.z);
        hi.x = fmax(hi.x, p.x), hi.y = fmax(hi.y, p.y), hi.z = fmax(hi.z, p.z);
    }
    /* cells about a triangle's size (each triangle in a few), coarser when the box would need
     * more than SIM_MESH_GRID_MAX a side */
    double mean = 0.0;
    for (uint32_t t = 0; t < m->nt; ++t) {
        const sim_vec3d a = m->vert[m->tri[t].v[0]], b = m->vert[m->tri[t].v[1]],
                        c = m->vert[m->tri[t].v[2]];
        const double ex = fmax(a.x, fmax(b.x, c.x)) - fmin(a.x, fmin(b.x, c.x));
        const double ey = fmax(a.y, fmax(b.y, c.y)) - fmin(a.y, fmin(b.y, c.y));
        const double ez = fmax(a.z, fmax(b.z, c.z)) - fmin(a.z, fmin(b.z, c.z));
        mean += fmax(ex, fmax(ey, ez)) / m->nt;
    }
    const double ext[3] = {hi.x - lo.x, hi.y - lo.y, hi.z - lo.z};
    const double widest = fmax(ext[0], fmax(ext[1], ext[2]));
    m->cell = fmax(mean, widest / (SIM_MESH_GRID_MAX - 1));
    m->lo = lo;
    size_t cells = 1;
    for (int a = 0; a < 3; ++a) {
        m->dims[a] = (int)(ext[a] / m->cell) + 1;
        m->dims[a] = m->dims[a] < SIM_MESH_GRID_MAX ? m->dims[a] : SIM_MESH_GRID_MAX;
        cells *= (size_t)m->dims[a];
    }
    m->cell_start = calloc(cells + 1, sizeof *m->cell_start);
    if (m->cell_start == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh '%s': cannot allocate its grid", m->name);
    }
    for (int pass = 0; pass < 2; ++pass) { /* count, then place */
        for (uint32_t t = 0; t < m->nt; ++t) {
            const sim_vec3d a = m->vert[m->tri[t].v[0]], b = m->vert[m->tri[t].v[1]],
                            c = m->vert[m->tri[t].v[2]];
            const sim_vec3d tlo = {fmin(a.x, fmin(b.x, c.x)), fmin(a.y, fmin(b.y, c.y)),
                                   fmin(a.z, fmin(b.z, c.z))};
            const sim_vec3d thi = {fmax(a.x, fmax(b.x, c.x)), fmax(a.y, fmax(b.y, c.y)),
                                   fmax(a.z, fmax(b.z, c.z))};
            int c0[3], c1[3];
            sim_mesh_cells(m, tlo, thi, c0, c1);
            for (int z = c0[2]; z <= c1[2]; ++z) {
                for (int y = c0[1]; y <= c1[1]; ++y) {
                    for (int x = c0[0]; x <= c1[0]; ++x) {
                        const size_t cell = sim_mesh_cell_index(m, x, y, z);
                        if (pass == 0) {
                            m->cell_start[cell + 1]++;
                        } else {
                            m->cell_tri[m->cell_start[cell]++] = t;
                        }
                    }
                }
            }
        }
        if (pass == 0) {
            for (size_t k = 0; k < cells; ++k) {
                m->cell_start[k + 1] += m->cell_start[k];
            }
            m->cell_tri = malloc((size_t)(m->cell_start[cells] ? m->cell_start[cells] : 1) *
                                 sizeof *m->cell_tri);
            if (m->cell_tri == NULL) {
                return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh '%s': cannot allocate its grid",
                                m->name);
            }
        }
    }
    for (size_t k = cells; k > 0; --k) { /* the placing pass moved each start to the next's */
        m->cell_start[k] = m->cell_start[k - 1];
    }
    m->cell_start[0] = 0;
    return SIM_OK;
}

int sim_mesh_cells(const sim_mesh *m, sim_vec3d lo, sim_vec3d hi, int c0[3], int c1[3]) {
    const double l[3] = {lo.x - m->lo.x, lo.y - m->lo.y, lo.z - m->lo.z};
    const double h[3] = {hi.x - m->lo.x, hi.y - m->lo.y, hi.z - m->lo.z};
    for (int a = 0; a < 3; ++a) {
        const double top = m->dims[a] * m->cell;
        if (!(h[a] >= 0.0) || !(l[a] <= top)) { /* outside, or NaN */
            return 0;
        }
        const double f0 = floor(l[a] / m->cell), f1 = floor(h[a] / m->cell);
        c0[a] = f0 < 0.0 ? 0 : f0 >= m->dims[a] ? m->dims[a] - 1 : (int)f0;
        c1[a] = f1 < 0.0 ? 0 : f1 >= m->dims[a] ? m->dims[a] - 1 : (int)f1;
    }
    return 1;
}

static sim_status check_spec(const sim_mesh_spec *s, const char *name, sim_error *err) {
    const double v[] = {s->offset.x,     s->offset.y,     s->offset.z,     s->velocity.x,
                        s->velocity.y,   s->velocity.z,   s->axis_point.x, s->axis_point.y,
                        s->axis_point.z, s->axis.x,       s->axis.y,       s->axis.z,
                        s->omega};
    if (!(s->scale > 0.0) || !isfinite(s->scale)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "mesh '%s': scale %g (a finite number > 0)", name,
                        s->scale);
    }
    for (size_t k = 0; k < sizeof v / sizeof v[0]; ++k) {
        if (!isfinite(v[k])) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "mesh '%s': its offset, velocity and rotation must be finite", name);
        }
    }
    if (s->omega != 0.0 && s->axis.x == 0.0 && s->axis.y == 0.0 && s->axis.z == 0.0) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "mesh '%s': a rotation of %g rad/s about a zero axis", name, s->omega);
    }
    return SIM_OK;
}

/* The mesh from count triangles of raw coordinates (file units), its spec applied. */
static sim_status build(const sim_mesh_spec *spec, const double *xyz, uint32_t count,
                        const char *name, sim_mesh **out, sim_error *err) {
    SIM_TRY(check_spec(spec, name, err));
    if (count == 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "mesh '%s' has no triangles", name);
    }
    for (uint64_t k = 0; k < 9 * (uint64_t)count; ++k) {
        if (!isfinite(xyz[k])) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "mesh '%s': triangle %llu has a %s coordinate", name,
                            (unsigned long long)(k / 9), isnan(xyz[k]) ? "NaN" : "infinite");
        }
    }
    if (count > SIM_MESH_MAX_FEATURES / 3) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "mesh '%s': %u triangles, at most %u", name, count,
                        SIM_MESH_MAX_FEATURES / 3);
    }
    sim_mesh *m = calloc(1, sizeof *m);
    double *corner = malloc(9 * (size_t)count * sizeof *corner);
    if (m == NULL || corner == NULL || (m->tri = malloc(count * sizeof *m->tri)) == NULL) {
        free(m);
        free(corner);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "mesh '%s': cannot allocate %u triangles", name,
                        count);
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    m->nt = count;
    m->axis_point = spec->axis_point;
    m->velocity = spec->velocity;
    const double len = sqrt(spec->axis.x * spec->axis.x + spec->axis.y * spec->axis.y +
                            spec->axis.z * spec->axis.z);
    if (len > 0.0 && spec->omega != 0.0) {
        m->axis.x = spec->axis.x / len;
        m->axis.y = spec->axis.y / len;
        m->axis.z = spec->axis.z / len;
        m->omega = spec->omega;
    }
    const double off[3] = {spec->offset.x - spec->axis_point.x, spec->offset.y - spec->axis_point.y,
                           spec->offset.z - spec->axis_point.z};
    for (uint64_t k = 0; k < 9 * (uint64_t)count; ++k) {
        corner[k] = spec->scale * xyz[k] + off[k % 3];
    }
    sim_status st = SIM_OK;
    for (uint32_t t = 0; t < count && st == SIM_OK; ++t) {
        const double *p = corner + 9 * (size_t)t;
        const double u[3] = {p[3] - p[0], p[4] - p[1], p[5] - p[2]};
        const double v[3] = {p[6] - p[0], p[7] - p[1], p[8] - p[2]};
        const double w[3] = {p[6] - p[3], p[7] - p[4], p[8] - p[5]};
        const double cx = u[1] * v[2] - u[2] * v[1], cy = u[2] * v[0] - u[0] * v[2],
                     cz = u[0] * v[1] - u[1] * v[0];
        const double l2 = fmax(u[0] * u[0] + u[1] * u[1] + u[2] * u[2],
                               fmax(v[0] * v[0] + v[1] * v[1] + v[2] * v[2],
                                    w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
        /* twice the area against its longest side squared: below 1e-12, a sliver of rounding */
        if (!(sqrt(cx * cx + cy * cy + cz * cz) > 1e-12 * l2)) {
            st = sim_fail(err, SIM_BAD_ARGUMENT,
                          "mesh '%s': triangle %u, (%g, %g, %g) (%g, %g, %g) (%g, %g, %g), has "
                          "zero area",
                          name, t, xyz[9 * (size_t)t], xyz[9 * (size_t)t + 1],
                          xyz[9 * (size_t)t + 2], xyz[9 * (size_t)t + 3], xyz[9 * (size_t)t + 4],
                          xyz[9 * (size_t)t + 5], xyz[9 * (size_t)t + 6], xyz[9 * (size_t)t + 7],
                          xyz[9 * (size_t)t + 8]);
        }
    }
    if (st == SIM_OK) {
        st = topology(m, corner, err);
    }
    free(corner);
    if (st == SIM_OK) {
        st = build_grid(m, err);
    }
    if (st != SIM_OK) {
        sim_mesh_destroy(m);
        return st;
    }
    *out = m;
    return SIM_OK;
}

sim_status sim_mesh_from_triangles(const sim_mesh_spec *spec, const double *xyz, uint32_t count,
                                   const char *name, sim_mesh **out, sim_error *err) {
    return build(spec, xyz, count, name, out, err);
}

sim_status sim_mesh_load(const sim_mesh_spec *spec, sim_mesh **out, sim_error *err) {
    const char *path = spec->path;
    char *data = NULL;
    long size = 0;
    SIM_TRY(read_file(path, &data, &size, err));
    const unsigned char *u = (const unsigned char *)data;
    const uint32_t count = size >= 84 ? le32(u + 80) : 0;
    const int binary = size >= 84 && (uint64_t)size == 84 + 50 * (uint64_t)count;
    double *xyz = NULL;
    uint32_t n = 0;
    sim_status st;
    if (binary) {
        n = count;
        st = read_binary(u, count, &xyz, err);
    } else if (size >= 5 && strncmp(data, "solid", 5) == 0) {
        st = read_ascii(data, path, &xyz, &n, err);
    } else if (size == 0) {
        st = sim_fail(err, SIM_BAD_ARGUMENT, "mesh '%s' is empty", path);
    } else {
        st = sim_fail(err, SIM_PARSE,
                      "mesh '%s' is neither ASCII STL (it does not begin with 'solid') nor "
                      "binary STL (%ld bytes, where its count of %u triangles needs %llu)",
                      path, size, count, 84 + 50 * (unsigned long long)count);
    }
    free(data);
    if (st == SIM_OK) {
        st = build(spec, xyz, n, path, out, err);
    }
    free(xyz);
    return st;
}

/* ---- motion ---- */

sim_mesh_pose_d sim_mesh_pose_at(const sim_mesh *m, double t) {
    sim_mesh_pose_d p;
    p.origin.x = m->axis_point.x + m->velocity.x * t;
    p.origin.y = m->axis_point.y + m->velocity.y * t;
    p.origin.z = m->axis_point.z + m->velocity.z * t;
    p.vel = m->velocity;
    p.omega.x = m->omega * m->axis.x;
    p.omega.y = m->omega * m->axis.y;
    p.omega.z = m->omega * m->axis.z;
    /* Rodrigues: R = cos I + sin [k]x + (1 - cos) k k^T */
    const double th = m->omega * t, c = cos(th), s = sin(th), ic = 1.0 - c;
    const double kx = m->axis.x, ky = m->axis.y, kz = m->axis.z;
    p.rot[0] = c + ic * kx * kx;
    p.rot[1] = ic * kx * ky - s * kz;
    p.rot[2] = ic * kx * kz + s * ky;
    p.rot[3] = ic * ky * kx + s * kz;
    p.rot[4] = c + ic * ky * ky;
    p.rot[5] = ic * ky * kz - s * kx;
    p.rot[6] = ic * kz * kx - s * ky;
    p.rot[7] = ic * kz * ky + s * kx;
    p.rot[8] = c + ic * kz * kz;
    return p;
}

void sim_mesh_world_triangle(const sim_mesh *m, double t, uint32_t tri, sim_vec3d out[3]) {
    const sim_mesh_pose_d p = sim_mesh_pose_at(m, t);
    for (int k = 0; k < 3; ++k) {
        const sim_vec3d r = sim_mesh_rotate_d(&p, m->vert[m->tri[tri].v[k]]);
        out[k].x = p.origin.x + r.x;
        out[k].y = p.origin.y + r.y;
        out[k].z = p.origin.z + r.z;
    }
}
