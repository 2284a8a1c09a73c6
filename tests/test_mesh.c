/* SPDX-License-Identifier: MIT
 * nbsim — mesh walls (include/nbsim/mesh.h, sim/mesh/, sim/physics/mesh_contact.h,
 * sim/cpu/cpu_mesh.c) on the CPU reference: the STL readers (ASCII and binary, each bad mesh's
 * one-line error), welding and topology, the nearest feature of a triangle, the filter of hits
 * (one contact where triangles meet), and the validations of issue 42: a sphere rolling without
 * slipping down a mesh incline at 5/7 g sin(theta), rebounds with restitution e from a mesh's
 * face, edge and vertex, no bump rolling across a shared edge, and a moving plate's velocity in
 * the contact. */
#define _POSIX_C_SOURCE 200809L

#include "mesh/mesh.h"
#include "nbsim/internal/backend.h"
#include "nbsim/mesh.h"
#include "physics/mesh_contact.h"

#include "ensure.h"
#include "test_tmp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- meshes written here ---- */

/* The square [-h, h]^2 at z = 0 as two triangles sharing the diagonal (-h,-h)-(h,h). */
static void square(double h, double xyz[18]) {
    const double t[18] = {-h, -h, 0, h, -h, 0, h, h, 0, -h, -h, 0, h, h, 0, -h, h, 0};
    memcpy(xyz, t, sizeof t);
}

static void write_ascii(const char *path, const double *xyz, uint32_t count) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    fprintf(f, "solid test mesh\n");
    for (uint32_t t = 0; t < count; ++t) {
        fprintf(f, "  facet normal 0 0 1\n    outer loop\n");
        for (int c = 0; c < 3; ++c) {
            const double *p = xyz + 9 * t + 3 * c;
            fprintf(f, "      vertex %.17g %.17g %.17g\n", p[0], p[1], p[2]);
        }
        fprintf(f, "    endloop\n  endfacet\n");
    }
    fprintf(f, "endsolid test mesh\n");
    fclose(f);
}

static void put32(FILE *f, uint32_t u) {
    const unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8),
                                (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
    fwrite(b, 1, 4, f);
}

static void putf(FILE *f, double v) {
    const float x = (float)v;
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    put32(f, u);
}

/* A binary STL whose 80-byte header begins with "solid" (as some exporters write). */
static void write_binary(const char *path, const double *xyz, uint32_t count) {
    FILE *f = fopen(path, "wb");
    ENSURE(f != NULL);
    char header[80] = "solid but binary";
    fwrite(header, 1, 80, f);
    put32(f, count);
    for (uint32_t t = 0; t < count; ++t) {
        for (int k = 0; k < 3; ++k) {
            putf(f, 0.0);
        }
        for (int k = 0; k < 9; ++k) {
            putf(f, xyz[9 * t + (uint32_t)k]);
        }
        fputc(0, f);
        fputc(0, f);
    }
    fclose(f);
}

static sim_mesh *mesh_of(const double *xyz, uint32_t count, sim_mesh_spec spec) {
    sim_mesh *m = NULL;
    sim_error err = {SIM_OK, ""};
    const sim_status st = sim_mesh_from_triangles(&spec, xyz, count, "test", &m, &err);
    ENSURE_MSG(st == SIM_OK, "%s", err.message);
    if (st != SIM_OK) {
        exit(1);
    }
    return m;
}

/* ---- the readers ---- */

static void check_square(const sim_mesh *m, double scale, sim_vec3d off) {
    ENSURE(m->nt == 2 && m->nv == 4 && m->ne == 5);
    int shared = 0;
    for (uint32_t e = 0; e < m->ne; ++e) {
        shared += m->edge_face[e][1] != UINT32_MAX;
    }
    ENSURE(shared == 1); /* the diagonal, welded */
    double hi = -INFINITY;
    for (uint32_t v = 0; v < m->nv; ++v) {
        hi = fmax(hi, m->vert[v].x);
        ENSURE_NEAR(m->vert[v].z, off.z, 1e-12);
    }
    ENSURE_NEAR(hi, scale + off.x, 1e-6);
}

