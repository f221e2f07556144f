// SPDX-License-Identifier: MIT
#include "tracering.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "text.h"

/* The ring's first buffer; it doubles, up to its bound, as events come. */
#define TR_FIRST_BYTES (64u << 10)
#define TR_FIRST_ENTS 1024u

struct tr_ent {
	uint64_t key; /* the end of the span it is, or lies in */
	uint32_t len : 31, inner : 1;
	uint32_t cost;
};

struct tr_held {
	uint64_t start_ns;
	uint32_t len, cost;
};

/* A thread's held events, a stack: those of its innermost open span on top. */
struct tr_thread {
	struct lp_buf bytes;
	struct tr_held *items;
	size_t n, cap;
};

struct lp_tring {
	struct lp_tring_opts o;
	/* window: what the ring and the held events may take; budget: what the output may take */
	uint64_t max;
	/* window: the ring, bytes from head and entries from ehead, each wrapping round */
	char *buf;
	size_t cap, head, used;
	struct tr_ent *ents;
	size_t ecap, ehead, en;
	uint64_t ring_bytes; /* with the overhead */
	uint64_t latest;     /* the latest span end seen */
	uint64_t cut_ns;     /* spans that ended then or before may have gone to make room */
	bool cut_any;
	/* held events, per thread */
	struct lp_map thread_of; /* (pid << 32 | tid, 0) -> v1: threads index + 1 */
	struct tr_thread *threads;
	size_t nthreads, threads_cap;
	uint64_t held_bytes; /* with the overhead */
	/* budget */
	uint64_t written; /* with the overhead */
	/* kept whatever happens */
	struct lp_buf keep;
	uint32_t *keep_lens;
	size_t nkeep, keep_cap;
	bool ended;
	struct lp_tring_stats st;
	struct lp_tring *leader, *follower; /* lp_tring_opts.leader, both ways */
};

static bool window(const struct lp_tring *r)
{
	return r->o.last_ns != 0;
}

static uint64_t cost(const struct lp_tring *r, size_t len)
{
	return (uint64_t)len + r->o.overhead;
}

/* An event the ring cannot hold: its length or cost past their fields. */
static bool too_long(size_t len, uint64_t cost)
{
	return len > LP_TRING_EVENT_MAX || cost > UINT32_MAX;
}

struct lp_tring *lp_tring_new(const struct lp_tring_opts *o)
{
	struct lp_tring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	if (o->leader) {
		r->leader = o->leader;
		o->leader->follower = r;
	}
	if (o->last_ns)
		r->max = o->max_bytes ? o->max_bytes : LP_TRACE_LAST_MEMORY;
	else
		r->max = o->max_bytes > o->used_bytes ? o->max_bytes - o->used_bytes : 0;
	return r;
}

static void free_thread(struct tr_thread *t)
{
	lp_buf_free(&t->bytes);
	free(t->items);
	t->items = NULL;
	t->n = t->cap = 0;
}

void lp_tring_free(struct lp_tring *r)
{
	if (!r)
		return;
	if (r->leader)
		r->leader->follower = NULL;
	if (r->follower)
		r->follower->leader = NULL;
	for (size_t i = 0; i < r->nthreads; i++)
		free_thread(&r->threads[i]);
	free(r->threads);
	lp_map_free(&r->thread_of);
	free(r->buf);
	free(r->ents);
	lp_buf_free(&r->keep);
	free(r->keep_lens);
	free(r);
}

static void note_peak(struct lp_tring *r)
{
	if (r->ring_bytes + r->held_bytes > r->st.peak_bytes)
		r->st.peak_bytes = r->ring_bytes + r->held_bytes;
}

/* ---- window: the ring ---- */

/* The oldest entry leaves the ring; for_room: to make room, cutting the window short. */
static void evict(struct lp_tring *r, bool for_room)
{
	const struct tr_ent *e = &r->ents[r->ehead];

	if (for_room) {
		r->cut_any = true;
		if (e->key > r->cut_ns)
			r->cut_ns = e->key;
	}
	if (e->inner)
		r->st.inner_left_out++;
	else
		r->st.spans_left_out++;
	r->head += e->len;
	if (r->head >= r->cap)
		r->head -= r->cap;
	r->used -= e->len;
	r->ring_bytes -= e->cost;
	if (++r->ehead == r->ecap)
		r->ehead = 0;
	r->en--;
}

