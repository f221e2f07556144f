// SPDX-License-Identifier: MIT
/*
 * Integration tests of `report` and `diff`: real recordings (real BPF, so
 * root), read back without recording again. `report` must print record's
 * table byte for byte; the call tree and folded stacks must add up to the
 * table; `diff` must tell a slower phase from the noise of two runs; bad
 * input must be refused with one line and exit 125.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-report-XXXXXX";

#include "itest.h"

/* Attempts of a comparison that timing noise on a loaded host may spoil (see test_diff). */
#define DIFF_ATTEMPTS 3

static char *lp(void)
{
	return fmt("%s/leanprofiler", build);
}

/* Records argv (after "--") into dir; record's stdout. */
static struct run record(const char *dir, char *const opts[], char *const cmd[])
{
	char *argv[32];
	int n = 0;
	struct run r;

	argv[n++] = lp();
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = (char *)dir;
	for (int i = 0; opts && opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	for (int i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_true(n < 32);
	assert_int_equal(run(&r, argv), 0);
	return r;
}

/*
 * The table in record's stdout: from "Lean profile:" (a recording whose
 * markers pass a counter) or "Profile:" at the start of a line (one without;
 * a target may print before it) to the blank line before "Trace:" and "Summary:".
 */
static char *table_part(const char *out)
{
	const char *start = strstr(out, "Lean profile:");

	if (!start)
		start = !strncmp(out, "Profile: ", 9) ? out : strstr(out, "\nProfile: ");
	if (start && *start == '\n')
		start++;
	const char *end = strstr(out, "\n\nTrace: ");

	assert_non_null(start);
	assert_non_null(end);
	assert_non_null(strstr(end, "\nSummary: "));
	return strndup(start, (size_t)(end - start) + 1);
}

/* leanprofiler COMMAND ARGS... (report, diff): no privileges needed, run as root anyway. */
static struct run lp_cmd(const char *command, char *const args[])
{
	char *argv[16] = { lp(), (char *)command };
	int n = 2;
	struct run r;

	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	assert_true(n < 16);
	assert_int_equal(run(&r, argv), 0);
	return r;
}

static struct run report(char *const args[])
{
	return lp_cmd("report", args);
}

static struct run diff(char *const args[])
{
	return lp_cmd("diff", args);
}

/*
 * The call tree adds up to the table: over all paths, self time is the
 * recorded thread time; per name, calls and self time are the rows'.
 */
static void check_tree_against_rows(json_object *sum)
{
	json_object *nodes = get(get(sum, "paths"), "nodes"), *rows = get(sum, "rows");
	int64_t self = 0;

	assert_int_equal(json_object_get_int64(get(get(sum, "paths"), "folded_spans")), 0);
	for (size_t i = 0; i < json_object_array_length(nodes); i++)
		self += json_object_get_int64(get(json_object_array_get_idx(nodes, i), "self_ns"));
	assert_int_equal(self, json_object_get_int64(get(sum, "recorded_thread_time_ns")));
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		const char *name = json_object_get_string(get(json_object_array_get_idx(rows, i),
							      "name"));
		int64_t row_calls = 0, row_self = 0, node_calls = 0, node_self = 0;

		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			json_object *row = json_object_array_get_idx(rows, k);

			if (!strcmp(json_object_get_string(get(row, "name")), name)) {
				row_calls += json_object_get_int64(get(row, "calls"));
				row_self += json_object_get_int64(get(row, "self_ns"));
			}
		}
		for (size_t k = 0; k < json_object_array_length(nodes); k++) {
			json_object *nd = json_object_array_get_idx(nodes, k);

			if (!strcmp(json_object_get_string(get(nd, "name")), name)) {
				node_calls += json_object_get_int64(get(nd, "calls"));
				node_self += json_object_get_int64(get(nd, "self_ns"));
			}
		}
		assert_int_equal(node_calls, row_calls);
		assert_int_equal(node_self, row_self);
	}
}

/* --folded: one "a;b;c VALUE" line per path; the values add up to the recorded thread time. */
static void check_folded(const char *dir, json_object *sum)
{
	struct run r = report((char *[]){ "--folded", (char *)dir, NULL });
	int64_t total = 0;

	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	for (char *line = r.out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		char *sp = nl;

		while (sp > line && sp[-1] != ' ')
			sp--;
		assert_true(sp > line && sp < nl);
		total += strtoll(sp, NULL, 10);
	}
	assert_int_equal(total, json_object_get_int64(get(sum, "recorded_thread_time_ns")));
	run_free(&r);
}

/*
 * `report DIR` prints exactly the table record printed: nested example, -v,
 * five threads, lost events, an unterminated span, --summary-only, a bounded
 * trace. The same from the summary file and from the trace's path.
 */
