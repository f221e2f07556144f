// SPDX-License-Identifier: MIT
/*
 * The bounded trace's ring (user/core/tracering.c): what --trace-last and
 * --trace-max-size keep, fed synthetic events whose text says what they are
 * ("s<end>" for a span, "i<start>" for an event inside one, "n<k>" for a name),
 * so that what comes out can be checked against what went in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracering.h"

#define OH 2 /* the writer's overhead per event, as the JSON writer's */

/* What was emitted: every event's text, in order. */
struct out {
	char ev[4096][64];
	size_t n;
	size_t split; /* events that came in two pieces (the ring's wraparound) */
};

static int emit(void *ctx, const char *a, size_t alen, const char *b, size_t blen)
{
	struct out *o = ctx;

	assert_true(o->n < 4096);
	assert_true(alen + blen < 64);
	memcpy(o->ev[o->n], a, alen);
	if (blen)
		memcpy(o->ev[o->n] + alen, b, blen);
	o->ev[o->n][alen + blen] = '\0';
	o->split += blen != 0;
	o->n++;
	return 0;
}

static struct lp_tring *ring(struct out *o, uint64_t last_ns, uint64_t max_bytes, uint64_t used)
{
	struct lp_tring_opts opts = { .last_ns = last_ns, .max_bytes = max_bytes,
				      .used_bytes = used, .overhead = OH, .emit = emit, .ctx = o };
	struct lp_tring *r;

	memset(o, 0, sizeof(*o));
	r = lp_tring_new(&opts);
	assert_non_null(r);
	return r;
}

/* A span of thread 1 (pid 1) from start to end; its text names its end, padded to width. */
static void span(struct lp_tring *r, uint64_t start, uint64_t end, int width)
{
	char t[64];
	int n = snprintf(t, sizeof(t), "s%-*llu", width - 1, (unsigned long long)end);

	assert_int_equal(lp_tring_span(r, 1, 1, start, end, t, (size_t)n), 0);
}

static void inner(struct lp_tring *r, uint32_t tid, uint64_t start)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "i%llu", (unsigned long long)start);

	assert_int_equal(lp_tring_inner(r, 1, tid, start, t, (size_t)n), 0);
}

static uint64_t end_of(const char *ev)
{
	assert_true(ev[0] == 's');
	return strtoull(ev + 1, NULL, 10);
}

static void test_window_keeps_what_ended_in_it(void **state)
{
	static const uint64_t ends[] = { 5, 12, 19, 20, 25, 18, 31, 27, 29, 40, 33 };
	struct out o;
	struct lp_tring *r = ring(&o, 10, 0, 0);
	struct lp_tring_stats st;
	size_t want = 0;

	(void)state;
	/* Spans of other threads close out of order of their ends: each is looked at. */
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		span(r, ends[i] > 8 ? ends[i] - 8 : 0, ends[i], 8);
	lp_tring_end(r, 40, &st);
	assert_int_equal(st.from_ns, 30);
	assert_false(st.cut);
	assert_int_equal(lp_tring_flush(r), 0);
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		if (ends[i] < 30)
			continue;
		assert_true(want < o.n);
		assert_int_equal(end_of(o.ev[want]), ends[i]);
		want++;
	}
	assert_int_equal(o.n, want);
	assert_int_equal(st.spans, want);
	assert_int_equal(st.spans_left_out, sizeof(ends) / sizeof(ends[0]) - want);
	assert_int_equal(st.bytes, want * (8 + OH));
	lp_tring_free(r);
}

/* The window moves on: memory holds the window's spans, not the recording's. */
static void test_window_forgets_as_it_goes(void **state)
{
	struct out o;
	struct lp_tring *r = ring(&o, 1000, 0, 0);
	struct lp_tring_stats st;

	(void)state;
	for (uint64_t t = 1; t <= 1000000; t++)
		span(r, t - 1, t * 10, 16);
	lp_tring_end(r, 10000000, &st);
	/* 101 spans end in [end - 1000, end]; the ring held at most one more. */
	assert_int_equal(st.spans, 101);
	assert_int_equal(st.spans_left_out, 1000000 - 101);
	assert_true(st.peak_bytes <= 102 * (16 + OH));
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 101);
	assert_int_equal(end_of(o.ev[0]), 10000000 - 1000);
	assert_int_equal(end_of(o.ev[100]), 10000000);
	lp_tring_free(r);
}