static void test_stl_ascii_binary(void) {
    double sq[18];
    square(1.0, sq);
    const char *a = test_tmp_path("square_ascii.stl"), *b = test_tmp_path("square_binary.stl");
    write_ascii(a, sq, 2);
    write_binary(b, sq, 2);
    sim_mesh_spec spec = sim_mesh_spec_default();
    spec.scale = 0.5;
    spec.offset = (sim_vec3d){1.0, 0.0, -2.0};
    const char *paths[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
        snprintf(spec.path, sizeof spec.path, "%s", paths[k]);
        sim_mesh *m = NULL;
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_mesh_load(&spec, &m, &err) == SIM_OK, "%s: %s", paths[k], err.message);
        if (m != NULL) {
            check_square(m, 0.5, spec.offset);
            ENSURE(sim_mesh_triangle_count(m) == 2);
        }
        sim_mesh_destroy(m);
    }
}

/* Loads text (or bytes) as a mesh and expects status with a one-line message containing what. */
static void expect_refused(const char *name, const char *text, size_t size, sim_status status,
                           const char *what) {
    const char *path = test_tmp_path(name);
    FILE *f = fopen(path, "wb");
    ENSURE(f != NULL);
    fwrite(text, 1, size, f);
    fclose(f);
    sim_mesh_spec spec = sim_mesh_spec_default();
    snprintf(spec.path, sizeof spec.path, "%s", path);
    sim_mesh *m = NULL;
    sim_error err = {SIM_OK, ""};
    const sim_status st = sim_mesh_load(&spec, &m, &err);
    ENSURE_MSG(st == status, "%s: status %d, expected %d (%s)", name, st, status, err.message);
    ENSURE_MSG(strstr(err.message, what) != NULL && strchr(err.message, '\n') == NULL &&
                   strstr(err.message, name) != NULL,
               "%s: '%s' lacks '%s' or the file's name", name, err.message, what);
    ENSURE(m == NULL);
}

#define FACET(a, b, c)                                                                             \
    "facet normal 0 0 1\nouter loop\nvertex " a "\nvertex " b "\nvertex " c "\nendloop\nendfacet\n"

static void test_stl_errors(void) {
    sim_mesh_spec spec = sim_mesh_spec_default();
    snprintf(spec.path, sizeof spec.path, "%s", test_tmp_path("no_such.stl"));
    sim_mesh *m = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_mesh_load(&spec, &m, &err) == SIM_IO && strstr(err.message, "cannot open"));
    expect_refused("empty.stl", "", 0, SIM_BAD_ARGUMENT, "is empty");
    const char *none = "solid x\nendsolid x\n";
    expect_refused("none.stl", none, strlen(none), SIM_BAD_ARGUMENT, "no triangles");
    const char *nan = "solid x\n" FACET("0 0 0", "1 0 0", "0 nan 0") "endsolid x\n";
    expect_refused("nan.stl", nan, strlen(nan), SIM_BAD_ARGUMENT, "NaN coordinate");
    const char *inf = "solid x\n" FACET("0 0 0", "1 0 inf", "0 1 0") "endsolid x\n";
    expect_refused("inf.stl", inf, strlen(inf), SIM_BAD_ARGUMENT, "infinite coordinate");
    const char *flat = "solid x\n" FACET("0 0 0", "1 1 1", "2 2 2") "endsolid x\n";
    expect_refused("flat.stl", flat, strlen(flat), SIM_BAD_ARGUMENT, "zero area");
    const char *fin = "solid x\n" FACET("0 0 0", "1 0 0", "0 1 0") FACET("0 0 0", "1 0 0",
                                                                          "0 -1 0")
        FACET("0 0 0", "1 0 0", "0 0 1") "endsolid x\n";
    expect_refused("fin.stl", fin, strlen(fin), SIM_BAD_ARGUMENT, "not manifold");
    const char *word = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 "
                       "0\nvertx 0 1 0\n";
    expect_refused("typo.stl", word, strlen(word), SIM_PARSE, "line 6: expected 'vertex'");
    const char *num = "solid x\n" FACET("0 0 0", "1 0 0", "0 1 zero") "endsolid x\n";
    expect_refused("number.stl", num, strlen(num), SIM_PARSE, "expected a number");
    const char *cut = "solid x\n" FACET("0 0 0", "1 0 0", "0 1 0");
    expect_refused("cut.stl", cut, strlen(cut), SIM_PARSE, "ends inside a solid");
    const char junk[100] = {1, 2, 3};
    expect_refused("junk.stl", junk, sizeof junk, SIM_PARSE, "neither ASCII STL");
    /* a binary file with a NaN corner */
    double sq[18];
    square(1.0, sq);
    sq[4] = NAN;
    const char *bin = test_tmp_path("nan_binary.stl");
    write_binary(bin, sq, 2);
    snprintf(spec.path, sizeof spec.path, "%s", bin);
    ENSURE(sim_mesh_load(&spec, &m, &err) == SIM_BAD_ARGUMENT && strstr(err.message, "NaN"));
    /* a bad spec */
    square(1.0, sq);
    spec.scale = 0.0;
    ENSURE(sim_mesh_from_triangles(&spec, sq, 2, "s", &m, &err) == SIM_BAD_ARGUMENT &&
           strstr(err.message, "scale"));
    spec.scale = 1.0;
    spec.omega = 1.0;
    ENSURE(sim_mesh_from_triangles(&spec, sq, 2, "s", &m, &err) == SIM_BAD_ARGUMENT &&
           strstr(err.message, "zero axis"));
}

