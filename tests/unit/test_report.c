// SPDX-License-Identifier: MIT
/* The summary table and the summary JSON (user/core/report.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "summary_tree.h"
#include "fixtures.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define FFFD "\xef\xbf\xbd"

static const char header_line[] = "Name                                      Self       Total  Calls"
				  "      Mean       P95  Self HB      %";
/* No row with a counter: no counter column, every header over its figures. */
static const char header_no_counter[] = "Name                                          Self      Total"
					"  Calls      Mean       P95      %";

struct fx {
	struct strtab *st;
	struct lp_stats *stats;
	struct lp_nest_totals totals;
	struct lp_report_thread threads[2];
	struct lp_report r;
	char *out;
	size_t out_len;
	json_object *root;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->st = strtab_new();
	fx->stats = lp_stats_new();
	if (!fx->st || !fx->stats)
		return -1;
	fx->r.st = fx->st;
	fx->r.totals = &fx->totals;
	fx->r.counter_name = "Lean heartbeats";
	fx->r.exit_status = 0;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	if (fx->root)
		json_object_put(fx->root);
	free(fx->out);
	lp_stats_free(fx->stats);
	strtab_free(fx->st);
	free(fx);
	return 0;
}

static void add(struct fx *fx, uint32_t name, uint32_t meta, uint64_t total, uint64_t self,
		bool has_counter, uint64_t counter_self, uint64_t counter_total, unsigned flags)
{
	struct lp_span s = {
		.pid = 1, .tid = 1, .name = name, .meta = meta,
		.start_ns = 0, .end_ns = total, .total_ns = total, .self_ns = self,
		.has_counter = has_counter, .counter_self = counter_self,
		.counter_total = counter_total, .flags = flags,
	};

	assert_int_equal(lp_stats_add(fx->stats, &s), 0);
}

static void finish_groups(struct fx *fx)
{
	fx->r.ngroups = lp_stats_sorted(fx->stats, &fx->r.groups);
}

static void render_table(struct fx *fx)
{
	FILE *f = open_memstream(&fx->out, &fx->out_len);

	assert_non_null(f);
	lp_report_table(f, &fx->r);
	assert_int_equal(fclose(f), 0);
	assert_true(ut_valid_utf8(fx->out, fx->out_len));
}

/* The reference run of the nested example (docs/reference-run.md). */
static void seed_run(struct fx *fx)
{
	uint32_t fwd = ut_id(fx->st, "model.forward");
	uint32_t fwd_meta = ut_id(fx->st, "phase=forward, module=encoder");
	uint32_t load = ut_id(fx->st, "input.load");
	uint32_t load_meta = ut_id(fx->st, "phase=input, activity=load");
	uint32_t root = ut_id(fx->st, "example.nested-spans");

	add(fx, fwd, fwd_meta, 4050000, 4050000, true, 2, 2, 0);
	add(fx, fwd, fwd_meta, 4055001, 4055001, true, 2, 2, 0);
	add(fx, fwd, fwd_meta, 4060000, 4060000, true, 2, 2, 0);
	for (int i = 0; i < 3; i++)
		add(fx, load, load_meta, 2060000, 2060000, true, 2, 2, 0);
	add(fx, root, 0, 18440000, 89890, true, 278, 290, 0);
	finish_groups(fx);
	fx->totals.spans = 7;
	fx->totals.threads = 1;
	fx->totals.first_ns = 5000000;
	fx->totals.last_ns = 5000000 + 18440000;
	fx->totals.recorded_ns = 18440000;
	fx->totals.counter_total = 290;
	fx->r.res.valid = true;
	fx->r.res.scope = "process tree";
	fx->r.res.peak_rss_kib = 59528;
	fx->r.res.has_peak_rss = true;
	fx->r.res.voluntary_switches = 4;
	fx->r.res.involuntary_switches = 2;
}

static void test_table_seed_layout(void **state)
{
	struct fx *fx = *state;

	/*
	 * Both as in the seed: its header line is 101 columns, its rows (the
	 * format "%-40s%10s%11s%7s%10s%10s%9s%7s") 104.
	 */
	seed_run(fx);
	render_table(fx);
	/*
	 * The seed's rows, except the last row's "%": 89.89 us of 18.44 ms is
	 * 0.49%, which rounds to "0.5%" (the seed shows "0.4%").
	 */
	assert_string_equal(
		fx->out,
		"Lean profile: 7 events, 1 threads, window 18.44 ms,\n"
		"recorded thread time 18.44 ms, 290 Lean heartbeats\n"
		"Process resources: user CPU 0 ms, system CPU 0 ms, peak RSS 59528 KiB, context "
		"switches 6\n"
		"\n"
		"Name                                      Self       Total  Calls      Mean       P95"
		"  Self HB      %\n"
		"model.forward [phase=forward, module=en" ELLIPSIS
		"  12.17 ms   12.17 ms      3   4.05 ms   4.06 ms        6  66.0%\n"
		"input.load [phase=input, activity=load]    6.18 ms    6.18 ms      3   2.06 ms   "
		"2.06 ms        6  33.5%\n"
		"example.nested-spans                      89.89 us   18.44 ms      1  18.44 ms  "
		"18.44 ms      278   0.5%\n");
	assert_non_null(strstr(fx->out, header_line));
}

