// SPDX-License-Identifier: MIT
/*
 * Call paths (user/core/paths.c) as the recording builds them: events go to
 * the nesting builder, which asks paths.c for a span's path when the span
 * opens and hands the span back when it closes. Random trees on threads
 * whose events interleave, against a plain reference that knows every
 * span's path from the events the test sent; the cap on distinct paths;
 * spans out of nesting; ids that are not paths; memory running out; the
 * summary's "paths" object.
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
#define PID 7
#define TID0 100
#define NONE UINT32_MAX

/*
 * The reference: the rules of docs/reading.md written as plainly as possible,
 * a tree whose children are searched one by one. A path is kept when it is
 * opened while fewer than LP_PATHS_MAX are; past that, a new path is counted
 * in its parent's "(other paths)" child, and so is everything under it.
 */
struct rnode {
	uint32_t parent, name;
	bool other;
	uint32_t *kids;
	size_t nkids, cap;
	uint32_t chain; /* the next node in its bucket of the lookup table */
	uint64_t calls, total, self;
};

/* Nodes by (parent, name): a chained table, so that 20000 children are not searched one by one. */
#define RBUCKETS 65536

struct ref {
	struct rnode *n;
	size_t len, cap;
	uint32_t *bucket;
	uint64_t kept, folds; /* paths kept; spans that opened a fold (not those under one) */
};

static size_t rbucket(uint32_t parent, uint32_t name, bool other)
{
	return ((size_t)parent * 31 + (other ? 7 : name)) % RBUCKETS;
}

static uint32_t rnew(struct ref *r, uint32_t parent, uint32_t name, bool other)
{
	struct rnode *o;
	uint32_t *b;

	if (r->len == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->n = realloc(r->n, r->cap * sizeof(*r->n));
		assert_non_null(r->n);
	}
	b = &r->bucket[rbucket(parent, name, other)];
	r->n[r->len] = (struct rnode){ .parent = parent, .name = name, .other = other,
				       .chain = *b };
	*b = (uint32_t)r->len;
	if (parent != NONE) {
		o = &r->n[parent];
		if (o->nkids == o->cap) {
			o->cap = o->cap ? o->cap * 2 : 4;
			o->kids = realloc(o->kids, o->cap * sizeof(*o->kids));
			assert_non_null(o->kids);
		}
		o->kids[o->nkids++] = (uint32_t)r->len;
	}
	return (uint32_t)r->len++;
}

static void ref_init(struct ref *r)
{
	memset(r, 0, sizeof(*r));
	r->bucket = malloc(RBUCKETS * sizeof(*r->bucket));
	assert_non_null(r->bucket);
	memset(r->bucket, 0xff, RBUCKETS * sizeof(*r->bucket));
	rnew(r, NONE, 0, false); /* the root */
}

static void ref_free(struct ref *r)
{
	for (size_t i = 0; i < r->len; i++)
		free(r->n[i].kids);
	free(r->n);
	free(r->bucket);
	memset(r, 0, sizeof(*r));
}

/* x's child of that name, or its "(other paths)" child; NONE: none. */
static uint32_t rkid(const struct ref *r, uint32_t x, uint32_t name, bool other)
{
	for (uint32_t k = r->bucket[rbucket(x, name, other)]; k != NONE; k = r->n[k].chain)
		if (r->n[k].parent == x && r->n[k].other == other &&
		    (other || r->n[k].name == name))
			return k;
	return NONE;
}

/*
 * The node of the path names[0..depth]; *below: under the top of a fold.
 * open: the span opens now, and a path new to the tree is made (or folded).
 */
static uint32_t rwalk(struct ref *r, const uint32_t *names, size_t depth, bool open, bool *below)
{
	uint32_t x = 0;

	*below = false;
	for (size_t d = 0; d <= depth; d++) {
		uint32_t k;

		if (r->n[x].other) {
			*below = true;
			continue;
		}
		k = rkid(r, x, names[d], false);
		if (k == NONE && open && d == depth && r->kept < LP_PATHS_MAX) {
			k = rnew(r, x, names[d], false);
			r->kept++;
		}
		if (k == NONE) {
			k = rkid(r, x, 0, true);
			if (k == NONE && open && d == depth)
				k = rnew(r, x, 0, true);
			/* Its ancestors were opened before it: folded, when not kept. */
			assert_true(k != NONE);
		}
		x = k;
	}
	return x;
}

