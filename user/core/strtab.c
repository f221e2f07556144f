// SPDX-License-Identifier: MIT
#include "strtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each text has its own allocation: a collection frees the dead ones where
 * they are, and never moves a live one (a pointer strtab_str() gave stays
 * valid while its id lives).
 */
struct str {
	char *s; /* NUL-terminated copy; NULL: the id is free */
	union {
		uint64_t hash;      /* in use */
		uint64_t next_free; /* free: the next free id + 1, 0 at the end */
	};
	uint32_t len;  /* excludes the NUL */
	uint32_t mark; /* the collection that last found it held (epoch) */
};

/*
 * What strtab_bytes() counts for a text besides its bytes and NUL: its entry,
 * about two index slots, and malloc's header and rounding. Tiny texts then
 * trigger collections as their real cost does.
 */
#define STR_OVERHEAD (sizeof(struct str) + 2 * sizeof(uint32_t) + 16)
/* Index slots per live id after a collection: the index is at most half full until it grows. */
#define SLOTS_PER_ID 4
#define MIN_SLOTS 256

struct strtab {
	struct str *strs;
	size_t n, cap;  /* ids handed out, free ones included */
	size_t top;     /* the most n ever was: ids from n to it were freed */
	uint32_t *slots; /* id + 1 of the ids in use; 0 = empty */
	size_t nslots;
	uint32_t live;       /* ids in use, id 0 included */
	uint64_t free_head;  /* the lowest free id + 1; 0: none */
	uint32_t epoch;      /* collections begun + 1 */
	size_t bytes;        /* what the ids in use cost (cost()) */
	size_t bytes_after_gc; /* ... right after the last collection */
};

#ifdef LP_STRTAB_POISON
static const char poison[LP_STRTAB_POISON_LEN + 1] = {
	[0 ... LP_STRTAB_POISON_LEN - 1] = (char)LP_STRTAB_POISON_BYTE,
};
#endif

static size_t cost(size_t len)
{
	return len + 1 + STR_OVERHEAD;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return lp_hash64(h);
}

/* Puts every id in use into slots (nslots of them, all empty). */
static void fill_index(const struct strtab *t, uint32_t *slots, size_t nslots)
{
	for (size_t i = 0; i < t->n; i++) {
		size_t j;

		if (!t->strs[i].s)
			continue;
		j = t->strs[i].hash & (nslots - 1);
		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = i + 1;
	}
}

static int rehash(struct strtab *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	fill_index(t, slots, nslots);
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

struct strtab *strtab_new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->epoch = 1;
	if (rehash(t, MIN_SLOTS) || strtab_intern(t, "", 0) != 0) {
		strtab_free(t);
		return NULL;
	}
	return t;
}

void strtab_free(struct strtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->strs[i].s);
	free(t->strs);
	free(t->slots);
	free(t);
}

/* A free id (the lowest), or a new one. UINT32_MAX when there is none. */
static uint32_t take_id(struct strtab *t)
{
	struct str *strs;
	uint32_t id;

	if (t->free_head) {
		id = (uint32_t)(t->free_head - 1);
		t->free_head = t->strs[id].next_free;
		return id;
	}
	if (t->n >= UINT32_MAX - 1)
		return UINT32_MAX;
	strs = lp_grow(t->strs, &t->cap, t->n + 1, sizeof(*strs));
	if (!strs)
		return UINT32_MAX;
	t->strs = strs;
	if (t->n + 1 > t->top)
		t->top = t->n + 1;
	return (uint32_t)t->n++;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t j = h & (t->nslots - 1);
	struct str *e;
	uint32_t id;
	char *copy;

	for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		e = &t->strs[t->slots[j] - 1];
		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
			/* Whoever asked holds it now: a collection under way keeps it. */
			e->mark = t->epoch;
			return t->slots[j] - 1;
		}
	}
	if (len >= UINT32_MAX)
		return UINT32_MAX;
	copy = malloc(len + 1);
	if (!copy)
		return UINT32_MAX;
	id = take_id(t);
	if (id == UINT32_MAX) {
		free(copy);
		return UINT32_MAX;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->strs[id] = (struct str){ .s = copy, .hash = h, .len = (uint32_t)len, .mark = t->epoch };
	t->slots[j] = id + 1;
	t->live++;
	t->bytes += cost(len);
	if ((size_t)t->live * 2 > t->nslots && rehash(t, t->nslots * 2))
		return UINT32_MAX;
	return id;
}

