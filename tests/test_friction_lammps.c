/* SPDX-License-Identifier: MIT
 * nbsim — the friction model against LAMMPS (Debian's lammps, stable 29 Sep 2021; docs/friction.md):
 * `test_friction_lammps DIR [NAME]`, DIR being tests/lammps (its in.friction deck and
 * run_lammps.sh). Each case writes a configuration and nbsim's parameters mapped to LAMMPS's
 * keywords, runs LAMMPS, and
 *  - evaluates the same steps with the functions in double, driven by a small loop that is
 *    LAMMPS's fix nve/sphere: forces and torques agree to rounding (static contacts, impacts,
 *    a ball on the floor);
 *  - runs them through the CPU reference backend, culled and not (the history tables, the pair
 *    visit, walls, spin): positions, velocities, spins and forces step by step, and the rebound
 *    angle and spin of oblique impacts over angles that stick and slide.
 * Exit status 77 (skipped) when LAMMPS or its GRANULAR package is missing, or its version is not
 * the one the mapping was written for. NBSIM_KEEP_LAMMPS=1 keeps LAMMPS's files. */
#define _POSIX_C_SOURCE 200809L

#include "physics/physics.h"

#include "nbsim/internal/backend.h"
#include "nbsim/params.h"

#include "ensure.h"
#include "friction_util.h"
#include "test_tmp.h"

#include <stdint.h>
#include <stdlib.h>


/* One body of a case: radius, density (LAMMPS's data file takes a density), position, velocity,
 * angular velocity. */
typedef struct {
    double r, rho;
    sim_vec3d x, v, w;
} lbody;

#define LMAX 12

/* One case: nbsim's parameters, how to map them, the bodies, the run. */
typedef struct {
    const char *name;
    sim_params p;  /* stiffness, restitution, hertz, friction, ratio, damping, box, gravity */
    double nu;     /* > 0: hertz/material E nu with mindlin NULL (ratio = 2(1-nu)/(2-nu)) */
    int integrate; /* 0: bodies stay put (the histories grow at constant velocities) */
    int steps;
    double dt;
    int n;
    lbody b[LMAX];
} lcase;

/* What LAMMPS dumped: per step, per body (sorted by id) mass radius x v w f t. */
typedef struct {
    double m, r;
    sim_vec3d x, v, w, f, t;
} lrow;

/* LAMMPS's MathSpecial::powint, for the Tsuji damping polynomial of pair_style granular. */
static double powint(double x, int n) {
    double yy, ww;
    if (n == 0) {
        return 1.0;
    }
    if (x == 0.0) {
        return 0.0;
    }
    int nn = n > 0 ? n : -n;
    ww = x;
    for (yy = 1.0; nn != 0; nn >>= 1, ww *= ww) {
        if (nn & 1) {
            yy *= ww;
        }
    }
    return n > 0 ? yy : 1.0 / yy;
}

/* `damping tsuji` takes a restitution-like number c and damps with alpha(c) sqrt(m_eff k_n a):
 * the pair (PairGranular::coeff) and the wall (FixWallGran::init, with pow) evaluate the same
 * polynomial in two ways. */
static double tsuji_pair(double c) {
    return 1.2728 - 4.2783 * c + 11.087 * (c * c) - 22.348 * (c * c * c) + 27.467 * powint(c, 4) -
           18.022 * powint(c, 5) + 4.8218 * powint(c, 6);
}

static double tsuji_wall(double c) {
    return 1.2728 - 4.2783 * c + 11.087 * pow(c, 2) - 22.348 * pow(c, 3) + 27.467 * pow(c, 4) -
           18.022 * pow(c, 5) + 4.8218 * pow(c, 6);
}

/* The c whose alpha(c) is the given dashpot factor 2 zeta (alpha falls monotonically from 1.27
 * at c = 0 to 3e-4 at c = 1): bisection to the last bit. */
static double tsuji_input(double alpha) {
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 200; ++it) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) {
            break;
        }
        if (tsuji_pair(mid) > alpha) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return fabs(tsuji_pair(lo) - alpha) < fabs(tsuji_pair(hi) - alpha) ? lo : hi;
}

/* LAMMPS's mass of a sphere from its density (AtomVecSphere::data_atom_post). */
static double lmp_mass(const lbody *b) {
    return b->rho * (4.0 * kPi / 3.0 * b->r * b->r * b->r);
}

/* The physics for a case's pairs and walls: nbsim's, with the damping ratio LAMMPS will use
 * (alpha of the c written to the deck, / 2), which differs from nbsim's by rounding (checked). */
typedef struct {
    sim_physics pair, wall;
    double c;     /* the tsuji input written to the deck */
    double ratio; /* k_t / k_n of nbsim */
    double x;     /* x_gamma_t */
} lmodel;

static lmodel lmodel_of(const lcase *k) {
    lmodel m;
    sim_params p = k->p;
    if (k->nu > 0.0) { /* hertz/material with mindlin NULL fixes the ratio by Poisson's ratio */
        p.stiffness_ratio = 2.0 * (1.0 - k->nu) / (2.0 - k->nu);
    }
    m.pair = sim_physics_from_params(&p);
    m.pair.normal.inv_dt = 0.0; /* LAMMPS has no contact-onset weighting of the dashpot */
    m.ratio = p.stiffness_ratio > 0.0 ? p.stiffness_ratio : SIM_DEFAULT_STIFFNESS_RATIO;
    m.x = m.pair.tangential.tangential_damping;
    const double alpha = 2.0 * m.pair.normal.damping_ratio;
    m.c = tsuji_input(alpha);
    const double a_pair = tsuji_pair(m.c), a_wall = tsuji_wall(m.c);
    ENSURE_MSG(fabs(a_pair - alpha) <= 1e-13 * alpha && fabs(a_wall - alpha) <= 1e-13 * alpha,
               "%s: tsuji %.17g gives %.17g / %.17g for %.17g", k->name, m.c, a_pair, a_wall,
               alpha);
    m.wall = m.pair;
    m.pair.normal.damping_ratio = 0.5 * a_pair;
    m.wall.normal.damping_ratio = 0.5 * a_wall;
    return m;
}

