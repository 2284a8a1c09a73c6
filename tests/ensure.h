/* SPDX-License-Identifier: MIT
 * nbsim — a tiny test harness: ENSURE / ENSURE_NEAR record failures and keep going; each test
 * executable lists its tests in a table and runs those whose name contains argv[1] (if given). */
#ifndef NBSIM_ENSURE_H
#define NBSIM_ENSURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int ensure_failures;
static int ensure_checks;

#define ENSURE(cond)                                                                               \
    do {                                                                                           \
        ++ensure_checks;                                                                           \
        if (!(cond)) {                                                                             \
            ++ensure_failures;                                                                     \
            fprintf(stderr, "%s:%d: ENSURE(%s) failed\n", __FILE__, __LINE__, #cond);              \
        }                                                                                          \
    } while (0)

#define ENSURE_MSG(cond, ...)                                                                      \
    do {                                                                                           \
        ++ensure_checks;                                                                           \
        if (!(cond)) {                                                                             \
            ++ensure_failures;                                                                     \
            fprintf(stderr, "%s:%d: ENSURE(%s) failed: ", __FILE__, __LINE__, #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* |a - b| <= tol (absolute). */
#define ENSURE_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double ensure_a_ = (double)(a), ensure_b_ = (double)(b), ensure_t_ = (double)(tol);        \
        ++ensure_checks;                                                                           \
        if (!(fabs(ensure_a_ - ensure_b_) <= ensure_t_)) {                                         \
            ++ensure_failures;                                                                     \
            fprintf(stderr, "%s:%d: ENSURE_NEAR(%s, %s, %s) failed: %.17g vs %.17g\n", __FILE__,   \
                    __LINE__, #a, #b, #tol, ensure_a_, ensure_b_);                                 \
        }                                                                                          \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} ensure_test;

/* Runs the tests whose name contains filter (all if NULL). Exit status: 0 pass, 1 fail. */
static int ensure_run(const ensure_test *tests, int count, const char *filter) {
    int ran = 0;
    for (int t = 0; t < count; ++t) {
        if (filter != NULL && strstr(tests[t].name, filter) == NULL) {
            continue;
        }
        int before = ensure_failures;
        tests[t].fn();
        ++ran;
        printf("%-48s %s\n", tests[t].name, ensure_failures == before ? "ok" : "FAILED");
        fflush(stdout);
    }
    printf("%d tests, %d checks, %d failures\n", ran, ensure_checks, ensure_failures);
    if (ran == 0) {
        fprintf(stderr, "no test matches '%s'\n", filter ? filter : "");
        return 1;
    }
    return ensure_failures == 0 ? 0 : 1;
}

#define ENSURE_MAIN(table)                                                                         \
    int main(int argc, char **argv) {                                                              \
        return ensure_run(table, (int)(sizeof table / sizeof table[0]), argc > 1 ? argv[1] : NULL);\
    }

/* GPU tests exit with this when no device is present; ctest reports them as skipped. */
#define ENSURE_SKIP_CODE 77

#endif /* NBSIM_ENSURE_H */
