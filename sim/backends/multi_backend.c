/* SPDX-License-Identifier: MIT
 * nbsim — the multi backend (multi.h): the ranks a process runs behind one sim_backend. Each
 * local rank is a member backend (CUDA on its own device, or the CPU reference) with its rank,
 * the world and a communicator; local rank 0 runs on the calling thread, the others on worker
 * threads, one each, created once. An operation runs on every local rank at once (collectives:
 * every member steps, sums its forces with the others, integrates) and answers with rank 0's
 * result: the ranks are bit-identical, so its state is everyone's. Reads that are not collective
 * (state, positions, captures) ask rank 0 alone. A process of a run over several processes runs
 * one local rank (no worker thread) or several (--gpus G: G consecutive global ranks).
 *
 * A composite: each member is stepped by its own stepper (step/stepper.h), which knows it is a
 * rank (it reduces the forces, never reads the stop flag, sorts on the clock alone); this file
 * takes no step decision, it runs the members' frames at once and merges what they report.
 *
 * A frame's timing is rank 0's, except: the phases and the step are the slowest local rank's
 * (the step waits for it at the all-reduce; its own all-reduce, comm_ms, waited least: the transfer
 * itself), so they add up to its step as one rank's do, and the culled lists' lengths, their
 * tests, touching pairs and neighbour lists' memory summed (each rank holds its rows); of the
 * neighbour lists' rebuilds, fallbacks and peak the most of one rank. */
#define _POSIX_C_SOURCE 200809L
#include "step/backend_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct multi_backend multi_backend;
typedef sim_status (*rank_job)(multi_backend *m, int k, void *arg, sim_error *err);

typedef struct {
    multi_backend *m;
    int k;
} worker_arg;

struct multi_backend {
    sim_backend base; /* first: the interface header; its config.multi says which ranks */
    int local;        /* ranks in this process */
    int cuda;         /* members are CUDA backends, local rank k on device multi.device + k */
    sim_backend *member[SIM_MAX_LOCAL_RANKS];
    sim_comm *comm[SIM_MAX_LOCAL_RANKS]; /* NCCL communicators (CUDA), else the host group's */
    sim_host_group *host;
    unsigned char id[SIM_NCCL_ID_BYTES];
    /* the workers (local ranks 1..local-1) and the job they run */
    pthread_t thread[SIM_MAX_LOCAL_RANKS];
    worker_arg warg[SIM_MAX_LOCAL_RANKS];
    int threads; /* started */
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    int sync_made;
    unsigned long generation;
    int pending, quit;
    rank_job job;
    void *arg;
    sim_status status[SIM_MAX_LOCAL_RANKS];
    sim_error errs[SIM_MAX_LOCAL_RANKS];
    /* per-rank results of the jobs below */
    sim_frame_timing timing[SIM_MAX_LOCAL_RANKS];
    sim_energy energy[SIM_MAX_LOCAL_RANKS];
    /* creation */
    const sim_params *create_params;
    const sim_state *create_state;
};

static const sim_backend_ops multi_ops;

static multi_backend *as_multi(sim_backend *b) {
    return (multi_backend *)b;
}

/* Runs the job for local rank k on this thread, on the rank's device. */
static sim_status run_one(multi_backend *m, int k, rank_job job, void *arg, sim_error *err) {
    if (m->cuda) {
        SIM_TRY(sim_cuda_use_device(m->base.config.multi.device + k, err));
    }
    return job(m, k, arg, err);
}

