// SPDX-License-Identifier: MIT
#include "decode.h"

#include <errno.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/wire.h"
#include "map.h"
#include "text.h"

/*
 * Every event looks up its thread and its literals: small direct-mapped
 * caches in front of the maps answer most of them.
 */
#define RECENT_LITERALS 4096
#define RECENT_THREADS 64

struct recent_literal {
	uint64_t key;
	uint32_t pid;
	uint32_t id1; /* string id + 1; 0: empty */
};

struct recent_thread {
	uint64_t key;             /* (pid << 32) | tid */
	struct lp_map_ent *e;     /* in threads: valid until the map's next create */
};

struct lp_decoder {
	struct strtab *st;
	struct recent_literal recent_lit[RECENT_LITERALS];
	struct recent_thread recent_th[RECENT_THREADS];
	struct lp_decode_sink sink;
	struct lp_decode_stats stats;
	struct lp_map literals; /* (addr, pid) -> string id */
	struct lp_map threads; /* (pid, tid) -> v1: next seq, v2: 1 once one arrived */
	struct lp_map names;    /* (pid, tid) -> comm id, pcomm id */
	struct lp_buf tmp;
	uint32_t id_null, id_unreadable, id_unknown;
	/*
	 * Span-pair string arguments read from their file (LP_STR_USDT), for the
	 * probe record that follows them: its thread and seq, the text's id + 1.
	 */
	struct {
		uint32_t pid, tid, seq, id1;
	} usdt_file[LP_USDT_STR_SLOTS];
	uint64_t file_since[LP_MAX_FILES];
};

struct lp_decoder *lp_decoder_new(struct strtab *st, const struct lp_decode_sink *sink)
{
	struct lp_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->st = st;
	d->sink = *sink;
	d->id_null = strtab_intern(st, "(null)", 6);
	d->id_unreadable = strtab_intern(st, "(unreadable)", 12);
	d->id_unknown = strtab_intern(st, "(unknown)", 9);
	if (d->id_null == UINT32_MAX || d->id_unreadable == UINT32_MAX ||
	    d->id_unknown == UINT32_MAX) {
		free(d);
		return NULL;
	}
	return d;
}

void lp_decoder_free(struct lp_decoder *d)
{
	if (!d)
		return;
	lp_map_free(&d->literals);
	lp_map_free(&d->threads);
	lp_map_free(&d->names);
	lp_buf_free(&d->tmp);
	free(d);
}

const struct lp_decode_stats *lp_decoder_stats(const struct lp_decoder *d)
{
	return &d->stats;
}

/* Every id a map value holds, stored as id + 1 (0: none). */
static void mark_map(const struct lp_map *m, struct strtab *st)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->e[i].used)
			continue;
		if (m->e[i].v1)
			strtab_mark(st, (uint32_t)(m->e[i].v1 - 1));
		if (m->e[i].v2)
			strtab_mark(st, (uint32_t)(m->e[i].v2 - 1));
	}
}

void lp_decoder_mark(const struct lp_decoder *d, struct strtab *st)
{
	strtab_mark(st, d->id_null);
	strtab_mark(st, d->id_unreadable);
	strtab_mark(st, d->id_unknown);
	/* literals: the text in v1 (v2 stays 0); names: comm in v1, pcomm in v2. */
	mark_map(&d->literals, st);
	mark_map(&d->names, st);
	/* The cache follows the map, but is read first: its ids must be the map's, alive. */
	for (size_t i = 0; i < RECENT_LITERALS; i++)
		if (d->recent_lit[i].id1)
			strtab_mark(st, d->recent_lit[i].id1 - 1);
	for (size_t i = 0; i < LP_USDT_STR_SLOTS; i++)
		if (d->usdt_file[i].id1)
			strtab_mark(st, d->usdt_file[i].id1 - 1);
}

/* True when s[0..len) starts a UTF-8 sequence that continues past len. */
static bool cut_sequence(const unsigned char *s, size_t len)
{
	size_t need = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 1;

	if (need == 1 || s[0] > 0xf4 || len >= need)
		return false;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return false;
	return true;
}

