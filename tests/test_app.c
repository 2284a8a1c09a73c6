/* SPDX-License-Identifier: MIT
 * nbsim — app/ on the CPU: strict number parsing, options, statistics, the CSV log and the JSON
 * summary of a real CPU-backend session. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ensure.h"
#include "nbsim/autotune.h"
#include "nbsim/map_compare.h"
#include "nbsim/run_stats.h"
#include "nbsim/session.h"
#include "nbsim/timing_log.h"
#include "options.h"
#include "parse.h"
#include "viewer.h"

static void test_parse_numbers(void) {
    long l = 0;
    double d = 0;
    uint64_t u = 0;
    double v[3];
    ENSURE(app_parse_long("42", 1, 100, &l) == 0 && l == 42);
    ENSURE(app_parse_long("0", 1, 100, &l) != 0);
    ENSURE(app_parse_long("12abc", 1, 100, &l) != 0);
    ENSURE(app_parse_long("", 1, 100, &l) != 0);
    ENSURE(app_parse_long(" 5", 1, 100, &l) != 0);
    ENSURE(app_parse_long("99999999999999999999", 1, 100, &l) != 0);
    ENSURE(app_parse_double("1e-3", 0, 1, &d) == 0 && d == 1e-3);
    ENSURE(app_parse_double("nan", -1e9, 1e9, &d) != 0);
    ENSURE(app_parse_double("inf", -1e300, 1e300, &d) != 0);
    ENSURE(app_parse_double("2.5x", 0, 10, &d) != 0);
    ENSURE(app_parse_u64("18446744073709551615", &u) == 0 && u == UINT64_MAX);
    ENSURE(app_parse_u64("-1", &u) != 0);
    ENSURE(app_parse_vec3("0,-9.81,0", v) == 0 && v[1] == -9.81);
    ENSURE(app_parse_vec3("0,1", v) != 0);
    ENSURE(app_parse_vec3("0,1,2,3", v) != 0);
    ENSURE(app_parse_vec3("0,,2", v) != 0);
}

static int parse_args(app_options *o, int argc, const char **argv) {
    /* Keep stderr quiet while bad input is parsed on purpose. */
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *null = fopen("/dev/null", "w");
    dup2(fileno(null), STDERR_FILENO);
    int r = app_options_parse(argc, (char **)argv, o);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    fclose(null);
    return r;
}

