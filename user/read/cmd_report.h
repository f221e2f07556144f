/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler report`: a recording printed again from its summary, without
 * recording again: the table record printed, or the per-thread view, the call
 * tree or folded stacks. Needs no privileges.
 */
#ifndef LP_CMD_REPORT_H
#define LP_CMD_REPORT_H

#include <stdio.h>

#include "summary_read.h"

enum lp_view { LP_VIEW_TABLE, LP_VIEW_THREADS, LP_VIEW_TREE, LP_VIEW_FOLDED };

/* --sort keys; LP_SORT_RECORDED is the table's own order (self) or the view's. */
enum lp_sort { LP_SORT_RECORDED, LP_SORT_SELF, LP_SORT_TOTAL, LP_SORT_CALLS, LP_SORT_MEAN,
	       LP_SORT_P95, LP_SORT_NAME };

struct lp_group;
/* A row's figure for key (self time for LP_SORT_RECORDED and LP_SORT_NAME): report's and top's. */
uint64_t lp_sort_key(const struct lp_group *g, enum lp_sort key);

struct lp_view_opts {
	enum lp_view view;
	enum lp_sort sort;
	size_t top;            /* rows (threads; children per tree node) shown; 0: all */
	uint64_t min_total_ns; /* rows and tree nodes with less total time are not shown */
	bool verbose;          /* the Profiler line even if record did not show it */
};

/* "self" ... "name" into *out: 0 or -EINVAL. */
int lp_sort_parse(const char *s, enum lp_sort *out);
/* "5ms", "200us", "1.5s", "100ns" (a number needs its unit; "0" is 0): 0 or -EINVAL. */
int lp_duration_parse(const char *s, uint64_t *ns);
/*
 * Prints the view of s to out. 0, or -EINVAL after saying why on stderr (a
 * view the recording has no data for, an option the view does not take),
 * -ENOMEM.
 */
int lp_view_print(FILE *out, const struct lp_summary *s, const struct lp_view_opts *o);

#endif
