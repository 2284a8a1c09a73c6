/* SPDX-License-Identifier: MIT
 * nbsim — the trajectory recorder: capture on the simulation thread, write on a writer thread.
 *
 * Buffers move FREE -> CAPTURING (simulation thread enqueues the copies) -> QUEUED -> WRITING
 * (writer thread waits for the copies, reorders, writes) -> FREE. Frames are written in the order
 * they were captured (a sequence number), and the mutex is never held across a copy, a wait for
 * the GPU or a write. */
#define _POSIX_C_SOURCE 200809L
#include "session/recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/trajectory.h"
#include "physics/physics.h"

#define DUMP_SLOTS 2

typedef enum { SLOT_FREE, SLOT_CAPTURING, SLOT_QUEUED, SLOT_WRITING } slot_state;

typedef struct {
    sim_capture cap;  /* a float backend's frame (CUDA) */
    sim_state bodies; /* a double backend's (the CPU reference: read_state, in the user's order) */
    sim_vec3d *force; /* its last forces */
    slot_state state;
    uint64_t seq;
    uint64_t step;
    double time, box_half;
    int periodic;
} dump_slot;

struct sim_dump {
    char path[4096];
    int every;
    uint32_t n;
    int doubles; /* frames are the backend's state read whole (below), in double */
    sim_traj_writer *writer;
    dump_slot slot[DUMP_SLOTS];
    /* A backend that keeps its bodies in sorted slots: the frame is written from the capture's
     * slots, body i from slot_of[i] (4 bytes a body, where a reordered copy took 64), and the
     * spin in slots when the capture holds it in the user's order (slot_spin) */
    uint32_t *slot_of;
    sim_vec4f *slot_spin;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t queued, freed;
    uint64_t next_seq, write_seq;
    int closing;
    sim_status failed; /* the writer's first error */
    char failure[SIM_ERROR_MESSAGE_MAX];
    int failure_told; /* sim_dump_frame has returned it: close does not say it again */
    sim_dump_stats stats;
};

/* The writer's frame: wait for the copies, write the bodies in the user's order. */
static sim_status write_slot(sim_dump *d, dump_slot *s, sim_error *err) {
    if (d->doubles) {
        const sim_traj_frame f = {.n = d->n,
                                  .step = s->step,
                                  .time = s->time,
                                  .box_half = s->box_half,
                                  .periodic = s->periodic,
                                  .pos_d = s->bodies.pos,
                                  .vel_d = s->bodies.vel,
                                  .force_d = s->force,
                                  .spin_d = s->bodies.spin,
                                  .contacts = s->bodies.contacts,
                                  .contact_count = s->bodies.contact_count};
        return sim_traj_writer_write(d->writer, &f, err);
    }
    SIM_TRY(sim_capture_wait(&s->cap, err));
    const sim_capture *c = &s->cap;
    sim_traj_frame f = {.n = d->n,
                        .step = s->step,
                        .time = s->time,
                        .box_half = s->box_half,
                        .periodic = s->periodic,
                        .pos = c->pos,
                        .vel = c->vel,
                        .force = c->force,
                        .spin = c->spin};
    if (c->has_order) {
        if (d->slot_of == NULL) {
            d->slot_of = malloc((size_t)d->n * sizeof *d->slot_of);
        }
        if (c->spin_user_order && d->slot_spin == NULL) {
            d->slot_spin = malloc((size_t)d->n * sizeof *d->slot_spin);
        }
        if (d->slot_of == NULL || (c->spin_user_order && d->slot_spin == NULL)) {
            return sim_fail(err, SIM_OUT_OF_MEMORY,
                            "dump '%s': no memory for the order of %u bodies", d->path, d->n);
        }
        for (uint32_t slot = 0; slot < d->n; ++slot) { /* slot holds user body order[slot] */
            SIM_ASSERT(c->order[slot] < d->n);
            d->slot_of[c->order[slot]] = slot;
        }
        for (uint32_t slot = 0; c->spin_user_order && slot < d->n; ++slot) {
            d->slot_spin[slot] = c->spin[c->order[slot]];
        }
        f.slot_of = d->slot_of;
        f.spin = c->spin_user_order ? d->slot_spin : c->spin;
    }
    return sim_traj_writer_write(d->writer, &f, err);
}

