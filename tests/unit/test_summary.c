// SPDX-License-Identifier: MIT
/*
 * A recording read back from its summary (user/read/summary_read.c): the table
 * printed from what was read equals the table printed while recording, for
 * every kind of header line and row; bad input is refused; the report's views
 * (user/read/cmd_report.c) and diff's rule and rank test (user/read/diff.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_report.h"
#include "diff.h"
#include "summary_read.h"
#include "text.h"
#include "fixtures.h"

struct fx {
	struct strtab *st;
	struct lp_stats *stats;
	struct lp_paths *paths;
	uint32_t parent; /* the path of the span open around spans added at depth 1 */
	struct lp_nest_totals totals;
	struct lp_report r;
	struct lp_summary s;
	bool loaded;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->st = strtab_new();
	fx->stats = lp_stats_new();
	fx->paths = lp_paths_new();
	if (!fx->st || !fx->stats || !fx->paths)
		return -1;
	fx->r.st = fx->st;
	fx->r.totals = &fx->totals;
	fx->r.counter_name = "Lean heartbeats";
	fx->r.exit_status = 0;
	fx->r.mode = LP_MODE_LAUNCH;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	if (fx->loaded)
		lp_summary_free(&fx->s);
	lp_paths_free(fx->paths);
	lp_stats_free(fx->stats);
	strtab_free(fx->st);
	free(fx);
	return 0;
}

/* A span into the statistics, the paths and the header's totals. */
static void add(struct fx *fx, uint32_t name, uint32_t meta, uint32_t depth, uint64_t total,
		uint64_t self, bool counter, unsigned flags)
{
	struct lp_span s = {
		.pid = 1, .tid = 1, .name = name, .meta = meta, .depth = depth,
		.end_ns = total, .total_ns = total, .self_ns = self, .has_counter = counter,
		.counter_self = counter ? 2 : 0, .counter_total = counter ? 3 : 0, .flags = flags,
	};

	assert_int_equal(lp_stats_add(fx->stats, &s), 0);
	s.path = lp_paths_open(fx->paths, depth ? fx->parent : LP_NEST_PATH_TOP, name);
	assert_int_equal(lp_paths_add(fx->paths, &s), 0);
	fx->totals.spans++;
	if (!depth)
		fx->totals.recorded_ns += total;
	fx->totals.counter_total += s.counter_self;
}

static char *table_of(const struct lp_report *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	lp_report_table(f, r);
	assert_int_equal(fclose(f), 0);
	return out;
}

static char *view_of(const struct lp_summary *s, const struct lp_view_opts *o)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(lp_view_print(f, s, o), 0);
	assert_int_equal(fclose(f), 0);
	assert_true(ut_valid_utf8(out, len));
	return out;
}

/* Writes the summary, reads it back, and checks both print the same table. */
static void round_trip(struct fx *fx)
{
	char *text, *want, *got, problem[LP_SUMMARY_PROBLEM_MAX];

	fx->r.ngroups = lp_stats_sorted(fx->stats, &fx->r.groups);
	fx->r.paths = fx->paths;
	text = ut_summary_text(&fx->r);
	assert_non_null(text);
	if (fx->loaded)
		lp_summary_free(&fx->s);
	assert_int_equal(lp_summary_parse(text, strlen(text), "mem.json", &fx->s, problem,
					  sizeof(problem)),
			 0);
	fx->loaded = true;
	want = table_of(&fx->r);
	got = table_of(&fx->s.rep);
	assert_string_equal(got, want);
	free(text);
	free(want);
	free(got);
}

/* Rows of every kind: counters or none, uncertain, and hostile names. */
static void some_rows(struct fx *fx)
{
	static const char hostile[] = "bad\nname\t\x1b[2J\xff\0end \xe2\x80\xae of a long name";
	uint32_t root = ut_id(fx->st, "root"), a = ut_id(fx->st, "a");
	uint32_t b = ut_id_n(fx->st, hostile, sizeof(hostile) - 1);

	/* a: 12 calls, 12.66 us; b: 500 ns; root: 20 us, of which 6.84 us its own. */
	fx->parent = lp_paths_open(fx->paths, LP_NEST_PATH_TOP, root);
	for (int i = 0; i < 12; i++)
		add(fx, a, ut_id(fx->st, "k=v, x=\x01"), 1, 1000 + (uint64_t)i * 10,
		    1000 + (uint64_t)i * 10, true, 0);
	add(fx, b, 0, 1, 500, 500, false, LP_SPAN_UNCERTAIN);
	add(fx, root, 0, 0, 20000, 6840, false, LP_SPAN_UNTERMINATED);
	fx->totals.threads = 1;
	fx->totals.first_ns = 100;
	fx->totals.last_ns = 20100;
}

