// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the recording pipeline `leanprofiler record` runs
 * (user/core/pipeline.c: the record decoder, the span-pair matcher, the
 * nesting builder, the statistics, call paths and every writer), fed hostile
 * ring-buffer records. The harness watches what passes between the stages
 * through the pipeline's observer hooks.
 *
 * Span-pair probe records (LP_REC_USDT) go decoder -> pairs -> nesting, with
 * the specs of SPECS below (parsed once, at start-up) as the recording's spec
 * list: lp_rec_usdt.spec indexes it (past its end: a spec we do not have).
 *
 * Input: a sequence of chunks, each a little-endian u16 head and a body.
 *   head < 0x8000   one ring-buffer record (bpf/wire.h) of head bytes follows
 *                   (fewer when the input ends first); it is copied to a heap
 *                   block of exactly its size, so ASan sees any overread.
 *   head >= 0x8000  a harness command, op = head & 0xf, arg = (head >> 4) & 0x7ff:
 *     op 0  u16 file, u64 ns: a file's gate opened (lp_pipeline_gate)
 *     op 1  u32 pid, u64 ns: lp_pipeline_process_begin(pid, ns, open_before = arg & 1)
 *           (how recording announces launched / attached processes)
 *     op 2  the last record again, arg times; an event's seq and ts_ns go up by
 *           1 each time (deep nesting, many calls)
 *     op 3  collect the texts nothing holds now (lp_pipeline_collect), and from
 *           now on after every arg-th record (arg 0: only now); at most
 *           MAX_COLLECTIONS per input (the pipeline also collects when due)
 *     op 4  the last record again from arg threads (its tid, tid + 1, ...), then
 *           from the same threads again, the first then the last down (tables
 *           grow while known threads come back)
 *     other ops are ignored.
 * At most MAX_DECODES records are decoded per input, repeats included, to
 * keep runs fast.
 * At the end: lp_pipeline_finish and lp_pipeline_report, the table, the
 * summary JSON and the trace's closing, all checked; the summary read back
 * (user/read/summary_read.c) prints the same table.
 *
 * Invariants (abort() when broken): every span has end_ns >= start_ns,
 * total_ns == end_ns - start_ns, self_ns <= total_ns, counter_self <=
 * counter_total, depth < LP_NEST_MAX_DEPTH, string ids that exist; the
 * nesting totals agree with the spans delivered; the rows hold every span
 * (at most MAX_GROUPS rows of their own, the rest folded into overflow
 * rows); a keyed spec's track (LP_TRACK_TID) holds one span at a time, so
 * its spans are all at depth 0 and, when the input's timestamps never go
 * back, never overlap (a track nests strictly); the summary JSON and the
 * whole trace are valid UTF-8 and parse (json-c, strict; a trace of more than
 * TRACE_PARSE_MAX_SPANS spans only for UTF-8, for speed); the table is valid
 * UTF-8 with no control character but '\n'; the call paths (user/core/paths.c) hold
 * every span once and all the self time; every metadata item keeps its own
 * JSON key in the trace and the summary, as meta.h promises (LP_FUZZ_UNIQUE_KEYS=0
 * in the environment turns that check off); after collections, every span's name
 * and metadata read as the texts its enter had (a shadow copy), and so do the
 * processes' names, and every id in use is live (built with LP_STRTAB_POISON:
 * marking an id freed earlier aborts, a freed id reads as poison). LP_FUZZ_DUMP=1 prints the table, the
 * summary and the trace of each input to stderr (to read a reproducer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/wire.h"
#include "fuzz_common.h"
#include "map.h"
#include "meta.h"
#include "pipeline.h"
#include "summary_read.h"
/* Enough for past LP_NEST_MAX_DEPTH enters and their exits. */
#define MAX_DECODES 1500
/* Groups of their own: small, so that inputs reach the overflow rows. */
#define MAX_GROUPS 8
/*
 * Each collection walks every open span, row and literal: after every one of
 * 1500 records 1000 deep, that would be most of a run's time.
 */
#define MAX_COLLECTIONS 100
/* Traces of more spans are checked for UTF-8 only: parsing is most of a run's time. */
#define TRACE_PARSE_MAX_SPANS 256
/* Bytes of the trace kept to check; past that only counted (long names, many spans). */
#define TRACE_KEEP_MAX (1 << 20)

static bool check_unique_keys, dump;

/*
 * The recording's span-pair specs: unkeyed with str and integer arguments in
 * name and metadata, keyed (one key, and entry / exit keys), reentry=close,
 * counted strings (str/argN), a string behind a pointer (str@OFF), literal
 * names (an exit with nothing open is rebuilt), names shared between specs,
 * exits matched by the name they render (match=name), exit arguments in the
 * metadata and the trace-only args=, an abort= probe, predicates on one probe
 * as entry and exit with reentry=continue.
 */
static const char *const SPECS[] = {
	"fz:q_start,q_done,name=query {arg1:u},"
	"meta=sql={arg0:str}\\, n={arg1:u}\\, h={arg2:x}\\, d={arg3}",
	"fz:tx_start,tx_commit|tx_abort,name=tx {arg0:x},key=arg0",
	"fz:r_start,r_done,name=stmt,meta=sql={arg0:str},reentry=close",
	"fz:m_entry,m_return,name={arg1:str/arg2}.{arg3:str/arg4},meta=signature={arg5:str/arg6}",
	"fz:ex_throw|ex_rethrow,ex_catch,name=exception in flight,meta=type={arg1:str@8},"
	"key=arg0/arg1",
	"fz:gc_start,gc_done,name=gc,meta=generation={arg0}",
	"fz:s_in,s_out,name=stmt,reentry=nest",
	"fz:w_start,w_done,name=lock wait,meta=mode={arg5}\\, rel={arg1:u},key=arg0,late=yes",
	"fz:j_entry,j_return,name={arg1:str/arg2|lambda}.{arg3:str/arg4},match=name",
	"fz:i_start,i_done,name=import,meta=module={arg0:str}\\, found={exit.arg1:u},"
	"args=lit={exit.arg0:str}\\, n={arg2:x},abort=i_fail",
	"fz:st[arg0!=0],st[arg0==0],name=statement,meta=sql={arg0:str},reentry=continue",
};
#define NSPECS (sizeof(SPECS) / sizeof(SPECS[0]))
static struct lp_spec specs[NSPECS];

/* An enter's ids and what they read as then: its span must read the same. */
struct shadow {
	uint32_t pid, tid, name, meta;
	uint64_t ts_ns;
	char *text[2]; /* name, meta */
	size_t len[2];
	uint32_t next; /* the next one of the same key, + 1 */
	bool closed;
};

/* A span of a keyed track, to check that the track nests strictly. */
struct track_span {
	uint32_t pid, tid, depth;
	uint64_t start_ns, end_ns;
};

/* A process's name, as it read when the pipeline set it. */
struct proc_shadow {
	uint32_t id;
	char *text;
};

struct fuzz {
	struct lp_pipeline *pl;
	struct strtab *st;
	uint64_t self_sum; /* of every span: what the call paths must hold */
	struct lp_trace trace; /* written to memory (lp_trace_open_stream) */
	char *trace_text; /* the trace's first TRACE_KEEP_MAX bytes (trace_buf) */
	size_t trace_len, trace_total;
	bool have_base;
	uint64_t max_ts;
	struct proc_shadow *procs; /* one per process of the pipeline's, in its order */
	size_t nprocs, procs_cap;
	/* Collections (op 3): after every gc_every-th record (0: none), counted in gc_count. */
	unsigned gc_every, gc_count;
	unsigned collections;
	struct shadow *shadows; /* one per enter */
	size_t nshadows, shadows_cap;
	struct lp_map shadow_index; /* (pid, tid, ts_ns) mixed, name -> v1: first shadow + 1 */
	/* What the sink saw, to check the nesting totals against. */
	uint64_t spans, unterminated, uncertain, started_before, counter_self;
	unsigned __int128 top_total;
	size_t *want_keys; /* per span, in trace order: the keys its args must have */
	size_t nspans, spans_cap;
	struct track_span *tracks; /* spans on keyed tracks */
	size_t ntracks, tracks_cap;
	/* Every timestamp of the input so far, in input order, never went back. */
	uint64_t last_in_ts;
	bool ts_back;
	/*
	 * A marker's or task's record had a tid above LP_TID_MAX (the kernel's are
	 * not): it may land on a track, which then holds more than pairs put there.
	 */
	bool raw_track_tid;
};

static char trace_buf[TRACE_KEEP_MAX + 1];

/* The trace's FILE: fills trace_buf, which is reused, without a realloc. */
static ssize_t trace_write(void *ctx, const char *buf, size_t n)
{
	struct fuzz *f = ctx;

	if (f->trace_total + n <= TRACE_KEEP_MAX) {
		memcpy(trace_buf + f->trace_len, buf, n);
		f->trace_len += n;
	}
	f->trace_total += n;
	return (ssize_t)n;
}

static bool parses(const char *text, size_t len, json_object **out)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	json_object *o;
	bool ok;

	FUZZ_CHECK(tok, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	o = json_tokener_parse_ex(tok, text, (int)len);
	ok = o && json_tokener_get_parse_end(tok) == len;
	if (!ok)
		fprintf(stderr, "json-c: %s at byte %zu\n",
			json_tokener_error_desc(json_tokener_get_error(tok)),
			json_tokener_get_parse_end(tok));
	json_tokener_free(tok);
	if (ok && out)
		*out = o;
	else
		json_object_put(o);
	return ok;
}

static size_t meta_items(const struct strtab *st, uint32_t meta)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	size_t len;
	const char *text = strtab_str(st, meta, &len);

	return lp_meta_parse(text, len, items, LP_META_MAX_ITEMS);
}

