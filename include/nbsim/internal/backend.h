/* SPDX-License-Identifier: MIT
 * nbsim — private to the library, its tests and `nbsim bench`: the simulation backends behind
 * one interface (the double-precision CPU reference and the CUDA backend), and the hooks that
 * tune or test them. The session (nbsim/session.h) drives a backend frame by frame for the
 * programs; `nbsim bench` times backends directly. scripts/check_layers.sh (rule internal)
 * keeps the programs, the viewer and the bindings off this header. */
#ifndef SIM_INTERNAL_BACKEND_H
#define SIM_INTERNAL_BACKEND_H

#include "nbsim/capture.h"
#include "nbsim/config.h"
#include "nbsim/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the CUDA backend builds the neighbour lists from: a grid of cells one list reach wide
 * (sim/nlist/cell_grid.h: ~30 tests per body; one rank, where the grid fits) or the culled tile
 * pairs (the map places that culling pass; ~900 tests per body on a dense pack, and the only way
 * with several ranks, which list their tile rows). DEFAULT is the grid wherever it fits, chosen by
 * measurement (scripts/gpu_nlist.sh). The CPU reference chooses alike, in double: the lists, as
 * sets, are the same either way. */
typedef enum { SIM_NLIST_BUILD_DEFAULT, SIM_NLIST_BUILD_CELLS, SIM_NLIST_BUILD_TILES } sim_nlist_build;

/* The hooks of a config (sim_backend_config.tuning): test and measurement knobs, not users'
 * choices, so no flag, scene key or binding sets them. */
typedef struct sim_backend_tuning {
    uint32_t cull_capacity; /* initial tile-pair list capacity; 0 = from N (tests set it small) */
    /* The neighbour lists' entries per body to start with (0: SIM_NLIST_INITIAL_CAP; tests set
     * it small), and where they are built from. */
    uint32_t nlist_capacity;
    sim_nlist_build nlist_build;
    /* Count the touching pairs of culled sweeps (sim_frame_timing.contacts); 0: not counted
     * (default 1). */
    int count_contacts;
    /* CUDA: 1 enqueues each kernel of a step on the stream as it comes; 0 (the default) launches
     * each short culled step of one rank without ATM as one CUDA graph (sim/cuda/step_graph.cu:
     * why, and which steps). The same kernels in the same order either way: a comparison. */
    int stream_launches;
} sim_backend_tuning;

static inline sim_backend_tuning sim_backend_tuning_default(void) {
    sim_backend_tuning t = {0, 0, SIM_NLIST_BUILD_DEFAULT, 1, 0};
    return t;
}
/* *config->tuning, or the defaults where it is NULL. */
static inline sim_backend_tuning sim_backend_tuning_of(const sim_backend_config *config) {
    return config->tuning != NULL ? *config->tuning : sim_backend_tuning_default();
}

typedef struct sim_backend sim_backend;

/* Builds a backend and computes the forces of the initial state (a step's work). config->stop
 * raised meanwhile: SIM_INTERRUPTED within a fraction of a second, and no backend.
 *
 * Friction (params friction or rolling_friction > 0, docs/friction.md) runs on the CPU reference
 * of one rank: the CUDA backend and several ranks refuse it (SIM_UNSUPPORTED, here and in
 * set_params) until the kernels and the histories' owner ranks exist. Without friction bodies
 * keep their spin unchanged, in every backend. */
sim_status sim_backend_create(const sim_backend_config *config, const sim_params *params,
                              const sim_state *initial, sim_backend **out, sim_error *err);
void sim_backend_destroy(sim_backend *backend);

/* Advances params.steps_per_frame steps. Returns SIM_UNSTABLE (message names the cause: NaN,
 * a body outside the box) when the state blew up.
 *
 * config.stop raised: SIM_INTERRUPTED within a fraction of a second, timing->steps the steps
 * completed (0 when it was raised before the call) and the timings theirs. The backend then holds
 * exactly the state after the last completed step, as if the frame had been that long: a step
 * cut short is rolled back to its start, so read_state, captures and further frames go on from
 * there. The flag is read between steps, and inside a step whose sweeps are expected (from their
 * measured rates) to take more than one slice of ~0.1 s: such a step runs its sweeps in slices
 * of ~0.1 s of work and reads the flag before each (sim/step/stepper.h, the same for both
 * backends; a culled list whose length stays on the GPU is one launch, never cut, and culled
 * steps are short). Those steps save their start first (the CPU: 88 bytes per body in memory;
 * CUDA: 48 on the GPU, or without the memory for it, they are not cut and the flag waits for
 * their end); shorter steps pay nothing. set_params, set_state and energy finish what they
 * start.
 *
 * Several ranks (config.multi.world > 1) do not read the flag: they must stop at the same step,
 * and agreeing on one inside a frame would take a collective per step. The caller agrees
 * between frames (sim_backend_sum_over_processes) and stops them all after the same one. */
sim_status sim_backend_run_frame(sim_backend *backend, sim_frame_timing *timing, sim_error *err);

/* Switches maps; SIM_PAIR_FULL needs the CUDA backend (else SIM_UNSUPPORTED). A refused change
 * leaves the backend as it was. */
sim_status sim_backend_set_maps(sim_backend *backend, sim_pair_choice pair_map,
                                sim_triplet_map triplet_map, sim_error *err);
