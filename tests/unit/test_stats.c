// SPDX-License-Identifier: MIT
/* Grouping and exact statistics (user/core/stats.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hll.h"
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

/* The group of its own of (name, meta); NULL when none. */
static struct lp_group *find(struct lp_stats *st, uint32_t name, uint32_t meta)
{
	struct lp_group **g;
	size_t n = lp_stats_sorted(st, &g);
	struct lp_group *found = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!g[i]->overflow && g[i]->name == name && g[i]->meta == meta) {
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

/* A small deterministic generator (xorshift64*): the same values on every run. */
static uint64_t rng(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ULL;
}

/* Durations of different shapes: spread, clustered, repeated, at bucket edges, extreme. */
static uint64_t shaped(int shape, size_t i, uint64_t *x)
{
	switch (shape) {
	case 0: return rng(x) % 1000000;                       /* uniform, 0..1 ms */
	case 1: return 1000ULL << (rng(x) % 30);               /* powers of two, 1 us..10 min */
	case 2: return 4000 + rng(x) % 3;                      /* few distinct values */
	case 3: return 255 + rng(x) % 3;                       /* the exact/approximate edge */
	case 4: return i % 97 == 0 ? UINT64_MAX - i : 50 + i;  /* huge outliers */
	case 5: return (rng(x) % 1000) * (rng(x) % 1000) * (rng(x) % 1000); /* heavy tail */
	default: return 7;
	}
}

/* Quickselect gives exactly the nearest rank that sorting gives, whatever the data. */
static void test_p95_selection_matches_sort(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 19, 20, 21, 100, 1001, 65537 };
	uint64_t x = 88172645463325252ULL;

	for (int shape = 0; shape < 7; shape++) {
		for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
			struct lp_stats *st = lp_stats_new();
			uint64_t *v = malloc(sizes[k] * sizeof(*v));
			struct lp_group *g;

			assert_non_null(st);
			assert_non_null(v);
			for (size_t i = 0; i < sizes[k]; i++) {
				v[i] = shaped(shape, i, &x);
				add(st, span(1, 0, v[i], 0));
			}
			g = find(st, 1, 0);
			assert_true(lp_group_p95_exact(g));
			assert_int_equal(lp_group_p95(g), pct_of(v, sizes[k], 95));
			free(v);
			lp_stats_free(st);
		}
	}
}

/* The histogram's P95 is within LP_HIST_REL_ERROR of the exact one, for every shape. */
static void test_histogram_error_bound(void **state)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	double worst = 0;

	for (int shape = 0; shape < 7; shape++) {
		for (size_t n = 1; n <= 200000; n = n * 7 + 3) {
			struct lp_hist h = { 0 };
			uint64_t *v = malloc(n * sizeof(*v)), lo = UINT64_MAX, hi = 0;

			assert_non_null(v);
			for (size_t i = 0; i < n; i++) {
				v[i] = shaped(shape, i, &x);
				lo = v[i] < lo ? v[i] : lo;
				hi = v[i] > hi ? v[i] : hi;
				assert_int_equal(lp_hist_add(&h, v[i]), 0);
			}
			for (double p = 50; p <= 100; p += 5) {
				uint64_t exact = pct_of(v, n, p);
				uint64_t approx = lp_hist_percentile(&h, p, lo, hi);
				double err = exact ? ((double)(approx > exact ? approx - exact : exact - approx)) /
							     (double)exact
						   : (double)approx;

				if (exact < 256)
					assert_int_equal(approx, exact); /* small values are counted one by one */
				assert_true(err <= LP_HIST_REL_ERROR);
				worst = err > worst ? err : worst;
			}
			for (unsigned c = 0; c < LP_HIST_OCTAVES; c++)
				free(h.chunk[c]);
			free(v);
		}
	}
	/* The bound is not vacuous: buckets really are approximate. */
	assert_true(worst > LP_HIST_REL_ERROR / 8);
}