/*
 * The string id of text the kernel read: len is the read's result (see
 * wire.h), avail the bytes actually present in the record.
 */
static uint32_t text_id(struct lp_decoder *d, const char *s, long len, size_t avail, size_t limit,
			bool is_null)
{
	size_t n;

	if (is_null)
		return d->id_null;
	if (len < 0) {
		d->stats.unreadable++;
		return d->id_unreadable;
	}
	n = (size_t)len < avail ? (size_t)len : avail;
	/* The kernel reads C strings: a record claiming bytes past a NUL ends there. */
	n = strnlen(s, n);
	if ((size_t)len > limit && n >= limit) {
		/* Cut to the limit without splitting a UTF-8 sequence, then mark the cut. */
		size_t i = 0;

		n = n < limit ? n : limit;
		while (i < n) {
			size_t k = lp_utf8_seq((const unsigned char *)s + i, n - i);

			if (k == 0) {
				/* A character the cut splits goes whole. */
				if (cut_sequence((const unsigned char *)s + i, n - i))
					break;
				/* Invalid byte: kept as is, the writers replace it. */
				k = 1;
			}
			i += k;
		}
		d->tmp.len = 0;
		if (lp_buf_put(&d->tmp, s, i) || lp_buf_put(&d->tmp, "\xe2\x80\xa6", 3))
			return UINT32_MAX;
		d->stats.truncated++;
		return strtab_intern(d->st, d->tmp.p, d->tmp.len);
	}
	return strtab_intern(d->st, s, n);
}

static struct recent_literal *recent_literal(struct lp_decoder *d, uint64_t key, uint32_t pid)
{
	/* Fibonacci hashing: the top bits of one multiply (12 bits: RECENT_LITERALS). */
	return &d->recent_lit[((key ^ pid) * 0x9e3779b97f4a7c15ULL) >> 52];
}

/*
 * A span-pair probe's string argument the kernel could not read (LP_STR_USDT):
 * read from the file it lies in now, kept for its slot of the probe's record,
 * which comes next. Unreadable when the file cannot give it.
 */
static int decode_usdt_string(struct lp_decoder *d, const struct lp_rec_string *r)
{
	char buf[LP_USDT_STR_BUF];
	size_t want = r->usdt_max < LP_USDT_STR_MAX + 1 ? r->usdt_max : LP_USDT_STR_MAX + 1;
	long n = -ENOENT;
	uint32_t id;

	if (r->usdt_slot >= LP_USDT_STR_SLOTS)
		return 0; /* names no slot: the probe's slot stays unreadable */
	if ((r->h.flags & LP_STR_IN_FILE) && d->sink.file_text && want)
		n = d->sink.file_text(d->sink.ctx, r->file_dev, r->file_ino, r->file_off, buf,
				      want + 1);
	if (n >= 0)
		d->stats.from_file++;
	id = text_id(d, buf, n >= 0 ? n : -EFAULT, n >= 0 ? (size_t)n : 0, LP_USDT_STR_MAX,
		     false);
	if (id == UINT32_MAX)
		return -ENOMEM;
	d->usdt_file[r->usdt_slot].pid = r->h.pid;
	d->usdt_file[r->usdt_slot].tid = r->h.tid;
	d->usdt_file[r->usdt_slot].seq = r->h.seq;
	d->usdt_file[r->usdt_slot].id1 = id + 1;
	return 0;
}

/* Slot i of a probe record that says LP_USDT_STR_IN_FILE: the text read before, if it is its. */
static uint32_t usdt_file_text(struct lp_decoder *d, const struct lp_rec_usdt *r, uint32_t i)
{
	if (d->usdt_file[i].id1 && d->usdt_file[i].pid == r->h.pid &&
	    d->usdt_file[i].tid == r->h.tid && d->usdt_file[i].seq == r->h.seq)
		return d->usdt_file[i].id1 - 1;
	/* Its string record did not arrive (lost, or malformed). */
	d->stats.unreadable++;
	return d->id_unreadable;
}