/* The keys of a span's trace args: one per metadata item plus the profiler's own. */
static size_t args_keys(struct fuzz *f, const struct lp_span *s)
{
	/* A span pair's args= is one key, "detail" (an object). */
	return meta_items(f->st, s->meta) + !!s->detail + (s->has_counter ? 2 : 0) +
	       !!(s->flags & LP_SPAN_UNTERMINATED) + !!(s->flags & LP_SPAN_STARTED_BEFORE) +
	       !!(s->flags & LP_SPAN_UNCERTAIN) + (s->has_sched ? 6 + !!s->unmeasured_ns : 0);
}

static char *copy_text(const struct strtab *st, uint32_t id, size_t *len)
{
	const char *t = strtab_str(st, id, len);
	char *c = malloc(*len + 1);

	FUZZ_CHECK(c, "out of memory");
	memcpy(c, t, *len + 1);
	return c;
}

static uint64_t shadow_key(uint32_t pid, uint32_t tid, uint64_t ts_ns)
{
	return ts_ns ^ lp_hash64((uint64_t)pid << 32 | tid);
}

/* An enter: what its name and metadata read as now. */
static void shadow_enter(struct fuzz *f, const struct lp_event *ev)
{
	struct lp_map_ent *e = lp_map_find(&f->shadow_index,
					   shadow_key(ev->pid, ev->tid, ev->ts_ns), ev->name, true);
	struct shadow *sh;

	FUZZ_CHECK(e, "out of memory");
	if (f->nshadows == f->shadows_cap) {
		f->shadows_cap = f->shadows_cap ? 2 * f->shadows_cap : 256;
		f->shadows = realloc(f->shadows, f->shadows_cap * sizeof(*f->shadows));
		FUZZ_CHECK(f->shadows, "out of memory");
	}
	sh = &f->shadows[f->nshadows];
	*sh = (struct shadow){ .pid = ev->pid, .tid = ev->tid, .name = ev->name, .meta = ev->meta,
			       .ts_ns = ev->ts_ns, .next = (uint32_t)e->v1 };
	sh->text[0] = copy_text(f->st, ev->name, &sh->len[0]);
	sh->text[1] = copy_text(f->st, ev->meta, &sh->len[1]);
	e->v1 = ++f->nshadows;
}

