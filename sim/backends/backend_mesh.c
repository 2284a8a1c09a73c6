/* SPDX-License-Identifier: MIT
 * nbsim — sim_backend_set_meshes (nbsim/internal/backend.h): mesh walls handed to the backend that
 * runs them, and refused in one line by those that do not yet. */
#include "nbsim/internal/backend.h"

#include "cpu/cpu_backend_impl.h"

sim_status sim_backend_set_meshes(sim_backend *b, sim_mesh *const *meshes, int count,
                                  sim_error *err) {
    if (count < 0 || (count > 0 && meshes == NULL)) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "mesh walls: %d meshes", count);
    }
    for (int k = 0; k < count; ++k) {
        if (meshes[k] == NULL) {
            return sim_fail(err, SIM_BAD_ARGUMENT, "mesh walls: mesh %d is missing", k);
        }
    }
    if (b->config.kind != SIM_BACKEND_CPU) {
        return sim_fail(err, SIM_UNSUPPORTED,
                        "mesh walls run on the CPU reference only for now (--backend cpu)");
    }
    return sim_cpu_set_meshes(b, meshes, count, err);
}
