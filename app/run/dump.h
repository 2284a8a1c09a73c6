/* SPDX-License-Identifier: MIT
 * nbsim — the trajectory recorder (--dump FILE --dump-every K): every K-th frame copied off the
 * backend and written by a writer thread in the format the file's extension selects
 * (include/nbsim/trajectory.h), so the simulation thread only enqueues.
 *
 * Two capture buffers (double buffering): while the writer formats and writes one frame, the
 * next can already be captured into the other. The simulation thread's cost per dumped frame is
 * the capture call (a few asynchronous copies and an event on the CUDA backend; a float
 * conversion on the CPU backend) plus, only when the writer is two frames behind, the wait for a
 * free buffer: frames are never dropped, as LAMMPS and HOOMD users expect every K-th frame.
 * Both costs are measured: the simulation thread's per dumped frame (the log's dump_ms) and the
 * writer's (copy landing, reordering, formatting, writing) in the stats at close.
 *
 * Errors: an unwritable path fails at open. A write that fails later (disk full, I/O error) is
 * reported by the next app_dump_frame as one line naming the file, the frame and the cause; the
 * file keeps every frame completed before it (include/nbsim/trajectory.h), and the recorder writes no more.
 */
#ifndef APP_DUMP_H
#define APP_DUMP_H

#include <stdint.h>

#include "nbsim/backend.h"

typedef struct app_dump app_dump;

typedef struct {
    uint64_t frames;       /* complete frames in the file */
    uint64_t bytes;        /* their size */
    uint64_t dumped;       /* frames captured (frames + queued + failed) */
    double sim_ms_total;   /* simulation thread, summed over dumped frames [ms] */
    double sim_ms_max;     /* simulation thread, worst dumped frame [ms] */
    double write_ms_total; /* writer thread, summed over written frames [ms] */
    double write_ms_max;   /* writer thread, worst frame [ms] */
    double stall_ms_total; /* part of sim_ms_total spent waiting for a free buffer [ms] */
} app_dump_stats;

/* Creates the file for the backend's N bodies (format from the extension; nothing is created
 * when this fails) and starts the writer thread. every >= 1: a frame is dumped when its index is
 * a multiple of it. */
sim_status app_dump_open(app_dump **out, const char *path, int every, const sim_backend *backend,
                         sim_error *err);

/* Called by the simulation thread after every frame with the frames done so far (0: the initial
 * state, before the first frame), the integration steps done so far and the simulated time [s].
 * When frame % every == 0 the current state is captured and queued for the writer. *ms (may be
 * NULL) receives the simulation thread's cost of this call [ms], 0 when nothing was dumped.
 * Returns the first write error (one line) once the writer has failed; the backend must hold
 * the N the dump was opened for. */
sim_status app_dump_frame(app_dump *d, sim_backend *backend, uint64_t frame, uint64_t steps,
                          double sim_time, double *ms, sim_error *err);

/* Writes what is queued, closes the file, stops the thread and frees d (NULL: no-op). stats may
 * be NULL. Returns the first error of the dump's life, if any. */
sim_status app_dump_close(app_dump *d, app_dump_stats *stats, sim_error *err);

/* A snapshot of the counters (any time; thread-safe). */
void app_dump_get_stats(app_dump *d, app_dump_stats *stats);

/* One line for the end of a run: "dump: 101 frames (12.3 MB) to run.nc, every 20 frames;
 * simulation thread 0.02 ms per dumped frame (max 0.05), writer 3.1 ms (max 4.0)". */
void app_dump_summary(const char *path, int every, const app_dump_stats *stats, char *out,
                      size_t cap);

#endif /* APP_DUMP_H */