static bool same_text(const struct strtab *st, uint32_t id, const char *text, size_t len)
{
	size_t n;
	const char *t = strtab_str(st, id, &n);

	return n == len && memcmp(t, text, n) == 0;
}

/* The span of an enter reads as the enter did, however many collections came between. */
static void shadow_check(struct fuzz *f, const struct lp_span *s)
{
	struct lp_map_ent *e;

	if (s->flags & LP_SPAN_STARTED_BEFORE)
		return; /* rebuilt from its exit, just now */
	e = lp_map_find(&f->shadow_index, shadow_key(s->pid, s->tid, s->start_ns), s->name, false);
	for (uint32_t i = e ? (uint32_t)e->v1 : 0; i; i = f->shadows[i - 1].next) {
		struct shadow *sh = &f->shadows[i - 1];

		if (sh->closed || sh->pid != s->pid || sh->tid != s->tid ||
		    sh->ts_ns != s->start_ns || sh->meta != s->meta)
			continue;
		FUZZ_CHECK(same_text(f->st, s->name, sh->text[0], sh->len[0]) &&
				   same_text(f->st, s->meta, sh->text[1], sh->len[1]),
			   "span of ids %u, %u reads \"%s\" [%s], its enter read \"%s\" [%s]",
			   s->name, s->meta, strtab_str(f->st, s->name, NULL),
			   strtab_str(f->st, s->meta, NULL), sh->text[0], sh->text[1]);
		sh->closed = true;
		return;
	}
	FUZZ_CHECK(false, "span of pid %u tid %u at %llu: no enter", s->pid, s->tid,
		   (unsigned long long)s->start_ns);
}

static void shadow_free(struct fuzz *f)
{
	for (size_t i = 0; i < f->nshadows; i++) {
		free(f->shadows[i].text[0]);
		free(f->shadows[i].text[1]);
	}
	free(f->shadows);
	lp_map_free(&f->shadow_index);
	for (size_t i = 0; i < f->nprocs; i++)
		free(f->procs[i].text);
	free(f->procs);
}