/* ---- the nearest feature, the filter ---- */

static void test_closest_feature(void) {
    const sim_vec3d a = {0, 0, 0}, b = {1, 0, 0}, c = {0, 1, 0};
    const struct {
        sim_vec3d p, q;
        int feature;
    } cases[] = {
        {{0.2, 0.3, 1.0}, {0.2, 0.3, 0.0}, SIM_TRI_FACE},
        {{0.5, -1.0, 0.3}, {0.5, 0.0, 0.0}, SIM_TRI_EDGE(0)},
        {{1.0, 1.0, -0.2}, {0.5, 0.5, 0.0}, SIM_TRI_EDGE(1)},
        {{-1.0, 0.5, 0.0}, {0.0, 0.5, 0.0}, SIM_TRI_EDGE(2)},
        {{-1.0, -1.0, 0.5}, {0.0, 0.0, 0.0}, SIM_TRI_VERTEX(0)},
        {{2.0, -0.5, 0.0}, {1.0, 0.0, 0.0}, SIM_TRI_VERTEX(1)},
        {{-0.5, 2.0, 3.0}, {0.0, 1.0, 0.0}, SIM_TRI_VERTEX(2)},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        int feature = -1;
        const sim_vec3d q = sim_closest_on_triangle_d(cases[k].p, a, b, c, &feature);
        ENSURE_MSG(feature == cases[k].feature, "case %zu: feature %d, expected %d", k, feature,
                   cases[k].feature);
        ENSURE_NEAR(q.x, cases[k].q.x, 1e-15);
        ENSURE_NEAR(q.y, cases[k].q.y, 1e-15);
        ENSURE_NEAR(q.z, cases[k].q.z, 1e-15);
        int ff = -1; /* the float twin agrees */
        const sim_vec3f pf = {(float)cases[k].p.x, (float)cases[k].p.y, (float)cases[k].p.z};
        const sim_vec3f af = {0, 0, 0}, bf = {1, 0, 0}, cf = {0, 1, 0};
        (void)sim_closest_on_triangle_f(pf, af, bf, cf, &ff);
        ENSURE(ff == cases[k].feature);
    }
}