static void test_report_reprints_the_table(void **state)
{
	static const struct {
		const char *name;
		char *opts[4];
		char *cmd[6];
	} cases[] = {
		{ "nested", { NULL }, { "examples/nested", NULL } },
		{ "verbose", { "-v", NULL }, { "examples/nested", NULL } },
		{ "threads", { NULL }, { "tests/targets/workload", "@/workload.out", "4", "50", NULL } },
		{ "lost", { "--buffer-size", "64K", NULL }, { "tests/targets/flood", "4", "10000", NULL } },
		{ "unterminated", { NULL }, { "tests/targets/exit_status", "3", NULL } },
		{ "summary-only", { "--summary-only", NULL }, { "tests/targets/flood", "1", "70000", NULL } },
		{ "trace-last", { "--trace-last", "5ms", NULL }, { "tests/targets/flood", "1", "70000", NULL } },
		{ "trace-max-size", { "--trace-max-size", "64K", NULL },
		  { "tests/targets/flood", "1", "70000", NULL } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = fmt("%s/%s", tmpdir, cases[i].name), *cmd[6] = { NULL }, *want;
		struct run rec, r;
		json_object *sum;

		for (int k = 0; cases[i].cmd[k]; k++)
			cmd[k] = k == 0 ? fmt("%s/%s", build, cases[i].cmd[k])
				 : cases[i].cmd[k][0] == '@' ? fmt("%s%s", tmpdir, cases[i].cmd[k] + 1)
							     : cases[i].cmd[k];
		rec = record(dir, cases[i].opts, cmd);
		want = table_part(rec.out);
		r = report((char *[]){ dir, NULL });
		if (r.status != 0 || strcmp(r.out, want))
			fail_msg("%s: report (exit %d) printed\n%s\ninstead of\n%s%s", cases[i].name,
				 r.status, r.out, want, r.err);
		assert_string_equal(r.err, "");
		run_free(&r);
		r = report((char *[]){ fmt("%s/leanprofiler-summary.json", dir), NULL });
		assert_string_equal(r.out, want);
		run_free(&r);
		if (strcmp(cases[i].name, "summary-only")) {
			r = report((char *[]){ fmt("%s/leanprofiler-trace.json", dir), NULL });
			assert_string_equal(r.out, want);
			run_free(&r);
		}
		sum = summary_of(dir);
		check_tree_against_rows(sum);
		check_folded(dir, sum);
		json_object_put(sum);
		free(want);
		run_free(&rec);
	}
	/* The cases say what they test. */
	assert_non_null(strstr(slurp(fmt("%s/verbose/leanprofiler-summary.json", tmpdir), NULL),
			       "\"profiler_line\":true"));
	assert_non_null(strstr(slurp(fmt("%s/trace-last/leanprofiler-summary.json", tmpdir), NULL),
			       "\"trace_bound\":{\"last_ns\":5000000,"));
	assert_non_null(strstr(slurp(fmt("%s/trace-max-size/leanprofiler-summary.json", tmpdir), NULL),
			       "\"full\":true"));
}

/* A report needs no privileges: nobody reads a recording it may read. */
static void test_report_as_nobody(void **state)
{
	char *dir = fmt("%s/nested", tmpdir);
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			 lp(), "report", dir, NULL };
	struct run mine, theirs;

	(void)state;
	assert_int_equal(chmod(tmpdir, 0755), 0);
	mine = report((char *[]){ dir, NULL });
	assert_int_equal(run(&theirs, argv), 0);
	assert_int_equal(theirs.status, 0);
	assert_string_equal(theirs.out, mine.out);
	run_free(&mine);
	run_free(&theirs);
}

static size_t count_of(const char *s, const char *text)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, text)); p++)
		n++;
	return n;
}

