/* SPDX-License-Identifier: MIT
 * nbsim — command lines from a table of rows. */
#include "option_table.h"

#include <string.h>

#define HELP_COLUMN 26 /* where help texts start */
#define WHY_MAX 400

static const app_option_row *find(const app_option_table *t, const char *name, size_t len) {
    for (int r = 0; r < t->count; ++r) {
        const char *n = t->rows[r].name;
        if (n != NULL && strlen(n) == len && strncmp(n, name, len) == 0) {
            return &t->rows[r];
        }
    }
    return NULL;
}

static int bad(const app_option_table *t, const char *what, const char *detail) {
    fprintf(stderr, "%s: %s%s (see %s --help)\n", t->prog, what, detail, t->prog);
    return 2;
}

/* Prints text for the terminal without control characters (a file's or argument's bytes). */
static void put_clean(FILE *out, const char *text, size_t max) {
    for (size_t k = 0; text[k] != '\0' && k < max; ++k) {
        const unsigned char c = (unsigned char)text[k];
        fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
    }
}

static int bad_value(const app_option_table *t, const char *flag, const char *value,
                     const char *why) {
    fprintf(stderr, "%s: %s: '", t->prog, flag);
    put_clean(stderr, value, 120);
    fprintf(stderr, "' %s (see %s --help)\n", why, t->prog);
    return 2;
}

int app_option_parse(const app_option_table *t, int argc, char **argv) {
    char why[WHY_MAX];
    int options_done = 0;
    /* Which rows were given: a flag given twice is refused rather than the last one silently
     * winning (a typo in a long command line, a flag a script adds to one a person typed). */
    unsigned char given[APP_OPTION_ROWS_MAX] = {0};
    /* Help wins wherever it stands among the options (before "--"). */
    for (int a = 1; a < argc && strcmp(argv[a], "--") != 0; ++a) {
        if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            t->print_help(stdout);
            return 1;
        }
    }
    for (int a = 1; a < argc; ++a) {
        const char *arg = argv[a];
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            why[0] = '\0';
            if (t->positional == NULL) {
                fprintf(stderr, "%s: unexpected argument '", t->prog);
                put_clean(stderr, arg, 120);
                fprintf(stderr, "' (%s; see %s --help)\n",
                        options_done ? "it follows '--', and nothing but options is taken"
                                     : "options start with --",
                        t->prog);
                return 2;
            }
            if (t->positional(t->target, arg, why, sizeof why) != 0) {
                fprintf(stderr, "%s: '", t->prog);
                put_clean(stderr, arg, 120);
                fprintf(stderr, "' %s (see %s --help)\n", why, t->prog);
                return 2;
            }
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
            if (argc != 2) {
                return bad(t, arg, " takes no other arguments");
            }
            printf("%s\n", t->version);
            if (t->print_build != NULL) {
                t->print_build(stdout);
            }
            return 1;
        }
        /* --flag=value or --flag value */
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        const size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        const app_option_row *row = find(t, arg, len);
        if (row == NULL) {
            fprintf(stderr, "%s: unknown option '", t->prog);
            put_clean(stderr, arg, len < 80 ? len : 80);
            fprintf(stderr, "' (see %s --help)\n", t->prog);
            return 2;
        }
        const int r = (int)(row - t->rows);
        if (r < APP_OPTION_ROWS_MAX && given[r]) {
            return bad(t, row->name, " is given twice; give it once");
        }
        if (r < APP_OPTION_ROWS_MAX) {
            given[r] = 1;
        }
        const char *value = NULL;
        if (row->value != NULL) {
            if (eq != NULL) {
                value = eq + 1;
            } else if (a + 1 < argc) {
                value = argv[++a];
            } else {
                return bad(t, row->name, " needs a value");
            }
        } else if (eq != NULL) {
            return bad(t, row->name, " takes no value");
        }
        why[0] = '\0';
        if (row->set(t->target, row->arg, value, why, sizeof why) != 0) {
            return bad_value(t, row->name, value != NULL ? value : "", why);
        }
    }
    return 0;
}

/* "  --flag VALUE" padded to the help column, then the help, continuation lines indented. */
static void print_row(FILE *out, const char *left, const char *help) {
    int width = fprintf(out, "  %s", left);
    if (width >= HELP_COLUMN - 1) {
        fprintf(out, "\n");
        width = 0;
    }
    fprintf(out, "%*s", HELP_COLUMN - width, "");
    for (const char *c = help; *c != '\0'; ++c) {
        fputc(*c, out);
        if (*c == '\n') {
            fprintf(out, "%*s", HELP_COLUMN, "");
        }
    }
    fputc('\n', out);
}

void app_option_help(const app_option_table *t, FILE *out) {
    char left[128];
    for (int r = 0; r < t->count; ++r) {
        const app_option_row *row = &t->rows[r];
        if (row->name == NULL) {
            fprintf(out, "%s\n", row->help);
            continue;
        }
        snprintf(left, sizeof left, "%s%s%s", row->name, row->value ? " " : "",
                 row->value ? row->value : "");
        print_row(out, left, row->help);
    }
    print_row(out, "-h, --help", "this text");
    print_row(out, "-V, --version", "the version");
    print_row(out, "--", "ends the options");
}

/* text as a Markdown table cell: '\n' as a blank, '|' escaped (in code too), '*' outside code. */
static void markdown_cell(FILE *out, const char *text, int code) {
    for (const char *c = text; *c != '\0'; ++c) {
        if (*c == '\n') {
            fputc(' ', out);
        } else if (*c == '|' || (*c == '*' && !code)) {
            fprintf(out, "\\%c", *c);
        } else {
            fputc(*c, out);
        }
    }
}

void app_option_markdown_row(FILE *out, const char *const *cells, int count, unsigned code) {
    for (int k = 0; k < count; ++k) {
        const int quote = (code >> k & 1u) && cells[k] != NULL && cells[k][0] != '\0';
        fputs(k == 0 ? "| " : " | ", out);
        fputs(quote ? "`" : "", out);
        markdown_cell(out, cells[k] != NULL ? cells[k] : "", quote);
        fputs(quote ? "`" : "", out);
    }
    fputs(" |\n", out);
}

static void reference_row(FILE *out, int *header, const char *name, const char *value,
                          const char *help) {
    if (!*header) {
        fputs("| flag | value | what it does |\n|---|---|---|\n", out);
        *header = 1;
    }
    const char *const cells[3] = {name, value, help};
    app_option_markdown_row(out, cells, 3, 3u);
}

void app_option_reference(const app_option_table *t, FILE *out) {
    int header = 0;
    for (int r = 0; r < t->count; ++r) {
        const app_option_row *row = &t->rows[r];
        if (row->name == NULL) { /* "Scene:" -> "### Scene" */
            size_t len = strlen(row->help);
            len -= len > 0 && row->help[len - 1] == ':';
            fprintf(out, "%s### %.*s\n\n", header ? "\n" : "", (int)len, row->help);
            header = 0;
            continue;
        }
        reference_row(out, &header, row->name, row->value, row->help);
    }
    reference_row(out, &header, "-h, --help", NULL, "this text");
    reference_row(out, &header, "-V, --version", NULL, "the version");
    reference_row(out, &header, "--", NULL, "ends the options");
}
