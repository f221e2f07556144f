// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"
#include "text.h"

static uint64_t lost_total(const struct lp_loss *l)
{
	return l->enter + l->exit;
}

/* "name [meta]" made safe for a terminal and cut to the Name column. */
static void name_cell(const struct lp_report *r, const struct lp_group *g, char *out, size_t sz)
{
	struct lp_buf b = { 0 };
	size_t len;
	const char *s = strtab_str(r->st, g->name, &len);

	lp_text_display(&b, s, len);
	if (g->meta) {
		s = strtab_str(r->st, g->meta, &len);
		lp_buf_put(&b, " [", 2);
		lp_text_display(&b, s, len);
		lp_buf_put(&b, "]", 1);
	}
	if (b.p)
		lp_fit_columns(b.p, b.len, LP_TABLE_NAME_COLS, true, out, sz);
	else
		lp_fit_columns("", 0, LP_TABLE_NAME_COLS, true, out, sz);
	lp_buf_free(&b);
}

static size_t approximate_rows(const struct lp_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ngroups; i++)
		n += !lp_group_p95_exact(r->groups[i]);
	return n;
}

/* What the table's resource figures cover, when it is not the whole launched command. */
static const char *resources_scope(const struct lp_report *r)
{
	if (r->mode && !strcmp(r->mode, "attach"))
		return r->res.exited ? " (attached PID, until its exit)"
				     : " (attached PID, during recording)";
	if (r->mode && !strcmp(r->mode, "launch") && r->exit_status < 0)
		return " (command still running: so far, its children not counted)";
	return "";
}

