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
	uint32_t name, meta;
	uint64_t key;   /* keyed specs */
	uint32_t track; /* keyed specs: the track number (1..), 0 otherwise */
	/* The entry's values, kept when meta= or args= use exit arguments (rendered at the exit). */
	bool has_vals;
	uint8_t nargs, nstr;
	uint64_t args[LP_USDT_ARGS];
	uint32_t str[LP_USDT_STR_SLOTS];
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

void lp_pairs_set_sites_skipped(struct lp_pairs *p, uint64_t n)
{
	p->stats.sites_skipped = n;
}

void lp_pairs_mark(const struct lp_pairs *p, struct strtab *st)
{
	strtab_mark(st, p->id_unknown);
	/* Open spans: their exits give their names to the nesting builder. */
	for (size_t i = 0; i < p->nthreads; i++)
		for (size_t j = 0; j < p->threads[i].n; j++) {
			const struct open_span *o = &p->threads[i].open[j];

			strtab_mark(st, o->name);
			strtab_mark(st, o->meta);
			for (uint32_t k = 0; o->has_vals && k < o->nstr; k++)
				strtab_mark(st, o->str[k]);
		}
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

/* A probe's values as templates read them; strs holds the strings. */
static struct lp_tpl_vals vals_of(struct lp_pairs *p, const uint64_t *args, uint32_t nargs,
				  const uint32_t *str, uint32_t nstr, struct lp_spec_str *strs)
{
	for (uint32_t i = 0; i < nstr; i++)
		strs[i].s = strtab_str(p->st, str[i], &strs[i].len);
	return (struct lp_tpl_vals){ .args = args, .nargs = nargs, .strs = strs, .nstrs = nstr };
}

/*
 * The id of a template rendered (UINT32_MAX: ENOMEM): argN from the entry's
 * values (an exit's own, for role LP_USDT_ROLE_EXIT), exit.argN from the
 * exit's (NULL: none, "?").
 */
static uint32_t render_vals(struct lp_pairs *p, const struct lp_spec *sp, const struct lp_tpl *t,
			    int role, const struct lp_tpl_vals *entry,
			    const struct lp_tpl_vals *exit, bool in_meta)
{
	p->buf.len = 0;
	if (lp_tpl_render(sp, t, role, entry, exit, in_meta, &p->buf))
		return UINT32_MAX;
	return strtab_intern(p->st, p->buf.p ? p->buf.p : "", p->buf.len);
}

/* A template rendered with the event's own values (an entry's, or an exit's for match=name). */
static uint32_t render(struct lp_pairs *p, const struct lp_spec *sp, const struct lp_tpl *t,
		       const struct lp_usdt_event *ue, bool in_meta)
{
	struct lp_spec_str strs[LP_USDT_STR_SLOTS] = { 0 };
	struct lp_tpl_vals v = vals_of(p, ue->args, ue->nargs, ue->str, ue->nstr, strs);

	return render_vals(p, sp, t, ue->exit ? LP_USDT_ROLE_EXIT : LP_USDT_ROLE_ENTRY, &v, NULL,
			   in_meta);
}

/*
 * The metadata and args of an open span that uses exit arguments, rendered
 * with its entry's values and the exit's (ue; NULL when it closes without its
 * exit). 0 or -ENOMEM.
 */
static int render_at_exit(struct lp_pairs *p, const struct lp_spec *sp, const struct open_span *o,
			  const struct lp_usdt_event *ue, uint32_t *meta, uint32_t *detail)
{
	struct lp_spec_str es[LP_USDT_STR_SLOTS] = { 0 }, xs[LP_USDT_STR_SLOTS] = { 0 };
	struct lp_tpl_vals entry = vals_of(p, o->args, o->nargs, o->str, o->nstr, es), exit;

	if (ue)
		exit = vals_of(p, ue->args, ue->nargs, ue->str, ue->nstr, xs);
	*meta = *detail = 0;
	if (sp->has_meta)
		*meta = render_vals(p, sp, &sp->meta, LP_USDT_ROLE_ENTRY, &entry, ue ? &exit : NULL,
				    true);
	if (sp->has_args)
		*detail = render_vals(p, sp, &sp->args, LP_USDT_ROLE_ENTRY, &entry,
				      ue ? &exit : NULL, true);
	return *meta == UINT32_MAX || *detail == UINT32_MAX ? -ENOMEM : 0;
}

/* An event of ue's thread (or track tid); set_meta: an exit replacing the span's metadata. */
static int emit_meta(struct lp_pairs *p, const struct lp_usdt_event *ue, enum lp_event_type type,
		     uint32_t tid, uint32_t name, uint32_t meta, uint32_t detail, bool set_meta)
{
	struct lp_event ev = {
		.type = type,
		.pid = ue->pid,
		.tid = tid,
		.ts_ns = ue->ts_ns,
		.name = name,
		.meta = meta,
		.detail = detail,
		.set_meta = set_meta,
		/* Losses belong to the real thread; a track only sees its own spans. */
		.lost_before = tid == ue->tid ? ue->lost_before : 0,
		.file_since_ns = ue->file_since_ns,
		.has_sched = ue->has_sched,
		.sched = ue->sched,
	};

	return p->sink.event ? p->sink.event(p->sink.ctx, &ev) : 0;
}

static int emit(struct lp_pairs *p, const struct lp_usdt_event *ue, enum lp_event_type type,
		uint32_t tid, uint32_t name, uint32_t meta)
{
	return emit_meta(p, ue, type, tid, name, meta, 0, false);
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
		    const struct lp_usdt_event *ue, uint64_t end_ns, uint64_t *why)
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
		if (j > i)
			(*why)++;
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
		err = pop_from(p, t, i, ue, ev.ts_ns, &p->stats.enclosed);
		p->stats.reentry_closed++;
		if (err)
			return err;
		return p->sink.event ? p->sink.event(p->sink.ctx, &ev) : 0;
	}
	return 0;
}

