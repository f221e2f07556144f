// SPDX-License-Identifier: MIT
/*
 * Integration tests of the Python module (python/, built by make into
 * build/python): real CPython processes running tests/targets/pyspans.py,
 * recorded launched and with -p (the module imported before the attach, and
 * after it), each span of the trace checked against the one the program
 * logged itself: thread, depth, name, metadata, counter, and the kernel's
 * timestamps between the program's clock readings around each marker. Needs
 * root (BPF): skipped otherwise.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-python-XXXXXX";
#define RECORDING_MS 20000
#define PYTHON "/usr/bin/python3"
#define TARGET "tests/targets/pyspans.py"

#include "itest.h"
#include "itest_record.h"

/* Hex (or "-" for empty) into text. */
static void unhex(const char *hex, char *out, size_t size)
{
	size_t n = 0;

	if (strcmp(hex, "-"))
		for (; hex[0] && hex[1] && n + 1 < size; hex += 2)
			sscanf(hex, "%2hhx", (unsigned char *)&out[n++]);
	out[n] = '\0';
}

static size_t read_logged(const char *p, struct itest_span **out)
{
	FILE *f = fopen(p, "r");
	size_t n = 0, cap = 512;
	struct itest_span *s = calloc(cap, sizeof(*s));
	static char line[8192], counter[32], name[4096], meta[4096], text[4096];

	if (!f)
		fail_msg("the program wrote no log %s", p);
	while (fgets(line, sizeof(line), f)) {
		struct itest_span *sp;

		if (n == cap)
			s = realloc(s, (cap *= 2) * sizeof(*s));
		sp = &s[n++];
		memset(sp, 0, sizeof(*sp));
		assert_int_equal(sscanf(line, "%d %d %lu %lu %lu %lu %31s %4095s %4095s", &sp->tid,
					&sp->depth, &sp->t[0], &sp->t[1], &sp->t[2], &sp->t[3], counter,
					name, meta),
				 9);
		sp->counter = strcmp(counter, "-") ? atoll(counter) : -1;
		unhex(name, text, sizeof(text));
		sp->name = strdup(text);
		unhex(meta, text, sizeof(text));
		sp->meta = strdup(text);
	}
	fclose(f);
	spans_by_tid(s, n);
	*out = s;
	return n;
}

/*
 * The recording in dir against the program's log, span by span, and the
 * summary: every span once, none lost, none left open, each group's calls.
 */