/* --sort, --top, --min-total, --threads and --tree on the five threads' recording. */
static void test_report_views(void **state)
{
	char *dir = fmt("%s/threads", tmpdir);
	struct run r;
	json_object *sum = summary_of(dir);
	size_t rows = json_object_array_length(get(sum, "rows"));
	const char *p;

	(void)state;
	r = report((char *[]){ "--sort", "calls", "--top", "3", dir, NULL });
	assert_int_equal(r.status, 0);
	/* "recurse [level=1]" and "leaf [kind=literal]" have the most calls (200 each). */
	p = strstr(r.out, "\n\nName ");
	assert_non_null(p);
	p = strchr(p + 2, '\n') + 1;
	assert_true(!strncmp(p, "leaf [kind=literal]", 19) || !strncmp(p, "recurse [level=1]", 17));
	assert_non_null(strstr(r.out, fmt("\n%zu more rows not shown (--top, --min-total)\n",
					  rows - 3)));
	run_free(&r);

	/* No row has a second: the column header, then the count. */
	r = report((char *[]){ "--min-total", "1s", dir, NULL });
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, fmt("Self HB      %%\n%zu more rows not shown", rows)));
	run_free(&r);

	r = report((char *[]){ "--threads", dir, NULL });
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Threads: 5, recorded thread time "));
	assert_int_equal(count_of(r.out, "  workload   "), 5);
	run_free(&r);

	r = report((char *[]){ "--tree", dir, NULL });
	assert_int_equal(r.status, 0);
	/* main has no children recorded; thread.root (4 calls) holds the rounds. */
	assert_non_null(strstr(r.out, "        1  main\n"));
	assert_non_null(strstr(r.out, "        4  thread.root\n"));
	assert_non_null(strstr(r.out, "      200   +-recurse\n"));
	assert_non_null(strstr(r.out, "      148   | +-recurse\n"));
	run_free(&r);
	json_object_put(sum);
}

/* One recording of the phases target; speeds as text. */
static char *phases(const char *name, const char *load, const char *compute, bool extra)
{
	char *dir = fmt("%s/%s", tmpdir, name);
	struct run r = record(dir, NULL,
			      (char *[]){ fmt("%s/tests/targets/phases", build), "10", (char *)load,
					  (char *)compute, extra ? "extra" : NULL, NULL });

	assert_int_equal(r.status, 0);
	run_free(&r);
	return dir;
}

/*
 * Two runs of the same workload: no regression. Five percent slower with a
 * threshold of 10%: none. Both compare wall-clock durations of two runs one
 * after the other: on a host loaded by other jobs one run's sleeps may
 * oversleep by milliseconds, and that is a real slowdown for the profiler. So
 * each gets DIFF_ATTEMPTS pairs of fresh runs, and must exit 0 for one of them
 * (a profiler that always flagged it fails every attempt).
 */
static void test_diff_no_regression(void **state)
{
	static const struct {
		const char *speed;
		char *threshold;
	} cases[] = { { "1", NULL }, { "1.05", "10" } };

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct run r = { 0 };
		int attempt;

		for (attempt = 0; attempt < DIFF_ATTEMPTS; attempt++) {
			char *base = phases("base", "1", "1", false);
			char *now = phases("now", "1", cases[c].speed, false);

			r = cases[c].threshold ? diff((char *[]){ "--threshold", cases[c].threshold,
								   base, now, NULL })
					       : diff((char *[]){ base, now, NULL });
			if (r.status == 0)
				break;
			print_message("attempt %d of %s x speed: exit %d\n%s", attempt + 1,
				      cases[c].speed, r.status, r.out);
			run_free(&r);
		}
		assert_true(attempt < DIFF_ATTEMPTS);
		assert_non_null(strstr(r.out, "\nno regression: a row regresses when its self time "
					      "or P95 grows by more than 10% "));
		assert_null(strstr(r.out, "\nregression: "));
		assert_string_equal(r.err, "");
		run_free(&r);
	}
}

/*
 * The compute phase three times slower: exit 1 and a line naming it (its
 * rounds' P95 grows with it: P95 is of whole calls). The load phase, as fast
 * as before, is not named. --json says the same.
 */
static void test_diff_regression(void **state)
{
	char *base = phases("base", "1", "1", false), *slow = phases("slow", "1", "3", false);
	struct run r = diff((char *[]){ base, slow, NULL });
	json_object *o, *rows;
	bool found = false;

	(void)state;
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\nregression: phase.compute [kind=cpu]: self time +"));
	assert_null(strstr(r.out, "\nregression: phase.load"));
	assert_true(strstr(r.out, "regressions: a row regresses when") ||
		    strstr(r.out, "\n1 regression: a row regresses when"));
	assert_string_equal(r.err, "");
	run_free(&r);

	r = diff((char *[]){ "--json", base, slow, NULL });
	assert_int_equal(r.status, 1);
	o = json_tokener_parse(r.out);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(get(o, "schema")), "leanprofiler-diff/1");
	rows = get(o, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (strcmp(json_object_get_string(get(row, "name")), "phase.compute"))
			continue;
		found = true;
		assert_true(json_object_get_boolean(get(row, "regression")));
		assert_true(json_object_get_double(get(get(row, "change_percent"), "self")) > 150);
	}
	assert_true(found);
	json_object_put(o);
	run_free(&r);
}