/* Every row: a 40-column name cell, then the fixed-width columns. */
static void test_table_row_layout(void **state)
{
	struct fx *fx = *state;
	static const char hostile[] = "bad\nname\t\x1b[2J\xff" "end of a rather long name here";
	char *line, *save = NULL;
	int rows = 0;

	add(fx, ut_id(fx->st, "short"), 0, 1000, 1000, false, 0, 0, 0);
	add(fx, ut_id_n(fx->st, hostile, sizeof(hostile) - 1), ut_id(fx->st, "k=v"), 2000, 2000,
	    false, 0, 0, 0);
	add(fx, ut_id(fx->st, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"), 0, 500,
	    500, false, 0, 0, LP_SPAN_UNCERTAIN);
	/* A row holding spans whose exit never came says how many. */
	add(fx, ut_id(fx->st, "failed"), 0, 700, 700, false, 0, 0, LP_SPAN_UNTERMINATED);
	add(fx, ut_id(fx->st, "failed"), 0, 100, 100, false, 0, 0, LP_SPAN_UNTERMINATED);
	finish_groups(fx);
	fx->totals.spans = 5;
	fx->totals.threads = 1;
	fx->totals.first_ns = 0;
	fx->totals.last_ns = 3500;
	fx->totals.recorded_ns = 3500;
	render_table(fx);
	/* the hostile name is escaped and cut */
	assert_non_null(strstr(fx->out, "bad\\nname\\t\\x1b[2J" FFFD "end of a rather long" ELLIPSIS));
	assert_non_null(strstr(fx->out, "  (2 unterminated)\n"));

	for (line = strtok_r(fx->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line), i = 0, cols = 0;

		if (strncmp(line, "Name ", 5) == 0) {
			assert_string_equal(line, header_no_counter);
			rows = 1;
			continue;
		}
		if (!rows)
			continue;
		rows++;
		/* the name cell: exactly 40 code points */
		while (cols < 40 && i < len) {
			i++;
			while (i < len && ((unsigned char)line[i] & 0xc0) == 0x80)
				i++;
			cols++;
		}
		assert_int_equal(cols, 40);
		/* then 10+11+7+10+10+7 = 55 columns of ASCII (no counter), and maybe the note */
		const char *rest = line + i;
		size_t rl = strlen(rest);

		if (rl > 55) {
			if (strncmp(line, "failed ", 7))
				assert_string_equal(rest + 55, "  (uncertain)");
			else
				assert_string_equal(rest + 55, "  (2 unterminated)");
			rl = 55;
		}
		assert_int_equal(rl, 55);
		for (size_t k = 0; k < rl; k++)
			assert_true(rest[k] >= 0x20 && rest[k] < 0x7f);
	}
	assert_int_equal(rows, 1 + 4); /* the header, four rows, nothing split by a newline */
}

static void test_table_optional_lines(void **state)
{
	struct fx *fx = *state;

	finish_groups(fx);
	fx->totals.unterminated = 2;
	fx->totals.unmatched_exits = 1;
	fx->totals.too_deep = 4;
	fx->r.loss.enter = 5;
	fx->r.loss.exit = 6;
	fx->r.abi_mismatch = 3;
	fx->r.unknown_literal = 2;
	render_table(fx);
	/* No counter anywhere: the header says nothing of Lean or heartbeats. */
	assert_non_null(strstr(fx->out, "Profile: 0 events, 0 threads, window 0.00 ns,\n"
					"recorded thread time 0.00 ns\n"));
	assert_null(strstr(fx->out, "Lean"));
	assert_null(strstr(fx->out, "heartbeats"));
	assert_non_null(strstr(fx->out, "Process resources: not measured for this recording\n"));
	assert_non_null(strstr(fx->out, "Lost: 11 events (5 entries, 6 exits)"));
	assert_non_null(strstr(fx->out, "Unterminated spans: 2, started before recording: 0, "
					"exits without an open span: 1, enters past depth 1024: 4\n"));
	/* Events the decoder could not take as sent: what, and what to do. */
	assert_non_null(strstr(fx->out, "Marker version: 3 events came from markers built with "
					"another version of include/leanprofiler.h (marker ABI "
					"other than 1): their figures may be wrong; rebuild those "
					"programs with this leanprofiler's header\n"));
	assert_non_null(strstr(fx->out, "Unknown texts: 2 names or metadata of events referred "
					"to a literal whose text never arrived: they are named "
					"(unknown)\n"));
	assert_non_null(strstr(fx->out, "\n\n"));
	/* ends with the header line: no rows */
	size_t hl = strlen(header_no_counter);

	assert_true(fx->out_len > hl + 1);
	assert_memory_equal(fx->out + fx->out_len - hl - 1, header_no_counter, hl);
}

static json_object *summary(struct fx *fx)
{
	char *text = ut_summary_text(&fx->r);

	fx->root = ut_parse_strict(text, strlen(text));
	free(text);
	return fx->root;
}

static uint64_t u64(json_object *o, const char *key)
{
	json_object *v = ut_get(o, key);

	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_uint64(v);
}

static const char *str(json_object *o, const char *key)
{
	json_object *v = ut_get(o, key);

	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void test_summary_json(void **state)
{
	struct fx *fx = *state;
	char *argv[] = { "lean", "--run", "bad\xff" "arg", NULL };
	json_object *root, *rows, *row, *meta;
	const uint64_t huge = 9007199254740993ULL; /* 2^53 + 1: not exact as a double */

	seed_run(fx);
	add(fx, ut_id(fx->st, "huge"), ut_id(fx->st, "k=1, k=2, solo"), huge, huge, false, 0, 0,
	    LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN);
	/* 20 calls of 1..20 us: P95 is the 19th, not the maximum */
	for (uint64_t i = 20; i >= 1; i--)
		add(fx, ut_id(fx->st, "many"), 0, i * 1000, 10, false, 0, 0, 0);
	finish_groups(fx);
	fx->threads[0] = (struct lp_report_thread){ .pid = 7, .tid = 8,
						    .name = ut_id(fx->st, "worker"),
						    .spans = 8, .recorded_ns = 123456789,
						    .lost = 3, .max_depth = 2 };
	fx->r.threads = fx->threads;
	fx->r.nthreads = 1;
	fx->r.argv = argv;
	fx->r.pid = 7;
	fx->r.exit_status = 3;
	fx->r.trace_path = "out/trace.json";
	fx->r.loss.enter = 1;
	fx->r.loss.exit = 2;
	fx->r.malformed = 4;
	fx->r.truncated = 5;
	fx->r.unreadable = 6;
	fx->r.records = 40;
	fx->r.from_file = 7;
	fx->r.unknown_literal = 8;
	fx->r.abi_mismatch = 9;
	fx->r.buffer_bytes = 16 << 20;

	root = summary(fx);
	assert_string_equal(str(root, "schema"), LP_SUMMARY_SCHEMA);
	assert_int_equal(json_object_array_length(ut_get(root, "command")), 3);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(ut_get(root, "command"), 2)),
		"bad" FFFD "arg");
	assert_int_equal(u64(root, "pid"), 7);
	assert_int_equal(u64(root, "exit_status"), 3);
	assert_string_equal(str(root, "counter_name"), "Lean heartbeats");
	assert_int_equal(u64(root, "events"), 7);
	assert_int_equal(u64(root, "threads"), 1);
	assert_int_equal(u64(root, "window_ns"), 18440000);
	assert_int_equal(u64(root, "recorded_thread_time_ns"), 18440000);
	assert_int_equal(u64(root, "counter_total"), 290);
	assert_int_equal(u64(ut_get(root, "lost_events"), "total"), 3);
	assert_int_equal(u64(ut_get(root, "input"), "malformed_records"), 4);
	assert_int_equal(u64(ut_get(root, "input"), "truncated_strings"), 5);
	assert_int_equal(u64(ut_get(root, "input"), "unreadable_strings"), 6);
	assert_int_equal(u64(ut_get(root, "input"), "records_received"), 40);
	assert_int_equal(u64(ut_get(root, "input"), "strings_from_file"), 7);
	assert_int_equal(u64(ut_get(root, "input"), "unknown_literals"), 8);
	assert_int_equal(u64(ut_get(root, "input"), "abi_mismatch_events"), 9);
	assert_true(json_object_get_boolean(ut_get(ut_get(root, "resources"), "available")));
	assert_int_equal(u64(ut_get(root, "resources"), "peak_rss_kib"), 59528);
	assert_string_equal(str(ut_get(root, "files"), "trace"), "out/trace.json");

	rows = ut_get(root, "rows");
	assert_int_equal(json_object_array_length(rows), 5);

	/* the huge row sorts first (largest self) and keeps every ns */
	row = json_object_array_get_idx(rows, 0);
	assert_string_equal(str(row, "name"), "huge");
	assert_true(u64(row, "self_ns") == huge);
	assert_true(u64(row, "total_ns") == huge);
	assert_true(u64(row, "p95_ns") == huge);
	assert_true(u64(row, "min_ns") == huge);
	assert_true(u64(row, "max_ns") == huge);
	assert_true(u64(row, "mean_ns") == huge);
	assert_true(json_object_is_type(ut_get(row, "self_counter"), json_type_null));
	assert_true(json_object_is_type(ut_get(row, "total_counter"), json_type_null));
	assert_int_equal(u64(row, "unterminated"), 1);
	assert_int_equal(u64(row, "uncertain"), 1);
	assert_string_equal(str(row, "meta_text"), "k=1, k=2, solo");
	meta = ut_get(row, "meta");
	assert_string_equal(str(meta, "k"), "1");
	assert_string_equal(str(meta, "k#2"), "2");
	assert_string_equal(str(meta, "solo"), "");
	assert_int_equal(json_object_object_length(meta), 3);

	row = json_object_array_get_idx(rows, 1);
	assert_string_equal(str(row, "name"), "model.forward");
	assert_string_equal(str(row, "meta_text"), "phase=forward, module=encoder");
	assert_string_equal(str(ut_get(row, "meta"), "module"), "encoder");
	assert_int_equal(u64(row, "calls"), 3);
	assert_int_equal(u64(row, "self_ns"), 12165001);
	assert_int_equal(u64(row, "total_ns"), 12165001);
	assert_int_equal(u64(row, "mean_ns"), 4055000);
	assert_int_equal(u64(row, "p95_ns"), 4060000);
	assert_int_equal(u64(row, "min_ns"), 4050000);
	assert_int_equal(u64(row, "max_ns"), 4060000);
	assert_int_equal(u64(row, "self_counter"), 6);
	assert_int_equal(u64(row, "total_counter"), 6);
	assert_true(json_object_get_double(ut_get(row, "self_percent")) > 65.9);
	assert_true(json_object_get_double(ut_get(row, "self_percent")) < 66.0);

	row = json_object_array_get_idx(rows, 4);
	assert_string_equal(str(row, "name"), "many");
	assert_int_equal(u64(row, "calls"), 20);
	assert_int_equal(u64(row, "p95_ns"), 19000);
	assert_int_equal(u64(row, "min_ns"), 1000);
	assert_int_equal(u64(row, "max_ns"), 20000);
	assert_int_equal(u64(row, "mean_ns"), 10500);
	assert_int_equal(u64(row, "self_ns"), 200);

	row = json_object_array_get_idx(rows, 3);
	assert_string_equal(str(row, "name"), "example.nested-spans");
	assert_string_equal(str(row, "meta_text"), "");
	assert_int_equal(json_object_object_length(ut_get(row, "meta")), 0);
	assert_int_equal(u64(row, "self_ns"), 89890);
	assert_int_equal(u64(row, "self_counter"), 278);
	assert_int_equal(u64(row, "total_counter"), 290);

	json_object *th = json_object_array_get_idx(ut_get(root, "thread_list"), 0);

	assert_int_equal(u64(th, "tid"), 8);
	assert_string_equal(str(th, "name"), "worker");
	assert_int_equal(u64(th, "recorded_ns"), 123456789);
	assert_int_equal(u64(th, "lost_events"), 3);
}

