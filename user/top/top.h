/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler top`: a recording shown as it goes, one table per interval,
 * on a full screen (screen.h) or, with stdout not a terminal, as plain tables
 * one after the other (as `top -b`). What it shows and its keys: its view
 * (top.c) over the recording's spans, handed to it by lp_record
 * (lp_record_opts.watch); the last interval's own statistics: interval.h.
 */
#ifndef LP_TOP_H
#define LP_TOP_H

#include "cmd_report.h" /* enum lp_sort */
#include "record.h"

/* --interval: the shortest and longest interval top refreshes at. */
#define LP_TOP_INTERVAL_MIN_NS 100000000ULL      /* 0.1 s */
#define LP_TOP_INTERVAL_MAX_NS 3600000000000ULL  /* 1 h */
#define LP_TOP_INTERVAL_DEFAULT_NS 1000000000ULL /* 1 s */
/* The filter's text at most (bytes): what a user types at '/'. */
#define LP_TOP_FILTER_MAX 64

struct lp_top_opts {
	uint64_t interval_ns;
	enum lp_sort sort; /* the rows' order at first (LP_SORT_SELF: the table's) */
	bool batch;        /* plain tables on stdout, no keys */
	size_t max_groups; /* as the recording's (--max-groups) */
	bool bounded;      /* durations kept per row as --summary-only's */
	size_t table_rows; /* batch: rows per table (0: all) */
};

struct lp_top;

/* 0 or -ENOMEM (said). */
int lp_top_new(struct lp_top **out, const struct lp_top_opts *o);
/* What lp_record calls (lp_record_opts.watch); valid while t is. */
const struct lp_record_watch *lp_top_watch(struct lp_top *t);
/* Leaves the full screen: the terminal as it was (again: nothing). */
void lp_top_leave(struct lp_top *t);
/*
 * The recording ended (rep: all of it): the screen left; in batch, the last
 * intervals' tables, the one the end cut short too.
 */
void lp_top_end(struct lp_top *t, struct lp_report *rep);
/* Leaves the screen too. */
void lp_top_free(struct lp_top *t);

#endif
