// SPDX-License-Identifier: MIT
/*
 * user/export/rows.c without a server: the JSONEachRow lines that export sends,
 * read back with json-c (as ClickHouse decodes JSON strings: byte for byte),
 * the nesting of spans read from a trace's end, and the database names that
 * are refused. tests/integration/test_export.c sends them to a real server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "nest.h"
#include "rows.h"

static const struct lp_ex_run run = {
	.run_id = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
	.host = "h\"ost\\1",
	.start_unix_ns = 1700000000123456789ull,
	.exported_unix = 1700000100,
	.groups_rows = 2,
	.spans_rows = 3,
};

/* The lines of b, each parsed; n set to their count. */
static json_object **lines_of(const struct lp_buf *b, size_t *n)
{
	static json_object *o[16];
	size_t k = 0;

	for (const char *p = b->p, *end = b->p + b->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		assert_non_null(nl); /* every row ends its line */
		assert_true(k < 16);
		char *line = strndup(p, (size_t)(nl - p));

		assert_non_null(line);
		o[k] = json_tokener_parse(line);
		free(line);
		assert_non_null(o[k]);
		k++;
		p = nl + 1;
	}
	*n = k;
	return o;
}

static void put_all(json_object **o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_object_put(o[i]);
}

static json_object *at(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no %s in %s", key, json_object_to_json_string(o));
	return v;
}

static uint64_t u(json_object *o, const char *key)
{
	return json_object_get_uint64(at(o, key));
}

static void test_database_names(void **state)
{
	struct lp_buf sql = { 0 };
	char long_name[LP_EX_DATABASE_MAX + 2];

	(void)state;
	assert_true(lp_ex_database_valid("leanprofiler"));
	assert_true(lp_ex_database_valid("_fleet_2"));
	assert_false(lp_ex_database_valid(""));
	assert_false(lp_ex_database_valid("2fleet"));
	assert_false(lp_ex_database_valid("a;DROP DATABASE x"));
	assert_false(lp_ex_database_valid("a.b"));
	assert_false(lp_ex_database_valid("`a`"));
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_false(lp_ex_database_valid(long_name));
	long_name[LP_EX_DATABASE_MAX] = '\0';
	assert_true(lp_ex_database_valid(long_name));
	assert_int_equal(lp_ex_create_sql(&sql, "x y", LP_EX_SPANS), -EINVAL);
	assert_int_equal(sql.len, 0);
	for (enum lp_ex_table t = 0; t < LP_EX_NTABLES; t++) {
		char want[64];

		sql.len = 0;
		assert_int_equal(lp_ex_create_sql(&sql, "db", t), 0);
		snprintf(want, sizeof(want), "CREATE TABLE IF NOT EXISTS db.%s (run_id String, ",
			 lp_ex_table_name(t));
		assert_int_equal(strncmp(sql.p, want, strlen(want)), 0);
		/* One copy per row key: what makes a raced second export fold. */
		assert_int_equal(lp_buf_putc(&sql, '\0'), 0);
		assert_non_null(strstr(sql.p, "ReplacingMergeTree"));
	}
	lp_buf_free(&sql);
}

static struct lp_tr_span span(uint32_t tid, uint64_t start, uint64_t dur, const char *name,
			      size_t name_len)
{
	return (struct lp_tr_span){ .pid = 7, .tid = tid, .start_ns = start, .dur_ns = dur,
				    .name = name, .name_len = name_len, .meta = "", .meta_len = 0 };
}

/*
 * In the order lp_trace_read gives them (from the trace's end: a parent
 * before its children), per thread: ids in that order, parent and depth from
 * the spans still open around each.
 */
