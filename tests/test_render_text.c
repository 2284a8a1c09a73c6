/* SPDX-License-Identifier: MIT
 * nbsim — the overlay's text wrapping (render/text.h: render_text_wrap, the viewer's messages):
 * lines no wider than asked unless one word is, every word kept in order, breaks only at spaces,
 * the line count returned, given line breaks kept, a short buffer cut and terminated. No GL: the
 * widths come from stb_easy_font alone. */
#include "text.h"

#include <stdio.h>
#include <string.h>

#include "ensure.h"

/* The wrapped text with its breaks turned back into spaces equals the input; each line fits in
 * max_w or is one word; the count is right. */
static void check_wrap(const char *text, float scale, float max_w) {
    char out[1024];
    const int lines = render_text_wrap(text, scale, max_w, out, sizeof out);
    int breaks = 0;
    char joined[1024];
    strcpy(joined, out);
    for (char *p = joined; *p; ++p) {
        if (*p == '\n') {
            ++breaks;
            *p = text[p - joined] == '\n' ? '\n' : ' '; /* a given break, or a space's */
        }
    }
    ENSURE_MSG(strcmp(joined, text) == 0, "words changed: '%s'", out);
    ENSURE_MSG(lines == breaks + 1, "%d lines for %d breaks", lines, breaks);
    for (char *line = out; line != NULL;) {
        char *nl = strchr(line, '\n');
        char one[1024];
        const size_t len = nl ? (size_t)(nl - line) : strlen(line);
        memcpy(one, line, len);
        one[len] = '\0';
        const int single_word = strchr(one, ' ') == NULL;
        ENSURE_MSG(render_text_width(one, scale) <= max_w || single_word,
                   "line '%s' is %.1f px wide, max %.1f", one, render_text_width(one, scale),
                   max_w);
        line = nl ? nl + 1 : NULL;
    }
}

static void test_fits(void) {
    char out[64];
    ENSURE(render_text_wrap("friction off", 2.0f, 1000.0f, out, sizeof out) == 1);
    ENSURE(strcmp(out, "friction off") == 0);
    ENSURE(render_text_wrap("", 1.0f, 10.0f, out, sizeof out) == 1 && out[0] == '\0');
}

static void test_long_warning(void) {
    const char *w = "warning: dt = 0.5 in lattice is more than 2.5 times the default step "
                    "0.0444288 (resolving a contact in enough steps): contacts may be unstable "
                    "or lose energy wrongly";
    const float full = render_text_width(w, 2.0f);
    for (float frac = 0.15f; frac < 1.2f; frac += 0.05f) {
        check_wrap(w, 2.0f, frac * full);
    }
    char out[512];
    ENSURE(render_text_wrap(w, 2.0f, full, out, sizeof out) == 1); /* exactly its width: fits */
    ENSURE(render_text_wrap(w, 2.0f, 0.5f * full, out, sizeof out) >= 2);
}

static void test_long_word_alone(void) {
    char out[128];
    const float w = render_text_width("abc", 1.0f);
    ENSURE(render_text_wrap("abc supercalifragilistic def", 1.0f, w, out, sizeof out) == 3);
    ENSURE_MSG(strcmp(out, "abc\nsupercalifragilistic\ndef") == 0, "got '%s'", out);
    check_wrap("supercalifragilistic", 1.0f, w);
}

static void test_given_breaks(void) {
    check_wrap("first line here\nsecond line, a little longer than the first", 1.0f,
               render_text_width("second line, a", 1.0f));
    char out[128];
    ENSURE(render_text_wrap("a\nb", 1.0f, 1000.0f, out, sizeof out) == 2);
}

static void test_short_buffer(void) {
    char out[8];
    memset(out, 'x', sizeof out);
    render_text_wrap("a long message that does not fit", 1.0f, 1000.0f, out, sizeof out);
    ENSURE(out[7] == '\0' && strcmp(out, "a long ") == 0);
    ENSURE(render_text_wrap("abc", 1.0f, 10.0f, out, 0) == 0);
}

static const ensure_test tests[] = {
    {"fits", test_fits},
    {"long_warning", test_long_warning},
    {"long_word_alone", test_long_word_alone},
    {"given_breaks", test_given_breaks},
    {"short_buffer", test_short_buffer},
};

ENSURE_MAIN(tests)
