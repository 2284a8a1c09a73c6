/* SPDX-License-Identifier: MIT
 * nbsim — the simulator's command line: defaults, parsing, --help. */
#include "options.h"

#include <stdio.h>
#include <string.h>

#include "autotune.h"
#include "parse.h"
#include "viewer_keys.h"

void app_options_default(app_options *o) {
    memset(o, 0, sizeof *o);
    strcpy(o->scene, "gas");
    o->n = 0;
    o->seed = 1;
    o->params = sim_params_default();
    o->params_set = 0;
    o->triplets = APP_TRIPLETS_AUTO;
    o->backend = APP_BACKEND_AUTO;
    o->config = sim_backend_config_default();
    o->frames = 0;
    o->energy_every = APP_ENERGY_AUTO;
    o->vsync = 1;
    o->width = 1280;
    o->height = 800;
}

void app_print_sim_help(const char *prog) {
    printf(
        "nbsim %s — N spheres, contact forces over every pair and Axilrod-Teller-Muto forces\n"
        "over every triple, in CUDA kernels whose blocks are placed by a selectable thread map.\n"
        "\n"
        "Usage:\n"
        "  %s [options]                 open the viewer\n"
        "  %s --frames F [options]      headless batch run of F frames (no window, no GL)\n"
        "  %s maps --help               the map inspector (launch plans, dumps, pictures)\n"
        "  %s bench --help              benchmarks of the maps and kernels on this GPU\n"
        "\n",
        NBSIM_VERSION, prog, prog, prog, prog);
    printf(
        "Scene:\n"
        "  --scene NAME|FILE      built-in gas, pile, collide, triplets (default gas), or a\n"
        "                         scene file (format: assets/README.md)\n"
        "  --n N                  bodies in a built-in scene (default: the scene's)\n"
        "  --seed S               random seed of built-in scenes (default 1)\n"
        "  --save-state FILE      write the final state (+ last force per body) as a scene file\n"
        "Physics (override the scene's values):\n"
        "  --dt S                 time step [s] (default: contact time / 50)\n"
        "  --stiffness K          contact stiffness [N/m]\n"
        "  --restitution E        normal restitution coefficient, 0 < E <= 1\n"
        "  --contact linear|hertz contact law\n"
        "  --gravity GX,GY,GZ     gravity [m/s^2]\n"
        "  --box L                half-width of the box [m]\n"
        "  --atm-nu NU            ATM strength [J m^9]\n"
        "  --atm-cutoff R         ATM cut-off on each distance [m] (0: none)\n"
        "  --triplets on|off|auto triplet forces (auto: on where they run at interactive speed)\n"
        "  --steps-per-frame K    integration steps per frame / log row (default 1)\n");
    printf("Backend and maps:\n"
           "  --backend auto|cpu|cuda   (auto: CUDA when a device is present)\n"
           "  --pair-map NAME        pair thread map, 'full' (no symmetry, nbody-style), or\n"
           "                         'auto' (time the maps on this GPU and N, pick the fastest,\n"
           "                         cache the choice; also picks --tile unless given)\n"
           "  --triplet-map NAME     triplet thread map, or 'auto'\n"
           "  --tile 32|64|128       bodies per tile (default 64)\n"
           "  --threads T            CPU backend threads (default: all)\n"
           "  pair maps:   ");
    for (int m = 0; m < SIM_PAIR_MAP_COUNT; ++m) {
        printf("%s%s", m ? ", " : "", sim_pair_map_name((sim_pair_map)m));
    }
    printf("\n  triplet maps: ");
    for (int m = 0; m < SIM_TRIPLET_MAP_COUNT; ++m) {
        printf("%s%s", m ? ", " : "", sim_triplet_map_name((sim_triplet_map)m));
    }
    printf("\nHeadless runs:\n"
           "  --frames F             run F frames without a window, then exit\n"
           "  --log FILE             per-frame CSV timing log (headless and viewer)\n"
           "  --summary FILE.json    medians / p95 per kernel and interactions/s\n"
           "  --energy-every K       energies in the log every K frames (0: never; default:\n"
           "                         every frame headless, every 30th in the viewer)\n"
           "  --quiet                no progress bar or notices\n"
           "Viewer:\n"
           "  --exit-after F         quit after rendering F frames\n"
           "  --screenshot FILE      write a PNG screenshot at exit\n"
           "  --vsync on|off         (default on)\n"
           "  --size WxH             window size (default 1280x800)\n"
           "\n%s\n"
           "Exit status: 0 ok, 1 runtime failure, 2 bad input, 130 interrupted.\n",
           APP_VIEWER_KEYS_HELP);
}