static void *worker(void *p) {
    const worker_arg *w = p;
    multi_backend *m = w->m;
    unsigned long seen = 0;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (m->generation == seen && !m->quit) {
            pthread_cond_wait(&m->go, &m->lock);
        }
        if (m->quit) {
            break;
        }
        seen = m->generation;
        rank_job job = m->job;
        void *arg = m->arg;
        pthread_mutex_unlock(&m->lock);
        const sim_status st = run_one(m, w->k, job, arg, &m->errs[w->k]);
        pthread_mutex_lock(&m->lock);
        m->status[w->k] = st;
        if (--m->pending == 0) {
            pthread_cond_signal(&m->done);
        }
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* Runs the job on every local rank at once (rank 0 here) and waits for all; the first failing
 * rank's error is the answer. */
static sim_status run_all(multi_backend *m, rank_job job, void *arg, sim_error *err) {
    if (m->threads > 0) {
        pthread_mutex_lock(&m->lock);
        m->job = job;
        m->arg = arg;
        m->pending = m->threads;
        m->generation++;
        pthread_cond_broadcast(&m->go);
        pthread_mutex_unlock(&m->lock);
    }
    m->status[0] = run_one(m, 0, job, arg, &m->errs[0]);
    if (m->threads > 0) {
        pthread_mutex_lock(&m->lock);
        while (m->pending > 0) {
            pthread_cond_wait(&m->done, &m->lock);
        }
        pthread_mutex_unlock(&m->lock);
    }
    for (int k = 0; k <= m->threads; ++k) {
        if (m->status[k] != SIM_OK) {
            if (err != NULL) {
                *err = m->errs[k];
            }
            return m->status[k];
        }
    }
    return SIM_OK;
}

/* The maps the multi backend was switched to (sim_backend_set_maps plans them on the header
 * only), passed on to the members before they step. Host-only planning. */
static sim_status sync_maps(multi_backend *m, sim_error *err) {
    const sim_backend_config *c = &m->base.config;
    for (int k = 0; k < m->local; ++k) {
        const sim_backend_config *mc = &m->member[k]->config;
        if (mc->pair_map != c->pair_map || mc->triplet_map != c->triplet_map) {
            SIM_TRY(sim_backend_set_maps(m->member[k], c->pair_map, c->triplet_map, err));
        }
    }
    return SIM_OK;
}

/* ---- the jobs ---- */

static sim_status job_create(multi_backend *m, int k, void *arg, sim_error *err) {
    const sim_multi_config *mc = &m->base.config.multi;
    const int rank = mc->rank + k;
    if (m->cuda) {
        SIM_TRY(sim_nccl_comm_create(m->id, mc->world, rank, &m->comm[k], err));
    } else {
        m->comm[k] = sim_host_comm(m->host, k);
    }
    sim_backend_config config = m->base.config;
    memset(&config.multi, 0, sizeof config.multi); /* a member is one rank */
    config.stop = NULL; /* ranks stop together, between frames (nbsim/internal/backend.h) */
    const sim_rank r = {rank, mc->world, mc->device + k, m->comm[k]};
    return m->cuda ? sim_cuda_backend_create(&config, m->create_params, m->create_state, &r,
                                             &m->member[k], err)
                   : sim_cpu_backend_create(&config, m->create_params, m->create_state, &r,
                                            &m->member[k], err);
}

static sim_status job_destroy(multi_backend *m, int k, void *arg, sim_error *err) {
    sim_backend_destroy(m->member[k]);
    m->member[k] = NULL;
    if (m->cuda) {
        sim_comm_destroy(m->comm[k]);
    }
    m->comm[k] = NULL;
    return SIM_OK;
}

static sim_status job_frame(multi_backend *m, int k, void *arg, sim_error *err) {
    return sim_backend_run_frame(m->member[k], &m->timing[k], err);
}

static sim_status job_set_params(multi_backend *m, int k, void *arg, sim_error *err) {
    return sim_backend_set_params(m->member[k], (const sim_params *)arg, err);
}

static sim_status job_set_state(multi_backend *m, int k, void *arg, sim_error *err) {
    return sim_backend_set_state(m->member[k], (const sim_state *)arg, err);
}

static sim_status job_energy(multi_backend *m, int k, void *arg, sim_error *err) {
    return sim_backend_energy(m->member[k], &m->energy[k], err);
}

static sim_status job_set_cull(multi_backend *m, int k, void *arg, sim_error *err) {
    return sim_backend_set_cull(m->member[k], m->base.config.cull, err);
}

typedef struct {
    sim_state *out;
    sim_vec3d *forces;
    sim_vec4f *pos;
    float *speed;
    int on_device;
    sim_capture *capture;
    uint32_t every;
} read_args;

static sim_status job_read_state(multi_backend *m, int k, void *arg, sim_error *err) {
    const read_args *a = arg;
    return sim_backend_read_state(m->member[k], a->out, a->forces, err);
}

static sim_status job_export(multi_backend *m, int k, void *arg, sim_error *err) {
    const read_args *a = arg;
    return sim_backend_export_sample(m->member[k], a->every, a->pos, a->speed, a->on_device, err);
}

static sim_status job_capture(multi_backend *m, int k, void *arg, sim_error *err) {
    const read_args *a = arg;
    return m->member[k]->ops->capture(m->member[k], a->capture, err);
}

/* Each rank's list into its own buffer (the lists of a culled step are the ranks' rows: the
 * union is the whole list). */
typedef enum { GATHER_TILE_PAIRS, GATHER_CONTACTS, GATHER_TILE_TRIPLES } gather_list;
typedef struct {
    gather_list list;
    void *buf[SIM_MAX_LOCAL_RANKS];
    uint64_t cap, count[SIM_MAX_LOCAL_RANKS];
} gather_args;

static sim_status job_gather(multi_backend *m, int k, void *arg, sim_error *err) {
    gather_args *a = arg;
    sim_backend *b = m->member[k];
    switch (a->list) {
    case GATHER_CONTACTS:
        return sim_backend_contacts(b, a->buf[k], a->cap, &a->count[k], err);
    case GATHER_TILE_TRIPLES:
        return sim_backend_tile_triples(b, a->buf[k], a->cap, &a->count[k], err);
    default:
        return sim_backend_tile_pairs(b, a->buf[k], a->cap, &a->count[k], err);
    }
}

/* ---- the ops ---- */

static void multi_destroy(sim_backend *base) {
    multi_backend *m = as_multi(base);
    if (m->member[0] != NULL || m->threads > 0) {
        (void)run_all(m, job_destroy, NULL, NULL);
    }
    if (m->threads > 0) {
        pthread_mutex_lock(&m->lock);
        m->quit = 1;
        pthread_cond_broadcast(&m->go);
        pthread_mutex_unlock(&m->lock);
        for (int k = 1; k <= m->threads; ++k) {
            pthread_join(m->thread[k], NULL);
        }
    }
    if (m->sync_made) {
        pthread_cond_destroy(&m->go);
        pthread_cond_destroy(&m->done);
        pthread_mutex_destroy(&m->lock);
    }
    sim_host_group_destroy(m->host);
    free(m);
}

static sim_status multi_run_frame(sim_backend *base, sim_frame_timing *t, sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_TRY(sync_maps(m, err));
    const sim_status st = run_all(m, job_frame, NULL, err);
    *t = m->timing[0];
    /* The phases, the step among them, are the slowest rank's, whole: they add up to its step,
     * and its exchange is the one that waited least (the transfer itself). */
    int slowest = 0;
    for (int k = 1; k < m->local; ++k) {
        slowest = m->timing[k].step_ms > m->timing[slowest].step_ms ? k : slowest;
    }
    const sim_frame_timing *slow = &m->timing[slowest];
#define MULTI_PHASE(id, field, name, what) t->field = slow->field;
    SIM_FRAME_PHASE_LIST(MULTI_PHASE)
#undef MULTI_PHASE
    t->step_ms = slow->step_ms;
    t->integrate_ms = slow->integrate_ms;
    t->contact_ms = slow->contact_ms;
    for (int k = 1; k < m->local; ++k) {
        const sim_frame_timing *r = &m->timing[k];
#define MULTI_MAX(field) t->field = r->field > t->field ? r->field : t->field
        MULTI_MAX(cull_fallback_steps);
        MULTI_MAX(cull_capped);
        MULTI_MAX(nlist_rebuilds);
        MULTI_MAX(nlist_fallback_steps);
        MULTI_MAX(nlist_capped);
        MULTI_MAX(nlist_peak);
#undef MULTI_MAX
        if (t->culled) {
            t->tile_pairs += r->tile_pairs;
            t->pair_blocks += r->pair_blocks;
            t->super_pairs += r->super_pairs;
            t->candidate_tests += r->candidate_tests; /* each rank tests and finds its pairs */
            t->contacts += r->contacts;
            t->nlist_bytes += r->nlist_bytes;
        }
        if (t->triplet_culled) { /* the ranks' rows; the neighbour pairs are every rank's */
            t->tile_triples += r->tile_triples;
            t->triplet_blocks += r->triplet_blocks;
        }
    }
    t->ranks = base->config.multi.world;
    return st;
}

static sim_status multi_set_params(sim_backend *base, const sim_params *p, sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_TRY(sync_maps(m, err));
    SIM_TRY(run_all(m, job_set_params, (void *)p, err));
    base->params = *p;
    return SIM_OK;
}

static sim_status multi_set_state(sim_backend *base, const sim_state *s, sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_TRY(sync_maps(m, err));
    return run_all(m, job_set_state, (void *)s, err);
}

static sim_status multi_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces,
                                   sim_error *err) {
    read_args a = {out, forces, NULL, NULL, 0, NULL, 1};
    return run_one(as_multi(base), 0, job_read_state, &a, err);
}

