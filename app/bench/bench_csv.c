/* SPDX-License-Identifier: MIT
 * nbsim — CSV writer for benchmark results (through sim_output: complete or absent). */
#include "bench_csv.h"

#include <errno.h>
#include <math.h>
#include <string.h>

sim_status app_csv_open(app_csv *c, const char *path, const char *const *header, int columns,
                        sim_error *err) {
    memset(c, 0, sizeof *c);
    SIM_TRY(sim_output_open(&c->out, path, err));
    c->f = c->out.file;
    c->columns = columns;
    for (int i = 0; i < columns; ++i) {
        app_csv_str(c, header[i]);
    }
    app_csv_end_row(c);
    c->rows = 0;
    return SIM_OK;
}

static void separator(app_csv *c) {
    /* Write errors show in ferror(); closing reports them with their cause. */
    if (c->field++ > 0) {
        fputc(',', c->f);
    }
}

void app_csv_str(app_csv *c, const char *s) {
    separator(c);
    s = s ? s : "";
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, c->f);
        return;
    }
    fputc('"', c->f);
    for (; *s != '\0'; ++s) {
        if (*s == '"') {
            fputc('"', c->f);
        }
        fputc(*s, c->f);
    }
    fputc('"', c->f);
}

void app_csv_int(app_csv *c, long long v) {
    separator(c);
    fprintf(c->f, "%lld", v);
}

void app_csv_u64(app_csv *c, uint64_t v) {
    separator(c);
    fprintf(c->f, "%llu", (unsigned long long)v);
}

void app_csv_num(app_csv *c, double v) {
    separator(c);
    if (isfinite(v)) {
        fprintf(c->f, "%.6g", v);
    }
}

void app_csv_end_row(app_csv *c) {
    SIM_ASSERT(c->field == c->columns);
    fputc('\n', c->f);
    c->field = 0;
    c->rows++;
}

sim_status app_csv_close(app_csv *c, sim_error *err) {
    if (c->f == NULL) {
        return SIM_OK;
    }
    c->f = NULL;
    return sim_output_commit(&c->out, err);
}

void app_csv_abort(app_csv *c) {
    if (c->f != NULL) {
        c->f = NULL;
        sim_output_abort(&c->out);
    }
}

sim_status app_csv_finish(app_csv *c, sim_status st, sim_error *err) {
    if (st != SIM_OK) {
        app_csv_abort(c);
        return st;
    }
    return app_csv_close(c, err);
}
