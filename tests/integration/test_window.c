// SPDX-License-Identifier: MIT
/*
 * record --window, as a user running a service for weeks relies on it: the
 * windows' summaries of a deterministic target (tests/targets/windowed: a
 * fixed number of spans) add up exactly to a whole recording of the same
 * target; the target's own log of each span's end (the clock right before and
 * right after its exit marker) puts it in exactly one window, the one whose
 * summary and trace count it; a span open across boundaries is counted once,
 * where it ended, and said there; --keep leaves the newest files only.
 * (--export: tests/integration/test_export.c, against a real ClickHouse.)
 * Needs root (BPF): skipped otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
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
static char tmpdir[] = "/tmp/lp-itest-window-XXXXXX";

#include "itest.h"

#define ROUNDS "30" /* 3 s of tests/targets/windowed: 30 outer, 120 inner, 1 long */
#define MAX_WINDOWS 64
#define MAX_SPANS 512

static const char *const names[] = { "win.outer", "win.inner", "win.long" };
#define NNAMES 3

struct logged {
	int name; /* index in names */
	uint64_t start, before, after;
};

struct window {
	char file[128];
	json_object *sum;
	uint64_t start, end, began_before;
	int64_t calls[NNAMES];
};

/* Runs leanprofiler record -o DIR ARGS... -- windowed LOG ROUNDS; fails the test unless it exits 0. */
static void record(const char *dir, const char *log, const char *const args[])
{
	char *argv[24];
	int n = 0;
	struct run r;

	argv[n++] = fmt("%s/leanprofiler", build);
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = (char *)dir;
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	argv[n++] = "--";
	argv[n++] = fmt("%s/tests/targets/windowed", build);
	argv[n++] = (char *)log;
	argv[n++] = ROUNDS;
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record exited %d:\n%s", r.status, r.err);
	run_free(&r);
}

static int name_index(const char *name)
{
	for (int i = 0; i < NNAMES; i++)
		if (!strcmp(names[i], name))
			return i;
	fail_msg("a row of an unexpected name: %s", name);
	return -1;
}

/* The calls of each name in a summary's rows. */
static void calls_of(json_object *sum, int64_t calls[NNAMES])
{
	json_object *rows = get(sum, "rows");

	memset(calls, 0, NNAMES * sizeof(*calls));
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		calls[name_index(get_s(row, "name"))] += get_i(row, "calls");
	}
}

/* The files of dir whose names begin with prefix, sorted (by their UTC start: oldest first). */
static size_t files_of(const char *dir, const char *prefix, char out[][128], size_t max)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t k = 0;

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (!strncmp(ents[i]->d_name, prefix, strlen(prefix)) && k < max)
			snprintf(out[k++], 128, "%.127s", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return k;
}

/* The windows' summaries in dir; from_first: all of them, indexes from 0. */
static size_t load_windows(const char *dir, struct window *w, bool from_first)
{
	char files[MAX_WINDOWS][128];
	size_t n = files_of(dir, "leanprofiler-summary.2", files, MAX_WINDOWS);

	for (size_t i = 0; i < n; i++) {
		json_object *win;

		snprintf(w[i].file, sizeof(w[i].file), "%s", files[i]);
		w[i].sum = load_json(fmt("%s/%s", dir, files[i]));
		win = get(w[i].sum, "window");
		w[i].start = (uint64_t)get_i(win, "start_ns");
		w[i].end = (uint64_t)get_i(win, "end_ns");
		w[i].began_before = (uint64_t)get_i(win, "spans_began_before");
		if (from_first)
			assert_int_equal(get_i(win, "index"), (int64_t)i);
		calls_of(w[i].sum, w[i].calls);
	}
	return n;
}

static size_t load_log(const char *path, struct logged *l)
{
	char *text = slurp(path, NULL), *save = NULL;
	size_t n = 0;

	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[32];
		unsigned long long s, b, a;

		assert_int_equal(sscanf(line, "%31s %llu %llu %llu", name, &s, &b, &a), 4);
		assert_true(n < MAX_SPANS);
		l[n++] = (struct logged){ name_index(name), s, b, a };
	}
	free(text);
	return n;
}

