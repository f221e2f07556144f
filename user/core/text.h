/* SPDX-License-Identifier: MIT */
/* Text from the target is untrusted bytes: these turn it into safe output. */
#ifndef LP_TEXT_H
#define LP_TEXT_H

#include "common.h"

struct lp_buf {
	char *p;
	size_t len, cap;
};

int lp_buf_put(struct lp_buf *b, const char *s, size_t len);
int lp_buf_putc(struct lp_buf *b, char c);
void lp_buf_free(struct lp_buf *b);

/*
 * Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there are
 * not valid UTF-8 (overlong, surrogate, > U+10FFFF, cut short).
 */
size_t lp_utf8_seq(const unsigned char *s, size_t len);

/* Appends s with every invalid UTF-8 byte replaced by U+FFFD. */
int lp_utf8_sanitize(struct lp_buf *b, const char *s, size_t len);

/*
 * For a terminal, the one display sanitizer for every untrusted text shown
 * (the table, `list`, stderr): like lp_utf8_sanitize, and control characters
 * (C0, DEL, C1) are shown as \n, \t, \r or \xNN so that a name can't move
 * the cursor, set the title or the clipboard, or break a row; bidirectional
 * controls, zero-width and other invisible characters, line and paragraph
 * separators and the byte order mark as \uXXXX, so that a name can't pass
 * for another.
 */
int lp_text_display(struct lp_buf *b, const char *s, size_t len);

/*
 * For the pictures (report --svg, --html): like lp_text_display, but control
 * characters (C0, DEL, C1) and U+FFFE, U+FFFF, which XML forbids, are dropped:
 * a picture has no cursor to move, and the text is then valid XML character data
 * once & < > " ' are escaped.
 */
int lp_text_picture(struct lp_buf *b, const char *s, size_t len);

/*
 * Writes valid UTF-8 text s into out (outsz bytes), cut to at most width code
 * points; text that does not fit is cut to width-1 and ends with "…". Pads with
 * spaces to width code points when pad is set. Returns the bytes written.
 */
size_t lp_fit_columns(const char *s, size_t len, size_t width, bool pad, char *out,
		      size_t outsz);

/* "12.17 ms": two decimals in ns, us, ms or s. */
void lp_fmt_duration(uint64_t ns, char *out, size_t outsz);
/* "512 B", "30.0 KB", "4.2 MB", "1.5 GB" (decimal units, as ls -h --si and browsers say). */
void lp_fmt_size(uint64_t bytes, char *out, size_t outsz);

#endif
