/* SPDX-License-Identifier: MIT
 * nbsim — the ParaView series writer and the contact network it draws: the cell grid finds
 * exactly the touching pairs brute force finds (periodic boxes of one, two and many cells a
 * side, bodies pushed beyond a wall, float frames), forces obey the law's symmetries, opening
 * refuses clearly and leaves nothing behind, and a frame that fails part-way (a file size limit
 * standing in for a full disk) leaves the series with its complete frames and nothing else.
 * VTK's own reader checks the files themselves (test_vtk.sh, vtk_check.py). */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"
#include "physics/physics.h"

#include "ensure.h"
#include "test_rng.h"
#include "test_tmp.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* n bodies of radius in [r_lo, r_hi] spread through the box (some beyond it by up to `out`). */
static sim_vec4d *bodies(uint32_t n, double box_half, double r_lo, double r_hi, double out,
                         uint64_t seed) {
    sim_vec4d *p = malloc(n * sizeof *p);
    uint64_t rng = seed;
    const double span = box_half + out;
    for (uint32_t i = 0; i < n; ++i) {
        p[i] = (sim_vec4d){test_rnd(&rng, -span, span), test_rnd(&rng, -span, span),
                           test_rnd(&rng, -span, span), test_rnd(&rng, r_lo, r_hi)};
    }
    return p;
}

/* Touching pairs by brute force, as traj_contacts.c defines them. */
static uint64_t brute_pairs(const sim_vec4d *p, uint32_t n, const sim_physics *ph,
                            uint64_t *wrapped) {
    uint64_t count = 0;
    *wrapped = 0;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            const double rx = p[i].x - p[j].x, ry = p[i].y - p[j].y, rz = p[i].z - p[j].z;
            double dx = rx, dy = ry, dz = rz;
            sim_min_image_d(&dx, &dy, &dz, ph);
            const double d = sqrt(dx * dx + dy * dy + dz * dz), reach = p[i].w + p[j].w;
            if (d < reach && d > 0.0 && reach - d > 0.0) {
                ++count;
                *wrapped += dx != rx || dy != ry || dz != rz;
            }
        }
    }
    return count;
}

static void check_grid(uint32_t n, double box_half, double r_lo, double r_hi, int periodic,
                       double out, int as_float, uint64_t seed) {
    sim_vec4d *p = bodies(n, box_half, r_lo, r_hi, periodic ? 0.0 : out, seed);
    sim_vec4d *v = calloc(n, sizeof *v);
    sim_vec4f *pf = malloc(n * sizeof *pf), *vf = calloc(n, sizeof *vf);
    for (uint32_t i = 0; i < n; ++i) {
        v[i].w = 1.0;
        vf[i].w = 1.0f;
        pf[i] = (sim_vec4f){(float)p[i].x, (float)p[i].y, (float)p[i].z, (float)p[i].w};
        if (as_float) { /* the brute force sees what the frame holds */
            p[i] = (sim_vec4d){pf[i].x, pf[i].y, pf[i].z, pf[i].w};
        }
    }
    sim_params prm = sim_params_default();
    prm.box_half = box_half;
    prm.periodic = periodic;
    const sim_physics ph = sim_physics_from_params(&prm);
    sim_traj_frame f = {.n = n, .box_half = box_half, .periodic = periodic};
    if (as_float) {
        f.pos = pf;
        f.vel = vf;
    } else {
        f.pos_d = p;
        f.vel_d = v;
    }
    traj_contacts c = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(traj_contacts_find(&c, &f, &prm, "test", &err) == SIM_OK);
    uint64_t wrapped;
    const uint64_t want = brute_pairs(p, n, &ph, &wrapped);
    ENSURE_MSG(c.count == want && c.wrapped == wrapped,
               "n %u box %g r %g-%g periodic %d: grid %llu pairs (%llu wrapped), brute force "
               "%llu (%llu)",
               n, box_half, r_lo, r_hi, periodic, (unsigned long long)c.count,
               (unsigned long long)c.wrapped, (unsigned long long)want,
               (unsigned long long)wrapped);
    for (uint64_t k = 0; k < c.count; ++k) { /* each pair once, j < i, repulsive at rest */
        const traj_contact *t = &c.v[k];
        ENSURE(t->j < t->i && t->overlap > 0.0);
        ENSURE(t->fn.x * t->d.x + t->fn.y * t->d.y + t->fn.z * t->d.z > 0.0);
        ENSURE(t->ft.x == 0.0 && t->ft.y == 0.0 && t->ft.z == 0.0);
        for (uint64_t m = k + 1; m < c.count && m < k + 64; ++m) {
            ENSURE(c.v[m].i != t->i || c.v[m].j != t->j);
        }
    }
    traj_contacts_free(&c);
    free(p);
    free(v);
    free(pf);
    free(vf);
}

