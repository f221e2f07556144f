// SPDX-License-Identifier: MIT
/* Span nesting from synthetic enter/exit streams (user/core/nest.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "nest.h"
#include "unit.h"

/* Everything the sink received, in order. */
struct rec {
	struct lp_span *s;
	size_t n, cap;
	/* the path callback's calls (the first 64), when the sink has one */
	struct {
		uint32_t parent, name;
	} open[64];
	size_t nopen;
};

/* Path ids for the sink's callback: 1000 + the number of the call. */
static uint32_t rec_path(void *ctx, uint32_t parent, uint32_t name)
{
	struct rec *r = ctx;

	if (r->nopen < 64) {
		r->open[r->nopen].parent = parent;
		r->open[r->nopen].name = name;
	}
	return 1000 + (uint32_t)r->nopen++;
}

static void rec_span(void *ctx, const struct lp_span *s)
{
	struct rec *r = ctx;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->s = realloc(r->s, r->cap * sizeof(*r->s));
		assert_non_null(r->s);
	}
	r->s[r->n++] = *s;
}

struct fx {
	struct rec rec;
	struct lp_nest *n;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct lp_nest_sink sink = { 0 };

	if (!fx)
		return -1;
	sink.span = rec_span;
	sink.ctx = &fx->rec;
	fx->n = lp_nest_new(&sink);
	if (!fx->n) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	lp_nest_free(fx->n);
	free(fx->rec.s);
	free(fx);
	return 0;
}

static void ev_full(struct fx *fx, enum lp_event_type type, uint32_t pid, uint32_t tid,
		    uint32_t name, uint64_t ts, bool has_counter, uint64_t counter,
		    uint32_t lost_before)
{
	struct lp_event ev = {
		.type = type,
		.pid = pid,
		.tid = tid,
		.ts_ns = ts,
		.counter = counter,
		.has_counter = has_counter,
		.name = name,
		.meta = 0,
		.lost_before = lost_before,
	};

	assert_int_equal(lp_nest_event(fx->n, &ev), 0);
}

static void enter(struct fx *fx, uint32_t tid, uint32_t name, uint64_t ts)
{
	ev_full(fx, LP_EVENT_ENTER, 100, tid, name, ts, false, 0, 0);
}

static void leave(struct fx *fx, uint32_t tid, uint32_t name, uint64_t ts)
{
	ev_full(fx, LP_EVENT_EXIT, 100, tid, name, ts, false, 0, 0);
}

static const struct lp_nest_totals *totals(struct fx *fx)
{
	return lp_nest_totals(fx->n);
}

static void check_span(const struct lp_span *s, uint32_t tid, uint32_t name, uint64_t start,
		       uint64_t end, uint64_t self, uint32_t depth, unsigned flags)
{
	assert_int_equal(s->tid, tid);
	assert_int_equal(s->name, name);
	assert_int_equal(s->start_ns, start);
	assert_int_equal(s->end_ns, end);
	assert_int_equal(s->total_ns, end - start);
	assert_int_equal(s->self_ns, self);
	assert_int_equal(s->depth, depth);
	assert_int_equal(s->flags, flags);
}

/* A(100..200) holding B(110..150) and C(160..170): children first, self = total - children. */
static void test_self_is_total_minus_children(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 100);
	enter(fx, 1, 2, 110);
	leave(fx, 1, 2, 150);
	enter(fx, 1, 3, 160);
	leave(fx, 1, 3, 170);
	leave(fx, 1, 1, 200);
	assert_int_equal(fx->rec.n, 3);
	check_span(&fx->rec.s[0], 1, 2, 110, 150, 40, 1, 0);
	check_span(&fx->rec.s[1], 1, 3, 160, 170, 10, 1, 0);
	check_span(&fx->rec.s[2], 1, 1, 100, 200, 50, 0, 0);
	assert_int_equal(fx->rec.s[2].pid, 100);
	assert_false(fx->rec.s[2].has_counter);
	assert_int_equal(totals(fx)->spans, 3);
	assert_int_equal(totals(fx)->unterminated, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 0);
	assert_int_equal(totals(fx)->recorded_ns, 100);
}

static void test_counter_self_and_total(void **state)
{
	struct fx *fx = *state;

	ev_full(fx, LP_EVENT_ENTER, 100, 1, 1, 0, true, 1000, 0);
	ev_full(fx, LP_EVENT_ENTER, 100, 1, 2, 10, true, 1100, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 2, 20, true, 1400, 0);
	ev_full(fx, LP_EVENT_ENTER, 100, 1, 3, 30, true, 1500, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 3, 40, true, 1550, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 1, 50, true, 2000, 0);
	/* A top-level span whose exit carries no counter has none. */
	ev_full(fx, LP_EVENT_ENTER, 100, 1, 4, 60, true, 5000, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 4, 70, false, 0, 0);

	assert_int_equal(fx->rec.n, 4);
	assert_true(fx->rec.s[0].has_counter);
	assert_int_equal(fx->rec.s[0].counter_total, 300);
	assert_int_equal(fx->rec.s[0].counter_self, 300);
	assert_int_equal(fx->rec.s[1].counter_total, 50);
	assert_int_equal(fx->rec.s[1].counter_self, 50);
	assert_true(fx->rec.s[2].has_counter);
	assert_int_equal(fx->rec.s[2].counter_total, 1000);
	assert_int_equal(fx->rec.s[2].counter_self, 650);
	assert_false(fx->rec.s[3].has_counter);
	assert_int_equal(fx->rec.s[3].counter_total, 0);
	assert_int_equal(totals(fx)->counter_total, 1000);
}

/* 500 levels, each name distinct: exits in reverse order close exactly their own frame. */
static void test_deep_nesting_500(void **state)
{
	struct fx *fx = *state;
	const uint32_t depth = 500;

	for (uint32_t i = 0; i < depth; i++)
		enter(fx, 7, 1000 + i, 10ULL * i);
	for (uint32_t i = depth; i-- > 0;)
		leave(fx, 7, 1000 + i, 10000 + 10ULL * (depth - 1 - i));

	assert_int_equal(fx->rec.n, depth);
	for (uint32_t k = 0; k < depth; k++) {
		uint32_t i = depth - 1 - k; /* innermost first */
		const struct lp_span *s = &fx->rec.s[k];
		uint64_t start = 10ULL * i, end = 10000 + 10ULL * (depth - 1 - i);

		check_span(s, 7, 1000 + i, start, end, i == depth - 1 ? end - start : 20, i, 0);
	}
	assert_int_equal(totals(fx)->spans, depth);
	assert_int_equal(totals(fx)->recorded_ns, 10000 + 10ULL * (depth - 1));
	assert_int_equal(totals(fx)->unterminated, 0);

	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 1);
	assert_int_equal(ti[0].max_depth, depth);
	assert_int_equal(ti[0].spans, depth);
}

