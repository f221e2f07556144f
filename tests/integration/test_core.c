// SPDX-License-Identifier: MIT
/*
 * Integration tests of the core as users load it: many threads at once,
 * thread ids the kernel hands out again, a child that outlives the command,
 * a recording cut by --duration, a thread id given to -p, resources of a
 * process that exits while attached, scopes named by temporaries, and
 * literal texts met while the address space changes.
 * Usage: test_core BUILD_DIR [PROFILER]   (PROFILER: default BUILD_DIR/leanprofiler;
 * make check runs it again with the AddressSanitizer build, BUILD_DIR/san/leanprofiler)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static const char *profiler;
static char tmpdir[] = "/tmp/lp-core-XXXXXX";

#include "itest.h"

static const char *target(void)
{
	return fmt("%s/tests/targets/core", build);
}

static int64_t num(json_object *o, const char *key)
{
	return json_object_get_int64(get(o, key));
}

static json_object *row(json_object *sum, const char *name)
{
	json_object *rows = get(sum, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		if (!strcmp(json_object_get_string(get(r, "name")), name))
			return r;
	}
	fail_msg("no row %s", name);
	return NULL;
}

/* Nothing was lost, so nothing may be uncertain; every span counted. */
static void assert_exact(json_object *sum, const char *name, int64_t calls)
{
	json_object *lost = get(sum, "lost_events");

	assert_int_equal(num(lost, "total"), 0);
	assert_int_equal(num(lost, "thread_record"), 0);
	assert_int_equal(num(lost, "process_records"), 0);
	assert_int_equal(num(sum, "uncertain_spans"), 0);
	assert_int_equal(num(sum, "unterminated_spans"), 0);
	assert_int_equal(num(row(sum, name), "calls"), calls);
	assert_int_equal(num(row(sum, name), "uncertain"), 0);
}

/*
 * Every span of the trace ends by the end of the recording (trace times are
 * microseconds from its start, with ns precision).
 */
static void assert_nothing_after_end(const char *out, json_object *sum)
{
	json_object *rec = get(sum, "recording");
	int64_t window = num(rec, "end_ns") - num(rec, "start_ns");
	json_object *trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	json_object *evs = get(trace, "traceEvents");
	size_t spans = 0;

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i), *ph;
		int64_t end_ns;

		if (!json_object_object_get_ex(e, "ph", &ph) ||
		    strcmp(json_object_get_string(ph), "X"))
			continue;
		spans++;
		end_ns = (int64_t)(json_object_get_double(get(e, "ts")) * 1000.0 +
				   json_object_get_double(get(e, "dur")) * 1000.0 + 0.5);
		if (end_ns > window + 1)
			fail_msg("span %s ends %lld ns after the recording's end",
				 json_object_get_string(get(e, "name")),
				 (long long)(end_ns - window));
	}
	assert_true(spans > 0);
	json_object_put(trace);
}