static int decode_string(struct lp_decoder *d, const struct lp_rec_string *r, size_t size)
{
	const char *text = (const char *)(r + 1);
	size_t avail = size - sizeof(*r);
	struct lp_map_ent *e;
	uint32_t id;

	bool is_meta = r->h.flags & LP_STR_META;
	size_t limit = is_meta ? LP_META_MAX : LP_NAME_MAX;
	uint64_t key = LP_LIT_KEY(r->addr, is_meta);
	long len = r->len;
	char buf[LP_META_BUF];

	if (r->h.flags & LP_STR_USDT)
		return decode_usdt_string(d, r);
	/*
	 * Not in memory yet, but in a read-only file mapping: the file holds it.
	 * Or where it is could not be looked up: in the file of its marker, if anywhere.
	 */
	if (len < 0) {
		long n = -ENOENT;

		if ((r->h.flags & LP_STR_IN_FILE) && d->sink.file_text)
			n = d->sink.file_text(d->sink.ctx, r->file_dev, r->file_ino, r->file_off,
					      buf, limit + 2);
		else if ((r->h.flags & LP_STR_AT_SITE) && d->sink.site_text)
			n = d->sink.site_text(d->sink.ctx, r->file, r->file_off, r->addr, buf,
					      limit + 2);
		if (n >= 0) {
			text = buf;
			len = n;
			avail = (size_t)n;
			d->stats.from_file++;
		}
	}
	id = text_id(d, text, len, avail, limit, false);
	if (id == UINT32_MAX)
		return -ENOMEM;
	e = lp_map_find(&d->literals, key, r->h.pid, true);
	if (!e)
		return -ENOMEM;
	e->v1 = id + 1;
	/* The same address may get another text (after exec): the cache follows the map. */
	*recent_literal(d, key, r->h.pid) = (struct recent_literal){ key, r->h.pid, id + 1 };
	return 0;
}

/* literal_id() when the cache does not hold it. */
static __attribute__((noinline)) uint32_t literal_id_slow(struct lp_decoder *d, uint64_t addr,
							  uint32_t pid,
							  struct recent_literal *c)
{
	struct lp_map_ent *e = lp_map_find(&d->literals, addr, pid, false);

	if (!e || !e->v1) {
		d->stats.unknown_literal++;
		return d->id_unknown;
	}
	*c = (struct recent_literal){ addr, pid, (uint32_t)e->v1 };
	return e->v1 - 1;
}

static inline uint32_t literal_id(struct lp_decoder *d, uint64_t addr, uint32_t pid)
{
	struct recent_literal *c = recent_literal(d, addr, pid);

	if (c->id1 && c->key == addr && c->pid == pid)
		return c->id1 - 1;
	return literal_id_slow(d, addr, pid, c);
}

/* thread_state() when the cache does not hold it. */
static __attribute__((noinline)) struct lp_map_ent *thread_state_slow(struct lp_decoder *d,
								       uint64_t key,
								       struct recent_thread *c)
{
	const struct lp_map_ent *was = d->threads.e;
	struct lp_map_ent *e = lp_map_find(&d->threads, key, 0, true);

	/* The table grew: every entry moved, and every cached pointer with it. */
	if (d->threads.e != was)
		memset(d->recent_th, 0, sizeof(d->recent_th));
	if (e)
		*c = (struct recent_thread){ key, e };
	return e;
}

/* The seq state of a thread: v1 the next seq expected, v2 1 once a record arrived. */
static inline struct lp_map_ent *thread_state(struct lp_decoder *d, uint32_t pid, uint32_t tid)
{
	uint64_t key = ((uint64_t)pid << 32) | tid;
	struct recent_thread *c = &d->recent_th[tid % RECENT_THREADS];

	if (c->e && c->key == key)
		return c->e;
	return thread_state_slow(d, key, c);
}

/*
 * Sequence numbers count every probe hit of the thread, delivered or not: a
 * gap is the events lost before this one. 0 or -ENOMEM.
 */