static void ref_close(struct ref *r, const uint32_t *names, size_t depth, uint64_t total,
		      uint64_t self)
{
	bool below;
	struct rnode *x = &r->n[rwalk(r, names, depth, false, &below)];

	x->calls++;
	x->self += self;
	if (!below)
		x->total += total;
	if (x->other && !below)
		r->folds++;
}

struct fx {
	struct strtab *st;
	struct lp_paths *p;
	struct lp_nest *nest;
	struct ref ref;
	/* per test thread: the names it has open, as the test sent them */
	uint32_t stack[THREADS][LP_NEST_MAX_DEPTH + 1];
	size_t depth[THREADS];
	int cur;         /* the thread whose event is being sent */
	size_t open_at;  /* the depth at which that event opens a span */
	uint64_t spans, self_sum;
};

/* The nesting builder's path callback: the reference opens the path the test sent. */
static uint32_t on_path(void *ctx, uint32_t parent, uint32_t name)
{
	struct fx *fx = ctx;
	bool below;

	assert_int_equal(fx->stack[fx->cur][fx->open_at], name);
	rwalk(&fx->ref, fx->stack[fx->cur], fx->open_at, true, &below);
	return lp_paths_open(fx->p, parent, name);
}

/* The span goes to paths.c, and to the reference by the path the test sent. */
static void on_span(void *ctx, const struct lp_span *s)
{
	struct fx *fx = ctx;
	int t = (int)s->tid - TID0;

	assert_true(t >= 0 && t < THREADS);
	assert_int_equal(fx->stack[t][s->depth], s->name);
	assert_int_equal(lp_paths_add(fx->p, s), 0);
	/* The test's stack still holds the span: its exit is being handled. */
	ref_close(&fx->ref, fx->stack[t], s->depth, s->total_ns, s->self_ns);
	fx->spans++;
	fx->self_sum += s->self_ns;
}

/* A new builder and tree, and a new reference; the string table stays. */
static void reset(struct fx *fx)
{
	struct lp_nest_sink sink = { .span = on_span, .path = on_path, .ctx = fx };

	lp_nest_free(fx->nest);
	lp_paths_free(fx->p);
	ref_free(&fx->ref);
	fx->p = lp_paths_new();
	fx->nest = lp_nest_new(&sink);
	assert_true(fx->p && fx->nest);
	ref_init(&fx->ref);
	memset(fx->depth, 0, sizeof(fx->depth));
	fx->spans = fx->self_sum = 0;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->st = strtab_new();
	if (!fx->st)
		return -1;
	reset(fx);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	lp_nest_free(fx->nest);
	lp_paths_free(fx->p);
	strtab_free(fx->st);
	ref_free(&fx->ref);
	free(fx);
	return 0;
}

static void send(struct fx *fx, int t, enum lp_event_type type, uint32_t name, uint64_t ts)
{
	struct lp_event ev = {
		.type = type, .pid = PID, .tid = TID0 + (uint32_t)t, .ts_ns = ts, .name = name,
	};

	fx->cur = t;
	assert_int_equal(lp_nest_event(fx->nest, &ev), 0);
}

static void enter(struct fx *fx, int t, uint32_t name, uint64_t ts)
{
	fx->open_at = fx->depth[t];
	fx->stack[t][fx->depth[t]++] = name;
	send(fx, t, LP_EVENT_ENTER, name, ts);
}

/* The exit of the innermost open span of that name: the spans inside it close too. */
static void leave(struct fx *fx, int t, uint32_t name, uint64_t ts)
{
	size_t k = fx->depth[t];

	while (k && fx->stack[t][k - 1] != name)
		k--;
	assert_true(k > 0);
	send(fx, t, LP_EVENT_EXIT, name, ts);
	fx->depth[t] = k - 1;
}

