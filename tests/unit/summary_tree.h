/* SPDX-License-Identifier: MIT */
/*
 * The reference for the streamed summary writer: the summary JSON as
 * lp_report_summary_json() built it until commit 193dd28, as one json-c tree
 * (kept verbatim but for names). test_report.c checks that the streamed
 * summary has the same members in the same order, with the same values and
 * the same number texts, apart from what came later (the "groups" object and
 * each row's "folded"). Include after report.h and json-c.
 */
#ifndef LP_TEST_SUMMARY_TREE_H
#define LP_TEST_SUMMARY_TREE_H

#include <errno.h>

#include "meta.h"
#include "text.h"

static json_object *tree_str(const char *s, size_t len)
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

static json_object *tree_id(const struct strtab *st, uint32_t id)
{
	size_t len;
	const char *s = strtab_str(st, id, &len);

	return tree_str(s, len);
}

static void tree_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static json_object *tree_meta(const struct strtab *st, uint32_t meta)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	json_object *o = json_object_new_object();
	size_t len, n;
	const char *text = strtab_str(st, meta, &len);

	n = lp_meta_parse(text, len, items, ARRAY_SIZE(items));
	lp_meta_keys(items, n, NULL, keys);
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, keys[i].s, tree_str(items[i].val, items[i].val_len));
	return o;
}

static json_object *tree_loss(const struct lp_report *r)
{
	json_object *o = json_object_new_object();

	tree_u64(o, "total", r->loss.enter + r->loss.exit);
	tree_u64(o, "enter", r->loss.enter);
	tree_u64(o, "exit", r->loss.exit);
	tree_u64(o, "string", r->loss.string);
	tree_u64(o, "thread_record", r->loss.thread);
	tree_u64(o, "no_task_storage", r->loss.no_storage);
	tree_u64(o, "process_records", r->loss.task);
	return o;
}

