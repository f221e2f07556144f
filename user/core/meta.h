/* SPDX-License-Identifier: MIT */
/*
 * Span metadata: "key=value, key=value". Items are separated by ','; spaces
 * around items, keys and values are dropped; a key ends at the first '='. An
 * item without '=' becomes a key with an empty value; empty items are skipped;
 * a repeated key keeps every value (see lp_meta_keys), so nothing the program
 * said is lost and JSON objects keep unique keys.
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

#define LP_META_KEY_MAX 64 /* bytes of a key kept in the outputs, cut between characters */

struct lp_meta_key {
	char s[LP_META_KEY_MAX + 32]; /* "meta." + key + "#N": valid UTF-8, NUL-terminated */
	size_t len;                   /* strlen(s) */
};

/*
 * The keys the outputs give items, all distinct, so that a JSON object loses
 * no value: the key made valid UTF-8, ended at a NUL byte if it holds one, and
 * cut to LP_META_KEY_MAX bytes;
 * "meta.KEY" when it is one of reserved (a NULL-terminated list, or NULL);
 * then, when an earlier item took it, "KEY#2", "KEY#3", ...
 */
void lp_meta_keys(const struct lp_meta_item *items, size_t n, const char *const *reserved,
		  struct lp_meta_key *keys);

/*
 * Splits text (not modified, not NUL-terminated) into items; returns the
 * number of items written to items[], at most max. Text past the max-th item
 * is returned as one extra item with key "_rest".
 */
size_t lp_meta_parse(const char *text, size_t len, struct lp_meta_item *items, size_t max);

struct jw;

/* The items of text as members of the JSON object w is in: "k":"v","k2":"v2" (lp_meta_keys). */
void lp_meta_write(struct jw *w, const char *text, size_t len, const char *const *reserved);

#endif