/* f inside f inside f: each exit closes the innermost f. */
static void test_recursion_same_name(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 9, 0);
	enter(fx, 1, 9, 10);
	enter(fx, 1, 9, 20);
	leave(fx, 1, 9, 30);
	leave(fx, 1, 9, 40);
	leave(fx, 1, 9, 50);
	assert_int_equal(fx->rec.n, 3);
	check_span(&fx->rec.s[0], 1, 9, 20, 30, 10, 2, 0);
	check_span(&fx->rec.s[1], 1, 9, 10, 40, 20, 1, 0);
	check_span(&fx->rec.s[2], 1, 9, 0, 50, 20, 0, 0);
	assert_int_equal(totals(fx)->recorded_ns, 50);
	assert_int_equal(totals(fx)->unterminated, 0);
}

/* Two threads with the same names, events interleaved one by one. */
static void test_two_threads_interleaved(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 0);
	enter(fx, 2, 1, 1);
	enter(fx, 1, 2, 2);
	enter(fx, 2, 2, 3);
	leave(fx, 1, 2, 10);
	leave(fx, 2, 2, 11);
	leave(fx, 1, 1, 20);
	leave(fx, 2, 1, 22);

	assert_int_equal(fx->rec.n, 4);
	check_span(&fx->rec.s[0], 1, 2, 2, 10, 8, 1, 0);
	check_span(&fx->rec.s[1], 2, 2, 3, 11, 8, 1, 0);
	check_span(&fx->rec.s[2], 1, 1, 0, 20, 12, 0, 0);
	check_span(&fx->rec.s[3], 2, 1, 1, 22, 13, 0, 0);
	assert_int_equal(totals(fx)->threads, 2);
	assert_int_equal(totals(fx)->recorded_ns, 20 + 21);
	assert_int_equal(totals(fx)->unterminated, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 0);

	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 2);
	assert_int_equal(ti[0].tid, 1);
	assert_int_equal(ti[0].recorded_ns, 20);
	assert_int_equal(ti[0].spans, 2);
	assert_int_equal(ti[0].max_depth, 2);
	assert_int_equal(ti[1].tid, 2);
	assert_int_equal(ti[1].recorded_ns, 21);
}

/* The same tid in two processes is two threads. */
static void test_thread_key_includes_pid(void **state)
{
	struct fx *fx = *state;

	ev_full(fx, LP_EVENT_ENTER, 10, 5, 1, 0, false, 0, 0);
	ev_full(fx, LP_EVENT_ENTER, 20, 5, 1, 1, false, 0, 0);
	ev_full(fx, LP_EVENT_EXIT, 10, 5, 1, 10, false, 0, 0);
	ev_full(fx, LP_EVENT_EXIT, 20, 5, 1, 31, false, 0, 0);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(fx->rec.s[0].pid, 10);
	assert_int_equal(fx->rec.s[0].total_ns, 10);
	assert_int_equal(fx->rec.s[0].depth, 0);
	assert_int_equal(fx->rec.s[1].pid, 20);
	assert_int_equal(fx->rec.s[1].total_ns, 30);
	assert_int_equal(fx->rec.s[1].depth, 0);
	assert_int_equal(totals(fx)->threads, 2);
}

/* Many threads: the thread table grows past its first size and still finds each. */
static void test_many_threads(void **state)
{
	struct fx *fx = *state;
	const uint32_t nt = 300;

	for (uint32_t t = 0; t < nt; t++)
		enter(fx, 1000 + t, 1, t);
	for (uint32_t t = 0; t < nt; t++)
		leave(fx, 1000 + t, 1, 1000 + 2ULL * t);
	assert_int_equal(fx->rec.n, nt);
	for (uint32_t t = 0; t < nt; t++) {
		assert_int_equal(fx->rec.s[t].tid, 1000 + t);
		assert_int_equal(fx->rec.s[t].total_ns, 1000 + t);
		assert_int_equal(fx->rec.s[t].flags, 0);
	}
	assert_int_equal(totals(fx)->threads, nt);
	assert_int_equal(totals(fx)->unmatched_exits, 0);

	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), nt);
	for (uint32_t t = 0; t < nt; t++)
		assert_int_equal(ti[t].tid, 1000 + t);
}

/* Every event at the same instant: nesting follows emission order. */
static void test_equal_timestamps(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 5);
	enter(fx, 1, 2, 5);
	leave(fx, 1, 2, 5);
	enter(fx, 1, 3, 5);
	enter(fx, 1, 4, 5);
	leave(fx, 1, 4, 5);
	leave(fx, 1, 3, 5);
	leave(fx, 1, 1, 5);
	assert_int_equal(fx->rec.n, 4);
	check_span(&fx->rec.s[0], 1, 2, 5, 5, 0, 1, 0);
	check_span(&fx->rec.s[1], 1, 4, 5, 5, 0, 2, 0);
	check_span(&fx->rec.s[2], 1, 3, 5, 5, 0, 1, 0);
	check_span(&fx->rec.s[3], 1, 1, 5, 5, 0, 0, 0);
	assert_int_equal(totals(fx)->unterminated, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 0);
}

/* Exit of A while B, C, D are open above it: those close unterminated, strictly nested. */
static void test_exit_of_outer_closes_inner(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 0);
	enter(fx, 1, 2, 10);
	enter(fx, 1, 3, 20);
	enter(fx, 1, 4, 30);
	leave(fx, 1, 1, 100);
	assert_int_equal(fx->rec.n, 4);
	/* innermost first */
	assert_int_equal(fx->rec.s[0].name, 4);
	assert_int_equal(fx->rec.s[1].name, 3);
	assert_int_equal(fx->rec.s[2].name, 2);
	assert_int_equal(fx->rec.s[3].name, 1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fx->rec.s[i].flags, LP_SPAN_UNTERMINATED);
		/* each inner end strictly before its parent's */
		assert_true(fx->rec.s[i].end_ns < fx->rec.s[i + 1].end_ns);
		assert_true(fx->rec.s[i].start_ns > fx->rec.s[i + 1].start_ns);
		assert_int_equal(fx->rec.s[i].depth, 3 - i);
	}
	assert_int_equal(fx->rec.s[3].flags, 0);
	assert_int_equal(fx->rec.s[3].end_ns, 100);
	assert_int_equal(fx->rec.s[3].depth, 0);
	/* self = total - direct child's total, even for forced closes */
	for (int i = 1; i < 4; i++)
		assert_int_equal(fx->rec.s[i].self_ns,
				 fx->rec.s[i].total_ns - fx->rec.s[i - 1].total_ns);
	assert_int_equal(totals(fx)->unterminated, 3);
	assert_int_equal(totals(fx)->unterminated_outer, 3);
	assert_int_equal(totals(fx)->recorded_ns, 100);

	/* The late exits of B, C and D find nothing open. */
	leave(fx, 1, 4, 110);
	leave(fx, 1, 3, 120);
	leave(fx, 1, 2, 130);
	assert_int_equal(fx->rec.n, 4);
	assert_int_equal(totals(fx)->unmatched_exits, 3);
}

