// SPDX-License-Identifier: MIT
/*
 * Call paths (user/core/paths.c) from span streams: the nesting builder's own
 * output for random trees on threads whose events interleave, against a
 * reference that knows every span's path from the events it sent; the cap on
 * distinct paths; the summary's "paths" object.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nest.h"
#include "paths.h"
#include "strtab.h"
#include "fixtures.h"

#define THREADS 8
#define NAMES 5
#define MAX_OPEN 7

/* The reference: every path ("a;b;c") with its calls, total and self. */
struct ref_path {
	char path[256];
	uint64_t calls, total, self;
};

struct fx {
	struct strtab *st;
	struct lp_paths *p;
	struct lp_nest *nest;
	/* per test thread: the names it has open, as the test sent them */
	uint32_t stack[THREADS][LP_NEST_MAX_DEPTH + 1];
	size_t depth[THREADS];
	struct ref_path *ref;
	size_t nref, ref_cap;
	uint64_t spans, self_sum;
};

/* The summary's "paths" object as lp_paths_write() writes it, parsed back. */
static json_object *paths_json(struct fx *fx)
{
	struct lp_buf mem = { 0 };
	struct jw w;
	json_object *o;

	jw_init_buf(&w, &mem);
	if (lp_paths_write(fx->p, fx->st, &w) || jw_error(&w) || lp_buf_put(&mem, "", 1)) {
		lp_buf_free(&mem);
		return NULL;
	}
	o = json_tokener_parse(mem.p);
	lp_buf_free(&mem);
	return o;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state % n;
}

static void path_of(struct fx *fx, int t, size_t depth, char *out, size_t sz)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t d = 0; d <= depth; d++) {
		size_t len;
		const char *s = strtab_str(fx->st, fx->stack[t][d], &len);

		n += (size_t)snprintf(out + n, sz - n, "%s%.*s", d ? ";" : "", (int)len, s);
		assert_true(n < sz);
	}
}

static struct ref_path *ref_find(struct fx *fx, const char *path)
{
	for (size_t i = 0; i < fx->nref; i++)
		if (!strcmp(fx->ref[i].path, path))
			return &fx->ref[i];
	if (fx->nref == fx->ref_cap) {
		fx->ref_cap = fx->ref_cap ? fx->ref_cap * 2 : 64;
		fx->ref = realloc(fx->ref, fx->ref_cap * sizeof(*fx->ref));
		assert_non_null(fx->ref);
	}
	memset(&fx->ref[fx->nref], 0, sizeof(*fx->ref));
	snprintf(fx->ref[fx->nref].path, sizeof(fx->ref->path), "%s", path);
	return &fx->ref[fx->nref++];
}

/* The nesting builder's sink: the span goes to paths.c, and to the reference by its path. */
static void on_span(void *ctx, const struct lp_span *s)
{
	struct fx *fx = ctx;
	int t = (int)s->tid - 100;
	char path[256];
	struct ref_path *r;

	assert_true(t >= 0 && t < THREADS);
	assert_int_equal(lp_paths_add(fx->p, s), 0);
	/* The test's stack still holds the span: its exit is being handled. */
	path_of(fx, t, s->depth, path, sizeof(path));
	r = ref_find(fx, path);
	r->calls++;
	r->total += s->total_ns;
	r->self += s->self_ns;
	fx->spans++;
	fx->self_sum += s->self_ns;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct lp_nest_sink sink = { .span = on_span };

	if (!fx)
		return -1;
	sink.ctx = fx;
	fx->st = strtab_new();
	fx->p = lp_paths_new();
	fx->nest = lp_nest_new(&sink);
	if (!fx->st || !fx->p || !fx->nest)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	lp_nest_free(fx->nest);
	lp_paths_free(fx->p);
	strtab_free(fx->st);
	free(fx->ref);
	free(fx);
	return 0;
}

static void event(struct fx *fx, int t, enum lp_event_type type, uint32_t name, uint64_t ts)
{
	struct lp_event ev = {
		.type = type, .pid = 7, .tid = 100 + (uint32_t)t, .ts_ns = ts, .name = name,
	};

	if (type == LP_EVENT_ENTER)
		fx->stack[t][fx->depth[t]++] = name;
	assert_int_equal(lp_nest_event(fx->nest, &ev), 0);
	if (type == LP_EVENT_EXIT)
		fx->depth[t]--;
}

