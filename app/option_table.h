/* SPDX-License-Identifier: MIT
 * nbsim — command lines from a table: one row per flag gives its name, its value's name, its
 * help text and the function that sets it. The same rows drive parsing, --help and the error
 * messages, for the simulator and for `nbsim bench`.
 *
 * Conventions (as GNU tools): `--flag value` and `--flag=value`; `-h`/`--help` prints the help,
 * `-V`/`--version` the version (alone: other arguments with it are refused); `--` ends the
 * options; a bad or unknown argument is one line on stderr, "PROG: ..." naming it, and exit
 * status 2. */
#ifndef APP_OPTION_TABLE_H
#define APP_OPTION_TABLE_H

#include <stddef.h>
#include <stdio.h>

/* Sets one option from its value (NULL for rows without a value); `arg` is the row's own
 * argument, so one function can serve several rows. Returns 0, or -1 with `why` filled in
 * ("must be 32, 64 or 128"): the parser prints "PROG: FLAG: 'VALUE' WHY". */
typedef int (*app_option_set)(void *target, int arg, const char *value, char *why, size_t cap);

typedef struct {
    const char *name;  /* "--frames"; NULL: a section heading, `help` is its title */
    const char *value; /* the value's name in the help ("F"); NULL: the flag takes no value */
    const char *help;  /* help text; '\n' continues at the help column */
    app_option_set set;
    int arg; /* passed to set */
} app_option_row;

/* The most rows a table may have. */
#define APP_OPTION_ROWS_MAX 256

typedef struct {
    const char *prog; /* "nbsim", "nbsim bench": the prefix of every message */
    const app_option_row *rows;
    int count;
    void *target; /* passed to every set function */
    /* Arguments that are not options (bench suites); NULL: none are accepted. */
    int (*positional)(void *target, const char *arg, char *why, size_t cap);
    void (*print_help)(FILE *out);  /* the whole help text (usually calls app_option_help) */
    const char *version;            /* printed by --version */
    void (*print_build)(FILE *out); /* NULL, or what this build has, printed after the version */
} app_option_table;

/* Returns 0 to run, 1 when help or the version was printed (exit 0), 2 on bad input (one
 * line on stderr already). */
int app_option_parse(const app_option_table *t, int argc, char **argv);

/* The rows as help text (sections, then "  --flag VALUE   help"), plus -h and -V. */
void app_option_help(const app_option_table *t, FILE *out);

/* The same rows as Markdown, for docs/reference.md: each section a "### " heading and a table
 * of flag, value and help (one line each), then -h, -V and --. */
void app_option_reference(const app_option_table *t, FILE *out);
/* One Markdown table row of `count` cells: '\n' in a cell as a blank, '|' escaped (and '*'
 * outside code); the cells whose bit is set in `code` (1 << k) are written as code. NULL: an
 * empty cell. */
void app_option_markdown_row(FILE *out, const char *const *cells, int count, unsigned code);

#endif /* APP_OPTION_TABLE_H */
