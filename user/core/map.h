/* SPDX-License-Identifier: MIT */
/*
 * The one hash map of the core: open addressing from a (u64, u32) key to two
 * u64 values. Threads, groups, literals and names are all found through it.
 */
#ifndef LP_MAP_H
#define LP_MAP_H

#include "common.h"

struct lp_map_ent {
	uint64_t a;
	uint32_t b;
	bool used;
	uint64_t v1, v2; /* a new entry starts with both 0 */
};

struct lp_map {
	struct lp_map_ent *e;
	size_t n, cap; /* cap: a power of two */
};

/*
 * The entry of key (a, b); with create, a new zeroed one when absent. NULL when
 * absent, or on ENOMEM. A pointer is valid until the next create that inserts
 * (finding an existing key, with or without create, moves nothing).
 */
struct lp_map_ent *lp_map_find(struct lp_map *m, uint64_t a, uint32_t b, bool create);
void lp_map_free(struct lp_map *m);

#endif
