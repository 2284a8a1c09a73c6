/* SPDX-License-Identifier: MIT
 * nbsim — outputs written through a temporary and renamed, or directly where a rename would
 * destroy what the path is (see output_file.h). */
#define _GNU_SOURCE /* fopencookie; realpath, fsync, mkstemp, readlink, fchmod */
#include "nbsim/output_file.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder part of path ("." when there is none). */
static void folder_of(const char *path, char *out, size_t cap) {
    char copy[SIM_PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(out, cap, "%s", dirname(copy));
}

static void base_of(const char *path, char *out, size_t cap) {
    char copy[SIM_PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(out, cap, "%s", basename(copy));
}

/* Follows symbolic links to the final target (which need not exist). Returns 0, or -1 with
 * errno (ELOOP for a cycle, ENAMETOOLONG). */
static int follow_links(const char *path, char *out, size_t cap) {
    char cur[SIM_PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0; hops < 40; ++hops) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            if (strlen(cur) >= cap) {
                errno = ENAMETOOLONG;
                return -1;
            }
            snprintf(out, cap, "%s", cur);
            return 0;
        }
        char link[SIM_PATH_MAX];
        const ssize_t len = readlink(cur, link, sizeof link - 1);
        if (len < 0) {
            return -1;
        }
        link[len] = '\0';
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else { /* relative to the link's own folder */
            char dir[SIM_PATH_MAX], next[SIM_PATH_MAX * 2];
            folder_of(cur, dir, sizeof dir);
            snprintf(next, sizeof next, "%s/%s", dir, link);
            if (strlen(next) >= sizeof cur) {
                errno = ENAMETOOLONG;
                return -1;
            }
            snprintf(cur, sizeof cur, "%s", next);
        }
    }
    errno = ELOOP;
    return -1;
}

static int is_direct(mode_t mode) {
    return S_ISFIFO(mode) || S_ISCHR(mode) || S_ISBLK(mode) || S_ISSOCK(mode);
}

/* Resolves path into out->target and decides direct vs temporary; checks what can be checked
 * without creating anything. */
static sim_status resolve(const char *path, sim_output *out, sim_error *err) {
    memset(out, 0, sizeof *out);
    if (path == NULL || path[0] == '\0') {
        return sim_fail(err, SIM_BAD_ARGUMENT, "an output path is empty");
    }
    if (strlen(path) >= sizeof out->path) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "output path '%.60s...' is too long", path);
    }
    snprintf(out->path, sizeof out->path, "%s", path);
    if (strcmp(path, "-") == 0) {
        out->direct = 1;
        snprintf(out->target, sizeof out->target, "-");
        return SIM_OK;
    }
    if (follow_links(path, out->target, sizeof out->target) != 0) {
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    struct stat st;
    if (stat(out->target, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            return sim_fail(err, SIM_IO, "cannot write '%s': it is a directory", path);
        }
        if (is_direct(st.st_mode)) {
            out->direct = 1;
            if (access(out->target, W_OK) != 0) {
                return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(errno));
            }
            return SIM_OK;
        }
    } else if (errno != ENOENT && errno != ENOTDIR) { /* those two: the folder check says why */
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    /* A regular file or a new one: the temporary goes into the target's folder. */
    char dir[SIM_PATH_MAX];
    folder_of(out->target, dir, sizeof dir);
    struct stat dst;
    if (stat(dir, &dst) != 0) {
        return sim_fail(err, SIM_IO, "cannot write '%s': folder '%s' does not exist", path, dir);
    }
    if (!S_ISDIR(dst.st_mode)) {
        return sim_fail(err, SIM_IO, "cannot write '%s': '%s' is not a folder", path, dir);
    }
    if (access(dir, W_OK | X_OK) != 0) {
        return sim_fail(err, SIM_IO, "cannot write '%s': folder '%s' is not writable (%s)", path,
                        dir, strerror(errno));
    }
    return SIM_OK;
}

/* The temporaries now open, for sim_output_remove_unfinished (a few at a time: log, summary,
 * state, a trajectory's frames; one that does not fit is simply not listed). */
#define UNFINISHED_MAX 16
static pthread_mutex_t unfinished_lock = PTHREAD_MUTEX_INITIALIZER;
static char unfinished[UNFINISHED_MAX][SIM_PATH_MAX];

