// SPDX-License-Identifier: MIT
/*
 * The protobuf primitives of user/core/pbw.c: varints at each length's
 * boundaries (bytes checked against the wire format's definition: 7 bits a
 * byte, low bits first, the high bit on every byte but the last), nested
 * messages whose length crosses one byte, and what the reader refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "pbw.h"
#include "unit.h"

/* The varint of v computed here by its definition, not by pb_varint. */
static size_t reference_varint(uint64_t v, uint8_t *out)
{
	size_t n = 0;

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		out[n++] = b | (v ? 0x80 : 0);
	} while (v);
	return n;
}

static void test_varint_boundaries(void **state)
{
	static const struct {
		uint64_t v;
		size_t len;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 300, 2 }, { 16383, 2 }, { 16384, 3 },
		{ (1u << 21) - 1, 3 }, { 1u << 21, 4 }, { (1u << 28) - 1, 4 }, { 1u << 28, 5 },
		{ UINT32_MAX, 5 }, { 1ull << 35, 6 }, { (1ull << 56) - 1, 8 }, { 1ull << 56, 9 },
		{ (1ull << 63) - 1, 9 }, { 1ull << 63, 10 }, { UINT64_MAX, 10 },
	};
	uint8_t got[PB_VARINT_MAX], want[PB_VARINT_MAX];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = pb_varint(got, cases[i].v);
		struct pb_cur c = { got, got + n };
		uint64_t back = 0;

		assert_int_equal(n, cases[i].len);
		assert_int_equal(pb_varint_len(cases[i].v), cases[i].len);
		assert_int_equal(reference_varint(cases[i].v, want), n);
		assert_memory_equal(got, want, n);
		assert_int_equal(pb_read_varint(&c, &back), 0);
		assert_true(back == cases[i].v);
		assert_ptr_equal(c.p, got + n);
	}
	/* The wire format's own example: 300 is AC 02. */
	assert_int_equal(pb_varint(got, 300), 2);
	assert_int_equal(got[0], 0xac);
	assert_int_equal(got[1], 0x02);
}

static void test_varint_malformed(void **state)
{
	static const uint8_t cut[] = { 0x80, 0x80 };
	static const uint8_t eleven[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0x01 };
	struct pb_cur c = { cut, cut + sizeof(cut) };
	uint64_t v;

	(void)state;
	assert_int_equal(pb_read_varint(&c, &v), -EINVAL);
	c = (struct pb_cur){ eleven, eleven + sizeof(eleven) };
	assert_int_equal(pb_read_varint(&c, &v), -EINVAL);
}

/* A message holding field 1 = inner (n bytes of 'x') nested in field 2, read back. */
static void nested_of(size_t n)
{
	struct pb_buf b = { 0 };
	char *fill = malloc(n + 1);
	size_t outer, inner;
	struct pb_cur c;
	struct pb_field f, g;

	memset(fill, 'x', n);
	outer = pb_open(&b, 2);
	inner = pb_open(&b, 3);
	pb_bytes(&b, 1, fill, n);
	pb_close(&b, inner);
	pb_uint(&b, 4, 7);
	pb_close(&b, outer);
	assert_int_equal(b.err, 0);
	c = (struct pb_cur){ b.p, b.p + b.len };
	assert_int_equal(pb_next(&c, &f), 1);
	assert_int_equal(f.num, 2);
	assert_int_equal(f.wire, PB_LEN);
	/* The outer length is its content: the inner field's tag, length, bytes, then field 4. */
	assert_int_equal(f.len, 1 + pb_varint_len(1 + pb_varint_len(n) + n) + 1 +
				pb_varint_len(n) + n + 2);
	assert_int_equal(pb_next(&c, &g), 0); /* nothing after it */
	c = (struct pb_cur){ f.data, f.data + f.len };
	assert_int_equal(pb_next(&c, &g), 1);
	assert_int_equal(g.num, 3);
	{
		struct pb_cur ci = { g.data, g.data + g.len };
		struct pb_field h;

		assert_int_equal(pb_next(&ci, &h), 1);
		assert_int_equal(h.num, 1);
		assert_int_equal(h.len, n);
		assert_memory_equal(h.data, fill, n);
		assert_int_equal(pb_next(&ci, &h), 0);
	}
	assert_int_equal(pb_next(&c, &g), 1);
	assert_int_equal(g.num, 4);
	assert_int_equal(g.wire, PB_VARINT);
	assert_int_equal(g.v, 7);
	assert_int_equal(pb_next(&c, &g), 0);
	pb_buf_free(&b);
	free(fill);
}

/* pb_close moves a message whose length needs a second (third) byte. */
static void test_nested_lengths(void **state)
{
	static const size_t sizes[] = { 0, 1, 120, 123, 124, 125, 126, 127, 128, 200,
					16380, 16384, 70000 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		nested_of(sizes[i]);
}

static void test_fields_and_refusals(void **state)
{
	struct pb_buf b = { 0 };
	struct pb_cur c;
	struct pb_field f;
	double d = 1234.567, back;
	static const uint8_t group[] = { 0x0b };                /* field 1, wire type 3 */
	static const uint8_t past[] = { 0x0a, 0x05, 'a', 'b' }; /* 5 bytes announced, 2 there */
	static const uint8_t zero[] = { 0x00, 0x01 };           /* field number 0 */

	(void)state;
	pb_double(&b, 5, d);
	pb_uint(&b, 536870911, UINT64_MAX); /* the largest field number */
	c = (struct pb_cur){ b.p, b.p + b.len };
	assert_int_equal(pb_next(&c, &f), 1);
	assert_int_equal(f.num, 5);
	assert_int_equal(f.wire, PB_I64);
	memcpy(&back, &f.v, 8);
	assert_true(back == d);
	assert_int_equal(pb_next(&c, &f), 1);
	assert_int_equal(f.num, 536870911);
	assert_true(f.v == UINT64_MAX);
	pb_buf_free(&b);
	c = (struct pb_cur){ group, group + sizeof(group) };
	assert_int_equal(pb_next(&c, &f), -EINVAL);
	c = (struct pb_cur){ past, past + sizeof(past) };
	assert_int_equal(pb_next(&c, &f), -EINVAL);
	c = (struct pb_cur){ zero, zero + sizeof(zero) };
	assert_int_equal(pb_next(&c, &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_boundaries),
		cmocka_unit_test(test_varint_malformed),
		cmocka_unit_test(test_nested_lengths),
		cmocka_unit_test(test_fields_and_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