/* With a limit, a group keeps that many durations, then only a histogram. */
static void test_exact_limit(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group *g;
	uint64_t v[5000];

	assert_non_null(st);
	lp_stats_set_exact_limit(st, 1000);
	for (size_t i = 0; i < 5000; i++) {
		v[i] = 1000 + (i * 7919) % 5000;
		add(st, span(1, 0, v[i], v[i] / 2));
		add(st, span(2, 0, 10, 5)); /* a second group, past the limit too */
	}
	for (size_t i = 0; i < 10; i++)
		add(st, span(3, 0, 77, 0)); /* a third that stays exact */
	g = find(st, 1, 0);
	assert_false(lp_group_p95_exact(g));
	assert_int_equal(g->ndurs, 0);
	assert_null(g->durs);
	assert_int_equal(g->calls, 5000);
	assert_int_equal(g->min_ns, 1000);
	assert_int_equal(g->max_ns, 5999);
	assert_true(llabs((long long)lp_group_p95(g) - (long long)pct_of(v, 5000, 95)) <=
		    (long long)(pct_of(v, 5000, 95) * LP_HIST_REL_ERROR));
	g = find(st, 3, 0);
	assert_true(lp_group_p95_exact(g));
	assert_int_equal(lp_group_p95(g), 77);
	assert_int_equal(lp_stats_approximate(st), 2); /* groups 1 and 2 passed 1000 calls */
	lp_stats_free(st);
}

/* The overflow group of kind (and, for LP_OVERFLOW_META, of name); NULL when none. */
static struct lp_group *overflow(struct lp_stats *st, enum lp_overflow kind, uint32_t name)
{
	struct lp_group **g;
	size_t n = lp_stats_sorted(st, &g);
	struct lp_group *found = NULL;

	for (size_t i = 0; i < n; i++) {
		if (g[i]->overflow == kind && (kind != LP_OVERFLOW_META || g[i]->name == name)) {
			assert_null(found); /* one per name, one for all other names */
			found = g[i];
		}
	}
	return found;
}

/* Sums over every group: what the spans added must all be there. */
static void assert_totals(struct lp_stats *st, uint64_t calls, uint64_t total, uint64_t self)
{
	struct lp_group **g;
	size_t n = lp_stats_sorted(st, &g);
	uint64_t c = 0, t = 0, sf = 0;

	for (size_t i = 0; i < n; i++) {
		c += g[i]->calls;
		t += g[i]->total_ns;
		sf += g[i]->self_ns;
	}
	assert_int_equal(c, calls);
	assert_int_equal(t, total);
	assert_int_equal(sf, self);
}

/*
 * 10^5 distinct metadata values of one name (a query log with the SQL as
 * metadata): the cap holds, the rest is one overflow row of that name, the
 * totals are those of every span, the folded count is estimated within its
 * documented error.
 */
