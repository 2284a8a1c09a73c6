/* SPDX-License-Identifier: MIT
 * nbsim — the CUDA backend on a machine without a GPU (CI): the library links, the device
 * count is 0 without an error, and creating a CUDA backend fails cleanly with SIM_NO_DEVICE.
 * Skipped (77) where a device is present, since then the path cannot be taken. */
#include <stdio.h>
#include <string.h>

#include "nbsim/internal/backend.h"
#include "ensure.h"

static void test_no_device(void) {
    sim_vec4d pos[2] = {{0.0, 0.0, 0.0, 0.5}, {2.0, 0.0, 0.0, 0.5}};
    sim_vec4d vel[2] = {{0.0, 0.0, 0.0, 1.0}, {0.0, 0.0, 0.0, 1.0}};
    sim_state s = {.n = 2, .pos = pos, .vel = vel};
    sim_params p = sim_params_default();
    p.dt = 1e-3;
    sim_backend_config c = sim_backend_config_default();
    c.kind = SIM_BACKEND_CUDA;
    sim_backend *b = NULL;
    sim_error err = {SIM_OK, ""};
    const sim_status st = sim_backend_create(&c, &p, &s, &b, &err);
    printf("  %s\n", err.message);
    ENSURE(st == SIM_NO_DEVICE && b == NULL);
    ENSURE(strstr(err.message, "no CUDA device found") != NULL);
    ENSURE(sim_cuda_device_count() == 0); /* still 0, and asking twice is fine */
}

static const ensure_test tests[] = {
    {"no_device", test_no_device},
};

int main(int argc, char **argv) {
    if (sim_cuda_device_count() > 0) {
        printf("a CUDA device is present: the no-device path is not testable here: skipped\n");
        return ENSURE_SKIP_CODE;
    }
    return ensure_run(tests, (int)(sizeof tests / sizeof tests[0]), argc > 1 ? argv[1] : NULL);
}