/* Records argv (after "record -o OUT"); the run, with the summary loaded. */
static json_object *record(struct run *r, const char *out, char **args)
{
	char *argv[32] = { (char *)profiler, "record", "-o", (char *)out };
	json_object *sum, *lost;
	size_t n = 4;

	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	assert_int_equal(run(r, argv), 0);
	if (r->status != 0)
		fail_msg("record exited %d:\n%s%s", r->status, r->out, r->err);
	/* A sanitizer's report fails the run even when the exit code was kept. */
	if (strstr(r->err, "Sanitizer") || strstr(r->err, "runtime error"))
		fail_msg("sanitizer report:\n%s", r->err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	/* Nothing lost: every literal's text arrived, no event is named "(unknown)". */
	lost = get(sum, "lost_events");
	if (num(lost, "total") == 0 && num(lost, "string") == 0)
		assert_int_equal(num(get(sum, "input"), "unknown_literals"), 0);
	return sum;
}

/* 64 threads at once: the decoder's thread table grows while all are busy. */
static void test_many_threads(void **state)
{
	struct run r;
	char *out = fmt("%s/threads", tmpdir);
	json_object *sum = record(&r, out, (char *[]){ "--summary-only", "--", (char *)target(),
						      "threads", "64", "2000", NULL });

	(void)state;
	assert_non_null(strstr(r.out, "threads=64 spans=128000"));
	assert_exact(sum, "core.work", 128000);
	assert_int_equal(num(sum, "threads"), 65 - 1); /* the main thread marks nothing */
	json_object_put(sum);
	run_free(&r);
}

/* Threads that get the id of one that exited: each begins its own count. */
static void test_thread_id_reuse(void **state)
{
	struct run r;
	char *out = fmt("%s/reuse", tmpdir);
	json_object *sum = record(&r, out, (char *[]){ "--", (char *)target(), "reuse", "300",
						      NULL });
	int reused = 0, threads = 0;
	const char *line = strstr(r.out, "reused=");

	(void)state;
	assert_non_null(line);
	assert_int_equal(sscanf(line, "reused=%d threads=%d", &reused, &threads), 2);
	/* The story needs reuse: most tries win (other processes rarely take the id first). */
	assert_true(reused >= 150);
	assert_exact(sum, "core.reuse", threads);
	assert_int_equal(num(sum, "threads"), threads);
	assert_nothing_after_end(out, sum);
	json_object_put(sum);
	run_free(&r);
}

/*
 * The command exits, its child runs on: the recording ends with the command,
 * the child's open span ends there too, and the child was alive then.
 */
static void test_child_outlives_command(void **state)
{
	for (int round = 0; round < 3; round++) {
		struct run r;
		char *out = fmt("%s/daemon%d", tmpdir, round);
		json_object *sum = record(&r, out, (char *[]){ "--", (char *)target(), "daemon",
							      "30", NULL });
		json_object *procs = get(sum, "processes");
		int child = 0;
		unsigned long long exit_ns = 0;
		const char *c = strstr(r.out, "child pid=");
		bool seen = false;

		(void)state;
		assert_non_null(c);
		assert_int_equal(sscanf(c, "child pid=%d", &child), 1);
		/* The child's own line comes when it exits: wait for it (it is not ours). */
		for (int i = 0; i < 500 && !strstr(r.err, "exit_ns="); i++) {
			wait_ms(10);
			free(r.err);
			r.err = slurp(fmt("%s/stderr", tmpdir), NULL);
		}
		c = strstr(r.err, "exit_ns=");
		assert_non_null(c);
		assert_int_equal(sscanf(c, "exit_ns=%llu", &exit_ns), 1);
		assert_nothing_after_end(out, sum);
		for (size_t i = 0; i < json_object_array_length(procs); i++) {
			json_object *p = json_object_array_get_idx(procs, i);

			if (num(p, "pid") != child)
				continue;
			seen = true;
			/* It exited after the end: alive then, whatever came later. */
			if ((int64_t)exit_ns >= num(get(sum, "recording"), "end_ns"))
				assert_true(json_object_get_boolean(get(p, "alive_at_end")));
		}
		assert_true(seen);
		/* How many ticks fit in the parent's 50 ms depends on the machine's load. */
		assert_true(num(row(sum, "daemon.tick"), "calls") >= 1);
		json_object_put(sum);
		run_free(&r);
	}
}

/*
 * A running process: starts it and reads its "pid=P tids=..." line. The
 * teardown (stop_started) kills and reaps it, so that a failed assertion never
 * leaves it spinning.
 */
static pid_t start_spinner(const char *mode, const char *arg, char *tids, size_t size)
{
	char *argv[] = { (char *)target(), (char *)mode, (char *)arg, NULL };
	char *outp = fmt("%s/spin.%s.out", tmpdir, mode);
	pid_t pid = spawn_to(argv, outp, fmt("%s/spin.%s.err", tmpdir, mode));
	char *text, *t;

	started_add(pid);
	assert_true(wait_text(outp, "\n", pid, 20000));
	text = slurp(outp, NULL);
	t = strstr(text, "tids=");
	assert_non_null(t);
	snprintf(tids, size, "%s", t + 5);
	tids[strcspn(tids, "\n")] = '\0';
	free(text);
	return pid;
}

/* --duration: the recording is exactly that long, and nothing ends after it. */
static void test_duration_is_exact(void **state)
{
	char tids[1024];
	pid_t pid = start_spinner("spin", "48", tids, sizeof(tids));
	struct run r;
	char *out = fmt("%s/duration", tmpdir);
	json_object *sum = record(&r, out, (char *[]){ "-p", fmt("%d", (int)pid), "--duration",
						      "0.5", NULL });
	json_object *rec = get(sum, "recording");

	(void)state;
	stop_started(NULL);
	assert_string_equal(json_object_get_string(get(rec, "end_reason")), "duration");
	assert_int_equal(num(rec, "end_ns") - num(rec, "start_ns"), 500000000);
	assert_true(num(sum, "window_ns") <= 500000000);
	assert_nothing_after_end(out, sum);
	/* Spans open at the end close there, unterminated: at most one per thread. */
	assert_true(num(sum, "unterminated_spans") <= 48);
	assert_int_equal(num(get(sum, "lost_events"), "total"), 0);
	json_object_put(sum);
	run_free(&r);
}

/* top -H shows thread ids: -p with one records its process, and says so. */
static void test_pid_is_a_thread_id(void **state)
{
	char tids[1024];
	pid_t pid = start_spinner("spin", "3", tids, sizeof(tids));
	char *tid = strrchr(tids, ',') + 1;
	struct run r;
	char *out = fmt("%s/tid", tmpdir);
	json_object *sum;

	(void)state;
	assert_int_not_equal(atoi(tid), (int)pid);
	sum = record(&r, out, (char *[]){ "-p", tid, "--duration", "0.3", NULL });
	stop_started(NULL);
	assert_non_null(strstr(r.err, fmt("%s is a thread of process %d", tid, (int)pid)));
	assert_int_equal(num(sum, "pid"), pid);
	assert_int_equal(num(sum, "threads"), 3);
	assert_true(num(row(sum, "core.spin"), "calls") > 3);
	json_object_put(sum);
	run_free(&r);
}

/* Attached to a process that exits: its figures up to the exit, none of them a made-up 0. */
static void test_attached_exit_resources(void **state)
{
	char tids[1024];
	pid_t pid = start_spinner("exit-after", "300", tids, sizeof(tids));
	struct run r;
	char *out = fmt("%s/exits", tmpdir);
	json_object *sum = record(&r, out, (char *[]){ "-p", fmt("%d", (int)pid), NULL });
	json_object *res = get(sum, "resources");

	(void)state;
	assert_int_equal(wait_exit(pid), 0);
	assert_string_equal(json_object_get_string(get(get(sum, "recording"), "end_reason")),
			    "targets exited");
	assert_true(json_object_get_boolean(get(res, "available")));
	assert_non_null(strstr(json_object_get_string(get(res, "scope")), "until its exit"));
	/* Every process has some resident memory: 0 was the zombie's missing VmHWM. */
	assert_true(num(res, "peak_rss_kib") > 100);
	assert_true(num(res, "user_cpu_ns") > 0);
	assert_non_null(strstr(r.out, "until its exit"));
	json_object_put(sum);
	run_free(&r);
}

/* C++ names a scope with a temporary: the enter and the exit carry its text. */
static void test_scope_named_by_temporary(void **state)
{
	struct run r;
	char *out = fmt("%s/scopes", tmpdir);
	json_object *sum = record(&r, out, (char *[]){ "--", fmt("%s/tests/targets/scopes", build),
						      "100", NULL });
	char job[80], cut[400];

	(void)state;
	for (int k = 0; k < 4; k++) {
		snprintf(job, sizeof(job), "job.%d%.*s", k, 55,
			 "-------------------------------------------------------");
		assert_int_equal(num(row(sum, job), "calls"), 25);
		assert_int_equal(num(row(sum, job), "unterminated"), 0);
	}
	/* 300 bytes: cut to the 256 a name keeps, marked with "…", enter and exit alike. */
	memset(cut, 'y', sizeof(cut));
	memcpy(cut, "long.", 5);
	memcpy(cut + 256, "\xe2\x80\xa6", 4);
	assert_int_equal(num(row(sum, cut), "calls"), 100);
	assert_int_equal(json_object_array_length(get(sum, "rows")), 5);
	assert_int_equal(num(sum, "unmatched_exits"), 0);
	assert_int_equal(num(sum, "unterminated_spans"), 0);
	json_object_put(sum);
	run_free(&r);
}

/*
 * Forked children meet their literal texts in pages they have not touched:
 * the kernel half cannot read them there and looks up the file they lie in,
 * while the child's main thread maps and unmaps memory. That look-up only
 * tries the address space's lock: it fails, and the file of the marker tells
 * where the text is. Every span has its own name and metadata, nothing is
 * unreadable or unknown, every exit closes its enter. Before, such a text was
 * sent unreadable and remembered as sent: in every run, thousands of spans of
 * about half the children were "(unreadable)" (up to 41000 of 96000), with
 * nothing lost.
 */
static void test_texts_while_mapping(void **state)
{
	struct run r;
	char *out = fmt("%s/mapping", tmpdir);
	json_object *sum = record(&r, out, (char *[]){ "--", (char *)target(), "busy", "20", "4",
						      NULL });
	json_object *in = get(sum, "input"), *trace, *evs;
	int pids[20], main_spans[20] = { 0 }, npids = 0;
	size_t spans = 0;

	(void)state;
	assert_non_null(strstr(r.out, "children=20"));
	assert_int_equal(num(get(sum, "lost_events"), "total"), 0);
	assert_int_equal(num(in, "unknown_literals"), 0);
	assert_int_equal(num(in, "unreadable_strings"), 0);
	assert_int_equal(num(sum, "unmatched_exits"), 0);
	assert_int_equal(num(sum, "unterminated_spans"), 0);
	assert_int_equal(json_object_array_length(get(sum, "rows")), 24);
	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	evs = get(trace, "traceEvents");
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i), *ph, *args, *k;
		const char *name;
		int pid, at = -1;

		if (!json_object_object_get_ex(e, "ph", &ph) ||
		    strcmp(json_object_get_string(ph), "X"))
			continue;
		spans++;
		name = json_object_get_string(get(e, "name"));
		args = get(e, "args");
		/* "busy.K" with k=K, and nothing else */
		if (strncmp(name, "busy.", 5) || !json_object_object_get_ex(args, "k", &k) ||
		    strcmp(json_object_get_string(k), name + 5) ||
		    json_object_object_length(args) != 1)
			fail_msg("span %s %s", name, json_object_to_json_string(args));
		pid = json_object_get_int(get(e, "pid"));
		if (json_object_get_int(get(e, "tid")) != pid)
			continue;
		/* The main thread's round, after its threads ended. */
		for (int p = 0; p < npids; p++)
			if (pids[p] == pid)
				at = p;
		if (at < 0) {
			assert_true(npids < 20);
			at = npids;
			pids[npids++] = pid;
		}
		main_spans[at]++;
	}
	/* 20 children of 4 threads, 50 rounds each, then their main thread's round. */
	assert_int_equal(spans, 20 * (4 * 50 + 1) * 24);
	assert_int_equal(npids, 20);
	for (int p = 0; p < npids; p++)
		assert_int_equal(main_spans[p], 24);
	json_object_put(trace);
	json_object_put(sum);
	run_free(&r);
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

