// SPDX-License-Identifier: MIT
/*
 * Following the targets: the files they map while recording are attached to
 * between two batches of records, processes the kernel half paused for such
 * files go on once attached, and span-pair specs whose probes appear late
 * are told of.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jvm.h"
#include "proc.h"
#include "recorder.h"

/*
 * New files examined (and attached to) in one batch, between two drains of
 * the ring buffer: a target that maps hundreds at once (LD_PRELOAD, a plugin
 * host) is attached to over several batches, and signals, --duration and the
 * records are looked at between them. A process paused for its files goes on
 * once all are attached. docs/limits.md.
 */
#define LP_BATCH_FILES_MAX 64
/* Another bound for it (tests: a few files show the batches), 1 to LP_BATCH_FILES_MAX. */
#define LP_BATCH_FILES_ENV "LEANPROFILER_BATCH_FILES"

static size_t batch_files(void)
{
	const char *e = getenv(LP_BATCH_FILES_ENV);
	long n = e ? strtol(e, NULL, 10) : 0;

	return n >= 1 && n <= LP_BATCH_FILES_MAX ? (size_t)n : LP_BATCH_FILES_MAX;
}

struct attach_ctx {
	struct recorder *r;
	pid_t pid;       /* the process whose files these are */
	int attached;    /* probes attached for it (new files, or linked for it) */
	size_t budget;   /* new files this batch may still examine */
	size_t deferred; /* new files left to the next batch */
	bool stoppable;  /* while recording: a signal or --duration ends the scan */
};

/* Attaches to the markers of every executable file pid maps, within the batch's budget. */
static int attach_file(void *ctx, const struct lp_proc_file *f)
{
	struct attach_ctx *a = ctx;
	int err;

	if (lp_session_known(a->r->s, f->dev, f->ino, (uint32_t)a->pid))
		return 0;
	/* Recording ends (a signal, --duration): nothing more is attached. */
	if (a->stoppable && (a->r->end_reason || lp_end_requested(a->r)))
		return -EINTR;
	if (!a->budget) {
		a->deferred++; /* only counted: the next batch scans the process again */
		return 0;
	}
	a->budget--;
	/* Its errors are said; a file that is gone, or not ELF, has nothing to probe. */
	err = lp_session_attach(a->r->s, f->open_path, f->path, f->dev, f->ino, (uint32_t)a->pid);
	if (err < 0 && err != -ESRCH && err != -ENOEXEC)
		a->r->attach_failures++;
	a->attached += err > 0 ? err : 0;
	return 0;
}

/*
 * Attaches to what pid maps, at most *budget new files (less what it used);
 * the probes attached in files new to the recording, or -errno (-EINTR:
 * recording ends). *deferred: the new files left for the next batch.
 */
static int attach_some(struct recorder *r, pid_t pid, size_t *budget, size_t *deferred)
{
	struct attach_ctx a = { .r = r, .pid = pid, .budget = *budget,
				.stoppable = *budget != SIZE_MAX };
	int err = lp_proc_exec_files(pid, attach_file, &a);

	*budget = a.budget;
	*deferred = a.deferred;
	if (!err)
		lp_jvm_check_probes(r, pid);
	return err ? err : a.attached;
}

/* Attaches to what pid maps; the probes attached in files new to the recording, or -errno. */
int lp_attach_process(struct recorder *r, pid_t pid)
{
	size_t budget = SIZE_MAX, deferred;

	return attach_some(r, pid, &budget, &deferred);
}

/*
 * Holds process pid by a pidfd, if it is the process that began at start_ns
 * (its leader's start_boottime): 0 and *fd, or -ESRCH when that process is
 * gone (its PID may be another's now), or -errno. *st: its /proc state.
 * Without a pidfd to be had (-EMFILE), *fd is -1 and the PID is checked
 * only: kill() then has the race a pidfd closes.
 */
static int hold(pid_t pid, uint64_t start_ns, int *fd, struct lp_proc_state *st)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), err;

	if (pfd < 0 && errno == ESRCH)
		return -ESRCH;
	err = lp_proc_state(pid, st);
	if (err && err != -ESRCH && pfd >= 0) {
		/* Held, though not checked: better than a process left stopped. */
		*st = (struct lp_proc_state){ 0 };
		*fd = pfd;
		return 0;
	}
	if (!err && st->start_ticks != lp_proc_start_ticks(start_ns))
		err = -ESRCH; /* another process, given the PID since */
	/* Still there after /proc was read: the state read was the held process's. */
	if (!err && pfd >= 0 && syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0))
		err = -errno;
	if (err) {
		if (pfd >= 0)
			close(pfd);
		return err;
	}
	*fd = pfd;
	return 0;
}

/* SIGCONT to the held process (pidfd), or by PID when none could be held. */
static void cont(uint32_t pid, int *pidfd)
{
	if (*pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, *pidfd, SIGCONT, NULL, 0);
		close(*pidfd);
		*pidfd = -1;
	} else {
		kill((pid_t)pid, SIGCONT);
	}
}

