/* SPDX-License-Identifier: MIT
 * nbsim — insertion during the run (include/nbsim/insert.h, sim/session/insert.c) on the CPU
 * reference, through the session as programs drive it: inserted bodies never overlap (across a
 * periodic face too), the rate and the stops are kept, the radii follow their distribution, the
 * same seed gives the same bodies, N grows mid-run with friction's histories kept, a run resumed
 * from a save equals the uninterrupted one, a full region is said once, and bad settings are
 * refused. The GPU's twin: test_gpu_insert.c. */
#define _POSIX_C_SOURCE 200809L

#include "nbsim/insert.h"
#include "nbsim/scene.h"
#include "nbsim/session.h"
#include "nbsim/trajectory.h"
#include "physics/physics.h"
#include "session/insert.h"

#include "ensure.h"
#include "test_tmp.h"

#include <stdint.h>
#include <stdlib.h>

/* A session on the CPU reference over `scene` with the insertion settings given as flag values
 * (NULL: not given); NULL when it does not open (err says why). */
typedef struct {
    const char *region, *rate, *radius, *velocity, *stop, *seed;
} insert_text;

static sim_session_config config_of(const char *scene, const insert_text *in) {
    sim_session_config c = sim_session_config_default();
    snprintf(c.scene, sizeof c.scene, "%s", scene);
    c.backend = SIM_BACKEND_CHOICE_CPU;
    c.config.cpu_threads = 1;
    c.triplets = SIM_TRIPLETS_OFF;
    const char *text[SIM_INSERT_KEY_COUNT] = {in->region, in->rate, in->radius, in->velocity,
                                              NULL,       in->stop, in->seed};
    for (int k = 0; k < SIM_INSERT_KEY_COUNT; ++k) {
        if (text[k] != NULL) {
            sim_error err;
            ENSURE_MSG(sim_insert_set(&c.insert, (sim_insert_key)k, text[k], &err) == SIM_OK, "%s",
                       err.message);
            c.insert_given |= 1u << k;
        }
    }
    return c;
}

static sim_session *open_session(const sim_session_config *c, sim_error *err) {
    sim_session *s = NULL;
    return sim_session_open(&s, c, err) == SIM_OK ? s : NULL;
}

static void run_frames(sim_session *s, int frames) {
    sim_error err;
    for (int f = 0; f < frames; ++f) {
        sim_frame_timing t;
        const sim_status st = sim_session_frame(s, &t, &err);
        ENSURE_MSG(st == SIM_OK, "frame %d: %s", f, err.message);
        if (st != SIM_OK) {
            return;
        }
    }
}

static sim_state read_state(sim_session *s) {
    sim_state st;
    sim_error err;
    ENSURE(sim_state_alloc(&st, sim_session_info(s)->n, &err) == SIM_OK);
    ENSURE_MSG(sim_session_read_state(s, &st, NULL, &err) == SIM_OK, "%s", err.message);
    return st;
}

/* Pairs closer than their radii's sum, by minimum image under p (all pairs: tests are small),
 * less a hair for the rounding of a contact that formed while the run went on. */
static uint64_t overlapping_pairs(const sim_state *st, const sim_params *p, double hair) {
    const sim_period_d per = sim_period_of(p);
    uint64_t count = 0;
    for (uint32_t i = 0; i < st->n; ++i) {
        for (uint32_t j = 0; j < i; ++j) {
            double dx = st->pos[i].x - st->pos[j].x, dy = st->pos[i].y - st->pos[j].y,
                   dz = st->pos[i].z - st->pos[j].z;
            sim_min_image_in_d(&dx, &dy, &dz, &per);
            const double rs = st->pos[i].w + st->pos[j].w - hair;
            count += dx * dx + dy * dy + dz * dz < rs * rs;
        }
    }
    return count;
}

/* An empty scene file: parameters and the column header, no bodies. */
static const char *empty_scene(const char *name, const char *params) {
    const char *path = test_tmp_path(name);
    char text[1024];
    snprintf(text, sizeof text, "%sx y z vx vy vz radius density\n", params);
    test_write_file(path, text);
    return path;
}

/* A wall of large bodies across the +x face of a box periodic in x (their images reach 0.2 m
 * into the box at -x), and an insertion region against the -x face, packed full: bodies placed
 * there touch the wall's images through the face, where a test by plain separations would let
 * them overlap. */