/*
 * What the profiler says it used is what it used: its figures are taken after
 * the trace is written, so only the summary and the table come later. The
 * kernel's count (wait4, which adds the command leanprofiler waited for: its
 * own figures are in the summary's resources) is the truth.
 */
static void test_own_usage_complete(void **state)
{
	char *out = fmt("%s/usage", tmpdir);
	char *argv[] = { (char *)profiler, "record", "-o", out, "--",
			 fmt("%s/tests/targets/distinct", build), "30000", "meta", "300", NULL };
	struct run r;
	struct rusage ru, parent;
	int rc;
	json_object *sum, *self, *res;
	uint64_t total_cpu, target_cpu, own_cpu, said_cpu;

	(void)state;
	/*
	 * The sanitizer build's leak check scans the whole heap at exit, after
	 * any figure could be taken: not the profiler's work, left out here.
	 */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	getrusage(RUSAGE_SELF, &parent);
	rc = run_usage(&r, argv, &ru);
	unsetenv("ASAN_OPTIONS");
	assert_int_equal(rc, 0);
	assert_int_equal(r.status, 0);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	self = get(sum, "profiler");
	res = get(sum, "resources");
	assert_true(json_object_get_boolean(get(self, "available")));
	total_cpu = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
	target_cpu = (uint64_t)num(res, "user_cpu_ns") + (uint64_t)num(res, "system_cpu_ns");
	own_cpu = total_cpu - target_cpu;
	said_cpu = (uint64_t)num(self, "user_cpu_ns") + (uint64_t)num(self, "system_cpu_ns");
	printf("own usage: %llu of %llu ms of CPU said, peak RSS %lld of %ld KiB\n",
	       (unsigned long long)said_cpu / 1000000, (unsigned long long)own_cpu / 1000000,
	       (long long)num(self, "peak_rss_kib"), ru.ru_maxrss);
	/* Taken before the end, so at most the whole (both count in clock ticks). */
	assert_true(said_cpu <= own_cpu + 10000000);
	/*
	 * Missing only the summary (10000 rows, the row cap), the table and the
	 * teardown: 13% here, 18% in the sanitizer build. Before, the summary
	 * was built as a tree after the figures: an 11 s recording of many rows
	 * said 0.9 s of the 4.3 s of CPU /usr/bin/time measured (21%).
	 */
	if (said_cpu * 10 < own_cpu * 6)
		fail_msg("the summary says %llu ms of CPU, leanprofiler used %llu ms",
			 (unsigned long long)said_cpu / 1000000, (unsigned long long)own_cpu / 1000000);
	/*
	 * The peak is leanprofiler's (the command's is far smaller). wait4's
	 * ru_maxrss is at least it; it is the profiler's own only when it is
	 * above what the child inherited at its exec (Linux keeps ru_maxrss
	 * across execve: this test process's own peak by then).
	 */
	if ((uint64_t)num(self, "peak_rss_kib") > (uint64_t)ru.ru_maxrss)
		fail_msg("the summary says a peak RSS of %lld KiB, above wait4's %ld KiB",
			 (long long)num(self, "peak_rss_kib"), ru.ru_maxrss);
	if (ru.ru_maxrss * 10 > parent.ru_maxrss * 11 &&
	    (uint64_t)num(self, "peak_rss_kib") * 10 < (uint64_t)ru.ru_maxrss * 9)
		fail_msg("the summary says a peak RSS of %lld KiB, leanprofiler's was %ld KiB",
			 (long long)num(self, "peak_rss_kib"), ru.ru_maxrss);
	assert_true(num(self, "end_to_figures_ns") > 0);
	json_object_put(sum);
	run_free(&r);
}

