/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim maps`: the map inspector. Prints each map's plan (launches, blocks launched,
 * useful, wasted) with an exactness check that runs every block, dumps block -> tile, and draws
 * maps as PNG. Bad input: one line on stderr, exit code 2, nothing written. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "map_png.h"
#include "nbsim/maps_check.h"
#include "nbsim/output_file.h"
#include "parse.h"

typedef struct {
    int dim;           /* 2 or 3 */
    const char *map;   /* a map name or "all" */
    const char *tiles; /* --tiles text, checked once the dimension is known */
    const char *dump;  /* --dump FROM:TO text, or NULL */
    const char *png;   /* --png FILE, or NULL */
    int full;          /* --full: check every block however many */
} maps_options;

static void usage(FILE *out) {
    fprintf(out,
            "usage: nbsim maps --tiles N [--dim 2|3] [--map NAME|all] [--dump FROM:TO]\n"
            "                  [--png FILE] [--full]\n"
            "\n"
            "Inspects the thread maps that place CUDA blocks on tile pairs (2-D) or tile\n"
            "triples (3-D): for each map, the launches of its plan, the blocks launched, the\n"
            "useful ones (T2(n) = n(n+1)/2 pairs, T3(n) = n(n+1)(n+2)/6 triples), the wasted\n"
            "ones, and a check that every tile is produced exactly once and nothing else.\n"
            "\n"
            "  --tiles N        tiles per side: 1..%u (2-D), 1..%u (3-D)\n"
            "  --dim 2|3        2: pairs (I, J), 0 <= J <= I < n (default); 3: triples\n"
            "                   (I, J, K), 0 <= K <= J <= I < n\n"
            "  --map NAME|all   the map (default all)\n"
            "                   2-D:",
            SIM_MAX_TILES_2D, SIM_MAX_TILES_3D);
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        fprintf(out, " %s", sim_pair_map_name((sim_pair_map)m));
    }
    fprintf(out, "\n                   3-D:");
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        fprintf(out, " %s", sim_triplet_map_name((sim_triplet_map)m));
    }
    fprintf(out,
            "\n"
            "                   ltm-sqrt, ltm-rsqrt, ltm-newton and tetra-float are the papers'\n"
            "                   float versions, kept for study: they go wrong for large n\n"
            "  --dump FROM:TO   one line per block FROM..TO (numbered launch by launch, bx\n"
            "                   fastest, then by, bz): 'index I J' ('index I J K'), or\n"
            "                   'index none' for a wasted block; needs one --map\n"
            "  --png FILE       draw the map: tiles coloured by the block that owns them, and\n"
            "                   the launch grids (n <= %u in 2-D, %u in 3-D); needs one --map\n"
            "  --full           check every block even above %" PRIu64 " blocks (slow; else\n"
            "                   such plans are checked on a sample, and the table says so)\n"
            "  -h, --help       this text\n"
            "\n"
            "examples:\n"
            "  nbsim maps --tiles 1000                      every 2-D map at n = 1000\n"
            "  nbsim maps --dim 3 --map rm --tiles 100      the 3-D recursive map\n"
            "  nbsim maps --map ltm --tiles 5 --dump 0:20   which tile each block owns\n"
            "  nbsim maps --map rec --tiles 16 --png rec.png\n",
            APP_MAP_PNG_MAX_2D, APP_MAP_PNG_MAX_3D, (uint64_t)SIM_MAP_CHECK_FULL_DEFAULT);
}

/* One line on stderr naming the problem; returns the usage exit code. */
static int usage_error(const char *fmt, ...) SIM_PRINTF(1, 2);
static int usage_error(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("nbsim maps: ", stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    return APP_EXIT_USAGE;
}

/* A whole decimal number without sign or spaces; 0 when text is anything else or overflows. */
static int parse_u64(const char *text, uint64_t *out) {
    if (text == NULL || *text < '0' || *text > '9') {
        return 0;
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') {
        return 0;
    }
    *out = v;
    return 1;
}

/* "--opt value" or "--opt=value": returns the value (advancing *i), or NULL for another option. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *missing) {
    size_t len = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, len) != 0) {
        return NULL;
    }
    if (arg[len] == '=') {
        return arg + len + 1;
    }
    if (arg[len] != '\0') {
        return NULL;
    }
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

/* 0: parsed; 1: help printed; APP_EXIT_USAGE: error printed. */
static int parse_args(int argc, char **argv, maps_options *o) {
    static const char *const names[] = {"--dim", "--map", "--tiles", "--dump", "--png"};
    memset(o, 0, sizeof *o);
    o->map = "all";
    const char *dim = "2";
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(argv[i], "--full") == 0) {
            o->full = 1;
            continue;
        }
        const char **slot[] = {&dim, &o->map, &o->tiles, &o->dump, &o->png};
        int matched = 0;
        for (int k = 0; k < 5 && !matched; ++k) {
            int missing = 0;
            const char *v = option_value(argc, argv, &i, names[k], &missing);
            if (missing) {
                return usage_error("%s needs a value (see nbsim maps --help)", names[k]);
            }
            if (v != NULL) {
                *slot[k] = v;
                matched = 1;
            }
        }
        if (!matched) {
            return usage_error("unknown argument '%s' (see nbsim maps --help)", argv[i]);
        }
    }
    if (strcmp(dim, "2") != 0 && strcmp(dim, "3") != 0) {
        return usage_error("--dim '%s': must be 2 (tile pairs) or 3 (tile triples)", dim);
    }
    o->dim = dim[0] - '0';
    return 0;
}

static int map_count(int dim) {
    return dim == 2 ? SIM_PAIR_MAP_COUNT : SIM_TRIPLET_MAP_COUNT;
}

static const char *map_name(int dim, int m) {
    return dim == 2 ? sim_pair_map_name((sim_pair_map)m) : sim_triplet_map_name((sim_triplet_map)m);
}

static const char *map_label(int dim, int m) {
    return dim == 2 ? sim_pair_map_label((sim_pair_map)m)
                    : sim_triplet_map_label((sim_triplet_map)m);
}

static int map_is_paper(int dim, int m) {
    return dim == 2 ? sim_pair_map_is_paper_float((sim_pair_map)m)
                    : sim_triplet_map_is_paper_float((sim_triplet_map)m);
}

/* -1 for "all"; -2 (error printed) for an unknown name. */
static int resolve_map(const maps_options *o) {
    if (strcmp(o->map, "all") == 0) {
        return -1;
    }
    int m = o->dim == 2 ? sim_pair_map_from_name(o->map) : sim_triplet_map_from_name(o->map);
    if (m >= 0) {
        return m;
    }
    char valid[256] = "";
    for (int k = 0; k < map_count(o->dim); ++k) {
        strncat(valid, map_name(o->dim, k), sizeof valid - strlen(valid) - 1u);
        strncat(valid, ", ", sizeof valid - strlen(valid) - 1u);
    }
    usage_error("unknown %d-D map '%s' (valid: %sall)", o->dim, o->map, valid);
    return -2;
}

/* The tile count: a whole number >= 1 (the plan checks the upper limit and names it). */
static int resolve_tiles(const maps_options *o, uint32_t *n) {
    uint64_t v = 0;
    if (o->tiles == NULL) {
        return usage_error("--tiles N is required (tiles per side; see nbsim maps --help)");
    }
    uint32_t max = o->dim == 2 ? SIM_MAX_TILES_2D : SIM_MAX_TILES_3D;
    if (!parse_u64(o->tiles, &v) || v == 0u) {
        return usage_error("--tiles '%s': must be a whole number from 1 to %u", o->tiles, max);
    }
    if (v > max) {
        return usage_error("--tiles %s: n above the %d-D limit of %u tiles per side", o->tiles,
                           o->dim, max);
    }
    *n = (uint32_t)v;
    return 0;
}

static sim_status make_plan(int dim, int m, uint32_t n, sim_map_plan *plan, sim_error *err) {
    return dim == 2 ? sim_pair_map_plan((sim_pair_map)m, n, plan, err)
                    : sim_triplet_map_plan((sim_triplet_map)m, n, plan, err);
}

static void print_launches(const sim_map_plan *plan) {
    for (int l = 0; l < plan->launch_count; ++l) {
        const sim_map_launch *L = &plan->launch[l];
        printf("  launch %d: grid %u x %u x %u = %" PRIu64 " blocks, p = {%u, %u, %u, %u}\n", l,
               L->grid[0], L->grid[1], L->grid[2], (uint64_t)L->grid[0] * L->grid[1] * L->grid[2],
               L->p[0], L->p[1], L->p[2], L->p[3]);
    }
}

/* One table row; returns an exit code (1 when the check could not run). */
static int print_row(const maps_options *o, int m, uint32_t n) {
    sim_map_plan plan;
    sim_error err;
    if (make_plan(o->dim, m, n, &plan, &err) != SIM_OK) {
        printf("%-14s %s\n", map_name(o->dim, m), err.message);
        return 0; /* a map whose grid cannot hold n: reported in its row */
    }
    sim_map_check_result res;
    uint64_t limit = o->full ? UINT64_MAX : SIM_MAP_CHECK_FULL_DEFAULT;
    if (sim_map_check(&plan, limit, &res, &err) != SIM_OK) {
        fprintf(stderr, "nbsim maps: %s\n", err.message);
        return APP_EXIT_FAILURE;
    }
    char name[32], check[600];
    snprintf(name, sizeof name, "%s%s", map_name(o->dim, m), map_is_paper(o->dim, m) ? " *" : "");
    sim_map_check_describe(&plan, &res, check, sizeof check);
    uint64_t wasted = plan.blocks - plan.useful;
    printf("%-14s %8d %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %7.2f%%  %s\n", name,
           plan.launch_count, plan.blocks, plan.useful, wasted,
           100.0 * (double)wasted / (double)plan.blocks, check);
    return 0;
}

static int print_table(const maps_options *o, int map, uint32_t n) {
    uint64_t useful =
        o->dim == 2 ? (uint64_t)n * (n + 1u) / 2u : (uint64_t)n * (n + 1u) * (n + 2u) / 6u;
    printf("%s, n = %u tiles per side: %s(n) = %" PRIu64 " useful blocks\n",
           o->dim == 2 ? "2-D tile pairs (I, J)" : "3-D tile triples (I, J, K)", n,
           o->dim == 2 ? "T2" : "T3", useful);
    printf("%-14s %8s %14s %14s %14s %8s  %s\n", "map", "launches", "blocks", "useful", "wasted",
           "waste", "check (wasted: % of blocks launched)");
    int rc = 0;
    for (int m = 0; m < map_count(o->dim) && rc == 0; ++m) {
        if (map < 0 || m == map) {
            rc = print_row(o, m, n);
        }
    }
    if (map < 0) {
        printf("* the papers' float versions, kept for study: wrong past some n\n");
    } else {
        sim_map_plan plan;
        sim_error err;
        printf("%s: %s%s\n", map_name(o->dim, map), map_label(o->dim, map),
               map_is_paper(o->dim, map) ? " (* kept for study: wrong past some n)" : "");
        if (make_plan(o->dim, map, n, &plan, &err) == SIM_OK) {
            print_launches(&plan);
        }
    }
    return rc;
}

static int run_dump(const maps_options *o, const sim_map_plan *plan) {
    uint64_t from, to;
    const char *colon = strchr(o->dump, ':');
    char first[32] = "";
    if (colon != NULL && (size_t)(colon - o->dump) < sizeof first) {
        memcpy(first, o->dump, (size_t)(colon - o->dump));
    }
    if (colon == NULL || !parse_u64(first, &from) || !parse_u64(colon + 1, &to) || from > to) {
        return usage_error("--dump '%s': want FROM:TO, whole numbers with FROM <= TO", o->dump);
    }
    if (to >= plan->blocks) {
        return usage_error("--dump %s: TO = %" PRIu64 " is past the last block, %" PRIu64
                           ", of map '%s' at n = %u",
                           o->dump, to, plan->blocks - 1u, map_name(o->dim, plan->map), plan->n);
    }
    for (uint64_t index = from; index <= to; ++index) {
        int launch;
        uint32_t b[3], t[3];
        sim_map_plan_block_at(plan, index, &launch, &b[0], &b[1], &b[2]);
        if (!sim_map_run_block(plan, launch, b[0], b[1], b[2], t)) {
            printf("%" PRIu64 " none\n", index);
        } else if (plan->dim == 2) {
            printf("%" PRIu64 " %u %u\n", index, t[0], t[1]);
        } else {
            printf("%" PRIu64 " %u %u %u\n", index, t[0], t[1], t[2]);
        }
    }
    return APP_EXIT_OK;
}

static int run_png(const maps_options *o, const sim_map_plan *plan) {
    sim_map_check_result res;
    sim_error err;
    if (sim_map_check(plan, UINT64_MAX, &res, &err) != SIM_OK) {
        fprintf(stderr, "nbsim maps: %s\n", err.message);
        return APP_EXIT_FAILURE;
    }
    char title[160], stats[200], check[600];
    uint64_t wasted = plan->blocks - plan->useful;
    snprintf(title, sizeof title, "%s: %s", map_name(o->dim, plan->map),
             map_label(o->dim, plan->map));
    snprintf(stats, sizeof stats,
             "%d-D, n = %u tiles: %d launch%s, %" PRIu64 " blocks, %" PRIu64 " useful, %" PRIu64
             " wasted (%.1f %%)",
             o->dim, plan->n, plan->launch_count, plan->launch_count == 1 ? "" : "es", plan->blocks,
             plan->useful, wasted, 100.0 * (double)wasted / (double)plan->blocks);
    if (res.exact) {
        snprintf(check, sizeof check, "exact: every tile once, checked over all blocks");
    } else {
        sim_map_check_describe(plan, &res, check, sizeof check);
    }
    const char *lines[] = {title, stats, check};
    sim_status st = app_map_png_write(plan, lines, 3, o->png, &err);
    if (st == SIM_BAD_ARGUMENT) {
        return usage_error("%s", err.message);
    }
    if (st != SIM_OK) { /* a write that failed (a full disk), no memory: 1, as for any run */
        fprintf(stderr, "nbsim maps: %s\n", err.message);
        return APP_EXIT_FAILURE;
    }
    printf("wrote %s\n", o->png);
    return APP_EXIT_OK;
}

int app_maps_main(int argc, char **argv) {
    maps_options o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        return rc == 1 ? APP_EXIT_OK : rc;
    }
    int map = resolve_map(&o);
    uint32_t n = 0;
    if (map == -2) {
        return APP_EXIT_USAGE;
    }
    if ((rc = resolve_tiles(&o, &n)) != 0) {
        return rc;
    }
    if (map < 0 && (o.dump != NULL || o.png != NULL)) {
        return usage_error("%s needs one map (--map NAME), not all", o.dump ? "--dump" : "--png");
    }
    if (map < 0) {
        return print_table(&o, map, n);
    }
    sim_map_plan plan;
    sim_error err;
    if (make_plan(o.dim, map, n, &plan, &err) != SIM_OK) {
        return usage_error("%s", err.message);
    }
    if (o.png != NULL && n > (o.dim == 2 ? APP_MAP_PNG_MAX_2D : APP_MAP_PNG_MAX_3D)) {
        return usage_error("--png draws n <= %u tiles in %d-D, not %u",
                           o.dim == 2 ? APP_MAP_PNG_MAX_2D : APP_MAP_PNG_MAX_3D, o.dim, n);
    }
    /* Refuse an unwritable picture before printing anything (the write itself is atomic). */
    if (o.png != NULL && sim_output_check(o.png, &err) != SIM_OK) {
        return usage_error("--png: %s", err.message);
    }
    if (o.dump != NULL) {
        rc = run_dump(&o, &plan);
    } else {
        rc = print_table(&o, map, n);
    }
    if (rc == APP_EXIT_OK && o.png != NULL) {
        rc = run_png(&o, &plan);
    }
    return rc;
}