static inline int seq_lost(struct lp_decoder *d, const struct lp_rec_hdr *h, uint32_t *lost)
{
	struct lp_map_ent *t = thread_state(d, h->pid, h->tid);

	if (!t)
		return -ENOMEM;
	/*
	 * Seq 0 begins a thread's count: a new thread (maybe with the id of
	 * one that exited, its exit record lost), or a count that wrapped,
	 * where 0 was expected anyway.
	 */
	*lost = h->seq && t->v2 ? h->seq - (uint32_t)t->v1 : h->seq;
	t->v1 = h->seq + 1; /* the next one expected: wraps with seq */
	t->v2 = 1;          /* a record of this thread arrived */
	return 0;
}

/* --off-cpu: the snapshot after a record (its size checked by lp_decode). */
static void read_sched(const void *at, struct lp_sched *out)
{
	struct lp_sched_snap snap;

	memcpy(&snap, at, sizeof(snap));
	out->cpu_ns = snap.cpu_ns;
	out->runq_ns = snap.runq_ns;
	out->blocked_ns = snap.blocked_ns;
	out->steal_ns = snap.steal_ns;
	out->vcsw = snap.nvcsw;
	out->ivcsw = snap.nivcsw;
}

/* A marker's event into *ev: 1, or -ENOMEM. */
static int decode_event(struct lp_decoder *d, const struct lp_rec_event *r, size_t size,
			struct lp_event *ev)
{
	const char *text = (const char *)(r + 1);
	size_t avail = size - sizeof(*r);
	size_t name_bytes = 0;

	/* Not sched: set below when the record has it, read by no one otherwise (nest.h). */
	memset(ev, 0, offsetof(struct lp_event, sched));
	ev->type = r->h.type == LP_REC_ENTER ? LP_EVENT_ENTER : LP_EVENT_EXIT;
	ev->pid = r->h.pid;
	ev->tid = r->h.tid;
	ev->ts_ns = r->ts_ns;
	ev->counter = r->counter;
	ev->has_counter = r->h.flags & LP_EV_HAS_COUNTER;

	if (r->h.flags & LP_EV_SCHED) {
		ev->has_sched = true;
		read_sched(text, &ev->sched);
		text += sizeof(struct lp_sched_snap);
		avail -= sizeof(struct lp_sched_snap);
	}
	if (ev->type == LP_EVENT_ENTER)
		d->stats.enters++;
	else
		d->stats.exits++;
	if (LP_EV_ABI(r->h.flags) != LP_MARKER_ABI_VERSION)
		d->stats.abi_mismatch++;
	if (r->file < LP_MAX_FILES)
		ev->file_since_ns = d->file_since[r->file];
	if (r->h.flags & LP_EV_NAME_INLINE) {
		name_bytes = r->name_len > 0 ? (size_t)r->name_len : 0;
		if (name_bytes > avail)
			name_bytes = avail;
		ev->name = text_id(d, text, r->name_len, avail, LP_NAME_MAX, r->name == 0);
	} else {
		ev->name = literal_id(d, LP_LIT_KEY(r->name, false), r->h.pid);
	}
	if (r->h.flags & LP_EV_NO_META)
		ev->meta = 0;
	else if (r->h.flags & LP_EV_META_INLINE)
		ev->meta = text_id(d, text + name_bytes, r->meta_len, avail - name_bytes, LP_META_MAX,
				  false);
	else
		ev->meta = literal_id(d, LP_LIT_KEY(r->meta, true), r->h.pid);
	if (ev->name == UINT32_MAX || ev->meta == UINT32_MAX)
		return -ENOMEM;

	if (seq_lost(d, &r->h, &ev->lost_before))
		return -ENOMEM;
	return 1;
}