static void test_span_nesting_and_ids(void **state)
{
	struct lp_ex_spans sp;
	struct lp_buf b = { 0 };
	struct lp_tr_span s[6] = {
		span(1, 0, 100, "root", 4),     /* 0: top of thread 1 */
		span(2, 10, 50, "other", 5),    /* 1: top of thread 2, while 0 is open */
		span(1, 60, 30, "late", 4),     /* 2: in 0 */
		span(1, 65, 10, "inner", 5),    /* 3: in 2 */
		span(1, 20, 30, "early", 5),    /* 4: in 0, after 2 and 3 ended */
		span(1, 200, 5, "after", 5),    /* 5: top again */
	};
	static const int64_t parent[6] = { -1, -1, 0, 2, 0, -1 };
	static const uint64_t depth[6] = { 0, 0, 1, 2, 1, 0 };
	json_object **o;
	size_t n;

	(void)state;
	assert_int_equal(lp_ex_spans_init(&sp, &run), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(lp_ex_span_row(&sp, &b, &s[i], i == 1), 0);
	o = lines_of(&b, &n);
	assert_int_equal(n, 5); /* the skipped one wrote nothing but kept its id */
	for (size_t k = 0, i = 0; k < n; k++, i++) {
		if (i == 1)
			i++;
		assert_int_equal(u(o[k], "span"), i);
		assert_int_equal(json_object_get_int64(at(o[k], "parent")), parent[i]);
		assert_int_equal(u(o[k], "depth"), depth[i]);
		assert_int_equal(u(o[k], "start_ns"), s[i].start_ns);
		assert_int_equal(u(o[k], "dur_ns"), s[i].dur_ns);
		assert_int_equal(u(o[k], "start_unix_ns"), run.start_unix_ns + s[i].start_ns);
		assert_int_equal(u(o[k], "time"), 1700000000);
		assert_string_equal(json_object_get_string(at(o[k], "run_id")), run.run_id);
		assert_string_equal(json_object_get_string(at(o[k], "host")), run.host);
		assert_string_equal(json_object_get_string(at(o[k], "name")), s[i].name);
	}
	put_all(o, n);
	lp_ex_spans_free(&sp);
	lp_buf_free(&b);
}

/* Names and metadata as bytes: a NUL, quotes, a backslash, controls, a 4-byte character. */
static void test_span_texts_exact(void **state)
{
	static const char name[] = "a\0b\"c\\d\n\t\x01\xf0\x9f\x98\x80";
	/* lp_tr_span's meta blob: per item a 2-byte little-endian length and the bytes. */
	static const char meta[] = "\x01\x00k\x03\x00v\0\"" "\x00\x00" "\x02\x00\\\n";
	struct lp_tr_span s = span(1, 5, 6, name, sizeof(name) - 1);
	struct lp_ex_spans sp;
	struct lp_buf b = { 0 };
	json_object **o, *keys, *vals;
	size_t n;

	(void)state;
	s.meta = meta;
	s.meta_len = sizeof(meta) - 1;
	s.has_counter = true;
	s.counter = 42;
	s.flags = LP_SPAN_UNTERMINATED;
	assert_int_equal(lp_ex_spans_init(&sp, &run), 0);
	assert_int_equal(lp_ex_span_row(&sp, &b, &s, false), 0);
	o = lines_of(&b, &n);
	assert_int_equal(n, 1);
	assert_int_equal(json_object_get_string_len(at(o[0], "name")), sizeof(name) - 1);
	assert_memory_equal(json_object_get_string(at(o[0], "name")), name, sizeof(name) - 1);
	keys = at(o[0], "meta_keys");
	vals = at(o[0], "meta_values");
	assert_int_equal(json_object_array_length(keys), 2);
	assert_int_equal(json_object_array_length(vals), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(keys, 0)), "k");
	assert_int_equal(json_object_get_string_len(json_object_array_get_idx(vals, 0)), 3);
	assert_memory_equal(json_object_get_string(json_object_array_get_idx(vals, 0)), "v\0\"", 3);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(keys, 1)), "");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(vals, 1)), "\\\n");
	assert_int_equal(u(o[0], "has_counter"), 1);
	assert_int_equal(u(o[0], "counter"), 42);
	assert_int_equal(u(o[0], "unterminated"), 1);
	assert_int_equal(u(o[0], "uncertain"), 0);
	put_all(o, n);
	lp_ex_spans_free(&sp);
	lp_buf_free(&b);
}

