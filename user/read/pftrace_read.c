// SPDX-License-Identifier: MIT
#include "pftrace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "map.h"
#include "nest.h"
#include "outfile.h"
#include "pbw.h"
#include "pftrace.h"
#include "spool.h"

struct rd_seq {
	uint32_t gen;       /* its interned texts' generation: a clear starts a new one */
	uint32_t def_clock; /* TracePacketDefaults.timestamp_clock_id (0: none) */
	uint64_t def_uuid;  /* TrackEventDefaults.track_uuid */
	uint32_t clock;     /* its sequence-scoped clock (0: none yet) */
	bool incremental;
	uint64_t value;     /* that clock's value */
	int64_t offset;     /* CLOCK_MONOTONIC less that clock, from the snapshot */
};

/* A slice open on a track; its name and metadata blob in the track's text. */
struct rd_open {
	uint64_t start, counter, self_counter;
	bool skip, has_counter, has_self_counter;
	unsigned flags;
	size_t text_off, name_len, meta_len;
};

struct rd_track {
	struct rd_open *open;
	size_t nopen, cap;
	uint32_t overflow; /* BEGINs past LP_PFTRACE_READ_DEPTH, whose ENDs are not pairs */
	struct lp_buf text;
};

/* The fixed part of a span in the spool; its name and metadata follow. */
struct rd_rec {
	uint64_t uuid, start, dur, counter, self_counter;
	uint32_t flags; /* LP_SPAN_*; bit 31: has a counter, bit 30: a self counter */
	uint32_t name_len, meta_len;
};

struct reader {
	const struct lp_tr_sink *sink;
	struct lp_tr_stats st;
	struct rd_seq *seqs;
	size_t nseqs, seqs_cap;
	struct lp_map seq_of;   /* (id, 0) -> index + 1 */
	struct rd_track *tracks;
	size_t ntracks, tracks_cap;
	struct lp_map track_of; /* (uuid, 0) -> index + 1 */
	struct lp_map interned; /* (seq << 32 | gen << 8 | field, iid) -> arena offset + 1, len */
	struct lp_buf arena;
	struct lp_map threads;  /* (uuid, 0) -> pid << 32 | tid, from the thread descriptors */
	struct lp_buf names;    /* process?, pid, tid, length, then the name; one after another */
	char *other;            /* otherData's text */
	struct lp_buf inflated, packet, rec;
	struct lp_spool spool;  /* the spans, as they end */
};

static int put(struct lp_buf *b, const void *p, size_t n)
{
	return p ? lp_buf_put(b, (const char *)p, n) : lp_buf_put(b, "", 0);
}

/* ---- the first pass: packets ---- */

static struct rd_seq *seq_of(struct reader *r, uint32_t id)
{
	struct lp_map_ent *e = lp_map_find(&r->seq_of, id, 0, true);
	struct rd_seq *s;

	if (!e)
		return NULL;
	if (e->v1)
		return &r->seqs[e->v1 - 1];
	s = lp_grow(r->seqs, &r->seqs_cap, r->nseqs + 1, sizeof(*s));
	if (!s)
		return NULL;
	r->seqs = s;
	r->seqs[r->nseqs] = (struct rd_seq){ 0 };
	e->v1 = ++r->nseqs;
	return &r->seqs[r->nseqs - 1];
}

static struct rd_track *track_of(struct reader *r, uint64_t uuid)
{
	struct lp_map_ent *e = lp_map_find(&r->track_of, uuid, 0, true);
	struct rd_track *t;

	if (!e)
		return NULL;
	if (e->v1)
		return &r->tracks[e->v1 - 1];
	t = lp_grow(r->tracks, &r->tracks_cap, r->ntracks + 1, sizeof(*t));
	if (!t)
		return NULL;
	r->tracks = t;
	r->tracks[r->ntracks] = (struct rd_track){ 0 };
	e->v1 = ++r->ntracks;
	return &r->tracks[r->ntracks - 1];
}

static uint64_t intern_key(uint32_t seq, const struct rd_seq *s, uint32_t field)
{
	return (uint64_t)seq << 32 | (uint64_t)(s->gen & 0xffffff) << 8 | (field & 0xff);
}

