// SPDX-License-Identifier: MIT
#include "nest.h"
#include "map.h"
#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct frame {
	uint32_t name, meta, detail;
	uint32_t path; /* the sink's id for it (lp_nest_sink.path); here, in a hole */
	uint64_t start_ns;
	uint64_t counter_start;
	uint64_t child_ns;
	uint64_t child_counter;
	uint64_t child_at_gate; /* child_ns when the thread's last gate opened */
	uint64_t cover_start;   /* a track's span: covered() of its thread at its start */
	unsigned flags;
	bool has_counter;
	bool has_sched;
	/*
	 * --off-cpu: the thread's snapshot at the enter, and the sums of the
	 * children split. From here on (FRAME_SCHED) a frame is zeroed only on a
	 * tracked thread's stack (lp_nest_event() zeroes the open frames' when
	 * their thread becomes tracked): 144 of its 232 bytes, which a recording
	 * without --off-cpu never reads.
	 */
	struct lp_sched at_start, child_sched, child_sched_at_gate;
	uint64_t unmeasured_ns; /* a span rebuilt at attach: before its thread was tracked */
};

#define FRAME_SCHED offsetof(struct frame, at_start)

struct thread {
	struct lp_thread_info info;
	struct frame *stack;
	size_t depth, cap;
	uint64_t skipped;  /* enters past the depth limit still open */
	uint64_t since_ns; /* spans open before this may end here; 0: none can */
	uint64_t born_ns;  /* recorded from then: its first event, or its process's start */
	uint64_t top_ns;   /* total of the top-level spans closed so far */
	uint64_t gate_ns;  /* when a file's recording last began while the thread ran */
	uint64_t top_at_gate; /* top_ns then */
	bool ended;        /* exited: a later event with this tid is a new thread */
	/*
	 * --off-cpu: top_ns and top_at_gate's splits; since when the kernel
	 * tracks it, and its switch counts then (they count from its start).
	 */
	struct lp_sched top_sched, top_sched_at_gate;
	struct lp_sched tracked_from;
	uint64_t tracked_ns;
	bool tracked;
};

/* Threads found by tid without the map, most of the time: every event needs its thread. */
#define RECENT_THREADS 64

struct lp_nest {
	struct lp_nest_sink sink;
	uint32_t recent[RECENT_THREADS]; /* by tid % RECENT_THREADS: thread index + 1 */
	struct lp_nest_totals t;
	struct thread *threads;
	struct lp_thread_info *infos; /* snapshot for lp_nest_threads() */
	size_t nthreads, cap, infos_cap;
	struct lp_map index; /* (pid, tid) -> v1: thread index + 1 */
	struct lp_map procs; /* (pid, 0) -> v1: since_ns when open_before (else 0), v2: begin_ns */
};

/* A sink without paths: every span's is LP_NEST_PATH_TOP. */
static uint32_t no_path(void *ctx, uint32_t parent, uint32_t name)
{
	return LP_NEST_PATH_TOP;
}

struct lp_nest *lp_nest_new(const struct lp_nest_sink *sink)
{
	struct lp_nest *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->sink = *sink;
	if (!n->sink.path)
		n->sink.path = no_path; /* a call at each enter rather than a test */
	n->t.first_ns = UINT64_MAX;
	return n;
}

void lp_nest_free(struct lp_nest *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nthreads; i++)
		free(n->threads[i].stack);
	free(n->threads);
	free(n->infos);
	lp_map_free(&n->index);
	lp_map_free(&n->procs);
	free(n);
}

