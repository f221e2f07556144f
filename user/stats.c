// SPDX-License-Identifier: MIT
#include "stats.h"
#include "map.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct lp_stats {
	struct lp_group **groups;
	size_t n, cap;
	struct lp_map index; /* (name, meta) -> v1: group index + 1 */
};

struct lp_stats *lp_stats_new(void)
{
	return calloc(1, sizeof(struct lp_stats));
}

void lp_stats_free(struct lp_stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->groups[i]->durs);
		free(s->groups[i]);
	}
	free(s->groups);
	lp_map_free(&s->index);
	free(s);
}

static struct lp_group *get_group(struct lp_stats *s, uint32_t name, uint32_t meta)
{
	struct lp_map_ent *e = lp_map_find(&s->index, name, meta, true);
	struct lp_group **groups, *g;

	if (!e)
		return NULL;
	if (e->v1)
		return s->groups[e->v1 - 1];
	groups = lp_grow(s->groups, &s->cap, s->n + 1, sizeof(*groups));
	if (!groups)
		return NULL;
	s->groups = groups;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->name = name;
	g->meta = meta;
	g->min_ns = UINT64_MAX;
	s->groups[s->n] = g;
	e->v1 = (uint32_t)++s->n;
	return g;
}

int lp_stats_add(struct lp_stats *s, const struct lp_span *span)
{
	struct lp_group *g = get_group(s, span->name, span->meta);
	uint64_t *durs;

	if (!g)
		return -ENOMEM;
	durs = lp_grow(g->durs, &g->cap, g->ndurs + 1, sizeof(*durs));
	if (!durs)
		return -ENOMEM;
	g->durs = durs;
	g->durs[g->ndurs++] = span->total_ns;
	g->sorted = false;
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

uint64_t lp_group_p95(struct lp_group *g)
{
	if (g->ndurs == 0)
		return 0;
	if (!g->sorted) {
		qsort(g->durs, g->ndurs, sizeof(*g->durs), cmp_u64);
		g->sorted = true;
	}
	return nearest_rank(g->durs, g->ndurs, 95.0);
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
	return x->name < y->name ? -1 : x->name > y->name;
}

size_t lp_stats_sorted(struct lp_stats *s, struct lp_group ***out)
{
	*out = s->groups;
	if (s->n == 0)
		return 0; /* groups may be NULL, which qsort() must not see */
	/* Sorting reorders groups[]: the index must follow. */
	qsort(s->groups, s->n, sizeof(*s->groups), cmp_group);
	for (size_t i = 0; i < s->n; i++) {
		struct lp_map_ent *e = lp_map_find(&s->index, s->groups[i]->name,
						   s->groups[i]->meta, false);

		if (e)
			e->v1 = (uint32_t)i + 1;
	}
	*out = s->groups;
	return s->n;
}
