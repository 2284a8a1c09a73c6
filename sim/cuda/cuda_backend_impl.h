/* SPDX-License-Identifier: MIT
 * nbsim — private to the CUDA backend: its state and what its files share. The backend is four
 * files, one role each (and step_graph.cu: a short step launched as one CUDA graph):
 *   cuda_backend.cu  set-up and tear-down, set_params / set_state / set_cull, the sim_backend ops;
 *   cuda_step.cu     the stepper's primitives (sim_cuda_step_ops): events as marks, the phases'
 *                    kernels on the main stream, the frame's one sync, save and restore;
 *   cuda_lists.cu    the culling buffers and lists (contacts, their neighbour lists and the ATM
 *                    cut-off's tile triples or neighbour lists): allocation, the untimed builds, growth, the device counters read as
 *                    sim_step_counts;
 *   cuda_export.cu   what leaves the device: state, positions, captures, energies, the lists and
 *                    contacts of the test hooks, all in the user's order.
 * What a step does and when is the stepper's (step/stepper.h), never this backend's.
 *
 * Culling (cull.h, cull_kernels.h): the device keeps the bodies in sorted slots (slot s holds
 * user body perm[s]; no perm until culling is first turned on: identity). The sort runs between
 * the first half kick, which consumed F_n, and the force computation, which rewrites F, so forces
 * never need moving. Everything leaving the backend is put back in the user's order. */
#ifndef SIM_CUDA_BACKEND_IMPL_H
#define SIM_CUDA_BACKEND_IMPL_H

#include "step/backend_impl.h"
#include "nbsim/cuda_check.h"
#include "cull/cull_kernels.h"
#include "gpu/device_state.h"
#include "cuda/friction_state.h"
#include "physics/physics.h"
#include "cull/triplet_cull_kernels.h"
#include "nlist/nlist_kernels.h"
#include "nlist/atm_list_kernels.h"

/* The executable graphs of short steps (step_graph.cu), one per step shape seen lately (a step
 * that sorts has more nodes than one that does not; one that marks its phases or its end more
 * than one that does not), least recently used replaced. 8: a frame's shapes (plain, marked at
 * its end, the last with its phases, a sort with and without a mark before it) with room for
 * the lists' and the cells' (DEFAULT switches between them). */
#define SIM_CUDA_GRAPH_SHAPES 8
typedef struct {
    cudaGraphExec_t exec[SIM_CUDA_GRAPH_SHAPES];
    size_t nodes[SIM_CUDA_GRAPH_SHAPES];
    uint64_t used[SIM_CUDA_GRAPH_SHAPES], clock;
    int capturing; /* the main stream is being captured: marks are external events */
} sim_cuda_graphs;

/* What the step under way does, decided once at its start (cuda_step.cu: plan_step) from the
 * frame's shape and the lists' mode, and only read by its later phases; all 0 outside a step
 * (the forces alone: set_params, energies). */
typedef struct {
    bool lists_drift; /* the lists' drift ran: displacements checked, the forces cleared */
    bool cells;       /* contacts swept straight from the cells: the drift binned the bodies */
    bool sweep_kicks; /* that sweep ends the step with its second half kick (sim_gpu_kick) */
    bool kick_later;  /* each pair once: the second half kick goes into the next drift */
    int step;         /* the frame's step */
} cuda_step_plan;

