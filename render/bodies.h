/* SPDX-License-Identifier: MIT
 * nbsim — the per-body GL buffers the sphere renderer draws: float4 (x, y, z, radius) and one
 * float scalar (what is coloured, e.g. speed). Two ways to fill them:
 *   interop: the buffers are registered with CUDA; map() hands out device pointers that a
 *            CUDA producer writes directly (no copy through the host), unmap() before drawing;
 *   host:    host_arrays() hands out staging arrays; upload() copies them with glBufferSubData.
 * render/ only moves bytes: it does not know what the bodies are. */
#ifndef RENDER_BODIES_H
#define RENDER_BODIES_H

#include "gl.h"
#include "nbsim/base.h"

struct cudaGraphicsResource;

typedef struct {
    GLuint pos_vbo, scalar_vbo;
    uint32_t count;
    int interop; /* registered with CUDA */
    int mapped;
    struct cudaGraphicsResource *res[2];
    sim_vec4f *d_pos; /* valid while mapped */
    float *d_scalar;
    sim_vec4f *h_pos; /* host staging, allocated when the host path is used */
    float *h_scalar;
    char reason[256]; /* why a device producer goes through the host; "" with interop */
    char mode[320];   /* for the overlay: "CUDA-GL interop", "host copy (...)", "host upload" */
} render_bodies;

/* Creates buffers for `count` bodies.
 *   device_producer, reason "" or NULL: registers them with CUDA; if that fails the host path
 *       is used and `reason` records why (the caller may pass it back next time);
 *   device_producer, reason given: a known failure, the host path without trying again;
 *   !device_producer: the producer is on the host (reason names it, e.g. "CPU backend"). */
sim_status render_bodies_create(render_bodies *b, uint32_t count, int device_producer,
                                const char *reason, sim_error *err);
void render_bodies_destroy(render_bodies *b);

/* Interop only: maps both buffers for CUDA. On failure the caller should switch to the host
 * path with render_bodies_disable_interop(). */
sim_status render_bodies_map(render_bodies *b, sim_error *err);
void render_bodies_unmap(render_bodies *b);
/* Unregisters from CUDA and switches to the host path, recording the reason in `mode`. */
sim_status render_bodies_disable_interop(render_bodies *b, const char *reason, sim_error *err);

/* Host path: the staging arrays (allocated on first use) and their upload into the buffers. */
sim_status render_bodies_host_arrays(render_bodies *b, sim_vec4f **pos, float **scalar,
                                     sim_error *err);
void render_bodies_upload(render_bodies *b);

/* Fills out[0..samples) with an evenly strided sample of one float per body: component 0..3 of
 * the float4 buffer, or 4 for the scalar buffer. Reads device memory while mapped (a strided
 * 2-D copy of `samples` floats, not the whole buffer), else the host staging arrays. Returns
 * the number written (0 when nothing is readable). */
uint32_t render_bodies_sample(const render_bodies *b, int component, float *out, uint32_t samples);

#endif /* RENDER_BODIES_H */