/* Exit of a middle frame closes the ones above it and leaves the outer open. */
static void test_exit_of_middle_frame(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 0);
	enter(fx, 1, 2, 10);
	enter(fx, 1, 3, 20);
	leave(fx, 1, 2, 50);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(fx->rec.s[0].name, 3);
	assert_int_equal(fx->rec.s[0].flags, LP_SPAN_UNTERMINATED);
	assert_true(fx->rec.s[0].end_ns < 50);
	assert_int_equal(fx->rec.s[1].name, 2);
	assert_int_equal(fx->rec.s[1].flags, 0);
	assert_int_equal(fx->rec.s[1].end_ns, 50);
	leave(fx, 1, 1, 60);
	assert_int_equal(fx->rec.n, 3);
	check_span(&fx->rec.s[2], 1, 1, 0, 60, 20, 0, 0);
	assert_int_equal(totals(fx)->unterminated, 1);
	assert_int_equal(totals(fx)->unterminated_outer, 1);
	assert_int_equal(totals(fx)->unterminated_pairs + totals(fx)->unterminated_thread +
				 totals(fx)->unterminated_end, 0);
}

/* An exit given up (span-pair reentry=close): the span and those inside it close unterminated. */
static void test_unterminated_exit(void **state)
{
	struct fx *fx = *state;
	struct lp_event ev = { .type = LP_EVENT_EXIT, .pid = 100, .tid = 1, .ts_ns = 50, .name = 2,
			       .unterminated = true };

	enter(fx, 1, 1, 0);
	enter(fx, 1, 2, 10);
	enter(fx, 1, 3, 20);
	assert_int_equal(lp_nest_event(fx->n, &ev), 0);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(fx->rec.s[0].name, 3);
	assert_int_equal(fx->rec.s[0].flags, LP_SPAN_UNTERMINATED);
	assert_true(fx->rec.s[0].end_ns < 50);
	check_span(&fx->rec.s[1], 1, 2, 10, 50, 40 - (fx->rec.s[0].end_ns - 20), 1,
		   LP_SPAN_UNTERMINATED);
	assert_int_equal(totals(fx)->unterminated, 2);
	/* The given-up span itself; the one inside it, by its (given-up) exit. */
	assert_int_equal(totals(fx)->unterminated_pairs, 1);
	assert_int_equal(totals(fx)->unterminated_outer, 1);
	/* Nothing of that name open: nothing happens, and it is no unmatched exit. */
	ev.ts_ns = 60;
	assert_int_equal(lp_nest_event(fx->n, &ev), 0);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(totals(fx)->unmatched_exits, 0);
	leave(fx, 1, 1, 70);
	check_span(&fx->rec.s[2], 1, 1, 0, 70, 30, 0, 0);
}

/*
 * An exit that sets the metadata (a span-pair spec rendering exit arguments):
 * the span ends with the exit's metadata and detail; without set_meta, the
 * entry's stay.
 */
static void test_exit_sets_metadata(void **state)
{
	struct fx *fx = *state;
	struct lp_event in = { .type = LP_EVENT_ENTER, .pid = 100, .tid = 1, .ts_ns = 10,
			       .name = 1, .meta = 7, .detail = 8 };
	struct lp_event out = { .type = LP_EVENT_EXIT, .pid = 100, .tid = 1, .ts_ns = 20,
				.name = 1, .meta = 9, .detail = 10, .set_meta = true };

	assert_int_equal(lp_nest_event(fx->n, &in), 0);
	assert_int_equal(lp_nest_event(fx->n, &out), 0);
	assert_int_equal(fx->rec.n, 1);
	assert_int_equal(fx->rec.s[0].meta, 9);
	assert_int_equal(fx->rec.s[0].detail, 10);
	in.ts_ns = 30;
	out.ts_ns = 40;
	out.set_meta = false;
	assert_int_equal(lp_nest_event(fx->n, &in), 0);
	assert_int_equal(lp_nest_event(fx->n, &out), 0);
	assert_int_equal(fx->rec.s[1].meta, 7);
	assert_int_equal(fx->rec.s[1].detail, 8);
}

/*
 * A keyed track (a PostgreSQL transaction over its statements) is no thread:
 * its time is not recorded thread time, its span's self time is the part
 * its thread's top-level spans do not cover, and a thread counts once with
 * its tracks, also when all its spans are on them.
 */
static void test_track_self_time(void **state)
{
	struct fx *fx = *state;
	uint32_t tr = LP_TRACK_TID(1, 1);

	enter(fx, 1, 1, 10);  /* statement, the transaction starts inside it */
	enter(fx, tr, 2, 15);
	leave(fx, 1, 1, 20);
	enter(fx, 1, 1, 30);  /* idle in transaction from 20 to 30 */
	leave(fx, 1, 1, 40);
	leave(fx, tr, 2, 45); /* outside any statement from 40 to 45 */
	assert_int_equal(fx->rec.n, 3);
	check_span(&fx->rec.s[2], tr, 2, 15, 45, 15, 0, 0);
	assert_int_equal(totals(fx)->recorded_ns, 20);
	assert_int_equal(totals(fx)->threads, 1);
	/* A second track span: covered measured from its own start. */
	enter(fx, tr, 2, 50);
	enter(fx, 1, 1, 60);
	leave(fx, tr, 2, 65);  /* ends inside a statement */
	leave(fx, 1, 1, 70);
	check_span(&fx->rec.s[3], tr, 2, 50, 65, 10, 0, 0);
	/* Thread 2 has spans only on its track: counted at the end. */
	enter(fx, LP_TRACK_TID(1, 2), 3, 80);
	leave(fx, LP_TRACK_TID(1, 2), 3, 90);
	enter(fx, LP_TRACK_TID(2, 2), 3, 82);
	leave(fx, LP_TRACK_TID(2, 2), 3, 88);
	check_span(&fx->rec.s[5], LP_TRACK_TID(1, 2), 3, 80, 90, 10, 0, 0);
	assert_int_equal(totals(fx)->recorded_ns, 30);
	lp_nest_finish(fx->n, 100);
	assert_int_equal(totals(fx)->threads, 2);
}

/*
 * A tid that comes back (reused after its thread's exit) is a thread again,
 * and thread 1's keyed spans count with thread 1, whichever of its threads
 * had them: `report --threads` lists tid 1, with spans, and its tracks,
 * never which of the two threads a track was of. The header's count is the
 * threads listed with spans, in either order.
 */
