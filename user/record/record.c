// SPDX-License-Identifier: MIT
/*
 * `leanprofiler record` as a sequence of phases (lp_record): set up the
 * outputs and the signals, load BPF and attach to the targets (the mode's
 * ops: modes.c), start recording, run until the targets, the duration or a
 * signal end it, stop and drain, then report. Records go from the ring
 * buffer into the libbpf-free pipeline (core/pipeline.h) one by one.
 */
#define _GNU_SOURCE
#include "record.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"
#include "window.h"

/* How often the ring buffer is drained when the kernel does not wake us. */
#define LP_POLL_MS 10

uint64_t lp_now_ns(void)
{
	struct timespec ts;

	/* The clock bpf_ktime_get_ns() reads. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The ring buffer's records, one by one, into the pipeline. */
static int on_record(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;

	lp_pipeline_record(r->pl, data, size);
	return 0; /* keep draining: a record we could not use is still consumed (and counted) */
}

static long file_text(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf, size_t size)
{
	struct recorder *r = ctx;

	return lp_session_file_text(r->s, dev, ino, off, buf, size);
}

static long site_text(void *ctx, uint32_t file, uint64_t site, uint64_t addr, char *buf,
		      size_t size)
{
	struct recorder *r = ctx;

	return lp_session_site_text(r->s, file, site, addr, buf, size);
}

static uint64_t thread_lost(void *ctx, uint32_t tid)
{
	struct recorder *r = ctx;

	return lp_session_thread_loss(r->s, tid);
}

/* A process gone, or running another program: the links made for it go (pid-filtered). */
static void task_seen(void *ctx, const struct lp_task_event *te)
{
	struct recorder *r = ctx;

	if (te->what == LP_TASK_EXEC || (te->what == LP_TASK_EXIT && te->group_dead))
		lp_session_forget(r->s, te->pid);
}

/* A live view's (o->watch): the spans, and the texts of them it keeps. */
static void watch_span(void *ctx, const struct lp_span *s)
{
	struct recorder *r = ctx;

	if (r->win)
		lp_windows_span(r->win, s);
	if (r->o->watch)
		r->o->watch->span(r->o->watch->ctx, s);
}

static void watch_mark(void *ctx, struct strtab *st)
{
	struct recorder *r = ctx;

	if (r->win)
		lp_windows_mark(r->win, st);
	if (r->o->watch)
		r->o->watch->mark(r->o->watch->ctx, st);
}

static char *path_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

static const struct mode_ops *const mode_ops[] = {
	[LP_MODE_LAUNCH] = &lp_launch_ops,
	[LP_MODE_ATTACH] = &lp_attach_ops,
	[LP_MODE_ALL] = &lp_all_ops,
};

static int recorder_init(struct recorder *r, const struct lp_record_opts *o,
			 struct lp_record_result *res)
{
	struct lp_pipeline_opts po = { .specs = o->specs, .nspecs = o->nspecs,
				       .summary_only = o->summary_only,
				       .max_groups = o->max_groups };
	struct lp_pipeline_hooks h = { .file_text = file_text, .site_text = site_text,
				       .rescan = lp_queue_rescan, .self_stop = lp_self_stopped,
				       .thread_lost = thread_lost, .task = task_seen,
				       .span = o->watch || o->window_ns ? watch_span : NULL,
				       .mark = o->watch || o->window_ns ? watch_mark : NULL, .ctx = r };

	*r = (struct recorder){ .o = o, .ops = mode_ops[o->mode], .res = res,
				.outdir = { .fd = -1 }, .child = { .pid = -1, .pidfd = -1 },
				.root_pidfd = -1, .sigfd = -1 };
	r->pl = lp_pipeline_new(&po, &h);
	r->pftrace_path = path_join(o->out_dir, LP_PFTRACE_FILE);
	/* The summary's trace: the JSON one, unless only the Perfetto one is written. */
	r->trace_path = path_join(o->out_dir, o->no_json ? LP_PFTRACE_FILE
							 : "leanprofiler-trace.json");
	r->summary_path = path_join(o->out_dir, "leanprofiler-summary.json");
	if (!r->pl || !r->trace_path || !r->summary_path || !r->pftrace_path) {
		lp_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

/*
 * Opens an output file (the trace when t is set, else o) in the output
 * directory, as the user it is for (lp_outdir_enter), and gives it to them.
 */
int lp_open_output(struct recorder *r, struct lp_outfile *o, struct lp_trace *t,
		   const char *name, const char *path)
{
	struct lp_fs_saved saved;
	int err = lp_outdir_enter(&r->outdir, &r->user, &saved);

	if (!err) {
		err = t ? lp_trace_openat(t, r->outdir.fd, name, lp_pipeline_strtab(r->pl),
					  r->since)
			: lp_outfile_openat(o, r->outdir.fd, name);
		lp_outdir_leave(&saved);
		if (!err)
			err = lp_outdir_give(&r->user, fileno(t ? t->out.f : o->f));
		if (err && t)
			lp_trace_abort(t);
		else if (err)
			lp_outfile_abort(o);
	}
	if (err)
		lp_err("cannot write %s: %s", path, lp_outfile_strerror(err));
	return err;
}

/* The Perfetto trace (--format perfetto), opened as open_output() opens the others. */
static int open_pftrace(struct recorder *r)
{
	struct lp_fs_saved saved;
	int err = lp_outdir_enter(&r->outdir, &r->user, &saved);

	if (!err) {
		err = lp_pftrace_openat(&r->pftrace, r->outdir.fd, LP_PFTRACE_FILE,
					lp_pipeline_strtab(r->pl), r->since);
		lp_outdir_leave(&saved);
		if (!err)
			err = lp_outdir_give(&r->user, lp_pftrace_fd(r->pftrace));
		if (err && r->pftrace) {
			lp_pftrace_abort(r->pftrace);
			r->pftrace = NULL;
		}
	}
	if (err)
		lp_err("cannot write %s: %s", r->pftrace_path, lp_outfile_strerror(err));
	return err;
}

/* What a recording killed before its end left in the output directory (its temporary files). */
static void clean_stale(struct recorder *r)
{
	static const char *const names[] = { "leanprofiler-trace.json",
					     "leanprofiler-summary.json", LP_PFTRACE_FILE };
	size_t n = lp_outdir_clean_stale(&r->outdir, names, 3,
					 r->user.set ? r->user.uid : geteuid());

	if (n)
		lp_note("removed %zu temporary file%s a recording killed before its end left in %s",
			n, n > 1 ? "s" : "", r->o->out_dir);
}

/* Who the outputs are for; the output directory and the summary, before anything is recorded. */
static int setup_outputs(struct recorder *r)
{
	/* Under sudo, the command and the outputs are the invoking user's. */
	int err = lp_creds_from_sudo(&r->user);

	if (err) {
		lp_err("SUDO_UID or SUDO_GID is not a valid id; unset them or use --run-as-root");
		return err;
	}
	r->launch_as = r->user;
	if (r->o->run_as_root)
		r->launch_as.set = false;
	if (r->o->no_outputs)
		return 0;
	/* A bad directory must fail before anything is recorded (lp_outdir_open says why). */
	err = lp_outdir_open(&r->outdir, r->o->out_dir, &r->user);
	if (!err)
		clean_stale(r);
	if (!err)
		err = lp_open_output(r, &r->summary, NULL, "leanprofiler-summary.json",
				  r->summary_path);
	return err;
}

/* Our terminating signals arrive through a signalfd; a launched command gets the old mask. */
static int setup_signals(struct recorder *r)
{
	sigset_t block;
	int err;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &r->old_mask);
	r->sigfd = signalfd(-1, &block, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r->sigfd >= 0)
		return 0;
	err = -errno;
	lp_err("signalfd: %s", strerror(-err));
	return err;
}

/* BPF loaded, the targets chosen and attached to (lp_session_open says its errors). */
static int setup_session(struct recorder *r)
{
	struct lp_session_opts so = { .buffer_bytes = r->o->buffer_bytes, .on_record = on_record,
				      .ctx = r, .specs = r->o->specs, .nspecs = r->o->nspecs,
				      .off_cpu = r->o->off_cpu,
				      /* Window traces have no off-CPU slices (docs/recording.md). */
				      .off_cpu_intervals = !r->o->summary_only && !r->o->window_ns,
				      .per_process = r->o->mode != LP_MODE_ALL };
	int err = r->ops->prepare(r, &so);

	r->phase_at.setup = lp_now_ns();
	if (!err)
		err = lp_session_open(&r->s, &so);
	if (!err)
		err = r->ops->attach(r);
	return err;
}

/*
 * Ctrl-C while loading and attaching, before the targets run (a launched
 * command is still stopped before its first instruction): a recording of
 * nothing would push the previous one out of *.old, so nothing is written and
 * the command is killed unrun (recorder_cleanup). A signal blocked since
 * setup_signals waits in the signalfd: read here, right before the targets go.
 */
static int interrupted_before_start(struct recorder *r)
{
	struct signalfd_siginfo si;

	if (read(r->sigfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	r->signo = (int)si.ssi_signo;
	r->res->stage = LP_STAGE_INTERRUPTED;
	r->res->exit_code = 128 + r->signo;
	lp_err("%s before %s started: nothing recorded; the recording in %s is left as it was",
	       strsignal(r->signo), r->o->mode == LP_MODE_LAUNCH ? r->o->argv[0] : "recording",
	       r->o->out_dir);
	return -EINTR;
}

/* Every probe is in place: recording starts for all of them at once. */
static int start_recording(struct recorder *r)
{
	int err = lp_open_gates(r, &r->since);

	if (err)
		return err; /* said */
	err = lp_pipeline_begin(r->pl, r->since);
	if (err) {
		lp_err("cannot start recording: %s", strerror(-err));
		return err;
	}
	if (r->o->duration_ns) {
		r->deadline_ns = r->since + r->o->duration_ns;
		lp_session_stop_at(r->s, r->deadline_ns);
	}
	if (!r->o->summary_only && r->o->perfetto) {
		err = open_pftrace(r);
		if (err)
			return err;
		lp_pipeline_set_pftrace(r->pl, r->pftrace);
	}
	if (r->o->window_ns) {
		err = lp_windows_start(r);
		if (err)
			return err;
	} else if (!r->o->summary_only && !r->o->no_json) {
		err = lp_open_output(r, NULL, &r->trace, "leanprofiler-trace.json", r->trace_path);
		if (err)
			return err;
		r->trace_open = true;
		lp_pipeline_set_trace(r->pl, &r->trace);
		if (r->o->trace_last_ns || r->o->trace_max_bytes)
			err = lp_trace_bound(&r->trace, r->o->trace_last_ns, r->o->trace_max_bytes);
		if (err) {
			lp_err("cannot bound the trace (--trace-last, --trace-max-size): out of memory");
			return err;
		}
	}
	/* After the JSON trace's: with both, the Perfetto trace keeps what the JSON one keeps. */
	if (r->pftrace && (r->o->trace_last_ns || r->o->trace_max_bytes)) {
		err = lp_pftrace_bound(r->pftrace, r->o->trace_last_ns, r->o->trace_max_bytes,
				       r->trace_open ? r->trace.ring : NULL);
		if (err) {
			lp_err("cannot bound the Perfetto trace (--trace-last, --trace-max-size): out "
			       "of memory");
			return err;
		}
	}
	/* Everything that needed more is done: keep only what recording still uses. */
	err = lp_creds_drop_capabilities(r->o->window_ns != 0);
	if (err)
		lp_warn("could not drop capabilities: %s", strerror(-err));
	err = interrupted_before_start(r);
	if (err)
		return err;
	return r->ops->started(r);
}

/* Terminating signals received since the last look. */
static void read_signals(struct recorder *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
		r->signo = (int)si.ssi_signo;
		if (r->ops->on_signal(r, r->signo, si.ssi_code == SI_KERNEL))
			r->end_reason = LP_END_SIGNAL;
	}
}

bool lp_end_requested(struct recorder *r)
{
	read_signals(r);
	if (!r->end_reason && r->deadline_ns && lp_now_ns() >= r->deadline_ns)
		r->end_reason = LP_END_DURATION;
	return r->end_reason != 0;
}

/* Waits for records, a signal or the targets, up to the deadline; false once it passed. */
static bool wait_events(struct recorder *r, int ep, int watched, int *err)
{
	struct epoll_event evs[4];
	/* Processes still queued (a batch was not enough): only a look, no wait. */
	int timeout = r->nrescan ? 0 : LP_POLL_MS, n;

	if (r->deadline_ns) {
		uint64_t now = lp_now_ns();

		if (now >= r->deadline_ns) {
			r->end_reason = LP_END_DURATION;
			return false;
		}
		if ((r->deadline_ns - now) / 1000000 < (uint64_t)timeout)
			timeout = (int)((r->deadline_ns - now) / 1000000) + 1;
	}
	n = epoll_wait(ep, evs, 4, timeout);
	if (n < 0 && errno != EINTR) {
		*err = -errno;
		lp_err("cannot wait for records: %s", strerror(-*err));
		return false;
	}
	for (int i = 0; i < n; i++) {
		if (evs[i].data.fd == r->sigfd) {
			read_signals(r);
		} else if (evs[i].data.fd == watched && watched >= 0) {
			epoll_ctl(ep, EPOLL_CTL_DEL, watched, NULL);
			r->ops->fd_ready(r);
		}
	}
	return true;
}

/*
 * A live view (o->watch) shows the recording so far when it asks to; its 1
 * ends the recording as a Ctrl-C would.
 */
static int watch_round(struct recorder *r, uint64_t drained_ns)
{
	const struct lp_record_watch *w = r->o->watch;
	struct lp_report rep = { 0 };
	int err;

	if (!w->due(w->ctx, r->since, drained_ns))
		return 0;
	lp_pipeline_live_report(r->pl, &rep);
	lp_session_loss(r->s, &rep.loss);
	rep.counter_name = r->o->counter_name;
	rep.off_cpu = r->o->off_cpu;
	rep.mode = r->o->mode;
	rep.base_ns = r->since;
	rep.table_rows = r->o->table_rows;
	err = w->draw(w->ctx, &rep);
	if (err == 1 && r->ops->on_signal(r, SIGINT, false))
		r->end_reason = LP_END_SIGNAL;
	return err < 0 ? err : 0;
}

/* Records until the targets exit, the duration ends or a signal. */
static int run_loop(struct recorder *r)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), err = 0;
	int fds[4] = { lp_session_fd(r->s), r->sigfd, r->ops->watch_fd(r),
		       r->o->watch ? r->o->watch->input_fd : -1 };
	uint64_t drained = 0;

	if (ep < 0) {
		err = -errno;
		lp_err("cannot wait for records: %s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < 4 && !err; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (fds[i] >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev)) {
			err = -errno;
			lp_err("cannot wait for records: %s", strerror(-err));
		}
	}
	while (!err && wait_events(r, ep, fds[2], &err)) {
		if (r->o->watch || r->win)
			drained = lp_now_ns();
		err = lp_session_consume(r->s);
		if (!err && r->o->watch)
			err = watch_round(r, drained);
		if (!err && r->win)
			err = lp_windows_round(r, drained);
		if (err)
			break;
		if (r->nrescan)
			lp_rescan_queued(r);
		if (r->end_reason)
			break;
		err = r->ops->poll(r);
		if (err)
			break;
	}
	close(ep);
	/* poll()'s 1: the targets ended it. */
	return err < 0 ? err : 0;
}

/*
 * Stop first: nothing is recorded from end_ns on; then let the targets go,
 * drain the ring buffer, detach, settle the targets.
 */
static void end_recording(struct recorder *r, struct lp_report *rep)
{
	r->ops->ending(r);
	r->end_ns = lp_session_stop(r->s);
	lp_pipeline_stop(r->pl, r->end_ns);
	/* Before waiting for anything: a process paused for a new file goes on. */
	lp_release_paused(r);
	lp_session_consume(r->s);
	lp_session_prog_time(r->s, &rep->bpf_runs, &rep->bpf_run_ns);
	rep->probe_sites = lp_session_probes(r->s);
	rep->probe_links = lp_session_links(r->s);
	rep->pid_filtered = lp_session_per_process(r->s);
	/*
	 * The probes that pause (the loaders'): a program that decided to pause
	 * just before the stop has finished now, its record is read next. The
	 * markers' uprobe_multi links go in the background meanwhile (they
	 * record nothing from the stop on); recorder_cleanup waits for them and
	 * removes the rest once the outputs are written and printed.
	 */
	lp_session_detach_pausers(r->s);
	lp_session_consume(r->s);
	r->ops->ended(r);
	lp_session_consume(r->s);
	lp_pipeline_finish(r->pl, r->end_ns);
}

/* What the user should know of the recording besides the table. */
static void warn_recording(struct recorder *r)
{
	const struct lp_report_process *procs;
	const struct strtab *st = lp_pipeline_strtab(r->pl);
	size_t n;

	lp_warn_late_specs(r);
	if (r->follow.late_files)
		lp_warn("%llu file%s with markers attached while a process that maps them ran on "
			"(a job of an interactive shell, or a traced process, is not paused): their "
			"spans from before are missing",
			(unsigned long long)r->follow.late_files, r->follow.late_files > 1 ? "s" : "");
	procs = lp_pipeline_processes(r->pl, &n);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *comm = strtab_str(st, procs[i].comm, &len);

		if (procs[i].privileged)
			lp_warn("PID %u exec'ed %.*s, which gains privileges (setuid, setgid or "
				"file capabilities): not recorded from then on",
				procs[i].pid, (int)len, comm);
	}
}

