// SPDX-License-Identifier: MIT
/* Untrusted text made safe: UTF-8, terminal escaping, column fitting, durations (user/core/text.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "unit.h"

#define FFFD "\xef\xbf\xbd"
#define ELLIPSIS "\xe2\x80\xa6"

static void check_dur(uint64_t ns, const char *want)
{
	char out[64];

	memset(out, 'X', sizeof(out));
	lp_fmt_duration(ns, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_duration_units(void **state)
{
	check_dur(0, "0.00 ns");
	check_dur(1, "1.00 ns");
	check_dur(999, "999.00 ns");
	check_dur(1000, "1.00 us");
	check_dur(1500, "1.50 us");
	check_dur(89890, "89.89 us");
	check_dur(999990, "999.99 us");
	check_dur(1000000, "1.00 ms");
	check_dur(4050000, "4.05 ms");
	check_dur(12170000, "12.17 ms");
	check_dur(18440000, "18.44 ms");
	check_dur(999990000, "999.99 ms");
	check_dur(1000000000, "1.00 s");
	check_dur(61500000000ULL, "61.50 s");
	check_dur(3600000000000ULL, "3600.00 s");
}

/* A value that rounds up to 1000.00 of a unit is shown in the next unit. */
static void test_duration_rounding_at_unit_boundary(void **state)
{
	check_dur(999999, "1.00 ms");
	check_dur(999995, "1.00 ms");
	check_dur(999999999, "1.00 s");
}

static void test_duration_small_buffer(void **state)
{
	char out[6];

	memset(out, 'X', sizeof(out));
	lp_fmt_duration(12170000, out, sizeof(out));
	assert_int_equal(out[5], '\0');
	assert_string_equal(out, "12.17");
}

static void fit(const char *s, size_t width, bool pad, const char *want)
{
	char out[512];
	size_t n;

	memset(out, 'X', sizeof(out));
	n = lp_fit_columns(s, strlen(s), width, pad, out, sizeof(out));
	assert_int_equal(n, strlen(want));
	assert_string_equal(out, want);
}

static char *repeat(const char *unit, size_t times)
{
	size_t ul = strlen(unit);
	char *s = malloc(ul * times + 1);

	assert_non_null(s);
	for (size_t i = 0; i < times; i++)
		memcpy(s + i * ul, unit, ul);
	s[ul * times] = '\0';
	return s;
}

static char *cat(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 1);

	assert_non_null(s);
	strcpy(s, a);
	strcat(s, b);
	return s;
}

static void test_fit_ascii(void **state)
{
	char *s40 = repeat("a", 40), *s41 = repeat("a", 41), *s39 = repeat("a", 39),
	     *cut = cat(s39, ELLIPSIS);

	fit(s40, 40, false, s40); /* exactly 40: unchanged, no "…" */
	fit(s40, 40, true, s40);
	fit(s41, 40, false, cut); /* 41: 39 + "…" = 40 columns */
	fit(s41, 40, true, cut);
	fit("abc", 10, true, "abc       ");
	fit("abc", 10, false, "abc");
	fit("", 3, true, "   ");
	fit("ab", 1, false, ELLIPSIS);
	fit("a", 1, false, "a");
	fit("abc", 0, false, "");
	free(s40);
	free(s41);
	free(s39);
	free(cut);
}

static void test_fit_multibyte(void **state)
{
	/* é is 2 bytes, € 3, 😀 4: each one column */
	char *e40 = repeat("\xc3\xa9", 40), *e41 = repeat("\xc3\xa9", 41),
	     *e39 = repeat("\xc3\xa9", 39), *cut = cat(e39, ELLIPSIS);

	fit(e40, 40, true, e40);
	fit(e41, 40, true, cut);
	free(e40);
	free(e41);
	free(e39);
	free(cut);

	fit("\xe2\x82\xac\xf0\x9f\x98\x80x", 5, true, "\xe2\x82\xac\xf0\x9f\x98\x80x  ");
	fit("\xe2\x82\xac\xf0\x9f\x98\x80xyz", 4, false, "\xe2\x82\xac\xf0\x9f\x98\x80x" ELLIPSIS);
	/* the cut never splits a sequence */
	fit("\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 2, false,
	    "\xf0\x9f\x98\x80" ELLIPSIS);
}

/* "name [meta]" cells: the row is 40 columns whatever the text. */
static void test_fit_columns_always_width(void **state)
{
	static const char *const texts[] = {
		"",
		"x",
		"model.forward [phase=forward, module=encoder]",
		"\xc3\xa9\xc3\xa9\xc3\xa9",
		"\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad"
		"\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87"
		"\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad"
		"\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char out[200];
		size_t n = lp_fit_columns(texts[i], strlen(texts[i]), 40, true, out, sizeof(out));

		assert_int_equal(n, strlen(out));
		assert_true(ut_valid_utf8(out, n));
		assert_int_equal(ut_codepoints(out, n), 40);
	}
}

