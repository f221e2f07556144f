// SPDX-License-Identifier: MIT
/* "key=value, key=value" metadata parsing (user/core/meta.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "meta.h"
#include "unit.h"

static size_t parse(const char *text, struct lp_meta_item *items, size_t max)
{
	return lp_meta_parse(text, strlen(text), items, max);
}

static void check_item(const struct lp_meta_item *it, const char *key, const char *val,
		       unsigned dup)
{
	assert_int_equal(it->key_len, strlen(key));
	assert_memory_equal(it->key, key, it->key_len);
	assert_int_equal(it->val_len, strlen(val));
	assert_memory_equal(it->val, val, it->val_len);
	assert_int_equal(it->dup, dup);
}

static void test_basic_and_spaces(void **state)
{
	struct lp_meta_item it[8];

	assert_int_equal(parse("phase=forward, module=encoder", it, 8), 2);
	check_item(&it[0], "phase", "forward", 0);
	check_item(&it[1], "module", "encoder", 0);

	assert_int_equal(parse("  a = 1 ,\tb\t=\t2  ,c=3", it, 8), 3);
	check_item(&it[0], "a", "1", 0);
	check_item(&it[1], "b", "2", 0);
	check_item(&it[2], "c", "3", 0);

	/* spaces inside keys and values stay */
	assert_int_equal(parse("my key = two words", it, 8), 1);
	check_item(&it[0], "my key", "two words", 0);
}

static void test_item_without_equals(void **state)
{
	struct lp_meta_item it[8];

	assert_int_equal(parse("verbose, level=3,  flag  ", it, 8), 3);
	check_item(&it[0], "verbose", "", 0);
	check_item(&it[1], "level", "3", 0);
	check_item(&it[2], "flag", "", 0);

	/* empty key, empty value */
	assert_int_equal(parse("=v, k=", it, 8), 2);
	check_item(&it[0], "", "v", 0);
	check_item(&it[1], "k", "", 0);
}

static void test_first_equals_splits(void **state)
{
	struct lp_meta_item it[8];

	assert_int_equal(parse("expr=a=b==c, x = y = z", it, 8), 2);
	check_item(&it[0], "expr", "a=b==c", 0);
	check_item(&it[1], "x", "y = z", 0);
}

static void test_empty_items_skipped(void **state)
{
	struct lp_meta_item it[8];

	assert_int_equal(parse("", it, 8), 0);
	assert_int_equal(parse(",,,", it, 8), 0);
	assert_int_equal(parse("  ,  , ", it, 8), 0);
	assert_int_equal(parse(",a=1,, ,b=2,", it, 8), 2);
	check_item(&it[0], "a", "1", 0);
	check_item(&it[1], "b", "2", 0);
}

static void test_not_nul_terminated(void **state)
{
	struct lp_meta_item it[8];
	const char text[] = "a=1,b=2XXXX";

	/* only the first 7 bytes are the metadata */
	assert_int_equal(lp_meta_parse(text, 7, it, 8), 2);
	check_item(&it[0], "a", "1", 0);
	check_item(&it[1], "b", "2", 0);
}

static void test_duplicate_keys(void **state)
{
	struct lp_meta_item it[8];

	assert_int_equal(parse("k=1, other=x, k=2, k = 3, kk=4", it, 8), 5);
	check_item(&it[0], "k", "1", 0);
	check_item(&it[1], "other", "x", 0);
	check_item(&it[2], "k", "2", 1);
	check_item(&it[3], "k", "3", 2);
	check_item(&it[4], "kk", "4", 0);

	/* a flag repeated */
	assert_int_equal(parse("f, f", it, 8), 2);
	check_item(&it[0], "f", "", 0);
	check_item(&it[1], "f", "", 1);
}

static void test_rest_past_max(void **state)
{
	struct lp_meta_item it[3];

	/* exactly max items: no _rest */
	assert_int_equal(parse("a=1, b=2, c=3", it, 3), 3);
	check_item(&it[2], "c", "3", 0);

	/* one more: the last slot keeps the remaining text verbatim */
	assert_int_equal(parse("a=1, b=2, c=3, d=4", it, 3), 3);
	check_item(&it[0], "a", "1", 0);
	check_item(&it[1], "b", "2", 0);
	assert_int_equal(it[2].key_len, 5);
	assert_memory_equal(it[2].key, "_rest", 5);
	assert_int_equal(it[2].val_len, strlen("c=3, d=4"));
	assert_memory_equal(it[2].val, "c=3, d=4", it[2].val_len);

	/* max 1 */
	assert_int_equal(parse("a=1,b=2", it, 1), 1);
	assert_memory_equal(it[0].key, "_rest", 5);
	assert_int_equal(it[0].val_len, 7);

	/* max 0 writes nothing */
	assert_int_equal(parse("a=1", NULL, 0), 0);
}

