/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench` device header, meta.txt, output folders and plotting. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include "bench_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nbsim/output_file.h"
#include "plot.h"

#ifndef NBSIM_VERSION
#define NBSIM_VERSION "dev"
#endif

double app_bench_issue_rate(const sim_device_info *dev) {
    return (double)dev->sm_count * dev->fp32_lanes_per_sm * dev->clock_khz * 1e3;
}

static void version_text(int v, char *out, size_t cap) {
    snprintf(out, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

void app_bench_print_device(FILE *f, const sim_device_info *dev) {
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
                "%.3g triples/s at %.1f instr/triple\n",
                issue, issue / APP_BENCH_PAIR_INSTR, APP_BENCH_PAIR_INSTR,
                issue / APP_BENCH_TRIPLE_INSTR, APP_BENCH_TRIPLE_INSTR);
    }
}

sim_status app_bench_write_meta(const char *dir, const sim_device_info *dev,
                                const app_bench_options *o, int argc, char **argv, sim_error *err) {
    char path[APP_BENCH_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
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
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    FILE *f = out.file;
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
            "N(N-1)(N-2)/6 (64-bit); ceilings and FLOP figures assume %.0f instructions per "
            "pair and %.1f per triple (the triplet kernel's SASS count).\n",
            APP_BENCH_PAIR_INSTR, APP_BENCH_TRIPLE_INSTR);
    return sim_output_commit(&out, err);
}

void app_bench_plot(const char *dir) {
    const char *args[] = {dir};
    (void)app_plot_run("plots", args, 1);
}
