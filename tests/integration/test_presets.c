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

/* An args= item: in the span's args, under "detail". */
static const char *span_detail(json_object *e, const char *key)
{
	json_object *args, *detail, *v;

	if (!json_object_object_get_ex(e, "args", &args) ||
	    !json_object_object_get_ex(args, "detail", &detail) ||
	    !json_object_object_get_ex(detail, key, &v))
		return "";
	return json_object_get_string(v);
}

static double span_end(json_object *e)
{
	return json_object_get_double(get(e, "ts")) + json_object_get_double(get(e, "dur"));
}

static int by_ts(const void *a, const void *b)
{
	double x = json_object_get_double(get(*(json_object *const *)a, "ts"));
	double y = json_object_get_double(get(*(json_object *const *)b, "ts"));

	return (x > y) - (x < y);
}

#define IMP_K 5 /* modules imported each way */
#define IMP_F 3 /* imports that fail each way */

/* The import span of a module: its found flag (-1: no span of it). */
static int import_found(json_object *sum, const char *module)
{
	for (int found = 0; found <= 1; found++) {
		json_object *r = row(sum, "import", fmt("module=%s, found=%d", module, found));

		if (r) {
			assert_int_equal(json_object_get_int64(get(r, "calls")), 1);
			return found;
		}
	}
	return -1;
}

/*
 * Imports as Python code makes them: import statements, __import__(),
 * importlib.import_module(), packages, failures. The probes are in the C
 * import path (import statements, __import__): importlib.import_module() is
 * pure Python and fires none for the module it names, nor for the packages it
 * imports on the way; what that module's code imports with statements is
 * seen. Checked against CPython's own account of the same imports, -X
 * importtime, which times the same call in the same C function: the same
 * modules, one for one, each span inside importtime's interval.
 */