struct cuda_backend {
    sim_backend base; /* first: sim_backend * points here */
    int device;
    sim_gpu_bodies bodies;
    sim_gpu_streams streams;
    int streams_made;
    cudaEvent_t *events; /* the stepper's marks, created as they are first needed */
    int event_count;
    uint64_t *d_flag; /* instability flag, SIM_GPU_STABLE when all is well */
    uint64_t *h_flag; /* pinned */
    double *d_energy; /* kinetic, body potential, contact, ATM, rotational, springs */
    float *d_speed;   /* scratch for host exports of speeds */
    sim_physics_f ph;
    float dt;
    double max_radius; /* [m] of the bodies, for the lists' cell grid (set with the physics) */
    int sm_count;
    /* culling */
    sim_gpu_cull cull; /* buffers, once cull_ready */
    int cull_ready;
    sim_gpu_cull_counts *h_counts; /* pinned: the counters as read at the frame's sync */
    /* the ATM cut-off, culled */
    sim_gpu_tcull tcull; /* buffers, once tcull_ready */
    int tcull_ready;
    sim_gpu_tcull_counts *h_tcounts; /* pinned: the counters as read at the frame's sync */
    /* the ATM cut-off over its neighbour lists (atm_list_kernels.h: sim_cuda_atm_listed) */
    sim_gpu_atm_list atm; /* buffers, once atm_ready */
    int atm_ready;
    sim_gpu_atm_list_counts *h_acounts; /* pinned: the counters as read at the frame's sync */
    /* neighbour lists (nlist_kernels.h) */
    sim_gpu_nlist nlist; /* buffers, once nlist_ready */
    int nlist_ready;
    sim_gpu_nlist_counts *h_ncounts; /* pinned: the counters as read at the frame's sync */
    cuda_step_plan plan; /* the step under way (cuda_step.cu: plan_step) */
    /* The step of this frame whose second half kick the next drift takes (plan.kick_later), or
     * -1: the one thing a step leaves to the next. */
    int deferred_kick;
    int frame_step;                  /* the frame's step under way (FIRST counts them) */
    sim_nlist_cadence nlist_cadence; /* when the lists pay, and when the cells (nlist.h) */
    /* friction (friction_state.h): spin and torque always, the history tables while it is on */
    sim_cuda_friction fric;
    /* the saved start of a long step (save_ready 1; -1: no memory for it, such steps run whole) */
    sim_vec4f *save_pos, *save_vel, *save_force;
    uint32_t *save_perm;              /* once culling has a body order */
    sim_gpu_cull_counts *save_counts; /* with it */
    int save_ready;
    sim_cuda_graphs graphs; /* short steps as graphs (step_graph.cu) */
};

static inline cuda_backend *sim_cuda_of(sim_backend *b) {
    return reinterpret_cast<cuda_backend *>(b);
}

static inline const cuda_backend *sim_cuda_of(const sim_backend *b) {
    return reinterpret_cast<const cuda_backend *>(b);
}

/* cuda_device.cu */
/* cudaMalloc that names what failed; running out of memory is SIM_OUT_OF_MEMORY, not a CUDA
 * error (the set-up's memory check can race with other processes). */
sim_status sim_cuda_alloc(void **p, size_t bytes, const char *what, uint32_t n, sim_error *err);

/* cuda_step.cu */
extern const sim_step_ops sim_cuda_step_ops;
void sim_cuda_events_free(cuda_backend *b);
void sim_cuda_save_free(cuda_backend *b);

/* step_graph.cu: the stepper's step_begin / step_end (a short step as one graph) */
sim_status sim_cuda_step_begin(sim_backend *base, const sim_step_shape *f, int *unit,
                               sim_error *err);
sim_status sim_cuda_step_end(sim_backend *base, int keep, sim_error *err);
void sim_cuda_graphs_free(cuda_backend *b);

/* cuda_lists.cu */
/* The body order (slot -> user index), or nullptr while it is the identity. */
const uint32_t *sim_cuda_body_order(const cuda_backend *b);
/* The culling buffers, once (nothing kept when one cannot be had; a new order asks the stepper
 * for a sort); freed (the bodies are left in whatever order they are). */
sim_status sim_cuda_cull_prepare(cuda_backend *b, sim_error *err);
void sim_cuda_cull_free(cuda_backend *b);
/* Boxes and the culling passes: after it the tile list (or its overflow count) is current.
 * flags: SIM_GPU_CULL_* (0 for the untimed builds of energies and hooks). With neighbour lists
 * (sim_backend_listing) the boxes are inflated by half the skin and everything returns at once
 * on the device unless the lists are rebuilt (their flag, or SIM_GPU_NLIST_REBUILD). */
sim_status sim_cuda_cull_phase(cuda_backend *b, unsigned flags, sim_error *err);
/* The neighbour lists' buffers for the current kind, size and skin (nothing kept when they
 * cannot be had); freed. */
sim_status sim_cuda_nlist_prepare(cuda_backend *b, sim_error *err);
void sim_cuda_nlist_free(cuda_backend *b);
/* Friction's calls (friction_state.h) with this backend's lists (NULL until they are ready) and
 * body order. flush: the springs beside the list entries into the last step's table, when some
 * may be current: before the table is read as the truth (read-back, energy, a sweep over tiles
 * or the plan, a long step's save) and before the slots or the entries change (a re-sort, lists
 * grown or of another kind). built: after a build of the lists, when they overflowed (on the
 * device), the springs carried over the rebuild into the table, which the fallback sweep
 * reads. */