/* Whether id was handed out and freed since (not only never handed out). */
static bool was_freed(const struct strtab *t, uint32_t id)
{
	return id < t->n ? !t->strs[id].s : id < t->top;
}

const char *strtab_str(const struct strtab *t, uint32_t id, size_t *len)
{
	const struct str *e = &t->strs[id < t->n ? id : 0];

	if (was_freed(t, id)) {
#ifdef LP_STRTAB_POISON
		if (len)
			*len = LP_STRTAB_POISON_LEN;
		return poison;
#else
		e = &t->strs[0];
#endif
	}
	if (len)
		*len = e->len;
	return e->s;
}

uint32_t strtab_count(const struct strtab *t)
{
	return (uint32_t)t->n;
}

uint32_t strtab_live(const struct strtab *t)
{
	return t->live;
}

bool strtab_is_live(const struct strtab *t, uint32_t id)
{
	return id < t->n && t->strs[id].s;
}

uint64_t strtab_hash(const struct strtab *t, uint32_t id)
{
	return strtab_is_live(t, id) ? t->strs[id].hash : 0;
}

size_t strtab_bytes(const struct strtab *t)
{
	return t->bytes;
}

bool strtab_gc_due(const struct strtab *t)
{
	size_t since = t->bytes - t->bytes_after_gc; /* only interns add between collections */
	size_t floor = t->bytes_after_gc > LP_STRTAB_GC_FLOOR ? t->bytes_after_gc
							       : LP_STRTAB_GC_FLOOR;

	return since > floor;
}

void strtab_gc_begin(struct strtab *t)
{
	/* Every mark is now older than the epoch; after a wrap, old marks would look new. */
	if (++t->epoch == 0) {
		for (size_t i = 0; i < t->n; i++)
			t->strs[i].mark = 0;
		t->epoch = 1;
	}
	t->strs[0].mark = t->epoch;
}

void strtab_mark(struct strtab *t, uint32_t id)
{
#ifdef LP_STRTAB_POISON
	if (was_freed(t, id)) {
		fprintf(stderr, "strtab: id %u is marked, but was freed by an earlier collection\n",
			id);
		abort();
	}
#endif
	if (id < t->n)
		t->strs[id].mark = t->epoch;
}

static void free_text(struct strtab *t, struct str *e)
{
#ifdef LP_STRTAB_POISON
	memset(e->s, LP_STRTAB_POISON_BYTE, e->len);
#endif
	free(e->s);
	e->s = NULL;
	t->bytes -= cost(e->len);
	t->live--;
}

/*
 * The free ids chained lowest first, so that ids stay dense; free ids at the
 * top are given back to the count.
 */
static void chain_free_ids(struct strtab *t)
{
	while (t->n > 1 && !t->strs[t->n - 1].s)
		t->n--;
	t->free_head = 0;
	for (size_t i = t->n; i-- > 1;) {
		if (t->strs[i].s)
			continue;
		t->strs[i].next_free = t->free_head;
		t->free_head = i + 1;
	}
}

/* The index of the ids left, sized for them; in place when no memory is left for another. */
static void reindex(struct strtab *t)
{
	size_t want = MIN_SLOTS;

	while (want < (size_t)t->live * SLOTS_PER_ID)
		want *= 2;
	if (want != t->nslots && rehash(t, want) == 0)
		return;
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	fill_index(t, t->slots, t->nslots);
}

void strtab_gc_end(struct strtab *t, void (*on_freed)(void *ctx, uint32_t id), void *ctx,
		   struct strtab_gc_result *res)
{
	struct strtab_gc_result r = { 0 };
	size_t before = t->bytes;

	for (size_t i = 1; i < t->n; i++) {
		struct str *e = &t->strs[i];

		if (!e->s || e->mark == t->epoch)
			continue;
		free_text(t, e);
		r.freed_ids++;
		if (on_freed)
			on_freed(ctx, (uint32_t)i);
	}
	if (r.freed_ids) {
		chain_free_ids(t);
		reindex(t);
	}
	t->bytes_after_gc = t->bytes;
	r.freed_bytes = before - t->bytes;
	r.live_ids = t->live;
	r.live_bytes = t->bytes;
	if (res)
		*res = r;
}
