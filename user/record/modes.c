// SPDX-License-Identifier: MIT
/*
 * The three ways of choosing targets, as one ops table each (recorder.h):
 *   launch  record -- COMMAND          the command, stopped after its exec until attached
 *   attach  record -p PID              a running process and what it forks from now on
 *   all     record --all-processes BIN every process of a binary, running now or later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"
#include "recorder.h"
#include "usdt.h"

/* With neither markers nor specs there is nothing to record: says so, -ENOENT. */
static int nothing_to_record(struct recorder *r, const char *what)
{
	if (lp_session_probes(r->s) || lp_late_pending(r))
		return 0;
	if (r->attach_failures)
		lp_err("nothing to record in %s: attaching to the markers of %zu file%s failed "
		       "(said above)",
		       what, r->attach_failures, r->attach_failures > 1 ? "s" : "");
	else
		lp_err("no leanprofiler markers in %s: nothing to record (is it built with "
		       "include/leanprofiler.h?)",
		       what);
	return -ENOENT;
}

/*
 * A program that imports dlopen() (an interpreter: python3, ...) may load a
 * library with markers later, as Python's `import leanprofiler` does: without
 * markers yet, it is recorded from those it loads (the loader's hook attaches
 * them before they run). /bin/true and its like still say nothing_to_record().
 */
static int imports_dlopen(void *ctx, const struct lp_proc_file *f)
{
	bool *yes = ctx;

	if (lp_elf_imports(f->open_path, "dlopen") == 1)
		*yes = true;
	return 0;
}

/* nothing_to_record(), unless pid's program or a library it maps can dlopen() markers. */
static int nothing_yet(struct recorder *r, pid_t pid, const char *what)
{
	bool can_load = false;

	if (lp_session_probes(r->s) || lp_late_pending(r) || r->attach_failures)
		return nothing_to_record(r, what);
	lp_proc_exec_files(pid, imports_dlopen, &can_load);
	if (!can_load)
		return nothing_to_record(r, what);
	lp_info("no leanprofiler markers in %s yet: recording those of the libraries it loads",
		what);
	r->markers_later = true;
	return 0;
}

/*
 * At the end: a recording that nothing_yet() let begin for the markers of
 * libraries to come, and that never found one, says so. Span specs waiting
 * for their probes (late=yes) say it themselves.
 */
static void warn_if_nothing(struct recorder *r, const char *what)
{
	if (r->markers_later && lp_session_probes(r->s) == 0)
		lp_warn("no leanprofiler markers in %s or in any library it loaded: nothing was "
			"recorded",
			what);
}

/* ---- launch ---- */

/*
 * Fork before loading BPF: the child was forked while this process was small,
 * and its peak RSS (which counts the pre-exec copy of us) stays its own. The
 * child waits, stopped after its exec.
 */
static int launch_prepare(struct recorder *r, struct lp_session_opts *so)
{
	int err = lp_launch(&r->child, r->o->argv, &r->old_mask, &r->launch_as);

	if (err == -ECHILD) {
		lp_err("%s exited before recording could start", r->o->argv[0]);
	} else if (err) {
		r->res->stage = LP_STAGE_EXEC;
		lp_err("cannot run %s: %s", r->o->argv[0], strerror(-err));
	}
	return err;
}

/* Sets the recording up for the launched command, stopped right after its exec. */
static int launch_attach(struct recorder *r)
{
	struct lp_child *c = &r->child;
	char comm[32], what[PATH_MAX + 64];
	int err;

	r->since = lp_now_ns();
	err = lp_session_add_target(r->s, c->pid, r->since);
	if (err)
		return err; /* said */
	if (lp_proc_comm(c->pid, comm, sizeof(comm)) == 0)
		err = lp_pipeline_add_process(r->pl, (uint32_t)c->pid, (uint32_t)getpid(),
					      LP_ORIGIN_LAUNCHED, comm);
	/*
	 * Run to the program's entry point: the loader has mapped every linked
	 * library then, and none of the program's own code has run.
	 */
	if (!err)
		err = lp_launch_run_to_entry(c);
	if (!err) {
		err = lp_attach_process(r, c->pid);
		err = err > 0 ? 0 : err;
	}
	if (err) {
		lp_err("cannot attach to %s: %s", r->o->argv[0], strerror(-err));
		return err;
	}
	err = lp_check_specs(r, r->o->argv[0]);
	if (err)
		return err;
	snprintf(what, sizeof(what), "%s or the libraries it links", r->o->argv[0]);
	return nothing_yet(r, c->pid, what);
}

