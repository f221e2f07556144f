/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler top`'s last interval: the spans that ended in it, in
 * statistics of their own (struct lp_stats, as the recording's rows are),
 * handed the same spans as the recording's. A span counts in the interval
 * where it ends, by its end time: one read late (the loop was busy, the ring
 * buffer full of others) still counts where it ended.
 */
#ifndef LP_TOP_INTERVAL_H
#define LP_TOP_INTERVAL_H

#include "map.h"
#include "nest.h"
#include "report.h" /* LP_SUMMARY_ONLY_DURATIONS */
#include "stats.h"

/* The spans that ended from start_ns until before end_ns. */
struct lp_top_window {
	struct lp_stats *stats;
	/* Of its spans: spans, recorded_ns (top-level, not tracks), counter_total, threads, last_ns. */
	struct lp_nest_totals totals;
	/* (pid << 32 | tid): the threads seen; v1 their spans, v2 their top-level spans' time */
	struct lp_map threads;
	uint64_t start_ns, end_ns;
	/*
	 * Its spans that began before it did: open across its start (and the
	 * ends of the intervals before it), counted here, where they ended.
	 */
	uint64_t began_before;
};

struct lp_top_interval {
	/*
	 * shown: the last interval that ended; cur: the one under way; next:
	 * spans read already that ended at or after cur's end.
	 */
	struct lp_top_window shown, cur, next;
	uint64_t interval_ns;
	size_t max_groups;
	bool bounded; /* durations kept per row as --summary-only's, then a histogram */
	bool started; /* cur's bounds are set */
	int err;      /* the first error (out of memory): the interval's counts are short */
};

/* 0 or -ENOMEM. */
int lp_top_interval_init(struct lp_top_interval *iv, uint64_t interval_ns, size_t max_groups,
			 bool bounded);
void lp_top_interval_free(struct lp_top_interval *iv);
/* true: s went to next (it ended at or after cur's end), else to cur. */
bool lp_top_interval_span(struct lp_top_interval *iv, const struct lp_span *s);
/* Marks the texts the windows' rows name (a collection of the recording's texts). */
void lp_top_interval_mark(struct lp_top_interval *iv, struct strtab *st);
/*
 * Every span that ended before drained_ns was handed over (since_ns: the
 * recording began): true when cur ended, which is then shown, and the next
 * one begins. hold: the shown interval stays (top is paused).
 */
bool lp_top_interval_advance(struct lp_top_interval *iv, uint64_t since_ns, uint64_t drained_ns,
			     bool hold);
/*
 * The recording ended at end_ns, after the last advance (every span is in
 * cur, none ended later): cur ends there and is shown. 0 or -ENOMEM.
 */
int lp_top_interval_cut(struct lp_top_interval *iv, uint64_t end_ns);

#endif
