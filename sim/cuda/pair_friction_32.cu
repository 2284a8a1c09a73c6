/* SPDX-License-Identifier: MIT
 * nbsim — the frictional pair sweeps of tile 32 (pair_friction_tile.cuh says why a file a tile). */
#define SIM_PAIR_FRICTION_TILE 32
#include "cuda/pair_friction_tile.cuh"