static void finish(struct fx *fx, uint64_t ts)
{
	fx->cur = -1;
	lp_nest_finish(fx->nest, ts);
	memset(fx->depth, 0, sizeof(fx->depth));
}

static uint32_t nth_name(struct fx *fx, const char *prefix, uint32_t i)
{
	char b[32];

	snprintf(b, sizeof(b), "%s%u", prefix, i);
	return ut_id(fx->st, b);
}

/* One node of a finished tree, by its path of name ids (NONE: "(other paths)"). */
struct flat {
	uint32_t path[16];
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

static void ref_flatten(const struct ref *r, uint32_t x, const struct flat *at, uint32_t depth,
			struct flat *out, size_t *n)
{
	for (size_t i = 0; i < r->n[x].nkids; i++) {
		const struct rnode *c = &r->n[r->n[x].kids[i]];
		struct flat *f = &out[(*n)++];

		assert_true(depth < 16);
		*f = *at;
		f->path[depth] = c->other ? NONE : c->name;
		f->depth = depth;
		f->calls = c->calls;
		f->total = c->total;
		f->self = c->self;
		ref_flatten(r, r->n[x].kids[i], f, depth + 1, out, n);
	}
}

static void count_name(void *ctx, uint32_t id)
{
	(void)id;
	++*(uint64_t *)ctx;
}

struct count {
	uint64_t calls, self, total_roots, folded_calls;
	long nodes, folded_nodes;
};

/*
 * paths.c's tree equals the reference's, node for node, "(other paths)"
 * included; in pre-order, children by total time; no time lost.
 */
static struct count check_against_ref(struct fx *fx)
{
	struct lp_path_node *nodes;
	long n = lp_paths_nodes(fx->p, fx->st, &nodes);
	struct flat *got, *want, zero = { .depth = 0 };
	size_t nwant = 0;
	uint64_t names = 0;
	struct count c = { .nodes = n };

