// SPDX-License-Identifier: MIT
#include "pftrace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "map.h"
#include "meta.h"
#include "outfile.h"
#include "pbw.h"
#include "pfzout.h"
#include "trace.h"
#include "tracering.h"

/*
 * A bounded trace's budget (--trace-max-size) counts a span's packets at their
 * largest, field by field (packets_cost): an absolute time's clock field (3
 * bytes), an END packet's bytes besides its head (its tag and length, its
 * TrackEvent's: 6), a sequence's first packet (seq_start: its id, flags,
 * defaults, a ClockSnapshot of two clocks: 66 bytes at most; then our own
 * texts, own_cost, and their InternedData's tag and length, and the packet's
 * length a byte longer).
 */
#define PF_ABSOLUTE_CLOCK 3
#define PF_END_BODY 6
#define PF_SEQ_START_MAX 66

/* What a record in the ring is (its stats). */
enum { PF_KIND_SPAN, PF_KIND_OFF_CPU };

/* An interned text: the InternedData field it goes in, its bytes in the arena. */
struct pf_text {
	uint32_t field;
	uint32_t len;
	size_t off;
};

/*
 * A closed span (or an off-CPU slice) waiting for its thread's top-level
 * span; body[off, off + tlen) holds its TrackEvent's bytes, then ilen bytes
 * the interned ids its BEGIN refers to (each as a varint). The TrackEvent is
 * built there (te_begin), not copied: without a bound, the one copy of it
 * until its packet.
 */
struct pf_pending {
	uint64_t start, end;
	uint32_t depth;
	uint32_t off, tlen, ilen;
};

/*
 * Interned ids: those below PF_IDSET_LOW in a bitmap (every packet's ids are
 * looked up, all_seen, and a run's texts mostly have the first ids), the rest
 * in an open-addressing set (0: empty), so that a thread costs what it used,
 * not the file's count of ids.
 */
#define PF_IDSET_LOW 1024

struct pf_idset {
	uint64_t low[PF_IDSET_LOW / 64];
	uint32_t *v;
	size_t n, cap; /* the hash set's; cap: 0 or a power of two */
};

#define PF_RECENT_SEQS 64

struct pf_seq {
	uint32_t pid, tid, id;
	/* every packet's first bytes: trusted_packet_sequence_id, then the timestamp's tag */
	uint8_t head[8];
	uint8_t head_len;
	bool started;     /* its first packet (state cleared, defaults, clock) is out */
	uint64_t last_ts; /* the incremental clock's value */
	struct pf_idset seen; /* the interned ids emitted on this sequence */
	/* --trace-max-size: the ids and the first packet the budget counted already */
	struct pf_idset billed;
	bool billed_start;
	struct pf_pending *pend;
	size_t npend, pend_cap;
	struct pb_buf body;
	char *name; /* given by lp_pftrace_name (sanitized), or NULL */
	size_t name_len;
};

struct pf_proc {
	uint32_t pid;
	char *name;
	size_t name_len;
};

/* What is cached per string id: its name's interned id, its metadata's encoding. */
struct pf_id {
	uint32_t name_iid1; /* iid + 1; 0: not looked up */
	uint8_t *meta;      /* the ids' length (varint), the ids, then its DebugAnnotations */
	uint32_t meta_len;
	bool meta_set;
};

/* Our own texts, interned first (ids 1..), in this order. */
enum {
	K_SPAN, K_OFF_CPU, K_BLOCKED, K_RUNQ, K_COUNTER, K_SELF_COUNTER, K_UNTERMINATED,
	K_STARTED_BEFORE, K_UNCERTAIN, K_CPU, K_STEAL, K_RUNQ_US, K_BLOCKED_US, K_VCSW, K_IVCSW,
	K_UNMEASURED, K_DETAIL, K_COUNT
};

static const struct {
	uint32_t field;
	const char *text;
} own_texts[K_COUNT] = {
	[K_SPAN] = { PF_ID_CATEGORIES, "span" },
	[K_OFF_CPU] = { PF_ID_CATEGORIES, "off-cpu" },
	[K_BLOCKED] = { PF_ID_NAMES, "blocked" },
	[K_RUNQ] = { PF_ID_NAMES, "runq" },
	[K_COUNTER] = { PF_ID_ARG_NAMES, "counter" },
	[K_SELF_COUNTER] = { PF_ID_ARG_NAMES, "self_counter" },
	[K_UNTERMINATED] = { PF_ID_ARG_NAMES, "unterminated" },
	[K_STARTED_BEFORE] = { PF_ID_ARG_NAMES, "started_before_recording" },
	[K_UNCERTAIN] = { PF_ID_ARG_NAMES, "uncertain" },
	[K_CPU] = { PF_ID_ARG_NAMES, "cpu_us" },
	[K_STEAL] = { PF_ID_ARG_NAMES, "steal_us" },
	[K_RUNQ_US] = { PF_ID_ARG_NAMES, "runq_us" },
	[K_BLOCKED_US] = { PF_ID_ARG_NAMES, "blocked_us" },
	[K_VCSW] = { PF_ID_ARG_NAMES, "voluntary_switches" },
	[K_IVCSW] = { PF_ID_ARG_NAMES, "involuntary_switches" },
	[K_UNMEASURED] = { PF_ID_ARG_NAMES, "off_cpu_unmeasured_us" },
	[K_DETAIL] = { PF_ID_ARG_NAMES, "detail" },
};

struct lp_pftrace {
	struct lp_outfile out;
	int fd;
	const struct strtab *st;
	uint64_t base_ns;
	struct lp_pfz pz; /* the packets (pz.chunk), deflated and written */
	bool pz_ready;
	struct pb_buf te;    /* the TrackEvent being built */
	struct pb_buf ids;   /* the interned ids it refers to */
	struct lp_buf text;  /* a sanitized text */
	/* Interning: (hash, len) -> iid; texts[iid - 1] in arena. */
	struct lp_map interned;
	struct pf_text *texts;
	size_t ntexts, texts_cap;
	struct lp_buf arena;
	struct pf_id *cache; /* by string id */
	size_t cache_cap;
	struct pf_seq *seqs;
	size_t nseqs, seqs_cap;
	struct lp_map seq_of; /* (pid << 32 | tid, 0) -> index + 1 */
	/* seq_of's last answers by tid % PF_RECENT_SEQS (index + 1): every span needs its own */
	uint32_t recent_seq[PF_RECENT_SEQS];
	struct pf_proc *procs;
	size_t nprocs, procs_cap;
	uint32_t *order, *stack; /* a flush's events and its stack */
	size_t order_cap, stack_cap;
	/*
	 * --trace-last, --trace-max-size: each span and slice goes through the
	 * ring as a record (rec: kind, pid, tid, depth, start, end, its ids'
	 * length, its ids, its TrackEvent) and reaches its sequence when the ring
	 * emits it (joined: one cut in two by the ring's wraparound).
	 */
	struct lp_tring *ring;
	bool budget; /* no window: the records' cost is their packets' (packets_cost) */
	struct pb_buf rec, joined;
	struct lp_pftrace_stats stats;
	/* our own texts' InternedData (seq_start): entries, tag, length; the packet's longer length */
	uint64_t own_cost;
	int err; /* the first error: the file is not written */
};

