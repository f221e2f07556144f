// SPDX-License-Identifier: MIT
/*
 * Presets and --span on real programs installed from Debian: CPython 3.11
 * (imports, garbage collections) and libstdc++ (exceptions in flight, in
 * tests/targets/exceptions). Counts, nesting, tracks, the independent consumer, and the
 * errors for unknown presets, bad specs and missing probes; a late spec
 * (--preset jvm) whose probes never appear is a warning at the end, and what
 * else there was is recorded; with kernel.bpf_stats_enabled, the summary's BPF
 * time counts the span-pair probes' program (restored afterwards). Needs root.
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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-itest-presets-XXXXXX";

#include "itest.h"

#define PYTHON "/usr/bin/python3.11"
#define GC_CALLS 4
#define TRACK_BIT 0x40000000 /* user/core/pairs.h LP_TRACK_BIT */
#define REAL_TID(t) ((t) & 0x3fffff) /* LP_TRACK_REAL */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static json_object *row(json_object *sum, const char *name, const char *meta)
{
	json_object *rows = get(sum, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		if (!strcmp(json_object_get_string(get(r, "name")), name) &&
		    !strcmp(json_object_get_string(get(r, "meta_text")), meta))
			return r;
	}
	return NULL;
}

static int64_t calls(json_object *sum, const char *name, const char *meta)
{
	json_object *r = row(sum, name, meta);

	if (!r)
		fail_msg("no row %s [%s]", name, meta);
	return json_object_get_int64(get(r, "calls"));
}

/* The complete event of the trace with this name and args key=value. */
static json_object *span(json_object *trace, const char *name, const char *key, const char *val)
{
	json_object *evs = get(trace, "traceEvents");

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i), *args, *v;

		if (strcmp(json_object_get_string(get(e, "ph")), "X") ||
		    strcmp(json_object_get_string(get(e, "name")), name))
			continue;
		if (json_object_object_get_ex(e, "args", &args) &&
		    json_object_object_get_ex(args, key, &v) && !strcmp(json_object_get_string(v), val))
			return e;
	}
	fail_msg("no span %s [%s=%s]", name, key, val);
	return NULL;
}

static void test_cpython(void **state)
{
	char *script = fmt("%s/imports.py", tmpdir), *out = fmt("%s/cpython", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset", "cpython",
			 "--", PYTHON, script, NULL };
	json_object *sum, *trace, *json_span, *dec_span;
	double js, je, ds, de;
	struct run r;

	(void)state;
	/*
	 * Collections between the imports of lp_begin and lp_end are the
	 * script's own: gc.disable() stops automatic ones (the interpreter may
	 * run some before it, and at exit).
	 */
	write_file(fmt("%s/lp_begin.py", tmpdir), "");
	write_file(fmt("%s/lp_end.py", tmpdir), "");
	write_file(script, fmt("import gc\ngc.disable()\nimport json, csv, decimal\nimport lp_begin\n"
			       "for i in range(%d):\n    gc.collect(1)\nimport lp_end\n",
			       GC_CALLS));
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_true(calls(sum, "gc", "generation=1") >= GC_CALLS);
	assert_int_equal(calls(sum, "import", "module=json"), 1);
	assert_int_equal(calls(sum, "import", "module=json.decoder"), 1);
	assert_int_equal(calls(sum, "import", "module=csv"), 1);
	assert_int_equal(calls(sum, "import", "module=decimal"), 1);
	assert_int_equal(json_object_get_int64(get(sum, "unterminated_spans")), 0);
	assert_int_equal(json_object_get_int64(get(sum, "unmatched_exits")), 0);
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);
	/* Every import entered was left: as many exits as enters. */
	assert_int_equal(json_object_get_int64(get(get(sum, "events_received"), "enter")),
			 json_object_get_int64(get(get(sum, "events_received"), "exit")));
	/* json imports json.decoder while it loads: nested inside it, on the same thread. */
	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	json_span = span(trace, "import", "module", "json");
	dec_span = span(trace, "import", "module", "json.decoder");
	assert_int_equal(json_object_get_int64(get(json_span, "tid")),
			 json_object_get_int64(get(dec_span, "tid")));
	js = json_object_get_double(get(json_span, "ts"));
	je = js + json_object_get_double(get(json_span, "dur"));
	ds = json_object_get_double(get(dec_span, "ts"));
	de = ds + json_object_get_double(get(dec_span, "dur"));
	assert_true(js < ds && de < je);
	/* Exactly the script's collections between lp_begin and lp_end, none nested in imports. */
	{
		json_object *b = span(trace, "import", "module", "lp_begin");
		json_object *e = span(trace, "import", "module", "lp_end");
		json_object *evs = get(trace, "traceEvents");
		double from = json_object_get_double(get(b, "ts")) +
			      json_object_get_double(get(b, "dur"));
		double to = json_object_get_double(get(e, "ts"));
		int n = 0;

		for (size_t i = 0; i < json_object_array_length(evs); i++) {
			json_object *ev = json_object_array_get_idx(evs, i);
			double ts;

			if (strcmp(json_object_get_string(get(ev, "name")), "gc"))
				continue;
			ts = json_object_get_double(get(ev, "ts"));
			if (ts > from && ts < to) {
				assert_string_equal(
					json_object_get_string(get(get(ev, "args"), "generation")), "1");
				n++;
			}
		}
		assert_int_equal(n, GC_CALLS);
	}
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(sum);
	json_object_put(trace);
	run_free(&r);
}