/* A phase only one side has: added one way, removed the other. */
static void test_diff_added_removed(void **state)
{
	char *base = phases("base", "1", "1", false), *extra = phases("extra", "1", "1", true);
	struct run r = diff((char *[]){ base, extra, NULL });

	(void)state;
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "\nphase.extra "));
	assert_non_null(strstr(r.out, "  added\n"));
	assert_null(strstr(r.out, "regression: phase.extra"));
	run_free(&r);
	r = diff((char *[]){ extra, base, NULL });
	assert_non_null(strstr(r.out, "  removed\n"));
	run_free(&r);
}

static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);

	assert_non_null(p);
	return fmt("%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
}

/* One line on stderr, nothing on stdout, exit 125. */
static void expect_refused(struct run *r, const char *says)
{
	if (r->status != 125 || !strstr(r->err, says) || strchr(r->err, '\n') != r->err +
	    r->err_len - 1 || r->out_len)
		fail_msg("expected exit 125 and one line saying '%s'; got exit %d, stdout '%s', "
			 "stderr '%s'", says, r->status, r->out, r->err);
	assert_null(strchr(r->err, '\x1b'));
}

static void test_bad_input(void **state)
{
	char *good = slurp(fmt("%s/nested/leanprofiler-summary.json", tmpdir), NULL);
	char *bad = fmt("%s/bad", tmpdir), *empty = fmt("%s/empty", tmpdir);
	char *trace_only = fmt("%s/trace-only", tmpdir);
	static const char *const files[][2] = {
		{ "truncated.json", NULL },
		{ "foreign.json", "{\"hello\": [1, 2, 3]}\n" },
		{ "garbage.json", "\x7f" "ELF\x02\x01\x01" },
		{ "array.json", "[]" },
	};
	struct {
		char *args[5];
		const char *says;
	} cases[] = {
		{ { fmt("%s/truncated.json", bad) }, "the JSON ends early (a truncated file?)" },
		{ { fmt("%s/foreign.json", bad) }, "not a leanprofiler summary (no \"schema\")" },
		{ { fmt("%s/garbage.json", bad) }, "not a leanprofiler summary: not JSON" },
		{ { fmt("%s/array.json", bad) }, "not a leanprofiler summary (not a JSON object)" },
		{ { fmt("%s/newer.json", bad) },
		  "schema \"leanprofiler-summary/2\" is newer than this leanprofiler reads" },
		{ { fmt("%s/hostile.json", bad) }, "unknown schema \"leanprofiler-summary/\\x1b[2J" },
		{ { empty }, fmt("%s: no recording here (no leanprofiler-summary.json)", empty) },
		{ { fmt("%s/leanprofiler-trace.json", trace_only) },
		  "no leanprofiler-summary.json next to this trace" },
		{ { fmt("%s/none", tmpdir) }, "No such file or directory" },
		{ { "--tree", fmt("%s/old.json", bad) }, "has no call paths" },
		{ { "--sort", "size", bad }, "invalid --sort 'size'" },
		{ { "--folded", "--top", "3", bad }, "--folded prints every path" },
		{ { "--min-total", "5", bad }, "invalid --min-total '5'" },
	};
	struct run r;

	(void)state;
	assert_non_null(good);
	assert_int_equal(mkdir(bad, 0755), 0);
	assert_int_equal(mkdir(empty, 0755), 0);
	assert_int_equal(mkdir(trace_only, 0755), 0);
	write_file(fmt("%s/leanprofiler-trace.json", trace_only), "{\"traceEvents\": []}");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		write_file(fmt("%s/%s", bad, files[i][0]),
			   files[i][1] ? files[i][1] : strndup(good, strlen(good) / 2));
	write_file(fmt("%s/newer.json", bad),
		   replace(good, "leanprofiler-summary/1", "leanprofiler-summary/2"));
	write_file(fmt("%s/hostile.json", bad),
		   replace(good, "leanprofiler-summary/1", "leanprofiler-summary/\\u001b[2J"));
	{
		/* A summary of before the call paths: everything but --tree and --folded works. */
		json_object *o = json_tokener_parse(good);

		json_object_object_del(o, "paths");
		write_file(fmt("%s/old.json", bad), json_object_to_json_string(o));
		json_object_put(o);
		r = report((char *[]){ fmt("%s/old.json", bad), NULL });
		assert_int_equal(r.status, 0);
		run_free(&r);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = report(cases[i].args);
		expect_refused(&r, cases[i].says);
		run_free(&r);
	}
	/* diff: either side bad. */
	r = diff((char *[]){ fmt("%s/nested", tmpdir), fmt("%s/truncated.json", bad), NULL });
	expect_refused(&r, "truncated");
	run_free(&r);
	r = diff((char *[]){ empty, fmt("%s/nested", tmpdir), NULL });
	expect_refused(&r, "no recording here");
	run_free(&r);
	r = diff((char *[]){ "--threshold", "-3", empty, empty, NULL });
	expect_refused(&r, "invalid --threshold '-3'");
	run_free(&r);
	/* Unreadable: nobody, a file only root may read. */
	{
		char *secret = fmt("%s/secret.json", bad);
		char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
				 "--clear-groups", lp(), "report", secret, NULL };

		write_file(secret, good);
		assert_int_equal(chmod(secret, 0600), 0);
		assert_int_equal(chmod(tmpdir, 0755), 0);
		assert_int_equal(run(&r, argv), 0);
		expect_refused(&r, fmt("cannot read %s: Permission denied", secret));
		run_free(&r);
	}
	free(good);
}