static void set_err(struct lp_pftrace *t, int err)
{
	if (err && !t->err)
		t->err = err;
}

/* ---- packets ---- */

/* Starts a TracePacket in the chunk; pkt_end() ends it. */
static size_t pkt_begin(struct lp_pftrace *t, uint32_t seq)
{
	size_t mark = pb_open(&t->pz.chunk, PF_TRACE_PACKET);

	pb_uint(&t->pz.chunk, PF_TP_SEQ_ID, seq);
	return mark;
}

static void pkt_end(struct lp_pftrace *t, size_t mark)
{
	pb_close(&t->pz.chunk, mark);
	t->stats.packets++;
	if (t->pz.chunk.err)
		set_err(t, t->pz.chunk.err);
	else if (t->pz.chunk.len >= LP_PFTRACE_CHUNK)
		set_err(t, lp_pfz_flush(&t->pz));
}

/* ---- interning ---- */

static uint64_t hash_bytes(uint32_t field, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ field;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return lp_hash64(h);
}

/* The interned id of text s (sanitized) in field's table, made if new; 0 past the limits. */
static uint32_t intern(struct lp_pftrace *t, uint32_t field, const char *s, size_t len)
{
	struct lp_map_ent *e;
	struct pf_text *tx;

	if (len > UINT32_MAX)
		return 0;
	e = lp_map_find(&t->interned, hash_bytes(field, s, len), (uint32_t)len, false);
	if (e) {
		tx = &t->texts[e->v1 - 1];
		/* A 64-bit hash collision: written in full rather than under another's id. */
		return tx->field == field && !memcmp(t->arena.p + tx->off, s, len) ? (uint32_t)e->v1
										    : 0;
	}
	if (t->ntexts >= LP_PFTRACE_INTERN_MAX || t->arena.len + len > LP_PFTRACE_INTERN_BYTES)
		return 0;
	tx = lp_grow(t->texts, &t->texts_cap, t->ntexts + 1, sizeof(*tx));
	if (!tx || lp_buf_put(&t->arena, s, len)) {
		set_err(t, -ENOMEM);
		return 0;
	}
	t->texts = tx;
	e = lp_map_find(&t->interned, hash_bytes(field, s, len), (uint32_t)len, true);
	if (!e) {
		t->arena.len -= len;
		set_err(t, -ENOMEM);
		return 0;
	}
	t->texts[t->ntexts] = (struct pf_text){ field, (uint32_t)len, t->arena.len - len };
	e->v1 = ++t->ntexts;
	return (uint32_t)e->v1;
}

/* s made valid UTF-8 (as the JSON trace's strings), in t->text. */
static const char *sanitized(struct lp_pftrace *t, const char *s, size_t len, size_t *out)
{
	t->text.len = 0;
	if (lp_utf8_sanitize(&t->text, s, len)) {
		set_err(t, -ENOMEM);
		*out = 0;
		return "";
	}
	*out = t->text.len;
	return t->text.p ? t->text.p : "";
}

/* field:iid as a TrackEvent or DebugAnnotation refers to it, noting the id; or the text in full. */
static void ref(struct lp_pftrace *t, struct pb_buf *b, uint32_t iid_field, uint32_t text_field,
		uint32_t table, const char *s, size_t len)
{
	uint32_t iid = intern(t, table, s, len);

	if (iid) {
		pb_uint(b, iid_field, iid);
		pb_uvarint(&t->ids, iid);
	} else {
		pb_bytes(b, text_field, s, len);
		t->stats.inline_texts++;
	}
}

/* One of our own texts: every sequence has them from its first packet on (seq_start). */
static inline __attribute__((always_inline)) void own_ref(struct pb_buf *b, uint32_t field,
							  unsigned k)
{
	pb_uint(b, field, k + 1);
}

/* ---- a span's TrackEvent ---- */

/* One string item of args: DebugAnnotation { name, string value }. */
static void string_arg(struct lp_pftrace *t, struct pb_buf *b, const char *key, size_t klen,
		       const char *val, size_t vlen)
{
	size_t m = pb_open(b, PF_TE_ANNOTATIONS), n;
	const char *v;

	ref(t, b, PF_DA_NAME_IID, PF_DA_NAME, PF_ID_ARG_NAMES, key, klen);
	v = sanitized(t, val, vlen, &n);
	ref(t, b, PF_DA_STRING_IID, PF_DA_STRING, PF_ID_ARG_STRINGS, v, n);
	pb_close(b, m);
}

/* Metadata text as DebugAnnotations, the JSON trace's args items (lp_meta_keys, reserved keys). */
static void meta_args(struct lp_pftrace *t, struct pb_buf *b, const char *meta, size_t len)
{
	struct lp_meta_item items[LP_META_MAX_ITEMS];
	struct lp_meta_key keys[LP_META_MAX_ITEMS];
	size_t n = lp_meta_parse(meta, len, items, ARRAY_SIZE(items));

	lp_meta_keys(items, n, lp_trace_reserved_keys, keys);
	for (size_t i = 0; i < n; i++)
		string_arg(t, b, keys[i].s, keys[i].len, items[i].val, items[i].val_len);
}

/*
 * One unsigned item of args: DebugAnnotation { name_iid, uint_value }, written
 * straight into one room. Its tags and its name's id (ours, interned first)
 * take a byte each, its length too (3 bytes and a varint): the bytes pb_open,
 * own_ref, pb_uint and pb_close write, in a fifth of their instructions (every
 * span with a counter has two of these; bench row 18).
 */
_Static_assert(PF_TE_ANNOTATIONS < 16 && PF_DA_NAME_IID < 16 && PF_DA_UINT < 16 &&
		       K_COUNT < 0x80,
	       "uint_arg: one byte per tag and id");
static inline void uint_arg(struct pb_buf *b, unsigned k, uint64_t v)
{
	uint8_t *p = pb_room(b, 4 + PB_VARINT_MAX), *len;

	if (!p)
		return;
	*p++ = PF_TE_ANNOTATIONS << 3 | PB_LEN;
	len = p++;
	*p++ = PF_DA_NAME_IID << 3 | PB_VARINT;
	*p++ = (uint8_t)(k + 1);
	*p++ = PF_DA_UINT << 3 | PB_VARINT;
	p += pb_varint(p, v);
	*len = (uint8_t)(p - len - 1);
	b->len = (size_t)(p - b->p);
}

static void flag_arg(struct lp_pftrace *t, struct pb_buf *b, unsigned k)
{
	size_t m = pb_open(b, PF_TE_ANNOTATIONS);

	own_ref(b, PF_DA_NAME_IID, k);
	pb_uint(b, PF_DA_BOOL, 1);
	pb_close(b, m);
}

