/* SPDX-License-Identifier: MIT
 * nbsim — what the two text formats share: a fast float formatter, frame output that commits
 * whole frames or cuts the file back, a mapped-file line reader and the reader of body lines.
 *
 * Cost: a body line is 12 numbers, ~140 bytes. printf("%.9g") takes about six times as long a
 * number as traj_fmt_float below (seconds a frame of 10^6 bodies on one core), and the bodies are
 * formatted in blocks on all cores (OpenMP). traj_demo --write-only (tests/) times a frame,
 * formatting and writing: 10^6 bodies, 137 MB (on a development machine; not kept).
 * A CPU run's frames are doubles at full precision (traj_fmt_double_at: a long double candidate,
 * checked by strtod only when it is near a tie, where printf and strtod alone cost about 30 times
 * traj_fmt_float a number): on the same kind of machine a double frame takes about 3.4 times a
 * float frame's time, 2 x 10^5 bodies in 34 MB against 28 MB. */
#define _POSIX_C_SOURCE 200809L

#include "io/traj_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Bodies per formatting task, and tasks per chunk: a chunk of 64 Ki bodies needs 12 MiB of
 * buffer, and 64 tasks keep up to 64 cores busy. */
#define TRAJ_TEXT_BLOCK 1024u
#define TRAJ_TEXT_BLOCKS 64u
#define TRAJ_TEXT_CHUNK (TRAJ_TEXT_BLOCK * TRAJ_TEXT_BLOCKS)

/* ---- numbers ---- */

/* Powers of ten that are exact in double. */
static const double kPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* v * 10^k with at most three correctly rounded operations by exact powers: relative error
 * ~3e-16, far below the 5e-10 a 9-digit decimal resolves. Floats need k in [-30, 54]. */
static double scale10(double v, int k) {
    while (k > 22) {
        v *= kPow10[22];
        k -= 22;
    }
    while (k < -22) {
        v /= kPow10[22];
        k += 22;
    }
    return k >= 0 ? v * kPow10[k] : v / kPow10[-k];
}

const char *traj_fmt_double(char *out, size_t cap, double v) {
    snprintf(out, cap, "%.15g", v);
    if (strtod(out, NULL) != v) {
        snprintf(out, cap, "%.17g", v);
    }
    return out;
}

