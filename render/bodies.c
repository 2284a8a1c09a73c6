/* SPDX-License-Identifier: MIT
 * nbsim — per-body GL buffers, CUDA-GL interop and its host-copy fallback. */
#include "bodies.h"

#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sim_status alloc_buffer(GLuint *vbo, size_t bytes, sim_error *err) {
    glGenBuffers(1, vbo);
    glBindBuffer(GL_ARRAY_BUFFER, *vbo);
    (void)glGetError();
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_DYNAMIC_DRAW);
    GLenum e = glGetError();
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    if (e != GL_NO_ERROR) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot allocate a %.1f MB GL buffer (GL error 0x%x)", (double)bytes / 1e6,
                        e);
    }
    return SIM_OK;
}

static void set_host_mode(render_bodies *b, const char *reason) {
    snprintf(b->reason, sizeof b->reason, "%s", reason);
    snprintf(b->mode, sizeof b->mode, "host copy (interop unavailable: %s)", reason);
}

/* Registration fails without an NVIDIA GL driver on the CUDA device (Mesa, another GPU; CUDA
 * then reports e.g. error 304, operating system call failed): that is expected, not fatal. */
static int try_register(render_bodies *b, char *reason, size_t cap) {
    GLuint vbos[2] = {b->pos_vbo, b->scalar_vbo};
    for (int i = 0; i < 2; ++i) {
        cudaError_t e = cudaGraphicsGLRegisterBuffer(&b->res[i], vbos[i],
                                                     cudaGraphicsRegisterFlagsWriteDiscard);
        if (e != cudaSuccess) {
            snprintf(reason, cap, "cudaGraphicsGLRegisterBuffer: %s, error %d",
                     cudaGetErrorString(e), (int)e);
            (void)cudaGetLastError(); /* not sticky; clear it so later checks stay clean */
            if (i == 1) {
                cudaGraphicsUnregisterResource(b->res[0]);
            }
            b->res[0] = b->res[1] = NULL;
            return 0;
        }
    }
    return 1;
}

sim_status render_bodies_create(render_bodies *b, uint32_t count, int device_producer,
                                const char *reason, sim_error *err) {
    memset(b, 0, sizeof *b);
    b->count = count;
    size_t n = count > 0 ? count : 1;
    sim_status st = alloc_buffer(&b->pos_vbo, n * sizeof(sim_vec4f), err);
    if (st == SIM_OK) {
        st = alloc_buffer(&b->scalar_vbo, n * sizeof(float), err);
    }
    if (st != SIM_OK) {
        render_bodies_destroy(b);
        return st;
    }
    char why[256];
    if (!device_producer) {
        snprintf(b->mode, sizeof b->mode, "host upload (%s)", reason ? reason : "host producer");
    } else if (reason != NULL && reason[0] != '\0') {
        set_host_mode(b, reason);
    } else if (try_register(b, why, sizeof why)) {
        b->interop = 1;
        snprintf(b->mode, sizeof b->mode, "CUDA-GL interop");
    } else {
        set_host_mode(b, why);
    }
    return SIM_OK;
}

void render_bodies_destroy(render_bodies *b) {
    render_bodies_unmap(b);
    for (int i = 0; i < 2; ++i) {
        if (b->res[i] != NULL) {
            cudaGraphicsUnregisterResource(b->res[i]);
            b->res[i] = NULL;
        }
    }
    if (b->pos_vbo) {
        glDeleteBuffers(1, &b->pos_vbo);
    }
    if (b->scalar_vbo) {
        glDeleteBuffers(1, &b->scalar_vbo);
    }
    free(b->h_pos);
    free(b->h_scalar);
    memset(b, 0, sizeof *b);
}

