// SPDX-License-Identifier: MIT
/*
 * Hostile input: the real profiler records tests/targets/hostile, whose span
 * names and metadata are everything another process may pass (too long, cut
 * inside a character, invalid UTF-8, control characters, quotes, '=' and ','
 * everywhere, keys that collide, empty, NULL, unmapped) and whose nesting is
 * broken on purpose (an exit that matches nothing, an exit without entry,
 * recursion past LP_NEST_MAX_DEPTH, a span open at exit).
 *
 * What each case must look like is derived from the documented rules
 * (docs/formats.md: the trace, the summary schema; docs/limits.md; bpf/wire.h; user/core/meta.h;
 * user/core/nest.h; user/core/text.h), not from what the profiler happens to print. The
 * target is recorded once (group setup); each test checks one aspect of that
 * recording. Needs root (BPF): skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/wire.h" /* LP_NAME_MAX, LP_META_MAX */
#include "meta.h"           /* LP_META_MAX_ITEMS */
#include "nest.h"           /* LP_NEST_MAX_DEPTH */

#define DEEP 1100 /* tests/targets/hostile.c: nested enters of deep.recurse */
#define ELLIPSIS "\xe2\x80\xa6"
#define FFFD "\xef\xbf\xbd"

static const char *build = "build";
static char tmpdir[] = "/tmp/lp-hostile-XXXXXX";

#include "itest.h"
#include "tests/unit/unit.h" /* ut_utf8_invalid_at(): the unit tests' strict UTF-8 check */

/* The one recording every test looks at. */
static struct {
	struct run r;
	char *out_dir, *trace_path, *summary_path;
	char *trace_text, *summary_text;
	size_t trace_len, summary_len;
	json_object *trace, *sum;
} rec;

/* ---- helpers (itest.h has the shared ones) ---- */

/* prefix + n copies of c + suffix. */
static char *rep(const char *prefix, char c, size_t n, const char *suffix)
{
	size_t a = strlen(prefix), b = strlen(suffix);
	char *p = malloc(a + n + b + 1);

	memcpy(p, prefix, a);
	memset(p + a, c, n);
	memcpy(p + a + n, suffix, b + 1);
	return p;
}

static const char *get_str(json_object *o, const char *key)
{
	return json_object_get_string(get(o, key));
}

static int64_t get_int(json_object *o, const char *key)
{
	return json_object_get_int64(get(o, key));
}

/* Bytes as C-escaped text, for failure messages. */
static char *show(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(4 * n + 1), *p = o;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			*p++ = (char)c;
		else
			p += sprintf(p, "\\x%02x", c);
	}
	*p = '\0';
	if (n > 120)
		strcpy(o + 100, "...");
	return o;
}

static json_object *find_row_opt(const char *name, const char *meta)
{
	json_object *rows = get(rec.sum, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (!strcmp(get_str(row, "name"), name) && !strcmp(get_str(row, "meta_text"), meta))
			return row;
	}
	return NULL;
}

static json_object *find_row(const char *name, const char *meta)
{
	json_object *row = find_row_opt(name, meta);

	if (!row) {
		/* Say what is there under that name, if anything. */
		json_object *rows = get(rec.sum, "rows");

		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			json_object *r = json_object_array_get_idx(rows, i);

			if (!strcmp(get_str(r, "meta_text"), meta))
				print_error("  row with that meta: name %s\n", show(get_str(r, "name")));
			if (!strcmp(get_str(r, "name"), name))
				print_error("  row with that name: meta %s\n",
					    show(get_str(r, "meta_text")));
		}
		fail_msg("no summary row %s [%s]", show(name), show(meta));
	}
	return row;
}

/* A row that exists once, with one call, neither unterminated nor uncertain. */
static json_object *one_call(const char *name, const char *meta)
{
	json_object *row = find_row(name, meta);

	if (get_int(row, "calls") != 1 || get_int(row, "unterminated") != 0 ||
	    get_int(row, "uncertain") != 0)
		fail_msg("row %s [%s]: calls %lld, unterminated %lld, uncertain %lld; want 1, 0, 0",
			 show(name), show(meta), (long long)get_int(row, "calls"),
			 (long long)get_int(row, "unterminated"), (long long)get_int(row, "uncertain"));
	return row;
}