/* One line on stderr naming the problem; returns 2 (usage). */
static int usage_error(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "nbsim: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (see nbsim --help)\n");
    return 2;
}

static int parse_on_off(const char *flag, const char *v, int *out) {
    if (strcmp(v, "on") == 0) {
        *out = 1;
    } else if (strcmp(v, "off") == 0) {
        *out = 0;
    } else {
        return usage_error("%s: '%s' must be on or off", flag, v);
    }
    return 0;
}

static int parse_pair_map(const char *v, app_options *o) {
    if (strcmp(v, "auto") == 0) {
        o->autotune |= APP_AUTOTUNE_PAIR;
        return 0;
    }
    o->autotune &= ~(unsigned)APP_AUTOTUNE_PAIR;
    int m = sim_pair_choice_from_name(v);
    if (m < 0) {
        char names[512] = "auto, full";
        for (int k = 0; k < SIM_PAIR_MAP_COUNT; ++k) {
            strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, sim_pair_map_name((sim_pair_map)k), sizeof names - strlen(names) - 1);
        }
        return usage_error("--pair-map: unknown map '%s'; valid: %s", v, names);
    }
    o->config.pair_map = m;
    return 0;
}

static int parse_triplet_map(const char *v, app_options *o) {
    if (strcmp(v, "auto") == 0) {
        o->autotune |= APP_AUTOTUNE_TRIPLET;
        return 0;
    }
    o->autotune &= ~(unsigned)APP_AUTOTUNE_TRIPLET;
    int m = sim_triplet_map_from_name(v);
    if (m < 0) {
        char names[512] = "auto";
        for (int k = 0; k < SIM_TRIPLET_MAP_COUNT; ++k) {
            strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, sim_triplet_map_name((sim_triplet_map)k),
                    sizeof names - strlen(names) - 1);
        }
        return usage_error("--triplet-map: unknown map '%s'; valid: %s", v, names);
    }
    o->config.triplet_map = (sim_triplet_map)m;
    return 0;
}

static int parse_path(const char *flag, const char *v, char *dst) {
    if (app_copy_string(dst, SIM_PATH_MAX, v) != 0) {
        return usage_error("%s: path '%.60s...' is too long", flag, v);
    }
    if (app_path_writable(v) != 0) {
        return usage_error("%s: cannot write '%s' (directory missing or not writable)", flag, v);
    }
    return 0;
}

