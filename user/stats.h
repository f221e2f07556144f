/* SPDX-License-Identifier: MIT */
/*
 * Per-group statistics of completed spans. A group is a name plus its exact
 * metadata text. Durations are kept per call, so P95 is exact (nearest rank),
 * unless a limit of kept durations is set (--summary-only: memory must not grow
 * with the number of spans): past it a group's durations move into a
 * log-linear histogram whose P95 is within LP_HIST_REL_ERROR of the exact one.
 */
#ifndef LP_STATS_H
#define LP_STATS_H

#include "nest.h"

/*
 * Histogram buckets: values below 2^(LP_HIST_SUB_BITS + 1) ns each have their
 * own bucket; above, every power of two is split into 2^LP_HIST_SUB_BITS
 * buckets, so a bucket is at most 1/128 of its lower bound wide. A percentile
 * is reported as its bucket's midpoint (clamped to the group's min and max):
 * at most half a bucket, 1/256 = 0.39% of the value, from the exact one.
 */
#define LP_HIST_SUB_BITS 7
#define LP_HIST_REL_ERROR (1.0 / (2 << LP_HIST_SUB_BITS))
#define LP_HIST_OCTAVES (64 - LP_HIST_SUB_BITS)    /* chunk 0 holds the exact small values */
#define LP_HIST_CHUNK (1u << (LP_HIST_SUB_BITS + 1)) /* counters per chunk (chunk 0: 0..255) */

struct lp_hist {
	uint64_t *chunk[LP_HIST_OCTAVES]; /* allocated when a value first falls in it */
	uint64_t n;
};

/*
 * One index per bucket of that scale, as the summary writes them: an index
 * below LP_HIST_CHUNK is the value itself (ns); above, with k = index -
 * LP_HIST_CHUNK, the bucket holds [(128 + k % 128) << (k / 128 + 1), the next
 * bucket's low) (lp_hist_bucket_low).
 */
#define LP_HIST_INDEXES (LP_HIST_CHUNK + (LP_HIST_OCTAVES - 1) * (1u << LP_HIST_SUB_BITS))
/*
 * A group's self-time buckets kept sparse (16 bytes each) up to this many,
 * then in a struct lp_hist (1-2 KiB per octave used): past 32 distinct
 * buckets, a sorted insert costs more than the memory saves.
 */
#define LP_SELF_SPARSE_MAX 32

/*
 * The same buckets, only those that are used, sorted by index: a group with
 * few calls costs a few bytes, not a chunk of 128 counters per octave.
 */
struct lp_hist_bucket {
	uint32_t index;
	uint64_t count;
};

struct lp_shist {
	struct lp_hist_bucket *b;
	uint32_t n, cap;
	uint64_t total; /* sum of the counts */
};

struct lp_group {
	uint32_t name, meta;
	uint64_t calls;
	uint64_t total_ns; /* sum of inclusive durations */
	uint64_t self_ns;
	uint64_t counter_self, counter_total;
	uint64_t counter_calls; /* calls that carried a counter */
	uint64_t min_ns, max_ns;
	uint64_t unterminated, uncertain, started_before;
	uint64_t *durs; /* inclusive duration of every call (while exact) */
	size_t ndurs, cap;
	bool sorted;  /* p95 is up to date */
	uint64_t p95; /* of durs, once computed */
	struct lp_hist *hist; /* set once the group passed the limit: durs is then empty */
	/*
	 * Self time of every call, bucketed (whatever the limit): `diff` asks
	 * whether a row's self time grew call by call, not only in sum. Sparse
	 * while it has few buckets (a group of a few calls stays small), then in
	 * self_dense (adding stays O(1) for groups of many calls).
	 */
	struct lp_shist self_hist;
	struct lp_hist *self_dense;
	/* Read back from a summary (report, diff): p95 is its P95 as written there. */
	bool p95_fixed;
};

struct lp_stats;

struct lp_stats *lp_stats_new(void);
void lp_stats_free(struct lp_stats *s);
/*
 * Keep at most max durations per group (0: all, the default); a group past it
 * switches to the histogram. Set before the first lp_stats_add().
 */
void lp_stats_set_exact_limit(struct lp_stats *s, size_t max);
int lp_stats_add(struct lp_stats *s, const struct lp_span *span);
/* Groups sorted by self time, largest first (ties: total, then calls). */
size_t lp_stats_sorted(struct lp_stats *s, struct lp_group ***out);
/* Nearest-rank percentile (0 < p <= 100) of v; sorts v. 0 when n == 0. */
uint64_t lp_percentile(uint64_t *v, size_t n, double p);
uint64_t lp_group_p95(struct lp_group *g);
/* Whether lp_group_p95() is exact (no histogram). */
bool lp_group_p95_exact(const struct lp_group *g);
/* Groups whose P95 comes from a histogram. */
size_t lp_stats_approximate(const struct lp_stats *s);

/*
 * The group's call durations (inclusive) bucketed into out (empty, caller
 * frees with lp_shist_free): from its exact durations or its histogram.
 */
int lp_group_hist(const struct lp_group *g, struct lp_shist *out);
/* The same for the calls' self times. */
int lp_group_self_hist(const struct lp_group *g, struct lp_shist *out);

/* The histogram on its own (tests measure its error against exact ranks). */
int lp_hist_add(struct lp_hist *h, uint64_t v);
/* Nearest-rank percentile, the midpoint of its bucket clamped to [lo, hi]. */
uint64_t lp_hist_percentile(const struct lp_hist *h, double p, uint64_t lo, uint64_t hi);
void lp_hist_free(struct lp_hist *h);

/* The bucket index of v, and the smallest value of bucket index. */
unsigned lp_hist_index(uint64_t v);
uint64_t lp_hist_bucket_low(unsigned index);
/* Adds count values to bucket index (< LP_HIST_INDEXES). 0 or -ENOMEM / -EINVAL. */
int lp_shist_add(struct lp_shist *h, unsigned index, uint64_t count);
void lp_shist_free(struct lp_shist *h);

#endif