static double overlap_of(const lbody *a, const lbody *b) {
    return a->r + b->r - norm3(sub3(a->x, b->x));
}

/* Writes the case's data file. */
static void write_data(const lcase *k, const char *path) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f == NULL) {
        return;
    }
    const double L = k->p.box_half + 2.0;
    fprintf(f, "nbsim tests/test_friction.c case %s\n\n%d atoms\n%d atom types\n\n", k->name, k->n,
            k->n);
    fprintf(f, "%.17g %.17g xlo xhi\n%.17g %.17g ylo yhi\n%.17g %.17g zlo zhi\n\n", -L, L, -L, L,
            -L, L);
    fprintf(f, "Atoms # sphere\n\n");
    for (int i = 0; i < k->n; ++i) {
        const lbody *b = &k->b[i];
        fprintf(f, "%d %d %.17g %.17g %.17g %.17g %.17g\n", i + 1, i + 1, 2.0 * b->r, b->rho,
                b->x.x, b->x.y, b->x.z);
    }
    fprintf(f, "\nVelocities\n\n");
    for (int i = 0; i < k->n; ++i) {
        const lbody *b = &k->b[i];
        fprintf(f, "%d %.17g %.17g %.17g %.17g %.17g %.17g\n", i + 1, b->v.x, b->v.y, b->v.z,
                b->w.x, b->w.y, b->w.z);
    }
    fclose(f);
}

/* Writes the model file: nbsim's parameters in LAMMPS's keywords (docs/friction.md), per pair of
 * bodies (types) and per body and wall axis. Hertz: k = k_n sqrt(R_eff) (hertz k_n: F = k_n a d,
 * a = sqrt(R_eff d)), Mindlin k_t = k_t' a with k_t' = 3/2 ratio k / sqrt(R_eff); rolling sds
 * takes constants, so a Hertz case's rolling spring (nbsim's is the tangential one, ~ a) is
 * written for the overlap of the bodies as they are (static cases only). */
static void write_model(const lcase *k, const lmodel *m, const char *path) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f == NULL) {
        return;
    }
    const sim_params *p = &k->p;
    const double mu_r = p->rolling_friction;
    ENSURE_MSG(!(p->hertz && mu_r > 0.0 && k->integrate), "%s: Hertz rolling is static only",
               k->name);
    for (int i = 0; i < k->n; ++i) {
        for (int j = i; j < k->n; ++j) {
            const lbody *a = &k->b[i], *b = &k->b[j];
            const double r_eff = a->r * b->r / (a->r + b->r);
            const double ma = lmp_mass(a), mb = lmp_mass(b), m_eff = ma * mb / (ma + mb);
            const double d = i != j ? overlap_of(a, b) : 0.0;
            double kr = 0.0, gr = 0.0;
            fprintf(f, "pair_coeff %d %d ", i + 1, j + 1);
            if (!p->hertz) {
                kr = m->ratio * p->stiffness;
                gr = m->x * 2.0 * m->pair.normal.damping_ratio * sqrt(m_eff * p->stiffness);
                fprintf(f, "hooke %.17g %.17g tangential linear_history %.17g %.17g %.17g",
                        p->stiffness, m->c, kr, m->x, p->friction);
            } else {
                const double kn = p->stiffness / sqrt(r_eff);
                const double ktl = 1.5 * m->ratio * p->stiffness / sqrt(r_eff);
                const double ar = d > 0.0 ? sqrt(d * r_eff) : 1.0;
                kr = ktl * ar;
                gr = m->x * 2.0 * m->pair.normal.damping_ratio * sqrt(m_eff * (kn * ar));
                if (k->nu > 0.0) {
                    const double e_mod = 1.5 * p->stiffness * (1.0 - k->nu * k->nu) / sqrt(r_eff);
                    fprintf(f,
                            "hertz/material %.17g %.17g %.17g tangential mindlin NULL %.17g %.17g",
                            e_mod, m->c, k->nu, m->x, p->friction);
                } else {
                    fprintf(f, "hertz %.17g %.17g tangential mindlin %.17g %.17g %.17g", kn, m->c,
                            ktl, m->x, p->friction);
                }
            }
            if (mu_r > 0.0) {
                fprintf(f, " rolling sds %.17g %.17g %.17g", kr, gr, mu_r);
            }
            fprintf(f, " damping tsuji\n");
        }
    }
    /* Walls: per body (its own R_eff = r and mass) and axis; fix wall/gran converts the tsuji
     * input itself (FixWallGran::init). */
    static const char *const planes[3] = {"xplane", "yplane", "zplane"};
    for (int i = 0; i < k->n; ++i) {
        const lbody *b = &k->b[i];
        const double mb = lmp_mass(b);
        fprintf(f, "group body%d type %d\n", i + 1, i + 1);
        for (int axis = 0; axis < 3; ++axis) {
            const double x = axis == 0 ? b->x.x : axis == 1 ? b->x.y : b->x.z;
            const double d = b->r - (p->box_half - fabs(x)); /* the nearer wall */
            double kr = 0.0, gr = 0.0;
            fprintf(f, "fix wall%d%c body%d wall/gran granular ", i + 1, 'x' + axis, i + 1);
            if (!p->hertz) {
                kr = m->ratio * p->stiffness;
                gr = m->x * 2.0 * m->wall.normal.damping_ratio * sqrt(mb * p->stiffness);
                fprintf(f, "hooke %.17g %.17g tangential linear_history %.17g %.17g %.17g",
                        p->stiffness, m->c, kr, m->x, p->friction);
            } else {
                /* Not hertz/material: this LAMMPS's wall maps E and nu unlike its pair style. */
                const double kn = p->stiffness / sqrt(b->r);
                const double ktl = 1.5 * m->ratio * p->stiffness / sqrt(b->r);
                const double ar = d > 0.0 ? sqrt(d * b->r) : 1.0;
                kr = ktl * ar;
                gr = m->x * 2.0 * m->wall.normal.damping_ratio * sqrt(mb * (kn * ar));
                fprintf(f, "hertz %.17g %.17g tangential mindlin %.17g %.17g %.17g", kn, m->c, ktl,
                        m->x, p->friction);
            }
            if (mu_r > 0.0) {
                fprintf(f, " rolling sds %.17g %.17g %.17g", kr, gr, mu_r);
            }
            fprintf(f, " damping tsuji %s %.17g %.17g\n", planes[axis], -p->box_half, p->box_half);
        }
    }
    const sim_vec3d g = p->gravity;
    if (norm3(g) > 0.0) {
        fprintf(f, "fix gravity all gravity %.17g vector %.17g %.17g %.17g\n", norm3(g),
                g.x / norm3(g), g.y / norm3(g), g.z / norm3(g));
    }
    fclose(f);
}

