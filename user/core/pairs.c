// SPDX-License-Identifier: MIT
#include "pairs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "text.h"

/* An open span of a spec on a thread. */
struct open_span {
	uint32_t spec;
	uint32_t name;
	uint64_t key;   /* keyed specs */
	uint32_t track; /* keyed specs: the track number (1..), 0 otherwise */
};

struct thread {
	uint32_t pid, tid;
	struct open_span *open; /* unkeyed: a stack, innermost last; keyed ones anywhere */
	size_t n, cap;
	uint64_t skipped;       /* unkeyed entries skipped past LP_PAIRS_MAX_OPEN, still open */
	uint32_t tracks_used;   /* highest track number ever used + 1 */
};

struct lp_pairs {
	const struct lp_spec *specs;
	size_t nspecs;
	struct strtab *st;
	struct lp_pairs_sink sink;
	struct lp_pairs_stats stats;
	struct lp_map index; /* (pid, tid) -> v1: thread index + 1 */
	struct thread *threads;
	size_t nthreads, cap;
	struct lp_buf buf;
	uint32_t id_unknown;
};

struct lp_pairs *lp_pairs_new(const struct lp_spec *specs, size_t nspecs, struct strtab *st,
			      const struct lp_pairs_sink *sink)
{
	struct lp_pairs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->specs = specs;
	p->nspecs = nspecs;
	p->st = st;
	p->sink = *sink;
	p->id_unknown = strtab_intern(st, "(unknown)", 9);
	if (p->id_unknown == UINT32_MAX) {
		free(p);
		return NULL;
	}
	return p;
}

void lp_pairs_free(struct lp_pairs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].open);
	free(p->threads);
	lp_map_free(&p->index);
	lp_buf_free(&p->buf);
	free(p);
}

const struct lp_pairs_stats *lp_pairs_stats(const struct lp_pairs *p)
{
	return &p->stats;
}

void lp_pairs_mark(const struct lp_pairs *p, struct strtab *st)
{
	strtab_mark(st, p->id_unknown);
	/* Open spans: their exits give their names to the nesting builder. */
	for (size_t i = 0; i < p->nthreads; i++)
		for (size_t j = 0; j < p->threads[i].n; j++)
			strtab_mark(st, p->threads[i].open[j].name);
}

static struct thread *thread_of(struct lp_pairs *p, uint32_t pid, uint32_t tid, bool create)
{
	struct lp_map_ent *e = lp_map_find(&p->index, pid, tid, create);
	struct thread *t;