sim_status sim_multi_read_rank(sim_backend *base, int k, sim_state *out, sim_vec3d *forces,
                               sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_ASSERT(base->ops == &multi_ops && k >= 0 && k < m->local);
    read_args a = {out, forces, NULL, NULL, 0, NULL, 1};
    return run_one(m, k, job_read_state, &a, err);
}

typedef struct {
    double *v;
    size_t count;
} host_values;

/* Every rank joins the all-reduce (a collective of the run's communicator); a process's values
 * count once: its local rank 0 brings them, the others zeros, and rank 0's sums are the answer. */
static sim_status job_sum_host(multi_backend *m, int k, void *arg, sim_error *err) {
    const host_values *h = arg;
    if (k == 0) {
        return sim_comm_allreduce_host(m->comm[0], h->v, h->count, err);
    }
    double zeros[SIM_COMM_HOST_MAX] = {0};
    return sim_comm_allreduce_host(m->comm[k], zeros, h->count, err);
}

sim_status sim_multi_sum_over_processes(sim_backend *base, double *v, size_t count,
                                        sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_ASSERT(base->ops == &multi_ops && m->local < base->config.multi.world &&
               count <= SIM_COMM_HOST_MAX);
    host_values h = {v, count};
    return run_all(m, job_sum_host, &h, err);
}