static void test_track_of_reused_tid(void **state)
{
	struct fx *fx = *state;
	uint32_t tr = LP_TRACK_TID(1, 1);

	/* pid 100: the first thread 1 has a span of its own; the second, only keyed ones. */
	enter(fx, 1, 1, 10);
	leave(fx, 1, 1, 20);
	lp_nest_thread_end(fx->n, 100, 1, 30);
	leave(fx, 1, 5, 40); /* the second thread 1: an exit without its entry, no span */
	enter(fx, tr, 2, 50);
	leave(fx, tr, 2, 60);
	/* pid 200: the first thread 1's spans are all keyed, the second has its own. */
	ev_full(fx, LP_EVENT_ENTER, 200, tr, 2, 10, false, 0, 0);
	ev_full(fx, LP_EVENT_EXIT, 200, tr, 2, 20, false, 0, 0);
	lp_nest_thread_end(fx->n, 200, tr, 30);
	lp_nest_thread_end(fx->n, 200, 1, 30);
	ev_full(fx, LP_EVENT_ENTER, 200, 1, 1, 40, false, 0, 0);
	ev_full(fx, LP_EVENT_EXIT, 200, 1, 1, 50, false, 0, 0);
	assert_int_equal(fx->rec.n, 4);
	lp_nest_finish(fx->n, 100);
	assert_int_equal(totals(fx)->threads, 2);
}

static void test_exit_without_entry(void **state)
{
	struct fx *fx = *state;

	leave(fx, 1, 5, 10);
	assert_int_equal(fx->rec.n, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 1);
	assert_int_equal(totals(fx)->threads, 0); /* no span: not counted */

	/* With another span open: it is not disturbed. */
	enter(fx, 1, 1, 20);
	leave(fx, 1, 5, 30);
	assert_int_equal(fx->rec.n, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 2);
	leave(fx, 1, 1, 40);
	assert_int_equal(fx->rec.n, 1);
	check_span(&fx->rec.s[0], 1, 1, 20, 40, 20, 0, 0);
	assert_int_equal(totals(fx)->spans, 1);
	assert_int_equal(totals(fx)->unterminated, 0);
}

/* lp_nest_finish closes what is open, unterminated, at end_ns with inner ends earlier. */
static void test_finish_closes_open_spans(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 0);
	enter(fx, 1, 2, 10);
	enter(fx, 1, 3, 20);
	enter(fx, 2, 7, 5);
	enter(fx, 3, 8, 6);
	leave(fx, 3, 8, 16); /* a closed thread is left alone */
	assert_int_equal(fx->rec.n, 1);
	lp_nest_finish(fx->n, 1000);
	assert_int_equal(fx->rec.n, 5);

	const struct lp_span *t1[3] = { NULL, NULL, NULL };
	const struct lp_span *t2 = NULL;
	size_t k = 0;

	for (size_t i = 1; i < fx->rec.n; i++) {
		const struct lp_span *s = &fx->rec.s[i];

		assert_int_equal(s->flags, LP_SPAN_UNTERMINATED);
		if (s->tid == 1)
			t1[k++] = s;
		else if (s->tid == 2)
			t2 = s;
		else
			fail_msg("span of thread %u closed twice", s->tid);
	}
	assert_int_equal(k, 3);
	assert_non_null(t2);
	/* innermost first, outermost at end_ns */
	assert_int_equal(t1[0]->name, 3);
	assert_int_equal(t1[1]->name, 2);
	assert_int_equal(t1[2]->name, 1);
	assert_int_equal(t1[2]->end_ns, 1000);
	assert_int_equal(t1[1]->end_ns, 999);
	assert_int_equal(t1[0]->end_ns, 998);
	assert_int_equal(t1[2]->self_ns, t1[2]->total_ns - t1[1]->total_ns);
	assert_int_equal(t1[1]->self_ns, t1[1]->total_ns - t1[0]->total_ns);
	assert_int_equal(t2->end_ns, 1000);
	assert_int_equal(t2->total_ns, 995);
	assert_int_equal(totals(fx)->unterminated, 4);
	assert_int_equal(totals(fx)->unterminated_end, 4);
	assert_int_equal(totals(fx)->unterminated_outer + totals(fx)->unterminated_pairs +
				 totals(fx)->unterminated_thread, 0);
	assert_int_equal(totals(fx)->spans, 5);
	assert_int_equal(totals(fx)->recorded_ns, 1000 + 995 + 10);
	assert_int_equal(totals(fx)->last_ns, 1000);

	/* Nothing is left open: a second finish closes nothing. */
	lp_nest_finish(fx->n, 2000);
	assert_int_equal(fx->rec.n, 5);
}

/* A sequence gap marks every span open on that thread uncertain, and only those. */
static void test_lost_before_marks_open_spans(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 0);
	enter(fx, 1, 2, 10);
	leave(fx, 1, 2, 20);       /* B closed before the gap: certain */
	enter(fx, 2, 1, 0);        /* another thread: certain */
	enter(fx, 1, 3, 30);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 3, 40, false, 0, 2); /* 2 events lost before */
	enter(fx, 1, 4, 50);       /* after the gap: certain */
	leave(fx, 1, 4, 60);
	leave(fx, 1, 1, 100);
	leave(fx, 2, 1, 100);

	assert_int_equal(fx->rec.n, 5);
	assert_int_equal(fx->rec.s[0].name, 2);
	assert_int_equal(fx->rec.s[0].flags, 0);
	assert_int_equal(fx->rec.s[1].name, 3);
	assert_int_equal(fx->rec.s[1].flags, LP_SPAN_UNCERTAIN);
	assert_int_equal(fx->rec.s[2].name, 4);
	assert_int_equal(fx->rec.s[2].flags, 0);
	assert_int_equal(fx->rec.s[3].name, 1);
	assert_int_equal(fx->rec.s[3].tid, 1);
	assert_int_equal(fx->rec.s[3].flags, LP_SPAN_UNCERTAIN);
	assert_int_equal(fx->rec.s[4].tid, 2);
	assert_int_equal(fx->rec.s[4].flags, 0);
	assert_int_equal(totals(fx)->uncertain, 2);
	assert_int_equal(totals(fx)->lost_seen, 2);

	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 2);
	assert_int_equal(ti[0].lost_seen, 2);
	assert_int_equal(ti[1].lost_seen, 0);
}

/* A gap just before an enter: the new span may have lost its children. */
static void test_lost_before_enter(void **state)
{
	struct fx *fx = *state;

	ev_full(fx, LP_EVENT_ENTER, 100, 1, 1, 0, false, 0, 1);
	leave(fx, 1, 1, 10);
	assert_int_equal(fx->rec.n, 1);
	assert_int_equal(fx->rec.s[0].flags, LP_SPAN_UNCERTAIN);
	assert_int_equal(totals(fx)->uncertain, 1);
	assert_int_equal(totals(fx)->lost_seen, 1);
}

