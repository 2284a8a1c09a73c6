/* SPDX-License-Identifier: MIT
 * nbsim — the map inspector `nbsim maps`, called in-process: tables, dumps, pictures, and one
 * line on stderr with exit code 2 (and no file) for every kind of bad input. */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, mkdtemp, fileno */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "ensure.h"
#include "map_palette.h"
#include "nbsim/map_cover.h"

static char out_text[1 << 16], err_text[1 << 12];

/* Reads a whole small file into buf (NUL-terminated). */
static void slurp(FILE *f, char *buf, size_t size) {
    rewind(f);
    size_t len = fread(buf, 1, size - 1u, f);
    buf[len] = '\0';
}

/* Runs `nbsim maps ARGS` with stdout and stderr captured into out_text / err_text. */
static int run_maps(const char *args) {
    char copy[512], *argv[32];
    int argc = 0;
    snprintf(copy, sizeof copy, "maps %s", args);
    for (char *tok = strtok(copy, " "); tok != NULL && argc < 31; tok = strtok(NULL, " ")) {
        argv[argc++] = tok;
    }
    argv[argc] = NULL;
    FILE *out = tmpfile(), *err = tmpfile();
    if (out == NULL || err == NULL) {
        ENSURE(!"tmpfile");
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    int rc = app_maps_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    slurp(out, out_text, sizeof out_text);
    slurp(err, err_text, sizeof err_text);
    fclose(out);
    fclose(err);
    return rc;
}

static int count(const char *text, const char *what) {
    int c = 0;
    for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what)) {
        ++c;
    }
    return c;
}

/* Exit code 2 and exactly one stderr line that starts "nbsim maps: " and contains `names`. */
static void ensure_usage_error(const char *args, const char *names) {
    int rc = run_maps(args);
    ENSURE_MSG(rc == 2, "'%s' gave %d", args, rc);
    ENSURE_MSG(strncmp(err_text, "nbsim maps: ", 12) == 0 && count(err_text, "\n") == 1,
               "'%s' stderr: %s", args, err_text);
    ENSURE_MSG(strstr(err_text, names) != NULL, "'%s' stderr lacks '%s': %s", args, names,
               err_text);
}

static void test_help(void) {
    ENSURE(run_maps("--help") == 0);
    ENSURE(strstr(out_text, "usage: nbsim maps") != NULL && err_text[0] == '\0');
    ENSURE(strstr(out_text, "ltm-newton") != NULL && strstr(out_text, "tetra-float") != NULL);
    ENSURE(run_maps("-h") == 0);
}

/* The two sizes the inspector must check in full, quickly. */
static void test_tables(void) {
    ENSURE(run_maps("--tiles 1000") == 0);
    ENSURE_MSG(count(out_text, "exact: yes (full") == 9, "%s", out_text);
    ENSURE(strstr(out_text, "T2(n) = 500500") != NULL);
    ENSURE(run_maps("--dim 3 --tiles 100") == 0);
    ENSURE_MSG(count(out_text, "exact: yes (full") == 4, "%s", out_text);
    ENSURE(strstr(out_text, "T3(n) = 171700") != NULL);
    /* A float variant past its first failing n: the first wrong block is named. */
    ENSURE(run_maps("--map ltm-rsqrt --tiles 2100") == 0);
    ENSURE_MSG(strstr(out_text, "exact: NO") != NULL &&
                   strstr(out_text, "first wrong block") != NULL,
               "%s", out_text);
    ENSURE(strstr(out_text, "launch 0: grid") != NULL);
    /* Very large plans: a sampled check, and the table says so. */
    ENSURE(run_maps("--map utm --tiles 65535") == 0);
    ENSURE_MSG(strstr(out_text, "exact: yes (sampled") != NULL, "%s", out_text);
}

static void test_dump(void) {
    ENSURE(run_maps("--map ltm --tiles 3 --dump 0:5") == 0);
    ENSURE_MSG(strcmp(out_text, "0 0 0\n1 1 0\n2 1 1\n3 2 0\n4 2 1\n5 2 2\n") == 0, "%s", out_text);
    ENSURE(run_maps("--map bb --tiles 2 --dump=0:3") == 0);
    ENSURE_MSG(strcmp(out_text, "0 0 0\n1 none\n2 1 0\n3 1 1\n") == 0, "%s", out_text);
    ENSURE(run_maps("--dim 3 --map=tetra --tiles 2 --dump 1:3") == 0);
    ENSURE_MSG(strcmp(out_text, "1 1 0 0\n2 1 1 0\n3 1 1 1\n") == 0, "%s", out_text);
    ENSURE(run_maps("--dim 3 --map bb --tiles 2 --dump 3:5") == 0);
    ENSURE_MSG(strcmp(out_text, "3 none\n4 1 0 0\n5 none\n") == 0, "%s", out_text);
}

