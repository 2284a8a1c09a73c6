/* SPDX-License-Identifier: MIT
 * nbsim — a running session: frames, energies, the state read, saved and exported, trajectories,
 * and what the viewer switches (maps, triplets, parameters, culling, steps per frame; a new scene
 * is open.c's). Everything that reaches the backend after opening (open.c). */
#include "session/session_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbsim/scene.h"
#include "session/insert.h"
#include "space/space.h"

static void append_line(char *lines, size_t cap, const char *text) {
    const size_t len = strlen(lines);
    snprintf(lines + len, cap - len, "%s%s", len ? "\n" : "", text);
}

void sim_session_notice(sim_session *s, const char *text) {
    append_line(s->notices, sizeof s->notices, text);
}

void sim_session_warning(sim_session *s, const char *text) {
    append_line(s->warnings, sizeof s->warnings, text);
}

void sim_session_refresh(sim_session *s) {
    sim_run_info *i = &s->info;
    i->scene = s->scene;
    i->n = s->initial.n;
    i->config = s->backend != NULL ? *sim_backend_get_config(s->backend) : s->config;
    i->backend = i->config.kind == SIM_BACKEND_CUDA ? "cuda" : "cpu";
    i->device = s->backend != NULL ? sim_backend_device_name(s->backend) : "";
    i->gpus = i->config.multi.world > 1 ? i->config.multi.world : 1;
    i->params = s->params;
    i->unique_pairs = sim_choose(s->initial.n, 2);
    i->unique_triples = sim_choose(s->initial.n, 3);
    i->dump_path = s->dump != NULL ? s->dump_path : "";
    i->decomposition = s->decomposition;
    i->maps_source = s->maps_source;
    const sim_insert_def *d = &s->ins.def;
    const sim_insert_progress *pr = &s->ins.progress;
    i->inserted = d->shape != SIM_INSERT_OFF ? pr->inserted : 0u;
    s->insertion[0] = '\0';
    if (d->shape != SIM_INSERT_OFF) {
        snprintf(s->insertion, sizeof s->insertion,
                 "%llu bodies inserted in %llu batch%s, one every %.6g s; %llu found no room; %s",
                 (unsigned long long)pr->inserted, (unsigned long long)pr->batches,
                 pr->batches == 1 ? "" : "es", pr->interval,
                 (unsigned long long)(pr->planned - pr->inserted),
                 sim_insert_done(d, pr) ? "stopped" : "going on");
    }
    i->insertion = s->insertion;
}

sim_status sim_session_insert_into(sim_session *s, sim_state *state, sim_error *err) {
    const sim_insert_def *d = &s->ins.def;
    if (!sim_insert_due(d, &s->ins.progress, &s->params)) {
        return SIM_OK;
    }
    const uint64_t batch = s->ins.progress.batches;
    uint64_t wanted = 0, placed = 0;
    SIM_TRY(sim_insert_place(d, &s->ins.progress, &s->params, s->insert_max, state, &wanted,
                             &placed, err));
    if (placed < wanted && !s->insert_full_said) {
        char text[320];
        snprintf(text, sizeof text,
                 "warning: insertion: batch %llu placed %llu of %llu bodies: %s (%d tries each); "
                 "the others are dropped, later batches go on (said once)",
                 (unsigned long long)batch, (unsigned long long)placed, (unsigned long long)wanted,
                 state->n >= s->insert_max ? "the run holds no more bodies" : "the region is full",
                 SIM_INSERT_ATTEMPTS);
        sim_session_warning(s, text);
        s->insert_full_said = 1;
    }
    return SIM_OK;
}

/* The batches due after a frame: the state read with its contacts' histories, grown, and a
 * backend made for it with the maps and settings of the one before (a save and a resume do the
 * same: the bodies run on as they would have). Nothing placed: the backend stays. */
static sim_status insert_due(sim_session *s, sim_error *err) {
    if (!sim_insert_due(&s->ins.def, &s->ins.progress, &s->params)) {
        return SIM_OK;
    }
    const sim_inserter before = s->ins;
    sim_state state = {0};
    SIM_TRY(sim_state_alloc(&state, s->initial.n, err));
    sim_status st = sim_backend_read_state(s->backend, &state, NULL, err);
    const uint32_t n = state.n;
    st = st == SIM_OK ? sim_session_insert_into(s, &state, err) : st;
    sim_backend *fresh = NULL;
    if (st == SIM_OK && state.n > n) {
        sim_backend_config config = *sim_backend_get_config(s->backend);
        st = sim_backend_create(&config, &s->params, &state, &fresh, err);
    }
    if (st != SIM_OK) {
        s->ins = before;
        sim_state_free(&state);
        return st;
    }
    if (fresh != NULL) {
        /* a trajectory goes on with the new N where its format takes one (its frames' copies off
         * the old backend landed first); a NetCDF file, of one N, ends */
        const int goes_on = s->dump != NULL && sim_dump_variable_n(s->dump);
        if (goes_on) {
            sim_dump_drain(s->dump);
        }
        sim_backend_destroy(s->backend);
        s->backend = fresh;
        sim_state_free(&s->initial);
        s->initial = state;
        sim_error why;
        sim_error_clear(&why);
        if (s->dump != NULL && (!goes_on || sim_dump_rebind(s->dump, fresh, &why) != SIM_OK)) {
            char text[SIM_PATH_MAX + SIM_ERROR_MESSAGE_MAX + 96];
            snprintf(text, sizeof text, "trajectory %s ended: the insertion brought N to %u%s%s",
                     s->dump_path, state.n, why.message[0] ? ": " : " (a NetCDF file holds one N)",
                     why.message);
            (void)sim_session_dump_stop(s, NULL, NULL);
            sim_session_notice(s, text);
        }
    } else {
        sim_state_free(&state);
    }
    sim_session_refresh(s);
    return SIM_OK;
}

