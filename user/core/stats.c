// SPDX-License-Identifier: MIT
#include "stats.h"
#include "hll.h"
#include "map.h"
#include "strtab.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RECENT_GROUPS_BITS 8
#define RECENT_GROUPS (1u << RECENT_GROUPS_BITS)

struct lp_stats {
	struct lp_group **groups;
	size_t n, cap;
	size_t exact_limit; /* 0: every duration is kept */
	size_t approximate; /* groups that moved to a histogram */
	size_t max_groups;  /* groups of their own allowed */
	size_t kept;        /* groups of their own */
	size_t overflow_rows;
	struct lp_map index; /* (name, meta) -> v1: group index + 1 */
	/*
	 * Names with a group of their own -> v1: their overflow group's index
	 * + 1 (0: none yet). At most max_groups entries, as index.
	 */
	struct lp_map names;
	struct lp_group *other_names; /* LP_OVERFLOW_NAME, once needed */
	struct lp_hll *folded;        /* every (name, meta) folded, once needed */
	const struct strtab *texts;   /* folded spans are counted by their texts (NULL: ids) */
	/*
	 * Groups of recent (name, meta) pairs, direct-mapped: most spans find
	 * theirs without the index (a program uses a few hundred pairs at a time).
	 */
	struct recent_group {
		uint32_t name, meta;
		struct lp_group *g; /* NULL: empty */
	} recent[RECENT_GROUPS];
};

static struct recent_group *recent_group(struct lp_stats *s, uint32_t name, uint32_t meta)
{
	uint64_t k = ((uint64_t)meta << 32 | name) * 0x9e3779b97f4a7c15ULL;

	return &s->recent[k >> (64 - RECENT_GROUPS_BITS)];
}

struct lp_stats *lp_stats_new(void)
{
	struct lp_stats *s = calloc(1, sizeof(struct lp_stats));

	if (s)
		s->max_groups = LP_GROUPS_MAX;
	return s;
}

void lp_stats_free(struct lp_stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->groups[i]->durs);
		lp_hist_free(s->groups[i]->hist);
		lp_hll_free(s->groups[i]->folded);
		lp_shist_free(&s->groups[i]->self_hist);
		lp_hist_free(s->groups[i]->self_dense);
		free(s->groups[i]);
	}
	free(s->groups);
	lp_map_free(&s->index);
	lp_map_free(&s->names);
	lp_hll_free(s->folded);
	free(s);
}

void lp_stats_set_max_groups(struct lp_stats *s, size_t max)
{
	s->max_groups = max;
}

/* A new group at the end of groups[]; NULL on ENOMEM. */
static struct lp_group *new_group(struct lp_stats *s, uint32_t name, uint32_t meta,
				  enum lp_overflow overflow)
{
	struct lp_group **groups = lp_grow(s->groups, &s->cap, s->n + 1, sizeof(*groups));
	struct lp_group *g;

	if (!groups)
		return NULL;
	s->groups = groups;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	if (overflow) {
		g->folded = lp_hll_new(LP_FOLDED_ROW_HLL_BITS);
		if (!g->folded) {
			free(g);
			return NULL;
		}
		s->overflow_rows++;
	}
	g->name = name;
	g->meta = meta;
	g->overflow = overflow;
	g->min_ns = UINT64_MAX;
	g->order = s->n;
	s->groups[s->n++] = g;
	return g;
}

/* A group of its own for (name, meta), whose index entry e is new. */
static struct lp_group *own_group(struct lp_stats *s, struct lp_map_ent *e, uint32_t name,
				  uint32_t meta)
{
	struct lp_group *g = new_group(s, name, meta, LP_OVERFLOW_NONE);

	if (!g)
		return NULL;
	e->v1 = (uint32_t)s->n;
	s->kept++;
	/* Its name has a group now: its folded spans go to an overflow group of its own. */
	return lp_map_find(&s->names, name, 0, true) ? g : NULL;
}

/* The overflow group a span of (name, meta) without a group goes to. */
static struct lp_group *fold(struct lp_stats *s, uint32_t name, uint32_t meta)
{
	struct lp_map_ent *e = lp_map_find(&s->names, name, 0, false);
	/*
	 * By text, not by id: a folded span's ids are held by no group, so after
	 * a collection its texts come back under other ids, and its ids name others.
	 */
	uint64_t hash = s->texts ? lp_hash64(strtab_hash(s->texts, name) ^
					     strtab_hash(s->texts, meta) * 0x9e3779b97f4a7c15ull)
				 : lp_hash64((uint64_t)name << 32 | meta);
	struct lp_group *g;