/* leanprofiler CMD... with at most kib KiB of address space (prlimit --as): its status. */
static int run_in(struct run *r, char *const cmd[], size_t kib)
{
	char *argv[12] = { "/usr/bin/prlimit", fmt("--as=%zu", kib << 10), lp() };
	int n = 3;

	for (int i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_true(n < 12);
	assert_int_equal(run(r, argv), 0);
	return r->status;
}

/* The dynamic loader failed before main() ran (its own message, exit 127). */
static bool loader_failed(const struct run *r)
{
	return r->status == 127 && !says_error(r->err);
}

/* ... or, far lower, exec itself (killed by SIGSEGV before the loader ran). */
static bool not_started(const struct run *r)
{
	return loader_failed(r) || (r->status == 128 + SIGSEGV && !*r->out && !*r->err);
}

/*
 * Short of memory: an address-space limit rising 8 KiB at a time, from where
 * the program starts at all up to where it succeeds, makes each allocation
 * fail in turn (the command line's, the summary's, the trace's, the page's;
 * diff reads summaries as report does).
 * Every failure exits 125 with a line that says what failed: never silently,
 * never by a crash.
 */
static void test_short_of_memory(void **state)
{
	char *dir = fmt("%s/nested", tmpdir), *page = fmt("%s/short.html", tmpdir);
	char *const cmds[][6] = {
		{ "report", "--tree", dir, NULL },
		{ "report", "--html", page, dir, NULL },
	};
	const size_t most = 256 << 10; /* KiB: far more than any of them needs */
	struct run r;

	(void)state;
	if (access("/usr/bin/prlimit", X_OK)) {
		print_message("SKIPPED: no /usr/bin/prlimit\n");
		skip();
	}
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		size_t kib = 1024, failed = 0;

		/* 64 KiB at a time up to where main() runs, then back one step. */
		while (kib < most && (run_in(&r, cmds[c], kib), not_started(&r))) {
			run_free(&r);
			kib += 64;
		}
		run_free(&r);
		kib = kib > 1024 + 64 ? kib - 64 : 1024;
		for (; kib < most; kib += 8) {
			run_in(&r, cmds[c], kib);
			if (r.status == 0) {
				run_free(&r);
				break;
			}
			if (r.status == 125 && says_error(r.err))
				failed++;
			else if (!loader_failed(&r))
				fail_msg("%s %s with %zu KiB of address space: exit %d, stderr:\n%s",
					 cmds[c][0], cmds[c][1], kib, r.status, r.err);
			run_free(&r);
		}
		if (kib >= most || !failed)
			fail_msg("%s %s: %zu failures up to %zu KiB, then %s", cmds[c][0], cmds[c][1],
				 failed, kib, kib >= most ? "no success" : "success");
	}
}

/* Text of the file reaches the terminal only through the sanitizers, in every view. */
static void test_untrusted_text(void **state)
{
	char *dir = fmt("%s/evil", tmpdir);
	char *good = slurp(fmt("%s/nested/leanprofiler-summary.json", tmpdir), NULL);
	char *evil = good;
	static const char *const views[] = { "", "--tree", "--folded", "--threads" };
	struct run r;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	/* Every occurrence: the row, the path node. */
	while (strstr(evil, "\"model.forward\""))
		evil = replace(evil, "\"model.forward\"", "\"model\\u001b]0;owned\\u0007;x\\u202e\"");
	while (strstr(evil, "\"nested\""))
		evil = replace(evil, "\"nested\"", "\"thr\\u001b[2Jead\"");
	write_file(fmt("%s/leanprofiler-summary.json", dir), evil);
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		r = report(*views[i] ? (char *[]){ (char *)views[i], dir, NULL }
				     : (char *[]){ dir, NULL });
		assert_int_equal(r.status, 0);
		assert_null(strchr(r.out, '\x1b'));
		assert_null(strchr(r.out, '\x07'));
		assert_null(strstr(r.out, "\xe2\x80\xae"));
		if (!strcmp(views[i], "--folded"))
			assert_non_null(strstr(r.out, ";model\\x1b]0\\x3bowned\\x07\\x3bx\\u202e "));
		else if (!strcmp(views[i], "--threads"))
			assert_non_null(strstr(r.out, "thr\\x1b[2Jead"));
		else
			assert_non_null(strstr(r.out, "model\\x1b]0;owned\\x07;x\\u202e"));
		run_free(&r);
	}
	r = diff((char *[]){ fmt("%s/nested", tmpdir), dir, NULL });
	assert_int_equal(r.status, 0);
	assert_null(strchr(r.out, '\x1b'));
	assert_non_null(strstr(r.out, "  added\n"));
	run_free(&r);
	free(good);
}