static void test_bad_input(void) {
    ensure_usage_error("--tiles 0", "'0'");
    ensure_usage_error("--tiles -3", "'-3'");
    ensure_usage_error("--tiles many", "'many'");
    ensure_usage_error("--tiles 12.5", "'12.5'");
    ensure_usage_error("--tiles 65536", "65535");
    ensure_usage_error("--dim 3 --tiles 4097", "4096");
    ensure_usage_error("--dim 4 --tiles 5", "'4'");
    ensure_usage_error("--map nope --tiles 5", "'nope'");
    ensure_usage_error("--map nope --tiles 5", "ltm-newton");
    ensure_usage_error("--dim 3 --map rb --tiles 5", "tetra-float");
    ensure_usage_error("", "--tiles");
    ensure_usage_error("--tiles", "--tiles");
    ensure_usage_error("--tiles 5 --frobnicate", "--frobnicate");
    ensure_usage_error("--map ltm --tiles 5 --dump 4:2", "'4:2'");
    ensure_usage_error("--map ltm --tiles 5 --dump 3", "'3'");
    ensure_usage_error("--map ltm --tiles 5 --dump a:b", "'a:b'");
    ensure_usage_error("--map ltm --tiles 5 --dump 0:999", "999");
    ensure_usage_error("--tiles 5 --dump 0:1", "one map");
    ensure_usage_error("--map ltm --tiles 2000 --png x.png", "1024");
}

/* No file of the directory's has this infix: a temporary left behind. */
static int leftovers(const char *dir) {
    int found = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        found += strstr(e->d_name, ".tmp-") != NULL;
    }
    if (d != NULL) {
        closedir(d);
    }
    return found;
}

static void test_png(void) {
    char dir[] = "/tmp/nbsim-test-maps-XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char path[256], args[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/rm.png", dir);
    snprintf(args, sizeof args, "--map rm --tiles 13 --png %s", path);
    ENSURE(run_maps(args) == 0);
    ENSURE(stat(path, &st) == 0 && st.st_size > 1000 && st.st_size < 200 * 1024);
    FILE *f = fopen(path, "rb");
    unsigned char sig[8] = {0};
    ENSURE(f != NULL && fread(sig, 1, 8, f) == 8);
    if (f != NULL) {
        fclose(f);
    }
    ENSURE(memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0);
    snprintf(args, sizeof args, "--dim 3 --map tetra --tiles 6 --png %s", path);
    ENSURE(run_maps(args) == 0); /* replaces the old picture */

    /* Unwritable: a missing directory, and a directory in the way. Nothing may be left. */
    snprintf(args, sizeof args, "--map ltm --tiles 8 --png %s/missing/x.png", dir);
    ensure_usage_error(args, "missing/x.png");
    snprintf(path, sizeof path, "%s/sub", dir);
    ENSURE(mkdir(path, 0755) == 0);
    snprintf(args, sizeof args, "--map ltm --tiles 8 --png %s", path);
    ensure_usage_error(args, "sub");
    ENSURE(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    ENSURE(leftovers(dir) == 0);

    rmdir(path);
    snprintf(path, sizeof path, "%s/rm.png", dir);
    unlink(path);

    /* A write that fails (a file size limit standing in for a full disk) is a failure of the run
     * (1), not bad input (2), and its message gives the cause; the old picture stays. */
    snprintf(path, sizeof path, "%s/big.png", dir);
    snprintf(args, sizeof args, "--map ltm --tiles 64 --png %s", path);
    const pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {2000, 2000};
        setrlimit(RLIMIT_FSIZE, &lim);
        const int rc = run_maps(args);
        _exit(rc == 1 && strstr(err_text, strerror(EFBIG)) != NULL &&
                      strchr(err_text, '\n') == strrchr(err_text, '\n')
                  ? 0
                  : 10 + rc);
    }
    int status = 1;
    ENSURE(waitpid(child, &status, 0) == child && WIFEXITED(status));
    ENSURE_MSG(WEXITSTATUS(status) == 0, "--png on a full disk: child exit %d (10 + nbsim's)",
               WEXITSTATUS(status));
    ENSURE(stat(path, &st) != 0 && leftovers(dir) == 0);
    ENSURE(rmdir(dir) == 0); /* empty: nothing else was written */
}

/* The cover as the viewer paints it (render/map_palette.c). */
static uint8_t painted[SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE * 4];

static sim_status build(sim_map_cover *c, const sim_map_plan *plan, sim_error *err) {
    const sim_status st = sim_map_cover_build(c, plan, err);
    render_map_cover_rgba(c, painted);
    return st;
}

static sim_status build_grouped(sim_map_cover *c, const sim_map_plan *plan, uint32_t tiles,
                                uint32_t span, sim_error *err) {
    const sim_status st = sim_map_cover_build_grouped(c, plan, tiles, span, err);
    render_map_cover_rgba(c, painted);
    return st;
}

/* The listed tile pairs lit over the cover, as the viewer paints them. */
static uint32_t light(const sim_map_cover *c, const sim_tile2 *pairs, uint64_t count,
                      uint8_t *rgba) {
    static double share[SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE];
    const uint32_t lit = sim_map_cover_light(c, pairs, count, share);
    render_map_lit_rgba(c, share, rgba);
    return lit;
}