/* µs with ns precision, as the JSON trace's cpu_us...: ns / 1000 is the double of "US.NNN". */
static void usec_arg(struct lp_pftrace *t, struct pb_buf *b, unsigned k, uint64_t ns)
{
	size_t m = pb_open(b, PF_TE_ANNOTATIONS);

	own_ref(b, PF_DA_NAME_IID, k);
	pb_double(b, PF_DA_DOUBLE, (double)ns / 1000.0);
	pb_close(b, m);
}

/* args= of a span pair: an object, as in the JSON trace, in legacy_json_value. */
static void detail_arg(struct lp_pftrace *t, struct pb_buf *b, uint32_t detail)
{
	struct lp_buf json = { 0 };
	struct jw w;
	size_t len, m;
	const char *text = strtab_str(t->st, detail, &len);

	jw_init_buf(&w, &json);
	jw_obj_begin(&w);
	lp_meta_write(&w, text, len, NULL);
	jw_obj_end(&w);
	if (jw_error(&w) || !json.p) {
		set_err(t, -ENOMEM);
		lp_buf_free(&json);
		return;
	}
	m = pb_open(b, PF_TE_ANNOTATIONS);
	own_ref(b, PF_DA_NAME_IID, K_DETAIL);
	pb_bytes(b, PF_DA_JSON, json.p, json.len);
	pb_close(b, m);
	lp_buf_free(&json);
}

/* The profiler's own args after the metadata: counters, flags, the --off-cpu split. */
static void own_args(struct lp_pftrace *t, struct pb_buf *b, const struct lp_span *s)
{
	if (s->detail)
		detail_arg(t, b, s->detail);
	if (s->has_counter) {
		uint_arg(b, K_COUNTER, s->counter_total);
		uint_arg(b, K_SELF_COUNTER, s->counter_self);
	}
	if (s->flags & LP_SPAN_UNTERMINATED)
		flag_arg(t, b, K_UNTERMINATED);
	if (s->flags & LP_SPAN_STARTED_BEFORE)
		flag_arg(t, b, K_STARTED_BEFORE);
	if (s->flags & LP_SPAN_UNCERTAIN)
		flag_arg(t, b, K_UNCERTAIN);
	if (s->has_sched) {
		usec_arg(t, b, K_CPU, s->sched.cpu_ns);
		usec_arg(t, b, K_STEAL, s->sched.steal_ns);
		usec_arg(t, b, K_RUNQ_US, s->sched.runq_ns);
		usec_arg(t, b, K_BLOCKED_US, s->sched.blocked_ns);
		uint_arg(b, K_VCSW, s->sched.vcsw);
		uint_arg(b, K_IVCSW, s->sched.ivcsw);
		if (s->unmeasured_ns)
			usec_arg(t, b, K_UNMEASURED, s->unmeasured_ns);
	}
}

static struct pf_id *cache_of(struct lp_pftrace *t, uint32_t id)
{
	size_t old = t->cache_cap;
	struct pf_id *c;

	if (id < t->cache_cap)
		return &t->cache[id];
	c = lp_grow(t->cache, &t->cache_cap, (size_t)id + 1, sizeof(*c));
	if (!c) {
		set_err(t, -ENOMEM);
		return NULL;
	}
	memset(c + old, 0, (t->cache_cap - old) * sizeof(*c));
	t->cache = c;
	return &c[id];
}

/* The name's reference: its interned id, cached by string id, or its text in full. */
static void name_ref(struct lp_pftrace *t, struct pb_buf *b, uint32_t name)
{
	struct pf_id *c = cache_of(t, name);
	size_t len, n;
	const char *s;

	if (c && c->name_iid1 > 1) {
		pb_uint(b, PF_TE_NAME_IID, c->name_iid1 - 1);
		pb_uvarint(&t->ids, c->name_iid1 - 1);
		return;
	}
	s = strtab_str(t->st, name, &len);
	s = sanitized(t, s, len, &n);
	if (c && !c->name_iid1)
		c->name_iid1 = intern(t, PF_ID_NAMES, s, n) + 1;
	if (c && c->name_iid1 > 1) {
		pb_uint(b, PF_TE_NAME_IID, c->name_iid1 - 1);
		pb_uvarint(&t->ids, c->name_iid1 - 1);
	} else {
		pb_bytes(b, PF_TE_NAME, s, n);
		t->stats.inline_texts++;
	}
}

/* The metadata's ids and DebugAnnotations, built once per string id. */
static void meta_ref(struct lp_pftrace *t, struct pb_buf *b, uint32_t meta)
{
	struct pf_id *c = cache_of(t, meta);
	size_t len, b0 = b->len, i0 = t->ids.len;
	uint64_t inline_before = t->stats.inline_texts;
	struct pb_buf blob = { 0 };
	const char *s;

	if (c && c->meta_set) {
		struct pb_cur cur = { c->meta, c->meta + c->meta_len };
		uint64_t n = 0;

		pb_read_varint(&cur, &n); /* the ids' bytes, then the DebugAnnotations */
		pb_bytes_raw(&t->ids, cur.p, (size_t)n);
		pb_bytes_raw(b, cur.p + n, (size_t)(cur.end - cur.p) - (size_t)n);
		return;
	}
	s = strtab_str(t->st, meta, &len);
	meta_args(t, b, s, len);
	/* A text written in full is not cached: a later span may find it interned. */
	if (!c || b->err || t->ids.err || t->stats.inline_texts != inline_before)
		return;
	pb_uvarint(&blob, t->ids.len - i0);
	pb_bytes_raw(&blob, t->ids.p + i0, t->ids.len - i0);
	pb_bytes_raw(&blob, b->p + b0, b->len - b0);
	if (blob.err || blob.len > UINT32_MAX) {
		pb_buf_free(&blob);
		return;
	}
	c->meta = blob.p;
	c->meta_len = (uint32_t)blob.len;
	c->meta_set = true;
}

/* ---- sequences ---- */

static struct pf_seq *seq_of(struct lp_pftrace *t, uint32_t pid, uint32_t tid)
{
	uint32_t *recent = &t->recent_seq[tid % PF_RECENT_SEQS];
	struct lp_map_ent *e;
	struct pf_seq *q;

	if (*recent) {
		q = &t->seqs[*recent - 1];
		if (q->tid == tid && q->pid == pid)
			return q;
	}
	e = lp_map_find(&t->seq_of, (uint64_t)pid << 32 | tid, 0, true);
	if (!e) {
		set_err(t, -ENOMEM);
		return NULL;
	}
	if (e->v1) {
		*recent = (uint32_t)e->v1;
		return &t->seqs[e->v1 - 1];
	}
	q = lp_grow(t->seqs, &t->seqs_cap, t->nseqs + 1, sizeof(*q));
	if (!q) {
		set_err(t, -ENOMEM);
		return NULL;
	}
	t->seqs = q;
	q = &t->seqs[t->nseqs];
	*q = (struct pf_seq){ .pid = pid, .tid = tid,
			      .id = LP_PFTRACE_SEQ_FILE + 1 + (uint32_t)t->nseqs };
	_Static_assert(PF_TP_SEQ_ID < 16 && PF_TP_TIMESTAMP < 16, "packet_head: one byte a tag");
	q->head[0] = PF_TP_SEQ_ID << 3 | PB_VARINT;
	q->head_len = (uint8_t)(1 + pb_varint(q->head + 1, q->id)); /* ids < 2^32: 5 bytes */
	q->head[q->head_len++] = PF_TP_TIMESTAMP << 3 | PB_VARINT;
	e->v1 = ++t->nseqs;
	*recent = (uint32_t)e->v1;
	return q;
}