/* Parses one option with its value v (NULL for flags that take none). */
static int parse_valued(const char *f, const char *v, app_options *o) {
    long l;
    double d;
    sim_params *p = &o->params;
#define BAD_NUMBER(what) usage_error("%s: '%s' is not " what, f, v)
    if (strcmp(f, "--scene") == 0) {
        return app_copy_string(o->scene, sizeof o->scene, v) == 0
                   ? 0
                   : usage_error("%s: '%s' is too long", f, v);
    } else if (strcmp(f, "--n") == 0) {
        if (app_parse_long(v, 1, 100000000L, &l) != 0) {
            return BAD_NUMBER("a body count in 1..100000000");
        }
        o->n = (uint32_t)l;
    } else if (strcmp(f, "--seed") == 0) {
        if (app_parse_u64(v, &o->seed) != 0) {
            return BAD_NUMBER("a non-negative integer");
        }
    } else if (strcmp(f, "--save-state") == 0) {
        return parse_path(f, v, o->save_state_path);
    } else if (strcmp(f, "--dt") == 0) {
        if (app_parse_double(v, 1e-300, 1e6, &p->dt) != 0) {
            return BAD_NUMBER("a positive time step");
        }
        o->params_set |= APP_SET_DT;
    } else if (strcmp(f, "--stiffness") == 0) {
        if (app_parse_double(v, 1e-300, 1e300, &p->stiffness) != 0) {
            return BAD_NUMBER("a positive stiffness");
        }
        o->params_set |= APP_SET_STIFFNESS;
    } else if (strcmp(f, "--restitution") == 0) {
        if (app_parse_double(v, 0.0, 1.0, &d) != 0 || d <= 0.0) {
            return BAD_NUMBER("a restitution coefficient in (0, 1]");
        }
        p->restitution = d;
        o->params_set |= APP_SET_RESTITUTION;
    } else if (strcmp(f, "--contact") == 0) {
        if (strcmp(v, "linear") != 0 && strcmp(v, "hertz") != 0) {
            return usage_error("%s: '%s' must be linear or hertz", f, v);
        }
        p->hertz = strcmp(v, "hertz") == 0;
        o->params_set |= APP_SET_HERTZ;
    } else if (strcmp(f, "--gravity") == 0) {
        double g[3];
        if (app_parse_vec3(v, g) != 0) {
            return BAD_NUMBER("a vector gx,gy,gz");
        }
        p->gravity = (sim_vec3d){g[0], g[1], g[2]};
        o->params_set |= APP_SET_GRAVITY;
    } else if (strcmp(f, "--box") == 0) {
        if (app_parse_double(v, 1e-300, 1e12, &p->box_half) != 0) {
            return BAD_NUMBER("a positive half-width");
        }
        o->params_set |= APP_SET_BOX;
    } else if (strcmp(f, "--atm-nu") == 0) {
        if (app_parse_double(v, -1e300, 1e300, &p->atm_nu) != 0) {
            return BAD_NUMBER("a number");
        }
        o->params_set |= APP_SET_ATM_NU;
    } else if (strcmp(f, "--atm-cutoff") == 0) {
        if (app_parse_double(v, 0.0, 1e300, &p->atm_cutoff) != 0) {
            return BAD_NUMBER("a non-negative distance");
        }
        o->params_set |= APP_SET_ATM_CUTOFF;
    } else if (strcmp(f, "--triplets") == 0) {
        if (strcmp(v, "auto") == 0) {
            o->triplets = APP_TRIPLETS_AUTO;
        } else {
            int on = 0;
            if (parse_on_off(f, v, &on) != 0) {
                return 2;
            }
            o->triplets = on ? APP_TRIPLETS_ON : APP_TRIPLETS_OFF;
        }
    } else if (strcmp(f, "--steps-per-frame") == 0) {
        if (app_parse_long(v, 1, 100000, &l) != 0) {
            return BAD_NUMBER("an integer in 1..100000");
        }
        p->steps_per_frame = (int)l;
        o->params_set |= APP_SET_STEPS;
    } else if (strcmp(f, "--backend") == 0) {
        if (strcmp(v, "auto") == 0) {
            o->backend = APP_BACKEND_AUTO;
        } else if (strcmp(v, "cpu") == 0) {
            o->backend = APP_BACKEND_CPU;
        } else if (strcmp(v, "cuda") == 0) {
            o->backend = APP_BACKEND_CUDA;
        } else {
            return usage_error("%s: '%s' must be auto, cpu or cuda", f, v);
        }
    } else if (strcmp(f, "--pair-map") == 0) {
        return parse_pair_map(v, o);
    } else if (strcmp(f, "--triplet-map") == 0) {
        return parse_triplet_map(v, o);
    } else if (strcmp(f, "--tile") == 0) {
        if (app_parse_long(v, 1, 1024, &l) != 0 || (l != 32 && l != 64 && l != 128)) {
            return usage_error("%s: '%s' must be 32, 64 or 128", f, v);
        }
        o->config.tile = (uint32_t)l;
        o->tile_set = 1;
    } else if (strcmp(f, "--threads") == 0) {
        if (app_parse_long(v, 1, 4096, &l) != 0) {
            return BAD_NUMBER("a thread count in 1..4096");
        }
        o->config.cpu_threads = (int)l;
    } else if (strcmp(f, "--frames") == 0) {
        if (app_parse_long(v, 1, 1000000000L, &o->frames) != 0) {
            return BAD_NUMBER("a positive frame count");
        }
    } else if (strcmp(f, "--log") == 0) {
        return parse_path(f, v, o->log_path);
    } else if (strcmp(f, "--summary") == 0) {
        return parse_path(f, v, o->summary_path);
    } else if (strcmp(f, "--energy-every") == 0) {
        if (app_parse_long(v, 0, 1000000000L, &l) != 0) {
            return BAD_NUMBER("a non-negative integer");
        }
        o->energy_every = (int)l;
    } else if (strcmp(f, "--exit-after") == 0) {
        if (app_parse_long(v, 1, 1000000000L, &o->exit_after) != 0) {
            return BAD_NUMBER("a positive frame count");
        }
    } else if (strcmp(f, "--screenshot") == 0) {
        return parse_path(f, v, o->screenshot_path);
    } else if (strcmp(f, "--vsync") == 0) {
        return parse_on_off(f, v, &o->vsync);
    } else if (strcmp(f, "--size") == 0) {
        int w = 0, h = 0;
        char tail = 0;
        if (sscanf(v, "%dx%d%c", &w, &h, &tail) != 2 || w < 64 || h < 64 || w > 16384 ||
            h > 16384) {
            return usage_error("%s: '%s' must be WxH, each 64..16384", f, v);
        }
        o->width = w;
        o->height = h;
    } else {
        SIM_ASSERT(!"option listed in takes_value() but not parsed");
    }
#undef BAD_NUMBER
    return 0;
}