/* Turns culling on or off from the next step on (the viewer's hotkey). On sorts the bodies
 * first; off keeps their current order (no further sorts). The forces do not change (up to
 * rounding), so F_n is kept. SIM_OUT_OF_MEMORY when the culling buffers cannot be allocated
 * (the backend stays unculled). */
sim_status sim_backend_set_cull(sim_backend *backend, int on, sim_error *err);
sim_status sim_backend_set_params(sim_backend *backend, const sim_params *params, sim_error *err);
sim_status sim_backend_set_state(sim_backend *backend, const sim_state *state, sim_error *err);

/* Copies the state (and, if forces != NULL, the last total force per body, n entries) to host:
 * positions, velocities, spin (when out has room for it) and the contacts' histories
 * (out->contacts reallocated; none without friction). */
sim_status sim_backend_read_state(sim_backend *backend, sim_state *out, sim_vec3d *forces,
                                  sim_error *err);
/* The bodies' angular velocities (wx, wy, wz, unused) [rad/s], n entries, into host memory. */
sim_status sim_backend_read_spin(sim_backend *backend, sim_vec4d *out, sim_error *err);
sim_status sim_backend_energy(sim_backend *backend, sim_energy *energy, sim_error *err);
/* For agreements between the processes of a run over several (multi.h): v (count <= 64 host
 * values) becomes its sum over the processes, each counted once. Collective: every process
 * calls it at the same point (after the same frame), or they all wait. Alone, or with all ranks
 * in this process, v stays as it is. */
sim_status sim_backend_sum_over_processes(sim_backend *backend, double *v, size_t count,
                                          sim_error *err);

/* Trajectory frames without stalling the simulation (capture.h): host buffers for this backend
 * (pinned for CUDA), and a capture that enqueues copies of the state and the last forces into
 * them and returns at once; read them only after sim_capture_wait. c must not be pending. */
sim_status sim_backend_capture_alloc(const sim_backend *backend, sim_capture *c, sim_error *err);
sim_status sim_backend_capture(sim_backend *backend, sim_capture *c, sim_error *err);

/* For the viewer: writes (x, y, z, radius) and speed per body. dst_on_device != 0: CUDA device
 * pointers (a mapped GL buffer), only for the CUDA backend; else host pointers. */
sim_status sim_backend_export_positions(sim_backend *backend, sim_vec4f *dst_pos, float *dst_speed,
                                        int dst_on_device, sim_error *err);
/* The same for an even sample, bodies 0, every, 2 every, ... (sim_sample_count(n, every) of
 * them: the viewer's, when N passes what it draws); every = 1: all of them. */
sim_status sim_backend_export_sample(sim_backend *backend, uint32_t every, sim_vec4f *dst_pos,
                                     float *dst_speed, int dst_on_device, sim_error *err);


void sim_backend_cull_info(const sim_backend *backend, sim_cull_info *info);

/* Copies the interacting tile pairs (I >= J, tiles of the sorted body order) at the current
 * positions: min(count, cap) of them into out (host), their number into *count (0 when not
 * culled; when it exceeds the backend's list capacity, only that many are copied). Syncs with
 * the device and reruns the (cheap) culling pass; only when asked. */
sim_status sim_backend_tile_pairs(sim_backend *backend, sim_tile2 *out, uint64_t cap,
                                  uint64_t *count, sim_error *err);

/* The surviving tile triples of the ATM cut-off (I >= J >= K, triplet tiles of SIM_TRIPLET_TILE
 * bodies of the sorted order) at the current positions, as sim_backend_tile_pairs: min(count,
 * cap) into out, their number into *count (0 when triplets are not culled, or when the cut-off
 * sweeps its neighbour lists instead: atm_lists). Reruns the culling passes; syncs. */
sim_status sim_backend_tile_triples(sim_backend *backend, sim_tile3 *out, uint64_t cap,
                                    uint64_t *count, sim_error *err);

/* Test and debug hook: every touching pair (|x_i - x_j| < r_i + r_j, the contact kernels' own
 * test) at the current positions, as the current pair pipeline finds it (culled or not), in user
 * indices with i > j, in no particular order: min(count, cap) into out, the number into *count.
 * Culled and unculled backends must give the same set. Not timed; allocates scratch. */
typedef struct {
    uint32_t i, j;
} sim_body_pair;

sim_status sim_backend_contacts(sim_backend *backend, sim_body_pair *out, uint64_t cap,
                                uint64_t *count, sim_error *err);

/* The mesh walls a backend applies from the next step on (count 0: none), borrowed: they must
 * outlive the backend or the next call. Their clock starts at 0 here. The CPU reference alone
 * for now: other backends, and several ranks, refuse (SIM_UNSUPPORTED, one line). */
sim_status sim_backend_set_meshes(sim_backend *b, sim_mesh *const *meshes, int count,
                                  sim_error *err);

const sim_backend_config *sim_backend_get_config(const sim_backend *backend);
const sim_params *sim_backend_get_params(const sim_backend *backend);
const char *sim_backend_device_name(const sim_backend *backend); /* "CPU (8 threads)" or GPU */
uint32_t sim_backend_body_count(const sim_backend *backend);     /* N */

#ifdef __cplusplus
}
#endif

#endif /* SIM_INTERNAL_BACKEND_H */
