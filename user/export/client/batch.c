// SPDX-License-Identifier: MIT
#include "batch.h"

#include <errno.h>
#include <string.h>

#include "common.h"

/* windowBits 15 + 16: a gzip header and trailer, what Content-Encoding: gzip names. */
#define LP_GZIP_WINDOW (15 + 16)
#define LP_GZIP_MEMLEVEL 8

int lp_ex_batch_mode(struct lp_ex_batch *b, bool gzip, bool keep_plain)
{
	b->gzip = gzip;
	b->keep_plain = gzip && keep_plain;
	if (!gzip || b->z_open)
		return 0;
	memset(&b->z, 0, sizeof(b->z));
	if (deflateInit2(&b->z, LP_EX_GZIP_LEVEL, Z_DEFLATED, LP_GZIP_WINDOW, LP_GZIP_MEMLEVEL,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	b->z_open = true;
	return 0;
}

/* The rows not deflated yet into the member; with finish, its end too. */
static int deflate_rows(struct lp_ex_batch *b, bool finish)
{
	int flush = finish ? Z_FINISH : Z_NO_FLUSH, ret;

	b->z.next_in = (Bytef *)b->rows.p + b->fed;
	b->z.avail_in = (uInt)(b->rows.len - b->fed);
	do {
		/* Room for at least a piece's worth of output: a piece never comes out larger. */
		char *p = lp_grow(b->gz.p, &b->gz.cap, b->gz.len + deflateBound(&b->z, LP_EX_GZIP_CHUNK), 1);

		if (!p)
			return -ENOMEM;
		b->gz.p = p;
		b->z.next_out = (Bytef *)b->gz.p + b->gz.len;
		b->z.avail_out = (uInt)(b->gz.cap - b->gz.len);
		ret = deflate(&b->z, flush);
		b->gz.len = b->gz.cap - b->z.avail_out;
		/* Z_BUF_ERROR: no progress was possible, which a full output buffer explains. */
		if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
			return -EIO;
	} while (b->z.avail_in || (finish && ret != Z_STREAM_END));
	b->fed = b->rows.len;
	if (!b->keep_plain) {
		b->dropped += b->rows.len;
		b->rows.len = b->fed = 0;
	}
	return 0;
}

int lp_ex_batch_added(struct lp_ex_batch *b)
{
	b->nrows++;
	if (b->gzip && b->rows.len - b->fed >= LP_EX_GZIP_CHUNK)
		return deflate_rows(b, false);
	return 0;
}

int lp_ex_batch_finish(struct lp_ex_batch *b)
{
	int err;

	if (!b->gzip || b->finished)
		return 0;
	err = deflate_rows(b, true);
	b->finished = !err;
	return err;
}

void lp_ex_batch_reset(struct lp_ex_batch *b)
{
	b->rows.len = b->gz.len = b->fed = 0;
	b->dropped = b->nrows = 0;
	b->finished = false;
	if (b->z_open)
		deflateReset(&b->z);
}

void lp_ex_batch_free(struct lp_ex_batch *b)
{
	if (b->z_open)
		deflateEnd(&b->z);
	lp_buf_free(&b->rows);
	lp_buf_free(&b->gz);
	memset(b, 0, sizeof(*b));
}
