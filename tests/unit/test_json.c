// SPDX-License-Identifier: MIT
/* The streaming JSON writer (user/core/jsonw.c), its output parsed back with json-c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonw.h"
#include "text.h"
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


/* Decimal text by snprintf: an independent reference for the hand-rolled formatting. */
static void check_u64(uint64_t v)
{
	char want[32], got[32], *end;
	struct mem m;

	snprintf(want, sizeof(want), "%" PRIu64, v);
	memset(got, 'x', sizeof(got));
	end = jw_fmt_u64(got, v);
	assert_int_equal(end - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	assert_int_equal(got[strlen(want)], 'x'); /* nothing written past the end */
	mem_open(&m);
	jw_u64(&m.w, v);
	assert_int_equal(mem_close(&m), 0);
	assert_string_equal(m.buf, want);
	free(m.buf);
}

static void check_usec(uint64_t ns)
{
	char want[40], got[40], *end;

	snprintf(want, sizeof(want), "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
	end = jw_fmt_usec(got, ns);
	assert_int_equal(end - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	usec(ns, want);
}

/* Every digit count, both sides of each power of ten, and the ends. */
static void test_u64_and_usec_exact(void **state)
{
	uint64_t p = 1;
	uint64_t x = 0x123456789abcdefULL;

	check_u64(0);
	check_u64(UINT64_MAX);
	check_u64(UINT64_MAX - 1);
	check_usec(0);
	check_usec(999);
	check_usec(1000);
	check_usec(UINT64_MAX);
	for (int k = 0; k < 20; k++) {
		check_u64(p);
		check_u64(p - 1);
		check_u64(p + 1);
		check_u64(p * 5);
		check_usec(p);
		check_usec(p - 1);
		check_usec(p + 7);
		if (k < 19)
			p *= 10;
	}
	for (int i = 0; i < 2000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		check_u64(x >> (i % 64));
		check_usec(x >> (i % 64));
	}
}

static void test_i64_edges(void **state)
{
	static const int64_t v[] = { 0, -1, 1, -9, -10, INT64_MIN, INT64_MIN + 1, INT64_MAX };
	char want[32];
	struct mem m;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(want, sizeof(want), "%" PRId64, v[i]);
		mem_open(&m);
		jw_i64(&m.w, v[i]);
		assert_int_equal(mem_close(&m), 0);
		assert_string_equal(m.buf, want);
		free(m.buf);
	}
}

/*
 * The escaping the writer had before its ASCII fast path, one character at a
 * time through stdio: the reference every output must equal byte for byte.
 */
static void ref_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	fputc('"', f);
	while (i < len) {
		size_t n = lp_utf8_seq(u + i, len - i);

		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (u[i] == '"' || u[i] == '\\') {
			fputc('\\', f);
			fputc(u[i], f);
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			fprintf(f, "\\u%04x", u[i]);
		} else {
			fwrite(s + i, 1, n, f);
		}
		i += n;
	}
	fputc('"', f);
}

static char *ref_text(const char *s, size_t len, size_t *out_len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, out_len);

	assert_non_null(f);
	ref_string(f, s, len);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* s through each of the three sinks equals the reference. */
static void check_string_all_sinks(const char *s, size_t len)
{
	size_t want_len, got_len;
	char *want = ref_text(s, len, &want_len), *got;
	struct lp_buf b = { 0 };
	struct jw w;
	FILE *f;
	char path[] = "/tmp/lp-test-json.XXXXXX";
	int fd;

	/* stdio */
	f = open_memstream(&got, &got_len);
	assert_non_null(f);
	jw_write_string(f, s, len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	/* memory */
	jw_init_buf(&w, &b);
	jw_str(&w, s, len);
	assert_int_equal(jw_flush(&w), 0);
	assert_int_equal(b.len, want_len);
	assert_memory_equal(b.p, want, want_len);
	lp_buf_free(&b);
	/* descriptor */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	jw_init_fd(&w, fd);
	jw_str(&w, s, len);
	assert_int_equal(jw_flush(&w), 0);
	jw_release(&w);
	assert_int_equal(w.bytes, want_len);
	got = ut_read_file(path, &got_len);
	assert_non_null(got);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	close(fd);
	unlink(path);
	free(want);
}

/* Every byte value alone, and inside runs of plain ASCII on both sides. */
static void test_escape_every_byte(void **state)
{
	char s[8];

	for (int c = 0; c < 256; c++) {
		s[0] = (char)c;
		check_string_all_sinks(s, 1);
		memcpy(s, "ab", 2);
		s[2] = (char)c;
		memcpy(s + 3, "cd", 2);
		check_string_all_sinks(s, 5);
		/* a lead byte followed by each continuation class */
		s[0] = (char)c;
		s[1] = (char)0x80;
		s[2] = (char)0xbf;
		s[3] = (char)0x9f;
		s[4] = 'z';
		check_string_all_sinks(s, 5);
	}
}

/* Random bytes, biased to every class, in lengths around the small buffer's. */
static void test_escape_random_against_reference(void **state)
{
	static const unsigned char pick[] = { 'a', ' ', '~', '"', '\\', 0x00, 0x1f, 0x7f, 0xc3,
					      0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed,
					      0xa0, 0xc0, 0xff, 0xf4, 0x90 };
	char s[1500];
	uint64_t x = 7;

	for (int round = 0; round < 300; round++) {
		size_t len = (size_t)(round * 5) % sizeof(s);

		for (size_t i = 0; i < len; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			s[i] = (x >> 60) < 8 ? (char)('A' + (x >> 33) % 26)
					     : (char)pick[(x >> 33) % sizeof(pick)];
		}
		check_string_all_sinks(s, len);
	}
}

/* Strings longer than the descriptor buffer, split wherever it fills, plus its error-free end. */
static void test_string_longer_than_buffer(void **state)
{
	size_t len = 2 * JW_FD_BUFFER + 12345, want_len;
	char *s = malloc(len), *want;

	assert_non_null(s);
	for (size_t i = 0; i < len; i++)
		s[i] = i % 1000 == 999 ? '\n' : i % 777 == 3 ? (char)0xe2 : (char)('a' + i % 26);
	check_string_all_sinks(s, len);
	/* an escape landing exactly on the buffer's end: 1 quote + (cap - 2) plain */
	for (size_t k = JW_FD_BUFFER - 8; k < JW_FD_BUFFER + 8; k++) {
		memset(s, 'q', k);
		s[k] = '"';
		s[k + 1] = (char)0x01;
		s[k + 2] = (char)0xc3;
		s[k + 3] = (char)0xa9;
		check_string_all_sinks(s, k + 4);
	}
	want = ref_text("", 0, &want_len);
	assert_int_equal(want_len, 2);
	free(want);
	free(s);
}

/* Raw text and room/advance keep the separators of the surrounding container. */
static void test_raw_and_room(void **state)
{
	struct mem m;
	char *p;

	mem_open(&m);
	jw_arr_begin(&m.w);
	jw_raw_value(&m.w, "{\"a\":1}", 7);
	jw_raw_value(&m.w, "2", 1);
	jw_u64(&m.w, 3);
	p = jw_room(&m.w, JW_ROOM_MAX);
	memcpy(p, ",4", 2);
	jw_advance(&m.w, p + 2);
	jw_raw(&m.w, ",5", 2);
	jw_arr_end(&m.w);
	assert_int_equal(mem_close(&m), 0);
	assert_string_equal(m.buf, "[{\"a\":1},2,3,4,5]");
	json_object_put(parse_strict(m.buf, m.len));
	free(m.buf);
}

/* A full device: the first failed write(2)'s errno, kept whatever comes after. */
static void test_fd_error_is_sticky(void **state)
{
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	struct jw w;

	if (fd < 0)
		skip();
	jw_init_fd(&w, fd);
	jw_arr_begin(&w);
	assert_int_equal(jw_error(&w), 0); /* buffered: nothing written yet */
	for (int i = 0; i < 300000; i++)
		jw_cstr(&w, "a string of some length");
	/* more than the buffer: written, and refused */
	assert_int_equal(jw_error(&w), -ENOSPC);
	jw_arr_end(&w);
	assert_int_equal(jw_flush(&w), -ENOSPC);
	assert_int_equal(w.bytes, 0);
	jw_release(&w);
	close(fd);

	/* small output: the error shows at the flush */
	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	jw_init_fd(&w, fd);
	jw_u64(&w, 1);
	assert_int_equal(jw_flush(&w), -ENOSPC);
	jw_release(&w);
	close(fd);

	/* a closed descriptor: EBADF, not silence */
	jw_init_fd(&w, fd);
	jw_u64(&w, 1);
	assert_int_equal(jw_flush(&w), -EBADF);
	jw_release(&w);
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
		cmocka_unit_test(test_u64_and_usec_exact),
		cmocka_unit_test(test_i64_edges),
		cmocka_unit_test(test_escape_every_byte),
		cmocka_unit_test(test_escape_random_against_reference),
		cmocka_unit_test(test_string_longer_than_buffer),
		cmocka_unit_test(test_raw_and_room),
		cmocka_unit_test(test_fd_error_is_sticky),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
