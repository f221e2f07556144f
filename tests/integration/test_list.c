// SPDX-License-Identifier: MIT
/*
 * `leanprofiler list` on real binaries and a running process, as an
 * unprivileged user (nobody, through setpriv): it needs no root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-itest-list-XXXXXX";

#include "itest.h"

#define PYTHON "/usr/bin/python3.11"

/* leanprofiler list ARGS... as nobody; r gets its output. */
static void list_as_nobody(struct run *r, const char *a1, const char *a2)
{
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			 fmt("%s/leanprofiler", build), "list", (char *)a1, (char *)a2, NULL };

	assert_int_equal(run(r, argv), 0);
}

static int count_lines(const char *s, const char *needle)
{
	int n = 0;

	for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strstr(l, needle) && (!strchr(l, '\n') || strstr(l, needle) < strchr(l, '\n')))
			n++;
	return n;
}

static void test_python(void **state)
{
	struct run r;

	(void)state;
	list_as_nobody(&r, PYTHON, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	/* Debian's python3.11 has 8 probes, each at one site with a semaphore. */
	assert_int_equal(count_lines(r.out, "file=" PYTHON), 8);
	assert_int_equal(count_lines(r.out, " sites=1 semaphore=yes@0x"), 8);
	assert_non_null(strstr(r.out, "python:import__find__load__start "));
	assert_non_null(strstr(r.out, " args=\"8@%rax\" file=" PYTHON " presets=cpython\n"));
	assert_int_equal(count_lines(r.out, "presets=cpython"), 4);
	assert_non_null(strstr(r.out, "python:function__entry "));
	assert_int_equal(count_lines(r.out, "marker=leanprofiler"), 0);
	run_free(&r);
}

static void test_our_markers(void **state)
{
	char *bin = fmt("%s/examples/nested", build);
	struct run r;

	(void)state;
	list_as_nobody(&r, bin, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out, "sites="), 2);
	assert_int_equal(count_lines(r.out, "marker=leanprofiler"), 2);
	assert_non_null(strstr(r.out, "leanprofiler:span_enter "));
	assert_non_null(strstr(r.out, " args=\"8@%rdi 8@%rsi 8@%rdx 8@%rcx\" file="));
	assert_non_null(strstr(r.out, "leanprofiler:span_exit "));
	run_free(&r);
}

static void test_libstdcxx(void **state)
{
	struct run r;
	const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

	(void)state;
	list_as_nobody(&r, lib, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out, "presets=libstdcxx"), 3);
	assert_int_equal(count_lines(r.out, "semaphore=no"), 3);
	run_free(&r);
}

/* A running python3.11 of nobody's own: its executable's probes are listed. */
static void test_pid(void **state)
{
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			 PYTHON, "-c", "import time; time.sleep(30)", NULL };
	struct run r;
	pid_t pid = fork();
	int st;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(99);
	}
	usleep(300000);
	list_as_nobody(&r, "-p", fmt("%d", (int)pid));
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out, "file=" PYTHON), 8);
	run_free(&r);
}

/*
 * A probe whose second site's argument libbpf cannot decode (an indexed
 * operand): said, with how many of the sites it is. Before, only the first
 * site was looked at, and the line had no unsupported= at all.
 */
static void test_unsupported_site(void **state)
{
	char *bin = fmt("%s/tests/targets/spanpairs", build);
	struct run r;

	(void)state;
	list_as_nobody(&r, bin, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, fmt("t:two_in                                     sites=2 "
					  "semaphore=no args=\"8@%%rdi\"(first of 2 sites, they "
					  "differ) file=%s unsupported=\"8@32(%%rsp,%%rax,8)\"(1 of "
					  "2 sites)\n",
					  bin)));
	/* the only one */
	assert_int_equal(count_lines(r.out, "unsupported="), 1);
	run_free(&r);
}

static void test_errors(void **state)
{
	struct run r;

	(void)state;
	list_as_nobody(&r, "/nonexistent/x", NULL);
	assert_int_equal(r.status, 125);
	assert_string_equal(r.err, "leanprofiler: cannot list the probes of /nonexistent/x: No such "
				   "file or directory\n");
	run_free(&r);
	list_as_nobody(&r, "/etc/passwd", NULL);
	assert_int_equal(r.status, 125);
	assert_string_equal(r.err, "leanprofiler: cannot list the probes of /etc/passwd: not an ELF "
				   "file\n");
	run_free(&r);
	list_as_nobody(&r, "/bin/true", NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "leanprofiler: no USDT probes in /bin/true"));
	run_free(&r);
	list_as_nobody(&r, "-p", "999999999");
	assert_int_equal(r.status, 125);
	assert_string_equal(r.err, "leanprofiler: cannot list the probes of PID 999999999: no such "
				   "process\n");
	run_free(&r);
	/* PID 1 is root's: its maps are not nobody's to read. */
	list_as_nobody(&r, "-p", "1");
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "PID 1: permission denied"));
	run_free(&r);
	list_as_nobody(&r, NULL, NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "give one of BINARY, -p PID or --presets"));
	run_free(&r);
	/* Two -p: refused as record refuses them, not the last one taken. */
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "list", "-p", "1", "-p",
				 fmt("%d", (int)getpid()), NULL };

		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 125);
		assert_string_equal(r.out, "");
		assert_string_equal(r.err, "leanprofiler list: -p given twice: one process at a "
					   "time; see 'leanprofiler list --help'\n");
		run_free(&r);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python),
		cmocka_unit_test(test_our_markers),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_unsupported_site),
		cmocka_unit_test(test_errors),
	};
	int rc;

	if (argc > 1)
		build = argv[1];
	if (getuid() != 0) {
		printf("SKIPPED: test_list needs root to switch to nobody\n");
		return 0;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(fmt("%s/stdout", tmpdir));
	unlink(fmt("%s/stderr", tmpdir));
	rmdir(tmpdir);
	return rc;
}