static void test_table_round_trip(void **state)
{
	struct fx *fx = *state;

	some_rows(fx);
	fx->r.res = (struct lp_resources){ .valid = true, .scope = "launched", .user_ns = 5000000,
					   .system_ns = 2000000, .peak_rss_kib = 1234,
					   .has_peak_rss = true, .voluntary_switches = 3 };
	round_trip(fx);
	/* The header lines that appear only when something needs saying. */
	fx->totals.unterminated = 1;
	fx->totals.uncertain = 1;
	fx->totals.unmatched_exits = 2;
	fx->r.loss = (struct lp_loss){ .enter = 4, .exit = 5, .sched = 6 };
	round_trip(fx);
	/* The decoder's counts: read back, and the two lines they make said again. */
	fx->r.records = 70;
	fx->r.from_file = 6;
	fx->r.abi_mismatch = 3;
	fx->r.unknown_literal = 2;
	round_trip(fx);
	assert_int_equal(fx->s.rep.records, 70);
	assert_int_equal(fx->s.rep.from_file, 6);
	assert_int_equal(fx->s.rep.abi_mismatch, 3);
	assert_int_equal(fx->s.rep.unknown_literal, 2);
	{
		char *got = table_of(&fx->s.rep);

		assert_non_null(strstr(got, "\nMarker version: 3 events came from markers "));
		assert_non_null(strstr(got, "\nUnknown texts: 2 names or metadata "));
		free(got);
	}
	fx->r.self = (struct lp_resources){ .valid = true, .user_ns = 12000000, .peak_rss_kib = 99 };
	fx->r.show_self = true;
	fx->r.bpf_runs = 10;
	fx->r.bpf_run_ns = 3170;
	fx->r.follow = (struct lp_follow){ .pauses = 3, .pause_total_ns = 2500000,
					   .pause_max_ns = 1200000 };
	round_trip(fx);
	assert_true(fx->s.rep.show_self);
	{
		struct lp_pairs_stats ps = { .unmatched_keyed = 3, .too_deep = 7, .bad_tid = 1,
					     .sites_skipped = 4 };

		fx->r.pairs = &ps;
		fx->r.nspecs = 2;
		round_trip(fx);
		fx->r.pairs = NULL;
	}
	/* Resources as an attached process's until its exit, not measured, a command running on. */
	fx->r.mode = LP_MODE_ATTACH;
	fx->r.res.exited = true;
	fx->r.res.has_peak_rss = false;
	round_trip(fx);
	fx->r.res.exited = false;
	round_trip(fx);
	fx->r.mode = LP_MODE_LAUNCH;
	fx->r.exit_status = -1;
	round_trip(fx);
	fx->r.mode = LP_MODE_ALL;
	fx->r.res.valid = false;
	round_trip(fx);
}

/*
 * --off-cpu: the rows' splits and the header's counts go through the summary
 * and come back as the same table, columns and all; a summary whose split
 * does not add up to a row's time is refused.
 */
