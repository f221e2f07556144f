// SPDX-License-Identifier: MIT
/*
 * lp_bgw (user/core/bgwrite.c): the trace's bytes reach the file whole and in
 * order while the committer commits beside the writer; a file is committed
 * every LP_BGW_DATASYNC_EVERY bytes, a pipe never; and an error of the
 * writes comes back from lp_bgw_finish().
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bgwrite.h"

/* Buffers of LP_BGW_BUFFER bytes: past three commits' worth. */
#define NBUF (3 * (LP_BGW_DATASYNC_EVERY / LP_BGW_BUFFER) + 5)

/* Buffer i's bytes: its number and the offset in it, so that a swap or a gap shows. */
static void fill(char *p, size_t len, unsigned i)
{
	for (size_t k = 0; k < len; k++)
		p[k] = (char)(i * 31 + k % 251);
}

/*
 * Queues NBUF buffers of len bytes through b, each filled by fill(): the
 * first error lp_bgw_queue() gave, or 0.
 */
static int write_all(struct lp_bgw *b, size_t len)
{
	int first = 0;

	for (unsigned i = 0; i < NBUF; i++) {
		char *p = lp_bgw_buffer(b);
		int err;

		assert_non_null(p);
		fill(p, len, i);
		err = lp_bgw_queue(b, p, len);
		first = first ? first : err;
	}
	return first;
}

/* The fd's bytes from its start are NBUF buffers of len bytes as fill() made them. */
static void check_bytes(int fd, size_t len)
{
	char *want = malloc(len), *got = malloc(len);

	assert_non_null(want);
	assert_non_null(got);
	for (unsigned i = 0; i < NBUF; i++) {
		size_t have = 0;

		fill(want, len, i);
		while (have < len) {
			ssize_t n = read(fd, got + have, len - have);

			assert_true(n > 0);
			have += (size_t)n;
		}
		assert_memory_equal(got, want, len);
	}
	assert_int_equal(read(fd, got, 1), 0); /* nothing after */
	free(want);
	free(got);
}

static int tmp_file(void)
{
	char path[] = "/var/tmp/lp-bgwrite-XXXXXX"; /* on a disk: /tmp may be a tmpfs */
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

/* A file: whole and in order, committed along the way (a commit per LP_BGW_DATASYNC_EVERY). */
static void test_file_whole_and_committed(void **state)
{
	int fd = tmp_file();
	struct lp_bgw *b = lp_bgw_start(fd);
	uint64_t written = 0, commits = 0;
	size_t len = LP_BGW_BUFFER - 7; /* not a round size: the offsets shift */

	assert_non_null(b);
	assert_int_equal(write_all(b, len), 0);
	assert_int_equal(lp_bgw_finish(b, &written, &commits), 0);
	assert_int_equal(written, (uint64_t)NBUF * len);
	/*
	 * Asked at each LP_BGW_DATASYNC_EVERY; one asked while another runs
	 * merges with it, so at least one, at most one per period.
	 */
	assert_true(commits >= 1);
	assert_true(commits <= written / LP_BGW_DATASYNC_EVERY);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	check_bytes(fd, len);
	close(fd);
}

struct drain {
	int fd;
	size_t len;
};

static void *drain(void *arg)
{
	struct drain *d = arg;

	check_bytes(d->fd, d->len);
	return NULL;
}

/* A pipe: no commit (nothing to commit to), the bytes whole and in order. */
static void test_pipe_not_committed(void **state)
{
	int p[2];
	struct drain d = { .len = 4096 };
	pthread_t reader;
	struct lp_bgw *b;
	uint64_t written = 0, commits = 1;

	assert_int_equal(pipe(p), 0);
	d.fd = p[0];
	assert_int_equal(pthread_create(&reader, NULL, drain, &d), 0);
	b = lp_bgw_start(p[1]);
	assert_non_null(b);
	assert_int_equal(write_all(b, d.len), 0);
	assert_int_equal(lp_bgw_finish(b, &written, &commits), 0);
	close(p[1]);
	assert_int_equal(pthread_join(reader, NULL), 0);
	assert_int_equal(written, (uint64_t)NBUF * d.len);
	assert_int_equal(commits, 0);
	close(p[0]);
}

/* A write that fails: its error comes back, and nothing counts as written. */
static void test_write_error_reported(void **state)
{
	int fd = tmp_file(), ro;
	char self[64];
	struct lp_bgw *b;
	uint64_t written = 1;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ro = open(self, O_RDONLY);
	assert_true(ro >= 0);
	b = lp_bgw_start(ro);
	assert_non_null(b);
	/* The writes fail after the first queued: its error, or none yet. */
	int queued = write_all(b, 100);

	assert_true(queued == 0 || queued == -EBADF);
	assert_int_equal(lp_bgw_finish(b, &written, NULL), -EBADF);
	assert_int_equal(written, 0);
	close(ro);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_whole_and_committed),
		cmocka_unit_test(test_pipe_not_committed),
		cmocka_unit_test(test_write_error_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