/* Reads a dump of n bodies: rows[step * n + body] for steps 0..steps; returns the steps read. */
static int read_dump(const char *path, int n, int steps, lrow *rows) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    char line[1024];
    int step = -1, got = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "ITEM: TIMESTEP", 14) == 0) {
            if (fgets(line, sizeof line, f) == NULL) {
                break;
            }
            step = atoi(line);
        } else if (strncmp(line, "ITEM: ATOMS", 11) == 0 && step >= 0 && step <= steps) {
            for (int i = 0; i < n; ++i) {
                lrow r;
                int id = 0;
                if (fgets(line, sizeof line, f) == NULL ||
                    sscanf(line,
                           "%d %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf",
                           &id, &r.m, &r.r, &r.x.x, &r.x.y, &r.x.z, &r.v.x, &r.v.y, &r.v.z, &r.w.x,
                           &r.w.y, &r.w.z, &r.f.x, &r.f.y, &r.f.z, &r.t.x, &r.t.y, &r.t.z) != 18 ||
                    id < 1 || id > n) {
                    fclose(f);
                    return -1;
                }
                rows[step * n + id - 1] = r;
            }
            got = step + 1;
        }
    }
    fclose(f);
    return got;
}

/* The largest difference between us and LAMMPS, relative to the largest magnitude in the run. */
typedef struct {
    double diff, scale;
} lerr;

static void lerr_add(lerr *e, sim_vec3d ours, sim_vec3d theirs) {
    const double d = norm3(sub3(ours, theirs)), s = norm3(theirs);
    e->diff = d > e->diff ? d : e->diff;
    e->scale = s > e->scale ? s : e->scale;
}

static double lerr_rel(const lerr *e) {
    return e->scale > 0.0 ? e->diff / e->scale : e->diff;
}

static const char *lammps_dir;
static int lammps_ran, lammps_skipped;

/* Runs case k in LAMMPS: its dump, rows[step * n + body] for steps 0..steps (caller frees), or
 * NULL (the failure ENSUREd). */
static lrow *lammps_run(const lcase *k, const lmodel *mp) {
    const lmodel m = *mp;
    char data[512], model[512], dump[512], cmd[4096];
    snprintf(data, sizeof data, "%s", test_tmp_path("case.data"));
    snprintf(model, sizeof model, "%s", test_tmp_path("case.model"));
    snprintf(dump, sizeof dump, "%s", test_tmp_path("case.dump"));
    write_data(k, data);
    write_model(k, &m, model);
    snprintf(cmd, sizeof cmd,
             "bash '%s/run_lammps.sh' '%s' -var data case.data -var model case.model -var dump "
             "case.dump -var steps %d -var dt %.17g -var integrate %d -var skin 0.1",
             lammps_dir, test_tmp_dir, k->steps, k->dt, k->integrate);
    remove(dump);
    const int rc = system(cmd);
    if (rc != 0) {
        ENSURE_MSG(0, "%s: LAMMPS failed (%s), see %s/lammps.log", k->name, cmd, test_tmp_dir);
        return NULL;
    }
    lrow *rows = calloc((size_t)(k->steps + 1) * (size_t)k->n, sizeof *rows);
    const int got = rows != NULL ? read_dump(dump, k->n, k->steps, rows) : -1;
    ENSURE_MSG(got == k->steps + 1, "%s: %d steps in the dump, expected %d", k->name, got,
               k->steps + 1);
    if (got != k->steps + 1) {
        free(rows);
        return NULL;
    }
    return rows;
}

/* Runs case k in LAMMPS and the same steps with the functions; tol: the largest relative
 * difference allowed for forces and torques (and, moving, positions, velocities and spins). */
