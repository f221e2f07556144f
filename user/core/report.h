/* SPDX-License-Identifier: MIT */
/*
 * What the user reads: the summary table (the layout of README.md's example)
 * and the summary JSON, which holds every figure of the table, exactly, so a
 * later command can print the table again.
 */
#ifndef LP_REPORT_H
#define LP_REPORT_H

#include <json-c/json.h>
#include <stdio.h>

#include "figures.h"
#include "pairs.h"
#include "paths.h"
#include "stats.h"
#include "strtab.h"
#include "tracering.h"

#define LP_TABLE_NAME_COLS 40 /* the Name column; longer names end in "…" */
/*
 * Rows the table shows by default (--rows), the first by self time: a
 * screenful. Rows past them are the rest of the time, which a reader looks
 * up in the summary JSON (which keeps every row) rather than scrolls for.
 */
#define LP_TABLE_ROWS_DEFAULT 40
/* The texts of overflow rows (their "folded" member, not the text, marks them). */
#define LP_OVERFLOW_META_TEXT "(other metadata)"
#define LP_OVERFLOW_NAME_TEXT "(other names)"
#define LP_SUMMARY_SCHEMA "leanprofiler-summary/1"
/* --summary-only: durations kept per row for an exact P95, then a histogram. */
#define LP_SUMMARY_ONLY_DURATIONS 65536

/* How the targets were chosen (record -- COMMAND, -p PID, --all-processes BINARY). */
enum lp_mode {
	LP_MODE_LAUNCH = 0,
	LP_MODE_ATTACH,
	LP_MODE_ALL,
};

/* How a process came into the recording. */
enum lp_origin {
	LP_ORIGIN_LAUNCHED = 0, /* the command record ran */
	LP_ORIGIN_ATTACHED,     /* -p PID */
	LP_ORIGIN_FORKED,       /* forked by a recorded process */
	LP_ORIGIN_FOUND,        /* --all-processes: running the binary, or exec'ing it */
};

/* Why recording ended. */
enum lp_end_reason {
	LP_END_UNKNOWN = 0, /* a summary that does not say */
	LP_END_COMMAND_EXITED,
	LP_END_TARGETS_EXITED,
	LP_END_DURATION,
	LP_END_SIGNAL,
	LP_END_ERROR,
};

/* Their names in the summary JSON ("launch", "forked", "command exited"...). */
const char *lp_mode_name(enum lp_mode m);
const char *lp_origin_name(enum lp_origin o);
const char *lp_end_reason_name(enum lp_end_reason e);
/* The mode named name: 0, or -EINVAL for a name of none. */
int lp_mode_parse(const char *name, enum lp_mode *m);
/* The end reason named name; LP_END_UNKNOWN for a name of none. */
enum lp_end_reason lp_end_reason_parse(const char *name);

struct lp_report_thread {
	uint32_t pid, tid;
	uint32_t name;  /* string id */
	uint64_t spans, recorded_ns, lost;
	uint32_t max_depth;
	struct lp_sched sched; /* --off-cpu: of its top-level spans, those split */
};

struct lp_report_process {
	uint32_t pid, ppid;
	uint32_t comm;      /* string id of its (latest) name */
	enum lp_origin origin;
	bool alive;         /* still running when recording ended */
	bool privileged;    /* left the recording: exec'ed a program that gains privileges */
};

/*
 * What the fixed steps of a recording took (ns, record.c), up to the start
 * of recording and its first event: the cost of a short recording is mostly
 * these. 0 where a step was not measured (a summary written before them).
 */
struct lp_phases {
	uint64_t setup_ns;  /* signals, the output directory, a launched command up to its exec */
	uint64_t open_ns;   /* the BPF object opened, the CO-RE BTF chosen */
	uint64_t load_ns;   /* BTF, the maps made, the programs verified */
	uint64_t attach_ns; /* process tracking, the markers, a command run to its entry, gates */
	uint64_t first_event_ns; /* from the start of recording to the first span event */
};

/* --trace-last, --trace-max-size: what the trace kept of the spans (tracering.h). */
struct lp_report_bound {
	bool on;            /* false: the trace has every span, or is not written */
	uint64_t last_ns;   /* --trace-last; 0: none (the trace holds the first spans) */
	uint64_t max_bytes; /* --trace-max-size, or with --trace-last the ring's default bound */
	struct lp_tring_stats st;
};

/*
 * record --window: the summary is one window's (docs/recording.md): its rows
 * and totals are the spans that ended from start_ns until before end_ns.
 */
struct lp_report_window {
	uint64_t index;         /* 0 for the recording's first window */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t start_unix_ns; /* start_ns by the wall clock; 0: not known */
	uint64_t began_before;  /* its spans that began before it: open across its start */
	bool last;              /* cut short by the recording's end */
};

