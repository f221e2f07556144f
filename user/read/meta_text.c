// SPDX-License-Identifier: MIT
#include "meta_text.h"

#include <errno.h>
#include <string.h>

#include "meta.h"
#include "trace_read.h"

/* The key an item had before lp_meta_keys() made it longer than its cut: without its "#N". */
static size_t input_key_len(const char *k, size_t len)
{
	size_t i = len;

	if (len <= LP_META_KEY_MAX)
		return len;
	while (i > 0 && k[i - 1] >= '0' && k[i - 1] <= '9')
		i--;
	return i > 0 && i < len && k[i - 1] == '#' ? i - 1 : len;
}

/* Whether the parse of text gives the items of blob back, key for key, value for value. */
static bool gives_back(const char *text, size_t tlen, const char *blob, size_t len,
		       const char *const *reserved)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	size_t n = lp_meta_parse(text, tlen, items, ARRAY_SIZE(items)), pos = 0, i = 0, kl, vl;
	const char *k, *v;

	lp_meta_keys(items, n, reserved, keys);
	while (lp_tr_meta_next(blob, len, &pos, &k, &kl, &v, &vl)) {
		if (i == n || keys[i].len != kl || memcmp(keys[i].s, k, kl) ||
		    items[i].val_len != vl || memcmp(items[i].val, v, vl))
			return false;
		i++;
	}
	return i == n && pos == len;
}

int lp_meta_text(const char *blob, size_t len, const char *const *reserved, struct lp_buf *out)
{
	const char *k, *v;
	size_t kl, vl, pos = 0, n = 0;
	int err = 0;

	out->len = 0;
	while (!err && lp_tr_meta_next(blob, len, &pos, &k, &kl, &v, &vl)) {
		/*
		 * "_rest", the 64th item: what followed, verbatim (commas and all),
		 * which the parse keeps whole again after 63 items.
		 */
		bool rest = n == LP_META_MAX_ITEMS - 1 && memchr(v, ',', vl);

		if (n++ && lp_buf_putc(out, ','))
			return -ENOMEM;
		if (!rest) {
			kl = input_key_len(k, kl);
			err = lp_buf_put(out, k, kl) || lp_buf_putc(out, '=') ? -ENOMEM : 0;
		}
		if (!err && lp_buf_put(out, v, vl))
			err = -ENOMEM;
	}
	if (!err && lp_buf_put(out, "", 0))
		err = -ENOMEM; /* a text even when empty, NUL-terminated */
	if (err)
		return err;
	return gives_back(out->p, out->len, blob, len, reserved) ? 0 : -EINVAL;
}