/* leanprofiler ARGS... with COLUMNS=80, or (columns NULL) without COLUMNS. */
static struct run lp_env(const char *columns, char *const args[])
{
	char *argv[16] = { "/usr/bin/env" };
	int n = 1;
	struct run r;

	if (columns) {
		argv[n++] = fmt("COLUMNS=%s", columns);
	} else {
		argv[n++] = "-u";
		argv[n++] = "COLUMNS";
	}
	argv[n++] = lp();
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	assert_true(n < 16);
	assert_int_equal(run(&r, argv), 0);
	return r;
}

/*
 * A help text nothing broke: every line fits in 79 columns; no line at column
 * 0 continues an indented line (an option's text, a mode, an example) but the
 * usage lines' successor; every example is a command line of its own or a
 * backslash continuation of one; the text ends with the exit statuses.
 */
static void check_help(const char *what, const char *text)
{
	const char *prev = NULL, *tail;
	bool examples = false, continued = false;
	char *copy = strdup(text), *save = NULL;

	assert_non_null(strstr(text, "Usage: "));
	for (char *l = strtok_r(copy, "\n", &save); l; prev = l, l = strtok_r(NULL, "\n", &save)) {
		if (strlen(l) > 79)
			fail_msg("%s: a line of %zu columns: %s", what, strlen(l), l);
		if (prev && prev[0] == ' ' && l[0] != ' ' && strncmp(prev, "  or:  ", 7) &&
		    prev + strlen(prev) + 1 == l) /* not after a blank line */
			fail_msg("%s: '%s' continues '%s' at column 0", what, l, prev);
		if (!strcmp(l, "Examples:")) {
			examples = true;
			continue;
		}
		if (examples && prev + strlen(prev) + 1 != l)
			examples = false; /* a blank line ends them */
		if (examples) {
			bool command = !strncmp(l, "  leanprofiler ", 15) ||
				       !strncmp(l, "  sudo leanprofiler ", 20);

			if (!(continued ? !strncmp(l, "      ", 6) : command))
				fail_msg("%s: a broken example line: '%s'", what, l);
			continued = l[strlen(l) - 1] == '\\';
		}
	}
	free(copy);
	tail = strstr(text, "\nExit status: ");
	if (!tail || strchr(tail + 1, '\n') == NULL || strstr(tail + 1, "\n\n") ||
	    !strstr(tail, "125 for a bad command"))
		fail_msg("%s: does not end with the exit statuses", what);
}

/* Every command's help, however asked for, at 80 columns and without COLUMNS. */
static void test_help_texts(void **state)
{
	static const char *const commands[] = { "record", "report", "diff", "list", "export" };
	static const char *const columns[] = { "80", NULL };

	(void)state;
	for (size_t c = 0; c < 2; c++) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
			char *cmd = (char *)commands[i];
			char *ways[][4] = { { cmd, "--help", NULL }, { cmd, "-h", NULL },
					    { cmd, "-?", NULL }, { "help", cmd, NULL } };
			char *first = NULL;

			for (size_t w = 0; w < 4; w++) {
				struct run r = lp_env(columns[c], ways[w]);
				char *what = fmt("%s %s (COLUMNS=%s)", ways[w][0], ways[w][1],
						 columns[c] ? columns[c] : "unset");

				if (r.status != 0 || strcmp(r.err, ""))
					fail_msg("%s: exit %d, stderr %s", what, r.status, r.err);
				check_help(what, r.out);
				/* The man pages are where the help sends the user, not README. */
				if (strstr(r.out, "README") ||
				    !strstr(r.out, fmt("leanprofiler-%s(1)", cmd)))
					fail_msg("%s: README, or no leanprofiler-%s(1)", what, cmd);
				if (!first)
					first = strdup(r.out);
				assert_string_equal(r.out, first);
				run_free(&r);
			}
			free(first);
		}
		/* leanprofiler's own: -h, --help, -?, help, all the same. */
		{
			char *ways[][3] = { { "--help", NULL }, { "-h", NULL }, { "-?", NULL },
					    { "help", NULL } };
			char *first = NULL;

			for (size_t w = 0; w < 4; w++) {
				struct run r = lp_env(columns[c], ways[w]);

				assert_int_equal(r.status, 0);
				assert_non_null(strstr(r.out, "Usage: leanprofiler COMMAND"));
				for (const char *l = r.out; *l; l = strchr(l, '\n') + 1)
					assert_true(strchr(l, '\n') - l <= 79);
				if (!first)
					first = strdup(r.out);
				assert_string_equal(r.out, first);
				run_free(&r);
			}
			free(first);
		}
	}
}

