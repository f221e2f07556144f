// SPDX-License-Identifier: MIT
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

struct str {
	char *s; /* NUL-terminated copy; len excludes the NUL */
	size_t len;
	uint64_t hash;
};

struct strtab {
	struct str *strs;
	size_t n, cap;
	uint32_t *slots; /* id + 1; 0 = empty */
	size_t nslots;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return lp_hash64(h);
}

static int rehash(struct strtab *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = t->strs[i].hash & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = i + 1;
	}
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
	if (rehash(t, 256) || strtab_intern(t, "", 0) != 0) {
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

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t j = h & (t->nslots - 1);
	struct str *e, *strs;

	for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		e = &t->strs[t->slots[j] - 1];
		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
			return t->slots[j] - 1;
	}
	if (t->n >= UINT32_MAX - 1)
		return UINT32_MAX;
	strs = lp_grow(t->strs, &t->cap, t->n + 1, sizeof(*strs));
	if (!strs)
		return UINT32_MAX;
	t->strs = strs;
	e = &t->strs[t->n];
	e->s = malloc(len + 1);
	if (!e->s)
		return UINT32_MAX;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = len;
	e->hash = h;
	t->slots[j] = ++t->n;
	if (t->n * 2 > t->nslots && rehash(t, t->nslots * 2))
		return UINT32_MAX;
	return t->n - 1;
}

const char *strtab_str(const struct strtab *t, uint32_t id, size_t *len)
{
	if (id >= t->n)
		id = 0;
	if (len)
		*len = t->strs[id].len;
	return t->strs[id].s;
}

uint32_t strtab_count(const struct strtab *t)
{
	return t->n;
}
