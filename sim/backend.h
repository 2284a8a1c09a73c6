/* SPDX-License-Identifier: MIT
 * nbsim — the simulation backends behind one interface: the double-precision CPU reference and
 * the CUDA backend. app/ drives a backend frame by frame; render/ only asks it for positions. */
#ifndef SIM_BACKEND_H
#define SIM_BACKEND_H

#include "maps.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SIM_BACKEND_CPU, SIM_BACKEND_CUDA } sim_backend_kind;

/* Bodies per triplet tile in every backend, whatever the pair tile (config.tile): a block of
 * 32^3 = 32768 triples is already ~1.3M instructions of work, one tile per warp width lets the
 * per-pair sums rotate through the lanes with shuffles (triplet_kernels.cu), and small tiles
 * keep the coinciding-tile waste (blocks with I == J or J == K do about half or a sixth of the
 * work) at ~3/n of the blocks. */
#define SIM_TRIPLET_TILE 32u

/* Instructions the CUDA triplet kernel issues per triple of its blocks (32^3 per block), from
 * its sm_90 SASS: the loop's 34.1 per triple plus the pair terms, the reductions and the map
 * per block (triplet_kernels.cu and bench/README.md say how it was counted). `nbsim bench
 * triplets` reports it and divides the GPU's issue rate by it for the triplets' ceiling. */
#define SIM_TRIPLET_KERNEL_INSTR 39.0

/* Bodies per pair tile (rho) the pair kernels are built for: one list for the kernels' dispatch,
 * every check and every message. */
#define SIM_PAIR_TILE_LIST(X) X(32) X(64) X(128)
#define SIM_PAIR_TILE_NAMES "32, 64 or 128"
int sim_pair_tile_valid(uint32_t tile);

/* What runs the pair phase: one of the pair thread maps (a sim_pair_map value), or
 * SIM_PAIR_FULL, the nbody-style sweep over all N^2 ordered pairs without symmetry (CUDA only;
 * the baseline that shows what symmetry buys). One value with one name wherever it is shown. */
typedef int sim_pair_choice;
#define SIM_PAIR_FULL ((sim_pair_choice)SIM_PAIR_MAP_COUNT)
#define SIM_PAIR_CHOICE_COUNT (SIM_PAIR_MAP_COUNT + 1)
const char *sim_pair_choice_name(sim_pair_choice choice);  /* the map's name, or "full" */
const char *sim_pair_choice_label(sim_pair_choice choice); /* the map's label, or the sweep's */
int sim_pair_choice_from_name(const char *name);           /* -1 when unknown */

typedef struct {
    sim_backend_kind kind;
    sim_pair_choice pair_map;    /* how pair tiles are placed (CPU emulates the tiling), or full */
    sim_triplet_map triplet_map; /* how triplet tiles are placed */
    uint32_t tile;               /* bodies per pair tile (rho): SIM_PAIR_TILE_NAMES */
    int cpu_threads;             /* CPU backend: OpenMP threads, 0 = default */
} sim_backend_config;

sim_backend_config sim_backend_config_default(void);

/* Timings of one frame (steps_per_frame steps), each summed over the frame's steps.
 * CUDA: events around each kernel; CPU: monotonic host clock. */
typedef struct {
    double pair_ms, triplet_ms, integrate_ms, step_ms;
    uint64_t pair_blocks, pair_blocks_wasted;       /* per step, all launches of the pair map */
    uint64_t triplet_blocks, triplet_blocks_wasted; /* per step; 0 when triplets are off */
    int steps;
} sim_frame_timing;

typedef struct {
    double kinetic, contact, atm, gravity, total; /* [J] */
} sim_energy;

typedef struct sim_backend sim_backend;

sim_status sim_backend_create(const sim_backend_config *config, const sim_params *params,
                              const sim_state *initial, sim_backend **out, sim_error *err);
void sim_backend_destroy(sim_backend *backend);

/* Advances params.steps_per_frame steps. Returns SIM_UNSTABLE (message names the cause: NaN,
 * a body outside the box) when the state blew up. */
sim_status sim_backend_run_frame(sim_backend *backend, sim_frame_timing *timing, sim_error *err);

/* Switches maps; SIM_PAIR_FULL needs the CUDA backend (else SIM_UNSUPPORTED). A refused change
 * leaves the backend as it was. */
sim_status sim_backend_set_maps(sim_backend *backend, sim_pair_choice pair_map,
                                sim_triplet_map triplet_map, sim_error *err);
sim_status sim_backend_set_params(sim_backend *backend, const sim_params *params, sim_error *err);
sim_status sim_backend_set_state(sim_backend *backend, const sim_state *state, sim_error *err);

/* Copies the state (and, if forces != NULL, the last total force per body, n entries) to host. */
sim_status sim_backend_read_state(sim_backend *backend, sim_state *out, sim_vec3d *forces,
                                  sim_error *err);
sim_status sim_backend_energy(sim_backend *backend, sim_energy *energy, sim_error *err);

/* For the viewer: writes (x, y, z, radius) and speed per body. dst_on_device != 0: CUDA device
 * pointers (a mapped GL buffer), only for the CUDA backend; else host pointers. */
sim_status sim_backend_export_positions(sim_backend *backend, sim_vec4f *dst_pos, float *dst_speed,
                                        int dst_on_device, sim_error *err);

const sim_backend_config *sim_backend_get_config(const sim_backend *backend);
const sim_params *sim_backend_get_params(const sim_backend *backend);
const char *sim_backend_device_name(const sim_backend *backend); /* "CPU (8 threads)" or GPU */

/* Number of usable CUDA devices; 0 without a device or driver (never fails). */
int sim_cuda_device_count(void);

/* What the current CUDA device is: for the benchmarks' header and meta.txt, the issue ceiling,
 * and the autotuner's cache key. */
typedef struct {
    char name[256];
    int device;             /* CUDA ordinal */
    int cc_major, cc_minor; /* compute capability */
    int sm_count;
    int fp32_lanes_per_sm; /* FP32 lanes per SM by architecture (128 on Hopper), 0 = unknown */
    int clock_khz;         /* peak SM clock [kHz] */
    int mem_clock_khz;     /* peak memory clock [kHz] */
    int bus_width_bits;
    int l2_bytes;
    uint64_t global_mem_bytes;
    uint64_t free_mem_bytes; /* when queried */
    int driver_version;      /* e.g. 13000 = 13.0 */
    int runtime_version;
} sim_device_info;

/* Fills *dev for the current CUDA device. SIM_NO_DEVICE without a device or driver. */
sim_status sim_cuda_device_query(sim_device_info *dev, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_BACKEND_H */
