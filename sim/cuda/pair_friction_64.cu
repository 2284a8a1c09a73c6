/* SPDX-License-Identifier: MIT
 * nbsim — the frictional pair sweeps of tile 64 (pair_friction_tile.cuh says why a file a tile). */
#define SIM_PAIR_FRICTION_TILE 64
#include "cuda/pair_friction_tile.cuh"