static void lammps_case(const lcase *k, double tol, sim_vec3d *v_end, sim_vec3d *w_end) {
    if (lammps_skipped) {
        return;
    }
    const lmodel m = lmodel_of(k);
    lrow *rows = lammps_run(k, &m);
    if (rows == NULL) {
        return;
    }
    const int n = k->n;
    /* The bodies as LAMMPS holds them (its masses to the last bit). */
    sim_vec4d pos[LMAX], vel[LMAX];
    sim_vec3d w[LMAX], f[LMAX], t[LMAX];
    for (int i = 0; i < n; ++i) {
        const lrow *r = &rows[i];
        pos[i] = v4(r->x.x, r->x.y, r->x.z, r->r);
        vel[i] = v4(r->v.x, r->v.y, r->v.z, r->m);
        w[i] = r->w;
        f[i] = r->f; /* the set-up forces: LAMMPS evaluates them without advancing histories */
        t[i] = r->t;
    }
    static sim_contact_history_d pair[LMAX][LMAX], walls[LMAX][6];
    memset(pair, 0, sizeof pair);
    memset(walls, 0, sizeof walls);
    if (k->integrate) { /* so the set-up forces are the frictionless ones: no contact at step 0 */
        for (int i = 0; i < n; ++i) {
            for (int j = i + 1; j < n; ++j) {
                ENSURE_MSG(overlap_of(&k->b[i], &k->b[j]) < 0.0, "%s: %d, %d touch at step 0",
                           k->name, i, j);
            }
        }
    }
    const double dt = k->dt, dtf = 0.5 * dt; /* fix nve/sphere */
    lerr ef = {0, 0}, et = {0, 0}, ex = {0, 0}, ev = {0, 0}, ew = {0, 0};
    int sticking = 0, sliding = 0; /* contact-steps of the pairs */
    for (int step = 1; step <= k->steps; ++step) {
        if (k->integrate) { /* FixNVESphere::initial_integrate */
            for (int i = 0; i < n; ++i) {
                const double dtfm = dtf / vel[i].w;
                vel[i].x += dtfm * f[i].x;
                vel[i].y += dtfm * f[i].y;
                vel[i].z += dtfm * f[i].z;
                pos[i].x += dt * vel[i].x;
                pos[i].y += dt * vel[i].y;
                pos[i].z += dt * vel[i].z;
                const double dtirotate = dtf / 0.4 / (pos[i].w * pos[i].w * vel[i].w);
                w[i] = add3(w[i], scale3(dtirotate, t[i]));
            }
        }
        for (int i = 0; i < n; ++i) {
            f[i] = scale3(vel[i].w, k->p.gravity);
            t[i] = v3(0, 0, 0);
        }
        for (int i = 0; i < n; ++i) {
            for (int j = i + 1; j < n; ++j) {
                sim_vec3d fc, ti, tj;
                if (sim_friction_contact_d(pos[i], vel[i], w[i], pos[j], vel[j], w[j], &pair[i][j],
                                           &m.pair, dt, &fc, &ti, &tj, NULL)) {
                    const sim_vec3d d = sub3(xyz(pos[i]), xyz(pos[j]));
                    const sim_vec3d nn = scale3(1.0 / norm3(d), d);
                    const double fn = dot3(fc, nn);
                    const double ft = norm3(sub3(fc, scale3(fn, nn)));
                    if (ft >= k->p.friction * fabs(fn) * (1.0 - 1e-12)) {
                        ++sliding;
                    } else {
                        ++sticking;
                    }
                    f[i] = add3(f[i], fc);
                    f[j] = sub3(f[j], fc);
                    t[i] = add3(t[i], ti);
                    t[j] = add3(t[j], tj);
                }
            }
            sim_friction_walls_d(pos[i], vel[i], w[i], walls[i], &m.wall, dt, &f[i], &t[i], NULL);
        }
        if (k->integrate) { /* FixNVESphere::final_integrate */
            for (int i = 0; i < n; ++i) {
                const double dtfm = dtf / vel[i].w;
                vel[i].x += dtfm * f[i].x;
                vel[i].y += dtfm * f[i].y;
                vel[i].z += dtfm * f[i].z;
                const double dtirotate = dtf / 0.4 / (pos[i].w * pos[i].w * vel[i].w);
                w[i] = add3(w[i], scale3(dtirotate, t[i]));
            }
        }
        for (int i = 0; i < n; ++i) {
            const lrow *r = &rows[step * n + i];
            lerr_add(&ef, f[i], r->f);
            lerr_add(&et, t[i], r->t);
            lerr_add(&ex, xyz(pos[i]), r->x);
            lerr_add(&ev, xyz(vel[i]), r->v);
            lerr_add(&ew, w[i], r->w);
        }
    }
    printf("  %-26s %4d steps: max |d| / max |.|  force %.1e  torque %.1e", k->name, k->steps,
           lerr_rel(&ef), lerr_rel(&et));
    if (k->integrate) {
        printf("  x %.1e  v %.1e  w %.1e", lerr_rel(&ex), lerr_rel(&ev), lerr_rel(&ew));
    }
    printf("  (pair contact-steps: %d sticking, %d sliding)\n", sticking, sliding);
    ENSURE(k->integrate || (sticking > 0 && sliding > 0)); /* static: both regimes */
    ENSURE_MSG(lerr_rel(&ef) <= tol && lerr_rel(&et) <= tol, "%s: force %g, torque %g (tol %g)",
               k->name, lerr_rel(&ef), lerr_rel(&et), tol);
    ENSURE(et.scale > 0.0); /* friction did act */
    if (k->integrate) {
        ENSURE_MSG(lerr_rel(&ex) <= tol && lerr_rel(&ev) <= tol && lerr_rel(&ew) <= tol,
                   "%s: x %g, v %g, w %g (tol %g)", k->name, lerr_rel(&ex), lerr_rel(&ev),
                   lerr_rel(&ew), tol);
    }
    if (v_end != NULL) {
        const lrow *r = &rows[k->steps * n];
        *v_end = r->v;
        *w_end = r->w;
    }
    ++lammps_ran;
    free(rows);
}

/* The static configuration: four pairs in contact (one body in two), one body in two walls at
 * a corner, one in the floor, all moving and spinning, bodies in place (no integration), so
 * every step drives the histories on at constant velocities: sticking first, sliding later. */