/* Lets a paused process go on, and counts how long it waited. */
static void resume(struct recorder *r, struct rescan *q)
{
	uint64_t now = lp_now_ns(), waited = now - q->since_ns;

	/* Ours: from now on another's SIGCONT may continue it too (hold_on()). */
	lp_session_unhold(r->s, q->pid, q->start_ns);
	cont(q->pid, &q->pidfd);
	if (q->pause >= 0)
		r->pauses[q->pause].until_ns = now;
	if (waited > (uint64_t)1 << 62)
		waited = 0; /* a record's time ahead of ours: not measured */
	r->follow.pauses++;
	r->follow.pause_total_ns += waited;
	if (waited > r->follow.pause_max_ns)
		r->follow.pause_max_ns = waited;
}

/* Relays whose pause has ended go on too (only then: they would continue its process). */
static void release_relays(struct recorder *r, bool all)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nrelays; i++) {
		struct relay *y = &r->relays[i];

		if (all || r->pauses[y->pause].until_ns) {
			lp_info("PID %u stopped itself for a process we paused: continued", y->pid);
			cont(y->pid, &y->pidfd);
		} else {
			r->relays[n++] = *y;
		}
	}
	r->nrelays = n;
}

/* Remembers a pause with the paused process's ancestors (st: its state); its index. */
static int remember_pause(struct recorder *r, uint32_t pid, const struct lp_proc_state *st,
			  uint64_t ts_ns)
{
	int i = (int)(r->npauses++ % LP_RELAY_PAUSES);
	struct pause_seen *p = &r->pauses[i];
	pid_t up = st->ppid;

	*p = (struct pause_seen){ .pid = pid, .since_ns = ts_ns };
	for (int d = 0; d < LP_RELAY_DEPTH && up > 1; d++) {
		struct lp_proc_state a;

		p->up[d] = up;
		up = d + 1 < LP_RELAY_DEPTH && !lp_proc_state(up, &a) ? a.ppid : 0;
	}
	return i;
}

/*
 * The pipeline's rescan hook: pid may map new files (or is paused until they
 * are attached): look after this batch. A paused process is held from now
 * on, if it is still the one the kernel half paused. Once recording ends, a
 * paused process only goes on.
 */
int lp_queue_rescan(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns, uint64_t start_ns)
{
	struct recorder *r = ctx;
	struct rescan e = { .pid = pid, .paused = paused, .since_ns = ts_ns, .start_ns = start_ns,
			    .pidfd = -1, .pause = -1 }, *q;

	if (paused) {
		struct lp_proc_state st;
		int err = hold((pid_t)pid, start_ns, &e.pidfd, &st);

		if (err) {
			/* Gone, its PID maybe another's: nobody to continue, nothing to attach. */
			lp_session_unhold(r->s, pid, start_ns);
			lp_info("PID %u ended while paused for files it mapped: nothing to continue "
				"(%s)", pid, strerror(-err));
			return 0;
		}
		e.pause = remember_pause(r, pid, &st, ts_ns);
	}
	if (r->stopping) {
		if (paused)
			resume(r, &e);
		return 0;
	}
	for (size_t i = 0; i < r->nrescan; i++) {
		q = &r->rescan[i];
		if (q->pid != pid)
			continue;
		if (paused && q->paused && q->start_ns != start_ns) {
			/* The process paused before is gone, its PID another's: this one waits. */
			if (q->pidfd >= 0)
				close(q->pidfd);
			q->pidfd = -1;
			q->paused = false;
			if (q->pause >= 0)
				r->pauses[q->pause].until_ns = lp_now_ns();
		}
		if (paused && !q->paused) {
			q->since_ns = ts_ns;
			q->start_ns = start_ns;
			q->pidfd = e.pidfd;
			q->pause = e.pause;
			q->paused = true;
		} else if (paused) {
			/*
			 * Paused again before we got to it: held once already, one
			 * pause. Relays of the first are let go (should one continue
			 * it, it stops again: hold_on()).
			 */
			if (e.pidfd >= 0)
				close(e.pidfd);
			if (q->pause >= 0)
				r->pauses[q->pause].until_ns = lp_now_ns();
			q->pause = e.pause;
		}
		return 0;
	}
	q = lp_grow(r->rescan, &r->rescan_cap, r->nrescan + 1, sizeof(*q));
	if (!q) {
		/* Never leave a process stopped because we are short of memory. */
		if (paused)
			resume(r, &e);
		return -ENOMEM;
	}
	r->rescan = q;
	r->rescan[r->nrescan++] = e;
	return 0;
}

/* A pause (remembered) that the self-stop of pid at ts_ns answers: its index, or -1. */
static int relay_of(const struct recorder *r, uint32_t pid, uint64_t ts_ns)
{
	uint64_t n = r->npauses < LP_RELAY_PAUSES ? r->npauses : LP_RELAY_PAUSES;

	for (uint64_t k = 0; k < n; k++) {
		int i = (int)((r->npauses - 1 - k) % LP_RELAY_PAUSES);
		const struct pause_seen *p = &r->pauses[i];
		bool in_time = ts_ns >= p->since_ns &&
			       (!p->until_ns || ts_ns <= p->until_ns + LP_RELAY_GRACE_NS);

		for (int d = 0; in_time && d < LP_RELAY_DEPTH && p->up[d]; d++)
			if ((uint32_t)p->up[d] == pid)
				return i;
	}
	return -1;
}

