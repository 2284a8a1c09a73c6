/* SPDX-License-Identifier: MIT
 * nbsim — trajectories recorded by a session (sim_session_dump_start: --dump FILE --dump-every
 * K): every K-th frame copied off the backend and written by a writer thread in the format the
 * file's extension selects (nbsim/trajectory.h), so the simulation thread only enqueues. Frames
 * are never dropped: when the writer is two frames behind, the simulation waits for it. What it
 * cost is counted on both threads. */
#ifndef SIM_DUMP_H
#define SIM_DUMP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t frames;       /* complete frames in the file */
    uint64_t bytes;        /* their size */
    uint64_t dumped;       /* frames captured (frames + queued + failed) */
    double sim_ms_total;   /* simulation thread, summed over dumped frames [ms] */
    double sim_ms_max;     /* simulation thread, worst dumped frame [ms] */
    double write_ms_total; /* writer thread, summed over written frames [ms] */
    double write_ms_max;   /* writer thread, worst frame [ms] */
    double stall_ms_total; /* part of sim_ms_total spent waiting for a free buffer [ms] */
} sim_dump_stats;

/* One line for the end of a run: "dump: F frames (S MB) to run.nc, every 20 frames;
 * simulation thread T ms per dumped frame (max T), writer T ms per frame (max T)". */
void sim_dump_summary(const char *path, int every, const sim_dump_stats *stats, char *out,
                      size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SIM_DUMP_H */