	if (!e)
		return NULL;
	if (e->v1)
		return &p->threads[e->v1 - 1];
	t = lp_grow(p->threads, &p->cap, p->nthreads + 1, sizeof(*t));
	if (!t)
		return NULL;
	p->threads = t;
	t = &p->threads[p->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	e = lp_map_find(&p->index, pid, tid, false);
	e->v1 = p->nthreads;
	return t;
}

/* The id of a template rendered with the entry's arguments (UINT32_MAX: ENOMEM). */
static uint32_t render(struct lp_pairs *p, const struct lp_spec *sp, const struct lp_tpl *t,
		       const struct lp_usdt_event *ue, bool in_meta)
{
	struct lp_spec_str strs[LP_USDT_STR_SLOTS] = { 0 };

	for (uint32_t i = 0; i < ue->nstr; i++)
		strs[i].s = strtab_str(p->st, ue->str[i], &strs[i].len);
	p->buf.len = 0;
	if (lp_tpl_render(sp, t, ue->args, ue->nargs, strs, ue->nstr, in_meta, &p->buf))
		return UINT32_MAX;
	return strtab_intern(p->st, p->buf.p ? p->buf.p : "", p->buf.len);
}

static int emit(struct lp_pairs *p, const struct lp_usdt_event *ue, enum lp_event_type type,
		uint32_t tid, uint32_t name, uint32_t meta)
{
	struct lp_event ev = {
		.type = type,
		.pid = ue->pid,
		.tid = tid,
		.ts_ns = ue->ts_ns,
		.name = name,
		.meta = meta,
		/* Losses belong to the real thread; a track only sees its own spans. */
		.lost_before = tid == ue->tid ? ue->lost_before : 0,
		.file_since_ns = ue->file_since_ns,
		.has_sched = ue->has_sched,
		.sched = ue->sched,
	};

	return p->sink.event ? p->sink.event(p->sink.ctx, &ev) : 0;
}

static int push(struct thread *t, const struct open_span *o)
{
	struct open_span *n = lp_grow(t->open, &t->cap, t->n + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	t->open = n;
	t->open[t->n++] = *o;
	return 0;
}

/*
 * Gives up the unkeyed open spans above index i (opened inside it), innermost
 * first, each an unterminated exit 1 ns before the one enclosing it, the span
 * at i ending at end_ns; then removes them and the span at i. Said one by one:
 * the builder closes the innermost open span of an exit's name, and a span of
 * another spec opened inside may have the same name.
 */
static int pop_from(struct lp_pairs *p, struct thread *t, size_t i,
		    const struct lp_usdt_event *ue, uint64_t end_ns)
{
	uint64_t back = 0;
	int err = 0;

	for (size_t j = i + 1; j < t->n; j++)
		back += !t->open[j].track;
	for (size_t j = t->n; j-- > i;) {
		uint64_t ts = end_ns > back ? end_ns - back : 0;
		struct lp_event ev = {
			.type = LP_EVENT_EXIT,
			.pid = ue->pid,
			.tid = ue->tid,
			.ts_ns = ts,
			.name = t->open[j].name,
			.file_since_ns = ue->file_since_ns,
			.unterminated = true,
			/* --off-cpu: the thread's snapshot is the probe's, taken a few ns later. */
			.has_sched = ue->has_sched,
			.sched = lp_sched_back(ue->sched, ue->ts_ns > ts ? ue->ts_ns - ts : 0),
		};

		if (t->open[j].track)
			continue;
		if (j > i && !err && p->sink.event)
			err = p->sink.event(p->sink.ctx, &ev);
		back -= back > 0;
		memmove(&t->open[j], &t->open[j + 1], (t->n - j - 1) * sizeof(t->open[j]));
		t->n--;
	}
	return err;
}

/* reentry=close: the open span of this spec (unkeyed) is given up, unterminated. */
static int close_reentered(struct lp_pairs *p, struct thread *t, const struct lp_usdt_event *ue)
{
	for (size_t i = t->n; i-- > 0;) {
		struct open_span o = t->open[i];
		struct lp_event ev = {
			.type = LP_EVENT_EXIT,
			.pid = ue->pid,
			.tid = ue->tid,
			/* 1 ns before the new one starts: viewers see them apart, not overlapping. */
			.ts_ns = ue->ts_ns ? ue->ts_ns - 1 : 0,
			.name = o.name,
			.file_since_ns = ue->file_since_ns,
			.unterminated = true,
			.has_sched = ue->has_sched,
			.sched = lp_sched_back(ue->sched, 1),
		};
		int err;

		if (o.spec != ue->spec || o.track)
			continue;
		err = pop_from(p, t, i, ue, ev.ts_ns);
		p->stats.reentry_closed++;
		if (err)
			return err;
		return p->sink.event ? p->sink.event(p->sink.ctx, &ev) : 0;
	}
	return 0;
}

static int enter(struct lp_pairs *p, struct thread *t, const struct lp_spec *sp,
		 const struct lp_usdt_event *ue)
{
	struct open_span o = { .spec = ue->spec };
	uint32_t meta = 0, tid = ue->tid;

	if (sp->reentry_close && !sp->keyed) {
		int err = close_reentered(p, t, ue);

		if (err)
			return err;
	}

	o.name = render(p, sp, &sp->name, ue, false);
	if (sp->has_meta)
		meta = render(p, sp, &sp->meta, ue, true);
	if (o.name == UINT32_MAX || meta == UINT32_MAX)
		return -ENOMEM;
	if (sp->keyed) {
		/* The lowest track with nothing open. */
		uint32_t track = 1;

		o.key = sp->key_entry < ue->nargs ? ue->args[sp->key_entry] : 0;
		for (bool busy = true; busy && track <= LP_PAIRS_MAX_TRACKS;) {
			busy = false;
			for (size_t i = 0; i < t->n && !busy; i++)
				busy = t->open[i].track == track;
			if (busy)
				track++;
		}
		if (track > LP_PAIRS_MAX_TRACKS) {
			p->stats.too_many_tracks++;
			return 0;
		}
		o.track = track;
		if (track + 1 > t->tracks_used)
			t->tracks_used = track + 1;
		tid = LP_TRACK_TID(track, ue->tid);
	}
	if (!sp->keyed) {
		size_t unkeyed = 0;

		for (size_t i = 0; i < t->n; i++)
			unkeyed += !t->open[i].track;
		/* Bounded like the nesting builder: deeper entries and their exits are skipped. */
		if (t->skipped || unkeyed >= LP_PAIRS_MAX_OPEN) {
			t->skipped++;
			p->stats.too_deep++;
			return 0;
		}
	}
	if (push(t, &o))
		return -ENOMEM;
	return emit(p, ue, LP_EVENT_ENTER, tid, o.name, meta);
}

static int leave(struct lp_pairs *p, struct thread *t, const struct lp_spec *sp,
		 const struct lp_usdt_event *ue)
{
	if (sp->keyed) {
		uint64_t key = sp->key_exit < ue->nargs ? ue->args[sp->key_exit] : 0;

		for (size_t i = t ? t->n : 0; i-- > 0;) {
			struct open_span o = t->open[i];

			if (o.spec != ue->spec || !o.track || o.key != key)
				continue;
			memmove(&t->open[i], &t->open[i + 1], (t->n - i - 1) * sizeof(o));
			t->n--;
			return emit(p, ue, LP_EVENT_EXIT, LP_TRACK_TID(o.track, ue->tid), o.name, 0);
		}
		p->stats.unmatched_keyed++;
		return 0;
	}
	if (t && t->skipped) {
		t->skipped--; /* the exit of the innermost entry skipped past the limit */
		return 0;
	}
	for (size_t i = t ? t->n : 0; i-- > 0;) {
		struct open_span o = t->open[i];

		if (o.spec != ue->spec || o.track)
			continue;
		/* The unkeyed spans above it close with it, unterminated. */
		int err = pop_from(p, t, i, ue, ue->ts_ns);

		return err ? err : emit(p, ue, LP_EVENT_EXIT, ue->tid, o.name, 0);
	}
	/*
	 * Nothing open: a span that began before recording (the builder rebuilds
	 * it, when its name is known without the entry's arguments) or unmatched.
	 */
	return emit(p, ue, LP_EVENT_EXIT, ue->tid,
		    lp_tpl_literal(&sp->name) ? render(p, sp, &sp->name, ue, false) : p->id_unknown,
		    0);
}

int lp_pairs_event(struct lp_pairs *p, const struct lp_usdt_event *ue)
{
	const struct lp_spec *sp;
	struct thread *t;

	if (ue->spec >= p->nspecs) {
		p->stats.bad_spec++;
		return 0;
	}
	/* Its tracks' tids would be another thread's tracks: LP_TRACK_TID(n, tid) | tid. */
	if (ue->tid > LP_TID_MAX) {
		p->stats.bad_tid++;
		return 0;
	}
	sp = &p->specs[ue->spec];
	t = thread_of(p, ue->pid, ue->tid, !ue->exit);
	if (!t && !ue->exit)
		return -ENOMEM;
	return ue->exit ? leave(p, t, sp, ue) : enter(p, t, sp, ue);
}

void lp_pairs_thread_end(struct lp_pairs *p, uint32_t pid, uint32_t tid, uint64_t end_ns)
{
	struct thread *t = thread_of(p, pid, tid, false);

	if (!t)
		return;
	for (uint32_t n = 1; n < t->tracks_used; n++)
		if (p->sink.track_end)
			p->sink.track_end(p->sink.ctx, pid, LP_TRACK_TID(n, tid), end_ns);
	t->n = 0;
	t->skipped = 0;
}

void lp_pairs_process_end(struct lp_pairs *p, uint32_t pid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].pid == pid) {
			p->threads[i].n = 0;
			p->threads[i].skipped = 0;
		}
}
