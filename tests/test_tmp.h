/* SPDX-License-Identifier: MIT
 * nbsim tests — a scratch folder for the files a test executable writes: made on first use as
 * /tmp/nbsim_NAME_XXXXXX and removed with everything in it when the tests are done
 * (TEST_TMP_MAIN, which names it). Header-only (static functions); include after ensure.h, in a
 * file that defines _POSIX_C_SOURCE 200809L (mkdtemp) before its first include. */
#ifndef NBSIM_TEST_TMP_H
#define NBSIM_TEST_TMP_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *test_tmp_name = "test"; /* the executable's, set by TEST_TMP_MAIN */
static char test_tmp_dir[256];             /* empty until the first test_tmp_path */

/* The path of `name` in the scratch folder (made on first use; the executable stops when it
 * cannot be). The four latest paths stay valid. */
static inline const char *test_tmp_path(const char *name) {
    static char out[4][512];
    static int next;
    if (test_tmp_dir[0] == '\0') {
        snprintf(test_tmp_dir, sizeof test_tmp_dir, "/tmp/nbsim_%s_XXXXXX", test_tmp_name);
        if (mkdtemp(test_tmp_dir) == NULL) {
            perror("mkdtemp");
            exit(1);
        }
    }
    char *p = out[next++ % 4];
    snprintf(p, 512, "%s/%s", test_tmp_dir, name);
    return p;
}

/* Writes text to path; the executable stops when it cannot. */
static inline void test_write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* Removes the scratch folder (if made) and the files in it; the tests make no sub-folders. */
static inline void test_tmp_remove(void) {
    if (test_tmp_dir[0] == '\0') {
        return;
    }
    DIR *d = opendir(test_tmp_dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char path[600];
            snprintf(path, sizeof path, "%s/%s", test_tmp_dir, e->d_name);
            unlink(path);
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    if (rmdir(test_tmp_dir) != 0) {
        fprintf(stderr, "could not remove %s\n", test_tmp_dir);
    }
}

/* ENSURE_MAIN with a scratch folder named after the executable (`name`, a string literal). */
#define TEST_TMP_MAIN(table, name)                                                                 \
    int main(int argc, char **argv) {                                                              \
        test_tmp_name = name;                                                                      \
        const int rc =                                                                             \
            ensure_run(table, (int)(sizeof table / sizeof table[0]), argc > 1 ? argv[1] : NULL);   \
        test_tmp_remove();                                                                         \
        return rc;                                                                                 \
    }

#endif /* NBSIM_TEST_TMP_H */
