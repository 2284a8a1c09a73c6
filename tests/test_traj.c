/* SPDX-License-Identifier: MIT
 * nbsim — trajectory files: the number formatter gives every float back, each format's round
 * trip (write frames, read the last one back, compare), readers of what LAMMPS and ASE write
 * (unsorted ids, diameters, scaled positions, density), clear errors (no radius column, a box
 * that is not nbsim's, an unwritable path, an unknown extension), a cut-off last frame skipped,
 * and a write that fails part-way (a file size limit standing in for a full disk) leaving the
 * complete frames readable. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/scene.h"
#include "nbsim/trajectory.h"
#include "io/traj_impl.h" /* the NetCDF variants (white box) */

#include "ensure.h"
#include "test_rng.h"
#include "test_tmp.h"

#include <float.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* A frame of n bodies inside walls at +-box_half, values rounded to float; `salt` varies the
 * positions, velocities and forces between frames (radii and masses stay). */
typedef struct {
    sim_vec4f *pos, *vel, *force;
    uint32_t n;
} frame_data;

static frame_data make_frame(uint32_t n, double box_half, uint64_t salt) {
    frame_data f = {malloc(n * sizeof(sim_vec4f)), malloc(n * sizeof(sim_vec4f)),
                    malloc(n * sizeof(sim_vec4f)), n};
    uint64_t rng = 12345 + salt;
    uint64_t fixed = 777;
    for (uint32_t i = 0; i < n; ++i) {
        const float r = (float)(0.1 + 0.3 * test_rnd(&fixed, 0.0, 1.0));
        const float m = (float)(0.5 + 2.0 * test_rnd(&fixed, 0.0, 1.0));
        const double span = box_half - 0.5;
        f.pos[i] = (sim_vec4f){(float)(span * (2.0 * test_rnd(&rng, 0.0, 1.0) - 1.0)),
                               (float)(span * (2.0 * test_rnd(&rng, 0.0, 1.0) - 1.0)),
                               (float)(span * (2.0 * test_rnd(&rng, 0.0, 1.0) - 1.0)), r};
        f.vel[i] = (sim_vec4f){(float)(3.0 * test_rnd(&rng, 0.0, 1.0) - 1.5),
                               (float)(1e-7 * test_rnd(&rng, 0.0, 1.0)),
                               (float)(-2e5 * test_rnd(&rng, 0.0, 1.0)), m};
        f.force[i] = (sim_vec4f){(float)(1e-30 * test_rnd(&rng, 0.0, 1.0)),
                                 (float)(-123456.789 * test_rnd(&rng, 0.0, 1.0)), 0.0f, 0.0f};
    }
    return f;
}

static void free_frame(frame_data *f) {
    free(f->pos);
    free(f->vel);
    free(f->force);
}

static sim_traj_frame as_traj(const frame_data *d, uint64_t step, double time, double box) {
    return (sim_traj_frame){.n = d->n,
                            .step = step,
                            .time = time,
                            .box_half = box,
                            .pos = d->pos,
                            .vel = d->vel,
                            .force = d->force};
}

/* sim_traj_writer_open_params; for a .nc and nc_version 5, the file begun again as CDF-5
 * (traj_netcdf_reopen), as a run past TRAJ_NETCDF_CDF2_MAX_N bodies writes it, at a small n. 0:
 * the variant N chooses. */
static sim_status open_writer(sim_traj_writer **w, const char *path, uint32_t n,
                              const sim_params *p, int nc_version, sim_error *err) {
    sim_status st = sim_traj_writer_open_params(w, path, n, p, err);
    if (st == SIM_OK && nc_version != 0 && nc_version != traj_netcdf_version(n)) {
        st = traj_netcdf_reopen(*w, nc_version, err);
        if (st != SIM_OK) {
            sim_traj_writer_close(*w, NULL);
            *w = NULL;
        }
    }
    return st;
}

/* The variant of a NetCDF file from its magic number: 1, 2 or 5 (CDF-1, -2, -5); 0 for any
 * other. */
static int nc_variant(const char *path) {
    unsigned char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    const size_t got = f != NULL ? fread(magic, 1, 4, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    return got == 4 && memcmp(magic, "CDF", 3) == 0 ? magic[3] : 0;
}

/* ---- formats and numbers ---- */

static void test_format_from_path(void) {
    ENSURE(sim_traj_format_from_path("run.xyz") == SIM_TRAJ_XYZ);
    ENSURE(sim_traj_format_from_path("a/b/RUN.XYZ") == SIM_TRAJ_XYZ);
    ENSURE(sim_traj_format_from_path("run.lammpstrj") == SIM_TRAJ_LAMMPS);
    ENSURE(sim_traj_format_from_path("run.nc") == SIM_TRAJ_NETCDF);
    ENSURE(sim_traj_format_from_path("run.scene") == SIM_TRAJ_NONE);
    ENSURE(sim_traj_format_from_path(".xyz") == SIM_TRAJ_NONE);
    ENSURE(sim_traj_format_from_path("xyz") == SIM_TRAJ_NONE);
    ENSURE(strstr(sim_traj_format_list(), ".lammpstrj") != NULL);
    ENSURE(strcmp(sim_traj_format_extension(SIM_TRAJ_NETCDF), ".nc") == 0);
}

size_t traj_fmt_float(char *out, float v); /* traj_impl.h (private to sim/) */

static void check_float(float v) {
    char text[32];
    const size_t len = traj_fmt_float(text, v);
    text[len] = '\0';
    const float back = strtof(text, NULL);
    ENSURE_MSG(len <= 15, "'%s' is longer than 15 characters", text);
    ENSURE_MSG(memcmp(&back, &v, sizeof v) == 0 || (isnan(back) && isnan(v)),
               "%.9g printed as '%s' reads back as %.9g", (double)v, text, (double)back);
}

size_t traj_fmt_double_at(char *out, double v); /* traj_impl.h */

static void check_double(double v) {
    char text[40];
    const size_t len = traj_fmt_double_at(text, v);
    text[len] = '\0';
    const double back = strtod(text, NULL);
    ENSURE_MSG(len <= 24, "'%s' is longer than 24 characters", text);
    ENSURE_MSG(memcmp(&back, &v, sizeof v) == 0 || (isnan(back) && isnan(v)),
               "%.17g printed as '%s' reads back as %.17g", v, text, back);
}

/* Every double comes back bit for bit (a CPU run's trajectory holds its state exactly), in at
 * most 17 digits, and as 15 when they suffice. */
static void test_fmt_double_round_trip(void) {
    const double special[] = {0.0,         -0.0,      1.0,       -1.0,      0.1,
                              0.45,        1e17,      1e16,      1e-4,      9.999999999999999e-5,
                              123456789.0, DBL_MAX,   DBL_MIN,   4.9e-324,  2.2250738585072009e-308,
                              1e300,       1e-300,    0x1p-1074, 0x1p1023,  0x1.fffffffffffffp1023,
                              5.0,         100.0,     0.5,       1.0 / 3.0, 2.0 / 3.0,
                              INFINITY,    -INFINITY, NAN};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) {
        check_double(special[i]);
    }
    uint64_t rng = 7;
    int failures_before = ensure_failures;
    for (int i = 0; i < 300000 && ensure_failures == failures_before; ++i) {
        /* random bit patterns (every exponent), then ordinary values (positions, speeds) */
        const uint64_t bits = ((uint64_t)test_rnd(&rng, 0.0, 4294967296.0) << 32) |
                              (uint64_t)test_rnd(&rng, 0.0, 4294967296.0);
        double v;
        memcpy(&v, &bits, sizeof v);
        check_double(v);
        check_double(test_rnd(&rng, -100.0, 100.0));
    }
    char text[40];
    const struct {
        double v;
        const char *text;
    } shortest[] = {{0.45, "0.45"},
                    {-2.5, "-2.5"},
                    {1e-7, "1e-07"},
                    {0.1 + 0.2, "0.30000000000000004"},
                    {6.02214076e23, "6.02214076e+23"},
                    {1e-300, "1e-300"}};
    for (size_t i = 0; i < sizeof shortest / sizeof shortest[0]; ++i) {
        text[traj_fmt_double_at(text, shortest[i].v)] = '\0';
        ENSURE_MSG(strcmp(text, shortest[i].text) == 0, "'%s', want '%s'", text, shortest[i].text);
    }
}