/* A lost exit: the outer exit closes the inner span, both flags set. */
static void test_lost_exit_unterminated_and_uncertain(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 0);
	enter(fx, 1, 2, 10);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 1, 50, false, 0, 1);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(fx->rec.s[0].flags, LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN);
	assert_int_equal(fx->rec.s[1].flags, LP_SPAN_UNCERTAIN);
	assert_int_equal(totals(fx)->unterminated, 1);
	assert_int_equal(totals(fx)->uncertain, 2);
}

/*
 * LP_NEST_MAX_DEPTH open frames, then enters past the limit with the name of
 * the outermost frame: they are counted, and their exits must not close it.
 */
static void test_depth_limit(void **state)
{
	struct fx *fx = *state;
	const uint32_t max = LP_NEST_MAX_DEPTH, extra = 3;
	uint64_t ts = 0;

	for (uint32_t i = 0; i < max; i++)
		enter(fx, 1, 1 + i, ts++);
	for (uint32_t i = 0; i < extra; i++)
		enter(fx, 1, 1, ts++);
	assert_int_equal(totals(fx)->too_deep, extra);
	for (uint32_t i = 0; i < extra; i++)
		leave(fx, 1, 1, ts++);
	assert_int_equal(fx->rec.n, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 0);

	uint64_t inner_exit = ts;

	for (uint32_t i = max; i-- > 0;)
		leave(fx, 1, 1 + i, ts++);
	assert_int_equal(fx->rec.n, max);
	for (uint32_t k = 0; k < max; k++) {
		const struct lp_span *s = &fx->rec.s[k];
		uint32_t i = max - 1 - k;

		assert_int_equal(s->name, 1 + i);
		assert_int_equal(s->depth, i);
		assert_int_equal(s->flags, 0);
		assert_int_equal(s->start_ns, i);
		assert_int_equal(s->end_ns, inner_exit + k);
	}
	/* The innermost kept span holds the skipped ones' time as its own. */
	assert_int_equal(fx->rec.s[0].self_ns, fx->rec.s[0].total_ns);
	assert_int_equal(totals(fx)->unterminated, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 0);
	assert_int_equal(totals(fx)->too_deep, extra);

	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 1);
	assert_int_equal(ti[0].max_depth, max);

	/* The thread works normally afterwards. */
	enter(fx, 1, 42, ts);
	leave(fx, 1, 42, ts + 5);
	assert_int_equal(fx->rec.n, max + 1);
	assert_int_equal(fx->rec.s[max].total_ns, 5);
	assert_int_equal(fx->rec.s[max].depth, 0);
}

/* Window, recorded time (top-level spans only, gaps excluded), counter total, threads. */
static void test_totals(void **state)
{
	struct fx *fx = *state;

	/* thread 1: two top-level spans, one with a child and counters */
	ev_full(fx, LP_EVENT_ENTER, 100, 1, 1, 1000, true, 10, 0);
	ev_full(fx, LP_EVENT_ENTER, 100, 1, 2, 1100, true, 15, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 2, 1200, true, 40, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 1, 1500, true, 60, 0);
	ev_full(fx, LP_EVENT_ENTER, 100, 1, 3, 2000, true, 100, 0);
	ev_full(fx, LP_EVENT_EXIT, 100, 1, 3, 2100, true, 107, 0);
	/* thread 2 overlaps thread 1: its time adds to recorded time */
	enter(fx, 2, 1, 1400);
	leave(fx, 2, 1, 3000);

	const struct lp_nest_totals *t = totals(fx);

	assert_int_equal(t->spans, 4);
	assert_int_equal(t->first_ns, 1000);
	assert_int_equal(t->last_ns, 3000);
	assert_int_equal(t->recorded_ns, 500 + 100 + 1600);
	assert_int_equal(t->counter_total, 50 + 7);
	assert_int_equal(t->threads, 2);
	assert_int_equal(t->unterminated, 0);
	assert_int_equal(t->uncertain, 0);
	assert_int_equal(t->too_deep, 0);
	assert_int_equal(t->lost_seen, 0);

	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 2);
	assert_int_equal(ti[0].recorded_ns, 600);
	assert_int_equal(ti[0].spans, 3);
	assert_int_equal(ti[1].recorded_ns, 1600);
	assert_int_equal(ti[1].spans, 1);
}

static void leave_from_file(struct fx *fx, uint32_t tid, uint32_t name, uint64_t ts,
			    uint64_t file_since)
{
	struct lp_event ev = { .type = LP_EVENT_EXIT, .pid = 100, .tid = tid, .ts_ns = ts,
			       .name = name, .file_since_ns = file_since };

	assert_int_equal(lp_nest_event(fx->n, &ev), 0);
}

/*
 * Attached at 50 while thread 1 was inside A > B: C(60..70) is recorded whole,
 * then B's and A's exits rebuild them from 50, each enclosing what came before.
 */
static void test_rebuild_spans_open_at_attach(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 50, true), 0);
	enter(fx, 1, 3, 60);
	leave(fx, 1, 3, 70);
	leave(fx, 1, 2, 80);
	leave(fx, 1, 1, 100);
	assert_int_equal(fx->rec.n, 3);
	check_span(&fx->rec.s[0], 1, 3, 60, 70, 10, 0, 0);
	check_span(&fx->rec.s[1], 1, 2, 50, 80, 20, 0, LP_SPAN_STARTED_BEFORE);
	check_span(&fx->rec.s[2], 1, 1, 50, 100, 20, 0, LP_SPAN_STARTED_BEFORE);
	assert_int_equal(totals(fx)->started_before, 2);
	assert_int_equal(totals(fx)->unmatched_exits, 0);
	/* The thread was under A the whole time: counted once, not three times. */
	assert_int_equal(totals(fx)->recorded_ns, 50);
	assert_int_equal(totals(fx)->first_ns, 50);
}

/* A rebuilt span closes what is still open inside it, unterminated, just before its end. */
static void test_rebuild_closes_open_inner(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 50, true), 0);
	enter(fx, 1, 7, 60);
	leave(fx, 1, 1, 70);
	assert_int_equal(fx->rec.n, 2);
	check_span(&fx->rec.s[0], 1, 7, 60, 69, 9, 0, LP_SPAN_UNTERMINATED);
	check_span(&fx->rec.s[1], 1, 1, 50, 70, 11, 0, LP_SPAN_STARTED_BEFORE);
	assert_int_equal(totals(fx)->recorded_ns, 20);
}

/* A launched program, or a thread born during recording, had nothing open before. */
static void test_no_rebuild_without_history(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 50, false), 0);
	leave(fx, 1, 1, 60);
	assert_int_equal(lp_nest_process_begin(fx->n, 100, 50, true), 0);
	assert_int_equal(lp_nest_thread_begin(fx->n, 100, 2, 55), 0);
	leave(fx, 2, 1, 70);
	assert_int_equal(fx->rec.n, 0);
	assert_int_equal(totals(fx)->unmatched_exits, 2);
	assert_int_equal(totals(fx)->started_before, 0);
}