/* The spans of a trace, X events, in a new array (references taken). */
static json_object *spans_of(json_object *trace)
{
	json_object *evs = get(trace, "traceEvents"), *out = json_object_new_array();

	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (!strcmp(json_object_get_string(get(e, "ph")), "X"))
			json_object_array_add(out, json_object_get(e));
	}
	return out;
}

static const char *span_arg(json_object *e, const char *key)
{
	json_object *args, *v;

	if (!json_object_object_get_ex(e, "args", &args) ||
	    !json_object_object_get_ex(args, key, &v))
		return "";
	return json_object_get_string(v);
}

static double span_end(json_object *e)
{
	return json_object_get_double(get(e, "ts")) + json_object_get_double(get(e, "dur"));
}

#define EXC_ROUNDS 20
#define EXC "exception in flight"

/*
 * tests/targets/exceptions runs EXC_ROUNDS rounds of every way C++ code
 * raises an exception, each with a type of its own, and counts what it ran.
 * One span per throw expression and per `throw;`, from it to the catch that
 * takes it, whatever the handler catches it as (a base at another address, a
 * pointer); std::rethrow_exception and future::get() fire no probe where they
 * start: no span, their catches are the keyed exits without an open span.
 */
static void test_libstdcxx(void **state)
{
	char *out = fmt("%s/libstdcxx", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset",
			 "libstdcxx", "--", fmt("%s/tests/targets/exceptions", build),
			 fmt("%d", EXC_ROUNDS), NULL };
	static const struct {
		const char *type;
		int per_round;
	} kinds[] = {
		{ "5Plain", 1 }, { "5Again", 2 }, /* thrown, then `throw;` */
		{ "5Multi", 1 }, { "P3Ptr", 1 },  { "5Inner", 1 },
		{ "St17_Nested_exceptionI5OuterE", 1 }, /* std::throw_with_nested(Outer()) */
		{ "6Stored", 1 }, /* its throw; the std::rethrow_exception has none */
		{ "8Promised", 1 }, /* on the worker thread */
		{ "7Unwound", 2 }, /* the second inside the first */
	};
	long thrown, rethrown, from_ptr, caught;
	json_object *sum, *trace, *spans, *evs;
	int64_t nested = 0, expected = 0;
	bool second_track = false;
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	/* The program's own account comes first, then the table. */
	if (sscanf(r.out, "thrown=%ld rethrown=%ld from_exception_ptr=%ld caught=%ld", &thrown,
		   &rethrown, &from_ptr, &caught) != 4)
		fail_msg("no account from the program: %s", r.out);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		assert_int_equal(calls(sum, EXC, fmt("type=%s", kinds[i].type)),
				 kinds[i].per_round * EXC_ROUNDS);
		expected += kinds[i].per_round * EXC_ROUNDS;
	}
	/* Nothing else, and every span closed by its own catch. */
	assert_int_equal(json_object_array_length(get(sum, "rows")), ARRAY_SIZE(kinds));
	assert_int_equal(expected, thrown + rethrown);
	assert_int_equal(json_object_get_int64(get(sum, "unterminated_spans")), 0);
	/* Each std::rethrow_exception's catch (rethrow_nested, the Stored one, future::get). */
	assert_int_equal(from_ptr, 3 * EXC_ROUNDS);
	assert_int_equal(get_i(get(sum, "span_pairs"), "unmatched_keyed_exits"), from_ptr);
	assert_int_equal(caught, thrown + rethrown + from_ptr);

	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	spans = spans_of(trace);
	assert_int_equal(json_object_array_length(spans), expected);
	for (size_t i = 0; i < json_object_array_length(spans); i++) {
		json_object *e = json_object_array_get_idx(spans, i);
		int64_t tid = get_i(e, "tid");

		/* Keyed spans go on a track of their own, next to the thread. */
		assert_true(tid & TRACK_BIT);
		if (!strcmp(span_arg(e, "type"), "8Promised"))
			assert_int_not_equal(REAL_TID(tid), get_i(e, "pid"));
		else
			assert_int_equal(REAL_TID(tid), get_i(e, "pid"));
	}
	evs = get(trace, "traceEvents");
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (!strcmp(json_object_get_string(get(e, "name")), "thread_name") &&
		    strstr(json_object_get_string(get(get(e, "args"), "name")), " keyed spans 2"))
			second_track = true;
	}
	/*
	 * An Unwound thrown by a destructor while another unwinds: the two fly at
	 * once, on two tracks, the second inside the first.
	 */
	for (size_t i = 0; i < json_object_array_length(spans); i++) {
		json_object *a = json_object_array_get_idx(spans, i);

		if (strcmp(span_arg(a, "type"), "7Unwound"))
			continue;
		for (size_t j = 0; j < json_object_array_length(spans); j++) {
			json_object *b = json_object_array_get_idx(spans, j);

			if (j == i || strcmp(span_arg(b, "type"), "7Unwound"))
				continue;
			if (json_object_get_double(get(a, "ts")) <
				    json_object_get_double(get(b, "ts")) &&
			    span_end(b) < span_end(a)) {
				assert_int_not_equal(get_i(a, "tid"), get_i(b, "tid"));
				nested++;
			}
		}
	}
	assert_int_equal(nested, EXC_ROUNDS);
	assert_true(second_track);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(spans);
	json_object_put(sum);
	json_object_put(trace);
	run_free(&r);
}

