/* SPDX-License-Identifier: MIT
 * nbsim — GL timer queries. */
#include "gpu_timer.h"

#include <string.h>

void render_gpu_timer_create(render_gpu_timer *t) {
    memset(t, 0, sizeof *t);
    glGenQueries(RENDER_GPU_TIMER_RING, t->query);
    t->last_ms = -1.0;
}

void render_gpu_timer_destroy(render_gpu_timer *t) {
    if (t->query[0]) {
        glDeleteQueries(RENDER_GPU_TIMER_RING, t->query);
    }
    memset(t, 0, sizeof *t);
}

void render_gpu_timer_begin(render_gpu_timer *t) {
    if (t->pending[t->next]) {
        return; /* ring full: skip this frame rather than wait */
    }
    glBeginQuery(GL_TIME_ELAPSED, t->query[t->next]);
    t->active = 1;
}

void render_gpu_timer_end(render_gpu_timer *t) {
    if (!t->active) {
        return;
    }
    glEndQuery(GL_TIME_ELAPSED);
    t->active = 0;
    t->pending[t->next] = 1;
    t->next = (t->next + 1) % RENDER_GPU_TIMER_RING;
}

double render_gpu_timer_poll(render_gpu_timer *t) {
    /* Oldest first, from the slot after the newest issued one. */
    for (int k = 0; k < RENDER_GPU_TIMER_RING; ++k) {
        int i = (t->next + k) % RENDER_GPU_TIMER_RING;
        if (!t->pending[i]) {
            continue;
        }
        GLint ready = 0;
        glGetQueryObjectiv(t->query[i], GL_QUERY_RESULT_AVAILABLE, &ready);
        if (!ready) {
            break; /* later ones cannot be ready earlier */
        }
        GLuint64 ns = 0;
        glGetQueryObjectui64v(t->query[i], GL_QUERY_RESULT, &ns);
        t->pending[i] = 0;
        t->last_ms = (double)ns * 1e-6;
    }
    return t->last_ms;
}
