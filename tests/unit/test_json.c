// SPDX-License-Identifier: MIT
/* The streaming JSON writer (user/jsonw.c), its output parsed back with json-c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "unit.h"

#define FFFD "\xef\xbf\xbd"

/* A writer on a memory stream. */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
	struct jw w;
};

static void mem_open(struct mem *m)
{
	memset(m, 0, sizeof(*m));
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	jw_init(&m->w, m->f);
}

/* Closes the stream; the text stays in m->buf (caller frees). */
static int mem_close(struct mem *m)
{
	int err = jw_error(&m->w);

	assert_int_equal(fclose(m->f), 0);
	m->f = NULL;
	return err;
}

/* Parses text that must be one complete JSON value, and valid UTF-8. */
static json_object *parse_strict(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o)
		fail_msg("not JSON (%s): %s", json_tokener_error_desc(json_tokener_get_error(tok)),
			 text);
	assert_int_equal(json_tokener_get_parse_end(tok), len);
	json_tokener_free(tok);
	assert_true(ut_valid_utf8(text, len));
	return o;
}

static void test_structure_exact(void **state)
{
	struct mem m;

	mem_open(&m);
	jw_obj_begin(&m.w);
	jw_key(&m.w, "a", 1);
	jw_arr_begin(&m.w);
	jw_u64(&m.w, 1);
	jw_i64(&m.w, -2);
	jw_obj_begin(&m.w);
	jw_key(&m.w, "b", 1);
	jw_bool(&m.w, true);
	jw_key(&m.w, "c", 1);
	jw_bool(&m.w, false);
	jw_obj_end(&m.w);
	jw_arr_begin(&m.w);
	jw_arr_end(&m.w);
	jw_obj_begin(&m.w);
	jw_obj_end(&m.w);
	jw_arr_end(&m.w);
	jw_key(&m.w, "s", 1);
	jw_cstr(&m.w, "x");
	jw_key(&m.w, "big", 3);
	jw_u64(&m.w, UINT64_MAX);
	jw_key(&m.w, "neg", 3);
	jw_i64(&m.w, INT64_MIN);
	jw_obj_end(&m.w);
	assert_int_equal(mem_close(&m), 0);
	assert_string_equal(m.buf, "{\"a\":[1,-2,{\"b\":true,\"c\":false},[],{}],\"s\":\"x\","
				   "\"big\":18446744073709551615,\"neg\":-9223372036854775808}");
	json_object_put(parse_strict(m.buf, m.len));
	free(m.buf);
}

/* Several top-level-in-array objects separated by newlines, as the trace does. */
static void test_newlines_between_values(void **state)
{
	struct mem m;
	json_object *o;

	mem_open(&m);
	jw_arr_begin(&m.w);
	for (int i = 0; i < 3; i++) {
		jw_newline(&m.w);
		jw_obj_begin(&m.w);
		jw_key(&m.w, "i", 1);
		jw_u64(&m.w, (uint64_t)i);
		jw_obj_end(&m.w);
	}
	jw_newline(&m.w);
	jw_arr_end(&m.w);
	assert_int_equal(mem_close(&m), 0);
	/* one object per line (where the comma goes is the writer's choice) */
	{
		size_t lines = 0;

		for (size_t i = 0; i < m.len; i++)
			lines += m.buf[i] == '\n';
		assert_int_equal(lines, 4);
		assert_non_null(strstr(m.buf, "{\"i\":1}"));
	}
	o = parse_strict(m.buf, m.len);
	assert_int_equal(json_object_array_length(o), 3);
	json_object_put(o);
	free(m.buf);
}

/* Writes s as a value and as a key, parses, returns the value's parsed bytes. */
static void roundtrip(const char *s, size_t len, const char *want, size_t want_len)
{
	struct mem m;
	json_object *o, *v;
	const char *got;

	mem_open(&m);
	jw_obj_begin(&m.w);
	jw_key(&m.w, "v", 1);
	jw_str(&m.w, s, len);
	jw_key(&m.w, s, len);
	jw_u64(&m.w, 7);
	jw_obj_end(&m.w);
	assert_int_equal(mem_close(&m), 0);
	/* no raw control byte anywhere in the output */
	for (size_t i = 0; i < m.len; i++)
		assert_true((unsigned char)m.buf[i] >= 0x20 && (unsigned char)m.buf[i] != 0x7f);
	o = parse_strict(m.buf, m.len);
	assert_true(json_object_object_get_ex(o, "v", &v));
	assert_true(json_object_is_type(v, json_type_string));
	got = json_object_get_string(v);
	assert_int_equal(json_object_get_string_len(v), want_len);
	assert_memory_equal(got, want, want_len);
	/* the key came out the same (when it has no NUL, which json-c keys cannot hold) */
	if (!memchr(want, '\0', want_len)) {
		json_object *k;

		assert_true(json_object_object_get_ex(o, want, &k));
		assert_int_equal(json_object_get_int(k), 7);
	}
	json_object_put(o);
	free(m.buf);
}

