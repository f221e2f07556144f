// SPDX-License-Identifier: MIT
/* Interned strings (user/core/strtab.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strtab.h"
#include "unit.h"

static void test_ids_dense_and_stable(void **state)
{
	struct strtab *t = strtab_new();
	size_t len = 99;
	uint32_t a, b;

	assert_non_null(t);
	assert_int_equal(strtab_count(t), 1);
	assert_string_equal(strtab_str(t, 0, &len), "");
	assert_int_equal(len, 0);
	assert_int_equal(strtab_intern(t, "", 0), 0);
	a = strtab_intern(t, "alpha", 5);
	b = strtab_intern(t, "beta", 4);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(strtab_intern(t, "alpha", 5), a);
	/* a prefix is another string */
	assert_int_equal(strtab_intern(t, "alpha", 4), 3);
	assert_string_equal(strtab_str(t, a, &len), "alpha");
	assert_int_equal(len, 5);
	assert_string_equal(strtab_str(t, 3, NULL), "alph");
	/* an unknown id reads as the empty string */
	assert_string_equal(strtab_str(t, 12345, &len), "");
	assert_int_equal(len, 0);
	assert_int_equal(strtab_count(t), 4);
	strtab_free(t);
}

static void test_binary_bytes(void **state)
{
	struct strtab *t = strtab_new();
	size_t len;
	uint32_t a, b;
	const char *s;

	assert_non_null(t);
	a = strtab_intern(t, "a\0b", 3);
	b = strtab_intern(t, "a\0c", 3);
	assert_true(a != b);
	assert_int_equal(strtab_intern(t, "a\0b", 3), a);
	s = strtab_str(t, a, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 3);
	assert_int_equal(s[3], '\0');
	strtab_free(t);
}

/* Thousands of strings: the table grows and every id still maps both ways. */
static void test_growth(void **state)
{
	struct strtab *t = strtab_new();
	char buf[32];

	assert_non_null(t);
	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%u", i);

		assert_int_equal(strtab_intern(t, buf, (size_t)n), i + 1);
	}
	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%u", i);

		assert_int_equal(strtab_intern(t, buf, (size_t)n), i + 1);
		assert_string_equal(strtab_str(t, i + 1, NULL), buf);
	}
	assert_int_equal(strtab_count(t), 5001);
	strtab_free(t);
	strtab_free(NULL);
}

/* What a freed id reads as: the empty string, or poison in the sanitizer build. */
static void assert_freed(struct strtab *t, uint32_t id)
{
	size_t len;
	const char *s = strtab_str(t, id, &len);

	assert_false(strtab_is_live(t, id));
#ifdef LP_STRTAB_POISON
	assert_int_equal(len, LP_STRTAB_POISON_LEN);
	for (size_t i = 0; i < len; i++)
		assert_int_equal((unsigned char)s[i], LP_STRTAB_POISON_BYTE);
#else
	assert_int_equal(len, 0);
	assert_string_equal(s, "");
#endif
}

struct freed_log {
	uint32_t ids[64];
	size_t n;
};

static void log_freed(void *ctx, uint32_t id)
{
	struct freed_log *l = ctx;

	assert_true(l->n < ARRAY_SIZE(l->ids));
	l->ids[l->n++] = id;
}

static uint32_t in(struct strtab *t, const char *s)
{
	uint32_t id = strtab_intern(t, s, strlen(s));

	assert_int_not_equal(id, UINT32_MAX);
	return id;
}