static void test_cpython_imports(void **state)
{
	char *dir = fmt("%s/imp", tmpdir), *script = fmt("%s/imports.py", dir);
	char *out = fmt("%s/cpython-imports", tmpdir), *mods = fmt("%s/new-modules", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset", "cpython",
			 "--", PYTHON, "-X", "importtime", script, mods, NULL };
	char *text = fmt("import importlib, sys\nbefore = set(sys.modules)\nimport json\n");
	json_object *sum, *trace, *spans, *json_span = NULL, *dec_span = NULL;
	size_t timed = 0, seen = 0;
	struct run r;
	char *line, *save;
	bool *used;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(fmt("%s/lp_pkg", dir), 0755), 0);
	assert_int_equal(mkdir(fmt("%s/lp_pkg2", dir), 0755), 0);
	write_file(fmt("%s/lp_pkg/__init__.py", dir), "");
	write_file(fmt("%s/lp_pkg/sub.py", dir), "");
	write_file(fmt("%s/lp_pkg2/__init__.py", dir), "");
	write_file(fmt("%s/lp_pkg2/sub.py", dir), "");
	write_file(fmt("%s/lp_dunder.py", dir), "");
	for (int i = 0; i < IMP_K; i++) {
		write_file(fmt("%s/lp_stmt_%d.py", dir, i), "");
		write_file(fmt("%s/lp_lib_%d.py", dir, i), fmt("import lp_inner_%d\n", i));
		write_file(fmt("%s/lp_inner_%d.py", dir, i), "");
		text = fmt("%simport lp_stmt_%d\nimportlib.import_module('lp_lib_%d')\n", text, i,
			   i);
	}
	for (int i = 0; i < IMP_F; i++)
		text = fmt("%stry:\n    import lp_missing_%d\n"
			   "except ModuleNotFoundError:\n    pass\n"
			   "try:\n    importlib.import_module('lp_gone_%d')\n"
			   "except ModuleNotFoundError:\n    pass\n",
			   text, i, i);
	text = fmt("%s__import__('lp_dunder')\nimport lp_pkg2.sub\n"
		   "importlib.import_module('lp_pkg.sub')\n"
		   "with open(sys.argv[1], 'w') as f:\n"
		   "    f.write(''.join(m + '\\n' for m in sorted(set(sys.modules) - before)))\n",
		   text);
	write_file(script, text);
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	for (int i = 0; i < IMP_K; i++) {
		assert_int_equal(import_found(sum, fmt("lp_stmt_%d", i)), 1);
		assert_int_equal(import_found(sum, fmt("lp_lib_%d", i)), -1);
		assert_int_equal(import_found(sum, fmt("lp_inner_%d", i)), 1);
	}
	for (int i = 0; i < IMP_F; i++) {
		assert_int_equal(import_found(sum, fmt("lp_missing_%d", i)), 0);
		assert_int_equal(import_found(sum, fmt("lp_gone_%d", i)), -1);
	}
	assert_int_equal(import_found(sum, "lp_dunder"), 1);
	assert_int_equal(import_found(sum, "lp_pkg2.sub"), 1);
	assert_int_equal(import_found(sum, "lp_pkg2"), 1);
	assert_int_equal(import_found(sum, "lp_pkg.sub"), -1);
	assert_int_equal(import_found(sum, "lp_pkg"), -1);
	assert_int_equal(import_found(sum, "json"), 1);
	assert_int_equal(import_found(sum, "json.decoder"), 1);
	assert_int_equal(json_object_get_int64(get(sum, "unterminated_spans")), 0);
	assert_int_equal(json_object_get_int64(get(sum, "unmatched_exits")), 0);
	assert_int_equal(json_object_get_int64(get(get(sum, "lost_events"), "total")), 0);

	/* sys.modules' new entries: every one has its span, but those importlib imported. */
	{
		char *list = slurp(mods, NULL);

		assert_non_null(list);
		for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			bool pkg = !strncmp(line, "lp_pkg", 6) && strncmp(line, "lp_pkg2", 7);
			bool by_importlib = pkg || !strncmp(line, "lp_lib_", 7);

			if (import_found(sum, line) != (by_importlib ? -1 : 1))
				fail_msg("module %s: span %d", line, import_found(sum, line));
			seen += !strncmp(line, "lp_", 3);
		}
		free(list);
		assert_int_equal(seen, 3 * IMP_K + 5); /* lp_stmt, lp_lib, lp_inner; the others */
	}

	/* -X importtime: "import time: SELF | CUMULATIVE | <indent>MODULE", microseconds. */
	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	spans = spans_of(trace);
	json_object_array_sort(spans, by_ts);
	used = calloc(json_object_array_length(spans) + 1, 1);
	assert_non_null(used);
	for (line = strtok_r(r.err, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long self_us, cum_us;
		char name[256];
		json_object *match = NULL;

		if (sscanf(line, "import time: %ld | %ld | %255s", &self_us, &cum_us, name) != 3)
			continue;
		/* A name imported again (it failed before): the next of its spans. */
		for (size_t i = 0; i < json_object_array_length(spans) && !match; i++) {
			json_object *e = json_object_array_get_idx(spans, i);

			if (!used[i] && !strcmp(json_object_get_string(get(e, "name")), "import") &&
			    !strcmp(span_arg(e, "module"), name)) {
				used[i] = true;
				match = e;
			}
		}
		if (!match)
			fail_msg("importtime timed %s, no span of it", name);
		/* importtime's clock starts before the entry probe and stops after the exit's. */
		if (json_object_get_double(get(match, "dur")) > (double)cum_us)
			fail_msg("%s: span %.3f us, importtime %ld us",
				 name, json_object_get_double(get(match, "dur")), cum_us);
		if (!strcmp(name, "json"))
			json_span = match;
		if (!strcmp(name, "json.decoder"))
			dec_span = match;
		timed++;
	}
	{
		size_t imports = 0;

		for (size_t i = 0; i < json_object_array_length(spans); i++) {
			json_object *e = json_object_array_get_idx(spans, i);

			imports += !strcmp(json_object_get_string(get(e, "name")), "import");
		}
		assert_int_equal(timed, imports);
	}
	free(used);
	/* json imports json.decoder while it loads: nested inside it, on the same thread. */
	assert_non_null(json_span);
	assert_non_null(dec_span);
	assert_int_equal(get_i(json_span, "tid"), get_i(dec_span, "tid"));
	assert_true(json_object_get_double(get(json_span, "ts")) <
			    json_object_get_double(get(dec_span, "ts")) &&
		    span_end(dec_span) < span_end(json_span));
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(spans);
	json_object_put(sum);
	json_object_put(trace);
	run_free(&r);
}