/*
 * The CLOCK_REALTIME time of a CLOCK_MONOTONIC one, by the two clocks' offset
 * now: a store of many hosts compares recordings by the wall clock.
 */
static uint64_t unix_ns_of(uint64_t mono_ns)
{
	struct timespec m, r;
	uint64_t now_m, now_r;

	if (clock_gettime(CLOCK_MONOTONIC, &m) || clock_gettime(CLOCK_REALTIME, &r))
		return 0;
	now_m = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	now_r = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
	return now_r > now_m - mono_ns ? now_r - (now_m - mono_ns) : 0;
}

/*
 * The fixed steps before recording, each from the end of the one before:
 * setup, open, load (lp_session_load_times), attach (until the gates opened,
 * r->since), then to the first span event.
 */
static void fill_phases(struct recorder *r, struct lp_report *rep)
{
	uint64_t opened = 0, loaded = 0, first = rep->totals ? rep->totals->first_ns : 0;

	if (r->s)
		lp_session_load_times(r->s, &opened, &loaded);
	if (!opened || !loaded || !r->since)
		return;
	rep->phases.setup_ns = r->phase_at.setup - r->phase_at.begin;
	rep->phases.open_ns = opened - r->phase_at.setup;
	rep->phases.load_ns = loaded - opened;
	rep->phases.attach_ns = r->since - loaded;
	rep->phases.first_event_ns = first > r->since ? first - r->since : 0;
}