static void test_no_overlap_periodic(void) {
    const char *path = test_tmp_path("face.scene");
    FILE *f = fopen(path, "w");
    fprintf(f, "box_half = 4\nperiodic = x\ngravity = 0, 0, 0\nx y z vx vy vz radius density\n");
    for (int y = -3; y <= 3; ++y) {
        for (int z = -3; z <= 3; ++z) {
            fprintf(f, "3.8 %d %d 0 0 0 0.4 1\n", y, z);
        }
    }
    fclose(f);
    const insert_text in = {"box:-4,-4,-4,-2.5,4,4", "1e9", "uniform:0.1,0.3", NULL, NULL, "7"};
    const sim_session_config c = config_of(path, &in);
    sim_error err;
    sim_session *s = open_session(&c, &err);
    ENSURE_MSG(s != NULL, "%s", s ? "" : err.message);
    if (s == NULL) {
        return;
    }
    const sim_run_info *info = sim_session_info(s);
    ENSURE(info->inserted > 300);
    ENSURE(strstr(sim_session_take_warnings(s), "region is full") != NULL); /* packed full */
    sim_state st = read_state(s);
    ENSURE_MSG(overlapping_pairs(&st, &info->params, 0.0) == 0, "%llu overlaps",
               (unsigned long long)overlapping_pairs(&st, &info->params, 0.0));
    /* the face was in play: inserted bodies within a hair of a wall body's image, which by plain
     * separations are 7 m away */
    const sim_period_d per = sim_period_of(&info->params);
    uint32_t through = 0;
    for (uint32_t i = 49; i < st.n; ++i) {
        for (uint32_t j = 0; j < 49; ++j) {
            double dx = st.pos[i].x - st.pos[j].x, dy = st.pos[i].y - st.pos[j].y,
                   dz = st.pos[i].z - st.pos[j].z;
            const double plain = sqrt(dx * dx + dy * dy + dz * dz);
            sim_min_image_in_d(&dx, &dy, &dz, &per);
            const double image = sqrt(dx * dx + dy * dy + dz * dz);
            through += plain > 6.0 && image < st.pos[i].w + st.pos[j].w + 0.05;
        }
    }
    ENSURE_MSG(through > 10, "%u", through);
    sim_state_free(&st);
    sim_session_close(s);
}

/* A rate without gravity, bodies crossing the region at their velocity: every batch fits, so
 * the count follows the rate to the body; a stop time ends it; a stop count is exact. */
static void test_rate_and_stop(void) {
    const char *path = empty_scene("rate.scene", "box_half = 20\ngravity = 0, 0, 0\ndt = 1e-3\n"
                                                 "steps_per_frame = 10\n");
    const insert_text in = {"box:-2,-2,-2,2,2,2", "500", "fixed:0.1", "0,0,-10", "time:0.5", NULL};
    sim_session_config c = config_of(path, &in);
    sim_error err;
    sim_session *s = open_session(&c, &err);
    ENSURE_MSG(s != NULL, "%s", s ? "" : err.message);
    if (s == NULL) {
        return;
    }
    /* the region is 4 m deep at 10 m/s: a batch every 0.4 s = 40 frames (fix pour's rule) */
    const sim_run_info *info = sim_session_info(s);
    ENSURE(info->n == 200);
    run_frames(s, 39);
    ENSURE(info->n == 200);
    run_frames(s, 1);
    ENSURE(info->n == 250); /* batch 1 due at 0.4 s: the rest up to the stop at 0.5 s */
    run_frames(s, 60);
    ENSURE(info->n == 250);
    ENSURE(info->inserted == 250);
    ENSURE(strstr(info->insertion, "stopped") != NULL);
    sim_session_close(s);

    const insert_text counted = {"box:-2,-2,-2,2,2,2", "500", "fixed:0.1", "0,0,-10",
                                 "count:321",          NULL};
    c = config_of(path, &counted);
    s = open_session(&c, &err);
    ENSURE(s != NULL);
    if (s != NULL) {
        run_frames(s, 100);
        ENSURE(sim_session_info(s)->n == 321);
        sim_session_close(s);
    }
    /* a rate in mass: kilograms per second, bodies of 4/3 pi 0.1^3 kg each */
    const insert_text mass = {"box:-2,-2,-2,2,2,2", "mass:2", "fixed:0.1", "0,0,-10",
                              "time:0.4",           NULL};
    c = config_of(path, &mass);
    s = open_session(&c, &err);
    ENSURE(s != NULL);
    if (s != NULL) {
        const double m = sim_sphere_mass(0.1, 1.0);
        ENSURE_NEAR((double)sim_session_info(s)->n, ceil(0.8 / m), 1.0);
        sim_session_close(s);
    }
}