static void interned_data(struct lp_pftrace *t, struct pf_seq *q, struct pb_cur ids,
			  struct pb_buf *b);

/*
 * The sequence's first packet: state cleared, its defaults, its clock from ts
 * on, and our own texts (ids 1 to K_COUNT) as interned data: a span's own
 * names (its category, "counter", ...) then never go through the ids its
 * packet is checked for (all_seen), nor its ids' list.
 */
static void seq_start(struct lp_pftrace *t, struct pf_seq *q, uint64_t ts)
{
	size_t p = pkt_begin(t, q->id), d, e, cs, c;
	struct pb_buf *b = &t->pz.chunk;
	uint8_t own[K_COUNT];

	pb_uint(b, PF_TP_SEQ_FLAGS, PF_SEQ_CLEARED);
	d = pb_open(b, PF_TP_DEFAULTS);
	pb_uint(b, PF_TP_CLOCK_ID, LP_PFTRACE_CLOCK);
	e = pb_open(b, PF_TPD_TRACK_EVENT);
	pb_uint(b, PF_TED_TRACK_UUID, lp_pftrace_uuid(q->pid, q->tid));
	pb_close(b, e);
	pb_close(b, d);
	cs = pb_open(b, PF_TP_CLOCK_SNAPSHOT);
	c = pb_open(b, PF_CS_CLOCKS);
	pb_uint(b, PF_CLK_ID, LP_PFTRACE_CLOCK);
	pb_uint(b, PF_CLK_TIMESTAMP, ts);
	pb_uint(b, PF_CLK_INCREMENTAL, 1);
	pb_close(b, c);
	c = pb_open(b, PF_CS_CLOCKS);
	pb_uint(b, PF_CLK_ID, LP_PFTRACE_CLOCK_MONOTONIC);
	pb_uint(b, PF_CLK_TIMESTAMP, ts);
	pb_close(b, c);
	/* The trace's time is CLOCK_MONOTONIC, as the spans' (and not Perfetto's BOOTTIME). */
	pb_uint(b, PF_CS_PRIMARY, LP_PFTRACE_CLOCK_MONOTONIC);
	pb_close(b, cs);
	for (unsigned k = 0; k < K_COUNT; k++)
		own[k] = (uint8_t)(k + 1); /* one byte a varint: K_COUNT < 0x80 (uint_arg) */
	interned_data(t, q, (struct pb_cur){ own, own + K_COUNT }, b);
	pkt_end(t, p);
	q->started = true;
	q->last_ts = ts;
}

/*
 * The packet's fields before its TrackEvent, into out (room for 40 bytes):
 * the sequence, the time since the sequence's previous packet, or the
 * absolute time when before it. Returns their length.
 */
static size_t packet_head(struct lp_pftrace *t, struct pf_seq *q, uint64_t ts, uint8_t *out)
{
	uint8_t *p = out;

	memcpy(p, q->head, sizeof(q->head)); /* the room's: what is past head_len is written over */
	p += q->head_len;
	if (ts >= q->last_ts) {
		p += pb_varint(p, ts - q->last_ts);
		q->last_ts = ts;
	} else {
		p += pb_varint(p, ts);
		p += pb_varint(p, pb_tag(PF_TP_CLOCK_ID, PB_VARINT));
		p += pb_varint(p, LP_PFTRACE_CLOCK_MONOTONIC);
		t->stats.absolute++;
	}
	return (size_t)(p - out);
}

/*
 * A whole TracePacket: track_event = te, its interned data if any, then its head
 * (packet_head, at ts on q).
 * The time last: what differs between two packets of one span's name and
 * metadata is then one run of bytes, which deflate's matches go round (5%
 * smaller than the fields in number order).
 */
static void put_packet(struct lp_pftrace *t, struct pf_seq *q, uint64_t ts,
		       const uint8_t *interned, size_t ilen, const uint8_t *te, size_t tlen)
{
	/* The packet's tag and length, then at most: te's tag and length, te, interned, a head. */
	uint8_t *p = pb_room(&t->pz.chunk, 2 * (1 + PB_VARINT_MAX) + tlen + ilen + 40), *at;
	size_t body, n;

	if (!p) {
		set_err(t, -ENOMEM);
		return;
	}
	*p++ = PF_TRACE_PACKET << 3 | PB_LEN;
	at = p++; /* the body's length: one byte, as mostly (pb_open, pb_close) */
	*p++ = PF_TP_TRACK_EVENT << 3 | PB_LEN;
	p += pb_varint(p, tlen);
	memcpy(p, te, tlen);
	p += tlen;
	if (ilen)
		memcpy(p, interned, ilen);
	p += ilen;
	p += packet_head(t, q, ts, p); /* in place: no copy of it */
	body = (size_t)(p - at - 1);
	n = pb_varint_len(body);
	if (n > 1) {
		memmove(at + n, at + 1, body);
		p += n - 1;
	}
	pb_varint(at, body);
	t->pz.chunk.len = (size_t)(p - t->pz.chunk.p);
	t->stats.packets++;
	if (t->pz.chunk.len >= LP_PFTRACE_CHUNK)
		set_err(t, lp_pfz_flush(&t->pz));
}

/*
 * Where iid's probe begins: Fibonacci hashing (the top bits of one multiply),
 * which spreads ids handed out in sequence, as interned ids are, as well as a
 * full mix (lp_hash64) at a fifth of its instructions.
 */
static size_t idset_home(uint64_t iid, size_t cap)
{
	return (size_t)((iid * 0x9e3779b97f4a7c15ULL) >> (64 - __builtin_ctzll(cap)));
}

static bool idset_has(const struct pf_idset *set, uint64_t iid)
{
	size_t mask = set->cap - 1;

	if (iid < PF_IDSET_LOW)
		return set->low[iid / 64] >> (iid % 64) & 1;
	if (!set->cap)
		return false;
	for (size_t i = idset_home(iid, set->cap);; i = (i + 1) & mask) {
		if (set->v[i] == iid)
			return true;
		if (!set->v[i])
			return false;
	}
}

static void idset_put(uint32_t *v, size_t cap, uint32_t iid)
{
	size_t i = idset_home(iid, cap);

	while (v[i])
		i = (i + 1) & (cap - 1);
	v[i] = iid;
}