/* Spans that ended before the window, which only moves on, go. */
static void expire(struct lp_tring *r)
{
	if (r->latest <= r->o.last_ns)
		return;
	while (r->en && r->ents[r->ehead].key < r->latest - r->o.last_ns)
		evict(r, false);
}

/* Room for need more bytes: the oldest entries go for it. Whether there is. */
static bool make_room(struct lp_tring *r, uint64_t need)
{
	while (r->en && r->ring_bytes + r->held_bytes + need > r->max)
		evict(r, true);
	return r->ring_bytes + r->held_bytes + need <= r->max;
}

/*
 * A ring of cap elements of size, n of them from head on, made newcap long
 * (> cap). realloc, not a copy: a large one moves pages (mremap), never holds
 * both. Wrapped round, the older part (up to the old end) goes to the new end.
 */
static int ring_resize(void **ring, size_t *cap, size_t *head, size_t n, size_t newcap,
		       size_t size)
{
	char *b = realloc(*ring, newcap * size);

	if (!b)
		return -ENOMEM;
	if (*head + n > *cap) {
		size_t tail = *cap - *head;

		memmove(b + (newcap - tail) * size, b + *head * size, tail * size);
		*head = newcap - tail;
	}
	*ring = b;
	*cap = newcap;
	return 0;
}

/* The buffers hold one more entry of len bytes (make_room keeps them within max). */
static int grow(struct lp_tring *r, size_t len)
{
	if (r->used + len > r->cap) {
		size_t cap = r->cap ? r->cap : TR_FIRST_BYTES;
		void *p = r->buf;

		while (cap < r->used + len)
			cap *= 2;
		if (cap > r->max)
			cap = (size_t)r->max;
		if (ring_resize(&p, &r->cap, &r->head, r->used, cap, 1))
			return -ENOMEM;
		r->buf = p;
	}
	if (r->en == r->ecap) {
		void *p = r->ents;

		if (ring_resize(&p, &r->ecap, &r->ehead, r->en, r->ecap ? r->ecap * 2 : TR_FIRST_ENTS,
				sizeof(*r->ents)))
			return -ENOMEM;
		r->ents = p;
	}
	return 0;
}

static int ring_add(struct lp_tring *r, uint64_t key, bool inner, const char *p, size_t len,
		    uint32_t cost)
{
	size_t at, first, i;

	if (grow(r, len))
		return -ENOMEM;
	at = r->head + r->used;
	if (at >= r->cap)
		at -= r->cap;
	first = r->cap - at < len ? r->cap - at : len;
	memcpy(r->buf + at, p, first);
	memcpy(r->buf, p + first, len - first);
	r->used += len;
	i = r->ehead + r->en;
	if (i >= r->ecap)
		i -= r->ecap;
	r->ents[i] = (struct tr_ent){ .key = key, .len = (uint32_t)len, .inner = inner, .cost = cost };
	r->en++;
	r->ring_bytes += cost;
	note_peak(r);
	return 0;
}

/* ---- held events ---- */

static struct tr_thread *thread_of(struct lp_tring *r, uint32_t pid, uint32_t tid, bool create)
{
	struct lp_map_ent *e = lp_map_find(&r->thread_of, (uint64_t)pid << 32 | tid, 0, create);
	struct tr_thread *t;

	if (!e)
		return NULL;
	if (e->v1)
		return &r->threads[e->v1 - 1];
	if (!create)
		return NULL;
	t = lp_grow(r->threads, &r->threads_cap, r->nthreads + 1, sizeof(*t));
	if (!t)
		return NULL; /* the entry stays, v1 0: looked up as absent */
	r->threads = t;
	memset(&t[r->nthreads], 0, sizeof(*t));
	e->v1 = ++r->nthreads;
	return &t[r->nthreads - 1];
}

/* Every held event is left out (budget: the output is full; or the recording ended). */
static void drop_all_held(struct lp_tring *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		r->st.inner_left_out += r->threads[i].n;
		free_thread(&r->threads[i]);
	}
	r->held_bytes = 0;
}

/* The budget is spent: nothing more is written. */
static void fill(struct lp_tring *r)
{
	if (r->st.full)
		return;
	r->st.full = true;
	drop_all_held(r);
}

/* Budget, following a leader: the leader is full (it left this event out). */
static bool leader_full(const struct lp_tring *r)
{
	return r->leader && r->leader->st.full;
}

