/* SPDX-License-Identifier: MIT
 * nbsim — PNG screenshots with stb_image_write. */
#include "screenshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl.h"

/* Static: the module keeps its copy private, whatever else in the process links stb. */
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

typedef struct {
    FILE *file;
    int error; /* errno of the first failed write, 0 if none */
} png_sink;

/* stb's own file writer ignores fwrite errors (a full disk); this one records them. */
static void sink_write(void *context, void *data, int size) {
    png_sink *sink = context;
    if (sink->error == 0 && fwrite(data, 1, (size_t)size, sink->file) != (size_t)size) {
        sink->error = errno ? errno : EIO;
    }
}

sim_status render_screenshot_write(const char *path, int width, int height, sim_error *err) {
    if (width <= 0 || height <= 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "cannot take a %dx%d screenshot", width, height);
    }
    size_t row = (size_t)width * 3;
    unsigned char *pixels = malloc(row * (size_t)height);
    if (pixels == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "no memory for a %dx%d screenshot", width, height);
    }
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels);

    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        free(pixels);
        return sim_fail(err, SIM_BAD_ARGUMENT, "screenshot path '%s' is too long", path);
    }
    png_sink sink = {fopen(tmp, "wb"), 0};
    if (sink.file == NULL) {
        int e = errno;
        free(pixels);
        return sim_fail(err, SIM_IO, "cannot write screenshot '%s': %s", path, strerror(e));
    }
    /* GL rows run bottom-up; PNG rows top-down. */
    stbi_flip_vertically_on_write(1);
    int encoded = stbi_write_png_to_func(sink_write, &sink, width, height, 3, pixels, (int)row);
    free(pixels);
    int e = sink.error;
    if (fclose(sink.file) != 0 && e == 0) {
        e = errno;
    }
    if (encoded && e == 0 && rename(tmp, path) != 0) {
        e = errno;
    }
    if (!encoded || e != 0) {
        remove(tmp);
        return sim_fail(err, SIM_IO, "cannot write screenshot '%s': %s", path,
                        encoded ? strerror(e) : "PNG encoding failed (out of memory)");
    }
    return SIM_OK;
}