/*
 * An exception nothing catches: its span ends where the unwinder found no
 * handler (libstdc++ fires catch there, with no object), so it is not left
 * open until the abort. libstdc++'s default terminate handler then rethrows
 * it to print its what(): a second span, after the first; a terminate
 * handler that does not rethrow leaves one.
 */
static void test_libstdcxx_terminate(void **state)
{
	static const char *const modes[] = { "terminate", "quiet" };

	(void)state;
	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		char *out = fmt("%s/libstdcxx-%s", tmpdir, modes[m]);
		char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset",
				 "libstdcxx", "--", fmt("%s/tests/targets/exceptions", build),
				 (char *)modes[m], NULL };
		json_object *sum, *trace, *spans;
		struct run r;
		size_t n = m == 0 ? 2 : 1;

		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 128 + SIGABRT);
		assert_int_equal(!!strstr(r.err, "terminate called after throwing an instance of "
						 "'Fatal'\n  what():  fatal\n"),
				 m == 0);
		sum = load_json(fmt("%s/leanprofiler-summary.json", out));
		assert_int_equal(calls(sum, EXC, "type=5Fatal"), n);
		assert_int_equal(json_object_array_length(get(sum, "rows")), 1);
		assert_int_equal(json_object_get_int64(get(sum, "unterminated_spans")), 0);
		assert_int_equal(get_i(get(sum, "span_pairs"), "unmatched_keyed_exits"), 0);
		trace = load_json(fmt("%s/leanprofiler-trace.json", out));
		spans = spans_of(trace);
		assert_int_equal(json_object_array_length(spans), n);
		if (n == 2) {
			json_object *a = json_object_array_get_idx(spans, 0);
			json_object *b = json_object_array_get_idx(spans, 1);

			if (json_object_get_double(get(b, "ts")) < json_object_get_double(get(a, "ts"))) {
				json_object *t = a;

				a = b;
				b = t;
			}
			assert_true(span_end(a) <= json_object_get_double(get(b, "ts")));
		}
		json_object_put(spans);
		json_object_put(sum);
		json_object_put(trace);
		run_free(&r);
	}
}

