// SPDX-License-Identifier: MIT
/*
 * Integration tests: the real profiler, real BPF, real target processes.
 * Each test runs build/leanprofiler record on a program from tests/targets or
 * examples and checks the table, the summary JSON and the trace against what
 * the program did. Needs root (CAP_BPF + CAP_PERFMON): skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-itest-XXXXXX";

#include "bgwrite.h"
#include "itest.h"
#include "stats.h" /* LP_GROUPS_MAX */

static json_object *find_row(json_object *summary, const char *name, const char *meta)
{
	json_object *rows = get(summary, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (!strcmp(json_object_get_string(get(row, "name")), name) &&
		    !strcmp(json_object_get_string(get(row, "meta_text")), meta))
			return row;
	}
	fail_msg("no row %s [%s]", name, meta);
	return NULL;
}

static void test_nested_example(void **state)
{
	char *out = fmt("%s/nested", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/examples/nested", build), NULL };
	json_object *sum, *trace, *events, *fwd, *load, *root;
	struct run r;
	double fwd_pct, load_pct;
	int spans = 0;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	/* The seed's layout: two header lines, resources, blank, column header, 3 rows. */
	assert_non_null(strstr(r.out, "Lean profile: 7 events, 1 threads, window "));
	assert_non_null(strstr(r.out, ", 290 Lean heartbeats\n"));
	assert_non_null(strstr(r.out, "\nProcess resources: user CPU "));
	assert_non_null(strstr(r.out, "\n\nName                                      Self       Total  "
				      "Calls      Mean       P95  Self HB      %\n"));
	assert_non_null(strstr(r.out, "\nmodel.forward [phase=forward, module=en\xe2\x80\xa6 "));
	assert_non_null(strstr(r.out, "\ninput.load [phase=input, activity=load] "));
	assert_non_null(strstr(r.out, fmt("\nTrace: %s/leanprofiler-trace.json\n", out)));
	assert_non_null(strstr(r.out, fmt("Summary: %s/leanprofiler-summary.json\n", out)));

	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(json_object_get_int64(get(sum, "events")), 7);
	assert_int_equal(json_object_get_int64(get(sum, "threads")), 1);
	assert_int_equal(json_object_get_int64(get(sum, "counter_total")), 290);
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	fwd = find_row(sum, "model.forward", "phase=forward, module=encoder");
	load = find_row(sum, "input.load", "phase=input, activity=load");
	root = find_row(sum, "example.nested-spans", "");
	assert_int_equal(json_object_get_int64(get(fwd, "calls")), 3);
	assert_int_equal(json_object_get_int64(get(load, "calls")), 3);
	assert_int_equal(json_object_get_int64(get(root, "calls")), 1);
	assert_int_equal(json_object_get_int64(get(root, "self_counter")), 278);
	fwd_pct = json_object_get_double(get(fwd, "self_percent"));
	load_pct = json_object_get_double(get(load, "self_percent"));
	/*
	 * Three 4 ms and three 2 ms sleeps: a sleep never ends early, so each row
	 * holds at least that (how much longer depends on the host's load, which
	 * moved the shares out of fixed bounds on a loaded machine); the shares are
	 * of the recorded thread time, and the three rows hold all of it.
	 */
	assert_true(json_object_get_int64(get(fwd, "self_ns")) >= 3 * 4000000);
	assert_true(json_object_get_int64(get(load, "self_ns")) >= 3 * 2000000);
	{
		double rec = (double)json_object_get_int64(get(sum, "recorded_thread_time_ns"));
		double root_pct = json_object_get_double(get(root, "self_percent"));

		assert_true(fabs(fwd_pct - 100.0 * (double)json_object_get_int64(get(fwd, "self_ns")) / rec) < 0.01);
		assert_true(fabs(load_pct - 100.0 * (double)json_object_get_int64(get(load, "self_ns")) / rec) < 0.01);
		assert_true(fabs(fwd_pct + load_pct + root_pct - 100.0) < 0.01);
	}
	/* The root is slow because of its children. */
	assert_true(json_object_get_int64(get(root, "self_ns")) * 10 <
		    json_object_get_int64(get(root, "total_ns")));

	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	events = get(trace, "traceEvents");
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *e = json_object_array_get_idx(events, i);

		if (!strcmp(json_object_get_string(get(e, "ph")), "X"))
			spans++;
	}
	assert_int_equal(spans, 7);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(sum);
	json_object_put(trace);
	run_free(&r);
}

/* A target's log (workload, flight): a span a line, "tid depth t0 t1 t2 t3 NAME\tMETA". */
static size_t read_expected(const char *p, struct itest_span **out)
{
	FILE *f = fopen(p, "r");
	size_t n = 0, cap = 1024;
	struct itest_span *s = calloc(cap, sizeof(*s));
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct itest_span *sp;
		char *tab;
		int used = 0;

		if (n == cap)
			s = realloc(s, (cap *= 2) * sizeof(*s));
		sp = &s[n];
		memset(sp, 0, sizeof(*sp));
		assert_int_equal(sscanf(line, "%d %d %lu %lu %lu %lu %n", &sp->tid, &sp->depth,
					&sp->t[0], &sp->t[1], &sp->t[2], &sp->t[3], &used),
				 6);
		line[strcspn(line, "\n")] = '\0';
		tab = strchr(line + used, '\t');
		assert_non_null(tab);
		*tab = '\0';
		sp->name = strdup(line + used);
		sp->meta = strdup(tab + 1);
		n++;
	}
	fclose(f);
	*out = s;
	return n;
}

static void test_workload_recorded_exactly(void **state)
{
	enum { THREADS = 4, ROUNDS = 200 };
	char *out = fmt("%s/workload", tmpdir), *expect = fmt("%s/expected.txt", tmpdir);
	char rounds[16], threads[16];
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/tests/targets/workload", build), expect, threads, rounds, NULL };
	struct itest_span *got, *want;
	size_t ngot, nwant;
	json_object *sum;
	struct run r;
	uint64_t worst_ns = 0;

	(void)state;
	snprintf(threads, sizeof(threads), "%d", THREADS);
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	/* Another process of the same binary, busy with spans the whole time. */
	int ready[2];
	char line[16] = { 0 };
	pid_t bystander;

	assert_int_equal(pipe(ready), 0);
	bystander = fork();
	assert_true(bystander >= 0);
	if (bystander == 0) {
		dup2(ready[1], 1);
		execl(argv[5], argv[5], "--forever", (char *)NULL);
		_exit(99);
	}
	close(ready[1]);
	assert_true(read(ready[0], line, sizeof(line) - 1) > 0);
	assert_string_equal(line, "ready\n");
	assert_int_equal(run(&r, argv), 0);
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
	close(ready[0]);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "bystander"));
	nwant = read_expected(expect, &want);
	ngot = read_trace_spans(fmt("%s/leanprofiler-trace.json", out), &got);
	spans_by_tid(want, nwant);
	assert_int_equal(ngot, nwant);
	for (size_t i = 0; i < nwant; i++) {
		struct itest_span *g = &got[i], *w = &want[i];

		if (g->tid != w->tid || g->depth != w->depth || strcmp(g->name, w->name) ||
		    strcmp(g->meta, w->meta))
			fail_msg("span %zu: recorded tid %d depth %d %s [%s], the target did tid %d "
				 "depth %d %s [%s]",
				 i, g->tid, g->depth, g->name, g->meta, w->tid, w->depth, w->name,
				 w->meta);
		/* Kernel timestamps fall between the target's clock readings around each marker. */
		if (g->start < w->t[0] || g->start > w->t[1] || g->end < w->t[2] || g->end > w->t[3])
			fail_msg("span %zu %s: recorded [%lu, %lu], target saw enter in [%lu, %lu] and "
				 "exit in [%lu, %lu]",
				 i, w->name, g->start, g->end, w->t[0], w->t[1], w->t[2], w->t[3]);
		if ((w->t[1] - w->t[0]) + (w->t[3] - w->t[2]) > worst_ns)
			worst_ns = (w->t[1] - w->t[0]) + (w->t[3] - w->t[2]);
	}
	print_message("workload: %zu spans match; widest enter+exit marker window %lu ns\n", nwant,
		      worst_ns);

	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(json_object_get_int64(get(sum, "events")), (int64_t)nwant);
	assert_int_equal(json_object_get_int64(get(sum, "threads")), THREADS + 1);
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	assert_int_equal(json_object_get_int64(get(sum, "unterminated_spans")), 0);
	/* Every group's call count is what the target did; no group is invented. */
	{
		size_t groups = 0;

		for (size_t i = 0; i < nwant; i++) {
			int64_t calls = 0;
			bool first = true;

			for (size_t j = 0; j < nwant; j++) {
				if (!strcmp(want[j].name, want[i].name) &&
				    !strcmp(want[j].meta, want[i].meta)) {
					calls++;
					first &= j >= i;
				}
			}
			if (!first)
				continue;
			groups++;
			assert_int_equal(json_object_get_int64(get(
						 find_row(sum, want[i].name, want[i].meta), "calls")),
					 calls);
		}
		assert_int_equal(json_object_array_length(get(sum, "rows")), groups);
	}
	/* The table's Calls column (after Name 40, Self 10, Total 11) for the leaf. */
	{
		const char *row = strstr(r.out, "\nleaf [kind=literal]  ");
		char calls[8] = { 0 };

		assert_non_null(row);
		memcpy(calls, row + 1 + 40 + 10 + 11, 7);
		assert_int_equal(atoi(calls), THREADS * ROUNDS);
	}
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	free(got);
	free(want);
	run_free(&r);
}

