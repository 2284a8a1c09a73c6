/* SPDX-License-Identifier: MIT
 * nbsim tests — deterministic pseudo-random numbers (splitmix64), so every run draws the same
 * configurations. */
#ifndef NBSIM_TEST_RNG_H
#define NBSIM_TEST_RNG_H

#include <stdint.h>

/* Uniform in [lo, hi), advancing *state. */
static inline double test_rnd(uint64_t *state, double lo, double hi) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) * 0x1.0p-53);
}

#endif /* NBSIM_TEST_RNG_H */