static void test_fmt_float_round_trip(void) {
    const float special[] = {0.0f,
                             -0.0f,
                             1.0f,
                             -1.0f,
                             0.1f,
                             1e9f,
                             999999999.0f,
                             1e-4f,
                             0.000099999f,
                             123456789.0f,
                             3.4028235e38f,
                             1.4e-45f,
                             1.17549435e-38f,
                             5.0f,
                             100.0f,
                             0.5f,
                             INFINITY,
                             -INFINITY,
                             NAN};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) {
        check_float(special[i]);
    }
    uint64_t rng = 99;
    int failures_before = ensure_failures;
    for (int i = 0; i < 300000 && ensure_failures == failures_before; ++i) {
        uint32_t bits = (uint32_t)test_rnd(&rng, 0.0, 4294967296.0);
        float v;
        memcpy(&v, &bits, sizeof v);
        check_float(v);
    }
    /* Same text as printf's %.9g for ordinary values (trailing zeros trimmed, like %g). */
    char a[32], b[32];
    const float ordinary[] = {1.5f, -0.25f, 1234.5f, 6.02214076e23f, 1e-7f, 42.0f, 0.000123f};
    for (size_t i = 0; i < sizeof ordinary / sizeof ordinary[0]; ++i) {
        a[traj_fmt_float(a, ordinary[i])] = '\0';
        snprintf(b, sizeof b, "%.9g", (double)ordinary[i]);
        ENSURE_MSG(strcmp(a, b) == 0, "'%s' vs printf '%s'", a, b);
    }
}

/* ---- round trips ---- */

static void round_trip_as(const char *name, uint32_t n, int nc_version) {
    const char *path = test_tmp_path(name);
    const double box = 7.5;
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(open_writer(&w, path, n, NULL, nc_version, &err) == SIM_OK, "%s", err.message);
    if (w == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    frame_data last = {0};
    for (uint64_t k = 0; k < 3; ++k) {
        frame_data d = make_frame(n, box, k);
        const sim_traj_frame f = as_traj(&d, 100 * k, 0.25 * (double)k, box);
        ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
        if (k < 2) {
            free_frame(&d);
        } else {
            last = d;
        }
    }
    ENSURE(sim_traj_writer_frames(w) == 3);
    ENSURE(sim_traj_writer_bytes(w) == file_size(path));
    ENSURE(sim_traj_writer_close(w, &err) == SIM_OK);

    sim_params p = sim_params_default();
    p.box_half = 99.0;
    sim_state s = {0};
    sim_traj_info info;
    ENSURE_MSG(sim_traj_read_last(path, &p, &s, &info, &err) == SIM_OK, "%s", err.message);
    ENSURE(s.n == n && info.frames == 3 && info.frame == 2 && !info.truncated);
    ENSURE(info.step == 200 && info.time == 0.5 && info.has_box && p.box_half == box);
    /* Every float comes back exactly (text: the 9-digit decimal read as a double rounds to the
     * float that was written). */
    int exact = 1;
#define F(v) ((float)(v))
    for (uint32_t i = 0; i < s.n && i < n; ++i) {
        const sim_vec4f x = last.pos[i], v = last.vel[i];
        exact &= F(s.pos[i].x) == x.x && F(s.pos[i].y) == x.y && F(s.pos[i].z) == x.z &&
                 F(s.pos[i].w) == x.w;
        exact &= F(s.vel[i].x) == v.x && F(s.vel[i].y) == v.y && F(s.vel[i].z) == v.z &&
                 F(s.vel[i].w) == v.w;
    }
#undef F
    ENSURE_MSG(exact, "%s: the last frame does not read back bit for bit", name);
    /* A trajectory is a scene too: the last frame, for continuing a run. */
    sim_state t = {0};
    sim_params q = sim_params_default();
    ENSURE(sim_scene_load(path, &q, &t, &err) == SIM_OK && t.n == n && q.box_half == box);
    ENSURE(t.n == n && memcmp(t.pos, s.pos, n * sizeof *s.pos) == 0);
    sim_state_free(&t);
    sim_state_free(&s);
    free_frame(&last);
}

static void round_trip(const char *name, uint32_t n) {
    round_trip_as(name, n, 0);
}

/* The first `cap - 1` bytes of a file, NUL-terminated. */
static const char *file_head(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t got = f != NULL ? fread(buf, 1, cap - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    buf[got] = '\0';
    return buf;
}

static void test_round_trip_xyz(void) {
    round_trip("rt.xyz", 1000);
    round_trip("rt_big.xyz", 70001); /* more than one formatting chunk */
    /* ASE's names beside OVITO's: a species column, momenta and masses (ASE reads velocities and
     * masses only under those names), velo and mass */
    char head[2048];
    file_head(test_tmp_path("rt.xyz"), head, sizeof head);
    ENSURE_MSG(strstr(head, "Properties=species:S:1:id:I:1:pos:R:3:velo:R:3:momenta:R:3:radius:R:1:"
                            "mass:R:1:masses:R:1:forces:R:3 ") != NULL,
               "%.300s", head);
    const char *body = strchr(strchr(head, '\n') + 1, '\n') + 1;
    ENSURE_MSG(strncmp(body, "X 1 ", 4) == 0, "%.80s", body);
}

static void test_round_trip_lammps(void) {
    round_trip("rt.lammpstrj", 1000);
    round_trip("rt_big.lammpstrj", 70001);
    /* a type column: ASE refuses a dump without one ("Cannot determine atom types") */
    char head[2048];
    file_head(test_tmp_path("rt.lammpstrj"), head, sizeof head);
    const char *atoms = strstr(head, "ITEM: ATOMS id type x y z vx vy vz radius mass fx fy fz\n");
    ENSURE_MSG(atoms != NULL, "%.400s", head);
    ENSURE(atoms != NULL && strncmp(strchr(atoms, '\n') + 1, "1 1 ", 4) == 0);
}

static void test_round_trip_netcdf(void) {
    if (!sim_traj_netcdf_available()) {
        sim_traj_writer *w = NULL;
        sim_error err = {SIM_OK, ""};
        ENSURE(sim_traj_writer_open(&w, test_tmp_path("x.nc"), 10, &err) == SIM_UNSUPPORTED);
        ENSURE(strstr(err.message, "NetCDF") != NULL && access(test_tmp_path("x.nc"), F_OK) != 0);
        printf("(this build has no NetCDF: checked the one-line refusal)\n");
        return;
    }
    round_trip("rt.nc", 1000);
    ENSURE(nc_variant(test_tmp_path("rt.nc")) == 2); /* CDF-2: what MDAnalysis reads */
    /* the variant of runs past TRAJ_NETCDF_CDF2_MAX_N bodies, CDF-5, reads back the same */
    round_trip_as("rt5.nc", 1000, 5);
    ENSURE(nc_variant(test_tmp_path("rt5.nc")) == 5);
    /* Radii are stored once: a frame that changes one is refused, the file keeps its frames. */
    const char *path = test_tmp_path("radius.nc");
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    frame_data d = make_frame(50, 5.0, 1);
    sim_traj_frame f = as_traj(&d, 0, 0.0, 5.0);
    ENSURE(sim_traj_writer_open(&w, path, 50, &err) == SIM_OK);
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
    d.pos[7].w *= 2.0f;
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, "body 8") != NULL);
    ENSURE(sim_traj_writer_close(w, &err) != SIM_OK);
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_traj_info info;
    ENSURE(sim_traj_read_last(path, &p, &s, &info, &err) == SIM_OK && info.frames == 1);
    sim_state_free(&s);
    free_frame(&d);
}

