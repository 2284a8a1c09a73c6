/* SPDX-License-Identifier: MIT
 * nbsim — libFuzzer target: bytes as a command line (arguments separated by NUL bytes) through
 * the simulator's option parser, then the check of every output path (read-only: stat, access,
 * realpath). Run with -close_fd_mask=3: help texts and error lines go nowhere. A crash, a
 * sanitizer report or a leak is a bug, and so are accepted options whose parameters a backend
 * would refuse. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char text[8192];
    static app_options options; /* large (paths) */
    if (size >= sizeof text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = "nbsim";
    for (size_t at = 0; at <= size && argc < MAX_ARGS; at += strlen(text + at) + 1) {
        argv[argc++] = text + at;
    }
    argv[argc] = NULL;
    if (app_options_parse(argc, argv, &options) != 0) {
        return 0;
    }
    sim_error err;
    if (sim_params_check(&options.session.params, &err) != SIM_OK) {
        abort(); /* the command line accepted what a backend refuses */
    }
    (void)app_options_check_outputs(&options, &err);
    return 0;
}
