// SPDX-License-Identifier: MIT
/* Grouping and exact statistics (user/stats.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "unit.h"

static uint64_t pct_of(const uint64_t *in, size_t n, double p)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t r;

	assert_non_null(v);
	memcpy(v, in, n * sizeof(*v));
	r = lp_percentile(v, n, p);
	free(v);
	return r;
}

/* Fills v with 1..n in a scrambled order (a fixed permutation, no randomness). */
static void scrambled(uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (i * 37 % n) + 1; /* 37 is coprime with the sizes used */
}

static void test_percentile_nearest_rank(void **state)
{
	uint64_t v[100];

	scrambled(v, 100);
	assert_int_equal(pct_of(v, 100, 95), 95);
	assert_int_equal(pct_of(v, 100, 50), 50);
	assert_int_equal(pct_of(v, 100, 100), 100);
	assert_int_equal(pct_of(v, 100, 1), 1);
	assert_int_equal(pct_of(v, 100, 0.5), 1);

	scrambled(v, 20);
	assert_int_equal(pct_of(v, 20, 95), 19);
	assert_int_equal(pct_of(v, 20, 50), 10);

	scrambled(v, 10);
	assert_int_equal(pct_of(v, 10, 90), 9);
	assert_int_equal(pct_of(v, 10, 95), 10);

	/* 3 values: rank ceil(2.85) = 3, the maximum */
	uint64_t three[] = { 700, 100, 300 };

	assert_int_equal(pct_of(three, 3, 95), 700);
	assert_int_equal(pct_of(three, 3, 50), 300);

	uint64_t one[] = { 42 };

	assert_int_equal(pct_of(one, 1, 95), 42);
	assert_int_equal(pct_of(one, 1, 1), 42);
	assert_int_equal(lp_percentile(NULL, 0, 95), 0);

	/* Huge values are not passed through floating point. */
	uint64_t big[] = { UINT64_MAX, UINT64_MAX - 1, 1 };

	assert_true(pct_of(big, 3, 95) == UINT64_MAX);
	assert_true(pct_of(big, 3, 50) == UINT64_MAX - 1);

	/* Every n from 1 to 300: P95 of 1..n is ceil(0.95 n). */
	for (size_t n = 1; n <= 300; n++) {
		uint64_t w[300];

		for (size_t i = 0; i < n; i++)
			w[i] = n - i;
		assert_int_equal(pct_of(w, n, 95), (n * 95 + 99) / 100);
	}
}

static struct lp_span span(uint32_t name, uint32_t meta, uint64_t total, uint64_t self)
{
	struct lp_span s = {
		.pid = 1,
		.tid = 1,
		.name = name,
		.meta = meta,
		.start_ns = 1000,
		.end_ns = 1000 + total,
		.total_ns = total,
		.self_ns = self,
	};

	return s;
}

static void add(struct lp_stats *st, struct lp_span s)
{
	assert_int_equal(lp_stats_add(st, &s), 0);
}

static struct lp_group *find(struct lp_stats *st, uint32_t name, uint32_t meta)
{
	struct lp_group **g;
	size_t n = lp_stats_sorted(st, &g);
	struct lp_group *found = NULL;

	for (size_t i = 0; i < n; i++) {
		if (g[i]->name == name && g[i]->meta == meta) {
			assert_null(found); /* one group per (name, meta) */
			found = g[i];
		}
	}
	return found;
}

static void test_group_p95(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group *g;

	assert_non_null(st);
	for (uint64_t i = 20; i >= 1; i--)
		add(st, span(1, 0, i * 1000, i * 1000));
	g = find(st, 1, 0);
	assert_non_null(g);
	assert_int_equal(lp_group_p95(g), 19000);
	/* Adding after a P95 was computed: the new value is sorted in too. */
	add(st, span(1, 0, 500, 0));
	g = find(st, 1, 0);
	assert_int_equal(g->calls, 21);
	assert_int_equal(lp_group_p95(g), 19000); /* rank ceil(19.95) = 20: 500, 1000, ... */
	add(st, span(1, 0, 2000000, 0));
	g = find(st, 1, 0);
	assert_int_equal(lp_group_p95(g), 20000); /* rank ceil(20.9) = 21 of 22 */
	lp_stats_free(st);
}

