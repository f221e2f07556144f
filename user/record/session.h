/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of a recording: loads the programs, attaches them to the
 * leanprofiler markers of the files the targets map, and drains the ring
 * buffer into a callback. The only file that knows libbpf.
 */
#ifndef LP_SESSION_H
#define LP_SESSION_H

#include <sys/types.h>

#include "common.h"
#include "figures.h"
#include "spec.h"

#define LP_BUFFER_DEFAULT (16u << 20) /* ring buffer bytes */
/*
 * Probe sites attached per file, each a uprobe and a descriptor: a file with
 * more leanprofiler sites is not probed (the header makes 4); a span-pair
 * probe with more sites in one file is skipped (PostgreSQL's have 1-10).
 */
#define LP_MARKER_SITES_MAX 16
#define LP_SPEC_SITES_MAX 256
/* Files the targets map kept open to read texts the kernel could not (LP_STR_IN_FILE). */
#define LP_TEXT_FILES_MAX 4096
#define LP_BUFFER_MIN (1u << 16)
#define LP_BUFFER_MAX (1u << 30)

typedef int (*lp_record_fn)(void *ctx, const void *data, size_t size);

struct lp_session_opts {
	size_t buffer_bytes; /* power of two, LP_BUFFER_MIN..LP_BUFFER_MAX */
	/* --all-processes: processes running this file become targets (ino 0: off). */
	uint64_t all_dev, all_ino;
	lp_record_fn on_record;
	void *ctx;
	/* Span-pair specs: their probes are attached too, in every file that has them. */
	struct lp_spec *specs;
	size_t nspecs;
	/* --off-cpu: events carry their thread's cpu/runq/blocked time (wire.h lp_sched_snap). */
	bool off_cpu;
	/* ...and the kernel sends every interval a tracked thread spent off its CPU (a trace). */
	bool off_cpu_intervals;
	/*
	 * The targets are chosen processes (record -p, -- COMMAND), not every
	 * process of a binary: their files' probes are linked for each of them
	 * by itself where the kernel can (multi.h lp_pid_filter_supported).
	 */
	bool per_process;
};

/*
 * Every -errno below is said on stderr (one line: what failed, what to do),
 * but where a function says otherwise: callers need add none of their own.
 */
struct lp_session;

/* Loads the BPF programs. 0 or -errno; *s is NULL on failure. */
int lp_session_open(struct lp_session **s, const struct lp_session_opts *o);
/*
 * Attaches to the leanprofiler markers of the ELF file at path (name: how
 * users know it, e.g. /usr/lib/x.so for /proc/PID/map_files/...), whose
 * identity is (dev, ino), mapped by process pid (0: none in particular).
 * Also attaches the probes of the span-pair specs the file has; probes
 * libbpf cannot decode are skipped with a warning. A file is examined once;
 * its probes then record in every process that maps it (the kernel side
 * records only targets), or, pid-filtered (lp_session_per_process), in each
 * process they are linked for: a later call for another process links them
 * for it. The file is read through one descriptor opened at once, so it may
 * be unmapped, or its process gone, meanwhile. Every file looked at without
 * probes is made known to the kernel half (a target exec'ing it or mapping it
 * is not paused for it again); pid-filtered, a file with probes never is (a
 * process that maps it is paused until it is linked for it). Returns the
 * number of probes attached for pid by this call (0: none new) or -errno,
 * said on stderr except -ESRCH (path or process gone: nothing to probe) and
 * -ENOEXEC (not ELF), which the caller judges.
 */
int lp_session_attach(struct lp_session *s, const char *path, const char *name, uint64_t dev,
		      uint64_t ino, uint32_t pid);
/*
 * Whether file (dev, ino) was examined already and, pid-filtered, its probes
 * linked for process pid (lp_session_attach would do nothing).
 */
bool lp_session_known(struct lp_session *s, uint64_t dev, uint64_t ino, uint32_t pid);
/* Whether probes are linked for each target process by itself (pid-filtered). */
bool lp_session_per_process(const struct lp_session *s);
/*
 * Process pid exited or exec'ed: its links are closed (in the background),
 * and its files no longer count as linked. Nothing without pid filtering.
 */
void lp_session_forget(struct lp_session *s, uint32_t pid);
/*
 * Files attached since the last call start being recorded at *since_ns, a
 * moment just ahead (set here): events before it are not recorded, events
 * after it are. fn (if set) is told of each file index.
 */
int lp_session_open_gates(struct lp_session *s, uint64_t *since_ns,
			  void (*fn)(void *ctx, uint32_t file, uint64_t since_ns), void *ctx);
