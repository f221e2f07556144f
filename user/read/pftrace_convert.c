// SPDX-License-Identifier: MIT
/*
 * report --format perfetto: a recording's JSON trace written again as
 * Perfetto's (pftrace.h), beside it, the file `record --format perfetto`
 * writes for the same recording. The JSON trace holds the writer's calls in
 * their order (trace.c and pftrace.c are called together, spans as they
 * close, --off-cpu's waits as they are drawn, names at the end), so the same
 * calls are made again: each span through lp_pftrace_span() with its texts
 * interned in a strtab of our own (its metadata text rebuilt, meta_text.h),
 * each wait through lp_pftrace_off_cpu(), the names after every span, and
 * otherData as the file has it.
 *
 * The JSON trace is read from its end (trace_read.h: a thread's spans after
 * those enclosing them), each span's depth found from the spans still open
 * on its thread, and spooled; read back from the spool's end, the spans come
 * in the file's own order, which the writer takes. Memory stays bounded: two
 * chunks, each thread's open spans, and the texts of LP_STRTAB_GC_FLOOR
 * bytes of spans.
 */
#define _GNU_SOURCE
#include "pftrace_convert.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map.h"
#include "meta_text.h"
#include "outfile.h"
#include "pftrace.h"
#include "pftrace_read.h"
#include "spool.h"
#include "strtab.h"
#include "summary_read.h"
#include "trace.h"

struct cv_frame {
	uint64_t start, end;
};

struct cv_stack {
	struct cv_frame *f;
	size_t n, cap;
};

enum cv_kind { CV_SPAN, CV_BLOCKED, CV_RUNQ };

/*
 * A span or a wait in the spool; a span's name, metadata and detail blobs
 * follow, then its struct lp_sched when has_sched.
 */
struct cv_rec {
	uint32_t pid, tid, depth, flags;
	uint64_t start, end, counter, self_counter, unmeasured;
	uint32_t name_len, meta_len, detail_len;
	uint8_t kind;
	bool has_counter, has_self_counter, has_detail, has_sched;
};

/* A name event, kept for the end as record gives names. */
struct cv_name {
	bool process;
	uint32_t pid, tid;
	size_t off, len; /* in converter.name_text */
};

/* What a blob (a strtab id) became: its metadata text's and detail text's ids + 1; 0: not yet. */
struct cv_text {
	uint32_t meta1, detail1;
};

/* A blob no metadata text gives back. */
#define CV_NO_TEXT UINT32_MAX

struct converter {
	struct lp_pftrace *pf;
	struct lp_spool spool;
	struct lp_map stack_of; /* (pid << 32 | tid, 0) -> index + 1 */
	struct cv_stack *stacks;
	size_t nstacks, cap;
	struct lp_buf rec;
	uint64_t base;
	char *other; /* otherData's text, as the file has it */
	struct cv_name *names;
	size_t nnames, names_cap;
	struct lp_buf name_text;
	struct strtab *st;
	struct cv_text *texts; /* by blob id */
	size_t texts_cap;
	struct lp_buf text;
	uint64_t lost_detail; /* spans whose detail or off-CPU split no text gives back */
};

static int on_other(void *ctx, json_object *other)
{
	struct converter *c = ctx;
	json_object *v;

	if (other && json_object_object_get_ex(other, "base_ns", &v))
		c->base = (uint64_t)json_object_get_int64(v);
	return 0;
}

static int on_other_text(void *ctx, const char *json, size_t len)
{
	struct converter *c = ctx;

	if (!json)
		return 0;
	c->other = strndup(json, len);
	return c->other ? 0 : -ENOMEM;
}