/* The first complete event of the trace with that name (and args.case, if given). */
static json_object *find_event(const char *name, const char *case_val)
{
	json_object *events = get(rec.trace, "traceEvents"), *c;

	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *e = json_object_array_get_idx(events, i);

		if (strcmp(get_str(e, "ph"), "X") || strcmp(get_str(e, "name"), name))
			continue;
		if (!case_val || (json_object_object_get_ex(get(e, "args"), "case", &c) &&
				  !strcmp(json_object_get_string(c), case_val)))
			return e;
	}
	fail_msg("no trace event named %s (case %s)", show(name), case_val ? case_val : "-");
	return NULL;
}

static const char *str_of(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		fail_msg("no key %s in %s", show(key), json_object_to_json_string(obj));
	if (!json_object_is_type(v, json_type_string))
		fail_msg("key %s is not a string in %s", show(key), json_object_to_json_string(obj));
	return json_object_get_string(v);
}

static void expect_kv(json_object *obj, const char *key, const char *want)
{
	const char *got = str_of(obj, key);

	if (strcmp(got, want))
		fail_msg("key %s: got %s, want %s", show(key), show(got), show(want));
}

/* Valid UTF-8; with terminal set, no C0 control but \n, no DEL, no C1 control. */
static void expect_clean_text(const char *what, const char *s, size_t len, bool terminal)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t bad = ut_utf8_invalid_at(s, len);

	if (bad != (size_t)-1)
		fail_msg("%s: invalid UTF-8 at byte %zu (0x%02x), near \"%s\"", what, bad, u[bad],
			 show(fmt("%.40s", s + (bad > 20 ? bad - 20 : 0))));
	for (size_t i = 0; i < len; i++) {
		bool ok_ws = u[i] == '\n' || (!terminal && (u[i] == '\t' || u[i] == '\r'));

		if ((u[i] < 0x20 && !ok_ws) || (terminal && u[i] == 0x7f) ||
		    (terminal && u[i] == 0xc2 && i + 1 < len && u[i + 1] >= 0x80 && u[i + 1] < 0xa0))
			fail_msg("%s: raw control character 0x%02x%s at byte %zu, near \"%s\"", what,
				 u[i], u[i] == 0xc2 ? fmt(" 0x%02x", u[i + 1]) : "", i,
				 show(fmt("%.40s", s + (i > 20 ? i - 20 : 0))));
	}
}

/* A name cut at the limit is at most limit bytes, then "…"; others at most limit. */
static void expect_within(const char *what, const char *s, size_t limit)
{
	size_t n = strlen(s);

	if (n > 3 && !memcmp(s + n - 3, ELLIPSIS, 3))
		n -= 3;
	if (n > limit)
		fail_msg("%s of %zu bytes (before any \"…\") exceeds the limit %zu: %s", what, n,
			 limit, show(s));
}

/* ---- the recording ---- */

static int record_hostile(void **state)
{
	char *argv[] = { fmt("%s/leanprofiler", build), "record", "--rows", "all", "-o", NULL,
			 "--", fmt("%s/tests/targets/hostile", build), NULL };
	struct stat st;

	(void)state;
	/* The independent consumer, as run-all.sh installs it. */
	if (stat("build/consumer/node_modules/speedscope/package.json", &st) != 0) {
		struct run s;
		char *setup[] = { "tests/consumer/setup.sh", NULL };

		if (run(&s, setup) || s.status != 0)
			fprintf(stderr, "tests/consumer/setup.sh failed: %s", s.err ? s.err : "");
	}
	rec.out_dir = fmt("%s/out", tmpdir);
	argv[5] = rec.out_dir; /* every row in the table: each hostile text is checked there */
	rec.trace_path = fmt("%s/leanprofiler-trace.json", rec.out_dir);
	rec.summary_path = fmt("%s/leanprofiler-summary.json", rec.out_dir);
	if (run(&rec.r, argv)) {
		fprintf(stderr, "cannot run %s\n", argv[0]);
		return -1;
	}
	rec.trace_text = slurp(rec.trace_path, &rec.trace_len);
	rec.summary_text = slurp(rec.summary_path, &rec.summary_len);
	if (rec.trace_text)
		rec.trace = json_tokener_parse(rec.trace_text);
	if (rec.summary_text)
		rec.sum = json_tokener_parse(rec.summary_text);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_object_put(rec.trace);
	json_object_put(rec.sum);
	return 0;
}

