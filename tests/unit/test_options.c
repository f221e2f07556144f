// SPDX-License-Identifier: MIT
/*
 * The numbers of record's options (--max-groups, --rows): lp_parse_count; its sizes
 * (--buffer-size, --trace-max-size): lp_parse_size; its durations (--duration,
 * --trace-last): lp_parse_seconds (user/core/common.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "common.h"
#include "stats.h"
#include "unit.h"

static void test_max_groups_values(void **state)
{
	static const char *const bad[] = {
		"", "0", "-1", "+5", " 5", "5 ", "5\n", "x", "5x", "1e3", "0x10", "1.5",
		"10000001", "18446744073709551616", "99999999999999999999999",
	};
	uint64_t v = 42;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (lp_parse_count(bad[i], 1, LP_GROUPS_MAX_LIMIT, &v) != -EINVAL)
			fail_msg("--max-groups '%s' was taken", bad[i]);
		assert_int_equal(v, 42); /* untouched */
	}
	assert_int_equal(lp_parse_count("1", 1, LP_GROUPS_MAX_LIMIT, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(lp_parse_count("10000000", 1, LP_GROUPS_MAX_LIMIT, &v), 0);
	assert_int_equal(v, LP_GROUPS_MAX_LIMIT);
	assert_int_equal(lp_parse_count("007", 1, LP_GROUPS_MAX_LIMIT, &v), 0);
	assert_int_equal(v, 7);
	/* The whole range of --rows. */
	assert_int_equal(lp_parse_count("18446744073709551615", 1, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
}

/* Sizes: a suffix never wraps a value past 2^64 into a small one. */
static void test_size_values(void **state)
{
	static const struct {
		const char *text;
		int want;
	} bad[] = {
		{ "", -EINVAL }, { "K", -EINVAL }, { "-1", -EINVAL }, { "+1M", -EINVAL },
		{ " 1M", -EINVAL }, { "1M ", -EINVAL }, { "1T", -EINVAL }, { "1MM", -EINVAL },
		{ "0x10M", -EINVAL }, { "1.5M", -EINVAL }, { "16iB", -EINVAL }, { "1Mb", -EINVAL },
		/* 2^64 + 1 GiB: the old parser shifted it to 1 GiB. */
		{ "17179869185G", -ERANGE },
		{ "17179869184G", -ERANGE },                 /* exactly 2^64 */
		{ "17592186044416M", -ERANGE },              /* 2^64 */
		{ "18014398509481984K", -ERANGE },           /* 2^64 */
		{ "18446744073709551616", -ERANGE },         /* 2^64, no suffix */
		{ "99999999999999999999999G", -ERANGE },
		{ "18446744073709551615K", -ERANGE },
	};
	uint64_t v = 42;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = lp_parse_size(bad[i].text, 0, UINT64_MAX, &v);

		if (r != bad[i].want)
			fail_msg("size '%s': %d, expected %d", bad[i].text, r, bad[i].want);
		assert_int_equal(v, 42); /* untouched */
	}
	/* The largest of each suffix that fits in 64 bits. */
	assert_int_equal(lp_parse_size("17179869183G", 0, UINT64_MAX, &v), 0);
	assert_true(v == 17179869183ULL << 30);
	assert_int_equal(lp_parse_size("17592186044415M", 0, UINT64_MAX, &v), 0);
	assert_true(v == 17592186044415ULL << 20);
	assert_int_equal(lp_parse_size("18014398509481983K", 0, UINT64_MAX, &v), 0);
	assert_true(v == 18014398509481983ULL << 10);
	assert_int_equal(lp_parse_size("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	/* --buffer-size's range, each spelling. */
	assert_int_equal(lp_parse_size("64K", 1 << 16, 1 << 30, &v), 0);
	assert_int_equal(v, 1 << 16);
	assert_int_equal(lp_parse_size("65536", 1 << 16, 1 << 30, &v), 0);
	assert_int_equal(lp_parse_size("1G", 1 << 16, 1 << 30, &v), 0);
	assert_int_equal(v, 1 << 30);
	assert_int_equal(lp_parse_size("1GiB", 1 << 16, 1 << 30, &v), 0);
	assert_int_equal(lp_parse_size("16MB", 1 << 16, 1 << 30, &v), 0);
	assert_int_equal(v, 16 << 20);
	assert_int_equal(lp_parse_size("16m", 1 << 16, 1 << 30, &v), 0);
	assert_int_equal(lp_parse_size("65535", 1 << 16, 1 << 30, &v), -ERANGE);
	assert_int_equal(lp_parse_size("1025M", 1 << 16, 1 << 30, &v), -ERANGE);
	assert_int_equal(lp_parse_size("1048577K", 1 << 16, 1 << 30, &v), -ERANGE);
	assert_int_equal(lp_parse_size("2G", 1 << 16, 1 << 30, &v), -ERANGE);
}

static void test_duration_values(void **state)
{
	static const char *const bad[] = {
		"", "0", "0s", "0.0000000001", "-1", "+5", " 5", "5 ", "5\n", "s", "5x", "5 s",
		"5S", "5sec", "1e3", "0x10", "inf", "nan", "5ns", "10000001", "166667m", "2778h",
	};
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
		{ "5", 5000000000ull },	       { "2.5", 2500000000ull },   { "5s", 5000000000ull },
		{ "500ms", 500000000ull },     { "0.5s", 500000000ull },   { "2m", 120000000000ull },
		{ "1h", 3600000000000ull },    { ".25", 250000000ull },    { "0.000001ms", 1 },
		{ "10000000", 10000000000000000ull },
	};
	uint64_t v = 42;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (lp_parse_seconds(bad[i], &v) != -EINVAL)
			fail_msg("duration '%s' was taken", bad[i]);
		assert_int_equal(v, 42); /* untouched */
	}
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		if (lp_parse_seconds(good[i].s, &v))
			fail_msg("duration '%s' was refused", good[i].s);
		assert_int_equal(v, good[i].ns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_groups_values),
		cmocka_unit_test(test_size_values),
		cmocka_unit_test(test_duration_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