/* Past its bytes the ring loses its oldest: the window is cut short, and says where it starts. */
static void test_window_cut_by_memory(void **state)
{
	struct out o;
	struct lp_tring *r = ring(&o, 1000000, 10 * (10 + OH), 0);
	struct lp_tring_stats st;

	(void)state;
	for (uint64_t t = 1; t <= 50; t++)
		span(r, t, t * 100, 10);
	lp_tring_end(r, 5000, &st);
	assert_true(st.cut);
	assert_int_equal(st.from_ns, 4000 + 1); /* after the last span evicted */
	assert_int_equal(st.spans, 10);
	assert_int_equal(st.spans_left_out, 40);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 10);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(end_of(o.ev[i]), 4100 + 100 * i);
	lp_tring_free(r);
}

/* Events of many sizes through a ring that wraps round: each comes out whole, in order. */
static void test_wraparound(void **state)
{
	struct out o;
	/* Not a multiple of any event's size: events straddle the end of the buffer. */
	struct lp_tring *r = ring(&o, 1ull << 40, 1000, 0);
	struct lp_tring_stats st;
	uint64_t t;

	(void)state;
	for (t = 1; t <= 3000; t++)
		span(r, t, t, 9 + (int)(t * 7 % 31));
	lp_tring_end(r, t, &st);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_true(o.split > 0);
	assert_int_equal(o.n, st.spans);
	assert_int_equal(st.spans + st.spans_left_out, 3000);
	for (size_t i = 0; i < o.n; i++) {
		uint64_t e = end_of(o.ev[i]);

		assert_int_equal(e, 3000 - o.n + 1 + i);
		assert_int_equal(strlen(o.ev[i]), 9 + e * 7 % 31);
	}
	assert_true(st.bytes <= 1000 && st.bytes + 2 * (9 + 31 + OH) > 1000);
	lp_tring_free(r);
}

/* A span larger than the whole ring cannot be kept: the window starts after it. */
static void test_span_larger_than_ring(void **state)
{
	struct out o;
	struct lp_tring *r = ring(&o, 1000000, 40, 0);
	struct lp_tring_stats st;

	(void)state;
	span(r, 0, 10, 8);
	span(r, 0, 30, 8);
	span(r, 0, 20, 50); /* 52 bytes > 40 */
	span(r, 0, 15, 8);  /* closed after it, ended before it: not in the window either */
	span(r, 0, 40, 8);
	lp_tring_end(r, 50, &st);
	assert_true(st.cut);
	assert_int_equal(st.from_ns, 21);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 2);
	assert_int_equal(end_of(o.ev[0]), 30);
	assert_int_equal(end_of(o.ev[1]), 40);
	assert_int_equal(st.spans, 2);
	assert_int_equal(st.spans_left_out, 3);
	lp_tring_free(r);
}

/* Events inside a span wait for it and share its fate; they come right before it. */
static void test_inner_follows_its_span(void **state)
{
	struct out o;
	struct lp_tring *r = ring(&o, 100, 0, 0);
	struct lp_tring_stats st;

	(void)state;
	/* A span that ends before the window: its inner event goes with it. */
	inner(r, 1, 5);
	span(r, 1, 50, 8);
	/* parent [100, 400): an inner event, then a child [200, 300) with one, then another. */
	inner(r, 1, 150);
	inner(r, 1, 210);
	lp_tring_span(r, 1, 1, 200, 300, "child", 5);
	inner(r, 1, 350);
	/* Another thread's inner event is not the parent's. */
	inner(r, 2, 360);
	lp_tring_span(r, 1, 2, 355, 370, "other", 5);
	lp_tring_span(r, 1, 1, 100, 400, "parent", 6);
	lp_tring_end(r, 420, &st);
	/* Window [320, 420]: the parent (it ended in it) with both its events, not the child. */
	assert_int_equal(st.from_ns, 320);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 5);
	assert_string_equal(o.ev[0], "i360");
	assert_string_equal(o.ev[1], "other");
	assert_string_equal(o.ev[2], "i150");
	assert_string_equal(o.ev[3], "i350");
	assert_string_equal(o.ev[4], "parent");
	assert_int_equal(st.spans, 2);
	assert_int_equal(st.inner, 3);
	assert_int_equal(st.spans_left_out, 2);
	assert_int_equal(st.inner_left_out, 2);
	lp_tring_free(r);
}

