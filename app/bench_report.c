/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` device header, meta.txt, output folders and plotting. */
#define _POSIX_C_SOURCE 200809L /* posix_spawnp, gmtime_r */
#include "bench_report.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NBSIM_VERSION
#define NBSIM_VERSION "dev"
#endif
#ifndef NBSIM_SOURCE_DIR
#define NBSIM_SOURCE_DIR "."
#endif

extern char **environ;

double app_bench_issue_rate(const sim_bench_device *dev) {
    return (double)dev->sm_count * dev->fp32_lanes_per_sm * dev->clock_khz * 1e3;
}

static void version_text(int v, char *out, size_t cap) {
    snprintf(out, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

void app_bench_print_device(FILE *f, const sim_bench_device *dev) {
    char drv[16], rt[16];
    version_text(dev->driver_version, drv, sizeof drv);
    version_text(dev->runtime_version, rt, sizeof rt);
    fprintf(f, "GPU: %s (device %d, compute capability %d.%d, %d SMs x %d FP32 lanes)\n", dev->name,
            dev->device, dev->cc_major, dev->cc_minor, dev->sm_count, dev->fp32_lanes_per_sm);
    fprintf(f,
            "clocks: SM %.0f MHz peak, memory %.0f MHz, %d-bit bus; L2 %.0f MiB; "
            "memory %.1f GiB (%.1f GiB free)\n",
            dev->clock_khz / 1e3, dev->mem_clock_khz / 1e3, dev->bus_width_bits,
            dev->l2_bytes / 1048576.0, (double)dev->global_mem_bytes / 1073741824.0,
            (double)dev->free_mem_bytes / 1073741824.0);
    fprintf(f, "CUDA: driver %s, runtime %s; nbsim %s\n", drv, rt, NBSIM_VERSION);
    const double issue = app_bench_issue_rate(dev);
    if (issue > 0.0) {
        fprintf(f,
                "ceiling: %.3g FP32 instr/s issue -> %.3g pairs/s at %.0f instr/pair, "
                "%.3g triples/s at %.0f instr/triple\n",
                issue, issue / APP_BENCH_PAIR_INSTR, APP_BENCH_PAIR_INSTR,
                issue / APP_BENCH_TRIPLE_INSTR, APP_BENCH_TRIPLE_INSTR);
    }
}

sim_status app_bench_make_dirs(const char *path, sim_error *err) {
    char buf[APP_BENCH_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        return sim_fail(err, SIM_IO, "output folder path too long: '%s'", path);
    }
    for (char *p = buf + 1;; ++p) {
        const int end = *p == '\0';
        if (*p == '/' || end) {
            const char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                return sim_fail(err, SIM_IO, "cannot create folder '%s': %s", buf, strerror(errno));
            }
            *p = saved;
        }
        if (end) {
            break;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, W_OK) != 0) {
        return sim_fail(err, SIM_IO, "cannot write into '%s'", path);
    }
    return SIM_OK;
}

sim_status app_bench_write_meta(const char *dir, const sim_bench_device *dev,
                                const app_bench_options *o, int argc, char **argv, sim_error *err) {
    char path[APP_BENCH_PATH_MAX + 16], tmp[APP_BENCH_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    /* Suites run one at a time share the folder: keep the earlier runs' command lines when the
     * folder's results are from this same GPU. */
    enum { KEEP = 16 };
    char kept[KEEP][512];
    int kept_count = 0, same_gpu = 0;
    FILE *old = fopen(path, "r");
    if (old != NULL) {
        char line[512], gpu_line[300];
        snprintf(gpu_line, sizeof gpu_line, "GPU: %s (", dev->name);
        while (fgets(line, sizeof line, old) != NULL) {
            same_gpu |= strncmp(line, gpu_line, strlen(gpu_line)) == 0;
            if (strncmp(line, "command: ", 9) == 0 && kept_count < KEEP) {
                snprintf(kept[kept_count++], sizeof kept[0], "%s", line);
            }
        }
        fclose(old);
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", tmp, strerror(errno));
    }
    char when[64] = "?";
    const time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc) != NULL) {
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc);
    }
    fprintf(f, "nbsim bench results, %s\n", when);
    for (int i = 0; same_gpu && i < kept_count; ++i) {
        fputs(kept[i], f);
    }
    fprintf(f, "command: nbsim");
    for (int a = 0; a < argc; ++a) {
        fprintf(f, " %s", argv[a]);
    }
    fprintf(f, "   [%s]\n", when);
    app_bench_print_device(f, dev);
    fprintf(f,
            "method: %d warm-up run(s) per map, then %d repeats; in each repeat every map of the "
            "row is timed once, in an order rotated per repeat so drift hits all alike; CUDA "
            "events around all launches of a map (multi-launch maps timed together, concurrent "
            "launches on side streams); short rows run each map several times between the "
            "events (column inner) and report the time per run; median, min and max over "
            "the repeats. I = median t_bb / median t_map of the same row.\n",
            o->warmup, o->repeats);
    fprintf(f,
            "counts: interactions are unique element pairs N(N-1)/2 / triples "
            "N(N-1)(N-2)/6 (64-bit); FLOP figures assume %.0f per pair and %.0f per triple.\n",
            APP_BENCH_PAIR_INSTR, APP_BENCH_TRIPLE_INSTR);
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return sim_fail(err, SIM_IO, "cannot write '%s'", path);
    }
    return SIM_OK;
}

/* Runs argv quietly (stdout/stderr to /dev/null when quiet) and returns its exit status, or -1
 * when it could not be started. */
static int run_program(char *const *args, int quiet) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    const int rc = posix_spawnp(&pid, args[0], &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void app_bench_plot(const char *dir) {
    /* The script: $NBSIM_PLOT_SCRIPT, else bench/plot.py here, else the source tree's. */
    char script[APP_BENCH_PATH_MAX + 32] = "";
    const char *env_script = getenv("NBSIM_PLOT_SCRIPT");
    if (env_script != NULL && file_exists(env_script)) {
        snprintf(script, sizeof script, "%s", env_script);
    } else if (file_exists("bench/plot.py")) {
        snprintf(script, sizeof script, "bench/plot.py");
    } else {
        snprintf(script, sizeof script, "%s/bench/plot.py", NBSIM_SOURCE_DIR);
    }
    if (!file_exists(script)) {
        printf("plots: bench/plot.py not found; from the nbsim source tree run: "
               "python3 bench/plot.py %s\n",
               dir);
        return;
    }
    /* The interpreter: the first that can import matplotlib (Debian: python3-matplotlib). */
    const char *env_python = getenv("NBSIM_PYTHON");
    const char *candidates[] = {env_python, "python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; ++i) {
        if (candidates[i] == NULL || candidates[i][0] == '\0') {
            continue;
        }
        char *check[] = {(char *)candidates[i], "-c", "import matplotlib", NULL};
        if (run_program(check, 1) != 0) {
            continue;
        }
        char *plot[] = {(char *)candidates[i], script, (char *)dir, NULL};
        if (run_program(plot, 0) != 0) {
            printf("plots: %s %s %s failed (the CSV files are complete)\n", candidates[i], script,
                   dir);
        }
        return;
    }
    printf("plots: no python3 with matplotlib found; install it (Debian: apt-get install "
           "python3-matplotlib) and run: python3 %s %s\n",
           script, dir);
}