	if (!s->folded && !(s->folded = lp_hll_new(LP_FOLDED_HLL_BITS)))
		return NULL;
	if (e && !e->v1) {
		if (!new_group(s, name, 0, LP_OVERFLOW_META))
			return NULL;
		e->v1 = (uint32_t)s->n; /* e stays valid: names is not added to */
	}
	if (e) {
		g = s->groups[e->v1 - 1];
	} else {
		if (!s->other_names && !(s->other_names = new_group(s, 0, 0, LP_OVERFLOW_NAME)))
			return NULL;
		g = s->other_names;
	}
	lp_hll_add(s->folded, hash);
	lp_hll_add(g->folded, hash);
	return g;
}

static __attribute__((noinline)) struct lp_group *find_group(struct lp_stats *s, uint32_t name,
							       uint32_t meta,
							       struct recent_group *c)
{
	bool room = s->kept < s->max_groups;
	struct lp_map_ent *e;
	struct lp_group *g;

	/* Past the cap, a (name, meta) without a group gets no index entry either. */
	e = lp_map_find(&s->index, name, meta, room);
	if (room && !e)
		return NULL;
	if (e && e->v1)
		g = s->groups[e->v1 - 1];
	else if (room)
		g = own_group(s, e, name, meta);
	else
		g = fold(s, name, meta);
	if (g)
		*c = (struct recent_group){ name, meta, g };
	return g;
}

static inline struct lp_group *get_group(struct lp_stats *s, uint32_t name, uint32_t meta)
{
	struct recent_group *c = recent_group(s, name, meta);

	if (c->g && c->name == name && c->meta == meta)
		return c->g;
	return find_group(s, name, meta, c);
}

void lp_stats_mark(struct lp_stats *s, struct strtab *st)
{
	for (size_t i = 0; i < s->n; i++) {
		strtab_mark(st, s->groups[i]->name);
		if (s->groups[i]->meta != LP_META_UNKNOWN)
			strtab_mark(st, s->groups[i]->meta);
	}
	/* A folded span's ids are held by no group: they may name another text next. */
	memset(s->recent, 0, sizeof(s->recent));
}

void lp_stats_set_texts(struct lp_stats *s, const struct strtab *st)
{
	s->texts = st;
}

void lp_stats_set_exact_limit(struct lp_stats *s, size_t max)
{
	s->exact_limit = max;
}

/* The group's kept durations move into a histogram, which takes every later one. */
static int to_histogram(struct lp_stats *s, struct lp_group *g)
{
	struct lp_hist *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < g->ndurs; i++) {
		if (lp_hist_add(h, g->durs[i])) {
			lp_hist_free(h);
			return -ENOMEM;
		}
	}
	free(g->durs);
	g->durs = NULL;
	g->ndurs = g->cap = 0;
	g->hist = h;
	s->approximate++;
	return 0;
}

/* Durations g keeps before its histogram; 0: all. An overflow group's are always bounded. */
static size_t exact_limit(const struct lp_stats *s, const struct lp_group *g)
{
	if (g->overflow && (!s->exact_limit || s->exact_limit > LP_OVERFLOW_DURATIONS))
		return LP_OVERFLOW_DURATIONS;
	return s->exact_limit;
}

static int add_duration(struct lp_stats *s, struct lp_group *g, uint64_t d)
{
	size_t limit = exact_limit(s, g);
	uint64_t *durs;

	if (!g->hist && limit && g->ndurs >= limit && to_histogram(s, g))
		return -ENOMEM;
	if (g->hist)
		return lp_hist_add(g->hist, d);
	if (g->ndurs == g->cap) {
		durs = lp_grow(g->durs, &g->cap, g->ndurs + 1, sizeof(*durs));
		if (!durs)
			return -ENOMEM;
		g->durs = durs;
	}
	g->durs[g->ndurs++] = d;
	g->sorted = false;
	return 0;
}

static int hist_add_index(struct lp_hist *h, unsigned index, uint64_t count);