/* Every later test needs the files: this one says plainly when they are missing. */
static void test_exit_and_files(void **state)
{
	(void)state;
	if (rec.r.status != 0)
		fail_msg("record exited %d; stderr:\n%s", rec.r.status, rec.r.err);
	assert_non_null(rec.trace_text);
	assert_non_null(rec.summary_text);
	if (!rec.trace)
		fail_msg("json-c cannot parse %s", rec.trace_path);
	if (!rec.sum)
		fail_msg("json-c cannot parse %s", rec.summary_path);
	assert_int_equal(get_int(rec.sum, "exit_status"), 0);
	assert_int_equal(get_int(get(rec.sum, "lost_events"), "total"), 0);
	assert_int_equal(get_int(get(rec.sum, "input"), "malformed_records"), 0);
}

#define NEED_FILES()                                                                      \
	do {                                                                              \
		if (!rec.trace || !rec.sum)                                               \
			fail_msg("no parsed outputs (see test_exit_and_files)");          \
	} while (0)

static void test_outputs_valid_utf8(void **state)
{
	(void)state;
	expect_clean_text("stdout", rec.r.out, rec.r.out_len, true);
	expect_clean_text("stderr", rec.r.err, rec.r.err_len, true);
	assert_non_null(rec.trace_text);
	assert_non_null(rec.summary_text);
	/* JSON: raw control characters are not allowed in strings; \n \t \r only as whitespace. */
	expect_clean_text("trace file", rec.trace_text, rec.trace_len, false);
	expect_clean_text("summary file", rec.summary_text, rec.summary_len, false);
	/* A NUL would end the text json-c parsed early. */
	assert_int_equal(strlen(rec.trace_text), rec.trace_len);
	assert_int_equal(strlen(rec.summary_text), rec.summary_len);
}

static void test_counters(void **state)
{
	json_object *in;

	(void)state;
	NEED_FILES();
	in = get(rec.sum, "input");
	/*
	 * Strings that must be cut, one per distinct text (runtime ones are read at
	 * both markers, so these are lower bounds): names L, R, F, f, s2, s3, s4, s5,
	 * s6, s8, the 300-byte X and Y literals as names; metadata M, N, u=.
	 */
	if (get_int(in, "truncated_strings") < 15)
		fail_msg("input.truncated_strings %lld, want >= 15",
			 (long long)get_int(in, "truncated_strings"));
	/*
	 * Pointers that cannot be read: names (const char *)1 as literal and as
	 * runtime, munmapped, PROT_NONE; metadata (const char *)1 and munmapped.
	 */
	if (get_int(in, "unreadable_strings") < 6)
		fail_msg("input.unreadable_strings %lld, want >= 6",
			 (long long)get_int(in, "unreadable_strings"));
	/* "mm.wrong" while mm.inner/mm.outer are open, and "never.entered". */
	assert_int_equal(get_int(rec.sum, "unmatched_exits"), 2);
	/*
	 * nest.c: an enter is skipped when LP_NEST_MAX_DEPTH spans are open, so the
	 * deep thread keeps enters 1..1024 and skips 1025..1100; their exits are
	 * swallowed first, innermost first.
	 */
	assert_int_equal(get_int(rec.sum, "too_deep_enters"), DEEP - LP_NEST_MAX_DEPTH);
	assert_int_equal(get_int(rec.sum, "max_depth"), LP_NEST_MAX_DEPTH);
	/* mm.inner (closed by mm.outer's exit) and left.open (open at exit). */
	assert_int_equal(get_int(rec.sum, "unterminated_spans"), 2);
	assert_int_equal(get_int(rec.sum, "started_before_recording"), 0);
	assert_int_equal(get_int(rec.sum, "uncertain_spans"), 0);
	assert_int_equal(get_int(get(rec.trace, "otherData"), "unterminated_spans"), 2);
	/* The header says so too. */
	assert_int_equal(get_int(get(rec.sum, "unterminated_by"), "enclosing_exit"), 1);
	assert_int_equal(get_int(get(rec.sum, "unterminated_by"), "thread_end"), 1);
	assert_non_null(strstr(rec.r.out, fmt("Unterminated spans: 2 (1 closed by the exit of a span "
					      "around them, 0 given up by span pairs, 1 at their "
					      "thread's end, 0 open when the recording ended), started "
					      "before recording: 0, exits without an open span: 2, "
					      "enters past depth %d: %d\n",
					      LP_NEST_MAX_DEPTH, DEEP - LP_NEST_MAX_DEPTH)));
}