/* The kept hits of a sphere at p of radius r on mesh m (frame coordinates). */
static int kept_hits(const sim_mesh *m, sim_vec3d p, double r, sim_mesh_hit_d *out) {
    sim_mesh_hit_d hits[SIM_MESH_HITS];
    int count = 0;
    for (uint32_t t = 0; t < m->nt; ++t) {
        sim_mesh_hit_d h;
        const sim_mesh_tri_ids *ids = &m->tri[t];
        if (sim_mesh_hit_triangle_d(p, r, m->vert[ids->v[0]], m->vert[ids->v[1]],
                                    m->vert[ids->v[2]], t, ids, &h)) {
            sim_mesh_hit_add_d(hits, &count, &h);
        }
    }
    sim_mesh_hits_filter_d(hits, count, p, r);
    int kept = 0;
    for (int k = 0; k < count; ++k) {
        if (hits[k].keep) {
            out[kept++] = hits[k];
        }
    }
    return kept;
}

/* A pyramid's four sides: apex (0, 0, 0), base corners (+-1, +-1, -1), open below. */
static const double pyramid[36] = {
    0, 0, 0, 1,  -1, -1, 1,  1,  -1, 0, 0, 0, 1,  1,  -1, -1, 1, -1,
    0, 0, 0, -1, 1,  -1, -1, -1, -1, 0, 0, 0, -1, -1, -1, 1,  -1, -1,
};
/* A roof: two slopes of two triangles meeting at the ridge x = 0, z = 0, y in [-1, 1]. */
static const double roof[36] = {
    -1, -1, -0.5, 0, -1, 0,    0, 1, 0,    -1, -1, -0.5, 0, 1, 0,    -1, 1, -0.5,
    0,  -1, 0,    1, -1, -0.5, 1, 1, -0.5, 0,  -1, 0,    1, 1, -0.5, 0,  1, 0,
};

static void test_one_contact_where_triangles_meet(void) {
    double sq[18];
    square(1.0, sq);
    sim_mesh *floor = mesh_of(sq, 2, sim_mesh_spec_default());
    sim_mesh_hit_d hits[SIM_MESH_HITS];
    const double r = 0.1, z = 0.09;
    /* across the diagonal: a face, the shared edge (reached from both), the other face */
    const double xs[] = {-0.05, -0.001, 0.0, 0.001, 0.05};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; ++k) {
        const sim_vec3d p = {xs[k], 0.0, z};
        const int n = kept_hits(floor, p, r, hits);
        ENSURE_MSG(n == 1, "x %g: %d contacts", xs[k], n);
        ENSURE_NEAR(hits[0].d2, z * z, 1e-15);
        ENSURE(SIM_MESH_KEY_KIND(hits[0].key) == (xs[k] == 0.0 ? 1 : 0));
    }
    /* the corner the two triangles share: one vertex contact */
    const sim_vec3d corner = {-1.05, -1.05, 0.05};
    ENSURE(kept_hits(floor, corner, r, hits) == 1 && SIM_MESH_KEY_KIND(hits[0].key) == 2);
    sim_mesh_destroy(floor);
    /* the roof's ridge: one edge contact from two slopes; the pyramid's apex: one vertex */
    sim_mesh *ridge = mesh_of(roof, 4, sim_mesh_spec_default());
    const sim_vec3d top = {0.0, 0.3, 0.09};
    ENSURE(kept_hits(ridge, top, r, hits) == 1 && SIM_MESH_KEY_KIND(hits[0].key) == 1);
    sim_mesh_destroy(ridge);
    sim_mesh *pyr = mesh_of(pyramid, 4, sim_mesh_spec_default());
    const sim_vec3d apex = {0.0, 0.0, 0.09};
    ENSURE(kept_hits(pyr, apex, r, hits) == 1 && SIM_MESH_KEY_KIND(hits[0].key) == 2);
    /* in a concave corner two faces are two contacts: inside the pyramid, by two sides */
    const sim_vec3d below = {0.37, 0.37, -0.5};
    ENSURE(kept_hits(pyr, below, r, hits) == 2);
    sim_mesh_destroy(pyr);
}