/* get_thread() when the recent one is not it. */
static __attribute__((noinline)) struct thread *get_thread_slow(struct lp_nest *n, uint32_t pid,
								 uint32_t tid, uint32_t *recent)
{
	struct lp_map_ent *e, *p;
	struct thread *threads, *th;

	e = lp_map_find(&n->index, pid, tid, true);
	if (!e)
		return NULL;
	if (e->v1 && !n->threads[e->v1 - 1].ended) {
		*recent = (uint32_t)e->v1;
		return &n->threads[e->v1 - 1];
	}
	threads = lp_grow(n->threads, &n->cap, n->nthreads + 1, sizeof(*threads));
	if (!threads)
		return NULL;
	n->threads = threads;
	th = &n->threads[n->nthreads];
	memset(th, 0, sizeof(*th));
	th->info.pid = pid;
	th->info.tid = tid;
	/* A thread first seen now is as old as its process's recording, if known. */
	p = lp_map_find(&n->procs, pid, 0, false);
	if (p) {
		th->since_ns = p->v1;
		th->born_ns = p->v2;
	}
	e->v1 = (uint32_t)++n->nthreads;
	*recent = (uint32_t)e->v1;
	return th;
}

static inline struct thread *get_thread(struct lp_nest *n, uint32_t pid, uint32_t tid)
{
	uint32_t *recent = &n->recent[tid % RECENT_THREADS];

	if (*recent) {
		struct thread *th = &n->threads[*recent - 1];

		if (th->info.tid == tid && th->info.pid == pid && !th->ended)
			return th;
	}
	return get_thread_slow(n, pid, tid, recent);
}

/* The thread (pid, tid) as it is now, if seen and not ended. */
static struct thread *find_thread(struct lp_nest *n, uint32_t pid, uint32_t tid)
{
	struct lp_map_ent *e = lp_map_find(&n->index, pid, tid, false);

	if (!e || !e->v1 || n->threads[e->v1 - 1].ended)
		return NULL;
	return &n->threads[e->v1 - 1];
}

/*
 * How long the real thread of a track has been inside top-level spans up to
 * ts: the difference over a track span is the part of it its thread's spans
 * cover.
 */
static uint64_t covered(struct lp_nest *n, uint32_t pid, uint32_t track_tid, uint64_t ts)
{
	struct thread *th = find_thread(n, pid, LP_TRACK_REAL(track_tid));

	if (!th)
		return 0;
	return th->top_ns + (th->depth && ts > th->stack[0].start_ns ? ts - th->stack[0].start_ns : 0);
}

