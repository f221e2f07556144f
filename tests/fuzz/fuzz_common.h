/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the libFuzzer targets (header only). A broken invariant
 * prints what broke and abort()s, so libFuzzer saves the input as a crash.
 */
#ifndef LP_FUZZ_COMMON_H
#define LP_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond, ...)                                                              \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, \
				#cond);                                                    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			abort();                                                           \
		}                                                                          \
	} while (0)

/*
 * Length of the well-formed UTF-8 sequence at s (1-4) or 0, by the table of
 * well-formed byte sequences (Unicode 15, table 3-7): written independently of
 * user/core/text.c, so that a bug there cannot hide itself.
 */
static inline size_t fz_utf8_seq(const unsigned char *s, size_t len)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c <= 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static inline bool fz_valid_utf8(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0, n; i < len; i += n)
		if (!(n = fz_utf8_seq(s + i, len - i)))
			return false;
	return true;
}

/* Code points of valid UTF-8 text. */
static inline size_t fz_codepoints(const char *str, size_t len)
{
	size_t cps = 0;

	for (size_t i = 0; i < len; i++)
		cps += ((unsigned char)str[i] & 0xc0) != 0x80;
	return cps;
}

/* Byte offset where the first cps code points of valid UTF-8 text end. */
static inline size_t fz_cp_offset(const char *str, size_t len, size_t cps)
{
	size_t i = 0;

	while (i < len && cps) {
		i += fz_utf8_seq((const unsigned char *)str + i, len - i);
		cps--;
	}
	return i;
}

static inline void fz_hexdump(FILE *f, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", p[i]);
	fputc('\n', f);
}

#endif