/* Marked ids keep their texts, the others go (id 0 always stays), their bytes with them. */
static void test_gc_marked_survive(void **state)
{
	struct strtab *t = strtab_new();
	struct strtab_gc_result r;
	struct freed_log log = { .n = 0 };
	uint32_t a, b, c, d;
	size_t before, bytes_b, bytes_c;

	assert_non_null(t);
	a = in(t, "alpha");
	before = strtab_bytes(t);
	b = in(t, "beta");
	bytes_b = strtab_bytes(t) - before;
	before = strtab_bytes(t);
	c = in(t, "gamma, longer");
	bytes_c = strtab_bytes(t) - before;
	/* Each text's bytes, and what an id costs besides them. */
	assert_int_equal(bytes_c - bytes_b, strlen("gamma, longer") - strlen("beta"));
	assert_true(bytes_b > strlen("beta"));
	d = in(t, "delta");
	assert_int_equal(strtab_live(t), 5);
	strtab_gc_begin(t);
	strtab_mark(t, a);
	strtab_mark(t, d);
	strtab_mark(t, 12345); /* out of range: ignored */
	strtab_gc_end(t, log_freed, &log, &r);
	assert_int_equal(r.freed_ids, 2);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ids[0], b);
	assert_int_equal(log.ids[1], c);
	assert_int_equal(r.live_ids, 3);
	assert_int_equal(strtab_live(t), 3);
	assert_int_equal(r.live_bytes, strtab_bytes(t));
	assert_int_equal(r.freed_bytes, bytes_b + bytes_c);
	assert_string_equal(strtab_str(t, 0, NULL), "");
	assert_string_equal(strtab_str(t, a, NULL), "alpha");
	assert_string_equal(strtab_str(t, d, NULL), "delta");
	assert_true(strtab_is_live(t, 0) && strtab_is_live(t, a) && strtab_is_live(t, d));
	assert_freed(t, b);
	assert_freed(t, c);
	/* The survivors are still found by text. */
	assert_int_equal(in(t, "alpha"), a);
	assert_int_equal(in(t, "delta"), d);
	assert_int_equal(in(t, ""), 0);
	strtab_free(t);
}

/* Nothing marked: all but id 0 goes, and the count falls back. */
static void test_gc_nothing_held(void **state)
{
	struct strtab *t = strtab_new();
	struct strtab_gc_result r;
	size_t bytes0;

	assert_non_null(t);
	bytes0 = strtab_bytes(t);
	for (int i = 0; i < 1000; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "text %d", i);
		in(t, buf);
	}
	assert_int_equal(strtab_count(t), 1001);
	strtab_gc_begin(t);
	strtab_gc_end(t, NULL, NULL, &r);
	assert_int_equal(r.freed_ids, 1000);
	assert_int_equal(r.live_ids, 1);
	assert_int_equal(strtab_bytes(t), bytes0);
	assert_int_equal(strtab_count(t), 1);
	assert_string_equal(strtab_str(t, 0, NULL), "");
	/* Nothing to free: a second collection changes nothing. */
	strtab_gc_begin(t);
	strtab_gc_end(t, NULL, NULL, &r);
	assert_int_equal(r.freed_ids, 0);
	assert_int_equal(strtab_bytes(t), bytes0);
	assert_int_equal(in(t, "again"), 1);
	strtab_free(t);
}

/*
 * Freed ids are handed out again, lowest first; a freed text is no longer
 * found by the index, so interning it again makes a new id, and the same
 * text twice still gives one id.
 */
static void test_gc_reuse_dedupes(void **state)
{
	struct strtab *t = strtab_new();
	uint32_t id[6];

	assert_non_null(t);
	for (int i = 0; i < 6; i++) {
		char buf[16];

		snprintf(buf, sizeof(buf), "t%d", i);
		id[i] = in(t, buf);
		assert_int_equal(id[i], i + 1);
	}
	strtab_gc_begin(t);
	strtab_mark(t, id[0]);
	strtab_mark(t, id[3]);
	strtab_mark(t, id[5]);
	strtab_gc_end(t, NULL, NULL, NULL);
	/* Free: 2, 3, 5. */
	assert_int_equal(in(t, "new one"), 2);
	assert_int_equal(in(t, "new one"), 2);
	assert_string_equal(strtab_str(t, 2, NULL), "new one");
	/* "t1" was freed: a new id for it, not a stale entry. */
	assert_int_equal(in(t, "t1"), 3);
	assert_string_equal(strtab_str(t, 3, NULL), "t1");
	assert_int_equal(in(t, "t0"), id[0]);
	assert_int_equal(in(t, "t3"), id[3]);
	assert_int_equal(in(t, "t5"), id[5]);
	assert_int_equal(in(t, "t4"), 5);
	/* No free id left: the next one is new. */
	assert_int_equal(in(t, "t2"), 7);
	assert_int_equal(strtab_count(t), 8);
	assert_int_equal(strtab_live(t), 8);
	strtab_free(t);
}