/*
 * Recording ends at the returned moment, just ahead: events from it on are not
 * recorded (the probes still fire until detached). Returns once it has passed.
 */
uint64_t lp_session_stop(struct lp_session *s);
/*
 * Recording will end at at, a moment in the future (--duration): the kernel
 * half stops there by itself, however late lp_session_stop() comes; that
 * returns at then.
 */
void lp_session_stop_at(struct lp_session *s, uint64_t at);
/* Records process pid (all its threads, and the children it forks from now on). */
/*
 * pid, paused when it began at start_ns (wire.h LP_HELD_MAX), is ours to
 * continue now: another's SIGCONT no longer stops it again.
 */
void lp_session_unhold(struct lp_session *s, uint32_t pid, uint64_t start_ns);
int lp_session_add_target(struct lp_session *s, pid_t pid, uint64_t since_ns);
/*
 * Which probes of spec i were attached so far, in any file: bit 1 <<
 * LP_USDT_ROLE_ENTRY and 1 << LP_USDT_ROLE_EXIT.
 */
unsigned lp_session_spec_found(const struct lp_session *s, size_t i);
/*
 * Sites of span-pair probes not attached (libbpf cannot decode their
 * arguments, or they lack ones the spec uses) while other sites of the probe
 * were: once per spec and role using the probe.
 */
uint64_t lp_session_sites_skipped(const struct lp_session *s);
/*
 * A text the kernel could not read, from a file a target maps (wire.h
 * LP_STR_IN_FILE): up to size-1 bytes at off, up to a NUL, NUL-terminated.
 * Its length, -ENOENT for a file not examined (or not kept), or -errno: not
 * said, the text is then "(unreadable)" and counted (decode.h).
 */
long lp_session_file_text(struct lp_session *s, uint64_t dev, uint64_t ino, uint64_t off,
			  char *buf, size_t size);
/*
 * A text the kernel could not look up (wire.h LP_STR_AT_SITE), at addr in a
 * process where the marker site of probed file `file` ran at address site:
 * read as lp_session_file_text() when it lies in a read-only segment of that
 * file; else -ENOENT.
 */
long lp_session_site_text(struct lp_session *s, uint32_t file, uint64_t site, uint64_t addr,
			  char *buf, size_t size);
/* Total probes attached so far, over all files (markers and span-pair probes). */
size_t lp_session_probes(const struct lp_session *s);
/* The kernel links the probes took (uprobe_multi ones hold many sites), all processes'. */
size_t lp_session_links(const struct lp_session *s);
/*
 * When lp_session_open had the BPF object open (before its load) and loaded
 * (CLOCK_MONOTONIC ns): the phases of the fixed cost (record.c).
 */
void lp_session_load_times(const struct lp_session *s, uint64_t *opened_ns, uint64_t *loaded_ns);
/* --off-cpu: the kernel half reads the hypervisor's steal clock (steal is split out of cpu). */
bool lp_session_steal_clock(const struct lp_session *s);
/* An fd that becomes readable when the kernel forces a wakeup. */
int lp_session_fd(struct lp_session *s);
/* Hands every waiting record to on_record; 0 or -errno. */
int lp_session_consume(struct lp_session *s);
/* Kernel-side loss counters, summed over CPUs; on failure (warned) all 0. */
int lp_session_loss(struct lp_session *s, struct lp_loss *loss);
/* Lost events of one thread as counted by the kernel. */
uint64_t lp_session_thread_loss(struct lp_session *s, uint32_t tid);
/*
 * Time the kernel spent in the programs that run per event (the markers'
 * enter and exit, the span-pair probes'), when kernel.bpf_stats_enabled is
 * set (else runs is 0). 0 or -errno (warned; runs is then 0).
 */
int lp_session_prog_time(struct lp_session *s, uint64_t *runs, uint64_t *run_ns);
/*
 * Removes every probe (the targets' semaphores drop back); the ring buffer stays
 * readable. The kernel waits for RCU grace periods per link (one for a
 * uprobe_multi link, ~25 ms here; three for a single uprobe link): uprobe_multi
 * links removed together share them, single ones do not.
 */
void lp_session_detach(struct lp_session *s);
/*
 * Removes the probes that pause processes (the loaders' _dl_debug_state): a
 * few, so one grace period; once it returns, no program of theirs runs any
 * more, so every pause they made has its record in the ring buffer. The
 * markers' uprobe_multi links start going too, in the background (sharing
 * that grace period): call it once recording has stopped.
 */
void lp_session_detach_pausers(struct lp_session *s);
void lp_session_close(struct lp_session *s);

#endif
