/* SPDX-License-Identifier: MIT */
/*
 * What the pictures of a recording draw (report --svg, --html), built while
 * the trace streams by (trace_read.h), in memory that does not grow with the
 * number of spans:
 *
 * - the timeline: per thread and depth, the spans at a few zoom levels. At
 *   level l the recording is cut into LP_PICTURE_PX * LP_PICTURE_ZOOM^l
 *   buckets; a span at least one bucket wide is kept as itself, narrower
 *   neighbours of one thread and depth that start in the same bucket are
 *   merged into one block (how many, their names if they share one, their
 *   summed time and counter). Levels are kept from the widest on while all
 *   their items together stay within LP_HTML_BLOCKS_MAX;
 * - the call tree: one node per path of (name, metadata) from a top-level
 *   span down, with calls, total and self time, built from the nesting, or
 *   taken from the summary's "paths" when it has them;
 * - the groups: each distinct (name, metadata) once, up to
 *   LP_PICTURE_GROUPS_MAX.
 */
#ifndef LP_PICTURE_H
#define LP_PICTURE_H

#include "map.h"
#include "text.h"
#include "trace_read.h"

#define LP_PICTURE_PX 2048     /* buckets across the recording at the widest zoom level */
#define LP_PICTURE_ZOOM 8      /* each level's buckets this many times narrower */
#define LP_PICTURE_LEVELS 6    /* at most: the finest is 8^5 = 32768 times the widest */
/* Timeline items (spans and merged blocks) over all zoom levels kept. */
#define LP_HTML_BLOCKS_MAX 400000
/* Distinct (name, metadata) groups kept; spans of later ones are "(other names)". */
#define LP_PICTURE_GROUPS_MAX 4096
/* Call-tree nodes built from the trace; deeper paths past it are "(more call paths)". */
#define LP_PICTURE_PATHS_MAX 65536

#define LP_PIC_MIXED UINT32_MAX /* a block whose spans have several groups */
#define LP_PIC_GROUP_OTHER 0    /* the group of spans past LP_PICTURE_GROUPS_MAX */
#define LP_PIC_GROUP_MORE 1     /* the call-tree node of paths past LP_PICTURE_PATHS_MAX */
#define LP_PIC_NO_PARENT UINT32_MAX

/* A span (count 1) or a block of merged spans, on one thread at one depth. */
struct lp_pic_item {
	uint64_t start, end; /* ns from the recording's start */
	uint64_t busy;       /* the spans' summed durations */
	uint64_t counter;    /* their summed counters (args.counter) */
	uint32_t thread;     /* index into threads */
	uint32_t group;      /* or LP_PIC_MIXED */
	uint32_t count;      /* spans */
	uint16_t depth;
	uint8_t flags; /* LP_SPAN_* of any of its spans */
};

/* Item s merged into block b: its time, counter and spans added, the group kept if shared. */
void lp_pic_item_merge(struct lp_pic_item *b, const struct lp_pic_item *s);

struct lp_pic_level {
	double px; /* ns per bucket */
	struct lp_pic_item *items;
	size_t n, cap;
	bool dropped; /* over budget: not drawn */
	bool merged;  /* holds a block of more than one span */
};

struct lp_pic_group {
	size_t name_off, name_len; /* in texts: raw bytes as the trace had them */
	size_t meta_off, meta_len; /* the meta blob (trace_read.h) */
	uint64_t spans;
	bool has_counter;
	int color; /* palette index (lp_picture_colors) */
};

struct lp_pic_open; /* a block being merged, per thread, depth and level */

struct lp_pic_frame {
	uint64_t start, end;
	uint32_t node;
};

struct lp_pic_thread {
	uint32_t pid, tid;
	size_t name_off, name_len; /* in texts; name_len 0: none given */
	uint64_t spans;
	uint32_t max_depth;
	uint64_t prev_end; /* the last span read (from the end): the next must not end later */
	struct lp_pic_frame *stack; /* spans enclosing the next one */
	size_t nstack, stack_cap;
	struct lp_pic_open *rows; /* [depth * LP_PICTURE_LEVELS + level] */
	size_t rows_cap;          /* depths */
};

struct lp_pic_node {
	uint32_t parent; /* LP_PIC_NO_PARENT for the root */
	uint32_t group;  /* the root's: LP_PIC_MIXED */
	uint64_t calls, total_ns, self_ns;
};

