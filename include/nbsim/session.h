/* SPDX-License-Identifier: MIT
 * nbsim — a running simulation, the library's door for programs: the scene, the settings
 * resolved from what the caller asked (sim_session_config) and the machine, and the backend.
 * The session is the only code that touches a sim_backend: the headless loop, the viewer, the
 * per-frame pipeline (run_loop.h), the timing log and the summary ask the session. Everything
 * `nbsim` can do to a simulation, a binding does through these calls. */
#ifndef SIM_SESSION_H
#define SIM_SESSION_H

#include "nbsim/config.h"
#include "nbsim/dump.h"
#include "nbsim/insert.h"
#include "nbsim/memory_plan.h"
#include "nbsim/mesh.h"
#include "nbsim/output_file.h"
#include "nbsim/params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which physics parameters the caller gave (sim_session_config.params_given): bit
 * 1 << sim_param_id per parameter, plus the contact law. They override the scene's, and a
 * scene file cannot change them (scene.h's fixed bits are the same). */
#define SIM_GIVEN(id) (1u << SIM_PARAM_##id)
#define SIM_GIVEN_HERTZ SIM_PARAM_BIT_HERTZ

/* sim_session_config.gpus: every visible GPU. */
#define SIM_GPUS_ALL (-1)

typedef enum {
    SIM_TRIPLETS_AUTO = -1, /* on where they run at interactive speed (sim_session_prepare) */
    SIM_TRIPLETS_OFF = 0,
    SIM_TRIPLETS_ON = 1
} sim_triplets_mode;

typedef enum {
    SIM_BACKEND_CHOICE_AUTO, /* CUDA when a device is present, else the CPU (with a notice) */
    SIM_BACKEND_CHOICE_CPU,
    SIM_BACKEND_CHOICE_CUDA
} sim_backend_choice;

/* What a caller asks of a session: the command line's simulation flags, or a binding's
 * arguments. Start from sim_session_config_default(); the session never changes it, it resolves
 * it (backend kind, autotuned maps, triplets for auto, the default step) into its own settings. */
typedef struct {
    /* scene */
    char scene[SIM_PATH_MAX]; /* built-in name (sim_scene_builtin_name) or path of a scene file */
    uint32_t n;               /* bodies of a built-in scene; 0 = the scene's default */
    uint64_t seed;            /* of a built-in scene */
    int seed_set;             /* seed given: a scene file says it does not use one */
    /* Or bodies given as arrays (a binding's; NULL: none): copied when the session opens, with
     * `params` taken whole as their parameters, under the name in `scene` (not a built-in
     * scene's), which logs and summaries show and sim_session_reset reloads. */
    const sim_state *bodies;
    /* physics: params override the scene's where params_given says so (SIM_GIVEN) */
    sim_params params;
    unsigned params_given;
    sim_triplets_mode triplets;
    /* mesh walls (mesh.h: --mesh and the --mesh-* flags), loaded when the session opens and
     * applied from its first step; the CPU reference of one process only, for now */
    sim_mesh_spec meshes[SIM_MESHES_MAX];
    int mesh_count;
    /* backend and maps */
    sim_backend_choice backend;
    sim_backend_config config; /* maps, tile, culling, threads as asked; the kind comes from
                                  `backend`; config.stop: a flag that stops the work under way
                                  (a signal handler's), also the autotuner's and the initial
                                  forces' */
    unsigned autotune;         /* SIM_AUTOTUNE_* (autotune.h): maps/tile chosen by calibration */
    int tile_set;              /* the tile was given: the autotuner keeps it */
    int pair_map_set, triplet_map_set; /* a pair / triplet map was named */
    int cached_defaults; /* without a named pair map or tile: the autotuner's cached choice for
                            this GPU and N, else the backend's fastest tile (the viewer's) */
    /* several GPUs (multi.h): gpus in one process, and processes of `gpus` GPUs each */
    int gpus;                        /* GPUs of this process; 0: one; SIM_GPUS_ALL (one process) */
    int rank, world;                 /* this process's rank of world (world 0: one process) */
    int rank_given;                  /* rank was given (else the launcher's variables say) */
    int local_rank;                  /* rank among this host's (picks the device); -1: unknown */
    char nccl_id_path[SIM_PATH_MAX]; /* where rank 0 leaves the NCCL id (dist.h) */
    double nccl_id_wait;             /* seconds ranks > 0 wait for it */
    int nccl_id_mpi;                 /* started by mpirun without a path: the id through MPI */
    sim_decompose decompose;         /* how ranks share the bodies (multi.h; --decompose) */
    /* the run */
    int interactive;  /* a person watches (the viewer): triplets auto keeps triplets only where
                         they stay interactive, and refuses a scene built around far too many */
    long frames;      /* frames the caller will run, when known (0: open-ended); the processes of
                         a run over several check that they all run as many */
    int energy_every; /* energies every K frames (run_loop.h; 0: never); the processes of a run
                         over several check that they all compute them alike */
    /* insertion during the run (insert.h): the settings whose bits (1 << sim_insert_key) are in
     * insert_given override a scene file's (the others keep the file's, else the defaults) */
    sim_insert_def insert;
    unsigned insert_given;
} sim_session_config;

/* The defaults of every field: the gas scene, seed 1, the default parameters, triplets auto,
 * backend auto, sim_backend_config_default(), one process on one device, energies every frame. */
sim_session_config sim_session_config_default(void);

/* Where this process sits in a run over several, resolved once from the config and the
 * launcher's variables (mpirun, srun: dist.h), before anything is built: rank, world, local rank,
 * and whether the NCCL id goes through MPI. Refuses what can never run (SIM_BAD_ARGUMENT, the
 * message naming the flags: --gpus, --rank/--world, --nccl-id, maps auto), e.g. several GPUs in
 * the viewer, or a run over processes without NCCL. A config with neither gpus > 1 nor ranks is
 * left as it is. The session then gives each rank its device (sim_session_prepare). */
sim_status sim_session_resolve_launch(sim_session_config *c, sim_error *err);

/* 1 when this process writes the run's outputs (logs, summaries, states, dumps, notices): one
 * process alone, or rank 0 of a run over processes. */
int sim_session_config_writes_outputs(const sim_session_config *c);

typedef struct sim_session sim_session;

/* What the session runs now, resolved from the config, the scene and the machine. Read by the
 * loops, the log, the summary and the overlay; valid until the next call that changes it. */
typedef struct {
    const char *scene;         /* active scene: a built-in name or a file */
    uint32_t n;                /* bodies */
    sim_backend_config config; /* resolved: backend kind, maps (autotuned), tile */
    const char *backend;       /* "cuda" or "cpu" */
    const char *device;        /* the GPU's name as CUDA gives it, or "CPU (8 threads)" */
    int gpus;                  /* ranks the steps are split over (GPUs, or CPU threads), 1 alone */
    sim_params params;         /* effective: scene + config + derived dt, triplets resolved */
    uint64_t unique_pairs;     /* N(N-1)/2 */
    uint64_t unique_triples;   /* N(N-1)(N-2)/6 */
    uint64_t frame;            /* frames run since the scene was (re)loaded */
    uint64_t steps;            /* integration steps since then */
    int partial_steps;         /* steps of a frame stopped by a signal, kept in the state (in
                                  `steps`, not in `frame`) */
    double sim_time;           /* [s] */
    const char *dump_path;     /* the trajectory being recorded, "" when none */
    double dump_ms;            /* this thread's cost of the last frame's dump [ms], 0 if none */
    const char *maps_source;   /* where the maps and tile came from: "command line", "default
                                  (...)", "cached autotune of 2026-05-01 (...)", "autotune" */
    double step_estimate_ms;   /* a step's time expected from the initial forces [ms] (the lists'
                                  builds spread over the steps between rebuilds); 0: none */
    const char *decomposition; /* a run split in space (--decompose space): each rank's own bodies
                                  and ghosts, least and most over the ranks, after the last
                                  frame; "" otherwise */
    uint64_t inserted;         /* bodies inserted (insert.h) since the insertion began (a resumed
                                  run counts those before its save); 0 without one */
    const char *insertion;     /* "" without an insertion, else what it did: batches, bodies
                                  inserted, bodies that found no room, its stop */
    sim_memory_plan memory;    /* the CUDA backend's device memory by part, with the bodies' radii
                                  and the grid's cells (count 0: the CPU reference, or several
                                  ranks, each of which holds all of it) */
} sim_run_info;

/* Builds the scene, resolves the backend (auto: CUDA if a device exists, else CPU with a
 * notice), chooses triplets on/off for auto, autotunes the maps when asked, derives dt (and
 * warns if the user's dt is too large), and creates the backend: sim_session_prepare, then
 * sim_session_start. config.stop is read while a built-in scene is built, before the backend is
 * created, and by the backend during the autotune and the initial forces: raised, the open ends
 * within a fraction of a second with SIM_INTERRUPTED (and no session). c is copied. */
sim_status sim_session_open(sim_session **out, const sim_session_config *c, sim_error *err);
/* The two halves, for a caller with something to say in between: everything but the backend
 * (the info is valid, without a device name), then the backend and its initial forces (a step's
 * work: minutes on a CPU at N in the hundreds of thousands). After a failed start only
 * sim_session_info and sim_session_close may be called. */
sim_status sim_session_prepare(sim_session **out, const sim_session_config *c, sim_error *err);
sim_status sim_session_start(sim_session *s, sim_error *err);
void sim_session_close(sim_session *s);

const sim_run_info *sim_session_info(const sim_session *s);

/* The GPU memory the run c describes would take (nbsim/memory_plan.h), planned as
 * sim_session_prepare plans it before it builds the scene (a scene file is read for its N), with
 * the device's free memory and the largest N that fits: nothing is built or allocated. For the
 * CPU reference free_bytes stays 0. */
sim_status sim_session_memory_plan(const sim_session_config *c, sim_memory_plan *plan,
                                   sim_error *err);
/* What a user should know since the last call (fallbacks, defaults chosen, warnings), one
 * notice per line, the warnings first, or "" (the text stays valid until the next call into the
 * session). */
const char *sim_session_take_notices(sim_session *s);
/* The warnings alone, taken (the notices stay pending): what in the user's input they may want to
 * change (a long dt, spheres sharing a centre, a scene file's key given twice, --seed with a
 * file), which a quiet program still shows; one per line, or "". */
const char *sim_session_take_warnings(sim_session *s);

/* Runs one frame (steps_per_frame steps) and advances frame / sim_time. Stopped by a signal
 * (SIM_INTERRUPTED), the frame does not count, its completed steps do (info.partial_steps).
 * With an insertion (insert.h), after a complete frame the batches due are placed and the
 * backend is made again for the grown N from the state it held (contact histories too: the
 * path of a save and a resume); a trajectory being recorded goes on with the new N (.xyz,
 * .lammpstrj, .pvd), or ends there with a notice (NetCDF: one N a file). */
sim_status sim_session_frame(sim_session *s, sim_frame_timing *t, sim_error *err);
sim_status sim_session_energy(sim_session *s, sim_energy *e, sim_error *err);
/* Whether to stop after this frame, agreed by every process of a run over several (--world),
 * so that all of them stop after the same frame. In: this process's signal number (0: none) and
 * whether its outputs failed (a full disk). Out: *signal becomes the signal to stop by (its own,
 * else the lowest another process has; 0: none), *failed whether any process's outputs failed.
 * Collective: every process calls it after every frame. Alone (or with --gpus in one process)
 * both stay as they are. */
sim_status sim_session_agree_stop(sim_session *s, int *signal, int *failed, sim_error *err);
/* The current state with the last force per body, as a scene file (see output_file.h), with an
 * insertion's settings and progress, so that a run resumed from it goes on as this one would. */
sim_status sim_session_save_state(sim_session *s, const char *path, sim_error *err);
/* The current state into host arrays the caller allocated for info.n bodies (sim_state_alloc),
 * in the scene's body order, and when forces != NULL the last total force per body [N]. */
sim_status sim_session_read_state(sim_session *s, sim_state *out, sim_vec3d *forces,
                                  sim_error *err);
/* For the viewer: (x, y, z, radius) and speed per body, into device (a mapped GL buffer) or
 * host arrays; see sim_backend_export_positions. */
sim_status sim_session_export_positions(sim_session *s, sim_vec4f *pos, float *speed, int on_device,
                                        sim_error *err);
/* The same for an even sample of the bodies (sim_backend_export_sample). */
sim_status sim_session_export_sample(sim_session *s, uint32_t every, sim_vec4f *pos, float *speed,
                                     int on_device, sim_error *err);
/* For the viewer: each body's angular speed |w| [rad/s] into host memory (info.n floats). */
sim_status sim_session_angular_speeds(sim_session *s, float *out, sim_error *err);
/* The same for bodies 0, every, 2 every, ... (sim_sample_count(info.n, every) floats). */
sim_status sim_session_angular_speeds_sample(sim_session *s, uint32_t every, float *out,
                                             sim_error *err);
/* The bodies' mean height [m]: their mean position along -gravity (along +y without gravity).
 * Copies every position to the host (a few MB at a million bodies): call it when energies are
 * computed, not every frame. */
sim_status sim_session_mean_height(sim_session *s, double *height, sim_error *err);

/* Trajectory recording (dump.h): every `every`-th frame from now on, starting with the current
 * state, until stopped; a change of N stops it (with a notice). stats may be NULL. */
sim_status sim_session_dump_start(sim_session *s, const char *path, int every, sim_error *err);
sim_status sim_session_dump_stop(sim_session *s, sim_dump_stats *stats, sim_error *err);

/* Reloads the active scene (same N and seed) into the backend. */
sim_status sim_session_reset(sim_session *s, sim_error *err);
/* Switches to another scene (built-in name or file); the backend is rebuilt if N changes. */
sim_status sim_session_set_scene(sim_session *s, const char *scene, sim_error *err);
sim_status sim_session_set_maps(sim_session *s, sim_pair_choice pm, sim_triplet_map tm,
                                sim_error *err);
sim_status sim_session_set_triplets(sim_session *s, int on, sim_error *err);
/* New effective parameters, all of them (from info.params, changed), from the next step; checked
 * by the backend: a refusal keeps the old ones. */
sim_status sim_session_set_params(sim_session *s, const sim_params *p, sim_error *err);
/* Culling on or off from the next step (the viewer's key). */
sim_status sim_session_set_cull(sim_session *s, int on, sim_error *err);
sim_status sim_session_set_steps_per_frame(sim_session *s, int steps, sim_error *err);

/* For the viewer's map inset (config.h): the interacting tile pairs (I >= J) at the current
 * positions, the first min(cap, total) into out and the total into *count (0 when not
 * culling); the culling pass as planned. */
sim_status sim_session_tile_pairs(sim_session *s, sim_tile2 *out, uint64_t cap, uint64_t *count,
                                  sim_error *err);
void sim_session_cull_info(const sim_session *s, sim_cull_info *info);

/* A rough rate of ATM triples per second on a backend of this kind (a current GPU: 2e11; a CPU
 * core: 2e7): the one estimate behind triplets auto (on while a step's triples fit a budget of
 * 10 [ms] on a GPU, 0.1 [s] on a CPU) and the viewer's refusal to switch them on where a step
 * would take seconds. */
double sim_session_triples_per_s(sim_backend_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* SIM_SESSION_H */
