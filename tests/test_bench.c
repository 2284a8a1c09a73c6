/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` on the CPU: statistics, counts, lists, slugs, the CSV writer, the bench
 * command line, and the autotune cache (no GPU needed). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbsim/autotune.h"
#include "bench_csv.h"
#include "bench_options.h"
#include "bench_stats.h"
#include "bench_suites.h"
#include "ensure.h"
#include "parse.h"

static void test_summarize(void) {
    const double odd[] = {5.0, 1.0, 3.0, 9.0, 2.0};
    sim_stats s = sim_stats_of(odd, 5);
    ENSURE(s.median == 3.0 && s.min == 1.0 && s.max == 9.0);
    ENSURE(odd[0] == 5.0 && odd[1] == 1.0); /* input untouched */
    const double even[] = {4.0, 1.0, 2.0, 3.0};
    s = sim_stats_of(even, 4);
    ENSURE(s.median == 2.5 && s.min == 1.0 && s.max == 4.0);
    const double one = 7.0;
    s = sim_stats_of(&one, 1);
    ENSURE(s.median == 7.0 && s.min == 7.0 && s.max == 7.0);
    s = sim_stats_of(NULL, 0);
    ENSURE(s.median == 0.0 && s.min == 0.0 && s.max == 0.0);
    ENSURE_NEAR(app_bench_improvement(2.0, 1.0), 2.0, 0.0);
    ENSURE(app_bench_improvement(0.0, 1.0) == 0.0);
    ENSURE(app_bench_improvement(1.0, 0.0) == 0.0);
}

static void test_choose(void) {
    ENSURE(sim_choose(0, 2) == 0 && sim_choose(1, 2) == 0);
    ENSURE(sim_choose(2, 2) == 1 && sim_choose(3, 3) == 1);
    ENSURE(sim_choose(1024, 2) == 523776ull);
    ENSURE(sim_choose(65536, 2) == 2147450880ull); /* does not fit 31 bits */
    ENSURE(sim_choose(4096, 3) == 11444858880ull);
    ENSURE(sim_choose(1000000, 3) == 166666166667000000ull);
    ENSURE(sim_choose(UINT64_MAX / 2, 3) == UINT64_MAX); /* saturates */
    ENSURE(sim_choose(10, 4) == 0);
}

static void test_lists(void) {
    uint32_t v[4];
    ENSURE(app_bench_parse_list("1024", 2, 100000, v, 4) == 1 && v[0] == 1024);
    ENSURE(app_bench_parse_list("8,16,32", 2, 64, v, 4) == 3 && v[2] == 32);
    ENSURE(app_bench_parse_list("", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list(",8", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("8,", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("8,,16", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("-8", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list(" 8", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("8x", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("1", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("65", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("99999999999999999999999", 2, 64, v, 4) < 0);
    ENSURE(app_bench_parse_list("2,3,4,5,6", 2, 64, v, 4) < 0); /* more than cap */
    uint32_t s[] = {512, 64, 512, 8, 64};
    ENSURE(app_bench_sort_sizes(s, 5) == 3 && s[0] == 8 && s[1] == 64 && s[2] == 512);
}

static void test_slug(void) {
    char out[64];
    sim_device_slug("NVIDIA H100 80GB HBM3", out, sizeof out);
    ENSURE(strcmp(out, "nvidia-h100-80gb-hbm3") == 0);
    sim_device_slug("  NVIDIA  H200 (SXM)-- ", out, sizeof out);
    ENSURE(strcmp(out, "nvidia-h200-sxm") == 0);
    sim_device_slug("", out, sizeof out);
    ENSURE(strcmp(out, "gpu") == 0);
    sim_device_slug("../../etc", out, sizeof out);
    ENSURE(strcmp(out, "etc") == 0); /* never a path */
    sim_device_slug("abcdefgh", out, 4);
    ENSURE(strcmp(out, "abc") == 0);
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    static char buf[4096];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void make_temp_dir(char *dir, size_t cap) {
    snprintf(dir, cap, "/tmp/nbsim_test_bench_XXXXXX");
    ENSURE(mkdtemp(dir) != NULL);
}

static void test_csv(void) {
    char dir[64], path[128], tmp[SIM_PATH_MAX];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out.csv", dir);
    const char *const header[] = {"name", "n", "ms", "note"};
    app_csv c;
    sim_error err = {0};
    ENSURE(app_csv_open(&c, path, header, 4, &err) == SIM_OK);
    app_csv_str(&c, "ltm");
    app_csv_u64(&c, 18446744073709551615ull);
    app_csv_num(&c, 0.125);
    app_csv_str(&c, "a,b \"q\"");
    app_csv_end_row(&c);
    app_csv_str(&c, "bb");
    app_csv_int(&c, -3);
    app_csv_num(&c, INFINITY); /* non-finite: empty field */
    app_csv_str(&c, "");
    app_csv_end_row(&c);
    ENSURE(access(path, F_OK) != 0); /* nothing at the final path until complete */
    snprintf(tmp, sizeof tmp, "%s", c.out.temp);
    ENSURE(access(tmp, F_OK) == 0);
    ENSURE(app_csv_close(&c, &err) == SIM_OK);
    ENSURE(access(tmp, F_OK) != 0);
    const char *text = read_all(path);
    ENSURE(text != NULL && strcmp(text, "name,n,ms,note\n"
                                        "ltm,18446744073709551615,0.125,\"a,b \"\"q\"\"\"\n"
                                        "bb,-3,,\n") == 0);
    /* An aborted file leaves the earlier complete one in place. */
    ENSURE(app_csv_open(&c, path, header, 4, &err) == SIM_OK);
    snprintf(tmp, sizeof tmp, "%s", c.out.temp);
    app_csv_abort(&c);
    ENSURE(access(tmp, F_OK) != 0);
    text = read_all(path);
    ENSURE(text != NULL && strncmp(text, "name,n,ms,note\nltm,", 19) == 0);
    /* An unwritable place fails with a message naming it. */
    ENSURE(app_csv_open(&c, "/nonexistent-dir/x.csv", header, 4, &err) == SIM_IO);
    ENSURE(strstr(err.message, "/nonexistent-dir/x.csv") != NULL);
    remove(path);
    rmdir(dir);
}

static int parse(app_bench_options *o, int argc, const char **argv) {
    /* Bad options print their one line to stderr; keep the test output readable. */
    fflush(stderr);
    const int saved = dup(2);
    FILE *null = fopen("/dev/null", "w");
    if (null != NULL) {
        dup2(fileno(null), 2);
        fclose(null);
    }
    const int r = app_bench_options_parse(argc, (char **)argv, o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return r;
}

static void test_options(void) {
    app_bench_options o;
    const char *none[] = {"bench"};
    ENSURE(parse(&o, 1, none) == 0);
    ENSURE(o.suites == (APP_BENCH_MAPS | APP_BENCH_PAIRS | APP_BENCH_TRIPLETS));
    ENSURE(o.repeats >= 10 && o.n_count == 0 && o.tile_count == 0 && o.plot == 1);
    ENSURE(o.evals == (APP_BENCH_EVAL_THREAD | APP_BENCH_EVAL_BLOCK));
    ENSURE(o.pair_maps & (1u << SIM_PAIR_FULL) && !o.maps_given);
    const char *a[] = {"bench",       "maps",      "--quick", "--n",    "1024,2048",
                       "--tile=8,16", "--repeats", "12",      "--maps", "ltm,tetra",
                       "--kernels",   "map,edm",   "--dim",   "2",      "--out",
                       "/tmp/x",      "--no-plot", "--eval",  "block"};
    ENSURE(parse(&o, 19, a) == 0);
    ENSURE(o.evals == APP_BENCH_EVAL_BLOCK);
    ENSURE(o.suites == APP_BENCH_MAPS && o.quick == 1 && o.plot == 0);
    ENSURE(o.n_count == 2 && o.n[1] == 2048 && o.tile_count == 2 && o.tile[0] == 8);
    ENSURE(o.repeats == 12 && strcmp(o.out, "/tmp/x") == 0 && o.dims == (1u << 2));
    ENSURE(o.maps_given && o.pair_maps == ((1u << SIM_PAIR_MAP_BB) | (1u << SIM_PAIR_MAP_LTM)));
    ENSURE(o.triplet_maps == ((1u << SIM_TRIPLET_MAP_BB) | (1u << SIM_TRIPLET_MAP_TETRA)));
    ENSURE(o.kernels ==
           ((1u << APP_BENCH_K_MAP) | (1u << APP_BENCH_K_EDM1) | (1u << APP_BENCH_K_EDM2) |
            (1u << APP_BENCH_K_EDM3) | (1u << APP_BENCH_K_EDM4)));
    const char *full[] = {"bench", "pairs", "--maps", "full"};
    ENSURE(parse(&o, 4, full) == 0);
    ENSURE(o.pair_maps == ((1u << SIM_PAIR_MAP_BB) | (1u << SIM_PAIR_FULL)));
    ENSURE(o.triplet_maps == 0);
    ENSURE(o.cull == (APP_BENCH_CULL_OFF | APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO));
    const char *cull_on[] = {"bench", "pairs", "--cull", "on"};
    ENSURE(parse(&o, 4, cull_on) == 0);
    ENSURE(o.cull == (APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO));
    const char *cull_some[] = {"bench", "pairs", "--cull=off,2"};
    ENSURE(parse(&o, 3, cull_some) == 0);
    ENSURE(o.cull == (APP_BENCH_CULL_OFF | APP_BENCH_CULL_TWO));
    ENSURE(o.atm_cutoff == 0.0);
    const char *cutoff[] = {"bench", "triplets", "--atm-cutoff", "3.0"};
    ENSURE(parse(&o, 4, cutoff) == 0 && o.atm_cutoff == 3.0);

    const char *bad[][3] = {
        {"bench", "--bogus", NULL},     {"bench", "--n", "abc"},
        {"bench", "--n", "1"},          {"bench", "--n", "8,,16"},
        {"bench", "--tile", "48"},      {"bench", "--tile", "0"},
        {"bench", "--repeats", "0"},    {"bench", "--maps", "nope"},
        {"bench", "--maps", ""},        {"bench", "--kernels", "fft"},
        {"bench", "--dim", "4"},        {"bench", "frobnicate", NULL},
        {"bench", "--warmup", "-1"},    {"bench", "--out", ""},
        {"bench", "--quick=1", NULL},   {"bench", "--eval", "warp"},
        {"bench", "--eval", "block,"},  {"bench", "--cull", "3"},
        {"bench", "--cull", "on,"},     {"bench", "--atm-cutoff", "0"},
        {"bench", "--atm-cutoff", "x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const int argc = bad[i][2] ? 3 : 2;
        ENSURE_MSG(parse(&o, argc, bad[i]) == 2, "%s %s", bad[i][1], bad[i][2] ? bad[i][2] : "");
    }
    const char *missing[] = {"bench", "--n"};
    ENSURE(parse(&o, 2, missing) == 2);
}

static void test_autotune_cache(void) {
    char dir[64], path[160];
    make_temp_dir(dir, sizeof dir);
    setenv("XDG_CACHE_HOME", dir, 1);
    sim_autotune_cache_path(path, sizeof path);
    char want[160];
    snprintf(want, sizeof want, "%s/nbsim/autotune.txt", dir);
    ENSURE(strcmp(path, want) == 0);

    sim_autotune_entry e, found;
    memset(&e, 0, sizeof e);
    snprintf(e.gpu, sizeof e.gpu, "nvidia-h100-80gb-hbm3");
    e.bucket = 14;
    e.what = SIM_AUTOTUNE_PAIR | SIM_AUTOTUNE_TILE;
    e.tile = 64;
    snprintf(e.pair, sizeof e.pair, "rb");
    snprintf(e.triplet, sizeof e.triplet, "-");
    e.pair_ms = 0.5;
    ENSURE(sim_autotune_cache_find(path, &e, &found) == 0); /* no file yet */
    sim_error err = {0};
    ENSURE(sim_autotune_cache_store(path, &e, &err) == SIM_OK); /* creates nbsim/ */
    ENSURE(sim_autotune_cache_find(path, &e, &found) == 1);
    ENSURE(found.tile == 64 && strcmp(found.pair, "rb") == 0 && found.pair_ms == 0.5);

    sim_autotune_entry other = e;
    other.bucket = 15;
    snprintf(other.pair, sizeof other.pair, "ltm");
    ENSURE(sim_autotune_cache_store(path, &other, &err) == SIM_OK);
    e.tile = 128; /* same key: replaced, not duplicated */
    ENSURE(sim_autotune_cache_store(path, &e, &err) == SIM_OK);
    ENSURE(sim_autotune_cache_find(path, &e, &found) == 1 && found.tile == 128);
    ENSURE(sim_autotune_cache_find(path, &other, &found) == 1 && strcmp(found.pair, "ltm") == 0);
    int lines = 0;
    for (const char *p = read_all(path); p && *p; ++p) {
        lines += *p == '\n';
    }
    ENSURE(lines == 2);
    sim_autotune_entry key = e;
    key.tile_in = 64; /* a fixed tile is another key */
    ENSURE(sim_autotune_cache_find(path, &key, &found) == 0);

    /* Without CUDA the calibration keeps the configuration and says why. */
    sim_backend_config cfg = sim_backend_config_default();
    cfg.kind = SIM_BACKEND_CPU;
    sim_params params = sim_params_default();
    sim_state state = {0};
    ENSURE(sim_state_alloc(&state, 8, &err) == SIM_OK);
    char report[512];
    const sim_pair_map before = cfg.pair_map;
    ENSURE(sim_autotune(&cfg, SIM_AUTOTUNE_PAIR, &params, &state, report, sizeof report, &err) ==
           SIM_OK);
    ENSURE(cfg.pair_map == (sim_pair_choice)before && strstr(report, "CUDA") != NULL);
    sim_state_free(&state);

    remove(path);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/nbsim", dir);
    rmdir(sub);
    rmdir(dir);
    unsetenv("XDG_CACHE_HOME");
}

static const ensure_test tests[] = {
    {"bench_summarize", test_summarize},
    {"bench_choose", test_choose},
    {"bench_lists", test_lists},
    {"bench_slug", test_slug},
    {"bench_csv", test_csv},
    {"bench_options", test_options},
    {"bench_autotune_cache", test_autotune_cache},
};

ENSURE_MAIN(tests)
