/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench`: options, device check, output folder, the suites, plots, exit status.
 * The suites live in app/bench_maps.c and app/bench_sim.c. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "nbsim/autotune.h"
#include "nbsim/internal/backend.h"
#include "bench_options.h"
#include "bench_report.h"
#include "bench_stats.h"
#include "bench_suites.h"
#include "nbsim/output_file.h"

int app_bench_main(int argc, char **argv) {
    app_bench_options o;
    const int parsed = app_bench_options_parse(argc, argv, &o);
    if (parsed == 1) {
        return APP_EXIT_OK;
    }
    if (parsed != 0) {
        return APP_EXIT_USAGE;
    }
    sim_device_info dev;
    sim_error err = {0};
    if (sim_cuda_device_count() == 0 || sim_cuda_device_query(&dev, &err) != SIM_OK) {
        fprintf(stderr, "nbsim bench: no CUDA device found; benchmarks need a GPU\n");
        return APP_EXIT_FAILURE;
    }
    char dir[APP_BENCH_PATH_MAX];
    if (o.out[0] != '\0') {
        snprintf(dir, sizeof dir, "%s", o.out);
    } else {
        char slug[128];
        sim_device_slug(dev.name, slug, sizeof slug);
        snprintf(dir, sizeof dir, "bench/results/%s", slug);
    }
    if (sim_make_folders(dir, &err) != SIM_OK ||
        app_bench_write_meta(dir, &dev, &o, argc, argv, &err) != SIM_OK) {
        fprintf(stderr, "nbsim bench: %s\n", err.message);
        return APP_EXIT_FAILURE;
    }
    app_bench_print_device(stdout, &dev);
    printf("method: %d warm-up, median of %d repeats (min, max in the CSV), maps interleaved "
           "per repeat, CUDA events; results in %s/\n",
           o.warmup, o.repeats, dir);

    app_bench_tally tally = {0};
    sim_status st = SIM_OK;
    if (o.suites & APP_BENCH_MAPS) {
        st = app_bench_maps_suite(&o, &dev, dir, &tally, &err);
    }
    for (int triplets = 0; triplets <= 1 && st == SIM_OK; ++triplets) {
        if (!(o.suites & (triplets ? APP_BENCH_TRIPLETS : APP_BENCH_PAIRS))) {
            continue;
        }
        st = o.gpus_count > 0 ? app_bench_scaling_suite(&o, triplets, &dev, dir, &tally, &err)
                              : app_bench_sim_suite(&o, triplets, &dev, dir, &tally, &err);
    }
    if (st != SIM_OK) {
        fflush(stdout);
        fprintf(stderr, "nbsim bench: %s\n", err.message);
        return APP_EXIT_FAILURE;
    }
    printf("\n%d result rows in %s/", tally.rows, dir);
    if (tally.skipped > 0) {
        printf(", %d sizes left out (see notes above)", tally.skipped);
    }
    if (tally.paper_failures > 0) {
        printf(", %d rows where a paper float variant misplaced blocks (expected at large "
               "sizes)",
               tally.paper_failures);
    }
    printf("\n");
    if (o.plot && tally.rows > 0) {
        app_bench_plot(dir);
    }
    if (tally.exact_failures > 0) {
        fflush(stdout);
        fprintf(stderr,
                "nbsim bench: %d rows where an exact map failed its exactly-once check "
                "(column check in maps.csv)\n",
                tally.exact_failures);
        return APP_EXIT_FAILURE;
    }
    return APP_EXIT_OK;
}
