/* SPDX-License-Identifier: MIT
 * nbsim — writing an output file so that nothing is ever half-written and nothing the path
 * points at is destroyed. One helper for every file nbsim writes (logs, summaries, states,
 * screenshots, bench CSVs, the autotune cache).
 *
 * What a path is decides how it is written:
 *   - a regular file, or a path that does not exist yet: the data goes to a temporary file in
 *     the same folder, which sim_output_commit renames into place (atomic: readers see the old
 *     file or the complete new one, never a part) with the old file's permissions;
 *   - a symbolic link: the same, at the file the link points to (the link stays a link);
 *   - a FIFO, a character or block device, or "-" (standard output): written directly, since a
 *     rename would replace the device or leave a reader of the FIFO waiting forever;
 *   - a directory, or a folder that is missing or not writable: refused with a one-line reason.
 * Write errors (a full disk, an I/O error) are reported by sim_output_commit with the cause, and
 * the path keeps what it had. */
#ifndef SIM_OUTPUT_FILE_H
#define SIM_OUTPUT_FILE_H

#include <stdio.h>

#include "nbsim/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_PATH_MAX 4096

typedef struct {
    FILE *file;                /* write here between open and commit/abort */
    char path[SIM_PATH_MAX];   /* as the caller named it (for messages) */
    char target[SIM_PATH_MAX]; /* where the data lands: path, or a link's final target */
    char temp[SIM_PATH_MAX];   /* renamed onto target at commit; "" when written directly */
    int direct;                /* 1: stdout, a FIFO or a device */
    void *sink;                /* private: the descriptor under file and its first write error */
} sim_output;

/* Whether sim_output_open(path) can work, without creating anything: the reason in err. */
sim_status sim_output_check(const char *path, sim_error *err);
/* Opens for writing ("wb" semantics). On failure nothing is left behind. Opening a FIFO waits
 * for its reader; a signal that interrupts the wait (a handler installed without SA_RESTART, as
 * nbsim's stop signals are) gives SIM_INTERRUPTED. */
sim_status sim_output_open(sim_output *out, const char *path, sim_error *err);
/* Flushes, checks for write errors, syncs and renames into place (direct outputs: flushes and
 * closes). On failure the temporary is removed and err names the cause: the errno of the first
 * write that failed (a full disk is "No space left on device" however long ago it happened). */
sim_status sim_output_commit(sim_output *out, sim_error *err);
/* Closes and removes the temporary: the path keeps what it had (a direct output keeps what was
 * written to it). Safe to call on a committed or never-opened output. */
void sim_output_abort(sim_output *out);

/* Removes the temporaries of every output opened and not yet committed or aborted, for a
 * process about to end without finishing them (a run whose other processes stopped answering):
 * the paths keep what they had. Safe from any thread. */
void sim_output_remove_unfinished(void);

/* mkdir -p: creates folder and its missing parents; fails unless folder ends up a writable
 * folder. */
sim_status sim_make_folders(const char *folder, sim_error *err);

/* 1 when two paths would write the same file (after following links; "-" is stdout). */
int sim_output_same_target(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif /* SIM_OUTPUT_FILE_H */
