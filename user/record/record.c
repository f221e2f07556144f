// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpf/wire.h"
#include "decode.h"
#include "creds.h"
#include "launch.h"
#include "nest.h"
#include "outdir.h"
#include "outfile.h"
#include "pairs.h"
#include "proc.h"
#include "report.h"
#include "session.h"
#include "stats.h"
#include "trace.h"
#include "usage.h"
#include "usdt.h"

/* How often the ring buffer is drained when the kernel does not wake us. */
#define LP_POLL_MS 10

struct rescan {
	uint32_t pid;
	bool paused;       /* stopped by the kernel half (LP_LIBS_PAUSED): waits for SIGCONT */
	uint64_t since_ns; /* ... since then */
};

struct recorder {
	const struct lp_record_opts *o;
	struct strtab *st;
	struct lp_decoder *dec;
	struct lp_nest *nest;
	struct lp_stats *stats;
	struct lp_paths *paths;
	struct lp_pairs *pairs; /* span-pair specs */
	struct lp_session *s;
	struct lp_trace trace;
	bool trace_open;
	struct lp_report_process *procs;
	size_t nprocs, procs_cap;
	size_t live; /* target processes still running */
	struct rescan *rescan; /* processes that may map new files: attach to them */
	size_t nrescan, rescan_cap;
	bool stopping;   /* recording ends: paused processes only go on */
	uint64_t end_ns; /* recording ended then (0: not yet) */
	size_t privileged; /* processes that left at an exec that gains privileges */
	struct lp_follow follow; /* pauses, files attached late */
	const char *end_reason;
	int err; /* first pipeline error */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* The clock bpf_ktime_get_ns() reads. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void set_err(struct recorder *r, int err)
{
	if (err && !r->err)
		r->err = err;
}

static void on_span(void *ctx, const struct lp_span *s)
{
	struct recorder *r = ctx;

	set_err(r, lp_stats_add(r->stats, s));
	set_err(r, lp_paths_add(r->paths, s));
	if (r->trace_open)
		lp_trace_span(&r->trace, s);
}

static int on_event(void *ctx, const struct lp_event *ev)
{
	struct recorder *r = ctx;

	return lp_nest_event(r->nest, ev);
}

static int on_usdt(void *ctx, const struct lp_usdt_event *ue)
{
	struct recorder *r = ctx;

	return lp_pairs_event(r->pairs, ue);
}

static void on_track_end(void *ctx, uint32_t pid, uint32_t track_tid, uint64_t end_ns)
{
	struct recorder *r = ctx;

	lp_nest_thread_end(r->nest, pid, track_tid, end_ns);
}

static long file_text(void *ctx, uint64_t dev, uint64_t ino, uint64_t off, char *buf, size_t size)
{
	struct recorder *r = ctx;

	return lp_session_file_text(r->s, dev, ino, off, buf, size);
}

static struct lp_report_process *find_proc(struct recorder *r, uint32_t pid)
{
	for (size_t i = r->nprocs; i-- > 0;)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static int add_proc(struct recorder *r, uint32_t pid, uint32_t ppid, const char *origin,
		    uint32_t comm)
{
	struct lp_report_process *p = lp_grow(r->procs, &r->procs_cap, r->nprocs + 1,
					      sizeof(*p));

	if (!p)
		return -ENOMEM;
	r->procs = p;
	r->procs[r->nprocs++] = (struct lp_report_process){
		.pid = pid, .ppid = ppid, .origin = origin, .comm = comm, .alive = true,
	};
	r->live++;
	return 0;
}

static uint32_t intern_cstr(struct recorder *r, const char *s)
{
	return strtab_intern(r->st, s, strlen(s));
}

struct attach_ctx {
	struct recorder *r;
	int attached; /* probes attached in files not seen before */
};

/* Attaches to the markers of every executable file pid maps. */
static int attach_file(void *ctx, const struct lp_proc_file *f)
{
	struct attach_ctx *a = ctx;
	size_t before = lp_session_probes(a->r->s);

	/* Its errors are said; a file that is gone, or not ELF, has nothing to probe. */
	lp_session_attach(a->r->s, f->open_path, f->path, f->dev, f->ino);
	a->attached += (int)(lp_session_probes(a->r->s) - before);
	return 0;
}

/* Attaches to what pid maps; the probes attached in files new to the recording, or -errno. */
static int attach_process(struct recorder *r, pid_t pid)
{
	struct attach_ctx a = { .r = r };
	int err = lp_proc_exec_files(pid, attach_file, &a);

	return err ? err : a.attached;
}

/* Lets a paused process go on, and counts how long it waited. */
static void resume(struct recorder *r, const struct rescan *q)
{
	uint64_t waited = now_ns() - q->since_ns;

	kill((pid_t)q->pid, SIGCONT);
	if (waited > (uint64_t)1 << 62)
		waited = 0; /* a record's time ahead of ours: not measured */
	r->follow.pauses++;
	r->follow.pause_total_ns += waited;
	if (waited > r->follow.pause_max_ns)
		r->follow.pause_max_ns = waited;
}

/* pid may map new files (or is paused until they are attached): look after this batch. */
static int queue_rescan(struct recorder *r, uint32_t pid, bool paused, uint64_t ts_ns)
{
	struct rescan *q;

	for (size_t i = 0; i < r->nrescan; i++) {
		if (r->rescan[i].pid == pid) {
			if (paused && !r->rescan[i].paused)
				r->rescan[i].since_ns = ts_ns;
			r->rescan[i].paused |= paused;
			return 0;
		}
	}
	q = lp_grow(r->rescan, &r->rescan_cap, r->nrescan + 1, sizeof(*q));
	if (!q) {
		/* Never leave a process stopped because we are short of memory. */
		if (paused)
			resume(r, &(struct rescan){ pid, paused, ts_ns });
		return -ENOMEM;
	}
	r->rescan = q;
	r->rescan[r->nrescan++] = (struct rescan){ pid, paused, ts_ns };
	return 0;
}

static int on_libs(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns)
{
	struct recorder *r = ctx;

	if (r->stopping) {
		if (paused)
			resume(r, &(struct rescan){ pid, paused, ts_ns });
		return 0;
	}
	return queue_rescan(r, pid, paused, ts_ns);
}

static void gate_opened(void *ctx, uint32_t file, uint64_t since_ns)
{
	struct recorder *r = ctx;

	lp_decoder_file_since(r->dec, file, since_ns);
	lp_nest_gate(r->nest, since_ns);
}

/* Files attached since the last call are recorded from a moment just ahead on. */
static int open_gates(struct recorder *r, uint64_t *since)
{
	uint64_t at;
	int err = lp_session_open_gates(r->s, &at, gate_opened, r);

	if (!err && since && at)
		*since = at;
	return err;
}

/* Whether spec i has both an entry and an exit probe attached. */
static bool spec_complete(const struct recorder *r, size_t i)
{
	unsigned both = 1u << LP_USDT_ROLE_ENTRY | 1u << LP_USDT_ROLE_EXIT;

	return (lp_session_spec_found(r->s, i) & both) == both;
}

static void rescan_queued(struct recorder *r)
{
	bool was[LP_SPEC_MAX];

	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		was[i] = spec_complete(r, i);
	for (size_t i = 0; i < r->nrescan; i++) {
		/* A process that is gone has nothing left to probe. */
		int n = attach_process(r, (pid_t)r->rescan[i].pid);

		if (n > 0 && !r->rescan[i].paused)
			r->follow.late_files++;
		if (r->rescan[i].paused)
			lp_info("PID %u paused for files it mapped: %d new probes", r->rescan[i].pid,
				n > 0 ? n : 0);
	}
	/* Recorded from a moment just ahead, which has passed when this returns. */
	set_err(r, open_gates(r, NULL));
	/* Only now may the paused processes run the code they mapped. */
	for (size_t i = 0; i < r->nrescan; i++)
		if (r->rescan[i].paused)
			resume(r, &r->rescan[i]);
	r->nrescan = 0;
	/* The gates are open: said once a late spec's probes are being recorded. */
	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		if (!was[i] && spec_complete(r, i) && r->o->specs[i].late)
			lp_note("recording spec '%s'%s%s from now on (its probes appeared in a "
				"library mapped at run time)",
				r->o->specs[i].text, r->o->specs[i].preset ? " of preset " : "",
				r->o->specs[i].preset ? r->o->specs[i].preset : "");
}

/* Recording ends: processes paused for new files go on without them. */
static void release_paused(struct recorder *r)
{
	r->stopping = true;
	for (size_t i = 0; i < r->nrescan; i++)
		if (r->rescan[i].paused)
			resume(r, &r->rescan[i]);
	r->nrescan = 0;
}

static int on_task(void *ctx, const struct lp_task_event *te)
{
	struct recorder *r = ctx;
	struct lp_report_process *p;
	int err = 0;

	/*
	 * After the end, nothing happens: a process that exits then was alive
	 * when recording ended, and its open spans end with the recording.
	 */
	if (r->end_ns && te->ts_ns >= r->end_ns)
		return 0;
	switch (te->what) {
	case LP_TASK_FORK:
		/* Spans open in the parent at fork are open in the child too. */
		err = lp_nest_process_begin(r->nest, te->pid, te->ts_ns, true);
		if (!err)
			err = add_proc(r, te->pid, te->ppid, "forked", te->comm);
		break;
	case LP_TASK_FOUND:
		err = lp_nest_process_begin(r->nest, te->pid, te->ts_ns, !te->new_image);
		if (!err)
			err = add_proc(r, te->pid, te->ppid, "found", te->comm);
		/*
		 * Found running: attach to what it maps. Found at its exec, it maps
		 * its libraries later, and is paused for them then (lp_dl_state).
		 */
		if (!err && !te->new_image)
			err = queue_rescan(r, te->pid, false, te->ts_ns);
		break;
	case LP_TASK_THREAD:
		err = lp_nest_thread_begin(r->nest, te->pid, te->tid, te->ts_ns);
		break;
	case LP_TASK_EXEC:
		lp_pairs_process_end(r->pairs, te->pid);
		lp_nest_process_end(r->nest, te->pid, te->ts_ns);
		/* (A program not examined yet is paused for us: LP_REC_LIBS.) */
		err = lp_nest_process_begin(r->nest, te->pid, te->ts_ns, false);
		p = find_proc(r, te->pid);
		if (p)
			p->comm = te->comm;
		break;
	case LP_TASK_EXIT:
		lp_pairs_thread_end(r->pairs, te->pid, te->tid, te->ts_ns);
		lp_nest_thread_end(r->nest, te->pid, te->tid, te->ts_ns);
		if (!te->group_dead)
			break;
		lp_pairs_process_end(r->pairs, te->pid);
		lp_nest_process_end(r->nest, te->pid, te->ts_ns);
		p = find_proc(r, te->pid);
		if (p && p->alive) {
			p->alive = false;
			r->live--;
		}
		if (p && te->privileged) {
			p->privileged = true;
			p->comm = te->comm;
			r->privileged++;
		}
		break;
	}
	return err;
}

static void collect_texts(struct recorder *r);

static int on_record(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;

	set_err(r, lp_decode(r->dec, data, size));
	/*
	 * Between two records every id in use is in a holder. Here, not only
	 * between batches: one drain lasts as long as the targets keep the ring
	 * buffer busy (a fast target's whole run, or the drain after the stop).
	 */
	collect_texts(r);
	return 0; /* keep draining: a record we could not use is still consumed */
}

static void text_freed(void *ctx, uint32_t id)
{
	struct recorder *r = ctx;

	if (r->trace_open)
		lp_trace_forget(&r->trace, id);
}

/*
 * Frees the texts nothing holds any more once enough new ones came in
 * (strtab_gc_due(): a comparison, cheap enough for every record). Called
 * between records: none is half decoded, so every id in use is in a holder
 * that marks it (docs/internals.md, "Texts").
 */
static void collect_texts(struct recorder *r)
{
	struct strtab_gc_result res;

	if (!strtab_gc_due(r->st))
		return;
	strtab_gc_begin(r->st);
	lp_decoder_mark(r->dec, r->st);
	lp_pairs_mark(r->pairs, r->st);
	lp_nest_mark(r->nest, r->st);
	lp_stats_mark(r->stats, r->st);
	lp_paths_mark(r->paths, r->st);
	for (size_t i = 0; i < r->nprocs; i++)
		strtab_mark(r->st, r->procs[i].comm);
	strtab_gc_end(r->st, text_freed, r, &res);
	if (r->trace_open)
		lp_trace_compact(&r->trace);
	lp_info("texts: %u freed (%zu KiB), %u kept (%zu KiB)", res.freed_ids,
		res.freed_bytes >> 10, res.live_ids, res.live_bytes >> 10);
}

static char *path_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

/*
 * Opens an output file (the trace when t is set, else o) in the output
 * directory, as the user it is for (lp_outdir_enter), and gives it to them.
 */
static int open_output(const struct lp_outdir *dir, const struct lp_creds *owner,
		       struct lp_outfile *o, struct lp_trace *t, const char *name,
		       const struct strtab *st, uint64_t base_ns)
{
	struct lp_fs_saved saved;
	int err = lp_outdir_enter(dir, owner, &saved);

	if (err)
		return err;
	err = t ? lp_trace_openat(t, dir->fd, name, st, base_ns) : lp_outfile_openat(o, dir->fd, name);
	lp_outdir_leave(&saved);
	if (!err)
		err = lp_outdir_give(owner, fileno(t ? t->out.f : o->f));
	if (err && t)
		lp_trace_abort(t);
	else if (err)
		lp_outfile_abort(o);
	return err;
}

struct loop {
	struct lp_child *child; /* launch mode */
	int root_pidfd;         /* attach mode: the attached process */
	int sigfd;
	uint64_t deadline_ns;   /* 0: none */
	int signals, signo;     /* terminating signals received, the last one */
	struct lp_usage usage;  /* attach mode */
};

/* Records until the command exits, the targets exit, the duration ends or a signal. */
static int run_loop(struct recorder *r, struct loop *l)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), err = 0;
	int fds[3] = { lp_session_fd(r->s), l->sigfd,
		       l->child ? l->child->pidfd : l->root_pidfd };

