/* SPDX-License-Identifier: MIT */
/*
 * A batch of JSONEachRow rows, the body of one INSERT: plain, or a gzip
 * member (zlib) deflated as the rows are made, in pieces of
 * LP_EX_GZIP_CHUNK bytes. With gzip, the plain rows are kept whole only
 * while the caller may have to send them plain (keep_plain: until the
 * server has taken a gzip body); else a batch holds its compressed bytes
 * and at most one piece of plain rows, whatever its number of rows.
 */
#ifndef LP_EX_BATCH_H
#define LP_EX_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <zlib.h>

#include "text.h"

/*
 * zlib's level 1, its fastest: spans rows come out 14.6 times smaller at
 * ~310 MB/s on the bench host; level 6 (zlib's default) makes them 20 times
 * smaller at ~117 MB/s, nearly 3 times the CPU for 1.4 times fewer bytes,
 * on the CPUs the exporter shares with what it profiles.
 */
#define LP_EX_GZIP_LEVEL 1
/* Plain rows are deflated once this many bytes wait (a zlib call per ~400-byte row costs more). */
#define LP_EX_GZIP_CHUNK (64u << 10)

struct lp_ex_batch {
	struct lp_buf rows; /* every row while plain or keep_plain; else those not deflated yet */
	struct lp_buf gz;   /* the gzip member so far */
	size_t fed;         /* bytes of rows deflated */
	uint64_t dropped;   /* bytes of rows deflated and dropped (not keep_plain) */
	uint64_t nrows;
	bool gzip, keep_plain, z_open, finished;
	z_stream z;
};

/* The next batches are plain, or gzip (keeping their plain rows too when keep_plain). 0 or -ENOMEM. */
int lp_ex_batch_mode(struct lp_ex_batch *b, bool gzip, bool keep_plain);
/* Where the next row is appended (lp_ex_span_row and the like); then lp_ex_batch_added. */
static inline struct lp_buf *lp_ex_batch_rows(struct lp_ex_batch *b)
{
	return &b->rows;
}
/* A row was appended: counted, and deflated once a piece is full. 0 or -ENOMEM. */
int lp_ex_batch_added(struct lp_ex_batch *b);
/* Bytes of plain rows in the batch, deflated ones included. */
static inline uint64_t lp_ex_batch_plain_len(const struct lp_ex_batch *b)
{
	return b->dropped + b->rows.len;
}
/* The gzip member ends (its body is b->gz); plain: nothing to do. 0 or -ENOMEM. */
int lp_ex_batch_finish(struct lp_ex_batch *b);
/* Empty again, for the next batch (the deflate state is kept and reset). */
void lp_ex_batch_reset(struct lp_ex_batch *b);
void lp_ex_batch_free(struct lp_ex_batch *b);

#endif