	assert_true(n >= 0);
	got = calloc((size_t)n + 1, sizeof(*got));
	want = calloc(fx->ref.len + 1, sizeof(*want));
	assert_true(got && want);
	for (long i = 0; i < n; i++) {
		assert_true(nodes[i].parent < i);
		if (i > 0 && nodes[i].parent == nodes[i - 1].parent)
			assert_true(nodes[i].total_ns <= nodes[i - 1].total_ns);
		if (nodes[i].parent >= 0)
			got[i] = got[nodes[i].parent];
		assert_true(nodes[i].depth < 16);
		got[i].depth = nodes[i].depth;
		got[i].path[nodes[i].depth] = nodes[i].folded ? NONE : nodes[i].name;
		got[i].calls = nodes[i].calls;
		got[i].total = nodes[i].total_ns;
		got[i].self = nodes[i].self_ns;
		c.calls += nodes[i].calls;
		c.self += nodes[i].self_ns;
		c.folded_nodes += nodes[i].folded;
		c.folded_calls += nodes[i].folded ? nodes[i].calls : 0;
		c.total_roots += nodes[i].parent < 0 ? nodes[i].total_ns : 0;
	}
	ref_flatten(&fx->ref, 0, &zero, 0, want, &nwant);
	assert_int_equal((size_t)n, nwant);
	qsort(got, nwant, sizeof(*got), cmp_flat);
	qsort(want, nwant, sizeof(*want), cmp_flat);
	for (size_t i = 0; i < nwant; i++) {
		assert_int_equal(cmp_flat(&got[i], &want[i]), 0);
		assert_int_equal(got[i].calls, want[i].calls);
		assert_int_equal(got[i].total, want[i].total);
		assert_int_equal(got[i].self, want[i].self);
	}
	assert_int_equal(lp_paths_kept(fx->p), fx->ref.kept);
	assert_int_equal(lp_paths_folded_spans(fx->p), c.folded_calls);
	lp_paths_each_name(fx->p, count_name, &names);
	assert_int_equal(names, fx->ref.kept);
	/*
	 * Every span once; self times add up to the recorded thread time, and so
	 * do the roots' totals, unless a span was rebuilt around spans that
	 * completed before it (their paths are its siblings': their time is in
	 * both totals).
	 */
	assert_int_equal(c.calls, fx->spans);
	assert_int_equal(c.self, fx->self_sum);
	assert_int_equal(c.self, lp_nest_totals(fx->nest)->recorded_ns);
	if (!lp_nest_totals(fx->nest)->started_before)
		assert_int_equal(c.total_roots, lp_nest_totals(fx->nest)->recorded_ns);
	free(got);
	free(want);
	free(nodes);
	return c;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state % n;
}

/* A random stream: what the threads do, and what it is meant to reach. */
struct shape {
	int threads;
	uint32_t maxd;
	uint32_t pool[8]; /* names to draw from at each depth */
	uint32_t stay[8]; /* per 100000: at depth d > 0, the chance to go deeper */
	uint32_t outer;   /* per 100000: an exit names an outer span, closing those inside */
	uint64_t spans;
	bool folds;
};

static void run_shape(struct fx *fx, const struct shape *sh, const uint32_t *ids)
{
	uint64_t ts = 1000, entered = 0;
	int open = 0;
	struct count c;

	assert_true(sh->threads <= THREADS && sh->maxd <= 8);
	while (entered < sh->spans || open) {
		int t = (int)rnd((uint64_t)sh->threads);
		size_t d = fx->depth[t];

		ts += 1 + rnd(50);
		if (entered < sh->spans &&
		    (d == 0 || (d < sh->maxd && rnd(100000) < sh->stay[d]))) {
			enter(fx, t, ids[rnd(sh->pool[d])], ts);
			entered++;
			open += !d;
		} else if (d) {
			size_t k = d - 1;

			if (sh->outer && rnd(100000) < sh->outer)
				k = rnd(d);
			leave(fx, t, fx->stack[t][k], ts);
			open -= !fx->depth[t];
		}
	}
	c = check_against_ref(fx);
	/* The stream reached what it was meant to: a test of the cap must hit it. */
	assert_int_equal(fx->ref.folds > 0, sh->folds);
	assert_int_equal(c.folded_nodes > 0, sh->folds);
	if (sh->folds)
		assert_int_equal(lp_paths_kept(fx->p), LP_PATHS_MAX);
}

/*
 * paths.c against the reference: random trees on threads whose events
 * interleave, under the cap and past it, with loops that repeat a child,
 * recursion, wide nodes, and exits of outer spans that close inner ones.
 */
static void test_random_streams(void **state)
{
	struct fx *fx = *state;
	static const struct shape shapes[] = {
		/* Few names, under the cap: every path is its own node. */
		{ .threads = 8, .maxd = 7, .pool = { 5, 5, 5, 5, 5, 5, 5 },
		  .stay = { 0, 50000, 50000, 50000, 50000, 50000, 50000 }, .spans = 10000 },
		/* Many threads, deep: the tree fills, then folds. */
		{ .threads = 4, .maxd = 5, .pool = { 40, 40, 40, 40, 40 },
		  .stay = { 0, 50000, 50000, 50000, 50000 }, .spans = 120000, .folds = true },
		/* One top-level span around 200 x 150 paths. */
		{ .threads = 1, .maxd = 3, .pool = { 1, 200, 150 },
		  .stay = { 0, 99999, 50000 }, .spans = 90000, .folds = true },
		/* Few names, long loops under wide nodes, and exits of outer spans. */
		{ .threads = 3, .maxd = 4, .pool = { 3, 30, 4, 12 },
		  .stay = { 0, 99000, 60000, 40000 }, .outer = 3000, .spans = 40000 },
		{ .threads = 8, .maxd = 8, .pool = { 2, 3, 3, 3, 3, 3, 3, 3 },
		  .stay = { 0, 70000, 70000, 70000, 70000, 70000, 70000, 70000 }, .outer = 20000,
		  .spans = 40000 },
	};
	uint32_t ids[256];

	for (uint32_t i = 0; i < 256; i++)
		ids[i] = nth_name(fx, "m", i);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		reset(fx);
		run_shape(fx, &shapes[i], ids);
	}
}