static void test_off_cpu_round_trip(void **state)
{
	struct fx *fx = *state;
	uint32_t a = ut_id(fx->st, "a"), b = ut_id(fx->st, "b");
	struct lp_span s = { .pid = 1, .tid = 1, .name = a, .end_ns = 3000000, .total_ns = 3000000,
			     .self_ns = 1000000, .has_sched = true,
			     .sched = { .cpu_ns = 1200000, .runq_ns = 300000, .blocked_ns = 1500000,
					.vcsw = 2, .ivcsw = 5 },
			     .self_sched = { .cpu_ns = 1000000, .ivcsw = 1 } };
	char *t, *text, problem[LP_SUMMARY_PROBLEM_MAX];
	const char *key = "\"total_cpu_ns\":1200000";
	size_t at;

	assert_int_equal(lp_stats_add(fx->stats, &s), 0);
	/* Open at attach: 1 ms of it before its thread was tracked. */
	s.name = b;
	s.flags = LP_SPAN_STARTED_BEFORE;
	s.sched = (struct lp_sched){ .cpu_ns = 2000000 };
	s.unmeasured_ns = 1000000;
	assert_int_equal(lp_stats_add(fx->stats, &s), 0);
	/* Not split at all. */
	s.has_sched = false;
	s.unmeasured_ns = 0;
	s.flags = 0;
	assert_int_equal(lp_stats_add(fx->stats, &s), 0);
	fx->totals = (struct lp_nest_totals){ .spans = 3, .threads = 1, .recorded_ns = 9000000,
					      .sched_measured = 1, .sched_partial = 1,
					      .sched_unmeasured = 1 };
	round_trip(fx);
	t = table_of(&fx->s.rep);
	assert_null(strstr(t, "CPU%"));
	assert_null(strstr(t, "Off-CPU"));
	assert_false(fx->s.rep.off_cpu);
	free(t);

	fx->r.off_cpu = true;
	fx->r.loss.sched = 3;
	round_trip(fx);
	assert_true(fx->s.rep.off_cpu);
	assert_int_equal(fx->s.rep.loss.sched, 3);
	assert_int_equal(fx->s.totals.sched_partial, 1);
	t = table_of(&fx->s.rep);
	/* No counter in this recording: no Self HB column before the split's. */
	assert_non_null(strstr(t, "       P95      %   CPU%      Runq   Blocked\n"));
	assert_null(strstr(t, "Self HB"));
	assert_non_null(strstr(t, "\nOff-CPU: 1 spans split, 1 in part (open before their thread "));
	assert_non_null(strstr(t, "\nOff-CPU waits: 3 not in the trace (the ring buffer was full)"));
	/* a: 1.2 of 3 ms on a CPU; b open at attach: 2 of 3 ms; b not split: dashes. */
	assert_non_null(strstr(t, "  40.0% 300.00 us   1.50 ms\n"));
	assert_non_null(strstr(t, "  66.7%   0.00 ns   0.00 ns  (began before recording"));
	assert_non_null(strstr(t, "      -         -         -\n"));
	free(t);
	for (size_t i = 0; i < fx->s.nrows; i++) {
		const struct lp_group *g = &fx->s.rows[i].g;

		assert_int_equal(lp_sched_sum(&g->sched) + g->unmeasured_ns, g->total_ns);
		if (g->name == fx->s.rows[0].g.name) {
			assert_int_equal(g->self_sched.cpu_ns, 1000000);
			assert_int_equal(g->sched.ivcsw, 5);
		} else {
			assert_int_equal(g->unmeasured_ns, g->started_before ? 1000000 : 3000000);
		}
	}

	/* One nanosecond off: refused, with the row named. */
	fx->r.ngroups = lp_stats_sorted(fx->stats, &fx->r.groups);
	{
		FILE *f = open_memstream(&text, &at);

		assert_non_null(f);
		assert_int_equal(lp_report_summary_json(f, &fx->r), 0);
		assert_int_equal(fclose(f), 0);
	}
	assert_non_null(strstr(text, key));
	at = (size_t)(strstr(text, key) - text) + strlen(key) - 1;
	text[at] = '1';
	lp_summary_free(&fx->s);
	fx->loaded = false;
	assert_int_equal(lp_summary_parse(text, strlen(text), "mem.json", &fx->s, problem,
					  sizeof(problem)),
			 -EINVAL);
	assert_non_null(strstr(problem, "is not total_ns"));
	free(text);
}


/*
 * --off-cpu on a VM: time the hypervisor took from a current thread is a part
 * of its own (steal), in the rows, the threads and a Steal column shown only
 * when a row has some; read back as written, and 0 from a summary written
 * before it was split out (no *_steal_ns), whose parts still add up.
 */
static void test_off_cpu_steal(void **state)
{
	struct fx *fx = *state;
	struct lp_span s = { .pid = 1, .tid = 1, .name = ut_id(fx->st, "stolen"), .end_ns = 3000000,
			     .total_ns = 3000000, .self_ns = 3000000, .has_sched = true,
			     .sched = { .cpu_ns = 1000000, .steal_ns = 500000, .runq_ns = 500000,
					.blocked_ns = 1000000 },
			     .self_sched = { .cpu_ns = 1000000, .steal_ns = 500000,
					     .runq_ns = 500000, .blocked_ns = 1000000 } };
	char *t, *text, *old, *at, problem[LP_SUMMARY_PROBLEM_MAX];

	assert_int_equal(lp_stats_add(fx->stats, &s), 0);
	fx->totals = (struct lp_nest_totals){ .spans = 1, .threads = 1, .recorded_ns = 3000000,
					      .sched_measured = 1 };
	fx->r.off_cpu = true;
	fx->r.steal_clock = true;
	round_trip(fx);
	assert_true(fx->s.rep.steal_clock);
	assert_int_equal(fx->s.rows[0].g.sched.steal_ns, 500000);
	assert_int_equal(fx->s.rows[0].g.self_sched.steal_ns, 500000);
	t = table_of(&fx->s.rep);
	assert_non_null(strstr(t, "       P95      %   CPU%     Steal      Runq   Blocked\n"));
	assert_non_null(strstr(t, "  33.3% 500.00 us 500.00 us   1.00 ms\n"));
	free(t);

	/* Written before steal was split out: no steal members, no clock named. */
	fx->r.ngroups = lp_stats_sorted(fx->stats, &fx->r.groups);
	text = ut_summary_text(&fx->r);
	assert_non_null(strstr(text, "\"total_steal_ns\":500000"));
	assert_non_null(strstr(text, "\"steal_clock\":\"kvm\""));
	old = strdup(text);
	assert_non_null(old);
	/* Steal folded into blocked, as the sums were then, its keys renamed away. */
	for (const char *k = "_steal_ns\":"; (at = strstr(old, k));)
		memcpy(at, "_stolen_x", 9);
	at = strstr(old, "\"total_blocked_ns\":1000000");
	assert_non_null(at);
	memcpy(at + strlen("\"total_blocked_ns\":"), "1500000", 7);
	lp_summary_free(&fx->s);
	fx->loaded = false;
	assert_int_equal(lp_summary_parse(old, strlen(old), "old.json", &fx->s, problem,
					  sizeof(problem)),
			 0);
	fx->loaded = true;
	assert_int_equal(fx->s.rows[0].g.sched.steal_ns, 0);
	assert_int_equal(fx->s.rows[0].g.sched.blocked_ns, 1500000);
	t = table_of(&fx->s.rep);
	assert_null(strstr(t, "Steal"));
	free(t);
	free(old);
	free(text);
}