sim_status render_bodies_map(render_bodies *b, sim_error *err) {
    SIM_ASSERT(b->interop && !b->mapped);
    cudaError_t e = cudaGraphicsMapResources(2, b->res, 0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return sim_fail(err, SIM_CUDA, "cudaGraphicsMapResources: %s", cudaGetErrorString(e));
    }
    size_t bytes[2] = {0, 0};
    void *ptr[2] = {NULL, NULL};
    for (int i = 0; i < 2 && e == cudaSuccess; ++i) {
        e = cudaGraphicsResourceGetMappedPointer(&ptr[i], &bytes[i], b->res[i]);
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cudaGraphicsUnmapResources(2, b->res, 0);
        return sim_fail(err, SIM_CUDA, "cudaGraphicsResourceGetMappedPointer: %s",
                        cudaGetErrorString(e));
    }
    /* Mapping orders GL's use of the buffers before later work on stream 0 only; the producer
     * may write from its own (non-blocking) stream, so wait for the map to complete. */
    e = cudaStreamSynchronize(0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cudaGraphicsUnmapResources(2, b->res, 0);
        return sim_fail(err, SIM_CUDA, "cudaGraphicsMapResources: %s", cudaGetErrorString(e));
    }
    b->d_pos = ptr[0];
    b->d_scalar = ptr[1];
    b->mapped = 1;
    return SIM_OK;
}

void render_bodies_unmap(render_bodies *b) {
    if (b->mapped) {
        /* Unmapping orders the CUDA writes before any later GL use of the buffers. */
        cudaGraphicsUnmapResources(2, b->res, 0);
        b->mapped = 0;
        b->d_pos = NULL;
        b->d_scalar = NULL;
    }
}

sim_status render_bodies_disable_interop(render_bodies *b, const char *reason, sim_error *err) {
    (void)err;
    render_bodies_unmap(b);
    for (int i = 0; i < 2; ++i) {
        if (b->res[i] != NULL) {
            cudaGraphicsUnregisterResource(b->res[i]);
            b->res[i] = NULL;
        }
    }
    (void)cudaGetLastError();
    b->interop = 0;
    set_host_mode(b, reason);
    return SIM_OK;
}

sim_status render_bodies_host_arrays(render_bodies *b, sim_vec4f **pos, float **scalar,
                                     sim_error *err) {
    size_t n = b->count > 0 ? b->count : 1;
    if (b->h_pos == NULL) {
        b->h_pos = aligned_alloc(16, n * sizeof(sim_vec4f));
        b->h_scalar = malloc(n * sizeof(float));
        if (b->h_pos == NULL || b->h_scalar == NULL) {
            free(b->h_pos);
            free(b->h_scalar);
            b->h_pos = NULL;
            b->h_scalar = NULL;
            return sim_fail(err, SIM_OUT_OF_MEMORY, "no host memory to stage %u bodies", b->count);
        }
        memset(b->h_pos, 0, n * sizeof(sim_vec4f));
        memset(b->h_scalar, 0, n * sizeof(float));
    }
    *pos = b->h_pos;
    *scalar = b->h_scalar;
    return SIM_OK;
}

void render_bodies_upload(render_bodies *b) {
    if (b->h_pos == NULL || b->count == 0) {
        return;
    }
    /* Orphan-then-fill: the driver may hand out fresh storage instead of waiting for the GPU
     * to finish drawing the previous frame from this buffer. */
    glBindBuffer(GL_ARRAY_BUFFER, b->pos_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(b->count * sizeof(sim_vec4f)), NULL,
                 GL_DYNAMIC_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(b->count * sizeof(sim_vec4f)), b->h_pos);
    glBindBuffer(GL_ARRAY_BUFFER, b->scalar_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(b->count * sizeof(float)), NULL, GL_DYNAMIC_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(b->count * sizeof(float)), b->h_scalar);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

uint32_t render_bodies_sample(const render_bodies *b, int component, float *out, uint32_t samples) {
    SIM_ASSERT(component >= 0 && component <= 4);
    if (b->count == 0 || samples == 0) {
        return 0;
    }
    if (samples > b->count) {
        samples = b->count;
    }
    size_t stride = b->count / samples; /* bodies between samples */
    size_t elem = component == 4 ? sizeof(float) : sizeof(sim_vec4f);
    size_t offset = component == 4 ? 0 : (size_t)component * sizeof(float);
    const char *base = NULL;
    if (b->mapped) {
        base = component == 4 ? (const char *)b->d_scalar : (const char *)b->d_pos;
        cudaError_t e = cudaMemcpy2D(out, sizeof(float), base + offset, stride * elem,
                                     sizeof(float), samples, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        return samples;
    }
    base = component == 4 ? (const char *)b->h_scalar : (const char *)b->h_pos;
    if (base == NULL) {
        return 0;
    }
    for (uint32_t i = 0; i < samples; ++i) {
        memcpy(&out[i], base + (size_t)i * stride * elem + offset, sizeof(float));
    }
    return samples;
}
