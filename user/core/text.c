// SPDX-License-Identifier: MIT
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lp_buf_put(struct lp_buf *b, const char *s, size_t len)
{
	char *p = lp_grow(b->p, &b->cap, b->len + len + 1, 1);

	if (!p)
		return -ENOMEM;
	b->p = p;
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

int lp_buf_putc(struct lp_buf *b, char c)
{
	return lp_buf_put(b, &c, 1);
}

void lp_buf_free(struct lp_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

size_t lp_utf8_seq(const unsigned char *s, size_t len)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The code point of the valid n-byte UTF-8 sequence at s. */
static uint32_t code_point(const unsigned char *s, size_t n)
{
	uint32_t cp = n == 1 ? s[0] : n == 2 ? s[0] & 0x1f : n == 3 ? s[0] & 0x0f : s[0] & 0x07;

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

/*
 * Characters a terminal does not show as themselves: they reorder the text
 * around them (bidirectional controls), show nothing (zero-width and other
 * invisible characters, the byte order mark, tag characters), or break the
 * line (line and paragraph separators). A name holding one could pass for
 * another or break a row, so it is shown as \uXXXX.
 */
static bool invisible(uint32_t cp)
{
	return cp == 0x00ad || cp == 0x061c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) ||
	       cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f);
}

/* What put_text() does with characters a reader would not see as themselves. */
enum text_mode {
	TEXT_RAW,     /* nothing: only invalid UTF-8 is replaced */
	TEXT_DISPLAY, /* controls as \n, \t, \xNN; invisible characters as \uXXXX */
	TEXT_PICTURE, /* controls dropped; invisible characters as \uXXXX */
};

/* C0 controls and DEL, or the C1 controls U+0080..U+009F, at the n-byte character u. */
static bool control(const unsigned char *u, size_t n)
{
	return (n == 1 && (u[0] < 0x20 || u[0] == 0x7f)) || (n == 2 && u[0] == 0xc2 && u[1] < 0xa0);
}

/* Noncharacters XML 1.0 forbids (U+FFFE, U+FFFF): an SVG holding one does not parse. */
static bool xml_forbidden(const unsigned char *u, size_t n)
{
	return n == 3 && u[0] == 0xef && u[1] == 0xbf && (u[2] == 0xbe || u[2] == 0xbf);
}

static int put_text(struct lp_buf *b, const char *s, size_t len, enum text_mode mode)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int err = lp_buf_put(b, "", 0);

	while (!err && i < len) {
		size_t n = lp_utf8_seq(u + i, len - i);
		char esc[8];

		if (n == 0) {
			err = lp_buf_put(b, replacement, 3);
			n = 1;
		} else if (mode == TEXT_PICTURE && (control(u + i, n) || xml_forbidden(u + i, n))) {
			/* dropped: a picture has no cursor to move and no line to break */
		} else if (mode == TEXT_DISPLAY && (u[i] < 0x20 || u[i] == 0x7f)) {
			if (u[i] == '\n')
				strcpy(esc, "\\n");
			else if (u[i] == '\t')
				strcpy(esc, "\\t");
			else if (u[i] == '\r')
				strcpy(esc, "\\r");
			else
				snprintf(esc, sizeof(esc), "\\x%02x", u[i]);
			err = lp_buf_put(b, esc, strlen(esc));
		} else if (mode == TEXT_DISPLAY && n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) {
			/* C1 controls U+0080..U+009F (CSI is U+009B): \xNN of the code point. */
			snprintf(esc, sizeof(esc), "\\x%02x", u[i + 1]);
			err = lp_buf_put(b, esc, strlen(esc));
		} else if (mode != TEXT_RAW && n > 1 && invisible(code_point(u + i, n))) {
			char wide[16];

			snprintf(wide, sizeof(wide), "\\u%04x", (unsigned)code_point(u + i, n));
			err = lp_buf_put(b, wide, strlen(wide));
		} else {
			err = lp_buf_put(b, s + i, n);
		}
		i += n;
	}
	return err;
}

int lp_utf8_sanitize(struct lp_buf *b, const char *s, size_t len)
{
	return put_text(b, s, len, TEXT_RAW);
}

int lp_text_display(struct lp_buf *b, const char *s, size_t len)
{
	return put_text(b, s, len, TEXT_DISPLAY);
}

int lp_text_picture(struct lp_buf *b, const char *s, size_t len)
{
	return put_text(b, s, len, TEXT_PICTURE);
}

size_t lp_fit_columns(const char *s, size_t len, size_t width, bool pad, char *out,
		      size_t outsz)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t cols = 0, i = 0, o = 0, cut = 0, cut_cols = 0;
	bool fits = true;

	if (outsz == 0)
		return 0;
	/* Find how much fits; remember where width-1 columns end for the "…". */
	while (i < len) {
		size_t n = lp_utf8_seq(u + i, len - i);

		if (n == 0)
			n = 1; /* callers pass sanitized text; be safe anyway */
		if (cols == width - 1 || width == 0) {
			cut = i;
			cut_cols = cols;
		}
		if (cols == width) {
			fits = false;
			break;
		}
		i += n;
		cols++;
	}
	if (fits) {
		cut = i;
		cut_cols = cols;
	}
	if (cut > outsz - 1) {
		cut = outsz - 1;
		/* Never end in half a character. */
		while (cut > 0 && (u[cut] & 0xc0) == 0x80)
			cut--;
	}
	memcpy(out, s, cut);
	o = cut;
	if (!fits && width > 0 && o + 3 < outsz) {
		memcpy(out + o, "\xe2\x80\xa6", 3); /* … */
		o += 3;
		cut_cols++;
	}
	while (pad && cut_cols < width && o + 1 < outsz) {
		out[o++] = ' ';
		cut_cols++;
	}
	out[o] = '\0';
	return o;
}

void lp_fmt_duration(uint64_t ns, char *out, size_t outsz)
{
	static const struct {
		uint64_t div;
		uint64_t up; /* from here on the value rounds to 1000.00: the next unit */
		const char *unit;
	} units[] = {
		{ 1ULL, 1000ULL, "ns" },
		{ 1000ULL, 999995ULL, "us" },
		{ 1000000ULL, 999995000ULL, "ms" },
		{ 1000000000ULL, UINT64_MAX, "s" },
	};
	size_t i = 0;

	while (i + 1 < ARRAY_SIZE(units) && ns >= units[i].up)
		i++;
	snprintf(out, outsz, "%.2f %s", (double)ns / (double)units[i].div, units[i].unit);
}

void lp_fmt_size(uint64_t bytes, char *out, size_t outsz)
{
	static const char *const units[] = { "KB", "MB", "GB", "TB", "PB", "EB" };
	double v = (double)bytes;
	size_t i = 0;

	if (bytes < 1000) {
		snprintf(out, outsz, "%u B", (unsigned)bytes);
		return;
	}
	v /= 1000;
	/* 999.96 KB would print as 1000.0 KB: the next unit from there. */
	while (i + 1 < ARRAY_SIZE(units) && v >= 999.95) {
		v /= 1000;
		i++;
	}
	snprintf(out, outsz, "%.1f %s", v, units[i]);
}