static void static_bodies(lcase *k) {
    const lbody b[] = {
        /* r, rho, x, v, w */
        {0.5, 1000.0, {0.0, 0.0, 0.0}, {0.10, 0.20, -0.05}, {0.0, 0.0, 1.0}},
        {0.5, 1000.0, {0.9, 0.1, 0.05}, {-0.05, 0.0, 0.02}, {0.3, -0.2, 0.0}},
        {0.3, 2500.0, {0.0, 0.78, 0.1}, {0.0, -0.3, 0.1}, {-2.0, 0.5, 0.7}},
        {0.4, 800.0, {1.45, 0.75, -0.15}, {0.02, -0.01, 0.0}, {0.0, 0.0, 0.0}},
        {0.35, 1200.0, {1.9, 1.15, -0.45}, {-0.1, 0.0, 0.3}, {1.0, 1.0, -1.0}},
        {0.45, 1000.0, {-2.6, -2.6, 1.0}, {-0.02, 0.03, 0.0}, {0.5, -0.5, 0.2}},
        {0.3, 1500.0, {-1.5, 1.8, -2.75}, {0.2, -0.1, 0.0}, {0.0, 3.0, 0.0}},
    };
    k->n = (int)(sizeof b / sizeof b[0]);
    memcpy(k->b, b, sizeof b);
    k->p.box_half = 3.0;
    k->integrate = 0;
    k->steps = 60;
    k->dt = 2e-4;
}

static lcase lcase_static(const char *name, int hertz, double mu, double mu_r) {
    lcase k;
    memset(&k, 0, sizeof k);
    k.name = name;
    k.p = sim_params_default();
    k.p.hertz = hertz;
    k.p.stiffness = hertz ? 1e7 : 1e5;
    k.p.restitution = 0.6;
    k.p.friction = mu;
    k.p.rolling_friction = mu_r;
    static_bodies(&k);
    return k;
}

static void test_lammps_static(void) {
    lcase k = lcase_static("hooke static", 0, 0.5, 0.1);
    int pairs = 0, walls = 0;
    for (int i = 0; i < k.n; ++i) {
        for (int j = i + 1; j < k.n; ++j) {
            pairs += overlap_of(&k.b[i], &k.b[j]) > 0.0;
        }
        const double x[3] = {k.b[i].x.x, k.b[i].x.y, k.b[i].x.z};
        for (int a = 0; a < 3; ++a) {
            walls += k.b[i].r - (k.p.box_half - fabs(x[a])) > 0.0;
        }
    }
    ENSURE(pairs == 4 && walls == 3); /* bodies 1-2, 1-3, 2-4, 4-5; body 6 at x and y, 7 at z */
    lammps_case(&k, 1e-12, NULL, NULL);
    k = lcase_static("hooke static, mu 0.05", 0, 0.05, 0.02);
    k.p.stiffness_ratio = 0.8;
    k.p.tangential_damping.value = 1.0;
    k.p.tangential_damping.set = 1;
    lammps_case(&k, 1e-12, NULL, NULL);
    k = lcase_static("hertz static", 1, 0.15, 0.1);
    lammps_case(&k, 1e-12, NULL, NULL);
    k = lcase_static("hertz/material static", 1, 0.3, 0.05);
    k.nu = 0.3; /* mindlin NULL: k_t = 8 G_eff a, ratio 2 (1 - nu) / (2 - nu) */
    lammps_case(&k, 1e-12, NULL, NULL);
}

/* Two equal spheres meet at relative speed 1 m/s and impact angle theta (between the relative
 * velocity and the line of centres), integrated by LAMMPS's fix nve/sphere and by the same steps
 * here; returns the rebound angle and spin LAMMPS gives. Small angles stick, large ones slide
 * through the whole contact. */
static lcase lcase_impact(int hertz, double theta, double mu, double mu_r) {
    lcase k;
    memset(&k, 0, sizeof k);
    k.name = hertz ? "hertz impact" : "hooke impact";
    k.p = sim_params_default();
    k.p.hertz = hertz;
    k.p.stiffness = hertz ? 1e7 : 1e5;
    k.p.restitution = 0.8;
    k.p.friction = mu;
    k.p.rolling_friction = mu_r;
    k.p.box_half = 3.0;
    k.n = 2;
    /* Body 1 moves at u / 2, body 2 at -u / 2; they touch `lead` seconds in, at -+r on x. */
    const double r = 0.1, rho = 2500.0, lead = 0.02;
    const sim_vec3d u = v3(cos(theta), sin(theta), 0.0); /* velocity of 1 relative to 2 */
    k.b[0] =
        (lbody){r, rho, sub3(v3(-r, 0, 0), scale3(0.5 * lead, u)), scale3(0.5, u), v3(0, 0, 0)};
    k.b[1] =
        (lbody){r, rho, add3(v3(r, 0, 0), scale3(0.5 * lead, u)), scale3(-0.5, u), v3(0, 0, 0)};
    const double m = rho * 4.0 / 3.0 * kPi * r * r * r, m_eff = 0.5 * m;
    const double tc = hertz ? sim_contact_time_hertz(k.p.stiffness, m_eff, 1.0)
                            : sim_contact_time(k.p.stiffness, m_eff);
    const double tc_n = hertz ? sim_contact_time_hertz(k.p.stiffness, m_eff, u.x) : tc;
    k.dt = tc / 80.0;
    k.integrate = 1;
    k.steps = (int)((lead + 1.5 * tc_n) / k.dt);
    return k;
}