/*
 * The windows add up to the whole recording, window by window the log agrees,
 * the traces hold the spans that ended in their window, the long span is
 * counted once and marked where it ended.
 */
static void test_windows_add_up_to_the_whole(void **state)
{
	char *dir = fmt("%s/windows", tmpdir), *whole = fmt("%s/whole", tmpdir);
	char *log = fmt("%s/windows.log", tmpdir);
	static struct window w[MAX_WINDOWS];
	static struct logged l[MAX_SPANS];
	int64_t sum[NNAMES] = { 0 }, want[NNAMES], own[NNAMES];
	size_t n, nl;
	json_object *rec;

	(void)state;
	record(dir, log, (const char *const[]){ "--window", "0.5", NULL });
	record(whole, fmt("%s/whole.log", tmpdir), (const char *const[]){ NULL });
	n = load_windows(dir, w, true);
	nl = load_log(log, l);
	/* ~3.1 s in 0.5 s windows: the last one cut short by the command's exit. */
	assert_in_range(n, 6, 9);
	calls_of(summary_of(whole), want);
	assert_int_equal(want[0], 30);
	assert_int_equal(want[1], 120);
	assert_int_equal(want[2], 1);
	/* The whole recording's summary of the windowed run counts the same. */
	calls_of(summary_of(dir), own);
	rec = get(summary_of(dir), "recording");
	for (size_t i = 0; i < n; i++) {
		/* Windows follow each other without a gap, from the start of recording to its end. */
		assert_int_equal(w[i].start, i ? w[i - 1].end : (uint64_t)get_i(rec, "start_ns"));
		if (i + 1 < n)
			assert_int_equal(w[i].end - w[i].start, 500000000);
		assert_int_equal(json_object_get_boolean(get(get(w[i].sum, "window"), "last")),
				 i + 1 == n);
		for (int k = 0; k < NNAMES; k++)
			sum[k] += w[i].calls[k];
	}
	assert_int_equal(w[n - 1].end, (uint64_t)get_i(rec, "end_ns"));
	for (int k = 0; k < NNAMES; k++) {
		assert_int_equal(sum[k], want[k]);
		assert_int_equal(own[k], want[k]);
	}

	/*
	 * Each logged span in the window of its end: certainly (both clock
	 * readings around its exit in the window) or possibly (a boundary falls
	 * between them, microseconds apart).
	 */
	for (size_t i = 0; i < n; i++) {
		int64_t certain[NNAMES] = { 0 }, possible[NNAMES] = { 0 };
		uint64_t bb_certain = 0, bb_possible = 0;
		json_object *trace = load_json(fmt("%s/%s", dir, get_s(get(w[i].sum, "files"),
									"trace") +
								  strlen(dir) + 1));
		json_object *evs = get(trace, "traceEvents");
		int64_t in_trace[NNAMES] = { 0 };
		uint64_t base = (uint64_t)get_i(rec, "start_ns");

		for (size_t j = 0; j < nl; j++) {
			bool sure = l[j].before >= w[i].start && l[j].after < w[i].end;
			bool maybe = l[j].after >= w[i].start && l[j].before < w[i].end;

			certain[l[j].name] += sure;
			possible[l[j].name] += maybe;
			/* Began before the window: its enter is before the clock read before it. */
			bb_certain += sure && l[j].start + 1000000 < w[i].start;
			bb_possible += maybe && l[j].start < w[i].start + 1000000;
		}
		for (int k = 0; k < NNAMES; k++) {
			if (w[i].calls[k] < certain[k] || w[i].calls[k] > possible[k])
				fail_msg("%s: %lld %s spans, the log says %lld to %lld", w[i].file,
					 (long long)w[i].calls[k], names[k], (long long)certain[k],
					 (long long)possible[k]);
		}
		assert_in_range(w[i].began_before, bb_certain, bb_possible);
		/* Its trace: the spans that ended in it, exactly those its summary counts. */
		for (size_t e = 0; e < json_object_array_length(evs); e++) {
			json_object *ev = json_object_array_get_idx(evs, e);
			double end_us;

			if (strcmp(get_s(ev, "ph"), "X"))
				continue;
			end_us = json_object_get_double(get(ev, "ts")) +
				 json_object_get_double(get(ev, "dur"));
			in_trace[name_index(get_s(ev, "name"))]++;
			assert_true(base + (uint64_t)(end_us * 1000.0) + 1 >= w[i].start);
			assert_true(base + (uint64_t)(end_us * 1000.0) < w[i].end + 1);
		}
		for (int k = 0; k < NNAMES; k++)
			assert_int_equal(in_trace[k], w[i].calls[k]);
		json_object_put(trace);
	}
	/* The long span: counted in one window, which says one of its spans began before it. */
	for (size_t i = 0; i < n; i++)
		if (w[i].calls[2])
			assert_true(w[i].began_before >= 1);
	/* Each window's summary reads back as a recording. */
	{
		char *argv[] = { fmt("%s/leanprofiler", build), "report",
				 fmt("%s/%s", dir, w[1].file), NULL };
		struct run r;

		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "win.inner"));
		run_free(&r);
	}
}

