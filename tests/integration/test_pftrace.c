// SPDX-License-Identifier: MIT
/*
 * record --format perfetto: Perfetto's protobuf trace, checked independently
 * of leanprofiler's own reader. tests/perfetto/pftrace.py inflates the file,
 * has protoc decode it against tests/perfetto/trace.proto (Perfetto's fields,
 * transcribed) and rebuilds the slices as the trace processor does (per track,
 * by time, equal times in file order); with --format json,perfetto the same
 * recording is in both formats, and every slice (times, name, category,
 * every argument), every thread and process name and otherData must be the
 * JSON trace's exactly. Bounded (--trace-last, --trace-max-size), the
 * Perfetto trace keeps the spans the JSON trace keeps, each sequence decoding
 * on its own (pftrace.py tracks interned texts and clocks per sequence).
 *
 * Usage: test_pftrace BUILD_DIR (needs root: BPF; protoc and python3).
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
static char tmpdir[] = "/tmp/lp-pftrace-XXXXXX";

#include "itest.h"

static char *lp(void)
{
	return fmt("%s/leanprofiler", build);
}

/* Records cmd with opts into tmpdir/name; the directory, and what record printed (out). */
static char *record_out(const char *name, char *const opts[], char *const cmd[], char **out)
{
	char *dir = fmt("%s/%s", tmpdir, name), *argv[32];
	int n = 0;
	struct run r;

	argv[n++] = lp();
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = dir;
	for (int i = 0; opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	for (int i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("record %s exited %d:\n%s", name, r.status, r.err);
	if (out)
		*out = strdup(r.out);
	run_free(&r);
	return dir;
}

static char *record(const char *name, char *const opts[], char *const cmd[])
{
	return record_out(name, opts, cmd, NULL);
}

/* pftrace.py compare: exits 0 and says "same". */
static void same_as_json(const char *dir)
{
	char *argv[] = { "tests/perfetto/pftrace.py", "compare",
			 fmt("%s/leanprofiler-trace.pftrace", dir),
			 fmt("%s/leanprofiler-trace.json", dir), NULL };
	struct run r;

	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0 || !strstr(r.out, "; same"))
		fail_msg("the Perfetto trace of %s is not the JSON one (exit %d):\n%s%s", dir,
			 r.status, r.out, r.err);
	run_free(&r);
}

/* What pftrace.py decode makes of a file. */
static json_object *decoded(const char *path)
{
	char *argv[] = { "tests/perfetto/pftrace.py", "decode", (char *)path, NULL };
	struct run r;
	json_object *o;

	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("pftrace.py decode %s exited %d:\n%s", path, r.status, r.err);
	o = json_tokener_parse(r.out);
	assert_non_null(o);
	run_free(&r);
	return o;
}

/* Nested spans, counters, two threads: the same trace in both formats. */
static void test_nested_same_as_json(void **state)
{
	(void)state;
	same_as_json(record("nested", (char *[]){ "--format", "json,perfetto", NULL },
			    (char *[]){ fmt("%s/examples/nested", build), NULL }));
}

/* --off-cpu: the "blocked" and "runq" slices and every span's split, the same. */
static void test_off_cpu_same_as_json(void **state)
{
	char *dir;
	json_object *d, *slices;
	size_t waits = 0;

	(void)state;
	dir = record("offcpu", (char *[]){ "--off-cpu", "--format", "json,perfetto", NULL },
		     (char *[]){ fmt("%s/examples/nested", build), NULL });
	same_as_json(dir);
	d = decoded(fmt("%s/leanprofiler-trace.pftrace", dir));
	slices = get(d, "slices");
	for (size_t i = 0; i < json_object_array_length(slices); i++) {
		json_object *s = json_object_array_get_idx(slices, i);

		if (!strcmp(get_s(s, "cat"), "off-cpu")) {
			waits++;
			/* A wait lies inside a span of its thread: never at the top. */
			assert_true(get_i(s, "depth") >= 1);
		}
	}
	/* nested sleeps inside its spans: waits there are. */
	assert_true(waits > 0);
	json_object_put(d);
}

/* Every hostile name and value, byte for byte as the JSON trace has it. */
static void test_hostile_same_as_json(void **state)
{
	(void)state;
	same_as_json(record("hostile", (char *[]){ "--format", "json,perfetto", NULL },
			    (char *[]){ fmt("%s/tests/targets/hostile", build), NULL }));
}

/* Span pairs: keyed spans on tracks of their own (named), args= as detail, the same. */
static void test_span_pairs_same_as_json(void **state)
{
	(void)state;
	same_as_json(record("pairs", (char *[]){ "--format", "json,perfetto", "--span",
						 "t:req_start,req_done,name=req,key=arg0,"
						 "args=op={arg1:str}", NULL },
			    (char *[]){ fmt("%s/tests/targets/spanpairs", build), "texts", "60",
					NULL }));
}

/*
 * --format perfetto alone: no JSON trace, the summary names the .pftrace, and
 * the bench's producer (2 threads, a counter, "stage=N" metadata) takes at
 * most 20 bytes a span.
 */
static void test_perfetto_only_and_small(void **state)
{
	char *dir, *path;
	json_object *sum, *d;
	struct stat st;
	int64_t spans;

	(void)state;
	dir = record("producer", (char *[]){ "--format", "perfetto", NULL },
		     (char *[]){ fmt("%s/bench/producer", build), "2", "50000", NULL });
	path = fmt("%s/leanprofiler-trace.pftrace", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_not_equal(stat(fmt("%s/leanprofiler-trace.json", dir), &st), 0);
	assert_int_equal(stat(path, &st), 0);
	sum = summary_of(dir);
	assert_string_equal(get_s(get(sum, "files"), "trace"), path);
	spans = get_i(sum, "events");
	assert_int_equal(spans, 100000);
	if ((double)st.st_size / (double)spans > 20.0)
		fail_msg("%lld bytes for %lld spans: %.1f a span, over 20", (long long)st.st_size,
			 (long long)spans, (double)st.st_size / (double)spans);
	d = decoded(path);
	assert_int_equal(json_object_array_length(get(d, "slices")), spans);
	/* otherData is there, with the recording's own start. */
	assert_int_equal(get_i(get(d, "other_data"), "base_ns"),
			 get_i(get(sum, "recording"), "start_ns"));
	json_object_put(d);
	json_object_put(sum);
}

/* A recording in one format, then in the other: the directory holds one trace, .old the other. */
static void test_formats_replace_each_other(void **state)
{
	char *dir, *listing;
	char *cmd[] = { fmt("%s/examples/nested", build), NULL };

	(void)state;
	record("swap", (char *[]){ "--format", "perfetto", NULL }, cmd);
	dir = record("swap", (char *[]){ NULL }, cmd);
	listing = dir_entries(dir);
	if (strcmp(listing, "leanprofiler-summary.json\nleanprofiler-summary.json.old\n"
			    "leanprofiler-trace.json\nleanprofiler-trace.pftrace.old\n"))
		fail_msg("after a Perfetto recording then a JSON one, %s holds: %s", dir, listing);
}

/* lp ARGS...: its stdout, failing the test unless it exits 0. */
static char *lp_out(char *const args[])
{
	char *argv[16];
	int n = 0;
	struct run r;

	argv[n++] = lp();
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("leanprofiler %s exited %d:\n%s", args[0], r.status, r.err);
	return r.out;
}

/* The page without its script's nonce (random per page, 32 hex digits after 'nonce-' or 'nonce="'). */
static char *page_of(const char *path)
{
	char *text = slurp(path, NULL), *p;

	assert_non_null(text);
	while ((p = strstr(text, "nonce")))
		memset(p, 'N', 40 < strlen(p) ? 40 : strlen(p));
	return text;
}

/*
 * report reads the .pftrace as the JSON trace: the same recording's table,
 * page and pictures from a directory with only the Perfetto trace are the
 * JSON one's, byte for byte.
 */
static void test_report_reads_pftrace(void **state)
{
	char *both, *pf, *a, *b, *diff;
	struct run r;

	(void)state;
	both = record("read", (char *[]){ "--format", "json,perfetto", NULL },
		      (char *[]){ fmt("%s/tests/targets/hostile", build), NULL });
	pf = fmt("%s/read-pf", tmpdir);
	assert_int_equal(mkdir(pf, 0700), 0);
	assert_int_equal(link(fmt("%s/leanprofiler-summary.json", both),
			      fmt("%s/leanprofiler-summary.json", pf)), 0);
	assert_int_equal(link(fmt("%s/leanprofiler-trace.pftrace", both),
			      fmt("%s/leanprofiler-trace.pftrace", pf)), 0);
	a = lp_out((char *[]){ "report", "--threads", both, NULL });
	b = lp_out((char *[]){ "report", "--threads", fmt("%s/leanprofiler-trace.pftrace", pf),
			       NULL });
	assert_string_equal(a, b);
	lp_out((char *[]){ "report", "--html", fmt("%s/a.html", tmpdir), both, NULL });
	lp_out((char *[]){ "report", "--html", fmt("%s/b.html", tmpdir), pf, NULL });
	if (strcmp(page_of(fmt("%s/a.html", tmpdir)), page_of(fmt("%s/b.html", tmpdir))))
		fail_msg("report --html of the Perfetto trace differs from the JSON one's");
	lp_out((char *[]){ "report", "--svg", fmt("%s/svg-a", tmpdir), both, NULL });
	lp_out((char *[]){ "report", "--svg", fmt("%s/svg-b", tmpdir), pf, NULL });
	diff = fmt("diff -r %s/svg-a %s/svg-b", tmpdir, tmpdir);
	assert_int_equal(run(&r, (char *[]){ "/bin/sh", "-c", diff, NULL }), 0);
	if (r.status != 0)
		fail_msg("report --svg of the Perfetto trace differs:\n%s", r.out);
	run_free(&r);
}

/* report --format perfetto: a JSON recording's trace as Perfetto's, the same spans. */
static void test_report_converts(void **state)
{
	char *dir, *out;

	(void)state;
	dir = record("convert", (char *[]){ NULL },
		     (char *[]){ fmt("%s/tests/targets/hostile", build), NULL });
	out = lp_out((char *[]){ "report", "--format", "perfetto", dir, NULL });
	assert_string_equal(out, fmt("Trace: %s/leanprofiler-trace.pftrace\n", dir));
	same_as_json(dir);
	/* A trace already in Perfetto's format is said so. */
	{
		char *argv[] = { lp(), "report", "--format", "perfetto",
				 fmt("%s/leanprofiler-trace.pftrace", dir), NULL };
		struct run r;

		assert_int_equal(run(&r, argv), 0);
		assert_int_equal(r.status, 125);
		assert_non_null(strstr(r.err, "is already a Perfetto trace"));
		run_free(&r);
	}
}

/* ---- bounded: --trace-last, --trace-max-size ---- */

/* The decoded slices of category cat. */
static size_t count_cat(json_object *d, const char *cat)
{
	json_object *slices = get(d, "slices");
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(slices); i++)
		n += !strcmp(get_s(json_object_array_get_idx(slices, i), "cat"), cat);
	return n;
}

/*
 * What the summary's trace_bound says is what the .pftrace holds: its spans
 * and off-CPU slices, some left out. The pftrace.py stats of the file.
 */
static json_object *bound_matches(const char *dir, json_object **bound)
{
	char *path = fmt("%s/leanprofiler-trace.pftrace", dir);
	json_object *sum = summary_of(dir), *d = decoded(path), *b = get(sum, "trace_bound");

	assert_int_equal(get_i(b, "spans"), count_cat(d, "span"));
	assert_int_equal(get_i(b, "off_cpu_slices"), count_cat(d, "off-cpu"));
	assert_true(get_i(b, "spans") > 0);
	assert_true(get_i(b, "spans_left_out") > 0);
	assert_int_equal(get_i(b, "spans") + get_i(b, "spans_left_out"), get_i(sum, "events"));
	*bound = json_object_get(b);
	json_object_put(sum);
	return d;
}

static char *flight(void)
{
	return fmt("%s/tests/targets/flight", build);
}

/*
 * --format json,perfetto --trace-last 1s over 3 s of two threads with
 * --off-cpu: both files hold the same slices (times, names, arguments), the
 * window's; each sequence of the .pftrace starts at its first kept span.
 */
static void test_trace_last_same_as_json(void **state)
{
	char *out, *dir;
	json_object *b, *d;

	(void)state;
	dir = record_out("last", (char *[]){ "--format", "json,perfetto", "--trace-last", "1s",
					     "--off-cpu", NULL },
			 (char *[]){ flight(), fmt("%s/last.log", tmpdir), "3", "2", "1000", NULL },
			 &out);
	same_as_json(dir);
	d = bound_matches(dir, &b);
	assert_true(get_i(b, "off_cpu_slices_left_out") > 0);
	assert_false(json_object_get_boolean(get(b, "cut")));
	assert_non_null(strstr(out, fmt("\nTrace kept: the spans that ended in the last 1.00 s "
					"(from 2.")));
	print_message("--trace-last 1s of 3 s: %lld spans in both traces, %lld left out; "
		      "%lld off-CPU slices\n",
		      (long long)get_i(b, "spans"), (long long)get_i(b, "spans_left_out"),
		      (long long)get_i(b, "off_cpu_slices"));
	json_object_put(b);
	json_object_put(d);
}

/* The window cut short by its memory bound (the JSON trace's): both files the same. */
static void test_trace_last_cut_same_as_json(void **state)
{
	char *dir;
	json_object *b, *d;

	(void)state;
	dir = record("last-cut", (char *[]){ "--format", "json,perfetto", "--trace-last", "2s",
					     "--trace-max-size", "64K", "--off-cpu", NULL },
		     (char *[]){ flight(), fmt("%s/last-cut.log", tmpdir), "3", "2", "1000",
				 NULL });
	same_as_json(dir);
	d = bound_matches(dir, &b);
	assert_true(json_object_get_boolean(get(b, "cut")));
	json_object_put(b);
	json_object_put(d);
}

/* --trace-max-size: the first spans, the same in both files. */
static void test_trace_max_size_same_as_json(void **state)
{
	char *dir;
	json_object *b, *d;

	(void)state;
	dir = record("size-both", (char *[]){ "--format", "json,perfetto", "--trace-max-size",
					      "64K", NULL },
		     (char *[]){ flight(), fmt("%s/size-both.log", tmpdir), "2", "1", "0", NULL });
	same_as_json(dir);
	d = bound_matches(dir, &b);
	assert_true(json_object_get_boolean(get(b, "full")));
	json_object_put(b);
	json_object_put(d);
}

/* A slice by the key flight logs a span under. */
struct keyed {
	char key[300];
	json_object *s;
};

static int cmp_keyed(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* A slice's key as flight logs a span: tid SPACE name TAB its string arguments "k=v, k2=v2". */
static void slice_key(json_object *s, char *key, size_t size)
{
	json_object *args = get(s, "args");
	size_t m = (size_t)snprintf(key, size, "%lld %s\t", (long long)get_i(s, "tid"),
				    get_s(s, "name"));

	for (size_t i = 0; i < json_object_array_length(args); i++) {
		json_object *a = json_object_array_get_idx(args, i);
		json_object *v = json_object_array_get_idx(a, 1);

		if (json_object_is_type(v, json_type_string))
			m += (size_t)snprintf(key + m, size - m, "%s%s=%s",
					      key[m - 1] == '\t' ? "" : ", ",
					      json_object_get_string(json_object_array_get_idx(a, 0)),
					      json_object_get_string(v));
	}
}

/*
 * --format perfetto --trace-last 1s alone: the .pftrace holds exactly the
 * spans that ended in the last second (flight's own clock readings around
 * each exit say which; one whose exit straddles the window's start may be
 * either), each at the times the target saw.
 */
static void test_trace_last_perfetto_only(void **state)
{
	char *log = fmt("%s/last-pf.log", tmpdir), *out, *dir, line[512];
	json_object *b, *d, *slices;
	size_t nslices, found = 0, want = 0;
	struct keyed *keys;
	FILE *f;
	uint64_t from;

	(void)state;
	dir = record_out("last-pf", (char *[]){ "--format", "perfetto", "--trace-last", "1s", NULL },
			 (char *[]){ flight(), log, "3", "2", "0", NULL }, &out);
	d = bound_matches(dir, &b);
	from = (uint64_t)get_i(b, "window_start_ns");
	slices = get(d, "slices");
	nslices = json_object_array_length(slices);
	keys = calloc(nslices + 1, sizeof(*keys));
	assert_non_null(keys);
	for (size_t i = 0; i < nslices; i++) {
		keys[i].s = json_object_array_get_idx(slices, i);
		slice_key(keys[i].s, keys[i].key, sizeof(keys[i].key));
	}
	qsort(keys, nslices, sizeof(*keys), cmp_keyed);
	f = fopen(log, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long t[4];
		int tid, depth, used = 0;
		json_object *hit = NULL;
		struct keyed k, *kh;

		assert_int_equal(sscanf(line, "%d %d %llu %llu %llu %llu %n", &tid, &depth, &t[0],
					&t[1], &t[2], &t[3], &used), 6);
		line[strcspn(line, "\n")] = '\0';
		snprintf(k.key, sizeof(k.key), "%d %s", tid, line + used);
		kh = bsearch(&k, keys, nslices, sizeof(*keys), cmp_keyed);
		hit = kh ? kh->s : NULL;
		if (t[3] < from && hit)
			fail_msg("%s ended before the window (%llu < %llu) but is in the trace",
				 line + used, t[3], (unsigned long long)from);
		if (t[2] >= from && !hit)
			fail_msg("%s ended in the window but is not in the trace", line + used);
		want += t[2] >= from;
		if (!hit)
			continue;
		found++;
		if ((uint64_t)get_i(hit, "start_ns") < t[0] ||
		    (uint64_t)get_i(hit, "start_ns") > t[1] ||
		    (uint64_t)(get_i(hit, "start_ns") + get_i(hit, "dur_ns")) < t[2] ||
		    (uint64_t)(get_i(hit, "start_ns") + get_i(hit, "dur_ns")) > t[3])
			fail_msg("%s: traced at %lld for %lld ns, the target saw [%llu..%llu, "
				 "%llu..%llu]", line + used, (long long)get_i(hit, "start_ns"),
				 (long long)get_i(hit, "dur_ns"), t[0], t[1], t[2], t[3]);
	}
	fclose(f);
	free(keys);
	/* Every slice is one of the target's spans. */
	assert_int_equal(found, nslices);
	assert_true(want > 100);
	assert_non_null(strstr(out, fmt("\nTrace kept: the spans that ended in the last 1.00 s "
					"(from 2.")));
	print_message("--format perfetto --trace-last 1s of 3 s: %zu spans, %lld left out\n",
		      found, (long long)get_i(b, "spans_left_out"));
	json_object_put(b);
	json_object_put(d);
}

/*
 * --format perfetto --trace-max-size 64K alone: the packets, before
 * compression and besides the descriptors and otherData written at the end,
 * take at most 64 KiB (the file, deflated, much less); the spans are the
 * first that closed, the table's line says how many.
 */
static void test_trace_max_size_perfetto_only(void **state)
{
	char *out, *dir, *argv[4];
	json_object *b, *d, *st;
	struct run r;
	int64_t raw, end;

	(void)state;
	dir = record_out("size-pf", (char *[]){ "--format", "perfetto", "--trace-max-size", "64K",
						NULL },
			 (char *[]){ flight(), fmt("%s/size-pf.log", tmpdir), "2", "1", "0", NULL },
			 &out);
	d = bound_matches(dir, &b);
	assert_true(json_object_get_boolean(get(b, "full")));
	argv[0] = "tests/perfetto/pftrace.py";
	argv[1] = "stats";
	argv[2] = fmt("%s/leanprofiler-trace.pftrace", dir);
	argv[3] = NULL;
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 0);
	st = json_tokener_parse(r.out);
	assert_non_null(st);
	raw = get_i(st, "raw_bytes");
	end = get_i(st, "end_bytes");
	assert_true(raw - end <= 64 << 10);
	assert_true(raw - end <= get_i(b, "bytes"));
	assert_true(get_i(st, "file_bytes") <= raw + 64);
	assert_non_null(strstr(out, fmt("\nTrace kept: the first %lld spans, until the trace was "
					"full at --trace-max-size 64K, ",
					(long long)get_i(b, "spans"))));
	print_message("--format perfetto --trace-max-size 64K: %lld spans, packets %lld bytes "
		      "(%lld counted), %lld at the end, the file %lld\n",
		      (long long)get_i(b, "spans"), (long long)(raw - end),
		      (long long)get_i(b, "bytes"), (long long)end,
		      (long long)get_i(st, "file_bytes"));
	run_free(&r);
	json_object_put(st);
	json_object_put(b);
	json_object_put(d);
}

/*
 * report --format perfetto of a recording made with --format json,perfetto:
 * the JSON trace alone, converted, gives record's own Perfetto trace. Byte
 * for byte, but where record drew an --off-cpu wait inside a span that began
 * after it (its record reached the pipeline after that span's enter): the
 * JSON trace does not say when a wait was drawn, so the converted file
 * places it by its times; the slices the trace processor rebuilds (names,
 * times, depths, args) are the same all the same. The converted trace
 * decoded; dies unless pftrace.py same says so.
 */
static json_object *converted_is_recorded(const char *name, char *const opts[],
					  char *const cmd[])
{
	char *dir = record(name, opts, cmd), *conv = fmt("%s/%s-conv", tmpdir, name);
	char *argv[] = { "tests/perfetto/pftrace.py", "same",
			 fmt("%s/leanprofiler-trace.pftrace", dir),
			 fmt("%s/leanprofiler-trace.pftrace", conv), NULL };
	unsigned long late_rec = 0, late_conv = 0;
	const char *p;
	struct run r;

	assert_int_equal(mkdir(conv, 0700), 0);
	assert_int_equal(link(fmt("%s/leanprofiler-trace.json", dir),
			      fmt("%s/leanprofiler-trace.json", conv)), 0);
	lp_out((char *[]){ "report", "--format", "perfetto", conv, NULL });
	assert_int_equal(run(&r, argv), 0);
	if (r.status != 0)
		fail_msg("%s converted is not what record wrote (exit %d):\n%s%s", name, r.status,
			 r.out, r.err);
	if (strncmp(r.out, "identical", 9)) {
		p = strstr(r.out, "; same; bytes differ: ");
		if (!p || sscanf(p, "; same; bytes differ: %lu and %lu", &late_rec, &late_conv) != 2 ||
		    late_rec == 0 || late_conv != 0)
			fail_msg("%s converted differs from record's, not by late waits only:\n%s",
				 name, r.out);
	}
	run_free(&r);
	return decoded(argv[3]);
}

/* How many slices of d have category cat, and how many of them an argument named arg. */
static size_t count_slices(json_object *d, const char *cat, const char *arg, size_t *with_arg)
{
	json_object *slices = get(d, "slices");
	size_t n = 0;

	*with_arg = 0;
	for (size_t i = 0; i < json_object_array_length(slices); i++) {
		json_object *s = json_object_array_get_idx(slices, i), *args = get(s, "args");

		if (strcmp(get_s(s, "cat"), cat))
			continue;
		n++;
		for (size_t j = 0; j < json_object_array_length(args); j++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(
					    json_object_array_get_idx(args, j), 0)), arg)) {
				(*with_arg)++;
				break;
			}
	}
	return n;
}