static void *writer_main(void *arg) {
    sim_dump *d = arg;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        dump_slot *next = NULL;
        for (int i = 0; i < DUMP_SLOTS; ++i) {
            if (d->slot[i].state == SLOT_QUEUED && d->slot[i].seq == d->write_seq) {
                next = &d->slot[i];
            }
        }
        if (next == NULL) {
            int busy = 0;
            for (int i = 0; i < DUMP_SLOTS; ++i) {
                busy |= d->slot[i].state == SLOT_CAPTURING || d->slot[i].state == SLOT_QUEUED;
            }
            if (d->closing && !busy) {
                break;
            }
            pthread_cond_wait(&d->queued, &d->lock);
            continue;
        }
        next->state = SLOT_WRITING;
        const int failed = d->failed != SIM_OK;
        pthread_mutex_unlock(&d->lock);

        const double t0 = sim_now_ms();
        sim_error err;
        sim_error_clear(&err);
        /* After a failure the remaining captures are only drained (their copies waited for). */
        sim_status st = failed ? sim_capture_wait(&next->cap, &err) : write_slot(d, next, &err);
        const double ms = sim_now_ms() - t0;

        pthread_mutex_lock(&d->lock);
        if (st != SIM_OK && d->failed == SIM_OK) {
            d->failed = st;
            snprintf(d->failure, sizeof d->failure, "%s", err.message);
        }
        if (!failed && st == SIM_OK) {
            d->stats.write_ms_total += ms;
            d->stats.write_ms_max = ms > d->stats.write_ms_max ? ms : d->stats.write_ms_max;
            d->stats.frames = sim_traj_writer_frames(d->writer);
            d->stats.bytes = sim_traj_writer_bytes(d->writer);
        }
        next->state = SLOT_FREE;
        d->write_seq++;
        pthread_cond_broadcast(&d->freed);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static void free_slots(sim_dump *d) {
    for (int i = 0; i < DUMP_SLOTS; ++i) {
        sim_capture_free(&d->slot[i].cap);
        sim_state_free(&d->slot[i].bodies);
        free(d->slot[i].force);
        d->slot[i].force = NULL;
    }
    free(d->slot_of);
    free(d->slot_spin);
    d->slot_of = NULL;
    d->slot_spin = NULL;
}

static void free_dump(sim_dump *d) {
    free_slots(d);
    free(d);
}

/* The slots' buffers for d->n bodies of backend: captures, or states and forces in double. */
static sim_status alloc_slots(sim_dump *d, const sim_backend *backend, sim_error *err) {
    sim_status st = SIM_OK;
    for (int i = 0; i < DUMP_SLOTS && st == SIM_OK; ++i) {
        if (!d->doubles) {
            st = sim_backend_capture_alloc(backend, &d->slot[i].cap, err);
            continue;
        }
        st = sim_state_alloc(&d->slot[i].bodies, d->n, err);
        d->slot[i].force = st == SIM_OK ? calloc(d->n, sizeof *d->slot[i].force) : NULL;
        if (st == SIM_OK && d->slot[i].force == NULL) {
            st = sim_fail(err, SIM_OUT_OF_MEMORY,
                          "dump '%s': no memory for the forces of %u bodies", d->path, d->n);
        }
    }
    return st;
}

int sim_dump_variable_n(const sim_dump *d) {
    return sim_traj_format_from_path(d->path) != SIM_TRAJ_NETCDF;
}

void sim_dump_drain(sim_dump *d) {
    pthread_mutex_lock(&d->lock);
    for (;;) {
        int busy = 0;
        for (int i = 0; i < DUMP_SLOTS; ++i) {
            busy |= d->slot[i].state != SLOT_FREE;
        }
        if (!busy) {
            break;
        }
        pthread_cond_wait(&d->freed, &d->lock);
    }
    pthread_mutex_unlock(&d->lock);
}

sim_status sim_dump_rebind(sim_dump *d, const sim_backend *backend, sim_error *err) {
    /* drained: the writer waits for a queued frame and touches none of this */
    free_slots(d);
    d->n = sim_backend_body_count(backend);
    return alloc_slots(d, backend, err);
}

sim_status sim_dump_open(sim_dump **out, const char *path, int every, const sim_backend *backend,
                         sim_error *err) {
    *out = NULL;
    if (every < 1) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "--dump-every %d must be >= 1 (frames)", every);
    }
    sim_dump *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "dump '%s': no memory", path);
    }
    snprintf(d->path, sizeof d->path, "%s", path);
    d->every = every;
    d->n = sim_backend_body_count(backend);
    /* The CPU reference's frames are its double state, read as a program reads it (no device to
     * overlap with: a capture would only convert it to floats), so text trajectories of a CPU run
     * hold its state bit for bit (trajectory.h). A ParaView series of a run with friction draws
     * the tangential forces from the contacts' springs, which only a read of the state carries:
     * on the GPU that read waits for the frame, a cost the .pvd's other frames do not have. */
    d->doubles = sim_backend_get_config(backend)->kind == SIM_BACKEND_CPU ||
                 (sim_traj_format_from_path(path) == SIM_TRAJ_VTK &&
                  sim_params_have_friction(sim_backend_get_params(backend)));
    sim_status st = alloc_slots(d, backend, err);
    if (st == SIM_OK) {
        st = sim_traj_writer_open_params(&d->writer, path, d->n, sim_backend_get_params(backend),
                                          err);
    }
    if (st == SIM_OK) {
        pthread_mutex_init(&d->lock, NULL);
        pthread_cond_init(&d->queued, NULL);
        pthread_cond_init(&d->freed, NULL);
        if (pthread_create(&d->thread, NULL, writer_main, d) != 0) {
            pthread_mutex_destroy(&d->lock);
            pthread_cond_destroy(&d->queued);
            pthread_cond_destroy(&d->freed);
            (void)sim_traj_writer_close(d->writer, NULL);
            remove(path);
            st =
                sim_fail(err, SIM_OUT_OF_MEMORY, "dump '%s': cannot start the writer thread", path);
        }
    }
    if (st != SIM_OK) {
        free_dump(d);
        return st;
    }
    *out = d;
    return SIM_OK;
}