static void test_group_and_run_rows(void **state)
{
	json_object *row = json_tokener_parse(
		"{\"name\":\"q\\u0000x\",\"meta_text\":\"a=1, b\",\"meta\":{\"a\":\"1\",\"b\":\"\"},"
		"\"calls\":5,\"self_ns\":10,\"total_ns\":20,\"mean_ns\":4,\"p95_ns\":9,"
		"\"p95_exact\":true,\"min_ns\":1,\"max_ns\":9,\"self_counter\":null,"
		"\"total_counter\":null,\"unterminated\":1,\"started_before_recording\":0,"
		"\"uncertain\":2,\"folded\":null,\"hist\":{\"sub_bits\":7,"
		"\"buckets\":[[1,2],[300,3]],\"self_buckets\":[[4,5]]}}");
	json_object *sum = json_tokener_parse(
		"{\"command\":[\"./a\",\"b c\"],\"mode\":\"launch\",\"pid\":12,\"exit_status\":3,"
		"\"recording\":{\"start_ns\":100,\"end_ns\":300,\"end_reason\":\"command exited\"},"
		"\"window_ns\":150,\"events\":8,\"threads\":2,\"lost_events\":{\"total\":4},"
		"\"unterminated_spans\":1,\"resources\":{\"available\":true,\"user_cpu_ns\":5,"
		"\"peak_rss_kib\":null},\"counter_name\":\"beats\"}");
	struct lp_buf b = { 0 };
	json_object **o;
	size_t n;

	(void)state;
	assert_non_null(row);
	assert_non_null(sum);
	assert_int_equal(lp_ex_group_row(&b, row, 3, &run), 0);
	assert_int_equal(lp_ex_run_row(&b, sum, &run), 0);
	o = lines_of(&b, &n);
	assert_int_equal(n, 2);
	assert_int_equal(u(o[0], "row"), 3);
	assert_int_equal(json_object_get_string_len(at(o[0], "name")), 3);
	assert_memory_equal(json_object_get_string(at(o[0], "name")), "q\0x", 3);
	assert_string_equal(json_object_get_string(at(o[0], "meta_text")), "a=1, b");
	assert_string_equal(json_object_to_json_string(at(o[0], "meta_keys")), "[ \"a\", \"b\" ]");
	assert_string_equal(json_object_to_json_string(at(o[0], "meta_values")), "[ \"1\", \"\" ]");
	assert_int_equal(u(o[0], "calls"), 5);
	assert_int_equal(u(o[0], "p95_ns"), 9);
	assert_int_equal(u(o[0], "p95_exact"), 1);
	assert_int_equal(u(o[0], "has_counter"), 0);
	assert_int_equal(u(o[0], "uncertain"), 2);
	assert_string_equal(json_object_get_string(at(o[0], "overflow")), "");
	assert_string_equal(json_object_to_json_string(at(o[0], "hist_index")), "[ 1, 300 ]");
	assert_string_equal(json_object_to_json_string(at(o[0], "hist_count")), "[ 2, 3 ]");
	assert_string_equal(json_object_to_json_string(at(o[0], "self_hist_index")), "[ 4 ]");
	assert_int_equal(u(o[0], "start_time"), 1700000000);

	assert_string_equal(json_object_to_json_string(at(o[1], "command")), "[ \".\\/a\", \"b c\" ]");
	assert_int_equal(json_object_get_int64(at(o[1], "exit_status")), 3);
	assert_int_equal(u(o[1], "lost_events"), 4);
	assert_int_equal(u(o[1], "window_ns"), 150);
	assert_true(json_object_is_type(at(o[1], "peak_rss_kib"), json_type_null));
	assert_int_equal(u(o[1], "summary_only"), 1); /* no files.trace */
	assert_int_equal(u(o[1], "schema_version"), LP_EX_SCHEMA_VERSION);
	assert_int_equal(u(o[1], "groups_rows"), 2);
	assert_int_equal(u(o[1], "spans_rows"), 3);
	assert_string_equal(json_object_get_string(at(o[1], "end_reason")), "command exited");
	put_all(o, n);
	lp_buf_free(&b);
	json_object_put(row);
	json_object_put(sum);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_database_names),
		cmocka_unit_test(test_span_nesting_and_ids),
		cmocka_unit_test(test_span_texts_exact),
		cmocka_unit_test(test_group_and_run_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