/* A frame of double values, as the CPU reference's state (full 53-bit mantissas, none a float),
 * is written by the text formats at full precision: every double reads back bit for bit. NetCDF
 * keeps float32 (the AMBER convention's type): the doubles rounded once. */
static void test_double_frames(void) {
    const uint32_t n = 2000;
    const double box = 6.0;
    sim_vec4d *pos = malloc(n * sizeof *pos), *vel = malloc(n * sizeof *vel);
    sim_vec4d *spin = malloc(n * sizeof *spin);
    sim_vec3d *force = malloc(n * sizeof *force);
    uint64_t rng = 99;
    for (uint32_t i = 0; i < n; ++i) {
        pos[i] = (sim_vec4d){test_rnd(&rng, -5.0, 5.0), test_rnd(&rng, -5.0, 5.0),
                             test_rnd(&rng, -1e-9, 1e-9), test_rnd(&rng, 0.1, 0.4)};
        vel[i] = (sim_vec4d){test_rnd(&rng, -3.0, 3.0), test_rnd(&rng, -1e-300, 1e-300),
                             test_rnd(&rng, -1e12, 1e12), test_rnd(&rng, 0.5, 2.5)};
        spin[i] = (sim_vec4d){test_rnd(&rng, -7.0, 7.0), 0.0, -test_rnd(&rng, 0.0, 1e-5), 0.0};
        force[i] = (sim_vec3d){test_rnd(&rng, -1e4, 1e4), -0.1, test_rnd(&rng, -1e-20, 1e-20)};
    }
    sim_params with_spin = sim_params_default();
    with_spin.friction = 0.3; /* frames carry the spin */
    const char *const names[3] = {"double.xyz", "double.lammpstrj", "double.nc"};
    for (int k = 0; k < 3; ++k) {
        if (k == 2 && !sim_traj_netcdf_available()) {
            continue;
        }
        const char *path = test_tmp_path(names[k]);
        sim_traj_writer *w = NULL;
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_traj_writer_open_params(&w, path, n, &with_spin, &err) == SIM_OK, "%s",
                   err.message);
        if (w == NULL) {
            continue;
        }
        sim_traj_frame f = {.n = n,
                            .step = 7,
                            .time = 0.1,
                            .box_half = box,
                            .pos_d = pos,
                            .vel_d = vel,
                            .force_d = force,
                            .spin_d = spin};
        ENSURE_MSG(sim_traj_writer_write(w, &f, &err) == SIM_OK, "%s", err.message);
        f.step = 8;
        ENSURE_MSG(sim_traj_writer_write(w, &f, &err) == SIM_OK, "%s", err.message);
        ENSURE(sim_traj_writer_close(w, &err) == SIM_OK);
        sim_params p = sim_params_default();
        sim_state s = {0};
        sim_traj_info info;
        ENSURE_MSG(sim_traj_read_last(path, &p, &s, &info, &err) == SIM_OK, "%s", err.message);
        ENSURE(s.n == n && info.frames == 2 && info.step == 8);
        uint32_t bad = 0;
        for (uint32_t i = 0; i < s.n && i < n; ++i) {
            const sim_vec4d a = s.pos[i], v = s.vel[i], w4 = s.spin[i];
            if (k < 2) { /* text: the doubles themselves */
                bad += !(a.x == pos[i].x && a.y == pos[i].y && a.z == pos[i].z && a.w == pos[i].w &&
                         v.x == vel[i].x && v.y == vel[i].y && v.z == vel[i].z && v.w == vel[i].w &&
                         w4.x == spin[i].x && w4.z == spin[i].z);
            } else { /* NetCDF: float32 */
                bad += !(a.x == (float)pos[i].x && a.z == (float)pos[i].z &&
                         v.z == (float)vel[i].z && v.w == (float)vel[i].w);
            }
        }
        ENSURE_MSG(bad == 0, "%s: %u of %u bodies do not read back as written", names[k], bad, n);
        sim_state_free(&s);
    }
    /* The dump says its units, once, as LAMMPS's `dump_modify units yes` does */
    char head[4096];
    file_head(test_tmp_path("double.lammpstrj"), head, sizeof head);
    static const char units_first[] = "ITEM: UNITS\nsi\nITEM: TIME\n";
    ENSURE_MSG(strncmp(head, units_first, strlen(units_first)) == 0, "%.60s", head);
    FILE *fl = fopen(test_tmp_path("double.lammpstrj"), "r");
    char line[1024];
    int units = 0;
    while (fl != NULL && fgets(line, sizeof line, fl) != NULL) {
        units += strcmp(line, "ITEM: UNITS\n") == 0;
    }
    if (fl != NULL) {
        fclose(fl);
    }
    ENSURE(units == 1);
    free(pos);
    free(vel);
    free(spin);
    free(force);
}