/* InternedData: each entry {iid, text} of the fields we use, kept for the sequence. */
static int interned_data(struct reader *r, uint32_t seq, struct rd_seq *s, struct pb_field *f)
{
	struct pb_cur c = { f->data, f->data + f->len };
	struct pb_field e;
	int n;

	while ((n = pb_next(&c, &e)) == 1) {
		struct pb_cur ec = { e.data, e.data + e.len };
		struct pb_field g;
		uint64_t iid = 0;
		const uint8_t *text = NULL;
		size_t len = 0;
		struct lp_map_ent *m;

		if (e.wire != PB_LEN || (e.num != PF_ID_CATEGORIES && e.num != PF_ID_NAMES &&
					 e.num != PF_ID_ARG_NAMES && e.num != PF_ID_ARG_STRINGS))
			continue;
		while ((n = pb_next(&ec, &g)) == 1) {
			if (g.num == PF_IE_IID && g.wire == PB_VARINT)
				iid = g.v;
			else if (g.num == PF_IE_TEXT && g.wire == PB_LEN)
				text = g.data, len = g.len;
		}
		if (n < 0 || !iid || !text)
			return -EBADMSG;
		if (r->arena.len + len > LP_PFTRACE_READ_INTERN_MAX)
			return -EFBIG;
		m = lp_map_find(&r->interned, intern_key(seq, s, e.num), (uint32_t)iid, true);
		if (!m || put(&r->arena, text, len))
			return -ENOMEM;
		m->v1 = r->arena.len - len + 1;
		m->v2 = len;
	}
	return n < 0 ? -EBADMSG : 0;
}

/* The text of iid in field's table on the sequence; NULL when not interned there. */
static const char *lookup(struct reader *r, uint32_t seq, const struct rd_seq *s, uint32_t field,
			  uint64_t iid, size_t *len)
{
	struct lp_map_ent *m = iid <= UINT32_MAX ? lp_map_find(&r->interned,
							       intern_key(seq, s, field),
							       (uint32_t)iid, false)
						 : NULL;

	if (!m)
		return NULL;
	*len = (size_t)m->v2;
	return r->arena.p + m->v1 - 1;
}

static int defaults(struct rd_seq *s, struct pb_field *f)
{
	struct pb_cur c = { f->data, f->data + f->len }, tc;
	struct pb_field g, h;
	int n;

	while ((n = pb_next(&c, &g)) == 1) {
		if (g.num == PF_TP_CLOCK_ID && g.wire == PB_VARINT)
			s->def_clock = (uint32_t)g.v;
		if (g.num != PF_TPD_TRACK_EVENT || g.wire != PB_LEN)
			continue;
		tc = (struct pb_cur){ g.data, g.data + g.len };
		while ((n = pb_next(&tc, &h)) == 1)
			if (h.num == PF_TED_TRACK_UUID && h.wire == PB_VARINT)
				s->def_uuid = h.v;
		if (n < 0)
			return -EBADMSG;
	}
	return n < 0 ? -EBADMSG : 0;
}

/* A ClockSnapshot: the sequence's own clock from here on, and its offset to CLOCK_MONOTONIC. */
static int clock_snapshot(struct rd_seq *s, struct pb_field *f)
{
	struct pb_cur c = { f->data, f->data + f->len };
	struct pb_field g;
	uint64_t mono = 0, own = 0;
	bool have_mono = false, have_own = false;
	int n;

	while ((n = pb_next(&c, &g)) == 1) {
		struct pb_cur cc = { g.data, g.data + g.len };
		struct pb_field h;
		uint64_t id = 0, ts = 0, incr = 0;

		if (g.num != PF_CS_CLOCKS || g.wire != PB_LEN)
			continue;
		while ((n = pb_next(&cc, &h)) == 1) {
			if (h.wire != PB_VARINT)
				continue;
			if (h.num == PF_CLK_ID)
				id = h.v;
			else if (h.num == PF_CLK_TIMESTAMP)
				ts = h.v;
			else if (h.num == PF_CLK_INCREMENTAL)
				incr = h.v;
		}
		if (n < 0)
			return -EBADMSG;
		if (id == LP_PFTRACE_CLOCK_MONOTONIC) {
			mono = ts;
			have_mono = true;
		} else if (id >= 64 && id < 128) {
			s->clock = (uint32_t)id;
			s->incremental = incr != 0;
			s->value = own = ts;
			have_own = true;
		}
	}
	if (n < 0)
		return -EBADMSG;
	s->offset = have_mono && have_own ? (int64_t)(mono - own) : 0;
	return 0;
}