/* The radii's moments over 40,000 bodies placed in a large empty region (white-box: the
 * placement alone). */
static void test_radius_moments(void) {
    sim_params p = sim_params_default();
    p.box_half = 1000.0;
    p.dt = 1e-3;
    const char *dists[3] = {"fixed:0.25", "uniform:0.1,0.3", "lognormal:-1.5,0.2"};
    for (int k = 0; k < 3; ++k) {
        sim_insert_def d = sim_insert_def_default();
        sim_error err;
        ENSURE(sim_insert_set(&d, SIM_INSERT_REGION, "box:-900,-900,-900,900,900,900", &err) ==
               SIM_OK);
        ENSURE(sim_insert_set(&d, SIM_INSERT_RATE, "40000", &err) == SIM_OK);
        ENSURE(sim_insert_set(&d, SIM_INSERT_RADIUS, dists[k], &err) == SIM_OK);
        sim_insert_progress pr = {0};
        pr.interval = 1.0;
        sim_state st = {0};
        uint64_t wanted = 0, placed = 0;
        ENSURE(sim_insert_place(&d, &pr, &p, UINT32_MAX, &st, &wanted, &placed, &err) == SIM_OK);
        ENSURE(st.n == 40000 && placed == 40000 && wanted == 40000);
        double sum = 0.0, sum2 = 0.0;
        for (uint32_t i = 0; i < st.n; ++i) {
            const double x = k == 2 ? log(st.pos[i].w) : st.pos[i].w;
            sum += x;
            sum2 += x * x;
        }
        const double mean = sum / st.n, sd = sqrt(sum2 / st.n - mean * mean);
        const double want_mean[3] = {0.25, 0.2, -1.5}, want_sd[3] = {0.0, 0.2 / sqrt(12.0), 0.2};
        /* the standard error of the mean is sd / 200; of the deviation about sd / 280 */
        ENSURE_NEAR(mean, want_mean[k], 5.0 * want_sd[k] / 200.0 + 1e-12);
        ENSURE_NEAR(sd, want_sd[k], 5.0 * want_sd[k] / 280.0 + 1e-9);
        ENSURE_NEAR(st.vel[0].w, sim_sphere_mass(st.pos[0].w, 1.0), 1e-15);
        sim_state_free(&st);
    }
}

/* The same seed gives the same bodies bit for bit, whatever the CPU backend's pair pipeline
 * (culled or the full sweep, one thread or two); another seed other bodies. */
static void test_determinism(void) {
    const char *path = empty_scene("seed.scene", "box_half = 6\ngravity = 0, -9.81, 0\n"
                                                 "stiffness = 1000\nfriction = 0.4\n"
                                                 "steps_per_frame = 40\n");
    sim_state st[4];
    for (int k = 0; k < 4; ++k) {
        const insert_text in = {
            "cylinder:y,0,0,3,4.5,5.5", "300", "uniform:0.2,0.3", "0,-1,0", NULL,
            k == 3 ? "12" : "11"};
        sim_session_config c = config_of(path, &in);
        c.config.cull = k != 1;
        c.config.cpu_threads = k == 2 ? 2 : 1;
        sim_error err;
        sim_session *s = open_session(&c, &err);
        ENSURE_MSG(s != NULL, "%s", s ? "" : err.message);
        if (s == NULL) {
            return;
        }
        run_frames(s, 100);
        ENSURE(sim_session_info(s)->frame == 100 &&
               strstr(sim_session_info(s)->insertion, "in 3 batches") != NULL);
        st[k] = read_state(s);
        sim_session_close(s);
    }
    ENSURE(st[0].n > 200 && st[1].n == st[0].n && st[2].n == st[0].n);
    uint32_t same_radius = 0;
    for (uint32_t i = 0; i < st[0].n; ++i) {
        same_radius += st[1].pos[i].w == st[0].pos[i].w && st[2].pos[i].w == st[0].pos[i].w;
    }
    ENSURE(same_radius == st[0].n);
    uint32_t other = 0;
    for (uint32_t i = 0; i < st[0].n && i < st[3].n; ++i) {
        other += st[3].pos[i].w != st[0].pos[i].w;
    }
    ENSURE(other > st[0].n / 2);
    for (int k = 0; k < 4; ++k) {
        sim_state_free(&st[k]);
    }
}