/* "a;b;c" of node i of the finished tree. */
static void node_path(struct fx *fx, const struct lp_path_node *nodes, long i, char *out,
		      size_t sz)
{
	long chain[LP_NEST_MAX_DEPTH + 1];
	size_t depth = 0, n = 0;

	for (long k = i; k >= 0; k = nodes[k].parent)
		chain[depth++] = k;
	while (depth--) {
		const struct lp_path_node *nd = &nodes[chain[depth]];
		size_t len;
		const char *s = nd->folded ? LP_PATHS_OTHER_NAME : strtab_str(fx->st, nd->name, &len);

		if (nd->folded)
			len = strlen(s);
		assert_true(n + len + 2 < sz);
		if (n)
			out[n++] = ';';
		memcpy(out + n, s, len);
		n += len;
	}
	out[n] = '\0';
}

/* The tree equals the reference, path by path; the usual invariants hold. */
static void check_against_ref(struct fx *fx)
{
	struct lp_path_node *nodes;
	long n = lp_paths_nodes(fx->p, fx->st, &nodes);
	uint64_t calls = 0, self = 0;

	assert_true(n >= 0);
	assert_int_equal((size_t)n, fx->nref);
	assert_int_equal(lp_paths_kept(fx->p), fx->nref);
	assert_int_equal(lp_paths_folded_spans(fx->p), 0);
	for (long i = 0; i < n; i++) {
		char path[256];
		struct ref_path *r;
		size_t before = fx->nref;

		/* Pre-order, children by total time, largest first. */
		assert_true(nodes[i].parent < i);
		if (i > 0 && nodes[i].parent == nodes[i - 1].parent)
			assert_true(nodes[i].total_ns <= nodes[i - 1].total_ns);
		node_path(fx, nodes, i, path, sizeof(path));
		r = ref_find(fx, path);
		assert_int_equal(fx->nref, before); /* a path the reference knows */
		assert_int_equal(nodes[i].calls, r->calls);
		assert_int_equal(nodes[i].total_ns, r->total);
		assert_int_equal(nodes[i].self_ns, r->self);
		calls += nodes[i].calls;
		self += nodes[i].self_ns;
	}
	assert_int_equal(calls, fx->spans);
	assert_int_equal(self, fx->self_sum);
	free(nodes);
}

/* Random trees on THREADS threads whose events interleave at random. */
static void test_interleaved_threads(void **state)
{
	struct fx *fx = *state;
	uint32_t names[NAMES];
	uint64_t ts = 1000;

	for (int i = 0; i < NAMES; i++) {
		char b[16];

		snprintf(b, sizeof(b), "n%d", i);
		names[i] = ut_id(fx->st, b);
	}
	for (int step = 0; step < 20000; step++) {
		int t = (int)rnd(THREADS);

		ts += 1 + rnd(50);
		if (fx->depth[t] && (fx->depth[t] == MAX_OPEN || rnd(2)))
			event(fx, t, LP_EVENT_EXIT, fx->stack[t][fx->depth[t] - 1], ts);
		else
			event(fx, t, LP_EVENT_ENTER, names[rnd(NAMES)], ts);
	}
	for (int t = 0; t < THREADS; t++)
		while (fx->depth[t])
			event(fx, t, LP_EVENT_EXIT, fx->stack[t][fx->depth[t] - 1], ts += 10);
	check_against_ref(fx);
	/* Self time over the tree is the recorded thread time. */
	assert_int_equal(fx->self_sum, lp_nest_totals(fx->nest)->recorded_ns);
	assert_true(fx->nref > 100);
}

/*
 * Spans closed without their exit (by an outer exit, at the end) and spans
 * rebuilt from an exit that had no enter count like the others.
 */
