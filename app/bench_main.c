/* SPDX-License-Identifier: MIT
 * nbsim — `nbsim bench`: entry and device check. The benchmark suites live in app/bench_*.c. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "backend.h"

int app_bench_main(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("Usage: nbsim bench maps|pairs|triplets [options]\n");
        return APP_EXIT_OK;
    }
    if (sim_cuda_device_count() == 0) {
        fprintf(stderr, "nbsim bench: no CUDA device found; benchmarks need a GPU\n");
        return APP_EXIT_FAILURE;
    }
    fprintf(stderr, "nbsim bench: not available in this build yet\n");
    return APP_EXIT_FAILURE;
}
