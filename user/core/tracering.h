/* SPDX-License-Identifier: MIT */
/*
 * A bounded trace (record --trace-last, --trace-max-size), whatever the
 * trace's format: the writer (trace.c for JSON) encodes each event and hands
 * its bytes here with its times; this decides which reach the file and emits
 * them, in their order, through the writer's emit(). Two policies:
 *
 *   window (last_ns): a ring of encoded events in memory. A span is kept when
 *     it ended within the last last_ns of the recording: it overlaps the
 *     window [end - last_ns, end], so the spans around the window's spans are
 *     there too. Older ones leave the ring as later ones come. The ring holds
 *     at most max_bytes: past them the oldest go early and the window is cut
 *     short (lp_tring_stats from_ns says where it begins). At the end the
 *     events kept are emitted.
 *   budget (max_bytes, no window): events are emitted as they come until the
 *     next span would take the output past max_bytes: it and every later one
 *     are left out. The spans kept are the first ones, in the order they closed.
 *
 * Events inside a span (--off-cpu's slices, lp_tring_inner) come before the
 * span closes: they are held until it closes, share its fate and come right
 * before it. Events kept whatever happens (process and thread names,
 * lp_tring_keep) come after all the others. Every event stands on its own:
 * what several events refer to (a format's interned strings) goes around it.
 *
 * An event's cost is what the policies count: its bytes and the writer's
 * overhead, or what the writer says it costs (lp_tring_span_cost: Perfetto's
 * packets, built only as they are written). Two formats of one recording
 * (--format json,perfetto) keep the same spans: the second one's ring follows
 * the first's (lp_tring_opts.leader), given every event right after it.
 */
#ifndef LP_TRACERING_H
#define LP_TRACERING_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* The ring's bytes with a window and no max_bytes (--trace-last without --trace-max-size). */
#define LP_TRACE_LAST_MEMORY (256ull << 20)
/* --trace-max-size from 4 KiB (a trace's opening and a few spans) to 1 TiB. */
#define LP_TRACE_SIZE_MIN (4ull << 10)
#define LP_TRACE_SIZE_MAX (1ull << 40)
/* The longest event the ring takes (its length has 31 bits); a longer one is left out. */
#define LP_TRING_EVENT_MAX 0x7fffffffu

struct lp_tring_opts {
	uint64_t last_ns;   /* the window; 0: none (the budget policy) */
	uint64_t max_bytes; /* events' bytes, with overhead; 0 with a window: LP_TRACE_LAST_MEMORY */
	uint64_t used_bytes; /* budget: bytes already in the output (its opening) */
	uint32_t overhead;   /* bytes the writer adds to every event (JSON: "\n,") */
	/* Writes one event, given in one or two pieces (b: its part past the ring's wraparound). */
	int (*emit)(void *ctx, const char *a, size_t alen, const char *b, size_t blen);
	void *ctx;
	/*
	 * NULL, or the ring of the same recording's other format, given the same
	 * events each just before this one: this one keeps what it keeps. Budget:
	 * a span the leader left out, and every one after, is left out here too
	 * (and here first, past this ring's own max_bytes). Window: both rings
	 * end at the later of their windows' starts (each cut by its own bound).
	 */
	struct lp_tring *leader;
};

struct lp_tring_stats {
	uint64_t spans, spans_left_out; /* span events kept, left out */
	uint64_t inner, inner_left_out; /* events inside spans (--off-cpu's slices) */
	uint64_t bytes;                 /* of the events kept, with the overhead */
	uint64_t peak_bytes;            /* window: the most the ring and the held events took */
	/*
	 * window: the spans kept are exactly those that ended in [from_ns, end];
	 * cut: the ring's bound left out spans that ended after end - last_ns
	 * (from_ns is later). budget: full: the first span left out ended at full_ns.
	 */
	uint64_t from_ns, full_ns;
	bool cut, full;
};

struct lp_tring;

/* NULL when out of memory. */
struct lp_tring *lp_tring_new(const struct lp_tring_opts *o);
void lp_tring_free(struct lp_tring *r);
/*
 * A span's event, of thread (pid, tid), from start_ns to end_ns: the
 * events held inside it go with it. 0, an emit error or -ENOMEM (the event
 * is then left out, and counted).
 */
int lp_tring_span(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		  uint64_t end_ns, const void *ev, size_t len);
/* The same at the writer's cost, instead of len and the overhead (at most UINT32_MAX). */
int lp_tring_span_cost(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		       uint64_t end_ns, const void *ev, size_t len, uint64_t cost);
/*
 * An event of thread (pid, tid) from start_ns on, inside its innermost open
 * span: held for the first span of the thread to close that began at or
 * before start_ns. 0 or -ENOMEM.
 */
int lp_tring_inner(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
		   const void *ev, size_t len);
int lp_tring_inner_cost(struct lp_tring *r, uint32_t pid, uint32_t tid, uint64_t start_ns,
			const void *ev, size_t len, uint64_t cost);
/* An event kept whatever happens. 0 or -ENOMEM. */
int lp_tring_keep(struct lp_tring *r, const void *ev, size_t len);
/*
 * The recording ended at end_ns (no span comes after this): the window's
 * last cut, and what was kept and left out. Ends a linked ring (leader or
 * follower) too, at the same window.
 */
void lp_tring_end(struct lp_tring *r, uint64_t end_ns, struct lp_tring_stats *st);
/* Emits the events kept, then those kept whatever happens. 0 or the first error. */
int lp_tring_flush(struct lp_tring *r);

#endif
