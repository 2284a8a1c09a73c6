/* SPDX-License-Identifier: MIT
 * nbsim — strict number parsing for the command line. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>

#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int app_parse_long(const char *text, long lo, long hi, long *out) {
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text)) {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

int app_parse_u64(const char *text, uint64_t *out) {
    if (text == NULL || *text == '\0' || !isdigit((unsigned char)*text)) {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') {
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int app_parse_double(const char *text, double lo, double hi, double *out) {
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text)) {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

int app_parse_vec3(const char *text, double out[3]) {
    char buf[256];
    if (app_copy_string(buf, sizeof buf, text) != 0) {
        return -1;
    }
    char *parts[3];
    char *p = buf;
    for (int k = 0; k < 3; ++k) {
        parts[k] = p;
        char *comma = strchr(p, ',');
        if (k < 2) {
            if (comma == NULL) {
                return -1;
            }
            *comma = '\0';
            p = comma + 1;
        } else if (comma != NULL) {
            return -1;
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (app_parse_double(parts[k], -HUGE_VAL, HUGE_VAL, &out[k]) != 0) {
            return -1;
        }
    }
    return 0;
}

int app_copy_string(char *dst, size_t cap, const char *src) {
    size_t len = strlen(src);
    if (len >= cap) {
        return -1;
    }
    memcpy(dst, src, len + 1);
    return 0;
}