static void test_options(void) {
    static app_options o;
    const char *good[] = {
        "nbsim",         "--frames", "10",        "--n=500", "--pair-map", "rb",
        "--triplet-map", "tetra",    "--tile",    "32",      "--gravity",  "0,-9.8,0",
        "--restitution", "0.5",      "--backend", "cpu",     "--triplets", "off"};
    ENSURE(parse_args(&o, 18, good) == 0);
    ENSURE(o.session.frames == 10 && o.session.n == 500 && o.session.config.tile == 32);
    ENSURE(o.session.config.pair_map == SIM_PAIR_MAP_RB &&
           o.session.config.triplet_map == SIM_TRIPLET_MAP_TETRA);
    ENSURE(o.session.params.gravity.y == -9.8 && (o.session.params_given & SIM_GIVEN(GRAVITY)));
    ENSURE(o.session.params.restitution == 0.5 &&
           (o.session.params_given & SIM_GIVEN(RESTITUTION)));
    ENSURE(!(o.session.params_given & SIM_GIVEN(DT)));
    ENSURE(o.session.backend == SIM_BACKEND_CHOICE_CPU && o.session.triplets == SIM_TRIPLETS_OFF);
    ENSURE(o.session.pair_map_set && o.session.triplet_map_set && o.session.tile_set &&
           o.sweep == VIEWER_SWEEP_NONE);
    const char *full[] = {"nbsim", "--pair-map", "full"};
    ENSURE(parse_args(&o, 3, full) == 0 && o.session.config.pair_map == SIM_PAIR_FULL);
    const char *sweep[] = {"nbsim", "--sweep", "exit"};
    ENSURE(parse_args(&o, 3, sweep) == 0 && o.sweep == VIEWER_SWEEP_EXIT &&
           !o.session.pair_map_set);
    const char *bad[][3] = {{"nbsim", "--tile", "48"},       {"nbsim", "--n", "0"},
                            {"nbsim", "--pair-map", "ltmx"}, {"nbsim", "--what", "1"},
                            {"nbsim", "--restitution", "0"}, {"nbsim", "--vsync", "maybe"},
                            {"nbsim", "--size", "10x10"},    {"nbsim", "--frames", "-1"},
                            {"nbsim", "--sweep", "now"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        ENSURE_MSG(parse_args(&o, 3, bad[k]) == 2, "%s %s accepted", bad[k][1], bad[k][2]);
    }
    const char *missing[] = {"nbsim", "--frames"};
    ENSURE(parse_args(&o, 2, missing) == 2);
}

static void test_stats(void) {
    sim_run_stats rs = {0};
    for (int i = 1; i <= 100; ++i) {
        sim_frame_timing t = {0};
        t.steps = 2;
        t.pair_ms = 2.0 * i; /* 1..100 ms per step */
        t.step_ms = t.pair_ms;
        ENSURE(sim_run_stats_add(&rs, &t, NULL) == SIM_OK);
    }
    sim_stats st = sim_run_stats_get(&rs, SIM_RUN_KERNEL_PAIR);
    ENSURE_NEAR(st.median, 50.5, 1e-12);
    ENSURE_NEAR(st.p95, 95.0, 1e-12);
    ENSURE_NEAR(st.min, 1.0, 1e-12);
    ENSURE_NEAR(st.max, 100.0, 1e-12);
    ENSURE_NEAR(sim_run_stats_mean(&rs, SIM_RUN_KERNEL_PAIR), 50.5, 1e-12);
    /* a frame of 98 steps at 1 ms each and one of 2 steps that rebuilt (51 ms each): the frames'
     * median is 26 ms per step, the run's mean 2 ms */
    sim_run_stats_free(&rs);
    const double frame_ms[2] = {98.0, 102.0};
    const int frame_steps[2] = {98, 2};
    for (int i = 0; i < 2; ++i) {
        sim_frame_timing t = {0};
        t.steps = frame_steps[i];
        t.pair_ms = t.step_ms = frame_ms[i];
        ENSURE(sim_run_stats_add(&rs, &t, NULL) == SIM_OK);
    }
    ENSURE_NEAR(sim_run_stats_get(&rs, SIM_RUN_KERNEL_STEP).median, 26.0, 1e-12);
    ENSURE_NEAR(sim_run_stats_mean(&rs, SIM_RUN_KERNEL_STEP), 2.0, 1e-12);
    sim_run_stats_free(&rs);
    ENSURE(sim_run_stats_mean(&rs, SIM_RUN_KERNEL_STEP) == 0.0);
}

static int count_fields(const char *line) {
    int fields = 1, quoted = 0;
    for (const char *c = line; *c && *c != '\n'; ++c) {
        quoted ^= *c == '"';
        fields += *c == ',' && !quoted;
    }
    return fields;
}

static void test_session_log_and_summary(void) {
    static sim_session_config o;
    o = sim_session_config_default();
    o.interactive = 1; /* as the viewer opens it */
    o.backend = SIM_BACKEND_CHOICE_CPU;
    o.n = 64;
    o.triplets = SIM_TRIPLETS_ON;
    sim_session *s = NULL;
    sim_error err;
    sim_status st = sim_session_open(&s, &o, &err);
    ENSURE_MSG(st == SIM_OK, "%s", err.message);
    if (st != SIM_OK) {
        return;
    }
    const sim_run_info *info = sim_session_info(s);
    ENSURE(info->unique_pairs == 64ull * 63 / 2);
    ENSURE(info->unique_triples == 64ull * 63 * 62 / 6);
    ENSURE(info->params.dt > 0.0);
    char path[] = "/tmp/nbsim-test-log-XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    sim_timing_log log;
    ENSURE(sim_timing_log_open(&log, path, &err) == SIM_OK);
    sim_run_stats rs = {0};
    for (int f = 0; f < 3; ++f) {
        sim_frame_timing t;
        sim_energy e;
        double height = 0.0;
        ENSURE(sim_session_frame(s, &t, &err) == SIM_OK);
        ENSURE(sim_session_mean_height(s, &height, &err) == SIM_OK);
        ENSURE(t.steps == 1 && t.pair_ms >= 0.0 && t.pair_blocks > 0);
        ENSURE(sim_session_energy(s, &e, &err) == SIM_OK);
        ENSURE(sim_timing_log_row(&log, info, &t, f == 1 ? NULL : &e, f == 2 ? &height : NULL,
                                  &err) == SIM_OK);
        ENSURE(sim_run_stats_add(&rs, &t, &err) == SIM_OK);
    }
    ENSURE(sim_timing_log_close(&log, &err) == SIM_OK);
    FILE *f = fopen(path, "r");
    ENSURE(f != NULL);
    if (f != NULL) {
        char line[4096];
        int rows = 0;
        int header_fields = count_fields(sim_timing_log_header());
        ENSURE(fgets(line, sizeof line, f) && strncmp(line, "frame,sim_time,n,", 17) == 0);
        /* the new columns come last, after every earlier one */
        ENSURE(strstr(line, ",mean_height,particle_steps_per_s,candidate_tests,contacts,"
                            "atm_list_entries,atm_list_rebuilds,nlist_ms,cells_ms,atm_list_ms,"
                            "drift_ms,kick_ms,inserted\n"));
        while (fgets(line, sizeof line, f)) {
            ++rows;
            ENSURE_MSG(count_fields(line) == header_fields, "row %d: %s", rows, line);
            ENSURE(strncmp(line, rows == 1 ? "1," : rows == 2 ? "2," : "3,", 2) == 0);
            ENSURE(strstr(line, ",cpu,") != NULL);
            /* culled: pairs_per_s (the 16th field) empty; particle steps/s, the sweep's pair
             * tests and its contacts (the three before the ATM lists' two) counted; no ATM
             * cut-off here: the lists' columns empty */
            char *field[64];
            int nf = 0;
            for (char *c = line; nf < 64;) {
                field[nf++] = c;
                c += strcspn(c, ",\n");
                const int end = *c != ',';
                *c++ = '\0';
                if (end) {
                    break;
                }
            }
            ENSURE_MSG(nf == header_fields && field[15][0] == '\0', "row %d: pairs_per_s '%s'",
                       rows, field[15]);
            ENSURE(atof(field[nf - 11]) > 0.0 && field[nf - 10][0] && field[nf - 9][0]);
            ENSURE(field[nf - 8][0] == '\0' && field[nf - 7][0] == '\0');
            for (int k = nf - 6; k < nf - 1; ++k) { /* the phases' columns: a number each */
                ENSURE(field[k][0] != '\0' && atof(field[k]) >= 0.0);
            }
            ENSURE(strcmp(field[nf - 1], "0") == 0); /* inserted: no insertion */
        }
        ENSURE(rows == 3);
        fclose(f);
    }
    char json[] = "/tmp/nbsim-test-json-XXXXXX";
    fd = mkstemp(json);
    close(fd);
    const sim_run_end end = {3, 1, 1, "done", 0, "", 0.5};
    ENSURE(sim_run_stats_write_json(&rs, info, &end, json, &err) == SIM_OK);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import json; d=json.load(open('%s')); assert d['frames']==3 and "
             "d['unique_pairs_per_step']==2016 and d['scene']=='gas' and d['seed']==1 and "
             "d['stop']=='done' and d['frames_requested']==3 and d['n']==64 and d['culled'] and "
             "d['pairs_per_s'] is None and d['particle_steps_per_s']>0 and "
             "d['candidate_tests_per_step']>=0 and "
             "abs(d['candidate_tests_per_body']*64-d['candidate_tests_per_step'])<1e-6 and "
             "d['contacts_per_step']>=0 and "
             "d['ms_per_step_includes']['contact'].startswith('sum: sort + cull + lists')\"",
             json);
    ENSURE(system(cmd) == 0);
    remove(json);
    remove(path);
    sim_run_stats_free(&rs);
    sim_session_close(s);
}