	if (ep < 0)
		return -errno;
	for (size_t i = 0; i < 3; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (fds[i] >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev)) {
			err = -errno;
			goto out;
		}
	}
	for (;;) {
		struct epoll_event evs[4];
		int timeout = LP_POLL_MS, n;

		if (l->deadline_ns) {
			uint64_t now = now_ns();

			if (now >= l->deadline_ns) {
				r->end_reason = "duration";
				break;
			}
			if ((l->deadline_ns - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((l->deadline_ns - now) / 1000000) + 1;
		}
		n = epoll_wait(ep, evs, 4, timeout);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		for (int i = 0; i < n; i++) {
			struct signalfd_siginfo si;

			if (evs[i].data.fd == l->root_pidfd && l->root_pidfd >= 0) {
				/*
				 * The attached process is gone: count it so even if its exit
				 * record was lost (children it forked may still run).
				 */
				struct lp_report_process *p = find_proc(r, (uint32_t)r->o->pid);

				epoll_ctl(ep, EPOLL_CTL_DEL, l->root_pidfd, NULL);
				l->root_pidfd = -1;
				if (p && p->alive) {
					p->alive = false;
					r->live--;
				}
				continue;
			}
			if (evs[i].data.fd != l->sigfd)
				continue;
			while (read(l->sigfd, &si, sizeof(si)) == sizeof(si)) {
				l->signo = (int)si.ssi_signo;
				/*
				 * Attached: a signal ends the recording. Launched: the first
				 * one is the command's (a terminal's Ctrl-C reached it already,
				 * in the same process group; one sent to us alone is passed
				 * on); a second one ends the recording, the command runs on.
				 */
				if (!l->child || ++l->signals > 1) {
					r->end_reason = "signal";
					continue;
				}
				if (si.ssi_code != SI_KERNEL)
					kill(l->child->pid, (int)si.ssi_signo);
			}
		}
		err = lp_session_consume(r->s);
		if (err)
			break;
		if (r->nrescan)
			rescan_queued(r);
		if (r->o->mode == LP_MODE_ATTACH && l->root_pidfd >= 0)
			lp_usage_sample(&l->usage, now_ns(), false);
		if (r->end_reason)
			break;
		if (l->child) {
			err = lp_launch_reap(l->child, false);
			if (err < 0)
				break;
			if (err == 1) {
				err = 0;
				r->end_reason = "command exited";
				break;
			}
		} else if (r->o->mode == LP_MODE_ATTACH && r->live == 0) {
			r->end_reason = "targets exited";
			break;
		}
	}
out:
	close(ep);
	return err;
}

/* Thread rows for the report, names into the trace. */
static struct lp_report_thread *collect_threads(struct recorder *r, size_t *count)
{
	const struct lp_thread_info *infos;
	size_t n = lp_nest_threads(r->nest, &infos);
	struct lp_report_thread *out = calloc(n ? n : 1, sizeof(*out));
	char buf[32];

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t comm, pcomm;
		bool first_of_pid = true;

		uint32_t tid = infos[i].tid;

		/* A track of keyed spans is named after its thread. */
		if (LP_TRACK_IS(tid))
			tid = LP_TRACK_REAL(tid);
		if (!lp_decoder_thread_name(r->dec, infos[i].pid, tid, &comm, &pcomm)) {
			snprintf(buf, sizeof(buf), "tid %u", tid);
			comm = intern_cstr(r, buf);
			snprintf(buf, sizeof(buf), "pid %u", infos[i].pid);
			pcomm = intern_cstr(r, buf);
		}
		if (LP_TRACK_IS(infos[i].tid)) {
			size_t len;
			const char *c = strtab_str(r->st, comm, &len);
			char *nm;

			if (asprintf(&nm, "%.*s (%u) keyed spans %u", (int)len, c, tid,
				     LP_TRACK_NO(infos[i].tid)) >= 0) {
				comm = intern_cstr(r, nm);
				free(nm);
			}
		}
		for (size_t j = 0; j < i; j++)
			first_of_pid &= infos[j].pid != infos[i].pid;
		if (r->trace_open) {
			struct lp_report_process *p = find_proc(r, infos[i].pid);

			if (first_of_pid)
				lp_trace_name(&r->trace, true, infos[i].pid, infos[i].pid,
					      p ? p->comm : pcomm);
			lp_trace_name(&r->trace, false, infos[i].pid, infos[i].tid, comm);
		}
		out[i] = (struct lp_report_thread){
			.pid = infos[i].pid,
			.tid = infos[i].tid,
			.name = comm,
			.spans = infos[i].spans,
			.recorded_ns = infos[i].recorded_ns,
			.lost = lp_session_thread_loss(r->s, infos[i].tid),
			.max_depth = infos[i].max_depth,
		};
	}
	*count = n;
	return out;
}