/* Adds iid (not in the set yet). */
static void idset_add(struct lp_pftrace *t, struct pf_idset *set, uint64_t iid)
{
	if (iid < PF_IDSET_LOW) {
		set->low[iid / 64] |= 1ULL << (iid % 64);
		return;
	}
	if (2 * (set->n + 1) > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		uint32_t *v = calloc(cap, sizeof(*v));

		if (!v) {
			set_err(t, -ENOMEM);
			return;
		}
		for (size_t i = 0; i < set->cap; i++)
			if (set->v[i])
				idset_put(v, cap, set->v[i]);
		free(set->v);
		set->v = v;
		set->cap = cap;
	}
	idset_put(set->v, set->cap, (uint32_t)iid);
	set->n++;
}

/* Whether every id in ids is on the sequence already (the common case: nothing to emit). */
static bool all_seen(struct pf_seq *q, struct pb_cur ids)
{
	uint64_t iid;

	while (ids.p < ids.end) {
		if (*ids.p < 0x80)
			iid = *ids.p++;
		else if (pb_read_varint(&ids, &iid))
			return true;
		if (!idset_has(&q->seen, iid))
			return false;
	}
	return true;
}

/* InternedData (a TracePacket field) of the ids the sequence has not had yet, each once. */
static void interned_data(struct lp_pftrace *t, struct pf_seq *q, struct pb_cur ids,
			  struct pb_buf *b)
{
	size_t m = pb_open(b, PF_TP_INTERNED);
	uint64_t iid;

	while (ids.p < ids.end && !pb_read_varint(&ids, &iid)) {
		const struct pf_text *tx;
		size_t e;

		if (!iid || iid > t->ntexts || idset_has(&q->seen, iid))
			continue;
		tx = &t->texts[iid - 1];
		e = pb_open(b, tx->field);
		pb_uint(b, PF_IE_IID, iid);
		pb_bytes(b, PF_IE_TEXT, t->arena.p + tx->off, tx->len);
		pb_close(b, e);
		idset_add(t, &q->seen, iid);
	}
	pb_close(b, m);
}

static void begin_packet(struct lp_pftrace *t, struct pf_seq *q, const struct pf_pending *e)
{
	const uint8_t *te = q->body.p + e->off;
	struct pb_cur ids = { te + e->tlen, te + e->tlen + e->ilen };

	if (all_seen(q, ids)) {
		put_packet(t, q, e->start, NULL, 0, te, e->tlen);
		return;
	}
	t->ids.len = 0;
	interned_data(t, q, ids, &t->ids);
	if (t->ids.err)
		set_err(t, t->ids.err);
	put_packet(t, q, e->start, t->ids.p, t->ids.len, te, e->tlen);
}

/*
 * An END packet: put_packet()'s bytes for a TrackEvent { type: END } and no
 * interned data, written in place. Every span has one; through put_packet's
 * lengths and copies it cost 60 instructions more (bench row 18).
 */
_Static_assert(PF_TRACE_PACKET < 16 && PF_TP_TRACK_EVENT < 16 && PF_TE_TYPE < 16,
	       "end_packet: one byte per tag");
static void end_packet(struct lp_pftrace *t, struct pf_seq *q, uint64_t ts)
{
	/* The packet's tag, its length (under 128: 4 bytes and a head of at most 40) and 4 bytes. */
	uint8_t *p = pb_room(&t->pz.chunk, 2 + 4 + 40), *len;

	if (!p) {
		set_err(t, -ENOMEM);
		return;
	}
	*p++ = PF_TRACE_PACKET << 3 | PB_LEN;
	len = p++;
	*p++ = PF_TP_TRACK_EVENT << 3 | PB_LEN;
	*p++ = 2;
	*p++ = PF_TE_TYPE << 3 | PB_VARINT;
	*p++ = PF_TYPE_END;
	p += packet_head(t, q, ts, p);
	*len = (uint8_t)(p - len - 1);
	t->pz.chunk.len = (size_t)(p - t->pz.chunk.p);
	t->stats.packets++;
	if (t->pz.chunk.len >= LP_PFTRACE_CHUNK)
		set_err(t, lp_pfz_flush(&t->pz));
}

/*
 * The thread's waiting spans as BEGIN and END packets in the order it ran
 * them. They came in post-order (children before parents) with their depths;
 * read backwards with a stack of the spans whose BEGIN is not placed yet,
 * each span's END goes once the spans after it (deeper or its siblings) have
 * their BEGINs, which builds the event sequence from its end.
 */
static void flush_seq(struct lp_pftrace *t, struct pf_seq *q)
{
	size_t n = q->npend, k = 2 * n, sp = 0;
	uint32_t *o, *st;

	if (!n)
		return;
	o = lp_grow(t->order, &t->order_cap, 2 * n, sizeof(*o));
	if (o)
		t->order = o;
	st = o ? lp_grow(t->stack, &t->stack_cap, n, sizeof(*st)) : NULL;
	if (!o || !st) {
		set_err(t, -ENOMEM);
		return;
	}
	t->stack = st;
	for (size_t i = n; i-- > 0;) {
		while (sp && q->pend[st[sp - 1]].depth >= q->pend[i].depth)
			o[--k] = st[--sp] << 1; /* BEGIN */
		o[--k] = (uint32_t)i << 1 | 1; /* END */
		st[sp++] = (uint32_t)i;
	}
	while (sp)
		o[--k] = st[--sp] << 1;
	if (!q->started)
		seq_start(t, q, q->pend[o[0] >> 1].start);
	for (size_t i = 0; i < 2 * n; i++) {
		const struct pf_pending *e = &q->pend[o[i] >> 1];

		if (o[i] & 1)
			end_packet(t, q, e->end);
		else
			begin_packet(t, q, e);
	}
	q->npend = 0;
	q->body.len = 0;
}

/* --trace-max-size: the budget has counted ids and the first packet on q (packets_cost). */
static void bill(struct lp_pftrace *t, struct pf_seq *q, struct pb_cur ids)
{
	uint64_t iid;

	while (ids.p < ids.end && !pb_read_varint(&ids, &iid))
		if (iid && !idset_has(&q->billed, iid))
			idset_add(t, &q->billed, iid);
	q->billed_start = true;
}

/*
 * Queues the TrackEvent at q->body[off, ...) (the interned ids it refers to:
 * ids, appended to it) on its thread's sequence, a span's or an off-CPU
 * slice's (kind).
 */
static void queue(struct lp_pftrace *t, struct pf_seq *q, unsigned kind, uint32_t depth,
		  uint64_t start, uint64_t end, size_t off, const uint8_t *ids, size_t ilen)
{
	size_t tlen = q->body.len - off;
	struct pf_pending *e = lp_grow(q->pend, &q->pend_cap, q->npend + 1, sizeof(*e));

	if (e)
		q->pend = e;
	pb_bytes_raw(&q->body, ids, ilen);
	if (!e || q->body.err || q->body.len > UINT32_MAX) {
		set_err(t, q->body.err ? q->body.err : -ENOMEM);
		q->body.len = off;
		return;
	}
	if (t->budget)
		bill(t, q, (struct pb_cur){ ids, ids + ilen });
	if (kind == PF_KIND_SPAN)
		t->stats.spans++;
	else
		t->stats.off_cpu++;
	q->pend[q->npend++] = (struct pf_pending){ start, end, depth, (uint32_t)off,
						   (uint32_t)tlen, (uint32_t)ilen };
	/* Its top-level span closed: the thread's spans so far are all whole. */
	if (depth == 0 || q->npend >= LP_PFTRACE_HOLD_MAX)
		flush_seq(t, q);
}

