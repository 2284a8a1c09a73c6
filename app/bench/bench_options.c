/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` command line. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "bench_options.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_stats.h"
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

void app_bench_print_help(void) {
    printf(
        "Usage: nbsim bench [maps] [pairs] [triplets] [options]   (no suite named: all three)\n"
        "\n"
        "Measures the thread maps on this GPU the way the papers do, and the simulation kernels\n"
        "under every map. Every map of a row is timed in the same run, interleaved within each\n"
        "repeat; times are CUDA-event medians after a warm-up, with min and max. I = t_BB / "
        "t_map.\n"
        "\n"
        "Suites:\n"
        "  maps       micro-benchmarks over N elements per side: map only, accumulate (element\n"
        "             counter += 1) and the Euclidean distance matrix with 1-4 features, every\n"
        "             2-D map (rho x rho threads per block) and 3-D map (rho^3 threads)\n"
        "  pairs      the contact kernel through the CUDA backend, every pair map and `full`,\n"
        "             on the built-in gas scene; then the culled pipeline (only the tile pairs\n"
        "             whose bounding boxes overlap are swept): per map the culling pass, which\n"
        "             the map places, and the whole contact step\n"
        "  triplets   the ATM triplet kernel through the CUDA backend, every triplet map\n"
        "\n"
        "Options:\n"
        "  --quick            small sweep (seconds; for tests)\n"
        "  --n LIST           sizes, e.g. 4096,8192: elements per side (maps) or bodies\n"
        "  --tile LIST        maps: rho = threads per block side (2-D 8,16,32; 3-D 4,8);\n"
        "                     pairs/triplets: bodies per tile (32,64,128)\n"
        "  --repeats R        timed repeats per map and row (default 15; median, min, max)\n"
        "  --warmup W         untimed runs per map before timing (default 2)\n"
        "  --maps LIST        maps to time (names below, `full` for the nbody-style pair\n"
        "                     sweep, or all); bb is always timed: I needs it\n"
        "  --kernels LIST     maps suite: map,accum,edm1,edm2,edm3,edm4 (default all)\n"
        "  --dim LIST         maps suite: 2, 3 or 2,3 (default both)\n"
        "  --eval LIST        maps suite: thread (every thread evaluates the map, as the\n"
        "                     papers' code), block (one thread per block, shared memory);\n"
        "                     default both. I is always against bb evaluated per thread\n"
        "  --cull LIST        pairs suite: off (every tile pair swept, pairs.csv), 1 or 2\n"
        "                     (culled with one or two culling passes, pairs_culled.csv), on = "
        "1,2;\n"
        "                     default off,1,2. Culled rows default to N = 65536..1048576\n"
        "  --atm-cutoff R     triplets suite: instead of the maps, the ATM cut-off R [m] culled\n"
        "                     (only tile triples whose three tile pairs are within R are swept)\n"
        "                     on the `triplets` scene: per N the surviving tile triples, the\n"
        "                     culling and the kernel per step, t(N) / t(first N); default N =\n"
        "                     16384,65536,262144 (the scene's spheres are 1 m across)\n"
        "  --seed S           seed of the gas (and triplets) scene (default 1)\n"
        "  --out DIR          where maps.csv, pairs.csv, triplets.csv, meta.txt and plots go\n"
        "                     (default bench/results/<gpu>/)\n"
        "  --no-plot          do not run bench/plot.py afterwards\n"
        "  -h, --help         this text\n"
        "\n"
        "Maps marked * in the tables are the papers' float variants, kept for study: they are\n"
        "known to place blocks wrongly at large sizes, and their rows say so (check column).\n"
        "Exit status: 0 done, 1 no GPU or a runtime failure (or an exact map failed its check),\n"
        "2 bad option.\n\n");
    char names[512];
    map_names(2, names, sizeof names);
    printf("2-D maps: %s\n", names);
    map_names(3, names, sizeof names);
    printf("3-D maps: %s\n", names);
}

static int bad(const char *fmt, ...) SIM_PRINTF(1, 2);
static int bad(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("nbsim bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* "--maps bb,ltm,full" into the two masks; BB is added to every dimension that has a map. */
static int parse_maps(const char *v, app_bench_options *o) {
    char buf[512];
    if (app_copy_string(buf, sizeof buf, v) != 0 || buf[0] == '\0' || v[0] == ',' ||
        v[strlen(v) - 1] == ',' || strstr(v, ",,") != NULL) {
        return bad("--maps: '%s' is not a list of map names", v);
    }
    unsigned pm = 0, tm = 0;
    char *save = NULL;
    for (char *name = strtok_r(buf, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
        const int p = sim_pair_map_from_name(name), t = sim_triplet_map_from_name(name);
        if (strcmp(name, "all") == 0) {
            pm |= ((1u << SIM_PAIR_MAP_COUNT) - 1u) | (1u << SIM_PAIR_FULL);
            tm |= (1u << SIM_TRIPLET_MAP_COUNT) - 1u;
        } else if (strcmp(name, "full") == 0) {
            pm |= 1u << SIM_PAIR_FULL;
        } else if (p < 0 && t < 0) {
            char pairs[512], triples[512];
            map_names(2, pairs, sizeof pairs);
            map_names(3, triples, sizeof triples);
            return bad("--maps: unknown map '%s' (2-D: %s, full; 3-D: %s)", name, pairs, triples);
        } else {
            pm |= p >= 0 ? 1u << p : 0u;
            tm |= t >= 0 ? 1u << t : 0u;
        }
    }
    o->pair_maps = pm ? pm | (1u << SIM_PAIR_MAP_BB) : 0u;
    o->triplet_maps = tm ? tm | (1u << SIM_TRIPLET_MAP_BB) : 0u;
    return 0;
}

static int parse_kernels(const char *v, app_bench_options *o) {
    char buf[256];
    if (app_copy_string(buf, sizeof buf, v) != 0 || buf[0] == '\0' || v[0] == ',' ||
        v[strlen(v) - 1] == ',' || strstr(v, ",,") != NULL) {
        return bad("--kernels: '%s' is not a list of kernels (map,accum,edm1..edm4)", v);
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
            return bad("--kernels: unknown kernel '%s' (map, accum, edm, edm1..edm4)", name);
        } else {
            mask |= 1u << found;
        }
    }
    o->kernels = mask;
    return 0;
}

static int parse_value(const char *f, const char *v, app_bench_options *o) {
    long l = 0;
    uint32_t list[APP_BENCH_MAX_LIST];
    if (strcmp(f, "--n") == 0) {
        const int c = app_bench_parse_list(v, 2, 1u << 24, o->n, APP_BENCH_MAX_LIST);
        if (c < 0) {
            return bad("--n: '%s' must be a list of sizes in 2..16777216, e.g. 4096,8192", v);
        }
        o->n_count = c;
    } else if (strcmp(f, "--tile") == 0) {
        const int c = app_bench_parse_list(v, 1, 1024, list, APP_BENCH_MAX_LIST);
        if (c < 0) {
            return bad("--tile: '%s' must be a list such as 16,32", v);
        }
        for (int i = 0; i < c; ++i) {
            const uint32_t t = list[i];
            if (t != 4 && t != 8 && t != 16 && t != 32 && t != 64 && t != 128) {
                return bad("--tile: %u must be 4, 8, 16, 32 (maps: rho) or 32, 64, 128 "
                           "(pairs, triplets: bodies per tile)",
                           t);
            }
        }
        memcpy(o->tile, list, (size_t)c * sizeof *list);
        o->tile_count = c;
    } else if (strcmp(f, "--repeats") == 0) {
        if (app_parse_long(v, 1, 1000, &l) != 0) {
            return bad("--repeats: '%s' must be an integer in 1..1000", v);
        }
        o->repeats = (int)l;
    } else if (strcmp(f, "--warmup") == 0) {
        if (app_parse_long(v, 0, 100, &l) != 0) {
            return bad("--warmup: '%s' must be an integer in 0..100", v);
        }
        o->warmup = (int)l;
    } else if (strcmp(f, "--maps") == 0) {
        return parse_maps(v, o);
    } else if (strcmp(f, "--kernels") == 0) {
        return parse_kernels(v, o);
    } else if (strcmp(f, "--dim") == 0) {
        const int c = app_bench_parse_list(v, 2, 3, list, 2);
        if (c < 0) {
            return bad("--dim: '%s' must be 2, 3 or 2,3", v);
        }
        o->dims = 0;
        for (int i = 0; i < c; ++i) {
            o->dims |= 1u << list[i];
        }
    } else if (strcmp(f, "--eval") == 0) {
        o->evals = 0;
        char buf[64];
        if (app_copy_string(buf, sizeof buf, v) != 0 || buf[0] == '\0' || v[0] == ',' ||
            v[strlen(v) - 1] == ',' || strstr(v, ",,") != NULL) {
            return bad("--eval: '%s' must be thread, block or thread,block", v);
        }
        char *save = NULL;
        for (char *e = strtok_r(buf, ",", &save); e != NULL; e = strtok_r(NULL, ",", &save)) {
            if (strcmp(e, "thread") == 0) {
                o->evals |= APP_BENCH_EVAL_THREAD;
            } else if (strcmp(e, "block") == 0) {
                o->evals |= APP_BENCH_EVAL_BLOCK;
            } else {
                return bad("--eval: '%s' must be thread, block or thread,block", v);
            }
        }
    } else if (strcmp(f, "--cull") == 0) {
        char buf[64];
        if (app_copy_string(buf, sizeof buf, v) != 0 || buf[0] == '\0' || v[0] == ',' ||
            v[strlen(v) - 1] == ',' || strstr(v, ",,") != NULL) {
            return bad("--cull: '%s' must be a list of off, 1, 2 or on", v);
        }
        o->cull = 0;
        char *save = NULL;
        for (char *e = strtok_r(buf, ",", &save); e != NULL; e = strtok_r(NULL, ",", &save)) {
            if (strcmp(e, "off") == 0) {
                o->cull |= APP_BENCH_CULL_OFF;
            } else if (strcmp(e, "1") == 0) {
                o->cull |= APP_BENCH_CULL_ONE;
            } else if (strcmp(e, "2") == 0) {
                o->cull |= APP_BENCH_CULL_TWO;
            } else if (strcmp(e, "on") == 0) {
                o->cull |= APP_BENCH_CULL_ONE | APP_BENCH_CULL_TWO;
            } else {
                return bad("--cull: '%s' must be a list of off, 1, 2 or on", v);
            }
        }
    } else if (strcmp(f, "--atm-cutoff") == 0) {
        if (app_parse_double(v, 1e-6, 1e9, &o->atm_cutoff) != 0) {
            return bad("--atm-cutoff: '%s' must be a distance in [1e-6, 1e9] m", v);
        }
    } else if (strcmp(f, "--seed") == 0) {
        if (app_parse_u64(v, &o->seed) != 0) {
            return bad("--seed: '%s' must be a non-negative integer", v);
        }
    } else if (strcmp(f, "--out") == 0) {
        if (v[0] == '\0' || app_copy_string(o->out, sizeof o->out, v) != 0) {
            return bad("--out: '%s' is empty or too long", v);
        }
    } else {
        return bad("unknown option '%s' (see nbsim bench --help)", f);
    }
    return 0;
}

static int takes_value(const char *f) {
    static const char *const with_value[] = {"--n",    "--tile",    "--repeats", "--warmup",
                                             "--maps", "--kernels", "--dim",     "--eval",
                                             "--seed", "--out",     "--cull",    "--atm-cutoff"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; ++i) {
        if (strcmp(f, with_value[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

int app_bench_options_parse(int argc, char **argv, app_bench_options *o) {
    app_bench_options_default(o);
    for (int a = 1; a < argc; ++a) {
        const char *arg = argv[a];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            app_bench_print_help();
            return 1;
        }
        if (strcmp(arg, "maps") == 0) {
            o->suites |= APP_BENCH_MAPS;
        } else if (strcmp(arg, "pairs") == 0) {
            o->suites |= APP_BENCH_PAIRS;
        } else if (strcmp(arg, "triplets") == 0) {
            o->suites |= APP_BENCH_TRIPLETS;
        } else if (strcmp(arg, "all") == 0) {
            o->suites |= APP_BENCH_MAPS | APP_BENCH_PAIRS | APP_BENCH_TRIPLETS;
        } else if (strcmp(arg, "--quick") == 0) {
            o->quick = 1;
        } else if (strcmp(arg, "--no-plot") == 0) {
            o->plot = 0;
        } else if (strncmp(arg, "--", 2) == 0) {
            char flag[32];
            const char *eq = strchr(arg, '=');
            const char *value;
            if (eq != NULL) {
                const size_t len = (size_t)(eq - arg);
                if (len >= sizeof flag) {
                    return bad("unknown option '%s' (see nbsim bench --help)", arg);
                }
                memcpy(flag, arg, len);
                flag[len] = '\0';
                value = eq + 1;
            } else {
                if (app_copy_string(flag, sizeof flag, arg) != 0) {
                    return bad("unknown option '%s' (see nbsim bench --help)", arg);
                }
                value = NULL;
            }
            if (eq != NULL && (strcmp(flag, "--quick") == 0 || strcmp(flag, "--no-plot") == 0)) {
                return bad("%s takes no value", flag);
            }
            if (!takes_value(flag)) {
                return bad("unknown option '%s' (see nbsim bench --help)", flag);
            }
            if (value == NULL) {
                if (a + 1 >= argc) {
                    return bad("%s needs a value", flag);
                }
                value = argv[++a];
            }
            const int r = parse_value(flag, value, o);
            if (r != 0) {
                return r;
            }
        } else {
            return bad("unknown suite '%s' (maps, pairs, triplets or all)", arg);
        }
    }
    if (o->suites == 0) {
        o->suites = APP_BENCH_MAPS | APP_BENCH_PAIRS | APP_BENCH_TRIPLETS;
    }
    if ((o->suites & APP_BENCH_MAPS) && o->kernels == 0) {
        return bad("--kernels selects nothing");
    }
    return 0;
}