/* Free-form --span: generation as a name, unsigned and hex formats. */
static void test_span_option(void **state)
{
	char *out = fmt("%s/span", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--span",
			 "python:gc__start,gc__done,name=collect gen {arg0},meta=g={arg0:x}",
			 "--", PYTHON, "-c", "import gc\ngc.disable()\ngc.collect(0)\ngc.collect(0)",
			 NULL };
	json_object *sum;
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	/* Two explicit ones, and those that ran before gc.disable(). */
	assert_true(calls(sum, "collect gen 0", "g=0x0") >= 2);
	json_object_put(sum);
	run_free(&r);
}

/* How many times needle occurs in hay. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* --preset jvm's specs are late=yes: a program that never loads libjvm.so is no error. */
static const char *const late_warning =
	"leanprofiler: warning: no usable entry probe of spec 'hotspot:gc__begin,gc__end,name=gc,"
	"meta=full={arg0},late=yes' of preset jvm appeared while recording: nothing of it was "
	"recorded ('leanprofiler list -p PID' shows the probes a process has)\n";

/* Both of the preset's specs are warned about, once each, and nothing else is said. */
static void expect_late_warnings(const char *err)
{
	if (count(err, "appeared while recording") != 2 || !strstr(err, late_warning) ||
	    count(err, "\n") != 2)
		fail_msg("expected two late-spec warnings, got: %s", err);
}

