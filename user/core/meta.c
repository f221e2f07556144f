// SPDX-License-Identifier: MIT
#include "meta.h"
#include "jsonw.h"

#include <stdio.h>
#include "text.h"

#include <string.h>

static void trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

/* True when s holds another non-empty item. */
static bool more_items(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ',' && s[i] != ' ' && s[i] != '\t')
			return true;
	return false;
}

size_t lp_meta_parse(const char *text, size_t len, struct lp_meta_item *items, size_t max)
{
	size_t n = 0, pos = 0;

	if (max == 0)
		return 0;
	while (pos < len) {
		const char *item = text + pos, *comma = memchr(item, ',', len - pos), *eq;
		size_t ilen = comma ? (size_t)(comma - item) : len - pos;
		struct lp_meta_item *it;

		pos += ilen + (comma ? 1 : 0);
		trim(&item, &ilen);
		if (ilen == 0)
			continue;
		it = &items[n];
		if (n == max - 1 && more_items(text + pos, len - pos)) {
			/* Out of room: keep the rest verbatim rather than drop it. */
			it->key = "_rest";
			it->key_len = 5;
			it->val = item;
			it->val_len = (size_t)(text + len - item);
			it->dup = 0;
			return n + 1;
		}
		eq = memchr(item, '=', ilen);
		it->key = item;
		it->key_len = eq ? (size_t)(eq - item) : ilen;
		it->val = eq ? eq + 1 : item + ilen;
		it->val_len = eq ? ilen - it->key_len - 1 : 0;
		trim(&it->key, &it->key_len);
		trim(&it->val, &it->val_len);
		it->dup = 0;
		for (size_t j = 0; j < n; j++)
			if (items[j].key_len == it->key_len &&
			    memcmp(items[j].key, it->key, it->key_len) == 0)
				it->dup++;
		n++;
	}
	return n;
}

static bool key_taken(const struct lp_meta_key *keys, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i].len == len && memcmp(keys[i].s, s, len) == 0)
			return true;
	return false;
}

static bool is_reserved(const char *const *reserved, const char *s, size_t len)
{
	for (; reserved && *reserved; reserved++)
		if (strlen(*reserved) == len && memcmp(*reserved, s, len) == 0)
			return true;
	return false;
}

void lp_meta_keys(const struct lp_meta_item *items, size_t n, const char *const *reserved,
		  struct lp_meta_key *keys)
{
	for (size_t i = 0; i < n; i++) {
		struct lp_buf b = { 0 };
		struct lp_meta_key *k = &keys[i];
		size_t len = 0, base;

		/* Valid UTF-8 first: two different invalid keys may become the same text. */
		if (lp_utf8_sanitize(&b, items[i].key, items[i].key_len) == 0 && b.p) {
			/* A key is a C string, as everything the kernel reads: a NUL ends it. */
			b.len = strnlen(b.p, b.len);
			len = b.len < LP_META_KEY_MAX ? b.len : LP_META_KEY_MAX;
			while (len > 0 && len < b.len && ((unsigned char)b.p[len] & 0xc0) == 0x80)
				len--;
		}
		k->len = 0;
		if (is_reserved(reserved, b.p ? b.p : "", len)) {
			memcpy(k->s, "meta.", 5);
			k->len = 5;
		}
		if (len)
			memcpy(k->s + k->len, b.p, len);
		k->len += len;
		lp_buf_free(&b);
		base = k->len;
		for (unsigned nth = 2; key_taken(keys, i, k->s, k->len); nth++)
			k->len = base + (size_t)snprintf(k->s + base, sizeof(k->s) - base, "#%u", nth);
		k->s[k->len] = '\0';
	}
}

void lp_meta_write(struct jw *w, const char *text, size_t len, const char *const *reserved)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	size_t n = lp_meta_parse(text, len, items, ARRAY_SIZE(items));

	lp_meta_keys(items, n, reserved, keys);
	for (size_t i = 0; i < n; i++) {
		jw_key(w, keys[i].s, keys[i].len);
		jw_str(w, items[i].val, items[i].val_len);
	}
}