/* Text from the target in names, metadata keys and values: the summary stays valid UTF-8. */
static void test_summary_hostile_text(void **state)
{
	struct fx *fx = *state;
	static const char name[] = "n\xff\"\n\x01";
	static const char meta[] = "k\xc0=v\xed\xa0\x80, \x7f=\\";
	json_object *row, *m;

	add(fx, ut_id_n(fx->st, name, sizeof(name) - 1), ut_id_n(fx->st, meta, sizeof(meta) - 1),
	    10, 10, false, 0, 0, 0);
	finish_groups(fx);
	fx->totals.spans = 1;
	row = json_object_array_get_idx(ut_get(summary(fx), "rows"), 0);
	assert_string_equal(str(row, "name"), "n" FFFD "\"\n\x01");
	m = ut_get(row, "meta");
	assert_string_equal(str(m, "k" FFFD), "v" FFFD FFFD FFFD);
	assert_string_equal(str(m, "\x7f"), "\\");
}

/*
 * A repeated metadata key longer than the 60 bytes kept in "key#n": the cut
 * must not leave half a character in the summary JSON.
 */
static void test_summary_long_duplicate_key_utf8(void **state)
{
	struct fx *fx = *state;
	char meta[512];
	size_t len = 0;

	/* "x" + 40 × é: 81 bytes, byte 60 falls inside an é */
	for (int rep = 0; rep < 2; rep++) {
		if (rep)
			meta[len++] = ',';
		meta[len++] = 'x';
		for (int i = 0; i < 40; i++) {
			meta[len++] = '\xc3';
			meta[len++] = '\xa9';
		}
		meta[len++] = '=';
		meta[len++] = rep ? '2' : '1';
	}
	add(fx, ut_id(fx->st, "n"), ut_id_n(fx->st, meta, len), 10, 10, false, 0, 0, 0);
	finish_groups(fx);
	fx->totals.spans = 1;

	json_object *m = ut_get(json_object_array_get_idx(ut_get(summary(fx), "rows"), 0), "meta");

	assert_int_equal(json_object_object_length(m), 2);
}