/* A bad command line, in every command: one line on stderr, nothing on stdout, exit 125. */
static void test_usage_errors(void **state)
{
	static const struct {
		char *args[6];
		const char *says;
	} cases[] = {
		{ { "record", "--no-such-option", NULL },
		  "leanprofiler record: unknown option '--no-such-option'; see 'leanprofiler "
		  "record --help'\n" },
		{ { "record", "-x", NULL }, "leanprofiler record: unknown option '-x'; see" },
		{ { "record", "--output", NULL }, "leanprofiler record: --output needs a value (DIR)" },
		{ { "record", "-vo", NULL }, "leanprofiler record: -o needs a value (DIR)" },
		{ { "record", "--verbose=1", "--", "/bin/true", NULL },
		  "leanprofiler record: --verbose takes no value" },
		{ { "record", "--s", "x", NULL },
		  "leanprofiler record: ambiguous option '--s' (--summary-only, --span)" },
		{ { "report", "--bogus", NULL }, "leanprofiler report: unknown option '--bogus'" },
		{ { "report", "--svg", NULL }, "leanprofiler report: --svg needs a value (DIR)" },
		{ { "report", "--top", "0", NULL }, "leanprofiler report: invalid --top '0'" },
		{ { "diff", "--bogus", NULL }, "leanprofiler diff: unknown option '--bogus'" },
		{ { "diff", "a", NULL }, "leanprofiler diff: two recordings: BASE and NEW; see "
					 "'leanprofiler diff --help'\n" },
		{ { "list", "--bogus", NULL }, "leanprofiler list: unknown option '--bogus'" },
		{ { "list", NULL }, "leanprofiler list: give one of BINARY, -p PID or --presets" },
		{ { "record", "--export", "http://u:p@127.0.0.1:1/", "--", "/bin/true", NULL },
		  "leanprofiler record: invalid --export: the URL holds credentials" },
		{ { "record", "--export", "ftp://127.0.0.1/", "--", "/bin/true", NULL },
		  "leanprofiler record: invalid --export: 'ftp://127.0.0.1/': the URL's scheme" },
		{ { "export", "--bogus", NULL }, "leanprofiler export: unknown option '--bogus'" },
		{ { "export", "build", NULL }, "leanprofiler export: no --clickhouse URL; see "
					       "'leanprofiler export --help'\n" },
		{ { "export", "--clickhouse", "http://127.0.0.1:1/", NULL },
		  "leanprofiler export: no recording to export (PATH...)" },
		{ { "export", "--database", "1x", NULL }, "leanprofiler export: invalid --database" },
		{ { "bogus", NULL }, "leanprofiler: unknown command 'bogus'" },
		{ { "help", "bogus", NULL }, "leanprofiler: help takes one command" },
		{ { NULL }, "Usage: leanprofiler COMMAND" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = lp_env("80", (char **)cases[i].args);
		char *nl = strchr(r.err, '\n');

		if (r.status != 125 || !strstr(r.err, cases[i].says) || strcmp(r.out, "") ||
		    (i + 1 < sizeof(cases) / sizeof(cases[0]) && (!nl || nl[1])))
			fail_msg("case %zu: exit %d, stdout '%s', stderr '%s'", i, r.status, r.out,
				 r.err);
		run_free(&r);
	}
}


/* A recording of examples/nested into tmpdir/name, for a test of its own. */
static char *nested_recording(const char *name)
{
	char *dir = fmt("%s/%s", tmpdir, name);
	struct run r = record(dir, NULL, (char *[]){ fmt("%s/examples/nested", build), NULL });

	if (r.status != 0)
		fail_msg("record: exit %d\n%s", r.status, r.err);
	run_free(&r);
	return dir;
}

/*
 * Issue: a crafted 25 MB summary of small values cost 36x its size to read
 * (json-c holds every value as an object: 911 MB of RSS here). Its values are
 * counted before parsing: over LP_SUMMARY_VALUES_MAX (8 Mi) it is refused, one
 * line, exit 125, at the cost of its text; report, its pictures, and diff.
 * A real one (the table's own recording) is read, and the limit is the
 * environment's when LEANPROFILER_SUMMARY_MAX_VALUES says so.
 */
#define CRAFTED_VALUES 12500000 /* "0," each: 25 MB */
#define CRAFTED_RSS_MAX_KIB (100 * 1024) /* the 25 MB text and the program: 33 MB measured */

static void test_summary_cost_bounded(void **state)
{
	char *dir = fmt("%s/crafted", tmpdir), *real = nested_recording("cost-real");
	char *path = fmt("%s/leanprofiler-summary.json", dir);
	char *says = "more than 8388608 JSON values (LP_SUMMARY_VALUES_MAX): refused";
	char *lpb = lp();
	char *const cmds[][6] = {
		{ lpb, "report", dir, NULL },
		{ lpb, "report", "--html", fmt("%s/page.html", tmpdir), dir, NULL },
		{ lpb, "diff", real, dir, NULL },
	};
	FILE *f;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\":\"leanprofiler-summary/1\",\"rows\":[0", f);
	for (int i = 1; i < CRAFTED_VALUES; i++)
		fputs(",0", f);
	fputs("]}\n", f);
	assert_int_equal(fclose(f), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct rusage ru;
		struct run r;

		assert_int_equal(run_usage(&r, cmds[i], &ru), 0);
		print_message("%s: exit %d, peak RSS %ld KiB: %s", cmds[i][1], r.status, ru.ru_maxrss,
			      r.err);
		if (r.status != 125 || !strstr(r.err, says) || ru.ru_maxrss > CRAFTED_RSS_MAX_KIB)
			fail_msg("%s %s: exit %d, peak RSS %ld KiB (at most %d), stderr: %s",
				 cmds[i][1], cmds[i][2], r.status, ru.ru_maxrss,
				 CRAFTED_RSS_MAX_KIB, r.err);
		assert_int_equal(strchr(r.err, '\n') - r.err + 1, (long)r.err_len); /* one line */
		run_free(&r);
	}
	assert_int_equal(access(fmt("%s/page.html", tmpdir), F_OK), -1);
	/* A real summary is read; with the limit set below its values, refused the same way. */
	{
		struct run r = report((char *[]){ real, NULL });

		assert_int_equal(r.status, 0);
		run_free(&r);
		setenv("LEANPROFILER_SUMMARY_MAX_VALUES", "50", 1);
		r = report((char *[]){ real, NULL });
		unsetenv("LEANPROFILER_SUMMARY_MAX_VALUES");
		expect_refused(&r, "more than 50 JSON values (LP_SUMMARY_VALUES_MAX)");
		run_free(&r);
	}
}