/* The pile falls: its mean height along -gravity goes down from the first frames. */
static void test_mean_height_pile(void) {
    static sim_session_config o;
    o = sim_session_config_default();
    o.interactive = 1; /* as the viewer opens it */
    o.backend = SIM_BACKEND_CHOICE_CPU;
    snprintf(o.scene, sizeof o.scene, "pile");
    o.n = 64;
    sim_session *s = NULL;
    sim_error err;
    sim_status st = sim_session_open(&s, &o, &err);
    ENSURE_MSG(st == SIM_OK, "%s", err.message);
    if (st != SIM_OK) {
        return;
    }
    double first = 0.0, last = 0.0;
    ENSURE(sim_session_mean_height(s, &first, &err) == SIM_OK);
    ENSURE(sim_session_set_steps_per_frame(s, 200, &err) == SIM_OK);
    sim_frame_timing t;
    ENSURE(sim_session_frame(s, &t, &err) == SIM_OK);
    ENSURE(sim_session_mean_height(s, &last, &err) == SIM_OK);
    /* 200 steps of dt: free fall drops the mean by g t^2 / 2 (the bodies start nearly at rest). */
    const double time = sim_session_info(s)->sim_time;
    ENSURE_MSG(last < first - 0.4 * 9.81 * time * time, "mean height %g -> %g after %g s", first,
               last, time);
    sim_session_close(s);
}