sim_status sim_dump_frame(sim_dump *d, sim_backend *backend, uint64_t frame, uint64_t steps,
                          double sim_time, double *ms, sim_error *err) {
    if (ms != NULL) {
        *ms = 0.0;
    }
    const double t0 = sim_now_ms();
    pthread_mutex_lock(&d->lock);
    if (d->failed != SIM_OK) {
        const sim_status st = d->failed;
        d->failure_told = 1;
        pthread_mutex_unlock(&d->lock);
        return sim_fail(err, st, "%s", d->failure);
    }
    pthread_mutex_unlock(&d->lock);
    if (frame % (uint64_t)d->every != 0) {
        return SIM_OK;
    }
    const uint32_t n = sim_backend_body_count(backend);
    if (n != d->n) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "dump '%s': the simulation now has %u bodies, the dump was opened for %u; "
                        "it ends with its %llu frames (start a new dump)",
                        d->path, n, d->n, (unsigned long long)d->stats.dumped);
    }
    pthread_mutex_lock(&d->lock);
    dump_slot *s = NULL;
    const double wait0 = sim_now_ms();
    while (s == NULL) { /* the writer is two frames behind: wait (frames are never dropped) */
        for (int i = 0; i < DUMP_SLOTS && s == NULL; ++i) {
            s = d->slot[i].state == SLOT_FREE ? &d->slot[i] : NULL;
        }
        if (s == NULL) {
            pthread_cond_wait(&d->freed, &d->lock);
        }
    }
    const double stall = sim_now_ms() - wait0;
    s->state = SLOT_CAPTURING;
    pthread_mutex_unlock(&d->lock);

    const sim_status st = d->doubles ? sim_backend_read_state(backend, &s->bodies, s->force, err)
                                     : sim_backend_capture(backend, &s->cap, err);

    pthread_mutex_lock(&d->lock);
    if (st != SIM_OK) {
        s->state = SLOT_FREE;
        pthread_mutex_unlock(&d->lock);
        return st;
    }
    s->step = steps;
    s->time = sim_time;
    s->box_half = sim_backend_get_params(backend)->box_half;
    s->periodic = sim_backend_get_params(backend)->periodic;
    s->seq = d->next_seq++;
    s->state = SLOT_QUEUED;
    const double cost = sim_now_ms() - t0;
    d->stats.dumped++;
    d->stats.sim_ms_total += cost;
    d->stats.sim_ms_max = cost > d->stats.sim_ms_max ? cost : d->stats.sim_ms_max;
    d->stats.stall_ms_total += stall;
    pthread_cond_signal(&d->queued);
    pthread_mutex_unlock(&d->lock);
    if (ms != NULL) {
        *ms = cost;
    }
    return SIM_OK;
}

