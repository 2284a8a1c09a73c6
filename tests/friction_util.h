/* SPDX-License-Identifier: MIT
 * nbsim tests — small vector helpers of the friction tests (header-only). */
#ifndef NBSIM_FRICTION_UTIL_H
#define NBSIM_FRICTION_UTIL_H

#include <math.h>

#include "nbsim/base.h"

static const double kPi = 3.14159265358979323846;

static inline sim_vec4d v4(double x, double y, double z, double w) {
    sim_vec4d v = {x, y, z, w};
    return v;
}

static inline sim_vec3d v3(double x, double y, double z) {
    sim_vec3d v = {x, y, z};
    return v;
}

static inline sim_vec3d add3(sim_vec3d a, sim_vec3d b) {
    return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}

static inline sim_vec3d sub3(sim_vec3d a, sim_vec3d b) {
    return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}

static inline sim_vec3d scale3(double s, sim_vec3d a) {
    return v3(s * a.x, s * a.y, s * a.z);
}

static inline double dot3(sim_vec3d a, sim_vec3d b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static inline sim_vec3d cross3(sim_vec3d a, sim_vec3d b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

static inline double norm3(sim_vec3d a) {
    return sqrt(dot3(a, a));
}

static inline sim_vec3d xyz(sim_vec4d a) {
    return v3(a.x, a.y, a.z);
}

#endif /* NBSIM_FRICTION_UTIL_H */