/* --off-cpu: the waits ("blocked", "runq") and every span's split survive the conversion. */
static void test_convert_off_cpu(void **state)
{
	json_object *d;
	size_t split;

	(void)state;
	d = converted_is_recorded("conv-offcpu",
				  (char *[]){ "--off-cpu", "--format", "json,perfetto", NULL },
				  (char *[]){ fmt("%s/examples/nested", build), NULL });
	/* nested sleeps inside its spans: there are waits, and spans split. */
	assert_true(count_slices(d, "off-cpu", "", &split) > 0);
	assert_true(count_slices(d, "span", "cpu_us", &split) > 0);
	assert_true(split > 0);
	json_object_put(d);
}

/* Span pairs: keyed tracks and their names, args= as each span's detail, byte for byte. */
static void test_convert_span_pairs(void **state)
{
	json_object *d;
	size_t detail;

	(void)state;
	d = converted_is_recorded("conv-pairs",
				  (char *[]){ "--format", "json,perfetto", "--span",
					      "t:req_start,req_done,name=req,key=arg0,"
					      "args=op={arg1:str}", NULL },
				  (char *[]){ fmt("%s/tests/targets/spanpairs", build), "texts",
					      "60", NULL });
	assert_true(count_slices(d, "span", "detail", &detail) > 0);
	assert_true(detail > 0);
	json_object_put(d);
}