static int launch_started(struct recorder *r)
{
	int err = lp_launch_resume(&r->child);

	if (err)
		lp_err("cannot resume %s: %s", r->o->argv[0], strerror(-err));
	return err;
}

static int launch_watch_fd(struct recorder *r)
{
	return r->child.pidfd;
}

/* The command exited: poll() reaps it. */
static void launch_fd_ready(struct recorder *r)
{
}

/*
 * The first signal is the command's (a terminal's Ctrl-C reached it already,
 * in the same process group; one sent to us alone is passed on); a second one
 * ends the recording, the command runs on.
 */
static bool launch_on_signal(struct recorder *r, int signo, bool from_kernel)
{
	if (++r->signals > 1)
		return true;
	if (!from_kernel)
		kill(r->child.pid, signo);
	return false;
}

static int launch_poll(struct recorder *r)
{
	int err = lp_launch_reap(&r->child, false);

	if (err == 1)
		r->end_reason = LP_END_COMMAND_EXITED;
	return err;
}

static void launch_ending(struct recorder *r)
{
}

static void launch_ended(struct recorder *r)
{
	struct lp_child *c = &r->child;

	if (!c->reaped && r->end_reason == LP_END_SIGNAL) {
		/* Stopped by a second signal: the command is not ours to end. */
		lp_warn("stopped recording on signal %d; %s (PID %d) keeps running", r->signo,
			r->o->argv[0], (int)c->pid);
		/* Its figures so far: wait4() has none for a process that runs on. */
		if (lp_usage_running(c->pid, &r->resources))
			r->resources = (struct lp_resources){ 0 };
		r->left_running = true;
		c->reaped = true; /* not waited for: leave it be */
		c->status = (128 + r->signo) << 8;
	} else if (!c->reaped) {
		lp_launch_reap(c, true);
	}
	warn_if_nothing(r, r->o->argv[0]);
	r->res->exit_code = lp_launch_exit_code(c);
	if (!r->left_running)
		lp_usage_from_rusage(&c->ru, &r->resources);
	/* leanprofiler exits 128+N then (docs/limits.md), but the command has no status yet. */
	r->exit_status = r->left_running ? -1 : r->res->exit_code;
}

const struct mode_ops lp_launch_ops = {
	.prepare = launch_prepare, .attach = launch_attach, .started = launch_started,
	.watch_fd = launch_watch_fd, .fd_ready = launch_fd_ready, .on_signal = launch_on_signal,
	.poll = launch_poll, .ending = launch_ending, .ended = launch_ended,
};

/* ---- attach ---- */

static int attach_comm(pid_t pid, char *comm, size_t size)
{
	int err = lp_proc_comm(pid, comm, size);

	if (err)
		lp_err("cannot attach to PID %d: %s", (int)pid,
		       err == -ESRCH ? "no such process" : strerror(-err));
	return err;
}

/* Before loading BPF: a wrong PID is told at once. */
static int attach_prepare(struct recorder *r, struct lp_session_opts *so)
{
	char comm[32];

	return attach_comm(r->o->pid, comm, sizeof(comm));
}