/* A library attached after the thread began: its span is rebuilt from the library's start. */
static void test_rebuild_from_file_attached_later(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 10, false), 0);
	enter(fx, 1, 1, 20);
	leave(fx, 1, 1, 30);
	lp_nest_gate(fx->n, 40);
	leave_from_file(fx, 1, 9, 50, 40);
	/* The same file, for a span of a thread born after the library was attached. */
	assert_int_equal(lp_nest_thread_begin(fx->n, 100, 2, 45), 0);
	leave_from_file(fx, 2, 9, 60, 40);
	assert_int_equal(fx->rec.n, 2);
	/* A(20..30) ended before the library was recorded: not inside the rebuilt span. */
	check_span(&fx->rec.s[1], 1, 9, 40, 50, 10, 0, LP_SPAN_STARTED_BEFORE);
	assert_int_equal(totals(fx)->unmatched_exits, 1);
	assert_int_equal(totals(fx)->recorded_ns, 20);
}

/* The library's span was inside an application span open across the gate. */
static void test_rebuild_inside_span_open_across_gate(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 10, false), 0);
	enter(fx, 1, 1, 32);
	lp_nest_gate(fx->n, 40);
	enter(fx, 1, 3, 42);
	leave(fx, 1, 3, 44);
	leave_from_file(fx, 1, 9, 50, 40);
	leave(fx, 1, 1, 60);
	assert_int_equal(fx->rec.n, 3);
	check_span(&fx->rec.s[0], 1, 3, 42, 44, 2, 1, 0);
	check_span(&fx->rec.s[1], 1, 9, 40, 50, 8, 1, LP_SPAN_STARTED_BEFORE);
	check_span(&fx->rec.s[2], 1, 1, 32, 60, 18, 0, 0);
	assert_int_equal(totals(fx)->recorded_ns, 28);
}

/*
 * The sink's path callback: a span asks for its path id when it opens, with
 * the id of the span around it (LP_NEST_PATH_TOP at the top level), and
 * comes back with it; a rebuilt span asks when rebuilt, at its place in the
 * stack; an enter past the depth limit asks nothing.
 */
static void test_path_asked_at_open(void **state)
{
	struct fx *fx = *state;
	struct lp_nest_sink sink = { .span = rec_span, .path = rec_path, .ctx = &fx->rec };
	static const uint32_t want[][2] = {
		{ LP_NEST_PATH_TOP, 1 }, { 1000, 2 }, { LP_NEST_PATH_TOP, 3 }, { 1000, 4 },
		{ 1000, 9 },
	};
	uint64_t ts = 100;

	lp_nest_free(fx->n);
	fx->n = lp_nest_new(&sink);
	assert_non_null(fx->n);
	assert_int_equal(lp_nest_process_begin(fx->n, 100, 10, false), 0);
	enter(fx, 1, 1, 20);
	enter(fx, 1, 2, 30);
	enter(fx, 2, 3, 31);
	leave(fx, 1, 2, 35);
	lp_nest_gate(fx->n, 40);
	enter(fx, 1, 4, 42);
	leave(fx, 1, 4, 44);
	leave_from_file(fx, 1, 9, 50, 40); /* rebuilt from 40, inside 1 */
	leave(fx, 1, 1, 60);
	leave(fx, 2, 3, 61);
	assert_int_equal(fx->rec.nopen, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(fx->rec.open[i].parent, want[i][0]);
		assert_int_equal(fx->rec.open[i].name, want[i][1]);
	}
	assert_int_equal(fx->rec.n, 5);
	check_span(&fx->rec.s[2], 1, 9, 40, 50, 8, 1, LP_SPAN_STARTED_BEFORE);
	assert_int_equal(fx->rec.s[0].path, 1001);
	assert_int_equal(fx->rec.s[1].path, 1003);
	assert_int_equal(fx->rec.s[2].path, 1004);
	assert_int_equal(fx->rec.s[3].path, 1000);
	assert_int_equal(fx->rec.s[4].path, 1002);
	/* Past the depth limit nothing opens. */
	for (uint32_t i = 0; i < LP_NEST_MAX_DEPTH + 2; i++)
		enter(fx, 3, 5, ts++);
	assert_int_equal(fx->rec.nopen, 5 + LP_NEST_MAX_DEPTH);
	assert_int_equal(totals(fx)->too_deep, 2);
}

/* A thread that exits mid-span: its spans close at its exit, strictly nested. */
static void test_thread_end_closes_its_spans(void **state)
{
	struct fx *fx = *state;

	enter(fx, 1, 1, 10);
	enter(fx, 1, 2, 20);
	enter(fx, 2, 3, 25);
	lp_nest_thread_end(fx->n, 100, 1, 30);
	assert_int_equal(fx->rec.n, 2);
	check_span(&fx->rec.s[0], 1, 2, 20, 29, 9, 1, LP_SPAN_UNTERMINATED);
	check_span(&fx->rec.s[1], 1, 1, 10, 30, 11, 0, LP_SPAN_UNTERMINATED);
	assert_true(fx->rec.s[0].end_ns < fx->rec.s[1].end_ns);
	assert_int_equal(totals(fx)->unterminated_thread, 2);
	assert_int_equal(totals(fx)->unterminated, 2);
	/* The tid comes back (reused): a new thread, nothing of the old one open. */
	leave(fx, 1, 1, 40);
	assert_int_equal(totals(fx)->unmatched_exits, 1);
	/* Threads with spans: the first tid 1 only, so far. */
	assert_int_equal(totals(fx)->threads, 1);
	/* Thread 2 is untouched. */
	leave(fx, 2, 3, 50);
	check_span(&fx->rec.s[2], 2, 3, 25, 50, 25, 0, 0);
	assert_int_equal(totals(fx)->threads, 2);
}

/* exec: every thread's spans close; the new program starts with nothing open. */
static void test_process_end_on_exec(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 5, true), 0);
	enter(fx, 1, 1, 10);
	enter(fx, 2, 2, 12);
	ev_full(fx, LP_EVENT_ENTER, 200, 3, 3, 14, false, 0, 0);
	lp_nest_process_end(fx->n, 100, 20);
	assert_int_equal(lp_nest_process_begin(fx->n, 100, 20, false), 0);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(fx->rec.s[0].flags, LP_SPAN_UNTERMINATED);
	assert_int_equal(fx->rec.s[1].flags, LP_SPAN_UNTERMINATED);
	assert_int_equal(totals(fx)->unterminated_thread, 2);
	leave(fx, 1, 1, 30);
	assert_int_equal(totals(fx)->unmatched_exits, 1);
	assert_int_equal(totals(fx)->started_before, 0);
	/* Another process is not touched. */
	ev_full(fx, LP_EVENT_EXIT, 200, 3, 3, 40, false, 0, 0);
	check_span(&fx->rec.s[2], 3, 3, 14, 40, 26, 0, 0);
}