static void compare(const char *dir, const char *logged, const char *what)
{
	struct itest_span *got, *want;
	size_t ngot = read_trace_spans(fmt("%s/leanprofiler-trace.json", dir), &got);
	size_t nwant = read_logged(logged, &want), groups = 0;
	json_object *sum = summary_of(dir), *rows = get(sum, "rows");

	if (ngot != nwant)
		fail_msg("%s: %zu spans recorded, the program logged %zu", what, ngot, nwant);
	for (size_t i = 0; i < nwant; i++) {
		struct itest_span *g = &got[i], *w = &want[i];

		if (g->tid != w->tid || g->depth != w->depth || strcmp(g->name, w->name) ||
		    strcmp(g->meta, w->meta) || g->counter != w->counter)
			fail_msg("%s: span %zu: recorded tid %d depth %d '%s' [%s] counter %lld; the "
				 "program did tid %d depth %d '%s' [%s] counter %lld",
				 what, i, g->tid, g->depth, g->name, g->meta, g->counter, w->tid,
				 w->depth, w->name, w->meta, w->counter);
		if (g->start < w->t[0] || g->start > w->t[1] || g->end < w->t[2] || g->end > w->t[3])
			fail_msg("%s: span %zu '%s': recorded [%lu, %lu], the program saw its enter in "
				 "[%lu, %lu] and its exit in [%lu, %lu]",
				 what, i, w->name, g->start, g->end, w->t[0], w->t[1], w->t[2], w->t[3]);
	}
	assert_int_equal(get_i(sum, "events"), (int64_t)nwant);
	assert_int_equal(get_i(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(get_i(sum, "unterminated_spans"), 0);
	assert_int_equal(get_i(sum, "unmatched_exits"), 0);
	/* Each (name, metadata) is a row with the calls the program made; no other row. */
	for (size_t i = 0; i < nwant; i++) {
		int64_t calls = 0;
		bool first = true, found = false;

		for (size_t j = 0; j < nwant; j++)
			if (!strcmp(want[j].name, want[i].name) && !strcmp(want[j].meta, want[i].meta)) {
				calls++;
				first &= j >= i;
			}
		if (!first)
			continue;
		groups++;
		for (size_t r = 0; r < json_object_array_length(rows); r++) {
			json_object *row = json_object_array_get_idx(rows, r);

			if (!strcmp(get_s(row, "name"), want[i].name) &&
			    !strcmp(get_s(row, "meta_text"), want[i].meta)) {
				assert_int_equal(get_i(row, "calls"), calls);
				found = true;
			}
		}
		if (!found)
			fail_msg("%s: no summary row '%s' [%s]", what, want[i].name, want[i].meta);
	}
	assert_int_equal(json_object_array_length(rows), groups);
	print_message("%s: %zu spans match, %zu rows\n", what, nwant, groups);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", dir));
	free(got);
	free(want);
}

/* record -- python3 pyspans.py: the interpreter has no markers; the module it imports has. */
static void test_launched(void **state)
{
	char *dir = fmt("%s/launched", tmpdir), *log = fmt("%s/launched.log", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", dir, "--", PYTHON, TARGET,
			 log, NULL };
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record exited %d:\n%s", r.status, r.err);
	assert_null(strstr(r.err, "warning"));
	compare(dir, log, "launched");
	run_free(&r);
}

/* record -p: the program waits (importing the module before, or after) until attached. */
static void attached(const char *name, const char *how)
{
	char *log = fmt("%s/%s.log", tmpdir, name), line[64];
	char *pargv[] = { PYTHON, TARGET, log, "--wait", (char *)how, NULL };
	struct io in = { .mode = IO_PIPE }, out = { .mode = IO_PIPE }, err = { .mode = IO_INHERIT };
	pid_t py = spawn(pargv, &in, &out, &err);
	struct lines *pyout = lines_new(out.fd);
	struct lp p;

	assert_int_equal(lines_read(pyout, line, sizeof(line), 10000), 1);
	assert_string_equal(line, "ready");
	lp_start(&p, name, (const char *const[]){ "-p", fmt("%d", (int)py), NULL });
	lp_wait_recording(&p);
	assert_int_equal(write(in.fd, "go\n", 3), 3);
	assert_int_equal(wait_exit_within(py, 30000), 0);
	lp_finish(&p, 20000);
	expect_status(&p, 0);
	compare(p.dir, log, name);
	close(in.fd);
	close(out.fd);
}

static void test_attached(void **state)
{
	(void)state;
	attached("attached", "--import-first");
}

/* Attached before `import leanprofiler`: no markers yet, those of the module when it loads. */
static void test_attached_before_import(void **state)
{
	(void)state;
	attached("attached-early", "--import-late");
}

/* A Python program that never imports the module: it runs, record says nothing came. */
static void test_no_markers_said(void **state)
{
	char *dir = fmt("%s/none", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", dir, "--", PYTHON, "-c",
			 "import sys; sys.exit(3)", NULL };
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "leanprofiler: warning: no leanprofiler markers in " PYTHON
					" or in any library it loaded: nothing was recorded\n"));
	run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launched),
		cmocka_unit_test_teardown(test_attached, stop_started),
		cmocka_unit_test_teardown(test_attached_before_import, stop_started),
		cmocka_unit_test(test_no_markers_said),
	};
	char *pypath;
	int rc;

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("test_python"))
		return 0;
	if (access(fmt("%s/python/leanprofiler/__init__.py", build), R_OK)) {
		fprintf(stderr, "test_python: no %s/python/leanprofiler: run make python\n", build);
		return 1;
	}
	/* The module as make built it, for every Python the tests start. */
	pypath = realpath(fmt("%s/python", build), NULL);
	assert_non_null(pypath);
	setenv("PYTHONPATH", pypath, 1);
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0)
		if (system(fmt("rm -rf %s", tmpdir)))
			fprintf(stderr, "test_python: could not remove %s\n", tmpdir);
	return rc;
}