static void test_exit_status_passed_on(void **state)
{
	char *out = fmt("%s/status", tmpdir);
	char code[8];
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/tests/targets/exit_status", build), code, NULL };
	static const struct {
		const char *arg;
		int want;
	} cases[] = { { "0", 0 }, { "3", 3 }, { "-9", 128 + 9 }, { "-6", 128 + 6 } };
	json_object *sum, *row;
	struct run r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(code, sizeof(code), "%s", cases[i].arg);
		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, cases[i].want);
		/* The span still open at exit is closed, marked, and counted. */
		sum = load_json(fmt("%s/leanprofiler-summary.json", out));
		assert_int_equal(json_object_get_int64(get(sum, "exit_status")), cases[i].want);
		assert_int_equal(json_object_get_int64(get(sum, "unterminated_spans")), 1);
		row = find_row(sum, "never.closed", "state=open");
		assert_int_equal(json_object_get_int64(get(row, "unterminated")), 1);
		assert_int_equal(json_object_get_int64(get(find_row(sum, "before.exit", ""), "calls")),
				 1);
		json_object_put(sum);
		assert_non_null(strstr(slurp(fmt("%s/leanprofiler-trace.json", out), NULL),
				       "\"unterminated\":true"));
		run_free(&r);
	}
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
}

/* leanprofiler's own failures: a distinct exit code and one clear line on stderr. */
static void test_failures(void **state)
{
	char *lp = fmt("%s/leanprofiler", build), *out = fmt("%s/fail", tmpdir);
	char *created = fmt("%s/created-by-touch", tmpdir);
	char *notexec = fmt("%s/not-executable", tmpdir);
	char *nobody_out = fmt("%s/nobody", tmpdir);
	static const struct {
		int want;
		const char *says;
	} expect[] = {
		{ 127, "cannot run /nonexistent/command: No such file or directory" },
		{ 126, "Permission denied" },
		{ 125, "no leanprofiler markers in /bin/true" },
		{ 125, "invalid --buffer-size '3M'" },
		/* 2^64 + 1 GiB: never wrapped to 1 GiB and taken. */
		{ 125, "invalid --buffer-size '17179869185G': a power of two from 64K to 1G" },
		{ 125, "no COMMAND to record" },
		{ 125, "cannot write to output directory /proc/no/such/dir" },
		{ 125, "not allowed to load BPF programs: run as root (sudo) or with CAP_BPF and "
		       "CAP_PERFMON\n" },
		{ 125, "cannot attach to PID 999999999: no such process\n" },
		{ 125, "invalid --duration '0'" },
		{ 125, "invalid PID 'x'" },
		{ 125, "invalid --max-groups '0': a number from 1 to 10000000" },
		{ 125, "invalid --max-groups '1e3'" },
		{ 125, "invalid --rows '-1': a number from 1, or all" },
		{ 125, "leanprofiler record: -p given twice: one process per recording" },
		{ 125, "leanprofiler record: --all-processes given twice: one binary per recording" },
		{ 125, "leanprofiler record: -p and --all-processes exclude each other" },
		{ 125, "invalid --trace-last '5x': seconds (2.5) or a number and its unit" },
		{ 125, "invalid --trace-last '-1s'" },
		{ 125, "invalid --trace-max-size '1K': a size from 4K to 1024G" },
		{ 125, "invalid --trace-max-size '2048G'" },
		{ 125, "--trace-last bounds the trace, which --summary-only does not write" },
		{ 125, "--trace-max-size bounds the trace, which --summary-only does not write" },
	};
	char *cases[][10] = {
		{ lp, "record", "-o", out, "--", "/nonexistent/command", NULL },
		{ lp, "record", "-o", out, "--", notexec, NULL },
		{ lp, "record", "-o", out, "--", "/bin/true", NULL },
		{ lp, "record", "--buffer-size", "3M", "--", "/bin/true", NULL },
		{ lp, "record", "-o", out, "--buffer-size", "17179869185G", "--", "/nonexistent/command",
		  NULL },
		{ lp, "record", "-o", out, NULL },
		{ lp, "record", "-o", "/proc/no/such/dir", "--", "/usr/bin/touch", created, NULL },
		/* Not root: nobody, with no capabilities, in a directory it may write. */
		{ "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", lp,
		  "record", "-o", nobody_out, fmt("%s/examples/nested", build) },
		{ lp, "record", "-p", "999999999", NULL },
		{ lp, "record", "-p", "1", "--duration", "0", NULL },
		{ lp, "record", "-p", "x", NULL },
		{ lp, "record", "--max-groups", "0", "--", "/bin/true", NULL },
		{ lp, "record", "--max-groups", "1e3", "--", "/bin/true", NULL },
		{ lp, "record", "--rows", "-1", "--", "/bin/true", NULL },
		{ lp, "record", "-p", "1", "-p", "2", NULL },
		{ lp, "record", "--all-processes", "/bin/a", "--all-processes", "/bin/b", NULL },
		{ lp, "record", "-p", "1", "--all-processes", "/bin/a", NULL },
		{ lp, "record", "--trace-last", "5x", "--", "/bin/true", NULL },
		{ lp, "record", "--trace-last", "-1s", "--", "/bin/true", NULL },
		{ lp, "record", "--trace-max-size", "1K", "--", "/bin/true", NULL },
		{ lp, "record", "--trace-max-size", "2048G", "--", "/bin/true", NULL },
		{ lp, "record", "--summary-only", "--trace-last", "5s", "--", "/bin/true", NULL },
		{ lp, "record", "--trace-max-size", "1M", "--summary-only", "--", "/bin/true", NULL },
	};
	struct run r;

	(void)state;
	write_file(notexec, "");
	chmod(notexec, 0644);
	/* nobody must reach the BPF step: the output directory is its own. */
	assert_int_equal(mkdir(nobody_out, 0755), 0);
	assert_int_equal(chown(nobody_out, 65534, 65534), 0);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		assert_int_equal(run(&r, cases[i]), 0);
		if (r.status != expect[i].want || !strstr(r.err, expect[i].says))
			fail_msg("case %zu: exit %d, stderr: %s", i, r.status, r.err);
		assert_string_equal(r.out, "");
		run_free(&r);
	}
	/* The output directory is checked before the command runs. */
	assert_int_equal(access(created, F_OK), -1);

	/* A running process without markers: said, and left alone. */
	{
		pid_t plain = fork();
		char *argv_p[] = { lp, "record", "-o", out, "-p", NULL, NULL };
		char pid[16];
		int st;

		assert_true(plain >= 0);
		if (plain == 0) {
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			_exit(99);
		}
		snprintf(pid, sizeof(pid), "%d", (int)plain);
		argv_p[5] = pid;
		assert_int_equal(run(&r, argv_p), 0);
		if (r.status != 125 ||
		    !strstr(r.err, fmt("no leanprofiler markers in PID %d (sleep)", (int)plain)))
			fail_msg("-p of a process without markers: exit %d, stderr: %s", r.status,
				 r.err);
		assert_int_equal(waitpid(plain, &st, WNOHANG), 0); /* still running */
		kill(plain, SIGKILL);
		waitpid(plain, &st, 0);
		run_free(&r);
	}
}

/*
 * Too few open files for the probes, a limit rising 2 at a time: each step
 * that takes a descriptor (loading the programs, attaching them, mapping the
 * ring buffer, reading a file's probes, attaching a marker) fails in turn.
 * Every failure exits 125 with a line that says what failed, never silently
 * and never by a crash; up to the first limit at which the command is
 * recorded (each recording takes a second: detaching waits for the kernel).
 */
static void test_few_open_files(void **state)
{
	char *out = fmt("%s/nofile", tmpdir);
	char *argv[] = { "/usr/bin/prlimit", NULL, fmt("%s/leanprofiler", build), "record", "-o",
			 out, "--", fmt("%s/examples/nested", build), NULL };
	int failed = 0, n;
	struct run r;

	(void)state;
	if (access(argv[0], X_OK)) {
		print_message("SKIPPED: no /usr/bin/prlimit\n");
		skip();
	}
	for (n = 10; n <= 128; n += 2) {
		bool recorded;

		argv[1] = fmt("--nofile=%d:%d", n, n);
		assert_int_equal(run(&r, argv), 0);
		recorded = r.status == 0 && strstr(r.out, "Lean profile: 7 events");
		if (r.status == 125 && says_error(r.err))
			failed++;
		else if (!recorded)
			fail_msg("at most %d open files: exit %d, stdout:\n%s\nstderr:\n%s", n,
				 r.status, r.out, r.err);
		run_free(&r);
		if (recorded)
			break;
	}
	if (failed == 0 || n > 128)
		fail_msg("%d failures below %d open files, then %s", failed, n,
			 n > 128 ? "no recording" : "a recording");
}

/*
 * A flood through a 64 KiB ring buffer: what was recorded plus what was
 * reported lost is what the target emitted, exactly, and the damage is flagged.
 */
