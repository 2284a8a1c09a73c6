/* SPDX-License-Identifier: MIT
 * nbsim — CSV writer for benchmark results (temporary file, renamed when complete). */
#include "bench_csv.h"

#include <errno.h>
#include <math.h>
#include <string.h>

sim_status app_csv_open(app_csv *c, const char *path, const char *const *header, int columns,
                        sim_error *err) {
    memset(c, 0, sizeof *c);
    if (strlen(path) >= sizeof c->path) {
        return sim_fail(err, SIM_IO, "result path too long: '%s'", path);
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->tmp, sizeof c->tmp, "%s.tmp", path);
    c->f = fopen(c->tmp, "w");
    if (c->f == NULL) {
        return sim_fail(err, SIM_IO, "cannot write '%s': %s", c->tmp, strerror(errno));
    }
    c->columns = columns;
    for (int i = 0; i < columns; ++i) {
        app_csv_str(c, header[i]);
    }
    app_csv_end_row(c);
    c->rows = 0;
    return SIM_OK;
}

static void separator(app_csv *c) {
    if (c->field++ > 0 && fputc(',', c->f) == EOF) {
        c->failed = 1;
    }
}

void app_csv_str(app_csv *c, const char *s) {
    separator(c);
    s = s ? s : "";
    if (strpbrk(s, ",\"\r\n") == NULL) {
        c->failed |= fputs(s, c->f) == EOF;
        return;
    }
    c->failed |= fputc('"', c->f) == EOF;
    for (; *s != '\0'; ++s) {
        if (*s == '"') {
            c->failed |= fputc('"', c->f) == EOF;
        }
        c->failed |= fputc(*s, c->f) == EOF;
    }
    c->failed |= fputc('"', c->f) == EOF;
}

void app_csv_int(app_csv *c, long long v) {
    separator(c);
    c->failed |= fprintf(c->f, "%lld", v) < 0;
}

void app_csv_u64(app_csv *c, uint64_t v) {
    separator(c);
    c->failed |= fprintf(c->f, "%llu", (unsigned long long)v) < 0;
}

void app_csv_num(app_csv *c, double v) {
    separator(c);
    if (isfinite(v)) {
        c->failed |= fprintf(c->f, "%.6g", v) < 0;
    }
}

void app_csv_end_row(app_csv *c) {
    SIM_ASSERT(c->field == c->columns);
    c->failed |= fputc('\n', c->f) == EOF;
    c->field = 0;
    c->rows++;
}

sim_status app_csv_close(app_csv *c, sim_error *err) {
    if (c->f == NULL) {
        return SIM_OK;
    }
    int bad = c->failed;
    bad |= fflush(c->f) != 0;
    bad |= fclose(c->f) != 0;
    c->f = NULL;
    if (bad) {
        remove(c->tmp);
        return sim_fail(err, SIM_IO, "cannot write '%s' (disk full?)", c->tmp);
    }
    if (rename(c->tmp, c->path) != 0) {
        const int e = errno;
        remove(c->tmp);
        return sim_fail(err, SIM_IO, "cannot rename '%s' to '%s': %s", c->tmp, c->path,
                        strerror(e));
    }
    return SIM_OK;
}

void app_csv_abort(app_csv *c) {
    if (c->f != NULL) {
        fclose(c->f);
        c->f = NULL;
        remove(c->tmp);
    }
}