static char *tree_summary_json(const struct lp_report *r)
{
	const struct lp_nest_totals *t = r->totals;
	json_object *root = json_object_new_object(), *o, *arr;
	char *text;

	json_object_object_add(root, "schema", json_object_new_string(LP_SUMMARY_SCHEMA));
	arr = json_object_new_array();
	for (char *const *a = r->argv; a && *a; a++)
		json_object_array_add(arr, tree_str(*a, strlen(*a)));
	json_object_object_add(root, "command", arr);
	json_object_object_add(root, "mode", json_object_new_string(lp_mode_name(r->mode)));
	if (r->binary)
		json_object_object_add(root, "binary", tree_str(r->binary, strlen(r->binary)));
	json_object_object_add(root, "pid", json_object_new_int(r->pid));
	o = json_object_new_object();
	tree_u64(o, "start_ns", r->base_ns);
	tree_u64(o, "end_ns", r->end_ns);
	json_object_object_add(o, "end_reason",
			       json_object_new_string(lp_end_reason_name(r->end_reason)));
	json_object_object_add(root, "recording", o);
	arr = json_object_new_array();
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct lp_report_process *p = &r->procs[i];
		json_object *row = json_object_new_object();

		json_object_object_add(row, "pid", json_object_new_int64(p->pid));
		json_object_object_add(row, "ppid", json_object_new_int64(p->ppid));
		json_object_object_add(row, "comm", tree_id(r->st, p->comm));
		json_object_object_add(row, "origin", json_object_new_string(lp_origin_name(p->origin)));
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
	tree_u64(root, "events", t->spans);
	tree_u64(root, "threads", t->threads);
	tree_u64(root, "window_ns", t->spans ? t->last_ns - t->first_ns : 0);
	tree_u64(root, "recorded_thread_time_ns", t->recorded_ns);
	tree_u64(root, "counter_total", t->counter_total);
	tree_u64(root, "unterminated_spans", t->unterminated);
	tree_u64(root, "started_before_recording", t->started_before);
	tree_u64(root, "uncertain_spans", t->uncertain);
	tree_u64(root, "unmatched_exits", t->unmatched_exits);
	tree_u64(root, "too_deep_enters", t->too_deep);
	tree_u64(root, "max_depth", LP_NEST_MAX_DEPTH);
	o = json_object_new_object();
	tree_u64(o, "enter", r->enters);
	tree_u64(o, "exit", r->exits);
	json_object_object_add(root, "events_received", o);
	json_object_object_add(root, "lost_events", tree_loss(r));
	tree_u64(root, "ring_buffer_bytes", r->buffer_bytes);
	o = json_object_new_object();
	tree_u64(o, "malformed_records", r->malformed);
	tree_u64(o, "truncated_strings", r->truncated);
	tree_u64(o, "unreadable_strings", r->unreadable);
	json_object_object_add(root, "input", o);

	o = json_object_new_object();
	json_object_object_add(o, "available", json_object_new_boolean(r->res.valid));
	if (r->res.valid) {
		json_object_object_add(o, "scope", json_object_new_string(r->res.scope));
		tree_u64(o, "user_cpu_ns", r->res.user_ns);
		tree_u64(o, "system_cpu_ns", r->res.system_ns);
		if (r->res.has_peak_rss)
			tree_u64(o, "peak_rss_kib", r->res.peak_rss_kib);
		else
			json_object_object_add(o, "peak_rss_kib", NULL);
		tree_u64(o, "voluntary_context_switches", r->res.voluntary_switches);
		tree_u64(o, "involuntary_context_switches", r->res.involuntary_switches);
	}
	json_object_object_add(root, "resources", o);

	o = json_object_new_object();
	json_object_object_add(o, "available", json_object_new_boolean(r->self.valid));
	if (r->self.valid) {
		tree_u64(o, "user_cpu_ns", r->self.user_ns);
		tree_u64(o, "system_cpu_ns", r->self.system_ns);
		tree_u64(o, "peak_rss_kib", r->self.peak_rss_kib);
		tree_u64(o, "end_to_figures_ns", r->finish_ns);
		tree_u64(o, "setup_ns", r->phases.setup_ns);
		tree_u64(o, "open_ns", r->phases.open_ns);
		tree_u64(o, "load_ns", r->phases.load_ns);
		tree_u64(o, "attach_ns", r->phases.attach_ns);
		tree_u64(o, "start_to_first_event_ns", r->phases.first_event_ns);
	}
	if (r->bpf_runs) {
		tree_u64(o, "bpf_program_runs", r->bpf_runs);
		tree_u64(o, "bpf_program_run_time_ns", r->bpf_run_ns);
	}
	tree_u64(o, "processes_paused", r->follow.pauses);
	tree_u64(o, "paused_total_ns", r->follow.pause_total_ns);
	tree_u64(o, "paused_max_ns", r->follow.pause_max_ns);
	tree_u64(o, "files_attached_late", r->follow.late_files);
	tree_u64(o, "files_deferred", r->follow.deferred_files);
	tree_u64(o, "probe_sites", r->probe_sites);
	tree_u64(o, "probe_links", r->probe_links);
	json_object_object_add(o, "pid_filtered", json_object_new_boolean(r->pid_filtered));
	json_object_object_add(root, "profiler", o);

	if (r->pairs) {
		o = json_object_new_object();
		tree_u64(o, "specs", r->nspecs);
		tree_u64(o, "reentry_closed", r->pairs->reentry_closed);
		tree_u64(o, "unwound", r->pairs->unwound);
		tree_u64(o, "aborted", r->pairs->aborted);
		tree_u64(o, "continued", r->pairs->continued);
		tree_u64(o, "filtered", r->pairs->filtered);
		tree_u64(o, "unmatched_keyed_exits", r->pairs->unmatched_keyed);
		tree_u64(o, "too_many_tracks", r->pairs->too_many_tracks);
		tree_u64(o, "too_deep_entries", r->pairs->too_deep);
		tree_u64(o, "malformed_records", r->pairs->bad_spec + r->pairs->bad_tid);
		tree_u64(o, "sites_skipped", r->pairs->sites_skipped);
		json_object_object_add(root, "span_pairs", o);
	}

	arr = json_object_new_array();
	for (size_t i = 0; i < r->ngroups; i++) {
		struct lp_group *g = r->groups[i];
		json_object *row = json_object_new_object();
		size_t len;
		const char *meta = strtab_str(r->st, g->meta, &len);

		json_object_object_add(row, "name", tree_id(r->st, g->name));
		json_object_object_add(row, "meta_text", tree_str(meta, len));
		json_object_object_add(row, "meta", tree_meta(r->st, g->meta));
		tree_u64(row, "calls", g->calls);
		tree_u64(row, "self_ns", g->self_ns);
		tree_u64(row, "total_ns", g->total_ns);
		tree_u64(row, "mean_ns", g->calls ? g->total_ns / g->calls : 0);
		tree_u64(row, "p95_ns", lp_group_p95(g));
		json_object_object_add(row, "p95_exact",
				       json_object_new_boolean(lp_group_p95_exact(g)));
		tree_u64(row, "min_ns", g->calls ? g->min_ns : 0);
		tree_u64(row, "max_ns", g->max_ns);
		if (g->counter_calls) {
			tree_u64(row, "self_counter", g->counter_self);
			tree_u64(row, "total_counter", g->counter_total);
		} else {
			json_object_object_add(row, "self_counter", NULL);
			json_object_object_add(row, "total_counter", NULL);
		}
		json_object_object_add(row, "self_percent",
				       json_object_new_double(t->recorded_ns
								      ? 100.0 * (double)g->self_ns /
										(double)t->recorded_ns
								      : 0.0));
		tree_u64(row, "unterminated", g->unterminated);
		tree_u64(row, "started_before_recording", g->started_before);
		tree_u64(row, "uncertain", g->uncertain);
		json_object_array_add(arr, row);
	}
	json_object_object_add(root, "rows", arr);

	arr = json_object_new_array();
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct lp_report_thread *th = &r->threads[i];
		json_object *row = json_object_new_object();

		json_object_object_add(row, "pid", json_object_new_int64(th->pid));
		json_object_object_add(row, "tid", json_object_new_int64(th->tid));
		json_object_object_add(row, "name", tree_id(r->st, th->name));
		tree_u64(row, "spans", th->spans);
		tree_u64(row, "recorded_ns", th->recorded_ns);
		tree_u64(row, "lost_events", th->lost);
		tree_u64(row, "max_depth", th->max_depth);
		json_object_array_add(arr, row);
	}
	json_object_object_add(root, "thread_list", arr);

	o = json_object_new_object();
	if (r->trace_path)
		json_object_object_add(o, "trace", tree_str(r->trace_path, strlen(r->trace_path)));
	json_object_object_add(root, "files", o);

	text = strdup(json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	if (!text)
		errno = ENOMEM;
	return text;
}

#endif