size_t traj_fmt_u64(char *out, uint64_t v) {
    char tmp[20];
    size_t len = 0;
    do {
        tmp[len++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < len; ++i) {
        out[i] = tmp[len - 1 - i];
    }
    return len;
}

/* The decimal d[0 .. nd) x 10^(e - nd + 1) (nd >= 1 significant digits, no trailing zeros
 * needed) written at p like %g with `precision` digits: scientific outside [1e-4, 10^precision).
 * Returns the characters written. */
static size_t emit_digits(char *p, const char *d, int nd, int e, int precision) {
    char *const start = p;
    while (nd > 1 && d[nd - 1] == '0') {
        --nd;
    }
    if (e < -4 || e >= precision) {
        *p++ = d[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        const int ae = e < 0 ? -e : e;
        if (ae >= 100) {
            *p++ = (char)('0' + ae / 100);
        }
        *p++ = (char)('0' + ae / 10 % 10);
        *p++ = (char)('0' + ae % 10);
    } else if (e >= 0) {
        if (nd <= e + 1) {
            memcpy(p, d, (size_t)nd);
            p += nd;
            for (int i = nd; i <= e; ++i) {
                *p++ = '0';
            }
        } else {
            memcpy(p, d, (size_t)e + 1);
            p += e + 1;
            *p++ = '.';
            memcpy(p, d + e + 1, (size_t)(nd - e - 1));
            p += nd - e - 1;
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -e - 1; ++i) {
            *p++ = '0';
        }
        memcpy(p, d, (size_t)nd);
        p += nd;
    }
    return (size_t)(p - start);
}

/* The digits of m, exactly `count` of them (leading zeros kept). */
static void digits_of(uint64_t m, char *d, int count) {
    for (int i = count - 1; i >= 0; --i) {
        d[i] = (char)('0' + m % 10);
        m /= 10;
    }
}

size_t traj_fmt_float(char *out, float value) {
    char *p = out;
    double v = value;
    if (isnan(v)) {
        memcpy(p, "nan", 3);
        return 3;
    }
    if (signbit(v)) {
        *p++ = '-';
        v = -v;
    }
    if (isinf(v)) {
        memcpy(p, "inf", 3);
        return (size_t)(p - out) + 3;
    }
    if (v == 0.0) {
        *p++ = '0';
        return (size_t)(p - out);
    }
    /* The decimal exponent e with 10^e <= v < 10^(e+1): estimated from the binary exponent
     * (off by at most one), then fixed by the 9-digit mantissa's range. */
    int bexp = 0;
    (void)frexp(v, &bexp);
    int e = (int)floor((bexp - 1) * 0.30102999566398120);
    uint64_t m = 0;
    for (int tries = 0; tries < 3; ++tries) {
        m = (uint64_t)(scale10(v, 8 - e) + 0.5);
        if (m >= 1000000000u) {
            ++e;
        } else if (m < 100000000u) {
            --e;
        } else {
            break;
        }
    }
    char d[9];
    digits_of(m, d, 9);
    return (size_t)(p - out) + emit_digits(p, d, 9, e, 9);
}

/* v * 10^k in long double (64-bit mantissa on x86: powers of ten exact up to 10^27), relative
 * error ~1e-19 per operation: a 17-digit candidate off by at most a few hundredths of its last
 * digit, which traj_fmt_double_at then checks. */
static long double scale10l(long double v, int k) {
    static const long double p[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,
                                      1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
                                      1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L,
                                      1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
    while (k > 27) {
        v *= p[27];
        k -= 27;
    }
    while (k < -27) {
        v /= p[27];
        k += 27;
    }
    return k >= 0 ? v * p[k] : v / p[-k];
}

/* digits d[0 .. nd) with exponent e as text in buf (NUL-terminated); whether it reads back as v. */
static int reads_back(char *buf, int negative, const char *d, int nd, int e, double v) {
    buf[0] = '-';
    const size_t len = (size_t)negative + emit_digits(buf + negative, d, nd, e, 17);
    buf[len] = '\0';
    return strtod(buf, NULL) == v;
}

size_t traj_fmt_double_at(char *out, double value) {
    if (!isfinite(value) || value == 0.0) {
        return traj_fmt_float(out, (float)value); /* nan, inf, 0, -0 */
    }
    const int negative = signbit(value) != 0;
    const double v = fabs(value);
    int bexp = 0;
    (void)frexp(v, &bexp);
    int e = (int)floor((bexp - 1) * 0.30102999566398120);
    uint64_t m = 0;
    long double x = 0.0L;
    for (int tries = 0; tries < 3; ++tries) {
        x = scale10l(v, 16 - e);
        m = (uint64_t)(x + 0.5L);
        if (m >= 100000000000000000ull) {
            ++e;
        } else if (m < 10000000000000000ull) {
            --e;
        } else {
            break;
        }
    }
    char text[40], d[17];
    /* 15 digits when they give v back (radii, masses, round numbers: "0.45", not
     * "0.45000000000000001"); only tried when the 17 digits end near ..00, as they then do. */
    const uint64_t tail = m % 100;
    if (tail <= 12 || tail >= 88) {
        uint64_t m15 = (m + 50) / 100;
        int e15 = e;
        if (m15 >= 1000000000000000ull) {
            m15 /= 10;
            ++e15;
        }
        digits_of(m15, d, 15);
        if (reads_back(text, negative, d, 15, e15, value)) {
            const size_t len = strlen(text);
            memcpy(out, text, len);
            return len;
        }
    }
    /* 17 digits correctly rounded always give a double back (DBL_DECIMAL_DIG). x is off by at
     * most ~0.07 of a unit (13 roundings of 2^-64 at the extreme exponents), so m is the correctly
     * rounded one unless x is within 0.1 of a half: only then is it checked. */
    const long double at = x + 0.5L - (long double)m;
    const int sure = LDBL_MANT_DIG >= 64 && at > 0.1L && at < 0.9L;
    digits_of(m, d, 17);
    if (sure) {
        text[0] = '-';
        const size_t len = (size_t)negative + emit_digits(text + negative, d, 17, e, 17);
        memcpy(out, text, len);
        return len;
    }
    if (!reads_back(text, negative, d, 17, e, value)) {
        snprintf(text, sizeof text, "%.17g", value); /* the candidate was off: printf's, exact */
    }
    const size_t len = strlen(text);
    memcpy(out, text, len);
    return len;
}

static void put3(double out[3], double x, double y, double z) {
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

void traj_frame_body(const sim_traj_frame *f, uint32_t body, traj_body *b) {
    memset(b, 0, sizeof *b);
    const uint32_t i = f->slot_of != NULL ? f->slot_of[body] : body;
    if (f->pos_d != NULL) {
        const sim_vec4d p = f->pos_d[i], v = f->vel_d[i];
        put3(b->pos, p.x, p.y, p.z);
        put3(b->vel, v.x, v.y, v.z);
        b->radius = p.w;
        b->mass = v.w;
        if (f->force_d != NULL) {
            put3(b->force, f->force_d[i].x, f->force_d[i].y, f->force_d[i].z);
        }
        if (f->spin_d != NULL) {
            put3(b->spin, f->spin_d[i].x, f->spin_d[i].y, f->spin_d[i].z);
        }
        return;
    }
    const sim_vec4f p = f->pos[i], v = f->vel[i];
    put3(b->pos, p.x, p.y, p.z);
    put3(b->vel, v.x, v.y, v.z);
    b->radius = p.w;
    b->mass = v.w;
    if (f->force != NULL) {
        put3(b->force, f->force[i].x, f->force[i].y, f->force[i].z);
    }
    if (f->spin != NULL) {
        put3(b->spin, f->spin[i].x, f->spin[i].y, f->spin[i].z);
    }
}

size_t traj_text_body(char *out, sim_traj_format format, uint32_t id, const traj_body *b,
                      int spin, int full) {
    char *o = out;
    double cols[18];
    int count;
    if (format == SIM_TRAJ_XYZ) {
        /* momenta: the exact double product, rounded once to what the line carries */
        const double m = b->mass;
        const double xyz[15] = {b->pos[0],     b->pos[1],     b->pos[2],     b->vel[0],
                                b->vel[1],     b->vel[2],     m * b->vel[0], m * b->vel[1],
                                m * b->vel[2], b->radius,     m,             m,
                                b->force[0],   b->force[1],   b->force[2]};
        memcpy(cols, xyz, sizeof xyz);
        count = 15;
        *o++ = 'X';
        *o++ = ' ';
        o += traj_fmt_u64(o, id);
    } else {
        const double lmp[11] = {b->pos[0], b->pos[1], b->pos[2],   b->vel[0],   b->vel[1],
                                b->vel[2], b->radius, b->mass,     b->force[0], b->force[1],
                                b->force[2]};
        memcpy(cols, lmp, sizeof lmp);
        count = 11;
        o += traj_fmt_u64(o, id);
        *o++ = ' ';
        *o++ = '1'; /* type */
    }
    if (spin) {
        memcpy(cols + count, b->spin, sizeof b->spin);
        count += 3;
    }
    for (int c = 0; c < count; ++c) {
        *o++ = ' ';
        o += full ? traj_fmt_double_at(o, cols[c]) : traj_fmt_float(o, (float)cols[c]);
    }
    *o++ = '\n';
    return (size_t)(o - out);
}

/* ---- output ---- */

/* write() until done; 0 with errno set on failure. */
static int write_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        const ssize_t wrote = write(fd, data, len);
        if (wrote < 0) {
            if (errno == EINTR) {
                continue;
            }
            return 0;
        }
        if (wrote == 0) {
            errno = EIO;
            return 0;
        }
        data += wrote;
        len -= (size_t)wrote;
    }
    return 1;
}

sim_status traj_text_open(sim_traj_writer *w, sim_error *err) {
    traj_text_sink *s = &w->text;
    s->fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        return sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", w->path, strerror(errno));
    }
    s->good_size = 0;
    s->buf = malloc((size_t)TRAJ_TEXT_CHUNK * TRAJ_TEXT_LINE_MAX);
    s->lens = malloc(TRAJ_TEXT_BLOCKS * sizeof *s->lens);
    if (s->buf == NULL || s->lens == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "trajectory '%s': no memory for a %u-body buffer",
                        w->path, TRAJ_TEXT_CHUNK);
    }
    return SIM_OK;
}