static void test_nesting_anomalies(void **state)
{
	json_object *row, *threads, *deep = NULL, *e;
	const char *deep_name = "deep\x1b" FFFD "\"\\";
	int64_t deep_tid = -1;
	size_t spans = 0;

	(void)state;
	NEED_FILES();
	row = find_row("deep.recurse", "");
	assert_int_equal(get_int(row, "calls"), LP_NEST_MAX_DEPTH);
	assert_int_equal(get_int(row, "unterminated"), 0);
	threads = get(rec.sum, "thread_list");
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *t = json_object_array_get_idx(threads, i);

		if (get_int(t, "max_depth") == LP_NEST_MAX_DEPTH)
			deep = t;
	}
	if (!deep)
		fail_msg("no thread with max_depth %d in %s", LP_NEST_MAX_DEPTH,
			 json_object_to_json_string(threads));
	assert_int_equal(get_int(deep, "spans"), LP_NEST_MAX_DEPTH);
	deep_tid = get_int(deep, "tid");
	/* Its name (comm) came from the target too: ESC kept (JSON escapes it), 0xff replaced. */
	if (strcmp(get_str(deep, "name"), deep_name))
		fail_msg("deep thread named %s in the summary, want %s", show(get_str(deep, "name")),
			 show(deep_name));

	/* An exit that matches an outer span closes the inner one, unterminated. */
	row = find_row("mm.inner", "");
	assert_int_equal(get_int(row, "calls"), 1);
	assert_int_equal(get_int(row, "unterminated"), 1);
	one_call("mm.outer", "");
	row = find_row("left.open", "state=open");
	assert_int_equal(get_int(row, "unterminated"), 1);
	/* Exits that matched nothing create nothing. */
	assert_null(find_row_opt("mm.wrong", ""));
	assert_null(find_row_opt("never.entered", ""));

	e = find_event("mm.inner", NULL);
	assert_true(json_object_get_boolean(get(get(e, "args"), "unterminated")));
	e = find_event("left.open", NULL);
	assert_true(json_object_get_boolean(get(get(e, "args"), "unterminated")));

	/* The trace has every span of the summary, the deep thread's named. */
	{
		json_object *events = get(rec.trace, "traceEvents");
		bool named = false;

		for (size_t i = 0; i < json_object_array_length(events); i++) {
			json_object *ev = json_object_array_get_idx(events, i);
			const char *ph = get_str(ev, "ph");

			if (!strcmp(ph, "X"))
				spans++;
			if (!strcmp(ph, "M") && !strcmp(get_str(ev, "name"), "thread_name") &&
			    get_int(ev, "tid") == deep_tid) {
				named = true;
				if (strcmp(get_str(get(ev, "args"), "name"), deep_name))
					fail_msg("deep thread named %s in the trace, want %s",
						 show(get_str(get(ev, "args"), "name")),
						 show(deep_name));
			}
		}
		assert_true(named);
	}
	assert_int_equal((int64_t)spans, get_int(rec.sum, "events"));
}

static void test_lengths(void **state)
{
	char *a256 = rep("", 'E', LP_NAME_MAX, "");
	json_object *row;

	(void)state;
	NEED_FILES();
	/* Exactly LP_NAME_MAX bytes: kept whole. More: cut to the limit, then "…". */
	one_call(a256, "case=exact-literal");
	one_call(rep("", 'e', LP_NAME_MAX, ""), "case=exact-runtime");
	one_call(rep("", 'F', LP_NAME_MAX, ELLIPSIS), "case=over-literal");
	one_call(rep("", 'f', LP_NAME_MAX, ELLIPSIS), "case=over-runtime");
	one_call(rep("", 'L', LP_NAME_MAX, ELLIPSIS), "case=long-name-literal");
	one_call(rep("", 'R', LP_NAME_MAX, ELLIPSIS), "case=long-name-runtime");
	assert_null(find_row_opt(rep("", 'F', LP_NAME_MAX, ""), "case=over-literal"));

	/* A character the cut at byte 256 would split goes whole: never half a character. */
	one_call(rep("s2.", 'a', 252, ELLIPSIS), "case=cut-2byte");
	one_call(rep("s3.", 'a', 251, ELLIPSIS), "case=cut-3byte");
	one_call(rep("s4.", 'a', 250, ELLIPSIS), "case=cut-4byte");
	one_call(rep("s5.", 'a', 251, ELLIPSIS), "case=cut-4byte-late");
	one_call(rep("s6.", 'a', 251, "\xc3\xa9" ELLIPSIS), "case=cut-after-2byte");
	one_call(rep("s7.", 'a', 251, "\xc3\xa9"), "case=exact-2byte");
	one_call(rep("s8.", 'a', 251, ELLIPSIS), "case=cut-3byte-literal");

	/* Metadata: LP_META_MAX bytes, then "…"; the cut value is what remains of its item. */
	row = one_call("long.meta.literal", rep("m=", 'M', LP_META_MAX - 2, ELLIPSIS));
	expect_kv(get(row, "meta"), "m", rep("", 'M', LP_META_MAX - 2, ELLIPSIS));
	row = one_call("long.meta.runtime", rep("r=", 'N', LP_META_MAX - 2, ELLIPSIS));
	expect_kv(get(row, "meta"), "r", rep("", 'N', LP_META_MAX - 2, ELLIPSIS));
	one_call("meta.cut.2byte", rep("u=", 'b', LP_META_MAX - 3, ELLIPSIS));
	expect_kv(get(find_event("long.meta.literal", NULL), "args"), "m",
		  rep("", 'M', LP_META_MAX - 2, ELLIPSIS));
	expect_kv(get(find_event("long.meta.runtime", NULL), "args"), "r",
		  rep("", 'N', LP_META_MAX - 2, ELLIPSIS));

	/* The trace shows the same names. */
	find_event(a256, "exact-literal");
	find_event(rep("", 'L', LP_NAME_MAX, ELLIPSIS), "long-name-literal");
	find_event(rep("s3.", 'a', 251, ELLIPSIS), "cut-3byte");

}

