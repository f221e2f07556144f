/* SPDX-License-Identifier: MIT */
/*
 * Span metadata: "key=value, key=value". Items are separated by ','; spaces
 * around items, keys and values are dropped; a key ends at the first '='. An
 * item without '=' becomes a key with an empty value; empty items are skipped;
 * a repeated key keeps every value, the later ones as "key#2", "key#3", ...
 * so nothing the program said is lost and JSON objects keep unique keys.
 */
#ifndef LP_META_H
#define LP_META_H

#include "common.h"

#define LP_META_MAX_ITEMS 64 /* items beyond this are kept in "_rest" */

struct lp_meta_item {
	const char *key;
	size_t key_len;
	const char *val;
	size_t val_len;
	unsigned dup; /* 0 for the first use of key, n for its (n+1)th */
};

/*
 * Splits text (not modified, not NUL-terminated) into items; returns the
 * number of items written to items[], at most max. Text past the max-th item
 * is returned as one extra item with key "_rest".
 */
size_t lp_meta_parse(const char *text, size_t len, struct lp_meta_item *items, size_t max);

#endif
