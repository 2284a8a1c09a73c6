/* SPDX-License-Identifier: MIT
 * nbsim — RGB canvas, easy_font text and atomic PNG writing for the map inspector. */
#define _POSIX_C_SOURCE 200809L

#include "map_canvas.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbsim/output_file.h"

/* Third-party single-header libraries: their internals are not held to our warning flags.
 * The writer is static so it cannot clash with another copy elsewhere in the program; its
 * unused static functions are only reported at the end of the file, so that warning stays off
 * for the whole file. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wtype-limits"
#endif
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#include <stb_easy_font.h>
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

sim_status app_canvas_init(app_canvas *c, int w, int h, sim_error *err) {
    c->w = w;
    c->h = h;
    c->px = malloc((size_t)w * (size_t)h * 3u);
    if (c->px == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for a %d x %d picture", w, h);
    }
    memset(c->px, 255, (size_t)w * (size_t)h * 3u);
    return SIM_OK;
}

void app_canvas_free(app_canvas *c) {
    free(c->px);
    c->px = NULL;
}

void app_canvas_fill(app_canvas *c, int x, int y, int w, int h, render_rgb col) {
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int py = y0; py < y1; ++py) {
        uint8_t *p = c->px + ((size_t)py * (size_t)c->w + (size_t)x0) * 3u;
        for (int px = x0; px < x1; ++px, p += 3) {
            p[0] = col.r;
            p[1] = col.g;
            p[2] = col.b;
        }
    }
}

/* stb_easy_font's vertex: position, z and a colour (both unused here). */
typedef struct {
    float x, y, z;
    unsigned char rgba[4];
} easy_vertex;

int app_canvas_text(app_canvas *c, int x, int y, int scale, render_rgb col, const char *text) {
    size_t len = strlen(text);
    char *copy = malloc(len + 1u);
    size_t bytes = len * 400u + 1024u; /* stb: ~270 bytes per character on average */
    easy_vertex *v = malloc(bytes);
    if (copy == NULL || v == NULL) {
        free(copy);
        free(v);
        return 0;
    }
    memcpy(copy, text, len + 1u);
    int quads = stb_easy_font_print(0.0f, 0.0f, copy, NULL, v, (int)bytes);
    for (int q = 0; q < quads; ++q) { /* each quad is an axis-aligned rectangle */
        const easy_vertex *a = &v[4 * q], *b = &v[4 * q + 2];
        int qx = (int)(a->x < b->x ? a->x : b->x), qy = (int)(a->y < b->y ? a->y : b->y);
        int qw = (int)(a->x < b->x ? b->x - a->x : a->x - b->x);
        int qh = (int)(a->y < b->y ? b->y - a->y : a->y - b->y);
        app_canvas_fill(c, x + qx * scale, y + qy * scale, qw * scale, qh * scale, col);
    }
    int width = stb_easy_font_width(copy) * scale;
    free(copy);
    free(v);
    return width;
}

int app_canvas_text_width(const char *text, int scale) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    return stb_easy_font_width(buf) * scale;
}

/* Errors show in ferror(); sim_output_commit reports them with their cause. */
static void write_to_file(void *context, void *data, int size) {
    fwrite(data, 1, (size_t)size, (FILE *)context);
}

sim_status app_canvas_write_png(const app_canvas *c, const char *path, sim_error *err) {
    sim_output out;
    SIM_TRY(sim_output_open(&out, path, err));
    if (stbi_write_png_to_func(write_to_file, out.file, c->w, c->h, 3, c->px, c->w * 3) == 0) {
        sim_output_abort(&out);
        return sim_fail(err, SIM_OUT_OF_MEMORY, "cannot write '%s': PNG encoding failed", path);
    }
    return sim_output_commit(&out, err);
}