/* Trailing empty items are not more text: the third item stays an ordinary item. */
static void test_rest_not_used_for_trailing_empty_items(void **state)
{
	struct lp_meta_item it[3];

	assert_int_equal(parse("a=1, b=2, c=3, ", it, 3), 3);
	check_item(&it[2], "c", "3", 0);
	assert_int_equal(parse("a=1, b=2, c=3,,", it, 3), 3);
	check_item(&it[2], "c", "3", 0);
}

/* LP_META_MAX_ITEMS items all parse; one more and nothing is dropped. */
static void test_max_items_real_size(void **state)
{
	struct lp_meta_item it[LP_META_MAX_ITEMS];
	char text[2048];
	size_t len = 0, n;

	for (int i = 0; i < LP_META_MAX_ITEMS; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%sk%d=%d", i ? ", " : "",
					i, i);
	n = lp_meta_parse(text, len, it, LP_META_MAX_ITEMS);
	assert_int_equal(n, LP_META_MAX_ITEMS);
	check_item(&it[LP_META_MAX_ITEMS - 1], "k63", "63", 0);

	len += (size_t)snprintf(text + len, sizeof(text) - len, ", extra=1");
	n = lp_meta_parse(text, len, it, LP_META_MAX_ITEMS);
	assert_int_equal(n, LP_META_MAX_ITEMS);
	assert_memory_equal(it[LP_META_MAX_ITEMS - 1].key, "_rest", 5);
	check_item(&it[LP_META_MAX_ITEMS - 1], "_rest", "k63=63, extra=1", 0);
}

static void keys_of(const char *text, const char *const *reserved, const char **want, size_t nwant)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	size_t n = lp_meta_parse(text, strlen(text), items, LP_META_MAX_ITEMS);

	assert_int_equal(n, nwant);
	lp_meta_keys(items, n, reserved, keys);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(keys[i].s, want[i]);
		assert_int_equal(keys[i].len, strlen(want[i]));
	}
}

/* Every value keeps a key of its own, whatever keys the program chose. */
static void test_keys_unique(void **state)
{
	static const char *const ours[] = { "counter", "uncertain", NULL };

	(void)state;
	keys_of("a=1, a#2=x, a=2, a=3", NULL, (const char *[]){ "a", "a#2", "a#3", "a#4" }, 4);
	keys_of("counter=5, meta.counter=10, counter=6", ours,
		(const char *[]){ "meta.counter", "meta.counter#2", "meta.counter#3" }, 3);
	/* Without reserved keys, ours are the program's own. */
	keys_of("counter=5", NULL, (const char *[]){ "counter" }, 1);
	/* Two different invalid keys both read as U+FFFD: still two keys. */
	keys_of("\x80=1, \x81=2", NULL, (const char *[]){ "\xef\xbf\xbd", "\xef\xbf\xbd#2" }, 2);
	/* An empty key is a key too. */
	keys_of("=y, =z", NULL, (const char *[]){ "", "#2" }, 2);
}

/* A long key is cut to LP_META_KEY_MAX bytes, between characters. */
static void test_keys_cut(void **state)
{
	struct lp_meta_item items[2];
	struct lp_meta_key keys[2];
	char text[400];
	size_t n, i = 0;

	(void)state;
	text[i++] = 'x';
	while (i < 200) {
		memcpy(text + i, "\xc3\xa9", 2); /* é */
		i += 2;
	}
	memcpy(text + i, "=v", 3);
	n = lp_meta_parse(text, strlen(text), items, 2);
	assert_int_equal(n, 1);
	lp_meta_keys(items, n, NULL, keys);
	assert_true(keys[0].len <= LP_META_KEY_MAX);
	assert_int_equal(keys[0].len, LP_META_KEY_MAX - 1); /* "x" + 31 é: a 32nd would split */
	assert_memory_equal(keys[0].s, text, keys[0].len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_and_spaces),
		cmocka_unit_test(test_keys_unique),
		cmocka_unit_test(test_keys_cut),
		cmocka_unit_test(test_item_without_equals),
		cmocka_unit_test(test_first_equals_splits),
		cmocka_unit_test(test_empty_items_skipped),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_rest_past_max),
		cmocka_unit_test(test_rest_not_used_for_trailing_empty_items),
		cmocka_unit_test(test_max_items_real_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