/* From no bodies at all, N grows batch by batch with friction on: the backend is made again for
 * each, the contacts' springs go with the state, nothing blows up, and nothing overlaps more than
 * a frictional pile's contacts do. */
static void test_grows_mid_run(void) {
    const char *path = empty_scene("grow.scene", "box_half = 3\ngravity = 0, -9.81, 0\n"
                                                 "stiffness = 1000\nfriction = 0.5\n"
                                                 "rolling_friction = 0.05\nrestitution = 0.5\n"
                                                 "dt = 1e-4\nsteps_per_frame = 100\n");
    /* 2 m deep: a batch every 0.64 s, 64 frames */
    const insert_text in = {
        "box:-2.5,0.5,-2.5,2.5,2.5,2.5", "150", "lognormal:-1.5,0.1", NULL, NULL, NULL};
    sim_session_config c = config_of(path, &in);
    sim_error err;
    sim_session *s = open_session(&c, &err);
    ENSURE_MSG(s != NULL, "%s", s ? "" : err.message);
    if (s == NULL) {
        return;
    }
    const sim_run_info *info = sim_session_info(s);
    const uint32_t n0 = info->n;
    uint32_t grew = 0, last = n0;
    for (int f = 0; f < 300; ++f) {
        run_frames(s, 1);
        grew += info->n > last;
        last = info->n;
    }
    ENSURE_MSG(n0 > 0 && info->n > 4 * n0 && grew >= 4, "%u -> %u in %u, %s, dt %g", n0, info->n,
               grew, info->insertion, info->params.dt);
    sim_state st = read_state(s);
    ENSURE(st.contact_count > 0); /* a frictional pile, with its springs */
    sim_energy e;
    ENSURE(sim_session_energy(s, &e, &err) == SIM_OK && isfinite(e.total));
    sim_state_free(&st);
    sim_session_close(s);
}

/* A trajectory recorded while N grows: .xyz and .lammpstrj take each frame's count (their last
 * frame holds the final N, bodies as the state has them), and a NetCDF file, of one N, ends at
 * the first batch with a notice. */
static void test_dump_grows(void) {
    const char *path = empty_scene("dump.scene", "box_half = 3\ngravity = 0, -9.81, 0\n"
                                                 "stiffness = 1000\ndt = 1e-4\n"
                                                 "steps_per_frame = 100\n");
    const insert_text in = {"box:-2.5,0.5,-2.5,2.5,2.5,2.5", "150", "fixed:0.2", NULL, NULL, NULL};
    const char *names[3] = {"grow.xyz", "grow.lammpstrj", "grow.nc"};
    for (int k = 0; k < 3; ++k) {
        if (k == 2 && !sim_traj_netcdf_available()) {
            continue;
        }
        const sim_session_config c = config_of(path, &in);
        sim_error err;
        sim_session *s = open_session(&c, &err);
        ENSURE(s != NULL);
        if (s == NULL) {
            return;
        }
        const char *dump = test_tmp_path(names[k]);
        ENSURE_MSG(sim_session_dump_start(s, dump, 10, &err) == SIM_OK, "%s", err.message);
        const uint32_t n0 = sim_session_info(s)->n;
        run_frames(s, 150); /* batches at 0, 64 and 128 frames */
        const uint32_t n = sim_session_info(s)->n;
        ENSURE(n > 2 * n0);
        const char *notices = sim_session_take_notices(s);
        ENSURE_MSG((strstr(notices, "ended") != NULL) == (k == 2), "%s", notices);
        ENSURE((sim_session_info(s)->dump_path[0] != '\0') == (k != 2));
        ENSURE(sim_session_dump_stop(s, NULL, &err) == SIM_OK);
        sim_params p = sim_params_default();
        sim_state last;
        sim_traj_info info;
        ENSURE_MSG(sim_traj_read_last(dump, &p, &last, &info, &err) == SIM_OK, "%s", err.message);
        ENSURE(last.n == (k == 2 ? n0 : n));
        ENSURE_MSG(info.frames == (k == 2 ? 7u : 16u), "%s: %llu frames", names[k],
                   (unsigned long long)info.frames); /* NetCDF: frames 0, 10, ..., 60 */
        if (k != 2 && last.n == n) {
            sim_state now = read_state(s);
            double worst = 0.0;
            for (uint32_t i = 0; i < n; ++i) {
                worst = fmax(worst, fabs(last.pos[i].y - now.pos[i].y) + fabs(last.pos[i].w - 0.2));
            }
            ENSURE_MSG(worst < 1e-5, "%g", worst); /* the state, to the format's digits */
            sim_state_free(&now);
        }
        sim_state_free(&last);
        sim_session_close(s);
    }
}