struct lp_picture {
	uint64_t extent_ns;         /* the time axis: 0 .. extent_ns */
	uint64_t first_ns, last_ns; /* the spans' own extent */
	struct lp_pic_level levels[LP_PICTURE_LEVELS];
	int nlevels;  /* levels kept (>= 1 once finished) */
	size_t items; /* in the levels not dropped */
	struct lp_buf texts;
	struct lp_pic_group *groups;
	size_t ngroups, groups_cap;
	struct lp_map group_map;
	struct lp_pic_thread *threads;
	size_t nthreads, threads_cap;
	struct lp_map thread_map;
	struct lp_pic_node *nodes; /* nodes[0]: the root, all threads together */
	size_t nnodes, nodes_cap;
	struct lp_map node_map;
	bool tree_from_summary; /* nodes came from the summary's "paths": the trace adds none */
	/* What could not be drawn as it was: said on the page. */
	uint64_t spans;
	uint64_t other_spans;   /* of groups past LP_PICTURE_GROUPS_MAX */
	uint64_t dropped_spans; /* in items past LP_HTML_BLOCKS_MAX at the widest level */
	uint64_t too_deep;      /* deeper than LP_NEST_MAX_DEPTH: not drawn */
	uint64_t out_of_order;  /* spans that ended after the one read before them */
	uint64_t more_paths;    /* spans counted in a "(more call paths)" node */
};

/* A picture over the time axis 0 .. extent_ns (the recording). 0 or -errno. */
int lp_picture_init(struct lp_picture *p, uint64_t extent_ns);
void lp_picture_free(struct lp_picture *p);
/* The next span, in the order lp_trace_read() gives them. 0 or -errno. */
int lp_picture_span(struct lp_picture *p, const struct lp_tr_span *s);
/* A thread's (or, for a process, its main thread's) name. 0 or -errno. */
int lp_picture_thread_name(struct lp_picture *p, bool process, uint32_t pid, uint32_t tid,
			   const char *name, size_t len);
/*
 * A call-tree node from the summary's "paths", in their pre-order: parent is
 * an earlier node's index among those added, or -1 for a top-level path (a
 * child of the root). Switches the tree to the summary's. 0 or -errno.
 */
int lp_picture_path(struct lp_picture *p, int64_t parent, const char *name, size_t len,
		    uint64_t calls, uint64_t total_ns, uint64_t self_ns);
/* After the last span: open blocks ended, levels chosen, items sorted, self times. */
int lp_picture_finish(struct lp_picture *p);

/* The level to draw when one pixel is px_ns wide: the widest whose buckets fit in it. */
int lp_picture_level_for(const struct lp_picture *p, double px_ns);

/*
 * The call tree's nodes to draw, at most max: the widest (ancestors come
 * before their descendants), in pre-order with children by total time, the
 * widest first. *out (caller frees) holds node indices. 0 or -errno.
 */
int lp_picture_flame(const struct lp_picture *p, size_t max, uint32_t **out, size_t *n);

/*
 * A group's label, "name [k=v, k=v]" as the metadata was written (an item
 * with an empty value as its key alone), appended to out: untrusted bytes.
 */
int lp_picture_group_label(const struct lp_picture *p, uint32_t g, struct lp_buf *out);
/* The same for a row's name and metadata text. */
int lp_picture_label(const char *name, size_t nlen, const char *meta, size_t mlen,
		     struct lp_buf *out);

/* A group's (or thread's) text, as the trace had it: untrusted bytes. */
static inline const char *lp_picture_text(const struct lp_picture *p, size_t off)
{
	return p->texts.p + off;
}

/* Colours: the same name has the same one in every picture. */
#define LP_PICTURE_PALETTE 10
extern const char *const lp_picture_palette[LP_PICTURE_PALETTE];

struct lp_colors {
	struct lp_map map; /* hash of a name -> its palette index + 1 */
	size_t next;
};

/* Names added in order (the summary's rows, by self time) take the colours in turn. */
int lp_colors_add(struct lp_colors *c, const char *name, size_t len);
/* A name's colour: the one it was given, or one by its text's hash. */
int lp_colors_get(struct lp_colors *c, const char *name, size_t len);
void lp_colors_free(struct lp_colors *c);
/* Every group's colour. */
void lp_picture_colors(struct lp_picture *p, struct lp_colors *c);

#endif
