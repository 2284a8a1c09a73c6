/* SPDX-License-Identifier: MIT
 * nbsim tests — the pairs across a periodic box's faces (see periodic_pairs.h). */
#include "periodic_pairs.h"

#include <math.h>

void periodic_pairs_make(double h, periodic_pair out[PERIODIC_PAIR_DIRECTIONS]) {
    const double sep = 0.83; /* radii 0.45 + 0.5: overlap 0.12 */
    const double c[3] = {0.31, -0.17, 0.23};
    int k = 0;
    for (int dx = -1; dx <= 1; ++dx) {
        for (int dy = -1; dy <= 1; ++dy) {
            for (int dz = -1; dz <= 1; ++dz) {
                if (dx == 0 && dy == 0 && dz == 0) {
                    continue;
                }
                periodic_pair *pp = &out[k++];
                const int dir[3] = {dx, dy, dz};
                const double norm = sqrt((double)(dx * dx + dy * dy + dz * dz));
                double u[3], a[3], b[3];
                for (int ax = 0; ax < 3; ++ax) {
                    pp->dir[ax] = dir[ax];
                    u[ax] = dir[ax] / norm;
                    a[ax] = dir[ax] != 0 ? dir[ax] * (h - 0.3 * fabs(u[ax])) : c[ax];
                    b[ax] = a[ax] + sep * u[ax];
                    b[ax] = b[ax] > h ? b[ax] - 2.0 * h : b[ax] < -h ? b[ax] + 2.0 * h : b[ax];
                }
                pp->in[0] = (sim_vec4d){c[0], c[1], c[2], 0.45};
                pp->in[1] =
                    (sim_vec4d){c[0] + sep * u[0], c[1] + sep * u[1], c[2] + sep * u[2], 0.5};
                pp->across[0] = (sim_vec4d){a[0], a[1], a[2], 0.45};
                pp->across[1] = (sim_vec4d){b[0], b[1], b[2], 0.5};
                pp->vel[0] = (sim_vec4d){0.3, -0.2, 0.1, 1.0};
                pp->vel[1] = (sim_vec4d){-0.1, 0.4, 0.2, 2.0};
            }
        }
    }
}
