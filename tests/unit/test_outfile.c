// SPDX-License-Identifier: MIT
/*
 * lp_outfile (user/core/outfile.c): an output that is one of the files the
 * command read (by device and inode: its own name, a hard link, a symbolic
 * link to it) is refused before anything is written, whatever number of
 * files were read (export reads two per recording); and every temporary file
 * is locked while it is written.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "outfile.h"

#define FILES 40 /* more than any fixed table would hold: export of 20 recordings */

static char dir[] = "/tmp/lp-outfile-XXXXXX";

static int dir_entries(void)
{
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_inputs_refused(void **state)
{
	int dfd, fd;
	struct lp_outfile o;
	char name[32];

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	for (int i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "in%d", i);
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "x", 1), 1);
		assert_int_equal(lp_outfile_input_fd(fd, name), 0);
		close(fd);
	}
	/* Read twice: once in the table. */
	fd = openat(dfd, "in0", O_RDONLY);
	assert_int_equal(lp_outfile_input_fd(fd, "in0"), 0);
	assert_string_equal(lp_outfile_input_at_fd(fd), "in0");
	close(fd);
	assert_int_equal(linkat(dfd, "in39", dfd, "hard", 0), 0);
	assert_int_equal(symlinkat("in20", dfd, "soft"), 0);
	for (int i = 0; i < 3; i++) {
		const char *out = i == 0 ? "in39" : i == 1 ? "hard" : "soft";

		assert_int_equal(lp_outfile_openat(&o, dfd, out), -LP_OUTFILE_EINPUT);
		assert_null(o.f);
		assert_non_null(strstr(lp_outfile_strerror(-LP_OUTFILE_EINPUT),
				       i == 2 ? "it is in20, which this command reads"
					      : "it is in39, which this command reads"));
	}
	assert_int_equal(lp_outfile_check(dfd, "in0"), -LP_OUTFILE_EINPUT);
	assert_int_equal(dir_entries(), FILES + 2); /* nothing written, no temporary file */
	/* Another name is written, its temporary file locked meanwhile. */
	assert_int_equal(lp_outfile_openat(&o, dfd, "out"), 0);
	fd = openat(dfd, o.tmp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	fputs("page\n", o.f);
	assert_int_equal(lp_outfile_commit(&o), 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0); /* the writer is done */
	close(fd);
	assert_int_equal(dir_entries(), FILES + 3);
	close(dfd);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
