// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* sync_file_range */
#include "bgwrite.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Buffers go round in order: the writer fills buffer queued % N, the thread
 * writes buffer written % N. written <= queued <= written + N.
 */
struct lp_bgw {
	int fd;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t more;  /* a buffer was queued, or the end came */
	pthread_cond_t freed; /* a buffer was written */
	char *buf[LP_BGW_BUFFERS];
	size_t len[LP_BGW_BUFFERS];
	uint64_t queued, written; /* buffers */
	uint64_t bytes;
	/* The thread's own: where fd's writes began, and the last range sent to the disk. */
	off_t start, synced, sync_from;
	bool no_sync; /* not a file sync_file_range() works on: the commit's fsync does it all */
	bool ending;
	int err;
	/* The committer's thread (LP_BGW_DATASYNC_EVERY); stop: the end came. */
	pthread_t committer;
	bool committer_started, has_committer, stop;
	pthread_cond_t ask;
	uint64_t asked, committed; /* bytes written when the last commit was asked, made */
	uint64_t commits;
};

/* Starts the writeback of what was written since the last time, waits for the time before. */
static void start_writeback(struct lp_bgw *b, uint64_t bytes)
{
	off_t end = b->start + (off_t)bytes;

	if (b->no_sync || end - b->synced < (off_t)LP_BGW_SYNC_EVERY)
		return;
	if (sync_file_range(b->fd, b->synced, end - b->synced, SYNC_FILE_RANGE_WRITE)) {
		b->no_sync = true;
		return;
	}
	if (b->synced > b->sync_from)
		sync_file_range(b->fd, b->sync_from, b->synced - b->sync_from,
				SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					SYNC_FILE_RANGE_WAIT_AFTER);
	b->sync_from = b->synced;
	b->synced = end;
}

static void *run(void *arg)
{
	struct lp_bgw *b = arg;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (b->written == b->queued && !b->ending)
			pthread_cond_wait(&b->more, &b->mu);
		if (b->written == b->queued)
			break; /* ending, and nothing left */
		unsigned i = (unsigned)(b->written % LP_BGW_BUFFERS);
		uint64_t bytes = 0;
		int err = b->err;

		pthread_mutex_unlock(&b->mu);
		if (!err) {
			err = lp_write_all(b->fd, b->buf[i], b->len[i]);
			bytes = err ? 0 : b->len[i];
		}
		pthread_mutex_lock(&b->mu);
		b->bytes += bytes;
		if (b->has_committer && b->bytes - b->asked >= LP_BGW_DATASYNC_EVERY) {
			b->asked = b->bytes;
			pthread_cond_signal(&b->ask);
		}
		if (!err) {
			uint64_t total = b->bytes;

			/* b->bytes is the thread's to change: it may read it unlocked. */
			pthread_mutex_unlock(&b->mu);
			start_writeback(b, total);
			pthread_mutex_lock(&b->mu);
		}
		if (err && !b->err)
			b->err = err;
		b->written++;
		pthread_cond_signal(&b->freed);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/*
 * Commits what was written so far whenever asked, beside the writer. Its
 * error is the file's: a later fsync may not report it again.
 */
static void *commit_run(void *arg)
{
	struct lp_bgw *b = arg;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (b->asked == b->committed && !b->stop)
			pthread_cond_wait(&b->ask, &b->mu);
		if (b->stop)
			break;
		uint64_t at = b->asked;

		pthread_mutex_unlock(&b->mu);
		int err = fdatasync(b->fd) ? -errno : 0;

		pthread_mutex_lock(&b->mu);
		b->committed = at;
		b->commits += !err;
		if (err == -EINVAL || err == -EROFS) {
			b->has_committer = false; /* fd cannot be committed: the caller's fsync says so */
			break;
		}
		if (err && !b->err)
			b->err = err;
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/*
 * The committer ends without a last commit (the caller's fsync makes it),
 * after the one under way, if any: joined, so that its error is in b->err.
 */
static void stop_committer(struct lp_bgw *b)
{
	if (!b->committer_started)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_signal(&b->ask);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->committer, NULL);
}

static void free_bgw(struct lp_bgw *b)
{
	for (unsigned i = 0; i < LP_BGW_BUFFERS; i++)
		free(b->buf[i]);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->more);
	pthread_cond_destroy(&b->freed);
	pthread_cond_destroy(&b->ask);
	free(b);
}

struct lp_bgw *lp_bgw_start(int fd)
{
	struct lp_bgw *b = calloc(1, sizeof(*b));
	sigset_t all, old;
	int err;

	if (!b)
		return NULL;
	b->fd = fd;
	b->start = lseek(fd, 0, SEEK_CUR);
	b->no_sync = b->start < 0;
	b->synced = b->sync_from = b->start;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->more, NULL);
	pthread_cond_init(&b->freed, NULL);
	pthread_cond_init(&b->ask, NULL);
	for (unsigned i = 0; i < LP_BGW_BUFFERS; i++) {
		b->buf[i] = malloc(LP_BGW_BUFFER);
		if (!b->buf[i]) {
			free_bgw(b);
			return NULL;
		}
	}
	/* Signals (SIGINT, the children's SIGCHLD) stay with the threads that wait for them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* Without the committer, the commit's fsync does it all, as it would anyway. */
	if (!b->no_sync)
		b->committer_started = b->has_committer =
			!pthread_create(&b->committer, NULL, commit_run, b);
	err = pthread_create(&b->thread, NULL, run, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		stop_committer(b);
		free_bgw(b);
		return NULL;
	}
	return b;
}

char *lp_bgw_buffer(struct lp_bgw *b)
{
	char *p;

	pthread_mutex_lock(&b->mu);
	while (b->queued - b->written >= LP_BGW_BUFFERS)
		pthread_cond_wait(&b->freed, &b->mu);
	p = b->buf[b->queued % LP_BGW_BUFFERS];
	pthread_mutex_unlock(&b->mu);
	return p;
}

int lp_bgw_queue(struct lp_bgw *b, char *buf, size_t len)
{
	unsigned i = (unsigned)(b->queued % LP_BGW_BUFFERS);
	int err;

	pthread_mutex_lock(&b->mu);
	if (buf == b->buf[i] && len <= LP_BGW_BUFFER) {
		b->len[i] = len;
		b->queued++;
		pthread_cond_signal(&b->more);
	} else if (!b->err) {
		b->err = -EINVAL; /* not the buffer lp_bgw_buffer() handed out */
	}
	err = b->err;
	pthread_mutex_unlock(&b->mu);
	return err;
}

int lp_bgw_finish(struct lp_bgw *b, uint64_t *written, uint64_t *commits)
{
	int err;

	pthread_mutex_lock(&b->mu);
	b->ending = true;
	pthread_cond_signal(&b->more);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->thread, NULL);
	stop_committer(b);
	err = b->err;
	if (written)
		*written = b->bytes;
	if (commits)
		*commits = b->commits;
	free_bgw(b);
	return err;
}