static void test_other_data_json(void **state)
{
	struct fx *fx = *state;
	char *argv[] = { "prog", "a b", NULL };
	char *text;
	json_object *o;

	finish_groups(fx);
	fx->totals.unterminated = 2;
	fx->totals.uncertain = 3;
	fx->r.argv = argv;
	fx->r.loss.enter = 4;
	text = lp_report_other_data_json(&fx->r);
	assert_non_null(text);
	assert_null(strchr(text, '\n'));
	o = json_tokener_parse(text);
	assert_non_null(o);
	assert_string_equal(str(o, "generator"), "leanprofiler");
	assert_int_equal(json_object_array_length(ut_get(o, "command")), 2);
	assert_int_equal(u64(ut_get(o, "lost_events"), "enter"), 4);
	assert_int_equal(u64(o, "unterminated_spans"), 2);
	assert_int_equal(u64(o, "uncertain_spans"), 3);
	json_object_put(o);
	free(text);
}

/* A row past the kept durations shows "~" before its P95, says why, and the JSON agrees. */
static void test_approximate_p95_and_profiler_usage(void **state)
{
	struct fx *fx = *state;
	uint32_t hot = ut_id(fx->st, "hot"), cold = ut_id(fx->st, "cold");
	json_object *o, *rows;
	char *text, *line;

	lp_stats_set_exact_limit(fx->stats, 4);
	for (uint64_t i = 1; i <= 100; i++)
		add(fx, hot, 0, i * 1000, i * 1000, false, 0, 0, 0);
	add(fx, cold, 0, 5, 5, false, 0, 0, 0);
	finish_groups(fx);
	fx->totals.spans = 101;
	fx->totals.threads = 1;
	fx->totals.recorded_ns = 5050005;
	fx->r.self = (struct lp_resources){ .valid = true, .user_ns = 12000000,
					    .system_ns = 3000000, .peak_rss_kib = 4321 };
	fx->r.bpf_runs = 10;
	fx->r.bpf_run_ns = 3170;
	render_table(fx);
	/* The profiler's own usage is in the table only when asked (-v). */
	assert_null(strstr(fx->out, "Profiler:"));
	free(fx->out);
	fx->out = NULL;
	fx->r.show_self = true;
	render_table(fx);
	assert_non_null(strstr(fx->out, "Profiler: user CPU 12 ms, system CPU 3 ms, peak RSS 4321 "
					 "KiB, BPF 317 ns per event\n"));
	/* Pauses for new files, when there were any, on the same line. */
	free(fx->out);
	fx->out = NULL;
	fx->r.follow = (struct lp_follow){ .pauses = 3, .pause_total_ns = 2500000,
					   .pause_max_ns = 1200000, .late_files = 2 };
	render_table(fx);
	assert_non_null(strstr(fx->out, "KiB, BPF 317 ns per event, paused for new files 3 times "
					 "(2500 us in all, at most 1200 us)\n"));
	assert_non_null(strstr(fx->out, "P95 marked ~ comes from a histogram (within 0.4%)"));
	line = strstr(fx->out, "\nhot ");
	assert_non_null(line);
	/* 95th of 1..100 us is 95 us; the histogram's bucket midpoint (94975 ns) is within 0.4%. */
	assert_non_null(strstr(line, " ~94.97 us"));
	line = strstr(fx->out, "\ncold ");
	assert_non_null(line);
	assert_null(memchr(line, '~', (size_t)(strchr(line + 1, '\n') - line)));

	text = ut_summary_text(&fx->r);
	o = json_tokener_parse(text);
	assert_non_null(o);
	rows = json_object_object_get(o, "rows");
	assert_false(json_object_get_boolean(
		json_object_object_get(json_object_array_get_idx(rows, 0), "p95_exact")));
	assert_true(json_object_get_boolean(
		json_object_object_get(json_object_array_get_idx(rows, 1), "p95_exact")));
	assert_int_equal(u64(json_object_object_get(o, "profiler"), "peak_rss_kib"), 4321);
	assert_int_equal(u64(json_object_object_get(o, "profiler"), "bpf_program_run_time_ns"),
			 3170);
	assert_int_equal(u64(json_object_object_get(o, "profiler"), "processes_paused"), 3);
	assert_int_equal(u64(json_object_object_get(o, "profiler"), "paused_total_ns"), 2500000);
	assert_int_equal(u64(json_object_object_get(o, "profiler"), "paused_max_ns"), 1200000);
	assert_int_equal(u64(json_object_object_get(o, "profiler"), "files_attached_late"), 2);
	json_object_put(o);
	free(text);
}

/* Span-pair anomalies are said in the header and kept in the summary; none, no line. */
static void test_span_pairs_reported(void **state)
{
	struct fx *fx = *state;
	struct lp_pairs_stats ps = { .unmatched_keyed = 3, .too_deep = 7, .bad_tid = 1,
				     .reentry_closed = 2, .sites_skipped = 2 };
	json_object *o, *sp;
	char *text;

	finish_groups(fx);
	fx->r.pairs = &ps;
	fx->r.nspecs = 4;
	render_table(fx);
	assert_non_null(strstr(fx->out, "Span pairs: 3 keyed exits without an open span, 0 entries "
					 "past 255 tracks, 7 past depth 1024, 1 malformed records\n"));
	assert_non_null(strstr(fx->out, "Span pairs: 2 probe sites not attached (arguments libbpf "
					 "cannot decode, or fewer than the spec uses) while the "
					 "probe's other sites were: 'record -v' says which\n"));
	text = ut_summary_text(&fx->r);
	o = json_tokener_parse(text);
	sp = json_object_object_get(o, "span_pairs");
	assert_non_null(sp);
	assert_int_equal(u64(sp, "specs"), 4);
	assert_int_equal(u64(sp, "reentry_closed"), 2);
	assert_int_equal(u64(sp, "unmatched_keyed_exits"), 3);
	assert_int_equal(u64(sp, "too_deep_entries"), 7);
	assert_int_equal(u64(sp, "sites_skipped"), 2);
	assert_int_equal(u64(sp, "malformed_records"), 1);
	json_object_put(o);
	free(text);
	free(fx->out);
	fx->out = NULL;
	memset(&ps, 0, sizeof(ps));
	render_table(fx);
	assert_null(strstr(fx->out, "Span pairs:"));
}