static void track_temp(const char *temp, int open) {
    pthread_mutex_lock(&unfinished_lock);
    for (int k = 0; k < UNFINISHED_MAX; ++k) {
        if (open ? unfinished[k][0] == '\0' : strcmp(unfinished[k], temp) == 0) {
            snprintf(unfinished[k], SIM_PATH_MAX, "%s", open ? temp : "");
            break;
        }
    }
    pthread_mutex_unlock(&unfinished_lock);
}

void sim_output_remove_unfinished(void) {
    pthread_mutex_lock(&unfinished_lock);
    for (int k = 0; k < UNFINISHED_MAX; ++k) {
        if (unfinished[k][0] != '\0') {
            unlink(unfinished[k]);
            unfinished[k][0] = '\0';
        }
    }
    pthread_mutex_unlock(&unfinished_lock);
}

/* The stream under sim_output's FILE: stdio's buffering over the descriptor, with the errno of
 * the first write that failed kept. stdio only keeps an error flag, and by the time the output is
 * committed errno says nothing (a write that failed inside an fputs long before leaves a flag and
 * no cause), so a full disk would be reported as "Input/output error". */
typedef struct {
    int fd;
    int error; /* errno of the first failed write; 0 while none failed */
} out_sink;

static ssize_t sink_write(void *cookie, const char *buf, size_t size) {
    out_sink *k = cookie;
    size_t done = 0;
    while (done < size) {
        const ssize_t wrote = write(k->fd, buf + done, size - done);
        if (wrote < 0 && errno == EINTR) {
            continue;
        }
        if (wrote <= 0) {
            if (k->error == 0) {
                k->error = wrote < 0 ? errno : EIO;
            }
            errno = k->error;
            return (ssize_t)done; /* short: stdio sets the stream's error flag */
        }
        done += (size_t)wrote;
    }
    return (ssize_t)done;
}

static int sink_close(void *cookie) {
    out_sink *k = cookie;
    const int rc = close(k->fd);
    free(k);
    return rc;
}

/* A FILE writing to fd (closed with it); NULL with errno set (fd closed) on failure. */
static FILE *sink_open(int fd, sim_output *out) {
    out_sink *k = malloc(sizeof *k);
    if (k == NULL) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    k->fd = fd;
    k->error = 0;
    const cookie_io_functions_t io = {NULL, sink_write, NULL, sink_close};
    FILE *f = fopencookie(k, "w", io);
    if (f == NULL) {
        const int e = errno;
        sink_close(k);
        errno = e;
        return NULL;
    }
    out->sink = k;
    return f;
}

sim_status sim_output_check(const char *path, sim_error *err) {
    sim_output probe;
    SIM_TRY(resolve(path, &probe, err));
    if (probe.direct) {
        return SIM_OK;
    }
    /* The folder's permission bits do not say everything (a file system that takes no new files,
     * /proc or a read-only mount, root's writes past the bits): make a temporary as the run
     * will, and take it away. */
    char dir[SIM_PATH_MAX], base[SIM_PATH_MAX];
    folder_of(probe.target, dir, sizeof dir);
    base_of(probe.target, base, sizeof base);
    const int len = snprintf(probe.temp, sizeof probe.temp, "%s/.%s.nbsim-XXXXXX", dir, base);
    if (len < 0 || (size_t)len >= sizeof probe.temp) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "output path '%.60s...' is too long", path);
    }
    const int fd = mkstemp(probe.temp);
    if (fd < 0) {
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    close(fd);
    unlink(probe.temp);
    return SIM_OK;
}

