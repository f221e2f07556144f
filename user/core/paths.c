// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* qsort_r */
#include "paths.h"
#include "map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define OTHER UINT32_MAX /* the name of an "(other paths)" node: never a string id */
#define ROOT 0           /* the tree's holder: node 0 */

/*
 * A node is a path of the tree, a path of a thread's open aggregate, or a
 * holder: the parent of the top-level spans (ROOT), or of a thread's
 * completed spans at one depth whose parent is still open.
 */
enum kind { K_FREE, K_HOLDER, K_TREE, K_OPEN };

struct node {
	uint32_t name;
	uint32_t owner; /* parent node or holder */
	uint32_t child; /* first child */
	uint32_t next;  /* next sibling; next free node */
	uint8_t kind;
	bool indexed; /* its children of class K_OPEN are in the open index (see WIDE) */
	/*
	 * The first child's name: a loop repeats the child it just added, which
	 * is then found without reading that child (in the padding: still 48 bytes).
	 */
	uint32_t child_name;
	uint64_t calls, total_ns, self_ns;
};

/* (owner, name) -> node: finds a child by name in O(1) however wide the tree. */
struct slot {
	uint32_t owner, name, node; /* node NONE: empty */
};

/*
 * Children of tree nodes and children of open aggregates are indexed apart:
 * the open ones come and go with every span, so their table stays small and
 * in cache instead of sharing the tree's (~1.5 MiB at the cap), where every
 * insertion and removal was a cache miss.
 */
struct index {
	struct slot *slots;
	size_t nslots, used;
};

/*
 * An open node's children are found by walking its list while they are
 * fewer than this, and indexed from then on: most open spans have a few
 * children, which are in cache, where hashing each one in and out of the
 * index cost three lookups per span.
 */
#define WIDE 8

struct thread {
	uint32_t *level; /* level[d]: holder of the completed spans at depth d, or NONE */
	uint32_t nlevel;
	uint32_t pid, tid;
};

/* Threads found by tid without the map, most of the time: their spans interleave. */
#define RECENT_THREADS 64

struct lp_paths {
	struct node *nodes;
	size_t n, cap;
	uint32_t free_list;
	uint64_t kept[K_OPEN + 1]; /* regular nodes of the tree (K_TREE), of open aggregates */
	struct index tree_index, open_index; /* children of class K_TREE, of K_OPEN */
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct lp_map thread_index; /* (pid, tid) -> v1: thread index + 1 */
	uint32_t recent[RECENT_THREADS]; /* by tid % RECENT_THREADS: thread index + 1, or 0 */
};

/* The index of children of class cls (K_TREE or K_OPEN). */
static struct index *index_of(struct lp_paths *p, enum kind cls)
{
	return cls == K_TREE ? &p->tree_index : &p->open_index;
}

static size_t slot_of(const struct index *ix, uint32_t owner, uint32_t name)
{
	return lp_hash64(((uint64_t)owner << 32) | name) & (ix->nslots - 1);
}

static uint32_t find(const struct index *ix, uint32_t owner, uint32_t name)
{
	for (size_t i = slot_of(ix, owner, name);; i = (i + 1) & (ix->nslots - 1)) {
		const struct slot *s = &ix->slots[i];

		if (s->node == NONE)
			return NONE;
		if (s->owner == owner && s->name == name)
			return s->node;
	}
}

static int rehash(struct index *ix, size_t nslots)
{
	struct slot *old = ix->slots, *s = malloc(nslots * sizeof(*s));
	size_t oldn = ix->nslots;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < nslots; i++)
		s[i].node = NONE;
	ix->slots = s;
	ix->nslots = nslots;
	for (size_t i = 0; i < oldn; i++) {
		size_t j;

		if (old[i].node == NONE)
			continue;
		for (j = slot_of(ix, old[i].owner, old[i].name); s[j].node != NONE;
		     j = (j + 1) & (nslots - 1))
			;
		s[j] = old[i];
	}
	free(old);
	return 0;
}

static int index_add(struct index *ix, uint32_t owner, uint32_t name, uint32_t node)
{
	size_t i;

	if ((ix->used + 1) * 2 > ix->nslots && rehash(ix, ix->nslots * 2))
		return -ENOMEM;
	for (i = slot_of(ix, owner, name); ix->slots[i].node != NONE;
	     i = (i + 1) & (ix->nslots - 1))
		;
	ix->slots[i] = (struct slot){ owner, name, node };
	ix->used++;
	return 0;
}