struct lp_report {
	const struct strtab *st;
	const struct lp_report_window *window; /* NULL: the summary is the whole recording's */
	const struct lp_nest_totals *totals;
	struct lp_group **groups;
	size_t ngroups;
	const struct lp_report_thread *threads;
	size_t nthreads;
	struct lp_resources res;
	struct lp_resources self; /* leanprofiler's own, up to the summary's writing */
	uint64_t finish_ns;       /* from the end of recording to then: detach, drain, trace */
	struct lp_phases phases;  /* leanprofiler's own, before recording */
	bool show_self;           /* also in the table (-v); always in the summary */
	uint64_t bpf_runs, bpf_run_ns; /* span programs, with kernel.bpf_stats_enabled */
	/* Sites probed, and the kernel links they took (uprobe_multi: a few per file). */
	uint64_t probe_sites, probe_links;
	/* The probes were linked for each target process by itself (bystanders take none). */
	bool pid_filtered;
	struct lp_follow follow;
	size_t nspecs;                 /* span-pair specs (--span, --preset) */
	const struct lp_pairs_stats *pairs; /* NULL: none */
	struct lp_loss loss;
	/* The decoder's counts (user/core/decode.h struct lp_decode_stats), the summary's "input". */
	uint64_t records;         /* ring-buffer records received, of every kind */
	uint64_t malformed, truncated, unreadable;
	uint64_t from_file;       /* texts the kernel could not read, read from their file */
	uint64_t unknown_literal; /* names or metadata of a literal whose text never arrived */
	uint64_t abi_mismatch;    /* span events from markers of another include/leanprofiler.h */
	uint64_t enters, exits; /* span events received */
	const char *counter_name; /* "Lean heartbeats" */
	const char *trace_path;   /* NULL when not written */
	struct lp_report_bound bound;
	const char *summary_path;
	char *const *argv;        /* the recorded command */
	int pid;
	int exit_status; /* the command's, as leanprofiler exits with it; -1 unknown */
	uint64_t buffer_bytes;
	uint64_t base_ns; /* CLOCK_MONOTONIC time recording began; trace timestamps count from it */
	uint64_t end_ns;  /* ... and ended */
	/*
	 * CLOCK_REALTIME ns of base_ns, for stores that compare recordings of many
	 * hosts and boots (export); 0: not known (a summary written before it).
	 */
	uint64_t start_unix_ns;
	enum lp_end_reason end_reason;
	enum lp_mode mode;
	/*
	 * --off-cpu: spans were split into cpu, runq and blocked time (lp_span
	 * sched); the table and the summary show it.
	 */
	bool off_cpu;
	bool steal_clock; /* --off-cpu: the hypervisor's steal clock was read (steal is split out) */
	const char *binary;     /* all-processes: the binary */
	const struct lp_report_process *procs;
	size_t nprocs;
	struct lp_fold_stats fold; /* the cap on groups and what went past it */
	size_t table_rows;         /* rows the table shows, the first ones; 0: all */
	const struct lp_paths *paths; /* the call paths; NULL: none (the summary has no "paths") */
};

#define LP_COUNTER_LABEL_COLS 20 /* "Self " and a counter's name at most */

/* What the table and the pictures call the counter. */
struct lp_counter_words {
	char profile[64];                           /* heads the header: "Lean profile:" */
	char column[LP_COUNTER_LABEL_COLS * 4 + 8]; /* its column: "Self HB" */
};

/*
 * The words of the counter named name (--counter-name, made fit for a
 * terminal); name NULL when no marker of the recording passed a counter:
 * "Profile:" (the column is then left out).
 */
void lp_counter_words(const char *name, struct lp_counter_words *w);

/* The header lines, a blank line and the table. */
void lp_report_table(FILE *out, const struct lp_report *r);
/*
 * The table alone, its header row and its rows (as lp_report_table's, the
 * same cells and escaping), the Name column name_cols wide (at most
 * LP_TABLE_NAME_COLS): top fits it to a narrow terminal.
 */
void lp_report_rows(FILE *out, const struct lp_report *r, size_t name_cols);
/* The columns the table's figures take, after the Name column. */
size_t lp_report_figure_cols(const struct lp_report *r);
/*
 * Writes the summary JSON to f as it goes (nothing is built in memory: rows
 * may be many); 0 or -errno (a write error of f).
 */
int lp_report_summary_json(FILE *f, const struct lp_report *r);
/* The small object stored as the trace's otherData; caller frees; NULL and errno on failure. */
char *lp_report_other_data_json(const struct lp_report *r);

#endif
