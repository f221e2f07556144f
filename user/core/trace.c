// SPDX-License-Identifier: MIT
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"

/* What an event is to the ring (tracering.h). */
enum ring_kind { RING_SPAN, RING_INNER, RING_KEEP };

static void ring_take(struct lp_trace *t, enum ring_kind kind, uint32_t pid, uint32_t tid,
		      uint64_t start_ns, uint64_t end_ns);
static void ring_detach(struct lp_trace *t, bool flush);

/* The file's opening: everything before the first event. */
static void begin(struct lp_trace *t, const struct strtab *st, uint64_t base_ns)
{
	t->st = st;
	t->base_ns = base_ns;
	jw_obj_begin(&t->w);
	jw_key(&t->w, "displayTimeUnit", 15);
	jw_cstr(&t->w, "ns");
	jw_key(&t->w, "traceEvents", 11);
	jw_arr_begin(&t->w);
}

int lp_trace_openat(struct lp_trace *t, int dirfd, const char *name, const struct strtab *st,
		    uint64_t base_ns)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = lp_outfile_openat(&t->out, dirfd, name);
	if (err)
		return err;
	/* The writer's own buffer and write(2): the stream stays empty, commit only syncs it. */
	jw_init_fd(&t->w, fileno(t->out.f));
	begin(t, st, base_ns);
	return 0;
}

void lp_trace_open_stream(struct lp_trace *t, FILE *f, const struct strtab *st, uint64_t base_ns)
{
	memset(t, 0, sizeof(*t));
	jw_init(&t->w, f);
	begin(t, st, base_ns);
}

int lp_trace_open(struct lp_trace *t, const char *path, const struct strtab *st, uint64_t base_ns)
{
	return lp_trace_openat(t, AT_FDCWD, path, st, base_ns);
}

/* The keys of args the profiler writes itself: a metadata key equal to one is renamed. */
const char *const lp_trace_reserved_keys[] = { "counter", "self_counter", "unterminated",
					     "uncertain", "started_before_recording", "cpu_us",
					     "steal_us", "runq_us", "blocked_us", "voluntary_switches",
					     "involuntary_switches", "off_cpu_unmeasured_us", "detail",
					     NULL };


/* The items of a metadata text as args members, "k":"v","k2":"v2", into m. */
static void write_meta_items(struct jw *m, const char *meta, size_t len)
{
	lp_meta_write(m, meta, len, lp_trace_reserved_keys);
}

