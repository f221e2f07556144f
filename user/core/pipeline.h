/* SPDX-License-Identifier: MIT */
/*
 * The recording pipeline, libbpf-free: ring-buffer records (bpf/wire.h) ->
 * decoder -> span pairs and nesting -> statistics, call paths and trace ->
 * the report. `leanprofiler record` feeds it what the ring buffer hands out;
 * the fuzzers, the unit tests and bench/pipeline feed it records built in
 * memory. One wiring: what is fuzzed and timed is what records.
 *
 * Calls, in order:
 *   lp_pipeline_new, lp_pipeline_add_process (the targets known at start),
 *   lp_pipeline_begin (recording starts), lp_pipeline_set_trace (optional),
 *   lp_pipeline_record per record (texts are collected between records),
 *   lp_pipeline_stop (nothing after this moment counts), lp_pipeline_finish,
 *   lp_pipeline_report, then the writers (report.h, trace.h), lp_pipeline_free.
 */
#ifndef LP_PIPELINE_H
#define LP_PIPELINE_H

#include "decode.h"
#include "nest.h"
#include "pairs.h"
#include "paths.h"
#include "report.h"
#include "spec.h"
#include "stats.h"
#include "strtab.h"
#include "pftrace.h"
#include "trace.h"

struct lp_pipeline_opts {
	const struct lp_spec *specs; /* span-pair specs (--span, --preset) */
	size_t nspecs;
	bool summary_only; /* rows keep LP_SUMMARY_ONLY_DURATIONS durations, then a histogram */
	size_t max_groups; /* groups (rows) of their own; 0: stats.h's default */
};

/*
 * What only the caller can do, and what it may watch. Every member is
 * optional; the observers exist for the tests and fuzzers, which check what
 * passes between the stages.
 */
struct lp_pipeline_hooks {
	/* A text the kernel could not read, from the file it lies in (decode.h). */
	long (*file_text)(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf,
			  size_t size);
	/* One the kernel could not look up, from the file of its marker (decode.h). */
	long (*site_text)(void *ctx, uint32_t file, uint64_t site, uint64_t addr, char *buf,
			  size_t size);
	/*
	 * pid may map files not examined yet (found running, or a library
	 * mapped); paused: stopped since ts_ns until the caller lets it go on;
	 * start_ns: when the process began (0: not known). self_stop: pid
	 * stopped itself (decode.h).
	 */
	int (*rescan)(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns);
	int (*self_stop)(void *ctx, uint32_t pid, int sig, uint64_t ts_ns, uint64_t start_ns);
	/* Events of thread tid the kernel could not deliver; unset: the gaps seen. */
	uint64_t (*thread_lost)(void *ctx, uint32_t tid);
	/* Observers: a marker's event from the decoder, a span-pair probe, a task record. */
	void (*marker)(void *ctx, const struct lp_event *ev);
	void (*usdt)(void *ctx, const struct lp_usdt_event *ue);
	void (*task)(void *ctx, const struct lp_task_event *te);
	/* Every event into the nesting (markers' and span pairs'), and every span out of it. */
	void (*event)(void *ctx, const struct lp_event *ev);
	void (*span)(void *ctx, const struct lp_span *s);
	/*
	 * A caller that keeps ids of spans it was handed (span) marks them here,
	 * in every collection of the texts (strtab.h), or they may be freed.
	 */
	void (*mark)(void *ctx, struct strtab *st);
	void *ctx;
};

struct lp_pipeline;

/* NULL when out of memory. */
struct lp_pipeline *lp_pipeline_new(const struct lp_pipeline_opts *o,
				    const struct lp_pipeline_hooks *h);
void lp_pipeline_free(struct lp_pipeline *p);

/* The texts every id of the recording names (for the callers' own texts too). */
struct strtab *lp_pipeline_strtab(struct lp_pipeline *p);

/* A target known before recording starts; comm is its name. 0 or -ENOMEM. */
int lp_pipeline_add_process(struct lp_pipeline *p, uint32_t pid, uint32_t ppid,
			    enum lp_origin origin, const char *comm);
/*
 * Recording starts at since_ns for the processes added: those found running
 * may be inside spans that began earlier, a launched command has run nothing.
 */
int lp_pipeline_begin(struct lp_pipeline *p, uint64_t since_ns);
/* Process pid is recorded from since_ns on (nest.h lp_nest_process_begin). */
int lp_pipeline_process_begin(struct lp_pipeline *p, uint32_t pid, uint64_t since_ns,
			      bool open_before);
/* Spans go to t too (opened by the caller on p's strtab); NULL: no more. */
void lp_pipeline_set_trace(struct lp_pipeline *p, struct lp_trace *t);
/* The same for a Perfetto trace (pftrace.h), besides or instead of the JSON one. */
void lp_pipeline_set_pftrace(struct lp_pipeline *p, struct lp_pftrace *t);
/* File's markers are recorded from since_ns on (their gate opened): its older events are dropped. */
void lp_pipeline_gate(struct lp_pipeline *p, uint32_t file, uint64_t since_ns);

/*
 * One record, then the texts nothing holds are collected when due. 0 or the
 * first -errno of this record (also kept: lp_pipeline_error); a malformed
 * record is counted, not an error.
 */
int lp_pipeline_record(struct lp_pipeline *p, const void *data, size_t size);
/*
 * Collects the texts nothing holds now (force), or only when due: whether it
 * did, and what it freed and kept (res may be NULL).
 */
bool lp_pipeline_collect(struct lp_pipeline *p, bool force, struct strtab_gc_result *res);
/* The first error of any stage since the start, or 0. */
int lp_pipeline_error(const struct lp_pipeline *p);

/* The process is gone (its pidfd said so): true when it was still counted alive. */
bool lp_pipeline_process_gone(struct lp_pipeline *p, uint32_t pid);
/* Target processes still running. */
size_t lp_pipeline_live(const struct lp_pipeline *p);
const struct lp_report_process *lp_pipeline_processes(const struct lp_pipeline *p, size_t *n);
/* The latest process of pid (a pid may be reused), or NULL. */
const struct lp_report_process *lp_pipeline_process(struct lp_pipeline *p, uint32_t pid);

/* Recording ended at end_ns: records stamped then or later (tasks, events) are ignored. */
void lp_pipeline_stop(struct lp_pipeline *p, uint64_t end_ns);
/* Spans still open end at end_ns (flagged unterminated). */
void lp_pipeline_finish(struct lp_pipeline *p, uint64_t end_ns);
/*
 * Fills what the pipeline knows of rep (texts, totals, rows, threads and
 * their names, processes, decoder and span-pair counters, call paths); names
 * the processes and threads in the trace. rep points into p: valid until
 * lp_pipeline_free. 0 or -ENOMEM.
 */
int lp_pipeline_report(struct lp_pipeline *p, struct lp_report *rep);
/*
 * While recording: the texts, the totals, the rows sorted by self time and
 * what was folded, for a live view (top); nothing else of rep is touched,
 * nothing is written to the traces. Valid until the next record.
 */
void lp_pipeline_live_report(struct lp_pipeline *p, struct lp_report *rep);
/* Sites of span-pair probes the recorder did not attach (lp_pairs_stats.sites_skipped). */
void lp_pipeline_sites_skipped(struct lp_pipeline *p, uint64_t n);

#endif
