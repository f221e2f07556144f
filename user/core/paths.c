// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* qsort_r */
#include "paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define OTHER UINT32_MAX /* the name of an "(other paths)" node: never a string id */
#define ROOT LP_NEST_PATH_TOP

/*
 * Ids of folded spans carry a flag: FOLD_TOP, the top of a folded subtree,
 * counted in full in its "(other paths)" node; BELOW, a span under it,
 * counted in the same node's calls and self time but not in its total,
 * which holds the top's, theirs included. lp_paths_open reads any id past
 * the nodes as one of these (or LP_PATHS_NOMEM) without reading a node.
 */
#define FOLD_TOP 0x40000000u
#define BELOW 0x80000000u
#define INDEX (FOLD_TOP - 1)

_Static_assert(ROOT == 0, "the root is node 0: no child's index is 0");
/* lp_paths_open leaves it as it is under a span out of memory; no node has its index. */
_Static_assert(((LP_PATHS_NOMEM & ~FOLD_TOP) | BELOW) == LP_PATHS_NOMEM &&
		       (LP_PATHS_NOMEM & INDEX) > 3 * LP_PATHS_MAX,
	       "LP_PATHS_NOMEM is a fixed point of lp_paths_open and no node's id");

/* What lp_paths_open reads. */
struct node {
	uint32_t name;
	uint32_t child, next; /* first child, next sibling; NONE: none */
	/*
	 * The id lp_paths_open gave for the child it opened last, and that
	 * child's name: a loop opens it again without the index.
	 */
	uint32_t last;
	uint32_t other; /* its "(other paths)" child, 0: none yet */
	uint32_t last_name; /* not next to last: the compiler made one vector store of the two, longer */
};

/*
 * What lp_paths_add writes: total_ns[1] takes the totals of BELOW spans, and
 * is never read. calls and self_ns apart: the compiler's vector code for the
 * pair cost more instructions than two adds.
 */
struct count {
	uint64_t calls, total_ns[2], self_ns;
};

/*
 * Nodes: the root, at most LP_PATHS_MAX indexed ones and one "(other paths)"
 * per node with children (open_new): an id fits 16 bits.
 */
#define NODES_MAX (2 * LP_PATHS_MAX + 2)
_Static_assert(NODES_MAX <= 0xffff, "a node id fits a slot's 16 bits");

/*
 * (parent, name) -> node: a named child in O(1) however wide the tree. A
 * slot is one word, parent << 48 | name << 16 | node, so that a cap's worth
 * of paths is indexed in half a megabyte (a slot of a key and a node took
 * 16 bytes: the index alone was larger than the core's cache, and missed at
 * most opens). 0 is an empty slot: no node is 0 (the root, no child).
 */
struct slot {
	uint64_t v;
};

struct lp_paths {
	struct node *nodes;
	struct count *counts;
	size_t n, cap;
	size_t top;    /* n - 1: the highest id lp_paths_add takes */
	uint64_t kept; /* nodes that are not "(other paths)", the root aside: the index's entries */
	struct slot *slots;
	size_t mask;    /* slots - 1 */
	unsigned shift; /* 64 - log2(slots) */
};

/* A slot's value less its node: (parent, name), parent < NODES_MAX. */
static uint64_t key_of(uint32_t parent, uint32_t name)
{
	return (uint64_t)parent << 32 | name;
}

/* Where key's probe begins. Fibonacci hashing: its top bits mixed by one multiplication. */
static size_t home(const struct lp_paths *p, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> p->shift);
}

/* The slot of key: its entry, or the empty one where it goes. */
static struct slot *slot_of(const struct lp_paths *p, uint64_t key)
{
	size_t i = home(p, key);

	while (p->slots[i].v && p->slots[i].v >> 16 != key)
		i = (i + 1) & p->mask;
	return &p->slots[i];
}

/* An index of nslots slots (a power of two) with the entries of the old one. 0 or -ENOMEM. */
static int reindex(struct lp_paths *p, size_t nslots)
{
	struct slot *old = p->slots, *s = calloc(nslots, sizeof(*s));
	size_t oldn = old ? p->mask + 1 : 0;

	if (!s)
		return -ENOMEM;
	p->slots = s;
	p->mask = nslots - 1;
	p->shift = 64 - (unsigned)__builtin_ctzll(nslots);
	for (size_t i = 0; i < oldn; i++)
		if (old[i].v)
			*slot_of(p, old[i].v >> 16) = old[i];
	free(old);
	return 0;
}

/*
 * A new child of parent, first in its list, indexed at *slot (its slot when
 * the index had room, or NULL) unless it is an "(other paths)": 0 when
 * memory ran out.
 */