/*
 * --off-cpu: a thread's life as the kernel half accounts it, every ns in one
 * of three states from t0 on; its events carry the sums at their time.
 */
struct sim {
	struct fx *fx;
	uint32_t tid;
	uint64_t now;
	struct lp_sched at;
};

static void sim_run(struct sim *m, uint64_t ns)
{
	m->now += ns;
	m->at.cpu_ns += ns;
}

static void sim_sleep(struct sim *m, uint64_t ns)
{
	m->now += ns;
	m->at.blocked_ns += ns;
	m->at.vcsw++;
}

static void sim_wait(struct sim *m, uint64_t ns)
{
	m->now += ns;
	m->at.runq_ns += ns;
	m->at.ivcsw++;
}

static void sim_event(struct sim *m, enum lp_event_type type, uint32_t name)
{
	struct lp_event ev = { .type = type, .pid = 100, .tid = m->tid, .ts_ns = m->now,
			       .name = name, .has_sched = true, .sched = m->at };

	assert_int_equal(lp_nest_event(m->fx->n, &ev), 0);
}

static void check_split(const struct lp_sched *s, uint64_t cpu, uint64_t runq, uint64_t blocked,
			uint64_t vcsw, uint64_t ivcsw)
{
	assert_int_equal(s->cpu_ns, cpu);
	assert_int_equal(s->runq_ns, runq);
	assert_int_equal(s->blocked_ns, blocked);
	assert_int_equal(s->vcsw, vcsw);
	assert_int_equal(s->ivcsw, ivcsw);
}

/* Every measured span: its three parts and the unmeasured one are its duration. */
static void check_sums(const struct fx *fx)
{
	for (size_t i = 0; i < fx->rec.n; i++) {
		const struct lp_span *s = &fx->rec.s[i];

		if (s->has_sched)
			assert_int_equal(lp_sched_sum(&s->sched) + s->unmeasured_ns, s->total_ns);
	}
}

/* A(cpu 10 | B: sleep 100, cpu 10, runq 20 | cpu 10): a span's split, its self split, its thread's. */
static void test_off_cpu_split(void **state)
{
	struct fx *fx = *state;
	struct sim m = { .fx = fx, .tid = 1, .now = 1000, .at = { 7, 3, 5, 40, 2 } };

	sim_event(&m, LP_EVENT_ENTER, 1);
	sim_run(&m, 10);
	sim_event(&m, LP_EVENT_ENTER, 2);
	sim_sleep(&m, 100);
	sim_run(&m, 5);
	sim_wait(&m, 20);
	sim_run(&m, 5);
	sim_event(&m, LP_EVENT_EXIT, 2);
	sim_run(&m, 10);
	sim_event(&m, LP_EVENT_EXIT, 1);
	assert_int_equal(fx->rec.n, 2);
	assert_true(fx->rec.s[0].has_sched && fx->rec.s[1].has_sched);
	check_split(&fx->rec.s[0].sched, 10, 20, 100, 1, 1);
	check_split(&fx->rec.s[0].self_sched, 10, 20, 100, 1, 1);
	check_split(&fx->rec.s[1].sched, 30, 20, 100, 1, 1);
	check_split(&fx->rec.s[1].self_sched, 20, 0, 0, 0, 0);
	assert_int_equal(fx->rec.s[1].unmeasured_ns, 0);
	check_sums(fx);
	assert_int_equal(totals(fx)->sched_measured, 2);
	assert_int_equal(totals(fx)->sched_partial + totals(fx)->sched_unmeasured, 0);
	/* The thread's: its top-level span's. */
	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 1);
	check_split(&ti[0].sched, 30, 20, 100, 1, 1);
}

/*
 * B, left open when A exits, ends 1 ns before A: its split is A's exit's
 * snapshot less that last ns of CPU, and still adds up to its duration.
 */
static void test_off_cpu_forced_close(void **state)
{
	struct fx *fx = *state;
	struct sim m = { .fx = fx, .tid = 1, .now = 1000 };

	sim_event(&m, LP_EVENT_ENTER, 1);
	sim_run(&m, 10);
	sim_event(&m, LP_EVENT_ENTER, 2);
	sim_sleep(&m, 50);
	sim_run(&m, 30);
	sim_event(&m, LP_EVENT_EXIT, 1);
	assert_int_equal(fx->rec.n, 2);
	check_span(&fx->rec.s[0], 1, 2, 1010, 1089, 79, 1, LP_SPAN_UNTERMINATED);
	check_split(&fx->rec.s[0].sched, 29, 0, 50, 1, 0);
	check_split(&fx->rec.s[1].sched, 40, 0, 50, 1, 0);
	check_split(&fx->rec.s[1].self_sched, 11, 0, 0, 0, 0);
	check_sums(fx);
}

/*
 * Attached at 50 while the thread was inside A; the kernel tracks it from its
 * first event, C's enter at 80: A, rebuilt from 50, is split from 80 on, the
 * 30 ns before unmeasured; its self split leaves out C's.
 */
static void test_off_cpu_open_at_attach(void **state)
{
	struct fx *fx = *state;
	/* Switch counts are the kernel's, from the thread's start: 7 and 3 before. */
	struct sim m = { .fx = fx, .tid = 1, .now = 80, .at = { .vcsw = 7, .ivcsw = 3 } };

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 50, true), 0);
	sim_event(&m, LP_EVENT_ENTER, 3);
	sim_run(&m, 10);
	sim_event(&m, LP_EVENT_EXIT, 3);
	sim_sleep(&m, 20);
	sim_run(&m, 10);
	sim_event(&m, LP_EVENT_EXIT, 1);
	assert_int_equal(fx->rec.n, 2);
	check_span(&fx->rec.s[1], 1, 1, 50, 120, 60, 0, LP_SPAN_STARTED_BEFORE);
	assert_true(fx->rec.s[1].has_sched);
	check_split(&fx->rec.s[1].sched, 20, 0, 20, 1, 0);
	check_split(&fx->rec.s[1].self_sched, 10, 0, 20, 1, 0);
	assert_int_equal(fx->rec.s[1].unmeasured_ns, 30);
	check_sums(fx);
	assert_int_equal(totals(fx)->sched_measured, 1);
	assert_int_equal(totals(fx)->sched_partial, 1);
	/* The thread's totals count A once: C's split is inside it. */
	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_threads(fx->n, &ti), 1);
	check_split(&ti[0].sched, 20, 0, 20, 1, 0);
}

/*
 * A span open at attach whose exit is its thread's first event: the kernel
 * tracked nothing of it, so it is not split (not "split in part", all of it
 * unmeasured); the spans after it are.
 */