static void test_cap_many_metadata(void **state)
{
	enum { N = 100000, MAX = 1000 };
	struct lp_stats *st = lp_stats_new();
	struct lp_fold_stats f;
	struct lp_group **g, *o;
	uint64_t total = 0, self = 0;
	size_t n;

	assert_non_null(st);
	lp_stats_set_max_groups(st, MAX);
	for (uint32_t i = 0; i < N; i++) {
		add(st, span(1, 2 + i, 1000 + i, 500 + i));
		total += 1000 + i;
		self += 500 + i;
	}
	n = lp_stats_sorted(st, &g);
	assert_int_equal(n, MAX + 1);
	lp_stats_folding(st, &f);
	assert_int_equal(f.max, MAX);
	assert_int_equal(f.kept, MAX);
	assert_int_equal(f.overflow_rows, 1);
	assert_int_equal(f.folded_spans, N - MAX);
	assert_true(fabs((double)f.folded_distinct - (N - MAX)) <=
		    3 * lp_hll_std_error(LP_FOLDED_HLL_BITS) * (N - MAX));
	o = overflow(st, LP_OVERFLOW_META, 1);
	assert_non_null(o);
	assert_int_equal(o->calls, N - MAX);
	assert_int_equal(o->meta, 0);
	assert_int_equal(o->min_ns, 1000 + MAX);
	assert_int_equal(o->max_ns, 1000 + N - 1);
	assert_true(fabs((double)lp_group_folded_distinct(o) - (N - MAX)) <=
		    3 * lp_hll_std_error(LP_FOLDED_ROW_HLL_BITS) * (N - MAX));
	/* Its durations are bounded (a histogram past LP_OVERFLOW_DURATIONS): */
	assert_true(N - MAX > LP_OVERFLOW_DURATIONS);
	assert_false(lp_group_p95_exact(o));
	assert_null(o->durs);
	/* ... while the rows of their own, without --summary-only, stay exact. */
	for (size_t i = 0; i < n; i++)
		assert_true(g[i] == o || lp_group_p95_exact(g[i]));
	assert_totals(st, N, total, self);
	/* The same (name, meta) again: its own row, or the overflow row, as before. */
	add(st, span(1, 2, 1, 1));
	add(st, span(1, 2 + N - 1, 1, 1));
	assert_int_equal(find(st, 1, 2)->calls, 2);
	assert_int_equal(overflow(st, LP_OVERFLOW_META, 1)->calls, N - MAX + 1);
	assert_int_equal(lp_stats_sorted(st, &g), MAX + 1);
	lp_stats_free(st);
}

/*
 * Many names, many metadata: a name with a row folds into its own overflow
 * row, a name without one into the single row of other names; rows stay
 * within 2 x max + 1 whatever comes.
 */
static void test_overflow_per_name_and_global(void **state)
{
	enum { MAX = 50 };
	struct lp_stats *st = lp_stats_new();
	struct lp_fold_stats f;
	struct lp_group **g, *o;
	uint64_t calls = 0, total = 0;
	size_t n;

	assert_non_null(st);
	lp_stats_set_max_groups(st, MAX);
	/* 50 names with one row each fill the cap. */
	for (uint32_t name = 1; name <= MAX; name++, calls++) {
		add(st, span(name, 0, name, name));
		total += name;
	}
	/* Each of them with 20 new metadata values, and 1000 new names with 3 each. */
	for (uint32_t name = 1; name <= MAX; name++)
		for (uint32_t meta = 1; meta <= 20; meta++, calls++, total += 7)
			add(st, span(name, meta, 7, 7));
	for (uint32_t name = 1000; name < 2000; name++)
		for (uint32_t meta = 0; meta < 3; meta++, calls++, total += 3)
			add(st, span(name, meta, 3, 3));
	n = lp_stats_sorted(st, &g);
	assert_int_equal(n, 2 * MAX + 1);
	lp_stats_folding(st, &f);
	assert_int_equal(f.kept, MAX);
	assert_int_equal(f.overflow_rows, MAX + 1);
	assert_int_equal(f.folded_spans, MAX * 20 + 3000);
	assert_true(fabs((double)f.folded_distinct - f.folded_spans) <=
		    3 * lp_hll_std_error(LP_FOLDED_HLL_BITS) * (double)f.folded_spans);
	for (uint32_t name = 1; name <= MAX; name++) {
		o = overflow(st, LP_OVERFLOW_META, name);
		assert_non_null(o);
		assert_int_equal(o->calls, 20);
		assert_int_equal(lp_group_folded_distinct(o), 20); /* exact below 32 */
		assert_int_equal(find(st, name, 0)->calls, 1);
	}
	o = overflow(st, LP_OVERFLOW_NAME, 0);
	assert_non_null(o);
	assert_int_equal(o->calls, 3000);
	assert_int_equal(o->name, 0);
	assert_true(fabs((double)lp_group_folded_distinct(o) - 3000) <=
		    3 * lp_hll_std_error(LP_FOLDED_ROW_HLL_BITS) * 3000);
	assert_null(overflow(st, LP_OVERFLOW_META, 1000)); /* a name without a row has none */
	assert_totals(st, calls, total, total);
	lp_stats_free(st);
}