/*
 * Spans closed without their exit (by an outer exit, at the thread's end, at
 * the end of the recording) and spans rebuilt from an exit that had no enter,
 * at the top and inside a span open across a library's gate, are counted
 * under the path they had when they opened.
 */
static void test_out_of_nesting(void **state)
{
	struct fx *fx = *state;
	uint32_t a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b"), c = ut_id(fx->st, "c");
	uint32_t before = ut_id(fx->st, "before"), lib = ut_id(fx->st, "lib");

	assert_int_equal(lp_nest_process_begin(fx->nest, PID, 100, true), 0);
	/* Thread 1 was inside "before" when recording began: a, then the exit of before. */
	enter(fx, 1, a, 200);
	leave(fx, 1, a, 300);
	fx->stack[1][0] = before; /* the rebuilt span opens at depth 0 */
	fx->depth[1] = 1;
	fx->open_at = 0;
	send(fx, 1, LP_EVENT_EXIT, before, 500);
	fx->depth[1] = 0;
	/* Thread 0: a > b > c, then a's exit closes c and b unterminated. */
	enter(fx, 0, a, 1000);
	enter(fx, 0, b, 1100);
	enter(fx, 0, c, 1200);
	leave(fx, 0, a, 1500);
	/* Thread 2: b > c, ended by its thread's exit. */
	enter(fx, 2, b, 1600);
	enter(fx, 2, c, 1700);
	lp_nest_thread_end(fx->nest, PID, TID0 + 2, 1800);
	fx->depth[2] = 0;
	/* Thread 3: a > b; a library is attached; the exit of its span "lib" rebuilds it in b. */
	enter(fx, 3, a, 2000);
	enter(fx, 3, b, 2100);
	lp_nest_gate(fx->nest, 2200);
	enter(fx, 3, c, 2300);
	leave(fx, 3, c, 2400);
	fx->stack[3][2] = lib; /* opens at depth 2, under a > b, around c */
	fx->depth[3] = 3;
	fx->open_at = 2;
	{
		struct lp_event x = { .type = LP_EVENT_EXIT, .pid = PID, .tid = TID0 + 3,
				      .ts_ns = 2500, .name = lib, .file_since_ns = 2200 };

		fx->cur = 3;
		assert_int_equal(lp_nest_event(fx->nest, &x), 0);
	}
	fx->depth[3] = 2;
	/* Thread 0 again: a > b left open, closed at the end. */
	enter(fx, 0, a, 3000);
	enter(fx, 0, b, 3100);
	finish(fx, 4000);
	check_against_ref(fx);
	assert_int_equal(lp_nest_totals(fx->nest)->started_before, 2);
	assert_int_equal(lp_nest_totals(fx->nest)->unterminated, 8);
	/* "lib" is a path of its own under a > b, beside the c it encloses. */
	{
		uint32_t path[] = { a, b, lib };
		bool below;
		uint32_t x = rwalk(&fx->ref, path, 2, false, &below);

		assert_int_equal(fx->ref.n[x].calls, 1);
		assert_int_equal(fx->ref.n[x].total, 300);
		assert_int_equal(fx->ref.n[x].self, 200);
	}
}

/*
 * Past LP_PATHS_MAX distinct paths, the new ones fold into "(other paths)"
 * under their parent: no call and no time is lost, the tree stays bounded.
 */
static void test_cap(void **state)
{
	struct fx *fx = *state;
	const uint32_t n = LP_PATHS_MAX + 500;
	uint32_t root = ut_id(fx->st, "root");
	uint64_t ts = 1000;
	struct count c;

	for (uint32_t round = 0; round < 3; round++) {
		/* One root, with n children of distinct names (half of them new each round). */
		enter(fx, 0, root, ts++);
		for (uint32_t i = 0; i < n; i++) {
			enter(fx, 0, nth_name(fx, "c", i + round * (n / 2)), ts);
			ts += 10;
			leave(fx, 0, fx->stack[0][1], ts++);
		}
		leave(fx, 0, root, ts += 5);
		c = check_against_ref(fx);
		assert_int_equal(lp_paths_kept(fx->p), LP_PATHS_MAX);
		assert_int_equal(c.folded_nodes, 1);
		assert_int_equal(c.nodes, LP_PATHS_MAX + 1);
		/* The root and the LP_PATHS_MAX - 1 children opened first. */
		if (round == 0)
			assert_int_equal(lp_paths_folded_spans(fx->p), n + 1 - LP_PATHS_MAX);
	}
}