/* Linear probing's deletion: later entries of the run move back into the hole. */
static void index_remove(struct index *ix, uint32_t owner, uint32_t name)
{
	size_t mask = ix->nslots - 1, i = slot_of(ix, owner, name), j;

	while (ix->slots[i].node != NONE &&
	       (ix->slots[i].owner != owner || ix->slots[i].name != name))
		i = (i + 1) & mask;
	if (ix->slots[i].node == NONE)
		return;
	ix->used--;
	for (j = i;;) {
		size_t home;

		ix->slots[i].node = NONE;
		do {
			j = (j + 1) & mask;
			if (ix->slots[j].node == NONE)
				return;
			home = slot_of(ix, ix->slots[j].owner, ix->slots[j].name);
			/* Stays when its home lies cyclically in (i, j]. */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		ix->slots[i] = ix->slots[j];
		i = j;
	}
}

static uint32_t node_new(struct lp_paths *p, enum kind kind, uint32_t name)
{
	uint32_t i;

	if (p->free_list != NONE) {
		i = p->free_list;
		p->free_list = p->nodes[i].next;
	} else {
		struct node *nodes;

		if (p->n >= NONE - 1)
			return NONE;
		nodes = lp_grow(p->nodes, &p->cap, p->n + 1, sizeof(*nodes));
		if (!nodes)
			return NONE;
		p->nodes = nodes;
		i = (uint32_t)p->n++;
	}
	p->nodes[i] = (struct node){ .name = name, .owner = NONE, .child = NONE, .next = NONE,
				     .kind = (uint8_t)kind };
	if ((kind == K_TREE || kind == K_OPEN) && name != OTHER)
		p->kept[kind]++;
	return i;
}

static void node_free(struct lp_paths *p, uint32_t i)
{
	struct node *x = &p->nodes[i];

	if ((x->kind == K_TREE || x->kind == K_OPEN) && x->name != OTHER)
		p->kept[x->kind]--;
	x->kind = K_FREE;
	x->next = p->free_list;
	p->free_list = i;
}

struct lp_paths *lp_paths_new(void)
{
	struct lp_paths *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->free_list = NONE;
	if (rehash(&p->tree_index, 1024) || rehash(&p->open_index, 1024) ||
	    node_new(p, K_HOLDER, OTHER) != ROOT) {
		lp_paths_free(p);
		return NULL;
	}
	return p;
}

void lp_paths_free(struct lp_paths *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].level);
	free(p->threads);
	lp_map_free(&p->thread_index);
	free(p->tree_index.slots);
	free(p->open_index.slots);
	free(p->nodes);
	free(p);
}

static void link_child(struct lp_paths *p, uint32_t owner, uint32_t x)
{
	p->nodes[x].owner = owner;
	p->nodes[x].next = p->nodes[owner].child;
	p->nodes[owner].child = x;
	p->nodes[owner].child_name = p->nodes[x].name;
}

/* Takes x's children off it (their index entries too): the caller places each again. */
static uint32_t take_children(struct lp_paths *p, uint32_t x)
{
	uint32_t list = p->nodes[x].child;
	bool indexed = p->nodes[x].indexed;

	p->nodes[x].child = NONE;
	p->nodes[x].indexed = false;
	for (uint32_t c = list; c != NONE; c = p->nodes[c].next) {
		const struct node *n = &p->nodes[c];

		if (n->kind == K_TREE || indexed)
			index_remove(index_of(p, n->kind), x, n->name);
	}
	return list;
}

/*
 * owner's child of that name among its children of class cls, or NONE, when
 * *len is set to how many children a walk went through (see attach).
 */
static uint32_t lookup(struct lp_paths *p, uint32_t owner, uint32_t name, enum kind cls,
		       uint32_t *len)
{
	const struct node *o = &p->nodes[owner];
	uint32_t n = 0;

	*len = 0;
	/* Loops repeat a child: the newest one first. */
	if (o->child != NONE && o->child_name == name)
		return o->child;
	if (cls == K_TREE || o->indexed)
		return find(index_of(p, cls), owner, name);
	for (uint32_t c = o->child; c != NONE; c = p->nodes[c].next, n++)
		if (p->nodes[c].name == name)
			return c;
	*len = n;
	return NONE;
}