void sim_dump_get_stats(sim_dump *d, sim_dump_stats *stats) {
    pthread_mutex_lock(&d->lock);
    *stats = d->stats;
    pthread_mutex_unlock(&d->lock);
}

sim_status sim_dump_close(sim_dump *d, sim_dump_stats *stats, sim_error *err) {
    if (d == NULL) {
        return SIM_OK;
    }
    pthread_mutex_lock(&d->lock);
    d->closing = 1;
    pthread_cond_broadcast(&d->queued);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    sim_error close_err;
    sim_error_clear(&close_err);
    /* The writer's first failure is the one reported, once: not again here when sim_dump_frame
     * has returned it, and not the close's consequent error after it. */
    sim_status st = SIM_OK;
    const sim_status closed = sim_traj_writer_close(d->writer, &close_err);
    if (d->failed != SIM_OK) {
        st = d->failure_told ? SIM_OK : d->failed;
        if (st != SIM_OK) {
            sim_fail(err, st, "%s", d->failure);
        }
    } else if (closed != SIM_OK) {
        st = closed;
        sim_fail(err, st, "%s", close_err.message);
    }
    if (stats != NULL) {
        *stats = d->stats;
    }
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->queued);
    pthread_cond_destroy(&d->freed);
    free_dump(d);
    return st;
}

void sim_dump_summary(const char *path, int every, const sim_dump_stats *s, char *out, size_t cap) {
    const double written = s->frames > 0 ? (double)s->frames : 1.0;
    const double dumped = s->dumped > 0 ? (double)s->dumped : 1.0;
    char stall[96] = "";
    if (s->stall_ms_total > 0.01 && s->stall_ms_total > 0.05 * s->sim_ms_total) {
        snprintf(stall, sizeof stall, ", %.3f of it waiting for the writer",
                 s->stall_ms_total / dumped);
    }
    snprintf(out, cap,
             "dump: %llu frames (%.1f MB) to %s, every %d frame%s; simulation thread %.3f ms per "
             "dumped frame (max %.3f%s), writer %.2f ms per frame (max %.2f)",
             (unsigned long long)s->frames, (double)s->bytes / 1e6, path, every,
             every == 1 ? "" : "s", s->sim_ms_total / dumped, s->sim_ms_max, stall,
             s->write_ms_total / written, s->write_ms_max);
}