static void test_unterminated_and_started_before(void **state)
{
	struct fx *fx = *state;
	uint32_t a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b"), c = ut_id(fx->st, "c");
	uint32_t before = ut_id(fx->st, "before");
	uint64_t self = 0;
	struct lp_event ev = { .type = LP_EVENT_EXIT, .pid = 7, .tid = 101, .ts_ns = 500,
			       .name = before };
	struct lp_path_node *nodes;
	long n;

	assert_int_equal(lp_nest_process_begin(fx->nest, 7, 100, true), 0);
	/* Thread 1 was inside "before" when recording began: a; b; exit of before. */
	event(fx, 1, LP_EVENT_ENTER, a, 200);
	event(fx, 1, LP_EVENT_EXIT, a, 300);
	fx->stack[1][0] = before; /* the rebuilt span is at depth 0: its path is "before" */
	fx->depth[1] = 1;
	assert_int_equal(lp_nest_event(fx->nest, &ev), 0);
	fx->depth[1] = 0;
	/* Thread 0: a > b > c, then a's exit closes b and c unterminated; then a > b left open. */
	event(fx, 0, LP_EVENT_ENTER, a, 1000);
	event(fx, 0, LP_EVENT_ENTER, b, 1100);
	event(fx, 0, LP_EVENT_ENTER, c, 1200);
	/* nest closes c and b at a's exit: the reference sees them with a's stack. */
	{
		struct lp_event x = { .type = LP_EVENT_EXIT, .pid = 7, .tid = 100, .ts_ns = 1500,
				      .name = a };

		assert_int_equal(lp_nest_event(fx->nest, &x), 0);
		fx->depth[0] = 0;
	}
	event(fx, 0, LP_EVENT_ENTER, a, 2000);
	event(fx, 0, LP_EVENT_ENTER, b, 2100);
	lp_nest_finish(fx->nest, 3000);
	fx->depth[0] = 0;
	check_against_ref(fx);
	n = lp_paths_nodes(fx->p, fx->st, &nodes);
	for (long i = 0; i < n; i++)
		self += nodes[i].self_ns;
	free(nodes);
	assert_int_equal(self, lp_nest_totals(fx->nest)->recorded_ns);
	assert_true(lp_nest_totals(fx->nest)->unterminated >= 4);
	assert_int_equal(lp_nest_totals(fx->nest)->started_before, 1);
}

static struct lp_span span(uint32_t tid, uint32_t name, uint32_t depth, uint64_t total,
			   uint64_t self)
{
	return (struct lp_span){ .pid = 1, .tid = tid, .name = name, .depth = depth,
				 .total_ns = total, .self_ns = self };
}

struct count {
	uint64_t calls, self, total_roots, folded_calls;
	long nodes, folded_nodes;
};

static struct count count_tree(struct fx *fx)
{
	struct lp_path_node *nodes;
	long n = lp_paths_nodes(fx->p, fx->st, &nodes);
	struct count c = { .nodes = n };

	assert_true(n >= 0);
	for (long i = 0; i < n; i++) {
		c.calls += nodes[i].calls;
		c.self += nodes[i].self_ns;
		c.folded_nodes += nodes[i].folded;
		if (nodes[i].folded)
			c.folded_calls += nodes[i].calls;
		if (nodes[i].parent < 0)
			c.total_roots += nodes[i].total_ns;
	}
	free(nodes);
	return c;
}

/*
 * Past LP_PATHS_MAX distinct paths, the new ones fold into "(other paths)"
 * under their parent: no call and no time is lost, the tree stays bounded.
 * The children wait in the open root's aggregate (capped too) before the root
 * completes and they join the tree.
 */
static void test_cap(void **state)
{
	struct fx *fx = *state;
	const uint32_t n = LP_PATHS_MAX + 500;
	uint32_t root = ut_id(fx->st, "root");
	struct lp_span s;
	struct count c;
	uint64_t spans = 0;

	for (uint32_t round = 0; round < 3; round++) {
		/* One open root, with n children of distinct names (half of them new). */
		for (uint32_t i = 0; i < n; i++) {
			char b[16];

			snprintf(b, sizeof(b), "c%u", i + round * (n / 2));
			s = span(1, ut_id(fx->st, b), 1, 10, 10);
			assert_int_equal(lp_paths_add(fx->p, &s), 0);
			spans++;
		}
		s = span(1, root, 0, 10ULL * n + 5, 5);
		assert_int_equal(lp_paths_add(fx->p, &s), 0);
		spans++;
		c = count_tree(fx);
		assert_int_equal(lp_paths_kept(fx->p), LP_PATHS_MAX);
		assert_int_equal(c.folded_nodes, 1);
		assert_int_equal(c.nodes, LP_PATHS_MAX + 1);
		assert_int_equal(c.calls, spans);
		assert_int_equal(c.self, (round + 1) * (10ULL * n + 5));
		assert_int_equal(c.self, c.total_roots);
		assert_int_equal(lp_paths_folded_spans(fx->p), c.folded_calls);
		/* The root and LP_PATHS_MAX - 1 children fit. */
		if (round == 0)
			assert_int_equal(lp_paths_folded_spans(fx->p), n + 1 - LP_PATHS_MAX);
	}
}