/*
 * The pipeline's self-stop hook: pid stopped itself. If it is an ancestor
 * of a process we paused, and stopped during that pause or just after, it
 * relays our stop (sudo, su, runuser: it saw its child stop, waiting with
 * WUNTRACED) and nobody but us will continue it. It goes on once that pause
 * has ended: it continues its child when it goes on.
 */
int lp_self_stopped(void *ctx, uint32_t pid, int sig, uint64_t ts_ns, uint64_t start_ns)
{
	struct recorder *r = ctx;
	struct lp_proc_state st;
	struct relay y = { .pid = pid, .pidfd = -1 }, *q;

	(void)sig;
	y.pause = relay_of(r, pid, ts_ns);
	if (y.pause < 0 || hold((pid_t)pid, start_ns, &y.pidfd, &st))
		return 0; /* its own stop, or it is gone */
	q = lp_grow(r->relays, &r->relays_cap, r->nrelays + 1, sizeof(*q));
	if (!q) {
		cont(pid, &y.pidfd); /* never left stopped for want of memory */
		return -ENOMEM;
	}
	r->relays = q;
	r->relays[r->nrelays++] = y;
	if (r->pauses[y.pause].until_ns || r->stopping)
		release_relays(r, r->stopping);
	return 0;
}

static void gate_opened(void *ctx, uint32_t file, uint64_t since_ns)
{
	struct recorder *r = ctx;

	lp_pipeline_gate(r->pl, file, since_ns);
}

/* Files attached since the last call are recorded from a moment just ahead on. */
int lp_open_gates(struct recorder *r, uint64_t *since)
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

/* The gates are open: said once a late spec's probes are being recorded. */
static void tell_late_specs(struct recorder *r, const bool *was)
{
	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		if (!was[i] && spec_complete(r, i) && r->o->specs[i].late)
			lp_note("recording spec '%s'%s%s from now on (its probes appeared in a "
				"library mapped at run time)",
				r->o->specs[i].text, r->o->specs[i].preset ? " of preset " : "",
				r->o->specs[i].preset ? r->o->specs[i].preset : "");
}

void lp_rescan_queued(struct recorder *r)
{
	size_t batch = batch_files(), budget = batch, kept = 0;
	bool was[LP_SPEC_MAX];
	int err;

	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		was[i] = spec_complete(r, i);
	for (size_t i = 0; i < r->nrescan; i++) {
		struct rescan *q = &r->rescan[i];
		size_t deferred = 0;
		/* A process that is gone has nothing left to probe. */
		int n = r->end_reason ? -EINTR : attach_some(r, (pid_t)q->pid, &budget, &deferred);

		if (n > 0 && !q->paused)
			r->follow.late_files++;
		q->probes += n > 0 ? n : 0;
		/* Not done: it stays queued (and paused) for the next batch. */
		q->done = n != -EINTR && !deferred;
		if (deferred)
			lp_info("PID %u maps %zu more new files than a batch examines (%zu, "
				"LP_BATCH_FILES_MAX): left to the next batch",
				q->pid, deferred, batch);
		/* Counted when first left: those are the files later batches attach. */
		if (deferred && !q->deferred)
			r->follow.deferred_files += deferred;
		q->deferred = q->deferred || deferred;
		if (q->done && q->paused)
			lp_info("PID %u paused for files it mapped: %d new probes", q->pid, q->probes);
	}
	/* Recorded from a moment just ahead, which has passed when this returns. */
	err = lp_open_gates(r, NULL);
	if (err && !r->err)
		r->err = err;
	/* Only now may the paused processes whose files are all attached run the code they mapped; then their relays. */
	for (size_t i = 0; i < r->nrescan; i++) {
		if (!r->rescan[i].done)
			r->rescan[kept++] = r->rescan[i];
		else if (r->rescan[i].paused)
			resume(r, &r->rescan[i]);
	}
	r->nrescan = kept;
	release_relays(r, false);
	tell_late_specs(r, was);
}

/* Recording ends: processes paused for new files go on without them. */
void lp_release_paused(struct recorder *r)
{
	r->stopping = true;
	for (size_t i = 0; i < r->nrescan; i++)
		if (r->rescan[i].paused)
			resume(r, &r->rescan[i]);
	r->nrescan = 0;
	release_relays(r, true);
}

/*
 * Every span-pair spec needs an entry and an exit probe attached somewhere:
 * says which one is missing (-ENOENT), else 0. A late spec (late=yes) may
 * find its probes later, in a library mapped at run time: not yet is fine
 * (lp_warn_late_specs() tells at the end). Then, with neither markers nor
 * specs, there is nothing to record: the caller says so.
 */
int lp_check_specs(struct recorder *r, const char *where)
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
void lp_warn_late_specs(struct recorder *r)
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
bool lp_late_pending(struct recorder *r)
{
	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		if (r->o->specs[i].late && !spec_complete(r, i))
			return true;
	return false;
}
