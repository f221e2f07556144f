/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto trace's file output (pftrace.c): packets appended to a chunk,
 * each full chunk deflated (libdeflate, in zlib's format) into one TracePacket { compressed_packets }
 * and written, by a thread of its own while the next chunk fills: deflate
 * costs more than encoding the packets, and the pipeline's thread goes on with
 * the records. Without a thread (pthread_create failed), chunks are deflated
 * in line: slower, the same file.
 */
#ifndef LP_PFZOUT_H
#define LP_PFZOUT_H

#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>

#include "pbw.h"

struct lp_pfz {
	int fd;
	struct pb_buf chunk; /* the packets not handed over yet: the caller appends here */
	struct libdeflate_compressor *z;
	struct pb_buf zbuf; /* one compressed_packets packet */
	/* Under mu: job, job_ready, quit, err and the byte counts. */
	pthread_t th;
	bool th_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pb_buf job;
	bool job_ready, quit;
	int err; /* the first error deflating or writing */
	uint64_t raw_bytes, file_bytes; /* handed over; written */
};

/* Output to fd (the caller's). 0 or -ENOMEM. */
int lp_pfz_init(struct lp_pfz *z, int fd);
/* Hands the chunk over (when it holds packets); the first error so far, or 0. */
int lp_pfz_flush(struct lp_pfz *z);
/* The last chunk handed over and everything written; the first error, or 0. */
int lp_pfz_finish(struct lp_pfz *z);
/* Stops the thread (what it holds is written), frees; the file stays the caller's. */
void lp_pfz_release(struct lp_pfz *z);

#endif
