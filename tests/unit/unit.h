/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the unit tests (header only: tests/tests.mk builds every
 * tests/unit/NAME.c as its own program). Include after the cmocka headers.
 */
#ifndef LP_TEST_UNIT_H
#define LP_TEST_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Strict UTF-8 check written independently of user/core/text.c, so that a bug
 * there cannot hide itself: no overlongs, no surrogates, nothing past
 * U+10FFFF, no sequence cut short, no stray continuation byte. Returns the
 * offset of the first bad byte, or (size_t)-1 when all is valid.
 * (tests/integration/test_hostile.c uses it too.)
 */
static inline size_t ut_utf8_invalid_at(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n;
		uint32_t cp, min;

		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			n = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			n = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return i;
		}
		if (i + n > len)
			return i;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += n;
	}
	return (size_t)-1;
}

static inline bool ut_valid_utf8(const char *str, size_t len)
{
	return ut_utf8_invalid_at(str, len) == (size_t)-1;
}

/* Code points in valid UTF-8 text. */
static inline size_t ut_codepoints(const char *str, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		if (((unsigned char)str[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* Whole file, NUL-terminated; NULL if it cannot be read. */
static inline char *ut_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = (n + 4096 + 1) * 2);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

#endif
