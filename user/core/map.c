// SPDX-License-Identifier: MIT
#include "map.h"

#include <stdlib.h>

static uint64_t ent_hash(uint64_t a, uint32_t b)
{
	/* One finaliser, not two: b spread by a multiply is enough before it. */
	return lp_hash64(a ^ ((uint64_t)b * 0x9e3779b97f4a7c15ULL));
}

static int grow(struct lp_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, j;
	struct lp_map_ent *e = calloc(cap, sizeof(*e));

	if (!e)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->e[i].used)
			continue;
		j = ent_hash(m->e[i].a, m->e[i].b) & (cap - 1);
		while (e[j].used)
			j = (j + 1) & (cap - 1);
		e[j] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	return 0;
}

static struct lp_map_ent *slot(const struct lp_map *m, uint64_t a, uint32_t b)
{
	size_t j = ent_hash(a, b) & (m->cap - 1);

	while (m->e[j].used && (m->e[j].a != a || m->e[j].b != b))
		j = (j + 1) & (m->cap - 1);
	return &m->e[j];
}

struct lp_map_ent *lp_map_find(struct lp_map *m, uint64_t a, uint32_t b, bool create)
{
	struct lp_map_ent *e = m->cap ? slot(m, a, b) : NULL;

	if (e && e->used)
		return e;
	if (!create)
		return NULL;
	/* Only an insertion may grow the table: finding a key never moves an entry. */
	if ((m->n + 1) * 2 > m->cap) {
		if (grow(m))
			return NULL;
		e = slot(m, a, b);
	}
	*e = (struct lp_map_ent){ .a = a, .b = b, .used = true };
	m->n++;
	return e;
}

void lp_map_free(struct lp_map *m)
{
	free(m->e);
	m->e = NULL;
	m->n = m->cap = 0;
}