/* No name or metadata anywhere, summary or trace, is over its limit. */
static void test_no_text_over_limit(void **state)
{
	json_object *rows;

	(void)state;
	NEED_FILES();
	rows = get(rec.sum, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		expect_within("summary name", get_str(r, "name"), LP_NAME_MAX);
		expect_within("summary meta_text", get_str(r, "meta_text"), LP_META_MAX);
	}
	{
		json_object *events = get(rec.trace, "traceEvents");

		for (size_t i = 0; i < json_object_array_length(events); i++) {
			json_object *e = json_object_array_get_idx(events, i);

			if (!strcmp(get_str(e, "ph"), "X"))
				expect_within("trace name", get_str(e, "name"), LP_NAME_MAX);
		}
	}
}

/*
 * One 300-byte literal used as metadata and as a name: the address is the
 * same, the limits are not (docs/limits.md: name 256, metadata 512).
 */
static void test_literal_as_name_and_meta(void **state)
{
	static const struct {
		char c;
		const char *name_case, *meta_name;
	} cases[] = {
		{ 'X', "case=shared-meta-first", "shared.meta.first" }, /* meta first, then name */
		{ 'Y', "case=shared-name-first", "shared.name.first" }, /* name first, then meta */
	};
	char *bad = strdup("");

	(void)state;
	NEED_FILES();
	for (size_t i = 0; i < 2; i++) {
		char *as_name = rep("", cases[i].c, LP_NAME_MAX, ELLIPSIS);
		char *as_meta = rep("", cases[i].c, 300, "");
		json_object *rows = get(rec.sum, "rows");
		bool name_ok = find_row_opt(as_name, cases[i].name_case) != NULL;
		bool meta_ok = find_row_opt(cases[i].meta_name, as_meta) != NULL;

		/* What was recorded instead. */
		for (size_t j = 0; j < json_object_array_length(rows); j++) {
			json_object *r = json_object_array_get_idx(rows, j);
			const char *n = get_str(r, "name"), *m = get_str(r, "meta_text");

			if (!name_ok && !strcmp(m, cases[i].name_case))
				bad = fmt("%s\n  %c*300 (%s): as a name: %zu bytes%s, want %d + \"…\"",
					  bad, cases[i].c, cases[i].name_case + 5, strlen(n),
					  strstr(n, ELLIPSIS) ? " ending in \"…\"" : "", LP_NAME_MAX);
			if (!meta_ok && !strcmp(n, cases[i].meta_name))
				bad = fmt("%s\n  %c*300 (%s): as metadata: %zu bytes%s, want 300 whole",
					  bad, cases[i].c, cases[i].name_case + 5, strlen(m),
					  strstr(m, ELLIPSIS) ? " ending in \"…\"" : "");
		}
	}
	if (*bad)
		fail_msg("one 300-byte literal used as name and as metadata:%s", bad);
}