/* Sparse while the group's self times fall in few buckets, dense after. */
static int add_self(struct lp_group *g, uint64_t self)
{
	if (!g->self_dense && g->self_hist.n >= LP_SELF_SPARSE_MAX) {
		struct lp_hist *h = calloc(1, sizeof(*h));

		for (uint32_t i = 0; h && i < g->self_hist.n; i++) {
			if (hist_add_index(h, g->self_hist.b[i].index, g->self_hist.b[i].count)) {
				lp_hist_free(h);
				h = NULL;
			}
		}
		if (!h)
			return -ENOMEM;
		lp_shist_free(&g->self_hist);
		g->self_dense = h;
	}
	/* The value's chunk and slot straight away, not through its index and back. */
	if (g->self_dense)
		return lp_hist_add(g->self_dense, self);
	return lp_shist_add(&g->self_hist, lp_hist_index(self), 1);
}

int lp_stats_add(struct lp_stats *s, const struct lp_span *span)
{
	bool unknown = !span->meta && (span->flags & LP_SPAN_STARTED_BEFORE);
	struct lp_group *g = get_group(s, span->name, unknown ? LP_META_UNKNOWN : span->meta);

	if (!g || add_duration(s, g, span->total_ns) || add_self(g, span->self_ns))
		return -ENOMEM;
	g->calls++;
	g->total_ns += span->total_ns;
	g->self_ns += span->self_ns;
	if (span->has_counter) {
		g->counter_calls++;
		g->counter_self += span->counter_self;
		g->counter_total += span->counter_total;
	}
	if (span->total_ns < g->min_ns)
		g->min_ns = span->total_ns;
	if (span->total_ns > g->max_ns)
		g->max_ns = span->total_ns;
	if (span->flags & LP_SPAN_UNTERMINATED)
		g->unterminated++;
	if (span->flags & LP_SPAN_UNCERTAIN)
		g->uncertain++;
	if (span->flags & LP_SPAN_STARTED_BEFORE)
		g->started_before++;
	if (span->has_sched) {
		g->sched.cpu_ns += span->sched.cpu_ns;
		g->sched.runq_ns += span->sched.runq_ns;
		g->sched.blocked_ns += span->sched.blocked_ns;
		g->sched.steal_ns += span->sched.steal_ns;
		g->sched.vcsw += span->sched.vcsw;
		g->sched.ivcsw += span->sched.ivcsw;
		g->self_sched.cpu_ns += span->self_sched.cpu_ns;
		g->self_sched.runq_ns += span->self_sched.runq_ns;
		g->self_sched.blocked_ns += span->self_sched.blocked_ns;
		g->self_sched.steal_ns += span->self_sched.steal_ns;
		g->self_sched.vcsw += span->self_sched.vcsw;
		g->self_sched.ivcsw += span->self_sched.ivcsw;
		g->unmeasured_ns += span->unmeasured_ns;
	} else {
		g->unmeasured_ns += span->total_ns;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank of sorted v: the smallest value with at least p% at or below it. */
static uint64_t nearest_rank(const uint64_t *v, size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

uint64_t lp_percentile(uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return nearest_rank(v, n, p);
}

/*
 * The k-th smallest of v (0-based), reordering v: quickselect, O(n) on
 * average where sorting would be O(n log n) (millions of calls per group).
 */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], p, t;
		size_t lt = lo, i = lo, gt = hi;

		/* Median of three: sorted and reverse-sorted input stay linear. */
		p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		/* Three ways (durations repeat a lot): < p | == p | > p. */
		while (i <= gt) {
			if (v[i] < p) {
				t = v[lt], v[lt++] = v[i], v[i++] = t;
			} else if (v[i] > p) {
				t = v[gt], v[gt] = v[i], v[i] = t;
				if (gt-- == lo)
					break;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return p;
	}
	return v[k];
}

uint64_t lp_group_p95(struct lp_group *g)
{
	size_t rank;

	if (g->p95_fixed)
		return g->p95;
	if (g->hist)
		return lp_hist_percentile(g->hist, 95.0, g->min_ns, g->max_ns);
	if (g->ndurs == 0)
		return 0;
	rank = (size_t)ceil(95.0 / 100.0 * (double)g->ndurs);
	rank = rank < 1 ? 1 : rank > g->ndurs ? g->ndurs : rank;
	if (!g->sorted) {
		g->p95 = select_kth(g->durs, g->ndurs, rank - 1);
		g->sorted = true;
	}
	return g->p95;
}

static int cmp_group(const void *a, const void *b)
{
	const struct lp_group *x = *(struct lp_group *const *)a, *y = *(struct lp_group *const *)b;

	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	/* Not by id: a collected text's id goes to another, so the order would depend on when. */
	return x->order < y->order ? -1 : x->order > y->order;
}

size_t lp_stats_sorted(struct lp_stats *s, struct lp_group ***out)
{
	*out = s->groups;
	if (s->n == 0)
		return 0; /* groups may be NULL, which qsort() must not see */
	/* Sorting reorders groups[]: the indexes must follow. */
	qsort(s->groups, s->n, sizeof(*s->groups), cmp_group);
	for (size_t i = 0; i < s->n; i++) {
		const struct lp_group *g = s->groups[i];
		struct lp_map_ent *e = NULL;

		if (g->overflow == LP_OVERFLOW_NONE)
			e = lp_map_find(&s->index, g->name, g->meta, false);
		else if (g->overflow == LP_OVERFLOW_META)
			e = lp_map_find(&s->names, g->name, 0, false);
		if (e)
			e->v1 = (uint32_t)i + 1;
	}
	*out = s->groups;
	return s->n;
}

bool lp_group_p95_exact(const struct lp_group *g)
{
	return !g->hist;
}

size_t lp_stats_approximate(const struct lp_stats *s)
{
	return s->approximate;
}

void lp_stats_folding(const struct lp_stats *s, struct lp_fold_stats *out)
{
	*out = (struct lp_fold_stats){ .max = s->max_groups, .kept = s->kept,
				       .overflow_rows = s->overflow_rows };
	for (size_t i = 0; i < s->n; i++)
		if (s->groups[i]->overflow)
			out->folded_spans += s->groups[i]->calls;
	if (s->folded)
		out->folded_distinct = lp_hll_estimate(s->folded);
}

uint64_t lp_group_folded_distinct(const struct lp_group *g)
{
	return g->folded ? lp_hll_estimate(g->folded) : g->folded_estimate;
}

const char *lp_group_meta_text(const struct strtab *st, const struct lp_group *g, size_t *len)
{
	if (g->meta == LP_META_UNKNOWN) {
		*len = 0;
		return "";
	}
	return strtab_str(st, g->meta, len);
}

/* Chunk 0 counts 0..255 one by one; chunk c >= 1 the octave [2^(c+7), 2^(c+8)). */
static void hist_slot(uint64_t v, unsigned *chunk, unsigned *slot)
{
	unsigned e;

	if (v < LP_HIST_CHUNK) {
		*chunk = 0;
		*slot = (unsigned)v;
		return;
	}
	e = 63 - (unsigned)__builtin_clzll(v);
	*chunk = e - LP_HIST_SUB_BITS;
	*slot = (unsigned)(v >> (e - LP_HIST_SUB_BITS)) - (1u << LP_HIST_SUB_BITS);
}

/* Chunk and slot of a bucket index (lp_hist_index). */
static void index_slot(unsigned index, unsigned *chunk, unsigned *slot)
{
	if (index < LP_HIST_CHUNK) {
		*chunk = 0;
		*slot = index;
		return;
	}
	*chunk = (index - LP_HIST_CHUNK) / (1u << LP_HIST_SUB_BITS) + 1;
	*slot = (index - LP_HIST_CHUNK) % (1u << LP_HIST_SUB_BITS);
}

static int hist_add_index(struct lp_hist *h, unsigned index, uint64_t count)
{
	unsigned c, i;

	index_slot(index, &c, &i);
	if (!h->chunk[c]) {
		size_t n = c ? 1u << LP_HIST_SUB_BITS : LP_HIST_CHUNK;

		h->chunk[c] = calloc(n, sizeof(uint64_t));
		if (!h->chunk[c])
			return -ENOMEM;
	}
	h->chunk[c][i] += count;
	h->n += count;
	return 0;
}

int lp_hist_add(struct lp_hist *h, uint64_t v)
{
	unsigned c, i;

	hist_slot(v, &c, &i);
	if (!h->chunk[c]) {
		size_t n = c ? 1u << LP_HIST_SUB_BITS : LP_HIST_CHUNK;

		h->chunk[c] = calloc(n, sizeof(uint64_t));
		if (!h->chunk[c])
			return -ENOMEM;
	}
	h->chunk[c][i]++;
	h->n++;
	return 0;
}

uint64_t lp_hist_percentile(const struct lp_hist *h, double p, uint64_t lo, uint64_t hi)
{
	uint64_t rank, seen = 0, mid = 0;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->n);
	rank = rank < 1 ? 1 : rank > h->n ? h->n : rank;
	for (unsigned c = 0; c < LP_HIST_OCTAVES; c++) {
		unsigned n = c ? 1u << LP_HIST_SUB_BITS : LP_HIST_CHUNK;

		if (!h->chunk[c])
			continue;
		for (unsigned i = 0; i < n; i++) {
			unsigned shift;
			uint64_t base;

			seen += h->chunk[c][i];
			if (seen < rank)
				continue;
			if (c == 0) {
				mid = i;
			} else {
				shift = c; /* the octave 2^(c+7): buckets 2^c wide */
				base = ((uint64_t)(i + (1u << LP_HIST_SUB_BITS))) << shift;
				mid = base + (((uint64_t)1 << shift) - 1) / 2;
			}
			return mid < lo ? lo : mid > hi ? hi : mid;
		}
	}
	return hi;
}

void lp_hist_free(struct lp_hist *h)
{
	if (!h)
		return;
	for (unsigned c = 0; c < LP_HIST_OCTAVES; c++)
		free(h->chunk[c]);
	free(h);
}

unsigned lp_hist_index(uint64_t v)
{
	unsigned c, i;

	hist_slot(v, &c, &i);
	return c ? LP_HIST_CHUNK + (c - 1) * (1u << LP_HIST_SUB_BITS) + i : i;
}

uint64_t lp_hist_bucket_low(unsigned index)
{
	unsigned k, c;

	if (index < LP_HIST_CHUNK)
		return index;
	k = index - LP_HIST_CHUNK;
	c = k / (1u << LP_HIST_SUB_BITS) + 1;
	return ((uint64_t)(k % (1u << LP_HIST_SUB_BITS)) + (1u << LP_HIST_SUB_BITS)) << c;
}

int lp_shist_add(struct lp_shist *h, unsigned index, uint64_t count)
{
	uint32_t lo = 0, hi = h->n;

	if (index >= LP_HIST_INDEXES)
		return -EINVAL;
	/* Durations repeat and grow: the last bucket first. */
	if (h->n && h->b[h->n - 1].index <= index)
		lo = h->b[h->n - 1].index == index ? h->n - 1 : h->n;
	else
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (h->b[mid].index < index)
				lo = mid + 1;
			else
				hi = mid;
		}
	if (lo == h->n || h->b[lo].index != index) {
		if (h->n == h->cap) {
			/* From 2 buckets, not lp_grow's 16: most groups of a big recording are small. */
			uint32_t cap = h->cap ? h->cap * 2 : 2;
			struct lp_hist_bucket *b = realloc(h->b, cap * sizeof(*b));

			if (!b)
				return -ENOMEM;
			h->b = b;
			h->cap = cap;
		}
		memmove(&h->b[lo + 1], &h->b[lo], (h->n - lo) * sizeof(*h->b));
		h->b[lo] = (struct lp_hist_bucket){ .index = index };
		h->n++;
	}
	h->b[lo].count += count;
	h->total += count;
	return 0;
}