int lp_tring_inner_cost(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
			const void *ev, size_t len, uint64_t need)
{
	struct tr_thread *t;
	struct tr_held *h;

	if (too_long(len, need)) {
		r->st.inner_left_out++;
		return 0;
	}
	if (!window(r) && (r->st.full || leader_full(r) ||
			   r->written + r->held_bytes + need > r->max)) {
		fill(r);
		r->st.inner_left_out++;
		return 0;
	}
	/* No room even with the ring emptied: the newest go (the older ones are in spans already). */
	if (window(r) && !make_room(r, need)) {
		r->st.inner_left_out++;
		return 0;
	}
	t = thread_of(r, pid, tid, true);
	h = t ? lp_grow(t->items, &t->cap, t->n + 1, sizeof(*h)) : NULL;
	if (!h || lp_buf_put(&t->bytes, ev, len)) {
		if (h)
			t->items = h;
		r->st.inner_left_out++;
		return -ENOMEM;
	}
	t->items = h;
	t->items[t->n++] = (struct tr_held){ .start_ns = start_ns, .len = (uint32_t)len,
					     .cost = (uint32_t)need };
	r->held_bytes += need;
	note_peak(r);
	return 0;
}

int lp_tring_inner(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		   const void *ev, size_t len)
{
	return lp_tring_inner_cost(r, pid, tid, start_ns, ev, len, cost(r, len));
}

/* The top k held events of t, from byte from on, with their overhead own. */
struct unit {
	struct tr_thread *t;
	size_t k, from;
	uint64_t own;
};

static void unit_of(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		    struct unit *u)
{
	size_t bytes = 0;

	memset(u, 0, sizeof(*u));
	u->t = r->nthreads ? thread_of(r, pid, tid, false) : NULL;
	if (!u->t)
		return;
	/* Spans inside this one closed before it: what is left from its start on lies in it. */
	while (u->k < u->t->n && u->t->items[u->t->n - 1 - u->k].start_ns >= start_ns) {
		bytes += u->t->items[u->t->n - 1 - u->k].len;
		u->own += u->t->items[u->t->n - 1 - u->k].cost;
		u->k++;
	}
	u->from = u->t->bytes.len - bytes;
}

static void unit_done(struct lp_tring *r, struct unit *u)
{
	if (!u->k)
		return;
	u->t->n -= u->k;
	u->t->bytes.len = u->from;
	r->held_bytes -= u->own;
}

/* The ring is past the window's start: the window begins after end_ns. */
static void cut_after(struct lp_tring *r, uint64_t end_ns)
{
	r->cut_any = true;
	if (end_ns > r->cut_ns)
		r->cut_ns = end_ns;
}

static int window_span(struct lp_tring *r, struct unit *u, uint64_t end_ns, const char *ev,
		       size_t len, uint64_t need)
{
	size_t off = u->from, i = u->t ? u->t->n - u->k : 0;
	int err = 0;

	if (end_ns > r->latest)
		r->latest = end_ns;
	expire(r);
	if (too_long(len, need) || u->own + need > r->max || !make_room(r, need)) {
		cut_after(r, end_ns);
		r->st.spans_left_out++;
		r->st.inner_left_out += u->k;
		unit_done(r, u);
		return 0;
	}
	while (!err && u->t && i < u->t->n) {
		err = ring_add(r, end_ns, true, u->t->bytes.p + off, u->t->items[i].len,
			       u->t->items[i].cost);
		if (!err)
			off += u->t->items[i++].len;
	}
	if (!err)
		err = ring_add(r, end_ns, false, ev, len, (uint32_t)need);
	if (err) {
		/* Those added are cut with it (no slice without its span). */
		cut_after(r, end_ns);
		r->st.spans_left_out++;
		if (u->t)
			r->st.inner_left_out += u->t->n - i;
	}
	unit_done(r, u);
	return err;
}

/* ---- budget ---- */

static int emit(struct lp_tring *r, const char *p, size_t len)
{
	return r->o.emit(r->o.ctx, p, len, NULL, 0);
}

static int budget_span(struct lp_tring *r, struct unit *u, uint64_t end_ns, const char *ev,
		       size_t len, uint64_t need)
{
	int err = 0, e;
	/* The leader kept as many spans as this ring so far: it left this one out. */
	bool led_out = r->leader && r->leader->st.spans <= r->st.spans;

	if (r->st.full || led_out || too_long(len, need) ||
	    r->written + r->held_bytes + need > r->max) {
		if (!r->st.spans_left_out)
			r->st.full_ns = end_ns;
		r->st.inner_left_out += u->k;
		unit_done(r, u);
		fill(r);
		r->st.spans_left_out++;
		return 0;
	}
	for (size_t i = u->t ? u->t->n - u->k : 0, off = u->from; u->t && i < u->t->n; i++) {
		e = emit(r, u->t->bytes.p + off, u->t->items[i].len);
		err = err ? err : e;
		off += u->t->items[i].len;
	}
	e = emit(r, ev, len);
	err = err ? err : e;
	r->written += u->own + need;
	r->st.inner += u->k;
	r->st.spans++;
	r->st.bytes = r->written;
	unit_done(r, u);
	return err;
}

