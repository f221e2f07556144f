// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "summary_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "pftrace.h"
#include "text.h"

/*
 * The reader's state: the first problem found is kept and every later check
 * does nothing, so that loaders read straight through and the caller says one
 * line at the end.
 */
struct rd {
	struct lp_summary *s;
	char problem[LP_SUMMARY_PROBLEM_MAX];
	int err; /* -EINVAL: not a summary we read; -ENOMEM */
};

static void bad(struct rd *rd, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void bad(struct rd *rd, int err, const char *fmt, ...)
{
	va_list ap;

	if (rd->err)
		return;
	rd->err = err;
	va_start(ap, fmt);
	vsnprintf(rd->problem, sizeof(rd->problem), fmt, ap);
	va_end(ap);
}

/* "rows[3].calls", "events": where a field is, for messages. */
static const char *at(const char *where, const char *key, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s%s%s", where, *where ? "." : "", key);
	return buf;
}

/*
 * The member key of o when it has type type; NULL when absent or null (a
 * problem when required) or of another type (always a problem).
 */
static json_object *member(struct rd *rd, json_object *o, const char *where, const char *key,
			   json_type type, bool required)
{
	static const char *const names[] = {
		[json_type_null] = "null",     [json_type_boolean] = "true or false",
		[json_type_double] = "a number", [json_type_int] = "an integer",
		[json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string",
	};
	json_object *v = NULL;
	char b[128];

	if (rd->err)
		return NULL;
	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (required)
			bad(rd, -EINVAL, "%s is missing", at(where, key, b, sizeof(b)));
		return NULL;
	}
	if (!json_object_is_type(v, type)) {
		bad(rd, -EINVAL, "%s is not %s", at(where, key, b, sizeof(b)), names[type]);
		return NULL;
	}
	return v;
}

/* A count or a duration: an integer from 0 to 2^64-1. *out is left alone when absent. */
static void num(struct rd *rd, json_object *o, const char *where, const char *key, uint64_t *out,
		bool required)
{
	json_object *v = member(rd, o, where, key, json_type_int, required);
	char b[128];

	if (!v)
		return;
	/* json-c keeps integers past INT64_MAX as unsigned: get_int64 is then INT64_MAX. */
	if (json_object_get_int64(v) < 0) {
		bad(rd, -EINVAL, "%s is negative", at(where, key, b, sizeof(b)));
		return;
	}
	*out = json_object_get_uint64(v);
}

static void num32(struct rd *rd, json_object *o, const char *where, const char *key,
		  uint32_t *out, bool required)
{
	uint64_t v = *out;
	char b[128];

	num(rd, o, where, key, &v, required);
	if (v > UINT32_MAX)
		bad(rd, -EINVAL, "%s is past 2^32", at(where, key, b, sizeof(b)));
	else
		*out = (uint32_t)v;
}

static void sint(struct rd *rd, json_object *o, const char *where, const char *key, int64_t lo,
		 int64_t hi, int64_t *out)
{
	json_object *v = member(rd, o, where, key, json_type_int, false);
	char b[128];

	if (!v)
		return;
	*out = json_object_get_int64(v);
	if (*out < lo || *out > hi)
		bad(rd, -EINVAL, "%s is out of range", at(where, key, b, sizeof(b)));
}

static void flag(struct rd *rd, json_object *o, const char *where, const char *key, bool *out,
		 bool required)
{
	json_object *v = member(rd, o, where, key, json_type_boolean, required);

	if (v)
		*out = json_object_get_boolean(v);
}

/* A string of the file, interned as it is (any bytes; shown through the sanitizers). */
static uint32_t text(struct rd *rd, json_object *o, const char *where, const char *key,
		     bool required)
{
	json_object *v = member(rd, o, where, key, json_type_string, required);
	uint32_t id;

	if (!v)
		return 0;
	id = strtab_intern(rd->s->st, json_object_get_string(v),
			   (size_t)json_object_get_string_len(v));
	if (id == UINT32_MAX)
		bad(rd, -ENOMEM, "out of memory");
	return id == UINT32_MAX ? 0 : id;
}

/* The same as a C string that stays valid as long as the summary. */
static const char *cstr(struct rd *rd, json_object *o, const char *where, const char *key,
			const char *dflt)
{
	json_object *v = member(rd, o, where, key, json_type_string, false);

	if (!v)
		return dflt;
	return strtab_str(rd->s->st, text(rd, o, where, key, true), NULL);
}

/*
 * The counter's name is printed in the header as it is: for text from a file,
 * only after the display sanitizer.
 */
static const char *display_cstr(struct rd *rd, json_object *o, const char *key, const char *dflt)
{
	json_object *v = member(rd, o, "", key, json_type_string, false);
	struct lp_buf b = { 0 };
	uint32_t id;

	if (!v)
		return dflt;
	if (lp_text_display(&b, json_object_get_string(v), (size_t)json_object_get_string_len(v))) {
		bad(rd, -ENOMEM, "out of memory");
		return dflt;
	}
	id = strtab_intern(rd->s->st, b.p ? b.p : "", b.len);
	lp_buf_free(&b);
	if (id == UINT32_MAX) {
		bad(rd, -ENOMEM, "out of memory");
		return dflt;
	}
	return strtab_str(rd->s->st, id, NULL);
}

/* "leanprofiler-summary/1" only: a newer one may mean other things by the same fields. */
static void load_schema(struct rd *rd, json_object *root)
{
	static const char prefix[] = "leanprofiler-summary/";
	json_object *v = member(rd, root, "", "schema", json_type_string, false);
	const char *schema;
	char *end;
	long version;

	if (rd->err)
		return;
	if (!v) {
		bad(rd, -EINVAL, "not a leanprofiler summary (no \"schema\")");
		return;
	}
	schema = json_object_get_string(v);
	if (!strcmp(schema, LP_SUMMARY_SCHEMA))
		return;
	if (strncmp(schema, prefix, strlen(prefix))) {
		bad(rd, -EINVAL, "not a leanprofiler summary (schema \"%.64s\")", schema);
		return;
	}
	version = strtol(schema + strlen(prefix), &end, 10);
	if (version > 1 && !*end)
		bad(rd, -EINVAL,
		    "schema \"%.64s\" is newer than this leanprofiler reads (%s): use a newer "
		    "leanprofiler",
		    schema, LP_SUMMARY_SCHEMA);
	else
		bad(rd, -EINVAL, "unknown schema \"%.64s\" (this leanprofiler reads %s)", schema,
		    LP_SUMMARY_SCHEMA);
}

static void load_run(struct rd *rd, json_object *root)
{
	struct lp_report *r = &rd->s->rep;
	const char *mode = cstr(rd, root, "", "mode", "launch");
	int64_t v = -1;

	if (lp_mode_parse(mode, &r->mode))
		bad(rd, -EINVAL, "mode is not \"launch\", \"attach\" or \"all-processes\"");
	r->binary = cstr(rd, root, "", "binary", NULL);
	v = 0;
	sint(rd, root, "", "pid", 0, INT32_MAX, &v);
	r->pid = (int)v;
	v = -1;
	sint(rd, root, "", "exit_status", -1, 255, &v);
	r->exit_status = (int)v;
	r->counter_name = display_cstr(rd, root, "counter_name", "Lean heartbeats");
	num(rd, root, "", "ring_buffer_bytes", &r->buffer_bytes, false);
}

static void load_recording(struct rd *rd, json_object *root)
{
	struct lp_report *r = &rd->s->rep;
	json_object *o = member(rd, root, "", "recording", json_type_object, false);

	if (!o)
		return;
	num(rd, o, "recording", "start_ns", &r->base_ns, false);
	num(rd, o, "recording", "end_ns", &r->end_ns, false);
	num(rd, o, "recording", "start_unix_ns", &r->start_unix_ns, false);
	r->end_reason = lp_end_reason_parse(cstr(rd, o, "recording", "end_reason", NULL));
}

/* The header's figures: the table needs each. */
static void load_totals(struct rd *rd, json_object *root)
{
	struct lp_nest_totals *t = &rd->s->totals;
	uint64_t window = 0;
	json_object *by;

	num(rd, root, "", "events", &t->spans, true);
	num32(rd, root, "", "threads", &t->threads, true);
	num(rd, root, "", "window_ns", &window, true);
	num(rd, root, "", "recorded_thread_time_ns", &t->recorded_ns, true);
	num(rd, root, "", "counter_total", &t->counter_total, true);
	num(rd, root, "", "unterminated_spans", &t->unterminated, false);
	by = member(rd, root, "", "unterminated_by", json_type_object, false);
	if (by) {
		num(rd, by, "unterminated_by", "enclosing_exit", &t->unterminated_outer, false);
		num(rd, by, "unterminated_by", "span_pairs", &t->unterminated_pairs, false);
		num(rd, by, "unterminated_by", "thread_end", &t->unterminated_thread, false);
		num(rd, by, "unterminated_by", "recording_end", &t->unterminated_end, false);
	}
	num(rd, root, "", "started_before_recording", &t->started_before, false);
	num(rd, root, "", "uncertain_spans", &t->uncertain, false);
	num(rd, root, "", "unmatched_exits", &t->unmatched_exits, false);
	num(rd, root, "", "too_deep_enters", &t->too_deep, false);
	/* The table shows last - first only. */
	t->first_ns = 0;
	t->last_ns = window;
}

/* --off-cpu: present only then; the rows and threads have the split. */
static void load_off_cpu(struct rd *rd, json_object *root)
{
	json_object *o = member(rd, root, "", "off_cpu", json_type_object, false);
	struct lp_nest_totals *t = &rd->s->totals;

	if (!o)
		return;
	rd->s->rep.off_cpu = true;
	num(rd, o, "off_cpu", "spans_measured", &t->sched_measured, true);
	num(rd, o, "off_cpu", "spans_partly_measured", &t->sched_partial, true);
	num(rd, o, "off_cpu", "spans_not_measured", &t->sched_unmeasured, true);
	rd->s->rep.steal_clock = !strcmp(cstr(rd, o, "off_cpu", "steal_clock", "none"), "kvm");
}

static void load_events_received(struct rd *rd, json_object *root)
{
	json_object *o = member(rd, root, "", "events_received", json_type_object, false);

	if (!o)
		return;
	num(rd, o, "events_received", "enter", &rd->s->rep.enters, false);
	num(rd, o, "events_received", "exit", &rd->s->rep.exits, false);
}

static void load_lost_events(struct rd *rd, json_object *root)
{
	struct lp_loss *l = &rd->s->rep.loss;
	json_object *o = member(rd, root, "", "lost_events", json_type_object, false);

	if (!o)
		return;
	num(rd, o, "lost_events", "enter", &l->enter, false);
	num(rd, o, "lost_events", "exit", &l->exit, false);
	num(rd, o, "lost_events", "string", &l->string, false);
	num(rd, o, "lost_events", "thread_record", &l->thread, false);
	num(rd, o, "lost_events", "no_task_storage", &l->no_storage, false);
	num(rd, o, "lost_events", "process_records", &l->task, false);
	num(rd, o, "lost_events", "off_cpu_waits", &l->sched, false);
}

static void load_input(struct rd *rd, json_object *root)
{
	struct lp_report *r = &rd->s->rep;
	json_object *o = member(rd, root, "", "input", json_type_object, false);

	if (!o)
		return;
	num(rd, o, "input", "malformed_records", &r->malformed, false);
	num(rd, o, "input", "truncated_strings", &r->truncated, false);
	num(rd, o, "input", "unreadable_strings", &r->unreadable, false);
	/* Summaries written before these counts have none: 0, as nothing to say. */
	num(rd, o, "input", "records_received", &r->records, false);
	num(rd, o, "input", "strings_from_file", &r->from_file, false);
	num(rd, o, "input", "unknown_literals", &r->unknown_literal, false);
	num(rd, o, "input", "abi_mismatch_events", &r->abi_mismatch, false);
}

static void load_resources(struct rd *rd, json_object *root)
{
	struct lp_resources *res = &rd->s->rep.res;
	json_object *o = member(rd, root, "", "resources", json_type_object, false), *v = NULL;

	if (!o)
		return;
	flag(rd, o, "resources", "available", &res->valid, true);
	if (!res->valid)
		return;
	res->scope = cstr(rd, o, "resources", "scope", "");
	num(rd, o, "resources", "user_cpu_ns", &res->user_ns, true);
	num(rd, o, "resources", "system_cpu_ns", &res->system_ns, true);
	/* null: not measured, shown as such. */
	json_object_object_get_ex(o, "peak_rss_kib", &v);
	res->has_peak_rss = v != NULL;
	num(rd, o, "resources", "peak_rss_kib", &res->peak_rss_kib, false);
	num(rd, o, "resources", "voluntary_context_switches", &res->voluntary_switches, true);
	num(rd, o, "resources", "involuntary_context_switches", &res->involuntary_switches, true);
	/* Summaries written before "until_exit" said it in the scope only. */
	res->exited = res->scope && strstr(res->scope, "until its exit");
	flag(rd, o, "resources", "until_exit", &res->exited, false);
}

static void load_profiler(struct rd *rd, json_object *root)
{
	struct lp_report *r = &rd->s->rep;
	json_object *o = member(rd, root, "", "profiler", json_type_object, false);

	if (!o)
		return;
	flag(rd, o, "profiler", "available", &r->self.valid, false);
	if (r->self.valid) {
		num(rd, o, "profiler", "user_cpu_ns", &r->self.user_ns, true);
		num(rd, o, "profiler", "system_cpu_ns", &r->self.system_ns, true);
		num(rd, o, "profiler", "peak_rss_kib", &r->self.peak_rss_kib, true);
		num(rd, o, "profiler", "end_to_figures_ns", &r->finish_ns, false);
		num(rd, o, "profiler", "setup_ns", &r->phases.setup_ns, false);
		num(rd, o, "profiler", "open_ns", &r->phases.open_ns, false);
		num(rd, o, "profiler", "load_ns", &r->phases.load_ns, false);
		num(rd, o, "profiler", "attach_ns", &r->phases.attach_ns, false);
		num(rd, o, "profiler", "start_to_first_event_ns", &r->phases.first_event_ns, false);
	}
	num(rd, o, "profiler", "bpf_program_runs", &r->bpf_runs, false);
	num(rd, o, "profiler", "bpf_program_run_time_ns", &r->bpf_run_ns, false);
	num(rd, o, "profiler", "processes_paused", &r->follow.pauses, false);
	num(rd, o, "profiler", "paused_total_ns", &r->follow.pause_total_ns, false);
	num(rd, o, "profiler", "paused_max_ns", &r->follow.pause_max_ns, false);
	num(rd, o, "profiler", "files_attached_late", &r->follow.late_files, false);
}

static void load_span_pairs(struct rd *rd, json_object *root)
{
	struct lp_pairs_stats *p = &rd->s->pairs;
	json_object *o = member(rd, root, "", "span_pairs", json_type_object, false);
	uint64_t specs = 0;

	if (!o)
		return;
	num(rd, o, "span_pairs", "specs", &specs, false);
	num(rd, o, "span_pairs", "reentry_closed", &p->reentry_closed, false);
	num(rd, o, "span_pairs", "unwound", &p->unwound, false);
	num(rd, o, "span_pairs", "aborted", &p->aborted, false);
	num(rd, o, "span_pairs", "enclosed", &p->enclosed, false);
	num(rd, o, "span_pairs", "continued", &p->continued, false);
	num(rd, o, "span_pairs", "filtered", &p->filtered, false);
	num(rd, o, "span_pairs", "unmatched_keyed_exits", &p->unmatched_keyed, false);
	num(rd, o, "span_pairs", "too_many_tracks", &p->too_many_tracks, false);
	num(rd, o, "span_pairs", "too_deep_entries", &p->too_deep, false);
	/* The table shows the sum of the two. */
	num(rd, o, "span_pairs", "malformed_records", &p->bad_spec, false);
	num(rd, o, "span_pairs", "sites_skipped", &p->sites_skipped, false);
	rd->s->rep.nspecs = (size_t)specs;
	rd->s->rep.pairs = p;
}

/* [[index, count], ...] into h. */
static void load_buckets(struct rd *rd, json_object *o, const char *where, const char *key,
			 struct lp_shist *h)
{
	json_object *arr = member(rd, o, where, key, json_type_array, false);
	char b[128];

	for (size_t i = 0; arr && !rd->err && i < json_object_array_length(arr); i++) {
		json_object *pair = json_object_array_get_idx(arr, i), *iv, *cv;

		if (!json_object_is_type(pair, json_type_array) ||
		    json_object_array_length(pair) != 2 ||
		    !json_object_is_type(iv = json_object_array_get_idx(pair, 0), json_type_int) ||
		    !json_object_is_type(cv = json_object_array_get_idx(pair, 1), json_type_int) ||
		    json_object_get_int64(iv) < 0 || json_object_get_int64(cv) < 0 ||
		    json_object_get_int64(iv) >= LP_HIST_INDEXES) {
			bad(rd, -EINVAL, "%s[%zu] is not [index, count]", at(where, key, b, sizeof(b)),
			    i);
			return;
		}
		if (lp_shist_add(h, (unsigned)json_object_get_int64(iv),
				 json_object_get_uint64(cv)))
			bad(rd, -ENOMEM, "out of memory");
	}
}

static void load_hist(struct rd *rd, json_object *row, const char *where,
		      struct lp_summary_row *sr)
{
	json_object *o = member(rd, row, where, "hist", json_type_object, false);
	char w[96];
	uint64_t bits = LP_HIST_SUB_BITS;

	if (!o)
		return;
	snprintf(w, sizeof(w), "%s.hist", where);
	num(rd, o, w, "sub_bits", &bits, true);
	if (!rd->err && bits != LP_HIST_SUB_BITS) {
		bad(rd, -EINVAL, "%s.sub_bits is %llu: this leanprofiler reads %d", w,
		    (unsigned long long)bits, LP_HIST_SUB_BITS);
		return;
	}
	load_buckets(rd, o, w, "buckets", &sr->hist);
	load_buckets(rd, o, w, "self_buckets", &sr->g.self_hist);
	sr->has_hist = !rd->err;
}

/* An overflow row ("folded": {"kind", "distinct_estimate"}), or null for a row of its own. */
static void load_folded(struct rd *rd, json_object *row, const char *where, struct lp_group *g)
{
	json_object *o = member(rd, row, where, "folded", json_type_object, false);
	const char *kind;
	char w[80];

	if (!o)
		return;
	snprintf(w, sizeof(w), "%s.folded", where);
	kind = cstr(rd, o, w, "kind", "");
	if (!strcmp(kind, "metadata"))
		g->overflow = LP_OVERFLOW_META;
	else if (!strcmp(kind, "names"))
		g->overflow = LP_OVERFLOW_NAME;
	else if (!rd->err)
		bad(rd, -EINVAL, "%s.kind is neither \"metadata\" nor \"names\"", w);
	num(rd, o, w, "distinct_estimate", &g->folded_estimate, false);
}

/* The cap on groups and what went past it (summaries before it have none). */
static void load_groups(struct rd *rd, json_object *root)
{
	struct lp_fold_stats *f = &rd->s->rep.fold;
	json_object *o = member(rd, root, "", "groups", json_type_object, false);
	uint64_t max = 0, kept = 0, rows = 0;

	if (!o)
		return;
	num(rd, o, "groups", "max", &max, true);
	num(rd, o, "groups", "kept", &kept, true);
	num(rd, o, "groups", "overflow_rows", &rows, true);
	num(rd, o, "groups", "folded_spans", &f->folded_spans, true);
	num(rd, o, "groups", "folded_distinct_estimate", &f->folded_distinct, true);
	f->max = (size_t)max;
	f->kept = (size_t)kept;
	f->overflow_rows = (size_t)rows;
}

static void load_row(struct rd *rd, json_object *row, size_t i, struct lp_summary_row *sr)
{
	struct lp_group *g = &sr->g;
	json_object *v = NULL;
	char w[64];
	bool exact = true;

	snprintf(w, sizeof(w), "rows[%zu]", i);
	if (!json_object_is_type(row, json_type_object)) {
		bad(rd, -EINVAL, "%s is not an object", w);
		return;
	}
	g->name = text(rd, row, w, "name", true);
	/* null: spans that began before recording, whose metadata is not known. */
	if (json_object_object_get_ex(row, "meta_text", &v) && !v)
		g->meta = LP_META_UNKNOWN;
	else
		g->meta = text(rd, row, w, "meta_text", false);
	load_folded(rd, row, w, g);
	num(rd, row, w, "calls", &g->calls, true);
	num(rd, row, w, "self_ns", &g->self_ns, true);
	num(rd, row, w, "total_ns", &g->total_ns, true);
	num(rd, row, w, "p95_ns", &g->p95, true);
	g->p95_fixed = true;
	flag(rd, row, w, "p95_exact", &exact, false);
	num(rd, row, w, "min_ns", &g->min_ns, false);
	num(rd, row, w, "max_ns", &g->max_ns, false);
	/* null: the row's markers pass no counter ("-" in the table). */
	if (json_object_object_get_ex(row, "self_counter", &v) && v) {
		num(rd, row, w, "self_counter", &g->counter_self, true);
		num(rd, row, w, "total_counter", &g->counter_total, false);
		g->counter_calls = g->calls ? g->calls : 1;
	}
	num(rd, row, w, "unterminated", &g->unterminated, false);
	num(rd, row, w, "started_before_recording", &g->started_before, false);
	num(rd, row, w, "uncertain", &g->uncertain, false);
	if (rd->s->rep.off_cpu) {
		num(rd, row, w, "total_cpu_ns", &g->sched.cpu_ns, true);
		num(rd, row, w, "total_runq_ns", &g->sched.runq_ns, true);
		num(rd, row, w, "total_blocked_ns", &g->sched.blocked_ns, true);
		/* Absent from a summary written before steal was split out: 0. */
		num(rd, row, w, "total_steal_ns", &g->sched.steal_ns, false);
		num(rd, row, w, "self_cpu_ns", &g->self_sched.cpu_ns, true);
		num(rd, row, w, "self_runq_ns", &g->self_sched.runq_ns, true);
		num(rd, row, w, "self_blocked_ns", &g->self_sched.blocked_ns, true);
		num(rd, row, w, "self_steal_ns", &g->self_sched.steal_ns, false);
		num(rd, row, w, "voluntary_switches", &g->sched.vcsw, true);
		num(rd, row, w, "involuntary_switches", &g->sched.ivcsw, true);
		num(rd, row, w, "off_cpu_unmeasured_ns", &g->unmeasured_ns, true);
		if (!rd->err && lp_sched_sum(&g->sched) + g->unmeasured_ns != g->total_ns)
			bad(rd, -EINVAL,
			    "%s: total_cpu_ns + total_steal_ns + total_runq_ns + "
			    "total_blocked_ns + off_cpu_unmeasured_ns is not total_ns",
			    w);
	}
	/* An approximate P95 is shown with "~": lp_group_p95_exact() is !hist. */
	if (!exact && !rd->err && !(g->hist = calloc(1, sizeof(*g->hist))))
		bad(rd, -ENOMEM, "out of memory");
	load_hist(rd, row, w, sr);
}

static void load_rows(struct rd *rd, json_object *root)
{
	struct lp_summary *s = rd->s;
	json_object *arr = member(rd, root, "", "rows", json_type_array, true);
	size_t n;

	if (!arr)
		return;
	n = json_object_array_length(arr);
	s->rows = calloc(n ? n : 1, sizeof(*s->rows));
	s->groups = calloc(n ? n : 1, sizeof(*s->groups));
	if (!s->rows || !s->groups) {
		bad(rd, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n && !rd->err; i++) {
		load_row(rd, json_object_array_get_idx(arr, i), i, &s->rows[i]);
		s->groups[i] = &s->rows[i].g;
		s->nrows = i + 1;
	}
	s->rep.groups = s->groups;
	s->rep.ngroups = s->nrows;
}

static void load_thread_list(struct rd *rd, json_object *root)
{
	struct lp_summary *s = rd->s;
	json_object *arr = member(rd, root, "", "thread_list", json_type_array, false);
	size_t n;

	if (!arr)
		return;
	n = json_object_array_length(arr);
	s->threads = calloc(n ? n : 1, sizeof(*s->threads));
	if (!s->threads) {
		bad(rd, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n && !rd->err; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		struct lp_report_thread *t = &s->threads[i];
		char w[64];

		snprintf(w, sizeof(w), "thread_list[%zu]", i);
		if (!json_object_is_type(o, json_type_object)) {
			bad(rd, -EINVAL, "%s is not an object", w);
			break;
		}
		num32(rd, o, w, "pid", &t->pid, true);
		num32(rd, o, w, "tid", &t->tid, true);
		t->name = text(rd, o, w, "name", false);
		num(rd, o, w, "spans", &t->spans, true);
		num(rd, o, w, "recorded_ns", &t->recorded_ns, true);
		num(rd, o, w, "lost_events", &t->lost, false);
		num32(rd, o, w, "max_depth", &t->max_depth, false);
		if (s->rep.off_cpu) {
			num(rd, o, w, "cpu_ns", &t->sched.cpu_ns, true);
			num(rd, o, w, "runq_ns", &t->sched.runq_ns, true);
			num(rd, o, w, "blocked_ns", &t->sched.blocked_ns, true);
			num(rd, o, w, "steal_ns", &t->sched.steal_ns, false);
			num(rd, o, w, "voluntary_switches", &t->sched.vcsw, true);
			num(rd, o, w, "involuntary_switches", &t->sched.ivcsw, true);
		}
		s->rep.nthreads = i + 1;
	}
	s->rep.threads = s->threads;
}

/* --trace-last, --trace-max-size: what the trace kept (absent: every span, or no trace). */
static void load_bound(struct rd *rd, json_object *root)
{
	struct lp_report_bound *b = &rd->s->rep.bound;
	json_object *o = member(rd, root, "", "trace_bound", json_type_object, false);
	uint64_t start = 0, end = 0;

	if (!o)
		return;
	b->on = true;
	num(rd, o, "trace_bound", "last_ns", &b->last_ns, true);
	num(rd, o, "trace_bound", "max_bytes", &b->max_bytes, true);
	num(rd, o, "trace_bound", "spans", &b->st.spans, true);
	num(rd, o, "trace_bound", "spans_left_out", &b->st.spans_left_out, true);
	num(rd, o, "trace_bound", "off_cpu_slices", &b->st.inner, false);
	num(rd, o, "trace_bound", "off_cpu_slices_left_out", &b->st.inner_left_out, false);
	num(rd, o, "trace_bound", "bytes", &b->st.bytes, false);
	num(rd, o, "trace_bound", "window_start_ns", &start, true);
	num(rd, o, "trace_bound", "window_end_ns", &end, true);
	flag(rd, o, "trace_bound", "cut", &b->st.cut, false);
	flag(rd, o, "trace_bound", "full", &b->st.full, false);
	num(rd, o, "trace_bound", "memory_peak_bytes", &b->st.peak_bytes, false);
	/* As lp_tring_end said them: the window's start, or where the trace was full. */
	b->st.from_ns = start;
	b->st.full_ns = end;
}

static void load_files(struct rd *rd, json_object *root)
{
	json_object *o = member(rd, root, "", "files", json_type_object, false);

	if (o)
		rd->s->rep.trace_path = cstr(rd, o, "files", "trace", NULL);
}

/* What record's table showed that no figure says. */
static void load_table(struct rd *rd, json_object *root)
{
	json_object *o = member(rd, root, "", "table", json_type_object, false);

	uint64_t rows = 0;

	if (!o)
		return;
	flag(rd, o, "table", "profiler_line", &rd->s->rep.show_self, false);
	/* The rows record's table showed (--rows; 0: all): the same cut, the same footer line. */
	num(rd, o, "table", "rows", &rows, false);
	rd->s->rep.table_rows = (size_t)rows;
}

/*
 * last[d]: the latest node at depth d. In pre-order a node's parent is the
 * latest node one level up: the views rely on it.
 */
static void load_node(struct rd *rd, json_object *o, size_t i, struct lp_path_node *n,
		      int64_t *last)
{
	struct lp_summary *s = rd->s;
	int64_t parent = -2;
	char w[64];

	snprintf(w, sizeof(w), "paths.nodes[%zu]", i);
	if (!json_object_is_type(o, json_type_object)) {
		bad(rd, -EINVAL, "%s is not an object", w);
		return;
	}
	sint(rd, o, w, "parent", -1, (int64_t)i - 1, &parent);
	if (parent == -2 && !rd->err)
		bad(rd, -EINVAL, "%s.parent is missing", w);
	n->parent = parent;
	n->name = text(rd, o, w, "name", true);
	num(rd, o, w, "calls", &n->calls, true);
	num(rd, o, w, "total_ns", &n->total_ns, true);
	num(rd, o, w, "self_ns", &n->self_ns, true);
	flag(rd, o, w, "folded", &n->folded, false);
	if (rd->err)
		return;
	n->depth = parent < 0 ? 0 : s->nodes[parent].depth + 1;
	if (n->depth > LP_NEST_MAX_DEPTH) {
		bad(rd, -EINVAL, "%s is deeper than %d, the deepest a recording nests", w,
		    LP_NEST_MAX_DEPTH);
		return;
	}
	if (parent >= 0 && last[n->depth - 1] != parent) {
		bad(rd, -EINVAL, "%s is not in pre-order (its parent is not the latest node above)",
		    w);
		return;
	}
	last[n->depth] = (int64_t)i;
}

static void load_paths(struct rd *rd, json_object *root)
{
	struct lp_summary *s = rd->s;
	json_object *o = member(rd, root, "", "paths", json_type_object, false), *arr;
	int64_t *last;
	size_t n;

	if (!o)
		return;
	num(rd, o, "paths", "max", &s->paths_max, false);
	num(rd, o, "paths", "kept", &s->paths_kept, false);
	num(rd, o, "paths", "folded_spans", &s->folded_spans, false);
	arr = member(rd, o, "paths", "nodes", json_type_array, true);
	if (!arr)
		return;
	n = json_object_array_length(arr);
	s->nodes = calloc(n ? n : 1, sizeof(*s->nodes));
	last = calloc(LP_NEST_MAX_DEPTH + 1, sizeof(*last));
	if (!s->nodes || !last) {
		free(last);
		bad(rd, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n && !rd->err; i++) {
		load_node(rd, json_object_array_get_idx(arr, i), i, &s->nodes[i], last);
		s->nnodes = i + 1;
	}
	free(last);
	s->has_paths = !rd->err;
}

/* The sections in the file's order; those no view needs (command, processes) are not read. */
static void load(struct rd *rd, json_object *root)
{
	load_schema(rd, root);
	load_run(rd, root);
	load_recording(rd, root);
	load_totals(rd, root);
	load_off_cpu(rd, root);
	load_events_received(rd, root);
	load_lost_events(rd, root);
	load_input(rd, root);
	load_resources(rd, root);
	load_profiler(rd, root);
	load_span_pairs(rd, root);
	load_groups(rd, root);
	load_bound(rd, root);
	load_rows(rd, root);
	load_thread_list(rd, root);
	load_files(rd, root);
	load_table(rd, root);
	load_paths(rd, root);
}

size_t lp_json_values(const char *text, size_t len, size_t max)
{
	size_t n = 1;
	bool in_string = false;

	for (size_t i = 0; i < len && n <= max; i++) {
		char c = text[i];

		if (in_string) {
			if (c == '\\')
				i++; /* the escaped character, '"' too */
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == ',' || c == ':') {
			n++;
		} else if (c == '[' || c == '{') {
			n += 2; /* an array or object costs json-c twice a number's ~75 bytes */
		}
	}
	return n;
}

size_t lp_summary_values_max(void)
{
	const char *env = getenv(LP_SUMMARY_VALUES_ENV);
	uint64_t v;

	if (env && !lp_parse_count(env, 1, SIZE_MAX, &v))
		return (size_t)v;
	return LP_SUMMARY_VALUES_MAX;
}

static json_object *parse_json(struct rd *rd, const char *text, size_t len)
{
	struct json_tokener *tok;
	json_object *root;
	enum json_tokener_error jerr;
	size_t end, max = lp_summary_values_max();

	if (len > INT32_MAX) {
		bad(rd, -EFBIG, "too large");
		return NULL;
	}
	if (!len) {
		bad(rd, -EINVAL, "not a leanprofiler summary: the file is empty");
		return NULL;
	}
	/* Before json-c allocates anything: what parsing would cost is bounded. */
	if (lp_json_values(text, len, max) > max) {
		bad(rd, -EFBIG, "more than %zu JSON values (LP_SUMMARY_VALUES_MAX): refused, parsing "
		    "them would cost over 0.6 GB; a real recording's (a larger --max-groups)? set "
		    LP_SUMMARY_VALUES_ENV " higher", max);
		return NULL;
	}
	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok) {
		bad(rd, -ENOMEM, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue) {
		bad(rd, -EINVAL, "not a leanprofiler summary: the JSON ends early (a truncated file?)");
		return NULL;
	}
	/* Strict: text after the value (but white space) is an error too. */
	if (jerr != json_tokener_success) {
		bad(rd, -EINVAL, "not a leanprofiler summary: not JSON (%s at byte %zu)",
		    json_tokener_error_desc(jerr), end);
		return NULL;
	}
	if (!json_object_is_type(root, json_type_object)) {
		bad(rd, -EINVAL, "not a leanprofiler summary (not a JSON object)");
		json_object_put(root);
		return NULL;
	}
	return root;
}

int lp_summary_parse(const char *text, size_t len, const char *file, struct lp_summary *s,
		     char *problem, size_t size)
{
	return lp_summary_parse_json(text, len, file, s, problem, size, NULL);
}

int lp_summary_parse_json(const char *text, size_t len, const char *file, struct lp_summary *s,
			  char *problem, size_t size, json_object **rootp)
{
	struct rd rd = { .s = s };
	json_object *root = NULL;

	memset(s, 0, sizeof(*s));
	s->path = strdup(file);
	s->st = strtab_new();
	if (!s->path || !s->st) {
		bad(&rd, -ENOMEM, "out of memory");
	} else {
		s->rep.st = s->st;
		s->rep.totals = &s->totals;
		s->rep.exit_status = -1;
		root = parse_json(&rd, text, len);
		if (root)
			load(&rd, root);
	}
	if (rd.err) {
		snprintf(problem, size, "%s", rd.problem);
		lp_summary_free(s);
	}
	if (rootp && !rd.err)
		*rootp = root;
	else
		json_object_put(root);
	return rd.err;
}

/* Where the summary of arg is: arg itself, or the file in (or next to) it. NULL: ENOMEM. */
static char *summary_path(const char *arg, bool *is_dir, bool *from_trace)
{
	struct stat st;
	const char *base = strrchr(arg, '/');
	char *p = NULL;

	*is_dir = !stat(arg, &st) && S_ISDIR(st.st_mode);
	base = base ? base + 1 : arg;
	*from_trace = !*is_dir && (!strcmp(base, LP_TRACE_FILE) ||
				   !strcmp(base, LP_PFTRACE_FILE));
	if (*is_dir) {
		if (asprintf(&p, "%s%s%s", arg, arg[strlen(arg) - 1] == '/' ? "" : "/",
			     LP_SUMMARY_FILE) < 0)
			p = NULL;
	} else if (*from_trace) {
		if (asprintf(&p, "%.*s%s", (int)(base - arg), arg, LP_SUMMARY_FILE) < 0)
			p = NULL;
	} else {
		p = strdup(arg);
	}
	return p;
}

/*
 * The file's bytes (NUL-terminated), at most LP_SUMMARY_FILE_MAX. A pipe
 * (`<(...)`) is read too; a device or a socket is not a summary.
 */
static int read_text(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), err = 0;
	size_t n = 0, cap = 0;
	char *buf = NULL;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		err = -EINVAL;
	} else if (fcntl(fd, F_SETFL, 0)) { /* non-blocking only for the open of a FIFO */
		err = -errno;
	} else {
		/* No output of this command may replace it (lp_outfile_openat refuses). */
		err = lp_outfile_input_fd(fd, path);
	}
	while (!err) {
		ssize_t r;

		if (n + 65536 + 1 > cap) {
			char *nb = lp_grow(buf, &cap, n + 65536 + 1, 1);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		else if (r == 0)
			break;
		else if ((n += (size_t)r) > LP_SUMMARY_FILE_MAX)
			err = -EFBIG;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int lp_summary_text(const char *arg, char **pathp, char **textp, size_t *lenp)
{
	bool is_dir, from_trace;
	char *path = summary_path(arg, &is_dir, &from_trace), *text = NULL;
	size_t len = 0;
	int err;

	*pathp = *textp = NULL;
	*lenp = 0;
	if (!path) {
		lp_err("%s: out of memory", arg);
		return -ENOMEM;
	}
	err = read_text(path, &text, &len);
	if (err == -ENOENT && is_dir)
		lp_err("%s: no recording here (no %s)", arg, LP_SUMMARY_FILE);
	else if (err == -ENOENT && from_trace)
		lp_err("%s: no %s next to this trace", arg, LP_SUMMARY_FILE);
	else if (err == -EFBIG)
		lp_err("%s: larger than %u MiB (LP_SUMMARY_FILE_MAX): not a summary", path,
		       LP_SUMMARY_FILE_MAX >> 20);
	else if (err == -EINVAL)
		lp_err("%s: not a file", path);
	else if (err)
		lp_err("cannot read %s: %s", path, strerror(-err));
	if (err) {
		free(path);
		return err;
	}
	*pathp = path;
	*textp = text;
	*lenp = len;
	return 0;
}

int lp_summary_read(const char *arg, struct lp_summary *s)
{
	char *path, *text, problem[LP_SUMMARY_PROBLEM_MAX];
	size_t len;
	int err;

	memset(s, 0, sizeof(*s));
	err = lp_summary_text(arg, &path, &text, &len);
	if (err)
		return err;
	err = lp_summary_parse(text, len, path, s, problem, sizeof(problem));
	if (err)
		lp_err("%s: %s", path, problem);
	free(text);
	free(path);
	return err;
}

void lp_summary_free(struct lp_summary *s)
{
	for (size_t i = 0; i < s->nrows; i++) {
		lp_hist_free(s->rows[i].g.hist);
		lp_shist_free(&s->rows[i].g.self_hist);
		lp_shist_free(&s->rows[i].hist);
	}
	free(s->rows);
	free(s->groups);
	free(s->threads);
	free(s->nodes);
	strtab_free(s->st);
	free(s->path);
	memset(s, 0, sizeof(*s));
}