void lp_report_table(FILE *out, const struct lp_report *r)
{
	const struct lp_nest_totals *t = r->totals;
	uint64_t window = t->spans ? t->last_ns - t->first_ns : 0;
	char a[32], b[32], c[32], d[32], name[LP_TABLE_NAME_COLS * 4 + 8];

	lp_fmt_duration(window, a, sizeof(a));
	lp_fmt_duration(t->recorded_ns, b, sizeof(b));
	fprintf(out, "Lean profile: %" PRIu64 " events, %" PRIu32 " threads, window %s,\n", t->spans,
		t->threads, a);
	fprintf(out, "recorded thread time %s, %" PRIu64 " %s\n", b, t->counter_total,
		r->counter_name);
	if (r->res.valid) {
		if (r->res.has_peak_rss)
			snprintf(c, sizeof(c), "%" PRIu64 " KiB", r->res.peak_rss_kib);
		else
			snprintf(c, sizeof(c), "not measured");
		fprintf(out,
			"Process resources%s: user CPU %" PRIu64 " ms, system CPU %" PRIu64
			" ms, peak RSS %s, context switches %" PRIu64 "\n",
			resources_scope(r), r->res.user_ns / 1000000, r->res.system_ns / 1000000, c,
			r->res.voluntary_switches + r->res.involuntary_switches);
	} else
		fprintf(out, "Process resources: not measured for %s\n",
			r->mode && !strcmp(r->mode, "all-processes") ? "--all-processes"
								    : "this recording");
	if (r->self.valid && r->show_self) {
		fprintf(out,
			"Profiler: user CPU %" PRIu64 " ms, system CPU %" PRIu64
			" ms, peak RSS %" PRIu64 " KiB",
			r->self.user_ns / 1000000, r->self.system_ns / 1000000, r->self.peak_rss_kib);
		if (r->bpf_runs)
			fprintf(out, ", BPF %" PRIu64 " ns per event", r->bpf_run_ns / r->bpf_runs);
		if (r->follow.pauses)
			fprintf(out,
				", paused for new files %" PRIu64 " time%s (%" PRIu64
				" us in all, at most %" PRIu64 " us)",
				r->follow.pauses, r->follow.pauses > 1 ? "s" : "",
				r->follow.pause_total_ns / 1000, r->follow.pause_max_ns / 1000);
		fputc('\n', out);
	}
	if (approximate_rows(r))
		fprintf(out,
			"P95 marked ~ comes from a histogram (within %.1f%%): a row keeps at most "
			"%d durations with --summary-only\n",
			100.0 * LP_HIST_REL_ERROR, LP_SUMMARY_ONLY_DURATIONS);
	if (r->pairs && (r->pairs->unmatched_keyed || r->pairs->too_many_tracks ||
			 r->pairs->too_deep || r->pairs->bad_spec || r->pairs->bad_tid))
		fprintf(out,
			"Span pairs: %" PRIu64 " keyed exits without an open span, %" PRIu64
			" entries past %d tracks, %" PRIu64 " past depth %d, %" PRIu64
			" malformed records\n",
			r->pairs->unmatched_keyed, r->pairs->too_many_tracks, LP_PAIRS_MAX_TRACKS,
			r->pairs->too_deep, LP_PAIRS_MAX_OPEN, r->pairs->bad_spec + r->pairs->bad_tid);
	if (lost_total(&r->loss))
		fprintf(out,
			"Lost: %" PRIu64 " events (%" PRIu64 " entries, %" PRIu64
			" exits): the ring buffer was full; affected spans are marked uncertain. "
			"Try a larger --buffer-size.\n",
			lost_total(&r->loss), r->loss.enter, r->loss.exit);
	if (t->unterminated || t->unmatched_exits || t->too_deep || t->started_before)
		fprintf(out,
			"Unterminated spans: %" PRIu64 ", started before recording: %" PRIu64
			", exits without an open span: %" PRIu64 ", enters past depth %d: %" PRIu64
			"\n",
			t->unterminated, t->started_before, t->unmatched_exits, LP_NEST_MAX_DEPTH,
			t->too_deep);
	fputc('\n', out);
	fputs("Name                                      Self       Total  Calls      Mean       P95"
	      "  Self HB      %\n",
	      out);
	for (size_t i = 0; i < r->ngroups; i++) {
		struct lp_group *g = r->groups[i];
		char hb[32], pct[16];

		name_cell(r, g, name, sizeof(name));
		lp_fmt_duration(g->self_ns, a, sizeof(a));
		lp_fmt_duration(g->total_ns, b, sizeof(b));
		lp_fmt_duration(g->calls ? g->total_ns / g->calls : 0, c, sizeof(c));
		d[0] = '~';
		lp_fmt_duration(lp_group_p95(g), d + !lp_group_p95_exact(g), sizeof(d) - 1);
		if (g->counter_calls)
			snprintf(hb, sizeof(hb), "%" PRIu64, g->counter_self);
		else
			snprintf(hb, sizeof(hb), "-");
		if (t->recorded_ns)
			snprintf(pct, sizeof(pct), "%.1f%%",
				 100.0 * (double)g->self_ns / (double)t->recorded_ns);
		else
			snprintf(pct, sizeof(pct), "-");
		/* An uncertain row's self time may be wrong: say so on the row. */
		fprintf(out, "%s%10s%11s%7" PRIu64 "%10s%10s%9s%7s%s\n", name, a, b, g->calls, c, d,
			hb, pct, g->uncertain ? "  (uncertain)" : "");
	}
}

static json_object *jstr(const char *s, size_t len)
{
	struct lp_buf b = { 0 };
	json_object *o;

	/* json-c passes invalid UTF-8 through: clean it first. */
	if (lp_utf8_sanitize(&b, s, len))
		return NULL;
	o = json_object_new_string_len(b.p ? b.p : "", (int)b.len);
	lp_buf_free(&b);
	return o;
}

json_object *lp_json_text(const char *s, size_t len)
{
	return jstr(s, len);
}

static json_object *jid(const struct strtab *st, uint32_t id)
{
	size_t len;
	const char *s = strtab_str(st, id, &len);

	return jstr(s, len);
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static json_object *meta_object(const struct strtab *st, uint32_t meta)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	json_object *o = json_object_new_object();
	size_t len, n;
	const char *text = strtab_str(st, meta, &len);

	n = lp_meta_parse(text, len, items, ARRAY_SIZE(items));
	lp_meta_keys(items, n, NULL, keys);
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, keys[i].s, jstr(items[i].val, items[i].val_len));
	return o;
}

/* A row's calls bucketed (lp_hist_index()): by duration (inclusive) and by self time. */
struct row_hist {
	struct lp_shist total, self;
};