/*
 * A report with every optional part: hostile texts, counters and none, an
 * approximate P95, processes, threads, span pairs, resources, BPF time.
 */
static void seed_rich(struct fx *fx, struct lp_pairs_stats *ps,
		      struct lp_report_process procs[2], char **argv)
{
	static const char hostile[] = "n\xff\"\n\x01\\/ \xe2\x80\xae";
	static const char meta[] = "k\xc0=v\xed\xa0\x80, \x7f=\\\\, =empty key, ,nul=x\0y, k\0z=1";
	const uint64_t huge = 9007199254740993ULL;

	lp_stats_set_exact_limit(fx->stats, 8);
	seed_run(fx);
	add(fx, ut_id(fx->st, "huge"), ut_id(fx->st, "k=1, k=2, solo, counter=3"), huge, huge,
	    false, 0, 0, LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN | LP_SPAN_STARTED_BEFORE);
	for (uint64_t i = 40; i >= 1; i--)
		add(fx, ut_id(fx->st, "many"), 0, i * 1000 + 7, 10, i % 2, i, 2 * i, 0);
	add(fx, ut_id_n(fx->st, hostile, sizeof(hostile) - 1),
	    ut_id_n(fx->st, meta, sizeof(meta) - 1), 3, 1, false, 0, 0, 0);
	add(fx, ut_id(fx->st, "zero"), 0, 0, 0, false, 0, 0, 0);
	finish_groups(fx);
	fx->threads[0] = (struct lp_report_thread){ .pid = 7, .tid = 8,
						    .name = ut_id(fx->st, "w\x1b"),
						    .spans = 8, .recorded_ns = 123456789,
						    .lost = 3, .max_depth = 2 };
	fx->threads[1] = (struct lp_report_thread){ .pid = 7, .tid = 0x40000009,
						    .name = ut_id(fx->st, "w (9) keyed spans 0") };
	fx->r.threads = fx->threads;
	fx->r.nthreads = 2;
	procs[0] = (struct lp_report_process){ .pid = 7, .ppid = 1, .comm = ut_id(fx->st, "lean"),
					       .origin = LP_ORIGIN_LAUNCHED, .alive = false };
	procs[1] = (struct lp_report_process){ .pid = 4294967295u, .ppid = 7,
					       .comm = ut_id(fx->st, "su\xff"),
					       .origin = LP_ORIGIN_FORKED,
					       .alive = true, .privileged = true };
	fx->r.procs = procs;
	fx->r.nprocs = 2;
	fx->r.argv = argv;
	fx->r.pid = -5;
	fx->r.exit_status = -1;
	fx->r.mode = LP_MODE_ALL;
	fx->r.binary = "/usr/bin/\xffodd";
	fx->r.end_reason = LP_END_SIGNAL;
	fx->r.base_ns = 11;
	fx->r.end_ns = UINT64_MAX;
	fx->r.trace_path = "out/\"trace\".json";
	fx->r.loss = (struct lp_loss){ 1, 2, 3, 4, 5, 6, 7 };
	fx->r.malformed = 4;
	fx->r.truncated = 5;
	fx->r.unreadable = 6;
	fx->r.records = 300;
	fx->r.from_file = 7;
	fx->r.unknown_literal = 8;
	fx->r.abi_mismatch = 9;
	fx->r.enters = 100;
	fx->r.exits = 99;
	fx->r.buffer_bytes = 16 << 20;
	fx->r.self = (struct lp_resources){ .valid = true, .user_ns = 1, .system_ns = 2,
					    .peak_rss_kib = 3 };
	fx->r.bpf_runs = 10;
	fx->r.bpf_run_ns = 3170;
	fx->r.follow = (struct lp_follow){ 1, 2, 3, 4, 5 };
	*ps = (struct lp_pairs_stats){ .unmatched_keyed = 3, .too_deep = 7, .bad_tid = 1,
				       .reentry_closed = 2, .too_many_tracks = 9, .bad_spec = 2 };
	fx->r.pairs = ps;
	fx->r.nspecs = 4;
}

/*
 * The streamed summary against the json-c tree of 193dd28 (summary_tree.h):
 * the same members in the same order, the same values, the same number
 * texts, null where null and absent where absent, once the members that came
 * later are taken out ("groups", each row's "folded", null on these rows,
 * and "hist", "table" and resources' "until_exit", checked for their type;
 * "unterminated_by" and span_pairs' "enclosed", checked for their values;
 * input's last four, the decoder's counts, and lost_events' off_cpu_waits,
 * checked for their values; these recordings have no --off-cpu).
 * Whitespace aside, json-c writes both the same way.
 */
static void assert_same_as_tree(struct fx *fx)
{
	char *text = ut_summary_text(&fx->r), *tree = tree_summary_json(&fx->r);
	json_object *streamed = ut_parse_strict(text, strlen(text));
	json_object *old = ut_parse_strict(tree, strlen(tree)), *rows;
	int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
	char *a, *b;

	assert_int_equal(u64(ut_get(streamed, "groups"), "kept"), fx->r.fold.kept);
	json_object_object_del(streamed, "groups");
	rows = ut_get(streamed, "rows");
	assert_int_equal(json_object_array_length(rows), fx->r.ngroups);
	for (size_t i = 0; i < fx->r.ngroups; i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		assert_true(json_object_is_type(ut_get(row, "folded"), json_type_null));
		json_object_object_del(row, "folded");
		assert_int_equal(u64(ut_get(row, "hist"), "sub_bits"), LP_HIST_SUB_BITS);
		json_object_object_del(row, "hist");
	}
	assert_true(json_object_is_type(ut_get(ut_get(streamed, "table"), "profiler_line"),
					json_type_boolean));
	json_object_object_del(streamed, "table");
	/* The decoder's counts that came later, at the end of "input". */
	{
		static const char *const later[] = { "records_received", "strings_from_file",
						     "unknown_literals", "abi_mismatch_events" };
		const uint64_t want[] = { fx->r.records, fx->r.from_file, fx->r.unknown_literal,
					  fx->r.abi_mismatch };
		json_object *in = ut_get(streamed, "input");

		for (size_t i = 0; i < ARRAY_SIZE(later); i++) {
			assert_int_equal(u64(in, later[i]), want[i]);
			json_object_object_del(in, later[i]);
		}
	}
	/* Where the unterminated spans were closed, and span pairs' enclosed ones. */
	{
		const struct lp_nest_totals *t = fx->r.totals;
		json_object *by = ut_get(streamed, "unterminated_by");

		assert_int_equal(u64(by, "enclosing_exit"), t->unterminated_outer);
		assert_int_equal(u64(by, "span_pairs"), t->unterminated_pairs);
		assert_int_equal(u64(by, "thread_end"), t->unterminated_thread);
		assert_int_equal(u64(by, "recording_end"), t->unterminated_end);
		json_object_object_del(streamed, "unterminated_by");
		if (fx->r.pairs) {
			assert_int_equal(u64(ut_get(streamed, "span_pairs"), "enclosed"),
					 fx->r.pairs->enclosed);
			json_object_object_del(ut_get(streamed, "span_pairs"), "enclosed");
		}
	}
	/* --off-cpu's waits not delivered, at the end of "lost_events". */
	assert_int_equal(u64(ut_get(streamed, "lost_events"), "off_cpu_waits"), fx->r.loss.sched);
	json_object_object_del(ut_get(streamed, "lost_events"), "off_cpu_waits");
	if (fx->r.res.valid) {
		assert_true(json_object_is_type(ut_get(ut_get(streamed, "resources"), "until_exit"),
						json_type_boolean));
		json_object_object_del(ut_get(streamed, "resources"), "until_exit");
	}
	a = strdup(json_object_to_json_string_ext(streamed, flags));
	b = strdup(json_object_to_json_string_ext(old, flags));
	assert_string_equal(a, b);
	/* One row per line: a summary of many rows reads with grep and less. */
	size_t lines = 0;

	for (const char *p = text; (p = strstr(p, "\n{\"name\":")); p++)
		lines++;
	assert_int_equal(lines, fx->r.ngroups);
	free(a);
	free(b);
	json_object_put(streamed);
	json_object_put(old);
	free(text);
	free(tree);
}