/*
 * Every span-pair spec needs an entry and an exit probe attached somewhere:
 * says which one is missing (-ENOENT), else 0. A late spec (late=yes) may
 * find its probes later, in a library mapped at run time: not yet is fine
 * (warn_late_specs() tells at the end). Then, with neither markers nor
 * specs, there is nothing to record: the caller says so.
 */
static int check_specs(struct recorder *r, const char *where)
{
	for (size_t i = 0; i < r->o->nspecs; i++) {
		const struct lp_spec *sp = &r->o->specs[i];
		unsigned found = lp_session_spec_found(r->s, i);

		if (sp->late)
			continue;

		for (int role = 0; role < 2; role++) {
			const struct lp_probe_ref *p = role ? sp->exit : sp->entry;

			if (found & (1u << role))
				continue;
			lp_err("no usable %s probe %s:%s%s in %s: 'leanprofiler list' shows the "
			       "probes there (spec '%s'%s%s)",
			       role ? "exit" : "entry", p->provider, p->name,
			       (role ? sp->nexit : sp->nentry) > 1 ? " (or its alternatives)" : "",
			       where, sp->text, sp->preset ? " of preset " : "",
			       sp->preset ? sp->preset : "");
			return -ENOENT;
		}
	}
	return 0;
}

/* Late specs whose probes never appeared: nothing of them was recorded. */
static void warn_late_specs(struct recorder *r)
{
	for (size_t i = 0; i < r->o->nspecs; i++) {
		const struct lp_spec *sp = &r->o->specs[i];

		if (sp->late && !spec_complete(r, i))
			lp_warn("no usable %s probe of spec '%s'%s%s appeared while recording: "
				"nothing of it was recorded ('leanprofiler list -p PID' shows the "
				"probes a process has)",
				lp_session_spec_found(r->s, i) & 1u << LP_USDT_ROLE_ENTRY ? "exit"
											   : "entry",
				sp->text, sp->preset ? " of preset " : "",
				sp->preset ? sp->preset : "");
	}
}