static void test_losses_counted_exactly(void **state)
{
	enum { THREADS = 4, SPANS = 10000, EMITTED = THREADS * SPANS * 2 };
	char *out = fmt("%s/flood", tmpdir), threads[8], spans[16];
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "--buffer-size", "64K", "-o",
			 out, "--", fmt("%s/tests/targets/flood", build), threads, spans, NULL };
	json_object *sum, *got, *lost, *list;
	int64_t lost_total, by_thread = 0;
	struct run r;

	(void)state;
	snprintf(threads, sizeof(threads), "%d", THREADS);
	snprintf(spans, sizeof(spans), "%d", SPANS);
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	got = get(sum, "events_received");
	lost = get(sum, "lost_events");
	lost_total = json_object_get_int64(get(lost, "total"));
	/* Four busy threads on a small buffer: some loss is certain on two CPUs. */
	assert_true(lost_total > 0);
	assert_int_equal(json_object_get_int64(get(got, "enter")) +
				 json_object_get_int64(get(lost, "enter")),
			 EMITTED);
	assert_int_equal(json_object_get_int64(get(got, "exit")) +
				 json_object_get_int64(get(lost, "exit")),
			 EMITTED);
	list = get(sum, "thread_list");
	for (size_t i = 0; i < json_object_array_length(list); i++)
		by_thread += json_object_get_int64(get(json_object_array_get_idx(list, i),
						       "lost_events"));
	assert_int_equal(by_thread, lost_total);
	/* Said in the table, on stderr with the fix, and on the spans it touched. */
	assert_non_null(strstr(r.out, fmt("Lost: %lld events (", (long long)lost_total)));
	assert_non_null(strstr(r.out, "(uncertain)\n"));
	assert_non_null(strstr(r.err, "--buffer-size"));
	assert_true(json_object_get_int64(get(sum, "uncertain_spans")) > 0);
	json_object_put(sum);
	/* The trace still nests strictly. */
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	run_free(&r);
}

/*
 * --summary-only: no trace file; a row past LP_SUMMARY_ONLY_DURATIONS calls
 * takes its P95 from the histogram and says so; a small row stays exact; the
 * profiler's own usage is reported.
 */
static void test_summary_only(void **state)
{
	enum { SPANS = 70000 }; /* past the 65536 durations a row keeps */
	char *out = fmt("%s/summary-only", tmpdir), spans[16];
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "--summary-only", "-o", out,
			 "--", fmt("%s/tests/targets/flood", build), "1", spans, NULL };
	json_object *sum, *rows, *prof;
	struct stat st;
	struct run r;

	(void)state;
	snprintf(spans, sizeof(spans), "%d", SPANS);
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(stat(fmt("%s/leanprofiler-trace.json", out), &st), -1);
	assert_non_null(strstr(r.out, "Trace: not written (--summary-only)\n"));
	assert_non_null(strstr(r.out, "P95 marked ~ comes from a histogram"));
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_null(json_object_object_get(get(sum, "files"), "trace"));
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	rows = get(sum, "rows");
	assert_int_equal(json_object_array_length(rows), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		int64_t p95 = json_object_get_int64(get(row, "p95_ns"));

		assert_int_equal(json_object_get_int64(get(row, "calls")), SPANS);
		assert_false(json_object_get_boolean(get(row, "p95_exact")));
		assert_true(p95 >= json_object_get_int64(get(row, "min_ns")));
		assert_true(p95 <= json_object_get_int64(get(row, "max_ns")));
		assert_true(p95 > 0);
	}
	/* Every row of the table shows its P95 as approximate. */
	for (const char *p = strstr(r.out, "flood."); p; p = strstr(p + 1, "\nflood."))
		assert_non_null(memchr(p, '~', (size_t)(strchr(p + 1, '\n') - p)));
	prof = get(sum, "profiler");
	assert_true(json_object_get_boolean(get(prof, "available")));
	assert_true(json_object_get_int64(get(prof, "peak_rss_kib")) > 1000);
	assert_true(json_object_get_int64(get(prof, "user_cpu_ns")) +
			    json_object_get_int64(get(prof, "system_cpu_ns")) >
		    0);
	json_object_put(sum);
	run_free(&r);

	/* Few calls: the same option keeps P95 exact. */
	snprintf(spans, sizeof(spans), "%d", 50);
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "P95 marked ~"));
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	rows = get(sum, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++)
		assert_true(json_object_get_boolean(
			get(json_object_array_get_idx(rows, i), "p95_exact")));
	json_object_put(sum);
	run_free(&r);
}

/* The row of (name, meta; NULL: any) that is not an overflow row; NULL when none. */
static json_object *own_row(json_object *summary, const char *name, const char *meta)
{
	json_object *rows = get(summary, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (json_object_is_type(get(row, "folded"), json_type_null) &&
		    !strcmp(json_object_get_string(get(row, "name")), name) &&
		    (!meta || !strcmp(json_object_get_string(get(row, "meta_text")), meta)))
			return row;
	}
	return NULL;
}

/* The overflow rows of a summary: of kind ("metadata" or "names"); their number. */
static size_t overflow_rows(json_object *summary, const char *kind, json_object **last)
{
	json_object *rows = get(summary, "rows");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *f = get(row, "folded");

		if (!json_object_is_type(f, json_type_null) &&
		    !strcmp(json_object_get_string(get(f, "kind")), kind)) {
			*last = row;
			n++;
		}
	}
	return n;
}

static int64_t i64(json_object *o, const char *key)
{
	return json_object_get_int64(get(o, key));
}

/*
 * --max-groups: N spans each with metadata of its own (a query log) keep 100
 * rows and fold the rest into the name's overflow row; N names of their own
 * fold into the row of other names. The table is short and says why; nothing
 * is lost.
 */