/* ---- what other programs write ---- */

/* The last frame of a file holding `text` (the scratch file `name`) read into *p, *s and *info
 * (may be NULL); ENSUREs that it reads. */
static void read_text(const char *name, const char *text, sim_params *p, sim_state *s,
                      sim_traj_info *info) {
    const char *path = test_tmp_path(name);
    test_write_file(path, text);
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_traj_read_last(path, p, s, info, &err) == SIM_OK, "%s", err.message);
}

static void test_read_lammps_variants(void) {
    /* Unsorted ids (a parallel LAMMPS run), diameter instead of radius, scaled positions,
     * density instead of mass, an ITEM: UNITS block and no TIME. */
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_traj_info info;
    read_text("lmp.lammpstrj",
              "ITEM: UNITS\nsi\nITEM: TIMESTEP\n10\nITEM: NUMBER OF ATOMS\n3\n"
              "ITEM: BOX BOUNDS ff ff ff\n-2 2\n-2 2\n-2 2\n"
              "ITEM: ATOMS id type xs ys zs diameter density\n"
              "3 1 0.75 0.5 0.5 0.2 1000\n"
              "1 1 0.25 0.5 0.5 0.4 1000\n"
              "2 1 0.5 0.5 0.5 0.6 2000\n",
              &p, &s, &info);
    ENSURE(s.n == 3 && p.box_half == 2.0 && info.step == 10);
    if (s.n == 3) {
        ENSURE(s.pos[0].x == -1.0 && s.pos[1].x == 0.0 && s.pos[2].x == 1.0);
        ENSURE(s.pos[0].w == 0.2 && s.pos[1].w == 0.3 && s.pos[2].w == 0.1);
        ENSURE_NEAR(s.vel[1].w, sim_sphere_mass(0.3, 2000.0), 1e-12);
        ENSURE(s.vel[0].x == 0.0);
    }
    sim_state_free(&s);
}

static void test_read_ase_xyz(void) {
    /* What ase.io.write(format='extxyz') writes for spheres with a radius array, no Origin. */
    sim_params p = sim_params_default();
    sim_state s = {0};
    read_text("ase.xyz",
              "2\nLattice=\"4.0 0.0 0.0 0.0 4.0 0.0 0.0 0.0 4.0\" "
              "Properties=species:S:1:pos:R:3:radius:R:1 pbc=\"F F F\"\n"
              "X 0.5 0.0 0.0 0.25\nX -0.5 0.0 0.0 0.25\n",
              &p, &s, NULL);
    ENSURE(s.n == 2 && p.box_half == 2.0);
    if (s.n == 2) {
        ENSURE(s.pos[1].x == -0.5 && s.pos[1].w == 0.25);
        ENSURE_NEAR(s.vel[0].w, sim_sphere_mass(0.25, 1.0), 1e-15); /* density 1 without mass */
    }
    sim_state_free(&s);
    /* Atoms with velocities: ASE writes momenta and masses, no velocity column. */
    read_text("ase_momenta.xyz",
              "2\nLattice=\"4.0 0.0 0.0 0.0 4.0 0.0 0.0 0.0 4.0\" "
              "Properties=species:S:1:pos:R:3:masses:R:1:momenta:R:3:radius:R:1 pbc=\"F F F\"\n"
              "X 0.5 0.0 0.0 2.0 1.0 -4.0 0.5 0.25\nX -0.5 0.0 0.0 0.5 0.0 0.0 0.25 0.25\n",
              &p, &s, NULL);
    ENSURE(s.n == 2);
    if (s.n == 2) {
        ENSURE(s.vel[0].w == 2.0 && s.vel[0].x == 0.5 && s.vel[0].y == -2.0 && s.vel[0].z == 0.25);
        ENSURE(s.vel[1].w == 0.5 && s.vel[1].x == 0.0 && s.vel[1].z == 0.5);
    }
    sim_state_free(&s);
}

/* ---- the run's parameters in a dump ---- */

static sim_params unusual_params(void) {
    sim_params p = sim_params_default();
    p.dt = 3.0000000000000001e-4;
    p.stiffness = 25000.5;
    p.restitution = 0.55;
    p.gravity = (sim_vec3d){0.5, -9.81, 1e-3};
    p.box_half = 6.0;
    p.atm_nu = -0.25;
    p.atm_cutoff = 2.5;
    p.steps_per_frame = 7;
    p.hertz = 1;
    p.triplets = 1;
    p.friction = 0.4;
    p.rolling_friction = 0.01;
    p.stiffness_ratio = 0.5;
    p.tangential_damping.value = 0.25;
    p.tangential_damping.set = 1;
    p.skin.value = 0.125;
    p.skin.set = 1;
    p.periodic = 5; /* x and z: "xz" in every format */
    return p;
}

static int same_params(const sim_params *a, const sim_params *b) {
    return a->dt == b->dt && a->stiffness == b->stiffness && a->restitution == b->restitution &&
           a->gravity.x == b->gravity.x && a->gravity.y == b->gravity.y &&
           a->gravity.z == b->gravity.z && a->box_half == b->box_half && a->atm_nu == b->atm_nu &&
           a->atm_cutoff == b->atm_cutoff && a->steps_per_frame == b->steps_per_frame &&
           a->hertz == b->hertz && a->triplets == b->triplets && a->friction == b->friction &&
           a->rolling_friction == b->rolling_friction && a->stiffness_ratio == b->stiffness_ratio &&
           a->tangential_damping.value == b->tangential_damping.value &&
           a->tangential_damping.set == b->tangential_damping.set &&
           a->skin.value == b->skin.value && a->skin.set == b->skin.set &&
           a->periodic == b->periodic;
}

/* Writes two frames of 40 bodies inside walls at +-box, with params (NULL: none). */
static void write_dump(const char *path, const sim_params *params, double box) {
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_traj_writer_open_params(&w, path, 40, params, &err) == SIM_OK, "%s",
               err.message);
    frame_data d = make_frame(40, box, 5);
    for (uint64_t k = 0; k < 2 && w != NULL; ++k) {
        const sim_traj_frame f = as_traj(&d, 10 * k, 0.1 * (double)k, box);
        ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
    }
    ENSURE(sim_traj_writer_close(w, &err) == SIM_OK);
    free_frame(&d);
}