/* Probes to wait for: a late spec not attached yet. */
static bool late_pending(struct recorder *r)
{
	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		if (r->o->specs[i].late && !spec_complete(r, i))
			return true;
	return false;
}

/* Sets the recording up for the launched command, stopped right after its exec. */
static int start_launch(struct recorder *r, struct lp_child *c, uint64_t *since)
{
	char comm[32];
	int err;

	*since = now_ns();
	err = lp_session_add_target(r->s, c->pid, *since);
	if (!err && lp_proc_comm(c->pid, comm, sizeof(comm)) == 0)
		err = add_proc(r, (uint32_t)c->pid, (uint32_t)getpid(), "launched",
			       intern_cstr(r, comm));
	/*
	 * Run to the program's entry point: the loader has mapped every linked
	 * library then, and none of the program's own code has run.
	 */
	if (!err)
		err = lp_launch_run_to_entry(c);
	if (!err) {
		err = attach_process(r, c->pid);
		err = err > 0 ? 0 : err;
	}
	if (err) {
		lp_err("cannot attach to %s: %s", r->o->argv[0], strerror(-err));
		return err;
	}
	err = check_specs(r, r->o->argv[0]);
	if (err)
		return err;
	if (lp_session_probes(r->s) == 0 && !late_pending(r)) {
		lp_err("no leanprofiler markers in %s or the libraries it links: nothing to record "
		       "(is it built with include/leanprofiler.h?)",
		       r->o->argv[0]);
		return -ENOENT;
	}
	return 0;
}