/*
 * Issue (the same as report --html over the summary): a view or a comparison
 * appended (>>) to a summary it reads is refused, and the summary is untouched.
 * (With > the shell has emptied it already: reading it says so.)
 */
static void test_stdout_is_input(void **state)
{
	char *dir = nested_recording("appended"), *sum = fmt("%s/leanprofiler-summary.json", dir);
	char *before = slurp(sum, NULL);
	const char *cmds[] = { "report", "report --folded", "diff . ." };

	(void)state;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *argv[] = { "/bin/sh", "-c",
				 fmt("cd '%s' && exec '%s' %s >> leanprofiler-summary.json", dir,
				     realpath(lp(), NULL), cmds[i]), NULL };
		struct run r;

		assert_int_equal(run(&r, argv), 0);
		expect_refused(&r, fmt("cannot write the %s to standard output: it is "
				       "./leanprofiler-summary.json, which this command reads; "
				       "nothing written", i < 2 ? "report" : "comparison"));
		run_free(&r);
		assert_string_equal(slurp(sum, NULL), before);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_reprints_the_table),
		cmocka_unit_test(test_report_as_nobody),
		cmocka_unit_test(test_report_views),
		cmocka_unit_test(test_diff_no_regression),
		cmocka_unit_test(test_diff_regression),
		cmocka_unit_test(test_diff_added_removed),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_short_of_memory),
		cmocka_unit_test(test_untrusted_text),
		cmocka_unit_test(test_help_texts),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_summary_cost_bounded),
		cmocka_unit_test(test_stdout_is_input),
	};

	if (argc > 1)
		build = argv[1];
	if (getenv("LP_TEST_FILTER")) /* e.g. LP_TEST_FILTER=test_stdout_is_input */
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	if (!itest_as_root("test_report"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
