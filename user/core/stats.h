/* SPDX-License-Identifier: MIT */
/*
 * Per-group statistics of completed spans. A group is a name plus its exact
 * metadata text. Durations are kept per call, so P95 is exact (nearest rank),
 * unless a limit of kept durations is set (--summary-only: memory must not grow
 * with the number of spans): past it a group's durations move into a
 * log-linear histogram whose P95 is within LP_HIST_REL_ERROR of the exact one.
 *
 * The groups are capped (--max-groups): memory must not grow with the number
 * of distinct texts either. Past the cap, a span whose name and metadata have
 * no group is folded into an overflow group: its name's (when the name has a
 * group of its own), else the one of all other names. Every span lands in
 * some group: totals do not change.
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

/*
 * Groups of their own by default. Why 10000: the distinct (name, metadata)
 * pairs someone reads as rows are tens to hundreds (the demo has 3, a
 * PostgreSQL session a dozen phases and one row per distinct query text);
 * what goes past thousands is an id, a timestamp or a whole text put in the
 * metadata, which no one reads row by row, and which made a 10 s PostgreSQL
 * recording 98k rows, 489 MB of RSS and a 57 MB summary. 10000 groups cost
 * the profiler 3.3 MB (334 bytes each, their texts aside) and the summary
 * 3.3 MB of JSON (13 MB with 500-byte metadata), and leave rare names room
 * before anything is folded.
 */
#define LP_GROUPS_MAX 10000
#define LP_GROUPS_MAX_LIMIT 10000000 /* the most --max-groups accepts */
/* Durations an overflow group keeps for an exact P95, then a histogram: as --summary-only's. */
#define LP_OVERFLOW_DURATIONS 65536
/*
 * The distinct groups folded are counted in a HyperLogLog (user/core/hll.h): in
 * all, 4 KiB, exact up to 512, then within 1.6% (one standard error); per
 * overflow group, 256 bytes, exact up to 32, then within 6.5%.
 */
#define LP_FOLDED_HLL_BITS 12
#define LP_FOLDED_ROW_HLL_BITS 8

struct lp_hll;

/*
 * The metadata of a span rebuilt at attach (LP_SPAN_STARTED_BEFORE): it was
 * passed at the enter, before recording began, and is not known. Such spans
 * get a row of their own, marked, never the row of spans without metadata.
 * Not a string id (ids stay far below).
 */
#define LP_META_UNKNOWN UINT32_MAX

enum lp_overflow {
	LP_OVERFLOW_NONE = 0, /* a group of its own (name, metadata) */
	LP_OVERFLOW_META,     /* its name's spans whose metadata had no group */
	LP_OVERFLOW_NAME,     /* the spans of names that had no group */
};

struct lp_hist {
	uint64_t n; /* first: on the cache line of the small values' chunks, which every add reads */
	uint64_t *chunk[LP_HIST_OCTAVES]; /* allocated when a value first falls in it */
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
	/*
	 * What every call updates comes first, together (~2 cache lines, not 4):
	 * a recording has many groups, and a span's is rarely still in cache.
	 */
	uint64_t calls;
	uint64_t total_ns; /* sum of inclusive durations */
	uint64_t self_ns;
	uint64_t counter_self, counter_total;
	uint64_t counter_calls; /* calls that carried a counter */
	uint64_t min_ns, max_ns;
	uint64_t *durs; /* inclusive duration of every call (while exact) */
	size_t ndurs, cap;
	struct lp_hist *hist; /* set once the group passed the limit: durs is then empty */
	/*
	 * Self time of every call, bucketed (whatever the limit): `diff` asks
	 * whether a row's self time grew call by call, not only in sum. Sparse
	 * while it has few buckets (a group of a few calls stays small), then in
	 * self_dense (adding stays O(1) for groups of many calls).
	 */
	struct lp_hist *self_dense;
	struct lp_shist self_hist;
	/*
	 * An overflow group: its meta (and, for LP_OVERFLOW_NAME, its name)
	 * is 0 and says nothing; folded estimates the distinct groups in it.
	 */
	enum lp_overflow overflow;
	bool sorted;  /* p95 is up to date */
	uint32_t name, meta;
	uint64_t unterminated, uncertain, started_before;
	uint64_t p95; /* of durs, once computed */
	size_t order; /* the groups before it: ties sort by it (ids are reused, so not by name id) */
	struct lp_hll *folded;
	/*
	 * --off-cpu: the splits of its spans (lp_span sched and self_sched) summed,
	 * and the time of its spans not in them (lp_span unmeasured_ns, or all of
	 * a span not split): sched's three + unmeasured_ns = total_ns.
	 */
	struct lp_sched sched, self_sched;
	uint64_t unmeasured_ns;
	/* Read back from a summary (report, diff): p95 is its P95 as written there. */
	bool p95_fixed;
	uint64_t folded_estimate; /* read back: an overflow row's distinct groups, as written */
};

/* The cap on groups and what went past it. */
struct lp_fold_stats {
	size_t max;           /* groups of their own allowed */
	size_t kept;          /* groups of their own */
	size_t overflow_rows; /* overflow groups */
	uint64_t folded_spans; /* spans in overflow groups */
	uint64_t folded_distinct; /* distinct (name, metadata) folded, estimated */
};

struct lp_stats;

struct lp_stats *lp_stats_new(void);
void lp_stats_free(struct lp_stats *s);
/*
 * Keep at most max durations per group (0: all, the default); a group past it
 * switches to the histogram. Set before the first lp_stats_add().
 */
/* The texts of the ids spans carry: folded spans are counted by text (strtab_hash). */
void lp_stats_set_texts(struct lp_stats *s, const struct strtab *st);
void lp_stats_set_exact_limit(struct lp_stats *s, size_t max);
/*
 * At most max groups of their own (LP_GROUPS_MAX unless set; 0: every span
 * is folded). Set before the first lp_stats_add().
 */
void lp_stats_set_max_groups(struct lp_stats *s, size_t max);
/* Marks every group's name and metadata (strtab.h: a collection under way). */
void lp_stats_mark(struct lp_stats *s, struct strtab *st);
int lp_stats_add(struct lp_stats *s, const struct lp_span *span);
void lp_stats_folding(const struct lp_stats *s, struct lp_fold_stats *out);
/* An overflow group's estimate of the distinct groups folded into it (0 for others). */
uint64_t lp_group_folded_distinct(const struct lp_group *g);
/* The group's metadata text: "" when there is none, and when it is not known (LP_META_UNKNOWN). */
const char *lp_group_meta_text(const struct strtab *st, const struct lp_group *g, size_t *len);
/* Groups sorted by self time, largest first (ties: total, then calls, then first made). */
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