static void test_max_groups(void **state)
{
	enum { N = 3000, MAX = 100 };
	char *out = fmt("%s/groups", tmpdir), n[16], *lp = fmt("%s/leanprofiler", build);
	char *target = fmt("%s/tests/targets/distinct", build);
	char *argv[] = { lp, "record", "--summary-only", "--max-groups", "100", "-o", out, "--",
			 target, n, "meta", NULL };
	json_object *sum, *groups, *row = NULL;
	struct run r;

	(void)state;
	snprintf(n, sizeof(n), "%d", N);
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(i64(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(i64(sum, "events"), N);
	assert_true(json_object_array_length(get(sum, "rows")) <= 2 * MAX);
	assert_int_equal(json_object_array_length(get(sum, "rows")), MAX + 1);
	groups = get(sum, "groups");
	assert_int_equal(i64(groups, "max"), MAX);
	assert_int_equal(i64(groups, "kept"), MAX);
	assert_int_equal(i64(groups, "overflow_rows"), 1);
	assert_int_equal(i64(groups, "folded_spans"), N - MAX);
	/* Within 3 standard errors (1.6% each: stats.h). */
	assert_true(llabs(i64(groups, "folded_distinct_estimate") - (N - MAX)) <= (N - MAX) / 20);
	assert_int_equal(overflow_rows(sum, "metadata", &row), 1);
	assert_string_equal(json_object_get_string(get(row, "name")), "distinct.query");
	assert_int_equal(i64(row, "calls"), N - MAX);
	assert_int_equal(overflow_rows(sum, "names", &row), 0);
	/* The first 100 texts have their rows (the first spans fill the cap). */
	assert_non_null(own_row(sum, "distinct.query", "i=0"));
	assert_non_null(own_row(sum, "distinct.query", "i=99"));
	assert_null(own_row(sum, "distinct.query", "i=100"));
	json_object_put(sum);
	/* The table: 40 rows, then how many more there are and what was folded. */
	assert_non_null(strstr(r.out, "\nNot shown: 61 more rows; --rows N shows N rows, --rows all "
				      "every one (the summary JSON has them all)\n"));
	assert_non_null(strstr(r.out, fmt("\nFolded: %d spans of ~", N - MAX)));
	assert_non_null(strstr(r.out, "past --max-groups 100 are in 1 row marked folded"));
	assert_non_null(strstr(r.out, "distinct.query [(other metadata)] "));
	{
		size_t rows = 0;

		for (const char *p = r.out; (p = strstr(p, "\ndistinct.query ")); p++)
			rows++;
		assert_int_equal(rows, 40);
	}
	run_free(&r);

	/* Names of their own: the first 100, then the row of other names. */
	argv[10] = "names";
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(i64(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(json_object_array_length(get(sum, "rows")), MAX + 1);
	assert_int_equal(i64(get(sum, "groups"), "folded_spans"), N - MAX);
	assert_int_equal(overflow_rows(sum, "names", &row), 1);
	assert_string_equal(json_object_get_string(get(row, "name")), "(other names)");
	assert_int_equal(i64(row, "calls"), N - MAX);
	assert_int_equal(overflow_rows(sum, "metadata", &row), 0);
	assert_non_null(own_row(sum, "distinct.99", NULL));
	assert_null(own_row(sum, "distinct.100", NULL));
	json_object_put(sum);
	assert_non_null(strstr(r.out, "\n(other names)  "));
	run_free(&r);
}

/*
 * Issue 11, finding 5: a target naming 1M spans differently, each with 500
 * bytes of metadata of its own, under --summary-only. At 193dd28 (no cap, the
 * summary built as one json-c tree) the profiler peaked at 8.7 GB of RSS and
 * wrote a 1.46 GB summary. Now 10000 rows are kept, the summary is
 * streamed and texts no row or open span holds are collected: 69 MB of RSS
 * and a 13 MB summary (both flat in the number of names past the cap).
 */
#define MANY_NAMES "1000000"
#define MANY_NAMES_RSS_MAX_KIB (256 * 1024) /* 256 MiB: 69 MB measured, 8.7 GB before */
#define MANY_NAMES_SUMMARY_MAX (32 << 20)

static void test_many_names_memory(void **state)
{
	char *out = fmt("%s/many-names", tmpdir), *sum_path = fmt("%s/leanprofiler-summary.json", out);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "--summary-only", "-o", out, "--",
			 fmt("%s/tests/targets/distinct", build), MANY_NAMES, "names", "500", NULL };
	char *stdout_path = fmt("%s/many.out", tmpdir), *text;
	json_object *sum, *groups;
	struct rusage ru;
	struct stat sb;
	int status;
	pid_t pid;

	(void)state;
	pid = spawn_to(argv, stdout_path, fmt("%s/many.err", tmpdir));
	/* The profiler's own peak (and its reaped target's, a few MB). */
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(stat(sum_path, &sb), 0);
	print_message("1M names x 500-byte metadata: peak RSS %ld KiB, summary %lld bytes\n",
		      ru.ru_maxrss, (long long)sb.st_size);
	assert_true(ru.ru_maxrss < MANY_NAMES_RSS_MAX_KIB);
	assert_true(sb.st_size < MANY_NAMES_SUMMARY_MAX);
	sum = load_json(sum_path);
	groups = get(sum, "groups");
	/* Every span the kernel delivered or counted lost, and every one in a row. */
	assert_int_equal(i64(get(sum, "events_received"), "enter") +
				 i64(get(sum, "lost_events"), "enter"),
			 atoi(MANY_NAMES));
	assert_int_equal(i64(groups, "kept"), LP_GROUPS_MAX);
	assert_int_equal(i64(groups, "overflow_rows"), 1);
	assert_int_equal(i64(groups, "kept") + i64(groups, "folded_spans"), i64(sum, "events"));
	/* The load was what it means to be, whatever the ring buffer lost. */
	assert_true(i64(groups, "folded_spans") > 100000);
	assert_int_equal(json_object_array_length(get(sum, "rows")), LP_GROUPS_MAX + 1);
	json_object_put(sum);
	text = slurp(stdout_path, NULL);
	assert_non_null(strstr(text, "\nNot shown: 9961 more rows; "));
	assert_non_null(strstr(text, "\nFolded: "));
	free(text);
	/* Within what report reads (LP_SUMMARY_FILE_MAX, LP_SUMMARY_VALUES_MAX), and cheaply. */
	{
		char *rep_argv[] = { fmt("%s/leanprofiler", build), "report", out, NULL };
		struct run r;

		assert_int_equal(run_usage(&r, rep_argv, &ru), 0);
		print_message("report of it: exit %d, peak RSS %ld KiB\n", r.status, ru.ru_maxrss);
		if (r.status != 0)
			fail_msg("report exited %d: %s", r.status, r.err);
		assert_true(ru.ru_maxrss < MANY_NAMES_RSS_MAX_KIB);
		run_free(&r);
	}
}

/*
 * Under sudo the command runs as the invoking user and the outputs are that
 * user's; --run-as-root keeps it root; while recording, the profiler holds
 * only the capabilities it still uses.
 */
static void test_privileges(void **state)
{
	/* DAC_OVERRIDE, DAC_READ_SEARCH, KILL, SYS_PTRACE, SYS_ADMIN, PERFMON, BPF */
	const unsigned long long kept = (1ULL << 1) | (1ULL << 2) | (1ULL << 5) | (1ULL << 19) |
					(1ULL << 21) | (1ULL << 38) | (1ULL << 39);
	char *out = fmt("%s/privileges", tmpdir), *victim = fmt("%s/victim", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/tests/targets/creds", build), NULL };
	char *argv_root[] = { fmt("%s/leanprofiler", build), "record", "--run-as-root", "-o",
			      out, "--", fmt("%s/tests/targets/creds", build), NULL };
	char want[128], *text;
	struct stat st;
	struct run r;

	(void)state;
	/* The user's own directory, with a symlink planted where the trace goes: not followed. */
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(chown(out, 65534, 65534), 0);
	write_file(victim, "precious\n");
	assert_int_equal(symlink(victim, fmt("%s/leanprofiler-trace.json", out)), 0);

	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	setenv("SUDO_USER", "nobody", 1);
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "uid=65534 gid=65534 groups=%s parent_capeff=%016llx\n",
		 "1", kept);
	if (!strstr(r.out, "uid=65534 gid=65534 groups=") ||
	    !strstr(r.out, fmt("parent_capeff=%016llx\n", kept)))
		fail_msg("want %sgot %s", want, r.out);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "leanprofiler-trace.json" : "leanprofiler-summary.json";

		assert_int_equal(lstat(fmt("%s/%s", out, name), &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_uid, 65534);
		assert_int_equal(st.st_gid, 65534);
	}
	text = slurp(victim, NULL);
	assert_string_equal(text, "precious\n");
	free(text);
	run_free(&r);

	assert_int_equal(run(&r, argv_root), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "uid=0 gid=0 "));
	run_free(&r);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unsetenv("SUDO_USER");
}

/* A full disk: one clear line per file, the table still printed, no partial file left. */
static void test_disk_full(void **state)
{
	char *out = fmt("%s/full", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/tests/targets/workload", build), fmt("%s/full.txt", tmpdir), "2",
			 "300", NULL };
	struct dirent *de;
	struct run r;
	DIR *d;

	(void)state;
	assert_int_equal(mkdir(out, 0755), 0);
	/*
	 * 64 KiB: the trace (~300 KiB for this workload) cannot fit. (A tmpfs is
	 * 1777 by default: an output directory everybody may write is refused.)
	 */
	if (mount("tmpfs", out, "tmpfs", 0, "size=64k,mode=0755")) {
		print_message("SKIPPED: cannot mount a small tmpfs: %s\n", strerror(errno));
		skip();
	}
	assert_int_equal(run(&r, argv), 0);
	d = opendir(out);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			fail_msg("left in the full directory: %s", de->d_name);
	closedir(d);
	assert_int_equal(umount2(out, MNT_DETACH), 0);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.out, "Lean profile: "));
	assert_non_null(strstr(r.err, "leanprofiler-trace.json: No space left on device\n"));
	run_free(&r);
}

/*
 * A command that shrugs off SIGTERM: the first SIGTERM to leanprofiler is
 * passed on to it, a second one ends the recording; the files are written,
 * the exit status says the signal, and the command runs on.
 */
static void test_second_signal_stops_recording(void **state)
{
	char *out = fmt("%s/stubborn", tmpdir), line[128];
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/tests/targets/stubborn", build), NULL };
	struct io in = { .mode = IO_INHERIT }, lp_out = { .mode = IO_PIPE },
		  lp_err = { .mode = IO_FILE, .file = fmt("%s/stubborn.err", tmpdir) };
	struct lines *lines;
	int status, target = 0;
	json_object *sum;
	pid_t lp;

	(void)state;
	lp = start_io(argv, &in, &lp_out, &lp_err, false);
	lines = lines_new(lp_out.fd);
	assert_int_equal(lines_read(lines, line, sizeof(line), 20000), 1);
	assert_int_equal(sscanf(line, "ready pid=%d", &target), 1);
	kill(lp, SIGTERM);
	assert_int_equal(lines_read(lines, line, sizeof(line), 20000), 1);
	assert_string_equal(line, "term"); /* passed on, and shrugged off */
	kill(lp, SIGTERM);
	assert_int_equal(waitpid(lp, &status, 0), lp);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	/* The command was left running, not killed by us, and we said so. */
	assert_int_equal(kill(target, 0), 0);
	kill(target, SIGKILL);
	assert_non_null(strstr(slurp(lp_err.file, NULL), "keeps running"));
	close(lp_out.fd);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_string_equal(json_object_get_string(get(get(sum, "recording"), "end_reason")),
			    "signal");
	assert_true(json_object_get_int64(get(find_row(sum, "stubborn.tick", ""), "calls")) >= 1);
	/*
	 * The command has no exit status yet (leanprofiler's own is 128+N), and
	 * its figures so far come from /proc: none of them a made-up 0.
	 */
	assert_int_equal(json_object_get_int(get(sum, "exit_status")), -1);
	assert_true(json_object_get_boolean(
		get(json_object_array_get_idx(get(sum, "processes"), 0), "alive_at_end")));
	{
		json_object *res = get(sum, "resources");

		assert_true(json_object_get_boolean(get(res, "available")));
		assert_non_null(strstr(json_object_get_string(get(res, "scope")), "still running"));
		assert_true(json_object_get_int64(get(res, "peak_rss_kib")) > 100);
	}
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
}

/* record in dir (as its working directory), with the arguments after "record" in args. */
static void record_in(struct run *r, const char *dir, char *const args[])
{
	char *argv[16] = { "/usr/bin/env", "-C", (char *)dir,
			   realpath(fmt("%s/leanprofiler", build), NULL), "record" };
	size_t n = 5;

	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	assert_true(n < 16);
	assert_int_equal(run(r, argv), 0);
}

/*
 * As perf and uftrace: the outputs go into the working directory, and the
 * previous recording's pair stays as *.old (-o DIR likewise) rather than lost.
 */