/* The report: the pipeline's part, then the recorder's. */
static int fill_report(struct recorder *r, struct lp_report *rep)
{
	const struct lp_record_opts *o = r->o;
	int err;

	lp_pipeline_sites_skipped(r->pl, lp_session_sites_skipped(r->s));
	err = lp_pipeline_report(r->pl, rep);

	lp_session_loss(r->s, &rep->loss);
	rep->table_rows = o->table_rows;
	rep->res = r->resources;
	rep->counter_name = o->counter_name;
	rep->argv = o->mode == LP_MODE_LAUNCH ? o->argv : NULL;
	rep->pid = o->mode == LP_MODE_LAUNCH ? r->child.pid : o->mode == LP_MODE_ATTACH ? o->pid : 0;
	rep->exit_status = r->exit_status;
	rep->buffer_bytes = o->buffer_bytes;
	rep->base_ns = r->since;
	rep->start_unix_ns = unix_ns_of(r->since);
	rep->end_ns = r->end_ns;
	rep->end_reason = r->end_reason ? r->end_reason : LP_END_ERROR;
	rep->mode = o->mode;
	rep->off_cpu = o->off_cpu;
	rep->steal_clock = o->off_cpu && r->s && lp_session_steal_clock(r->s);
	rep->binary = o->binary;
		rep->trace_path = r->trace_open || r->pftrace ? r->trace_path : NULL;
	if ((r->trace_open || r->pftrace) && (o->trace_last_ns || o->trace_max_bytes)) {
		rep->bound.on = true;
		rep->bound.last_ns = o->trace_last_ns;
		rep->bound.max_bytes = o->trace_max_bytes ? o->trace_max_bytes : LP_TRACE_LAST_MEMORY;
		/* Every span is closed (lp_pipeline_finish): the window is final, both traces'. */
		if (r->trace_open)
			lp_trace_bound_end(&r->trace, r->end_ns, &rep->bound.st);
		else
			lp_pftrace_bound_end(r->pftrace, r->end_ns, &rep->bound.st);
		lp_info("trace: %llu spans kept, %llu left out; the window took %llu KiB at most",
			(unsigned long long)rep->bound.st.spans,
			(unsigned long long)rep->bound.st.spans_left_out,
			(unsigned long long)rep->bound.st.peak_bytes >> 10);
	}
	rep->summary_path = r->o->no_outputs ? NULL : r->summary_path;
	rep->follow = r->follow;
	rep->show_self = lp_verbose;
	fill_phases(r, rep);
	return err;
}