static void test_lammps_impacts(void) {
    printf("  oblique impacts (equal spheres, e = 0.8, mu = 0.3): angle -> rebound angle, spin\n");
    for (int hertz = 0; hertz <= 1; ++hertz) {
        for (int deg = 5; deg <= 85; deg += 20) {
            lcase k = lcase_impact(hertz, deg * kPi / 180.0, 0.3, hertz ? 0.0 : 0.05);
            sim_vec3d v = {0}, w = {0};
            lammps_case(&k, 1e-9, &v, &w);
            if (lammps_skipped) {
                return;
            }
            /* Body 1 leaves with v; its rebound angle against the line of centres. */
            printf("    %s %2d deg: rebound %6.2f deg, w_z %8.4f rad/s\n",
                   hertz ? "hertz" : "hooke", deg, atan2(v.y, -v.x) * 180.0 / kPi, w.z);
        }
    }
}

/* A ball thrown along the floor under gravity (the wall with friction and rolling resistance). */
static void test_lammps_wall_roll(void) {
    for (int hertz = 0; hertz <= 1; ++hertz) {
        lcase k;
        memset(&k, 0, sizeof k);
        k.name = hertz ? "hertz ball on floor" : "hooke ball on floor";
        k.p = sim_params_default();
        k.p.hertz = hertz;
        k.p.stiffness = hertz ? 1e8 : 1e5;
        k.p.restitution = 0.5;
        k.p.friction = 0.4;
        k.p.rolling_friction = hertz ? 0.0 : 0.02;
        k.p.box_half = 1.0;
        k.p.gravity = v3(0.0, 0.0, -9.81);
        k.n = 1;
        k.b[0] = (lbody){0.05, 2500.0, v3(-0.8, 0.1, -0.945), v3(0.6, 0.1, -0.2), v3(0, 0, 3.0)};
        const double m = lmp_mass(&k.b[0]);
        const double tc = hertz ? sim_contact_time_hertz(k.p.stiffness, m, 1.0)
                                : sim_contact_time(k.p.stiffness, m);
        k.dt = tc / 60.0;
        k.integrate = 1;
        k.steps = (int)(0.25 / k.dt);
        sim_vec3d v, w;
        lammps_case(&k, 1e-9, &v, &w);
    }
}

/* ---- the same cases through the CPU reference backend ---- */

/* Case k through the CPU reference (sim_backend: the stepper, the history tables, the pair visit,
 * the walls, the spin's half kicks), culled or not (the map's plan), against LAMMPS's rows: per
 * step the positions, velocities, spins and total forces, each as max |difference| / max
 * |value| over the run, at most tol (forces: ftol). The backend's state starts from LAMMPS's step 0 (its masses
 * to the last bit); *v_end, *w_end: body 0's final velocity and spin as the backend has them;
 * gaps (NULL: none): the four differences, force, x, v, w. */
static void backend_case(const lcase *k, const lrow *rows, int cull, double ftol, double tol,
                         sim_vec3d *v_end, sim_vec3d *w_end, double *gaps) {
    const int n = k->n;
    sim_state s;
    sim_error err = {SIM_OK, ""};
    ENSURE(sim_state_alloc(&s, (uint32_t)n, &err) == SIM_OK);
    for (int i = 0; i < n; ++i) {
        const lrow *r = &rows[i];
        s.pos[i] = v4(r->x.x, r->x.y, r->x.z, r->r);
        s.vel[i] = v4(r->v.x, r->v.y, r->v.z, r->m);
        s.spin[i] = v4(r->w.x, r->w.y, r->w.z, 0.0);
    }
    sim_params p = k->p;
    p.dt = k->dt;
    p.steps_per_frame = 1;
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CPU;
    c.tile = 32;
    c.cull = cull;
    sim_backend *b = NULL;
    const sim_status st = sim_backend_create(&c, &p, &s, &b, &err);
    ENSURE_MSG(st == SIM_OK, "%s: %s", k->name, err.message);
    if (st != SIM_OK) {
        sim_state_free(&s);
        return;
    }
    lerr ef = {0, 0}, ex = {0, 0}, ev = {0, 0}, ew = {0, 0};
    sim_vec3d f[LMAX];
    for (int step = 1; step <= k->steps; ++step) {
        sim_frame_timing t;
        ENSURE(sim_backend_run_frame(b, &t, &err) == SIM_OK);
        ENSURE(sim_backend_read_state(b, &s, f, &err) == SIM_OK);
        for (int i = 0; i < n; ++i) {
            const lrow *r = &rows[step * n + i];
            lerr_add(&ef, f[i], r->f);
            lerr_add(&ex, xyz(s.pos[i]), r->x);
            lerr_add(&ev, xyz(s.vel[i]), r->v);
            lerr_add(&ew, xyz(s.spin[i]), r->w);
        }
    }
    printf("  %-26s %s %4d steps: force %.1e  x %.1e  v %.1e  w %.1e\n", k->name,
           cull ? "culled  " : "unculled", k->steps, lerr_rel(&ef), lerr_rel(&ex), lerr_rel(&ev),
           lerr_rel(&ew));
    ENSURE_MSG(lerr_rel(&ef) <= ftol && lerr_rel(&ex) <= tol && lerr_rel(&ev) <= tol &&
                   lerr_rel(&ew) <= tol,
               "%s through the backend: force %g (tol %g), x %g, v %g, w %g (tol %g)", k->name,
               lerr_rel(&ef), ftol, lerr_rel(&ex), lerr_rel(&ev), lerr_rel(&ew), tol);
    *v_end = xyz(s.vel[0]);
    *w_end = xyz(s.spin[0]);
    if (gaps != NULL) { /* force, x, v, w */
        gaps[0] = lerr_rel(&ef);
        gaps[1] = lerr_rel(&ex);
        gaps[2] = lerr_rel(&ev);
        gaps[3] = lerr_rel(&ew);
    }
    sim_backend_destroy(b);
    sim_state_free(&s);
}

