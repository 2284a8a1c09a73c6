/* SPDX-License-Identifier: MIT
 * nbsim — overlay text: stb_easy_font's quad glyphs, scaled, into a draw2d batch. No font
 * files or textures, so the viewer has nothing to find at run time. */
#ifndef RENDER_TEXT_H
#define RENDER_TEXT_H

#include <stddef.h>

#include "draw2d.h"

/* Height of one text line at scale 1 [px] (stb_easy_font advances 12 px per '\n'). */
#define RENDER_TEXT_LINE 12.0f

/* Draws text (may hold '\n') with its top left at (x, y), glyphs scaled by `scale`. Returns the
 * width drawn [px]. */
float render_text_draw(render_draw2d *d, float x, float y, float scale, const float rgba[4],
                       const char *text);
float render_text_width(const char *text, float scale);
/* Draws text laid out as a table: in each line, runs of two or more spaces separate cells, and
 * the n-th cells of all lines start at one x (the font is proportional, so padding with spaces
 * cannot align them). A line's last cell may run past its column without widening it. Leading
 * spaces indent; a line whose leading spaces reach the line before's second or a later cell
 * continues there (a description wrapped under itself with spaces, as a fixed-width terminal
 * shows it): its cells go into that cell's column and the ones after it. With d NULL only
 * measures. Writes the size drawn [px] to *w and *h when not NULL. */
void render_text_columns(render_draw2d *d, float x, float y, float scale, const float rgba[4],
                         const char *text, float *w, float *h);
float render_text_height(const char *text, float scale);
/* Copies text into out (cap bytes, cut short if need be) with spaces turned into line breaks
 * where a line would be wider than max_w [px] at `scale`: greedy, as many words as fit on each
 * line, a word wider than the line alone on its own. Returns the lines. */
int render_text_wrap(const char *text, float scale, float max_w, char *out, size_t cap);
/* Frees the glyph scratch memory (at viewer exit). */
void render_text_release(void);

#endif /* RENDER_TEXT_H */