static void test_contacts_match_brute_force(void) {
    for (int periodic = 0; periodic <= 7; periodic += 7) {
        check_grid(600, 5.0, 0.3, 0.6, periodic, 0.3, 0, 1);     /* 8 cells a side */
        check_grid(150, 1.0, 0.3, 0.45, periodic, 0.1, 0, 2);    /* 2 */
        check_grid(200, 1.5, 0.3, 0.45, periodic, 0.1, 0, 3);    /* 3 */
        check_grid(2000, 50.0, 0.001, 0.2, periodic, 0.0, 1, 4); /* sparse: wide cells; float */
    }
    check_grid(40, 1.0, 0.3, 0.6, 0, 0.5, 0, 5);  /* 1 cell: walls, bodies beyond them */
    check_grid(400, 3.0, 0.2, 0.7, 5, 0.0, 0, 6); /* x and z periodic, walls on y */
}

/* With friction: the spring a frame carries gives the tangential force (dt = 0: -k_t xi, at
 * rest and within the Coulomb limit), none for a pair the histories lack, and walls' histories
 * are skipped. */
static void test_contacts_springs(void) {
    sim_vec4d p[3] = {{0.0, 0.0, 0.0, 0.5}, {0.9, 0.0, 0.0, 0.5}, {0.0, 0.9, 0.0, 0.5}};
    sim_vec4d v[3] = {{0, 0, 0, 1.0}, {0, 0, 0, 1.0}, {0, 0, 0, 1.0}};
    const sim_state_contact hist[2] = {
        {1, 0, {0.0, 1e-3, 0.0}, {0.0, 0.0, 0.0}},
        {2, SIM_CONTACT_WALL(2), {1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}},
    };
    sim_params prm = sim_params_default();
    prm.friction = 0.5;
    prm.box_half = 5.0;
    prm.dt = 1e-4;
    const sim_traj_frame f = {
        .n = 3, .box_half = 5.0, .pos_d = p, .vel_d = v, .contacts = hist, .contact_count = 2};
    traj_contacts c = {0};
    sim_error err = {SIM_OK, ""};
    ENSURE(traj_contacts_find(&c, &f, &prm, "test", &err) == SIM_OK);
    ENSURE(c.count == 2);
    const sim_physics ph = sim_physics_from_params(&prm);
    for (uint64_t k = 0; k < c.count; ++k) {
        const traj_contact *t = &c.v[k];
        const double dn = sqrt(t->d.x * t->d.x + t->d.y * t->d.y + t->d.z * t->d.z);
        ENSURE_NEAR((t->fn.x * t->d.x + t->fn.y * t->d.y + t->fn.z * t->d.z) / dn,
                    prm.stiffness * 0.1, 1e-9 * prm.stiffness);
        if (t->i == 1) { /* 1-0: the spring along y, -k_t xi */
            ENSURE_NEAR(t->ft.y, -ph.tangential.tangential_stiffness * 1e-3, 1e-12);
            ENSURE(t->ft.x == 0.0 && t->ft.z == 0.0);
        } else { /* 2-0: no history for it (the wall's is not a pair's) */
            ENSURE(t->i == 2 && t->j == 0);
            ENSURE(t->ft.x == 0.0 && t->ft.y == 0.0 && t->ft.z == 0.0);
        }
    }
    traj_contacts_free(&c);
}

/* ---- the writer ---- */

static void remove_series(const char *pvd) {
    char folder[512], file[600];
    snprintf(folder, sizeof folder, "%.*s", (int)(strlen(pvd) - 4), pvd);
    const char *stem = strrchr(folder, '/') + 1;
    for (int k = 0; k < 20; ++k) {
        snprintf(file, sizeof file, "%s/%s_%06d.vtu", folder, stem, k);
        unlink(file);
        snprintf(file, sizeof file, "%s/%s_%06d.vtu.part", folder, stem, k);
        unlink(file);
    }
    rmdir(folder);
    unlink(pvd);
}

static int exists(const char *path) {
    return access(path, F_OK) == 0;
}

static void test_open_errors(void) {
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_traj_format_from_path("run.PVD") == SIM_TRAJ_VTK);
    ENSURE(sim_traj_writer_open(&w, "/no/such/dir/run.pvd", 10, &err) == SIM_IO && w == NULL);
    ENSURE_MSG(strstr(err.message, "/no/such/dir/run") != NULL, "%s", err.message);
    ENSURE(sim_traj_writer_open(&w, test_tmp_path(".pvd"), 10, &err) == SIM_BAD_ARGUMENT);
    /* the frames' folder taken by a file: nothing written */
    test_write_file(test_tmp_path("taken"), "x\n");
    ENSURE(sim_traj_writer_open(&w, test_tmp_path("taken.pvd"), 10, &err) == SIM_IO);
    ENSURE_MSG(strstr(err.message, "not a folder") != NULL, "%s", err.message);
    ENSURE(!exists(test_tmp_path("taken.pvd")));
    unlink(test_tmp_path("taken"));
    /* the .pvd itself cannot be made (a folder has its name): the frames' folder made for it
     * goes again */
    ENSURE(mkdir(test_tmp_path("dir.pvd"), 0777) == 0);
    ENSURE(sim_traj_writer_open(&w, test_tmp_path("dir.pvd"), 10, &err) == SIM_IO);
    ENSURE(!exists(test_tmp_path("dir")));
    rmdir(test_tmp_path("dir.pvd"));
    /* a .pvd is not read back */
    sim_params prm = sim_params_default();
    sim_state s = {0};
    ENSURE(sim_traj_read_last(test_tmp_path("run.pvd"), &prm, &s, NULL, &err) == SIM_UNSUPPORTED);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char *s = calloc(1, 1 << 16);
    fread(s, 1, (1 << 16) - 1, f);
    fclose(f);
    return s;
}