/* What is interned during a collection survives it, whether new or found. */
static void test_gc_intern_during(void **state)
{
	struct strtab *t = strtab_new();
	uint32_t a, b, c;

	assert_non_null(t);
	a = in(t, "found again");
	b = in(t, "dropped");
	strtab_gc_begin(t);
	assert_int_equal(in(t, "found again"), a);
	c = in(t, "new during");
	strtab_gc_end(t, NULL, NULL, NULL);
	assert_string_equal(strtab_str(t, a, NULL), "found again");
	assert_string_equal(strtab_str(t, c, NULL), "new during");
	assert_freed(t, b);
	/* Held before, not marked in the next one: gone then. */
	strtab_gc_begin(t);
	strtab_gc_end(t, NULL, NULL, NULL);
	assert_false(strtab_is_live(t, a));
	assert_false(strtab_is_live(t, c));
	strtab_free(t);
}

/*
 * With LP_STRTAB_POISON (the sanitizer build), marking an id an earlier
 * collection freed aborts: its holder missed that collection. Also for an id
 * past the count (given back when the top ids were freed).
 */
static void test_gc_mark_freed_aborts(void **state)
{
#ifdef LP_STRTAB_POISON
	for (int top = 0; top < 2; top++) {
		struct strtab *t = strtab_new();
		uint32_t a, b;
		int status;
		pid_t pid;

		assert_non_null(t);
		a = in(t, "freed");
		b = in(t, "kept");
		strtab_gc_begin(t);
		strtab_mark(t, top ? a : b); /* top: b, the highest, goes and the count falls */
		strtab_gc_end(t, NULL, NULL, NULL);
		assert_int_equal(strtab_count(t), top ? 2 : 3);
		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			freopen("/dev/null", "w", stderr);
			strtab_gc_begin(t);
			strtab_mark(t, top ? b : a);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
		assert_freed(t, top ? b : a);
		strtab_free(t);
	}
#else
	skip();
#endif
}

/*
 * A random model: texts from a small pool interned and held or dropped at
 * random, collections at random. Every held id keeps its text, and interning
 * a text gives the id holding it, or one that reads as it.
 */
static void test_gc_model(void **state)
{
	enum { POOL = 300, HELD = 64, STEPS = 200000 };
	struct strtab *t = strtab_new();
	struct held {
		uint32_t id;
		int text;
	} held[HELD];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char buf[64];

	assert_non_null(t);
	for (int i = 0; i < HELD; i++)
		held[i].id = UINT32_MAX;
	for (int step = 0; step < STEPS; step++) {
		int k, text, n;
		uint32_t id;
		size_t len;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = (int)(x % HELD);
		text = (int)((x >> 16) % POOL);
		n = snprintf(buf, sizeof(buf), "text number %d%.*s", text, text % 40,
			     "........................................");
		id = strtab_intern(t, buf, (size_t)n);
		assert_int_not_equal(id, UINT32_MAX);
		assert_memory_equal(strtab_str(t, id, &len), buf, (size_t)n);
		assert_int_equal(len, (size_t)n);
		for (int i = 0; i < HELD; i++)
			if (held[i].id != UINT32_MAX && held[i].text == text)
				assert_int_equal(held[i].id, id);
		if ((x >> 40) % 3)
			held[k] = (struct held){ id, text };
		if ((x >> 48) % 97 == 0) {
			strtab_gc_begin(t);
			for (int i = 0; i < HELD; i++)
				if (held[i].id != UINT32_MAX)
					strtab_mark(t, held[i].id);
			strtab_gc_end(t, NULL, NULL, NULL);
			assert_true(strtab_live(t) <= HELD + 1);
		}
		for (int i = 0; i < HELD; i++) {
			if (held[i].id == UINT32_MAX)
				continue;
			n = snprintf(buf, sizeof(buf), "text number %d%.*s", held[i].text,
				     held[i].text % 40, "........................................");
			assert_memory_equal(strtab_str(t, held[i].id, &len), buf, (size_t)n);
			assert_int_equal(len, (size_t)n);
		}
	}
	strtab_free(t);
}

