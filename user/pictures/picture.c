// SPDX-License-Identifier: MIT
#include "picture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "nest.h"

/* Light enough for dark text on every one of them. */
const char *const lp_picture_palette[LP_PICTURE_PALETTE] = {
	"#8fb8de", "#ffb26b", "#f28e8c", "#86c5bf", "#93cf84",
	"#f1d36b", "#c9a3d4", "#f7b6c8", "#d2b49c", "#bdbdbd",
};

struct lp_pic_open {
	struct lp_pic_item it; /* it.count 0: none open */
	uint64_t bucket;
};

/* FNV-1a, then the map's finaliser spreads it. */
static uint64_t text_hash(const char *s, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

static int put_text(struct lp_picture *p, const char *s, size_t len, size_t *off)
{
	*off = p->texts.len;
	return lp_buf_put(&p->texts, s, len);
}

/* Appends a group; its index. */
static int add_group(struct lp_picture *p, const char *name, size_t nlen, const char *meta,
		     size_t mlen, uint32_t *idx)
{
	struct lp_pic_group *g = lp_grow(p->groups, &p->groups_cap, p->ngroups + 1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	p->groups = g;
	g = &g[p->ngroups];
	memset(g, 0, sizeof(*g));
	if (put_text(p, name, nlen, &g->name_off) || put_text(p, meta, mlen, &g->meta_off))
		return -ENOMEM;
	g->name_len = nlen;
	g->meta_len = mlen;
	*idx = (uint32_t)p->ngroups++;
	return 0;
}

static bool same_group(const struct lp_picture *p, const struct lp_pic_group *g, const char *name,
		       size_t nlen, const char *meta, size_t mlen)
{
	return g->name_len == nlen && g->meta_len == mlen &&
	       !memcmp(p->texts.p + g->name_off, name, nlen) &&
	       !memcmp(p->texts.p + g->meta_off, meta, mlen);
}

/* The group of (name, meta): found, new, or LP_PIC_GROUP_OTHER past the limit. */
static int group_of(struct lp_picture *p, const char *name, size_t nlen, const char *meta,
		    size_t mlen, uint32_t *out)
{
	uint64_t h = text_hash(meta, mlen, text_hash(name, nlen, HASH_SEED) ^ nlen);
	struct lp_map_ent *e;
	uint32_t probe = 0;
	int err;

	/* Texts that share a hash take the next b of the key. */
	while ((e = lp_map_find(&p->group_map, h, probe, false))) {
		if (same_group(p, &p->groups[e->v1], name, nlen, meta, mlen)) {
			*out = (uint32_t)e->v1;
			return 0;
		}
		probe++;
	}
	if (p->ngroups >= LP_PICTURE_GROUPS_MAX + 2) {
		*out = LP_PIC_GROUP_OTHER;
		return 0;
	}
	err = add_group(p, name, nlen, meta, mlen, out);
	if (err)
		return err;
	e = lp_map_find(&p->group_map, h, probe, true);
	if (!e)
		return -ENOMEM;
	e->v1 = *out;
	return 0;
}

static int add_node(struct lp_picture *p, uint32_t parent, uint32_t group, uint32_t *idx)
{
	struct lp_pic_node *n = lp_grow(p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->nodes = n;
	n[p->nnodes] = (struct lp_pic_node){ .parent = parent, .group = group };
	*idx = (uint32_t)p->nnodes++;
	return 0;
}

int lp_picture_init(struct lp_picture *p, uint64_t extent_ns)
{
	uint32_t idx;
	double buckets = LP_PICTURE_PX;
	int err;

	memset(p, 0, sizeof(*p));
	p->extent_ns = extent_ns ? extent_ns : 1;
	p->first_ns = UINT64_MAX;
	for (int l = 0; l < LP_PICTURE_LEVELS; l++) {
		p->levels[l].px = (double)p->extent_ns / buckets;
		buckets *= LP_PICTURE_ZOOM;
	}
	/* Two groups of our own first: LP_PIC_GROUP_OTHER and LP_PIC_GROUP_MORE. */
	err = add_group(p, "(other names)", 13, "", 0, &idx);
	if (!err)
		err = add_group(p, "(more call paths)", 17, "", 0, &idx);
	if (!err)
		err = add_node(p, LP_PIC_NO_PARENT, LP_PIC_MIXED, &idx);
	if (err)
		lp_picture_free(p);
	return err;
}

static void free_thread_state(struct lp_pic_thread *t)
{
	free(t->stack);
	free(t->rows);
	t->stack = NULL;
	t->rows = NULL;
	t->nstack = t->stack_cap = t->rows_cap = 0;
}

void lp_picture_free(struct lp_picture *p)
{
	for (int l = 0; l < LP_PICTURE_LEVELS; l++)
		free(p->levels[l].items);
	for (size_t i = 0; i < p->nthreads; i++)
		free_thread_state(&p->threads[i]);
	free(p->threads);
	free(p->groups);
	free(p->nodes);
	lp_buf_free(&p->texts);
	lp_map_free(&p->group_map);
	lp_map_free(&p->thread_map);
	lp_map_free(&p->node_map);
	memset(p, 0, sizeof(*p));
}

static int thread_of(struct lp_picture *p, uint32_t pid, uint32_t tid, uint32_t *idx)
{
	struct lp_map_ent *e = lp_map_find(&p->thread_map, (uint64_t)pid << 32 | tid, 0, true);
	struct lp_pic_thread *t;

	if (!e)
		return -ENOMEM;
	if (e->v1) {
		*idx = (uint32_t)(e->v1 - 1);
		return 0;
	}
	t = lp_grow(p->threads, &p->threads_cap, p->nthreads + 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	p->threads = t;
	t = &t[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	*idx = (uint32_t)p->nthreads++;
	e->v1 = p->nthreads;
	return 0;
}

int lp_picture_thread_name(struct lp_picture *p, bool process, uint32_t pid, uint32_t tid,
			   const char *name, size_t len)
{
	uint32_t idx;
	int err;

	/* A process's name stands for its main thread's only when that has none. */
	if (process)
		tid = pid;
	err = thread_of(p, pid, tid, &idx);
	if (err)
		return err;
	if (process && p->threads[idx].name_len)
		return 0;
	p->threads[idx].name_len = len;
	return put_text(p, name, len, &p->threads[idx].name_off);
}

/* ---- the timeline's levels ---- */

/* Drops the finest level still kept (never the widest). */
static bool drop_finest(struct lp_picture *p)
{
	for (int l = LP_PICTURE_LEVELS - 1; l > 0; l--) {
		struct lp_pic_level *L = &p->levels[l];

		if (L->dropped)
			continue;
		p->items -= L->n;
		free(L->items);
		L->items = NULL;
		L->n = L->cap = 0;
		L->dropped = true;
		return true;
	}
	return false;
}

/* Keeps an item of level l, within LP_HTML_BLOCKS_MAX over all levels. */
static int emit(struct lp_picture *p, int l, const struct lp_pic_item *it)
{
	struct lp_pic_level *L = &p->levels[l];
	struct lp_pic_item *items;

	if (L->dropped)
		return 0;
	if (l == 0 && L->n >= LP_HTML_BLOCKS_MAX) {
		p->dropped_spans += it->count;
		return 0;
	}
	items = lp_grow(L->items, &L->cap, L->n + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	L->items = items;
	items[L->n++] = *it;
	if (it->count > 1)
		L->merged = true;
	p->items++;
	/* Every finer level holds at least as many items: the finest goes first. */
	while (p->items > LP_HTML_BLOCKS_MAX && drop_finest(p))
		;
	return 0;
}

void lp_pic_item_merge(struct lp_pic_item *b, const struct lp_pic_item *s)
{
	if (s->start < b->start)
		b->start = s->start;
	if (s->end > b->end)
		b->end = s->end;
	b->busy += s->busy;
	b->counter += s->counter;
	b->count += s->count;
	b->flags |= s->flags;
	if (b->group != s->group)
		b->group = LP_PIC_MIXED;
}

/* The span into level l of its thread's row at its depth. */
static int place(struct lp_picture *p, int l, struct lp_pic_open *o, const struct lp_pic_item *s)
{
	const struct lp_pic_level *L = &p->levels[l];
	uint64_t bucket;
	int err;

	if ((double)s->busy >= L->px)
		return emit(p, l, s);
	bucket = (uint64_t)((double)s->start / L->px);
	if (o->it.count && o->bucket == bucket) {
		lp_pic_item_merge(&o->it, s);
		return 0;
	}
	if (o->it.count) {
		err = emit(p, l, &o->it);
		if (err)
			return err;
	}
	o->it = *s;
	o->bucket = bucket;
	return 0;
}

static struct lp_pic_open *row(struct lp_pic_thread *t, uint32_t depth)
{
	if (depth >= t->rows_cap) {
		size_t old = t->rows_cap;
		size_t cap = old;
		struct lp_pic_open *r = lp_grow(t->rows, &cap, depth + 1,
						sizeof(*r) * LP_PICTURE_LEVELS);

		if (!r)
			return NULL;
		memset(r + old * LP_PICTURE_LEVELS, 0,
		       (cap - old) * LP_PICTURE_LEVELS * sizeof(*r));
		t->rows = r;
		t->rows_cap = cap;
	}
	return &t->rows[depth * LP_PICTURE_LEVELS];
}

static int timeline(struct lp_picture *p, uint32_t thread, const struct lp_pic_item *s)
{
	struct lp_pic_open *r = row(&p->threads[thread], s->depth);

	if (!r)
		return -ENOMEM;
	for (int l = 0; l < LP_PICTURE_LEVELS; l++) {
		int err = p->levels[l].dropped ? 0 : place(p, l, &r[l], s);

		if (err)
			return err;
	}
	return 0;
}

/* ---- the call tree ---- */

/* The node of group g under parent: the span's time and call are added to it. */
static int tree_node(struct lp_picture *p, uint32_t parent, uint32_t g, uint64_t dur,
		     uint32_t *out)
{
	struct lp_map_ent *e;
	uint32_t idx;
	int err;

	if (parent && p->nodes[parent].group == LP_PIC_GROUP_MORE) {
		/* Inside a span already counted there: its time is in that node. */
		p->more_paths++;
		*out = parent;
		return 0;
	}
	e = lp_map_find(&p->node_map, parent, g, false);
	if (!e && p->nnodes >= LP_PICTURE_PATHS_MAX) {
		/* One node per parent for every path past the limit: at most twice as many nodes. */
		g = LP_PIC_GROUP_MORE;
		e = lp_map_find(&p->node_map, parent, g, false);
	}
	if (!e) {
		err = add_node(p, parent, g, &idx);
		if (err)
			return err;
		e = lp_map_find(&p->node_map, parent, g, true);
		if (!e)
			return -ENOMEM;
		e->v1 = idx;
	}
	idx = (uint32_t)e->v1;
	if (g == LP_PIC_GROUP_MORE)
		p->more_paths++;
	p->nodes[idx].calls++;
	p->nodes[idx].total_ns += dur;
	*out = idx;
	return 0;
}

static int push(struct lp_pic_thread *t, uint64_t start, uint64_t end, uint32_t node)
{
	struct lp_pic_frame *f = lp_grow(t->stack, &t->stack_cap, t->nstack + 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	t->stack = f;
	f[t->nstack++] = (struct lp_pic_frame){ start, end, node };
	return 0;
}

/*
 * Read from the end, a thread's spans come parent first: the spans on the
 * stack that do not enclose this one are done with, and the rest are its
 * ancestors.
 */
int lp_picture_span(struct lp_picture *p, const struct lp_tr_span *s)
{
	uint64_t end = s->start_ns + s->dur_ns < s->start_ns ? UINT64_MAX : s->start_ns + s->dur_ns;
	struct lp_pic_item it = { .start = s->start_ns, .end = end, .busy = s->dur_ns,
				  .counter = s->has_counter ? s->counter : 0, .count = 1,
				  .flags = (uint8_t)s->flags };
	struct lp_pic_thread *t;
	uint32_t node = 0;
	int err = thread_of(p, s->pid, s->tid, &it.thread);

	if (err)
		return err;
	t = &p->threads[it.thread];
	if (t->spans && end > t->prev_end)
		p->out_of_order++;
	t->prev_end = end;
	while (t->nstack && !(t->stack[t->nstack - 1].start <= it.start &&
			      end <= t->stack[t->nstack - 1].end))
		t->nstack--;
	if (t->nstack >= LP_NEST_MAX_DEPTH) {
		p->too_deep++;
		return 0;
	}
	it.depth = (uint16_t)t->nstack;
	err = group_of(p, s->name, s->name_len, s->meta, s->meta_len, &it.group);
	if (err)
		return err;
	if (it.group == LP_PIC_GROUP_OTHER)
		p->other_spans++;
	p->groups[it.group].spans++;
	p->groups[it.group].has_counter |= s->has_counter;
	if (!p->tree_from_summary) {
		err = tree_node(p, t->nstack ? t->stack[t->nstack - 1].node : 0, it.group, s->dur_ns,
				&node);
		if (err)
			return err;
	}
	err = push(t, it.start, end, node);
	if (err)
		return err;
	t->spans++;
	if (it.depth > t->max_depth)
		t->max_depth = it.depth;
	p->spans++;
	if (it.start < p->first_ns)
		p->first_ns = it.start;
	if (end > p->last_ns)
		p->last_ns = end;
	return timeline(p, it.thread, &it);
}

int lp_picture_path(struct lp_picture *p, int64_t parent, const char *name, size_t len,
		    uint64_t calls, uint64_t total_ns, uint64_t self_ns)
{
	uint32_t g, idx;
	int err;

	if (!p->tree_from_summary) {
		/* The summary's tree replaces the one the trace would build. */
		p->nnodes = 1;
		lp_map_free(&p->node_map);
		p->tree_from_summary = true;
	}
	if (parent < -1 || parent + 1 >= (int64_t)p->nnodes)
		return -EINVAL; /* pre-order: a parent comes before its children */
	err = group_of(p, name, len, "", 0, &g);
	if (!err)
		err = add_node(p, (uint32_t)(parent + 1), g, &idx);
	if (err)
		return err;
	p->nodes[idx].calls = calls;
	p->nodes[idx].total_ns = total_ns;
	p->nodes[idx].self_ns = self_ns;
	if (parent == -1)
		p->nodes[0].total_ns += total_ns;
	return 0;
}

/* ---- the end ---- */

static int flush_opens(struct lp_picture *p)
{
	for (size_t i = 0; i < p->nthreads; i++) {
		struct lp_pic_thread *t = &p->threads[i];

		for (size_t k = 0; k < t->rows_cap * LP_PICTURE_LEVELS; k++) {
			int l = (int)(k % LP_PICTURE_LEVELS);
			int err = t->rows[k].it.count ? emit(p, l, &t->rows[k].it) : 0;

			if (err)
				return err;
		}
		free_thread_state(t);
	}
	return 0;
}

static int item_cmp(const void *a, const void *b)
{
	const struct lp_pic_item *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Self times of a tree built from the trace: total less the children's totals. */
static void self_times(struct lp_picture *p)
{
	uint64_t top = 0;

	for (size_t i = 1; i < p->nnodes; i++)
		p->nodes[i].self_ns = p->nodes[i].total_ns;
	for (size_t i = 1; i < p->nnodes; i++) {
		struct lp_pic_node *n = &p->nodes[i];

		struct lp_pic_node *up = &p->nodes[n->parent];

		if (n->parent == 0) {
			top += n->total_ns;
			continue;
		}
		up->self_ns = up->self_ns > n->total_ns ? up->self_ns - n->total_ns : 0;
	}
	p->nodes[0].total_ns = top;
	p->nodes[0].self_ns = 0;
}

int lp_picture_finish(struct lp_picture *p)
{
	int err = flush_opens(p);

	if (err)
		return err;
	/* Kept: the levels before the first dropped one, up to the first that merged nothing. */
	p->nlevels = 1;
	while (p->nlevels < LP_PICTURE_LEVELS && !p->levels[p->nlevels].dropped &&
	       p->levels[p->nlevels - 1].merged)
		p->nlevels++;
	for (int l = 0; l < LP_PICTURE_LEVELS; l++) {
		struct lp_pic_level *L = &p->levels[l];

		if (l >= p->nlevels) {
			if (!L->dropped)
				p->items -= L->n;
			free(L->items);
			L->items = NULL;
			L->n = L->cap = 0;
			L->dropped = true;
			continue;
		}
		qsort(L->items, L->n, sizeof(*L->items), item_cmp);
	}
	if (p->first_ns > p->last_ns)
		p->first_ns = p->last_ns = 0;
	if (!p->tree_from_summary)
		self_times(p);
	return 0;
}

int lp_picture_level_for(const struct lp_picture *p, double px_ns)
{
	for (int l = 0; l < p->nlevels; l++)
		if (p->levels[l].px <= px_ns)
			return l;
	return p->nlevels > 0 ? p->nlevels - 1 : 0;
}

/* ---- the flame graph's nodes ---- */

static const struct lp_picture *sort_p;

/* Widest first; a parent (an earlier index) before its children when as wide. */
static int by_total(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = sort_p->nodes[x].total_ns, ty = sort_p->nodes[y].total_ns;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Under one parent, by total; parents in any order. */
static int by_parent(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t px = sort_p->nodes[x].parent, py = sort_p->nodes[y].parent;

	if (px != py)
		return px < py ? -1 : 1;
	return by_total(a, b);
}

/*
 * Pre-order of the chosen nodes (sorted by parent) from the root: an explicit
 * stack, no recursion. How many were reached (a node whose parent was not
 * chosen is not), or -ENOMEM.
 */
static ssize_t pre_order(const struct lp_picture *p, const uint32_t *sel, size_t n, uint32_t *out)
{
	size_t *first = malloc(p->nnodes * sizeof(*first)), *count = calloc(p->nnodes, sizeof(*count));
	uint32_t *stack = malloc((n + 1) * sizeof(*stack));
	size_t sp = 0, k = 0;

	if (!first || !count || !stack) {
		free(first);
		free(count);
		free(stack);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t par = p->nodes[sel[i]].parent;

		if (par == LP_PIC_NO_PARENT)
			continue;
		if (!count[par]++)
			first[par] = i;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t v = stack[--sp];

		out[k++] = v;
		/* Pushed in reverse, popped widest first. */
		for (size_t c = count[v]; c > 0; c--)
			stack[sp++] = sel[first[v] + c - 1];
	}
	free(first);
	free(count);
	free(stack);
	return (ssize_t)k;
}

int lp_picture_flame(const struct lp_picture *p, size_t max, uint32_t **out, size_t *n)
{
	uint32_t *idx = malloc(p->nnodes * sizeof(*idx)), *res;
	size_t keep = p->nnodes < max ? p->nnodes : max;
	ssize_t got;

	*out = NULL;
	*n = 0;
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < p->nnodes; i++)
		idx[i] = (uint32_t)i;
	sort_p = p;
	/* The widest nodes are closed under ancestry: a child is never wider than its parent. */
	qsort(idx, p->nnodes, sizeof(*idx), by_total);
	qsort(idx, keep, sizeof(*idx), by_parent);
	res = malloc((keep ? keep : 1) * sizeof(*res));
	if (!res) {
		free(idx);
		return -ENOMEM;
	}
	got = keep ? pre_order(p, idx, keep, res) : 0;
	free(idx);
	if (got < 0) {
		free(res);
		return -ENOMEM;
	}
	*out = res;
	*n = (size_t)got;
	return 0;
}

/* ---- labels ---- */

int lp_picture_label(const char *name, size_t nlen, const char *meta, size_t mlen,
		     struct lp_buf *out)
{
	int err = lp_buf_put(out, name, nlen);

	if (!err && mlen) {
		err = lp_buf_put(out, " [", 2);
		if (!err)
			err = lp_buf_put(out, meta, mlen);
		if (!err)
			err = lp_buf_put(out, "]", 1);
	}
	return err;
}

int lp_picture_group_label(const struct lp_picture *p, uint32_t g, struct lp_buf *out)
{
	const struct lp_pic_group *gr = &p->groups[g];
	const char *meta = lp_picture_text(p, gr->meta_off), *k, *v;
	size_t pos = 0, kl, vl;
	struct lp_buf text = { 0 };
	int err = 0;

	while (!err && lp_tr_meta_next(meta, gr->meta_len, &pos, &k, &kl, &v, &vl)) {
		if (text.len)
			err = lp_buf_put(&text, ", ", 2);
		if (!err)
			err = lp_buf_put(&text, k, kl);
		if (!err && vl)
			err = lp_buf_put(&text, "=", 1);
		if (!err)
			err = lp_buf_put(&text, v, vl);
	}
	if (!err)
		err = lp_picture_label(lp_picture_text(p, gr->name_off), gr->name_len, text.p,
				       text.len, out);
	lp_buf_free(&text);
	return err;
}

/* ---- colours ---- */

int lp_colors_add(struct lp_colors *c, const char *name, size_t len)
{
	struct lp_map_ent *e = lp_map_find(&c->map, text_hash(name, len, HASH_SEED), 0, true);

	if (!e)
		return -ENOMEM;
	if (!e->v1)
		e->v1 = c->next++ % LP_PICTURE_PALETTE + 1;
	return 0;
}

int lp_colors_get(struct lp_colors *c, const char *name, size_t len)
{
	uint64_t h = text_hash(name, len, HASH_SEED);
	struct lp_map_ent *e = lp_map_find(&c->map, h, 0, false);

	return e ? (int)e->v1 - 1 : (int)(lp_hash64(h) % LP_PICTURE_PALETTE);
}

void lp_colors_free(struct lp_colors *c)
{
	lp_map_free(&c->map);
}

void lp_picture_colors(struct lp_picture *p, struct lp_colors *c)
{
	for (size_t i = 0; i < p->ngroups; i++)
		p->groups[i].color = lp_colors_get(c, lp_picture_text(p, p->groups[i].name_off),
						   p->groups[i].name_len);
}