/*
 * What a folded span calls is in its "(other paths)" node too: the node's
 * calls and self time count every span of the folded subtrees, its total the
 * tops' only (their children's time is inside it).
 */
static void test_fold_takes_subtree(void **state)
{
	struct fx *fx = *state;
	uint32_t x = ut_id(fx->st, "x"), y = ut_id(fx->st, "y"), w = ut_id(fx->st, "w");
	struct lp_path_node *nodes;
	uint64_t ts = 1000;
	long n;

	for (uint32_t i = 0; i < LP_PATHS_MAX; i++) {
		enter(fx, 0, nth_name(fx, "t", i), ts);
		leave(fx, 0, fx->stack[0][0], ts += 2);
	}
	/* x(100) > y(30) > x(10), and w(50) > x(20): two folded tops, three spans below. */
	enter(fx, 1, x, 10000);
	enter(fx, 1, y, 10020);
	enter(fx, 1, x, 10030);
	leave(fx, 1, x, 10040);
	leave(fx, 1, y, 10050);
	leave(fx, 1, x, 10100);
	enter(fx, 1, w, 11000);
	enter(fx, 1, x, 11010);
	leave(fx, 1, x, 11030);
	leave(fx, 1, w, 11050);
	check_against_ref(fx);
	n = lp_paths_nodes(fx->p, fx->st, &nodes);
	assert_int_equal(n, LP_PATHS_MAX + 1);
	assert_true(nodes[0].folded); /* the largest total first */
	assert_int_equal(nodes[0].parent, -1);
	assert_int_equal(nodes[0].calls, 5);
	assert_int_equal(nodes[0].total_ns, 150);
	assert_int_equal(nodes[0].self_ns, 150);
	assert_int_equal(lp_paths_folded_spans(fx->p), 5);
	free(nodes);
}

/*
 * The paths kept are the first opened, not the first completed: a span open
 * while the cap fills keeps its path, and its children theirs while there
 * is room.
 */
static void test_cap_keeps_first_opened(void **state)
{
	struct fx *fx = *state;
	uint32_t late = ut_id(fx->st, "late"), kid = ut_id(fx->st, "kid");
	struct lp_path_node *nodes;
	uint64_t ts = 1000;
	long n;

	enter(fx, 0, late, ts++);
	enter(fx, 0, kid, ts++);
	/* LP_PATHS_MAX - 1 paths on another thread: one too many for the cap. */
	for (uint32_t i = 0; i < LP_PATHS_MAX - 1; i++) {
		enter(fx, 1, nth_name(fx, "t", i), ts);
		leave(fx, 1, fx->stack[1][0], ts += 2);
	}
	leave(fx, 0, kid, ts++);
	leave(fx, 0, late, ts++);
	check_against_ref(fx);
	n = lp_paths_nodes(fx->p, fx->st, &nodes);
	assert_int_equal(n, LP_PATHS_MAX + 1);
	assert_int_equal(nodes[0].name, late);
	assert_false(nodes[0].folded);
	assert_int_equal(nodes[1].name, kid);
	assert_int_equal(nodes[1].parent, 0);
	assert_int_equal(nodes[1].calls, 1);
	/* The last "t", opened past the cap, and completed before them. */
	for (long i = 2; i < n; i++)
		if (nodes[i].folded)
			assert_int_equal(nodes[i].calls, 1);
	assert_int_equal(lp_paths_folded_spans(fx->p), 1);
	free(nodes);
}

/*
 * A path whose spans are all open has 0 calls, with what completed under it;
 * its span counts once it closes.
 */
