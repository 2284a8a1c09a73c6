/* SPDX-License-Identifier: MIT
 * nbsim — GPU time of the draw calls, from GL timer queries (GL_TIME_ELAPSED). Results are read
 * a few frames late from a ring of queries, so asking never stalls the pipeline. */
#ifndef RENDER_GPU_TIMER_H
#define RENDER_GPU_TIMER_H

#include "gl.h"

#define RENDER_GPU_TIMER_RING 4

typedef struct {
    GLuint query[RENDER_GPU_TIMER_RING];
    int pending[RENDER_GPU_TIMER_RING];
    int next;
    int active;     /* between begin and end */
    double last_ms; /* newest completed measurement, or -1 when none yet */
} render_gpu_timer;

void render_gpu_timer_create(render_gpu_timer *t);
void render_gpu_timer_destroy(render_gpu_timer *t);
/* Brackets the draw calls to time. begin() skips (and end() then does nothing) when every
 * query of the ring is still in flight. */
void render_gpu_timer_begin(render_gpu_timer *t);
void render_gpu_timer_end(render_gpu_timer *t);
/* Collects finished queries; returns the newest time [ms] or -1. */
double render_gpu_timer_poll(render_gpu_timer *t);

#endif /* RENDER_GPU_TIMER_H */