/* The comparison table: medians per map, I against bb, warm frames ignored by the caller, a new
 * key clears, and the summary's "map_comparison" section. */
static void test_map_compare(void) {
    static sim_map_compare c;
    const sim_compare_key key = {4096, 64, 0};
    sim_map_compare_init(&c, &key);
    for (int f = 0; f < 9; ++f) {
        sim_map_compare_add(&c, 2, SIM_PAIR_MAP_BB, 2.0 + (f == 4 ? 10.0 : 0.0)); /* one outlier */
        sim_map_compare_add(&c, 2, SIM_PAIR_MAP_RM, 1.6);
    }
    sim_map_compare_add(&c, 2, SIM_PAIR_MAP_LTM, 0.0); /* did not run: ignored */
    sim_map_compare_add(&c, 3, SIM_TRIPLET_MAP_TETRA, 5.0);
    sim_compare_row rows[SIM_PAIR_CHOICE_COUNT];
    int count = sim_map_compare_rows(&c, 2, 0, rows, SIM_PAIR_CHOICE_COUNT);
    ENSURE(count == SIM_PAIR_MAP_COUNT);
    ENSURE(rows[SIM_PAIR_MAP_BB].samples == 9);
    ENSURE_NEAR(rows[SIM_PAIR_MAP_BB].median_ms, 2.0, 1e-12);
    ENSURE_NEAR(rows[SIM_PAIR_MAP_RM].ratio, 2.0 / 1.6, 1e-12);
    ENSURE(rows[SIM_PAIR_MAP_LTM].samples == 0 && rows[SIM_PAIR_MAP_LTM].ratio == 0.0);
    ENSURE(rows[SIM_PAIR_MAP_LTM_SQRT].paper_float && !rows[SIM_PAIR_MAP_RM].paper_float);
    ENSURE(sim_map_compare_rows(&c, 2, 1, rows, SIM_PAIR_CHOICE_COUNT) == SIM_PAIR_CHOICE_COUNT);
    ENSURE(strcmp(rows[SIM_PAIR_FULL].name, "full") == 0);
    ENSURE(sim_map_compare_frames(&c, 2) == 18 && sim_map_compare_frames(&c, 3) == 1);
    ENSURE(sim_map_compare_set_key(&c, &key) == 0 && sim_map_compare_frames(&c, 2) == 18);

    static sim_session_config o;
    o = sim_session_config_default();
    o.interactive = 1; /* as the viewer opens it */
    o.backend = SIM_BACKEND_CHOICE_CPU;
    o.n = 32;
    sim_session *s = NULL;
    sim_error err;
    ENSURE(sim_session_open(&s, &o, &err) == SIM_OK);
    sim_run_stats rs = {0};
    sim_frame_timing t;
    ENSURE(sim_session_frame(s, &t, &err) == SIM_OK);
    ENSURE(sim_run_stats_add(&rs, &t, &err) == SIM_OK);
    char json[] = "/tmp/nbsim-test-compare-XXXXXX";
    int fd = mkstemp(json);
    close(fd);
    const sim_run_end end = {0, 1, 1, "done", 0, "", 0.5};
    ENSURE(sim_run_stats_write_json_maps(&rs, sim_session_info(s), &end, &c, json, &err) == SIM_OK);
    char cmd[768];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import json; m=json.load(open('%s'))['map_comparison']; "
             "p={r['map']: r for r in m['pair']}; assert m['n']==4096 and m['tile']==64 and "
             "m['cull'] is False and len(m['pair'])==%d and 'full' not in p and "
             "p['bb']['frames']==9 and p['ltm']['median_ms'] is None and "
             "abs(p['rm']['I']-1.25)<1e-5 and m['triplet'][1]['map']=='tetra'\"",
             json, SIM_PAIR_MAP_COUNT);
    ENSURE(system(cmd) == 0);
    remove(json);
    sim_run_stats_free(&rs);
    sim_session_close(s);

    const sim_compare_key other = {4096, 128, 0};
    ENSURE(sim_map_compare_set_key(&c, &other) == 1);
    ENSURE(sim_map_compare_frames(&c, 2) == 0 && c.generation == 1);
}