static void test_summary_streamed_as_tree(void **state)
{
	struct fx *fx = *state;
	struct lp_pairs_stats ps;
	struct lp_report_process procs[2];
	char *argv[] = { "lean", "--run", "bad\xff" "arg", "", NULL };

	/* Empty: no rows, processes, threads, command, resources, trace. */
	finish_groups(fx);
	fx->r.counter_name = "x\"y";
	assert_same_as_tree(fx);
	fx->r.counter_name = "Lean heartbeats";

	seed_rich(fx, &ps, procs, argv);
	fx->r.fold = (struct lp_fold_stats){ .max = LP_GROUPS_MAX, .kept = fx->r.ngroups };
	assert_same_as_tree(fx);
	assert_int_equal(lp_stats_approximate(fx->stats), 1);
	/* Without the optional parts and with resources. */
	fx->r.pairs = NULL;
	fx->r.binary = NULL;
	fx->r.mode = LP_MODE_LAUNCH;
	fx->r.end_reason = LP_END_UNKNOWN;
	fx->r.trace_path = NULL;
	fx->r.bpf_runs = 0;
	fx->r.self.valid = false;
	fx->r.res = (struct lp_resources){ .valid = true, .scope = "process tree", .user_ns = 5,
					   .peak_rss_kib = 59528, .has_peak_rss = true,
					   .voluntary_switches = 4 };
	fx->totals.recorded_ns = 0; /* self_percent 0.0 */
	assert_same_as_tree(fx);
	/* A peak RSS not measured is null, never 0; the table says so. */
	fx->r.res.has_peak_rss = false;
	assert_same_as_tree(fx);
	free(fx->out);
	fx->out = NULL;
	render_table(fx);
	assert_non_null(strstr(fx->out, "peak RSS not measured,"));
}

/* "m=I" as a string id. */
static uint32_t meta_no(struct fx *fx, int i)
{
	char m[16];

	snprintf(m, sizeof(m), "m=%d", i);
	return ut_id(fx->st, m);
}

/*
 * Past the cap: a per-name overflow row, the row of other names, each marked
 * in the table (a note past the columns a name can reach) and in the JSON
 * ("folded"); spans a target named as the overflow rows' texts keep rows of
 * their own and are not marked.
 */
/*
 * A span rebuilt at attach has no metadata we know (it was passed at the
 * enter): its row is its own and says so, never the row of spans that
 * passed no metadata, nor one that looks like it.
 */
static void test_started_before_metadata_unknown(void **state)
{
	struct fx *fx = *state;
	uint32_t w = ut_id(fx->st, "worker.outer");
	json_object *root, *rows;
	size_t unknown = 0, empty = 0;

	add(fx, w, ut_id(fx->st, "worker=1"), 5000000, 5000000, false, 0, 0, 0);
	add(fx, w, 0, 1000000, 1000000, false, 0, 0, 0);
	add(fx, w, 0, 3000000, 3000000, false, 0, 0, LP_SPAN_STARTED_BEFORE);
	finish_groups(fx);
	fx->totals.spans = 3;
	fx->totals.threads = 1;
	fx->totals.recorded_ns = 9000000;
	assert_int_equal(fx->r.ngroups, 3);
	render_table(fx);
	assert_non_null(strstr(fx->out, "  (began before recording: metadata not known)\n"));
	/* Two rows named "worker.outer" alone: one without metadata, one with it unknown. */
	assert_non_null(strstr(strstr(fx->out, "\nworker.outer   ") + 1, "\nworker.outer   "));
	root = summary(fx);
	rows = json_object_object_get(root, "rows");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i), *mt = NULL;

		assert_true(json_object_object_get_ex(r, "meta_text", &mt));
		if (!mt) {
			unknown++;
			assert_int_equal(json_object_get_int64(json_object_object_get(r, "calls")), 1);
			assert_int_equal(json_object_get_int64(
						 json_object_object_get(r, "started_before_recording")),
					 1);
			assert_null(json_object_object_get(r, "meta"));
		} else if (!strcmp(json_object_get_string(mt), "")) {
			empty++;
			assert_int_equal(json_object_get_int64(
						 json_object_object_get(r, "started_before_recording")),
					 0);
		}
	}
	assert_int_equal(unknown, 1);
	assert_int_equal(empty, 1);
}