static void test_open_path_has_no_calls(void **state)
{
	struct fx *fx = *state;
	uint32_t a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b");
	struct lp_path_node *nodes;

	enter(fx, 0, a, 100);
	enter(fx, 0, b, 110);
	leave(fx, 0, b, 130);
	assert_int_equal(lp_paths_nodes(fx->p, fx->st, &nodes), 2);
	assert_int_equal(nodes[0].name, a);
	assert_int_equal(nodes[0].calls, 0);
	assert_int_equal(nodes[0].total_ns, 0);
	assert_int_equal(nodes[1].name, b);
	assert_int_equal(nodes[1].calls, 1);
	assert_int_equal(nodes[1].total_ns, 20);
	free(nodes);
	finish(fx, 200);
	check_against_ref(fx);
}

/*
 * Name 0 (the first text a recording interns) at the top level: its own
 * path, found again, counted. Its key in the index is 0, as an empty
 * slot's: found as the root once, every span of it refused as -EINVAL.
 */
static void test_name_zero_at_top(void **state)
{
	struct lp_paths *p = lp_paths_new();
	struct lp_span s = { .pid = 1, .tid = 1, .name = 0, .total_ns = 7, .self_ns = 7 };
	uint32_t top, inner;

	assert_non_null(p);
	top = lp_paths_open(p, LP_NEST_PATH_TOP, 0);
	assert_int_not_equal(top, LP_NEST_PATH_TOP);
	assert_int_equal(lp_paths_open(p, LP_NEST_PATH_TOP, 0), top);
	inner = lp_paths_open(p, top, 0);
	assert_int_not_equal(inner, top);
	assert_int_equal(lp_paths_open(p, top, 0), inner);
	s.path = top;
	assert_int_equal(lp_paths_add(p, &s), 0);
	s.path = inner;
	assert_int_equal(lp_paths_add(p, &s), 0);
	assert_int_equal(lp_paths_kept(p), 2);
	lp_paths_free(p);
}

/* Ids paths.c never gave are refused; one given when memory ran out is an error too. */
static void test_bad_ids(void **state)
{
	struct fx *fx = *state;
	uint32_t a = ut_id(fx->st, "a");
	struct lp_span s = { .pid = 1, .tid = 1, .name = a, .total_ns = 5, .self_ns = 5 };
	uint64_t names = 0;

	s.path = LP_NEST_PATH_TOP; /* the root: no span's path */
	assert_int_equal(lp_paths_add(fx->p, &s), -EINVAL);
	s.path = 12345;
	assert_int_equal(lp_paths_add(fx->p, &s), -EINVAL);
	s.path = lp_paths_open(fx->p, 12345, a); /* under a span that is not one */
	assert_int_equal(lp_paths_add(fx->p, &s), -EINVAL);
	s.path = LP_PATHS_NOMEM;
	assert_int_equal(lp_paths_add(fx->p, &s), -ENOMEM);
	assert_int_equal(lp_paths_open(fx->p, LP_PATHS_NOMEM, a), LP_PATHS_NOMEM);
	/* None of that made a node. */
	assert_int_equal(lp_paths_kept(fx->p), 0);
	lp_paths_each_name(fx->p, count_name, &names);
	assert_int_equal(names, 0);
}

#if defined(__SANITIZE_ADDRESS__)
#define UT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UT_ASAN 1
#endif
#endif

#ifndef UT_ASAN
/*
 * Allocations fail while fail_allocs is set: paths.c's (realloc, calloc).
 * The sanitizers' allocator cannot be wrapped this way.
 */
static bool fail_allocs;
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

void *calloc(size_t n, size_t size)
{
	return fail_allocs ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fail_allocs ? NULL : __libc_realloc(p, size);
}
#endif

/*
 * Memory runs out while a span opens: it and the spans it calls are not
 * counted, each of them says -ENOMEM, and the paths made before are intact.
 */