/* Resuming from a dump keeps the physics: every parameter comes back bit for bit in each format
 * (before, only the box did, and gravity 0 / restitution 0.9 went on silently); as a scene the
 * command line's values win, and bodies must fit a --box; a dump without parameters names, in
 * one warning, what was not restored; a carried value that breaks its rule is refused. */
static void test_params_in_dumps(void) {
    const char *names[3] = {"params.xyz", "params.lammpstrj", "params.nc"};
    const sim_params want = unusual_params();
    for (int k = 0; k < 3; ++k) {
        if (k == 2 && !sim_traj_netcdf_available()) {
            continue;
        }
        const char *path = test_tmp_path(names[k]);
        write_dump(path, &want, want.box_half);
        sim_params p = sim_params_default();
        sim_state s = {0};
        sim_traj_info info;
        sim_error err = {SIM_OK, ""};
        ENSURE_MSG(sim_traj_read_last(path, &p, &s, &info, &err) == SIM_OK, "%s", err.message);
        ENSURE_MSG(same_params(&p, &want), "%s: the parameters did not come back", names[k]);
        ENSURE_MSG(info.params_found == SIM_PARAM_BITS_ALL, "%s: found %#x", names[k],
                   info.params_found);
        sim_state_free(&s);

        /* as a scene: the command line's gravity and box win; no warning */
        sim_params q = sim_params_default();
        q.gravity = (sim_vec3d){0.0, 0.0, -1.0};
        q.box_half = 7.0;
        char warnings[512] = "";
        sim_scene_load_options opt = {.fixed = (1u << SIM_PARAM_GRAVITY) | (1u << SIM_PARAM_BOX),
                                      .warnings = warnings,
                                      .warnings_cap = sizeof warnings};
        ENSURE_MSG(sim_scene_load_with(path, &opt, &q, &s, &err) == SIM_OK, "%s", err.message);
        ENSURE(q.gravity.z == -1.0 && q.gravity.y == 0.0 && q.box_half == 7.0);
        ENSURE(q.restitution == want.restitution && q.hertz == 1 && q.triplets == 1 &&
               q.steps_per_frame == 7 && q.dt == want.dt);
        ENSURE_MSG(warnings[0] == '\0', "%s", warnings);
        sim_state_free(&s);
        /* a --box too small for the dump's bodies */
        q.box_half = 1.0;
        ENSURE(sim_scene_load_with(path, &opt, &q, &s, &err) == SIM_PARSE);
        ENSURE_MSG(strstr(err.message, "beyond the walls at +-1 (--box)") != NULL, "%s",
                   err.message);
        ENSURE(s.pos == NULL && q.box_half == 1.0);

        /* the same dump without parameters: one warning names what was not restored */
        write_dump(path, NULL, want.box_half);
        sim_params r = sim_params_default();
        warnings[0] = '\0';
        opt.fixed = 1u << SIM_PARAM_STIFFNESS;
        ENSURE(sim_scene_load_with(path, &opt, &r, &s, &err) == SIM_OK);
        ENSURE(r.box_half == want.box_half && r.gravity.y == sim_params_default().gravity.y);
        ENSURE_MSG(strstr(warnings, names[k]) &&
                       strstr(warnings, "does not carry dt, restitution, gravity, atm_nu, "
                                        "atm_cutoff, steps_per_frame, friction, rolling_friction, "
                                        "stiffness_ratio, tangential_damping, skin, periodic, "
                                        "lammps_dashpot, hertz, triplets") &&
                       strstr(warnings, "not restored") && !strchr(warnings, '\n'),
                   "%s", warnings);
        sim_state_free(&s);

        /* defaults that are no number: tangential damping "auto", the default stiffness ratio */
        sim_params dflt = sim_params_default();
        write_dump(path, &dflt, want.box_half);
        sim_params d = want;
        ENSURE(sim_traj_read_last(path, &d, &s, &info, &err) == SIM_OK);
        ENSURE_MSG(d.tangential_damping.set == 0 && d.skin.set == 0 && d.friction == 0.0 &&
                       d.stiffness_ratio == SIM_DEFAULT_STIFFNESS_RATIO,
                   "%s: set %d, ratio %g", names[k], d.tangential_damping.set, d.stiffness_ratio);
        sim_state_free(&s);
    }
    /* values are checked by the rules of scene files */
    test_write_file(test_tmp_path("badparam.lammpstrj"),
                    "ITEM: TIMESTEP\n3\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS ff ff ff\n"
                    "-1 1\n-1 1\n-1 1\nITEM: NBSIM PARAMETERS\ndt=0 restitution=2\n"
                    "ITEM: ATOMS id type x y z radius\n1 1 0 0 0 0.1\n");
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_traj_read_last(test_tmp_path("badparam.lammpstrj"), &p, &s, NULL, &err) ==
           SIM_PARSE);
    ENSURE_MSG(strstr(err.message, "badparam.lammpstrj: frame 0: restitution: '2' must be") != NULL,
               "%s", err.message);
    ENSURE(s.pos == NULL && p.restitution == sim_params_default().restitution);
    /* another program's keys in an extended XYZ comment are not nbsim's */
    read_text("otherkeys.xyz",
              "1\nProperties=pos:R:3:radius:R:1 dt=5 gravity=\"1 2 3\" nbsim_stiffness=123\n"
              "0 0 0 0.1\n",
              &p, &s, NULL);
    ENSURE(p.dt == sim_params_default().dt && p.gravity.x == 0.0 && p.stiffness == 123.0);
    sim_state_free(&s);
}

/* ---- errors ---- */

static void expect_error(const char *name, const char *text, sim_status want, const char *must1,
                         const char *must2) {
    const char *path = test_tmp_path(name);
    test_write_file(path, text);
    sim_params p = sim_params_default(), before = p;
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_traj_read_last(path, &p, &s, NULL, &err) == want, "%s: %s", name, err.message);
    ENSURE_MSG(strstr(err.message, name) != NULL, "'%s' does not name the file", err.message);
    ENSURE_MSG(strstr(err.message, must1) != NULL, "'%s' lacks '%s'", err.message, must1);
    ENSURE_MSG(must2 == NULL || strstr(err.message, must2) != NULL, "'%s' lacks '%s'", err.message,
               must2);
    ENSURE(strchr(err.message, '\n') == NULL);
    ENSURE(s.pos == NULL && p.box_half == before.box_half);
}