/* A span out of the nesting, before the rows, call paths and trace take it. */
static void on_span(void *ctx, const struct lp_span *s)
{
	struct fuzz *f = ctx;

	FUZZ_CHECK(s->end_ns >= s->start_ns, "end %llu < start %llu",
		   (unsigned long long)s->end_ns, (unsigned long long)s->start_ns);
	FUZZ_CHECK(s->total_ns == s->end_ns - s->start_ns, "total %llu",
		   (unsigned long long)s->total_ns);
	FUZZ_CHECK(s->self_ns <= s->total_ns, "self %llu > total %llu",
		   (unsigned long long)s->self_ns, (unsigned long long)s->total_ns);
	FUZZ_CHECK(s->has_counter || (!s->counter_total && !s->counter_self), "counter");
	FUZZ_CHECK(s->counter_self <= s->counter_total, "self counter %llu > total %llu",
		   (unsigned long long)s->counter_self, (unsigned long long)s->counter_total);
	FUZZ_CHECK(s->depth < LP_NEST_MAX_DEPTH, "depth %u", s->depth);
	FUZZ_CHECK(strtab_is_live(f->st, s->name) && strtab_is_live(f->st, s->meta),
		   "string ids %u, %u not in use", s->name, s->meta);
	shadow_check(f, s);
	FUZZ_CHECK(!(s->flags & ~(unsigned)(LP_SPAN_UNTERMINATED | LP_SPAN_UNCERTAIN |
					   LP_SPAN_STARTED_BEFORE)),
		   "flags %#x", s->flags);
	/* --off-cpu: a split adds up to its span, whatever the snapshots said. */
	if (s->has_sched)
		FUZZ_CHECK(lp_sched_sum(&s->sched) + s->unmeasured_ns == s->total_ns,
			   "split %" PRIu64 " + %" PRIu64 " + %" PRIu64 " + %" PRIu64 " + %" PRIu64
			   " of %" PRIu64,
			   s->sched.cpu_ns, s->sched.steal_ns, s->sched.runq_ns, s->sched.blocked_ns,
			   s->unmeasured_ns, s->total_ns);
	else
		FUZZ_CHECK(!s->unmeasured_ns, "unmeasured without a split");

	f->spans++;
	f->unterminated += !!(s->flags & LP_SPAN_UNTERMINATED);
	f->uncertain += !!(s->flags & LP_SPAN_UNCERTAIN);
	f->started_before += !!(s->flags & LP_SPAN_STARTED_BEFORE);
	f->counter_self += s->counter_self;
	if (s->depth == 0)
		f->top_total += s->total_ns;

	f->self_sum += s->self_ns;
	if (f->nspans == f->spans_cap) {
		f->spans_cap = f->spans_cap ? 2 * f->spans_cap : 256;
		f->want_keys = realloc(f->want_keys, f->spans_cap * sizeof(*f->want_keys));
		FUZZ_CHECK(f->want_keys, "out of memory");
	}
	f->want_keys[f->nspans++] = args_keys(f, s);
	if (LP_TRACK_IS(s->tid)) {
		if (f->ntracks == f->tracks_cap) {
			f->tracks_cap = f->tracks_cap ? 2 * f->tracks_cap : 64;
			f->tracks = realloc(f->tracks, f->tracks_cap * sizeof(*f->tracks));
			FUZZ_CHECK(f->tracks, "out of memory");
		}
		f->tracks[f->ntracks++] = (struct track_span){ s->pid, s->tid, s->depth, s->start_ns,
							       s->end_ns };
	}
}

static void input_ts(struct fuzz *f, uint64_t ts)
{
	if (ts < f->last_in_ts)
		f->ts_back = true;
	f->last_in_ts = ts;
}