static void test_invalid_utf8(void **state)
{
	static const struct {
		const char *name;
	} want[] = {
		{ "inv.lone[" FFFD "]" },
		{ "inv.overlong[" FFFD FFFD "]" },
		{ "inv.surrogate[" FFFD FFFD FFFD "]" },
		{ "inv.truncseq[" FFFD FFFD "]" },
		{ "inv.truncend" FFFD FFFD },
		{ "inv.toobig[" FFFD FFFD FFFD FFFD "]" },
		{ "inv.ff[" FFFD FFFD "]" },
	};
	json_object *row, *args;

	(void)state;
	NEED_FILES();
	/* docs/formats.md: "invalid bytes become U+FFFD", each byte. */
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		one_call(want[i].name, "case=literal");
		one_call(want[i].name, "case=runtime");
		find_event(want[i].name, "literal");
		find_event(want[i].name, "runtime");
	}
	row = one_call("inv.meta", "bad=[" FFFD "], " FFFD "=k, sur=" FFFD FFFD FFFD);
	expect_kv(get(row, "meta"), "bad", "[" FFFD "]");
	expect_kv(get(row, "meta"), FFFD, "k");
	expect_kv(get(row, "meta"), "sur", FFFD FFFD FFFD);
	args = get(find_event("inv.meta", NULL), "args");
	expect_kv(args, "bad", "[" FFFD "]");
	expect_kv(args, FFFD, "k");
	expect_kv(args, "sur", FFFD FFFD FFFD);
}

static void test_controls_and_quotes(void **state)
{
	const char *ctl = "ctl:\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11"
			  "\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f";
	char *ctl_rt = fmt("ctl.rt:%s", ctl + 4);
	json_object *row, *args;

	(void)state;
	NEED_FILES();
	/* JSON escapes them: what a parser reads back is the target's own bytes. */
	one_call(ctl, "case=literal");
	one_call(ctl_rt, "case=runtime");
	find_event(ctl, "literal");
	find_event(ctl_rt, "runtime");
	one_call("c1[\xc2\x9b\xc2\x85]", "case=c1");
	row = one_call("ctl.meta", "c=\x01\x1b[31m\x7f, t=a\tb, n=line1\nline2");
	expect_kv(get(row, "meta"), "c", "\x01\x1b[31m\x7f");
	expect_kv(get(row, "meta"), "t", "a\tb");
	expect_kv(get(row, "meta"), "n", "line1\nline2");
	args = get(find_event("ctl.meta", NULL), "args");
	expect_kv(args, "c", "\x01\x1b[31m\x7f");
	expect_kv(args, "t", "a\tb");
	expect_kv(args, "n", "line1\nline2");

	/* The table shows them as \n, \t, \r, \xNN (user/core/text.h), within the Name column. */
	if (!strstr(rec.r.out, "\nctl:\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\t"))
		fail_msg("table row of ctl: not shown escaped:\n%s", rec.r.out);
	if (!strstr(rec.r.out, "\nctl.meta [c=\\x01\\x1b[31m\\x7f, t=a\\tb, n"))
		fail_msg("table row of ctl.meta not shown escaped:\n%s", rec.r.out);
	if (!strstr(rec.r.out, "\nc1[\\x9b\\x85] [case=c1] "))
		fail_msg("table row of c1 not shown escaped:\n%s", rec.r.out);

	row = one_call("q\"uote\\back\\\\slash\"", "path=C:\\dir\\, say=\"hi\"");
	expect_kv(get(row, "meta"), "path", "C:\\dir\\");
	expect_kv(get(row, "meta"), "say", "\"hi\"");
	args = get(find_event("q\"uote\\back\\\\slash\"", NULL), "args");
	expect_kv(args, "path", "C:\\dir\\");
	expect_kv(args, "say", "\"hi\"");
	one_call("rt\"q\\\"", "case=runtime");
	find_event("rt\"q\\\"", "runtime");
}