static void test_read_errors(void) {
    expect_error("norad.xyz", "1\nProperties=species:S:1:pos:R:3\nH 0 0 0\n", SIM_PARSE, "frame 0",
                 "radius");
    expect_error("plain.xyz", "1\ncomment\nH 0 0 0\n2\nc\nH 0 0 0\nH 1 1 1\n", SIM_PARSE, "frame 1",
                 "radius");
    expect_error("norad.lammpstrj",
                 "ITEM: TIMESTEP\n5\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS pp pp pp\n"
                 "-1 1\n-1 1\n-1 1\nITEM: ATOMS id x y z\n1 0 0 0\n",
                 SIM_PARSE, "timestep 5", "radius");
    expect_error("box.lammpstrj",
                 "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS ff ff ff\n"
                 "0 2\n0 2\n0 2\nITEM: ATOMS id x y z radius\n1 1 1 1 0.1\n",
                 SIM_PARSE, "not a cube centred", NULL);
    expect_error("box.xyz",
                 "1\nLattice=\"2 0 0 0 3 0 0 0 2\" Properties=pos:R:3:radius:R:1\n0 0 0 0.1\n",
                 SIM_PARSE, "not a cube", NULL);
    expect_error("outside.xyz",
                 "1\nLattice=\"2 0 0 0 2 0 0 0 2\" Properties=pos:R:3:radius:R:1\n1.5 0 0 0.1\n",
                 SIM_PARSE, "beyond the walls", NULL);
    expect_error("dup.lammpstrj",
                 "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS ff ff ff\n"
                 "-1 1\n-1 1\n-1 1\nITEM: ATOMS id x y z radius\n1 0 0 0 0.1\n1 0.5 0 0 0.1\n",
                 SIM_PARSE, "id 1 appears twice", NULL);
    expect_error("empty.xyz", "", SIM_PARSE, "no complete frame", NULL);
    expect_error("junk.lammpstrj", "hello\n", SIM_PARSE, "not a LAMMPS dump", NULL);
    expect_error("zero.xyz", "1\nProperties=pos:R:3:radius:R:1\n0 0 0 0\n", SIM_PARSE,
                 "radius 0 must be > 0", NULL);
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_traj_read_last(test_tmp_path("missing.xyz"), &p, &s, NULL, &err) == SIM_IO);
    ENSURE(strstr(err.message, "missing.xyz") != NULL);
}

static void test_truncated_last_frame(void) {
    /* A run killed while writing: the frame being written is incomplete and skipped. */
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_traj_info info;
    read_text("cut.lammpstrj",
              "ITEM: TIMESTEP\n1\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS ff ff ff\n"
              "-1 1\n-1 1\n-1 1\nITEM: ATOMS id x y z radius\n1 0.1 0 0 0.1\n2 0.5 0 0 0.1\n"
              "ITEM: TIMESTEP\n2\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS ff ff ff\n"
              "-1 1\n-1 1\n-1 1\nITEM: ATOMS id x y z radius\n1 0.2 0 0 0.1\n2 0.6",
              &p, &s, &info);
    ENSURE(info.frames == 1 && info.step == 1 && info.truncated && s.n == 2);
    ENSURE(s.n == 2 && s.pos[0].x == 0.1);
    sim_state_free(&s);
    read_text("cut.xyz",
              "1\nProperties=pos:R:3:radius:R:1 Step=4\n0.1 0 0 0.1\n"
              "1\nProperties=pos:R:3:radius:R:1 Step=5\n0.2 0 0",
              &p, &s, &info);
    ENSURE(info.frames == 1 && info.step == 4 && info.truncated && s.n == 1);
    sim_state_free(&s);
    /* as a scene: one warning says the cut-off frame was skipped */
    char warnings[1024] = "";
    const sim_scene_load_options opt = {.warnings = warnings, .warnings_cap = sizeof warnings};
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_scene_load_with(test_tmp_path("cut.xyz"), &opt, &p, &s, &err) == SIM_OK);
    ENSURE_MSG(strstr(warnings, "cut.xyz: warning: its last frame is cut off; continuing from the "
                                "last complete one (frame 0, step 4)") != NULL,
               "%s", warnings);
    sim_state_free(&s);
}

/* Copies the first `bytes` bytes of src to dst. */
static void copy_head(const char *src, const char *dst, uint64_t bytes) {
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    ENSURE(in != NULL && out != NULL);
    if (in == NULL || out == NULL) {
        return;
    }
    char buf[4096];
    for (uint64_t left = bytes; left > 0;) {
        const size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
        const size_t got = fread(buf, 1, want, in);
        if (got == 0) {
            break;
        }
        fwrite(buf, 1, got, out);
        left -= got;
    }
    fclose(in);
    fclose(out);
}

/* A NetCDF dump cut off (head -c): libnetcdf trusts the header's frame count and reads the
 * missing bytes as zeros, so the reader must see the cut itself: the complete frames load (the
 * last of them, flagged truncated, as the text formats do); a file cut before its first frame
 * or inside its header, and bytes that are no NetCDF at all, are bad input (SIM_PARSE), not an
 * I/O failure. */