static int cmp_track_span(const void *a, const void *b)
{
	const struct track_span *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

/*
 * A track holds at most one open span: all its spans are at depth 0 and, in
 * time, one after the other (when the input's clock never went back).
 */
static void check_tracks(struct fuzz *f)
{
	if (f->raw_track_tid)
		return;
	for (size_t i = 0; i < f->ntracks; i++)
		FUZZ_CHECK(f->tracks[i].depth == 0, "span at depth %u on track %#x",
			   f->tracks[i].depth, f->tracks[i].tid);
	if (f->ts_back || !f->ntracks)
		return;
	qsort(f->tracks, f->ntracks, sizeof(*f->tracks), cmp_track_span);
	for (size_t i = 1; i < f->ntracks; i++) {
		const struct track_span *a = &f->tracks[i - 1], *b = &f->tracks[i];

		if (a->pid != b->pid || a->tid != b->tid)
			continue;
		FUZZ_CHECK(b->start_ns >= a->end_ns,
			   "track %#x of pid %u: [%llu, %llu] overlaps [%llu, %llu]", a->tid,
			   a->pid, (unsigned long long)a->start_ns, (unsigned long long)a->end_ns,
			   (unsigned long long)b->start_ns, (unsigned long long)b->end_ns);
	}
}

/* Every event into the nesting. */
static void on_event(void *ctx, const struct lp_event *ev)
{
	struct fuzz *f = ctx;

	if (!f->have_base) {
		f->trace.base_ns = ev->ts_ns;
		f->have_base = true;
	}
	if (ev->ts_ns > f->max_ts)
		f->max_ts = ev->ts_ns;
	if (ev->type == LP_EVENT_ENTER)
		shadow_enter(f, ev);
}

/* A marker's event, straight from the decoder. */
static void on_marker(void *ctx, const struct lp_event *ev)
{
	struct fuzz *f = ctx;

	input_ts(f, ev->ts_ns);
	f->raw_track_tid |= ev->tid > LP_TID_MAX;
}

static void on_usdt(void *ctx, const struct lp_usdt_event *ue)
{
	struct fuzz *f = ctx;

	input_ts(f, ue->ts_ns);
}

/*
 * The processes' names as they read when the pipeline set them: new
 * processes, and one whose name changed (exec, an exit that left the recording).
 */
static void shadow_proc(struct fuzz *f, const struct lp_report_process *p, size_t i)
{
	size_t len;

	free(f->procs[i].text);
	f->procs[i] = (struct proc_shadow){ p->comm, copy_text(f->st, p->comm, &len) };
}

static void shadow_procs(struct fuzz *f, uint32_t pid)
{
	size_t n;
	const struct lp_report_process *procs = lp_pipeline_processes(f->pl, &n);

	f->procs = lp_grow(f->procs, &f->procs_cap, n ? n : 1, sizeof(*f->procs));
	FUZZ_CHECK(f->procs, "out of memory");
	for (; f->nprocs < n; f->nprocs++) {
		f->procs[f->nprocs].text = NULL;
		shadow_proc(f, &procs[f->nprocs], f->nprocs);
	}
	/* The pipeline renames the last process of a pid. */
	for (size_t i = n; i-- > 0;) {
		if (procs[i].pid != pid)
			continue;
		if (f->procs[i].id != procs[i].comm)
			shadow_proc(f, &procs[i], i);
		break;
	}
}

static void on_task(void *ctx, const struct lp_task_event *te)
{
	struct fuzz *f = ctx;

	FUZZ_CHECK(strtab_is_live(f->st, te->comm), "comm id %u not in use", te->comm);
	if (te->ts_ns > f->max_ts)
		f->max_ts = te->ts_ns;
	input_ts(f, te->ts_ns);
	f->raw_track_tid |= te->tid > LP_TID_MAX;
	shadow_procs(f, te->pid);
}

/*
 * Stands in for reading a text from the file it lies in: fails for an odd
 * offset, else a text whose length (up to size-1, the contract) and bytes
 * depend on where it is, multi-byte characters included, so cuts can split
 * them.
 */
static long file_text(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf, size_t size)
{
	static const char pattern[] = "r\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80=,x ";
	size_t len;

	if ((off & 1) || size == 0)
		return -ENOENT;
	len = (size_t)((off >> 1) % size);
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern[(i + dev + ino) % (sizeof(pattern) - 1)];
	buf[len] = '\0';
	return (long)len;
}

/*
 * Stands in for reading a text the kernel could not look up from its
 * marker's file (LP_STR_AT_SITE): as file_text, at a place made of the
 * file, the site and the address.
 */
static long site_text(void *ctx, uint32_t file, uint64_t site, uint64_t addr, char *buf,
		      size_t size)
{
	return file_text(ctx, file, site, addr, buf, size);
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

/* lp_pipeline_collect, whether due or not; then every id held is live. */
static void collect(struct fuzz *f)
{
	size_t n;
	const struct lp_report_process *procs;

	f->collections++;
	lp_pipeline_collect(f->pl, true, NULL);
	procs = lp_pipeline_processes(f->pl, &n);
	FUZZ_CHECK(n == f->nprocs, "%zu processes, %zu seen", n, f->nprocs);
	for (size_t i = 0; i < n; i++)
		/* A comm has no NUL inside (the decoder takes it with strnlen). */
		FUZZ_CHECK(same_text(f->st, procs[i].comm, f->procs[i].text,
				     strlen(f->procs[i].text)),
			   "process %u's name changed", procs[i].pid);
}

static void decode_one(struct fuzz *f, const void *rec, size_t size)
{
	int err = lp_pipeline_record(f->pl, rec, size);

	/* Only allocation failures may come back; the stages' are those too. */
	FUZZ_CHECK(err == 0 || err == -ENOMEM, "lp_pipeline_record: %d", err);
	if (f->gc_every && ++f->gc_count % f->gc_every == 0 && f->collections < MAX_COLLECTIONS)
		collect(f);
}

static void run_records(struct fuzz *f, const uint8_t *data, size_t size)
{
	uint8_t *last = NULL;
	size_t last_size = 0, budget = MAX_DECODES;

	while (size >= 2 && budget) {
		unsigned head = (unsigned)get_le(data, 2), op = head & 0xf, arg = (head >> 4) & 0x7ff;

		data += 2, size -= 2;
		if (head < 0x8000) {
			size_t n = head < size ? head : size;

			free(last);
			/* Exactly n bytes on the heap: an overread is an ASan report. */
			last = malloc(n ? n : 1);
			FUZZ_CHECK(last, "out of memory");
			memcpy(last, data, n);
			last_size = n;
			decode_one(f, last, n);
			budget--;
			data += n, size -= n;
		} else if (op == 0) {
			if (size < 10)
				break;
			input_ts(f, get_le(data + 2, 8));
			lp_pipeline_gate(f->pl, (uint32_t)get_le(data, 2), get_le(data + 2, 8));
			data += 10, size -= 10;
		} else if (op == 1) {
			if (size < 12)
				break;
			input_ts(f, get_le(data + 4, 8));
			FUZZ_CHECK(lp_pipeline_process_begin(f->pl, (uint32_t)get_le(data, 4),
							     get_le(data + 4, 8), arg & 1) == 0,
				   "lp_pipeline_process_begin");
			data += 12, size -= 12;
		} else if (op == 3) {
			if (f->collections < MAX_COLLECTIONS)
				collect(f);
			f->gc_every = arg;
			f->gc_count = 0;
		} else if (op == 2 && last) {
			bool event = last_size >= sizeof(struct lp_rec_event) &&
				     (last[0] == LP_REC_ENTER || last[0] == LP_REC_EXIT) && !last[1];
			bool usdt = last_size >= sizeof(struct lp_rec_usdt) && last[0] == LP_REC_USDT &&
				    !last[1];

			for (unsigned i = 0; i < arg && budget; i++, budget--) {
				if (event) {
					struct lp_rec_event *ev = (struct lp_rec_event *)last;

					ev->h.seq++;
					ev->ts_ns++;
				} else if (usdt) {
					struct lp_rec_usdt *ue = (struct lp_rec_usdt *)last;

					ue->h.seq++;
					ue->ts_ns++;
				}
				decode_one(f, last, last_size);
			}
		} else if (op == 4 && last && last_size >= sizeof(struct lp_rec_hdr)) {
			/*
			 * The last record from arg threads in turn, twice: the
			 * thread tables grow while known threads keep coming.
			 */
			struct lp_rec_hdr *h = (struct lp_rec_hdr *)last;
			uint32_t tid0 = h->tid;

			for (unsigned i = 0; i < 2 * arg && budget; i++, budget--) {
				h->tid = tid0 + (i < arg ? i : (2 * arg - i) % arg);
				decode_one(f, last, last_size);
			}
			h->tid = tid0;
		}
	}
	free(last);
}

static char *table_text(const struct lp_report *rep, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	FUZZ_CHECK(m, "open_memstream: %s", strerror(errno));
	lp_report_table(m, rep);
	fclose(m);
	return text;
}

static void check_table(const struct lp_report *rep)
{
	size_t len = 0;
	char *text = table_text(rep, &len);

	if (dump)
		fprintf(stderr, "%s\n", text);
	FUZZ_CHECK(fz_valid_utf8(text, len), "table is not valid UTF-8");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		FUZZ_CHECK(c == '\n' || (c >= 0x20 && c != 0x7f), "control byte %#x in the table",
			   c);
		FUZZ_CHECK(!(c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] < 0xa0),
			   "C1 control in the table");
	}
	free(text);
}

