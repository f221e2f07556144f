/* SPDX-License-Identifier: MIT */
/*
 * `leanprofiler record`: launch a command, or attach to a running process, or
 * to every process of a binary; record their spans; write and print the results.
 */
#ifndef LP_RECORD_H
#define LP_RECORD_H

#include <sys/types.h>

#include "common.h"
#include "report.h" /* enum lp_mode */
#include "spec.h"


struct lp_span;
struct strtab;

/*
 * A view of the recording as it goes (top): handed every span, asked after
 * every round of the loop whether it wants to show what was recorded so far.
 */
struct lp_record_watch {
	int input_fd; /* -1: none; its input wakes the loop (keys) */
	void (*span)(void *ctx, const struct lp_span *s);
	/* Marks the ids it keeps of the spans (lp_pipeline_hooks.mark). */
	void (*mark)(void *ctx, struct strtab *st);
	/*
	 * After the records of a round were read: every span that ended before
	 * drained_ns was handed to span(); since_ns: recording began. true: call
	 * draw() now.
	 */
	bool (*due)(void *ctx, uint64_t since_ns, uint64_t drained_ns);
	/*
	 * The recording so far: rep's texts, totals, rows and fold (lp_pipeline_live_report),
	 * loss, counter_name, off_cpu, mode, base_ns. 1 to end the recording as a
	 * Ctrl-C would (a launched command gets SIGINT; a second ends it), 0 to go
	 * on, or -errno.
	 */
	int (*draw)(void *ctx, struct lp_report *rep);
	void *ctx;
};

struct lp_record_opts {
	enum lp_mode mode;
	const char *out_dir;
	size_t buffer_bytes;
	const char *counter_name;
	char **argv;        /* LP_MODE_LAUNCH: the command */
	pid_t pid;          /* LP_MODE_ATTACH */
	const char *binary; /* LP_MODE_ALL */
	uint64_t duration_ns; /* 0: until the targets exit or a signal */
	bool run_as_root;     /* under sudo, keep the command root (else: the sudo user) */
	bool summary_only;    /* no trace file; memory does not grow with the spans */
	uint64_t trace_last_ns;   /* --trace-last: the trace keeps the spans that ended then; 0: all */
	uint64_t trace_max_bytes; /* --trace-max-size; 0: none */
	bool off_cpu;         /* split spans into cpu, runq and blocked time (--off-cpu) */
	bool perfetto;        /* --format perfetto: the trace in Perfetto's format (pftrace.h) */
	bool no_json;         /* --format without json: no leanprofiler-trace.json */
	size_t max_groups;    /* groups (rows) of their own, then overflow rows (--max-groups) */
	size_t table_rows;    /* rows the table shows; 0: all (--rows) */
	struct lp_spec *specs; /* span-pair specs (--span, --preset); the recorder sets arg_size */
	size_t nspecs;
	bool no_outputs; /* no output directory, no files (top without -o); with summary_only */
	const struct lp_record_watch *watch; /* NULL: none (record) */
	/*
	 * --window: a summary (and trace) per window of this length, written as
	 * it closes (window.h); 0: none. keep: the newest windows kept (0: all).
	 * window_export_url: each window exported as it closes (NULL: none).
	 */
	uint64_t window_ns;
	uint64_t keep;
	const char *window_export_url;
	/*
	 * Prints what was recorded, once the files are written and before the
	 * probes are detached (slow: an RCU grace period per probe); NULL: the
	 * caller prints res->report after lp_record().
	 */
	void (*print)(const struct lp_record_opts *o, const struct lp_report *rep);
};

enum lp_record_stage {
	LP_STAGE_SETUP = 0, /* before recording began: options, output, BPF, attach */
	LP_STAGE_EXEC,      /* the command could not be executed (err says why) */
	LP_STAGE_RUN,       /* recording ran; exit_code is the command's, or 0 */
	/*
	 * A terminating signal (exit_code: 128 + it) came before the targets ran:
	 * nothing was recorded or written, the previous recording is untouched.
	 */
	LP_STAGE_INTERRUPTED,
};

struct lp_record_result {
	enum lp_record_stage stage;
	int exit_code; /* launch: the command's (128 + signal when killed) */
	/*
	 * LP_STAGE_RUN: what was recorded, for the caller to print (its paths are
	 * NULL for a file not written); NULL before. Freed by lp_record_result_free.
	 */
	struct lp_report *report;
	struct lp_pipeline *pipeline; /* what report points into */
	bool printed; /* o->print was called with report */
	bool export_failed; /* --window --export: a window's export failed (said) */
};

/*
 * Records as o says, writes the trace and the summary; 0 when everything was
 * recorded and written, else -errno (said on stderr; res->report may still be
 * set: what was recorded).
 */
int lp_record(const struct lp_record_opts *o, struct lp_record_result *res);
void lp_record_result_free(struct lp_record_result *res);

#endif