void lp_shist_free(struct lp_shist *h)
{
	free(h->b);
	*h = (struct lp_shist){ 0 };
}

/* Adds h's buckets to out. */
static int hist_to_sparse(const struct lp_hist *h, struct lp_shist *out)
{
	int err = 0;

	for (unsigned c = 0; !err && h && c < LP_HIST_OCTAVES; c++) {
		unsigned n = c ? 1u << LP_HIST_SUB_BITS : LP_HIST_CHUNK;
		unsigned base = c ? LP_HIST_CHUNK + (c - 1) * (1u << LP_HIST_SUB_BITS) : 0;

		for (unsigned i = 0; !err && h->chunk[c] && i < n; i++)
			if (h->chunk[c][i])
				err = lp_shist_add(out, base + i, h->chunk[c][i]);
	}
	return err;
}

int lp_group_hist(const struct lp_group *g, struct lp_shist *out)
{
	int err = 0;

	for (size_t i = 0; !err && i < g->ndurs; i++)
		err = lp_shist_add(out, lp_hist_index(g->durs[i]), 1);
	return err ? err : hist_to_sparse(g->hist, out);
}

int lp_group_self_hist(const struct lp_group *g, struct lp_shist *out)
{
	int err = 0;

	for (uint32_t i = 0; !err && i < g->self_hist.n; i++)
		err = lp_shist_add(out, g->self_hist.b[i].index, g->self_hist.b[i].count);
	return err ? err : hist_to_sparse(g->self_dense, out);
}