/* Autotune cache lines: dated when stored, older undated lines still read. */
static void test_autotune_cache_date(void) {
    char path[] = "/tmp/nbsim-test-cache-XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    const char old_line[] = "v1 nvidia-h100 18 5 0 128 rm - 13.5 0\n";
    ENSURE(write(fd, old_line, sizeof old_line - 1) == (ssize_t)(sizeof old_line - 1));
    close(fd);
    sim_autotune_entry key, found;
    memset(&key, 0, sizeof key);
    snprintf(key.gpu, sizeof key.gpu, "nvidia-h100");
    key.bucket = 18;
    key.what = SIM_AUTOTUNE_PAIR | SIM_AUTOTUNE_TILE;
    ENSURE(sim_autotune_cache_find(path, &key, &found) == 1);
    ENSURE(found.tile == 128 && strcmp(found.pair, "rm") == 0 && found.date[0] == '\0');
    sim_autotune_entry e = found;
    e.bucket = 17;
    sim_error err;
    ENSURE(sim_autotune_cache_store(path, &e, &err) == SIM_OK);
    key.bucket = 17;
    ENSURE(sim_autotune_cache_find(path, &key, &found) == 1);
    ENSURE_MSG(strlen(found.date) == 10 && found.date[4] == '-', "date '%s'", found.date);
    key.bucket = 18; /* the old line was kept */
    ENSURE(sim_autotune_cache_find(path, &key, &found) == 1 && found.tile == 128);
    remove(path);
}

static void test_unwritable_log(void) {
    sim_timing_log log;
    sim_error err;
    ENSURE(sim_timing_log_open(&log, "/no/such/dir/log.csv", &err) == SIM_IO);
    ENSURE(strstr(err.message, "/no/such/dir/log.csv") != NULL);
}

/* --triplets auto keeps the forces a scene is built around: on in a headless run at any N, on
 * in the viewer up to seconds per frame, and above that the viewer asks instead of guessing. A
 * scene that only sets a mild ATM strength runs without them where they would be slow. */