/* The options that take a value (every option but --help, --version and --quiet). */
static int takes_value(const char *name) {
    static const char *const names[] = {
        "--scene",     "--n",           "--seed",         "--save-state",      "--dt",
        "--stiffness", "--restitution", "--contact",      "--gravity",         "--box",
        "--atm-nu",    "--atm-cutoff",  "--triplets",     "--steps-per-frame", "--backend",
        "--pair-map",  "--triplet-map", "--tile",         "--threads",         "--frames",
        "--log",       "--summary",     "--energy-every", "--exit-after",      "--screenshot",
        "--vsync",     "--size"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
        if (strcmp(name, names[k]) == 0) {
            return 1;
        }
    }
    return 0;
}

int app_options_parse(int argc, char **argv, app_options *o) {
    app_options_default(o);
    for (int a = 1; a < argc; ++a) {
        const char *f = argv[a];
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            app_print_sim_help("nbsim");
            return 1;
        }
        if (strcmp(f, "--version") == 0) {
            printf("nbsim %s\n", NBSIM_VERSION);
            return 1;
        }
        if (strcmp(f, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        }
        /* Accept --flag=value as well as --flag value. */
        char name[64];
        const char *value = NULL;
        const char *eq = strchr(f, '=');
        if (strncmp(f, "--", 2) == 0 && eq != NULL && (size_t)(eq - f) < sizeof name) {
            memcpy(name, f, (size_t)(eq - f));
            name[eq - f] = '\0';
            value = eq + 1;
        } else if (app_copy_string(name, sizeof name, f) != 0) {
            return usage_error("unknown argument '%.40s...'%s", f, "");
        }
        if (strncmp(name, "--", 2) != 0) {
            return usage_error("unexpected argument '%s'%s", f, "");
        }
        if (!takes_value(name)) {
            return usage_error("unknown option '%s'%s", name, "");
        }
        if (value == NULL) {
            if (a + 1 >= argc) {
                return usage_error("%s needs a value%s", name, "");
            }
            value = argv[++a];
        }
        if (parse_valued(name, value, o) != 0) {
            return 2;
        }
    }
    if (o->autotune != 0 && !o->tile_set) {
        o->autotune |= APP_AUTOTUNE_TILE;
    }
    return 0;
}