static void test_out_of_memory(void **state)
{
#ifdef UT_ASAN
	(void)state;
	skip();
#else
	struct fx *fx = *state;
	uint32_t top = 0, a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b");
	struct lp_span s = { .pid = 1, .tid = 1, .total_ns = 5, .self_ns = 5 };
	struct lp_path_node *nodes;
	uint32_t lost, under;
	uint64_t i;

	/* Paths until the nodes' array is full: the next one needs memory. */
	for (i = 0; lp_paths_kept(fx->p) == i; i++) {
		uint32_t name = nth_name(fx, "t", (uint32_t)i);

		fail_allocs = true;
		top = lp_paths_open(fx->p, LP_NEST_PATH_TOP, name);
		fail_allocs = false;
		if (top == LP_PATHS_NOMEM)
			break;
		s.path = top;
		assert_int_equal(lp_paths_add(fx->p, &s), 0);
	}
	assert_int_equal(top, LP_PATHS_NOMEM);
	lost = top;
	under = lp_paths_open(fx->p, lost, b);
	assert_int_equal(under, LP_PATHS_NOMEM);
	s.path = under;
	assert_int_equal(lp_paths_add(fx->p, &s), -ENOMEM);
	s.path = lost;
	assert_int_equal(lp_paths_add(fx->p, &s), -ENOMEM);
	/* With memory again, paths are made as before. */
	s.path = lp_paths_open(fx->p, LP_NEST_PATH_TOP, a);
	assert_int_equal(lp_paths_add(fx->p, &s), 0);
	assert_int_equal(lp_paths_nodes(fx->p, fx->st, &nodes), (long)i + 1);
	for (uint64_t k = 0; k <= i; k++)
		assert_int_equal(nodes[k].calls, 1);
	assert_int_equal(lp_paths_kept(fx->p), i + 1);
	free(nodes);
#endif
}

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

/* The summary's object: pre-order, parent indexes, the cap and the counts. */
static void test_json(void **state)
{
	struct fx *fx = *state;
	uint32_t r = ut_id(fx->st, "r"), x = ut_id(fx->st, "x"), y = ut_id(fx->st, "y\x01z");
	json_object *o, *nodes, *nd;

	/* r(45) > (x(10), y(30) > x(10)) */
	enter(fx, 0, r, 0);
	enter(fx, 0, x, 0);
	leave(fx, 0, x, 10);
	enter(fx, 0, y, 10);
	enter(fx, 0, x, 15);
	leave(fx, 0, x, 25);
	leave(fx, 0, y, 40);
	leave(fx, 0, r, 45);
	o = paths_json(fx);
	assert_non_null(o);
	assert_int_equal(json_object_get_int64(ut_get(o, "max")), LP_PATHS_MAX);
	assert_int_equal(json_object_get_int64(ut_get(o, "kept")), 4);
	assert_int_equal(json_object_get_int64(ut_get(o, "folded_spans")), 0);
	nodes = ut_get(o, "nodes");
	assert_int_equal(json_object_array_length(nodes), 4);
	nd = json_object_array_get_idx(nodes, 0);
	assert_string_equal(json_object_get_string(ut_get(nd, "name")), "r");
	assert_int_equal(json_object_get_int64(ut_get(nd, "parent")), -1);
	assert_int_equal(json_object_get_int64(ut_get(nd, "self_ns")), 5);
	nd = json_object_array_get_idx(nodes, 1); /* y: the larger child first */
	assert_string_equal(json_object_get_string(ut_get(nd, "name")), "y\x01z");
	assert_int_equal(json_object_get_int64(ut_get(nd, "parent")), 0);
	assert_int_equal(json_object_get_int64(ut_get(nd, "total_ns")), 30);
	assert_int_equal(json_object_get_int64(ut_get(nd, "self_ns")), 20);
	nd = json_object_array_get_idx(nodes, 2);
	assert_string_equal(json_object_get_string(ut_get(nd, "name")), "x");
	assert_int_equal(json_object_get_int64(ut_get(nd, "parent")), 1);
	nd = json_object_array_get_idx(nodes, 3);
	assert_string_equal(json_object_get_string(ut_get(nd, "name")), "x");
	assert_int_equal(json_object_get_int64(ut_get(nd, "parent")), 0);
	assert_false(json_object_get_boolean(ut_get(nd, "folded")));
	json_object_put(o);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_random_streams), T(test_out_of_nesting),	   T(test_cap),
		T(test_fold_takes_subtree), T(test_cap_keeps_first_opened),
		T(test_open_path_has_no_calls), T(test_name_zero_at_top), T(test_bad_ids),
		T(test_out_of_memory),
		T(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
