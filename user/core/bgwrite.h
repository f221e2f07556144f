/* SPDX-License-Identifier: MIT */
/*
 * A file written by a thread of its own: the writer fills a buffer, hands it
 * over and fills the next while the thread's write(2) copies the last one
 * into the page cache (or waits for the disk). The trace is hundreds of MB:
 * written in the consumer's thread, that copy was a quarter of its time, and
 * a slow disk stalled the draining of the ring buffers.
 *
 * LP_BGW_BUFFERS buffers of LP_BGW_BUFFER bytes each: when all are queued
 * the writer waits for one (the disk sets the pace, memory stays bounded).
 */
#ifndef LP_BGWRITE_H
#define LP_BGWRITE_H

#include <stddef.h>
#include <stdint.h>

#define LP_BGW_BUFFER (1u << 20)
#define LP_BGW_BUFFERS 4
/*
 * The thread starts the disk's writeback of every LP_BGW_SYNC_EVERY bytes it
 * wrote (sync_file_range), and waits for the writeback of the range before
 * that: the file's dirty pages stay a few MiB, and the fsync that commits
 * it (outfile.h) finds little left to write, instead of the whole file at
 * the end (bench row 6: the pipeline's time was its CPU time plus a write
 * of the whole trace after it).
 */
#define LP_BGW_SYNC_EVERY (8u << 20)
/*
 * And a second thread commits the file to the disk (fdatasync) every
 * LP_BGW_DATASYNC_EVERY bytes, beside the writes: the commit's fsync then
 * has the last few MiB to commit, not the whole file's. With the writeback
 * alone that fsync still took 0.14 s for a 356 MB trace here (bench row 6),
 * 0.02 s after. Not in the writer's thread: each one takes tens of ms, in
 * which the pipeline would wait for a buffer.
 */
#define LP_BGW_DATASYNC_EVERY (32u << 20)

struct lp_bgw;

/*
 * Starts the thread writing to fd (not closed by it). NULL when memory or a
 * thread cannot be had: the caller writes itself.
 */
struct lp_bgw *lp_bgw_start(int fd);
/* An empty buffer of LP_BGW_BUFFER bytes to fill (waits until one is free). */
char *lp_bgw_buffer(struct lp_bgw *b);
/*
 * Queues len bytes of buf (from lp_bgw_buffer) to be written in order.
 * The first error of any write so far, -errno, or 0: after an error
 * nothing more is written.
 */
int lp_bgw_queue(struct lp_bgw *b, char *buf, size_t len);
/*
 * Waits until every queued byte is written, ends the threads and frees b.
 * The first error of any write or commit, or 0. *written, *commits (either
 * may be NULL): bytes written, commits made beside the writes.
 */
int lp_bgw_finish(struct lp_bgw *b, uint64_t *written, uint64_t *commits);

#endif