/* The packet's absolute CLOCK_MONOTONIC time; false when on a clock we do not know. */
static bool packet_time(struct rd_seq *s, uint32_t clock, uint64_t ts, uint64_t *out)
{
	if (!clock)
		clock = s->def_clock;
	if (!clock || clock == LP_PFTRACE_CLOCK_MONOTONIC) {
		*out = ts;
		return true;
	}
	if (clock != s->clock)
		return false;
	s->value = s->incremental ? s->value + ts : ts;
	*out = s->value + (uint64_t)s->offset;
	return true;
}

static bool text_is(const char *s, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(s, lit, len);
}

/* One DebugAnnotation: a string item into the blob, or one of the profiler's own. */
static int annotation(struct reader *r, uint32_t seq, struct rd_seq *s, struct pb_field *f,
		      struct rd_open *o, struct lp_buf *blob)
{
	struct pb_cur c = { f->data, f->data + f->len };
	struct pb_field g;
	const char *key = NULL, *str = NULL;
	size_t klen = 0, slen = 0;
	bool is_uint = false, is_bool = false;
	uint64_t v = 0;
	int n;

	while ((n = pb_next(&c, &g)) == 1) {
		if (g.num == PF_DA_NAME_IID && g.wire == PB_VARINT)
			key = lookup(r, seq, s, PF_ID_ARG_NAMES, g.v, &klen);
		else if (g.num == PF_DA_NAME && g.wire == PB_LEN)
			key = (const char *)g.data, klen = g.len;
		else if (g.num == PF_DA_STRING_IID && g.wire == PB_VARINT)
			str = lookup(r, seq, s, PF_ID_ARG_STRINGS, g.v, &slen);
		else if (g.num == PF_DA_STRING && g.wire == PB_LEN)
			str = (const char *)g.data, slen = g.len;
		else if (g.num == PF_DA_UINT && g.wire == PB_VARINT)
			is_uint = true, v = g.v;
		else if (g.num == PF_DA_BOOL && g.wire == PB_VARINT)
			is_bool = true, v = g.v;
	}
	if (n < 0 || !key)
		return -EBADMSG;
	if (str) {
		int err = lp_tr_meta_put(blob, key, klen);

		return err ? err : lp_tr_meta_put(blob, str, slen);
	}
	if (is_uint && text_is(key, klen, "counter")) {
		o->has_counter = true;
		o->counter = v;
	} else if (is_uint && text_is(key, klen, "self_counter")) {
		o->has_self_counter = true;
		o->self_counter = v;
	} else if (is_bool && v) {
		if (text_is(key, klen, "unterminated"))
			o->flags |= LP_SPAN_UNTERMINATED;
		else if (text_is(key, klen, "uncertain"))
			o->flags |= LP_SPAN_UNCERTAIN;
		else if (text_is(key, klen, "started_before_recording"))
			o->flags |= LP_SPAN_STARTED_BEFORE;
	}
	return 0;
}

/* A BEGIN: its name, category and arguments onto its track's stack. */
static int slice_begin(struct reader *r, uint32_t seq, struct rd_seq *s, struct rd_track *t,
		       struct pb_cur c, uint64_t ts)
{
	struct rd_open o = { .start = ts, .text_off = t->text.len };
	struct lp_buf blob = { 0 };
	struct pb_field g;
	const char *name = "";
	size_t nlen = 0, clen;
	int n, err = 0;

	if (t->nopen >= LP_PFTRACE_READ_DEPTH) {
		t->overflow++;
		r->st.skipped++;
		return 0;
	}
	while (!err && (n = pb_next(&c, &g)) == 1) {
		const char *cat;

		if (g.num == PF_TE_NAME_IID && g.wire == PB_VARINT) {
			name = lookup(r, seq, s, PF_ID_NAMES, g.v, &nlen);
			if (!name)
				err = -EBADMSG; /* (the blob is freed below) */
		} else if (g.num == PF_TE_NAME && g.wire == PB_LEN) {
			name = (const char *)g.data, nlen = g.len;
		} else if (g.num == PF_TE_CATEGORY_IIDS && g.wire == PB_VARINT) {
			/* As the JSON reader: a slice of another category (off-cpu) is no span. */
			cat = lookup(r, seq, s, PF_ID_CATEGORIES, g.v, &clen);
			o.skip |= !cat || !text_is(cat, clen, "span");
		} else if (g.num == PF_TE_ANNOTATIONS && g.wire == PB_LEN) {
			err = annotation(r, seq, s, &g, &o, &blob);
		}
	}
	if (!err && n < 0)
		err = -EBADMSG;
	o.name_len = nlen;
	o.meta_len = blob.len;
	if (!err && (put(&t->text, name, nlen) || put(&t->text, blob.p, blob.len)))
		err = -ENOMEM;
	if (!err) {
		struct rd_open *p = lp_grow(t->open, &t->cap, t->nopen + 1, sizeof(*p));

		if (!p)
			err = -ENOMEM;
		else
			(t->open = p)[t->nopen++] = o;
	}
	lp_buf_free(&blob);
	return err;
}