/*
 * The summary read back prints the table record printed, and its call paths
 * hold every span and all their self time.
 */
static void check_read_back(struct fuzz *f, const struct lp_report *rep, const char *text,
			    size_t len)
{
	struct lp_summary s;
	char problem[LP_SUMMARY_PROBLEM_MAX], *want, *got;
	size_t wl = 0, gl = 0;
	uint64_t calls = 0, self = 0;

	FUZZ_CHECK(lp_summary_parse(text, len, "fuzz.json", &s, problem, sizeof(problem)) == 0,
		   "summary not read back: %s", problem);
	want = table_text(rep, &wl);
	got = table_text(&s.rep, &gl);
	FUZZ_CHECK(wl == gl && !memcmp(want, got, wl), "table read back differs:\n%s\n%s", want,
		   got);
	FUZZ_CHECK(s.has_paths, "no paths");
	for (size_t i = 0; i < s.nnodes; i++) {
		calls += s.nodes[i].calls;
		self += s.nodes[i].self_ns;
	}
	FUZZ_CHECK(calls == f->spans, "paths hold %llu calls of %llu spans",
		   (unsigned long long)calls, (unsigned long long)f->spans);
	FUZZ_CHECK(self == f->self_sum, "paths hold %llu ns of self time, spans %llu",
		   (unsigned long long)self, (unsigned long long)f->self_sum);
	free(want);
	free(got);
	lp_summary_free(&s);
}

static void check_summary(struct fuzz *f, const struct lp_report *rep)
{
	char *text = NULL;
	json_object *o = NULL, *rows;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	FUZZ_CHECK(m, "open_memstream: %s", strerror(errno));
	FUZZ_CHECK(lp_report_summary_json(m, rep) == 0, "lp_report_summary_json");
	FUZZ_CHECK(fclose(m) == 0, "summary: %s", strerror(errno));
	if (dump)
		fprintf(stderr, "%s\n", text);
	FUZZ_CHECK(fz_valid_utf8(text, len), "summary is not valid UTF-8");
	FUZZ_CHECK(parses(text, len, &o), "summary is not JSON");
	FUZZ_CHECK(json_object_object_get_ex(o, "rows", &rows) &&
			   json_object_array_length(rows) == rep->ngroups,
		   "summary rows");
	if (check_unique_keys) {
		for (size_t i = 0; i < rep->ngroups; i++) {
			json_object *meta;
			size_t want, got;

			FUZZ_CHECK(json_object_object_get_ex(json_object_array_get_idx(rows, i),
							     "meta", &meta),
				   "row without meta");
			/* Spans that began before recording: metadata not known, null. */
			if (rep->groups[i]->meta == LP_META_UNKNOWN && !rep->groups[i]->overflow) {
				FUZZ_CHECK(!meta, "a row of unknown metadata has some");
				continue;
			}
			want = meta_items(f->st, rep->groups[i]->meta);
			got = (size_t)json_object_object_length(meta);
			FUZZ_CHECK(got == want, "summary row %zu lost metadata keys: %zu of %zu: %s",
				   i, got, want, json_object_to_json_string(meta));
		}
	}
	json_object_put(o);
	check_read_back(f, rep, text, len);
	free(text);
}

/*
 * The whole trace parses; each span event keeps all its args' keys. Parsing
 * costs most of a run: a trace of many spans (repeated records, mostly) is
 * only checked for UTF-8.
 */