/* Keys of obj other than those listed; their values, sorted, joined by '|'. */
static char *other_values(json_object *obj, const char *const *known)
{
	const char *vals[LP_META_MAX_ITEMS + 8];
	size_t n = 0;
	char *out = strdup("");

	json_object_object_foreach(obj, k, v) {
		bool skip = false;

		for (const char *const *q = known; *q; q++)
			skip |= !strcmp(*q, k);
		if (!skip && n < sizeof(vals) / sizeof(vals[0]))
			vals[n++] = json_object_get_string(v);
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(vals[j - 1], vals[j]) > 0; j--) {
			const char *t = vals[j];

			vals[j] = vals[j - 1];
			vals[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++)
		out = fmt("%s%s%s", out, i ? "|" : "", vals[i]);
	return out;
}

/*
 * "k=v=w, x=,=y, ,,  , a#2=1, a=1, a=2, counter=5" by docs/formats.md's rules: split at
 * ',', key at the first '=', spaces dropped, empty items skipped; 7 items:
 * k="v=w", x="", ""="y", a#2="1", a="1", a="2" (a repeat: kept as another
 * key), counter="5" (ours in the trace: kept as meta.counter). Every value
 * stays (meta.h: "nothing the program said is lost and JSON objects keep
 * unique keys"), so each object has 7 distinct keys.
 */
static void check_tricky(const char *what, json_object *obj, bool trace)
{
	static const char *const known_trace[] = { "k", "x", "", "a", "meta.counter", NULL };
	static const char *const known_sum[] = { "k", "x", "", "a", "counter", "meta.counter",
						 NULL };
	json_object *v;
	char *rest;

	if (json_object_object_length(obj) != 7)
		fail_msg("%s: %d keys, want 7 (one per item, every value kept): %s", what,
			 json_object_object_length(obj), json_object_to_json_string(obj));
	expect_kv(obj, "k", "v=w");
	expect_kv(obj, "x", "");
	expect_kv(obj, "", "y");
	expect_kv(obj, "a", "1");
	if (trace) {
		expect_kv(obj, "meta.counter", "5");
		assert_false(json_object_object_get_ex(obj, "counter", &v));
	} else if (json_object_object_get_ex(obj, "counter", &v)) {
		expect_kv(obj, "counter", "5");
	} else {
		expect_kv(obj, "meta.counter", "5");
	}
	assert_true(json_object_object_get_ex(obj, "a#2", &v));
	rest = other_values(obj, trace ? known_trace : known_sum);
	if (strcmp(rest, "1|2"))
		fail_msg("%s: values of a#2=1 and the second a=2 are \"%s\", want \"1|2\": %s", what,
			 rest, json_object_to_json_string(obj));
}

static const char tricky[] = "k=v=w, x=,=y, ,,  , a#2=1, a=1, a=2, counter=5";

static void test_meta_rules_trace(void **state)
{
	(void)state;
	NEED_FILES();
	check_tricky("trace args of meta.tricky", get(find_event("meta.tricky", NULL), "args"),
		     true);
	check_tricky("trace args of meta.tricky.rt",
		     get(find_event("meta.tricky.rt", NULL), "args"), true);
}

static void test_meta_rules_summary(void **state)
{
	(void)state;
	NEED_FILES();
	check_tricky("summary meta of meta.tricky", get(one_call("meta.tricky", tricky), "meta"),
		     false);
	check_tricky("summary meta of meta.tricky.rt",
		     get(one_call("meta.tricky.rt", tricky), "meta"), false);
}

static void test_meta_reserved_keys(void **state)
{
	json_object *row, *args, *v;
	char *rest;

	(void)state;
	NEED_FILES();

	/* Keys colliding with ours (docs/formats.md: counter, self_counter, unterminated,
	 * uncertain, started_before_recording) become meta.KEY; ours keep their meaning. */
	args = get(find_event("meta.reserved", NULL), "args");
	assert_true(json_object_object_get_ex(args, "counter", &v));
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), 42);
	assert_int_equal(get_int(args, "self_counter"), 42);
	expect_kv(args, "meta.self_counter", "6");
	expect_kv(args, "meta.unterminated", "7");
	expect_kv(args, "meta.uncertain", "8");
	expect_kv(args, "meta.started_before_recording", "9");
	assert_false(json_object_object_get_ex(args, "unterminated", &v));
	assert_false(json_object_object_get_ex(args, "uncertain", &v));
	assert_false(json_object_object_get_ex(args, "started_before_recording", &v));
	{
		static const char *const known[] = { "counter", "self_counter", "meta.self_counter",
						     "meta.unterminated", "meta.uncertain",
						     "meta.started_before_recording", NULL };

		/* counter=5 renamed to meta.counter must not swallow the target's meta.counter=10. */
		rest = other_values(args, known);
		if (json_object_object_length(args) != 8 || strcmp(rest, "10|5"))
			fail_msg("trace args of meta.reserved: %d keys, values of counter=5 and "
				 "meta.counter=10 are \"%s\"; want 8 keys and \"10|5\": %s",
				 json_object_object_length(args), rest,
				 json_object_to_json_string(args));
	}
	row = one_call("meta.reserved",
		       "counter=5, self_counter=6, unterminated=7, uncertain=8, "
		       "started_before_recording=9, meta.counter=10");
	assert_int_equal(json_object_object_length(get(row, "meta")), 6);
	assert_int_equal(get_int(row, "self_counter"), 42);
}