/* The same from a copy (te, tlen bytes), as a bounded trace's ring gives it back. */
static void enqueue(struct lp_pftrace *t, unsigned kind, uint32_t pid, uint32_t tid,
		    uint32_t depth, uint64_t start, uint64_t end, const uint8_t *ids, size_t ilen,
		    const uint8_t *te, size_t tlen)
{
	struct pf_seq *q = seq_of(t, pid, tid);
	size_t off;

	if (!q)
		return;
	off = q->body.len;
	pb_bytes_raw(&q->body, te, tlen);
	queue(t, q, kind, depth, start, end, off, ids, ilen);
}

/* The sequence of (pid, tid), if it has one yet. */
static struct pf_seq *seq_find(struct lp_pftrace *t, uint32_t pid, uint32_t tid)
{
	struct lp_map_ent *e = lp_map_find(&t->seq_of, (uint64_t)pid << 32 | tid, 0, false);

	return e && e->v1 ? &t->seqs[e->v1 - 1] : NULL;
}

/* The bytes interned_data() writes for iid. */
static uint64_t entry_len(const struct lp_pftrace *t, uint64_t iid)
{
	const struct pf_text *tx = &t->texts[iid - 1];
	uint64_t body = 1 + pb_varint_len(iid) + 1 + pb_varint_len(tx->len) + tx->len;

	return pb_varint_len(pb_tag(tx->field, PB_LEN)) + pb_varint_len(body) + body;
}

/*
 * --trace-max-size: the most bytes the BEGIN and END packets of a TrackEvent
 * (tlen bytes, referring to ids) of sequence (pid, tid) will take, with the
 * texts the sequence has not been charged for yet and, on its first, the
 * sequence's first packet. Which packet defines a text depends on the order
 * they are written in: a packet's length and its InternedData's header count
 * at their largest (every text of its own), the texts' bytes once.
 */
static uint64_t packets_cost(struct lp_pftrace *t, uint32_t pid, uint32_t tid, uint64_t end,
			     struct pb_cur ids, size_t tlen)
{
	const struct pf_seq *q = seq_find(t, pid, tid);
	/*
	 * A packet's head: its sequence's id (one made later: 5 bytes at most),
	 * its time, a delta or absolute, at most end.
	 */
	uint64_t head = 1 + (q ? pb_varint_len(q->id) : 5) + 1 + pb_varint_len(end) +
			PF_ABSOLUTE_CLOCK;
	uint64_t iid, all = 0, fresh = 0, wrap, body;

	while (ids.p < ids.end && !pb_read_varint(&ids, &iid)) {
		uint64_t n;

		if (!iid || iid > t->ntexts)
			continue;
		n = entry_len(t, iid);
		all += n;
		if (!q || !idset_has(&q->billed, iid))
			fresh += n;
	}
	wrap = all ? 1 + pb_varint_len(all) : 0;
	body = head + wrap + all + 1 + pb_varint_len(tlen) + tlen;
	return 1 + pb_varint_len(body) + body - all + fresh + head + PF_END_BODY +
	       (q && q->billed_start ? 0 : PF_SEQ_START_MAX + t->own_cost);
}

/* A record the ring emits (rec's layout) onto its sequence. */
static int from_ring(void *ctx, const char *a, size_t alen, const char *b, size_t blen)
{
	struct lp_pftrace *t = ctx;
	const uint8_t *p = (const uint8_t *)a;
	struct pb_cur c;
	uint64_t v[6]; /* pid, tid, depth, start, end, the ids' length */

	if (blen) {
		t->joined.len = 0;
		pb_bytes_raw(&t->joined, a, alen);
		pb_bytes_raw(&t->joined, b, blen);
		if (t->joined.err) {
			set_err(t, t->joined.err);
			return t->err;
		}
		p = t->joined.p;
	}
	c = (struct pb_cur){ p + 1, p + alen + blen };
	for (int i = 0; i < 6; i++)
		if (pb_read_varint(&c, &v[i]))
			return -EINVAL; /* never: the ring holds what rec was */
	if (v[5] > (uint64_t)(c.end - c.p))
		return -EINVAL;
	enqueue(t, p[0], (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], v[3], v[4], c.p,
		(size_t)v[5], c.p + v[5], (size_t)(c.end - c.p) - (size_t)v[5]);
	return t->err;
}

/*
 * The TrackEvent te_begin() began (its ids in t->ids): queued on its sequence
 * (q, where it was built from off on), or through the ring (q NULL: in t->te).
 */
static void take(struct lp_pftrace *t, struct pf_seq *q, size_t off, unsigned kind,
		 uint32_t pid, uint32_t tid, uint32_t depth, uint64_t start, uint64_t end)
{
	struct pb_buf *b = &t->rec;
	uint64_t cost;
	uint8_t k = (uint8_t)kind;
	int err;

	if (q && t->ids.err) {
		set_err(t, t->ids.err);
		q->body.len = off;
		return;
	}
	if (q) {
		queue(t, q, kind, depth, start, end, off, t->ids.p, t->ids.len);
		return;
	}
	if (t->te.err || t->ids.err) {
		set_err(t, t->te.err ? t->te.err : t->ids.err);
		return;
	}
	b->len = 0;
	pb_bytes_raw(b, &k, 1);
	pb_uvarint(b, pid);
	pb_uvarint(b, tid);
	pb_uvarint(b, depth);
	pb_uvarint(b, start);
	pb_uvarint(b, end);
	pb_uvarint(b, t->ids.len);
	pb_bytes_raw(b, t->ids.p, t->ids.len);
	pb_bytes_raw(b, t->te.p, t->te.len);
	if (b->err) {
		set_err(t, b->err);
		return;
	}
	/* The window bounds memory: a record costs its bytes. */
	cost = t->budget ? packets_cost(t, pid, tid, end,
					(struct pb_cur){ t->ids.p, t->ids.p + t->ids.len }, t->te.len)
			 : b->len;
	if (kind == PF_KIND_SPAN)
		err = lp_tring_span_cost(t->ring, pid, tid, start, end, b->p, b->len, cost);
	else
		err = lp_tring_inner_cost(t->ring, pid, tid, start, b->p, b->len, cost);
	set_err(t, err);
}

/*
 * Begins a TrackEvent: in its sequence's body (*q, from *off on), or in t->te
 * for the ring (*q NULL); NULL when out of memory (set).
 */
