// SPDX-License-Identifier: MIT
/* The core's hash map (user/core/map.c): what callers may rely on while it grows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "map.h"

/*
 * Finding a key that is there never moves an entry, even with create and the
 * table at the size where an insertion would grow it: callers keep pointers
 * (the decoder's recent-thread cache did, and read freed memory).
 */
static void test_find_existing_never_moves(void **state)
{
	struct lp_map m = { 0 };

	(void)state;
	assert_non_null(lp_map_find(&m, 1, 7, true));
	lp_map_find(&m, 1, 7, false)->v1 = 42;
	for (uint64_t k = 1; k <= 5000; k++) {
		struct lp_map_ent *first, *again;

		assert_non_null(lp_map_find(&m, k + 1, 7, true));
		assert_int_equal(m.n, k + 1);
		/* At every size, the half-full one included (n == cap / 2). */
		first = lp_map_find(&m, 1, 7, false);
		again = lp_map_find(&m, 1, 7, true);
		assert_non_null(first);
		assert_ptr_equal(again, first);
		assert_int_equal(again->v1, 42);
		assert_int_equal(m.n, k + 1);
	}
	for (uint64_t k = 1; k <= 5001; k++)
		assert_non_null(lp_map_find(&m, k, 7, false));
	assert_null(lp_map_find(&m, 1, 8, false));
	assert_int_equal(lp_map_find(&m, 1, 7, false)->v1, 42);
	lp_map_free(&m);
}

/* The empty map: finds nothing, creates on demand. */
static void test_empty(void **state)
{
	struct lp_map m = { 0 };

	(void)state;
	assert_null(lp_map_find(&m, 0, 0, false));
	assert_non_null(lp_map_find(&m, 0, 0, true));
	assert_int_equal(m.n, 1);
	lp_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_existing_never_moves),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