static void test_pose(void) {
    double sq[18];
    square(1.0, sq);
    sim_mesh_spec spec = sim_mesh_spec_default();
    spec.axis_point = (sim_vec3d){0.0, 0.0, 0.0};
    spec.axis = (sim_vec3d){0.0, 0.0, 2.0};
    spec.omega = 0.5;
    spec.velocity = (sim_vec3d){0.0, 0.0, 1.0};
    sim_mesh *m = mesh_of(sq, 2, spec);
    const double t = PI; /* a quarter turn: (x, y) -> (-y, x), and z up by t */
    sim_vec3d w[3];
    sim_mesh_world_triangle(m, t, 0, w);
    sim_vec3d rest[3];
    sim_mesh_world_triangle(m, 0.0, 0, rest);
    for (int k = 0; k < 3; ++k) {
        ENSURE_NEAR(w[k].x, -rest[k].y, 1e-12);
        ENSURE_NEAR(w[k].y, rest[k].x, 1e-12);
        ENSURE_NEAR(w[k].z, rest[k].z + t, 1e-12);
    }
    const sim_mesh_pose_d pose = sim_mesh_pose_at(m, t);
    const sim_vec3d x = {1.0, 0.0, t};
    const sim_vec3d v = sim_mesh_wall_velocity_d(&pose, x); /* 0.5 z x (1, 0, 0) + (0, 0, 1) */
    ENSURE_NEAR(v.x, 0.0, 1e-15);
    ENSURE_NEAR(v.y, 0.5, 1e-15);
    ENSURE_NEAR(v.z, 1.0, 1e-15);
    const sim_vec3d back = sim_mesh_to_frame_d(&pose, w[1]);
    ENSURE_NEAR(back.x, m->vert[m->tri[0].v[1]].x, 1e-12);
    ENSURE_NEAR(back.y, m->vert[m->tri[0].v[1]].y, 1e-12);
    sim_mesh_destroy(m);
}

/* ---- one sphere on the CPU reference ---- */

typedef struct {
    sim_backend *b;
    sim_state s;
    sim_mesh *mesh;
} run;

/* A sphere of radius 0.1 m and 1 kg at x with velocity v and spin w under p, on mesh m. */
static run run_start(const sim_params *p, sim_mesh *m, sim_vec3d x, sim_vec3d v, sim_vec3d w) {
    run r = {NULL, {0}, m};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&r.s, 1, &err) == SIM_OK);
    r.s.pos[0] = (sim_vec4d){x.x, x.y, x.z, 0.1};
    r.s.vel[0] = (sim_vec4d){v.x, v.y, v.z, 1.0};
    r.s.spin[0] = (sim_vec4d){w.x, w.y, w.z, 0.0};
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.cpu_threads = 1;
    ENSURE_MSG(sim_backend_create(&c, p, &r.s, &r.b, &err) == SIM_OK, "%s", err.message);
    sim_mesh *const list[1] = {m};
    ENSURE_MSG(sim_backend_set_meshes(r.b, list, 1, &err) == SIM_OK, "%s", err.message);
    return r;
}

/* One step (steps_per_frame 1); the state read into r->s. */
static void run_step(run *r) {
    sim_error err = {SIM_OK, ""};
    sim_frame_timing t;
    ENSURE_MSG(sim_backend_run_frame(r->b, &t, &err) == SIM_OK, "%s", err.message);
    ENSURE(sim_backend_read_state(r->b, &r->s, NULL, &err) == SIM_OK);
}

static void run_end(run *r) {
    sim_backend_destroy(r->b);
    sim_state_free(&r->s);
    sim_mesh_destroy(r->mesh);
}

static sim_params params(double restitution, double friction, sim_vec3d g) {
    sim_params p = sim_params_default();
    p.stiffness = 1e5;
    p.restitution = restitution;
    p.friction = friction;
    p.gravity = g;
    p.box_half = 5.0;
    p.steps_per_frame = 1;
    return p;
}

/* Dropped at 1 m/s along -n onto a feature 1 cm below it, no gravity: the speed it leaves with
 * along n, over the 1 m/s it came with, is e (the linear law gives e exactly, test_physics: 1 %);
 * and it leaves along n. */