static int decode_usdt(struct lp_decoder *d, const struct lp_rec_usdt *r, size_t size)
{
	const char *text = (const char *)(r + 1);
	size_t avail = size - sizeof(*r);
	struct lp_usdt_event ue = {
		.pid = r->h.pid,
		.tid = r->h.tid,
		.ts_ns = r->ts_ns,
		.spec = r->spec,
		.exit = r->h.flags & (LP_USDT_EXIT | LP_USDT_ABORT),
		.abort = r->h.flags & LP_USDT_ABORT,
		.alt = r->alt,
		.nargs = r->nargs < LP_USDT_ARGS ? r->nargs : LP_USDT_ARGS,
		.nstr = r->nstr < LP_USDT_STR_SLOTS ? r->nstr : LP_USDT_STR_SLOTS,
	};

	if (r->h.flags & LP_USDT_SCHED) {
		ue.has_sched = true;
		read_sched(text, &ue.sched);
		text += sizeof(struct lp_sched_snap);
		avail -= sizeof(struct lp_sched_snap);
	}
	if (ue.exit)
		d->stats.exits++;
	else
		d->stats.enters++;
	if (r->file < LP_MAX_FILES)
		ue.file_since_ns = d->file_since[r->file];
	memcpy(ue.args, r->args, sizeof(ue.args));
	for (uint32_t i = 0; i < ue.nstr; i++) {
		size_t bytes = r->str_len[i] > 0 ? (size_t)r->str_len[i] : 0;

		if (r->str_len[i] == LP_USDT_STR_IN_FILE)
			ue.str[i] = usdt_file_text(d, r, i);
		else
			ue.str[i] = text_id(d, text, r->str_len[i], avail, LP_USDT_STR_MAX, false);
		if (ue.str[i] == UINT32_MAX)
			return -ENOMEM;
		/* The kernel copies at most LP_USDT_STR_MAX + 1 bytes of a slot. */
		if (bytes > LP_USDT_STR_MAX + 1)
			bytes = LP_USDT_STR_MAX + 1;
		if (bytes > avail)
			bytes = avail;
		text += bytes;
		avail -= bytes;
	}
	if (seq_lost(d, &r->h, &ue.lost_before))
		return -ENOMEM;
	return d->sink.usdt ? d->sink.usdt(d->sink.ctx, &ue) : 0;
}

static int set_name(struct lp_decoder *d, uint32_t pid, uint32_t tid, uint32_t comm,
		    uint32_t pcomm)
{
	struct lp_map_ent *e = lp_map_find(&d->names, ((uint64_t)pid << 32) | tid, 0, true);

	if (!e)
		return -ENOMEM;
	e->v1 = comm + 1;
	e->v2 = pcomm + 1;
	return 0;
}

static int decode_thread(struct lp_decoder *d, const struct lp_rec_thread *r)
{
	uint32_t comm, pcomm;

	comm = strtab_intern(d->st, r->comm, strnlen(r->comm, sizeof(r->comm)));
	pcomm = strtab_intern(d->st, r->pcomm, strnlen(r->pcomm, sizeof(r->pcomm)));
	if (comm == UINT32_MAX || pcomm == UINT32_MAX)
		return -ENOMEM;
	return set_name(d, r->h.pid, r->h.tid, comm, pcomm);
}

static int decode_task(struct lp_decoder *d, const struct lp_rec_task *r)
{
	struct lp_task_event te = {
		.what = r->what,
		.pid = r->h.pid,
		.tid = r->h.tid,
		.ppid = r->ppid,
		.ts_ns = r->ts_ns,
		.group_dead = r->h.flags & LP_TASK_GROUP_DEAD,
		.privileged = r->h.flags & LP_TASK_PRIVILEGED,
		.new_image = r->h.flags & LP_TASK_NEW_IMAGE,
	};
	int err;

	te.comm = strtab_intern(d->st, r->comm, strnlen(r->comm, sizeof(r->comm)));
	if (te.comm == UINT32_MAX)
		return -ENOMEM;
	/*
	 * The thread is gone: a later thread may get its id, and counts its
	 * events from 0 again.
	 */
	if (te.what == LP_TASK_EXIT) {
		struct lp_map_ent *t = lp_map_find(&d->threads, ((uint64_t)te.pid << 32) | te.tid, 0,
						   false);

		if (t)
			t->v1 = t->v2 = 0;
	}
	/* A new process or program: its name is the process name too. */
	if (te.what != LP_TASK_EXIT && te.what != LP_TASK_THREAD) {
		err = set_name(d, te.pid, te.tid, te.comm, te.comm);
		if (err)
			return err;
	}
	return d->sink.task ? d->sink.task(d->sink.ctx, &te) : 0;
}