int lp_tring_span_cost(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		       uint64_t end_ns, const void *ev, size_t len, uint64_t cost)
{
	struct unit u;

	unit_of(r, pid, tid, start_ns, &u);
	return window(r) ? window_span(r, &u, end_ns, ev, len, cost)
			 : budget_span(r, &u, end_ns, ev, len, cost);
}

int lp_tring_span(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		  uint64_t end_ns, const void *ev, size_t len)
{
	return lp_tring_span_cost(r, pid, tid, start_ns, end_ns, ev, len, cost(r, len));
}

int lp_tring_keep(struct lp_tring *r, const void *ev, size_t len)
{
	uint32_t *l = lp_grow(r->keep_lens, &r->keep_cap, r->nkeep + 1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	r->keep_lens = l;
	if (len > UINT32_MAX || lp_buf_put(&r->keep, ev, len))
		return -ENOMEM;
	l[r->nkeep++] = (uint32_t)len;
	return 0;
}

/* The window's start as --trace-last asks for it. */
static uint64_t window_asked(const struct lp_tring *r, uint64_t end_ns)
{
	return end_ns > r->o.last_ns ? end_ns - r->o.last_ns : 0;
}

/* Where the window begins: as asked, or past what its bound made the ring leave. */
static uint64_t window_from(const struct lp_tring *r, uint64_t end_ns)
{
	uint64_t from = window_asked(r, end_ns);

	return r->cut_any && r->cut_ns >= from ? r->cut_ns + 1 : from;
}

/* The end, the window beginning at from (window_from, or a linked ring's later one). */
static void end_at(struct lp_tring *r, uint64_t end_ns, uint64_t from)
{
	size_t j = r->ehead;

	r->ended = true;
	/* Held past every span's end (none: the recording's end closes them all). */
	drop_all_held(r);
	if (!window(r)) {
		if (r->st.full && !r->st.spans_left_out)
			r->st.full_ns = end_ns;
		return;
	}
	r->st.cut = from > window_asked(r, end_ns);
	r->st.from_ns = from;
	/* Entries are in the order spans closed, not of their ends: each is looked at. */
	for (size_t i = 0; i < r->en; i++) {
		const struct tr_ent *e = &r->ents[j];
		bool kept = e->key >= from;
		uint64_t *n = e->inner ? (kept ? &r->st.inner : &r->st.inner_left_out)
				       : (kept ? &r->st.spans : &r->st.spans_left_out);

		(*n)++;
		if (kept)
			r->st.bytes += e->cost;
		if (++j == r->ecap)
			j = 0;
	}
}

void lp_tring_end(struct lp_tring *r, uint64_t end_ns, struct lp_tring_stats *st)
{
	if (!r->ended) {
		struct lp_tring *peer = r->leader ? r->leader : r->follower;
		uint64_t from = window_from(r, end_ns);

		if (peer && !peer->ended) {
			uint64_t f = window_from(peer, end_ns);

			from = f > from ? f : from;
			end_at(peer, end_ns, from);
		}
		end_at(r, end_ns, from);
	}
	if (st)
		*st = r->st;
}

int lp_tring_flush(struct lp_tring *r)
{
	size_t at = r->head, j = r->ehead, off = 0;
	int err = 0, e;

	if (!r->ended)
		lp_tring_end(r, r->latest, NULL);
	for (size_t i = 0; window(r) && i < r->en; i++) {
		const struct tr_ent *ent = &r->ents[j];
		size_t first = r->cap - at < ent->len ? r->cap - at : ent->len;

		if (ent->key >= r->st.from_ns) {
			e = r->o.emit(r->o.ctx, r->buf + at, first, r->buf, ent->len - first);
			err = err ? err : e;
		}
		at += ent->len;
		if (at >= r->cap)
			at -= r->cap;
		if (++j == r->ecap)
			j = 0;
	}
	for (size_t i = 0; i < r->nkeep; i++) {
		e = emit(r, r->keep.p + off, r->keep_lens[i]);
		err = err ? err : e;
		off += r->keep_lens[i];
	}
	return err;
}
