/* SPDX-License-Identifier: MIT */
/*
 * Per-group statistics of completed spans. A group is a name plus its exact
 * metadata text. Durations are kept per call, so P95 is exact (nearest rank).
 */
#ifndef LP_STATS_H
#define LP_STATS_H

#include "nest.h"

struct lp_group {
	uint32_t name, meta;
	uint64_t calls;
	uint64_t total_ns; /* sum of inclusive durations */
	uint64_t self_ns;
	uint64_t counter_self, counter_total;
	uint64_t counter_calls; /* calls that carried a counter */
	uint64_t min_ns, max_ns;
	uint64_t unterminated, uncertain, started_before;
	uint64_t *durs; /* inclusive duration of every call */
	size_t ndurs, cap;
	bool sorted;
};

struct lp_stats;

struct lp_stats *lp_stats_new(void);
void lp_stats_free(struct lp_stats *s);
int lp_stats_add(struct lp_stats *s, const struct lp_span *span);
/* Groups sorted by self time, largest first (ties: total, then calls). */
size_t lp_stats_sorted(struct lp_stats *s, struct lp_group ***out);
/* Nearest-rank percentile (0 < p <= 100) of v; sorts v. 0 when n == 0. */
uint64_t lp_percentile(uint64_t *v, size_t n, double p);
uint64_t lp_group_p95(struct lp_group *g);

#endif
