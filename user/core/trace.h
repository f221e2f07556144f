/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event writer (JSON object format, "traceEvents"). Spans are
 * complete ("X") events written as they close, so memory does not grow with
 * the trace; viewers sort them. Timestamps are microseconds with exactly three
 * decimals (ns precision), relative to the start of recording.
 */
#ifndef LP_TRACE_H
#define LP_TRACE_H

#include "jsonw.h"
#include "nest.h"
#include "outfile.h"
#include "strtab.h"
#include "tracering.h"

/* A prebuilt piece of JSON in lp_trace.frags, for one string id. */
struct lp_trace_frag {
	size_t off;
	uint32_t len1; /* length + 1; 0: not built yet */
};

/* A thread's `,"pid":P,"tid":T` (at most 38 bytes), in lp_trace.ids by tid. */
struct lp_trace_ids {
	uint32_t pid, tid;
	uint8_t len; /* 0: empty */
	char text[40];
};

#define LP_TRACE_IDS 64

struct lp_trace {
	struct lp_outfile out;
	struct jw w;
	const struct strtab *st;
	uint64_t base_ns;
	uint64_t spans;
	uint64_t off_cpu; /* --off-cpu: "blocked" and "runq" slices written */
	/*
	 * Per string id, what every span with that name or metadata writes the
	 * same: the escaped name, and the metadata's args items (parsed, keys
	 * made unique, escaped). Built at first use; a zeroed lp_trace is valid.
	 */
	struct lp_buf frags;
	struct lp_trace_frag *names, *metas;
	size_t names_cap, metas_cap;
	size_t frags_dead; /* bytes of frags whose ids were forgotten (lp_trace_forget) */
	struct lp_trace_ids ids[LP_TRACE_IDS];
	/*
	 * --trace-last, --trace-max-size (lp_trace_bound): w encodes each event
	 * into ev, the ring decides which reach the file's writer, file. NULL:
	 * w writes the file.
	 */
	struct lp_tring *ring;
	struct jw file;
	struct lp_buf ev;
};

/* The trace file name in directory dirfd (lp_outfile_openat). 0 or -errno. */
int lp_trace_openat(struct lp_trace *t, int dirfd, const char *name, const struct strtab *st,
		    uint64_t base_ns);
/* The same relative to the working directory. */
int lp_trace_open(struct lp_trace *t, const char *path, const struct strtab *st, uint64_t base_ns);
/* The same into a stream the caller owns (in memory, for the tests): closing it commits nothing. */
void lp_trace_open_stream(struct lp_trace *t, FILE *f, const struct strtab *st, uint64_t base_ns);
void lp_trace_span(struct lp_trace *t, const struct lp_span *s);
/*
 * --off-cpu: thread tid was off its CPU from off_ns to on_ns, asleep until
 * wake_ns: a "blocked" and a "runq" slice (category "off-cpu", each only when
 * not empty; "blocked" ends 1 ns early when "runq" follows). The thread runs no code then, so they lie inside its innermost
 * open span: viewers show them as its children.
 */
void lp_trace_off_cpu(struct lp_trace *t, uint32_t pid, uint32_t tid, uint64_t off_ns,
		      uint64_t wake_ns, uint64_t on_ns);
/* A process_name (tid = pid) or thread_name metadata event; name is a string id. */
void lp_trace_name(struct lp_trace *t, bool process, uint32_t pid, uint32_t tid, uint32_t name);
/*
 * Text id was freed (strtab_gc_end()'s on_freed): its fragments go, since the
 * id may name another text next.
 */
void lp_trace_forget(struct lp_trace *t, uint32_t id);
/* The fragments of forgotten ids leave frags: it holds only live texts' after. */
void lp_trace_compact(struct lp_trace *t);
/*
 * --trace-last (last_ns) and --trace-max-size (max_bytes; 0: none): from now
 * on the trace keeps the events tracering.h says, and the process and thread
 * names whatever happens. Right after opening. 0 or -ENOMEM.
 */
int lp_trace_bound(struct lp_trace *t, uint64_t last_ns, uint64_t max_bytes);
/*
 * The recording ended at end_ns, every span is closed: what the bound kept
 * and left out (all 0 without one). The events kept are written at lp_trace_close.
 */
void lp_trace_bound_end(struct lp_trace *t, uint64_t end_ns, struct lp_tring_stats *st);
/* Ends the file with otherData (a JSON object text from the caller) and renames it into place. */
int lp_trace_close(struct lp_trace *t, const char *other_data_json);
/* Removes the temporary file, frees what the writer holds (lp_trace_close does too). */
void lp_trace_abort(struct lp_trace *t);

/*
 * The keys of args the profiler writes itself (NULL-terminated): a metadata
 * key equal to one is renamed (lp_meta_keys). The Perfetto trace's too.
 */
extern const char *const lp_trace_reserved_keys[];

/* Writes a span's args: its metadata items, then the profiler's own keys. */
void lp_trace_write_args(struct jw *w, const struct strtab *st, const struct lp_span *s);

#endif
