/* SPDX-License-Identifier: MIT
 * nbsim — entry point: picks the subcommand. */
#include "app.h"

#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "maps") == 0) {
        return app_maps_main(argc - 1, argv + 1);
    }
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        return app_bench_main(argc - 1, argv + 1);
    }
    return app_sim_main(argc, argv);
}