/* --summary-only --keep 2: the two newest windows stay, no trace is written. */
static void test_keep_removes_the_oldest(void **state)
{
	char *dir = fmt("%s/keep", tmpdir);
	char files[MAX_WINDOWS][128];
	static struct window w[MAX_WINDOWS];
	json_object *rec;

	(void)state;
	record(dir, fmt("%s/keep.log", tmpdir),
	       (const char *const[]){ "--window", "500ms", "--summary-only", "--keep", "2", NULL });
	rec = get(summary_of(dir), "recording");
	assert_int_equal(files_of(dir, "leanprofiler-trace", files, MAX_WINDOWS), 0);
	assert_int_equal(load_windows(dir, w, false), 2);
	/* The newest two: the last (cut at the end of recording) and the one before it. */
	assert_true(json_object_get_boolean(get(get(w[1].sum, "window"), "last")));
	assert_int_equal(w[1].end, (uint64_t)get_i(rec, "end_ns"));
	assert_int_equal(w[0].end, w[1].start);
	assert_int_equal(get_i(get(w[0].sum, "window"), "index") + 1,
			 get_i(get(w[1].sum, "window"), "index"));
	/* Older ones were written, and removed: ~3.1 s of 0.5 s windows. */
	assert_true(get_i(get(w[1].sum, "window"), "index") >= 5);
	assert_string_equal(dir_entries(dir), fmt("%s\n%s\nleanprofiler-summary.json\n", w[0].file,
						  w[1].file));
}

/* What --window does not take: a clear error, 125, nothing recorded. */
static void test_bad_options(void **state)
{
	static const char *const bad[][4] = {
		{ "--keep", "2", NULL },
		{ "--window", "0.05", NULL },
		{ "--window", "1", "--format", "perfetto" },
		{ "--window", "1", "--trace-last", "1s" },
		{ "--window", "1", "--keep", "0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[12] = { fmt("%s/leanprofiler", build), "record", "-o",
				   fmt("%s/bad%zu", tmpdir, i) };
		int n = 4;
		struct run r;

		for (int k = 0; k < 4 && bad[i][k]; k++)
			argv[n++] = (char *)bad[i][k];
		argv[n++] = "--";
		argv[n++] = "/bin/true";
		argv[n] = NULL;
		assert_int_equal(run(&r, argv), 0);
		if (r.status != 125 || !strstr(r.err, "leanprofiler record: "))
			fail_msg("%s %s: exited %d:\n%s", bad[i][0], bad[i][1], r.status, r.err);
		assert_int_equal(access(fmt("%s/bad%zu", tmpdir, i), F_OK), -1);
		run_free(&r);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows_add_up_to_the_whole),
		cmocka_unit_test(test_keep_removes_the_oldest),
		cmocka_unit_test(test_bad_options),
	};

	if (argc > 1)
		build = argv[1];
	if (!itest_as_root("test_window"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, stop_started_remove_tmpdir);
}