/*
 * The profiler's peak RSS is its own, whoever started it: Linux keeps
 * ru_maxrss across execve, so a recording started by a process holding
 * 300 MiB said 321088 KiB where leanprofiler peaked at ~43000.
 */
static void test_own_peak_not_the_parents(void **state)
{
	const size_t big = 300u << 20;
	char *out = fmt("%s/bigparent", tmpdir);
	char *argv[] = { (char *)profiler, "record", "-o", out, "--",
			 fmt("%s/examples/nested", build), NULL };
	char *hold = malloc(big);
	struct run r;
	struct rusage ru;
	json_object *sum;
	long long peak;

	(void)state;
	assert_non_null(hold);
	memset(hold, 1, big); /* resident: this process's peak, and the forked child's */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	assert_int_equal(run_usage(&r, argv, &ru), 0);
	unsetenv("ASAN_OPTIONS");
	assert_int_equal(r.status, 0);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	peak = num(get(sum, "profiler"), "peak_rss_kib");
	printf("peak RSS said %lld KiB; started by a process of %zu KiB (wait4: %ld KiB)\n", peak,
	       big >> 10, ru.ru_maxrss);
	assert_true(peak > 1000);
	if ((uint64_t)peak >= (big >> 10))
		fail_msg("the summary says a peak RSS of %lld KiB: its parent's, not its own", peak);
	free(hold);
	json_object_put(sum);
	run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_thread_id_reuse),
		cmocka_unit_test(test_child_outlives_command),
		cmocka_unit_test_teardown(test_duration_is_exact, stop_started),
		cmocka_unit_test_teardown(test_pid_is_a_thread_id, stop_started),
		cmocka_unit_test_teardown(test_attached_exit_resources, stop_started),
		cmocka_unit_test(test_scope_named_by_temporary),
		cmocka_unit_test(test_texts_while_mapping),
		cmocka_unit_test(test_own_usage_complete),
		cmocka_unit_test(test_own_peak_not_the_parents),
	};

	if (argc > 1)
		build = argv[1];
	profiler = argc > 2 ? argv[2] : fmt("%s/leanprofiler", build);
	if (!itest_as_root("test_core"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