/* Hostile names and metadata (repeated, reserved, long keys; invalid UTF-8): byte for byte. */
static void test_convert_hostile(void **state)
{
	(void)state;
	json_object_put(converted_is_recorded(
		"conv-hostile", (char *[]){ "--format", "json,perfetto", NULL },
		(char *[]){ fmt("%s/tests/targets/hostile", build), NULL }));
}

static void test_bad_format(void **state)
{
	char *argv[] = { lp(), "record", "--format", "protobuf", "--", "true", NULL };
	struct run r;

	(void)state;
	assert_int_equal(run(&r, argv), 0);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "invalid --format 'protobuf': json, perfetto or "
				      "json,perfetto"));
	run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_same_as_json),
		cmocka_unit_test(test_off_cpu_same_as_json),
		cmocka_unit_test(test_hostile_same_as_json),
		cmocka_unit_test(test_span_pairs_same_as_json),
		cmocka_unit_test(test_perfetto_only_and_small),
		cmocka_unit_test(test_formats_replace_each_other),
		cmocka_unit_test(test_report_reads_pftrace),
		cmocka_unit_test(test_report_converts),
		cmocka_unit_test(test_trace_last_same_as_json),
		cmocka_unit_test(test_trace_last_cut_same_as_json),
		cmocka_unit_test(test_trace_max_size_same_as_json),
		cmocka_unit_test(test_trace_last_perfetto_only),
		cmocka_unit_test(test_trace_max_size_perfetto_only),
		cmocka_unit_test(test_convert_off_cpu),
		cmocka_unit_test(test_convert_span_pairs),
		cmocka_unit_test(test_convert_hostile),
		cmocka_unit_test(test_bad_format),
	};

	if (argc > 1)
		build = argv[1];
	if (getenv("LP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("LP_TEST_FILTER"));
	if (!itest_as_root("test_pftrace"))
		return 0;
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