static void drop_on(const char *what, sim_mesh *m, sim_vec3d at, double e) {
    const sim_params p = params(e, 0.0, (sim_vec3d){0, 0, 0});
    run r = run_start(&p, m, (sim_vec3d){at.x, at.y, at.z + 0.11}, (sim_vec3d){0, 0, -1.0},
                      (sim_vec3d){0, 0, 0});
    for (int k = 0; k < 4000 && !(r.s.pos[0].z > at.z + 0.11); ++k) {
        run_step(&r);
    }
    ENSURE_MSG(fabs(r.s.vel[0].z - e) <= 0.01 * e, "%s: rebound %.6f m/s, e %.2f", what,
               r.s.vel[0].z, e);
    ENSURE_MSG(fabs(r.s.vel[0].x) + fabs(r.s.vel[0].y) < 1e-9, "%s: sideways %g %g", what,
               r.s.vel[0].x, r.s.vel[0].y);
    run_end(&r);
}

static void test_rebound_face_edge_vertex(void) {
    double sq[18];
    square(1.0, sq);
    const double es[] = {0.9, 0.5};
    for (int k = 0; k < 2; ++k) {
        drop_on("face", mesh_of(sq, 2, sim_mesh_spec_default()), (sim_vec3d){0.3, -0.2, 0.0},
                es[k]);
        drop_on("edge", mesh_of(roof, 4, sim_mesh_spec_default()), (sim_vec3d){0.0, 0.3, 0.0},
                es[k]);
        drop_on("vertex", mesh_of(pyramid, 4, sim_mesh_spec_default()),
                (sim_vec3d){0.0, 0.0, 0.0}, es[k]);
    }
}

/* On a plane inclined at theta (below the friction angle, tan theta < 7/2 mu), from rest at its
 * equilibrium overlap: the acceleration down the slope, from the speeds at 0.1 s and 0.4 s, is
 * 5/7 g sin(theta) within 0.5 %, and the contact point does not slip (|v - r w x n| < 1e-3 v). */
static void test_incline_rolls(void) {
    const double g = 9.81, th = 20.0 * PI / 180.0, r = 0.1;
    const sim_vec3d down = {cos(th), 0.0, -sin(th)}, n = {sin(th), 0.0, cos(th)};
    double plane[18];
    square(3.0, plane);
    for (int k = 0; k < 6; ++k) { /* (x, y, 0) -> x down + y e_y */
        const double x = plane[3 * k], y = plane[3 * k + 1];
        plane[3 * k] = x * down.x;
        plane[3 * k + 1] = y;
        plane[3 * k + 2] = x * down.z;
    }
    const sim_params p = params(0.5, 0.5, (sim_vec3d){0, 0, -g});
    const double sink = g * cos(th) / p.stiffness;
    const sim_vec3d x0 = {(r - sink) * n.x - 1.5 * down.x, 0.0, (r - sink) * n.z - 1.5 * down.z};
    run run1 = run_start(&p, mesh_of(plane, 2, sim_mesh_spec_default()), x0, (sim_vec3d){0, 0, 0},
                         (sim_vec3d){0, 0, 0});
    double t = 0.0, v1 = 0.0, v2 = 0.0;
    const double dt = run1.b != NULL ? sim_default_dt(&p, &run1.s) : 0.0;
    while (t < 0.4 - 0.5 * dt) {
        run_step(&run1);
        t += dt;
        if (fabs(t - 0.1) < 0.5 * dt) {
            v1 = run1.s.vel[0].x * down.x + run1.s.vel[0].z * down.z;
        }
    }
    const sim_vec4d v = run1.s.vel[0], w = run1.s.spin[0];
    v2 = v.x * down.x + v.z * down.z;
    const double a = (v2 - v1) / 0.3, expected = 5.0 / 7.0 * g * sin(th);
    ENSURE_MSG(fabs(a - expected) <= 0.005 * expected, "a %.6f m/s^2, 5/7 g sin = %.6f", a,
               expected);
    /* the contact point's velocity v + w x (-r n) */
    const double sx = v.x - r * (w.y * n.z - w.z * n.y), sz = v.z - r * (w.x * n.y - w.y * n.x);
    ENSURE_MSG(sqrt(sx * sx + sz * sz) < 1e-3 * v2, "slip %g at %g m/s", sqrt(sx * sx + sz * sz),
               v2);
    run_end(&run1);
}