/*
 * A reference for the differential test below: the rules of paths.c (each
 * thread's aggregate per open depth, merged into the tree when a top-level
 * span completes, the cap counted per class in the order nodes are placed)
 * written as plainly as possible: children in arrays searched one by one, no
 * index, no node reused. Its tree must equal paths.c's node for node, folded
 * ones included, whatever the stream.
 */
enum { R_HOLDER, R_TREE, R_OPEN, R_FREE };

struct rnode {
	uint32_t name;
	bool other; /* an "(other paths)" node */
	int kind;
	uint32_t *kids; /* the newest last: paths.c links a new child first */
	size_t nkids, cap;
	uint64_t calls, total, self;
};

struct rthread {
	uint32_t pid, tid;
	uint32_t level[LP_NEST_MAX_DEPTH + 2]; /* UINT32_MAX: none */
};

struct ref {
	struct rnode *n;
	size_t len, cap;
	uint64_t kept[R_FREE];
	uint64_t folds[R_FREE]; /* spans folded, by the class they were folded in */
	struct rthread th[64];
	size_t nth;
};

static uint32_t rnew(struct ref *r, int kind, uint32_t name, bool other)
{
	if (r->len == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->n = realloc(r->n, r->cap * sizeof(*r->n));
		assert_non_null(r->n);
	}
	r->n[r->len] = (struct rnode){ .name = name, .other = other, .kind = kind };
	if ((kind == R_TREE || kind == R_OPEN) && !other)
		r->kept[kind]++;
	return (uint32_t)r->len++;
}

static void rfree(struct ref *r, uint32_t x)
{
	if ((r->n[x].kind == R_TREE || r->n[x].kind == R_OPEN) && !r->n[x].other)
		r->kept[r->n[x].kind]--;
	r->n[x].kind = R_FREE;
	free(r->n[x].kids);
	r->n[x].kids = NULL;
	r->n[x].nkids = 0;
}

static void rlink(struct ref *r, uint32_t owner, uint32_t x)
{
	struct rnode *o = &r->n[owner];

	if (o->nkids == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 4;
		o->kids = realloc(o->kids, o->cap * sizeof(*o->kids));
		assert_non_null(o->kids);
	}
	o->kids[o->nkids++] = x;
}

static uint32_t rchild(const struct ref *r, uint32_t owner, uint32_t name, bool other)
{
	for (size_t i = 0; i < r->n[owner].nkids; i++) {
		const struct rnode *c = &r->n[r->n[owner].kids[i]];

		if (c->other == other && (other || c->name == name))
			return r->n[owner].kids[i];
	}
	return UINT32_MAX;
}

/* x's children, in the order paths.c walks its list (newest first); caller frees. */
static uint32_t *rtake(struct ref *r, uint32_t x, size_t *n)
{
	uint32_t *kids = r->n[x].kids;

	*n = r->n[x].nkids;
	for (size_t i = 0; i < *n / 2; i++) {
		uint32_t t = kids[i];

		kids[i] = kids[*n - 1 - i];
		kids[*n - 1 - i] = t;
	}
	r->n[x].kids = NULL;
	r->n[x].nkids = r->n[x].cap = 0;
	return kids;
}

static void rabsorb(struct ref *r, uint32_t f, uint32_t x)
{
	size_t n;
	uint32_t *kids = rtake(r, x, &n);

	r->n[f].calls += r->n[x].calls;
	r->n[f].self += r->n[x].self;
	for (size_t i = 0; i < n; i++)
		rabsorb(r, f, kids[i]);
	free(kids);
	rfree(r, x);
}

