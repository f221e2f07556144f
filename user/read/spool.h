/* SPDX-License-Identifier: MIT */
/*
 * Records written one after another to an unlinked temporary file, then read
 * back from the last: how a stream is reversed with memory bounded (a chunk
 * of LP_SPOOL_CHUNK bytes each way) whatever its length. The Perfetto trace's
 * reader and report --format perfetto reverse their spans through it.
 */
#ifndef LP_SPOOL_H
#define LP_SPOOL_H

#include "text.h"

#define LP_SPOOL_CHUNK (1u << 20)

struct lp_spool {
	int fd;
	struct lp_buf out;   /* not written yet */
	uint64_t len;        /* written */
	struct lp_buf win;   /* the file's bytes [lo, lo + win.len), read back */
	uint64_t lo, pos;    /* pos: where the next record back ends */
};

/* In $TMPDIR (else /tmp), unlinked from the start. 0 or -errno. */
int lp_spool_open(struct lp_spool *s);
/* Appends one record (at most UINT32_MAX bytes). 0 or -errno. */
int lp_spool_put(struct lp_spool *s, const void *rec, size_t len);
/* Writes out what is held; lp_spool_prev() then starts from the last record. 0 or -errno. */
int lp_spool_rewind(struct lp_spool *s);
/* The record before the last one returned: 1, 0 past the first, or -errno (-EIO: corrupt). */
int lp_spool_prev(struct lp_spool *s, const void **rec, size_t *len);
/* Closes and frees; a spool never opened must have fd -1. */
void lp_spool_close(struct lp_spool *s);

#endif