static int count_of(const char *s, const char *what) {
    int k = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what)) {
        ++k;
    }
    return k;
}

/* Frames go to the folder; a file size limit makes the third fail part-way: the series keeps two
 * frames, listed in a .pvd that ends as a .pvd must, with no third file and no temporary. */
static void test_write_failure_keeps_frames(void) {
    char pvd[512]; /* test_tmp_path's buffers turn over */
    snprintf(pvd, sizeof pvd, "%s", test_tmp_path("full.pvd"));
    const uint32_t n = 3000;
    sim_vec4d *p = bodies(n, 10.0, 0.2, 0.4, 0.0, 9);
    sim_vec4d *v = calloc(n, sizeof *v);
    for (uint32_t i = 0; i < n; ++i) {
        v[i].w = 1.0;
    }
    sim_params prm = sim_params_default();
    prm.box_half = 10.0;
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_traj_writer_open_params(&w, pvd, n, &prm, &err) == SIM_OK);
    if (w == NULL) {
        return;
    }
    sim_traj_frame f = {.n = n, .box_half = 10.0, .pos_d = p, .vel_d = v};
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
    f.step = 1;
    f.time = 0.5;
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
    ENSURE(exists(test_tmp_path("full/full_000000.vtu")) &&
           exists(test_tmp_path("full/full_000001.vtu")));
    struct stat st;
    ENSURE(stat(test_tmp_path("full/full_000001.vtu"), &st) == 0 && st.st_size > 100000);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size / 2; /* half a frame's file */
    signal(SIGXFSZ, SIG_IGN);
    ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    f.step = 2;
    const sim_status failed = sim_traj_writer_write(w, &f, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    ENSURE_MSG(failed == SIM_IO && strstr(err.message, "full.pvd") != NULL &&
                   strstr(err.message, "2 complete frames") != NULL,
               "status %d: %s", (int)failed, err.message);
    ENSURE(sim_traj_writer_frames(w) == 2);
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_IO); /* refuses from now on */
    ENSURE(sim_traj_writer_close(w, &err) == SIM_IO);
    ENSURE(!exists(test_tmp_path("full/full_000002.vtu")) &&
           !exists(test_tmp_path("full/full_000002.vtu.part")));
    char *text = slurp(pvd);
    ENSURE(text != NULL);
    if (text != NULL) {
        ENSURE_MSG(count_of(text, "<DataSet ") == 2 &&
                       strstr(text, "file=\"full/full_000001.vtu\"") != NULL &&
                       strstr(text, "timestep=\"0.5\"") != NULL &&
                       strcmp(text + strlen(text) - strlen("</Collection>\n</VTKFile>\n"),
                              "</Collection>\n</VTKFile>\n") == 0,
                   "%s", text);
    }
    free(text);
    remove_series(pvd);
    free(p);
    free(v);
}

/* A writer opened without parameters knows no law: its lines carry ids and overlaps, and no
 * force arrays (zeros would be wrong numbers). */
static void test_without_law(void) {
    char pvd[512];
    snprintf(pvd, sizeof pvd, "%s", test_tmp_path("plain.pvd"));
    sim_vec4d p[2] = {{0.0, 0.0, 0.0, 0.5}, {0.9, 0.0, 0.0, 0.5}};
    sim_vec4d v[2] = {{0, 0, 0, 1.0}, {0, 0, 0, 1.0}};
    sim_traj_writer *w = NULL;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_traj_writer_open(&w, pvd, 2, &err) == SIM_OK);
    const sim_traj_frame f = {.n = 2, .box_half = 5.0, .pos_d = p, .vel_d = v};
    ENSURE(sim_traj_writer_write(w, &f, &err) == SIM_OK);
    ENSURE(sim_traj_writer_close(w, &err) == SIM_OK);
    char *text = slurp(test_tmp_path("plain/plain_000000.vtu"));
    ENSURE(text != NULL);
    if (text != NULL) {
        ENSURE_MSG(strstr(text, "Name=\"overlap\"") && strstr(text, "Name=\"body_ids\"") &&
                       !strstr(text, "normal_force") && !strstr(text, "angular_velocity") &&
                       strstr(text, "NumberOfPoints=\"2\" NumberOfCells=\"2\""),
                   "%.2000s", text);
    }
    free(text);
    remove_series(pvd);
}

static const ensure_test tests[] = {
    {"contacts_match_brute_force", test_contacts_match_brute_force},
    {"contacts_springs", test_contacts_springs},
    {"open_errors", test_open_errors},
    {"write_failure_keeps_frames", test_write_failure_keeps_frames},
    {"without_law", test_without_law},
};

TEST_TMP_MAIN(tests, "test_traj_vtk")
