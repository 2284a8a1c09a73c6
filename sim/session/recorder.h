/* SPDX-License-Identifier: MIT
 * nbsim — private to the session: the trajectory recorder (nbsim/dump.h says what it does and
 * costs). Every K-th frame copied off the backend (sim_backend_capture, which only the library
 * calls) and written by a writer thread in the format the file's extension selects
 * (nbsim/trajectory.h), so the simulation thread only enqueues.
 *
 * Two capture buffers (double buffering): while the writer formats and writes one frame, the
 * next can already be captured into the other. The simulation thread's cost per dumped frame is
 * the capture call (a few asynchronous copies and an event on the CUDA backend; a copy of the
 * double state on the CPU backend, whose frames are written at full precision, and on any backend
 * for a ParaView series with friction, whose frames need the springs) plus, only when
 * the writer is two frames behind, the wait for a free buffer: frames are never dropped, as
 * LAMMPS and HOOMD users expect every K-th frame.
 * Both costs are measured: the simulation thread's per dumped frame (the log's dump_ms) and the
 * writer's (copy landing, reordering, formatting, writing) in the stats at close.
 *
 * Errors: an unwritable path fails at open. A write that fails later (disk full, I/O error) is
 * reported by the next sim_dump_frame as one line naming the file, the frame and the cause; the
 * file keeps every frame completed before it (nbsim/trajectory.h), and the recorder writes no
 * more. */
#ifndef SIM_SESSION_RECORDER_H
#define SIM_SESSION_RECORDER_H

#include <stdint.h>

#include "nbsim/internal/backend.h"
#include "nbsim/dump.h"

typedef struct sim_dump sim_dump;

/* Creates the file for the backend's N bodies (format from the extension; nothing is created
 * when this fails) and starts the writer thread. every >= 1: a frame is dumped when its index is
 * a multiple of it. */
sim_status sim_dump_open(sim_dump **out, const char *path, int every, const sim_backend *backend,
                         sim_error *err);

/* Called by the simulation thread after every frame with the frames done so far (0: the initial
 * state, before the first frame), the integration steps done so far and the simulated time [s].
 * When frame % every == 0 the current state is captured and queued for the writer. *ms (may be
 * NULL) receives the simulation thread's cost of this call [ms], 0 when nothing was dumped.
 * Returns the first write error (one line) once the writer has failed; the backend must hold
 * the N the dump was opened (or last rebound) for. */
sim_status sim_dump_frame(sim_dump *d, sim_backend *backend, uint64_t frame, uint64_t steps,
                          double sim_time, double *ms, sim_error *err);

/* A new N (an insertion grew the bodies, nbsim/insert.h). Whether the file takes frames of
 * another N: .xyz, .lammpstrj and .pvd give each frame its own count; a NetCDF file has one. */
int sim_dump_variable_n(const sim_dump *d);
/* Waits until the writer has written every queued frame (their copies landed): before the
 * backend they came from is destroyed. */
void sim_dump_drain(sim_dump *d);
/* After sim_dump_drain: buffers for the bodies of `backend` (another N), the frames from now on
 * of its N. On failure the dump is to be closed. */
sim_status sim_dump_rebind(sim_dump *d, const sim_backend *backend, sim_error *err);

/* Writes what is queued, closes the file, stops the thread and frees d (NULL: no-op). stats may
 * be NULL. Returns the first error of the dump's life, if any. */
sim_status sim_dump_close(sim_dump *d, sim_dump_stats *stats, sim_error *err);

/* A snapshot of the counters (any time; thread-safe). */
void sim_dump_get_stats(sim_dump *d, sim_dump_stats *stats);

#endif /* SIM_SESSION_RECORDER_H */
