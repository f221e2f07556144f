// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "screen.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <ncursesw/curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "common.h"

/*
 * leanprofiler's messages while the screen is up: into a temporary file,
 * said when it closes (written on the screen, the next refresh wipes them).
 */
static void hold_stderr(struct lp_screen *s)
{
	FILE *f = tmpfile();

	s->saved_err = s->held_err = -1;
	if (!f)
		return; /* then they go to the screen */
	s->held_err = dup(fileno(f));
	fclose(f);
	fflush(stderr);
	s->saved_err = s->held_err >= 0 ? dup(STDERR_FILENO) : -1;
	if (s->saved_err < 0 || dup2(s->held_err, STDERR_FILENO) < 0) {
		if (s->saved_err >= 0)
			close(s->saved_err);
		if (s->held_err >= 0)
			close(s->held_err);
		s->saved_err = s->held_err = -1;
	}
}

static void say_held(struct lp_screen *s)
{
	char buf[4096];
	ssize_t n;

	if (s->saved_err < 0)
		return;
	fflush(stderr);
	dup2(s->saved_err, STDERR_FILENO);
	close(s->saved_err);
	if (lseek(s->held_err, 0, SEEK_SET) == 0)
		while ((n = read(s->held_err, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, (size_t)n) != n)
				break;
	close(s->held_err);
	s->saved_err = s->held_err = -1;
}

int lp_screen_open(struct lp_screen *s)
{
	const char *term = getenv("TERM");
	SCREEN *sc;

	/*
	 * The table's texts are UTF-8 (names as lp_text_display makes them, "…"):
	 * ncursesw draws them as such only in a UTF-8 locale.
	 */
	setlocale(LC_ALL, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8"))
		setlocale(LC_CTYPE, "C.UTF-8");
	sc = newterm(term && *term ? NULL : "dumb", stdout, stdin);
	if (!sc) {
		lp_err("cannot draw on this terminal (TERM=%s): run with stdout redirected, or "
		       "--batch, for plain tables", term ? term : "");
		return -ENOTTY;
	}
	s->term = sc;
	s->open = true;
	cbreak(); /* keys as they come; Ctrl-C still signals (ends the recording) */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	hold_stderr(s);
	return 0;
}

void lp_screen_close(struct lp_screen *s)
{
	if (!s->open)
		return;
	endwin();
	delscreen(s->term);
	s->term = NULL;
	s->open = false;
	fflush(stdout);
	say_held(s);
}

void lp_screen_size(const struct lp_screen *s, int *rows, int *cols)
{
	*rows = s->open ? LINES : 24;
	*cols = s->open ? COLS : 80;
}

/* The bytes of line (len) that fit in cols columns. */
static size_t fit(const char *line, size_t len, int cols)
{
	mbstate_t ps = { 0 };
	size_t at = 0;
	int used = 0;

	while (at < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, line + at, len - at, &ps);
		int w;

		if (n == (size_t)-1 || n == (size_t)-2) {
			memset(&ps, 0, sizeof(ps));
			n = 1;
			w = 1;
		} else {
			n = n ? n : 1;
			w = wcwidth(wc);
			w = w < 0 ? 1 : w;
		}
		if (used + w > cols)
			break;
		used += w;
		at += n;
	}
	return at;
}

void lp_screen_draw(struct lp_screen *s, const char *text, size_t len, bool repaint)
{
	const char *p = text, *end = text + len;

	if (!s->open)
		return;
	erase();
	for (int y = 0; y < LINES && p < end; y++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		mvaddnstr(y, 0, p, (int)fit(p, n, COLS));
		p += n + (nl != NULL);
	}
	if (repaint)
		clearok(curscr, TRUE);
	refresh();
}

int lp_screen_key(struct lp_screen *s)
{
	int k;

	if (!s->open)
		return -1;
	k = getch();
	if (k == ERR)
		return -1;
	if (k == KEY_RESIZE)
		return LP_KEY_RESIZE;
	if (k == KEY_BACKSPACE || k == 127 || k == 8)
		return LP_KEY_BACKSPACE;
	return k;
}