/* Cuts the file back to its last complete frame after a failed write. */
static void roll_back(traj_text_sink *s) {
    const int saved = errno;
    if (ftruncate(s->fd, (off_t)s->good_size) == 0) {
        (void)lseek(s->fd, (off_t)s->good_size, SEEK_SET);
    }
    errno = saved;
}

/* Formats bodies [first, first + count) of f into the chunk buffer, block by block. */
static void format_chunk(traj_text_sink *s, sim_traj_format format, int spin,
                         const sim_traj_frame *f, uint32_t first, uint32_t count) {
    const int blocks = (int)((count + TRAJ_TEXT_BLOCK - 1) / TRAJ_TEXT_BLOCK);
    (void)blocks;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (blocks > 1)
#endif
    for (int b = 0; b < blocks; ++b) {
        const uint32_t lo = first + (uint32_t)b * TRAJ_TEXT_BLOCK;
        const uint32_t hi =
            lo + TRAJ_TEXT_BLOCK < first + count ? lo + TRAJ_TEXT_BLOCK : first + count;
        char *out = s->buf + (size_t)b * TRAJ_TEXT_BLOCK * TRAJ_TEXT_LINE_MAX;
        size_t len = 0;
        for (uint32_t i = lo; i < hi; ++i) {
            traj_body body;
            traj_frame_body(f, i, &body);
            len += traj_text_body(out + len, format, i + 1, &body, spin, f->pos_d != NULL);
        }
        s->lens[b] = len;
    }
}