/* A buffer too small for the text: NUL-terminated, inside the buffer, valid UTF-8. */
static void test_fit_small_buffer(void **state)
{
	char buf[16];
	size_t n;

	memset(buf, 'X', sizeof(buf));
	n = lp_fit_columns("abcdefghij", 10, 40, true, buf, 5);
	assert_int_equal(n, 4);
	assert_string_equal(buf, "abcd");
	assert_int_equal(buf[5], 'X');

	/* "éééé" into 4 bytes: 3 bytes of room must not end in half an é */
	memset(buf, 'X', sizeof(buf));
	n = lp_fit_columns("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, 40, false, buf, 4);
	assert_true(n < 4);
	assert_int_equal(buf[n], '\0');
	assert_true(ut_valid_utf8(buf, n));
}

static void sanitize_n(const char *in, size_t len, const char *want, size_t want_len)
{
	struct lp_buf b = { 0 };

	assert_int_equal(lp_utf8_sanitize(&b, in, len), 0);
	assert_non_null(b.p);
	assert_int_equal(b.len, want_len);
	assert_memory_equal(b.p, want, b.len);
	assert_int_equal(b.p[b.len], '\0');
	assert_true(ut_valid_utf8(b.p, b.len));
	lp_buf_free(&b);
}

#define S(lit) lit, sizeof(lit) - 1
#define SAN(in, want) sanitize_n(in, sizeof(in) - 1, want, sizeof(want) - 1)

static void test_sanitize_invalid_utf8(void **state)
{
	SAN("plain ascii", "plain ascii");
	SAN("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	SAN("\x80", FFFD);                                 /* lone continuation */
	SAN("a\x80z", "a" FFFD "z");
	SAN("a\xc0\x80z", "a" FFFD FFFD "z");             /* overlong NUL */
	SAN("\xc1\xbf", FFFD FFFD);                        /* overlong */
	SAN("\xe0\x80\xaf", FFFD FFFD FFFD);               /* overlong 3-byte */
	SAN("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD);      /* overlong 4-byte */
	SAN("\xed\xa0\x80", FFFD FFFD FFFD);               /* surrogate U+D800 */
	SAN("\xed\xbf\xbf", FFFD FFFD FFFD);               /* surrogate U+DFFF */
	SAN("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);      /* U+110000 */
	SAN("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
	SAN("\xff\xfe", FFFD FFFD);
	SAN("ab\xe2\x82", "ab" FFFD FFFD);                 /* cut short at the end */
	SAN("ab\xf0\x9f\x98", "ab" FFFD FFFD FFFD);
	SAN("\xe2\x82x", FFFD FFFD "x");                   /* cut short mid-text */
	/* boundaries that are valid */
	SAN("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\xc2\x80",
		 "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\xc2\x80");
	/* an embedded NUL is kept: the length says where the text ends */
	SAN("a\0b", "a\0b");
}

static void test_sanitize_appends(void **state)
{
	struct lp_buf b = { 0 };

	assert_int_equal(lp_utf8_sanitize(&b, "ab", 2), 0);
	assert_int_equal(lp_utf8_sanitize(&b, "\xff", 1), 0);
	assert_int_equal(lp_utf8_sanitize(&b, "", 0), 0);
	assert_non_null(b.p);
	assert_string_equal(b.p, "ab" FFFD);
	lp_buf_free(&b);
	assert_null(b.p);
	assert_int_equal(b.len, 0);

	/* empty input still gives a NUL-terminated buffer */
	assert_int_equal(lp_utf8_sanitize(&b, "", 0), 0);
	assert_non_null(b.p);
	assert_string_equal(b.p, "");
	lp_buf_free(&b);
}

static void test_utf8_seq(void **state)
{
	assert_int_equal(lp_utf8_seq((const unsigned char *)"a", 1), 1);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xc3\xa9", 2), 2);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xc3\xa9", 1), 0);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xc3\x28", 2), 0);
	assert_int_equal(lp_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3), 0);
}

static void display(const char *in, size_t len, const char *want)
{
	struct lp_buf b = { 0 };

	assert_int_equal(lp_text_display(&b, in, len), 0);
	assert_non_null(b.p);
	assert_string_equal(b.p, want);
	assert_int_equal(b.len, strlen(want));
	lp_buf_free(&b);
}

static void test_display_escapes_controls(void **state)
{
	display(S("a\nb"), "a\\nb");
	display(S("a\tb"), "a\\tb");
	display(S("a\rb"), "a\\rb");
	display(S("\x1b[2Jx"), "\\x1b[2Jx");
	display(S("\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
	display(S("a\0b"), "a\\x00b");
	display(S("caf\xc3\xa9 \xff"), "caf\xc3\xa9 " FFFD);
	display(S("back\\slash"), "back\\slash");

	/* no byte below 0x20 or 0x7f survives */
	char all[128];
	struct lp_buf b = { 0 };

	for (int i = 0; i < 128; i++)
		all[i] = (char)i;
	assert_int_equal(lp_text_display(&b, all, sizeof(all)), 0);
	for (size_t i = 0; i < b.len; i++)
		assert_true((unsigned char)b.p[i] >= 0x20 && (unsigned char)b.p[i] != 0x7f);
	lp_buf_free(&b);
}

/*
 * C1 controls (U+0080..U+009F) are control characters too: U+009B is CSI,
 * which terminals that honour C1 treat like ESC [. They must not reach the
 * terminal raw.
 */
static void test_display_escapes_c1_controls(void **state)
{
	static const char csi[] = "\xc2\x9b" "2J";
	static const char nel[] = "a\xc2\x85" "b";
	struct lp_buf b = { 0 };

	assert_int_equal(lp_text_display(&b, csi, strlen(csi)), 0);
	assert_non_null(b.p);
	assert_null(strstr(b.p, "\xc2\x9b"));
	assert_non_null(strstr(b.p, "2J"));
	assert_true(ut_valid_utf8(b.p, b.len));
	lp_buf_free(&b);

	assert_int_equal(lp_text_display(&b, nel, strlen(nel)), 0);
	assert_null(strstr(b.p, "\xc2\x85"));
	lp_buf_free(&b);

	/* U+00A0 and above are printable and kept */
	display(S("\xc2\xa0\xc2\xa9"), "\xc2\xa0\xc2\xa9");
}

/*
 * Characters that make text pass for other text or break the line: bidi
 * overrides and isolates, zero-width characters, the line and paragraph
 * separators, the byte order mark, tag characters. Each is shown by its code
 * point; other non-ASCII text is kept as it is.
 */
static void test_display_escapes_invisible(void **state)
{
	/* "evil\u202Egpj.exe" reads "evilexe.jpg" in a terminal */
	display(S("evil\xe2\x80\xaegpj.exe"), "evil\\u202egpj.exe");
	display(S("a\xe2\x80\x8b" "b\xe2\x80\x8c" "c\xe2\x80\x8d" "d"),
		"a\\u200bb\\u200cc\\u200dd");
	display(S("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");
	display(S("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
	display(S("line\xe2\x80\xa8" "para\xe2\x80\xa9" "end"), "line\\u2028para\\u2029end");
	display(S("\xef\xbb\xbf" "bom"), "\\ufeffbom");
	display(S("soft\xc2\xadhyphen\xe2\x81\xa0"), "soft\\u00adhyphen\\u2060");
	display(S("tag\xf3\xa0\x80\x81"), "tag\\ue0001");
	/* what a terminal shows as itself stays */
	display(S("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad \xe2\x80\x94 \xe2\x80\xa6"),
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad \xe2\x80\x94 \xe2\x80\xa6");
}

/* Sizes in sensible units: a 30 KB page was "(0.0 MB)". */
static void test_size_units(void **state)
{
	static const struct {
		uint64_t bytes;
		const char *want;
	} cases[] = {
		{ 0, "0 B" }, { 999, "999 B" }, { 1000, "1.0 KB" }, { 30000, "30.0 KB" },
		{ 26512, "26.5 KB" }, { 999949, "999.9 KB" }, { 999950, "1.0 MB" },
		{ 4200000, "4.2 MB" }, { 1500000000, "1.5 GB" },
		{ UINT64_MAX, "18.4 EB" },
	};
	char out[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lp_fmt_size(cases[i].bytes, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_duration_rounding_at_unit_boundary),
		cmocka_unit_test(test_duration_small_buffer),
		cmocka_unit_test(test_fit_ascii),
		cmocka_unit_test(test_fit_multibyte),
		cmocka_unit_test(test_fit_columns_always_width),
		cmocka_unit_test(test_fit_small_buffer),
		cmocka_unit_test(test_sanitize_invalid_utf8),
		cmocka_unit_test(test_sanitize_appends),
		cmocka_unit_test(test_utf8_seq),
		cmocka_unit_test(test_display_escapes_controls),
		cmocka_unit_test(test_display_escapes_c1_controls),
		cmocka_unit_test(test_display_escapes_invisible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
