/* SPDX-License-Identifier: MIT
 * nbsim — basics shared by every module: host+device qualifiers, status codes, errors, asserts. */
#ifndef SIM_BASE_H
#define SIM_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Functions that run on host and device. Header-only, so the CPU and GPU paths share one text. */
#if defined(__CUDACC__)
#define SIM_HD static inline __host__ __device__
#else
#define SIM_HD static inline
#endif

/* printf-style format checking where the compiler supports it. */
#if defined(__GNUC__)
#define SIM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SIM_PRINTF(fmt, args)
#endif

/* Programmer errors (a broken invariant, not bad user input). Stays on in RelWithDebInfo;
 * the handler can be replaced (tests install one that records instead of aborting). */
typedef void (*sim_assert_handler)(const char *expr, const char *file, int line);
void sim_set_assert_handler(sim_assert_handler handler);
void sim_assert_failed(const char *expr, const char *file, int line);
#if defined(__CUDA_ARCH__)
#define SIM_ASSERT(cond) ((void)0)
#else
#define SIM_ASSERT(cond) ((cond) ? (void)0 : sim_assert_failed(#cond, __FILE__, __LINE__))
#endif

/* Recoverable runtime errors. One list gives the enum and its strings. */
#define SIM_STATUS_LIST(X)                                                                         \
    X(OK, "ok")                                                                                    \
    X(BAD_ARGUMENT, "bad argument")                                                                \
    X(NO_DEVICE, "no CUDA device")                                                                 \
    X(OUT_OF_MEMORY, "out of memory")                                                              \
    X(CUDA, "CUDA error")                                                                          \
    X(IO, "I/O error")                                                                             \
    X(PARSE, "parse error")                                                                        \
    X(UNSTABLE, "simulation unstable")                                                             \
    X(UNSUPPORTED, "unsupported")                                                                  \
    X(INTERRUPTED, "interrupted")

typedef enum {
#define SIM_STATUS_ENUM(id, text) SIM_##id,
    SIM_STATUS_LIST(SIM_STATUS_ENUM)
#undef SIM_STATUS_ENUM
        SIM_STATUS_COUNT
} sim_status;

const char *sim_status_string(sim_status status);

/* An error carries its status and a one-line message that names the cause. */
#define SIM_ERROR_MESSAGE_MAX 512
typedef struct sim_error {
    sim_status status;
    char message[SIM_ERROR_MESSAGE_MAX];
} sim_error;

/* Records the error (if err is not NULL) and returns status, so callers write
 * `return sim_fail(err, SIM_IO, "cannot open '%s'", path);`. */
sim_status sim_fail(sim_error *err, sim_status status, const char *fmt, ...) SIM_PRINTF(3, 4);
void sim_error_clear(sim_error *err);

/* Propagates a sim_status from a call that already filled `err`. */
#define SIM_TRY(expr)                                                                              \
    do {                                                                                           \
        const sim_status sim_try_s_ = (expr);                                                      \
        if (sim_try_s_ != SIM_OK) {                                                                \
            return sim_try_s_;                                                                     \
        }                                                                                          \
    } while (0)

/* Monotonic wall clock [ms] (host timings of the CPU backend and the program's loops). */
double sim_now_ms(void);

/* Unique pairs N(N-1)/2 (k = 2) or triples N(N-1)(N-2)/6 (k = 3), exact in 64 bits (saturates
 * at UINT64_MAX); 0 for other k. The interaction counts every rate is computed from. */
uint64_t sim_choose(uint64_t n, int k);

/* Small vector types of our own: plain C, no CUDA headers needed.
 * sim_vec4f has the size and alignment of CUDA's float4 so device arrays of it are 16-byte loads.
 */
typedef struct {
    double x, y, z;
} sim_vec3d;

typedef struct {
    double x, y, z, w;
} sim_vec4d;

typedef struct
#if defined(__GNUC__) || defined(__CUDACC__)
    __attribute__((aligned(16)))
#endif
{
    float x, y, z, w;
} sim_vec4f;

#ifdef __cplusplus
}
#endif

#endif /* SIM_BASE_H */