/*
 * Links x (no child of owner has its name) as owner's child of class cls:
 * indexed when owner's children are, or are now WIDE (len: how many it had,
 * from lookup()).
 */
static int attach(struct lp_paths *p, uint32_t owner, uint32_t x, enum kind cls, uint32_t len)
{
	if (cls == K_OPEN && !p->nodes[owner].indexed) {
		if (len + 1 < WIDE) {
			link_child(p, owner, x);
			return 0;
		}
		p->nodes[owner].indexed = true;
		for (uint32_t c = p->nodes[owner].child; c != NONE; c = p->nodes[c].next)
			if (index_add(&p->open_index, owner, p->nodes[c].name, c))
				return -ENOMEM;
	}
	if (index_add(index_of(p, cls), owner, p->nodes[x].name, x))
		return -ENOMEM;
	link_child(p, owner, x);
	return 0;
}

/* Adds the calls and self time of x and everything below it to f, and frees them. */
static void absorb(struct lp_paths *p, uint32_t f, uint32_t x)
{
	uint32_t c = p->nodes[x].child == NONE ? NONE : take_children(p, x);

	p->nodes[f].calls += p->nodes[x].calls;
	p->nodes[f].self_ns += p->nodes[x].self_ns;
	while (c != NONE) {
		uint32_t next = p->nodes[c].next;

		absorb(p, f, c);
		c = next;
	}
	node_free(p, x);
}

/* x's path is past the cap: it and its subtree go into owner's "(other paths)". */
static int fold(struct lp_paths *p, uint32_t owner, uint32_t x, enum kind cls)
{
	uint32_t len, f = lookup(p, owner, OTHER, cls, &len);

	if (f == NONE) {
		f = node_new(p, cls, OTHER);
		if (f == NONE || attach(p, owner, f, cls, len))
			return -ENOMEM;
	}
	p->nodes[f].total_ns += p->nodes[x].total_ns; /* x's subtree is inside x's total */
	absorb(p, f, x);
	return 0;
}

static int place(struct lp_paths *p, uint32_t owner, uint32_t x, enum kind cls, bool fresh);

/* Places each of x's children (taken off x) under owner. */
static int place_children(struct lp_paths *p, uint32_t owner, uint32_t x, enum kind cls,
			  bool fresh)
{
	uint32_t c, next;
	int err = 0;

	if (p->nodes[x].child == NONE)
		return 0; /* most nodes: a call less per span */
	for (c = take_children(p, x); c != NONE && !err; c = next) {
		next = p->nodes[c].next;
		err = place(p, owner, c, cls, fresh);
	}
	return err;
}

/*
 * Places the detached node x (with its subtree) under owner, whose nodes are
 * of class cls: merged into owner's child of the same name, or linked as a
 * new child when the class has room, or folded. Its children follow it.
 * fresh: owner had no children of class cls before its own children of the
 * other class began to follow it, so of those (whose names differ) only an
 * "(other paths)" may find one to merge into; the others need no lookup.
 */
static int place(struct lp_paths *p, uint32_t owner, uint32_t x, enum kind cls, bool fresh)
{
	uint32_t name = p->nodes[x].name, y = NONE, len = 0;
	enum kind was = p->nodes[x].kind;
	int err;

	if (!fresh || name == OTHER)
		y = lookup(p, owner, name, cls, &len);
	if (y != NONE) {
		p->nodes[y].calls += p->nodes[x].calls;
		p->nodes[y].total_ns += p->nodes[x].total_ns;
		p->nodes[y].self_ns += p->nodes[x].self_ns;
		err = place_children(p, y, x, cls, false);
		node_free(p, x);
		return err;
	}
	if (was != cls && name != OTHER) {
		p->kept[was]--;
		p->kept[cls]++;
	}
	p->nodes[x].kind = (uint8_t)cls;
	if (name != OTHER && p->kept[cls] > LP_PATHS_MAX)
		return fold(p, owner, x, cls);
	if (attach(p, owner, x, cls, len))
		return -ENOMEM;
	if (was == cls)
		return 0;
	/* Its children were counted in the other class: each needs room in this one. */
	return place_children(p, x, x, cls, true);
}

static struct thread *get_thread(struct lp_paths *p, uint32_t pid, uint32_t tid)
{
	uint32_t *recent = &p->recent[tid % RECENT_THREADS];
	struct lp_map_ent *e;
	struct thread *t;