/* Sliding (no friction) at 1 m/s across the diagonal of a two-triangle floor, resting at its
 * equilibrium overlap: its height does not move by a nanometre, before, across or after the
 * shared edge (two contacts there would push it up by the overlap, ~0.1 mm). */
static void test_no_bump_across_edge(void) {
    const double g = 9.81;
    double sq[18];
    square(2.0, sq);
    const sim_params p = params(0.5, 0.0, (sim_vec3d){0, 0, -g});
    const double z0 = 0.1 - g / p.stiffness;
    run r = run_start(&p, mesh_of(sq, 2, sim_mesh_spec_default()), (sim_vec3d){0.2, 0.5, z0},
                      (sim_vec3d){1.0, 0, 0}, (sim_vec3d){0, 0, 0});
    double worst = 0.0;
    while (r.s.pos[0].x < 0.8) { /* the diagonal is crossed at x = 0.5 */
        run_step(&r);
        worst = fmax(worst, fabs(r.s.pos[0].z - z0));
    }
    ENSURE_MSG(worst < 1e-9, "height moved by %g m", worst);
    run_end(&r);
}

/* A plate moving at V under a resting sphere with friction: the sphere ends rolling at 2/7 V
 * (its angular momentum about the contact point is kept), within 1 %: the wall's velocity is in
 * the contact. */
static void test_moving_plate(void) {
    const double g = 9.81, V = 1.0;
    double sq[18];
    square(3.0, sq);
    sim_mesh_spec spec = sim_mesh_spec_default();
    spec.velocity = (sim_vec3d){V, 0.0, 0.0};
    const sim_params p = params(0.5, 0.3, (sim_vec3d){0, 0, -g});
    run r = run_start(&p, mesh_of(sq, 2, spec), (sim_vec3d){0.0, 0.0, 0.1 - g / p.stiffness},
                      (sim_vec3d){0, 0, 0}, (sim_vec3d){0, 0, 0});
    for (int k = 0; k < 5000; ++k) {
        run_step(&r);
    }
    ENSURE_MSG(fabs(r.s.vel[0].x - 2.0 / 7.0 * V) < 0.01 * 2.0 / 7.0 * V, "v %.6f, 2/7 V %.6f",
               r.s.vel[0].x, 2.0 / 7.0 * V);
    run_end(&r);
}

static void test_refusals(void) {
    double sq[18];
    square(1.0, sq);
    sim_mesh *m = mesh_of(sq, 2, sim_mesh_spec_default());
    sim_params p = params(0.5, 0.0, (sim_vec3d){0, 0, 0});
    run r = run_start(&p, m, (sim_vec3d){0, 0, 1}, (sim_vec3d){0, 0, 0}, (sim_vec3d){0, 0, 0});
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_backend_set_meshes(r.b, NULL, 1, &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_backend_set_meshes(r.b, NULL, 0, &err) == SIM_OK); /* none again */
    run_end(&r);
}

static const ensure_test tests[] = {
    {"stl_ascii_binary", test_stl_ascii_binary},
    {"stl_errors", test_stl_errors},
    {"closest_feature", test_closest_feature},
    {"one_contact_where_triangles_meet", test_one_contact_where_triangles_meet},
    {"pose", test_pose},
    {"rebound_face_edge_vertex", test_rebound_face_edge_vertex},
    {"incline_rolls", test_incline_rolls},
    {"no_bump_across_edge", test_no_bump_across_edge},
    {"moving_plate", test_moving_plate},
    {"refusals", test_refusals},
};

TEST_TMP_MAIN(tests, "mesh")