static int states_close(const sim_state *a, const sim_state *b, double tol) {
    if (a->n != b->n || a->contact_count != b->contact_count) {
        fprintf(stderr, "n %u vs %u, contacts %llu vs %llu\n", a->n, b->n,
                (unsigned long long)a->contact_count, (unsigned long long)b->contact_count);
        return 0;
    }
    double worst = 0.0;
    for (uint32_t i = 0; i < a->n; ++i) {
        worst = fmax(worst, fabs(a->pos[i].x - b->pos[i].x) + fabs(a->pos[i].y - b->pos[i].y) +
                                fabs(a->pos[i].z - b->pos[i].z) + fabs(a->pos[i].w - b->pos[i].w));
        worst = fmax(worst, fabs(a->vel[i].x - b->vel[i].x) + fabs(a->vel[i].y - b->vel[i].y) +
                                fabs(a->vel[i].z - b->vel[i].z));
        worst = fmax(worst, fabs(a->spin[i].x - b->spin[i].x) + fabs(a->spin[i].y - b->spin[i].y) +
                                fabs(a->spin[i].z - b->spin[i].z));
    }
    if (!(worst <= tol)) {
        fprintf(stderr, "largest difference %g\n", worst);
    }
    return worst <= tol;
}

/* Uninterrupted against saved and resumed halfway, with friction and insertion on, in a box
 * periodic in x: the same bodies, inserted at the same steps, bit for bit (one thread: the CPU
 * reference's sums go in an order the state fixes, and a save keeps every bit). */
static void test_restart_equal(void) {
    const char *path = empty_scene("restart.scene", "box_half = 3\ngravity = 0, -9.81, 0\n"
                                                    "periodic = x\nstiffness = 1000\n"
                                                    "friction = 0.5\nrolling_friction = 0.05\n"
                                                    "restitution = 0.5\ndt = 1e-4\n"
                                                    "steps_per_frame = 100\n");
    const char *saved = test_tmp_path("half.state");
    const insert_text in = {
        "box:-3,0.5,-2.5,3,2.5,2.5", "200", "uniform:0.2,0.3", "0.5,0,0", "count:700", "5"};
    sim_session_config c = config_of(path, &in);
    sim_error err;
    sim_session *a = open_session(&c, &err);
    sim_session *b = open_session(&c, &err);
    ENSURE(a != NULL && b != NULL);
    if (a == NULL || b == NULL) {
        return;
    }
    run_frames(a, 160);
    run_frames(b, 80);
    ENSURE(sim_session_save_state(b, saved, &err) == SIM_OK);
    const uint64_t inserted_half = sim_session_info(b)->inserted;
    sim_session_close(b);
    sim_session_config r = sim_session_config_default(); /* the file alone: no flags */
    snprintf(r.scene, sizeof r.scene, "%s", saved);
    r.backend = SIM_BACKEND_CHOICE_CPU;
    r.config.cpu_threads = 1;
    r.triplets = SIM_TRIPLETS_OFF;
    b = open_session(&r, &err);
    ENSURE_MSG(b != NULL, "%s", b ? "" : err.message);
    if (b == NULL) {
        sim_session_close(a);
        return;
    }
    ENSURE(sim_session_info(b)->inserted == inserted_half);
    ENSURE(sim_session_info(b)->params.dt == sim_session_info(a)->params.dt);
    run_frames(b, 80);
    ENSURE(sim_session_info(a)->inserted > inserted_half);
    ENSURE(sim_session_info(b)->inserted == sim_session_info(a)->inserted);
    sim_state sa = read_state(a), sb = read_state(b);
    ENSURE(sa.contact_count > 0);
    ENSURE(states_close(&sa, &sb, 0.0));
    sim_state_free(&sa);
    sim_state_free(&sb);
    sim_session_close(a);
    sim_session_close(b);
}