/* Sets the recording up for a process already running. */
static int attach_attach(struct recorder *r)
{
	pid_t pid = r->o->pid, ppid = 0;
	char comm[32], what[96];
	int err = attach_comm(pid, comm, sizeof(comm));

	if (err)
		return err;
	lp_proc_ppid(pid, &ppid);
	/* A target first, so that a library mapped while we scan is still reported. */
	r->since = lp_now_ns();
	err = lp_session_add_target(r->s, pid, r->since);
	if (err)
		return err; /* said */
	err = lp_pipeline_add_process(r->pl, (uint32_t)pid, (uint32_t)ppid, LP_ORIGIN_ATTACHED,
				      comm);
	if (!err) {
		err = lp_attach_process(r, pid);
		err = err > 0 ? 0 : err;
	}
	if (err) {
		lp_err("cannot attach to PID %d (%s): %s", (int)pid, comm,
		       err == -ESRCH ? "it exited" : strerror(-err));
		return err;
	}
	snprintf(what, sizeof(what), "PID %d (%s)", (int)pid, comm);
	err = lp_check_specs(r, what);
	if (err)
		return err;
	snprintf(what, sizeof(what), "PID %d (%s) or the libraries it has mapped", (int)pid, comm);
	err = nothing_yet(r, pid, what);
	if (err)
		return err;
	r->root_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	lp_usage_start(&r->usage, pid, lp_now_ns());
	return 0;
}

static int attach_started(struct recorder *r)
{
	lp_note("recording PID %d (%zu probes); Ctrl-C to stop", (int)r->o->pid,
		lp_session_probes(r->s));
	return 0;
}

static int attach_watch_fd(struct recorder *r)
{
	return r->root_pidfd;
}

/*
 * The attached process is gone: count it so even if its exit record was
 * lost (children it forked may still run).
 */
static void attach_fd_ready(struct recorder *r)
{
	lp_pipeline_process_gone(r->pl, (uint32_t)r->o->pid);
	close(r->root_pidfd);
	r->root_pidfd = -1;
}

/* Attached (or following a binary): a signal ends the recording. */
static bool end_on_signal(struct recorder *r, int signo, bool from_kernel)
{
	return true;
}

static int attach_poll(struct recorder *r)
{
	if (r->root_pidfd >= 0)
		lp_usage_sample(&r->usage, lp_now_ns(), false);
	if (lp_pipeline_live(r->pl))
		return 0;
	r->end_reason = LP_END_TARGETS_EXITED;
	return 1;
}

/*
 * Whether the attached process has exited: its pidfd said so, or its exit
 * record came first (the loop may end on it before polling the pidfd).
 */
static bool attached_exited(struct recorder *r)
{
	struct pollfd pfd = { .fd = r->root_pidfd, .events = POLLIN };
	const struct lp_report_process *p = lp_pipeline_process(r->pl, (uint32_t)r->o->pid);

	if (r->root_pidfd < 0 || (p && !p->alive))
		return true;
	return poll(&pfd, 1, 0) == 1;
}

/* Decided with the last sample: the figures are until then, or until its exit. */
static void attach_ending(struct recorder *r)
{
	r->attached_gone = attached_exited(r);
	if (!r->attached_gone)
		lp_usage_sample(&r->usage, lp_now_ns(), true);
}

static void attach_ended(struct recorder *r)
{
	char what[32];

	snprintf(what, sizeof(what), "PID %d", (int)r->o->pid);
	warn_if_nothing(r, what);
	lp_usage_report(&r->usage, r->attached_gone, &r->resources);
	r->exit_status = -1;
}

const struct mode_ops lp_attach_ops = {
	.prepare = attach_prepare, .attach = attach_attach, .started = attach_started,
	.watch_fd = attach_watch_fd, .fd_ready = attach_fd_ready, .on_signal = end_on_signal,
	.poll = attach_poll, .ending = attach_ending, .ended = attach_ended,
};

/* ---- all processes of a binary ---- */

static int all_prepare(struct recorder *r, struct lp_session_opts *so)
{
	struct stat st;
	int err;

	if (stat(r->o->binary, &st)) {
		err = -errno;
		lp_err("cannot record %s: %s", r->o->binary, strerror(-err));
		return err;
	}
	so->all_dev = lp_proc_kdev(st.st_dev);
	so->all_ino = st.st_ino;
	return 0;
}

