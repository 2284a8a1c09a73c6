/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` command line. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "bench_options.h"

#include <stdio.h>
#include <string.h>

#include "bench_stats.h"
#include "option_table.h"
#include "parse.h"

const char *app_bench_kernel_name(int k) {
    static const char *const names[] = {
#define APP_BENCH_KERNEL_NAME(id, name, label) name,
        APP_BENCH_KERNEL_LIST(APP_BENCH_KERNEL_NAME)
#undef APP_BENCH_KERNEL_NAME
    };
    return (k >= 0 && k < APP_BENCH_K_COUNT) ? names[k] : "?";
}

void app_bench_options_default(app_bench_options *o) {
    memset(o, 0, sizeof *o);
    o->suites = 0; /* none named: all three */
    o->repeats = 15;
    o->warmup = 2;
    o->pair_maps = (1u << SIM_PAIR_MAP_COUNT) - 1u; /* every map, plus full */
    o->pair_maps |= 1u << SIM_PAIR_FULL;
    o->triplet_maps = (1u << SIM_TRIPLET_MAP_COUNT) - 1u;
    o->kernels = (1u << APP_BENCH_K_COUNT) - 1u;
    o->dims = (1u << 2) | (1u << 3);
    o->evals = APP_BENCH_EVAL_THREAD | APP_BENCH_EVAL_BLOCK;
    o->cull = APP_BENCH_CULL_OFF | APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO;
    o->seed = 1;
    o->plot = 1;
    o->steps = 1;
}

/* "bb, ltm, ltm-sqrt*, ..." (* = the papers' float variants). */
static void map_names(int dim, char *out, size_t cap) {
    size_t len = 0;
    out[0] = '\0';
    const int count = dim == 2 ? (int)SIM_PAIR_MAP_COUNT : (int)SIM_TRIPLET_MAP_COUNT;
    for (int m = 0; m < count && len < cap; ++m) {
        const char *name = dim == 2 ? sim_pair_map_name((sim_pair_map)m)
                                    : sim_triplet_map_name((sim_triplet_map)m);
        const int paper = dim == 2 ? sim_pair_map_is_paper_float((sim_pair_map)m)
                                   : sim_triplet_map_is_paper_float((sim_triplet_map)m);
        len +=
            (size_t)snprintf(out + len, cap - len, "%s%s%s", m ? ", " : "", name, paper ? "*" : "");
    }
}

/* ---- setters: each checks one value and names the rule it breaks ---- */

#define WHY(...) (snprintf(why, cap, __VA_ARGS__), -1)

/* A comma-separated list without empty items, copied into buf for strtok_r. */
static int list_copy(const char *v, char *buf, size_t len) {
    return app_copy_string(buf, len, v) == 0 && buf[0] != '\0' && v[0] != ',' &&
           v[strlen(v) - 1] != ',' && strstr(v, ",,") == NULL;
}

static int set_n(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    const int c = app_bench_parse_list(v, 2, 1u << 24, o->n, APP_BENCH_MAX_LIST);
    if (c < 0) {
        return WHY("must be a list of sizes in 2..16777216, e.g. 4096,8192");
    }
    o->n_count = c;
    return 0;
}

static int set_tile(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    uint32_t list[APP_BENCH_MAX_LIST];
    const int c = app_bench_parse_list(v, 1, 1024, list, APP_BENCH_MAX_LIST);
    if (c < 0) {
        return WHY("must be a list such as 16,32");
    }
    for (int i = 0; i < c; ++i) {
        const uint32_t r = list[i];
        if (r != 4 && r != 8 && r != 16 && !sim_pair_tile_valid(r)) {
            return WHY("holds %u: each must be 4, 8, 16, 32 (maps: rho) or " SIM_PAIR_TILE_NAMES
                       " (pairs, triplets: bodies per tile)",
                       r);
        }
    }
    memcpy(o->tile, list, (size_t)c * sizeof *list);
    o->tile_count = c;
    return 0;
}

/* --repeats (arg 0) and --warmup (arg 1). */
static int set_count(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    long l = 0;
    const long hi = arg == 0 ? 1000 : 100;
    if (app_parse_long(v, arg == 0 ? 1 : 0, hi, &l) != 0) {
        return WHY("must be an integer in %d..%ld", arg == 0 ? 1 : 0, hi);
    }
    *(arg == 0 ? &o->repeats : &o->warmup) = (int)l;
    return 0;
}

/* "--maps bb,ltm,full" into the two masks; BB is added to every dimension that has a map. */
static int set_maps(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    char buf[512];
    if (!list_copy(v, buf, sizeof buf)) {
        return WHY("is not a list of map names");
    }
    unsigned pm = 0, tm = 0;
    char *save = NULL;
    for (char *name = strtok_r(buf, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
        const int p = sim_pair_choice_from_name(name), t3 = sim_triplet_map_from_name(name);
        if (strcmp(name, "all") == 0) {
            pm |= (1u << SIM_PAIR_CHOICE_COUNT) - 1u;
            tm |= (1u << SIM_TRIPLET_MAP_COUNT) - 1u;
        } else if (p < 0 && t3 < 0) {
            char pairs[512], triples[512];
            map_names(2, pairs, sizeof pairs);
            map_names(3, triples, sizeof triples);
            return WHY("has an unknown map '%.40s' (2-D: %s, full; 3-D: %s)", name, pairs, triples);
        } else {
            pm |= p >= 0 ? 1u << p : 0u;
            tm |= t3 >= 0 ? 1u << t3 : 0u;
        }
    }
    o->maps_given = 1; /* the scaling suite's default is bb against one λ map, not all */
    o->pair_maps = pm ? pm | (1u << SIM_PAIR_MAP_BB) : 0u;
    o->triplet_maps = tm ? tm | (1u << SIM_TRIPLET_MAP_BB) : 0u;
    return 0;
}

static int set_kernels(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    char buf[256];
    if (!list_copy(v, buf, sizeof buf)) {
        return WHY("is not a list of kernels (map, accum, edm, edm1..edm4)");
    }
    unsigned mask = 0;
    char *save = NULL;
    for (char *name = strtok_r(buf, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < APP_BENCH_K_COUNT; ++k) {
            found = strcmp(name, app_bench_kernel_name(k)) == 0 ? k : found;
        }
        if (strcmp(name, "edm") == 0) {
            mask |= (1u << APP_BENCH_K_EDM1) | (1u << APP_BENCH_K_EDM2) | (1u << APP_BENCH_K_EDM3) |
                    (1u << APP_BENCH_K_EDM4);
        } else if (found < 0) {
            return WHY("has an unknown kernel '%.40s' (map, accum, edm, edm1..edm4)", name);
        } else {
            mask |= 1u << found;
        }
    }
    o->kernels = mask;
    return 0;
}

static int set_dim(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    uint32_t list[2];
    const int c = app_bench_parse_list(v, 2, 3, list, 2);
    if (c < 0) {
        return WHY("must be 2, 3 or 2,3");
    }
    o->dims = 0;
    for (int i = 0; i < c; ++i) {
        o->dims |= 1u << list[i];
    }
    return 0;
}

/* A comma list of words into bits: names[k] sets bits[k]. */
static int set_words(const char *v, const char *const *names, const unsigned *bits, int count,
                     unsigned *out) {
    char buf[64];
    if (!list_copy(v, buf, sizeof buf)) {
        return -1;
    }
    unsigned mask = 0;
    char *save = NULL;
    for (char *e = strtok_r(buf, ",", &save); e != NULL; e = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < count && strcmp(e, names[k]) != 0) {
            ++k;
        }
        if (k == count) {
            return -1;
        }
        mask |= bits[k];
    }
    *out = mask;
    return 0;
}

static int set_eval(void *t, int arg, const char *v, char *why, size_t cap) {
    static const char *const names[] = {"thread", "block"};
    static const unsigned bits[] = {APP_BENCH_EVAL_THREAD, APP_BENCH_EVAL_BLOCK};
    return set_words(v, names, bits, 2, &((app_bench_options *)t)->evals) == 0
               ? 0
               : WHY("must be thread, block or thread,block");
}

static int set_cull(void *t, int arg, const char *v, char *why, size_t cap) {
    static const char *const names[] = {"off", "1", "2", "on"};
    static const unsigned bits[] = {APP_BENCH_CULL_OFF, APP_BENCH_CULL_ONE, APP_BENCH_CULL_TWO,
                                    APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO};
    return set_words(v, names, bits, 4, &((app_bench_options *)t)->cull) == 0
               ? 0
               : WHY("must be a list of off, 1, 2 or on");
}

static int set_gpus(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    const int c = app_bench_parse_list(v, 1, SIM_MAX_LOCAL_RANKS, o->gpus, APP_BENCH_MAX_LIST);
    if (c < 0) {
        return WHY("must be a list of GPU counts in 1..%d, e.g. 1,2,4", SIM_MAX_LOCAL_RANKS);
    }
    o->gpus_count = c;
    return 0;
}

static int set_steps(void *t, int arg, const char *v, char *why, size_t cap) {
    long l = 0;
    if (app_parse_long(v, 1, 1000, &l) != 0) {
        return WHY("must be an integer in 1..1000");
    }
    ((app_bench_options *)t)->steps = (int)l;
    return 0;
}

static int set_atm_cutoff(void *t, int arg, const char *v, char *why, size_t cap) {
    if (app_parse_double(v, 1e-6, 1e9, &((app_bench_options *)t)->atm_cutoff) != 0) {
        return WHY("must be a distance in [1e-6, 1e9] m");
    }
    return 0;
}

static int set_seed(void *t, int arg, const char *v, char *why, size_t cap) {
    return app_parse_u64(v, &((app_bench_options *)t)->seed) == 0
               ? 0
               : WHY("must be a non-negative integer");
}

static int set_out(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    return v[0] != '\0' && app_copy_string(o->out, sizeof o->out, v) == 0
               ? 0
               : WHY("is empty or too long");
}

/* --quick (arg 0) and --no-plot (arg 1). */
static int set_flag(void *t, int arg, const char *v, char *why, size_t cap) {
    app_bench_options *o = t;
    if (arg == 0) {
        o->quick = 1;
    } else {
        o->plot = 0;
    }
    return 0;
}

/* The suites, named as arguments. */
static int set_suite(void *t, const char *arg, char *why, size_t cap) {
    app_bench_options *o = t;
    if (strcmp(arg, "maps") == 0) {
        o->suites |= APP_BENCH_MAPS;
    } else if (strcmp(arg, "pairs") == 0) {
        o->suites |= APP_BENCH_PAIRS;
    } else if (strcmp(arg, "triplets") == 0) {
        o->suites |= APP_BENCH_TRIPLETS;
    } else if (strcmp(arg, "all") == 0) {
        o->suites |= APP_BENCH_MAPS | APP_BENCH_PAIRS | APP_BENCH_TRIPLETS;
    } else {
        return WHY("is not a suite (maps, pairs, triplets or all)");
    }
    return 0;
}

#undef WHY

/* ---- the table ---- */

static const app_option_row rows[] = {
    {NULL, NULL, "Options:", NULL, 0},
    {"--quick", NULL, "small sweep (seconds; for tests)", set_flag, 0},
    {"--n", "LIST", "sizes, e.g. 4096,8192: elements per side (maps) or bodies", set_n, 0},
    {"--tile", "LIST",
     "maps: rho = threads per block side (2-D 8,16,32; 3-D 4,8);\n"
     "pairs/triplets: bodies per tile (" SIM_PAIR_TILE_NAMES ")",
     set_tile, 0},
    {"--repeats", "R", "timed repeats per map and row (default 15; median, min, max)", set_count,
     0},
    {"--warmup", "W", "untimed runs per map before timing (default 2)", set_count, 1},
    {"--maps", "LIST",
     "maps to time (names below, `full` for the nbody-style pair sweep,\n"
     "or all); bb is always timed: I needs it",
     set_maps, 0},
    {"--kernels", "LIST", "maps suite: map,accum,edm1,edm2,edm3,edm4 (default all)", set_kernels,
     0},
    {"--dim", "LIST", "maps suite: 2, 3 or 2,3 (default both)", set_dim, 0},
    {"--eval", "LIST",
     "maps suite: thread (every thread evaluates the map, as the papers'\n"
     "code; also timed with the grid transposed, thread-t), block (one\n"
     "thread per block, shared memory); default both. I is always\n"
     "against bb evaluated per thread",
     set_eval, 0},
    {"--cull", "LIST",
     "pairs suite: off (every tile pair swept, pairs.csv), 1 or 2 (culled\n"
     "with one or two culling passes, pairs_culled.csv), on = 1,2;\n"
     "default off,1,2. Culled rows default to N = 65536..1048576",
     set_cull, 0},
    {"--atm-cutoff", "R",
     "triplets suite: instead of the maps, the ATM cut-off R [m] culled\n"
     "(only tile triples whose three tile pairs are within R are swept)\n"
     "on the `triplets` scene: per N the surviving tile triples, the\n"
     "culling and the kernel per step, t(N) / t(first N); default N =\n"
     "16384,65536,262144 (the scene's spheres are 1 m across)",
     set_atm_cutoff, 0},
    {"--seed", "S", "seed of the gas (and triplets) scene (default 1)", set_seed, 0},
    {"--gpus", "LIST",
     "pairs/triplets: the scaling suite instead, e.g. 1,2,4: time per step\n"
     "on each number of GPUs (one process, NCCL), speed-up and parallel\n"
     "efficiency against the first, share of the step in the all-reduce\n"
     "(scaling.csv); maps bb and ltm / tetra unless --maps",
     set_gpus, 0},
    {"--steps", "K", "scaling suite: steps per timed frame (default 1)", set_steps, 0},
    {"--out", "DIR",
     "where maps.csv, pairs.csv, triplets.csv, meta.txt and plots go\n"
     "(default bench/results/<gpu>/)",
     set_out, 0},
    {"--no-plot", NULL, "do not run bench/plot.py afterwards", set_flag, 1},
};

static void print_help(FILE *out);

static const app_option_table table = {
    "nbsim bench",          rows, (int)(sizeof rows / sizeof rows[0]), NULL, set_suite, print_help,
    "nbsim " NBSIM_VERSION, NULL,
};

static void print_help(FILE *out) {
    fprintf(out,
            "Usage: nbsim bench [maps] [pairs] [triplets] [options]   (no suite named: all three)\n"
            "\n"
            "Measures the thread maps on this GPU the way the papers do, and the simulation "
            "kernels\nunder every map. Every map of a row is timed in the same run, interleaved "
            "within each\nrepeat; times are CUDA-event medians after a warm-up, with min and max. "
            "I = t_BB / t_map.\n\n"
            "Suites:\n"
            "  maps       micro-benchmarks over N elements per side: map only, accumulate "
            "(element\n"
            "             counter += 1) and the Euclidean distance matrix with 1-4 features, "
            "every\n"
            "             2-D map (rho x rho threads per block) and 3-D map (rho^3 threads)\n"
            "  pairs      the contact kernel through the CUDA backend, every pair map and `full`,\n"
            "             on the built-in gas scene; then the culled pipeline (only the tile "
            "pairs\n"
            "             whose bounding boxes overlap are swept): per map the culling pass, "
            "which\n"
            "             the map places, and the whole contact step\n"
            "  triplets   the ATM triplet kernel through the CUDA backend, every triplet map\n\n");
    app_option_help(&table, out);
    fprintf(out,
            "\nMaps marked * in the tables are the papers' float variants, kept for study: they "
            "are\nknown to place blocks wrongly at large sizes, and their rows say so (check "
            "column).\nExit status: 0 done, 1 no GPU or a runtime failure (or an exact map failed "
            "its check),\n2 bad option.\n\n");
    char names[512];
    map_names(2, names, sizeof names);
    fprintf(out, "2-D maps: %s\n", names);
    map_names(3, names, sizeof names);
    fprintf(out, "3-D maps: %s\n", names);
}

void app_bench_print_help(void) {
    print_help(stdout);
}

int app_bench_options_parse(int argc, char **argv, app_bench_options *o) {
    app_bench_options_default(o);
    app_option_table t = table;
    t.target = o;
    const int r = app_option_parse(&t, argc, argv);
    if (r != 0) {
        return r;
    }
    if (o->suites == 0) {
        o->suites = APP_BENCH_MAPS | APP_BENCH_PAIRS | APP_BENCH_TRIPLETS;
    }
    if ((o->suites & APP_BENCH_MAPS) && o->kernels == 0) {
        fprintf(stderr, "nbsim bench: --kernels selects nothing (see nbsim bench --help)\n");
        return 2;
    }
    return 0;
}