/* The settings' rules, from the command line and scene files alike, and the run's refusals. */
static void test_bad_input(void) {
    const char *bad[][2] = {
        {"insert", "box:1,0,0,0,1,1"},
        {"insert", "sphere:0,0,0,1"},
        {"insert", "box:0,0,0,1,1"},
        {"insert", "cylinder:w,0,0,1,0,1"},
        {"insert", "cylinder:y,0,0,-1,0,1"},
        {"insert_rate", "0"},
        {"insert_rate", "mass:-1"},
        {"insert_rate", "fast"},
        {"insert_radius", "fixed:0"},
        {"insert_radius", "uniform:0.3,0.1"},
        {"insert_radius", "lognormal:0,-1"},
        {"insert_radius", "gauss:1,1"},
        {"insert_velocity", "1,2"},
        {"insert_velocity", "1,2,nan"},
        {"insert_density", "0"},
        {"insert_stop", "time:0"},
        {"insert_stop", "count:1.5"},
        {"insert_stop", "later"},
        {"insert_seed", "-1"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        sim_insert_def d = sim_insert_def_default();
        const sim_insert_def before = d;
        sim_error err;
        const int key = sim_insert_from_key(bad[k][0]);
        ENSURE(key >= 0);
        ENSURE_MSG(sim_insert_set(&d, (sim_insert_key)key, bad[k][1], &err) == SIM_BAD_ARGUMENT,
                   "%s = %s", bad[k][0], bad[k][1]);
        ENSURE(strstr(err.message, "must be") != NULL && strchr(err.message, '\n') == NULL);
        ENSURE(memcmp(&d, &before, sizeof d) == 0);
    }
    /* a scene file's bad value names the file and line */
    const char *path = test_tmp_path("bad.scene");
    test_write_file(path, "box_half = 3\ninsert = box:0,0,0,1,1,1\ninsert_rate = none\n"
                          "x y z vx vy vz radius density\n");
    sim_session_config c = sim_session_config_default();
    snprintf(c.scene, sizeof c.scene, "%s", path);
    c.backend = SIM_BACKEND_CHOICE_CPU;
    sim_error err;
    ENSURE(open_session(&c, &err) == NULL);
    ENSURE(strstr(err.message, "bad.scene:3") != NULL && strstr(err.message, "insert_rate"));
    /* the run's refusals: outside the box, no rate, too narrow, flags without a region, space */
    const char *empty = empty_scene("refuse.scene", "box_half = 3\n");
    const insert_text outside = {"box:0,0,0,4,1,1", "10", NULL, NULL, NULL, NULL};
    const insert_text no_rate = {"box:0,0,0,1,1,1", NULL, NULL, NULL, NULL, NULL};
    const insert_text narrow = {"box:0,0,0,1,1,1", "10", "fixed:0.6", NULL, NULL, NULL};
    const insert_text no_region = {NULL, "10", NULL, NULL, NULL, NULL};
    const insert_text *refused[4] = {&outside, &no_rate, &narrow, &no_region};
    const char *says[4] = {"beyond the box", "needs a rate", "does not fit", "no insertion region"};
    for (int k = 0; k < 4; ++k) {
        c = config_of(empty, refused[k]);
        ENSURE(open_session(&c, &err) == NULL);
        ENSURE_MSG(err.status == SIM_BAD_ARGUMENT && strstr(err.message, says[k]) != NULL, "%s",
                   err.message);
    }
    const insert_text fine = {"box:0,0,0,1,1,1", "10", "fixed:0.1", NULL, NULL, NULL};
    c = config_of(empty, &fine);
    c.decompose = SIM_DECOMPOSE_SPACE;
    ENSURE(open_session(&c, &err) == NULL);
    ENSURE(strstr(err.message, "one rank") != NULL);
    /* without an insertion, an empty file is still refused */
    c = sim_session_config_default();
    snprintf(c.scene, sizeof c.scene, "%s", empty);
    c.backend = SIM_BACKEND_CHOICE_CPU;
    ENSURE(open_session(&c, &err) == NULL && strstr(err.message, "no bodies") != NULL);
}

static const ensure_test tests[] = {
    {"no_overlap_periodic", test_no_overlap_periodic},
    {"rate_and_stop", test_rate_and_stop},
    {"radius_moments", test_radius_moments},
    {"determinism", test_determinism},
    {"grows_mid_run", test_grows_mid_run},
    {"dump_grows", test_dump_grows},
    {"restart_equal", test_restart_equal},
    {"bad_input", test_bad_input},
};

TEST_TMP_MAIN(tests, "insert")