static uint32_t node_new(struct lp_paths *p, uint32_t parent, uint32_t name, struct slot *slot)
{
	uint32_t x = (uint32_t)p->n;

	if (p->n >= NODES_MAX)
		return 0; /* not reached: the cap folds first */
	if (p->n == p->cap) {
		size_t cap = p->cap;
		struct node *nodes = lp_grow(p->nodes, &cap, p->n + 1, sizeof(*nodes));
		struct count *counts;

		if (nodes)
			p->nodes = nodes;
		counts = nodes ? realloc(p->counts, cap * sizeof(*counts)) : NULL;
		if (!counts)
			return 0;
		p->counts = counts;
		p->cap = cap;
	}
	if (name != OTHER) {
		if ((p->kept + 1) * 2 > p->mask + 1) {
			if (reindex(p, (p->mask + 1) * 2))
				return 0;
			slot = NULL;
		}
		slot = slot ? slot : slot_of(p, key_of(parent, name));
		*slot = (struct slot){ key_of(parent, name) << 16 | x };
		p->kept++;
	}
	p->nodes[x] = (struct node){ .name = name, .child = NONE, .next = p->nodes[parent].child,
				     .last = LP_PATHS_NOMEM, .last_name = OTHER };
	p->counts[x] = (struct count){ 0 };
	p->nodes[parent].child = x;
	p->top = p->n++;
	return x;
}

struct lp_paths *lp_paths_new(void)
{
	struct lp_paths *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cap = 64;
	p->nodes = malloc(p->cap * sizeof(*p->nodes));
	p->counts = calloc(p->cap, sizeof(*p->counts));
	if (!p->nodes || !p->counts || reindex(p, 1024)) {
		lp_paths_free(p);
		return NULL;
	}
	p->nodes[ROOT] = (struct node){ .name = OTHER, .child = NONE, .next = NONE,
					.last = LP_PATHS_NOMEM, .last_name = OTHER };
	p->n = 1;
	return p;
}

void lp_paths_free(struct lp_paths *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p->nodes);
	free(p->counts);
	free(p);
}

/* A child of parent the index does not have (slot: where it goes): a new node, or a fold. */
static __attribute__((noinline)) uint32_t open_new(struct lp_paths *p, uint32_t parent,
						   uint32_t name, struct slot *slot)
{
	/* Past the cap: the parent's "(other paths)", this name's for good. */
	bool fold = p->kept >= LP_PATHS_MAX;
	uint32_t x = fold ? p->nodes[parent].other : 0;

	if (name == OTHER)
		return LP_PATHS_NOMEM; /* a name the string table had no memory for */
	if (!x) {
		x = node_new(p, parent, fold ? OTHER : name, slot); /* moves the nodes */
		if (fold)
			p->nodes[parent].other = x;
	}
	if (!x)
		return LP_PATHS_NOMEM;
	x |= fold ? FOLD_TOP : 0;
	p->nodes[parent].last = x;
	p->nodes[parent].last_name = name;
	return x;
}

uint32_t lp_paths_open(struct lp_paths *p, uint32_t parent, uint32_t name)
{
	uint64_t key = key_of(parent, name);
	struct node *o;
	struct slot *s;

	/* A folded span's, or out of memory: so is every span under it. */
	if (parent >= p->n)
		return (parent & ~FOLD_TOP) | BELOW;
	o = &p->nodes[parent];
	if (o->last_name == name)
		return o->last;
	/* slot_of's loop, where a match needs no second look at the key. */
	for (size_t i = home(p, key);; i = (i + 1) & p->mask) {
		s = &p->slots[i];
		/* Empty first: the key of name 0 under the root is 0, as an empty slot's. */
		if (!s->v)
			break;
		if (s->v >> 16 == key) {
			o->last = (uint32_t)(s->v & 0xffff);
			o->last_name = name;
			return o->last;
		}
	}
	/* Past the cap, folded (the parent's "(other paths)" made by open_new). */
	if (p->kept >= LP_PATHS_MAX && o->other && name != OTHER) {
		o->last = o->other | FOLD_TOP;
		o->last_name = name;
		return o->last;
	}
	return open_new(p, parent, name, s);
}

int lp_paths_add(struct lp_paths *p, const struct lp_span *s)
{
	uint32_t path = s->path, i = path & INDEX;
	struct count *c;

	if ((size_t)i - 1 >= p->top)
		return path == LP_PATHS_NOMEM ? -ENOMEM : -EINVAL;
	c = &p->counts[i];
	c->calls++;
	c->self_ns += s->self_ns;
	c->total_ns[path >> 31] += s->total_ns;
	return 0;
}

uint64_t lp_paths_kept(const struct lp_paths *p)
{
	return p->kept;
}

uint64_t lp_paths_folded_spans(const struct lp_paths *p)
{
	uint64_t n = 0;

	for (size_t i = 1; i < p->n; i++)
		if (p->nodes[i].name == OTHER)
			n += p->counts[i].calls;
	return n;
}

void lp_paths_each_name(const struct lp_paths *p, void (*fn)(void *ctx, uint32_t id), void *ctx)
{
	for (size_t i = 1; i < p->n; i++)
		if (p->nodes[i].name != OTHER)
			fn(ctx, p->nodes[i].name);
}

static void mark_name(void *ctx, uint32_t id)
{
	strtab_mark(ctx, id);
}

void lp_paths_mark(const struct lp_paths *p, struct strtab *st)
{
	lp_paths_each_name(p, mark_name, st);
}