/*
 * A span whose (name, meta) is an overflow row's ids (meta 0 of a name with
 * an overflow row, the ids 0/0 of the row of other names) is not merged into
 * it: overflow rows are found by their flag, never by ids. Right after a
 * folded span too (the previous span's group is remembered).
 */
static void test_overflow_not_forged_by_ids(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group *o;

	assert_non_null(st);
	lp_stats_set_max_groups(st, 3);
	add(st, span(1, 5, 10, 10));
	add(st, span(0, 0, 10, 10)); /* the ids the row of other names holds */
	add(st, span(2, 5, 10, 10));
	add(st, span(1, 6, 100, 100)); /* folded: name 1's overflow row (name 1, meta 0) */
	add(st, span(1, 0, 1000, 1000)); /* (1, 0) has no row: folded too, not a match by ids */
	add(st, span(3, 0, 100, 100));   /* folded: other names */
	add(st, span(0, 0, 10, 10));     /* its own row, right after a fold into ids 0/0 */
	o = overflow(st, LP_OVERFLOW_META, 1);
	assert_int_equal(o->calls, 2);
	assert_int_equal(lp_group_folded_distinct(o), 2);
	o = overflow(st, LP_OVERFLOW_NAME, 0);
	assert_int_equal(o->calls, 1);
	{
		struct lp_group **g;
		size_t n = lp_stats_sorted(st, &g), own = 0;

		for (size_t i = 0; i < n; i++)
			if (!g[i]->overflow && g[i]->name == 0 && g[i]->meta == 0)
				own += g[i]->calls;
		assert_int_equal(own, 2);
		assert_int_equal(n, 5);
	}
	lp_stats_free(st);
}

/* max 0: every span is folded, into the row of other names; the default is LP_GROUPS_MAX. */
static void test_max_groups_edges(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_fold_stats f;
	struct lp_group **g;

	assert_non_null(st);
	lp_stats_folding(st, &f);
	assert_int_equal(f.max, LP_GROUPS_MAX);
	assert_int_equal(f.folded_distinct, 0);
	lp_stats_set_max_groups(st, 0);
	for (uint32_t i = 0; i < 10; i++)
		add(st, span(i % 2, i, 1, 1));
	assert_int_equal(lp_stats_sorted(st, &g), 1);
	assert_int_equal(g[0]->overflow, LP_OVERFLOW_NAME);
	assert_int_equal(g[0]->calls, 10);
	lp_stats_folding(st, &f);
	assert_int_equal(f.kept, 0);
	assert_int_equal(f.folded_spans, 10);
	assert_int_equal(f.folded_distinct, 10);
	lp_stats_free(st);
}

/* --summary-only's smaller limit applies to overflow rows too. */
static void test_overflow_durations_limit(void **state)
{
	struct lp_stats *st = lp_stats_new();
	struct lp_group *o;

	assert_non_null(st);
	lp_stats_set_max_groups(st, 1);
	lp_stats_set_exact_limit(st, 10);
	add(st, span(1, 1, 5, 5));
	for (uint32_t i = 0; i < 11; i++)
		add(st, span(1, 2 + i, 5 + i, 5));
	o = overflow(st, LP_OVERFLOW_META, 1);
	assert_int_equal(o->calls, 11);
	assert_false(lp_group_p95_exact(o));
	assert_true(lp_group_p95_exact(find(st, 1, 1)));
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
		cmocka_unit_test(test_p95_selection_matches_sort),
		cmocka_unit_test(test_histogram_error_bound),
		cmocka_unit_test(test_exact_limit),
		cmocka_unit_test(test_cap_many_metadata),
		cmocka_unit_test(test_overflow_per_name_and_global),
		cmocka_unit_test(test_overflow_not_forged_by_ids),
		cmocka_unit_test(test_max_groups_edges),
		cmocka_unit_test(test_overflow_durations_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