static void test_default_output_keeps_old(void **state)
{
	char *dir = fmt("%s/cwd", tmpdir), *nested = realpath(fmt("%s/examples/nested", build), NULL);
	char *trace = fmt("%s/leanprofiler-trace.json", dir);
	char *summary = fmt("%s/leanprofiler-summary.json", dir);
	char *first_trace, *first_summary, *second_summary;
	char *plain[] = { "--", nested, NULL };
	char *only[] = { "--summary-only", "--", nested, NULL };
	char *into[] = { "-o", "sub", "--", nested, NULL };
	struct run r;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	record_in(&r, dir, plain);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\nTrace: ./leanprofiler-trace.json\n"
				      "Summary: ./leanprofiler-summary.json\n"));
	run_free(&r);
	assert_string_equal(dir_entries(dir), "leanprofiler-summary.json\nleanprofiler-trace.json\n");
	first_trace = slurp(trace, NULL);
	first_summary = slurp(summary, NULL);

	/* The second run: the first one's pair is kept whole, byte for byte. */
	record_in(&r, dir, plain);
	assert_int_equal(r.status, 0);
	run_free(&r);
	assert_string_equal(dir_entries(dir), "leanprofiler-summary.json\nleanprofiler-summary.json.old\n"
					  "leanprofiler-trace.json\nleanprofiler-trace.json.old\n");
	assert_string_equal(slurp(fmt("%s.old", trace), NULL), first_trace);
	assert_string_equal(slurp(fmt("%s.old", summary), NULL), first_summary);
	assert_string_not_equal(slurp(summary, NULL), first_summary);
	second_summary = slurp(summary, NULL);

	/* No new trace: the previous one goes to .old with its summary, none stays stale. */
	record_in(&r, dir, only);
	assert_int_equal(r.status, 0);
	run_free(&r);
	assert_string_equal(dir_entries(dir), "leanprofiler-summary.json\nleanprofiler-summary.json.old\n"
					  "leanprofiler-trace.json.old\n");
	assert_string_equal(slurp(fmt("%s.old", summary), NULL), second_summary);
	/* The next: the .old pair is that summary-only recording's, without a trace. */
	second_summary = slurp(summary, NULL);
	record_in(&r, dir, plain);
	assert_int_equal(r.status, 0);
	run_free(&r);
	assert_string_equal(dir_entries(dir), "leanprofiler-summary.json\nleanprofiler-summary.json.old\n"
					  "leanprofiler-trace.json\n");
	assert_string_equal(slurp(fmt("%s.old", summary), NULL), second_summary);

	/* -o DIR keeps the previous pair the same way. */
	assert_int_equal(mkdir(fmt("%s/sub", dir), 0755), 0);
	record_in(&r, dir, into);
	assert_int_equal(r.status, 0);
	run_free(&r);
	first_trace = slurp(fmt("%s/sub/leanprofiler-trace.json", dir), NULL);
	record_in(&r, dir, into);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\nTrace: sub/leanprofiler-trace.json\n"));
	run_free(&r);
	assert_string_equal(slurp(fmt("%s/sub/leanprofiler-trace.json.old", dir), NULL),
			    first_trace);

	/* A link in place of the previous file is moved as a link: its target is untouched. */
	write_file(fmt("%s/target", tmpdir), "not ours\n");
	assert_int_equal(unlink(fmt("%s/sub/leanprofiler-trace.json", dir)), 0);
	assert_int_equal(symlink(fmt("%s/target", tmpdir), fmt("%s/sub/leanprofiler-trace.json", dir)), 0);
	record_in(&r, dir, into);
	assert_int_equal(r.status, 0);
	run_free(&r);
	{
		struct stat st;

		assert_int_equal(lstat(fmt("%s/sub/leanprofiler-trace.json.old", dir), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_int_equal(lstat(fmt("%s/sub/leanprofiler-trace.json", dir), &st), 0);
		assert_true(S_ISREG(st.st_mode));
	}
	assert_string_equal(slurp(fmt("%s/target", tmpdir), NULL), "not ours\n");
}

/*
 * A recording that fails before it starts leaves nothing behind: no file, and
 * none of the directories it made for them; a directory's missing parents are made.
 */
static void test_failed_run_leaves_nothing(void **state)
{
	char *dir = fmt("%s/empty", tmpdir), *nested = realpath(fmt("%s/examples/nested", build), NULL);
	char *gone[] = { "-p", "999999999", NULL };
	char *gone_deep[] = { "-o", "a/b/c", "-p", "999999999", NULL };
	char *deep[] = { "-o", "a/b/c", "--", nested, NULL };
	struct run r;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	record_in(&r, dir, gone);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "cannot attach to PID 999999999: no such process"));
	run_free(&r);
	assert_string_equal(dir_entries(dir), "");
	record_in(&r, dir, gone_deep);
	assert_int_equal(r.status, 125);
	run_free(&r);
	assert_string_equal(dir_entries(dir), "");
	/* An existing directory stays, with what is in it. */
	assert_int_equal(mkdir(fmt("%s/a", dir), 0755), 0);
	record_in(&r, dir, gone_deep);
	assert_int_equal(r.status, 125);
	run_free(&r);
	assert_string_equal(dir_entries(dir), "a\n");
	assert_string_equal(dir_entries(fmt("%s/a", dir)), "");

	record_in(&r, dir, deep);
	assert_int_equal(r.status, 0);
	run_free(&r);
	assert_string_equal(dir_entries(fmt("%s/a/b/c", dir)),
			    "leanprofiler-summary.json\nleanprofiler-trace.json\n");
}


static size_t count_of_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The entries of dir that hold text, one per line. */
static char *entries_with(const char *dir, const char *text)
{
	char *all = dir_entries(dir), *list = fmt(""), *save = NULL;

	for (char *e = strtok_r(all, "\n", &save); e; e = strtok_r(NULL, "\n", &save))
		if (strstr(e, text))
			list = fmt("%s%s\n", list, e);
	return list;
}

/* record -o dir -- stubborn, started: its PID, *target the command's (it printed "ready"). */
static pid_t start_stubborn(const char *dir, const char *name, pid_t *target, struct lines **lines)
{
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", (char *)dir, "--",
			 fmt("%s/tests/targets/stubborn", build), NULL };
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_PIPE },
		  err = { .mode = IO_FILE, .file = fmt("%s/%s.err", tmpdir, name) };
	char line[128];
	pid_t lp = spawn(argv, &in, &out, &err);

	*lines = lines_new(out.fd);
	if (lines_read(*lines, line, sizeof(line), 20000) != 1 ||
	    sscanf(line, "ready pid=%d", target) != 1)
		fail_msg("%s: no 'ready' line: %s", name, (*lines)->all);
	return lp;
}

/*
 * Issue: a recording killed with SIGKILL leaves its temporary files
 * (leanprofiler-summary.json.tmp.XXXXXX, the trace's) behind for good. The
 * next recording in that directory removes them: only ours (the name, a
 * regular file of the recorded user) and only those no writer holds: the
 * files of a recording still running in the same directory stay, and so do
 * another user's and a name that is not lp_outfile's.
 */
static void test_stale_temporaries_removed(void **state)
{
	char *dir = fmt("%s/stale", tmpdir), *nested = realpath(fmt("%s/examples/nested", build), NULL);
	char *live, *theirs = fmt("%s/leanprofiler-trace.json.tmp.Th31r5", dir);
	char *other_name = fmt("%s/leanprofiler-summary.json.tmp.toolong7", dir);
	struct lines *lines_a, *lines_b;
	pid_t a, b, target_a, target_b;
	struct run r;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	/* B: recording in this directory, its temporary files open and locked. */
	b = start_stubborn(dir, "stale-b", &target_b, &lines_b);
	started_add(target_b); /* ended by stop_started if this test fails: not our child */
	live = entries_with(dir, ".tmp.");
	assert_int_equal(count_of_lines(live), 2); /* the summary's and the trace's */
	/* A: started there too, then killed while recording; its command is ended here. */
	a = start_stubborn(dir, "stale-a", &target_a, &lines_a);
	started_add(target_a);
	assert_int_equal(kill(a, SIGKILL), 0);
	assert_int_equal(wait_exit(a), 128 + SIGKILL);
	kill(target_a, SIGKILL);
	started_forget(target_a);
	close(lines_a->fd);
	assert_int_equal(count_of_lines(entries_with(dir, ".tmp.")), 4); /* A's did not touch B's */
	/* Not ours to remove: another user's, and a name lp_outfile never makes. */
	write_file(theirs, "theirs\n");
	assert_int_equal(chown(theirs, 65534, 65534), 0);
	write_file(other_name, "not a temporary name\n");

	/* C: the next recording there. */
	record_in(&r, tmpdir, (char *[]){ "-o", dir, "--", nested, NULL });
	assert_int_equal(r.status, 0);
	if (!strstr(r.err, fmt("leanprofiler: removed 2 temporary files a recording killed before "
			       "its end left in %s\n", dir)))
		fail_msg("stderr:\n%s\ntemporary files there now:\n%s", r.err,
			 entries_with(dir, ".tmp."));
	run_free(&r);
	{
		char *left = entries_with(dir, ".tmp."), *want = fmt("%s%s", live, "leanprofiler-"
				  "summary.json.tmp.toolong7\nleanprofiler-trace.json.tmp.Th31r5\n");

		/* B's two, the other user's and the other name: the same lines, in any order. */
		if (count_of_lines(left) != count_of_lines(want))
			fail_msg("left:\n%swanted:\n%s", left, want);
		for (char *save = NULL, *e = strtok_r(want, "\n", &save); e;
		     e = strtok_r(NULL, "\n", &save))
			if (!strstr(left, fmt("%s\n", e)))
				fail_msg("%s was removed; left:\n%s", e, left);
	}
	/* B is not harmed: ended (Ctrl-C passed on to its command), it writes its pair. */
	assert_int_equal(kill(b, SIGINT), 0);
	assert_int_equal(wait_exit_within(b, 30000), 128 + SIGINT);
	started_forget(target_b); /* it died of the SIGINT passed on */
	close(lines_b->fd);
	assert_string_equal(entries_with(dir, ".tmp."),
			    "leanprofiler-summary.json.tmp.toolong7\n"
			    "leanprofiler-trace.json.tmp.Th31r5\n");
	{
		json_object *sum = summary_of(dir);

		assert_true(i64(find_row(sum, "stubborn.tick", ""), "calls") >= 1);
		json_object_put(sum);
	}
}