/*
 * Collections against gc.callbacks, which CPython calls just before and
 * after each one it makes (not those at exit): between the imports of
 * lp_begin and lp_end, as many gc spans as callbacks, with the same
 * generations in the same order, each inside its callbacks' interval, and the
 * same number of objects found unreachable (collected + uncollectable).
 */
static void test_cpython_gc(void **state)
{
	char *script = fmt("%s/collect.py", tmpdir), *out = fmt("%s/cpython-gc", tmpdir);
	char *log = fmt("%s/callbacks", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--preset", "cpython",
			 "--", PYTHON, script, log, NULL };
	json_object *trace, *spans, *b = NULL, *e = NULL;
	struct run r;
	char *cbs, *line, *save;
	size_t n = 0, span_i = 0;
	double from, to;

	(void)state;
	write_file(fmt("%s/lp_begin.py", tmpdir), "");
	write_file(fmt("%s/lp_end.py", tmpdir), "");
	/* Self-referencing objects: automatic collections of generation 0 (and 1, 2) too. */
	write_file(script, fmt("import gc, sys, time\nseen = []\nt0 = 0\n"
			       "def cb(phase, info):\n    global t0\n"
			       "    if phase == 'start':\n        t0 = time.perf_counter_ns()\n"
			       "    else:\n        seen.append((info['generation'], "
			       "time.perf_counter_ns() - t0, info['collected'] + "
			       "info['uncollectable']))\n"
			       "import lp_begin\ngc.callbacks.append(cb)\n"
			       "class Node:\n    def __init__(self):\n        self.me = self\n"
			       "for i in range(30000):\n    Node()\n"
			       "for i in range(%d):\n    gc.collect(1)\n"
			       "gc.callbacks.remove(cb)\nimport lp_end\n"
			       "with open(sys.argv[1], 'w') as f:\n"
			       "    f.write(''.join('%%d %%d %%d\\n' %% s for s in seen))\n",
			       GC_CALLS));
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	spans = spans_of(trace);
	for (size_t i = 0; i < json_object_array_length(spans); i++) {
		json_object *s = json_object_array_get_idx(spans, i);

		if (!strcmp(span_arg(s, "module"), "lp_begin"))
			b = s;
		if (!strcmp(span_arg(s, "module"), "lp_end"))
			e = s;
	}
	assert_non_null(b);
	assert_non_null(e);
	from = span_end(b);
	to = json_object_get_double(get(e, "ts"));
	json_object_array_sort(spans, by_ts);
	cbs = slurp(log, NULL);
	assert_non_null(cbs);
	for (line = strtok_r(cbs, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long gen, dur_ns, unreachable;
		json_object *s = NULL;

		assert_int_equal(sscanf(line, "%ld %ld %ld", &gen, &dur_ns, &unreachable), 3);
		/* The next collection in the window. */
		for (; span_i < json_object_array_length(spans) && !s; span_i++) {
			json_object *c = json_object_array_get_idx(spans, span_i);
			double ts = json_object_get_double(get(c, "ts"));

			if (!strcmp(json_object_get_string(get(c, "name")), "gc") && ts > from &&
			    ts < to)
				s = c;
		}
		if (!s)
			fail_msg("callback %zu (%s): no gc span", n, line);
		assert_string_equal(span_arg(s, "generation"), fmt("%ld", gen));
		assert_string_equal(span_detail(s, "collected"), fmt("%ld", unreachable));
		assert_true(json_object_get_double(get(s, "dur")) * 1000 < (double)dur_ns);
		n++;
	}
	assert_true(n >= GC_CALLS + 1); /* the explicit ones, and automatic ones */
	/* No collection left over in the window. */
	for (; span_i < json_object_array_length(spans); span_i++) {
		json_object *c = json_object_array_get_idx(spans, span_i);
		double ts = json_object_get_double(get(c, "ts"));

		if (!strcmp(json_object_get_string(get(c, "name")), "gc") && ts > from && ts < to)
			fail_msg("a gc span at %.3f without its callbacks", ts);
	}
	free(cbs);
	check_with_consumer(fmt("%s/leanprofiler-trace.json", out));
	json_object_put(spans);
	json_object_put(trace);
	run_free(&r);
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

			double ta = json_object_get_double(get(a, "ts"));
			double tb = json_object_get_double(get(b, "ts"));

			/* One after the other, in either order in the trace. */
			assert_true(ta < tb ? span_end(a) <= tb : span_end(b) <= ta);
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

/*
 * Numbers at the size the probe's note declares (-4@, 4@, 2@, -8@): a 4-byte
 * -5 is 4294967291 with :u, not 18446744073709551611. And the header's
 * thread count: the program's second thread fires an exit alone, so it has
 * no span and is not counted.
 */
static void test_argument_sizes(void **state)
{
	char *out = fmt("%s/sized", tmpdir);
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "-o", out, "--span",
			 "sized:enter,exit,name=sized,meta=a={arg0:u}\\, b={arg1:x}\\, c={arg2}\\, "
			 "cd={arg2:d}\\, d={arg3:u}\\, e={arg0}\\, dx={arg3:x}",
			 "--", fmt("%s/tests/targets/sizedargs", build), NULL };
	json_object *sum;
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	sum = load_json(fmt("%s/leanprofiler-summary.json", out));
	assert_int_equal(calls(sum, "sized",
			       "a=4294967291, b=0xfffffffb, c=65534, cd=-2, "
			       "d=18446744073709551611, e=-5, dx=0xfffffffffffffffb"),
			 1);
	assert_int_equal(json_object_get_int64(get(sum, "threads")), 1);
	assert_int_equal(json_object_get_int64(get(sum, "unmatched_exits")), 1);
	assert_non_null(strstr(r.out, " 1 threads,"));
	json_object_put(sum);
	run_free(&r);
}

/* leanprofiler record -o OUT ARGV... with the target spanpairs MODE N; its summary. */
static json_object *record_pairs(struct run *r, const char *out, char **opts, const char *mode,
				 const char *n)
{
	char *argv[32] = { fmt("%s/leanprofiler", build), "record", "-v", "-o", (char *)out };
	size_t k = 5;

	while (*opts && k < ARRAY_SIZE(argv) - 5)
		argv[k++] = *opts++;
	argv[k++] = "--";
	argv[k++] = fmt("%s/tests/targets/spanpairs", build);
	argv[k++] = (char *)mode;
	argv[k++] = (char *)n;
	argv[k] = NULL;
	assert_int_equal(run(r, argv), 0);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	return load_json(fmt("%s/leanprofiler-summary.json", out));
}

/*
 * A --span string argument in a page the program never touched: the kernel
 * cannot read it there, and user space reads it from the file, as the
 * markers' texts. The target checks the pages were not mapped in before its
 * first probe. Before, all 600 spans were "req (unreadable)", with
 * strings_from_file 0.
 */
static void test_span_texts_from_file(void **state)
{
	char *opts[] = { "--span", "t:req_start,req_done,name=req {arg1:str},key=arg0", NULL };
	struct run r;
	json_object *sum = record_pairs(&r, fmt("%s/texts", tmpdir), opts, "texts", "600");
	json_object *in = get(sum, "input");

	(void)state;
	assert_non_null(strstr(r.out, "texts=600 present=0\n"));
	assert_int_equal(json_object_array_length(get(sum, "rows")), 3);
	assert_int_equal(calls(sum, "req get", ""), 200);
	assert_int_equal(calls(sum, "req put", ""), 200);
	assert_int_equal(calls(sum, "req del", ""), 200);
	assert_int_equal(get_i(in, "strings_from_file"), 600);
	assert_int_equal(get_i(in, "unreadable_strings"), 0);
	assert_int_equal(get_i(sum, "unterminated_spans"), 0);
	json_object_put(sum);
	run_free(&r);
}

/*
 * Two specs on one probe pair: each gets its own span of every pair, the
 * first spec's enclosing the second's (docs/span-spec.md), each closed by the
 * exit. Their totals differ by the first's self time alone: the few
 * microseconds between the two programs of each probe hit. Before, the exit
 * of B closed B with A inside it: A was 100 times unterminated, its 100 exits
 * had no open span, and B's total held A's.
 */
static void test_two_specs_one_pair(void **state)
{
	char *opts[] = { "--span", "t:sz_in,sz_out,name=A", "--span", "t:sz_in,sz_out,name=B",
			 NULL };
	char *out = fmt("%s/twice", tmpdir);
	struct run r;
	json_object *sum = record_pairs(&r, out, opts, "twice", "100");
	json_object *a = row(sum, "A", ""), *b = row(sum, "B", ""), *trace, *spans;
	int64_t a_total, b_total, a_self;
	size_t inside = 0;

	(void)state;
	assert_non_null(strstr(r.out, "twice=100\n"));
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(get_i(a, "calls"), 100);
	assert_int_equal(get_i(b, "calls"), 100);
	assert_int_equal(get_i(a, "unterminated"), 0);
	assert_int_equal(get_i(b, "unterminated"), 0);
	assert_int_equal(get_i(sum, "unterminated_spans"), 0);
	assert_int_equal(get_i(sum, "unmatched_exits"), 0);
	a_total = get_i(a, "total_ns");
	b_total = get_i(b, "total_ns");
	a_self = get_i(a, "self_ns");
	/* B is A's only child; each pair spins 200 us, the programs take a few us. */
	assert_int_equal(a_total - b_total, a_self);
	assert_int_equal(get_i(b, "self_ns"), b_total);
	if (a_self * 20 > a_total)
		fail_msg("A's self time %lld ns is over 5%% of its total %lld ns", (long long)a_self,
			 (long long)a_total);
	/* In the trace: every B inside the A that begins before it. */
	trace = load_json(fmt("%s/leanprofiler-trace.json", out));
	spans = spans_of(trace);
	json_object_array_sort(spans, by_ts);
	assert_int_equal(json_object_array_length(spans), 200);
	for (size_t i = 0; i + 1 < json_object_array_length(spans); i += 2) {
		json_object *outer = json_object_array_get_idx(spans, i);
		json_object *inner = json_object_array_get_idx(spans, i + 1);

		if (!strcmp(get_s(outer, "name"), "A") && !strcmp(get_s(inner, "name"), "B") &&
		    span_end(inner) <= span_end(outer))
			inside++;
	}
	assert_int_equal(inside, 100);
	json_object_put(spans);
	json_object_put(trace);
	json_object_put(sum);
	run_free(&r);
}

/*
 * A probe of two sites, the second's argument an indexed operand libbpf 1.1
 * cannot decode (8@32(%rsp,%rax,8)): the first site is attached by itself and
 * records its 100 spans exactly, arguments and all; the second is skipped,
 * said under -v and counted. Before, libbpf refused the probe as a whole and
 * record failed: no usable entry probe.
 */
static void test_site_not_decoded(void **state)
{
	char *opts[] = { "--span", "t:two_in,two_out,name=two,meta=i={arg0}", NULL };
	struct run r;
	json_object *sum = record_pairs(&r, fmt("%s/sites", tmpdir), opts, "sites", "100");
	json_object *rows = get(sum, "rows");

	(void)state;
	assert_non_null(strstr(r.out, "sites=100\n"));
	/* the file by its full path */
	assert_non_null(strstr(r.err, "/tests/targets/spanpairs: site 2 of 2 (at 0x"));
	assert_non_null(strstr(r.err, "leanprofiler: t:two_in in /"));
	assert_non_null(strstr(r.err, ") not attached: libbpf cannot decode its argument "
				      "'8@32(%rsp,%rax,8)'; its other sites are recorded\n"));
	assert_null(strstr(r.err, "warning"));
	assert_int_equal(json_object_array_length(rows), 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(calls(sum, "two", fmt("i=%d", i)), 1);
	assert_int_equal(get_i(sum, "unterminated_spans"), 0);
	assert_int_equal(get_i(sum, "unmatched_exits"), 0);
	assert_int_equal(get_i(get(sum, "span_pairs"), "sites_skipped"), 1);
	assert_non_null(strstr(r.out, "Span pairs: 1 probe site not attached"));
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
		cmocka_unit_test(test_cpython_imports),
		cmocka_unit_test(test_cpython_gc),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_libstdcxx_terminate),
		cmocka_unit_test(test_span_option),
		cmocka_unit_test(test_argument_sizes),
		cmocka_unit_test(test_span_texts_from_file),
		cmocka_unit_test(test_two_specs_one_pair),
		cmocka_unit_test(test_site_not_decoded),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_late_never_appears),
		cmocka_unit_test_setup_teardown(test_bpf_stats, bpf_stats_on, bpf_stats_restore),
	};

	if (argc > 1)
		build = argv[1];
	if (getenv("LP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
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