	if (*recent) {
		t = &p->threads[*recent - 1];
		if (t->tid == tid && t->pid == pid)
			return t;
	}
	e = lp_map_find(&p->thread_index, pid, tid, true);
	if (!e)
		return NULL;
	if (!e->v1) {
		t = lp_grow(p->threads, &p->threads_cap, p->nthreads + 1, sizeof(*t));
		if (!t)
			return NULL;
		p->threads = t;
		p->threads[p->nthreads] = (struct thread){ .pid = pid, .tid = tid };
		e->v1 = ++p->nthreads;
	}
	*recent = (uint32_t)e->v1;
	return &p->threads[e->v1 - 1];
}

static int ensure_levels(struct thread *t, uint32_t n)
{
	uint32_t *level;

	if (n <= t->nlevel)
		return 0;
	level = realloc(t->level, n * sizeof(*level));
	if (!level)
		return -ENOMEM;
	for (uint32_t i = t->nlevel; i < n; i++)
		level[i] = NONE;
	t->level = level;
	t->nlevel = n;
	return 0;
}

/*
 * A top-level span completed: every deeper aggregate of the thread has been
 * taken by its parent. A stream that broke nesting may leave some: their
 * spans become top-level paths (no time is lost), and the holders go.
 */
static int end_of_root(struct lp_paths *p, struct thread *t)
{
	int err = 0;

	for (uint32_t d = 1; d < t->nlevel; d++) {
		uint32_t h = t->level[d];
		int e;

		if (h == NONE)
			continue;
		e = place_children(p, ROOT, h, K_TREE, false);
		err = err ? err : e;
		node_free(p, h);
		t->level[d] = NONE;
	}
	return err;
}

int lp_paths_add(struct lp_paths *p, const struct lp_span *s)
{
	struct thread *t;
	uint32_t d = s->depth, x, owner;
	struct node *n;
	int err;

	if (d > LP_NEST_MAX_DEPTH)
		return -EINVAL;
	t = get_thread(p, s->pid, s->tid);
	if (!t || ensure_levels(t, d + 2))
		return -ENOMEM;
	/* The aggregate of its children becomes the span's node: their index stays valid. */
	x = t->level[d + 1];
	t->level[d + 1] = NONE;
	if (x == NONE) {
		x = node_new(p, K_OPEN, s->name);
		if (x == NONE)
			return -ENOMEM;
	} else {
		p->nodes[x].kind = K_OPEN;
		p->nodes[x].name = s->name;
		p->kept[K_OPEN]++;
	}
	n = &p->nodes[x];
	n->calls = 1;
	n->total_ns = s->total_ns;
	n->self_ns = s->self_ns;
	if (d == 0) {
		err = place(p, ROOT, x, K_TREE, false);
		return err ? err : end_of_root(p, t);
	}
	owner = t->level[d];
	if (owner == NONE) {
		owner = node_new(p, K_HOLDER, OTHER);
		if (owner == NONE)
			return -ENOMEM;
		t->level[d] = owner;
	}
	return place(p, owner, x, K_OPEN, false);
}

uint64_t lp_paths_kept(const struct lp_paths *p)
{
	return p->kept[K_TREE];
}

uint64_t lp_paths_folded_spans(const struct lp_paths *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		if (p->nodes[i].kind == K_TREE && p->nodes[i].name == OTHER)
			n += p->nodes[i].calls;
	return n;
}

void lp_paths_each_name(const struct lp_paths *p, void (*fn)(void *ctx, uint32_t id), void *ctx)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct node *x = &p->nodes[i];

		if ((x->kind == K_TREE || x->kind == K_OPEN) && x->name != OTHER)
			fn(ctx, x->name);
	}
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
	const struct node *x = &o->p->nodes[*(const uint32_t *)a];
	const struct node *y = &o->p->nodes[*(const uint32_t *)b];
	size_t xl, yl;
	const char *xs, *ys;
	int c;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	/* Then by text and calls: the same tree always prints the same. */
	xs = node_text(o, x, &xl);
	ys = node_text(o, y, &yl);
	c = memcmp(xs, ys, xl < yl ? xl : yl);
	if (c || xl != yl)
		return c ? c : xl < yl ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
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
			.calls = x->calls,
			.total_ns = x->total_ns,
			.self_ns = x->self_ns,
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
