/* SPDX-License-Identifier: MIT
 * nbsim — tests of sim_output: every kind of path an output may name, in a temporary folder
 * (a FIFO, a symbolic link, a directory, a missing folder, a replaced file), write errors, and
 * the detection of two outputs on one file. The real /dev files are never touched. */
#define _XOPEN_SOURCE 700 /* mkdtemp, symlink, mkfifo */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ensure.h"
#include "nbsim/output_file.h"

static char dir[64];

static void make_dir(void) {
    snprintf(dir, sizeof dir, "/tmp/nbsim_test_output_XXXXXX");
    ENSURE(mkdtemp(dir) != NULL);
}

static void join(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static int holds(const char *path, const char *text) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char buf[256] = "";
    const size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = '\0';
    fclose(f);
    return strcmp(buf, text) == 0;
}

/* Entries in the folder other than . and .. (a leftover temporary shows up here). */
static int entries(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p != NULL) {
        if (fscanf(p, "%d", &n) != 1) {
            n = -1;
        }
        pclose(p);
    }
    return n;
}

static void cleanup(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ENSURE(system(cmd) == 0);
}

static sim_status write_through(const char *path, const char *text, sim_error *err) {
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    fputs(text, out.file);
    return sim_output_commit(&out, err);
}

static void test_new_and_replaced_file(void) {
    make_dir();
    char path[128];
    join(path, sizeof path, "a.csv");
    sim_error err;
    ENSURE(write_through(path, "one\n", &err) == SIM_OK && holds(path, "one\n"));
    ENSURE(chmod(path, 0640) == 0);
    /* Until commit, the old content stays and the new one is elsewhere. */
    sim_output out;
    ENSURE(sim_output_open(&out, path, &err) == SIM_OK);
    fputs("two\n", out.file);
    fflush(out.file);
    ENSURE(holds(path, "one\n") && out.temp[0] != '\0' && entries() == 2);
    ENSURE(sim_output_commit(&out, &err) == SIM_OK);
    ENSURE(holds(path, "two\n") && entries() == 1);
    struct stat st;
    ENSURE(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640); /* permissions kept */
    /* Abort keeps the old content and leaves nothing behind. */
    ENSURE(sim_output_open(&out, path, &err) == SIM_OK);
    fputs("three\n", out.file);
    sim_output_abort(&out);
    ENSURE(holds(path, "two\n") && entries() == 1);
    cleanup();
}

static void test_symlink_is_written_through(void) {
    make_dir();
    char target[128], link[128], sub[128], rel_link[160];
    join(target, sizeof target, "target.txt");
    join(link, sizeof link, "link.txt");
    write_text(target, "old\n");
    ENSURE(symlink(target, link) == 0);
    sim_error err;
    ENSURE(write_through(link, "new\n", &err) == SIM_OK);
    struct stat st;
    ENSURE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode)); /* the link is still a link */
    ENSURE(holds(target, "new\n"));
    /* A relative link in another folder resolves against its own folder; a dangling link
     * creates its target. */
    join(sub, sizeof sub, "sub");
    ENSURE(mkdir(sub, 0777) == 0);
    snprintf(rel_link, sizeof rel_link, "%s/rel.txt", sub);
    ENSURE(symlink("../made.txt", rel_link) == 0);
    ENSURE(write_through(rel_link, "made\n", &err) == SIM_OK);
    char made[128];
    join(made, sizeof made, "made.txt");
    ENSURE(holds(made, "made\n") && lstat(rel_link, &st) == 0 && S_ISLNK(st.st_mode));
    ENSURE(sim_output_same_target(link, target) && sim_output_same_target(rel_link, made));
    cleanup();
}

static void test_fifo_is_written_directly(void) {
    make_dir();
    char fifo[128], copy[128];
    join(fifo, sizeof fifo, "pipe");
    join(copy, sizeof copy, "copy.txt");
    ENSURE(mkfifo(fifo, 0600) == 0);
    const pid_t reader = fork();
    if (reader == 0) { /* the reader: copies what comes through the FIFO */
        FILE *in = fopen(fifo, "r"), *out = fopen(copy, "w");
        int c;
        while (in != NULL && out != NULL && (c = fgetc(in)) != EOF) {
            fputc(c, out);
        }
        _exit(in != NULL && out != NULL && fclose(out) == 0 ? 0 : 1);
    }
    sim_error err;
    ENSURE(write_through(fifo, "through the pipe\n", &err) == SIM_OK);
    int status = 1;
    ENSURE(waitpid(reader, &status, 0) == reader && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    ENSURE(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode)); /* not replaced by a file */
    ENSURE(holds(copy, "through the pipe\n"));
    cleanup();
}