/* An END: the slice it closes, a span into the temporary file (not another category's). */
static int slice_end(struct reader *r, uint64_t uuid, struct rd_track *t, uint64_t ts)
{
	struct rd_open *o;
	struct rd_rec rec;

	if (t->overflow) {
		t->overflow--;
		return 0;
	}
	if (!t->nopen) {
		r->st.skipped++; /* an END without a BEGIN */
		return 0;
	}
	o = &t->open[--t->nopen];
	if (!o->skip) {
		rec = (struct rd_rec){ uuid, o->start, ts > o->start ? ts - o->start : 0,
				       o->counter, o->self_counter,
				       o->flags | (o->has_counter ? 1u << 31 : 0) |
					       (o->has_self_counter ? 1u << 30 : 0),
				       (uint32_t)o->name_len, (uint32_t)o->meta_len };
		int err;

		r->rec.len = 0;
		if (put(&r->rec, &rec, sizeof(rec)) ||
		    put(&r->rec, t->text.p + o->text_off, o->name_len + o->meta_len))
			return -ENOMEM;
		err = lp_spool_put(&r->spool, r->rec.p, r->rec.len);
		if (err)
			return err;
	}
	t->text.len = o->text_off;
	return 0;
}

static int track_event(struct reader *r, uint32_t seq, struct rd_seq *s, struct pb_field *f,
		       uint64_t ts)
{
	struct pb_cur c = { f->data, f->data + f->len };
	struct pb_field g;
	uint64_t type = 0, uuid = s->def_uuid;
	struct rd_track *t;
	int n;

	while ((n = pb_next(&c, &g)) == 1) {
		if (g.num == PF_TE_TYPE && g.wire == PB_VARINT)
			type = g.v;
		else if (g.num == PF_TE_TRACK_UUID && g.wire == PB_VARINT)
			uuid = g.v;
	}
	if (n < 0)
		return -EBADMSG;
	if (type != PF_TYPE_BEGIN && type != PF_TYPE_END) {
		r->st.skipped++; /* instants, counters: not spans */
		return 0;
	}
	t = track_of(r, uuid);
	if (!t)
		return -ENOMEM;
	if (type == PF_TYPE_END)
		return slice_end(r, uuid, t, ts);
	return slice_begin(r, seq, s, t, (struct pb_cur){ f->data, f->data + f->len }, ts);
}

/* A track's descriptor: the name of its process or thread (a keyed track's own). */
static int descriptor(struct reader *r, struct pb_field *f)
{
	struct pb_cur c = { f->data, f->data + f->len };
	struct pb_field g;
	uint64_t uuid = 0, pid = 0, tid = 0;
	const uint8_t *name = NULL, *own = NULL;
	size_t len = 0, own_len = 0;
	bool process = false, thread = false;
	int n;

	while ((n = pb_next(&c, &g)) == 1) {
		struct pb_cur dc = { g.data, g.data + g.len };
		struct pb_field h;

		if (g.num == PF_TD_UUID && g.wire == PB_VARINT) {
			uuid = g.v;
		} else if (g.num == PF_TD_NAME && g.wire == PB_LEN) {
			own = g.data, own_len = g.len;
		} else if ((g.num == PF_TD_PROCESS || g.num == PF_TD_THREAD) && g.wire == PB_LEN) {
			process = g.num == PF_TD_PROCESS;
			thread = !process;
			while ((n = pb_next(&dc, &h)) == 1) {
				if (h.num == PF_PD_PID && h.wire == PB_VARINT)
					pid = h.v;
				else if (thread && h.num == PF_THD_TID && h.wire == PB_VARINT)
					tid = h.v;
				else if (h.wire == PB_LEN && h.num == (process ? PF_PD_NAME
										 : PF_THD_NAME))
					name = h.data, len = h.len;
			}
			if (n < 0)
				return -EBADMSG;
		}
	}
	if (n < 0)
		return -EBADMSG;
	if (!process && !thread) {
		/* A keyed-span track: its thread is in its uuid (pftrace.h). */
		pid = uuid >> 32;
		tid = uuid & 0xffffffffu;
		name = own, len = own_len;
	}
	if (process)
		tid = pid;
	if (thread || (!process && !thread)) {
		struct lp_map_ent *e = lp_map_find(&r->threads, uuid, 0, true);

		if (!e)
			return -ENOMEM;
		e->v1 = (pid & 0xffffffffu) << 32 | (tid & 0xffffffffu);
		e->v2 = 1;
	}
	if (!name)
		return 0;
	{
		uint32_t head[4] = { process, (uint32_t)pid, (uint32_t)tid, (uint32_t)len };

		return put(&r->names, head, sizeof(head)) || put(&r->names, name, len) ? -ENOMEM : 0;
	}
}