static void truncated_netcdf(int nc_version) {
    const uint32_t n = 200;
    char name[32];
    snprintf(name, sizeof name, "whole%d.nc", nc_version);
    const char *path = test_tmp_path(name);
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(open_writer(&w, path, n, NULL, nc_version, &err) == SIM_OK);
    ENSURE(nc_variant(path) == nc_version);
    frame_data d[3] = {make_frame(n, 5.0, 1), make_frame(n, 5.0, 2), make_frame(n, 5.0, 3)};
    uint64_t ends[3] = {0, 0, 0};
    for (int k = 0; k < 3 && w != NULL; ++k) {
        const sim_traj_frame f = as_traj(&d[k], 10u * (uint64_t)k, 0.5 * k, 5.0);
        ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
        ends[k] = sim_traj_writer_bytes(w);
    }
    ENSURE(sim_traj_writer_close(w, &err) == SIM_OK);
    const char *cut = test_tmp_path("cut.nc");
    /* in the middle of the third frame: the second is the last complete one */
    copy_head(path, cut, (ends[1] + ends[2]) / 2);
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_traj_info info;
    ENSURE_MSG(sim_traj_read_last(cut, &p, &s, &info, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(info.frames == 2 && info.frame == 1 && info.step == 10 && info.truncated,
               "%llu frames, step %llu, truncated %d", (unsigned long long)info.frames,
               (unsigned long long)info.step, info.truncated);
    for (uint32_t i = 0; i < s.n && s.n == n; ++i) {
        ENSURE(s.pos[i].x == (double)d[1].pos[i].x && s.vel[i].z == (double)d[1].vel[i].z);
    }
    sim_state_free(&s);
    /* exactly at a frame's end: the header still announces three */
    copy_head(path, cut, ends[1]);
    ENSURE(sim_traj_read_last(cut, &p, &s, &info, &err) == SIM_OK);
    ENSURE(info.frames == 2 && info.truncated);
    sim_state_free(&s);
    ENSURE(sim_traj_read_last(path, &p, &s, &info, &err) == SIM_OK); /* the whole file */
    ENSURE(info.frames == 3 && info.step == 20 && !info.truncated);
    sim_state_free(&s);
    /* before the first frame is whole, inside the header, and not NetCDF at all */
    const uint64_t bad[3] = {ends[0] - 100, 40, 0};
    const char *const why[3] = {"truncated", "truncated", "not a readable NetCDF"};
    for (int k = 0; k < 3; ++k) {
        if (k < 2) {
            copy_head(path, cut, bad[k]);
        } else {
            test_write_file(cut, "CDX this is not a NetCDF file\n");
        }
        sim_params q = sim_params_default();
        ENSURE_MSG(sim_traj_read_last(cut, &q, &s, NULL, &err) == SIM_PARSE, "cut at %llu: %s",
                   (unsigned long long)bad[k], err.message);
        ENSURE_MSG(strstr(err.message, "cut.nc") && strstr(err.message, why[k]), "%s", err.message);
        ENSURE(s.pos == NULL && q.box_half == sim_params_default().box_half);
    }
    for (int k = 0; k < 3; ++k) {
        free_frame(&d[k]);
    }
}

static void test_truncated_netcdf(void) {
    if (sim_traj_netcdf_available()) {
        truncated_netcdf(2);
        truncated_netcdf(5); /* a 64-bit header: counts, lengths and sizes of 8 bytes */
    }
}

static void test_open_errors(void) {
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_traj_writer_open(&w, "/no/such/dir/run.xyz", 10, &err) == SIM_IO && w == NULL);
    ENSURE(strstr(err.message, "/no/such/dir/run.xyz") != NULL);
    ENSURE(sim_traj_writer_open(&w, test_tmp_path("run.dcd"), 10, &err) == SIM_BAD_ARGUMENT);
    ENSURE(strstr(err.message, ".lammpstrj") != NULL &&
           access(test_tmp_path("run.dcd"), F_OK) != 0);
    if (sim_traj_netcdf_available()) {
        ENSURE(sim_traj_writer_open(&w, "/no/such/dir/run.nc", 10, &err) == SIM_IO);
        ENSURE(strstr(err.message, "/no/such/dir/run.nc") != NULL);
    }
}

/* A file size limit makes a write fail part-way, like a full disk (EFBIG instead of ENOSPC):
 * the failed frame must be cut off and the complete ones must read back. */
static void write_until_full(const char *name, uint32_t n, int nc_version) {
    const char *path = test_tmp_path(name);
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(open_writer(&w, path, n, NULL, nc_version, &err) == SIM_OK);
    if (w == NULL) {
        return;
    }
    frame_data d = make_frame(n, 5.0, 3);
    /* Room for two and a half frames. */
    sim_traj_frame f = as_traj(&d, 0, 0.0, 5.0);
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
    const uint64_t frame_bytes =
        sim_traj_writer_format(w) == SIM_TRAJ_NETCDF
            ? (uint64_t)n * 36 + 96 /* 3 float vectors, time, step, box, cell */
            : sim_traj_writer_bytes(w);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)(sim_traj_writer_bytes(w) + frame_bytes + frame_bytes / 2);
    signal(SIGXFSZ, SIG_IGN);
    ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    sim_status st = SIM_OK;
    uint64_t k = 1;
    for (; k < 10 && st == SIM_OK; ++k) {
        f.step = k;
        st = sim_traj_writer_write(w, &f, &err);
    }
    setrlimit(RLIMIT_FSIZE, &old);
    ENSURE_MSG(st == SIM_IO, "%s: status %d", name, (int)st);
    ENSURE_MSG(strstr(err.message, path) != NULL && strstr(err.message, "2 complete frames"), "%s",
               err.message);
    ENSURE(sim_traj_writer_frames(w) == 2);
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_IO); /* refuses from now on */
    ENSURE(sim_traj_writer_close(w, &err) == SIM_IO);
    ENSURE_MSG(file_size(path) <= (uint64_t)lim.rlim_cur, "%s: %llu bytes", name,
               (unsigned long long)file_size(path));
    sim_params p = sim_params_default();
    sim_state s = {0};
    sim_traj_info info;
    ENSURE_MSG(sim_traj_read_last(path, &p, &s, &info, &err) == SIM_OK, "%s", err.message);
    ENSURE_MSG(info.frames == 2 && info.step == 1 && !info.truncated,
               "%s: %llu frames, step %llu, truncated %d", name, (unsigned long long)info.frames,
               (unsigned long long)info.step, info.truncated);
    sim_state_free(&s);
    free_frame(&d);
}

static void test_write_failure_keeps_frames(void) {
    write_until_full("full.xyz", 5000, 0);
    write_until_full("full.lammpstrj", 5000, 0);
    if (sim_traj_netcdf_available()) {
        write_until_full("full.nc", 50000, 0);
        write_until_full("full5.nc", 50000, 5); /* numrecs rolled back in 64 bits */
    }
}

/* The NetCDF variant as a function of N, held against libnetcdf's own limit without a giant
 * allocation: the header nbsim writes for TRAJ_NETCDF_CDF2_MAX_N bodies (with omega) is a valid
 * CDF-2 file, one body more is refused as CDF-2 (NC_EVARSIZE: a frame's coordinates would pass
 * 2^32 - 4 bytes) and written as CDF-5, which nbsim's reader opens (no frame yet). The files are
 * headers with holes: libnetcdf writes no data in NOFILL mode. */
static void test_netcdf_size_rule(void) {
    const uint32_t max = TRAJ_NETCDF_CDF2_MAX_N;
    ENSURE(12ull * max <= (1ull << 32) - 4 && 12ull * (max + 1ull) > (1ull << 32) - 4);
    ENSURE(traj_netcdf_version(1) == 2 && traj_netcdf_version(8400000) == 2);
    ENSURE(traj_netcdf_version(max) == 2 && traj_netcdf_version(max + 1ull) == 5);
    ENSURE(traj_netcdf_version(200000000) == 2 && traj_netcdf_version(UINT32_MAX) == 5);
    if (!sim_traj_netcdf_available()) {
        return;
    }
    const char *path = test_tmp_path("limit.nc");
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(traj_netcdf_define(path, max, 1, 2, &err) == SIM_OK, "%s", err.message);
    ENSURE(nc_variant(path) == 2);
    unlink(path);
    ENSURE(traj_netcdf_define(path, max + 1, 0, 2, &err) == SIM_IO);
    ENSURE_MSG(strstr(err.message, "limit.nc") && strstr(err.message, "variable size"), "%s",
               err.message);
    unlink(path);
    ENSURE(traj_netcdf_define(path, max + 1, 1, traj_netcdf_version(max + 1ull), &err) == SIM_OK);
    ENSURE(nc_variant(path) == 5);
    sim_params p = sim_params_default();
    sim_state s = {0};
    ENSURE(sim_traj_read_last(path, &p, &s, NULL, &err) == SIM_PARSE);
    ENSURE_MSG(strstr(err.message, "no complete frame"), "%s", err.message);
    unlink(path);
}