/* The first field of "Key:" in /proc/PID/status, or -1. */
static long proc_status(pid_t pid, const char *key)
{
	char *text = slurp(fmt("/proc/%d/status", (int)pid), NULL), *p;
	long v = -1;

	if (text && (p = strstr(text, fmt("\n%s:", key))))
		v = strtol(p + strlen(key) + 2, NULL, 10);
	free(text);
	return v;
}

/* The only child of pid (its first thread's children), or 0. */
static pid_t child_of(pid_t pid)
{
	char *text = slurp(fmt("/proc/%d/task/%d/children", (int)pid, (int)pid), NULL);
	pid_t c = text ? (pid_t)atoi(text) : 0;

	free(text);
	return c;
}

/* The state letter of /proc/PID/stat (after "(comm)"), or '?'. */
static char proc_state(pid_t pid)
{
	char *text = slurp(fmt("/proc/%d/stat", (int)pid), NULL), *p;
	char st = '?';

	if (text && (p = strrchr(text, ')')) && p[1] == ' ')
		st = p[2];
	free(text);
	return st;
}

/*
 * Issue: a Ctrl-C while the profiler loads and attaches, before the launched
 * command has run, wrote an empty recording and pushed the previous one into
 * *.old, the one before out of it. Now nothing is written: both pairs stay
 * byte for byte, exit 130, and the command never runs (it would print
 * "ready"). The signal lands at a known point: the command exec'ed and held
 * by the profiler (its tracer) before its first instruction, the profiler
 * stopped (SIGSTOP) while it still holds it, SIGINT queued, then SIGCONT.
 */
static void test_interrupt_before_start_keeps_old(void **state)
{
	char *dir = fmt("%s/interrupted", tmpdir), *nested = realpath(fmt("%s/examples/nested", build), NULL);
	char *target = realpath(fmt("%s/tests/targets/stubborn", build), NULL);
	static const char *const names[] = { "leanprofiler-summary.json",
					     "leanprofiler-summary.json.old",
					     "leanprofiler-trace.json", "leanprofiler-trace.json.old" };
	char *before[4], *listing, *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", dir,
					       "--", target, NULL };
	struct io in = { .mode = IO_NULL }, out = { .mode = IO_PIPE },
		  err = { .mode = IO_FILE, .file = fmt("%s/interrupted.err", tmpdir) };
	struct lines *lines;
	char line[256];
	pid_t lp, child = 0;
	struct run r;
	int status;

	(void)state;
	for (int i = 0; i < 2; i++) {
		record_in(&r, tmpdir, (char *[]){ "-o", dir, "--", nested, NULL });
		assert_int_equal(r.status, 0);
		run_free(&r);
	}
	listing = dir_entries(dir);
	assert_string_equal(listing, "leanprofiler-summary.json\nleanprofiler-summary.json.old\n"
				     "leanprofiler-trace.json\nleanprofiler-trace.json.old\n");
	for (int i = 0; i < 4; i++)
		before[i] = slurp(fmt("%s/%s", dir, names[i]), NULL);

	/* To the profiler alone (kill), then to the command as well (a terminal's Ctrl-C). */
	for (int to_both = 0; to_both < 2; to_both++) {
		lp = spawn(argv, &in, &out, &err);
		lines = lines_new(out.fd);
		/* The command exec'ed, held by the profiler: its tracer until it lets it run. */
		for (int i = 0; i < 20000; i++) {
			child = child_of(lp);
			if (child > 0 && proc_status(child, "TracerPid") == lp) {
				char exe[PATH_MAX];
				ssize_t n = readlink(fmt("/proc/%d/exe", (int)child), exe, sizeof(exe) - 1);

				if (n > 0 && (exe[n] = '\0', !strcmp(exe, target)))
					break;
			}
			child = 0;
			wait_ms(1);
		}
		if (!child)
			fail_msg("no traced child running %s within 20 s", target);
		assert_int_equal(kill(lp, SIGSTOP), 0);
		for (int i = 0; i < 5000 && proc_state(lp) != 'T'; i++)
			wait_ms(1);
		assert_int_equal(proc_state(lp), 'T');
		/* Still held: the profiler had not let it go before it stopped. */
		if (proc_status(child, "TracerPid") != lp)
			fail_msg("the command was let go before the profiler stopped: the window was missed");
		assert_int_equal(kill(lp, SIGINT), 0);
		if (to_both)
			assert_int_equal(kill(child, SIGINT), 0);
		assert_int_equal(kill(lp, SIGCONT), 0);
		status = wait_exit_within(lp, 30000);
		while (lines_read(lines, line, sizeof(line), 10000) == 1)
			if (!strncmp(line, "ready", 5))
				fail_msg("the command ran: %s", line);
		close(out.fd);
		{
			char *text = slurp(err.file, NULL);

			if (status != 128 + SIGINT ||
			    !strstr(text, fmt("leanprofiler: Interrupt before %s started: nothing recorded; "
					      "the recording in %s is left as it was\n", target, dir)))
				fail_msg("%s: exit %d, stderr:\n%s", to_both ? "both" : "profiler", status,
					 text);
		}
		assert_string_equal(dir_entries(dir), listing);
		for (int i = 0; i < 4; i++)
			if (strcmp(slurp(fmt("%s/%s", dir, names[i]), NULL), before[i]))
				fail_msg("%s changed", names[i]);
		/* The command was killed before it ran, and reaped: no process is left. */
		assert_int_equal(kill(child, 0), -1);
	}
}
/* The nested example's recording with LEANPROFILER_UPROBE_MULTI=multi; its summary. */
static json_object *nested_with_links(const char *multi)
{
	char *out = fmt("%s/links-%s", tmpdir, multi);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--",
			 fmt("%s/examples/nested", build), NULL };
	json_object *sum;
	struct run r;

	setenv("LEANPROFILER_UPROBE_MULTI", multi, 1);
	assert_int_equal(run(&r, argv), 0);
	unsetenv("LEANPROFILER_UPROBE_MULTI");
	assert_int_equal(r.status, 0);
	run_free(&r);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(get_i(sum, "events"), 7);
	assert_int_equal(get_i(sum, "counter_total"), 290);
	assert_int_equal(get_i(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(get_i(find_row(sum, "model.forward", "phase=forward, module=encoder"),
			       "calls"), 3);
	assert_int_equal(get_i(find_row(sum, "input.load", "phase=input, activity=load"), "calls"),
			 3);
	assert_int_equal(get_i(find_row(sum, "example.nested-spans", ""), "self_counter"), 278);
	return sum;
}

/*
 * The markers' sites as uprobe_multi links (a file's span_enter sites one
 * link, its span_exit sites another) and as one link per site (a kernel
 * without them; LEANPROFILER_UPROBE_MULTI=0): the same recording, in fewer
 * links (this machine's kernel, 6.18, has them).
 */
static void test_uprobe_multi_same_recording(void **state)
{
	json_object *multi = nested_with_links("1"), *single = nested_with_links("0");
	json_object *pm = get(multi, "profiler"), *ps = get(single, "profiler");

	(void)state;
	assert_int_equal(get_i(pm, "probe_sites"), 4);
	assert_int_equal(get_i(ps, "probe_sites"), 4);
	/* One link per site, and the loader's. */
	assert_int_equal(get_i(ps, "probe_links"), 4 + 1);
	/* Two for the four sites, and the loader's. */
	assert_int_equal(get_i(pm, "probe_links"), 2 + 1);
	json_object_put(multi);
	json_object_put(single);
}

/*
 * The nested example recorded with -v and LEANPROFILER_CORE_BTF=btf (NULL:
 * unset); stderr must have says. The recording is the same whatever BTF its
 * CO-RE relocations were made against.
 */
static void nested_core_btf(const char *btf, const char *says)
{
	char *out = fmt("%s/core-btf", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-v", "-o", out, "--",
			 fmt("%s/examples/nested", build), NULL };
	json_object *sum;
	struct run r;

	if (btf)
		setenv("LEANPROFILER_CORE_BTF", btf, 1);
	assert_int_equal(run(&r, argv), 0);
	unsetenv("LEANPROFILER_CORE_BTF");
	if (r.status != 0 || !strstr(r.err, says))
		fail_msg("LEANPROFILER_CORE_BTF=%s: exit %d, no '%s' in:\n%s", btf ? btf : "(unset)",
			 r.status, says, r.err);
	run_free(&r);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(get_i(sum, "events"), 7);
	assert_int_equal(get_i(sum, "counter_total"), 290);
	assert_int_equal(get_i(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(get_i(find_row(sum, "model.forward", "phase=forward, module=encoder"),
			       "calls"), 3);
	assert_int_equal(get_i(find_row(sum, "input.load", "phase=input, activity=load"), "calls"),
			 3);
	assert_int_equal(get_i(find_row(sum, "example.nested-spans", ""), "self_counter"), 278);
	json_object_put(sum);
}

/*
 * CO-RE relocations against the kernel types built into the binary (made at
 * make, on this machine), else against the kernel's own BTF, said under -v:
 * LEANPROFILER_CORE_BTF names a file in their place that is missing, is not
 * BTF, or is BTF without the programs' types (the load fails and starts
 * over), or is 0. The recording is right every time.
 */
static void test_core_btf_fallback(void **state)
{
	/* A valid BTF of one type, int: none of the programs' structs. */
	static const unsigned char int_only[] = {
		0x9f, 0xeb, 1, 0, 24, 0, 0, 0,	/* magic, version, flags, header length */
		0, 0, 0, 0, 16, 0, 0, 0,	/* types at 0, 16 bytes */
		16, 0, 0, 0, 5, 0, 0, 0,	/* strings at 16, 5 bytes */
		1, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0, /* INT "int", size 4 */
		32, 0, 0, 1,			/* signed, 32 bits */
		0, 'i', 'n', 't', 0,
	};
	char *garbage = fmt("%s/garbage.btf", tmpdir), *ints = fmt("%s/int-only.btf", tmpdir);
	FILE *f = fopen(ints, "w");

	(void)state;
	assert_non_null(f);
	assert_int_equal(fwrite(int_only, 1, sizeof(int_only), f), sizeof(int_only));
	assert_int_equal(fclose(f), 0);
	write_file(garbage, "not BTF at all\n");
	nested_core_btf(NULL, "CO-RE against the built-in types of this kernel");
	nested_core_btf(fmt("%s/missing.btf", tmpdir), "CO-RE against the kernel's own BTF: "
						       "cannot read");
	nested_core_btf(garbage, "CO-RE against the kernel's own BTF: ");
	nested_core_btf(garbage, " is not BTF libbpf takes");
	nested_core_btf(ints, fmt("CO-RE against %s (1 type)", ints));
	nested_core_btf(ints, fmt("CO-RE against the kernel's own BTF: the load against %s "
				  "failed", ints));
	nested_core_btf("0", "CO-RE against the kernel's own BTF: LEANPROFILER_CORE_BTF=0");
}


/* ---- --trace-last, --trace-max-size: a bounded trace, a whole summary ---- */

/* An event of a bounded trace: a span ("cat":"span") or an off-CPU slice; key: name TAB meta. */
struct tev {
	int tid;
	bool slice;
	uint64_t start, end;
	char key[300];
};

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct tev *)a)->key, ((const struct tev *)b)->key);
}