static void test_overflow_rows(void **state)
{
	struct fx *fx = *state;
	uint32_t a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b");
	uint32_t fake_name = ut_id(fx->st, LP_OVERFLOW_NAME_TEXT);
	uint32_t fake_meta = ut_id(fx->st, LP_OVERFLOW_META_TEXT);
	json_object *root, *rows, *groups;
	size_t marked = 0, fakes = 0;
	char *line;

	lp_stats_set_max_groups(fx->stats, 4);
	add(fx, a, ut_id(fx->st, "m=1"), 1000, 1000, false, 0, 0, 0);
	add(fx, b, 0, 1000, 1000, false, 0, 0, 0);
	add(fx, fake_name, 0, 10, 10, false, 0, 0, 0);
	add(fx, a, fake_meta, 10, 10, false, 0, 0, 0);
	/* The cap is reached: a's new metadata, then names without a row. */
	for (int i = 2; i < 12; i++)
		add(fx, a, meta_no(fx, i), 500000, 400000, false, 0, 0, 0);
	add(fx, ut_id(fx->st, "c"), 0, 300000, 300000, false, 0, 0, LP_SPAN_UNCERTAIN);
	add(fx, ut_id(fx->st, "d"), ut_id(fx->st, "m=1"), 300000, 300000, false, 0, 0, 0);
	/* Right after a folded span of a: its forged twin, by the same (name, meta) path. */
	add(fx, a, fake_meta, 10, 10, false, 0, 0, 0);
	add(fx, fake_name, 0, 10, 10, false, 0, 0, 0);
	finish_groups(fx);
	lp_stats_folding(fx->stats, &fx->r.fold);
	fx->totals.spans = 18;
	fx->totals.threads = 1;
	fx->totals.recorded_ns = 6000000;
	assert_int_equal(fx->r.ngroups, 6);
	assert_int_equal(fx->r.fold.kept, 4);
	assert_int_equal(fx->r.fold.overflow_rows, 2);
	assert_int_equal(fx->r.fold.folded_spans, 12);
	assert_int_equal(fx->r.fold.folded_distinct, 12);

	render_table(fx);
	line = strstr(fx->out, "\na [" LP_OVERFLOW_META_TEXT "] ");
	assert_non_null(line);
	assert_non_null(
		strstr(line, "     10 500.00 us 500.00 us  66.7%  (folded: ~10 groups)\n"));
	line = strstr(fx->out, "\n" LP_OVERFLOW_NAME_TEXT "  ");
	assert_non_null(line);
	assert_non_null(strstr(line, "  (uncertain)  (folded: ~2 groups)\n"));
	for (line = strstr(fx->out, "(folded: "); line; line = strstr(line + 1, "(folded: "))
		marked++;
	assert_int_equal(marked, 2);
	assert_non_null(strstr(fx->out, "Folded: 12 spans of ~12 groups (a name and its metadata) "
					"past --max-groups 4 are in 2 rows marked folded; a larger "
					"--max-groups keeps more groups apart\n"));

	root = summary(fx);
	groups = ut_get(root, "groups");
	assert_int_equal(u64(groups, "max"), 4);
	assert_int_equal(u64(groups, "kept"), 4);
	assert_int_equal(u64(groups, "overflow_rows"), 2);
	assert_int_equal(u64(groups, "folded_spans"), 12);
	assert_int_equal(u64(groups, "folded_distinct_estimate"), 12);
	rows = ut_get(root, "rows");
	assert_int_equal(json_object_array_length(rows), 6);
	for (size_t i = 0; i < 6; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		json_object *folded = ut_get(row, "folded");
		const char *name = str(row, "name"), *meta = str(row, "meta_text");

		if (!strcmp(name, LP_OVERFLOW_NAME_TEXT) && !json_object_is_type(folded, json_type_null)) {
			assert_string_equal(str(folded, "kind"), "names");
			assert_int_equal(u64(folded, "distinct_estimate"), 2);
			assert_int_equal(u64(row, "calls"), 2);
			assert_int_equal(u64(row, "uncertain"), 1);
			assert_string_equal(meta, "");
		} else if (!strcmp(meta, LP_OVERFLOW_META_TEXT) &&
			   !json_object_is_type(folded, json_type_null)) {
			assert_string_equal(name, "a");
			assert_string_equal(str(folded, "kind"), "metadata");
			assert_int_equal(u64(folded, "distinct_estimate"), 10);
			assert_int_equal(u64(row, "calls"), 10);
			assert_int_equal(u64(row, "self_ns"), 4000000);
			assert_int_equal(json_object_object_length(ut_get(row, "meta")), 0);
		} else if (!strcmp(name, LP_OVERFLOW_NAME_TEXT) || !strcmp(meta, LP_OVERFLOW_META_TEXT)) {
			/* The target's own: a row each, both spans in it, not folded. */
			assert_int_equal(u64(row, "calls"), 2);
			fakes++;
		} else {
			assert_true(json_object_is_type(folded, json_type_null));
		}
	}
	assert_int_equal(fakes, 2);
}

/* The table shows the first rows and says how to see the rest; the JSON keeps all. */
static void test_table_rows_limit(void **state)
{
	struct fx *fx = *state;
	char name[16];

	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "row%d", i);
		add(fx, ut_id(fx->st, name), 0, 1000 * (uint64_t)(i + 1), 1000 * (uint64_t)(i + 1),
		    false, 0, 0, 0);
	}
	finish_groups(fx);
	fx->totals.recorded_ns = 15000;
	fx->r.table_rows = 2;
	render_table(fx);
	assert_non_null(strstr(fx->out, "\nrow4 "));
	assert_non_null(strstr(fx->out, "\nrow3 "));
	assert_null(strstr(fx->out, "\nrow2 "));
	assert_non_null(strstr(fx->out, "\nNot shown: 3 more rows; --rows N shows N rows, --rows all "
					"every one (the summary JSON has them all)\n"));
	assert_null(strstr(fx->out, "Folded:"));
	assert_int_equal(json_object_array_length(ut_get(summary(fx), "rows")), 5);
	/* As many rows as there are, or 0 (all): no such line. */
	for (size_t rows = 0; rows <= 5; rows += 5) {
		free(fx->out);
		fx->out = NULL;
		fx->r.table_rows = rows;
		render_table(fx);
		assert_non_null(strstr(fx->out, "\nrow0 "));
		assert_null(strstr(fx->out, "Not shown:"));
	}
}

/*
 * Every figure of every row ends where its column's header ends, and the
 * column before it ends at least one space earlier: no two cells touch.
 * Names are ASCII here but for "…" (made one byte), so the Name cell is 40 bytes.
 */