/*
 * Memory follows what is live: 10^6 distinct 500-byte texts, none held, with
 * a collection whenever one is due, as the recording loop does. Without
 * collections the table would hold over 500 MB.
 */
static void test_gc_memory_bounded(void **state)
{
	enum { TEXTS = 1000000, LEN = 500 };
	struct strtab *t = strtab_new();
	size_t max_bytes = 0, gcs = 0;
	uint32_t max_count = 0;
	char buf[LEN];

	assert_non_null(t);
	memset(buf, 'm', sizeof(buf));
	for (uint32_t i = 0; i < TEXTS; i++) {
		memcpy(buf, &i, sizeof(i));
		assert_int_not_equal(strtab_intern(t, buf, LEN), UINT32_MAX);
		if (strtab_bytes(t) > max_bytes)
			max_bytes = strtab_bytes(t);
		if (strtab_count(t) > max_count)
			max_count = strtab_count(t);
		if (strtab_gc_due(t)) {
			strtab_gc_begin(t);
			strtab_gc_end(t, NULL, NULL, NULL);
			gcs++;
		}
	}
	/* One floor's worth, and the text that passed it. */
	assert_true(max_bytes <= LP_STRTAB_GC_FLOOR + 2 * (LEN + 64));
	assert_true((size_t)max_count * LEN <= LP_STRTAB_GC_FLOOR);
	assert_true(gcs >= (size_t)TEXTS * LEN / LP_STRTAB_GC_FLOOR - 1);
	strtab_free(t);
}

/* Held texts push the next collection out: collecting stays O(1) per byte interned. */
static void test_gc_due_follows_live(void **state)
{
	enum { LEN = 4000 };
	struct strtab *t = strtab_new();
	char buf[LEN];
	uint32_t i;
	size_t live;

	assert_non_null(t);
	memset(buf, 'x', sizeof(buf));
	/* Hold 3 floors' worth. */
	for (i = 0; strtab_bytes(t) < 3 * LP_STRTAB_GC_FLOOR; i++) {
		memcpy(buf, &i, sizeof(i));
		assert_int_not_equal(strtab_intern(t, buf, LEN), UINT32_MAX);
	}
	assert_true(strtab_gc_due(t));
	strtab_gc_begin(t);
	for (uint32_t id = 1; id < strtab_count(t); id++)
		strtab_mark(t, id);
	strtab_gc_end(t, NULL, NULL, NULL);
	live = strtab_bytes(t);
	assert_false(strtab_gc_due(t));
	/* Due only once more than what is live came in (live > the floor here). */
	while (strtab_bytes(t) - live <= live) {
		assert_false(strtab_gc_due(t));
		memcpy(buf, &i, sizeof(i));
		i++;
		assert_int_not_equal(strtab_intern(t, buf, LEN), UINT32_MAX);
	}
	assert_true(strtab_gc_due(t));
	strtab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_dense_and_stable),
		cmocka_unit_test(test_binary_bytes),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_gc_marked_survive),
		cmocka_unit_test(test_gc_nothing_held),
		cmocka_unit_test(test_gc_reuse_dedupes),
		cmocka_unit_test(test_gc_intern_during),
		cmocka_unit_test(test_gc_mark_freed_aborts),
		cmocka_unit_test(test_gc_model),
		cmocka_unit_test(test_gc_memory_bounded),
		cmocka_unit_test(test_gc_due_follows_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