/*
 * The counter's name is the operator's at record time, printed as given;
 * read from a file, it is shown through the display sanitizer.
 */
static void test_counter_name_from_file(void **state)
{
	struct fx *fx = *state;
	char *text, *got, problem[LP_SUMMARY_PROBLEM_MAX];

	some_rows(fx);
	fx->r.ngroups = lp_stats_sorted(fx->stats, &fx->r.groups);
	fx->r.counter_name = "work \x1b]0;title\x07 units";
	text = ut_summary_text(&fx->r);
	assert_non_null(text);
	assert_int_equal(lp_summary_parse(text, strlen(text), "mem.json", &fx->s, problem,
					  sizeof(problem)),
			 0);
	fx->loaded = true;
	got = table_of(&fx->s.rep);
	assert_non_null(strstr(got, ", 24 work \\x1b]0;title\\x07 units\n"));
	assert_null(strchr(got, '\x1b'));
	free(text);
	free(got);
}

/* Rows past the kept durations: their P95 ("~") is the one written, not recomputed. */
static void test_approximate_rows(void **state)
{
	struct fx *fx = *state;
	uint32_t hot = ut_id(fx->st, "hot");

	lp_stats_set_exact_limit(fx->stats, 4);
	for (uint64_t i = 1; i <= 100; i++)
		add(fx, hot, 0, 0, i * 1013, i * 1013, false, 0);
	add(fx, ut_id(fx->st, "cold"), 0, 0, 5, 5, false, 0);
	round_trip(fx);
	assert_false(lp_group_p95_exact(fx->s.groups[0]));
	assert_true(lp_group_p95_exact(fx->s.groups[1]));
	/* The histogram of the durations came along, and the self times'. */
	assert_int_equal(fx->s.rows[0].hist.total, 100);
	assert_int_equal(fx->s.rows[0].g.self_hist.total, 100);
	assert_true(fx->s.rows[0].has_hist);
}

/* --sort, --top, --min-total; --threads, --tree, --folded. */
static void test_views(void **state)
{
	struct fx *fx = *state;
	struct lp_report_thread th[2] = {
		{ .pid = 1, .tid = 1, .name = ut_id(fx->st, "main"), .spans = 14,
		  .recorded_ns = 20000 },
		{ .pid = 1, .tid = 2, .name = ut_id(fx->st, "evil\x1b[31m"), .spans = 1,
		  .recorded_ns = 0 },
	};
	struct lp_view_opts o = { .view = LP_VIEW_TABLE, .sort = LP_SORT_NAME, .top = 2 };
	char *out;
	uint64_t sum = 0;

	some_rows(fx);
	fx->r.threads = th;
	fx->r.nthreads = 2;
	round_trip(fx);
	out = view_of(&fx->s, &o);
	/* By name: "a" before the hostile name ("bad..."), then "root" cut by --top. */
	assert_non_null(strstr(out, "\na [k=v, x=\\x01]"));
	assert_true(strstr(out, "\na [") < strstr(out, "\nbad\\nname\\t\\x1b[2J"));
	assert_null(strstr(out, "\nroot "));
	assert_non_null(strstr(out, "\n1 more rows not shown (--top, --min-total)\n"));
	free(out);
	o = (struct lp_view_opts){ .view = LP_VIEW_TABLE, .min_total_ns = 10000 };
	out = view_of(&fx->s, &o);
	assert_non_null(strstr(out, "\nroot "));
	assert_non_null(strstr(out, "\na [")); /* 12 calls: 12.66 us in all */
	assert_null(strstr(out, "\nbad"));
	free(out);

	o = (struct lp_view_opts){ .view = LP_VIEW_THREADS };
	out = view_of(&fx->s, &o);
	assert_non_null(strstr(out, "Threads: 2, recorded thread time 20.00 us\n"));
	assert_non_null(strstr(out, "evil\\x1b[31m"));
	assert_null(strchr(out, '\x1b'));
	free(out);

	o = (struct lp_view_opts){ .view = LP_VIEW_TREE };
	out = view_of(&fx->s, &o);
	assert_non_null(strstr(out, "  20.00 us    6.84 us        1  root\n"));
	assert_non_null(strstr(out, "  12.66 us   12.66 us       12   +-a\n"));
	assert_non_null(strstr(out, "   +-bad\\nname\\t\\x1b[2J"));
	assert_null(strchr(out, '\x1b'));
	free(out);

	o = (struct lp_view_opts){ .view = LP_VIEW_FOLDED };
	out = view_of(&fx->s, &o);
	assert_non_null(strstr(out, "root 6840\nroot;a 12660\nroot;bad\\nname"));
	/* The value is after the line's last space. */
	for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		char *sp = nl;

		while (sp > line && sp[-1] != ' ')
			sp--;
		sum += strtoull(sp, NULL, 10);
	}
	assert_int_equal(sum, fx->totals.recorded_ns);
	free(out);
}

