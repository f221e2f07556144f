/* SPDX-License-Identifier: MIT */
/*
 * Rebuilds span nesting per thread from a stream of enter/exit events and
 * hands every completed span to a sink (which may give each span an id for
 * its call path as it opens: struct lp_nest_sink). Knows nothing of BPF:
 * tests drive it with synthetic streams. Nesting follows event order, never
 * timestamps, so equal timestamps nest as they were emitted.
 */
#ifndef LP_NEST_H
#define LP_NEST_H

#include "common.h"

/* Open spans kept per thread; enters past this are counted and skipped. */
#define LP_NEST_MAX_DEPTH 1024

enum lp_event_type { LP_EVENT_ENTER = 1, LP_EVENT_EXIT = 2 };

/*
 * record --off-cpu: where a thread's time went. At an event, since the kernel
 * began to track the thread (wire.h struct lp_sched_snap; the switch counts
 * since the thread began); of a span, over the span: the difference of its
 * exit's and its enter's, so cpu + steal + runq + blocked is its duration.
 */
struct lp_sched {
	uint64_t cpu_ns;     /* on a CPU */
	uint64_t runq_ns;    /* runnable, waiting for a CPU */
	uint64_t blocked_ns; /* asleep */
	uint64_t steal_ns;   /* current on a CPU the hypervisor did not run (its steal clock) */
	uint64_t vcsw, ivcsw; /* voluntary and involuntary context switches */
};

static inline uint64_t lp_sched_sum(const struct lp_sched *s)
{
	return s->cpu_ns + s->steal_ns + s->runq_ns + s->blocked_ns;
}

/*
 * The snapshot s of a running thread as it was ns earlier: a span closed
 * that much before the event that closes it (nested ones end 1 ns apart).
 */
static inline struct lp_sched lp_sched_back(struct lp_sched s, uint64_t ns)
{
	s.cpu_ns -= ns < s.cpu_ns ? ns : s.cpu_ns;
	return s;
}

struct lp_event {
	enum lp_event_type type;
	uint32_t pid, tid;
	uint64_t ts_ns;
	uint64_t counter;
	bool has_counter;
	uint32_t name; /* string ids (strtab); meta 0 = none */
	uint32_t meta;
	uint32_t detail; /* trace-only metadata (span-pair args=), 0 = none */
	/* Exit only: meta and detail replace the span's (rendered with the exit's arguments). */
	bool set_meta;
	uint32_t lost_before; /* this thread's events lost just before this one */
	uint64_t file_since_ns; /* recording of the marker's file began then (0: unknown) */
	/*
	 * Exit only: the span did not end, it is given up here (span-pair
	 * reentry=close): closed at ts_ns, flagged unterminated like the spans
	 * inside it; with no open span of that name, nothing happens.
	 */
	bool unterminated;
	bool has_sched;         /* --off-cpu: sched is the thread's at ts_ns */
	/*
	 * Last, and read only with has_sched: the decoder leaves it unset
	 * otherwise (zeroing it cost every event 48 bytes of stores).
	 */
	struct lp_sched sched;
};

#define LP_SPAN_UNTERMINATED 0x1 /* no matching exit: closed by an outer exit or at the end */
#define LP_SPAN_UNCERTAIN 0x2    /* its thread lost events while it was open */
#define LP_SPAN_STARTED_BEFORE 0x4 /* open when recording began: starts at the attach time */

struct lp_span {
	uint32_t pid, tid;
	uint32_t name, meta;
	uint32_t detail; /* trace-only metadata items, 0 = none */
	/* the sink's path id, given when the span opened (struct lp_nest_sink); here, in a hole */
	uint32_t path;
	uint64_t start_ns, end_ns;
	uint64_t total_ns, self_ns;
	uint64_t counter_total, counter_self;
	bool has_counter;
	uint32_t depth; /* 0 = top level */
	unsigned flags;
	/*
	 * --off-cpu. has_sched: sched splits the span, self_sched its self time
	 * (sched less its children's). unmeasured_ns: the part of total_ns not in
	 * sched, which began before its thread was tracked (a span open at
	 * attach: LP_SPAN_STARTED_BEFORE); 0 for every other span. Without
	 * has_sched, nothing of it was measured: it did not end at an event of
	 * its thread (closed at the thread's exit or the recording's end),
	 * unmeasured_ns is 0, and sched and self_sched are not set: read them
	 * only with has_sched (nest.c leaves them, half of the span's bytes).
	 */
	bool has_sched;
	struct lp_sched sched, self_sched;
	uint64_t unmeasured_ns;
};

/*
 * Keyed span-pair specs (pairs.h) put each span on a track: a synthetic
 * thread next to the real one, tid LP_TRACK_TID(n, tid). A track is no thread
 * of its own: its time is not recorded thread time (it overlaps the thread's
 * spans), and a track span's self time is its time outside the top-level
 * spans of its thread.
 */
#define LP_TRACK_BIT 0x40000000u      /* real tids stay below 2^22 (PID_MAX_LIMIT) */
#define LP_TRACK_TID(n, tid) (LP_TRACK_BIT | (uint32_t)(n) << 22 | (tid))
#define LP_TRACK_IS(t) (((t) & LP_TRACK_BIT) != 0)
#define LP_TRACK_NO(t) (((t) >> 22) & 0xffu)
#define LP_TRACK_REAL(t) ((t) & 0x3fffffu)
#define LP_TID_MAX 0x3fffffu          /* above it, a tid would reach into the track number */