/* The budget: the first spans while they fit, then none, however small. */
static void test_budget_keeps_the_first(void **state)
{
	struct out o;
	/* 100 bytes used by the opening, room for 10 spans of 10 + OH. */
	struct lp_tring *r = ring(&o, 0, 100 + 10 * (10 + OH) + 5, 100);
	struct lp_tring_stats st;

	(void)state;
	for (uint64_t t = 1; t <= 10; t++) {
		span(r, t, t * 10, 10);
		/* Written as they come, not at the end. */
		assert_int_equal(o.n, t);
	}
	span(r, 0, 110, 10);
	span(r, 0, 120, 2); /* would fit: left out all the same */
	lp_tring_end(r, 200, &st);
	assert_true(st.full);
	assert_int_equal(st.full_ns, 110);
	assert_int_equal(st.spans, 10);
	assert_int_equal(st.spans_left_out, 2);
	assert_int_equal(st.bytes, 10 * (10 + OH));
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 10);
	assert_int_equal(end_of(o.ev[9]), 100);
	lp_tring_free(r);
}

/* The budget counts a span's inner events with it: none is written without its span. */
static void test_budget_inner(void **state)
{
	struct out o;
	/* Two spans of 8 bytes, an inner event of 3, and 3 bytes more. */
	struct lp_tring *r = ring(&o, 0, 2 * (8 + OH) + (3 + OH) + 3, 0);
	struct lp_tring_stats st;

	(void)state;
	inner(r, 1, 10);
	span(r, 5, 20, 8); /* i10 + s20: 15 of 28 */
	assert_int_equal(o.n, 2);
	inner(r, 1, 30); /* 20, held */
	span(r, 25, 40, 8); /* 30: past the budget with its inner event: both left out */
	span(r, 41, 42, 4);  /* fits, but the trace is full */
	lp_tring_end(r, 50, &st);
	assert_true(st.full);
	assert_int_equal(st.full_ns, 40);
	assert_int_equal(st.spans, 1);
	assert_int_equal(st.inner, 1);
	assert_int_equal(st.spans_left_out, 2);
	assert_int_equal(st.inner_left_out, 1);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 2);
	assert_string_equal(o.ev[0], "i10");
	lp_tring_free(r);
}


/* The text of event seq, 40 bytes its number can be read back from and checked. */
static size_t seq_text(unsigned seq, char *t)
{
	int n = snprintf(t, 64, "%u:", seq);

	for (; n < 40; n++)
		t[n] = (char)('a' + (seq + (unsigned)n) % 26);
	t[n] = '\0';
	return (size_t)n;
}

/* The ring grows (bytes and index) while its events wrap round its end: none is garbled. */
static void test_grows_while_wrapped(void **state)
{
	struct out o;
	struct lp_tring *r = ring(&o, 100, 0, 0);
	struct lp_tring_stats st;
	unsigned seq = 0, first_kept = 0;
	char t[64], want[64];

	(void)state;
	/* ~11 events at a time, 200 KB and 5000 entries through: both rings wrap round. */
	for (uint64_t e = 1; e <= 5000; e++, seq++) {
		if (e * 10 == 49900)
			first_kept = seq;
		assert_int_equal(lp_tring_span(r, 1, 1, 0, e * 10, t, seq_text(seq, t)), 0);
	}
	/* Then 3000 more that end together: the window keeps them all, 120 KB. */
	for (unsigned i = 0; i < 3000; i++, seq++)
		assert_int_equal(lp_tring_span(r, 1, 1, 0, 50000, t, seq_text(seq, t)), 0);
	lp_tring_end(r, 50000, &st);
	assert_int_equal(st.spans, 11 + 3000);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 11 + 3000);
	for (size_t i = 0; i < o.n; i++) {
		seq_text(first_kept + (unsigned)i, want);
		assert_string_equal(o.ev[i], want);
	}
	lp_tring_free(r);
}

/* Names are kept whatever happens, after every other event. */
static void test_kept_whatever_happens(void **state)
{
	struct out o;
	struct lp_tring *r = ring(&o, 0, 10, 0);
	struct lp_tring_stats st;

	(void)state;
	span(r, 0, 10, 20);
	assert_int_equal(lp_tring_keep(r, "n1", 2), 0);
	assert_int_equal(lp_tring_keep(r, "n2", 2), 0);
	lp_tring_end(r, 20, &st);
	assert_int_equal(st.spans, 0);
	assert_int_equal(lp_tring_flush(r), 0);
	assert_int_equal(o.n, 2);
	assert_string_equal(o.ev[0], "n1");
	assert_string_equal(o.ev[1], "n2");
	lp_tring_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_keeps_what_ended_in_it),
		cmocka_unit_test(test_window_forgets_as_it_goes),
		cmocka_unit_test(test_window_cut_by_memory),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_grows_while_wrapped),
		cmocka_unit_test(test_span_larger_than_ring),
		cmocka_unit_test(test_inner_follows_its_span),
		cmocka_unit_test(test_budget_keeps_the_first),
		cmocka_unit_test(test_budget_inner),
		cmocka_unit_test(test_kept_whatever_happens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