/* Sets the recording up for a process already running. */
static int start_attach(struct recorder *r, uint64_t *since, struct loop *l)
{
	pid_t pid = r->o->pid;
	char comm[32];
	pid_t ppid = 0;
	int err = lp_proc_comm(pid, comm, sizeof(comm));

	if (err) {
		lp_err("cannot attach to PID %d: %s", (int)pid,
		       err == -ESRCH ? "no such process" : strerror(-err));
		return err;
	}
	lp_proc_ppid(pid, &ppid);
	/* A target first, so that a library mapped while we scan is still reported. */
	*since = now_ns();
	err = lp_session_add_target(r->s, pid, *since);
	if (!err)
		err = add_proc(r, (uint32_t)pid, (uint32_t)ppid, "attached", intern_cstr(r, comm));
	if (!err) {
		err = attach_process(r, pid);
		err = err > 0 ? 0 : err;
	}
	if (err) {
		lp_err("cannot attach to PID %d (%s): %s", (int)pid, comm,
		       err == -ESRCH ? "it exited" : strerror(-err));
		return err;
	}
	{
		char where[64];

		snprintf(where, sizeof(where), "PID %d (%s)", (int)pid, comm);
		err = check_specs(r, where);
		if (err)
			return err;
	}
	if (lp_session_probes(r->s) == 0 && !late_pending(r)) {
		lp_err("no leanprofiler markers in PID %d (%s) or the libraries it has mapped: "
		       "nothing to record (is it built with include/leanprofiler.h?)",
		       (int)pid, comm);
		return -ENOENT;
	}
	l->root_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	lp_usage_start(&l->usage, pid, now_ns());
	return 0;
}

struct found_ctx {
	struct recorder *r;
	uint64_t since;
};

static int found_running(void *ctx, pid_t pid)
{
	struct found_ctx *fc = ctx;
	struct recorder *r = fc->r;
	char comm[32] = "?";
	pid_t ppid = 0;
	int err;

	if (pid == getpid())
		return 0;
	lp_proc_comm(pid, comm, sizeof(comm));
	lp_proc_ppid(pid, &ppid);
	err = lp_session_add_target(r->s, pid, fc->since);
	if (!err)
		err = add_proc(r, (uint32_t)pid, (uint32_t)ppid, "found", intern_cstr(r, comm));
	if (!err)
		attach_process(r, pid); /* one that exited meanwhile has nothing to probe */
	return err;
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
	lp_session_attach(r->s, interp, interp, lp_proc_kdev(st.st_dev), st.st_ino);
	return true;
}

/* Sets the recording up for every process of a binary, running now or later. */
static int start_all(struct recorder *r, uint64_t *since)
{
	struct found_ctx fc = { .r = r };
	struct stat st;
	bool dynamic;
	int err;

	if (stat(r->o->binary, &st)) {
		err = -errno;
		lp_err("cannot record %s: %s", r->o->binary, strerror(-err));
		return err;
	}
	err = lp_session_attach(r->s, r->o->binary, r->o->binary, lp_proc_kdev(st.st_dev),
				st.st_ino);
	if (err == -ENOEXEC || err == -ESRCH)
		lp_err("cannot record %s: %s", r->o->binary,
		       err == -ENOEXEC ? "not an ELF file" : "it is gone");
	if (err < 0)
		return err;
	dynamic = attach_interp(r);
	*since = fc.since = now_ns();
	err = lp_proc_each_running(lp_proc_kdev(st.st_dev), st.st_ino, found_running, &fc);
	if (err) {
		lp_err("cannot scan the running processes: %s", strerror(-err));
		return err;
	}
	err = check_specs(r, r->o->binary);
	if (err)
		return err;
	/* A dynamic binary may link or dlopen() libraries with markers: they are seen as mapped. */
	if (lp_session_probes(r->s) == 0 && !late_pending(r) && !dynamic) {
		lp_err("no leanprofiler markers in %s: nothing to record (is it built with "
		       "include/leanprofiler.h?)",
		       r->o->binary);
		return -ENOENT;
	}
	return 0;
}

/*
 * Whether the attached process has exited: its pidfd said so, or its exit
 * record came first (the loop may end on it before polling the pidfd).
 */
