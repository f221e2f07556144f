/* SPDX-License-Identifier: MIT */
/*
 * Completed spans aggregated per call path: the names from a thread's
 * top-level span down to the span (metadata is not part of a path), with
 * calls, total and self time. The tree `report --tree` and `--folded` print.
 *
 * The nesting builder (nest.h) knows a span's path when the span opens: it
 * asks lp_paths_open for the path's id with the id of the span it opens in
 * and its name, which finds or makes that node of the tree, and hands the id
 * back with the completed span, whose calls, total and self time
 * lp_paths_add adds to the node. Both are O(1) per span; memory grows with
 * the distinct paths (capped), never with spans, threads or depth.
 */
#ifndef LP_PATHS_H
#define LP_PATHS_H

#include "jsonw.h"
#include "nest.h"
#include "strtab.h"

/*
 * Distinct call paths kept in the tree. 20000 holds every path of programs
 * with a few thousand span names used in a few contexts each (test_hostile's
 * 600+ names in 2 contexts), costs ~2 MiB of memory at most (56 bytes a node
 * and an index of 16-byte slots at most half full; ~1 MiB more if every path
 * kept had an "(other paths)" child) and ~3 MiB in the summary. The paths
 * kept are the first ones opened: past the cap a span that opens a new path
 * is counted in an "(other paths)" node under the deepest part of its path
 * that is kept, with every span it calls (the node's calls and self time
 * count them all, its total the outermost ones, whose time holds the rest):
 * no time is lost, only detail.
 */
#define LP_PATHS_MAX 20000
#define LP_PATHS_OTHER_NAME "(other paths)"
/*
 * lp_paths_open's id when memory ran out, for the span and all it calls (the
 * value the flags of folded spans' ids leave as it is: see paths.c).
 */
#define LP_PATHS_NOMEM 0xbfffffffu

struct lp_paths;

/* A node of the finished tree, in pre-order (see lp_paths_nodes). */
struct lp_path_node {
	int64_t parent; /* index in the array, -1 for a top-level span */
	uint32_t name;  /* string id; meaningless when folded */
	bool folded;    /* an "(other paths)" node: spans whose paths were past the cap */
	uint32_t depth;
	uint64_t calls, total_ns, self_ns;
};

/* The tree's root is the parent of the top-level spans: its id is LP_NEST_PATH_TOP. */
struct lp_paths *lp_paths_new(void);
void lp_paths_free(struct lp_paths *p);
/*
 * A span named name opens inside the span whose path id is parent: the id of
 * its own path (lp_nest_sink.path). Out of memory: LP_PATHS_NOMEM, as are the
 * spans it calls.
 */
uint32_t lp_paths_open(struct lp_paths *p, uint32_t parent, uint32_t name);
/*
 * A completed span, of path s->path (lp_paths_open's): 0, -ENOMEM (that id
 * was LP_PATHS_NOMEM: the span is not counted), -EINVAL (an id not given).
 */
int lp_paths_add(struct lp_paths *p, const struct lp_span *s);
/*
 * The tree in pre-order, children by total time (largest first, ties by
 * name text, then calls): a parent's index is below its children's. A path
 * whose spans are all still open has 0 calls and 0 time; it is there all
 * the same, above the spans under it that completed (after lp_nest_finish
 * every span has closed, and no node has 0 calls). Caller frees *out. The
 * count, or -ENOMEM.
 */
long lp_paths_nodes(const struct lp_paths *p, const struct strtab *st, struct lp_path_node **out);
/* Paths kept (nodes of the tree that are not "(other paths)"), and spans folded. */
uint64_t lp_paths_kept(const struct lp_paths *p);
uint64_t lp_paths_folded_spans(const struct lp_paths *p);
/*
 * Calls fn with every string id the tree holds, for a string table that
 * collects the ids nobody holds.
 */
void lp_paths_each_name(const struct lp_paths *p, void (*fn)(void *ctx, uint32_t id), void *ctx);
/* Marks every name the tree holds (strtab.h: a collection under way). */
void lp_paths_mark(const struct lp_paths *p, struct strtab *st);
/* Writes the summary's "paths" object to w; 0 or -ENOMEM. */
int lp_paths_write(const struct lp_paths *p, const struct strtab *st, struct jw *w);

#endif
