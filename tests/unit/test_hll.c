// SPDX-License-Identifier: MIT
/* The distinct-count estimate of folded groups (user/core/hll.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "hll.h"
#include "stats.h"
#include "unit.h"

/* The key stats.c hashes for a (name, meta) pair. */
static uint64_t pair_hash(uint32_t name, uint32_t meta)
{
	return lp_hash64((uint64_t)name << 32 | meta);
}

/*
 * 10^4 .. 10^6 distinct pairs (several shapes: one name with many metadata
 * values, many names, both), checked at every step: within 3 standard errors
 * (the bound stats.h documents), at both sizes the profiler uses.
 */
static void test_estimate_within_documented_error(void **state)
{
	static const unsigned sizes[] = { LP_FOLDED_HLL_BITS, LP_FOLDED_ROW_HLL_BITS };
	static const uint64_t checks[] = { 10000, 20000, 50000, 100000, 200000, 500000, 1000000 };

	for (size_t b = 0; b < ARRAY_SIZE(sizes); b++) {
		double bound = 3 * lp_hll_std_error(sizes[b]);

		for (int shape = 0; shape < 3; shape++) {
			struct lp_hll *h = lp_hll_new(sizes[b]);
			uint64_t n = 0;

			assert_non_null(h);
			for (size_t c = 0; c < ARRAY_SIZE(checks); c++) {
				for (; n < checks[c]; n++) {
					uint32_t name = shape == 0 ? 7 : shape == 1 ? (uint32_t)n + 1
										   : (uint32_t)(n % 1000);
					uint32_t meta = shape == 1 ? 0 : (uint32_t)n + 3;

					lp_hll_add(h, pair_hash(name, meta));
				}
				double err = fabs((double)lp_hll_estimate(h) - (double)n) / (double)n;

				if (err > bound)
					fail_msg("bits %u shape %d: %llu distinct estimated %llu (%.2f%% off, "
						 "bound %.2f%%)",
						 sizes[b], shape, (unsigned long long)n,
						 (unsigned long long)lp_hll_estimate(h), 100 * err,
						 100 * bound);
			}
			lp_hll_free(h);
		}
	}
	/* The documented figures. */
	assert_true(fabs(lp_hll_std_error(LP_FOLDED_HLL_BITS) - 0.01625) < 1e-6);
	assert_true(fabs(lp_hll_std_error(LP_FOLDED_ROW_HLL_BITS) - 0.065) < 1e-6);
	assert_int_equal(lp_hll_exact_max(LP_FOLDED_HLL_BITS), 512);
	assert_int_equal(lp_hll_exact_max(LP_FOLDED_ROW_HLL_BITS), 32);
}

/* Exact up to 2^bits / 8 values, seen any number of times; then the registers take over. */
static void test_exact_then_estimated(void **state)
{
	struct lp_hll *h = lp_hll_new(LP_FOLDED_ROW_HLL_BITS);
	size_t max = lp_hll_exact_max(LP_FOLDED_ROW_HLL_BITS);

	assert_non_null(h);
	assert_int_equal(lp_hll_estimate(h), 0);
	for (uint32_t round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < max; i++) {
			lp_hll_add(h, pair_hash(1, i));
			if (round == 0)
				assert_int_equal(lp_hll_estimate(h), i + 1);
		}
		assert_int_equal(lp_hll_estimate(h), max);
	}
	/* One more: registers, an estimate near 33. */
	lp_hll_add(h, pair_hash(1, (uint32_t)max));
	assert_true(llabs((long long)lp_hll_estimate(h) - (long long)max - 1) <= 4);
	/* Repeats still count once. */
	for (uint32_t i = 0; i <= max; i++)
		lp_hll_add(h, pair_hash(1, i));
	assert_true(llabs((long long)lp_hll_estimate(h) - (long long)max - 1) <= 4);
	lp_hll_free(h);

	assert_null(lp_hll_new(LP_HLL_BITS_MIN - 1));
	assert_null(lp_hll_new(LP_HLL_BITS_MAX + 1));
	/* The smallest size keeps 2 exactly: registers at the third, with the extreme ranks. */
	h = lp_hll_new(LP_HLL_BITS_MIN);
	assert_non_null(h);
	lp_hll_add(h, 0);          /* all zero past the index: the largest rank */
	lp_hll_add(h, UINT64_MAX); /* rank 1 */
	assert_int_equal(lp_hll_estimate(h), 2);
	lp_hll_add(h, 1);
	assert_true(lp_hll_estimate(h) >= 1 && lp_hll_estimate(h) <= 5);
	lp_hll_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimate_within_documented_error),
		cmocka_unit_test(test_exact_then_estimated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