static struct pb_buf *te_begin(struct lp_pftrace *t, uint32_t pid, uint32_t tid,
			       struct pf_seq **q, size_t *off)
{
	struct pb_buf *b = &t->te;

	*q = NULL;
	if (t->ring) {
		t->te.len = 0;
	} else {
		*q = seq_of(t, pid, tid);
		if (!*q)
			return NULL;
		b = &(*q)->body;
	}
	*off = b->len;
	t->ids.len = 0;
	pb_uint(b, PF_TE_TYPE, PF_TYPE_BEGIN);
	return b;
}

void lp_pftrace_span(struct lp_pftrace *t, const struct lp_span *s)
{
	struct pf_seq *q;
	struct pb_buf *b;
	size_t off;

	if (t->err || !(b = te_begin(t, s->pid, s->tid, &q, &off)))
		return;
	name_ref(t, b, s->name);
	own_ref(b, PF_TE_CATEGORY_IIDS, K_SPAN);
	if (s->meta)
		meta_ref(t, b, s->meta);
	own_args(t, b, s);
	take(t, q, off, PF_KIND_SPAN, s->pid, s->tid, s->depth, s->start_ns, s->end_ns);
}

void lp_pftrace_span_part(struct lp_pftrace *t, const struct lp_pftrace_part *p)
{
	const char *k, *v, *name;
	size_t kl, vl, pos = 0, n, off;
	struct pf_seq *q;
	struct pb_buf *b;

	if (t->err || !(b = te_begin(t, p->pid, p->tid, &q, &off)))
		return;
	name = sanitized(t, p->name, p->name_len, &n);
	ref(t, b, PF_TE_NAME_IID, PF_TE_NAME, PF_ID_NAMES, name, n);
	own_ref(b, PF_TE_CATEGORY_IIDS, K_SPAN);
	while (pos + 4 <= p->meta_len) {
		const unsigned char *u = (const unsigned char *)p->meta + pos;

		kl = (size_t)u[0] | (size_t)u[1] << 8;
		k = p->meta + pos + 2;
		if (pos + 4 + kl > p->meta_len)
			break;
		u = (const unsigned char *)k + kl;
		vl = (size_t)u[0] | (size_t)u[1] << 8;
		v = k + kl + 2;
		if (pos + 4 + kl + vl > p->meta_len)
			break;
		pos += 4 + kl + vl;
		string_arg(t, b, k, kl, v, vl);
	}
	if (p->has_counter)
		uint_arg(b, K_COUNTER, p->counter);
	if (p->has_self_counter)
		uint_arg(b, K_SELF_COUNTER, p->self_counter);
	if (p->flags & LP_SPAN_UNTERMINATED)
		flag_arg(t, b, K_UNTERMINATED);
	if (p->flags & LP_SPAN_STARTED_BEFORE)
		flag_arg(t, b, K_STARTED_BEFORE);
	if (p->flags & LP_SPAN_UNCERTAIN)
		flag_arg(t, b, K_UNCERTAIN);
	take(t, q, off, PF_KIND_SPAN, p->pid, p->tid, p->depth, p->start_ns, p->end_ns);
}

static void off_cpu_slice(struct lp_pftrace *t, unsigned name, uint32_t pid, uint32_t tid,
			  uint32_t depth, uint64_t from, uint64_t to)
{
	struct pf_seq *q;
	struct pb_buf *b;
	size_t off;

	if (to <= from || t->err || !(b = te_begin(t, pid, tid, &q, &off)))
		return;
	own_ref(b, PF_TE_NAME_IID, name);
	own_ref(b, PF_TE_CATEGORY_IIDS, K_OFF_CPU);
	take(t, q, off, PF_KIND_OFF_CPU, pid, tid, depth, from, to);
}

void lp_pftrace_off_cpu(struct lp_pftrace *t, uint32_t pid, uint32_t tid, uint32_t depth,
			uint64_t off_ns, uint64_t wake_ns, uint64_t on_ns)
{
	/* As the JSON trace's: "blocked" ends 1 ns before "runq" begins. */
	off_cpu_slice(t, K_BLOCKED, pid, tid, depth, off_ns,
		      wake_ns < on_ns ? wake_ns - 1 : wake_ns);
	off_cpu_slice(t, K_RUNQ, pid, tid, depth, wake_ns, on_ns);
}

/* ---- names, the end ---- */

static int set_name(char **dst, size_t *dlen, const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, s, len);
	p[len] = '\0';
	free(*dst);
	*dst = p;
	*dlen = len;
	return 0;
}

void lp_pftrace_name_text(struct lp_pftrace *t, bool process, uint32_t pid, uint32_t tid,
			  const char *name, size_t len)
{
	const char *s = sanitized(t, name, len, &len);

	if (process) {
		struct pf_proc *p = NULL;

		for (size_t i = 0; i < t->nprocs && !p; i++)
			if (t->procs[i].pid == pid)
				p = &t->procs[i];
		if (!p) {
			p = lp_grow(t->procs, &t->procs_cap, t->nprocs + 1, sizeof(*p));
			if (!p) {
				set_err(t, -ENOMEM);
				return;
			}
			t->procs = p;
			p = &t->procs[t->nprocs++];
			*p = (struct pf_proc){ .pid = pid };
		}
		set_err(t, set_name(&p->name, &p->name_len, s, len));
	} else {
		struct pf_seq *q = seq_of(t, pid, tid);

		if (q)
			set_err(t, set_name(&q->name, &q->name_len, s, len));
	}
}

void lp_pftrace_name(struct lp_pftrace *t, bool process, uint32_t pid, uint32_t tid,
		     uint32_t name)
{
	size_t len;
	const char *s = strtab_str(t->st, name, &len);

	lp_pftrace_name_text(t, process, pid, tid, s, len);
}

/* A process's track: its pid and name. */
static void process_descriptor(struct lp_pftrace *t, uint32_t pid, const char *name, size_t len)
{
	struct pb_buf *b = &t->pz.chunk;
	size_t p = pkt_begin(t, LP_PFTRACE_SEQ_FILE), d = pb_open(b, PF_TP_TRACK_DESCRIPTOR), pd;

	pb_uint(b, PF_TD_UUID, lp_pftrace_uuid(pid, 0));
	pd = pb_open(b, PF_TD_PROCESS);
	pb_uint(b, PF_PD_PID, pid);
	if (name)
		pb_bytes(b, PF_PD_NAME, name, len);
	pb_close(b, pd);
	pb_close(b, d);
	pkt_end(t, p);
}