int lp_decode(struct lp_decoder *d, const void *data, size_t size)
{
	struct lp_event ev;
	int err = lp_decode_record(d, data, size, &ev);

	if (err != 1)
		return err;
	return d->sink.event ? d->sink.event(d->sink.ctx, &ev) : 0;
}

int lp_decode_record(struct lp_decoder *d, const void *data, size_t size, struct lp_event *ev)
{
	struct lp_rec_hdr h;

	d->stats.records++;
	if (size < sizeof(h))
		goto malformed;
	memcpy(&h, data, sizeof(h));
	/* A marker's event: most records, ahead of the switch's jump table. */
	if (h.type == LP_REC_ENTER || h.type == LP_REC_EXIT) {
		if (size < sizeof(struct lp_rec_event) +
				   ((h.flags & LP_EV_SCHED) ? sizeof(struct lp_sched_snap) : 0))
			goto malformed;
		return decode_event(d, data, size, ev);
	}
	switch (h.type) {
	case LP_REC_STRING:
		if (size < sizeof(struct lp_rec_string))
			goto malformed;
		return decode_string(d, data, size);
	case LP_REC_THREAD:
		if (size < sizeof(struct lp_rec_thread))
			goto malformed;
		return decode_thread(d, data);
	case LP_REC_TASK:
		if (size < sizeof(struct lp_rec_task))
			goto malformed;
		return decode_task(d, data);
	case LP_REC_USDT:
		if (size < sizeof(struct lp_rec_usdt) +
				   ((h.flags & LP_USDT_SCHED) ? sizeof(struct lp_sched_snap) : 0))
			goto malformed;
		return decode_usdt(d, data, size);
	case LP_REC_LIBS:
		if (size < sizeof(struct lp_rec_libs))
			goto malformed;
		if (!d->sink.libs)
			return 0;
		return d->sink.libs(d->sink.ctx, h.pid, h.flags & LP_LIBS_PAUSED,
				    ((const struct lp_rec_libs *)data)->ts_ns,
				    ((const struct lp_rec_libs *)data)->start_ns);
	case LP_REC_SELF_STOP: {
		struct lp_rec_self_stop r;

		if (size < sizeof(r))
			goto malformed;
		memcpy(&r, data, sizeof(r));
		if (!d->sink.self_stop)
			return 0;
		return d->sink.self_stop(d->sink.ctx, h.pid, h.flags, r.ts_ns, r.start_ns);
	}
	case LP_REC_SCHED: {
		struct lp_rec_sched r;

		if (size < sizeof(r))
			goto malformed;
		memcpy(&r, data, sizeof(r));
		if (r.off_ns > r.wake_ns || r.wake_ns > r.on_ns)
			goto malformed;
		d->stats.sched_intervals++;
		if (!d->sink.sched)
			return 0;
		return d->sink.sched(d->sink.ctx, h.pid, h.tid, r.off_ns, r.wake_ns, r.on_ns);
	}
	}
malformed:
	d->stats.malformed++;
	return 0;
}

int lp_decoder_file_since(struct lp_decoder *d, uint32_t file, uint64_t since_ns)
{
	if (file >= LP_MAX_FILES)
		return -EINVAL;
	d->file_since[file] = since_ns;
	return 0;
}

bool lp_decoder_thread_name(const struct lp_decoder *d, uint32_t pid, uint32_t tid,
			    uint32_t *comm, uint32_t *pcomm)
{
	struct lp_map_ent *e = lp_map_find((struct lp_map *)&d->names, ((uint64_t)pid << 32) | tid, 0, false);

	if (!e)
		return false;
	*comm = e->v1 - 1;
	*pcomm = e->v2 - 1;
	return true;
}