static sim_status multi_energy(sim_backend *base, sim_energy *e, sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_TRY(sync_maps(m, err));
    SIM_TRY(run_all(m, job_energy, NULL, err));
    *e = m->energy[0];
    return SIM_OK;
}

static sim_status multi_export(sim_backend *base, uint32_t every, sim_vec4f *pos, float *speed,
                               int on_device, sim_error *err) {
    read_args a = {NULL, NULL, pos, speed, on_device, NULL, every};
    return run_one(as_multi(base), 0, job_export, &a, err);
}

static sim_status multi_capture(sim_backend *base, sim_capture *c, sim_error *err) {
    read_args a = {NULL, NULL, NULL, NULL, 0, c, 1};
    return run_one(as_multi(base), 0, job_capture, &a, err);
}

static sim_status multi_set_cull(sim_backend *base, sim_error *err) {
    multi_backend *m = as_multi(base);
    SIM_TRY(sync_maps(m, err));
    return run_all(m, job_set_cull, NULL, err);
}

/* Tile pairs, contacts or tile triples: culled, the union of the ranks' rows (this process's
 * ranks); not culled, rank 0 alone (it enumerates every pair). */
static sim_status gather(multi_backend *m, gather_list list, void *out, size_t width, uint64_t cap,
                         uint64_t *count, sim_error *err) {
    SIM_TRY(sync_maps(m, err));
    const int ranks = sim_backend_culling(&m->base) ? m->local : 1;
    gather_args a;
    memset(&a, 0, sizeof a);
    a.list = list;
    a.cap = cap;
    sim_status st = SIM_OK;
    for (int k = 0; k < ranks && st == SIM_OK; ++k) {
        a.buf[k] = cap > 0 ? malloc((size_t)cap * width) : NULL;
        if (cap > 0 && a.buf[k] == NULL) {
            st = sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate %llu entries",
                          (unsigned long long)cap);
        }
    }
    if (st == SIM_OK) {
        st = ranks > 1 ? run_all(m, job_gather, &a, err) : run_one(m, 0, job_gather, &a, err);
    }
    uint64_t total = 0;
    for (int k = 0; k < ranks; ++k) {
        const uint64_t have = a.count[k] < cap ? a.count[k] : cap;
        const uint64_t room = total < cap ? cap - total : 0;
        const uint64_t take = have < room ? have : room;
        if (st == SIM_OK && take > 0) {
            memcpy((char *)out + (size_t)total * width, a.buf[k], (size_t)take * width);
        }
        total += a.count[k];
        free(a.buf[k]);
    }
    *count = total;
    return st;
}