static void test_off_cpu_tracked_from_exit(void **state)
{
	struct fx *fx = *state;
	struct sim m = { .fx = fx, .tid = 1, .now = 80 };

	assert_int_equal(lp_nest_process_begin(fx->n, 100, 50, true), 0);
	sim_event(&m, LP_EVENT_EXIT, 1);
	sim_event(&m, LP_EVENT_ENTER, 2);
	sim_sleep(&m, 10);
	sim_event(&m, LP_EVENT_EXIT, 2);
	assert_int_equal(fx->rec.n, 2);
	assert_int_equal(fx->rec.s[0].flags, LP_SPAN_STARTED_BEFORE);
	assert_false(fx->rec.s[0].has_sched);
	assert_int_equal(fx->rec.s[0].unmeasured_ns, 0);
	check_split(&fx->rec.s[1].sched, 0, 0, 10, 1, 0);
	assert_int_equal(totals(fx)->sched_unmeasured, 1);
	assert_int_equal(totals(fx)->sched_partial, 0);
	assert_int_equal(totals(fx)->sched_measured, 1);
}

/*
 * Spans with no snapshot at one end are not split: closed at the thread's
 * exit, or an enter recorded without --off-cpu.
 */
static void test_off_cpu_not_measured(void **state)
{
	struct fx *fx = *state;
	struct sim m = { .fx = fx, .tid = 1, .now = 1000 };

	sim_event(&m, LP_EVENT_ENTER, 1);
	sim_run(&m, 10);
	lp_nest_thread_end(fx->n, 100, 1, m.now);
	enter(fx, 2, 2, 1000);
	m.tid = 2;
	sim_event(&m, LP_EVENT_EXIT, 2);
	assert_int_equal(fx->rec.n, 2);
	assert_false(fx->rec.s[0].has_sched);
	assert_false(fx->rec.s[1].has_sched);
	assert_int_equal(totals(fx)->sched_unmeasured, 2);
	assert_int_equal(totals(fx)->sched_measured, 0);
}

/*
 * Snapshots that do not add up (out of order: never from the kernel half as
 * it is) still give a split of the span's duration: what is short is
 * unmeasured, what is over is cut from cpu first.
 */
static void test_off_cpu_split_fits_duration(void **state)
{
	struct fx *fx = *state;
	struct lp_event e = { .type = LP_EVENT_ENTER, .pid = 100, .tid = 1, .ts_ns = 100,
			      .name = 1, .has_sched = true };

	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	e.type = LP_EVENT_EXIT;
	e.ts_ns = 200; /* 100 ns, of which the snapshot accounts for 60 */
	e.sched = (struct lp_sched){ .cpu_ns = 30, .runq_ns = 10, .blocked_ns = 20 };
	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	e.type = LP_EVENT_ENTER;
	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	e.type = LP_EVENT_EXIT;
	e.ts_ns = 210; /* 10 ns, the snapshot says 65 */
	e.sched = (struct lp_sched){ .cpu_ns = 70, .runq_ns = 20, .blocked_ns = 35 };
	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	assert_int_equal(fx->rec.n, 2);
	check_split(&fx->rec.s[0].sched, 30, 10, 20, 0, 0);
	assert_int_equal(fx->rec.s[0].unmeasured_ns, 40);
	check_split(&fx->rec.s[1].sched, 0, 0, 10, 0, 0);
	assert_int_equal(fx->rec.s[1].unmeasured_ns, 0);
	check_sums(fx);
	assert_int_equal(totals(fx)->sched_partial, 1);
}

/*
 * Steal (the hypervisor took the thread's vCPU while it was current) is a
 * part of the split like the others: the difference of the snapshots, in the
 * self split and the thread's; a split over the span's duration is cut from
 * cpu first, then steal.
 */
static void test_off_cpu_steal(void **state)
{
	struct fx *fx = *state;
	struct lp_event e = { .type = LP_EVENT_ENTER, .pid = 100, .tid = 1, .ts_ns = 100,
			      .name = 1, .has_sched = true,
			      .sched = { .cpu_ns = 5, .steal_ns = 7, .runq_ns = 1 } };
	const struct lp_thread_info *ti;

	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	e.type = LP_EVENT_EXIT;
	e.ts_ns = 200;
	e.sched = (struct lp_sched){ .cpu_ns = 55, .steal_ns = 37, .runq_ns = 11, .blocked_ns = 10 };
	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	assert_int_equal(fx->rec.n, 1);
	check_split(&fx->rec.s[0].sched, 50, 10, 10, 0, 0);
	assert_int_equal(fx->rec.s[0].sched.steal_ns, 30);
	assert_int_equal(fx->rec.s[0].self_sched.steal_ns, 30);
	assert_int_equal(lp_nest_threads(fx->n, &ti), 1);
	assert_int_equal(ti[0].sched.steal_ns, 30);
	/* 10 ns, the snapshots say 60 + 30: cpu goes, then 20 of steal. */
	e.type = LP_EVENT_ENTER;
	e.ts_ns = 300;
	e.sched = (struct lp_sched){ .cpu_ns = 100, .steal_ns = 100 };
	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	e.type = LP_EVENT_EXIT;
	e.ts_ns = 310;
	e.sched = (struct lp_sched){ .cpu_ns = 160, .steal_ns = 130 };
	assert_int_equal(lp_nest_event(fx->n, &e), 0);
	assert_int_equal(fx->rec.n, 2);
	check_split(&fx->rec.s[1].sched, 0, 0, 0, 0, 0);
	assert_int_equal(fx->rec.s[1].sched.steal_ns, 10);
	check_sums(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_self_is_total_minus_children),
		T(test_counter_self_and_total),
		T(test_deep_nesting_500),
		T(test_recursion_same_name),
		T(test_two_threads_interleaved),
		T(test_thread_key_includes_pid),
		T(test_many_threads),
		T(test_equal_timestamps),
		T(test_exit_of_outer_closes_inner),
		T(test_exit_of_middle_frame),
		T(test_exit_without_entry),
		T(test_exit_sets_metadata),
		T(test_track_self_time),
		T(test_track_of_reused_tid),
		T(test_unterminated_exit),
		T(test_finish_closes_open_spans),
		T(test_lost_before_marks_open_spans),
		T(test_lost_before_enter),
		T(test_lost_exit_unterminated_and_uncertain),
		T(test_depth_limit),
		T(test_totals),
		T(test_rebuild_spans_open_at_attach),
		T(test_rebuild_closes_open_inner),
		T(test_no_rebuild_without_history),
		T(test_rebuild_from_file_attached_later),
		T(test_rebuild_inside_span_open_across_gate),
		T(test_path_asked_at_open),
		T(test_thread_end_closes_its_spans),
		T(test_process_end_on_exec),
		T(test_off_cpu_split),
		T(test_off_cpu_forced_close),
		T(test_off_cpu_open_at_attach),
		T(test_off_cpu_tracked_from_exit),
		T(test_off_cpu_not_measured),
		T(test_off_cpu_split_fits_duration),
		T(test_off_cpu_steal),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
