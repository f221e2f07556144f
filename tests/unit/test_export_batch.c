// SPDX-License-Identifier: MIT
/*
 * user/export/client/batch.c without a server: a batch's gzip body inflates
 * to exactly the rows put in it, each batch is a gzip member of its own, and
 * without keep_plain the plain rows held stay one piece whatever the batch's
 * size. tests/integration/test_export.c sends such bodies to ClickHouse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "batch.h"

/* Row i: a JSON-looking line of ~100-700 bytes, every byte value somewhere in its text. */
static size_t row_text(char *out, size_t size, unsigned i)
{
	size_t n = (size_t)snprintf(out, size, "{\"span\":%u,\"name\":\"", i);

	for (unsigned k = 0; k < 80 + (i * 37) % 600 && n + 3 < size; k++)
		out[n++] = (char)((i * 131 + k * 7) & 0xff);
	out[n++] = '"';
	out[n++] = '}';
	out[n++] = '\n';
	return n;
}

/* Adds rows first..first+n-1 to b, and to all (what the batch must hold). */
static void add_rows(struct lp_ex_batch *b, struct lp_buf *all, unsigned first, unsigned n,
		     size_t *max_held)
{
	char row[1024];

	for (unsigned i = first; i < first + n; i++) {
		size_t len = row_text(row, sizeof(row), i);

		assert_int_equal(lp_buf_put(lp_ex_batch_rows(b), row, len), 0);
		assert_int_equal(lp_ex_batch_added(b), 0);
		assert_int_equal(lp_buf_put(all, row, len), 0);
		if (max_held && b->rows.len > *max_held)
			*max_held = b->rows.len;
	}
}

static void assert_same(const struct lp_buf *a, const struct lp_buf *b)
{
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->p, b->p, a->len);
}

/* The gzip member in b->gz inflates to exactly rows: one member, nothing after it. */
static void assert_member_is(const struct lp_ex_batch *b, const struct lp_buf *rows)
{
	struct lp_buf out = { 0 };
	z_stream z = { 0 };
	char buf[65536];
	int ret;

	assert_true(b->gz.len >= 18);
	/* gzip's magic and deflate's method: what Content-Encoding: gzip promises. */
	assert_memory_equal(b->gz.p, "\x1f\x8b\x08", 3);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)b->gz.p;
	z.avail_in = (uInt)b->gz.len;
	do {
		z.next_out = (Bytef *)buf;
		z.avail_out = sizeof(buf);
		ret = inflate(&z, Z_NO_FLUSH);
		assert_true(ret == Z_OK || ret == Z_STREAM_END);
		assert_int_equal(lp_buf_put(&out, buf, sizeof(buf) - z.avail_out), 0);
	} while (ret != Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	inflateEnd(&z);
	assert_same(&out, rows);
	lp_buf_free(&out);
}

/* auto's first batches: the gzip body and the plain rows, both whole. */
static void test_gzip_keeping_plain(void **state)
{
	struct lp_ex_batch b = { 0 };
	struct lp_buf all = { 0 };

	(void)state;
	assert_int_equal(lp_ex_batch_mode(&b, true, true), 0);
	add_rows(&b, &all, 0, 5000, NULL); /* ~2 MB: many pieces */
	assert_int_equal(b.nrows, 5000);
	assert_int_equal(lp_ex_batch_finish(&b), 0);
	assert_member_is(&b, &all);
	assert_same(&b.rows, &all); /* to send plain if the server refuses gzip */
	assert_int_equal(lp_ex_batch_plain_len(&b), all.len);
	/* A second finish adds nothing (a batch is finished once, then sent). */
	{
		size_t len = b.gz.len;

		assert_int_equal(lp_ex_batch_finish(&b), 0);
		assert_int_equal(b.gz.len, len);
	}
	lp_ex_batch_free(&b);
	lp_buf_free(&all);
}

/* Once the server takes gzip: 16 MiB of rows, never more than a piece of them held plain. */
static void test_gzip_alone_holds_one_piece(void **state)
{
	struct lp_ex_batch b = { 0 };
	struct lp_buf all = { 0 };
	size_t held = 0;
	unsigned n = 0;

	(void)state;
	assert_int_equal(lp_ex_batch_mode(&b, true, false), 0);
	while (all.len < (16u << 20)) {
		add_rows(&b, &all, n, 1000, &held);
		n += 1000;
	}
	assert_int_equal(lp_ex_batch_plain_len(&b), all.len);
	/* Less than a piece after each row; allocated, a piece and the row that filled it. */
	assert_true(held < LP_EX_GZIP_CHUNK);
	assert_true(b.rows.cap <= 2 * (LP_EX_GZIP_CHUNK + 1024));
	assert_int_equal(lp_ex_batch_finish(&b), 0);
	print_message("%zu bytes of rows, %zu of gzip, at most %zu held plain\n", all.len,
		      b.gz.len, held);
	assert_true(b.gz.len < all.len / 2);
	assert_member_is(&b, &all);
	lp_ex_batch_free(&b);
	lp_buf_free(&all);
}

/* Each batch is a member of its own (one request each); modes change between batches. */
static void test_batches_are_members_of_their_own(void **state)
{
	struct lp_ex_batch b = { 0 };
	struct lp_buf all = { 0 };

	(void)state;
	assert_int_equal(lp_ex_batch_mode(&b, true, true), 0);
	add_rows(&b, &all, 0, 300, NULL);
	assert_int_equal(lp_ex_batch_finish(&b), 0);
	lp_ex_batch_reset(&b);
	assert_int_equal(b.nrows, 0);
	assert_int_equal(lp_ex_batch_plain_len(&b), 0);

	all.len = 0;
	assert_int_equal(lp_ex_batch_mode(&b, true, false), 0);
	add_rows(&b, &all, 1000, 400, NULL);
	assert_int_equal(lp_ex_batch_finish(&b), 0);
	assert_member_is(&b, &all); /* the second batch's rows alone */
	lp_ex_batch_reset(&b);

	/* Plain (none, or refused): the rows as put, no gzip bytes. */
	all.len = 0;
	assert_int_equal(lp_ex_batch_mode(&b, false, true), 0);
	assert_false(b.keep_plain);
	add_rows(&b, &all, 5000, 200, NULL);
	assert_int_equal(lp_ex_batch_finish(&b), 0);
	assert_int_equal(b.gz.len, 0);
	assert_same(&b.rows, &all);
	assert_int_equal(b.nrows, 200);
	lp_ex_batch_free(&b);
	lp_buf_free(&all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gzip_keeping_plain),
		cmocka_unit_test(test_gzip_alone_holds_one_piece),
		cmocka_unit_test(test_batches_are_members_of_their_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
