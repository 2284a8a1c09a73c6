/* SPDX-License-Identifier: MIT
 * nbsim — the body table every trajectory reader fills (traj_impl.h): below the formats and the
 * registry that picks them (trajectory.c), so the two never call each other round. */
#include "io/traj_impl.h"

#include <stdlib.h>

sim_status traj_bodies_alloc(traj_bodies *b, uint32_t n, int mass, int density, int id, int spin,
                             const char *path, sim_error *err) {
    b->n = n;
    b->pos = calloc((size_t)n * 3, sizeof *b->pos);
    b->vel = calloc((size_t)n * 3, sizeof *b->vel);
    b->radius = calloc(n, sizeof *b->radius);
    b->mass = mass ? calloc(n, sizeof *b->mass) : NULL;
    b->density = density ? calloc(n, sizeof *b->density) : NULL;
    b->id = id ? calloc(n, sizeof *b->id) : NULL;
    b->spin = spin ? calloc((size_t)n * 3, sizeof *b->spin) : NULL;
    if (b->pos == NULL || b->vel == NULL || b->radius == NULL || (mass && b->mass == NULL) ||
        (density && b->density == NULL) || (id && b->id == NULL) || (spin && b->spin == NULL)) {
        traj_bodies_free(b);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "%s: no memory for %u bodies", path, n);
    }
    return SIM_OK;
}

void traj_bodies_free(traj_bodies *b) {
    free(b->pos);
    free(b->vel);
    free(b->radius);
    free(b->mass);
    free(b->density);
    free(b->id);
    free(b->spin);
    b->pos = b->vel = b->radius = b->mass = b->density = b->spin = NULL;
    b->id = NULL;
}