sim_status sim_output_open(sim_output *out, const char *path, sim_error *err) {
    SIM_TRY(resolve(path, out, err));
    if (strcmp(out->target, "-") == 0) {
        out->file = stdout;
        return SIM_OK;
    }
    if (out->direct) {
        /* O_NONBLOCK never: a FIFO without a reader should wait, as any writer would; a signal
         * that stops the run ends the wait (its handler interrupts open: no SA_RESTART). */
        const int fd = open(out->target, O_WRONLY | O_CLOEXEC);
        if (fd < 0 && errno == EINTR) {
            return sim_fail(err, SIM_INTERRUPTED,
                            "'%s': stopped while waiting for a reader to open it", path);
        }
        out->file = fd >= 0 ? sink_open(fd, out) : NULL;
        if (out->file == NULL) {
            return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(errno));
        }
        return SIM_OK;
    }
    char dir[SIM_PATH_MAX], base[SIM_PATH_MAX];
    folder_of(out->target, dir, sizeof dir);
    base_of(out->target, base, sizeof base);
    const int len = snprintf(out->temp, sizeof out->temp, "%s/.%s.nbsim-XXXXXX", dir, base);
    if (len < 0 || (size_t)len >= sizeof out->temp) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "output path '%.60s...' is too long", path);
    }
    const int fd = mkstemp(out->temp);
    if (fd < 0) {
        const int e = errno;
        out->temp[0] = '\0';
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(e));
    }
    /* Keep the replaced file's permissions; a new file gets the usual 0666 & ~umask. */
    struct stat st;
    mode_t mode;
    if (stat(out->target, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(fd, mode);
    out->file = sink_open(fd, out);
    if (out->file == NULL) {
        const int e = errno;
        unlink(out->temp);
        out->temp[0] = '\0';
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", path, strerror(e));
    }
    track_temp(out->temp, 1);
    return SIM_OK;
}

sim_status sim_output_commit(sim_output *out, sim_error *err) {
    if (out->file == NULL) {
        return sim_fail(err, SIM_IO, "cannot write '%s': not open", out->path);
    }
    FILE *f = out->file;
    out_sink *k = out->sink; /* NULL for standard output */
    out->file = NULL;
    out->sink = NULL;
    errno = 0;
    int e = 0;
    if (fflush(f) != 0 || ferror(f)) {
        e = k != NULL && k->error != 0 ? k->error : errno ? errno : EIO;
    }
    if (e == 0 && !out->direct && fsync(k->fd) != 0) {
        e = errno;
    }
    if (f == stdout) {
        return e ? sim_fail(err, SIM_IO, "cannot write to standard output: %s", strerror(e))
                 : SIM_OK;
    }
    if (fclose(f) != 0 && e == 0) { /* frees k */
        e = errno ? errno : EIO;
    }
    if (!out->direct) {
        track_temp(out->temp, 0);
    }
    if (e == 0 && !out->direct && rename(out->temp, out->target) != 0) {
        e = errno;
    }
    if (e != 0) {
        if (!out->direct) {
            unlink(out->temp);
        }
        out->temp[0] = '\0';
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", out->path, strerror(e));
    }
    out->temp[0] = '\0';
    return SIM_OK;
}

void sim_output_abort(sim_output *out) {
    if (out->file != NULL && out->file != stdout) {
        fclose(out->file);
    }
    out->file = NULL;
    out->sink = NULL;
    if (out->temp[0] != '\0') {
        track_temp(out->temp, 0);
        unlink(out->temp);
        out->temp[0] = '\0';
    }
}

/* The canonical name a path writes to: realpath of the target, or of its folder + its name. */
static int canonical(const char *path, char *out, size_t cap) {
    if (strcmp(path, "-") == 0) {
        snprintf(out, cap, "-");
        return 0;
    }
    char target[SIM_PATH_MAX];
    if (follow_links(path, target, sizeof target) != 0) {
        return -1;
    }
    char *real = realpath(target, NULL);
    if (real != NULL) {
        snprintf(out, cap, "%s", real);
        free(real);
        return 0;
    }
    char dir[SIM_PATH_MAX], base[SIM_PATH_MAX];
    folder_of(target, dir, sizeof dir);
    base_of(target, base, sizeof base);
    if ((real = realpath(dir, NULL)) == NULL) {
        return -1;
    }
    snprintf(out, cap, "%s/%s", real, base);
    free(real);
    return 0;
}

int sim_output_same_target(const char *a, const char *b) {
    char ca[SIM_PATH_MAX + 8], cb[SIM_PATH_MAX + 8];
    if (canonical(a, ca, sizeof ca) != 0 || canonical(b, cb, sizeof cb) != 0) {
        return strcmp(a, b) == 0;
    }
    return strcmp(ca, cb) == 0;
}

sim_status sim_make_folders(const char *folder, sim_error *err) {
    char buf[SIM_PATH_MAX];
    if (strlen(folder) >= sizeof buf) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "folder path '%.60s...' is too long", folder);
    }
    snprintf(buf, sizeof buf, "%s", folder);
    for (char *p = buf + 1;; ++p) {
        const int end = *p == '\0';
        if (*p == '/' || end) {
            const char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                return sim_fail(err, SIM_IO, "cannot create folder '%s': %s", buf, strerror(errno));
            }
            *p = saved;
        }
        if (end) {
            break;
        }
    }
    struct stat st;
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode) || access(folder, W_OK | X_OK) != 0) {
        return sim_fail(err, SIM_IO, "cannot write into folder '%s'", folder);
    }
    return SIM_OK;
}
