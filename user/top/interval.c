// SPDX-License-Identifier: MIT
#include "interval.h"

#include <errno.h>
#include <stdlib.h>

static int window_new(struct lp_top_interval *iv, struct lp_top_window *w, uint64_t start_ns,
		      uint64_t end_ns)
{
	*w = (struct lp_top_window){ .stats = lp_stats_new(), .start_ns = start_ns,
				     .end_ns = end_ns };
	if (!w->stats)
		return -ENOMEM;
	/*
	 * Folded spans are told apart by their ids (no texts set): a live view
	 * past --max-groups counts its distinct folded groups less exactly.
	 */
	if (iv->bounded)
		lp_stats_set_exact_limit(w->stats, LP_SUMMARY_ONLY_DURATIONS);
	if (iv->max_groups)
		lp_stats_set_max_groups(w->stats, iv->max_groups);
	return 0;
}

static void window_free(struct lp_top_window *w)
{
	lp_stats_free(w->stats);
	lp_map_free(&w->threads);
	*w = (struct lp_top_window){ 0 };
}

int lp_top_interval_init(struct lp_top_interval *iv, uint64_t interval_ns, size_t max_groups,
			 bool bounded)
{
	*iv = (struct lp_top_interval){ .interval_ns = interval_ns, .max_groups = max_groups,
					.bounded = bounded };
	if (window_new(iv, &iv->shown, 0, 0) || window_new(iv, &iv->cur, 0, 0) ||
	    window_new(iv, &iv->next, 0, 0)) {
		lp_top_interval_free(iv);
		return -ENOMEM;
	}
	return 0;
}

void lp_top_interval_free(struct lp_top_interval *iv)
{
	window_free(&iv->shown);
	window_free(&iv->cur);
	window_free(&iv->next);
}

/* The totals of the table's header and its % column, as the nesting counts them. */
static void window_add(struct lp_top_interval *iv, struct lp_top_window *w,
		       const struct lp_span *s, uint64_t start_ns)
{
	struct lp_nest_totals *t = &w->totals;
	int err = lp_stats_add(w->stats, s);

	t->spans++;
	if (s->start_ns < start_ns)
		w->began_before++;
	/* The anomalies a span's flags tell (their causes are the whole recording's). */
	t->unterminated += (s->flags & LP_SPAN_UNTERMINATED) != 0;
	t->uncertain += (s->flags & LP_SPAN_UNCERTAIN) != 0;
	t->started_before += (s->flags & LP_SPAN_STARTED_BEFORE) != 0;
	t->counter_total += s->counter_self;
	if (!t->first_ns || s->start_ns < t->first_ns)
		t->first_ns = s->start_ns;
	if (s->end_ns > t->last_ns)
		t->last_ns = s->end_ns;
	if (!LP_TRACK_IS(s->tid)) {
		struct lp_map_ent *e = lp_map_find(&w->threads, (uint64_t)s->pid << 32 | s->tid, 0,
						   true);

		if (s->depth == 0)
			t->recorded_ns += s->total_ns;
		if (!e) {
			err = err ? err : -ENOMEM;
		} else {
			if (!e->v1++)
				t->threads++;
			if (s->depth == 0)
				e->v2 += s->total_ns;
		}
	}
	if (err && !iv->err)
		iv->err = err;
}

bool lp_top_interval_span(struct lp_top_interval *iv, const struct lp_span *s)
{
	bool later = iv->started && s->end_ns >= iv->cur.end_ns;

	/* Before the first advance, cur began with the recording: no span began before it. */
	window_add(iv, later ? &iv->next : &iv->cur, s,
		   later ? iv->cur.end_ns : iv->started ? iv->cur.start_ns : 0);
	return later;
}

void lp_top_interval_mark(struct lp_top_interval *iv, struct strtab *st)
{
	lp_stats_mark(iv->shown.stats, st);
	lp_stats_mark(iv->cur.stats, st);
	lp_stats_mark(iv->next.stats, st);
}

/* cur, ending at cur_end, is shown; next goes on until end. */
static int rotate(struct lp_top_interval *iv, uint64_t cur_end, uint64_t end)
{
	struct lp_top_window fresh;

	if (window_new(iv, &fresh, end, end)) {
		if (!iv->err)
			iv->err = -ENOMEM;
		return -ENOMEM;
	}
	window_free(&iv->shown);
	iv->shown = iv->cur;
	iv->shown.end_ns = cur_end;
	iv->cur = iv->next;
	iv->cur.start_ns = cur_end;
	iv->cur.end_ns = end;
	iv->next = fresh;
	return 0;
}

bool lp_top_interval_advance(struct lp_top_interval *iv, uint64_t since_ns, uint64_t drained_ns,
			     bool hold)
{
	uint64_t end;

	if (!iv->started) {
		/* The spans read so far ended since the recording began: they are cur's. */
		iv->cur.start_ns = since_ns;
		iv->cur.end_ns = since_ns + iv->interval_ns;
		iv->started = true;
	}
	if (hold || drained_ns < iv->cur.end_ns)
		return false;
	/*
	 * next's spans ended at or after cur's end, some maybe after drained_ns
	 * (read while the loop was late): the new interval ends after them all,
	 * a whole number of intervals on, so none of them counts in a later one.
	 */
	end = iv->cur.end_ns + iv->interval_ns;
	while (end <= drained_ns || end <= iv->next.totals.last_ns)
		end += iv->interval_ns;
	return rotate(iv, iv->cur.end_ns, end) == 0;
}

int lp_top_interval_cut(struct lp_top_interval *iv, uint64_t end_ns)
{
	return rotate(iv, end_ns, end_ns);
}
