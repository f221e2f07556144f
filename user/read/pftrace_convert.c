// SPDX-License-Identifier: MIT
/*
 * report --format perfetto: a recording's JSON trace written again as
 * Perfetto's (pftrace.h), beside it. The JSON trace is read from its end
 * (trace_read.h: a thread's spans after those enclosing them), each span's
 * depth found from the spans still open on its thread, and spooled; read back
 * from the spool's end, the spans come in the JSON file's own order, children
 * before parents, which the writer takes. Memory stays bounded: two chunks and
 * each thread's open spans.
 */
#define _GNU_SOURCE
#include "pftrace_convert.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map.h"
#include "outfile.h"
#include "pftrace.h"
#include "pftrace_read.h"
#include "spool.h"
#include "summary_read.h"

struct cv_frame {
	uint64_t start, end;
};

struct cv_stack {
	struct cv_frame *f;
	size_t n, cap;
};

/* A span in the spool; its name and metadata follow. */
struct cv_rec {
	uint32_t pid, tid, depth, flags;
	uint64_t start, end, counter, self_counter;
	uint32_t name_len, meta_len;
	bool has_counter, has_self_counter;
};

struct converter {
	struct lp_pftrace *pf;
	struct lp_spool spool;
	struct lp_map stack_of; /* (pid << 32 | tid, 0) -> index + 1 */
	struct cv_stack *stacks;
	size_t nstacks, cap;
	struct lp_buf rec;
	uint64_t base;
	char *other;
};

static int on_other(void *ctx, json_object *other)
{
	struct converter *c = ctx;
	json_object *v;

	if (!other)
		return 0;
	if (json_object_object_get_ex(other, "base_ns", &v))
		c->base = (uint64_t)json_object_get_int64(v);
	c->other = strdup(json_object_to_json_string_ext(other, JSON_C_TO_STRING_PLAIN));
	return c->other ? 0 : -ENOMEM;
}

static int on_name(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *name,
		   size_t len)
{
	struct converter *c = ctx;

	lp_pftrace_name_text(c->pf, process, pid, tid, name, len);
	return 0;
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

/* A span, its depth: the spans of its thread that enclose it (they came before it). */
static int on_span(void *ctx, const struct lp_tr_span *s)
{
	struct converter *c = ctx;
	struct cv_stack *st = stack_of(c, s->pid, s->tid);
	uint64_t start = c->base + s->start_ns, end = start + s->dur_ns;
	struct cv_frame *f;
	struct cv_rec r;

	if (!st)
		return -ENOMEM;
	while (st->n && !(st->f[st->n - 1].start <= start && end <= st->f[st->n - 1].end))
		st->n--;
	r = (struct cv_rec){ s->pid, s->tid, (uint32_t)st->n, s->flags, start, end, s->counter,
			     s->self_counter, (uint32_t)s->name_len, (uint32_t)s->meta_len,
			     s->has_counter, s->has_self_counter };
	f = lp_grow(st->f, &st->cap, st->n + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	st->f = f;
	f[st->n++] = (struct cv_frame){ start, end };
	c->rec.len = 0;
	if (lp_buf_put(&c->rec, (const char *)&r, sizeof(r)) ||
	    lp_buf_put(&c->rec, s->name, s->name_len) || lp_buf_put(&c->rec, s->meta, s->meta_len))
		return -ENOMEM;
	return lp_spool_put(&c->spool, c->rec.p, c->rec.len);
}

/* The spool from its end: the spans in the JSON file's order, into the writer. */
static int write_spans(struct converter *c)
{
	const void *p;
	size_t len;
	int n, err = lp_spool_rewind(&c->spool);

	while (!err && (n = lp_spool_prev(&c->spool, &p, &len)) == 1) {
		struct cv_rec r;
		struct lp_pftrace_part part;

		if (len < sizeof(r))
			return -EIO;
		memcpy(&r, p, sizeof(r));
		part = (struct lp_pftrace_part){
			.pid = r.pid, .tid = r.tid, .depth = r.depth, .start_ns = r.start,
			.end_ns = r.end, .name = (const char *)p + sizeof(r), .name_len = r.name_len,
			.meta = (const char *)p + sizeof(r) + r.name_len, .meta_len = r.meta_len,
			.has_counter = r.has_counter, .counter = r.counter,
			.has_self_counter = r.has_self_counter, .self_counter = r.self_counter,
			.flags = r.flags,
		};
		lp_pftrace_span_part(c->pf, &part);
	}
	return err ? err : n;
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
	struct lp_tr_sink sink = { on_other, on_span, on_name, &c };
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
	if (!err) {
		err = lp_pftrace_open(&c.pf, dest, NULL, 0);
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
		}
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