static int attributes(struct reader *r, struct pb_field *f)
{
	struct pb_cur c = { f->data, f->data + f->len };
	struct pb_field g;
	int n;

	while ((n = pb_next(&c, &g)) == 1) {
		struct pb_cur ac = { g.data, g.data + g.len };
		struct pb_field h;
		const uint8_t *key = NULL, *val = NULL;
		size_t klen = 0, vlen = 0;

		if (g.num != PF_TA_ATTRIBUTE || g.wire != PB_LEN)
			continue;
		while ((n = pb_next(&ac, &h)) == 1) {
			if (h.num == PF_TAA_KEY && h.wire == PB_LEN)
				key = h.data, klen = h.len;
			else if (h.num == PF_TAA_STRING && h.wire == PB_LEN)
				val = h.data, vlen = h.len;
		}
		if (n < 0)
			return -EBADMSG;
		if (key && val && text_is((const char *)key, klen, LP_PFTRACE_OTHER_DATA_KEY)) {
			free(r->other);
			r->other = strndup((const char *)val, vlen);
			if (!r->other)
				return -ENOMEM;
		}
	}
	return n < 0 ? -EBADMSG : 0;
}

static int packets(struct reader *r, const uint8_t *p, size_t len, int depth);

/* One TracePacket: what the sequence keeps, then its event or descriptor. */
static int packet(struct reader *r, const uint8_t *p, size_t len, int depth)
{
	struct pb_cur c = { p, p + len };
	struct pb_field g, ev = { 0 }, cs = { 0 }, defs = { 0 }, interned = { 0 };
	uint64_t seq = 0, flags = 0, ts = 0, clock = 0;
	bool has_ts = false;
	struct rd_seq *s;
	int n, err = 0;

	r->st.lines++;
	while ((n = pb_next(&c, &g)) == 1) {
		bool message = g.num == PF_TP_TRACK_EVENT || g.num == PF_TP_CLOCK_SNAPSHOT ||
			       g.num == PF_TP_DEFAULTS || g.num == PF_TP_INTERNED ||
			       g.num == PF_TP_TRACK_DESCRIPTOR || g.num == PF_TP_ATTRIBUTES ||
			       g.num == PF_TP_COMPRESSED;

		if (message != (g.wire == PB_LEN) && g.num <= PF_TP_ATTRIBUTES &&
		    (message || g.num == PF_TP_SEQ_ID || g.num == PF_TP_SEQ_FLAGS ||
		     g.num == PF_TP_TIMESTAMP || g.num == PF_TP_CLOCK_ID))
			return -EBADMSG; /* one of our fields, of another wire type */
		switch (g.num) {
		case PF_TP_SEQ_ID: seq = g.v; break;
		case PF_TP_SEQ_FLAGS: flags = g.v; break;
		case PF_TP_TIMESTAMP: ts = g.v, has_ts = true; break;
		case PF_TP_CLOCK_ID: clock = g.v; break;
		case PF_TP_TRACK_EVENT: ev = g; break;
		case PF_TP_CLOCK_SNAPSHOT: cs = g; break;
		case PF_TP_DEFAULTS: defs = g; break;
		case PF_TP_INTERNED: interned = g; break;
		case PF_TP_TRACK_DESCRIPTOR: err = descriptor(r, &g); break;
		case PF_TP_ATTRIBUTES: err = attributes(r, &g); break;
		case PF_TP_COMPRESSED:
			/* Compressed packets hold packets, never more compressed ones. */
			if (depth)
				return -EBADMSG;
			return packets(r, g.data, g.len, depth + 1);
		}
		if (err)
			return err;
	}
	if (n < 0 || seq > UINT32_MAX)
		return -EBADMSG;
	s = seq_of(r, (uint32_t)seq);
	if (!s)
		return -ENOMEM;
	/* In the order the trace processor takes them: clear, defaults, interned data, clock. */
	if (flags & PF_SEQ_CLEARED) {
		s->gen++;
		s->clock = 0;
	}
	if (defs.data && (err = defaults(s, &defs)))
		return err;
	if (interned.data && (err = interned_data(r, (uint32_t)seq, s, &interned)))
		return err;
	if (cs.data)
		return clock_snapshot(s, &cs);
	if (!ev.data)
		return 0;
	if (!has_ts || !packet_time(s, (uint32_t)clock, ts, &ts)) {
		r->st.skipped++;
		return 0;
	}
	return track_event(r, (uint32_t)seq, s, &ev, ts);
}