/* Each is refused, whatever the rest of the file holds. */
static void test_bad_input(void **state)
{
	static const char *const bad[][2] = {
		{ "", "not a leanprofiler summary: the file is empty" },
		{ "{\"schema\": \"leanprofiler-summary/1\", \"events\": 3",
		  "not a leanprofiler summary: the JSON ends early (a truncated file?)" },
		{ "[1, 2]", "not a leanprofiler summary (not a JSON object)" },
		{ "{\"traceEvents\": []}", "not a leanprofiler summary (no \"schema\")" },
		{ "{\"schema\": \"leanprofiler-summary/2\"}",
		  "schema \"leanprofiler-summary/2\" is newer than this leanprofiler reads "
		  "(leanprofiler-summary/1): use a newer leanprofiler" },
		{ "{\"schema\": \"perf-data/1\"}",
		  "not a leanprofiler summary (schema \"perf-data/1\")" },
		{ "{\"schema\": \"leanprofiler-summary/1\"} {}",
		  "not a leanprofiler summary: not JSON (unexpected character at byte 37)" },
		{ "{\"schema\": \"leanprofiler-summary/1\", \"events\": 1}", "threads is missing" },
		{ "not json at all", "not a leanprofiler summary: not JSON (null expected at byte 1)" },
	};
	static const char good_head[] =
		"{\"schema\": \"leanprofiler-summary/1\", \"events\": 1, \"threads\": 1, "
		"\"window_ns\": 5, \"recorded_thread_time_ns\": 5, \"counter_total\": 0, ";
	static const char *const bad_tails[][2] = {
		{ "\"rows\": {}}", "rows is not an array" },
		{ "\"rows\": [{\"name\": \"a\", \"calls\": -1, \"self_ns\": 5, \"total_ns\": 5, "
		  "\"p95_ns\": 5}]}",
		  "rows[0].calls is negative" },
		{ "\"rows\": [{\"name\": 7, \"calls\": 1, \"self_ns\": 5, \"total_ns\": 5, "
		  "\"p95_ns\": 5}]}",
		  "rows[0].name is not a string" },
		{ "\"rows\": [{\"name\": \"a\", \"calls\": 1, \"self_ns\": 5.5, \"total_ns\": 5, "
		  "\"p95_ns\": 5}]}",
		  "rows[0].self_ns is not an integer" },
		{ "\"rows\": [{\"name\": \"a\", \"calls\": 1, \"self_ns\": 5, \"total_ns\": 5, "
		  "\"p95_ns\": 5, \"hist\": {\"sub_bits\": 7, \"buckets\": [[99999, 1]]}}]}",
		  "rows[0].hist.buckets[0] is not [index, count]" },
		{ "\"rows\": [{\"name\": \"a\", \"calls\": 1, \"self_ns\": 5, \"total_ns\": 5, "
		  "\"p95_ns\": 5, \"hist\": {\"sub_bits\": 6, \"buckets\": []}}]}",
		  "rows[0].hist.sub_bits is 6: this leanprofiler reads 7" },
		{ "\"rows\": [], \"paths\": {\"nodes\": [{\"parent\": 0, \"name\": \"a\", "
		  "\"calls\": 1, \"total_ns\": 1, \"self_ns\": 1}]}}",
		  "paths.nodes[0].parent is out of range" },
		{ "\"rows\": [], \"paths\": {\"nodes\": [{\"parent\": -1, \"name\": \"a\", "
		  "\"calls\": 1, \"total_ns\": 1, \"self_ns\": 1}, {\"parent\": -1, \"name\": \"b\", "
		  "\"calls\": 1, \"total_ns\": 1, \"self_ns\": 1}, {\"parent\": 0, \"name\": \"c\", "
		  "\"calls\": 1, \"total_ns\": 1, \"self_ns\": 1}]}}",
		  "paths.nodes[2] is not in pre-order (its parent is not the latest node above)" },
		{ "\"rows\": [], \"thread_list\": [{\"pid\": 1, \"tid\": 4294967296, \"spans\": 1, "
		  "\"recorded_ns\": 1}]}",
		  "thread_list[0].tid is past 2^32" },
	};
	struct lp_summary s;
	char buf[1024], problem[LP_SUMMARY_PROBLEM_MAX];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(lp_summary_parse(bad[i][0], strlen(bad[i][0]), "bad.json", &s,
						  problem, sizeof(problem)),
				 -EINVAL);
		assert_string_equal(problem, bad[i][1]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad_tails); i++) {
		snprintf(buf, sizeof(buf), "%s%s", good_head, bad_tails[i][0]);
		assert_int_equal(lp_summary_parse(buf, strlen(buf), "bad.json", &s, problem,
						  sizeof(problem)),
				 -EINVAL);
		assert_string_equal(problem, bad_tails[i][1]);
	}
	/* The smallest summary that is one. */
	snprintf(buf, sizeof(buf), "%s\"rows\": []}\n", good_head);
	assert_int_equal(lp_summary_parse(buf, strlen(buf), "ok.json", &s, problem, sizeof(problem)),
			 0);
	assert_false(s.has_paths);
	lp_summary_free(&s);
	/* Written before the decoder's last four counts: they read as 0, nothing to say. */
	snprintf(buf, sizeof(buf),
		 "%s\"input\": {\"malformed_records\": 1, \"truncated_strings\": 2, "
		 "\"unreadable_strings\": 3}, \"rows\": []}\n",
		 good_head);
	assert_int_equal(lp_summary_parse(buf, strlen(buf), "old.json", &s, problem,
					  sizeof(problem)),
			 0);
	assert_int_equal(s.rep.malformed, 1);
	assert_int_equal(s.rep.unreadable, 3);
	assert_int_equal(s.rep.records + s.rep.from_file + s.rep.unknown_literal +
				 s.rep.abi_mismatch,
			 0);
	lp_summary_free(&s);
	/* ... and one of them that is not a count is refused. */
	snprintf(buf, sizeof(buf), "%s\"input\": {\"abi_mismatch_events\": -1}, \"rows\": []}\n",
		 good_head);
	assert_int_equal(lp_summary_parse(buf, strlen(buf), "bad.json", &s, problem,
					  sizeof(problem)),
			 -EINVAL);
	assert_string_equal(problem, "input.abi_mismatch_events is negative");
}