static int lum(const sim_map_cover *c, uint32_t row, uint32_t col) {
    const uint8_t *px = &painted[(row * c->side + col) * 4u];
    return 299 * px[0] + 587 * px[1] + 114 * px[2];
}

static uint8_t alpha(const sim_map_cover *c, uint32_t row, uint32_t col) {
    return painted[(row * c->side + col) * 4u + 3u];
}

/* The viewer's map inset: every tile pair drawn, waste only for bb, large n downsampled with
 * the walk's order visible, lit cells for listed tile pairs. */
static void test_cover(void) {
    static sim_map_cover c;
    sim_map_plan plan;
    sim_error err;
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_LTM, 8, &plan, &err) == SIM_OK);
    ENSURE(build(&c, &plan, &err) == SIM_OK);
    ENSURE(c.exact && c.per_block && c.side == 8 && c.per_cell == 1 && !c.waste);
    int covered = 1, clear = 1;
    for (uint32_t r = 0; r < 8; ++r) {
        for (uint32_t q = 0; q < 8; ++q) {
            covered &= q > r || alpha(&c, r, q) == 255;
            clear &= q <= r || alpha(&c, r, q) == 0;
        }
    }
    ENSURE(covered && clear);
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_BB, 8, &plan, &err) == SIM_OK);
    ENSURE(build(&c, &plan, &err) == SIM_OK);
    ENSURE(c.waste && alpha(&c, 0, 7) == 255 && alpha(&c, 7, 0) == 255);

    /* n = 4096: sampled, 128 x 128 cells of 32 x 32 tile pairs; ltm walks rows top down, so the
     * first rows are dark and the last light. */
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_LTM, 4096, &plan, &err) == SIM_OK);
    ENSURE(build(&c, &plan, &err) == SIM_OK);
    ENSURE(!c.exact && c.side == 128 && c.per_cell == 32);
    uint32_t lower = 0, drawn = 0;
    for (uint32_t r = 0; r < 128; ++r) {
        for (uint32_t q = 0; q <= r; ++q) {
            ++lower;
            drawn += alpha(&c, r, q) == 255;
        }
    }
    ENSURE_MSG(drawn == lower, "%u of %u cells drawn", drawn, lower);
    ENSURE(lum(&c, 2, 0) < lum(&c, 127, 0));

    /* rec: one launch per level, so more than one hue. */
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_REC, 64, &plan, &err) == SIM_OK);
    ENSURE(build(&c, &plan, &err) == SIM_OK);
    ENSURE(c.launches > 2 && c.exact && !c.per_block);

    static uint8_t lit[SIM_MAP_COVER_SIDE * SIM_MAP_COVER_SIDE * 4];
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_RM, 4096, &plan, &err) == SIM_OK);
    ENSURE(build(&c, &plan, &err) == SIM_OK);
    const sim_tile2 pairs[4] = {{0, 0}, {1, 0}, {4095, 0}, {4095, 4095}};
    ENSURE(light(&c, pairs, 4, lit) == 3);
    ENSURE(lit[3] > 0 && lit[(127 * 128 + 0) * 4 + 3] > 0 && lit[(127 * 128 + 127) * 4 + 3] > 0);
    ENSURE(lit[(64 * 128 + 3) * 4 + 3] == 0);

    /* A culling pass: ltm over 8 x 8 groups of 16 x 16 tiles, drawn over 120 tiles: every tile
     * pair covered, the groups' blocks in order (top rows dark, bottom rows light). */
    ENSURE(sim_pair_map_plan(SIM_PAIR_MAP_LTM, 8, &plan, &err) == SIM_OK);
    ENSURE(build_grouped(&c, &plan, 120, 16, &err) == SIM_OK);
    ENSURE(c.side == 120 && c.per_cell == 1 && c.span == 16 && c.exact);
    drawn = lower = 0;
    for (uint32_t r = 0; r < 120; ++r) {
        for (uint32_t q = 0; q <= r; ++q) {
            ++lower;
            drawn += alpha(&c, r, q) == 255;
        }
    }
    ENSURE_MSG(drawn == lower, "%u of %u cells drawn", drawn, lower);
    ENSURE(alpha(&c, 3, 10) == 0 && lum(&c, 0, 0) < lum(&c, 119, 0));

    /* 3-D: the largest layer of the tetrahedron, every (J, K) drawn. */
    ENSURE(sim_triplet_map_plan(SIM_TRIPLET_MAP_TETRA, 8, &plan, &err) == SIM_OK);
    ENSURE(build(&c, &plan, &err) == SIM_OK);
    ENSURE(c.dim == 3 && c.layer == 7 && c.side == 8 && alpha(&c, 7, 7) == 255 &&
           alpha(&c, 3, 5) == 0);
}

static const ensure_test tests[] = {
    {"maps_cli_help", test_help}, {"maps_cli_tables", test_tables},
    {"maps_cli_dump", test_dump}, {"maps_cli_bad_input", test_bad_input},
    {"maps_cli_png", test_png},   {"maps_cover", test_cover},
};

ENSURE_MAIN(tests)