static void check_trace(struct fuzz *f)
{
	json_object *o = NULL, *events;
	size_t k = 0, n;

	if (f->trace_total > f->trace_len)
		return; /* not all kept */
	FUZZ_CHECK(fz_valid_utf8(f->trace_text, f->trace_len), "trace is not valid UTF-8");
	if (f->nspans > TRACE_PARSE_MAX_SPANS)
		return;
	FUZZ_CHECK(parses(f->trace_text, f->trace_len, &o), "trace is not JSON");
	FUZZ_CHECK(json_object_object_get_ex(o, "traceEvents", &events), "no traceEvents");
	n = json_object_array_length(events);
	for (size_t i = 0; i < n; i++) {
		json_object *ev = json_object_array_get_idx(events, i), *ph, *args;

		FUZZ_CHECK(json_object_object_get_ex(ev, "ph", &ph), "event without ph");
		if (strcmp(json_object_get_string(ph), "X"))
			continue;
		/* --off-cpu's slices of a wait: not spans. */
		if (json_object_object_get_ex(ev, "cat", &ph) &&
		    !strcmp(json_object_get_string(ph), "off-cpu"))
			continue;
		FUZZ_CHECK(k < f->nspans, "more span events than spans");
		FUZZ_CHECK(json_object_object_get_ex(ev, "args", &args), "span without args");
		if (check_unique_keys)
			FUZZ_CHECK((size_t)json_object_object_length(args) == f->want_keys[k],
				   "span %zu: args lost keys: %d of %zu: %s", k,
				   json_object_object_length(args), f->want_keys[k],
				   json_object_to_json_string(args));
		k++;
	}
	FUZZ_CHECK(k == f->nspans, "%zu span events, %zu spans", k, f->nspans);
	json_object_put(o);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *e = getenv("LP_FUZZ_UNIQUE_KEYS");

	check_unique_keys = !e || *e != '0';
	e = getenv("LP_FUZZ_DUMP");
	dump = e && *e == '1';
	for (size_t i = 0; i < NSPECS; i++) {
		char err[256];

		FUZZ_CHECK(lp_spec_parse(SPECS[i], &specs[i], err, sizeof(err)) == 0,
			   "spec %zu: %s", i, err);
	}
	return 0;
}

/*
 * Threads with spans: each thread entry with spans, and once each real thread
 * that has spans on its keyed tracks only.
 */
static uint32_t threads_with_spans(const struct lp_report *rep)
{
	uint32_t n = 0;

	for (size_t i = 0; i < rep->nthreads; i++) {
		const struct lp_report_thread *a = &rep->threads[i];
		bool counted = false;

		if (!a->spans)
			continue;
		if (!LP_TRACK_IS(a->tid)) {
			n++;
			continue;
		}
		for (size_t j = 0; j < rep->nthreads && !counted; j++) {
			const struct lp_report_thread *b = &rep->threads[j];

			if (b->pid != a->pid || !b->spans)
				continue;
			if (!LP_TRACK_IS(b->tid))
				counted = b->tid == LP_TRACK_REAL(a->tid);
			else
				counted = j < i && LP_TRACK_REAL(b->tid) == LP_TRACK_REAL(a->tid);
		}
		n += !counted;
	}
	return n;
}

/* The nesting totals agree with what passed, thread by thread too. */
static void check_totals(struct fuzz *f, const struct lp_report *rep)
{
	const struct lp_nest_totals *t = rep->totals;
	uint64_t thread_spans = 0;
	unsigned __int128 thread_rec = 0;

	FUZZ_CHECK(t->spans == f->spans, "spans %llu, sink saw %llu",
		   (unsigned long long)t->spans, (unsigned long long)f->spans);
	FUZZ_CHECK(t->unterminated == f->unterminated && t->uncertain == f->uncertain &&
			   t->started_before == f->started_before,
		   "flag counts");
	FUZZ_CHECK(t->unterminated_outer + t->unterminated_pairs + t->unterminated_thread +
				   t->unterminated_end ==
			   t->unterminated,
		   "unterminated spans by where they closed do not add up");
	FUZZ_CHECK(t->counter_total == f->counter_self, "counter total");
	FUZZ_CHECK(!t->spans || t->first_ns <= t->last_ns, "window %llu..%llu",
		   (unsigned long long)t->first_ns, (unsigned long long)t->last_ns);
	/* Top-level time: what top-level spans covered, less what rebuilt spans took in. */
	FUZZ_CHECK(f->top_total > UINT64_MAX || t->recorded_ns <= f->top_total,
		   "recorded %llu > top-level total %llu", (unsigned long long)t->recorded_ns,
		   (unsigned long long)f->top_total);
	FUZZ_CHECK(threads_with_spans(rep) == t->threads, "threads %u", t->threads);
	for (size_t i = 0; i < rep->nthreads; i++) {
		thread_spans += rep->threads[i].spans;
		/* A keyed track's time is not recorded thread time. */
		if (!LP_TRACK_IS(rep->threads[i].tid))
			thread_rec += rep->threads[i].recorded_ns;
		FUZZ_CHECK(rep->threads[i].max_depth <= LP_NEST_MAX_DEPTH, "max depth");
		FUZZ_CHECK(strtab_is_live(f->st, rep->threads[i].name), "thread name %u not in use",
			   rep->threads[i].name);
	}
	FUZZ_CHECK(thread_spans == t->spans, "thread spans");
	FUZZ_CHECK((uint64_t)thread_rec == t->recorded_ns, "thread recorded time");
}

