/* SPDX-License-Identifier: MIT
 * nbsim — private: what each backend implements behind sim_backend (one table per backend). */
#ifndef SIM_BACKEND_IMPL_H
#define SIM_BACKEND_IMPL_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_backend_ops {
    void (*destroy)(sim_backend *b);
    sim_status (*run_frame)(sim_backend *b, sim_frame_timing *t, sim_error *err);
    sim_status (*set_maps)(sim_backend *b, sim_pair_map pm, sim_triplet_map tm, sim_error *err);
    sim_status (*set_params)(sim_backend *b, const sim_params *p, sim_error *err);
    sim_status (*set_state)(sim_backend *b, const sim_state *s, sim_error *err);
    sim_status (*read_state)(sim_backend *b, sim_state *out, sim_vec3d *forces, sim_error *err);
    sim_status (*energy)(sim_backend *b, sim_energy *e, sim_error *err);
    sim_status (*export_positions)(sim_backend *b, sim_vec4f *pos, float *speed, int on_device,
                                   sim_error *err);
} sim_backend_ops;

/* Every backend struct begins with this header. */
struct sim_backend {
    const sim_backend_ops *ops;
    sim_backend_config config;
    sim_params params;
    uint32_t n;
    char device_name[128];
};

sim_status sim_cpu_backend_create(const sim_backend_config *c, const sim_params *p,
                                  const sim_state *s, sim_backend **out, sim_error *err);
sim_status sim_cuda_backend_create(const sim_backend_config *c, const sim_params *p,
                                   const sim_state *s, sim_backend **out, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_BACKEND_IMPL_H */