static void test_triplets_auto(void) {
    static sim_session_config o;
    o = sim_session_config_default();
    o.interactive = 1; /* as the viewer opens it */
    o.backend = SIM_BACKEND_CHOICE_CPU;
    snprintf(o.scene, sizeof o.scene, "triplets");
    const struct {
        uint32_t n;
        long frames; /* 0: the viewer */
        sim_status status;
        int triplets;
        const char *notice;
    } cases[] = {
        {100, 0, SIM_OK, 1, ""},
        {500, 10, SIM_OK, 1, "triplet forces on, as triplets is built around them"},
        {500, 10, SIM_OK, 1, "(--triplets off runs without them)"},
        {500, 0, SIM_OK, 1, "slow on the CPU"},
        {3000, 0, SIM_BAD_ARGUMENT, 0, "pass --triplets on"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        o.n = cases[k].n;
        o.frames = cases[k].frames;
        o.interactive = o.frames == 0;
        sim_session *s = NULL;
        sim_error err;
        sim_error_clear(&err);
        const sim_status st = sim_session_open(&s, &o, &err);
        ENSURE_MSG(st == cases[k].status, "case %zu: %s", k, err.message);
        if (st == SIM_OK) {
            ENSURE_MSG(sim_session_info(s)->params.triplets == cases[k].triplets, "case %zu", k);
            const char *notices = sim_session_take_notices(s);
            ENSURE_MSG(strstr(notices, cases[k].notice) != NULL, "case %zu: '%s'", k, notices);
        } else {
            ENSURE_MSG(strstr(err.message, cases[k].notice) != NULL, "case %zu: %s", k,
                       err.message);
        }
        sim_session_close(s);
    }
    snprintf(o.scene, sizeof o.scene, "gas");
    o.n = 300;
    o.frames = 10;
    o.interactive = 0;
    sim_session *s = NULL;
    sim_error err;
    ENSURE(sim_session_open(&s, &o, &err) == SIM_OK);
    if (s != NULL) {
        ENSURE(!sim_session_info(s)->params.triplets);
        ENSURE(
            strstr(sim_session_take_notices(s), "gas sets atm_nu but does not ask for triplets"));
    }
    sim_session_close(s);
}

/* A binding's session: bodies given as arrays (copied, under their own name), their parameters
 * whole; frames move them, reset brings them back, new parameters apply, and a built-in scene's
 * name is refused (it would hide the scene). */
static void test_session_from_arrays(void) {
    static sim_session_config o;
    o = sim_session_config_default();
    o.backend = SIM_BACKEND_CHOICE_CPU;
    o.triplets = SIM_TRIPLETS_OFF;
    snprintf(o.scene, sizeof o.scene, "two balls");
    o.params.gravity = (sim_vec3d){0.0, -9.81, 0.0};
    o.params.box_half = 5.0;
    sim_state bodies = {0};
    sim_error err;
    ENSURE(sim_state_alloc(&bodies, 2, &err) == SIM_OK);
    bodies.pos[0] = (sim_vec4d){-1.0, 1.0, 0.0, 0.25};
    bodies.pos[1] = (sim_vec4d){1.0, 2.0, 0.0, 0.25};
    bodies.vel[0] = (sim_vec4d){0.0, 0.0, 0.0, 1.0};
    bodies.vel[1] = (sim_vec4d){0.0, 0.0, 0.0, 2.0};
    o.bodies = &bodies;
    sim_session *s = NULL;
    sim_status st = sim_session_open(&s, &o, &err);
    ENSURE_MSG(st == SIM_OK, "%s", err.message);
    if (st == SIM_OK) {
        const sim_run_info *info = sim_session_info(s);
        ENSURE(info->n == 2 && strcmp(info->scene, "two balls") == 0);
        ENSURE(info->params.gravity.y == -9.81 && info->params.box_half == 5.0);
        bodies.pos[0].y = 3.0; /* copied at open: the session does not see this */
        sim_frame_timing t;
        ENSURE(sim_session_set_steps_per_frame(s, 100, &err) == SIM_OK);
        ENSURE(sim_session_frame(s, &t, &err) == SIM_OK);
        sim_state now = {0};
        ENSURE(sim_state_alloc(&now, 2, &err) == SIM_OK);
        ENSURE(sim_session_read_state(s, &now, NULL, &err) == SIM_OK);
        ENSURE(now.pos[0].y < 1.0 && now.pos[1].y < 2.0 && now.vel[1].w == 2.0);
        ENSURE(sim_session_reset(s, &err) == SIM_OK);
        ENSURE(sim_session_read_state(s, &now, NULL, &err) == SIM_OK);
        ENSURE(now.pos[0].y == 1.0 && now.pos[1].y == 2.0);
        sim_params p = sim_session_info(s)->params;
        p.gravity.y = 0.0;
        ENSURE(sim_session_set_params(s, &p, &err) == SIM_OK);
        ENSURE(sim_session_frame(s, &t, &err) == SIM_OK);
        ENSURE(sim_session_read_state(s, &now, NULL, &err) == SIM_OK);
        ENSURE(now.pos[0].y == 1.0 && now.pos[1].y == 2.0); /* at rest, no gravity */
        p.restitution = 0.0;
        ENSURE(sim_session_set_params(s, &p, &err) == SIM_BAD_ARGUMENT);
        ENSURE(sim_session_info(s)->params.restitution > 0.0);
        sim_state_free(&now);
    }
    sim_session_close(s);
    snprintf(o.scene, sizeof o.scene, "gas");
    s = NULL;
    ENSURE(sim_session_open(&s, &o, &err) == SIM_BAD_ARGUMENT && s == NULL);
    ENSURE(strstr(err.message, "name of their own") != NULL);
    sim_state_free(&bodies);
}

static const ensure_test tests[] = {
    {"parse_numbers", test_parse_numbers},
    {"options", test_options},
    {"stats", test_stats},
    {"session_log_and_summary", test_session_log_and_summary},
    {"mean_height_pile", test_mean_height_pile},
    {"map_compare", test_map_compare},
    {"autotune_cache_date", test_autotune_cache_date},
    {"unwritable_log", test_unwritable_log},
    {"triplets_auto", test_triplets_auto},
    {"session_from_arrays", test_session_from_arrays},
};

ENSURE_MAIN(tests)