/* The "X" events of a trace in file order; meta from args' strings (the target's items). */
static size_t read_events(const char *path, struct tev **out)
{
	json_object *trace = load_json(path), *events = get(trace, "traceEvents");
	uint64_t base = (uint64_t)get_i(get(trace, "otherData"), "base_ns");
	size_t n = 0, cap = json_object_array_length(events);
	struct tev *t = calloc(cap + 1, sizeof(*t));

	assert_non_null(t);
	for (size_t i = 0; i < cap; i++) {
		json_object *e = json_object_array_get_idx(events, i);
		struct tev *v = &t[n];
		size_t m;

		if (strcmp(get_s(e, "ph"), "X"))
			continue;
		v->tid = json_object_get_int(get(e, "tid"));
		v->slice = strcmp(get_s(e, "cat"), "span") != 0;
		v->start = base + trace_us_ns(get(e, "ts"));
		v->end = v->start + trace_us_ns(get(e, "dur"));
		m = (size_t)snprintf(v->key, sizeof(v->key), "%s\t", get_s(e, "name"));
		json_object_object_foreach(get(e, "args"), k, val) {
			if (!json_object_is_type(val, json_type_string))
				continue;
			m += (size_t)snprintf(v->key + m, sizeof(v->key) - m, "%s%s=%s",
					      v->key[m - 1] == '\t' ? "" : ", ", k,
					      json_object_get_string(val));
		}
		n++;
	}
	json_object_put(trace);
	*out = t;
	return n;
}

static struct tev *find_event(struct tev *spans, size_t n, const struct itest_span *w)
{
	struct tev k;

	snprintf(k.key, sizeof(k.key), "%s\t%s", w->name, w->meta);
	return bsearch(&k, spans, n, sizeof(*spans), cmp_key);
}

static int cmp_tid_start(const void *a, const void *b)
{
	const struct itest_span *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t[0] < y->t[0] ? -1 : x->t[0] > y->t[0];
}

/*
 * Whether the span a slice lies in is among the spans kept: of the target's
 * spans (want, sorted by thread and start) that may hold it (by the clock
 * readings around their markers), one at least as deep as every span that
 * surely holds it. The spans of flight nest 3 deep: those that may hold a
 * slice are a top-level one, or among the few that start just before it.
 */
static bool slice_span_kept(const struct itest_span *want, size_t n, const struct tev *sl,
			    struct tev *kept, size_t nkept)
{
	const struct itest_span *may[16];
	size_t first = 0, lo, hi = n, nmay = 0;
	int surely = -1;
	bool found = false;