static void put_buckets(struct printbuf *pb, const struct lp_shist *h)
{
	char pair[48];

	printbuf_strappend(pb, "[");
	for (uint32_t i = 0; i < h->n; i++) {
		int n = snprintf(pair, sizeof(pair), "%s[%" PRIu32 ",%" PRIu64 "]", i ? "," : "",
				 h->b[i].index, h->b[i].count);

		printbuf_memappend(pb, pair, n);
	}
	printbuf_strappend(pb, "]");
}

static int hist_to_string(json_object *jso, struct printbuf *pb, int level, int flags)
{
	const struct row_hist *h = json_object_get_userdata(jso);
	char head[32];
	int n = snprintf(head, sizeof(head), "{\"sub_bits\":%d,\"buckets\":", LP_HIST_SUB_BITS);

	printbuf_memappend(pb, head, n);
	put_buckets(pb, &h->total);
	printbuf_strappend(pb, ",\"self_buckets\":");
	put_buckets(pb, &h->self);
	printbuf_strappend(pb, "}");
	return 0;
}

static void hist_free(json_object *jso, void *userdata)
{
	struct row_hist *h = userdata;

	lp_shist_free(&h->total);
	lp_shist_free(&h->self);
	free(h);
}

/*
 * The row's "hist" object: {"sub_bits":7,"buckets":[[index,count],...],
 * "self_buckets":[...]}, on one line. It is held as the smallest json-c value
 * with a serializer of its own, not as objects and arrays: a summary of 100k
 * rows would hold a million json-c objects more (~1.5 KiB a row) and print
 * every number on a line of its own. NULL on ENOMEM.
 */
static json_object *hist_object(const struct lp_group *g)
{
	struct row_hist *h = calloc(1, sizeof(*h));
	json_object *o = h ? json_object_new_int(0) : NULL;

	if (!o || lp_group_hist(g, &h->total) || lp_group_self_hist(g, &h->self)) {
		json_object_put(o);
		if (h)
			hist_free(NULL, h);
		return NULL;
	}
	json_object_set_serializer(o, hist_to_string, h, hist_free);
	return o;
}

static json_object *loss_object(const struct lp_report *r)
{
	json_object *o = json_object_new_object();

	add_u64(o, "total", lost_total(&r->loss));
	add_u64(o, "enter", r->loss.enter);
	add_u64(o, "exit", r->loss.exit);
	add_u64(o, "string", r->loss.string);
	add_u64(o, "thread_record", r->loss.thread);
	add_u64(o, "no_task_storage", r->loss.no_storage);
	add_u64(o, "process_records", r->loss.task);
	return o;
}