/* The rows: capped, sorted, each span in one. */
static void check_rows(const struct lp_report *rep)
{
	uint64_t calls = 0;

	FUZZ_CHECK(rep->fold.kept <= MAX_GROUPS && rep->ngroups <= 2 * MAX_GROUPS + 1 &&
			   rep->ngroups == rep->fold.kept + rep->fold.overflow_rows,
		   "groups past the cap: %zu", rep->ngroups);
	for (size_t i = 1; i < rep->ngroups; i++)
		FUZZ_CHECK(rep->groups[i - 1]->self_ns >= rep->groups[i]->self_ns,
			   "groups not sorted");
	for (size_t i = 0; i < rep->ngroups; i++) {
		calls += rep->groups[i]->calls;
		FUZZ_CHECK(rep->groups[i]->calls == rep->groups[i]->ndurs, "calls");
		FUZZ_CHECK(lp_group_p95(rep->groups[i]) <= rep->groups[i]->max_ns &&
				   lp_group_p95(rep->groups[i]) >= rep->groups[i]->min_ns,
			   "p95 outside min..max");
	}
	/* Folded or not, every span is in one row. */
	FUZZ_CHECK(calls == rep->totals->spans, "rows hold %llu spans of %llu",
		   (unsigned long long)calls, (unsigned long long)rep->totals->spans);
}

/* What record adds to the pipeline's report; the three modes' headers by the input's length. */
static void fill_report(struct fuzz *f, struct lp_report *rep, size_t size)
{
	static char *argv[] = { "/bin/fuzzed", "--flag", NULL };

	rep->loss.enter = rep->totals->lost_seen;
	rep->counter_name = "Lean heartbeats";
	rep->trace_path = "/dev/null/trace.json";
	rep->argv = argv;
	rep->pid = 1;
	rep->exit_status = 0;
	rep->base_ns = f->trace.base_ns;
	rep->end_ns = f->max_ts;
	rep->end_reason = LP_END_COMMAND_EXITED;
	rep->mode = (enum lp_mode)(size % 3);
	if (rep->mode == LP_MODE_ATTACH)
		rep->res = (struct lp_resources){ .valid = true, .scope = "attached process",
						  .user_ns = f->max_ts,
						  .system_ns = rep->totals->recorded_ns,
						  .peak_rss_kib = rep->totals->spans };
	else if (rep->mode == LP_MODE_ALL)
		/* A hostile text as the binary: the last string interned. */
		rep->binary = strtab_str(f->st, strtab_count(f->st) - 1, NULL);
	rep->table_rows = size % 5; /* 0: all */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz f = { 0 };
	struct lp_pipeline_opts po = { .specs = specs, .nspecs = NSPECS, .max_groups = MAX_GROUPS };
	struct lp_pipeline_hooks h = { .file_text = file_text, .site_text = site_text,
				       .marker = on_marker,
				       .usdt = on_usdt, .task = on_task, .event = on_event,
				       .span = on_span, .ctx = &f };
	struct lp_report rep = { 0 };
	FILE *m;
	char *other;

	f.pl = lp_pipeline_new(&po, &h);
	FUZZ_CHECK(f.pl, "out of memory");
	f.st = lp_pipeline_strtab(f.pl);
	f.trace_text = trace_buf;
	m = fopencookie(&f, "w", (cookie_io_functions_t){ .write = trace_write });
	FUZZ_CHECK(m, "fopencookie: %s", strerror(errno));
	lp_trace_open_stream(&f.trace, m, f.st, 0);
	lp_pipeline_set_trace(f.pl, &f.trace);

	run_records(&f, data, size);
	lp_pipeline_finish(f.pl, f.max_ts);
	check_tracks(&f);
	/* What the outputs read from here on must have been marked. */
	if (f.collections)
		collect(&f);
	FUZZ_CHECK(lp_pipeline_report(f.pl, &rep) == 0, "lp_pipeline_report");
	check_totals(&f, &rep);
	check_rows(&rep);
	fill_report(&f, &rep, size);
	check_table(&rep);
	check_summary(&f, &rep);

	/* The trace's ending, then the whole trace must parse. */
	other = lp_report_other_data_json(&rep);
	FUZZ_CHECK(other, "lp_report_other_data_json");
	FUZZ_CHECK(lp_trace_close(&f.trace, other) == 0, "lp_trace_close");
	lp_pipeline_set_trace(f.pl, NULL);
	fclose(m);
	trace_buf[f.trace_len] = '\0';
	if (dump)
		fprintf(stderr, "%s\n", f.trace_text);
	check_trace(&f);

	free(other);
	free(f.want_keys);
	free(f.tracks);
	shadow_free(&f);
	lp_pipeline_free(f.pl);
	return 0;
}