static int on_name(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *name,
		   size_t len)
{
	struct converter *c = ctx;
	struct cv_name *n = lp_grow(c->names, &c->names_cap, c->nnames + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	c->names = n;
	c->names[c->nnames++] = (struct cv_name){ process, pid, tid, c->name_text.len, len };
	return lp_buf_put(&c->name_text, name, len) ? -ENOMEM : 0;
}

static struct cv_stack *stack_of(struct converter *c, uint32_t pid, uint32_t tid)
{
	struct lp_map_ent *e = lp_map_find(&c->stack_of, (uint64_t)pid << 32 | tid, 0, true);
	struct cv_stack *s;

	if (!e)
		return NULL;
	if (e->v1)
		return &c->stacks[e->v1 - 1];
	s = lp_grow(c->stacks, &c->cap, c->nstacks + 1, sizeof(*s));
	if (!s)
		return NULL;
	c->stacks = s;
	c->stacks[c->nstacks] = (struct cv_stack){ 0 };
	e->v1 = ++c->nstacks;
	return &c->stacks[c->nstacks - 1];
}

static bool encloses(const struct cv_frame *f, uint64_t start, uint64_t end)
{
	return f->start <= start && end <= f->end;
}

/* The JSON trace's times from the recording's start, as the writer's: absolute. */
static void times_of(const struct converter *c, const struct lp_tr_span *s, uint64_t *start,
		     uint64_t *end)
{
	*start = c->base + s->start_ns;
	*end = *start + s->dur_ns;
}

static int spool_rec(struct converter *c, const struct cv_rec *r, const struct lp_tr_span *s)
{
	c->rec.len = 0;
	if (lp_buf_put(&c->rec, (const char *)r, sizeof(*r)))
		return -ENOMEM;
	if (s && (lp_buf_put(&c->rec, s->name, s->name_len) ||
		  lp_buf_put(&c->rec, s->meta, s->meta_len) ||
		  lp_buf_put(&c->rec, s->detail, s->detail_len) ||
		  (s->has_sched &&
		   lp_buf_put(&c->rec, (const char *)&s->sched, sizeof(s->sched)))))
		return -ENOMEM;
	return lp_spool_put(&c->spool, c->rec.p, c->rec.len);
}

/*
 * A span, its depth as record gave it: the spans of its thread that enclose
 * it (they came before it), but those open at attach.
 */
static int on_span(void *ctx, const struct lp_tr_span *s)
{
	struct converter *c = ctx;
	struct cv_stack *st = stack_of(c, s->pid, s->tid);
	struct cv_frame *f;
	struct cv_rec r;
	uint64_t start, end;

	if (!st)
		return -ENOMEM;
	times_of(c, s, &start, &end);
	while (st->n && !encloses(&st->f[st->n - 1], start, end))
		st->n--;
	r = (struct cv_rec){ .pid = s->pid, .tid = s->tid, .depth = (uint32_t)st->n,
			     .flags = s->flags, .start = start, .end = end, .counter = s->counter,
			     .self_counter = s->self_counter, .unmeasured = s->unmeasured_ns,
			     .name_len = (uint32_t)s->name_len, .meta_len = (uint32_t)s->meta_len,
			     .detail_len = (uint32_t)s->detail_len, .kind = CV_SPAN,
			     .has_counter = s->has_counter, .has_self_counter = s->has_self_counter,
			     .has_detail = s->has_detail, .has_sched = s->has_sched };
	/*
	 * A span open at attach, rebuilt from its exit (nest.c): what it encloses
	 * closed before anyone knew of it, at depths that do not count it.
	 */
	if (s->flags & LP_SPAN_STARTED_BEFORE)
		return spool_rec(c, &r, s);
	f = lp_grow(st->f, &st->cap, st->n + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	st->f = f;
	f[st->n++] = (struct cv_frame){ start, end };
	return spool_rec(c, &r, s);
}

/*
 * A wait: its depth, the spans of its thread that enclose it, as record
 * gives it (the spans open when it was drawn). The stack stays: a wait
 * encloses nothing.
 */
static int on_off_cpu(void *ctx, const struct lp_tr_span *s)
{
	struct converter *c = ctx;
	struct cv_stack *st = stack_of(c, s->pid, s->tid);
	struct cv_rec r;
	uint64_t start, end;
	size_t depth;
	bool runq = s->name_len == 4 && !memcmp(s->name, "runq", 4);

	if (!st)
		return -ENOMEM;
	if (!runq && !(s->name_len == 7 && !memcmp(s->name, "blocked", 7)))
		return 0; /* not one record writes */
	times_of(c, s, &start, &end);
	depth = st->n;
	while (depth && !encloses(&st->f[depth - 1], start, end))
		depth--;
	r = (struct cv_rec){ .pid = s->pid, .tid = s->tid, .depth = (uint32_t)depth,
			     .start = start, .end = end, .kind = runq ? CV_RUNQ : CV_BLOCKED };
	return spool_rec(c, &r, NULL);
}

/* Texts collected: nothing holds them once their span is written, but the writer's caches. */
static void forget_text(void *ctx, uint32_t id)
{
	struct converter *c = ctx;

	lp_pftrace_forget(c->pf, id);
	if (id < c->texts_cap)
		c->texts[id] = (struct cv_text){ 0 };
}

/*
 * The strtab id of the metadata text (detail: of the detail's) that gives
 * blob's items back, made once per blob; CV_NO_TEXT when none does.
 */
static uint32_t text_of(struct converter *c, const char *blob, size_t len, bool detail)
{
	uint32_t id = strtab_intern(c->st, blob, len), *slot, text;
	size_t old = c->texts_cap;
	int err;

	if (id == UINT32_MAX)
		return CV_NO_TEXT;
	if (id >= c->texts_cap) {
		struct cv_text *t = lp_grow(c->texts, &c->texts_cap, (size_t)id + 1, sizeof(*t));

		if (!t)
			return CV_NO_TEXT;
		memset(t + old, 0, (c->texts_cap - old) * sizeof(*t));
		c->texts = t;
	}
	slot = detail ? &c->texts[id].detail1 : &c->texts[id].meta1;
	if (*slot)
		return *slot == CV_NO_TEXT ? CV_NO_TEXT : *slot - 1;
	err = lp_meta_text(blob, len, detail ? NULL : lp_trace_reserved_keys, &c->text);
	/* A detail object with no items is still one: a text that parses to none. */
	if (!err && detail && c->text.len == 0)
		err = lp_buf_put(&c->text, ",", 1) ? -ENOMEM : 0;
	text = err ? CV_NO_TEXT : strtab_intern(c->st, c->text.p, c->text.len);
	*slot = text == CV_NO_TEXT ? CV_NO_TEXT : text + 1;
	return text;
}
/*
 * A span as record gave it to the writer. Metadata no text gives back (not
 * record's) goes in as it is, by lp_pftrace_span_part(), without the detail
 * and split that only lp_pftrace_span() writes.
 */
static void write_span(struct converter *c, const struct cv_rec *r, const char *p)
{
	const char *name = p, *meta = name + r->name_len, *detail = meta + r->meta_len;
	struct lp_span s = { .pid = r->pid, .tid = r->tid, .depth = r->depth, .flags = r->flags,
			     .start_ns = r->start, .end_ns = r->end, .total_ns = r->end - r->start,
			     .has_counter = r->has_counter, .counter_total = r->counter,
			     .counter_self = r->self_counter, .has_sched = r->has_sched,
			     .unmeasured_ns = r->unmeasured };
	uint32_t meta_id = r->meta_len ? text_of(c, meta, r->meta_len, false) : 0;

	if (r->has_sched)
		memcpy(&s.sched, detail + r->detail_len, sizeof(s.sched));
	s.name = strtab_intern(c->st, name, r->name_len);
	if (r->has_detail)
		s.detail = text_of(c, detail, r->detail_len, true);
	if (s.name == UINT32_MAX || meta_id == CV_NO_TEXT || r->has_counter != r->has_self_counter) {
		struct lp_pftrace_part part = {
			.pid = r->pid, .tid = r->tid, .depth = r->depth, .start_ns = r->start,
			.end_ns = r->end, .name = name, .name_len = r->name_len, .meta = meta,
			.meta_len = r->meta_len, .has_counter = r->has_counter,
			.counter = r->counter, .has_self_counter = r->has_self_counter,
			.self_counter = r->self_counter, .flags = r->flags,
		};

		c->lost_detail += r->has_detail || r->has_sched;
		lp_pftrace_span_part(c->pf, &part);
		return;
	}
	if (s.detail == CV_NO_TEXT) {
		s.detail = 0;
		c->lost_detail++;
	}
	s.meta = meta_id;
	lp_pftrace_span(c->pf, &s);
}

/* The spool from its end: the spans and waits in the JSON file's order, into the writer. */
static int write_spans(struct converter *c)
{
	const void *p;
	size_t len;
	int n, err = lp_spool_rewind(&c->spool);

	while (!err && (n = lp_spool_prev(&c->spool, &p, &len)) == 1) {
		struct cv_rec r;

		if (len < sizeof(r))
			return -EIO;
		memcpy(&r, p, sizeof(r));
		if (r.kind == CV_SPAN && len != sizeof(r) + r.name_len + r.meta_len + r.detail_len +
						     (r.has_sched ? sizeof(struct lp_sched) : 0))
			return -EIO;
		if (r.kind == CV_BLOCKED) /* one slice a call: runq's [end, end] is none */
			lp_pftrace_off_cpu(c->pf, r.pid, r.tid, r.depth, r.start, r.end, r.end);
		else if (r.kind == CV_RUNQ) /* blocked's [start, start - 1], none */
			lp_pftrace_off_cpu(c->pf, r.pid, r.tid, r.depth, r.start, r.start, r.end);
		else
			write_span(c, &r, (const char *)p + sizeof(r));
		if (strtab_gc_due(c->st)) {
			strtab_gc_begin(c->st);
			strtab_gc_end(c->st, forget_text, c, NULL);
		}
	}
	return err ? err : n;
}

/* The names, in the file's order, after the spans: where record gives them. */
static void write_names(struct converter *c)
{
	for (size_t i = c->nnames; i-- > 0;) {
		const struct cv_name *n = &c->names[i];

		lp_pftrace_name_text(c->pf, n->process, n->pid, n->tid, c->name_text.p + n->off,
				     n->len);
	}
}

/* The JSON trace PATH names: a recording's directory, its summary, or the trace itself. */
static char *json_trace_of(const char *path)
{
	struct stat st;
	char *copy, *out = NULL;
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		if (asprintf(&out, "%s/%s", path, LP_TRACE_FILE) < 0)
			out = NULL;
		return out;
	}
	if (strcmp(base, LP_SUMMARY_FILE))
		return strdup(path);
	copy = strdup(path);
	if (copy && asprintf(&out, "%s/%s", dirname(copy), LP_TRACE_FILE) < 0)
		out = NULL;
	free(copy);
	return out;
}

static void converter_free(struct converter *c)
{
	lp_spool_close(&c->spool);
	strtab_free(c->st);
	free(c->texts);
	lp_buf_free(&c->text);
	free(c->names);
	lp_buf_free(&c->name_text);
	lp_map_free(&c->stack_of);
	for (size_t i = 0; i < c->nstacks; i++)
		free(c->stacks[i].f);
	free(c->stacks);
	lp_buf_free(&c->rec);
	free(c->other);
}

int lp_pftrace_convert(const char *path, char **out)
{
	struct converter c = { .spool = { .fd = -1 } };
	struct lp_tr_sink sink = { .other_data = on_other, .other_data_text = on_other_text,
				   .span = on_span, .off_cpu = on_off_cpu, .thread_name = on_name,
				   .ctx = &c };
	struct lp_pftrace_stats stats;
	char *json = json_trace_of(path), *copy = json ? strdup(json) : NULL, *dest = NULL;
	int err;

	*out = NULL;
	if (!json || !copy || asprintf(&dest, "%s/%s", dirname(copy), LP_PFTRACE_FILE) < 0) {
		lp_err("cannot convert %s: out of memory", path);
		free(json);
		free(copy);
		return -ENOMEM;
	}
	free(copy);
	if (access(json, R_OK)) {
		err = -errno;
		lp_err("cannot read the trace %s: %s", json, strerror(-err));
	} else if (lp_pftrace_is(json)) {
		err = -EINVAL;
		lp_err("%s is already a Perfetto trace", json);
	} else {
		err = lp_spool_open(&c.spool);
		if (err)
			lp_err("cannot make a temporary file in %s: %s",
			       getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(-err));
	}
	if (!err && !(c.st = strtab_new())) {
		err = -ENOMEM;
		lp_err("cannot convert %s: out of memory", json);
	}
	if (!err) {
		err = lp_pftrace_open(&c.pf, dest, c.st, 0);
		if (err)
			lp_err("cannot write %s: %s", dest, lp_outfile_strerror(err));
	}
	if (!err) {
		err = lp_trace_read(json, &sink, NULL);
		if (err == -E2BIG)
			lp_err("%s: a line longer than %u bytes (LP_TRACE_LINE_MAX): not a trace "
			       "record writes", json, LP_TRACE_LINE_MAX);
		else if (err)
			lp_err("cannot read the trace %s: %s", json, strerror(-err));
		if (!err) {
			err = write_spans(&c);
			if (err)
				lp_err("cannot convert %s: %s", json, strerror(-err));
			else
				write_names(&c);
		}
		if (!err && c.lost_detail)
			lp_warn("%s: %" PRIu64 " spans whose metadata or detail record does not "
				"write: converted without their detail and --off-cpu split", json,
				c.lost_detail);
		if (err) {
			lp_pftrace_abort(c.pf);
		} else {
			err = lp_pftrace_close(c.pf, c.other, &stats);
			if (err)
				lp_err("cannot write %s: %s", dest, strerror(-err));
		}
	}
	converter_free(&c);
	free(json);
	if (err) {
		free(dest);
		return err;
	}
	*out = dest;
	return 0;
}