static void check_columns(const char *out, int ncols)
{
	char *copy = strdup(out), *save = NULL, *line, *header = NULL, *e;
	int ends[16], n = 0, rows = 0;

	while ((e = strstr(copy, ELLIPSIS)))
		memmove(e + 1, e + 3, strlen(e + 3) + 1), *e = '.';

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!header) {
			if (strncmp(line, "Name ", 5))
				continue;
			header = line;
			/* the right edge of each header after Name */
			for (int i = 40; header[i]; i++)
				if (header[i] != ' ' && (header[i + 1] == ' ' || !header[i + 1]) &&
				    !(header[i + 1] == ' ' && header[i + 2] && header[i + 2] != ' ' &&
				      !strncmp(header + i - 3, "Self", 4)))
					ends[n++] = i + 1;
			assert_int_equal(n, ncols);
			continue;
		}
		rows++;
		assert_true(strlen(line) >= (size_t)ends[n - 1]);
		for (int c = 0; c < n; c++) {
			int before = c ? ends[c - 1] : 40;

			if (line[ends[c] - 1] == ' ' || line[before] != ' ' ||
			    (line[ends[c]] != ' ' && line[ends[c]]))
				fail_msg("column %d of '%s' is not under its header '%s'", c, line, header);
		}
	}
	assert_non_null(header);
	assert_true(rows > 0);
	free(copy);
}

/* Millions to tens of billions of calls, hours of time, a counter past its column. */
static void test_table_wide_values(void **state)
{
	struct fx *fx = *state;
	static const uint64_t calls[] = { 1000000, 10000000, 10000000000ULL, 5999999 };
	static const uint64_t hours_ns = 3600ULL * 1000000000ULL;
	char *row;

	add(fx, ut_id(fx->st, "a"), 0, 2000, 1000, true, 5, 5, 0);
	add(fx, ut_id(fx->st, "b"), 0, 2000, 1000, true, 5, 5, 0);
	add(fx, ut_id(fx->st, "c"), 0, 2000, 1000, true, 5, 5, 0);
	add(fx, ut_id(fx->st, "rate.span"), ut_id(fx->st, "a=1"), 2300, 2300, false, 0, 0, 0);
	finish_groups(fx);
	for (size_t i = 0; i < fx->r.ngroups; i++) {
		struct lp_group *g = fx->r.groups[i];
		size_t k = g->counter_calls ? (size_t)(g->min_ns == 2000 ? i % 3 : 0) : 3;

		g->calls = calls[k];
		if (k < 3) {
			/* 2, 20 and 200 hours of self time, 30 h more in total */
			g->self_ns = 2 * hours_ns * (k == 0 ? 1 : k == 1 ? 10 : 100);
			g->total_ns = g->self_ns + 30 * hours_ns;
			g->counter_self = 1234567890123ULL * (k + 1);
		} else {
			g->total_ns = g->self_ns = 13820000000ULL; /* the 13.82 s of the report */
		}
	}
	fx->totals.spans = 4;
	fx->totals.threads = 1;
	fx->totals.recorded_ns = 300 * hours_ns;
	render_table(fx);
	/* The columns widen for every row alike; the header stays above the figures. */
	check_columns(fx->out, 7);
	row = strstr(fx->out, "\nrate.span [a=1] ");
	assert_non_null(row);
	assert_non_null(strstr(row, "     13.82 s     13.82 s     5999999   2.30 us   2.30 us"));
	assert_non_null(strstr(fx->out, " 10000000000 "));
	assert_non_null(strstr(fx->out, " 720000.00 s "));
	assert_non_null(strstr(fx->out, " 3703703670369 "));
	assert_null(strstr(fx->out, "s5999999"));

	/* Small figures, the seed's columns and header: unchanged. */
	free(fx->out);
	fx->out = NULL;
	lp_stats_free(fx->stats);
	fx->stats = lp_stats_new();
	seed_run(fx);
	render_table(fx);
	assert_non_null(strstr(fx->out, header_line));
	assert_non_null(strstr(fx->out, "\nexample.nested-spans                      89.89 us   "
					"18.44 ms      1  18.44 ms  18.44 ms      278   0.5%\n"));
}

/*
 * The header's first word and the counter's column follow --counter-name;
 * without a counter in any row neither is shown (a PostgreSQL recording).
 */
static void test_table_counter_words(void **state)
{
	struct fx *fx = *state;

	seed_run(fx);
	fx->r.counter_name = "GC cycles";
	render_table(fx);
	assert_non_null(strstr(fx->out, "GC profile: 7 events, 1 threads, window 18.44 ms,\n"
					"recorded thread time 18.44 ms, 290 GC cycles\n"));
	assert_non_null(strstr(fx->out, "\nName                                          Self      Total"
					"  Calls      Mean       P95  Self cycles      %\n"));
	assert_non_null(strstr(fx->out, "  18.44 ms          278   0.5%\n"));
	check_columns(fx->out, 7);
	assert_null(strstr(fx->out, "Lean"));
	assert_null(strstr(fx->out, " HB"));

	free(fx->out);
	fx->out = NULL;
	fx->r.counter_name = "allocations";
	render_table(fx);
	assert_non_null(strstr(fx->out, "Profile: 7 events, 1 threads, window 18.44 ms,\n"
					"recorded thread time 18.44 ms, 290 allocations\n"));
	assert_non_null(strstr(fx->out, "  Self allocations      %\n"));
	check_columns(fx->out, 7);

	/* No row with a counter: Lean's name (the default) is not shown either. */
	free(fx->out);
	fx->out = NULL;
	fx->r.counter_name = "Lean heartbeats";
	for (size_t i = 0; i < fx->r.ngroups; i++)
		fx->r.groups[i]->counter_calls = 0;
	fx->totals.counter_total = 0;
	render_table(fx);
	assert_non_null(strstr(fx->out, "Profile: 7 events, 1 threads, window 18.44 ms,\n"
					"recorded thread time 18.44 ms\n"));
	assert_non_null(strstr(fx->out, header_no_counter));
	assert_null(strstr(fx->out, "Lean"));
	assert_null(strstr(fx->out, "heartbeats"));
	assert_null(strstr(fx->out, " HB"));
	check_columns(fx->out, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_span_pairs_reported),
		T(test_approximate_p95_and_profiler_usage),
		T(test_table_seed_layout),
		T(test_table_row_layout),
		T(test_table_optional_lines),
		T(test_summary_json),
		T(test_summary_hostile_text),
		T(test_summary_long_duplicate_key_utf8),
		T(test_other_data_json),
		T(test_summary_streamed_as_tree),
		T(test_overflow_rows),
		T(test_started_before_metadata_unknown),
		T(test_table_rows_limit),
		T(test_table_wide_values),
		T(test_table_counter_words),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