static void test_late_never_appears(void **state)
{
	char *lp = fmt("%s/leanprofiler", build);
	char *marked_out = fmt("%s/late-marked", tmpdir), *bare_out = fmt("%s/late-bare", tmpdir);
	/* Our own markers, and an exit status of its own. */
	char *marked[] = { lp, "record", "-o", marked_out, "--preset", "jvm", "--",
			   fmt("%s/tests/targets/exit_status", build), "3", NULL };
	/* No probes at all: the late specs are all there is to wait for. */
	char *bare[] = { lp, "record", "-o", bare_out, "--preset", "jvm", "--", "/bin/true",
			 NULL };
	json_object *sum, *r;
	struct run run_marked, run_bare;

	(void)state;
	assert_int_equal(run(&run_marked, marked), 0);
	if (run_marked.status != 3)
		fail_msg("exit %d, not the command's 3: %s", run_marked.status, run_marked.err);
	expect_late_warnings(run_marked.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", marked_out));
	assert_int_equal(json_object_get_int(get(sum, "exit_status")), 3);
	assert_int_equal(calls(sum, "before.exit", ""), 1);
	r = row(sum, "never.closed", "state=open");
	assert_non_null(r);
	assert_int_equal(json_object_get_int64(get(r, "unterminated")), 1);
	assert_int_equal(json_object_array_length(get(sum, "rows")), 2);
	json_object_put(sum);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", marked_out));
	run_free(&run_marked);

	assert_int_equal(run(&run_bare, bare), 0);
	if (run_bare.status != 0)
		fail_msg("exit %d: %s", run_bare.status, run_bare.err);
	expect_late_warnings(run_bare.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", bare_out));
	assert_int_equal(json_object_array_length(get(sum, "rows")), 0);
	json_object_put(sum);
	run_free(&run_bare);
}

#define BPF_STATS "/proc/sys/kernel/bpf_stats_enabled"
static char bpf_stats_was[16];

/* kernel.bpf_stats_enabled on; bpf_stats_restore() puts back what it was. */
static int bpf_stats_on(void **state)
{
	char *was = slurp(BPF_STATS, NULL);

	(void)state;
	if (!was)
		return -1;
	snprintf(bpf_stats_was, sizeof(bpf_stats_was), "%s", was);
	free(was);
	write_file(BPF_STATS, "1\n");
	return 0;
}

static int bpf_stats_restore(void **state)
{
	(void)state;
	if (bpf_stats_was[0])
		write_file(BPF_STATS, bpf_stats_was);
	return 0;
}

/*
 * CPython has no markers of ours: every BPF program run of the recording is
 * a span-pair probe's, at least an entry and an exit per collection.
 */
static void test_bpf_stats(void **state)
{
	char *out = fmt("%s/stats", tmpdir);
	/* -v: the table's Profiler line says it too. */
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-v", "-o", out, "--span",
			 "python:gc__start,gc__done,name=collect", "--", PYTHON, "-c",
			 "import gc\ngc.collect(0)\ngc.collect(0)", NULL };
	json_object *sum, *prof;
	struct run r;
	int64_t n;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	n = calls(sum, "collect", "");
	assert_true(n >= 2);
	prof = get(sum, "profiler");
	if (!json_object_object_get_ex(prof, "bpf_program_runs", NULL))
		fail_msg("no bpf_program_runs: %s", json_object_to_json_string(prof));
	assert_true(json_object_get_int64(get(prof, "bpf_program_runs")) >= 2 * n);
	assert_true(json_object_get_int64(get(prof, "bpf_program_run_time_ns")) > 0);
	assert_non_null(strstr(r.out, " ns per event\n"));
	json_object_put(sum);
	run_free(&r);
}

static void expect_error(char **argv, const char *msg)
{
	struct run r;

	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 125);
	if (!strstr(r.err, msg))
		fail_msg("expected \"%s\" in: %s", msg, r.err);
	/* One line. */
	assert_non_null(strchr(r.err, '\n'));
	assert_int_equal(strchr(r.err, '\n')[1], '\0');
	run_free(&r);
}

static void test_errors(void **state)
{
	char *lp = fmt("%s/leanprofiler", build), *out = fmt("%s/err", tmpdir);
	char *unknown[] = { lp, "record", "-o", out, "--preset", "ruby", "--", PYTHON, "-c", "", NULL };
	char *bad[] = { lp, "record", "-o", out, "--span", "python:gc__start", "--", PYTHON, NULL };
	char *missing[] = { lp, "record", "-o", out, "--span", "python:nope,gc__done", "--", PYTHON,
			    "-c", "", NULL };
	char *wrong_bin[] = { lp, "record", "-o", out, "--preset", "libstdcxx", "--", PYTHON, "-c",
			      "", NULL };

	(void)state;
	expect_error(unknown, "leanprofiler record: unknown preset 'ruby' (presets: postgresql, jvm, "
			      "libstdcxx, cpython); see 'leanprofiler record --help'");
	expect_error(bad, "leanprofiler record: invalid --span 'python:gc__start': no exit probe: "
			  "expected PROVIDER:ENTRY,PROVIDER:EXIT,...");
	expect_error(missing, "leanprofiler: no usable entry probe python:nope in " PYTHON ": "
			      "'leanprofiler list' shows the probes there (spec "
			      "'python:nope,gc__done')");
	expect_error(wrong_bin, "leanprofiler: no usable entry probe libstdcxx:throw (or its "
				"alternatives) in " PYTHON);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpython),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_libstdcxx_terminate),
		cmocka_unit_test(test_span_option),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_late_never_appears),
		cmocka_unit_test_setup_teardown(test_bpf_stats, bpf_stats_on, bpf_stats_restore),
	};

	if (argc > 1)
		build = argv[1];
	if (getuid() != 0) {
		printf("SKIPPED: test_presets needs root (BPF)\n");
		return 0;
	}
	if (access(PYTHON, X_OK)) {
		printf("FAILED: needs %s (scripts/deps.sh test installs it)\n", PYTHON);
		return 1;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