/*
 * reentry=continue: an entry rendering the open span's name and metadata
 * belongs to it (*same); another one closes it first, 1 ns before it starts.
 */
static int continue_open(struct lp_pairs *p, struct thread *t, const struct lp_usdt_event *ue,
			 uint32_t name, uint32_t meta, bool *same)
{
	*same = false;
	for (size_t i = t->n; i-- > 0;) {
		struct open_span o = t->open[i];
		struct lp_usdt_event prev = *ue;
		int err;

		if (o.spec != ue->spec || o.track)
			continue;
		if (o.name == name && o.meta == meta) {
			*same = true;
			p->stats.continued++;
			return 0;
		}
		prev.ts_ns = ue->ts_ns ? ue->ts_ns - 1 : 0;
		prev.sched = lp_sched_back(ue->sched, 1);
		prev.lost_before = 0; /* the new entry carries them */
		err = pop_from(p, t, i, &prev, prev.ts_ns, &p->stats.enclosed);
		return err ? err : emit(p, &prev, LP_EVENT_EXIT, ue->tid, o.name, 0);
	}
	return 0;
}

static int enter(struct lp_pairs *p, struct thread *t, const struct lp_spec *sp,
		 const struct lp_usdt_event *ue)
{
	struct open_span o = { .spec = ue->spec };
	uint32_t meta = 0, detail = 0, tid = ue->tid;

	if (sp->reentry_close && !sp->keyed) {
		int err = close_reentered(p, t, ue);

		if (err)
			return err;
	}

	/* Exit arguments show as "?" until the exit renders them again. */
	o.name = render(p, sp, &sp->name, ue, false);
	if (sp->has_meta)
		meta = render(p, sp, &sp->meta, ue, true);
	if (sp->has_args)
		detail = render(p, sp, &sp->args, ue, true);
	if (o.name == UINT32_MAX || meta == UINT32_MAX || detail == UINT32_MAX)
		return -ENOMEM;
	o.meta = meta;
	if (sp->reentry_continue && !sp->keyed) {
		bool same;
		int err = continue_open(p, t, ue, o.name, meta, &same);

		if (err || same)
			return err;
	}
	if (sp->meta.uses_exit || sp->args.uses_exit) {
		o.has_vals = true;
		o.nargs = (uint8_t)ue->nargs;
		o.nstr = (uint8_t)ue->nstr;
		memcpy(o.args, ue->args, sizeof(o.args));
		memcpy(o.str, ue->str, sizeof(o.str));
	}
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
	return emit_meta(p, ue, LP_EVENT_ENTER, tid, o.name, meta, detail, false);
}

