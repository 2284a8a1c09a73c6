/* SPDX-License-Identifier: MIT
 * nbsim — strict parsing of command-line values (the whole string must be a number in range)
 * and small string helpers. */
#ifndef APP_PARSE_H
#define APP_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 on success, -1 when text is not a (finite) number of that kind or is out of
 * [lo, hi]. */
int app_parse_long(const char *text, long lo, long hi, long *out);
int app_parse_u64(const char *text, uint64_t *out);
int app_parse_double(const char *text, double lo, double hi, double *out);
/* "x,y,z" into three finite doubles. */
int app_parse_vec3(const char *text, double out[3]);
/* Copies src into dst (size cap); -1 if it does not fit. */
int app_copy_string(char *dst, size_t cap, const char *src);

#endif /* APP_PARSE_H */