const sim_run_info *sim_session_info(const sim_session *s) {
    return &s->info;
}

const char *sim_session_take_warnings(sim_session *s) {
    snprintf(s->taken_warnings, sizeof s->taken_warnings, "%s", s->warnings);
    s->warnings[0] = '\0';
    return s->taken_warnings;
}

const char *sim_session_take_notices(sim_session *s) {
    s->taken[0] = '\0';
    append_line(s->taken, sizeof s->taken, s->warnings);
    if (s->notices[0] != '\0') {
        append_line(s->taken, sizeof s->taken, s->notices);
    }
    s->warnings[0] = s->notices[0] = '\0';
    return s->taken;
}

sim_status sim_session_frame(sim_session *s, sim_frame_timing *t, sim_error *err) {
    const sim_status st = sim_backend_run_frame(s->backend, t, err);
    s->info.partial_steps = 0;
    if (st == SIM_OK || st == SIM_INTERRUPTED) { /* the steps it completed are in the state */
        s->info.steps += (uint64_t)t->steps;
        s->info.sim_time += s->params.dt * (double)t->steps;
        s->ins.progress.clock += s->params.dt * (double)t->steps;
    }
    if (st == SIM_INTERRUPTED) {
        s->info.partial_steps = t->steps;
    }
    SIM_TRY(st);
    if (s->config.multi.space) {
        sim_space_balance(s->backend, s->decomposition, sizeof s->decomposition);
    }
    SIM_TRY(insert_due(s, err));
    s->info.frame++;
    s->info.dump_ms = 0.0;
    if (s->dump != NULL) {
        SIM_TRY(sim_dump_frame(s->dump, s->backend, s->info.frame - s->dump_frame0, s->info.steps,
                               s->info.sim_time, &s->info.dump_ms, err));
    }
    return SIM_OK;
}

sim_status sim_session_dump_start(sim_session *s, const char *path, int every, sim_error *err) {
    SIM_ASSERT(s->dump == NULL);
    SIM_TRY(sim_dump_open(&s->dump, path, every, s->backend, err));
    snprintf(s->dump_path, sizeof s->dump_path, "%s", path);
    s->dump_frame0 = s->info.frame;
    sim_session_refresh(s);
    /* Frame 0 is the state the recording starts from, as LAMMPS and HOOMD write it. */
    return sim_dump_frame(s->dump, s->backend, 0, s->info.steps, s->info.sim_time, &s->info.dump_ms,
                          err);
}

sim_status sim_session_dump_stop(sim_session *s, sim_dump_stats *stats, sim_error *err) {
    if (s->dump == NULL) {
        return SIM_OK;
    }
    const sim_status st = sim_dump_close(s->dump, stats, err);
    s->dump = NULL;
    sim_session_refresh(s);
    return st;
}

sim_status sim_session_energy(sim_session *s, sim_energy *e, sim_error *err) {
    return sim_backend_energy(s->backend, e, err);
}

/* The processes' votes, summed: slot 0 counts failed outputs, slot k > 0 signal k (one-hot;
 * SIM_COMM_HOST_MAX is 64 and POSIX signal numbers are below 32). */
enum { kVoteSlots = 32 };

sim_status sim_session_agree_stop(sim_session *s, int *signal, int *failed, sim_error *err) {
    double votes[kVoteSlots] = {0};
    votes[0] = *failed ? 1.0 : 0.0;
    if (*signal > 0 && *signal < kVoteSlots) {
        votes[*signal] = 1.0;
    }
    SIM_TRY(sim_backend_sum_over_processes(s->backend, votes, kVoteSlots, err));
    *failed = votes[0] > 0.0;
    for (int k = 1; k < kVoteSlots && *signal == 0; ++k) {
        if (votes[k] > 0.0) {
            *signal = k;
        }
    }
    return SIM_OK;
}