/* Mann-Whitney z from histograms, against the textbook value. */
static void test_rank_z(void **state)
{
	struct lp_shist a = { 0 }, b = { 0 };

	(void)state;
	/* Values below 256 ns each have their bucket: a = {1,2,3}, b = {4,5,6}. */
	for (unsigned v = 1; v <= 3; v++) {
		assert_int_equal(lp_shist_add(&a, lp_hist_index(v), 1), 0);
		assert_int_equal(lp_shist_add(&b, lp_hist_index(v + 3), 1), 0);
	}
	/* U = 9, mean 4.5, variance 9 * 7 / 12, continuity 0.5: z = 4 / sqrt(5.25). */
	assert_true(fabs(lp_rank_z(&a, &b) - 4.0 / sqrt(5.25)) < 1e-9);
	assert_true(fabs(lp_rank_z(&b, &a) + 4.0 / sqrt(5.25)) < 1e-9);
	assert_true(lp_rank_z(&a, &a) == 0);
	lp_shist_free(&b);
	assert_true(lp_rank_z(&a, &b) == 0);
	/* Everything in one bucket: no information, z 0. */
	assert_int_equal(lp_shist_add(&b, 7, 5), 0);
	lp_shist_free(&a);
	assert_int_equal(lp_shist_add(&a, 7, 5), 0);
	assert_true(lp_rank_z(&a, &b) == 0);
	lp_shist_free(&a);
	lp_shist_free(&b);
	/* The bucket index and its low end agree with each other. */
	for (uint64_t v = 1; v < (1ULL << 40); v = v * 3 + 1) {
		unsigned i = lp_hist_index(v);

		assert_true(lp_hist_bucket_low(i) <= v);
		assert_true(i + 1 == LP_HIST_INDEXES || lp_hist_bucket_low(i + 1) > v);
	}
}

/* A summary of rows given as name, calls and per-call self = total durations. */
struct spec_row {
	const char *name;
	int calls;
	uint64_t ns;  /* each call's duration */
	uint64_t spread; /* call i lasts ns + (i % 5) * spread */
};