/* What recording cost leanprofiler itself (the BPF programs' time is the targets'). */
void lp_record_self_usage(struct lp_resources *res)
{
	struct rusage ru;

	struct lp_proc_usage u = { 0 };

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	lp_usage_from_rusage(&ru, res);
	res->scope = "leanprofiler";
	/*
	 * ru_maxrss outlives execve: started by a larger process (a test
	 * runner, a shell holding much), it is that one's peak. VmHWM is this
	 * program's own address space's.
	 */
	if (!lp_proc_usage(getpid(), &u) && u.has_peak)
		res->peak_rss_kib = u.peak_rss_kib;
}

/* The previous recording's pair, kept as .old before the new one takes the names. */
static void keep_previous(struct recorder *r)
{
	/* Both formats' traces: the directory holds one recording's files, *.old the one before. */
	static const char *const names[] = { "leanprofiler-trace.json",
					     "leanprofiler-summary.json", LP_PFTRACE_FILE };
	int err = lp_outdir_keep_old(&r->outdir, names, 3);

	if (err)
		lp_warn("cannot keep the previous recording in %s as *.old: %s; writing over it",
			r->o->out_dir, strerror(-err));
}

static int write_outputs(struct recorder *r, struct lp_report *rep)
{
	int err = 0, serr;

	if (r->o->no_outputs) {
		lp_record_self_usage(&rep->self);
		rep->finish_ns = lp_now_ns() - rep->end_ns;
		return 0;
	}
	keep_previous(r);

	if (r->pftrace) {
		char *json = lp_report_other_data_json(rep);

		lp_pipeline_set_pftrace(r->pl, NULL);
		err = lp_pftrace_close(r->pftrace, json, NULL);
		r->pftrace = NULL;
		free(json);
		if (err) {
			lp_err("cannot write %s: %s", r->pftrace_path, strerror(-err));
			if (r->o->no_json)
				rep->trace_path = NULL;
		} else if (!r->o->no_json) {
			lp_note("Perfetto trace: %s", r->pftrace_path);
		}
	}
	if (r->trace_open) {
		char *json = lp_report_other_data_json(rep);

		err = lp_trace_close(&r->trace, json);
		r->trace_open = false;
		lp_pipeline_set_trace(r->pl, NULL);
		free(json);
		if (err) {
			lp_err("cannot write %s: %s", r->trace_path, strerror(-err));
			rep->trace_path = NULL;
		}
	}
	/*
	 * Our own figures as late as they can be: after the probes are gone,
	 * the ring drained and the trace written; only the summary is left.
	 */
	lp_record_self_usage(&rep->self);
	rep->finish_ns = lp_now_ns() - rep->end_ns;
	/* Written as it goes: a summary of many rows is never whole in memory. */
	serr = lp_report_summary_json(r->summary.f, rep);
	if (serr)
		lp_outfile_abort(&r->summary);
	else
		serr = lp_outfile_commit(&r->summary);
	if (serr) {
		lp_err("cannot write %s: %s", r->summary_path, strerror(-serr));
		rep->summary_path = NULL;
	}
	return err ? err : serr;
}

