// SPDX-License-Identifier: MIT
#include "trace.h"

#include <errno.h>
#include <string.h>

#include "meta.h"

int lp_trace_open(struct lp_trace *t, const char *path, const struct strtab *st, uint64_t base_ns)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = lp_outfile_open(&t->out, path);
	if (err)
		return err;
	t->st = st;
	t->base_ns = base_ns;
	jw_init(&t->w, t->out.f);
	jw_obj_begin(&t->w);
	jw_key(&t->w, "displayTimeUnit", 15);
	jw_cstr(&t->w, "ns");
	jw_key(&t->w, "traceEvents", 11);
	jw_arr_begin(&t->w);
	return 0;
}

/* The keys of args the profiler writes itself: a metadata key equal to one is renamed. */
static const char *const reserved_keys[] = { "counter", "self_counter", "unterminated",
					     "uncertain", "started_before_recording", NULL };

void lp_trace_write_args(struct jw *w, const struct strtab *st, const struct lp_span *s)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	size_t len, n;
	const char *meta = strtab_str(st, s->meta, &len);

	n = lp_meta_parse(meta, len, items, ARRAY_SIZE(items));
	lp_meta_keys(items, n, reserved_keys, keys);
	jw_obj_begin(w);
	for (size_t i = 0; i < n; i++) {
		jw_key(w, keys[i].s, keys[i].len);
		jw_str(w, items[i].val, items[i].val_len);
	}
	if (s->has_counter) {
		jw_key(w, "counter", 7);
		jw_u64(w, s->counter_total);
		jw_key(w, "self_counter", 12);
		jw_u64(w, s->counter_self);
	}
	if (s->flags & LP_SPAN_UNTERMINATED) {
		jw_key(w, "unterminated", 12);
		jw_bool(w, true);
	}
	if (s->flags & LP_SPAN_STARTED_BEFORE) {
		jw_key(w, "started_before_recording", 24);
		jw_bool(w, true);
	}
	if (s->flags & LP_SPAN_UNCERTAIN) {
		jw_key(w, "uncertain", 9);
		jw_bool(w, true);
	}
	jw_obj_end(w);
}

static void write_ids(struct jw *w, uint32_t pid, uint32_t tid)
{
	jw_key(w, "pid", 3);
	jw_u64(w, pid);
	jw_key(w, "tid", 3);
	jw_u64(w, tid);
}

void lp_trace_span(struct lp_trace *t, const struct lp_span *s)
{
	struct jw *w = &t->w;
	size_t len;
	const char *name = strtab_str(t->st, s->name, &len);
	uint64_t start = s->start_ns > t->base_ns ? s->start_ns - t->base_ns : 0;

	jw_newline(w);
	jw_obj_begin(w);
	jw_key(w, "ph", 2);
	jw_cstr(w, "X");
	jw_key(w, "name", 4);
	jw_str(w, name, len);
	jw_key(w, "cat", 3);
	jw_cstr(w, "span");
	write_ids(w, s->pid, s->tid);
	jw_key(w, "ts", 2);
	jw_usec(w, start);
	jw_key(w, "dur", 3);
	jw_usec(w, s->total_ns);
	jw_key(w, "args", 4);
	lp_trace_write_args(w, t->st, s);
	jw_obj_end(w);
	t->spans++;
}

static void write_name_event(struct jw *w, const char *what, uint32_t pid, uint32_t tid,
			     const char *name, size_t len)
{
	jw_newline(w);
	jw_obj_begin(w);
	jw_key(w, "ph", 2);
	jw_cstr(w, "M");
	jw_key(w, "name", 4);
	jw_cstr(w, what);
	write_ids(w, pid, tid);
	jw_key(w, "args", 4);
	jw_obj_begin(w);
	jw_key(w, "name", 4);
	jw_str(w, name, len);
	jw_obj_end(w);
	jw_obj_end(w);
}

void lp_trace_name(struct lp_trace *t, bool process, uint32_t pid, uint32_t tid, uint32_t name)
{
	size_t len;
	const char *s = strtab_str(t->st, name, &len);

	write_name_event(&t->w, process ? "process_name" : "thread_name", pid, tid, s, len);
}

int lp_trace_close(struct lp_trace *t, const char *other_data_json)
{
	int err;

	jw_newline(&t->w);
	jw_arr_end(&t->w);
	if (other_data_json) {
		/* Already valid JSON (built by json-c): copied verbatim. */
		fputs(",\"otherData\":", t->out.f);
		fputs(other_data_json, t->out.f);
	}
	jw_obj_end(&t->w);
	jw_newline(&t->w);
	/* A failed write is retried by the flush, which then says why (ENOSPC...). */
	err = fflush(t->out.f) ? -errno : jw_error(&t->w);
	if (err) {
		lp_outfile_abort(&t->out);
		return err;
	}
	return lp_outfile_commit(&t->out);
}

void lp_trace_abort(struct lp_trace *t)
{
	lp_outfile_abort(&t->out);
}