char *lp_report_summary_json(const struct lp_report *r)
{
	const struct lp_nest_totals *t = r->totals;
	json_object *root = json_object_new_object(), *o, *arr;
	char *text;

	json_object_object_add(root, "schema", json_object_new_string(LP_SUMMARY_SCHEMA));
	arr = json_object_new_array();
	for (char *const *a = r->argv; a && *a; a++)
		json_object_array_add(arr, jstr(*a, strlen(*a)));
	json_object_object_add(root, "command", arr);
	json_object_object_add(root, "mode", json_object_new_string(r->mode ? r->mode : "launch"));
	if (r->binary)
		json_object_object_add(root, "binary", jstr(r->binary, strlen(r->binary)));
	json_object_object_add(root, "pid", json_object_new_int(r->pid));
	o = json_object_new_object();
	add_u64(o, "start_ns", r->base_ns);
	add_u64(o, "end_ns", r->end_ns);
	json_object_object_add(o, "end_reason",
			       json_object_new_string(r->end_reason ? r->end_reason : "unknown"));
	json_object_object_add(root, "recording", o);
	arr = json_object_new_array();
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct lp_report_process *p = &r->procs[i];
		json_object *row = json_object_new_object();

		json_object_object_add(row, "pid", json_object_new_int64(p->pid));
		json_object_object_add(row, "ppid", json_object_new_int64(p->ppid));
		json_object_object_add(row, "comm", jid(r->st, p->comm));
		json_object_object_add(row, "origin", json_object_new_string(p->origin));
		json_object_object_add(row, "alive_at_end", json_object_new_boolean(p->alive));
		if (p->privileged)
			json_object_object_add(row, "left_recording",
					       json_object_new_string("exec of a program that gains "
								      "privileges"));
		json_object_array_add(arr, row);
	}
	json_object_object_add(root, "processes", arr);
	json_object_object_add(root, "exit_status", json_object_new_int(r->exit_status));
	json_object_object_add(root, "counter_name", json_object_new_string(r->counter_name));
	add_u64(root, "events", t->spans);
	add_u64(root, "threads", t->threads);
	add_u64(root, "window_ns", t->spans ? t->last_ns - t->first_ns : 0);
	add_u64(root, "recorded_thread_time_ns", t->recorded_ns);
	add_u64(root, "counter_total", t->counter_total);
	add_u64(root, "unterminated_spans", t->unterminated);
	add_u64(root, "started_before_recording", t->started_before);
	add_u64(root, "uncertain_spans", t->uncertain);
	add_u64(root, "unmatched_exits", t->unmatched_exits);
	add_u64(root, "too_deep_enters", t->too_deep);
	add_u64(root, "max_depth", LP_NEST_MAX_DEPTH);
	o = json_object_new_object();
	add_u64(o, "enter", r->enters);
	add_u64(o, "exit", r->exits);
	json_object_object_add(root, "events_received", o);
	json_object_object_add(root, "lost_events", loss_object(r));
	add_u64(root, "ring_buffer_bytes", r->buffer_bytes);
	o = json_object_new_object();
	add_u64(o, "malformed_records", r->malformed);
	add_u64(o, "truncated_strings", r->truncated);
	add_u64(o, "unreadable_strings", r->unreadable);
	json_object_object_add(root, "input", o);

	o = json_object_new_object();
	json_object_object_add(o, "available", json_object_new_boolean(r->res.valid));
	if (r->res.valid) {
		json_object_object_add(o, "scope", json_object_new_string(r->res.scope));
		add_u64(o, "user_cpu_ns", r->res.user_ns);
		add_u64(o, "system_cpu_ns", r->res.system_ns);
		if (r->res.has_peak_rss)
			add_u64(o, "peak_rss_kib", r->res.peak_rss_kib);
		else
			json_object_object_add(o, "peak_rss_kib", NULL);
		add_u64(o, "voluntary_context_switches", r->res.voluntary_switches);
		add_u64(o, "involuntary_context_switches", r->res.involuntary_switches);
		json_object_object_add(o, "until_exit", json_object_new_boolean(r->res.exited));
	}
	json_object_object_add(root, "resources", o);

	o = json_object_new_object();
	json_object_object_add(o, "available", json_object_new_boolean(r->self.valid));
	if (r->self.valid) {
		add_u64(o, "user_cpu_ns", r->self.user_ns);
		add_u64(o, "system_cpu_ns", r->self.system_ns);
		add_u64(o, "peak_rss_kib", r->self.peak_rss_kib);
		add_u64(o, "end_to_figures_ns", r->finish_ns);
	}
	if (r->bpf_runs) {
		add_u64(o, "bpf_program_runs", r->bpf_runs);
		add_u64(o, "bpf_program_run_time_ns", r->bpf_run_ns);
	}
	add_u64(o, "processes_paused", r->follow.pauses);
	add_u64(o, "paused_total_ns", r->follow.pause_total_ns);
	add_u64(o, "paused_max_ns", r->follow.pause_max_ns);
	add_u64(o, "files_attached_late", r->follow.late_files);
	json_object_object_add(root, "profiler", o);

	if (r->pairs) {
		o = json_object_new_object();
		add_u64(o, "specs", r->nspecs);
		add_u64(o, "reentry_closed", r->pairs->reentry_closed);
		add_u64(o, "unmatched_keyed_exits", r->pairs->unmatched_keyed);
		add_u64(o, "too_many_tracks", r->pairs->too_many_tracks);
		add_u64(o, "too_deep_entries", r->pairs->too_deep);
		add_u64(o, "malformed_records", r->pairs->bad_spec + r->pairs->bad_tid);
		json_object_object_add(root, "span_pairs", o);
	}

	arr = json_object_new_array();
	for (size_t i = 0; i < r->ngroups; i++) {
		struct lp_group *g = r->groups[i];
		json_object *row = json_object_new_object();
		size_t len;
		const char *meta = strtab_str(r->st, g->meta, &len);

		json_object_object_add(row, "name", jid(r->st, g->name));
		json_object_object_add(row, "meta_text", jstr(meta, len));
		json_object_object_add(row, "meta", meta_object(r->st, g->meta));
		add_u64(row, "calls", g->calls);
		add_u64(row, "self_ns", g->self_ns);
		add_u64(row, "total_ns", g->total_ns);
		add_u64(row, "mean_ns", g->calls ? g->total_ns / g->calls : 0);
		add_u64(row, "p95_ns", lp_group_p95(g));
		json_object_object_add(row, "p95_exact",
				       json_object_new_boolean(lp_group_p95_exact(g)));
		add_u64(row, "min_ns", g->calls ? g->min_ns : 0);
		add_u64(row, "max_ns", g->max_ns);
		if (g->counter_calls) {
			add_u64(row, "self_counter", g->counter_self);
			add_u64(row, "total_counter", g->counter_total);
		} else {
			json_object_object_add(row, "self_counter", NULL);
			json_object_object_add(row, "total_counter", NULL);
		}
		json_object_object_add(row, "self_percent",
				       json_object_new_double(t->recorded_ns
								      ? 100.0 * (double)g->self_ns /
										(double)t->recorded_ns
								      : 0.0));
		add_u64(row, "unterminated", g->unterminated);
		add_u64(row, "started_before_recording", g->started_before);
		add_u64(row, "uncertain", g->uncertain);
		json_object_object_add(row, "hist", hist_object(g));
		json_object_array_add(arr, row);
	}
	json_object_object_add(root, "rows", arr);

	arr = json_object_new_array();
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct lp_report_thread *th = &r->threads[i];
		json_object *row = json_object_new_object();

		json_object_object_add(row, "pid", json_object_new_int64(th->pid));
		json_object_object_add(row, "tid", json_object_new_int64(th->tid));
		json_object_object_add(row, "name", jid(r->st, th->name));
		add_u64(row, "spans", th->spans);
		add_u64(row, "recorded_ns", th->recorded_ns);
		add_u64(row, "lost_events", th->lost);
		add_u64(row, "max_depth", th->max_depth);
		json_object_array_add(arr, row);
	}
	json_object_object_add(root, "thread_list", arr);

	o = json_object_new_object();
	if (r->trace_path)
		json_object_object_add(o, "trace", jstr(r->trace_path, strlen(r->trace_path)));
	json_object_object_add(root, "files", o);

	/* What the table showed that no figure says: `report` prints the same table. */
	o = json_object_new_object();
	json_object_object_add(o, "profiler_line",
			       json_object_new_boolean(r->self.valid && r->show_self));
	json_object_object_add(root, "table", o);
	if (r->paths)
		json_object_object_add(root, "paths", lp_paths_json(r->paths, r->st));

	text = strdup(json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	if (!text)
		errno = ENOMEM;
	return text;
}

char *lp_report_other_data_json(const struct lp_report *r)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();
	char *text;

	json_object_object_add(root, "generator", json_object_new_string("leanprofiler"));
	for (char *const *a = r->argv; a && *a; a++)
		json_object_array_add(arr, jstr(*a, strlen(*a)));
	json_object_object_add(root, "command", arr);
	json_object_object_add(root, "clock", json_object_new_string("CLOCK_MONOTONIC"));
	add_u64(root, "base_ns", r->base_ns);
	json_object_object_add(root, "lost_events", loss_object(r));
	add_u64(root, "end_ns", r->end_ns);
	add_u64(root, "unterminated_spans", r->totals->unterminated);
	add_u64(root, "started_before_recording", r->totals->started_before);
	add_u64(root, "uncertain_spans", r->totals->uncertain);
	text = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return text;
}
