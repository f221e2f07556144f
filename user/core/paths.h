/* SPDX-License-Identifier: MIT */
/*
 * Completed spans aggregated per call path: the names from a thread's
 * top-level span down to the span (metadata is not part of a path), with
 * calls, total and self time. The tree `report --tree` and `--folded` print.
 *
 * It is fed the stream user/core/nest.c delivers: per thread, children before
 * their parent, and a span knows only its own name and depth. So each thread
 * keeps, per depth, the aggregate of the completed spans whose parent is
 * still open; a span takes the aggregate one level below as its children, and
 * a top-level span merges its whole aggregate into the tree. Memory grows
 * with the distinct paths (capped) and the open depth, never with spans.
 */
#ifndef LP_PATHS_H
#define LP_PATHS_H


#include "jsonw.h"
#include "nest.h"
#include "strtab.h"

/*
 * Distinct call paths kept in the tree, and again at most as many in the
 * aggregates of spans still open. 20000 holds every path of programs with a
 * few thousand span names used in a few contexts each (test_hostile's 600+
 * names in 2 contexts), costs ~1 MiB of memory per side (48-byte nodes and
 * their index) and ~3 MiB in the summary. Past it a span whose path is new
 * is added to an "(other paths)" node under the deepest part of its path
 * that is kept, with everything below it: no time is lost, only detail.
 */
#define LP_PATHS_MAX 20000
#define LP_PATHS_OTHER_NAME "(other paths)"

struct lp_paths;

/* A node of the finished tree, in pre-order (see lp_paths_nodes). */
struct lp_path_node {
	int64_t parent; /* index in the array, -1 for a top-level span */
	uint32_t name;  /* string id; meaningless when folded */
	bool folded;    /* an "(other paths)" node: spans whose paths were past the cap */
	uint32_t depth;
	uint64_t calls, total_ns, self_ns;
};

struct lp_paths *lp_paths_new(void);
void lp_paths_free(struct lp_paths *p);
/* One completed span, in nest.c's order. 0 or -ENOMEM, -EINVAL (depth past the limit). */
int lp_paths_add(struct lp_paths *p, const struct lp_span *s);
/*
 * The tree in pre-order, children by total time (largest first, ties by
 * name text, then calls): a parent's index is below its children's. Spans
 * of a thread whose top-level span has not completed are not in it (nest.c
 * closes every span at the end of a recording). Caller frees *out. The
 * count, or -ENOMEM.
 */
long lp_paths_nodes(const struct lp_paths *p, const struct strtab *st, struct lp_path_node **out);
/* Paths kept (nodes of the tree that are not "(other paths)"), and spans folded. */
uint64_t lp_paths_kept(const struct lp_paths *p);
uint64_t lp_paths_folded_spans(const struct lp_paths *p);
/*
 * Calls fn with every string id the aggregate holds (tree and open spans),
 * for a string table that collects the ids nobody holds.
 */
void lp_paths_each_name(const struct lp_paths *p, void (*fn)(void *ctx, uint32_t id), void *ctx);
/* Marks every name the aggregate holds (strtab.h: a collection under way). */
void lp_paths_mark(const struct lp_paths *p, struct strtab *st);
/* Writes the summary's "paths" object to w; 0 or -ENOMEM. */
int lp_paths_write(const struct lp_paths *p, const struct strtab *st, struct jw *w);

#endif
