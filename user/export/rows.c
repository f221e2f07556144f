// SPDX-License-Identifier: MIT
#include "rows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "nest.h"

/* ---- the schema (docs/fleet.md "The tables": every column is described there) ---- */

static const char *const table_names[LP_EX_NTABLES] = { "runs", "groups", "spans" };

/*
 * ReplacingMergeTree: rows with the same sorting key collapse when parts
 * merge (and at once under FINAL). The key holds the run id and the row's
 * place in the recording, so two exports of one recording that raced past
 * the run-id check still leave one copy; 18.16 has no DateTime64, hence the
 * UInt64 ns columns beside a DateTime for partitions and time filters.
 */
static const char *const table_sql[LP_EX_NTABLES] = {
	"(run_id String, schema_version UInt16, host String, "
	"label_keys Array(String), label_values Array(String), "
	"command Array(String), mode String, binary String, pid Int64, "
	"start_time DateTime, start_unix_ns UInt64, start_ns UInt64, end_ns UInt64, "
	"window_ns UInt64, end_reason String, exit_status Int32, "
	"events UInt64, threads UInt64, lost_events UInt64, unterminated_spans UInt64, "
	"uncertain_spans UInt64, started_before_recording UInt64, "
	"resources_available UInt8, user_cpu_ns UInt64, system_cpu_ns UInt64, "
	"peak_rss_kib Nullable(UInt64), voluntary_context_switches UInt64, "
	"involuntary_context_switches UInt64, counter_name String, summary_only UInt8, "
	"groups_rows UInt64, spans_rows UInt64, exported_at DateTime, "
	"window_start_unix_ns UInt64, window_length_ns UInt64) "
	"ENGINE = ReplacingMergeTree(exported_at) PARTITION BY toYYYYMM(start_time) "
	"ORDER BY run_id",

	"(run_id String, host String, start_time DateTime, row UInt32, name String, "
	"meta_known UInt8, meta_text String, meta_keys Array(String), "
	"meta_values Array(String), overflow String, calls UInt64, self_ns UInt64, "
	"total_ns UInt64, mean_ns UInt64, p95_ns UInt64, p95_exact UInt8, min_ns UInt64, "
	"max_ns UInt64, has_counter UInt8, self_counter UInt64, total_counter UInt64, "
	"unterminated UInt64, started_before_recording UInt64, uncertain UInt64, "
	"hist_index Array(UInt32), hist_count Array(UInt64), "
	"self_hist_index Array(UInt32), self_hist_count Array(UInt64)) "
	"ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(start_time) "
	"ORDER BY (name, run_id, row)",

	"(run_id String, host String, time DateTime, start_unix_ns UInt64, start_ns UInt64, "
	"dur_ns UInt64, pid UInt32, tid UInt32, span UInt64, parent Int64, depth UInt16, "
	"name String, meta_keys Array(String), meta_values Array(String), "
	"has_counter UInt8, counter UInt64, unterminated UInt8, uncertain UInt8, "
	"started_before_recording UInt8) "
	"ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(time) "
	"ORDER BY (name, run_id, span)",
};

/*
 * Columns added to runs after its first version, last in its CREATE too: a
 * table an older leanprofiler made gets them by ALTER TABLE ... ADD COLUMN
 * (ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: system.columns says
 * whether one is there). An older row reads 0 in them.
 */
const struct lp_ex_column lp_ex_runs_added[] = {
	{ "window_start_unix_ns", "UInt64" },
	{ "window_length_ns", "UInt64" },
	{ NULL, NULL },
};

const char *lp_ex_table_name(enum lp_ex_table t)
{
	return t < LP_EX_NTABLES ? table_names[t] : "?";
}