static void summary_of(const struct spec_row *rows, size_t n, struct lp_summary *s)
{
	struct lp_buf b = { 0 };
	char tmp[512];

	lp_buf_put(&b, tmp, (size_t)snprintf(tmp, sizeof(tmp),
					     "{\"schema\": \"leanprofiler-summary/1\", "
					     "\"events\": 1, \"threads\": 1, \"window_ns\": 1, "
					     "\"recorded_thread_time_ns\": 1, \"counter_total\": 0, "
					     "\"rows\": ["));
	for (size_t i = 0; i < n; i++) {
		struct lp_shist h = { 0 };
		uint64_t total = 0, *d = calloc((size_t)rows[i].calls, sizeof(*d));

		for (int k = 0; k < rows[i].calls; k++) {
			d[k] = rows[i].ns + (uint64_t)(k % 5) * rows[i].spread;
			total += d[k];
			assert_int_equal(lp_shist_add(&h, lp_hist_index(d[k]), 1), 0);
		}
		lp_buf_put(&b, tmp, (size_t)snprintf(tmp, sizeof(tmp),
				"%s{\"name\": \"%s\", \"calls\": %d, \"self_ns\": %llu, "
				"\"total_ns\": %llu, \"p95_ns\": %llu, \"hist\": {\"sub_bits\": 7, "
				"\"buckets\": [", i ? ", " : "", rows[i].name, rows[i].calls,
				(unsigned long long)total, (unsigned long long)total,
				(unsigned long long)lp_percentile(d, (size_t)rows[i].calls, 95)));
		for (int pass = 0; pass < 2; pass++) {
			for (uint32_t k = 0; k < h.n; k++)
				lp_buf_put(&b, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%s[%u, %llu]",
								     k ? ", " : "", h.b[k].index,
								     (unsigned long long)h.b[k].count));
			const char *end = pass ? "]}}" : "], \"self_buckets\": [";

			lp_buf_put(&b, end, strlen(end));
		}
		lp_shist_free(&h);
		free(d);
	}
	lp_buf_put(&b, "]}", 2);
	assert_int_equal(lp_summary_parse(b.p, b.len, "spec.json", s, tmp, sizeof(tmp)), 0);
	lp_buf_free(&b);
}

static char *diff_of(const struct lp_summary *a, const struct lp_summary *b, double threshold,
		     bool json, size_t *regressions)
{
	struct lp_diff_opts o = { .threshold = threshold, .json = json };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(lp_diff_print(f, a, b, &o, regressions), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_diff_rule(void **state)
{
	static const struct spec_row base[] = {
		{ "slow", 20, 1000000, 10000 },  { "more", 20, 1000000, 10000 },
		{ "few", 3, 1000000, 0 },       { "steady", 20, 2000000, 20000 },
		{ "gone", 5, 1000, 0 },
	};
	static const struct spec_row now[] = {
		{ "slow", 20, 3000000, 10000 },  { "more", 40, 1000000, 10000 },
		{ "few", 3, 3000000, 0 },       { "steady", 20, 2100000, 20000 },
		{ "new", 5, 1000, 0 },
	};
	struct lp_summary a, b;
	size_t regressions;
	char *out;
	json_object *o, *rows;

	(void)state;
	summary_of(base, ARRAY_SIZE(base), &a);
	summary_of(now, ARRAY_SIZE(now), &b);
	out = diff_of(&a, &a, LP_DIFF_THRESHOLD, false, &regressions);
	assert_int_equal(regressions, 0);
	assert_non_null(strstr(out, "\nno regression: "));
	free(out);

	out = diff_of(&a, &b, LP_DIFF_THRESHOLD, false, &regressions);
	assert_int_equal(regressions, 1);
	assert_non_null(
		strstr(out, "\nregression: slow: self time +196.1% (20.40 ms -> 60.40 ms, rank test z "));
	assert_non_null(strstr(out, ", P95 +"));
	assert_null(strstr(out, "regression: more"));  /* twice the calls, none slower */
	assert_null(strstr(out, "regression: few"));   /* 3 calls: cannot say */
	assert_null(strstr(out, "regression: steady")); /* +5% */
	assert_non_null(strstr(out, "too few calls\n"));
	assert_non_null(strstr(out, "  added\n"));
	assert_non_null(strstr(out, "  removed\n"));
	/* Sorted by the change of self time: slow (+40 ms) first. */
	assert_true(strstr(out, "\nslow ") < strstr(out, "\nmore "));
	assert_non_null(strstr(out, "\n1 regression: "));
	free(out);

	/* A threshold of 4%: steady's 4.9% is now past it, and its calls are all slower. */
	out = diff_of(&a, &b, 4, false, &regressions);
	assert_int_equal(regressions, 2);
	assert_non_null(strstr(out, "\nregression: steady: self time +4.9%"));
	free(out);

	out = diff_of(&a, &b, LP_DIFF_THRESHOLD, true, &regressions);
	o = json_tokener_parse(out);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "schema")),
			    LP_DIFF_SCHEMA);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "regressions")), 1);
	rows = json_object_object_get(o, "rows");
	assert_int_equal(json_object_array_length(rows), 6);
	{
		json_object *slow = json_object_array_get_idx(rows, 0);

		assert_string_equal(json_object_get_string(json_object_object_get(slow, "name")),
				    "slow");
		assert_true(json_object_get_boolean(json_object_object_get(slow, "regression")));
		assert_true(json_object_get_double(json_object_object_get(
				    json_object_object_get(slow, "rank_z"), "self")) > LP_DIFF_Z);
	}
	json_object_put(o);
	free(out);
	lp_summary_free(&a);
	lp_summary_free(&b);
}