static void test_grouping_by_name_and_meta(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group **groups;

	assert_non_null(st);
	add(st, span(1, 0, 10, 10));
	add(st, span(1, 5, 20, 20));
	add(st, span(1, 0, 30, 30));
	add(st, span(2, 0, 40, 40));
	add(st, span(2, 5, 50, 50));
	add(st, span(1, 5, 60, 60));
	assert_int_equal(lp_stats_sorted(st, &groups), 4);

	struct lp_group *a = find(st, 1, 0), *b = find(st, 1, 5), *c = find(st, 2, 0),
			*d = find(st, 2, 5);

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(d);
	assert_int_equal(a->calls, 2);
	assert_int_equal(a->total_ns, 40);
	assert_int_equal(b->calls, 2);
	assert_int_equal(b->total_ns, 80);
	assert_int_equal(c->calls, 1);
	assert_int_equal(d->calls, 1);
	lp_stats_free(st);
}

static void test_min_max_self_counter(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_span s;
	struct lp_group *g;

	assert_non_null(st);
	add(st, span(3, 0, 500, 100));
	s = span(3, 0, 200, 150);
	s.has_counter = true;
	s.counter_total = 40;
	s.counter_self = 25;
	s.flags = LP_SPAN_UNTERMINATED;
	add(st, s);
	s = span(3, 0, 800, 10);
	s.has_counter = true;
	s.counter_total = 4;
	s.counter_self = 3;
	s.flags = LP_SPAN_UNCERTAIN | LP_SPAN_UNTERMINATED;
	add(st, s);

	g = find(st, 3, 0);
	assert_non_null(g);
	assert_int_equal(g->calls, 3);
	assert_int_equal(g->total_ns, 1500);
	assert_int_equal(g->self_ns, 260);
	assert_int_equal(g->min_ns, 200);
	assert_int_equal(g->max_ns, 800);
	assert_int_equal(g->total_ns / g->calls, 500); /* the mean the report shows */
	assert_int_equal(g->counter_calls, 2);
	assert_int_equal(g->counter_total, 44);
	assert_int_equal(g->counter_self, 28);
	assert_int_equal(g->unterminated, 2);
	assert_int_equal(g->uncertain, 1);
	assert_int_equal(g->ndurs, 3);
	assert_int_equal(lp_group_p95(g), 800);
	lp_stats_free(st);
}

static void test_sort_order(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group **g;

	assert_non_null(st);
	add(st, span(1, 0, 100, 10));  /* self 10 */
	add(st, span(2, 0, 100, 90));  /* self 90 */
	add(st, span(3, 0, 500, 50));  /* self 50, total 500 */
	add(st, span(4, 0, 50, 50));   /* self 50, total 50 */
	add(st, span(5, 0, 25, 25));   /* self 50, total 50, two calls */
	add(st, span(5, 0, 25, 25));
	add(st, span(6, 0, 1000, 0));  /* self 0 */
	assert_int_equal(lp_stats_sorted(st, &g), 6);
	assert_int_equal(g[0]->name, 2);
	assert_int_equal(g[1]->name, 3);
	assert_int_equal(g[2]->name, 5);
	assert_int_equal(g[3]->name, 4);
	assert_int_equal(g[4]->name, 1);
	assert_int_equal(g[5]->name, 6);
	for (size_t i = 1; i < 6; i++)
		assert_true(g[i - 1]->self_ns >= g[i]->self_ns);
	lp_stats_free(st);
}

/* Sorting reorders the groups: later adds must still land in the right group. */
static void test_add_after_sort(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group **g;
	const uint32_t ng = 200;

	assert_non_null(st);
	for (uint32_t i = 0; i < ng; i++)
		add(st, span(i, i % 3, 10 + i, 10 + i));
	assert_int_equal(lp_stats_sorted(st, &g), ng);
	assert_int_equal(g[0]->name, ng - 1);
	for (uint32_t i = 0; i < ng; i++)
		add(st, span(i, i % 3, 1000, 0));
	assert_int_equal(lp_stats_sorted(st, &g), ng);
	for (uint32_t i = 0; i < ng; i++) {
		assert_int_equal(g[i]->calls, 2);
		assert_int_equal(g[i]->meta, g[i]->name % 3);
		assert_int_equal(g[i]->total_ns, 10 + g[i]->name + 1000);
		assert_int_equal(g[i]->self_ns, 10 + g[i]->name);
	}
	lp_stats_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_nearest_rank),
		cmocka_unit_test(test_group_p95),
		cmocka_unit_test(test_grouping_by_name_and_meta),
		cmocka_unit_test(test_min_max_self_counter),
		cmocka_unit_test(test_sort_order),
		cmocka_unit_test(test_add_after_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