/* An inflated compressed_packets: a Trace's packets. */
static int packets(struct reader *r, const uint8_t *p, size_t len, int depth)
{
	z_stream z = { 0 };
	struct pb_cur c;
	struct pb_field g;
	int zerr, n, err = 0;

	r->inflated.len = 0;
	if (inflateInit(&z) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)len;
	do {
		char *np = lp_grow(r->inflated.p, &r->inflated.cap, r->inflated.len + 65536, 1);

		if (!np) {
			err = -ENOMEM;
			break;
		}
		r->inflated.p = np;
		z.next_out = (Bytef *)r->inflated.p + r->inflated.len;
		z.avail_out = (uInt)(r->inflated.cap - r->inflated.len);
		zerr = inflate(&z, Z_NO_FLUSH);
		r->inflated.len = r->inflated.cap - z.avail_out;
		if (r->inflated.len > LP_PFTRACE_READ_PACKET_MAX)
			err = -EFBIG;
		else if (zerr != Z_OK && zerr != Z_STREAM_END)
			err = zerr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
	} while (!err && zerr != Z_STREAM_END);
	inflateEnd(&z);
	if (err)
		return err;
	c = (struct pb_cur){ (const uint8_t *)r->inflated.p,
			     (const uint8_t *)r->inflated.p + r->inflated.len };
	while ((n = pb_next(&c, &g)) == 1) {
		if (g.num != PF_TRACE_PACKET || g.wire != PB_LEN)
			return -EBADMSG;
		err = packet(r, g.data, g.len, depth);
		if (err)
			return err;
	}
	return n < 0 ? -EBADMSG : 0;
}

/* The file, packet by packet, each read whole (at most LP_PFTRACE_READ_PACKET_MAX). */
static int first_pass(struct reader *r, int fd)
{
	uint8_t head[1 + PB_VARINT_MAX];
	off_t pos = 0;

	for (;;) {
		ssize_t got = pread(fd, head, sizeof(head), pos);
		struct pb_cur c = { head, head + (got > 0 ? got : 0) };
		uint64_t key, len;
		char *np;
		int err;

		if (got < 0)
			return -errno;
		if (got == 0)
			return 0;
		if (pb_read_varint(&c, &key) || key != pb_tag(PF_TRACE_PACKET, PB_LEN) ||
		    pb_read_varint(&c, &len))
			return -EBADMSG;
		if (len > LP_PFTRACE_READ_PACKET_MAX)
			return -EFBIG;
		pos += c.p - head;
		np = lp_grow(r->packet.p, &r->packet.cap, len + 1, 1);
		if (!np)
			return -ENOMEM;
		r->packet.p = np;
		got = pread(fd, r->packet.p, len, pos);
		if (got < 0)
			return -errno;
		if ((uint64_t)got != len)
			return -EBADMSG; /* cut short */
		pos += (off_t)len;
		err = packet(r, (const uint8_t *)r->packet.p, len, 0);
		if (err)
			return err;
	}
}

/* ---- the second pass: otherData, names, then the spans from the last ended ---- */