static void test_meta_empty_and_many(void **state)
{
	json_object *row, *v;

	(void)state;
	NEED_FILES();
	/* Empty metadata is no metadata: no args. */
	row = one_call("empty.meta.literal", "");
	assert_int_equal(json_object_object_length(get(row, "meta")), 0);
	row = one_call("empty.meta.runtime", "");
	assert_int_equal(json_object_object_length(get(row, "meta")), 0);
	one_call("null.meta", "");
	assert_int_equal(json_object_object_length(get(find_event("empty.meta.literal", NULL),
						       "args")), 0);
	assert_int_equal(json_object_object_length(get(find_event("null.meta", NULL), "args")), 0);

	/* More than LP_META_MAX_ITEMS items: the rest verbatim as "_rest", none lost. */
	{
		char many[512];
		size_t m = 0;
		json_object *objs[2];

		for (int i = 0; i < 70; i++)
			m += (size_t)snprintf(many + m, sizeof(many) - m, "%sk%d", i ? "," : "", i);
		row = one_call("meta.many", many);
		objs[0] = get(row, "meta");
		objs[1] = get(find_event("meta.many", NULL), "args");
		for (int o = 0; o < 2; o++) {
			const char *restv = str_of(objs[o], "_rest");

			if (json_object_object_length(objs[o]) > LP_META_MAX_ITEMS + 1)
				fail_msg("meta.many: %d keys, limit %d items",
					 json_object_object_length(objs[o]), LP_META_MAX_ITEMS);
			for (int i = 0; i < 70; i++) {
				char key[8], *tok = fmt(",%s,", restv), *want;

				snprintf(key, sizeof(key), "k%d", i);
				want = fmt(",%s,", key);
				if (!json_object_object_get_ex(objs[o], key, &v) && !strstr(tok, want))
					fail_msg("meta.many: item %s lost (%s)", key,
						 json_object_to_json_string(objs[o]));
			}
		}
	}
}

static void test_empty_null_unreadable(void **state)
{
	json_object *rows;
	bool found = false;

	(void)state;
	NEED_FILES();
	one_call("", "case=empty-name-literal");
	one_call("", "case=empty-name-runtime");
	find_event("", "empty-name-literal");
	/* docs/limits.md: a pointer that cannot be read is "(null)" or "(unreadable)". */
	one_call("(null)", "case=null-literal");
	one_call("(null)", "case=null-runtime");
	one_call("(unreadable)", "case=addr1-literal");
	one_call("(unreadable)", "case=addr1-runtime");
	one_call("(unreadable)", "case=munmapped");
	one_call("(unreadable)", "case=prot-none");
	find_event("(null)", "null-runtime");
	find_event("(unreadable)", "munmapped");
	one_call("unreadable.meta.literal", "(unreadable)");
	one_call("unreadable.meta.runtime", "(unreadable)");
	/* Text that runs into unmapped memory before its NUL: some defined name, one span. */
	rows = get(rec.sum, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		if (!strcmp(get_str(r, "meta_text"), "case=runs-into-unmapped")) {
			found = true;
			assert_int_equal(get_int(r, "calls"), 1);
		}
	}
	assert_true(found);
}

static void test_consumer_loads_trace(void **state)
{
	(void)state;
	NEED_FILES();
	check_with_consumer(rec.trace_path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_and_files),
		cmocka_unit_test(test_outputs_valid_utf8),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_nesting_anomalies),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_no_text_over_limit),
		cmocka_unit_test(test_literal_as_name_and_meta),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_controls_and_quotes),
		cmocka_unit_test(test_meta_rules_trace),
		cmocka_unit_test(test_meta_rules_summary),
		cmocka_unit_test(test_meta_reserved_keys),
		cmocka_unit_test(test_meta_empty_and_many),
		cmocka_unit_test(test_empty_null_unreadable),
		cmocka_unit_test(test_consumer_loads_trace),
	};

	if (argc > 1)
		build = argv[1];
	if (geteuid() != 0) {
		printf("SKIPPED: hostile-input tests need root (BPF); run sudo make check\n");
		return 0;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, record_hostile, teardown);
}