static sim_status multi_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                   sim_error *err) {
    return gather(as_multi(base), GATHER_TILE_PAIRS, out, sizeof *out, cap, count, err);
}

static sim_status multi_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap,
                                 uint64_t *count, sim_error *err) {
    return gather(as_multi(base), GATHER_CONTACTS, out, sizeof *out, cap, count, err);
}

/* The culled tile triples: each rank lists its rows' (triplet_cull.h), the union is all. */
static sim_status multi_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap,
                                     uint64_t *count, sim_error *err) {
    return gather(as_multi(base), GATHER_TILE_TRIPLES, out, sizeof *out, cap, count, err);
}

static const sim_backend_ops multi_ops = {
    multi_destroy,    multi_run_frame,  multi_set_params, multi_set_state,
    multi_read_state, multi_energy,     multi_export,     multi_capture,
    multi_set_cull,   multi_tile_pairs, multi_contacts,   multi_tile_triples,
};

static sim_status start_workers(multi_backend *m, sim_error *err) {
    if (pthread_mutex_init(&m->lock, NULL) != 0 || pthread_cond_init(&m->go, NULL) != 0 ||
        pthread_cond_init(&m->done, NULL) != 0) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot create the ranks' synchronisation");
    }
    m->sync_made = 1;
    for (int k = 1; k < m->local; ++k) {
        m->warg[k] = (worker_arg){m, k};
        if (pthread_create(&m->thread[k], NULL, worker, &m->warg[k]) != 0) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot start the thread of local rank %d", k);
        }
        m->threads = k;
    }
    return SIM_OK;
}

sim_status sim_multi_backend_create(const sim_backend_config *c, const sim_params *p,
                                    const sim_state *s, sim_backend **out, sim_error *err) {
    *out = NULL;
    const sim_multi_config *mc = &c->multi;
    multi_backend *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot allocate the multi-GPU backend");
    }
    m->base.ops = &multi_ops;
    sim_backend_take_config(&m->base, c);
    m->base.params = *p;
    m->base.n = s->n;
    m->base.rank = (sim_rank){mc->rank, mc->world, mc->device, NULL};
    m->local = mc->local;
    m->cuda = c->kind == SIM_BACKEND_CUDA;
    m->create_params = p;
    m->create_state = s;
    sim_status st = sim_backend_plan_maps(&m->base, c->pair_map, c->triplet_map, p, err);
    if (st == SIM_OK && m->cuda && sim_cuda_device_count() < mc->device + mc->local) {
        st = sim_fail(err, SIM_NO_DEVICE, "%d GPUs asked for (from device %d), %d visible",
                      mc->local, mc->device, sim_cuda_device_count());
    }
    if (st == SIM_OK && m->cuda) {
        if (mc->id_set) {
            memcpy(m->id, mc->nccl_id, sizeof m->id);
        } else { /* all ranks in this process: the id never leaves it */
            st = sim_multi_nccl_id(m->id, err);
        }
    }
    if (st == SIM_OK && !m->cuda) {
        st = sim_host_group_create(m->local, &m->host, err);
    }
    if (st == SIM_OK) {
        st = start_workers(m, err);
    }
    if (st == SIM_OK) {
        st = run_all(m, job_create, NULL, err);
    }
    if (st != SIM_OK) {
        multi_destroy(&m->base);
        return st;
    }
    m->create_params = NULL;
    m->create_state = NULL;
    const char *one = sim_backend_device_name(m->member[0]);
    if (mc->local == mc->world) {
        snprintf(m->base.device_name, sizeof m->base.device_name, "%d x %.100s", mc->world, one);
    } else if (mc->local == 1) {
        snprintf(m->base.device_name, sizeof m->base.device_name, "%.90s, rank %d of %d", one,
                 mc->rank, mc->world);
    } else {
        snprintf(m->base.device_name, sizeof m->base.device_name, "%d x %.90s, ranks %d-%d of %d",
                 mc->local, one, mc->rank, mc->rank + mc->local - 1, mc->world);
    }
    *out = &m->base;
    return SIM_OK;
}