static int emit_names(struct reader *r)
{
	size_t pos = 0;

	while (pos + 16 <= r->names.len) {
		uint32_t head[4];
		int err;

		memcpy(head, r->names.p + pos, sizeof(head));
		pos += sizeof(head);
		err = r->sink->thread_name ? r->sink->thread_name(r->sink->ctx, head[0], head[1],
								  head[2], r->names.p + pos,
								  head[3])
					   : 0;
		if (err)
			return err;
		pos += head[3];
	}
	return 0;
}

static int emit_other(struct reader *r, uint64_t *base)
{
	json_object *o = r->other ? json_tokener_parse(r->other) : NULL, *v;
	int err;

	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	*base = o && json_object_object_get_ex(o, "base_ns", &v) ? (uint64_t)json_object_get_int64(v)
								 : 0;
	err = r->sink->other_data ? r->sink->other_data(r->sink->ctx, o) : 0;
	json_object_put(o);
	return err;
}

static int emit_span(struct reader *r, const void *p, uint64_t base)
{
	struct rd_rec rec;
	struct lp_tr_span s = { 0 };
	struct lp_map_ent *e;

	memcpy(&rec, p, sizeof(rec));
	e = lp_map_find(&r->threads, rec.uuid, 0, false);
	s.pid = (uint32_t)((e ? e->v1 : rec.uuid) >> 32);
	s.tid = (uint32_t)(e ? e->v1 : rec.uuid);
	/* As the JSON trace's ts: from the recording's start, 0 for a span that began before it. */
	s.start_ns = rec.start > base ? rec.start - base : 0;
	s.dur_ns = rec.dur;
	s.name = (const char *)p + sizeof(rec);
	s.name_len = rec.name_len;
	s.meta = s.name + rec.name_len;
	s.meta_len = rec.meta_len;
	s.counter = rec.counter;
	s.has_counter = rec.flags >> 31;
	s.self_counter = rec.self_counter;
	s.has_self_counter = rec.flags >> 30 & 1;
	s.flags = rec.flags & ~(3u << 30);
	r->st.spans++;
	return r->sink->span ? r->sink->span(r->sink->ctx, &s) : 0;
}

/* The spool's spans from the last to end. */
static int second_pass(struct reader *r)
{
	uint64_t base;
	const void *rec;
	size_t len;
	int err = emit_other(r, &base), n;

	if (!err)
		err = emit_names(r);
	if (!err)
		err = lp_spool_rewind(&r->spool);
	while (!err && (n = lp_spool_prev(&r->spool, &rec, &len)) == 1) {
		if (len < sizeof(struct rd_rec))
			return -EIO;
		err = emit_span(r, rec, base);
	}
	return err ? err : n;
}

/* ---- the file ---- */

static void reader_free(struct reader *r)
{
	free(r->seqs);
	lp_map_free(&r->seq_of);
	for (size_t i = 0; i < r->ntracks; i++) {
		free(r->tracks[i].open);
		lp_buf_free(&r->tracks[i].text);
	}
	free(r->tracks);
	lp_map_free(&r->track_of);
	lp_map_free(&r->interned);
	lp_map_free(&r->threads);
	lp_buf_free(&r->arena);
	lp_buf_free(&r->names);
	lp_buf_free(&r->inflated);
	lp_buf_free(&r->packet);
	lp_buf_free(&r->rec);
	free(r->other);
	lp_spool_close(&r->spool);
}

bool lp_pftrace_is(const char *path)
{
	unsigned char head[1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool is = fd >= 0 && read(fd, head, 1) == 1 && head[0] == pb_tag(PF_TRACE_PACKET, PB_LEN);

	if (fd >= 0)
		close(fd);
	return is;
}

int lp_pftrace_read(const char *path, const struct lp_tr_sink *sink, struct lp_tr_stats *stats)
{
	struct reader r = { .sink = sink, .spool = { .fd = -1 } };
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	/* No output of this command may replace it (lp_outfile_openat refuses). */
	err = lp_outfile_input_fd(fd, path);
	if (!err)
		err = lp_spool_open(&r.spool);
	if (!err)
		err = first_pass(&r, fd);
	close(fd);
	if (!err)
		err = second_pass(&r);
	if (stats)
		*stats = r.st;
	reader_free(&r);
	return err;
}

int lp_read_any_trace(const char *path, const struct lp_tr_sink *sink, struct lp_tr_stats *stats)
{
	return lp_pftrace_is(path) ? lp_pftrace_read(path, sink, stats)
				   : lp_trace_read(path, sink, stats);
}
