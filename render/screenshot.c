/* SPDX-License-Identifier: MIT
 * nbsim — PNG screenshots with stb_image_write. */
#include "screenshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl.h"
#include "nbsim/output_file.h"

/* Static: the module keeps its copy private, whatever else in the process links stb. */
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

/* Errors show in ferror(); sim_output_commit reports them with their cause. */
static void sink_write(void *context, void *data, int size) {
    fwrite(data, 1, (size_t)size, (FILE *)context);
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

    sim_output out;
    sim_status st = sim_output_open(&out, path, err);
    if (st != SIM_OK) {
        free(pixels);
        return st;
    }
    /* GL rows run bottom-up; PNG rows top-down. */
    stbi_flip_vertically_on_write(1);
    const int encoded =
        stbi_write_png_to_func(sink_write, out.file, width, height, 3, pixels, (int)row);
    free(pixels);
    if (!encoded) {
        sim_output_abort(&out);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "cannot write screenshot '%s': PNG encoding failed (out of memory)", path);
    }
    return sim_output_commit(&out, err);
}