void lp_trace_write_args(struct jw *w, const struct strtab *st, const struct lp_span *s)
{
	size_t len;
	const char *meta = strtab_str(st, s->meta, &len);

	jw_obj_begin(w);
	write_meta_items(w, meta, len);
	if (s->detail) {
		/* args= of a span-pair spec: an object, so that readers never take it for metadata. */
		meta = strtab_str(st, s->detail, &len);
		jw_key(w, "detail", 6);
		jw_obj_begin(w);
		lp_meta_write(w, meta, len, NULL);
		jw_obj_end(w);
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
	if (s->has_sched) {
		jw_key(w, "cpu_us", 6);
		jw_usec(w, s->sched.cpu_ns);
		jw_key(w, "steal_us", 8);
		jw_usec(w, s->sched.steal_ns);
		jw_key(w, "runq_us", 7);
		jw_usec(w, s->sched.runq_ns);
		jw_key(w, "blocked_us", 10);
		jw_usec(w, s->sched.blocked_ns);
		jw_key(w, "voluntary_switches", 18);
		jw_u64(w, s->sched.vcsw);
		jw_key(w, "involuntary_switches", 20);
		jw_u64(w, s->sched.ivcsw);
		if (s->unmeasured_ns) {
			jw_key(w, "off_cpu_unmeasured_us", 21);
			jw_usec(w, s->unmeasured_ns);
		}
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

/* Every byte of a span's event as jw calls: for what the caches cannot hold. */
static void write_span_uncached(struct lp_trace *t, const struct lp_span *s, uint64_t start)
{
	struct jw *w = &t->w;
	size_t len;
	const char *name = strtab_str(t->st, s->name, &len);

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
}

/*
 * The fragment of string id: the escaped name, or the metadata's args items.
 * NULL when there is no memory for it.
 */
static __attribute__((noinline)) const struct lp_trace_frag *frag_build(struct lp_trace *t,
									  uint32_t id, bool is_meta)
{
	struct lp_trace_frag **cache = is_meta ? &t->metas : &t->names, *c;
	size_t *cap = is_meta ? &t->metas_cap : &t->names_cap;
	size_t len, old = *cap;
	const char *text;
	struct jw m;

	if (id >= strtab_count(t->st))
		id = 0; /* as strtab_str() reads it */
	if (id < *cap && (*cache)[id].len1)
		return &(*cache)[id];
	c = lp_grow(*cache, cap, (size_t)id + 1, sizeof(*c));
	if (!c)
		return NULL;
	memset(c + old, 0, (*cap - old) * sizeof(*c));
	*cache = c;
	c = &c[id];
	text = strtab_str(t->st, id, &len);
	c->off = t->frags.len;
	jw_init_buf(&m, &t->frags);
	if (is_meta)
		write_meta_items(&m, text, len);
	else
		jw_string_raw(&m, text, len);
	if (jw_error(&m) || t->frags.len - c->off >= UINT32_MAX) {
		t->frags.len = c->off;
		return NULL;
	}
	c->len1 = (uint32_t)(t->frags.len - c->off) + 1;
	return c;
}

/* As frag_build(), inline when the fragment is built already (nearly every span). */
static inline const struct lp_trace_frag *frag(struct lp_trace *t, uint32_t id, bool is_meta)
{
	struct lp_trace_frag *cache = is_meta ? t->metas : t->names;
	size_t cap = is_meta ? t->metas_cap : t->names_cap;

	if (id < cap && cache[id].len1 && id < strtab_count(t->st))
		return &cache[id];
	return frag_build(t, id, is_meta);
}

/* The fragment of id in cache (cap entries) goes. */
static void forget(struct lp_trace *t, struct lp_trace_frag *cache, size_t cap, uint32_t id)
{
	if (id >= cap || !cache[id].len1)
		return;
	t->frags_dead += cache[id].len1 - 1;
	cache[id].len1 = 0;
}

void lp_trace_forget(struct lp_trace *t, uint32_t id)
{
	forget(t, t->names, t->names_cap, id);
	forget(t, t->metas, t->metas_cap, id);
}

/* Appends the fragments of cache to to, which has room, and points them there. */
static void move_frags(const struct lp_buf *from, struct lp_buf *to, struct lp_trace_frag *cache,
		       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!cache[i].len1)
			continue;
		memcpy(to->p + to->len, from->p + cache[i].off, cache[i].len1 - 1);
		cache[i].off = to->len;
		to->len += cache[i].len1 - 1;
	}
}

void lp_trace_compact(struct lp_trace *t)
{
	size_t used = t->frags.len - t->frags_dead;
	struct lp_buf b = { 0 };

	if (!t->frags_dead)
		return;
	t->frags_dead = 0;
	b.p = lp_grow(NULL, &b.cap, used + 1, 1);
	if (!b.p) {
		/* No room for a copy: every fragment is built again when next used. */
		for (size_t i = 0; i < t->names_cap; i++)
			t->names[i].len1 = 0;
		for (size_t i = 0; i < t->metas_cap; i++)
			t->metas[i].len1 = 0;
		lp_buf_free(&t->frags);
		return;
	}
	move_frags(&t->frags, &b, t->names, t->names_cap);
	move_frags(&t->frags, &b, t->metas, t->metas_cap);
	b.p[b.len] = '\0';
	lp_buf_free(&t->frags);
	t->frags = b;
}

static char *put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

#define PUT(p, lit) put(p, lit, sizeof(lit) - 1)

/* At most 300 bytes: 5 usec, 2 u64 and 162 of keys. more: whether a member came before. */
static char *put_sched(char *p, const struct lp_span *s, bool more)
{
	p = more ? PUT(p, ",\"cpu_us\":") : PUT(p, "\"cpu_us\":");
	p = jw_fmt_usec(p, s->sched.cpu_ns);
	p = PUT(p, ",\"steal_us\":");
	p = jw_fmt_usec(p, s->sched.steal_ns);
	p = PUT(p, ",\"runq_us\":");
	p = jw_fmt_usec(p, s->sched.runq_ns);
	p = PUT(p, ",\"blocked_us\":");
	p = jw_fmt_usec(p, s->sched.blocked_ns);
	p = PUT(p, ",\"voluntary_switches\":");
	p = jw_fmt_u64(p, s->sched.vcsw);
	p = PUT(p, ",\"involuntary_switches\":");
	p = jw_fmt_u64(p, s->sched.ivcsw);
	if (s->unmeasured_ns) {
		p = PUT(p, ",\"off_cpu_unmeasured_us\":");
		p = jw_fmt_usec(p, s->unmeasured_ns);
	}
	return p;
}

/* `,"pid":P,"tid":T` of a thread: the same for every span of it, kept per thread. */
static const struct lp_trace_ids *ids_text(struct lp_trace *t, uint32_t pid, uint32_t tid)
{
	struct lp_trace_ids *c = &t->ids[tid % LP_TRACE_IDS];
	char *p;

	if (c->len && c->pid == pid && c->tid == tid)
		return c;
	p = PUT(c->text, ",\"pid\":");
	p = jw_fmt_u64(p, pid);
	p = PUT(p, ",\"tid\":");
	p = jw_fmt_u64(p, tid);
	c->pid = pid;
	c->tid = tid;
	c->len = (uint8_t)(p - c->text);
	return c;
}

/* The most a span's event takes beyond its two fragments (sched included). */
#define SPAN_FIXED_MAX 1024

/*
 * One "X" event. Only ids, times, counters and flags differ between spans of
 * one name and metadata: the rest is copied from the fragments, the numbers
 * formatted in place, all in one room of the writer's buffer. Byte for byte
 * what write_span_uncached() writes.
 */
static void span_event(struct lp_trace *t, const struct lp_span *s)
{
	struct jw *w = &t->w;
	uint64_t start = s->start_ns > t->base_ns ? s->start_ns - t->base_ns : 0;
	const struct lp_trace_frag *name = frag(t, s->name, false);
	const struct lp_trace_frag *meta = name ? frag(t, s->meta, true) : NULL;
	const struct lp_trace_ids *ids;
	bool more;
	char *p;

	t->spans++;
	if (!name || !meta || s->detail ||
	    !(p = jw_line_room(w, name->len1 + meta->len1 + SPAN_FIXED_MAX))) {
		write_span_uncached(t, s, start);
		return;
	}
	ids = ids_text(t, s->pid, s->tid);
	p = PUT(p, "{\"ph\":\"X\",\"name\":");
	p = put(p, t->frags.p + name->off, name->len1 - 1);
	p = PUT(p, ",\"cat\":\"span\"");
	p = put(p, ids->text, ids->len);
	p = PUT(p, ",\"ts\":");
	p = jw_fmt_usec(p, start);
	p = PUT(p, ",\"dur\":");
	p = jw_fmt_usec(p, s->total_ns);
	p = PUT(p, ",\"args\":{");
	p = put(p, t->frags.p + meta->off, meta->len1 - 1);
	more = meta->len1 > 1;
	if (s->has_counter) {
		p = more ? PUT(p, ",\"counter\":") : PUT(p, "\"counter\":");
		p = jw_fmt_u64(p, s->counter_total);
		p = PUT(p, ",\"self_counter\":");
		p = jw_fmt_u64(p, s->counter_self);
		more = true;
	}
	if (s->flags & LP_SPAN_UNTERMINATED) {
		p = more ? PUT(p, ",\"unterminated\":true") : PUT(p, "\"unterminated\":true");
		more = true;
	}
	if (s->flags & LP_SPAN_STARTED_BEFORE) {
		p = more ? PUT(p, ",\"started_before_recording\":true")
			 : PUT(p, "\"started_before_recording\":true");
		more = true;
	}
	if (s->flags & LP_SPAN_UNCERTAIN) {
		p = more ? PUT(p, ",\"uncertain\":true") : PUT(p, "\"uncertain\":true");
		more = true;
	}
	if (s->has_sched)
		p = put_sched(p, s, more);
	p = PUT(p, "}}");
	jw_advance(w, p);
}

/* One slice of an interval off a CPU: at most 140 bytes. */
static void off_cpu_slice(struct lp_trace *t, const char *what, uint32_t pid, uint32_t tid,
			  uint64_t from, uint64_t to)
{
	struct jw *w = &t->w;
	char *p;

	if (to <= from)
		return;
	t->off_cpu++;
	jw_newline(w);
	jw_raw_value(w, "{\"ph\":\"X\",\"name\":\"", 18);
	p = jw_room(w, JW_ROOM_MAX);
	p = put(p, what, strlen(what));
	p = PUT(p, "\",\"cat\":\"off-cpu\",\"pid\":");
	p = jw_fmt_u64(p, pid);
	p = PUT(p, ",\"tid\":");
	p = jw_fmt_u64(p, tid);
	p = PUT(p, ",\"ts\":");
	p = jw_fmt_usec(p, from > t->base_ns ? from - t->base_ns : 0);
	p = PUT(p, ",\"dur\":");
	p = jw_fmt_usec(p, to - from);
	p = PUT(p, ",\"args\":{}}");
	jw_advance(w, p);
	if (t->ring)
		ring_take(t, RING_INNER, pid, tid, from, to);
}

void lp_trace_off_cpu(struct lp_trace *t, uint32_t pid, uint32_t tid, uint64_t off_ns,
		      uint64_t wake_ns, uint64_t on_ns)
{
	/*
	 * Apart by 1 ns, as nested spans end: viewers that order a begin before
	 * an end at the same time (speedscope) would nest "runq" in "blocked".
	 */
	off_cpu_slice(t, "blocked", pid, tid, off_ns, wake_ns < on_ns ? wake_ns - 1 : wake_ns);
	off_cpu_slice(t, "runq", pid, tid, wake_ns, on_ns);
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
	if (t->ring)
		ring_take(t, RING_KEEP, pid, tid, 0, 0);
}

/* ---- --trace-last, --trace-max-size: the events through a ring (tracering.h) ---- */

void lp_trace_span(struct lp_trace *t, const struct lp_span *s)
{
	span_event(t, s);
	if (t->ring)
		ring_take(t, RING_SPAN, s->pid, s->tid, s->start_ns, s->end_ns);
}

/* The ring's events into the file, each on a line of its own, as w writes them. */
static int emit_event(void *ctx, const char *a, size_t alen, const char *b, size_t blen)
{
	struct lp_trace *t = ctx;

	jw_newline(&t->file);
	jw_raw_value(&t->file, a, alen);
	if (blen)
		jw_raw(&t->file, b, blen);
	return jw_error(&t->file);
}

/*
 * The event w just encoded goes to the ring: a span's (start_ns to end_ns),
 * one inside the thread's innermost open span (from start_ns on), or a name,
 * kept whatever happens.
 */
static void ring_take(struct lp_trace *t, enum ring_kind kind, uint32_t pid, uint32_t tid,
		      uint64_t start_ns, uint64_t end_ns)
{
	/* What jw put before the event: its line break and separator. */
	size_t skip = t->ev.p ? strspn(t->ev.p, "\n,") : 0;
	const char *ev = t->ev.p ? t->ev.p + skip : "";
	size_t len = t->ev.len - skip;
	/* Out of memory for ev: the trace fails. */
	int err = jw_error(&t->w);

	if (!err && kind == RING_SPAN)
		err = lp_tring_span(t->ring, pid, tid, start_ns, end_ns, ev, len);
	else if (!err && kind == RING_INNER)
		err = lp_tring_inner(t->ring, pid, tid, start_ns, ev, len);
	else if (!err)
		err = lp_tring_keep(t->ring, ev, len);
	t->ev.len = 0;
	if (err && !t->file.err)
		t->file.err = err;
}

/* Moves a writer (its buffer may be the small one inside it). */
static void move_writer(struct jw *to, const struct jw *from)
{
	*to = *from;
	if (from->buf == from->small)
		to->buf = to->small;
}

int lp_trace_bound(struct lp_trace *t, uint64_t last_ns, uint64_t max_bytes)
{
	/* "\n," before every event; the opening is in the file already. */
	struct lp_tring_opts o = { .last_ns = last_ns, .max_bytes = max_bytes,
				   .used_bytes = t->w.bytes + t->w.len, .overhead = 2,
				   .emit = emit_event, .ctx = t };

	t->ring = lp_tring_new(&o);
	if (!t->ring)
		return -ENOMEM;
	move_writer(&t->file, &t->w);
	jw_init_buf(&t->w, &t->ev);
	return 0;
}

void lp_trace_bound_end(struct lp_trace *t, uint64_t end_ns, struct lp_tring_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (t->ring)
		lp_tring_end(t->ring, end_ns, st);
}

/* The ring's events into the file (flush) or not; w writes the file again. */
static void ring_detach(struct lp_trace *t, bool flush)
{
	int err;

	if (!t->ring)
		return;
	err = flush ? lp_tring_flush(t->ring) : 0;
	if (err && !t->file.err)
		t->file.err = err;
	lp_tring_free(t->ring);
	t->ring = NULL;
	lp_buf_free(&t->ev);
	move_writer(&t->w, &t->file);
}

static void release(struct lp_trace *t)
{
	ring_detach(t, false);
	jw_release(&t->w);
	lp_buf_free(&t->frags);
	free(t->names);
	free(t->metas);
	t->names = t->metas = NULL;
	t->names_cap = t->metas_cap = 0;
	t->frags_dead = 0;
}

int lp_trace_close(struct lp_trace *t, const char *other_data_json)
{
	int err;

	ring_detach(t, true);
	jw_newline(&t->w);
	jw_arr_end(&t->w);
	if (other_data_json) {
		/* Already valid JSON (built by json-c): copied verbatim. */
		jw_raw(&t->w, ",\"otherData\":", 13);
		jw_raw(&t->w, other_data_json, strlen(other_data_json));
	}
	jw_obj_end(&t->w);
	jw_newline(&t->w);
	/* The first failed write(2) says why (ENOSPC...). */
	err = jw_flush(&t->w);
	if (err) {
		lp_trace_abort(t);
		return err;
	}
	release(t);
	/* A stream's (lp_trace_open_stream) is its owner's to close. */
	return t->out.f ? lp_outfile_commit(&t->out) : 0;
}

void lp_trace_abort(struct lp_trace *t)
{
	release(t);
	lp_outfile_abort(&t->out);
}