struct order {
	const struct lp_paths *p;
	const struct strtab *st;
};

static const char *node_text(const struct order *o, const struct node *x, size_t *len)
{
	if (x->name == OTHER) {
		*len = strlen(LP_PATHS_OTHER_NAME);
		return LP_PATHS_OTHER_NAME;
	}
	return strtab_str(o->st, x->name, len);
}

static int cmp_child(const void *a, const void *b, void *ctx)
{
	const struct order *o = ctx;
	uint32_t a_ = *(const uint32_t *)a, b_ = *(const uint32_t *)b;
	const struct node *x = &o->p->nodes[a_], *y = &o->p->nodes[b_];
	const struct count *xc = &o->p->counts[a_], *yc = &o->p->counts[b_];
	size_t xl, yl;
	const char *xs, *ys;
	int c;

	if (xc->total_ns[0] != yc->total_ns[0])
		return xc->total_ns[0] > yc->total_ns[0] ? -1 : 1;
	/* Then by text and calls: the same tree always prints the same. */
	xs = node_text(o, x, &xl);
	ys = node_text(o, y, &yl);
	c = memcmp(xs, ys, xl < yl ? xl : yl);
	if (c || xl != yl)
		return c ? c : xl < yl ? -1 : 1;
	if (xc->calls != yc->calls)
		return xc->calls > yc->calls ? -1 : 1;
	return (x->name == OTHER) - (y->name == OTHER);
}

struct walk {
	const struct lp_paths *p;
	struct order order;
	struct lp_path_node *out;
	size_t n, cap;
};

static int walk(struct walk *w, uint32_t owner, int64_t parent, uint32_t depth)
{
	const struct lp_paths *p = w->p;
	uint32_t *kids = NULL;
	size_t nkids = 0;
	int err = 0;

	for (uint32_t c = p->nodes[owner].child; c != NONE; c = p->nodes[c].next)
		nkids++;
	if (!nkids)
		return 0;
	kids = malloc(nkids * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	nkids = 0;
	for (uint32_t c = p->nodes[owner].child; c != NONE; c = p->nodes[c].next)
		kids[nkids++] = c;
	qsort_r(kids, nkids, sizeof(*kids), cmp_child, &w->order);
	for (size_t i = 0; i < nkids && !err; i++) {
		const struct node *x = &p->nodes[kids[i]];
		const struct count *c = &p->counts[kids[i]];
		struct lp_path_node *out = lp_grow(w->out, &w->cap, w->n + 1, sizeof(*out));

		if (!out) {
			err = -ENOMEM;
			break;
		}
		w->out = out;
		out[w->n] = (struct lp_path_node){
			.parent = parent,
			.name = x->name == OTHER ? 0 : x->name,
			.folded = x->name == OTHER,
			.depth = depth,
			.calls = c->calls,
			.total_ns = c->total_ns[0],
			.self_ns = c->self_ns,
		};
		err = walk(w, kids[i], (int64_t)w->n++, depth + 1);
	}
	free(kids);
	return err;
}

long lp_paths_nodes(const struct lp_paths *p, const struct strtab *st, struct lp_path_node **out)
{
	struct walk w = { .p = p, .order = { p, st } };
	int err = walk(&w, ROOT, -1, 0);

	if (err) {
		free(w.out);
		*out = NULL;
		return err;
	}
	*out = w.out;
	return (long)w.n;
}

int lp_paths_write(const struct lp_paths *p, const struct strtab *st, struct jw *w)
{
	struct lp_path_node *nodes;
	long n = lp_paths_nodes(p, st, &nodes);
	uint64_t folded = 0;

	if (n < 0)
		return (int)n;
	for (long i = 0; i < n; i++)
		if (nodes[i].folded)
			folded += nodes[i].calls;
	jw_obj_begin(w);
	jw_key(w, "max", 3);
	jw_u64(w, LP_PATHS_MAX);
	jw_key(w, "kept", 4);
	jw_u64(w, lp_paths_kept(p));
	jw_key(w, "folded_spans", 12);
	jw_u64(w, folded);
	jw_key(w, "nodes", 5);
	jw_arr_begin(w);
	for (long i = 0; i < n; i++) {
		size_t len = strlen(LP_PATHS_OTHER_NAME);
		const char *name = nodes[i].folded ? LP_PATHS_OTHER_NAME
						   : strtab_str(st, nodes[i].name, &len);

		/* One node per line: a summary of many paths stays readable. */
		jw_break(w);
		jw_obj_begin(w);
		jw_key(w, "parent", 6);
		jw_i64(w, nodes[i].parent);
		jw_key(w, "name", 4);
		jw_str(w, name, len);
		jw_key(w, "calls", 5);
		jw_u64(w, nodes[i].calls);
		jw_key(w, "total_ns", 8);
		jw_u64(w, nodes[i].total_ns);
		jw_key(w, "self_ns", 7);
		jw_u64(w, nodes[i].self_ns);
		jw_key(w, "folded", 6);
		jw_bool(w, nodes[i].folded);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	free(nodes);
	return 0;
}