static void rplace(struct ref *r, uint32_t owner, uint32_t x, int cls)
{
	uint32_t y = rchild(r, owner, r->n[x].name, r->n[x].other), *kids;
	int was = r->n[x].kind;
	size_t n;

	if (y != UINT32_MAX) {
		r->n[y].calls += r->n[x].calls;
		r->n[y].total += r->n[x].total;
		r->n[y].self += r->n[x].self;
		kids = rtake(r, x, &n);
		for (size_t i = 0; i < n; i++)
			rplace(r, y, kids[i], cls);
		free(kids);
		rfree(r, x);
		return;
	}
	if (was != cls && !r->n[x].other) {
		r->kept[was]--;
		r->kept[cls]++;
	}
	r->n[x].kind = cls;
	if (!r->n[x].other && r->kept[cls] > LP_PATHS_MAX) {
		uint32_t f = rchild(r, owner, 0, true);

		if (f == UINT32_MAX) {
			f = rnew(r, cls, 0, true);
			rlink(r, owner, f);
		}
		r->n[f].total += r->n[x].total;
		r->folds[cls]++;
		rabsorb(r, f, x);
		return;
	}
	rlink(r, owner, x);
	if (was == cls)
		return;
	kids = rtake(r, x, &n);
	for (size_t i = 0; i < n; i++)
		rplace(r, x, kids[i], cls);
	free(kids);
}

static struct rthread *rthread(struct ref *r, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == pid && r->th[i].tid == tid)
			return &r->th[i];
	assert_true(r->nth < 64);
	r->th[r->nth] = (struct rthread){ .pid = pid, .tid = tid };
	memset(r->th[r->nth].level, 0xff, sizeof(r->th[r->nth].level));
	return &r->th[r->nth++];
}

static void ref_add(struct ref *r, const struct lp_span *s)
{
	struct rthread *t = rthread(r, s->pid, s->tid);
	uint32_t d = s->depth, x = t->level[d + 1];

	t->level[d + 1] = UINT32_MAX;
	if (x == UINT32_MAX) {
		x = rnew(r, R_OPEN, s->name, false);
	} else {
		r->n[x].kind = R_OPEN;
		r->n[x].name = s->name;
		r->n[x].other = false; /* a holder until now */
		r->kept[R_OPEN]++;
	}
	r->n[x].calls = 1;
	r->n[x].total = s->total_ns;
	r->n[x].self = s->self_ns;
	if (d > 0) {
		if (t->level[d] == UINT32_MAX)
			t->level[d] = rnew(r, R_HOLDER, 0, true);
		rplace(r, t->level[d], x, R_OPEN);
		return;
	}
	rplace(r, 0, x, R_TREE);
	/* What a stream that broke nesting left at deeper levels becomes top-level. */
	for (uint32_t k = 1; k < LP_NEST_MAX_DEPTH + 2; k++) {
		uint32_t h = t->level[k], *kids;
		size_t n;

		if (h == UINT32_MAX)
			continue;
		kids = rtake(r, h, &n);
		for (size_t i = 0; i < n; i++)
			rplace(r, 0, kids[i], R_TREE);
		free(kids);
		rfree(r, h);
		t->level[k] = UINT32_MAX;
	}
}

/* One node of a finished tree, by its path of name ids (UINT32_MAX: "(other paths)"). */
struct flat {
	uint32_t path[LP_NEST_MAX_DEPTH + 2];
	uint32_t depth;
	uint64_t calls, total, self;
};