	/* The thread's first span (its top-level one), then the first that starts after the slice. */
	while (first < hi) {
		size_t mid = (first + hi) / 2;

		if (want[mid].tid < sl->tid)
			first = mid + 1;
		else
			hi = mid;
	}
	for (lo = first, hi = n; lo < hi;) {
		size_t mid = (lo + hi) / 2;

		if (want[mid].tid == sl->tid && want[mid].t[0] <= sl->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = first; i < lo && nmay < 16; i++) {
		if (want[i].depth > 0 && lo - i > 8) {
			i = lo - 9; /* past the top-level spans, to the last few */
			continue;
		}
		if (want[i].t[0] <= sl->start && sl->end <= want[i].t[3])
			may[nmay++] = &want[i];
	}
	for (size_t i = 0; i < nmay; i++)
		if (may[i]->t[1] <= sl->start && sl->end <= may[i]->t[2] && may[i]->depth > surely)
			surely = may[i]->depth;
	for (size_t i = 0; i < nmay && !found; i++)
		found = may[i]->depth >= surely && find_event(kept, nkept, may[i]);
	if (!found)
		fail_msg("slice [%lu, %lu] of tid %d is in the trace, the span it lies in is not "
			 "(%zu spans may hold it, %d deep at least)",
			 sl->start, sl->end, sl->tid, nmay, surely);
	return found;
}

/*
 * A flight recorder: 60 s of two threads' spans with --trace-last 5s and
 * --off-cpu. The trace holds exactly the spans that ended in the last 5 s
 * (the target's own clock readings around each exit say which; one whose exit
 * straddles the window's start may be either), the span around the whole run
 * among them, and each off-CPU slice with the span it lies in; the summary
 * and the table count every span and say how many the trace left out.
 */
static void test_trace_last_flight_recorder(void **state)
{
	char *out = fmt("%s/last", tmpdir), *log = fmt("%s/flight-last.txt", tmpdir);
	char *trace = fmt("%s/leanprofiler-trace.json", out);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--trace-last", "5s",
			 "--off-cpu", "--", fmt("%s/tests/targets/flight", build), log, "60", "2",
			 "1000", NULL };
	struct itest_span *want;
	struct tev *got, *spans;
	size_t nwant, ngot, nspans = 0, nslices = 0, present = 0, edge = 0;
	json_object *sum, *b, *rec;
	uint64_t from, end, left, slices_left;
	bool main_span = false;
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record exited %d: %s", r.status, r.err);
	nwant = read_expected(log, &want);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	b = get(sum, "trace_bound");
	rec = get(sum, "recording");
	/* The summary has every span; the trace the window's, the rest counted. */
	assert_int_equal(i64(sum, "events"), (int64_t)nwant);
	assert_int_equal(i64(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(i64(b, "spans") + i64(b, "spans_left_out"), (int64_t)nwant);
	assert_int_equal(i64(b, "last_ns"), 5000000000);
	end = (uint64_t)i64(rec, "end_ns");
	from = (uint64_t)i64(b, "window_start_ns");
	assert_int_equal(i64(b, "window_end_ns"), (int64_t)end);
	assert_int_equal(from, end - 5000000000ull);
	assert_false(json_object_get_boolean(get(b, "cut")));

	ngot = read_events(trace, &got);
	spans = calloc(ngot + 1, sizeof(*spans));
	assert_non_null(spans);
	for (size_t i = 0; i < ngot; i++)
		if (!got[i].slice)
			spans[nspans++] = got[i];
	qsort(spans, nspans, sizeof(*spans), cmp_key);
	assert_int_equal(nspans, i64(b, "spans"));
	for (size_t i = 0; i < nwant; i++) {
		struct itest_span *w = &want[i];
		struct tev *g = find_event(spans, nspans, w);

		if (w->t[3] < from && g)
			fail_msg("%s [%s] ended before the window (%lu < %lu) but is in the trace",
				 w->name, w->meta, w->t[3], from);
		if (w->t[2] >= from && !g)
			fail_msg("%s [%s] ended in the window (%lu >= %lu) but is not in the trace",
				 w->name, w->meta, w->t[2], from);
		edge += w->t[2] < from && w->t[3] >= from;
		if (!g)
			continue;
		present++;
		if (g->end < w->t[2] || g->end > w->t[3] || g->start < w->t[0] || g->start > w->t[1])
			fail_msg("%s [%s]: traced [%lu, %lu], the target saw [%lu..%lu, %lu..%lu]",
				 w->name, w->meta, g->start, g->end, w->t[0], w->t[1], w->t[2],
				 w->t[3]);
		main_span |= !strcmp(w->name, "flight.main");
	}
	/* No span in the trace that the target did not log. */
	assert_int_equal(present, nspans);
	/* Begun 60 s before the end, it ended in the window: it is there. */
	assert_true(main_span);

	/* Every slice lies in a span of the trace: the one around it, not only an outer one. */
	qsort(want, nwant, sizeof(*want), cmp_tid_start);
	for (size_t i = 0; i < ngot; i++) {
		if (!got[i].slice)
			continue;
		nslices++;
		assert_true(slice_span_kept(want, nwant, &got[i], spans, nspans));
	}
	assert_true(nslices > 0);
	assert_int_equal(nslices, i64(b, "off_cpu_slices"));
	left = (uint64_t)i64(b, "spans_left_out");
	slices_left = (uint64_t)i64(b, "off_cpu_slices_left_out");
	assert_true(slices_left > 0);
	assert_non_null(strstr(r.out, "\nTrace kept: the spans that ended in the last 5.00 s (from "));
	assert_non_null(strstr(r.out, fmt(" of the recording), %zu; %lu left out and %lu off-CPU "
					  "slices of theirs (the table has them all)\n",
					  nspans, left, slices_left)));
	print_message("--trace-last 5s of 60 s: %zu spans of %zu in the trace (%zu at the window's "
		      "start either way), %lu left out; %zu off-CPU slices, %lu left out; profiler "
		      "peak RSS %ld KiB, the window took %ld KiB\n",
		      nspans, nwant, edge, left, nslices, slices_left,
		      (long)i64(get(sum, "profiler"), "peak_rss_kib"),
		      (long)(i64(b, "memory_peak_bytes") >> 10));
	check_with_consumer(trace);
	/* report prints the same line from the summary. */
	{
		char *rep_argv[] = { fmt("%s/leanprofiler", build), "report", out, NULL };
		struct run rr;
		const char *line = strstr(r.out, "\nTrace kept: ");

		assert_int_equal(run(&rr, rep_argv), 0);
		assert_int_equal(rr.status, 0);
		assert_non_null(strstr(rr.out, fmt("%.*s", (int)(strchr(line + 1, '\n') - line), line)));
		run_free(&rr);
	}
	json_object_put(sum);
	free(spans);
	free(got);
	free(want);
	run_free(&r);
}


static int cmp_exit(const void *a, const void *b)
{
	const struct itest_span *x = a, *y = b;

	return x->t[2] < y->t[2] ? -1 : x->t[2] > y->t[2];
}

/*
 * --trace-max-size 256K on one thread's 3 s of spans (~10 MB of trace): the
 * file holds the spans that closed first, in the order they closed, and
 * stays within 256 KiB up to its names and closing line; the summary counts
 * every span and the ones left out exactly.
 */
static void test_trace_max_size(void **state)
{
	char *out = fmt("%s/max-size", tmpdir), *log = fmt("%s/flight-size.txt", tmpdir);
	char *trace = fmt("%s/leanprofiler-trace.json", out), *text, *names;
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--trace-max-size",
			 "256K", "--", fmt("%s/tests/targets/flight", build), log, "3", "1", "0",
			 NULL };
	struct itest_span *want;
	struct tev *got;
	size_t nwant, ngot, len, k = 0;
	json_object *sum, *b;
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record exited %d: %s", r.status, r.err);
	nwant = read_expected(log, &want);
	/* The target's own order of closing: two threads, but flight.main closes after the other's. */
	qsort(want, nwant, sizeof(*want), cmp_exit);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	b = get(sum, "trace_bound");
	ngot = read_events(trace, &got);
	for (size_t i = 0; i < ngot; i++) {
		char key[300];

		assert_false(got[i].slice);
		assert_true(k < nwant);
		snprintf(key, sizeof(key), "%s\t%s", want[k].name, want[k].meta);
		if (strcmp(got[i].key, key))
			fail_msg("span %zu of the trace is %s, the %zuth the target closed is %s", i,
				 got[i].key, k, key);
		k++;
	}
	assert_int_equal(i64(sum, "events"), (int64_t)nwant);
	assert_int_equal(i64(b, "spans"), (int64_t)k);
	assert_int_equal(i64(b, "spans_left_out"), (int64_t)(nwant - k));
	assert_true(json_object_get_boolean(get(b, "full")));
	assert_true(nwant - k > 10 * k);
	/* Full at the end of the first span left out. */
	assert_true((uint64_t)i64(b, "window_end_ns") >= want[k].t[2] &&
		    (uint64_t)i64(b, "window_end_ns") <= want[k].t[3]);
	/* Within SIZE up to the names, the next span (~150 bytes) would have passed it. */
	text = slurp(trace, &len);
	names = strstr(text, "\n,{\"ph\":\"M\"");
	assert_non_null(names);
	assert_true((size_t)(names - text) <= 256 << 10);
	assert_true((size_t)(names - text) + 256 > 256 << 10);
	print_message("--trace-max-size 256K: %zu of %zu spans, %zu bytes, %zu with the names and "
		      "the closing line\n",
		      k, nwant, (size_t)(names - text), len);
	assert_non_null(strstr(r.out, fmt("\nTrace kept: the first %zu spans, until the trace was "
					  "full at --trace-max-size 256K, ", k)));
	assert_non_null(strstr(r.out, fmt(" into the recording; %zu that closed later left out (the "
					  "table has them all)\n",
					  nwant - k)));
	check_with_consumer(trace);
	free(text);
	json_object_put(sum);
	free(got);
	free(want);
	run_free(&r);
}

/*
 * The profiler's peak RSS (KiB) recording flood with these options; the
 * summary's trace_bound. Started by a shell's child: a process exec'ed by
 * this one would count this one's peak as its own (Linux keeps ru_maxrss
 * across fork and exec), and this one has read large traces by now.
 */
static long flood_rss(const char *name, const char *opt1, const char *opt2, const char *opt3,
		      json_object **bound)
{
	char *out = fmt("%s/%s", tmpdir, name);
	char *argv[] = { "/bin/sh", "-c", "\"$@\" & wait $!", "sh",
			 fmt("%s/leanprofiler", build), "record", "-o", out, (char *)opt1,
			 (char *)opt2, (char *)opt3, "--", fmt("%s/tests/targets/flood", build), "1",
			 "300000", NULL };
	json_object *sum;
	struct run r;
	long rss;

	/* The options, then "--": shift the command down over the options not given. */
	if (!opt3)
		memmove(&argv[10], &argv[11], 5 * sizeof(*argv));
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record %s exited %d: %s", name, r.status, r.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	rss = (long)i64(get(sum, "profiler"), "peak_rss_kib");
	*bound = json_object_get(get(sum, "trace_bound"));
	json_object_put(sum);
	run_free(&r);
	return rss;
}

/*
 * Memory stays bounded: 600k spans (~90 MB of trace) with --trace-last
 * longer than the recording and --trace-max-size 16M hold 16 MiB of it at
 * most, the newest, and cost the profiler that much more than a trace of 4 KiB.
 */
#define BOUND_RING (16 << 20)
/*
 * The ring's index, 16 bytes an event (4 MiB for these 130k), and the allocator: 3.8 MiB
 * measured; and the buffers of the thread that writes the file (bgwrite.h), which the
 * window's spans fill at the end where a 4 KiB trace touched one page of them.
 */
#define BOUND_RSS_SLACK_KIB ((8 << 10) + (LP_BGW_BUFFERS * LP_BGW_BUFFER >> 10))

static void test_trace_bound_memory(void **state)
{
	json_object *small, *ring, *window;
	long base = flood_rss("bound-4k", "--trace-max-size", "4K", NULL, &small);
	long cut = flood_rss("bound-16m", "--trace-last", "1h", "--trace-max-size=16M", &ring);
	long last = flood_rss("bound-100ms", "--trace-last", "100ms", NULL, &window);
	struct stat sb;

	(void)state;
	print_message("600k spans: profiler peak RSS %ld KiB with a 4K trace, %ld KiB with "
		      "--trace-last 1h --trace-max-size 16M (the ring's peak %ld KiB), %ld KiB "
		      "with --trace-last 100ms (%ld KiB)\n",
		      base, cut, (long)(i64(ring, "memory_peak_bytes") >> 10), last,
		      (long)(i64(window, "memory_peak_bytes") >> 10));
	assert_true(json_object_get_boolean(get(small, "full")));
	assert_true(json_object_get_boolean(get(ring, "cut")));
	assert_true(i64(ring, "memory_peak_bytes") <= BOUND_RING);
	assert_true(i64(ring, "bytes") > BOUND_RING - 4096);
	assert_true(cut - base <= (BOUND_RING >> 10) + BOUND_RSS_SLACK_KIB);
	assert_true(last - base <= (i64(window, "memory_peak_bytes") >> 10) + BOUND_RSS_SLACK_KIB);
	/* The file: the ring's bytes, its opening, names and closing line. */
	assert_int_equal(stat(fmt("%s/bound-16m/leanprofiler-trace.json", tmpdir), &sb), 0);
	assert_true(sb.st_size <= BOUND_RING + 4096);
	json_object_put(small);
	json_object_put(ring);
	json_object_put(window);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_example),
		cmocka_unit_test(test_uprobe_multi_same_recording),
		cmocka_unit_test(test_core_btf_fallback),
		cmocka_unit_test(test_workload_recorded_exactly),
		cmocka_unit_test(test_exit_status_passed_on),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_few_open_files),
		cmocka_unit_test(test_losses_counted_exactly),
		cmocka_unit_test(test_summary_only),
		cmocka_unit_test(test_max_groups),
		cmocka_unit_test(test_many_names_memory),
		cmocka_unit_test(test_trace_last_flight_recorder),
		cmocka_unit_test(test_trace_max_size),
		cmocka_unit_test(test_trace_bound_memory),
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_disk_full),
		cmocka_unit_test(test_second_signal_stops_recording),
		cmocka_unit_test(test_default_output_keeps_old),
		cmocka_unit_test(test_failed_run_leaves_nothing),
		cmocka_unit_test_teardown(test_interrupt_before_start_keeps_old, stop_started),
		cmocka_unit_test_teardown(test_stale_temporaries_removed, stop_started),
	};

	if (argc > 1)
		build = argv[1];
	if (getenv("LP_TEST_FILTER")) /* e.g. LP_TEST_FILTER=test_failures: one test */
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	/* test_privileges says whose the command is itself. */
	if (!itest_as_root("test_record"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