static void sched_add(struct lp_sched *a, const struct lp_sched *b)
{
	a->cpu_ns += b->cpu_ns;
	a->runq_ns += b->runq_ns;
	a->blocked_ns += b->blocked_ns;
	a->steal_ns += b->steal_ns;
	a->vcsw += b->vcsw;
	a->ivcsw += b->ivcsw;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static struct lp_sched sched_sub(const struct lp_sched *a, const struct lp_sched *b)
{
	struct lp_sched d = {
		.cpu_ns = minus(a->cpu_ns, b->cpu_ns),
		.runq_ns = minus(a->runq_ns, b->runq_ns),
		.blocked_ns = minus(a->blocked_ns, b->blocked_ns),
		.steal_ns = minus(a->steal_ns, b->steal_ns),
		.vcsw = minus(a->vcsw, b->vcsw),
		.ivcsw = minus(a->ivcsw, b->ivcsw),
	};

	return d;
}

/*
 * Makes cpu + steal + runq + blocked + unmeasured the span's duration, which
 * the snapshots give by themselves (the kernel half puts every nanosecond of
 * a tracked thread in one of the four): only a span clamped to end where it
 * began, or a snapshot that came out of order, could differ. Time short is
 * unmeasured; time over is taken off cpu, then steal, runq, blocked,
 * unmeasured.
 */
static void fit_split(struct lp_span *s)
{
	uint64_t *parts[] = { &s->sched.cpu_ns,	    &s->sched.steal_ns, &s->sched.runq_ns,
			      &s->sched.blocked_ns, &s->unmeasured_ns };
	uint64_t sum = lp_sched_sum(&s->sched) + s->unmeasured_ns, over;

	if (sum <= s->total_ns) {
		s->unmeasured_ns += s->total_ns - sum;
		return;
	}
	over = sum - s->total_ns;

	for (size_t i = 0; over && i < sizeof(parts) / sizeof(parts[0]); i++) {
		uint64_t cut = over < *parts[i] ? over : *parts[i];

		*parts[i] -= cut;
		over -= cut;
	}
}

/*
 * Pops the innermost frame of th, ending it at end_ns. at: the thread's
 * snapshot at end_ns (--off-cpu), NULL when none was taken there.
 */
static void close_top(struct lp_nest *n, struct thread *th, uint64_t end_ns, uint64_t counter,
		      bool has_counter, unsigned flags, const struct lp_sched *at)
{
	struct frame *f = &th->stack[--th->depth];
	struct lp_span s;

	/* The split's parts are set only with has_sched (nest.h). */
	memset(&s, 0, offsetof(struct lp_span, sched));
	s.unmeasured_ns = 0;
	s.pid = th->info.pid;
	s.tid = th->info.tid;
	s.name = f->name;
	s.meta = f->meta;
	s.detail = f->detail;
	s.start_ns = f->start_ns;
	s.end_ns = end_ns < f->start_ns ? f->start_ns : end_ns;
	s.depth = (uint32_t)th->depth;
	s.path = f->path;
	s.flags = f->flags | flags;
	s.total_ns = s.end_ns - s.start_ns;
	s.self_ns = s.total_ns > f->child_ns ? s.total_ns - f->child_ns : 0;
	if (LP_TRACK_IS(s.tid) && th->depth == 0) {
		uint64_t now = covered(n, s.pid, s.tid, s.end_ns);
		uint64_t in = now > f->cover_start ? now - f->cover_start : 0;

		s.self_ns = s.total_ns > in ? s.total_ns - in : 0;
	}
	s.has_counter = f->has_counter && has_counter;
	if (s.has_counter) {
		s.counter_total = counter >= f->counter_start ? counter - f->counter_start : 0;
		s.counter_self = s.counter_total > f->child_counter
					 ? s.counter_total - f->child_counter
					 : 0;
	}
	if (f->has_sched && at) {
		s.has_sched = true;
		s.sched = sched_sub(at, &f->at_start);
		s.unmeasured_ns = f->unmeasured_ns;
		fit_split(&s);
		s.self_sched = sched_sub(&s.sched, &f->child_sched);
		/* Tracked only from its exit on (its thread's first event): nothing split. */
		if (s.unmeasured_ns && !lp_sched_sum(&s.sched)) {
			s.has_sched = false;
			s.unmeasured_ns = 0;
		}
	}
	if (s.has_sched) {
		if (s.unmeasured_ns)
			n->t.sched_partial++;
		else
			n->t.sched_measured++;
	} else {
		n->t.sched_unmeasured++;
	}
	if (th->depth > 0) {
		struct frame *parent = &th->stack[th->depth - 1];

		parent->child_ns += s.total_ns;
		parent->child_counter += s.counter_total;
		if (s.has_sched)
			sched_add(&parent->child_sched, &s.sched);
	} else {
		th->info.recorded_ns += s.total_ns;
		if (!LP_TRACK_IS(s.tid))
			n->t.recorded_ns += s.total_ns;
		th->top_ns += s.total_ns;
		if (s.has_sched) {
			sched_add(&th->top_sched, &s.sched);
			sched_add(&th->info.sched, &s.sched);
		}
	}
	/* Self counters add up to the whole, whichever spans carry counters. */
	n->t.counter_total += s.counter_self;
	if (!th->info.spans && !LP_TRACK_IS(s.tid))
		n->t.threads++;
	th->info.spans++;
	n->t.spans++;
	if (s.flags & LP_SPAN_UNTERMINATED)
		n->t.unterminated++;
	if (s.flags & LP_SPAN_UNCERTAIN)
		n->t.uncertain++;
	if (s.flags & LP_SPAN_STARTED_BEFORE)
		n->t.started_before++;
	if (s.start_ns < n->t.first_ns)
		n->t.first_ns = s.start_ns;
	if (s.end_ns > n->t.last_ns)
		n->t.last_ns = s.end_ns;
	if (n->sink.span)
		n->sink.span(n->sink.ctx, &s);
}

/*
 * Force-closes the frames above index keep, innermost first; each ends 1 ns
 * before the one enclosing it so that viewers that round keep them nested.
 * at: the thread's snapshot at end_ns, or NULL.
 */
static void close_above(struct lp_nest *n, struct thread *th, size_t keep, uint64_t end_ns,
			const struct lp_sched *at, uint64_t *why)
{
	while (th->depth > keep) {
		(*why)++;
		uint64_t back = th->depth - keep; /* the frame just above keep gets 1 */
		struct lp_sched then;

		if (at)
			then = lp_sched_back(*at, back);
		close_top(n, th, end_ns > back ? end_ns - back : 0, 0, false, LP_SPAN_UNTERMINATED,
			  at ? &then : NULL);
	}
}

/* The sink's path id for a span of that name opening at index k of th's stack. */
static inline uint32_t open_path(struct lp_nest *n, const struct thread *th, size_t k,
				 uint32_t name)
{
	return n->sink.path(n->sink.ctx, k ? th->stack[k - 1].path : LP_NEST_PATH_TOP, name);
}

/*
 * An exit whose span began before its recording did (from_ns): the span is
 * rebuilt from from_ns. It encloses what the thread recorded since then and
 * is enclosed by the spans opened before then, which are still open.
 */
static int rebuild_open_span(struct lp_nest *n, struct thread *th, const struct lp_event *ev,
			     uint64_t from_ns)
{
	const struct lp_sched *at = ev->has_sched ? &ev->sched : NULL;
	struct lp_sched inside_sched;
	size_t k = 0;
	uint64_t inside;
	struct frame *f;

	while (k < th->depth && th->stack[k].start_ns < from_ns)
		k++;
	/* Spans opened after from_ns and still open lie inside it: they end before it. */
	close_above(n, th, k, ev->ts_ns, at, &n->t.unterminated_outer);
	/* What its children took, already counted where it now stands. */
	if (k == 0) {
		bool all = from_ns == th->since_ns;

		inside = all ? th->top_ns : th->top_ns - th->top_at_gate;
		inside_sched = all ? th->top_sched : sched_sub(&th->top_sched, &th->top_sched_at_gate);
	} else {
		inside = th->stack[k - 1].child_ns - th->stack[k - 1].child_at_gate;
		/* An untracked thread's frames have no split parts (FRAME_SCHED). */
		inside_sched = th->tracked ? sched_sub(&th->stack[k - 1].child_sched,
						       &th->stack[k - 1].child_sched_at_gate)
					   : (struct lp_sched){ 0 };
	}
	f = lp_grow(th->stack, &th->cap, k + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	th->stack = f;
	if (k == 0) {
		th->top_ns -= inside;
		th->info.recorded_ns -= inside;
		n->t.recorded_ns -= inside;
		th->top_sched = sched_sub(&th->top_sched, &inside_sched);
		th->info.sched = sched_sub(&th->info.sched, &inside_sched);
	} else {
		th->stack[k - 1].child_ns -= inside;
		if (th->tracked)
			th->stack[k - 1].child_sched =
				sched_sub(&th->stack[k - 1].child_sched, &inside_sched);
	}
	f = &th->stack[k];
	memset(f, 0, sizeof(*f));
	f->name = ev->name;
	if (ev->set_meta) {
		f->meta = ev->meta;
		f->detail = ev->detail;
	}
	f->path = open_path(n, th, k, ev->name);
	f->start_ns = from_ns;
	f->child_ns = inside;
	f->child_sched = inside_sched;
	f->flags = LP_SPAN_STARTED_BEFORE;
	/*
	 * Its split is measured from when the kernel began to track the thread
	 * (its sums start at 0 there; its switch counts are the kernel's, from
	 * the thread's start), if that was inside the span; the time before is
	 * unmeasured.
	 */
	if (at && th->tracked && th->tracked_ns >= from_ns) {
		f->has_sched = true;
		f->at_start = th->tracked_from;
		f->unmeasured_ns = th->tracked_ns - from_ns;
	}
	th->depth = k + 1;
	close_top(n, th, ev->ts_ns, 0, false, 0, at);
	return 0;
}

/* An enter's frame on th's stack, which has room for it. */
static inline __attribute__((always_inline)) void push_frame(struct lp_nest *n, struct thread *th,
							       const struct lp_event *ev)
{
	struct frame *f = &th->stack[th->depth++];

	if (th->tracked)
		memset(f, 0, sizeof(*f));
	else
		memset(f, 0, FRAME_SCHED); /* a constant: a few stores, no call */
	if (LP_TRACK_IS(ev->tid) && th->depth == 1)
		f->cover_start = covered(n, ev->pid, ev->tid, ev->ts_ns);
	f->name = ev->name;
	f->path = open_path(n, th, th->depth - 1, ev->name);
	f->meta = ev->meta;
	f->detail = ev->detail;
	f->start_ns = ev->ts_ns;
	f->counter_start = ev->counter;
	f->has_counter = ev->has_counter;
	f->has_sched = ev->has_sched;
	if (ev->has_sched)
		f->at_start = ev->sched;
	/* A gap just before the enter may have been this span's own children. */
	if (ev->lost_before)
		f->flags |= LP_SPAN_UNCERTAIN;
	if (th->depth > th->info.max_depth)
		th->info.max_depth = (uint32_t)th->depth;
}

/* lp_nest_event(), every case. */
static __attribute__((noinline)) int nest_event(struct lp_nest *n, const struct lp_event *ev)
{
	struct thread *th = get_thread(n, ev->pid, ev->tid);
	struct frame *f;

	if (!th)
		return -ENOMEM;
	if (!th->born_ns)
		th->born_ns = ev->ts_ns;
	if (ev->has_sched && !th->tracked) {
		/* Its open frames' split parts were never zeroed: they sum from now on. */
		for (size_t i = 0; i < th->depth; i++)
			memset((char *)&th->stack[i] + FRAME_SCHED, 0,
			       sizeof(struct frame) - FRAME_SCHED);
		th->tracked = true;
		th->tracked_ns = minus(ev->ts_ns, lp_sched_sum(&ev->sched));
		th->tracked_from = (struct lp_sched){ .vcsw = ev->sched.vcsw, .ivcsw = ev->sched.ivcsw };
	}
	if (ev->lost_before) {
		th->info.lost_seen += ev->lost_before;
		n->t.lost_seen += ev->lost_before;
		for (size_t i = 0; i < th->depth; i++)
			th->stack[i].flags |= LP_SPAN_UNCERTAIN;
	}
	if (ev->type == LP_EVENT_ENTER) {
		if (th->depth >= LP_NEST_MAX_DEPTH) {
			th->skipped++;
			n->t.too_deep++;
			return 0;
		}
		if (th->depth >= th->cap) {
			f = lp_grow(th->stack, &th->cap, th->depth + 1, sizeof(*f));
			if (!f)
				return -ENOMEM;
			th->stack = f;
		}
		push_frame(n, th, ev);
		return 0;
	}

	if (th->skipped) {
		/* The exit of an enter skipped for depth: nothing to close. */
		th->skipped--;
		return 0;
	}
	/* The innermost open span of that name; spans above it never got their exit. */
	for (size_t i = th->depth; i-- > 0;) {
		if (th->stack[i].name == ev->name) {
			const struct lp_sched *at = ev->has_sched ? &ev->sched : NULL;

			if (ev->set_meta) {
				th->stack[i].meta = ev->meta;
				th->stack[i].detail = ev->detail;
			}
			close_above(n, th, i + 1, ev->ts_ns, at, &n->t.unterminated_outer);
			n->t.unterminated_pairs += ev->unterminated;
			close_top(n, th, ev->ts_ns, ev->counter, ev->has_counter,
				  ev->unterminated ? LP_SPAN_UNTERMINATED : 0, at);
			return 0;
		}
	}
	if (ev->unterminated)
		return 0; /* given up, and already gone */
	/* Open before the thread's process, or before the marker's file, was recorded. */
	if (th->since_ns || (ev->file_since_ns && ev->file_since_ns > th->born_ns)) {
		uint64_t from = th->since_ns > ev->file_since_ns ? th->since_ns : ev->file_since_ns;

		if (ev->ts_ns >= from)
			return rebuild_open_span(n, th, ev, from);
	}
	n->t.unmatched_exits++;
	return 0;
}

/*
 * The common cases on their own: an enter on a known thread's stack with room,
 * and the exit of its top span, with nothing lost, split or tracked. They
 * reach nest_event()'s code, minus its tests for the rest; there, the rare
 * cases' code made every event save six registers and a stack frame (bench
 * row 6: 40 instructions per span).
 */
int lp_nest_event(struct lp_nest *n, const struct lp_event *ev)
{
	uint32_t r = n->recent[ev->tid % RECENT_THREADS];
	struct thread *th;

	if (!r || ev->has_sched || ev->lost_before || LP_TRACK_IS(ev->tid))
		return nest_event(n, ev);
	th = &n->threads[r - 1];
	if (th->info.tid != ev->tid || th->info.pid != ev->pid || th->ended || !th->born_ns ||
	    th->tracked || th->skipped)
		return nest_event(n, ev);
	if (ev->type == LP_EVENT_ENTER) {
		if (th->depth >= th->cap || th->depth >= LP_NEST_MAX_DEPTH)
			return nest_event(n, ev);
		push_frame(n, th, ev);
		return 0;
	}
	if (!th->depth || th->stack[th->depth - 1].name != ev->name || ev->set_meta ||
	    ev->unterminated)
		return nest_event(n, ev);
	close_top(n, th, ev->ts_ns, ev->counter, ev->has_counter, 0, NULL);
	return 0;
}

int lp_nest_process_begin(struct lp_nest *n, uint32_t pid, uint64_t since_ns, bool open_before)
{
	struct lp_map_ent *p = lp_map_find(&n->procs, pid, 0, true);
	uint64_t since = open_before ? since_ns : 0;

	if (!p)
		return -ENOMEM;
	p->v1 = since;
	p->v2 = since_ns;
	/* Threads already seen belong to the process as it is now. */
	for (size_t i = 0; i < n->nthreads; i++)
		if (n->threads[i].info.pid == pid && !n->threads[i].ended)
			n->threads[i].since_ns = since;
	return 0;
}

void lp_nest_gate(struct lp_nest *n, uint64_t gate_ns)
{
	for (size_t i = 0; i < n->nthreads; i++) {
		struct thread *th = &n->threads[i];

		if (th->ended)
			continue;
		th->gate_ns = gate_ns;
		th->top_at_gate = th->top_ns;
		th->top_sched_at_gate = th->top_sched;
		for (size_t d = 0; d < th->depth; d++) {
			th->stack[d].child_at_gate = th->stack[d].child_ns;
			if (th->tracked)
				th->stack[d].child_sched_at_gate = th->stack[d].child_sched;
		}
	}
}

int lp_nest_thread_begin(struct lp_nest *n, uint32_t pid, uint32_t tid, uint64_t ts_ns)
{
	struct thread *th = get_thread(n, pid, tid);

	if (!th)
		return -ENOMEM;
	th->since_ns = 0;
	th->born_ns = ts_ns;
	return 0;
}

static void end_thread(struct lp_nest *n, struct thread *th, uint64_t end_ns)
{
	if (th->depth)
		close_above(n, th, 0, end_ns + 1, NULL, &n->t.unterminated_thread);
	th->skipped = 0;
}

void lp_nest_thread_end(struct lp_nest *n, uint32_t pid, uint32_t tid, uint64_t end_ns)
{
	struct lp_map_ent *e = lp_map_find(&n->index, pid, tid, false);
	struct thread *th;

	if (!e || !e->v1)
		return;
	th = &n->threads[e->v1 - 1];
	if (th->ended)
		return;
	end_thread(n, th, end_ns);
	th->ended = true;
}

void lp_nest_process_end(struct lp_nest *n, uint32_t pid, uint64_t end_ns)
{
	struct lp_map_ent *p = lp_map_find(&n->procs, pid, 0, false);

	for (size_t i = 0; i < n->nthreads; i++) {
		struct thread *th = &n->threads[i];

		if (th->info.pid != pid || th->ended)
			continue;
		end_thread(n, th, end_ns);
		th->since_ns = 0; /* a new image: nothing of it was open before */
		th->born_ns = end_ns;
	}
	if (p) {
		p->v1 = 0; /* a new image: nothing of it was open before */
		p->v2 = end_ns;
	}
}

void lp_nest_finish(struct lp_nest *n, uint64_t end_ns)
{
	for (size_t i = 0; i < n->nthreads; i++)
		if (n->threads[i].depth)
			close_above(n, &n->threads[i], 0, end_ns + 1, NULL,
				    &n->t.unterminated_end);
	/*
	 * A thread whose spans are all on its tracks is a thread with spans too,
	 * once per (pid, tid): a track does not say which of the threads of a
	 * reused tid it was of, nor does the thread list. So its tid is counted
	 * already when any thread of it has spans of its own, not only the last
	 * one (n->index's).
	 */
	struct lp_map seen = { 0 }; /* (pid, tid) -> v1: 1, counted */

	for (size_t i = 0; i < n->nthreads; i++) {
		const struct thread *th = &n->threads[i];
		struct lp_map_ent *e;

		if (LP_TRACK_IS(th->info.tid) || !th->info.spans)
			continue;
		e = lp_map_find(&seen, th->info.pid, th->info.tid, true);
		/* Out of memory: its tracks may count it again, nothing else is affected. */
		if (e)
			e->v1 = 1;
	}
	for (size_t i = 0; i < n->nthreads; i++) {
		const struct thread *tr = &n->threads[i];
		struct lp_map_ent *once;

		if (!LP_TRACK_IS(tr->info.tid) || !tr->info.spans)
			continue;
		once = lp_map_find(&seen, tr->info.pid, LP_TRACK_REAL(tr->info.tid), true);
		/* Out of memory: the count is one short, nothing else is affected. */
		if (once && !once->v1) {
			once->v1 = 1;
			n->t.threads++;
		}
	}
	lp_map_free(&seen);
}

size_t lp_nest_depth(const struct lp_nest *n, uint32_t pid, uint32_t tid)
{
	struct lp_map_ent *e = lp_map_find((struct lp_map *)&n->index, pid, tid, false);
	const struct thread *th;

	if (!e || !e->v1)
		return 0;
	th = &n->threads[e->v1 - 1];
	return th->ended ? 0 : th->depth;
}

void lp_nest_mark(const struct lp_nest *n, struct strtab *st)
{
	/* Open spans only: a frame above depth is gone, a closed span the sink's. */
	for (size_t i = 0; i < n->nthreads; i++) {
		const struct thread *th = &n->threads[i];

		for (size_t d = 0; d < th->depth; d++) {
			strtab_mark(st, th->stack[d].name);
			strtab_mark(st, th->stack[d].meta);
			strtab_mark(st, th->stack[d].detail);
		}
	}
}

const struct lp_nest_totals *lp_nest_totals(const struct lp_nest *n)
{
	return &n->t;
}

size_t lp_nest_threads(const struct lp_nest *n, const struct lp_thread_info **out)
{
	struct lp_nest *m = (struct lp_nest *)n; /* the snapshot is a cache */
	struct lp_thread_info *infos;

	infos = lp_grow(m->infos, &m->infos_cap, n->nthreads ? n->nthreads : 1, sizeof(*infos));
	if (!infos) {
		*out = NULL;
		return 0;
	}
	m->infos = infos;
	for (size_t i = 0; i < n->nthreads; i++)
		infos[i] = n->threads[i].info;
	*out = infos;
	return n->nthreads;
}