static int cmp_flat(const void *a, const void *b)
{
	const struct flat *x = a, *y = b;

	for (uint32_t i = 0; i <= x->depth && i <= y->depth; i++)
		if (x->path[i] != y->path[i])
			return x->path[i] < y->path[i] ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static void ref_flatten(const struct ref *r, uint32_t owner, struct flat *at, uint32_t depth,
			struct flat *out, size_t *n)
{
	for (size_t i = 0; i < r->n[owner].nkids; i++) {
		const struct rnode *c = &r->n[r->n[owner].kids[i]];
		struct flat *f = &out[(*n)++];

		assert_true(depth <= LP_NEST_MAX_DEPTH + 1);
		*f = *at;
		f->path[depth] = c->other ? UINT32_MAX : c->name;
		f->depth = depth;
		f->calls = c->calls;
		f->total = c->total;
		f->self = c->self;
		ref_flatten(r, r->n[owner].kids[i], f, depth + 1, out, n);
	}
}

static void count_name(void *ctx, uint32_t id)
{
	(void)id;
	++*(uint64_t *)ctx;
}

/* paths.c's tree equals the reference's, node for node; so do the counts. */
static void check_against_model(struct fx *fx, const struct ref *r)
{
	struct lp_path_node *nodes;
	long n = lp_paths_nodes(fx->p, fx->st, &nodes);
	struct flat *got, *want, zero = { .depth = 0 };
	size_t nwant = 0;
	uint64_t folded = 0, names = 0;

	assert_true(n >= 0);
	got = calloc((size_t)n + 1, sizeof(*got));
	want = calloc(r->len + 1, sizeof(*want));
	assert_true(got && want);
	for (long i = 0; i < n; i++) {
		if (nodes[i].parent >= 0)
			got[i] = got[nodes[i].parent];
		got[i].depth = nodes[i].depth;
		got[i].path[nodes[i].depth] = nodes[i].folded ? UINT32_MAX : nodes[i].name;
		got[i].calls = nodes[i].calls;
		got[i].total = nodes[i].total_ns;
		got[i].self = nodes[i].self_ns;
		folded += nodes[i].folded ? nodes[i].calls : 0;
	}
	ref_flatten(r, 0, &zero, 0, want, &nwant);
	assert_int_equal((size_t)n, nwant);
	qsort(got, nwant, sizeof(*got), cmp_flat);
	qsort(want, nwant, sizeof(*want), cmp_flat);
	for (size_t i = 0; i < nwant; i++) {
		assert_int_equal(cmp_flat(&got[i], &want[i]), 0);
		assert_int_equal(got[i].calls, want[i].calls);
		assert_int_equal(got[i].total, want[i].total);
		assert_int_equal(got[i].self, want[i].self);
	}
	assert_int_equal(lp_paths_kept(fx->p), r->kept[R_TREE]);
	assert_int_equal(lp_paths_folded_spans(fx->p), folded);
	/* The names held: the tree's and the open aggregates' (the cap counts both). */
	lp_paths_each_name(fx->p, count_name, &names);
	assert_int_equal(names, r->kept[R_TREE] + r->kept[R_OPEN]);
	free(got);
	free(want);
	free(nodes);
}

/* A stream of spans, children before parents, as nest.c delivers them (or not: see brk). */
struct shape {
	uint32_t threads, maxd;
	uint32_t pool[LP_NEST_MAX_DEPTH]; /* names to draw from at each depth */
	uint32_t stay[LP_NEST_MAX_DEPTH]; /* per 100000: at depth d > 0, chance to go deeper */
	uint32_t brk;                     /* per 100000: a span at a random depth, out of nesting */
	uint64_t spans;
	bool tree_folds, open_folds;      /* what the stream is meant to reach */
};

static void run_shape(struct fx *fx, const struct shape *sh, const uint32_t *ids)
{
	struct ref r = { 0 };
	uint32_t stack[8][LP_NEST_MAX_DEPTH + 1], depth[8] = { 0 };
	uint64_t done = 0;

	assert_true(sh->threads <= 8 && sh->maxd <= LP_NEST_MAX_DEPTH);
	rnew(&r, R_HOLDER, 0, true); /* node 0: the tree's holder */
	while (done < sh->spans || depth[0] + depth[1] + depth[2] + depth[3] + depth[4] +
					   depth[5] + depth[6] + depth[7]) {
		uint32_t t = (uint32_t)rnd(sh->threads), d = depth[t];
		/* Threads 2k and 2k + 1 share a tid (in two processes), all a tid % 64. */
		struct lp_span s = { .pid = 3 + (t & 1), .tid = 64 * (t >> 1) + 5,
				     .total_ns = 1 + rnd(1000) };

		s.self_ns = rnd(s.total_ns + 1);
		if (sh->brk && rnd(100000) < sh->brk) {
			s.depth = (uint32_t)rnd(sh->maxd);
			s.name = ids[rnd(sh->pool[s.depth])];
		} else if (done < sh->spans &&
			   (d == 0 || (d < sh->maxd && rnd(100000) < sh->stay[d]))) {
			stack[t][depth[t]++] = ids[rnd(sh->pool[d])];
			continue;
		} else if (d) {
			s.name = stack[t][--depth[t]];
			s.depth = depth[t];
		} else {
			continue;
		}
		assert_int_equal(lp_paths_add(fx->p, &s), 0);
		ref_add(&r, &s);
		done++;
	}
	check_against_model(fx, &r);
	/* The stream reached what it was meant to: a test of the cap must hit it. */
	assert_int_equal(r.folds[R_TREE] > 0, sh->tree_folds);
	assert_int_equal(r.folds[R_OPEN] > 0, sh->open_folds);
	for (size_t i = 0; i < r.len; i++)
		free(r.n[i].kids);
	free(r.n);
}

/*
 * paths.c against the plain reference, on streams that fill the tree past
 * the cap, that fill the open aggregates past it (a top-level span open
 * around 30000 distinct paths), with wide and narrow open nodes, loops that
 * repeat a child, and spans out of nesting.
 */
static void test_against_model(void **state)
{
	struct fx *fx = *state;
	static const struct shape shapes[] = {
		/* Many threads, deep: the tree fills, then folds. */
		{ .threads = 4, .maxd = 5, .pool = { 40, 40, 40, 40, 40 },
		  .stay = { 0, 50000, 50000, 50000, 50000 }, .spans = 120000, .tree_folds = true },
		/* One top-level span around 200 x 150 paths: the open side folds. */
		{ .threads = 1, .maxd = 3, .pool = { 1, 200, 150 },
		  .stay = { 0, 99999, 50000 }, .spans = 90000, .open_folds = true },
		/* Few names, long loops under wide open nodes, and spans out of nesting. */
		{ .threads = 3, .maxd = 4, .pool = { 3, 30, 4, 12 },
		  .stay = { 0, 99000, 60000, 40000 }, .brk = 300, .spans = 40000 },
		{ .threads = 8, .maxd = 8, .pool = { 2, 3, 3, 3, 3, 3, 3, 3 },
		  .stay = { 0, 70000, 70000, 70000, 70000, 70000, 70000, 70000 }, .brk = 2000,
		  .spans = 40000 },
	};
	uint32_t ids[256];

	for (int i = 0; i < 256; i++) {
		char b[16];

		snprintf(b, sizeof(b), "m%d", i);
		ids[i] = ut_id(fx->st, b);
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		lp_paths_free(fx->p);
		fx->p = lp_paths_new();
		assert_non_null(fx->p);
		run_shape(fx, &shapes[i], ids);
	}
}

static void add_both(struct fx *fx, struct ref *r, uint32_t tid, uint32_t name, uint32_t depth)
{
	struct lp_span s = span(tid, name, depth, 10 + depth, 3);

	assert_int_equal(lp_paths_add(fx->p, &s), 0);
	ref_add(r, &s);
}

static uint32_t nth_name(struct fx *fx, const char *prefix, uint32_t i)
{
	char b[32];

	snprintf(b, sizeof(b), "%s%u", prefix, i);
	return ut_id(fx->st, b);
}

/*
 * Both caps at once, the case where their folds meet: a path that takes the
 * tree's last place while its children come from an open aggregate that
 * folded already ("(other paths)" among them, after a named one). Its named
 * child folds into a new "(other paths)" of the tree, which the open one
 * must then join: one such node per parent, never two.
 */
static void test_caps_meet(void **state)
{
	struct fx *fx = *state;
	struct ref r = { 0 };
	const uint32_t max = LP_PATHS_MAX;
	struct count c;

	rnew(&r, R_HOLDER, 0, true);
	for (uint32_t i = 0; i < max - 1; i++) /* the tree one short of the cap */
		add_both(fx, &r, 2, nth_name(fx, "t", i), 0);
	/* Thread 1 holds max - 10 open paths, then 10 more under an open "z". */
	for (uint32_t i = 0; i < max - 10; i++)
		add_both(fx, &r, 1, nth_name(fx, "o", i), 1);
	for (uint32_t i = 0; i < 10; i++)
		add_both(fx, &r, 1, nth_name(fx, "zz", i), 2);
	add_both(fx, &r, 3, ut_id(fx->st, "c2"), 1); /* past the open cap: folded */
	add_both(fx, &r, 1, ut_id(fx->st, "z"), 1); /* folded with its 10: room again */
	add_both(fx, &r, 3, ut_id(fx->st, "c1"), 1); /* kept, after the fold */
	add_both(fx, &r, 3, ut_id(fx->st, "x"), 0); /* the tree's last place */
	check_against_model(fx, &r);
	assert_true(r.folds[R_TREE] > 0 && r.folds[R_OPEN] > 0);
	c = count_tree(fx);
	assert_int_equal(c.folded_nodes, 1); /* x's: "c1" and "c2" */
	assert_int_equal(lp_paths_kept(fx->p), max);
	for (size_t i = 0; i < r.len; i++)
		free(r.n[i].kids);
	free(r.n);
}

struct seen {
	uint32_t id[8];
	size_t n;
};

static void collect(void *ctx, uint32_t name_id)
{
	struct seen *seen = ctx;

	assert_true(seen->n < 8);
	seen->id[seen->n++] = name_id;
}

/* Depth past the nesting builder's limit is refused; the ids held are all named. */
static void test_bad_depth_and_names(void **state)
{
	struct fx *fx = *state;
	struct lp_span s = span(1, ut_id(fx->st, "x"), LP_NEST_MAX_DEPTH + 1, 1, 1);
	uint32_t a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b");
	struct seen seen = { 0 };

	assert_int_equal(lp_paths_add(fx->p, &s), -EINVAL);
	s = span(1, b, 1, 1, 1); /* its parent is still open: held in the thread's aggregate */
	assert_int_equal(lp_paths_add(fx->p, &s), 0);
	s = span(2, a, 0, 1, 1);
	assert_int_equal(lp_paths_add(fx->p, &s), 0);
	lp_paths_each_name(fx->p, collect, &seen);
	assert_int_equal(seen.n, 2);
	assert_true((seen.id[0] == a && seen.id[1] == b) || (seen.id[0] == b && seen.id[1] == a));
}

/* The summary's object: pre-order, parent indexes, the cap and the counts. */
static void test_json(void **state)
{
	struct fx *fx = *state;
	uint32_t r = ut_id(fx->st, "r"), x = ut_id(fx->st, "x"), y = ut_id(fx->st, "y\x01z");
	struct lp_span seq[] = {
		span(1, x, 1, 10, 10), span(1, y, 1, 30, 20), span(1, x, 2, 10, 10),
	};
	json_object *o, *nodes, *nd;

	/* r > (x, y > x): y's child completes before y. */
	assert_int_equal(lp_paths_add(fx->p, &seq[0]), 0);
	seq[2].depth = 2;
	assert_int_equal(lp_paths_add(fx->p, &seq[2]), 0);
	assert_int_equal(lp_paths_add(fx->p, &seq[1]), 0);
	seq[0] = span(1, r, 0, 45, 5);
	assert_int_equal(lp_paths_add(fx->p, &seq[0]), 0);
	o = paths_json(fx);
	assert_non_null(o);
	assert_int_equal(json_object_get_int64(json_object_object_get(o, "max")), LP_PATHS_MAX);
	assert_int_equal(json_object_get_int64(json_object_object_get(o, "kept")), 4);
	assert_int_equal(json_object_get_int64(json_object_object_get(o, "folded_spans")), 0);
	nodes = json_object_object_get(o, "nodes");
	assert_int_equal(json_object_array_length(nodes), 4);
	nd = json_object_array_get_idx(nodes, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(nd, "name")), "r");
	assert_int_equal(json_object_get_int64(json_object_object_get(nd, "parent")), -1);
	nd = json_object_array_get_idx(nodes, 1); /* y: the larger child first */
	assert_string_equal(json_object_get_string(json_object_object_get(nd, "name")), "y\x01z");
	assert_int_equal(json_object_get_int64(json_object_object_get(nd, "parent")), 0);
	assert_int_equal(json_object_get_int64(json_object_object_get(nd, "self_ns")), 20);
	nd = json_object_array_get_idx(nodes, 2);
	assert_string_equal(json_object_get_string(json_object_object_get(nd, "name")), "x");
	assert_int_equal(json_object_get_int64(json_object_object_get(nd, "parent")), 1);
	nd = json_object_array_get_idx(nodes, 3);
	assert_int_equal(json_object_get_int64(json_object_object_get(nd, "parent")), 0);
	assert_false(json_object_get_boolean(json_object_object_get(nd, "folded")));
	json_object_put(o);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_interleaved_threads), T(test_unterminated_and_started_before), T(test_cap),
		T(test_bad_depth_and_names), T(test_json), T(test_against_model),
		T(test_caps_meet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
