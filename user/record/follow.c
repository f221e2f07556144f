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
#include <string.h>

#include "jvm.h"
#include "proc.h"
#include "recorder.h"

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
	int err = lp_session_attach(a->r->s, f->open_path, f->path, f->dev, f->ino);

	if (err < 0 && err != -ESRCH && err != -ENOEXEC)
		a->r->attach_failures++;
	a->attached += (int)(lp_session_probes(a->r->s) - before);
	return 0;
}

/* Attaches to what pid maps; the probes attached in files new to the recording, or -errno. */
int lp_attach_process(struct recorder *r, pid_t pid)
{
	struct attach_ctx a = { .r = r };
	int err = lp_proc_exec_files(pid, attach_file, &a);

	lp_jvm_check_probes(r, pid);
	return err ? err : a.attached;
}

/* Lets a paused process go on, and counts how long it waited. */
static void resume(struct recorder *r, const struct rescan *q)
{
	uint64_t waited = lp_now_ns() - q->since_ns;

	kill((pid_t)q->pid, SIGCONT);
	if (waited > (uint64_t)1 << 62)
		waited = 0; /* a record's time ahead of ours: not measured */
	r->follow.pauses++;
	r->follow.pause_total_ns += waited;
	if (waited > r->follow.pause_max_ns)
		r->follow.pause_max_ns = waited;
}

/*
 * The pipeline's rescan hook: pid may map new files (or is paused until they
 * are attached): look after this batch. Once recording ends, a paused
 * process only goes on.
 */
int lp_queue_rescan(void *ctx, uint32_t pid, bool paused, uint64_t ts_ns)
{
	struct recorder *r = ctx;
	struct rescan *q;

	if (r->stopping) {
		if (paused)
			resume(r, &(struct rescan){ pid, paused, ts_ns });
		return 0;
	}
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
	bool was[LP_SPEC_MAX];
	int err;

	for (size_t i = 0; i < r->o->nspecs && i < LP_SPEC_MAX; i++)
		was[i] = spec_complete(r, i);
	for (size_t i = 0; i < r->nrescan; i++) {
		/* A process that is gone has nothing left to probe. */
		int n = lp_attach_process(r, (pid_t)r->rescan[i].pid);

		if (n > 0 && !r->rescan[i].paused)
			r->follow.late_files++;
		if (r->rescan[i].paused)
			lp_info("PID %u paused for files it mapped: %d new probes", r->rescan[i].pid,
				n > 0 ? n : 0);
	}
	/* Recorded from a moment just ahead, which has passed when this returns. */
	err = lp_open_gates(r, NULL);
	if (err && !r->err)
		r->err = err;
	/* Only now may the paused processes run the code they mapped. */
	for (size_t i = 0; i < r->nrescan; i++)
		if (r->rescan[i].paused)
			resume(r, &r->rescan[i]);
	r->nrescan = 0;
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