/*
 * A summary of one row "q": 20 calls of (cpu, blocked) ns each, recorded
 * with --off-cpu, written and read back.
 */
static void off_cpu_summary(uint64_t cpu, uint64_t blocked, struct lp_summary *out)
{
	struct strtab *st = strtab_new();
	struct lp_stats *stats = lp_stats_new();
	struct lp_nest_totals t = { .spans = 20, .threads = 1, .sched_measured = 20 };
	struct lp_report r = { .st = st, .totals = &t, .counter_name = "c", .off_cpu = true };
	struct lp_span sp = { .pid = 1, .tid = 1, .total_ns = cpu + blocked, .has_sched = true,
			      .sched = { .cpu_ns = cpu, .blocked_ns = blocked } };
	char *text, problem[LP_SUMMARY_PROBLEM_MAX];

	assert_non_null(st);
	assert_non_null(stats);
	sp.name = ut_id(st, "q");
	for (int i = 0; i < 20; i++) {
		sp.total_ns = cpu + blocked + (uint64_t)i;
		sp.self_ns = sp.total_ns;
		sp.sched.cpu_ns = cpu + (uint64_t)i;
		assert_int_equal(lp_stats_add(stats, &sp), 0);
		t.recorded_ns += sp.total_ns;
	}
	r.ngroups = lp_stats_sorted(stats, &r.groups);
	text = ut_summary_text(&r);
	assert_int_equal(lp_summary_parse(text, strlen(text), "q.json", out, problem,
					  sizeof(problem)),
			 0);
	free(text);
	lp_stats_free(stats);
	strtab_free(st);
}

/* A row that regressed says where its time per call went, in the text and in the JSON. */
static void test_diff_off_cpu(void **state)
{
	struct lp_summary a, b;
	size_t regressions;
	char *out;

	(void)state;
	off_cpu_summary(1000000, 0, &a);
	off_cpu_summary(1000000, 2000000, &b);
	out = diff_of(&a, &b, 10, false, &regressions);
	assert_int_equal(regressions, 1);
	assert_non_null(strstr(out, "; calls 20 -> 20; per call: cpu 1.00 ms -> 1.00 ms, runq "
				    "0.00 ns -> 0.00 ns, blocked 0.00 ns -> 2.00 ms\n"));
	free(out);
	out = diff_of(&a, &b, 10, true, &regressions);
	assert_non_null(strstr(out, "\"total_blocked_ns\":40000000"));
	free(out);
	/* One side without --off-cpu: nothing to compare the split with. */
	b.rep.off_cpu = false;
	out = diff_of(&a, &b, 10, false, &regressions);
	assert_null(strstr(out, "per call"));
	free(out);
	lp_summary_free(&a);
	lp_summary_free(&b);
}

/* The values counted before parsing: separators in strings (escaped quotes too) are not. */
static void test_json_values_counted(void **state)
{
	static const struct {
		const char *text;
		size_t want;
	} cases[] = {
		{ "0", 1 },
		{ "[0,0,0]", 5 },                 /* 2 for the array, 2 commas, 1 */
		{ "{\"a\":1,\"b\":[]}", 8 },      /* object 2, 2 colons, 1 comma, array 2, 1 */
		{ "\"a,b:[{\"", 1 },
		{ "[\"x\\\",[\",1]", 4 },         /* the escaped quote does not end the string */
		{ "\"\\\\\",[", 4 },              /* an escaped backslash does */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (lp_json_values(cases[i].text, strlen(cases[i].text), 100) != cases[i].want)
			fail_msg("'%s': %zu values, expected %zu", cases[i].text,
				 lp_json_values(cases[i].text, strlen(cases[i].text), 100),
				 cases[i].want);
	/* It stops once past max: a 25 MB file costs no more than what is looked at. */
	assert_int_equal(lp_json_values("[0,0,0,0,0,0,0,0]", 17, 3), 4);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_values_counted),
		T(test_table_round_trip), T(test_counter_name_from_file), T(test_approximate_rows),
		T(test_off_cpu_round_trip),
		T(test_off_cpu_steal),
		T(test_views),
		T(test_bad_input),        T(test_rank_z),           T(test_diff_rule),
		T(test_diff_off_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
