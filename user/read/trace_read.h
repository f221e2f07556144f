/* SPDX-License-Identifier: MIT */
/*
 * Reads a trace as `record` writes it (user/core/trace.c): one event per line,
 * streaming, from the last line to the first, so that memory does not grow
 * with the file (1.5 GB for 10M spans). Backwards, because the writer puts a
 * thread's spans children before their parent (lp_nest_sink order): read from
 * the end, every span comes after the spans that enclose it, and its depth is
 * known when it arrives. The otherData line, the last one, comes first.
 *
 * Each line is parsed by a small JSON scanner of its own, not json-c: 10M
 * lines through a DOM parser cost tens of seconds; this costs a few.
 */
#ifndef LP_TRACE_READ_H
#define LP_TRACE_READ_H

#include <json-c/json.h>

#include "nest.h"
#include "text.h"

/* A trace line longer than this is refused (names and metadata are cut far below). */
#define LP_TRACE_LINE_MAX (1u << 20)
/* Bytes read from the file at a time. */
#define LP_TRACE_READ_CHUNK (1u << 20)

/* One span ("ph":"X"). Texts are decoded JSON strings: any bytes, not NUL-terminated. */
struct lp_tr_span {
	uint32_t pid, tid;
	uint64_t start_ns, dur_ns; /* ts and dur, from the recording's start */
	const char *name;
	size_t name_len;
	/*
	 * The string items of args, the span's metadata, as a blob: for each item
	 * the key then the value, each a 2-byte little-endian length and its bytes
	 * (lp_tr_meta_next() walks it). Same metadata, same blob.
	 */
	const char *meta;
	size_t meta_len;
	uint64_t counter; /* args.counter */
	bool has_counter;
	uint64_t self_counter; /* args.self_counter */
	bool has_self_counter;
	unsigned flags; /* LP_SPAN_UNTERMINATED, _UNCERTAIN, _STARTED_BEFORE (nest.h) */
	/*
	 * args.detail, a span pair's args= (an object): its string items as a blob
	 * like meta's; has_detail even when the object is empty.
	 */
	const char *detail;
	size_t detail_len;
	bool has_detail;
	/*
	 * --off-cpu's split, args.cpu_us...involuntary_switches (has_sched: cpu_us
	 * is there), and args.off_cpu_unmeasured_us (0 when absent).
	 */
	bool has_sched;
	struct lp_sched sched;
	uint64_t unmeasured_ns;
};

struct lp_tr_sink {
	/* The otherData object (NULL when the trace has none), before any event. */
	int (*other_data)(void *ctx, json_object *other);
	/* Optional: otherData as the file has it, byte for byte (NULL, 0: none), just after. */
	int (*other_data_text)(void *ctx, const char *json, size_t len);
	int (*span)(void *ctx, const struct lp_tr_span *s);
	/* Optional: --off-cpu's "blocked" and "runq" slices (category off-cpu, empty args). */
	int (*off_cpu)(void *ctx, const struct lp_tr_span *s);
	/* A process_name or thread_name event. */
	int (*thread_name)(void *ctx, bool process, uint32_t pid, uint32_t tid, const char *name,
			   size_t len);
	void *ctx;
};

struct lp_tr_stats {
	uint64_t lines, spans;
	uint64_t skipped; /* lines that are neither an event nor the trace's frame */
};

/*
 * Reads path from its end, calling sink for each event. A callback's nonzero
 * return stops the reading and is returned (-ECANCELED: a stop on purpose).
 * 0 or -errno.
 */
int lp_trace_read(const char *path, const struct lp_tr_sink *sink, struct lp_tr_stats *stats);

enum lp_tr_kind {
	LP_TR_OTHER = 0,        /* an event of another kind: ignored */
	LP_TR_SPAN = 1,         /* "ph":"X" */
	LP_TR_THREAD_NAME = 2,  /* "ph":"M", thread_name: s->name is the name given */
	LP_TR_PROCESS_NAME = 3, /* "ph":"M", process_name */
	LP_TR_OFF_CPU = 4,      /* "ph":"X" of category "off-cpu": a wait, not a span */
};

/* Where a parsed line's texts are kept, reused from line to line. */
struct lp_tr_scratch {
	struct lp_buf text; /* the name, then keys and values while they are parsed */
	struct lp_buf blob; /* the meta blob */
	struct lp_buf detail; /* the detail blob */
};

/*
 * Parses one event line (a leading ',' allowed) into s, its texts in sc (valid
 * until the next call). An lp_tr_kind, or -EINVAL when the line is not an event.
 */
int lp_tr_parse_event(const char *line, size_t len, struct lp_tr_span *s,
		      struct lp_tr_scratch *sc);
void lp_tr_scratch_free(struct lp_tr_scratch *sc);

/* Appends a key or a value to a meta blob (its 2-byte length, cut at 65535 bytes). 0 or -ENOMEM. */
int lp_tr_meta_put(struct lp_buf *b, const char *s, size_t len);

/* The next key and value of a meta blob at *pos; false at its end. */
bool lp_tr_meta_next(const char *meta, size_t len, size_t *pos, const char **key, size_t *klen,
		     const char **val, size_t *vlen);

#endif