sim_status sim_session_save_state(sim_session *s, const char *path, sim_error *err) {
    if (s->config.multi.space) { /* rank 0 writes as the ranks send ranges: none holds all N */
        return sim_space_save_state(s->backend, path, &s->params, err);
    }
    sim_state state = {0};
    sim_status st = sim_state_alloc(&state, s->initial.n, err);
    sim_vec3d *forces = NULL;
    if (st == SIM_OK) {
        forces = calloc(s->initial.n, sizeof *forces);
        st = forces ? SIM_OK : sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for forces");
    }
    if (st == SIM_OK) {
        st = sim_backend_read_state(s->backend, &state, forces, err);
    }
    if (st == SIM_OK) {
        st = sim_state_save_insert(path, &s->params, &state, forces,
                                   s->ins.def.shape != SIM_INSERT_OFF ? &s->ins : NULL, err);
    }
    free(forces);
    sim_state_free(&state);
    return st;
}

sim_status sim_session_read_state(sim_session *s, sim_state *out, sim_vec3d *forces,
                                  sim_error *err) {
    return sim_backend_read_state(s->backend, out, forces, err);
}

sim_status sim_session_export_positions(sim_session *s, sim_vec4f *pos, float *speed, int on_device,
                                        sim_error *err) {
    return sim_backend_export_positions(s->backend, pos, speed, on_device, err);
}

sim_status sim_session_export_sample(sim_session *s, uint32_t every, sim_vec4f *pos, float *speed,
                                     int on_device, sim_error *err) {
    return sim_backend_export_sample(s->backend, every, pos, speed, on_device, err);
}

sim_status sim_session_set_maps(sim_session *s, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err) {
    const sim_status st = sim_backend_set_maps(s->backend, pm, tm, err);
    sim_session_refresh(s);
    return st;
}

sim_status sim_session_set_params(sim_session *s, const sim_params *p, sim_error *err) {
    const sim_status st = sim_backend_set_params(s->backend, p, err);
    if (st == SIM_OK) {
        s->params = *p;
    }
    sim_session_refresh(s);
    return st;
}

sim_status sim_session_set_triplets(sim_session *s, int on, sim_error *err) {
    sim_params p = s->params;
    p.triplets = on;
    return sim_session_set_params(s, &p, err);
}

sim_status sim_session_set_steps_per_frame(sim_session *s, int steps, sim_error *err) {
    sim_params p = s->params;
    p.steps_per_frame = steps;
    return sim_session_set_params(s, &p, err);
}

sim_status sim_session_mean_height(sim_session *s, double *height, sim_error *err) {
    const uint32_t n = s->initial.n;
    /* "Up" is against gravity; without gravity the viewer's default up, +y. */
    const sim_vec3d g = s->params.gravity;
    const double g_len = sqrt(g.x * g.x + g.y * g.y + g.z * g.z);
    const double ux = g_len > 0.0 ? -g.x / g_len : 0.0, uy = g_len > 0.0 ? -g.y / g_len : 1.0,
                 uz = g_len > 0.0 ? -g.z / g_len : 0.0;
    if (s->config.multi.space) { /* no rank holds the positions: the energies' mean of them */
        *height = sim_space_mean_height(s->backend, ux, uy, uz);
        return SIM_OK;
    }
    if (s->height_cap < n) {
        sim_vec4f *grown = realloc(s->height_pos, (size_t)n * sizeof *grown);
        if (grown == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory to read %u positions", n);
        }
        s->height_pos = grown;
        s->height_cap = n;
    }
    SIM_TRY(sim_backend_export_positions(s->backend, s->height_pos, NULL, 0, err));
    double sum = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const sim_vec4f p = s->height_pos[i];
        sum += ux * p.x + uy * p.y + uz * p.z;
    }
    *height = n > 0 ? sum / (double)n : 0.0;
    return SIM_OK;
}

sim_status sim_session_angular_speeds(sim_session *s, float *out, sim_error *err) {
    return sim_session_angular_speeds_sample(s, 1, out, err);
}

sim_status sim_session_angular_speeds_sample(sim_session *s, uint32_t every, float *out,
                                             sim_error *err) {
    SIM_ASSERT(every >= 1);
    const uint32_t n = s->initial.n;
    if (s->spin_cap < n) {
        sim_vec4d *grown = realloc(s->spin, (size_t)n * sizeof *grown);
        if (grown == NULL) {
            return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory to read %u spins", n);
        }
        s->spin = grown;
        s->spin_cap = n;
    }
    SIM_TRY(sim_backend_read_spin(s->backend, s->spin, err));
    for (uint32_t k = 0; k < sim_sample_count(n, every); ++k) {
        const sim_vec4d w = s->spin[(size_t)k * every];
        out[k] = (float)sqrt(w.x * w.x + w.y * w.y + w.z * w.z);
    }
    return SIM_OK;
}

sim_status sim_session_tile_pairs(sim_session *s, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                  sim_error *err) {
    return sim_backend_tile_pairs(s->backend, out, cap, count, err);
}

sim_status sim_session_set_cull(sim_session *s, int on, sim_error *err) {
    const sim_status st = sim_backend_set_cull(s->backend, on, err);
    sim_session_refresh(s);
    return st;
}

void sim_session_cull_info(const sim_session *s, sim_cull_info *info) {
    sim_backend_cull_info(s->backend, info);
}
