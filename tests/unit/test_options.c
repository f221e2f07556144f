// SPDX-License-Identifier: MIT
/* The numbers of record's options (--max-groups, --rows): lp_parse_count (user/core/common.c). */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_groups_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