/* A process found running the binary; its errors are said (-ECANCELED: stop the scan). */
static int found_running(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	char comm[32] = "?";
	pid_t ppid = 0;
	int err;

	if (pid == getpid())
		return 0;
	lp_proc_comm(pid, comm, sizeof(comm));
	lp_proc_ppid(pid, &ppid);
	err = lp_session_add_target(r->s, pid, r->since);
	if (err)
		return -ECANCELED; /* said */
	err = lp_pipeline_add_process(r->pl, (uint32_t)pid, (uint32_t)ppid, LP_ORIGIN_FOUND,
				      comm);
	if (err) {
		lp_err("cannot record PID %d (%s): %s", (int)pid, comm, strerror(-err));
		return -ECANCELED;
	}
	lp_attach_process(r, pid); /* one that exited meanwhile has nothing to probe */
	return 0;
}

/*
 * The loader of the binary's processes: watched from the start, so that a
 * process started later is paused for the libraries it maps (lp_dl_state).
 * False for a statically linked binary, which maps nothing else.
 */
static bool attach_interp(struct recorder *r)
{
	char interp[PATH_MAX];
	struct stat st;

	if (lp_elf_interp(r->o->binary, interp, sizeof(interp)) || stat(interp, &st))
		return false;
	lp_session_attach(r->s, interp, interp, lp_proc_kdev(st.st_dev), st.st_ino, 0);
	return true;
}

/* Sets the recording up for every process of a binary, running now or later. */
static int all_attach(struct recorder *r)
{
	struct stat st;
	bool dynamic;
	int err;

	if (stat(r->o->binary, &st)) {
		err = -errno;
		lp_err("cannot record %s: %s", r->o->binary, strerror(-err));
		return err;
	}
	/* Its other errors are said by the session. */
	err = lp_session_attach(r->s, r->o->binary, r->o->binary, lp_proc_kdev(st.st_dev),
				st.st_ino, 0);
	if (err == -ENOEXEC || err == -ESRCH)
		lp_err("cannot record %s: %s", r->o->binary,
		       err == -ENOEXEC ? "not an ELF file" : "it is gone");
	if (err < 0)
		return err;
	dynamic = attach_interp(r);
	r->since = lp_now_ns();
	err = lp_proc_each_running(lp_proc_kdev(st.st_dev), st.st_ino, found_running, r);
	if (err == -ECANCELED)
		return err; /* found_running said why */
	if (err) {
		lp_err("cannot scan the running processes: %s", strerror(-err));
		return err;
	}
	err = lp_check_specs(r, r->o->binary);
	if (err)
		return err;
	/* A dynamic binary may link or dlopen() libraries with markers: they are seen as mapped. */
	return dynamic ? 0 : nothing_to_record(r, r->o->binary);
}

static int all_started(struct recorder *r)
{
	size_t n;

	lp_pipeline_processes(r->pl, &n);
	lp_note("recording every process of %s (%zu running, %zu probes); Ctrl-C to stop",
		r->o->binary, n, lp_session_probes(r->s));
	return 0;
}

static int no_fd(struct recorder *r)
{
	return -1;
}

static void no_fd_ready(struct recorder *r)
{
}

/* Until a signal or --duration: processes of the binary may start at any time. */
static int all_poll(struct recorder *r)
{
	return 0;
}

static void all_ending(struct recorder *r)
{
}

static void all_ended(struct recorder *r)
{
	if (lp_session_probes(r->s) == 0)
		lp_warn("no leanprofiler markers in %s or in any library its processes mapped: "
			"nothing was recorded",
			r->o->binary);
	r->exit_status = -1;
}

const struct mode_ops lp_all_ops = {
	.prepare = all_prepare, .attach = all_attach, .started = all_started,
	.watch_fd = no_fd, .fd_ready = no_fd_ready, .on_signal = end_on_signal,
	.poll = all_poll, .ending = all_ending, .ended = all_ended,
};