static void test_refusals(void) {
    make_dir();
    char path[160];
    sim_error err;
    /* A directory. */
    ENSURE(sim_output_check(dir, &err) == SIM_IO && strstr(err.message, "is a directory"));
    /* A missing folder. */
    join(path, sizeof path, "missing/x.csv");
    ENSURE(sim_output_check(path, &err) == SIM_IO && strstr(err.message, "does not exist"));
    sim_output out;
    ENSURE(sim_output_open(&out, path, &err) == SIM_IO && entries() == 0);
    /* A folder that is a file. */
    char file[128];
    join(file, sizeof file, "plain");
    write_text(file, "x");
    join(path, sizeof path, "plain/x.csv");
    ENSURE(sim_output_check(path, &err) == SIM_IO && strstr(err.message, "not a folder"));
    /* A link cycle. */
    char a[128], b[128];
    join(a, sizeof a, "loop-a");
    join(b, sizeof b, "loop-b");
    ENSURE(symlink(a, b) == 0 && symlink(b, a) == 0);
    ENSURE(sim_output_check(a, &err) == SIM_IO);
    /* Empty path; stdout is always fine. */
    ENSURE(sim_output_check("", &err) == SIM_BAD_ARGUMENT);
    ENSURE(sim_output_check("-", &err) == SIM_OK);
    cleanup();
}

static void test_write_error_keeps_old_file(void) {
    make_dir();
    char path[128];
    join(path, sizeof path, "big.csv");
    write_text(path, "complete\n");
    /* A file-size limit makes writes fail (EFBIG), as a full disk would (ENOSPC). */
    const pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &lim);
        sim_output out;
        sim_error err;
        if (sim_output_open(&out, path, &err) != SIM_OK) {
            _exit(2);
        }
        for (int i = 0; i < 10000; ++i) {
            fputs("0123456789\n", out.file);
        }
        const sim_status st = sim_output_commit(&out, &err);
        if (st != SIM_IO || strstr(err.message, "big.csv") == NULL) {
            _exit(3);
        }
        /* the cause of the write that failed long before the commit, not "Input/output error" */
        _exit(strstr(err.message, strerror(EFBIG)) != NULL ? 0 : 4);
    }
    int status = 1;
    ENSURE(waitpid(child, &status, 0) == child && WIFEXITED(status));
    ENSURE_MSG(WEXITSTATUS(status) == 0, "child exit %d (4: the message lost the cause)",
               WEXITSTATUS(status));
    ENSURE(holds(path, "complete\n") && entries() == 1);
    cleanup();
}

static void on_alarm(int sig) {
    (void)sig;
}

/* A FIFO nobody reads: the open waits, and a signal whose handler does not restart system calls
 * (nbsim's stop signals) ends the wait with SIM_INTERRUPTED, not an I/O error. */
static void test_fifo_wait_interrupted(void) {
    make_dir();
    char path[128];
    join(path, sizeof path, "nobody.csv");
    ENSURE(mkfifo(path, 0600) == 0);
    const pid_t child = fork();
    if (child == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm; /* no SA_RESTART */
        sigaction(SIGALRM, &sa, NULL);
        alarm(1);
        sim_output out;
        sim_error err;
        const sim_status st = sim_output_open(&out, path, &err);
        _exit(st == SIM_INTERRUPTED && strstr(err.message, "nobody.csv") != NULL ? 0 : 3);
    }
    int status = 1;
    ENSURE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(path);
    cleanup();
}

static void test_same_target(void) {
    make_dir();
    char a[128], b[160];
    join(a, sizeof a, "x.csv");
    snprintf(b, sizeof b, "%s/./x.csv", dir);
    ENSURE(sim_output_same_target(a, b));
    ENSURE(!sim_output_same_target(a, "-") && sim_output_same_target("-", "-"));
    join(b, sizeof b, "y.csv");
    ENSURE(!sim_output_same_target(a, b));
    cleanup();
}

static void test_make_folders(void) {
    make_dir();
    char deep[160];
    join(deep, sizeof deep, "a/b/c");
    sim_error err;
    ENSURE(sim_make_folders(deep, &err) == SIM_OK);
    struct stat st;
    ENSURE(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
    ENSURE(sim_make_folders(deep, &err) == SIM_OK); /* again: fine */
    cleanup();
}

static const ensure_test tests[] = {
    {"output_new_and_replaced", test_new_and_replaced_file},
    {"output_symlink", test_symlink_is_written_through},
    {"output_fifo", test_fifo_is_written_directly},
    {"output_refusals", test_refusals},
    {"output_write_error", test_write_error_keeps_old_file},
    {"output_fifo_wait_interrupted", test_fifo_wait_interrupted},
    {"output_same_target", test_same_target},
    {"output_make_folders", test_make_folders},
};

ENSURE_MAIN(tests)
