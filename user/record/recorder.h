/* SPDX-License-Identifier: MIT */
/*
 * Inside `leanprofiler record` (record.c): the state one recording keeps,
 * shared by its parts:
 *   record.c   the phases: set up, start, run, end, report
 *   modes.c    what differs between launch, attach and all-processes (an ops table)
 *   follow.c   attaching to files the targets map while recording, pausing them
 * The spans themselves go through the libbpf-free pipeline (core/pipeline.h).
 */
#ifndef LP_RECORDER_H
#define LP_RECORDER_H

#include <signal.h>

#include "creds.h"
#include "launch.h"
#include "outdir.h"
#include "outfile.h"
#include "pipeline.h"
#include "record.h"
#include "session.h"
#include "usage.h"

/* A process that may map new files: attached to after this batch of records. */
struct rescan {
	uint32_t pid;
	bool paused;       /* stopped by the kernel half (LP_LIBS_PAUSED): waits for SIGCONT */
	uint64_t since_ns; /* ... since then */
	uint64_t start_ns; /* when the paused process began (wire.h lp_rec_libs) */
	/*
	 * The paused process, held from when its record was read: SIGCONT goes
	 * to it, never to a later process given its PID. -1: not held.
	 */
	int pidfd;
	int pause; /* its entry in recorder.pauses, -1: none */
	int probes;        /* new probes attached for it so far (over batches) */
	bool done;         /* every file it maps is examined (else: the next batch goes on) */
	bool deferred;     /* files of it were left to a later batch (counted once) */
};

/*
 * Relays: a process that sees its child stop may stop itself (sudo, su and
 * runuser do: kill(getpid(), SIGSTOP)), and only we would continue it. A
 * pause is remembered with the paused process's ancestors, this far up.
 */
#define LP_RELAY_DEPTH 3
/* A self-stop of an ancestor this long after the pause ended is still taken for a relay's. */
#define LP_RELAY_GRACE_NS 1000000000ULL
/* Pauses remembered for that (the last ones). */
#define LP_RELAY_PAUSES 64

struct pause_seen {
	uint32_t pid;             /* the paused process */
	pid_t up[LP_RELAY_DEPTH]; /* its parent, grandparent, ... (0: none) */
	uint64_t since_ns, until_ns; /* until_ns 0: still paused */
};

/* A relay stopped because of a pause: continued once that pause has ended. */
struct relay {
	uint32_t pid;
	int pidfd;
	int pause; /* recorder.pauses entry */
};

struct recorder;

/* What differs between the three modes; record.c calls them in this order. */
struct mode_ops {
	/* Before BPF is loaded: check the target, fill what the session needs. */
	int (*prepare)(struct recorder *r, struct lp_session_opts *so);
	/* BPF loaded: make the targets known and attach to what they map; sets r->since. */
	int (*attach)(struct recorder *r);
	/* Every probe in place and recording: let the targets go, or say we record. */
	int (*started)(struct recorder *r);
	/* A descriptor the loop also waits on (-1: none), and what its readiness means. */
	int (*watch_fd)(struct recorder *r);
	void (*fd_ready)(struct recorder *r);
	/* A terminating signal arrived: true when it ends the recording. */
	bool (*on_signal)(struct recorder *r, int signo, bool from_kernel);
	/* After each batch of records: 1 when recording should end, 0 to go on, or -errno. */
	int (*poll)(struct recorder *r);
	/* Recording ends, the kernel half still records: last looks at the targets. */
	void (*ending)(struct recorder *r);
	/*
	 * The probes are gone: settle the targets (reap), fill r->resources and
	 * r->exit_status, say what the user should know.
	 */
	void (*ended)(struct recorder *r);
};

extern const struct mode_ops lp_launch_ops, lp_attach_ops, lp_all_ops;

struct recorder {
	const struct lp_record_opts *o;
	const struct mode_ops *ops;
	struct lp_record_result *res;
	struct lp_pipeline *pl;
	struct lp_session *s;
	struct lp_trace trace;
	bool trace_open;
	struct lp_windows *win; /* --window; NULL: none */
	struct lp_pftrace *pftrace; /* --format perfetto, open: instead of trace */
	struct lp_outdir outdir;
	struct lp_outfile summary;
	char *trace_path, *summary_path;
	char *pftrace_path; /* --format perfetto (trace_path too, without json) */
	struct lp_creds user, launch_as; /* the outputs' owner; who the command runs as */

	/* Targets. */
	struct lp_child child;   /* launch mode */
	bool left_running;       /* launch: the command runs on after the recording */
	int root_pidfd;          /* attach mode: the attached process */
	bool attached_gone;      /* attach: it exited before the recording ended */
	struct lp_usage usage;   /* attach mode */

	/* Following the targets' files (follow.c). */
	struct rescan *rescan;
	size_t nrescan, rescan_cap;
	bool stopping; /* recording ends: paused processes only go on */
	struct pause_seen pauses[LP_RELAY_PAUSES];
	uint64_t npauses; /* pauses seen: the next one goes to pauses[npauses % LP_RELAY_PAUSES] */
	struct relay *relays;
	size_t nrelays, relays_cap;
	struct lp_follow follow;

	/* What the report says of the targets (mode_ops.ended). */
	struct lp_resources resources;
	int exit_status; /* the command's; -1: none, or not known yet */

	/* The run. */
	sigset_t old_mask;        /* a launched command gets it */
	int sigfd;
	int signals, signo;       /* terminating signals received, the last one */
	uint64_t since, deadline_ns, end_ns;
	/* When the steps of record.c ended (lp_now_ns): the phases said under -v and in the summary. */
	struct {
		uint64_t begin, setup, ended, written;
	} phase_at;
	enum lp_end_reason end_reason;
	int err; /* the first error while recording outside the pipeline (lp_pipeline_error) */
	size_t attach_failures; /* files whose markers could not be attached (said) */
	/* The target had no markers yet, only the means to load some (modes.c nothing_yet()). */
	bool markers_later;
};

uint64_t lp_now_ns(void);
/*
 * Opens an output file (the trace when t is set, else o) named name in the
 * output directory, as the user it is for, and gives it to them; path is for
 * the messages. 0 or -errno (said).
 */
int lp_open_output(struct recorder *r, struct lp_outfile *o, struct lp_trace *t,
		   const char *name, const char *path);
/* What recording cost leanprofiler itself, so far. */
void lp_record_self_usage(struct lp_resources *res);
/* Reads the signals waiting: whether recording should end now (a signal, --duration). */
bool lp_end_requested(struct recorder *r);

/* follow.c */
int lp_attach_process(struct recorder *r, pid_t pid);
int lp_queue_rescan(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns);
int lp_self_stopped(void *ctx, uint32_t pid, int sig, uint64_t ts_ns, uint64_t start_ns);
void lp_rescan_queued(struct recorder *r);
void lp_release_paused(struct recorder *r);
int lp_open_gates(struct recorder *r, uint64_t *since);
bool lp_late_pending(struct recorder *r);
void lp_warn_late_specs(struct recorder *r);
int lp_check_specs(struct recorder *r, const char *where);

#endif
