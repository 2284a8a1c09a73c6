/* SPDX-License-Identifier: MIT
 * nbsim — statistics of a run's per-step kernel times: median, p95, min, max; the end-of-run
 * summary on stdout and as JSON. */
#ifndef SIM_RUN_STATS_H
#define SIM_RUN_STATS_H

#include <stdio.h>

#include "nbsim/map_compare.h"
#include "nbsim/session.h"
#include "nbsim/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-step times a run keeps statistics of: id, the sim_frame_timing field, name, and what
 * it includes (the summary, the JSON's ms_per_step_includes and --help say it). The step's phases
 * (SIM_FRAME_PHASE_LIST, config.h) add up to `step`; `contact` and `integrate` are sums of some
 * of them, kept because culling and the integrator are measured by them. */
#define SIM_RUN_KERNEL_LIST(X)                                                                     \
    SIM_FRAME_PHASE_LIST(X)                                                                        \
    X(CONTACT, contact_ms, "contact", "sum: sort + cull + lists + cells + pair")                   \
    X(INTEGRATE, integrate_ms, "integrate", "sum: drift + kick")                                   \
    X(STEP, step_ms, "step", "the whole step: the phases above add up to it")

typedef enum {
#define SIM_RUN_KERNEL_ENUM(id, field, name, includes) SIM_RUN_KERNEL_##id,
    SIM_RUN_KERNEL_LIST(SIM_RUN_KERNEL_ENUM)
#undef SIM_RUN_KERNEL_ENUM
        SIM_RUN_KERNEL_COUNT
} sim_run_kernel;

/* The per-step counts a run keeps statistics of (sim_frame_timing: the contact sweep's, in the
 * last step of each frame): id, name, the frame's count. */
#define SIM_RUN_COUNT_LIST(X)                                                                      \
    X(CANDIDATES, "candidate_tests", t->candidate_tests)                                           \
    X(CONTACTS, "contacts", t->contacts)

typedef enum {
#define SIM_RUN_COUNT_ENUM(id, name, count) SIM_RUN_COUNT_##id,
    SIM_RUN_COUNT_LIST(SIM_RUN_COUNT_ENUM)
#undef SIM_RUN_COUNT_ENUM
        SIM_RUN_COUNT_COUNT
} sim_run_count;

typedef struct {
    double *ms[SIM_RUN_KERNEL_COUNT];    /* per-step time of each frame [ms] */
    double *counts[SIM_RUN_COUNT_COUNT]; /* per-step counts of each frame */
    size_t count, capacity;
    int culled;         /* some frame ran the culled pipeline (sort and cull are worth printing) */
    int triplet_culled; /* some frame culled tile triples by the cut-off */
    /* the ATM cut-off's neighbour lists: some frame swept them; the steps that did and their
     * rebuilds; the entries of the last frame's last build */
    int atm_lists;
    uint64_t atm_steps, atm_rebuilds, atm_entries;
    /* every frame's whole time of each kernel [ms] and the steps they took: the mean per step
     * over the run (sim_run_stats_mean), rebuilds and re-sorts where they fell */
    double total_ms[SIM_RUN_KERNEL_COUNT];
    uint64_t total_steps;
} sim_run_stats;

/* Whether the frames' touching pairs (sim_frame_timing.contacts) were counted: by the culled
 * sweeps (tile lists or neighbour lists, CPU and CUDA), not by the brute-force sweep, whose
 * contacts the log, the summary and the overlay show as empty, null or n/a. Pair tests
 * (candidate_tests) are always counted. */
int sim_frame_contacts_counted(int culled);
/* N x steps per second of the whole step (HOOMD-blue's and LAMMPS' figure of merit, atom-steps
 * per second) at step_ms per step [ms]; 0 when step_ms <= 0. */
double sim_particle_steps_per_s(const sim_run_info *s, double step_ms);

/* The step's phases (SIM_FRAME_PHASE_LIST): how many, and the sim_frame_timing field of the i-th
 * in step order ("drift_ms"; NULL past the last): they add up to step_ms. */
int sim_frame_phase_count(void);
const char *sim_frame_phase_field(int i);

sim_status sim_run_stats_add(sim_run_stats *rs, const sim_frame_timing *t, sim_error *err);
sim_stats sim_run_stats_get(const sim_run_stats *rs, sim_run_kernel k);
/* Kernel k's mean time per step over every step of the run [ms] (0 before a step): what a
 * whole-step comparison takes, where the per-frame statistics' median can step over the frames
 * that rebuilt. */
double sim_run_stats_mean(const sim_run_stats *rs, sim_run_kernel k);
sim_stats sim_run_stats_count(const sim_run_stats *rs, sim_run_count c);
void sim_run_stats_free(sim_run_stats *rs);

/* How a run ended, for the summary. */
typedef struct {
    long frames_requested; /* --frames; 0 in the viewer */
    uint64_t seed;         /* the built-in scene's seed, when seed_used */
    int seed_used;
    const char *stop;    /* "done", "interrupted", "unstable" (blew up), "failed" */
    uint64_t stop_frame; /* the frame that blew up or failed (1-based); 0 when none did */
    const char *detail;  /* the signal, the cause of a blow-up or failure; "" when done */
    double wall_s;       /* wall-clock seconds of the run */
} sim_run_end;

/* Prints the summary: the table of per-step times with what each includes, then particle
 * steps/s, unique pairs/s (the brute-force sweep only: culled, a rate of pairs not tested would
 * be no rate), the candidate pair tests per step and per body, the contacts per step, and
 * unique triples/s with triplets. */
void sim_run_stats_print(const sim_run_stats *rs, const sim_run_info *s, FILE *out);
/* The summary as JSON: what ran (scene, seed, N, backend, maps), how it ended (frames requested
 * and done, stop reason, the frame that blew up or failed and why, wall time), the per-kernel
 * statistics and what each includes (ms_per_step, ms_per_step_includes), and the medians the
 * table prints: particle_steps_per_s, candidate_tests_per_step, candidate_tests_per_body,
 * contacts_per_step (null when not counted), pairs_per_s (null when culled), triples_per_s; the
 * statistics null when no frame completed. */
sim_status sim_run_stats_write_json(const sim_run_stats *rs, const sim_run_info *s,
                                    const sim_run_end *end, const char *path, sim_error *err);
/* The same with the viewer's map comparison as "map_comparison" (sim_map_compare_write_json;
 * `full` listed on CUDA); maps == NULL writes exactly sim_run_stats_write_json's file. */
sim_status sim_run_stats_write_json_maps(const sim_run_stats *rs, const sim_run_info *s,
                                         const sim_run_end *end, const sim_map_compare *maps,
                                         const char *path, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SIM_RUN_STATS_H */