/* The exit of open span o: its metadata rendered again when it uses exit arguments. */
static int emit_exit(struct lp_pairs *p, const struct lp_spec *sp, const struct open_span *o,
		     const struct lp_usdt_event *ue, uint32_t tid)
{
	uint32_t meta = 0, detail = 0;

	if (o->has_vals && render_at_exit(p, sp, o, ue, &meta, &detail))
		return -ENOMEM;
	return emit_meta(p, ue, LP_EVENT_EXIT, tid, o->name, meta, detail, o->has_vals);
}

/*
 * match=name: the exit names its span. The innermost open span of the spec of
 * that name closes, with the spans opened inside it (their exits were skipped:
 * an exception unwound them). None of that name: it began before the
 * recording; every unkeyed span open on the thread began after it, so lies
 * inside it, and the nesting builder closes them with it.
 */
static int leave_named(struct lp_pairs *p, struct thread *t, const struct lp_spec *sp,
		       const struct lp_usdt_event *ue)
{
	uint32_t name = render(p, sp, &sp->name, ue, false);

	if (name == UINT32_MAX)
		return -ENOMEM;
	for (size_t i = t ? t->n : 0; i-- > 0;) {
		struct open_span o = t->open[i];
		int err;

		if (o.spec != ue->spec || o.track || o.name != name)
			continue;
		err = pop_from(p, t, i, ue, ue->ts_ns, &p->stats.unwound);
		return err ? err : emit_exit(p, sp, &o, ue, ue->tid);
	}
	for (size_t i = t ? t->n : 0; i-- > 0;) {
		if (t->open[i].track)
			continue;
		memmove(&t->open[i], &t->open[i + 1], (t->n - i - 1) * sizeof(t->open[i]));
		t->n--;
	}
	if (t)
		t->skipped = 0;
	return emit(p, ue, LP_EVENT_EXIT, ue->tid, name, 0);
}

/* abort=: the innermost open span of the spec is given up, with what opened inside it. */
static int abort_open(struct lp_pairs *p, struct thread *t, const struct lp_usdt_event *ue)
{
	for (size_t i = t ? t->n : 0; i-- > 0;) {
		struct open_span o = t->open[i];
		struct lp_event ev = {
			.type = LP_EVENT_EXIT,
			.pid = ue->pid,
			.tid = ue->tid,
			.ts_ns = ue->ts_ns,
			.name = o.name,
			.file_since_ns = ue->file_since_ns,
			.unterminated = true,
			.has_sched = ue->has_sched,
			.sched = ue->sched,
		};
		int err;

		if (o.spec != ue->spec || o.track)
			continue;
		err = pop_from(p, t, i, ue, ue->ts_ns, &p->stats.enclosed);
		p->stats.aborted++;
		if (err)
			return err;
		return p->sink.event ? p->sink.event(p->sink.ctx, &ev) : 0;
	}
	return 0;
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
			return emit_exit(p, sp, &o, ue, LP_TRACK_TID(o.track, ue->tid));
		}
		p->stats.unmatched_keyed++;
		return 0;
	}
	if (sp->match_name)
		return leave_named(p, t, sp, ue);
	if (t && t->skipped) {
		t->skipped--; /* the exit of the innermost entry skipped past the limit */
		return 0;
	}
	for (size_t i = t ? t->n : 0; i-- > 0;) {
		struct open_span o = t->open[i];

		if (o.spec != ue->spec || o.track)
			continue;
		/* The unkeyed spans above it close with it, unterminated. */
		int err = pop_from(p, t, i, ue, ue->ts_ns, &p->stats.enclosed);

		return err ? err : emit_exit(p, sp, &o, ue, ue->tid);
	}
	/*
	 * An exit with a predicate fires outside spans too (PostgreSQL reports
	 * every return to idle, also at a connection's start): with nothing open,
	 * it tells nothing.
	 */
	if (ue->alt < sp->nexit && sp->exit[ue->alt].has_pred) {
		p->stats.filtered++;
		return 0;
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
	{
		const struct lp_probe_ref *probes = ue->abort ? sp->abort
						    : ue->exit ? sp->exit
							       : sp->entry;
		size_t np = ue->abort ? sp->nabort : ue->exit ? sp->nexit : sp->nentry;

		if (ue->alt < np && !lp_probe_pred_holds(&probes[ue->alt], ue->args, ue->nargs)) {
			p->stats.filtered++;
			return 0;
		}
	}
	if (ue->abort)
		return abort_open(p, t, ue);
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