/* A whole file's bytes (NULL when it cannot be read); *len its size. */
static unsigned char *file_bytes(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    *len = 0;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0) {
        const long size = ftell(f);
        b = size >= 0 ? malloc((size_t)size + 1) : NULL;
        rewind(f);
        *len = b != NULL ? fread(b, 1, (size_t)size, f) : 0;
    }
    if (f != NULL) {
        fclose(f);
    }
    return b;
}

/* Two frames with spin (friction's parameters) of the bodies in d: as given, or from arrays in
 * slots (slot s holds body order[s]) through the frame's slot_of. */
static void write_slotted(const char *path, const frame_data *d, const sim_vec4f *spin,
                          const uint32_t *order) {
    const uint32_t n = d->n;
    sim_params p = sim_params_default();
    p.friction = 0.5;
    frame_data s = make_frame(n, 7.5, 0);
    sim_vec4f *slot_spin = malloc(n * sizeof *slot_spin);
    uint32_t *slot_of = malloc(n * sizeof *slot_of);
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = order != NULL ? order[k] : k;
        s.pos[k] = d->pos[i];
        s.vel[k] = d->vel[i];
        s.force[k] = d->force[i];
        slot_spin[k] = spin[i];
        slot_of[i] = k;
    }
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE_MSG(sim_traj_writer_open_params(&w, path, n, &p, &err) == SIM_OK, "%s", err.message);
    for (uint64_t k = 0; w != NULL && k < 2; ++k) {
        sim_traj_frame f = as_traj(&s, 10 * k, 0.5 * (double)k, 7.5);
        f.spin = slot_spin;
        f.slot_of = order != NULL ? slot_of : NULL;
        ENSURE_MSG(sim_traj_writer_write(w, &f, &err) == SIM_OK, "%s", err.message);
    }
    ENSURE(sim_traj_writer_close(w, &err) == SIM_OK);
    free(slot_spin);
    free(slot_of);
    free_frame(&s);
}

/* The recorder writes a sorted backend's capture in the user's order through slot_of, and NetCDF
 * converts and writes its variables in chunks of traj_netcdf_chunk bodies: every format's file
 * is the same bytes as from arrays in the user's order written in one chunk. */
static void test_slots_and_chunks(void) {
    const uint32_t n = 1000;
    frame_data d = make_frame(n, 7.5, 3);
    sim_vec4f *spin = malloc(n * sizeof *spin);
    uint32_t *order = malloc(n * sizeof *order);
    for (uint32_t k = 0; k < n; ++k) {
        spin[k] = (sim_vec4f){0.5f * (float)k, -1.0f / (float)(k + 1), 3.0f, 0.0f};
        order[k] = (uint32_t)((uint64_t)k * 7919u % n); /* 7919 is prime to 1000 */
    }
    const char *exts[] = {".xyz", ".lammpstrj", ".pvd", ".nc"};
    const uint32_t chunk = traj_netcdf_chunk;
    for (int e = 0; e < (sim_traj_netcdf_available() ? 4 : 3); ++e) {
        char plain[4096], slotted[4096], chunked[4096];
        snprintf(plain, sizeof plain, "%s%s", test_tmp_path("plain"), exts[e]);
        snprintf(slotted, sizeof slotted, "%s%s", test_tmp_path("slotted"), exts[e]);
        snprintf(chunked, sizeof chunked, "%s%s", test_tmp_path("chunked"), exts[e]);
        write_slotted(plain, &d, spin, NULL);
        traj_netcdf_chunk = 7; /* 143 chunks, the last one of 6 bodies */
        write_slotted(slotted, &d, spin, order);
        write_slotted(chunked, &d, spin, NULL);
        traj_netcdf_chunk = chunk;
        if (strcmp(exts[e], ".pvd") == 0) { /* its last frame's file: STEM/STEM_000001.vtu */
            snprintf(plain, sizeof plain, "%s", test_tmp_path("plain/plain_000001.vtu"));
            snprintf(slotted, sizeof slotted, "%s", test_tmp_path("slotted/slotted_000001.vtu"));
            snprintf(chunked, sizeof chunked, "%s", test_tmp_path("chunked/chunked_000001.vtu"));
        }
        size_t la = 0, lb = 0, lc = 0;
        unsigned char *a = file_bytes(plain, &la), *b = file_bytes(slotted, &lb);
        unsigned char *c = file_bytes(chunked, &lc);
        ENSURE_MSG(a != NULL && la > 1000 && la == lb && la == lc && memcmp(a, b, la) == 0 &&
                       memcmp(a, c, la) == 0,
                   "%s: %zu, %zu and %zu bytes, not the same", exts[e], la, lb, lc);
        free(a);
        free(b);
        free(c);
    }
    const char *stems[] = {"plain", "slotted", "chunked"};
    for (int k = 0; k < 3; ++k) { /* the .pvd's folders, which the scratch's cleanup leaves */
        for (int frame = 0; frame < 2; ++frame) {
            char vtu[64];
            snprintf(vtu, sizeof vtu, "%s/%s_%06d.vtu", stems[k], stems[k], frame);
            unlink(test_tmp_path(vtu));
        }
        rmdir(test_tmp_path(stems[k]));
    }
    free(spin);
    free(order);
    free_frame(&d);
}

static const ensure_test tests[] = {
    {"format_from_path", test_format_from_path},
    {"fmt_float_round_trip", test_fmt_float_round_trip},
    {"fmt_double_round_trip", test_fmt_double_round_trip},
    {"round_trip_xyz", test_round_trip_xyz},
    {"round_trip_lammps", test_round_trip_lammps},
    {"round_trip_netcdf", test_round_trip_netcdf},
    {"double_frames", test_double_frames},
    {"params_in_dumps", test_params_in_dumps},
    {"read_lammps_variants", test_read_lammps_variants},
    {"read_ase_xyz", test_read_ase_xyz},
    {"read_errors", test_read_errors},
    {"truncated_last_frame", test_truncated_last_frame},
    {"truncated_netcdf", test_truncated_netcdf},
    {"netcdf_size_rule", test_netcdf_size_rule},
    {"open_errors", test_open_errors},
    {"write_failure_keeps_frames", test_write_failure_keeps_frames},
    {"slots_and_chunks", test_slots_and_chunks},
};

TEST_TMP_MAIN(tests, "test_traj")