sim_status traj_text_frame(sim_traj_writer *w, const char *header, size_t len,
                           const sim_traj_frame *f, sim_error *err) {
    traj_text_sink *s = &w->text;
    uint64_t size = len;
    int ok = write_all(s->fd, header, len);
    for (uint32_t first = 0; ok && first < f->n; first += TRAJ_TEXT_CHUNK) {
        const uint32_t count = f->n - first < TRAJ_TEXT_CHUNK ? f->n - first : TRAJ_TEXT_CHUNK;
        format_chunk(s, w->format, w->spin, f, first, count);
        const uint32_t blocks = (count + TRAJ_TEXT_BLOCK - 1) / TRAJ_TEXT_BLOCK;
        for (uint32_t b = 0; ok && b < blocks; ++b) {
            ok = write_all(s->fd, s->buf + (size_t)b * TRAJ_TEXT_BLOCK * TRAJ_TEXT_LINE_MAX,
                           s->lens[b]);
            size += s->lens[b];
        }
    }
    if (!ok) {
        const int e = errno;
        roll_back(s);
        return sim_fail(err, SIM_IO,
                        "cannot write trajectory '%s' (frame %llu): %s; it keeps its %llu complete "
                        "frame%s",
                        w->path, (unsigned long long)w->frames, strerror(e),
                        (unsigned long long)w->frames, w->frames == 1 ? "" : "s");
    }
    s->good_size += size;
    w->frames++;
    w->bytes = s->good_size;
    return SIM_OK;
}

sim_status traj_text_close(sim_traj_writer *w, sim_error *err) {
    traj_text_sink *s = &w->text;
    sim_status st = SIM_OK;
    if (s->fd >= 0) {
        /* Late write-back errors (a full disk on delayed allocation) surface here. */
        if (fdatasync(s->fd) != 0 && errno != EINVAL && errno != EROFS) {
            st =
                sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", w->path, strerror(errno));
        }
        if (close(s->fd) != 0 && st == SIM_OK) {
            st =
                sim_fail(err, SIM_IO, "cannot write trajectory '%s': %s", w->path, strerror(errno));
        }
        s->fd = -1;
    }
    free(s->buf);
    free(s->lens);
    s->buf = NULL;
    s->lens = NULL;
    return st;
}

/* ---- reading ---- */

sim_status traj_map_open(traj_map *m, const char *path, sim_error *err) {
    m->data = NULL;
    m->size = 0;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return sim_fail(err, SIM_IO, "cannot open trajectory '%s': %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        const int e = errno;
        close(fd);
        return sim_fail(err, SIM_IO, "cannot read trajectory '%s': %s", path, strerror(e));
    }
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int e = errno;
            close(fd);
            return sim_fail(err, SIM_IO, "cannot read trajectory '%s': %s", path, strerror(e));
        }
        m->data = p;
        m->size = (size_t)st.st_size;
    }
    close(fd);
    return SIM_OK;
}

void traj_map_close(traj_map *m) {
    if (m->data != NULL) {
        munmap((void *)m->data, m->size);
    }
    m->data = NULL;
    m->size = 0;
}