/* Stops, reports and writes what was recorded; err is the run's. */
static int finish_recording(struct recorder *r, int err)
{
	struct lp_report *rep = calloc(1, sizeof(*rep));
	int perr;

	if (!rep) {
		lp_err("out of memory");
		return -ENOMEM;
	}
	r->res->report = rep;
	end_recording(r, rep);
	r->phase_at.ended = lp_now_ns();
	warn_recording(r);
	perr = fill_report(r, rep);
	perr = perr ? perr : lp_pipeline_error(r->pl);
	if (perr)
		lp_err("processing records failed: %s; the results are incomplete",
		       strerror(-perr));
	/* (r->err: probes of files mapped while recording could not start, said then.) */
	err = err ? err : perr ? perr : r->err;
	if (r->win) {
		/* The windows first: the last one is cut at the end, and exported. */
		perr = lp_windows_end(r, &r->res->export_failed);
		err = err ? err : perr;
	}
	perr = write_outputs(r, rep);
	r->phase_at.written = lp_now_ns();
	return err ? err : perr;
}

/* Whatever happened: nothing stays paused, stopped or orphaned by us. */
static void recorder_cleanup(struct recorder *r)
{
	if (r->s && !r->stopping) {
		/* Failed while recording: nothing may stay paused for us. */
		lp_session_stop(r->s);
		lp_release_paused(r);
		lp_session_consume(r->s);
	}
	if (r->trace_open)
		lp_trace_abort(&r->trace);
	lp_windows_free(r->win);
	r->win = NULL;
	lp_pftrace_abort(r->pftrace);
	if (r->pl) {
		lp_pipeline_set_trace(r->pl, NULL); /* the trace lives on our stack */
		lp_pipeline_set_pftrace(r->pl, NULL);
	}
	if (r->summary.f)
		lp_outfile_abort(&r->summary);
	if (r->child.pid > 0 && !r->child.reaped)
		lp_launch_kill(&r->child); /* never leave the command stopped or orphaned */
	if (r->child.pidfd >= 0)
		close(r->child.pidfd);
	if (r->root_pidfd >= 0)
		close(r->root_pidfd);
	lp_usage_free(&r->usage);
	if (r->sigfd >= 0)
		close(r->sigfd);
	lp_session_close(r->s);
	if (!r->res->report)
		lp_outdir_unmake(&r->outdir, &r->user); /* nothing was written: nothing is left */
	lp_outdir_close(&r->outdir);
	free(r->rescan);
	free(r->relays);
	if (!r->res->report) {
		lp_pipeline_free(r->pl);
		free(r->trace_path);
		free(r->summary_path);
		free(r->pftrace_path);
		return;
	}
	/* The report points into them: the caller prints it, lp_record_result_free frees. */
	r->res->pipeline = r->pl;
	if (r->res->report->trace_path != r->trace_path)
		free(r->trace_path);
	free(r->pftrace_path);
	if (r->res->report->summary_path != r->summary_path)
		free(r->summary_path);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/*
 * -v: where the wall time of the recording went, phase by phase (the fixed
 * cost of a short one is all but "run"); done: now, after the teardown.
 */
static void say_phases(const struct recorder *r, uint64_t done)
{
	const struct lp_report *rep = r->res->report;
	const struct lp_phases *p = rep ? &rep->phases : NULL;
	uint64_t started, first;

	if (!p || !p->load_ns || !r->phase_at.written)
		return;
	first = r->since + p->first_event_ns;
	started = p->first_event_ns ? first : r->since;
	lp_info("phases: setup %.1f ms, open %.1f ms, load %.1f ms, attach %.1f ms, first event "
		"%.1f ms, run %.1f ms, end %.1f ms, write %.1f ms, detach %.1f ms; %.1f ms in all",
		ms(p->setup_ns), ms(p->open_ns), ms(p->load_ns), ms(p->attach_ns),
		ms(p->first_event_ns), ms(r->end_ns > started ? r->end_ns - started : 0),
		ms(r->phase_at.ended - r->end_ns), ms(r->phase_at.written - r->phase_at.ended),
		ms(done - r->phase_at.written), ms(done - r->phase_at.begin));
}

int lp_record(const struct lp_record_opts *o, struct lp_record_result *res)
{
	uint64_t begin = lp_now_ns();
	struct recorder r;
	int err;

	memset(res, 0, sizeof(*res));
	res->stage = LP_STAGE_SETUP;
	err = recorder_init(&r, o, res);
	r.phase_at.begin = begin;
	/* Signals first: a Ctrl-C from here on is seen before the targets run. */
	if (!err)
		err = setup_signals(&r);
	if (!err)
		err = setup_outputs(&r);
	if (!err)
		err = setup_session(&r);
	/*
	 * A terminal's Ctrl-C reaches the held command too, which then dies in
	 * the loader and fails the attach (said): the signal was the cause.
	 */
	if (err && err != -EINTR && r.sigfd >= 0 && res->stage == LP_STAGE_SETUP)
		interrupted_before_start(&r);
	if (!err)
		err = start_recording(&r);
	if (!err) {
		res->stage = LP_STAGE_RUN;
		/* Its errors are said; what was recorded until then is written. */
		err = run_loop(&r);
		err = finish_recording(&r, err);
		/* The table before the slow detach: the recording ended at the stop. */
		if (res->report && o->print) {
			o->print(o, res->report);
			fflush(stdout);
			res->printed = true;
		}
	}
	recorder_cleanup(&r);
	say_phases(&r, lp_now_ns());
	return err;
}

void lp_record_result_free(struct lp_record_result *res)
{
	if (res->report) {
		free((char *)res->report->trace_path);
		free((char *)res->report->summary_path);
		free(res->report);
		res->report = NULL;
	}
	lp_pipeline_free(res->pipeline);
	res->pipeline = NULL;
}