bool lp_ex_database_valid(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > LP_EX_DATABASE_MAX || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

static int put(struct lp_buf *b, const char *s)
{
	return lp_buf_put(b, s, strlen(s));
}

int lp_ex_create_sql(struct lp_buf *sql, const char *db, enum lp_ex_table t)
{
	if (t >= LP_EX_NTABLES || !lp_ex_database_valid(db))
		return -EINVAL;
	if (put(sql, "CREATE TABLE IF NOT EXISTS ") || put(sql, db) || put(sql, ".") ||
	    put(sql, table_names[t]) || put(sql, " ") || put(sql, table_sql[t]))
		return -ENOMEM;
	return 0;
}

/* ---- values from the summary's JSON (checked by lp_summary_parse before) ---- */

static json_object *field(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static uint64_t u64_of(json_object *v)
{
	if (!v || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return 0;
	return json_object_get_uint64(v);
}

static uint64_t u64_at(json_object *o, const char *key)
{
	return u64_of(field(o, key));
}

static void key(struct jw *w, const char *k)
{
	jw_key(w, k, strlen(k));
}

static void k_u64(struct jw *w, const char *k, uint64_t v)
{
	key(w, k);
	jw_u64(w, v);
}

static void k_str(struct jw *w, const char *k, json_object *v)
{
	key(w, k);
	if (v && json_object_is_type(v, json_type_string))
		jw_str(w, json_object_get_string(v), (size_t)json_object_get_string_len(v));
	else
		jw_str(w, "", 0);
}

static void k_cstr(struct jw *w, const char *k, const char *s)
{
	key(w, k);
	jw_cstr(w, s ? s : "");
}

static void k_bool(struct jw *w, const char *k, json_object *v)
{
	k_u64(w, k, v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
}

/* An array of the strings of a JSON array (other elements as ""). */
static void k_str_array(struct jw *w, const char *k, json_object *arr)
{
	size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;

	key(w, k);
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		if (v && json_object_is_type(v, json_type_string))
			jw_str(w, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		else
			jw_str(w, "", 0);
	}
	jw_arr_end(w);
}

static void k_cstr_array(struct jw *w, const char *k, const char *const *s, size_t n)
{
	key(w, k);
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		jw_cstr(w, s[i]);
	jw_arr_end(w);
}

/* A line of its own: JSONEachRow reads one object per line. */
static int end_row(struct jw *w, struct lp_buf *out)
{
	int err = jw_error(w);

	if (!err && lp_buf_putc(out, '\n'))
		err = -ENOMEM;
	return err;
}

int lp_ex_run_row(struct lp_buf *out, json_object *s, const struct lp_ex_run *run)
{
	json_object *rec = field(s, "recording"), *res = field(s, "resources");
	json_object *rss = field(res, "peak_rss_kib"), *pid = field(s, "pid");
	json_object *exit_status = field(s, "exit_status");
	struct jw w;

	jw_init_buf(&w, out);
	jw_obj_begin(&w);
	k_cstr(&w, "run_id", run->run_id);
	k_u64(&w, "schema_version", LP_EX_SCHEMA_VERSION);
	k_cstr(&w, "host", run->host);
	k_cstr_array(&w, "label_keys", run->label_keys, run->nlabels);
	k_cstr_array(&w, "label_values", run->label_values, run->nlabels);
	k_str_array(&w, "command", field(s, "command"));
	k_str(&w, "mode", field(s, "mode"));
	k_str(&w, "binary", field(s, "binary"));
	key(&w, "pid");
	jw_i64(&w, pid ? json_object_get_int64(pid) : 0);
	k_u64(&w, "start_time", run->start_unix_ns / 1000000000u);
	k_u64(&w, "start_unix_ns", run->start_unix_ns);
	k_u64(&w, "start_ns", u64_at(rec, "start_ns"));
	k_u64(&w, "end_ns", u64_at(rec, "end_ns"));
	k_u64(&w, "window_ns", u64_at(s, "window_ns"));
	k_str(&w, "end_reason", field(rec, "end_reason"));
	key(&w, "exit_status");
	jw_i64(&w, exit_status ? json_object_get_int64(exit_status) : -1);
	k_u64(&w, "events", u64_at(s, "events"));
	k_u64(&w, "threads", u64_at(s, "threads"));
	k_u64(&w, "lost_events", u64_at(field(s, "lost_events"), "total"));
	k_u64(&w, "unterminated_spans", u64_at(s, "unterminated_spans"));
	k_u64(&w, "uncertain_spans", u64_at(s, "uncertain_spans"));
	k_u64(&w, "started_before_recording", u64_at(s, "started_before_recording"));
	k_bool(&w, "resources_available", field(res, "available"));
	k_u64(&w, "user_cpu_ns", u64_at(res, "user_cpu_ns"));
	k_u64(&w, "system_cpu_ns", u64_at(res, "system_cpu_ns"));
	key(&w, "peak_rss_kib");
	if (rss && json_object_is_type(rss, json_type_int))
		jw_u64(&w, u64_of(rss));
	else
		jw_null(&w);
	k_u64(&w, "voluntary_context_switches", u64_at(res, "voluntary_context_switches"));
	k_u64(&w, "involuntary_context_switches", u64_at(res, "involuntary_context_switches"));
	k_str(&w, "counter_name", field(s, "counter_name"));
	k_u64(&w, "summary_only", field(field(s, "files"), "trace") == NULL);
	k_u64(&w, "groups_rows", run->groups_rows);
	k_u64(&w, "spans_rows", run->spans_rows);
	k_u64(&w, "exported_at", run->exported_unix);
	/* record --window: the window's start by the wall clock and its length; 0: a whole recording. */
	k_u64(&w, "window_start_unix_ns", u64_at(field(s, "window"), "start_unix_ns"));
	k_u64(&w, "window_length_ns", u64_at(field(s, "window"), "length_ns"));
	jw_obj_end(&w);
	return end_row(&w, out);
}

/* hist.buckets ([[index, count], ...]) as two parallel arrays. */
static void buckets(struct jw *w, const char *kindex, const char *kcount, json_object *arr)
{
	size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;

	for (int pass = 0; pass < 2; pass++) {
		key(w, pass ? kcount : kindex);
		jw_arr_begin(w);
		for (size_t i = 0; i < n; i++)
			jw_u64(w, u64_of(json_object_array_get_idx(json_object_array_get_idx(arr, i),
								   pass)));
		jw_arr_end(w);
	}
}

int lp_ex_group_row(struct lp_buf *out, json_object *row, size_t index,
		    const struct lp_ex_run *run)
{
	json_object *meta = field(row, "meta"), *meta_text = field(row, "meta_text");
	json_object *folded = field(row, "folded"), *hist = field(row, "hist");
	json_object *counter = field(row, "total_counter");
	struct jw w;

	if (!row || !json_object_is_type(row, json_type_object))
		return -EINVAL;
	jw_init_buf(&w, out);
	jw_obj_begin(&w);
	k_cstr(&w, "run_id", run->run_id);
	k_cstr(&w, "host", run->host);
	k_u64(&w, "start_time", run->start_unix_ns / 1000000000u);
	k_u64(&w, "row", index);
	k_str(&w, "name", field(row, "name"));
	k_u64(&w, "meta_known", meta_text != NULL);
	k_str(&w, "meta_text", meta_text);
	/* The summary's meta object, in its order: keys are unique there (lp_meta_keys). */
	for (int pass = 0; pass < 2; pass++) {
		key(&w, pass ? "meta_values" : "meta_keys");
		jw_arr_begin(&w);
		if (meta && json_object_is_type(meta, json_type_object)) {
			json_object_object_foreach(meta, k, v)
			{
				if (!pass)
					jw_cstr(&w, k);
				else if (json_object_is_type(v, json_type_string))
					jw_str(&w, json_object_get_string(v),
					       (size_t)json_object_get_string_len(v));
				else
					jw_str(&w, "", 0);
			}
		}
		jw_arr_end(&w);
	}
	k_str(&w, "overflow", field(folded, "kind"));
	k_u64(&w, "calls", u64_at(row, "calls"));
	k_u64(&w, "self_ns", u64_at(row, "self_ns"));
	k_u64(&w, "total_ns", u64_at(row, "total_ns"));
	k_u64(&w, "mean_ns", u64_at(row, "mean_ns"));
	k_u64(&w, "p95_ns", u64_at(row, "p95_ns"));
	k_bool(&w, "p95_exact", field(row, "p95_exact"));
	k_u64(&w, "min_ns", u64_at(row, "min_ns"));
	k_u64(&w, "max_ns", u64_at(row, "max_ns"));
	k_u64(&w, "has_counter", counter && json_object_is_type(counter, json_type_int));
	k_u64(&w, "self_counter", u64_at(row, "self_counter"));
	k_u64(&w, "total_counter", u64_of(counter));
	k_u64(&w, "unterminated", u64_at(row, "unterminated"));
	k_u64(&w, "started_before_recording", u64_at(row, "started_before_recording"));
	k_u64(&w, "uncertain", u64_at(row, "uncertain"));
	buckets(&w, "hist_index", "hist_count", field(hist, "buckets"));
	buckets(&w, "self_hist_index", "self_hist_count", field(hist, "self_buckets"));
	jw_obj_end(&w);
	return end_row(&w, out);
}

/* ---- spans ---- */

int lp_ex_spans_init(struct lp_ex_spans *sp, const struct lp_ex_run *run)
{
	struct jw w;

	memset(sp, 0, sizeof(*sp));
	sp->run = run;
	/* The members every row of the run starts with, escaped once. */
	jw_init_buf(&w, &sp->prefix);
	jw_obj_begin(&w);
	k_cstr(&w, "run_id", run->run_id);
	k_cstr(&w, "host", run->host);
	if (jw_error(&w)) {
		lp_buf_free(&sp->prefix);
		return -ENOMEM;
	}
	return 0;
}

static struct lp_ex_stack *stack_of(struct lp_ex_spans *sp, uint32_t pid, uint32_t tid)
{
	struct lp_map_ent *e = lp_map_find(&sp->threads, pid, tid, true);

	if (!e)
		return NULL;
	if (!e->v1) {
		struct lp_ex_stack *st = lp_grow(sp->stacks, &sp->cap, sp->nstacks + 1,
						 sizeof(*st));

		if (!st)
			return NULL;
		sp->stacks = st;
		st[sp->nstacks++] = (struct lp_ex_stack){ 0 };
		e->v1 = sp->nstacks;
	}
	return &sp->stacks[e->v1 - 1];
}

/*
 * Read from the end, a thread's spans come parent first: the frames that do
 * not enclose this span are done with, the rest are its ancestors.
 */
int lp_ex_span_row(struct lp_ex_spans *sp, struct lp_buf *out, const struct lp_tr_span *s,
		   bool skip)
{
	uint64_t end = s->start_ns + s->dur_ns < s->start_ns ? UINT64_MAX : s->start_ns + s->dur_ns;
	uint64_t id = sp->next_id++, unix_ns = sp->run->start_unix_ns + s->start_ns;
	struct lp_ex_stack *st = stack_of(sp, s->pid, s->tid);
	int64_t parent;
	size_t depth, pos = 0, klen, vlen;
	const char *k, *v;
	struct jw w;

	if (!st)
		return -ENOMEM;
	while (st->n && !(st->f[st->n - 1].start <= s->start_ns && end <= st->f[st->n - 1].end))
		st->n--;
	depth = st->n;
	parent = st->n ? (int64_t)st->f[st->n - 1].id : -1;
	if (st->n < LP_NEST_MAX_DEPTH) {
		struct lp_ex_frame *f = lp_grow(st->f, &st->cap, st->n + 1, sizeof(*f));

		if (!f)
			return -ENOMEM;
		st->f = f;
		f[st->n++] = (struct lp_ex_frame){ s->start_ns, end, id };
	}
	if (skip)
		return 0;
	if (lp_buf_put(out, sp->prefix.p, sp->prefix.len))
		return -ENOMEM;
	jw_init_buf(&w, out);
	/* In the object the prefix opened: the next member needs its comma. */
	w.depth = 1;
	w.first[1] = false;
	k_u64(&w, "time", unix_ns / 1000000000u);
	k_u64(&w, "start_unix_ns", unix_ns);
	k_u64(&w, "start_ns", s->start_ns);
	k_u64(&w, "dur_ns", s->dur_ns);
	k_u64(&w, "pid", s->pid);
	k_u64(&w, "tid", s->tid);
	k_u64(&w, "span", id);
	key(&w, "parent");
	jw_i64(&w, parent);
	k_u64(&w, "depth", depth);
	key(&w, "name");
	jw_str(&w, s->name, s->name_len);
	for (int pass = 0; pass < 2; pass++) {
		key(&w, pass ? "meta_values" : "meta_keys");
		jw_arr_begin(&w);
		pos = 0;
		while (lp_tr_meta_next(s->meta, s->meta_len, &pos, &k, &klen, &v, &vlen))
			jw_str(&w, pass ? v : k, pass ? vlen : klen);
		jw_arr_end(&w);
	}
	k_u64(&w, "has_counter", s->has_counter);
	k_u64(&w, "counter", s->has_counter ? s->counter : 0);
	k_u64(&w, "unterminated", !!(s->flags & LP_SPAN_UNTERMINATED));
	k_u64(&w, "uncertain", !!(s->flags & LP_SPAN_UNCERTAIN));
	k_u64(&w, "started_before_recording", !!(s->flags & LP_SPAN_STARTED_BEFORE));
	jw_obj_end(&w);
	return end_row(&w, out);
}

void lp_ex_spans_free(struct lp_ex_spans *sp)
{
	for (size_t i = 0; i < sp->nstacks; i++)
		free(sp->stacks[i].f);
	free(sp->stacks);
	lp_map_free(&sp->threads);
	lp_buf_free(&sp->prefix);
	memset(sp, 0, sizeof(*sp));
}