int traj_next_line(const traj_map *m, size_t *pos, const char **line, size_t *len, int *complete) {
    if (*pos >= m->size) {
        return 0;
    }
    const char *start = m->data + *pos;
    const char *nl = memchr(start, '\n', m->size - *pos);
    size_t l = nl ? (size_t)(nl - start) : m->size - *pos;
    *pos += l + (nl != NULL);
    *complete = nl != NULL;
    if (l > 0 && start[l - 1] == '\r') {
        --l;
    }
    *line = start;
    *len = l;
    return 1;
}

int traj_skip_lines(const traj_map *m, size_t *pos, uint64_t count) {
    size_t p = *pos;
    for (uint64_t i = 0; i < count; ++i) {
        if (p >= m->size) {
            return 0;
        }
        const char *nl = memchr(m->data + p, '\n', m->size - p);
        if (nl == NULL) {
            return 0;
        }
        p = (size_t)(nl - m->data) + 1;
    }
    *pos = p;
    return 1;
}

int traj_line_copy(char *dst, size_t cap, const char *line, size_t len) {
    if (len + 1 > cap) {
        return 0;
    }
    memcpy(dst, line, len);
    dst[len] = '\0';
    return 1;
}

int traj_split(char *s, char **fields, int max) {
    int count = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (count < max) {
            fields[count] = tok;
        }
        ++count;
    }
    return count;
}

int traj_parse_double(const char *tok, double *out) {
    char *end = NULL;
    errno = 0;
    const double v = strtod(tok, &end);
    if (end == tok || *end != '\0' || !isfinite(v)) {
        return 0;
    }
    *out = v;
    return 1;
}

sim_status traj_text_read_bodies(const traj_map *m, size_t pos, uint32_t n,
                                 const traj_columns *cols, const char *path, uint64_t frame,
                                 const char *what, traj_bodies *b, sim_error *err) {
    SIM_TRY(traj_bodies_alloc(b, n, cols->mass >= 0, cols->mass < 0 && cols->density >= 0,
                              cols->id >= 0, cols->spin >= 0, path, err));
    b->vel_is_momentum = cols->vel < 0 && cols->momenta >= 0;
    char *buf = malloc(65536);
    char **f = malloc(((size_t)cols->total + 1) * sizeof *f);
    sim_status st = SIM_OK;
    if (buf == NULL || f == NULL) {
        st = sim_fail(err, SIM_OUT_OF_MEMORY, "%s: no memory to parse a line", path);
    }
    for (uint32_t i = 0; st == SIM_OK && i < n; ++i) {
        const char *line;
        size_t len;
        int complete;
        traj_next_line(m, &pos, &line, &len, &complete);
        const int fields =
            traj_line_copy(buf, 65536, line, len) ? traj_split(buf, f, cols->total + 1) : -1;
        if (fields != cols->total) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu, %s %u: expected %d columns, got %d",
                          path, (unsigned long long)frame, what, i + 1, cols->total, fields);
            break;
        }
        int ok = 1;
        const int vel = cols->vel >= 0 ? cols->vel : cols->momenta;
        for (int a = 0; a < 3; ++a) {
            ok = ok && traj_parse_double(f[cols->pos + a], &b->pos[3 * (size_t)i + a]);
            if (vel >= 0) {
                ok = ok && traj_parse_double(f[vel + a], &b->vel[3 * (size_t)i + a]);
            }
            if (b->spin != NULL) {
                ok = ok && traj_parse_double(f[cols->spin + a], &b->spin[3 * (size_t)i + a]);
            }
        }
        ok = ok && traj_parse_double(f[cols->radius], &b->radius[i]);
        if (b->mass != NULL) {
            ok = ok && traj_parse_double(f[cols->mass], &b->mass[i]);
        }
        if (b->density != NULL) {
            ok = ok && traj_parse_double(f[cols->density], &b->density[i]);
        }
        if (b->id != NULL) {
            double id = 0.0;
            ok = ok && traj_parse_double(f[cols->id], &id) && id == floor(id);
            b->id[i] = (int64_t)id;
        }
        if (!ok) {
            st = sim_fail(err, SIM_PARSE, "%s: frame %llu, %s %u: a column is not a number", path,
                          (unsigned long long)frame, what, i + 1);
        }
    }
    free(buf);
    free(f);
    return st;
}