/* A thread's track, or a keyed track's (a track of its process, named). */
static void thread_descriptor(struct lp_pftrace *t, const struct pf_seq *q)
{
	struct pb_buf *b = &t->pz.chunk;
	size_t p = pkt_begin(t, LP_PFTRACE_SEQ_FILE), d = pb_open(b, PF_TP_TRACK_DESCRIPTOR), td;

	pb_uint(b, PF_TD_UUID, lp_pftrace_uuid(q->pid, q->tid));
	pb_uint(b, PF_TD_PARENT, lp_pftrace_uuid(q->pid, 0));
	if (LP_TRACK_IS(q->tid)) {
		if (q->name)
			pb_bytes(b, PF_TD_NAME, q->name, q->name_len);
	} else {
		td = pb_open(b, PF_TD_THREAD);
		pb_uint(b, PF_THD_PID, q->pid);
		pb_uint(b, PF_THD_TID, q->tid);
		if (q->name)
			pb_bytes(b, PF_THD_NAME, q->name, q->name_len);
		pb_close(b, td);
	}
	pb_close(b, d);
	pkt_end(t, p);
}

static void descriptors(struct lp_pftrace *t)
{
	for (size_t i = 0; i < t->nprocs; i++)
		process_descriptor(t, t->procs[i].pid, t->procs[i].name, t->procs[i].name_len);
	for (size_t i = 0; i < t->nseqs; i++) {
		bool named = false;

		for (size_t j = 0; j < t->nprocs && !named; j++)
			named = t->procs[j].pid == t->seqs[i].pid;
		for (size_t j = 0; j < i && !named; j++)
			named = t->seqs[j].pid == t->seqs[i].pid;
		if (!named)
			process_descriptor(t, t->seqs[i].pid, NULL, 0);
		thread_descriptor(t, &t->seqs[i]);
	}
}

static void attributes(struct lp_pftrace *t, const char *other_data_json)
{
	struct pb_buf *b = &t->pz.chunk;
	size_t p, a, e;

	if (!other_data_json)
		return;
	p = pkt_begin(t, LP_PFTRACE_SEQ_FILE);
	a = pb_open(b, PF_TP_ATTRIBUTES);
	e = pb_open(b, PF_TA_ATTRIBUTE);
	pb_bytes(b, PF_TAA_KEY, LP_PFTRACE_OTHER_DATA_KEY, strlen(LP_PFTRACE_OTHER_DATA_KEY));
	pb_bytes(b, PF_TAA_STRING, other_data_json, strlen(other_data_json));
	pb_close(b, e);
	pb_close(b, a);
	pkt_end(t, p);
}

/* ---- open, close ---- */

static int init(struct lp_pftrace *t, const struct strtab *st, uint64_t base_ns)
{
	t->st = st;
	t->base_ns = base_ns;
	if (lp_pfz_init(&t->pz, t->fd))
		return -ENOMEM;
	t->pz_ready = true;
	for (unsigned k = 0; k < K_COUNT; k++) {
		if (intern(t, own_texts[k].field, own_texts[k].text, strlen(own_texts[k].text)) !=
		    k + 1)
			return -ENOMEM;
		t->own_cost += entry_len(t, k + 1);
	}
	t->own_cost += 2 + PB_VARINT_MAX;
	return t->err;
}

static void release(struct lp_pftrace *t)
{
	if (t->pz_ready)
		lp_pfz_release(&t->pz);
	pb_buf_free(&t->te);
	pb_buf_free(&t->ids);
	lp_buf_free(&t->text);
	lp_buf_free(&t->arena);
	lp_map_free(&t->interned);
	free(t->texts);
	for (size_t i = 0; i < t->cache_cap; i++)
		free(t->cache[i].meta);
	free(t->cache);
	for (size_t i = 0; i < t->nseqs; i++) {
		free(t->seqs[i].seen.v);
		free(t->seqs[i].billed.v);
		free(t->seqs[i].pend);
		pb_buf_free(&t->seqs[i].body);
		free(t->seqs[i].name);
	}
	free(t->seqs);
	lp_map_free(&t->seq_of);
	for (size_t i = 0; i < t->nprocs; i++)
		free(t->procs[i].name);
	free(t->procs);
	free(t->order);
	free(t->stack);
	lp_tring_free(t->ring);
	pb_buf_free(&t->rec);
	pb_buf_free(&t->joined);
	free(t);
}

int lp_pftrace_openat(struct lp_pftrace **out, int dirfd, const char *name,
		      const struct strtab *st, uint64_t base_ns)
{
	struct lp_pftrace *t = calloc(1, sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	err = lp_outfile_openat(&t->out, dirfd, name);
	if (err) {
		free(t);
		return err;
	}
	/* Our own chunks and write(2): the stream stays empty, commit only syncs it. */
	t->fd = fileno(t->out.f);
	err = init(t, st, base_ns);
	if (err) {
		lp_pftrace_abort(t);
		return err;
	}
	*out = t;
	return 0;
}

int lp_pftrace_open(struct lp_pftrace **out, const char *path, const struct strtab *st,
		    uint64_t base_ns)
{
	return lp_pftrace_openat(out, AT_FDCWD, path, st, base_ns);
}

int lp_pftrace_fd(const struct lp_pftrace *t)
{
	return t->fd;
}

void lp_pftrace_forget(struct lp_pftrace *t, uint32_t id)
{
	if (id >= t->cache_cap)
		return;
	free(t->cache[id].meta);
	t->cache[id] = (struct pf_id){ 0 };
}

void lp_pftrace_compact(struct lp_pftrace *t)
{
	(void)t;
}

int lp_pftrace_bound(struct lp_pftrace *t, uint64_t last_ns, uint64_t max_bytes,
		     struct lp_tring *leader)
{
	/* Nothing is in the file before the first span: the budget is all the packets'. */
	struct lp_tring_opts o = { .last_ns = last_ns, .max_bytes = max_bytes,
				   .emit = from_ring, .ctx = t, .leader = leader };

	t->ring = lp_tring_new(&o);
	if (!t->ring)
		return -ENOMEM;
	t->budget = !last_ns;
	return 0;
}

void lp_pftrace_bound_end(struct lp_pftrace *t, uint64_t end_ns, struct lp_tring_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (t->ring)
		lp_tring_end(t->ring, end_ns, st);
}

int lp_pftrace_close(struct lp_pftrace *t, const char *other_data_json,
		     struct lp_pftrace_stats *stats)
{
	int err;

	if (t->ring) {
		/* The window's spans, as they closed; the budget's are all out already. */
		set_err(t, lp_tring_flush(t->ring));
		lp_tring_free(t->ring);
		t->ring = NULL;
	}
	for (size_t i = 0; i < t->nseqs; i++)
		flush_seq(t, &t->seqs[i]);
	descriptors(t);
	attributes(t, other_data_json);
	set_err(t, lp_pfz_finish(&t->pz));
	t->stats.raw_bytes = t->pz.raw_bytes;
	t->stats.file_bytes = t->pz.file_bytes;
	if (stats)
		*stats = t->stats;
	err = t->err;
	if (err) {
		lp_pftrace_abort(t);
		return err;
	}
	err = lp_outfile_commit(&t->out);
	release(t);
	return err;
}

void lp_pftrace_abort(struct lp_pftrace *t)
{
	if (!t)
		return;
	if (t->pz_ready)
		lp_pfz_release(&t->pz); /* its thread stops before the file closes */
	t->pz_ready = false;
	lp_outfile_abort(&t->out);
	release(t);
}