/* The path id a top-level span's parent has, and every span's without a path callback. */
#define LP_NEST_PATH_TOP 0u

struct lp_nest_sink {
	/* Called once per span, children before their parent. */
	void (*span)(void *ctx, const struct lp_span *s);
	/*
	 * Optional: called when a span opens (at its enter, or when it is rebuilt
	 * from its exit), with the path id of the span it opens in
	 * (LP_NEST_PATH_TOP at the top level) and its name; the id it returns is
	 * the span's, handed back in lp_span.path when it closes and to the
	 * spans opened inside it. The spans around an open span never change, so
	 * its path at the close is the one it had at the open.
	 */
	uint32_t (*path)(void *ctx, uint32_t parent, uint32_t name);
	void *ctx;
};

struct lp_nest_totals {
	uint64_t spans;           /* completed spans, forced ones included */
	uint64_t unterminated;    /* spans closed without their exit: the four below add up to it */
	uint64_t unterminated_outer;  /* closed by the exit of a span around them */
	uint64_t unterminated_pairs;  /* given up by a span pair's rule (lp_pairs_stats says which) */
	uint64_t unterminated_thread; /* at their thread's exit, or their process's exit or exec */
	uint64_t unterminated_end;    /* still open when the recording ended */
	uint64_t uncertain;       /* spans open while their thread lost events */
	uint64_t unmatched_exits; /* exits with no open span of that name */
	uint64_t started_before;  /* spans open at attach, rebuilt from their exits */
	uint64_t too_deep;        /* enters skipped past LP_NEST_MAX_DEPTH */
	uint64_t lost_seen;       /* lost events revealed by sequence gaps */
	uint64_t first_ns, last_ns; /* window: first entry .. last exit */
	uint64_t recorded_ns;     /* sum over threads (not tracks) of time under top-level spans */
	uint64_t counter_total;   /* sum of every span's self counter delta */
	/*
	 * threads with at least one span (its tracks' included, a tid counted
	 * once for them: complete after lp_nest_finish)
	 */
	uint32_t threads;
	/* --off-cpu: spans split whole, split in part (unmeasured_ns), not split. */
	uint64_t sched_measured, sched_partial, sched_unmeasured;
};

struct lp_thread_info {
	uint32_t pid, tid;
	uint64_t spans;
	uint64_t recorded_ns;
	uint64_t lost_seen;
	uint32_t max_depth;
	struct lp_sched sched; /* --off-cpu: of its top-level spans, those split */
};

struct lp_nest;
struct strtab;

struct lp_nest *lp_nest_new(const struct lp_nest_sink *sink);
void lp_nest_free(struct lp_nest *n);
/* 0 or -errno (ENOMEM). */
int lp_nest_event(struct lp_nest *n, const struct lp_event *ev);
/*
 * Process pid is recorded from since_ns on. With open_before, its threads
 * that exist already may be inside spans that began earlier: an exit with no
 * open span of its name then closes a span rebuilt from since_ns (flagged
 * LP_SPAN_STARTED_BEFORE) that encloses all the thread recorded so far.
 * Without it (a launched or freshly exec'ed program) such an exit is counted
 * as unmatched, unless its marker's file began to be recorded after the
 * thread began (a library attached later): the span is rebuilt from then.
 * Processes never announced are treated as open_before = false.
 */
int lp_nest_process_begin(struct lp_nest *n, uint32_t pid, uint64_t since_ns, bool open_before);
/*
 * The markers of a file start being recorded at gate_ns, in the middle of the
 * recording (a library attached late): what every thread has recorded so far
 * is noted, so that a span of that file rebuilt from gate_ns encloses only
 * what came after.
 */
void lp_nest_gate(struct lp_nest *n, uint64_t gate_ns);
/* tid was created at ts_ns, during the recording: it has no older spans. */
int lp_nest_thread_begin(struct lp_nest *n, uint32_t pid, uint32_t tid, uint64_t ts_ns);
/* The thread exited: its open spans close, unterminated, at end_ns. */
void lp_nest_thread_end(struct lp_nest *n, uint32_t pid, uint32_t tid, uint64_t end_ns);
/*
 * The process exec'ed or ended: the open spans of all its threads close at
 * end_ns, and a new program image starts with nothing open.
 */
void lp_nest_process_end(struct lp_nest *n, uint32_t pid, uint64_t end_ns);
/*
 * Closes every span still open, as unterminated, at end_ns (inner ones 1 ns
 * earlier per level, so their ends stay strictly inside their parent's).
 */
void lp_nest_finish(struct lp_nest *n, uint64_t end_ns);
/* Spans open on the thread now (0 for a thread never seen). */
size_t lp_nest_depth(const struct lp_nest *n, uint32_t pid, uint32_t tid);
/* Marks the names and metadata of the open spans (strtab.h: a collection under way). */
void lp_nest_mark(const struct lp_nest *n, struct strtab *st);
const struct lp_nest_totals *lp_nest_totals(const struct lp_nest *n);
/* Threads in order of first appearance. */
size_t lp_nest_threads(const struct lp_nest *n, const struct lp_thread_info **out);

#endif
