/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler top`'s full screen, through ncurses: lines of text drawn cut
 * to the terminal's width (never wrapped), keys read without waiting, and the
 * terminal given back as it was on every way out (lp_screen_close). While the
 * screen is up, leanprofiler's own messages (stderr) are kept aside and said
 * once it is closed: written on the screen they would be wiped.
 */
#ifndef LP_TOP_SCREEN_H
#define LP_TOP_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

struct lp_screen {
	bool open;
	void *term;      /* ncurses' SCREEN */
	int saved_err;   /* our stderr while messages go to held_err; -1: none */
	int held_err;    /* a temporary file for them; -1: none */
};

/* 0, or -errno (said): no terminal to draw on (TERM unknown), or out of memory. */
int lp_screen_open(struct lp_screen *s);
/* The terminal as it was, the held messages said; nothing when not open. */
void lp_screen_close(struct lp_screen *s);
/* Rows and columns of the terminal. */
void lp_screen_size(const struct lp_screen *s, int *rows, int *cols);
/*
 * Draws text (lines separated by '\n') from the top left, each line cut to
 * the width; repaint: every cell again (a launched command may have written
 * over the screen).
 */
void lp_screen_draw(struct lp_screen *s, const char *text, size_t len, bool repaint);
/* The next key pressed, or -1 when none is waiting; LP_KEY_RESIZE after a resize. */
int lp_screen_key(struct lp_screen *s);
#define LP_KEY_RESIZE 0x10000
#define LP_KEY_BACKSPACE 0x10001

#endif