const sim_gpu_nlist *sim_cuda_fric_lists(const cuda_backend *b);
sim_status sim_cuda_fric_flush(cuda_backend *b, sim_error *err);
sim_status sim_cuda_fric_built(cuda_backend *b, sim_error *err);
/* The lists' rebuild flag raised on the device (their contents, or the tile pairs they fall back
 * to, were lost or replaced): whatever runs next rebuilds them first. */
sim_status sim_cuda_nlist_stale(cuda_backend *b, sim_error *err);
/* The culled pairs as a step would find them at the current positions, untimed, unrecorded (the
 * test hooks, energies, measure): the tile list culled again; with neighbour lists, those rebuilt
 * only when a body moved more than half the skin (their rebuild flag lowered after). */
sim_status sim_cuda_pairs_current(cuda_backend *b, sim_error *err);
/* Whether this step culls tile triples: the stepper's fact (the float cut-off the kernel compares
 * with must be > 0 too). */
int sim_cuda_tculled(const cuda_backend *b);
sim_status sim_cuda_tcull_prepare(cuda_backend *b, sim_error *err);
void sim_cuda_tcull_free(cuda_backend *b);
/* The cut-off's lists for the current (sorted) bodies: this rank's triples (tcull_share). */
sim_status sim_cuda_tcull_build(cuda_backend *b, sim_error *err);
sim_gpu_tcull_share sim_cuda_tcull_share(const cuda_backend *b);
/* Whether the culled ATM cut-off sweeps its neighbour lists of R + skin (the stepper's
 * lists_triplets): sim_backend_atm_listing (a skin, one rank) in a box of walls (the lists'
 * kernels take no minimum images: periodic axes keep the tile triples). */
int sim_cuda_atm_listed(const cuda_backend *b);
/* The lists' buffers (half lists, SIM_ATM_LIST_INITIAL_CAP entries to start with; the stepper
 * grows them), once; nothing kept when they cannot be had. Freed. */
sim_status sim_cuda_atm_prepare(cuda_backend *b, sim_error *err);
void sim_cuda_atm_free(cuda_backend *b);
/* A step's TRIPLET_CULL over the lists: the displacement check, then the build, which returns at
 * once on the device unless a body moved more than half the skin or flags force it
 * (SIM_STEP_REBUILD); RECORD counts a rebuild into the frame. */
sim_status sim_cuda_atm_update(cuda_backend *b, unsigned flags, sim_error *err);
/* Their rebuild flag raised on the device (another skin, cut-off or bodies): the next step
 * rebuilds them whatever the displacements. */
sim_status sim_cuda_atm_stale(cuda_backend *b, sim_error *err);
/* The stepper's grow and measure primitives, and the counters read at a sync as its counts. */
sim_status sim_cuda_grow_list(sim_backend *base, sim_list list, uint64_t cap, int *grown,
                              sim_error *err);
sim_status sim_cuda_measure(sim_backend *base, const sim_step_shape *f, sim_step_counts *c,
                            sim_error *err);
void sim_cuda_counts(const cuda_backend *b, const sim_step_shape *f, sim_step_counts *c);

/* cuda_export.cu: the sim_backend ops that read */
sim_status sim_cuda_read_state(sim_backend *base, sim_state *out, sim_vec3d *forces,
                               sim_error *err);
sim_status sim_cuda_energy(sim_backend *base, sim_energy *e, sim_error *err);
sim_status sim_cuda_export_positions(sim_backend *base, uint32_t every, sim_vec4f *pos,
                                     float *speed, int on_device, sim_error *err);
sim_status sim_cuda_capture(sim_backend *base, sim_capture *c, sim_error *err);
sim_status sim_cuda_tile_pairs(sim_backend *base, sim_tile2 *out, uint64_t cap, uint64_t *count,
                               sim_error *err);
sim_status sim_cuda_tile_triples(sim_backend *base, sim_tile3 *out, uint64_t cap, uint64_t *count,
                                 sim_error *err);
sim_status sim_cuda_contacts(sim_backend *base, sim_body_pair *out, uint64_t cap, uint64_t *count,
                             sim_error *err);
/* User body `body`'s position now (its slot found through the body order; failure path). */
sim_status sim_cuda_body_position(cuda_backend *b, uint32_t body, sim_vec4f *p, sim_error *err);

#endif /* SIM_CUDA_BACKEND_IMPL_H */