static bool attached_exited(struct recorder *r, const struct loop *l)
{
	const struct lp_report_process *p = find_proc(r, (uint32_t)r->o->pid);
	struct pollfd pfd = { .fd = l->root_pidfd, .events = POLLIN };

	if (l->root_pidfd < 0 || (p && !p->alive))
		return true;
	return poll(&pfd, 1, 0) == 1;
}

/* What recording cost leanprofiler itself (the BPF programs' time is the targets'). */
static void self_usage(struct lp_resources *res)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	lp_usage_from_rusage(&ru, res);
	res->scope = "leanprofiler";
}

static const char *mode_name(enum lp_mode m)
{
	return m == LP_MODE_LAUNCH ? "launch" : m == LP_MODE_ATTACH ? "attach" : "all-processes";
}

static int write_outputs(struct recorder *r, struct lp_report *rep, struct lp_outfile *summary,
			 const char *trace_path, char **summary_path)
{
	char *json;
	int err = 0, terr = 0, serr;

	if (r->trace_open) {
		json = lp_report_other_data_json(rep);
		terr = lp_trace_close(&r->trace, json);
		r->trace_open = false;
		free(json);
	}
	if (terr) {
		lp_err("cannot write %s: %s", trace_path, strerror(-terr));
		rep->trace_path = NULL;
		err = terr;
	}
	/*
	 * Our own figures as late as they can be: after the probes are gone,
	 * the ring drained and the trace written; only the summary is left.
	 */
	self_usage(&rep->self);
	rep->finish_ns = now_ns() - rep->end_ns;
	/* Written as it goes: a summary of many rows is never whole in memory. */
	serr = lp_report_summary_json(summary->f, rep);
	if (serr)
		lp_outfile_abort(summary);
	else
		serr = lp_outfile_commit(summary);
	if (serr) {
		lp_err("cannot write %s: %s", *summary_path, strerror(-serr));
		free(*summary_path);
		*summary_path = NULL;
		err = err ? err : serr;
	}
	return err;
}

