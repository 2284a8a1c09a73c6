/* SPDX-License-Identifier: MIT
 * nbsim — the physics formulas, written once, a file a sub-model. Included by physics.h twice
 * (float, then double) with these macros defined: SIM_R (real type), SIM_V3 / SIM_V4 (vectors),
 * SIM_PH (constants), SIM_FN(name) (adds _f / _d; SIM_FN(sim_normal) is the precision's part),
 * SIM_K(c) (a literal in SIM_R: never let a bare double literal promote the float path to FP64),
 * SIM_SQRT, SIM_RSQRT, SIM_PH_CUTOFF2, SIM_PH_GX/GY/GZ, SIM_ATM_S_MIN / SIM_ATM_S_MAX, which it
 * undefines at its end. No include guard on purpose: the one header kernels reach the formulas
 * by (through physics.h).
 *
 * Written for C and C++ (nvcc): no compound literals, no designated initialisers. */
#include "physics/box.h"        /* minimum images, wrapping, the box tests of culling */
#include "physics/normal.h"     /* the normal law and its dashpot */
#include "physics/tangential.h" /* the spring-dashpot-slider, sliding friction */
#include "physics/rolling.h"    /* rolling resistance */
#include "physics/contact.h"    /* pairs and walls composed of the parts above */
#include "physics/verlet.h"     /* velocity Verlet, spin */
#include "physics/atm.h"        /* Axilrod-Teller-Muto, directly and in pair terms */

/* Leave the macros free for the next instantiation. */
#undef SIM_R
#undef SIM_V3
#undef SIM_V4
#undef SIM_PH
#undef SIM_HIST
#undef SIM_FN
#undef SIM_K
#undef SIM_SQRT
#undef SIM_RSQRT
#undef SIM_CBRT
#undef SIM_ATM_RSQRT
#undef SIM_FABS
#undef SIM_PH_CUTOFF2
#undef SIM_PH_GX
#undef SIM_PH_GY
#undef SIM_PH_GZ
#undef SIM_ATM_S_MIN
#undef SIM_ATM_S_MAX
#undef SIM_ATM_H_MAX
#undef SIM_ATM_A2_MAX
#undef SIM_PER
#undef SIM_RINT
#undef SIM_FLOOR
#undef SIM_PERIOD_SLACK