#define RT(in, want) roundtrip(in, sizeof(in) - 1, want, sizeof(want) - 1)

static void test_escaping_roundtrip(void **state)
{
	RT("plain", "plain");
	RT("say \"hi\"", "say \"hi\"");
	RT("back\\slash\\", "back\\slash\\");
	RT("\\\"", "\\\"");
	RT("a/b", "a/b");
	RT("tab\there\nnew\rret\bbs\fff", "tab\there\nnew\rret\bbs\fff");
	RT("\x7f", "\x7f");
	RT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	RT("a\0b", "a\0b");
	/* invalid UTF-8 becomes U+FFFD */
	RT("\x80", FFFD);
	RT("x\xc0\x80y", "x" FFFD FFFD "y");
	RT("\xed\xa0\x80", FFFD FFFD FFFD);
	RT("end\xe2\x82", "end" FFFD FFFD);
	RT("\xff\"\xfe", FFFD "\"" FFFD);
}

/* Every control character 0x01..0x1f, and 0x7f, in one string. */
static void test_all_control_chars(void **state)
{
	char s[33];

	for (int i = 1; i < 0x20; i++)
		s[i - 1] = (char)i;
	s[31] = 0x7f;
	s[32] = '\0';
	roundtrip(s, 32, s, 32);
}

static void test_write_string_direct(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	jw_write_string(f, "q\"\x01\x1f\xff", 5);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "\"q\\\"\\u0001\\u001f\\ufffd\"");
	free(buf);
}

static void usec(uint64_t ns, const char *want)
{
	struct mem m;

	mem_open(&m);
	jw_usec(&m.w, ns);
	assert_int_equal(mem_close(&m), 0);
	assert_string_equal(m.buf, want);
	free(m.buf);
}

static void test_usec_three_decimals(void **state)
{
	usec(0, "0.000");
	usec(1, "0.001");
	usec(999, "0.999");
	usec(1000, "1.000");
	usec(1001, "1.001");
	usec(1234567, "1234.567");
	usec(1500000000, "1500000.000");
	usec(UINT64_MAX, "18446744073709551.615");
}

static void test_usec_in_array(void **state)
{
	struct mem m;

	mem_open(&m);
	jw_arr_begin(&m.w);
	jw_usec(&m.w, 10);
	jw_usec(&m.w, 20000);
	jw_arr_end(&m.w);
	assert_int_equal(mem_close(&m), 0);
	assert_string_equal(m.buf, "[0.010,20.000]");
	json_object_put(parse_strict(m.buf, m.len));
	free(m.buf);
}

/* Nesting deeper than JW_MAX_DEPTH is reported, not silently written. */
static void test_depth_error(void **state)
{
	struct mem m;

	mem_open(&m);
	for (int i = 0; i < JW_MAX_DEPTH + 2; i++)
		jw_arr_begin(&m.w);
	for (int i = 0; i < JW_MAX_DEPTH + 2; i++)
		jw_arr_end(&m.w);
	assert_int_equal(mem_close(&m), -E2BIG);
	free(m.buf);

	/* just inside the limit is fine */
	mem_open(&m);
	for (int i = 0; i < JW_MAX_DEPTH - 1; i++)
		jw_arr_begin(&m.w);
	for (int i = 0; i < JW_MAX_DEPTH - 1; i++)
		jw_arr_end(&m.w);
	assert_int_equal(mem_close(&m), 0);
	json_object_put(parse_strict(m.buf, m.len));
	free(m.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_exact),
		cmocka_unit_test(test_newlines_between_values),
		cmocka_unit_test(test_escaping_roundtrip),
		cmocka_unit_test(test_all_control_chars),
		cmocka_unit_test(test_write_string_direct),
		cmocka_unit_test(test_usec_three_decimals),
		cmocka_unit_test(test_usec_in_array),
		cmocka_unit_test(test_depth_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