int lp_record(const struct lp_record_opts *o, struct lp_record_result *res)
{
	struct recorder r = { .o = o };
	struct lp_nest_sink nsink = { .span = on_span, .ctx = &r };
	struct lp_decode_sink dsink = { .event = on_event, .task = on_task, .libs = on_libs,
					.usdt = on_usdt, .file_text = file_text, .ctx = &r };
	struct lp_pairs_sink psink = { .event = on_event, .track_end = on_track_end, .ctx = &r };
	struct lp_session_opts so = { .buffer_bytes = o->buffer_bytes, .on_record = on_record,
				      .ctx = &r, .specs = o->specs, .nspecs = o->nspecs };
	struct lp_child c = { .pid = -1, .pidfd = -1 };
	struct loop l = { .root_pidfd = -1, .sigfd = -1 };
	struct lp_outfile summary = { 0 };
	struct lp_outdir outdir = { .fd = -1 };
	struct lp_report rep = { 0 };
	struct lp_report_thread *threads = NULL;
	struct lp_creds user, launch_as;
	struct lp_group **groups;
	const struct lp_decode_stats *ds;
	char *trace_path = NULL, *summary_path = NULL;
	sigset_t block, old;
	int err;
	uint64_t since = 0, end_ns;
	struct stat st;
	bool left_running = false; /* the launched command runs on after the recording */
	bool attached_gone = false; /* the attached process exited before the recording ended */

	memset(res, 0, sizeof(*res));
	res->stage = LP_STAGE_SETUP;
	r.st = strtab_new();
	r.stats = lp_stats_new();
	r.paths = lp_paths_new();
	if (r.stats && o->summary_only)
		lp_stats_set_exact_limit(r.stats, LP_SUMMARY_ONLY_DURATIONS);
	if (r.stats)
		lp_stats_set_max_groups(r.stats, o->max_groups);
	r.nest = r.st ? lp_nest_new(&nsink) : NULL;
	r.dec = r.st ? lp_decoder_new(r.st, &dsink) : NULL;
	r.pairs = r.st ? lp_pairs_new(o->specs, o->nspecs, r.st, &psink) : NULL;
	trace_path = path_join(o->out_dir, "leanprofiler-trace.json");
	summary_path = path_join(o->out_dir, "leanprofiler-summary.json");
	if (!r.st || !r.stats || !r.paths || !r.nest || !r.dec || !r.pairs || !trace_path || !summary_path) {
		err = -ENOMEM;
		lp_err("out of memory");
		goto cleanup;
	}

	/* Under sudo, the command and the outputs are the invoking user's. */
	err = lp_creds_from_sudo(&user);
	if (err) {
		lp_err("SUDO_UID or SUDO_GID is not a valid id; unset them or use --run-as-root");
		goto cleanup;
	}
	launch_as = user;
	if (o->run_as_root)
		launch_as.set = false;

	/* Output first: a bad directory must fail before anything is recorded. */
	err = lp_outdir_open(&outdir, o->out_dir, &user);
	if (err)
		goto cleanup; /* said */
	err = open_output(&outdir, &user, &summary, NULL, "leanprofiler-summary.json", NULL, 0);
	if (err) {
		lp_err("cannot write %s: %s", summary_path, strerror(-err));
		goto cleanup;
	}

	/* Our terminating signals arrive through a signalfd; a launched command gets the old mask. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);
	l.sigfd = signalfd(-1, &block, SFD_NONBLOCK | SFD_CLOEXEC);
	if (l.sigfd < 0) {
		err = -errno;
		lp_err("signalfd: %s", strerror(-err));
		goto cleanup;
	}

	if (o->mode == LP_MODE_ATTACH) {
		char comm[32];

		/* Before loading BPF: a wrong PID is told at once. */
		err = lp_proc_comm(o->pid, comm, sizeof(comm));
		if (err) {
			lp_err("cannot attach to PID %d: %s", (int)o->pid,
			       err == -ESRCH ? "no such process" : strerror(-err));
			goto cleanup;
		}
	}
	if (o->mode == LP_MODE_ALL) {
		if (stat(o->binary, &st)) {
			err = -errno;
			lp_err("cannot record %s: %s", o->binary, strerror(-err));
			goto cleanup;
		}
		so.all_dev = lp_proc_kdev(st.st_dev);
		so.all_ino = st.st_ino;
	}
	if (o->mode == LP_MODE_LAUNCH) {
		/*
		 * Fork before loading BPF: the child was forked while this process
		 * was small, and its peak RSS (which counts the pre-exec copy of us)
		 * stays its own. The child waits, stopped after its exec.
		 */
		err = lp_launch(&c, o->argv, &old, &launch_as);
		if (err) {
			if (err != -ECHILD) {
				res->stage = LP_STAGE_EXEC;
				lp_err("cannot run %s: %s", o->argv[0], strerror(-err));
			} else {
				lp_err("%s exited before recording could start", o->argv[0]);
			}
			goto cleanup;
		}
		l.child = &c;
	}
	err = lp_session_open(&r.s, &so);
	if (err)
		goto cleanup;

	if (o->mode == LP_MODE_LAUNCH) {
		err = start_launch(&r, &c, &since);
		if (err)
			goto cleanup;
	} else if (o->mode == LP_MODE_ATTACH) {
		err = start_attach(&r, &since, &l);
		if (err)
			goto cleanup;
	} else {
		err = start_all(&r, &since);
		if (err)
			goto cleanup;
	}
	/* Every probe is in place: recording starts for all of them at once. */
	err = open_gates(&r, &since);
	/*
	 * The processes found running may be inside spans that began earlier; a
	 * launched command has run nothing yet.
	 */
	for (size_t i = 0; !err && i < r.nprocs; i++)
		err = lp_nest_process_begin(r.nest, r.procs[i].pid, since,
					    strcmp(r.procs[i].origin, "launched") != 0);
	if (err) {
		lp_err("cannot start recording: %s", strerror(-err));
		goto cleanup;
	}
	if (o->duration_ns) {
		l.deadline_ns = since + o->duration_ns;
		lp_session_stop_at(r.s, l.deadline_ns);
	}

	if (!o->summary_only) {
		err = open_output(&outdir, &user, NULL, &r.trace, "leanprofiler-trace.json", r.st,
				  since);
		if (err) {
			lp_err("cannot write %s: %s", trace_path, strerror(-err));
			goto cleanup;
		}
		r.trace_open = true;
	}
	/* Everything that needed more is done: keep only what recording still uses. */
	err = lp_creds_drop_capabilities();
	if (err)
		lp_warn("could not drop capabilities: %s", strerror(-err));
	if (o->mode == LP_MODE_LAUNCH) {
		err = lp_launch_resume(&c);
		if (err) {
			lp_err("cannot resume %s: %s", o->argv[0], strerror(-err));
			goto cleanup;
		}
	} else if (o->mode == LP_MODE_ATTACH) {
		lp_note("recording PID %d (%zu probes); Ctrl-C to stop", (int)o->pid,
			lp_session_probes(r.s));
	} else {
		lp_note("recording every process of %s (%zu running, %zu probes); Ctrl-C to stop",
			o->binary, r.nprocs, lp_session_probes(r.s));
	}
	res->stage = LP_STAGE_RUN;

	err = run_loop(&r, &l);
	if (err)
		lp_err("recording failed: %s; writing what was recorded", strerror(-err));
	/* Decided with the last sample: the figures are until then, or until its exit. */
	attached_gone = o->mode == LP_MODE_ATTACH && attached_exited(&r, &l);
	if (o->mode == LP_MODE_ATTACH && !attached_gone)
		lp_usage_sample(&l.usage, now_ns(), true);
	/* Stop first: nothing is recorded from end_ns on; then let the targets go. */
	end_ns = r.end_ns = lp_session_stop(r.s);
	/* Before waiting for anything: a process paused for a new file goes on. */
	release_paused(&r);
	lp_session_consume(r.s);
	lp_session_prog_time(r.s, &rep.bpf_runs, &rep.bpf_run_ns);
	lp_session_detach(r.s);
	/* A program that decided to pause just before the stop has finished now: its record too. */
	lp_session_consume(r.s);
	if (l.child && !c.reaped && r.end_reason && !strcmp(r.end_reason, "signal")) {
		/* Stopped by a second signal: the command is not ours to end. */
		lp_warn("stopped recording on signal %d; %s (PID %d) keeps running",
			l.signo, o->argv[0], (int)c.pid);
		/* Its figures so far: wait4() has none for a process that runs on. */
		if (lp_usage_running(c.pid, &rep.res))
			rep.res = (struct lp_resources){ 0 };
		left_running = true;
		c.reaped = true; /* not waited for: leave it be */
		c.status = (128 + l.signo) << 8;
	} else if (l.child && !c.reaped) {
		lp_launch_reap(&c, true);
	}
	lp_session_consume(r.s);
	lp_nest_finish(r.nest, end_ns);
	warn_late_specs(&r);
	if (r.follow.late_files)
		lp_warn("%llu file%s with markers attached while a process that maps them ran on "
			"(a job of an interactive shell, or a traced process, is not paused): their "
			"spans from before are missing",
			(unsigned long long)r.follow.late_files, r.follow.late_files > 1 ? "s" : "");
	for (size_t i = 0; i < r.nprocs && r.privileged; i++) {
		size_t len;
		const char *comm = strtab_str(r.st, r.procs[i].comm, &len);

		if (r.procs[i].privileged)
			lp_warn("PID %u exec'ed %.*s, which gains privileges (setuid, setgid or "
				"file capabilities): not recorded from then on",
				r.procs[i].pid, (int)len, comm);
	}
	if (o->mode == LP_MODE_ALL && lp_session_probes(r.s) == 0)
		lp_warn("no leanprofiler markers in %s or in any library its processes mapped: "
			"nothing was recorded",
			o->binary);
	if (l.child)
		res->exit_code = lp_launch_exit_code(&c);

	rep.st = r.st;
	rep.totals = lp_nest_totals(r.nest);
	lp_session_loss(r.s, &rep.loss);
	threads = collect_threads(&r, &rep.nthreads);
	rep.threads = threads;
	rep.ngroups = lp_stats_sorted(r.stats, &groups);
	rep.groups = groups;
	lp_stats_folding(r.stats, &rep.fold);
	rep.table_rows = o->table_rows;
	rep.paths = r.paths;
	if (l.child && !left_running)
		lp_usage_from_rusage(&c.ru, &rep.res);
	else if (o->mode == LP_MODE_ATTACH)
		lp_usage_report(&l.usage, attached_gone, &rep.res);
	ds = lp_decoder_stats(r.dec);
	rep.malformed = ds->malformed;
	rep.truncated = ds->truncated;
	rep.unreadable = ds->unreadable;
	rep.enters = ds->enters;
	rep.exits = ds->exits;
	rep.counter_name = o->counter_name;
	rep.argv = o->mode == LP_MODE_LAUNCH ? o->argv : NULL;
	rep.pid = o->mode == LP_MODE_LAUNCH ? c.pid : o->mode == LP_MODE_ATTACH ? o->pid : 0;
	/* leanprofiler exits 128+N then (README), but the command has no status yet. */
	rep.exit_status = l.child && !left_running ? res->exit_code : -1;
	rep.buffer_bytes = o->buffer_bytes;
	rep.base_ns = since;
	rep.end_ns = end_ns;
	rep.end_reason = r.end_reason ? r.end_reason : "error";
	rep.mode = mode_name(o->mode);
	rep.binary = o->binary;
	rep.procs = r.procs;
	rep.nprocs = r.nprocs;
	rep.trace_path = r.trace_open ? trace_path : NULL;
	rep.nspecs = o->nspecs;
	rep.pairs = o->nspecs ? lp_pairs_stats(r.pairs) : NULL;
	rep.summary_path = summary_path;
	rep.follow = r.follow;
	rep.show_self = lp_verbose;
	if (r.err) {
		err = r.err;
		lp_err("processing records failed: %s; the results are incomplete", strerror(-err));
	}
	{
		int werr = write_outputs(&r, &rep, &summary, trace_path, &summary_path);

		err = err ? err : werr;
	}

	lp_report_table(stdout, &rep);
	fputc('\n', stdout);
	if (rep.trace_path)
		printf("Trace: %s\n", rep.trace_path);
	else if (o->summary_only)
		printf("Trace: not written (--summary-only)\n");
	if (summary_path)
		printf("Summary: %s\n", summary_path);
	fflush(stdout);
	if (rep.loss.enter + rep.loss.exit)
		lp_warn("%llu events were lost because the ring buffer was full; "
			"rerun with a larger --buffer-size (now %zu bytes)",
			(unsigned long long)(rep.loss.enter + rep.loss.exit), o->buffer_bytes);

cleanup:
	if (r.s && !r.stopping) {
		/* Failed while recording: nothing may stay paused for us. */
		lp_session_stop(r.s);
		release_paused(&r);
		lp_session_consume(r.s);
	}
	if (r.trace_open)
		lp_trace_abort(&r.trace);
	if (summary.f)
		lp_outfile_abort(&summary);
	if (l.child && !c.reaped) {
		/* Never leave the command stopped or orphaned by our failure. */
		lp_launch_kill(&c);
	}
	if (c.pidfd >= 0)
		close(c.pidfd);
	if (l.root_pidfd >= 0)
		close(l.root_pidfd);
	lp_usage_free(&l.usage);
	if (l.sigfd >= 0)
		close(l.sigfd);
	lp_session_close(r.s);
	lp_outdir_close(&outdir);
	free(threads);
	free(r.procs);
	free(r.rescan);
	lp_decoder_free(r.dec);
	lp_pairs_free(r.pairs);
	lp_nest_free(r.nest);
	lp_stats_free(r.stats);
	lp_paths_free(r.paths);
	strtab_free(r.st);
	free(trace_path);
	free(summary_path);
	return err;
}