/* Rebound angle of body 0 leaving with velocity v [degrees from the line of centres]. */
static double rebound_deg(sim_vec3d v) {
    return atan2(v.y, -v.x) * 180.0 / kPi;
}

/* Oblique impacts through the backend, culled and not: the rebound angle and spin of LAMMPS's,
 * over angles that stick (5-45 degrees: tan theta < 7/2 mu (1 + e)) and slide (65, 85). Hertz
 * (no contact-onset weighting, docs/friction.md) agrees to rounding (1e-9, the functions'
 * tolerance for moving cases). The linear law's dashpot the backend weights at a contact's first
 * and last step, LAMMPS does not: those steps' forces differ by up to ~3 % of the largest force
 * (measured 1.8-3.1e-2), the trajectories by less than 1e-3 (x 5e-5, v 8e-4, w 1.2e-3 of their
 * largest values), the rebound angles by at most 0.02 degrees. */
#define BACKEND_HERTZ_TOL 1e-9
#define BACKEND_LINEAR_FORCE_TOL 5e-2
#define BACKEND_LINEAR_TOL 2e-3
#define BACKEND_LINEAR_ANGLE_DEG 0.05

static void test_lammps_backend_impacts(void) {
    printf("  through the CPU backend (e = 0.8, mu = 0.3; linear: mu_r = 0.05): impact angle -> "
           "rebound angle, spin (LAMMPS, nbsim)\n");
    for (int hertz = 1; hertz >= 0; --hertz) {
        for (int deg = 5; deg <= 85; deg += 20) {
            lcase k = lcase_impact(hertz, deg * kPi / 180.0, 0.3, hertz ? 0.0 : 0.05);
            k.name = hertz ? "hertz impact" : "hooke impact";
            const lmodel m = lmodel_of(&k);
            lrow *rows = lammps_skipped ? NULL : lammps_run(&k, &m);
            if (rows == NULL) {
                return;
            }
            const lrow *end = &rows[k.steps * k.n];
            const double tol = hertz ? BACKEND_HERTZ_TOL : BACKEND_LINEAR_TOL;
            for (int cull = 0; cull <= 1; ++cull) {
                sim_vec3d v = {0, 0, 0}, w = {0, 0, 0};
                backend_case(&k, rows, cull, hertz ? tol : BACKEND_LINEAR_FORCE_TOL, tol, &v, &w,
                             NULL);
                const double angle = rebound_deg(v), angle_l = rebound_deg(end->v);
                printf("    %s %2d deg: rebound %6.2f / %6.2f deg, w_z %8.4f / %8.4f rad/s\n",
                       hertz ? "hertz" : "hooke", deg, angle_l, angle, end->w.z, w.z);
                ENSURE_MSG(fabs(angle - angle_l) <= (hertz ? 1e-6 : BACKEND_LINEAR_ANGLE_DEG) &&
                               fabs(w.z - end->w.z) <= tol * fabs(end->w.z) + 1e-12,
                           "%s %d deg: rebound %g vs %g deg, spin %g vs %g", k.name, deg, angle,
                           angle_l, w.z, end->w.z);
            }
            free(rows);
        }
    }
}

/* Oblique impacts of unequal spheres with spin (issue 41 item 3: e = 0.8, mu = 0.25, 10-85
 * degrees) through the CPU backend in both forms of the linear law's normal dashpot, against
 * LAMMPS: LAMMPS's form (lammps_dashpot = 1) agrees to rounding, like Hertz; the weighted form
 * (the default, physics.h) is printed beside it, the figures docs/physics.md gives, and held
 * under the gap written there. At 50 degrees the step is also halved and divided by 8: the
 * weighted form's gap does not shrink with dt (it is a difference of models, not of rounding). */
#define OBLIQUE_LAMMPS_TOL 1e-12
#define OBLIQUE_WEIGHTED_MAX 2e-2

static lcase lcase_oblique(double theta, int dt_div) {
    lcase k;
    memset(&k, 0, sizeof k);
    k.name = "hooke oblique, unequal";
    k.p = sim_params_default();
    k.p.stiffness = 1e5;
    k.p.restitution = 0.8;
    k.p.friction = 0.25;
    k.p.box_half = 3.0;
    k.n = 2;
    /* Body 1 (r 0.1 m, 2500 kg/m^3) and body 2 (r 0.06 m, 1200 kg/m^3), both spinning, at zero
     * total momentum and relative speed 1 m/s; they touch `lead` seconds in, on the x axis. */
    const double r1 = 0.1, r2 = 0.06, rho1 = 2500.0, rho2 = 1200.0, lead = 0.02;
    const double m1 = rho1 * 4.0 / 3.0 * kPi * r1 * r1 * r1;
    const double m2 = rho2 * 4.0 / 3.0 * kPi * r2 * r2 * r2;
    const sim_vec3d u = v3(cos(theta), sin(theta), 0.0); /* velocity of 1 relative to 2 */
    const sim_vec3d v1 = scale3(m2 / (m1 + m2), u), v2 = scale3(-m1 / (m1 + m2), u);
    k.b[0] = (lbody){r1, rho1, sub3(v3(-r1, 0, 0), scale3(lead, v1)), v1, v3(1.0, -2.0, 4.0)};
    k.b[1] = (lbody){r2, rho2, sub3(v3(r2, 0, 0), scale3(lead, v2)), v2, v3(-3.0, 0.5, -6.0)};
    const double tc = sim_contact_time(k.p.stiffness, m1 * m2 / (m1 + m2));
    k.dt = tc / 80.0 / dt_div;
    k.integrate = 1;
    k.steps = (int)((lead + 1.5 * tc) / k.dt);
    return k;
}

