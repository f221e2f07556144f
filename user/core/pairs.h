/* SPDX-License-Identifier: MIT */
/*
 * Turns the probes of span-pair specs (decoded lp_usdt_event) into the enter /
 * exit events the nesting builder takes. Pure: no libbpf.
 *
 * - An entry renders the spec's name and metadata from its arguments and
 *   enters a span on its thread.
 * - An exit of an unkeyed spec closes the innermost span of that spec open on
 *   the thread. Spans of other specs opened inside it and still open are
 *   closed with it, unterminated, each by an exit of its own first (the
 *   builder closes the innermost span of an exit's name, and two specs may
 *   make the same name); markers' spans inside it, by the nesting builder.
 * - Keyed specs (key=) can cross other spans (a transaction spans several
 *   queries; an exception flies out of calls): each of their spans goes on a
 *   track of its own, a synthetic thread LP_TRACK_TID(n, tid) next to the real
 *   one, with at most one open span at a time, so every track nests strictly.
 *   Track n is the lowest one free when the span starts. An exit matches the
 *   open span of its spec whose entry key equals its key.
 * - match=name (unkeyed specs): an exit renders the spec's name from its own
 *   arguments and closes the innermost open span of the spec of that name;
 *   those opened inside it close with it, unterminated (unwound).
 * - A probe with a predicate ([argN==V], [argN!=V]) counts only when it holds.
 * - reentry=continue (unkeyed specs): an entry rendering the name and metadata
 *   of the spec's open span belongs to it; another one closes it first.
 * - abort= (unkeyed specs): the probe gives up the innermost open span of the
 *   spec, unterminated, with those opened inside it.
 * - meta= and args= with exit arguments are rendered again at the exit.
 * - reentry=close (unkeyed specs): an entry while a span of its spec is open
 *   on the thread first closes that span, unterminated, with everything opened
 *   inside it (a PostgreSQL query that fails never fires query__done: the next
 *   query's start closes it).
 */
#ifndef LP_PAIRS_H
#define LP_PAIRS_H

#include "decode.h"
#include "spec.h"
#include "strtab.h"

#define LP_PAIRS_MAX_TRACKS 255       /* keyed spans open at once per thread */
#define LP_PAIRS_MAX_OPEN LP_NEST_MAX_DEPTH /* unkeyed spans open at once per thread */

struct lp_pairs_sink {
	int (*event)(void *ctx, const struct lp_event *ev);
	/* A track's thread ended: its open spans close at end_ns. */
	void (*track_end)(void *ctx, uint32_t pid, uint32_t track_tid, uint64_t end_ns);
	void *ctx;
};

struct lp_pairs_stats {
	uint64_t unmatched_keyed; /* keyed exits with no open span of that key */
	uint64_t too_many_tracks; /* keyed entries past LP_PAIRS_MAX_TRACKS: skipped */
	uint64_t too_deep;        /* unkeyed entries past LP_PAIRS_MAX_OPEN, and their exits: skipped */
	uint64_t bad_spec;        /* records naming no spec of ours: skipped */
	uint64_t bad_tid;         /* records of a tid above LP_TID_MAX (no task has one): skipped */
	uint64_t reentry_closed;  /* spans closed unterminated by a reentry=close entry */
	uint64_t unwound;         /* match=name: spans closed unterminated by an outer exit */
	uint64_t aborted;         /* spans given up, unterminated, by an abort= probe */
	/* spans of other specs open inside one that closed (by its exit, abort= or reentry=close) */
	uint64_t enclosed;
	uint64_t continued;       /* reentry=continue entries that belonged to the open span */
	/*
	 * Skipped: probes whose [argN==V] predicate did not hold, and exits with
	 * a predicate while nothing of their spec was open on the thread.
	 */
	uint64_t filtered;
	/*
	 * Sites of the specs' probes not attached (libbpf cannot decode their
	 * arguments) while the probe's other sites were: set by the recorder.
	 */
	uint64_t sites_skipped;
};

struct lp_pairs;

/* specs stays owned by the caller and must outlive the result. NULL on ENOMEM. */
struct lp_pairs *lp_pairs_new(const struct lp_spec *specs, size_t nspecs, struct strtab *st,
			      const struct lp_pairs_sink *sink);
void lp_pairs_free(struct lp_pairs *p);
/* 0 or -errno (ENOMEM, or the sink's). */
int lp_pairs_event(struct lp_pairs *p, const struct lp_usdt_event *ue);
/* The thread ended: its tracks end too (sink.track_end); its open spans are forgotten. */
void lp_pairs_thread_end(struct lp_pairs *p, uint32_t pid, uint32_t tid, uint64_t end_ns);
/* The process exec'ed or ended: everything of it is forgotten (the builder closes it). */
void lp_pairs_process_end(struct lp_pairs *p, uint32_t pid);
const struct lp_pairs_stats *lp_pairs_stats(const struct lp_pairs *p);
/* The recorder's count of probe sites not attached (lp_pairs_stats.sites_skipped). */
void lp_pairs_set_sites_skipped(struct lp_pairs *p, uint64_t n);
/* Marks the names of the open spans (strtab.h: a collection under way). */
void lp_pairs_mark(const struct lp_pairs *p, struct strtab *st);

#endif