static void test_lammps_backend_oblique(void) {
    printf("  unequal spheres with spin through the CPU backend (e = 0.8, mu = 0.25), "
           "max |d| / max |.| against LAMMPS of x, v, w: weighted (default) | lammps_dashpot 1\n");
    const int degs[] = {10, 25, 40, 50, 55, 70, 85};
    for (size_t a = 0; a < sizeof degs / sizeof degs[0]; ++a) {
        for (int dt_div = 1; dt_div <= 8; dt_div *= 2) {
            if (dt_div > 1 && (degs[a] != 50 || dt_div == 4)) {
                continue;
            }
            lcase k = lcase_oblique(degs[a] * kPi / 180.0, dt_div);
            const lmodel m = lmodel_of(&k);
            lrow *rows = lammps_skipped ? NULL : lammps_run(&k, &m);
            if (rows == NULL) {
                return;
            }
            double gap[2][4];
            sim_vec3d v[2], w[2];
            for (int form = 0; form <= 1; ++form) {
                k.p.lammps_dashpot = form;
                /* the weighted form: only the figures (its own bound below) */
                const double tol = form ? OBLIQUE_LAMMPS_TOL : 1.0;
                backend_case(&k, rows, 1, tol, tol, &v[form], &w[form], gap[form]);
            }
            const lrow *end = &rows[k.steps * k.n];
            printf("    %2d deg, dt / %d: x %.1e | %.1e  v %.1e | %.1e  w %.1e | %.1e;  rebound "
                   "%.4f (LAMMPS) %.4f | %.4f deg\n",
                   degs[a], dt_div, gap[0][1], gap[1][1], gap[0][2], gap[1][2], gap[0][3],
                   gap[1][3], rebound_deg(end->v), rebound_deg(v[0]), rebound_deg(v[1]));
            ENSURE_MSG(fabs(rebound_deg(v[1]) - rebound_deg(end->v)) <= 1e-6,
                       "lammps_dashpot %d deg: rebound %g vs %g deg", degs[a], rebound_deg(v[1]),
                       rebound_deg(end->v));
            ENSURE_MSG(gap[0][2] <= OBLIQUE_WEIGHTED_MAX && gap[0][3] <= OBLIQUE_WEIGHTED_MAX,
                       "weighted %d deg: v %g, w %g beyond docs/physics.md's %g", degs[a],
                       gap[0][2], gap[0][3], OBLIQUE_WEIGHTED_MAX);
            free(rows);
        }
    }
}

/* A ball thrown along the floor under gravity through the backend (the walls' friction and
 * histories, rolling resistance). */
static void test_lammps_backend_wall_roll(void) {
    lcase k;
    memset(&k, 0, sizeof k);
    k.name = "hertz ball on floor";
    k.p = sim_params_default();
    k.p.hertz = 1;
    k.p.stiffness = 1e8;
    k.p.restitution = 0.5;
    k.p.friction = 0.4;
    k.p.box_half = 1.0;
    k.p.gravity = v3(0.0, 0.0, -9.81);
    k.n = 1;
    k.b[0] = (lbody){0.05, 2500.0, v3(-0.8, 0.1, -0.945), v3(0.6, 0.1, -0.2), v3(0, 0, 3.0)};
    const double tc = sim_contact_time_hertz(k.p.stiffness, lmp_mass(&k.b[0]), 1.0);
    k.dt = tc / 60.0;
    k.integrate = 1;
    k.steps = (int)(0.25 / k.dt);
    const lmodel m = lmodel_of(&k);
    lrow *rows = lammps_skipped ? NULL : lammps_run(&k, &m);
    if (rows != NULL) {
        sim_vec3d v, w;
        backend_case(&k, rows, 1, 1e-9, 1e-9, &v, &w, NULL);
        free(rows);
    }
}

/* The mapping's own claim: Debian's LAMMPS is the version it was written for. */
static int lammps_version_ok(void) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash '%s/run_lammps.sh' --version", lammps_dir);
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    if (p == NULL || fgets(line, sizeof line, p) == NULL) {
        line[0] = '\0';
    }
    const int rc = p != NULL ? pclose(p) : -1;
    if (rc != 0 || line[0] == '\0') {
        printf("LAMMPS with the GRANULAR package not found (run_lammps.sh): skipped\n");
        return 0;
    }
    line[strcspn(line, "\n")] = '\0';
    printf("LAMMPS %s\n", line);
    if (strstr(line, "29 Sep 2021") == NULL) {
        printf("the mapping (docs/friction.md) is for LAMMPS 29 Sep 2021: skipped\n");
        return 0;
    }
    return 1;
}

static const ensure_test lammps_tests[] = {
    {"lammps_static", test_lammps_static},
    {"lammps_impacts", test_lammps_impacts},
    {"lammps_wall_roll", test_lammps_wall_roll},
    {"lammps_backend_impacts", test_lammps_backend_impacts},
    {"lammps_backend_oblique", test_lammps_backend_oblique},
    {"lammps_backend_wall_roll", test_lammps_backend_wall_roll},
};

int main(int argc, char **argv) {
    test_tmp_name = "test_friction_lammps";
    if (argc < 2) {
        fprintf(stderr, "usage: test_friction_lammps DIR [NAME] (DIR: tests/lammps)\n");
        return 1;
    }
    lammps_dir = argv[1];
    if (!lammps_version_ok()) {
        return ENSURE_SKIP_CODE;
    }
    const int rc = ensure_run(lammps_tests, (int)(sizeof lammps_tests / sizeof lammps_tests[0]),
                              argc > 2 ? argv[2] : NULL);
    if (rc == 0 && getenv("NBSIM_KEEP_LAMMPS") == NULL) {
        test_tmp_remove();
    } else if (test_tmp_dir[0] != '\0') {
        printf("LAMMPS's files: %s\n", test_tmp_dir);
    }
    return rc;
}
